// phasor/optim/optimizer.hpp - optimizers with torch.optim semantics: SGD, Adam, AdamW, LBFGS.
//
// Every optimizer updates its parameters in place (they are shared handles also held by modules),
// without recording autograd, and skips parameters whose grad is undefined. Complex parameters are
// treated as pairs of real numbers (PyTorch's view_as_real rule), so e.g. Adam's second moment is
// kept per real component. State and hyperparameters round-trip through a phasor::StateDict of
// tensors (see Optimizer::state_dict for the key layout).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "phasor/state_dict.hpp"
#include "phasor/tensor.hpp"

namespace phasor {
namespace optim {

/// Hyperparameters of one parameter group; each optimizer has its own options type deriving from this.
class OptimizerOptions {
 public:
  /// Virtual destructor (options are held polymorphically by parameter groups).
  virtual ~OptimizerOptions() = default;
  /// A deep copy of these options.
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  /// The learning rate.
  virtual double get_lr() const = 0;
  /// Sets the learning rate (what schedulers call).
  virtual void set_lr(double lr) = 0;
  /// Writes every hyperparameter as a float64 tensor named `prefix + name` (0-d; betas 1-d of 2).
  virtual void save(StateDict& out, const std::string& prefix) const = 0;
  /// Reads what save() wrote; appends one line per missing or malformed key to `problems`.
  virtual void load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) = 0;
};

/// Options of SGD (torch.optim.SGD): lr, momentum, dampening, weight_decay, nesterov, maximize.
class SGDOptions : public OptimizerOptions {
 public:
  /// Options with learning rate `lr` and torch's defaults otherwise.
  SGDOptions(double lr = 1e-3) : lr_(lr) {}
  /// Learning rate.
  double lr() const { return lr_; }
  /// Sets the learning rate.
  SGDOptions& lr(double v) { lr_ = v; return *this; }
  /// Momentum factor (0 = plain SGD).
  double momentum() const { return momentum_; }
  /// Sets the momentum factor.
  SGDOptions& momentum(double v) { momentum_ = v; return *this; }
  /// Dampening of the momentum buffer's gradient term.
  double dampening() const { return dampening_; }
  /// Sets the dampening.
  SGDOptions& dampening(double v) { dampening_ = v; return *this; }
  /// L2 penalty added to the gradient (weight_decay * param).
  double weight_decay() const { return weight_decay_; }
  /// Sets the L2 penalty.
  SGDOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  /// Nesterov momentum (needs momentum > 0 and dampening 0).
  bool nesterov() const { return nesterov_; }
  /// Turns Nesterov momentum on or off.
  SGDOptions& nesterov(bool v) { nesterov_ = v; return *this; }
  /// Maximize the objective instead of minimizing it.
  bool maximize() const { return maximize_; }
  /// Turns maximization on or off.
  SGDOptions& maximize(bool v) { maximize_ = v; return *this; }

  /// A deep copy.
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<SGDOptions>(*this); }
  /// The learning rate.
  double get_lr() const override { return lr_; }
  /// Sets the learning rate.
  void set_lr(double v) override { lr_ = v; }
  /// Writes lr, momentum, dampening, weight_decay, nesterov, maximize.
  void save(StateDict& out, const std::string& prefix) const override;
  /// Reads what save() wrote.
  void load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) override;

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
  bool maximize_ = false;
};

