// src/nn/attention.cpp - scaled_dot_product_attention, MultiheadAttention and the transformer layers, all
// compositions of differentiable ops (each wrapped in detail::composite so observers see its name).
//
// Note [attention masks]
// Two mask conventions meet here, both torch's: scaled_dot_product_attention's bool attn_mask says which
// scores TAKE PART (true = attend), while MultiheadAttention's bool key_padding_mask and attn_mask say which
// are LEFT OUT (true = ignore). Both turn a bool mask (and sdpa's causal triangle) into an additive bias
// (0 / -inf) of the mask's own shape, as torch's reference does, and add it to the scores, as a float mask
// is: one add, whose backward passes the gradient through. MultiheadAttention merges the key padding mask into
// the attention mask per batch and head, and pads both with zeros for the bias_k / zero-attention columns.
// A row whose every score is -inf has softmax 0/0 = NaN, as torch's math path before 2.5 (and its
// MultiheadAttention with need_weights) gives.
#include "phasor/nn/attention.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/nn/conv.hpp"
#include "phasor/nn/init.hpp"
#include "phasor/nn/loss.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using detail::shape_str;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_defined(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw Error(op, std::string(what) + " is undefined");
}

/// Throws unless query, key and value are all defined.
void check_qkv_defined(const char* op, const Tensor& query, const Tensor& key, const Tensor& value) {
  check_defined(query, op, "query");
  check_defined(key, op, "key");
  check_defined(value, op, "value");
}

/// "query (..), key (..), value (..)", for error messages.
std::string qkv_shapes(const Tensor& query, const Tensor& key, const Tensor& value) {
  return "query " + shape_str(query.shape()) + ", key " + shape_str(key.shape()) + ", value " + shape_str(value.shape());
}

/// The batch dims of x (all but the last two).
Shape batch_of(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

/// The attention of the core: softmax(q k^T * scale + bias) (dropout p) @ v; returns the output and the weights.
/// bias (additive, -inf where left out) may be undefined.
std::pair<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias, double scale,
                                 double p, Generator* gen) {
  Tensor s = matmul(scale == 1.0 ? q : q * scale, k.transpose(-2, -1));
  if (bias.defined()) s = s + bias;
  Tensor w = functional::softmax(s, -1);
  if (p > 0.0) w = functional::dropout(w, p, true, gen);
  return {matmul(w, v), w};
}

/// A bool mask as an additive bias of dtype dt, 0 where a score takes part and -inf where it is left out (true
/// means "takes part" when `true_takes_part`, sdpa's convention, else "left out", MultiheadAttention's); a float
/// mask converted to dt.
Tensor additive(const Tensor& m, Dtype dt, bool true_takes_part) {
  if (m.dtype() != Dtype::Bool) return m.dtype() == dt ? m : m.to(dt);
  const Tensor zero = zeros({}, dt, m.device());
  return true_takes_part ? where(m, zero, Scalar(-kInf)) : where(m, Scalar(-kInf), zero);
}

/// Throws unless `p` is a probability in [0, 1].
void check_probability(const char* op, double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw Error(op, "dropout must be in [0, 1], got " + num(p));
}

}  // namespace

// ---- scaled_dot_product_attention --------------------------------------------------------------------------

namespace functional {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* gen) {
  const char* op = "scaled_dot_product_attention";
  check_qkv_defined(op, query, key, value);
  const auto shapes = [&] { return qkv_shapes(query, key, value); };
  if (!is_floating(query.dtype()))
    throw Error(op, std::string("query must be float32 or float64, got ") + dtype_name(query.dtype()));
  if (key.dtype() != query.dtype() || value.dtype() != query.dtype())
    throw Error(op, std::string("query, key and value must have the same dtype, got ") + dtype_name(query.dtype()) +
                        ", " + dtype_name(key.dtype()) + " and " + dtype_name(value.dtype()));
  if (query.dim() < 2 || key.dim() < 2 || value.dim() < 2)
    throw Error(op, "query, key and value must have at least 2 dims (..., L, E), got " + shapes());
  if (query.size(-1) != key.size(-1))
    throw Error(op, "query and key must have the same embedding size (last dim), got " + shapes());
  if (key.size(-2) != value.size(-2))
    throw Error(op, "key and value must have the same sequence length (dim -2), got " + shapes());
  if (!(dropout_p >= 0.0 && dropout_p < 1.0)) throw Error(op, "dropout_p must be in [0, 1), got " + num(dropout_p));
  if (attn_mask.defined() && is_causal) throw Error(op, "attn_mask and is_causal cannot both be given");
  if (attn_mask.defined() && attn_mask.dtype() != Dtype::Bool && attn_mask.dtype() != query.dtype())
    throw Error(op, std::string("attn_mask must be bool or of query's dtype ") + dtype_name(query.dtype()) + ", got " +
                        dtype_name(attn_mask.dtype()));
  std::vector<Tensor> ins{query, key, value};
  if (attn_mask.defined()) ins.push_back(attn_mask);
  detail::check_same_device(ins, op);

