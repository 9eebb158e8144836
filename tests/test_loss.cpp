// tests/test_loss.cpp - losses, softmax / log_softmax, relative Lp and H1 against direct loops
// (long double), closed forms, and float64 gradcheck / gradgradcheck.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;
using phasor::test::check_close;
namespace F = phasor::nn::functional;
using nn::Reduction;
using G = std::vector<Tensor>;
using LD = long double;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Reduces per-element values the way a Reduction does.
std::vector<double> reduce_ref(const std::vector<LD>& v, Reduction r) {
  if (r == Reduction::none) return std::vector<double>(v.begin(), v.end());
  LD s = 0;
  for (LD x : v) s += x;
  if (r == Reduction::mean) s /= static_cast<LD>(v.size());
  return {static_cast<double>(s)};
}

const Reduction kReductions[] = {Reduction::none, Reduction::mean, Reduction::sum};

}  // namespace

TEST_CASE("pointwise losses match direct loops") {
  manual_seed(1);
  Tensor a = randn({3, 4, 5}, float64) * 2.0, b = randn({3, 4, 5}, float64);
  auto av = vals(a), bv = vals(b);
  for (Reduction r : kReductions) {
    std::vector<LD> mse, l1, sl1, sl1b, hub, hubd;
    for (std::size_t i = 0; i < av.size(); ++i) {
      const LD d = static_cast<LD>(av[i]) - bv[i], ad = std::fabs(d);
      mse.push_back(d * d);
      l1.push_back(ad);
      sl1.push_back(ad < 1 ? 0.5L * d * d : ad - 0.5L);
      sl1b.push_back(ad < 0.3L ? 0.5L * d * d / 0.3L : ad - 0.15L);
      hub.push_back(ad < 1 ? 0.5L * d * d : ad - 0.5L);
      hubd.push_back(ad < 2.5L ? 0.5L * d * d : 2.5L * (ad - 1.25L));
    }
    check_close(F::mse_loss(a, b, r), reduce_ref(mse, r));
    check_close(F::l1_loss(a, b, r), reduce_ref(l1, r));
    check_close(F::smooth_l1_loss(a, b, r), reduce_ref(sl1, r));
    check_close(F::smooth_l1_loss(a, b, r, 0.3), reduce_ref(sl1b, r));
    check_close(F::smooth_l1_loss(a, b, r, 0.0), reduce_ref(l1, r));
    check_close(F::huber_loss(a, b, r), reduce_ref(hub, r));
    check_close(F::huber_loss(a, b, r, 2.5), reduce_ref(hubd, r));
  }
  CHECK(F::mse_loss(a, b).dim() == 0);
  CHECK(F::mse_loss(a, b, Reduction::none).shape() == Shape{3, 4, 5});
  // float32 keeps its dtype
  CHECK(F::mse_loss(a.to(float32), b.to(float32)).dtype() == float32);
  CHECK(nn::reduction_from_string("sum") == Reduction::sum);
  CHECK(nn::reduction_from_string("none") == Reduction::none);
  CHECK(nn::reduction_from_string("mean") == Reduction::mean);
}

TEST_CASE("complex mse and l1 use |input - target|") {
  manual_seed(2);
  Tensor a = randn({4, 3}, complex128), b = randn({4, 3}, complex128);
  auto ar = vals(real(a)), ai = vals(imag(a)), br = vals(real(b)), bi = vals(imag(b));
  std::vector<LD> sq, ab;
  for (std::size_t i = 0; i < ar.size(); ++i) {
    const LD dr = static_cast<LD>(ar[i]) - br[i], di = static_cast<LD>(ai[i]) - bi[i];
    sq.push_back(dr * dr + di * di);
    ab.push_back(std::sqrt(dr * dr + di * di));
  }
  for (Reduction r : kReductions) {
    check_close(F::mse_loss(a, b, r), reduce_ref(sq, r));
    check_close(F::l1_loss(a, b, r), reduce_ref(ab, r));
  }
  CHECK(F::mse_loss(a, b).dtype() == float64);
  Tensor za = a.clone().requires_grad_(), zb = b.clone().requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::mse_loss(in[0], in[1]); }, {za, zb}));
  CHECK(autodiff::gradcheck([](const G& in) { return F::l1_loss(in[0], in[1], Reduction::sum); }, {za, zb}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::mse_loss(in[0], in[1]); }, {za, zb}));
}

