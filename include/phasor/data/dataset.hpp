// phasor/data/dataset.hpp - datasets: indexable collections of samples (each a list of tensors).
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::data {

/// A map-style dataset: `size()` samples, sample i is a list of tensors (e.g. {input, target}).
class Dataset {
 public:
  /// Virtual destructor.
  virtual ~Dataset() = default;
  /// Number of samples.
  virtual std::int64_t size() const = 0;
  /// Sample `i` in [0, size()).
  virtual std::vector<Tensor> get(std::int64_t i) const = 0;
  /// Samples `indices` stacked along a new leading dim (one tensor per field); the default stacks get(i).
  virtual std::vector<Tensor> get_batch(const std::vector<std::int64_t>& indices) const;
};

/// Samples are the rows (dim 0) of a list of tensors that share their first size.
class TensorDataset : public Dataset {
 public:
  /// Wraps `tensors` (all with the same size along dim 0; at least one, none 0-d); stored contiguous.
  explicit TensorDataset(std::vector<Tensor> tensors);
  /// Number of rows.
  std::int64_t size() const override { return size_; }
  /// Row `i` of every tensor (views).
  std::vector<Tensor> get(std::int64_t i) const override;
  /// Rows `indices` of every tensor, gathered into new contiguous tensors (one memcpy per run of rows).
  std::vector<Tensor> get_batch(const std::vector<std::int64_t>& indices) const override;
  /// The wrapped tensors.
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  std::int64_t size_ = 0;
};

/// The samples of another dataset at the given indices, in that order.
class Subset : public Dataset {
 public:
  /// Samples `indices` (each in [0, base->size())) of `base`.
  Subset(std::shared_ptr<const Dataset> base, std::vector<std::int64_t> indices);
  /// Number of indices.
  std::int64_t size() const override { return static_cast<std::int64_t>(indices_.size()); }
  /// Sample indices()[i] of the base dataset.
  std::vector<Tensor> get(std::int64_t i) const override;
  /// The base dataset's batch at the mapped indices.
  std::vector<Tensor> get_batch(const std::vector<std::int64_t>& indices) const override;
  /// The indices into the base dataset.
  const std::vector<std::int64_t>& indices() const { return indices_; }
  /// The base dataset.
  const std::shared_ptr<const Dataset>& base() const { return base_; }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<std::int64_t> indices_;
};

/// Splits a random permutation of `dataset` (seeded) into consecutive subsets of `lengths`
/// (which must sum to dataset->size()).
std::vector<Subset> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<std::int64_t>& lengths,
                                 std::uint64_t seed);
/// random_split with lengths given by `fractions` (summing to 1): floor(f * n) each, the remaining
/// samples going one each to the first subsets, as torch.utils.data.random_split does.
std::vector<Subset> random_split_fractions(std::shared_ptr<const Dataset> dataset, const std::vector<double>& fractions,
                                           std::uint64_t seed);

/// random_split of a dataset held by value (copied into shared ownership).
template <class D, class = std::enable_if_t<std::is_base_of_v<Dataset, D>>>
std::vector<Subset> random_split(const D& dataset, const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  return random_split(std::shared_ptr<const Dataset>(std::make_shared<D>(dataset)), lengths, seed);
}
/// random_split_fractions of a dataset held by value (copied into shared ownership).
template <class D, class = std::enable_if_t<std::is_base_of_v<Dataset, D>>>
std::vector<Subset> random_split_fractions(const D& dataset, const std::vector<double>& fractions, std::uint64_t seed) {
  return random_split_fractions(std::shared_ptr<const Dataset>(std::make_shared<D>(dataset)), fractions, seed);
}

}  // namespace phasor::data
