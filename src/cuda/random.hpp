// src/cuda/random.hpp - counter-based random fills on the GPU (kernels in random.cu), drawing exactly
// the numbers the CPU draws for the same counters (Note [counter-based random numbers] in
// core/philox.hpp). Plain C++, no CUDA types.
#pragma once
#include <cstdint>

#include "phasor/dtype.hpp"

namespace phasor::cuda {

/// What a random fill draws.
enum class RandomKind {
  uniform,  ///< [0, 1)
  normal,   ///< N(0, scale^2)
  integer   ///< low + [0, range), into int64
};

/// The Philox counters a fill draws from. Eagerly: `seed` and the first counter `start`, read on the host.
/// Inside a CUDA graph capture (Note [random numbers in CUDA graphs] in graph.cpp): `state`, the device
/// address of the (seed, base) pair of uint64 each replay writes, the counters starting at base + start.
struct Counters {
  std::uint64_t seed = 0;       ///< the seed (when state is null)
  std::uint64_t start = 0;      ///< the first counter (with state: its offset from the replay's base)
  const void* state = nullptr;  ///< device memory holding (seed, base), or null
};

/// Writes n values to contiguous device memory `out` of dtype `real` (Float32/Float64; Int64 for
/// integer) from ceil(n / 2) consecutive counters of `c`, on `stream` (a cudaStream_t).
void random_fill(RandomKind kind, Dtype real, void* out, std::int64_t n, const Counters& c, double scale,
                 std::int64_t low, std::uint64_t range, void* stream);

}  // namespace phasor::cuda
