// src/nn/fno.cpp - ChannelLinear (1x1 channel map through conv1d's 1x1 path) and the Fourier neural
// operator (Note [FNO architecture] in phasor/nn/fno.hpp).
#include "phasor/nn/fno.hpp"

#include <cmath>
#include <string>

#include "core/device_constants.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/nn/conv.hpp"
#include "phasor/nn/normalization.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"

namespace phasor::nn {

namespace {
using ::phasor::detail::shape_str;

Tensor uniform(const Shape& s, double bound, Dtype dt) {
  Tensor t = rand(s, dt);
  NoGradGuard ng;
  t.mul_(Scalar(2 * bound)).sub_(Scalar(bound));
  return t;
}
}  // namespace

// ---- ChannelLinear -------------------------------------------------------------------------
ChannelLinear::ChannelLinear(std::int64_t in, std::int64_t out, bool with_bias, Dtype dtype) : Module("ChannelLinear") {
  if (in < 1 || out < 1)
    throw Error("ChannelLinear", "in and out channels must be >= 1, got " + std::to_string(in) + " and " +
                                     std::to_string(out));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight = register_parameter("weight", uniform({out, in}, bound, dtype));
  if (with_bias) bias = register_parameter("bias", uniform({out}, bound, dtype));
}

Tensor ChannelLinear::forward(const Tensor& x) {
  const std::int64_t in = weight.size(1), out = weight.size(0);
  if (!x.defined() || x.dim() < 2 || x.size(1) != in)
    throw Error("ChannelLinear", "expected input (batch, " + std::to_string(in) + ", *spatial), got " +
                                     (x.defined() ? shape_str(x.shape()) : std::string("an undefined tensor")));
  const Shape s = x.shape();
  // conv1d's 1x1 path: no im2col, one parallel region over the batch with a gemm per sample.
  Tensor y = functional::conv1d(x.reshape({s[0], in, -1}), weight.unsqueeze(-1), bias);
  Shape os = s;
  os[1] = out;
  return y.reshape(os);
}

std::string ChannelLinear::extra_repr() const {
  return "in=" + std::to_string(weight.size(1)) + ", out=" + std::to_string(weight.size(0)) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

// ---- FNO --------------------------------------------------------------------------------------
std::int64_t next_fast_fft_size(std::int64_t n) {
  if (n <= 1) return 1;
  for (std::int64_t m = n;; ++m) {
    std::int64_t r = m;
    for (std::int64_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

FNO::FNO(const FNOOptions& o) : Module("FNO"), opt_(o) {
  const char* op = "FNO";
  const std::int64_t d = static_cast<std::int64_t>(o.modes_.size());
  if (d < 1 || d > 3) throw Error(op, "expected modes for 1 to 3 spatial dims, got " + shape_str(o.modes_));
  for (auto m : o.modes_)
    if (m < 1) throw Error(op, "modes must be >= 1, got " + shape_str(o.modes_));
  if (o.in_channels_ < 1 || o.out_channels_ < 1 || o.hidden_channels_ < 1 || o.n_layers_ < 1)
    throw Error(op, "in/out/hidden channels and n_layers must be >= 1, got in=" + std::to_string(o.in_channels_) +
                        ", out=" + std::to_string(o.out_channels_) + ", hidden=" + std::to_string(o.hidden_channels_) +
                        ", n_layers=" + std::to_string(o.n_layers_));
  if (o.lifting_channels_ < 0 || o.projection_channels_ < 0)
    throw Error(op, "lifting/projection channels must be >= 0 (0 = one linear layer)");
  if (o.domain_padding_ < 0 || !(o.domain_padding_ < 10))
    throw Error(op, "domain_padding must be a fraction in [0, 10), got " + std::to_string(o.domain_padding_));
  if (!is_floating(o.dtype_)) throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(o.dtype_));
  const std::int64_t H = o.hidden_channels_;
  if (o.norm_ == NormType::group && (o.norm_groups_ < 1 || H % o.norm_groups_ != 0))
    throw Error(op, "norm_groups (" + std::to_string(o.norm_groups_) + ") must divide hidden_channels (" +
                        std::to_string(H) + ")");
  const std::int64_t mlp_w = static_cast<std::int64_t>(std::llround(o.channel_mlp_expansion_ * static_cast<double>(H)));
  if (o.channel_mlp_ && mlp_w < 1) throw Error(op, "channel_mlp_expansion gives a hidden width < 1");
  const Dtype dt = o.dtype_;
  const std::int64_t in = o.in_channels_ + (o.positional_embedding_ ? d : 0);
  auto lin = [&](const std::string& name, std::int64_t a, std::int64_t b, bool bias) {
    return register_module(name, std::make_shared<ChannelLinear>(a, b, bias, dt));
  };
  if (o.lifting_channels_ > 0) {
    lifting_.push_back(lin("lifting_0", in, o.lifting_channels_, true));
    lifting_.push_back(lin("lifting_1", o.lifting_channels_, H, true));
  } else {
    lifting_.push_back(lin("lifting_0", in, H, true));
  }
  for (std::int64_t i = 0; i < o.n_layers_; ++i) {
    const std::string s = std::to_string(i);
    convs_.push_back(register_module(
        "conv_" + s,
        std::make_shared<SpectralConv>(SpectralConvOptions(H, H, o.modes_).norm(o.fft_norm_).bias(true).dtype(dt))));
    if (o.skip_ == SkipType::linear) skips_.push_back(lin("skip_" + s, H, H, false));
    if (o.skip_ == SkipType::soft_gating) {
      Shape gs{1, H};
      for (std::int64_t k = 0; k < d; ++k) gs.push_back(1);
      gates_.push_back(register_parameter("gate_" + s, ones(gs, dt)));
    }
    if (o.norm_ != NormType::none) {
      norm_w_.push_back(register_parameter("norm_weight_" + s, ones({H}, dt)));
      norm_b_.push_back(register_parameter("norm_bias_" + s, zeros({H}, dt)));
    }
    if (o.channel_mlp_) {
      mlp1_.push_back(lin("mlp_" + s + "_0", H, mlp_w, true));
      mlp2_.push_back(lin("mlp_" + s + "_1", mlp_w, H, true));
    }
  }
  if (o.projection_channels_ > 0) {
    projection_.push_back(lin("projection_0", H, o.projection_channels_, true));
    projection_.push_back(lin("projection_1", o.projection_channels_, o.out_channels_, true));
  } else {
    projection_.push_back(lin("projection_0", H, o.out_channels_, true));
  }
}

Tensor FNO::act(const Tensor& x) const {
  switch (opt_.activation_) {
    case Activation::relu: return relu(x);
    case Activation::gelu: return gelu(x);
    case Activation::gelu_tanh: return gelu(x, true);
    case Activation::tanh: return tanh(x);
    case Activation::silu: return silu(x);
    case Activation::sigmoid: return sigmoid(x);
    case Activation::softplus: return softplus(x);
    case Activation::identity: break;
  }
  return x;
}

Tensor FNO::skip(std::size_t i, const Tensor& x) const {
  switch (opt_.skip_) {
    case SkipType::linear: return skips_[i]->forward(x);
    case SkipType::soft_gating: return x * gates_[i];
    case SkipType::identity: break;
  }
  return x;
}

Tensor FNO::normalize(std::size_t i, const Tensor& x) const {
  if (opt_.norm_ == NormType::none) return x;
  const std::int64_t C = x.size(1);
  const std::int64_t groups = opt_.norm_ == NormType::instance ? C : opt_.norm_ == NormType::layer ? 1 : opt_.norm_groups_;
  return functional::group_norm(x, groups, norm_w_[i], norm_b_[i]);
}

Shape FNO::padded_grid(const Shape& grid) const {
  if (opt_.domain_padding_ <= 0) return grid;
  Shape p;
  for (auto n : grid) {
    const auto extra = static_cast<std::int64_t>(std::llround(opt_.domain_padding_ * static_cast<double>(n)));
    p.push_back(extra > 0 ? next_fast_fft_size(n + extra) : n);
  }
  return p;
}

Tensor FNO::forward(const Tensor& x_in) {
  const char* op = "FNO";
  const std::size_t d = opt_.modes_.size();
  if (!x_in.defined()) throw Error(op, "got an undefined input");
  if (x_in.dim() != static_cast<std::int64_t>(d) + 2)
    throw Error(op, "expected input (batch, " + std::to_string(opt_.in_channels_) + ", " + std::to_string(d) +
                        " spatial dims) with " + std::to_string(d + 2) + " dims, got shape " + shape_str(x_in.shape()));
  if (x_in.size(1) != opt_.in_channels_)
    throw Error(op, "expected " + std::to_string(opt_.in_channels_) + " input channels, got input of shape " +
                        shape_str(x_in.shape()));
  if (!x_in.is_floating_point())
    throw Error(op, std::string("expected a real floating input, got ") + dtype_name(x_in.dtype()));
  const Shape grid(x_in.shape().begin() + 2, x_in.shape().end());
  const Shape pgrid = padded_grid(grid);
  for (std::size_t i = 0; i < d; ++i) {
    const bool last = i + 1 == d;
    const std::int64_t limit = last ? pgrid[i] / 2 + 1 : pgrid[i] / 2;
    if (opt_.modes_[i] > limit)
      throw Error(op, "modes (" + std::to_string(opt_.modes_[i]) + ") exceed what spatial size " +
                          std::to_string(pgrid[i]) + " allows along spatial dim " + std::to_string(i) + " (at most " +
                          std::to_string(limit) + "); input of shape " + shape_str(x_in.shape()));
  }
  const std::int64_t B = x_in.size(0);
  Tensor x = x_in;
  if (opt_.positional_embedding_) {
    std::vector<Tensor> parts{x};
    for (std::size_t i = 0; i < d; ++i) {
      const std::int64_t n = grid[i];
      Shape vs(d + 2, 1);
      vs[2 + i] = n;
      Shape es{B, 1};
      es.insert(es.end(), grid.begin(), grid.end());
      const Dtype dt = x.dtype();
      Tensor c = ::phasor::detail::device_constant(  // Note [device constants]: no copy per call on a GPU
          x.device(), "fno grid", std::make_tuple(n, dt),
          [n, dt] { return arange(0, n, 1, dt) * (1.0 / static_cast<double>(n)); });
      c = c.reshape(vs).expand(es);
      parts.push_back(c);
    }
    x = cat(parts, 1);
  }
  for (auto& l : lifting_) {
    x = l->forward(x);
    if (&l != &lifting_.back()) x = act(x);
  }
  const bool padded = pgrid != grid;
  if (padded) {
    Shape pads;
    for (std::size_t i = d; i-- > 0;) {
      pads.push_back(0);
      pads.push_back(pgrid[i] - grid[i]);
    }
    x = pad(x, pads);
  }
  const std::size_t L = convs_.size();
  for (std::size_t i = 0; i < L; ++i) {
    Tensor y = normalize(i, convs_[i]->forward(x)) + skip(i, x);
    const bool last = i + 1 == L;
    if (opt_.channel_mlp_ || !last) y = act(y);
    if (opt_.channel_mlp_) {
      y = y + mlp2_[i]->forward(act(mlp1_[i]->forward(y)));
      if (!last) y = act(y);
    }
    x = y;
  }
  if (padded)
    for (std::size_t i = 0; i < d; ++i) x = x.narrow(static_cast<std::int64_t>(2 + i), 0, grid[i]);
  for (auto& l : projection_) {
    x = l->forward(x);
    if (&l != &projection_.back()) x = act(x);
  }
  return x;
}

std::string FNO::extra_repr() const {
  return "in=" + std::to_string(opt_.in_channels_) + ", out=" + std::to_string(opt_.out_channels_) +
         ", hidden=" + std::to_string(opt_.hidden_channels_) + ", modes=" + shape_str(opt_.modes_) +
         ", layers=" + std::to_string(opt_.n_layers_);
}

}  // namespace phasor::nn
