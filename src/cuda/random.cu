// src/cuda/random.cu - the random fills of random.hpp: one thread per Philox counter, writing the
// counter's two values with the CPU's own maps (core/philox.hpp); the counters come from the host, or in a
// captured CUDA graph from device memory each replay writes.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/philox.hpp"
#include "cuda/launch.cuh"
#include "cuda/random.hpp"

namespace phasor::cuda {
namespace {

using ::phasor::detail::PhiloxBlock;

template <RandomKind K, class T>
__global__ void random_kernel(T* out, std::int64_t n, std::uint64_t seed, std::uint64_t start,
                              const std::uint64_t* state, double scale, std::int64_t low, std::uint64_t range) {
  if (state) {  // a graph replay's counters (Counters::state)
    seed = state[0];
    start += state[1];
  }
  const std::int64_t blocks = (n + 1) / 2;
  for (std::int64_t i = grid_start(); i < blocks; i += grid_step()) {
    const PhiloxBlock b = ::phasor::detail::philox(seed, start + static_cast<std::uint64_t>(i));
    T v0, v1;
    if constexpr (K == RandomKind::uniform) {
      if constexpr (std::is_same_v<T, double>) {
        v0 = ::phasor::detail::u53(b.v[0], b.v[1]);
        v1 = ::phasor::detail::u53(b.v[2], b.v[3]);
      } else {
        v0 = ::phasor::detail::u24(b.v[0]);
        v1 = ::phasor::detail::u24(b.v[2]);
      }
    } else if constexpr (K == RandomKind::normal) {
      double d0, d1;
      ::phasor::detail::normal_pair(b, scale, d0, d1);
      v0 = static_cast<T>(d0);
      v1 = static_cast<T>(d1);
    } else {
      v0 = ::phasor::detail::draw_below(b.v[0], b.v[1], low, range);
      v1 = ::phasor::detail::draw_below(b.v[2], b.v[3], low, range);
    }
    out[2 * i] = v0;
    if (2 * i + 1 < n) out[2 * i + 1] = v1;
  }
}

template <RandomKind K, class T>
void launch(void* out, std::int64_t n, const Counters& c, double scale, std::int64_t low, std::uint64_t range,
            cudaStream_t s) {
  launch_kernel(random_kernel<K, T>, blocks_for((n + 1) / 2), kThreads, s, static_cast<T*>(out), n, c.seed, c.start,
                static_cast<const std::uint64_t*>(c.state), scale, low, range);
}

}  // namespace

void random_fill(RandomKind kind, Dtype real, void* out, std::int64_t n, const Counters& c, double scale,
                 std::int64_t low, std::uint64_t range, void* stream) {
  if (n <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const bool f64 = real == Dtype::Float64;
  switch (kind) {
    case RandomKind::uniform:
      f64 ? launch<RandomKind::uniform, double>(out, n, c, scale, low, range, s)
          : launch<RandomKind::uniform, float>(out, n, c, scale, low, range, s);
      break;
    case RandomKind::normal:
      f64 ? launch<RandomKind::normal, double>(out, n, c, scale, low, range, s)
          : launch<RandomKind::normal, float>(out, n, c, scale, low, range, s);
      break;
    case RandomKind::integer: launch<RandomKind::integer, std::int64_t>(out, n, c, scale, low, range, s); break;
  }
  check_launch("random");
}

}  // namespace phasor::cuda