  // Key/value heads for grouped-query attention, and the broadcast batch dims.
  Shape qb = batch_of(query), kb = batch_of(key), vb = batch_of(value);
  std::int64_t rep_k = 1, rep_v = 1;
  if (enable_gqa && !(qb.empty() && kb.empty() && vb.empty())) {
    if (query.dim() < 3 || key.dim() < 3 || value.dim() < 3)
      throw Error(op, "enable_gqa needs a heads dim (-3) in query, key and value, got " + shapes());
    const std::int64_t hq = query.size(-3), hk = key.size(-3), hv = value.size(-3);
    if (hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0)
      throw Error(op, "enable_gqa: query's heads (" + std::to_string(hq) + ") must be a multiple of key's (" +
                          std::to_string(hk) + ") and value's (" + std::to_string(hv) + "), got " + shapes());
    rep_k = hq / hk;
    rep_v = hq / hv;
    kb.back() = hq;
    vb.back() = hq;
  }
  Shape batch;
  try {
    batch = broadcast_shapes({qb, kb, vb}, op);
  } catch (const Error&) {
    throw Error(op, "the batch dims of query, key and value do not broadcast: " + shapes());
  }
  const std::int64_t L = query.size(-2), S = key.size(-2);
  Shape scores = batch;
  scores.push_back(L);
  scores.push_back(S);
  if (attn_mask.defined()) {
    bool ok = attn_mask.dim() <= static_cast<std::int64_t>(scores.size());
    for (std::int64_t i = 1; ok && i <= attn_mask.dim(); ++i) {
      const std::int64_t m = attn_mask.size(-i), s = scores[scores.size() - i];
      ok = m == s || m == 1;
    }
    if (!ok)
      throw Error(op, "attn_mask " + shape_str(attn_mask.shape()) + " is not broadcastable to the attention weights " +
                          shape_str(scores) + " (" + shapes() + ")");
  }
  const double sc = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));

  return detail::composite(op, ins, [&] {
    const Tensor k = rep_k > 1 ? key.repeat_interleave(rep_k, -3) : key;
    const Tensor v = rep_v > 1 ? value.repeat_interleave(rep_v, -3) : value;
    // bool masks become an additive bias (0 / -inf) of the mask's own (small) shape, as torch's reference does:
    // the scores then take one add, whose backward passes the gradient through untouched
    Tensor bias = attn_mask;
    if (is_causal) {
      const Device dev = query.device();
      bias = arange(0, L, 1, Dtype::Int64, dev).unsqueeze(1) >= arange(0, S, 1, Dtype::Int64, dev);
    }
    if (bias.defined()) bias = additive(bias, query.dtype(), true);
    return attend(query, k, v, bias, sc, dropout_p, gen).first;
  });
}

}  // namespace functional

