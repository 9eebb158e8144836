// src/core/element_traits.hpp - element-type traits and the one conversion rule between element types,
// shared by the CPU engine (core/elementwise.hpp, std::complex) and the CUDA kernels
// (cuda/elementwise_ops.cuh, cuda::std::complex): each side specializes is_complex_t and real_of for its
// complex type.
#pragma once
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define PHASOR_HOST_DEVICE __host__ __device__
#else
#define PHASOR_HOST_DEVICE
#endif

namespace phasor::detail {

/// True for complex element types (specialized next to each complex type).
template <class T> struct is_complex_t : std::false_type {};
template <class T> inline constexpr bool is_complex_v = is_complex_t<T>::value;
/// The real type of a complex element type (specialized likewise); T itself otherwise.
template <class T> struct real_of { using type = T; };
/// float for complex<float>, double for complex<double>, T otherwise.
template <class T> using real_t = typename real_of<T>::type;
/// True for float and double.
template <class T> inline constexpr bool is_real_float_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// a + b, wrapping on int64 overflow (two's complement, like PyTorch) instead of undefined behaviour; the
/// plain sum for other types. The CPU's and the GPU's int64 arithmetic (add, sub, mul, neg, abs, square, sums,
/// products, matmul) use these.
template <class A>
PHASOR_HOST_DEVICE inline A wrap_add(const A& a, const A& b) {
  if constexpr (std::is_same_v<A, std::int64_t>)
    return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else return a + b;
}
/// a - b, wrapping on int64 overflow like wrap_add.
template <class A>
PHASOR_HOST_DEVICE inline A wrap_sub(const A& a, const A& b) {
  if constexpr (std::is_same_v<A, std::int64_t>)
    return static_cast<A>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
  else return a - b;
}
/// a * b, wrapping on int64 overflow like wrap_add.
template <class A>
PHASOR_HOST_DEVICE inline A wrap_mul(const A& a, const A& b) {
  if constexpr (std::is_same_v<A, std::int64_t>)
    return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else return a * b;
}
/// -a, wrapping like wrap_add: the int64 minimum is its own negation.
template <class A>
PHASOR_HOST_DEVICE inline A wrap_neg(const A& a) {
  if constexpr (std::is_same_v<A, std::int64_t>) return static_cast<A>(std::uint64_t{0} - static_cast<std::uint64_t>(a));
  else return -a;
}
/// maximum(a, b) of a real or bool element, the elementwise op's rule on both devices: a NaN wins (a's
/// first), a tie (+0 vs -0) gives a.
/// (Written as "b only where b wins or b alone is NaN": `b > a ? b : a` is one SSE maxps, 7 instructions per
/// 4 floats with the NaN tests where the nested form took 12.)
template <class A>
PHASOR_HOST_DEVICE inline A maximum_of(const A& a, const A& b) {
  if constexpr (std::is_same_v<A, bool>) return a || b;
  else {
    const A m = b > a ? b : a;             // a when either is NaN or on a tie
    return b != b && a == a ? b : m;  // b's NaN wins only over a number
  }
}
/// minimum(a, b), as maximum_of.
template <class A>
PHASOR_HOST_DEVICE inline A minimum_of(const A& a, const A& b) {
  if constexpr (std::is_same_v<A, bool>) return a && b;
  else {
    const A m = b < a ? b : a;
    return b != b && a == a ? b : m;
  }
}

/// The bits of equal floats a and b combined: ANDed (Max) or ORed: the value itself, or for a tie of +0 and
/// -0, +0 (Max) or -0. A select on these, not a test for two zeros, keeps reduce_max / reduce_min free of
/// `&&`, which kept GCC's loops over them scalar.
template <bool Max, class A>
PHASOR_HOST_DEVICE inline A tie_of(A a, A b) {
  using I = std::conditional_t<sizeof(A) == 4, std::int32_t, std::int64_t>;
  static_assert(sizeof(A) == sizeof(I), "tie_of: float or double");
  const I ia = __builtin_bit_cast(I, a), ib = __builtin_bit_cast(I, b);
  return __builtin_bit_cast(A, Max ? (ia & ib) : (ia | ib));
}
/// max of a reduction's partial results on both devices, independent of their order: a NaN wins (a's
/// first), and +0 ties with -0 at +0 (IEEE 754-2019's maximum), so amax's result does not depend on how the
/// reduction is split (SIMD lanes, threads, a GPU's tree). Selects only, so loops of it vectorize.
template <class A>
PHASOR_HOST_DEVICE inline A reduce_max(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    const A t = a == b ? tie_of<true>(a, b) : a > b ? a : b;  // b when either is NaN
    return a != a ? a : t;
  } else {
    return a > b ? a : b;
  }
}
/// min of a reduction's partial results, as reduce_max: -0 ties with +0 at -0.
template <class A>
PHASOR_HOST_DEVICE inline A reduce_min(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    const A t = a == b ? tie_of<false>(a, b) : a < b ? a : b;
    return a != a ? a : t;
  } else {
    return a < b ? a : b;
  }
}

/// A floating value as int64: truncated toward zero, saturating beyond the range, NaN -> 0 (CUDA's
/// conversion instruction and Rust's `as`). Defined for every input, and the same on the CPU and the GPU
/// (a plain cast is undefined behaviour there, and x86 and CUDA answer differently).
template <class F>
PHASOR_HOST_DEVICE inline std::int64_t saturating_int64(F v) {
  if (v != v) return 0;
  if (v >= F(9223372036854775808.0)) return static_cast<std::int64_t>(~std::uint64_t{0} >> 1);  // 2^63 - 1
  if (v < F(-9223372036854775808.0)) return static_cast<std::int64_t>(std::uint64_t{1} << 63);  // -2^63
  return static_cast<std::int64_t>(v);
}

/// Converts between any two element types (complex -> real keeps the real part; -> bool is "nonzero";
/// floating -> int64 saturates: saturating_int64).
template <class To, class From>
PHASOR_HOST_DEVICE inline To convert(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To>) {
    if constexpr (is_complex_v<From>)
      return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
    else
      return To(static_cast<typename To::value_type>(v), 0);
  } else if constexpr (is_complex_v<From>) {
    if constexpr (std::is_same_v<To, bool>) return v.real() != 0 || v.imag() != 0;
    else return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, std::int64_t> && !std::is_integral_v<From>) {
    return saturating_int64(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace phasor::detail
