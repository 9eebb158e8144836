// tests/test_special_bessel.cpp - the Bessel functions of phasor/special.hpp (bessel_j0/j1/y0/y1, modified_bessel_i0/
// i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0) and the Airy function airy_ai against references
// computed here in long double (__float128 for Ai's series): Bessel's integral by the trapezoidal rule (spectrally
// accurate for its periodic integrand), the power series, Hankel's asymptotic expansions, the integral of K by the
// trapezoidal rule; identities (Wronskians, J0's first zero, Ai'' = x Ai); special values; every gradient by
// gradcheck and gradgradcheck; errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "special_test_util.hpp"
#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using namespace special_test;

namespace {

/// J_nu(x) = (1/pi) int_0^pi cos(nu t - x sin t) dt by the trapezoidal rule with 400 panels: the integrand is even
/// and 2 pi-periodic, so the rule is spectrally accurate (error ~ J_800(x), nothing for |x| <= 100).
LD ref_j_integral(int nu, LD x) {
  const int n = 400;
  LD sum = 0;
  for (int i = 0; i <= n; ++i) {
    const LD t = kPiL * i / n;
    sum += (i == 0 || i == n ? 0.5L : 1.0L) * std::cos(nu * t - x * std::sin(t));
  }
  return sum / n;
}

/// Hankel's expansion (DLMF 10.17.3-4) for large x: J (second = false) or Y of order nu, x >= 25, with
/// a_k = (4 nu^2 - 1)(4 nu^2 - 9)...(4 nu^2 - (2k - 1)^2) / (k! 8^k), summed while the terms fall.
LD ref_hankel(int nu, LD x, bool second) {
  LD p = 0, q = 0, a = 1, last = 1e300L;
  for (int k = 0; k < 200; ++k) {
    if (k > 0) a *= (4.0L * nu * nu - (2.0L * k - 1) * (2.0L * k - 1)) / (k * 8.0L * x);
    if (std::fabs(a) > last) break;  // the asymptotic series' smallest term reached
    last = std::fabs(a);
    const LD sign = (k / 2) % 2 ? -1 : 1;
    (k % 2 ? q : p) += sign * a;
  }
  // omega = x - nu pi / 2 - pi / 4: cos and sin of it from those of x (x itself is exact)
  const LD phase = nu * kPiL / 2 + kPiL / 4, c = std::cos(x) * std::cos(phase) + std::sin(x) * std::sin(phase),
           s = std::sin(x) * std::cos(phase) - std::cos(x) * std::sin(phase);
  const LD amp = std::sqrt(2 / (kPiL * x));
  return second ? amp * (s * p + c * q) : amp * (c * p - s * q);
}

/// J_nu(x) for nu = 0, 1: the integral up to |x| = 60, Hankel's expansion beyond.
LD ref_j(int nu, LD x) {
  if (std::fabs(x) <= 60) return ref_j_integral(nu, x);
  return (nu == 1 && x < 0 ? -1 : 1) * ref_hankel(nu, std::fabs(x), false);
}

/// Y_nu(x) for nu = 0, 1 and 0 < x <= 10 by the series (DLMF 10.8.1-2), psi(k + 1) = H_k - gamma:
///   Y0 = 2/pi (ln(x/2) + gamma) J0 + 2/pi sum_{k>=1} (-1)^(k+1) H_k y^k / (k!)^2,
///   Y1 = -2 / (pi x) + 2/pi ln(x/2) J1 - x / (2 pi) sum_k (psi(k+1) + psi(k+2)) (-y)^k / (k! (k+1)!),  y = x^2 / 4.
LD ref_y_series(int nu, LD x) {
  if (x == 0) return -kInf;
  const LD y = x * x / 4;
  LD term = 1, h = 0, sum = nu == 0 ? 0 : 1 - 2 * kEulerL;
  for (int k = 1; k < 200; ++k) {
    term *= -y / (static_cast<LD>(k) * (k + nu));
    h += 1.0L / k;
    sum += term * (nu == 0 ? h : 2 * (h - kEulerL) + 1.0L / (k + 1));
    if (std::fabs(term) < 1e-30L) break;
  }
  if (nu == 0) return 2 / kPiL * ((std::log(x / 2) + kEulerL) * ref_j(0, x) - sum);
  return -2 / (kPiL * x) + 2 / kPiL * std::log(x / 2) * ref_j(1, x) - x / (2 * kPiL) * sum;
}

/// e^x K_nu(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt (x cosh t - x without cancellation) by the
/// trapezoidal rule (the integrand is even and analytic in |Im t| < pi/2: spectrally accurate) with step 1/64, or
/// 1/(2 sqrt(x)) for large x (the peak's width is 1/sqrt(x)), to where the integrand is below 1e-40.
LD ref_k_scaled(LD nu, LD x) {
  if (std::isinf(x)) return 0;
  const LD h = std::min(1.0L / 64, 0.5L / std::sqrt(x));
  LD sum = 0.5L;
  for (int i = 1; i < 100000; ++i) {
    const LD t = i * h, s = std::sinh(t / 2), f = std::exp(-2 * x * s * s) * std::cosh(nu * t);
    sum += f;
    if (f < 1e-40L) break;
  }
  return h * sum;
}

/// I_nu(x) for nu = 0, 1 by the power series (positive terms).
LD ref_i(int nu, LD x) {
  const LD y = x * x / 4;
  LD term = nu ? x / 2 : 1, sum = term;
  for (int k = 1; k < 4000; ++k) {
    term *= y / (static_cast<LD>(k) * (k + nu));
    sum += term;
    if (term < sum * 1e-22L) break;
  }
  return sum;
}

/// K_nu(x) for small x by the series K0 = -(ln(x/2) + gamma) I0 + sum y^k / (k!)^2 H_k (DLMF 10.31.2) and
/// K1 = 1/x + ln(x/2) I1 - x/4 sum (psi(k+1) + psi(k+2)) y^k / (k! (k+1)!) (DLMF 10.31.1).
LD ref_k_series(int nu, LD x) {
  if (x == 0) return kInf;
  const LD y = x * x / 4;
  LD term = 1, h = 0, sum = nu == 0 ? 0 : 1 - 2 * kEulerL;
  for (int k = 1; k < 200; ++k) {
    term *= y / (static_cast<LD>(k) * (k + nu));
    h += 1.0L / k;
    sum += term * (nu == 0 ? h : 2 * (h - kEulerL) + 1.0L / (k + 1));
    if (term < 1e-30L) break;
  }
  if (nu == 0) return sum - (std::log(x / 2) + kEulerL) * ref_i(0, x);
  return 1 / x + std::log(x / 2) * ref_i(1, x) - x / 4 * sum;
}

/// Ai(x) by its Maclaurin series Ai(0) f - |Ai'(0)| g (DLMF 9.4.1) in __float128 (the sums reach e^(2/3 |x|^(3/2))
/// while Ai stays O(1): 113 bits leave 80 at x = -12), for -12 <= x <= 5. Ai(0) and -Ai'(0) are 1 / (3^(2/3)
/// Gamma(2/3)) and 1 / (3^(1/3) Gamma(1/3)), as triple doubles.
LD ref_airy_series(LD xl) {
  using Q = __float128;
  const Q c1 = Q(0.3550280538878172) + Q(2.05233632436212e-17) + Q(-1.1009245373379416e-34);
  const Q c2 = Q(0.2588194037928068) + Q(-2.522243111610832e-17) + Q(-1.1690102804178028e-33);
  const Q x = xl, x3 = x * x * x;
  Q tf = 1, tg = x, f = 1, g = x;
  for (int k = 1; k < 120; ++k) {
    tf *= x3 / Q((3 * k - 1) * (3 * k));
    tg *= x3 / Q((3 * k) * (3 * k + 1));
    f += tf;
    g += tg;
  }
  return static_cast<LD>(c1 * f - c2 * g);
}

/// Ai(x) for x <= -9 by the asymptotic expansion (DLMF 9.7.9) in long double, z = 2/3 |x|^(3/2),
/// u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!), summed while the terms fall.
LD ref_airy_negative(LD x) {
  const LD a = -x, z = 2 * a * std::sqrt(a) / 3;
  LD p = 0, q = 0, u = 1, last = 1e300L;
  for (int k = 0; k < 100; ++k) {
    if (k > 0) u *= (6.0L * k - 5) * (6.0L * k - 3) * (6.0L * k - 1) / ((2.0L * k - 1) * 216 * k * z);
    if (std::fabs(u) > last) break;
    last = std::fabs(u);
    ((k % 2) ? q : p) += ((k / 2) % 2 ? -1 : 1) * u;
  }
  const LD c = std::cos(z - kPiL / 4), s = std::sin(z - kPiL / 4);
  return (c * p + s * q) / (std::sqrt(kPiL) * std::sqrt(std::sqrt(a)));
}

/// Ai(x) for x > 0 as sqrt(x / 3) / pi K_{1/3}(2/3 x^(3/2)) (DLMF 9.6.1), K by ref_k_scaled.
LD ref_airy_positive(LD x) {
  const LD z = 2 * x * std::sqrt(x) / 3;
  return std::sqrt(x / 3) / kPiL * std::exp(-z) * ref_k_scaled(1.0L / 3, z);
}

/// One float64 value of a unary op.
double at(Tensor (*f)(const Tensor&), double x) { return vals(f(vec({x})))[0]; }

}  // namespace

