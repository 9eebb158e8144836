// src/linalg/blas.hpp - the one typed wrapper over cblas_?gemm that every matrix product in phasor
// (matmul, convolutions, spectral mixing, truncated DFTs) goes through.
#pragma once
#include <cblas.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace phasor::detail {

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
