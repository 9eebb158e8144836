// src/core/pow_rules.hpp - integer and complex powers as phasor defines them, one definition for the CPU
// engine (core/binary.cpp, std::complex) and the CUDA kernels (cuda/elementwise_ops.cuh, cuda::std::complex).
#pragma once
#include <math.h>

#include <cstdint>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// Integer power as in PyTorch: a negative exponent gives 1, +-1 or 0 (no division); wraps on overflow.
PHASOR_HOST_DEVICE inline std::int64_t ipow(std::int64_t a, std::int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
  std::uint64_t r = 1, b = static_cast<std::uint64_t>(a), n = static_cast<std::uint64_t>(e);
  for (; n; n >>= 1, b *= b)
    if (n & 1) r *= b;
  return static_cast<std::int64_t>(r);
}

/// z^n for an integer n by repeated squaring (exact 0^0 = 1; more accurate than exp(n log z)).
template <class C>
PHASOR_HOST_DEVICE C cipow(C z, std::int64_t n) {
  std::uint64_t m = n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  C r(1);
  for (; m; m >>= 1, z *= z)
    if (m & 1) r *= z;
  return n < 0 ? C(1) / r : r;
}

namespace pow_adl {
/// The complex library's own z^w (std::pow or cuda::std::pow, found by argument-dependent lookup).
template <class C>
PHASOR_HOST_DEVICE C library_pow(const C& z, const C& w) { return pow(z, w); }
}  // namespace pow_adl

/// Complex power: small integer real exponents by squaring; 0^w = 0 for Re w > 0 (inf for real w < 0,
/// else NaN); otherwise the complex library's exp(w log z).
template <class C>
PHASOR_HOST_DEVICE C cpow(const C& z, const C& w) {
  using R = real_t<C>;
  if (w.imag() == R(0) && ::fabs(w.real()) <= R(64) && ::nearbyint(w.real()) == w.real())
    return cipow(z, static_cast<std::int64_t>(w.real()));
  if (z == C(0)) {
    if (w.real() > R(0)) return C(0);
    if (w.real() < R(0) && w.imag() == R(0)) return C(R(INFINITY), R(0));
    return C(R(NAN), R(NAN));
  }
  return pow_adl::library_pow(z, w);
}

}  // namespace phasor::detail
