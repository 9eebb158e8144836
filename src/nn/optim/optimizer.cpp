// src/nn/optim/optimizer.cpp - the Optimizer base (groups, zero_grad, state_dict) and the options'
// serialization.
//
// Note [optimizer state_dict]
// Everything is a tensor so that a checkpoint writer needs to know nothing about optimizers:
// hyperparameters are float64 0-d tensors (bools as 0/1, betas a 1-d pair), parameter membership is an
// int64 list per group, and per-parameter state lives under "state.<global index>.<name>". Loading
// first builds the new options and validates everything (collecting every problem), and only then
// swaps the new options and state in, so a bad dict leaves the optimizer untouched.
#include "phasor/optim/optimizer.hpp"

#include <cstring>
#include <set>

#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "nn/optim/optim_util.hpp"

namespace phasor::optim {

using detail::get_int;
using detail::get_scalar;
using detail::put_scalar;

// ---- options serialization ---------------------------------------------------------------------

void SGDOptions::save(StateDict& out, const std::string& prefix) const {
  put_scalar(out, prefix + "lr", lr_);
  put_scalar(out, prefix + "momentum", momentum_);
  put_scalar(out, prefix + "dampening", dampening_);
  put_scalar(out, prefix + "weight_decay", weight_decay_);
  put_scalar(out, prefix + "nesterov", nesterov_ ? 1.0 : 0.0);
  put_scalar(out, prefix + "maximize", maximize_ ? 1.0 : 0.0);
}

void SGDOptions::load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) {
  double v = 0;
  if (get_scalar(in, prefix + "lr", v, problems)) lr_ = v;
  if (get_scalar(in, prefix + "momentum", v, problems)) momentum_ = v;
  if (get_scalar(in, prefix + "dampening", v, problems)) dampening_ = v;
  if (get_scalar(in, prefix + "weight_decay", v, problems)) weight_decay_ = v;
  if (get_scalar(in, prefix + "nesterov", v, problems)) nesterov_ = v != 0;
  if (get_scalar(in, prefix + "maximize", v, problems)) maximize_ = v != 0;
}

void AdamOptions::save(StateDict& out, const std::string& prefix) const {
  put_scalar(out, prefix + "lr", lr_);
  out[prefix + "betas"] = from_vector(std::vector<double>{std::get<0>(betas_), std::get<1>(betas_)});
  put_scalar(out, prefix + "eps", eps_);
  put_scalar(out, prefix + "weight_decay", weight_decay_);
  put_scalar(out, prefix + "amsgrad", amsgrad_ ? 1.0 : 0.0);
  put_scalar(out, prefix + "maximize", maximize_ ? 1.0 : 0.0);
  put_scalar(out, prefix + "capturable", capturable_ ? 1.0 : 0.0);
}

void AdamOptions::load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) {
  double v = 0;
  std::vector<double> b;
  if (get_scalar(in, prefix + "lr", v, problems)) lr_ = v;
  if (detail::get_vector(in, prefix + "betas", 2, b, problems)) betas_ = {b[0], b[1]};
  if (get_scalar(in, prefix + "eps", v, problems)) eps_ = v;
  if (get_scalar(in, prefix + "weight_decay", v, problems)) weight_decay_ = v;
  if (get_scalar(in, prefix + "amsgrad", v, problems)) amsgrad_ = v != 0;
  if (get_scalar(in, prefix + "maximize", v, problems)) maximize_ = v != 0;
  capturable_ = false;
  if (in.count(prefix + "capturable") && get_scalar(in, prefix + "capturable", v, problems)) capturable_ = v != 0;
}

void LBFGSOptions::save(StateDict& out, const std::string& prefix) const {
  put_scalar(out, prefix + "lr", lr_);
  put_scalar(out, prefix + "max_iter", static_cast<double>(max_iter_));
  put_scalar(out, prefix + "max_eval", static_cast<double>(max_eval_ ? *max_eval_ : max_iter_ * 5 / 4));
  put_scalar(out, prefix + "tolerance_grad", tolerance_grad_);
  put_scalar(out, prefix + "tolerance_change", tolerance_change_);
  put_scalar(out, prefix + "history_size", static_cast<double>(history_size_));
  put_scalar(out, prefix + "line_search_fn", line_search_fn_ && *line_search_fn_ == "strong_wolfe" ? 1.0 : 0.0);
}

void LBFGSOptions::load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) {
  double v = 0;
  std::int64_t i = 0;
  if (get_scalar(in, prefix + "lr", v, problems)) lr_ = v;
  if (get_int(in, prefix + "max_iter", i, problems)) max_iter_ = i;
  if (get_int(in, prefix + "max_eval", i, problems)) max_eval_ = i;
  if (get_scalar(in, prefix + "tolerance_grad", v, problems)) tolerance_grad_ = v;
  if (get_scalar(in, prefix + "tolerance_change", v, problems)) tolerance_change_ = v;
  if (get_int(in, prefix + "history_size", i, problems)) history_size_ = i;
  if (get_scalar(in, prefix + "line_search_fn", v, problems)) {
    if (v == 1)
      line_search_fn_ = "strong_wolfe";
    else if (v == 0)
      line_search_fn_.reset();
    else
      problems.push_back("key '" + prefix + "line_search_fn' should be 0 (none) or 1 (strong_wolfe), got " + detail::fmt(v));
  }
}

