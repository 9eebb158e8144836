// tests/test_layers.cpp - nn::init statistics, Linear/Conv modules, Dropout, activations,
// Sequential, ModuleList, MLP: parameter names and shapes, init bounds, forward values, errors.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;
namespace F = phasor::nn::functional;

namespace {

struct Stats {
  double min, max, mean, std;
};
Stats stats(const Tensor& t) {
  auto v = vals(t);
  Stats s{v[0], v[0], 0, 0};
  long double sum = 0, sq = 0;
  for (double e : v) {
    s.min = std::min(s.min, e);
    s.max = std::max(s.max, e);
    sum += e;
  }
  s.mean = static_cast<double>(sum / v.size());
  for (double e : v) sq += (e - s.mean) * (e - s.mean);
  s.std = std::sqrt(static_cast<double>(sq / (v.size() - 1)));
  return s;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = vals(a), y = vals(b);
  REQUIRE(x.size() == y.size());
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

}  // namespace

TEST_CASE("init: gains and fans as torch") {
  CHECK(nn::init::calculate_gain("linear") == 1.0);
  CHECK(nn::init::calculate_gain("conv2d") == 1.0);
  CHECK(nn::init::calculate_gain("sigmoid") == 1.0);
  CHECK(nn::init::calculate_gain("tanh") == doctest::Approx(5.0 / 3.0));
  CHECK(nn::init::calculate_gain("relu") == doctest::Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain("leaky_relu") == doctest::Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(nn::init::calculate_gain("leaky_relu", std::sqrt(5.0)) == doctest::Approx(std::sqrt(1.0 / 3.0)));
  CHECK(nn::init::calculate_gain("selu") == 0.75);
  auto [fi, fo] = nn::init::calculate_fan_in_and_fan_out(zeros({16, 3, 3, 5}));
  CHECK(fi == 45);
  CHECK(fo == 240);
  CHECK(nn::init::calculate_fan_in_and_fan_out(zeros({7, 4})) == std::pair<std::int64_t, std::int64_t>{4, 7});
  CHECK_THROWS_WITH_AS(nn::init::calculate_gain("swish"), "[calculate_gain] unsupported nonlinearity 'swish'", Error);
  CHECK_THROWS_WITH_AS(nn::init::calculate_fan_in_and_fan_out(zeros({5})),
                       "[calculate_fan_in_and_fan_out] fan in and fan out can not be computed for a tensor with fewer "
                       "than 2 dims, got (5,)",
                       Error);
}

TEST_CASE("init: bounds and moments on large tensors") {
  manual_seed(21);
  Tensor t = empty({400, 500}, float64);  // fan_in 500, fan_out 400
  nn::init::uniform_(t, -2.0, 3.0);
  Stats s = stats(t);
  CHECK(s.min >= -2.0);
  CHECK(s.max < 3.0);
  CHECK(s.mean == doctest::Approx(0.5).epsilon(0.01));
  CHECK(s.std == doctest::Approx(5.0 / std::sqrt(12.0)).epsilon(0.01));

  nn::init::normal_(t, 1.0, 2.0);
  s = stats(t);
  CHECK(s.mean == doctest::Approx(1.0).epsilon(0.01));
  CHECK(s.std == doctest::Approx(2.0).epsilon(0.01));

  // kaiming_uniform_(a=0, fan_in, leaky_relu): bound = sqrt(3) * sqrt(2 / (1 + 0)) / sqrt(500)
  nn::init::kaiming_uniform_(t);
  double bound = std::sqrt(6.0 / 500.0);
  s = stats(t);
  CHECK(s.min >= -bound);
  CHECK(s.max <= bound);
  CHECK(s.max > 0.99 * bound);
  CHECK(s.std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.01));

  nn::init::kaiming_normal_(t, 0.0, nn::init::FanMode::fan_out, "relu");
  s = stats(t);
  CHECK(std::abs(s.mean) < 0.003);
  CHECK(s.std == doctest::Approx(std::sqrt(2.0 / 400.0)).epsilon(0.01));

  nn::init::xavier_uniform_(t, 2.0);
  bound = 2.0 * std::sqrt(6.0 / 900.0);
  s = stats(t);
  CHECK(s.min >= -bound);
  CHECK(s.max <= bound);
  CHECK(s.std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.01));

  nn::init::xavier_normal_(t);
  s = stats(t);
  CHECK(s.std == doctest::Approx(std::sqrt(2.0 / 900.0)).epsilon(0.01));

