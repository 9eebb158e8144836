// tests/test_loss_extra.cpp - the probabilistic, margin and embedding losses, distances, one_hot and
// embedding / embedding_bag against direct loops in long double from the documented formulas, every
// reduction, broadcasting, edge cases, float64 gradcheck, and the errors they promise.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::check_close;
using phasor::test::vals;
using phasor::test::ivals;
using doctest::Contains;
namespace F = phasor::nn::functional;
using nn::Reduction;
using G = std::vector<Tensor>;
using LD = long double;

namespace {

const LD kPiL = 3.141592653589793238462643383279502884L;

/// Reduces per-element values as a Reduction does (batchmean divides the sum by `batch`).
std::vector<double> reduce_ref(const std::vector<LD>& v, Reduction r, std::int64_t batch = 1) {
  if (r == Reduction::none) return std::vector<double>(v.begin(), v.end());
  LD s = 0;
  for (LD x : v) s += x;
  if (r == Reduction::mean) s /= static_cast<LD>(v.size());
  if (r == Reduction::batchmean) s /= static_cast<LD>(batch);
  return {static_cast<double>(s)};
}

const Reduction kReductions[] = {Reduction::none, Reduction::mean, Reduction::sum};

LD softplus_ref(LD x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

/// Uniform values in (lo, hi), float64.
Tensor uniform64(const Shape& s, double lo, double hi) { return rand(s, float64) * (hi - lo) + lo; }

/// Broadcast index: the element of a tensor of shape `ws` (right-aligned) for flat index i of shape `s`.
std::size_t bidx(const Shape& s, const Shape& ws, std::size_t i) {
  std::size_t out = 0, stride = 1;
  for (std::size_t k = 0; k < ws.size(); ++k) {
    const std::size_t dim_s = s.size() - 1 - k, dim_w = ws.size() - 1 - k;
    std::size_t inner = 1;
    for (std::size_t j = dim_s + 1; j < s.size(); ++j) inner *= static_cast<std::size_t>(s[j]);
    const std::size_t c = (i / inner) % static_cast<std::size_t>(s[dim_s]);
    if (ws[dim_w] != 1) out += c * stride;
    stride *= static_cast<std::size_t>(ws[dim_w]);
  }
  return out;
}

}  // namespace

// ---- binary cross entropy --------------------------------------------------------------------------------

TEST_CASE("binary_cross_entropy matches the clamped-log formula, with weights and at 0 and 1") {
  manual_seed(11);
  Tensor x = uniform64({4, 5}, 0.01, 0.99), t = rand({4, 5}, float64);
  // edges: x exactly 0 and 1 with targets 0 and 1 (the log clamp at -100)
  x.index_put_({0, 0}, 0.0); t.index_put_({0, 0}, 0.0);
  x.index_put_({0, 1}, 0.0); t.index_put_({0, 1}, 1.0);
  x.index_put_({0, 2}, 1.0); t.index_put_({0, 2}, 1.0);
  x.index_put_({0, 3}, 1.0); t.index_put_({0, 3}, 0.3);
  Tensor w = uniform64({5}, 0.5, 2.0);
  auto xv = vals(x), tv = vals(t), wv = vals(w);
  for (bool weighted : {false, true})
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t i = 0; i < xv.size(); ++i) {
        const LD lx = xv[i] > 0 ? std::max<LD>(std::log(static_cast<LD>(xv[i])), -100) : -100;
        const LD l1x = xv[i] < 1 ? std::max<LD>(std::log(1 - static_cast<LD>(xv[i])), -100) : -100;
        ref.push_back(-(weighted ? wv[i % 5] : 1) * (tv[i] * lx + (1 - static_cast<LD>(tv[i])) * l1x));
      }
      check_close(F::binary_cross_entropy(x, t, weighted ? w : Tensor(), r), reduce_ref(ref, r));
    }
  CHECK(vals(F::binary_cross_entropy(x, t, Tensor(), Reduction::none))[1] == doctest::Approx(100.0));
  // finite gradients at 0 and 1 (the clamped log's derivative is 0 there)
  Tensor xg = x.detach().clone().requires_grad_();
  F::binary_cross_entropy(xg, t).backward();
  for (double g : vals(xg.grad())) CHECK(std::isfinite(g));
  CHECK(F::binary_cross_entropy(x.to(float32), t.to(float32)).dtype() == float32);
}

TEST_CASE("binary_cross_entropy: gradcheck in input, target and weight; errors") {
  manual_seed(12);
  Tensor x = uniform64({3, 4}, 0.1, 0.9).requires_grad_(), t = uniform64({3, 4}, 0, 1).requires_grad_();
  Tensor w = uniform64({4}, 0.5, 2).requires_grad_();
  for (Reduction r : kReductions)
    CHECK(autodiff::gradcheck([r](const G& in) { return F::binary_cross_entropy(in[0], in[1], in[2], r); }, {x, t, w}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::binary_cross_entropy(in[0], in[1]); }, {x, t}));
  const Tensor a = full({2, 3}, 0.5, float64);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy(a, full({3, 2}, 0.5, float64)),
                       "[binary_cross_entropy] input shape (2, 3) and target shape (3, 2) differ (losses do not broadcast)",
                       Error);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy(a * 3.0, a), Contains("[binary_cross_entropy] all elements of input should be between 0 and 1, got 1.5"), Error);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy(a, a, ones({2}, float64)),
                       "[binary_cross_entropy] weight of shape (2,) does not broadcast to the input's shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy(a, a, Tensor(), Reduction::batchmean),
                       Contains("[binary_cross_entropy] reduction 'batchmean' is only valid for kl_div"), Error);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy(a, a, Tensor(), static_cast<Reduction>(9)),
                       "[binary_cross_entropy] unknown reduction value 9", Error);
}

