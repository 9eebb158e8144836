// src/autodiff/engine.cpp - grad mode, saved tensors, leaf accumulation and the backward engine.
#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "autodiff/node.hpp"
#include "core/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"
#include "phasor/profiler.hpp"

namespace phasor {

namespace {
__attribute__((tls_model("initial-exec"))) thread_local bool t_grad_enabled = true;
}
bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }

namespace detail {

std::uint64_t next_sequence_nr() {
  static std::atomic<std::uint64_t> seq{0};
  return seq.fetch_add(1, std::memory_order_relaxed);
}

bool any_requires_grad(TensorList inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const auto& t : inputs)
    if (t.defined() && t.impl()->requires_grad()) return true;
  return false;
}

// ---- saved variables ---------------------------------------------------------------------------
SavedVariable::SavedVariable(const Tensor& t, bool is_output, const std::shared_ptr<OpNode>& node)
    : is_output_(is_output) {
  if (!t.defined()) return;
  version_ = t.impl()->storage->version;
  requires_grad_ = t.requires_grad();
  if (is_output) {
    // Keep only the data: a strong reference to the output's grad_fn (this node) would be a cycle.
    data_ = make_view(t, t.shape(), t.strides(), t.storage_offset());
    output_nr_ = t.impl()->autograd ? t.impl()->autograd->output_nr : 0;
    node_ = node;
  } else {
    data_ = t;
  }
}

Tensor SavedVariable::unpack(const char* op) const {
  if (released_)
    throw Error(op, "trying to backward through the graph a second time (or to read saved tensors after they "
                    "were freed); pass retain_graph=true to the first backward");
  if (!data_.defined()) return data_;
  if (data_.impl()->storage->version != version_)
    throw Error(op, "a tensor saved for backward was modified by an in-place operation: it had version " +
                        std::to_string(version_) + ", now " + std::to_string(data_.impl()->storage->version));
  if (!is_output_ || !requires_grad_) return data_;
  auto node = node_.lock();
  if (!node) return data_;
  // Rebuild the output connected to its node so that double backward flows through it.
  Tensor t = make_view(data_, data_.shape(), data_.strides(), data_.storage_offset());
  auto& m = t.impl()->meta();
  m.requires_grad = true;
  m.grad_fn = node;
  m.output_nr = output_nr_;
  return t;
}

// ---- leaf accumulation ----------------------------------------------------------------------
/// True when nothing but g reaches its storage: g's impl and each base of its view chain hold one
/// storage reference each, and every base is held only by the view above it (a gradient reshaped by a
/// view op's backward keeps its base alive, which alone must not force a copy). A view is taken only when
/// it is contiguous and spans its whole storage, so .grad() keeps a dense layout and holds no more memory
/// than it shows.
bool owns_storage(const Tensor& g) {
  long chain = 1;
  for (const TensorImpl* i = g.impl(); i->view_base.defined(); i = i->view_base.impl()) {
    if (i->view_base.impl()->storage != g.impl()->storage ||
        detail::impl_counts(i->view_base.impl())->strong.load(std::memory_order_relaxed) != 1)
      return false;
    ++chain;
  }
  return g.impl()->storage.use_count() == chain &&
         (chain == 1 || (g.is_contiguous() && static_cast<std::size_t>(g.numel()) * itemsize(g.dtype()) ==
                                                  g.impl()->storage->nbytes));
}

