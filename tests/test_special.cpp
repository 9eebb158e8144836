// tests/test_special.cpp - the special functions (phasor/special.hpp) against references computed here in long
// double (the C library's long double lgamma / erfc / exp, sums and continued fractions carried to 64-bit
// precision, Newton's method on erf / erfc for the inverses), closed forms and identities; special values; every
// gradient by gradcheck (and twice by gradgradcheck where torch has one); errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "special_test_util.hpp"
#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using namespace special_test;

namespace {

/// Bernoulli numbers B_2, B_4, ..., B_20 (their values, for the Euler-Maclaurin tails below).
constexpr LD kB2k[] = {1.0L / 6, -1.0L / 30, 1.0L / 42, -1.0L / 30, 5.0L / 66, -691.0L / 2730, 7.0L / 6, -3617.0L / 510,
                       43867.0L / 798, -174611.0L / 330};

/// Hurwitz zeta sum_k (k + q)^-s in long double, s > 1, q > 0: N terms summed, then the Euler-Maclaurin tail.
LD ref_zeta(LD s, LD q) {
  const int n = 40;
  LD sum = 0;
  for (int k = 0; k < n; ++k) sum += std::pow(q + k, -s);
  const LD a = q + n;
  sum += std::pow(a, 1 - s) / (s - 1) + std::pow(a, -s) / 2;
  LD fac = s * std::pow(a, -s - 1), fact = 2;  // s (s+1) ... (s+2j-2) a^(-s-2j+1) / (2j)!
  for (int j = 0; j < 10; ++j) {
    sum += kB2k[j] * fac / fact;
    fac *= (s + 2 * j + 1) * (s + 2 * j + 2) / (a * a);
    fact *= (2 * j + 3) * (2 * j + 4);
  }
  return sum;
}

/// psi(x) in long double: the recurrence up to x >= 30, then the asymptotic series; reflection below 0.
LD ref_digamma(LD x) {
  if (x < 0) return ref_digamma(1 - x) - kPiL / std::tan(kPiL * x);
  LD acc = 0;
  while (x < 30) acc -= 1 / x, x += 1;
  LD s = std::log(x) - 1 / (2 * x), p = 1 / (x * x), pk = p;
  for (int j = 0; j < 10; ++j) s -= kB2k[j] / (2 * (j + 1)) * pk, pk *= p;
  return acc + s;
}

/// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, x > 0.
LD ref_polygamma(int n, LD x) {
  if (n == 0) return ref_digamma(x);
  LD fact = 1;
  for (int i = 2; i <= n; ++i) fact *= i;
  return (n % 2 ? 1 : -1) * fact * ref_zeta(n + 1, x);
}

/// The inverse of `f` (increasing) at y by bisection on [lo, hi] then Newton steps with derivative `df`.
LD invert(const std::function<LD(LD)>& f, const std::function<LD(LD)>& df, LD y, LD lo, LD hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-6L * (1 + std::fabs(lo)); ++i) {
    const LD mid = (lo + hi) / 2;
    (f(mid) < y ? lo : hi) = mid;
  }
  LD x = (lo + hi) / 2;
  for (int i = 0; i < 20; ++i) x -= (f(x) - y) / df(x);
  return x;
}

/// erfinv(y): the x with erf(x) = y (erfc(x) = 1 - y for y > 0.5, so the upper tail keeps its digits).
LD ref_erfinv(LD y) {
  if (y < 0) return -ref_erfinv(-y);
  if (y == 0 || y >= 1) return y == 0 ? y : (y == 1 ? kInf : kNaN);
  const auto d = [](LD x) { return 2 / std::sqrt(kPiL) * std::exp(-x * x); };
  if (y <= 0.5L) return invert([](LD x) { return std::erf(x); }, d, y, 0, 1);
  const LD c = 1 - y;  // exact for the test's doubles
  return invert([c](LD x) { return c - std::erfc(x); }, d, 0, 0, 30);
}

/// Phi(x) = erfc(-x / sqrt 2) / 2.
LD ref_ndtr(LD x) { return std::erfc(-x / std::sqrt(2.0L)) / 2; }

