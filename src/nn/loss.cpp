// src/nn/loss.cpp - loss functions, softmax / log_softmax, and the operator-learning losses.
//
// softmax and log_softmax are primitives (one saved output, backward in public ops, so double
// backward works); every loss is a composition of public ops, so its gradients of any order come
// from the ops it is made of.
#include "phasor/nn/loss.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/device_constants.hpp"
#include "core/index_ops.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/fft.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

Reduction reduction_from_string(const std::string& name) {
  if (name == "none") return Reduction::none;
  if (name == "mean") return Reduction::mean;
  if (name == "sum") return Reduction::sum;
  if (name == "batchmean") return Reduction::batchmean;
  throw Error("reduction", "unknown reduction '" + name + "'; expected 'none', 'mean', 'sum' or (kl_div only) 'batchmean'");
}

namespace functional {
namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])
using detail::shape_str;

/// Applies the reduction; throws on a value outside the enum.
Tensor reduce(const Tensor& l, Reduction r, const char* op) {
  switch (r) {
    case Reduction::none: return l;
    case Reduction::mean: return l.mean();
    case Reduction::sum: return l.sum();
    case Reduction::batchmean: break;
  }
  throw Error(op, "unknown reduction value " + std::to_string(static_cast<int>(r)));
}

void check_reduction(Reduction r, const char* op) {
  if (r == Reduction::batchmean)
    throw Error(op, "reduction 'batchmean' is only valid for kl_div; expected none, mean or sum");
  if (r != Reduction::none && r != Reduction::mean && r != Reduction::sum)
    throw Error(op, "unknown reduction value " + std::to_string(static_cast<int>(r)));
}

void check_defined(const Tensor& t, const char* what, const char* op) {
  if (!t.defined()) throw Error(op, std::string(what) + " is undefined");
}

/// Input and target of a regression loss: defined, floating (complex when allowed), same shape.
void check_pair(const Tensor& input, const Tensor& target, const char* op, bool allow_complex, Reduction r) {
  check_defined(input, "input", op);
  check_defined(target, "target", op);
  check_reduction(r, op);
  for (const Tensor* t : {&input, &target}) {
    const bool ok = allow_complex ? is_floating_or_complex(t->dtype()) : is_floating(t->dtype());
    if (!ok)
      throw Error(op, std::string("expected ") + (allow_complex ? "floating or complex" : "real floating") +
                          " input and target, got " + dtype_name(input.dtype()) + " and " +
                          dtype_name(target.dtype()));
  }
  if (input.shape() != target.shape())
    throw Error(op, "input shape " + shape_str(input.shape()) + " and target shape " + shape_str(target.shape()) +
                        " differ (losses do not broadcast)");
}

void check_floating(const Tensor& x, const char* op) {
  check_defined(x, "input", op);
  if (!is_floating(x.dtype()))
    throw Error(op, std::string("expected a real floating tensor, got ") + dtype_name(x.dtype()));
}

/// |d|^2 for real or complex d, differentiable everywhere.
Tensor abs_sq(const Tensor& d) {
  if (!d.is_complex()) return d.square();
  return d.real().square() + d.imag().square();
}

}  // namespace

// ---- pointwise regression losses ----------------------------------------------------------------

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair(input, target, "mse_loss", true, reduction);
  return detail::composite("mse_loss", {input, target},
                           [&] { return reduce(abs_sq(input - target), reduction, "mse_loss"); });
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair(input, target, "l1_loss", true, reduction);
  return detail::composite("l1_loss", {input, target},
                           [&] { return reduce((input - target).abs(), reduction, "l1_loss"); });
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_pair(input, target, "smooth_l1_loss", false, reduction);
  if (!(beta >= 0) || std::isinf(beta))
    throw Error("smooth_l1_loss", "beta must be finite and >= 0, got " + std::to_string(beta));
  return detail::composite("smooth_l1_loss", {input, target}, [&] {
    Tensor d = input - target;
    Tensor a = d.abs();
    if (beta == 0) return reduce(a, reduction, "smooth_l1_loss");
    Tensor l = where(a < Scalar(beta), d.square() * (0.5 / beta), a - 0.5 * beta);
    return reduce(l, reduction, "smooth_l1_loss");
  });
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_pair(input, target, "huber_loss", false, reduction);
  if (!(delta > 0) || std::isinf(delta))
    throw Error("huber_loss", "delta must be finite and > 0, got " + std::to_string(delta));
  return detail::composite("huber_loss", {input, target}, [&] {
    Tensor d = input - target;
    Tensor a = d.abs();
    Tensor l = where(a < Scalar(delta), d.square() * 0.5, (a - 0.5 * delta) * delta);
    return reduce(l, reduction, "huber_loss");
  });
}

