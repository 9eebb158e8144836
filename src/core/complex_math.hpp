// src/core/complex_math.hpp - complex elementary functions that phasor writes itself, where the complex
// library's formula loses accuracy, for the CPU engine (core/unary.cpp, std::complex) and the CUDA kernels
// (cuda/elementwise_ops.cuh, cuda::std::complex) alike.
//
// Note [complex elementary functions]
// The CPU takes exp, log, sqrt, sin, tan, tanh, asin, ... of complex numbers from the C library (glibc, within a
// few ulps). The GPU's complex library (libcu++) computes some of them by textbook formulas that cancel: tanh(x +
// iy) as (sinh 2x + i sin 2y) / (cosh 2x + cos 2y) loses all digits where the denominator nearly vanishes
// (measured: 2.8e-3 relative error in complex64, 2.9e-12 in complex128; tan likewise, through tanh); log loses
// digits near z = 1 (1.8e-13 in complex128); asin, acos and atan near +-1 and +-i (up to 1.2e-5 in complex64,
// 1.2e-13 in complex128); sqrt misses the axes' exact values (a real part of -4e-8 for sqrt(-1 - 0i) in complex64,
// where acos(2 + 0i) then comes out -5e-8 - 1.317i, not 0 - 1.317i). libcu++'s exp, sinh and cosh (and so sin and
// cos) multiply e^x by cos y and sin y after e^x has overflowed, which turns sinh(95 + 0i) in complex64 into inf +
// NaN i and exp(95 + 1e-30i) into inf + inf i where glibc gives inf + 0i and inf + 1.8e11i. So the kernels use the
// functions below instead: clog (log1p of an exact |z|^2 - 1 near |z| = 1), csqrt, ctanh / ctan, casin / cacos
// (Kahan's formulas), catanh / catan (casinh / cacosh from casin / cacos), and cexp, csinh / csin, ccosh / ccos
// (exact on the axes, scaled past exp's range). Over 2.2 * 10^5 points (six scales, and near Re z = +-1, Im z =
// +-1 and |z| = 1) each part of each result stays within 3.7e-7 (complex64) and 6.6e-16 (complex128) of a long
// double reference, as glibc's do (measured with the host's libm, tests/cuda_emu). Infinite and NaN arguments
// follow C99's special values, as glibc's do: most go to the library's own function, ctanh handles its own. expm1
// and log1p of complex numbers have no C library function at all: both engines use cexpm1 / clog1p. cexpm1's real
// part, e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2), cancels near the curve e^x cos y = 1: its error is about an
// ulp of the larger term, 2^-53 of it in double. So complex64 computes it in double, which keeps float's digits
// unless the result is below 2^-29 of that term (measured: 0.78 half-ulps at 10^-7 of x from the curve, where
// float arithmetic lost every digit). complex128 still loses digits there (2e-9 relative error at 10^-7): it would
// need expm1, cos and sin to more than double's precision.
//
// Note [complex division]
// The CPU's std::complex division calls libgcc's __divdc3 / __divsc3 (Smith's algorithm) and libcu++'s
// scales the denominator by logb: the two differed in signed zeros and at the extremes (1 / (1e-310 + 0i) was
// inf + NaN i on the CPU, inf + 0i on the GPU; (1e308 + 1e308i) / (2 + 2i) was inf on both). Both engines
// now divide with cdiv, in double for complex64 too.
// complex64 (float_div): float's products are exact in double and no float squared leaves double's range
// (2^-298 to 2^256), so the textbook ((ac + bd) + i(bc - ad)) / (c^2 + d^2) needs no scaling and loses no
// digits where a part cancels: each sum is rounded once, then 1 / (c^2 + d^2) and the product, so each part
// is within 4 * 2^-53 of itself before it is rounded to float: within 0.5 ulp of itself and 2^-27 ulp more
// (tests/test_binary.cpp: 0.499997 over 44,000 points, 4,000 of them cancelling in the real part, where
// Smith's in double was off by up to 30 ulps). One double division an element where Smith's takes three.
// Fused multiply-adds (the GPU's contraction) change nothing: they add an exact product. Zero numerators and
// denominators and infinite or NaN parts take the complex128 path below (div_parts), so signed zeros and
// C99's infinities are as there.
// complex128: where the larger part of each operand lies in [2^-510, 2^510], or the
// numerator is 0, Smith's algorithm needs no scaling: no intermediate overflows, one that underflows
// (r = d / c for a tiny d) costs far less than an ulp of |n / w|, and the quotient is within 1.6 ulps of
// |n / w| (each part too, unless that part cancels in a + b r or b - a r). There it is libgcc's __divdc3 result
// bit for bit (2 * 10^6 random points); the swap that makes |c| >= |d| is a select and the rare
// cases are out of line, so the CPU's contiguous rows vectorize (Note [vector complex division], about
// 4.5x libgcc's speed) and GPU threads do not diverge. Other finite operands are scaled by powers of two
// (exact) into that range first, so (1e308 + 1e308i) / (2 + 2i) is 5e307. Zero, infinite and NaN operands
// follow C99 Annex G, as libgcc's: nonzero / 0 = inf (1 / (0 + 0i) = inf + NaN i, as 1 * inf and
// 0 * inf), inf / finite = inf, finite / inf = 0, else NaN.
#pragma once
#include <math.h>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// e^z - 1 without cancellation for small |z|: Re = expm1(x) cos y - 2 sin^2(y/2), in double for complex64
/// too (Note [complex elementary functions]: where e^x cos y is near 1 the real part keeps float's digits).
template <class C>
PHASOR_HOST_DEVICE C cexpm1(const C& z) {
  using R = real_t<C>;
  const double x = z.real(), y = z.imag(), s = ::sin(y / 2);
  return C(R(::expm1(x) * ::cos(y) - 2 * s * s), R(::exp(x) * ::sin(y)));
}