/// Phi^-1(p) by Newton's method on Phi in long double; above 1/2 as -Phi^-1(1 - p) (1 - p exact for a double p), so
/// the upper tail keeps its digits.
LD ref_ndtri(LD p) {
  if (p <= 0 || p >= 1) return p == 0 ? -kInf : (p == 1 ? kInf : kNaN);
  if (p > 0.5L) return -ref_ndtri(1 - p);
  const auto d = [](LD x) { return std::exp(-x * x / 2) / std::sqrt(2 * kPiL); };
  return invert([](LD x) { return ref_ndtr(x); }, d, p, -40, 40);
}

/// I_nu(x) for nu = 0, 1 by the power series sum (x/2)^(2k+nu) / (k! (k+nu)!) (positive terms).
LD ref_bessel_i(int nu, LD x) {
  const LD h = x / 2, h2 = h * h;
  LD term = nu ? h : 1, sum = term;
  for (int k = 1; k < 4000; ++k) {
    term *= h2 / (static_cast<LD>(k) * (k + nu));
    sum += term;
    if (term < sum * 1e-22L) break;
  }
  return sum;
}

/// P(a, x) and Q(a, x) in long double: the series for x < a + 1, the continued fraction (Lentz) otherwise; each
/// returns the smaller of the two directly and the other as 1 minus it.
std::pair<LD, LD> ref_gammainc(LD a, LD x) {
  const LD pre = std::exp(a * std::log(x) - x - std::lgamma(a));
  if (x < a + 1) {
    LD term = 1 / a, sum = term;
    for (int k = 1; k < 5000; ++k) {
      term *= x / (a + k);
      sum += term;
      if (term < sum * 1e-21L) break;
    }
    const LD p = pre * sum;
    return {p, 1 - p};
  }
  const LD tiny = 1e-4000L;
  LD b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 5000; ++i) {
    const LD an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const LD del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-21L) break;
  }
  const LD q = pre * h;
  return {1 - q, q};
}

}  // namespace

TEST_CASE("lgamma, digamma, polygamma against long double references and closed forms") {
  // positive arguments avoid the negative integers; near-zero and large ones included; the negative axis between poles
  const auto pos = grids({grid(1e-6, 0.99, 101), grid(1.0, 40.0, 157), {60.5, 171.3, 1e3, 1e5, 3e7}});
  const auto neg = grids({grid(-9.95, -0.05, 100)});
  check_accuracy("lgamma", [](const Tensor& x) { return lgamma(x); }, grids({pos, neg}),
                 [](LD x) { return std::lgamma(x); }, 2e-14, 5e-7, 1.0);
  check_accuracy("digamma", [](const Tensor& x) { return digamma(x); }, grids({pos, neg}), ref_digamma, 2e-14, 5e-7, 1.0);
  for (int n : {1, 2, 3, 6}) {
    CAPTURE(n);
    check_accuracy("polygamma", [n](const Tensor& x) { return polygamma(n, x); }, grid(0.05, 30.0, 120),
                   [n](LD x) { return ref_polygamma(n, x); }, 5e-14, 1e-6);
  }
  // closed forms: Gamma(1/2) = sqrt(pi), psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi1(1) = pi^2 / 6,
  // psi1(1/2) = pi^2 / 2, psi2(1) = -2 zeta(3)
  const Tensor c = vec({0.5, 1.0});
  CHECK(vals(lgamma(c))[0] == doctest::Approx(std::log(std::sqrt(M_PI))).epsilon(1e-15));
  CHECK(vals(lgamma(c))[1] == 0.0);
  CHECK(vals(digamma(c))[0] == doctest::Approx(-0.5772156649015329 - 2 * std::log(2.0)).epsilon(1e-15));
  CHECK(vals(digamma(c))[1] == doctest::Approx(-0.5772156649015329).epsilon(1e-15));
  CHECK(vals(polygamma(1, c))[0] == doctest::Approx(M_PI * M_PI / 2).epsilon(1e-15));
  CHECK(vals(polygamma(1, c))[1] == doctest::Approx(M_PI * M_PI / 6).epsilon(1e-15));
  CHECK(vals(polygamma(2, vec({1.0})))[0] == doctest::Approx(-2 * 1.2020569031595942).epsilon(1e-15));
  CHECK(vals(polygamma(0, c)) == vals(digamma(c)));
  // special values (torch's): poles, infinities, NaN
  const auto lg = vals(lgamma(vec({0.0, -3.0, kInf, -kInf, kNaN})));
  CHECK(lg[0] == kInf);
  CHECK(lg[1] == kInf);
  CHECK(lg[2] == kInf);
  CHECK(lg[3] == kInf);
  CHECK(std::isnan(lg[4]));
  const auto dg = vals(digamma(vec({0.0, -0.0, -2.0, kInf, -kInf, kNaN})));
  CHECK(dg[0] == -kInf);
  CHECK(dg[1] == kInf);
  CHECK(std::isnan(dg[2]));
  CHECK(dg[3] == kInf);
  CHECK(std::isnan(dg[4]));
  CHECK(std::isnan(dg[5]));
  // polygamma's poles as torch's (-1)^(n+1) n! zeta(n + 1, x): +inf for odd n, -inf for even n
  CHECK(vals(polygamma(1, vec({0.0, -3.0}))) == std::vector<double>{kInf, kInf});
  CHECK(vals(polygamma(2, vec({0.0, -3.0}))) == std::vector<double>{-kInf, -kInf});
  // ints promote; Tensor methods
  CHECK(lgamma(from_vector(std::vector<std::int64_t>{1, 2, 5})).dtype() == default_dtype());
  CHECK(vals(vec({3.5}).lgamma()) == vals(lgamma(vec({3.5}))));
  CHECK(vals(vec({3.5}).digamma()) == vals(digamma(vec({3.5}))));
  CHECK(vals(vec({3.5}).polygamma(2)) == vals(polygamma(2, vec({3.5}))));
  CHECK(vals(special::gammaln(vec({3.5}))) == vals(lgamma(vec({3.5}))));
  CHECK(vals(special::psi(vec({3.5}))) == vals(digamma(vec({3.5}))));
}

