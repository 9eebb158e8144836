// CPU-vs-GPU agreement of the index, shape and random ops on CUDA tensors (cuda/index.cu,
// cuda/random.cu), and the CPU-side checks of what they share with the CPU (the Philox numbers).
// The GPU cases need a GPU: without one doctest reports them as skipped.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <phasor/phasor.hpp>
#include <string>
#include <tuple>
#include <vector>

using namespace phasor;
using namespace cuda_test;

namespace {

const std::vector<Dtype> kAll = {bool_, int64, float32, float64, complex64, complex128};

/// The value of Philox's 64 output bits (a, b) as rand's float64 in [0, 1).
double u53(std::uint64_t ab) { return static_cast<double>(ab >> 11) / 9007199254740992.0; }

}  // namespace

// ---- runs on every machine ------------------------------------------------------------------------------
TEST_CASE("rand draws Random123's Philox4x32-10 known-answer words") {
  // Random123's kat_vectors: philox4x32_10, counter 0, key 0 -> 6627e8d5 e169c58d bc57ac4c 9b00dbd8
  Generator g(0);
  const auto u = to_vector<double>(rand({2}, float64, Device::cpu(), &g));
  CHECK(u[0] == u53(0x6627e8d5e169c58dULL));
  CHECK(u[1] == u53(0xbc57ac4c9b00dbd8ULL));
  Generator h(0);
  const auto f = to_vector<float>(rand({2}, float32, Device::cpu(), &h));
  CHECK(f[0] == static_cast<float>(0x6627e8d5u >> 8) / 16777216.0f);
  CHECK(f[1] == static_cast<float>(0xbc57ac4cu >> 8) / 16777216.0f);
  Generator k(0);
  const auto i = to_vector<std::int64_t>(randint(-3, 7, {2}, int64, Device::cpu(), &k));
  CHECK(i[0] == -3 + static_cast<std::int64_t>((static_cast<unsigned __int128>(0x6627e8d5e169c58dULL) * 10) >> 64));
  CHECK(i[1] == -3 + static_cast<std::int64_t>((static_cast<unsigned __int128>(0xbc57ac4c9b00dbd8ULL) * 10) >> 64));
  // the whole int64 range: width 2^64 - 1, low + the multiply-high word in unsigned arithmetic
  Generator w(0);
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  const auto all = to_vector<std::int64_t>(randint(lo, hi, {2}, int64, Device::cpu(), &w));
  auto expect = [lo](std::uint64_t x) {
    const auto h = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * ~std::uint64_t{0}) >> 64);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + h);
  };
  CHECK(all[0] == expect(0x6627e8d5e169c58dULL));
  CHECK(all[1] == expect(0xbc57ac4c9b00dbd8ULL));
}

TEST_CASE("index ops and random creation on a CUDA device without one throw and change nothing") {
  if (kGpu) return;  // covered by the agreement cases below
  Generator g(5);
  CHECK_THROWS_AS(rand({3}, float32, kDev, &g), Error);
  CHECK(g.offset() == 0);
  CHECK_THROWS_AS(randn({3}, float32, kDev), Error);
  CHECK_THROWS_AS(randint(0, 5, {3}, int64, kDev), Error);
  CHECK_THROWS_AS(arange(5, int64, kDev), Error);
  CHECK_THROWS_AS(eye(3, std::nullopt, float32, kDev), Error);
  CHECK_THROWS_WITH_AS(linspace(0, 1, 5, float32, kDev), doctest::Contains("cuda:0"), Error);
}

// ---- GPU agreement --------------------------------------------------------------------------------------------
DEVICE_CASE("cuda index: index_select and index_add agree with the CPU") {
  manual_seed(11);
  const Tensor idx = from_vector<std::int64_t>({3, 0, -1, 3, 2, 3});
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    const Tensor x = sample({5, 7, 9}, dt);
    for (std::int64_t d : {0, 1, 2}) {
      CAPTURE(d);
      CHECK(rel_diff(index_select(x.to(dev), d, idx.to(dev)), index_select(x, d, idx)) == 0);
      CHECK(rel_diff(index_select(x.to(dev), d, idx), index_select(x, d, idx)) == 0);  // a host index
      const Tensor xt = x.transpose(0, 2);  // strided
      CHECK(rel_diff(index_select(xt.to(dev).transpose(0, 2).transpose(0, 2), d, idx), index_select(xt, d, idx)) == 0);
      Shape ss = x.shape();
      ss[static_cast<std::size_t>(d)] = idx.numel();
      const Tensor src = sample(ss, dt);
      if (dt == Dtype::Bool) continue;
      // repeated indices accumulate in order on both devices
      CHECK(rel_diff(index_add(x.to(dev), d, idx.to(dev), src.to(dev)), index_add(x, d, idx, src)) <= 1e-6);
    }
  }
  // errors before any work
  const Tensor x = sample({4, 3}, float32).to(dev);
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector<std::int64_t>({4}).to(dev)), doctest::Contains("out of range"), Error);
  // an index on the device is range-checked there (negative values count from the end); a bad one is named
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector<std::int64_t>({1, -5}).to(dev)),
                       "[index_select] index -5 out of range for a dim of size 4", Error);
  const Tensor before = x.clone();
  CHECK_THROWS_WITH_AS(index_add(x, 1, from_vector<std::int64_t>({0, 3}).to(dev), sample({4, 2}, float32).to(dev)),
                       "[index_add] index 3 out of range for a dim of size 3", Error);
  CHECK(rel_diff(x, before) == 0);
  CHECK(rel_diff(index_select(x, 1, from_vector<std::int64_t>({-3, -1}).to(dev)), index_select(before, 1, from_vector<std::int64_t>({0, 2}))) == 0);
}

