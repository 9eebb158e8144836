// tests/test_normalization.cpp - layer/group/instance/batch norm against direct loops (long double),
// gradcheck / gradgradcheck, running statistics over several steps, modules and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;
using phasor::test::check_close;
namespace F = phasor::nn::functional;
using G = std::vector<Tensor>;
using LD = long double;

namespace {

/// Normalizes x over each index set (biased variance), in long double; returns y and the per-set
/// mean and biased variance.
struct SetStats {
  std::vector<double> y;
  std::vector<LD> mean, var;
};
SetStats normalize_sets(const std::vector<double>& x, const std::vector<std::vector<std::size_t>>& sets, double eps) {
  SetStats r;
  r.y.assign(x.size(), 0.0);
  for (const auto& s : sets) {
    LD m = 0;
    for (auto i : s) m += x[i];
    m /= static_cast<LD>(s.size());
    LD v = 0;
    for (auto i : s) v += (x[i] - m) * (x[i] - m);
    v /= static_cast<LD>(s.size());
    for (auto i : s) r.y[i] = static_cast<double>((x[i] - m) / std::sqrt(v + eps));
    r.mean.push_back(m);
    r.var.push_back(v);
  }
  return r;
}

/// Index sets of an (N, C, S) layout.
std::vector<std::vector<std::size_t>> group_sets(std::size_t N, std::size_t C, std::size_t S, std::size_t groups) {
  std::vector<std::vector<std::size_t>> sets;
  const std::size_t cg = C / groups;
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g < groups; ++g) {
      std::vector<std::size_t> s;
      for (std::size_t c = g * cg; c < (g + 1) * cg; ++c)
        for (std::size_t k = 0; k < S; ++k) s.push_back((n * C + c) * S + k);
      sets.push_back(s);
    }
  return sets;
}
std::vector<std::vector<std::size_t>> channel_sets(std::size_t N, std::size_t C, std::size_t S) {
  std::vector<std::vector<std::size_t>> sets(C);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t k = 0; k < S; ++k) sets[c].push_back((n * C + c) * S + k);
  return sets;
}

/// y * w[c] + b[c] on an (N, C, S) layout (empty w/b = identity).
std::vector<double> affine_ref(std::vector<double> y, std::size_t C, std::size_t S, const std::vector<double>& w,
                               const std::vector<double>& b) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t c = (i / S) % C;
    if (!w.empty()) y[i] = static_cast<double>(static_cast<LD>(y[i]) * w[c]);
    if (!b.empty()) y[i] += b[c];
  }
  return y;
}

void check_close_ld(const Tensor& t, const std::vector<LD>& ref, double tol = 1e-12) {
  check_close(t, std::vector<double>(ref.begin(), ref.end()), tol);
}

}  // namespace

TEST_CASE("layer_norm matches a direct loop") {
  manual_seed(1);
  Tensor x = randn({2, 3, 4}, float64) * 3.0 + 1.5;
  auto xv = vals(x);
  // over the last dim: 6 rows of 4
  std::vector<std::vector<std::size_t>> rows4, rows12;
  for (std::size_t r = 0; r < 6; ++r) {
    rows4.emplace_back();
    for (std::size_t k = 0; k < 4; ++k) rows4.back().push_back(r * 4 + k);
  }
  for (std::size_t r = 0; r < 2; ++r) {
    rows12.emplace_back();
    for (std::size_t k = 0; k < 12; ++k) rows12.back().push_back(r * 12 + k);
  }
  check_close(F::layer_norm(x, {4}), normalize_sets(xv, rows4, 1e-5).y);
  check_close(F::layer_norm(x, {4}, Tensor(), Tensor(), 0.1), normalize_sets(xv, rows4, 0.1).y);
  Tensor w = randn({3, 4}, float64), b = randn({3, 4}, float64);
  auto y12 = normalize_sets(xv, rows12, 1e-5).y;
  auto wv = vals(w), bv = vals(b);
  for (std::size_t i = 0; i < y12.size(); ++i) y12[i] = y12[i] * wv[i % 12] + bv[i % 12];
  check_close(F::layer_norm(x, {3, 4}, w, b), y12);
  // a non-contiguous input gives the same result as its contiguous copy
  Tensor xt = randn({4, 5}, float64).t();
  check_close(F::layer_norm(xt, {4}), vals(F::layer_norm(xt.contiguous(), {4})));
  // float32 with a large offset: the two-pass variance keeps its accuracy
  Tensor xf = randn({3, 256}) + 1000.0f;
  std::vector<std::vector<std::size_t>> rf(3);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t k = 0; k < 256; ++k) rf[r].push_back(r * 256 + k);
  Tensor yf = F::layer_norm(xf, {256});
  CHECK(yf.dtype() == float32);
  check_close(yf, normalize_sets(vals(xf), rf, 1e-5).y, 1e-4);
  // large enough to run the threaded path
  Tensor xl = randn({64, 2048}, float64);
  std::vector<std::vector<std::size_t>> rl(64);
  for (std::size_t r = 0; r < 64; ++r)
    for (std::size_t k = 0; k < 2048; ++k) rl[r].push_back(r * 2048 + k);
  check_close(F::layer_norm(xl, {2048}), normalize_sets(vals(xl), rl, 1e-5).y, 1e-11);
}

