// tests/test_fno.cpp - ChannelLinear and FNO: hand-counted parameters, shapes in 1-D/2-D/3-D,
// resolution invariance, gradients (gradcheck w.r.t. the input, central differences w.r.t. every
// parameter), options and errors.
#include <doctest/doctest.h>

#include <cmath>

#include "test_util.hpp"

using namespace phasor;
using G = std::vector<Tensor>;

TEST_CASE("ChannelLinear is a per-point matmul over channels") {
  nn::ChannelLinear l(3, 4, true, float64);
  CHECK(l.weight.shape() == Shape{4, 3});
  CHECK(l.bias.shape() == Shape{4});
  CHECK(l.num_parameters() == 16);
  Tensor x = randn({2, 3, 5, 6}, float64);
  Tensor y = l.forward(x);
  REQUIRE(y.shape() == Shape{2, 4, 5, 6});
  // reference: einsum over the channel dim
  Tensor ref = einsum("oi,bixy->boxy", {l.weight, x}) + l.bias.reshape({4, 1, 1});
  CHECK((y - ref).abs().max().item<double>() < 1e-12);
  for (double v : to_vector<double>(l.weight)) CHECK(std::fabs(v) <= 1.0 / std::sqrt(3.0));
  CHECK_THROWS_WITH_AS(l.forward(randn({2, 2, 5}, float64)),
                       doctest::Contains("[ChannelLinear] expected input (batch, 3, *spatial), got (2, 2, 5)"), Error);
  CHECK(autodiff::gradcheck([&](const G& in) { return l.forward(in[0]); }, G{randn({1, 3, 4}, float64).requires_grad_()}));
}

TEST_CASE("FNO parameter count matches a hand count") {
  // in 1 (+1 grid channel), hidden 8, modes 4, 2 layers, projection 16, out 1
  nn::FNO m(nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(8).modes({4}).n_layers(2).projection_channels(16));
  const std::int64_t lifting = 2 * 8 + 8;
  const std::int64_t block = 8 * 8 * 4 /*complex weight*/ + 8 /*spectral bias*/ + 8 * 8 /*linear skip*/;
  const std::int64_t projection = 8 * 16 + 16 + 16 * 1 + 1;
  CHECK(m.num_parameters() == lifting + 2 * block + projection);
  auto named = m.named_parameters();
  CHECK(named.front().first == "lifting_0.weight");
  CHECK(named[2].first == "conv_0.weight");
  CHECK(named[2].second.shape() == Shape{8, 8, 4});
  CHECK(named[2].second.dtype() == complex64);
  // 2-D with lifting MLP, soft gating, channel MLP, group norm, no positional embedding
  nn::FNO m2(nn::FNOOptions()
                 .in_channels(3)
                 .out_channels(2)
                 .hidden_channels(4)
                 .modes({3, 2})
                 .n_layers(3)
                 .lifting_channels(6)
                 .projection_channels(0)
                 .positional_embedding(false)
                 .skip(nn::SkipType::soft_gating)
                 .channel_mlp(true)
                 .norm(nn::NormType::group)
                 .norm_groups(2));
  const std::int64_t lift2 = 3 * 6 + 6 + 6 * 4 + 4;
  const std::int64_t block2 = 4 * 4 * 6 * 2 + 4 /*conv*/ + 4 /*gate*/ + 2 * 4 /*norm*/ + (4 * 2 + 2) + (2 * 4 + 4) /*mlp*/;
  const std::int64_t proj2 = 4 * 2 + 2;
  CHECK(m2.num_parameters() == lift2 + 3 * block2 + proj2);
  // identity skip adds nothing
  nn::FNO m3(nn::FNOOptions().hidden_channels(4).modes({2}).n_layers(1).projection_channels(0).skip(nn::SkipType::identity));
  CHECK(m3.num_parameters() == (2 * 4 + 4) + (4 * 4 * 2 + 4) + (4 * 1 + 1));
}

TEST_CASE("FNO output shapes in 1-D, 2-D, 3-D and at finer grids") {
  nn::FNO m1(nn::FNOOptions().in_channels(2).out_channels(3).hidden_channels(8).modes({6}).n_layers(2).projection_channels(8));
  CHECK(m1.forward(randn({4, 2, 32})).shape() == Shape{4, 3, 32});
  CHECK(m1.forward(randn({1, 2, 100})).shape() == Shape{1, 3, 100});  // finer grid runs
  nn::FNO m2(nn::FNOOptions().in_channels(3).hidden_channels(6).modes({4, 4}).n_layers(2).projection_channels(8));
  CHECK(m2.forward(randn({2, 3, 16, 12})).shape() == Shape{2, 1, 16, 12});
  CHECK(m2.forward(randn({2, 3, 32, 24})).shape() == Shape{2, 1, 32, 24});
  nn::FNO m3(nn::FNOOptions().hidden_channels(4).modes({2, 2, 2}).n_layers(2).projection_channels(4)
                 .domain_padding(0.25).norm(nn::NormType::instance));
  CHECK(m3.forward(randn({1, 1, 8, 6, 5})).shape() == Shape{1, 1, 8, 6, 5});
  CHECK(m3.padded_grid({8, 6, 5}) == Shape{10, 8, 6});
  CHECK(nn::next_fast_fft_size(11) == 12);
  CHECK(nn::next_fast_fft_size(97) == 98);
  CHECK(nn::next_fast_fft_size(121) == 125);
  CHECK(nn::next_fast_fft_size(1) == 1);
}

