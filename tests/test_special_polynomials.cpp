// tests/test_special_polynomials.cpp - torch.special's orthogonal polynomials (phasor/special.hpp) and their
// derivatives in x against references computed here in long double: the explicit coefficient sums of each family
// (DLMF 18.5), differentiated term by term, and the trigonometric closed forms of the Chebyshev polynomials
// (cos(n t), sin((n + 1) t) / sin t, ...) for large n; torch's conventions for n; gradcheck and gradgradcheck;
// errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
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

using LD = long double;
using Poly = Tensor (*)(const Tensor&, const Tensor&);
using PolyN = Tensor (*)(const Tensor&, const Scalar&);
using PolyX = Tensor (*)(const Scalar&, const Tensor&);

/// n! in long double.
LD fact(int n) {
  LD f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

/// The binomial coefficient C(n, k).
LD binom(int n, int k) { return k < 0 || k > n ? 0 : fact(n) / (fact(k) * fact(n - k)); }

/// The power-basis coefficients c_j (p_n = sum_j c_j x^j) of the family named `family`, from the explicit sums of
/// DLMF 18.5.11-18.5.16 (V_n = U_n - U_{n-1}, W_n = U_n + U_{n-1}).
std::vector<LD> coefficients(const std::string& family, int n) {
  std::vector<LD> c(n + 1, 0.0L);
  if (family == "T") {
    if (n == 0) return {1};
    for (int k = 0; 2 * k <= n; ++k)  // T_n = n/2 sum_k (-1)^k (n-k-1)! / (k! (n-2k)!) (2x)^(n-2k)
      c[n - 2 * k] = n / 2.0L * (k % 2 ? -1 : 1) * fact(n - k - 1) / (fact(k) * fact(n - 2 * k)) * std::pow(2.0L, n - 2 * k);
  } else if (family == "U") {
    for (int k = 0; 2 * k <= n; ++k)  // U_n = sum_k (-1)^k C(n-k, k) (2x)^(n-2k)
      c[n - 2 * k] = (k % 2 ? -1 : 1) * binom(n - k, k) * std::pow(2.0L, n - 2 * k);
  } else if (family == "V" || family == "W") {
    c = coefficients("U", n);
    if (n > 0) {
      const auto u = coefficients("U", n - 1);
      for (int j = 0; j < n; ++j) c[j] += (family == "V" ? -1 : 1) * u[j];
    }
  } else if (family == "H") {
    for (int m = 0; 2 * m <= n; ++m)  // H_n = n! sum_m (-1)^m (2x)^(n-2m) / (m! (n-2m)!)
      c[n - 2 * m] = fact(n) * (m % 2 ? -1 : 1) * std::pow(2.0L, n - 2 * m) / (fact(m) * fact(n - 2 * m));
  } else if (family == "He") {
    for (int m = 0; 2 * m <= n; ++m)  // He_n = n! sum_m (-1)^m x^(n-2m) / (m! (n-2m)! 2^m)
      c[n - 2 * m] = fact(n) * (m % 2 ? -1 : 1) / (fact(m) * fact(n - 2 * m) * std::pow(2.0L, m));
  } else if (family == "L") {
    for (int k = 0; k <= n; ++k) c[k] = binom(n, k) * (k % 2 ? -1 : 1) / fact(k);  // L_n = sum_k C(n,k) (-x)^k / k!
  } else {  // P_n = 2^-n sum_k (-1)^k C(n, k) C(2n - 2k, n) x^(n-2k)
    for (int k = 0; 2 * k <= n; ++k) c[n - 2 * k] = (k % 2 ? -1 : 1) * binom(n, k) * binom(2 * n - 2 * k, n) / std::pow(2.0L, n);
  }
  return c;
}

/// d^k/dx^k sum_j c_j x^j at x (Horner on the differentiated coefficients).
LD power_series_derivative(const std::vector<LD>& c, int k, LD x) {
  LD s = 0;
  for (int j = static_cast<int>(c.size()) - 1; j >= k; --j) s = s * x + c[j] * fact(j) / fact(j - k);
  return s;
}

/// The reference p^(k)_n(x) of `family` (shifted: at 2x - 1, times 2^k).
LD ref_poly(const std::string& family, bool shifted, int n, int k, LD x) {
  if (n < 0 || k > n) return 0;
  const LD y = shifted ? 2 * x - 1 : x;
  return power_series_derivative(coefficients(family, n), k, y) * (shifted ? std::pow(2.0L, k) : 1);
}

struct Family {
  std::string name;  // the reference's family
  bool shifted;
  Poly f;    // (x, n)
  PolyN fn;  // (x, number n)
  PolyX fx;  // (number x, n)
  double lo, hi;  // the x range tested
};

/// Every op (its three overloads) with its family and a range of x where its values are O(1) to moderate.
std::vector<Family> families() {
#define FAMILY(NAME, REF, SHIFTED, LO, HI) Family{REF, SHIFTED, special::NAME, special::NAME, special::NAME, LO, HI}
  return {FAMILY(chebyshev_polynomial_t, "T", false, -1.3, 1.3),
          FAMILY(chebyshev_polynomial_u, "U", false, -1.3, 1.3),
          FAMILY(chebyshev_polynomial_v, "V", false, -1.3, 1.3),
          FAMILY(chebyshev_polynomial_w, "W", false, -1.3, 1.3),
          FAMILY(shifted_chebyshev_polynomial_t, "T", true, -0.2, 1.2),
          FAMILY(shifted_chebyshev_polynomial_u, "U", true, -0.2, 1.2),
          FAMILY(shifted_chebyshev_polynomial_v, "V", true, -0.2, 1.2),
          FAMILY(shifted_chebyshev_polynomial_w, "W", true, -0.2, 1.2),
          FAMILY(hermite_polynomial_h, "H", false, -3.0, 3.0),
          FAMILY(hermite_polynomial_he, "He", false, -4.0, 4.0),
          FAMILY(laguerre_polynomial_l, "L", false, -2.0, 12.0),
          FAMILY(legendre_polynomial_p, "P", false, -1.2, 1.2)};
#undef FAMILY
}

/// The largest |got - want| / max(|want|, scale) over xs, where scale is the largest |want| of the row (so the
/// error is relative to the polynomial's size, absolute near its zeros).
double worst_error(const std::vector<double>& got, const std::vector<LD>& want) {
  LD scale = 0;
  for (LD w : want) scale = std::max(scale, std::fabs(w));
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i]) / std::max(scale, 1e-300L)));
  return worst;
}

}  // namespace