/// Adds incoming gradients into a leaf's .grad(), after its hooks.
struct AccumulateGrad final : OpNode {
  WeakTensor leaf;
  bool create_graph = false;  // set per backward run by the engine
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor t = leaf.lock();
    if (!t.defined() || !grads[0].defined()) return {};
    if (tracing())  // Note [static graphs]: a replay makes values, it cannot write them into a leaf's .grad
      throw Error("backward", "accumulates into the .grad of a leaf while tracing, a side effect a replay cannot repeat; "
                              "return the gradients of autodiff::grad(...) from the traced function instead");
    Tensor g = grads[0];
    auto& m = t.impl()->meta();
    for (auto& [id, hook] : m.hooks) {
      Tensor r = hook(g);
      if (r.defined()) g = r;
    }
    if (!m.grad.defined()) {
      // Own the buffer (clone unless nothing else shares its storage), so that a later
      // grad().zero_() or optimizer update never writes into a tensor the user holds.
      if (create_graph) m.grad = g;
      else m.grad = owns_storage(g) ? g.detach() : g.detach().clone();
    } else {
      m.grad = create_graph ? m.grad + g : (m.grad + g).detach();
    }
    return {};
  }
  std::string name() const override { return "AccumulateGrad"; }
  bool is_accumulator() const override { return true; }
  void set_create_graph(bool c) override { create_graph = c; }
  void release() override {}  // leaves outlive every backward pass
};

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.impl()->requires_grad()) return {};
  if (__builtin_expect(t.impl()->view_is_behind(), 0)) {
    refresh_view(t);
    if (!t.impl()->requires_grad()) return {};
  }
  auto& m = t.impl()->meta();
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  auto acc = m.grad_accumulator.lock();
  if (!acc) {
    auto a = std::allocate_shared<AccumulateGrad>(SmallBlockAllocator<AccumulateGrad>());
    a->leaf = WeakTensor(t);
    a->input_meta.push_back(TensorMeta::of(t));
    a->output_meta.push_back(TensorMeta::of(t));
    a->seq = next_sequence_nr();
    m.grad_accumulator = a;
    acc = a;
  }
  return Edge{acc, 0};
}

void attach_outputs(const std::shared_ptr<OpNode>& node, Tensor* outputs, std::size_t n) {
  node->seq = next_sequence_nr();
  node->output_meta.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Tensor& o = outputs[i];
    node->output_meta.push_back(TensorMeta::of(o));
    if (!is_floating_or_complex(o.dtype())) continue;  // integer/bool outputs carry no gradient
    if (o.impl()->autograd && o.impl()->autograd->grad_fn) {
      // The forward returned a tensor that already has history (e.g. an input passed through):
      // give the output its own handle so its history can point at this node.
      o = make_view(o, o.shape(), o.strides(), o.storage_offset());
    }
    auto& m = o.impl()->meta();
    m.requires_grad = true;
    m.grad_fn = node;
    m.output_nr = static_cast<std::uint32_t>(i);
  }
}

// ---- in-place ops ------------------------------------------------------------------------------
void check_inplace_autograd(const char* name, const Tensor& self, TensorList) {
  if (self.impl()->view_is_behind()) refresh_view(self);
  if (self.is_leaf() && self.requires_grad())
    throw Error(name, "a leaf tensor that requires grad is used in an in-place operation; wrap it in a "
                      "NoGradGuard or use the out-of-place op");
  const Tensor& root = self.impl()->view_base;
  if (!root.defined()) return;
  if (root.is_leaf() && root.requires_grad())
    throw Error(name, "a view of a leaf tensor that requires grad is used in an in-place operation; wrap it in a "
                      "NoGradGuard or write into a clone of the leaf");
  if (root.dtype() != self.dtype())
    throw Error(name, std::string("an in-place operation on a ") + dtype_name(self.dtype()) + " view of a " +
                          dtype_name(root.dtype()) + " tensor while recording gradients is not supported; use the out-of-place op");
}