TEST_CASE("FNO is resolution invariant on band-limited inputs (no positional embedding)") {
  // without grid channels, without padding and with smooth activations replaced by identity-free
  // paths, a 1-layer FNO with identity skip is spectral conv + pointwise maps: sampling commutes
  nn::FNO m(nn::FNOOptions().hidden_channels(4).modes({3}).n_layers(1).projection_channels(0)
                .positional_embedding(false).skip(nn::SkipType::identity).dtype(float64));
  auto signal = [](std::int64_t n) {
    Tensor t = arange(0, n, 1, float64) * (2 * 3.14159265358979323846 / static_cast<double>(n));
    return (t.cos() + (t * 2.0).sin() * 0.5).reshape({1, 1, n});
  };
  Tensor yc = m.forward(signal(16)), yf = m.forward(signal(64));
  CHECK((yf.slice(2, 0, 64, 4) - yc).abs().max().item<double>() < 1e-12);
}

TEST_CASE("FNO gradients: gradcheck w.r.t. the input, central differences w.r.t. every parameter") {
  for (int variant = 0; variant < 2; ++variant) {
    nn::FNOOptions o = nn::FNOOptions().in_channels(2).hidden_channels(3).n_layers(2).projection_channels(4).dtype(float64);
    if (variant == 0) o.modes({3});
    else o.modes({2, 2}).lifting_channels(3).skip(nn::SkipType::soft_gating).channel_mlp(true).norm(nn::NormType::layer)
             .domain_padding(0.2).activation(nn::Activation::tanh);
    nn::FNO m(o);
    Tensor x = variant == 0 ? randn({2, 2, 8}, float64) : randn({1, 2, 6, 5}, float64);
    CHECK(autodiff::gradcheck([&](const G& in) { return m.forward(in[0]); }, G{x.requires_grad_()}));
    x = x.detach();
    Tensor target = randn(m.forward(x).shape(), float64);
    auto loss = [&] { return (m.forward(x) - target).square().sum(); };
    m.zero_grad();
    loss().backward();
    for (auto& [name, p] : m.named_parameters()) {
      REQUIRE(p.grad().defined());
      const std::int64_t n = p.numel();
      for (std::int64_t j : {std::int64_t(0), n / 2, n - 1}) {
        for (int comp = 0; comp < (p.is_complex() ? 2 : 1); ++comp) {
          const Scalar e = comp == 0 ? Scalar(1e-6) : Scalar(std::complex<double>(0, 1e-6));
          double lp, lm;
          {
            NoGradGuard ng;
            Tensor el = p.detach().reshape({-1}).select(0, j);
            el.add_(e);
            lp = loss().item<double>();
            el.sub_(e);
            el.sub_(e);
            lm = loss().item<double>();
            el.add_(e);
          }
          const double num = (lp - lm) / 2e-6;
          const auto g = to_vector<std::complex<double>>(p.grad().to(complex128).reshape({-1}))[static_cast<std::size_t>(j)];
          const double ana = comp == 0 ? g.real() : g.imag();
          CAPTURE(name);
          CAPTURE(j);
          CHECK(std::fabs(num - ana) <= 1e-5 + 1e-4 * std::fabs(num));
        }
      }
    }
  }
}

TEST_CASE("FNO errors") {
  nn::FNO m(nn::FNOOptions().in_channels(2).hidden_channels(4).modes({16}).n_layers(1));
  CHECK_THROWS_WITH_AS(m.forward(randn({1, 3, 64})), doctest::Contains("[FNO] expected 2 input channels, got input of shape (1, 3, 64)"), Error);
  CHECK_THROWS_WITH_AS(m.forward(randn({1, 2, 64, 64})), doctest::Contains("[FNO] expected input (batch, 2, 1 spatial dims) with 3 dims"), Error);
  CHECK_THROWS_WITH_AS(m.forward(randn({1, 2, 20})), doctest::Contains("[FNO] modes (16) exceed what spatial size 20 allows"), Error);
  CHECK_THROWS_WITH_AS(m.forward(zeros({1, 2, 64}, int64)), doctest::Contains("[FNO] expected a real floating input"), Error);
  CHECK_THROWS_WITH_AS(nn::FNO(nn::FNOOptions().modes({})), doctest::Contains("[FNO] expected modes for 1 to 3 spatial dims"), Error);
  CHECK_THROWS_WITH_AS(nn::FNO(nn::FNOOptions().n_layers(0)), doctest::Contains("n_layers=0"), Error);
  CHECK_THROWS_WITH_AS(nn::FNO(nn::FNOOptions().hidden_channels(6).norm(nn::NormType::group).norm_groups(4)),
                       doctest::Contains("norm_groups (4) must divide hidden_channels (6)"), Error);
  CHECK_THROWS_WITH_AS(nn::FNO(nn::FNOOptions().domain_padding(-0.1)), doctest::Contains("domain_padding"), Error);
  CHECK_THROWS_WITH_AS(nn::FNO(nn::FNOOptions().dtype(complex64)), doctest::Contains("float32 or float64"), Error);
}
