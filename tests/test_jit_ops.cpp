// tests/test_jit_ops.cpp - ops whose work depends on their inputs' values (orders, positions, counts, index checks,
// value-dependent shapes) traced into static graphs (phasor/jit.hpp) and replayed on other values: each replay must
// compute them anew (Note [value steps] in src/core/pointwise.hpp), as the function does eagerly.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::V;

namespace {

using I = std::vector<std::int64_t>;

Tensor f64(const std::vector<double>& v, const Shape& s) { return from_vector(v, s); }
Tensor i64(const I& v, const Shape& s) { return from_vector(v, s); }

/// True when a and b have one shape and dtype and the same values: exactly for bools and ints, within 1e-12 for
/// floating ones (a NaN matching a NaN).
bool same(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  if (a.numel() == 0) return true;
  const Tensor x = a.detach(), y = b.detach();
  if (!is_floating_or_complex(x.dtype())) return (x == y).all().item<bool>();
  const Tensor both_nan = x.isnan() & y.isnan();
  const Tensor d = where(both_nan, zeros({}, float64), (x.to(float64) - y.to(float64)).abs());
  return !d.isnan().any().item<bool>() && d.max().item<double>() <= 1e-12;
}

/// fn traced on `a` replays on `b` (the same shapes and dtypes, other values) as fn runs eagerly on b; fn's results
/// on a and on b differ, so a graph that froze any value-dependent work would fail.
void replays(const jit::Function& fn, const V& a, const V& b) {
  const jit::Graph g = jit::trace(fn, a);
  const V traced = fn(a), want = fn(b), got = g(b);
  REQUIRE(got.size() == want.size());
  bool differs = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(same(got[i], want[i]));
    differs = differs || !same(traced[i], want[i]);
  }
  CHECK_MESSAGE(differs, "the two inputs give the same results: the replay proves nothing");
}

/// fn traced on `a` refuses to replay on `b`, whose values give other shapes than a's.
void refuses_shapes(const jit::Function& fn, const V& a, const V& b) {
  const jit::Graph g = jit::trace(fn, a);
  CHECK_THROWS_WITH_AS(g(b), doctest::Contains("the function's shapes depend on its inputs' values"), Error);
}

/// fn traced on `good` throws `message` (a check of fn's ops) when replayed on `bad`, as it does eagerly.
void replay_checks(const jit::Function& fn, const V& good, const V& bad, const std::string& message) {
  const jit::Graph g = jit::trace(fn, good);
  CHECK_THROWS_WITH_AS(fn(bad), doctest::Contains(message.c_str()), Error);
  CHECK_THROWS_WITH_AS(g(bad), doctest::Contains(message.c_str()), Error);
}

}  // namespace

TEST_CASE("jit ops: sort, argsort, topk and msort replay the order of new values") {
  manual_seed(1);
  const auto fn = [](const V& in) {
    const Tensor& x = in[0];
    auto [v, i] = sort(x, 1);
    auto [vd, id] = sort(x, 0, true);
    auto [tv, ti] = topk(x, 2, 1);
    auto [sv, si] = topk(x, 3, 1, false);
    return V{v, i, vd, id, argsort(x, 1, true), tv, ti, sv, si, msort(x)};
  };
  replays(fn, {randn({4, 9}, float64)}, {randn({4, 9}, float64)});
  // long lines: the radix sort (Note [radix sort]) and a few of many (the heap)
  const auto long_fn = [](const V& in) {
    auto [v, i] = sort(in[0], -1);
    auto [tv, ti] = topk(in[0], 5, -1);
    return V{v, i, tv, ti};
  };
  replays(long_fn, {randn({2, 700}, float64)}, {randn({2, 700}, float64)});
  replays(long_fn, {(randn({2, 700}) * 100.0).round().to(int64)}, {(randn({2, 700}) * 100.0).round().to(int64)});
}

