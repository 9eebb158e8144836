// CPU-vs-GPU agreement of the reductions with CUDA kernels beyond sum/prod/max (src/cuda/reduce.cu):
// norm, var/std, logsumexp, argmax/argmin, max/min along a dim, cumsum, and their gradients computed on
// the GPU. The agreement cases need a GPU (skipped without one); the last case checks a CPU-only build's
// glue throws a named error.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "../src/cuda/ops.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double tol(Dtype dt) { return dt == Dtype::Float32 || dt == Dtype::Complex64 ? 2e-5 : 1e-12; }

using F = std::function<Tensor(const Tensor&)>;

/// f on x's copy on `dev` equals f on x (CPU), also for a transposed (non-contiguous) x.
void check_op(const Device& dev, const F& f, const Tensor& x, double t) {
  CHECK(rel_diff(f(x.to(dev)), f(x)) <= t);
  CHECK(rel_diff(f(x.to(dev).transpose(0, -1)), f(x.transpose(0, -1))) <= t);  // strided input
}

/// The gradient of sum(f(x) * w) w.r.t. x, computed on `dev`, equals the CPU's (float64).
void check_grad(const Device& dev, const F& f, const Tensor& x, double t = 1e-12) {
  Tensor xc = x.clone().requires_grad_();
  const Tensor yc = f(xc);
  const Tensor w = sample(yc.shape(), yc.dtype());
  yc.backward(w);
  Tensor xg = x.to(dev).clone().requires_grad_();  // a leaf of its own (also where to() is a no-op)
  f(xg).backward(w.to(dev));
  REQUIRE(xg.grad().defined());
  CHECK(xg.grad().device() == dev);
  CHECK(rel_diff(xg.grad(), xc.grad()) <= t);
}

}  // namespace

DEVICE_CASE("cuda reduce: norm agrees with the CPU for every p") {
  manual_seed(11);
  const std::vector<double> ps = {0, 1, 2, kInf, -kInf, 3, 0.5};
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const Tensor x = sample({5, 7, 300}, dt);
    CAPTURE(dt);
    for (double p : ps) {
      CAPTURE(p);
      const double t = p == 0.5 || p == 3 ? 10 * tol(dt) : tol(dt);
      check_op(dev, [p](const Tensor& a) { return norm(a, p); }, x, t);
      check_op(dev, [p](const Tensor& a) { return norm(a, p, {1}); }, x, t);
      check_op(dev, [p](const Tensor& a) { return a.norm(p, {0, 2}, true); }, x, t);
      check_op(dev, [p](const Tensor& a) { return norm(a, p, {-1}); }, x, t);
    }
    check_op(dev, [](const Tensor& a) { return norm(a, "fro", {0, 1}); }, x, tol(dt));
    CHECK(norm(x.to(dev)).dtype() == to_real(dt));
  }
  // exact zeros, NaN and inf entries
  Tensor s = from_vector(std::vector<double>{0, 3, -4, 0, std::nan(""), 1, kInf, -2}).reshape({4, 2});
  for (double p : ps) {
    CAPTURE(p);
    CHECK(rel_diff(norm(s.to(dev), p, {1}), norm(s, p, {1})) <= 1e-12);
  }
  // empty reductions: sums give 0, inf norms have no identity
  const Tensor e = zeros({0, 3}, float32, dev);
  CHECK(rel_diff(norm(e, 2, {0}), zeros({3}, float32)) == 0);
  CHECK(rel_diff(norm(e, 1), zeros({}, float32)) == 0);
  CHECK_THROWS_WITH_AS(norm(e, kInf, {0}), doctest::Contains("cannot reduce over an empty dim"), Error);
  CHECK_THROWS_WITH_AS(norm(e, -kInf), doctest::Contains("[norm] cannot reduce over an empty dim"), Error);
  CHECK_THROWS_WITH_AS(norm(ones({3}, int64, dev)), doctest::Contains("[norm] expected a floating or complex"), Error);
  CHECK_THROWS_WITH_AS(norm(ones({3}, float32, dev), -1.0), doctest::Contains("p must be >= 0"), Error);
}

DEVICE_CASE("cuda reduce: var and std agree with the CPU") {
  manual_seed(12);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const Tensor x = sample({6, 9, 290}, dt) + 3.0;  // an offset: two passes keep it accurate
    CAPTURE(dt);
    for (double c : {0.0, 1.0, 2.5}) {
      CAPTURE(c);
      check_op(dev, [c](const Tensor& a) { return var(a, {}, c); }, x, tol(dt));
      check_op(dev, [c](const Tensor& a) { return var(a, {2}, c); }, x, tol(dt));
      check_op(dev, [c](const Tensor& a) { return a.std({0, 1}, c, true); }, x, tol(dt));
      check_op(dev, [c](const Tensor& a) { return phasor::std(a, {1}, c); }, x, tol(dt));
    }
    CHECK(var(x.to(dev)).dtype() == to_real(dt));
  }
  // one element with correction 1: 0/0 = NaN on both; an empty dim: NaN too
  const Tensor one = sample({4, 1}, float64);
  CHECK(rel_diff(var(one.to(dev), {1}), var(one, {1})) == 0);
  CHECK(var(one.to(dev), {1}).isnan().all().item<bool>());
  CHECK(rel_diff(var(zeros({0, 2}, float64, dev), {0}), var(zeros({0, 2}, float64), {0})) == 0);
  CHECK_THROWS_WITH_AS(var(ones({3}, int64, dev)), doctest::Contains("[var] expected a floating or complex"), Error);
  CHECK_THROWS_WITH_AS(var(ones({3}, float32, dev), {4}), doctest::Contains("[var]"), Error);
}

