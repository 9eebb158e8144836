// tests/test_views.cpp - view ops (reshape view flatten permute transpose t movedim squeeze
// unsqueeze expand broadcast_to slice select narrow diagonal real imag index) and diag_embed: storage sharing, layouts,
// numpy-style indexing, version counters, gradients and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <phasor/phasor.hpp>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using cd = std::complex<double>;

namespace {
/// Start of the storage a tensor looks into.
const char* storage_base(const Tensor& t) {
  return static_cast<const char*>(t.data_ptr()) - t.storage_offset() * static_cast<std::int64_t>(t.itemsize());
}
bool shares(const Tensor& a, const Tensor& b) { return storage_base(a) == storage_base(b); }
}  // namespace

// ---- layouts and storage sharing --------------------------------------------------------------------------
TEST_CASE("views share storage and writes through them reach the base") {
  Tensor x = seq({2, 3, 4});
  Tensor r = x.reshape({6, 4});
  CHECK(shares(r, x));
  CHECK(r.data_ptr() == x.data_ptr());
  Tensor vw = x.view({4, -1});
  CHECK(vw.shape() == Shape{4, 6});
  Tensor p = x.permute({2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.strides() == Shape{1, 12, 4});
  CHECK_FALSE(p.is_contiguous());
  Tensor s = x.slice(2, 1, 4, 2);  // [..., 1:4:2]
  CHECK(s.shape() == Shape{2, 3, 2});
  CHECK(s.strides() == Shape{12, 4, 2});
  CHECK(s.storage_offset() == 1);
  Tensor sel = x.select(1, -1);
  CHECK(sel.shape() == Shape{2, 4});
  CHECK(sel.storage_offset() == 8);
  Tensor n = x.narrow(0, 1, 1);
  CHECK(n.storage_offset() == 12);
  Tensor e = seq({3, 1}).expand({2, 3, 4});
  CHECK(e.strides() == Shape{0, 1, 0});
  for (const Tensor* t : {&r, &vw, &p, &s, &sel, &n}) CHECK(shares(*t, x));

  // writes through views are visible in the base (no graph recorded: x does not require grad)
  s.fill_(-1.0);
  CHECK(x.index({0, 0, 1}).item<double>() == -1.0);
  CHECK(x.index({1, 2, 3}).item<double>() == -1.0);
  CHECK(x.index({1, 2, 2}).item<double>() == 22.0);
  sel.select(0, 0).fill_(100.0);  // x[0, 2, :]
  CHECK(vals(x.select(0, 0).select(0, 2)) == std::vector<double>{100, 100, 100, 100});
  p.select(0, 0).select(0, 1).copy_(from_vector(std::vector<double>{7, 8, 9}));  // x[1, :, 0]
  CHECK(vals(x.index({1, Slice(), 0})) == std::vector<double>{7, 8, 9});
  x.index({Slice(), Slice(), 0}).mul_(2.0);
  CHECK(r.index({3, 0}).item<double>() == 14.0);  // r[3] = x[0 .. ][...]: x[1, 0, 0] = 7 * 2
  // real/imag of complex tensors are views
  Tensor z = from_vector(std::vector<cd>{{1, 2}, {3, 4}});
  Tensor zi = z.imag();
  CHECK(shares(zi, z));
  CHECK(zi.dtype() == float64);
  CHECK(zi.strides() == Shape{2});
  zi.fill_(0.5);
  z.real().mul_(10.0);
  CHECK(to_vector<cd>(z) == std::vector<cd>{{10, 0.5}, {30, 0.5}});
  Tensor re = seq({2});
  CHECK(re.real().is_same(re));
}

TEST_CASE("reshape copies only when a view is impossible") {
  Tensor x = seq({3, 4});
  Tensor xt = x.t();  // (4, 3), strides (1, 4)
  Tensor f = xt.reshape({12});
  CHECK_FALSE(shares(f, x));
  CHECK(vals(f) == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  f.fill_(0.0);  // the copy is independent
  CHECK(vals(x)[1] == 1.0);
  // some non-contiguous layouts can still be viewed
  Tensor sl = seq({4, 6}).slice(0, 0, 4, 2);  // rows 0, 2: (2, 6) strides (12, 1)
  Tensor sv = sl.reshape({2, 2, 3});
  CHECK(shares(sv, sl));
  CHECK(sv.strides() == Shape{12, 3, 1});
  Tensor tt = xt.reshape({4, 3, 1});
  CHECK(shares(tt, x));
  CHECK(x.flatten().shape() == Shape{12});
  CHECK(seq({2, 3, 4}).flatten(1).shape() == Shape{2, 12});
  CHECK(seq({2, 3, 4}).flatten(0, 1).shape() == Shape{6, 4});
  CHECK(scalar_tensor(1.0).flatten().shape() == Shape{1});
  CHECK(seq({2, 0}).reshape({0, 5}).shape() == Shape{0, 5});
  // contiguous() copies non-contiguous tensors only
  CHECK(x.contiguous().is_same(x));
  CHECK_FALSE(shares(xt.contiguous(), x));
  CHECK(xt.contiguous().is_contiguous());
}

TEST_CASE("bijective views: permute transpose t movedim squeeze unsqueeze") {
  Tensor x = seq({2, 3, 4});
  CHECK(x.transpose(0, 2).shape() == Shape{4, 3, 2});
  CHECK(x.transpose(-1, -2).strides() == Shape{12, 1, 4});
  CHECK(x.transpose(1, 1).shape() == x.shape());
  CHECK(seq({2, 3}).t().shape() == Shape{3, 2});
  CHECK(seq({3}).t().shape() == Shape{3});
  CHECK(x.movedim(0, -1).shape() == Shape{3, 4, 2});
  CHECK(x.movedim({0, 1}, {2, 0}).shape() == Shape{3, 4, 2});
  CHECK(movedim(x, {2}, {0}).strides() == Shape{1, 12, 4});
  Tensor y = seq({1, 3, 1, 2});
  CHECK(y.squeeze().shape() == Shape{3, 2});
  CHECK(y.squeeze(2).shape() == Shape{1, 3, 2});
  CHECK(y.squeeze(1).shape() == y.shape());  // size 3: unchanged
  CHECK(squeeze(y, -4).shape() == Shape{3, 1, 2});
  CHECK(y.unsqueeze(0).shape() == Shape{1, 1, 3, 1, 2});
  CHECK(y.unsqueeze(-1).shape() == Shape{1, 3, 1, 2, 1});
  CHECK(scalar_tensor(2.0).unsqueeze(0).shape() == Shape{1});
  // values of a permuted tensor
  Tensor p = x.permute({1, 2, 0});
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t k = 0; k < 2; ++k) CHECK(p.index({i, j, k}).item<double>() == static_cast<double>(k * 12 + i * 4 + j));
  CHECK(broadcast_to(seq({3}), {2, 3}).shape() == Shape{2, 3});
  CHECK(vals(seq({3}).expand({2, -1})) == std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(vals(seq({2, 1}).expand({2, 3})) == std::vector<double>{0, 0, 0, 1, 1, 1});
  CHECK(seq({2, 1}).expand({0, 2, 5}).numel() == 0);
}

TEST_CASE("slice, select and narrow follow Python bounds") {
  Tensor x = seq({10});
  CHECK(vals(x.slice(0, 2, 8, 3)) == std::vector<double>{2, 5});
  CHECK(vals(x.slice(0, -3)) == std::vector<double>{7, 8, 9});
  CHECK(vals(x.slice(0, std::nullopt, -7)) == std::vector<double>{0, 1, 2});
  CHECK(vals(x.slice(0, -100, 100, 4)) == std::vector<double>{0, 4, 8});
  CHECK(x.slice(0, 8, 2).numel() == 0);
  CHECK(x.slice(0, 20, 30).numel() == 0);
  CHECK(x.slice(0).is_same(x));
  CHECK(x.select(0, -1).item<double>() == 9.0);
  CHECK(x.select(0, -1).dim() == 0);
  CHECK(vals(x.narrow(0, -4, 2)) == std::vector<double>{6, 7});
  CHECK(x.narrow(0, 10, 0).numel() == 0);
}

// ---- numpy-style indexing ----------------------------------------------------------------------------------------
TEST_CASE("diagonal is a view at every offset and dim pair; diag_embed is its adjoint") {
  const Tensor x = seq({3, 4, 5});
  // naive reference: out[..., k] = x[i, j] on the diagonal, the remaining dims in order
  for (std::int64_t d1 = -3; d1 < 3; ++d1)
    for (std::int64_t d2 = -3; d2 < 3; ++d2) {
      const std::int64_t w1 = (d1 + 3) % 3, w2 = (d2 + 3) % 3;
      if (w1 == w2) continue;
      for (std::int64_t off = -6; off <= 6; ++off) {
        CAPTURE(d1);
        CAPTURE(d2);
        CAPTURE(off);
        const Tensor v = x.diagonal(off, d1, d2);
        const std::int64_t other = 3 - w1 - w2, n1 = x.size(w1), n2 = x.size(w2);
        const std::int64_t len = std::max<std::int64_t>(0, off >= 0 ? std::min(n1, n2 - off) : std::min(n1 + off, n2));
        REQUIRE(v.shape() == Shape{x.size(other), len});
        if (len > 0) CHECK(shares(v, x));
        const auto got = vals(v);
        for (std::int64_t o = 0; o < x.size(other); ++o)
          for (std::int64_t k = 0; k < len; ++k) {
            Shape idx(3);
            idx[static_cast<std::size_t>(other)] = o;
            idx[static_cast<std::size_t>(w1)] = off >= 0 ? k : k - off;
            idx[static_cast<std::size_t>(w2)] = off >= 0 ? k + off : k;
            CHECK(got[static_cast<std::size_t>(o * len + k)] == static_cast<double>((idx[0] * 4 + idx[1]) * 5 + idx[2]));
          }
        // diag_embed puts it back: zeros elsewhere, the diagonal equal to its input
        if (len > 0) {
          const Tensor e = diag_embed(v, off, d1, d2);
          CHECK(vals(e.diagonal(off, d1, d2)) == got);
          CHECK(e.abs().sum().item<double>() == v.abs().sum().item<double>());
        }
      }
    }
  // writes through the view reach the base
  Tensor m = zeros({3, 3});
  m.diagonal().fill_(2.0);
  m.diagonal(1).fill_(1.0);
  CHECK(vals(m) == std::vector<double>{2, 1, 0, 0, 2, 1, 0, 0, 2});
  // diag_embed: batches of (n + |offset|)^2 matrices at the chosen dims
  const Tensor d = seq({2, 3}) + 1.0;
  const Tensor e = diag_embed(d);
  CHECK(e.shape() == Shape{2, 3, 3});
  CHECK(vals(e.select(0, 1)) == std::vector<double>{4, 0, 0, 0, 5, 0, 0, 0, 6});
  const Tensor e2 = diag_embed(d, 1, 0, 2);
  CHECK(e2.shape() == Shape{4, 2, 4});
  CHECK(vals(e2.select(1, 0).diagonal(1)) == std::vector<double>{1, 2, 3});
  CHECK(vals(e2).size() == 32);
  CHECK(e2.sum().item<double>() == 21.0);
  CHECK(diag_embed(from_vector(std::vector<std::int64_t>{1, 2})).dtype() == int64);
  // errors
  CHECK_THROWS_WITH_AS(seq({4}).diagonal(), Contains("[diagonal] expected a tensor of at least 2 dims, got shape (4,)"), Error);
  CHECK_THROWS_WITH_AS(x.diagonal(0, 1, -2), Contains("[diagonal] dim1 and dim2 must differ, got 1 and -2"), Error);
  CHECK_THROWS_WITH_AS(x.diagonal(0, 0, 3), Contains("[diagonal]"), Error);
  CHECK_THROWS_WITH_AS(diag_embed(scalar_tensor(1.0)), Contains("[diag_embed] expected a tensor of at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(diag_embed(d, 0, 1, -2), Contains("[diag_embed] dim1 and dim2 must differ"), Error);
}

TEST_CASE("index with integers, slices, None and Ellipsis") {
  Tensor x = seq({6, 4, 5, 3});
  Tensor r = x.index({Slice(1, 5), 2, None, Ellipsis});  // x[1:5, 2, None, ...]
  REQUIRE(r.shape() == Shape{4, 1, 5, 3});
  CHECK(shares(r, x));
  for (std::int64_t a = 0; a < 4; ++a)
    for (std::int64_t c = 0; c < 5; ++c)
      for (std::int64_t d = 0; d < 3; ++d)
        CHECK(r.index({a, 0, c, d}).item<double>() == static_cast<double>(((a + 1) * 4 + 2) * 15 + c * 3 + d));
  CHECK(x.index({Ellipsis, 1}).shape() == Shape{6, 4, 5});
  CHECK(x.index({Ellipsis, 1}).index({2, 3, 4}).item<double>() == x.index({2, 3, 4, 1}).item<double>());
  CHECK(x.index({0, Ellipsis, 2}).shape() == Shape{4, 5});
  CHECK(x.index({None, Ellipsis, None}).shape() == Shape{1, 6, 4, 5, 3, 1});
  CHECK(x.index({Slice(std::nullopt, std::nullopt, 2), Slice(-2)}).shape() == Shape{3, 2, 5, 3});
  CHECK(x.index({Ellipsis}).shape() == x.shape());
  CHECK(x.index({}).shape() == x.shape());
  CHECK(x.index({-1, -1, -1, -1}).item<double>() == 359.0);
  CHECK(x.index({1, 2, 3, 2}).dim() == 0);
  CHECK(x.index({1, None, 2}).shape() == Shape{1, 5, 3});
}

TEST_CASE("index with int64 and bool tensors") {
  Tensor x = seq({4, 3});
  Tensor rows = x.index({from_vector(std::vector<std::int64_t>{3, 0, -1, 0})});
  CHECK(rows.shape() == Shape{4, 3});
  CHECK(vals(rows) == std::vector<double>{9, 10, 11, 0, 1, 2, 9, 10, 11, 0, 1, 2});
  CHECK_FALSE(shares(rows, x));  // advanced indexing copies
  Tensor cols = x.index({Slice(), from_vector(std::vector<std::int64_t>{2, 1})});
  CHECK(vals(cols) == std::vector<double>{2, 1, 5, 4, 8, 7, 11, 10});
  Tensor m = from_vector(std::vector<bool>{true, false, false, true});
  CHECK(vals(x.index({m})) == std::vector<double>{0, 1, 2, 9, 10, 11});
  CHECK(vals(x.index({Ellipsis, from_vector(std::vector<bool>{false, true, true})})) ==
        std::vector<double>{1, 2, 4, 5, 7, 8, 10, 11});
  CHECK(x.index({from_vector(std::vector<bool>{false, false, false, false})}).shape() == Shape{0, 3});
  CHECK(x.index({1, scalar_tensor(std::int64_t{2})}).item<double>() == 5.0);
  CHECK(vals(x.index({Slice(1, 3), from_vector(std::vector<std::int64_t>{0})})) == std::vector<double>{3, 6});
  // 0-d masks (numpy's and PyTorch's x[True], x[False]): a new dim of size 1, kept or emptied
  CHECK(x.index({true}).shape() == Shape{1, 4, 3});
  CHECK(vals(x.index({true})) == vals(x));
  CHECK(x.index({false}).shape() == Shape{0, 4, 3});
  CHECK(x.index({scalar_tensor(true)}).shape() == Shape{1, 4, 3});
  CHECK(x.index({Ellipsis, true}).shape() == Shape{4, 3, 1});
  CHECK(x.index({Slice(), None, true}).shape() == Shape{4, 1, 1, 3});
  const Tensor picks = from_vector(std::vector<std::int64_t>{0, 2});
  CHECK(x.index({picks, true}).shape() == Shape{2, 3});  // the mask's one position broadcasts with the rows
  CHECK(vals(x.index({picks, true})) == vals(x.index({picks})));
  Tensor y = x.clone();
  y.index_put_({false}, -1.0);
  CHECK(vals(y) == vals(x));
  y.index_put_({true}, -1.0);
  CHECK(vals(y) == std::vector<double>(12, -1.0));
  // with a graph: the gradient of the kept elements
  CHECK(autodiff::gradcheck([](const V& in) { return in[0].index({Slice(1, 3), true}); }, {leaf64({4, 3})}));
}

TEST_CASE("index errors") {
  Tensor x = seq({4, 3});
  CHECK_THROWS_WITH_AS(x.index({0, 0, 0}), Contains("[index] too many indices (3) for a tensor of 2 dims"), Error);
  CHECK_THROWS_WITH_AS(x.index({4}), Contains("index 4 out of range for dim 0 of size 4"), Error);
  CHECK_THROWS_WITH_AS(x.index({0, -4}), Contains("index -4 out of range"), Error);
  CHECK_THROWS_WITH_AS(x.index({Ellipsis, Ellipsis}), Contains("single ellipsis"), Error);
  CHECK_THROWS_WITH_AS(x.index({Slice(0, 2, 0)}), Contains("step must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(x.index({Slice(0, 2, -1)}), Contains("step must be positive, got -1"), Error);
  CHECK_THROWS_WITH_AS(x.index({seq({2})}), Contains("[index] index 0 must be an int64 or a bool tensor of at least 1 dim, got float64"), Error);
  CHECK_THROWS_WITH_AS(x.index({from_vector(std::vector<bool>{true, false})}),
                       Contains("[index] bool index 0 of shape (2,) does not match the input of shape (4, 3) at dim 0"), Error);
  CHECK_THROWS_WITH_AS(x.index({from_vector(std::vector<std::int64_t>{7})}), Contains("index 7 out of range"), Error);
  CHECK_THROWS_WITH_AS(x.index({zeros({2}, int64), from_vector(std::vector<std::int64_t>{0, 3})}), Contains("[index] index 3 out of range for dim 1 of size 3"), Error);
  CHECK_THROWS_WITH_AS(x.index({zeros({2}, int64), zeros({3}, int64)}), Contains("[index] shapes (2,) and (3,) cannot be broadcast"), Error);
  // a 0-d mask is an index over a new dim: false (size 0) does not broadcast with two positions
  CHECK_THROWS_WITH_AS(x.index({from_vector(std::vector<std::int64_t>{0, 1}), false}), Contains("[index] shapes (2,) and (0,) cannot be broadcast"), Error);
  CHECK_THROWS_WITH_AS(scalar_tensor(1.0).index({0}), Contains("too many indices"), Error);
}

TEST_CASE("view errors") {
  Tensor x = seq({3, 4});
  CHECK_THROWS_WITH_AS(x.t().view({12}), Contains("cannot be viewed as (12,); use reshape()"), Error);
  CHECK_THROWS_WITH_AS(x.t().view({12}), Contains("strides (1, 4)"), Error);
  CHECK_THROWS_WITH_AS(x.reshape({5, 2}), Contains("[reshape] shape (5, 2) is invalid for input of size 12"), Error);
  CHECK_THROWS_WITH_AS(x.reshape({-1, -1}), Contains("only one dim can be -1"), Error);
  CHECK_THROWS_WITH_AS(x.reshape({-1, 5}), Contains("invalid for input of size 12"), Error);
  CHECK_THROWS_WITH_AS(x.view({-2, 6}), Contains("invalid size -2"), Error);
  CHECK_THROWS_WITH_AS(x.permute({0}), Contains("[permute] got 1 dims"), Error);
  CHECK_THROWS_WITH_AS(x.permute({0, 0}), Contains("appears more than once"), Error);
  CHECK_THROWS_WITH_AS(x.transpose(0, 2), Contains("[transpose] dim 2 out of range for a tensor of 2 dims"), Error);
  CHECK_THROWS_WITH_AS(seq({2, 2, 2}).t(), Contains("[t] expected a tensor of at most 2 dims"), Error);
  CHECK_THROWS_WITH_AS(x.movedim({0, 1}, {0}), Contains("differ in length"), Error);
  CHECK_THROWS_WITH_AS(x.squeeze(2), Contains("[squeeze] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(x.unsqueeze(3), Contains("[unsqueeze] dim 3 out of range"), Error);
  CHECK_THROWS_WITH_AS(x.unsqueeze(-4), Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(x.expand({3, 5}), Contains("cannot expand shape (3, 4) to (3, 5)"), Error);
  CHECK_THROWS_WITH_AS(x.expand({4}), Contains("fewer dims"), Error);
  CHECK_THROWS_WITH_AS(x.expand({-1, 3, 4}), Contains("-1 is not allowed"), Error);
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 2, 0), Contains("[slice] step must be positive"), Error);
  CHECK_THROWS_WITH_AS(x.slice(2), Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(x.select(1, 4), Contains("[select] index 4 out of range for dim 1 of size 4"), Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 2, 3), Contains("[narrow] start 2 and length 3 exceed dim 1 of size 4"), Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 0, -1), Contains("[narrow]"), Error);
  CHECK_THROWS_WITH_AS(x.flatten(1, 0), Contains("[flatten] start_dim 1 comes after end_dim 0"), Error);
  CHECK_THROWS_WITH_AS(x.imag(), Contains("[imag] expected a complex tensor, got float64"), Error);
  CHECK_THROWS_WITH_AS(x.size(2), Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(scalar_tensor(1.0).select(0, 0), Contains("0-d"), Error);
  // a failed view leaves the input unchanged
  CHECK(x.shape() == Shape{3, 4});
  CHECK(vals(x) == vals(seq({3, 4})));
}

// ---- version counter and autograd ----------------------------------------------------------------------------------
TEST_CASE("the version counter is shared by views") {
  Tensor x = seq({2, 3});
  Tensor v = x.select(0, 1);
  Tensor r = x.reshape({6});
  const auto v0 = x.version();
  CHECK(v.version() == v0);
  v.fill_(1.0);
  CHECK(x.version() == v0 + 1);
  CHECK(r.version() == v0 + 1);
  x.add_(1.0);
  CHECK(v.version() == v0 + 2);
  Tensor c = x.clone();
  CHECK(c.version() == 0);
  c.mul_(2.0);
  CHECK(x.version() == v0 + 2);
  // a saved tensor modified through a view invalidates the backward
  Tensor a = seq({3}).requires_grad_();
  Tensor b;
  {
    NoGradGuard ng;
    b = seq({3}) + 1.0;
  }
  Tensor bv = b.slice(0, 0, 2);
  Tensor y = (a * b).sum();
  bv.fill_(0.0);
  CHECK_THROWS_WITH_AS(y.backward(), Contains("modified by an in-place operation"), Error);
  // in-place on a view of a tensor in the graph records (Note [views and in-place history]); on a view of a
  // leaf that requires grad it is refused
  Tensor leaf = seq({3}).requires_grad_();
  Tensor w = leaf * 2.0;
  Tensor wv = w.slice(0, 0, 2);
  wv.mul_(3.0);
  w.sum().backward();
  CHECK(vals(leaf.grad()) == std::vector<double>{6, 6, 2});
  CHECK_THROWS_WITH_AS(leaf.slice(0, 1, 2).mul_(3.0), Contains("[mul_] a view of a leaf tensor that requires grad"), Error);
}

TEST_CASE("view gradients (float64, complex128)") {
  manual_seed(20);
  Tensor x = randn({2, 3, 4}, float64).requires_grad_();
  Tensor z = randn({2, 3, 4}, complex128).requires_grad_();
  using Fn = std::function<Tensor(const V&)>;
  const std::vector<std::pair<const char*, Fn>> fns = {
      {"reshape", [](const V& in) { return in[0].reshape({4, 6}); }},
      {"reshape copy", [](const V& in) { return in[0].transpose(0, 2).reshape({-1}); }},
      {"view", [](const V& in) { return in[0].view({6, 4}); }},
      {"flatten", [](const V& in) { return in[0].flatten(1); }},
      {"permute", [](const V& in) { return in[0].permute({2, 0, 1}); }},
      {"transpose", [](const V& in) { return in[0].transpose(0, 2); }},
      {"t", [](const V& in) { return in[0].select(0, 1).t(); }},
      {"movedim", [](const V& in) { return in[0].movedim(0, 2); }},
      {"squeeze", [](const V& in) { return in[0].narrow(1, 1, 1).squeeze(); }},
      {"squeeze dim", [](const V& in) { return in[0].narrow(1, 1, 1).squeeze(1); }},
      {"unsqueeze", [](const V& in) { return in[0].unsqueeze(1); }},
      {"expand", [](const V& in) { return in[0].unsqueeze(0).expand({3, 2, 3, 4}); }},
      {"broadcast_to", [](const V& in) { return broadcast_to(in[0].narrow(2, 0, 1), {2, 3, 5}); }},
      {"slice", [](const V& in) { return in[0].slice(2, 1, std::nullopt, 2); }},
      {"select", [](const V& in) { return in[0].select(1, -1); }},
      {"narrow", [](const V& in) { return in[0].narrow(0, 1, 1); }},
      {"diagonal", [](const V& in) { return in[0].diagonal(1, 2, 1); }},
      {"diagonal below", [](const V& in) { return diagonal(in[0], -1, -2, -1); }},
      {"diag_embed", [](const V& in) { return diag_embed(in[0], -1, 0, 2); }},
      {"index", [](const V& in) { return in[0].index({Slice(1), None, Ellipsis, 2}); }},
      {"index int64", [](const V& in) { return in[0].index({Slice(), from_vector(std::vector<std::int64_t>{2, 0, 2})}); }},
      {"index bool", [](const V& in) { return in[0].index({from_vector(std::vector<bool>{false, true})}); }},
      {"view of view", [](const V& in) { return in[0].select(0, 1).t().slice(0, 1).select(1, 2).unsqueeze(0) * in[0].select(0, 0).select(0, 0).narrow(0, 1, 3); }},
  };
  for (const auto& [name, fn] : fns) {
    CAPTURE(name);
    CHECK(autodiff::gradcheck(fn, {x}));
    CHECK(autodiff::gradcheck(fn, {z}));
  }
  // real / imag views
  CHECK(autodiff::gradcheck([](const V& in) { return in[0].real() * in[0].imag(); }, {z}));
  CHECK(autodiff::gradcheck([](const V& in) { return in[0].imag().select(0, 1); }, {z}));
  CHECK(autodiff::gradcheck([](const V& in) { return in[0].real() * in[0]; }, {x}));  // real() of a real tensor is the tensor itself
  // second order through view chains
  CHECK(autodiff::gradgradcheck([](const V& in) { return in[0].permute({1, 2, 0}).slice(0, 1) * in[0].narrow(1, 1, 2).permute({1, 2, 0}); }, {x}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return in[0].index({0, Slice(0, 2)}).reshape({8}) * in[0].select(0, 1).flatten().narrow(0, 0, 8); }, {x}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return in[0].index({Slice(), 1}).t() * in[0].index({Slice(), 2}).t().conj(); }, {z}));
}
