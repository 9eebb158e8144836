// src/core/unary.cpp - elementwise math functions (the ones defined for complex too): forward
// kernel and gradient side by side. Activations, rounding and predicates live in unary_nn.cpp.
//
// Complex convention (PyTorch's): for holomorphic f, grad_in = grad_out * conj(f'(z)). For the
// non-holomorphic ones (abs, sign, angle) the gradient of a real loss L w.r.t. z = a + ib is
// dL/da + i dL/db, i.e. grad_in = conj(g) * df/dz* + g * conj(df/dz) with g = grad_out.
#include <cmath>
#include <complex>
#include <numbers>

#include "autodiff/node.hpp"
#include "core/activation_kernels.hpp"
#include "core/complex_math.hpp"
#include "core/pointwise.hpp"
#include "core/unary.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using detail::Ctx;
using detail::kAsIs;
using detail::kFloat;
using detail::is_complex_v;
using detail::is_real_float_v;
using detail::kSaveInputs;
using detail::kSaveNone;
using detail::kSaveOutputs;
using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace {

// Integer-preserving ops (abs, square) run on int64 as they are; bool is rejected or widened. Complex
// expm1 and log1p: core/complex_math.hpp (Note [complex elementary functions]).
constexpr detail::UnaryRule kKeepInt{.promote_int = false, .allow_bool = false, .allow_complex = true};

}  // namespace

Tensor neg(const Tensor& x) {
  if (x.dtype() == Dtype::Bool) throw Error("neg", "negation of a bool tensor is not supported; use logical_not");
  return detail::apply_op(
      "neg", {x}, kSaveNone,
      [](In in) { return detail::unary_same_kernel(in[0], "neg", [](auto v) { return decltype(v)(detail::wrap_neg(v)); }); },
      [](const Ctx&, const G& g) { return G{-g[0]}; });
}

Tensor conj(const Tensor& x) {
  if (!x.is_complex()) return x;  // identity for real tensors (no copy)
  return detail::apply_op(
      "conj", {x}, kSaveNone,
      [](In in) { return detail::unary_same_kernel(in[0], "conj", [](auto v) { return std::conj(v); }); },
      [](const Ctx&, const G& g) { return G{g[0].conj()}; });
}

// ---- abs / sign / angle (non-holomorphic for complex) ----------------------------------------------
Tensor abs(const Tensor& x) {
  return detail::apply_op(
      "abs", {x}, kSaveInputs,
      [](In in) {
        return detail::unary_kernel<kKeepInt>(in[0], "abs", [](auto v) {
          if constexpr (std::is_same_v<decltype(v), std::int64_t>) return v < 0 ? detail::wrap_neg(v) : v;  // wraps
          else return std::abs(v);
        });
      },
      // d|x|/dx = sign(x); for complex z the gradient is g * z/|z| (0 at z = 0)
      [](const Ctx& c, const G& g) { return G{g[0] * c.input(0).sign()}; });
}

Tensor sign(const Tensor& x) {
  return detail::apply_op(
      "sign", {x}, kSaveInputs | kSaveOutputs,
      [](In in) {
        // real: -1, 0, +1 (NaN stays NaN); bool: identity; complex: z/|z| with 0 at 0 (torch.sgn)
        return detail::unary_kernel<kAsIs>(in[0], "sign", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) {
            const auto r = std::abs(v);
            return r == 0 ? T(0) : v / r;
          } else if constexpr (std::is_same_v<T, bool>) {
            return v;
          } else if constexpr (is_real_float_v<T>) {
            return std::isnan(v) ? v : T((T(0) < v) - (v < T(0)));
          } else {
            return T((T(0) < v) - (v < T(0)));
          }
        });
      },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        if (!x.is_complex()) return G{zeros_like(g[0])};
        // s = z/|z|: ds/dz = 1/(2r), ds/dz* = -s^2/(2r)  =>  grad = (g - conj(g) s^2) / (2r), 0 at z = 0
        Tensor s = c.output(0), r = x.abs();
        return G{where(r == 0, detail::zero_scalar_like(g[0]), (g[0] - g[0].conj() * s * s) / (r * 2))};
      });
}

Tensor angle(const Tensor& x) {
  return detail::apply_op(
      "angle", {x}, kSaveInputs,
      [](In in) {
        // real: pi for x < 0, 0 otherwise (NaN stays NaN); complex: arg(z)
        return detail::unary_kernel<kFloat>(in[0], "angle", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) {
            return std::arg(v);
          } else {
            return std::isnan(v) ? v : v < 0 ? std::numbers::pi_v<T> : T(0);
          }
        });
      },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        if (!x.is_complex()) return G{zeros_like(g[0])};
        // theta = atan2(b, a): dtheta/da + i dtheta/db = (-b + i a)/|z|^2 = i z/|z|^2; 0 at z = 0
        const Scalar i(std::complex<double>(0, 1));
        return G{where(x == 0, detail::zero_scalar_like(x), g[0] * x / x.abs().square() * i)};
      });
}

