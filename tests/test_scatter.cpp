// tests/test_scatter.cpp - the scatters with a reduction (scatter, scatter_reduce, index_copy, index_reduce), their
// in-place forms and index_put: values against loops over the index in long double (every reduce, include_self,
// dims, layouts, dtypes, repeated indices, NaN), PyTorch's documented examples, errors, gradcheck and
// gradgradcheck (repeated indices, ties aside, zeros in products).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

const std::vector<std::string> kReduces = {"sum", "prod", "mean", "amax", "amin"};

/// An int64 tensor of shape s (1-D when s is empty).
Tensor ix(const I& v, Shape s = {}) { return s.empty() ? from_vector(v) : from_vector(v, s); }

/// Row-major strides of shape s.
I strides_of(const Shape& s) {
  I st(s.size(), 1);
  for (std::size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

/// The multi-index of flat position f in shape s.
I unflat(std::int64_t f, const Shape& s) {
  I p(s.size());
  for (std::size_t k = s.size(); k-- > 0;) p[k] = f % s[k], f /= s[k];
  return p;
}

/// The reduction written out: x's values with the values landing on each element (in landing order) combined
/// by `reduce` ("replace" for scatter); `target(p)` is where landing position p (of shape `land`) goes, as a
/// multi-index of x, and `value(p)` its value. Sums and products in long double; integer means round down.
std::vector<double> reference(const Tensor& x, const Shape& land, const std::function<I(const I&)>& target,
                              const std::function<double(const I&)>& value, const std::string& reduce,
                              bool include_self, bool integer) {
  const std::vector<double> xv = vals(x.contiguous());
  const I xst = strides_of(x.shape());
  std::vector<std::vector<double>> landed(xv.size());
  std::int64_t n = 1;
  for (auto s : land) n *= s;
  for (std::int64_t f = 0; f < n; ++f) {
    const I p = unflat(f, land);
    const I t = target(p);
    std::int64_t at = 0;
    for (std::size_t k = 0; k < t.size(); ++k) at += t[k] * xst[k];
    landed[static_cast<std::size_t>(at)].push_back(value(p));
  }
  std::vector<double> out = xv;
  for (std::size_t e = 0; e < xv.size(); ++e) {
    std::vector<double> vs = landed[e];
    if (vs.empty()) continue;
    if (reduce == "replace") {
      out[e] = vs.back();
      continue;
    }
    if (include_self) vs.insert(vs.begin(), xv[e]);
    long double acc = reduce == "prod" ? 1.0L : 0.0L;
    if (reduce == "sum" || reduce == "mean") {
      for (double v : vs) acc += v;
      if (reduce == "mean")
        acc = integer ? std::floor(acc / static_cast<long double>(vs.size())) : acc / static_cast<long double>(vs.size());
    } else if (reduce == "prod") {
      for (double v : vs) acc *= v;
    } else {
      acc = vs[0];
      for (double v : vs) {
        if (std::isnan(static_cast<double>(acc))) break;
        if (std::isnan(v) || (reduce == "amax" ? v > acc : v < acc)) acc = v;
      }
    }
    out[e] = static_cast<double>(acc);
  }
  return out;
}

/// reference for scatter* (index per element; src read at the index's positions).
std::vector<double> ref_scatter(const Tensor& x, std::int64_t d, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self) {
  const std::vector<std::int64_t> iv = ivals(index.contiguous());
  const std::vector<double> sv = vals(src.contiguous());
  const I ist = strides_of(index.shape()), sst = strides_of(src.shape());
  const auto flat = [](const I& p, const I& st) {
    std::int64_t f = 0;
    for (std::size_t k = 0; k < p.size(); ++k) f += p[k] * st[k];
    return f;
  };
  return reference(
      x, index.shape(),
      [&](const I& p) {
        I t = p;
        t[static_cast<std::size_t>(d)] = iv[static_cast<std::size_t>(flat(p, ist))];
        return t;
      },
      [&](const I& p) { return sv[static_cast<std::size_t>(flat(p, sst))]; }, reduce, include_self,
      x.dtype() == int64);
}

/// reference for index_* (1-D index along d, negative from the end).
std::vector<double> ref_index(const Tensor& x, std::int64_t d, const I& index, const Tensor& src,
                              const std::string& reduce, bool include_self) {
  const std::vector<double> sv = vals(src.contiguous());
  const I sst = strides_of(src.shape());
  const std::int64_t n = x.size(d);
  return reference(
      x, src.shape(),
      [&](const I& p) {
        I t = p;
        const std::int64_t j = index[static_cast<std::size_t>(p[static_cast<std::size_t>(d)])];
        t[static_cast<std::size_t>(d)] = j < 0 ? j + n : j;
        return t;
      },
      [&](const I& p) {
        std::int64_t f = 0;
        for (std::size_t k = 0; k < p.size(); ++k) f += p[k] * sst[k];
        return sv[static_cast<std::size_t>(f)];
      },
      reduce, include_self, x.dtype() == int64);
}

/// Small integers as dt (exact sums and products), some zeros.
Tensor small_ints(const Shape& s, Dtype dt) { return (randn(s, float64) * 2.0).round().clamp(-3, 3).to(dt); }

/// Exact comparison (NaN equal to NaN, -0 equal to +0).
void check_same(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) && bad++ == 0) first = i;
  INFO("mismatches: " << bad << ", first at " << first << ": " << (bad ? got[first] : 0.0) << " vs " << (bad ? want[first] : 0.0));
  CHECK(bad == 0);
}

}  // namespace

