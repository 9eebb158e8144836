// src/jit/trace.cpp - phasor::jit (phasor/jit.hpp): static graphs recorded from an eager run and replayed.
//
// Note [static graphs]
// trace(fn, inputs) runs fn once, eagerly, with a Tracer installed on the calling thread. Every primitive call
// that no other primitive encloses reports to it (apply_op, apply_nondiff: trace_step), with a copy of its
// forward and backward (Note [replayable forwards] in autodiff/node.hpp); so does work that must replay as one
// unit (trace_opaque): the random sources (each replay draws anew, advancing the generator as eager code would),
// custom functions (replayed with their own backward) and detach (a replay must cut the history too). A replay
// runs the steps in order through the same apply_op, so it records autograd history like eager code, and it
// never runs fn's own host logic (argument checks, shape arithmetic, composite ops' glue) again.
//
// Each tensor the trace sees gets a value number: an input, a constant or a step's output. A tensor it has not
// seen is matched by its storage: a tensor with the layout of a known value over the same memory is that value
// (shallow aliases, unpacked saved tensors); any other tensor over a step's memory was derived by code the trace
// cannot see and is refused; the rest are constants, read by every replay as they are then (module parameters:
// an optimizer's in-place updates are seen). Shapes, strides, dtypes and devices are fixed by the trace: a replay
// checks each step's inputs against what the trace saw and throws when they differ (fn's shapes depended on
// values, as nonzero's do). Host decisions made on values (item(), to_vector) cannot be seen at all: they are
// baked in, and TraceOptions::check_inputs exists to catch them.
//
// So every computation on values must happen inside a step. Ops obey that by construction (value-dependent work of
// composites is a step of its own: Note [value steps] in core/pointwise.hpp); two places need care: a composite
// that calls a kernel directly when nothing needs a gradient takes its op path while tracing (detail::tracing()),
// and a backward pass runs with grad mode on while tracing, so that formulas with a kernel-only fast path for the
// no-graph case take their op path. Creation functions run untraced: what they make is a constant, and steps that
// read only such constants are computed once, when tracing (TraceOptions::fold_constants). A replay whose inputs
// require grad must come from a trace whose inputs did (ops choose paths by it); CompiledFunction keys on it.
//
// Note [in-place ops in traces]
// A replay makes new tensors for every step, so it has no memory to write into: an in-place op while tracing
// runs as its out-of-place form on a recorded clone of its target, writes the result into the target (the
// eager run stays correct) and rebinds the target to the result, so later reads see the new value. That is
// only sound when nothing else reads the old memory: writing into an input or a tensor that existed before the
// trace (a side effect outside the graph) is refused, and so is writing into a tensor that shares memory with
// other values of the trace (a view). A constant the function made itself (zeros it then fills) is copied
// before its first write, so the steps that read it earlier keep reading the old values.
#include "phasor/jit.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "jit/tracer.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {
namespace jit::detail {

/// Where a value comes from.
enum class Kind { Input, Constant, Step };

/// One value of a graph: an input, a constant (its tensor) or a step's output.
struct Value {
  Kind kind = Kind::Constant;
  int producer = -1;  ///< the step that makes it (Kind::Step)
  int index = 0;      ///< which input (Kind::Input) or which output of the step (Kind::Step)
  Tensor constant;    ///< the tensor a replay reads (Kind::Constant)
  Shape shape;        ///< shape when traced
  Dtype dtype = Dtype::Float32;  ///< dtype when traced
  Device device;      ///< device when traced
  bool local = false; ///< a constant the traced function made (immutable: copied before any write)
};

/// One recorded op call.
struct Step {
  const char* name = "";
  ::phasor::detail::StepFn run;
  std::vector<int> in;            ///< value numbers of its inputs (-1: an undefined tensor)
  std::vector<int> out;           ///< value numbers of its outputs (-1: undefined)
  std::vector<InputSpec> in_specs;  ///< what each input looked like when traced
  bool effect = false;            ///< kept even when no output is used (a random draw)
};

/// A recorded graph.
struct GraphImpl {
  std::vector<Value> values;
  std::vector<Step> steps;
  std::vector<int> inputs;                ///< value number of each input
  std::vector<int> outputs;               ///< value number of each output
  std::vector<int> constants;             ///< value numbers of the constants the steps read
  std::vector<InputSpec> specs;           ///< what each input must look like
  std::vector<std::vector<int>> release;  ///< per step: the values no later step or output reads
};

}  // namespace jit::detail

