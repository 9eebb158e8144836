// src/core/special.cpp - the special functions of phasor/special.hpp (lgamma, digamma, polygamma, mvlgamma, erfinv,
// erfcx, i0, i0e, i1, i1e, ndtr, ndtri, log_ndtr, entr, xlog1py, zeta, igamma / gammainc, igammac / gammaincc, the
// Bessel functions J0, J1, Y0, Y1, K0, K1, e^x K0, e^x K1, the spherical j0 and the Airy function Ai):
// forward kernel and gradient side by side, and torch.special's names for them and for the functions defined
// elsewhere (erf, expit, logit, sinc, ...).
//
// Note [special functions]
// The values are core/special_rules.hpp's: one definition that the CPU's element loop runs (unary_kernel,
// real_binary) and the CUDA kernel of the op's name runs (cuda/elementwise_ops.cuh), so both devices give the same
// values. Inputs are real: int64 and bool promote to the default float dtype, complex is refused. The gradients are
// ops, so they run on any device and differentiate again:
//   lgamma' = digamma,  digamma' = polygamma(1, .),  polygamma(n, .)' = polygamma(n + 1, .),
//   erfinv'(x) = sqrt(pi) / 2 exp(erfinv(x)^2),  erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi),
//   ndtr'(x) = phi(x) = exp(-x^2 / 2) / sqrt(2 pi),  ndtri'(p) = 1 / phi(ndtri(p)),
//   log_ndtr'(x) = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi) (no 0 / 0 far in the lower tail),
//   entr'(x) = -(1 + log x),  i0' = i1,  i0e' = i1e - sgn(x) i0e,  i1' = i0 - i1 / x,  i1e' = i0e - i1e (sgn(x) + 1 / x)
//   (both 1/2 at 0),  xlog1py: d/dx = log1p(y) (0 where x = 0, as the value), d/dy = x / (1 + y),
//   zeta(x, q): d/dq = -x zeta(x + 1, q),  P(a, x) = igamma: d/dx = x^(a-1) e^-x / Gamma(a) (igammac: minus that),
//   J0' = -J1,  J1' = J0 - J1 / x (1/2 at 0),  Y0' = -Y1,  Y1' = Y0 - Y1 / x,  K0' = -K1,  K1' = -K0 - K1 / x,
//   (e^x K0)' = e^x K0 - e^x K1,  (e^x K1)' = e^x K1 (1 - 1 / x) - e^x K0,
//   spherical j0' = -j1 (j1 = sin x / x^2 - cos x / x, an op of its own, accurate near 0), j1' = j0 - 2 j1 / x (1/3 at 0).
//   Ai' (an op of its own, Note [Airy function]),  Ai'' = x Ai.
// torch defines no Bessel or Airy gradients; these are. modified_bessel_i0 / i1 are i0 / i1.
// As torch's, zeta has no gradient in x and the incomplete gamma functions none in a: a backward that needs one
// throws, naming the op. mvlgamma is made of lgamma: sum_j lgamma(x - j / 2) + p (p - 1) / 4 log pi.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/pointwise.hpp"
#include "core/real_binary.hpp"
#include "core/special_rules.hpp"
#include "core/unary.hpp"
#include "phasor/creation.hpp"
#include "phasor/nn/loss.hpp"
#include "phasor/ops.hpp"
#include "phasor/special.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using detail::Ctx;
using detail::is_real_float_v;
using detail::kSaveInputs;
using detail::kSaveOutputs;
using detail::no_gradient;

