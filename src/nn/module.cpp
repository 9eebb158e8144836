// src/nn/module.cpp - Module: registries of parameters, buffers and submodules; state_dict; printing.
#include "phasor/nn/module.hpp"

#include <algorithm>
#include <ostream>
#include <set>
#include <sstream>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/error.hpp"

namespace phasor::nn {
namespace {

void check_name(const std::string& op, const std::string& name) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw Error(op, "name '" + name + "' must be non-empty and contain no '.'");
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The dtype a tensor of dtype `from` takes under Module::to(to): floats follow, complex keeps complex.
Dtype module_cast(Dtype from, Dtype to) {
  if (!is_floating_or_complex(from)) return from;
  const bool dbl = to == Dtype::Float64 || to == Dtype::Complex128;
  if (is_complex(from)) return dbl ? Dtype::Complex128 : Dtype::Complex64;
  return dbl ? Dtype::Float64 : Dtype::Float32;
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}
Module::~Module() = default;

Tensor Module::forward(const Tensor&) {
  throw Error(name_, "this module has no single-tensor forward");
}

Module::Entry* Module::find_entry(const std::string& name) {
  for (auto* list : {&params_, &buffers_})
    for (auto& e : *list)
      if (e.name == name) return &e;
  return nullptr;
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name(name_ + ".register_parameter", name);
  if (find_entry(name)) throw Error(name_ + ".register_parameter", "'" + name + "' is already registered");
  if (tensor.defined()) {
    if (!tensor.is_leaf())
      throw Error(name_ + ".register_parameter", "'" + name + "' must be a leaf tensor (detach it first)");
    if (requires_grad && is_floating_or_complex(tensor.dtype())) tensor.requires_grad_(true);
  }
  params_.push_back({name, tensor, true});
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_name(name_ + ".register_buffer", name);
  if (find_entry(name)) throw Error(name_ + ".register_buffer", "'" + name + "' is already registered");
  buffers_.push_back({name, tensor, persistent});
  return tensor;
}

Tensor Module::replace_tensor(const std::string& name, Tensor tensor) {
  Entry* e = find_entry(name);
  if (!e) throw Error(name_ + ".replace_tensor", "no parameter or buffer named '" + name + "'");
  const bool is_param = e >= params_.data() && e < params_.data() + params_.size();
  if (is_param && tensor.defined() && is_floating_or_complex(tensor.dtype()) && !tensor.requires_grad())
    tensor.requires_grad_(true);
  e->tensor = tensor;
  return tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(name_ + ".register_module", name);
  if (!module) throw Error(name_ + ".register_module", "submodule '" + name + "' is null");
  for (const auto& c : children_)
    if (c.first == name) throw Error(name_ + ".register_module", "'" + name + "' is already registered");
  children_.emplace_back(name, std::move(module));
}

void Module::visit_tensors(const std::string& prefix, bool recurse, bool params, bool bufs, bool persistent_only,
                           std::vector<std::pair<std::string, Tensor>>& out) const {
  if (params)
    for (const auto& e : params_)
      if (e.tensor.defined()) out.emplace_back(prefix + e.name, e.tensor);
  if (bufs)
    for (const auto& e : buffers_)
      if (e.tensor.defined() && (e.persistent || !persistent_only)) out.emplace_back(prefix + e.name, e.tensor);
  if (recurse)
    for (const auto& [n, c] : children_) c->visit_tensors(prefix + n + ".", true, params, bufs, persistent_only, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  visit_tensors("", recurse, true, false, false, out);
  // A tensor shared by two modules (tied weights) is listed once, under its first name.
  std::vector<std::pair<std::string, Tensor>> unique;
  for (auto& p : out)
    if (std::none_of(unique.begin(), unique.end(), [&](const auto& u) { return u.second.is_same(p.second); }))
      unique.push_back(std::move(p));
  return unique;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(p.second);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  visit_tensors("", recurse, false, true, false, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_buffers(recurse)) out.push_back(p.second);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& c : children_) out.push_back(c.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& [n, c] : children_) {
    out.emplace_back(n, c);
    for (auto& [m, g] : c->named_modules()) out.emplace_back(n + "." + m, g);
  }
  return out;
}

std::int64_t Module::num_parameters(bool recurse) const {
  std::int64_t n = 0;
  for (const auto& p : parameters(recurse)) n += p.numel();
  return n;
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.second->train(on);
  return *this;
}

template <class F>
void Module::apply_tensors(F&& f) {
  for (auto* list : {&params_, &buffers_})
    for (auto& e : *list)
      if (e.tensor.defined()) f(e.tensor);
  for (auto& c : children_) c.second->apply_tensors(f);
}

Module& Module::to(Dtype dtype) {
  if (!is_floating_or_complex(dtype))
    throw Error(name_ + ".to", std::string("modules convert to floating or complex dtypes only, got ") + dtype_name(dtype));
  NoGradGuard ng;
  apply_tensors([&](Tensor& t) {
    const Dtype d = module_cast(t.dtype(), dtype);
    if (d != t.dtype()) t.set_data(t.to(d));
  });
  return *this;
}

Module& Module::to(Device device) {
  NoGradGuard ng;
  apply_tensors([&](Tensor& t) {
    const Tensor g = t.grad();  // an accumulated gradient moves with its tensor (set_data drops it)
    if (t.device() != device) t.set_data(t.to(device));
    if (g.defined() && !t.grad().defined()) t.set_grad(g.device() == device ? g : g.to(device));
  });
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  for (auto& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else p.grad().zero_();
  }
}

StateDict Module::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> out;
  visit_tensors("", true, true, true, true, out);
  StateDict d;
  for (auto& [n, t] : out) d.emplace(n, t.detach());
  return d;
}

LoadResult Module::load_state_dict(const StateDict& dict, bool strict) {
  std::vector<std::pair<std::string, Tensor>> mine;
  visit_tensors("", true, true, true, true, mine);
  LoadResult r;
  std::vector<std::string> mismatched;
  std::set<std::string> seen;
  for (const auto& [n, t] : mine) {
    seen.insert(n);
    auto it = dict.find(n);
    if (it == dict.end()) {
      r.missing_keys.push_back(n);
      continue;
    }
    const Tensor& src = it->second;
    if (!src.defined() || src.shape() != t.shape())
      mismatched.push_back(n + " (module " + detail::shape_str(t.shape()) + ", dict " +
                           (src.defined() ? detail::shape_str(src.shape()) : std::string("undefined")) + ")");
    else if (is_complex(src.dtype()) && !is_complex(t.dtype()))
      mismatched.push_back(n + " (complex " + dtype_name(src.dtype()) + " into " + dtype_name(t.dtype()) + ")");
  }
  for (const auto& [n, t] : dict)
    if (!seen.count(n)) r.unexpected_keys.push_back(n);
  std::string problems;
  if (!mismatched.empty()) problems += "shape mismatch: " + join(mismatched);
  if (strict && !r.missing_keys.empty())
    problems += std::string(problems.empty() ? "" : "; ") + "missing keys: " + join(r.missing_keys);
  if (strict && !r.unexpected_keys.empty())
    problems += std::string(problems.empty() ? "" : "; ") + "unexpected keys: " + join(r.unexpected_keys);
  if (!problems.empty()) throw Error(name_ + ".load_state_dict", problems);
  NoGradGuard ng;
  for (auto& [n, t] : mine) {
    auto it = dict.find(n);
    if (it != dict.end() && !it->second.is_same(t)) t.copy_(it->second);
  }
  return r;
}

void Module::pretty_print(std::ostream& os, int indent) const {
  const std::int64_t n = num_parameters();
  os << name_ << "(" << extra_repr();
  if (!children_.empty()) {
    os << "\n";
    for (const auto& [cn, c] : children_) {
      os << std::string(indent + 2, ' ') << "(" << cn << "): ";
      c->pretty_print(os, indent + 2);
      os << "\n";
    }
    os << std::string(indent, ' ');
  }
  os << ")";
  if (n > 0) os << "  # " << n << (n == 1 ? " parameter" : " parameters");
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.pretty_print(os);
  return os;
}

}  // namespace phasor::nn
