// src/cuda/libraries.hpp - cuBLAS, cuFFT and cuSOLVER, loaded on first use (dlopen) instead of at program start.
//
// Note [lazy CUDA libraries]
// libphasor links only the CUDA runtime (libcudart is small and cheap to load). cuBLAS, cuFFT and cuSOLVER
// are opened with dlopen the first time a GPU matrix product, FFT or factorization needs them: loading libcublasLt
// alone costs ~150 MB of resident memory and ~0.1 s (measured 2026-11-30), which every CPU-only
// user of a CUDA build would otherwise pay at startup. Each library is looked up by its soname
// first (LD_LIBRARY_PATH, libphasor's RUNPATH, the loader cache), then by the path it had at build
// time. The functions phasor calls are resolved once into a table of pointers (CublasApi,
// CufftApi, CusolverApi); a library that cannot be loaded, or lacks a function, gives a phasor::Error naming
// both the op and the library, on every call. The libraries stay loaded until the process exits.
//
// The CUDA-free part (load_libraries, loaded_libraries, open_library) is what the rest of the
// library and the tests may use; the tables need the CUDA headers and exist only in sources built
// with CUDA.
#pragma once
#include <string>

#if PHASOR_WITH_CUDA
#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>
#endif

namespace phasor {
namespace cuda {
namespace detail {

/// Loads cuBLAS, cuFFT and cuSOLVER now (they load on first use otherwise); throws phasor::Error(op, ...)
/// naming a library that cannot be loaded or lacks a function, or the missing backend in a CPU-only build.
void load_libraries(const char* op);

/// The CUDA libraries loaded so far, comma-separated in the order cublas, cufft, cusolver ("" for none).
std::string loaded_libraries();

/// dlopen()s `soname`, else `build_path` (skipped when empty); on failure returns nullptr and sets
/// `error` to "cannot load <soname> (<why>) nor <build_path> (<why>); put ... on LD_LIBRARY_PATH".
void* open_library(const char* soname, const char* build_path, std::string& error);

#if PHASOR_WITH_CUDA

/// The cuBLAS functions phasor calls. The names are the header's, so the _v2 macros apply as in a
/// direct call: api.cublasSgemm(...) calls the exported cublasSgemm_v2.
#define PHASOR_CUBLAS_FUNCTIONS(X)                                                                            \
  X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasSetMathMode) X(cublasGetStatusName)             \
  X(cublasGetStatusString) X(cublasSgemm) X(cublasDgemm) X(cublasCgemm) X(cublasZgemm)                        \
  X(cublasSgemmStridedBatched) X(cublasDgemmStridedBatched) X(cublasCgemmStridedBatched)                      \
  X(cublasZgemmStridedBatched) X(cublasSgetrfBatched) X(cublasDgetrfBatched) X(cublasCgetrfBatched)            \
  X(cublasZgetrfBatched) X(cublasSgetrsBatched) X(cublasDgetrsBatched) X(cublasCgetrsBatched)                  \
  X(cublasZgetrsBatched) X(cublasStrsmBatched) X(cublasDtrsmBatched) X(cublasCtrsmBatched)                    \
  X(cublasZtrsmBatched)

/// The cuFFT functions phasor calls.
#define PHASOR_CUFFT_FUNCTIONS(X)                                                                             \
  X(cufftCreate) X(cufftDestroy) X(cufftSetAutoAllocation) X(cufftMakePlanMany64) X(cufftSetStream)           \
  X(cufftSetWorkArea) X(cufftExecC2C) X(cufftExecZ2Z) X(cufftExecR2C) X(cufftExecD2Z) X(cufftExecC2R)         \
  X(cufftExecZ2D)

/// The cuSOLVER (dense) functions phasor calls.
#define PHASOR_CUSOLVER_FUNCTIONS(X)                                                                          \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream) X(cusolverDnSgetrf_bufferSize)              \
  X(cusolverDnDgetrf_bufferSize) X(cusolverDnCgetrf_bufferSize) X(cusolverDnZgetrf_bufferSize)                \
  X(cusolverDnSgetrf) X(cusolverDnDgetrf) X(cusolverDnCgetrf) X(cusolverDnZgetrf)                             \
  X(cusolverDnSpotrf_bufferSize) X(cusolverDnDpotrf_bufferSize) X(cusolverDnCpotrf_bufferSize)                \
  X(cusolverDnZpotrf_bufferSize) X(cusolverDnSpotrf) X(cusolverDnDpotrf) X(cusolverDnCpotrf)                  \
  X(cusolverDnZpotrf) X(cusolverDnSpotrfBatched) X(cusolverDnDpotrfBatched) X(cusolverDnCpotrfBatched)        \
  X(cusolverDnZpotrfBatched) X(cusolverDnSgeqrf_bufferSize) X(cusolverDnDgeqrf_bufferSize)                    \
  X(cusolverDnCgeqrf_bufferSize) X(cusolverDnZgeqrf_bufferSize) X(cusolverDnSgeqrf) X(cusolverDnDgeqrf)       \
  X(cusolverDnCgeqrf) X(cusolverDnZgeqrf) X(cusolverDnSorgqr_bufferSize) X(cusolverDnDorgqr_bufferSize)       \
  X(cusolverDnCungqr_bufferSize) X(cusolverDnZungqr_bufferSize) X(cusolverDnSorgqr) X(cusolverDnDorgqr)       \
  X(cusolverDnCungqr) X(cusolverDnZungqr) X(cusolverDnSsyevd_bufferSize) X(cusolverDnDsyevd_bufferSize)       \
  X(cusolverDnCheevd_bufferSize) X(cusolverDnZheevd_bufferSize) X(cusolverDnSsyevd) X(cusolverDnDsyevd)       \
  X(cusolverDnCheevd) X(cusolverDnZheevd) X(cusolverDnCreateSyevjInfo) X(cusolverDnDestroySyevjInfo)          \
  X(cusolverDnSsyevjBatched_bufferSize) X(cusolverDnDsyevjBatched_bufferSize)                                 \
  X(cusolverDnCheevjBatched_bufferSize) X(cusolverDnZheevjBatched_bufferSize) X(cusolverDnSsyevjBatched)      \
  X(cusolverDnDsyevjBatched) X(cusolverDnCheevjBatched) X(cusolverDnZheevjBatched)                            \
  X(cusolverDnCreateGesvdjInfo) X(cusolverDnDestroyGesvdjInfo) X(cusolverDnSgesvdj_bufferSize)                \
  X(cusolverDnDgesvdj_bufferSize) X(cusolverDnCgesvdj_bufferSize) X(cusolverDnZgesvdj_bufferSize)             \
  X(cusolverDnSgesvdj) X(cusolverDnDgesvdj) X(cusolverDnCgesvdj) X(cusolverDnZgesvdj)                         \
  X(cusolverDnSgesvdjBatched_bufferSize) X(cusolverDnDgesvdjBatched_bufferSize)                               \
  X(cusolverDnCgesvdjBatched_bufferSize) X(cusolverDnZgesvdjBatched_bufferSize) X(cusolverDnSgesvdjBatched)   \
  X(cusolverDnDgesvdjBatched) X(cusolverDnCgesvdjBatched) X(cusolverDnZgesvdjBatched)

#define PHASOR_CUDA_LIB_POINTER(f) decltype(&::f) f = nullptr;

/// Pointers to cuBLAS's functions, resolved when the library is loaded.
struct CublasApi {
  PHASOR_CUBLAS_FUNCTIONS(PHASOR_CUDA_LIB_POINTER)
};

/// Pointers to cuFFT's functions, resolved when the library is loaded.
struct CufftApi {
  PHASOR_CUFFT_FUNCTIONS(PHASOR_CUDA_LIB_POINTER)
};

/// Pointers to cuSOLVER's functions, resolved when the library is loaded.
struct CusolverApi {
  PHASOR_CUSOLVER_FUNCTIONS(PHASOR_CUDA_LIB_POINTER)
};

#undef PHASOR_CUDA_LIB_POINTER

/// cuBLAS, loaded on the first call; throws phasor::Error(op, ...) when it cannot be loaded.
const CublasApi& cublas(const char* op);

/// cuFFT, loaded on the first call; throws phasor::Error(op, ...) when it cannot be loaded.
const CufftApi& cufft(const char* op);

/// cuSOLVER, loaded on the first call; throws phasor::Error(op, ...) when it cannot be loaded.
const CusolverApi& cusolver(const char* op);

/// Throws phasor::Error(op, "<call> failed: <status name>: <status text>") unless s is CUBLAS_STATUS_SUCCESS.
void check_cublas(const CublasApi& api, cublasStatus_t s, const char* op, const char* call);
/// Throws phasor::Error(op, "<call> failed: <status name>") unless s is CUSOLVER_STATUS_SUCCESS.
void check_cusolver(cusolverStatus_t s, const char* op, const char* call);

/// This thread's cuBLAS handle for `device` and the device's current stream (Note [library handles]),
/// its math mode following cuda::allow_tf32().
cublasHandle_t cublas_handle(int device, const char* op);
/// This thread's cuSOLVER dense handle for `device` and the device's current stream (Note [library handles]).
cusolverDnHandle_t cusolver_handle(int device, const char* op);

#endif  // PHASOR_WITH_CUDA

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