/// Options of Adam (torch.optim.Adam): lr, betas, eps, weight_decay (L2 in the gradient), amsgrad, maximize.
class AdamOptions : public OptimizerOptions {
 public:
  /// Options with learning rate `lr` and torch's defaults otherwise.
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  /// Learning rate.
  double lr() const { return lr_; }
  /// Sets the learning rate.
  AdamOptions& lr(double v) { lr_ = v; return *this; }
  /// Decay rates (beta1, beta2) of the first and second moment averages.
  std::tuple<double, double> betas() const { return betas_; }
  /// Sets (beta1, beta2); each must lie in [0, 1).
  AdamOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  /// Term added to the denominator for stability.
  double eps() const { return eps_; }
  /// Sets eps.
  AdamOptions& eps(double v) { eps_ = v; return *this; }
  /// L2 penalty added to the gradient (weight_decay * param).
  double weight_decay() const { return weight_decay_; }
  /// Sets the L2 penalty.
  AdamOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  /// AMSGrad variant (keeps the running maximum of the second moment).
  bool amsgrad() const { return amsgrad_; }
  /// Turns AMSGrad on or off.
  AdamOptions& amsgrad(bool v) { amsgrad_ = v; return *this; }
  /// Maximize the objective instead of minimizing it.
  bool maximize() const { return maximize_; }
  /// Turns maximization on or off.
  AdamOptions& maximize(bool v) { maximize_ = v; return *this; }
  /// Whether a CUDA parameter's step count lives on its device (torch's capturable): the step then
  /// reads nothing from the host, so it can be captured into a cuda::Graph (after one eager step).
  bool capturable() const { return capturable_; }
  /// Turns capturable on or off (off: the step count is a CPU scalar, the bias corrections computed there).
  AdamOptions& capturable(bool v) { capturable_ = v; return *this; }

  /// A deep copy.
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamOptions>(*this); }
  /// The learning rate.
  double get_lr() const override { return lr_; }
  /// Sets the learning rate.
  void set_lr(double v) override { lr_ = v; }
  /// Writes lr, betas, eps, weight_decay, amsgrad, maximize, capturable.
  void save(StateDict& out, const std::string& prefix) const override;
  /// Reads what save() wrote (capturable may be missing: false, as in dicts saved before it existed).
  void load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) override;

 protected:
  /// Options with explicit lr and weight decay (AdamW's defaults).
  AdamOptions(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}

 private:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  bool amsgrad_ = false;
  bool maximize_ = false;
  bool capturable_ = false;
};

/// Options of AdamW (torch.optim.AdamW): Adam's, with decoupled weight decay defaulting to 0.01.
class AdamWOptions : public AdamOptions {
 public:
  /// Options with learning rate `lr` and torch's defaults otherwise (weight_decay 0.01).
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr, 1e-2) {}
  /// Learning rate.
  double lr() const { return AdamOptions::lr(); }
  /// Sets the learning rate.
  AdamWOptions& lr(double v) { AdamOptions::lr(v); return *this; }
  /// Decay rates (beta1, beta2).
  std::tuple<double, double> betas() const { return AdamOptions::betas(); }
  /// Sets (beta1, beta2).
  AdamWOptions& betas(std::tuple<double, double> v) { AdamOptions::betas(v); return *this; }
  /// Term added to the denominator for stability.
  double eps() const { return AdamOptions::eps(); }
  /// Sets eps.
  AdamWOptions& eps(double v) { AdamOptions::eps(v); return *this; }
  /// Decoupled weight decay: each step multiplies the parameter by (1 - lr * weight_decay).
  double weight_decay() const { return AdamOptions::weight_decay(); }
  /// Sets the decoupled weight decay.
  AdamWOptions& weight_decay(double v) { AdamOptions::weight_decay(v); return *this; }
  /// AMSGrad variant.
  bool amsgrad() const { return AdamOptions::amsgrad(); }
  /// Turns AMSGrad on or off.
  AdamWOptions& amsgrad(bool v) { AdamOptions::amsgrad(v); return *this; }
  /// Maximize the objective instead of minimizing it.
  bool maximize() const { return AdamOptions::maximize(); }
  /// Turns maximization on or off.
  AdamWOptions& maximize(bool v) { AdamOptions::maximize(v); return *this; }
  /// Whether a CUDA parameter's step count lives on its device (see AdamOptions::capturable).
  bool capturable() const { return AdamOptions::capturable(); }
  /// Turns capturable on or off.
  AdamWOptions& capturable(bool v) { AdamOptions::capturable(v); return *this; }
  /// A deep copy.
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamWOptions>(*this); }
};

