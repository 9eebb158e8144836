// src/autodiff/node.hpp - graph nodes, saved tensors, and apply_op: the one seam every
// differentiable primitive passes through (forward kernel + gradient a few lines apart).
//
// Writing a primitive:
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     return detail::apply_op("mul", {a, b}, detail::kSaveInputs,
//         [&](detail::TensorList in) { return <kernel>(in[0], in[1]); },
//         [](const detail::Ctx& c, const std::vector<Tensor>& g) {
//           return std::vector<Tensor>{g[0] * c.input(1).conj(), g[0] * c.input(0).conj()}; });
//   }
// The inputs travel as a TensorList, a view of the braced list (Note [tensor lists]).
// The forward runs with grad mode off. The backward is written with public ops, so gradients
// of gradients work; it returns one gradient per input (undefined = none). The engine then
// sums each gradient down to its input's broadcast shape, drops the imaginary part for real
// inputs and casts to the input's dtype (Note [gradient reduction]), so formulas need not.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_impl.hpp"
#include "core/tensor_list.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/dispatch.hpp"
#include "jit/tracer.hpp"

namespace phasor::detail {

// Note [graph node memory]
// Recording an op allocates a node, a handful of small vectors (its edges, its input and output
// metadata with their shapes, saved tensors) and each output's AutogradMeta; a backward run adds an
// entry per node to its own map, and then frees them all. malloc and free were about 40% of the
// instructions of a small forward+backward loop, mostly for these objects (bench/README.md, "The
// autodiff graph's memory"). So they come from the per-thread small-block lists (Note [small blocks]),
// like the tensors' own small objects: the vectors are NodeVectors (TensorMeta's shape too; compare it
// with has_shape, which copies nothing), apply_op_n and gradient_edge make nodes with allocate_shared
// (a block over 384 bytes falls through to operator new), AutogradMeta has its own operator new, and
// run_backward's map takes a SmallBlockAllocator.

/// A vector of a graph node, its buffer from the small-block lists (Note [graph node memory]).
template <class T>
using NodeVector = std::vector<T, SmallBlockAllocator<T>>;

/// Where a gradient goes: input `input_nr` of `node`.
struct Edge {
  std::shared_ptr<OpNode> node;
  std::uint32_t input_nr = 0;
};

/// Shape/dtype of an input or output, kept without keeping its data.
struct TensorMeta {
  NodeVector<std::int64_t> dims;  // the shape, its buffer from the small-block lists
  Dtype dtype = Dtype::Float32;
  Device device;

  /// t's shape, dtype and device.
  static TensorMeta of(const Tensor& t) {
    return TensorMeta{NodeVector<std::int64_t>(t.shape().begin(), t.shape().end()), t.dtype(), t.device()};
  }
  /// The shape.
  Shape shape() const { return Shape(dims.begin(), dims.end()); }
  /// True when `s` is the shape.
  bool has_shape(const Shape& s) const { return std::equal(dims.begin(), dims.end(), s.begin(), s.end()); }
};

/// A tensor saved for backward; detects in-place changes through the storage version.
class SavedVariable {
 public:
  SavedVariable() = default;
  /// Saves `t`; `is_output` avoids a reference cycle with the node that produced it.
  SavedVariable(const Tensor& t, bool is_output, const std::shared_ptr<OpNode>& node);
  /// The saved tensor; throws if it was modified in place or the graph was freed.
  Tensor unpack(const char* op) const;
  void reset() { data_ = Tensor(); released_ = true; }
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  std::uint64_t version_ = 0;
  bool is_output_ = false;
  bool released_ = false;
  bool requires_grad_ = false;
  std::uint32_t output_nr_ = 0;
  std::weak_ptr<OpNode> node_;
};

/// Base of every graph node (ops, AccumulateGrad, custom functions).
struct OpNode : autodiff::Node, std::enable_shared_from_this<OpNode> {
  NodeVector<Edge> next;              // one per input; null node = no gradient needed
  NodeVector<TensorMeta> input_meta;  // one per input
  NodeVector<TensorMeta> output_meta; // one per output
  std::vector<std::vector<GradHook>> pre_hooks;  // per output: hooks of non-leaf tensors
  std::vector<WeakTensor> retained;  // per output: tensors that retain_grad()
  std::uint64_t seq = 0;
  bool released = false;

  std::size_t num_inputs() const override { return next.size(); }
  /// Output gradients (one per output, zeros filled in) -> input gradients.
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  /// Frees saved tensors (after a backward without retain_graph).
  virtual void release() { released = true; }
  /// True for leaf accumulators.
  virtual bool is_accumulator() const { return false; }
  /// Tells the node whether this backward builds a graph (leaf accumulators keep history then).
  virtual void set_create_graph(bool) {}
};

/// What a backward formula sees: saved inputs/outputs and input metadata.
class Ctx {
 public:
  /// Saved input i (requires kSaveInputs).
  Tensor input(std::size_t i) const { return inputs_.at(i).unpack(name_); }
  /// Saved output i (requires kSaveOutputs), connected to the graph for double backward.
  Tensor output(std::size_t i) const { return outputs_.at(i).unpack(name_); }
  /// Shape of input i.
  Shape input_shape(std::size_t i) const { return node_->input_meta.at(i).shape(); }
  /// Dtype of input i.
  Dtype input_dtype(std::size_t i) const { return node_->input_meta.at(i).dtype; }
  /// True if input i gets a gradient.
  bool needs_grad(std::size_t i) const { return node_->next.at(i).node != nullptr; }

 public:  // filled in by apply_op_n (internal)
  const char* name_ = "";
  const OpNode* node_ = nullptr;
  NodeVector<SavedVariable> inputs_;
  NodeVector<SavedVariable> outputs_;
};

/// A node whose backward is a lambda (all ops use this).
template <class B>
struct LambdaNode final : OpNode {
  explicit LambdaNode(B b) : bwd(std::move(b)) {}
  B bwd;
  Ctx ctx;
  const char* op = "";
  std::string name() const override { return std::string(op) + "Backward"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override { return bwd(ctx, grads); }
  void release() override {
    OpNode::release();
    for (auto& s : ctx.inputs_) s.reset();
    for (auto& s : ctx.outputs_) s.reset();
  }
};

inline constexpr unsigned kSaveNone = 0;     ///< backward needs no tensors
inline constexpr unsigned kSaveInputs = 1;   ///< backward reads ctx.input(i)
inline constexpr unsigned kSaveOutputs = 2;  ///< backward reads ctx.output(i)
/// Backward reads ctx.input(i) of this input only (an index next to a large source); or several together.
constexpr unsigned kSaveInput(unsigned i) { return 1u << (8 + i); }

/// Sequence number for new nodes (later nodes run first among ready ones).
std::uint64_t next_sequence_nr();
/// The edge a gradient for `t` must flow into (grad_fn, or the leaf's accumulator).
Edge gradient_edge(const Tensor& t);
/// Connects outputs[0..n) to a freshly built node (sets grad_fn/output_nr/requires_grad).
void attach_outputs(const std::shared_ptr<OpNode>& node, Tensor* outputs, std::size_t n);

// ---- the dispatch seam ---------------------------------------------------------------------
extern std::atomic<int> g_num_observers;
/// Notifies observers (only called when g_num_observers > 0); `in` is built once per observed call and
/// passed to both (Note [tensor lists]).
void notify_begin(const char* name, bool primitive, const std::vector<Tensor>& in);
void notify_end(const char* name, bool primitive, const std::vector<Tensor>& in, const std::vector<Tensor>& out);
/// Nesting depth of op calls on this thread.
int& op_depth();

struct DepthGuard {
  DepthGuard() { ++op_depth(); }
  ~DepthGuard() { --op_depth(); }
};

/// Begins a call for observers when `observed`: notifies them with the inputs as a vector (built once,
/// Note [tensor lists]) and returns it for notify_end. Unobserved: an empty vector, nothing copied.
inline std::vector<Tensor> observe_begin(bool observed, const char* name, bool primitive, TensorList inputs) {
  if (!observed) return {};
  std::vector<Tensor> seen = inputs.vec();
  notify_begin(name, primitive, seen);
  return seen;
}

/// Runs a primitive's forward: grad mode off (it records nothing), one call deeper for observers, and not
/// recorded op by op into a trace (the trace records the primitive as one step).
template <class Fwd>
auto run_forward(Fwd& fwd, TensorList inputs) {
  DepthGuard depth;
  NoGradGuard no_grad;
  TraceSuspend untraced;
  return fwd(inputs);
}

template <class R>
inline std::vector<Tensor> as_vector(R&& r) {
  if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) return std::vector<Tensor>{std::forward<R>(r)};
  else return std::vector<Tensor>(std::forward<R>(r));
}

/// True if grad mode is on and some input requires grad.
bool any_requires_grad(TensorList inputs);

// Note [dispatch cost]
// Eager dispatch of a tiny op must stay well under a microsecond: the loop state is inline
// (StridedLoop), storage comes from the caching allocator, grad mode is an initial-exec TLS
// flag, the inputs are a view of the caller's braced list (Note [tensor lists]), and apply_op skips
// vectors and guards when there is nothing to record or observe. Recording a one-output op makes
// no heap allocation beyond the node's (its object and vectors come from the small-block lists).

/// Records the node of a primitive whose forward made outputs[0..n) from `inputs` (some input
/// requires grad, grad mode on): its edges, input metadata, saved tensors, and the outputs' history.
template <class Bwd>
void record_node(const char* name, TensorList inputs, unsigned save, Bwd&& bwd, Tensor* outputs, std::size_t n) {
  using Node = LambdaNode<std::decay_t<Bwd>>;
  auto node = std::allocate_shared<Node>(SmallBlockAllocator<Node>(), std::forward<Bwd>(bwd));
  node->op = name;
  node->ctx.name_ = name;
  node->ctx.node_ = node.get();
  node->next.reserve(inputs.size());
  node->input_meta.reserve(inputs.size());
  for (const auto& t : inputs) {
    node->next.push_back(gradient_edge(t));
    node->input_meta.push_back(TensorMeta::of(t));
  }
  if (save & kSaveInputs) {
    for (const auto& t : inputs) node->ctx.inputs_.emplace_back(t, false, nullptr);
  } else if (save >> 8) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if ((save >> (8 + i)) & 1u) node->ctx.inputs_.emplace_back(inputs[i], false, nullptr);
      else node->ctx.inputs_.emplace_back();
    }
  }
  attach_outputs(node, outputs, n);
  if (save & kSaveOutputs)
    for (std::size_t i = 0; i < n; ++i) node->ctx.outputs_.emplace_back(outputs[i], true, node);
}