DEVICE_CASE("cuda index: gather, scatter, scatter_add, scatter_reduce, index_copy, index_reduce and index_put agree with the CPU") {
  manual_seed(14);
  const std::vector<std::string> reduces = {"sum", "prod", "mean", "amax", "amin"};
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    const Tensor x = sample({6, 5, 4}, dt);
    for (std::int64_t d : {0, 1, 2}) {
      CAPTURE(d);
      Shape is = {4, 3, 3};
      is[static_cast<std::size_t>(d)] = 8;  // longer than the dim: repeats
      const Tensor index = randint(0, x.size(d), is), src = sample(is, dt);
      CHECK(rel_diff(gather(x.to(dev), d, index.to(dev)), gather(x, d, index)) == 0);
      if (dt != Dtype::Bool)
        CHECK(rel_diff(scatter_add(x.to(dev), d, index.to(dev), src.to(dev)), scatter_add(x, d, index, src)) <= 1e-6);
      // one thread per position on the GPU: the last repeated value wins there too
      CHECK(rel_diff(scatter(x.to(dev), d, index.to(dev), src.to(dev)), scatter(x, d, index, src)) == 0);
      const std::int64_t n = x.size(d);
      const Tensor idx = from_vector<std::int64_t>({n - 1, 0, -1, 1, 0});
      Shape ss = x.shape();
      ss[static_cast<std::size_t>(d)] = 5;
      const Tensor src1 = sample(ss, dt);
      CHECK(rel_diff(index_copy(x.to(dev), d, idx.to(dev), src1.to(dev)), index_copy(x, d, idx, src1)) == 0);
      for (const auto& r : reduces)
        for (bool self : {true, false}) {
          if ((is_complex(dt) && (r == "amax" || r == "amin")) || (dt == bool_ && r == "mean")) continue;
          CAPTURE(r);
          CAPTURE(self);
          CHECK(rel_diff(scatter_reduce(x.to(dev), d, index.to(dev), src.to(dev), r, self), scatter_reduce(x, d, index, src, r, self)) <= 1e-6);
          CHECK(rel_diff(index_reduce(x.to(dev), d, idx.to(dev), src1.to(dev), r, self), index_reduce(x, d, idx, src1, r, self)) <= 1e-6);
        }
    }
    // index_put: split indices, a mask, accumulate
    const Tensor i0 = from_vector<std::int64_t>({5, 0, 5}), i2 = from_vector<std::int64_t>({3, -1, 3});
    const Tensor v = sample({3, 5}, dt);
    for (bool acc : {false, true}) {
      if (dt == bool_ && acc) continue;
      CHECK(rel_diff(index_put(x.to(dev), {i0.to(dev), Tensor(), i2.to(dev)}, v.to(dev), acc), index_put(x, {i0, Tensor(), i2}, v, acc)) <= 1e-6);
    }
    const Tensor mask = randn({6, 5}) > 0.0, mv = sample({4}, dt);
    CHECK(rel_diff(index_put(x.to(dev), {mask.to(dev)}, mv.to(dev)), index_put(x, {mask}, mv)) == 0);
  }
  // few long lines: the GPU combines atomically (sums, products, maxima), replacements stay in order
  const Tensor many = randint(0, 4, {20000}), vals = randn({20000}, float64), near1 = 1.0 + randn({20000}, float64) * 1e-4;
  const Tensor x4 = randn({4}, float64);
  for (const auto& r : reduces) {
    CAPTURE(r);
    const Tensor s = r == "prod" ? near1 : vals;
    const double eps = r == "amax" || r == "amin" ? 0 : 1e-10;
    CHECK(rel_diff(scatter_reduce(x4.to(dev), 0, many.to(dev), s.to(dev), r), scatter_reduce(x4, 0, many, s, r)) <= eps);
    CHECK(rel_diff(index_reduce(x4.to(dev), 0, many.to(dev), s.to(dev), r, false), index_reduce(x4, 0, many, s, r, false)) <= eps);
    CHECK(rel_diff(scatter_reduce(x4.to(float32).to(dev), 0, many.to(dev), s.to(float32).to(dev), r),
                   scatter_reduce(x4.to(float32), 0, many, s.to(float32), r)) <= (eps == 0 ? 0 : 1e-5));
  }
  CHECK(rel_diff(scatter(x4.to(dev), 0, many.to(dev), vals.to(dev)), scatter(x4, 0, many, vals)) == 0);
  CHECK(rel_diff(index_copy(x4.to(dev), 0, many.to(dev), vals.to(dev)), index_copy(x4, 0, many, vals)) == 0);
  // three long lines (the parallel replacement's slots per position), strided
  const Tensor x2 = randn({50, 3}, float64).t(), i2 = randint(0, 50, {3, 2000}), s2 = randn({3, 2000}, float64);
  const Tensor k2 = randint(0, 50, {2000});
  CHECK(rel_diff(scatter(x2.to(dev), 1, i2.to(dev), s2.to(dev)), scatter(x2, 1, i2, s2)) == 0);
  CHECK(rel_diff(index_copy(x2.to(dev), 1, k2.to(dev), s2.to(dev)), index_copy(x2, 1, k2, s2)) == 0);
  CHECK(rel_diff(index_put(x2.to(dev), {Tensor(), k2.to(dev)}, s2.to(dev)), index_put(x2, {Tensor(), k2}, s2)) == 0);
  // in-place forms write the device tensor
  const Tensor base = sample({5, 4}, float64), src = sample({7, 4}, float64), gi = randint(0, 5, {7, 4});
  const Tensor i1 = from_vector<std::int64_t>({4, 0, 4, 1, 2, 0, 3}), gj = randint(0, 4, {5, 2});
  const auto in_place = [&](const Device& on_dev, bool graph) {
    const Tensor leaf = base.to(on_dev).requires_grad_(graph);
    Tensor y = graph ? leaf * 1.0 : leaf.detach().clone();
    y.scatter_(0, gi.to(on_dev), src.to(on_dev));
    y.scatter_(1, gj.to(on_dev), 0.5);
    y.scatter_add_(0, gi.to(on_dev), src.to(on_dev));
    y.scatter_reduce_(0, gi.to(on_dev), src.to(on_dev), "amax", false);
    y.index_add_(0, i1.to(on_dev), src.to(on_dev));
    y.index_copy_(0, i1.narrow(0, 0, 3).to(on_dev), src.narrow(0, 0, 3).to(on_dev));
    y.index_reduce_(0, i1.to(on_dev), src.to(on_dev), "prod");
    y.index_fill_(1, from_vector<std::int64_t>({3}).to(on_dev), -2.0);
    y.index_put_({i1.to(on_dev)}, src.to(on_dev), true);
    y.masked_scatter_((base > 0.0).to(on_dev), src.to(on_dev));
    if (graph) y.sin().sum().backward();
    return graph ? leaf.grad() : y;
  };
  for (bool graph : {false, true}) {
    CAPTURE(graph);
    const Tensor got = in_place(dev, graph);
    CHECK(got.device() == dev);
    CHECK(rel_diff(got, in_place(Device::cpu(), graph)) <= 1e-12);
  }
  // Tensor::index with several tensors and a mask; index_put_ through a view of integers, slices and tensors
  const Tensor x3 = sample({4, 5, 6}, float64);
  const Tensor a0 = from_vector<std::int64_t>({3, 0, -1}), a2 = from_vector<std::int64_t>({5, 5, 0});
  const Tensor m3 = x3.select(0, 0) > 0.0;
  CHECK(rel_diff(x3.to(dev).index({a0.to(dev), Slice(), a2.to(dev)}), x3.index({a0, Slice(), a2})) == 0);
  CHECK(rel_diff(x3.to(dev).index({Slice(), m3.to(dev)}), x3.index({Slice(), m3})) == 0);
  for (bool keep : {true, false})  // a 0-d mask: a new dim, kept or emptied
    CHECK(rel_diff(x3.to(dev).index({Slice(), keep}), x3.index({Slice(), keep})) == 0);
  CHECK(rel_diff(x3.to(dev).index({a0.to(dev), true}), x3.index({a0, true})) == 0);  // its one position broadcasts
  Tensor yd = x3.to(dev).clone(), yc = x3.clone();
  yd.index_put_({1, Slice(), a2.to(dev)}, 2.5);
  yc.index_put_({1, Slice(), a2}, 2.5);
  yd.index_put_({a0.to(dev), Slice(1, 3)}, x3.index({a0, Slice(1, 3)}).to(dev), true);
  yc.index_put_({a0, Slice(1, 3)}, x3.index({a0, Slice(1, 3)}), true);
  CHECK(rel_diff(yd, yc) <= 1e-15);
  // int64 fills are exact beyond 2^53 (amin's identity without include_self is the int64 maximum)
  const std::int64_t top = std::numeric_limits<std::int64_t>::max(), odd = (std::int64_t{1} << 53) + 1;
  CHECK(to_vector<std::int64_t>(full({2}, top, int64, dev)) == std::vector<std::int64_t>{top, top});
  CHECK(to_vector<std::int64_t>(zeros({3}, int64, dev).fill_(odd)) == std::vector<std::int64_t>{odd, odd, odd});
  const Tensor bad = from_vector<std::int64_t>({0, 5, 1}, Shape{1, 3}).to(dev);
  CHECK_THROWS_WITH_AS(gather(base.to(dev), 0, bad), doctest::Contains("index 5 out of range"), Error);
  CHECK_THROWS_WITH_AS(gather(base.to(dev), 0, bad.to(Device::cpu())), doctest::Contains("index on cpu"), Error);
  CHECK_THROWS_WITH_AS(scatter(base.to(dev), 0, gi, src.to(dev)), doctest::Contains("index on cpu"), Error);
  CHECK_THROWS_WITH_AS(index_put(base.to(dev), {i1}, src.to(dev)), doctest::Contains("[index_put]"), Error);
}

