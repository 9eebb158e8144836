// tests/test_shape_ops.cpp - cat, stack, split, chunk, pad, flip, roll, gather, scatter_add,
// index_select, index_add, tril, triu, diag, trace, diff: values against naive loops or PyTorch outputs, gradients
// against finite differences, and errors.
#include <doctest/doctest.h>

#include <complex>
#include <phasor/phasor.hpp>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using cd = std::complex<double>;

namespace {

Tensor leafc(const Shape& s) { return randn(s, complex128).requires_grad_(); }
/// Row-major linear offset of `idx` in `shape`.
std::int64_t lin(const Shape& shape, const Shape& idx) {
  std::int64_t o = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) o = o * shape[k] + idx[k];
  return o;
}
/// Multi-index of linear offset `o` in `shape`.
Shape unlin(const Shape& shape, std::int64_t o) {
  Shape idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    idx[k] = o % shape[k];
    o /= shape[k];
  }
  return idx;
}
std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

}  // namespace

// ---- cat / stack --------------------------------------------------------------------------------------------
TEST_CASE("cat joins along a dim, promotes dtypes and skips legacy empties") {
  Tensor a = seq({2, 3}), b = seq({2, 1}) + 100.0;
  Tensor c = cat({a, b}, 1);
  CHECK(c.shape() == Shape{2, 4});
  CHECK(vals(c) == std::vector<double>{0, 1, 2, 100, 3, 4, 5, 101});
  CHECK(vals(cat({a, b}, -1)) == vals(c));
  Tensor r = cat({a, seq({1, 3}) + 10.0}, 0);
  CHECK(r.shape() == Shape{3, 3});
  CHECK(vals(r) == std::vector<double>{0, 1, 2, 3, 4, 5, 10, 11, 12});
  // non-contiguous input
  Tensor at = seq({3, 2}).t();
  CHECK(vals(cat({at, at}, 0)) == std::vector<double>{0, 2, 4, 1, 3, 5, 0, 2, 4, 1, 3, 5});
  // promotion across inputs
  CHECK(cat({seq({2}, int64), seq({2}, float32)}).dtype() == float32);
  CHECK(cat({seq({2}, float32), seq({2}, complex128)}).dtype() == complex128);
  Tensor m = cat({seq({2}, int64), full({1}, 2.5, float64)});
  CHECK(m.dtype() == float64);
  CHECK(vals(m) == std::vector<double>{0, 1, 2.5});
  // legacy (0,) tensors are skipped whatever their shape, but still take part in promotion
  Tensor e = cat({empty({0}, float64), seq({2, 3}, float32), empty({0}, float32)}, 1);
  CHECK(e.shape() == Shape{2, 3});
  CHECK(e.dtype() == float64);
  CHECK(cat({empty({0}), empty({0})}).shape() == Shape{0});
  // zero-size pieces along dim
  CHECK(vals(cat({seq({2, 0}), seq({2, 2})}, 1)) == std::vector<double>{0, 1, 2, 3});
  // a single input is copied
  Tensor s = cat({a});
  CHECK(vals(s) == vals(a));
  CHECK(s.data_ptr() != a.data_ptr());
}

TEST_CASE("cat errors name the shapes and dim") {
  Tensor a = seq({2, 3}), b = seq({2, 4});
  CHECK_THROWS_WITH_AS(cat({a, b}, 0), Contains("(2, 3), (2, 4)"), Error);
  CHECK_THROWS_WITH_AS(cat({a, b}, 0), Contains("dim 0"), Error);
  CHECK_THROWS_WITH_AS(cat({a, seq({2, 3, 1})}, 0), Contains("same number of dims"), Error);
  CHECK_THROWS_WITH_AS(cat({a, seq({3})}, 0), Contains("(3,)"), Error);
  CHECK_THROWS_WITH_AS(cat({scalar_tensor(1.0), scalar_tensor(2.0)}), Contains("zero-dimensional"), Error);
  CHECK_THROWS_WITH_AS(cat({}), Contains("[cat] expected a non-empty list"), Error);
  CHECK_THROWS_WITH_AS(cat({a, a}, 2), Contains("out of range"), Error);
  CHECK_THROWS_AS(cat({a, Tensor()}), Error);
}

TEST_CASE("cat and stack gradients") {
  manual_seed(1);
  Tensor a = leaf64({2, 3}), b = leaf64({2, 2}), c = leaf64({2, 1});
  CHECK(autodiff::gradcheck([](const V& in) { return cat({in[0], in[1], in[2]}, 1) * cat({in[2], in[1], in[0]}, 1); },
                            {a, b, c}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return cat({in[0], in[1]}, -1).sin(); }, {a, b}));
  Tensor za = leafc({3, 2}), zb = leafc({1, 2});
  CHECK(autodiff::gradcheck([](const V& in) { return cat({in[0], in[1]}, 0) * cat({in[1], in[0]}, 0).conj(); }, {za, zb}));
  // mixed dtypes: the float32 input's gradient comes back as float32
  Tensor f = ones({2}, float32).requires_grad_(), g = ones({3}, float64).requires_grad_();
  (cat({f, g}) * seq({5})).sum().backward();
  CHECK(f.grad().dtype() == float32);
  CHECK(vals(f.grad()) == std::vector<double>{0, 1});
  CHECK(vals(g.grad()) == std::vector<double>{2, 3, 4});
  // legacy empty input gets an empty gradient
  Tensor e = empty({0}, float64).requires_grad_(), h = ones({2, 2}, float64).requires_grad_();
  cat({e, h}, 1).sum().backward();
  CHECK(vals(h.grad()) == std::vector<double>{1, 1, 1, 1});
  CHECK(e.grad().shape() == Shape{0});
  Tensor e2 = cat({e, e});
  CHECK(e2.shape() == Shape{0});
  CHECK(e2.requires_grad());
  // stack
  Tensor p = leaf64({2, 3}), q = leaf64({2, 3});
  CHECK(autodiff::gradcheck([](const V& in) { return stack({in[0], in[1], in[0]}, 1); }, {p, q}));
  Tensor zp = leafc({2}), zq = leafc({2});
  CHECK(autodiff::gradcheck([](const V& in) { return stack({in[0], in[1]}, -1) * stack({in[1], in[0]}, -1); }, {zp, zq}));
}