// Note [replayable forwards]
// A static-graph trace (phasor::jit, Note [static graphs] in src/jit/trace.cpp) keeps a copy of each primitive's
// forward and backward and calls them again, after the op's function has returned, with other tensors of the
// same shapes, dtypes, devices and strides. So a forward captures by value only (never [&], `this` or a pointer
// to a local), reads its tensors only through `in` (a captured tensor must not depend on the inputs' values),
// and does inside itself whatever depends on the inputs' values (index bound checks, value-dependent branches).
// Shape and dtype checks may stay outside: a replay is specialised to the traced shapes and checks them.

/// Runs a differentiable primitive: forward kernel (grad mode off), then records the node (and, while tracing,
/// the step: Note [replayable forwards]).
template <class Fwd, class Bwd>
std::vector<Tensor> apply_op_n(const char* name, TensorList inputs, unsigned save, Fwd&& fwd,
                               Bwd&& bwd) {
  const bool observed = g_num_observers.load(std::memory_order_relaxed) > 0;
  const bool traced = observed && tracing();  // a trace counts as an observer (no fast path while it runs)
  const std::vector<Tensor> seen = observe_begin(observed, name, true, inputs);
  std::vector<Tensor> outputs = as_vector(run_forward(fwd, inputs));
  if (traced)
    trace_step(name, inputs, outputs, [name = intern_name(name), save, f = fwd, b = bwd](TensorList in) {
      return apply_op_n(name, in, save, f, b);
    });
  if (any_requires_grad(inputs))
    record_node(name, inputs, save, std::forward<Bwd>(bwd), outputs.data(), outputs.size());
  if (observed) notify_end(name, true, seen, outputs);
  return outputs;
}