// ---- softmax family ------------------------------------------------------------------------------------

Tensor softmax(const Tensor& x, std::int64_t dim) {
  check_floating(x, "softmax");
  if (x.dim() == 0) {
    detail::wrap_dim(dim, 1, "softmax");
    return detail::composite("softmax", {x}, [&] { return softmax(x.reshape({1}), 0).reshape({}); });
  }
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "softmax");
  return detail::apply_op(
      "softmax", {x}, detail::kSaveOutputs,
      [d](In in) {
        if (in[0].numel() == 0) return empty_like(in[0]);
        Tensor e = (in[0] - amax(in[0], {d}, true)).exp();
        e.div_(e.sum({d}, true));
        return e;
      },
      [d](const detail::Ctx& c, const G& g) {
        Tensor y = c.output(0);
        Tensor gy = g[0] * y;
        return G{gy - y * gy.sum({d}, true)};
      });
}

Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  check_floating(x, "log_softmax");
  if (x.dim() == 0) {
    detail::wrap_dim(dim, 1, "log_softmax");
    return detail::composite("log_softmax", {x}, [&] { return log_softmax(x.reshape({1}), 0).reshape({}); });
  }
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "log_softmax");
  return detail::apply_op(
      "log_softmax", {x}, detail::kSaveOutputs,
      [d](In in) { return in[0].numel() == 0 ? empty_like(in[0]) : in[0] - logsumexp(in[0], {d}, true); },
      [d](const detail::Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] - y.exp() * g[0].sum({d}, true)};
      });
}

