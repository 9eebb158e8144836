// src/core/real_binary_rules.hpp - the real binary functions phasor defines itself (fmod, remainder,
// floor_divide, logaddexp, logaddexp2, xlogy), one definition for the CPU engine (core/binary_math.cpp)
// and the CUDA kernels (cuda/elementwise_ops.cuh), so both devices give the same values.
//
// Note [integer division]
// fmod, remainder and floor_divide of int64 tensors by a zero divisor throw before any kernel runs
// (core/binary_math.cpp), on the GPU too (one host wait for an int64 divisor tensor). The kernels still
// give 0 for a zero divisor, so no device ever divides by zero; a divisor of -1 is taken apart so that
// INT64_MIN / -1 wraps (to INT64_MIN, as PyTorch) instead of trapping.
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// a - trunc(a / b) * b: C's fmod (the sign of a) for floating types, % for int64 (0 for b = 0 or -1).
template <class T>
PHASOR_HOST_DEVICE inline T fmod_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) return b == 0 || b == -1 ? T(0) : T(a % b);
  else return ::fmod(a, b);
}

/// a - floor(a / b) * b: the sign of b (Python's %, torch.remainder), from fmod without its rounding.
template <class T>
PHASOR_HOST_DEVICE inline T remainder_of(T a, T b) {
  const T r = fmod_of(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? T(r + b) : r;  // |r| < |b| and opposite signs: no int overflow
}

/// floor(a / b) (Python's //, torch.floor_divide). Floating: from the exact a - fmod(a, b), so a quotient
/// just below an integer is not rounded up to it; b = 0 gives a / b (+-inf or NaN). int64: wraps for
/// INT64_MIN // -1, 0 for b = 0 (Note [integer division]).
template <class T>
PHASOR_HOST_DEVICE inline T floor_divide_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == -1) return wrap_neg(a);
    if (b == 0) return T(0);
    const T q = a / b;
    return a % b != 0 && ((a < 0) != (b < 0)) ? T(q - 1) : q;
  } else {
    if (b == 0) return a / b;
    const T m = ::fmod(a, b);
    T d = (a - m) / b;  // an integer up to the rounding of this division
    if (m != 0 && ((b < 0) != (m < 0))) d -= T(1);
    if (d == 0) return ::copysign(T(0), a / b);
    T f = ::floor(d);
    if (d - f > T(0.5)) f += T(1);  // d rounded just below an integer
    return f;
  }
}

/// log(e^a + e^b) without overflow: max + log1p(e^-|a - b|); equal infinities give themselves.
template <class T>
PHASOR_HOST_DEVICE inline T logaddexp_of(T a, T b) {
  if (a == b && ::isinf(a)) return a;
  const T m = a > b ? a : b;  // a NaN makes the log1p term NaN
  return m + ::log1p(::exp(-::fabs(a - b)));
}

/// log2(2^a + 2^b) without overflow: max + log1p(2^-|a - b|) / ln 2; equal infinities give themselves.
template <class T>
PHASOR_HOST_DEVICE inline T logaddexp2_of(T a, T b) {
  if (a == b && ::isinf(a)) return a;
  const T m = a > b ? a : b;
  return m + ::log1p(::exp2(-::fabs(a - b))) * T(1.4426950408889634073599246810018921);
}

/// x log y, 0 where x = 0 (even for y = 0 or inf) unless y is NaN (torch.xlogy).
template <class T>
PHASOR_HOST_DEVICE inline T xlogy_of(T x, T y) {
  if (::isnan(y)) return y;
  return x == 0 ? T(0) : T(x * ::log(y));
}

}  // namespace phasor::detail
