// src/cuda/pool.cu - max and average pooling and the average's adjoint on CUDA planes (Note [pooling] in
// src/nn/pooling.cpp). One thread per output element (per input element for the adjoint, which gathers
// from the outputs that read it: no atomics, the CPU's summation order); the window arithmetic is
// src/nn/pool_rules.hpp's, the CPU kernels' own.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.cuh"
#include "cuda/nn_kernels.hpp"
#include "nn/pool_rules.hpp"

namespace phasor::cuda {
namespace {

using nn::detail::PoolGeo;

template <class T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t* __restrict__ idx, PoolGeo g,
                                std::int64_t P, std::int64_t L, std::int64_t total) {
  for (std::int64_t k = grid_start(); k < total; k += grid_step()) {
    const std::int64_t nc = k / L;
    std::int64_t o[nn::detail::kPoolDims];
    nn::detail::pool_out_coords(g, k - nc * L, o);
    T best;
    std::int64_t at;
    nn::detail::pool_max_at(g, x + nc * P, o, best, at);
    y[k] = best;
    idx[k] = at;
  }
}

template <class T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, PoolGeo g, std::int64_t P, std::int64_t L,
                                std::int64_t total) {
  for (std::int64_t k = grid_start(); k < total; k += grid_step()) {
    const std::int64_t nc = k / L;
    std::int64_t o[nn::detail::kPoolDims];
    nn::detail::pool_out_coords(g, k - nc * L, o);
    y[k] = nn::detail::pool_avg_at(g, x + nc * P, o);
  }
}

template <class T>
__global__ void avg_pool_adjoint_kernel(const T* __restrict__ gy, T* __restrict__ gx, PoolGeo g, std::int64_t P,
                                        std::int64_t L, std::int64_t total) {
  for (std::int64_t k = grid_start(); k < total; k += grid_step()) {
    const std::int64_t nc = k / P;
    gx[k] = nn::detail::pool_avg_adjoint_at(g, gy + nc * L, k - nc * P);
  }
}

/// Elements per input plane (P) and per output plane (L).
void plane_sizes(const PoolGeo& g, std::int64_t& P, std::int64_t& L) {
  P = L = 1;
  for (int d = 0; d < nn::detail::kPoolDims; ++d) {
    P *= g.in[d];
    L *= g.out[d];
  }
}

/// Calls launch(T{}) with T = double when `is_double`, else float.
template <class F>
void for_type(bool is_double, F&& launch) {
  if (is_double) launch(double{});
  else launch(float{});
}

}  // namespace

void max_pool(const void* x, void* y, std::int64_t* idx, std::int64_t NC, const PoolGeo& g, bool is_double,
              void* stream) {
  std::int64_t P, L;
  plane_sizes(g, P, L);
  const std::int64_t total = NC * L;
  if (total == 0) return;
  for_type(is_double, [&](auto t) {
    using T = decltype(t);
    launch_kernel(max_pool_kernel<T>, blocks_for(total), kThreads, static_cast<cudaStream_t>(stream),
                  static_cast<const T*>(x), static_cast<T*>(y), idx, g, P, L, total);
  });
  check_launch("max_pool");
}

void avg_pool(const void* x, void* y, std::int64_t NC, const PoolGeo& g, bool is_double, void* stream) {
  std::int64_t P, L;
  plane_sizes(g, P, L);
  const std::int64_t total = NC * L;
  if (total == 0) return;
  for_type(is_double, [&](auto t) {
    using T = decltype(t);
    launch_kernel(avg_pool_kernel<T>, blocks_for(total), kThreads, static_cast<cudaStream_t>(stream),
                  static_cast<const T*>(x), static_cast<T*>(y), g, P, L, total);
  });
  check_launch("avg_pool");
}

void avg_pool_adjoint(const void* gy, void* gx, std::int64_t NC, const PoolGeo& g, bool is_double, void* stream) {
  std::int64_t P, L;
  plane_sizes(g, P, L);
  const std::int64_t total = NC * P;
  if (total == 0) return;
  for_type(is_double, [&](auto t) {
    using T = decltype(t);
    launch_kernel(avg_pool_adjoint_kernel<T>, blocks_for(total), kThreads, static_cast<cudaStream_t>(stream),
                  static_cast<const T*>(gy), static_cast<T*>(gx), g, P, L, total);
  });
  check_launch("avg_pool_backward");
}

}  // namespace phasor::cuda
