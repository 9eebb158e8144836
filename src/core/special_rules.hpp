// src/core/special_rules.hpp - the scalar special functions behind phasor's special ops (lgamma, digamma,
// polygamma, Hurwitz zeta, erfinv, erfcx, ndtr, ndtri, log_ndtr, i0, i0e, i1, i1e, entr, xlog1py, the
// regularized incomplete gamma functions, the Bessel functions J, Y, K and spherical j and the Airy function), one definition for the CPU engine (core/special.cpp) and the CUDA
// kernels (cuda/elementwise_ops.cuh), so both devices run the same algorithms.
//
// Note [special functions: precision]
// Every function computes in double (the helpers in namespace special_rules); a float argument is widened and
// the double result rounded once, so float results are correctly rounded but for rare near-ties (measured: all
// within 0.5 ulp). Double results are within a few ulps (2^-52 relative) of the exact value of the function at
// the given arguments; each Note gives the maximum measured on dense grids against __float128 and long double
// references. Exceptions: near a zero of the function the error stays a few ulps of the terms that cancel, and
// where the function itself is ill-conditioned (deep tails of the incomplete gamma functions) the relative
// error is about the condition number times 2^-53. The C library functions used (exp, log, log1p, expm1, erf,
// erfc, lgamma, pow, sin) are glibc's on the host and CUDA's on the device (a few ulps), so the two devices may
// differ in the last bits. The fitted polynomials and the Bernoulli, zeta-value and Temme coefficients were
// computed for this file (Chebyshev interpolation in __float128, exact rational arithmetic).
#pragma once
#include <math.h>

#include "core/element_traits.hpp"

