// phasor/autodiff.hpp - reverse-mode automatic differentiation: grad, guards, custom functions,
// checkpointing and gradcheck.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

/// Thread-local switch for recording the autograd graph.
class GradMode {
 public:
  /// True when ops record the graph (default).
  static bool is_enabled();
  /// Turns recording on or off for this thread.
  static void set_enabled(bool enabled);
};

/// Disables graph recording in a scope (inference, optimizer updates).
class NoGradGuard {
 public:
  /// Disables recording until destruction.
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  /// Restores the previous mode.
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// Enables graph recording in a scope (inside a NoGradGuard).
class EnableGradGuard {
 public:
  /// Enables recording until destruction.
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  /// Restores the previous mode.
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

namespace autodiff {

/// A recorded operation in the graph; its backward maps output gradients to input gradients.
class Node {
 public:
  virtual ~Node() = default;
  /// Name of the op that recorded it, e.g. "MulBackward".
  virtual std::string name() const = 0;
  /// Number of inputs the node sends gradients to.
  virtual std::size_t num_inputs() const = 0;
};

/// Gradients of `outputs` w.r.t. `inputs`; grad_outputs default to ones for one-element outputs.
/// retain_graph defaults to create_graph; unused inputs throw unless allow_unused (then undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

/// Accumulates gradients of `outputs` into the .grad() of the leaves they depend on.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

/// State shared between a custom function's forward and backward.
class FunctionCtx {
 public:
  /// Saves tensors for backward (checked against in-place changes).
  void save_for_backward(const std::vector<Tensor>& tensors);
  /// The tensors saved in forward.
  std::vector<Tensor> saved_tensors() const;
  /// True if input i needs a gradient.
  bool needs_input_grad(std::size_t i) const { return i < needs_grad_.size() && needs_grad_[i]; }
  /// Free-form numbers for backward.
  std::vector<double> values;
  /// Free-form integers for backward (shapes, dims).
  std::vector<std::int64_t> ints;

 private:
  friend struct CustomAccess;
  std::vector<Tensor> saved_;
  std::vector<std::uint64_t> versions_;
  std::vector<bool> needs_grad_;
};

/// Forward of a custom function: computes outputs from inputs (runs without recording).
using CustomForward = std::function<std::vector<Tensor>(FunctionCtx&, const std::vector<Tensor>&)>;
/// Backward of a custom function: one gradient per input (undefined = none) from output gradients.
using CustomBackward = std::function<std::vector<Tensor>(FunctionCtx&, const std::vector<Tensor>&)>;

/// Runs a user-defined differentiable function: `forward` computes, `backward` gives the vjp.
/// Backward runs with grad mode on when create_graph is requested, so it may itself be differentiable.
std::vector<Tensor> custom_function(const std::string& name, CustomForward forward, CustomBackward backward,
                                    const std::vector<Tensor>& inputs);

/// Runs `fn` without keeping its intermediates; recomputes them during backward (activation checkpointing).
std::vector<Tensor> checkpoint(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                               const std::vector<Tensor>& inputs);

/// Options of gradcheck / gradgradcheck.
struct GradcheckOptions {
  double eps = 1e-6;          ///< finite-difference step
  double atol = 1e-5;         ///< absolute tolerance
  double rtol = 1e-3;         ///< relative tolerance
  bool raise_exception = true;  ///< throw phasor::Error describing the first mismatch (else return false)
};

/// Compares analytic vjps with float64 central differences for every differentiable input
/// (complex inputs and outputs handled with the dL/dz* convention). Inputs must be float64/complex128.
bool gradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
               const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});
/// gradcheck for a function with one output.
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& opts = {});
/// gradcheck with explicit eps/atol/rtol.
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               double eps, double atol = 1e-5, double rtol = 1e-3);
/// Checks second derivatives: gradcheck of the vjp with random output cotangents.
bool gradgradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                   const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});
/// gradgradcheck for a function with one output.
bool gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& opts = {});

}  // namespace autodiff
}  // namespace phasor
