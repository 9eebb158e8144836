// src/nn/activation.cpp - the activations of phasor/nn/activation.hpp and their modules.
//
// Note [activation kernels]
// elu / selu / celu, leaky_relu, hardtanh, hardsigmoid, hardswish, mish, softshrink, hardshrink, logsigmoid,
// softsign and threshold are primitives with a kernel of their own: the scalar functions of nn/activation_rules.hpp,
// which the CPU element loop runs (unary_kernel: one pass, the functor inlined) and the CUDA kernel of the op's name
// runs (cuda/elementwise_ops.cuh), parameters passed as the kernel's (p0, p1). Exceptions, for float32 rows on the
// CPU, where libm's expm1f / log1pf / tanhf per element cost 10-30x a relu: elu / selu / celu (Note [vector elu]),
// mish (the vector exp of core/activation_kernels.hpp in mish_of's formula) and logsigmoid (-softplus(-x), the same),
// within a few float ulps of the scalar forms. Their gradients are ops, so they run
// on every device and differentiate again; conditions at the kinks are torch's (e.g. hardtanh passes the gradient
// strictly inside (min_val, max_val), hardswish's is x / 3 + 1 / 2 on [-3, 3], elu's takes the exponential branch
// at 0). relu6, prelu, rrelu, tanhshrink, glu and softmin are compositions of ops.
// Dtypes: float32 and float64; int64 only for hardtanh, relu6 and threshold (kept as int64, as torch's) and for
// softsign and tanhshrink (promoted to the default float dtype, as torch's compositions do); complex and bool
// are refused naming the op.
#include "phasor/nn/activation.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "autodiff/node.hpp"
#include "core/activation_kernels.hpp"
#include "core/tensor_impl.hpp"
#include "core/unary.hpp"
#include "nn/activation_rules.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/nn/loss.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {
namespace functional {

namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;
using detail::Ctx;
using detail::is_real_float_v;
namespace rules = detail::activation_rules;
using ::phasor::detail::shape_str;

/// Dtypes as they are, bool and complex refused; the element function's constraint decides whether int64 runs
/// (hardtanh, threshold: kept as int64) or is refused with the op's error (the others).
constexpr detail::UnaryRule kRealAsIs{.promote_int = false, .allow_bool = false, .allow_complex = false};
/// int64 promotes to the default float dtype; bool and complex are refused.
constexpr detail::UnaryRule kPromoteInt{.promote_int = true, .allow_bool = false, .allow_complex = false};

/// A number as torch prints it in a module's repr (shortest form, "0.01", "1").
std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_defined(const char* op, const Tensor& x, const char* what = "input") {
  if (!x.defined()) throw Error(op, std::string(what) + " is undefined");
}

/// x must be float32 or float64 (int64 too when allow_int).
void check_real(const char* op, const Tensor& x, bool allow_int = false, const char* what = "input") {
  check_defined(op, x, what);
  const Dtype t = x.dtype();
  if (is_floating(t) || (allow_int && t == int64)) return;
  throw Error(op, std::string(what) + " must be a real floating tensor" + (allow_int ? " or int64" : "") + ", got " +
                      dtype_name(t));
}

/// The elementwise primitive `op` with element function f (Note [activation kernels]); p0, p1 go to its CUDA kernel.
/// `rows` (optional): a vector loop (x_row, y_row, n) for contiguous float32 rows on the CPU.
template <detail::UnaryRule R, class F, class Bwd, class Rows = std::nullptr_t>
Tensor activation(const char* op, const Tensor& x, F f, Bwd bwd, double p0 = 0.0, double p1 = 0.0, Rows rows = nullptr) {
  check_defined(op, x);
  return detail::apply_op(
      op, {x}, detail::kSaveInputs,
      [op, f, p0, p1, rows](In in) {
        if constexpr (!std::is_same_v<Rows, std::nullptr_t>) {
          if (in[0].dtype() == float32 && in[0].device().is_cpu()) return detail::map_rows_of<float>(in[0], rows);
        }
        const double params[2] = {p0, p1};
        return detail::unary_kernel<R>(in[0], op, f, params);
      },
      bwd);
}

/// x <= 0 selects alpha * scale * input_scale * e^(x * input_scale), x > 0 scale: the elu family's derivative.
Tensor elu_derivative(const Tensor& x, double alpha, double scale, double input_scale) {
  // x clamped to <= 0 first: the unselected branch stays finite, so second derivatives do not meet 0 * inf
  const Tensor e = (x.clamp_max(0.0) * input_scale).exp() * (alpha * scale * input_scale);
  return where(x <= 0.0, e, Scalar(scale));
}

// Note [vector elu]
// libm's expm1f per element made float32 elu ~30x relu's time. The rows loop takes e^u from the vector exp
// (core/activation_kernels.hpp) for u = x * input_scale <= 0 and e^u - 1 from it where u <= -0.7 (e^u <= 0.5, so
// the subtraction loses under a bit: ~2 ulps); above, the Taylor series of expm1 to u^9 (first neglected term
// under 1e-8 of the value). Both are selected per element, so the loop vectorizes. NaN stays NaN (u is NaN),
// -inf gives -1.

/// e^u - 1 for u <= 0 given e = e^u (Note [vector elu]).
inline float expm1_nonpos(float u, float e) {
  float p = 1.0f + u * (1.0f / 9.0f);
  p = 1.0f + u * (1.0f / 8.0f) * p;
  p = 1.0f + u * (1.0f / 7.0f) * p;
  p = 1.0f + u * (1.0f / 6.0f) * p;
  p = 1.0f + u * (1.0f / 5.0f) * p;
  p = 1.0f + u * (1.0f / 4.0f) * p;
  p = 1.0f + u * (1.0f / 3.0f) * p;
  p = 1.0f + u * 0.5f * p;
  return u > -0.7f ? u * p : e - 1.0f;
}

/// elu, selu and celu: scale * (x for x > 0, alpha (e^(x / alpha if celu) - 1) otherwise) by the kernel `op`
/// (CUDA parameters: alpha, scale; celu's kernel takes alpha alone and computes 1 / alpha in T, as here).
Tensor elu_family(const char* op, const Tensor& x, double alpha, double scale, bool celu) {
  return activation<kRealAsIs>(
      op, x,
      [alpha, scale, celu]<class T>(T v) requires is_real_float_v<T> {
        return rules::elu_of(v, T(alpha), T(scale), celu ? T(1) / T(alpha) : T(1));
      },
      [alpha, scale, celu](const Ctx& c, const G& g) {
        return G{g[0] * elu_derivative(c.input(0), alpha, scale, celu ? 1.0 / alpha : 1.0)};
      },
      alpha, scale,
      // float32 rows (Note [vector elu])
      [a = float(alpha), s = float(scale), celu](const float* x, float* y, std::int64_t n) {
        const float is = celu ? 1.0f / a : 1.0f;
        if (!(is > 0.0f)) {  // a negative celu alpha: the scalar form
          for (std::int64_t i = 0; i < n; ++i) y[i] = rules::elu_of(x[i], a, s, is);
          return;
        }
        for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? 0.0f : x[i] * is;
        detail::exp_f32(y, y, n);
        for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? s * x[i] : s * a * expm1_nonpos(x[i] * is, y[i]);
      });
}

/// x converted to the default float dtype when it is int64 (softsign, tanhshrink); float32 / float64 as they are.
Tensor promoted(const char* op, const Tensor& x) {
  check_real(op, x, /*allow_int=*/true);
  return x.dtype() == int64 ? x.to(default_dtype()) : x;
}

/// The size of the channel dim of x for prelu: x.size(1), x.size(0) for 1-D x, 1 for a 0-d x.
std::int64_t channels(const Tensor& x) { return x.dim() >= 2 ? x.size(1) : (x.dim() == 1 ? x.size(0) : 1); }

}  // namespace

