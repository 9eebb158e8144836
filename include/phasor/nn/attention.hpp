// phasor/nn/attention.hpp - attention and transformer layers (torch names, argument orders, defaults and
// parameter names): functional::scaled_dot_product_attention, MultiheadAttention, TransformerEncoderLayer,
// TransformerEncoder, TransformerDecoderLayer, TransformerDecoder and Transformer. Everything is composed of
// differentiable ops (matmul, softmax, where, dropout, linear, layer_norm), so gradients of any order and every
// device come from those ops.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/nn/layers.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/nn/normalization.hpp"
#include "phasor/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// softmax(query @ key^T * scale + mask) @ value, as torch.nn.functional.scaled_dot_product_attention:
/// query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev), batch dims broadcast. attn_mask
/// (broadcastable to (..., L, S)) is bool (true = takes part) or of query's dtype (added to the scores);
/// is_causal masks with the top-left aligned lower triangle (no attn_mask then); scale defaults to 1/sqrt(E);
/// dropout_p in [0, 1) drops attention weights (always, as torch: pass 0 in eval); enable_gqa lets query have
/// a multiple of key's and value's heads (dim -3), each key/value head serving consecutive query heads
/// (repeat_interleave). A row whose keys are all masked out gets NaN, as torch's reference formula (torch 2.5's
/// math backend returns zeros there instead).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, bool enable_gqa = false,
                                    Generator* gen = nullptr);

}  // namespace functional

// ---- MultiheadAttention ----------------------------------------------------------------------------------

/// Options of MultiheadAttention: `MultiheadAttentionOptions(64, 8).dropout(0.1).batch_first(true)`.
struct MultiheadAttentionOptions {
  /// embed_dim split over num_heads heads (embed_dim must be divisible by num_heads).
  MultiheadAttentionOptions(std::int64_t embed_dim, std::int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// Dropout probability on the attention weights in training (default 0).
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }
  /// Biases of the input and output projections (default true).
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  /// Learned bias_k / bias_v appended to the keys and values along the sequence (default false).
  MultiheadAttentionOptions& add_bias_kv(bool v) { add_bias_kv_ = v; return *this; }
  /// A zero key and value appended along the sequence (default false).
  MultiheadAttentionOptions& add_zero_attn(bool v) { add_zero_attn_ = v; return *this; }
  /// Features of key (default embed_dim).
  MultiheadAttentionOptions& kdim(std::int64_t v) { kdim_ = v; return *this; }
  /// Features of value (default embed_dim).
  MultiheadAttentionOptions& vdim(std::int64_t v) { vdim_ = v; return *this; }
  /// Inputs and output laid out (N, L, E) instead of (L, N, E) (default false).
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  /// Parameter dtype (default float32).
  MultiheadAttentionOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t embed_dim() const { return embed_dim_; }             ///< model width E
  std::int64_t num_heads() const { return num_heads_; }             ///< number of heads
  double dropout() const { return dropout_; }                       ///< attention dropout
  bool bias() const { return bias_; }                               ///< projection biases on
  bool add_bias_kv() const { return add_bias_kv_; }                 ///< bias_k / bias_v on
  bool add_zero_attn() const { return add_zero_attn_; }             ///< zero key/value appended
  std::int64_t kdim() const { return kdim_.value_or(embed_dim_); }  ///< key features
  std::int64_t vdim() const { return vdim_.value_or(embed_dim_); }  ///< value features
  bool batch_first() const { return batch_first_; }                 ///< (N, L, E) layout
  Dtype dtype() const { return dtype_; }                            ///< parameter dtype

  std::int64_t embed_dim_;             ///< see embed_dim()
  std::int64_t num_heads_;             ///< see num_heads()
  double dropout_ = 0.0;               ///< see dropout()
  bool bias_ = true;                   ///< see bias()
  bool add_bias_kv_ = false;           ///< see add_bias_kv()
  bool add_zero_attn_ = false;         ///< see add_zero_attn()
  std::optional<std::int64_t> kdim_;   ///< see kdim()
  std::optional<std::int64_t> vdim_;   ///< see vdim()
  bool batch_first_ = false;           ///< see batch_first()
  Dtype dtype_ = Dtype::Float32;       ///< see dtype()
};