/// Options of LBFGS (torch.optim.LBFGS).
class LBFGSOptions : public OptimizerOptions {
 public:
  /// Options with learning rate `lr` (default 1) and torch's defaults otherwise.
  LBFGSOptions(double lr = 1.0) : lr_(lr) {}
  /// Learning rate (initial step length).
  double lr() const { return lr_; }
  /// Sets the learning rate.
  LBFGSOptions& lr(double v) { lr_ = v; return *this; }
  /// Maximal number of iterations per step() call.
  std::int64_t max_iter() const { return max_iter_; }
  /// Sets max_iter.
  LBFGSOptions& max_iter(std::int64_t v) { max_iter_ = v; return *this; }
  /// Maximal closure evaluations per step() call (default max_iter * 5 / 4).
  std::optional<std::int64_t> max_eval() const { return max_eval_; }
  /// Sets max_eval (nullopt = max_iter * 5 / 4).
  LBFGSOptions& max_eval(std::optional<std::int64_t> v) { max_eval_ = v; return *this; }
  /// Stop when the largest |gradient component| is at most this.
  double tolerance_grad() const { return tolerance_grad_; }
  /// Sets tolerance_grad.
  LBFGSOptions& tolerance_grad(double v) { tolerance_grad_ = v; return *this; }
  /// Stop when the step or the loss change falls below this.
  double tolerance_change() const { return tolerance_change_; }
  /// Sets tolerance_change.
  LBFGSOptions& tolerance_change(double v) { tolerance_change_ = v; return *this; }
  /// Number of (s, y) correction pairs kept.
  std::int64_t history_size() const { return history_size_; }
  /// Sets history_size.
  LBFGSOptions& history_size(std::int64_t v) { history_size_ = v; return *this; }
  /// Line search: "strong_wolfe" or nullopt (fixed step lr).
  std::optional<std::string> line_search_fn() const { return line_search_fn_; }
  /// Sets the line search ("strong_wolfe" or nullopt).
  LBFGSOptions& line_search_fn(std::optional<std::string> v) { line_search_fn_ = std::move(v); return *this; }

  /// A deep copy.
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<LBFGSOptions>(*this); }
  /// The learning rate.
  double get_lr() const override { return lr_; }
  /// Sets the learning rate.
  void set_lr(double v) override { lr_ = v; }
  /// Writes lr, max_iter, max_eval (resolved), tolerances, history_size, line_search_fn (1 = strong_wolfe).
  void save(StateDict& out, const std::string& prefix) const override;
  /// Reads what save() wrote.
  void load(const StateDict& in, const std::string& prefix, std::vector<std::string>& problems) override;

 private:
  double lr_;
  std::int64_t max_iter_ = 20;
  std::optional<std::int64_t> max_eval_;
  double tolerance_grad_ = 1e-7;
  double tolerance_change_ = 1e-9;
  std::int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

/// A list of parameters optimized with the same options (or the optimizer's defaults).
class ParamGroup {
 public:
  /// A group that uses the optimizer's default options.
  explicit ParamGroup(std::vector<Tensor> params);
  /// A group with its own options (must be the optimizer's options type, e.g. AdamOptions for Adam).
  ParamGroup(std::vector<Tensor> params, const OptimizerOptions& options);
  /// Deep copy (the options are cloned).
  ParamGroup(const ParamGroup& other);
  /// Deep copy assignment.
  ParamGroup& operator=(const ParamGroup& other);
  /// Move construction.
  ParamGroup(ParamGroup&& other) noexcept = default;
  /// Move assignment.
  ParamGroup& operator=(ParamGroup&& other) noexcept = default;
  /// Destructor.
  ~ParamGroup() = default;

  /// The group's parameters (shared handles).
  std::vector<Tensor>& params() { return params_; }
  /// The group's parameters (shared handles).
  const std::vector<Tensor>& params() const { return params_; }
  /// True once the group has options (always true inside an optimizer).
  bool has_options() const { return options_ != nullptr; }
  /// The group's options; throws if it has none.
  OptimizerOptions& options();
  /// The group's options; throws if it has none.
  const OptimizerOptions& options() const;
  /// Replaces the group's options.
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  /// The group's learning rate.
  double lr() const { return options().get_lr(); }
  /// Sets the group's learning rate.
  void set_lr(double lr) { options().set_lr(lr); }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

/// Base of all optimizers: parameter groups, per-parameter state, zero_grad, step, state_dict.
///
/// state_dict() layout (every value a tensor, so checkpoint writers can store it):
///   "param_groups.<g>.params"     int64 1-d: global indices of the group's parameters
///   "param_groups.<g>.<hyper>"    float64 0-d hyperparameters (lr, eps, momentum, ...; betas is 1-d of 2)
///   "state.<i>.<name>"            per-parameter state of global parameter i (exp_avg, step, ...)
/// Global indices count parameters over the groups in order, as torch.optim does.
class Optimizer {
 public:
  /// Virtual destructor.
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;             ///< not copyable (holds state keyed by parameter)
  Optimizer& operator=(const Optimizer&) = delete;  ///< not copyable

