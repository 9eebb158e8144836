// src/jit/tracer.hpp - the hooks through which ops report to a static-graph trace (phasor::jit::trace, Note
// [static graphs] in src/jit/trace.cpp). Ops never include this directly: apply_op (autodiff/node.hpp),
// apply_nondiff (core/pointwise.hpp), custom_function, the random sources and detach call these hooks.
#pragma once
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/tensor_list.hpp"
#include "phasor/tensor.hpp"

namespace phasor {
struct Storage;
namespace detail {

/// Replays one recorded step: its inputs (same shapes, dtypes, devices and strides as when traced) -> outputs.
using StepFn = std::function<std::vector<Tensor>(TensorList)>;

class Tracer;
/// The trace the calling thread records into; null when it records none or while a step runs (TraceSuspend).
extern __attribute__((tls_model("initial-exec"))) thread_local Tracer* t_tracer;

/// True when the op about to run on this thread must be recorded: a trace is active and no recorded step encloses
/// the call.
inline bool tracing() noexcept { return t_tracer != nullptr; }

/// Stops recording on this thread for its lifetime: a recorded step's own work is not recorded again.
struct TraceSuspend {
  Tracer* saved = t_tracer;
  TraceSuspend() noexcept { t_tracer = nullptr; }
  ~TraceSuspend() { t_tracer = saved; }
  TraceSuspend(const TraceSuspend&) = delete;
  TraceSuspend& operator=(const TraceSuspend&) = delete;
};

/// Records a step that has just made `outputs` from `inputs`; `run` computes the same from new inputs.
/// `name` must outlive the process (a literal, or intern_name's).
void trace_step(const char* name, TensorList inputs, const std::vector<Tensor>& outputs, StepFn run);
/// Runs `run` on `inputs` with recording suspended and records it as one step (random sources, custom functions,
/// detach: work whose inner ops must not be recorded one by one). Returns its outputs.
std::vector<Tensor> trace_opaque(const char* name, TensorList inputs, StepFn run);
/// The in-place op `name` on `self` while tracing (Note [in-place ops in traces]): computes out_of_place on a
/// recorded clone of self, writes the values into self, and makes later reads of self read the result. A write
/// that only initializes memory the traced function just made, from its own constants (full filling its result),
/// is not recorded: self stays a constant.
Tensor& trace_inplace(const char* name, Tensor& self, TensorList others,
                      const std::function<Tensor(const Tensor&)>& out_of_place);
/// Throws phasor::Error(op, ...) while tracing: `what` draws random numbers outside a recorded step.
void refuse_untraced_random(const char* op);
/// A copy of `name` that lives as long as the process (op names of replayed steps outlive their graphs).
const char* intern_name(const char* name);

/// Storage made on this thread while it traces (set for the whole trace, also while a step runs): tells the
/// tensors the traced function made (constants it may write into) from those that existed before.
extern __attribute__((tls_model("initial-exec"))) thread_local std::unordered_set<const Storage*>* t_new_storages;

}  // namespace detail
}  // namespace phasor
