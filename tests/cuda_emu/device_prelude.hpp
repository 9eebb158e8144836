// tests/cuda_emu/device_prelude.hpp - force-included (-include) into every .cu file of an emulation
// build (PHASOR_CUDA_EMULATION, Note [CUDA emulation] in tests/cuda_emu/emu.hpp), which compiles the
// kernels with the host C++ compiler: the CUDA built-ins the kernels use (threadIdx, blockIdx,
// blockDim, gridDim, __syncthreads, atomicAdd, atomicMin, atomicMax, atomicCAS, __shared__) as host code the emulator drives.
#pragma once
// Without nvcc the toolkit's headers define __shared__ as nothing; a block's shared variables must be
// one object for all its threads, so they become function statics (blocks run one at a time).
#define __shared__ static
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace phasor_emu {

/// The running thread's coordinates (set by the emulator before it runs or resumes a thread).
struct Coords {
  uint3 thread;
  uint3 block;
  dim3 block_dim;
  dim3 grid_dim;
};
extern Coords g_coords;

/// Waits until every thread of the block reaches the barrier.
void syncthreads();

/// Queues `thread` (the call of `kernel` with its arguments) on `stream` to run once per thread of the
/// grid; a bad configuration sets the error cudaGetLastError returns and queues nothing.
void launch(const void* kernel, dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
            std::function<void()> thread);

}  // namespace phasor_emu

#define threadIdx (::phasor_emu::g_coords.thread)
#define blockIdx (::phasor_emu::g_coords.block)
#define blockDim (::phasor_emu::g_coords.block_dim)
#define gridDim (::phasor_emu::g_coords.grid_dim)

/// __syncthreads: a block-wide barrier.
inline void __syncthreads() { ::phasor_emu::syncthreads(); }

/// atomicAdd: threads never run at the same time in the emulator, so a plain read-add-write is atomic.
template <class T>
inline T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

/// atomicMin: as atomicAdd, a plain read-compare-write.
template <class T>
inline T atomicMin(T* address, T value) {
  const T old = *address;
  if (value < old) *address = value;
  return old;
}

/// atomicMax: as atomicAdd, a plain read-compare-write.
template <class T>
inline T atomicMax(T* address, T value) {
  const T old = *address;
  if (value > old) *address = value;
  return old;
}

/// atomicCAS: as atomicAdd, a plain read-compare-write.
template <class T>
inline T atomicCAS(T* address, T compare, T value) {
  const T old = *address;
  if (old == compare) *address = value;
  return old;
}

/// rsqrt: CUDA's device reciprocal square root.
inline float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
