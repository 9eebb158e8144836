// src/linalg/cusolver_solve.cpp - cuBLAS and cuSOLVER behind cuda_getrf, cuda_getrs, cuda_trsm_right and
// cuda_potrf (see cusolver_solve.hpp): handles per (thread, device, stream) (Note [library handles] in
// src/cuda/libraries.cpp), the batched calls' pointer arrays made on the device (an int64 arange of
// addresses), cuSOLVER's workspaces from the caching allocator (both in cusolver_common.hpp, which
// cusolver_decomp.cpp shares).
#include "linalg/cusolver_solve.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "core/pointwise.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#include "linalg/cusolver_common.hpp"
#endif

namespace phasor::detail {

Tensor int32_buffer(std::int64_t n, Device device) { return zeros({(std::max<std::int64_t>(n, 1) + 1) / 2}, Dtype::Int64, device); }

int* int32_data(const Tensor& buffer) { return static_cast<int*>(buffer.data_ptr()); }

Tensor widen_int32(const Tensor& buffer, const Shape& shape) {
  const std::int64_t n = shape_numel(shape);
  Tensor out = empty(shape, Dtype::Int64, buffer.device());
  if (!buffer.device().is_cuda()) {
    const int* src = int32_data(buffer);
    std::copy(src, src + n, static_cast<std::int64_t*>(out.data_ptr()));
    return out;
  }
#if PHASOR_WITH_CUDA
  ::phasor::cuda::detail::DeviceGuard guard(buffer.device().index);
  ::phasor::cuda::widen_int32(int32_data(buffer), static_cast<std::int64_t*>(out.data_ptr()), n,
                              ::phasor::cuda::detail::current_stream_handle(buffer.device().index));
#endif
  return out;
}

Tensor narrow_int32(const Tensor& values) {
  const Tensor src = values.contiguous();
  const std::int64_t n = src.numel();
  Tensor out = int32_buffer(n, src.device());
  const auto* from = static_cast<const std::int64_t*>(src.data_ptr());
  if (!src.device().is_cuda()) {
    std::copy(from, from + n, int32_data(out));
    return out;
  }
#if PHASOR_WITH_CUDA
  ::phasor::cuda::detail::DeviceGuard guard(src.device().index);
  ::phasor::cuda::narrow_int64(from, int32_data(out), n, ::phasor::cuda::detail::current_stream_handle(src.device().index));
#endif
  return out;
}

namespace {
Tensor pivots_to_perm_kernel(const Tensor& pivots, std::int64_t m) {
  Shape shape(pivots.shape().begin(), pivots.shape().end() - 1);
  const std::int64_t k = pivots.size(-1), count = shape_numel(shape);
  shape.push_back(m);
  const Tensor p = pivots.contiguous();
  Tensor perm = empty(shape, Dtype::Int64, p.device());
  const auto* piv = static_cast<const std::int64_t*>(p.data_ptr());
  auto* q = static_cast<std::int64_t*>(perm.data_ptr());
  if (!p.device().is_cuda()) {
    for (std::int64_t b = 0; b < count; ++b, q += m, piv += k) {
      for (std::int64_t i = 0; i < m; ++i) q[i] = i;
      for (std::int64_t i = 0; i < k; ++i) std::swap(q[i], q[piv[i] - 1]);
    }
    return perm;
  }
#if PHASOR_WITH_CUDA
  ::phasor::cuda::detail::DeviceGuard guard(p.device().index);
  ::phasor::cuda::pivots_to_perm(piv, q, count, k, m, ::phasor::cuda::detail::current_stream_handle(p.device().index));
#endif
  return perm;
}
}  // namespace

Tensor pivots_to_perm(const Tensor& pivots, std::int64_t m) {
  // an op of its own, so that a static graph recomputes the permutation from its pivots (Note [replayable forwards])
  return apply_nondiff("pivots_to_perm", {pivots}, [m](TensorList in) { return pivots_to_perm_kernel(in[0], m); });
}

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::cuda::detail::check_cublas;
using ::phasor::cuda::detail::check_cusolver;
using ::phasor::cuda::detail::CublasApi;
using ::phasor::cuda::detail::CusolverApi;
using solver::matrix_pointers;
using solver::pointers;
using solver::solver_call;
using solver::workspace;

/// One element type's entry points (S, D, C, Z in the libraries' names) and their names, by its element type.
template <class T>
struct Solver;
#define PHASOR_SOLVER_ENTRY(X, Scalar)                                                          \
  template <>                                                                                   \
  struct Solver<Scalar> {                                                                       \
    using S = Scalar;                                                                           \
    static constexpr auto getrf_batched = &CublasApi::cublas##X##getrfBatched;                  \
    static constexpr auto getrs_batched = &CublasApi::cublas##X##getrsBatched;                  \
    static constexpr auto trsm_batched = &CublasApi::cublas##X##trsmBatched;                    \
    static constexpr auto getrf_size = &CusolverApi::cusolverDn##X##getrf_bufferSize;           \
    static constexpr auto getrf = &CusolverApi::cusolverDn##X##getrf;                           \
    static constexpr auto potrf_size = &CusolverApi::cusolverDn##X##potrf_bufferSize;           \
    static constexpr auto potrf = &CusolverApi::cusolverDn##X##potrf;                           \
    static constexpr auto potrf_batched = &CusolverApi::cusolverDn##X##potrfBatched;            \
    static constexpr const char* getrf_batched_name = "cublas" #X "getrfBatched";               \
    static constexpr const char* getrs_batched_name = "cublas" #X "getrsBatched";               \
    static constexpr const char* trsm_batched_name = "cublas" #X "trsmBatched";                 \
    static constexpr const char* getrf_size_name = "cusolverDn" #X "getrf_bufferSize";          \
    static constexpr const char* getrf_name = "cusolverDn" #X "getrf";                          \
    static constexpr const char* potrf_size_name = "cusolverDn" #X "potrf_bufferSize";          \
    static constexpr const char* potrf_name = "cusolverDn" #X "potrf";                          \
    static constexpr const char* potrf_batched_name = "cusolverDn" #X "potrfBatched";           \
  };
PHASOR_SOLVER_ENTRY(S, float)
PHASOR_SOLVER_ENTRY(D, double)
PHASOR_SOLVER_ENTRY(C, cuComplex)
PHASOR_SOLVER_ENTRY(Z, cuDoubleComplex)
#undef PHASOR_SOLVER_ENTRY

/// Largest order factored by the batched calls when a batch has several matrices: they are written for small
/// matrices (launch overhead dominates there); larger ones go one at a time through cuSOLVER's blocked
/// routines. Chosen from the libraries' documentation, not measured here (no GPU).
constexpr std::int64_t kBatchedOrder = 64;

}  // namespace

