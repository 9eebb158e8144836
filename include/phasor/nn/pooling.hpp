// phasor/nn/pooling.hpp - pooling (torch.nn.functional names and argument order, and the modules): max, average,
// adaptive, power-average pooling and max unpooling over 1-3 spatial dims of (N, C, *spatial) or unbatched
// (C, *spatial) float32/float64 inputs, differentiable, on every device.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "phasor/nn/conv.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// Max over windows of the last dim of x (N, C, L) or (C, L) (torch.nn.functional.max_pool1d); the stride
/// defaults to kernel_size, padding (implicit -inf, at most half the dilated kernel) on both sides.
Tensor max_pool1d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, const IntList& dilation = 1, bool ceil_mode = false);
/// Max over windows of the last two dims of x (N, C, H, W) or (C, H, W) (torch.nn.functional.max_pool2d).
Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, const IntList& dilation = 1, bool ceil_mode = false);
/// Max over windows of the last three dims of x (N, C, D, H, W) or (C, D, H, W) (torch.nn.functional.max_pool3d).
Tensor max_pool3d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, const IntList& dilation = 1, bool ceil_mode = false);
/// max_pool1d and, per output, the int64 index of its maximum in the flattened input plane (for max_unpool1d).
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const IntList& kernel_size,
                                                   const IntList& stride = {},
                                                   const IntList& padding = 0, const IntList& dilation = 1,
                                                   bool ceil_mode = false);
/// max_pool2d and the flat in-plane index of each maximum (h * W + w).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntList& kernel_size,
                                                   const IntList& stride = {},
                                                   const IntList& padding = 0, const IntList& dilation = 1,
                                                   bool ceil_mode = false);
/// max_pool3d and the flat in-plane index of each maximum ((d * H + h) * W + w).
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const IntList& kernel_size,
                                                   const IntList& stride = {},
                                                   const IntList& padding = 0, const IntList& dilation = 1,
                                                   bool ceil_mode = false);

/// Mean over windows of the last dim (torch.nn.functional.avg_pool1d): zero padding (at most half the kernel)
/// counted in the divisor when count_include_pad.
Tensor avg_pool1d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, bool ceil_mode = false, bool count_include_pad = true);
/// Mean over windows of the last two dims (torch.nn.functional.avg_pool2d); divisor_override replaces the divisor.
Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
/// Mean over windows of the last three dims (torch.nn.functional.avg_pool3d).
Tensor avg_pool3d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);

/// Mean over output_size windows [floor(i L / n), ceil((i + 1) L / n)) of the last dim
/// (torch.nn.functional.adaptive_avg_pool1d); an output size of -1 keeps the input's size.
Tensor adaptive_avg_pool1d(const Tensor& x, const IntList& output_size);
/// Adaptive mean over the last two dims (torch.nn.functional.adaptive_avg_pool2d).
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);
/// Adaptive mean over the last three dims (torch.nn.functional.adaptive_avg_pool3d).
Tensor adaptive_avg_pool3d(const Tensor& x, const IntList& output_size);
/// Max over adaptive windows of the last dim (torch.nn.functional.adaptive_max_pool1d).
Tensor adaptive_max_pool1d(const Tensor& x, const IntList& output_size);
/// Max over adaptive windows of the last two dims (torch.nn.functional.adaptive_max_pool2d).
Tensor adaptive_max_pool2d(const Tensor& x, const IntList& output_size);
/// Max over adaptive windows of the last three dims (torch.nn.functional.adaptive_max_pool3d).
Tensor adaptive_max_pool3d(const Tensor& x, const IntList& output_size);
/// adaptive_max_pool1d and the flat in-plane index of each maximum.
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x, const IntList& output_size);
/// adaptive_max_pool2d and the flat in-plane index of each maximum.
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, const IntList& output_size);
/// adaptive_max_pool3d and the flat in-plane index of each maximum.
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x, const IntList& output_size);

/// Power-average pooling (sum over the window of x^p)^(1/p) of the last dim (torch.nn.functional.lp_pool1d).
Tensor lp_pool1d(const Tensor& x, double norm_type, const IntList& kernel_size,
                 const IntList& stride = {}, bool ceil_mode = false);