TEST_CASE("group_norm and instance_norm match direct loops") {
  manual_seed(2);
  const std::size_t N = 2, C = 6, S = 10;
  Tensor x = randn({2, 6, 2, 5}, float64) * 2.0 - 0.5;
  auto xv = vals(x);
  Tensor w = randn({6}, float64), b = randn({6}, float64);
  auto wv = vals(w), bv = vals(b);
  for (std::int64_t g : {1, 2, 3, 6}) {
    auto ref = normalize_sets(xv, group_sets(N, C, S, static_cast<std::size_t>(g)), 1e-5).y;
    check_close(F::group_norm(x, g), ref);
    check_close(F::group_norm(x, g, w, b), affine_ref(ref, C, S, wv, bv));
    check_close(F::group_norm(x, g, w), affine_ref(ref, C, S, wv, {}));
  }
  // instance norm = one group per channel
  auto inst = normalize_sets(xv, group_sets(N, C, S, C), 1e-5);
  check_close(F::instance_norm(x), inst.y);
  check_close(F::instance_norm(x, Tensor(), Tensor(), w, b), affine_ref(inst.y, C, S, wv, bv));
  // running statistics: batch average of per-instance mean and unbiased variance
  Tensor rm = from_vector(std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}), rv = full({6}, 2.0, float64);
  auto rm0 = vals(rm), rv0 = vals(rv);
  F::instance_norm(x, rm, rv, Tensor(), Tensor(), true, 0.25);
  std::vector<LD> want_m(C), want_v(C);
  for (std::size_t c = 0; c < C; ++c) {
    LD mm = 0, vv = 0;
    for (std::size_t n = 0; n < N; ++n) mm += inst.mean[n * C + c], vv += inst.var[n * C + c] * S / (S - 1);
    want_m[c] = 0.75L * rm0[c] + 0.25L * mm / N;
    want_v[c] = 0.75L * rv0[c] + 0.25L * vv / N;
  }
  check_close_ld(rm, want_m);
  check_close_ld(rv, want_v);
  // use_input_stats = false normalizes with the running statistics
  std::vector<double> ev(xv.size());
  auto rmv = vals(rm), rvv = vals(rv);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t c = (i / S) % C;
    ev[i] = static_cast<double>((xv[i] - static_cast<LD>(rmv[c])) / std::sqrt(static_cast<LD>(rvv[c]) + 1e-5L) * wv[c] + bv[c]);
  }
  check_close(F::instance_norm(x, rm, rv, w, b, false), ev);
}