namespace detail {

using jit::detail::Kind;
using jit::detail::Value;

__attribute__((tls_model("initial-exec"))) thread_local Tracer* t_tracer = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local std::unordered_set<const Storage*>* t_new_storages = nullptr;

const char* intern_name(const char* name) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();  // never freed: nodes may outlive every graph
  std::lock_guard<std::mutex> lk(mu);
  return names->insert(name).first->c_str();
}

namespace {

/// t's layout as a graph input spec.
jit::InputSpec spec_of(const Tensor& t) {
  return jit::InputSpec{t.shape(), t.strides(), t.dtype(), t.device(), t.requires_grad()};
}

/// Same shape and the same strides over the dims of size > 1 (a size-1 dim's stride is never used).
bool same_layout(const Shape& shape_a, const Shape& strides_a, const Shape& shape_b, const Shape& strides_b) {
  if (shape_a != shape_b) return false;
  for (std::size_t d = 0; d < shape_a.size(); ++d)
    if (shape_a[d] > 1 && strides_a[d] != strides_b[d]) return false;
  return true;
}

std::string describe(const Shape& shape, Dtype dtype, const Device& device) {
  return std::string(dtype_name(dtype)) + " " + shape_str(shape) + " on " + device.str();
}

}  // namespace

/// The trace being recorded on one thread (Note [static graphs]).
class Tracer {
 public:
  jit::detail::GraphImpl g;
  std::unordered_set<const Storage*> new_storages;  ///< memory made during the trace (t_new_storages)

  /// A tensor seen over some memory: its layout and value number.
  struct Seen {
    Shape shape, strides;
    std::int64_t offset = 0;
    Dtype dtype = Dtype::Float32;
    int id = -1;
  };

  /// Gives t the value number of a new value v.
  int add_value(const Tensor& t, Value v) {
    const int id = static_cast<int>(g.values.size());
    v.shape = t.shape();
    v.dtype = t.dtype();
    v.device = t.device();
    if (v.kind == Kind::Constant) v.local = new_storages.count(t.impl()->storage.get()) > 0;
    g.values.push_back(std::move(v));
    traced_.push_back(t);
    bind(t, id);
    return id;
  }

  /// Turns the steps that read only constants the function made itself (never written after) into constants: their
  /// traced outputs are what every replay would compute (Note [static graphs]). Random draws stay steps.
  void fold_constants() {
    for (auto& s : g.steps) {
      if (s.effect || s.in.empty()) continue;
      bool foldable = true;
      for (int id : s.in) {
        if (id < 0) continue;
        const Value& v = g.values[static_cast<std::size_t>(id)];
        foldable = foldable && v.kind == Kind::Constant && v.local && !v.constant.requires_grad();
      }
      for (int id : s.out)
        foldable = foldable && (id < 0 || (!dirty_.count(traced_[static_cast<std::size_t>(id)].impl()->storage.get()) &&
                                           !traced_[static_cast<std::size_t>(id)].requires_grad()));
      if (!foldable) continue;
      for (int id : s.out) {
        if (id < 0) continue;
        Value& v = g.values[static_cast<std::size_t>(id)];
        v.kind = Kind::Constant;
        v.local = true;
        v.constant = traced_[static_cast<std::size_t>(id)];
        v.producer = -1;
      }
      s.run = nullptr;  // dropped by finish
    }
  }

  /// Makes t (and tensors over its memory with its layout) read as value `id` from now on.
  void bind(const Tensor& t, int id) {
    ids_[t.impl()] = id;
    held_.push_back(t);
    by_storage_[t.impl()->storage.get()].push_back(Seen{t.shape(), t.strides(), t.storage_offset(), t.dtype(), id});
  }