DEVICE_CASE("cuda reduce: logsumexp agrees with the CPU") {
  manual_seed(13);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const Tensor x = sample({5, 8, 270}, dt) * 20.0;  // large values: the shift matters
    CAPTURE(dt);
    check_op(dev, [](const Tensor& a) { return logsumexp(a); }, x, tol(dt));
    check_op(dev, [](const Tensor& a) { return logsumexp(a, {2}); }, x, tol(dt));
    check_op(dev, [](const Tensor& a) { return a.logsumexp({0, 1}, true); }, x, tol(dt));
    CHECK(logsumexp(x.to(dev)).dtype() == dt);
  }
  // rows of -inf, with a +inf, with a NaN; an empty reduction gives -inf
  const Tensor s = from_vector(std::vector<double>{-kInf, -kInf, kInf, 1, std::nan(""), 2, 0, 1000}).reshape({4, 2});
  CHECK(rel_diff(logsumexp(s.to(dev), {1}), logsumexp(s, {1})) <= 1e-12);
  const Tensor e = logsumexp(zeros({0, 3}, float64, dev), {0});
  CHECK(rel_diff(e, logsumexp(zeros({0, 3}, float64), {0})) == 0);
  CHECK((e == -kInf).all().to(Device::cpu()).item<bool>());
  CHECK_THROWS_WITH_AS(logsumexp(ones({3}, int64, dev)), doctest::Contains("[logsumexp] expected a floating"), Error);
}

DEVICE_CASE("cuda reduce: argmax, argmin and max/min along a dim agree with the CPU") {
  manual_seed(14);
  for (Dtype dt : {bool_, int64, float32, float64}) {
    // ints and bools tie a lot: the first index of the extreme must win; 1000 > the block's threads
    const Tensor x = sample({4, 6, 1000}, dt);
    CAPTURE(dt);
    check_op(dev, [](const Tensor& a) { return argmax(a); }, x, 0);
    check_op(dev, [](const Tensor& a) { return argmin(a); }, x, 0);
    check_op(dev, [](const Tensor& a) { return argmax(a, 2); }, x, 0);
    check_op(dev, [](const Tensor& a) { return argmin(a, 0, true); }, x, 0);
    check_op(dev, [](const Tensor& a) { return a.argmax(-2, true); }, x, 0);
    check_op(dev, [](const Tensor& a) { return a.argmin(std::nullopt, true); }, x, 0);
    check_op(dev, [](const Tensor& a) { return std::get<0>(max(a, 2)); }, x, 0);
    check_op(dev, [](const Tensor& a) { return std::get<1>(max(a, 2)); }, x, 0);
    check_op(dev, [](const Tensor& a) { return std::get<0>(min(a, 1, true)); }, x, 0);
    check_op(dev, [](const Tensor& a) { return std::get<1>(min(a, 1, true)); }, x, 0);
    CHECK(argmax(x.to(dev), 1).dtype() == int64);
  }
  // NaN wins (the first one); all-equal rows give index 0
  const double nan = std::nan("");
  const Tensor s = from_vector(std::vector<double>{1, nan, 3, nan, 2, 2, 2, 2, -kInf, 5, kInf, 0}).reshape({3, 4});
  for (bool mx : {true, false}) {
    const Tensor c = mx ? argmax(s, 1) : argmin(s, 1), g = mx ? argmax(s.to(dev), 1) : argmin(s.to(dev), 1);
    CHECK(rel_diff(g, c) == 0);
  }
  CHECK(to_vector<std::int64_t>(argmax(s.to(dev), 1).to(Device::cpu())) == std::vector<std::int64_t>{1, 0, 2});
  CHECK(argmax(s.to(dev)).to(Device::cpu()).item<std::int64_t>() == 1);
  // a 0-dim tensor
  CHECK(argmax(full({}, 2.0, float64, dev)).to(Device::cpu()).item<std::int64_t>() == 0);
  // errors: empty dims, complex input
  CHECK_THROWS_WITH_AS(argmax(zeros({3, 0}, float32, dev), 1), doctest::Contains("[argmax] cannot reduce over an empty dim"),
                       Error);
  CHECK_THROWS_WITH_AS(argmin(zeros({0}, float32, dev)), doctest::Contains("(flattened)"), Error);
  CHECK_THROWS_WITH_AS(max(zeros({2, 0}, float32, dev), 1), doctest::Contains("[max] cannot reduce"), Error);
  CHECK_THROWS_WITH_AS(argmax(ones({3}, complex64, dev)), doctest::Contains("not defined for complex"), Error);
}

