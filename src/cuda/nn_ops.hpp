// src/cuda/nn_ops.hpp - the nn layer's CUDA work on tensors (convolution unfold/fold, the spectral
// mode mix, fused optimizer updates), called by the CPU launchers in src/nn once they have decided
// shapes, dtypes and errors. CUDA-free: every build has these; a CPU-only build's throw.
#pragma once
#include "nn/conv_kernels.hpp"
#include "nn/optim/update_rules.hpp"
#include "phasor/tensor.hpp"

namespace phasor::cuda::detail {

/// Columns (N, C*K, L) of the CUDA tensor x (N, C, *in) (Note [unfold layout]); at most 3 spatial dims.
Tensor unfold(const Tensor& x, const ::phasor::detail::ConvGeometry& g, const char* op);
/// Adjoint of unfold: cols (N, C*K, L) -> (N, C, *g.in), overlaps summed.
Tensor fold(const Tensor& cols, const ::phasor::detail::ConvGeometry& g, const char* op);
/// out (B, O, *M) = sum_i x[b,i,*k] w[i,o,*k] for complex CUDA tensors x (B, I, *M), w (I, O, *M) of
/// one dtype (any strides).
Tensor spectral_mix(const Tensor& x, const Tensor& w);
/// One fused SGD update of the contiguous CUDA parameter storage p (in place) and its momentum
/// buffer (undefined without momentum) from the contiguous gradient g.
void sgd_step(const Tensor& p, const Tensor& g, const Tensor& buf, const optim::detail::SgdCoeffs<double>& c, bool wd,
              bool momentum, bool nesterov, bool first);
/// One fused Adam/AdamW update of the contiguous CUDA tensors p, m, v, vmax (undefined without amsgrad).
void adam_step(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& vmax,
               const optim::detail::AdamCoeffs<double>& c, bool amsgrad, bool l2, bool lerp_low);

}  // namespace phasor::cuda::detail
