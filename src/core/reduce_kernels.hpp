// src/core/reduce_kernels.hpp - vectorized contiguous blocks of the reduction engine's float32 and float64
// sums and extrema (Note [vector reduction blocks] in reduce_kernels.cpp).
#pragma once
#include <cstdint>

namespace phasor::detail {

// Each kernel has a float32 and a float64 overload.

/// Sum of p[0..n) for n >= 2 lanes (32 lanes for float, 16 for double: lane k adds p[k], p[k + L], ...),
/// folded as a halving tree, then the tail in order: bitwise the reduction engine's scalar block.
float sum_block(const float* p, std::int64_t n);
double sum_block(const double* p, std::int64_t n);
/// out[k] = sum of p[k gap + i] over i < n for k < 4 (n a multiple of the lanes: 16 float, 8 double), each
/// block's lanes folded as a halving tree: reduce_streams' scalar loop.
void sum_blocks4(const float* p, std::int64_t gap, std::int64_t n, float* out);
void sum_blocks4(const double* p, std::int64_t gap, std::int64_t n, double* out);
/// max (is_max) or min of p[0..n) for n >= 1 with reduce_max's rule: the first NaN in memory order if any,
/// else the largest (smallest) value, +0 above -0.
float extremum_block(const float* p, std::int64_t n, bool is_max);
double extremum_block(const double* p, std::int64_t n, bool is_max);

/// How fold_rows4 combines.
enum class RowFold { Sum, Max, Min };
/// acc[j] = f(acc[j], f(f(r[0][j], r[1][j]), f(r[2][j], r[3][j]))) for j < w, f = + or reduce_max / reduce_min:
/// the outer-mode reduction's four-row step (reduce_rows_tile), bitwise as its scalar loop.
void fold_rows4(float* acc, const float* const* r, std::int64_t w, RowFold f);
void fold_rows4(double* acc, const double* const* r, std::int64_t w, RowFold f);

}  // namespace phasor::detail