TEST_CASE("mvlgamma is the sum of lgamma(x - j / 2) plus p (p - 1) / 4 log pi") {
  const Tensor x = vec({2.5, 3.0, 7.25});
  for (std::int64_t p : {1, 2, 3, 5}) {
    CAPTURE(p);
    std::vector<double> want;
    for (double v : vals(x)) {
      LD s = p * (p - 1) / 4.0L * std::log(kPiL);
      for (std::int64_t j = 0; j < p; ++j) s += std::lgamma(static_cast<LD>(v) - j / 2.0L);
      want.push_back(static_cast<double>(s));
    }
    check_close(mvlgamma(x, p), want, 1e-14);
    CHECK(vals(special::multigammaln(x, p)) == vals(x.mvlgamma(p)));
  }
  CHECK(mvlgamma(vec({}), 3).shape() == Shape{0});
}

TEST_CASE("zeta, gammainc and gammaincc against long double references") {
  // zeta(s, q) over s and q; closed forms zeta(2, 1) = pi^2 / 6, zeta(4, 1) = pi^4 / 90
  std::vector<double> s, q;
  for (double sv : {1.5, 2.0, 3.3, 7.0, 20.0})
    for (double qv : {0.01, 0.5, 1.0, 2.75, 30.0, 1e4}) s.push_back(sv), q.push_back(qv);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    const auto got = vals(special::zeta(from_vector(s).to(dt), from_vector(q).to(dt)).to(float64));
    double worst = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double w = static_cast<double>(ref_zeta(s[i], q[i]));
      if (dt == float32 && w > 3.4028234663852886e38) {  // past float's range: its infinity
        CHECK(got[i] == kInf);
        continue;
      }
      worst = std::max(worst, std::fabs(got[i] - w) / std::max(std::fabs(w), dt == float32 ? 1e-37 : 1e-300));
    }
    CHECK(worst <= (dt == float64 ? 5e-14 : 1e-6));
  }
  CHECK(vals(special::zeta(vec({2.0, 4.0}), 1.0))[0] == doctest::Approx(M_PI * M_PI / 6).epsilon(1e-15));
  CHECK(vals(special::zeta(vec({2.0, 4.0}), 1.0))[1] == doctest::Approx(std::pow(M_PI, 4) / 90).epsilon(1e-15));
  const auto zs = vals(special::zeta(vec({1.0, 0.5, 2.0, 2.0}), vec({1.0, 1.0, 0.0, -2.0})));
  CHECK(zs[0] == kInf);  // the pole at x = 1
  CHECK(std::isnan(zs[1]));  // x < 1
  CHECK(zs[2] == kInf);  // q at a non-positive integer
  CHECK(zs[3] == kInf);
  CHECK(vals(special::zeta(3.0, vec({2.0}))) == vals(special::zeta(vec({3.0}), vec({2.0}))));
  // P and Q, each in its own tail: a from tiny to large, x around and far from a
  std::vector<double> a, x;
  for (double av : {0.05, 0.5, 1.0, 3.7, 12.0, 55.0})
    for (double r : {0.01, 0.3, 0.9, 1.0, 1.1, 2.0, 5.0}) a.push_back(av), x.push_back(av * r);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    const Tensor ta = from_vector(a).to(dt), tx = from_vector(x).to(dt);
    const auto p = vals(igamma(ta, tx).to(float64)), qq = vals(igammac(ta, tx).to(float64));
    const auto av = vals(ta.to(float64)), xv = vals(tx.to(float64));
    const double fl = dt == float32 ? 1e-37 : 1e-300;  // float32's underflow
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const auto [rp, rq] = ref_gammainc(av[i], xv[i]);
      worst = std::max({worst, std::fabs(p[i] - static_cast<double>(rp)) / std::max(static_cast<double>(rp), fl),
                        std::fabs(qq[i] - static_cast<double>(rq)) / std::max(static_cast<double>(rq), fl)});
    }
    INFO("worst relative error of P or Q: " << worst);
    CHECK(worst <= (dt == float64 ? 1e-12 : 2e-6));
  }
  CHECK(vals(special::gammainc(vec({2.0}), vec({3.0}))) == vals(igamma(vec({2.0}), vec({3.0}))));
  CHECK(vals(special::gammaincc(vec({2.0}), vec({3.0}))) == vals(vec({2.0}).igammac(vec({3.0}))));
  // P(1, x) = 1 - e^-x; special values (torch's)
  check_close(igamma(vec({1.0, 1.0}), vec({0.5, 3.0})), {1 - std::exp(-0.5), 1 - std::exp(-3.0)}, 1e-15);
  const auto pe = vals(igamma(vec({0.0, 2.0, 2.0, -1.0, 0.0, kInf}), vec({1.0, 0.0, kInf, 1.0, 0.0, 1.0})));
  CHECK(pe[0] == 1.0);
  CHECK(pe[1] == 0.0);
  CHECK(pe[2] == 1.0);
  CHECK(std::isnan(pe[3]));
  CHECK(std::isnan(pe[4]));
  CHECK(pe[5] == 0.0);
}