namespace phasor::detail {
namespace special_rules {

constexpr double kInf = __builtin_huge_val();
constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kInvSqrtTwoPi = 0.3989422804014326779399460599343818685;  // 1 / sqrt(2 pi)
constexpr double kEulerGamma = 0.5772156649015328606065120900824024310;
constexpr double kInvSqrtPi = 0.5641895835477562869480794515607725858;   // 1 / sqrt(pi)
constexpr double kTwoOverSqrtPi = 1.128379167095512573896158903121545172;  // erf'(0)
constexpr double kSqrtPiOverTwo = 0.8862269254527580136490837416705725914;
constexpr double kInvSqrt2 = 0.7071067811865475244008443621048490393;
constexpr double kSqrt2Hi = 1.4142135623730951;  // sqrt(2) = hi + lo to 106 bits
constexpr double kSqrt2Lo = -9.667293313452913e-17;
constexpr double kLn2Hi = 0x1.62e42feep-1;  // ln 2 = hi + lo, hi with 32 significant bits
constexpr double kLn2Lo = 1.9082149292705877e-10;

/// A quiet NaN.
PHASOR_HOST_DEVICE inline double nan_value() { return __builtin_nan(""); }

/// c0 + x (c1 + x (c2 + ...)): Horner's rule on literal coefficients.
PHASOR_HOST_DEVICE constexpr double horner(double, double c0) { return c0; }
/// c0 + x (c1 + x (c2 + ...)): Horner's rule on literal coefficients.
template <class... C>
PHASOR_HOST_DEVICE constexpr double horner(double x, double c0, C... c) {
  return c0 + x * horner(x, c...);
}

/// x^2 = hi + lo exactly (the fma gives the rounding error of the product); returns hi.
PHASOR_HOST_DEVICE inline double square_exact(double x, double& lo) {
  const double hi = x * x;
  lo = ::fma(x, x, -hi);
  return hi;
}

/// x + y = hi + lo exactly (Knuth's two-sum); returns hi.
PHASOR_HOST_DEVICE inline double two_sum(double x, double y, double& lo) {
  const double hi = x + y, yy = hi - x;
  lo = (x - (hi - yy)) + (y - yy);
  return hi;
}

/// ln|Gamma(x)| from the C library: lgamma_r on the host (glibc's lgamma writes the global signgam, a data
/// race in parallel loops), lgamma on the device.
PHASOR_HOST_DEVICE inline double log_gamma(double x) {
#if defined(__CUDA_ARCH__)
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);
#endif
}

/// cot(pi r) for r = x - rint(x) in [-1/2, 1/2], r != 0: cos(pi r) is taken as sin(pi (1/2 - |r|)), so
/// neither sine loses digits to the rounding of its argument (a few ulps, also near r = +-1/2).
PHASOR_HOST_DEVICE inline double cot_pi(double r) {
  const double a = ::fabs(r);
  const double c = ::sin(kPi * (0.5 - a)) / ::sin(kPi * a);
  return r < 0 ? -c : c;
}

// Note [digamma]
// psi(x) = d/dx ln Gamma(x). x >= 10: the asymptotic series ln x - 1/(2x) - sum_k B_2k / (2k x^2k), eight
// terms (B_16), below 2^-60 relative there. 1 <= x < 2: psi(x) = (x - x0) g(x), x0 = 1.4616321449683623412...
// the positive zero (as hi + lo, so x - x0 is exact to 2^-106), g a degree-22 polynomial in 2x - 3
// (Chebyshev interpolation of psi(x) / (x - x0); 1.8e-16 relative), so psi keeps its relative accuracy through
// the zero. 2 <= x < 10: psi(x) = psi(x - n) + sum_{k=1..n} 1 / (x - k) down to [1, 2) (x - k exact, positive
// terms); 0 < x < 1: psi(x + 1) - 1/x. x < 0: the reflection psi(x) = psi(1 - x) - pi cot(pi x), with
// cot(pi x) from r = x - rint(x) (exact) by cot_pi. Conventions (torch's): psi(+0) = -inf, psi(-0) = +inf,
// negative integers and -inf give NaN, +inf gives +inf. Measured: x > 0 within 2.6 ulps (3.8e-16 relative);
// x < 0 within 5.3 ulps of the larger of |psi(1 - x)| and |psi(x)|, so a few ulps relative except near psi's
// zeros, one in each (-n, -n + 1).

constexpr double kDigammaRootHi = 1.4616321449683622;  // x0 = hi + lo
constexpr double kDigammaRootLo = 9.5499954299656974e-17;

/// psi(x) for x > 0 (Note [digamma]).
PHASOR_HOST_DEVICE inline double digamma_positive(double x) {
  if (x >= 10) {
    if (x == kInf) return x;
    const double z = 1 / (x * x);
    const double series = z * horner(z, 1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760,
                                     1.0 / 12, -3617.0 / 8160);
    return (::log(x) - 0.5 / x) - series;
  }
  double shift = 0;
  if (x < 1) {
    shift = -1 / x;
    x += 1;
  }
  while (x >= 2) {  // psi(x) = psi(x - 1) + 1 / (x - 1), x - 1 exact
    x -= 1;
    shift += 1 / x;
  }
  const double u = 2 * x - 3;
  const double g = horner(u, 0.95105587603183284, -0.21181371064073029, 0.060135621060196744,
                          -0.018550615381735115, 0.0059367952783056493, -0.0019350666648590097,
                          0.00063688803032572008, -0.00021074841140458636, 6.9950188739505056e-05,
                          -2.3258242394452569e-05, 7.7412322235040568e-06, -2.5780943630530801e-06,
                          8.5891273530333793e-07, -2.86315275846934e-07, 9.5420509726889063e-08,
                          -3.163020268955334e-08, 1.0542687624027994e-08, -3.7075072647122386e-09,
                          1.2358072433984831e-09, -2.7619635330317715e-10, 9.2064344991779942e-11,
                          -8.4981372301860957e-11, 2.8327066680217585e-11);
  return ((x - kDigammaRootHi) - kDigammaRootLo) * g + shift;
}

/// psi(x), the digamma function (Note [digamma]).
PHASOR_HOST_DEVICE inline double digamma(double x) {
  if (::isnan(x)) return x;
  if (x == 0) return ::copysign(kInf, -x);
  if (x < 0) {
    if (x == ::floor(x)) return nan_value();  // the poles, and -inf
    return digamma_positive(1 - x) - kPi * cot_pi(x - ::rint(x));
  }
  return digamma_positive(x);
}

// Note [Hurwitz zeta]
// zeta(s, q) = sum_{k >= 0} (q + k)^-s for s > 1.
// q > 0: the terms are summed directly while q + k < s + 8, stopping early once the rest of the series, below
// (q + k)^(1 - s) / (s - 1), is under 2^-56 of the sum (large s converges in a few terms); then the
// Euler-Maclaurin formula at a = q + N >= s + 8:
//   tail = a^(1-s) / (s - 1) + a^-s / 2 + sum_{j=1..14} B_2j / (2j)! s (s+1) ... (s+2j-2) a^(-s-2j+1),
// whose terms fall by about ((s + 2j) / (2 pi a))^2 each (fast for a >= s + 8; the loop stops at 2^-56 of the
// sum). Powers 1 and 2 (trigamma's) are 1 / a and 1 / (a a), others pow's. Measured: within 5 ulps (1.1e-15)
// for s in (1, 300], q in [1e-3, 1e6].
// q < 0, not an integer, integer s (otherwise the terms (q + k)^-s are not real: NaN): with q = r - m,
// m = -rint(q), |r| <= 1/2 (exact), the terms left of 0 are (r - j)^-s = (-1)^s (j - r)^-s, so
//   zeta(s, q) = r^-s + zeta(s, 1 + r) + (-1)^s (zeta(s, 1 - r) - zeta(s, m + 1 - r)),
// three sums over positive arguments (each given exactly as hi + lo) whatever the size of m, and the largest
// term r^-s from pow. Each term (a + lo)^-s of a sum is corrected for the low part by (1 + lo / a)^-s (a q + k
// that rounds would otherwise cost s ulps). Measured: even s within 2 ulps; odd s within 2.5 x 2^-53 of the sum
// of |q + k|^-s, a few ulps relative except where the two sides cancel (q near a half integer).
// Conventions (torch's): s == 1 -> +inf (whatever q but NaN), s < 1 -> NaN, q a non-positive integer -> +inf,
// q = +inf -> 0, q = -inf -> NaN; s = +inf -> 0, 1 or +inf for q > 1, q == 1, 0 < q < 1 (NaN for q < 0).

/// How hurwitz_positive forms its terms a^-e: plainly (pow), as F a^-e 2^shift for integer e <= 1001 without
/// leaving the double range (a = m 2^k, m in [1/2, 1), m^-e <= 2^e, the power of two exact), or as
/// e^(ls - e ln a) (Note [polygamma]).
struct ZetaScale {
  int mode = 0;  // 0 plain, 1 binary scale F 2^shift, 2 logarithmic scale e^ls
  double factor = 1;
  int shift = 0;
  double log_scale = 0;
  /// a^-e in this scale.
  PHASOR_HOST_DEVICE double term(double a, double e) const {
    if (mode == 0) return e == 2 ? 1 / (a * a) : e == 1 ? 1 / a : ::pow(a, -e);  // trigamma's powers without pow
    if (mode == 2) return ::exp(log_scale - e * ::log(a));
    int k;
    const double m = ::frexp(a, &k);
    return ::ldexp(factor * ::pow(m, -e), shift - k * static_cast<int>(e));
  }
};

/// (1 + lo / a)^-e, the factor that turns a^-e into (a + lo)^-e for |lo| <= ulp(a) / 2.
PHASOR_HOST_DEVICE inline double low_part_factor(double e, double lo, double a) {
  const double d = e * lo / a;
  return ::fabs(d) < 1e-8 ? 1 - d : ::exp(-d);
}

/// zeta(s, q + q_lo) in the scale `sc`, for s > 1 and finite q > 0, |q_lo| <= ulp(q) / 2 (Note [Hurwitz zeta]).
PHASOR_HOST_DEVICE inline double hurwitz_positive(double s, double q, double q_lo, const ZetaScale& sc) {
  const double limit = s + 8;
  double sum = 0, a = q, lo = q_lo;  // q + k = a + lo exactly
  for (int k = 1; a < limit; ++k) {
    const double t = sc.term(a, s) * low_part_factor(s, lo, a);
    sum += t;
    if (t * a < 1e-17 * (s - 1) * sum) return sum;  // the rest is below t a / (s - 1)
    double l;
    a = two_sum(q, k, l);
    lo = l + q_lo;
  }
  // B_2j / (2j)! for j = 1..14
  const double b[14] = {8.333333333333333333333e-2,  -1.388888888888888888889e-3, 3.306878306878306878307e-5,
                        -8.267195767195767195767e-7, 2.087675698786809897921e-8,  -5.284190138687493184848e-10,
                        1.338253653068467883283e-11, -3.389680296322582866830e-13, 8.586062056277844564136e-15,
                        -2.174868698558061873042e-16, 5.509002828360229515203e-18, -1.395446468581252334071e-19,
                        3.534707039629467471693e-21, -8.953517427037546850403e-23};
  const double p1 = sc.term(a, s - 1) * low_part_factor(s - 1, lo, a);  // a^(1-s), the tail's largest term
  const double p = p1 / a * (1 - lo / a);
  sum += p1 / (s - 1) + 0.5 * p;
  double f = s * p / a;  // s (s+1) ... (s+2j-2) a^(-s-2j+1)
  const double a2 = a * a;
  for (int j = 0; j < 14; ++j) {
    const double t = b[j] * f;
    sum += t;
    if (::fabs(t) < 1e-17 * sum) break;
    f *= (s + 2 * j + 1) * (s + 2 * j + 2) / a2;
  }
  return sum;
}

/// zeta(s, q) for integer s > 1 and negative non-integer q (Note [Hurwitz zeta]).
PHASOR_HOST_DEVICE inline double hurwitz_negative(double s, double q) {
  if (s == kInf) return nan_value();
  const double m = -::rint(q), r = q + m;  // q = r - m, |r| <= 1/2, both exact
  double lo;
  const double right = two_sum(1, r, lo);
  double sum = ::pow(r, -s) + hurwitz_positive(s, right, lo, ZetaScale{});  // zeta(s, r)
  if (m > 0) {  // plus sum_{j=1..m} (r - j)^-s = (-1)^s (zeta(s, 1 - r) - zeta(s, m + 1 - r))
    double lo1, lo2;
    const double a1 = two_sum(1, -r, lo1), a2 = two_sum(m + 1, -r, lo2);
    const double left = hurwitz_positive(s, a1, lo1, ZetaScale{}) - hurwitz_positive(s, a2, lo2, ZetaScale{});
    sum += ::fmod(s, 2.0) == 0 ? left : -left;
  }
  return sum;
}

/// zeta(s, q), the Hurwitz zeta function (Note [Hurwitz zeta]).
PHASOR_HOST_DEVICE inline double zeta(double s, double q) {
  if (::isnan(s) || ::isnan(q)) return nan_value();
  if (s == 1) return kInf;
  if (s < 1) return nan_value();
  if (q == -kInf) return nan_value();
  if (q <= 0) {
    if (q == ::floor(q)) return kInf;
    if (s != ::floor(s)) return nan_value();
    return hurwitz_negative(s, q);
  }
  if (q == kInf) return 0;
  if (s == kInf) return q == 1 ? 1.0 : (q > 1 ? 0.0 : kInf);
  return hurwitz_positive(s, q, 0, ZetaScale{});
}

// Note [polygamma]
// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (Note [Hurwitz zeta]; negative non-integer x through
// its three positive sums), n == 0 is digamma. n! = f 2^g is formed as a product, exact in chunks below 2^53
// and renormalized with frexp, so it never overflows. x > 0: n! times zeta's sum where no term can leave the
// double range (n <= 100 and x^(n+1) within 2^+-900); otherwise, n <= 1000: each term n! (x + k)^-(n+1) is
// formed as f m^-(n+1) 2^(g - k' (n+1)) (x + k = m 2^k') relative to a power of two near the result, and the
// sum scaled back once with ldexp, so neither 171! nor (x + k)^-(n+1) over- or underflows where the result
// does not (polygamma(200, 300) is about 1e-127): the accuracy of small n. n > 1000: the terms are
// exp(ln n! - (n + 1) ln(x + k)), relative error about 2^-53 times that exponent (7e-13 at n = 1200).
// Measured: x > 0, n <= 1000, within 7 ulps (9.4e-16); x < 0: odd n within 2.6 ulps, even n within
// 3.1 x 2^-53 of n! sum |x + k|^-(n+1) (as zeta). Poles (x = 0, -1, ...): (-1)^(n+1) inf, torch's value (+inf for
// odd n; for even n the sign differs on the two sides, -inf as torch). x = -inf: NaN; x = +inf: +0 for odd n, -0
// for even n.

/// psi^(n)(x), the polygamma function, n >= 0 (Note [polygamma]).
PHASOR_HOST_DEVICE inline double polygamma(int n, double x) {
  if (n == 0) return digamma(x);
  if (::isnan(x)) return x;
  const double sign = (n % 2 == 1) ? 1.0 : -1.0;
  if (x == kInf) return sign * 0.0;
  if (x == -kInf) return nan_value();
  if (x <= 0 && x == ::floor(x)) return sign * kInf;  // torch's (-1)^(n+1) n! zeta(n + 1, x) with zeta = +inf there
  const double s = n + 1.0;
  double f = 1, chunk = 1;  // n! = f 2^g; chunk: an exact product of consecutive factors, below 2^53
  int g = 0;
  for (int k = 2; k <= n + 1; ++k) {
    if (k > n || chunk * k > 0x1p53) {
      int e;
      f = ::frexp(f * chunk, &e);
      g += e;
      chunk = 1;
    }
    chunk *= k;
  }
  if (x < 0) return sign * ::ldexp(f * hurwitz_negative(s, x), g);
  int k;
  ::frexp(x, &k);  // x = m 2^k
  ZetaScale sc;
  if (n <= 100 && (k < 0 ? -k : k) * (n + 1) < 900)  // no term leaves the double range: plain powers
    return sign * (::ldexp(f, g) * hurwitz_positive(s, x, 0, sc));
  if (n > 1000) {
    sc.mode = 2;
    sc.log_scale = log_gamma(s);
    return sign * hurwitz_positive(s, x, 0, sc);
  }
  sc.factor = f;
  // scale the terms by 2^-e0 so that the largest part (the first term for x < 1, the tail's x^(1-s) past it)
  // stays below 2^s; one rounding when the sum is scaled back
  const int e0 = g - k * (x >= 1 ? n : n + 1);
  sc.mode = 1;
  sc.shift = g - e0;
  return sign * ::ldexp(hurwitz_positive(s, x, 0, sc), e0);
}

// Note [erfcx]
// erfcx(x) = e^(x^2) erfc(x). 0 <= x < 26: e^(x^2) erfc(x) with x^2 = hi + lo exact, e^(hi + lo) = e^hi (1 + lo),
// so the product carries only the errors of exp and erfc (the rounding of x * x would cost up to x^2 ulps).
// x >= 26: the asymptotic series (1 / (x sqrt(pi))) sum_k (-1)^k (2k-1)!! / (2x^2)^k, ten terms, below 2^-60
// there; no overflow (1/x). x < 0: 2 e^(x^2) - erfcx(-x) (no cancellation: the first term is >= 2, the second
// <= 1), +inf below about -26.63. erfcx(+inf) = 0, erfcx(-inf) = +inf. Measured: within 4.7 ulps (7e-16,
// glibc's erfc times exp in [1, 2]), 1.7 ulps for |x| >= 5.

/// erfcx(x) for x >= 0 (Note [erfcx]).
PHASOR_HOST_DEVICE inline double erfcx_nonnegative(double x) {
  if (x < 26) {
    double lo;
    const double hi = square_exact(x, lo);
    const double e = ::exp(hi);
    return ::fma(e, lo, e) * ::erfc(x);
  }
  const double t = 0.5 / x / x;  // 1 / (2x^2), no overflow
  return kInvSqrtPi / x *
         horner(t, 1.0, -1.0, 3.0, -15.0, 105.0, -945.0, 10395.0, -135135.0, 2027025.0, -34459425.0);
}

/// erfcx(x) = e^(x^2) erfc(x), the scaled complementary error function (Note [erfcx]).
PHASOR_HOST_DEVICE inline double erfcx(double x) {
  if (::isnan(x)) return x;
  if (x >= 0) return erfcx_nonnegative(x);
  double lo;
  const double hi = square_exact(x, lo);
  if (hi > 709.5) return kInf;  // 2 e^(x^2) > 2^1024 (and e^hi itself may be +inf, whose fma with lo = 0 is NaN)
  const double e = ::exp(hi);
  return 2 * ::fma(e, lo, e) - erfcx_nonnegative(-x);
}

// Note [erfinv]
// erfinv and ndtri share one inversion, y >= 0 with erf(y) = x and erfc(y) = r = 1 - x, where the caller gives
// x exactly when x < 1/2 and r exactly otherwise (1 - x is exact for x >= 1/2). A first guess, within 3e-8
// relative, comes from three polynomials fitted (Chebyshev interpolation) to erfinv(x) / x in
// w = -ln((1 - x)(1 + x)) = -ln(r (2 - r)) for w <= 5, and to erfinv in sqrt(w) on [sqrt(5), 6.1] and
// [6.1, 27.4] (r down to the smallest subnormal). One Halley step (cubic convergence: below 1e-19) on
// f(y) = erf(y) - x, written as r - erfc(y) where r is the exact one (so the residual has no cancellation near
// |x| = 1), with f''/f' = -2y: y -= u / (1 + y u), u = f / f'. For r < 1e-290, where e^(y^2) nears overflow,
// the step is on ln erfc(y) - ln r instead, with ln erfc(y) = ln erfcx(y) - y^2 (y^2 exact as hi + lo).
// |x| < 2^-26: erfinv(x) = x sqrt(pi) / 2 (the next term is below 2^-54). Measured: erfinv within 1.8 ulps on
// (-1, 1); ndtri = -sqrt(2) erfcinv(2p) (sqrt(2) as hi + lo; 2p, 1 - p and 2p - 1 exact where used) within
// 2 ulps on (0, 1), down to the smallest subnormal p and up to 1 - 2^-53. erfinv(+-1) = +-inf, |x| > 1 -> NaN,
// erfinv(-0) = -0; ndtri(0) = -inf, ndtri(1) = +inf, p outside [0, 1] -> NaN.

/// y >= 0 with erf(y) = x and erfc(y) = r, x exact when x < 1/2, r exact otherwise (Note [erfinv]).
PHASOR_HOST_DEVICE inline double erfinv_core(double x, double r) {
  const bool use_x = x < 0.5;
  if (use_x && x < 0x1p-26) return x * kSqrtPiOverTwo;
  const double w = use_x ? -::log1p(-x * x) : -::log(r * (2 - r));
  double y;
  if (w <= 5) {
    const double u = (w - 2.5) * 0.4;
    y = x * horner(u, 1.501409351110792, 0.61660072356863782, -0.026108250253375768, -0.019574195356900994,
                   0.0085256923423372676, -0.00048434490177881226, -0.00083579450054252534,
                   0.00028406824371464065, 2.4390115560764007e-05, -3.333668023227326e-05,
                   4.4555020418630589e-06);
  } else if (w <= 6.1 * 6.1) {
    const double u = (::sqrt(w) - 4.1680339887498949) * (1 / 1.9319660112501051);
    y = horner(u, 4.0094446087942481, 1.9509949979795613, 0.0032446126468499057, -0.0049002932959213968,
               0.0032466188676936836, -0.0016749350107829971, 0.00082904626643948544, -0.00056923820478257069,
               0.00020011473491533059, 0.00018682298970744795, -0.00013351727733341347);
  } else {
    const double u = (::sqrt(w) - 16.75) * (1 / 10.65);
    y = horner(u, 16.669370651067982, 10.682361113177127, -0.014587109385584184, 0.0067220793434085513,
               -0.0030689532800499265, 0.0015112588730243843, -0.00064564181816536897, -0.00034804283628342425,
               0.0003420909034581139, 0.00069420225216090174, -0.00044709003254051773, -0.00049623241218269638,
               0.00034914000175243143);
  }
  if (use_x || r >= 1e-290) {
    const double f = use_x ? ::erf(y) - x : r - ::erfc(y);
    const double u = f * kSqrtPiOverTwo * ::exp(y * y);  // f / f'
    return y - u / (1 + y * u);
  }
  double lo;
  const double hi = square_exact(y, lo);
  const double e = erfcx_nonnegative(y);
  const double g = ((-::log(r) - hi) + ::log(e)) - lo;  // ln erfc(y) - ln r
  const double h = kTwoOverSqrtPi / e;                  // -g'(y); g'' = h (2y - h)
  return y + (g / h) / (1 - g * (2 * y - h) / (2 * h));
}

/// erfinv(x), the inverse error function (Note [erfinv]).
PHASOR_HOST_DEVICE inline double erfinv(double x) {
  if (::isnan(x)) return x;
  const double a = ::fabs(x);
  if (a > 1) return nan_value();
  if (a == 1) return ::copysign(kInf, x);
  return ::copysign(erfinv_core(a, 1 - a), x);
}

/// ndtri(p), the inverse of the standard normal CDF (Note [erfinv]): -sqrt(2) erfcinv(2p).
PHASOR_HOST_DEVICE inline double ndtri(double p) {
  if (!(p >= 0 && p <= 1)) return nan_value();
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  double y;
  bool negative;
  if (p < 0.25) {  // 2p exact
    y = erfinv_core(1 - 2 * p, 2 * p);
    negative = true;
  } else if (p > 0.75) {  // 1 - p exact
    const double r = 2 * (1 - p);
    y = erfinv_core(1 - r, r);
    negative = false;
  } else {  // 2p - 1 exact
    const double x = 2 * p - 1;
    y = erfinv_core(::fabs(x), 1 - ::fabs(x));
    negative = x < 0;
  }
  const double v = ::fma(kSqrt2Hi, y, kSqrt2Lo * y);
  return negative ? -v : v;
}

// Note [ndtr]
// ndtr(x) = erfc(-x / sqrt 2) / 2. x >= -1: directly (the rounding of -x / sqrt 2 costs at most 1.6 ulps
// there). x < -1, the lower tail: erfc(z) = erfcx(z) e^(-z^2) with z^2 = x^2 / 2 taken exactly as hi + lo
// (erfcx is insensitive to the rounding of z, where erfc(z) would lose 2 z^2 ulps), and for results below
// about 2^-1010 the exponential is formed 2^128 times larger and scaled back by ldexp, one rounding into the
// subnormal range. log_ndtr(x): x < -1: ln(erfcx(z) / 2) - x^2 / 2 (x^2 / 2 exact as hi + lo; all terms
// negative, no cancellation, no underflow down to x = -1.9e154, -inf below); -1 <= x <= 0: ln ndtr(x);
// x > 0: log1p(-ndtr(-x)) (keeps the tiny negative values of the upper tail). Measured: ndtr within 4.9 ulps
// (4.4 ulps of the spacing for subnormal results), log_ndtr within 4.7 ulps. ndtr(-inf) = 0, ndtr(+inf) = 1,
// log_ndtr(-inf) = -inf, log_ndtr(+inf) = +0 (-0 for large finite x, whose value is a tiny negative).

/// v e^(-(hi + lo) / 2), also where the result is subnormal (Note [ndtr]).
PHASOR_HOST_DEVICE inline double gauss_scaled(double hi, double lo, double v) {
  const double h = 0.5 * hi, l = 0.5 * lo;
  if (h < 700) {
    const double e = ::exp(-h);
    return ::fma(-e, l, e) * v;  // e^(-h - l) = e^-h (1 - l)
  }
  if (h > 760) return 0;
  const double e = ::exp(128 * kLn2Hi - h);  // exact argument: h and 128 ln2_hi are multiples of 2^-43
  return ::ldexp(::fma(e, 128 * kLn2Lo - l, e) * v, -128);
}

/// ndtr(x), the standard normal CDF (Note [ndtr]).
PHASOR_HOST_DEVICE inline double ndtr(double x) {
  if (::isnan(x)) return x;
  if (x >= -1) return 0.5 * ::erfc(-x * kInvSqrt2);
  if (x == -kInf) return 0;
  double lo;
  const double hi = square_exact(x, lo);
  if (hi > 1600) return 0;
  return gauss_scaled(hi, lo, 0.5 * erfcx(-x * kInvSqrt2));
}

/// ln ndtr(x) (Note [ndtr]).
PHASOR_HOST_DEVICE inline double log_ndtr(double x) {
  if (::isnan(x)) return x;
  if (x == kInf) return 0;
  if (x > 0) return ::log1p(-ndtr(-x));
  if (x >= -1) return ::log(ndtr(x));
  const double hx = 0.5 * x, hi = hx * x;  // x^2 / 2 = hi + lo
  if (hi == kInf) return -kInf;
  const double lo = ::fma(hx, x, -hi);
  return (::log(0.5 * erfcx(-x * kInvSqrt2)) - hi) - lo;
}

// Note [modified Bessel]
// I0 and I1 (nu = 0, 1), even and odd. |x| < 21: the power series I_nu(x) = (x/2)^nu sum_k (x^2/4)^k /
// (k! (k + nu)!), all terms positive, at most 37 of them (stop at 2^-56 of the sum), at y = x^2 / 4 rounded,
// plus S'(y) times the rounding error of y (x^2 exact as hi + lo): the rounding of y alone would cost up to
// |x| / 2 ulps. The scaled forms multiply by e^-|x|. |x| >= 21: the asymptotic series
// I_nu(x) = e^x / sqrt(2 pi x) sum_k p_k, p_k = p_(k-1) ((2k - 1)^2 - 4 nu^2) / (8 k x), whose smallest term
// there is below 1e-20 (at most 27 terms); the scaled forms drop e^x, so they never form it, i0 / i1 form e^x
// as (e^(x/2))^2 past x = 700, so they overflow only where the value does (|x| > 713.98), and 1 / sqrt(2 pi x)
// is formed without overflow. Measured: within 8.5 ulps (1.6e-15 relative), the largest near |x| = 15..23
// (rounding in the term recurrence). i0(+-inf) = +inf, i0e(+-inf) = 0, i1(+-inf) = +-inf, i1e(+-inf) = +-0;
// i1 and i1e keep the sign of a zero.

/// sum_k (x^2/4)^k / (k! (k + nu)!) for |x| < 21 (Note [modified Bessel]).
PHASOR_HOST_DEVICE inline double bessel_i_series(double x, int nu) {
  double lo;
  const double y = 0.25 * square_exact(x, lo), y_lo = 0.25 * lo;  // x^2 / 4 = y + y_lo exactly
  if (y == 0) return 1;
  double term = 1, sum = 1, slope = 0;  // slope = sum_k k term_k = y S'(y)
  for (int k = 1; k < 60; ++k) {
    term *= y / (static_cast<double>(k) * (k + nu));
    sum += term;
    slope += k * term;
    if (term < 1e-17 * sum) break;
  }
  return sum + slope * (y_lo / y);  // S(y + y_lo) = S(y) + S'(y) y_lo
}

/// sum_k p_k, e^-x sqrt(2 pi x) I_nu(x) for x >= 21 (Note [modified Bessel]).
PHASOR_HOST_DEVICE inline double bessel_i_asymptotic(double x, int nu) {
  const double m = 4.0 * nu * nu;
  double p = 1, sum = 1;
  for (int k = 1; k < 40; ++k) {
    p *= ((2 * k - 1.0) * (2 * k - 1.0) - m) / (8.0 * k * x);
    sum += p;
    if (::fabs(p) < 1e-17 * sum) break;
  }
  return sum;
}

/// I_nu(|x|), scaled by e^-|x| when `scaled` (Note [modified Bessel]).
PHASOR_HOST_DEVICE inline double bessel_i(double x, int nu, bool scaled) {
  const double a = ::fabs(x);
  if (a < 21) {
    const double s = bessel_i_series(a, nu) * (nu == 1 ? 0.5 * a : 1.0);
    return scaled ? s * ::exp(-a) : s;
  }
  const double s = bessel_i_asymptotic(a, nu) * kInvSqrtTwoPi / ::sqrt(a);
  if (scaled) return s;
  if (a > 714) return kInf;
  if (a < 700) return ::exp(a) * s;
  const double e = ::exp(0.5 * a);
  return e * (e * s);
}

// Note [incomplete gamma]
// P(a, x) = gamma(a, x) / Gamma(a) and Q(a, x) = 1 - P(a, x), each computed directly where it is the smaller
// one, so each is accurate in its own tail; results are clamped to [0, 1] (rounding can pass 1 by an ulp).
// Prefactor D / a = x^a e^-x / Gamma(a + 1): a < 10: exp(a ln x - ln Gamma(a + 1) - x) with the last
// subtraction carried as hi + lo (x exact), ln Gamma(1 + a) for a < 1/2 from its series (zeta values) so that
// tiny a keeps its digits. a >= 10: the Stirling form D = sqrt(a / (2 pi)) exp(a (ln(1 + t) - t) - mu(a)),
// t = (x - a) / a, mu the Stirling correction of ln Gamma (8 terms), ln(1 + t) - t from a series in
// t / (2 + t) for |t| < 1/2: no digits lost to the cancellation of a ln x against x and ln Gamma(a).
// x < a + 1: P by the series D / a sum_n x^n / ((a+1) ... (a+n)) (positive terms), Q = 1 - P (Q >= 0.08 here
// when a >= 1/2). x >= a + 1: Q by the continued fraction
// Gamma(a, x) = x^a e^-x / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) (modified
// Lentz, stop when the step is within 2^-52 of 1), P = 1 - Q. a < 1/2, x < 1.5 (Q small, P near 1): Q = u + v
// with u = 1 - x^a / Gamma(1 + a) = -expm1(a ln x - ln Gamma(1 + a)) and
// v = -x^a / Gamma(1 + a) a sum_{n >= 1} (-x)^n / (n! (a + n)) (Gautschi's split), P by the series.
// a >= 100 and |x / a - 1| <= 0.3, where the series and the fraction would take O(sqrt(a)) steps (8.8 sqrt(a)
// near x = a): Temme's uniform expansion (DLMF 8.12), with lambda = x / a and
// eta = sign(lambda - 1) sqrt(2 (lambda - 1 - ln lambda)) (from ln(1 + t) - t above),
//   Q = erfc(eta sqrt(a / 2)) / 2 + R,  P = erfc(-eta sqrt(a / 2)) / 2 - R,
//   R = e^(-a eta^2 / 2) / sqrt(2 pi a) sum_{k=0..7} c_k(eta) a^-k,
// Q directly for eta >= 0, P for eta < 0. c_0 = 1 / (lambda - 1) - 1 / eta and c_k = c_(k-1)'(eta) / eta +
// (-1)^k gamma_k / (lambda - 1) (gamma_k: Stirling's coefficients of Gamma*, 1, 1/12, 1/288, -139/51840, ...)
// cancel at eta = 0, so they are evaluated by Taylor series in eta (17 down to 2 terms for |eta| <= 0.34),
// derived for this file in exact rational arithmetic (c_0(0) = -1/3, c_1(0) = -1/540, c_2(0) = 25/6048); the
// first omitted term is below 1e-19 relative. Elsewhere the series takes at most about 110 steps and the
// fraction 76 (small a near x = 1.5); both loops are capped at 300 steps, and skipped where the prefactor
// underflows to 0. Cost: 100 to 300 ns on the host whatever a and x.
// Measured (against __float128): relative error within 7e-15 where the condition number (the relative change
// of the value for a relative change of 2^-53 in a or x, divided by 2^-53) is below 10, and within
// 15 x 2^-53 x (1 + condition number) everywhere (deep tails: the relative error there is the inherent one
// of the last bit of a and x, e.g. 1e-13 for Q ~ 1e-150 at a = 3e4).
// Conventions (torch's igamma / igammac): a < 0, x < 0 or a NaN -> NaN; a == 0 == x -> NaN;
// a == 0 < x -> P = 1, Q = 0; x == 0 < a -> P = 0, Q = 1; x == +inf (a finite) -> P = 1, Q = 0;
// a == +inf (x finite) -> P = 0, Q = 1; both infinite -> NaN.

/// ln Gamma(1 + a) for 0 <= a < 1/2, to a few ulps (Note [incomplete gamma]): -ln(1 + a) + (1 - gamma) a +
/// sum_{k >= 2} (-1)^k (zeta(k) - 1) / k a^k.
PHASOR_HOST_DEVICE inline double lgamma1p_small(double a) {
  const double tail = horner(-a, 0.3224670334241132, 0.067352301053198102, 0.020580808427784546,
                             0.0073855510286739857, 0.0028905103307415234, 0.001192753911703261,
                             0.00050966952474304245, 0.00022315475845357939, 9.9457512781808531e-05,
                             4.4926236738133142e-05, 2.0507212775670691e-05, 9.4394882752683967e-06,
                             4.3748667899074882e-06, 2.0392157538013662e-06, 9.5514121304074194e-07,
                             4.4924691987645662e-07, 2.1207184805554665e-07, 1.0043224823968099e-07,
                             4.7698101693639804e-08, 2.2711094608943164e-08, 1.0838659214896955e-08,
                             5.1834750419700466e-09, 2.4836745438024785e-09, 1.1921401405860912e-09,
                             5.7313672416788623e-10, 2.7595228851242334e-10, 1.3304764374244489e-10,
                             6.4229645638380996e-11);
  return ((1 - kEulerGamma) * a - ::log1p(a)) + a * a * tail;
}

/// ln(1 + t) - t for t > -1, without the cancellation of the two for small t (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double log1pmx(double t) {
  if (::fabs(t) >= 0.5) return ::log1p(t) - t;
  // ln(1 + t) = 2 atanh(u), u = t / (2 + t); t = 2u / (1 - u):
  // ln(1 + t) - t = -2u^2 / (1 - u) + 2u^3 (1/3 + u^2/5 + u^4/7 + ...)
  const double u = t / (2 + t), u2 = u * u;
  double term = u2, sum = 1.0 / 3;
  for (int k = 5; k < 80; k += 2) {
    const double c = term / k;
    sum += c;
    if (c < 1e-17 * sum) break;
    term *= u2;
  }
  return -2 * u2 / (1 - u) + 2 * u * u2 * sum;
}

