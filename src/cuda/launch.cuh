// src/cuda/launch.cuh - device-side launch helpers shared by the .cu files: the block size, the grid
// for a grid-stride loop, the one kernel launch, the launch check, and operand offsets from a linear index.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/elementwise.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {

/// Threads per block of the grid-stride kernels.
inline constexpr int kThreads = 256;

/// Blocks for n work items (at most 65536; grid-stride loops cover the rest).
inline unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

/// Launches `kernel` on `grid` blocks of `block` threads on `stream` with arguments `args`: the one
/// place that launches kernels. The host emulator build (tests/cuda_emu, Note [CUDA emulation]) runs the
/// kernel's threads on the host CPU instead.
template <class... P, class... A>
inline void launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream, A... args) {
  static_assert((std::size_t{0} + ... + sizeof(P)) <= 4096, "kernel arguments must fit the 4 KiB parameter space");
#if PHASOR_CUDA_EMULATION
  ::phasor_emu::launch(reinterpret_cast<const void*>(kernel), grid, block, 0, stream,
                       [=] { kernel(static_cast<P>(args)...); });
#else
  kernel<<<grid, block, 0, stream>>>(args...);
#endif
}

/// Throws "[cuda] launch of the <what> kernel failed: ..." when the last launch failed.
inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw Error("cuda", std::string("launch of the ") + what + " kernel failed: " + cudaGetErrorName(e) + ": " +
                            cudaGetErrorString(e));
}

/// 16 bytes moved as one unit (a complex128 element copied by value).
struct alignas(16) Bytes16 {
  std::uint64_t lo, hi;
};

/// First linear index of this thread and the grid-stride step.
__device__ __forceinline__ std::int64_t grid_start() { return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
/// The step of a grid-stride loop.
__device__ __forceinline__ std::int64_t grid_step() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// Note [loads in flight]
// A memory-bound kernel reaches the bandwidth only with enough bytes requested and not yet returned:
// bandwidth x latency, about 4.8 TB/s x 0.7 us = 3.4 MB on an H200, 25 KB per multiprocessor. A loop
// that loads an element and then uses it keeps one load per thread in flight (the warp stalls on the
// use before it reaches the next load): 1024-2048 resident threads of 4-byte loads make 4-8 KB per
// multiprocessor, a fifth to a third of the bandwidth. stride_fold issues the loads of U iterations
// before it uses any of them, so U loads per thread are in flight; it still folds the elements in the
// plain loop's order, so results are bitwise those of the plain loop. Its last round is the same body
// with each iteration past the end left out, not a load-then-use loop: a thread with fewer than U
// elements (a short row's, Note [short rows]) still has all of them in flight, and one body instead of
// a body and a tail took the reductions' registers down (lse_kernel<float> 72 -> 58, norm_kernel<float>
// 72 -> 62: 4 blocks of 256 threads per multiprocessor again). The grid-stride elementwise kernels and
// every row reduction's serial loop go through it.

/// Loads per thread in flight for elements of `bytes` bytes in a reduction's loop: about 32 bytes.
constexpr int loads_in_flight(std::size_t bytes) { return bytes >= 16 ? 2 : bytes >= 8 ? 4 : 8; }
/// loads_in_flight for elements of type T.
template <class T>
inline constexpr int kLoadsInFlight = loads_in_flight(sizeof(T));

/// fold(load(i), i) for i = first, first + step, ... < end, in that order, with the loads of U consecutive
/// iterations issued before any of them is folded, the last (fewer than U) iterations' too (Note [loads in
/// flight]). `load` only reads memory; `fold` may write (an output element whose input it loaded: in-place
/// elementwise ops are fine).
template <int U, class Load, class Fold>
__device__ __forceinline__ void stride_fold(std::int64_t first, std::int64_t end, std::int64_t step, const Load& load,
                                            const Fold& fold) {
  using V = decltype(load(first));
  for (std::int64_t i = first; i < end; i += U * step) {
    V v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * step < end) v[u] = load(i + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * step < end) fold(v[u], i + u * step);
  }
}

/// Byte offsets of operands 0..N of `o` at linear index i of its iteration shape (innermost dim last); with
/// 32-bit indices by multiplications (Note [fast index division]).
template <int N>
__device__ __forceinline__ void operand_offsets(const Operands& o, std::int64_t i, std::int64_t (&off)[N + 1]) {
#pragma unroll
  for (int k = 0; k <= N; ++k) off[k] = 0;
  if (o.index32) {
    auto r = static_cast<std::uint32_t>(i);
    for (int d = o.ndim - 1; d >= 1; --d) {
      const std::uint32_t q = o.div[d].div(r), id = r - q * static_cast<std::uint32_t>(o.sizes[d]);
      r = q;
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += static_cast<std::int64_t>(id) * o.strides[k][d];
    }
    if (o.ndim > 0) {
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += static_cast<std::int64_t>(r) * o.strides[k][0];
    }
    return;
  }
  for (int d = o.ndim - 1; d >= 1; --d) {
    const std::int64_t sz = o.sizes[d], q = i / sz, id = i - q * sz;
    i = q;
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] += id * o.strides[k][d];
  }
  // the outermost dim needs no division: i < numel leaves i < sizes[0] here (a 64-bit division is costly)
  if (o.ndim > 0) {
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] += i * o.strides[k][0];
  }
}

}  // namespace phasor::cuda