// ---- MultiheadAttention ------------------------------------------------------------------------------------

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& o) : Module("MultiheadAttention"), options(o) {
  const char* op = "MultiheadAttention";
  const std::int64_t E = o.embed_dim(), H = o.num_heads();
  if (E <= 0) throw Error(op, "embed_dim must be positive, got " + std::to_string(E));
  if (H <= 0) throw Error(op, "num_heads must be positive, got " + std::to_string(H));
  if (E % H != 0)
    throw Error(op, "embed_dim " + std::to_string(E) + " must be divisible by num_heads " + std::to_string(H));
  if (o.kdim() <= 0 || o.vdim() <= 0)
    throw Error(op, "kdim and vdim must be positive, got " + std::to_string(o.kdim()) + " and " + std::to_string(o.vdim()));
  check_probability(op, o.dropout());
  if (!is_floating(o.dtype()))
    throw Error(op, std::string("parameter dtype must be float32 or float64, got ") + dtype_name(o.dtype()));
  const Dtype dt = o.dtype();
  if (o.kdim() == E && o.vdim() == E) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}, dt));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}, dt));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, o.kdim()}, dt));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, o.vdim()}, dt));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}, dt));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}, dt));
    bias_v = register_parameter("bias_v", empty({1, 1, E}, dt));
  }
  out_proj = register_module("out_proj", std::make_shared<Linear>(E, E, o.bias(), dt));
  reset_parameters();
}

MultiheadAttention::MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads)
    : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}

