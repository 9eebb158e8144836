// src/fft/fftw_backend.hpp - runs one strided transform through FFTW's guru64 interface.
#pragma once
#include <cstdint>
#include <vector>

#include "fft/plan_cache.hpp"

namespace phasor::fft::detail {

/// Runs a `kind` transform on `in` -> `out` (strides in elements of each array's own type;
/// for r2c/c2r the last transform dim carries the real length, the complex side has n/2+1).
/// Plans are taken from the cache or made under the planner lock; execution runs unlocked.
/// c2r overwrites `in`. No normalization is applied. Every n must be >= 1.
void run_fftw(Kind kind, bool single, bool forward, const std::vector<IoDim>& dims, const std::vector<IoDim>& howmany,
              void* in, void* out);

/// FFTW threads used for a transform of `work` points in total (1 below the threshold).
int fftw_threads_for(std::int64_t work);

}  // namespace phasor::fft::detail