TEST_CASE("stack inserts a new dim") {
  Tensor a = seq({2, 3}), b = seq({2, 3}) + 10.0;
  Tensor s0 = stack({a, b});
  CHECK(s0.shape() == Shape{2, 2, 3});
  CHECK(vals(s0) == std::vector<double>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  Tensor s2 = stack({a, b}, -1);
  CHECK(s2.shape() == Shape{2, 3, 2});
  CHECK(vals(s2) == std::vector<double>{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15});
  Tensor s1 = stack({a, b}, 1);
  CHECK(s1.shape() == Shape{2, 2, 3});
  CHECK(vals(s1) == std::vector<double>{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15});
  CHECK(stack({scalar_tensor(1.0), scalar_tensor(2.0)}).shape() == Shape{2});
  CHECK_THROWS_WITH_AS(stack({a, seq({2, 4})}), Contains("(2, 3) at entry 0 and (2, 4) at entry 1"), Error);
  CHECK_THROWS_WITH_AS(stack({a, b}, 3), Contains("out of range"), Error);
  CHECK_THROWS_AS(stack({}), Error);
}

// ---- split / chunk ------------------------------------------------------------------------------------------
TEST_CASE("split and chunk return views") {
  Tensor x = seq({5, 2});
  auto parts = split(x, 2);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].shape() == Shape{2, 2});
  CHECK(parts[2].shape() == Shape{1, 2});
  CHECK(vals(parts[2]) == std::vector<double>{8, 9});
  parts[1].fill_(-1.0);  // writes through to x
  CHECK(vals(x) == std::vector<double>{0, 1, 2, 3, -1, -1, -1, -1, 8, 9});
  auto cols = split(x, Shape{1, 1}, 1);
  REQUIRE(cols.size() == 2);
  CHECK(vals(cols[1]) == std::vector<double>{1, 3, -1, -1, 9});
  CHECK(cols[1].data_ptr() == static_cast<char*>(x.data_ptr()) + sizeof(double));
  auto z = split(x, Shape{0, 5, 0});
  CHECK(z[0].shape() == Shape{0, 2});
  CHECK(z[1].shape() == Shape{5, 2});
  // chunk sizes follow ceil(n / chunks)
  auto c = chunk(seq({5}), 3);
  REQUIRE(c.size() == 3);
  CHECK(vals(c[0]) == std::vector<double>{0, 1});
  CHECK(vals(c[2]) == std::vector<double>{4});
  CHECK(chunk(seq({6}), 4).size() == 3);
  CHECK(chunk(seq({2}), 5).size() == 2);
  CHECK(chunk(seq({0}), 3).size() == 3);
  CHECK(split(seq({0}), 0).size() == 1);
  CHECK(split(seq({4}), 10).size() == 1);
}

TEST_CASE("split and chunk errors and gradients") {
  Tensor x = seq({3});
  CHECK_THROWS_WITH_AS(split(x, Shape{1, 1}), Contains("sum to 2"), Error);
  CHECK_THROWS_WITH_AS(split(x, Shape{1, 1}), Contains("size 3"), Error);
  CHECK_THROWS_WITH_AS(split(x, Shape{4, -1}), Contains("non-negative"), Error);
  CHECK_THROWS_WITH_AS(split(x, 0), Contains("split_size can only be 0"), Error);
  CHECK_THROWS_WITH_AS(split(x, -1), Contains("non-negative"), Error);
  CHECK_THROWS_WITH_AS(chunk(x, 0), Contains("[chunk] chunks must be positive"), Error);
  CHECK_THROWS_WITH_AS(split(x, 1, 1), Contains("out of range"), Error);
  CHECK_THROWS_AS(split(scalar_tensor(1.0), 1), Error);
  manual_seed(2);
  Tensor a = leaf64({5, 3});
  CHECK(autodiff::gradcheck(
      [](const V& in) {
        auto p = split(in[0], 2, 0);
        return cat({p[2] * p[0].narrow(0, 0, 1), p[1].sin()}, 0);
      },
      {a}));
  Tensor z = leafc({4, 3});
  CHECK(autodiff::gradcheck(
      [](const V& in) {
        auto p = chunk(in[0], 3, 1);
        return p[0] * p[2] + p[1].conj();
      },
      {z}));
}