// Note [views and in-place history]
// A view shares its root's storage (view_base is the root: views of views flatten). An in-place op that records
// a graph changes what the storage's values depend on, and every view over it must follow, as in PyTorch:
//  - in place on the root: the root's history is rebased onto the op's result (rebase_history);
//  - in place on a view: the root's history becomes copy_slices(the root's old history, the op's result), whose
//    gradient is g with the view's elements zeroed for the old root and g at the view's elements for the result.
// Either counts one rebase on the storage (Storage::history), and each view remembers the count its history was
// made at (TensorImpl::history_seen). A view behind the count is refreshed where its history is read for
// recording (gradient_edge, and an in-place op on the view itself): its history becomes "as_strided", a view of
// its root's current history whose gradient adds g into the root's shape at the view's elements, and it requires
// grad exactly when its root does (a view made a leaf that requires grad stays one). So a view used after its
// root, or another view of it, was written in place carries the gradient of the values it holds now, not of
// those it was made with. (Tensor::grad_fn() and is_leaf() of a view behind show its old history until it is
// refreshed.)
// The view's place in its root: the root's flat index at each of the view's elements (root_positions), read
// through a buffer over the storage's elements, so any layout of root and view works; a view with another
// dtype than its root (view_as_real) has no such index, and is refused.

namespace {

/// Where a view sits in its root: enough to find, in a backward, the root's flat index of each view element.
struct ViewPlace {
  Shape root_shape, root_strides, view_shape, view_strides;
  std::int64_t root_offset = 0, view_offset = 0, storage_elements = 0;
  Device device = Device::cpu();

  static ViewPlace of(const Tensor& view, const Tensor& root) {
    return ViewPlace{root.shape(), root.strides(), view.shape(), view.strides(), root.storage_offset(),
                     view.storage_offset(),
                     static_cast<std::int64_t>(root.impl()->storage->nbytes / itemsize(root.dtype())), root.device()};
  }
  /// The root's flat (row-major) index of each view element, as a 1-D int64 tensor in the view's order.
  Tensor root_positions() const {
    NoGradGuard ng;
    const Tensor flat = arange(shape_numel(root_shape), Dtype::Int64, device);
    Tensor buf = flat;  // the root's index at each storage element the root covers
    std::int64_t offset = view_offset - root_offset;
    const Shape dense = contiguous_strides(root_shape);
    bool contiguous = true;
    for (std::size_t d = 0; d < root_shape.size(); ++d) contiguous = contiguous && (root_shape[d] == 1 || root_strides[d] == dense[d]);
    if (!contiguous) {
      buf = zeros({storage_elements}, Dtype::Int64, device);
      make_view(buf, root_shape, root_strides, root_offset).copy_(flat.reshape(root_shape));
      offset = view_offset;
    }
    return make_view(buf, view_shape, view_strides, offset).reshape({-1});
  }
};

}  // namespace

__attribute__((noinline, cold)) void refresh_view(const Tensor& view) {
  TensorImpl* v = view.impl();
  const Tensor root = v->view_base;
  v->history_seen = v->storage->history;
  auto& m = v->meta();
  if (m.requires_grad && !m.grad_fn) return;  // a leaf of its own (requires_grad_() on the view): its own variable
  m.grad_fn = nullptr;
  m.output_nr = 0;
  m.requires_grad = false;
  if (!root.requires_grad()) return;
  if (root.dtype() != view.dtype())
    throw Error("autograd", std::string("a ") + dtype_name(view.dtype()) + " view of a " + dtype_name(root.dtype()) +
                                " tensor written in place since the view was made cannot be differentiated; make the view again");
  Tensor out = view;
  record_node(
      "as_strided", {root}, kSaveNone,
      [place = ViewPlace::of(view, root)](const Ctx&, const std::vector<Tensor>& g) {
        const Tensor into = zeros({shape_numel(place.root_shape)}, g[0].dtype(), g[0].device());
        return std::vector<Tensor>{index_add_trusted(into, 0, place.root_positions(), g[0].reshape({-1})).reshape(place.root_shape)};
      },
      &out, 1);
}

namespace {
/// [first, last] element offsets of t's elements in its storage (t has elements).
std::pair<std::int64_t, std::int64_t> element_span(const Tensor& t) {
  std::int64_t lo = t.storage_offset(), hi = lo;
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    const std::int64_t extent = t.strides()[d] * (t.shape()[d] - 1);
    (extent < 0 ? lo : hi) += extent;
  }
  return {lo, hi};
}
std::string layout_str(const Tensor& t) {
  return "shape " + shape_str(t.shape()) + ", strides " + shape_str(t.strides()) + ", offset " +
         std::to_string(t.storage_offset());
}
}  // namespace

