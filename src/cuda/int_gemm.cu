// src/cuda/int_gemm.cu - the int64 and bool matrix products of int_gemm.hpp: one thread per output element,
// a serial sum over the inner dim. Integer products are rare next to float ones (cuBLAS), so this kernel
// is plain rather than tiled.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "cuda/int_gemm.hpp"
#include "cuda/launch.cuh"

namespace phasor::cuda {
namespace {

template <class T>
__global__ void int_gemm_kernel(IntGemm g) {
  const std::int64_t total = g.batch * g.rows * g.cols;
  for (std::int64_t e = grid_start(); e < total; e += grid_step()) {
    const std::int64_t r = e / g.cols, j = e - r * g.cols, b = r / g.rows, i = r - b * g.rows;
    const T* x = static_cast<const T*>(g.a) + b * g.a_batch + i * g.a_row;
    const T* y = static_cast<const T*>(g.b) + b * g.b_batch + j * g.b_col;
    if constexpr (std::is_same_v<T, bool>) {
      bool acc = false;
      for (std::int64_t p = 0; p < g.inner && !acc; ++p) acc = x[p * g.a_col] && y[p * g.b_row];
      static_cast<bool*>(g.c)[e] = acc;
    } else {  // unsigned arithmetic: wraps like the CPU's loop, without signed-overflow UB
      std::uint64_t acc = 0;
      for (std::int64_t p = 0; p < g.inner; ++p)
        acc += static_cast<std::uint64_t>(x[p * g.a_col]) * static_cast<std::uint64_t>(y[p * g.b_row]);
      static_cast<std::int64_t*>(g.c)[e] = static_cast<std::int64_t>(acc);
    }
  }
}

}  // namespace

bool int_gemm(Dtype dtype, const IntGemm& g, void* stream) {
  const std::int64_t total = g.batch * g.rows * g.cols;
  const auto s = static_cast<cudaStream_t>(stream);
  if (dtype == Dtype::Int64) launch_kernel(int_gemm_kernel<std::int64_t>, blocks_for(total), kThreads, s, g);
  else if (dtype == Dtype::Bool) launch_kernel(int_gemm_kernel<bool>, blocks_for(total), kThreads, s, g);
  else return false;
  check_launch("int_gemm");
  return true;
}

}  // namespace phasor::cuda
