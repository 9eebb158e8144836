// src/core/binary_math.cpp - real binary functions with their gradients: the division family (fmod,
// remainder, floor_divide, div with a rounding mode) and atan2, hypot, copysign, logaddexp, logaddexp2, xlogy.
// Their element functions live in core/real_binary_rules.hpp, shared with the CUDA kernels.
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/activation_kernels.hpp"
#include "core/device_check.hpp"
#include "core/division_kernels.hpp"
#include "core/elementwise.hpp"
#include "core/pointwise.hpp"
#include "core/promotion.hpp"
#include "core/real_binary.hpp"
#include "core/real_binary_rules.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;

namespace detail {
namespace {

/// Element types the division family computes in: int64 and the real floating types.
template <class T> inline constexpr bool is_divisible_v = std::is_same_v<T, std::int64_t> || is_real_float_v<T>;

/// logaddexp (ln_base 1) or logaddexp2 (ln_base ln 2) with element function f and float32 rows: d/da = base^a / (base^a + base^b)
/// = sigmoid((a - b) ln_base), d/db likewise.
template <class F>
Tensor log_add_exp(const char* op, const Tensor& a, const Tensor& b, F f, double ln_base, RowsF32 rows) {
  return real_binary(
      op, a, b, false, kSaveInputs, f,
      [ln_base](const Ctx& c, const G& g) {
        const Tensor diff = c.input(0) - c.input(1), d = ln_base == 1.0 ? diff : diff * ln_base;
        return G{c.needs_grad(0) ? g[0] * d.sigmoid() : Tensor(), c.needs_grad(1) ? g[0] * (-d).sigmoid() : Tensor()};
      },
      rows);
}

/// The gradient of a piecewise-constant op: zeros (as floor's).
G zero_grads(const Ctx& c, const G& g) {
  return G{c.needs_grad(0) ? zeros_like(g[0]) : Tensor(), c.needs_grad(1) ? zeros_like(g[0]) : Tensor()};
}

}  // namespace
}  // namespace detail

// ---- the division family ------------------------------------------------------------------------------
// a = q b + r: each gives a the gradient 1 (q is piecewise constant) and b the gradient -q.
Tensor fmod(const Tensor& a, const Tensor& b) {
  return detail::real_binary(
      "fmod", a, b, true, detail::kSaveInputs,
      []<class T>(T x, T y) requires detail::is_divisible_v<T> { return detail::fmod_of(x, y); },
      [](const detail::Ctx& c, const G& g) {
        return G{g[0], c.needs_grad(1) ? -g[0] * (c.input(0) / c.input(1)).trunc() : Tensor()};
      },
      detail::fmod_f32);
}
Tensor fmod(const Tensor& a, const Scalar& b) { return fmod(a, detail::wrap_for(a, b)); }

Tensor remainder(const Tensor& a, const Tensor& b) {
  return detail::real_binary(
      "remainder", a, b, true, detail::kSaveInputs,
      []<class T>(T x, T y) requires detail::is_divisible_v<T> { return detail::remainder_of(x, y); },
      [](const detail::Ctx& c, const G& g) {
        return G{g[0], c.needs_grad(1) ? -g[0] * floor_divide(c.input(0), c.input(1)) : Tensor()};
      },
      detail::remainder_f32);
}
Tensor remainder(const Tensor& a, const Scalar& b) { return remainder(a, detail::wrap_for(a, b)); }
Tensor remainder(const Scalar& a, const Tensor& b) { return remainder(detail::wrap_for(b, a), b); }

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return detail::real_binary(
      "floor_divide", a, b, true, detail::kSaveNone,
      []<class T>(T x, T y) requires detail::is_divisible_v<T> { return detail::floor_divide_of(x, y); },
      detail::zero_grads);
}
Tensor floor_divide(const Tensor& a, const Scalar& b) { return floor_divide(a, detail::wrap_for(a, b)); }

Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode) {
  if (rounding_mode == "floor") return floor_divide(a, b);
  if (rounding_mode == "trunc")
    return detail::real_binary(
        "trunc_divide", a, b, true, detail::kSaveNone,
        []<class T>(T x, T y) requires detail::is_divisible_v<T> { return detail::trunc_divide_of(x, y); },
        detail::zero_grads);
  if (rounding_mode.empty()) return div(a, b);
  throw Error("div", "rounding_mode must be \"floor\", \"trunc\" or empty (true division), got \"" + rounding_mode + "\"");
}
Tensor div(const Tensor& a, const Scalar& b, const std::string& rounding_mode) {
  return div(a, detail::wrap_for(a, b), rounding_mode);
}

Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }

Tensor Tensor::fmod(const Tensor& o) const { return phasor::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return phasor::fmod(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return phasor::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return phasor::remainder(*this, o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return phasor::floor_divide(*this, o); }
Tensor Tensor::floor_divide(const Scalar& o) const { return phasor::floor_divide(*this, o); }

// ---- atan2, hypot, copysign, logaddexp, logaddexp2, xlogy --------------------------------------------------
Tensor atan2(const Tensor& y, const Tensor& x) {
  return detail::real_binary(
      "atan2", y, x, false, detail::kSaveInputs,
      []<class T>(T a, T b) requires detail::is_real_float_v<T> { return std::atan2(a, b); },
      // d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
      [](const detail::Ctx& c, const G& g) {
        Tensor y = c.input(0), x = c.input(1);
        Tensor gr = g[0] / (x * x + y * y);
        return G{c.needs_grad(0) ? gr * x : Tensor(), c.needs_grad(1) ? -gr * y : Tensor()};
      });
}
Tensor Tensor::atan2(const Tensor& o) const { return phasor::atan2(*this, o); }

Tensor hypot(const Tensor& a, const Tensor& b) {
  return detail::real_binary(
      "hypot", a, b, false, detail::kSaveInputs | detail::kSaveOutputs,
      []<class T>(T x, T y) requires detail::is_real_float_v<T> { return detail::hypot_of(x, y); },
      // d/da = a / h, d/db = b / h; 0 at h = 0 (the subgradient of |.| at 0, as abs's)
      [](const detail::Ctx& c, const G& g) {
        const Tensor h = c.output(0), r = where(h == 0, detail::zero_scalar_like(g[0]), g[0] / h);
        return G{c.needs_grad(0) ? r * c.input(0) : Tensor(), c.needs_grad(1) ? r * c.input(1) : Tensor()};
      });
}

Tensor copysign(const Tensor& a, const Tensor& b) {
  return detail::real_binary(
      "copysign", a, b, false, detail::kSaveInputs | detail::kSaveOutputs,
      []<class T>(T x, T y) requires detail::is_real_float_v<T> { return std::copysign(x, y); },
      // +-1 for a (the flip, or not), 0 at a = 0; b only chooses a sign: 0
      [](const detail::Ctx& c, const G& g) {
        return G{c.needs_grad(0) ? g[0] * (c.input(0).sign() * c.output(0).sign()) : Tensor(),
                 c.needs_grad(1) ? zeros_like(g[0]) : Tensor()};
      });
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  return detail::log_add_exp(
      "logaddexp", a, b, []<class T>(T x, T y) requires detail::is_real_float_v<T> { return detail::logaddexp_of(x, y); },
      1.0, detail::logaddexp_f32);
}

Tensor logaddexp2(const Tensor& a, const Tensor& b) {
  return detail::log_add_exp(
      "logaddexp2", a, b, []<class T>(T x, T y) requires detail::is_real_float_v<T> { return detail::logaddexp2_of(x, y); },
      0.69314718055994530942, detail::logaddexp2_f32);
}

Tensor xlogy(const Tensor& x, const Tensor& y) {
  return detail::real_binary(
      "xlogy", x, y, false, detail::kSaveInputs,
      []<class T>(T u, T v) requires detail::is_real_float_v<T> { return detail::xlogy_of(u, v); },
      // d/dx = log y (0 where x = 0, as the value there), d/dy = x / y
      [](const detail::Ctx& c, const G& g) {
        const Tensor a = c.input(0), b = c.input(1);
        return G{c.needs_grad(0) ? g[0] * xlogy((a != 0).to(g[0].dtype()), b) : Tensor(),
                 c.needs_grad(1) ? g[0] * a / b : Tensor()};
      });
}
Tensor xlogy(const Scalar& x, const Tensor& y) { return xlogy(detail::wrap_for(y, x), y); }
Tensor xlogy(const Tensor& x, const Scalar& y) { return xlogy(x, detail::wrap_for(x, y)); }

Tensor Tensor::hypot(const Tensor& o) const { return phasor::hypot(*this, o); }
Tensor Tensor::copysign(const Tensor& o) const { return phasor::copysign(*this, o); }
Tensor Tensor::logaddexp(const Tensor& o) const { return phasor::logaddexp(*this, o); }
Tensor Tensor::logaddexp2(const Tensor& o) const { return phasor::logaddexp2(*this, o); }
Tensor Tensor::xlogy(const Tensor& o) const { return phasor::xlogy(*this, o); }

}  // namespace phasor