TEST_CASE("pointwise losses: gradcheck and gradgradcheck") {
  manual_seed(3);
  Tensor a = randn({3, 5}, float64).requires_grad_(), b = randn({3, 5}, float64).requires_grad_();
  for (Reduction r : kReductions) {
    CHECK(autodiff::gradcheck([r](const G& in) { return F::mse_loss(in[0], in[1], r); }, {a, b}));
    CHECK(autodiff::gradcheck([r](const G& in) { return F::l1_loss(in[0], in[1], r); }, {a, b}));
    CHECK(autodiff::gradcheck([r](const G& in) { return F::smooth_l1_loss(in[0], in[1], r, 0.7); }, {a, b}));
    CHECK(autodiff::gradcheck([r](const G& in) { return F::huber_loss(in[0], in[1], r, 0.6); }, {a, b}));
  }
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::mse_loss(in[0], in[1]); }, {a, b}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::mse_loss(in[0], in[1], Reduction::none); }, {a, b}));
  // the gradient of the mean squared error is 2 (a - b) / n
  Tensor x = randn({6}, float64).requires_grad_();
  Tensor y = randn({6}, float64);
  F::mse_loss(x, y).backward();
  auto g = vals(x.grad()), xv = vals(x), yv = vals(y);
  for (std::size_t i = 0; i < 6; ++i) CHECK(g[i] == doctest::Approx(2 * (xv[i] - yv[i]) / 6));
}

TEST_CASE("softmax and log_softmax match direct loops and are stable") {
  manual_seed(4);
  Tensor x = randn({2, 4, 3}, float64) * 3.0;
  auto xv = vals(x);
  for (std::int64_t dim : {0, 1, 2, -1}) {
    const std::int64_t d = dim < 0 ? dim + 3 : dim;
    const std::int64_t sh[3] = {2, 4, 3};
    const std::int64_t st[3] = {12, 3, 1};
    std::vector<double> sm(xv.size()), lsm(xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const std::int64_t pos = (static_cast<std::int64_t>(i) / st[d]) % sh[d];
      const std::int64_t base = static_cast<std::int64_t>(i) - pos * st[d];
      LD s = 0;
      for (std::int64_t k = 0; k < sh[d]; ++k) s += std::exp(static_cast<LD>(xv[static_cast<std::size_t>(base + k * st[d])]));
      sm[i] = static_cast<double>(std::exp(static_cast<LD>(xv[i])) / s);
      lsm[i] = static_cast<double>(xv[i] - std::log(s));
    }
    check_close(F::softmax(x, dim), sm);
    check_close(F::log_softmax(x, dim), lsm);
  }
  // large logits: no overflow
  Tensor big = from_vector(std::vector<double>{1000, 1001, 1002});
  LD s = 1 + std::exp(1.0L) + std::exp(2.0L);
  check_close(F::softmax(big, 0), {double(1 / s), double(std::exp(1.0L) / s), double(std::exp(2.0L) / s)});
  check_close(F::log_softmax(big, 0), {double(-std::log(s)), double(1 - std::log(s)), double(2 - std::log(s))});
  Tensor small = from_vector(std::vector<float>{-1000, 0});
  auto ls = vals(F::log_softmax(small, 0));
  CHECK(ls[0] == doctest::Approx(-1000));
  CHECK(ls[1] == doctest::Approx(0));
  CHECK(std::isfinite(ls[0]));
  // 0-d
  CHECK(F::softmax(full({}, 3.0, float64), 0).item<double>() == 1.0);
  CHECK(F::log_softmax(full({}, 3.0, float64), -1).item<double>() == 0.0);
  // empty input
  CHECK(F::softmax(zeros({3, 0}), 1).shape() == Shape{3, 0});
  CHECK(F::log_softmax(zeros({0, 4}), 1).shape() == Shape{0, 4});
  // rows sum to one
  auto rs = vals(F::softmax(x, 1).sum({1}));
  for (double v : rs) CHECK(v == doctest::Approx(1.0));
}