  /// The value number of t, making it a constant when it is new (Note [static graphs]); -1 for undefined.
  int resolve(const Tensor& t, const char* op) {
    if (!t.defined()) return -1;
    if (auto it = ids_.find(t.impl()); it != ids_.end()) return it->second;
    const Storage* st = t.impl()->storage.get();
    if (auto bs = by_storage_.find(st); bs != by_storage_.end()) {
      for (auto s = bs->second.rbegin(); s != bs->second.rend(); ++s)
        if (s->dtype == t.dtype() && s->offset == t.storage_offset() && same_layout(s->shape, s->strides, t.shape(), t.strides())) {
          ids_[t.impl()] = s->id;
          held_.push_back(t);
          return s->id;
        }
      bool outside = false;  // the memory belongs to an input or a constant
      for (const Seen& s : bs->second) outside = outside || g.values[static_cast<std::size_t>(s.id)].kind != Kind::Step;
      if (dirty_.count(st) || !outside)
        throw Error(op, "reads a tensor (" + describe(t.shape(), t.dtype(), t.device()) +
                            ") made from a traced tensor by code the trace cannot see (a view or copy made without an "
                            "op, or memory written in place), so it cannot be traced (Note [static graphs])");
    }
    Value v;
    v.kind = Kind::Constant;
    v.constant = t;
    return add_value(t, std::move(v));
  }

  /// Records a step that made `outputs` from `inputs`.
  void step(const char* name, TensorList inputs, const std::vector<Tensor>& outputs, StepFn run, bool effect) {
    jit::detail::Step s;
    s.name = intern_name(name);
    s.run = std::move(run);
    s.effect = effect;
    for (const Tensor& t : inputs) {
      s.in.push_back(resolve(t, name));
      s.in_specs.push_back(t.defined() ? spec_of(t) : jit::InputSpec{});
    }
    const int k = static_cast<int>(g.steps.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined()) {
        s.out.push_back(-1);
        continue;
      }
      Value v;
      v.kind = Kind::Step;
      v.producer = k;
      v.index = static_cast<int>(i);
      s.out.push_back(add_value(outputs[i], std::move(v)));
    }
    g.steps.push_back(std::move(s));
  }

  /// Checks that `self` may be written in place (Note [in-place ops in traces]) and copies a constant the trace made
  /// before its first write.
  void prepare_write(const char* name, const Tensor& self) {
    const int id = resolve(self, name);
    const Storage* st = self.impl()->storage.get();
    const std::string what = describe(self.shape(), self.dtype(), self.device());
    for (const Seen& s : by_storage_[st]) {  // the memory of an input or of an outside tensor (views of them too)
      const Value& o = g.values[static_cast<std::size_t>(s.id)];
      if (o.kind == Kind::Input)
        throw Error(name, "writes into input " + std::to_string(o.index) + " (" + what +
                              ") of the traced function: a traced function must not change its inputs; use the "
                              "out-of-place op");
      if (o.kind == Kind::Constant && !new_storages.count(st))
        throw Error(name, "writes into a tensor (" + what +
                              ") that existed before the trace (a parameter or a buffer?): a traced function must not "
                              "change tensors outside it; use the out-of-place op");
    }
    for (const Seen& s : by_storage_[st])
      if (s.id != id && !(s.dtype == self.dtype() && s.offset == self.storage_offset() &&
                          same_layout(s.shape, s.strides, self.shape(), self.strides())))
        throw Error(name, "writes into a tensor (" + what +
                              ") that shares memory with other tensors of the traced function (a view?), which a "
                              "replay cannot update; use the out-of-place op");
    for (const Seen& s : by_storage_[st]) {
      Value& c = g.values[static_cast<std::size_t>(s.id)];
      if (c.kind == Kind::Constant && c.constant.impl()->storage.get() == st) {
        TraceSuspend untraced;
        NoGradGuard no_grad;
        Tensor copy = make_tensor(c.constant.shape(), c.constant.dtype(), c.constant.device());
        copy_into(copy, c.constant);
        c.constant = copy;
      }
    }
    dirty_.insert(st);
  }

  /// True for memory the trace made and has not seen yet (trace_initializes).
  bool fresh(const Tensor& t) const {
    const Storage* st = t.impl()->storage.get();
    return new_storages.count(st) && !ids_.count(t.impl()) && !by_storage_.count(st);
  }
  /// True for a fresh tensor or a constant the traced function made.
  bool local_constant(const Tensor& t) const {
    if (fresh(t)) return true;
    auto it = ids_.find(t.impl());
    if (it == ids_.end()) return false;
    const Value& v = g.values[static_cast<std::size_t>(it->second)];
    return v.kind == Kind::Constant && v.local && !dirty_.count(t.impl()->storage.get());
  }

 private:
  std::vector<Tensor> traced_;  // each value's tensor when traced, by value number
  std::unordered_map<const TensorImpl*, int> ids_;
  std::vector<Tensor> held_;  // every tensor given a number, alive until the trace ends (their memory is not reused)
  std::unordered_map<const Storage*, std::vector<Seen>> by_storage_;
  std::unordered_set<const Storage*> dirty_;  // memory written in place during the trace
};