// ---- the elu family ----------------------------------------------------------------------------------------
Tensor elu(const Tensor& x, double alpha) { return elu_family("elu", x, alpha, 1.0, false); }

Tensor selu(const Tensor& x) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return elu_family("selu", x, kAlpha, kScale, false);
}

Tensor celu(const Tensor& x, double alpha) {
  if (alpha == 0.0) throw Error("celu", "alpha cannot be 0 (it divides x)");
  return elu_family("celu", x, alpha, 1.0, true);
}

// ---- piecewise linear ----------------------------------------------------------------------------------------
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return activation<kRealAsIs>(
      "leaky_relu", x,
      [negative_slope]<class T>(T v) requires is_real_float_v<T> { return rules::leaky_relu_of(v, T(negative_slope)); },
      [negative_slope](const Ctx& c, const G& g) { return G{where(c.input(0) > 0.0, g[0], g[0] * negative_slope)}; },
      negative_slope);
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  check_real("prelu", x);
  check_real("prelu", weight, false, "weight");
  if (weight.dim() > 1)
    throw Error("prelu", "weight must be a scalar or a 1-D tensor, got shape " + shape_str(weight.shape()));
  const std::int64_t c = channels(x), n = weight.numel();
  if (n != 1 && n != c)
    throw Error("prelu", "weight has " + std::to_string(n) + " elements, expected 1 or the " + std::to_string(c) +
                             " channels of the input of shape " + shape_str(x.shape()));
  return detail::composite("prelu", {x, weight}, [&] {
    Shape ws(static_cast<std::size_t>(x.dim() >= 2 ? x.dim() - 1 : 1), 1);
    Tensor w;
    if (n == 1) {
      w = weight.reshape({});
    } else {  // (C) for 1-D x, (C, 1, ..., 1) over dims 1.. of x otherwise
      ws[0] = c;
      w = weight.reshape(ws);
    }
    return where(x > 0.0, x, w * x);
  });
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training, Generator* gen) {
  check_real("rrelu", x);
  if (!(lower <= upper))
    throw Error("rrelu", "lower bound must be at most the upper bound, got lower = " + num(lower) + ", upper = " +
                             num(upper));
  return detail::composite("rrelu", {x}, [&] {
    if (!training) return leaky_relu(x, (lower + upper) / 2);
    // a slope ~ U(lower, upper) where x <= 0, 1 elsewhere; x * slope differentiates to g * slope
    const Tensor r = rand(x.shape(), x.dtype(), x.device(), gen) * (upper - lower) + lower;
    return x * where(x.detach() <= 0.0, r, Scalar(1.0));
  });
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  if (!(min_val <= max_val))
    throw Error("hardtanh", "min_val must be at most max_val, got min_val = " + num(min_val) + ", max_val = " +
                                num(max_val));
  return activation<kRealAsIs>(
      "hardtanh", x,
      [min_val, max_val]<class T>(T v) requires(is_real_float_v<T> || std::is_same_v<T, std::int64_t>) {
        return rules::hardtanh_of(v, T(min_val), T(max_val));
      },
      [min_val, max_val](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        return G{where((x <= min_val) | (x >= max_val), Scalar(0.0), g[0])};
      },
      min_val, max_val);
}