/// x^2 + y^2 - 1 for 1/2 < |x + iy| < 2 to about an ulp of the result, also where it cancels (|z| near 1).
/// With u >= v the larger and smaller of |x|, |y| and |z| near 1, u^2 lies in [1/2, 1]: for v^2 >= 1/4 both
/// u^2 - 1/2 and v^2 - 1/2 are exact (Sterbenz), and so is their sum where it cancels; below, u^2 - 1 is.
/// fma gives the rounding errors of u^2 and v^2 exactly.
template <class R>
PHASOR_HOST_DEVICE R norm_minus_one(R x, R y) {
  R u = ::fabs(x), v = ::fabs(y);
  if (u < v) {
    const R t = u;
    u = v;
    v = t;
  }
  const R uu = u * u, vv = v * v;
  const R head = vv >= R(0.25) ? (uu - R(0.5)) + (vv - R(0.5)) : (uu - R(1)) + vv;
  return head + (::fma(u, u, -uu) + ::fma(v, v, -vv));
}

/// |1 + z|^2 - 1 = x (2 + x) + y^2 for 1/2 < |1 + z| < 2 to about an ulp of the result, also where it
/// cancels (|1 + z| near 1). For x <= -1/2, 1 + x is exact (Sterbenz) and norm_minus_one applies. Above, the
/// sum can cancel only for -1/2 < x < 0, where y^2 lies within a factor 2 of -2x: 2x + y^2 is exact, and so
/// is its sum with x^2 where those cancel; fma gives the squares' rounding errors.
template <class R>
PHASOR_HOST_DEVICE R norm1p_minus_one(R x, R y) {
  if (x <= R(-0.5)) return norm_minus_one(R(1) + x, y);
  const R xx = x * x, yy = y * y;
  return ((R(2) * x + yy) + xx) + (::fma(x, x, -xx) + ::fma(y, y, -yy));
}