void trace_step(const char* name, TensorList inputs, const std::vector<Tensor>& outputs, StepFn run) {
  t_tracer->step(name, inputs, outputs, std::move(run), false);
}

std::vector<Tensor> trace_opaque(const char* name, TensorList inputs, StepFn run) {
  Tracer* tr = t_tracer;
  std::vector<Tensor> out;
  {
    TraceSuspend untraced;
    out = run(inputs);
  }
  tr->step(name, inputs, out, std::move(run), /*effect=*/inputs.size() == 0);
  return out;
}

Tensor& trace_inplace(const char* name, Tensor& self, TensorList others,
                      const std::function<Tensor(const Tensor&)>& out_of_place) {
  Tracer* tr = t_tracer;
  bool initializes = tr->fresh(self);  // memory the function just made, written from its own constants
  for (const Tensor& t : others) initializes = initializes && (!t.defined() || tr->local_constant(t));
  if (initializes) {
    TraceSuspend untraced;
    NoGradGuard no_grad;
    const Tensor r = out_of_place(self);
    copy_into(self, r.dtype() == self.dtype() ? r : r.to(self.dtype()));
    bump_version(self);
    return self;
  }
  tr->prepare_write(name, self);
  const bool needs_graph = GradMode::is_enabled() && (self.requires_grad() || any_requires_grad(others));
  if (needs_graph) check_inplace_autograd(name, self, others);
  Tensor result = out_of_place(shallow_alias(self).clone());
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  const int id = tr->resolve(result, name);
  {
    TraceSuspend untraced;
    if (needs_graph) {
      rebase_history(self, result);
    } else {
      NoGradGuard no_grad;
      copy_into(self, result);
      bump_version(self);
    }
  }
  tr->bind(self, id);  // later reads of self read the result
  return self;
}

void refuse_untraced_random(const char* op) {
  throw Error(op, "draws random numbers outside a recorded step while tracing, so a replay would repeat them; it "
                  "cannot be traced (Note [static graphs])");
}

}  // namespace detail