  nn::init::constant_(t, 0.25);
  CHECK(stats(t).min == 0.25);
  CHECK(stats(t).max == 0.25);
  nn::init::zeros_(t);
  CHECK(stats(t).max == 0.0);
  nn::init::ones_(t);
  CHECK(stats(t).min == 1.0);

  // float32 and complex: each part in bounds
  Tensor c = empty({200, 300}, complex64);
  nn::init::kaiming_uniform_(c, std::sqrt(5.0));
  bound = 1.0 / std::sqrt(300.0);
  for (const Tensor& part : {real(c), imag(c)}) {
    s = stats(part);
    CHECK(s.min >= -bound);
    CHECK(s.max <= bound);
    CHECK(s.std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  }
  // a generator makes it reproducible
  Tensor a = empty({10, 10}), b = empty({10, 10});
  Generator g1(9), g2(9);
  nn::init::xavier_normal_(a, 1.0, &g1);
  nn::init::xavier_normal_(b, 1.0, &g2);
  CHECK(max_abs_diff(a, b) == 0.0);
}

TEST_CASE("init: in place, no gradient recorded; bad input") {
  Tensor w = zeros({4, 3}).requires_grad_();
  Tensor before = w;
  nn::init::kaiming_uniform_(w);
  CHECK(w.is_same(before));
  CHECK(w.is_leaf());
  CHECK(w.requires_grad());
  CHECK(stats(w).max > 0.0);
  Tensor i = zeros({3, 3}, int64);
  CHECK_THROWS_WITH_AS(nn::init::uniform_(i), "[uniform_] expected a floating or complex tensor, got int64 of shape (3, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::init::uniform_(w, 1.0, 0.0), "[uniform_] expected a <= b, got a=1 and b=0", Error);
  CHECK_THROWS_WITH_AS(nn::init::normal_(w, 0.0, -1.0), "[normal_] expected std >= 0, got -1", Error);
  Tensor v = zeros({5});
  CHECK_THROWS_AS(nn::init::xavier_uniform_(v), Error);
}

TEST_CASE("Linear: parameters, init bounds, forward, printing") {
  manual_seed(31);
  auto lin = std::make_shared<nn::Linear>(20, 7);
  auto named = lin->named_parameters();
  REQUIRE(named.size() == 2);
  CHECK(named[0].first == "weight");
  CHECK(named[1].first == "bias");
  CHECK(lin->weight.shape() == Shape{7, 20});
  CHECK(lin->bias.shape() == Shape{7});
  CHECK(lin->weight.dtype() == float32);
  const double bound = 1.0 / std::sqrt(20.0);
  for (const Tensor& p : {lin->weight, lin->bias}) {
    Stats s = stats(p);
    CHECK(s.min >= -bound);
    CHECK(s.max <= bound);
    CHECK(s.max - s.min > bound);  // actually spread
  }
  Tensor x = randn({3, 5, 20});
  Tensor y = lin->forward(x);
  CHECK(y.shape() == Shape{3, 5, 7});
  CHECK(max_abs_diff(y, matmul(x, lin->weight.t()) + lin->bias) < 1e-6);
  y.sum().backward();
  CHECK(lin->weight.grad().shape() == Shape{7, 20});
  CHECK(repr(*lin) == "Linear(in_features=20, out_features=7, bias=true)  # 147 parameters");
  nn::Linear nb(nn::LinearOptions(3, 2).bias(false).dtype(float64));
  CHECK_FALSE(nb.bias.defined());
  CHECK(nb.parameters().size() == 1);
  CHECK(nb.weight.dtype() == float64);
  CHECK(nb.extra_repr() == "in_features=3, out_features=2, bias=false");
  CHECK_THROWS_WITH_AS(lin->forward(randn({8, 4})), "[Linear] expected input with 20 features in the last dim, got (8, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::Linear(3, 2, true, int64), "[Linear] parameter dtype must be floating or complex, got int64",
                       Error);
}

TEST_CASE("Conv modules: shapes, init, forward = functional, printing") {
  manual_seed(32);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  CHECK(conv.weight.shape() == Shape{6, 2, 3, 3});
  CHECK(conv.bias.shape() == Shape{6});
  const double bound = 1.0 / std::sqrt(2.0 * 9.0);  // fan_in = in / groups * k*k
  for (const Tensor& p : {conv.weight, conv.bias}) {
    CHECK(stats(p).min >= -bound);
    CHECK(stats(p).max <= bound);
  }
  Tensor x = randn({2, 4, 9, 8});
  Tensor y = conv.forward(x);
  CHECK(y.shape() == Shape{2, 6, 5, 4});
  CHECK(max_abs_diff(y, F::conv2d(x, conv.weight, conv.bias, 2, 1, 1, 2)) == 0.0);
  CHECK(conv.extra_repr() == "4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2");
  CHECK(repr(conv) == "Conv2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2)  # 114 parameters");

  nn::Conv1d c1(nn::Conv1dOptions(3, 5, 4).padding("same").dilation(2).bias(false).padding_mode(nn::PaddingMode::circular));
  CHECK(c1.weight.shape() == Shape{5, 3, 4});
  CHECK(c1.parameters().size() == 1);
  CHECK(c1.extra_repr() == "3, 5, kernel_size=(4,), stride=(1,), padding=same, dilation=(2,), bias=false, padding_mode=circular");
  Tensor x1 = randn({3, 11});  // unbatched
  CHECK(c1.forward(x1).shape() == Shape{5, 11});
  CHECK(max_abs_diff(c1.forward(x1),
                     F::conv1d(x1, c1.weight, Tensor(), 1, "same", 2, 1, nn::PaddingMode::circular)) == 0.0);

  nn::Conv3d c3(2, 3, {1, 2, 3});
  CHECK(c3.weight.shape() == Shape{3, 2, 1, 2, 3});
  CHECK(c3.forward(randn({1, 2, 4, 4, 4})).shape() == Shape{1, 3, 4, 3, 2});
  CHECK(c3.extra_repr() == "2, 3, kernel_size=(1, 2, 3), stride=(1, 1, 1)");
  nn::Conv2d c64(nn::Conv2dOptions(1, 1, 1).dtype(float64));
  CHECK(c64.weight.dtype() == float64);

  // the module trains: gradients reach weight and bias
  conv.forward(x).square().sum().backward();
  CHECK(conv.weight.grad().shape() == conv.weight.shape());
  CHECK(conv.bias.grad().shape() == Shape{6});
}

TEST_CASE("Conv modules: bad input") {
  nn::Conv2d conv(3, 16, 3);
  Tensor x = randn({8, 4, 32, 32});
  Tensor xc = x.clone();
  CHECK_THROWS_WITH_AS(conv.forward(x), "[Conv2d] expected input with 3 channels, got (8, 4, 32, 32)", Error);
  CHECK(max_abs_diff(x, xc) == 0.0);
  CHECK_THROWS_WITH_AS(conv.forward(randn({3, 32})), "[Conv2d] expected a 3-D (unbatched) or 4-D (batched) input, got (3, 32)",
                       Error);
  CHECK_THROWS_WITH_AS(conv.forward(randn({1, 3, 2, 5})),
                       "[Conv2d] kernel (3, 3) with dilation (1, 1) spans (3, 3), larger than the padded input (2, 5) of "
                       "input (1, 3, 2, 5)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).groups(2)),
                       "[Conv2d] in_channels 3 must be divisible by groups 2", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)),
                       "[Conv2d] out_channels 6 must be divisible by groups 4", Error);
  CHECK_THROWS_WITH_AS(nn::Conv1d(nn::Conv1dOptions(4, 6, 3).groups(0)), "[Conv1d] groups must be >= 1, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).stride({1, 0})), "[Conv2d] stride must be >= 1, got (1, 0)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::Conv3d(nn::Conv3dOptions(3, 16, 3).dilation(0)),
                       "[Conv3d] dilation must be >= 1, got (0, 0, 0)", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(-1)),
                       "[Conv2d] padding must be >= 0, got (-1, -1)", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding("same").stride(2)),
                       "[Conv2d] padding='same' is not supported for strided convolutions (stride (2, 2))", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, {3, 3, 3})),
                       "[Conv2d] kernel_size (3, 3, 3) must have 1 or 2 entries", Error);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 16, 0)), "[Conv2d] kernel_size must be >= 1, got (0, 0)", Error);
  CHECK_THROWS_WITH_AS(nn::Conv1d(0, 4, 3), "[Conv1d] in_channels and out_channels must be positive, got 0 and 4", Error);
  nn::Conv1d refl(nn::Conv1dOptions(2, 2, 3).padding(3).padding_mode(nn::PaddingMode::reflect));
  CHECK_THROWS_WITH_AS(refl.forward(randn({1, 2, 3})),
                       "[Conv1d] reflect padding (3,) is too large for input (1, 2, 3) (must be smaller than each "
                       "spatial size)",
                       Error);
}