TEST_CASE("binary_cross_entropy_with_logits matches the formula, stable for large logits, with pos_weight") {
  manual_seed(13);
  Tensor x = randn({4, 3}, float64) * 4.0, t = rand({4, 3}, float64);
  x.index_put_({0, 0}, 60.0); x.index_put_({0, 1}, -60.0); x.index_put_({0, 2}, 0.0);
  x.index_put_({1, 0}, 800.0); x.index_put_({1, 1}, -800.0);
  t.index_put_({0, 0}, 0.0); t.index_put_({0, 1}, 1.0);
  Tensor w = uniform64({4, 1}, 0.5, 2), pw = uniform64({3}, 0.2, 3);
  auto xv = vals(x), tv = vals(t), wv = vals(w), pv = vals(pw);
  for (int mode = 0; mode < 4; ++mode) {
    const bool useW = mode & 1, useP = mode & 2;
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t i = 0; i < xv.size(); ++i) {
        const LD X = xv[i], T = tv[i], P = useP ? pv[i % 3] : 1, W = useW ? wv[i / 3] : 1;
        // torch's documented form: (1 - t) x + (1 + (pw - 1) t) (log(1 + e^-|x|) + max(-x, 0))
        ref.push_back(W * ((1 - T) * X + (1 + (P - 1) * T) * (std::log1p(std::exp(-std::fabs(X))) + std::max<LD>(-X, 0))));
      }
      check_close(F::binary_cross_entropy_with_logits(x, t, useW ? w : Tensor(), r, useP ? pw : Tensor()),
                  reduce_ref(ref, r), 1e-12);
    }
  }
  // the gradient at x = 0 is sigmoid(0) - t = 0.5 - t (no kink)
  Tensor z = zeros({2}, float64).requires_grad_();
  F::binary_cross_entropy_with_logits(z, test::vec({0.0, 1.0}), Tensor(), Reduction::sum).backward();
  check_close(z.grad(), {0.5, -0.5});
  Tensor xs = randn({3, 4}, float64).requires_grad_(), ts = rand({3, 4}, float64).requires_grad_();
  Tensor ws = uniform64({4}, 0.5, 2).requires_grad_(), ps = uniform64({4}, 0.5, 2).requires_grad_();
  for (Reduction r : kReductions)
    CHECK(autodiff::gradcheck(
        [r](const G& in) { return F::binary_cross_entropy_with_logits(in[0], in[1], in[2], r, in[3]); }, {xs, ts, ws, ps}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::binary_cross_entropy_with_logits(in[0], in[1]); }, {xs, ts}));
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy_with_logits(xs, ts.narrow(1, 0, 2)),
                       "[binary_cross_entropy_with_logits] input shape (3, 4) and target shape (3, 2) differ (losses do not broadcast)",
                       Error);
  CHECK_THROWS_WITH_AS(F::binary_cross_entropy_with_logits(xs, ts, Tensor(), Reduction::mean, ones({3}, float64)),
                       "[binary_cross_entropy_with_logits] pos_weight of shape (3,) does not broadcast to the input's shape (3, 4)",
                       Error);
}

// ---- kl_div, poisson, gaussian ------------------------------------------------------------------------------

TEST_CASE("kl_div: both target forms, every reduction including batchmean, zeros in the target") {
  manual_seed(14);
  Tensor x = F::log_softmax(randn({3, 5}, float64), 1), p = F::softmax(randn({3, 5}, float64), 1);
  p.index_put_({1, 2}, 0.0);
  Tensor lt = F::log_softmax(randn({3, 5}, float64), 1);
  auto xv = vals(x), pv = vals(p), lv = vals(lt);
  std::vector<LD> plain, logt;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    plain.push_back(pv[i] > 0 ? pv[i] * (std::log(static_cast<LD>(pv[i])) - xv[i]) : 0);
    logt.push_back(std::exp(static_cast<LD>(lv[i])) * (static_cast<LD>(lv[i]) - xv[i]));
  }
  for (Reduction r : {Reduction::none, Reduction::mean, Reduction::sum, Reduction::batchmean}) {
    check_close(F::kl_div(x, p, r), reduce_ref(plain, r, 3));
    check_close(F::kl_div(x, lt, r, true), reduce_ref(logt, r, 3));
  }
  CHECK(nn::reduction_from_string("batchmean") == Reduction::batchmean);
  // 0-d input: batchmean is the sum
  check_close(F::kl_div(full({}, -0.5, float64), full({}, 0.25, float64), Reduction::batchmean),
              {static_cast<double>(0.25L * (std::log(0.25L) + 0.5L))});
  Tensor xg = x.detach().clone().requires_grad_(), pg = F::softmax(randn({3, 5}, float64), 1).requires_grad_();
  Tensor lg = lt.detach().clone().requires_grad_();
  for (Reduction r : {Reduction::none, Reduction::mean, Reduction::sum, Reduction::batchmean}) {
    CHECK(autodiff::gradcheck([r](const G& in) { return F::kl_div(in[0], in[1], r); }, {xg, pg}));
    CHECK(autodiff::gradcheck([r](const G& in) { return F::kl_div(in[0], in[1], r, true); }, {xg, lg}));
  }
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::kl_div(in[0], in[1], Reduction::batchmean); }, {xg, pg}));
  CHECK_THROWS_WITH_AS(F::kl_div(x, p.narrow(0, 0, 2)),
                       "[kl_div] input shape (3, 5) and target shape (2, 5) differ (losses do not broadcast)", Error);
  CHECK_THROWS_WITH_AS(F::mse_loss(x, p, Reduction::batchmean),
                       "[mse_loss] reduction 'batchmean' is only valid for kl_div; expected none, mean or sum", Error);
}

