// src/nn/optim/clip_grad.cpp - clip_grad_norm_ and clip_grad_value_ (torch.nn.utils semantics).
#include "phasor/optim/clip_grad.hpp"

#include <cmath>
#include <complex>

#include "core/device_check.hpp"
#include "nn/optim/optim_util.hpp"
#include "phasor/ops.hpp"

namespace phasor::optim {

namespace {

/// Sum of |x|^p (p finite) or max |x| (p = inf) over one gradient's elements (complex: |z|),
/// accumulated in double over four interleaved lanes (the common p = 2 and p = 1 cases vectorize).
template <class R>
double grad_norm_part(const Tensor& g, double p) {
  const Tensor c = g.contiguous();
  const R* x = detail::real_ptr<R>(c);
  const std::int64_t n = c.numel();
  if (std::isinf(p)) {
    double m = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double a = c.is_complex() ? std::hypot(double(x[2 * i]), double(x[2 * i + 1])) : std::fabs(double(x[i]));
      if (a > m || std::isnan(a)) m = a;
      if (std::isnan(m)) break;
    }
    return m;
  }
  if (p == 2) {  // sum of squares of the real components (|z|^2 = re^2 + im^2)
    const std::int64_t k = detail::real_numel(c);
    double acc[4] = {0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 4 <= k; i += 4)
      for (int l = 0; l < 4; ++l) acc[l] += double(x[i + l]) * double(x[i + l]);
    for (; i < k; ++i) acc[0] += double(x[i]) * double(x[i]);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
  double acc = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = c.is_complex() ? std::hypot(double(x[2 * i]), double(x[2 * i + 1])) : std::fabs(double(x[i]));
    acc += p == 1 ? a : std::pow(a, p);
  }
  return acc;
}

/// grad_norm_part for a CUDA gradient, as a float64 0-d tensor on its device: device ops in float64, no
/// host round trip (a step that clips can be captured into a CUDA graph).
Tensor grad_norm_part_cuda(const Tensor& g, double p) {
  Tensor a;  // |x| per element, float64 on the device
  if (g.is_complex()) {
    const Tensor re = g.real().to(float64), im = g.imag().to(float64);
    const Tensor sq = re * re + im * im;
    if (p == 2) return sq.sum();
    a = sq.sqrt();
  } else {
    const Tensor r = g.to(float64);
    if (p == 2) return (r * r).sum();
    a = r.abs();
  }
  if (std::isinf(p)) return a.numel() == 0 ? zeros({}, float64, g.device()) : a.amax();  // NaN wins amax
  if (p == 1) return a.sum();
  return a.pow(p).sum();
}

/// The error of a non-finite total norm of order p.
std::string nonfinite_message(double p, double total) {
  return "the total norm of order " + detail::fmt(p) + " for gradients from `parameters` is " + detail::fmt(total) +
         " (non-finite), so it cannot be clipped; pass error_if_nonfinite = false to clip anyway";
}

/// clip_grad_norm_ for gradients on one CUDA device: the total and the coefficient stay on the device.
/// error_if_nonfinite makes the host wait for the total, as torch.nn.utils.clip_grad_norm_ does; inside a
/// CUDA graph capture the device checks it at every replay instead (Note [device checks in CUDA graphs]),
/// and a failing replay leaves the gradients as they were.
Tensor clip_grad_norm_cuda(std::vector<Tensor>& grads, double max_norm, double p, bool error_if_nonfinite,
                           const char* op) {
  std::vector<Tensor> parts;
  for (const auto& g : grads) parts.push_back(grad_norm_part_cuda(g, p));
  const Tensor all = stack(parts);
  const Tensor acc = std::isinf(p) ? all.amax() : all.sum();
  const Tensor total = std::isinf(p) || p == 1 ? acc : p == 2 ? acc.sqrt() : acc.pow(1.0 / p);
  Tensor coef = (Scalar(max_norm) / (total + 1e-6)).clamp(std::nullopt, Scalar(1.0));  // 1: gradients exact
  if (error_if_nonfinite) {
    const Tensor finite = total.isfinite();
    const bool deferred = ::phasor::detail::check_device_value(
        op, finite.logical_not(), [&] { return std::pair{total, Tensor()}; },
        [p](double t, double) { return nonfinite_message(p, t); });
    if (deferred) coef = where(finite, coef, Scalar(1.0));  // a failing replay changes nothing
  }
  for (auto& g : grads) g.mul_(coef);
  return total.to(to_real(grads[0].dtype()));
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
  const char* op = "clip_grad_norm_";
  if (!(norm_type > 0)) throw Error(op, "norm_type must be > 0 or inf, got " + detail::fmt(norm_type));
  NoGradGuard ng;
  std::vector<Tensor> grads;
  for (const auto& p : parameters) {
    if (!p.defined()) throw Error(op, "got an undefined parameter tensor");
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!is_floating_or_complex(g.dtype()))
      throw Error(op, std::string("gradient has dtype ") + dtype_name(g.dtype()) + "; expected a floating or complex dtype");
    if (!grads.empty() && g.device() != grads[0].device())
      throw Error(op, "expected all gradients on one device, got " + grads[0].device().str() + " and " + g.device().str());
    grads.push_back(g);
  }
  if (grads.empty()) return scalar_tensor(0.0, default_dtype());
  if (grads[0].device().is_cuda()) return clip_grad_norm_cuda(grads, max_norm, norm_type, error_if_nonfinite, op);
  const bool inf = std::isinf(norm_type);
  double acc = 0;
  for (const auto& g : grads) {
    double part = 0;
    detail::visit_real(g.dtype(), [&](auto tag) { part = grad_norm_part<decltype(tag)>(g, norm_type); });
    if (inf)
      acc = (part > acc || std::isnan(part)) ? part : acc;
    else
      acc += part;
  }
  const double total = inf ? acc : norm_type == 2 ? std::sqrt(acc) : norm_type == 1 ? acc : std::pow(acc, 1.0 / norm_type);
  if (error_if_nonfinite && !std::isfinite(total)) throw Error(op, nonfinite_message(norm_type, total));
  const double coef = std::min(max_norm / (total + 1e-6), 1.0);
  if (!(coef == 1.0))
    for (auto& g : grads) g.mul_(coef);
  return scalar_tensor(total, to_real(grads[0].dtype()), grads[0].device());
}

Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  const char* op = "clip_grad_value_";
  if (!(clip_value >= 0)) throw Error(op, "clip_value must be >= 0, got " + detail::fmt(clip_value));
  NoGradGuard ng;
  for (const auto& p : parameters) {
    if (!p.defined()) throw Error(op, "got an undefined parameter tensor");
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.is_complex()) {
      Tensor re = g.real(), im = g.imag();
      re.clamp_(-clip_value, clip_value);
      im.clamp_(-clip_value, clip_value);
    } else {
      g.clamp_(-clip_value, clip_value);
    }
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace phasor::optim
