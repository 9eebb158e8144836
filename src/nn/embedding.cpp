// src/nn/embedding.cpp - one_hot, embedding, embedding_bag and the Embedding module.
//
// Note [embedding gradients]
// embedding is one primitive over the weight: the forward is index_select of the looked-up rows, the
// backward index_add of the output gradient into a zero table, each row's gradient scaled first by s:
// 0 at padding_idx, 1 / (the index's count in the batch) with scale_grad_by_freq, else 1. The backward is
// made of differentiable ops, so second derivatives work. embedding_bag is a composition over it.
#include "phasor/nn/embedding.hpp"

#include <cmath>
#include <sstream>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/index_ops.hpp"
#include "core/pointwise.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/nn/init.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using detail::shape_str;

namespace functional {
namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;

/// padding_idx wrapped into [0, V) (negative counts from the end); throws outside [-V, V).
std::int64_t wrap_padding(std::int64_t p, std::int64_t V, const char* op) {
  if (p < -V || p >= V)
    throw Error(op, "padding_idx " + std::to_string(p) + " must be within num_embeddings " + std::to_string(V));
  return p < 0 ? p + V : p;
}

/// Checks the table (2-D, floating or complex) and the indices (int64, same device).
void check_lookup(const Tensor& input, const Tensor& weight, bool sparse, const char* op) {
  if (!input.defined() || !weight.defined()) throw Error(op, "input and weight must be defined");
  if (input.dtype() != int64) throw Error(op, std::string("expected int64 indices, got ") + dtype_name(input.dtype()));
  if (weight.dim() != 2) throw Error(op, "weight must be 2-D (num_embeddings, embedding_dim), got " + shape_str(weight.shape()));
  if (!is_floating_or_complex(weight.dtype()))
    throw Error(op, std::string("weight must be floating or complex, got ") + dtype_name(weight.dtype()));
  if (input.device() != weight.device())
    throw Error(op, "indices on " + input.device().str() + " and weight on " + weight.device().str() + " differ");
  if (sparse) throw Error(op, "sparse gradients are not supported (sparse must be false)");
}

/// Renormalises the rows of weight at the (in range) indices `flat` to norm <= max_norm, in place, no grad.
void renorm_rows(const Tensor& weight, const Tensor& flat, double max_norm, double norm_type, const char* op) {
  if (!(max_norm >= 0)) throw Error(op, "max_norm must be >= 0, got " + std::to_string(max_norm));
  if (!(norm_type > 0)) throw Error(op, "norm_type must be > 0, got " + std::to_string(norm_type));
  if (flat.numel() == 0) return;
  NoGradGuard ng;
  Tensor w = weight;
  const Tensor rows = ::phasor::detail::index_select_trusted(w, 0, flat);
  const Tensor n = norm(rows, norm_type, {1}, true);
  const Tensor scale = where(n > Scalar(max_norm), max_norm / (n + 1e-7), Scalar(1.0)).to(to_real(w.dtype()));
  // a repeated index writes the same row twice: the order does not matter
  w.index_copy_(0, flat, rows * scale);
}

}  // namespace