TEST_CASE("poisson_nll_loss: log and linear inputs, the Stirling term, gradcheck") {
  manual_seed(15);
  Tensor x = uniform64({2, 6}, 0.1, 3), t = from_vector(std::vector<double>{0, 0.5, 1, 1.5, 3, 7, 0.2, 2, 1, 4, 0, 9}, Shape{2, 6});
  auto xv = vals(x), tv = vals(t);
  for (bool log_input : {true, false})
    for (bool full : {false, true})
      for (Reduction r : kReductions) {
        std::vector<LD> ref;
        for (std::size_t i = 0; i < xv.size(); ++i) {
          const LD X = xv[i], T = tv[i];
          LD l = log_input ? std::exp(X) - T * X : X - T * std::log(X + 1e-8L);
          if (full && T > 1) l += T * std::log(T) - T + 0.5L * std::log(2 * kPiL * T);
          ref.push_back(l);
        }
        CAPTURE(log_input);
        CAPTURE(full);
        check_close(F::poisson_nll_loss(x, t, log_input, full, 1e-8, r), reduce_ref(ref, r));
      }
  // eps matters only for the linear input
  check_close(F::poisson_nll_loss(zeros({1}, float64), full({1}, 2.0, float64), false, false, 0.5, Reduction::sum),
              {static_cast<double>(-2 * std::log(0.5L))});
  Tensor xg = x.detach().clone().requires_grad_(), tg = uniform64({2, 6}, 0.1, 4).requires_grad_();
  for (bool log_input : {true, false})
    for (bool full : {false, true})
      CHECK(autodiff::gradcheck(
          [=](const G& in) { return F::poisson_nll_loss(in[0], in[1], log_input, full, 1e-8, Reduction::sum); }, {xg, tg}));
  // targets 0 and 1 with full: finite gradients (the masked Stirling term never reads log 0)
  Tensor t01 = from_vector(std::vector<double>{0, 1}).requires_grad_();
  F::poisson_nll_loss(full({2}, 0.3, float64), t01, true, true).backward();
  for (double g : vals(t01.grad())) CHECK(std::isfinite(g));
  CHECK_THROWS_WITH_AS(F::poisson_nll_loss(x, t.narrow(1, 0, 3)),
                       "[poisson_nll_loss] input shape (2, 6) and target shape (2, 3) differ (losses do not broadcast)", Error);
  CHECK_THROWS_WITH_AS(F::poisson_nll_loss(x, t, true, false, -1.0), Contains("[poisson_nll_loss] eps must be >= 0"), Error);
}

TEST_CASE("gaussian_nll_loss: heteroscedastic and homoscedastic var, the eps clamp, full, gradcheck, errors") {
  manual_seed(16);
  Tensor x = randn({3, 4}, float64), t = randn({3, 4}, float64);
  Tensor v_full = uniform64({3, 4}, 0.2, 2), v_short = uniform64({3}, 0.2, 2), v_one = uniform64({3, 1}, 0.2, 2);
  v_full.index_put_({0, 0}, 0.0);  // clamped to eps
  v_full.index_put_({1, 1}, 1e-9);
  auto xv = vals(x), tv = vals(t);
  const double eps = 1e-6;
  for (const Tensor& var : {v_full, v_short, v_one}) {
    auto vv = vals(var);
    const bool per_row = var.numel() == 3;
    for (bool full : {false, true})
      for (Reduction r : kReductions) {
        std::vector<LD> ref;
        for (std::size_t i = 0; i < xv.size(); ++i) {
          const LD V = std::max<LD>(per_row ? vv[i / 4] : vv[i], eps), d = static_cast<LD>(xv[i]) - tv[i];
          ref.push_back(0.5L * (std::log(V) + d * d / V) + (full ? 0.5L * std::log(2 * kPiL) : 0));
        }
        check_close(F::gaussian_nll_loss(x, t, var, full, eps, r), reduce_ref(ref, r));
      }
  }
  // the clamp passes the gradient through: d/dv at v = eps, for a var of 0
  Tensor v0 = zeros({1}, float64).requires_grad_();
  F::gaussian_nll_loss(full({1}, 1e-3, float64), zeros({1}, float64), v0, false, eps, Reduction::sum).backward();
  CHECK(vals(v0.grad())[0] == doctest::Approx(0.5 * (1 / eps - 1e-6 / (eps * eps))).epsilon(1e-9));
  Tensor xg = x.detach().clone().requires_grad_(), tg = t.detach().clone().requires_grad_();
  for (const Tensor& var : {uniform64({3, 4}, 0.2, 2), uniform64({3}, 0.2, 2), uniform64({3, 1}, 0.2, 2)}) {
    Tensor vg = var.detach().clone().requires_grad_();
    for (Reduction r : kReductions)
      CHECK(autodiff::gradcheck([r](const G& in) { return F::gaussian_nll_loss(in[0], in[1], in[2], true, 1e-6, r); },
                                {xg, tg, vg}));
  }
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::gaussian_nll_loss(in[0], in[1], in[2]); },
                                {xg, tg, uniform64({3, 4}, 0.2, 2).requires_grad_()}));
  CHECK_THROWS_WITH_AS(F::gaussian_nll_loss(x, t, ones({4}, float64)),
                       "[gaussian_nll_loss] var of shape (4,) does not fit input of shape (3, 4): expected the input's "
                       "shape, or it without its last dim, or with a last dim of 1",
                       Error);
  CHECK_THROWS_WITH_AS(F::gaussian_nll_loss(x, t, -ones({3, 4}, float64)),
                       Contains("[gaussian_nll_loss] var has negative entries"), Error);
  CHECK_THROWS_WITH_AS(F::gaussian_nll_loss(x, t.narrow(0, 0, 2), ones({3, 4}, float64)),
                       "[gaussian_nll_loss] input shape (3, 4) and target shape (2, 4) differ (losses do not broadcast)", Error);
}

// ---- margin losses ----------------------------------------------------------------------------------------------

