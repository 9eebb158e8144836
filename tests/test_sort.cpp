// tests/test_sort.cpp - sort, argsort, topk: values and indices against a reference (a sort of (NaN flag,
// value, position) tuples per line), stability, NaN placement, every dim and layout, dtypes, errors and
// gradients.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <phasor/phasor.hpp>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

/// The positions that sort v: NaN after every number ascending, before descending; ties by position.
std::vector<std::int64_t> ref_order(const std::vector<double>& v, bool descending) {
  std::vector<std::tuple<int, double, std::int64_t>> keys;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool nan = std::isnan(v[i]);
    // descending: NaN first (flag 0), numbers by -value; ascending: numbers (flag 0) by value, NaN last
    const int flag = descending ? (nan ? 0 : 1) : (nan ? 1 : 0);
    const double key = nan ? 0.0 : (descending ? -v[i] : v[i]) + 0.0;  // + 0.0: -0 and +0 tie
    keys.emplace_back(flag, key, static_cast<std::int64_t>(i));
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::int64_t> out;
  for (const auto& k : keys) out.push_back(std::get<2>(k));
  return out;
}

/// Checks sort(x, dim, descending) line by line against ref_order (x float64-convertible, any layout).
void check_sort(const Tensor& x, std::int64_t dim, bool descending) {
  const auto [values, indices] = sort(x, dim, descending);
  REQUIRE(values.shape() == x.shape());
  REQUIRE(indices.dtype() == int64);
  CHECK(values.dtype() == x.dtype());
  const std::int64_t d = dim < 0 ? dim + x.dim() : dim;
  const Tensor xl = x.to(float64).movedim(d, -1).contiguous(), vl = values.to(float64).movedim(d, -1).contiguous();
  const Tensor il = indices.movedim(d, -1).contiguous();
  const std::int64_t n = x.size(d), lines = n == 0 ? 0 : x.numel() / n;
  const auto xv = vals(xl), vv = vals(vl);
  const auto iv = ivals(il);
  int bad = 0;
  for (std::int64_t r = 0; r < lines; ++r) {
    const std::vector<double> line(xv.begin() + r * n, xv.begin() + (r + 1) * n);
    const auto want = ref_order(line, descending);
    for (std::int64_t k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(r * n + k);
      const double wv = line[static_cast<std::size_t>(want[static_cast<std::size_t>(k)])];
      if (iv[i] != want[static_cast<std::size_t>(k)]) ++bad;
      if (!(vv[i] == wv || (std::isnan(vv[i]) && std::isnan(wv))) || std::signbit(vv[i]) != std::signbit(wv)) ++bad;
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("sort: values and indices against a reference, every dim, layouts, dtypes, NaN and ties") {
  manual_seed(7);
  for (Dtype dt : {float64, float32, int64, bool_}) {
    CAPTURE(dt);
    const Tensor x = tie_sample({4, 9, 6}, dt, 3.0, 0.1);
    for (std::int64_t dim : {0, 1, 2, -1})
      for (bool descending : {false, true}) {
        CAPTURE(dim);
        CAPTURE(descending);
        check_sort(x, dim, descending);
        check_sort(x.transpose(0, 2), dim, descending);  // a strided input
        check_sort(x.slice(1, 1, std::nullopt, 2), dim, descending);
      }
  }
  // long lines (the radix sort, Note [radix sort]) with ties, NaN, -0 and +0, every dtype, both directions
  for (Dtype dt : {float64, float32, int64, bool_})
    for (bool descending : {false, true}) {
      CAPTURE(dt);
      CAPTURE(descending);
      check_sort(tie_sample({2, 3000}, dt, 50.0, 0.02), 1, descending);
      check_sort(tie_sample({2, 3000}, dt, 1e6, 0.0), 1, descending);  // keys differing in every digit
    }
  check_sort(from_vector(std::vector<double>{-1e300, 1e300, -kInf, kInf, 0.0, -0.0, 5e-324, -5e-324}).repeat({100}), 0, false);
  check_sort(from_vector(std::vector<std::int64_t>{INT64_MIN, INT64_MAX, 0, -1, 1}).repeat({200}), 0, true);
  // a line past the radix sort's kept buffers (4M elements): sorted, a permutation, ties by position
  {
    const Tensor big = (randn({(1 << 22) + 1000}) * 1000.0).round();
    const Tensor idx = argsort(big), v = gather(big, 0, idx);
    const std::int64_t n = big.numel();
    const Tensor lo = v.narrow(0, 0, n - 1), hi = v.narrow(0, 1, n - 1);
    CHECK((hi >= lo).all().item<bool>());
    CHECK(((hi > lo) | (idx.narrow(0, 1, n - 1) > idx.narrow(0, 0, n - 1))).all().item<bool>());
    CHECK((bincount(idx) == 1).all().item<bool>());
  }
  // long lines (the parallel path), a line of one, empty tensors, 0-d
  check_sort(randn({3, 20000}), 1, false);
  check_sort(randn({70000, 1}), 0, true);
  check_sort(randn({5, 1}), 1, false);
  const auto [ev, ei] = sort(zeros({0, 3}), 0);
  CHECK(ev.shape() == Shape{0, 3});
  CHECK(ei.shape() == Shape{0, 3});
  const auto [sv, si] = sort(scalar_tensor(2.5));
  CHECK(sv.item<double>() == 2.5);
  CHECK(si.item<std::int64_t>() == 0);
  // stable: equal keys keep their order, ascending and descending
  const Tensor t = vec({1, 0, 1, 0, 1});
  CHECK(ivals(argsort(t)) == std::vector<std::int64_t>{1, 3, 0, 2, 4});
  CHECK(ivals(argsort(t, -1, true)) == std::vector<std::int64_t>{0, 2, 4, 1, 3});
  CHECK(ivals(t.argsort(0, false, true)) == std::vector<std::int64_t>{1, 3, 0, 2, 4});
  const auto [mv, mi] = vec({3, kNaN, -1, 2}).sort(0, true);
  CHECK(std::isnan(vals(mv)[0]));
  CHECK(ivals(mi) == std::vector<std::int64_t>{1, 0, 3, 2});
}

TEST_CASE("topk: the k largest or smallest, sorted, NaN largest") {
  const Tensor x = vec({4, kNaN, -2, 7, 7, 0, 1});
  const auto [v, i] = topk(x, 3);
  CHECK(std::isnan(vals(v)[0]));
  CHECK(ivals(i) == std::vector<std::int64_t>{1, 3, 4});
  const auto [sv, si] = x.topk(2, 0, false);
  CHECK(vals(sv) == std::vector<double>{-2, 0});
  CHECK(ivals(si) == std::vector<std::int64_t>{2, 5});
  const Tensor m = seq({3, 4});
  const auto [mv, mi] = topk(m, 2, 0);
  CHECK(vals(mv) == std::vector<double>{8, 9, 10, 11, 4, 5, 6, 7});
  CHECK(ivals(mi) == std::vector<std::int64_t>{2, 2, 2, 2, 1, 1, 1, 1});
  CHECK(std::get<0>(topk(m, 0, 1)).shape() == Shape{3, 0});
  CHECK(std::get<0>(topk(m, 4, 1)).shape() == Shape{3, 4});
  CHECK(std::get<0>(topk(scalar_tensor(1.5), 1)).item<double>() == 1.5);
  CHECK(std::get<1>(topk(scalar_tensor(1.5), 0)).numel() == 0);
  CHECK_THROWS_WITH_AS(topk(m, 5, 1), Contains("[topk] k (5) out of range for dim 1 of size 4 (shape (3, 4))"), Error);
  // every k, both directions, ties and NaN: the first k of the stable sort (heap for few, sort for many)
  manual_seed(9);
  Tensor r = (randn({6, 50}) * 2.0).round();
  r = where(rand({6, 50}) < 0.1, full({}, kNaN), r);
  for (bool largest : {true, false})
    for (std::int64_t k = 0; k <= 50; ++k) {
      CAPTURE(k);
      const auto [tv, ti] = topk(r, k, 1, largest);
      const auto [sv, si] = sort(r, 1, largest);
      CHECK(ivals(ti) == ivals(si.narrow(1, 0, k)));
      CHECK(ivals(std::get<1>(topk(r.t(), k, 0, largest))) == ivals(si.narrow(1, 0, k).t()));
    }
  CHECK_THROWS_WITH_AS(topk(m, -1), Contains("[topk] k (-1) out of range"), Error);
}

TEST_CASE("topk of a few of a long line (the CPU's heap of k): the stable sort's first k, ties and NaN") {
  manual_seed(10);
  for (Dtype dt : {float32, float64, int64}) {
    CAPTURE(dt);
    Tensor r = (randn({3, 3000}) * 4.0).round();
    if (dt != int64) r = where(rand({3, 3000}) < 0.05, full({}, kNaN), r);
    r = r.to(dt);
    for (bool largest : {true, false}) {
      const auto [sv, si] = sort(r, 1, largest);
      for (std::int64_t k : {1, 5, 100, 700}) {  // 4 k < n: the heap
        CAPTURE(k);
        const auto [tv, ti] = topk(r, k, 1, largest);
        CHECK(ivals(ti) == ivals(si.narrow(1, 0, k)));
        CHECK(ivals(std::get<1>(topk(r.t(), k, 0, largest))) == ivals(si.narrow(1, 0, k).t()));
      }
    }
  }
}

TEST_CASE("sort, argsort, topk: errors and gradients") {
  const Tensor c = from_vector(std::vector<std::complex<double>>{{1, 1}, {0, 1}});
  CHECK_THROWS_WITH_AS(sort(c), Contains("[sort] not supported for complex tensors (got complex128)"), Error);
  CHECK_THROWS_WITH_AS(argsort(c), Contains("[argsort] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(topk(c, 1), Contains("[topk] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(sort(seq({2, 3}), 2), Contains("[sort] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(argsort(seq({2, 3}), -3), Contains("[argsort]"), Error);
  CHECK_THROWS_WITH_AS(topk(seq({2, 3}), 1, 5), Contains("[topk]"), Error);
  // the values' gradient goes back to the sorted positions
  Tensor x = vec({3, 1, 2}).requires_grad_();
  (std::get<0>(sort(x)) * vec({1, 10, 100})).sum().backward();
  CHECK(vals(x.grad()) == std::vector<double>{100, 1, 10});
  manual_seed(8);
  CHECK(autodiff::gradcheck([](const V& in) { return std::get<0>(sort(in[0], 1, true)); }, {leaf64({3, 5})}));
  CHECK(autodiff::gradcheck([](const V& in) { return std::get<0>(topk(in[0], 2, 0)); }, {leaf64({4, 3})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return std::get<0>(sort(in[0] * in[0], 0)); }, {leaf64({4, 2})}));
}
