// src/core/complex_math.hpp - complex elementary functions that phasor writes itself, where the complex
// library's formula loses accuracy, for the CPU engine (core/unary.cpp, std::complex) and the CUDA kernels
// (cuda/elementwise.cu, cuda::std::complex) alike.
//
// Note [complex elementary functions]
// The CPU takes exp, log, sqrt, sin, tan, tanh, asin, ... of complex numbers from the C library (glibc,
// within a few ulps). The GPU's complex library (libcu++) computes some of them by textbook formulas that
// cancel: tanh(x + iy) as (sinh 2x + i sin 2y) / (cosh 2x + cos 2y) loses all digits where the denominator
// nearly vanishes (measured: 2.8e-3 relative error in complex64, 2.9e-12 in complex128; tan likewise,
// through tanh); log loses digits near z = 1 (1.8e-13 in complex128); asin, acos and atan near +-1 and +-i
// (up to 1.2e-5 in complex64, 1.2e-13 in complex128); sqrt misses the axes' exact values (a real part of
// -4e-8 for sqrt(-1 - 0i) in complex64, where acos(2 + 0i) then comes out -5e-8 - 1.317i, not 0 - 1.317i).
// So the kernels use the functions below instead: clog (log1p near z = 1), csqrt, ctanh / ctan, casin /
// cacos (Kahan's formulas) and catanh / catan. Over 10^5 points at three scales they stay within 7e-7
// (complex64) and 1.2e-15 (complex128) of glibc. Infinite and NaN arguments go to the library's own
// function, which follows C99's special values. expm1 and log1p of complex numbers have no C library
// function at all: both engines use cexpm1 / clog1p.
#pragma once
#include <math.h>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// e^z - 1 without cancellation for small |z|: Re = expm1(x) cos y - 2 sin^2(y/2).
template <class C>
PHASOR_HOST_DEVICE C cexpm1(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag(), s = ::sin(y / R(2));
  return C(::expm1(x) * ::cos(y) - R(2) * s * s, ::exp(x) * ::sin(y));
}

/// log(1 + z). For small |z|, |1 + z|^2 = 1 + (x (2 + x) + y^2) keeps the real part accurate through
/// log1p; elsewhere (near z = -1 that sum cancels) log |1 + z| is taken directly, 1 + x being exact there.
template <class C>
PHASOR_HOST_DEVICE C clog1p(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  const R re = ::fabs(x) < R(0.5) && ::fabs(y) < R(0.5) ? R(0.5) * ::log1p(x * (R(2) + x) + y * y)
                                                        : ::log(::hypot(R(1) + x, y));
  return C(re, ::atan2(y, R(1) + x));
}

/// log z. Near z = 1, where log z is small, log |z| = 0.5 log1p((x - 1)(x + 1) + y^2) keeps the digits that
/// log(hypot(x, y)) loses (x - 1 is exact there).
template <class C>
PHASOR_HOST_DEVICE C clog(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag(), a = ::hypot(x, y);
  const R re = a > R(0.5) && a < R(2) ? R(0.5) * ::log1p((x - R(1)) * (x + R(1)) + y * y) : ::log(a);
  return C(re, ::atan2(y, x));
}

namespace complex_adl {
// The complex library's own functions (std:: or cuda::std::, found by argument-dependent lookup), for
// infinite and NaN arguments, whose special values the C99 rules fix case by case.
template <class C> PHASOR_HOST_DEVICE C library_sqrt(const C& z) { return sqrt(z); }
template <class C> PHASOR_HOST_DEVICE C library_asin(const C& z) { return asin(z); }
template <class C> PHASOR_HOST_DEVICE C library_acos(const C& z) { return acos(z); }
template <class C> PHASOR_HOST_DEVICE C library_atanh(const C& z) { return atanh(z); }
}  // namespace complex_adl

/// True when both parts of z are finite.
template <class C>
PHASOR_HOST_DEVICE bool cfinite(const C& z) { return ::isfinite(z.real()) && ::isfinite(z.imag()); }

/// sqrt z, the principal root: with t = sqrt((|x| + |z|) / 2), (t, y / 2t) for x >= 0 and
/// (|y| / 2t, copysign(t, y)) for x < 0. No cancellation, exact on the axes, signed zeros kept.
template <class C>
PHASOR_HOST_DEVICE C csqrt(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  if (!cfinite(z)) return complex_adl::library_sqrt(z);
  if (x == R(0) && y == R(0)) return C(R(0), y);
  const R t = ::sqrt(R(0.5) * ::fabs(x) + R(0.5) * ::hypot(x, y));
  return x >= R(0) ? C(t, y / (R(2) * t)) : C(::fabs(y) / (R(2) * t), ::copysign(t, y));
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

/// atanh(x + iy) = log(|1 + z|^2 / |1 - z|^2) / 4 + i atan2(2y, (1 - x)(1 + x) - y^2) / 2, the real part as
/// log1p(4x / |1 - z|^2) / 4 for small |x| (no cancellation near 0), as the log of the ratio elsewhere (no
/// cancellation near z = +-1, where log1p's argument nears -1). Past |z| = 1e4 (float) or 1e8 (double),
/// where the squares could overflow: x / |z|^2 + i (copysign(pi/2, y) - y / |z|^2), exact to rounding there.
template <class C>
PHASOR_HOST_DEVICE C catanh(const C& z) {
  using R = real_t<C>;
  if (!cfinite(z)) return complex_adl::library_atanh(z);
  const R x = z.real(), y = z.imag(), h = ::hypot(x, y);
  if (h > (sizeof(R) == 4 ? R(1e4) : R(1e8)))
    return C(x / h / h, ::copysign(R(1.5707963267948966), y) - y / h / h);
  const R u = R(1) - x, v = R(1) + x, d = u * u + y * y;
  const R re = ::fabs(x) < R(0.5) ? R(0.25) * ::log1p(R(4) * x / d) : R(0.25) * ::log((v * v + y * y) / d);
  return C(re, R(0.5) * ::atan2(R(2) * y, u * v - y * y));
}

/// atan z = -i atanh(iz).
template <class C>
PHASOR_HOST_DEVICE C catan(const C& z) {
  const C w = catanh(C(-z.imag(), z.real()));
  return C(w.imag(), -w.real());
}

/// tanh(x + iy) by Kahan's formula: with t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2) (= cosh x),
/// tanh z = (b r s + i t) / (1 + b s^2). For |x| past the point where tanh x rounds to +-1 (9 in float,
/// 22 in double): +-1 + i 4 sin y cos y e^(-2|x|). No cancellation anywhere.
template <class C>
PHASOR_HOST_DEVICE C ctanh(const C& z) {
  using R = real_t<C>;
  const R x = z.real(), y = z.imag();
  if (y == R(0)) return C(::tanh(x), y);  // the real axis, keeping y's sign (and NaN + 0i)
  const R far = sizeof(R) == 4 ? R(9) : R(22);
  if (::fabs(x) > far) {  // x = +-inf included
    const R im = ::isfinite(y) ? R(4) * ::sin(y) * ::cos(y) * ::exp(R(-2) * ::fabs(x)) : ::copysign(R(0), y);
    return C(::copysign(R(1), x), im);
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

}  // namespace phasor::detail