TEST_CASE("cosine_embedding_loss, margin_ranking_loss and hinge_embedding_loss match their formulas") {
  manual_seed(17);
  Tensor a = randn({5, 4}, float64), b = randn({5, 4}, float64);
  Tensor y = from_vector(std::vector<std::int64_t>{1, -1, 0, -1, 1});
  auto av = vals(a), bv = vals(b);
  auto yv = ivals(y);
  for (double margin : {0.0, -0.3, 0.2})
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t n = 0; n < 5; ++n) {
        LD p = 0, m1 = 1e-12L, m2 = 1e-12L;
        for (std::size_t d = 0; d < 4; ++d) {
          p += static_cast<LD>(av[n * 4 + d]) * bv[n * 4 + d];
          m1 += static_cast<LD>(av[n * 4 + d]) * av[n * 4 + d];
          m2 += static_cast<LD>(bv[n * 4 + d]) * bv[n * 4 + d];
        }
        const LD c = p / std::sqrt(m1 * m2);
        ref.push_back(yv[n] == 1 ? 1 - c : yv[n] == -1 ? std::max<LD>(0, c - margin) : 0);
      }
      check_close(F::cosine_embedding_loss(a, b, y, margin, r), reduce_ref(ref, r));
      check_close(F::cosine_embedding_loss(a, b, y.to(float64), margin, r), reduce_ref(ref, r));
    }
  // one pair: 0-d target
  check_close(F::cosine_embedding_loss(test::vec({1, 0}), test::vec({0, 2}), full({}, 1.0, float64)), {1.0});
  Tensor ag = a.requires_grad_(), bg = b.requires_grad_();
  CHECK(autodiff::gradcheck([y](const G& in) { return F::cosine_embedding_loss(in[0], in[1], y, 0.1); }, {ag, bg}));
  CHECK_THROWS_WITH_AS(F::cosine_embedding_loss(a, b.narrow(1, 0, 3), y),
                       "[cosine_embedding_loss] input1 shape (5, 4) and input2 shape (5, 3) differ", Error);
  CHECK_THROWS_WITH_AS(F::cosine_embedding_loss(a, b, y.narrow(0, 0, 4)),
                       "[cosine_embedding_loss] expected inputs (N, D) with target (N), or inputs (D) with a 0-d target; "
                       "got inputs (5, 4) and target (4,)",
                       Error);

  // margin ranking: same number of dims, broadcasting
  Tensor x1 = randn({6}, float64), x2 = randn({1}, float64), t = from_vector(std::vector<double>{1, -1, 1, -1, 1, 1});
  auto x1v = vals(x1), x2v = vals(x2), tv = vals(t);
  for (double margin : {0.0, 0.5})
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t i = 0; i < 6; ++i) ref.push_back(std::max<LD>(0, -tv[i] * (static_cast<LD>(x1v[i]) - x2v[0]) + margin));
      check_close(F::margin_ranking_loss(x1, x2, t, margin, r), reduce_ref(ref, r));
    }
  Tensor x1g = x1.requires_grad_(), x2g = randn({6}, float64).requires_grad_(), tg = randn({6}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::margin_ranking_loss(in[0], in[1], in[2], 0.3); }, {x1g, x2g, tg}));
  CHECK_THROWS_WITH_AS(F::margin_ranking_loss(x1, x2.reshape({1, 1}), t),
                       "[margin_ranking_loss] all input tensors should have the same number of dims, got input1 (6,), "
                       "input2 (1, 1) and target (6,)",
                       Error);

  // hinge embedding
  Tensor h = randn({2, 5}, float64) * 2.0;
  Tensor ht = from_vector(std::vector<double>{1, -1, 1, -1, -1, 1, 1, -1, 0, 1}, Shape{2, 5});
  auto hv = vals(h), htv = vals(ht);
  for (double margin : {1.0, 0.4})
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t i = 0; i < 10; ++i)
        ref.push_back((htv[i] != 1 ? std::max<LD>(0, margin - hv[i]) : 0) + (htv[i] != -1 ? hv[i] : 0));
      check_close(F::hinge_embedding_loss(h, ht, margin, r), reduce_ref(ref, r));
    }
  Tensor hg = h.requires_grad_();
  CHECK(autodiff::gradcheck([ht](const G& in) { return F::hinge_embedding_loss(in[0], ht, 0.7); }, {hg}));
  CHECK_THROWS_WITH_AS(F::hinge_embedding_loss(h, ht.narrow(1, 0, 2)),
                       "[hinge_embedding_loss] input shape (2, 5) and target shape (2, 2) differ (losses do not broadcast)",
                       Error);
}

TEST_CASE("soft_margin_loss and multilabel_soft_margin_loss match their formulas, stable for large values") {
  manual_seed(18);
  Tensor x = randn({3, 4}, float64) * 3.0, t = where(rand({3, 4}, float64) < 0.5, full({}, -1.0, float64), full({}, 1.0, float64));
  x.index_put_({0, 0}, 900.0);
  x.index_put_({0, 1}, -900.0);
  auto xv = vals(x), tv = vals(t);
  for (Reduction r : kReductions) {
    std::vector<LD> ref;
    for (std::size_t i = 0; i < 12; ++i) ref.push_back(softplus_ref(-static_cast<LD>(tv[i]) * xv[i]));
    check_close(F::soft_margin_loss(x, t, r), reduce_ref(ref, r));
  }
  Tensor xg = randn({3, 4}, float64).requires_grad_(), tg = randn({3, 4}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::soft_margin_loss(in[0], in[1]); }, {xg, tg}));

  Tensor p = rand({3, 4}, float64), w = uniform64({4}, 0.5, 2);
  auto pv = vals(p), wv = vals(w);
  for (bool weighted : {false, true})
    for (Reduction r : kReductions) {
      std::vector<LD> ref;
      for (std::size_t n = 0; n < 3; ++n) {
        LD s = 0;
        for (std::size_t c = 0; c < 4; ++c) {
          const LD X = xv[n * 4 + c], T = pv[n * 4 + c];
          // -(t log sigmoid(x) + (1 - t) log sigmoid(-x))
          s += (weighted ? wv[c] : 1) * (T * softplus_ref(-X) + (1 - T) * softplus_ref(X));
        }
        ref.push_back(s / 4);
      }
      check_close(F::multilabel_soft_margin_loss(x, p, weighted ? w : Tensor(), r), reduce_ref(ref, r));
    }
  // one sample (C): a 0-d result
  CHECK(F::multilabel_soft_margin_loss(x.select(0, 0), p.select(0, 0), Tensor(), Reduction::none).dim() == 0);
  Tensor wg = w.requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::multilabel_soft_margin_loss(in[0], in[1], in[2], Reduction::sum); },
                            {xg, tg, wg}));
  CHECK_THROWS_WITH_AS(F::multilabel_soft_margin_loss(x, p, ones({3}, float64)),
                       "[multilabel_soft_margin_loss] weight of shape (3,) does not broadcast to the input's shape (3, 4)", Error);
  CHECK_THROWS_WITH_AS(F::soft_margin_loss(x, p.narrow(1, 0, 1)),
                       "[soft_margin_loss] input shape (3, 4) and target shape (3, 1) differ (losses do not broadcast)", Error);
}

