// src/nn/spectral_dft.hpp - the last-axis half of the spectral convolution's truncated
// transforms as matrix products (Note [truncated DFT] in spectral_dft.cpp).
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::nn::detail {

/// Whether keeping m of the n/2+1 half-spectrum bins is faster as a matrix product than an FFT.
bool use_dft_matrix(std::int64_t n, std::int64_t m);
/// Bins [0, m) of the real DFT along the last dim of the real tensor x (..., n), times scale, and times
/// `interior` at the bins other than DC and Nyquist.
Tensor rdft_head(const Tensor& x, std::int64_t m, double scale, double interior = 1.0);
/// The n-point inverse real DFT along the last dim of the half spectrum y (..., m), zero beyond
/// bin m (imaginary parts of the DC and Nyquist bins ignored, as c2r does), times scale, its bins
/// other than DC and Nyquist first weighted by `interior`.
Tensor irdft_head(const Tensor& y, std::int64_t n, double scale, double interior = 1.0);

/// The kept frequencies (0..m-1, -m..-1; 2m <= n) of the unscaled c2c DFT of the complex x along `dim`
/// (size n there; 2m in the result), or with `inverse` the unscaled inverse DFT of such modes (size 2m at
/// `dim`) to n points: one complex matrix applied along the dim.
Tensor cdft_along(const Tensor& x, std::int64_t dim, std::int64_t m, std::int64_t n, bool inverse);

}  // namespace phasor::nn::detail