DEVICE_CASE("cuda reduce: cumsum agrees with the CPU") {
  manual_seed(15);
  for (Dtype dt : {bool_, int64, float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const double t = dt == bool_ || dt == int64 ? 0 : 10 * tol(dt);
    const Tensor x = sample({3, 300, 5}, dt);  // short columns: one thread per column
    for (std::int64_t d : {0, 1, 2, -1}) {
      CAPTURE(d);
      check_op(dev, [d](const Tensor& a) { return cumsum(a, d); }, x, t);
    }
    const Tensor y = sample({2, 5000}, dt);  // few long rows: a block per row, chunked scans
    check_op(dev, [](const Tensor& a) { return a.cumsum(1); }, y, t);
    check_op(dev, [](const Tensor& a) { return a.cumsum(0); }, y, t);
    const Tensor z = sample({3, 700, 2}, dt);  // long strided columns, few of them
    check_op(dev, [](const Tensor& a) { return cumsum(a, 1); }, z, t);
    const Tensor u = sample({3, 45, 5}, dt);  // serial columns long enough for several loads in flight, and a tail
    check_op(dev, [](const Tensor& a) { return cumsum(a, 1); }, u, t);
    CHECK(cumsum(x.to(dev), 0).dtype() == (dt == bool_ ? int64 : dt));
  }
  // the gradient is the reversed running sum (serial columns here)
  check_grad(dev, [](const Tensor& a) { return cumsum(a, 1); }, sample({3, 45, 5}, float64));
  CHECK(cumsum(zeros({0, 4}, float32, dev), 0).shape() == Shape{0, 4});
  CHECK(cumsum(zeros({4, 0}, float32, dev), 0).shape() == Shape{4, 0});
  CHECK(rel_diff(cumsum(full({}, 3.0, float64, dev), 0), full({}, 3.0, float64)) == 0);
  CHECK_THROWS_WITH_AS(cumsum(ones({3}, float32, dev), 1), doctest::Contains("[cumsum]"), Error);
}

DEVICE_CASE("cuda reduce: cumprod agrees with the CPU, gradients with zeros included") {
  manual_seed(16);
  for (Dtype dt : {bool_, int64, float32, float64, complex64, complex128}) {
    CAPTURE(dt);
    const double t = dt == bool_ || dt == int64 ? 0 : 10 * tol(dt);
    // factors near 1 keep long products in range (int64 products wrap, identically in any order)
    auto draw = [dt](const Shape& s) { return dt == bool_ || dt == int64 ? sample(s, dt) : sample(s, dt) * 0.05 + 1.0; };
    const Tensor x = draw({3, 300, 5});  // short columns: one thread per column
    for (std::int64_t d : {0, 1, 2, -1}) {
      CAPTURE(d);
      check_op(dev, [d](const Tensor& a) { return cumprod(a, d); }, x, t);
    }
    const Tensor y = draw({2, 5000});  // few long rows: a block per row, chunked scans
    check_op(dev, [](const Tensor& a) { return a.cumprod(1); }, y, t);
    check_op(dev, [](const Tensor& a) { return a.cumprod(0); }, y, t);
    CHECK(cumprod(x.to(dev), 0).dtype() == (dt == bool_ ? int64 : dt));
  }
  // zeros: the gradient's three cases, on the device
  const Tensor z = where(sample({4, 40}, float64) > 1.2, zeros({}, float64), sample({4, 40}, float64));
  check_grad(dev, [](const Tensor& a) { return cumprod(a, 1); }, z);
  check_grad(dev, [](const Tensor& a) { return cumprod(a, 0); }, sample({3, 45, 5}, complex128));
  CHECK(cumprod(zeros({0, 4}, float32, dev), 0).shape() == Shape{0, 4});
  CHECK_THROWS_WITH_AS(cumprod(ones({3}, float32, dev), 1), doctest::Contains("[cumprod]"), Error);
}

DEVICE_CASE("cuda reduce: cummax, cummin and logcumsumexp agree with the CPU (indices exactly), gradients too") {
  manual_seed(17);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Dtype dt : {bool_, int64, float32, float64}) {
    CAPTURE(dt);
    // ties, NaN and -inf: the indices pick the same element on both devices
    Tensor r = (sample({3, 300, 5}, float64) * 2.0).round();
    r = where(rand({3, 300, 5}) < 0.02, full({}, nan, float64), where(rand({3, 300, 5}) < 0.02, full({}, -kInf, float64), r));
    const Tensor x = dt == bool_ ? r > 0.0 : r.to(dt);
    const Tensor y = dt == bool_ ? sample({2, 5000}, dt) : sample({2, 5000}, float64).to(dt);  // a block per row
    for (const Tensor& in : {x, y})
      for (std::int64_t d : {0, 1, -1})
        for (bool is_max : {true, false}) {
          CAPTURE(d);
          const auto [cv, ci] = is_max ? cummax(in, d) : cummin(in, d);
          const auto [gv, gi] = is_max ? cummax(in.to(dev), d) : cummin(in.to(dev), d);
          CHECK(gi.device() == dev);
          CHECK(rel_diff(gi, ci) == 0);
          CHECK(rel_diff(gv, cv) == 0);
          CHECK(rel_diff(std::get<1>(cummax(in.to(dev).transpose(0, 1), 0)), std::get<1>(cummax(in.transpose(0, 1), 0))) == 0);
        }
    if (dt == float32 || dt == float64) {
      const Tensor big = (sample({3, 300, 5}, float64) * 30.0).to(dt);
      for (std::int64_t d : {0, 1, 2}) check_op(dev, [d](const Tensor& a) { return logcumsumexp(a, d); }, big, tol(dt));
      check_op(dev, [](const Tensor& a) { return logcumsumexp(a, 1); }, y, tol(dt));
      check_op(dev, [](const Tensor& a) { return a.logcumsumexp(0); }, where(x.isnan(), Scalar(0.0), x), tol(dt));
    }
  }
  const Tensor z = sample({4, 40}, float64);
  check_grad(dev, [](const Tensor& a) { return std::get<0>(cummax(a, 1)); }, z);
  check_grad(dev, [](const Tensor& a) { return std::get<0>(cummin(a, 0)); }, z);
  check_grad(dev, [](const Tensor& a) { return logcumsumexp(a, 1); }, z * 5.0);
  grad2_agree(dev, "logcumsumexp", [](const std::vector<Tensor>& a) { return logcumsumexp(a[0], 0); }, {z}, 1e-12);
  CHECK_THROWS_WITH_AS(cummax(sample({3}, complex64).to(dev), 0), doctest::Contains("[cummax] not supported for complex"), Error);
  CHECK_THROWS_WITH_AS(logcumsumexp(sample({3}, int64).to(dev), 0), doctest::Contains("[logcumsumexp] expected a real floating"), Error);
}

