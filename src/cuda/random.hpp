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

/// Writes n values to contiguous device memory `out` of dtype `real` (Float32/Float64; Int64 for
/// integer) from counters [start, start + ceil(n / 2)) under `seed`, on `stream` (a cudaStream_t).
void random_fill(RandomKind kind, Dtype real, void* out, std::int64_t n, std::uint64_t seed, std::uint64_t start,
                 double scale, std::int64_t low, std::uint64_t range, void* stream);

}  // namespace phasor::cuda
