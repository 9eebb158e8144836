// src/nn/optim/scheduler.cpp - learning-rate schedulers (torch.optim.lr_scheduler semantics).
//
// StepLR and CosineAnnealingLR use torch's chainable (recursive) forms, which update the current
// learning rate rather than recomputing it from base_lr, so they compose with other changes to lr
// exactly as in PyTorch; their values equal the closed forms when nothing else touches lr.
#include "phasor/optim/scheduler.hpp"

#include <cmath>
#include <limits>

#include "nn/optim/optim_util.hpp"

namespace phasor::optim {

using detail::fmt;

namespace {
constexpr double kPi = 3.14159265358979323846;

std::vector<double> group_lrs(const Optimizer& opt) {
  std::vector<double> out;
  for (const auto& g : opt.param_groups()) out.push_back(g.lr());
  return out;
}

void set_group_lrs(Optimizer& opt, const std::vector<double>& lrs) {
  auto& groups = opt.param_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) groups[i].set_lr(lrs[i]);
}

/// Python's a % m for m > 0 (never negative).
std::int64_t py_mod(std::int64_t a, std::int64_t m) { return ((a % m) + m) % m; }
}  // namespace

// ---- LRScheduler -----------------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer, std::string name)
    : optimizer_(optimizer), name_(std::move(name)), base_lrs_(group_lrs(optimizer)), last_lr_(base_lrs_) {}

void LRScheduler::step() {
  ++last_epoch_;
  std::vector<double> lrs;
  try {
    lrs = get_lr();
  } catch (...) {
    --last_epoch_;
    throw;
  }
  if (lrs.size() != optimizer_.param_groups().size())
    throw Error(name_, "the optimizer has " + std::to_string(optimizer_.param_groups().size()) +
                           " parameter group(s), but the scheduler was made for " + std::to_string(lrs.size()));
  set_group_lrs(optimizer_, lrs);
  last_lr_ = lrs;
}

StateDict LRScheduler::state_dict() const {
  StateDict out;
  detail::put_scalar(out, "last_epoch", static_cast<double>(last_epoch_));
  out["base_lrs"] = from_vector(base_lrs_);
  out["last_lr"] = from_vector(last_lr_);
  return out;
}

void LRScheduler::load_state_dict(const StateDict& sd) {
  std::vector<std::string> problems;
  const auto G = static_cast<std::int64_t>(base_lrs_.size());
  std::int64_t epoch = 0;
  std::vector<double> base, last;
  detail::get_int(sd, "last_epoch", epoch, problems);
  detail::get_vector(sd, "base_lrs", G, base, problems);
  detail::get_vector(sd, "last_lr", G, last, problems);
  for (const auto& kv : sd)
    if (kv.first != "last_epoch" && kv.first != "base_lrs" && kv.first != "last_lr")
      problems.push_back("unexpected key '" + kv.first + "'");
  if (!problems.empty())
    throw Error(name_, "load_state_dict: " + std::to_string(problems.size()) + " problem(s): " + detail::join(problems));
  last_epoch_ = epoch;
  base_lrs_ = base;
  last_lr_ = last;
}

// ---- StepLR ----------------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer, "optim.StepLR"), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1) throw Error(name_, "step_size must be >= 1, got " + std::to_string(step_size));
  if (!(gamma >= 0)) throw Error(name_, "gamma must be >= 0, got " + fmt(gamma));
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = group_lrs(optimizer_);
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

// ---- CosineAnnealingLR -----------------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer, "optim.CosineAnnealingLR"), T_max_(T_max), eta_min_(eta_min) {
  if (T_max < 1) throw Error(name_, "T_max must be >= 1, got " + std::to_string(T_max));
  if (!(eta_min >= 0)) throw Error(name_, "eta_min must be >= 0, got " + fmt(eta_min));
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = group_lrs(optimizer_);
  if (last_epoch_ == 0) return lrs;
  const double T = static_cast<double>(T_max_), e = static_cast<double>(last_epoch_);
  for (std::size_t i = 0; i < lrs.size(); ++i) {
    if (py_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0)
      lrs[i] += (base_lrs_[i] - eta_min_) * (1 - std::cos(kPi / T)) / 2;
    else
      lrs[i] = (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lrs[i] - eta_min_) + eta_min_;
  }
  return lrs;
}