// ---- nll / cross entropy ----------------------------------------------------------------------------------
namespace {

/// Class dim of a classification input: 1, or 0 for a 1-D input.
std::int64_t class_dim(const Tensor& input) { return input.dim() >= 2 ? 1 : 0; }

/// Checks the input (rank >= 1, floating) and an optional weight (C).
void check_class_input(const Tensor& input, const Tensor& weight, const char* op) {
  check_floating(input, op);
  if (input.dim() == 0) throw Error(op, "expected an input of shape (C), (N, C) or (N, C, d1, ...), got a 0-d tensor");
  const std::int64_t C = input.size(class_dim(input));
  if (weight.defined() && (weight.dim() != 1 || weight.size(0) != C))
    throw Error(op, "weight must have shape (" + std::to_string(C) + ",) for " + std::to_string(C) +
                        " classes, got " + shape_str(weight.shape()));
  if (weight.defined() && !is_floating(weight.dtype()))
    throw Error(op, std::string("weight must be real floating, got ") + dtype_name(weight.dtype()));
}

/// Shape a class-index target must have for `input`: input's shape without the class dim.
Shape index_target_shape(const Tensor& input) {
  Shape s = input.shape();
  s.erase(s.begin() + class_dim(input));
  return s;
}

/// Validates int64 class-index targets; returns them on input's device with ignored entries replaced by
/// 0, and the mask (input dtype) of counted entries. Device ops: the host reads one bool (whether any
/// target is out of range), and on a failure the first bad target (check_device_value).
std::pair<Tensor, Tensor> prepare_index_target(const Tensor& input, const Tensor& target, std::int64_t ignore_index,
                                               const char* op) {
  if (target.dtype() != int64)
    throw Error(op, std::string("expected int64 class indices as target, got ") + dtype_name(target.dtype()));
  const Shape ts = index_target_shape(input);
  if (target.shape() != ts)
    throw Error(op, "input of shape " + shape_str(input.shape()) + " needs a target of shape " + shape_str(ts) +
                        ", got " + shape_str(target.shape()));
  const std::int64_t C = input.size(class_dim(input));
  const Tensor t = target.device() == input.device() ? target.detach() : target.detach().to(input.device());
  const Tensor ignored = t == Scalar(ignore_index);
  const Tensor bad = logical_not(ignored) & ((t < Scalar(0)) | (t >= Scalar(C)));
  const bool deferred = ::phasor::detail::check_device_value(
      op, bad.any(),
      [&] { return std::pair{::phasor::detail::first_where(t, bad), Tensor()}; },  // the first bad target
      [C](double v, double) {
        return "target " + std::to_string(static_cast<std::int64_t>(v)) + " is out of bounds for " + std::to_string(C) +
               " classes";
      });
  // in a CUDA graph capture each replay checks the targets (Note [device checks in CUDA graphs]); meanwhile
  // bad targets read class 0, so the gather below stays in range
  return {t.masked_fill(deferred ? ignored | bad : ignored, Scalar(0)), logical_not(ignored).to(input.dtype())};
}

/// The nll terms per target entry: (-w[t] * input[.., t, ..] * mask, w[t] * mask).
std::pair<Tensor, Tensor> nll_terms(const Tensor& input, const Tensor& safe, const Tensor& mask, const Tensor& weight) {
  const std::int64_t cd = class_dim(input);
  Tensor moved = input.dim() >= 2 ? input.movedim(cd, -1) : input;  // (..., C)
  // prepare_index_target has put every index in range: the trusted ops make no range check wait on a GPU
  Tensor picked = phasor::detail::gather_trusted(moved, -1, safe.unsqueeze(-1)).squeeze(-1);
  Tensor wm = mask;
  if (weight.defined())
    wm = phasor::detail::index_select_trusted(weight.to(input.dtype()), 0, safe.flatten()).reshape(safe.shape()) * mask;
  return {-(picked * wm), wm};
}

Tensor nll_impl(const Tensor& input, const Tensor& target, const Tensor& weight, std::int64_t ignore_index,
                Reduction reduction, const char* op) {
  auto [safe, mask] = prepare_index_target(input, target, ignore_index, op);
  auto [l, wm] = nll_terms(input, safe, mask, weight);
  switch (reduction) {
    case Reduction::none: return l;
    case Reduction::sum: return l.sum();
    case Reduction::mean: return l.sum() / wm.sum();
    case Reduction::batchmean: break;
  }
  throw Error(op, "unknown reduction value " + std::to_string(static_cast<int>(reduction)));
}

/// weight reshaped to broadcast along the class dim of `input`.
Tensor weight_view(const Tensor& weight, const Tensor& input) {
  Shape s(static_cast<std::size_t>(input.dim() - class_dim(input)), 1);
  s[0] = weight.size(0);
  return weight.to(input.dtype()).reshape(s);
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, std::int64_t ignore_index,
                Reduction reduction) {
  check_class_input(input, weight, "nll_loss");
  check_defined(target, "target", "nll_loss");
  check_reduction(reduction, "nll_loss");
  return detail::composite("nll_loss", {input, target},
                           [&] { return nll_impl(input, target, weight, ignore_index, reduction, "nll_loss"); });
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, std::int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  const char* op = "cross_entropy";
  check_class_input(input, weight, op);
  check_defined(target, "target", op);
  check_reduction(reduction, op);
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    throw Error(op, "label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  const std::int64_t cd = class_dim(input);
  const std::int64_t C = input.size(cd);
  const double eps = label_smoothing;

  if (is_floating(target.dtype())) {  // class probabilities
    if (target.shape() != input.shape())
      throw Error(op, "probability target must have the input's shape " + shape_str(input.shape()) + ", got " +
                          shape_str(target.shape()));
    if (ignore_index != -100) throw Error(op, "ignore_index is not supported for class-probability targets");
    return detail::composite(op, {input, target}, [&] {
      Tensor lsm = log_softmax(input, cd);
      Tensor t = eps > 0 ? target * (1 - eps) + eps / static_cast<double>(C) : target;
      Tensor prod = lsm * t;
      if (weight.defined()) prod = prod * weight_view(weight, input);
      Tensor l = -prod.sum({cd});
      if (reduction == Reduction::mean) return l.sum() / static_cast<double>(input.numel() / std::max<std::int64_t>(C, 1));
      return reduce(l, reduction, op);
    });
  }

  auto [safe, mask] = prepare_index_target(input, target, ignore_index, op);
  return detail::composite(op, {input, target}, [&] {
    Tensor lsm = log_softmax(input, cd);
    auto [l, wm] = nll_terms(lsm, safe, mask, weight);
    Tensor nll;
    if (reduction == Reduction::none) nll = l;
    else if (reduction == Reduction::sum) nll = l.sum();
    else nll = l.sum() / wm.sum();
    if (eps == 0) return nll;
    // Smoothing term (torch): -sum_c w_c lsm_c per entry, ignored entries zeroed; mean divides by the
    // summed weights of the counted targets (or their number without weights).
    Tensor prod = weight.defined() ? lsm * weight_view(weight, input) : lsm;
    Tensor smooth = -prod.sum({cd}) * mask;
    Tensor ret;
    if (reduction == Reduction::none) ret = smooth;
    else if (reduction == Reduction::sum) ret = smooth.sum();
    else ret = smooth.sum() / wm.sum();
    return nll * (1 - eps) + ret * (eps / static_cast<double>(C));
  });
}

// ---- operator-learning losses ----------------------------------------------------------------------------
namespace {

void check_p(double p, const char* op) {
  if (!(p > 0)) throw Error(op, "p must be > 0 (or infinity), got " + std::to_string(p));
}

/// Checks the pair for a per-sample loss and returns the (N, rest) view shape.
Shape per_sample_shape(const Tensor& pred, const Tensor& target, const char* op, Reduction r) {
  check_pair(pred, target, op, true, r);
  if (pred.dim() == 0) throw Error(op, "expected a batch dim (dim 0), got a 0-d tensor");
  if (pred.numel() == 0) throw Error(op, "empty input of shape " + shape_str(pred.shape()));
  const std::int64_t n = pred.size(0);
  return {n, pred.numel() / n};
}

}  // namespace

Tensor lp_loss(const Tensor& pred, const Tensor& target, double p, Reduction reduction) {
  const char* op = "lp_loss";
  Shape s = per_sample_shape(pred, target, op, reduction);
  check_p(p, op);
  return detail::composite(op, {pred, target},
                           [&] { return reduce(norm((pred - target).reshape(s), p, {1}), reduction, op); });
}

Tensor relative_lp_loss(const Tensor& pred, const Tensor& target, double p, Reduction reduction) {
  const char* op = "relative_lp_loss";
  Shape s = per_sample_shape(pred, target, op, reduction);
  check_p(p, op);
  return detail::composite(op, {pred, target}, [&] {
    Tensor num = norm((pred - target).reshape(s), p, {1});
    Tensor den = norm(target.reshape(s), p, {1});
    return reduce(num / den, reduction, op);
  });
}

Tensor h1_loss(const Tensor& pred, const Tensor& target, std::int64_t spatial_dims,
               const std::vector<double>& domain_lengths, bool relative, Reduction reduction) {
  const char* op = "h1_loss";
  check_pair(pred, target, op, true, reduction);
  const std::int64_t nd = pred.dim();
  if (spatial_dims < 1 || nd < spatial_dims + 1)
    throw Error(op, "expected a batch dim and " + std::to_string(spatial_dims) +
                        " spatial dims (spatial_dims >= 1), got input of shape " + shape_str(pred.shape()));
  if (pred.numel() == 0) throw Error(op, "empty input of shape " + shape_str(pred.shape()));
  const std::size_t d = static_cast<std::size_t>(spatial_dims);
  std::vector<double> L(d, 1.0);
  if (domain_lengths.size() == 1) L.assign(d, domain_lengths[0]);
  else if (domain_lengths.size() == d) L = domain_lengths;
  else if (!domain_lengths.empty())
    throw Error(op, "expected 0, 1 or " + std::to_string(d) + " domain lengths, got " +
                        std::to_string(domain_lengths.size()));
  for (double l : L)
    if (!(l > 0) || std::isinf(l)) throw Error(op, "domain lengths must be finite and > 0, got " + std::to_string(l));

  const bool cplx = pred.is_complex() || target.is_complex();
  // Spectral shape over the spatial dims (the last one halved for real input) and the weights
  // sqrt(V * mult * (1 + |k|^2)), mult = 2 for interior rfft bins of the last dim.
  Shape ss(d);
  for (std::size_t i = 0; i < d; ++i) ss[i] = pred.size(static_cast<std::int64_t>(nd - spatial_dims + i));
  const std::int64_t n_last = ss[d - 1];
  if (!cplx) ss[d - 1] = n_last / 2 + 1;
  double vol = 1;
  for (double l : L) vol *= l;
  std::int64_t total = 1;
  for (auto s : ss) total *= s;
  const Dtype rdt = to_real(promote_types(pred.dtype(), target.dtype()));
  // the weights depend only on these: made once per device off the host CPU (Note [device constants])
  const Shape spatial(pred.shape().end() - spatial_dims, pred.shape().end());
  const auto key = std::make_tuple(cplx, rdt, spatial, detail::key_bits(L));
  const Tensor wt = detail::device_constant(pred.device(), "h1 weights", key, [&] {
    std::vector<double> w(static_cast<std::size_t>(total));
    const double two_pi = 2 * std::numbers::pi;
    for (std::int64_t flat = 0; flat < total; ++flat) {
      std::int64_t rem = flat;
      double k2 = 0, mult = 1;
      for (std::size_t i = d; i-- > 0;) {
        const std::int64_t idx = rem % ss[i];
        rem /= ss[i];
        const std::int64_t n = pred.size(static_cast<std::int64_t>(nd - spatial_dims + i));
        std::int64_t m = idx;
        if (cplx || i + 1 < d) m = idx <= (n - 1) / 2 ? idx : idx - n;  // fftfreq ordering
        else if (idx != 0 && !(n % 2 == 0 && idx == n / 2)) mult = 2;    // interior rfft bin
        const double k = two_pi * static_cast<double>(m) / L[i];
        k2 += k * k;
      }
      w[static_cast<std::size_t>(flat)] = std::sqrt(vol * mult * (1 + k2));
    }
    return from_vector(w, ss).to(rdt);
  });

  std::vector<std::int64_t> fdims(d);
  for (std::size_t i = 0; i < d; ++i) fdims[i] = static_cast<std::int64_t>(i) - spatial_dims;
  Shape sample_dims;
  for (std::int64_t i = 1; i < nd; ++i) sample_dims.push_back(i);

  return detail::composite(op, {pred, target}, [&] {
    auto h1 = [&](const Tensor& u) {
      Tensor c = cplx ? fft::fftn(u, std::nullopt, fdims, fft::Norm::forward)
                      : fft::rfftn(u, std::nullopt, fdims, fft::Norm::forward);
      return norm(c * wt, 2, sample_dims);
    };
    Tensor l = h1(pred - target);
    if (relative) l = l / h1(target);
    return reduce(l, reduction, op);
  });
}

// ---- probabilistic losses ----------------------------------------------------------------------------
namespace {

/// Defined and real floating.
void check_real(const Tensor& t, const char* what, const char* op) {
  check_defined(t, what, op);
  if (!is_floating(t.dtype()))
    throw Error(op, std::string("expected a real floating ") + what + ", got " + dtype_name(t.dtype()));
}

/// An optional weight (real floating) that broadcasts to `shape` without growing it.
void check_weight_to(const Tensor& w, const Shape& shape, const char* what, const char* op) {
  if (!w.defined()) return;
  if (!is_floating(w.dtype()))
    throw Error(op, std::string(what) + " must be real floating, got " + dtype_name(w.dtype()));
  bool ok = w.dim() <= static_cast<std::int64_t>(shape.size());
  for (std::int64_t i = 1; ok && i <= w.dim(); ++i) {
    const std::int64_t a = w.size(-i), b = shape[shape.size() - static_cast<std::size_t>(i)];
    ok = a == b || a == 1;
  }
  if (!ok)
    throw Error(op, std::string(what) + " of shape " + shape_str(w.shape()) + " does not broadcast to the input's shape " +
                        shape_str(shape));
}

/// The defined ones of an op's tensor arguments (what the profiler sees).
std::vector<Tensor> defined_of(std::initializer_list<Tensor> ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts)
    if (t.defined()) out.push_back(t);
  return out;
}

/// log(1 + e^x) without overflow, with the exact derivative sigmoid(x) everywhere.
Tensor softplus0(const Tensor& x) { return logaddexp(x, zeros({}, x.dtype(), x.device())); }

/// log(x) clamped at -100 (torch's binary cross entropy), with derivative 0 where clamped (also at x = 0).
Tensor clamped_log(const Tensor& x) {
  const Tensor pos = x > Scalar(0.0);
  return where(pos, log(where(pos, x, Scalar(1.0))).clamp_min(-100.0), Scalar(-100.0));
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  const char* op = "binary_cross_entropy";
  check_pair(input, target, op, false, reduction);
  check_weight_to(weight, input.shape(), "weight", op);
  if (input.numel() > 0) {
    const Tensor x = input.detach();
    const Tensor bad = logical_not((x >= Scalar(0.0)) & (x <= Scalar(1.0)));
    // a failure found later (deferred device checks) leaves NaN in the loss: harmless
    ::phasor::detail::check_device_value(
        op, bad.any(), [&] { return std::pair{::phasor::detail::first_where(x, bad), Tensor()}; },
        [](double v, double) { return "all elements of input should be between 0 and 1, got " + std::to_string(v); });
  }
  return detail::composite(op, defined_of({input, target, weight}), [&] {
    Tensor l = -(target * clamped_log(input) + (1.0 - target) * clamped_log(1.0 - input));
    if (weight.defined()) l = l * weight;
    return reduce(l, reduction, op);
  });
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        Reduction reduction, const Tensor& pos_weight) {
  const char* op = "binary_cross_entropy_with_logits";
  check_pair(input, target, op, false, reduction);
  check_weight_to(weight, input.shape(), "weight", op);
  check_weight_to(pos_weight, input.shape(), "pos_weight", op);
  return detail::composite(op, defined_of({input, target, weight, pos_weight}), [&] {
    // (1 - t) x + (1 + (pw - 1) t) softplus(-x) = (1 - t) softplus(x) + pw t softplus(-x): no cancellation
    Tensor pt = pos_weight.defined() ? pos_weight * target : target;
    Tensor l = (1.0 - target) * softplus0(input) + pt * softplus0(-input);
    if (weight.defined()) l = l * weight;
    return reduce(l, reduction, op);
  });
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  const char* op = "kl_div";
  check_pair(input, target, op, false, reduction == Reduction::batchmean ? Reduction::sum : reduction);
  return detail::composite(op, {input, target}, [&] {
    Tensor l = log_target ? target.exp() * (target - input) : xlogy(target, target) - target * input;
    if (reduction != Reduction::batchmean) return reduce(l, reduction, op);
    return input.dim() == 0 ? l.sum() : l.sum() / static_cast<double>(input.size(0));
  });
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        Reduction reduction) {
  const char* op = "poisson_nll_loss";
  check_pair(input, target, op, false, reduction);
  if (!(eps >= 0)) throw Error(op, "eps must be >= 0, got " + std::to_string(eps));
  return detail::composite(op, {input, target}, [&] {
    Tensor l = log_input ? input.exp() - target * input : input - target * (input + eps).log();
    if (full) {
      // Stirling's approximation of log(t!) where t > 1 (0 elsewhere); the masked entries read t = 2, so
      // neither value nor gradient meets log(0)
      const Tensor big = target > Scalar(1.0);
      const Tensor t = where(big, target, Scalar(2.0));
      const Tensor st = t * t.log() - t + 0.5 * (t * (2 * std::numbers::pi)).log();
      l = l + where(big, st, Scalar(0.0));
    }
    return reduce(l, reduction, op);
  });
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         Reduction reduction) {
  const char* op = "gaussian_nll_loss";
  check_pair(input, target, op, false, reduction);
  check_real(var, "var", op);
  if (!(eps >= 0)) throw Error(op, "eps must be >= 0, got " + std::to_string(eps));
  const Shape& is = input.shape();
  Tensor v = var;
  if (var.shape() != is) {
    const Shape lead(is.begin(), is.end() - (is.empty() ? 0 : 1));
    if (!is.empty() && var.shape() == lead) {
      v = var.unsqueeze(-1);  // homoscedastic: one variance per sample
    } else if (!is.empty() && var.dim() == input.dim() && var.size(-1) == 1 &&
               Shape(var.shape().begin(), var.shape().end() - 1) == lead) {
      // homoscedastic with the last dim kept
    } else {
      throw Error(op, "var of shape " + shape_str(var.shape()) + " does not fit input of shape " + shape_str(is) +
                          ": expected the input's shape, or it without its last dim, or with a last dim of 1");
    }
  }
  if (var.numel() > 0) {
    const Tensor vd = var.detach();
    const Tensor bad = vd < Scalar(0.0);
    ::phasor::detail::check_device_value(
        op, bad.any(), [&] { return std::pair{::phasor::detail::first_where(vd, bad), Tensor()}; },
        [](double x, double) { return "var has negative entries, e.g. " + std::to_string(x); });
  }
  return detail::composite(op, {input, target, var}, [&] {
    // clamp at eps with the gradient passed through (torch clamps a clone in place under no_grad)
    const Tensor vc = where(v >= Scalar(eps), v, (v - v.detach()) + eps);
    Tensor l = 0.5 * (vc.log() + (input - target).square() / vc);
    if (full) l = l + 0.5 * std::log(2 * std::numbers::pi);
    return reduce(l, reduction, op);
  });
}

// ---- margin and embedding losses -----------------------------------------------------------------------

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  const char* op = "cosine_embedding_loss";
  check_real(input1, "input1", op);
  check_real(input2, "input2", op);
  check_defined(target, "target", op);
  check_reduction(reduction, op);
  if (target.is_complex() || target.dtype() == Dtype::Bool)
    throw Error(op, std::string("expected a real target of +-1, got ") + dtype_name(target.dtype()));
  if (input1.shape() != input2.shape())
    throw Error(op, "input1 shape " + shape_str(input1.shape()) + " and input2 shape " + shape_str(input2.shape()) +
                        " differ");
  if (target.dim() > 1 || input1.dim() != target.dim() + 1 ||
      (target.dim() == 1 && target.size(0) != input1.size(0)))
    throw Error(op, "expected inputs (N, D) with target (N), or inputs (D) with a 0-d target; got inputs " +
                        shape_str(input1.shape()) + " and target " + shape_str(target.shape()));
  return detail::composite(op, {input1, input2, target}, [&] {
    constexpr double kEps = 1e-12;  // torch's guard on the squared norms
    const Tensor prod = (input1 * input2).sum({-1});
    const Tensor m1 = input1.square().sum({-1}) + kEps, m2 = input2.square().sum({-1}) + kEps;
    const Tensor cos = prod / (m1 * m2).sqrt();
    const Tensor zero = zeros({}, cos.dtype(), cos.device());
    Tensor l = where(target == Scalar(1), 1.0 - cos, zero) + where(target == Scalar(-1), (cos - margin).clamp_min(0.0), zero);
    return reduce(l, reduction, op);
  });
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  const char* op = "margin_ranking_loss";
  check_real(input1, "input1", op);
  check_real(input2, "input2", op);
  check_real(target, "target", op);
  check_reduction(reduction, op);
  if (input1.dim() != input2.dim() || input1.dim() != target.dim())
    throw Error(op, "all input tensors should have the same number of dims, got input1 " + shape_str(input1.shape()) +
                        ", input2 " + shape_str(input2.shape()) + " and target " + shape_str(target.shape()));
  broadcast_shapes({input1.shape(), input2.shape(), target.shape()}, op);
  return detail::composite(op, {input1, input2, target}, [&] {
    return reduce((margin - target * (input1 - input2)).clamp_min(0.0), reduction, op);
  });
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction reduction) {
  const char* op = "hinge_embedding_loss";
  check_real(input, "input", op);
  check_defined(target, "target", op);
  check_reduction(reduction, op);
  if (target.is_complex() || target.dtype() == Dtype::Bool)
    throw Error(op, std::string("expected a real target of +-1, got ") + dtype_name(target.dtype()));
  if (input.shape() != target.shape())
    throw Error(op, "input shape " + shape_str(input.shape()) + " and target shape " + shape_str(target.shape()) +
                        " differ (losses do not broadcast)");
  return detail::composite(op, {input, target}, [&] {
    const Tensor zero = zeros({}, input.dtype(), input.device());
    Tensor l = where(target != Scalar(1), (margin - input).clamp_min(0.0), zero) + where(target != Scalar(-1), input, zero);
    return reduce(l, reduction, op);
  });
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "soft_margin_loss";
  check_pair(input, target, op, false, reduction);
  return detail::composite(op, {input, target}, [&] { return reduce(softplus0(-(target * input)), reduction, op); });
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  const char* op = "multilabel_soft_margin_loss";
  check_pair(input, target, op, false, reduction);
  if (input.dim() == 0) throw Error(op, "expected an input of shape (C) or (N, C), got a 0-d tensor");
  check_weight_to(weight, input.shape(), "weight", op);
  return detail::composite(op, defined_of({input, target, weight}), [&] {
    // -(t log sigmoid(x) + (1 - t) log sigmoid(-x)) = t softplus(-x) + (1 - t) softplus(x)
    Tensor l = target * softplus0(-input) + (1.0 - target) * softplus0(input);
    if (weight.defined()) l = l * weight;
    const double C = static_cast<double>(input.size(-1));
    return reduce(l.sum({-1}) / C, reduction, op);
  });
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, std::int64_t p, double margin,
                         const Tensor& weight, Reduction reduction) {
  const char* op = "multi_margin_loss";
  check_real(input, "input", op);
  check_defined(target, "target", op);
  check_reduction(reduction, op);
  if (p != 1 && p != 2) throw Error(op, "only p = 1 and p = 2 are supported, got " + std::to_string(p));
  if (input.dim() < 1 || input.dim() > 2 || input.size(-1) == 0)
    throw Error(op, "expected a non-empty input of shape (C) or (N, C), got " + shape_str(input.shape()));
  if (target.dtype() != int64)
    throw Error(op, std::string("expected int64 class indices as target, got ") + dtype_name(target.dtype()));
  const Shape ts = input.dim() == 2 ? Shape{input.size(0)} : Shape{};
  if (target.shape() != ts)
    throw Error(op, "input of shape " + shape_str(input.shape()) + " needs a target of shape " + shape_str(ts) +
                        ", got " + shape_str(target.shape()));
  const std::int64_t C = input.size(-1);
  if (weight.defined() && (weight.dim() != 1 || weight.size(0) != C || !is_floating(weight.dtype())))
    throw Error(op, "weight must be real floating of shape (" + std::to_string(C) + ",), got " +
                        shape_str(weight.shape()) + " " + dtype_name(weight.dtype()));
  Tensor t = (target.device() == input.device() ? target.detach() : target.detach().to(input.device())).reshape({-1});
  if (::phasor::detail::check_index_values(t, 0, C, "for " + std::to_string(C) + " classes", op, "target"))
    t = t.clamp(0, C - 1);  // a failure reported later must not read out of range meanwhile
  return detail::composite(op, defined_of({input, target, weight}), [&] {
    const Tensor x = input.reshape({-1, C});
    const Tensor picked = ::phasor::detail::gather_trusted(x, 1, t.unsqueeze(1));  // (N, 1)
    Tensor z = (margin - picked + x).clamp_min(0.0);
    if (p == 2) z = z.square();
    if (weight.defined())
      z = z * ::phasor::detail::index_select_trusted(weight.to(input.dtype()), 0, t).unsqueeze(1);
    const Tensor other = arange(C, int64, input.device()).unsqueeze(0) != t.unsqueeze(1);
    const Tensor l = where(other, z, zeros({}, z.dtype(), z.device())).sum({1}) / static_cast<double>(C);
    return reduce(l.reshape(ts), reduction, op);
  });
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction reduction) {
  const char* op = "triplet_margin_loss";
  check_real(anchor, "anchor", op);
  check_real(positive, "positive", op);
  check_real(negative, "negative", op);
  check_reduction(reduction, op);
  if (anchor.dim() != positive.dim() || anchor.dim() != negative.dim())
    throw Error(op, "the anchor, positive and negative tensors must have the same number of dims, got " +
                        shape_str(anchor.shape()) + ", " + shape_str(positive.shape()) + " and " +
                        shape_str(negative.shape()));
  if (!(p >= 0)) throw Error(op, "p must be >= 0, got " + std::to_string(p));
  broadcast_shapes({anchor.shape(), positive.shape(), negative.shape()}, op);
  return detail::composite(op, {anchor, positive, negative}, [&] {
    const Tensor dp = pairwise_distance(anchor, positive, p, eps);
    Tensor dn = pairwise_distance(anchor, negative, p, eps);
    if (swap) dn = minimum(dn, pairwise_distance(positive, negative, p, eps));
    return reduce((margin + dp - dn).clamp_min(0.0), reduction, op);
  });
}

// ---- distances ---------------------------------------------------------------------------------------------

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, std::int64_t dim, double eps) {
  const char* op = "cosine_similarity";
  check_real(x1, "x1", op);
  check_real(x2, "x2", op);
  if (!(eps >= 0)) throw Error(op, "eps must be >= 0, got " + std::to_string(eps));
  const Shape s = broadcast_shapes({x1.shape(), x2.shape()}, op);
  const std::int64_t d = detail::wrap_dim(dim, static_cast<std::int64_t>(s.size()), op);
  return detail::composite(op, {x1, x2}, [&] {
    const Tensor a = x1.shape() == s ? x1 : x1.broadcast_to(s), b = x2.shape() == s ? x2 : x2.broadcast_to(s);
    // each input divided by its (clamped) norm first: no overflow of the product of the norms
    const Tensor na = norm(a, 2, {d}, true).clamp_min(eps), nb = norm(b, 2, {d}, true).clamp_min(eps);
    return ((a / na) * (b / nb)).sum({d});
  });
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const char* op = "pairwise_distance";
  check_real(x1, "x1", op);
  check_real(x2, "x2", op);
  if (!(p >= 0)) throw Error(op, "p must be >= 0, got " + std::to_string(p));
  const Shape s = broadcast_shapes({x1.shape(), x2.shape()}, op);
  return detail::composite(op, {x1, x2}, [&] {
    const Tensor diff = x1 - x2 + eps;
    if (s.empty()) return norm(diff, p);
    return norm(diff, p, {-1}, keepdim);
  });
}

Tensor pdist(const Tensor& x, double p) {
  const char* op = "pdist";
  check_real(x, "input", op);
  if (x.dim() != 2) throw Error(op, "expected a 2-D input (N, M), got " + shape_str(x.shape()));
  if (!(p >= 0)) throw Error(op, "p must be >= 0, got " + std::to_string(p));
  const std::int64_t n = x.size(0);
  const Tensor ij = triu_indices(n, n, 1, x.device());  // (2, n (n - 1) / 2), row-major: torch's order
  return detail::composite(op, {x}, [&] {
    const Tensor a = ::phasor::detail::index_select_trusted(x, 0, ij.select(0, 0));
    const Tensor b = ::phasor::detail::index_select_trusted(x, 0, ij.select(0, 1));
    return norm(a - b, p, {1});
  });
}

}  // namespace functional
}  // namespace phasor::nn
