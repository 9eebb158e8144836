// src/cuda/libraries.cpp - loads cuBLAS, cuFFT and cuSOLVER on first use (Note [lazy CUDA libraries]) and
// keeps the handles of cuBLAS and cuSOLVER (Note [library handles]).
//
// Note [library handles]
// A cuBLAS or cuSOLVER handle is made per (thread, device, stream) on first use, bound to that stream for good
// and destroyed at thread exit; not one handle re-bound per call: cublasSetStream resets a handle to its
// default workspace, so one handle serving two streams would let their concurrent calls share one workspace.
// A handle first needed during a CUDA graph capture is made with the thread's capture mode relaxed: creation
// may allocate, which a global-mode capture prohibits (the handle is not part of the graph and outlives it;
// Note [CUDA graphs]).
#include "cuda/libraries.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/runtime.hpp"
#endif

#include <dlfcn.h>

// The sonames and build-time paths come from cmake/PhasorCuda.cmake.
#ifndef PHASOR_CUBLAS_SONAME
#define PHASOR_CUBLAS_SONAME "libcublas.so"
#endif
#ifndef PHASOR_CUBLAS_PATH
#define PHASOR_CUBLAS_PATH ""
#endif
#ifndef PHASOR_CUFFT_SONAME
#define PHASOR_CUFFT_SONAME "libcufft.so"
#endif
#ifndef PHASOR_CUFFT_PATH
#define PHASOR_CUFFT_PATH ""
#endif
#ifndef PHASOR_CUSOLVER_SONAME
#define PHASOR_CUSOLVER_SONAME "libcusolver.so"
#endif
#ifndef PHASOR_CUSOLVER_PATH
#define PHASOR_CUSOLVER_PATH ""
#endif

namespace phasor {
namespace cuda {
namespace detail {

void* open_library(const char* soname, const char* build_path, std::string& error) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
  const char* e = dlerror();
  error = std::string("cannot load ") + soname + " (" + (e ? e : "unknown error") + ")";
  if (build_path[0] != '\0' && std::strcmp(build_path, soname) != 0) {
    if (void* h = dlopen(build_path, RTLD_NOW | RTLD_LOCAL)) {
      error.clear();
      return h;
    }
    e = dlerror();
    error += std::string(" nor ") + build_path + " (" + (e ? e : "unknown error") + ")";
  }
  error += "; put the CUDA toolkit's library directory on LD_LIBRARY_PATH";
  return nullptr;
}

#if PHASOR_WITH_CUDA

namespace {

#define PHASOR_STRINGIFY_(x) #x
#define PHASOR_STRINGIFY(x) PHASOR_STRINGIFY_(x)  // expands x first: cublasCreate -> "cublasCreate_v2"

std::atomic<bool> g_cublas_loaded{false};
std::atomic<bool> g_cufft_loaded{false};
std::atomic<bool> g_cusolver_loaded{false};

/// A library's function table, or why it could not be made.
template <class Api>
struct Loaded {
  Api api;
  std::string error;
};

/// Sets `fn` to `name` in library `handle`; on failure appends to `error`.
template <class F>
void resolve(void* handle, const char* lib, const char* name, F& fn, std::string& error) {
  void* p = dlsym(handle, name);
  if (!p) {
    error += (error.empty() ? std::string(lib) + " lacks " : std::string(", ")) + name;
    return;
  }
  static_assert(sizeof(F) == sizeof(void*), "function pointers must be data-pointer sized for dlsym");
  std::memcpy(&fn, &p, sizeof p);
}

#define PHASOR_RESOLVE(f) resolve(handle, soname, PHASOR_STRINGIFY(f), t.api.f, t.error);
/// Resolves every function of cuBLAS's table.
void resolve_all(void* handle, const char* soname, Loaded<CublasApi>& t) { PHASOR_CUBLAS_FUNCTIONS(PHASOR_RESOLVE) }
/// Resolves every function of cuFFT's table.
void resolve_all(void* handle, const char* soname, Loaded<CufftApi>& t) { PHASOR_CUFFT_FUNCTIONS(PHASOR_RESOLVE) }
/// Resolves every function of cuSOLVER's table.
void resolve_all(void* handle, const char* soname, Loaded<CusolverApi>& t) { PHASOR_CUSOLVER_FUNCTIONS(PHASOR_RESOLVE) }
#undef PHASOR_RESOLVE

/// Opens a library and resolves its table; `loaded` records success.
template <class Api>
Loaded<Api> load(const char* soname, const char* build_path, std::atomic<bool>& loaded) {
  Loaded<Api> t;
  if (void* handle = open_library(soname, build_path, t.error)) resolve_all(handle, soname, t);
  loaded = t.error.empty();
  return t;
}

/// The table, or phasor::Error(op, "<name> is not usable: <why>").
template <class Api>
const Api& usable(const Loaded<Api>& t, const char* op, const char* name) {
  if (!t.error.empty()) throw Error(op, std::string(name) + " is not usable: " + t.error);
  return t.api;
}

/// This thread's handles of one library, one per (device, stream), destroyed at thread exit.
template <class H, class Destroy>
struct Handles {
  struct Entry {
    H h = nullptr;
    int mode = -1;  ///< cuBLAS's math mode last set
  };
  std::map<std::pair<int, cudaStream_t>, Entry> map;
  Destroy destroy = nullptr;
  ~Handles() {
    for (auto& kv : map) destroy(kv.second.h);
  }
};

/// The entry of this thread's handle for `device` and its current stream, made on first use by create(&h) (with
/// the capture mode relaxed) and bound by set_stream(h, stream); each returns the library's status, checked by
/// check(status, call name) (Note [library handles]).
template <class H, class Destroy, class Create, class SetStream, class Check>
typename Handles<H, Destroy>::Entry& stream_handle(Handles<H, Destroy>& handles, int device, Create create,
                                                   SetStream set_stream, Check check, const char* create_name,
                                                   const char* set_stream_name) {
  const cudaStream_t stream = current_stream_handle(device);
  auto it = handles.map.find({device, stream});
  if (it != handles.map.end()) return it->second;
  H h = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  const auto created = create(&h);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  check(created, create_name);
  const auto bound = set_stream(h, stream);
  if (bound != decltype(bound){}) handles.destroy(h);  // every library's success status is 0
  check(bound, set_stream_name);
  return handles.map.emplace(std::make_pair(device, stream), typename Handles<H, Destroy>::Entry{h, -1}).first->second;
}

/// cuSOLVER's name of a status (the library has no function for it).
const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "CUSOLVER_STATUS_UNKNOWN";
  }
}

}  // namespace