TEST_CASE("batch_norm matches a direct loop; running statistics") {
  manual_seed(3);
  const std::size_t N = 3, C = 4, S = 6;
  Tensor x = randn({3, 4, 6}, float64) * 1.5 + 0.3;
  auto xv = vals(x);
  Tensor w = randn({4}, float64), b = randn({4}, float64);
  auto wv = vals(w), bv = vals(b);
  auto st = normalize_sets(xv, channel_sets(N, C, S), 1e-5);
  check_close(F::batch_norm(x, Tensor(), Tensor(), w, b, true), affine_ref(st.y, C, S, wv, bv));
  Tensor rm = zeros({4}, float64), rv = ones({4}, float64);
  F::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1);
  std::vector<LD> wm(C), wvv(C);
  for (std::size_t c = 0; c < C; ++c) {
    wm[c] = 0.1L * st.mean[c];
    wvv[c] = 0.9L + 0.1L * st.var[c] * (N * S) / (N * S - 1);
  }
  check_close_ld(rm, wm);
  check_close_ld(rv, wvv);
  // eval: (x - rm) / sqrt(rv + eps) * w + b
  std::vector<double> ev(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t c = (i / S) % C;
    ev[i] = static_cast<double>((xv[i] - wm[c]) / std::sqrt(wvv[c] + 1e-5L) * wv[c] + bv[c]);
  }
  check_close(F::batch_norm(x, rm, rv, w, b, false), ev);
  // (N, C) input: statistics over the batch only
  Tensor x2 = randn({5, 3}, float64);
  check_close(F::batch_norm(x2, Tensor(), Tensor(), Tensor(), Tensor(), true), normalize_sets(vals(x2), channel_sets(5, 3, 1), 1e-5).y);
  // a 4-D float32 input keeps its dtype; float32 running stats updated
  Tensor x4 = randn({2, 3, 4, 4});
  Tensor rm4 = zeros({3}), rv4 = ones({3});
  Tensor y4 = F::batch_norm(x4, rm4, rv4, Tensor(), Tensor(), true);
  CHECK(y4.dtype() == float32);
  check_close(y4, normalize_sets(vals(x4), channel_sets(2, 3, 16), 1e-5).y, 1e-5);
  CHECK(vals(rm4)[0] != 0.0);
}

TEST_CASE("normalization: gradcheck and gradgradcheck") {
  manual_seed(4);
  Tensor x = randn({2, 4, 3}, float64).requires_grad_();
  Tensor w34 = randn({4, 3}, float64).requires_grad_(), b34 = randn({4, 3}, float64).requires_grad_();
  Tensor w = randn({4}, float64).requires_grad_(), b = randn({4}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::layer_norm(in[0], {3}); }, {x}));
  CHECK(autodiff::gradcheck([](const G& in) { return F::layer_norm(in[0], {4, 3}, in[1], in[2]); }, {x, w34, b34}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::layer_norm(in[0], {4, 3}, in[1], in[2]); }, {x, w34, b34}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::layer_norm(in[0], {3}, Tensor(), Tensor(), 0.3); }, {x}));
  for (std::int64_t g : {1, 2, 4}) {
    CHECK(autodiff::gradcheck([g](const G& in) { return F::group_norm(in[0], g, in[1], in[2]); }, {x, w, b}));
    CHECK(autodiff::gradgradcheck([g](const G& in) { return F::group_norm(in[0], g, in[1], in[2]); }, {x, w, b}));
  }
  CHECK(autodiff::gradcheck([](const G& in) { return F::instance_norm(in[0], Tensor(), Tensor(), in[1], in[2]); }, {x, w, b}));
  CHECK(autodiff::gradcheck(
      [](const G& in) { return F::batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); }, {x, w, b}));
  CHECK(autodiff::gradgradcheck(
      [](const G& in) { return F::batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); }, {x, w, b}));
  Tensor rm = randn({4}, float64), rv = rand({4}, float64) + 0.5;
  CHECK(autodiff::gradcheck([&](const G& in) { return F::batch_norm(in[0], rm, rv, in[1], in[2], false); }, {x, w, b}));
  CHECK(autodiff::gradcheck(
      [&](const G& in) { return F::instance_norm(in[0], rm, rv, in[1], in[2], false); }, {x, w, b}));
  // gradients flowing into the statistics (the mean and var outputs of the primitive) through the
  // running-statistics-free path are covered by the layer_norm checks; a loss of the normalized
  // output squared exercises every term of the backward
  CHECK(autodiff::gradcheck([](const G& in) { return F::group_norm(in[0] * in[0], 2).square().sum(); }, {x}));
}