Tensor one_hot(const Tensor& index, std::int64_t num_classes) {
  const char* op = "one_hot";
  if (!index.defined()) throw Error(op, "index is undefined");
  if (index.dtype() != int64) throw Error(op, std::string("expected int64 class values, got ") + dtype_name(index.dtype()));
  if (num_classes < -1) throw Error(op, "num_classes must be >= 0 or -1, got " + std::to_string(num_classes));
  // one step (no gradient), so that a static graph reads the values anew: the class count and the checks depend on
  // them (Note [replayable forwards])
  return ::phasor::detail::apply_nondiff(op, {index}, [num_classes, op](In in) {
    const Tensor& t = in[0];
    std::int64_t C = num_classes;
    if (C == -1) {
      if (t.numel() == 0) throw Error(op, "cannot infer the number of classes from an empty tensor");
      // one host read of both extremes
      auto [lo, hi] = aminmax(t);
      const auto v = to_vector<std::int64_t>(stack({lo, hi}).to(Device::cpu()));
      if (v[0] < 0) throw Error(op, "class values must be non-negative, got " + std::to_string(v[0]));
      C = v[1] + 1;
    } else {
      // a failure reported later (deferred checks) is harmless: the comparison below reads nothing out of range
      (void)::phasor::detail::check_index_values(t, 0, C, "for " + std::to_string(C) + " classes", op, "class value");
    }
    return (t.unsqueeze(-1) == arange(C, int64, t.device())).to(int64);
  });
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq, bool sparse) {
  const char* op = "embedding";
  check_lookup(input, weight, sparse, op);
  const std::int64_t V = weight.size(0), D = weight.size(1);
  std::optional<std::int64_t> pad;
  if (padding_idx) pad = wrap_padding(*padding_idx, V, op);
  Tensor flat = input.detach().reshape({-1});
  // the forward checks the indices; what reads them before it (renorm, counts) needs them checked first
  if ((max_norm || scale_grad_by_freq) &&
      ::phasor::detail::check_index_values(flat, 0, V, "for " + std::to_string(V) + " embeddings", op))
    flat = flat.clamp(0, std::max<std::int64_t>(V - 1, 0));  // a failure reported later reads in range meanwhile
  if (max_norm) renorm_rows(weight, flat, *max_norm, norm_type, op);
  // the backward keeps the indices: a copy, so that writing into input after the forward changes nothing
  if (GradMode::is_enabled() && weight.requires_grad()) flat = flat.clone();
  Shape out_shape = input.shape();
  out_shape.push_back(D);
  // per-lookup gradient scale (Note [embedding gradients]); undefined: 1 everywhere
  Tensor s;
  const Dtype rdt = to_real(weight.dtype());
  if (scale_grad_by_freq && flat.numel() > 0) {
    const Tensor counts = bincount(flat, Tensor(), V);
    s = ::phasor::detail::index_select_trusted(counts, 0, flat).to(rdt).reciprocal();
  }
  if (pad) {
    const Tensor keep = flat != Scalar(*pad);
    s = s.defined() ? where(keep, s, Scalar(0.0)) : keep.to(rdt);
  }
  // the indices and scales are inputs (no gradient), checked again in the forward: a static graph replays it with
  // other indices (Note [replayable forwards])
  const bool has_s = s.defined();
  G inputs{weight, flat};
  if (has_s) inputs.push_back(s);
  return detail::apply_op(
      op, inputs, ::phasor::detail::kSaveInput(1) | ::phasor::detail::kSaveInput(2),
      [out_shape, V, op](In in) {
        Tensor f = in[1];
        if (::phasor::detail::check_index_values(f, 0, V, "for " + std::to_string(V) + " embeddings", op))
          f = f.clamp(0, std::max<std::int64_t>(V - 1, 0));
        return ::phasor::detail::index_select_trusted(in[0], 0, f).reshape(out_shape);
      },
      [V, D, has_s](const ::phasor::detail::Ctx& c, const G& g) {
        const Tensor f = c.input(1);
        Tensor rows = g[0].reshape({-1, D});
        if (has_s) rows = rows * c.input(2).unsqueeze(1);
        G out{::phasor::detail::index_add_trusted(zeros({V, D}, g[0].dtype(), g[0].device()), 0, f, rows), Tensor()};
        if (has_s) out.emplace_back();
        return out;
      });
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets, std::optional<double> max_norm,
                     double norm_type, bool scale_grad_by_freq, EmbeddingBagMode mode, bool sparse,
                     const Tensor& per_sample_weights, bool include_last_offset, std::optional<std::int64_t> padding_idx) {
  const char* op = "embedding_bag";
  check_lookup(input, weight, sparse, op);
  if (mode != EmbeddingBagMode::sum && mode != EmbeddingBagMode::mean && mode != EmbeddingBagMode::max)
    throw Error(op, "unknown mode value " + std::to_string(static_cast<int>(mode)));
  const std::int64_t V = weight.size(0), D = weight.size(1);
  std::optional<std::int64_t> pad;
  if (padding_idx) pad = wrap_padding(*padding_idx, V, op);
  if (per_sample_weights.defined()) {
    if (mode != EmbeddingBagMode::sum)
      throw Error(op, "per_sample_weights are only supported with mode sum");
    if (per_sample_weights.shape() != input.shape())
      throw Error(op, "per_sample_weights of shape " + shape_str(per_sample_weights.shape()) +
                          " must have the input's shape " + shape_str(input.shape()));
    if (!is_floating(per_sample_weights.dtype()))
      throw Error(op, std::string("per_sample_weights must be real floating, got ") +
                          dtype_name(per_sample_weights.dtype()));
  }
  const Device dev = weight.device();
  std::int64_t B = 0;
  Tensor bag;    // (n) bag of each position
  Tensor valid;  // (n) bool: the position belongs to a bag (undefined: all do)
  const std::int64_t n = input.numel();
  if (input.dim() == 2) {
    if (offsets.defined()) throw Error(op, "offsets must be undefined for a 2-D input (each row is a bag)");
    B = input.size(0);
    const std::int64_t L = input.size(1);
    bag = arange(B, int64, dev).unsqueeze(1).expand({B, L}).reshape({-1});
  } else if (input.dim() == 1) {
    if (!offsets.defined()) throw Error(op, "a 1-D input needs offsets");
    if (offsets.dtype() != int64 || offsets.dim() != 1)
      throw Error(op, "offsets must be a 1-D int64 tensor, got " + shape_str(offsets.shape()) + " " +
                          dtype_name(offsets.dtype()));
    if (offsets.device() != dev)
      throw Error(op, "offsets on " + offsets.device().str() + " and weight on " + dev.str() + " differ");
    B = offsets.size(0) - (include_last_offset ? 1 : 0);
    if (B < 0) throw Error(op, "include_last_offset needs at least one offset");
    Tensor checked = offsets.detach();
    if (offsets.size(0) > 0)  // a step whose output the bags read: a static graph checks each replay's offsets
      checked = ::phasor::detail::apply_nondiff("embedding_bag_offsets", {checked}, [n, op](In in) {
        const Tensor& o = in[0];
        Tensor bad = (o.narrow(0, 0, 1) != Scalar(0)).any() | (o > Scalar(n)).any();
        if (o.size(0) > 1) bad = bad | (o.narrow(0, 1, o.size(0) - 1) < o.narrow(0, 0, o.size(0) - 1)).any();
        ::phasor::detail::check_device_value(
            op, bad, [] { return std::pair{Tensor(), Tensor()}; },
            [n](double, double) {
              return "offsets must start at 0, not decrease and not pass the input's length " + std::to_string(n);
            });
        return o.clone();
      });
    const Tensor pos = arange(n, int64, dev);
    const Tensor starts = checked.narrow(0, 0, B);
    bag = B > 0 ? (searchsorted(starts, pos, true) - 1).clamp(0, B - 1) : zeros({n}, int64, dev);
    if (include_last_offset) valid = pos < checked.narrow(0, B, 1);
    if (B == 0) valid = zeros({n}, Dtype::Bool, dev);
  } else {
    throw Error(op, "expected a 1-D input with offsets or a 2-D input, got " + shape_str(input.shape()));
  }
  std::vector<Tensor> ins{input, weight};
  if (offsets.defined()) ins.push_back(offsets);
  if (per_sample_weights.defined()) ins.push_back(per_sample_weights);
  return detail::composite(op, ins, [&] {
    const Tensor flat = input.reshape({-1});
    const Tensor rows = embedding(flat, weight, pad, max_norm, norm_type, scale_grad_by_freq, false);  // (n, D)
    Tensor keep = valid;
    if (pad) keep = keep.defined() ? keep & (flat != Scalar(*pad)) : flat != Scalar(*pad);
    // left-out positions go to an extra bag B, dropped at the end
    const Tensor b = keep.defined() ? where(keep, bag, Scalar(B)) : bag;
    const Tensor z = zeros({B + 1, D}, weight.dtype(), dev);
    if (mode == EmbeddingBagMode::max)
      return index_reduce(z, 0, b, rows, "amax", false).narrow(0, 0, B);
    Tensor r = rows;
    if (per_sample_weights.defined()) r = r * per_sample_weights.reshape({-1, 1});
    Tensor out = ::phasor::detail::index_add_trusted(z, 0, b, r).narrow(0, 0, B);
    if (mode == EmbeddingBagMode::sum) return out;
    const Tensor ones_n = ones({n}, to_real(weight.dtype()), dev);
    const Tensor count = ::phasor::detail::index_add_trusted(zeros({B + 1}, to_real(weight.dtype()), dev), 0, b, ones_n);
    return out / count.narrow(0, 0, B).clamp_min(1.0).unsqueeze(1);
  });
}

}  // namespace functional