  /// Clears the gradients of all parameters (set_to_none: make them undefined; else fill with zeros).
  void zero_grad(bool set_to_none = true);
  /// One update; `closure` (re-evaluates the loss, runs backward) is called first when given.
  /// Returns the closure's loss, or an undefined tensor without a closure.
  virtual Tensor step(std::function<Tensor()> closure = nullptr) = 0;
  /// Adds a parameter group (options must be this optimizer's type; none = defaults).
  virtual void add_param_group(const ParamGroup& group);
  /// The parameter groups (per-group options such as lr are writable through them).
  std::vector<ParamGroup>& param_groups() { return groups_; }
  /// The parameter groups.
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  /// The default options given at construction.
  const OptimizerOptions& defaults() const { return *defaults_; }
  /// Every parameter, group by group (global index order).
  std::vector<Tensor> parameters() const;
  /// Per-parameter state (named tensors, e.g. "exp_avg", "step"); empty before the first step.
  const StateDict& state(const Tensor& param) const;
  /// Name used in error messages, e.g. "optim.Adam".
  const std::string& name() const { return name_; }
  /// Copies of the hyperparameters and state as named tensors (layout in the class comment).
  StateDict state_dict() const;
  /// Loads what state_dict() produced; on any mismatch (missing or unexpected keys, shapes, parameter
  /// counts, invalid values) throws phasor::Error listing every problem and changes nothing.
  void load_state_dict(const StateDict& state_dict);

 protected:
  /// Sets the name and defaults; derived constructors then call add_param_group for each group.
  Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults);
  /// Adds all groups and rejects an empty parameter list (derived constructors call it).
  void init_groups(std::vector<ParamGroup> groups);
  /// Throws phasor::Error if the options are of the wrong type or hold invalid values.
  virtual void check_options(const OptimizerOptions& options) const = 0;
  /// Validates one parameter's loaded state (keys `prefix + name`); appends problems.
  virtual void check_param_state(const Tensor& param, const OptimizerOptions& options, const StateDict& state,
                                 const std::string& prefix, std::vector<std::string>& problems) const;
  /// Writes the "state.*" keys (default: every entry of the per-parameter state map).
  virtual void save_state(StateDict& out) const;
  /// Validates the "state.*" keys of `in` against the (already validated) loaded options.
  virtual void check_state(const StateDict& in, const std::vector<const OptimizerOptions*>& options,
                           std::vector<std::string>& problems) const;
  /// Replaces the state with the "state.*" keys of `in` (called only after check_state found no problem).
  virtual void load_state(const StateDict& in);
  /// Mutable per-parameter state of `param` (created empty on first use).
  StateDict& mutable_state(const Tensor& param) { return state_[param.impl()]; }
  /// While the calling thread captures a CUDA graph on `device`: the device address of a float64 that
  /// each replay sets to group gi's lr at that moment (so a scheduler's changes reach replayed steps);
  /// nullptr otherwise. For the step kernels of optimizers whose steps can be captured.
  const void* captured_lr(std::size_t gi, Device device) const;

  std::string name_;                                        ///< e.g. "optim.Adam"
  std::unique_ptr<OptimizerOptions> defaults_;              ///< options of groups given without their own
  std::vector<ParamGroup> groups_;                          ///< the parameter groups
  std::unordered_map<const TensorImpl*, StateDict> state_;  ///< per-parameter state

 private:
  std::shared_ptr<const int> alive_ = std::make_shared<const int>(0);  ///< held weakly by captured_lr's replays
};

/// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (torch.optim.SGD).
class SGD : public Optimizer {
 public:
  /// SGD over `params` (throws on an empty list or invalid options).
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  /// SGD over parameter groups (groups without options use `defaults`).
  SGD(std::vector<ParamGroup> groups, SGDOptions defaults = {});
  /// One update (see torch.optim.SGD); state "momentum_buffer" when momentum != 0.
  Tensor step(std::function<Tensor()> closure = nullptr) override;

 protected:
  /// Checks the option type and values.
  void check_options(const OptimizerOptions& options) const override;
  /// Checks a loaded "momentum_buffer".
  void check_param_state(const Tensor& param, const OptimizerOptions& options, const StateDict& state,
                         const std::string& prefix, std::vector<std::string>& problems) const override;
};

/// Adam (torch.optim.Adam), with the AMSGrad option; AdamW reuses it with decoupled weight decay.
class Adam : public Optimizer {
 public:
  /// Adam over `params` (throws on an empty list or invalid options).
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  /// Adam over parameter groups (groups without options use `defaults`).
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults = {});
  /// One update; state "step", "exp_avg", "exp_avg_sq" (and "max_exp_avg_sq" with amsgrad).
  Tensor step(std::function<Tensor()> closure = nullptr) override;

 protected:
  /// For AdamW: name, defaults and decoupled decay.
  Adam(std::string name, std::unique_ptr<OptimizerOptions> defaults, bool decoupled_weight_decay);
  /// Checks the option type and values.
  void check_options(const OptimizerOptions& options) const override;
  /// Checks loaded moments and step.
  void check_param_state(const Tensor& param, const OptimizerOptions& options, const StateDict& state,
                         const std::string& prefix, std::vector<std::string>& problems) const override;

 private:
  bool decoupled_;
};

/// AdamW (torch.optim.AdamW): Adam with decoupled weight decay p *= 1 - lr * weight_decay.
class AdamW : public Adam {
 public:
  /// AdamW over `params` (throws on an empty list or invalid options).
  AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  /// AdamW over parameter groups (groups without options use `defaults`).
  AdamW(std::vector<ParamGroup> groups, AdamWOptions defaults = {});

 protected:
  /// Checks the option type (AdamWOptions) and values.
  void check_options(const OptimizerOptions& options) const override;
};

/// L-BFGS (torch.optim.LBFGS) with optional strong-Wolfe line search (cubic interpolation).
/// One parameter group only; step() needs a closure. The state is kept for parameter 0
/// ("state.0.d", "state.0.old_dirs" (k, n), ...), with flat vectors over all real components.
class LBFGS : public Optimizer {
 public:
  /// LBFGS over `params` (throws on an empty list or invalid options).
  LBFGS(std::vector<Tensor> params, LBFGSOptions options = {});
  /// Runs up to max_iter iterations; `closure` must zero the grads, compute the loss and call backward.
  /// Returns the loss of the first closure evaluation.
  Tensor step(std::function<Tensor()> closure = nullptr) override;
  /// Total closure evaluations so far.
  std::int64_t func_evals() const { return func_evals_; }
  /// Total iterations so far.
  std::int64_t n_iter() const { return n_iter_; }
  /// Throws once the single parameter group exists (LBFGS has no per-parameter options).
  void add_param_group(const ParamGroup& group) override;

 protected:
  /// Checks the option type and values.
  void check_options(const OptimizerOptions& options) const override;
  /// Writes the L-BFGS history as "state.0.*".
  void save_state(StateDict& out) const override;
  /// Validates a loaded history.
  void check_state(const StateDict& in, const std::vector<const OptimizerOptions*>& options,
                   std::vector<std::string>& problems) const override;
  /// Loads a validated history.
  void load_state(const StateDict& in) override;

 private:
  std::int64_t flat_numel() const;  // real components over all parameters
  std::int64_t func_evals_ = 0;
  std::int64_t n_iter_ = 0;
  bool have_dir_ = false;                   // d, t, history and prev_* are valid
  std::vector<double> d_, prev_flat_grad_;  // search direction, gradient at the previous iterate
  double t_ = 0, H_diag_ = 1, prev_loss_ = 0;
  std::vector<std::vector<double>> old_dirs_, old_stps_;  // y and s vectors, oldest first
  std::vector<double> ro_;                                // 1 / (y . s)
};

}  // namespace optim
}  // namespace phasor