DEVICE_CASE("cuda reduce: amax and amin of +0 and -0 give +0 and -0 whatever the order and the split, as on the CPU") {
  // element_traits' reduce_max / reduce_min: +0 and -0 tie by sign, not by which partial result came first
  // (SIMD lanes and threads on the CPU, a tree on the GPU), so both devices give the same bits
  for (Dtype dt : {float32, float64}) {
    for (const Device& d : {Device::cpu(), dev}) {
      for (std::int64_t n : std::vector<std::int64_t>{2, 3, 33, 300, std::int64_t{1} << 20}) {
        for (int pattern = 0; pattern < 3; ++pattern) {
          CAPTURE(dt);
          CAPTURE(d.str());
          CAPTURE(n);
          CAPTURE(pattern);
          // -0 then +0s, +0 then -0s, or alternating
          std::vector<double> v(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i) {
            const bool neg = pattern == 0 ? i == 0 : pattern == 1 ? i != 0 : i % 2 == 0;
            v[static_cast<std::size_t>(i)] = neg ? -0.0 : 0.0;
          }
          const Tensor x = from_vector(v).to(dt).to(d);
          CHECK(sign_bits(x.amax()) == std::vector<bool>{false});
          CHECK(sign_bits(x.amin()) == std::vector<bool>{true});
          const Tensor rows = x.reshape({1, n}).expand({3, n});
          CHECK(sign_bits(rows.amax(Shape{1})) == std::vector<bool>(3, false));
          CHECK(sign_bits(rows.amin(Shape{1})) == std::vector<bool>(3, true));
        }
        // zeros of one sign keep it
        const Tensor neg = full({n}, -0.0, dt, d), pos = zeros({n}, dt, d);
        CHECK(sign_bits(neg.amax()) == std::vector<bool>{true});
        CHECK(sign_bits(pos.amin()) == std::vector<bool>{false});
      }
    }
  }
}