/// apply_op_n for a primitive with one output.
template <class Fwd, class Bwd>
Tensor apply_op(const char* name, TensorList inputs, unsigned save, Fwd&& fwd, Bwd&& bwd) {
  using R = std::decay_t<decltype(fwd(inputs))>;
  if constexpr (std::is_same_v<R, Tensor>) {
    // Fast paths (Note [dispatch cost]), nobody watching. Nothing to record: no input requires grad,
    // so nested ops in the forward record nothing either and no guard is needed. A node to record:
    // the output stays a Tensor, with no vector around it.
    if (g_num_observers.load(std::memory_order_relaxed) == 0) {
      if (!any_requires_grad(inputs)) return fwd(inputs);
      Tensor out = run_forward(fwd, inputs);
      record_node(name, inputs, save, std::forward<Bwd>(bwd), &out, 1);
      return out;
    }
  }
  return std::move(apply_op_n(name, inputs, save, std::forward<Fwd>(fwd), std::forward<Bwd>(bwd))[0]);
}

/// A composition of other ops: observers see it as one call (with its primitives nested).
template <class Fn>
auto composite(const char* name, TensorList inputs, Fn&& fn) {
  if (g_num_observers.load(std::memory_order_relaxed) == 0) return fn();
  const std::vector<Tensor> seen = observe_begin(true, name, false, inputs);
  auto r = [&] {
    DepthGuard depth;
    return fn();
  }();
  notify_end(name, false, seen, as_vector(r));
  return r;
}

