// src/core/rounding_kernels.hpp - contiguous float32/float64 loops of floor, ceil, round and trunc (Note
// [rounding without libm] in rounding_kernels.cpp).
#pragma once
#include <cstdint>

namespace phasor::detail {

/// Which integer a rounding op picks.
enum class RoundMode { Floor, Ceil, HalfEven, Trunc };

/// y[i] = x[i] rounded by `mode` for i < n (infinities and NaN as they are; the result keeps x's sign); float32
/// and float64.
void round_rows(const float* x, float* y, std::int64_t n, RoundMode mode);
void round_rows(const double* x, double* y, std::int64_t n, RoundMode mode);

}  // namespace phasor::detail