TEST_CASE("split, chunk, unbind and tensor_split are one op each; their gradient joins the pieces' gradients") {
  // Note [split gradients]: one node for all pieces, whose backward is one join (not a scatter per piece)
  Tensor x = seq({4, 5}).requires_grad_();
  const auto cols = unbind(x, 1);
  REQUIRE(cols.size() == 5);
  for (const auto& c : cols) CHECK(c.grad_fn() == cols[0].grad_fn());
  CHECK(cols[0].grad_fn()->name() == "unbindBackward");
  CHECK(split(x, 2)[1].grad_fn()->name() == "splitBackward");
  const auto halves = chunk(x, 2, 1);
  CHECK(halves[0].grad_fn() == halves[1].grad_fn());
  CHECK(tensor_split(x, 3, 1)[2].grad_fn()->name() == "tensor_splitBackward");
  // pieces that get no gradient count as zeros: d/dx of 2 col0 + 3 col3
  (cols[0] * 2.0 + cols[3] * 3.0).sum().backward();
  for (std::size_t r = 0; r < 4; ++r)
    CHECK(vals(x.grad().select(0, static_cast<std::int64_t>(r))) == std::vector<double>{2, 0, 0, 3, 0});
  // one op's backward in the profile, however many pieces
  Tensor y = randn({300, 2}, float64).requires_grad_();
  profiler::Profiler prof;
  prof.start();
  Tensor acc = full({2}, 0.0, float64);
  const auto rows = unbind(y, 0);
  for (std::size_t i = 0; i < rows.size(); i += 3) acc = acc + rows[i];
  acc.sum().backward();
  const profiler::Profile profile = prof.stop();
  std::int64_t scatters = 0, joins = 0;
  for (const auto& r : profile.records()) scatters += r.name == "view_scatter", joins += r.name == "cat";
  CHECK(scatters == 0);
  CHECK(joins == 1);
  CHECK(vals(y.grad().select(1, 0).narrow(0, 0, 4)) == std::vector<double>{1, 0, 0, 1});
  // values and higher derivatives through partly used pieces
  manual_seed(3);
  CHECK(autodiff::gradcheck([](const V& in) {
    const auto p = unbind(in[0], 1);
    return p[0] * p[2].exp();
  }, {leaf64({3, 4})}));
  CHECK(autodiff::gradgradcheck([](const V& in) {
    const auto p = split(in[0], Shape{1, 2, 2}, 0);
    return p[0] * p[2].sum({0}, true);
  }, {leaf64({5, 2})}));
  CHECK(autodiff::gradcheck([](const V& in) { return tensor_split(in[0], Shape{-2, 1}, 0)[2].square(); }, {leaf64({5})}));
}

// ---- pad ------------------------------------------------------------------------------------------------------
TEST_CASE("pad matches torch.nn.functional.pad") {
  Tensor x = seq({1, 1, 3, 4});
  // values below were produced by torch.nn.functional.pad(torch.arange(12.).reshape(1,1,3,4), (2,1,1,2), mode)
  Tensor r = pad(x, {2, 1, 1, 2}, PadMode::reflect);
  CHECK(r.shape() == Shape{1, 1, 6, 7});
  CHECK(ivals(r) == std::vector<std::int64_t>{6,  5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6,
                                              10, 9, 8, 9, 10, 11, 10, 6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2});
  CHECK(ivals(pad(x, {2, 1, 1, 2}, PadMode::replicate)) ==
        std::vector<std::int64_t>{0, 0, 0, 1, 2, 3,  3,  0, 0, 0, 1, 2, 3,  3,  4, 4, 4, 5, 6,  7,  7,
                                  8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11});
  CHECK(ivals(pad(x, {2, 1, 1, 2}, PadMode::circular)) ==
        std::vector<std::int64_t>{10, 11, 8, 9, 10, 11, 8, 2, 3, 0, 1, 2, 3, 0, 6, 7, 4, 5, 6, 7, 4,
                                  10, 11, 8, 9, 10, 11, 8, 2, 3, 0, 1, 2, 3, 0, 6, 7, 4, 5, 6, 7, 4});
  Tensor c = pad(x, {1, -1, -1, 2}, PadMode::constant, -1.0);
  CHECK(c.shape() == Shape{1, 1, 4, 4});
  CHECK(ivals(c) == std::vector<std::int64_t>{-1, 4, 5, 6, -1, 8, 9, 10, -1, -1, -1, -1, -1, -1, -1, -1});
  Tensor c2 = pad(seq({2, 3}), {1, 1, 1, 1});
  CHECK(c2.shape() == Shape{4, 5});
  CHECK(vals(c2) == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0, 0, 0, 0, 0});
  // 1-D rows: negative pads crop
  Tensor v = seq({1, 4});
  CHECK(vals(pad(v, {3, 3}, PadMode::reflect)) == std::vector<double>{3, 2, 1, 0, 1, 2, 3, 2, 1, 0});
  CHECK(vals(pad(v, {-1, 2}, PadMode::reflect)) == std::vector<double>{1, 2, 3, 2, 1});
  CHECK(vals(pad(v, {3, -1}, PadMode::reflect)) == std::vector<double>{3, 2, 1, 0, 1, 2});
  CHECK(vals(pad(v, {-1, 2}, PadMode::replicate)) == std::vector<double>{1, 2, 3, 3, 3});
  CHECK(vals(pad(v, {2, -3}, PadMode::replicate)) == std::vector<double>{0, 0, 0});
  CHECK(vals(pad(v, {-1, 2}, PadMode::circular)) == std::vector<double>{1, 2, 3, 1, 2});
  CHECK(vals(pad(v, {2, -1}, PadMode::circular)) == std::vector<double>{1, 2, 0, 1, 2});
  CHECK(vals(pad(v, {-2, 2}, PadMode::circular)) == std::vector<double>{2, 3, 2, 3});
  CHECK(vals(pad(v, {4, 4}, PadMode::circular)) == std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(pad(v, {-1, -3}, PadMode::circular).shape() == Shape{1, 0});
  CHECK(vals(pad(v, {-1, 2})) == std::vector<double>{1, 2, 3, 0, 0});
  CHECK(pad(v, {-4, 0}).shape() == Shape{1, 0});
  CHECK(vals(pad(v, {1, 1}, PadMode::constant, 2.5)) == std::vector<double>{2.5, 0, 1, 2, 3, 2.5});
  // other dtypes and an empty batch
  CHECK(ivals(pad(seq({3}, int64), {1, 0}, PadMode::constant, 7)) == std::vector<std::int64_t>{7, 0, 1, 2});
  CHECK(to_vector<cd>(pad(from_vector(std::vector<cd>{{1, 2}}), {1, 1}, PadMode::replicate)) ==
        std::vector<cd>{{1, 2}, {1, 2}, {1, 2}});
  CHECK(pad(empty({0, 1, 3}), {1, 1}, PadMode::reflect).shape() == Shape{0, 1, 5});
  // the result never aliases the input
  Tensor same = pad(v, {0, 0}, PadMode::reflect);
  CHECK(same.data_ptr() != v.data_ptr());
  CHECK(vals(same) == vals(v));
  // padding all dims of a 1-D tensor
  CHECK(vals(pad(seq({3}), {1, 2}, PadMode::reflect)) == std::vector<double>{1, 0, 1, 2, 1, 0});
}

