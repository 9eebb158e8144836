// src/cuda/graph_values.cu - the one kernel a CUDA graph replay queues before the graph: it writes the
// host values the captured work reads from device memory (Note [host values in CUDA graphs] in graph.cpp).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/graph.hpp"
#include "cuda/launch.cuh"

namespace phasor::cuda {
namespace {

/// Up to kMaxWordWrites (address, value) pairs, passed by value (no host-to-device copy).
struct WordWrites {
  std::uint64_t* dst[detail::kMaxWordWrites];
  std::uint64_t value[detail::kMaxWordWrites];
  int count;
};

__global__ void write_words_kernel(const WordWrites w) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < w.count) *w.dst[i] = w.value[i];
}

}  // namespace

namespace detail {

void write_words(std::uint64_t* const* dst, const std::uint64_t* values, int count, void* stream) {
  if (count <= 0) return;
  if (count > kMaxWordWrites) throw Error("cuda.Graph.replay", "too many host values in one write");
  WordWrites w{};
  for (int i = 0; i < count; ++i) {
    w.dst[i] = dst[i];
    w.value[i] = values[i];
  }
  w.count = count;
  launch_kernel(write_words_kernel, 1, kMaxWordWrites, static_cast<cudaStream_t>(stream), w);
  check_launch("graph host values");
}

}  // namespace detail
}  // namespace phasor::cuda
