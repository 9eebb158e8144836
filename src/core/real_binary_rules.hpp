// src/core/real_binary_rules.hpp - the real binary functions phasor defines itself (fmod, remainder,
// floor_divide, trunc_divide, logaddexp, logaddexp2, xlogy), one definition for the CPU engine (core/binary_math.cpp)
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
#include <cstring>
#include <type_traits>

#include "core/element_traits.hpp"

namespace phasor::detail {

// Note [fast fmod]
// glibc 2.36's fmod subtracts the divisor bit by bit, one step per bit of the exponents' difference: 19 ns an
// element on normal floats, 20x PyTorch. On the host phasor divides instead: q = trunc(a / b) (floor for
// remainder and floor_divide) and r = a - q b, in double, with one fma for double operands (float ones
// give an exact q b in double below 2^29). The division may round a quotient just below an integer up to it
// (never past an integer the other way: an integer quotient is exact), so q is the true one or one beyond
// it. For trunc r is exact either way (a multiple of the smaller quantum of a and b, below |b| in magnitude);
// an overshoot shows as r of the wrong sign, mended by stepping q back and adding b to r, exactly. For floor
// only q is used (floor_divide), which the sign of r decides alike; remainder is fmod plus b, one rounding.
// The rare mend is the only branch on the values, so the loop runs without mispredictions (a sign test on
// random signs had cost remainder 14 ns an element). Infinite and NaN operands, a zero divisor and quotients
// past 2^52 (2^29) take the generic forms below, from the C library's fmod. The GPU runs the same code, so
// both devices give the same values, bit for bit (float floor_divide past 2^22, where the generic form's
// float quotient can miss the floor by one, included).

/// (q, r) with q = trunc(a / b), or floor(a / b) when `floor_mode`, exactly and r = a - q b (Note [fast
/// fmod]; float or double a and b); false where the fast path does not apply.
template <class T>
PHASOR_HOST_DEVICE inline bool exact_quotient(T a, T b, bool floor_mode, double& q, double& r) {
  const double x = a, y = b, t = x / y;
  q = floor_mode ? ::floor(t) : ::trunc(t);
  if (!(::fabs(q) < (std::is_same_v<T, float> ? 0x1p29 : 0x1p52)) || ::isinf(y)) return false;
  r = std::is_same_v<T, float> ? x - q * y : ::fma(-q, y, x);
  if (r != 0 && ((r < 0) != ((floor_mode ? y : x) < 0))) {  // the division rounded up to an integer
    const double step = floor_mode ? 1.0 : (q > 0 ? 1.0 : -1.0);
    q -= step;
    r += step * y;
  }
  return true;
}

/// c ? x : y by masking the bits: GCC compiles the conditional expression to a branch, which mispredicts on
/// random data (host code).
template <class T>
inline T select_bits(bool c, T x, T y) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static_assert(sizeof(T) == sizeof(U), "select_bits: 4- or 8-byte types");
  U ux, uy;
  std::memcpy(&ux, &x, sizeof x);
  std::memcpy(&uy, &y, sizeof y);
  const U m = U(0) - static_cast<U>(c);
  const U out = (ux & m) | (uy & ~m);
  T r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}

/// a - trunc(a / b) * b: C's fmod (the sign of a) for floating types, % for int64 (0 for b = 0 or -1).
template <class T>
PHASOR_HOST_DEVICE inline T fmod_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return b == 0 || b == -1 ? T(0) : T(a % b);
  } else {
    double q, r;
    if (exact_quotient(a, b, false, q, r)) return r == 0 ? ::copysign(T(0), a) : static_cast<T>(r);
    return ::fmod(a, b);
  }
}

/// a - floor(a / b) * b: the sign of b (Python's %, torch.remainder): fmod, plus b where its sign differs
/// (one rounding; a zero keeps a's sign). The choice is a select, not a branch: random signs mispredict.
template <class T>
PHASOR_HOST_DEVICE inline T remainder_of(T a, T b) {
  const T r = fmod_of(a, b);
  const bool shift = (r != 0) & ((r < 0) != (b < 0));
  const T moved = wrap_add(r, b);  // |r| < |b| and opposite signs where it is used: no int overflow
#if defined(__CUDA_ARCH__)
  return shift ? moved : r;
#else
  return select_bits(shift, moved, r);
#endif
}