void cuda_getrf(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t n, std::int64_t batch, void* a,
                int* pivots, int* info) {
  solver_call<Solver>(op, dtype, device, {m, n, batch}, {m, n, batch, m * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const int M = static_cast<int>(m), N = static_cast<int>(n);
    const std::int64_t k = std::min(m, n);
    if (batch > 1 && m == n && n <= kBatchedOrder) {
      const CublasApi& api = ::phasor::cuda::detail::cublas(op);
      const Tensor ptrs = matrix_pointers<S>(a, n * n, batch, device);
      check_cublas(api,
                   (api.*E::getrf_batched)(::phasor::cuda::detail::cublas_handle(device, op), N, pointers<S>(ptrs), N,
                                           pivots, info, static_cast<int>(batch)),
                   op, E::getrf_batched_name);
      return;
    }
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    S* base = static_cast<S*>(a);
    int lwork = 0;
    check_cusolver((api.*E::getrf_size)(h, M, N, base, M, &lwork), op, E::getrf_size_name);
    const Tensor work = workspace(lwork, dtype, device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver((api.*E::getrf)(h, M, N, base + i * m * n, M, static_cast<S*>(work.data_ptr()), pivots + i * k, info + i),
                     op, E::getrf_name);
  });
}

void cuda_getrs(const char* op, Dtype dtype, int device, bool trans, std::int64_t n, std::int64_t k, std::int64_t batch,
                const void* lu, const int* pivots, void* b) {
  solver_call<Solver>(op, dtype, device, {n, k, batch}, {n, k, batch, n * n, n * k}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const CublasApi& api = ::phasor::cuda::detail::cublas(op);
    const Tensor as = matrix_pointers<S>(lu, n * n, batch, device), bs = matrix_pointers<S>(b, n * k, batch, device);
    int info = 0;
    check_cublas(api,
                 (api.*E::getrs_batched)(::phasor::cuda::detail::cublas_handle(device, op), trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         static_cast<int>(n), static_cast<int>(k), pointers<const S>(as),
                                         static_cast<int>(n), pivots, pointers<S>(bs), static_cast<int>(n), &info,
                                         static_cast<int>(batch)),
                 op, E::getrs_batched_name);
    if (info != 0) throw Error(op, std::string(E::getrs_batched_name) + " rejected argument " + std::to_string(-info));
  });
}