// ---- ParamGroup -----------------------------------------------------------------------------------

ParamGroup::ParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

ParamGroup::ParamGroup(std::vector<Tensor> params, const OptimizerOptions& options)
    : params_(std::move(params)), options_(options.clone()) {}

ParamGroup::ParamGroup(const ParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

ParamGroup& ParamGroup::operator=(const ParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
  }
  return *this;
}

OptimizerOptions& ParamGroup::options() {
  if (!options_) throw Error("optim.ParamGroup", "this parameter group has no options");
  return *options_;
}

const OptimizerOptions& ParamGroup::options() const {
  if (!options_) throw Error("optim.ParamGroup", "this parameter group has no options");
  return *options_;
}

// ---- Optimizer ----------------------------------------------------------------------------------

Optimizer::Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {}

const void* Optimizer::captured_lr(std::size_t gi, Device device) const {
  if (!cuda::detail::capturing(device)) return nullptr;
  // the replays read the group's lr through this optimizer while it lives (it cannot move: not copyable or
  // movable), and keep the last rate they read after it is gone
  std::weak_ptr<const int> alive = alive_;
  double last = groups_.at(gi).lr();
  return cuda::detail::capture_host_values(device, 1, [alive, this, gi, last](std::uint64_t* w) mutable {
    if (const auto a = alive.lock())
      if (gi < groups_.size()) last = groups_[gi].lr();
    std::memcpy(w, &last, sizeof last);
  });
}