TEST_CASE("jit ops: kthvalue, median, nanmedian, quantile and nanquantile replay on new values") {
  manual_seed(2);
  const auto fn = [](const V& in) {
    const Tensor& x = in[0];
    auto [kv, ki] = kthvalue(x, 3, 1);
    auto [mv, mi] = median(x, 1);
    auto [nv, ni] = nanmedian(x, 0, true);
    V out{kv, ki, mv, mi, nv, ni, median(x), nanmedian(x), quantile(x, 0.3, 1), nanquantile(x, in[1], 0)};
    for (const char* how : {"linear", "lower", "higher", "midpoint", "nearest"}) out.push_back(quantile(x, in[1], 1, true, how));
    return out;
  };
  const Tensor q = f64({0.1, 0.5, 0.95}, {3});
  Tensor a = randn({5, 8}, float64), b = randn({5, 8}, float64);
  replays(fn, {a, q}, {b, f64({0.0, 0.25, 1.0}, {3})});
  // NaNs move: the ranks and positions of the NaN-aware forms are recomputed too
  a.index_put_({TensorIndex(1), TensorIndex(2)}, full({}, std::nan(""), float64));
  b.index_put_({TensorIndex(3), TensorIndex(5)}, full({}, std::nan(""), float64));
  b.index_put_({TensorIndex(0), TensorIndex(0)}, full({}, std::nan(""), float64));
  replays(fn, {a, q}, {b, q});
  // long lines: the radix selection
  const auto long_fn = [](const V& in) {
    auto [v, i] = kthvalue(in[0], 100, -1);
    auto [mv, mi] = median(in[0], -1);
    return V{v, i, mv, mi, quantile(in[0], 0.75, -1)};
  };
  replays(long_fn, {randn({2, 600}, float64)}, {randn({2, 600}, float64)});
}

TEST_CASE("jit ops: cummax and cummin replay their indices, and their values carry gradients") {
  manual_seed(3);
  const auto fn = [](const V& in) {
    auto [mv, mi] = cummax(in[0], 1);
    auto [nv, ni] = cummin(in[0], 0);
    return V{mv, mi, nv, ni};
  };
  replays(fn, {randn({4, 7}, float64)}, {randn({4, 7}, float64)});
  replays(fn, {(randn({4, 7}) * 3.0).round().to(int64)}, {(randn({4, 7}) * 3.0).round().to(int64)});
  // replayed with a gradient: the values come from a gather of the replay's input (not from the CPU loop's values,
  // which carry none)
  const jit::Graph g = jit::trace([](const V& in) { return V{std::get<0>(cummax(in[0], 0))}; },
                                  {randn({8}, float64).requires_grad_()});
  CHECK(g(V{randn({8}, float64).requires_grad_()})[0].requires_grad());
}

TEST_CASE("jit ops: gradients taken inside a traced function follow the order and positions each replay finds") {
  const auto fn = [](const V& in) {
    const Tensor& x = in[0];
    const Tensor w = arange(1, 9, 1, float64);
    const Tensor y = (std::get<0>(sort(x, 0)) * w).sum() + (std::get<0>(cummax(x, 0)) * w).sum() +
                     (std::get<0>(topk(x, 3, 0)) * w.narrow(0, 0, 3)).sum() + std::get<0>(kthvalue(x, 2, 0)) * 3.0 +
                     median(x) * 5.0 + (quantile(x, 0.3) * 7.0) + (masked_select(x, x > 0.0) * 2.0).sum() +
                     (std::get<0>(cummin(x, 0)) * w).sum();
    return autodiff::grad({y}, {x}, {}, std::nullopt, true);
  };
  // four positive elements each (masked_select's count), at other places and in other orders
  replays(fn, {f64({0.3, -1.2, 2.5, -0.4, 1.1, 0.7, -2.0, -0.1}, {8}).requires_grad_()},
          {f64({-0.6, 1.9, -1.5, 0.2, -0.8, 3.1, 0.4, -0.3}, {8}).requires_grad_()});
}

// The backwards of gather, index_select, the scatters and sparse_csr_mm read the index their own forward read
// (a saved input), so backward() after a replay follows the replay's order, not the trace's.
TEST_CASE("jit ops: the gradient of a replayed sort follows the replay's order") {
  manual_seed(6);
  const jit::Graph g = jit::trace([](const V& in) { return V{std::get<0>(sort(in[0], 0)) * arange(6, float64)}; },
                                  {randn({6}, float64).requires_grad_()});
  const Tensor y = randn({6}, float64);
  Tensor yr = y.clone().requires_grad_(), ye = y.clone().requires_grad_();
  g(V{yr})[0].sum().backward();
  (std::get<0>(sort(ye, 0)) * arange(6, float64)).sum().backward();
  CHECK(same(yr.grad(), ye.grad()));
}