TEST_CASE("orthogonal polynomials and their derivatives in x against the explicit coefficient sums") {
  for (const auto& fam : families()) {
    CAPTURE(fam.name);
    CAPTURE(fam.shifted);
    const auto xs = grid(fam.lo, fam.hi, 53);
    for (int n : {0, 1, 2, 3, 5, 8, 12}) {
      CAPTURE(n);
      for (Dtype dt : {float64, float32}) {
        CAPTURE(dt);
        const Tensor x = from_vector(xs).to(dt);
        const auto xv = vals(x.to(float64));
        std::vector<LD> want;
        for (double v : xv) want.push_back(ref_poly(fam.name, fam.shifted, n, 0, v));
        const Tensor got = fam.f(x, full({static_cast<std::int64_t>(xs.size())}, n, dt));
        CHECK(got.dtype() == dt);
        CHECK(worst_error(vals(got.to(float64)), want) <= (dt == float64 ? 1e-14 : 1e-6));
      }
      // derivatives of orders 1..3 (the gradient ops) in float64: through autodiff::grad, each the next order
      Tensor x = leaf(xs);
      Tensor y = fam.f(x, full({static_cast<std::int64_t>(xs.size())}, n, float64)).sum();
      for (int k = 1; k <= 3; ++k) {
        CAPTURE(k);
        const Tensor d = autodiff::grad({y}, {x}, {}, std::nullopt, true)[0];
        std::vector<LD> want;
        for (double v : xs) want.push_back(ref_poly(fam.name, fam.shifted, n, k, v));
        CHECK(worst_error(vals(d.detach()), want) <= 1e-13);
        y = d.sum();
      }
    }
  }
}