TEST_CASE("multi_margin_loss: p = 1 and 2, margins, class weights, one sample; gradcheck and errors") {
  manual_seed(19);
  Tensor x = randn({4, 5}, float64);
  Tensor y = from_vector(std::vector<std::int64_t>{0, 4, 2, 2});
  Tensor w = uniform64({5}, 0.5, 2);
  auto xv = vals(x), wv = vals(w);
  auto yv = ivals(y);
  for (std::int64_t p : {1, 2})
    for (double margin : {1.0, 0.3})
      for (bool weighted : {false, true})
        for (Reduction r : kReductions) {
          std::vector<LD> ref;
          for (std::size_t n = 0; n < 4; ++n) {
            const std::size_t c = static_cast<std::size_t>(yv[n]);
            LD s = 0;
            for (std::size_t i = 0; i < 5; ++i) {
              if (i == c) continue;
              LD z = std::max<LD>(0, margin - xv[n * 5 + c] + xv[n * 5 + i]);
              if (p == 2) z *= z;
              s += (weighted ? wv[c] : 1) * z;
            }
            ref.push_back(s / 5);
          }
          check_close(F::multi_margin_loss(x, y, p, margin, weighted ? w : Tensor(), r), reduce_ref(ref, r));
        }
  // one sample (C) with a 0-d target
  Tensor one = F::multi_margin_loss(x.select(0, 1), y.select(0, 1), 1, 1.0, Tensor(), Reduction::none);
  CHECK(one.dim() == 0);
  check_close(one, {vals(F::multi_margin_loss(x, y, 1, 1.0, Tensor(), Reduction::none))[1]});
  Tensor xg = x.requires_grad_(), wg = w.requires_grad_();
  for (std::int64_t p : {1, 2})
    CHECK(autodiff::gradcheck([y, p](const G& in) { return F::multi_margin_loss(in[0], y, p, 0.8, in[1]); }, {xg, wg}));
  CHECK_THROWS_WITH_AS(F::multi_margin_loss(x, y, 3), "[multi_margin_loss] only p = 1 and p = 2 are supported, got 3", Error);
  CHECK_THROWS_WITH_AS(F::multi_margin_loss(x, from_vector(std::vector<std::int64_t>{0, 5, 1, 1})),
                       "[multi_margin_loss] target 5 out of range for 5 classes", Error);
  CHECK_THROWS_WITH_AS(F::multi_margin_loss(x, y.narrow(0, 0, 3)),
                       "[multi_margin_loss] input of shape (4, 5) needs a target of shape (4,), got (3,)", Error);
  CHECK_THROWS_WITH_AS(F::multi_margin_loss(x, y.to(float64)),
                       "[multi_margin_loss] expected int64 class indices as target, got float64", Error);
}

// ---- distances and the triplet loss ----------------------------------------------------------------------------------

TEST_CASE("pairwise_distance, cosine_similarity and pdist match direct loops, with broadcasting") {
  manual_seed(20);
  Tensor a = randn({4, 3}, float64), b = randn({3}, float64);
  auto av = vals(a), bv = vals(b);
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {1.0, 2.0, 3.0, inf, 0.0})
    for (bool keepdim : {false, true}) {
      std::vector<LD> ref;
      for (std::size_t n = 0; n < 4; ++n) {
        LD s = 0;
        for (std::size_t d = 0; d < 3; ++d) {
          const LD v = std::fabs(static_cast<LD>(av[n * 3 + d]) - bv[d] + 1e-6L);
          if (p == inf) s = std::max(s, v);
          else if (p == 0) s += v != 0;
          else s += std::pow(v, static_cast<LD>(p));
        }
        ref.push_back(p == inf || p == 0 ? s : std::pow(s, 1 / static_cast<LD>(p)));
      }
      CAPTURE(p);
      Tensor d = F::pairwise_distance(a, b, p, 1e-6, keepdim);
      CHECK(d.shape() == (keepdim ? Shape{4, 1} : Shape{4}));
      check_close(d, reduce_ref(ref, Reduction::none));
    }
  CHECK(F::pairwise_distance(test::vec({1, 2}), test::vec({1, 2}), 2, 0.0).dim() == 0);
  Tensor ag = a.requires_grad_(), bg = b.requires_grad_();
  for (double p : {1.0, 2.0, 3.0})
    CHECK(autodiff::gradcheck([p](const G& in) { return F::pairwise_distance(in[0], in[1], p); }, {ag, bg}));
  CHECK_THROWS_WITH_AS(F::pairwise_distance(a, randn({2}, float64)), Contains("[pairwise_distance]"), Error);
  CHECK_THROWS_WITH_AS(F::pairwise_distance(a, b, -1.0), "[pairwise_distance] p must be >= 0, got -1.000000", Error);

  // cosine similarity: (2, 1, 5) with (3, 5) -> (2, 3, 5), along the last dim; a zero vector reads 0
  Tensor c1 = randn({2, 1, 5}, float64), c2 = randn({3, 5}, float64);
  c2.index_put_({1}, 0.0);
  auto c1v = vals(c1), c2v = vals(c2);
  std::vector<LD> ref;
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      LD p = 0, n1 = 0, n2 = 0;
      for (std::size_t d = 0; d < 5; ++d) {
        p += static_cast<LD>(c1v[i * 5 + d]) * c2v[j * 5 + d];
        n1 += static_cast<LD>(c1v[i * 5 + d]) * c1v[i * 5 + d];
        n2 += static_cast<LD>(c2v[j * 5 + d]) * c2v[j * 5 + d];
      }
      ref.push_back(p / (std::max<LD>(std::sqrt(n1), 1e-8L) * std::max<LD>(std::sqrt(n2), 1e-8L)));
    }
  Tensor cs = F::cosine_similarity(c1, c2, -1);
  CHECK(cs.shape() == Shape{2, 3});
  check_close(cs, reduce_ref(ref, Reduction::none));
  // default dim 1 of (N, D)
  check_close(F::cosine_similarity(test::vec({3, 4}).reshape({1, 2}), test::vec({4, 3}).reshape({1, 2})), {24.0 / 25.0});
  Tensor c1g = c1.requires_grad_(), c2g = randn({3, 5}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::cosine_similarity(in[0], in[1], -1); }, {c1g, c2g}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::cosine_similarity(in[0], in[1], -1); }, {c1g, c2g}));
  // the zero vector's gradient is finite
  Tensor zg = zeros({1, 3}, float64).requires_grad_();
  F::cosine_similarity(zg, ones({1, 3}, float64)).sum().backward();
  for (double g : vals(zg.grad())) CHECK(std::isfinite(g));
  CHECK_THROWS_WITH_AS(F::cosine_similarity(c1, randn({4, 4}, float64)), Contains("[cosine_similarity]"), Error);
  CHECK_THROWS_WITH_AS(F::cosine_similarity(c2, c2, 2), Contains("[cosine_similarity]"), Error);

  // pdist: rows (i, j), i < j, row-major
  Tensor x = randn({5, 3}, float64);
  x.index_put_({3}, x.select(0, 1));  // a zero distance
  auto xv = vals(x);
  for (double p : {2.0, 1.0, inf}) {
    std::vector<LD> pr;
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = i + 1; j < 5; ++j) {
        LD s = 0;
        for (std::size_t d = 0; d < 3; ++d) {
          const LD v = std::fabs(static_cast<LD>(xv[i * 3 + d]) - xv[j * 3 + d]);
          s = p == inf ? std::max(s, v) : s + std::pow(v, static_cast<LD>(p));
        }
        pr.push_back(p == inf ? s : std::pow(s, 1 / static_cast<LD>(p)));
      }
    check_close(F::pdist(x, p), reduce_ref(pr, Reduction::none));
  }
  CHECK(F::pdist(randn({1, 3}, float64)).shape() == Shape{0});
  Tensor xg = randn({4, 3}, float64).requires_grad_();
  for (double p : {2.0, 1.0, 3.0}) CHECK(autodiff::gradcheck([p](const G& in) { return F::pdist(in[0], p); }, {xg}));
  // a zero distance has gradient 0, not NaN
  Tensor xz = x.detach().clone().requires_grad_();
  F::pdist(xz).sum().backward();
  for (double g : vals(xz.grad())) CHECK(std::isfinite(g));
  CHECK_THROWS_WITH_AS(F::pdist(randn({3}, float64)), "[pdist] expected a 2-D input (N, M), got (3,)", Error);
}