// ---- values ---------------------------------------------------------------------------------------------------------
TEST_CASE("scatter and scatter_reduce match the loop: every reduce, include_self, dim, layout, dtype, repeated indices") {
  manual_seed(71);
  for (Dtype dt : {float64, float32, int64}) {
    CAPTURE(dt);
    const Tensor x = small_ints({4, 5, 6}, dt);
    for (std::int64_t d : {0, 1, 2, -1}) {
      CAPTURE(d);
      const std::int64_t dd = d < 0 ? d + 3 : d;
      Shape is = {3, 4, 5};
      is[static_cast<std::size_t>(dd)] = 9;  // longer than the dim: repeats
      const Tensor index = randint(0, x.size(dd), is);
      Shape ss = is;
      for (auto& s : ss) s += 1;  // src larger than the index: only the index's part is read
      const Tensor src = small_ints(ss, dt);
      check_same(vals(scatter(x, d, index, src)), ref_scatter(x, dd, index, src, "replace", true));
      for (const auto& r : kReduces)
        for (bool self : {true, false}) {
          CAPTURE(r);
          CAPTURE(self);
          const Tensor got = scatter_reduce(x, d, index, src, r, self);
          if (r == "mean" && dt != int64) check_close(got, ref_scatter(x, dd, index, src, r, self), 1e-6);
          else check_same(vals(got), ref_scatter(x, dd, index, src, r, self));
        }
      // non-contiguous input, index and src: the same values
      const Tensor xt = x.transpose(0, 2).contiguous().transpose(0, 2), it = index.transpose(0, 2).contiguous().transpose(0, 2);
      CHECK(vals(scatter_reduce(xt, d, it, src.transpose(0, 1).contiguous().transpose(0, 1), "amax", false)) ==
            vals(scatter_reduce(x, d, index, src, "amax", false)));
      CHECK(vals(scatter(xt, d, it, src)) == vals(scatter(x, d, index, src)));
    }
  }
  // float sums accumulate in index order: against long double within rounding
  const Tensor xf = randn({50, 40}, float64), sf = randn({200, 40}, float64);
  const Tensor i0 = randint(0, 50, {200, 40});
  check_close(scatter_reduce(xf, 0, i0, sf, "sum"), ref_scatter(xf, 0, i0, sf, "sum", true), 1e-13);
  check_close(scatter_reduce(xf, 0, i0, sf, "mean", false), ref_scatter(xf, 0, i0, sf, "mean", false), 1e-13);
  check_close(scatter_reduce(xf, 0, i0, sf * 0.1 + 1.0, "prod"), ref_scatter(xf, 0, i0, sf * 0.1 + 1.0, "prod", true), 1e-12);
}

TEST_CASE("scatter_reduce and scatter: PyTorch's documented examples, the last repeated replacement wins, NaN wins") {
  // torch.Tensor.scatter_reduce_'s examples
  const Tensor src = vec({1, 2, 3, 4, 5, 6}), index = ix({0, 1, 0, 1, 2, 1}), input = vec({1, 2, 3, 4});
  CHECK(vals(scatter_reduce(input, 0, index, src, "sum")) == std::vector<double>{5, 14, 8, 4});
  CHECK(vals(scatter_reduce(input, 0, index, src, "sum", false)) == std::vector<double>{4, 12, 5, 4});
  CHECK(vals(scatter_reduce(vec({5, 4, 3, 2}), 0, index, src, "amax")) == std::vector<double>{5, 6, 5, 2});
  CHECK(vals(scatter_reduce(vec({5, 4, 3, 2}), 0, index, src, "amax", false)) == std::vector<double>{3, 6, 5, 2});
  // torch.Tensor.scatter_'s example: zeros(3, 5).scatter_(0, [[0, 1, 2, 0]], arange(1, 11).reshape(2, 5))
  const Tensor s = scatter(zeros({3, 5}, float64), 0, ix({0, 1, 2, 0}, {1, 4}), arange(1, 11, 1, float64).reshape({2, 5}));
  CHECK(vals(s) == std::vector<double>{1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0});
  CHECK(vals(scatter(full({2, 4}, 2.0, float64), 1, ix({2, 3}, {2, 1}), 1.23)) ==
        std::vector<double>{2, 2, 1.23, 2, 2, 2, 2, 1.23});
  // repeated indices: the last value in index order wins, for long lines too
  CHECK(vals(scatter(zeros({2}, float64), 0, ix({1, 0, 1, 1}), vec({7, 8, 9, 10}))) == std::vector<double>{8, 10});
  const Tensor many = arange(0, 5000, 1, float64);
  CHECK(vals(scatter(zeros({1}, float64), 0, zeros({5000}, int64), many)) == std::vector<double>{4999});
  CHECK(vals(index_copy(zeros({1}, float64), 0, zeros({5000}, int64), many)) == std::vector<double>{4999});
  // a NaN wins in amax and amin and stays
  const auto r = vals(scatter_reduce(vec({0, 0}), 0, ix({0, 0, 1}), vec({kNaN, 5, -1}), "amax"));
  CHECK(std::isnan(r[0]));
  CHECK(r[1] == 0);
  CHECK(std::isnan(vals(scatter_reduce(vec({kNaN}), 0, ix({0}), vec({1}), "amin"))[0]));
  // integer mean rounds down; bool sums are or, products and; int64 extremes without include_self
  CHECK(ivals(scatter_reduce(ix({1, 2}), 0, ix({0, 1}), ix({-4, 5}), "mean")) == I{-2, 3});
  CHECK(ivals(scatter_reduce(ix({1, 2}), 0, ix({0}), ix({-7}), "amax", false)) == I{-7, 2});
  const Tensor b = from_vector<bool>({false, true}).reshape({2});
  CHECK(to_vector<bool>(scatter_reduce(b, 0, ix({0, 1}), from_vector<bool>({true, false}), "sum")) == std::vector<bool>{true, true});
  CHECK(to_vector<bool>(scatter_reduce(b, 0, ix({0, 1}), from_vector<bool>({true, false}), "prod")) == std::vector<bool>{false, false});
  // complex: sum and mean part by part, products as complex numbers
  const Tensor z = complex(vec({1, 2}), vec({1, -1})), zs = complex(vec({2, 0.5}), vec({-1, 3}));
  CHECK(vals(real(scatter_reduce(z, 0, ix({0, 0}), zs, "mean"))) == std::vector<double>{(1 + 2 + 0.5) / 3, 2});
  const auto zp = to_vector<std::complex<double>>(scatter_reduce(z, 0, ix({0, 0}), zs, "prod"));
  const std::complex<double> want = std::complex<double>(1, 1) * std::complex<double>(2, -1) * std::complex<double>(0.5, 3);
  CHECK(std::abs(zp[0] - want) < 1e-15);
  // a 0-d input
  CHECK(vals(scatter_reduce(scalar_tensor(3.0, float64), 0, from_vector(I{0}, Shape{}), vec({4}), "prod")) == std::vector<double>{12});
  CHECK(vals(scatter(scalar_tensor(3.0, float64), 0, from_vector(I{0}, Shape{}), 5.0)) == std::vector<double>{5});
}