void check_cublas(const CublasApi& api, cublasStatus_t s, const char* op, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(op, std::string(call) + " failed: " + api.cublasGetStatusName(s) + ": " + api.cublasGetStatusString(s));
}

void check_cusolver(cusolverStatus_t s, const char* op, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw Error(op, std::string(call) + " failed: " + cusolver_status_name(s) + " (" + std::to_string(static_cast<int>(s)) + ")");
}

cublasHandle_t cublas_handle(int device, const char* op) {
  const CublasApi& api = cublas(op);
  thread_local Handles<cublasHandle_t, decltype(api.cublasDestroy)> handles{{}, api.cublasDestroy};
  auto& e = stream_handle(
      handles, device, api.cublasCreate, api.cublasSetStream,
      [&](cublasStatus_t s, const char* call) { check_cublas(api, s, op, call); }, "cublasCreate", "cublasSetStream");
  const cublasMath_t mode = allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (e.mode != static_cast<int>(mode)) {
    check_cublas(api, api.cublasSetMathMode(e.h, mode), op, "cublasSetMathMode");
    e.mode = static_cast<int>(mode);
  }
  return e.h;
}

cusolverDnHandle_t cusolver_handle(int device, const char* op) {
  const CusolverApi& api = cusolver(op);
  thread_local Handles<cusolverDnHandle_t, decltype(api.cusolverDnDestroy)> handles{{}, api.cusolverDnDestroy};
  return stream_handle(
             handles, device, api.cusolverDnCreate, api.cusolverDnSetStream,
             [&](cusolverStatus_t s, const char* call) { check_cusolver(s, op, call); }, "cusolverDnCreate",
             "cusolverDnSetStream")
      .h;
}

const CublasApi& cublas(const char* op) {
  static const auto table = load<CublasApi>(PHASOR_CUBLAS_SONAME, PHASOR_CUBLAS_PATH, g_cublas_loaded);
  return usable(table, op, "cuBLAS");
}

const CufftApi& cufft(const char* op) {
  static const auto table = load<CufftApi>(PHASOR_CUFFT_SONAME, PHASOR_CUFFT_PATH, g_cufft_loaded);
  return usable(table, op, "cuFFT");
}

const CusolverApi& cusolver(const char* op) {
  static const auto table = load<CusolverApi>(PHASOR_CUSOLVER_SONAME, PHASOR_CUSOLVER_PATH, g_cusolver_loaded);
  return usable(table, op, "cuSOLVER");
}

void load_libraries(const char* op) {
  cublas(op);
  cufft(op);
  cusolver(op);
}

std::string loaded_libraries() {
  std::string s;
  for (const auto& [loaded, name] : {std::pair{g_cublas_loaded.load(), "cublas"}, std::pair{g_cufft_loaded.load(), "cufft"},
                                     std::pair{g_cusolver_loaded.load(), "cusolver"}})
    if (loaded) s += (s.empty() ? "" : ",") + std::string(name);
  return s;
}

#else  // CPU-only build

void load_libraries(const char* op) {
  throw Error(op, "phasor was built without CUDA: there are no CUDA libraries to load");
}

std::string loaded_libraries() { return ""; }

#endif

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
