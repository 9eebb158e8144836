// src/core/bitwise.cpp - torch's bitwise ops (and, or, xor, not), shifts, gcd and lcm on bool and int64 tensors,
// without gradients (Note [bitwise ops] in phasor/ops.hpp), and the operators & | ^ ~ << >> and their in-place
// forms. The element functions live in core/bitwise_rules.hpp, shared with the CUDA kernels.
#include <cstdint>

#include "autodiff/node.hpp"
#include "core/bitwise_rules.hpp"
#include "core/pointwise.hpp"
#include "core/promotion.hpp"
#include "core/unary.hpp"
#include "phasor/ops.hpp"

namespace phasor {
namespace detail {
namespace {

/// The broadcasting op `op` computing f in a and b's promoted dtype, with no gradient: f's constraint picks the
/// dtypes (bool and int64, or int64 alone), any other throws naming the op and the dtype (binary_kernel's).
template <class F>
Tensor bitwise_binary(const char* op, const Tensor& a, const Tensor& b, F f) {
  return apply_nondiff(op, {a, b}, [op, f](TensorList in) {
    return binary_kernel(in[0], in[1], result_type(in), op, f);
  });
}

/// Element functors: bool and int64 (and, or, xor), int64 alone (shifts, gcd, lcm).
constexpr auto kAnd = []<class T>(T u, T v) requires is_bitwise_v<T> { return bitwise_and_of(u, v); };
constexpr auto kOr = []<class T>(T u, T v) requires is_bitwise_v<T> { return bitwise_or_of(u, v); };
constexpr auto kXor = []<class T>(T u, T v) requires is_bitwise_v<T> { return bitwise_xor_of(u, v); };
constexpr auto kLeftShift = []<class T>(T u, T v) requires std::is_same_v<T, std::int64_t> { return left_shift_of(u, v); };
constexpr auto kRightShift = []<class T>(T u, T v) requires std::is_same_v<T, std::int64_t> { return right_shift_of(u, v); };
constexpr auto kGcd = []<class T>(T u, T v) requires std::is_same_v<T, std::int64_t> { return gcd_of(u, v); };
constexpr auto kLcm = []<class T>(T u, T v) requires std::is_same_v<T, std::int64_t> { return lcm_of(u, v); };

/// self op= b: op's values in self's dtype (the result type must not be of a higher category, b must broadcast
/// to self's shape; check_inplace_output), copied into self.
Tensor& bitwise_inplace(const char* name, Tensor& self, const Tensor& b, Tensor (*op)(const Tensor&, const Tensor&)) {
  check_inplace_output({self, b}, name);
  return inplace_from(name, self, {b}, [&](const Tensor& x) { return op(x, b); });
}

}  // namespace
}  // namespace detail

using detail::wrap_for;

Tensor bitwise_and(const Tensor& a, const Tensor& b) { return detail::bitwise_binary("bitwise_and", a, b, detail::kAnd); }
Tensor bitwise_and(const Tensor& a, const Scalar& b) { return bitwise_and(a, wrap_for(a, b)); }
Tensor bitwise_and(const Scalar& a, const Tensor& b) { return bitwise_and(wrap_for(b, a), b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return detail::bitwise_binary("bitwise_or", a, b, detail::kOr); }
Tensor bitwise_or(const Tensor& a, const Scalar& b) { return bitwise_or(a, wrap_for(a, b)); }
Tensor bitwise_or(const Scalar& a, const Tensor& b) { return bitwise_or(wrap_for(b, a), b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return detail::bitwise_binary("bitwise_xor", a, b, detail::kXor); }
Tensor bitwise_xor(const Tensor& a, const Scalar& b) { return bitwise_xor(a, wrap_for(a, b)); }
Tensor bitwise_xor(const Scalar& a, const Tensor& b) { return bitwise_xor(wrap_for(b, a), b); }

Tensor bitwise_not(const Tensor& x) {
  return detail::apply_nondiff("bitwise_not", {x}, [](detail::TensorList in) {
    return detail::unary_kernel<detail::kAsIs>(
        in[0], "bitwise_not", []<class T>(T v) requires detail::is_bitwise_v<T> { return detail::bitwise_not_of(v); });
  });
}

Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) {
  return detail::bitwise_binary("bitwise_left_shift", a, b, detail::kLeftShift);
}
Tensor bitwise_left_shift(const Tensor& a, const Scalar& b) { return bitwise_left_shift(a, wrap_for(a, b)); }
Tensor bitwise_left_shift(const Scalar& a, const Tensor& b) { return bitwise_left_shift(wrap_for(b, a), b); }
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) {
  return detail::bitwise_binary("bitwise_right_shift", a, b, detail::kRightShift);
}
Tensor bitwise_right_shift(const Tensor& a, const Scalar& b) { return bitwise_right_shift(a, wrap_for(a, b)); }
Tensor bitwise_right_shift(const Scalar& a, const Tensor& b) { return bitwise_right_shift(wrap_for(b, a), b); }

Tensor gcd(const Tensor& a, const Tensor& b) { return detail::bitwise_binary("gcd", a, b, detail::kGcd); }
Tensor gcd(const Tensor& a, const Scalar& b) { return gcd(a, wrap_for(a, b)); }
Tensor lcm(const Tensor& a, const Tensor& b) { return detail::bitwise_binary("lcm", a, b, detail::kLcm); }
Tensor lcm(const Tensor& a, const Scalar& b) { return lcm(a, wrap_for(a, b)); }

// ---- methods and operators ------------------------------------------------------------------------------
Tensor Tensor::bitwise_not() const { return phasor::bitwise_not(*this); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return phasor::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return phasor::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return phasor::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_left_shift(const Tensor& o) const { return phasor::bitwise_left_shift(*this, o); }
Tensor Tensor::bitwise_right_shift(const Tensor& o) const { return phasor::bitwise_right_shift(*this, o); }
Tensor Tensor::gcd(const Tensor& o) const { return phasor::gcd(*this, o); }
Tensor Tensor::lcm(const Tensor& o) const { return phasor::lcm(*this, o); }

Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator&(const Tensor& a, const Scalar& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Scalar& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Scalar& b) { return bitwise_xor(a, b); }
Tensor operator&(const Scalar& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Scalar& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Scalar& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator<<(const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }
Tensor operator>>(const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }
Tensor operator<<(const Tensor& a, const Scalar& b) { return bitwise_left_shift(a, b); }
Tensor operator>>(const Tensor& a, const Scalar& b) { return bitwise_right_shift(a, b); }

Tensor& operator&=(Tensor& a, const Tensor& b) { return detail::bitwise_inplace("bitwise_and_", a, b, bitwise_and); }
Tensor& operator|=(Tensor& a, const Tensor& b) { return detail::bitwise_inplace("bitwise_or_", a, b, bitwise_or); }
Tensor& operator^=(Tensor& a, const Tensor& b) { return detail::bitwise_inplace("bitwise_xor_", a, b, bitwise_xor); }
Tensor& operator<<=(Tensor& a, const Tensor& b) {
  return detail::bitwise_inplace("bitwise_left_shift_", a, b, bitwise_left_shift);
}
Tensor& operator>>=(Tensor& a, const Tensor& b) {
  return detail::bitwise_inplace("bitwise_right_shift_", a, b, bitwise_right_shift);
}
Tensor& operator&=(Tensor& a, const Scalar& b) { return a &= wrap_for(a, b); }
Tensor& operator|=(Tensor& a, const Scalar& b) { return a |= wrap_for(a, b); }
Tensor& operator^=(Tensor& a, const Scalar& b) { return a ^= wrap_for(a, b); }
Tensor& operator<<=(Tensor& a, const Scalar& b) { return a <<= wrap_for(a, b); }
Tensor& operator>>=(Tensor& a, const Scalar& b) { return a >>= wrap_for(a, b); }

}  // namespace phasor
