// src/cuda/int32.cu - the int32 arrays the CUDA libraries read and write (cuBLAS's and cuSOLVER's pivots and info
// flags) widened into int64 tensors and narrowed back (phasor has no int32 dtype), and LAPACK's pivots made into
// the permutations they stand for (Note [LU factors] in src/linalg/lu.cpp).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.cuh"
#include "linalg/cusolver_solve.hpp"

namespace phasor::cuda {
namespace {

__global__ void widen_int32_kernel(const int* src, std::int64_t* dst, std::int64_t n) {
  for (std::int64_t i = grid_start(); i < n; i += grid_step()) dst[i] = src[i];
}

__global__ void narrow_int64_kernel(const std::int64_t* src, int* dst, std::int64_t n) {
  for (std::int64_t i = grid_start(); i < n; i += grid_step()) dst[i] = static_cast<int>(src[i]);
}

/// Rows a block permutes in shared memory (32 KiB of int); longer permutations are swapped in place in `perm`.
constexpr std::int64_t kSharedPerm = 8192;

/// One block per matrix (grid-stride over `count`): perm[b] = 0..m-1, then LAPACK's k swaps in order by thread 0
/// (they depend on each other), in shared memory where m fits.
__global__ void pivots_to_perm_kernel(const std::int64_t* pivots, std::int64_t* perm, std::int64_t count, std::int64_t k,
                                      std::int64_t m) {
  __shared__ int rows[kSharedPerm];
  const bool shared = m <= kSharedPerm;
  for (std::int64_t b = blockIdx.x; b < count; b += gridDim.x) {
    const std::int64_t* p = pivots + b * k;
    std::int64_t* q = perm + b * m;
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      if (shared) rows[i] = static_cast<int>(i);
      else q[i] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t j = p[i] - 1;
        if (shared) {
          const int t = rows[i];
          rows[i] = rows[j];
          rows[j] = t;
        } else {
          const std::int64_t t = q[i];
          q[i] = q[j];
          q[j] = t;
        }
      }
    }
    __syncthreads();
    if (shared)
      for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) q[i] = rows[i];
    __syncthreads();  // the shared rows are refilled for the next matrix
  }
}

}  // namespace

void widen_int32(const int* src, std::int64_t* dst, std::int64_t n, void* stream) {
  if (n <= 0) return;
  launch_kernel(widen_int32_kernel, blocks_for(n), kThreads, static_cast<cudaStream_t>(stream), src, dst, n);
  check_launch("int32 to int64");
}

void narrow_int64(const std::int64_t* src, int* dst, std::int64_t n, void* stream) {
  if (n <= 0) return;
  launch_kernel(narrow_int64_kernel, blocks_for(n), kThreads, static_cast<cudaStream_t>(stream), src, dst, n);
  check_launch("int64 to int32");
}

void pivots_to_perm(const std::int64_t* pivots, std::int64_t* perm, std::int64_t count, std::int64_t k, std::int64_t m,
                    void* stream) {
  if (count <= 0 || m <= 0) return;
  const auto grid = static_cast<unsigned>(count < 65536 ? count : 65536);
  launch_kernel(pivots_to_perm_kernel, grid, kThreads, static_cast<cudaStream_t>(stream), pivots, perm, count, k, m);
  check_launch("pivots to permutation");
}

}  // namespace phasor::cuda
