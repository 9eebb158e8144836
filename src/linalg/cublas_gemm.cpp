// src/linalg/cublas_gemm.cpp - cuBLAS behind cuda_gemm: one handle per (thread, device, stream), bound
// to its stream when made; default math mode unless cuda::set_allow_tf32(true) (then
// TF32 tensor-op math). Row-major products map onto cuBLAS's column-major ones by swapping the
// operands: C^T = op(B)^T op(A)^T.
#include "linalg/cublas_gemm.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <string>
#include <utility>

#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#endif

namespace phasor::detail {

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::cuda::detail::CublasApi;

void check(const CublasApi& api, cublasStatus_t s, const char* op, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(op, std::string(call) + " failed: " + api.cublasGetStatusName(s) + ": " + api.cublasGetStatusString(s));
}

/// This thread's cuBLAS handle for `device` and the device's current stream (made on first use and bound
/// to that stream for good, destroyed at thread exit), its math mode following cuda::allow_tf32(). One
/// handle per stream, not one re-bound per call: cublasSetStream resets a handle to its default workspace,
/// so one handle serving two streams would let their concurrent gemms share one workspace.
cublasHandle_t handle_for(const CublasApi& api, int device, const char* op) {
  struct Handle {
    cublasHandle_t h = nullptr;
    int mode = -1;  // the cublasMath_t last set
  };
  struct Handles {
    const CublasApi* api = nullptr;
    std::map<std::pair<int, cudaStream_t>, Handle> h;
    ~Handles() {
      for (auto& [key, x] : h) api->cublasDestroy(x.h);
    }
  };
  thread_local Handles handles;
  const cudaStream_t stream = ::phasor::cuda::detail::current_stream_handle(device);
  auto it = handles.h.find({device, stream});
  if (it == handles.h.end()) {
    cublasHandle_t h = nullptr;
    // The first gemm on a CUDA graph's capture stream makes its handle during the capture: cublasCreate
    // may allocate, which a global-mode capture prohibits unless this thread relaxes it (the handle is not
    // part of the graph and outlives it; Note [CUDA graphs]).
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    const cublasStatus_t created = api.cublasCreate(&h);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    check(api, created, op, "cublasCreate");
    handles.api = &api;
    const cublasStatus_t s = api.cublasSetStream(h, stream);
    if (s != CUBLAS_STATUS_SUCCESS) api.cublasDestroy(h);
    check(api, s, op, "cublasSetStream");
    it = handles.h.emplace(std::make_pair(device, stream), Handle{h, -1}).first;
  }
  Handle& e = it->second;
  const cublasMath_t mode = ::phasor::cuda::allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (e.mode != static_cast<int>(mode)) {
    check(api, api.cublasSetMathMode(e.h, mode), op, "cublasSetMathMode");
    e.mode = static_cast<int>(mode);
  }
  return e.h;
}

}  // namespace

