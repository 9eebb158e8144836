// src/nn/optim/sgd_adam.cpp - SGD, Adam and AdamW (torch.optim semantics).
//
// Each step runs one fused loop per parameter over its contiguous real components (a complex
// parameter is its interleaved real and imaginary parts, PyTorch's view_as_real rule), updating the
// parameter and its state in place: no temporaries, no autograd, parallel over large parameters.
// A group's CUDA parameters are updated together, one multi-tensor launch per device and real type
// (src/cuda/optim.cu). Every gradient is checked before anything changes.
#include <cmath>
#include <type_traits>
#include <vector>

#include "cuda/graph.hpp"
#include "cuda/nn_ops.hpp"
#include "nn/optim/optim_util.hpp"
#include "nn/optim/update_rules.hpp"
#include "phasor/optim/optimizer.hpp"
#include "phasor/profiler.hpp"

namespace phasor::optim {

using detail::AdamCoeffs;
using detail::adam_update;
using detail::cast_coeffs;
using detail::fmt;
using detail::SgdCoeffs;
using detail::sgd_update;

namespace {

Tensor run_closure(const std::function<Tensor()>& closure) {
  if (!closure) return Tensor();
  EnableGradGuard eg;
  return closure();
}

/// Every group's gradients (undefined for a parameter without one), checked before any parameter
/// changes so that a bad gradient leaves the whole step undone.
std::vector<std::vector<Tensor>> checked_grads(const std::vector<ParamGroup>& groups, const std::string& op) {
  std::vector<std::vector<Tensor>> out;
  for (const auto& group : groups) {
    auto& gs = out.emplace_back();
    for (const auto& p : group.params()) gs.push_back(p.grad().defined() ? detail::grad_of(p, op) : Tensor());
  }
  return out;
}

/// Calls f(options, param) for every parameter with a gradient on a device the calling thread is capturing
/// a CUDA graph on (Note [CUDA graphs]): where a step checks what a capture cannot record, before any change.
template <class Options, class F>
void for_captured(const std::vector<ParamGroup>& groups, const std::vector<std::vector<Tensor>>& grads, F&& f) {
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (std::size_t pi = 0; pi < groups[gi].params().size(); ++pi) {
      const Tensor& p = groups[gi].params()[pi];
      if (grads[gi][pi].defined() && cuda::detail::capturing(p.device()))
        f(static_cast<const Options&>(groups[gi].options()), p);
    }
}

/// Writable parameters whose CUDA updates are queued for one multi-tensor launch per group (Note
/// [multi-tensor launch] in src/cuda/optim.cu): committed, with their state's versions bumped, after it.
struct Pending {
  std::vector<detail::Writable> params;
  std::vector<Tensor> state;
  void commit() {
    for (auto& w : params) w.commit();
    for (const Tensor& t : state) phasor::detail::bump_version(t);
    params.clear();
    state.clear();
  }
};

/// Throws unless lr and weight_decay are valid (shared by all first-order optimizers).
void check_lr_wd(const std::string& op, double lr, double weight_decay) {
  if (!(lr >= 0)) throw Error(op, "invalid learning rate: " + fmt(lr) + " (must be >= 0)");
  if (!(weight_decay >= 0)) throw Error(op, "invalid weight_decay value: " + fmt(weight_decay) + " (must be >= 0)");
}

/// Problems with one like-parameter state tensor (shape and real/complex kind must match the parameter).
void check_like(const Tensor& param, const StateDict& st, const std::string& prefix, const std::string& name,
                std::vector<std::string>& problems) {
  auto it = st.find(name);
  if (it == st.end()) {
    problems.push_back("missing key '" + prefix + name + "'");
    return;
  }
  const Tensor& t = it->second;
  if (!t.defined() || t.shape() != param.shape())
    problems.push_back("key '" + prefix + name + "' has shape " +
                       (t.defined() ? phasor::detail::shape_str(t.shape()) : std::string("(undefined)")) +
                       " but its parameter has shape " + phasor::detail::shape_str(param.shape()));
  else if (t.is_complex() != param.is_complex() || !is_floating_or_complex(t.dtype()))
    problems.push_back("key '" + prefix + name + "' has dtype " + dtype_name(t.dtype()) + " but its parameter has dtype " +
                       dtype_name(param.dtype()));
}

void check_step(const StateDict& st, const std::string& prefix, std::vector<std::string>& problems) {
  auto it = st.find("step");
  if (it == st.end()) {
    problems.push_back("missing key '" + prefix + "step'");
    return;
  }
  const Tensor& t = it->second;
  if (!t.defined() || t.dim() != 0 || t.is_complex() || !(t.item<double>() >= 0))
    problems.push_back("key '" + prefix + "step' should be a real 0-d tensor holding a count >= 0");
}

void reject_unknown(const StateDict& st, const std::string& prefix, std::initializer_list<const char*> known,
                    std::vector<std::string>& problems) {
  for (const auto& kv : st) {
    bool ok = false;
    for (const char* k : known) ok = ok || kv.first == k;
    if (!ok) problems.push_back("unexpected key '" + prefix + kv.first + "'");
  }
}

}  // namespace

// ---- SGD ------------------------------------------------------------------------------------------

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions defaults)
    : Optimizer("optim.SGD", std::make_unique<SGDOptions>(defaults)) {
  init_groups(std::move(groups));
}