DEVICE_CASE("cuda reduce: int64 sums and products wrap on overflow (two's complement) as on the CPU") {
  // expected values from unsigned arithmetic: what PyTorch's int64 reductions give
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> v = {big, 3, -(std::int64_t{1} << 40), 7, big - 5, -9, std::int64_t{1} << 33, 11};
  std::uint64_t s = 0, p = 1;
  for (std::int64_t e : v) {
    s += static_cast<std::uint64_t>(e);
    p *= static_cast<std::uint64_t>(e);
  }
  const Tensor x = from_vector(v), xd = x.to(dev);
  CHECK(sum(xd).item<std::int64_t>() == static_cast<std::int64_t>(s));
  CHECK(prod(xd).item<std::int64_t>() == static_cast<std::int64_t>(p));
  CHECK(prod(x).item<std::int64_t>() == static_cast<std::int64_t>(p));
  // along a dim, and with long rows split across blocks
  const Tensor m = from_vector(v, Shape{2, 4}), md = m.to(dev);
  CHECK(rel_diff(prod(md, {1}), prod(m, {1})) == 0);
  CHECK(rel_diff(sum(md, {0}), sum(m, {0})) == 0);
  // odd factors, so the wrapped products never reach 0; they overflow many times over
  const Tensor r = (randint(0, std::int64_t{1} << 40, {3, 20000}, int64) * 2 + 1).to(dev);
  CHECK(rel_diff(prod(r, {1}), prod(r.to(Device::cpu()), {1})) == 0);
  CHECK(rel_diff(prod(r), prod(r.to(Device::cpu()))) == 0);
}

DEVICE_CASE("cuda reduce: gradients computed on the GPU match the CPU's") {
  manual_seed(16);
  const Tensor x = sample({6, 40}, float64);
  check_grad(dev, [](const Tensor& a) { return var(a, {1}); }, x);
  check_grad(dev, [](const Tensor& a) { return phasor::std(a, {}, 0.0); }, x);
  check_grad(dev, [](const Tensor& a) { return logsumexp(a, {0}, true); }, x);
  check_grad(dev, [](const Tensor& a) { return cumsum(a, 1); }, x);
  check_grad(dev, [](const Tensor& a) { return cumsum(a, 0).square(); }, x);
  for (double p : {1.0, 2.0, 3.0, 0.5, kInf, -kInf}) {
    CAPTURE(p);
    check_grad(dev, [p](const Tensor& a) { return norm(a, p, {1}); }, x);
  }
  check_grad(dev, [](const Tensor& a) { return std::get<0>(max(a, 1)); }, x);
  check_grad(dev, [](const Tensor& a) { return std::get<0>(min(a, 0, true)); }, x);
  check_grad(dev, [](const Tensor& a) { return amax(a, {1}); }, x);
  // prod with one zero in a row, two in another, none in the rest
  Tensor xz = sample({5, 8}, float64);
  xz.select(0, 1).select(0, 3).fill_(0.0);
  xz.select(0, 2).select(0, 0).fill_(0.0);
  xz.select(0, 2).select(0, 5).fill_(0.0);
  check_grad(dev, [](const Tensor& a) { return prod(a, {1}); }, xz);
  check_grad(dev, [](const Tensor& a) { return prod(a, {0}); }, xz);
  // complex inputs
  const Tensor z = sample({4, 30}, complex128);
  check_grad(dev, [](const Tensor& a) { return var(a, {1}); }, z);
  check_grad(dev, [](const Tensor& a) { return norm(a, 2, {0}); }, z);
  check_grad(dev, [](const Tensor& a) { return norm(a, 3.0); }, z);
  check_grad(dev, [](const Tensor& a) { return logsumexp(a, {1}); }, z);
  check_grad(dev, [](const Tensor& a) { return cumsum(a, 1); }, z);
}

TEST_CASE("cuda reduce: a CPU-only build's reduction glue throws a named error" * doctest::skip(cuda::is_built())) {
  // without CUDA no tensor can live on a GPU (creating one throws); the glue the CPU launchers call for
  // CUDA tensors names the op and the build
  const Tensor x = ones({3, 4});
  using namespace phasor::cuda::detail;
  CHECK_THROWS_WITH_AS(reduce_stat("norm", x, {}, false, 2), "[norm] no CUDA kernels in this build (CPU-only build)",
                       Error);
  CHECK_THROWS_WITH_AS(reduce_stat("var", x, {1}, true, 1), doctest::Contains("[var] no CUDA kernels"), Error);
  CHECK_THROWS_WITH_AS(reduce_stat("logsumexp", x, {}, false, 0), doctest::Contains("[logsumexp] no CUDA kernels"), Error);
  CHECK_THROWS_WITH_AS(arg_reduce("argmax", x, 1, false, true, false), doctest::Contains("[argmax] no CUDA kernels"),
                       Error);
  // ScanKind (core/scan_rules.hpp) by its values: Sum 0, LogAddExp 4
  CHECK_THROWS_WITH_AS(scan(static_cast<phasor::detail::ScanKind>(0), x, x, 3, 4, 1, false),
                       doctest::Contains("[cumsum] no CUDA kernels"), Error);
  CHECK_THROWS_WITH_AS(scan(static_cast<phasor::detail::ScanKind>(4), x, x, 3, 4, 1, false),
                       doctest::Contains("[logcumsumexp] no CUDA kernels"), Error);
  CHECK_THROWS_WITH_AS(norm(x, 2.0, {}, false).to(Device::cuda(0)), doctest::Contains("device cuda:0 does not exist"),
                       Error);
  CHECK(x.sum().item<double>() == 12.0);  // input unchanged
}