void check_inplace_overlap(const char* name, const Tensor& self, TensorList others) {
  if (self.numel() <= 1) return;
  for (std::size_t d = 0; d < self.shape().size(); ++d)
    if (self.strides()[d] == 0 && self.shape()[d] > 1)
      throw Error(name, "the written-to tensor (" + layout_str(self) +
                            ") has several elements in one memory location (an expanded tensor); clone() it first");
  const Storage* st = self.impl()->storage.get();
  for (const Tensor& o : others) {
    if (!o.defined() || o.numel() == 0 || o.impl()->storage.get() != st) continue;
    if (o.dtype() == self.dtype() && o.storage_offset() == self.storage_offset() && o.shape() == self.shape() &&
        o.strides() == self.strides())
      continue;  // self itself, element for element
    const auto a = element_span(self), b = element_span(o);
    const std::int64_t ia = static_cast<std::int64_t>(self.itemsize()), ib = static_cast<std::int64_t>(o.itemsize());
    if (a.first * ia > b.second * ib + ib - 1 || b.first * ib > a.second * ia + ia - 1) continue;  // disjoint bytes
    throw Error(name, "an input (" + layout_str(o) + ") shares memory with the written-to tensor (" + layout_str(self) +
                          ") other than element for element, so the result would depend on the write order; clone() "
                          "the input first");
  }
}

Tensor shallow_alias(const Tensor& self) {
  Tensor a = make_view(self, self.shape(), self.strides(), self.storage_offset());
  if (self.impl()->autograd) {
    auto& src = *self.impl()->autograd;
    auto& m = a.impl()->meta();
    m.requires_grad = src.requires_grad;
    m.grad_fn = src.grad_fn;
    m.output_nr = src.output_nr;
    if (!src.grad_fn && src.requires_grad) m.grad_accumulator = src.grad_accumulator;
  }
  return a;
}

void rebase_history(Tensor& self, const Tensor& result) {
  ++self.impl()->storage->history;  // the views over it are behind now (Note [views and in-place history])
  if (self.impl()->view_base.defined()) {
    Tensor root = self.impl()->view_base;
    const Tensor out = apply_op(
        "copy_slices", {shallow_alias(root), result.to(self.dtype())}, kSaveNone,
        [&](TensorList in) {
          self.copy_(in[1]);
          return make_view(root, root.shape(), root.strides(), root.storage_offset());
        },
        [place = ViewPlace::of(self, root)](const Ctx& c, const std::vector<Tensor>& g) {
          const Tensor flat = g[0].reshape({-1}), at = place.root_positions();
          Tensor g_root, g_view;
          if (c.needs_grad(0)) g_root = index_copy_trusted(flat, 0, at, zeros({at.numel()}, g[0].dtype(), g[0].device())).reshape(place.root_shape);
          if (c.needs_grad(1)) g_view = index_select_trusted(flat, 0, at).reshape(place.view_shape);
          return std::vector<Tensor>{g_root, g_view};
        });
    auto& m = root.impl()->meta();
    m.requires_grad = out.requires_grad();
    m.grad_fn = out.requires_grad() ? out.impl()->meta().grad_fn : nullptr;
    m.output_nr = 0;
    refresh_view(self);
    return;
  }
  {
    NoGradGuard ng;
    Tensor r = result.to(self.dtype());
    // raw copy: the autograd checks were done by the caller
    self.copy_(r);
  }
  auto& m = self.impl()->meta();
  if (result.requires_grad()) {
    auto& rm = result.impl()->meta();
    m.requires_grad = true;
    m.grad_fn = rm.grad_fn;
    m.output_nr = rm.output_nr;
  } else {
    m.requires_grad = false;
    m.grad_fn = nullptr;
  }
}

