// phasor/nn/fno.hpp - the Fourier neural operator (Li et al. 2021; layout as neuraloperator's FNO)
// and the 1x1 channel linear layer it is built from.
//
// Note [FNO architecture]
// x (B, in, *spatial), 1 to 3 spatial dims ->
//   [positional embedding: append d channels holding the coordinates i/n_k in [0, 1)]
//   lifting: channel linear (in + d) -> hidden, or a channel MLP (in + d) -> lifting -> hidden
//   [domain padding: zero-pad every spatial dim on the right by round(fraction * n), rounded up
//    to the next 2^a 3^b 5^c 7^d size (fast FFT lengths)]
//   n_layers Fourier blocks, each
//       y = SpectralConv(x) [-> norm] + skip(x)      skip: linear (1x1, no bias) | identity | soft gating
//       y = act(y) unless last block (always, when a channel MLP follows)
//       [channel MLP: y = y + MLP(y) (hidden -> hidden*expansion -> hidden); act unless last]
//   [crop the padding]
//   projection: channel MLP hidden -> projection -> out (or one linear when projection = 0).
// Defaults follow the original FNO-1d/2d scripts: lifting one linear, projection 128, gelu,
// positional embedding on, no padding, linear skip, no channel MLP, no norm, fft norm forward.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phasor/dtype.hpp"
#include "phasor/fft.hpp"
#include "phasor/nn/layers.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/nn/spectral.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

/// 1x1 convolution over (B, in, *spatial) with weight (out, in): x viewed (B, in, S) goes through
/// conv1d's 1x1 path (no im2col). Init as torch's Conv1d/Linear: weight and bias uniform in +-1/sqrt(in).
class ChannelLinear : public Module {
 public:
  /// Layer mapping `in` to `out` channels, with an optional bias, of real dtype `dtype`.
  ChannelLinear(std::int64_t in, std::int64_t out, bool bias = true, Dtype dtype = Dtype::Float32);
  /// x (B, in, *spatial) -> (B, out, *spatial).
  Tensor forward(const Tensor& x) override;
  /// "in=.., out=.., bias=.."
  std::string extra_repr() const override;
  Tensor weight;  ///< (out, in)
  Tensor bias;    ///< (out) or undefined
};

/// Skip connection of a Fourier block.
enum class SkipType { linear, identity, soft_gating };
/// Normalization after each spectral convolution.
enum class NormType { none, instance, group, layer };

/// Options of FNO with chained setters: `FNOOptions().in_channels(2).modes({16}).n_layers(4)`.
struct FNOOptions {
  std::int64_t in_channels_ = 1;          ///< input channels (without the positional embedding)
  std::int64_t out_channels_ = 1;         ///< output channels
  std::int64_t hidden_channels_ = 64;     ///< width of the Fourier blocks
  std::vector<std::int64_t> modes_{16};   ///< modes per spatial dim (Note [SpectralConv convention])
  std::int64_t n_layers_ = 4;             ///< number of Fourier blocks
  std::int64_t lifting_channels_ = 0;     ///< lifting MLP width (0: one linear layer)
  std::int64_t projection_channels_ = 128;  ///< projection MLP width (0: one linear layer)
  Activation activation_ = Activation::gelu;  ///< activation (nn::Activation of layers.hpp)
  bool positional_embedding_ = true;      ///< append the grid coordinates as input channels
  double domain_padding_ = 0.0;           ///< padding fraction of each spatial dim (0: none)
  SkipType skip_ = SkipType::linear;      ///< skip connection of the Fourier blocks
  bool channel_mlp_ = false;              ///< channel MLP inside each block
  double channel_mlp_expansion_ = 0.5;    ///< its hidden width as a fraction of hidden_channels
  NormType norm_ = NormType::none;        ///< norm after each spectral convolution
  std::int64_t norm_groups_ = 1;          ///< groups of NormType::group
  fft::Norm fft_norm_ = fft::Norm::forward;  ///< FFT normalization of the spectral convolutions
  Dtype dtype_ = Dtype::Float32;          ///< real dtype of the model

  FNOOptions& in_channels(std::int64_t v) { in_channels_ = v; return *this; }            ///< sets in_channels
  FNOOptions& out_channels(std::int64_t v) { out_channels_ = v; return *this; }          ///< sets out_channels
  FNOOptions& hidden_channels(std::int64_t v) { hidden_channels_ = v; return *this; }    ///< sets hidden_channels
  FNOOptions& modes(std::vector<std::int64_t> v) { modes_ = std::move(v); return *this; }  ///< sets modes
  FNOOptions& n_layers(std::int64_t v) { n_layers_ = v; return *this; }                  ///< sets n_layers
  FNOOptions& lifting_channels(std::int64_t v) { lifting_channels_ = v; return *this; }  ///< sets lifting_channels
  FNOOptions& projection_channels(std::int64_t v) { projection_channels_ = v; return *this; }  ///< sets projection_channels
  FNOOptions& activation(Activation v) { activation_ = v; return *this; }                ///< sets activation
  FNOOptions& positional_embedding(bool v) { positional_embedding_ = v; return *this; }  ///< sets positional_embedding
  FNOOptions& domain_padding(double v) { domain_padding_ = v; return *this; }            ///< sets domain_padding
  FNOOptions& skip(SkipType v) { skip_ = v; return *this; }                              ///< sets skip
  FNOOptions& channel_mlp(bool v) { channel_mlp_ = v; return *this; }                    ///< sets channel_mlp
  FNOOptions& channel_mlp_expansion(double v) { channel_mlp_expansion_ = v; return *this; }  ///< sets channel_mlp_expansion
  FNOOptions& norm(NormType v) { norm_ = v; return *this; }                              ///< sets norm
  FNOOptions& norm_groups(std::int64_t v) { norm_groups_ = v; return *this; }            ///< sets norm_groups
  FNOOptions& fft_norm(fft::Norm v) { fft_norm_ = v; return *this; }                     ///< sets fft_norm
  FNOOptions& dtype(Dtype v) { dtype_ = v; return *this; }                               ///< sets dtype
};

/// Smallest n' >= n whose only prime factors are 2, 3, 5 and 7.
std::int64_t next_fast_fft_size(std::int64_t n);

/// Fourier neural operator (Note [FNO architecture]); works at any resolution the modes fit.
class FNO : public Module {
 public:
  /// Builds the model; throws phasor::Error on inconsistent options.
  explicit FNO(const FNOOptions& options);
  /// x (B, in_channels, *spatial) -> (B, out_channels, *spatial).
  Tensor forward(const Tensor& x) override;
  /// "in=.., out=.., hidden=.., modes=(..), layers=.."
  std::string extra_repr() const override;
  /// The options the model was built with.
  const FNOOptions& options() const { return opt_; }
  /// Spatial sizes the Fourier blocks see for an input grid (after domain padding).
  Shape padded_grid(const Shape& grid) const;

 private:
  Tensor act(const Tensor& x) const;
  Tensor skip(std::size_t i, const Tensor& x) const;
  Tensor normalize(std::size_t i, const Tensor& x) const;
  FNOOptions opt_;
  std::vector<std::shared_ptr<ChannelLinear>> lifting_, projection_, skips_, mlp1_, mlp2_;
  std::vector<std::shared_ptr<SpectralConv>> convs_;
  std::vector<Tensor> gates_, norm_w_, norm_b_;
};

}  // namespace phasor::nn
