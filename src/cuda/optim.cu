// src/cuda/optim.cu - fused optimizer updates for CUDA parameters: one grid-stride kernel per
// parameter running the same per-component formulas as the CPU loops (src/nn/optim/update_rules.hpp,
// Note [shared update rules]), in place on the parameter and its state.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/launch.cuh"
#include "cuda/nn_kernels.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {
namespace {

using optim::detail::AdamCoeffs;
using optim::detail::SgdCoeffs;



template <class R>
__global__ void sgd_kernel(R* p, const R* g, R* buf, std::int64_t n, SgdCoeffs<R> c, bool wd, bool momentum,
                           bool nesterov, bool first) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    optim::detail::sgd_update(p[i], g[i], momentum ? buf + i : nullptr, c, wd, momentum, nesterov, first);
}

template <class R>
__global__ void adam_kernel(R* p, const R* g, R* m, R* v, R* vmax, std::int64_t n, AdamCoeffs<R> c, bool amsgrad,
                            bool l2, bool lerp_low) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    optim::detail::adam_update(p[i], g[i], m[i], v[i], amsgrad ? vmax + i : nullptr, c, amsgrad, l2, lerp_low);
}

template <class R>
void sgd_launch(void* p, const void* g, void* buf, std::int64_t n, const SgdCoeffs<double>& c, bool wd, bool mom,
                bool nest, bool first, void* stream) {
  const SgdCoeffs<R> cr = optim::detail::cast_coeffs<R>(c);
  launch_kernel(sgd_kernel<R>, blocks_for(n), kThreads, static_cast<cudaStream_t>(stream), static_cast<R*>(p),
                static_cast<const R*>(g), static_cast<R*>(buf), n, cr, wd, mom, nest, first);
  check_launch("sgd");
}

template <class R>
void adam_launch(void* p, const void* g, void* m, void* v, void* vmax, std::int64_t n, const AdamCoeffs<double>& c,
                 bool ams, bool l2, bool low, void* stream) {
  const AdamCoeffs<R> cr = optim::detail::cast_coeffs<R>(c);
  launch_kernel(adam_kernel<R>, blocks_for(n), kThreads, static_cast<cudaStream_t>(stream), static_cast<R*>(p),
                static_cast<const R*>(g), static_cast<R*>(m), static_cast<R*>(v), static_cast<R*>(vmax), n, cr, ams, l2,
                low);
  check_launch("adam");
}

}  // namespace

void sgd_step(bool is_double, void* p, const void* g, void* buf, std::int64_t n, const SgdCoeffs<double>& c, bool wd,
              bool momentum, bool nesterov, bool first, void* stream) {
  if (n <= 0) return;
  if (is_double) sgd_launch<double>(p, g, buf, n, c, wd, momentum, nesterov, first, stream);
  else sgd_launch<float>(p, g, buf, n, c, wd, momentum, nesterov, first, stream);
}

void adam_step(bool is_double, void* p, const void* g, void* m, void* v, void* vmax, std::int64_t n,
               const AdamCoeffs<double>& c, bool amsgrad, bool l2, bool lerp_low, void* stream) {
  if (n <= 0) return;
  if (is_double) adam_launch<double>(p, g, m, v, vmax, n, c, amsgrad, l2, lerp_low, stream);
  else adam_launch<float>(p, g, m, v, vmax, n, c, amsgrad, l2, lerp_low, stream);
}

}  // namespace phasor::cuda