namespace jit {

using detail::GraphImpl;
using detail::Kind;

namespace {

std::string spec_str(const InputSpec& s) { return phasor::detail::describe(s.shape, s.dtype, s.device); }

bool is_contiguous_spec(const InputSpec& s) {
  return phasor::detail::same_layout(s.shape, s.strides, s.shape, phasor::detail::contiguous_strides(s.shape));
}

/// Drops the steps nothing needs, lists the constants read and when each value is last read.
void finish(GraphImpl& g, bool eliminate_dead) {
  std::vector<char> needed(g.values.size(), 0);
  for (int id : g.outputs)
    if (id >= 0) needed[static_cast<std::size_t>(id)] = 1;
  std::vector<char> live(g.steps.size(), 1);
  for (std::size_t k = g.steps.size(); k-- > 0;) {
    const auto& s = g.steps[k];
    if (!s.run) {  // folded into constants
      live[k] = 0;
      continue;
    }
    bool used = s.effect || !eliminate_dead;
    for (int id : s.out) used = used || (id >= 0 && needed[static_cast<std::size_t>(id)]);
    live[k] = used;
    if (used)
      for (int id : s.in)
        if (id >= 0) needed[static_cast<std::size_t>(id)] = 1;
  }
  std::vector<detail::Step> kept;
  for (std::size_t k = 0; k < g.steps.size(); ++k)
    if (live[k]) kept.push_back(std::move(g.steps[k]));
  g.steps = std::move(kept);
  for (std::size_t k = 0; k < g.steps.size(); ++k)
    for (int id : g.steps[k].out)
      if (id >= 0) g.values[static_cast<std::size_t>(id)].producer = static_cast<int>(k);
  // constants: the ones read, the rest freed
  for (std::size_t id = 0; id < g.values.size(); ++id) {
    auto& v = g.values[id];
    if (v.kind != Kind::Constant) continue;
    if (needed[id]) g.constants.push_back(static_cast<int>(id));
    else v.constant = Tensor();
  }
  // last reads
  std::vector<int> last(g.values.size(), -1);
  for (std::size_t k = 0; k < g.steps.size(); ++k)
    for (int id : g.steps[k].in)
      if (id >= 0) last[static_cast<std::size_t>(id)] = static_cast<int>(k);
  for (int id : g.outputs)
    if (id >= 0) last[static_cast<std::size_t>(id)] = static_cast<int>(g.steps.size());
  g.release.assign(g.steps.size(), {});
  for (std::size_t id = 0; id < g.values.size(); ++id)
    if (last[id] >= 0 && last[id] < static_cast<int>(g.steps.size()))
      g.release[static_cast<std::size_t>(last[id])].push_back(static_cast<int>(id));
}

/// max |a - b| / max(1, max |b|) in float64 (NaN matching NaN counts as equal); inf when shapes or dtypes differ.
double mismatch(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return INFINITY;
  if (!a.defined()) return 0;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return INFINITY;
  if (a.numel() == 0) return 0;
  NoGradGuard no_grad;
  const Tensor x = a.detach().to(Device::cpu()), y = b.detach().to(Device::cpu());
  const Tensor same = (x.isnan() & y.isnan()) | (x == y);
  const Tensor zero = zeros({}, float64);
  const Tensor diff = (x.to(x.is_complex() ? complex128 : float64) - y.to(y.is_complex() ? complex128 : float64)).abs();
  const double dmax = where(same, zero, diff).max().item<double>();
  const double ymax = where(y.isnan() | y.isinf(), zero, y.to(y.is_complex() ? complex128 : float64).abs()).max().item<double>();
  return dmax / std::max(1.0, ymax);
}

}  // namespace

/// What CompiledFunction needs of trace beyond the public call: the traced run's outputs.
struct TraceAccess {
  static Graph trace(const Function& fn, const std::vector<Tensor>& inputs, const TraceOptions& options,
                     std::vector<Tensor>* outputs_out);
};

Graph TraceAccess::trace(const Function& fn, const std::vector<Tensor>& inputs, const TraceOptions& options,
                         std::vector<Tensor>* outputs_out) {
  const char* op = "jit.trace";
  if (!fn) throw Error(op, "the function is empty");
  if (phasor::detail::t_new_storages)
    throw Error(op, "a trace is already being recorded on this thread; traces do not nest");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined()) throw Error(op, "example input " + std::to_string(i) + " is undefined");
  auto tracer = std::make_unique<phasor::detail::Tracer>();
  auto& g = tracer->g;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    jit::detail::Value v;
    v.kind = Kind::Input;
    v.index = static_cast<int>(i);
    g.inputs.push_back(tracer->add_value(inputs[i], std::move(v)));
    g.specs.push_back(phasor::detail::spec_of(inputs[i]));
  }
  std::vector<Tensor> outputs;
  {
    struct Install {  // the tracer is installed for fn's run only, whatever happens
      explicit Install(phasor::detail::Tracer* t) {
        phasor::detail::g_num_observers.fetch_add(1);  // no fast paths: every primitive reports (apply_op)
        phasor::detail::t_tracer = t;
        phasor::detail::t_new_storages = &t->new_storages;
      }
      ~Install() {
        phasor::detail::t_tracer = nullptr;
        phasor::detail::t_new_storages = nullptr;
        phasor::detail::g_num_observers.fetch_sub(1);
      }
    } install(tracer.get());
    outputs = fn(inputs);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined()) throw Error(op, "output " + std::to_string(i) + " of the traced function is undefined");
    g.outputs.push_back(tracer->resolve(outputs[i], op));
  }
  if (options.fold_constants) tracer->fold_constants();
  finish(g, options.eliminate_dead_steps);
  Graph graph;
  graph.impl_ = std::make_shared<const GraphImpl>(std::move(g));
  tracer.reset();
  for (std::size_t c = 0; c < options.check_inputs.size(); ++c) {
    const auto& check = options.check_inputs[c];
    const std::vector<Tensor> want = fn(check), got = graph(check);
    if (want.size() != got.size())
      throw Error(op, "check_inputs[" + std::to_string(c) + "]: the function returned " + std::to_string(want.size()) +
                          " outputs, the graph " + std::to_string(got.size()));
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double d = mismatch(got[i], want[i]);
      if (!(d <= options.check_tolerance)) {
        std::ostringstream msg;
        msg << "check_inputs[" << c << "]: output " << i << " of the graph differs from the function's (relative "
            << "difference " << d << " > " << options.check_tolerance
            << "): the function's ops depend on its inputs' values (item(), to_vector, data-dependent branches), "
               "which a trace cannot follow";
        throw Error(op, msg.str());
      }
    }
  }
  if (outputs_out) *outputs_out = std::move(outputs);
  return graph;
}

