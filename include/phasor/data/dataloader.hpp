// phasor/data/dataloader.hpp - batches of a dataset, optionally reshuffled (seeded) every epoch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "phasor/data/dataset.hpp"

namespace phasor::data {

/// Iterates a dataset in batches: `for (const auto& batch : loader)` yields one std::vector<Tensor>
/// per batch (one contiguous tensor per field, batch dim first). Each range-for (each begin()) is one
/// epoch; with shuffle, epoch e visits the samples in an order that depends only on (seed, e).
class DataLoader {
 public:
  /// Batches of `batch_size` (> 0) from `dataset`; `seed` defaults to one drawn from phasor's default Generator.
  DataLoader(std::shared_ptr<const Dataset> dataset, std::int64_t batch_size, bool shuffle = false,
             bool drop_last = false, std::optional<std::uint64_t> seed = std::nullopt);
  /// Same, for a dataset held by value (copied into shared ownership).
  template <class D, class = std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>>>
  DataLoader(D&& dataset, std::int64_t batch_size, bool shuffle = false, bool drop_last = false,
             std::optional<std::uint64_t> seed = std::nullopt)
      : DataLoader(std::shared_ptr<const Dataset>(std::make_shared<std::decay_t<D>>(std::forward<D>(dataset))),
                   batch_size, shuffle, drop_last, seed) {}

  /// Input iterator over one epoch's batches.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;  ///< single pass
    using value_type = std::vector<Tensor>;             ///< a batch
    using difference_type = std::ptrdiff_t;             ///< distance type
    using pointer = const value_type*;                  ///< pointer to a batch
    using reference = const value_type&;                ///< reference to a batch
    /// The current batch (gathered on first access).
    reference operator*() const;
    /// Pointer to the current batch.
    pointer operator->() const { return &**this; }
    /// Advances to the next batch.
    iterator& operator++();
    /// Same position.
    bool operator==(const iterator& o) const { return batch_ == o.batch_; }
    /// Different position.
    bool operator!=(const iterator& o) const { return batch_ != o.batch_; }

   private:
    friend class DataLoader;
    iterator(const DataLoader* loader, std::shared_ptr<const std::vector<std::int64_t>> order, std::int64_t batch)
        : loader_(loader), order_(std::move(order)), batch_(batch) {}
    const DataLoader* loader_ = nullptr;
    std::shared_ptr<const std::vector<std::int64_t>> order_;
    std::int64_t batch_ = 0;
    mutable std::vector<Tensor> current_;
    mutable bool ready_ = false;
  };

  /// Starts the next epoch (reshuffling when enabled) and returns its first batch.
  iterator begin();
  /// One past the last batch.
  iterator end() const;
  /// Number of batches per epoch.
  std::int64_t size() const;
  /// Batch size.
  std::int64_t batch_size() const { return batch_size_; }
  /// The dataset.
  const std::shared_ptr<const Dataset>& dataset() const { return dataset_; }
  /// The shuffle seed.
  std::uint64_t seed() const { return seed_; }
  /// The epoch the next begin() starts (0 at construction).
  std::int64_t epoch() const { return epoch_; }
  /// Sets the epoch the next begin() starts (to resume a run).
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  /// The sample order of epoch `epoch` (identity without shuffle).
  std::vector<std::int64_t> order(std::int64_t epoch) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::int64_t batch_size_;
  bool shuffle_, drop_last_;
  std::uint64_t seed_;
  std::int64_t epoch_ = 0;
};

}  // namespace phasor::data