DEVICE_CASE("cuda index: scatter_reduce, index_reduce and index_put gradients are computed on the GPU") {
  manual_seed(15);
  const Tensor x = sample({5, 4}, float64), s = sample({7, 4}, float64), gi = randint(0, 5, {7, 4});
  const Tensor i1 = from_vector<std::int64_t>({4, 0, 4, 1, 2, 0, 3});
  using VT = std::vector<Tensor>;
  for (const std::string r : {"sum", "prod", "mean", "amax", "amin"})
    for (bool self : {true, false}) {
      CAPTURE(self);
      grads_agree(dev, "scatter_reduce " + r, [&](const VT& in) { return scatter_reduce(in[0], 0, gi.to(in[0].device()), in[1], r, self); }, {x, s}, 1e-12);
      grads_agree(dev, "index_reduce " + r, [&](const VT& in) { return index_reduce(in[0], 0, i1.to(in[0].device()), in[1], r, self); }, {x, s}, 1e-12);
    }
  grads_agree(dev, "scatter", [&](const VT& in) { return scatter(in[0], 0, gi.to(in[0].device()), in[1]); }, {x, s}, 1e-12);
  grads_agree(dev, "index_copy", [&](const VT& in) { return index_copy(in[0], 0, i1.to(in[0].device()), in[1]); }, {x, s}, 1e-12);
  for (bool acc : {false, true})
    grads_agree(dev, "index_put", [&](const VT& in) { return index_put(in[0], {i1.to(in[0].device()), remainder(i1, 4).to(in[0].device())}, in[1].select(1, 0), acc); }, {x, s}, 1e-12);
  // zeros in products: the masked formula
  const Tensor xz = x.masked_fill(x.abs() < 0.5, 0.0), sz = s.masked_fill(s.abs() < 0.5, 0.0);
  grads_agree(dev, "scatter_reduce prod with zeros", [&](const VT& in) { return scatter_reduce(in[0], 0, gi.to(in[0].device()), in[1], "prod"); }, {xz, sz}, 1e-12);
  grad2_agree(dev, "scatter_reduce prod twice", [&](const VT& in) { return scatter_reduce(in[0], 0, gi.to(in[0].device()), in[1], "prod"); }, {x, s}, 1e-10);
}

DEVICE_CASE("cuda index: int64 index_add and scatter_add wrap on overflow (two's complement) on both devices") {
  // two adds into one slot pass the maximum; expected values from unsigned arithmetic
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const auto wrapped = static_cast<std::int64_t>(static_cast<std::uint64_t>(big) + 5u);
  const std::vector<std::int64_t> want = {wrapped, 7};
  for (const Device& d : {Device::cpu(), dev}) {
    CAPTURE(d.str());
    const Tensor x = from_vector<std::int64_t>({big, 7}).to(d), idx = from_vector<std::int64_t>({0, 0}).to(d);
    const Tensor src = from_vector<std::int64_t>({2, 3}).to(d);
    CHECK(to_vector<std::int64_t>(index_add(x, 0, idx, src)) == want);
    CHECK(to_vector<std::int64_t>(scatter_add(x, 0, idx, src)) == want);
    // one slot, many adds (the GPU's atomic path): 5000 x 2^52 wraps past 2^63 twice
    const std::int64_t n = 5000, step = std::int64_t{1} << 52;
    const auto total = static_cast<std::int64_t>(static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(step));
    const Tensor many = full({n}, step, int64, d), zero = zeros({1}, int64, d);
    CHECK(to_vector<std::int64_t>(index_add(zero, 0, zeros({n}, int64, d), many)) == std::vector<std::int64_t>{total});
    CHECK(to_vector<std::int64_t>(scatter_add(zero, 0, zeros({n}, int64, d), many)) == std::vector<std::int64_t>{total});
  }
}