// Note [gapped rows]: a contiguous tensor reduced over leading (and trailing) dims around a kept block is
// read in place; these layouts, with size-1 dims, a kept block of several dims and split long rows.
DEVICE_CASE("cuda reduce: reductions over leading dims read the tensor in place and agree with the CPU") {
  manual_seed(32);
  struct Case {
    Shape shape, dims;
  };
  const std::vector<Case> cases = {
      {{33, 9}, {0}},                   // leading block only: rows of stride 1
      {{5, 7, 300}, {0, 2}},            // a bias gradient's layout
      {{4, 1, 6, 5}, {0, 3}},           // a size-1 dim inside
      {{3, 2, 4, 5, 6}, {0, 1, 4}},     // a kept block of two dims
      {{64, 3, 4096}, {0, 2}},          // few long rows: split across blocks
      {{2, 5, 1, 3}, {0, -1}},          // negative dim
  };
  for (const Case& c : cases) {
    CAPTURE(c.shape.size());
    CAPTURE(c.dims.size());
    for (Dtype dt : {bool_, int64, float32, float64, complex64}) {
      CAPTURE(dt);
      const Tensor x = sample(c.shape, dt);
      const Tensor xg = x.to(dev);
      const double t = dt == float32 || dt == complex64 ? 2e-5 : 1e-12;
      CHECK(rel_diff(xg.sum(c.dims), x.sum(c.dims)) <= t);
      CHECK(rel_diff(xg.sum(c.dims, true), x.sum(c.dims, true)) <= t);
      CHECK(rel_diff(xg.all(c.dims), x.all(c.dims)) == 0);
      CHECK(rel_diff(xg.any(c.dims), x.any(c.dims)) == 0);
      if (is_complex(dt) || dt == bool_) continue;
      CHECK(rel_diff(xg.amax(c.dims), x.amax(c.dims)) == 0);
      CHECK(rel_diff(xg.amin(c.dims), x.amin(c.dims)) == 0);
    }
  }
  // the same reduction of a non-contiguous tensor takes the copy and agrees too
  const Tensor y = sample({7, 5, 6}, float64).transpose(0, 2);
  CHECK(rel_diff(y.to(dev).sum({0, 2}), y.sum({0, 2})) <= 1e-12);
}

DEVICE_CASE("cuda reduce: reductions without an identity fail on an empty dim with the CPU's error, naming the op") {
  const Tensor x = zeros({3, 0, 2}, float32);
  const Tensor xg = x.to(dev);
  using F = std::function<Tensor(const Tensor&)>;
  const std::vector<F> fs = {
      [](const Tensor& t) { return max(t); }, [](const Tensor& t) { return min(t); },
      [](const Tensor& t) { return amax(t, {2, 1}); }, [](const Tensor& t) { return amin(t, {-2}, true); },
      [](const Tensor& t) { return norm(t, std::numeric_limits<double>::infinity(), {1, 0}); },
      [](const Tensor& t) { return argmax(t, 1); }, [](const Tensor& t) { return std::get<0>(max(t, 1)); }};
  for (std::size_t i = 0; i < fs.size(); ++i) {
    CAPTURE(i);
    std::string cpu_error, dev_error;
    try {
      fs[i](x);
    } catch (const Error& e) {
      cpu_error = e.what();
    }
    try {
      fs[i](xg);
    } catch (const Error& e) {
      dev_error = e.what();
    }
    CHECK(!cpu_error.empty());
    CHECK(dev_error == cpu_error);  // e.g. "[max] cannot reduce over an empty dim: input shape (3, 0, 2), reduced dims (0, 1, 2) ..."
  }
}