TEST_CASE("erfinv, erfcx, ndtr, ndtri, log_ndtr, entr and xlog1py against long double references") {
  const auto unit = grids({grid(-0.999, 0.999, 201), {1e-300, -1e-10, 0.9999999, -0.99999999999, 1 - 1e-15}});
  check_accuracy("erfinv", [](const Tensor& x) { return erfinv(x); }, unit, ref_erfinv, 1e-14, 5e-7);
  const auto ei = vals(erfinv(vec({1.0, -1.0, 1.5, -0.0, kNaN})));
  CHECK(ei[0] == kInf);
  CHECK(ei[1] == -kInf);
  CHECK(std::isnan(ei[2]));
  CHECK((ei[3] == 0.0 && std::signbit(ei[3])));
  CHECK(std::isnan(ei[4]));
  check_accuracy("erfcx", [](const Tensor& x) { return special::erfcx(x); },
                 grids({grid(-9.0, 10.0, 191), {25.0, 26.5, 40.0, 1e3, 1e10, 1e300}}),
                 [](LD x) {
                   if (x > 100) {  // erfc underflows even in long double past 106: the continued fraction
                     LD f = x;
                     for (int k = 60; k >= 1; --k) f = x + (k / 2.0L) / f;
                     return 1 / (std::sqrt(kPiL) * f);
                   }
                   return std::exp(x * x) * std::erfc(x);
                 },
                 1e-14, 5e-7);
  CHECK(vals(special::erfcx(vec({-30.0})))[0] == kInf);
  CHECK(vals(special::erfcx(vec({kInf})))[0] == 0.0);
  check_accuracy("ndtr", [](const Tensor& x) { return special::ndtr(x); }, grids({grid(-37.0, 8.0, 181)}), ref_ndtr, 1e-14, 5e-7);
  const auto probs = grids({grid(0.001, 0.999, 199), {1e-300, 1e-100, 1e-20, 1e-8, 0.5, 1 - 1e-8, 1 - 1e-15}});
  // absolute error below 1 (ndtri(1/2) = 0, where the long double reference itself is only good to ~1e-19)
  check_accuracy("ndtri", [](const Tensor& x) { return special::ndtri(x); }, probs, ref_ndtri, 1e-14, 5e-7, 1.0);
  const auto nd = vals(special::ndtri(vec({0.0, 1.0, -0.5, 1.5})));
  CHECK(nd[0] == -kInf);
  CHECK(nd[1] == kInf);
  CHECK(std::isnan(nd[2]));
  CHECK(std::isnan(nd[3]));
  check_accuracy("log_ndtr", [](const Tensor& x) { return special::log_ndtr(x); }, grids({grid(-120.0, 12.0, 265)}),
                 [](LD x) { return x > 0 ? std::log1p(-ref_ndtr(-x)) : std::log(ref_ndtr(x)); }, 1e-14, 5e-7);
  CHECK(vals(special::log_ndtr(vec({-kInf, kInf}))) == std::vector<double>{-kInf, 0.0});
  check_close(special::entr(vec({0.5, 2.0, 0.0})), {0.5 * std::log(2.0), -2 * std::log(2.0), 0.0}, 1e-15);
  CHECK(vals(special::entr(vec({-1.0})))[0] == -kInf);
  check_close(special::xlog1py(vec({2.0, 0.0, 3.0}), vec({0.5, -1.0, 1e-20})), {2 * std::log1p(0.5), 0.0, 3e-20}, 1e-15);
  CHECK(std::isnan(vals(special::xlog1py(vec({0.0}), vec({kNaN})))[0]));
  CHECK(vals(special::xlog1py(2.0, vec({1.0})))[0] == doctest::Approx(2 * std::log(2.0)).epsilon(1e-15));
  // the aliases are the same ops
  const Tensor t = vec({0.25, 0.5});
  CHECK(vals(special::expit(t)) == vals(sigmoid(t)));
  CHECK(vals(special::logit(t)) == vals(logit(t)));
  CHECK(vals(special::sinc(t)) == vals(sinc(t)));
  CHECK(vals(special::erf(t)) == vals(erf(t)));
  CHECK(vals(special::erfc(t)) == vals(erfc(t)));
  CHECK(vals(special::erfinv(t)) == vals(t.erfinv()));
  CHECK(vals(special::xlogy(t, t)) == vals(xlogy(t, t)));
  CHECK(vals(special::exp2(t)) == vals(exp2(t)));
  CHECK(vals(special::expm1(t)) == vals(expm1(t)));
  CHECK(vals(special::log1p(t)) == vals(log1p(t)));
}