void cuda_gemm(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
               const void* A, std::int64_t lda, const void* B, std::int64_t ldb, void* C, std::int64_t ldc) {
  if (std::max({m, n, k, lda, ldb, ldc}) > INT_MAX)
    throw Error(op, "matrix dims " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
                        " exceed the cuBLAS index range");
  ::phasor::cuda::detail::DeviceGuard guard(device);
  const CublasApi& api = ::phasor::cuda::detail::cublas(op);
  cublasHandle_t h = handle_for(api, device, op);
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const auto LA = static_cast<int>(lda), LB = static_cast<int>(ldb), LC = static_cast<int>(ldc);
  // column-major: C^T (N x M) = op(B)^T (N x K) op(A)^T (K x M)
  switch (dtype) {
    case Dtype::Float32: {
      const float one = 1, zero = 0;
      check(api, api.cublasSgemm(h, opb, opa, N, M, K, &one, static_cast<const float*>(B), LB, static_cast<const float*>(A), LA,
                        &zero, static_cast<float*>(C), LC),
            op, "cublasSgemm");
      return;
    }
    case Dtype::Float64: {
      const double one = 1, zero = 0;
      check(api, api.cublasDgemm(h, opb, opa, N, M, K, &one, static_cast<const double*>(B), LB, static_cast<const double*>(A),
                        LA, &zero, static_cast<double*>(C), LC),
            op, "cublasDgemm");
      return;
    }
    case Dtype::Complex64: {
      const cuComplex one{1, 0}, zero{0, 0};
      check(api, api.cublasCgemm(h, opb, opa, N, M, K, &one, static_cast<const cuComplex*>(B), LB,
                        static_cast<const cuComplex*>(A), LA, &zero, static_cast<cuComplex*>(C), LC),
            op, "cublasCgemm");
      return;
    }
    case Dtype::Complex128: {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      check(api, api.cublasZgemm(h, opb, opa, N, M, K, &one, static_cast<const cuDoubleComplex*>(B), LB,
                        static_cast<const cuDoubleComplex*>(A), LA, &zero, static_cast<cuDoubleComplex*>(C), LC),
            op, "cublasZgemm");
      return;
    }
    default:
      throw Error(op, std::string("no CUDA matrix product for ") + dtype_name(dtype) + " tensors");
  }
}

void cuda_gemm_batched(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n,
                       std::int64_t k, const void* A, std::int64_t lda, std::int64_t stride_a, const void* B,
                       std::int64_t ldb, std::int64_t stride_b, void* C, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch) {
  if (batch <= 0) return;
  if (std::max({m, n, k, lda, ldb, ldc, batch}) > INT_MAX)
    throw Error(op, "matrix dims " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
                        " or batch " + std::to_string(batch) + " exceed the cuBLAS index range");
  ::phasor::cuda::detail::DeviceGuard guard(device);
  const CublasApi& api = ::phasor::cuda::detail::cublas(op);
  cublasHandle_t h = handle_for(api, device, op);
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const auto LA = static_cast<int>(lda), LB = static_cast<int>(ldb), LC = static_cast<int>(ldc);
  const auto nb = static_cast<int>(batch);
  // column-major, operands swapped as in cuda_gemm
  switch (dtype) {
    case Dtype::Float32: {
      const float one = 1, zero = 0;
      check(api, api.cublasSgemmStridedBatched(h, opb, opa, N, M, K, &one, static_cast<const float*>(B), LB, stride_b,
                                      static_cast<const float*>(A), LA, stride_a, &zero, static_cast<float*>(C), LC,
                                      stride_c, nb),
            op, "cublasSgemmStridedBatched");
      return;
    }
    case Dtype::Float64: {
      const double one = 1, zero = 0;
      check(api, api.cublasDgemmStridedBatched(h, opb, opa, N, M, K, &one, static_cast<const double*>(B), LB, stride_b,
                                      static_cast<const double*>(A), LA, stride_a, &zero, static_cast<double*>(C), LC,
                                      stride_c, nb),
            op, "cublasDgemmStridedBatched");
      return;
    }
    case Dtype::Complex64: {
      const cuComplex one{1, 0}, zero{0, 0};
      check(api, api.cublasCgemmStridedBatched(h, opb, opa, N, M, K, &one, static_cast<const cuComplex*>(B), LB, stride_b,
                                      static_cast<const cuComplex*>(A), LA, stride_a, &zero,
                                      static_cast<cuComplex*>(C), LC, stride_c, nb),
            op, "cublasCgemmStridedBatched");
      return;
    }
    case Dtype::Complex128: {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      check(api, api.cublasZgemmStridedBatched(h, opb, opa, N, M, K, &one, static_cast<const cuDoubleComplex*>(B), LB, stride_b,
                                      static_cast<const cuDoubleComplex*>(A), LA, stride_a, &zero,
                                      static_cast<cuDoubleComplex*>(C), LC, stride_c, nb),
            op, "cublasZgemmStridedBatched");
      return;
    }
    default:
      throw Error(op, std::string("no CUDA matrix product for ") + dtype_name(dtype) + " tensors");
  }
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

#endif

}  // namespace phasor::detail