namespace {

using In = detail::TensorList;

using detail::special_rules::kInvSqrtTwoPi;   // 1 / sqrt(2 pi)
using detail::special_rules::kSqrtPiOverTwo;  // sqrt(pi) / 2
using detail::special_rules::kTwoOverSqrtPi;  // 2 / sqrt(pi)

/// The real special function `op` of x with element function f (a constrained generic of float and double) and
/// gradient bwd; `params` (polygamma's order) go to its CUDA kernel.
template <class F, class Bwd>
Tensor special_unary(const char* op, const Tensor& x, unsigned save, F f, Bwd bwd, double param = 0.0) {
  return detail::apply_op(
      op, {x}, save,
      [op, f, param](In in) {
        const double params[2] = {param, 0.0};
        return detail::unary_kernel<detail::kRealFloat>(in[0], op, f, params);
      },
      bwd);
}

/// where(x == 0, at0, f(x with 1 in place of 0)): the derivatives with a removable 0 / 0 at 0 (i1's, i1e's and
/// bessel_j1's are 1/2 there, the spherical j1's 1/3).
template <class F>
Tensor at_zero(const Tensor& x, double at0, F f) {
  const Tensor zero = x == 0.0;
  return where(zero, Scalar(at0), f(where(zero, Scalar(1.0), x)));
}

/// x^(a-1) e^-x / Gamma(a): d P(a, x) / dx.
Tensor igamma_density(const Tensor& a, const Tensor& x) { return (xlogy(a - 1.0, x) - x - lgamma(a)).exp(); }

/// P(a, x) (lower) or Q(a, x) as the op `op`.
Tensor incomplete_gamma(const char* op, const Tensor& a, const Tensor& x, bool upper) {
  const auto bwd = [op, upper](const Ctx& c, const G& g) {
    if (c.needs_grad(0)) no_gradient(op, "a");
    const Tensor d = g[0] * igamma_density(c.input(0), c.input(1));
    return G{Tensor(), upper ? -d : d};
  };
  if (upper)
    return detail::real_binary(op, a, x, false, kSaveInputs,
                               []<class T>(T u, T v) requires is_real_float_v<T> { return detail::gammaincc_of(u, v); }, bwd);
  return detail::real_binary(op, a, x, false, kSaveInputs,
                             []<class T>(T u, T v) requires is_real_float_v<T> { return detail::gammainc_of(u, v); }, bwd);
}

}  // namespace

// ---- the gamma family -------------------------------------------------------------------------------------
Tensor lgamma(const Tensor& x) {
  return special_unary(
      "lgamma", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::lgamma_of(v); },
      [](const Ctx& c, const G& g) { return G{g[0] * digamma(c.input(0))}; });
}

Tensor digamma(const Tensor& x) {
  return special_unary(
      "digamma", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::digamma_of(v); },
      [](const Ctx& c, const G& g) { return G{g[0] * polygamma(1, c.input(0))}; });
}

Tensor polygamma(std::int64_t n, const Tensor& x) {
  if (n < 0) throw Error("polygamma", "n must be non-negative, got " + std::to_string(n));
  const int order = static_cast<int>(n);
  return special_unary(
      "polygamma", x, kSaveInputs,
      [order]<class T>(T v) requires is_real_float_v<T> { return detail::polygamma_of(order, v); },
      [n](const Ctx& c, const G& g) { return G{g[0] * polygamma(n + 1, c.input(0))}; }, static_cast<double>(n));
}

Tensor mvlgamma(const Tensor& x, std::int64_t p) {
  const char* op = "mvlgamma";
  if (p < 1) throw Error(op, "p must be at least 1, got " + std::to_string(p));
  if (x.is_complex()) throw Error(op, std::string("not supported for complex input (got ") + dtype_name(x.dtype()) + ")");
  const double bound = static_cast<double>(p - 1) / 2;
  // the domain is checked in a step whose output is xf itself, read by the ops below, so a replay checks it too
  // (Note [value steps])
  const Tensor xf = detail::apply_nondiff(op, {is_floating(x.dtype()) ? x : x.to(default_dtype())}, [op, bound](detail::TensorList in) {
    const Tensor& v = in[0];
    const Tensor bad = logical_not(v.detach() > bound);
    detail::check_device_value(
        op, bad.any(), [&] { return std::pair<Tensor, Tensor>{detail::first_where(v.detach(), bad), Tensor()}; },
        [bound](double e, double) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "every element must be greater than (p - 1) / 2 = %g, got %g", bound, e);
          return std::string(buf);
        });
    return v;
  });
  return detail::composite(op, {x}, [&] {
    const Tensor half_j = arange(0, p, 1, xf.dtype(), xf.device()) * 0.5;
    const double c = static_cast<double>(p * (p - 1)) / 4 * std::log(std::numbers::pi);
    return lgamma(xf.unsqueeze(-1) - half_j).sum({-1}) + c;
  });
}