void Optimizer::init_groups(std::vector<ParamGroup> groups) {
  check_options(*defaults_);
  std::size_t total = 0;
  for (const auto& g : groups) total += g.params().size();
  if (total == 0) throw Error(name_, "got an empty parameter list");
  for (const auto& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const ParamGroup& group) {
  ParamGroup g = group;
  if (!g.has_options()) g.set_options(defaults_->clone());
  check_options(g.options());
  std::set<const TensorImpl*> seen;
  for (const auto& old : groups_)
    for (const auto& p : old.params()) seen.insert(p.impl());
  for (std::size_t i = 0; i < g.params().size(); ++i) {
    const Tensor& p = g.params()[i];
    const std::string which = "parameter " + std::to_string(i) + " of group " + std::to_string(groups_.size());
    if (!p.defined()) throw Error(name_, which + " is an undefined tensor");
    if (!is_floating_or_complex(p.dtype()))
      throw Error(name_, which + " has dtype " + dtype_name(p.dtype()) +
                             "; optimizers need float32, float64, complex64 or complex128 parameters");
    if (!p.is_leaf()) throw Error(name_, which + " is not a leaf tensor (can't optimize a non-leaf tensor)");
    phasor::cuda::detail::check_device(p.device(), name_.c_str());
    if (!seen.insert(p.impl()).second)
      throw Error(name_, which + " appears more than once (a parameter may belong to one group only, once)");
  }
  groups_.push_back(std::move(g));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard ng;
  for (auto& g : groups_)
    for (auto& p : g.params()) {
      Tensor gr = p.grad();
      if (!gr.defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else if (gr.grad_fn())
        p.set_grad(zeros_like(gr));
      else
        gr.zero_();
    }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const auto& g : groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

const StateDict& Optimizer::state(const Tensor& param) const {
  static const StateDict empty;
  auto it = state_.find(param.impl());
  return it == state_.end() ? empty : it->second;
}

StateDict Optimizer::state_dict() const {
  NoGradGuard ng;
  StateDict out;
  std::int64_t index = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    std::vector<std::int64_t> idx;
    for (std::size_t i = 0; i < groups_[g].params().size(); ++i) idx.push_back(index++);
    out[prefix + "params"] = from_vector(idx);
    groups_[g].options().save(out, prefix);
  }
  save_state(out);
  return out;
}

void Optimizer::save_state(StateDict& out) const {
  std::int64_t index = 0;
  for (const auto& g : groups_)
    for (const auto& p : g.params()) {
      auto it = state_.find(p.impl());
      if (it != state_.end())
        for (const auto& [key, t] : it->second) out["state." + std::to_string(index) + "." + key] = t.clone();
      ++index;
    }
}

namespace {
/// Splits "<head>.<int>.<rest>" into (int, rest); false when the key does not have that form.
bool split_indexed(const std::string& key, const std::string& head, std::int64_t& index, std::string& rest) {
  if (key.compare(0, head.size(), head) != 0) return false;
  std::size_t pos = head.size(), end = pos;
  while (end < key.size() && key[end] >= '0' && key[end] <= '9') ++end;
  if (end == pos || end - pos > 12 || end >= key.size() || key[end] != '.' || end + 1 >= key.size()) return false;
  index = std::stoll(key.substr(pos, end - pos));
  rest = key.substr(end + 1);
  return true;
}
}  // namespace

void Optimizer::load_state_dict(const StateDict& sd) {
  std::vector<std::string> problems;
  const std::int64_t G = static_cast<std::int64_t>(groups_.size());
  // Keys must be param_groups.<g>.<name> or state.<i>.<name>.
  for (const auto& [key, t] : sd) {
    std::int64_t idx = 0;
    std::string rest;
    if (split_indexed(key, "param_groups.", idx, rest)) {
      if (idx >= G)
        problems.push_back("key '" + key + "' belongs to parameter group " + std::to_string(idx) + ", but the optimizer has " +
                           std::to_string(G) + " group(s)");
    } else if (!split_indexed(key, "state.", idx, rest)) {
      problems.push_back("unexpected key '" + key + "'");
    }
  }
  // Groups: membership and hyperparameters, loaded into copies of the options.
  std::vector<std::unique_ptr<OptimizerOptions>> loaded;
  std::vector<const OptimizerOptions*> loaded_ptrs;
  for (std::int64_t g = 0; g < G; ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    const auto n = static_cast<std::int64_t>(groups_[g].params().size());
    auto it = sd.find(prefix + "params");
    if (it == sd.end()) {
      problems.push_back("missing key '" + prefix + "params'");
    } else if (!it->second.defined() || it->second.dim() != 1 || it->second.numel() != n) {
      problems.push_back("parameter group " + std::to_string(g) + " lists " +
                         (it->second.defined() ? std::to_string(it->second.numel()) : std::string("no")) +
                         " parameter(s) in the state dict but has " + std::to_string(n) + " in the optimizer");
    }
    auto opt = groups_[g].options().clone();
    const std::size_t before = problems.size();
    opt->load(sd, prefix, problems);
    if (problems.size() == before) {
      try {
        check_options(*opt);
      } catch (const Error& e) {
        problems.push_back(std::string("parameter group ") + std::to_string(g) + ": " + e.what());
      }
    }
    StateDict expected;
    opt->save(expected, prefix);
    for (auto k = sd.lower_bound(prefix); k != sd.end() && k->first.compare(0, prefix.size(), prefix) == 0; ++k)
      if (k->first != prefix + "params" && !expected.count(k->first))
        problems.push_back("unexpected key '" + k->first + "'");
    loaded_ptrs.push_back(opt.get());
    loaded.push_back(std::move(opt));
  }
  check_state(sd, loaded_ptrs, problems);
  if (!problems.empty())
    throw Error(name_, "load_state_dict: " + std::to_string(problems.size()) + " problem(s): " + detail::join(problems));
  for (std::int64_t g = 0; g < G; ++g) groups_[g].set_options(std::move(loaded[g]));
  load_state(sd);
}

void Optimizer::check_state(const StateDict& in, const std::vector<const OptimizerOptions*>& options,
                            std::vector<std::string>& problems) const {
  std::vector<const Tensor*> params;
  std::vector<std::size_t> group_of;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (const auto& p : groups_[g].params()) {
      params.push_back(&p);
      group_of.push_back(g);
    }
  const auto N = static_cast<std::int64_t>(params.size());
  std::map<std::int64_t, StateDict> per;
  for (const auto& [key, t] : in) {
    std::int64_t idx = 0;
    std::string rest;
    if (!split_indexed(key, "state.", idx, rest)) continue;
    if (idx >= N) {
      problems.push_back("key '" + key + "' holds state of parameter " + std::to_string(idx) + ", but the optimizer has " +
                         std::to_string(N) + " parameter(s)");
      continue;
    }
    per[idx][rest] = t;
  }
  for (const auto& [idx, st] : per)
    check_param_state(*params[idx], *options[group_of[idx]], st, "state." + std::to_string(idx) + ".", problems);
}

void Optimizer::check_param_state(const Tensor& param, const OptimizerOptions&, const StateDict& state,
                                  const std::string& prefix, std::vector<std::string>& problems) const {
  for (const auto& [name, t] : state)
    if (!t.defined() || (name != "step" && t.shape() != param.shape()))
      problems.push_back("key '" + prefix + name + "' does not match parameter of shape " +
                         phasor::detail::shape_str(param.shape()));
}

void Optimizer::load_state(const StateDict& in) {
  NoGradGuard ng;
  std::vector<Tensor> params = parameters();
  std::unordered_map<const TensorImpl*, StateDict> fresh;
  for (const auto& [key, t] : in) {
    std::int64_t idx = 0;
    std::string rest;
    if (!split_indexed(key, "state.", idx, rest)) continue;
    const Tensor& p = params[static_cast<std::size_t>(idx)];
    // "step" counters are float64 scalars on the CPU (Adam reads and bumps them on the host, whatever
    // the device of a loaded state dict); everything else takes the parameter's dtype and layout.
    Tensor copy = rest == "step" ? t.to(Device::cpu()).to(float64).reshape({}).clone()
                                 : t.to(p.dtype()).contiguous().clone();
    fresh[p.impl()][rest] = copy;
  }
  state_ = std::move(fresh);
}

}  // namespace phasor::optim