TEST_CASE("index_copy and index_reduce match the loop: negative and repeated indices, every reduce, dims") {
  manual_seed(72);
  for (Dtype dt : {float64, int64}) {
    CAPTURE(dt);
    const Tensor x = small_ints({5, 4, 3}, dt);
    for (std::int64_t d : {0, 1, 2}) {
      CAPTURE(d);
      const std::int64_t n = x.size(d);
      const I index = {n - 1, 0, -1, 1, 0, -n};
      Shape ss = x.shape();
      ss[static_cast<std::size_t>(d)] = static_cast<std::int64_t>(index.size());
      const Tensor src = small_ints(ss, dt);
      check_same(vals(index_copy(x, d, ix(index), src)), ref_index(x, d, index, src, "replace", true));
      check_same(vals(index_add(x, d, ix(index), src)), ref_index(x, d, index, src, "sum", true));
      for (const auto& r : kReduces)
        for (bool self : {true, false}) {
          CAPTURE(r);
          CAPTURE(self);
          const Tensor got = index_reduce(x, d, ix(index), src, r, self);
          if (r == "mean" && dt != int64) check_close(got, ref_index(x, d, index, src, r, self), 1e-14);
          else check_same(vals(got), ref_index(x, d, index, src, r, self));
        }
      // strided source
      const Tensor st = src.transpose(0, 2).contiguous().transpose(0, 2);
      CHECK(vals(index_reduce(x, d, ix(index), st, "amin", false)) == vals(index_reduce(x, d, ix(index), src, "amin", false)));
    }
  }
  // torch.Tensor.index_reduce_'s example
  const Tensor x = full({5, 3}, 2.0, float64), t = arange(1, 13, 1, float64).reshape({4, 3});
  const Tensor idx = ix({0, 4, 2, 0});
  CHECK(vals(index_reduce(x, 0, idx, t, "prod")) ==
        std::vector<double>{20, 44, 72, 2, 2, 2, 14, 16, 18, 2, 2, 2, 8, 10, 12});
  CHECK(vals(index_reduce(x, 0, idx, t, "prod", false)) ==
        std::vector<double>{10, 22, 36, 2, 2, 2, 7, 8, 9, 2, 2, 2, 4, 5, 6});
  // a 0-d index is one slice
  CHECK(vals(index_copy(zeros({2, 2}, float64), 1, ix({1}, Shape{}), vec({3, 4}).reshape({2, 1}))) == std::vector<double>{0, 3, 0, 4});
}