TEST_CASE("Dropout module: train vs eval, scaling, seeding") {
  nn::Dropout drop(0.25);
  CHECK(drop.extra_repr() == "p=0.25");
  Tensor x = ones({20000});
  manual_seed(41);
  Tensor a = drop.forward(x);
  auto av = vals(a);
  std::int64_t kept = 0;
  bool scaled = true;
  for (double e : av) {
    if (e != 0.0) {
      ++kept;
      scaled = scaled && std::abs(e - 1.0 / 0.75) < 1e-6;
    }
  }
  CHECK(scaled);
  CHECK(std::abs(kept / 20000.0 - 0.75) < 0.02);
  manual_seed(41);
  CHECK(max_abs_diff(drop.forward(x), a) == 0.0);  // same seed, same mask
  CHECK(max_abs_diff(drop.forward(x), a) > 0.0);   // the stream moved on
  drop.eval();
  CHECK(drop.forward(x).is_same(x));
  drop.train();
  CHECK_FALSE(drop.forward(x).is_same(x));
  CHECK(stats(nn::Dropout(1.0).forward(x)).max == 0.0);
  CHECK_THROWS_WITH_AS(nn::Dropout(1.5), "[Dropout] p must be in [0, 1], got 1.5", Error);
  CHECK_THROWS_WITH_AS(nn::Dropout(-0.5), "[Dropout] p must be in [0, 1], got -0.5", Error);
  nn::Dropout later(0.5);
  later.p = 2.0;
  CHECK_THROWS_WITH_AS(later.forward(x), "[Dropout] p must be in [0, 1], got 2", Error);
}

