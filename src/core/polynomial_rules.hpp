// src/core/polynomial_rules.hpp - the classical orthogonal polynomials of torch.special (Chebyshev T, U, V, W and
// their shifted forms, Hermite H and He, Laguerre L, Legendre P) and their derivatives of any order in x, as one
// element function for the CPU engine (core/polynomials.cpp) and the CUDA kernels (cuda/elementwise_ops.cuh).
//
// Note [orthogonal polynomials]
// Every family is the three-term recurrence p_{-1} = 0, p_0 = 1,
//   p_{j+1}(x) = ((alpha_j x + beta_j) p_j(x) - gamma_j p_{j-1}(x)) / delta_j,
// with integer coefficients (DLMF 18.9.1, Table 18.9.1; V and W as U with p_1 = 2x -+ 1):
//   T: alpha = 2 (1 for j = 0), beta = 0, gamma = 1, delta = 1        U: 2, 0, 1, 1
//   V: 2, -1 for j = 0 else 0, 1, 1                                 W: 2, +1 for j = 0 else 0, 1, 1
//   H: 2, 0, 2j, 1                 He: 1, 0, j, 1                   L: -1, 2j + 1, j, j + 1      P: 2j + 1, 0, j, j + 1
// (the divisions of L and P once per step, after the integer products). The k-th derivative in x follows by
// differentiating the recurrence k times (Leibniz: x's factor contributes once):
//   p^(m)_{j+1} = ((alpha_j x + beta_j) p^(m)_j + m alpha_j p^(m-1)_j - gamma_j p^(m)_{j-1}) / delta_j,
// carried for all m = 0..k together (p^(m)_0 = 0 for m >= 1), so every derivative order is the same loop and the
// order-k op's gradient in x is the order-(k + 1) op (core/polynomials.cpp). The shifted Chebyshev polynomials are
// T*_n(x) = T_n(2x - 1) (U, V, W alike), so their k-th derivative is 2^k p^(k)(2x - 1).
// n (a tensor of any real dtype, as x) is integer-valued: a fractional n is truncated toward zero (torch's
// conversion to int64, so n = 2.7 gives p_2 and n = -0.5 gives p_0), n < 0 gives 0 (torch's), NaN, infinite or
// |n| >= 2^53 (where doubles stop being integers) gives NaN; k > n gives 0. Accuracy: within about n ulps of the
// polynomial's size on the range (the recurrence's roundings add up; measured against long double coefficient sums
// and closed forms, tests/test_special_polynomials.cpp). Cost: n steps of (k + 1) products, except the fast paths of
// k = 0 (the error of acos x, times n, is the recurrence's):
//  - Chebyshev T, U, V, W for |x| < 1 and n > 16: with theta = acos x, T_n = cos(n theta),
//    U_n = sin((n + 1) theta) / sin theta, V_n = cos((n + 1/2) theta) / cos(theta / 2),
//    W_n = sin((n + 1/2) theta) / sin(theta / 2), sin theta = sqrt((1 - x)(1 + x)), cos(theta / 2) = sqrt((1 + x) / 2),
//    sin(theta / 2) = sqrt((1 - x) / 2) (1 -+ x exact near +-1, so no digits lost there): O(1) for any n;
//  - x = +-1 (T, U, V, W, P): the integer values T_n(+-1) = (+-1)^n, U_n(+-1) = (+-1)^n (n + 1),
//    V_n(1) = 1, V_n(-1) = (-1)^n (2n + 1), W_n(1) = 2n + 1, W_n(-1) = (-1)^n, P_n(+-1) = (+-1)^n.
// The recurrence scales its values by 2^-500 whenever they pass 2^500 (all orders together: it is linear), so a
// value beyond the double range (|x| > 1 and large n, Hermite's factorial growth) comes out as the infinity of its
// sign, and an intermediate one that comes back into range loses nothing. x = +-inf gives the infinity of the
// leading term's sign (k < n); a NaN x gives NaN. Derivative orders are limited to kMaxPolynomialOrder (the
// loop's arrays have a fixed size, as the GPU needs); the ops refuse a higher one by name.
#pragma once
#include <math.h>

