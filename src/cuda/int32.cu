// src/cuda/int32.cu - the int32 arrays the CUDA libraries write (cuBLAS's and cuSOLVER's pivots and info
// flags) widened into int64 tensors (phasor has no int32 dtype).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.cuh"
#include "linalg/cusolver_solve.hpp"

namespace phasor::cuda {
namespace {

__global__ void widen_int32_kernel(const int* src, std::int64_t* dst, std::int64_t n) {
  for (std::int64_t i = grid_start(); i < n; i += grid_step()) dst[i] = src[i];
}

}  // namespace

void widen_int32(const int* src, std::int64_t* dst, std::int64_t n, void* stream) {
  if (n <= 0) return;
  launch_kernel(widen_int32_kernel, blocks_for(n), kThreads, static_cast<cudaStream_t>(stream), src, dst, n);
  check_launch("int32 to int64");
}

}  // namespace phasor::cuda