TEST_CASE("normalization: the fused first-order backward equals the graph-building backward") {
  manual_seed(8);
  using Fn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
  struct Case {
    const char* name;
    Shape x, w;
    Fn f;
  };
  std::vector<Case> cases{
      {"layer_norm", {3, 5, 7}, {5, 7}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::layer_norm(x, {5, 7}, w, b); }},
      {"layer_norm big", {64, 1030}, {1030}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::layer_norm(x, {1030}, w, b); }},
      {"group_norm", {3, 6, 5}, {6}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::group_norm(x, 3, w, b); }},
      {"group_norm big", {4, 8, 48, 48}, {8}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::group_norm(x, 2, w, b); }},
      {"instance_norm", {3, 4, 6}, {4}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::instance_norm(x, Tensor(), Tensor(), w, b); }},
      {"batch_norm", {5, 4, 3}, {4}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::batch_norm(x, Tensor(), Tensor(), w, b, true); }},
      {"batch_norm big", {16, 3, 60, 60}, {3}, [](const Tensor& x, const Tensor& w, const Tensor& b) { return F::batch_norm(x, Tensor(), Tensor(), w, b, true); }},
  };
  for (auto& cs : cases) {
    INFO(cs.name);
    Tensor x = (randn(cs.x, float64) * 2.0 + 0.5).requires_grad_();
    Tensor w = randn(cs.w, float64).requires_grad_(), b = randn(cs.w, float64).requires_grad_();
    Tensor g = randn(cs.x, float64);
    for (int variant = 0; variant < 3; ++variant) {  // weight and bias, no affine, weight only
      Tensor wv = variant == 1 ? Tensor() : w, bv = variant == 0 ? b : Tensor();
      G in{x};
      if (wv.defined()) in.push_back(wv);
      if (bv.defined()) in.push_back(bv);
      auto fast = autodiff::grad({cs.f(x, wv, bv)}, in, {g});
      auto slow = autodiff::grad({cs.f(x, wv, bv)}, in, {g}, true, /*create_graph=*/true);
      REQUIRE(fast.size() == slow.size());
      for (std::size_t i = 0; i < fast.size(); ++i) check_close(fast[i], vals(slow[i]), 1e-9);
    }
  }
}

TEST_CASE("BatchNorm2d: running statistics over several steps, train and eval") {
  manual_seed(5);
  nn::BatchNorm2d bn(3, 1e-5, 0.2);
  bn.to(float64);
  std::vector<LD> rm(3, 0.0L), rv(3, 1.0L);
  for (int step = 0; step < 3; ++step) {
    Tensor x = randn({2, 3, 2, 3}, float64) * (1.0 + step) + static_cast<double>(step);
    auto st = normalize_sets(vals(x), channel_sets(2, 3, 6), 1e-5);
    Tensor y = bn.forward(x);
    check_close(y, st.y);  // affine starts as identity
    for (std::size_t c = 0; c < 3; ++c) {
      rm[c] = 0.8L * rm[c] + 0.2L * st.mean[c];
      rv[c] = 0.8L * rv[c] + 0.2L * st.var[c] * 12 / 11;
    }
    check_close_ld(bn.running_mean, rm);
    check_close_ld(bn.running_var, rv);
    CHECK(bn.num_batches_tracked.item<std::int64_t>() == step + 1);
  }
  CHECK(bn.num_batches_tracked.dtype() == int64);
  bn.eval();
  Tensor x = randn({2, 3, 2, 3}, float64);
  auto xv = vals(x);
  std::vector<double> ev(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t c = (i / 6) % 3;
    ev[i] = static_cast<double>((xv[i] - rm[c]) / std::sqrt(rv[c] + 1e-5L));
  }
  check_close(bn.forward(x), ev);
  CHECK(bn.num_batches_tracked.item<std::int64_t>() == 3);  // eval leaves the buffers alone
  check_close_ld(bn.running_mean, rm);
  // gradients reach weight and bias
  bn.train();
  Tensor xin = randn({2, 3, 2, 2}, float64);
  (bn.forward(xin) * xin).sum().backward();
  CHECK(bn.weight.grad().defined());
  CHECK(bn.bias.grad().defined());
  check_close(bn.bias.grad(), vals(xin.sum({0, 2, 3})));
}

