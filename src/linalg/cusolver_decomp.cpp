// src/linalg/cusolver_decomp.cpp - cuSOLVER behind cuda_geqrf, cuda_orgqr, cuda_syevd and cuda_gesvd (see
// cusolver_decomp.hpp): QR (geqrf, orgqr / ungqr), Hermitian eigendecomposition (syevd / heevd; the Jacobi
// syevjBatched / heevjBatched for batches of small matrices) and SVD (the Jacobi gesvdj; gesvdjBatched for batches of
// small matrices), on the device's current stream through the handles and workspaces cusolver_solve.cpp uses
// (cusolver_common.hpp).
//
// Note [cuSOLVER decompositions]
// - geqrf, orgqr, syevd and gesvdj take one matrix: the batch is a loop of calls on the stream with one workspace.
// - Batches of small matrices (order <= kJacobiBatched) take one batched Jacobi call instead (a loop would be
//   launch-bound): syevjBatched sorts eigenvalues ascending and gesvdjBatched singular values descending (their
//   defaults), as the contract asks. gesvdjBatched has no economy mode: reduced U and V are the first k columns of
//   full temporaries, copied out on the device.
// - gesvdj returns V itself (not V^H, unlike gesvd) and takes any m, n. Without vectors U and V still get scratch
//   (the documentation does not say they are unreferenced then), with ldu = m and ldv = n as required.
// - geqrf's and orgqr's info reports only invalid arguments: it goes to a scratch word nobody reads.
#include "linalg/cusolver_decomp.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "phasor/creation.hpp"
#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#include "linalg/cusolver_common.hpp"
#endif

namespace phasor::detail {

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::cuda::detail::check_cusolver;
using ::phasor::cuda::detail::CusolverApi;
using solver::solver_call;
using solver::workspace;

/// One element type's entry points (S, D, C, Z in cuSOLVER's names; orgqr / syevd / syevj are ungqr / heevd / heevj
/// for complex ones) and their names, by its element type; R is the real type of eigenvalues and singular values.
template <class T>
struct Decomp;
#define PHASOR_DECOMP_ENTRY(X, Scalar, Real, ORGQR, SYEVD, SYEVJ)                                       \
  template <>                                                                                           \
  struct Decomp<Scalar> {                                                                               \
    using S = Scalar;                                                                                   \
    using R = Real;                                                                                     \
    static constexpr auto geqrf_size = &CusolverApi::cusolverDn##X##geqrf_bufferSize;                   \
    static constexpr auto geqrf = &CusolverApi::cusolverDn##X##geqrf;                                   \
    static constexpr auto orgqr_size = &CusolverApi::cusolverDn##X##ORGQR##_bufferSize;                 \
    static constexpr auto orgqr = &CusolverApi::cusolverDn##X##ORGQR;                                   \
    static constexpr auto syevd_size = &CusolverApi::cusolverDn##X##SYEVD##_bufferSize;                 \
    static constexpr auto syevd = &CusolverApi::cusolverDn##X##SYEVD;                                   \
    static constexpr auto syevj_batched_size = &CusolverApi::cusolverDn##X##SYEVJ##Batched_bufferSize;  \
    static constexpr auto syevj_batched = &CusolverApi::cusolverDn##X##SYEVJ##Batched;                  \
    static constexpr auto gesvdj_size = &CusolverApi::cusolverDn##X##gesvdj_bufferSize;                 \
    static constexpr auto gesvdj = &CusolverApi::cusolverDn##X##gesvdj;                                 \
    static constexpr auto gesvdj_batched_size = &CusolverApi::cusolverDn##X##gesvdjBatched_bufferSize;  \
    static constexpr auto gesvdj_batched = &CusolverApi::cusolverDn##X##gesvdjBatched;                  \
    static constexpr const char* geqrf_size_name = "cusolverDn" #X "geqrf_bufferSize";                  \
    static constexpr const char* geqrf_name = "cusolverDn" #X "geqrf";                                  \
    static constexpr const char* orgqr_size_name = "cusolverDn" #X #ORGQR "_bufferSize";                \
    static constexpr const char* orgqr_name = "cusolverDn" #X #ORGQR;                                   \
    static constexpr const char* syevd_size_name = "cusolverDn" #X #SYEVD "_bufferSize";                \
    static constexpr const char* syevd_name = "cusolverDn" #X #SYEVD;                                   \
    static constexpr const char* syevj_batched_size_name = "cusolverDn" #X #SYEVJ "Batched_bufferSize"; \
    static constexpr const char* syevj_batched_name = "cusolverDn" #X #SYEVJ "Batched";                 \
    static constexpr const char* gesvdj_size_name = "cusolverDn" #X "gesvdj_bufferSize";                \
    static constexpr const char* gesvdj_name = "cusolverDn" #X "gesvdj";                                \
    static constexpr const char* gesvdj_batched_size_name = "cusolverDn" #X "gesvdjBatched_bufferSize"; \
    static constexpr const char* gesvdj_batched_name = "cusolverDn" #X "gesvdjBatched";                 \
  };
PHASOR_DECOMP_ENTRY(S, float, float, orgqr, syevd, syevj)
PHASOR_DECOMP_ENTRY(D, double, double, orgqr, syevd, syevj)
PHASOR_DECOMP_ENTRY(C, cuComplex, float, ungqr, heevd, heevj)
PHASOR_DECOMP_ENTRY(Z, cuDoubleComplex, double, ungqr, heevd, heevj)
#undef PHASOR_DECOMP_ENTRY

/// Largest order (m and n for the SVD) the batched Jacobi routines take when a batch has several matrices: their
/// documented limit.
constexpr std::int64_t kJacobiBatched = 32;

/// A scratch int32 on `device` for the info of calls that report only invalid arguments (never read).
Tensor scratch_info(int device) { return empty({1}, Dtype::Int64, Device::cuda(device)); }

/// A Jacobi routine's parameters (syevjInfo_t or gesvdjInfo_t) with the library's defaults (tolerance: machine
/// precision, 100 sweeps, sorted results), destroyed at scope end: they are read when a call is made.
template <class Info>
class JacobiParams {
 public:
  JacobiParams(const CusolverApi& api, const char* op) : api_(api) {
    if constexpr (std::is_same_v<Info, syevjInfo_t>)
      check_cusolver(api.cusolverDnCreateSyevjInfo(&p_), op, "cusolverDnCreateSyevjInfo");
    else
      check_cusolver(api.cusolverDnCreateGesvdjInfo(&p_), op, "cusolverDnCreateGesvdjInfo");
  }
  ~JacobiParams() {
    if constexpr (std::is_same_v<Info, syevjInfo_t>)
      api_.cusolverDnDestroySyevjInfo(p_);
    else
      api_.cusolverDnDestroyGesvdjInfo(p_);
  }
  JacobiParams(const JacobiParams&) = delete;
  JacobiParams& operator=(const JacobiParams&) = delete;
  Info get() const { return p_; }