// ---- observers -----------------------------------------------------------------------------------
std::atomic<int> g_num_observers{0};
namespace {
std::mutex g_obs_mu;
std::shared_ptr<const std::vector<std::shared_ptr<OpObserver>>> g_observers =
    std::make_shared<std::vector<std::shared_ptr<OpObserver>>>();
std::shared_ptr<const std::vector<std::shared_ptr<OpObserver>>> observers() {
  std::lock_guard<std::mutex> lk(g_obs_mu);
  return g_observers;
}
}  // namespace
int& op_depth() {
  __attribute__((tls_model("initial-exec"))) thread_local int depth = 0;
  return depth;
}
void notify_begin(const char* name, bool primitive, const std::vector<Tensor>& in) {
  OpEvent e{name, primitive, op_depth(), &in, nullptr};
  for (auto& o : *observers()) o->on_begin(e);
}
void notify_end(const char* name, bool primitive, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  OpEvent e{name, primitive, op_depth(), &in, &out};
  for (auto& o : *observers()) o->on_end(e);
}

// ---- the engine ----------------------------------------------------------------------------------
namespace {

// Note [gradient reduction]
// A formula may return a gradient of the broadcast shape, complex for a real input, or of a
// wider dtype. The engine reduces it here, once for all ops: sum over broadcast dims, take the
// real part for real inputs (dL/dx = Re(dL/dz*) when x enters as a complex number), cast.
Tensor reduce_to_meta(Tensor g, const TensorMeta& meta, const OpNode& node) {
  if (!meta.has_shape(g.shape())) {
    try {
      g = sum_to(g, meta.shape());
    } catch (const Error&) {
      throw Error(node.name(), "backward returned a gradient of shape " + shape_str(g.shape()) +
                                   " for an input of shape " + shape_str(meta.shape()));
    }
  }
  if (g.is_complex() && !is_complex(meta.dtype)) g = real(g);
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  return g;
}

struct GraphTask {
  bool keep_graph = false;
  bool create_graph = false;
  // grad() mode: capture gradients arriving at these (node, output_nr) instead of accumulating
  bool capture_mode = false;
  std::map<std::pair<const OpNode*, std::uint32_t>, std::vector<std::size_t>> captures;
  std::vector<Tensor> captured;
};

/// The engine's state of one node during a run (one map entry per node: its dependency count, gradient
/// buffer and a reference that keeps it alive).
struct NodeTask {
  std::shared_ptr<OpNode> keep;
  int deps = 0;               // edges from nodes not yet run
  bool needed = false;        // grad() mode: leads to a captured gradient
  std::vector<Tensor> grads;  // one per output once a gradient arrived
};

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads, GraphTask& task) {
  profiler::RecordScope scope("autograd.backward");  // the profile tells the backward pass from the forward
  // Root edges and their gradients.
  std::vector<std::pair<Edge, Tensor>> root_edges;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    Edge e = gradient_edge(roots[i]);
    if (!e.node) continue;
    root_edges.emplace_back(e, root_grads[i]);
  }
  // Discover the graph and count dependencies.
  std::unordered_map<OpNode*, NodeTask, std::hash<OpNode*>, std::equal_to<OpNode*>,
                     SmallBlockAllocator<std::pair<OpNode* const, NodeTask>>>
      nodes;  // entries from the small-block lists (Note [graph node memory])
  std::vector<OpNode*> stack, order;  // order: discovery order, kept for capture mode
  auto discover = [&](const std::shared_ptr<OpNode>& node) -> NodeTask& {
    auto [it, fresh] = nodes.try_emplace(node.get());
    if (fresh) {
      it->second.keep = node;
      stack.push_back(node.get());
    }
    return it->second;
  };
  for (auto& [e, g] : root_edges) discover(e.node);
  while (!stack.empty()) {
    OpNode* n = stack.back();
    stack.pop_back();
    if (task.capture_mode) order.push_back(n);
    for (auto& e : n->next)
      if (e.node) ++discover(e.node).deps;
  }
  // In capture mode, only run nodes that lead to a captured gradient.
  if (task.capture_mode) {
    // iterate to a fixed point over the discovered nodes (reverse discovery order is near-topological)
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        OpNode* n = *it;
        NodeTask& st = nodes.at(n);
        if (st.needed) continue;
        bool need = false;
        for (auto& [key, idx] : task.captures)
          if (key.first == n) need = true;
        for (auto& e : n->next)
          if (e.node && nodes.at(e.node.get()).needed) need = true;
        if (need) {
          st.needed = true;
          changed = true;
        }
      }
    }
  }
  auto add_grad = [](NodeTask& st, std::uint32_t slot, const Tensor& g) {
    auto& buf = st.grads;
    if (buf.empty()) buf.resize(std::max<std::size_t>(1, st.keep->output_meta.size()));
    if (!buf[slot].defined()) buf[slot] = g;
    else buf[slot] = buf[slot] + g;
  };
  for (auto& [e, g] : root_edges) add_grad(nodes.at(e.node.get()), e.input_nr, g);

  // Ready queue ordered by sequence number (newest first).
  auto cmp = [](OpNode* a, OpNode* b) { return a->seq < b->seq; };
  std::vector<OpNode*> ready;
  for (auto& [e, g] : root_edges)
    if (nodes.at(e.node.get()).deps == 0 && std::find(ready.begin(), ready.end(), e.node.get()) == ready.end())
      ready.push_back(e.node.get());

  // while tracing, formulas take their paths made of ops: a kernel a formula calls directly would be invisible to
  // the trace (Note [static graphs])
  GradMode::set_enabled(task.create_graph || tracing());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    OpNode* n = ready.back();
    ready.pop_back();
    NodeTask& st = nodes.at(n);
    std::vector<Tensor> grads = std::move(st.grads);
    grads.resize(std::max<std::size_t>(1, n->output_meta.size()));
    // Tensor hooks of non-leaf outputs, retain_grad, and captures.
    bool any = false;
    for (std::size_t k = 0; k < grads.size(); ++k) {
      if (!grads[k].defined()) continue;
      any = true;
      if (k < n->pre_hooks.size())
        for (auto& h : n->pre_hooks[k]) {
          Tensor r = h(grads[k]);
          if (r.defined()) grads[k] = r;
        }
      if (k < n->retained.size())
        if (const Tensor t = n->retained[k].lock(); t.defined()) {
          auto& m = t.impl()->meta();
          Tensor g = task.create_graph ? grads[k] : grads[k].detach();
          m.grad = m.grad.defined() ? (task.create_graph ? m.grad + g : (m.grad + g).detach()) : g.clone().detach();
          if (task.create_graph && !m.grad.requires_grad()) m.grad = g;
        }
      auto c = task.captures.find({n, static_cast<std::uint32_t>(k)});
      if (c != task.captures.end())
        for (std::size_t idx : c->second)
          task.captured[idx] = task.captured[idx].defined() ? task.captured[idx] + grads[k] : grads[k];
    }
    bool run = any && (!task.capture_mode || st.needed) && !(task.capture_mode && n->is_accumulator());
    std::vector<Tensor> in_grads;
    if (run) {
      if (n->released)
        throw Error(n->name(), "trying to backward through the graph a second time (or to read saved tensors after "
                              "they were freed); pass retain_graph=true to the first backward");
      // materialize zeros for outputs that received no gradient
      for (std::size_t k = 0; k < grads.size(); ++k)
        if (!grads[k].defined() && k < n->output_meta.size())
          grads[k] = zeros(n->output_meta[k].shape(), n->output_meta[k].dtype, n->output_meta[k].device);
      n->set_create_graph(task.create_graph);
      in_grads = n->apply(std::move(grads));
      if (!task.keep_graph) n->release();
    }
    for (std::size_t i = 0; i < n->next.size(); ++i) {
      auto& e = n->next[i];
      if (!e.node) continue;
      OpNode* m = e.node.get();
      NodeTask& mt = nodes.at(m);
      if (run && i < in_grads.size() && in_grads[i].defined())
        add_grad(mt, e.input_nr, reduce_to_meta(in_grads[i], n->input_meta[i], *n));
      if (--mt.deps == 0) {
        ready.push_back(m);
        std::push_heap(ready.begin(), ready.end(), cmp);
      }
    }
  }
}

