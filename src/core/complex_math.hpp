// src/core/complex_math.hpp - complex elementary functions that phasor writes itself, where the complex
// library's formula loses accuracy, for the CPU engine (core/unary.cpp, std::complex) and the CUDA kernels
// (cuda/elementwise.cu, cuda::std::complex) alike.
//
// Note [complex elementary functions]
// The CPU takes exp, log, sin, tan, tanh, asin, ... of complex numbers from the C library (glibc, within a
// few ulps). The GPU's complex library (libcu++) computes some of them by textbook formulas that cancel:
// tanh(x + iy) as (sinh 2x + i sin 2y) / (cosh 2x + cos 2y) loses all digits where the denominator nearly
// vanishes (measured: 2.8e-3 relative error in complex64, 2.9e-12 in complex128; tan likewise, through
// tanh); log loses digits near z = 1 (1.8e-13 in complex128); asin, acos and atan of complex64 lose 4-7
// bits. So the kernels use ctanh / ctan below
// (Kahan's formula, accurate to a few ulps) and clog (log1p near z = 1), and evaluate asin, acos, atan of
// complex64 in complex128. libcu++'s complex128 asin, acos and atan stay: within 2e-13 relative error
// (measured; near z = +-1 the worst).
// expm1 and log1p of complex numbers have no C library function at all: both engines use cexpm1 / clog1p.
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