TEST_CASE("softmax and log_softmax: gradcheck and gradgradcheck") {
  manual_seed(5);
  Tensor x = randn({3, 4}, float64).requires_grad_();
  for (std::int64_t d : {0, 1}) {
    CHECK(autodiff::gradcheck([d](const G& in) { return F::softmax(in[0], d); }, {x}));
    CHECK(autodiff::gradcheck([d](const G& in) { return F::log_softmax(in[0], d); }, {x}));
    CHECK(autodiff::gradgradcheck([d](const G& in) { return F::softmax(in[0], d); }, {x}));
    CHECK(autodiff::gradgradcheck([d](const G& in) { return F::log_softmax(in[0], d); }, {x}));
  }
  Tensor s = full({}, 0.5, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::log_softmax(in[0], 0); }, {s}));
}

namespace {

/// Reference cross entropy with class-index targets (torch semantics), input (N, C, S) flattened
/// as x[n][c][s], target t[n][s].
struct CERef {
  std::int64_t N, C, S;
  std::vector<double> x;
  std::vector<std::int64_t> t;
  std::vector<double> w;  // empty = ones
  std::int64_t ignore = -100;
  double eps = 0;

  LD lsm(std::int64_t n, std::int64_t c, std::int64_t s) const {
    LD m = -std::numeric_limits<LD>::infinity();
    for (std::int64_t k = 0; k < C; ++k) m = std::max<LD>(m, x[static_cast<std::size_t>((n * C + k) * S + s)]);
    LD z = 0;
    for (std::int64_t k = 0; k < C; ++k) z += std::exp(x[static_cast<std::size_t>((n * C + k) * S + s)] - m);
    return x[static_cast<std::size_t>((n * C + c) * S + s)] - m - std::log(z);
  }
  LD wt(std::int64_t c) const { return w.empty() ? 1.0L : static_cast<LD>(w[static_cast<std::size_t>(c)]); }

  std::vector<double> run(Reduction r, bool nll_only_on_input = false) const {
    std::vector<LD> nll, smooth;
    LD wsum = 0;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t s = 0; s < S; ++s) {
        const std::int64_t tc = t[static_cast<std::size_t>(n * S + s)];
        if (tc == ignore) {
          nll.push_back(0);
          smooth.push_back(0);
          continue;
        }
        const LD lp = nll_only_on_input ? static_cast<LD>(x[static_cast<std::size_t>((n * C + tc) * S + s)]) : lsm(n, tc, s);
        nll.push_back(-wt(tc) * lp);
        wsum += wt(tc);
        LD sm = 0;
        for (std::int64_t c = 0; c < C; ++c) sm -= wt(c) * lsm(n, c, s);
        smooth.push_back(sm);
      }
    std::vector<double> out;
    if (r == Reduction::none) {
      for (std::size_t i = 0; i < nll.size(); ++i)
        out.push_back(static_cast<double>((1 - eps) * nll[i] + eps / static_cast<LD>(C) * smooth[i]));
      return out;
    }
    LD a = 0, b = 0;
    for (std::size_t i = 0; i < nll.size(); ++i) a += nll[i], b += smooth[i];
    if (r == Reduction::mean) a /= wsum, b /= wsum;
    return {static_cast<double>((1 - eps) * a + eps / static_cast<LD>(C) * b)};
  }
};

}  // namespace