void MultiheadAttention::reset_parameters() {
  if (in_proj_weight.defined()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::string MultiheadAttention::extra_repr() const {
  std::string s = "embed_dim=" + std::to_string(options.embed_dim()) + ", num_heads=" + std::to_string(options.num_heads());
  if (options.dropout() != 0.0) s += ", dropout=" + num(options.dropout());
  if (!options.bias()) s += ", bias=false";
  if (options.add_bias_kv()) s += ", add_bias_kv=true";
  if (options.add_zero_attn()) s += ", add_zero_attn=true";
  if (options.kdim() != options.embed_dim()) s += ", kdim=" + std::to_string(options.kdim());
  if (options.vdim() != options.embed_dim()) s += ", vdim=" + std::to_string(options.vdim());
  if (options.batch_first()) s += ", batch_first=true";
  return s;
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x, Tensor(), false).output; }

MultiheadAttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                     const Tensor& key_padding_mask, bool need_weights,
                                                     const Tensor& attn_mask, bool average_attn_weights,
                                                     bool is_causal) {
  const char* op = "MultiheadAttention";
  check_qkv_defined(op, query, key, value);
  const auto shapes = [&] { return qkv_shapes(query, key, value); };
  const std::int64_t E = options.embed_dim(), H = options.num_heads(), hd = head_dim();
  const Dtype dt = out_proj->weight.dtype();  // the parameters' dtype (after any to(dtype))
  for (const Tensor* t : {&query, &key, &value})
    if (t->dtype() != dt)
      throw Error(op, std::string("query, key and value must have the parameters' dtype ") + dtype_name(dt) + ", got " +
                          dtype_name(query.dtype()) + ", " + dtype_name(key.dtype()) + " and " +
                          dtype_name(value.dtype()));
  if (query.dim() != 2 && query.dim() != 3)
    throw Error(op, "expected a 2-D (unbatched) or 3-D (batched) query, got " + shapes());
  if (key.dim() != query.dim() || value.dim() != query.dim())
    throw Error(op, "query, key and value must all be batched (3-D) or all unbatched (2-D), got " + shapes());
  const bool batched = query.dim() == 3;
  const bool bf = batched && options.batch_first();
  // (L, N, E) views of the inputs (N = 1 when unbatched)
  const auto seq_first = [&](const Tensor& t) { return !batched ? t.unsqueeze(1) : bf ? t.transpose(0, 1) : t; };
  const std::int64_t L = batched ? query.size(bf ? 1 : 0) : query.size(0);
  const std::int64_t N = batched ? query.size(bf ? 0 : 1) : 1;
  const std::int64_t S = batched ? key.size(bf ? 1 : 0) : key.size(0);
  if (query.size(-1) != E)
    throw Error(op, "expected query with embed_dim " + std::to_string(E) + " features, got " + shapes());
  if (key.size(-1) != options.kdim() || value.size(-1) != options.vdim())
    throw Error(op, "expected key with kdim " + std::to_string(options.kdim()) + " and value with vdim " +
                        std::to_string(options.vdim()) + " features, got " + shapes());
  if ((batched && (key.shape()[0] != value.shape()[0] || key.shape()[1] != value.shape()[1])) ||
      (!batched && key.size(0) != value.size(0)))
    throw Error(op, "key and value must have the same batch size and sequence length, got " + shapes());
  if (batched && key.size(bf ? 0 : 1) != N)
    throw Error(op, "query and key must have the same batch size, got " + shapes());
  const auto check_mask_dtype = [&](const Tensor& m, const char* what) {
    if (m.dtype() != Dtype::Bool && !is_floating(m.dtype()))
      throw Error(op, std::string(what) + " must be bool or floating, got " + dtype_name(m.dtype()));
  };
  if (key_padding_mask.defined()) {
    check_mask_dtype(key_padding_mask, "key_padding_mask");
    const Shape want = batched ? Shape{N, S} : Shape{S};
    if (key_padding_mask.shape() != want)
      throw Error(op, "expected key_padding_mask of shape " + shape_str(want) + ", got " +
                          shape_str(key_padding_mask.shape()) + " (" + shapes() + ")");
  }
  if (attn_mask.defined()) {
    check_mask_dtype(attn_mask, "attn_mask");
    const Shape want2{L, S}, want3{N * H, L, S};
    if (attn_mask.shape() != want2 && attn_mask.shape() != want3)
      throw Error(op, "expected attn_mask of shape " + shape_str(want2) + " or " + shape_str(want3) + ", got " +
                          shape_str(attn_mask.shape()) + " (" + shapes() + ")");
  } else if (is_causal) {
    throw Error(op, "is_causal is a hint that attn_mask is the causal mask: attn_mask must be given with it");
  }
  std::vector<Tensor> ins{query, key, value};
  if (key_padding_mask.defined()) ins.push_back(key_padding_mask);
  if (attn_mask.defined()) ins.push_back(attn_mask);
  for (const Tensor* p : {&in_proj_weight, &q_proj_weight, &k_proj_weight, &v_proj_weight, &in_proj_bias, &bias_k,
                          &bias_v, &out_proj->weight, &out_proj->bias})
    if (p->defined()) ins.push_back(*p);
  detail::check_same_device(ins, op);

  MultiheadAttentionOutput r;
  r.output = detail::composite("multi_head_attention", ins, [&] {
    Tensor q, k, v;  // (L, N, E), (S, N, E), (S, N, E)
    if (in_proj_weight.defined() && query.is_same(key) && key.is_same(value)) {
      // self-attention: one product with the packed weight (torch's _in_projection_packed)
      auto qkv = chunk(functional::linear(seq_first(query), in_proj_weight, in_proj_bias), 3, -1);
      q = qkv[0], k = qkv[1], v = qkv[2];
    } else {
      Tensor wq = q_proj_weight, wk = k_proj_weight, wv = v_proj_weight, bq, bk, bv;
      if (in_proj_weight.defined()) {
        auto w = chunk(in_proj_weight, 3, 0);
        wq = w[0], wk = w[1], wv = w[2];
      }
      if (in_proj_bias.defined()) {
        auto b = chunk(in_proj_bias, 3, 0);
        bq = b[0], bk = b[1], bv = b[2];
      }
      q = functional::linear(seq_first(query), wq, bq);
      k = functional::linear(seq_first(key), wk, bk);
      v = functional::linear(seq_first(value), wv, bv);
    }
    Tensor am, kpm;  // additive (1 or N*H, L, S) and (N, S)
    if (attn_mask.defined()) {
      am = additive(attn_mask, dt, false);
      if (am.dim() == 2) am = am.unsqueeze(0);
    }
    if (key_padding_mask.defined()) kpm = additive(batched ? key_padding_mask : key_padding_mask.unsqueeze(0), dt, false);
    const auto pad_key = [&] {  // one more key column in the masks
      if (am.defined()) am = pad(am, {0, 1});
      if (kpm.defined()) kpm = pad(kpm, {0, 1});
    };
    if (bias_k.defined()) {
      k = cat({k, bias_k.expand({1, N, E})}, 0);
      v = cat({v, bias_v.expand({1, N, E})}, 0);
      pad_key();
    }
    // heads: (L, N, E) -> (N * H, L, hd), head h of batch n at n * H + h (torch's layout)
    const auto heads = [&](const Tensor& t) { return t.reshape({t.size(0), N * H, hd}).transpose(0, 1); };
    q = heads(q);
    k = heads(k);
    v = heads(v);
    if (options.add_zero_attn()) {
      k = cat({k, zeros({N * H, 1, hd}, dt, k.device())}, 1);
      v = cat({v, zeros({N * H, 1, hd}, dt, v.device())}, 1);
      pad_key();
    }
    const std::int64_t S2 = k.size(1);
    Tensor bias = am;
    if (kpm.defined()) {
      kpm = kpm.reshape({N, 1, 1, S2}).expand({N, H, 1, S2}).reshape({N * H, 1, S2});
      bias = bias.defined() ? bias + kpm : kpm;
    }
    const double p = is_training() ? options.dropout() : 0.0;
    auto [o, w] = attend(q, k, v, bias, 1.0 / std::sqrt(static_cast<double>(hd)), p, nullptr);
    o = o.transpose(0, 1).reshape({L, N, E});  // (L, N, E)
    o = functional::linear(o, out_proj->weight, out_proj->bias);
    if (need_weights) {
      w = w.reshape({N, H, L, S2});
      if (average_attn_weights) w = w.mean({1});
      r.weights = batched ? w : w.squeeze(0);
    }
    return !batched ? o.squeeze(1) : bf ? o.transpose(0, 1) : o;
  });
  return r;
}