TEST_CASE("activation modules") {
  Tensor x = randn({50}, float64) * 3.0;
  CHECK(max_abs_diff(nn::ReLU().forward(x), relu(x)) == 0.0);
  CHECK(max_abs_diff(nn::GELU().forward(x), gelu(x)) == 0.0);
  CHECK(max_abs_diff(nn::GELU("tanh").forward(x), gelu(x, true)) == 0.0);
  CHECK(max_abs_diff(nn::Tanh().forward(x), tanh(x)) == 0.0);
  CHECK(max_abs_diff(nn::SiLU().forward(x), silu(x)) == 0.0);
  CHECK(max_abs_diff(nn::Sigmoid().forward(x), sigmoid(x)) == 0.0);
  CHECK(max_abs_diff(nn::Softplus(2.0, 5.0).forward(x), softplus(x, 2.0, 5.0)) == 0.0);
  CHECK(nn::Identity().forward(x).is_same(x));
  CHECK(nn::GELU("tanh").extra_repr() == "approximate='tanh'");
  CHECK(nn::Softplus().extra_repr() == "beta=1, threshold=20");
  CHECK(repr(nn::ReLU()) == "ReLU()");
  CHECK_THROWS_WITH_AS(nn::GELU("fast"), "[GELU] approximate must be 'none' or 'tanh', got 'fast'", Error);
}

TEST_CASE("Sequential and ModuleList") {
  manual_seed(51);
  auto l0 = std::make_shared<nn::Linear>(3, 4);
  auto l2 = std::make_shared<nn::Linear>(4, 2);
  nn::Sequential seq({l0, std::make_shared<nn::Tanh>(), l2});
  CHECK(seq.size() == 3);
  auto names = seq.named_parameters();
  REQUIRE(names.size() == 4);
  CHECK(names[0].first == "0.weight");
  CHECK(names[1].first == "0.bias");
  CHECK(names[2].first == "2.weight");
  CHECK(names[3].first == "2.bias");
  CHECK(seq.state_dict().count("2.bias") == 1);
  CHECK(seq[1]->name() == "Tanh");
  CHECK(seq.at<nn::Linear>(2)->weight.is_same(l2->weight));
  CHECK_THROWS_WITH_AS(seq.at<nn::Linear>(1), "[Sequential] module 1 is a Tanh, not the requested type", Error);
  CHECK_THROWS_WITH_AS(seq[3], "[Sequential] index 3 out of range for 3 modules", Error);
  Tensor x = randn({5, 3});
  CHECK(max_abs_diff(seq.forward(x), l2->forward(tanh(l0->forward(x)))) == 0.0);
  CHECK(repr(seq) ==
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=true)  # 16 parameters\n"
        "  (1): Tanh()\n"
        "  (2): Linear(in_features=4, out_features=2, bias=true)  # 10 parameters\n"
        ")  # 26 parameters");
  nn::Sequential empty_seq;
  CHECK(empty_seq.forward(x).is_same(x));
  empty_seq.push_back("head", std::make_shared<nn::Linear>(3, 1));
  CHECK(empty_seq.named_parameters()[0].first == "head.weight");

  nn::ModuleList list;
  list.push_back(std::make_shared<nn::Linear>(2, 2)).push_back(std::make_shared<nn::ReLU>());
  CHECK(list.size() == 2);
  CHECK(list.named_parameters()[0].first == "0.weight");
  int n = 0;
  for (const auto& m : list) n += m->name() == "Linear" ? 1 : 0;
  CHECK(n == 1);
  CHECK_THROWS_WITH_AS(list.forward(x), "[ModuleList] this module has no single-tensor forward", Error);
  CHECK_THROWS_WITH_AS(list[2], "[ModuleList] index 2 out of range for 2 modules", Error);
}

