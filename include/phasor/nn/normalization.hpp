// phasor/nn/normalization.hpp - layer, group, instance and batch normalization: functional forms
// (torch.nn.functional semantics, channels in dim 1) and the modules (torch.nn names, parameter
// and buffer names, defaults).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// Normalizes over the trailing dims `normalized_shape` (biased variance), then applies the optional
/// elementwise `weight` and `bias` of shape normalized_shape.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// Normalizes input (N, C, *) over each of `num_groups` groups of C / num_groups channels (and all
/// spatial positions), then applies the optional per-channel `weight` and `bias` (C).
Tensor group_norm(const Tensor& input, std::int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// Normalizes each (sample, channel) of input (N, C, *) over its spatial positions when
/// `use_input_stats` (updating the optional running statistics (C) in place with the batch
/// average, unbiased variance), else with the running statistics; optional per-channel affine.
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = Tensor(), const Tensor& running_var = Tensor(),
                     const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);
/// Normalizes each channel of input (N, C, *) over the batch and spatial positions when `training`
/// (updating the optional running statistics (C) in place: r = (1 - momentum) r + momentum s, with the
/// unbiased variance), else with the running statistics; optional per-channel affine.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);

}  // namespace functional

/// Layer normalization over the trailing `normalized_shape` dims (torch.nn.LayerNorm): parameters
/// "weight" (ones) and "bias" (zeros) of that shape when elementwise_affine (bias optional).
class LayerNorm : public Module {
 public:
  /// A LayerNorm over trailing dims `normalized_shape`.
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true);
  /// Normalizes `input`, whose trailing dims must equal normalized_shape.
  Tensor forward(const Tensor& input) override;
  /// "(normalized_shape), eps=..., elementwise_affine=..."
  std::string extra_repr() const override;

  Shape normalized_shape;  ///< the normalized trailing dims
  double eps;              ///< added to the variance
  Tensor weight;           ///< elementwise scale (undefined without affine)
  Tensor bias;             ///< elementwise shift (undefined without affine or bias)
};

/// Group normalization (torch.nn.GroupNorm): channels split into num_groups groups; per-channel
/// "weight" (ones) and "bias" (zeros) when affine.
class GroupNorm : public Module {
 public:
  /// A GroupNorm of num_channels channels in num_groups groups (num_groups must divide num_channels).
  GroupNorm(std::int64_t num_groups, std::int64_t num_channels, double eps = 1e-5, bool affine = true);
  /// Normalizes input (N, C, *) with C = num_channels.
  Tensor forward(const Tensor& input) override;
  /// "num_groups, num_channels, eps=..., affine=..."
  std::string extra_repr() const override;

  std::int64_t num_groups;    ///< number of groups
  std::int64_t num_channels;  ///< expected channels
  double eps;                 ///< added to the variance
  Tensor weight;              ///< per-channel scale (undefined without affine)
  Tensor bias;                ///< per-channel shift (undefined without affine)
};

/// Shared implementation of the BatchNorm and InstanceNorm modules (torch's _NormBase): parameters
/// "weight", "bias" (when affine), buffers "running_mean", "running_var", "num_batches_tracked"
/// (when track_running_stats).
class NormBase : public Module {
 public:
  /// Extra text: "num_features, eps=..., momentum=..., affine=..., track_running_stats=...".
  std::string extra_repr() const override;
  /// Zeros the running mean, fills the running variance with ones and zeros the batch counter.
  void reset_running_stats();

  std::int64_t num_features;      ///< expected channels C
  double eps;                     ///< added to the variance
  std::optional<double> momentum; ///< running-statistics factor; nullopt = cumulative average
  bool affine;                    ///< has weight and bias
  bool track_running_stats;       ///< keeps running statistics
  Tensor weight;                  ///< per-channel scale (ones), undefined without affine
  Tensor bias;                    ///< per-channel shift (zeros), undefined without affine
  Tensor running_mean;            ///< (C) running mean, undefined without tracking
  Tensor running_var;             ///< (C) running variance, undefined without tracking
  Tensor num_batches_tracked;     ///< int64 count of training batches seen, undefined without tracking