TEST_CASE("pad errors") {
  Tensor v = seq({1, 4});
  CHECK_THROWS_WITH_AS(pad(v, {1}), Contains("[pad] padding length must be even"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {1, 1, 1, 1, 1, 1}), Contains("has 2"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {4, 0}, PadMode::reflect), Contains("smaller than the size 4"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {0, 4}, PadMode::reflect), Contains("padding (0, 4) at dim 1"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {5, 0}, PadMode::circular), Contains("wraps around more than once"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {-2, 3}, PadMode::circular), Contains("wraps around more than once"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {-5, 0}), Contains("negative output size -1"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {-2, -3}, PadMode::reflect), Contains("negative output size"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {-4, 0}, PadMode::replicate), Contains("empty output"), Error);
  CHECK_THROWS_WITH_AS(pad(empty({1, 0}), {1, 1}, PadMode::replicate), Contains("empty dim"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {1, 1}, PadMode::reflect, 1.0), Contains("does not take a value"), Error);
  CHECK_THROWS_WITH_AS(pad(v, {1, 1}, PadMode::constant, cd(0, 1)), Contains("complex padding value"), Error);
  CHECK(vals(v) == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("pad gradients") {
  // reference gradients from torch: x = arange(12).reshape(1,1,3,4), w = arange(1, 43).reshape(1,1,6,7),
  // (pad(x, (2,1,1,2), mode) * w).sum().backward()
  const std::vector<std::pair<PadMode, std::vector<double>>> ref = {
      {PadMode::reflect, {48, 96, 152, 54, 51, 102, 165, 60, 24, 48, 76, 27}},
      {PadMode::replicate, {33, 15, 17, 40, 48, 18, 19, 41, 270, 96, 99, 207}},
      {PadMode::circular, {90, 43, 82, 86, 118, 57, 110, 114, 62, 29, 54, 58}}};
  for (const auto& [mode, g] : ref) {
    Tensor x = seq({1, 1, 3, 4}).requires_grad_();
    (pad(x, {2, 1, 1, 2}, mode) * (seq({1, 1, 6, 7}) + 1.0)).sum().backward();
    CHECK(vals(x.grad()) == g);
  }
  manual_seed(3);
  Tensor a = leaf64({2, 3, 4});
  for (PadMode m : {PadMode::constant, PadMode::reflect, PadMode::replicate, PadMode::circular}) {
    CAPTURE(static_cast<int>(m));
    CHECK(autodiff::gradcheck([m](const V& in) { return pad(in[0], {2, -1, 1, 2}, m); }, {a}));
    CHECK(autodiff::gradcheck([m](const V& in) { return pad(in[0], {3, 3, 0, 1, 1, 1}, m); }, {a}));
    Tensor z = leafc({3, 4});
    CHECK(autodiff::gradcheck([m](const V& in) { return pad(in[0], {1, 2, 2, 1}, m) * cd(1, 2); }, {z}));
  }
  CHECK(autodiff::gradgradcheck([](const V& in) { return pad(in[0], {1, 2}, PadMode::constant, 3.0).sin(); }, {a}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return pad(in[0], {2, 1, 1, 1}, PadMode::reflect).sin(); }, {a}));
}

// ---- flip / roll ------------------------------------------------------------------------------------------------
TEST_CASE("flip and roll") {
  Tensor x = seq({2, 3});
  CHECK(vals(flip(x, {0})) == std::vector<double>{3, 4, 5, 0, 1, 2});
  CHECK(vals(flip(x, {1})) == std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(vals(flip(x, {0, -1})) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(vals(flip(x.t(), {0})) == std::vector<double>{2, 5, 1, 4, 0, 3});
  Tensor f = flip(x, {});
  CHECK(vals(f) == vals(x));
  CHECK(f.data_ptr() != x.data_ptr());
  Tensor y = seq({2, 3, 4});
  Tensor fy = flip(y, {0, 2});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k)
        CHECK(fy.index({i, j, k}).item<double>() == y.index({1 - i, j, 3 - k}).item<double>());
  CHECK(ivals(flip(seq({3}, int64), {0})) == std::vector<std::int64_t>{2, 1, 0});
  CHECK_THROWS_WITH_AS(flip(x, {0, 0}), Contains("appears more than once"), Error);
  CHECK_THROWS_WITH_AS(flip(x, {2}), Contains("[flip] dim 2 out of range"), Error);
  // roll: values from torch.roll
  CHECK(ivals(roll(arange(5), {2})) == std::vector<std::int64_t>{3, 4, 0, 1, 2});
  CHECK(ivals(roll(arange(5), {-7})) == std::vector<std::int64_t>{2, 3, 4, 0, 1});
  Tensor r = arange(6).reshape({2, 3});
  CHECK(ivals(roll(r, {1})) == std::vector<std::int64_t>{5, 0, 1, 2, 3, 4});
  CHECK(roll(r, {1}).shape() == Shape{2, 3});
  CHECK(ivals(roll(r, {1, -1}, {0, 1})) == std::vector<std::int64_t>{4, 5, 3, 1, 2, 0});
  CHECK(ivals(roll(r, {3}, {1})) == ivals(r));
  CHECK(ivals(roll(r.t(), {1}, {0})) == std::vector<std::int64_t>{2, 5, 0, 3, 1, 4});
  CHECK_THROWS_WITH_AS(roll(r, {1}, {0, 1}), Contains("same length"), Error);
  CHECK_THROWS_WITH_AS(roll(r, {1, 2}), Contains("without dims"), Error);
  CHECK_THROWS_WITH_AS(roll(r, {1}, {2}), Contains("out of range"), Error);
  CHECK_THROWS_AS(roll(r, {}), Error);
  manual_seed(4);
  Tensor a = leaf64({3, 4});
  CHECK(autodiff::gradcheck([](const V& in) { return flip(in[0], {0, 1}) * in[0]; }, {a}));
  CHECK(autodiff::gradcheck([](const V& in) { return roll(in[0], {1, -2}, {0, 1}) * in[0]; }, {a}));
  CHECK(autodiff::gradcheck([](const V& in) { return roll(in[0], {5}); }, {a}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return flip(in[0], {1}) * in[0]; }, {a}));
  Tensor z = leafc({2, 3});
  CHECK(autodiff::gradcheck([](const V& in) { return flip(in[0], {1}) * in[0]; }, {z}));
  CHECK(autodiff::gradcheck([](const V& in) { return roll(in[0], {1}, {1}) * in[0].conj(); }, {z}));
}

// ---- tril / triu ---------------------------------------------------------------------------------------------------
TEST_CASE("tril and triu on batched matrices") {
  Tensor x = seq({2, 3, 4}) + 1.0;
  for (std::int64_t k : {-4, -1, 0, 1, 2, 5}) {
    CAPTURE(k);
    auto lo = vals(tril(x, k)), up = vals(triu(x, k)), xv = vals(x);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t j = 0; j < 4; ++j) {
          const auto o = static_cast<std::size_t>(lin({2, 3, 4}, {b, i, j}));
          CHECK(lo[o] == (j - i <= k ? xv[o] : 0.0));
          CHECK(up[o] == (j - i >= k ? xv[o] : 0.0));
        }
  }
  CHECK(ivals(tril(ones({2, 2}, int64))) == std::vector<std::int64_t>{1, 0, 1, 1});
  CHECK(to_vector<bool>(triu(ones({2, 2}, bool_))) == std::vector<bool>{true, true, false, true});
  CHECK(vals(tril(x.transpose(1, 2))) == vals(tril(x.transpose(1, 2).contiguous())));
  CHECK_THROWS_WITH_AS(tril(seq({3})), Contains("[tril] expected a tensor of at least 2 dims"), Error);
  CHECK_THROWS_WITH_AS(triu(scalar_tensor(1.0)), Contains("[triu]"), Error);
  manual_seed(5);
  Tensor a = leaf64({2, 3, 3});
  CHECK(autodiff::gradcheck([](const V& in) { return tril(in[0], -1) * in[0]; }, {a}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return triu(in[0], 1) * in[0]; }, {a}));
  Tensor z = leafc({3, 2});
  CHECK(autodiff::gradcheck([](const V& in) { return triu(in[0]) * cd(0.5, -1); }, {z}));
}