DEVICE_CASE("cuda index: gradients of the index ops are computed on the GPU") {
  manual_seed(13);
  const Tensor x = sample({6, 5}, float64), w = sample({4, 5}, float64);
  const Tensor idx = from_vector<std::int64_t>({1, 1, 5, 0});
  const Tensor gi = randint(0, 6, {4, 5});
  using F = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, F>> fs = {
      {"index_select", [](const Tensor& a, const Tensor& i, const Tensor&) { return index_select(a, 0, i).sin(); }},
      {"gather", [](const Tensor& a, const Tensor&, const Tensor& g) { return gather(a, 0, g).sin(); }},
      {"cat", [](const Tensor& a, const Tensor&, const Tensor&) { return cat({a, a * 2.0}, 0).narrow(0, 4, 4).sin(); }},
      {"flip", [](const Tensor& a, const Tensor&, const Tensor&) { return flip(a, {0, 1}).narrow(0, 1, 4).sin(); }},
      {"roll", [](const Tensor& a, const Tensor&, const Tensor&) { return roll(a, {2, -1}, {0, 1}).narrow(0, 2, 4).sin(); }},
      {"pad reflect", [](const Tensor& a, const Tensor&, const Tensor&) { return pad(a, {2, 1}, PadMode::reflect).narrow(1, 0, 5).narrow(0, 0, 4); }},
      {"tril", [](const Tensor& a, const Tensor&, const Tensor&) { return tril(a, -1).narrow(0, 0, 4).exp(); }},
  };
  for (const auto& [name, f] : fs) {
    CAPTURE(name);
    Tensor xc = x.clone().requires_grad_();
    f(xc, idx, gi).backward(w);
    Tensor xg = x.to(dev).requires_grad_();
    f(xg, idx.to(dev), gi.to(dev)).backward(w.to(dev));
    REQUIRE(xg.grad().defined());
    CHECK(xg.grad().device() == dev);
    CHECK(rel_diff(xg.grad(), xc.grad()) <= 1e-12);
  }
}

// Note [index in backward]: the forward checked the index, so the backward neither checks it again nor waits
// for the GPU (only scatter_reduce "prod" reads one flag: whether any product has a zero)
DEVICE_CASE("cuda index: the index ops' backward copies nothing to the host and waits for nothing") {
  manual_seed(17);
  const Tensor x = sample({6, 5}, float64).to(dev), s = sample({7, 5}, float64).to(dev);
  const Tensor i1 = from_vector<std::int64_t>({4, 0, 4, 1, 2, 0, 3}).to(dev), gi = randint(0, 6, {7, 5}).to(dev);
  const Tensor i2 = from_vector<std::int64_t>({1, 3, 0, 4, 4, 2, 1}).to(dev), flat = randint(-30, 30, {9}).to(dev);
  using F = std::function<Tensor(const Tensor&)>;
  const std::vector<std::tuple<std::string, F, int>> fs = {
      {"index_select", [&](const Tensor& a) { return index_select(a, 0, i1); }, 0},
      {"gather", [&](const Tensor& a) { return gather(a, 0, gi.narrow(0, 0, 6)); }, 0},
      {"scatter", [&](const Tensor& a) { return scatter(a, 0, gi, s * 1.0); }, 0},
      {"scatter value", [&](const Tensor& a) { return scatter(a, 0, gi, 2.0); }, 0},
      {"scatter_add", [&](const Tensor& a) { return scatter_add(a, 0, gi, s); }, 0},
      {"scatter_reduce mean", [&](const Tensor& a) { return scatter_reduce(a, 0, gi, s, "mean", false); }, 0},
      {"scatter_reduce amax", [&](const Tensor& a) { return scatter_reduce(a, 0, gi, s, "amax"); }, 0},
      {"scatter_reduce prod", [&](const Tensor& a) { return scatter_reduce(a, 0, gi, s, "prod"); }, 1},
      {"index_add", [&](const Tensor& a) { return index_add(a, 0, i1, s, 2.0); }, 0},
      {"index_copy", [&](const Tensor& a) { return index_copy(a, 0, i1, s); }, 0},
      {"index_reduce amin", [&](const Tensor& a) { return index_reduce(a, 0, i1, s, "amin"); }, 0},
      {"index_fill", [&](const Tensor& a) { return index_fill(a, 1, i1.narrow(0, 0, 3), 1.5); }, 0},
      {"take", [&](const Tensor& a) { return take(a, flat); }, 0},
      {"take_along_dim", [&](const Tensor& a) { return take_along_dim(a, gi.narrow(0, 0, 6), 0); }, 0},
      {"index", [&](const Tensor& a) { return a.index({i1, remainder(i2, 5)}); }, 0},
      {"index_put", [&](const Tensor& a) { return index_put(a, {i1, remainder(i2, 5)}, s.select(1, 0), true); }, 0},
  };
  for (const auto& [name, f, reads] : fs) {
    CAPTURE(name);
    const Tensor a = x.detach().requires_grad_();
    const Tensor y = f(a);
    const Tensor w = sample(y.shape(), float64).to(dev);
    std::string last;
    CHECK_MESSAGE(host_copies([&] { y.backward(w); }, &last) == reads, "copied: " << last);
    REQUIRE(a.grad().defined());
    const Tensor b = x.detach().requires_grad_();
    // host waits, counted when emulated: forward and backward less the forward alone
    const long both = emu_count(dev, EmuCounter::HostWaits, [&] { f(b).backward(w); });
    const long forward = emu_count(dev, EmuCounter::HostWaits, [&] { (void)f(x); });
    if (both >= 0) CHECK_MESSAGE(both - forward == reads, "waits: " << both << " - " << forward);
    CHECK(rel_diff(b.grad(), a.grad()) == 0);
  }
}

// Note [views and in-place history]: the root's new history and the refreshed views, on the device
DEVICE_CASE("cuda autograd: in place on views (copy_slices) and views made before a write give the CPU's gradients") {
  manual_seed(19);
  const Tensor x = sample({4, 6}, float64), w = sample({4, 2}, float64);
  using VT = std::vector<Tensor>;
  cuda_test::ExpectUntraceable untraceable;  // writes into views: refused by a trace (trace_replay)
  grads_agree(dev, "narrow mul_", [](const VT& in) {
    Tensor b = in[0] * 1.0;
    b.narrow(1, 2, 2).mul_(in[1]);
    return b.exp();
  }, {x, w}, 1e-12);
  grads_agree(dev, "transposed rows add_ and a sibling view", [](const VT& in) {
    Tensor b = in[0] * 2.0;
    Tensor sib = b.narrow(1, 1, 3);
    b.t().narrow(0, 0, 2).add_(in[1].t());
    return sib * sib;
  }, {x, w}, 1e-12);
  grads_agree(dev, "a root without history", [](const VT& in) {
    Tensor u = zeros({4, 6}, float64, in[0].device());
    u.narrow(1, 4, 2).copy_(in[1]);
    return u * in[0];
  }, {x, w}, 1e-12);
  grad2_agree(dev, "narrow mul_ twice", [](const VT& in) {
    Tensor b = in[0] * 1.0;
    b.narrow(1, 2, 2).mul_(in[1]);
    return b * b;
  }, {x, w}, 1e-10);
}