TEST_CASE("cross_entropy and nll_loss with class indices match a direct loop") {
  manual_seed(6);
  const std::int64_t N = 4, C = 5, S = 3;
  Tensor x3 = randn({N, C, S}, float64) * 2.0;
  Tensor t3 = from_vector(std::vector<std::int64_t>{0, 4, 2, 1, 1, 3, 4, 0, 2, 3, 2, 1}, Shape{N, S});
  Tensor w = from_vector(std::vector<double>{0.5, 1.0, 2.0, 0.25, 1.5});
  CERef ref{N, C, S, vals(x3), phasor::test::ivals(t3), {}, -100, 0};
  for (Reduction r : kReductions) {
    for (double eps : {0.0, 0.2}) {
      ref.eps = eps;
      ref.w.clear();
      check_close(F::cross_entropy(x3, t3, Tensor(), -100, r, eps), ref.run(r));
      ref.w = vals(w);
      check_close(F::cross_entropy(x3, t3, w, -100, r, eps), ref.run(r));
      // ignore_index: class 1 entries skipped
      ref.ignore = 1;
      check_close(F::cross_entropy(x3, t3, w, 1, r, eps), ref.run(r));
      ref.w.clear();
      check_close(F::cross_entropy(x3, t3, Tensor(), 1, r, eps), ref.run(r));
      ref.ignore = -100;
    }
    // nll_loss reads the input as log-probabilities
    ref.eps = 0;
    ref.w = vals(w);
    check_close(F::nll_loss(x3, t3, w, -100, r), ref.run(r, true));
    ref.ignore = 3;
    check_close(F::nll_loss(x3, t3, w, 3, r), ref.run(r, true));
    ref.ignore = -100;
    ref.w.clear();
  }
  // (N, C) layout and the 1-D (C) layout
  Tensor x2 = x3.select(2, 0).contiguous();
  Tensor t2 = t3.select(1, 0).contiguous();
  CERef ref2{N, C, 1, vals(x2), phasor::test::ivals(t2), vals(w), -100, 0.1};
  check_close(F::cross_entropy(x2, t2, w, -100, Reduction::mean, 0.1), ref2.run(Reduction::mean));
  check_close(F::cross_entropy(x2, t2, Tensor(), -100, Reduction::none), CERef{N, C, 1, vals(x2), phasor::test::ivals(t2)}.run(Reduction::none));
  Tensor x1 = x2.select(0, 0).contiguous();
  Tensor t1 = full({}, 3, int64);
  CERef ref1{1, C, 1, vals(x1), {3}};
  check_close(F::cross_entropy(x1, t1), ref1.run(Reduction::mean));
  CHECK(F::cross_entropy(x1, t1, Tensor(), -100, Reduction::none).dim() == 0);
  // every target ignored: mean is 0/0 as in torch
  Tensor all_ignored = full({N}, -100, int64);
  CHECK(std::isnan(F::cross_entropy(x2, all_ignored).item<double>()));
  CHECK(F::cross_entropy(x2, all_ignored, Tensor(), -100, Reduction::sum).item<double>() == 0.0);
}

TEST_CASE("cross_entropy with class-probability targets") {
  manual_seed(7);
  const std::int64_t N = 3, C = 4, S = 2;
  Tensor x = randn({N, C, S}, float64);
  Tensor p = F::softmax(randn({N, C, S}, float64), 1);
  Tensor w = from_vector(std::vector<double>{1.0, 0.5, 2.0, 0.75});
  auto xv = vals(x), pv = vals(p), wv = vals(w);
  CERef helper{N, C, S, xv, {}};
  for (Reduction r : kReductions)
    for (double eps : {0.0, 0.3})
      for (bool use_w : {false, true}) {
        std::vector<LD> l;
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t s = 0; s < S; ++s) {
            LD v = 0;
            for (std::int64_t c = 0; c < C; ++c) {
              const LD tc = pv[static_cast<std::size_t>((n * C + c) * S + s)] * (1 - eps) + eps / C;
              v -= (use_w ? wv[static_cast<std::size_t>(c)] : 1.0) * tc * helper.lsm(n, c, s);
            }
            l.push_back(v);
          }
        check_close(F::cross_entropy(x, p, use_w ? w : Tensor(), -100, r, eps), reduce_ref(l, r));
      }
  Tensor xl = x.clone().requires_grad_(), pl = p.clone().requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::cross_entropy(in[0], in[1], Tensor(), -100, Reduction::mean, 0.1); },
                            {xl, pl}));
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::cross_entropy(in[0], in[1]); }, {xl, pl}));
}