TEST_CASE("triplet_margin_loss: p norms, swap, eps; gradcheck; errors") {
  manual_seed(21);
  Tensor a = randn({4, 3}, float64), p = randn({4, 3}, float64), n = randn({4, 3}, float64);
  auto av = vals(a), pv = vals(p), nv = vals(n);
  auto dist = [](const std::vector<double>& u, const std::vector<double>& v, std::size_t row, double q, double eps) {
    LD s = 0;
    for (std::size_t d = 0; d < 3; ++d) s += std::pow(std::fabs(static_cast<LD>(u[row * 3 + d]) - v[row * 3 + d] + eps), static_cast<LD>(q));
    return std::pow(s, 1 / static_cast<LD>(q));
  };
  for (double q : {2.0, 1.0})
    for (bool swap : {false, true})
      for (Reduction r : kReductions) {
        std::vector<LD> ref;
        for (std::size_t i = 0; i < 4; ++i) {
          LD dn = dist(av, nv, i, q, 1e-6);
          if (swap) dn = std::min(dn, dist(pv, nv, i, q, 1e-6));
          ref.push_back(std::max<LD>(0, 1.5L + dist(av, pv, i, q, 1e-6) - dn));
        }
        check_close(F::triplet_margin_loss(a, p, n, 1.5, q, 1e-6, swap, r), reduce_ref(ref, r));
      }
  Tensor ag = a.requires_grad_(), pg = p.requires_grad_(), ng = n.requires_grad_();
  for (bool swap : {false, true})
    CHECK(autodiff::gradcheck([swap](const G& in) { return F::triplet_margin_loss(in[0], in[1], in[2], 2.0, 2, 1e-6, swap); },
                              {ag, pg, ng}));
  CHECK_THROWS_WITH_AS(F::triplet_margin_loss(a, p, n.select(0, 0)),
                       "[triplet_margin_loss] the anchor, positive and negative tensors must have the same number of dims, "
                       "got (4, 3), (4, 3) and (3,)",
                       Error);
}

// ---- one_hot and embedding -----------------------------------------------------------------------------------------

TEST_CASE("one_hot: given and inferred class counts, shapes, errors") {
  Tensor idx = from_vector(std::vector<std::int64_t>{2, 0, 3, 3, 1, 0}, Shape{2, 3});
  for (std::int64_t C : {-1, 4, 6}) {
    Tensor o = F::one_hot(idx, C);
    const std::int64_t k = C == -1 ? 4 : C;
    CHECK(o.dtype() == int64);
    CHECK(o.shape() == Shape{2, 3, k});
    auto ov = ivals(o), iv = ivals(idx);
    bool ok = true;
    for (std::size_t i = 0; i < 6; ++i)
      for (std::int64_t c = 0; c < k; ++c) ok = ok && ov[i * static_cast<std::size_t>(k) + static_cast<std::size_t>(c)] == (iv[i] == c);
    CHECK(ok);
  }
  CHECK(F::one_hot(zeros({0}, int64), 3).shape() == Shape{0, 3});
  CHECK(F::one_hot(full({}, 1, int64)).shape() == Shape{2});
  CHECK_THROWS_WITH_AS(F::one_hot(idx, 3), "[one_hot] class value 3 out of range for 3 classes", Error);
  CHECK_THROWS_WITH_AS(F::one_hot(from_vector(std::vector<std::int64_t>{1, -2})),
                       "[one_hot] class values must be non-negative, got -2", Error);
  CHECK_THROWS_WITH_AS(F::one_hot(from_vector(std::vector<std::int64_t>{1, -2}), 4),
                       "[one_hot] class value -2 out of range for 4 classes", Error);
  CHECK_THROWS_WITH_AS(F::one_hot(zeros({0}, int64)), "[one_hot] cannot infer the number of classes from an empty tensor", Error);
  CHECK_THROWS_WITH_AS(F::one_hot(idx.to(float64)), "[one_hot] expected int64 class values, got float64", Error);
  CHECK_THROWS_WITH_AS(F::one_hot(idx, -3), "[one_hot] num_classes must be >= 0 or -1, got -3", Error);
}