TEST_CASE("bessel_j0, bessel_j1 against Bessel's integral and Hankel's expansion") {
  const auto xs = grids({grid(-60.0, 60.0, 481), {1e-300, 1e-8, -1e-5, 80.0, 123.4, 1e3, 3e4, -2.5e5}});
  // absolute error below 1 (|J| <= 1; the relative error is unbounded at the zeros of J)
  check_accuracy("bessel_j0", special::bessel_j0, xs, [](LD x) { return ref_j(0, x); }, 1e-15, 2e-7, 1.0);
  check_accuracy("bessel_j1", special::bessel_j1, xs, [](LD x) { return ref_j(1, x); }, 1e-15, 2e-7, 1.0);
  // away from the zeros, relative accuracy: small x, and x where |J| is at least 0.05
  std::vector<double> rel;
  for (double x : grids({grid(1e-6, 2.0, 41), grid(2.0, 200.0, 991)}))
    if (std::fabs(static_cast<double>(ref_j(0, x))) > 0.05 && std::fabs(static_cast<double>(ref_j(1, x))) > 0.05)
      rel.push_back(x);
  check_accuracy("bessel_j0 relative", special::bessel_j0, rel, [](LD x) { return ref_j(0, x); }, 2e-14, 1e-6);
  check_accuracy("bessel_j1 relative", special::bessel_j1, rel, [](LD x) { return ref_j(1, x); }, 2e-14, 1e-6);
  // the two references agree where both hold (the test's own consistency)
  for (LD x : {25.0L, 40.0L, 60.0L}) {
    CHECK(std::fabs(static_cast<double>(ref_j_integral(0, x) - ref_hankel(0, x, false))) < 1e-17);
    CHECK(std::fabs(static_cast<double>(ref_j_integral(1, x) - ref_hankel(1, x, false))) < 1e-17);
  }
  // J0's first zero j_{0,1} = 2.404825557695773...: J0 changes sign across it, and J0' = -J1 there is -0.5191...
  const double z = 2.404825557695772768621631879326;
  CHECK(std::fabs(at(special::bessel_j0, z)) < 1e-16);
  CHECK(at(special::bessel_j1, z) == doctest::Approx(0.5191474972894669).epsilon(1e-14));
  // parity, special values
  CHECK(vals(special::bessel_j0(vec({-3.7}))) == vals(special::bessel_j0(vec({3.7}))));
  CHECK(vals(special::bessel_j1(vec({-3.7})))[0] == -vals(special::bessel_j1(vec({3.7})))[0]);
  const auto j0s = vals(special::bessel_j0(vec({0.0, kInf, -kInf, kNaN})));
  CHECK(j0s[0] == 1.0);
  CHECK(j0s[1] == 0.0);
  CHECK(j0s[2] == 0.0);
  CHECK(std::isnan(j0s[3]));
  const auto j1s = vals(special::bessel_j1(vec({0.0, kInf, kNaN})));
  CHECK(j1s[0] == 0.0);
  CHECK(j1s[1] == 0.0);
  CHECK(std::isnan(j1s[2]));
}

