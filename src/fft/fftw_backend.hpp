// src/fft/fftw_backend.hpp - runs one strided transform through FFTW's guru64 interface.
#pragma once
#include <cstdint>
#include <vector>

#include "fft/plan_cache.hpp"

namespace phasor::fft::detail {

/// Runs the transform described by key.kind/single/forward/dims/howmany on `in` -> `out`
/// (strides in elements of each array's own type; for r2c/c2r the last transform dim carries
/// the real length, the complex side has n/2+1). Fills in the rest of the key (alignment,
/// flags, threads), takes the plan from the cache or makes it under the planner lock, and
/// executes unlocked. c2r overwrites `in` unless key.preserve_input. No normalization is applied. Every n must be >= 1.
void run_fftw(PlanKey& key, void* in, void* out);

/// Fills in the rest of `key` (alignment, flags, threads: `threads` if > 0, else by size) and
/// returns its plan, cached or made now; `keep` holds it when the caller must keep it alive, and
/// always when `share` (the caller wants to hold on to it).
const Plan* acquire_plan(PlanKey& key, void* in, void* out, PlanPtr& keep, int threads = 0, bool share = false);
/// Runs `plan` (made for `kind`) on arrays of the layout and alignment it was made for; thread-safe.
void execute_plan(const Plan* plan, Kind kind, void* in, void* out);
/// True while the planner effort is Effort::estimate.
bool effort_is_estimate();

/// Transforms of at least this many points in total use FFTW's threads (Note [fft threads]).
inline constexpr std::int64_t kThreadsMinWork = std::int64_t(1) << 18;
/// The planner effort (an Effort value), set by set_planner_effort.
extern std::atomic<int> g_effort;
/// FFTW threads for a transform at or above kThreadsMinWork points.
int fftw_threads_for_large();
/// FFTW threads used for a transform of `work` points in total (1 below the threshold).
inline int fftw_threads_for(std::int64_t work) { return work < kThreadsMinWork ? 1 : fftw_threads_for_large(); }

}  // namespace phasor::fft::detail