TEST_CASE("jit ops: searchsorted and bucketize replay on new sequences and values") {
  manual_seed(4);
  const auto fn = [](const V& in) {
    const Tensor& s = in[0];
    const Tensor& v = in[1];
    return V{searchsorted(s, v), searchsorted(s, v, true), searchsorted(s, v, false, std::string("right")),
             bucketize(v.reshape({-1}), s.select(0, 0)), searchsorted(in[2], v, false, std::nullopt, in[3])};
  };
  const auto make = [] {
    const Tensor s = std::get<0>(sort(randn({2, 6}, float64), 1));
    const Tensor u = randn({2, 6}, float64);
    return V{s, randn({2, 5}, float64), u, argsort(u, 1)};
  };
  replays(fn, make(), make());
  // many values per line: the merge of Note [searchsorted by merging]
  const auto merge_fn = [](const V& in) { return V{searchsorted(in[0], in[1]), searchsorted(in[0], in[1], true)}; };
  const auto make_long = [] { return V{std::get<0>(sort(randn({100}, float64), 0)), randn({600}, float64)}; };
  replays(merge_fn, make_long(), make_long());
}

TEST_CASE("jit ops: unique and unique_consecutive replay; a different number of values is refused") {
  const auto fn = [](const V& in) {
    auto [u, inv, cnt] = unique(in[0], true, true, true);
    auto [c, cinv, ccnt] = unique_consecutive(in[0], true, true);
    auto [r, rinv, rcnt] = unique(in[1], true, true, true, 0);
    return V{u, inv, cnt, c, cinv, ccnt, r, rinv, rcnt};
  };
  const Tensor rows_a = i64({1, 2, 0, 0, 1, 2, 3, 3, 3}, {3, 3}), rows_b = i64({5, 5, 5, 4, 4, 4, 4, 5, 4}, {3, 3});
  replays(fn, {i64({3, 1, 3, 3, 2, 1}, {6}), rows_a}, {i64({7, 9, 7, 8, 8, 9}, {6}), rows_b});
  // floating values with NaNs (each its own value)
  const auto ffn = [](const V& in) {
    auto [u, inv, cnt] = unique(in[0], true, true, true);
    return V{u, inv, cnt};
  };
  const double nan = std::nan("");
  replays(ffn, {f64({2.5, nan, -1.0, 2.5}, {4})}, {f64({0.5, 0.25, nan, 0.25}, {4})});
  // the radix path of many values (no inverse) and wide rows (a host sort of the rows)
  const auto big_fn = [](const V& in) {
    auto [u, inv, cnt] = unique(in[0], true, false, true);
    auto [r, rinv, rcnt] = unique(in[1], true, true, true, 0);
    return V{u, cnt, r, rinv, rcnt};
  };
  const Tensor wide_a = randn({4, 40}).round().to(int64), wide_b = randn({4, 40}).round().to(int64);
  replays(big_fn, {randperm(600, int64).to(float64), cat({wide_a, wide_a.narrow(0, 0, 2)})},
          {randperm(600, int64).to(float64) * 2.0, cat({wide_b.narrow(0, 1, 2), wide_b})});
  // a later step reads the unique values: another count cannot replay
  refuses_shapes([](const V& in) { return V{std::get<0>(unique(in[0])) * 2}; }, {i64({1, 1, 2}, {3})}, {i64({1, 2, 3}, {3})});
}