TEST_CASE("bessel_y0, bessel_y1 against series and Hankel's expansion; the Wronskian") {
  const auto small = grids({grid(0.02, 10.0, 250), {1e-300, 1e-10, 1e-4}});
  const auto large = grids({grid(25.0, 200.0, 351), {1e3, 3e4, 1e6}});
  check_accuracy("bessel_y0 small", special::bessel_y0, small, [](LD x) { return ref_y_series(0, x); }, 1e-15, 2e-7, 1.0);
  check_accuracy("bessel_y1 small", special::bessel_y1, small, [](LD x) { return ref_y_series(1, x); }, 1e-15, 2e-7, 1.0);
  check_accuracy("bessel_y0 large", special::bessel_y0, large, [](LD x) { return ref_hankel(0, x, true); }, 1e-15, 2e-7, 1.0);
  check_accuracy("bessel_y1 large", special::bessel_y1, large, [](LD x) { return ref_hankel(1, x, true); }, 1e-15, 2e-7, 1.0);
  // near 0 the relative accuracy: Y0 ~ 2/pi ln(x/2), Y1 ~ -2 / (pi x)
  check_accuracy("bessel_y0 near 0", special::bessel_y0, {1e-300, 1e-30, 1e-8, 1e-3}, [](LD x) { return ref_y_series(0, x); }, 1e-15, 2e-7);
  check_accuracy("bessel_y1 near 0", special::bessel_y1, {1e-300, 1e-30, 1e-8, 1e-3}, [](LD x) { return ref_y_series(1, x); }, 1e-15, 2e-7);
  // J1 Y0 - J0 Y1 = 2 / (pi x) everywhere, the gap between the references included
  const Tensor x = vec(grids({grid(0.1, 60.0, 300), {1e3}}));
  const Tensor w = special::bessel_j1(x) * special::bessel_y0(x) - special::bessel_j0(x) * special::bessel_y1(x);
  CHECK(((w * x * (M_PI / 2) - 1.0).abs().max().item<double>()) < 1e-13);
  // special values (torch's): -inf at 0, NaN below 0, 0 at +inf
  const auto y0v = vals(special::bessel_y0(vec({0.0, -1.0, kInf, -kInf, kNaN})));
  CHECK(y0v[0] == -kInf);
  CHECK(std::isnan(y0v[1]));
  CHECK(y0v[2] == 0.0);
  CHECK(std::isnan(y0v[3]));
  CHECK(std::isnan(y0v[4]));
  const auto y1v = vals(special::bessel_y1(vec({0.0, -2.0, kInf})));
  CHECK(y1v[0] == -kInf);
  CHECK(std::isnan(y1v[1]));
  CHECK(y1v[2] == 0.0);
}