TEST_CASE("embedding: rows of weight, padding_idx, scale_grad_by_freq and max_norm") {
  manual_seed(22);
  Tensor w = randn({6, 3}, float64);
  Tensor idx = from_vector(std::vector<std::int64_t>{1, 4, 1, 0, 5, 1, 4, 2}, Shape{2, 4});
  Tensor e = F::embedding(idx, w);
  CHECK(e.shape() == Shape{2, 4, 3});
  CHECK(equal(e, index_select(w, 0, idx.reshape({-1})).reshape({2, 4, 3})));
  auto wv = vals(w), ev = vals(e);
  auto iv = ivals(idx);
  bool same = true;
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t d = 0; d < 3; ++d) same = same && ev[i * 3 + d] == wv[static_cast<std::size_t>(iv[i]) * 3 + d];
  CHECK(same);

  // gradients: plain, padding_idx (also negative), scale_grad_by_freq
  Tensor c = randn({2, 4, 3}, float64);
  auto cv = vals(c);
  for (int mode = 0; mode < 4; ++mode) {
    const bool pad = mode & 1, freq = mode & 2;
    Tensor wg = w.detach().clone().requires_grad_();
    (F::embedding(idx, wg, pad ? std::optional<std::int64_t>(-5) : std::nullopt, std::nullopt, 2.0, freq) * c).sum().backward();
    std::vector<LD> ref(18, 0);
    std::vector<int> count(6, 0);
    for (auto v : iv) ++count[static_cast<std::size_t>(v)];
    for (std::size_t i = 0; i < 8; ++i) {
      const std::size_t row = static_cast<std::size_t>(iv[i]);
      if (pad && row == 1) continue;  // -5 wraps to 1
      for (std::size_t d = 0; d < 3; ++d) ref[row * 3 + d] += cv[i * 3 + d] / (freq ? count[row] : 1);
    }
    CAPTURE(mode);
    check_close(wg.grad(), reduce_ref(ref, Reduction::none));
  }
  // writing into the indices after the forward does not change the gradient
  {
    Tensor ids = idx.clone(), wg = w.detach().clone().requires_grad_();
    Tensor out = F::embedding(ids, wg);
    ids.fill_(0);
    out.sum().backward();
    check_close(wg.grad().sum({1}), {3.0, 9.0, 3.0, 0.0, 6.0, 3.0});  // rows 0, 1 (x3), 2, 4 (x2), 5 once each
  }
  // gradcheck without padding_idx and scale_grad_by_freq (both by design not the derivative: checked against the
  // loop above)
  Tensor wg = w.detach().clone().requires_grad_();
  CHECK(autodiff::gradcheck([idx](const G& in) { return F::embedding(idx, in[0]); }, {wg}));
  CHECK(autodiff::gradgradcheck([idx](const G& in) { return F::embedding(idx, in[0]).square(); }, {wg}));

  // max_norm renormalises the referenced rows in place: norm_p > max_norm -> row * max_norm / (norm + 1e-7)
  for (double p : {2.0, 1.0}) {
    Tensor wm = (randn({6, 3}, float64) * 2.0).requires_grad_();
    const auto before = vals(wm);
    Tensor out = F::embedding(idx, wm, std::nullopt, 1.0, p);
    const auto after = vals(wm);
    std::vector<LD> ref(before.begin(), before.end());
    for (std::size_t row : {0, 1, 2, 4, 5}) {  // row 3 is not referenced
      LD nrm = 0;
      for (std::size_t d = 0; d < 3; ++d) nrm += std::pow(std::fabs(static_cast<LD>(before[row * 3 + d])), static_cast<LD>(p));
      nrm = std::pow(nrm, 1 / static_cast<LD>(p));
      if (nrm > 1)
        for (std::size_t d = 0; d < 3; ++d) ref[row * 3 + d] = before[row * 3 + d] * (1 / (nrm + 1e-7L));
    }
    check_close(wm.detach(), reduce_ref(ref, Reduction::none));
    CHECK(equal(out, index_select(wm.detach(), 0, idx.reshape({-1})).reshape({2, 4, 3})));
  }
  CHECK_THROWS_WITH_AS(F::embedding(from_vector(std::vector<std::int64_t>{0, 6}), w),
                       "[embedding] index 6 out of range for 6 embeddings", Error);
  CHECK_THROWS_WITH_AS(F::embedding(from_vector(std::vector<std::int64_t>{-1}), w),
                       "[embedding] index -1 out of range for 6 embeddings", Error);
  CHECK_THROWS_WITH_AS(F::embedding(idx.to(float64), w), "[embedding] expected int64 indices, got float64", Error);
  CHECK_THROWS_WITH_AS(F::embedding(idx, w, 6), "[embedding] padding_idx 6 must be within num_embeddings 6", Error);
  CHECK_THROWS_WITH_AS(F::embedding(idx, w, std::nullopt, std::nullopt, 2.0, false, true),
                       "[embedding] sparse gradients are not supported (sparse must be false)", Error);
  CHECK_THROWS_WITH_AS(F::embedding(idx, w.reshape({-1})), "[embedding] weight must be 2-D (num_embeddings, embedding_dim), got (18,)", Error);
}