/// log(1 + z). For 1/2 < |1 + z| < 2, log |1 + z| = log1p(|1 + z|^2 - 1) / 2 with norm1p_minus_one: accurate
/// for small |z| (where 1 + x would drop x's digits) and near |1 + z| = 1 (where log |1 + z| cancels).
template <class C>
PHASOR_HOST_DEVICE C clog1p(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag(), h = ::hypot(R(1) + x, y);
  const R re = h > R(0.5) && h < R(2) ? R(0.5) * ::log1p(norm1p_minus_one(x, y)) : ::log(h);
  return C(re, ::atan2(y, R(1) + x));
}

/// log z. For 1/2 < |z| < 2, where log |z| can be small, log |z| = log1p(|z|^2 - 1) / 2 with |z|^2 - 1 from
/// norm_minus_one keeps the digits that log(hypot(x, y)) loses (the real part of log(0.6 + 0.8i), 1e-17, to
/// a few ulps, as glibc's).
template <class C>
PHASOR_HOST_DEVICE C clog(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag(), a = ::hypot(x, y);
  const R re = a > R(0.5) && a < R(2) ? R(0.5) * ::log1p(norm_minus_one(x, y)) : ::log(a);
  return C(re, ::atan2(y, x));
}

namespace complex_adl {
// The complex library's own functions (std:: or cuda::std::, found by argument-dependent lookup), for
// infinite and NaN arguments, whose special values the C99 rules fix case by case.
template <class C> PHASOR_HOST_DEVICE C library_sqrt(const C& z) { return sqrt(z); }
template <class C> PHASOR_HOST_DEVICE C library_asin(const C& z) { return asin(z); }
template <class C> PHASOR_HOST_DEVICE C library_acos(const C& z) { return acos(z); }
template <class C> PHASOR_HOST_DEVICE C library_atanh(const C& z) { return atanh(z); }
template <class C> PHASOR_HOST_DEVICE C library_exp(const C& z) { return exp(z); }
template <class C> PHASOR_HOST_DEVICE C library_sinh(const C& z) { return sinh(z); }
template <class C> PHASOR_HOST_DEVICE C library_cosh(const C& z) { return cosh(z); }
}  // namespace complex_adl

/// True when both parts of z are finite.
template <class C>
PHASOR_HOST_DEVICE bool cfinite(const C& z) { return ::isfinite(z.real()) && ::isfinite(z.imag()); }

/// Where e^x (and sinh x, cosh x) is still finite in R, rounded down: 88 in float, 709 in double.
template <class R>
PHASOR_HOST_DEVICE constexpr R exp_range() { return sizeof(R) == 4 ? R(88) : R(709); }

/// Multiplies p and q by e^a without overflowing early: past exp_range
/// e^a = e^(a/2) e^(a/2), applied one factor at a time, so a product that fits (e^95 times 1e-30) stays
/// finite. Only a result beyond the range is infinite.
template <class R>
PHASOR_HOST_DEVICE void scale_by_exp(R a, R& p, R& q) {
  if (a < exp_range<R>()) {
    const R e = ::exp(a);
    p *= e;
    q *= e;
  } else {
    const R e = ::exp(R(0.5) * a);
    p = p * e * e;
    q = q * e * e;
  }
}

/// e^z = e^x (cos y + i sin y), with no spurious overflow (scale_by_exp) and the real axis exact
/// (e^x + i y). Infinite and NaN arguments: the library's C99 special values.
template <class C>
PHASOR_HOST_DEVICE C cexp(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  if (!cfinite(z)) return complex_adl::library_exp(z);
  if (y == R(0)) return C(::exp(x), y);
  R c = ::cos(y), s = ::sin(y);
  scale_by_exp(x, c, s);
  return C(c, s);
}

