// tests/test_data.cpp - TensorDataset, Subset, random_split, DataLoader (order, coverage, drop_last,
// seeded reshuffling).
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>

#include <algorithm>
#include <numeric>
#include <set>

using namespace phasor;
using namespace phasor::data;

namespace {

/// x[i] = (i, 10 i + 1, 10 i + 2) as float64; y[i] = i as int64; z[i] = complex(i, -i) in a (2, 2) block.
TensorDataset make_ds(std::int64_t n) {
  Tensor id = arange(0, n);
  Tensor x = stack({id.to(float64), id.to(float64) * 10.0 + 1.0, id.to(float64) * 10.0 + 2.0}, 1);
  Tensor zr = id.to(float64).reshape({n, 1, 1}).expand({n, 2, 2});
  Tensor z = complex(zr, -zr);
  return TensorDataset({x, id, z});
}

/// The ids (field 1) of every batch of one epoch, and checks each batch's fields agree with its ids.
std::vector<std::vector<std::int64_t>> epoch_ids(DataLoader& dl) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& batch : dl) {
    REQUIRE(batch.size() == 3);
    const auto ids = to_vector<std::int64_t>(batch[1]);
    const auto x = to_vector<double>(batch[0]);
    const auto z = to_vector<std::complex<double>>(batch[2]);
    REQUIRE(batch[0].shape() == Shape{static_cast<std::int64_t>(ids.size()), 3});
    REQUIRE(batch[2].shape() == Shape{static_cast<std::int64_t>(ids.size()), 2, 2});
    CHECK(batch[0].is_contiguous());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const double i = static_cast<double>(ids[k]);
      CHECK(x[3 * k] == i);
      CHECK(x[3 * k + 1] == 10 * i + 1);
      CHECK(x[3 * k + 2] == 10 * i + 2);
      for (int e = 0; e < 4; ++e) CHECK(z[4 * k + e] == std::complex<double>(i, -i));
    }
    out.push_back(ids);
  }
  return out;
}

std::vector<std::int64_t> flat(const std::vector<std::vector<std::int64_t>>& v) {
  std::vector<std::int64_t> out;
  for (const auto& b : v) out.insert(out.end(), b.begin(), b.end());
  return out;
}

/// A dataset without its own get_batch (exercises Dataset's default stacking path).
struct Squares : Dataset {
  std::int64_t n;
  explicit Squares(std::int64_t n_) : n(n_) {}
  std::int64_t size() const override { return n; }
  std::vector<Tensor> get(std::int64_t i) const override {
    return {scalar_tensor(static_cast<double>(i * i), float64), full({2}, Scalar(i), int64)};
  }
};

}  // namespace

TEST_CASE("TensorDataset: size, get, get_batch, errors") {
  TensorDataset ds = make_ds(5);
  CHECK(ds.size() == 5);
  auto s = ds.get(3);
  REQUIRE(s.size() == 3);
  CHECK(to_vector<double>(s[0]) == std::vector<double>{3, 31, 32});
  CHECK(s[1].item<std::int64_t>() == 3);
  auto b = ds.get_batch({4, 0, 1, 2, 2});
  CHECK(to_vector<std::int64_t>(b[1]) == std::vector<std::int64_t>{4, 0, 1, 2, 2});
  CHECK(to_vector<double>(b[0])[0] == 4);
  // non-contiguous inputs are fine
  Tensor m = arange(0, 12, 1, float32).reshape({3, 4}).t();  // 4 samples of 3
  TensorDataset dt({m});
  CHECK(to_vector<float>(dt.get_batch({1, 3})[0]) == std::vector<float>{1, 5, 9, 3, 7, 11});
  CHECK_THROWS_WITH_AS(TensorDataset({zeros({4, 2}), zeros({5})}),
                       doctest::Contains("[TensorDataset] tensors differ in size along dim 0: (4, 2), (5,)"), Error);
  CHECK_THROWS_WITH_AS(TensorDataset({zeros({4}), scalar_tensor(1.0)}), doctest::Contains("0-d"), Error);
  CHECK_THROWS_WITH_AS(TensorDataset(std::vector<Tensor>{}), doctest::Contains("at least one"), Error);
  CHECK_THROWS_WITH_AS(TensorDataset({Tensor()}), doctest::Contains("undefined"), Error);
  CHECK_THROWS_WITH_AS(ds.get(5), doctest::Contains("index 5 out of range for a dataset of 5"), Error);
  CHECK_THROWS_WITH_AS(ds.get(-1), doctest::Contains("index -1 out of range"), Error);
  CHECK_THROWS_WITH_AS(ds.get_batch({0, 7}), doctest::Contains("index 7 out of range"), Error);
  CHECK_THROWS_WITH_AS(ds.get_batch({}), doctest::Contains("empty list"), Error);
}