/// Power-average pooling of the last two dims (torch.nn.functional.lp_pool2d).
Tensor lp_pool2d(const Tensor& x, double norm_type, const IntList& kernel_size,
                 const IntList& stride = {}, bool ceil_mode = false);
/// Power-average pooling of the last three dims (torch.nn.functional.lp_pool3d).
Tensor lp_pool3d(const Tensor& x, double norm_type, const IntList& kernel_size,
                 const IntList& stride = {}, bool ceil_mode = false);

/// The partial inverse of max_pool1d: x placed at `indices` (max_pool1d_with_indices') of zero planes of
/// output_size (spatial, or with the leading (N, C) dims; default (L - 1) stride - 2 padding + kernel_size).
Tensor max_unpool1d(const Tensor& x, const Tensor& indices, const IntList& kernel_size,
                    const IntList& stride = {}, const IntList& padding = 0,
                    std::optional<Shape> output_size = std::nullopt);
/// The partial inverse of max_pool2d (torch.nn.functional.max_unpool2d).
Tensor max_unpool2d(const Tensor& x, const Tensor& indices, const IntList& kernel_size,
                    const IntList& stride = {}, const IntList& padding = 0,
                    std::optional<Shape> output_size = std::nullopt);
/// The partial inverse of max_pool3d (torch.nn.functional.max_unpool3d).
Tensor max_unpool3d(const Tensor& x, const Tensor& indices, const IntList& kernel_size,
                    const IntList& stride = {}, const IntList& padding = 0,
                    std::optional<Shape> output_size = std::nullopt);

}  // namespace functional

/// Max pooling over `ndim` spatial dims (base of MaxPool1d/2d/3d).
class MaxPoolNd : public Module {
 public:
  /// Checks the arguments as the functional form does; `name` is the class name.
  MaxPoolNd(std::string name, std::int64_t ndim, IntList kernel_size, IntList stride, IntList padding,
            IntList dilation, bool ceil_mode);
  /// The pooled x.
  Tensor forward(const Tensor& x) override;
  /// The pooled x and the flat in-plane index of each maximum (torch's return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x);
  /// "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false".
  std::string extra_repr() const override;
  std::int64_t ndim;              ///< spatial dims
  IntList kernel_size;            ///< window size
  IntList stride;  ///< window step (kernel_size when empty)
  IntList padding;                ///< implicit -inf padding on both sides
  IntList dilation;               ///< tap spacing
  bool ceil_mode;                 ///< round the output size up
};
/// Max pooling over (N, C, L).
class MaxPool1d : public MaxPoolNd {
 public:
  /// See functional::max_pool1d.
  explicit MaxPool1d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     IntList dilation = 1, bool ceil_mode = false)
      : MaxPoolNd("MaxPool1d", 1, std::move(kernel_size), std::move(stride), std::move(padding), std::move(dilation),
                  ceil_mode) {}
};
/// Max pooling over (N, C, H, W).
class MaxPool2d : public MaxPoolNd {
 public:
  /// See functional::max_pool2d.
  explicit MaxPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     IntList dilation = 1, bool ceil_mode = false)
      : MaxPoolNd("MaxPool2d", 2, std::move(kernel_size), std::move(stride), std::move(padding), std::move(dilation),
                  ceil_mode) {}
};
/// Max pooling over (N, C, D, H, W).
class MaxPool3d : public MaxPoolNd {
 public:
  /// See functional::max_pool3d.
  explicit MaxPool3d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     IntList dilation = 1, bool ceil_mode = false)
      : MaxPoolNd("MaxPool3d", 3, std::move(kernel_size), std::move(stride), std::move(padding), std::move(dilation),
                  ceil_mode) {}
};