Graph trace(const Function& fn, const std::vector<Tensor>& example_inputs, const TraceOptions& options) {
  return TraceAccess::trace(fn, example_inputs, options, nullptr);
}

Graph trace(const std::function<Tensor(const Tensor&)>& fn, const Tensor& example_input, const TraceOptions& options) {
  if (!fn) throw Error("jit.trace", "the function is empty");
  return trace([fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; }, {example_input}, options);
}

Graph::Graph() = default;

std::vector<Tensor> Graph::operator()(const std::vector<Tensor>& inputs) const {
  const char* op = "jit.Graph";
  if (!impl_) throw Error(op, "the graph is empty (nothing was traced)");
  const GraphImpl& g = *impl_;
  if (inputs.size() != g.inputs.size())
    throw Error(op, "expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  std::vector<Tensor> vals(g.values.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    const InputSpec& s = g.specs[i];
    if (!x.defined()) throw Error(op, "input " + std::to_string(i) + " is undefined");
    if (x.shape() != s.shape || x.dtype() != s.dtype || x.device() != s.device)
      throw Error(op, "input " + std::to_string(i) + ": the graph was traced for " + spec_str(s) + ", got " +
                          phasor::detail::describe(x.shape(), x.dtype(), x.device()));
    if (x.requires_grad() && !s.requires_grad && GradMode::is_enabled())
      throw Error(op, "input " + std::to_string(i) + " requires grad but the graph was traced with one that does not, "
                          "and ops may have taken paths without a gradient; trace with an input that requires grad");
    if (phasor::detail::same_layout(x.shape(), x.strides(), s.shape, s.strides)) {
      vals[static_cast<std::size_t>(g.inputs[i])] = x;
    } else if (is_contiguous_spec(s)) {
      vals[static_cast<std::size_t>(g.inputs[i])] = x.clone();  // a contiguous copy, differentiable
    } else {
      throw Error(op, "input " + std::to_string(i) + " has strides " + phasor::detail::shape_str(x.strides()) +
                          " but the graph was traced for strides " + phasor::detail::shape_str(s.strides) +
                          "; pass a tensor of that layout or trace with a contiguous one");
    }
  }
  for (int id : g.constants) vals[static_cast<std::size_t>(id)] = g.values[static_cast<std::size_t>(id)].constant;
  std::vector<Tensor> in;
  for (std::size_t k = 0; k < g.steps.size(); ++k) {
    const detail::Step& s = g.steps[k];
    in.clear();
    for (std::size_t j = 0; j < s.in.size(); ++j) {
      in.push_back(s.in[j] < 0 ? Tensor() : vals[static_cast<std::size_t>(s.in[j])]);
      const Tensor& t = in.back();
      const InputSpec& want = s.in_specs[j];
      if (t.defined() && !(t.dtype() == want.dtype && t.device() == want.device &&
                           phasor::detail::same_layout(t.shape(), t.strides(), want.shape, want.strides)))
        throw Error(op, "step " + std::to_string(k) + " (" + s.name + "): input " + std::to_string(j) + " is " +
                            phasor::detail::describe(t.shape(), t.dtype(), t.device()) + " with strides " +
                            phasor::detail::shape_str(t.strides()) + ", the trace saw " + spec_str(want) +
                            " with strides " + phasor::detail::shape_str(want.strides) +
                            ": the function's shapes depend on its inputs' values, so this graph cannot replay them");
    }
    std::vector<Tensor> out = s.run(phasor::detail::TensorList(in));
    if (out.size() != s.out.size())
      throw Error(op, "step " + std::to_string(k) + " (" + s.name + ") returned " + std::to_string(out.size()) +
                          " outputs, the trace saw " + std::to_string(s.out.size()));
    for (std::size_t j = 0; j < out.size(); ++j)
      if (s.out[j] >= 0) vals[static_cast<std::size_t>(s.out[j])] = std::move(out[j]);
    for (int id : g.release[k]) vals[static_cast<std::size_t>(id)] = Tensor();
  }
  std::vector<Tensor> result;
  result.reserve(g.outputs.size());
  for (int id : g.outputs) result.push_back(vals[static_cast<std::size_t>(id)]);
  return result;
}