/// What MultiheadAttention::forward returns.
struct MultiheadAttentionOutput {
  Tensor output;   ///< (L, N, E), (N, L, E) with batch_first, or (L, E) unbatched
  Tensor weights;  ///< (N, L, S) head-averaged or (N, H, L, S) (unbatched: no N); undefined without need_weights
};

/// Multi-head attention (torch.nn.MultiheadAttention): parameters "in_proj_weight" (3E, E) when
/// kdim == vdim == E, else "q_proj_weight" (E, E), "k_proj_weight" (E, kdim), "v_proj_weight" (E, vdim);
/// "in_proj_bias" (3E) with bias; "bias_k", "bias_v" (1, 1, E) with add_bias_kv; submodule "out_proj" (Linear).
class MultiheadAttention : public Module {
 public:
  /// A layer initialised as torch: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k / bias_v.
  explicit MultiheadAttention(const MultiheadAttentionOptions& options);
  /// MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)).
  MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads);
  /// Attention of query (L, N, E) over key (S, N, kdim) / value (S, N, vdim) ((N, *, *) with batch_first,
  /// (L, E) / (S, kdim) / (S, vdim) unbatched). key_padding_mask (N, S) ((S) unbatched): bool, true = ignore
  /// that key, or float, added; attn_mask (L, S) or (N * num_heads, L, S): bool, true = not allowed, or float,
  /// added. is_causal is torch's hint that attn_mask is the causal mask (attn_mask is required with it).
  /// Dropout on the weights in training only. A query whose keys are all masked gets NaN.
  MultiheadAttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const Tensor& key_padding_mask = Tensor(), bool need_weights = true,
                                   const Tensor& attn_mask = Tensor(), bool average_attn_weights = true,
                                   bool is_causal = false);
  /// Self-attention output forward(x, x, x, {}, false).output (so the layer works in Sequential).
  Tensor forward(const Tensor& x) override;
  /// "embed_dim=8, num_heads=2, ...".
  std::string extra_repr() const override;
  /// Redraws the parameters as torch's _reset_parameters (out_proj's weight keeps Linear's initialisation).
  void reset_parameters();
  /// embed_dim / num_heads.
  std::int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }

  MultiheadAttentionOptions options;  ///< the options it was built with
  Tensor in_proj_weight;              ///< (3E, E) packed q/k/v projection; undefined when kdim or vdim differ from E
  Tensor q_proj_weight;               ///< (E, E); defined only when kdim or vdim differ from E
  Tensor k_proj_weight;               ///< (E, kdim); defined only when kdim or vdim differ from E
  Tensor v_proj_weight;               ///< (E, vdim); defined only when kdim or vdim differ from E
  Tensor in_proj_bias;                ///< (3E) q/k/v biases; undefined without bias
  Tensor bias_k;                      ///< (1, 1, E) key appended to the keys; undefined without add_bias_kv
  Tensor bias_v;                      ///< (1, 1, E) value appended to the values; undefined without add_bias_kv
  std::shared_ptr<Linear> out_proj;   ///< output projection E -> E
};

// ---- transformer layers ----------------------------------------------------------------------------------

