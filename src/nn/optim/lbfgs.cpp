// src/nn/optim/lbfgs.cpp - L-BFGS with an optional strong-Wolfe line search (torch.optim.LBFGS).
//
// Note [L-BFGS flat vectors]
// The algorithm works on one flat vector over all parameters' real components (complex parameters as
// interleaved (re, im) pairs, PyTorch's view_as_real rule), kept in float64 whatever the parameter
// dtype: directions, gradients and the (s, y) history. Parameters are moved in place along the
// direction in their own dtype. The control flow (first step min(1, 1/|g|_1) * lr, curvature pairs
// accepted when y.s > 1e-10, H0 = y.s / y.y, stopping rules, the bracketing and zoom phases of the
// line search with safeguarded cubic interpolation) follows torch.optim.LBFGS step for step, so a
// run reproduces PyTorch's iterates up to rounding.
//
// Note [L-BFGS on a GPU]
// The algorithm is written once: strong_wolfe and the iteration loop of step() (a generic lambda) are
// templates over the flat-vector type. On the CPU the flat vectors are std::vector<double> with the host loops below, unchanged, so
// CPU runs are bit-identical to the host-only implementation. When the parameters live on a CUDA
// device the flat vectors are 1-D float64 tensors on that device: gradients are gathered with tensor
// ops (complex as interleaved (re, im) via stack), dot products and norms are tensor reductions with one
// scalar readback each (the line search and the two-loop recursion branch on them), and the parameters
// move with in-place tensor ops. Between steps the device vectors (d, prev_flat_grad and the (y, s)
// history) stay on the device in the optimizer's per-parameter state of the first parameter, under the
// keys "lbfgs.*" (the class keeps host vectors for CPU runs and checkpoints); state_dict() copies them to
// the host, and load_state_dict() loads into the host vectors that the next step moves to the device.
// A test hook (detail::lbfgs_tensor_path_on_cpu) sends CPU parameters down the tensor path too, so
// CPU-only builds check it against the host path (tests/test_cuda_signal.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "nn/optim/optim_util.hpp"
#include "phasor/ops.hpp"
#include "phasor/optim/optimizer.hpp"
#include "phasor/profiler.hpp"

