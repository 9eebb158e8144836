// src/core/composite_math.cpp - elementwise functions written with other ops (so every device runs them and
// their gradients come from those ops): sinc, logit, deg2rad, rad2deg, heaviside, fmax, fmin.
#include <cmath>
#include <optional>
#include <string>

#include "autodiff/node.hpp"
#include "core/promotion.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// x itself when floating or complex, else x as the default dtype (integer and bool inputs of a float op).
Tensor as_float(const Tensor& x) { return is_floating_or_complex(x.dtype()) ? x : x.to(default_dtype()); }

}  // namespace

Tensor sinc(const Tensor& x_in) {
  const Tensor x = as_float(x_in);
  return detail::composite("sinc", {x_in}, [&] {
    // sin(pi x) / (pi x), 1 at 0: the quotient made of a safe x there, so neither branch's gradient is NaN
    const Tensor zero = x.detach() == 0.0;
    const Tensor px = where(zero, Scalar(1.0), x) * kPi;
    return where(zero, Scalar(1.0), px.sin() / px);
  });
}

Tensor logit(const Tensor& x_in, std::optional<double> eps) {
  const Tensor x = as_float(x_in);
  detail::check_not_complex(x, "logit");
  return detail::composite("logit", {x_in}, [&] {
    const Tensor z = eps ? clamp(x, *eps, 1.0 - *eps) : x;
    return (z / (1.0 - z)).log();
  });
}

Tensor deg2rad(const Tensor& x) {
  detail::check_not_complex(x, "deg2rad");
  return detail::composite("deg2rad", {x}, [&] { return as_float(x) * (kPi / 180.0); });
}

Tensor rad2deg(const Tensor& x) {
  detail::check_not_complex(x, "rad2deg");
  return detail::composite("rad2deg", {x}, [&] { return as_float(x) * (180.0 / kPi); });
}

Tensor heaviside(const Tensor& x, const Tensor& values) {
  detail::check_not_complex(x, "heaviside");
  detail::check_not_complex(values, "heaviside");
  detail::check_same_device(x, values, "heaviside");
  const Dtype dt = detail::result_type({x, values});
  if (dt != x.dtype())
    throw Error("heaviside", std::string("values (") + dtype_name(values.dtype()) + ") must not promote the input (" +
                                 dtype_name(x.dtype()) + ")");
  NoGradGuard ng;  // a step: no gradient
  const Tensor xd = x.detach();
  return where(xd == 0, values.detach().to(dt), (xd > 0).to(dt));
}

Tensor fmax(const Tensor& a, const Tensor& b) {
  detail::check_not_complex(a, "fmax");
  detail::check_not_complex(b, "fmax");
  return detail::composite("fmax", {a, b}, [&] {
    // maximum, except that a NaN loses to a number
    return where(a.detach().isnan(), b, where(b.detach().isnan(), a, maximum(a, b)));
  });
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  detail::check_not_complex(a, "fmin");
  detail::check_not_complex(b, "fmin");
  return detail::composite("fmin", {a, b}, [&] {
    return where(a.detach().isnan(), b, where(b.detach().isnan(), a, minimum(a, b)));
  });
}

}  // namespace phasor