TEST_CASE("cross_entropy and nll_loss: gradcheck and gradgradcheck") {
  manual_seed(8);
  Tensor x = randn({4, 3, 2}, float64).requires_grad_();
  Tensor t = from_vector(std::vector<std::int64_t>{0, 2, 1, -100, 2, 2, 0, 1}, Shape{4, 2});
  Tensor w = from_vector(std::vector<double>{0.3, 1.0, 2.0});
  for (Reduction r : kReductions) {
    CHECK(autodiff::gradcheck([&](const G& in) { return F::cross_entropy(in[0], t, w, -100, r, 0.15); }, {x}));
    CHECK(autodiff::gradcheck([&](const G& in) { return F::nll_loss(in[0], t, w, -100, r); }, {x}));
  }
  CHECK(autodiff::gradgradcheck([&](const G& in) { return F::cross_entropy(in[0], t); }, {x}));
  CHECK(autodiff::gradgradcheck([&](const G& in) { return F::cross_entropy(in[0], t, w, -100, Reduction::sum, 0.2); }, {x}));
  // d CE / d logits = softmax - onehot (one sample, mean)
  Tensor z = randn({1, 3}, float64).requires_grad_();
  F::cross_entropy(z, from_vector(std::vector<std::int64_t>{1})).backward();
  auto g = vals(z.grad()), sm = vals(F::softmax(z.detach(), 1));
  CHECK(g[0] == doctest::Approx(sm[0]));
  CHECK(g[1] == doctest::Approx(sm[1] - 1));
  CHECK(g[2] == doctest::Approx(sm[2]));
}

TEST_CASE("relative_lp_loss and lp_loss match a direct loop") {
  manual_seed(9);
  Tensor a = randn({3, 2, 5}, float64), b = randn({3, 2, 5}, float64);
  auto av = vals(a), bv = vals(b);
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {1.0, 2.0, 3.0, 0.5, inf}) {
    std::vector<LD> rel, absn;
    for (std::size_t n = 0; n < 3; ++n) {
      LD num = 0, den = 0;
      for (std::size_t i = 0; i < 10; ++i) {
        const LD d = std::fabs(static_cast<LD>(av[n * 10 + i]) - bv[n * 10 + i]), y = std::fabs(static_cast<LD>(bv[n * 10 + i]));
        if (std::isinf(p)) num = std::max(num, d), den = std::max(den, y);
        else num += std::pow(d, static_cast<LD>(p)), den += std::pow(y, static_cast<LD>(p));
      }
      if (!std::isinf(p)) num = std::pow(num, 1 / static_cast<LD>(p)), den = std::pow(den, 1 / static_cast<LD>(p));
      rel.push_back(num / den);
      absn.push_back(num);
    }
    for (Reduction r : kReductions) {
      check_close(F::relative_lp_loss(a, b, p, r), reduce_ref(rel, r), 1e-11);
      check_close(F::lp_loss(a, b, p, r), reduce_ref(absn, r), 1e-11);
    }
  }
  // 1-D input: every element is a sample
  Tensor u = from_vector(std::vector<double>{1, -2, 4}), v = from_vector(std::vector<double>{2, 2, 2});
  check_close(F::relative_lp_loss(u, v, 2, Reduction::none), {0.5, 2.0, 1.0});
  // complex fields
  Tensor za = randn({2, 6}, complex128), zb = randn({2, 6}, complex128);
  auto zr = vals(real(za - zb)), zi = vals(imag(za - zb)), yr = vals(real(zb)), yi = vals(imag(zb));
  std::vector<LD> zrel;
  for (std::size_t n = 0; n < 2; ++n) {
    LD num = 0, den = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      const std::size_t k = n * 6 + i;
      num += static_cast<LD>(zr[k]) * zr[k] + static_cast<LD>(zi[k]) * zi[k];
      den += static_cast<LD>(yr[k]) * yr[k] + static_cast<LD>(yi[k]) * yi[k];
    }
    zrel.push_back(std::sqrt(num / den));
  }
  check_close(F::relative_lp_loss(za, zb, 2, Reduction::none), reduce_ref(zrel, Reduction::none), 1e-11);
  // gradients
  Tensor al = a.clone().requires_grad_(), bl = b.clone().requires_grad_();
  for (double p : {1.5, 2.0, 3.0}) {
    CHECK(autodiff::gradcheck([p](const G& in) { return F::relative_lp_loss(in[0], in[1], p); }, {al, bl}));
    CHECK(autodiff::gradcheck([p](const G& in) { return F::lp_loss(in[0], in[1], p, Reduction::sum); }, {al, bl}));
  }
  CHECK(autodiff::gradgradcheck([](const G& in) { return F::relative_lp_loss(in[0], in[1]); }, {al, bl}));
  Tensor zal = za.clone().requires_grad_();
  CHECK(autodiff::gradcheck([&](const G& in) { return F::relative_lp_loss(in[0], zb); }, {zal}));
}

