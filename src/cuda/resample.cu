// src/cuda/resample.cu - resample_op's kernel (src/nn/resample.hpp): a CSR map applied along the middle dim of
// a contiguous (pre, in, post) array of real components. One thread per output component, its taps summed in
// row order from the first tap's product: the CPU loops' (src/nn/resample.cpp) order.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.cuh"
#include "cuda/nn_kernels.hpp"

namespace phasor::cuda {
namespace {

template <class R>
__global__ void resample_kernel(const R* __restrict__ x, R* __restrict__ y, const std::int64_t* __restrict__ row_ptr,
                                const std::int64_t* __restrict__ col, const R* __restrict__ val, std::int64_t in,
                                std::int64_t out, std::int64_t post, std::int64_t total) {
  for (std::int64_t k = grid_start(); k < total; k += grid_step()) {
    const std::int64_t r = k / post, q = k - r * post;  // r = p * out + o
    const std::int64_t p = r / out, o = r - p * out;
    const R* xp = x + p * in * post + q;
    const std::int64_t b = row_ptr[o], e = row_ptr[o + 1];
    R acc = b < e ? val[b] * xp[col[b] * post] : R(0);
    for (std::int64_t j = b + 1; j < e; ++j) acc += val[j] * xp[col[j] * post];
    y[k] = acc;
  }
}

}  // namespace

void resample(const void* x, void* y, const std::int64_t* row_ptr, const std::int64_t* col, const void* val,
              std::int64_t pre, std::int64_t in, std::int64_t out, std::int64_t post, bool is_double, void* stream) {
  const std::int64_t total = pre * out * post;
  if (total == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (is_double)
    launch_kernel(resample_kernel<double>, blocks_for(total), kThreads, s, static_cast<const double*>(x),
                  static_cast<double*>(y), row_ptr, col, static_cast<const double*>(val), in, out, post, total);
  else
    launch_kernel(resample_kernel<float>, blocks_for(total), kThreads, s, static_cast<const float*>(x),
                  static_cast<float*>(y), row_ptr, col, static_cast<const float*>(val), in, out, post, total);
  check_launch("resample");
}

}  // namespace phasor::cuda