// ---- OneCycleLR ------------------------------------------------------------------------------------

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start,
                       const std::string& anneal_strategy, bool cycle_momentum, double base_momentum,
                       double max_momentum, double div_factor, double final_div_factor, bool three_phase)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.param_groups().size(), max_lr), total_steps, pct_start,
                 anneal_strategy, cycle_momentum, base_momentum, max_momentum, div_factor, final_div_factor,
                 three_phase) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs, std::int64_t total_steps,
                       double pct_start, const std::string& anneal_strategy, bool cycle_momentum, double base_momentum,
                       double max_momentum, double div_factor, double final_div_factor, bool three_phase)
    : LRScheduler(optimizer, "optim.OneCycleLR"),
      total_steps_(total_steps),
      linear_(anneal_strategy == "linear"),
      cycle_momentum_(cycle_momentum),
      base_momentum_(base_momentum),
      max_momentum_(max_momentum) {
  const std::size_t G = optimizer.param_groups().size();
  if (total_steps < 1) throw Error(name_, "total_steps must be a positive integer, got " + std::to_string(total_steps));
  if (!(pct_start >= 0 && pct_start <= 1)) throw Error(name_, "pct_start must be in [0, 1], got " + fmt(pct_start));
  if (anneal_strategy != "cos" && anneal_strategy != "linear")
    throw Error(name_, "anneal_strategy must be \"cos\" or \"linear\", got \"" + anneal_strategy + "\"");
  if (max_lrs.size() != G)
    throw Error(name_, "expected " + std::to_string(G) + " max_lr value(s), one per parameter group, got " +
                           std::to_string(max_lrs.size()));
  for (double m : max_lrs)
    if (!(m >= 0)) throw Error(name_, "max_lr must be >= 0, got " + fmt(m));
  if (!(div_factor > 0)) throw Error(name_, "div_factor must be > 0, got " + fmt(div_factor));
  if (!(final_div_factor > 0)) throw Error(name_, "final_div_factor must be > 0, got " + fmt(final_div_factor));
  if (cycle_momentum) {
    const OptimizerOptions& o = optimizer.param_groups()[0].options();
    if (dynamic_cast<const AdamOptions*>(&o))
      use_beta1_ = true;
    else if (!dynamic_cast<const SGDOptions*>(&o))
      throw Error(name_, "optimizer must support momentum or beta1 with the cycle_momentum option enabled");
    if (!(base_momentum >= 0 && max_momentum < 1 && base_momentum <= max_momentum))
      throw Error(name_, "momenta must satisfy 0 <= base_momentum <= max_momentum < 1, got " + fmt(base_momentum) + " and " +
                             fmt(max_momentum));
  }
  const double T = static_cast<double>(total_steps);
  if (three_phase)
    phases_ = {{pct_start * T - 1, 0, 1, 1, 0}, {2 * pct_start * T - 2, 1, 0, 0, 1}, {T - 1, 0, 2, 1, 1}};
  else
    phases_ = {{pct_start * T - 1, 0, 1, 1, 0}, {T - 1, 1, 2, 0, 1}};
  for (std::size_t i = 0; i < G; ++i) {
    initial_lrs_.push_back(max_lrs[i] / div_factor);
    max_lrs_.push_back(max_lrs[i]);
    min_lrs_.push_back(initial_lrs_.back() / final_div_factor);
  }
  // The schedule starts from initial_lr (and max_momentum), whatever the groups held before.
  set_group_lrs(optimizer, initial_lrs_);
  base_lrs_ = initial_lrs_;
  if (cycle_momentum) {
    for (auto& g : optimizer.param_groups()) {
      if (use_beta1_) {
        auto& o = static_cast<AdamOptions&>(g.options());
        o.betas({max_momentum, std::get<1>(o.betas())});
      } else {
        static_cast<SGDOptions&>(g.options()).momentum(max_momentum);
      }
    }
  }
  initial_step();
}

std::vector<double> OneCycleLR::get_lr() {
  if (last_epoch_ > total_steps_)
    throw Error(name_, "tried to step " + std::to_string(last_epoch_) + " times; the specified number of total steps is " +
                           std::to_string(total_steps_));
  auto anneal = [&](double start, double end, double pct) {
    return linear_ ? (end - start) * pct + start : end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
  };
  const double step_num = static_cast<double>(last_epoch_);
  std::vector<double> lrs;
  auto& groups = optimizer_.param_groups();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const double lr_at[3] = {initial_lrs_[gi], max_lrs_[gi], min_lrs_[gi]};
    const double m_at[2] = {base_momentum_, max_momentum_};
    double start_step = 0, lr = 0, momentum = 0;
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (step_num <= ph.end_step || i + 1 == phases_.size()) {
        const double width = ph.end_step - start_step;
        const double pct = width != 0 ? (step_num - start_step) / width : 1.0;
        lr = anneal(lr_at[ph.lr_from], lr_at[ph.lr_to], pct);
        momentum = anneal(m_at[ph.m_from], m_at[ph.m_to], pct);
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) {
      if (use_beta1_) {
        auto& o = static_cast<AdamOptions&>(groups[gi].options());
        o.betas({momentum, std::get<1>(o.betas())});
      } else {
        static_cast<SGDOptions&>(groups[gi].options()).momentum(momentum);
      }
    }
  }
  return lrs;
}