/// x^a e^-x / Gamma(a + 1) for a, x > 0 finite (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double gamma_prefactor_over_a(double a, double x) {
  if (a < 10) {
    const double lg = a < 0.5 ? lgamma1p_small(a) : log_gamma(a + 1);
    const double e1 = a * ::log(x) - lg;
    const double s = e1 - x;  // two-sum: s + err = e1 - x exactly
    const double bb = s - e1;
    const double err = (e1 - (s - bb)) + (-x - bb);
    const double e = ::exp(s);
    return ::fma(e, err, e);
  }
  const double t = (x - a) / a;
  const double l = t < -0.5 ? (::log(x) - ::log(a)) - t : log1pmx(t);
  const double ia = 1 / a;
  const double mu = ia * horner(ia * ia, 1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188,
                                -691.0 / 360360, 1.0 / 156, -3617.0 / 122400);
  return ::exp(a * l - mu) * kInvSqrtTwoPi / ::sqrt(a);
}

/// P(a, x) by its series, for x < a + 1 or small a (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double gammainc_series(double a, double x) {
  const double d = gamma_prefactor_over_a(a, x);
  if (d == 0) return 0;
  double term = 1, sum = 1;
  for (int n = 1; n < 300; ++n) {
    term *= x / (a + n);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return d * sum;
}

/// Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1 (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double gammaincc_fraction(double a, double x) {
  const double pre = gamma_prefactor_over_a(a, x);
  if (pre == 0) return 0;
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (double i = 1; i < 300; i += 1) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (::fabs(step - 1) <= 0x1p-52) break;  // within an ulp of 1 (1 - 2^-53 can repeat forever)
  }
  return a * pre * h;
}

/// Q(a, x) for a < 1/2, x < 1.5 by Gautschi's split u + v (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double gammaincc_small_a(double a, double x) {
  const double u = -::expm1(a * ::log(x) - lgamma1p_small(a));
  double term = 1, sum = 0;  // sum_{n >= 1} (-x)^n / (n! (a + n))
  for (int n = 1; n < 60; ++n) {
    term *= -x / n;
    const double t = term / (a + n);
    sum += t;
    if (::fabs(t) < 1e-17 * ::fabs(sum)) break;
  }
  return u - (1 - u) * a * sum;
}

/// P(a, x) or, when `upper`, Q(a, x) by Temme's uniform expansion, for a >= 100 and |x / a - 1| <= 0.3
/// (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double incomplete_gamma_temme(double a, double x, bool upper) {
  const double t = (x - a) / a;  // lambda - 1, x - a exact
  const double l = log1pmx(t);   // -eta^2 / 2
  const double eta = ::copysign(::sqrt(-2 * l), t);
  const double c0 = horner(eta, -0.33333333333333331, 0.083333333333333329, -0.014814814814814815,
                                0.0011574074074074073, 0.00035273368606701942, -0.0001787551440329218,
                                3.9192631785224377e-05, -2.185448510679992e-06, -1.85406221071516e-06,
                                8.2967113409530865e-07, -1.7665952736826078e-07, 6.7078535434014984e-09,
                                1.0261809784240309e-08, -4.3820360184533529e-09, 9.1476995822367902e-10,
                                -2.5514193994946248e-11, -5.8307721325504256e-11);
  const double c1 = horner(eta, -0.0018518518518518519, -0.003472222222222222, 0.0026455026455026454,
                                -0.00099022633744855963, 0.00020576131687242798, -4.018775720164609e-07,
                                -1.8098550334489977e-05, 7.6491609160811098e-06, -1.6120900894563446e-06,
                                4.647127802807434e-09, 1.3786334469157209e-07, -5.7525456035177047e-08,
                                1.1951628599778148e-08, -1.7543241719747647e-11);
  const double c2 = horner(eta, 0.0041335978835978834, -0.0026813271604938273, 0.0007716049382716049,
                                2.0093878600823047e-06, -0.0001073665322636516, 5.2923448829120125e-05,
                                -1.2760635188618728e-05, 3.4235787340961378e-08, 1.3721957309062934e-06,
                                -6.2989921383800548e-07, 1.4280614206064242e-07, -2.0477098421990866e-10);
  const double c3 = horner(eta, 0.00064943415637860077, 0.00022947209362139917, -0.0004691894943952557,
                                0.00026772063206283885, -7.5618016718839766e-05, -2.3965051138672968e-07,
                                1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06,
                                -2.7861080291528143e-11);
  const double c4 = horner(eta, -0.00086188829091671173, 0.00078403922172006662, -0.00029907248030319018,
                                -1.4638452578843418e-06, 6.6414982154651219e-05, -3.9683650471794347e-05,
                                1.1375726970678419e-05, 2.5074972262375329e-10);
  const double c5 = horner(eta, -0.00033679855336635813, -6.9728137583658571e-05, 0.00027727532449593918,
                                -0.00019932570516188847, 6.797780477937208e-05, 1.4190629206439671e-07);
  const double c6 = horner(eta, 0.00053130793646399225, -0.00059216643735369393, 0.0002708782096718045,
                                7.9023532326603281e-07);
  const double c7 = horner(eta, 0.00034436760689237765, 5.1717909082605919e-05);
  const double ia = 1 / a;
  const double sum = horner(ia, c0, c1, c2, c3, c4, c5, c6, c7);
  const double r = ::exp(a * l) * kInvSqrtTwoPi / ::sqrt(a) * sum;  // R_a(eta)
  const double u = eta * ::sqrt(0.5 * a);
  if (eta >= 0) {  // Q is the smaller one
    const double q = 0.5 * ::erfc(u) + r;
    return upper ? q : 1 - q;
  }
  const double p = 0.5 * ::erfc(-u) - r;
  return upper ? 1 - p : p;
}

