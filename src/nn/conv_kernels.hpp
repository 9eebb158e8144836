// src/nn/conv_kernels.hpp - the N-d unfold (im2col) / fold (col2im) primitives behind every convolution.
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// Geometry of a sliding window over the spatial dims (all vectors have one entry per spatial dim).
struct ConvGeometry {
  Shape in;        ///< input spatial sizes (before padding)
  Shape out;       ///< output spatial sizes (number of window positions per dim)
  Shape kernel;    ///< window sizes
  Shape stride;    ///< window steps
  Shape dilation;  ///< spacing of window taps
  Shape pad_lo;    ///< zero padding before the input (the padding after only limits `out`)
  std::int64_t kernel_numel() const;  ///< prod(kernel)
  std::int64_t out_numel() const;     ///< prod(out)
  std::int64_t in_numel() const;      ///< prod(in)
};

/// Columns (N, C*K, L) of x (N, C, *in) (Note [unfold layout]); differentiable (gradient: fold_op).
Tensor unfold_op(const Tensor& x, const ConvGeometry& g);
/// Adjoint of unfold_op: (N, C*K, L) -> (N, C, *in), summing overlaps; differentiable (gradient: unfold_op).
Tensor fold_op(const Tensor& cols, const ConvGeometry& g);

}  // namespace phasor::detail