TEST_CASE("in-place scatters write self, bump its version, and record the gradient of the out-of-place op") {
  manual_seed(73);
  const Tensor base = randn({4, 5}, float64), src = randn({6, 5}, float64);
  const Tensor idx = randint(0, 4, {6, 5}), idx1 = ix({3, 0, 3, 1, 2, 0});
  struct Case {
    std::string name;
    std::function<void(Tensor&)> in_place;
    std::function<Tensor(const Tensor&)> out_of_place;
  };
  const std::vector<Case> cases = {
      {"scatter_", [&](Tensor& t) { t.scatter_(0, idx, src); }, [&](const Tensor& t) { return scatter(t, 0, idx, src); }},
      {"scatter_ value", [&](Tensor& t) { t.scatter_(0, idx, 2.5); }, [&](const Tensor& t) { return scatter(t, 0, idx, 2.5); }},
      {"scatter_add_", [&](Tensor& t) { t.scatter_add_(0, idx, src); }, [&](const Tensor& t) { return scatter_add(t, 0, idx, src); }},
      {"scatter_reduce_", [&](Tensor& t) { t.scatter_reduce_(0, idx, src, "amin", false); },
       [&](const Tensor& t) { return scatter_reduce(t, 0, idx, src, "amin", false); }},
      {"index_add_", [&](Tensor& t) { t.index_add_(0, idx1, src); }, [&](const Tensor& t) { return index_add(t, 0, idx1, src); }},
      {"index_copy_", [&](Tensor& t) { t.index_copy_(0, idx1, src); }, [&](const Tensor& t) { return index_copy(t, 0, idx1, src); }},
      {"index_reduce_", [&](Tensor& t) { t.index_reduce_(0, idx1, src, "mean"); },
       [&](const Tensor& t) { return index_reduce(t, 0, idx1, src, "mean"); }},
      {"index_fill_", [&](Tensor& t) { t.index_fill_(1, ix({4, 0}), -1.0); }, [&](const Tensor& t) { return index_fill(t, 1, ix({4, 0}), -1.0); }},
      {"index_put_", [&](Tensor& t) { t.index_put_({ix({1, 1, 3}), ix({0, 0, 4})}, vec({1, 2, 3}), true); },
       [&](const Tensor& t) { return index_put(t, {ix({1, 1, 3}), ix({0, 0, 4})}, vec({1, 2, 3}), true); }},
      {"masked_scatter_", [&](Tensor& t) { t.masked_scatter_(base > 0.0, src); },
       [&](const Tensor& t) { return masked_scatter(t, base > 0.0, src); }},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Tensor t = base.clone();
    const auto v0 = t.version();
    c.in_place(t);
    CHECK(t.version() > v0);
    CHECK(vals(t) == vals(c.out_of_place(base)));
    // a strided view of a larger tensor: only the view's elements change
    Tensor big = zeros({5, 4}, float64);
    Tensor view = big.t();
    view.copy_(base);
    c.in_place(view);
    CHECK(vals(big.t()) == vals(c.out_of_place(base)));
    // with a graph: the in-place result's gradient is the out-of-place op's
    const Tensor a = base.clone().requires_grad_(), b = base.clone().requires_grad_();
    Tensor y = a * 2.0;
    c.in_place(y);
    (y * y).sum().backward();
    (c.out_of_place(b * 2.0).pow(2.0)).sum().backward();
    CHECK(vals(a.grad()) == vals(b.grad()));
  }
}

// ---- index_put ----------------------------------------------------------------------------------------------------
TEST_CASE("index_put matches numpy's indexing rule: adjacent, split, leading full slices, bool masks, broadcasting") {
  manual_seed(74);
  const Tensor x = randn({3, 4, 5}, float64);
  const auto xv = vals(x);
  const auto at = [](std::int64_t a, std::int64_t b, std::int64_t c) { return static_cast<std::size_t>((a * 4 + b) * 5 + c); };
  {  // x[i0, i1] = v: adjacent, result dims (2, 5); negative indices
    const Tensor v = randn({2, 5}, float64);
    auto want = xv;
    const I i0 = {2, 0}, i1 = {-1, 1};
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 5; ++c) want[at(i0[b], (i1[b] + 4) % 4, c)] = vals(v)[static_cast<std::size_t>(b * 5 + c)];
    CHECK(vals(index_put(x, {ix(i0), ix(i1)}, v)) == want);
  }
  {  // x[:, i1] = v: the indexed dim stays in place, (3, 2, 5)
    const Tensor v = randn({3, 2, 5}, float64);
    auto want = xv;
    const I i1 = {3, 1};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 5; ++c) want[at(a, i1[b], c)] = vals(v)[static_cast<std::size_t>((a * 2 + b) * 5 + c)];
    CHECK(vals(index_put(x, {Tensor(), ix(i1)}, v)) == want);
  }
  {  // x[i0, :, i2] = v: split indices go first, (2, 4); broadcast index shapes (2, 1) and (3,) make (2, 3, 4)
    const Tensor v = randn({2, 3, 4}, float64);
    auto want = xv;
    const I i0 = {0, 2}, i2 = {4, 0, 2};
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 3; ++q)
        for (int m = 0; m < 4; ++m) want[at(i0[p], m, i2[q])] = vals(v)[static_cast<std::size_t>((p * 3 + q) * 4 + m)];
    CHECK(vals(index_put(x, {ix(i0, {2, 1}), Tensor(), ix(i2)}, v)) == want);
  }
  {  // a bool mask over the first two dims, values broadcast along the last
    const Tensor mask = randn({3, 4}) > 0.0;
    const Tensor v = randn({5}, float64);
    auto want = xv;
    const auto mv = to_vector<bool>(mask);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b)
        if (mv[static_cast<std::size_t>(a * 4 + b)])
          for (int c = 0; c < 5; ++c) want[at(a, b, c)] = vals(v)[static_cast<std::size_t>(c)];
    CHECK(vals(index_put(x, {mask}, v)) == want);
    // a mask over all dims, a 0-d value
    CHECK(vals(index_put(x, {x > 0.0}, scalar_tensor(0.0, float64))) == vals(x.clamp_max(0.0)));
  }
  {  // accumulate adds every repeated index; without it the last wins
    auto want = xv;
    want[at(1, 2, 3)] += 1 + 2 + 4;
    want[at(0, 0, 0)] += 8;
    const Tensor i0 = ix({1, 1, 0, 1}), i1 = ix({2, 2, 0, 2}), i2 = ix({3, 3, 0, 3});
    CHECK(vals(index_put(x, {i0, i1, i2}, vec({1, 2, 8, 4}), true)) == want);
    auto last = xv;
    last[at(1, 2, 3)] = 4;
    last[at(0, 0, 0)] = 8;
    CHECK(vals(index_put(x, {i0, i1, i2}, vec({1, 2, 8, 4}))) == last);
  }
  // no index: every element
  CHECK(vals(index_put(x, {}, scalar_tensor(1.0, float64))) == std::vector<double>(60, 1.0));
  CHECK(vals(index_put(x, {Tensor()}, x, true)) == vals(x * 2.0));
  // empty index: nothing changes
  CHECK(vals(index_put(x, {zeros({0}, int64)}, zeros({0, 4, 5}, float64))) == xv);
}

