// src/core/unary.hpp - helpers shared by the unary op files: dtype rules and kernel launch.
#pragma once
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

}  // namespace phasor::detail
