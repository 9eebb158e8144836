// src/cuda/reduce.cu - row reductions for CUDA tensors: sum, prod, amax, amin, all, any over the
// contiguous (n_out, n_red) rows the host glue (src/cuda/ops.cpp) lays out, one block per row with a
// shared-memory tree, accumulating as the CPU reducers do (bool sums in int64; NaN wins max/min).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "cuda/device_complex.cuh"
#include "cuda/reduce.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {
namespace {

using ::phasor::detail::convert;
using ::phasor::detail::is_complex_v;

template <class T>
__device__ __forceinline__ bool is_nan(const T& v) {
  if constexpr (is_complex_v<T>) return ::isnan(v.real()) || ::isnan(v.imag());
  else if constexpr (std::is_floating_point_v<T>) return ::isnan(v);
  else return false;
}

// Reducers: accumulator A from input T, result O.
template <class T>
struct Sum {
  using A = std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>;
  using O = A;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return a + b; }
  __device__ A load(T v) const { return convert<A>(v); }
};
template <class T>
struct Prod {
  using A = std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>;
  using O = A;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return A(1); }
  __device__ A combine(A a, A b) const { return a * b; }
  __device__ A load(T v) const { return convert<A>(v); }
};
template <class T, bool Max>
struct Extremum {
  using A = T;
  using O = T;
  static constexpr bool kHasIdentity = false;
  __device__ A identity() const { return A(0); }  // unused: empty rows are rejected on the host
  __device__ A combine(A a, A b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return Max ? (a > b ? a : b) : (a < b ? a : b);
  }
  __device__ A load(T v) const { return v; }
};
template <class T, bool All>
struct Logical {
  using A = bool;
  using O = bool;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return All; }
  __device__ A combine(A a, A b) const { return All ? (a && b) : (a || b); }
  __device__ A load(T v) const { return convert<bool>(v); }
};

constexpr int kThreads = 256;

template <class T, class R>
__global__ void rows_kernel(const T* rows, std::int64_t n_out, std::int64_t n_red, typename R::O* out, R r) {
  using A = typename R::A;
  __shared__ alignas(16) unsigned char buf[kThreads * sizeof(A)];
  A* sh = reinterpret_cast<A*>(buf);
  for (std::int64_t row = blockIdx.x; row < n_out; row += gridDim.x) {
    A acc = r.identity();
    bool first = true;  // Extremum has no identity: start from the first element seen
    for (std::int64_t i = threadIdx.x; i < n_red; i += blockDim.x) {
      const A v = r.load(rows[row * n_red + i]);
      acc = first ? v : r.combine(acc, v);
      first = false;
    }
    // threads that saw nothing hold the identity; without one (max/min) they take thread 0's value,
    // which saw an element whenever n_red >= 1 (a repeated operand does not change a max or min)
    sh[threadIdx.x] = acc;
    __syncthreads();
    if constexpr (!R::kHasIdentity) {
      if (first && n_red > 0) sh[threadIdx.x] = sh[0];
      __syncthreads();
    }
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) sh[threadIdx.x] = r.combine(sh[threadIdx.x], sh[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = sh[0];
    __syncthreads();
  }
}

template <class T, class R>
void launch(const void* rows, std::int64_t n_out, std::int64_t n_red, void* out, R r, void* stream) {
  if (n_out == 0) return;
  const unsigned blocks = static_cast<unsigned>(n_out < 65535 ? n_out : 65535);
  rows_kernel<T, R><<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const T*>(rows), n_out, n_red, static_cast<typename R::O*>(out), r);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw Error("cuda", std::string("launch of the reduction kernel failed: ") + cudaGetErrorName(e) + ": " +
                            cudaGetErrorString(e));
}

/// Calls f(T{}) for dtype t (all six).
template <class F>
void with_type(Dtype t, F&& f) {
  switch (t) {
    case Dtype::Bool: f(bool{}); return;
    case Dtype::Int64: f(std::int64_t{}); return;
    case Dtype::Float32: f(float{}); return;
    case Dtype::Float64: f(double{}); return;
    case Dtype::Complex64: f(c64{}); return;
    case Dtype::Complex128: f(c128{}); return;
  }
}

}  // namespace

bool reduce_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, void* out,
                 void* stream) {
  bool done = false;
  with_type(in, [&](auto tag) {
    using T = decltype(tag);
    if (!std::strcmp(op, "sum")) {
      launch<T>(rows, n_out, n_red, out, Sum<T>{}, stream), done = true;
    } else if (!std::strcmp(op, "prod")) {
      launch<T>(rows, n_out, n_red, out, Prod<T>{}, stream), done = true;
    } else if (!std::strcmp(op, "all")) {
      launch<T>(rows, n_out, n_red, out, Logical<T, true>{}, stream), done = true;
    } else if (!std::strcmp(op, "any")) {
      launch<T>(rows, n_out, n_red, out, Logical<T, false>{}, stream), done = true;
    } else if constexpr (!is_complex_v<T>) {
      if (!std::strcmp(op, "amax")) launch<T>(rows, n_out, n_red, out, Extremum<T, true>{}, stream), done = true;
      else if (!std::strcmp(op, "amin")) launch<T>(rows, n_out, n_red, out, Extremum<T, false>{}, stream), done = true;
    }
  });
  return done;
}

}  // namespace phasor::cuda