// ---- errors -------------------------------------------------------------------------------------------------------
TEST_CASE("scatter errors name the op and the offending values, and change nothing") {
  const Tensor x = zeros({3, 4}, float64);
  const Tensor idx = ix({0, 2}, {1, 2}), src = ones({1, 2}, float64);
  CHECK_THROWS_WITH_AS(scatter_reduce(x, 0, idx, src, "max"),
                       Contains("[scatter_reduce] reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"max\""), Error);
  CHECK_THROWS_WITH_AS(scatter_reduce(zeros({2}, complex128), 0, ix({0}), zeros({1}, complex128), "amax"),
                       Contains("[scatter_reduce] reduce \"amax\" is not supported for complex tensors (got complex128)"), Error);
  CHECK_THROWS_WITH_AS(scatter_reduce(zeros({2}, bool_), 0, ix({0}), zeros({1}, bool_), "mean"),
                       Contains("[scatter_reduce] reduce \"mean\" is not supported for bool tensors"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, idx, ones({1, 2}, float32)), Contains("[scatter] src must have the input's dtype float64, got float32"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, ix({0, 3}, {1, 2}), src), Contains("[scatter] index 3 out of range for dim 0 of size 3"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, ix({0, 1}), src), Contains("[scatter] index of shape (2,) must have as many dims as the input of shape (3, 4)"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, idx, ones({2}, float64)), Contains("[scatter] src of shape (2,) must have as many dims"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, idx, ones({1, 1}, float64)), Contains("[scatter] index of shape (1, 2) is larger than src of shape (1, 1)"), Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, idx, std::complex<double>(1, 1)), Contains("[scatter]"), Error);
  CHECK_THROWS_WITH_AS(index_copy(x, 0, ix({0, 1}), ones({3, 4}, float64)),
                       Contains("[index_copy] src of shape (3, 4) does not match (2, 4) (the input of shape (3, 4) with 2 indices along dim 0)"), Error);
  CHECK_THROWS_WITH_AS(index_copy(x, 1, ix({4}), ones({3, 1}, float64)), Contains("[index_copy] index 4 out of range for a dim of size 4"), Error);
  CHECK_THROWS_WITH_AS(index_reduce(x, 0, ix({0}), ones({1, 4}, float64), "min"), Contains("[index_reduce] reduce must be"), Error);
  CHECK_THROWS_WITH_AS(index_reduce(x, 2, ix({0}), ones({1, 4}, float64), "prod"), Contains("[index_reduce]"), Error);
  // in place: self unchanged after an error
  Tensor y = seq({3, 4});
  const auto before = vals(y);
  const auto v0 = y.version();
  CHECK_THROWS_WITH_AS(y.scatter_(0, ix({0, 5}, {1, 2}), src), Contains("[scatter] index 5 out of range"), Error);
  CHECK_THROWS_WITH_AS(y.index_reduce_(0, ix({0}), ones({1, 4}, float32), "amax"), Contains("[index_reduce] src must have the input's dtype"), Error);
  CHECK_THROWS_WITH_AS(y.index_put_({ix({0}), ix({9})}, vec({1})), Contains("[index_put_] index 9 out of range for dim 1 of size 4"), Error);
  CHECK(vals(y) == before);
  CHECK(y.version() == v0);
}

TEST_CASE("index_put errors") {
  const Tensor x = zeros({3, 4}, float64);
  CHECK_THROWS_WITH_AS(index_put(x, {ix({0})}, vec({1}).to(float32)), Contains("[index_put] values must have the input's dtype float64, got float32"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {ix({0}), ix({0}), ix({0})}, vec({1})), Contains("[index_put] too many indices (3) for the input of shape (3, 4)"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {zeros({3, 3}, bool_)}, vec({1})),
                       Contains("[index_put] bool index 0 of shape (3, 3) does not match the input of shape (3, 4) at dim 1"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {vec({0})}, vec({1})), Contains("[index_put] index 0 must be an int64 or a bool tensor of at least 1 dim, got float64 of shape (1,)"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {ix({0, 1})}, vec({1, 2, 3})), Contains("[index_put] values of shape (3,) cannot be broadcast to the indexed shape (2, 4)"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {ix({0}), ix({-5})}, vec({1})), Contains("[index_put] index -5 out of range for dim 1 of size 4"), Error);
  CHECK_THROWS_WITH_AS(index_put(x, {ix({0, 1}), ix({0, 1, 2})}, vec({1})), Contains("[index_put]"), Error);
}