std::size_t Graph::num_inputs() const { return impl_ ? impl_->inputs.size() : 0; }
std::size_t Graph::num_outputs() const { return impl_ ? impl_->outputs.size() : 0; }
std::size_t Graph::num_steps() const { return impl_ ? impl_->steps.size() : 0; }
std::size_t Graph::num_constants() const { return impl_ ? impl_->constants.size() : 0; }

const std::vector<InputSpec>& Graph::input_specs() const {
  static const std::vector<InputSpec> none;
  return impl_ ? impl_->specs : none;
}

std::map<std::string, std::int64_t> Graph::op_counts() const {
  std::map<std::string, std::int64_t> counts;
  if (impl_)
    for (const auto& s : impl_->steps) ++counts[s.name];
  return counts;
}

namespace {
std::string value_type(const detail::Value& v) {
  std::string s = std::string(dtype_name(v.dtype)) + phasor::detail::shape_str(v.shape);
  if (!v.device.is_cpu()) s += " " + v.device.str();
  return s;
}
std::string ref(int id) { return id < 0 ? std::string("None") : "%" + std::to_string(id); }
}  // namespace

std::string Graph::str() const {
  if (!impl_) return "graph() {}\n";
  const GraphImpl& g = *impl_;
  std::ostringstream o;
  o << "graph(";
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    o << (i ? ", " : "") << ref(g.inputs[i]) << ": " << value_type(g.values[static_cast<std::size_t>(g.inputs[i])]);
  o << ") {\n";
  for (int id : g.constants) o << "  " << ref(id) << ": " << value_type(g.values[static_cast<std::size_t>(id)]) << " = constant\n";
  for (const auto& s : g.steps) {
    o << "  ";
    for (std::size_t j = 0; j < s.out.size(); ++j) {
      o << (j ? ", " : "") << ref(s.out[j]);
      if (s.out[j] >= 0) o << ": " << value_type(g.values[static_cast<std::size_t>(s.out[j])]);
    }
    o << " = " << s.name << "(";
    for (std::size_t j = 0; j < s.in.size(); ++j) o << (j ? ", " : "") << ref(s.in[j]);
    o << ")\n";
  }
  o << "  return (";
  for (std::size_t i = 0; i < g.outputs.size(); ++i) o << (i ? ", " : "") << ref(g.outputs[i]);
  o << ")\n}\n";
  return o.str();
}