DEVICE_CASE("cuda index: sort, argsort and topk give the CPU's indices exactly (stable, NaN placed alike)") {
  manual_seed(31);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // line lengths around powers of two (the network pads to one), one, and long; many ties, NaN, -0 and +0
  for (const Shape& s : std::vector<Shape>{{7, 1}, {5, 2}, {3, 33}, {4, 64}, {2, 100}, {3, 1000}, {1, 5000}, {300, 9}}) {
    CAPTURE(s[0]);
    CAPTURE(s[1]);
    Tensor r = (randn(s, float64) * 3.0).round();
    r = where(rand(s) < 0.05, full({}, nan, float64), r);
    r = where(r == 0.0, where(rand(s) < 0.5, full({}, -0.0, float64), r), r);
    for (Dtype dt : {float64, float32, int64, bool_}) {
      CAPTURE(dt);
      const Tensor x = dt == bool_ ? r > 0.0 : r.to(dt);
      for (std::int64_t dim : {0, 1})
        for (bool descending : {false, true}) {
          CAPTURE(dim);
          CAPTURE(descending);
          const auto [cv, ci] = sort(x, dim, descending);
          const auto [gv, gi] = sort(x.to(dev), dim, descending);
          CHECK(gi.device() == dev);
          CHECK(rel_diff(gi, ci) == 0);
          CHECK(rel_diff(gv, cv) == 0);
          CHECK(rel_diff(argsort(x.to(dev).t(), dim, descending), argsort(x.t(), dim, descending)) == 0);  // strided
        }
      const std::int64_t k = std::min<std::int64_t>(3, s[1]);
      const auto [tv, ti] = topk(x.to(dev), k, 1, true);
      CHECK(rel_diff(ti, std::get<1>(topk(x, k, 1, true))) == 0);
      CHECK(rel_diff(tv, std::get<0>(topk(x, k, 1, true))) == 0);
    }
  }
  // the gradient (gather's scatter) on the device
  const Tensor x = sample({6, 40}, float64);
  grads_agree(dev, "sort", [](const std::vector<Tensor>& a) { return std::get<0>(sort(a[0], 1, true)); }, {x}, 1e-12);
  grads_agree(dev, "topk", [](const std::vector<Tensor>& a) { return std::get<0>(topk(a[0], 5, 0)); }, {x}, 1e-12);
  CHECK_THROWS_WITH_AS(sort(sample({3}, complex64).to(dev)), doctest::Contains("[sort] not supported for complex"), Error);
  CHECK_THROWS_WITH_AS(topk(sample({3}, float32).to(dev), 4), doctest::Contains("[topk] k (4) out of range"), Error);
}