// ---- ReduceLROnPlateau -----------------------------------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode, double factor, std::int64_t patience,
                                     double threshold, const std::string& threshold_mode, std::int64_t cooldown,
                                     std::vector<double> min_lr, double eps)
    : optimizer_(optimizer),
      mode_max_(mode == "max"),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_abs_(threshold_mode == "abs"),
      cooldown_(cooldown),
      min_lrs_(std::move(min_lr)),
      eps_(eps) {
  const char* op = "optim.ReduceLROnPlateau";
  const std::size_t G = optimizer.param_groups().size();
  if (mode != "min" && mode != "max") throw Error(op, "mode must be \"min\" or \"max\", got \"" + mode + "\"");
  if (threshold_mode != "rel" && threshold_mode != "abs")
    throw Error(op, "threshold_mode must be \"rel\" or \"abs\", got \"" + threshold_mode + "\"");
  if (!(factor < 1.0 && factor >= 0)) throw Error(op, "factor must be in [0, 1), got " + fmt(factor));
  if (patience < 0) throw Error(op, "patience must be >= 0, got " + std::to_string(patience));
  if (cooldown < 0) throw Error(op, "cooldown must be >= 0, got " + std::to_string(cooldown));
  if (!(threshold >= 0)) throw Error(op, "threshold must be >= 0, got " + fmt(threshold));
  if (min_lrs_.size() == 1) min_lrs_.assign(G, min_lrs_[0]);
  if (min_lrs_.size() != G)
    throw Error(op, "expected 1 or " + std::to_string(G) + " min_lr value(s), got " + std::to_string(min_lrs_.size()));
  best_ = mode_max_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  last_lr_ = group_lrs(optimizer);
}

bool ReduceLROnPlateau::is_better(double a) const {
  if (!mode_max_) return threshold_abs_ ? a < best_ - threshold_ : a < best_ * (1 - threshold_);
  return threshold_abs_ ? a > best_ + threshold_ : a > best_ * (threshold_ + 1);
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // ignore bad epochs in cooldown
  }
  if (num_bad_epochs_ > patience_) {
    auto& groups = optimizer_.param_groups();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].lr();
      const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
      if (old_lr - new_lr > eps_) groups[i].set_lr(new_lr);
    }
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  last_lr_ = group_lrs(optimizer_);
}

void ReduceLROnPlateau::step(const Tensor& metric) {
  if (!metric.defined() || metric.numel() != 1)
    throw Error("optim.ReduceLROnPlateau", "the metric must be a one-element tensor");
  step(metric.item<double>());
}

StateDict ReduceLROnPlateau::state_dict() const {
  StateDict out;
  detail::put_scalar(out, "best", best_);
  detail::put_scalar(out, "num_bad_epochs", static_cast<double>(num_bad_epochs_));
  detail::put_scalar(out, "cooldown_counter", static_cast<double>(cooldown_counter_));
  detail::put_scalar(out, "last_epoch", static_cast<double>(last_epoch_));
  out["last_lr"] = from_vector(last_lr_);
  return out;
}

void ReduceLROnPlateau::load_state_dict(const StateDict& sd) {
  std::vector<std::string> problems;
  double best = 0;
  std::int64_t bad = 0, cool = 0, epoch = 0;
  std::vector<double> last;
  detail::get_scalar(sd, "best", best, problems);
  detail::get_int(sd, "num_bad_epochs", bad, problems);
  detail::get_int(sd, "cooldown_counter", cool, problems);
  detail::get_int(sd, "last_epoch", epoch, problems);
  detail::get_vector(sd, "last_lr", static_cast<std::int64_t>(last_lr_.size()), last, problems);
  for (const auto& kv : sd)
    if (kv.first != "best" && kv.first != "num_bad_epochs" && kv.first != "cooldown_counter" &&
        kv.first != "last_epoch" && kv.first != "last_lr")
      problems.push_back("unexpected key '" + kv.first + "'");
  if (!problems.empty())
    throw Error("optim.ReduceLROnPlateau",
                "load_state_dict: " + std::to_string(problems.size()) + " problem(s): " + detail::join(problems));
  best_ = best;
  num_bad_epochs_ = bad;
  cooldown_counter_ = cool;
  last_epoch_ = epoch;
  last_lr_ = last;
}

}  // namespace phasor::optim
