// src/core/unary.hpp - helpers shared by the unary op files: dtype rules and kernel launch.
#pragma once
#include <string>
#include <type_traits>

#include "core/elementwise.hpp"
#include "core/promotion.hpp"

namespace phasor::detail {

/// Runs a floating-point function: bool/int64 inputs promote to the default float dtype.
/// `f` is a generic functor instantiated for float, double, complex<float>, complex<double>.
template <class F>
Tensor unary_float_kernel(const Tensor& x, const char* op, F f, bool allow_complex = true) {
  check_cpu(x, op);
  if (!allow_complex && x.is_complex())
    throw Error(op, std::string("not defined for complex input (got ") + dtype_name(x.dtype()) + ")");
  Tensor in = category(x.dtype()) < 2 ? x.to(default_dtype()) : x;
  return visit_dtype(in.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) {
      throw Error(op, "internal: integer input reached a float kernel");
    } else {
      return map_unary<T>(in, f);
    }
  });
}

/// Runs a dtype-preserving function on any dtype (f instantiated for every element type).
template <class F>
Tensor unary_same_kernel(const Tensor& x, const char* op, F f) {
  check_cpu(x, op);
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    return map_unary<T>(x, f);
  });
}

/// Which input dtypes a unary kernel accepts, and whether bool/int64 first promote to the
/// default float dtype (float functions) or run as they are (abs, relu, floor, ...).
struct UnaryRule {
  bool promote_int = true;    ///< bool/int64 -> default float dtype before the kernel
  bool allow_bool = true;     ///< bool input accepted
  bool allow_complex = true;  ///< complex input accepted
};
/// Float functions defined for complex too: bool/int64 promote to the default float dtype.
inline constexpr UnaryRule kFloat{};
/// Every dtype runs as it is (predicates, sign).
inline constexpr UnaryRule kAsIs{.promote_int = false};

/// Runs f over x's elements under rule R; f's return type sets the output dtype (so abs of
/// complex is real). f is instantiated only for the element types R lets through, and may be
/// a constrained generic functor: a dtype it rejects throws.
template <UnaryRule R, class F>
Tensor unary_kernel(const Tensor& x, const char* op, F f) {
  check_cpu(x, op);
  const Dtype t = x.dtype();
  if (!R.allow_complex && phasor::is_complex(t))
    throw Error(op, std::string("not supported for complex input (got ") + dtype_name(t) + ")");
  if (!R.allow_bool && t == Dtype::Bool) throw Error(op, "not supported for bool input");
  Tensor in = R.promote_int && category(t) < 2 ? x.to(default_dtype()) : x;
  return visit_dtype(in.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    constexpr bool skip = (std::is_same_v<T, bool> && (R.promote_int || !R.allow_bool)) ||
                          (std::is_same_v<T, std::int64_t> && R.promote_int) || (is_complex_v<T> && !R.allow_complex);
    if constexpr (!skip) {
      if constexpr (std::is_invocable_v<const F&, T>) return map_unary<T>(in, f);
    }
    throw Error(op, std::string("not implemented for ") + dtype_name(in.dtype()) + " input");
  });
}

}  // namespace phasor::detail
