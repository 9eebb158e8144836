// src/data/dataloader.cpp - DataLoader: epoch orders (seeded per epoch) and batch gathering.
#include <numeric>

#include "phasor/creation.hpp"
#include "phasor/data/dataloader.hpp"
#include "phasor/random.hpp"

namespace phasor::data {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, std::int64_t batch_size, bool shuffle, bool drop_last,
                       std::optional<std::uint64_t> seed)
    : dataset_(std::move(dataset)), batch_size_(batch_size), shuffle_(shuffle), drop_last_(drop_last), seed_(0) {
  if (!dataset_) throw Error("DataLoader", "null dataset");
  if (batch_size <= 0) throw Error("DataLoader", "batch_size must be positive, got " + std::to_string(batch_size));
  seed_ = seed ? *seed
               : static_cast<std::uint64_t>(
                     randint(0, std::int64_t(1) << 62, {1}, int64, Device::cpu(), nullptr).item<std::int64_t>());
}

std::int64_t DataLoader::size() const {
  const std::int64_t n = dataset_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::int64_t> DataLoader::order(std::int64_t epoch) const {
  const std::int64_t n = dataset_->size();
  if (!shuffle_) {
    std::vector<std::int64_t> o(static_cast<std::size_t>(n));
    std::iota(o.begin(), o.end(), std::int64_t(0));
    return o;
  }
  Generator gen(splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(epoch))));
  return to_vector<std::int64_t>(randperm(n, int64, Device::cpu(), &gen));
}

DataLoader::iterator DataLoader::begin() {
  auto o = std::make_shared<const std::vector<std::int64_t>>(order(epoch_));
  ++epoch_;
  return iterator(this, std::move(o), 0);
}

DataLoader::iterator DataLoader::end() const { return iterator(this, nullptr, size()); }

DataLoader::iterator::reference DataLoader::iterator::operator*() const {
  if (!ready_) {
    if (!order_ || batch_ >= loader_->size()) throw Error("DataLoader", "dereferencing the end iterator");
    const std::int64_t bs = loader_->batch_size_;
    const auto n = static_cast<std::int64_t>(order_->size());
    const std::int64_t lo = batch_ * bs, hi = std::min(lo + bs, n);
    const std::vector<std::int64_t> idx(order_->begin() + lo, order_->begin() + hi);
    current_ = loader_->dataset_->get_batch(idx);
    ready_ = true;
  }
  return current_;
}

DataLoader::iterator& DataLoader::iterator::operator++() {
  ++batch_;
  ready_ = false;
  current_.clear();
  return *this;
}

}  // namespace phasor::data
