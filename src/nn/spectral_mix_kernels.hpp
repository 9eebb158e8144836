// src/nn/spectral_mix_kernels.hpp - spectral_mix's direct CPU kernel for operands whose modes are contiguous
// (Note [spectral_mix kernel] in spectral_mix.cpp), and the layout test it and the CUDA kernel share.
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::nn::detail {

/// Whether t's modes (dims 2...) lie one element apart in the order of their flat index (row-major with unit
/// stride), as the direct CPU kernel and the CUDA mix kernel read them.
bool modes_contiguous(const Tensor& t);

/// One tile of the contraction over complex numbers stored as (re, im) pairs of R (float or double):
/// out[b][k] = sum_{i < I} op(x[b xb + i xi][k]) op(w[i wi][k]) for b < nb, k < K, with op = conj where cx (cw).
/// Strides count complex elements; out's rows lie ob apart; every row's K modes are contiguous. complex64 and
/// complex128.
void mix_tile(float* out, std::int64_t ob, const float* x, std::int64_t xb, std::int64_t xi, const float* w,
              std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw);
void mix_tile(double* out, std::int64_t ob, const double* x, std::int64_t xb, std::int64_t xi, const double* w,
              std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw);

}  // namespace phasor::nn::detail