// ---- incomplete gamma and Hurwitz zeta --------------------------------------------------------------------
Tensor igamma(const Tensor& a, const Tensor& x) { return incomplete_gamma("igamma", a, x, false); }
Tensor igammac(const Tensor& a, const Tensor& x) { return incomplete_gamma("igammac", a, x, true); }

namespace special {
Tensor zeta(const Tensor& x, const Tensor& q) {
  return detail::real_binary(
      "zeta", x, q, false, kSaveInputs,
      []<class T>(T s, T v) requires is_real_float_v<T> { return detail::zeta_of(s, v); },
      [](const Ctx& c, const G& g) {
        if (c.needs_grad(0)) no_gradient("zeta", "x");
        const Tensor s = c.input(0), q = c.input(1);
        return G{Tensor(), -g[0] * s * zeta(s + 1.0, q)};
      });
}
Tensor zeta(const Scalar& x, const Tensor& q) { return zeta(detail::wrap_for(q, x), q); }
Tensor zeta(const Tensor& x, const Scalar& q) { return zeta(x, detail::wrap_for(x, q)); }
}  // namespace special

// ---- the error-function family and the normal distribution -----------------------------------------------
Tensor erfinv(const Tensor& x) {
  return special_unary(
      "erfinv", x, kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::erfinv_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor y = c.output(0);
        return G{g[0] * (y * y).exp() * kSqrtPiOverTwo};
      });
}

namespace special {
Tensor erfcx(const Tensor& x) {
  return special_unary(
      "erfcx", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::erfcx_of(v); },
      [](const Ctx& c, const G& g) { return G{g[0] * (c.input(0) * c.output(0) * 2.0 - kTwoOverSqrtPi)}; });
}

Tensor ndtr(const Tensor& x) {
  return special_unary(
      "ndtr", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::ndtr_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{g[0] * (v * v * -0.5).exp() * kInvSqrtTwoPi};
      });
}

Tensor ndtri(const Tensor& x) {
  return special_unary(
      "ndtri", x, kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::ndtri_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor y = c.output(0);
        return G{g[0] * (y * y * 0.5).exp() / kInvSqrtTwoPi};
      });
}

Tensor log_ndtr(const Tensor& x) {
  return special_unary(
      "log_ndtr", x, kSaveInputs | kSaveOutputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::log_ndtr_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{g[0] * (v * v * -0.5 - c.output(0)).exp() * kInvSqrtTwoPi};
      });
}

Tensor entr(const Tensor& x) {
  return special_unary(
      "entr", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::entr_of(v); },
      [](const Ctx& c, const G& g) { return G{-g[0] * (c.input(0).log() + 1.0)}; });
}

Tensor xlog1py(const Tensor& x, const Tensor& y) {
  return detail::real_binary(
      "xlog1py", x, y, false, kSaveInputs,
      []<class T>(T u, T v) requires is_real_float_v<T> { return detail::xlog1py_of(u, v); },
      [](const Ctx& c, const G& g) {
        const Tensor a = c.input(0), b = c.input(1);
        return G{c.needs_grad(0) ? g[0] * xlog1py((a != 0).to(g[0].dtype()), b) : Tensor(),
                 c.needs_grad(1) ? g[0] * a / (b + 1.0) : Tensor()};
      });
}
Tensor xlog1py(const Scalar& x, const Tensor& y) { return xlog1py(detail::wrap_for(y, x), y); }
Tensor xlog1py(const Tensor& x, const Scalar& y) { return xlog1py(x, detail::wrap_for(x, y)); }

// ---- modified Bessel functions of orders 0 and 1 ----------------------------------------------------------
Tensor i0e(const Tensor& x) {
  return special_unary(
      "i0e", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::i0e_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{g[0] * (i1e(v) - v.sign() * c.output(0))};
      });
}

