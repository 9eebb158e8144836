// tests/cuda_emu/cublas.cpp - the cuBLAS calls phasor makes, through CBLAS on emulated device memory (Note
// [CUDA emulation] in emu.hpp): column-major C = alpha op(A) op(B) + beta C, single and strided batched,
// with cuBLAS's argument checks (leading dimensions) and the matrices' extents checked against their
// allocations. Scalars are read from host memory (CUBLAS_POINTER_MODE_HOST, the default phasor keeps).
#include <cblas.h>
#include <cublas_v2.h>

#include <complex>
#include <cstdint>
#include <mutex>
#include <set>
#include <type_traits>

#include "emu.hpp"

using namespace phasor_emu;
using Lock = std::lock_guard<std::recursive_mutex>;

struct cublasContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

std::set<cublasHandle_t>& handles() {
  static auto* s = new std::set<cublasHandle_t>;
  return *s;
}

CBLAS_TRANSPOSE to_cblas(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}

/// Bytes a column-major rows x cols matrix with leading dimension ld spans, `batch` of them `stride` apart.
std::size_t extent(long long rows, long long cols, long long ld, long long stride, long long batch, std::size_t elem) {
  if (rows == 0 || cols == 0 || batch == 0) return 0;
  return static_cast<std::size_t>((batch - 1) * stride + ld * (cols - 1) + rows) * elem;
}

/// Checks the handle, the arguments and the matrices' extents, then queues `run(batch index)` per batch.
template <class Run>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* A,
                    int lda, long long sa, const void* B, int ldb, long long sb, void* C, int ldc, long long sc,
                    int batch, std::size_t elem, const char* name, Run run) {
  Lock lk(api_mutex());
  if (!handles().count(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  const auto valid_op = [](cublasOperation_t o) { return o == CUBLAS_OP_N || o == CUBLAS_OP_T || o == CUBLAS_OP_C; };
  const long long ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
  const long long br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
  if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0 || batch < 0 || lda < std::max(1LL, ar) ||
      ldb < std::max(1LL, br) || ldc < std::max(1, m)) {
    report("%s: invalid arguments (m %d, n %d, k %d, lda %d, ldb %d, ldc %d, batch %d)", name, m, n, k, lda, ldb, ldc,
           batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (current_device() != h->device) {
    report("%s: handle made on cuda:%d used while cuda:%d is current", name, h->device, current_device());
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  if ((k > 0 && (!check_device_range(A, extent(ar, ac, lda, sa, batch, elem), h->device, name) ||
                 !check_device_range(B, extent(br, bc, ldb, sb, batch, elem), h->device, name))) ||
      !check_device_range(C, extent(m, n, ldc, sc, batch, elem), h->device, name))
    return CUBLAS_STATUS_INVALID_VALUE;
  const cudaError_t e = enqueue(h->stream, [=] {
    for (int b = 0; b < batch; ++b) run(b);
  });
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

/// gemm for element type T (float, double, cuComplex, cuDoubleComplex) through the matching CBLAS routine;
/// the scalars are read now (host pointer mode), batch b at A + b * sa, B + b * sb, C + b * sc.
template <class T>
cublasStatus_t typed_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                          const T* alpha, const T* A, int lda, long long sa, const T* B, int ldb, long long sb,
                          const T* beta, T* C, int ldc, long long sc, int batch, const char* name) {
  if (int status = 0; take_failure(name, status)) return static_cast<cublasStatus_t>(status);
  const T al = *alpha, be = *beta;
  return gemm(h, ta, tb, m, n, k, A, lda, sa, B, ldb, sb, C, ldc, sc, batch, sizeof(T), name, [=](int b) {
    const auto oa = to_cblas(ta), ob = to_cblas(tb);
    const T *a = A + b * sa, *bb = B + b * sb;
    T* c = C + b * sc;
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasColMajor, oa, ob, m, n, k, al, a, lda, bb, ldb, be, c, ldc);
    else if constexpr (std::is_same_v<T, double>)
      cblas_dgemm(CblasColMajor, oa, ob, m, n, k, al, a, lda, bb, ldb, be, c, ldc);
    else if constexpr (std::is_same_v<T, cuComplex>)
      cblas_cgemm(CblasColMajor, oa, ob, m, n, k, &al, a, lda, bb, ldb, &be, c, ldc);
    else
      cblas_zgemm(CblasColMajor, oa, ob, m, n, k, &al, a, lda, bb, ldb, &be, c, ldc);
  });
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  Lock lk(api_mutex());
  auto* c = new cublasContext;
  c->device = current_device();
  handles().insert(c);
  *handle = c;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  Lock lk(api_mutex());
  if (!handles().erase(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  Lock lk(api_mutex());
  if (!handles().count(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream_device(stream, "cublasSetStream") != handle->device) {
    report("cublasSetStream: stream of another device than the handle's cuda:%d", handle->device);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  Lock lk(api_mutex());
  if (!handles().count(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t s) { return cublasGetStatusName(s); }

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasSgemm");
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasDgemm");
}

cublasStatus_t cublasCgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const cuComplex* alpha, const cuComplex* A, int lda, const cuComplex* B, int ldb,
                              const cuComplex* beta, cuComplex* C, int ldc) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasCgemm");
}

cublasStatus_t cublasZgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
                              int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasZgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batch) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch,
                    "cublasSgemmStridedBatched");
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sb, const double* beta, double* C, int ldc,
                                         long long sc, int batch) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch,
                    "cublasDgemmStridedBatched");
}

cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const cuComplex* alpha, const cuComplex* A, int lda, long long sa,
                                         const cuComplex* B, int ldb, long long sb, const cuComplex* beta, cuComplex* C,
                                         int ldc, long long sc, int batch) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch,
                    "cublasCgemmStridedBatched");
}

cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda,
                                         long long sa, const cuDoubleComplex* B, int ldb, long long sb,
                                         const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc, long long sc,
                                         int batch) {
  return typed_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch,
                    "cublasZgemmStridedBatched");
}

}  // extern "C"

bool phasor_emu::cublas_handle_info(cublasHandle_t h, int& device, cudaStream_t& stream) {
  Lock lk(api_mutex());
  if (!handles().count(h)) return false;
  device = h->device;
  stream = h->stream;
  return true;
}