/// Average pooling over `ndim` spatial dims (base of AvgPool1d/2d/3d).
class AvgPoolNd : public Module {
 public:
  /// Checks the arguments as the functional form does; `name` is the class name.
  AvgPoolNd(std::string name, std::int64_t ndim, IntList kernel_size, IntList stride, IntList padding,
            bool ceil_mode, bool count_include_pad, std::optional<std::int64_t> divisor_override);
  /// The pooled x.
  Tensor forward(const Tensor& x) override;
  /// "kernel_size=2, stride=2, padding=0".
  std::string extra_repr() const override;
  std::int64_t ndim;                                ///< spatial dims
  IntList kernel_size;                              ///< window size
  IntList stride;                    ///< window step (kernel_size when empty)
  IntList padding;                                  ///< implicit zero padding on both sides
  bool ceil_mode;                                   ///< round the output size up
  bool count_include_pad;                           ///< the padding counts in the divisor
  std::optional<std::int64_t> divisor_override;     ///< fixed divisor (2-D and 3-D only)
};
/// Average pooling over (N, C, L).
class AvgPool1d : public AvgPoolNd {
 public:
  /// See functional::avg_pool1d.
  explicit AvgPool1d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true)
      : AvgPoolNd("AvgPool1d", 1, std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode,
                  count_include_pad, std::nullopt) {}
};
/// Average pooling over (N, C, H, W).
class AvgPool2d : public AvgPoolNd {
 public:
  /// See functional::avg_pool2d.
  explicit AvgPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<std::int64_t> divisor_override = std::nullopt)
      : AvgPoolNd("AvgPool2d", 2, std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode,
                  count_include_pad, divisor_override) {}
};
/// Average pooling over (N, C, D, H, W).
class AvgPool3d : public AvgPoolNd {
 public:
  /// See functional::avg_pool3d.
  explicit AvgPool3d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<std::int64_t> divisor_override = std::nullopt)
      : AvgPoolNd("AvgPool3d", 3, std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode,
                  count_include_pad, divisor_override) {}
};

/// Adaptive average or max pooling to a fixed output size over `ndim` spatial dims (base of
/// AdaptiveAvgPool1d/2d/3d and AdaptiveMaxPool1d/2d/3d).
class AdaptivePoolNd : public Module {
 public:
  /// `max` picks max pooling; an output size of -1 keeps the input's size; `name` is the class name.
  AdaptivePoolNd(std::string name, std::int64_t ndim, bool max, IntList output_size);
  /// The pooled x.
  Tensor forward(const Tensor& x) override;
  /// The pooled x and the flat in-plane index of each maximum (max pooling only).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x);
  /// "output_size=(4, 4)".
  std::string extra_repr() const override;
  std::int64_t ndim;    ///< spatial dims
  bool max;             ///< max pooling (else average)
  IntList output_size;  ///< output sizes (-1: the input's)
};
/// Adaptive average pooling over (N, C, L).
class AdaptiveAvgPool1d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_avg_pool1d.
  explicit AdaptiveAvgPool1d(IntList output_size)
      : AdaptivePoolNd("AdaptiveAvgPool1d", 1, false, std::move(output_size)) {}
};
/// Adaptive average pooling over (N, C, H, W).
class AdaptiveAvgPool2d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_avg_pool2d.
  explicit AdaptiveAvgPool2d(IntList output_size)
      : AdaptivePoolNd("AdaptiveAvgPool2d", 2, false, std::move(output_size)) {}
};
/// Adaptive average pooling over (N, C, D, H, W).
class AdaptiveAvgPool3d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_avg_pool3d.
  explicit AdaptiveAvgPool3d(IntList output_size)
      : AdaptivePoolNd("AdaptiveAvgPool3d", 3, false, std::move(output_size)) {}
};
/// Adaptive max pooling over (N, C, L).
class AdaptiveMaxPool1d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_max_pool1d.
  explicit AdaptiveMaxPool1d(IntList output_size)
      : AdaptivePoolNd("AdaptiveMaxPool1d", 1, true, std::move(output_size)) {}
};
/// Adaptive max pooling over (N, C, H, W).
class AdaptiveMaxPool2d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_max_pool2d.
  explicit AdaptiveMaxPool2d(IntList output_size)
      : AdaptivePoolNd("AdaptiveMaxPool2d", 2, true, std::move(output_size)) {}
};
/// Adaptive max pooling over (N, C, D, H, W).
class AdaptiveMaxPool3d : public AdaptivePoolNd {
 public:
  /// See functional::adaptive_max_pool3d.
  explicit AdaptiveMaxPool3d(IntList output_size)
      : AdaptivePoolNd("AdaptiveMaxPool3d", 3, true, std::move(output_size)) {}
};