/// sinh z = sinh x cos y + i cosh x sin y (odd) or cosh z = cosh x cos y + i sinh x sin y for finite z off
/// the real axis. Past exp_range sinh x = sign(x) e^|x| / 2 and cosh x = e^|x| / 2 to rounding, applied by
/// scale_by_exp.
template <class C>
PHASOR_HOST_DEVICE C sinh_or_cosh(const C& z, bool odd) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  if (::fabs(x) < exp_range<R>()) {
    const R sh = ::sinh(x), ch = ::cosh(x);
    return odd ? C(sh * ::cos(y), ch * ::sin(y)) : C(ch * ::cos(y), sh * ::sin(y));
  }
  const R half = R(0.5), signed_half = ::copysign(R(0.5), x);
  R c = (odd ? signed_half : half) * ::cos(y), s = (odd ? half : signed_half) * ::sin(y);
  scale_by_exp(::fabs(x), c, s);
  return C(c, s);
}

/// sinh z; on the real axis sinh x + i y exactly: the textbook formula gives cosh x * 0 = NaN there once
/// cosh x overflows (sinh of 95 + 0i in complex64).
template <class C>
PHASOR_HOST_DEVICE C csinh(const C& z) {
  if (!cfinite(z)) return complex_adl::library_sinh(z);
  if (z.imag() == 0) return C(::sinh(z.real()), z.imag());
  return sinh_or_cosh(z, true);
}

/// cosh z; on the real axis cosh x + i (sign(x) 0) y exactly.
template <class C>
PHASOR_HOST_DEVICE C ccosh(const C& z) {
  if (!cfinite(z)) return complex_adl::library_cosh(z);
  if (z.imag() == 0) return C(::cosh(z.real()), ::copysign(real_t<C>(0), z.real()) * z.imag());
  return sinh_or_cosh(z, false);
}

/// sin z = -i sinh(iz).
template <class C>
PHASOR_HOST_DEVICE C csin(const C& z) {
  const C w = csinh(C(-z.imag(), z.real()));
  return C(w.imag(), -w.real());
}

/// cos z = cosh(iz).
template <class C>
PHASOR_HOST_DEVICE C ccos(const C& z) { return ccosh(C(-z.imag(), z.real())); }

/// sqrt z, the principal root: with t = sqrt((|x| + |z|) / 2), (t, y / 2t) for x >= 0 and
/// (|y| / 2t, copysign(t, y)) for x < 0. No cancellation, exact on the axes, signed zeros kept; z near
/// underflow or overflow is scaled by an even power of two first.
template <class C>
PHASOR_HOST_DEVICE C csqrt(const C& z) {
  using R = real_t<C>;
  R x = z.real(), y = z.imag();
  if (!cfinite(z)) return complex_adl::library_sqrt(z);
  if (x == R(0) && y == R(0)) return C(R(0), y);
  // sqrt(4^k z) = 2^k sqrt(z): where both parts are subnormal or nearly so (half of them would drop
  // digits) or |z| could overflow, an exact power-of-two scaling brings z into range first
  const R m = ::fabs(x) > ::fabs(y) ? ::fabs(x) : ::fabs(y);
  const bool f = sizeof(R) == 4;
  const int k = m < (f ? R(0x1p-124) : R(0x1p-1020)) ? (f ? 24 : 53) : m > (f ? R(0x1p125) : R(0x1p1021)) ? -2 : 0;
  if (k != 0) {
    x = ::scalbn(x, 2 * k);
    y = ::scalbn(y, 2 * k);
  }
  const R t = ::sqrt(R(0.5) * ::fabs(x) + R(0.5) * ::hypot(x, y));
  const C w = x >= R(0) ? C(t, y / (R(2) * t)) : C(::fabs(y) / (R(2) * t), ::copysign(t, y));
  return k == 0 ? w : C(::scalbn(w.real(), -k), ::scalbn(w.imag(), -k));
}

