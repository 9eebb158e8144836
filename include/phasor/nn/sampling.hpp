// phasor/nn/sampling.hpp - resampling (torch.nn.functional names, argument order and defaults):
// interpolate, pixel_shuffle / pixel_unshuffle, affine_grid, grid_sample, and the modules Upsample,
// UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle. Layout is NC* (channels first).
// Every op is a composition of differentiable tensor ops: gradients (and gradients of gradients) and every
// device come with them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// Resamples x (N, C, *spatial) with 1-3 spatial dims to `size` or by `scale_factor` (exactly one of them;
/// one entry applies to every spatial dim), as torch.nn.functional.interpolate. mode: "nearest" (torch's
/// legacy floor(dst * scale) source), "nearest-exact", "linear" (3-D x), "bilinear" / "bicubic" (4-D),
/// "trilinear" (5-D) or "area" (adaptive average pooling). align_corners only with the linear modes and
/// bicubic (default false). A scale_factor sets the output size floor(in * scale_factor) and, unless
/// recompute_scale_factor, the source scale 1 / scale_factor. antialias (bilinear and bicubic only) low-pass
/// filters when shrinking: the filter is stretched by in/out and its taps normalised, as torch and PIL.
Tensor interpolate(const Tensor& x, const std::optional<Shape>& size = std::nullopt,
                   const std::optional<std::vector<double>>& scale_factor = std::nullopt,
                   const std::string& mode = "nearest", std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt, bool antialias = false);

/// (*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = upscale_factor (torch.nn.functional.pixel_shuffle).
Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor);
/// (*, C, H * r, W * r) -> (*, C * r^2, H, W) with r = downscale_factor, the inverse of pixel_shuffle.
Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor);

/// Sampling grid of the affine maps theta (N, 2, 3) for size (N, C, H, W) -> (N, H, W, 2), or theta
/// (N, 3, 4) for size (N, C, D, H, W) -> (N, D, H, W, 3); coordinates (x, y[, z]) in [-1, 1]
/// (torch.nn.functional.affine_grid). Differentiable in theta.
Tensor affine_grid(const Tensor& theta, const Shape& size, bool align_corners = false);

/// Samples x (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo), or x (N, C, D, H, W) at grid
/// (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo); grid holds (x, y[, z]) normalised to [-1, 1]
/// (torch.nn.functional.grid_sample). mode "bilinear" (trilinear for 5-D), "nearest" or "bicubic" (4-D
/// only); padding_mode "zeros", "border" or "reflection". Differentiable in x and (bilinear, bicubic) in grid.
Tensor grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode = "bilinear",
                   const std::string& padding_mode = "zeros", bool align_corners = false);

}  // namespace functional

/// Resampling layer: functional::interpolate with fixed size or scale_factor (torch.nn.Upsample).
class Upsample : public Module {
 public:
  /// Exactly one of size / scale_factor; mode and align_corners as interpolate's.
  explicit Upsample(std::optional<Shape> size = std::nullopt,
                    std::optional<std::vector<double>> scale_factor = std::nullopt, std::string mode = "nearest",
                    std::optional<bool> align_corners = std::nullopt,
                    std::optional<bool> recompute_scale_factor = std::nullopt);
  /// functional::interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor).
  Tensor forward(const Tensor& x) override;
  /// "scale_factor=2.0, mode='nearest'" or "size=(4, 4), mode='bilinear'".
  std::string extra_repr() const override;
  std::optional<Shape> size;                        ///< output spatial size
  std::optional<std::vector<double>> scale_factor;  ///< multiplier per spatial dim
  std::string mode;                                 ///< interpolate's mode
  std::optional<bool> align_corners;                ///< interpolate's align_corners
  std::optional<bool> recompute_scale_factor;       ///< interpolate's recompute_scale_factor

 protected:
  /// An Upsample printed as `name` (for the fixed-mode subclasses).
  Upsample(std::string name, std::optional<Shape> size, std::optional<std::vector<double>> scale_factor,
           std::string mode, std::optional<bool> align_corners);
};

/// Nearest upsampling of 4-D input (torch.nn.UpsamplingNearest2d): Upsample with mode "nearest".
class UpsamplingNearest2d : public Upsample {
 public:
  /// Exactly one of size / scale_factor.
  explicit UpsamplingNearest2d(std::optional<Shape> size = std::nullopt,
                               std::optional<std::vector<double>> scale_factor = std::nullopt);
};

/// Bilinear upsampling of 4-D input with align_corners = true (torch.nn.UpsamplingBilinear2d).
class UpsamplingBilinear2d : public Upsample {
 public:
  /// Exactly one of size / scale_factor.
  explicit UpsamplingBilinear2d(std::optional<Shape> size = std::nullopt,
                                std::optional<std::vector<double>> scale_factor = std::nullopt);
};

/// functional::pixel_shuffle as a layer (torch.nn.PixelShuffle).
class PixelShuffle : public Module {
 public:
  /// Upscale factor r >= 1.
  explicit PixelShuffle(std::int64_t upscale_factor);
  /// pixel_shuffle(x, upscale_factor).
  Tensor forward(const Tensor& x) override;
  /// "upscale_factor=2".
  std::string extra_repr() const override;
  std::int64_t upscale_factor;  ///< r
};

/// functional::pixel_unshuffle as a layer (torch.nn.PixelUnshuffle).
class PixelUnshuffle : public Module {
 public:
  /// Downscale factor r >= 1.
  explicit PixelUnshuffle(std::int64_t downscale_factor);
  /// pixel_unshuffle(x, downscale_factor).
  Tensor forward(const Tensor& x) override;
  /// "downscale_factor=2".
  std::string extra_repr() const override;
  std::int64_t downscale_factor;  ///< r
};

}  // namespace phasor::nn