TEST_CASE("Chebyshev polynomials of large degree against cos(n t), sin((n + 1) t) / sin t, ...") {
  // x = cos t; the fast path (|x| < 1, n > 16) and the recurrence (n <= 16, and the derivatives) against the closed
  // forms, T_n(+-1), U_n(+-1), V_n(+-1), W_n(+-1) and P_n(+-1) exactly
  const auto xs = grids({grid(-0.999, 0.999, 97), {-1.0, 1.0, 1 - 1e-9}});
  const auto closed = [](char kind, LD n, LD x) -> LD {
    if (std::fabs(x) == 1) {
      const LD s = x > 0 ? 1 : (std::fmod(n, 2.0L) == 0 ? 1 : -1);
      return kind == 'T' ? s : kind == 'U' ? s * (n + 1) : kind == 'V' ? (x > 0 ? 1 : s * (2 * n + 1)) : (x > 0 ? 2 * n + 1 : s);
    }
    const LD t = std::acos(x);
    switch (kind) {
      case 'T': return std::cos(n * t);
      case 'U': return std::sin((n + 1) * t) / std::sin(t);
      case 'V': return std::cos((n + 0.5L) * t) / std::cos(t / 2);
      default: return std::sin((n + 0.5L) * t) / std::sin(t / 2);
    }
  };
  const std::vector<std::pair<char, Poly>> ops = {{'T', special::chebyshev_polynomial_t}, {'U', special::chebyshev_polynomial_u},
                                                  {'V', special::chebyshev_polynomial_v}, {'W', special::chebyshev_polynomial_w}};
  for (const auto& [kind, f] : ops) {
    CAPTURE(kind);
    for (double n : {7.0, 16.0, 17.0, 100.0, 1000.0, 123456.0}) {
      CAPTURE(n);
      const auto got = vals(f(vec(xs), vec({n})));
      std::vector<LD> want;
      for (double v : xs) want.push_back(closed(kind, n, v));
      // relative to the size of the polynomial on [-1, 1] (1, n + 1 or 2n + 1): within about n ulps (the recurrence's
      // rounding, or acos x's rounding times n in the closed forms)
      CHECK(worst_error(got, want) <= 1e-15 * (n + 4));
    }
  }
  for (double n : {0.0, 1.0, 6.0, 51.0, 1e6})
    CHECK(vals(special::legendre_polynomial_p(vec({1.0, -1.0}), n)) == std::vector<double>{1.0, std::fmod(n, 2.0) == 0 ? 1.0 : -1.0});
  // the shifted forms are the plain ones at 2x - 1
  const Tensor x = vec(grid(0.0, 1.0, 41));
  CHECK(vals(special::shifted_chebyshev_polynomial_w(x, 40.0)) == vals(special::chebyshev_polynomial_w(x * 2.0 - 1.0, 40.0)));
  CHECK(vals(special::shifted_chebyshev_polynomial_t(x, 9.0)) == vals(special::chebyshev_polynomial_t(x * 2.0 - 1.0, 9.0)));
}

TEST_CASE("orthogonal polynomials: torch's conventions for n, broadcasting, numbers, dtypes") {
  const Tensor x = vec({-0.5, 0.25, 0.75});
  for (const auto& fam : families()) {
    CAPTURE(fam.name);
    // n < 0 gives 0; a fractional n is truncated toward zero (torch's int64 conversion); NaN and inf give NaN
    CHECK(vals(fam.f(x, vec({-1.0, -7.0, -0.5 - 1.0}))) == std::vector<double>{0.0, 0.0, 0.0});
    CHECK(vals(fam.f(x, vec({2.7, 3.9, -0.5}))) == vals(fam.f(x, vec({2.0, 3.0, 0.0}))));
    for (double v : vals(fam.f(x, vec({kNaN, kInf, 1e300})))) CHECK(std::isnan(v));
    // n broadcasts against x; int64 n and x promote as torch's (int64 with int64: the default float dtype)
    const Tensor n = from_vector(std::vector<std::int64_t>{0, 1, 4, 9}).reshape({4, 1});
    const Tensor table = fam.f(x, n);
    CHECK(table.shape() == Shape{4, 3});
    CHECK(table.dtype() == float64);
    CHECK(vals(table.select(0, 2)) == vals(fam.fn(x, 4.0)));
    CHECK(vals(fam.fn(x, std::int64_t{4})) == vals(fam.fn(x, 4.0)));
    // a number x with an int64 n: the default float dtype, as torch's
    const Tensor at_quarter = fam.fx(0.25, n.select(1, 0));
    CHECK(at_quarter.dtype() == default_dtype());
    CHECK(vals(at_quarter.to(float64)) == vals(fam.f(full({4}, 0.25, default_dtype()), n.select(1, 0).to(default_dtype())).to(float64)));
    CHECK(vals(fam.fx(0.25, n.select(1, 0).to(float64))) == vals(fam.f(vec({0.25, 0.25, 0.25, 0.25}), n.select(1, 0).to(float64))));
    CHECK(fam.f(from_vector(std::vector<std::int64_t>{1, 2}), from_vector(std::vector<std::int64_t>{3, 3})).dtype() == default_dtype());
    CHECK(fam.f(x.to(float32), n).dtype() == float32);
    // NaN x gives NaN (for n >= 0)
    CHECK(std::isnan(vals(fam.fn(vec({kNaN}), 3.0))[0]));
    CHECK(vals(fam.fn(vec({kNaN}), -1.0))[0] == 0.0);
  }
  // growth past the double range: the infinity, with the sign of the leading term
  CHECK(vals(special::hermite_polynomial_h(vec({50.0, -50.0}), 300.0)) == std::vector<double>{kInf, kInf});
  CHECK(vals(special::chebyshev_polynomial_t(vec({1e10, -1e10}), 41.0)) == std::vector<double>{kInf, -kInf});
  CHECK(vals(special::chebyshev_polynomial_t(vec({-1e10, -1e10}), vec({40.0, 39.0}))) == std::vector<double>{kInf, -kInf});
  // x = +-inf: the infinity of the leading term's sign (Laguerre's leading coefficient is (-1)^n / n!); n = 0: 1
  CHECK(vals(special::chebyshev_polynomial_t(vec({-kInf, -kInf, kInf}), vec({2.0, 3.0, 0.0}))) == std::vector<double>{kInf, -kInf, 1.0});
  CHECK(vals(special::laguerre_polynomial_l(vec({kInf, -kInf}), 3.0)) == std::vector<double>{-kInf, kInf});
  CHECK(vals(special::hermite_polynomial_he(vec({-kInf}), 5.0)) == std::vector<double>{-kInf});
  // and the derivatives there: d/dx T_3 = 12 x^2 - 3 -> +inf; d^3/dx^3 T_3 = 24 everywhere
  Tensor xi = leaf({-kInf});
  special::chebyshev_polynomial_t(xi, 3.0).sum().backward();
  CHECK(vals(xi.grad()) == std::vector<double>{kInf});
  Tensor x3 = leaf({-kInf, 0.3});
  Tensor d = special::chebyshev_polynomial_t(x3, 3.0).sum();
  for (int k = 1; k <= 3; ++k) d = autodiff::grad({d}, {x3}, {}, std::nullopt, true)[0].sum();
  CHECK(d.item<double>() == 48.0);
}

