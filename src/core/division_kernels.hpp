// src/core/division_kernels.hpp - contiguous float32 loops of fmod and remainder (Note [vector fmod] in
// division_kernels.cpp).
#pragma once
#include <cstdint>

namespace phasor::detail {

/// y[i] = fmod(a[i], b[i]) for i < n: fmod_of's values (core/real_binary_rules.hpp), bit for bit.
void fmod_f32(const float* a, const float* b, float* y, std::int64_t n);
/// y[i] = a[i] - floor(a[i] / b[i]) * b[i] for i < n: remainder_of's values, bit for bit.
void remainder_f32(const float* a, const float* b, float* y, std::int64_t n);

}  // namespace phasor::detail
