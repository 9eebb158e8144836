// src/core/cpu_features.hpp - how vector kernels pick their ISA: per-ISA clones (PHASOR_CLONES) or a run-time
// test (cpu_avx) for kernels dispatched by hand.
#pragma once

/// A vector kernel compiled once per ISA (AVX-512, AVX2, the baseline), the loader's ifunc picking one at load
/// time by CPU feature (Note [vector gelu]).
#define PHASOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/// A vector kernel whose results must be the baseline's bit for bit, compiled for AVX2 and the baseline: GCC
/// contracts a * b + c into an fma wherever the target has one, and AVX-512F has (EVEX fma); AVX2 without FMA
/// does not (Note [engine rows], Note [vector complex division]).
#define PHASOR_CLONES_EXACT __attribute__((target_clones("avx2", "default")))
/// A helper of such a kernel, inlined into every clone (an out-of-line call would be compiled for the baseline
/// only and keep the clone's loop scalar).
#define PHASOR_INLINE inline __attribute__((always_inline))

namespace phasor::detail {

/// Whether the CPU runs AVX and PHASOR_CPU_BASELINE=1 is not in the environment (read once). Kernels with an
/// AVX form and a portable one pick by it; ctest's *_baseline cases set the variable to check the portable
/// forms on any machine. (target_clones kernels pick by the loader's ifunc and ignore it.)
bool cpu_avx();

}  // namespace phasor::detail