// ---- gradients --------------------------------------------------------------------------------------------------
TEST_CASE("scatter_reduce and index_reduce gradients: gradcheck for every reduce with repeated indices") {
  manual_seed(75);
  const Tensor idx = randint(0, 4, {6, 3});     // every target gets ~1.5 values; some none
  const I rep = {3, 0, 3, 1, 0};
  for (const std::string r : {"replace", "sum", "prod", "mean", "amax", "amin"})
    for (bool self : {true, false}) {
      CAPTURE(r);
      CAPTURE(self);
      const auto f = [&](const V& in) {
        return r == "replace" ? scatter(in[0], 0, idx, in[1]) : scatter_reduce(in[0], 0, idx, in[1], r, self);
      };
      CHECK(autodiff::gradcheck(f, {leaf64({4, 3}), leaf64({6, 3})}));
      const auto g = [&](const V& in) {
        return r == "replace" ? index_copy(in[0], 0, ix(rep), in[1]) : index_reduce(in[0], 0, ix(rep), in[1], r, self);
      };
      CHECK(autodiff::gradcheck(g, {leaf64({4, 3}), leaf64({5, 3})}));
      if (r != "amax" && r != "amin") CHECK(autodiff::gradgradcheck(f, {leaf64({4, 3}), leaf64({6, 3})}));
    }
  // amax / amin double backward (the masks are constants)
  CHECK(autodiff::gradgradcheck([&](const V& in) { return scatter_reduce(in[0] * in[0], 0, idx, in[1], "amax"); },
                                {leaf64({4, 3}), leaf64({6, 3})}));
  // complex products and means
  const Tensor zx = complex(randn({4, 3}, float64), randn({4, 3}, float64)).requires_grad_();
  const Tensor zs = complex(randn({6, 3}, float64), randn({6, 3}, float64)).requires_grad_();
  CHECK(autodiff::gradcheck([&](const V& in) { return scatter_reduce(in[0], 0, idx, in[1], "prod"); }, {zx, zs}));
  CHECK(autodiff::gradcheck([&](const V& in) { return index_reduce(in[0], 1, ix({2, 2, 0}), in[1], "mean", false); },
                            {zx, complex(randn({4, 3}, float64), randn({4, 3}, float64)).requires_grad_()}));
}

TEST_CASE("prod gradients with zeros in a group: one, two, in self, exact and twice differentiable") {
  // groups along dim 0 of a 1-D x: target 0 gets (x0, 0, 2), target 1 (x1 = 0, 3), target 2 (x2, 0, 0), target 3 none
  const Tensor idx = ix({0, 0, 1, 2, 2});
  const auto leaf = [](const std::vector<double>& v) { return vec(v).requires_grad_(); };
  for (bool self : {true, false}) {
    CAPTURE(self);
    const auto f = [&](const V& in) { return scatter_reduce(in[0], 0, idx, in[1], "prod", self); };
    const V in = {leaf({1.5, 0, -2, 4}), leaf({0, 2, 3, 0, 0})};
    CHECK(autodiff::gradcheck(f, in));
    CHECK(autodiff::gradgradcheck(f, in));
    const auto g = [&](const V& v) { return index_reduce(v[0], 0, idx, v[1], "prod", self); };
    CHECK(autodiff::gradcheck(g, in));
  }
  // closed form: d/ds0 of x0 * s0 * s1 at s0 = 0 is x0 * s1
  const Tensor x = leaf({1.5}), s = leaf({0, 2});
  scatter_reduce(x, 0, ix({0, 0}), s, "prod").sum().backward();
  CHECK(vals(s.grad()) == std::vector<double>{3, 0});
  CHECK(vals(x.grad()) == std::vector<double>{0});
}

TEST_CASE("replace gradients go to the value that lands last; index_put's through index_copy and index_add") {
  const Tensor x = vec({1, 2, 3}).requires_grad_(), s = vec({4, 5, 6, 7}).requires_grad_();
  scatter(x, 0, ix({2, 0, 2, 2}), s).backward(vec({10, 20, 30}));
  CHECK(vals(x.grad()) == std::vector<double>{0, 20, 0});
  CHECK(vals(s.grad()) == std::vector<double>{0, 10, 0, 30});
  manual_seed(76);
  const Tensor i0 = ix({1, 1, 0, 2}), i1 = ix({3, 3, 0, -1});
  for (bool acc : {false, true}) {
    CAPTURE(acc);
    const auto f = [&](const V& in) { return index_put(in[0], {i0, Tensor(), i1}, in[1], acc); };
    CHECK(autodiff::gradcheck(f, {leaf64({3, 2, 4}), leaf64({4, 2})}));
    CHECK(autodiff::gradgradcheck(f, {leaf64({3, 2, 4}), leaf64({4, 2})}));
    CHECK(autodiff::gradcheck([&](const V& in) { return index_put(in[0], {in[0].detach() > 0.0}, in[1], acc); },
                              {leaf64({3, 4}), leaf64({})}));
  }
}