// Note [in-place and autograd]
// Without a graph to record, an in-place op runs its kernel on self and bumps the storage
// version (shared by all views). With one, it computes the out-of-place result from an alias
// of self that keeps self's old history, copies the values into self and points self's
// grad_fn at the result's node ("rebasing"). Saved tensors remember the version they were
// saved at, so a backward that needs values overwritten later fails with a clear error
// instead of a silently wrong gradient. Two cases are refused outright: a leaf that requires grad
// (its .grad would no longer describe its values) and a view while recording (the base's
// history cannot be rebased from the view). The out-of-place op runs on a differentiable
// clone of self, so the tensors it saves for backward survive the write into self.

/// Runs an in-place op (Note [in-place and autograd]): `kernel()` writes into self directly
/// when no graph is needed; otherwise `out_of_place()` computes the differentiable result,
/// its values are copied into self and self's history is rebased onto it.
template <class Kernel, class OutOfPlace>
Tensor& apply_inplace(const char* name, Tensor& self, TensorList others, Kernel&& kernel, OutOfPlace&& out_of_place);

/// Implementation detail of apply_inplace (non-template part).
void check_inplace_autograd(const char* name, const Tensor& self, TensorList others);
/// Throws phasor::Error(name, ...) when self has elements sharing memory (a stride of 0 over a dim of size
/// > 1: the write order would decide the values) or an input shares memory with self other than element
/// for element (x.div_(x[0]), x[1:].add_(x[:-1])): on a GPU that is a race, on the CPU an accident of the
/// loop order. Inputs that are self itself (x.mul_(x)) or a same-layout view of it are fine.
void check_inplace_overlap(const char* name, const Tensor& self, TensorList others);
void rebase_history(Tensor& self, const Tensor& result);
/// Makes a view behind its root's history a view of the root's current history (Note [views and in-place history]).
void refresh_view(const Tensor& view);
Tensor shallow_alias(const Tensor& self);

template <class Kernel, class OutOfPlace>
Tensor& apply_inplace(const char* name, Tensor& self, TensorList others, Kernel&& kernel, OutOfPlace&& out_of_place) {
  check_inplace_overlap(name, self, others);
  if (__builtin_expect(tracing(), 0)) return trace_inplace(name, self, others, out_of_place);
  bool needs_graph = GradMode::is_enabled() && (self.requires_grad() || any_requires_grad(others));
  if (!needs_graph) {
    const bool observed = g_num_observers.load(std::memory_order_relaxed) > 0;
    std::vector<Tensor> in;
    if (observed) {
      in.reserve(others.size() + 1);
      in.push_back(self);
      in.insert(in.end(), others.begin(), others.end());
      notify_begin(name, true, in);
    }
    kernel();
    bump_version(self);
    if (observed) notify_end(name, true, in, {self});
    return self;
  }
  check_inplace_autograd(name, self, others);
  // The op sees a (differentiable) copy of self, so whatever it saves for backward is not
  // overwritten when the result is copied into self below.
  Tensor result = out_of_place(shallow_alias(self).clone());
  rebase_history(self, result);
  return self;
}

void copy_into(const Tensor& dst, const Tensor& src);  // core/elementwise.cpp

/// apply_inplace for an op without an in-place kernel of its own: without a graph, the values of op(self) (the
/// out-of-place form) are copied into self; with one, op runs as out_of_place.
template <class OutOfPlace>
Tensor& inplace_from(const char* name, Tensor& self, TensorList others, OutOfPlace&& op) {
  return apply_inplace(name, self, others, [&] { copy_into(self, op(self)); }, op);
}

}  // namespace phasor::detail