// ---- Embedding module ---------------------------------------------------------------------------------

Embedding::Embedding(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  if (o.num_embeddings() < 0 || o.embedding_dim() < 0)
    throw Error("Embedding", "num_embeddings and embedding_dim must be >= 0, got " +
                                 std::to_string(o.num_embeddings()) + " and " + std::to_string(o.embedding_dim()));
  if (!is_floating_or_complex(o.dtype()))
    throw Error("Embedding", std::string("parameter dtype must be floating or complex, got ") + dtype_name(o.dtype()));
  if (o.sparse()) throw Error("Embedding", "sparse gradients are not supported (sparse must be false)");
  if (o.padding_idx()) {
    const std::int64_t V = o.num_embeddings(), p = *o.padding_idx();
    if (p < -V || p >= V)
      throw Error("Embedding", "padding_idx " + std::to_string(p) + " must be within num_embeddings " + std::to_string(V));
    options.padding_idx(p < 0 ? p + V : p);
  }
  weight = register_parameter("weight", empty({o.num_embeddings(), o.embedding_dim()}, o.dtype()));
  reset_parameters();
}

Embedding::Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim)
    : Embedding(EmbeddingOptions(num_embeddings, embedding_dim)) {}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard ng;
    weight.select(0, *options.padding_idx()).zero_();
  }
}