// ---- exponentials and logarithms ----------------------------------------------------------------------
Tensor exp(const Tensor& x) {
  return detail::apply_op(
      "exp", {x}, kSaveOutputs,
      [](In in) {
        if (in[0].dtype() == float32 && in[0].device().is_cpu())  // Note [vector exp]
          return detail::map_rows_of<float>(in[0], detail::exp_f32);
        return detail::unary_float_kernel(in[0], "exp", [](auto v) { return std::exp(v); });
      },
      [](const Ctx& c, const G& g) { return G{g[0] * c.output(0).conj()}; });
}

Tensor expm1(const Tensor& x) {
  return detail::apply_op(
      "expm1", {x}, kSaveOutputs,
      [](In in) {
        return detail::unary_float_kernel(in[0], "expm1", [](auto v) {
          if constexpr (is_complex_v<decltype(v)>) return detail::cexpm1(v);
          else return std::expm1(v);
        });
      },
      [](const Ctx& c, const G& g) { return G{g[0] * (c.output(0) + 1).conj()}; });
}

Tensor exp2(const Tensor& x) {
  return detail::apply_op(
      "exp2", {x}, kSaveOutputs,
      [](In in) {
        return detail::unary_float_kernel(in[0], "exp2", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) return std::exp(v * detail::real_t<T>(std::numbers::ln2));  // as torch
          else return std::exp2(v);
        });
      },
      [](const Ctx& c, const G& g) { return G{g[0] * (c.output(0) * std::numbers::ln2).conj()}; });
}

Tensor log(const Tensor& x) {
  return detail::apply_op(
      "log", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "log", [](auto v) { return std::log(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] / c.input(0).conj()}; });
}

Tensor log1p(const Tensor& x) {
  return detail::apply_op(
      "log1p", {x}, kSaveInputs,
      [](In in) {
        return detail::unary_float_kernel(in[0], "log1p", [](auto v) {
          if constexpr (is_complex_v<decltype(v)>) return detail::clog1p(v);
          else return std::log1p(v);
        });
      },
      [](const Ctx& c, const G& g) { return G{g[0] / (c.input(0) + 1).conj()}; });
}

namespace {
/// log2 (base 2) or log10 (base 10): the real library function, log(z) / log(base) for complex z.
Tensor log_base(const Tensor& x, const char* op, double base) {
  const double k = 1 / std::log(base);
  return detail::apply_op(
      op, {x}, kSaveInputs,
      [op, base, k](In in) {
        return detail::unary_float_kernel(in[0], op, [base, k](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) return std::log(v) * detail::real_t<T>(k);
          else return base == 2 ? std::log2(v) : std::log10(v);
        });
      },
      [base](const Ctx& c, const G& g) { return G{g[0] / (c.input(0) * std::log(base)).conj()}; });
}
}  // namespace

Tensor log2(const Tensor& x) { return log_base(x, "log2", 2); }
Tensor log10(const Tensor& x) { return log_base(x, "log10", 10); }

Tensor sqrt(const Tensor& x) {
  return detail::apply_op(
      "sqrt", {x}, kSaveOutputs,
      [](In in) { return detail::unary_float_kernel(in[0], "sqrt", [](auto v) { return std::sqrt(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] / (c.output(0) * 2).conj()}; });
}

Tensor rsqrt(const Tensor& x) {
  return detail::apply_op(
      "rsqrt", {x}, kSaveOutputs,
      [](In in) {
        return detail::unary_float_kernel(in[0], "rsqrt", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) return detail::cdiv(T(1), std::sqrt(v));
          else return T(1) / std::sqrt(v);
        });
      },
      // d x^(-1/2) = -x^(-3/2)/2 = -y^3/2
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (y * y * y * -0.5).conj()};
      });
}

Tensor reciprocal(const Tensor& x) {
  return detail::apply_op(
      "reciprocal", {x}, kSaveOutputs,
      [](In in) {
        return detail::unary_float_kernel(in[0], "reciprocal", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) return detail::cdiv(T(1), v);  // Note [complex division], as 1 / z
          else return T(1) / v;
        });
      },
      // d (1/x) = -1/x^2 = -y^2
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (y * y).neg().conj()};
      });
}

Tensor square(const Tensor& x) {
  // bool squares to int64 (as PyTorch); int64 stays int64
  Tensor xi = x.dtype() == Dtype::Bool ? x.to(Dtype::Int64) : x;
  return detail::apply_op(
      "square", {xi}, kSaveInputs,
      [](In in) {
        return detail::unary_kernel<kKeepInt>(in[0], "square", [](auto v) { return decltype(v)(detail::wrap_mul(v, v)); });
      },
      [](const Ctx& c, const G& g) { return G{g[0] * (c.input(0) * 2).conj()}; });
}

// ---- trigonometric and hyperbolic ----------------------------------------------------------------------
Tensor sin(const Tensor& x) {
  return detail::apply_op(
      "sin", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "sin", [](auto v) { return std::sin(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] * c.input(0).cos().conj()}; });
}