// ---- index_select / index_add ---------------------------------------------------------------------------------------
TEST_CASE("index_select and index_add match naive loops") {
  manual_seed(6);
  const Shape shape{4, 5, 6};
  Tensor x = randn(shape, float64);
  auto xv = vals(x);
  for (std::int64_t d = 0; d < 3; ++d) {
    CAPTURE(d);
    const std::int64_t n = shape[static_cast<std::size_t>(d)];
    std::vector<std::int64_t> iv{n - 1, 0, -1, 1, 1};  // negative and repeated entries
    Tensor idx = from_vector(iv);
    Tensor s = index_select(x, d, idx);
    Shape ss = shape;
    ss[static_cast<std::size_t>(d)] = 5;
    REQUIRE(s.shape() == ss);
    auto sv = vals(s);
    for (std::int64_t o = 0; o < numel_of(ss); ++o) {
      Shape p = unlin(ss, o);
      auto j = iv[static_cast<std::size_t>(p[static_cast<std::size_t>(d)])];
      p[static_cast<std::size_t>(d)] = j < 0 ? j + n : j;
      CHECK(sv[static_cast<std::size_t>(o)] == xv[static_cast<std::size_t>(lin(shape, p))]);
    }
    // the same on a permuted (non-contiguous) view
    Tensor xp = x.permute({2, 0, 1});
    const std::int64_t dp = (d + 1) % 3;  // dim d of x is dim dp of xp
    CHECK(vals(index_select(xp, dp, idx)) == vals(s.permute({2, 0, 1})));
    // index_add accumulates repeated indices
    Tensor src = randn(ss, float64);
    Tensor base = randn(shape, float64);
    auto ref = vals(base);
    auto srcv = vals(src);
    for (std::int64_t o = 0; o < numel_of(ss); ++o) {
      Shape p = unlin(ss, o);
      auto j = iv[static_cast<std::size_t>(p[static_cast<std::size_t>(d)])];
      p[static_cast<std::size_t>(d)] = j < 0 ? j + n : j;
      ref[static_cast<std::size_t>(lin(shape, p))] += srcv[static_cast<std::size_t>(o)];
    }
    auto got = vals(index_add(base, d, idx, src));
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-14));
    // index_add on a non-contiguous input and source
    auto got2 = vals(index_add(base.permute({2, 0, 1}), dp, idx, src.permute({2, 0, 1})));
    CHECK(got2 == vals(index_add(base, d, idx, src).permute({2, 0, 1})));
  }
  // 0-d index, empty index, bool and int64 data
  CHECK(index_select(x, 1, scalar_tensor(std::int64_t{2})).shape() == Shape{4, 1, 6});
  CHECK(index_select(x, 1, empty({0}, int64)).shape() == Shape{4, 0, 6});
  CHECK(to_vector<bool>(index_select(from_vector(std::vector<bool>{true, false}), 0, from_vector(std::vector<std::int64_t>{1, 0, 1}))) ==
        std::vector<bool>{false, true, false});
  CHECK(ivals(index_add(zeros({3}, int64), 0, from_vector(std::vector<std::int64_t>{2, 2, 0}), seq({3}, int64))) ==
        std::vector<std::int64_t>{2, 0, 1});
}