/// asin z by Kahan's formula: with s = sqrt(1 - z) and t = sqrt(1 + z),
/// asin z = atan2(x, Re(s t)) + i asinh(Im(conj(s) t)).
template <class C>
PHASOR_HOST_DEVICE C casin(const C& z) {
  using R = real_t<C>;
  if (!cfinite(z)) return complex_adl::library_asin(z);
  const C s = csqrt(C(R(1) - z.real(), -z.imag())), t = csqrt(C(R(1) + z.real(), z.imag()));
  return C(::atan2(z.real(), s.real() * t.real() - s.imag() * t.imag()),
           ::asinh(s.real() * t.imag() - s.imag() * t.real()));
}

/// acos z by Kahan's formula: with s, t as for casin, acos z = 2 atan2(Re s, Re t) + i asinh(Im(conj(t) s)).
template <class C>
PHASOR_HOST_DEVICE C cacos(const C& z) {
  using R = real_t<C>;
  if (!cfinite(z)) return complex_adl::library_acos(z);
  const C s = csqrt(C(R(1) - z.real(), -z.imag())), t = csqrt(C(R(1) + z.real(), z.imag()));
  return C(R(2) * ::atan2(s.real(), t.real()), ::asinh(t.real() * s.imag() - t.imag() * s.real()));
}

/// atanh(x + iy) = log(|1 + z|^2 / |1 - z|^2) / 4 + i atan2(2y, (1 - x)(1 + x) - y^2) / 2. atanh is odd, so
/// the real part is sign(x) log1p(4a / d) / 4 with a = |x| and d = (1 - a)^2 + y^2: no cancellation anywhere
/// (the ratio of the squares, 1 + 4a / d, loses the digits of a small real part where |y| is large: 3e-5
/// relative in complex64 for atan(100 - i)). Near z = +-1, where d < 1e-8 could have underflowed in y^2,
/// (log |1 + a + iy| - log |1 - a + iy|) / 2 instead: two positive terms. Past |z| = 1e4 (float) or 1e8
/// (double), where the squares could overflow: x / |z|^2 + i (copysign(pi/2, y) - y / |z|^2), exact to
/// rounding there.
template <class C>
PHASOR_HOST_DEVICE C catanh(const C& z) {
  using R = real_t<C>;
  if (!cfinite(z)) return complex_adl::library_atanh(z);
  const R x = z.real(), y = z.imag(), h = ::hypot(x, y);
  if (h > (sizeof(R) == 4 ? R(1e4) : R(1e8)))
    return C(x / h / h, ::copysign(R(1.5707963267948966), y) - y / h / h);
  const R a = ::fabs(x), u = R(1) - x, v = R(1) + x, d = (R(1) - a) * (R(1) - a) + y * y;
  const R re = d < R(1e-8) ? R(0.5) * (::log(::hypot(R(1) + a, y)) - ::log(::hypot(R(1) - a, y)))
                        : R(0.25) * ::log1p(R(4) * a / d);
  return C(::copysign(re, x), R(0.5) * ::atan2(R(2) * y, u * v - y * y));
}

/// atan z = -i atanh(iz).
template <class C>
PHASOR_HOST_DEVICE C catan(const C& z) {
  const C w = catanh(C(-z.imag(), z.real()));
  return C(w.imag(), -w.real());
}

/// asinh z = -i asin(iz) (C99 defines casin by casinh the same way, special values included).
template <class C>
PHASOR_HOST_DEVICE C casinh(const C& z) {
  const C w = casin(C(-z.imag(), z.real()));
  return C(w.imag(), -w.real());
}

/// acosh z = +-i acos z, the sign that makes the real part nonnegative (C99's cacosh): i acos z where acos z's
/// imaginary part has its sign bit set (acosh(2 + 0i) = 1.317 + 0i), -i acos z otherwise (acosh(2 - 0i) =
/// 1.317 - 0i).
template <class C>
PHASOR_HOST_DEVICE C cacosh(const C& z) {
  const C w = cacos(z);
  return ::signbit(w.imag()) ? C(-w.imag(), w.real()) : C(w.imag(), -w.real());
}

