// src/cuda/libraries.cpp - loads cuBLAS and cuFFT on first use (Note [lazy CUDA libraries]).
#include "cuda/libraries.hpp"

#include <atomic>
#include <cstring>
#include <string>

#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include <dlfcn.h>
#endif

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

/// dlopen()s `soname`, else `build_path`; on failure returns nullptr and sets `error`.
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

const Loaded<CublasApi>& cublas_table() {
  static const Loaded<CublasApi> table = [] {
    Loaded<CublasApi> t;
    void* h = open_library(PHASOR_CUBLAS_SONAME, PHASOR_CUBLAS_PATH, t.error);
    if (!h) return t;
#define PHASOR_RESOLVE_CUBLAS(f) resolve(h, PHASOR_CUBLAS_SONAME, PHASOR_STRINGIFY(f), t.api.f, t.error);
    PHASOR_CUBLAS_FUNCTIONS(PHASOR_RESOLVE_CUBLAS)
#undef PHASOR_RESOLVE_CUBLAS
    if (t.error.empty()) g_cublas_loaded = true;
    return t;
  }();
  return table;
}

const Loaded<CufftApi>& cufft_table() {
  static const Loaded<CufftApi> table = [] {
    Loaded<CufftApi> t;
    void* h = open_library(PHASOR_CUFFT_SONAME, PHASOR_CUFFT_PATH, t.error);
    if (!h) return t;
#define PHASOR_RESOLVE_CUFFT(f) resolve(h, PHASOR_CUFFT_SONAME, PHASOR_STRINGIFY(f), t.api.f, t.error);
    PHASOR_CUFFT_FUNCTIONS(PHASOR_RESOLVE_CUFFT)
#undef PHASOR_RESOLVE_CUFFT
    if (t.error.empty()) g_cufft_loaded = true;
    return t;
  }();
  return table;
}

}  // namespace

const CublasApi& cublas(const char* op) {
  const auto& t = cublas_table();
  if (!t.error.empty()) throw Error(op, "cuBLAS is not usable: " + t.error);
  return t.api;
}

const CufftApi& cufft(const char* op) {
  const auto& t = cufft_table();
  if (!t.error.empty()) throw Error(op, "cuFFT is not usable: " + t.error);
  return t.api;
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