std::string Graph::to_dot() const {
  std::ostringstream o;
  o << "digraph phasor_graph {\n  node [fontname=\"monospace\"];\n";
  if (impl_) {
    const GraphImpl& g = *impl_;
    auto source = [&](int id) -> std::string {  // the node a value comes from
      const auto& v = g.values[static_cast<std::size_t>(id)];
      if (v.kind == Kind::Step) return "s" + std::to_string(v.producer);
      return "v" + std::to_string(id);
    };
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "  v" << g.inputs[i] << " [shape=box, label=\"input " << i << "\\n"
        << value_type(g.values[static_cast<std::size_t>(g.inputs[i])]) << "\"];\n";
    for (int id : g.constants)
      o << "  v" << id << " [shape=box, style=dashed, label=\"constant\\n" << value_type(g.values[static_cast<std::size_t>(id)])
        << "\"];\n";
    for (std::size_t k = 0; k < g.steps.size(); ++k) {
      const auto& s = g.steps[k];
      o << "  s" << k << " [shape=ellipse, label=\"" << s.name << "\"];\n";
      for (int id : s.in)
        if (id >= 0)
          o << "  " << source(id) << " -> s" << k << " [label=\"" << value_type(g.values[static_cast<std::size_t>(id)]) << "\"];\n";
    }
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      o << "  out" << i << " [shape=box, style=bold, label=\"output " << i << "\"];\n";
      o << "  " << source(g.outputs[i]) << " -> out" << i << ";\n";
    }
  }
  o << "}\n";
  return o.str();
}

// ---- compile -------------------------------------------------------------------------------------------------

namespace {
/// The signature a CompiledFunction keys its graphs on.
std::string signature(const std::vector<Tensor>& inputs) {
  std::string key = GradMode::is_enabled() ? "g" : "n";
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      key += "|undef";
      continue;
    }
    key += "|" + std::string(dtype_name(t.dtype())) + t.device().str() + phasor::detail::shape_str(t.shape()) +
           phasor::detail::shape_str(t.strides()) + (t.requires_grad() ? "r" : "");
  }
  return key;
}
}  // namespace

CompiledFunction::CompiledFunction(Function fn, TraceOptions options) : fn_(std::move(fn)), options_(std::move(options)) {
  if (!fn_) throw Error("jit.compile", "the function is empty");
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) {
  if (phasor::detail::t_new_storages) return fn_(inputs);  // inside another trace: fn's ops are recorded there
  const std::string key = signature(inputs);
  if (auto it = graphs_.find(key); it != graphs_.end()) return it->second(inputs);
  std::vector<Tensor> outputs;
  Graph g = TraceAccess::trace(fn_, inputs, options_, &outputs);
  graphs_.emplace(key, std::move(g));
  return outputs;
}

const Graph& CompiledFunction::graph_for(const std::vector<Tensor>& inputs) {
  const std::string key = signature(inputs);
  if (auto it = graphs_.find(key); it != graphs_.end()) return it->second;
  return graphs_.emplace(key, TraceAccess::trace(fn_, inputs, options_, nullptr)).first->second;
}

CompiledFunction compile(Function fn, TraceOptions options) { return CompiledFunction(std::move(fn), std::move(options)); }

}  // namespace jit
}  // namespace phasor
