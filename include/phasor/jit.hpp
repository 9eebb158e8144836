// phasor/jit.hpp - static graphs: run a function once eagerly, record the primitive ops it ran, and replay them
// without running the function again (torch.jit.trace, jax.jit, mx.compile). Note [static graphs] in
// src/jit/trace.cpp describes what is recorded and what a trace cannot see.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {
namespace jit {

/// A function of tensors to tensors: what trace records.
using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Options of trace.
struct TraceOptions {
  /// After tracing, run both the function and the graph on each of these input lists and require that they agree
  /// (as torch.jit.trace's check_inputs): catches functions whose ops depend on the inputs' values.
  std::vector<std::vector<Tensor>> check_inputs;
  /// Relative tolerance of those checks: max |graph - fn| <= check_tolerance * max(1, max |fn|).
  double check_tolerance = 1e-5;
  /// Drop the steps no output depends on (random draws are always kept, so the generator advances as eagerly).
  bool eliminate_dead_steps = true;
  /// Compute once, when tracing, the steps that read only tensors the function made itself (grids, stencils,
  /// index tables built from shapes): a replay reads their results as constants.
  bool fold_constants = true;
};

/// What a graph input must look like: the traced shape, strides, dtype and device.
struct InputSpec {
  Shape shape;        ///< shape
  Shape strides;      ///< strides in elements (a contiguous spec accepts any layout and copies it contiguous)
  Dtype dtype = Dtype::Float32;  ///< dtype
  Device device;      ///< device
  bool requires_grad = false;  ///< traced requiring grad (only then may a replay's input require grad)
};

namespace detail {
struct GraphImpl;
}

/// A static graph: the primitive ops a function ran on example inputs, replayed on new inputs of the same shapes,
/// dtypes, devices and layouts. Replays record autograd history like eager ops (gradients flow through them), are
/// const and may run on several threads at once. Tensors the function read without taking them as inputs (module
/// parameters) are read anew by every replay, so in-place updates (an optimizer's step) are seen.
class Graph {
 public:
  /// An empty graph (calling it throws).
  Graph();
  /// Replays the recorded steps on `inputs`; throws phasor::Error("jit.Graph", ...) on a shape, dtype, device or
  /// count mismatch, leaving the inputs unchanged.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  /// True when the graph holds a trace.
  bool defined() const { return impl_ != nullptr; }
  /// Number of inputs.
  std::size_t num_inputs() const;
  /// Number of outputs.
  std::size_t num_outputs() const;
  /// Number of recorded steps (primitive ops) a replay runs.
  std::size_t num_steps() const;
  /// Number of tensors the graph reads without taking them as inputs (parameters, tables the function made).
  std::size_t num_constants() const;
  /// What each input must look like.
  const std::vector<InputSpec>& input_specs() const;
  /// How many times each op name occurs among the steps (e.g. {"matmul": 3, "add": 5}).
  std::map<std::string, std::int64_t> op_counts() const;
  /// A readable listing: one line per step with its value numbers, shapes and dtypes.
  std::string str() const;
  /// The graph in Graphviz dot format (inputs, constants, steps and outputs as nodes).
  std::string to_dot() const;

 private:
  friend Graph trace(const Function&, const std::vector<Tensor>&, const TraceOptions&);
  friend struct TraceAccess;
  std::shared_ptr<const detail::GraphImpl> impl_;
};

/// Runs fn(example_inputs) once, eagerly, and records every primitive op it ran into a Graph. The function must be a
/// fixed sequence of ops for inputs of these shapes: host-side decisions on tensor values (item(), to_vector) are
/// baked in (use check_inputs to catch them). Throws phasor::Error("jit.trace", ...) for what cannot be traced: an
/// in-place write into a tensor that existed before the trace or into a tensor with other views, values derived
/// from a traced tensor by code the trace cannot see, an output the graph cannot produce.
Graph trace(const Function& fn, const std::vector<Tensor>& example_inputs, const TraceOptions& options = {});
/// trace for a function of one tensor to one tensor.
Graph trace(const std::function<Tensor(const Tensor&)>& fn, const Tensor& example_input, const TraceOptions& options = {});

/// A function traced on first use for each input signature (shapes, strides, dtypes, devices, requires_grad, grad
/// mode) and replayed from its graph afterwards, as jax.jit and mx.compile do.
class CompiledFunction {
 public:
  /// Wraps fn (nothing is traced yet).
  explicit CompiledFunction(Function fn, TraceOptions options = {});
  /// fn(inputs): the first call with a new signature traces (and returns the traced run's results), later calls
  /// replay that signature's graph.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  /// Number of signatures traced so far.
  std::size_t cache_size() const { return graphs_.size(); }
  /// The graph for inputs of this signature, tracing it when new.
  const Graph& graph_for(const std::vector<Tensor>& inputs);
  /// Forgets every graph (the next call traces again).
  void clear() { graphs_.clear(); }

 private:
  Function fn_;
  TraceOptions options_;
  std::map<std::string, Graph> graphs_;
};

/// A CompiledFunction of fn.
CompiledFunction compile(Function fn, TraceOptions options = {});

}  // namespace jit
}  // namespace phasor