namespace {

/// Direct full-spectrum H1 norm squared of a real 2-D field (n0, n1) on [0, L0) x [0, L1):
/// V * sum over all (k0, k1) of (1 + |k|^2) |c_k|^2 with c the DFT / (n0 n1).
LD h1_sq_direct_2d(const std::vector<double>& u, std::int64_t n0, std::int64_t n1, double L0, double L1) {
  LD total = 0;
  const LD two_pi = 2 * 3.14159265358979323846264338327950288L;
  for (std::int64_t k0 = 0; k0 < n0; ++k0)
    for (std::int64_t k1 = 0; k1 < n1; ++k1) {
      std::complex<LD> c = 0;
      for (std::int64_t j0 = 0; j0 < n0; ++j0)
        for (std::int64_t j1 = 0; j1 < n1; ++j1) {
          const LD ph = -two_pi * (static_cast<LD>(k0 * j0) / n0 + static_cast<LD>(k1 * j1) / n1);
          c += static_cast<LD>(u[static_cast<std::size_t>(j0 * n1 + j1)]) * std::complex<LD>(std::cos(ph), std::sin(ph));
        }
      c /= static_cast<LD>(n0 * n1);
      const std::int64_t m0 = k0 <= (n0 - 1) / 2 ? k0 : k0 - n0, m1 = k1 <= (n1 - 1) / 2 ? k1 : k1 - n1;
      const LD kx = two_pi * m0 / L0, ky = two_pi * m1 / L1;
      total += (1 + kx * kx + ky * ky) * std::norm(c);
    }
  return total * L0 * L1;
}

}  // namespace

TEST_CASE("h1_loss: closed forms of trigonometric fields") {
  // u(x) = a + b sin(2 pi x / L) + c cos(2 pi 3 x / L) on [0, L): ||u||^2 = L (a^2 + b^2/2 (1 + k1^2) + c^2/2 (1 + k3^2))
  for (double L : {1.0, 2 * kPi, 3.0}) {
    for (std::int64_t n : {16, 15}) {
      std::vector<double> u(static_cast<std::size_t>(n));
      const double a = 0.7, b = 1.3, c = -0.4;
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = L * static_cast<double>(j) / static_cast<double>(n);
        u[static_cast<std::size_t>(j)] = a + b * std::sin(2 * kPi * x / L) + c * std::cos(2 * kPi * 3 * x / L);
      }
      const double k1 = 2 * kPi / L, k3 = 3 * k1;
      const double want = std::sqrt(L * (a * a + b * b / 2 * (1 + k1 * k1) + c * c / 2 * (1 + k3 * k3)));
      Tensor ut = from_vector(u, Shape{1, n});
      Tensor zero = zeros({1, n}, float64);
      CHECK(F::h1_loss(ut, zero, 1, {L}, false).item<double>() == doctest::Approx(want).epsilon(1e-12));
      // the same field as complex input goes through fftn
      CHECK(F::h1_loss(ut.to(complex128), zero.to(complex128), 1, {L}, false).item<double>() ==
            doctest::Approx(want).epsilon(1e-12));
    }
  }
  // 2-D: u = sin(2 pi x) cos(2 pi 2 y) on [0,1) x [0,2): ||u||^2 = V/4 (1 + (2pi)^2 + (2pi)^2)
  const std::int64_t n0 = 8, n1 = 12;
  std::vector<double> u2(static_cast<std::size_t>(n0 * n1));
  for (std::int64_t i = 0; i < n0; ++i)
    for (std::int64_t j = 0; j < n1; ++j)
      u2[static_cast<std::size_t>(i * n1 + j)] =
          std::sin(2 * kPi * i / double(n0)) * std::cos(2 * kPi * 2 * (2.0 * j / double(n1)) / 2.0);
  const double kx = 2 * kPi, ky = 2 * kPi * 2 / 2.0;
  const double want2 = std::sqrt(2.0 / 4 * (1 + kx * kx + ky * ky));
  Tensor u2t = from_vector(u2, Shape{1, 1, n0, n1});
  CHECK(F::h1_loss(u2t, zeros({1, 1, n0, n1}, float64), 2, {1.0, 2.0}, false).item<double>() ==
        doctest::Approx(want2).epsilon(1e-12));
  // relative: a field against itself scaled
  CHECK(F::h1_loss(u2t * 1.5, u2t, 2).item<double>() == doctest::Approx(0.5));
}