namespace phasor::optim {

using detail::fmt;
using Vec = std::vector<double>;

namespace {

// ---- flat-vector operations: host (std::vector<double>) and device (1-D float64 tensor) ----------------

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs(const Vec& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::fabs(v));
  return m;
}

double sum_abs(const Vec& a) {
  double s = 0;
  for (double v : a) s += std::fabs(v);
  return s;
}

double dot(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }
double max_abs(const Tensor& a) { return a.numel() == 0 ? 0.0 : a.abs().max().item<double>(); }
double sum_abs(const Tensor& a) { return a.abs().sum().item<double>(); }

/// Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
/// (default: the interval between x1 and x2); the bounds' midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  double lo, hi;
  if (bounds) {
    lo = bounds->first;
    hi = bounds->second;
  } else {
    lo = std::min(x1, x2);
    hi = std::max(x1, x2);
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2;
}

template <class V>
struct LineSearchResult {
  double f;
  V g;
  double t;
  std::int64_t evals;
};

/// Strong-Wolfe line search along d from loss f, gradient g, directional derivative gtd, first trial t.
/// obj(t, g_out) evaluates the loss at x + t d and writes its gradient into g_out.
template <class V, class Obj>
LineSearchResult<V> strong_wolfe(Obj&& obj, double t, const V& d, double f, const V& g, double gtd, double c1 = 1e-4,
                                 double c2 = 0.9, double tolerance_change = 1e-9, std::int64_t max_ls = 25) {
  const double d_norm = max_abs(d);
  V g_new;
  double f_new = obj(t, g_new);
  std::int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  V g_prev = g;
  bool done = false;
  std::int64_t ls_iter = 0;
  double bracket[2] = {0, 0}, bracket_f[2] = {0, 0}, bracket_gtd[2] = {0, 0};
  V bracket_g[2];
  int nb = 0;  // entries in the bracket (1 or 2)
  // The minimum lies between the previous and the new step: bracket both.
  auto bracket_prev_and_new = [&] {
    bracket[0] = t_prev, bracket[1] = t;
    bracket_f[0] = f_prev, bracket_f[1] = f_new;
    bracket_g[0] = g_prev, bracket_g[1] = g_new;
    bracket_gtd[0] = gtd_prev, bracket_gtd[1] = gtd_new;
    nb = 2;
  };
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket_prev_and_new();
      break;
    }
    if (std::fabs(gtd_new) <= -c2 * gtd) {
      bracket[0] = t, bracket_f[0] = f_new, bracket_g[0] = g_new;
      nb = 1;
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket_prev_and_new();
      break;
    }
    // Extrapolate: cubic step within [t + 0.01 (t - t_prev), 10 t].
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::make_pair(min_step, max_step));
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new;
    gtd_prev = gtd_new;
    f_new = obj(t, g_new);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) {
    bracket[0] = 0, bracket[1] = t;
    bracket_f[0] = f, bracket_f[1] = f_new;
    bracket_g[0] = g, bracket_g[1] = g_new;
    nb = 2;
  }
  // Zoom: shrink the bracket until a point satisfies the strong Wolfe conditions.
  bool insuf_progress = false;
  int low = 0, high = 1;
  if (nb == 2 && !(bracket_f[0] <= bracket_f[1])) low = 1, high = 0;
  if (nb == 1) low = high = 0;
  while (!done && ls_iter < max_ls) {
    if (std::fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Keep the trial away from the bracket's ends (at least 10% of its width) when progress stalls.
    const double bmax = std::max(bracket[0], bracket[1]), bmin = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::fabs(t - bmax) < std::fabs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    f_new = obj(t, g_new);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new, bracket_gtd[high] = gtd_new;
      if (bracket_f[0] <= bracket_f[1])
        low = 0, high = 1;
      else
        low = 1, high = 0;
    } else {
      if (std::fabs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low];
        bracket_g[high] = bracket_g[low], bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new, bracket_gtd[low] = gtd_new;
    }
  }
  return {bracket_f[low], std::move(bracket_g[low]), bracket[low], evals};
}

}  // namespace

namespace detail {
/// Test hook (not in a public header): when set, CPU parameters also take the tensor flat-vector path of
/// Note [L-BFGS on a GPU], so CPU-only builds test its logic against the host path.
bool& lbfgs_tensor_path_on_cpu() {
  static bool on = false;
  return on;
}
}  // namespace detail

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions options)
    : Optimizer("optim.LBFGS", std::make_unique<LBFGSOptions>(options)) {
  // one flat vector spans all parameters, so they share one device (Note [L-BFGS on a GPU])
  const Tensor* first = nullptr;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    if (!first)
      first = &p;
    else if (p.device() != first->device())
      throw Error(name_, "all parameters must live on one device, got " + first->device().str() + " and " +
                             p.device().str());
  }
  init_groups({ParamGroup(std::move(params))});
}

void LBFGS::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const LBFGSOptions*>(&options);
  if (!o) throw Error(name_, "parameter group options must be LBFGSOptions");
  if (!(o->lr() >= 0)) throw Error(name_, "invalid learning rate: " + fmt(o->lr()) + " (must be >= 0)");
  if (o->max_iter() < 1) throw Error(name_, "invalid max_iter: " + std::to_string(o->max_iter()) + " (must be >= 1)");
  if (o->max_eval() && *o->max_eval() < 1)
    throw Error(name_, "invalid max_eval: " + std::to_string(*o->max_eval()) + " (must be >= 1)");
  if (o->history_size() < 1)
    throw Error(name_, "invalid history_size: " + std::to_string(o->history_size()) + " (must be >= 1)");
  if (!(o->tolerance_grad() >= 0)) throw Error(name_, "invalid tolerance_grad: " + fmt(o->tolerance_grad()));
  if (!(o->tolerance_change() >= 0)) throw Error(name_, "invalid tolerance_change: " + fmt(o->tolerance_change()));
  if (o->line_search_fn() && *o->line_search_fn() != "strong_wolfe")
    throw Error(name_, "unknown line_search_fn '" + *o->line_search_fn() + "' (only \"strong_wolfe\" is supported)");
}