void SGD::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const SGDOptions*>(&options);
  if (!o) throw Error(name_, "parameter group options must be SGDOptions");
  check_lr_wd(name_, o->lr(), o->weight_decay());
  if (!(o->momentum() >= 0)) throw Error(name_, "invalid momentum value: " + fmt(o->momentum()) + " (must be >= 0)");
  if (!std::isfinite(o->dampening())) throw Error(name_, "invalid dampening value: " + fmt(o->dampening()));
  if (o->nesterov() && (o->momentum() <= 0 || o->dampening() != 0))
    throw Error(name_, "nesterov momentum requires a momentum > 0 and zero dampening (got momentum " + fmt(o->momentum()) +
                           ", dampening " + fmt(o->dampening()) + ")");
}

void SGD::check_param_state(const Tensor& param, const OptimizerOptions&, const StateDict& state,
                            const std::string& prefix, std::vector<std::string>& problems) const {
  if (state.count("momentum_buffer")) check_like(param, state, prefix, "momentum_buffer", problems);
  reject_unknown(state, prefix, {"momentum_buffer"}, problems);
}

namespace {
/// Calls f(std::true_type{}) or f(std::false_type{}): turns a runtime flag into a template argument.
template <class F>
void with_bool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// The kernels take their flags as template arguments so that each inner loop is branch-free (the
// shared formulas of update_rules.hpp inline with constant flags); `sign` is -1 for maximize (exact).
// SGD's loops vectorize; Adam's would too, but for sqrt's errno branch (the build does not pass
// -fno-math-errno). CUDA parameters take the multi-tensor kernels of src/cuda/optim.cu (same formulas).
template <class R, bool kWd, bool kMomentum, bool kNesterov>
void sgd_kernel(R* p, const R* g, R* buf, std::int64_t n, bool first, const SgdCoeffs<double>& cd) {
  const SgdCoeffs<R> c = cast_coeffs<R>(cd);
  detail::parallel_for(n, [&](std::int64_t b, std::int64_t e) {
    if (kMomentum && first) {
      for (std::int64_t i = b; i < e; ++i) sgd_update(p[i], g[i], buf + i, c, kWd, kMomentum, kNesterov, true);
      return;
    }
    for (std::int64_t i = b; i < e; ++i)
      sgd_update(p[i], g[i], kMomentum ? buf + i : nullptr, c, kWd, kMomentum, kNesterov, false);
  });
}
}  // namespace

Tensor SGD::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  profiler::RecordScope scope(name_, ".step");  // the update, without the closure
  NoGradGuard ng;
  const auto grads = checked_grads(groups_, name_);
  for_captured<SGDOptions>(groups_, grads, [&](const SGDOptions& o, const Tensor& p) {
    if (o.momentum() != 0 && !state(p).count("momentum_buffer"))  // the first momentum step starts the buffer
      cuda::detail::refuse_in_capture(p.device(), name_.c_str(), "the first momentum step",
                                      "it starts the momentum buffer on the host; run one step before capturing");
  });
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    auto& group = groups_[gi];
    const auto& o = static_cast<const SGDOptions&>(group.options());
    std::vector<cuda::detail::SgdParam> on_gpu;
    Pending pending;
    for (std::size_t pi = 0; pi < group.params().size(); ++pi) {
      const Tensor& p = group.params()[pi];
      const Tensor& g = grads[gi][pi];
      if (!g.defined()) continue;
      detail::Writable w(p);
      Tensor buf;
      bool first = false;
      if (o.momentum() != 0) {
        StateDict& st = mutable_state(p);
        auto it = st.find("momentum_buffer");
        first = it == st.end();
        if (first) it = st.emplace("momentum_buffer", zeros(p.shape(), p.dtype(), p.device())).first;
        else detail::match_param(it->second, p, name_, "momentum_buffer");
        buf = it->second;
      }
      const std::int64_t n = detail::real_numel(p);
      const SgdCoeffs<double> c{o.lr(), o.weight_decay(), o.momentum(), o.dampening(), o.maximize() ? -1.0 : 1.0};
      if (p.device().is_cuda()) {
        on_gpu.push_back({w.work, g, buf, c, first});
        pending.params.push_back(std::move(w));
        if (buf.defined()) pending.state.push_back(buf);
        continue;
      }
      detail::visit_real(p.dtype(), [&](auto tag) {
        using R = decltype(tag);
        R* bp = buf.defined() ? detail::real_ptr<R>(buf) : nullptr;
        with_bool(o.weight_decay() != 0, [&](auto wd) {
          with_bool(bp != nullptr, [&](auto mom) {
            with_bool(o.nesterov(), [&](auto nest) {
              sgd_kernel<R, decltype(wd)::value, decltype(mom)::value, decltype(nest)::value>(
                  detail::real_ptr<R>(w.work), detail::real_ptr<R>(g), bp, n, first, c);
            });
          });
        });
      });
      w.commit();
      if (buf.defined()) phasor::detail::bump_version(buf);
    }
    if (!on_gpu.empty())
      cuda::detail::sgd_step(on_gpu, o.weight_decay() != 0, o.momentum() != 0, o.nesterov(),
                             [&](Device d) { return captured_lr(gi, d); });
    pending.commit();
  }
  return loss;
}

