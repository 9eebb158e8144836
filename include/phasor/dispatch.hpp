// phasor/dispatch.hpp - the seam every op call passes through, for profilers and graph tracers.
#pragma once
#include <memory>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

/// One op call as seen by observers.
struct OpEvent {
  const char* name = "";                          ///< op name, e.g. "add", "matmul"
  bool primitive = false;                         ///< true for kernels (with a gradient), false for compositions
  int depth = 0;                                  ///< nesting depth (0 = called by the user)
  const std::vector<Tensor>* inputs = nullptr;    ///< tensor arguments
  const std::vector<Tensor>* outputs = nullptr;   ///< results (null in on_begin)
};

/// Receives every op call on the calling thread (the profiler and graph capture hook in here).
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  /// Called before the op runs.
  virtual void on_begin(const OpEvent& /*e*/) {}
  /// Called after the op returned normally.
  virtual void on_end(const OpEvent& /*e*/) {}
};

/// Starts sending op events to `obs` (all threads).
void add_op_observer(std::shared_ptr<OpObserver> obs);
/// Stops sending op events to `obs`.
void remove_op_observer(const std::shared_ptr<OpObserver>& obs);

}  // namespace phasor