TEST_CASE("jit ops: nonzero, masked_select, repeat_interleave, bincount, histc and masked_scatter replay their counts") {
  // the same count at other places replays; another count is refused by the next step
  const auto nz = [](const V& in) { return V{nonzero(in[0]) * 2, argwhere(in[0]) + 1}; };
  replays(nz, {f64({0, 1, 2, 0, 0, 3}, {2, 3})}, {f64({4, 0, 0, 5, 6, 0}, {2, 3})});
  refuses_shapes(nz, {f64({0, 1, 2, 0, 0, 3}, {2, 3})}, {f64({4, 0, 0, 5, 0, 0}, {2, 3})});
  const auto ms = [](const V& in) { return V{masked_select(in[0], in[0] > 0.0) * 3.0}; };
  replays(ms, {f64({-1, 2, 3, -4}, {4})}, {f64({5, -6, -7, 8}, {4})});
  refuses_shapes(ms, {f64({-1, 2, 3, -4}, {4})}, {f64({5, 6, -7, 8}, {4})});
  // repeat_interleave with tensor repeats: the same total replays, another is refused, a negative repeat throws
  const auto ri = [](const V& in) { return V{repeat_interleave(in[0], in[1], 0) * 2.0, repeat_interleave(in[1]) + 0}; };
  const Tensor x = f64({1, 2, 3}, {3});
  replays(ri, {x, i64({1, 0, 2}, {3})}, {x, i64({0, 3, 0}, {3})});
  refuses_shapes(ri, {x, i64({1, 0, 2}, {3})}, {x, i64({1, 1, 2}, {3})});
  replay_checks(ri, {x, i64({1, 0, 2}, {3})}, {x, i64({4, -1, 0}, {3})}, "[repeat_interleave] repeats must be non-negative, got -1");
  // bincount: the largest value sets the length (with weights: a gradient flows)
  const auto bc = [](const V& in) { return V{bincount(in[0]) * 1, bincount(in[0], in[1], 2) * 1.0}; };
  const Tensor w = f64({0.5, 1.5, 2.5, 3.5}, {4});
  replays(bc, {i64({0, 3, 3, 1}, {4}), w}, {i64({2, 2, 3, 0}, {4}), w * 2.0});
  refuses_shapes(bc, {i64({0, 3, 3, 1}, {4}), w}, {i64({0, 4, 3, 1}, {4}), w});
  replay_checks(bc, {i64({0, 3, 3, 1}, {4}), w}, {i64({0, 3, -3, 1}, {4}), w}, "[bincount] the input must be non-negative, got -3");
  // histc over the data's range and over a given one
  const auto hc = [](const V& in) { return V{histc(in[0], 4), histc(in[0], 3, -1.0, 1.0)}; };
  replays(hc, {f64({0.1, 0.5, -0.7, 2.0, 0.3}, {5})}, {f64({-3.0, 0.2, 0.25, 0.9, -0.1}, {5})});
  // masked_scatter: the source positions follow the mask; too few source elements throw
  const auto mscat = [](const V& in) { return V{masked_scatter(in[0], in[0] > 0.0, in[1])}; };
  const Tensor src = f64({10, 20}, {2});
  replays(mscat, {f64({1, -1, 2, -2}, {4}), src}, {f64({-1, 3, -2, 4}, {4}), src});
  replays(mscat, {f64({1, -1, -2, -2}, {4}), src}, {f64({-1, -3, -2, -4}, {4}), src});
  replay_checks(mscat, {f64({1, -1, 2, -2}, {4}), src}, {f64({1, 1, 2, -2}, {4}), src},
                "[masked_scatter] the mask selects 3 elements but source has only 2");
  const auto mscat0 = [](const V& in) { return V{masked_scatter(in[0], in[0] > 0.0, zeros({0}, float64))}; };
  replays(mscat0, {f64({-1, -2}, {2})}, {f64({-3, -4}, {2})});
  replay_checks(mscat0, {f64({-1, -2}, {2})}, {f64({-3, 4}, {2})}, "[masked_scatter] the mask selects 1 elements but source has only 0");
}

TEST_CASE("jit ops: index checks run at every replay, before the ops that trust the index") {
  const Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto take_fn = [](const V& in) { return V{take(in[0], in[1])}; };
  replays(take_fn, {x, i64({0, 5, -1}, {3})}, {x, i64({2, 3, -6}, {3})});
  replay_checks(take_fn, {x, i64({0, 5, -1}, {3})}, {x, i64({0, 6, 1}, {3})}, "[take] index 6 out of range for a tensor of 6 elements");
  const auto tad = [](const V& in) { return V{take_along_dim(in[0], in[1], 1)}; };
  replays(tad, {x, i64({0, 2, 1, 1}, {2, 2})}, {x, i64({2, 2, 0, 1}, {2, 2})});
  replay_checks(tad, {x, i64({0, 2, 1, 1}, {2, 2})}, {x, i64({0, 2, 3, 1}, {2, 2})},
                "[take_along_dim] index 3 out of range for dim 1 of size 3");
  const auto fill = [](const V& in) { return V{index_fill(in[0], 1, in[1], -1.0)}; };
  replays(fill, {x, i64({0}, {1})}, {x, i64({-1}, {1})});
  replay_checks(fill, {x, i64({0}, {1})}, {x, i64({-4}, {1})}, "[index_fill] index -4 out of range for dim 1 of size 3");
  // advanced indexing: x[i, j] and index_put, the indices checked and combined anew
  const auto adv = [](const V& in) {
    return V{in[0].index({in[1], in[2]}), index_put(in[0], {in[1], in[2]}, full({}, 9.0, float64)),
             index_put(in[0], {Tensor(), in[2]}, full({}, 7.0, float64), true)};
  };
  replays(adv, {x, i64({0, 1}, {2}), i64({2, -3}, {2})}, {x, i64({1, -2}, {2}), i64({1, 1}, {2})});
  replay_checks(adv, {x, i64({0, 1}, {2}), i64({2, -3}, {2})}, {x, i64({0, 1}, {2}), i64({2, 3}, {2})},
                "index 3 out of range for dim 1 of size 3");
  replay_checks(adv, {x, i64({0, 1}, {2}), i64({2, -3}, {2})}, {x, i64({2, 1}, {2}), i64({2, 0}, {2})},
                "index 2 out of range for dim 0 of size 2");
  // a bool mask index: its positions are found anew (the same count)
  const auto mask_fn = [](const V& in) { return V{in[0].index({in[0] > 2.5}) * 1.0}; };
  replays(mask_fn, {x}, {x * -1.0 + 7.0});
  // searchsorted's sorter
  const auto ss = [](const V& in) { return V{searchsorted(in[0], in[1], false, std::nullopt, in[2])}; };
  const Tensor s = f64({3, 1, 2, 5, 4}, {5}), v = f64({2.5, 0.0}, {2});
  replay_checks(ss, {s, v, i64({1, 2, 0, 4, 3}, {5})}, {s, v, i64({1, 2, 0, 7, 3}, {5})},
                "[searchsorted] sorter index 7 out of range for a sequence of 5");
}

