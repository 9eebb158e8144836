// src/core/unary.hpp - helpers shared by the unary op files: dtype rules and kernel launch.
#pragma once
#include <string>
#include <type_traits>

#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "cuda/ops.hpp"

namespace phasor::detail {

/// map_unary for a CUDA tensor: a new tensor of f's result type for T, computed by the CUDA kernel named
/// `op` in dtype T (x, of any dtype, is converted per element; Note [cuda elementwise]).
template <class T, class F>
Tensor cuda_map_unary(const Tensor& x, const char* op, const F&, const double* params) {
  using Out = std::decay_t<decltype(std::declval<const F&>()(std::declval<T>()))>;
  Tensor out = make_tensor(x.shape(), dtype_of<Out>::value, x.device());
  phasor::cuda::detail::unary(op, out, x, dtype_of<T>::value, params);
  return out;
}

/// kernel(x_row, y_row, n) (a vector loop: activation_kernels.hpp, rounding_kernels.hpp) over every row of x,
/// a CPU tensor of element type T: a new contiguous tensor of x's shape and dtype (strided rows through
/// map_rows' buffers).
template <class T, class K>
Tensor map_rows_of(const Tensor& x, const K& kernel) {
  return map_rows<T, 1>({x}, x.shape(), dtype_of<T>::value,
                        [&kernel](const auto& a, T* o, std::int64_t n) { kernel(a[0], o, n); });
}

/// Runs a floating-point function: bool/int64 inputs promote to the default float dtype.
/// `f` is a generic functor instantiated for float, double, complex<float>, complex<double>.
template <class F>
Tensor unary_float_kernel(const Tensor& x, const char* op, F f, bool allow_complex = true) {
  if (!allow_complex && x.is_complex())
    throw Error(op, std::string("not defined for complex input (got ") + dtype_name(x.dtype()) + ")");
  const Dtype ct = category(x.dtype()) < 2 ? default_dtype() : x.dtype();
  const bool gpu = x.device().is_cuda();
  Tensor in = ct != x.dtype() && !gpu ? x.to(ct) : x;  // the GPU converts per element
  return visit_dtype(ct, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) {
      throw Error(op, "internal: integer input reached a float kernel");
    } else {
      if (gpu) return cuda_map_unary<T>(in, op, f, nullptr);
      return map_unary<T>(in, f);
    }
  });
}

/// Runs a dtype-preserving function on any dtype (f instantiated for every element type).
template <class F>
Tensor unary_same_kernel(const Tensor& x, const char* op, F f) {
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if (x.device().is_cuda()) return cuda_map_unary<T>(x, op, f, nullptr);
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
/// Float functions without a complex version (erf, the special functions): int/bool promote, complex is rejected.
inline constexpr UnaryRule kRealFloat{.promote_int = true, .allow_bool = true, .allow_complex = false};

/// Runs f over x's elements under rule R; f's return type sets the output dtype (so abs of
/// complex is real). f is instantiated only for the element types R lets through, and may be
/// a constrained generic functor: a dtype it rejects throws. `params` are the op's parameters for its
/// CUDA kernel (cuda::unary: gelu [tanh form], softplus [beta, threshold]).
template <UnaryRule R, class F>
Tensor unary_kernel(const Tensor& x, const char* op, F f, const double* params = nullptr) {
  const Dtype t = x.dtype();
  if (!R.allow_complex && phasor::is_complex(t))
    throw Error(op, std::string("not supported for complex input (got ") + dtype_name(t) + ")");
  if (!R.allow_bool && t == Dtype::Bool) throw Error(op, "not supported for bool input");
  const Dtype ct = R.promote_int && category(t) < 2 ? default_dtype() : t;
  const bool gpu = x.device().is_cuda();
  Tensor in = ct != t && !gpu ? x.to(ct) : x;  // the GPU converts per element
  return visit_dtype(ct, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    constexpr bool skip = (std::is_same_v<T, bool> && (R.promote_int || !R.allow_bool)) ||
                          (std::is_same_v<T, std::int64_t> && R.promote_int) || (is_complex_v<T> && !R.allow_complex);
    if constexpr (!skip) {
      if constexpr (std::is_invocable_v<const F&, T>) {
        if (gpu) return cuda_map_unary<T>(in, op, f, params);
        return map_unary<T>(in, f);
      }
    }
    throw Error(op, std::string("not implemented for ") + dtype_name(ct) + " input");
  });
}

}  // namespace phasor::detail