TEST_CASE("index_select and index_add: large inputs run in parallel and agree with the serial result") {
  manual_seed(7);
  Tensor x = randn({300, 257}, float64);
  Tensor idx = randint(0, 300, {400});
  Tensor idx1 = randint(0, 257, {300});
  Tensor idx2 = randint(0, 257, {400});
  const int before = get_num_threads();
  set_num_threads(1);
  auto s0 = vals(index_select(x, 0, idx)), s1 = vals(index_select(x, 1, idx1));
  auto a0 = vals(index_add(x, 0, idx1, x.narrow(0, 0, 300)));
  auto a1 = vals(index_add(x, 1, idx2, ones({300, 400}, float64)));
  set_num_threads(2);
  CHECK(vals(index_select(x, 0, idx)) == s0);
  CHECK(vals(index_select(x, 1, idx1)) == s1);
  CHECK(vals(index_add(x, 0, idx1, x.narrow(0, 0, 300))) == a0);
  CHECK(vals(index_add(x, 1, idx2, ones({300, 400}, float64))) == a1);
  set_num_threads(before);
  // spot check against the definition
  auto iv = ivals(idx);
  auto xv = vals(x);
  for (std::int64_t k : {0, 17, 399})
    for (std::int64_t j : {0, 100, 256})
      CHECK(s0[static_cast<std::size_t>(k * 257 + j)] == xv[static_cast<std::size_t>(iv[static_cast<std::size_t>(k)] * 257 + j)]);
}

TEST_CASE("index_select and index_add errors and gradients") {
  Tensor x = seq({3, 4});
  Tensor idx = from_vector(std::vector<std::int64_t>{0, 2});
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector(std::vector<std::int64_t>{3})), Contains("index 3 out of range"), Error);
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector(std::vector<std::int64_t>{-4})), Contains("index -4 out of range"), Error);
  CHECK_THROWS_WITH_AS(index_select(x, 0, seq({2})), Contains("index must be int64, got float64"), Error);
  CHECK_THROWS_WITH_AS(index_select(x, 0, zeros({1, 1}, int64)), Contains("(1, 1)"), Error);
  CHECK_THROWS_WITH_AS(index_select(x, 2, idx), Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(index_select(scalar_tensor(1.0), 0, idx), Contains("0-d"), Error);
  CHECK_THROWS_WITH_AS(index_add(x, 0, idx, seq({3, 4})), Contains("src of shape (3, 4) does not match (2, 4)"), Error);
  CHECK_THROWS_WITH_AS(index_add(x, 0, idx, zeros({2, 4}, complex64)), Contains("cannot add a complex64"), Error);
  CHECK(vals(x) == vals(seq({3, 4})));
  manual_seed(8);
  Tensor a = leaf64({4, 3}), s = leaf64({3, 3});
  Tensor rep = from_vector(std::vector<std::int64_t>{1, 3, 1});
  CHECK(autodiff::gradcheck([rep](const V& in) { return index_select(in[0], 0, rep) * in[1]; }, {a, s}));
  CHECK(autodiff::gradcheck([rep](const V& in) { return index_add(in[0], 0, rep, in[1] * in[1]); }, {a, s}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return index_select(in[0], 1, from_vector(std::vector<std::int64_t>{1, 2, 1})) * in[0]; }, {a}));
  CHECK(autodiff::gradgradcheck([rep](const V& in) { return index_add(in[0], 0, rep, in[1] * in[1]); }, {a, s}));
  Tensor z = leafc({4, 3}), zs = leafc({3, 3});
  CHECK(autodiff::gradcheck([rep](const V& in) { return index_select(in[0], 0, rep) * in[1]; }, {z, zs}));
  CHECK(autodiff::gradcheck([rep](const V& in) { return index_add(in[0], 0, rep, in[1] * in[1]); }, {z, zs}));
  // a float32 source into a float64 input: gradient comes back as float32
  Tensor base = zeros({4, 3}, float64).requires_grad_();
  Tensor src = ones({3, 3}, float32).requires_grad_();
  index_add(base, 0, rep, src).sum().backward();
  CHECK(src.grad().dtype() == float32);
  CHECK(vals(base.grad()) == std::vector<double>(12, 1.0));
}