/// tanh(x + iy) by Kahan's formula: with t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2) (= cosh x),
/// tanh z = (b r s + i t) / (1 + b s^2). For |x| past the point where tanh x rounds to +-1 (9 in float,
/// 22 in double): +-1 + i 4 sin y cos y e^(-2|x|). No cancellation anywhere. Infinite or NaN y: C99's
/// special values (the far formula would give +-1 for finite x).
template <class C>
PHASOR_HOST_DEVICE C ctanh(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  if (y == R(0)) return C(::tanh(x), y);  // the real axis, keeping y's sign (and NaN + 0i)
  if (!::isfinite(y)) {  // C99's values: +-1 +- 0i for infinite x, x + i NaN for x = 0, else NaN + i NaN
    if (::isinf(x)) return C(::copysign(R(1), x), ::copysign(R(0), y));
    const R nan = y - y;
    return C(x == R(0) ? x : nan, nan);
  }
  const R far = sizeof(R) == 4 ? R(9) : R(22);
  if (::fabs(x) > far) {  // x = +-inf included
    return C(::copysign(R(1), x), R(4) * ::sin(y) * ::cos(y) * ::exp(R(-2) * ::fabs(x)));
  }
  const R t = ::tan(y), b = R(1) + t * t, s = ::sinh(x), r = ::sqrt(R(1) + s * s), d = R(1) + b * s * s;
  return C(b * r * s / d, t / d);
}

/// tan z = -i tanh(iz).
template <class C>
PHASOR_HOST_DEVICE C ctan(const C& z) {
  const C w = ctanh(C(-z.imag(), z.real()));
  return C(w.imag(), -w.real());
}

/// Smith's quotient x + iy = (a + ib) / (c + id): one ratio of the denominator's parts, at most 1 in size,
/// so no square is formed (div_in_safe_range says where it needs no scaling). Branch-free: loops of it
/// vectorize, and GPU threads do not diverge.
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline void smith_div(double a, double b, double c, double d,
                                                                        double& x, double& y) {
  const bool swap = ::fabs(c) < ::fabs(d);  // (a + ib) / (c + id) = (b - ia) / (d - ic), exactly
  const double a1 = swap ? b : a, b1 = swap ? -a : b, c1 = swap ? d : c, d1 = swap ? -c : d;
  const double r = d1 / c1, den = c1 + d1 * r;
  x = (a1 + b1 * r) / den;
  y = (b1 - a1 * r) / den;
}

/// Whether smith_div needs no scaling: the larger part of each operand in [2^-510, 2^510] (or n = 0).
/// Branch-free (& and |), so loops of it vectorize. A NaN part may drop out of the maxima: it still
/// reaches both parts of Smith's result.
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline bool div_in_safe_range(double a, double b, double c,
                                                                                double d) {
  const double fa = ::fabs(a), fb = ::fabs(b), fc = ::fabs(c), fd = ::fabs(d);
  const double mn = fa > fb ? fa : fb, md = fc > fd ? fc : fd, hi = 0x1p510, lo = 0x1p-510;
  return (md >= lo) & (md <= hi) & (mn <= hi) & ((mn >= lo) | (mn == 0));
}