DEVICE_CASE("cuda index: kthvalue, median, quantile, msort, searchsorted and bucketize agree with the CPU exactly") {
  manual_seed(32);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor r = (randn({6, 37}, float64) * 3.0).round();
  r = where(rand({6, 37}) < 0.08, full({}, nan, float64), r);
  for (Dtype dt : {float64, float32, int64}) {
    CAPTURE(dt);
    const Tensor x = r.to(dt), g = x.to(dev);
    for (std::int64_t d : {0, 1}) {
      CAPTURE(d);
      const auto same = [](const std::tuple<Tensor, Tensor>& a, const std::tuple<Tensor, Tensor>& b) {
        CHECK(rel_diff(std::get<0>(a), std::get<0>(b)) == 0);
        CHECK(rel_diff(std::get<1>(a), std::get<1>(b)) == 0);
      };
      same(kthvalue(g, 3, d, true), kthvalue(x, 3, d, true));
      same(median(g, d), median(x, d));
      same(nanmedian(g.t(), 1 - d), nanmedian(x.t(), 1 - d));
      CHECK(rel_diff(msort(g), msort(x)) == 0);
      if (dt != int64)
        for (const std::string how : {"linear", "lower", "higher", "midpoint", "nearest"}) {
          const Tensor q = from_vector(std::vector<double>{0, 0.3, 0.5, 1});
          CHECK(rel_diff(quantile(g, q.to(dev), d, false, how), quantile(x, q, d, false, how)) == 0);
          CHECK(rel_diff(nanquantile(g, 0.7, d, true, how), nanquantile(x, 0.7, d, true, how)) == 0);
        }
    }
    CHECK(rel_diff(median(g), median(x)) == 0);
    CHECK(rel_diff(nanmedian(g), nanmedian(x)) == 0);
    // searchsorted: a 1-d and a batched sequence, both sides, NaN values, a sorter
    const Tensor s1 = std::get<0>(sort(x.reshape({-1}))), s2 = std::get<0>(sort(x, 1));
    const Tensor v = ((randn({6, 50}, float64) * 4.0).round()).to(dt);
    for (bool right : {false, true}) {
      CHECK(rel_diff(searchsorted(s1.to(dev), v.to(dev), right), searchsorted(s1, v, right)) == 0);
      CHECK(rel_diff(searchsorted(s2.to(dev), v.to(dev), right), searchsorted(s2, v, right)) == 0);
      CHECK(rel_diff(searchsorted(s1.to(dev), r.to(dt).to(dev), right), searchsorted(s1, r.to(dt), right)) == 0);
      CHECK(rel_diff(bucketize(v.to(dev).t(), s1.narrow(0, 0, 20).to(dev), right), bucketize(v.t(), s1.narrow(0, 0, 20), right)) == 0);
    }
    const Tensor perm = argsort(x.reshape({-1}));
    CHECK(rel_diff(searchsorted(x.reshape({-1}).to(dev), v.to(dev), false, "right", perm.to(dev)),
                   searchsorted(x.reshape({-1}), v, false, "right", perm)) == 0);
    CHECK(searchsorted(s1.to(dev), 2.5).device() == dev);
  }
  // gradients on the device
  const Tensor x = sample({6, 40}, float64);
  grads_agree(dev, "kthvalue", [](const std::vector<Tensor>& a) { return std::get<0>(kthvalue(a[0], 7, 1)); }, {x}, 1e-12);
  grads_agree(dev, "median", [](const std::vector<Tensor>& a) { return std::get<0>(median(a[0], 0)) + median(a[0]); }, {x}, 1e-12);
  grads_agree(dev, "nanmedian", [](const std::vector<Tensor>& a) { return std::get<0>(nanmedian(a[0], 1)) + nanmedian(a[0]); }, {x}, 1e-12);
  grads_agree(dev, "msort", [](const std::vector<Tensor>& a) { return msort(a[0]); }, {x}, 1e-12);
  grads_agree(dev, "quantile", [](const std::vector<Tensor>& a) { return quantile(a[0], 0.35, 1) + nanquantile(a[0], 0.8); }, {x}, 1e-12);
  CHECK_THROWS_WITH_AS(quantile(x.to(dev), from_vector(std::vector<double>{0.5})), doctest::Contains("[quantile]"), Error);
  CHECK_THROWS_WITH_AS(quantile(x.to(dev), from_vector(std::vector<double>{1.5}).to(dev)),
                       doctest::Contains("[quantile] q values must lie in [0, 1], got 1.5"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(x.to(dev), x), doctest::Contains("[searchsorted]"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(x.reshape({-1}).to(dev), x.to(dev), false, std::nullopt, full({240}, 240, int64, dev)),
                       doctest::Contains("[searchsorted] sorter index 240 out of range"), Error);
}

DEVICE_CASE("cuda index: repeat, tile, rot90, meshgrid, the selections, unique and take agree with the CPU") {
  manual_seed(33);
  using I = std::vector<std::int64_t>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Dtype dt : {float64, float32, int64, bool_, complex64}) {
    CAPTURE(dt);
    Tensor r = (randn({5, 6}, float64) * 1.5).round();
    if (dt == float64 || dt == float32) r = where(rand({5, 6}) < 0.1, full({}, nan, float64), r);
    const Tensor x = dt == bool_ ? r > 0.0 : r.to(dt), g = x.to(dev);
    const auto same = [&](const Tensor& got, const Tensor& want) {
      CHECK(got.device() == dev);
      CHECK(rel_diff(got, want) == 0);
    };
    same(repeat(g, {2, 1, 3}), repeat(x, {2, 1, 3}));
    same(tile(g.t(), {2}), tile(x.t(), {2}));
    same(rot90(g, 3), rot90(x, 3));
    same(repeat_interleave(g, 2, 1), repeat_interleave(x, 2, 1));
    same(repeat_interleave(g, from_vector(I{0, 1, 2, 0, 3}).to(dev), 0), repeat_interleave(x, from_vector(I{0, 1, 2, 0, 3}), 0));
    same(nonzero(g), nonzero(x));
    same(argwhere(g.t()), argwhere(x.t()));
    same(count_nonzero(g, {1}), count_nonzero(x, {1}));
    const Tensor mask = rand({5, 6}) < 0.4;
    same(masked_select(g, mask.to(dev)), masked_select(x, mask));
    same(masked_select(g, mask.select(0, 1).to(dev)), masked_select(x, mask.select(0, 1)));
    same(take(g, from_vector(I{3, -2, 29, 0}).to(dev)), take(x, from_vector(I{3, -2, 29, 0})));
    const Tensor idx = (rand({5, 4}) * 6.0).floor().to(int64);
    same(take_along_dim(g, idx.to(dev), 1), take_along_dim(x, idx, 1));
    same(take_along_dim(g, idx.narrow(0, 0, 1).to(dev), 1), take_along_dim(x, idx.narrow(0, 0, 1), 1));
    if (dt != complex64) {
      for (bool consecutive : {false, true})
        for (std::optional<std::int64_t> dim : {std::optional<std::int64_t>(), std::optional<std::int64_t>(0), std::optional<std::int64_t>(1)}) {
          const auto [gv, gi, gc] = consecutive ? unique_consecutive(g, true, true, dim) : unique(g, true, true, true, dim);
          const auto [cv, ci, cc] = consecutive ? unique_consecutive(x, true, true, dim) : unique(x, true, true, true, dim);
          same(gv, cv);
          same(gi, ci);
          same(gc, cc);
        }
    }
  }
  const auto gm = meshgrid({from_vector(std::vector<double>{1, 2}).to(dev), from_vector(std::vector<double>{3, 4, 5}).to(dev)}, "xy");
  CHECK(rel_diff(gm[1], meshgrid({from_vector(std::vector<double>{1, 2}), from_vector(std::vector<double>{3, 4, 5})}, "xy")[1]) == 0);
  CHECK(unbind(sample({3, 2}, float64).to(dev), 1)[1].device() == dev);
  // gradients on the device
  const Tensor x = sample({4, 6}, float64);
  const Tensor mask = x > 0.3;
  grads_agree(dev, "repeat", [](const std::vector<Tensor>& a) { return repeat(a[0], {2, 1, 3}) * 1.5; }, {x}, 1e-12);
  grads_agree(dev, "tile", [](const std::vector<Tensor>& a) { return tile(a[0], {2, 2}) * 1.5; }, {x}, 1e-12);
  grads_agree(dev, "rot90", [](const std::vector<Tensor>& a) { return rot90(a[0], 1) * 1.5; }, {x}, 1e-12);
  grads_agree(dev, "meshgrid", [](const std::vector<Tensor>& a) { return meshgrid({a[0].select(0, 0), a[0].select(0, 1)})[0] * 1.5; }, {x}, 1e-12);
  grads_agree(dev, "unbind", [](const std::vector<Tensor>& a) { return unbind(a[0], 1)[2] * 1.5; }, {x}, 1e-12);
  grads_agree(dev, "repeat_interleave", [](const std::vector<Tensor>& a) {
    return repeat_interleave(a[0], 2, 0) + repeat_interleave(a[0], from_vector(I{1, 0, 2, 1}).to(a[0].device()), 0).sum();
  }, {x}, 1e-12);
  grads_agree(dev, "masked_select", [&](const std::vector<Tensor>& a) { return masked_select(a[0], mask.to(a[0].device())); }, {x}, 1e-12);
  grads_agree(dev, "take", [](const std::vector<Tensor>& a) { return take(a[0], from_vector(I{0, -1, 5, 5}).to(a[0].device())); }, {x}, 1e-12);
  grads_agree(dev, "take_along_dim", [](const std::vector<Tensor>& a) {
    return take_along_dim(a[0], from_vector(I{5, 0, 5}, Shape{1, 3}).to(a[0].device()), 1);
  }, {x}, 1e-12);
  CHECK_THROWS_WITH_AS(take(x.to(dev), from_vector(I{24}).to(dev)), doctest::Contains("[take] index 24 out of range"), Error);
  CHECK_THROWS_WITH_AS(masked_select(x.to(dev), mask), doctest::Contains("[masked_select]"), Error);
}

DEVICE_CASE("cuda index: cat, flip, roll, pad, tril/triu, masks and einsum agree with the CPU") {
  manual_seed(14);
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    const Tensor a = sample({3, 4, 5}, dt), b = sample({3, 2, 5}, dt);
    const Tensor ag = a.to(dev), bg = b.to(dev);
    CHECK(rel_diff(cat({ag, bg, ag}, 1), cat({a, b, a}, 1)) == 0);
    CHECK(rel_diff(stack({ag, ag}, 2), stack({a, a}, 2)) == 0);
    CHECK(rel_diff(flip(ag, {0, 2}), flip(a, {0, 2})) == 0);
    CHECK(rel_diff(roll(ag, {1, -7}, {1, 2}), roll(a, {1, -7}, {1, 2})) == 0);
    CHECK(rel_diff(roll(ag, {4}), roll(a, {4})) == 0);
    CHECK(rel_diff(tril(ag, 1), tril(a, 1)) == 0);
    CHECK(rel_diff(triu(ag, -2), triu(a, -2)) == 0);
    for (PadMode m : {PadMode::constant, PadMode::reflect, PadMode::replicate, PadMode::circular}) {
      CAPTURE(static_cast<int>(m));
      CHECK(rel_diff(pad(ag, {2, 3, 1, 0}, m), pad(a, {2, 3, 1, 0}, m)) == 0);
      CHECK(rel_diff(pad(ag, {-1, 2}, m), pad(a, {-1, 2}, m)) == 0);
    }
    const Tensor mask = from_vector<bool>({true, false, true, true});
    CHECK(rel_diff(ag.index({Slice(), mask.to(dev)}), a.index({Slice(), mask})) == 0);
    CHECK(rel_diff(ag.index({Slice(), Slice(), from_vector<std::int64_t>({4, 0}).to(dev)}),
                   a.index({Slice(), Slice(), from_vector<std::int64_t>({4, 0})})) == 0);
  }
  const Tensor x = sample({4, 3, 6}, complex64), w = sample({3, 5, 6}, complex64);
  CHECK(rel_diff(einsum("bix,iox->box", {x.to(dev), w.to(dev)}), einsum("bix,iox->box", {x, w})) <= 2e-5);
  CHECK(rel_diff(arange(2, 17, 3, float32, dev), arange(2, 17, 3, float32)) == 0);
  CHECK(rel_diff(linspace(-1, 2, 9, float64, dev), linspace(-1, 2, 9, float64)) == 0);
  CHECK(rel_diff(eye(3, 4, complex64, dev), eye(3, 4, complex64)) == 0);
  CHECK(to_vector<float>(arange(4, float32, dev)) == std::vector<float>{0, 1, 2, 3});
}