// ---- gather / scatter_add ----------------------------------------------------------------------------------------------
TEST_CASE("gather and scatter_add match naive loops") {
  manual_seed(9);
  const Shape xs{4, 5, 3};
  Tensor x = randn(xs, float64);
  auto xv = vals(x);
  for (std::int64_t d = 0; d < 3; ++d) {
    CAPTURE(d);
    Shape is{3, 4, 2};  // smaller than x in the other dims
    is[static_cast<std::size_t>(d)] = 6;  // may exceed x along dim
    Tensor idx = randint(0, xs[static_cast<std::size_t>(d)], is);
    auto iv = ivals(idx);
    Tensor g = gather(x, d, idx);
    REQUIRE(g.shape() == is);
    auto gv = vals(g);
    for (std::int64_t o = 0; o < numel_of(is); ++o) {
      Shape p = unlin(is, o);
      p[static_cast<std::size_t>(d)] = iv[static_cast<std::size_t>(o)];
      CHECK(gv[static_cast<std::size_t>(o)] == xv[static_cast<std::size_t>(lin(xs, p))]);
    }
    // non-contiguous x and index
    CHECK(vals(gather(x.transpose(0, 2), 2 - d, idx.transpose(0, 2))) == vals(g.transpose(0, 2)));
    // scatter_add with src larger than index
    Shape ss = is;
    for (auto& v : ss) v += 1;
    Tensor src = randn(ss, float64);
    auto sv = vals(src);
    Tensor base = randn(xs, float64);
    auto ref = vals(base);
    for (std::int64_t o = 0; o < numel_of(is); ++o) {
      Shape p = unlin(is, o);
      const double add = sv[static_cast<std::size_t>(lin(ss, p))];
      p[static_cast<std::size_t>(d)] = iv[static_cast<std::size_t>(o)];
      ref[static_cast<std::size_t>(lin(xs, p))] += add;
    }
    auto got = vals(scatter_add(base, d, idx, src));
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-14));
    CHECK(vals(scatter_add(base.transpose(0, 2), 2 - d, idx.transpose(0, 2), src.transpose(0, 2))) ==
          vals(scatter_add(base, d, idx, src).transpose(0, 2)));
  }
  // values from torch: zeros(2,3).scatter_add(0, [[0,1,1]], arange(6).reshape(2,3)) and gather examples
  Tensor sa = scatter_add(zeros({2, 3}, float64), 0, from_vector(std::vector<std::int64_t>{0, 1, 1}, Shape{1, 3}), seq({2, 3}));
  CHECK(vals(sa) == std::vector<double>{0, 0, 0, 0, 1, 2});
  Tensor sb = scatter_add(zeros({2, 3}, float64), 1, from_vector(std::vector<std::int64_t>{0, 0, 1, 1}, Shape{1, 4}), ones({1, 4}, float64));
  CHECK(vals(sb) == std::vector<double>{2, 2, 0, 0, 0, 0});
  CHECK(ivals(gather(arange(6).reshape({2, 3}), 1, from_vector(std::vector<std::int64_t>{0, 0, 1, 1}, Shape{1, 4}))) ==
        std::vector<std::int64_t>{0, 0, 1, 1});
  CHECK(gather(scalar_tensor(2.5), 0, scalar_tensor(std::int64_t{0})).item<double>() == 2.5);
  CHECK(to_vector<bool>(scatter_add(zeros({3}, bool_), 0, from_vector(std::vector<std::int64_t>{2}), ones({1}, bool_))) ==
        std::vector<bool>{false, false, true});
}

TEST_CASE("gather and scatter_add: parallel runs agree with serial ones") {
  manual_seed(10);
  Tensor x = randn({200, 300}, float64);
  Tensor i0 = randint(0, 200, {250, 300}), i1 = randint(0, 300, {200, 500});
  Tensor s0 = randn({250, 300}, float64), s1 = randn({200, 500}, float64);
  const int before = get_num_threads();
  set_num_threads(1);
  auto g0 = vals(gather(x, 0, i0)), g1 = vals(gather(x, 1, i1));
  auto a0 = vals(scatter_add(x, 0, i0, s0)), a1 = vals(scatter_add(x, 1, i1, s1));
  set_num_threads(2);
  CHECK(vals(gather(x, 0, i0)) == g0);
  CHECK(vals(gather(x, 1, i1)) == g1);
  CHECK(vals(scatter_add(x, 0, i0, s0)) == a0);
  CHECK(vals(scatter_add(x, 1, i1, s1)) == a1);
  set_num_threads(before);
}

TEST_CASE("gather and scatter_add errors and gradients") {
  Tensor x = arange(6).reshape({2, 3}).to(float64);
  auto ix = [](std::vector<std::int64_t> v, Shape s) { return from_vector(v, s); };
  CHECK_THROWS_WITH_AS(gather(x, 1, ix({-1}, {1, 1})), Contains("index -1 out of range for dim 1 of size 3"), Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, ix({3}, {1, 1})), Contains("index 3 out of range"), Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, ix({0, 1, 2}, {3, 1})), Contains("index of shape (3, 1) is larger than the input of shape (2, 3) at dim 0"), Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, ix({0}, {1})), Contains("as many dims"), Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, seq({1, 1})), Contains("int64"), Error);
  CHECK_THROWS_WITH_AS(gather(x, 2, ix({0}, {1, 1})), Contains("out of range for a tensor of 2 dims"), Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, ix({0, 0, 1, 1}, {1, 4}), ones({1, 4}, float64)),
                       Contains("index of shape (1, 4) is larger than the input of shape (2, 3) at dim 1"), Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, ix({0, 0, 1}, {1, 3}), ones({1, 2}, float64)),
                       Contains("larger than src of shape (1, 2)"), Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, ix({0}, {1, 1}), ones({1}, float64)), Contains("src of shape (1,)"), Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, ix({0}, {1, 1}), ones({1, 1}, complex128)), Contains("cannot add a complex128"), Error);
  CHECK(vals(x) == std::vector<double>{0, 1, 2, 3, 4, 5});
  manual_seed(11);
  Tensor a = leaf64({3, 4});
  Tensor idx = ix({0, 2, 2, 1, 0, 0, 1, 1}, {2, 4});  // repeated positions along dim 0
  CHECK(autodiff::gradcheck([idx](const V& in) { return gather(in[0], 0, idx) * gather(in[0], 0, idx); }, {a}));
  CHECK(autodiff::gradgradcheck([idx](const V& in) { return gather(in[0], 0, idx) * in[0].narrow(0, 0, 2); }, {a}));
  Tensor src = leaf64({3, 5});  // larger than the index: the unused part gets zero gradient
  CHECK(autodiff::gradcheck([idx](const V& in) { return scatter_add(in[0], 0, idx, in[1] * in[1]); }, {a, src}));
  CHECK(autodiff::gradgradcheck([idx](const V& in) { return scatter_add(in[0], 0, idx, in[1] * in[1]); }, {a, src}));
  Tensor z = leafc({3, 4}), zs = leafc({2, 4});
  Tensor idx1 = ix({3, 0, 3, 1, 1, 1, 2, 0}, {2, 4});
  CHECK(autodiff::gradcheck([idx1](const V& in) { return gather(in[0], 1, idx1) * in[1]; }, {z, zs}));
  CHECK(autodiff::gradcheck([idx1](const V& in) { return scatter_add(in[0], 1, idx1, in[1] * in[1]); }, {z, zs}));
  // src gradient: gathered where used, zero elsewhere
  Tensor s = zeros({2, 2}, float64).requires_grad_();
  scatter_add(zeros({3}, float64).unsqueeze(0).expand({2, 3}).contiguous(), 1, ix({2, 0}, {2, 1}), s).backward(
      seq({2, 3}));
  CHECK(vals(s.grad()) == std::vector<double>{2, 0, 3, 0});
}

