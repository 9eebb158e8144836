// src/linalg/cublas_gemm.cpp - cuBLAS behind cuda_gemm: one handle per (thread, device, stream) (Note
// [library handles] in src/cuda/libraries.cpp); default math mode unless cuda::set_allow_tf32(true) (then
// TF32 tensor-op math). Row-major products map onto cuBLAS's column-major ones by swapping the
// operands: C^T = op(B)^T op(A)^T.
#include "linalg/cublas_gemm.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>
#include <utility>

#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#endif

namespace phasor::detail {

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::cuda::detail::CublasApi;

/// cuBLAS's scalar type, entry points and their names for one element type X (S, D, C, Z in cuBLAS's names).
#define PHASOR_CUBLAS_ENTRY(X, Scalar)                                                 \
  struct X##Entry {                                                                    \
    using S = Scalar;                                                                  \
    static constexpr auto gemm = &CublasApi::cublas##X##gemm;                          \
    static constexpr auto batched = &CublasApi::cublas##X##gemmStridedBatched;         \
    static constexpr const char* gemm_name = "cublas" #X "gemm";                       \
    static constexpr const char* batched_name = "cublas" #X "gemmStridedBatched";      \
  };
PHASOR_CUBLAS_ENTRY(S, float)
PHASOR_CUBLAS_ENTRY(D, double)
PHASOR_CUBLAS_ENTRY(C, cuComplex)
PHASOR_CUBLAS_ENTRY(Z, cuDoubleComplex)
#undef PHASOR_CUBLAS_ENTRY

/// 1 in cuBLAS's scalar type S (float, double, cuComplex, cuDoubleComplex).
template <class S>
S unit() {
  if constexpr (std::is_arithmetic_v<S>) return S(1);
  else return S{1, 0};
}

/// Calls f(Entry) for `dtype`'s cuBLAS entry; other dtypes throw.
template <class F>
void with_entry(Dtype dtype, const char* op, F&& f) {
  switch (dtype) {
    case Dtype::Float32: return f(SEntry{});
    case Dtype::Float64: return f(DEntry{});
    case Dtype::Complex64: return f(CEntry{});
    case Dtype::Complex128: return f(ZEntry{});
    default: throw Error(op, std::string("no CUDA matrix product for ") + dtype_name(dtype) + " tensors");
  }
}

/// Throws when a dim, a leading dimension or the batch count (0: a plain product) exceeds cuBLAS's int range.
void check_range(const char* op, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb,
                 std::int64_t ldc, std::int64_t batch) {
  if (std::max({m, n, k, lda, ldb, ldc, batch}) <= INT_MAX) return;
  throw Error(op, "matrix dims " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
                      (batch ? " or batch " + std::to_string(batch) : std::string()) + " exceed the cuBLAS index range");
}

/// What both products share: the device, the handle and the column-major operands.
/// C^T (N x M) = op(B)^T (N x K) op(A)^T (K x M), so B comes first.
struct Product {
  ::phasor::cuda::detail::DeviceGuard guard;
  const CublasApi& api;
  cublasHandle_t h;
  cublasOperation_t opa, opb;
  int M, N, K, LA, LB, LC;

  Product(const char* op, int device, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
          std::int64_t ldb, std::int64_t ldc)
      : guard(device),
        api(::phasor::cuda::detail::cublas(op)),
        h(::phasor::cuda::detail::cublas_handle(device, op)),
        opa(ta ? CUBLAS_OP_T : CUBLAS_OP_N),
        opb(tb ? CUBLAS_OP_T : CUBLAS_OP_N),
        M(static_cast<int>(m)),
        N(static_cast<int>(n)),
        K(static_cast<int>(k)),
        LA(static_cast<int>(lda)),
        LB(static_cast<int>(ldb)),
        LC(static_cast<int>(ldc)) {}
};

}  // namespace

void cuda_gemm(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
               const void* A, std::int64_t lda, const void* B, std::int64_t ldb, void* C, std::int64_t ldc) {
  check_range(op, m, n, k, lda, ldb, ldc, 0);
  with_entry(dtype, op, [&](auto e) {
    using S = typename decltype(e)::S;
    const S one = unit<S>(), zero{};
    Product p(op, device, ta, tb, m, n, k, lda, ldb, ldc);
    ::phasor::cuda::detail::check_cublas(p.api,
          (p.api.*decltype(e)::gemm)(p.h, p.opb, p.opa, p.N, p.M, p.K, &one, static_cast<const S*>(B), p.LB,
                                     static_cast<const S*>(A), p.LA, &zero, static_cast<S*>(C), p.LC),
          op, decltype(e)::gemm_name);
  });
}

void cuda_gemm_batched(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n,
                       std::int64_t k, const void* A, std::int64_t lda, std::int64_t stride_a, const void* B,
                       std::int64_t ldb, std::int64_t stride_b, void* C, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch) {
  if (batch <= 0) return;
  check_range(op, m, n, k, lda, ldb, ldc, batch);
  with_entry(dtype, op, [&](auto e) {
    using S = typename decltype(e)::S;
    const S one = unit<S>(), zero{};
    Product p(op, device, ta, tb, m, n, k, lda, ldb, ldc);
    ::phasor::cuda::detail::check_cublas(p.api,
          (p.api.*decltype(e)::batched)(p.h, p.opb, p.opa, p.N, p.M, p.K, &one, static_cast<const S*>(B), p.LB, stride_b,
                                        static_cast<const S*>(A), p.LA, stride_a, &zero, static_cast<S*>(C), p.LC,
                                        stride_c, static_cast<int>(batch)),
          op, decltype(e)::batched_name);
  });
}

void cuda_int_gemm(const char* op, Dtype dtype, int device, const ::phasor::cuda::IntGemm& g) {
  if (g.batch <= 0 || g.rows <= 0 || g.cols <= 0) return;
  ::phasor::cuda::detail::DeviceGuard guard(device);
  if (!::phasor::cuda::int_gemm(dtype, g, ::phasor::cuda::detail::current_stream_handle(device)))
    throw Error(op, std::string("no CUDA matrix product for ") + dtype_name(dtype) + " tensors");
}

#else  // CPU-only build

void cuda_gemm(const char* op, Dtype, int, bool, bool, std::int64_t, std::int64_t, std::int64_t, const void*,
               std::int64_t, const void*, std::int64_t, void*, std::int64_t) {
  throw Error(op, "no cuBLAS in this build (CPU-only build)");
}

void cuda_gemm_batched(const char* op, Dtype, int, bool, bool, std::int64_t, std::int64_t, std::int64_t, const void*,
                       std::int64_t, std::int64_t, const void*, std::int64_t, std::int64_t, void*, std::int64_t,
                       std::int64_t, std::int64_t) {
  throw Error(op, "no cuBLAS in this build (CPU-only build)");
}

void cuda_int_gemm(const char* op, Dtype, int, const ::phasor::cuda::IntGemm&) {
  throw Error(op, "no CUDA kernels in this build (CPU-only build)");
}

#endif

}  // namespace phasor::detail