/// Options of TransformerEncoderLayer / TransformerDecoderLayer: `TransformerLayerOptions(64, 4).dim_feedforward(256)`.
struct TransformerLayerOptions {
  /// Model width d_model and number of attention heads nhead.
  TransformerLayerOptions(std::int64_t d_model, std::int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  /// Hidden width of the feed-forward block (default 2048).
  TransformerLayerOptions& dim_feedforward(std::int64_t v) { dim_feedforward_ = v; return *this; }
  /// Dropout probability everywhere in the layer (default 0.1).
  TransformerLayerOptions& dropout(double v) { dropout_ = v; return *this; }
  /// Feed-forward activation (default relu; torch's are relu and gelu).
  TransformerLayerOptions& activation(Activation v) { activation_ = v; return *this; }
  /// LayerNorm epsilon (default 1e-5).
  TransformerLayerOptions& layer_norm_eps(double v) { layer_norm_eps_ = v; return *this; }
  /// Inputs and output laid out (N, L, E) instead of (L, N, E) (default false).
  TransformerLayerOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  /// Pre-norm (norm before attention and feed-forward) instead of post-norm (default false).
  TransformerLayerOptions& norm_first(bool v) { norm_first_ = v; return *this; }
  /// Biases in the Linear, attention and LayerNorm parameters (default true).
  TransformerLayerOptions& bias(bool v) { bias_ = v; return *this; }
  /// Parameter dtype (default float32).
  TransformerLayerOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t d_model() const { return d_model_; }                 ///< model width
  std::int64_t nhead() const { return nhead_; }                     ///< attention heads
  std::int64_t dim_feedforward() const { return dim_feedforward_; } ///< feed-forward width
  double dropout() const { return dropout_; }                       ///< dropout probability
  Activation activation() const { return activation_; }             ///< feed-forward activation
  double layer_norm_eps() const { return layer_norm_eps_; }         ///< LayerNorm epsilon
  bool batch_first() const { return batch_first_; }                 ///< (N, L, E) layout
  bool norm_first() const { return norm_first_; }                   ///< pre-norm
  bool bias() const { return bias_; }                               ///< biases on
  Dtype dtype() const { return dtype_; }                            ///< parameter dtype

  std::int64_t d_model_;                      ///< see d_model()
  std::int64_t nhead_;                        ///< see nhead()
  std::int64_t dim_feedforward_ = 2048;       ///< see dim_feedforward()
  double dropout_ = 0.1;                      ///< see dropout()
  Activation activation_ = Activation::relu;  ///< see activation()
  double layer_norm_eps_ = 1e-5;              ///< see layer_norm_eps()
  bool batch_first_ = false;                  ///< see batch_first()
  bool norm_first_ = false;                   ///< see norm_first()
  bool bias_ = true;                          ///< see bias()
  Dtype dtype_ = Dtype::Float32;              ///< see dtype()
};
using TransformerEncoderLayerOptions = TransformerLayerOptions;  ///< options of TransformerEncoderLayer
using TransformerDecoderLayerOptions = TransformerLayerOptions;  ///< options of TransformerDecoderLayer

/// Self-attention and feed-forward block (torch.nn.TransformerEncoderLayer): submodules "self_attn", "linear1",
/// "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2".
class TransformerEncoderLayer : public Module {
 public:
  /// A layer from options.
  explicit TransformerEncoderLayer(const TransformerLayerOptions& options);
  /// TransformerEncoderLayer(TransformerLayerOptions(d_model, nhead)).
  TransformerEncoderLayer(std::int64_t d_model, std::int64_t nhead);
  /// src (S, N, E) ((N, S, E) with batch_first, (S, E) unbatched); masks as MultiheadAttention's attn_mask and
  /// key_padding_mask; is_causal is the hint that src_mask is causal.
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = Tensor(),
                 bool is_causal = false);
  /// forward(src, {}, {}, false).
  Tensor forward(const Tensor& src) override;

  TransformerLayerOptions options;               ///< the options it was built with
  std::shared_ptr<MultiheadAttention> self_attn; ///< self-attention
  std::shared_ptr<Linear> linear1;               ///< d_model -> dim_feedforward
  std::shared_ptr<Dropout> dropout;              ///< after the activation
  std::shared_ptr<Linear> linear2;               ///< dim_feedforward -> d_model
  std::shared_ptr<LayerNorm> norm1;              ///< around the attention block
  std::shared_ptr<LayerNorm> norm2;              ///< around the feed-forward block
  std::shared_ptr<Dropout> dropout1;             ///< on the attention block's output
  std::shared_ptr<Dropout> dropout2;             ///< on the feed-forward block's output
  std::shared_ptr<Module> activation;            ///< feed-forward activation (not registered: no parameters)
};

