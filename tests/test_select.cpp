// tests/test_select.cpp - repeat, tile, unbind, meshgrid, rot90, repeat_interleave, and the selections
// (nonzero, argwhere, count_nonzero, masked_select, unique, unique_consecutive) and take / take_along_dim:
// values against loops over the elements, shapes, dtypes, NaN, empty and 0-d inputs, errors and gradients.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <phasor/phasor.hpp>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

/// An int64 1-D tensor.
Tensor ivec(const I& v) { return from_vector(v); }

}  // namespace

TEST_CASE("repeat and tile against index arithmetic, new leading dims, zeros, gradients") {
  const Tensor x = seq({2, 3});
  const Tensor r = repeat(x, {2, 1, 2});  // a new leading dim, the last doubled
  REQUIRE(r.shape() == Shape{2, 2, 6});
  const auto xv = vals(x), rv = vals(r);
  int bad = 0;
  for (std::int64_t a = 0; a < 2; ++a)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 6; ++j) bad += rv[static_cast<std::size_t>((a * 2 + i) * 6 + j)] != xv[static_cast<std::size_t>(i * 3 + j % 3)];
  CHECK(bad == 0);
  CHECK(vals(x.repeat({2, 1})) == std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  CHECK(repeat(x, {0, 3}).shape() == Shape{0, 9});
  CHECK(repeat(scalar_tensor(2.0), {3}).shape() == Shape{3});
  CHECK(vals(tile(vec({1, 2}), {2})) == std::vector<double>{1, 2, 1, 2});
  CHECK(tile(x, {2}).shape() == Shape{2, 6});  // reps padded to (1, 2)
  CHECK(tile(x, {2, 1, 1}).shape() == Shape{2, 2, 3});
  CHECK_THROWS_WITH_AS(repeat(x, {2}), Contains("[repeat] the number of repeats (1) is smaller than the dims of the tensor of shape (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(repeat(x, {1, -1}), Contains("[repeat] repeats must be non-negative, got (1, -1)"), Error);
  manual_seed(61);
  CHECK(autodiff::gradcheck([](const V& in) { return repeat(in[0], {2, 1, 3}); }, {leaf64({2, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return tile(in[0].t(), {2}); }, {leaf64({2, 3})}));
}

TEST_CASE("unbind, meshgrid and rot90") {
  const Tensor x = seq({2, 3});
  const auto u = unbind(x, 1);
  REQUIRE(u.size() == 3);
  CHECK(vals(u[2]) == std::vector<double>{2, 5});
  CHECK(unbind(x).size() == 2);
  CHECK_THROWS_WITH_AS(unbind(scalar_tensor(1.0)), Contains("[unbind] cannot unbind a 0-d tensor"), Error);
  const auto g = meshgrid({vec({1, 2}), vec({10, 20, 30})});
  CHECK(g[0].shape() == Shape{2, 3});
  CHECK(vals(g[0]) == std::vector<double>{1, 1, 1, 2, 2, 2});
  CHECK(vals(g[1]) == std::vector<double>{10, 20, 30, 10, 20, 30});
  const auto gx = meshgrid({vec({1, 2}), vec({10, 20, 30}), vec({7}).reshape({})}, "xy");
  CHECK(gx[0].shape() == Shape{3, 2, 1});
  CHECK(vals(gx[0]) == std::vector<double>{1, 2, 1, 2, 1, 2});
  CHECK(vals(gx[1]) == std::vector<double>{10, 10, 20, 20, 30, 30});
  CHECK(vals(gx[2]) == std::vector<double>{7, 7, 7, 7, 7, 7});
  CHECK_THROWS_WITH_AS(meshgrid({x}), Contains("[meshgrid] expected 0-d or 1-d tensors, got shape (2, 3) at entry 0"), Error);
  CHECK_THROWS_WITH_AS(meshgrid({vec({1}), ivec({1})}), Contains("[meshgrid] expected tensors of one dtype"), Error);
  CHECK_THROWS_WITH_AS(meshgrid({vec({1})}, "ji"), Contains("[meshgrid] indexing must be \"ij\" or \"xy\", got \"ji\""), Error);
  CHECK_THROWS_WITH_AS(meshgrid({}), Contains("[meshgrid] expected a non-empty list"), Error);
  // rot90 of [[0 1 2] [3 4 5]]: once counterclockwise is [[2 5] [1 4] [0 3]]
  CHECK(vals(rot90(x)) == std::vector<double>{2, 5, 1, 4, 0, 3});
  CHECK(vals(rot90(x, 2)) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(vals(rot90(x, 3)) == std::vector<double>{3, 0, 4, 1, 5, 2});
  CHECK(vals(rot90(x, -1)) == vals(rot90(x, 3)));
  CHECK(vals(rot90(x, 4)) == vals(x));
  CHECK(vals(rot90(x, 1, {1, 0})) == vals(rot90(x, 3)));
  CHECK(rot90(seq({2, 3, 4}), 1, {0, 2}).shape() == Shape{4, 3, 2});
  CHECK_THROWS_WITH_AS(rot90(x, 1, {0}), Contains("[rot90] expected 2 dims, got (0,)"), Error);
  CHECK_THROWS_WITH_AS(rot90(x, 1, {1, 1}), Contains("[rot90] the two dims must differ"), Error);
  CHECK_THROWS_WITH_AS(rot90(vec({1})), Contains("[rot90] expected a tensor of 2 or more dims"), Error);
  manual_seed(62);
  CHECK(autodiff::gradcheck([](const V& in) { return rot90(in[0], 1) * seq({3, 2}); }, {leaf64({2, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return meshgrid({in[0], in[1]})[1] * seq({2, 3}); }, {leaf64({2}), leaf64({3})}));
}

TEST_CASE("repeat_interleave: a count, a count per entry, dims, errors, gradients") {
  CHECK(vals(repeat_interleave(vec({1, 2}), 2)) == std::vector<double>{1, 1, 2, 2});
  CHECK(vals(seq({2, 2}).repeat_interleave(2)) == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});  // flattened
  CHECK(vals(repeat_interleave(seq({2, 2}), 2, 0)) == std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3});
  CHECK(repeat_interleave(seq({2, 2}), 0, 1).shape() == Shape{2, 0});
  CHECK(vals(repeat_interleave(seq({3, 1}), ivec({1, 0, 3}), 0)) == std::vector<double>{0, 2, 2, 2});
  CHECK(vals(repeat_interleave(vec({5, 6}), ivec({2}))) == std::vector<double>{5, 5, 6, 6});  // one count for all
  CHECK(ivals(repeat_interleave(ivec({2, 0, 1}))) == I{0, 0, 2});
  CHECK(repeat_interleave(zeros({0}), ivec({})).shape() == Shape{0});
  CHECK_THROWS_WITH_AS(repeat_interleave(vec({1}), -1), Contains("[repeat_interleave] repeats must be non-negative, got -1"), Error);
  CHECK_THROWS_WITH_AS(repeat_interleave(vec({1, 2}), ivec({1, -2})), Contains("[repeat_interleave] repeats must be non-negative, got -2"), Error);
  CHECK_THROWS_WITH_AS(repeat_interleave(vec({1, 2}), ivec({1, 2, 3})), Contains("[repeat_interleave] repeats must be 0-d or 1-d with 1 or 2 entries, got shape (3,)"), Error);
  CHECK_THROWS_WITH_AS(repeat_interleave(vec({1, 2}), vec({1, 2})), Contains("[repeat_interleave] repeats must be int64, got float64"), Error);
  CHECK_THROWS_WITH_AS(repeat_interleave(seq({2, 2}), 2, 2), Contains("[repeat_interleave] dim 2 out of range"), Error);
  manual_seed(63);
  CHECK(autodiff::gradcheck([](const V& in) { return repeat_interleave(in[0], 3, 1); }, {leaf64({2, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return repeat_interleave(in[0], ivec({2, 0, 1}), 1); }, {leaf64({2, 3})}));
}

TEST_CASE("nonzero, argwhere, count_nonzero and masked_select against loops") {
  manual_seed(64);
  for (Dtype dt : {float64, int64, bool_, complex128}) {
    CAPTURE(dt);
    const Tensor r = (randn({4, 5, 3}) * 0.8).round();
    const Tensor x = dt == bool_ ? r != 0.0 : dt == complex128 ? complex(r.to(float64), zeros({4, 5, 3}, float64)) : r.to(dt);
    const Tensor nz = nonzero(x);
    CHECK(nz.dtype() == int64);
    I want;
    const auto rv = vals(r);
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        for (std::int64_t k = 0; k < 3; ++k)
          if (rv[static_cast<std::size_t>((i * 5 + j) * 3 + k)] != 0) want.insert(want.end(), {i, j, k});
    CHECK(nz.shape() == Shape{static_cast<std::int64_t>(want.size() / 3), 3});
    CHECK(ivals(nz) == want);
    CHECK(ivals(argwhere(x.transpose(0, 2))) == ivals(nonzero(x.transpose(0, 2).contiguous())));
    CHECK(count_nonzero(x).item<std::int64_t>() == static_cast<std::int64_t>(want.size() / 3));
    CHECK(ivals(count_nonzero(x, {0, 2})) == ivals((r != 0.0).sum({0, 2})));
  }
  CHECK(nonzero(scalar_tensor(2.0)).shape() == Shape{1, 0});
  CHECK(nonzero(scalar_tensor(0.0)).shape() == Shape{0, 0});
  CHECK(nonzero(zeros({0, 3})).shape() == Shape{0, 2});
  CHECK(ivals(vec({0, kNaN, 0, -1}).nonzero()) == I{1, 3});  // NaN is nonzero
  // masked_select: row-major order, a broadcast mask, the gradient back to the selected elements
  const Tensor x = seq({2, 3});
  CHECK(vals(masked_select(x, x > 2.5)) == std::vector<double>{3, 4, 5});
  const Tensor cols = from_vector(std::vector<bool>{true, false, true});
  CHECK(vals(x.masked_select(cols)) == std::vector<double>{0, 2, 3, 5});
  CHECK(vals(masked_select(vec({7, 8}), from_vector(std::vector<bool>{true, false, true, true}, Shape{2, 2}))) ==
        std::vector<double>{7, 7, 8});  // x broadcast to the mask
  CHECK(masked_select(x, x > 10.0).shape() == Shape{0});
  Tensor g = seq({2, 3}).requires_grad_();
  (masked_select(g, cols) * vec({1, 2, 3, 4})).sum().backward();
  CHECK(vals(g.grad()) == std::vector<double>{1, 0, 2, 3, 0, 4});
  CHECK(autodiff::gradcheck([](const V& in) { return masked_select(in[0], in[0].detach() > 0.0); }, {leaf64({3, 4})}));
  CHECK_THROWS_WITH_AS(masked_select(x, x), Contains("[masked_select] mask must be bool, got float64"), Error);
  CHECK_THROWS_WITH_AS(masked_select(x, from_vector(std::vector<bool>{true, false})), Contains("[masked_select]"), Error);
}

TEST_CASE("unique along a dim of wide rows (one sort of the rows) against a map of rows; NaN rows distinct") {
  manual_seed(63);
  const std::int64_t L = 40;
  Tensor rows = (randn({300, L}, float64) * 0.6).round();
  rows = cat({rows, rows.narrow(0, 0, 100), rows.narrow(0, 50, 30)}, 0);  // repeated rows
  rows = rows.index({randperm(rows.size(0))});
  const auto [values, inverse, counts] = unique(rows, true, true, true, 0);
  std::map<std::vector<double>, std::int64_t> ref;
  const auto rv = vals(rows);
  std::vector<std::vector<double>> row_list;
  for (std::int64_t i = 0; i < rows.size(0); ++i) {
    row_list.emplace_back(rv.begin() + i * L, rv.begin() + (i + 1) * L);
    ++ref[row_list.back()];
  }
  REQUIRE(values.size(0) == static_cast<std::int64_t>(ref.size()));
  std::vector<double> want_values;
  std::vector<std::int64_t> want_counts, want_inverse;
  std::map<std::vector<double>, std::int64_t> rank;
  for (const auto& [r, c] : ref) {
    rank[r] = static_cast<std::int64_t>(want_counts.size());
    want_values.insert(want_values.end(), r.begin(), r.end());
    want_counts.push_back(c);
  }
  for (const auto& r : row_list) want_inverse.push_back(rank[r]);
  CHECK(vals(values) == want_values);
  CHECK(ivals(counts) == want_counts);
  CHECK(ivals(inverse) == want_inverse);
  // along dim 1 of the transpose: the same slices
  CHECK(vals(std::get<0>(unique(rows.t(), true, false, false, 1))) == vals(values.t()));
  // rows holding NaN are all distinct
  Tensor with_nan = rows.clone();
  with_nan.index_put_({ivec({0, 1, 2}), ivec({5, 5, 5})}, scalar_tensor(kNaN, float64));
  with_nan.index_put_({ivec({1})}, with_nan.index({ivec({0})}).clone());  // row 1 equals row 0, NaN included
  const Tensor u = std::get<0>(unique(with_nan, true, false, false, 0));
  CHECK(u.size(0) == std::get<0>(unique(with_nan.narrow(0, 3, with_nan.size(0) - 3), true, false, false, 0)).size(0) + 3);
}

TEST_CASE("unique of many values (the CPU's radix sort of the values alone) matches the path with positions") {
  manual_seed(66);
  // the same values, NaN matching NaN, zeros of the same sign
  const auto same_values = [](const Tensor& a, const Tensor& b) {
    const auto x = vals(a), y = vals(b);
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(std::isnan(x[i]) && std::isnan(y[i])) && !(x[i] == y[i] && std::signbit(x[i]) == std::signbit(y[i]))) return false;
    return true;
  };
  for (Dtype dt : {float32, float64, int64, bool_}) {
    CAPTURE(dt);
    const Tensor x = tie_sample({40, 50}, dt, 30.0, 0.03);
    const auto [v, inv, cnt] = unique(x, true, false, true);  // radix path (no inverse asked)
    const auto [pv, pinv, pcnt] = unique(x, true, true, true);  // positions path
    CHECK(!inv.defined());
    CHECK(v.dtype() == dt);
    REQUIRE(v.shape() == pv.shape());
    CHECK(same_values(v.to(float64), pv.to(float64)));
    CHECK(ivals(cnt) == ivals(pcnt));
    CHECK(!std::get<2>(unique(x)).defined());
    CHECK(same_values(std::get<0>(unique(x)).to(float64), pv.to(float64)));
  }
  // +0 and -0 are one value: x's first zero
  for (double first : {-0.0, 0.0}) {
    std::vector<double> z(600, 1.0);
    z[10] = first, z[20] = -first, z[30] = -first;
    const auto [v, inv, cnt] = unique(from_vector(z), true, false, true);
    CHECK(vals(v) == std::vector<double>{0.0, 1.0});
    CHECK(std::signbit(v.select(0, 0).item<double>()) == std::signbit(first));
    CHECK(ivals(cnt) == I{3, 597});
  }
}

TEST_CASE("unique and unique_consecutive: values, inverse and counts against a map; NaN; slices along a dim") {
  manual_seed(65);
  for (Dtype dt : {float64, float32, int64, bool_}) {
    CAPTURE(dt);
    const Tensor x = tie_sample({6, 7}, dt, 3.0, 0.05);
    const auto [v, inv, cnt] = unique(x, true, true, true);
    CHECK(v.dtype() == dt);
    CHECK(inv.shape() == x.shape());
    std::map<double, std::int64_t> count;
    std::int64_t nans = 0;
    const auto xv = vals(x);
    for (double e : xv) {
      if (std::isnan(e)) ++nans;
      else ++count[e + 0.0];  // -0 counts as +0
    }
    std::vector<double> want_v;
    I want_c;
    for (const auto& [k, c] : count) want_v.push_back(k), want_c.push_back(c);
    const auto gv = vals(v.to(float64));
    REQUIRE(gv.size() == want_v.size() + static_cast<std::size_t>(nans));  // each NaN on its own, last
    for (std::size_t i = 0; i < want_v.size(); ++i) CHECK(gv[i] == want_v[i]);
    for (std::size_t i = want_v.size(); i < gv.size(); ++i) CHECK(std::isnan(gv[i]));
    const auto gc = ivals(cnt);
    CHECK(I(gc.begin(), gc.begin() + static_cast<std::ptrdiff_t>(want_c.size())) == want_c);
    // inverse: values[inverse] gives x back
    const auto back = vals(index_select(v.to(float64), 0, inv.reshape({-1})));
    int bad = 0;
    for (std::size_t i = 0; i < xv.size(); ++i) bad += !(back[i] == xv[i] || (std::isnan(back[i]) && std::isnan(xv[i])));
    CHECK(bad == 0);
    CHECK(!std::get<1>(unique(x)).defined());
    CHECK(!std::get<2>(x.unique()).defined());
  }
  // consecutive runs, slices along a dim (rows sorted lexicographically)
  const auto [cv, ci, cc] = unique_consecutive(vec({1, 1, 2, 2, 3, 1, 1, 2}), true, true);
  CHECK(vals(cv) == std::vector<double>{1, 2, 3, 1, 2});
  CHECK(ivals(ci) == I{0, 0, 1, 1, 2, 3, 3, 4});
  CHECK(ivals(cc) == I{2, 2, 1, 2, 1});
  const Tensor rows = from_vector(std::vector<double>{2, 1, 0, 5, 2, 1, 0, 3}, Shape{4, 2});
  const auto [rv, ri, rc] = unique(rows, true, true, true, 0);
  CHECK(vals(rv) == std::vector<double>{0, 3, 0, 5, 2, 1});
  CHECK(ivals(ri) == I{2, 1, 2, 0});
  CHECK(ivals(rc) == I{1, 1, 2});
  const auto [uv, ui, uc] = unique(rows, true, true, true, 1);  // columns (2, 0, 2, 0) and (1, 5, 1, 3)
  CHECK(uv.shape() == Shape{4, 2});
  CHECK(ivals(ui) == I{1, 0});  // (1, 5, 1, 3) sorts first
  const auto [qv, qi, qc] = unique_consecutive(rows, true, true, 0);
  CHECK(qv.shape() == Shape{4, 2});
  CHECK(ivals(qc) == I{1, 1, 1, 1});
  CHECK(std::get<0>(unique(zeros({0}))).shape() == Shape{0});
  CHECK(vals(std::get<0>(unique(scalar_tensor(3.0)))) == std::vector<double>{3});
  CHECK_THROWS_WITH_AS(unique(from_vector(std::vector<std::complex<double>>{{1, 1}})), Contains("[unique] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(unique(rows, true, false, false, 2), Contains("[unique] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(unique_consecutive(scalar_tensor(1.0), false, false, 0), Contains("[unique_consecutive] cannot take the unique slices of a 0-d tensor"), Error);
}

TEST_CASE("take and take_along_dim: negative indices, broadcasting, errors, gradients") {
  const Tensor x = seq({2, 3});
  CHECK(vals(take(x, from_vector(I{0, 5, -1, 2}, Shape{2, 2}))) == std::vector<double>{0, 5, 5, 2});
  CHECK(take(x, from_vector(I{4}, Shape{1, 1})).shape() == Shape{1, 1});
  CHECK_THROWS_WITH_AS(take(x, ivec({6})), Contains("[take] index 6 out of range for a tensor of 6 elements"), Error);
  CHECK_THROWS_WITH_AS(take(x, ivec({-7})), Contains("[take] index -7 out of range"), Error);
  CHECK_THROWS_WITH_AS(take(x, vec({1})), Contains("[take] indices must be int64, got float64"), Error);
  // take_along_dim with argsort's indices sorts; the other dims broadcast
  const Tensor m = from_vector(std::vector<double>{3, 1, 2, 9, 7, 8}, Shape{2, 3});
  CHECK(vals(take_along_dim(m, argsort(m, 1), 1)) == std::vector<double>{1, 2, 3, 7, 8, 9});
  CHECK(vals(take_along_dim(m, from_vector(I{2, 0}, Shape{1, 2}), 1)) == std::vector<double>{2, 3, 8, 9});
  CHECK(vals(take_along_dim(m, ivec({5, 0}))) == std::vector<double>{8, 3});
  CHECK_THROWS_WITH_AS(take_along_dim(m, from_vector(I{3}, Shape{1, 1}), 1), Contains("[take_along_dim] index 3 out of range for dim 1 of size 3"), Error);
  CHECK_THROWS_WITH_AS(take_along_dim(m, ivec({0}), 1), Contains("[take_along_dim] input and indices must have the same number of dims"), Error);
  CHECK_THROWS_WITH_AS(take_along_dim(m, from_vector(I{0, 0, 0}, Shape{3, 1}), 1), Contains("[take_along_dim]"), Error);
  manual_seed(66);
  CHECK(autodiff::gradcheck([](const V& in) { return take(in[0], from_vector(I{0, -1, 3, 3}, Shape{2, 2})); }, {leaf64({2, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return take_along_dim(in[0], from_vector(I{2, 0}, Shape{1, 2}), 1); }, {leaf64({2, 3})}));
}

TEST_CASE("index_fill and masked_scatter: values, broadcasting, dtypes, errors, gradients") {
  const Tensor x = seq({3, 4});
  CHECK(vals(index_fill(x, 1, ivec({0, -1}), -1.5)) == std::vector<double>{-1.5, 1, 2, -1.5, -1.5, 5, 6, -1.5, -1.5, 9, 10, -1.5});
  CHECK(vals(index_fill(x, 0, ivec({1, 1}), 0)) == std::vector<double>{0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11});
  CHECK(index_fill(seq({3}, int64), 0, ivec({0}), 7).dtype() == int64);
  CHECK_THROWS_WITH_AS(index_fill(x, 1, ivec({4}), 0), Contains("[index_fill] index 4 out of range for dim 1 of size 4"), Error);
  CHECK_THROWS_WITH_AS(index_fill(seq({3}, int64), 0, ivec({0}), 1e30), Contains("[index_fill] value 1e+30 cannot be converted to int64 without overflow"), Error);
  // masked_scatter takes source's elements in order
  const Tensor m = from_vector(std::vector<bool>{true, false, true, false}, Shape{1, 4});  // broadcast over rows
  CHECK(vals(masked_scatter(x, m, vec({10, 20, 30, 40, 50, 60, 70}))) == std::vector<double>{10, 1, 20, 3, 30, 5, 40, 7, 50, 9, 60, 11});
  CHECK(vals(masked_scatter(x, x > 100.0, zeros({0}, float64))) == vals(x));
  CHECK_THROWS_WITH_AS(masked_scatter(x, m, vec({1, 2})), Contains("[masked_scatter] the mask selects 6 elements but source has only 2"), Error);
  CHECK_THROWS_WITH_AS(masked_scatter(x, m, seq({6}, int64)), Contains("[masked_scatter] source must have the input's dtype float64, got int64"), Error);
  CHECK_THROWS_WITH_AS(masked_scatter(vec({1}), m, seq({6})), Contains("[masked_scatter] mask of shape (1, 4) must broadcast to the input's shape (1,)"), Error);
  manual_seed(67);
  CHECK(autodiff::gradcheck([](const V& in) { return index_fill(in[0], 0, ivec({2}), 3.0); }, {leaf64({3, 2})}));
  CHECK(autodiff::gradcheck([&](const V& in) { return masked_scatter(in[0], m.expand({3, 4}), in[1]); }, {leaf64({3, 4}), leaf64({8})}));
}

TEST_CASE("hstack, vstack, dstack, column_stack, atleast_nd, flipud, fliplr, block_diag, diagflat") {
  const Tensor a = vec({1, 2}), b = vec({3, 4});
  CHECK(vals(hstack({a, b})) == std::vector<double>{1, 2, 3, 4});
  CHECK(hstack({seq({2, 1}), seq({2, 3})}).shape() == Shape{2, 4});
  CHECK(vstack({a, b}).shape() == Shape{2, 2});
  CHECK(vals(vstack({a, b})) == std::vector<double>{1, 2, 3, 4});
  CHECK(dstack({a, b}).shape() == Shape{1, 2, 2});
  CHECK(vals(dstack({a, b})) == std::vector<double>{1, 3, 2, 4});
  CHECK(vals(column_stack({a, b})) == std::vector<double>{1, 3, 2, 4});
  CHECK(column_stack({a, seq({2, 2})}).shape() == Shape{2, 3});
  CHECK(atleast_1d(scalar_tensor(1.0)).shape() == Shape{1});
  CHECK(atleast_2d(a).shape() == Shape{1, 2});
  CHECK(atleast_3d(a).shape() == Shape{1, 2, 1});
  CHECK(atleast_3d(seq({2, 3})).shape() == Shape{2, 3, 1});
  CHECK(atleast_3d(scalar_tensor(1.0)).shape() == Shape{1, 1, 1});
  CHECK(vals(flipud(seq({2, 2}))) == std::vector<double>{2, 3, 0, 1});
  CHECK(vals(fliplr(seq({2, 2}))) == std::vector<double>{1, 0, 3, 2});
  CHECK_THROWS_WITH_AS(fliplr(a), Contains("[fliplr] expected a tensor of 2 or more dims, got shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(flipud(scalar_tensor(1.0)), Contains("[flipud]"), Error);
  CHECK_THROWS_WITH_AS(vstack({}), Contains("[vstack] expected a non-empty list"), Error);
  const Tensor bd = block_diag({from_vector(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}), scalar_tensor(5.0, float64), vec({6, 7})});
  REQUIRE(bd.shape() == Shape{4, 5});
  CHECK(vals(bd) == std::vector<double>{1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 6, 7});
  CHECK(block_diag({seq({1, 1}, int64), vec({1})}).dtype() == float64);
  CHECK_THROWS_WITH_AS(block_diag({seq({1, 1, 1})}), Contains("[block_diag] expected 0-d, 1-d or 2-d tensors, got shape (1, 1, 1) at entry 0"), Error);
  CHECK(vals(diagflat(seq({2, 1}), 1)) == std::vector<double>{0, 0, 0, 0, 0, 1, 0, 0, 0});
  manual_seed(68);
  CHECK(autodiff::gradcheck([](const V& in) { return block_diag({in[0], in[1]}); }, {leaf64({2, 2}), leaf64({3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return dstack({in[0], in[1]}) * 2.0; }, {leaf64({3}), leaf64({3})}));
}
