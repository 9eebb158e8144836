// tests/test_tensor_utils.cpp - numpy/torch utilities: swapaxes, swapdims, unflatten, tensor_split, hsplit,
// vsplit, dsplit, isin, histogram, tensordot, vander and linalg.vander, against loops over the elements, with
// their errors and gradients.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <phasor/phasor.hpp>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {
/// Every value of t is exactly ref's.
void check_exact(const Tensor& t, const std::vector<double>& ref) { CHECK(vals(t) == ref); }
using I = std::vector<std::int64_t>;

/// The sizes of pieces along dim d.
I sizes_along(const std::vector<Tensor>& pieces, std::int64_t d) {
  I out;
  for (const Tensor& p : pieces) out.push_back(p.size(d));
  return out;
}
}  // namespace

TEST_CASE("swapaxes, swapdims and unflatten are views with the moved elements") {
  const Tensor x = seq({2, 3, 4});
  const Tensor s = swapaxes(x, 0, 2);
  REQUIRE(s.shape() == Shape{4, 3, 2});
  const auto xv = vals(x), sv = vals(s.contiguous());
  int bad = 0;
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k) bad += sv[k * 6 + j * 2 + i] != xv[i * 12 + j * 4 + k];
  CHECK(bad == 0);
  CHECK(vals(swapdims(x, -1, 0).contiguous()) == sv);
  CHECK_THROWS_WITH_AS(swapaxes(x, 0, 3), Contains("dim 3 out of range"), Error);

  Tensor y = seq({2, 12});
  const Tensor u = unflatten(y, 1, {3, -1});
  REQUIRE(u.shape() == Shape{2, 3, 4});
  CHECK(vals(u) == vals(y));
  CHECK(unflatten(y, -2, {1, 2, 1}).shape() == Shape{1, 2, 1, 12});
  CHECK(unflatten(zeros({2, 0}), 1, {0, 5}).shape() == Shape{2, 0, 5});
  y.select(1, 5).fill_(-1.0);  // a view: y's writes show through
  CHECK(vals(u.select(1, 1).select(1, 1)) == std::vector<double>{-1, -1});
  CHECK(unflatten(y.t(), 0, {4, 3}).shape() == Shape{4, 3, 2});  // splitting a dim of a transposed tensor
  CHECK(vals(unflatten(y.t(), 0, {4, 3}).contiguous()) == vals(y.t().contiguous()));
  CHECK_THROWS_WITH_AS(unflatten(y, 1, {5, -1}), Contains("[unflatten] sizes (5, -1) don't multiply up to the size 12 of dim 1"), Error);
  CHECK_THROWS_WITH_AS(unflatten(y, 1, {2, 2}), Contains("[unflatten] sizes (2, 2) don't multiply up to the size 12"), Error);
  CHECK_THROWS_WITH_AS(unflatten(y, 1, {-1, -1}), Contains("[unflatten] only one size can be -1"), Error);
  CHECK_THROWS_WITH_AS(unflatten(y, 1, {-2, -6}), Contains("[unflatten] sizes must be non-negative or -1"), Error);
  CHECK_THROWS_WITH_AS(unflatten(y, 1, {}), Contains("[unflatten] sizes must be non-empty"), Error);
  CHECK_THROWS_WITH_AS(unflatten(full({}, 1.0), 0, {1}), Contains("[unflatten] cannot unflatten a 0-d tensor"), Error);
}