Tensor relu6(const Tensor& x) {
  check_real("relu6", x, /*allow_int=*/true);
  return detail::composite("relu6", {x}, [&] { return hardtanh(x, 0.0, 6.0); });
}

Tensor hardsigmoid(const Tensor& x) {
  return activation<kRealAsIs>(
      "hardsigmoid", x, []<class T>(T v) requires is_real_float_v<T> { return rules::hardsigmoid_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        return G{where((x > -3.0) & (x < 3.0), g[0] * (1.0 / 6.0), Scalar(0.0))};
      });
}

Tensor hardswish(const Tensor& x) {
  return activation<kRealAsIs>(
      "hardswish", x, []<class T>(T v) requires is_real_float_v<T> { return rules::hardswish_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        // torch's: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above
        const Tensor d = where(x < -3.0, Scalar(0.0), where(x <= 3.0, x * (1.0 / 3.0) + 0.5, Scalar(1.0)));
        return G{g[0] * d};
      });
}

Tensor threshold(const Tensor& x, double threshold, double value) {
  return activation<kRealAsIs>(
      "threshold", x,
      [threshold, value]<class T>(T v) requires(is_real_float_v<T> || std::is_same_v<T, std::int64_t>) {
        return rules::threshold_of(v, T(threshold), T(value));
      },
      [threshold](const Ctx& c, const G& g) { return G{where(c.input(0) <= threshold, Scalar(0.0), g[0])}; },
      threshold, value);
}

Tensor softshrink(const Tensor& x, double lambd) {
  if (!(lambd >= 0.0)) throw Error("softshrink", "lambd must be non-negative, got " + num(lambd));
  return activation<kRealAsIs>(
      "softshrink", x, [lambd]<class T>(T v) requires is_real_float_v<T> { return rules::softshrink_of(v, T(lambd)); },
      [lambd](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        return G{where((x >= -lambd) & (x <= lambd), Scalar(0.0), g[0])};
      },
      lambd);
}

Tensor hardshrink(const Tensor& x, double lambd) {
  return activation<kRealAsIs>(
      "hardshrink", x, [lambd]<class T>(T v) requires is_real_float_v<T> { return rules::hardshrink_of(v, T(lambd)); },
      [lambd](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        return G{where((x >= -lambd) & (x <= lambd), Scalar(0.0), g[0])};
      },
      lambd);
}