/// P(a, x) or, when `upper`, Q(a, x) (Note [incomplete gamma]).
PHASOR_HOST_DEVICE inline double incomplete_gamma(double a, double x, bool upper) {
  if (::isnan(a) || ::isnan(x) || a < 0 || x < 0) return nan_value();
  if (a == 0) {
    if (x == 0) return nan_value();
    return upper ? 0.0 : 1.0;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (a == kInf) {
    if (x == kInf) return nan_value();
    return upper ? 1.0 : 0.0;
  }
  if (x == kInf) return upper ? 0.0 : 1.0;
  double v;
  if (a < 0.5 && x < 1.5) {
    v = upper ? gammaincc_small_a(a, x) : gammainc_series(a, x);
  } else if (a >= 100 && ::fabs(x - a) <= 0.3 * a) {
    v = incomplete_gamma_temme(a, x, upper);
  } else if (x < a + 1) {
    const double p = gammainc_series(a, x);
    v = upper ? 1 - p : p;
  } else {
    const double q = gammaincc_fraction(a, x);
    v = upper ? q : 1 - q;
  }
  return v < 0 ? 0.0 : (v > 1 ? 1.0 : v);  // rounding can pass 1 by an ulp (P for tiny a)
}

// Note [Bessel functions]
// J0, J1, Y0, Y1 are the C library's j0, j1, y0, y1 (glibc's on the host, the CUDA math API's on the device,
// each within a few ulps away from the zeros of the function), with torch's conventions made explicit: NaN stays
// NaN, J(+-inf) = Y(+inf) = 0, Y(0) = -inf, Y(x < 0) = NaN.
// K0 and K1 (and e^x K, the scaled forms) are this file's, for x > 0 (K(0) = +inf, e^x K(0) = +inf, K(x < 0) = NaN,
// K(+inf) = e^x K(+inf) = 0):
//  - x < 1: the power series (DLMF 10.31.1) with y = x^2 / 4 and H_k = 1 + 1/2 + ... + 1/k,
//      K0(x) = -(ln(x/2) + gamma) I0(x) + sum_k y^k / (k!)^2 H_k,
//      K1(x) = 1/x + ln(x/2) I1(x) - x/4 sum_k (psi(k+1) + psi(k+2)) y^k / (k! (k+1)!),
//    psi(k+1) = H_k - gamma, the I sums (positive terms) in the same loop; at most 13 terms; e^x K = e^x times K.
//  - x >= 1: the integral K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt with u = sqrt(2x) sinh(t/2)
//    (so x cosh t = x + u^2 and cosh t = 1 + u^2 / x):
//      e^x K0(x) = 2 int_0^inf e^(-u^2) / sqrt(2x + u^2) du,  e^x K1(x) = 2 int_0^inf e^(-u^2) (1 + u^2 / x) / sqrt(2x + u^2) du,
//    an even integrand, analytic in the strip |Im u| < sqrt(2x), so the trapezoidal rule with step h = 1/5 is
//    spectrally accurate (error about exp(-2 pi sqrt(2x) / h + 2x) < 1e-20 for x >= 1, and exp(-pi^2 / h^2) for
//    large x); the sum stops where e^(-u^2) < 1e-18 (u > 6.44, 33 terms). The scaled forms come out directly (no
//    underflow for large x), K = e^-x times them. Measured against mpmath: within 1e-15 relative (a few ulps).

/// J0 (nu = 0) or J1 (nu = 1) from the C library (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double bessel_j(double x, int nu) {
  if (::isnan(x)) return x;
  if (::isinf(x)) return 0;
  return nu == 0 ? ::j0(x) : ::j1(x);
}