// ---- transformer layers ------------------------------------------------------------------------------------

namespace {

void check_layer_options(const char* op, const TransformerLayerOptions& o) {
  if (o.d_model() <= 0 || o.nhead() <= 0)
    throw Error(op, "d_model and nhead must be positive, got " + std::to_string(o.d_model()) + " and " +
                        std::to_string(o.nhead()));
  if (o.d_model() % o.nhead() != 0)
    throw Error(op, "d_model " + std::to_string(o.d_model()) + " must be divisible by nhead " + std::to_string(o.nhead()));
  if (o.dim_feedforward() <= 0)
    throw Error(op, "dim_feedforward must be positive, got " + std::to_string(o.dim_feedforward()));
  check_probability(op, o.dropout());
  if (!(o.layer_norm_eps() >= 0.0)) throw Error(op, "layer_norm_eps must be >= 0, got " + num(o.layer_norm_eps()));
}

std::shared_ptr<MultiheadAttention> make_attention(const TransformerLayerOptions& o) {
  return std::make_shared<MultiheadAttention>(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                                  .dropout(o.dropout())
                                                  .bias(o.bias())
                                                  .batch_first(o.batch_first())
                                                  .dtype(o.dtype()));
}

std::shared_ptr<LayerNorm> make_norm(const TransformerLayerOptions& o) {
  auto n = std::make_shared<LayerNorm>(Shape{o.d_model()}, o.layer_norm_eps(), true, o.bias());
  if (o.dtype() != n->weight.dtype()) n->to(o.dtype());
  return n;
}

/// The inputs a layer's composite reports: the defined tensors among `ts`, then the module's parameters.
std::vector<Tensor> layer_inputs(const Module& m, std::initializer_list<Tensor> ts) {
  std::vector<Tensor> ins;
  for (const auto& t : ts)
    if (t.defined()) ins.push_back(t);
  for (const auto& p : m.parameters()) ins.push_back(p);
  return ins;
}

/// Checks the input of a layer: 2-D or 3-D with d_model features.
void check_layer_input(const char* op, const Tensor& x, const char* what, std::int64_t d_model) {
  check_defined(x, op, what);
  if ((x.dim() != 2 && x.dim() != 3) || x.size(-1) != d_model)
    throw Error(op, std::string("expected ") + what + " of 2 (unbatched) or 3 (batched) dims with d_model " +
                        std::to_string(d_model) + " features, got " + shape_str(x.shape()));
}

/// Copies the parameters of layer 0 into every other layer (torch's deep copies start equal).
void copy_first_layer(ModuleList& layers) {
  if (layers.size() < 2) return;
  const StateDict first = layers[0]->state_dict();
  for (std::size_t i = 1; i < layers.size(); ++i) layers[i]->load_state_dict(first);
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  check_layer_options("TransformerEncoderLayer", o);
  self_attn = register_module("self_attn", make_attention(o));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model(), o.dim_feedforward(), o.bias(), o.dtype()));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward(), o.d_model(), o.bias(), o.dtype()));
  norm1 = register_module("norm1", make_norm(o));
  norm2 = register_module("norm2", make_norm(o));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout()));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout()));
  activation = make_activation(o.activation());
}