void cuda_trsm_right(const char* op, Dtype dtype, int device, bool lower, bool unit, std::int64_t m, std::int64_t n,
                     std::int64_t batch, const void* a, void* b) {
  solver_call<Solver>(op, dtype, device, {m, n, batch}, {m, n, batch, n * n, m * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const CublasApi& api = ::phasor::cuda::detail::cublas(op);
    const Tensor as = matrix_pointers<S>(a, n * n, batch, device), bs = matrix_pointers<S>(b, m * n, batch, device);
    S one{};
    if constexpr (std::is_arithmetic_v<S>) one = S(1);
    else one.x = 1;
    check_cublas(api,
                 (api.*E::trsm_batched)(::phasor::cuda::detail::cublas_handle(device, op), CUBLAS_SIDE_RIGHT,
                                        lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                        unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, static_cast<int>(m),
                                        static_cast<int>(n), &one, pointers<const S>(as), static_cast<int>(n),
                                        pointers<S>(bs), static_cast<int>(m), static_cast<int>(batch)),
                 op, E::trsm_batched_name);
  });
}

void cuda_potrf(const char* op, Dtype dtype, int device, bool upper, std::int64_t n, std::int64_t batch, void* a,
                int* info) {
  solver_call<Solver>(op, dtype, device, {n, batch}, {n, batch, n * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const int N = static_cast<int>(n);
    if (batch > 1 && n <= kBatchedOrder) {
      const Tensor ptrs = matrix_pointers<S>(a, n * n, batch, device);
      check_cusolver((api.*E::potrf_batched)(h, uplo, N, static_cast<S**>(ptrs.data_ptr()), N, info, static_cast<int>(batch)),
                     op, E::potrf_batched_name);
      return;
    }
    S* base = static_cast<S*>(a);
    int lwork = 0;
    check_cusolver((api.*E::potrf_size)(h, uplo, N, base, N, &lwork), op, E::potrf_size_name);
    const Tensor work = workspace(lwork, dtype, device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver((api.*E::potrf)(h, uplo, N, base + i * n * n, N, static_cast<S*>(work.data_ptr()), lwork, info + i),
                     op, E::potrf_name);
  });
}

#else  // CPU-only build

void cuda_getrf(const char* op, Dtype, int, std::int64_t, std::int64_t, std::int64_t, void*, int*, int*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}
void cuda_getrs(const char* op, Dtype, int, bool, std::int64_t, std::int64_t, std::int64_t, const void*, const int*, void*) {
  throw Error(op, "no cuBLAS in this build (CPU-only build)");
}
void cuda_trsm_right(const char* op, Dtype, int, bool, bool, std::int64_t, std::int64_t, std::int64_t, const void*, void*) {
  throw Error(op, "no cuBLAS in this build (CPU-only build)");
}
void cuda_potrf(const char* op, Dtype, int, bool, std::int64_t, std::int64_t, void*, int*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}

#endif

}  // namespace phasor::detail
