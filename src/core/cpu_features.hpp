// src/core/cpu_features.hpp - the CPU features that kernels dispatched by hand test at run time.
#pragma once

namespace phasor::detail {

/// Whether the CPU runs AVX and PHASOR_CPU_BASELINE=1 is not in the environment (read once). Kernels with an
/// AVX form and a portable one pick by it; ctest's *_baseline cases set the variable to check the portable
/// forms on any machine. (target_clones kernels pick by the loader's ifunc and ignore it.)
bool cpu_avx();

}  // namespace phasor::detail
