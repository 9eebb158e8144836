// src/fft/primitives.hpp - the three differentiable FFT primitives every public transform
// lowers to (c2c, r2c, c2r), plus the zero-pad/crop and roll helpers of the front end.
#pragma once
#include <cstdint>
#include <vector>

#include "phasor/fft.hpp"
#include "phasor/tensor.hpp"

namespace phasor::fft::detail {

/// Scale a transform in the given direction applies under `norm`, for `n` points in total.
double norm_scale(Norm norm, std::int64_t n, bool forward);
/// The norm whose scale in the opposite direction equals `norm`'s (backward <-> forward).
Norm swap_norm(Norm norm);

/// Complex-to-complex DFT over `dims` (wrapped, distinct, non-empty sizes); `x` complex.
Tensor c2c(const Tensor& x, const std::vector<std::int64_t>& dims, bool forward, Norm norm);
/// Forward real-to-complex DFT over `dims`; the last of `dims` keeps n/2+1 bins. `x` real.
Tensor r2c(const Tensor& x, const std::vector<std::int64_t>& dims, Norm norm);
/// Backward complex-to-real DFT over `dims`; `x` complex with size last_n/2+1 along the last
/// of `dims`, whose output length is `last_n`. Imaginary parts of the DC (and, for even
/// last_n, Nyquist) bins of the last dim are ignored, as by FFTW.
Tensor c2r(const Tensor& x, const std::vector<std::int64_t>& dims, Norm norm, std::int64_t last_n);

/// Crops (a view) or zero-pads (a copy) `x` to `sizes` along `dims`; differentiable.
Tensor resize(const Tensor& x, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& sizes);
/// Rolls `x` by `shifts` along `dims` (element i moves to i + shift mod n); differentiable.
Tensor roll(const Tensor& x, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& shifts);

}  // namespace phasor::fft::detail