// Note [short rows] (src/cuda/reduce.cu): rows shorter than a block's worth of loads go to groups of threads
// (one thread for up to 8 float32 / 4 int64 or float64 / 2 complex128 elements), several rows per block;
// lengths around the group sizes' limits, row counts that leave a block's last groups without a row, and
// split long rows whose few partials per row are combined by small groups.
DEVICE_CASE("cuda reduce: short rows share a block, a group of threads per row, and agree with the CPU") {
  manual_seed(33);
  for (std::int64_t len : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 127, 129, 255, 257, 1023, 1025, 2049}) {
    CAPTURE(len);
    const std::int64_t rows = 3 * 256 / len + 5;  // some blocks' last groups get no row
    for (Dtype dt : {int64, float32, float64, complex128}) {
      CAPTURE(dt);
      const Tensor x = sample({rows, len}, dt) * 4.0 + 1.0;
      const Tensor xg = x.to(dev);
      const double t = tol(dt);
      CHECK(rel_diff(xg.sum({1}), x.sum({1})) <= t);
      CHECK(rel_diff(xg.any({1}), x.any({1})) == 0);
      CHECK(rel_diff(xg.all({0}), x.all({0})) == 0);  // the other way: len rows of `rows`
      if (dt == int64) continue;
      CHECK(rel_diff(xg.norm(2.0, {1}), x.norm(2.0, {1})) <= t);
      CHECK(rel_diff(xg.norm(-kInf, {1}), x.norm(-kInf, {1})) <= t);
      CHECK(rel_diff(var(xg, {1}), var(x, {1})) <= t);
      CHECK(rel_diff(logsumexp(xg, {1}), logsumexp(x, {1})) <= t);
      if (is_complex(dt)) continue;
      CHECK(rel_diff(xg.amax({1}), x.amax({1})) == 0);
      CHECK(rel_diff(xg.amin({1}), x.amin({1})) == 0);
      CHECK(rel_diff(argmax(xg, 1), argmax(x, 1)) == 0);
      CHECK(rel_diff(argmin(xg, 1), argmin(x, 1)) == 0);
      CHECK(rel_diff(std::get<0>(max(xg, 1)), std::get<0>(max(x, 1))) == 0);
    }
  }
  // rows of equal elements: the first index wins in every group; a NaN in one row stays in its row
  Tensor e = full({100, 5}, 2.0, float64);
  e.index({37, 3}).fill_(std::numeric_limits<double>::quiet_NaN());
  const Tensor eg = e.to(dev);
  CHECK(rel_diff(argmax(eg, 1), argmax(e, 1)) == 0);
  CHECK(rel_diff(eg.amax({1}), e.amax({1})) == 0);
  CHECK(to_vector<std::int64_t>(argmax(eg, 1).to(Device::cpu()))[37] == 3);
  CHECK(to_vector<std::int64_t>(argmax(eg, 1).to(Device::cpu()))[36] == 0);
  // every thread's sum starts from the identity, as the CPU's: rows of -0 sum to +0 whatever their length;
  // a complex product multiplies by 1 + 0i first: (1 + 0i)(2 + inf i) = nan + inf i on both
  for (std::int64_t n : {1, 2, 3, 300}) {
    CAPTURE(n);
    const Tensor z = full({5, n}, -0.0, float64);
    CHECK(sign_bits(z.to(dev).sum({1})) == sign_bits(z.sum({1})));
    CHECK(sign_bits(z.sum({1})) == std::vector<bool>(5, false));
  }
  const Tensor ci = complex(full({3, 1}, 2.0, float64), full({3, 1}, kInf, float64));
  const Tensor pc = ci.prod({1}), pg = ci.to(dev).prod({1}).to(Device::cpu());
  CHECK(std::isnan(real(pg).index({0}).item<double>()) == std::isnan(real(pc).index({0}).item<double>()));
  CHECK(imag(pg).index({0}).item<double>() == imag(pc).index({0}).item<double>());
  // split rows (Note [split rows]): 3 partials per row, each row's combined by one thread
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor x = sample({6, 13000}, dt);  // 3 chunks of 4334 (4096 at least) per row
    const Tensor xg = x.to(dev);
    const double t = dt == float64 ? 1e-12 : 1e-5;
    CHECK(rel_diff(xg.sum({1}), x.sum({1})) <= t);
    CHECK(rel_diff(xg.amax({1}), x.amax({1})) == 0);
    CHECK(rel_diff(xg.norm(1.0, {1}), x.norm(1.0, {1})) <= t);
    CHECK(rel_diff(var(xg, {1}), var(x, {1})) <= tol(dt));
    CHECK(rel_diff(logsumexp(xg, {1}), logsumexp(x, {1})) <= tol(dt));
    CHECK(rel_diff(argmin(xg, 1), argmin(x, 1)) == 0);
  }
}