TEST_CASE("modified_bessel_k0/k1 and their scaled forms against the integral and series; I0 K1 + I1 K0 = 1/x") {
  const auto xs = grids({grid(0.01, 3.0, 150), grid(3.0, 60.0, 229), {1e-300, 1e-12, 1e-5, 0.999999, 1.0, 1.000001,
                                                                     100.0, 300.0, 700.0}});
  for (int nu : {0, 1}) {
    CAPTURE(nu);
    const auto ref = [nu](LD x) { return x < 0.5L ? ref_k_series(nu, x) : ref_k_scaled(nu, x) * std::exp(-x); };
    const auto ref_scaled = [nu](LD x) { return x < 0.5L ? ref_k_series(nu, x) * std::exp(x) : ref_k_scaled(nu, x); };
    check_accuracy("modified_bessel_k", nu ? special::modified_bessel_k1 : special::modified_bessel_k0, xs, ref, 3e-15, 2e-7);
    check_accuracy("scaled_modified_bessel_k", nu ? special::scaled_modified_bessel_k1 : special::scaled_modified_bessel_k0,
                   grids({xs, {1e4, 1e8, 1e300}}), ref_scaled, 3e-15, 2e-7);
    // the two references agree where both hold
    for (LD x : {0.3L, 1.0L, 2.0L}) CHECK(std::fabs(static_cast<double>(ref_k_series(nu, x) / (ref_k_scaled(nu, x) * std::exp(-x)) - 1)) < 1e-17);
  }
  // the Wronskian I0 K1 + I1 K0 = 1/x, in scaled form (i0e, i1e) out to large x
  const Tensor x = vec(grids({grid(0.05, 50.0, 200), {1e3, 1e6}}));
  const Tensor w = special::i0e(x) * special::scaled_modified_bessel_k1(x) + special::i1e(x) * special::scaled_modified_bessel_k0(x);
  CHECK(((w * x - 1.0).abs().max().item<double>()) < 1e-14);
  // K underflows where e^-x does; the scaled forms keep going: e^x K_nu(x) ~ sqrt(pi / (2x))
  CHECK(at(special::modified_bessel_k0, 800.0) == 0.0);
  CHECK(at(special::scaled_modified_bessel_k0, 1e10) == doctest::Approx(std::sqrt(M_PI / 2e10)).epsilon(1e-10));
  // special values (torch's): +inf at 0, NaN below, 0 at +inf
  for (auto f : {special::modified_bessel_k0, special::modified_bessel_k1, special::scaled_modified_bessel_k0,
                 special::scaled_modified_bessel_k1}) {
    const auto v = vals(f(vec({0.0, -0.5, kInf, kNaN})));
    CHECK(v[0] == kInf);
    CHECK(std::isnan(v[1]));
    CHECK(v[2] == 0.0);
    CHECK(std::isnan(v[3]));
  }
  // modified_bessel_i0 / i1 are torch's names of i0 / i1
  const Tensor t = vec({-2.5, 0.0, 0.7, 30.0});
  CHECK(vals(special::modified_bessel_i0(t)) == vals(i0(t)));
  CHECK(vals(special::modified_bessel_i1(t)) == vals(special::i1(t)));
}