/// Y0 (nu = 0) or Y1 (nu = 1) from the C library: NaN for x < 0, -inf at 0 (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double bessel_y(double x, int nu) {
  if (::isnan(x) || x < 0) return nan_value();
  if (x == 0) return -kInf;
  if (x == kInf) return 0;
  return nu == 0 ? ::y0(x) : ::y1(x);
}

/// K0 (nu = 0) or K1 (nu = 1) by the power series, for 0 < x < 1 (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double bessel_k_series(double x, int nu) {
  const double y = 0.25 * x * x, log_half = ::log(0.5 * x);
  double term = 1, bessel = 1, harmonic = 0;  // term = y^k / (k! (k + nu)!), harmonic = H_k
  double sum = nu == 0 ? 0.0 : 1 - 2 * kEulerGamma;  // the k = 0 term of the H (psi) sum
  for (int k = 1; k < 40; ++k) {
    term *= y / (static_cast<double>(k) * (k + nu));
    harmonic += 1.0 / k;
    bessel += term;
    sum += term * (nu == 0 ? harmonic : 2 * (harmonic - kEulerGamma) + 1.0 / (k + 1));
    if (term < 1e-17 * bessel) break;
  }
  if (nu == 0) return sum - (log_half + kEulerGamma) * bessel;
  return 1 / x + log_half * (0.5 * x) * bessel - 0.25 * x * sum;
}

/// e^x K_nu(x) by the trapezoidal rule, for x >= 1 and 0 <= nu <= 1 (Note [Bessel functions]; cosh(nu t) is
/// 1 + u^2 / x for nu = 1, cosh(2 nu asinh(u / sqrt(2x))) for the Airy function's nu = 1/3, 2/3).
PHASOR_HOST_DEVICE inline double bessel_k_scaled_integral(double x, double nu) {
  const double h = 0.2, two_x = 2 * x, r = 1 / ::sqrt(two_x);
  double sum = 0.5 * r;  // u = 0, half weight
  for (int k = 1; k < 40; ++k) {
    const double u = k * h, u2 = u * u, e = ::exp(-u2);
    double f = e / ::sqrt(two_x + u2);
    if (nu == 1) f *= 1 + u2 / x;
    else if (nu != 0) f *= ::cosh(2 * nu * ::asinh(u * r));
    sum += f;
    if (e < 1e-18) break;
  }
  return 2 * h * sum;
}