TEST_CASE("jit ops: value checks of quantile, mvlgamma, cov and the sparse constructors run at every replay") {
  const Tensor x = f64({0.3, 2.0, 1.5, -0.5}, {4});
  replay_checks([](const V& in) { return V{quantile(in[0], in[1])}; }, {x, f64({0.5}, {1})}, {x, f64({1.5}, {1})},
                "[quantile] q values must lie in [0, 1], got 1.5");
  replay_checks([](const V& in) { return V{nanquantile(in[0], in[1])}; }, {x, f64({0.5}, {1})}, {x, f64({-0.25}, {1})},
                "[nanquantile] q values must lie in [0, 1], got -0.25");
  replay_checks([](const V& in) { return V{mvlgamma(in[0], 3)}; }, {f64({1.5, 2.0}, {2})}, {f64({1.5, 0.75}, {2})},
                "[mvlgamma] every element must be greater than (p - 1) / 2 = 1, got 0.75");
  const Tensor obs = f64({1, 2, 4, 3, 0, 1}, {2, 3});
  const auto cov_fn = [](const V& in) { return V{cov(in[0], 1, in[1], in[2])}; };
  replays(cov_fn, {obs, i64({1, 2, 1}, {3}), f64({0.5, 1, 2}, {3})}, {obs, i64({3, 1, 1}, {3}), f64({1, 0.25, 1}, {3})});
  replay_checks(cov_fn, {obs, i64({1, 2, 1}, {3}), f64({0.5, 1, 2}, {3})}, {obs, i64({1, -2, 1}, {3}), f64({0.5, 1, 2}, {3})},
                "[cov] fweights must be non-negative, got -2");
  replay_checks(cov_fn, {obs, i64({1, 2, 1}, {3}), f64({0.5, 1, 2}, {3})}, {obs, i64({1, 2, 1}, {3}), f64({0.5, -1, 2}, {3})},
                "[cov] aweights must be non-negative, got -1");
  // COO and CSR: checked indices are read by trusted kernels, so their checks must replay
  const Tensor b = f64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  const auto coo = [&b](const V& in) { return V{sparse::matmul(sparse::COO(in[0], in[1], {3, 4}), b), sparse::COO(in[0], in[1], {3, 4}).to_dense()}; };
  const Tensor vals = f64({1, -2, 3}, {3});
  replays(coo, {i64({0, 2, 1, 3, 0, 0}, {2, 3}), vals}, {i64({1, 1, 2, 0, 1, 3}, {2, 3}), vals});
  replay_checks(coo, {i64({0, 2, 1, 3, 0, 0}, {2, 3}), vals}, {i64({0, 2, 1, 3, 4, 0}, {2, 3}), vals},
                "[sparse_coo] index 4 out of range for dim 1 of size 4");
  const auto csr = [&b](const V& in) { return V{sparse::matmul(sparse::CSR(in[0], in[1], in[2], {3, 4}), b)}; };
  replays(csr, {i64({0, 1, 1, 3}, {4}), i64({2, 0, 3}, {3}), vals}, {i64({0, 2, 3, 3}, {4}), i64({1, 3, 0}, {3}), vals});
  replay_checks(csr, {i64({0, 1, 1, 3}, {4}), i64({2, 0, 3}, {3}), vals}, {i64({0, 1, 1, 3}, {4}), i64({2, 9, 3}, {3}), vals},
                "[sparse_csr] column 9 out of range for 4 columns");
  replay_checks(csr, {i64({0, 1, 1, 3}, {4}), i64({2, 0, 3}, {3}), vals}, {i64({0, 2, 1, 3}, {4}), i64({2, 0, 3}, {3}), vals},
                "[sparse_csr] crow_indices must run from 0 to nnz = 3 without decreasing");
}