TEST_CASE("embedding_bag: sum, mean and max with offsets or 2-D input, per-sample weights, padding") {
  manual_seed(23);
  Tensor w = randn({7, 3}, float64);
  Tensor idx = from_vector(std::vector<std::int64_t>{1, 2, 4, 5, 4, 3, 2, 6, 0});
  Tensor off = from_vector(std::vector<std::int64_t>{0, 2, 2, 6});  // bags [0, 2), [2, 2) empty, [2, 6), [6, 9)
  Tensor psw = uniform64({9}, 0.5, 2);
  auto wv = vals(w), pv = vals(psw);
  auto iv = ivals(idx), ov = ivals(off);
  using M = F::EmbeddingBagMode;
  for (M mode : {M::sum, M::mean, M::max})
    for (bool pad : {false, true})
      for (bool weights : {false, true}) {
        if (weights && mode != M::sum) continue;
        std::vector<LD> ref;
        for (std::size_t b = 0; b < 4; ++b) {
          const std::size_t lo = static_cast<std::size_t>(ov[b]), hi = b + 1 < 4 ? static_cast<std::size_t>(ov[b + 1]) : 9;
          for (std::size_t d = 0; d < 3; ++d) {
            LD acc = mode == M::max ? -std::numeric_limits<LD>::infinity() : 0;
            int cnt = 0;
            for (std::size_t i = lo; i < hi; ++i) {
              if (pad && iv[i] == 4) continue;
              const LD v = wv[static_cast<std::size_t>(iv[i]) * 3 + d] * (weights ? pv[i] : 1);
              acc = mode == M::max ? std::max(acc, v) : acc + v;
              ++cnt;
            }
            if (cnt == 0) acc = 0;
            else if (mode == M::mean) acc /= cnt;
            ref.push_back(acc);
          }
        }
        CAPTURE(static_cast<int>(mode));
        CAPTURE(pad);
        Tensor out = F::embedding_bag(idx, w, off, std::nullopt, 2.0, false, mode, false, weights ? psw : Tensor(), false,
                                      pad ? std::optional<std::int64_t>(4) : std::nullopt);
        CHECK(out.shape() == Shape{4, 3});
        check_close(out, reduce_ref(ref, Reduction::none));
      }
  // include_last_offset: the last offset ends the last bag (positions past it are left out)
  Tensor last = F::embedding_bag(idx, w, from_vector(std::vector<std::int64_t>{0, 2, 8}), std::nullopt, 2.0, false, M::sum,
                                 false, Tensor(), true);
  CHECK(last.shape() == Shape{2, 3});
  check_close(last.select(0, 1), vals(index_select(w, 0, idx.narrow(0, 2, 6)).sum({0})));
  // 2-D input: each row a bag
  Tensor idx2 = idx.narrow(0, 0, 8).reshape({2, 4});
  check_close(F::embedding_bag(idx2, w), vals(index_select(w, 0, idx2.reshape({-1})).reshape({2, 4, 3}).mean({1})));
  Tensor wg = w.detach().clone().requires_grad_(), pg = psw.detach().clone().requires_grad_();
  CHECK(autodiff::gradcheck([&](const G& in) { return F::embedding_bag(idx, in[0], off, std::nullopt, 2.0, false, M::sum, false, in[1]); },
                            {wg, pg}));
  CHECK(autodiff::gradcheck([&](const G& in) { return F::embedding_bag(idx, in[0], off, std::nullopt, 2.0, false, M::mean, false,
                                                                       Tensor(), false, 2); }, {wg}));
  CHECK(autodiff::gradcheck([&](const G& in) { return F::embedding_bag(idx, in[0], off, std::nullopt, 2.0, false, M::max); }, {wg}));
  CHECK_THROWS_WITH_AS(F::embedding_bag(idx, w), "[embedding_bag] a 1-D input needs offsets", Error);
  CHECK_THROWS_WITH_AS(F::embedding_bag(idx2, w, off), "[embedding_bag] offsets must be undefined for a 2-D input (each row is a bag)", Error);
  CHECK_THROWS_WITH_AS(F::embedding_bag(idx, w, off, std::nullopt, 2.0, false, M::mean, false, psw),
                       "[embedding_bag] per_sample_weights are only supported with mode sum", Error);
  CHECK_THROWS_WITH_AS(F::embedding_bag(idx, w, from_vector(std::vector<std::int64_t>{1, 3})),
                       "[embedding_bag] offsets must start at 0, not decrease and not pass the input's length 9", Error);
}

TEST_CASE("Embedding module: N(0, 1) init, zeroed padding row, forward, from_pretrained") {
  manual_seed(24);
  nn::Embedding emb(nn::EmbeddingOptions(400, 50).padding_idx(-1).dtype(float64));
  CHECK(emb.options.padding_idx() == std::optional<std::int64_t>(399));
  CHECK(emb.weight.shape() == Shape{400, 50});
  CHECK(emb.weight.requires_grad());
  CHECK(vals(emb.weight.detach().select(0, 399).abs().sum())[0] == 0.0);
  const Tensor body = emb.weight.detach().narrow(0, 0, 399);
  CHECK(std::fabs(body.mean().item<double>()) < 0.02);
  CHECK(std::fabs(std::sqrt((body - body.mean()).square().mean().item<double>()) - 1.0) < 0.02);
  Tensor idx = from_vector(std::vector<std::int64_t>{3, 399, 3});
  Tensor out = emb.forward(idx);
  CHECK(equal(out, index_select(emb.weight.detach(), 0, idx)));
  out.sum().backward();
  CHECK(vals(emb.weight.grad().select(0, 399).abs().sum())[0] == 0.0);
  CHECK(vals(emb.weight.grad().select(0, 3))[0] == 2.0);
  CHECK(emb.extra_repr() == "400, 50, padding_idx=399");
  CHECK(nn::Embedding(5, 2).weight.dtype() == float32);

  Tensor table = randn({4, 2}, float64);
  auto frozen = nn::Embedding::from_pretrained(table);
  CHECK(!frozen->weight.requires_grad());
  CHECK(frozen->weight.data_ptr() == table.data_ptr());
  CHECK(frozen->parameters().size() == 1);
  CHECK(equal(frozen->forward(from_vector(std::vector<std::int64_t>{2})), table.narrow(0, 2, 1)));
  auto trained = nn::Embedding::from_pretrained(table, false, 0);
  CHECK(trained->weight.requires_grad());
  CHECK(equal(trained->weight.detach(), table));  // the padding row is not zeroed
  CHECK_THROWS_WITH_AS(nn::Embedding(nn::EmbeddingOptions(3, 2).padding_idx(3)),
                       "[Embedding] padding_idx 3 must be within num_embeddings 3", Error);
  CHECK_THROWS_WITH_AS(nn::Embedding::from_pretrained(randn({4}, float64)),
                       "[Embedding.from_pretrained] embeddings must be 2-D (num_embeddings, embedding_dim), got (4,)", Error);
}