/// div_parts for operands outside div_in_safe_range: scaled by powers of two if finite and w != 0, else
/// C99 Annex G's infinities and zeros. Out of line: it is rarely taken, and keeps the division loops short.
__attribute__((noinline)) PHASOR_HOST_DEVICE inline void div_parts_rare(double a, double b, double c, double d,
                                                                        double& x, double& y) {
  if (::isfinite(a) && ::isfinite(b) && ::isfinite(c) && ::isfinite(d) && (c != 0 || d != 0)) {
    const double fa = ::fabs(a), fb = ::fabs(b), fc = ::fabs(c), fd = ::fabs(d);
    const int en = a == 0 && b == 0 ? 0 : ::ilogb(fa > fb ? fa : fb), ed = ::ilogb(fc > fd ? fc : fd);
    smith_div(::scalbn(a, -en), ::scalbn(b, -en), ::scalbn(c, -ed), ::scalbn(d, -ed), x, y);
    x = ::scalbn(x, en - ed);
    y = ::scalbn(y, en - ed);
    return;
  }
  smith_div(a, b, c, d, x, y);
  if (::isnan(x) && ::isnan(y)) {  // C99 Annex G's recovery of the infinities and zeros
    const double inf = INFINITY;
    if (c == 0 && d == 0 && (!::isnan(a) || !::isnan(b))) {
      x = ::copysign(inf, c) * a;
      y = ::copysign(inf, c) * b;
    } else if ((::isinf(a) || ::isinf(b)) && ::isfinite(c) && ::isfinite(d)) {
      const double a1 = ::copysign(::isinf(a) ? 1.0 : 0.0, a), b1 = ::copysign(::isinf(b) ? 1.0 : 0.0, b);
      x = inf * (a1 * c + b1 * d);
      y = inf * (b1 * c - a1 * d);
    } else if ((::isinf(c) || ::isinf(d)) && ::isfinite(a) && ::isfinite(b)) {
      const double c1 = ::copysign(::isinf(c) ? 1.0 : 0.0, c), d1 = ::copysign(::isinf(d) ? 1.0 : 0.0, d);
      x = 0.0 * (a * c1 + b * d1);
      y = 0.0 * (b * c1 - a * d1);
    }
  }
}

/// x + iy = (a + ib) / (c + id) in double, within 1.6 ulps of its modulus (Note [complex division]).
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline void div_parts(double a, double b, double c, double d,
                                                                         double& x, double& y) {
  if (div_in_safe_range(a, b, c, d)) smith_div(a, b, c, d, x, y);
  else div_parts_rare(a, b, c, d, x, y);
}

/// Whether float_div applies to float parts held in double: all four finite, numerator and denominator
/// nonzero (Note [complex division]). For float parts a^2 + b^2 is finite exactly when a and b are, and
/// nonzero exactly when one is (no float squared leaves double's range); NaN fails both comparisons.
/// Branch-free, so loops of it vectorize (and share c^2 + d^2 with float_div).
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline bool float_div_applies(double a, double b, double c,
                                                                                double d) {
  const double n2 = a * a + b * b, d2 = c * c + d * d, m = 1.7976931348623157e308;
  return (n2 > 0) & (n2 <= m) & (d2 > 0) & (d2 <= m);
}

/// x + iy = (a + ib) / (c + id) for float parts held in double (where float_div_applies): the textbook
/// ((ac + bd) + i(bc - ad)) / (c^2 + d^2) with exact products, each part within 2^-50 of itself
/// (Note [complex division]). Branch-free.
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline void float_div(double a, double b, double c, double d,
                                                                        double& x, double& y) {
  const double t = 1.0 / (c * c + d * d);
  x = (a * c + b * d) * t;
  y = (b * c - a * d) * t;
}

/// n / w for complex numbers, one definition for both engines (Note [complex division]). Always inlined:
/// a call returns a complex<float> through memory, which costs more than the division (measured).
template <class C>
__attribute__((always_inline)) PHASOR_HOST_DEVICE inline C cdiv(const C& n, const C& w) {
  using R = real_t<C>;
  const double a = n.real(), b = n.imag(), c = w.real(), d = w.imag();
  double x, y;
  if constexpr (sizeof(R) == sizeof(float)) {
    if (float_div_applies(a, b, c, d)) float_div(a, b, c, d, x, y);
    else div_parts(a, b, c, d, x, y);
  } else {
    div_parts(a, b, c, d, x, y);
  }
  return C(R(x), R(y));
}

}  // namespace phasor::detail