TEST_CASE("spherical_bessel_j0 is sin x / x, accurate near 0") {
  const auto xs = grids({grid(-40.0, 40.0, 321), {1e-300, 1e-9, -1e-5, 0.01, 1e3, 1e7}});
  const auto sinc = [](LD x) { return x == 0 ? 1.0L : std::sin(x) / x; };
  check_accuracy("spherical_bessel_j0", special::spherical_bessel_j0, xs, sinc, 1e-15, 2e-7, 1.0);
  // near 0 and away from the zeros relatively
  check_accuracy("spherical_bessel_j0 relative", special::spherical_bessel_j0, {1e-300, 1e-9, 1e-4, -0.01, 0.3, 1.7, -2.9, 7.0},
                 sinc, 3e-16, 1e-7);
  const auto v = vals(special::spherical_bessel_j0(vec({0.0, kInf, -kInf, kNaN})));
  CHECK(v[0] == 1.0);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 0.0);
  CHECK(std::isnan(v[3]));
  // its derivative -j1 = cos x / x - sin x / x^2, -x/3 near 0 (no cancellation), 0 at 0
  Tensor x = leaf({0.0, 1e-6, 0.5, 2.0, -7.5});
  special::spherical_bessel_j0(x).sum().backward();
  std::vector<double> want;
  for (double v0 : vals(x.detach())) {
    const LD t = v0;
    want.push_back(v0 == 0 ? 0.0 : static_cast<double>(std::fabs(t) < 0.01L ? -t / 3 + t * t * t / 30 : std::cos(t) / t - std::sin(t) / (t * t)));
  }
  check_close(x.grad(), want, 1e-14);
}

TEST_CASE("Bessel functions: int64 promotes, float32 stays float32, complex is refused") {
  const Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 5});
  for (auto f : {special::bessel_j0, special::bessel_j1, special::bessel_y0, special::bessel_y1, special::modified_bessel_k0,
                 special::modified_bessel_k1, special::scaled_modified_bessel_k0, special::scaled_modified_bessel_k1,
                 special::spherical_bessel_j0}) {
    CHECK(f(n).dtype() == default_dtype());
    CHECK(vals(f(n).to(float64)) == vals(f(n.to(default_dtype())).to(float64)));
    CHECK(f(vec({1.5}).to(float32)).dtype() == float32);
  }
  const Tensor c = vec({1.0}).to(complex128);
  CHECK_THROWS_WITH_AS(special::bessel_j0(c), "[bessel_j0] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::bessel_y1(c), "[bessel_y1] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::modified_bessel_k0(c), "[modified_bessel_k0] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::scaled_modified_bessel_k1(c), "[scaled_modified_bessel_k1] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::spherical_bessel_j0(c), "[spherical_bessel_j0] not supported for complex input (got complex128)", Error);
  CHECK_THROWS_WITH_AS(special::modified_bessel_i1(c), "[i1] not supported for complex input (got complex128)", Error);
  CHECK(vals(c.real()) == std::vector<double>{1.0});  // the input unchanged
}