TEST_CASE("BatchNorm1d: cumulative average, no tracking, (N, C) and (N, C, L)") {
  manual_seed(6);
  nn::BatchNorm1d bn(2, 1e-5, std::nullopt);
  bn.to(float64);
  std::vector<LD> sum_m(2, 0.0L), sum_v(2, 0.0L);
  for (int step = 1; step <= 3; ++step) {
    Tensor x = randn({4, 2, 3}, float64) + static_cast<double>(step);
    auto st = normalize_sets(vals(x), channel_sets(4, 2, 3), 1e-5);
    bn.forward(x);
    for (std::size_t c = 0; c < 2; ++c) sum_m[c] += st.mean[c], sum_v[c] += st.var[c] * 12 / 11;
    // momentum None: the running values are the plain averages of the batch statistics
    // (the initial running values weigh 1 - 1/1 = 0 at the first step)
    check_close_ld(bn.running_mean, {sum_m[0] / step, sum_m[1] / step});
    check_close_ld(bn.running_var, {sum_v[0] / step, sum_v[1] / step});
  }
  Tensor x2 = randn({5, 2}, float64);
  check_close(bn.forward(x2), normalize_sets(vals(x2), channel_sets(5, 2, 1), 1e-5).y);
  // without tracking: batch statistics in eval too, no buffers
  nn::BatchNorm1d nt(2, 1e-5, 0.1, true, false);
  nt.to(float64).eval();
  CHECK(nt.buffers().empty());
  CHECK_FALSE(nt.running_mean.defined());
  check_close(nt.forward(x2), normalize_sets(vals(x2), channel_sets(5, 2, 1), 1e-5).y);
  nn::BatchNorm3d b3(2);
  CHECK(b3.forward(randn({2, 2, 2, 2, 2})).shape() == Shape{2, 2, 2, 2, 2});
}