TransformerEncoderLayer::TransformerEncoderLayer(std::int64_t d_model, std::int64_t nhead)
    : TransformerEncoderLayer(TransformerLayerOptions(d_model, nhead)) {}

Tensor TransformerEncoderLayer::forward(const Tensor& src) { return forward(src, Tensor(), Tensor(), false); }

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask,
                                        bool is_causal) {
  const char* op = "TransformerEncoderLayer";
  check_layer_input(op, src, "src", options.d_model());
  const auto ins = layer_inputs(*this, {src, src_mask, src_key_padding_mask});
  return detail::composite("transformer_encoder_layer", ins, [&] {
    const auto sa = [&](const Tensor& x) {
      return dropout1->forward(self_attn->forward(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal).output);
    };
    const auto ff = [&](const Tensor& x) {
      return dropout2->forward(linear2->forward(dropout->forward(activation->forward(linear1->forward(x)))));
    };
    Tensor x = src;
    if (options.norm_first()) {
      x = x + sa(norm1->forward(x));
      return x + ff(norm2->forward(x));
    }
    x = norm1->forward(x + sa(x));
    return norm2->forward(x + ff(x));
  });
}

namespace {
/// The layers of a TransformerEncoder / TransformerDecoder (`owner`): num_layers copies of Layer(options) that all
/// start from layer 0's parameters, as torch's deep copies do.
template <class Layer>
std::shared_ptr<ModuleList> stacked_layers(const char* owner, const TransformerLayerOptions& options,
                                           std::int64_t num_layers) {
  if (num_layers < 0) throw Error(owner, "num_layers must be >= 0, got " + std::to_string(num_layers));
  auto list = std::make_shared<ModuleList>();
  for (std::int64_t i = 0; i < num_layers; ++i) list->push_back(std::make_shared<Layer>(options));
  copy_first_layer(*list);
  return list;
}
}  // namespace

TransformerEncoder::TransformerEncoder(const TransformerLayerOptions& layer, std::int64_t num_layers,
                                       std::shared_ptr<Module> final_norm)
    : Module("TransformerEncoder") {
  layers = register_module("layers", stacked_layers<TransformerEncoderLayer>("TransformerEncoder", layer, num_layers));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

Tensor TransformerEncoder::forward(const Tensor& src) { return forward(src, Tensor(), Tensor(), false); }

Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                   bool is_causal) {
  check_defined(src, "TransformerEncoder", "src");
  Tensor x = src;
  for (const auto& m : *layers)
    x = std::static_pointer_cast<TransformerEncoderLayer>(m)->forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? norm->forward(x) : x;
}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& o)
    : Module("TransformerDecoderLayer"), options(o) {
  check_layer_options("TransformerDecoderLayer", o);
  self_attn = register_module("self_attn", make_attention(o));
  multihead_attn = register_module("multihead_attn", make_attention(o));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model(), o.dim_feedforward(), o.bias(), o.dtype()));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward(), o.d_model(), o.bias(), o.dtype()));
  norm1 = register_module("norm1", make_norm(o));
  norm2 = register_module("norm2", make_norm(o));
  norm3 = register_module("norm3", make_norm(o));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout()));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout()));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(o.dropout()));
  activation = make_activation(o.activation());
}

