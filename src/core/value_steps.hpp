// src/core/value_steps.hpp - an op's value-dependent work as non-differentiable steps of their own (Note [value
// steps]): apply_nondiff_n, apply_nondiff's form for several outputs.
#pragma once
#include <vector>

#include "core/pointwise.hpp"

namespace phasor::detail {

// Note [value steps]
// A static-graph trace records the forwards of primitives only (Note [static graphs] in src/jit/trace.cpp, Note
// [replayable forwards] in autodiff/node.hpp). A tensor an op computes from its inputs' values by code outside
// such a forward (a kernel called from the op's body, a loop over data_ptr, a host read of a count that sets a
// shape) would be a frozen constant of the trace, and a value check made ahead of a primitive that trusts the
// values would not run at a replay, which would then read out of range. So that work runs as a step of its own:
//  - indices, counts, masks (sort's order, nonzero's positions, unique's groups, a bincount's length) come from
//    apply_nondiff (apply_nondiff_n for several outputs), and the differentiable values from the recorded
//    primitives that read them (a gather, an index_select, an index_add);
//  - a value check is a step whose output is the checked tensor itself (or its clamped copy where the check is
//    deferred to the device), and the primitives after it read that output, so a replay runs the check first
//    and throws the eager error message.
// A replay recomputes a value-dependent shape in its step; the next step whose input shape then differs from the
// trace's throws (the function's shapes depend on its inputs' values), while an output the step returns directly
// simply comes back with its new shape.

/// apply_nondiff for a step with several outputs (Note [value steps]): fwd returns a std::vector<Tensor> (undefined
/// entries allowed); no gradient, observers see one primitive call.
template <class Fwd>
std::vector<Tensor> apply_nondiff_n(const char* name, TensorList inputs, Fwd&& fwd) {
  const bool observed = g_num_observers.load(std::memory_order_relaxed) > 0;
  const bool traced = observed && tracing();  // Note [replayable forwards]
  const std::vector<Tensor> seen = observe_begin(observed, name, true, inputs);
  std::vector<Tensor> out = run_forward(fwd, inputs);
  if (traced)
    trace_step(name, inputs, out, [name = intern_name(name), f = fwd](TensorList in) { return apply_nondiff_n(name, in, f); });
  if (observed) notify_end(name, true, seen, out);
  return out;
}

}  // namespace phasor::detail