// ---- smooth ------------------------------------------------------------------------------------------------
Tensor mish(const Tensor& x) {
  return activation<kRealAsIs>(
      "mish", x, []<class T>(T v) requires is_real_float_v<T> { return rules::mish_of(v); },
      // tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x)
      [](const Ctx& c, const G& g) {
        const Tensor& x = c.input(0);
        const Tensor t = softplus(x).tanh();
        return G{g[0] * (t + x * x.sigmoid() * (1.0 - t * t))};
      },
      0.0, 0.0,
      // float32 rows: mish_of's formula with e^x from the vector exp (core/activation_kernels.hpp)
      [](const float* x, float* y, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] > 20.0f ? 0.0f : x[i];
        detail::exp_f32(y, y, n);
        for (std::int64_t i = 0; i < n; ++i) {
          const float e = y[i], m = e * (e + 2.0f);
          y[i] = x[i] > 20.0f ? x[i] : (x[i] == -INFINITY ? -0.0f : x[i] * (m / (m + 2.0f)));
        }
      });
}

Tensor softsign(const Tensor& x) {
  check_real("softsign", x, /*allow_int=*/true);
  return activation<kPromoteInt>(
      "softsign", x, []<class T>(T v) requires is_real_float_v<T> { return rules::softsign_of(v); },
      // 1 / (1 + |x|)^2
      [](const Ctx& c, const G& g) {
        const Tensor d = c.input(0).abs() + 1.0;
        return G{g[0] / (d * d)};
      });
}

Tensor tanhshrink(const Tensor& x) {
  const Tensor v = promoted("tanhshrink", x);
  return detail::composite("tanhshrink", {x}, [&] { return v - v.tanh(); });
}

Tensor logsigmoid(const Tensor& x) {
  return activation<kRealAsIs>(
      "logsigmoid", x, []<class T>(T v) requires is_real_float_v<T> { return rules::logsigmoid_of(v); },
      // sigmoid(-x)
      [](const Ctx& c, const G& g) { return G{g[0] * (-c.input(0)).sigmoid()}; }, 0.0, 0.0,
      // float32 rows: -softplus(-x) by the vector softplus (core/activation_kernels.hpp; -x itself above 20)
      [](const float* x, float* y, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) y[i] = -x[i];
        detail::softplus_f32(y, y, n, 1.0f, 20.0f);
        for (std::int64_t i = 0; i < n; ++i) y[i] = -y[i];
      });
}

// ---- along a dim -------------------------------------------------------------------------------------------
Tensor glu(const Tensor& x, std::int64_t dim) {
  check_real("glu", x);
  if (x.dim() == 0) throw Error("glu", "a 0-d input has no dim to halve");
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "glu");
  const std::int64_t n = x.size(d);
  if (n % 2 != 0)
    throw Error("glu", "the halved dim must have an even size, but dim " + std::to_string(d) + " of the input of shape " +
                           shape_str(x.shape()) + " has size " + std::to_string(n));
  return detail::composite("glu", {x}, [&] { return x.narrow(d, 0, n / 2) * x.narrow(d, n / 2, n / 2).sigmoid(); });
}

Tensor softmin(const Tensor& x, std::int64_t dim) {
  check_real("softmin", x);
  detail::wrap_dim(dim, x.dim() == 0 ? 1 : x.dim(), "softmin");  // a bad dim named as softmin's
  return detail::composite("softmin", {x}, [&] { return softmax(-x, dim); });
}

}  // namespace functional

// ---- modules -----------------------------------------------------------------------------------------------
namespace F = functional;
using functional::num;

ELU::ELU(double a) : Module("ELU"), alpha(a) {}
Tensor ELU::forward(const Tensor& x) { return F::elu(x, alpha); }
std::string ELU::extra_repr() const { return "alpha=" + num(alpha); }

Tensor SELU::forward(const Tensor& x) { return F::selu(x); }

CELU::CELU(double a) : Module("CELU"), alpha(a) {
  if (alpha == 0.0) throw Error("CELU", "alpha cannot be 0 (it divides x)");
}
Tensor CELU::forward(const Tensor& x) { return F::celu(x, alpha); }
std::string CELU::extra_repr() const { return "alpha=" + num(alpha); }