TEST_CASE("tensor_split and the numpy splits") {
  const Tensor x = seq({2, 7});
  // sections: sizes differ by at most one, the longer first
  CHECK(sizes_along(tensor_split(x, 3, 1), 1) == I{3, 2, 2});
  CHECK(sizes_along(tensor_split(x, 7, 1), 1) == I{1, 1, 1, 1, 1, 1, 1});
  CHECK(sizes_along(tensor_split(x, 9, 1), 1) == I{1, 1, 1, 1, 1, 1, 1, 0, 0});
  CHECK(sizes_along(tensor_split(x, 1, 0), 0) == I{2});
  // the pieces hold the elements in order, and are views
  const auto p = tensor_split(x, 3, -1);
  CHECK(vals(p[1]) == std::vector<double>{3, 4, 10, 11});
  CHECK(p[2].data_ptr() == x.select(1, 5).data_ptr());
  // indices: Python slice bounds (negative from the end, clamped, pieces may be empty)
  const Tensor r = seq({6});
  const auto slices = [&](const Shape& idx) {
    std::vector<std::vector<double>> out;
    for (const Tensor& t : tensor_split(r, idx)) out.push_back(vals(t));
    return out;
  };
  using VV = std::vector<std::vector<double>>;
  CHECK(slices({1, 4}) == VV{{0}, {1, 2, 3}, {4, 5}});
  CHECK(slices({-2}) == VV{{0, 1, 2, 3}, {4, 5}});
  CHECK(slices({4, 1}) == VV{{0, 1, 2, 3}, {}, {1, 2, 3, 4, 5}});  // x[:4], x[4:1], x[1:]
  CHECK(slices({2, 10}) == VV{{0, 1}, {2, 3, 4, 5}, {}});
  CHECK(slices({}) == VV{{0, 1, 2, 3, 4, 5}});
  CHECK(sizes_along(tensor_split(x, Shape{2, 5}, 1), 1) == I{2, 3, 2});
  CHECK_THROWS_WITH_AS(tensor_split(x, 0, 1), Contains("[tensor_split] sections must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(tensor_split(full({}, 1.0), 2), Contains("[tensor_split] cannot split a 0-d tensor"), Error);
  CHECK_THROWS_WITH_AS(tensor_split(x, 2, 2), Contains("[tensor_split] dim 2 out of range"), Error);
  // hsplit: dim 1, dim 0 for 1-d; vsplit dim 0; dsplit dim 2; equal sections only
  const Tensor c = seq({4, 6, 8});
  CHECK(sizes_along(hsplit(c, 3), 1) == I{2, 2, 2});
  CHECK(sizes_along(hsplit(r, 2), 0) == I{3, 3});
  CHECK(sizes_along(hsplit(c, Shape{1}), 1) == I{1, 5});
  CHECK(sizes_along(vsplit(c, 2), 0) == I{2, 2});
  CHECK(sizes_along(vsplit(c, Shape{3}), 0) == I{3, 1});
  CHECK(sizes_along(dsplit(c, 4), 2) == I{2, 2, 2, 2});
  CHECK(sizes_along(dsplit(c, Shape{1, 3}), 2) == I{1, 2, 5});
  CHECK_THROWS_WITH_AS(hsplit(c, 4), Contains("[hsplit] dim 1 of size 6 can't be split into 4 equal sections"), Error);
  CHECK_THROWS_WITH_AS(vsplit(r, 2), Contains("[vsplit] expected a tensor of at least 2 dims, got shape (6,)"), Error);
  CHECK_THROWS_WITH_AS(dsplit(x, Shape{1}), Contains("[dsplit] expected a tensor of at least 3 dims, got shape (2, 7)"), Error);
  CHECK_THROWS_WITH_AS(hsplit(full({}, 1.0), 1), Contains("[hsplit] expected a tensor of at least 1 dims"), Error);
  CHECK_THROWS_WITH_AS(dsplit(c, 0), Contains("[dsplit] sections must be positive"), Error);
  // gradients flow back to the pieces' places
  CHECK(autodiff::gradcheck([](const V& in) { return tensor_split(in[0], 3, 1)[1] * 2.0; }, {leaf64({2, 7})}));
}

TEST_CASE("isin against a loop") {
  manual_seed(311);
  const Tensor e = (rand({40}) * 20).floor().to(int64) - 5, t = (rand({9}) * 20).floor().to(int64) - 5;
  const auto ev = ivals(e), tv = ivals(t);
  std::vector<double> want, want_not;
  for (auto v : ev) {
    const bool in = std::find(tv.begin(), tv.end(), v) != tv.end();
    want.push_back(in), want_not.push_back(!in);
  }
  const Tensor got = isin(e, t);
  CHECK(got.dtype() == Dtype::Bool);
  check_exact(got, want);
  check_exact(isin(e, t, false, true), want_not);
  check_exact(isin(e.reshape({5, 8}), t.reshape({3, 3})), want);  // any shapes; the elements' shape kept
  CHECK(isin(e.reshape({5, 8}), t).shape() == Shape{5, 8});
  // floats: NaN is in nothing; mixed dtypes compare as promoted
  const double nan = kNaN;
  check_exact(isin(vec({1.5, nan, 2.0, -0.0}), vec({nan, 2.0, 0.0})), {0, 0, 1, 1});
  check_exact(isin(from_vector(I{1, 2, 3}), vec({2.0, 2.5})), {0, 1, 0});
  check_exact(isin(vec({1, 2, 3}) > 1.5, from_vector(I{1})), {0, 1, 1});  // bools against int 1
  // empty tests, scalar forms
  check_exact(isin(vec({1, 2}), zeros({0})), {0, 0});
  check_exact(isin(vec({1, 2}), zeros({0}), false, true), {1, 1});
  check_exact(isin(from_vector(I{4, 5, 4}), Scalar(4)), {1, 0, 1});
  CHECK(isin(Scalar(3), from_vector(I{1, 3})).dim() == 0);
  CHECK(isin(Scalar(3), from_vector(I{1, 3})).item<bool>());
  CHECK_FALSE(isin(Scalar(2), from_vector(I{1, 3})).item<bool>());
  CHECK_THROWS_WITH_AS(isin(complex(randn({2}), randn({2})), randn({2})), Contains("[isin] not supported for complex tensors"), Error);
}

TEST_CASE("histogram against a loop over bins") {
  manual_seed(312);
  const Tensor x = randn({1000}, float64), w = rand({1000}, float64);
  const auto xv = vals(x), wv = vals(w);
  const auto count = [&](const std::vector<double>& e, bool weighted) {
    std::vector<double> h(e.size() - 1, 0.0);
    for (std::size_t k = 0; k < xv.size(); ++k) {
      for (std::size_t b = 0; b + 1 < e.size(); ++b) {
        const bool last = b + 2 == e.size();
        if (xv[k] >= e[b] && (xv[k] < e[b + 1] || (last && xv[k] == e[b + 1]))) {
          h[b] += weighted ? wv[k] : 1.0;
          break;
        }
      }
    }
    return h;
  };
  // the data's range: every element counted, the edges evenly spaced from min to max
  auto [h, e] = histogram(x, 7);
  REQUIRE(e.shape() == Shape{8});
  const double lo = x.min().item<double>(), hi = x.max().item<double>();
  auto ev = vals(e);
  CHECK(ev.front() == lo);
  CHECK(ev.back() == hi);
  for (std::size_t i = 0; i < 8; ++i) CHECK(ev[i] == doctest::Approx(lo + (hi - lo) * static_cast<double>(i) / 7).epsilon(1e-15));
  check_exact(h, count(ev, false));
  CHECK(h.sum().item<double>() == 1000);
  CHECK(h.dtype() == Dtype::Float64);
  // a range leaves the elements outside out; weights sum
  std::tie(h, e) = histogram(x, 5, std::make_pair(-1.0, 1.5), w);
  ev = vals(e);
  CHECK(ev.front() == -1.0);
  CHECK(ev.back() == 1.5);
  check_close(h, count(ev, true), 1e-13);
  // density: counts over total times width, integrating to one
  std::tie(h, e) = histogram(x, 6, std::nullopt, Tensor(), true);
  CHECK((h * e.diff()).sum().item<double>() == doctest::Approx(1).epsilon(1e-14));
  check_close(h, vals(std::get<0>(histogram(x, 6)) / (1000 * e.diff())), 1e-14);
  // given uneven edges (float32 data)
  const Tensor xf = x.to(float32), edges = from_vector(std::vector<float>{-2, -0.5f, 0, 0.1f, 3});
  std::tie(h, e) = histogram(xf, edges);
  CHECK(vals(e) == vals(edges));
  CHECK(h.dtype() == Dtype::Float32);
  check_exact(h, count(vals(edges), false));  // (float32 values widened to double exactly)
  // one point of data: widened by 0.5 each side; no data: [0, 1]
  std::tie(h, e) = histogram(full({3}, 2.0, float64), 2);
  CHECK(vals(e) == std::vector<double>{1.5, 2.0, 2.5});
  CHECK(vals(h) == std::vector<double>{0, 3});
  std::tie(h, e) = histogram(zeros({0}, float64), 4);
  CHECK(vals(e) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(vals(h) == std::vector<double>{0, 0, 0, 0});
  // NaN counts nowhere, the right edge counts in the last bin
  std::tie(h, e) = histogram(vec({0, 1, kNaN, 2, 2}), 2, std::make_pair(0.0, 2.0));
  CHECK(vals(h) == std::vector<double>{1, 3});
  // no gradient
  CHECK_FALSE(std::get<0>(histogram(leaf64({5}), 3, std::nullopt, leaf64({5}))).requires_grad());
  // errors
  CHECK_THROWS_WITH_AS(histogram(from_vector(I{1, 2}), 2), Contains("[histogram] expected a real floating tensor, got int64"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, 0), Contains("[histogram] bins must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, 3, std::make_pair(1.0, 0.0)), Contains("[histogram] range must be finite with min <= max"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, 3, std::make_pair(0.0, kInf)), Contains("[histogram] range must be finite"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, 3, std::nullopt, rand({999}, float64)), Contains("[histogram] weight must have the input's shape (1000,) and dtype float64"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, vec({0, 2, 1})), Contains("[histogram] bin edges must be non-decreasing"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, vec({0})), Contains("[histogram] bin edges must be a 1-d tensor of at least 2 edges"), Error);
  CHECK_THROWS_WITH_AS(histogram(x, vec({0, 1}).to(float32)), Contains("[histogram] bin edges must be a 1-d tensor of at least 2 edges of the input's dtype float64, got float32"), Error);
}

TEST_CASE("tensordot against loops") {
  manual_seed(313);
  const Tensor a = randn({2, 3, 4}, float64), b = randn({3, 4, 5}, float64);
  const auto av = vals(a), bv = vals(b);
  std::vector<double> want;
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t l = 0; l < 5; ++l) {
      long double s = 0;
      for (std::size_t j = 0; j < 3; ++j)
        for (std::size_t k = 0; k < 4; ++k) s += static_cast<long double>(av[i * 12 + j * 4 + k]) * bv[j * 20 + k * 5 + l];
      want.push_back(static_cast<double>(s));
    }
  const Tensor c = tensordot(a, b);
  REQUIRE(c.shape() == Shape{2, 5});
  check_close(c, want, 1e-13);
  // explicit pairs in another order: a's dims 2, 1 with b's 1, 0
  check_close(tensordot(a, b, {2, 1}, {1, 0}), want, 1e-13);
  // a's dim 1 with b's dim 0 only: (2, 4) then (4, 5)
  const Tensor d = tensordot(a, b, {1}, {0});
  REQUIRE(d.shape() == Shape{2, 4, 4, 5});
  long double s = 0;
  for (std::size_t j = 0; j < 3; ++j) s += static_cast<long double>(av[1 * 12 + j * 4 + 2]) * bv[j * 20 + 3 * 5 + 4];
  CHECK(d.select(0, 1).select(0, 2).select(0, 3).select(0, 4).item<double>() == doctest::Approx(static_cast<double>(s)).epsilon(1e-13));
  // dims 0: the outer product; complex and mixed dtypes promote
  CHECK(tensordot(vec({1, 2}), vec({3, 4, 5}), 0).shape() == Shape{2, 3});
  CHECK(vals(tensordot(vec({1, 2}), vec({3, 4, 5}), 0)) == std::vector<double>{3, 4, 5, 6, 8, 10});
  CHECK(tensordot(randn({3}), from_vector(I{1, 2, 3}), 1).dtype() == Dtype::Float32);
  CHECK(tensordot(randn({3}, complex64), randn({3}), 1).dtype() == Dtype::Complex64);
  CHECK_THROWS_WITH_AS(tensordot(a, b, {0}, {0}), Contains("[tensordot] contracted dims differ in size: dim 0 of a (2, 3, 4) has size 2, dim 0 of b (3, 4, 5) has size 3"), Error);
  CHECK_THROWS_WITH_AS(tensordot(a, b, 4), Contains("[tensordot] dims must be in [0, min(a.dim(), b.dim())], got 4"), Error);
  CHECK_THROWS_WITH_AS(tensordot(a, b, -1), Contains("[tensordot] dims must be in"), Error);
  CHECK_THROWS_WITH_AS(tensordot(a, b, {1, 2}, {0}), Contains("[tensordot] expected as many dims of a as of b to contract, got (1, 2) and (0,)"), Error);
  CHECK_THROWS_WITH_AS(tensordot(a, b, {1, 1}, {0, 0}), Contains("[tensordot] dim 1 appears more than once"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return tensordot(in[0], in[1], {0, 2}, {2, 0}); }, {leaf64({2, 3, 4}), leaf64({4, 3, 2})}));
}

TEST_CASE("vander and linalg.vander against powers") {
  const Tensor x = vec({2, -1, 0, 3});
  const auto xv = vals(x);
  for (std::int64_t N : {0, 1, 3, 5}) {
    CAPTURE(N);
    std::vector<double> inc, dec;
    for (double v : xv)
      for (std::int64_t j = 0; j < N; ++j) inc.push_back(std::pow(v, j)), dec.push_back(std::pow(v, N - 1 - j));
    const Tensor vi = vander(x, N, true), vd = vander(x, N);
    CHECK(vi.shape() == Shape{4, N});
    check_exact(vi, inc);
    check_exact(vd, dec);
  }
  CHECK(vander(x).shape() == Shape{4, 4});
  // integers stay exact integers
  const Tensor vi = vander(from_vector(I{3, -2}), 4);
  CHECK(vi.dtype() == Dtype::Int64);
  CHECK(ivals(vi) == I{27, 9, 3, 1, -8, 4, -2, 1});
  // linalg.vander: increasing, over batches
  const Tensor b = seq({2, 3}) - 2.0;
  const Tensor lv = linalg::vander(b, 4);
  REQUIRE(lv.shape() == Shape{2, 3, 4});
  std::vector<double> want;
  for (double v : vals(b))
    for (int j = 0; j < 4; ++j) want.push_back(std::pow(v, j));
  check_exact(lv, want);
  CHECK(linalg::vander(b).shape() == Shape{2, 3, 3});
  CHECK_THROWS_WITH_AS(vander(seq({2, 2})), Contains("[vander] expected a 1-d tensor, got shape (2, 2)"), Error);
  CHECK_THROWS_WITH_AS(vander(x, -1), Contains("[vander] N must be non-negative, got -1"), Error);
  CHECK_THROWS_WITH_AS(linalg::vander(full({}, 1.0)), Contains("[linalg.vander] expected a tensor of at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(vander(vec({1, 2}) > 1.0), Contains("[vander] expected a numeric tensor, got bool"), Error);
  // gradients, with a zero among the points (d x^j / dx = j x^(j-1) is 0 there for j > 1)
  CHECK(autodiff::gradcheck([](const V& in) { return vander(in[0], 4); }, {vec({0.5, 0.0, -1.3}).requires_grad_()}));
  CHECK(autodiff::gradcheck([](const V& in) { return linalg::vander(in[0], 3); }, {leaf64({2, 3})}));
}
