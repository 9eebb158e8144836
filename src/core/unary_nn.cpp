// src/core/unary_nn.cpp - real-only elementwise functions (erf, activations, rounding), sigmoid,
// and the bool predicates; forward kernel and gradient side by side.
#include <array>
#include <cmath>
#include <complex>
#include <numbers>

#include "autodiff/node.hpp"
#include "core/complex_math.hpp"
#include "core/activation_kernels.hpp"
#include "core/pointwise.hpp"
#include "core/rounding_kernels.hpp"
#include "core/unary.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using detail::Ctx;
using detail::kAsIs;
using detail::kFloat;
using detail::kRealFloat;
using detail::is_complex_v;
using detail::is_real_float_v;
using detail::kSaveInputs;
using detail::kSaveNone;
using detail::kSaveOutputs;
using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace {

/// Rounding and relu: int64 runs as is (dtype kept), bool and complex are rejected.
constexpr detail::UnaryRule kRealKeepInt{.promote_int = false, .allow_bool = false, .allow_complex = false};

/// 1 / (1 + e^-x) without overflow for large |x|.
template <class T>
T sigmoid_real(T x) {
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;  // sqrt(2/pi)
constexpr double kGeluC = 0.044715;

}  // namespace

// ---- erf, sigmoid ----------------------------------------------------------------------------------------
Tensor erf(const Tensor& x) {
  return detail::apply_op(
      "erf", {x}, kSaveInputs,
      [](In in) {
        return detail::unary_kernel<kRealFloat>(in[0], "erf", []<class T>(T v) requires is_real_float_v<T> {
          return std::erf(v);
        });
      },
      // d erf / dx = 2/sqrt(pi) e^(-x^2)
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] * (x * x).neg().exp() * (2 / std::sqrt(std::numbers::pi))};
      });
}

Tensor erfc(const Tensor& x) {
  return detail::apply_op(
      "erfc", {x}, kSaveInputs,
      [](In in) {
        return detail::unary_kernel<kRealFloat>(in[0], "erfc", []<class T>(T v) requires is_real_float_v<T> {
          return std::erfc(v);  // keeps its digits where 1 - erf(x) would cancel (x > 0)
        });
      },
      // d erfc / dx = -2/sqrt(pi) e^(-x^2)
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        return G{g[0] * (x * x).neg().exp() * (-2 / std::sqrt(std::numbers::pi))};
      });
}

Tensor sigmoid(const Tensor& x) {
  return detail::apply_op(
      "sigmoid", {x}, kSaveOutputs,
      [](In in) {
        if (in[0].dtype() == float32 && in[0].device().is_cpu())  // Note [vector sigmoid]
          return detail::map_rows_of<float>(in[0], detail::sigmoid_f32);
        return detail::unary_float_kernel(in[0], "sigmoid", [](auto v) {
          using T = decltype(v);
          if constexpr (is_complex_v<T>) return detail::cdiv(T(1), T(1) + std::exp(-v));
          else return sigmoid_real(v);
        });
      },
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (y * (1 - y)).conj()};
      });
}

// ---- activations --------------------------------------------------------------------------------------------
Tensor relu(const Tensor& x) {
  return detail::apply_op(
      "relu", {x}, kSaveOutputs,
      [](In in) {
        // v < 0 ? 0 : v keeps NaN (as max(x, 0) in PyTorch propagates it)
        return detail::unary_kernel<kRealKeepInt>(in[0], "relu", []<class T>(T v) requires(!is_complex_v<T>) {
          return v < T(0) ? T(0) : v;
        });
      },
      [](const Ctx& c, const G& g) {
        return G{where(c.output(0) > 0, g[0], detail::zero_scalar_like(g[0]))};
      });
}

namespace {

/// g * gelu'(x) for the exact gelu in one pass (gelu's backward; fused because the composed
/// formula made ~11 passes over the activation, the largest CPU item of an FNO training step).
/// Differentiable: d/dg is gelu_backward itself, d/dx = g * phi(x) * (2 - x^2).
Tensor gelu_backward(const Tensor& g, const Tensor& x) {
  return detail::apply_op(
      "gelu_backward", {g, x}, kSaveInputs,
      [](In in) {
        const Dtype rt = detail::result_type(in);
        if (!is_floating(rt))
          throw Error("gelu_backward", std::string("expected floating tensors, got ") + dtype_name(rt));
        if (rt == float32 && in[0].dtype() == float32 && in[1].dtype() == float32 &&
            in[0].device().is_cpu()) {  // Note [vector gelu]
          return detail::map_rows_pair<float>(in[0], in[1], "gelu_backward", [](const auto& a, float* o, std::int64_t n) {
            detail::gelu_backward_f32(a[0], a[1], o, n);
          });
        }
        // CUDA tensors: the same formula in the "gelu_backward" kernel of src/cuda/elementwise_ops.cuh
        auto f = []<class T>(T gv, T v) requires is_real_float_v<T> {
          const T cdf = T(0.5) * std::erfc(-v * std::numbers::sqrt2_v<T> / T(2));
          const T pdf = std::exp(T(-0.5) * v * v) * T(0.39894228040143267793994605993438);
          return gv * (cdf + v * pdf);
        };
        return detail::binary_kernel(in[0], in[1], rt, "gelu_backward", f);
      },
      [](const Ctx& c, const G& gg) {
        Tensor g = c.input(0), x = c.input(1);
        Tensor dg, dx;
        if (c.needs_grad(0)) dg = gelu_backward(gg[0], x);
        if (c.needs_grad(1)) {
          Tensor pdf = (x * x * -0.5).exp() * (1 / std::sqrt(2 * std::numbers::pi));
          dx = gg[0] * g * pdf * (2 - x * x);
        }
        return G{dg, dx};
      });
}
}  // namespace