Tensor Embedding::forward(const Tensor& input) {
  return functional::embedding(input, weight, options.padding_idx(), options.max_norm(), options.norm_type(),
                               options.scale_grad_by_freq(), options.sparse());
}

std::string Embedding::extra_repr() const {
  std::ostringstream s;
  s << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) s << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm()) s << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2.0) s << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) s << ", scale_grad_by_freq=true";
  return s.str();
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<std::int64_t> padding_idx,
                                                      std::optional<double> max_norm, double norm_type,
                                                      bool scale_grad_by_freq, bool sparse) {
  if (!embeddings.defined() || embeddings.dim() != 2)
    throw Error("Embedding.from_pretrained", "embeddings must be 2-D (num_embeddings, embedding_dim), got " +
                                                 (embeddings.defined() ? shape_str(embeddings.shape()) : std::string("undefined")));
  auto m = std::make_shared<Embedding>(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                                           .padding_idx(padding_idx)
                                           .max_norm(max_norm)
                                           .norm_type(norm_type)
                                           .scale_grad_by_freq(scale_grad_by_freq)
                                           .sparse(sparse)
                                           .dtype(embeddings.dtype()));
  m->weight = m->replace_tensor("weight", embeddings.detach());
  m->weight.requires_grad_(!freeze);
  return m;
}

}  // namespace phasor::nn