TEST_CASE("i0, i0e, i1, i1e against long double power series; parity and infinities") {
  const auto xs = grids({grid(-30.0, 30.0, 241), {1e-8, 0.5, 50.0, 100.0, 300.0, 700.0}});
  const auto scaled = [](int nu) { return [nu](LD x) { return ref_bessel_i(nu, std::fabs(x)) * std::exp(-std::fabs(x)) * (nu && x < 0 ? -1 : 1); }; };
  check_accuracy("i0", [](const Tensor& x) { return i0(x); }, xs, [](LD x) { return ref_bessel_i(0, std::fabs(x)); }, 1e-14, 5e-7);
  check_accuracy("i1", [](const Tensor& x) { return special::i1(x); }, xs,
                 [](LD x) { return (x < 0 ? -1 : 1) * ref_bessel_i(1, std::fabs(x)); }, 1e-14, 5e-7);
  check_accuracy("i0e", [](const Tensor& x) { return special::i0e(x); }, xs, scaled(0), 1e-14, 5e-7);
  check_accuracy("i1e", [](const Tensor& x) { return special::i1e(x); }, xs, scaled(1), 1e-14, 5e-7);
  const auto inf = vals(i0(vec({kInf, -kInf, 800.0})));
  CHECK(inf == std::vector<double>{kInf, kInf, kInf});
  CHECK(vals(special::i1(vec({-kInf, 0.0}))) == std::vector<double>{-kInf, 0.0});
  CHECK(vals(special::i0e(vec({kInf, 0.0}))) == std::vector<double>{0.0, 1.0});
  CHECK(vals(special::i1e(vec({-kInf})))[0] == 0.0);
  CHECK(vals(vec({1.5}).i0()) == vals(special::i0(vec({1.5}))));
}