LeakyReLU::LeakyReLU(double s) : Module("LeakyReLU"), negative_slope(s) {}
Tensor LeakyReLU::forward(const Tensor& x) { return F::leaky_relu(x, negative_slope); }
std::string LeakyReLU::extra_repr() const { return "negative_slope=" + num(negative_slope); }

PReLU::PReLU(std::int64_t n, double init, Dtype dtype) : Module("PReLU"), num_parameters(n) {
  if (n < 1) throw Error("PReLU", "num_parameters must be positive, got " + std::to_string(n));
  if (!is_floating(dtype)) throw Error("PReLU", std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
  weight = register_parameter("weight", full({n}, init, dtype));
}
Tensor PReLU::forward(const Tensor& x) { return F::prelu(x, weight); }
std::string PReLU::extra_repr() const { return "num_parameters=" + std::to_string(num_parameters); }

RReLU::RReLU(double l, double u) : Module("RReLU"), lower(l), upper(u) {
  if (!(lower <= upper))
    throw Error("RReLU", "lower bound must be at most the upper bound, got lower = " + num(lower) + ", upper = " +
                             num(upper));
}
Tensor RReLU::forward(const Tensor& x) { return F::rrelu(x, lower, upper, is_training()); }
std::string RReLU::extra_repr() const { return "lower=" + num(lower) + ", upper=" + num(upper); }

Hardtanh::Hardtanh(double lo, double hi) : Module("Hardtanh"), min_val(lo), max_val(hi) {
  if (!(min_val <= max_val))
    throw Error("Hardtanh", "min_val must be at most max_val, got min_val = " + num(min_val) + ", max_val = " +
                                num(max_val));
}
Tensor Hardtanh::forward(const Tensor& x) { return F::hardtanh(x, min_val, max_val); }
std::string Hardtanh::extra_repr() const { return "min_val=" + num(min_val) + ", max_val=" + num(max_val); }

Tensor ReLU6::forward(const Tensor& x) { return F::relu6(x); }
Tensor Hardsigmoid::forward(const Tensor& x) { return F::hardsigmoid(x); }
Tensor Hardswish::forward(const Tensor& x) { return F::hardswish(x); }
Tensor Mish::forward(const Tensor& x) { return F::mish(x); }
Tensor Softsign::forward(const Tensor& x) { return F::softsign(x); }

Softshrink::Softshrink(double l) : Module("Softshrink"), lambd(l) {
  if (!(lambd >= 0.0)) throw Error("Softshrink", "lambd must be non-negative, got " + num(lambd));
}
Tensor Softshrink::forward(const Tensor& x) { return F::softshrink(x, lambd); }
std::string Softshrink::extra_repr() const { return num(lambd); }

Hardshrink::Hardshrink(double l) : Module("Hardshrink"), lambd(l) {}
Tensor Hardshrink::forward(const Tensor& x) { return F::hardshrink(x, lambd); }
std::string Hardshrink::extra_repr() const { return num(lambd); }

Tensor Tanhshrink::forward(const Tensor& x) { return F::tanhshrink(x); }

Threshold::Threshold(double t, double v) : Module("Threshold"), threshold(t), value(v) {}
Tensor Threshold::forward(const Tensor& x) { return F::threshold(x, threshold, value); }
std::string Threshold::extra_repr() const { return "threshold=" + num(threshold) + ", value=" + num(value); }

Tensor LogSigmoid::forward(const Tensor& x) { return F::logsigmoid(x); }

GLU::GLU(std::int64_t d) : Module("GLU"), dim(d) {}
Tensor GLU::forward(const Tensor& x) { return F::glu(x, dim); }
std::string GLU::extra_repr() const { return "dim=" + std::to_string(dim); }

Softmin::Softmin(std::int64_t d) : Module("Softmin"), dim(d) {}
Tensor Softmin::forward(const Tensor& x) { return F::softmin(x, dim); }
std::string Softmin::extra_repr() const { return "dim=" + std::to_string(dim); }

Softmax::Softmax(std::int64_t d) : Module("Softmax"), dim(d) {}
Tensor Softmax::forward(const Tensor& x) { return F::softmax(x, dim); }
std::string Softmax::extra_repr() const { return "dim=" + std::to_string(dim); }

LogSoftmax::LogSoftmax(std::int64_t d) : Module("LogSoftmax"), dim(d) {}
Tensor LogSoftmax::forward(const Tensor& x) { return F::log_softmax(x, dim); }
std::string LogSoftmax::extra_repr() const { return "dim=" + std::to_string(dim); }

}  // namespace phasor::nn