Tensor gelu(const Tensor& x, bool tanh_approximation) {
  if (!tanh_approximation) {
    // x * Phi(x) with Phi the standard normal CDF
    return detail::apply_op(
        "gelu", {x}, kSaveInputs,
        [](In in) {
          if (in[0].dtype() == float32 && in[0].device().is_cpu())  // Note [vector gelu]
            return detail::map_rows_of<float>(in[0], detail::gelu_f32);
          return detail::unary_kernel<kRealFloat>(in[0], "gelu", []<class T>(T v) requires is_real_float_v<T> {
            // 1 + erf(x/sqrt2) = erfc(-x/sqrt2): no cancellation for large negative x
            return T(0.5) * v * std::erfc(-v * std::numbers::sqrt2_v<T> / T(2));
          });
        },
        // Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi)
        [](const Ctx& c, const G& g) { return G{gelu_backward(g[0], c.input(0))}; });
  }
  // 0.5 x (1 + tanh(k (x + c x^3))), k = sqrt(2/pi), c = 0.044715
  return detail::apply_op(
      "gelu", {x}, kSaveInputs,
      [](In in) {
        const double tanh_form[2] = {1, 0};  // the CUDA kernel's parameter
        return detail::unary_kernel<kRealFloat>(
            in[0], "gelu",
            []<class T>(T v) requires is_real_float_v<T> {
              // (1 + tanh(u)) / 2 = sigmoid(2u): no cancellation for large negative x
              return v * sigmoid_real(T(2 * kSqrt2OverPi) * (v + T(kGeluC) * v * v * v));
            },
            tanh_form);
      },
      // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3))
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor x2 = x * x;
        Tensor t = ((x + x2 * x * kGeluC) * kSqrt2OverPi).tanh();
        Tensor d = (t + 1) * 0.5 + x * (1 - t * t) * (x2 * (3 * kGeluC) + 1) * (0.5 * kSqrt2OverPi);
        return G{g[0] * d};
      });
}

Tensor silu(const Tensor& x) {
  return detail::apply_op(
      "silu", {x}, kSaveInputs,
      [](In in) {
        if (in[0].dtype() == float32 && in[0].device().is_cpu())  // Note [vector sigmoid]
          return detail::map_rows_of<float>(in[0], detail::silu_f32);
        return detail::unary_kernel<kRealFloat>(in[0], "silu", []<class T>(T v) requires is_real_float_v<T> {
          return v * sigmoid_real(v);
        });
      },
      // s (1 + x (1 - s)), s = sigmoid(x)
      [](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor s = x.sigmoid();
        return G{g[0] * s * (x * (1 - s) + 1)};
      });
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  return detail::apply_op(
      "softplus", {x}, kSaveInputs,
      [beta, threshold](In in) {
        // log(1 + e^(beta x)) / beta, and x itself once beta x > threshold (linear regime)
        if (in[0].dtype() == float32 && in[0].device().is_cpu()) {  // Note [vector softplus]
          const float b = static_cast<float>(beta), th = static_cast<float>(threshold);
          return detail::map_rows_of<float>(
              in[0], [b, th](const float* x, float* y, std::int64_t n) { detail::softplus_f32(x, y, n, b, th); });
        }
        const double params[2] = {beta, threshold};  // the CUDA kernel's parameters
        return detail::unary_kernel<kRealFloat>(
            in[0], "softplus",
            [b = beta, th = threshold]<class T>(T v) requires is_real_float_v<T> {
              const T bx = v * T(b);
              return bx > T(th) ? v : std::log1p(std::exp(bx)) / T(b);
            },
            params);
      },
      [beta, threshold](const Ctx& c, const G& g) {
        Tensor bx = c.input(0) * beta;
        return G{where(bx > threshold, g[0], g[0] * bx.sigmoid())};
      });
}