Tensor cos(const Tensor& x) {
  return detail::apply_op(
      "cos", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "cos", [](auto v) { return std::cos(v); }); },
      [](const Ctx& c, const G& g) { return G{-g[0] * c.input(0).sin().conj()}; });
}

Tensor tan(const Tensor& x) {
  return detail::apply_op(
      "tan", {x}, kSaveOutputs,
      [](In in) { return detail::unary_float_kernel(in[0], "tan", [](auto v) { return std::tan(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (y * y + 1).conj()};
      });
}

Tensor sinh(const Tensor& x) {
  return detail::apply_op(
      "sinh", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "sinh", [](auto v) { return std::sinh(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] * c.input(0).cosh().conj()}; });
}

Tensor cosh(const Tensor& x) {
  return detail::apply_op(
      "cosh", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "cosh", [](auto v) { return std::cosh(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] * c.input(0).sinh().conj()}; });
}

Tensor tanh(const Tensor& x) {
  return detail::apply_op(
      "tanh", {x}, kSaveOutputs,
      [](In in) {
        if (in[0].dtype() == float32 && in[0].device().is_cpu())  // Note [vector tanh]
          return detail::map_rows_of<float>(in[0], detail::tanh_f32);
        return detail::unary_float_kernel(in[0], "tanh", [](auto v) { return std::tanh(v); });
      },
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (1 - y * y).conj()};
      });
}

Tensor asin(const Tensor& x) {
  return detail::apply_op(
      "asin", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "asin", [](auto v) { return std::asin(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] / (1 - x * x).sqrt().conj()};
      });
}

Tensor acos(const Tensor& x) {
  return detail::apply_op(
      "acos", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "acos", [](auto v) { return std::acos(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{-g[0] / (1 - x * x).sqrt().conj()};
      });
}

Tensor atan(const Tensor& x) {
  return detail::apply_op(
      "atan", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "atan", [](auto v) { return std::atan(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] / (x * x + 1).conj()};
      });
}

Tensor asinh(const Tensor& x) {
  return detail::apply_op(
      "asinh", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "asinh", [](auto v) { return std::asinh(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] / (x * x + 1).sqrt().conj()};
      });
}

Tensor acosh(const Tensor& x) {
  return detail::apply_op(
      "acosh", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "acosh", [](auto v) { return std::acosh(v); }); },
      // 1 / (sqrt(x - 1) sqrt(x + 1)): acosh's own branch for complex x (sqrt(x^2 - 1) differs in sign off it)
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] / ((x - 1).sqrt() * (x + 1).sqrt()).conj()};
      });
}

Tensor atanh(const Tensor& x) {
  return detail::apply_op(
      "atanh", {x}, kSaveInputs,
      [](In in) { return detail::unary_float_kernel(in[0], "atanh", [](auto v) { return std::atanh(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] / (1 - x * x).conj()};
      });
}

// ---- methods ---------------------------------------------------------------------------------------------
Tensor Tensor::neg() const { return phasor::neg(*this); }
Tensor Tensor::conj() const { return phasor::conj(*this); }
Tensor Tensor::abs() const { return phasor::abs(*this); }
Tensor Tensor::sign() const { return phasor::sign(*this); }
Tensor Tensor::angle() const { return phasor::angle(*this); }
Tensor Tensor::exp() const { return phasor::exp(*this); }
Tensor Tensor::expm1() const { return phasor::expm1(*this); }
Tensor Tensor::log() const { return phasor::log(*this); }
Tensor Tensor::log1p() const { return phasor::log1p(*this); }
Tensor Tensor::sqrt() const { return phasor::sqrt(*this); }
Tensor Tensor::rsqrt() const { return phasor::rsqrt(*this); }
Tensor Tensor::square() const { return phasor::square(*this); }
Tensor Tensor::sin() const { return phasor::sin(*this); }
Tensor Tensor::cos() const { return phasor::cos(*this); }
Tensor Tensor::tan() const { return phasor::tan(*this); }
Tensor Tensor::sinh() const { return phasor::sinh(*this); }
Tensor Tensor::cosh() const { return phasor::cosh(*this); }
Tensor Tensor::tanh() const { return phasor::tanh(*this); }
Tensor Tensor::asinh() const { return phasor::asinh(*this); }
Tensor Tensor::acosh() const { return phasor::acosh(*this); }
Tensor Tensor::atanh() const { return phasor::atanh(*this); }
Tensor Tensor::reciprocal() const { return phasor::reciprocal(*this); }
Tensor Tensor::exp2() const { return phasor::exp2(*this); }
Tensor Tensor::log2() const { return phasor::log2(*this); }
Tensor Tensor::log10() const { return phasor::log10(*this); }
Tensor Tensor::asin() const { return phasor::asin(*this); }
Tensor Tensor::acos() const { return phasor::acos(*this); }
Tensor Tensor::atan() const { return phasor::atan(*this); }

}  // namespace phasor