/// A stack of num_layers encoder layers (torch.nn.TransformerEncoder): submodules "layers.0", "layers.1", ...
/// and the optional final "norm". As torch's deep copies, every layer starts with the same parameters.
class TransformerEncoder : public Module {
 public:
  /// num_layers layers built from `layer`, then `norm` (may be null) on the output.
  TransformerEncoder(const TransformerLayerOptions& layer, std::int64_t num_layers, std::shared_ptr<Module> norm = nullptr);
  /// src through every layer (with the same masks), then the norm.
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask = Tensor(),
                 bool is_causal = false);
  /// forward(src, {}, {}, false).
  Tensor forward(const Tensor& src) override;

  std::shared_ptr<ModuleList> layers;  ///< the TransformerEncoderLayer modules
  std::shared_ptr<Module> norm;        ///< final norm, null when none
};

/// Self-attention, cross-attention over `memory` and feed-forward (torch.nn.TransformerDecoderLayer):
/// submodules "self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "norm3",
/// "dropout1", "dropout2", "dropout3".
class TransformerDecoderLayer : public Module {
 public:
  /// A layer from options.
  explicit TransformerDecoderLayer(const TransformerLayerOptions& options);
  /// TransformerDecoderLayer(TransformerLayerOptions(d_model, nhead)).
  TransformerDecoderLayer(std::int64_t d_model, std::int64_t nhead);
  /// tgt (T, N, E) attending to itself (tgt_mask, tgt_key_padding_mask) and to memory (S, N, E) (memory_mask,
  /// memory_key_padding_mask); layouts and masks as MultiheadAttention's.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool tgt_is_causal = false,
                 bool memory_is_causal = false);

  TransformerLayerOptions options;                    ///< the options it was built with
  std::shared_ptr<MultiheadAttention> self_attn;      ///< self-attention
  std::shared_ptr<MultiheadAttention> multihead_attn; ///< cross-attention over memory
  std::shared_ptr<Linear> linear1;                    ///< d_model -> dim_feedforward
  std::shared_ptr<Dropout> dropout;                   ///< after the activation
  std::shared_ptr<Linear> linear2;                    ///< dim_feedforward -> d_model
  std::shared_ptr<LayerNorm> norm1;                   ///< around self-attention
  std::shared_ptr<LayerNorm> norm2;                   ///< around cross-attention
  std::shared_ptr<LayerNorm> norm3;                   ///< around the feed-forward block
  std::shared_ptr<Dropout> dropout1;                  ///< on self-attention's output
  std::shared_ptr<Dropout> dropout2;                  ///< on cross-attention's output
  std::shared_ptr<Dropout> dropout3;                  ///< on the feed-forward block's output
  std::shared_ptr<Module> activation;                 ///< feed-forward activation (not registered)
};

/// A stack of num_layers decoder layers (torch.nn.TransformerDecoder): "layers.0", ... and the optional "norm";
/// every layer starts with the same parameters (torch's deep copies).
class TransformerDecoder : public Module {
 public:
  /// num_layers layers built from `layer`, then `norm` (may be null) on the output.
  TransformerDecoder(const TransformerLayerOptions& layer, std::int64_t num_layers, std::shared_ptr<Module> norm = nullptr);
  /// tgt through every layer (each attending to memory with the same masks), then the norm.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool tgt_is_causal = false,
                 bool memory_is_causal = false);

  std::shared_ptr<ModuleList> layers;  ///< the TransformerDecoderLayer modules
  std::shared_ptr<Module> norm;        ///< final norm, null when none
};