struct GradModeRestore {
  bool prev = GradMode::is_enabled();
  ~GradModeRestore() { GradMode::set_enabled(prev); }
};

std::vector<Tensor> make_root_grads(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                                    const char* op) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw Error(op, "got " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                        std::to_string(outputs.size()) + " outputs");
  std::vector<Tensor> gs(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    if (!o.defined()) throw Error(op, "output " + std::to_string(i) + " is undefined");
    if (!o.requires_grad())
      throw Error(op, "output " + std::to_string(i) + " does not require grad and has no grad_fn");
    if (!grad_outputs.empty() && grad_outputs[i].defined()) {
      if (grad_outputs[i].shape() != o.shape())
        throw Error(op, "gradient of shape " + shape_str(grad_outputs[i].shape()) + " given for an output of shape " +
                            shape_str(o.shape()));
      gs[i] = grad_outputs[i];
    } else {
      if (o.numel() != 1)
        throw Error(op, "grad can be implicitly created only for outputs with one element; output " +
                            std::to_string(i) + " has shape " + shape_str(o.shape()));
      gs[i] = ones_like(o);
    }
  }
  return gs;
}

}  // namespace
}  // namespace detail

namespace autodiff {

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph) {
  auto gs = detail::make_root_grads(outputs, grad_outputs, "backward");
  detail::GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  detail::GradModeRestore restore;
  detail::run_backward(outputs, gs, task);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  auto gs = detail::make_root_grads(outputs, grad_outputs, "grad");
  detail::GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  task.capture_mode = true;
  task.captured.resize(inputs.size());
  std::vector<detail::Edge> keep;  // a leaf's accumulator lives only as long as someone holds it
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.requires_grad())
      throw Error("grad", "input " + std::to_string(i) + " does not require grad");
    detail::Edge e = detail::gradient_edge(t);
    task.captures[{e.node.get(), e.input_nr}].push_back(i);
    keep.push_back(e);
  }
  {
    detail::GradModeRestore restore;
    detail::run_backward(outputs, gs, task);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!task.captured[i].defined()) {
      if (!allow_unused)
        throw Error("grad", "input " + std::to_string(i) +
                                " was not used in the graph of the outputs; pass allow_unused=true to get an "
                                "undefined gradient instead");
      continue;
    }
    Tensor g = task.captured[i];
    if (g.is_complex() && !inputs[i].is_complex()) g = real(g);
    if (!create_graph) g = g.detach();
    task.captured[i] = g;
  }
  return task.captured;
}

}  // namespace autodiff