TEST_CASE("orthogonal polynomials: gradcheck and gradgradcheck in x") {
  using autodiff::gradcheck;
  using autodiff::gradgradcheck;
  for (const auto& fam : families()) {
    CAPTURE(fam.name);
    CAPTURE(fam.shifted);
    const Tensor n = vec({0.0, 1.0, 3.0, 6.0, 25.0});  // 25: the Chebyshev fast path in the value, the recurrence in the gradient
    const double mid = (fam.lo + fam.hi) / 2, half = (fam.hi - fam.lo) / 2;
    const Tensor x = leaf({mid - 0.61 * half, mid - 0.13 * half, mid + 0.07 * half, mid + 0.44 * half, mid + 0.52 * half});
    const Poly f = fam.f;
    CHECK(gradcheck([f, n](const V& in) { return f(in[0], n); }, {x}, 1e-6, 1e-5, 1e-4));
    CHECK(gradgradcheck([f, n](const V& in) { return f(in[0], n); }, {x}));
  }
}

TEST_CASE("orthogonal polynomials: errors name the op and change nothing") {
  const Tensor c = vec({0.5}).to(complex128);
  CHECK_THROWS_WITH_AS(special::chebyshev_polynomial_t(c, vec({2.0})), Contains("[chebyshev_polynomial_t] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(special::legendre_polynomial_p(vec({0.5}), c), Contains("[legendre_polynomial_p] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(special::hermite_polynomial_he(vec({0.5, 1.0}), vec({1.0, 2.0, 3.0})), Contains("[hermite_polynomial_he]"), Error);
  // no gradient in n (as torch): the backward says so, and the x gradient is not written
  Tensor x = leaf({0.3}), n = leaf({4.0});
  const Tensor y = special::laguerre_polynomial_l(x, n);
  CHECK_THROWS_WITH_AS(y.sum().backward(), Contains("[laguerre_polynomial_l] the gradient with respect to n is not implemented"), Error);
  CHECK(!x.grad().defined());
  // derivative orders beyond kMaxPolynomialOrder (32) are refused by name
  Tensor z = leaf({0.3});
  Tensor d = special::shifted_chebyshev_polynomial_u(z, 40.0).sum();
  for (int k = 1; k <= 32; ++k) d = autodiff::grad({d}, {z}, {}, std::nullopt, true)[0].sum();
  CHECK(std::isfinite(vals(d.detach().reshape({1}))[0]));
  CHECK_THROWS_WITH_AS(autodiff::grad({d}, {z}, {}, std::nullopt, true),
                       Contains("[shifted_chebyshev_polynomial_u] derivatives in x of order above 32 are not supported"), Error);
  CHECK(vals(z.detach()) == std::vector<double>{0.3});
}
