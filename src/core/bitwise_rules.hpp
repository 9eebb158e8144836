// src/core/bitwise_rules.hpp - the element functions of the bitwise ops, shifts, gcd and lcm (Note [bitwise ops]
// in phasor/ops.hpp), one definition for the CPU engine (core/bitwise.cpp) and the CUDA kernels
// (cuda/elementwise_ops.cuh), so both devices give the same values. and, or, xor and not take bool or int64;
// the others int64 only.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// True for the element types of the bitwise ops: bool and int64.
template <class T> inline constexpr bool is_bitwise_v = std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>;

/// a & b (a && b for bool).
template <class T>
PHASOR_HOST_DEVICE inline T bitwise_and_of(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else return a & b;
}
/// a | b (a || b for bool).
template <class T>
PHASOR_HOST_DEVICE inline T bitwise_or_of(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else return a | b;
}
/// a ^ b (a != b for bool).
template <class T>
PHASOR_HOST_DEVICE inline T bitwise_xor_of(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a != b;
  else return a ^ b;
}
/// ~a (!a for bool).
template <class T>
PHASOR_HOST_DEVICE inline T bitwise_not_of(T a) {
  if constexpr (std::is_same_v<T, bool>) return !a;
  else return ~a;
}
/// a << b on the two's complement bits; 0 when b is outside [0, 63] (torch's rule).
PHASOR_HOST_DEVICE inline std::int64_t left_shift_of(std::int64_t a, std::int64_t b) {
  if (static_cast<std::uint64_t>(b) >= 64) return 0;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
}
/// a >> b, arithmetic (the sign bit fills); a >> 63 (0 or -1) when b is outside [0, 63] (torch's rule).
PHASOR_HOST_DEVICE inline std::int64_t right_shift_of(std::int64_t a, std::int64_t b) {
  return a >> (static_cast<std::uint64_t>(b) >= 64 ? 63 : b);
}
/// |a| as an unsigned 64-bit number (exact for INT64_MIN too).
PHASOR_HOST_DEVICE inline std::uint64_t magnitude_of(std::int64_t a) {
  return a < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
}
/// gcd(|a|, |b|) by Euclid's algorithm on the unsigned magnitudes; gcd(0, 0) = 0; 2^63 wraps to INT64_MIN.
PHASOR_HOST_DEVICE inline std::int64_t gcd_of(std::int64_t a, std::int64_t b) {
  std::uint64_t x = magnitude_of(a), y = magnitude_of(b);
  while (y != 0) {
    const std::uint64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<std::int64_t>(x);
}
/// |a / gcd(a, b) * b| in wrapping int64 arithmetic (torch's formula); 0 when gcd(a, b) = 0.
PHASOR_HOST_DEVICE inline std::int64_t lcm_of(std::int64_t a, std::int64_t b) {
  const std::int64_t g = gcd_of(a, b);
  if (g == 0) return 0;
  // g = INT64_MIN only for a, b in {0, INT64_MIN}: then a / g is 0 or 1; otherwise g > 0 divides a exactly
  const std::int64_t p = wrap_mul(a / g, b);
  return p < 0 ? wrap_neg(p) : p;
}

}  // namespace phasor::detail
