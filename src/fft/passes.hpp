// src/fft/passes.hpp - one-dimensional transform passes over contiguous arrays, staged in
// cache-sized blocks when the transformed dim is not the innermost one (Note [blocked passes]).
#pragma once
#include <cstdint>

#include "fft/plan_cache.hpp"

namespace phasor::fft::detail {

/// Runs a rank-1 `kind` transform of logical length `n` along the middle dim of contiguous
/// arrays src (outer, n_src, inner) -> dst (outer, n_dst, inner), where n_src/n_dst are n or
/// n/2+1 by kind. src == dst is allowed for c2c; otherwise src is only read. No normalization.
void line_pass(Kind kind, bool single, bool forward, std::int64_t n, std::int64_t outer, std::int64_t inner, void* src,
               void* dst);

}  // namespace phasor::fft::detail