// ---- Tensor's autograd methods ---------------------------------------------------------------------
void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autodiff::backward({*this}, {gradient}, retain_graph, create_graph);
}

bool Tensor::requires_grad() const { return impl_->requires_grad(); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  if (requires_grad && !is_floating_or_complex(dtype()))
    throw Error("requires_grad_", std::string("only floating point and complex tensors can require gradients, got ") +
                                      dtype_name(dtype()));
  if (!is_leaf() && !requires_grad)
    throw Error("requires_grad_", "cannot turn off requires_grad of a non-leaf tensor; use detach()");
  impl_->meta().requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_->autograd) return Tensor();
  return impl_->autograd->grad;
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined() && g.shape() != shape())
    throw Error("set_grad", "gradient of shape " + detail::shape_str(g.shape()) + " assigned to a tensor of shape " +
                                detail::shape_str(shape()));
  impl_->meta().grad = g;
}

void Tensor::set_data(const Tensor& data) {
  if (!data.defined()) throw Error("set_data", "got an undefined tensor");
  if (!is_leaf()) throw Error("set_data", "only leaf tensors can take new data");
  if (impl_->requires_grad() && !is_floating_or_complex(data.dtype()))
    throw Error("set_data", std::string("a tensor that requires grad cannot hold ") + dtype_name(data.dtype()) + " data");
  const bool keep_grad = data.dtype() == dtype() && data.device() == device() && data.shape() == shape();
  TensorImpl& d = *data.impl();
  impl_->storage = d.storage;
  impl_->shape = d.shape;
  impl_->strides = d.strides;
  impl_->offset = d.offset;
  impl_->dtype = d.dtype;
  impl_->view_base = Tensor();
  if (!keep_grad && impl_->autograd) impl_->autograd->grad = Tensor();
}