TEST_CASE("torch.special's aliases: round with decimals, softmax and log_softmax with a dtype, logsumexp") {
  // exact in binary after scaling: half to even at the chosen decimal place
  const Tensor x = vec({1.2345, -0.555, 12345.6, 0.125, -0.375});
  check_close(special::round(x, 2), {1.23, -0.56, 12345.6, 0.12, -0.38}, 1e-15);
  check_close(special::round(x, -2), {0, -0, 12300, 0, -0}, 1e-15);
  check_close(special::round(x), vals(round(x)), 1e-15);
  const Tensor y = randn({3, 4}, float32);
  const Tensor s = special::softmax(y, 1, float64);
  CHECK(s.dtype() == float64);
  const auto yv = vals(y.to(float64));
  for (int r = 0; r < 3; ++r) {
    long double z = 0;
    for (int c = 0; c < 4; ++c) z += std::exp((long double)yv[static_cast<std::size_t>(r * 4 + c)]);
    for (int c = 0; c < 4; ++c) {
      const long double p = std::exp((long double)yv[static_cast<std::size_t>(r * 4 + c)]) / z;
      CHECK(vals(s)[static_cast<std::size_t>(r * 4 + c)] == doctest::Approx(double(p)).epsilon(1e-15));
      CHECK(vals(special::log_softmax(y, 1, float64))[static_cast<std::size_t>(r * 4 + c)] ==
            doctest::Approx(double(std::log(p))).epsilon(1e-14));
    }
    CHECK(vals(special::logsumexp(y.to(float64), {1}))[static_cast<std::size_t>(r)] == doctest::Approx(double(std::log(z))).epsilon(1e-15));
  }
  CHECK(special::softmax(y, 0).dtype() == float32);
}

