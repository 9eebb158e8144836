// phasor/nn/embedding.hpp - one_hot, embedding lookups (torch.nn.functional.one_hot / embedding /
// embedding_bag) and the Embedding module.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "phasor/dtype.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

namespace functional {

/// int64 tensor of shape index.shape + (num_classes) with a 1 at each index's class; num_classes = -1
/// takes max(index) + 1 (one host read). Indices must be int64 in [0, num_classes).
Tensor one_hot(const Tensor& index, std::int64_t num_classes = -1);

/// Rows of `weight` (V, D) at the int64 indices `input` (any shape): input.shape + (D). padding_idx
/// (negative counts from the end) gets no gradient; max_norm renormalises the referenced rows of weight in
/// place (no grad) to norm_type-norm <= max_norm; scale_grad_by_freq divides each row's gradient by the
/// number of times it occurs in input; sparse gradients are not supported (sparse must be false).
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx = std::nullopt,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2.0, bool scale_grad_by_freq = false,
                 bool sparse = false);

/// How embedding_bag combines the rows of a bag.
enum class EmbeddingBagMode { sum, mean, max };

/// Sums, means or maxima of bags of embedding rows: input (B, L) (each row a bag; offsets undefined) or 1-D
/// with int64 `offsets` (B) of each bag's start (include_last_offset: B + 1, the last one input's length);
/// per_sample_weights (input's shape) scale the rows (sum mode only); padding_idx entries are left out of
/// their bag; an empty bag gives zeros. Result (B, D).
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = Tensor(),
                     std::optional<double> max_norm = std::nullopt, double norm_type = 2.0,
                     bool scale_grad_by_freq = false, EmbeddingBagMode mode = EmbeddingBagMode::mean,
                     bool sparse = false, const Tensor& per_sample_weights = Tensor(),
                     bool include_last_offset = false, std::optional<std::int64_t> padding_idx = std::nullopt);

}  // namespace functional

/// Options of Embedding: `EmbeddingOptions(1000, 64).padding_idx(0).max_norm(1.0)`.
struct EmbeddingOptions {
  /// A table of num_embeddings rows of size embedding_dim.
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// Row that gets no gradient and starts at zero (negative counts from the end).
  EmbeddingOptions& padding_idx(std::optional<std::int64_t> v) { padding_idx_ = v; return *this; }
  /// Renormalise looked-up rows to at most this norm.
  EmbeddingOptions& max_norm(std::optional<double> v) { max_norm_ = v; return *this; }
  /// The p of max_norm's norm (default 2).
  EmbeddingOptions& norm_type(double v) { norm_type_ = v; return *this; }
  /// Divide gradients by the indices' frequencies in the batch (default false).
  EmbeddingOptions& scale_grad_by_freq(bool v) { scale_grad_by_freq_ = v; return *this; }
  /// Sparse gradients (only false is supported).
  EmbeddingOptions& sparse(bool v) { sparse_ = v; return *this; }
  /// Parameter dtype (default float32).
  EmbeddingOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t num_embeddings() const { return num_embeddings_; }         ///< rows of the table
  std::int64_t embedding_dim() const { return embedding_dim_; }           ///< size of each row
  std::optional<std::int64_t> padding_idx() const { return padding_idx_; }  ///< see padding_idx(v)
  std::optional<double> max_norm() const { return max_norm_; }            ///< see max_norm(v)
  double norm_type() const { return norm_type_; }                         ///< see norm_type(v)
  bool scale_grad_by_freq() const { return scale_grad_by_freq_; }         ///< see scale_grad_by_freq(v)
  bool sparse() const { return sparse_; }                                 ///< see sparse(v)
  Dtype dtype() const { return dtype_; }                                  ///< parameter dtype

  std::int64_t num_embeddings_;               ///< see num_embeddings()
  std::int64_t embedding_dim_;                ///< see embedding_dim()
  std::optional<std::int64_t> padding_idx_;   ///< see padding_idx()
  std::optional<double> max_norm_;            ///< see max_norm()
  double norm_type_ = 2.0;                    ///< see norm_type()
  bool scale_grad_by_freq_ = false;           ///< see scale_grad_by_freq()
  bool sparse_ = false;                       ///< see sparse()
  Dtype dtype_ = Dtype::Float32;              ///< see dtype()
};

/// A lookup table: forward(indices) = functional::embedding(indices, weight, ...options).
class Embedding : public Module {
 public:
  /// A table initialised N(0, 1) with the padding row zeroed (torch.nn.Embedding).
  explicit Embedding(const EmbeddingOptions& options);
  /// Embedding(EmbeddingOptions(num_embeddings, embedding_dim)).
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim);
  /// int64 indices (any shape) -> indices.shape + (embedding_dim).
  Tensor forward(const Tensor& input) override;
  /// "1000, 64, padding_idx=0".
  std::string extra_repr() const override;
  /// Redraws weight ~ N(0, 1) and zeroes the padding row.
  void reset_parameters();
  /// A module whose weight is `embeddings` (V, D) itself (shared, not copied, not reinitialised), trained
  /// unless `freeze`.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& embeddings, bool freeze = true,
                                                    std::optional<std::int64_t> padding_idx = std::nullopt,
                                                    std::optional<double> max_norm = std::nullopt,
                                                    double norm_type = 2.0, bool scale_grad_by_freq = false,
                                                    bool sparse = false);

  EmbeddingOptions options;  ///< the options it was built with
  Tensor weight;             ///< (num_embeddings, embedding_dim)
};

}  // namespace phasor::nn