Tensor i1(const Tensor& x) {
  return special_unary(
      "i1", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::i1_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0), y = c.output(0);
        return G{g[0] * at_zero(v, 0.5, [&](const Tensor& s) { return phasor::i0(v) - y / s; })};
      });
}

Tensor i1e(const Tensor& x) {
  return special_unary(
      "i1e", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::i1e_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0), y = c.output(0);
        return G{g[0] * at_zero(v, 0.5, [&](const Tensor& s) { return i0e(v) - y * (v.sign() + s.reciprocal()); })};
      });
}
}  // namespace special

Tensor i0(const Tensor& x) {
  return special_unary(
      "i0", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::i0_of(v); },
      [](const Ctx& c, const G& g) { return G{g[0] * special::i1(c.input(0))}; });
}

// ---- Bessel functions J, Y, K, the spherical j0 and Airy's Ai --------------------------------------------
namespace {
/// The spherical Bessel function j1 = -j0' (the gradient of spherical_bessel_j0; not a torch function).
Tensor spherical_bessel_j1(const Tensor& x) {
  return special_unary(
      "spherical_bessel_j1", x, kSaveInputs | kSaveOutputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::spherical_bessel_j1_of(v); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0), y = c.output(0);
        return G{g[0] * at_zero(v, 1.0 / 3, [&](const Tensor& s) { return special::spherical_bessel_j0(v) - y * 2.0 / s; })};
      });
}

/// Ai'(x), the derivative of the Airy function (the gradient of airy_ai; not a torch function): Ai'' = x Ai.
Tensor airy_ai_prime(const Tensor& x) {
  return special_unary(
      "airy_ai_prime", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::airy_of(v, true); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{g[0] * v * special::airy_ai(v)};
      });
}
}  // namespace

namespace special {
Tensor bessel_j0(const Tensor& x) {
  return special_unary(
      "bessel_j0", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_j_of(v, 0); },
      [](const Ctx& c, const G& g) { return G{-g[0] * bessel_j1(c.input(0))}; });
}

Tensor bessel_j1(const Tensor& x) {
  return special_unary(
      "bessel_j1", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_j_of(v, 1); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0), y = c.output(0);
        return G{g[0] * at_zero(v, 0.5, [&](const Tensor& s) { return bessel_j0(v) - y / s; })};
      });
}

Tensor bessel_y0(const Tensor& x) {
  return special_unary(
      "bessel_y0", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_y_of(v, 0); },
      [](const Ctx& c, const G& g) { return G{-g[0] * bessel_y1(c.input(0))}; });
}

Tensor bessel_y1(const Tensor& x) {
  return special_unary(
      "bessel_y1", x, kSaveInputs | kSaveOutputs, []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_y_of(v, 1); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{g[0] * (bessel_y0(v) - c.output(0) / v)};
      });
}

Tensor modified_bessel_i0(const Tensor& x) { return phasor::i0(x); }
Tensor modified_bessel_i1(const Tensor& x) { return i1(x); }

Tensor modified_bessel_k0(const Tensor& x) {
  return special_unary(
      "modified_bessel_k0", x, kSaveInputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_k_of(v, 0, false); },
      [](const Ctx& c, const G& g) { return G{-g[0] * modified_bessel_k1(c.input(0))}; });
}

Tensor modified_bessel_k1(const Tensor& x) {
  return special_unary(
      "modified_bessel_k1", x, kSaveInputs | kSaveOutputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_k_of(v, 1, false); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0);
        return G{-g[0] * (modified_bessel_k0(v) + c.output(0) / v)};
      });
}

Tensor scaled_modified_bessel_k0(const Tensor& x) {
  return special_unary(
      "scaled_modified_bessel_k0", x, kSaveInputs | kSaveOutputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_k_of(v, 0, true); },
      [](const Ctx& c, const G& g) { return G{g[0] * (c.output(0) - scaled_modified_bessel_k1(c.input(0)))}; });
}

