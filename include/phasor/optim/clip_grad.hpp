// phasor/optim/clip_grad.hpp - gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
#pragma once
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {
namespace optim {

/// Scales the gradients of `parameters` in place so that their joint norm is at most max_norm
/// (coefficient min(1, max_norm / (total + 1e-6)), as PyTorch). norm_type is any p > 0 or INFINITY;
/// complex gradients use |z|. Returns the total norm before clipping as a 0-d tensor of the gradients'
/// real dtype (0 when no parameter has a gradient). With error_if_nonfinite a NaN/inf total throws.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// clip_grad_norm_ for a single parameter.
Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient component into [-clip_value, clip_value] in place (complex: real and
/// imaginary parts separately); clip_value must be >= 0.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
/// clip_grad_value_ for a single parameter.
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace optim
}  // namespace phasor