/// floor(a / b) (Python's //, torch.floor_divide). Floating: the floor of the exact quotient, so a quotient
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
    double q, r;
    if (exact_quotient(a, b, true, q, r)) return static_cast<T>(q);  // floor keeps the quotient's zero sign
    if (b == 0) return a / b;
    const T m = fmod_of(a, b);
    T d = (a - m) / b;  // an integer up to the rounding of this division
    if (m != 0 && ((b < 0) != (m < 0))) d -= T(1);
    if (d == 0) return ::copysign(T(0), a / b);
    T f = ::floor(d);
    if (d - f > T(0.5)) f += T(1);  // d rounded just below an integer
    return f;
  }
}

/// trunc(a / b) (torch.div's "trunc" mode): the rounded quotient truncated for floating types; int64 divides
/// toward zero, wrapping for INT64_MIN / -1, 0 for b = 0 (Note [integer division]).
template <class T>
PHASOR_HOST_DEVICE inline T trunc_divide_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) return b == -1 ? wrap_neg(a) : b == 0 ? T(0) : T(a / b);
  else return ::trunc(a / b);
}

/// log(1 + u) (base 2 when `base2`) for u = e^-d or 2^-d in (0, 1]. float: log(1 + u) in double, where
/// 1 + u keeps u's digits down to u = 2^-25, below which u itself (or u / ln 2) is within float's rounding:
/// glibc 2.36's log1pf took 12 ns an element, its double log 4 (Note [logaddexp]).
template <class T>
PHASOR_HOST_DEVICE inline T log1p_small(T u, bool base2) {
  if constexpr (std::is_same_v<T, float>) {
    if (u < 0x1p-25f) return base2 ? u * 1.44269504088896340736f : u;
    const double w = 1.0 + static_cast<double>(u);
    return static_cast<T>(base2 ? ::log2(w) : ::log(w));
  } else {
    return base2 ? ::log1p(u) * 1.4426950408889634073599246810018921 : ::log1p(u);
  }
}

/// sqrt(a^2 + b^2) without overflow or underflow, +inf when either is infinite (NaN or not). float: the
/// squares and their sum in double (exact squares, one rounding of the sum, as glibc's hypotf), a loop that
/// vectorizes where glibc's calls do not (4.4x on the host), and the same value on both devices; double:
/// libm's (CUDA's) hypot.
template <class T>
PHASOR_HOST_DEVICE inline T hypot_of(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    const double x = a, y = b;
    const float h = static_cast<float>(::sqrt(x * x + y * y));
    const float inf = ::isinf(a) ? ::fabsf(a) : ::fabsf(b);  // +inf where either is infinite
    return ::isinf(a) || ::isinf(b) ? inf : h;
  } else {
    return ::hypot(a, b);
  }
}

// Note [logaddexp]
// log(e^a + e^b) = max + log1p(e^-|a - b|): no overflow, and the log1p term lies in (0, ln 2]. Equal
// infinities give themselves (a - b would be NaN). Both devices run this code (float's log1p term in double,
// see log1p_small), so they agree to the last bit up to their exp and log.

/// log(e^a + e^b) without overflow (Note [logaddexp]).
template <class T>
PHASOR_HOST_DEVICE inline T logaddexp_of(T a, T b) {
  if (a == b && ::isinf(a)) return a;
  const T m = a > b ? a : b;  // a NaN makes the log1p term NaN
  return m + log1p_small(::exp(-::fabs(a - b)), false);
}

/// log2(2^a + 2^b) without overflow (Note [logaddexp]).
template <class T>
PHASOR_HOST_DEVICE inline T logaddexp2_of(T a, T b) {
  if (a == b && ::isinf(a)) return a;
  const T m = a > b ? a : b;
  return m + log1p_small(::exp2(-::fabs(a - b)), true);
}

/// x log y, 0 where x = 0 (even for y = 0 or inf) unless y is NaN (torch.xlogy).
template <class T>
PHASOR_HOST_DEVICE inline T xlogy_of(T x, T y) {
  if (::isnan(y)) return y;
  return x == 0 ? T(0) : T(x * ::log(y));
}

}  // namespace phasor::detail