Tensor scaled_modified_bessel_k1(const Tensor& x) {
  return special_unary(
      "scaled_modified_bessel_k1", x, kSaveInputs | kSaveOutputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::bessel_k_of(v, 1, true); },
      [](const Ctx& c, const G& g) {
        const Tensor v = c.input(0), y = c.output(0);
        return G{g[0] * (y - y / v - scaled_modified_bessel_k0(v))};
      });
}

Tensor airy_ai(const Tensor& x) {
  return special_unary(
      "airy_ai", x, kSaveInputs, []<class T>(T v) requires is_real_float_v<T> { return detail::airy_of(v, false); },
      [](const Ctx& c, const G& g) { return G{g[0] * airy_ai_prime(c.input(0))}; });
}

Tensor spherical_bessel_j0(const Tensor& x) {
  return special_unary(
      "spherical_bessel_j0", x, kSaveInputs,
      []<class T>(T v) requires is_real_float_v<T> { return detail::spherical_bessel_j0_of(v); },
      [](const Ctx& c, const G& g) { return G{-g[0] * spherical_bessel_j1(c.input(0))}; });
}
}  // namespace special

// ---- torch.special's names -----------------------------------------------------------------------------------
namespace special {
Tensor gammaln(const Tensor& x) { return phasor::lgamma(x); }
Tensor digamma(const Tensor& x) { return phasor::digamma(x); }
Tensor psi(const Tensor& x) { return phasor::digamma(x); }
Tensor polygamma(std::int64_t n, const Tensor& x) { return phasor::polygamma(n, x); }
Tensor multigammaln(const Tensor& x, std::int64_t p) { return phasor::mvlgamma(x, p); }
Tensor gammainc(const Tensor& a, const Tensor& x) { return phasor::igamma(a, x); }
Tensor gammaincc(const Tensor& a, const Tensor& x) { return phasor::igammac(a, x); }
Tensor erf(const Tensor& x) { return phasor::erf(x); }
Tensor erfc(const Tensor& x) { return phasor::erfc(x); }
Tensor erfinv(const Tensor& x) { return phasor::erfinv(x); }
Tensor i0(const Tensor& x) { return phasor::i0(x); }
Tensor xlogy(const Tensor& x, const Tensor& y) { return phasor::xlogy(x, y); }
Tensor expit(const Tensor& x) { return phasor::sigmoid(x); }
Tensor logit(const Tensor& x) { return phasor::logit(x); }
Tensor sinc(const Tensor& x) { return phasor::sinc(x); }
Tensor exp2(const Tensor& x) { return phasor::exp2(x); }
Tensor expm1(const Tensor& x) { return phasor::expm1(x); }
Tensor log1p(const Tensor& x) { return phasor::log1p(x); }
Tensor round(const Tensor& x, std::int64_t decimals) {
  if (decimals == 0) return phasor::round(x);
  const double scale = std::pow(10.0, static_cast<double>(decimals));
  return detail::composite("special_round", {x}, [&] { return phasor::round(x * scale) / scale; });
}
Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<Dtype> dtype) {
  return nn::functional::softmax(dtype ? x.to(*dtype) : x, dim);
}
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<Dtype> dtype) {
  return nn::functional::log_softmax(dtype ? x.to(*dtype) : x, dim);
}
Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim) { return phasor::logsumexp(x, dims, keepdim); }
}  // namespace special

// ---- Tensor methods -----------------------------------------------------------------------------------------
Tensor Tensor::erfinv() const { return phasor::erfinv(*this); }
Tensor Tensor::lgamma() const { return phasor::lgamma(*this); }
Tensor Tensor::digamma() const { return phasor::digamma(*this); }
Tensor Tensor::polygamma(std::int64_t n) const { return phasor::polygamma(n, *this); }
Tensor Tensor::mvlgamma(std::int64_t p) const { return phasor::mvlgamma(*this, p); }
Tensor Tensor::i0() const { return phasor::i0(*this); }
Tensor Tensor::igamma(const Tensor& x) const { return phasor::igamma(*this, x); }
Tensor Tensor::igammac(const Tensor& x) const { return phasor::igammac(*this, x); }

}  // namespace phasor