void LBFGS::add_param_group(const ParamGroup& group) {
  if (!groups_.empty()) throw Error(name_, "LBFGS doesn't support per-parameter options (parameter groups)");
  Optimizer::add_param_group(group);
}

std::int64_t LBFGS::flat_numel() const {
  std::int64_t n = 0;
  for (const auto& p : groups_[0].params()) n += detail::real_numel(p);
  return n;
}

namespace {

/// Copies every parameter's gradient (zeros where undefined) into the flat float64 vector.
void gather_flat_grad(const std::vector<Tensor>& params, Vec& out, std::int64_t n, const std::string& op) {
  out.assign(static_cast<std::size_t>(n), 0.0);
  std::size_t off = 0;
  for (const auto& p : params) {
    const auto k = static_cast<std::size_t>(detail::real_numel(p));
    if (p.grad().defined()) {
      Tensor g = detail::grad_of(p, op);
      detail::visit_real(p.dtype(), [&](auto tag) {
        using R = decltype(tag);
        const R* src = detail::real_ptr<R>(g);
        for (std::size_t i = 0; i < k; ++i) out[off + i] = static_cast<double>(src[i]);
      });
    }
    off += k;
  }
}

/// p += t * d (segment of d per parameter), in each parameter's own dtype.
void add_dir(const std::vector<Tensor>& params, double t, const Vec& d) {
  std::size_t off = 0;
  for (const auto& p : params) {
    const auto k = static_cast<std::size_t>(detail::real_numel(p));
    detail::Writable w(p);
    detail::visit_real(p.dtype(), [&](auto tag) {
      using R = decltype(tag);
      R* dst = detail::real_ptr<R>(w.work);
      const R tt = static_cast<R>(t);
      for (std::size_t i = 0; i < k; ++i) dst[i] += tt * static_cast<R>(d[off + i]);
    });
    w.commit();
    off += k;
  }
}

/// Copies saved values (contiguous clones) back into the parameters.
void set_params(const std::vector<Tensor>& params, const std::vector<Tensor>& saved) {
  for (std::size_t j = 0; j < params.size(); ++j) {
    detail::Writable w(params[j]);
    if (w.work.device().is_cpu())
      std::memcpy(w.work.data_ptr(), saved[j].data_ptr(), saved[j].nbytes());
    else
      w.work.detach().copy_(saved[j]);
    w.commit();
  }
}

/// d = -g.
Vec negated(const Vec& g) {
  Vec d(g.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = -g[i];
  return d;
}

/// Curvature pair from the last move: y = g - g_prev, s = t d.
void curvature_pair(const Vec& g, const Vec& g_prev, const Vec& d, double t, Vec& y, Vec& s) {
  y.resize(g.size());
  s.resize(g.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = g[i] - g_prev[i];
    s[i] = d[i] * t;
  }
}

/// Two-loop recursion: d = -H g with the (y, s) history and H0 = H_diag.
Vec two_loop(const Vec& g, const std::vector<Vec>& old_dirs, const std::vector<Vec>& old_stps, const Vec& ro,
             double H_diag) {
  const std::size_t k = old_dirs.size();
  Vec al(k);
  Vec q(g.size());
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = -g[i];
  for (std::size_t i = k; i-- > 0;) {
    al[i] = dot(old_stps[i], q) * ro[i];
    for (std::size_t j = 0; j < q.size(); ++j) q[j] -= al[i] * old_dirs[i][j];
  }
  for (std::size_t j = 0; j < q.size(); ++j) q[j] *= H_diag;
  for (std::size_t i = 0; i < k; ++i) {
    const double be_i = dot(old_dirs[i], q) * ro[i];
    for (std::size_t j = 0; j < q.size(); ++j) q[j] += (al[i] - be_i) * old_stps[i][j];
  }
  return q;
}

// ---- the device versions (Note [L-BFGS on a GPU]): 1-D float64 tensors on the parameters' device ----

/// The flat float64 gradient as a new tensor (never sharing a gradient's storage: closures zero them).
void gather_flat_grad(const std::vector<Tensor>& params, Tensor& out, std::int64_t n, const std::string& op) {
  const Device dev = params.at(0).device();
  std::vector<Tensor> parts;
  for (const auto& p : params) {
    const std::int64_t k = detail::real_numel(p);
    if (k == 0) continue;
    if (!p.grad().defined()) {
      parts.push_back(zeros({k}, float64, dev));
      continue;
    }
    const Tensor g = detail::grad_of(p, op);
    Tensor f = p.is_complex() ? stack({real(g), imag(g)}, -1).reshape({-1}) : g.reshape({-1});
    f = f.dtype() == float64 && !p.is_complex() ? f.clone() : f.to(float64);
    parts.push_back(f);
  }
  if (parts.empty())
    out = zeros({n}, float64, dev);
  else
    out = parts.size() == 1 ? parts[0] : cat(parts, 0);
}

/// p += t * d (segment of d per parameter), in each parameter's own dtype.
void add_dir(const std::vector<Tensor>& params, double t, const Tensor& d) {
  std::int64_t off = 0;
  for (const auto& p : params) {
    const std::int64_t k = detail::real_numel(p);
    if (k == 0) continue;
    const Tensor seg = d.narrow(0, off, k);
    Tensor upd;
    if (p.is_complex()) {
      const Tensor pairs = seg.reshape({k / 2, 2});
      upd = complex(pairs.select(1, 0), pairs.select(1, 1)).to(p.dtype());
    } else {
      upd = seg.to(p.dtype());
    }
    detail::Writable w(p);
    w.work.detach().add_(upd.reshape(p.shape()) * t);
    w.commit();
    off += k;
  }
}

Tensor negated(const Tensor& g) { return -g; }

void curvature_pair(const Tensor& g, const Tensor& g_prev, const Tensor& d, double t, Tensor& y, Tensor& s) {
  y = g - g_prev;
  s = d * t;
}

Tensor two_loop(const Tensor& g, const std::vector<Tensor>& old_dirs, const std::vector<Tensor>& old_stps,
                const Vec& ro, double H_diag) {
  const std::size_t k = old_dirs.size();
  Vec al(k);
  Tensor q = -g;
  for (std::size_t i = k; i-- > 0;) {
    al[i] = dot(old_stps[i], q) * ro[i];
    q = q - old_dirs[i] * al[i];
  }
  q = q * H_diag;
  for (std::size_t i = 0; i < k; ++i) {
    const double be_i = dot(old_dirs[i], q) * ro[i];
    q = q + old_stps[i] * (al[i] - be_i);
  }
  return q;
}

constexpr const char* kDevPrefix = "lbfgs.";

/// Drops the device copies of the flat vectors (keys "lbfgs.*" of the first parameter's state).
void erase_device_state(StateDict& st) {
  for (auto it = st.begin(); it != st.end();)
    it = it->first.compare(0, 6, kDevPrefix) == 0 ? st.erase(it) : std::next(it);
}

}  // namespace

Tensor LBFGS::step(std::function<Tensor()> closure) {
  if (!closure)
    throw Error(name_, "step() requires a closure that zeroes the gradients, computes the loss, calls backward and "
                       "returns the loss");
  profiler::RecordScope scope(name_, ".step");  // with the closure's evaluations
  const auto& o = static_cast<const LBFGSOptions&>(groups_[0].options());
  const double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  const std::int64_t max_iter = o.max_iter(), max_eval = o.max_eval().value_or(max_iter * 5 / 4);
  const auto history_size = static_cast<std::size_t>(o.history_size());
  const bool strong = o.line_search_fn().has_value();
  const std::vector<Tensor>& params = groups_[0].params();
  const std::int64_t n = flat_numel();

  auto evaluate = [&](Tensor* keep) -> double {
    Tensor l;
    {
      EnableGradGuard eg;
      l = closure();
    }
    if (!l.defined() || l.numel() != 1)
      throw Error(name_, "the closure must return a one-element loss tensor, got " +
                             (l.defined() ? "shape " + phasor::detail::shape_str(l.shape()) : std::string("an undefined tensor")));
    if (keep) *keep = l;
    return l.item<double>();
  };

  Tensor orig_loss;
  double loss = evaluate(&orig_loss);
  NoGradGuard ng;
  std::int64_t current_evals = 1;
  ++func_evals_;

  // The iterations, once for host vectors (Vec) and once for device tensors (Note [L-BFGS on a GPU]).
  auto run = [&](auto flat_grad, auto& d, auto& prev_flat_grad, auto& old_dirs, auto& old_stps) {
    using V = std::decay_t<decltype(flat_grad)>;
    gather_flat_grad(params, flat_grad, n, name_);
    bool opt_cond = max_abs(flat_grad) <= tolerance_grad;
    if (opt_cond) return;

    std::int64_t iter = 0;
    while (iter < max_iter) {
      ++iter;
      ++n_iter_;
      if (n_iter_ == 1) {
        d = negated(flat_grad);
        old_dirs.clear();
        old_stps.clear();
        ro_.clear();
        H_diag_ = 1;
      } else {
        V y, s;
        curvature_pair(flat_grad, prev_flat_grad, d, t_, y, s);
        const double ys = dot(y, s);
        if (ys > 1e-10) {
          if (old_dirs.size() == history_size) {
            old_dirs.erase(old_dirs.begin());
            old_stps.erase(old_stps.begin());
            ro_.erase(ro_.begin());
          }
          H_diag_ = ys / dot(y, y);
          old_dirs.push_back(std::move(y));
          old_stps.push_back(std::move(s));
          ro_.push_back(1.0 / ys);
        }
        d = two_loop(flat_grad, old_dirs, old_stps, ro_, H_diag_);
      }
      prev_flat_grad = flat_grad;
      const double prev_loss = loss;
      prev_loss_ = loss;
      have_dir_ = true;
      t_ = n_iter_ == 1 ? std::min(1.0, 1.0 / sum_abs(flat_grad)) * lr : lr;
      const double gtd = dot(flat_grad, d);
      if (gtd > -tolerance_change) break;  // not a descent direction

      std::int64_t ls_func_evals = 0;
      if (strong) {
        std::vector<Tensor> x_init;
        for (const auto& p : params) x_init.push_back(p.contiguous().clone());
        auto obj = [&](double t, V& g_out) {
          add_dir(params, t, d);
          const double f = evaluate(nullptr);
          gather_flat_grad(params, g_out, n, name_);
          set_params(params, x_init);
          return f;
        };
        LineSearchResult<V> r = strong_wolfe(obj, t_, d, loss, flat_grad, gtd);
        loss = r.f;
        flat_grad = std::move(r.g);
        t_ = r.t;
        ls_func_evals = r.evals;
        add_dir(params, t_, d);
        opt_cond = max_abs(flat_grad) <= tolerance_grad;
      } else {
        add_dir(params, t_, d);
        if (iter != max_iter) {
          loss = evaluate(nullptr);
          gather_flat_grad(params, flat_grad, n, name_);
          opt_cond = max_abs(flat_grad) <= tolerance_grad;
          ls_func_evals = 1;
        }
      }
      current_evals += ls_func_evals;
      func_evals_ += ls_func_evals;

      if (iter == max_iter) break;
      if (current_evals >= max_eval) break;
      if (opt_cond) break;
      if (max_abs(d) * std::fabs(t_) <= tolerance_change) break;
      if (std::fabs(loss - prev_loss) < tolerance_change) break;
    }
  };

  if (params.empty() || (params[0].device().is_cpu() && !detail::lbfgs_tensor_path_on_cpu())) {
    run(Vec{}, d_, prev_flat_grad_, old_dirs_, old_stps_);
    return orig_loss;
  }
  // Device run: the flat vectors come from the first parameter's state (or, after load_state_dict, from
  // the host vectors, moved once), and go back there.
  const Device dev = params[0].device();
  StateDict& st = mutable_state(params[0]);
  Tensor d, prev_flat_grad;
  std::vector<Tensor> old_dirs, old_stps;
  if (have_dir_) {
    if (st.count(std::string(kDevPrefix) + "d")) {
      d = st.at(std::string(kDevPrefix) + "d");
      prev_flat_grad = st.at(std::string(kDevPrefix) + "prev_flat_grad");
      for (std::size_t i = 0; i < ro_.size(); ++i) {
        old_dirs.push_back(st.at(std::string(kDevPrefix) + "y." + std::to_string(i)));
        old_stps.push_back(st.at(std::string(kDevPrefix) + "s." + std::to_string(i)));
      }
    } else {
      d = from_vector(d_).to(dev);
      prev_flat_grad = from_vector(prev_flat_grad_).to(dev);
      for (std::size_t i = 0; i < old_dirs_.size(); ++i) {
        old_dirs.push_back(from_vector(old_dirs_[i]).to(dev));
        old_stps.push_back(from_vector(old_stps_[i]).to(dev));
      }
    }
  }
  run(Tensor{}, d, prev_flat_grad, old_dirs, old_stps);
  erase_device_state(st);
  d_.clear();
  prev_flat_grad_.clear();
  old_dirs_.clear();
  old_stps_.clear();
  if (have_dir_) {
    st[std::string(kDevPrefix) + "d"] = d;
    st[std::string(kDevPrefix) + "prev_flat_grad"] = prev_flat_grad;
    for (std::size_t i = 0; i < old_dirs.size(); ++i) {
      st[std::string(kDevPrefix) + "y." + std::to_string(i)] = old_dirs[i];
      st[std::string(kDevPrefix) + "s." + std::to_string(i)] = old_stps[i];
    }
  }
  return orig_loss;
}

// ---- state_dict ------------------------------------------------------------------------------------

void LBFGS::save_state(StateDict& out) const {
  if (func_evals_ == 0 && n_iter_ == 0) return;
  detail::put_scalar(out, "state.0.func_evals", static_cast<double>(func_evals_));
  detail::put_scalar(out, "state.0.n_iter", static_cast<double>(n_iter_));
  if (!have_dir_) return;
  const auto k = static_cast<std::int64_t>(ro_.size());
  const std::vector<Tensor>& params = groups_[0].params();
  const StateDict* dev = params.empty() ? nullptr : &state(params[0]);
  if (dev && dev->count(std::string(kDevPrefix) + "d")) {  // device run: copy the vectors to the host
    const auto at = [&](const std::string& key) { return dev->at(kDevPrefix + key); };
    const Device cpu = Device::cpu();
    const auto host = [&](const Tensor& t) { return t.device().is_cpu() ? t.clone() : t.to(cpu); };  // never an alias
    out["state.0.d"] = host(at("d"));
    out["state.0.prev_flat_grad"] = host(at("prev_flat_grad"));
    detail::put_scalar(out, "state.0.t", t_);
    detail::put_scalar(out, "state.0.H_diag", H_diag_);
    detail::put_scalar(out, "state.0.prev_loss", prev_loss_);
    std::vector<Tensor> ys, ss;
    for (std::int64_t i = 0; i < k; ++i) {
      ys.push_back(at("y." + std::to_string(i)));
      ss.push_back(at("s." + std::to_string(i)));
    }
    const std::int64_t nn = at("d").numel();
    out["state.0.old_dirs"] = k ? stack(ys, 0).to(cpu) : zeros({0, nn}, float64);
    out["state.0.old_stps"] = k ? stack(ss, 0).to(cpu) : zeros({0, nn}, float64);
    out["state.0.ro"] = from_vector(ro_, Shape{k});
    return;
  }
  const auto n = static_cast<std::int64_t>(d_.size());
  out["state.0.d"] = from_vector(d_);
  out["state.0.prev_flat_grad"] = from_vector(prev_flat_grad_);
  detail::put_scalar(out, "state.0.t", t_);
  detail::put_scalar(out, "state.0.H_diag", H_diag_);
  detail::put_scalar(out, "state.0.prev_loss", prev_loss_);
  Vec dirs, stps;
  for (std::int64_t i = 0; i < k; ++i) {
    dirs.insert(dirs.end(), old_dirs_[i].begin(), old_dirs_[i].end());
    stps.insert(stps.end(), old_stps_[i].begin(), old_stps_[i].end());
  }
  out["state.0.old_dirs"] = from_vector(dirs, Shape{k, n});
  out["state.0.old_stps"] = from_vector(stps, Shape{k, n});
  out["state.0.ro"] = from_vector(ro_, Shape{k});
}

void LBFGS::check_state(const StateDict& in, const std::vector<const OptimizerOptions*>& options,
                        std::vector<std::string>& problems) const {
  const std::int64_t n = flat_numel();
  const auto& o = static_cast<const LBFGSOptions&>(*options.at(0));
  StateDict st;
  for (auto it = in.lower_bound("state."); it != in.end() && it->first.compare(0, 6, "state.") == 0; ++it) {
    if (it->first.compare(0, 8, "state.0.") != 0) {
      problems.push_back("unexpected key '" + it->first + "' (LBFGS keeps its state under state.0)");
      continue;
    }
    st[it->first.substr(8)] = it->second;
  }
  if (st.empty()) return;
  double v = 0;
  for (const char* key : {"func_evals", "n_iter"}) {
    std::int64_t i = 0;
    if (detail::get_int(st, key, i, problems) && i < 0)
      problems.push_back("key 'state.0." + std::string(key) + "' must be >= 0");
  }
  const bool full = st.count("d") > 0;
  std::vector<const char*> known = {"func_evals", "n_iter"};
  if (full) {
    known.insert(known.end(), {"d", "prev_flat_grad", "t", "H_diag", "prev_loss", "old_dirs", "old_stps", "ro"});
    for (const char* key : {"t", "H_diag", "prev_loss"}) detail::get_scalar(st, key, v, problems);
    std::vector<double> tmp;
    for (const char* key : {"d", "prev_flat_grad"}) detail::get_vector(st, key, n, tmp, problems);
    std::int64_t k = -1;
    auto ro = st.find("ro");
    if (ro == st.end())
      problems.push_back("missing key 'state.0.ro'");
    else if (!ro->second.defined() || ro->second.dim() != 1 || ro->second.is_complex())
      problems.push_back("key 'state.0.ro' should be a real 1-d tensor");
    else if ((k = ro->second.numel()) > o.history_size())
      problems.push_back("key 'state.0.ro' holds " + std::to_string(k) + " pairs, more than history_size " +
                         std::to_string(o.history_size()));
    for (const char* key : {"old_dirs", "old_stps"}) {
      auto it = st.find(key);
      if (it == st.end())
        problems.push_back("missing key 'state.0." + std::string(key) + "'");
      else if (!it->second.defined() || it->second.is_complex() || it->second.dim() != 2 || it->second.size(1) != n ||
               (k >= 0 && it->second.size(0) != k))
        problems.push_back("key 'state.0." + std::string(key) + "' should have shape (" +
                           (k >= 0 ? std::to_string(k) : std::string("k")) + ", " + std::to_string(n) + "), got " +
                           (it->second.defined() ? phasor::detail::shape_str(it->second.shape()) : std::string("undefined")));
    }
  }
  for (const auto& kv : st)
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return kv.first == k; }) == known.end())
      problems.push_back("unexpected key 'state.0." + kv.first + "'");
}