 protected:
  /// Registers parameters and buffers; `name` is the printed class name.
  NormBase(const std::string& name, std::int64_t num_features, double eps, std::optional<double> momentum,
           bool affine, bool track_running_stats);
  /// Checks the input rank (min_rank..max_rank) and the channel count at `channel_dim`.
  void check_input(const Tensor& input, std::int64_t min_rank, std::int64_t max_rank, std::int64_t channel_dim) const;
  /// Counts a training batch and returns the running-statistics factor to use.
  double update_factor();
};

/// Batch normalization over dim 1 of (N, C, *) (torch.nn.BatchNorm1d/2d/3d): batch statistics and
/// running-statistics updates in training, the running statistics in eval (batch statistics when
/// not tracking).
class BatchNorm : public NormBase {
 public:
  /// Normalizes input (N, C, *) per channel.
  Tensor forward(const Tensor& input) override;

 protected:
  /// A BatchNorm named `name` accepting ranks min_rank..max_rank.
  BatchNorm(const std::string& name, std::int64_t min_rank, std::int64_t max_rank, std::int64_t num_features,
            double eps, std::optional<double> momentum, bool affine, bool track_running_stats);

 private:
  std::int64_t min_rank_, max_rank_;
};

/// BatchNorm over (N, C) or (N, C, L) input.
class BatchNorm1d : public BatchNorm {
 public:
  /// torch.nn.BatchNorm1d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm1d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true);
};

/// BatchNorm over (N, C, H, W) input.
class BatchNorm2d : public BatchNorm {
 public:
  /// torch.nn.BatchNorm2d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm2d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true);
};

/// BatchNorm over (N, C, D, H, W) input.
class BatchNorm3d : public BatchNorm {
 public:
  /// torch.nn.BatchNorm3d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm3d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true);
};

/// Instance normalization of (N, C, *) or unbatched (C, *) input (torch.nn.InstanceNorm1d/2d/3d):
/// per-sample, per-channel statistics; with track_running_stats, eval uses the running ones. The
/// input's channels must equal num_features (torch only warns when not affine); momentum nullopt
/// gives a cumulative average counted in num_batches_tracked (which torch leaves alone otherwise).
class InstanceNorm : public NormBase {
 public:
  /// Normalizes each (sample, channel) over its spatial positions.
  Tensor forward(const Tensor& input) override;

 protected:
  /// An InstanceNorm named `name` with `spatial` spatial dims.
  InstanceNorm(const std::string& name, std::int64_t spatial, std::int64_t num_features, double eps,
               std::optional<double> momentum, bool affine, bool track_running_stats);

 private:
  std::int64_t spatial_;
};

/// InstanceNorm over (N, C, L) or (C, L) input.
class InstanceNorm1d : public InstanceNorm {
 public:
  /// torch.nn.InstanceNorm1d(num_features, eps, momentum, affine, track_running_stats).
  explicit InstanceNorm1d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                          bool affine = false, bool track_running_stats = false);
};

/// InstanceNorm over (N, C, H, W) or (C, H, W) input.
class InstanceNorm2d : public InstanceNorm {
 public:
  /// torch.nn.InstanceNorm2d(num_features, eps, momentum, affine, track_running_stats).
  explicit InstanceNorm2d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                          bool affine = false, bool track_running_stats = false);
};

/// InstanceNorm over (N, C, D, H, W) or (C, D, H, W) input.
class InstanceNorm3d : public InstanceNorm {
 public:
  /// torch.nn.InstanceNorm3d(num_features, eps, momentum, affine, track_running_stats).
  explicit InstanceNorm3d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                          bool affine = false, bool track_running_stats = false);
};

}  // namespace phasor::nn