DEVICE_CASE("cuda random: a seed draws the same numbers on the GPU as on the CPU") {
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    for (std::int64_t n : {1, 2, 7, 100003}) {  // odd counts leave the last counter half used
      CAPTURE(n);
      Generator gc(42), gg(42);
      CHECK(rel_diff(rand({n}, dt, dev, &gg), rand({n}, dt, Device::cpu(), &gc)) == 0);
      CHECK(gc.offset() == gg.offset());
      // normals: the same counters, log/sqrt/cos of the device's libm (last-bit differences)
      CHECK(rel_diff(randn({n}, dt, dev, &gg), randn({n}, dt, Device::cpu(), &gc)) <= 1e-13);
    }
  }
  Generator gc(7), gg(7);
  CHECK(rel_diff(randint(-50, 1000, {999}, int64, dev, &gg), randint(-50, 1000, {999}, int64, Device::cpu(), &gc)) == 0);
  CHECK(rel_diff(randint(0, 2, {31}, bool_, dev, &gg), randint(0, 2, {31}, bool_, Device::cpu(), &gc)) == 0);
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK(to_vector<std::int64_t>(randint(lo, hi, {999}, int64, dev, &gg)) ==
        to_vector<std::int64_t>(randint(lo, hi, {999}, int64, Device::cpu(), &gc)));
  CHECK(rel_diff(randperm(40, int64, dev, &gg), randperm(40, int64, Device::cpu(), &gc)) == 0);
  // statistics of a large draw on the device
  const Tensor z = randn({1 << 20}, float64, dev);
  CHECK(std::abs(z.mean().item<double>()) < 5e-3);
  CHECK(std::abs((z * z).mean().item<double>() - 1.0) < 5e-3);
}

DEVICE_CASE("cuda ops: pow with a scalar exponent and masked_fill agree with the CPU") {
  manual_seed(15);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const Tensor x = sample({9, 8}, dt).abs().to(dt) + 0.25;
    const Tensor xg = x.to(dev);
    for (double e : {2.0, 0.5, -1.5, 3.0}) {
      CAPTURE(e);
      CHECK(rel_diff(pow(xg, e), pow(x, e)) <= (dt == float32 || dt == complex64 ? 2e-6 : 1e-14));
    }
    const Tensor m = randn({8}) > 0.0;  // broadcast over rows
    CHECK(rel_diff(xg.masked_fill(m.to(dev), 7.0), x.masked_fill(m, 7.0)) == 0);
    Tensor y = xg.clone();
    y.masked_fill_(m.to(dev), -1.0);
    CHECK(rel_diff(y, x.masked_fill(m, -1.0)) == 0);
  }
  // gradient of pow through the GPU
  const Tensor x = sample({5, 4}, float64).abs() + 0.5, w = sample({5, 4}, float64);
  Tensor xc = x.clone().requires_grad_(), xg = x.to(dev).requires_grad_();
  pow(xc, 2.5).backward(w);
  pow(xg, 2.5).backward(w.to(dev));
  CHECK(rel_diff(xg.grad(), xc.grad()) <= 1e-13);
}

TEST_CASE("cuda copies: host <-> device round trips across the pinned staging chunks are exact" * doctest::skip(!kGpu)) {
  // below the staging threshold, one chunk, a partial second chunk, and several chunks (8 MiB each)
  for (std::int64_t bytes : {std::int64_t{1} << 19, std::int64_t{1} << 20, (std::int64_t{8} << 20) + 4096,
                             (std::int64_t{41} << 20) + 8}) {
    CAPTURE(bytes);
    const Tensor x = arange(bytes / 8, float64) * 0.5 - 3.0;
    const Tensor g = x.to(kDev);
    CHECK(rel_diff(g * 2.0, x * 2.0) == 0);
    CHECK(rel_diff(g.to(Device::cpu()), x) == 0);
  }
}