/// K_nu(x) for nu = 0, 1, scaled by e^x when `scaled` (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double bessel_k(double x, int nu, bool scaled) {
  if (::isnan(x) || x < 0) return nan_value();
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  if (x < 1) {
    const double k = bessel_k_series(x, nu);
    return scaled ? ::exp(x) * k : k;
  }
  const double s = bessel_k_scaled_integral(x, nu);
  return scaled ? s : ::exp(-x) * s;
}

// Note [Airy function]
// Ai(x) and Ai'(x) (the gradient of airy_ai, whose own derivative is x Ai(x)), for three ranges of x:
//  - -9 < x < 1.5: the Maclaurin series (DLMF 9.4.1) Ai = c1 f - c2 g, Ai' = c1 f' - c2 g', c1 = Ai(0),
//    c2 = -Ai'(0), f = sum_k 3^k (1/3)_k x^(3k) / (3k)!, g = sum_k 3^k (2/3)_k x^(3k+1) / (3k+1)!, term ratios
//    x^3 / ((3k-1) 3k) and x^3 / (3k (3k+1)) (f' and g' alike), in double-double arithmetic (hi + lo, two_sum and
//    fma products): for negative x the sums grow like e^(2/3 |x|^(3/2)) (1e8 at x = -9) while Ai stays O(1), so
//    double sums would lose 8 digits; double-double keeps 32. At most 40 terms.
//  - x >= 1.5: Ai(x) = sqrt(x / 3) / pi K_{1/3}(z), Ai'(x) = -x / (sqrt(3) pi) K_{2/3}(z), z = 2/3 x^(3/2)
//    (DLMF 9.6.1), e^z K_nu(z) by the trapezoidal sum of Note [Bessel functions] (z >= 1.22), times e^-z.
//  - x <= -9: the asymptotic expansions (DLMF 9.7.9-10) with z = 2/3 |x|^(3/2) >= 18, u_k = u_(k-1) (6k-5)(6k-3)
//    (6k-1) / ((2k-1) 216 k), v_k = -(6k+1) / (6k-1) u_k, summed while the terms fall (the smallest below 2e-17),
//    cos(z - pi/4) = (cos z + sin z) / sqrt 2 and sin(z - pi/4) = (sin z - cos z) / sqrt 2.
// Measured against mpmath on [-30, 10] and beyond: within 2 ulps times max(1, z) of the larger of |Ai| (|Ai'|) and
// its envelope |x|^-1/4 / sqrt(pi) (|x|^1/4 / sqrt(pi)) on the negative axis; the factor z is the inherent error
// of z's rounding (the phase on the negative axis, e^-z on the positive one). Ai(+inf) = 0, Ai(-inf)
// = 0, Ai'(+-inf) = 0 (the limits of Ai' at -inf do not exist: 0, as torch's airy_ai at -inf), NaN stays NaN.

/// A double-double number hi + lo, |lo| <= ulp(hi) / 2 (Note [Airy function]).
struct DoubleDouble {
  double hi = 0, lo = 0;
};

/// a + b in double-double.
PHASOR_HOST_DEVICE inline DoubleDouble dd_add(DoubleDouble a, DoubleDouble b) {
  double e;
  const double s = two_sum(a.hi, b.hi, e);
  e += a.lo + b.lo;
  const double hi = s + e;
  return {hi, e - (hi - s)};
}

/// a b in double-double (the fma gives the product's rounding error).
PHASOR_HOST_DEVICE inline DoubleDouble dd_mul(DoubleDouble a, DoubleDouble b) {
  const double p = a.hi * b.hi;
  const double e = ::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi);
  const double hi = p + e;
  return {hi, e - (hi - p)};
}

/// a / d in double-double for a double d.
PHASOR_HOST_DEVICE inline DoubleDouble dd_div(DoubleDouble a, double d) {
  const double q = a.hi / d;
  const double r = (::fma(-q, d, a.hi) + a.lo) / d;  // the remainder a - q d, exact but for a.lo's part
  const double hi = q + r;
  return {hi, r - (hi - q)};
}

/// Ai(x) or, when `deriv`, Ai'(x) by the Maclaurin series in double-double, for -9 < x < 1.5 (Note [Airy function]).
PHASOR_HOST_DEVICE inline double airy_series(double x, bool deriv) {
  const DoubleDouble c1{0.3550280538878172, 2.05233632436212e-17}, c2{0.2588194037928068, -2.522243111610832e-17};
  double lo;
  const double x2 = square_exact(x, lo);
  const DoubleDouble x3 = dd_mul({x2, lo}, {x, 0});
  // f and g, or f' and g': first terms 1 and x, or x^2 / 2 and 1; the ratios of term k to term k - 1
  DoubleDouble tf = deriv ? dd_mul({x2, lo}, {0.5, 0}) : DoubleDouble{1, 0}, tg = deriv ? DoubleDouble{1, 0} : DoubleDouble{x, 0};
  DoubleDouble f = tf, g = tg;
  for (int k = deriv ? 2 : 1, kg = 1; k < 42; ++k, ++kg) {
    // f: x^3 / ((3k-1) 3k) (f': x^3 / ((3k-1) 3(k-1))); g: x^3 / (3k (3k+1)) (g': x^3 / (3k (3k-2)))
    tf = dd_div(dd_mul(tf, x3), (3.0 * k - 1) * (deriv ? 3.0 * (k - 1) : 3.0 * k));
    tg = dd_div(dd_mul(tg, x3), 3.0 * kg * (deriv ? 3.0 * kg - 2 : 3.0 * kg + 1));
    f = dd_add(f, tf);
    g = dd_add(g, tg);
    if (::fabs(tf.hi) <= 1e-33 * ::fabs(f.hi) && ::fabs(tg.hi) <= 1e-33 * (::fabs(g.hi) + 1e-300)) break;
  }
  const DoubleDouble v = dd_add(dd_mul(c1, f), dd_mul({-c2.hi, -c2.lo}, g));
  return v.hi + v.lo;
}

/// Ai(x) or Ai'(x) by the asymptotic expansions, for x <= -9 (Note [Airy function]).
PHASOR_HOST_DEVICE inline double airy_negative(double x, bool deriv) {
  const double a = -x, z = 2.0 / 3 * a * ::sqrt(a);
  double p = 1, q = 0, u = 1, last = 1, power = 1;  // u_k (or v_k) / z^k
  for (int k = 1; k < 60; ++k) {
    const double uk = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
    power /= z;
    const double t = (deriv ? -(6.0 * k + 1) / (6.0 * k - 1) * uk : uk) * power;
    u = uk;
    if (::fabs(t) > last) break;
    last = ::fabs(t);
    const double sign = (k / 2) % 2 ? -1.0 : 1.0;
    if (k % 2) q += sign * t;
    else p += sign * t;
  }
  const double c = ::cos(z), s = ::sin(z), cm = (c + s) * kInvSqrt2, sm = (s - c) * kInvSqrt2;  // cos, sin(z - pi/4)
  const double root = ::sqrt(::sqrt(a));  // a^(1/4)
  if (!deriv) return (cm * p + sm * q) * kInvSqrtPi / root;
  return (sm * p - cm * q) * kInvSqrtPi * root;
}

/// Ai(x) or, when `deriv`, Ai'(x) (Note [Airy function]).
PHASOR_HOST_DEVICE inline double airy(double x, bool deriv) {
  if (::isnan(x)) return x;
  if (::isinf(x)) return 0;
  if (x <= -9) return airy_negative(x, deriv);
  if (x < 1.5) return airy_series(x, deriv);
  const double z = 2.0 / 3 * x * ::sqrt(x);
  if (z > 800) return 0;  // e^-z underflows
  const double e = ::exp(-z) / kPi;
  if (!deriv) return ::sqrt(x / 3) * e * bessel_k_scaled_integral(z, 1.0 / 3);
  return -x / 1.7320508075688772935 * e * bessel_k_scaled_integral(z, 2.0 / 3);
}

