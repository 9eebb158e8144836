// src/nn/spectral_mix_kernels.hpp - spectral_mix's direct CPU kernel for operands whose modes are contiguous
// (Note [spectral_mix kernel] in spectral_mix.cpp).
#pragma once
#include <cstdint>

namespace phasor::nn::detail {

/// One tile of the contraction over complex numbers stored as (re, im) pairs of R (float or double):
/// out[b][k] = sum_{i < I} op(x[b xb + i xi][k]) op(w[i wi][k]) for b < nb, k < K, with op = conj where cx (cw).
/// Strides count complex elements; out's rows lie ob apart; every row's K modes are contiguous.
void mix_tile_c64(float* out, std::int64_t ob, const float* x, std::int64_t xb, std::int64_t xi, const float* w,
                  std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw);
/// mix_tile_c64 for complex128.
void mix_tile_c128(double* out, std::int64_t ob, const double* x, std::int64_t xb, std::int64_t xi, const double* w,
                   std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw);

}  // namespace phasor::nn::detail