// ---- Adam / AdamW ---------------------------------------------------------------------------------

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults)
    : Optimizer("optim.Adam", std::make_unique<AdamOptions>(defaults)), decoupled_(false) {
  init_groups(std::move(groups));
}

Adam::Adam(std::string name, std::unique_ptr<OptimizerOptions> defaults, bool decoupled_weight_decay)
    : Optimizer(std::move(name), std::move(defaults)), decoupled_(decoupled_weight_decay) {}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions defaults)
    : Adam("optim.AdamW", std::make_unique<AdamWOptions>(defaults), true) {
  init_groups(std::move(groups));
}

void Adam::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const AdamOptions*>(&options);
  if (!o) throw Error(name_, "parameter group options must be AdamOptions");
  check_lr_wd(name_, o->lr(), o->weight_decay());
  if (!(o->eps() >= 0)) throw Error(name_, "invalid epsilon value: " + fmt(o->eps()) + " (must be >= 0)");
  const auto [b1, b2] = o->betas();
  if (!(b1 >= 0 && b1 < 1)) throw Error(name_, "invalid beta parameter at index 0: " + fmt(b1) + " (must be in [0, 1))");
  if (!(b2 >= 0 && b2 < 1)) throw Error(name_, "invalid beta parameter at index 1: " + fmt(b2) + " (must be in [0, 1))");
}

void AdamW::check_options(const OptimizerOptions& options) const {
  if (!dynamic_cast<const AdamWOptions*>(&options)) throw Error(name_, "parameter group options must be AdamWOptions");
  Adam::check_options(options);
}

void Adam::check_param_state(const Tensor& param, const OptimizerOptions& options, const StateDict& state,
                             const std::string& prefix, std::vector<std::string>& problems) const {
  const bool ams = static_cast<const AdamOptions&>(options).amsgrad();
  check_step(state, prefix, problems);
  check_like(param, state, prefix, "exp_avg", problems);
  check_like(param, state, prefix, "exp_avg_sq", problems);
  if (ams) {
    check_like(param, state, prefix, "max_exp_avg_sq", problems);
    reject_unknown(state, prefix, {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}, problems);
  } else {
    reject_unknown(state, prefix, {"step", "exp_avg", "exp_avg_sq"}, problems);
  }
}

namespace {
template <class R, bool kAms, bool kL2, bool kLerpLow>
void adam_kernel(R* p, const R* g, R* m, R* v, R* vmax, std::int64_t n, const AdamCoeffs<double>& cd) {
  const AdamCoeffs<R> c = cast_coeffs<R>(cd);
  detail::parallel_for(n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i)
      adam_update(p[i], g[i], m[i], v[i], kAms ? vmax + i : nullptr, c, kAms, kL2, kLerpLow);
  });
}
}  // namespace