TEST_CASE("roll: repeated dims add their shifts; gradient is the opposite roll") {
  Tensor x = seq({4, 3});
  CHECK(vals(roll(x, {1, 2}, {0, 0})) == vals(roll(x, {3}, {0})));
  CHECK(vals(roll(x, {2, -2}, {1, 1})) == vals(x));
  CHECK(autodiff::gradcheck([](const V& in) { return roll(in[0], {1, -1}, {0, 1}) * seq({4, 3}); }, {leaf64({4, 3})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return roll(in[0] * in[0], {5}, {-1}); }, {leaf64({2, 3})}));
}

// ---- diag / trace / diff --------------------------------------------------------------------------------------
TEST_CASE("diag builds and reads diagonals; trace sums the main one") {
  const Tensor v = vec({1, 2, 3});
  CHECK(vals(diag(v)) == std::vector<double>{1, 0, 0, 0, 2, 0, 0, 0, 3});
  CHECK(diag(v, 1).shape() == Shape{4, 4});
  CHECK(vals(diag(v, -1).diagonal(-1)) == std::vector<double>{1, 2, 3});
  CHECK(diag(v, -1).sum().item<double>() == 6.0);
  const Tensor m = seq({3, 4});
  Tensor d = diag(m, 1);
  CHECK(vals(d) == std::vector<double>{1, 6, 11});
  d.fill_(0.0);  // a copy, not a view
  CHECK(vals(m.diagonal(1)) == std::vector<double>{1, 6, 11});
  CHECK(vals(diag(m, -2)) == std::vector<double>{8});
  CHECK(diag(m, 5).numel() == 0);
  CHECK(trace(m).item<double>() == 0 + 5 + 10);
  CHECK(trace(from_vector(std::vector<std::int64_t>{1, 2, 3, 4}, Shape{2, 2})).dtype() == int64);
  CHECK_THROWS_WITH_AS(diag(seq({2, 2, 2})), Contains("[diag] expected a 1-D or 2-D tensor, got shape (2, 2, 2)"), Error);
  CHECK_THROWS_WITH_AS(trace(v), Contains("[trace] expected a 2-D tensor, got shape (3,)"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return diag(in[0], 1); }, {leaf64({3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return diag(in[0], -1); }, {leaf64({3, 4})}));
  CHECK(autodiff::gradcheck([](const V& in) { return trace(in[0]); }, {leafc({3, 3})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return trace(in[0] * in[0]); }, {leaf64({3, 2})}));
}

TEST_CASE("diff: orders, dims, prepend and append, bools, gradients") {
  const Tensor x = vec({1, 4, 9, 16, 25});
  CHECK(vals(diff(x)) == std::vector<double>{3, 5, 7, 9});
  CHECK(vals(diff(x, 2)) == std::vector<double>{2, 2, 2});
  CHECK(vals(x.diff(3)) == std::vector<double>{0, 0});
  CHECK(diff(x, 0).shape() == Shape{5});
  CHECK(diff(x, 7).shape() == Shape{0});  // more orders than elements: empty
  CHECK(vals(diff(x, 1, 0, vec({0}), vec({36, 49}))) == std::vector<double>{1, 3, 5, 7, 9, 11, 13});
  // along a chosen dim of a matrix, prepend broadcasting nothing: same dims
  const Tensor m = seq({3, 4});
  CHECK(vals(diff(m, 1, 0)) == std::vector<double>(8, 4.0));
  CHECK(vals(diff(m, 1, -1, zeros({3, 1}))) == std::vector<double>{0, 1, 1, 1, 4, 1, 1, 1, 8, 1, 1, 1});
  // int64 stays int64; bools differ (xor), as torch
  CHECK(diff(from_vector(std::vector<std::int64_t>{3, 1, 4})).dtype() == int64);
  CHECK(ivals(diff(from_vector(std::vector<std::int64_t>{3, 1, 4}))) == std::vector<std::int64_t>{-2, 3});
  const Tensor b = diff(from_vector(std::vector<bool>{true, true, false, true}));
  CHECK(b.dtype() == Dtype::Bool);
  CHECK(to_vector<bool>(b) == std::vector<bool>{false, true, true});
  CHECK_THROWS_WITH_AS(diff(scalar_tensor(1.0)), Contains("[diff] expected a tensor of at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(diff(x, -1), Contains("[diff] order n must be non-negative, got -1"), Error);
  CHECK_THROWS_WITH_AS(diff(m, 1, 2), Contains("[diff]"), Error);
  CHECK_THROWS_WITH_AS(diff(m, 1, 0, vec({1, 2, 3, 4})), Contains("[diff] prepend of shape (4,) must have the input's 2 dims"), Error);
  CHECK_THROWS_WITH_AS(diff(m, 1, 0, Tensor(), zeros({1, 3})), Contains("[cat]"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return diff(in[0], 2, 0); }, {leaf64({4, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return diff(in[0], 1, 1, in[1], in[1]); }, {leaf64({2, 3}), leaf64({2, 1})}));
  CHECK(autodiff::gradcheck([](const V& in) { return diff(in[0]); }, {leafc({5})}));
}