TEST_CASE("jit ops: COO::from_dense, coalesce and to_csr replay on new values; another nnz is refused") {
  const Tensor b = f64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  const auto fd = [&b](const V& in) {
    const sparse::COO c = sparse::COO::from_dense(in[0]);
    return V{c.indices() * 1, c.values() * 1.0, sparse::matmul(sparse::CSR::from_dense(in[0]), b)};
  };
  replays(fd, {f64({0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4}, {3, 4})}, {f64({5, 0, 0, 0, 0, 6, 0, 7, 8, 0, 0, 0}, {3, 4})});
  refuses_shapes(fd, {f64({0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4}, {3, 4})}, {f64({5, 0, 0, 0, 0, 6, 0, 7, 8, 0, 0, 9}, {3, 4})});
  const auto co = [](const V& in) {
    const sparse::COO c = sparse::COO(in[0], in[1], {3, 4}).coalesce();
    return V{c.indices() * 1, c.values() * 1.0, c.to_csr().crow_indices() * 1};
  };
  const Tensor vals = f64({1, 2, 3, 4}, {4});
  replays(co, {i64({0, 2, 0, 1, 1, 3, 1, 0}, {2, 4}), vals}, {i64({2, 2, 1, 0, 3, 3, 0, 3}, {2, 4}), vals});
  refuses_shapes(co, {i64({0, 2, 0, 1, 1, 3, 1, 0}, {2, 4}), vals}, {i64({0, 2, 0, 1, 1, 3, 2, 1}, {2, 4}), vals});
}

TEST_CASE("jit ops: prod's and scatter_reduce's gradients inside a traced function follow each replay's zeros") {
  // the gradient (and the gradient of the gradient) of prod along rows, and of the whole prod
  const auto fn = [](const V& in) {
    const Tensor& x = in[0];
    const Tensor y = (prod(x, {1}) * arange(1, 5, 1, float64)).sum() + prod(x);
    const Tensor g = autodiff::grad({y}, {x}, {}, std::nullopt, true)[0];
    return V{g, autodiff::grad({(g * g).sum()}, {x}, {}, std::nullopt, true)[0]};
  };
  const Tensor no_zeros = f64({1.5, -2, 0.5, 3, 1, 2, -1, 0.25, 2, 2, 0.5, -3}, {4, 3}).requires_grad_();
  const Tensor zeros_in = f64({0, -2, 0.5, 0, 0, 2, 0, 0, 0, 2, 0.5, -3}, {4, 3}).requires_grad_();  // 1, 2, 3 and no zeros
  replays(fn, {no_zeros}, {zeros_in});
  replays(fn, {zeros_in}, {no_zeros});
  replays(fn, {zeros_in}, {f64({1, 0, 2, 3, 0, 0, -1, 1, 0, 0, 0, 0}, {4, 3}).requires_grad_()});
  // scatter_reduce "prod", with and without x's values, gradients for x and src
  const auto sfn = [](const V& in) {
    const Tensor index = i64({0, 1, 0, 2, 1}, {5});
    const Tensor w = arange(1, 6, 1, float64);
    const Tensor y = (scatter_reduce(in[0], 0, index, in[1], "prod") * arange(1, 4, 1, float64)).sum() +
                     (scatter_reduce(in[0], 0, index, in[1] * w, "prod", false)).sum();
    return autodiff::grad({y}, {in[0], in[1]}, {}, std::nullopt, true);
  };
  const Tensor x3 = f64({2, -1, 0.5}, {3}).requires_grad_(), x3z = f64({0, -1, 0.5}, {3}).requires_grad_();
  const Tensor s5 = f64({1.5, 2, -0.5, 3, 0.25}, {5}).requires_grad_(), s5z = f64({0, 2, 0, 3, 0}, {5}).requires_grad_();
  replays(sfn, {x3, s5}, {x3z, s5z});
  replays(sfn, {x3z, s5z}, {x3, s5});
}
