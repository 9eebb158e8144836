// src/cuda/sparse.cu - the CSR matrix product of phasor::sparse on the GPU (sparse_csr_mm's forward; Note [sparse
// as tensor ops] in src/sparse/sparse.cpp): one thread per output element, a running sum over its row's values.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/device_types.cuh"
#include "cuda/launch.cuh"
#include "cuda/sparse_ops.hpp"

namespace phasor::cuda {
namespace {

/// out[r, c] = sum over j in [crow[r], crow[r + 1]) of values[j] * b[col[j], c], for every r < m, c < k.
template <class T>
__global__ void csr_mm_kernel(const std::int64_t* crow, const std::int64_t* col, const T* values, const T* b, T* out,
                              std::int64_t m, std::int64_t k) {
  for (std::int64_t i = grid_start(); i < m * k; i += grid_step()) {
    const std::int64_t r = i / k, c = i - r * k;
    T acc = T(0);
    for (std::int64_t j = crow[r]; j < crow[r + 1]; ++j) acc += values[j] * b[col[j] * k + c];
    out[i] = acc;
  }
}

}  // namespace

bool csr_mm(Dtype dtype, const std::int64_t* crow, const std::int64_t* col, const void* values, const void* b, void* out,
            std::int64_t m, std::int64_t k, void* stream) {
  if (m * k == 0) return true;
  const bool done = with_type<kFloat>(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_kernel(csr_mm_kernel<T>, blocks_for(m * k), kThreads, static_cast<cudaStream_t>(stream), crow, col,
                  static_cast<const T*>(values), static_cast<const T*>(b), static_cast<T*>(out), m, k);
  });
  if (done) check_launch("sparse_csr_mm");
  return done;
}

}  // namespace phasor::cuda
