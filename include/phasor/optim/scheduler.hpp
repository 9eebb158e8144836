// phasor/optim/scheduler.hpp - learning-rate schedulers with torch.optim.lr_scheduler semantics:
// StepLR, CosineAnnealingLR, OneCycleLR (LRScheduler subclasses, stepped once per epoch or batch)
// and ReduceLROnPlateau (stepped with a validation metric).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "phasor/optim/optimizer.hpp"
#include "phasor/state_dict.hpp"
#include "phasor/tensor.hpp"

namespace phasor {
namespace optim {

/// Base of the epoch-indexed schedulers: step() advances last_epoch and writes get_lr() into the groups.
/// Construction performs the initial step (last_epoch becomes 0), as in PyTorch.
class LRScheduler {
 public:
  /// Virtual destructor.
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;             ///< not copyable (refers to its optimizer)
  LRScheduler& operator=(const LRScheduler&) = delete;  ///< not copyable
  /// Advances one epoch (or batch) and sets every group's learning rate.
  void step();
  /// The learning rates set by the last step(), one per parameter group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// The learning rates the groups had when the scheduler was made.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// Number of step() calls after the initial one (0 right after construction).
  std::int64_t last_epoch() const { return last_epoch_; }
  /// The optimizer whose learning rates this scheduler sets.
  Optimizer& optimizer() { return optimizer_; }
  /// "last_epoch", "base_lrs", "last_lr" (float64 tensors) plus subclass state.
  virtual StateDict state_dict() const;
  /// Restores what state_dict() wrote (throws phasor::Error listing problems, changing nothing).
  virtual void load_state_dict(const StateDict& state_dict);

 protected:
  /// Records the optimizer and its current learning rates as base_lrs; `name` is used in errors.
  LRScheduler(Optimizer& optimizer, std::string name);
  /// The learning rates for the current last_epoch (torch's chainable get_lr).
  virtual std::vector<double> get_lr() = 0;
  /// The first step (derived constructors call it once set up).
  void initial_step() { step(); }

  Optimizer& optimizer_;           ///< the scheduled optimizer
  std::string name_;               ///< e.g. "optim.StepLR"
  std::int64_t last_epoch_ = -1;   ///< epoch index of the last step()
  std::vector<double> base_lrs_;   ///< learning rates at construction
  std::vector<double> last_lr_;    ///< learning rates after the last step()
};

/// Multiplies the learning rate by gamma every step_size epochs: lr = base_lr * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  /// StepLR over `optimizer` (step_size >= 1, gamma >= 0).
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 protected:
  /// gamma * lr at multiples of step_size, lr otherwise.
  std::vector<double> get_lr() override;

 private:
  std::int64_t step_size_;
  double gamma_;
};

/// Cosine annealing from base_lr to eta_min over T_max epochs (and back up, periodically, after that).
class CosineAnnealingLR : public LRScheduler {
 public:
  /// CosineAnnealingLR over `optimizer` (T_max >= 1).
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0.0);

 protected:
  /// Torch's recursive form: eta_min + (lr - eta_min) (1 + cos(pi e / T)) / (1 + cos(pi (e-1) / T)).
  std::vector<double> get_lr() override;

 private:
  std::int64_t T_max_;
  double eta_min_;
};

/// The 1cycle policy (torch.optim.lr_scheduler.OneCycleLR): warm up from max_lr / div_factor to
/// max_lr over pct_start of total_steps, then anneal to max_lr / (div_factor * final_div_factor);
/// with cycle_momentum the momentum (SGD) or beta1 (Adam, AdamW) cycles inversely. Step it once per
/// batch; for torch's epochs/steps_per_epoch form pass total_steps = epochs * steps_per_epoch.
class OneCycleLR : public LRScheduler {
 public:
  /// OneCycleLR with one max_lr for every group; anneal_strategy is "cos" or "linear".
  OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start = 0.3,
             const std::string& anneal_strategy = "cos", bool cycle_momentum = true, double base_momentum = 0.85,
             double max_momentum = 0.95, double div_factor = 25.0, double final_div_factor = 1e4,
             bool three_phase = false);
  /// OneCycleLR with one max_lr per parameter group.
  OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs, std::int64_t total_steps,
             double pct_start = 0.3, const std::string& anneal_strategy = "cos", bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95, double div_factor = 25.0,
             double final_div_factor = 1e4, bool three_phase = false);
  /// The total number of steps of the cycle.
  std::int64_t total_steps() const { return total_steps_; }

 protected:
  /// Learning rates (and momenta, when cycled) of the phase that contains last_epoch.
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    int lr_from, lr_to, m_from, m_to;  // 0 initial, 1 max, 2 min lr / 0 base, 1 max momentum
  };
  std::int64_t total_steps_;
  bool linear_;
  bool cycle_momentum_;
  bool use_beta1_ = false;
  double base_momentum_, max_momentum_;
  std::vector<double> initial_lrs_, max_lrs_, min_lrs_;
  std::vector<Phase> phases_;
};

/// Lowers the learning rate by `factor` when a metric stops improving for `patience` epochs
/// (torch.optim.lr_scheduler.ReduceLROnPlateau).
class ReduceLROnPlateau {
 public:
  /// mode "min" or "max"; threshold_mode "rel" or "abs"; min_lr has one value or one per group.
  ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode = "min", double factor = 0.1,
                    std::int64_t patience = 10, double threshold = 1e-4, const std::string& threshold_mode = "rel",
                    std::int64_t cooldown = 0, std::vector<double> min_lr = {0.0}, double eps = 1e-8);
  /// Records one epoch's metric and lowers the learning rates when it has plateaued.
  void step(double metric);
  /// step() with a one-element tensor metric.
  void step(const Tensor& metric);
  /// The learning rates after the last step(), one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// Best metric seen so far (inf for "min" / -inf for "max" before the first step).
  double best() const { return best_; }
  /// Consecutive epochs without improvement.
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  /// Number of step() calls.
  std::int64_t last_epoch() const { return last_epoch_; }
  /// "best", "num_bad_epochs", "cooldown_counter", "last_epoch", "last_lr" as float64 tensors.
  StateDict state_dict() const;
  /// Restores what state_dict() wrote (throws phasor::Error listing problems, changing nothing).
  void load_state_dict(const StateDict& state_dict);

 private:
  bool is_better(double a) const;
  Optimizer& optimizer_;
  bool mode_max_;
  double factor_;
  std::int64_t patience_;
  double threshold_;
  bool threshold_abs_;
  std::int64_t cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  double best_;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
  std::int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace optim
}  // namespace phasor