Tensor Adam::step(std::function<Tensor()> closure) {
  Tensor loss = run_closure(closure);
  profiler::RecordScope scope(name_, ".step");  // the update, without the closure
  NoGradGuard ng;
  const auto grads = checked_grads(groups_, name_);
  for_captured<AdamOptions>(groups_, grads, [&](const AdamOptions& o, const Tensor& p) {
    if (!o.capturable())
      cuda::detail::refuse_in_capture(p.device(), name_.c_str(), "the step",
                                      "its bias corrections come from the host-side step count, which a replay "
                                      "would not advance; make it capturable (AdamOptions::capturable) or call "
                                      "step() after each replay");
    const StateDict& st = state(p);
    if (st.empty() || (o.amsgrad() && !st.count("max_exp_avg_sq")) || !st.at("step").device().is_cuda())
      cuda::detail::refuse_in_capture(p.device(), name_.c_str(), "the first (capturable) step",
                                      "it makes the optimizer state; run one step before capturing");
  });
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    auto& group = groups_[gi];
    const auto& o = static_cast<const AdamOptions&>(group.options());
    const auto [beta1, beta2] = o.betas();
    const bool l2 = !decoupled_ && o.weight_decay() != 0;
    std::vector<cuda::detail::AdamParam> on_gpu;
    Pending pending;
    for (std::size_t pi = 0; pi < group.params().size(); ++pi) {
      const Tensor& p = group.params()[pi];
      const Tensor& g = grads[gi][pi];
      if (!g.defined()) continue;
      StateDict& st = mutable_state(p);
      const bool on_device = o.capturable() && p.device().is_cuda();  // the step count lives with the parameter
      if (st.empty()) {
        st["step"] = zeros({}, float64, on_device ? p.device() : Device::cpu());
        st["exp_avg"] = zeros(p.shape(), p.dtype(), p.device());
        st["exp_avg_sq"] = zeros(p.shape(), p.dtype(), p.device());
      }
      if (o.amsgrad() && !st.count("max_exp_avg_sq")) st["max_exp_avg_sq"] = zeros(p.shape(), p.dtype(), p.device());
      for (const char* key : {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}) {  // loaded, or the parameter moved
        auto it = st.find(key);
        if (it != st.end()) detail::match_param(it->second, p, name_, key);
      }
      Tensor& step_t = st["step"];
      if (step_t.device() != (on_device ? p.device() : Device::cpu()))  // loaded, or capturable switched
        step_t = step_t.to(on_device ? p.device() : Device::cpu());
      AdamCoeffs<double> c{};
      c.w1 = 1 - beta1;
      c.b2 = beta2;
      c.one_m_b2 = 1 - beta2;
      c.wd = o.weight_decay();
      c.eps = o.eps();
      c.decay = decoupled_ ? 1 - o.lr() * o.weight_decay() : 1.0;  // 1 leaves p exact
      if (!on_device) {
        double& step = *step_t.data<double>();
        step += 1;
        set_bias_corrections(c, optim::detail::AdamBias{o.lr(), beta1, beta2}, step);
      }  // else the kernel increments the device count and makes the corrections from it
      c.sign = o.maximize() ? -1.0 : 1.0;
      Tensor m = st["exp_avg"], v = st["exp_avg_sq"];
      Tensor vmax = o.amsgrad() ? st["max_exp_avg_sq"] : Tensor();
      detail::Writable w(p);
      if (p.device().is_cuda()) {
        on_gpu.push_back({w.work, g, m, v, vmax, c, on_device ? step_t : Tensor()});
        pending.params.push_back(std::move(w));
        pending.state.insert(pending.state.end(), {st["step"], m, v});
        if (vmax.defined()) pending.state.push_back(vmax);
        continue;
      }
      detail::visit_real(p.dtype(), [&](auto tag) {
        using R = decltype(tag);
        const bool low = static_cast<R>(1 - beta1) < R(0.5);
        R* vm = vmax.defined() ? detail::real_ptr<R>(vmax) : nullptr;
        with_bool(vm != nullptr, [&](auto ams) {
          with_bool(l2, [&](auto l2c) {
            with_bool(low, [&](auto lowc) {
              adam_kernel<R, decltype(ams)::value, decltype(l2c)::value, decltype(lowc)::value>(
                  detail::real_ptr<R>(w.work), detail::real_ptr<R>(g), detail::real_ptr<R>(m), detail::real_ptr<R>(v), vm,
                  detail::real_numel(p), c);
            });
          });
        });
      });
      w.commit();
      for (const Tensor& t : {st["step"], m, v}) phasor::detail::bump_version(t);
      if (vmax.defined()) phasor::detail::bump_version(vmax);
    }
    if (!on_gpu.empty())
      cuda::detail::adam_step(on_gpu, o.amsgrad(), l2, optim::detail::AdamBias{o.lr(), beta1, beta2},
                              [&](Device d) { return captured_lr(gi, d); }, decoupled_ ? o.weight_decay() : 0.0);
    pending.commit();
  }
  return loss;
}

}  // namespace phasor::optim
