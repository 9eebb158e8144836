// src/linalg/blas.hpp - the one typed wrapper over cblas_?gemm that every matrix product in phasor
// (matmul, convolutions, spectral mixing, truncated DFTs) goes through.
#pragma once
#include <cblas.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "phasor/device.hpp"

namespace phasor::detail {

/// Batched products below this many multiply-adds each run one per OpenMP thread (BLAS single-threaded).
inline constexpr std::int64_t kSmallGemm = 96 * 96 * 96;
/// ... when the whole batch has at least this many multiply-adds (Note [batched gemm threading]).
inline constexpr std::int64_t kBatchParallelWork = std::int64_t(1) << 20;

/// OpenMP threads for a loop over `batch` independent gemm calls of `work` multiply-adds each (Note
/// [batched gemm threading], src/linalg/matmul.cpp): one per call up to get_num_threads() for a batch of
/// small products with enough work in all; otherwise 1, each call then threaded by OpenBLAS itself.
inline int batched_gemm_threads(std::int64_t work, std::int64_t batch) {
  return work < kSmallGemm && batch * work >= kBatchParallelWork
             ? static_cast<int>(std::min<std::int64_t>(get_num_threads(), batch))
             : 1;
}

/// Runs f(i) for i in [0, n): over `threads` OpenMP threads when threads > 1 (BLAS single-threaded inside),
/// else in a plain loop on the calling thread, BLAS threading each call. Never one `omp parallel ... if`
/// region for both: an inactive region still nests OpenBLAS's own (Note [batched gemm threading]).
template <class F>
void gemm_loop(int threads, std::int64_t n, F&& f) {
  if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }
}

/// Row-major C (m x n) = alpha op(A) op(B) + beta C, op transposing when ta / tb, for float, double,
/// complex<float> and complex<double>. Inside an OpenMP parallel region the OpenMP build of
/// OpenBLAS runs single-threaded, so callers may split work over threads around it.
template <class T>
inline void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A,
                 std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const auto LA = static_cast<blasint>(lda), LB = static_cast<blasint>(ldb), LC = static_cast<blasint>(ldc);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, LA, B, LB, beta, C, LC);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasRowMajor, TA, TB, M, N, K, alpha, A, LA, B, LB, beta, C, LC);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasRowMajor, TA, TB, M, N, K, &alpha, A, LA, B, LB, &beta, C, LC);
  else {
    static_assert(std::is_same_v<T, std::complex<double>>, "gemm: float, double, complex<float> or complex<double>");
    cblas_zgemm(CblasRowMajor, TA, TB, M, N, K, &alpha, A, LA, B, LB, &beta, C, LC);
  }
}

}  // namespace phasor::detail