DEVICE_CASE("cuda reduce: few long rows are split across blocks and still agree with the CPU") {
  manual_seed(31);
  // full reductions and a few rows, with lengths that do not divide into the chunks
  for (const Shape& s : {Shape{1 << 22}, Shape{3, 100003}, Shape{20, 65536}, Shape{2, 8193}}) {
    CAPTURE(s.size());
    for (Dtype dt : {float32, float64, complex64}) {
      CAPTURE(dt);
      const Tensor x = sample(s, dt);
      const Tensor xg = x.to(dev);
      const double t = (dt == float64 ? 1e-12 : 1e-5);
      CHECK(rel_diff(xg.sum({-1}), x.sum({-1})) <= t);
      CHECK(rel_diff(xg.norm(2.0, {-1}), x.norm(2.0, {-1})) <= t);
      CHECK(rel_diff(xg.norm(1.0, {-1}), x.norm(1.0, {-1})) <= t);
      if (is_complex(dt)) continue;
      CHECK(rel_diff(xg.amax({-1}), x.amax({-1})) == 0);
      CHECK(rel_diff(xg.amin(), x.amin()) == 0);
      CHECK(rel_diff(xg.norm(std::numeric_limits<double>::infinity(), {-1}), x.norm(std::numeric_limits<double>::infinity(), {-1})) == 0);
      CHECK(rel_diff((xg > 0.0).all({-1}), (x > 0.0).all({-1})) == 0);
      CHECK(rel_diff((xg > 3.0).any({-1}), (x > 3.0).any({-1})) == 0);
    }
  }
  // var/std (merged per chunk), logsumexp (shifted per chunk) and argmax/argmin (candidates per chunk)
  for (const Shape& s : {Shape{1 << 21}, Shape{3, 100003}, Shape{2, 8193}}) {
    CAPTURE(s.size());
    for (Dtype dt : {float32, float64, complex64, complex128}) {
      CAPTURE(dt);
      const Tensor x = sample(s, dt) * 20.0 + 3.0;  // an offset for var, large values for logsumexp
      const Tensor xg = x.to(dev);
      const double t = tol(dt);
      CHECK(rel_diff(var(xg, {-1}), var(x, {-1})) <= t);
      CHECK(rel_diff(var(xg), var(x)) <= t);
      CHECK(rel_diff(xg.std({-1}, 0.0, true), x.std({-1}, 0.0, true)) <= t);
      CHECK(rel_diff(logsumexp(xg, {-1}), logsumexp(x, {-1})) <= t);
      CHECK(rel_diff(logsumexp(xg), logsumexp(x)) <= t);
    }
    for (Dtype dt : {bool_, int64, float32, float64}) {
      CAPTURE(dt);
      const Tensor x = sample(s, dt);  // bools and small ints tie across chunks: the first index wins
      const Tensor xg = x.to(dev);
      CHECK(rel_diff(argmax(xg, -1), argmax(x, -1)) == 0);
      CHECK(rel_diff(argmin(xg, -1), argmin(x, -1)) == 0);
      CHECK(rel_diff(argmax(xg), argmax(x)) == 0);
      CHECK(rel_diff(std::get<0>(max(xg, -1)), std::get<0>(max(x, -1))) == 0);
      CHECK(rel_diff(std::get<1>(min(xg, -1)), std::get<1>(min(x, -1))) == 0);
    }
  }
  {  // special values in single chunks of long rows (chunks are at least 4096 elements)
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Tensor x = sample({6, 50000}, float64);
    x.index({0, Slice(0, 20000)}).fill_(-kInf);  // whole chunks of -inf beside finite ones
    x.index({1}).fill_(-kInf);                    // all -inf: logsumexp -inf, argmax 0
    x.index({2, 30000}).fill_(kInf);              // one +inf
    x.index({3, 40000}).fill_(nan);               // one NaN: it wins argmax and argmin, logsumexp is NaN
    x.index({4}).fill_(-1000.0);                  // far below 0: exp underflows without the shift
    x.index({4, Slice(0, 10000)}).fill_(-kInf);
    x.index({5, Slice(45000, 50000)}).fill_(7.0);  // ties of the max in the last chunk
    x.index({5, 49999}).fill_(7.0);
    const Tensor xg = x.to(dev);
    CHECK(rel_diff(logsumexp(xg, {1}), logsumexp(x, {1})) <= 1e-12);  // NaN and -inf must match too
    CHECK(logsumexp(xg, {1}).to(Device::cpu()).index({1}).item<double>() == -kInf);
    CHECK(std::isnan(logsumexp(xg, {1}).to(Device::cpu()).index({3}).item<double>()));
    CHECK(rel_diff(argmax(xg, 1), argmax(x, 1)) == 0);
    CHECK(rel_diff(argmin(xg, 1), argmin(x, 1)) == 0);
    CHECK(to_vector<std::int64_t>(argmax(xg, 1).to(Device::cpu())) ==
          std::vector<std::int64_t>{to_vector<std::int64_t>(argmax(x, 1))});
    CHECK(to_vector<std::int64_t>(argmax(xg, 1).to(Device::cpu()))[3] == 40000);
    CHECK(to_vector<std::int64_t>(argmax(xg, 1).to(Device::cpu()))[5] == 45000);
    CHECK(rel_diff(var(xg, {1}), var(x, {1})) <= 1e-12);  // NaN rows (inf - inf, the NaN) on both
    // complex: a +inf real part in one chunk and a real part above exp's range (709) in another keep the
    // zero imaginary part (a complex product would make it 0 * inf = NaN)
    Tensor zc = complex(x.index({Slice(2, 3)}), zeros({1, 50000}, float64));
    zc.index({0, 100}).fill_(800.0);
    const Tensor lc = logsumexp(zc, {1}), lg = logsumexp(zc.to(dev), {1});
    CHECK(rel_diff(lg, lc) == 0);
    CHECK(imag(lg).to(Device::cpu()).item<double>() == 0);
    CHECK(std::isnan(var(xg, {1}).to(Device::cpu()).index({3}).item<double>()));
  }
  // a NaN in one chunk wins the row's max
  Tensor x = sample({1 << 20}, float32);
  x.index({Slice(700000, 700001)}).fill_(std::numeric_limits<double>::quiet_NaN());
  CHECK(std::isnan(x.to(dev).amax().item<double>()));
}