// ---- Tensor::index with tensors, Tensor::index_put_ ----------------------------------------------------------
TEST_CASE("Tensor::index with several tensors follows numpy's rule (integers select first, as PyTorch)") {
  manual_seed(77);
  const Tensor x = randn({3, 4, 5}, float64);
  const auto xv = vals(x);
  const auto at = [&](std::int64_t a, std::int64_t b, std::int64_t c) { return xv[static_cast<std::size_t>((a * 4 + b) * 5 + c)]; };
  const I i0 = {2, 0}, i1 = {3, -1}, i2 = {4, 0, 1};
  {  // adjacent at the front: (2, 5)
    const Tensor r = x.index({ix(i0), ix(i1)});
    REQUIRE(r.shape() == Shape{2, 5});
    std::vector<double> want;
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 5; ++c) want.push_back(at(i0[b], (i1[b] + 4) % 4, c));
    CHECK(vals(r) == want);
  }
  {  // adjacent after a slice: (3, 2, 3) from broadcast (2, 1) and (3,)
    const Tensor r = x.index({Slice(), ix(i0, {2, 1}), ix(i2)});
    REQUIRE(r.shape() == Shape{3, 2, 3});
    std::vector<double> want;
    for (int a = 0; a < 3; ++a)
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 3; ++q) want.push_back(at(a, i0[p], i2[q]));
    CHECK(vals(r) == want);
  }
  {  // split by a slice: the index dims first, (3, 4)
    const Tensor r = x.index({ix({1, 2, 0}), Slice(), ix(i2)});
    REQUIRE(r.shape() == Shape{3, 4});
    std::vector<double> want;
    const I a0 = {1, 2, 0};
    for (int p = 0; p < 3; ++p)
      for (int m = 0; m < 4; ++m) want.push_back(at(a0[p], m, i2[p]));
    CHECK(vals(r) == want);
  }
  {  // a mask over two dims, an integer then a tensor, Ellipsis then a tensor
    const Tensor mask = randn({3, 4}) > 0.0;
    const auto mv = to_vector<bool>(mask);
    std::vector<double> want;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b)
        if (mv[static_cast<std::size_t>(a * 4 + b)])
          for (int c = 0; c < 5; ++c) want.push_back(at(a, b, c));
    CHECK(vals(x.index({mask})) == want);
    const Tensor r = x.index({0, Slice(), ix(i2)});
    REQUIRE(r.shape() == Shape{4, 3});
    CHECK(vals(r) == vals(index_select(x.select(0, 0), 1, ix(i2))));
    CHECK(vals(x.index({Ellipsis, ix(i2)})) == vals(index_select(x, 2, ix(i2))));
    CHECK(x.index({ix(i0), None, ix({1, 1})}).shape() == Shape{2, 1, 5});
  }
  CHECK(autodiff::gradcheck([&](const V& in) { return in[0].index({ix({1, 2, 1}), Slice(), ix({4, 0, 4})}); }, {leaf64({3, 4, 5})}));
  CHECK(autodiff::gradgradcheck([&](const V& in) { return in[0].index({Slice(), ix({3, 3}), ix({0, 1})}).pow(2.0); }, {leaf64({3, 4, 5})}));
}

TEST_CASE("Tensor::index_put_ with slices, integers and tensors writes this through its view") {
  const Tensor base = seq({3, 4});
  Tensor y = base.clone();
  y.index_put_({Slice(), ix({3, 0})}, vec({-1, -2}));  // the values broadcast over the rows
  CHECK(vals(y) == vals(index_put(base, {Tensor(), ix({3, 0})}, vec({-1, -2}))));
  y = base.clone();
  y.index_put_({1, Slice(1, 3)}, 7.0);
  CHECK(vals(y) == std::vector<double>{0, 1, 2, 3, 4, 7, 7, 7, 8, 9, 10, 11});
  y = base.clone();
  y.index_put_({2, ix({0, 0, 3})}, vec({1, 2, 3}), true);  // a view of row 2, accumulated
  CHECK(vals(y) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 11, 9, 10, 14});
  y = base.clone();
  y.index_put_({y > 5.0}, 0.0);
  CHECK(vals(y) == vals(base.clamp_max(5.0).masked_fill(base > 5.0, 0.0)));
  y = base.clone();
  y.index_put_({Ellipsis}, vec({1, 2, 3, 4}), true);  // no tensor: the whole view
  CHECK(vals(y) == vals(base + vec({1, 2, 3, 4})));
  // without a graph the indexed elements are written in place where the indexed dims merge (dims 0 and 1 of a
  // contiguous tensor, one dim of a transposed view), through a whole result where they do not (dims 0 and 2)
  manual_seed(78);
  const Tensor x3 = randn({3, 4, 5}, float64), v3 = randn({4, 5}, float64), w3 = randn({4, 4}, float64);
  const Tensor j0 = ix({2, 0, 2, 1}), j1 = ix({3, 3, 3, 0});
  for (bool acc : {false, true}) {
    CAPTURE(acc);
    Tensor t = x3.clone();
    t.index_put_({j0, j1}, v3, acc);
    CHECK(vals(t) == vals(index_put(x3, {j0, j1}, v3, acc)));
    t = x3.clone();
    t.index_put_({j0, Slice(), j1}, w3, acc);
    CHECK(vals(t) == vals(index_put(x3, {j0, Tensor(), j1}, w3, acc)));
    Tensor big = x3.clone();
    Tensor tv = big.transpose(0, 2);  // (5, 4, 3), written through
    const Tensor v5 = randn({5, 4, 3}, float64);
    const Tensor want = index_put(x3.transpose(0, 2), {Tensor(), j1}, v5, acc);
    tv.index_put_({Slice(), j1}, v5, acc);
    CHECK(vals(big.transpose(0, 2)) == vals(want));
  }
  Tensor t = x3.clone();
  CHECK_THROWS_WITH_AS(t.index_put_({j0}, t.narrow(0, 0, 1).expand({4, 4, 5})), Contains("[index_put_]"), Error);
  CHECK(vals(t) == vals(x3));
  // with a graph on a non-view: the gradient of index_put
  const Tensor a = base.clone().requires_grad_(), b = base.clone().requires_grad_();
  Tensor z = a * 3.0;
  z.index_put_({ix({2, 0}), ix({1, 1})}, vec({5, 6}));
  z.sum().backward();
  index_put(b * 3.0, {ix({2, 0}), ix({1, 1})}, vec({5, 6})).sum().backward();
  CHECK(vals(a.grad()) == vals(b.grad()));
  CHECK(vals(a.grad()) == std::vector<double>{3, 0, 3, 3, 3, 3, 3, 3, 3, 0, 3, 3});
  CHECK_THROWS_WITH_AS(y.index_put_({0, 0, 0}, 1.0), Contains("[index_put_] too many indices (3) for a tensor of 2 dims"), Error);
  CHECK_THROWS_WITH_AS(y.index_put_({ix({0}), ix({4})}, 1.0), Contains("[index_put_] index 4 out of range for dim 1 of size 4"), Error);
}