 private:
  const CusolverApi& api_;
  Info p_ = nullptr;
};

/// A tensor's data as T*.
template <class T>
T* data(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

}  // namespace

void cuda_geqrf(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t n, std::int64_t batch, void* a,
                void* tau) {
  solver_call<Decomp>(op, dtype, device, {m, n, batch}, {m, n, batch, m * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    const int M = static_cast<int>(m), N = static_cast<int>(n);
    const std::int64_t k = std::min(m, n);
    S* base = static_cast<S*>(a);
    S* t = static_cast<S*>(tau);
    int lwork = 0;
    check_cusolver((api.*E::geqrf_size)(h, M, N, base, M, &lwork), op, E::geqrf_size_name);
    const Tensor work = workspace(lwork, dtype, device), info = scratch_info(device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver((api.*E::geqrf)(h, M, N, base + i * m * n, M, t + i * k, data<S>(work), lwork, data<int>(info)),
                     op, E::geqrf_name);
  });
}

void cuda_orgqr(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t cols, std::int64_t k,
                std::int64_t batch, void* q, const void* tau) {
  solver_call<Decomp>(op, dtype, device, {m, cols, batch}, {m, cols, batch, m * cols}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    const int M = static_cast<int>(m), C = static_cast<int>(cols), K = static_cast<int>(k);
    S* base = static_cast<S*>(q);
    const S* t = static_cast<const S*>(tau);
    int lwork = 0;
    check_cusolver((api.*E::orgqr_size)(h, M, C, K, base, M, t, &lwork), op, E::orgqr_size_name);
    const Tensor work = workspace(lwork, dtype, device), info = scratch_info(device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver(
          (api.*E::orgqr)(h, M, C, K, base + i * m * cols, M, t + i * k, data<S>(work), lwork, data<int>(info)), op,
          E::orgqr_name);
  });
}

void cuda_syevd(const char* op, Dtype dtype, int device, bool vectors, bool lower, std::int64_t n, std::int64_t batch,
                void* a, void* w, int* info) {
  solver_call<Decomp>(op, dtype, device, {n, batch}, {n, batch, n * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    using R = typename E::R;
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const int N = static_cast<int>(n);
    S* base = static_cast<S*>(a);
    R* values = static_cast<R*>(w);
    int lwork = 0;
    if (batch > 1 && n <= kJacobiBatched) {
      const JacobiParams<syevjInfo_t> params(api, op);
      const int B = static_cast<int>(batch);
      check_cusolver((api.*E::syevj_batched_size)(h, jobz, uplo, N, base, N, values, &lwork, params.get(), B), op,
                     E::syevj_batched_size_name);
      const Tensor work = workspace(lwork, dtype, device);
      check_cusolver(
          (api.*E::syevj_batched)(h, jobz, uplo, N, base, N, values, data<S>(work), lwork, info, params.get(), B), op,
          E::syevj_batched_name);
      return;
    }
    check_cusolver((api.*E::syevd_size)(h, jobz, uplo, N, base, N, values, &lwork), op, E::syevd_size_name);
    const Tensor work = workspace(lwork, dtype, device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver(
          (api.*E::syevd)(h, jobz, uplo, N, base + i * n * n, N, values + i * n, data<S>(work), lwork, info + i), op,
          E::syevd_name);
  });
}

void cuda_gesvd(const char* op, Dtype dtype, int device, bool vectors, bool full, std::int64_t m, std::int64_t n,
                std::int64_t batch, void* a, void* s, void* u, void* v, int* info) {
  solver_call<Decomp>(op, dtype, device, {m, n, batch}, {m, n, batch, m * m, n * n, m * n}, [&](auto e) {
    using E = decltype(e);
    using S = typename E::S;
    using R = typename E::R;
    const CusolverApi& api = ::phasor::cuda::detail::cusolver(op);
    const cusolverDnHandle_t h = ::phasor::cuda::detail::cusolver_handle(device, op);
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int M = static_cast<int>(m), N = static_cast<int>(n);
    const std::int64_t k = std::min(m, n);
    S* base = static_cast<S*>(a);
    R* values = static_cast<R*>(s);
    const JacobiParams<gesvdjInfo_t> params(api, op);
    int lwork = 0;
    if (batch > 1 && m <= kJacobiBatched && n <= kJacobiBatched) {
      // full U and V: the caller's when it asks for them, else temporaries (narrowed below, or scratch)
      const bool direct = vectors && full;
      const Tensor us = direct ? Tensor() : empty({batch, m * m}, dtype, Device::cuda(device));
      const Tensor vs = direct ? Tensor() : empty({batch, n * n}, dtype, Device::cuda(device));
      S* uf = direct ? static_cast<S*>(u) : data<S>(us);
      S* vf = direct ? static_cast<S*>(v) : data<S>(vs);
      const int B = static_cast<int>(batch);
      check_cusolver(
          (api.*E::gesvdj_batched_size)(h, jobz, M, N, base, M, values, uf, M, vf, N, &lwork, params.get(), B), op,
          E::gesvdj_batched_size_name);
      const Tensor work = workspace(lwork, dtype, device);
      check_cusolver((api.*E::gesvdj_batched)(h, jobz, M, N, base, M, values, uf, M, vf, N, data<S>(work), lwork, info,
                                              params.get(), B),
                     op, E::gesvdj_batched_name);
      if (vectors && !full) {  // the first k columns: the first m * k (n * k) elements of each column-major matrix
        const Device d = Device::cuda(device);
        Tensor::from_blob(u, {batch, m * k}, dtype, nullptr, d).copy_(us.narrow(1, 0, m * k));
        Tensor::from_blob(v, {batch, n * k}, dtype, nullptr, d).copy_(vs.narrow(1, 0, n * k));
      }
      return;
    }
    const int econ = full ? 0 : 1;
    const std::int64_t ucols = full ? m : k, vcols = full ? n : k;
    // without vectors: one matrix's scratch U and V, in economy size
    const Tensor us = vectors ? Tensor() : empty({m * k}, dtype, Device::cuda(device));
    const Tensor vs = vectors ? Tensor() : empty({n * k}, dtype, Device::cuda(device));
    S* ub = vectors ? static_cast<S*>(u) : data<S>(us);
    S* vb = vectors ? static_cast<S*>(v) : data<S>(vs);
    const std::int64_t ustep = vectors ? m * ucols : 0, vstep = vectors ? n * vcols : 0;
    const int ec = vectors ? econ : 1;
    check_cusolver((api.*E::gesvdj_size)(h, jobz, ec, M, N, base, M, values, ub, M, vb, N, &lwork, params.get()), op,
                   E::gesvdj_size_name);
    const Tensor work = workspace(lwork, dtype, device);
    for (std::int64_t i = 0; i < batch; ++i)
      check_cusolver((api.*E::gesvdj)(h, jobz, ec, M, N, base + i * m * n, M, values + i * k, ub + i * ustep, M,
                                      vb + i * vstep, N, data<S>(work), lwork, info + i, params.get()),
                     op, E::gesvdj_name);
  });
}

#else  // CPU-only build

void cuda_geqrf(const char* op, Dtype, int, std::int64_t, std::int64_t, std::int64_t, void*, void*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}
void cuda_orgqr(const char* op, Dtype, int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, void*,
                const void*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}
void cuda_syevd(const char* op, Dtype, int, bool, bool, std::int64_t, std::int64_t, void*, void*, int*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}
void cuda_gesvd(const char* op, Dtype, int, bool, bool, std::int64_t, std::int64_t, std::int64_t, void*, void*, void*,
                void*, int*) {
  throw Error(op, "no cuSOLVER in this build (CPU-only build)");
}

#endif

}  // namespace phasor::detail