TEST_CASE("cuda::record_stream refuses tensors it cannot track") {
  const Tensor x = ones({3});
  CHECK_THROWS_WITH_AS(cuda::record_stream(x, cuda::Stream()), doctest::Contains("expected a CUDA tensor, got one on cpu"), Error);
  CHECK_THROWS_WITH_AS(cuda::record_stream(Tensor(), cuda::Stream()), doctest::Contains("undefined"), Error);
}

TEST_CASE("cuda::record_stream keeps a block from reuse until the other stream's work is done" * doctest::skip(!kGpu)) {
  const cuda::Stream side = cuda::Stream::create(0), main = cuda::current_stream(0);
  Tensor x = arange(1 << 22, float32, kDev);  // made on the main stream
  cuda::synchronize();
  const std::int64_t cached0 = memory_stats(kDev).cached_bytes;
  cuda::set_current_stream(side);
  Tensor y = x * 2.0;  // reads x on the side stream
  cuda::record_stream(x, side);
  cuda::set_current_stream(main);
  x = Tensor();  // freed while the side stream may still read it
  Tensor z = zeros({1 << 22}, float32, kDev);  // must not land on x's block before the side work ends
  side.synchronize();
  CHECK(rel_diff(y, arange(1 << 22, float32) * 2.0) == 0);
  CHECK(memory_stats(kDev).cached_bytes >= cached0);
  CHECK_THROWS_WITH_AS(cuda::record_stream(z, cuda::Stream::from_native(nullptr, 1)), doctest::Contains("stream on cuda:1"), Error);
  cuda::record_stream(empty({0}, float32, kDev), side);  // no elements, no block: nothing to record
}

DEVICE_CASE("cuda ops: complex and polar build complex tensors on the GPU") {
  manual_seed(16);
  for (Dtype dt : {float32, float64}) {
    const Tensor a = sample({6, 7}, dt), b = sample({7}, dt);
    CHECK(rel_diff(complex(a.to(dev), b.to(dev)), complex(a, b)) == 0);
    CHECK(rel_diff(polar(a.abs().to(dev), b.to(dev)), polar(a.abs(), b)) <= (dt == float32 ? 1e-6 : 1e-15));
  }
}

TEST_CASE("Device::parse reads the names str() writes") {
  CHECK(Device::parse("cpu") == Device::cpu());
  CHECK(Device::parse("cuda") == Device::cuda(0));
  CHECK(Device::parse("cuda:3") == Device::cuda(3));
  CHECK(Device::parse(Device::cuda(12).str()) == Device::cuda(12));
  for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", "cuda:99999999999"})
    CHECK_THROWS_WITH_AS(Device::parse(bad), doctest::Contains("[Device] unknown device"), Error);
}

DEVICE_CASE("cuda index: few long scatter lines (atomic adds) agree with the CPU to rounding") {
  manual_seed(17);
  for (Dtype dt : {int64, float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const Tensor x = sample({1000}, dt), src = sample({100000}, dt);
    const Tensor idx = randint(0, 1000, {100000});
    const double t = dt == int64 ? 0 : (dt == float32 || dt == complex64 ? 1e-5 : 1e-12);
    CHECK(rel_diff(index_add(x.to(dev), 0, idx.to(dev), src.to(dev)), index_add(x, 0, idx, src)) <= t);
    CHECK(rel_diff(scatter_add(x.to(dev), 0, idx.to(dev), src.to(dev)), scatter_add(x, 0, idx, src)) <= t);
    // the gradient of x[idx] is such an index_add
    if (dt == float64) {
      Tensor xc = x.clone().requires_grad_(), xg = x.to(dev).requires_grad_();
      index_select(xc, 0, idx).sum().backward();
      index_select(xg, 0, idx.to(dev)).sum().backward();
      CHECK(rel_diff(xg.grad(), xc.grad()) <= 1e-12);
    }
  }
}

// The layouts the other index cases leave out: several positions per atomic line (rows of 8 added into
// along dim 0), a scatter_add index smaller than src in the other dims, flipped and transposed inputs,
// and an index_select whose pairs outnumber one grid (65536 blocks of 256 threads).
DEVICE_CASE("cuda index: atomic rows, small scatter indices, flipped inputs and grid-sized selects agree") {
  manual_seed(23);
  for (Dtype dt : {int64, float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const double t = dt == int64 ? 0 : (dt == float32 || dt == complex64 ? 1e-5 : 1e-12);
    const Tensor x = sample({1000, 8}, dt), src = sample({5000, 8}, dt), idx = randint(0, 1000, {5000});
    CHECK(rel_diff(index_add(x.to(dev), 0, idx.to(dev), src.to(dev)), index_add(x, 0, idx, src)) <= t);
    const Tensor y = sample({3, 4, 50}, dt), s2 = sample({5, 6, 120}, dt), i2 = randint(0, 50, {3, 4, 100});
    CHECK(rel_diff(scatter_add(y.to(dev), 2, i2.to(dev), s2.to(dev)), scatter_add(y, 2, i2, s2)) <= t);
    const Tensor f = flip(sample({7, 9}, dt), {0, 1}), fi = randint(0, 7, {11});
    CHECK(rel_diff(index_select(flip(f.to(dev), {0}), 0, fi.to(dev)), index_select(flip(f, {0}), 0, fi)) == 0);
    const Tensor gi = randint(0, 7, {9, 5});  // a transposed (non-contiguous) input
    CHECK(rel_diff(gather(f.to(dev).t(), 1, gi.to(dev)), gather(f.t(), 1, gi)) == 0);
  }
  const Tensor big = sample({5000, 4000}, float32), bi = randint(0, 5000, {5000});  // 2e7 pairs
  CHECK(rel_diff(index_select(big.to(dev), 0, bi.to(dev)), index_select(big, 0, bi)) == 0);
}

DEVICE_CASE("cuda ops: contiguous ops whose output type is narrower (comparisons, |z|) agree with the CPU") {
  manual_seed(18);
  for (Dtype dt : {float32, float64, int64}) {
    const Tensor a = sample({1000}, dt), b = sample({1000}, dt);
    const Tensor ag = a.to(dev), bg = b.to(dev);
    CHECK(rel_diff(ag < bg, a < b) == 0);
    CHECK(rel_diff(ag == bg, a == b) == 0);
    CHECK(rel_diff(ag.isfinite(), a.isfinite()) == 0);
  }
  const Tensor z = sample({1000}, complex128);
  CHECK(rel_diff(z.to(dev).abs(), z.abs()) <= 1e-15);
  CHECK(rel_diff(z.to(complex64).to(dev).abs(), z.to(complex64).abs()) <= 1e-6);
}