TEST_CASE("the index family as Tensor methods; index_add's alpha") {
  const Tensor x = seq({3, 4}), idx = ix({2, 0});
  const Tensor src = seq({2, 4}) + 1.0;
  CHECK(vals(x.index_select(0, idx)) == vals(index_select(x, 0, idx)));
  CHECK(vals(x.gather(1, ix({3, 0, 1, 1, 2, 2}, {3, 2}))) == vals(gather(x, 1, ix({3, 0, 1, 1, 2, 2}, {3, 2}))));
  CHECK(vals(x.take(ix({11, -1, 0}))) == std::vector<double>{11, 11, 0});
  CHECK(vals(x.take_along_dim(ix({1, 0, 3}, {3, 1}), 1)) == std::vector<double>{1, 4, 11});
  CHECK(vals(x.index_add(0, idx, src, 2.0)) == vals(x + index_add(zeros({3, 4}, float64), 0, idx, src * 2.0)));
  CHECK(vals(x.index_copy(0, idx, src)) == vals(index_copy(x, 0, idx, src)));
  CHECK(vals(x.index_fill(1, ix({0}), -1.0)) == vals(index_fill(x, 1, ix({0}), -1.0)));
  CHECK(vals(x.index_reduce(0, idx, src, "amax", false)) == vals(index_reduce(x, 0, idx, src, "amax", false)));
  CHECK(vals(x.scatter(0, ix({2, 0, 1, 0}, {1, 4}), src)) == vals(scatter(x, 0, ix({2, 0, 1, 0}, {1, 4}), src)));
  CHECK(vals(x.scatter(1, ix({0}, {1, 1}), 9.0)) == vals(scatter(x, 1, ix({0}, {1, 1}), 9.0)));
  CHECK(vals(x.scatter_add(0, ix({2, 0, 1, 0}, {1, 4}), src)) == vals(scatter_add(x, 0, ix({2, 0, 1, 0}, {1, 4}), src)));
  CHECK(vals(x.scatter_reduce(0, ix({2, 0, 1, 0}, {1, 4}), src, "prod")) ==
        vals(scatter_reduce(x, 0, ix({2, 0, 1, 0}, {1, 4}), src, "prod")));
  CHECK(vals(x.masked_scatter(x > 5.0, src)) == vals(masked_scatter(x, x > 5.0, src)));
  CHECK(vals(x.index_put({idx}, vec({7}), true)) == vals(index_put(x, {idx}, vec({7}), true)));
  // alpha: in place too, integers exact, a fraction refused for integers
  Tensor y = x.clone();
  y.index_add_(0, idx, src, -0.5);
  CHECK(vals(y) == vals(x - index_add(zeros({3, 4}, float64), 0, idx, src) * 0.5));
  CHECK(ivals(index_add(zeros({2}, int64), 0, ix({1, 1}), ix({3, 4}), 3)) == I{0, 21});
  CHECK_THROWS_WITH_AS(index_add(zeros({2}, int64), 0, ix({1}), ix({3}), 0.5),
                       Contains("[index_add] alpha must be an integer for a int64 tensor, got 0.5"), Error);
  CHECK(autodiff::gradcheck([&](const V& in) { return in[0].index_add(0, idx, in[1], 1.5); }, {leaf64({3, 4}), leaf64({2, 4})}));
}

// Note [index in backward]: the backward trusts the index the forward checked, and refuses one written since
TEST_CASE("an index written in place after the forward: the backward refuses it, naming the op") {
  using IndexOp = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, IndexOp>> ops = {
      {"index_select", [](const Tensor& a, const Tensor& i) { return index_select(a, 0, i); }},
      {"gather", [](const Tensor& a, const Tensor& i) { return gather(a, 0, i.unsqueeze(1).expand({2, 4})); }},
      {"scatter_add", [](const Tensor& a, const Tensor& i) { return scatter_add(a, 0, i.unsqueeze(1).expand({2, 4}), a.narrow(0, 0, 2)); }},
      {"index_reduce", [](const Tensor& a, const Tensor& i) { return index_reduce(a, 0, i, a.narrow(0, 0, 2), "amax"); }},
      {"index_put", [](const Tensor& a, const Tensor& i) { return a.index_put({i}, a.narrow(0, 0, 2)); }},
  };
  for (const auto& [name, f] : ops) {
    CAPTURE(name);
    const Tensor x = leaf64({3, 4});
    Tensor idx = ix({2, 0});
    const Tensor y = f(x, idx).sum();
    idx.fill_(1);  // in range: the values are not the forward's
    CHECK_THROWS_WITH_AS(y.backward(), Contains("was modified by an in-place operation"), Error);
    CHECK_FALSE(x.grad().defined());
    // untouched, the same graph runs
    Tensor idx2 = ix({2, 0});
    f(x, idx2).sum().backward();
    CHECK(x.grad().defined());
  }
  // the message names the op and the versions
  const Tensor x = leaf64({3, 4});
  Tensor idx = ix({2, 0});
  const Tensor y = index_select(x, 0, idx).sum();
  idx.add_(-2);
  CHECK_THROWS_WITH_AS(y.backward(), Contains("[index_select] a tensor saved for backward was modified by an in-place operation: it had version 0, now 1"), Error);
}