/// Options of Transformer: torch.nn.Transformer's arguments and defaults.
struct TransformerOptions {
  /// d_model 512, nhead 8, 6 + 6 layers, feed-forward 2048, dropout 0.1 unless changed.
  TransformerOptions() = default;
  /// Model width (default 512).
  TransformerOptions& d_model(std::int64_t v) { d_model_ = v; return *this; }
  /// Attention heads (default 8).
  TransformerOptions& nhead(std::int64_t v) { nhead_ = v; return *this; }
  /// Encoder layers (default 6).
  TransformerOptions& num_encoder_layers(std::int64_t v) { num_encoder_layers_ = v; return *this; }
  /// Decoder layers (default 6).
  TransformerOptions& num_decoder_layers(std::int64_t v) { num_decoder_layers_ = v; return *this; }
  /// Feed-forward width (default 2048).
  TransformerOptions& dim_feedforward(std::int64_t v) { dim_feedforward_ = v; return *this; }
  /// Dropout probability (default 0.1).
  TransformerOptions& dropout(double v) { dropout_ = v; return *this; }
  /// Feed-forward activation (default relu).
  TransformerOptions& activation(Activation v) { activation_ = v; return *this; }
  /// LayerNorm epsilon (default 1e-5).
  TransformerOptions& layer_norm_eps(double v) { layer_norm_eps_ = v; return *this; }
  /// (N, L, E) layout (default false).
  TransformerOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  /// Pre-norm layers (default false).
  TransformerOptions& norm_first(bool v) { norm_first_ = v; return *this; }
  /// Biases on (default true).
  TransformerOptions& bias(bool v) { bias_ = v; return *this; }
  /// Parameter dtype (default float32).
  TransformerOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  /// The options of each encoder / decoder layer.
  TransformerLayerOptions layer_options() const;

  std::int64_t d_model_ = 512;                ///< see d_model()
  std::int64_t nhead_ = 8;                    ///< see nhead()
  std::int64_t num_encoder_layers_ = 6;       ///< see num_encoder_layers()
  std::int64_t num_decoder_layers_ = 6;       ///< see num_decoder_layers()
  std::int64_t dim_feedforward_ = 2048;       ///< see dim_feedforward()
  double dropout_ = 0.1;                      ///< see dropout()
  Activation activation_ = Activation::relu;  ///< see activation()
  double layer_norm_eps_ = 1e-5;              ///< see layer_norm_eps()
  bool batch_first_ = false;                  ///< see batch_first()
  bool norm_first_ = false;                   ///< see norm_first()
  bool bias_ = true;                          ///< see bias()
  Dtype dtype_ = Dtype::Float32;              ///< see dtype()
};

/// Encoder-decoder transformer (torch.nn.Transformer): submodules "encoder" and "decoder", each ending in a
/// LayerNorm "norm"; every parameter with more than one dim redrawn with xavier_uniform_, as torch.
class Transformer : public Module {
 public:
  /// A transformer from options.
  explicit Transformer(const TransformerOptions& options = TransformerOptions());
  /// memory = encoder(src, src_mask, src_key_padding_mask), then decoder(tgt, memory, ...): src (S, N, E),
  /// tgt (T, N, E) ((N, *, E) with batch_first, unbatched (S, E), (T, E)) -> (T, N, E).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool src_is_causal = false,
                 bool tgt_is_causal = false, bool memory_is_causal = false);
  /// (sz, sz) float mask: 0 on and below the diagonal, -inf above (a causal attn_mask).
  static Tensor generate_square_subsequent_mask(std::int64_t sz, Dtype dtype = Dtype::Float32,
                                                Device device = Device::cpu());

  TransformerOptions options;                   ///< the options it was built with
  std::shared_ptr<TransformerEncoder> encoder;  ///< encoder stack with its final norm
  std::shared_ptr<TransformerDecoder> decoder;  ///< decoder stack with its final norm
};

}  // namespace phasor::nn
