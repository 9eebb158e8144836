// src/autodiff/function.cpp - user-defined differentiable functions and activation checkpointing.
#include "autodiff/node.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"

namespace phasor::autodiff {

/// Grants the custom-function node access to FunctionCtx's saved tensors.
struct CustomAccess {
  static std::vector<Tensor>& saved(FunctionCtx& c) { return c.saved_; }
  static std::vector<std::uint64_t>& versions(FunctionCtx& c) { return c.versions_; }
  static std::vector<bool>& needs(FunctionCtx& c) { return c.needs_grad_; }
};

namespace {

/// Graph node of a custom function: owns the ctx and the user's backward.
struct CustomNode final : detail::OpNode {
  std::string name_;  // the function's name + "Backward"
  std::shared_ptr<FunctionCtx> ctx;
  CustomBackward bwd;
  std::vector<detail::SavedVariable> saved;
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    auto& s = CustomAccess::saved(*ctx);
    s.clear();
    for (auto& v : saved) s.push_back(v.unpack(name_.c_str()));
    auto& ver = CustomAccess::versions(*ctx);
    ver.clear();
    for (auto& t : s) ver.push_back(t.defined() ? t.version() : 0);
    std::vector<Tensor> r = bwd(*ctx, grads);
    s.clear();
    if (r.size() != next.size())
      throw Error(name_, "backward returned " + std::to_string(r.size()) + " gradients for " +
                             std::to_string(next.size()) + " inputs");
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i].defined() && !input_meta[i].has_shape(r[i].shape())) {
        // allow broadcastable shapes (the engine sums them down); reject anything else clearly
        try {
          broadcast_shapes({r[i].shape(), input_meta[i].shape()}, name_.c_str());
        } catch (const Error&) {
          throw Error(name_, "backward returned a gradient of shape " + detail::shape_str(r[i].shape()) +
                                 " for input " + std::to_string(i) + " of shape " + detail::shape_str(input_meta[i].shape()));
        }
      }
    return r;
  }
  void release() override {
    OpNode::release();
    for (auto& v : saved) v.reset();
  }
};

}  // namespace

void FunctionCtx::save_for_backward(const std::vector<Tensor>& tensors) {
  saved_ = tensors;
  versions_.clear();
  for (const auto& t : tensors) versions_.push_back(t.defined() ? t.version() : 0);
}

std::vector<Tensor> FunctionCtx::saved_tensors() const {
  for (std::size_t i = 0; i < saved_.size(); ++i)
    if (saved_[i].defined() && saved_[i].version() != versions_[i])
      throw Error("saved_tensors", "saved tensor " + std::to_string(i) + " was modified by an in-place operation");
  return saved_;
}

std::vector<Tensor> custom_function(const std::string& name, CustomForward forward, CustomBackward backward,
                                    const std::vector<Tensor>& inputs) {
  if (!forward || !backward) throw Error(name, "custom_function needs both a forward and a backward");
  if (detail::tracing())  // one step, replayed with its own backward (Note [static graphs])
    return detail::trace_opaque(detail::intern_name(name.c_str()), inputs, [name, forward, backward](detail::TensorList in) {
      return custom_function(name, forward, backward, in.vec());
    });
  auto ctx = std::make_shared<FunctionCtx>();
  const bool record = detail::any_requires_grad(inputs);
  for (const auto& t : inputs) CustomAccess::needs(*ctx).push_back(record && t.defined() && t.requires_grad());
  const bool observed = detail::g_num_observers.load() > 0;
  if (observed) detail::notify_begin(name.c_str(), true, inputs);
  std::vector<Tensor> outputs;
  {
    detail::DepthGuard depth;
    NoGradGuard ng;
    outputs = forward(*ctx, inputs);
  }
  if (record) {
    auto node = std::make_shared<CustomNode>();
    node->name_ = name + "Backward";
    node->ctx = ctx;
    node->bwd = std::move(backward);
    for (const auto& t : inputs) {
      node->next.push_back(detail::gradient_edge(t));
      node->input_meta.push_back(detail::TensorMeta::of(t));
    }
    const std::vector<Tensor> out_handles = outputs;  // attach_outputs may replace entries of `outputs`
    detail::attach_outputs(node, outputs.data(), outputs.size());
    // Saved outputs are kept without their history (a node -> output -> node cycle would leak).
    for (const auto& t : CustomAccess::saved(*ctx)) {
      bool is_out = false;
      for (std::size_t k = 0; k < out_handles.size(); ++k)
        if (t.defined() && t.is_same(out_handles[k])) {
          node->saved.emplace_back(outputs[k], true, node);
          is_out = true;
          break;
        }
      if (!is_out) node->saved.emplace_back(t, false, nullptr);
    }
    CustomAccess::saved(*ctx).clear();
  }
  if (observed) detail::notify_end(name.c_str(), true, inputs, outputs);
  return outputs;
}

std::vector<Tensor> checkpoint(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                               const std::vector<Tensor>& inputs) {
  // The random stream position is saved so that the recomputation draws the same numbers.
  const std::uint64_t rng_offset = default_generator().offset();
  std::vector<bool> req;
  for (const auto& t : inputs) req.push_back(t.defined() && t.requires_grad());
  return custom_function(
      "checkpoint",
      [fn](FunctionCtx& ctx, const std::vector<Tensor>& in) {
        ctx.save_for_backward(in);
        std::vector<Tensor> out = fn(in);
        for (auto& o : out)
          if (o.defined()) o = o.detach();
        return out;
      },
      [fn, req, rng_offset](FunctionCtx& ctx, const std::vector<Tensor>& grads) {
        std::vector<Tensor> saved = ctx.saved_tensors();
        // Recompute from detached inputs; under create_graph use the originals, so that the
        // gradients stay connected to the inputs' history (double backward through checkpoint).
        const bool create_graph = GradMode::is_enabled();
        std::vector<Tensor> xs, wrt;
        std::vector<std::size_t> wrt_idx;
        for (std::size_t i = 0; i < saved.size(); ++i) {
          Tensor x = saved[i].defined() && !create_graph ? saved[i].detach() : saved[i];
          if (req[i]) {
            if (!create_graph) x.requires_grad_();
            wrt.push_back(x);
            wrt_idx.push_back(i);
          }
          xs.push_back(x);
        }
        Generator& gen = default_generator();
        const std::uint64_t now = gen.offset();
        gen.set_offset(rng_offset);
        std::vector<Tensor> outs;
        {
          EnableGradGuard eg;
          outs = fn(xs);
        }
        gen.set_offset(now);
        std::vector<Tensor> douts, gos;
        for (std::size_t k = 0; k < outs.size() && k < grads.size(); ++k)
          if (outs[k].defined() && outs[k].requires_grad()) {
            douts.push_back(outs[k]);
            gos.push_back(grads[k]);
          }
        std::vector<Tensor> result(saved.size());
        if (douts.empty() || wrt.empty()) return result;
        auto gs = grad(douts, wrt, gos, std::nullopt, create_graph, /*allow_unused=*/true);
        for (std::size_t k = 0; k < wrt_idx.size(); ++k) result[wrt_idx[k]] = gs[k];
        return result;
      },
      inputs);
}

}  // namespace phasor::autodiff
