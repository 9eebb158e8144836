// phasor/nn/module.hpp - the base class of every layer and model: parameters, buffers, submodules.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/state_dict.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

/// Keys that did not line up in a non-strict Module::load_state_dict.
struct LoadResult {
  std::vector<std::string> missing_keys;     ///< in the module, absent from the dict
  std::vector<std::string> unexpected_keys;  ///< in the dict, absent from the module
};

/// Base of every layer and model, like torch.nn.Module.
///
/// A derived class registers its parameters, buffers and submodules in its constructor and keeps
/// the returned handles as members (`weight = register_parameter("weight", w)`); the handles share
/// their tensors with the registry, so optimizers, load_state_dict and to() act on the members.
/// Modules are held by std::shared_ptr (see register_module).
class Module {
 public:
  /// A module whose printed name is `name` (the class name by convention).
  explicit Module(std::string name = "Module");
  /// Destroys the module (submodules are shared and live while referenced).
  virtual ~Module();
  Module(const Module&) = delete;             ///< not copyable (parameters are shared handles)
  Module& operator=(const Module&) = delete;  ///< not copyable

  /// The module's type name, as printed.
  const std::string& name() const { return name_; }

  /// The module's computation on one tensor; the base class throws (multi-input modules add their own).
  virtual Tensor forward(const Tensor& input);
  /// Calls forward(input).
  Tensor operator()(const Tensor& input) { return forward(input); }

  /// Adds a parameter (a leaf; requires_grad set for floating/complex tensors unless `requires_grad`
  /// is false) and returns the handle to keep. An undefined tensor registers an absent parameter.
  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  /// Adds a buffer (state that is not trained, e.g. running statistics); non-persistent buffers
  /// stay out of state_dict.
  Tensor register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  /// Adds a submodule and returns it.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  /// Replaces the tensor registered as parameter or buffer `name` (e.g. after a shape change) and
  /// returns the new handle.
  Tensor replace_tensor(const std::string& name, Tensor tensor);

  /// The parameters of this module (and of its submodules when `recurse`), registration order.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// Parameters with dotted names ("layers.0.weight").
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  /// The buffers of this module (and of its submodules when `recurse`).
  std::vector<Tensor> buffers(bool recurse = true) const;
  /// Buffers with dotted names.
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  /// Direct submodules.
  std::vector<std::shared_ptr<Module>> children() const;
  /// Direct submodules with their names.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  /// Every submodule at any depth with dotted names (this module itself not included).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules() const;
  /// Total number of parameter elements (a complex element counts once).
  std::int64_t num_parameters(bool recurse = true) const;

  /// Sets training mode here and in every submodule (affects Dropout, BatchNorm, ...).
  Module& train(bool on = true);
  /// Sets evaluation mode (train(false)).
  Module& eval() { return train(false); }
  /// True in training mode (the default).
  bool is_training() const { return training_; }

  /// Converts floating parameters and buffers to `dtype`; complex ones go to the complex dtype of the
  /// same precision (float64 turns complex64 into complex128). Integer buffers are left alone.
  Module& to(Dtype dtype);
  /// Moves parameters and buffers to `device`.
  Module& to(Device device);
  /// Clears the gradients of every parameter (set_to_none) or fills them with zeros.
  void zero_grad(bool set_to_none = true);

  /// Parameters and persistent buffers by dotted name (the tensors themselves, detached handles).
  StateDict state_dict() const;
  /// Copies values from `dict` into the parameters and buffers (converting dtype). Strict mode
  /// throws on missing or unexpected keys; a shape mismatch always throws. On error nothing changes
  /// and the message lists every offending key.
  LoadResult load_state_dict(const StateDict& dict, bool strict = true);

  /// Text after the name on the module's line, e.g. "in_features=3, out_features=4, bias=true".
  virtual std::string extra_repr() const { return ""; }
  /// Prints the module tree, each line with its parameter count.
  void pretty_print(std::ostream& os, int indent = 0) const;

 protected:
  /// Registers `module` as child `name` (register_module's untyped part).
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  struct Entry {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  Entry* find_entry(const std::string& name);
  void visit_tensors(const std::string& prefix, bool recurse, bool params, bool bufs, bool persistent_only,
                     std::vector<std::pair<std::string, Tensor>>& out) const;
  template <class F>
  void apply_tensors(F&& f);

  std::string name_;
  bool training_ = true;
  std::vector<Entry> params_;
  std::vector<Entry> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

/// Prints the module tree (see Module::pretty_print).
std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace phasor::nn