TEST_CASE("DataLoader without shuffle: order, sizes, last batch, drop_last") {
  DataLoader dl(make_ds(10), 4);
  CHECK(dl.size() == 3);
  auto e = epoch_ids(dl);
  REQUIRE(e.size() == 3);
  CHECK(e[0] == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(e[1] == std::vector<std::int64_t>{4, 5, 6, 7});
  CHECK(e[2] == std::vector<std::int64_t>{8, 9});
  CHECK(epoch_ids(dl) == e);  // same order every epoch

  DataLoader dd(make_ds(10), 4, false, true);
  CHECK(dd.size() == 2);
  auto d = epoch_ids(dd);
  REQUIRE(d.size() == 2);
  CHECK(d[1] == std::vector<std::int64_t>{4, 5, 6, 7});

  DataLoader big(make_ds(3), 8);
  CHECK(big.size() == 1);
  CHECK(flat(epoch_ids(big)) == std::vector<std::int64_t>{0, 1, 2});
  DataLoader big_drop(make_ds(3), 8, false, true);
  CHECK(big_drop.size() == 0);
  CHECK(epoch_ids(big_drop).empty());

  CHECK_THROWS_WITH_AS(DataLoader(make_ds(3), 0), doctest::Contains("[DataLoader] batch_size must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(DataLoader(make_ds(3), -2), doctest::Contains("got -2"), Error);
  CHECK_THROWS_WITH_AS(DataLoader(std::shared_ptr<const Dataset>(), 2), doctest::Contains("null dataset"), Error);
}

TEST_CASE("DataLoader with shuffle: coverage, per-epoch reshuffle, determinism") {
  const std::int64_t n = 23;
  DataLoader dl(make_ds(n), 5, true, false, 1234);
  CHECK(dl.size() == 5);
  std::vector<std::int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::vector<std::int64_t>> orders;
  for (int epoch = 0; epoch < 4; ++epoch) {
    auto e = epoch_ids(dl);
    REQUIRE(e.size() == 5);
    for (std::size_t k = 0; k + 1 < e.size(); ++k) CHECK(e[k].size() == 5);
    CHECK(e.back().size() == 3);
    auto f = flat(e);
    orders.push_back(f);
    std::sort(f.begin(), f.end());
    CHECK(f == all);  // every sample exactly once
  }
  CHECK(orders[0] != orders[1]);
  CHECK(orders[1] != orders[2]);
  CHECK(orders[0] != all);
  // same seed: same sequence of epochs; set_epoch replays an epoch; order() agrees with iteration
  DataLoader again(make_ds(n), 5, true, false, 1234);
  for (int epoch = 0; epoch < 4; ++epoch) CHECK(flat(epoch_ids(again)) == orders[epoch]);
  again.set_epoch(2);
  CHECK(flat(epoch_ids(again)) == orders[2]);
  CHECK(again.epoch() == 3);
  CHECK(again.order(1) == orders[1]);
  DataLoader other(make_ds(n), 5, true, false, 99);
  CHECK(flat(epoch_ids(other)) != orders[0]);
  // drop_last with shuffle: full batches only, distinct samples
  DataLoader dd(make_ds(n), 5, true, true, 7);
  auto d = epoch_ids(dd);
  REQUIRE(d.size() == 4);
  for (const auto& b : d) CHECK(b.size() == 5);
  auto f = flat(d);
  CHECK(std::set<std::int64_t>(f.begin(), f.end()).size() == 20);
  // default seed comes from the default generator
  manual_seed(5);
  DataLoader s1(make_ds(n), 4, true);
  manual_seed(5);
  DataLoader s2(make_ds(n), 4, true);
  CHECK(s1.seed() == s2.seed());
  CHECK(flat(epoch_ids(s1)) == flat(epoch_ids(s2)));
}

TEST_CASE("random_split and Subset") {
  auto ds = std::make_shared<TensorDataset>(make_ds(10));
  auto parts = random_split(std::shared_ptr<const Dataset>(ds), {7, 3}, 42);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].size() == 7);
  CHECK(parts[1].size() == 3);
  std::vector<std::int64_t> seen = parts[0].indices();
  seen.insert(seen.end(), parts[1].indices().begin(), parts[1].indices().end());
  std::sort(seen.begin(), seen.end());
  std::vector<std::int64_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  CHECK(seen == all);
  // deterministic in the seed, different across seeds
  auto again = random_split(make_ds(10), {7, 3}, 42);
  CHECK(again[0].indices() == parts[0].indices());
  auto other = random_split(make_ds(10), {7, 3}, 43);
  CHECK(other[0].indices() != parts[0].indices());
  // a subset's samples are the base samples at its indices, also through a DataLoader
  CHECK(parts[1].get(2)[1].item<std::int64_t>() == parts[1].indices()[2]);
  DataLoader dl(parts[0], 3);
  CHECK(flat(epoch_ids(dl)) == parts[0].indices());
  // fractions: floor, remainder to the first subsets (as torch)
  auto fr = random_split_fractions(make_ds(10), {0.33, 0.33, 0.34}, 1);
  REQUIRE(fr.size() == 3);
  CHECK(fr[0].size() == 4);
  CHECK(fr[1].size() == 3);
  CHECK(fr[2].size() == 3);
  CHECK_THROWS_WITH_AS(random_split(make_ds(10), {7, 4}, 1),
                       doctest::Contains("[random_split] lengths (7, 4) sum to 11 but the dataset has 10"), Error);
  CHECK_THROWS_WITH_AS(random_split(make_ds(10), {12, -2}, 1), doctest::Contains("negative length"), Error);
  CHECK_THROWS_WITH_AS(random_split_fractions(make_ds(10), {0.5, 0.6}, 1), doctest::Contains("sum to"), Error);
  CHECK_THROWS_WITH_AS(random_split_fractions(make_ds(10), {1.5, -0.5}, 1), doctest::Contains("[0, 1]"), Error);
  CHECK_THROWS_WITH_AS(Subset(ds, {0, 10}), doctest::Contains("[Subset] index 10 out of range"), Error);
  CHECK_THROWS_WITH_AS(parts[1].get(3), doctest::Contains("out of range"), Error);
}

TEST_CASE("Dataset default get_batch stacks samples") {
  DataLoader dl(Squares(7), 3, true, false, 3);
  std::vector<std::int64_t> ids;
  for (const auto& b : dl) {
    REQUIRE(b.size() == 2);
    const auto sq = to_vector<double>(b[0]);
    const auto v = to_vector<std::int64_t>(b[1]);
    CHECK(b[1].shape() == Shape{static_cast<std::int64_t>(sq.size()), 2});
    for (std::size_t k = 0; k < sq.size(); ++k) {
      CHECK(sq[k] == static_cast<double>(v[2 * k] * v[2 * k]));
      ids.push_back(v[2 * k]);
    }
  }
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
}