/// Power-average pooling over `ndim` spatial dims (LPPool1d/2d/3d).
class LPPoolNd : public Module {
 public:
  /// See functional::lp_pool1d; `name` is the class name.
  LPPoolNd(std::string name, std::int64_t ndim, double norm_type, IntList kernel_size, IntList stride,
           bool ceil_mode);
  /// The pooled x.
  Tensor forward(const Tensor& x) override;
  /// "norm_type=2, kernel_size=3, stride=none, ceil_mode=false".
  std::string extra_repr() const override;
  std::int64_t ndim;              ///< spatial dims
  double norm_type;               ///< the power p
  IntList kernel_size;            ///< window size
  IntList stride;  ///< window step (kernel_size when empty)
  bool ceil_mode;                 ///< round the output size up
};
/// Power-average pooling over (N, C, L).
class LPPool1d : public LPPoolNd {
 public:
  /// See functional::lp_pool1d.
  LPPool1d(double norm_type, IntList kernel_size, IntList stride = {}, bool ceil_mode = false)
      : LPPoolNd("LPPool1d", 1, norm_type, std::move(kernel_size), std::move(stride), ceil_mode) {}
};
/// Power-average pooling over (N, C, H, W).
class LPPool2d : public LPPoolNd {
 public:
  /// See functional::lp_pool2d.
  LPPool2d(double norm_type, IntList kernel_size, IntList stride = {}, bool ceil_mode = false)
      : LPPoolNd("LPPool2d", 2, norm_type, std::move(kernel_size), std::move(stride), ceil_mode) {}
};
/// Power-average pooling over (N, C, D, H, W).
class LPPool3d : public LPPoolNd {
 public:
  /// See functional::lp_pool3d.
  LPPool3d(double norm_type, IntList kernel_size, IntList stride = {}, bool ceil_mode = false)
      : LPPoolNd("LPPool3d", 3, norm_type, std::move(kernel_size), std::move(stride), ceil_mode) {}
};

/// Max unpooling over `ndim` spatial dims (MaxUnpool1d/2d/3d): takes the pooled tensor and its indices.
class MaxUnpoolNd : public Module {
 public:
  /// See functional::max_unpool1d; `name` is the class name.
  MaxUnpoolNd(std::string name, std::int64_t ndim, IntList kernel_size, IntList stride,
              IntList padding);
  using Module::forward;  // the one-tensor form throws: unpooling needs the indices
  /// x placed at `indices` of zero planes of output_size (see functional::max_unpool1d).
  Tensor forward(const Tensor& x, const Tensor& indices, std::optional<Shape> output_size = std::nullopt);
  /// "kernel_size=2, stride=2, padding=0".
  std::string extra_repr() const override;
  std::int64_t ndim;              ///< spatial dims
  IntList kernel_size;            ///< the pooling's window size
  IntList stride;  ///< the pooling's step (kernel_size when empty)
  IntList padding;                ///< the pooling's padding
};
/// Max unpooling over (N, C, L).
class MaxUnpool1d : public MaxUnpoolNd {
 public:
  /// See functional::max_unpool1d.
  explicit MaxUnpool1d(IntList kernel_size, IntList stride = {}, IntList padding = 0)
      : MaxUnpoolNd("MaxUnpool1d", 1, std::move(kernel_size), std::move(stride), std::move(padding)) {}
};
/// Max unpooling over (N, C, H, W).
class MaxUnpool2d : public MaxUnpoolNd {
 public:
  /// See functional::max_unpool2d.
  explicit MaxUnpool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0)
      : MaxUnpoolNd("MaxUnpool2d", 2, std::move(kernel_size), std::move(stride), std::move(padding)) {}
};
/// Max unpooling over (N, C, D, H, W).
class MaxUnpool3d : public MaxUnpoolNd {
 public:
  /// See functional::max_unpool3d.
  explicit MaxUnpool3d(IntList kernel_size, IntList stride = {}, IntList padding = 0)
      : MaxUnpoolNd("MaxUnpool3d", 3, std::move(kernel_size), std::move(stride), std::move(padding)) {}
};

}  // namespace phasor::nn