TEST_CASE("special functions: gradcheck and gradgradcheck") {
  using autodiff::gradcheck;
  using autodiff::gradgradcheck;
  const auto one = [](Tensor (*f)(const Tensor&)) { return [f](const V& in) { return f(in[0]); }; };
  const Tensor pos = leaf({0.3, 1.7, 4.2, 11.5}), anyx = leaf({-2.3, -0.4, 0.0, 0.6, 3.1}), unit = leaf({-0.9, -0.2, 0.35, 0.8});
  CHECK(gradcheck(one(lgamma), {leaf({-2.3, -0.4, 0.6, 3.1})}));
  CHECK(gradgradcheck([](const V& in) { return std::vector<Tensor>{lgamma(in[0])}; }, {pos}));
  CHECK(gradcheck(one(digamma), {leaf({-2.3, -0.4, 0.6, 3.1})}));
  CHECK(gradgradcheck([](const V& in) { return std::vector<Tensor>{digamma(in[0])}; }, {pos}));
  CHECK(gradcheck([](const V& in) { return polygamma(2, in[0]); }, {pos}));
  CHECK(gradcheck([](const V& in) { return mvlgamma(in[0], 3); }, {leaf({1.2, 2.5, 6.0})}));
  CHECK(gradcheck(one(erfinv), {unit}));
  CHECK(gradgradcheck([](const V& in) { return std::vector<Tensor>{erfinv(in[0])}; }, {unit}));
  CHECK(gradcheck(one(i0), {anyx}));
  CHECK(gradcheck(one(special::i0e), {anyx}));
  CHECK(gradcheck(one(special::i1), {anyx}));
  CHECK(gradcheck(one(special::i1e), {anyx}));
  CHECK(gradgradcheck([](const V& in) { return std::vector<Tensor>{special::i1e(in[0])}; }, {leaf({-2.3, 0.6, 3.1})}));
  CHECK(gradcheck(one(special::erfcx), {anyx}));
  CHECK(gradcheck(one(special::ndtr), {anyx}));
  CHECK(gradcheck(one(special::ndtri), {leaf({0.01, 0.3, 0.5, 0.97})}));
  CHECK(gradcheck(one(special::log_ndtr), {leaf({-30.0, -3.0, 0.2, 5.0})}));
  CHECK(gradcheck(one(special::entr), {pos}));
  CHECK(gradcheck([](const V& in) { return special::xlog1py(in[0], in[1]); }, {leaf({0.7, -1.9, 2.2}), leaf({0.4, 2.5, -0.3})}));
  CHECK(gradgradcheck([](const V& in) { return std::vector<Tensor>{special::xlog1py(in[0], in[1])}; },
                      {leaf({0.7, -1.9, 2.2}), leaf({0.4, 2.5, -0.3})}));
  // zeta in q, the incomplete gamma functions in x (the other argument a constant)
  const Tensor s = vec({2.5, 3.0, 4.5});
  CHECK(gradcheck([s](const V& in) { return special::zeta(s, in[0]); }, {leaf({0.7, 1.9, 5.2})}));
  const Tensor a = vec({0.5, 2.0, 7.5});
  CHECK(gradcheck([a](const V& in) { return igamma(a, in[0]); }, {leaf({0.3, 2.9, 6.1})}));
  CHECK(gradcheck([a](const V& in) { return igammac(a, in[0]); }, {leaf({0.3, 2.9, 6.1})}));
  // the derivative values at the edges: i1 and i1e have slope 1/2 at 0; log_ndtr far in the lower tail is ~ -x
  Tensor z = leaf({0.0, 0.0});
  (special::i1(z.select(0, 0)) + special::i1e(z.select(0, 1))).backward();
  CHECK(vals(z.grad()) == std::vector<double>{0.5, 0.5});
  Tensor t = leaf({-40.0});
  special::log_ndtr(t).sum().backward();
  CHECK(vals(t.grad())[0] == doctest::Approx(40.0249).epsilon(1e-4));  // phi(x) / Phi(x) ~ -x - 1/x
}

TEST_CASE("special functions: errors name the op and change nothing") {
  CHECK_THROWS_WITH_AS(polygamma(-1, vec({1.0})), "[polygamma] n must be non-negative, got -1", Error);
  CHECK_THROWS_WITH_AS(mvlgamma(vec({1.0}), 0), "[mvlgamma] p must be at least 1, got 0", Error);
  CHECK_THROWS_WITH_AS(mvlgamma(vec({3.0, 0.75}), 3), Contains("[mvlgamma] every element must be greater than (p - 1) / 2 = 1"), Error);
  CHECK_THROWS_WITH_AS(mvlgamma(vec({kNaN}), 1), Contains("[mvlgamma] every element must be greater than (p - 1) / 2 = 0"), Error);
  const Tensor c = vec({1.0}).to(complex128);
  CHECK_THROWS_WITH_AS(lgamma(c), "[lgamma] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::i1e(c), "[i1e] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::zeta(c, vec({1.0})), Contains("[zeta] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(igamma(vec({1.0, 2.0}), vec({1.0, 2.0, 3.0})), Contains("[igamma]"), Error);
  // no gradient in zeta's x or in the incomplete gamma functions' a (as torch): the backward says so
  Tensor x = leaf({3.0}), q = leaf({2.0});
  const Tensor z = special::zeta(x, q);
  CHECK_THROWS_WITH_AS(z.sum().backward(), Contains("[zeta] the gradient with respect to x is not implemented"), Error);
  CHECK(!q.grad().defined());
  Tensor a = leaf({2.0});
  const Tensor p = igammac(a, vec({1.0}));
  CHECK_THROWS_WITH_AS(p.sum().backward(), Contains("[igammac] the gradient with respect to a is not implemented"), Error);
}