bool Tensor::is_leaf() const { return !impl_->autograd || !impl_->autograd->grad_fn; }

std::shared_ptr<autodiff::Node> Tensor::grad_fn() const {
  if (!impl_->autograd) return nullptr;
  return impl_->autograd->grad_fn;
}

Tensor& Tensor::retain_grad() {
  if (!requires_grad()) throw Error("retain_grad", "cannot retain the gradient of a tensor that does not require grad");
  auto& m = impl_->meta();
  if (!m.grad_fn || m.retains_grad) return *this;
  m.retains_grad = true;
  auto& r = m.grad_fn->retained;
  if (r.size() <= m.output_nr) r.resize(m.output_nr + 1);
  r[m.output_nr] = detail::WeakTensor(*this);
  return *this;
}

bool Tensor::retains_grad() const { return impl_->autograd && impl_->autograd->retains_grad; }

std::size_t Tensor::register_hook(GradHook hook) {
  if (!requires_grad())
    throw Error("register_hook", "cannot register a hook on a tensor that does not require grad");
  auto& m = impl_->meta();
  std::size_t id = m.next_hook_id++;
  if (m.grad_fn) {
    // non-leaf: the hook lives on the producing node; wrap it with its id for removal
    auto& all = m.grad_fn->pre_hooks;
    if (all.size() <= m.output_nr) all.resize(m.output_nr + 1);
    auto& hooks = all[m.output_nr];
    auto alive = std::make_shared<bool>(true);
    hooks.push_back([hook, alive](const Tensor& g) { return *alive ? hook(g) : Tensor(); });
    m.hooks.emplace_back(id, [alive](const Tensor&) {
      *alive = false;
      return Tensor();
    });
  } else {
    m.hooks.emplace_back(id, std::move(hook));
  }
  return id;
}

void Tensor::remove_hook(std::size_t handle) {
  if (!impl_->autograd) return;
  auto& hooks = impl_->autograd->hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it)
    if (it->first == handle) {
      if (impl_->autograd->grad_fn) it->second(Tensor());  // disables the node-side wrapper
      hooks.erase(it);
      return;
    }
}

std::uint64_t Tensor::version() const { return impl_->storage->version; }

void add_op_observer(std::shared_ptr<OpObserver> obs) {
  std::lock_guard<std::mutex> lk(detail::g_obs_mu);
  auto v = std::make_shared<std::vector<std::shared_ptr<OpObserver>>>(*detail::g_observers);
  v->push_back(std::move(obs));
  detail::g_observers = v;
  detail::g_num_observers = static_cast<int>(v->size());
}

void remove_op_observer(const std::shared_ptr<OpObserver>& obs) {
  std::lock_guard<std::mutex> lk(detail::g_obs_mu);
  auto v = std::make_shared<std::vector<std::shared_ptr<OpObserver>>>(*detail::g_observers);
  v->erase(std::remove(v->begin(), v->end(), obs), v->end());
  detail::g_observers = v;
  detail::g_num_observers = static_cast<int>(v->size());
}

}  // namespace phasor
