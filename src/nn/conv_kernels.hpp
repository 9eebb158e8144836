// src/nn/conv_kernels.hpp - the N-d unfold (im2col) / fold (col2im) primitives behind every convolution.
#pragma once
#include <cstdint>

#include "core/small_vec.hpp"
#include "phasor/tensor.hpp"

namespace phasor::detail {

/// One entry per spatial dim, inline for up to 3 (conv1d-3d): every convolution call copies its geometry
/// (into the op and the backward closures), which then allocates nothing.
using SpatialDims = SmallVec<std::int64_t, 3>;

/// Geometry of a sliding window over the spatial dims (all lists have one entry per spatial dim).
struct ConvGeometry {
  SpatialDims in;        ///< input spatial sizes (before padding)
  SpatialDims out;       ///< output spatial sizes (number of window positions per dim)
  SpatialDims kernel;    ///< window sizes
  SpatialDims stride;    ///< window steps
  SpatialDims dilation;  ///< spacing of window taps
  SpatialDims pad_lo;    ///< zero padding before the input (the padding after only limits `out`)
  std::int64_t kernel_numel() const;  ///< prod(kernel)
  std::int64_t out_numel() const;     ///< prod(out)
  std::int64_t in_numel() const;      ///< prod(in)
};

/// Columns (N, C*K, L) of x (N, C, *in) (Note [unfold layout]); differentiable (gradient: fold_op).
Tensor unfold_op(const Tensor& x, const ConvGeometry& g);
/// Adjoint of unfold_op: (N, C*K, L) -> (N, C, *in), summing overlaps; differentiable (gradient: unfold_op).
Tensor fold_op(const Tensor& cols, const ConvGeometry& g);

/// A convolution with zero padding (inside the geometry) and channel groups.
struct ConvSpec {
  ConvGeometry geo;         ///< window geometry (pad_lo = zero padding)
  std::int64_t groups = 1;  ///< channel groups
};

/// out (N, O, L) = W U(x_n) for x (N, C, *in), w (O, C/groups, *k) (Note [convolution primitives]).
Tensor conv_op(const Tensor& x, const Tensor& w, const ConvSpec& s);
/// fold(W^T g_n): (N, O, L) -> (N, in_channels, *in), the adjoint of conv_op in x.
Tensor conv_input_op(const Tensor& g, const Tensor& w, const ConvSpec& s, std::int64_t in_channels);
/// sum_n g_n U(x_n)^T reshaped to w_shape, the adjoint of conv_op in w.
Tensor conv_weight_op(const Tensor& x, const Tensor& g, const ConvSpec& s, const Shape& w_shape);

}  // namespace phasor::detail