// ---- rounding (zero gradient; identity on int64) ---------------------------------------------------------
namespace {
/// floor / ceil / round / trunc: float32 and float64 on the CPU through rounding_kernels.hpp (Note [rounding
/// without libm]), CUDA tensors through the kernel named `name`, int64 as it is.
Tensor rounding(const char* name, const Tensor& x, detail::RoundMode mode) {
  return detail::apply_op(
      name, {x}, kSaveNone,
      [name, mode](In in) {
        const Tensor& v = in[0];
        const auto kernel = [mode](const auto* x, auto* y, std::int64_t n) { detail::round_rows(x, y, n, mode); };
        if (v.device().is_cpu() && v.dtype() == float32) return detail::map_rows_of<float>(v, kernel);
        if (v.device().is_cpu() && v.dtype() == float64) return detail::map_rows_of<double>(v, kernel);
        // what is left: int64 (kept as it is), CUDA tensors (the functor's result type only), and the dtypes
        // unary_kernel refuses with the op's error
        return detail::unary_kernel<kRealKeepInt>(v, name, []<class T>(T e) requires(!is_complex_v<T>) { return e; });
      },
      [](const Ctx&, const G& g) { return G{zeros_like(g[0])}; });
}
}  // namespace

Tensor floor(const Tensor& x) { return rounding("floor", x, detail::RoundMode::Floor); }
Tensor ceil(const Tensor& x) { return rounding("ceil", x, detail::RoundMode::Ceil); }
// half to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2), as nearbyint in the default rounding mode
Tensor round(const Tensor& x) { return rounding("round", x, detail::RoundMode::HalfEven); }
Tensor trunc(const Tensor& x) { return rounding("trunc", x, detail::RoundMode::Trunc); }
Tensor frac(const Tensor& x) {
  // composed, so its gradient is 1 (trunc's is 0); checked under its own name first
  if (x.defined() && (x.is_complex() || x.dtype() == Dtype::Bool))
    throw Error("frac", std::string("not supported for ") + dtype_name(x.dtype()) + " input");
  return x - trunc(x);
}

// ---- predicates (bool output, no gradient) --------------------------------------------------------------
Tensor isfinite(const Tensor& x) {
  return detail::apply_nondiff("isfinite", {x}, [](In in) {
    return detail::unary_kernel<kAsIs>(in[0], "isfinite", [](auto v) -> bool {
      using T = decltype(v);
      if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
      else if constexpr (is_real_float_v<T>) return std::isfinite(v);
      else return true;
    });
  });
}

namespace {
/// A bool tensor of `test` (std::isnan, std::isinf) per element: a complex element when either part passes,
/// an integer or bool element never.
template <class Test>
Tensor part_test(const char* op, const Tensor& x, Test test) {
  return detail::apply_nondiff(op, {x}, [op, test](In in) {
    return detail::unary_kernel<kAsIs>(in[0], op, [test](auto v) -> bool {
      using T = decltype(v);
      if constexpr (is_complex_v<T>) return test(v.real()) || test(v.imag());
      else if constexpr (is_real_float_v<T>) return test(v);
      else return false;
    });
  });
}
}  // namespace

Tensor isnan(const Tensor& x) {
  return part_test("isnan", x, [](auto r) { return std::isnan(r); });
}

Tensor isinf(const Tensor& x) {
  return part_test("isinf", x, [](auto r) { return std::isinf(r); });
}

Tensor logical_not(const Tensor& x) {
  return detail::apply_nondiff("logical_not", {x}, [](In in) {
    if (in[0].dtype() == Dtype::Bool && in[0].device().is_cpu()) {
      // on the bytes (0 or 1): a bool element type keeps the loop from vectorizing
      Tensor out = detail::make_tensor(in[0].shape(), Dtype::Bool, in[0].device());
      detail::map_unary_into<std::uint8_t, std::uint8_t>(out, in[0],
                                                          [](std::uint8_t v) { return std::uint8_t(v ^ 1); });
      return out;
    }
    return detail::unary_kernel<kAsIs>(in[0], "logical_not",
                                [](auto v) -> bool { return !detail::convert<bool>(v); });
  });
}

// ---- methods ---------------------------------------------------------------------------------------------
Tensor Tensor::erf() const { return phasor::erf(*this); }
Tensor Tensor::erfc() const { return phasor::erfc(*this); }
Tensor Tensor::sigmoid() const { return phasor::sigmoid(*this); }
Tensor Tensor::relu() const { return phasor::relu(*this); }
Tensor Tensor::gelu(bool tanh_approximation) const { return phasor::gelu(*this, tanh_approximation); }
Tensor Tensor::silu() const { return phasor::silu(*this); }
Tensor Tensor::softplus(double beta, double threshold) const { return phasor::softplus(*this, beta, threshold); }
Tensor Tensor::floor() const { return phasor::floor(*this); }
Tensor Tensor::ceil() const { return phasor::ceil(*this); }
Tensor Tensor::trunc() const { return phasor::trunc(*this); }
Tensor Tensor::frac() const { return phasor::frac(*this); }
Tensor Tensor::round() const { return phasor::round(*this); }
Tensor Tensor::isfinite() const { return phasor::isfinite(*this); }
Tensor Tensor::isnan() const { return phasor::isnan(*this); }
Tensor Tensor::isinf() const { return phasor::isinf(*this); }
Tensor Tensor::logical_not() const { return phasor::logical_not(*this); }

}  // namespace phasor