TEST_CASE("MLP: torchvision layout on the last dim") {
  manual_seed(61);
  nn::MLP mlp(nn::MLPOptions(4, {8, 8, 2}).activation(nn::Activation::gelu).dropout(0.2));
  REQUIRE(mlp.size() == 8);  // Linear GELU Dropout Linear GELU Dropout Linear Dropout
  CHECK(mlp[1]->name() == "GELU");
  CHECK(mlp[7]->name() == "Dropout");
  auto names = mlp.named_parameters();
  REQUIRE(names.size() == 6);
  CHECK(names[0].first == "0.weight");
  CHECK(names[2].first == "3.weight");
  CHECK(names[4].first == "6.weight");
  CHECK(mlp.at<nn::Linear>(6)->weight.shape() == Shape{2, 8});
  CHECK(mlp.num_parameters() == 4 * 8 + 8 + 8 * 8 + 8 + 8 * 2 + 2);
  Tensor x = randn({3, 5, 4});
  mlp.eval();
  auto L = [&](std::size_t i) { return mlp.at<nn::Linear>(i); };
  Tensor ref = L(6)->forward(gelu(L(3)->forward(gelu(L(0)->forward(x)))));
  Tensor y = mlp.forward(x);
  CHECK(y.shape() == Shape{3, 5, 2});
  CHECK(max_abs_diff(y, ref) == 0.0);
  mlp.train();
  CHECK(max_abs_diff(mlp.forward(x), ref) > 0.0);  // dropout active

  int made = 0;
  nn::MLP custom(nn::MLPOptions(2, {3, 3, 1}).bias(false).activation([&made] {
    ++made;
    return std::make_shared<nn::Softplus>(2.0);
  }));
  CHECK(made == 2);
  CHECK(custom.parameters().size() == 3);
  CHECK(custom[1]->name() == "Softplus");
  CHECK_THROWS_WITH_AS(nn::MLP(nn::MLPOptions(2, {})), "[MLP] hidden_features must name at least one layer size", Error);
  CHECK_THROWS_WITH_AS(nn::MLP(nn::MLPOptions(2, {3}).dropout(1.5)), "[MLP] dropout must be in [0, 1], got 1.5", Error);
}

TEST_CASE("layers train end to end: a small conv net's gradients match finite differences") {
  manual_seed(71);
  nn::Sequential net({std::make_shared<nn::Conv1d>(nn::Conv1dOptions(2, 3, 3).padding(1).dtype(float64)),
                      std::make_shared<nn::Tanh>(),
                      std::make_shared<nn::Conv1d>(nn::Conv1dOptions(3, 1, 1).dtype(float64))});
  Tensor x = randn({2, 2, 6}, float64);
  auto params = net.parameters();
  CHECK(autodiff::gradcheck(
      [&](const std::vector<Tensor>& in) {
        Tensor h = F::conv1d(x, in[0], in[1], 1, 1);
        return F::conv1d(tanh(h), in[2], in[3]);
      },
      {params[0].detach().requires_grad_(), params[1].detach().requires_grad_(), params[2].detach().requires_grad_(),
       params[3].detach().requires_grad_()}));
  net.forward(x).sum().backward();
  for (const auto& p : net.parameters()) CHECK(p.grad().defined());
}