#include "core/element_traits.hpp"

namespace phasor::detail {
namespace polynomial_rules {

/// The families of Note [orthogonal polynomials] (the CUDA kernels' template argument).
enum Family : int { kChebyshevT, kChebyshevU, kChebyshevV, kChebyshevW, kHermiteH, kHermiteHe, kLaguerreL, kLegendreP };

/// The highest derivative order in x the element function carries (Note [orthogonal polynomials]).
constexpr int kMaxPolynomialOrder = 32;

/// The recurrence coefficients (alpha, beta, gamma, delta) of step j of `family` (Note [orthogonal polynomials]).
struct Step {
  double alpha, beta, gamma, delta;
};

/// Step j of `family`'s recurrence: p_{j+1} = ((alpha x + beta) p_j - gamma p_{j-1}) / delta.
PHASOR_HOST_DEVICE inline Step step_of(int family, double j) {
  switch (family) {
    case kChebyshevT: return {j == 0 ? 1.0 : 2.0, 0, 1, 1};
    case kChebyshevU: return {2, 0, 1, 1};
    case kChebyshevV: return {2, j == 0 ? -1.0 : 0.0, 1, 1};
    case kChebyshevW: return {2, j == 0 ? 1.0 : 0.0, 1, 1};
    case kHermiteH: return {2, 0, 2 * j, 1};
    case kHermiteHe: return {1, 0, j, 1};
    case kLaguerreL: return {-1, 2 * j + 1, j, j + 1};
    default: return {2 * j + 1, 0, j, j + 1};  // kLegendreP
  }
}

/// (-1)^n for an integer-valued n >= 0.
PHASOR_HOST_DEVICE inline double parity(double n) { return ::fmod(n, 2.0) == 0 ? 1.0 : -1.0; }

/// p_n(x) for k = 0 by a closed form where Note [orthogonal polynomials] has one (x = +-1, or a Chebyshev
/// polynomial at |x| < 1 with n > 16); false where the recurrence must run.
PHASOR_HOST_DEVICE inline bool closed_form(int family, double x, double n, double& out) {
  const bool chebyshev = family <= kChebyshevW;
  if (::fabs(x) == 1) {
    if (!chebyshev && family != kLegendreP) return false;
    const double s = x > 0 ? 1.0 : parity(n);  // x^n
    switch (family) {
      case kChebyshevU: out = s * (n + 1); break;
      case kChebyshevV: out = x > 0 ? 1.0 : s * (2 * n + 1); break;
      case kChebyshevW: out = x > 0 ? 2 * n + 1 : s; break;
      default: out = s;  // T, P
    }
    return true;
  }
  if (!chebyshev || !(::fabs(x) < 1) || n <= 16) return false;
  const double theta = ::acos(x);
  switch (family) {
    case kChebyshevT: out = ::cos(n * theta); break;
    case kChebyshevU: out = ::sin((n + 1) * theta) / ::sqrt((1 - x) * (1 + x)); break;
    case kChebyshevV: out = ::cos((n + 0.5) * theta) / ::sqrt(0.5 * (1 + x)); break;
    default: out = ::sin((n + 0.5) * theta) / ::sqrt(0.5 * (1 - x)); break;  // W
  }
  return true;
}

/// The recurrence's scale step: values above 2^500 are scaled by 2^-500 (and counted), so that a polynomial beyond
/// the double range keeps its sign and one that comes back into range its value (Note [orthogonal polynomials]).
constexpr double kScaleAbove = 0x1p500;
constexpr int kScaleBits = 500;

/// v 2^(500 scale), without an int overflow for huge counts (the value is then +-inf).
PHASOR_HOST_DEVICE inline double unscale(double v, int scale) {
  return scale == 0 ? v : ::ldexp(v, (scale > 8 ? 8 : scale) * kScaleBits);
}

/// d^k/dx^k p_n(x) of `family` by the differentiated recurrence, 0 <= k <= kMaxPolynomialOrder, 0 <= k <= n,
/// finite x (Note [orthogonal polynomials]).
PHASOR_HOST_DEVICE inline double recurrence(int family, double x, double n, int k) {
  int scale = 0;
  if (k == 0) {  // the plain recurrence, without arrays
    double prev = 0, cur = 1;
    for (double j = 0; j < n; j += 1) {
      const Step s = step_of(family, j);
      const double next = ((s.alpha * x + s.beta) * cur - s.gamma * prev) / s.delta;
      prev = cur;
      cur = next;
      if (::fabs(cur) > kScaleAbove) cur *= 1 / kScaleAbove, prev *= 1 / kScaleAbove, ++scale;
    }
    return unscale(cur, scale);
  }
  double cur[kMaxPolynomialOrder + 1], prev[kMaxPolynomialOrder + 1];  // p^(m)_j and p^(m)_{j-1}, m = 0..k
  for (int m = 0; m <= k; ++m) cur[m] = m == 0 ? 1.0 : 0.0, prev[m] = 0;
  for (double j = 0; j < n; j += 1) {
    const Step s = step_of(family, j);
    const double t = s.alpha * x + s.beta;
    double largest = 0;
    for (int m = k; m >= 0; --m) {  // downwards: cur[m - 1] is still step j's
      const double lower = m > 0 ? m * s.alpha * cur[m - 1] : 0.0;
      const double next = (t * cur[m] + lower - s.gamma * prev[m]) / s.delta;
      prev[m] = cur[m];
      cur[m] = next;
      largest = ::fmax(largest, ::fabs(next));
    }
    if (largest > kScaleAbove) {  // the recurrence is linear in all orders together: one factor for all
      for (int m = 0; m <= k; ++m) cur[m] *= 1 / kScaleAbove, prev[m] *= 1 / kScaleAbove;
      ++scale;
    }
  }
  return unscale(cur[k], scale);
}

/// d^k/dx^k p_n(x) at x = +-inf, 0 <= k <= n: the infinity of the sign of the leading term c_n x^(n-k) (c_n > 0
/// but Laguerre's, (-1)^n / n!), and for k = n the constant c_n n! (the recurrence at any x, here 0).
PHASOR_HOST_DEVICE inline double at_infinity(int family, double x, double n, int k) {
  if (k == n) return recurrence(family, 0.0, n, k);
  double sign = x > 0 ? 1.0 : parity(n - k);
  if (family == kLaguerreL) sign *= parity(n);
  return sign * (x * x);  // +-inf
}

/// d^k/dx^k of `family`'s p_n at x, shifted (x -> 2x - 1, Chebyshev only) when `shifted` (Note [orthogonal
/// polynomials]).
PHASOR_HOST_DEVICE inline double polynomial(int family, bool shifted, double x, double n, int k) {
  if (::isnan(n) || ::isinf(n) || ::fabs(n) >= 0x1p53) return __builtin_nan("");
  n = ::trunc(n);
  if (n < 0 || k > n) return 0;
  if (::isnan(x)) return x;
  if (shifted) x = ::fma(2.0, x, -1.0);
  double v;
  if (::isinf(x)) v = at_infinity(family, x, n, k);
  else if (k != 0 || !closed_form(family, x, n, v)) v = recurrence(family, x, n, k);
  return shifted && k != 0 ? ::ldexp(v, k) : v;
}

}  // namespace polynomial_rules

/// d^k/dx^k of the orthogonal polynomial p_n(x) of `family` (shifted when `shifted`), computed in double (Note
/// [orthogonal polynomials]).
template <class T>
PHASOR_HOST_DEVICE inline T polynomial_of(int family, bool shifted, T x, T n, int k) {
  return static_cast<T>(polynomial_rules::polynomial(family, shifted, static_cast<double>(x), static_cast<double>(n), k));
}

}  // namespace phasor::detail
