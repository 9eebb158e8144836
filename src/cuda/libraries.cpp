// src/cuda/libraries.cpp - loads cuBLAS and cuFFT on first use (Note [lazy CUDA libraries]).
#include "cuda/libraries.hpp"

#include <atomic>
#include <cstring>
#include <string>

#include "phasor/error.hpp"

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

}  // namespace

const CublasApi& cublas(const char* op) {
  static const auto table = load<CublasApi>(PHASOR_CUBLAS_SONAME, PHASOR_CUBLAS_PATH, g_cublas_loaded);
  return usable(table, op, "cuBLAS");
}

const CufftApi& cufft(const char* op) {
  static const auto table = load<CufftApi>(PHASOR_CUFFT_SONAME, PHASOR_CUFFT_PATH, g_cufft_loaded);
  return usable(table, op, "cuFFT");
}

void load_libraries(const char* op) {
  cublas(op);
  cufft(op);
}

std::string loaded_libraries() {
  std::string s = g_cublas_loaded ? "cublas" : "";
  if (g_cufft_loaded) s += s.empty() ? "cufft" : ",cufft";
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