TEST_CASE("h1_loss matches a direct full-spectrum DFT (Hermitian half counted correctly)") {
  manual_seed(10);
  for (auto [n0, n1] : {std::pair<std::int64_t, std::int64_t>{6, 8}, {5, 7}, {4, 9}}) {
    Tensor p = randn({2, 2, n0, n1}, float64), t = randn({2, 2, n0, n1}, float64);
    const double L0 = 1.0, L1 = 2.5;
    std::vector<LD> abs_l, rel_l;
    for (std::int64_t b = 0; b < 2; ++b) {
      LD num = 0, den = 0;
      for (std::int64_t c = 0; c < 2; ++c) {
        num += h1_sq_direct_2d(vals((p - t).select(0, b).select(0, c)), n0, n1, L0, L1);
        den += h1_sq_direct_2d(vals(t.select(0, b).select(0, c)), n0, n1, L0, L1);
      }
      abs_l.push_back(std::sqrt(num));
      rel_l.push_back(std::sqrt(num / den));
    }
    for (Reduction r : kReductions) {
      check_close(F::h1_loss(p, t, 2, {L0, L1}, false, r), reduce_ref(abs_l, r), 1e-11);
      check_close(F::h1_loss(p, t, 2, {L0, L1}, true, r), reduce_ref(rel_l, r), 1e-11);
    }
  }
}

TEST_CASE("h1_loss: gradcheck") {
  manual_seed(11);
  Tensor p = randn({2, 3, 6}, float64).requires_grad_(), t = randn({2, 3, 6}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::h1_loss(in[0], in[1], 1); }, {p, t}));
  CHECK(autodiff::gradcheck([](const G& in) { return F::h1_loss(in[0], in[1], 2, {2.0}, false, Reduction::sum); }, {p, t}));
  Tensor q = randn({2, 5, 4}, float64).requires_grad_(), s = randn({2, 5, 4}, float64);
  CHECK(autodiff::gradcheck([&](const G& in) { return F::h1_loss(in[0], s, 2, {}, true, Reduction::none); }, {q}));
  Tensor z = randn({2, 5}, complex128).requires_grad_(), zt = randn({2, 5}, complex128);
  CHECK(autodiff::gradcheck([&](const G& in) { return F::h1_loss(in[0], zt, 1); }, {z}));
}

