// phasor/nn/conv.hpp - functional layers (torch.nn.functional names and argument order):
// linear, conv1d/2d/3d, conv_transpose1d/2d/3d, unfold/fold (im2col / col2im) and dropout. Layout is NC* (channels first).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "phasor/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

/// How a convolution fills the border: zeros, or pad() in reflect / replicate / circular mode.
enum class PaddingMode { zeros, reflect, replicate, circular };

/// Name of a padding mode as printed ("zeros", "circular", ...).
const char* padding_mode_name(PaddingMode mode);

/// Sizes per spatial dim: one int used for every dim, or one int per dim (torch's ExpandingArray).
struct IntList {
  Shape values;  ///< one entry (broadcast to every dim) or one per dim; empty: the op's default
  /// No sizes: the op's default where it has one (pooling's stride: the kernel size).
  IntList() = default;
  /// The same size for every dim.
  IntList(int v) : values{v} {}
  /// The same size for every dim.
  IntList(long v) : values{static_cast<std::int64_t>(v)} {}
  /// The same size for every dim.
  IntList(long long v) : values{static_cast<std::int64_t>(v)} {}
  /// One size per dim.
  IntList(std::initializer_list<std::int64_t> v) : values(v) {}
  /// One size per dim.
  IntList(const Shape& v) : values(v) {}
  /// The sizes for `ndim` dims; throws naming `op` and `what` when the count is neither 1 nor ndim.
  Shape expand(std::int64_t ndim, const char* op, const char* what) const;
};

/// Convolution padding: sizes per spatial dim (like IntList), or "same" / "valid".
struct Padding {
  /// The kinds of padding.
  enum class Kind { sizes, same, valid };
  Kind kind = Kind::sizes;  ///< which kind
  Shape values{0};          ///< the sizes when kind == sizes (one entry, or one per dim)
  /// The same padding on both sides of every dim.
  Padding(int v) : values{v} {}
  /// The same padding on both sides of every dim.
  Padding(long v) : values{static_cast<std::int64_t>(v)} {}
  /// The same padding on both sides of every dim.
  Padding(long long v) : values{static_cast<std::int64_t>(v)} {}
  /// Padding per dim (both sides).
  Padding(std::initializer_list<std::int64_t> v) : values(v) {}
  /// Padding per dim (both sides).
  Padding(const Shape& v) : values(v) {}
  /// Sizes as an IntList.
  Padding(const IntList& v) : values(v.values) {}
  /// "same" (output spatial size = input size; stride 1 only) or "valid" (no padding).
  Padding(const char* s) : Padding(std::string(s)) {}
  /// "same" or "valid".
  Padding(const std::string& s);
  /// Text form: "same", "valid" or "(1, 1)".
  std::string str(std::int64_t ndim) const;
};

namespace functional {

/// y = x @ w^T + b with x (..., in), w (out, in), b (out) optional (torch.nn.functional.linear).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

/// 1-D convolution (cross-correlation) of x (N, C_in, L) or unbatched (C_in, L) with
/// w (C_out, C_in / groups, k) and optional bias (C_out).
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
              const Padding& padding = 0, const IntList& dilation = 1, std::int64_t groups = 1,
              PaddingMode padding_mode = PaddingMode::zeros);
/// 2-D convolution of x (N, C_in, H, W) or (C_in, H, W) with w (C_out, C_in / groups, kh, kw).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
              const Padding& padding = 0, const IntList& dilation = 1, std::int64_t groups = 1,
              PaddingMode padding_mode = PaddingMode::zeros);
/// 3-D convolution of x (N, C_in, D, H, W) or (C_in, D, H, W) with w (C_out, C_in / groups, kd, kh, kw).
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
              const Padding& padding = 0, const IntList& dilation = 1, std::int64_t groups = 1,
              PaddingMode padding_mode = PaddingMode::zeros);
/// Convolution over weight.dim() - 2 spatial dims (any number); `op` names it in errors.
Tensor conv_nd(const Tensor& x, const Tensor& weight, const Tensor& bias, const IntList& stride,
               const Padding& padding, const IntList& dilation, std::int64_t groups, PaddingMode padding_mode,
               const char* op = "conv");

/// 1-D transposed convolution (the adjoint of conv1d in its input) of x (N, C_in, L) or (C_in, L) with
/// w (C_in, C_out / groups, k) and optional bias (C_out): output length (L - 1) stride - 2 padding +
/// dilation (k - 1) + output_padding + 1 (torch.nn.functional.conv_transpose1d; output_padding must be
/// smaller than the stride or the dilation).
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
                        const IntList& padding = 0, const IntList& output_padding = 0, std::int64_t groups = 1,
                        const IntList& dilation = 1);
/// 2-D transposed convolution of x (N, C_in, H, W) or (C_in, H, W) with w (C_in, C_out / groups, kh, kw).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
                        const IntList& padding = 0, const IntList& output_padding = 0, std::int64_t groups = 1,
                        const IntList& dilation = 1);
/// 3-D transposed convolution of x (N, C_in, D, H, W) or (C_in, D, H, W) with w (C_in, C_out / groups, kd, kh, kw).
Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = 1,
                        const IntList& padding = 0, const IntList& output_padding = 0, std::int64_t groups = 1,
                        const IntList& dilation = 1);
/// Transposed convolution over weight.dim() - 2 spatial dims (any number); `op` names it in errors.
Tensor conv_transpose_nd(const Tensor& x, const Tensor& weight, const Tensor& bias, const IntList& stride,
                         const IntList& padding, const IntList& output_padding, std::int64_t groups,
                         const IntList& dilation, const char* op = "conv_transpose");

/// Sliding blocks of x (N, C, H, W) or (C, H, W) as columns (N, C*kh*kw, L) (torch.nn.functional.unfold).
Tensor unfold(const Tensor& x, const IntList& kernel_size, const IntList& dilation = 1, const IntList& padding = 0,
              const IntList& stride = 1);
/// Sums columns (N, C*kh*kw, L) or (C*kh*kw, L) back into an image of `output_size` (torch.nn.functional.fold);
/// the adjoint of unfold.
Tensor fold(const Tensor& x, const IntList& output_size, const IntList& kernel_size, const IntList& dilation = 1,
            const IntList& padding = 0, const IntList& stride = 1);
/// unfold over kernel_size.size() spatial dims: (N, C, *spatial) or (C, *spatial) -> (N, C*prod(k), L).
Tensor unfold_nd(const Tensor& x, const Shape& kernel_size, const IntList& dilation = 1, const IntList& padding = 0,
                 const IntList& stride = 1);
/// fold over output_size.size() spatial dims: (N, C*prod(k), L) or (C*prod(k), L) -> (N, C, *output_size).
Tensor fold_nd(const Tensor& x, const Shape& output_size, const Shape& kernel_size, const IntList& dilation = 1,
               const IntList& padding = 0, const IntList& stride = 1);

/// Inverted dropout: zeros each element with probability p and scales the rest by 1 / (1 - p)
/// when `training` (p == 1 gives zeros); the identity otherwise. Uses `gen` or the default generator.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);

}  // namespace functional
}  // namespace phasor::nn