TEST_CASE("normalization modules: names, defaults, state_dict") {
  nn::BatchNorm2d bn(4);
  auto names = [](const auto& v) {
    std::vector<std::string> out;
    for (auto& p : v) out.push_back(p.first);
    return out;
  };
  CHECK(names(bn.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(names(bn.named_buffers()) == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  auto sd = bn.state_dict();
  CHECK(sd.size() == 5);
  CHECK(vals(sd.at("running_var")) == std::vector<double>(4, 1.0));
  CHECK(vals(sd.at("weight")) == std::vector<double>(4, 1.0));
  CHECK(vals(sd.at("bias")) == std::vector<double>(4, 0.0));
  CHECK(sd.at("num_batches_tracked").dim() == 0);
  // state dicts line up between two instances
  nn::BatchNorm2d other(4);
  { NoGradGuard ng; bn.running_mean.fill_(Scalar(0.5)); }
  other.load_state_dict(bn.state_dict());
  CHECK(vals(other.running_mean) == std::vector<double>(4, 0.5));
  bn.reset_running_stats();
  CHECK(vals(bn.running_mean) == std::vector<double>(4, 0.0));

  nn::InstanceNorm2d in(3);  // affine=false, track_running_stats=false
  CHECK(in.parameters().empty());
  CHECK(in.buffers().empty());
  nn::InstanceNorm1d in_aff(3, 1e-5, 0.1, true, true);
  CHECK(names(in_aff.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(names(in_aff.named_buffers()) == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});

  nn::LayerNorm ln({8});
  CHECK(names(ln.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  nn::LayerNorm ln_nb({8}, 1e-5, true, false);
  CHECK(names(ln_nb.named_parameters()) == std::vector<std::string>{"weight"});
  nn::LayerNorm ln_na({8}, 1e-5, false);
  CHECK(ln_na.parameters().empty());
  nn::GroupNorm gn(2, 6);
  CHECK(names(gn.named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(gn.weight.shape() == Shape{6});
  std::ostringstream os;
  os << bn;
  CHECK(os.str().find("BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)") != std::string::npos);
}

TEST_CASE("normalization modules compute what the functional forms do") {
  manual_seed(7);
  Tensor x = randn({2, 6, 5}, float64);
  nn::LayerNorm ln({6, 5});
  ln.to(float64);
  { NoGradGuard ng; ln.weight.copy_(randn({6, 5}, float64)); ln.bias.copy_(randn({6, 5}, float64)); }
  check_close(ln.forward(x), vals(F::layer_norm(x, {6, 5}, ln.weight, ln.bias)));
  nn::GroupNorm gn(3, 6);
  gn.to(float64);
  check_close(gn.forward(x), normalize_sets(vals(x), group_sets(2, 6, 5, 3), 1e-5).y);
  // InstanceNorm1d: batched and unbatched, tracked statistics used in eval
  nn::InstanceNorm1d in(6, 1e-5, 0.1, false, true);
  in.to(float64);
  auto inst = normalize_sets(vals(x), group_sets(2, 6, 5, 6), 1e-5);
  check_close(in.forward(x), inst.y);
  CHECK(vals(in.running_mean)[0] == doctest::Approx(0.1 * static_cast<double>(inst.mean[0] + inst.mean[6]) / 2));
  CHECK(in.num_batches_tracked.item<std::int64_t>() == 0);  // torch counts only for BatchNorm
  Tensor xu = randn({6, 5}, float64);
  Tensor yu = in.forward(xu);
  CHECK(yu.shape() == Shape{6, 5});
  check_close(yu, normalize_sets(vals(xu), group_sets(1, 6, 5, 6), 1e-5).y);
  in.eval();
  check_close(in.forward(x), vals(F::instance_norm(x, in.running_mean, in.running_var, Tensor(), Tensor(), false)));
  // module backward reaches parameters
  (ln.forward(x).square()).sum().backward();
  CHECK(ln.weight.grad().shape() == Shape{6, 5});
}

TEST_CASE("normalization errors name the op or layer and the shapes") {
  nn::BatchNorm2d bn(16);
  CHECK_THROWS_WITH_AS(bn.forward(randn({4, 8, 5, 5})), "[BatchNorm2d] expected 16 channels, got input (4, 8, 5, 5)", Error);
  CHECK_THROWS_WITH_AS(bn.forward(randn({4, 16, 5})), "[BatchNorm2d] expected 4D input, got input (4, 16, 5)", Error);
  nn::BatchNorm1d bn1(3);
  CHECK_THROWS_WITH_AS(bn1.forward(randn({1, 3})),
                       "[BatchNorm1d] expected more than 1 value per channel when training, got input (1, 3)", Error);
  CHECK(bn1.num_batches_tracked.item<std::int64_t>() == 0);  // a rejected batch is not counted
  CHECK_THROWS_WITH_AS(bn1.forward(randn({2, 3, 4, 4})), "[BatchNorm1d] expected 2D or 3D input, got input (2, 3, 4, 4)",
                       Error);
  bn1.eval();
  CHECK(bn1.forward(randn({1, 3})).shape() == Shape{1, 3});  // eval: one value per channel is fine
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({1, 4}), Tensor(), Tensor(), Tensor(), Tensor(), true),
                       "[batch_norm] expected more than 1 value per channel when training, got input (1, 4)", Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({2, 4}), Tensor(), Tensor()),
                       "[batch_norm] running_mean and running_var are needed in evaluation mode", Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({2, 4}), zeros({3}), ones({3}), Tensor(), Tensor(), true),
                       "[batch_norm] running_mean must have shape (4,) for 4 channels, got (3,)", Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({2, 4}), zeros({4}), Tensor(), Tensor(), Tensor(), true),
                       "[batch_norm] running_mean and running_var must both be given or both be absent", Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({2, 4}), Tensor(), Tensor(), ones({5}), Tensor(), true),
                       "[batch_norm] weight must have shape (4,) for 4 channels, got (5,)", Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({4}), Tensor(), Tensor(), Tensor(), Tensor(), true),
                       "[batch_norm] expected an input with at least 2 dims, got shape (4,)", Error);
  CHECK_THROWS_WITH_AS(F::group_norm(randn({2, 8, 4}), 3),
                       "[group_norm] num_groups 3 must divide the 8 channels of input (2, 8, 4)", Error);
  CHECK_THROWS_WITH_AS(F::group_norm(randn({2, 8, 4}), 2, ones({4})),
                       "[group_norm] weight must have shape (8,) for 8 channels, got (4,)", Error);
  CHECK_THROWS_WITH_AS(nn::GroupNorm(3, 8), "[GroupNorm] num_groups 3 must be positive and divide num_channels 8", Error);
  nn::GroupNorm gn(2, 8);
  CHECK_THROWS_WITH_AS(gn.forward(randn({2, 6, 4})), "[GroupNorm] expected 8 channels, got input (2, 6, 4)", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({2, 3}), {4}),
                       "[layer_norm] normalized_shape (4,) does not match the trailing dims of input (2, 3)", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({3}), {2, 3}),
                       "[layer_norm] normalized_shape (2, 3) does not match the trailing dims of input (3,)", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({2, 3}), {3}, ones({2})),
                       "[layer_norm] weight shape (2,) differs from normalized_shape (3,)", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({2, 3}), {3}, Tensor(), Tensor(), -1.0),
                       doctest::Contains("[layer_norm] eps must be finite and >= 0"), Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({2, 3}), {3}, ones({3}, int64)), "[layer_norm] weight must be real floating, got int64",
                       Error);
  CHECK_THROWS_WITH_AS(F::batch_norm(randn({2, 3}), zeros({3}, int64), ones({3}), Tensor(), Tensor(), true),
                       "[batch_norm] running_mean must be real floating, got int64", Error);
  nn::LayerNorm ln({5});
  CHECK_THROWS_WITH_AS(ln.forward(randn({2, 4})),
                       "[LayerNorm] normalized_shape (5,) does not match the trailing dims of input (2, 4)", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(arange(6).reshape({2, 3}), {3}),
                       "[layer_norm] expected a real floating input, got int64", Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(randn({2, 3}, complex64), {3}),
                       "[layer_norm] expected a real floating input, got complex64", Error);
  CHECK_THROWS_WITH_AS(F::instance_norm(randn({2, 3, 1})),
                       "[instance_norm] expected more than 1 spatial element when training, got input (2, 3, 1)", Error);
  CHECK_THROWS_WITH_AS(F::instance_norm(randn({2, 3, 4}), Tensor(), Tensor(), Tensor(), Tensor(), false),
                       "[instance_norm] running statistics are needed when use_input_stats is false", Error);
  nn::InstanceNorm1d in_cum(3, 1e-5, std::nullopt, false, true);
  CHECK_THROWS_WITH_AS(in_cum.forward(randn({2, 3, 1})),
                       "[InstanceNorm1d] expected more than 1 spatial element when training, got input (2, 3, 1)", Error);
  CHECK(in_cum.num_batches_tracked.item<std::int64_t>() == 0);
  nn::InstanceNorm2d in(4);
  CHECK_THROWS_WITH_AS(in.forward(randn({2, 3, 5, 5})), "[InstanceNorm2d] expected 4 channels, got input (2, 3, 5, 5)", Error);
  CHECK_THROWS_WITH_AS(in.forward(randn({2, 4, 5, 5, 5})), "[InstanceNorm2d] expected 3D or 4D input, got input (2, 4, 5, 5, 5)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(0), "[BatchNorm2d] num_features must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(3, 1e-5, 1.5), doctest::Contains("[BatchNorm2d] momentum must be in [0, 1]"), Error);
  CHECK_THROWS_WITH_AS(nn::LayerNorm(Shape{}), "[LayerNorm] normalized_shape must not be empty", Error);
  // a failed call leaves the running statistics unchanged
  Tensor rm = zeros({4}), rv = ones({4});
  CHECK_THROWS_AS(F::batch_norm(randn({2, 4}), rm, rv, ones({3}), Tensor(), true), Error);
  CHECK(vals(rm) == std::vector<double>(4, 0.0));
}