TransformerDecoderLayer::TransformerDecoderLayer(std::int64_t d_model, std::int64_t nhead)
    : TransformerDecoderLayer(TransformerLayerOptions(d_model, nhead)) {}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                        const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                        const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                        bool memory_is_causal) {
  const char* op = "TransformerDecoderLayer";
  check_layer_input(op, tgt, "tgt", options.d_model());
  check_layer_input(op, memory, "memory", options.d_model());
  const auto ins =
      layer_inputs(*this, {tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask});
  return detail::composite("transformer_decoder_layer", ins, [&] {
    const auto sa = [&](const Tensor& x) {
      return dropout1->forward(
          self_attn->forward(x, x, x, tgt_key_padding_mask, false, tgt_mask, true, tgt_is_causal).output);
    };
    const auto ca = [&](const Tensor& x) {
      return dropout2->forward(
          multihead_attn->forward(x, memory, memory, memory_key_padding_mask, false, memory_mask, true, memory_is_causal)
              .output);
    };
    const auto ff = [&](const Tensor& x) {
      return dropout3->forward(linear2->forward(dropout->forward(activation->forward(linear1->forward(x)))));
    };
    Tensor x = tgt;
    if (options.norm_first()) {
      x = x + sa(norm1->forward(x));
      x = x + ca(norm2->forward(x));
      return x + ff(norm3->forward(x));
    }
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ca(x));
    return norm3->forward(x + ff(x));
  });
}

TransformerDecoder::TransformerDecoder(const TransformerLayerOptions& layer, std::int64_t num_layers,
                                       std::shared_ptr<Module> final_norm)
    : Module("TransformerDecoder") {
  layers = register_module("layers", stacked_layers<TransformerDecoderLayer>("TransformerDecoder", layer, num_layers));
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                   const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                   const Tensor& memory_key_padding_mask, bool tgt_is_causal, bool memory_is_causal) {
  check_defined(tgt, "TransformerDecoder", "tgt");
  Tensor x = tgt;
  for (const auto& m : *layers)
    x = std::static_pointer_cast<TransformerDecoderLayer>(m)->forward(
        x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal, memory_is_causal);
  return norm ? norm->forward(x) : x;
}

TransformerLayerOptions TransformerOptions::layer_options() const {
  return TransformerLayerOptions(d_model_, nhead_)
      .dim_feedforward(dim_feedforward_)
      .dropout(dropout_)
      .activation(activation_)
      .layer_norm_eps(layer_norm_eps_)
      .batch_first(batch_first_)
      .norm_first(norm_first_)
      .bias(bias_)
      .dtype(dtype_);
}

Transformer::Transformer(const TransformerOptions& o) : Module("Transformer"), options(o) {
  const TransformerLayerOptions lo = o.layer_options();
  check_layer_options("Transformer", lo);
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(lo, o.num_encoder_layers_, make_norm(lo)));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(lo, o.num_decoder_layers_, make_norm(lo)));
  for (auto& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                            const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                            const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask,
                            bool src_is_causal, bool tgt_is_causal, bool memory_is_causal) {
  const char* op = "Transformer";
  check_defined(src, op, "src");
  check_defined(tgt, op, "tgt");
  if (src.dim() != tgt.dim())
    throw Error(op, "src and tgt must both be batched or both unbatched, got src " + shape_str(src.shape()) + " and tgt " +
                        shape_str(tgt.shape()));
  const std::int64_t bdim = options.batch_first_ ? 0 : 1;
  if (src.dim() == 3 && src.size(bdim) != tgt.size(bdim))
    throw Error(op, "src and tgt must have the same batch size, got src " + shape_str(src.shape()) + " and tgt " +
                        shape_str(tgt.shape()));
  if (src.size(-1) != options.d_model_ || tgt.size(-1) != options.d_model_)
    throw Error(op, "src and tgt must have d_model " + std::to_string(options.d_model_) + " features, got src " +
                        shape_str(src.shape()) + " and tgt " + shape_str(tgt.shape()));
  const Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                          tgt_is_causal, memory_is_causal);
}

Tensor Transformer::generate_square_subsequent_mask(std::int64_t sz, Dtype dtype, Device device) {
  if (sz < 0) throw Error("generate_square_subsequent_mask", "sz must be >= 0, got " + std::to_string(sz));
  if (!is_floating(dtype))
    throw Error("generate_square_subsequent_mask",
                std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
  const Tensor above = arange(0, sz, 1, Dtype::Int64, device).unsqueeze(1) < arange(0, sz, 1, Dtype::Int64, device);
  return where(above, Scalar(-kInf), zeros({sz, sz}, dtype, device));
}

}  // namespace phasor::nn