TEST_CASE("loss errors name the op and the shapes") {
  Tensor a = randn({3, 1}), b = randn({3});
  CHECK_THROWS_WITH_AS(F::mse_loss(a, b), "[mse_loss] input shape (3, 1) and target shape (3,) differ (losses do not broadcast)",
                       Error);
  CHECK_THROWS_WITH_AS(F::l1_loss(a, b), doctest::Contains("[l1_loss] input shape (3, 1)"), Error);
  CHECK_THROWS_WITH_AS(F::relative_lp_loss(a, b), doctest::Contains("[relative_lp_loss] input shape (3, 1)"), Error);
  CHECK_THROWS_WITH_AS(F::h1_loss(a, b, 1), doctest::Contains("[h1_loss] input shape (3, 1)"), Error);
  CHECK_THROWS_WITH_AS(F::mse_loss(arange(3), arange(3)),
                       "[mse_loss] expected floating or complex input and target, got int64 and int64", Error);
  CHECK_THROWS_WITH_AS(F::smooth_l1_loss(randn({2}, complex64), randn({2}, complex64)),
                       doctest::Contains("[smooth_l1_loss] expected real floating"), Error);
  CHECK_THROWS_WITH_AS(F::smooth_l1_loss(b, b, Reduction::mean, -1), doctest::Contains("[smooth_l1_loss] beta must be"),
                       Error);
  CHECK_THROWS_WITH_AS(F::huber_loss(b, b, Reduction::mean, 0), doctest::Contains("[huber_loss] delta must be"), Error);
  CHECK_THROWS_WITH_AS(F::mse_loss(b, b, static_cast<Reduction>(7)), "[mse_loss] unknown reduction value 7", Error);
  CHECK_THROWS_WITH_AS(nn::reduction_from_string("avg"),
                       "[reduction] unknown reduction 'avg'; expected 'none', 'mean', 'sum' or (kl_div only) 'batchmean'", Error);
  CHECK_THROWS_WITH_AS(F::relative_lp_loss(a, a, 0), "[relative_lp_loss] p must be > 0 (or infinity), got 0.000000", Error);
  CHECK_THROWS_WITH_AS(F::lp_loss(a, a, -1), doctest::Contains("[lp_loss] p must be > 0"), Error);
  CHECK_THROWS_WITH_AS(F::lp_loss(full({}, 1.0), full({}, 1.0)), doctest::Contains("[lp_loss] expected a batch dim"), Error);
  CHECK_THROWS_WITH_AS(F::h1_loss(a, a, 2), "[h1_loss] expected a batch dim and 2 spatial dims (spatial_dims >= 1), got input of shape (3, 1)",
                       Error);
  CHECK_THROWS_WITH_AS(F::h1_loss(a, a, 1, {1.0, 2.0}), "[h1_loss] expected 0, 1 or 1 domain lengths, got 2", Error);
  CHECK_THROWS_WITH_AS(F::h1_loss(a, a, 1, {-1.0}), doctest::Contains("[h1_loss] domain lengths must be finite and > 0"),
                       Error);
  // softmax
  CHECK_THROWS_WITH_AS(F::softmax(arange(3), 0), "[softmax] expected a real floating tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(F::log_softmax(randn({2}, complex64), 0),
                       "[log_softmax] expected a real floating tensor, got complex64", Error);
  CHECK_THROWS_AS(F::softmax(randn({2, 3}), 2), Error);
  // classification
  Tensor x = randn({4, 5});
  Tensor t = from_vector(std::vector<std::int64_t>{0, 5, 1, 2});
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, t), "[cross_entropy] target 5 is out of bounds for 5 classes", Error);
  CHECK_THROWS_WITH_AS(F::nll_loss(x, from_vector(std::vector<std::int64_t>{0, -1, 1, 2})),
                       "[nll_loss] target -1 is out of bounds for 5 classes", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, from_vector(std::vector<std::int64_t>{0, 1})),
                       "[cross_entropy] input of shape (4, 5) needs a target of shape (4,), got (2,)", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, from_vector(std::vector<float>{0, 1, 2, 3})),
                       "[cross_entropy] probability target must have the input's shape (4, 5), got (4,)", Error);
  CHECK_THROWS_WITH_AS(F::nll_loss(x, from_vector(std::vector<float>{0, 1, 2, 3})),
                       "[nll_loss] expected int64 class indices as target, got float32", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, F::softmax(x, 1), Tensor(), 2),
                       "[cross_entropy] ignore_index is not supported for class-probability targets", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, t, ones({4})), "[cross_entropy] weight must have shape (5,) for 5 classes, got (4,)",
                       Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(x, t, Tensor(), -100, Reduction::mean, 1.5),
                       doctest::Contains("[cross_entropy] label_smoothing must be in [0, 1]"), Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(full({}, 1.0), full({}, 0, int64)), doctest::Contains("[cross_entropy] expected an input of shape (C)"),
                       Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(arange(5).reshape({1, 5}), full({1}, 0, int64)),
                       "[cross_entropy] expected a real floating tensor, got int64", Error);
}