void LBFGS::load_state(const StateDict& in) {
  auto get = [&](const char* key) { return in.at(std::string("state.0.") + key); };
  if (!groups_[0].params().empty()) erase_device_state(mutable_state(groups_[0].params()[0]));
  func_evals_ = n_iter_ = 0;
  have_dir_ = false;
  d_.clear();
  prev_flat_grad_.clear();
  old_dirs_.clear();
  old_stps_.clear();
  ro_.clear();
  t_ = 0, H_diag_ = 1, prev_loss_ = 0;
  if (!in.count("state.0.func_evals")) return;
  func_evals_ = get("func_evals").item<std::int64_t>();
  n_iter_ = get("n_iter").item<std::int64_t>();
  if (!in.count("state.0.d")) return;
  have_dir_ = true;
  d_ = to_vector<double>(get("d"));
  prev_flat_grad_ = to_vector<double>(get("prev_flat_grad"));
  t_ = get("t").item<double>();
  H_diag_ = get("H_diag").item<double>();
  prev_loss_ = get("prev_loss").item<double>();
  ro_ = to_vector<double>(get("ro"));
  const Vec dirs = to_vector<double>(get("old_dirs")), stps = to_vector<double>(get("old_stps"));
  const std::size_t n = d_.size();
  for (std::size_t i = 0; i < ro_.size(); ++i) {
    old_dirs_.emplace_back(dirs.begin() + static_cast<std::ptrdiff_t>(i * n), dirs.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    old_stps_.emplace_back(stps.begin() + static_cast<std::ptrdiff_t>(i * n), stps.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
  }
}

}  // namespace phasor::optim