TEST_CASE("Bessel functions: gradcheck and gradgradcheck") {
  using autodiff::gradcheck;
  using autodiff::gradgradcheck;
  const auto one = [](Tensor (*f)(const Tensor&)) { return [f](const V& in) { return f(in[0]); }; };
  const Tensor anyx = leaf({-7.3, -2.1, -0.4, 0.3, 1.9, 5.5, 31.0}), pos = leaf({0.07, 0.6, 0.999, 1.3, 4.2, 11.5, 45.0});
  for (auto f : {special::bessel_j0, special::bessel_j1, special::spherical_bessel_j0}) {
    CHECK(gradcheck(one(f), {anyx}));
    CHECK(gradgradcheck(one(f), {anyx}));
  }
  for (auto f : {special::bessel_y0, special::bessel_y1, special::modified_bessel_k0, special::modified_bessel_k1,
                 special::scaled_modified_bessel_k0, special::scaled_modified_bessel_k1}) {
    CHECK(gradcheck(one(f), {pos}));
    CHECK(gradgradcheck(one(f), {pos}));
  }
  // at 0: J1' = 1/2, spherical j0' = 0 and j0'' = -1/3 (its gradient's op, the spherical j1, has slope 1/3 there)
  Tensor z = leaf({0.0, 0.0});
  (special::bessel_j1(z.select(0, 0)) + special::spherical_bessel_j0(z.select(0, 1))).backward();
  CHECK(vals(z.grad()) == std::vector<double>{0.5, 0.0});
  Tensor z2 = leaf({0.0});
  const auto g = autodiff::grad({special::spherical_bessel_j0(z2).sum()}, {z2}, {}, std::nullopt, true);
  g[0].sum().backward();
  CHECK(vals(z2.grad())[0] == doctest::Approx(-1.0 / 3).epsilon(1e-15));
  CHECK(gradgradcheck(one(special::spherical_bessel_j0), {leaf({0.0, 1e-3, 0.9, 1.1})}));
}

TEST_CASE("airy_ai against its series in __float128, its asymptotic expansion and K_{1/3}; Ai'' = x Ai") {
  // the negative axis: absolute error against the envelope |x|^(-1/4) / sqrt(pi) >= 0.24 (floor 0.2), within about
  // z = 2/3 |x|^(3/2) ulps (z's rounding moves the phase); the positive axis relatively
  check_accuracy("airy_ai near 0", special::airy_ai, grids({grid(-9.0, 1.5, 211), {1e-300, -1e-9}}), ref_airy_series, 2e-15, 2e-7, 0.2);
  check_accuracy("airy_ai negative", special::airy_ai, grid(-30.0, -9.0, 211), ref_airy_negative, 5e-14, 2e-6, 0.2);
  check_accuracy("airy_ai positive", special::airy_ai, grids({grid(0.0, 5.0, 101), grid(5.0, 25.0, 81), {40.0}}),
                 [](LD x) { return x <= 5 ? ref_airy_series(x) : ref_airy_positive(x); }, 1e-13, 5e-6);
  // the references agree where both hold
  for (LD x : {-12.0L, -10.0L, -9.0L}) CHECK(std::fabs(static_cast<double>(ref_airy_series(x) - ref_airy_negative(x))) < 1e-17);
  for (LD x : {1.5L, 3.0L, 5.0L}) CHECK(std::fabs(static_cast<double>(ref_airy_series(x) / ref_airy_positive(x) - 1)) < 1e-17);
  // Ai(0) = 1 / (3^(2/3) Gamma(2/3)), Ai'(0) = -1 / (3^(1/3) Gamma(1/3)), and Ai'' = x Ai (the gradient's gradient)
  CHECK(at(special::airy_ai, 0.0) == doctest::Approx(0.35502805388781723926).epsilon(1e-16));
  Tensor x = leaf({-14.0, -9.0, -3.7, 0.0, 0.8, 1.5, 2.9, 8.0});
  const Tensor d1 = autodiff::grad({special::airy_ai(x).sum()}, {x}, {}, std::nullopt, true)[0];
  CHECK(vals(d1.detach())[3] == doctest::Approx(-0.25881940379280679840).epsilon(1e-15));
  const Tensor d2 = autodiff::grad({d1.sum()}, {x}, {}, std::nullopt, true)[0];
  check_close(d2.detach(), vals((x * special::airy_ai(x)).detach()), 1e-15);
  // special values: 0 at +-inf (Ai underflows past x = 104), NaN stays NaN
  const auto v = vals(special::airy_ai(vec({kInf, -kInf, 110.0, kNaN})));
  CHECK(v[0] == 0.0);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 0.0);
  CHECK(std::isnan(v[3]));
  CHECK(special::airy_ai(from_vector(std::vector<std::int64_t>{1, 2})).dtype() == default_dtype());
  CHECK_THROWS_WITH_AS(special::airy_ai(vec({1.0}).to(complex128)), "[airy_ai] not supported for complex input (got complex128)", Error);
  // gradients, twice (Ai' is an op of its own whose derivative is x Ai)
  const auto f = [](const V& in) { return special::airy_ai(in[0]); };
  const Tensor pts = leaf({-12.5, -9.0, -4.2, -0.6, 0.0, 0.9, 1.49, 1.51, 3.3, 7.0});
  CHECK(autodiff::gradcheck(f, {pts}));
  CHECK(autodiff::gradgradcheck(f, {pts}));
}
