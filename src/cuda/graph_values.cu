// src/cuda/graph_values.cu - the kernel a CUDA graph replay queues before the graph, which writes the
// host values the captured work reads from device memory (Note [host values in CUDA graphs] in graph.cpp),
// the flag check captured work queues (Note [device checks in CUDA graphs]), and the copy of a replay's
// failed check into the deferred ones (Note [deferred device checks]).
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

/// queue_flag_check's one thread.
__global__ void flag_check_kernel(const bool* bad, const std::uint64_t* a, const std::uint64_t* b, std::uint64_t id,
                                  std::uint64_t* words) {
  if (words[0] != 0 || !*bad) return;  // an earlier check of this replay failed: its report stands
  words[0] = id;
  words[1] = a ? *a : 0;
  words[2] = b ? *b : 0;
}

/// queue_check_transfer's one thread.
__global__ void check_transfer_kernel(const std::uint64_t* from, std::uint64_t* to, std::uint64_t first) {
  if (to[0] != 0 || from[0] == 0) return;  // an earlier deferred failure stands, or the replay's checks passed
  to[0] = first + from[0] - 1;
  to[1] = from[1];
  to[2] = from[2];
}

}  // namespace

namespace detail {

void queue_check_transfer(const std::uint64_t* from, std::uint64_t* to, std::uint64_t first, void* stream) {
  launch_kernel(check_transfer_kernel, 1, 1, static_cast<cudaStream_t>(stream), from, to, first);
  check_launch("deferred device check");
}

void queue_flag_check(const bool* bad, const std::uint64_t* a, const std::uint64_t* b, std::uint64_t id,
                      std::uint64_t* words, void* stream) {
  launch_kernel(flag_check_kernel, 1, 1, static_cast<cudaStream_t>(stream), bad, a, b, id, words);
  check_launch("device check");
}

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