/// j0(x) = sin x / x, the spherical Bessel function of order 0: 1 at 0, 0 at +-inf (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double spherical_bessel_j0(double x) {
  if (::isnan(x)) return x;
  if (::isinf(x)) return 0;
  if (x == 0) return 1;
  return ::sin(x) / x;
}

/// j1(x) = sin x / x^2 - cos x / x = -j0'(x), the spherical Bessel function of order 1: for |x| < 1 its series
/// sum_{k >= 1} (-1)^(k+1) 2k x^(2k-1) / (2k+1)! (no cancellation near 0), 0 at +-inf (Note [Bessel functions]).
PHASOR_HOST_DEVICE inline double spherical_bessel_j1(double x) {
  if (::isnan(x)) return x;
  if (::isinf(x)) return 0;
  if (::fabs(x) >= 1) return (::sin(x) / x - ::cos(x)) / x;
  const double x2 = x * x;
  double term = x / 3, sum = term;  // term_k = (-1)^(k+1) 2k x^(2k-1) / (2k+1)!
  for (int k = 2; k < 20; ++k) {
    term *= -x2 * k / ((k - 1.0) * (2 * k) * (2 * k + 1));
    sum += term;
    if (::fabs(term) < 1e-18 * ::fabs(sum)) break;
  }
  return sum;
}

}  // namespace special_rules

/// ln|Gamma(x)| (the C library's lgamma_r on the host, lgamma on the device; float in double): +inf at
/// 0, the negative integers and +-inf.
template <class T>
PHASOR_HOST_DEVICE inline T lgamma_of(T x) {
  return static_cast<T>(special_rules::log_gamma(static_cast<double>(x)));
}

/// psi(x), the digamma function (Note [digamma]).
template <class T>
PHASOR_HOST_DEVICE inline T digamma_of(T x) {
  return static_cast<T>(special_rules::digamma(static_cast<double>(x)));
}

/// psi^(n)(x), the polygamma function for n >= 0 (Note [polygamma]).
template <class T>
PHASOR_HOST_DEVICE inline T polygamma_of(int n, T x) {
  return static_cast<T>(special_rules::polygamma(n, static_cast<double>(x)));
}

/// zeta(s, q), the Hurwitz zeta function sum_{k >= 0} (q + k)^-s (Note [Hurwitz zeta]).
template <class T>
PHASOR_HOST_DEVICE inline T zeta_of(T s, T q) {
  return static_cast<T>(special_rules::zeta(static_cast<double>(s), static_cast<double>(q)));
}

/// erfinv(x), the inverse error function on [-1, 1] (Note [erfinv]).
template <class T>
PHASOR_HOST_DEVICE inline T erfinv_of(T x) {
  return static_cast<T>(special_rules::erfinv(static_cast<double>(x)));
}

/// I0(x), the modified Bessel function of the first kind of order 0 (Note [modified Bessel]).
template <class T>
PHASOR_HOST_DEVICE inline T i0_of(T x) {
  if (::isnan(x)) return x;
  return static_cast<T>(special_rules::bessel_i(static_cast<double>(x), 0, false));
}

/// e^-|x| I0(x) (Note [modified Bessel]).
template <class T>
PHASOR_HOST_DEVICE inline T i0e_of(T x) {
  if (::isnan(x)) return x;
  return static_cast<T>(special_rules::bessel_i(static_cast<double>(x), 0, true));
}

/// I1(x), the modified Bessel function of the first kind of order 1, odd (Note [modified Bessel]).
template <class T>
PHASOR_HOST_DEVICE inline T i1_of(T x) {
  if (::isnan(x)) return x;
  return static_cast<T>(::copysign(special_rules::bessel_i(static_cast<double>(x), 1, false), static_cast<double>(x)));
}

/// e^-|x| I1(x), odd (Note [modified Bessel]).
template <class T>
PHASOR_HOST_DEVICE inline T i1e_of(T x) {
  if (::isnan(x)) return x;
  return static_cast<T>(::copysign(special_rules::bessel_i(static_cast<double>(x), 1, true), static_cast<double>(x)));
}

/// ndtr(x), the standard normal CDF (Note [ndtr]).
template <class T>
PHASOR_HOST_DEVICE inline T ndtr_of(T x) {
  return static_cast<T>(special_rules::ndtr(static_cast<double>(x)));
}

/// ndtri(p), the inverse of ndtr on [0, 1] (Note [erfinv]).
template <class T>
PHASOR_HOST_DEVICE inline T ndtri_of(T p) {
  return static_cast<T>(special_rules::ndtri(static_cast<double>(p)));
}

/// ln ndtr(x), accurate in both tails (Note [ndtr]).
template <class T>
PHASOR_HOST_DEVICE inline T log_ndtr_of(T x) {
  return static_cast<T>(special_rules::log_ndtr(static_cast<double>(x)));
}

/// erfcx(x) = e^(x^2) erfc(x) (Note [erfcx]).
template <class T>
PHASOR_HOST_DEVICE inline T erfcx_of(T x) {
  return static_cast<T>(special_rules::erfcx(static_cast<double>(x)));
}

/// -x ln x for x > 0, 0 at 0 (+0 at x = 1 too), -inf for x < 0; computed in double.
template <class T>
PHASOR_HOST_DEVICE inline T entr_of(T x) {
  if (::isnan(x)) return x;
  if (x < 0) return static_cast<T>(-special_rules::kInf);
  if (x == 0) return T(0);
  const double d = static_cast<double>(x), v = d * ::log(d);
  return static_cast<T>(v == 0 ? 0.0 : -v);
}

/// x log1p(y), 0 where x == 0 unless y is NaN (torch.special.xlog1py, as xlogy_of); computed in double.
template <class T>
PHASOR_HOST_DEVICE inline T xlog1py_of(T x, T y) {
  if (::isnan(y)) return y;
  if (x == 0) return T(0);
  return static_cast<T>(static_cast<double>(x) * ::log1p(static_cast<double>(y)));
}

/// P(a, x), the regularized lower incomplete gamma function (torch.igamma; Note [incomplete gamma]).
template <class T>
PHASOR_HOST_DEVICE inline T gammainc_of(T a, T x) {
  return static_cast<T>(special_rules::incomplete_gamma(static_cast<double>(a), static_cast<double>(x), false));
}

/// Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function (torch.igammac; Note [incomplete
/// gamma]).
template <class T>
PHASOR_HOST_DEVICE inline T gammaincc_of(T a, T x) {
  return static_cast<T>(special_rules::incomplete_gamma(static_cast<double>(a), static_cast<double>(x), true));
}

/// J0(x) (nu = 0) or J1(x) (nu = 1), the Bessel functions of the first kind (Note [Bessel functions]).
template <class T>
PHASOR_HOST_DEVICE inline T bessel_j_of(T x, int nu) {
  return static_cast<T>(special_rules::bessel_j(static_cast<double>(x), nu));
}

/// Y0(x) (nu = 0) or Y1(x) (nu = 1), the Bessel functions of the second kind (Note [Bessel functions]).
template <class T>
PHASOR_HOST_DEVICE inline T bessel_y_of(T x, int nu) {
  return static_cast<T>(special_rules::bessel_y(static_cast<double>(x), nu));
}

/// K0(x) or K1(x), the modified Bessel functions of the second kind, times e^x when `scaled` (Note [Bessel
/// functions]).
template <class T>
PHASOR_HOST_DEVICE inline T bessel_k_of(T x, int nu, bool scaled) {
  return static_cast<T>(special_rules::bessel_k(static_cast<double>(x), nu, scaled));
}

/// sin x / x, the spherical Bessel function j0 (Note [Bessel functions]).
template <class T>
PHASOR_HOST_DEVICE inline T spherical_bessel_j0_of(T x) {
  return static_cast<T>(special_rules::spherical_bessel_j0(static_cast<double>(x)));
}

/// sin x / x^2 - cos x / x, the spherical Bessel function j1 = -j0' (Note [Bessel functions]).
template <class T>
PHASOR_HOST_DEVICE inline T spherical_bessel_j1_of(T x) {
  return static_cast<T>(special_rules::spherical_bessel_j1(static_cast<double>(x)));
}

/// Ai(x), the Airy function, or Ai'(x) when `deriv` (Note [Airy function]).
template <class T>
PHASOR_HOST_DEVICE inline T airy_of(T x, bool deriv) {
  return static_cast<T>(special_rules::airy(static_cast<double>(x), deriv));
}

}  // namespace phasor::detail
