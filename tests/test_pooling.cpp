// tests/test_pooling.cpp - max/avg/adaptive/lp pooling, max unpooling and transposed convolutions against
// direct loops written from torch's documented definitions, gradcheck / gradgradcheck, the modules and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::ivals;
using phasor::test::leaf64;
using phasor::test::vals;
namespace F = phasor::nn::functional;

namespace {

std::int64_t prod(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

/// One output's window along a dim: the input indices it reads and its size for count_include_pad.
struct Window {
  std::vector<std::int64_t> taps;  ///< input indices inside the input
  std::int64_t padded = 0;         ///< the window clipped to the padded input (avg_pool's divisor)
};
using WindowFn = std::function<Window(std::int64_t dim, std::int64_t o)>;

/// Regular windows (torch's max_pool / avg_pool definitions): output o reads o s - p + j d, j < k.
WindowFn regular(const Shape& in, const Shape& k, const Shape& s, const Shape& p, const Shape& d) {
  return [=](std::int64_t dim, std::int64_t o) {
    const auto i = static_cast<std::size_t>(dim);
    Window w;
    const std::int64_t start = o * s[i] - p[i];
    for (std::int64_t j = 0; j < k[i]; ++j) {
      const std::int64_t t = start + j * d[i];
      if (t >= 0 && t < in[i]) w.taps.push_back(t);
    }
    w.padded = std::min(start + k[i], in[i] + p[i]) - start;
    return w;
  };
}

/// Adaptive windows [floor(o in / out), ceil((o + 1) in / out)).
WindowFn adaptive(const Shape& in, const Shape& out) {
  return [=](std::int64_t dim, std::int64_t o) {
    const auto i = static_cast<std::size_t>(dim);
    Window w;
    const auto lo = static_cast<std::int64_t>(std::floor(static_cast<long double>(o) * in[i] / out[i]));
    const auto hi = static_cast<std::int64_t>(std::ceil(static_cast<long double>(o + 1) * in[i] / out[i]));
    for (std::int64_t t = lo; t < hi; ++t) w.taps.push_back(t);
    w.padded = hi - lo;
    return w;
  };
}

/// torch's pooled output size (floor or ceil mode).
std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil) {
  const long double q = static_cast<long double>(in + 2 * p - d * (k - 1) - 1) / s;
  std::int64_t o = static_cast<std::int64_t>(ceil ? std::ceil(q) : std::floor(q)) + 1;
  if (ceil && (o - 1) * s >= in + p) --o;
  return o;
}

enum class Kind { max, avg };

struct Ref {
  std::vector<double> y;
  std::vector<std::int64_t> idx;
};

/// Direct pooling of x (N, C, *in) into (N, C, *out), in long double; the max keeps the first maximum (NaN:
/// the last NaN); the average divides by divisor (> 0), the padded window (count_include_pad) or the taps.
Ref pool_ref(const Tensor& xt, const Shape& out, const WindowFn& win, Kind kind, bool count_include_pad = true,
             std::int64_t divisor = 0) {
  const auto x = vals(xt);
  const Shape in(xt.shape().begin() + 2, xt.shape().end());
  const std::size_t D = in.size();
  const std::int64_t NC = xt.size(0) * xt.size(1), P = prod(in), L = prod(out);
  Ref r;
  for (std::int64_t nc = 0; nc < NC; ++nc)
    for (std::int64_t l = 0; l < L; ++l) {
      Shape o(D);
      for (std::int64_t rem = l, i = static_cast<std::int64_t>(D) - 1; i >= 0; --i) {
        o[static_cast<std::size_t>(i)] = rem % out[static_cast<std::size_t>(i)];
        rem /= out[static_cast<std::size_t>(i)];
      }
      std::vector<Window> w;
      for (std::size_t i = 0; i < D; ++i) w.push_back(win(static_cast<std::int64_t>(i), o[i]));
      // every combination of taps, row-major
      std::vector<std::int64_t> flat{0};
      std::int64_t padded = 1, count = 1;
      for (std::size_t i = 0; i < D; ++i) {
        std::vector<std::int64_t> next;
        for (auto f : flat)
          for (auto t : w[i].taps) next.push_back(f * in[i] + t);
        flat = next;
        padded *= w[i].padded;
        count *= static_cast<std::int64_t>(w[i].taps.size());
      }
      if (kind == Kind::max) {
        long double best = -std::numeric_limits<long double>::infinity();
        std::int64_t at = -1;
        for (auto f : flat) {
          const long double v = x[static_cast<std::size_t>(nc * P + f)];
          if (at < 0 || v > best || std::isnan(v)) {
            at = f;
            best = v;
          }
        }
        r.y.push_back(static_cast<double>(best));
        r.idx.push_back(at);
      } else {
        long double sum = 0;
        for (auto f : flat) sum += x[static_cast<std::size_t>(nc * P + f)];
        const std::int64_t div = divisor > 0 ? divisor : count_include_pad ? padded : count;
        r.y.push_back(static_cast<double>(sum / div));
      }
    }
  return r;
}

void check_vals(const Tensor& t, const std::vector<double>& ref, double tol) {
  const auto v = vals(t);
  REQUIRE(v.size() == ref.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(ref[i])) CHECK(std::isnan(v[i]));
    else CHECK(std::abs(v[i] - ref[i]) <= tol * std::max(1.0, std::abs(ref[i])));
  }
}

using PoolFn = std::function<std::tuple<Tensor, Tensor>(const Tensor&, const Shape& k, const Shape& s, const Shape& p,
                                                        const Shape& d, bool ceil)>;
PoolFn max_with_indices(int nd) {
  return [nd](const Tensor& x, const Shape& k, const Shape& s, const Shape& p, const Shape& d, bool c) {
    if (nd == 1) return F::max_pool1d_with_indices(x, k, s, p, d, c);
    if (nd == 2) return F::max_pool2d_with_indices(x, k, s, p, d, c);
    return F::max_pool3d_with_indices(x, k, s, p, d, c);
  };
}
Tensor avg(int nd, const Tensor& x, const Shape& k, const Shape& s, const Shape& p, bool c, bool cip,
           std::optional<std::int64_t> div = std::nullopt) {
  if (nd == 1) return F::avg_pool1d(x, k, s, p, c, cip);
  if (nd == 2) return F::avg_pool2d(x, k, s, p, c, cip, div);
  return F::avg_pool3d(x, k, s, p, c, cip, div);
}

struct Geo {
  std::int64_t k, s, p, d;
  bool ceil;
};

}  // namespace

TEST_CASE("max_pool1d/2d/3d match direct loops: values and indices, every window option") {
  manual_seed(1);
  const std::vector<Geo> geos = {{2, 2, 0, 1, false}, {3, 1, 1, 1, false}, {3, 2, 1, 1, true},  {2, 3, 1, 2, false},
                                 {3, 2, 0, 2, true},  {1, 1, 0, 1, false}, {4, 3, 2, 1, true}};
  for (int nd = 1; nd <= 3; ++nd)
    for (const Geo& g : geos)
      for (Dtype dt : {float64, float32}) {
        CAPTURE(nd);
        CAPTURE(g.k);
        CAPTURE(g.s);
        CAPTURE(g.p);
        CAPTURE(g.d);
        CAPTURE(g.ceil);
        Shape xs{2, 3}, in;
        for (int i = 0; i < nd; ++i) in.push_back(nd == 3 ? 6 + i : 9 - i);
        xs.insert(xs.end(), in.begin(), in.end());
        const Tensor x = randn(xs, float64).to(dt);
        const Shape k(nd, g.k), s(nd, g.s), p(nd, g.p), d(nd, g.d);
        Shape out;
        for (int i = 0; i < nd; ++i) out.push_back(out_size(in[i], g.k, g.s, g.p, g.d, g.ceil));
        const Ref r = pool_ref(x.to(float64), out, regular(in, k, s, p, d), Kind::max);
        auto [y, idx] = max_with_indices(nd)(x, k, s, p, d, g.ceil);
        Shape ys{2, 3};
        ys.insert(ys.end(), out.begin(), out.end());
        CHECK(y.shape() == ys);
        CHECK(y.dtype() == dt);
        CHECK(idx.dtype() == int64);
        check_vals(y, r.y, 0);
        CHECK(ivals(idx) == r.idx);
        // unbatched input: the same planes
        auto [yu, iu] = max_with_indices(nd)(x.select(0, 0), k, s, p, d, g.ceil);
        CHECK(vals(yu) == vals(y.select(0, 0)));
        CHECK(ivals(iu) == ivals(idx.select(0, 0)));
      }
  // the default stride is the kernel size
  const Tensor x = randn({1, 2, 8, 8}, float64);
  CHECK(vals(F::max_pool2d(x, 2)) == vals(F::max_pool2d(x, 2, Shape{2, 2})));
  CHECK(F::max_pool2d(x, {2, 4}).shape() == Shape{1, 2, 4, 2});
}

TEST_CASE("max_pool: NaN propagates, ties keep the first index, -inf windows") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Tensor x = from_vector(std::vector<double>{1, 3, 3, 2, nan, 0, -inf, -inf, 5, nan, 2, nan}).reshape({1, 1, 12});
  auto [y, i] = F::max_pool1d_with_indices(x, 2);
  const auto v = vals(y);
  CHECK(v[0] == 3);
  CHECK(std::isnan(v[2]));
  CHECK(v[3] == -inf);
  CHECK(std::isnan(v[4]));
  CHECK(std::isnan(v[5]));
  CHECK(ivals(i) == std::vector<std::int64_t>{1, 2, 4, 6, 9, 11});
  // ties over a 2x2 window: the first in row-major order
  const Tensor t = full({1, 1, 2, 2}, 4.0, float64);
  CHECK(ivals(std::get<1>(F::max_pool2d_with_indices(t, 2))) == std::vector<std::int64_t>{0});
}

TEST_CASE("avg_pool1d/2d/3d match direct loops: padding, ceil_mode, count_include_pad, divisor_override") {
  manual_seed(2);
  const std::vector<Geo> geos = {{2, 2, 0, 1, false}, {3, 1, 1, 1, false}, {3, 2, 1, 1, true},
                                 {4, 3, 2, 1, true},  {2, 3, 1, 1, true},  {5, 2, 2, 1, false}};
  for (int nd = 1; nd <= 3; ++nd)
    for (const Geo& g : geos)
      for (bool cip : {true, false})
        for (Dtype dt : {float64, float32}) {
          CAPTURE(nd);
          CAPTURE(g.k);
          CAPTURE(g.s);
          CAPTURE(g.p);
          CAPTURE(g.ceil);
          CAPTURE(cip);
          Shape xs{2, 2}, in;
          for (int i = 0; i < nd; ++i) in.push_back(nd == 3 ? 6 + i : 10 - i);
          xs.insert(xs.end(), in.begin(), in.end());
          const Tensor x = randn(xs, float64).to(dt);
          const Shape k(nd, g.k), s(nd, g.s), p(nd, g.p), d(nd, 1);
          Shape out;
          for (int i = 0; i < nd; ++i) out.push_back(out_size(in[i], g.k, g.s, g.p, 1, g.ceil));
          const double tol = dt == float32 ? 2e-6 : 1e-14;
          check_vals(avg(nd, x, k, s, p, g.ceil, cip), pool_ref(x.to(float64), out, regular(in, k, s, p, d), Kind::avg, cip).y,
                     tol);
          if (nd > 1)
            check_vals(avg(nd, x, k, s, p, g.ceil, cip, 7),
                       pool_ref(x.to(float64), out, regular(in, k, s, p, d), Kind::avg, cip, 7).y, tol);
        }
  // closed form: a 2x2 mean of 0..15
  const Tensor q = arange(16, float64).reshape({1, 1, 4, 4});
  CHECK(vals(F::avg_pool2d(q, 2)) == std::vector<double>{2.5, 4.5, 10.5, 12.5});
}

TEST_CASE("adaptive_avg_pool / adaptive_max_pool 1d/2d/3d match direct loops") {
  manual_seed(3);
  struct C {
    Shape in, out;
  };
  const std::vector<C> cases = {{{10}, {3}}, {{7}, {7}}, {{5}, {8}}, {{9, 7}, {4, 3}}, {{6, 6}, {1, 1}},
                                {{5, 11}, {5, 2}}, {{5, 6, 7}, {2, 3, 4}}, {{4, 4, 4}, {4, 1, 3}}};
  for (const C& c : cases)
    for (Dtype dt : {float64, float32}) {
      CAPTURE(c.in);
      CAPTURE(c.out);
      Shape xs{2, 3};
      xs.insert(xs.end(), c.in.begin(), c.in.end());
      const Tensor x = randn(xs, float64).to(dt);
      const std::size_t nd = c.in.size();
      const nn::IntList os(c.out);
      const Ref ra = pool_ref(x.to(float64), c.out, adaptive(c.in, c.out), Kind::avg);
      const Ref rm = pool_ref(x.to(float64), c.out, adaptive(c.in, c.out), Kind::max);
      Tensor ya, ym, im;
      if (nd == 1) {
        ya = F::adaptive_avg_pool1d(x, os);
        std::tie(ym, im) = F::adaptive_max_pool1d_with_indices(x, os);
        CHECK(vals(F::adaptive_max_pool1d(x, os)) == vals(ym));
      } else if (nd == 2) {
        ya = F::adaptive_avg_pool2d(x, os);
        std::tie(ym, im) = F::adaptive_max_pool2d_with_indices(x, os);
        CHECK(vals(F::adaptive_max_pool2d(x, os)) == vals(ym));
      } else {
        ya = F::adaptive_avg_pool3d(x, os);
        std::tie(ym, im) = F::adaptive_max_pool3d_with_indices(x, os);
        CHECK(vals(F::adaptive_max_pool3d(x, os)) == vals(ym));
      }
      check_vals(ya, ra.y, dt == float32 ? 2e-6 : 1e-14);
      check_vals(ym, rm.y, 0);
      CHECK(ivals(im) == rm.idx);
    }
  // -1 keeps the input's size; global average pooling is the mean
  const Tensor x = randn({2, 3, 5, 6}, float64);
  CHECK(F::adaptive_avg_pool2d(x, {-1, 2}).shape() == Shape{2, 3, 5, 2});
  check_vals(F::adaptive_avg_pool2d(x, 1), vals(x.mean({2, 3}, true)), 1e-14);
}

TEST_CASE("lp_pool1d/2d/3d: (sum over the window of x^p)^(1/p)") {
  manual_seed(4);
  for (double p : {1.0, 2.0, 3.0})
    for (int nd = 1; nd <= 3; ++nd) {
      CAPTURE(p);
      CAPTURE(nd);
      Shape xs{2, 2}, in;
      for (int i = 0; i < nd; ++i) in.push_back(7 - i);
      xs.insert(xs.end(), in.begin(), in.end());
      const Tensor x = rand(xs, float64) + 0.1;
      const Shape k(nd, 2), s(nd, 2), pad(nd, 0), d(nd, 1);
      Shape out;
      for (int i = 0; i < nd; ++i) out.push_back(out_size(in[i], 2, 2, 0, 1, false));
      std::vector<double> ref = pool_ref(x.pow(p), out, regular(in, k, s, pad, d), Kind::avg).y;
      for (auto& v : ref) v = std::pow(v * std::pow(2.0, nd), 1 / p);
      const Tensor y = nd == 1 ? F::lp_pool1d(x, p, 2) : nd == 2 ? F::lp_pool2d(x, p, 2) : F::lp_pool3d(x, p, 2);
      check_vals(y, ref, 1e-13);
    }
}

TEST_CASE("max_unpool1d/2d/3d invert max pooling where the maxima were") {
  manual_seed(5);
  const Tensor x = randn({2, 3, 8, 6}, float64);
  auto [y, idx] = F::max_pool2d_with_indices(x, 2);
  const Tensor u = F::max_unpool2d(y, idx, 2);
  CHECK(u.shape() == x.shape());
  // the maxima land where they came from, everything else is zero
  const auto xv = vals(x), uv = vals(u), yv = vals(y);
  const auto iv = ivals(idx);
  std::vector<double> want(xv.size(), 0.0);
  for (std::size_t j = 0; j < iv.size(); ++j) want[(j / 12) * 48 + static_cast<std::size_t>(iv[j])] = yv[j];
  CHECK(uv == want);
  // output_size: an odd size the pooling floored away (spatial or whole shape)
  const Tensor x9 = randn({1, 2, 9}, float64);
  auto [y9, i9] = F::max_pool1d_with_indices(x9, 2);
  CHECK(F::max_unpool1d(y9, i9, 2, {}, 0, Shape{9}).shape() == Shape{1, 2, 9});
  CHECK(F::max_unpool1d(y9, i9, 2, {}, 0, Shape{1, 2, 9}).shape() == Shape{1, 2, 9});
  CHECK(F::max_unpool1d(y9, i9, 2).shape() == Shape{1, 2, 8});
  const Tensor x3 = randn({1, 1, 4, 4, 4}, float64);
  auto [y3, i3] = F::max_pool3d_with_indices(x3, 2);
  CHECK(vals(F::max_pool3d(F::max_unpool3d(y3, i3, 2), 2)) == vals(y3));
  // unbatched
  auto [yu, iu] = F::max_pool2d_with_indices(x.select(0, 0), 2);
  CHECK(vals(F::max_unpool2d(yu, iu, 2)) == vals(u.select(0, 0)));
}

TEST_CASE("pooling gradients: gradcheck and gradgradcheck in float64") {
  manual_seed(6);
  const auto x2 = leaf64({2, 2, 7, 6});
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::max_pool2d(a[0], 3, 2, 1, 1, true); }, {x2}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::max_pool1d(a[0], 3, 1, 1, 2); },
                            {leaf64({2, 3, 9})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::max_pool3d(a[0], 2, 1); }, {leaf64({1, 2, 3, 4, 3})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::avg_pool2d(a[0], 3, 2, 1, true, false); }, {x2}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::avg_pool2d(a[0], {3, 2}, 1, {1, 0}, false, true, 5); },
                            {x2}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::avg_pool1d(a[0], 4, 3, 2, true); }, {leaf64({2, 3, 10})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::avg_pool3d(a[0], 2, 1, 1); }, {leaf64({1, 2, 3, 3, 2})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::adaptive_avg_pool2d(a[0], {3, 4}); }, {x2}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::adaptive_max_pool2d(a[0], {3, 4}); }, {x2}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::adaptive_avg_pool1d(a[0], 4); }, {leaf64({2, 2, 9})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::adaptive_max_pool3d(a[0], 2); }, {leaf64({1, 2, 3, 4, 5})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::lp_pool2d(a[0].abs() + 0.5, 3.0, 2); }, {x2}));
  const Tensor xi = randn({2, 2, 6, 6}, float64);
  const Tensor idx = std::get<1>(F::max_pool2d_with_indices(xi, 2));
  CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& a) { return F::max_unpool2d(a[0], idx, 2); }, {leaf64({2, 2, 3, 3})}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& a) { return F::avg_pool2d(a[0], 3, 2, 1, true, false); }, {x2}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& a) { return F::max_pool2d(a[0], 2); }, {x2}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& a) { return F::adaptive_avg_pool2d(a[0], 3); }, {x2}));
}

TEST_CASE("pooling modules equal the functional forms") {
  manual_seed(7);
  const Tensor x = randn({2, 3, 9, 8});
  nn::MaxPool2d mp(3, 2, 1);
  CHECK(vals(mp(x)) == vals(F::max_pool2d(x, 3, 2, 1)));
  CHECK(ivals(std::get<1>(mp.forward_with_indices(x))) == ivals(std::get<1>(F::max_pool2d_with_indices(x, 3, 2, 1))));
  CHECK(mp.extra_repr() == "kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=false");
  nn::AvgPool2d ap(2, {}, 0, true, false, 3);
  CHECK(vals(ap(x)) == vals(F::avg_pool2d(x, 2, {}, 0, true, false, 3)));
  CHECK(ap.extra_repr() == "kernel_size=2, stride=2, padding=0, ceil_mode=true, count_include_pad=false, divisor_override=3");
  nn::AdaptiveAvgPool2d aa({4, -1});
  CHECK(vals(aa(x)) == vals(F::adaptive_avg_pool2d(x, {4, -1})));
  CHECK(aa.extra_repr() == "output_size=(4, -1)");
  nn::AdaptiveMaxPool1d am(3);
  const Tensor x1 = randn({2, 3, 10});
  CHECK(vals(am(x1)) == vals(F::adaptive_max_pool1d(x1, 3)));
  CHECK(ivals(std::get<1>(am.forward_with_indices(x1))) == ivals(std::get<1>(F::adaptive_max_pool1d_with_indices(x1, 3))));
  CHECK_THROWS_WITH_AS(aa.forward_with_indices(x), "[AdaptiveAvgPool2d] forward_with_indices needs max pooling (an AdaptiveMaxPool module)", Error);
  nn::LPPool1d lp(2.0, 3);
  const Tensor xp = x1.abs();
  CHECK(vals(lp(xp)) == vals(F::lp_pool1d(xp, 2.0, 3)));
  nn::MaxPool3d m3(2);
  nn::MaxUnpool3d u3(2);
  const Tensor x3 = randn({1, 2, 4, 4, 4});
  auto [y3, i3] = m3.forward_with_indices(x3);
  CHECK(vals(u3.forward(y3, i3)) == vals(F::max_unpool3d(y3, i3, 2)));
  CHECK(u3.extra_repr() == "kernel_size=2, stride=2, padding=0");
  nn::AvgPool1d a1(3, 1, 1);
  CHECK(vals(a1(x1)) == vals(F::avg_pool1d(x1, 3, 1, 1)));
  nn::MaxPool1d m1(2);
  CHECK(m1.name() == "MaxPool1d");
  CHECK(nn::AdaptiveAvgPool3d(2)(x3).shape() == Shape{1, 2, 2, 2, 2});
}

TEST_CASE("pooling errors name the op and the offending values") {
  const Tensor x = randn({1, 2, 6, 6});
  CHECK_THROWS_WITH_AS(F::max_pool2d(randn({6, 6}), 2), "[max_pool2d] expected a 3-D (unbatched) or 4-D (batched) input, got (6, 6)", Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x.to(int64), 2), "[max_pool2d] expected a float32 or float64 input, got int64", Error);
  CHECK_THROWS_WITH_AS(F::avg_pool2d(randn({1, 0, 6, 6}), 2),
                       "[avg_pool2d] expected non-zero sizes except the batch dim, got input (1, 0, 6, 6)", Error);
  CHECK(F::avg_pool2d(randn({0, 2, 6, 6}), 2).shape() == Shape{0, 2, 3, 3});  // an empty batch is fine
  for (auto f : {+[](const Tensor& t) { return F::max_pool2d(t, 2); }, +[](const Tensor& t) { return F::avg_pool2d(t, 2); }}) {
    const Tensor e = zeros({0, 2, 6, 6}, float64).requires_grad_();
    f(e).sum().backward();
    CHECK(e.grad().shape() == Shape{0, 2, 6, 6});
  }
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 0), "[max_pool2d] kernel_size must be positive, got (0, 0)", Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 2, 0), "[max_pool2d] stride must be positive, got (0, 0)", Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 2, 2, -1), "[max_pool2d] padding must be non-negative, got (-1, -1)", Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 2, 2, 0, 0), "[max_pool2d] dilation must be positive, got (0, 0)", Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 2, 2, 2),
                       "[max_pool2d] padding should be at most half of the effective kernel size, got padding (2, 2) "
                       "for kernel_size (2, 2) and dilation (1, 1)",
                       Error);
  CHECK_THROWS_WITH_AS(F::avg_pool1d(randn({1, 2, 6}), 3, 1, 2),
                       "[avg_pool1d] padding should be at most half of the kernel size, got padding (2,) for kernel_size (3,)",
                       Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, 7),
                       "[max_pool2d] input (1, 2, 6, 6) gives output size (0, 0), too small (kernel_size (7, 7), stride "
                       "(7, 7), padding (0, 0), dilation (1, 1))",
                       Error);
  CHECK_THROWS_WITH_AS(F::max_pool2d(x, {2, 2, 2}), "[max_pool2d] kernel_size (2, 2, 2) must have 1 or 2 entries", Error);
  CHECK_THROWS_WITH_AS(F::avg_pool2d(x, 2, {}, 0, false, true, 0), "[avg_pool2d] divisor_override must be non-zero", Error);
  CHECK_THROWS_WITH_AS(F::adaptive_avg_pool2d(x, -2),
                       "[adaptive_avg_pool2d] output_size must be non-negative (or -1 for the input's size), got (-2, -2)", Error);
  CHECK_THROWS_WITH_AS(F::lp_pool2d(x, 0.0, 2), "[lp_pool2d] norm_type must be positive and finite, got 0.000000", Error);
  auto [y, idx] = F::max_pool2d_with_indices(x, 2);
  CHECK_THROWS_WITH_AS(F::max_unpool2d(y, idx.to(float32), 2), "[max_unpool2d] indices must be int64, got float32", Error);
  CHECK_THROWS_WITH_AS(F::max_unpool2d(y, idx.select(0, 0), 2),
                       "[max_unpool2d] indices (2, 3, 3) must have the input's shape (1, 2, 3, 3)", Error);
  CHECK_THROWS_WITH_AS(F::max_unpool2d(y, idx, 2, {}, 0, Shape{8, 6}),
                       "[max_unpool2d] output_size (8, 6) is invalid: each spatial size must lie between (6, 6) - stride "
                       "and + stride (exclusive), stride (2, 2)",
                       Error);
  CHECK_THROWS_WITH_AS(F::max_unpool2d(y, idx, 2, {}, 0, Shape{6}),
                       "[max_unpool2d] output_size must have 2 or 4 elements, got (6,)", Error);
  CHECK_THROWS_WITH_AS(F::max_unpool2d(y, idx + 100, 2), "[max_unpool2d] indices must be in [0, 36) for output size (6, 6), got 135", Error);
  CHECK_THROWS_WITH_AS(nn::MaxPool2d(0), "[MaxPool2d] kernel_size must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::AvgPool2d(2, {}, 0, false, true, -1), "[AvgPool2d] divisor_override must be positive, got -1", Error);
  CHECK_THROWS_WITH_AS(nn::LPPool2d(-1.0, 2), "[LPPool2d] norm_type must be positive and finite, got -1.000000", Error);
  CHECK_THROWS_WITH_AS(nn::MaxUnpool2d(2)(y), "[MaxUnpool2d] this module has no single-tensor forward", Error);
}

// ---- transposed convolutions ------------------------------------------------------------------------------------

namespace {

/// Direct transposed convolution of x (N, Cin, *in) with w (Cin, Cout/groups, *k): every input element
/// scatters x * w into output o = i stride - padding + j dilation, in long double.
std::vector<double> naive_conv_transpose(const Tensor& xt, const Tensor& wt, const Tensor& bt, const Shape& s,
                                         const Shape& p, const Shape& op, const Shape& d, std::int64_t groups,
                                         Shape& out_shape) {
  const auto x = vals(xt), w = vals(wt);
  const Shape& xs = xt.shape();
  const Shape& ws = wt.shape();
  const std::size_t D = xs.size() - 2;
  const std::int64_t N = xs[0], Cin = xs[1], Cog = ws[1], Cout = Cog * groups, Cig = Cin / groups;
  Shape in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end()), out(D);
  for (std::size_t i = 0; i < D; ++i) out[i] = (in[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1;
  out_shape = {N, Cout};
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  const std::int64_t P = prod(in), K = prod(k), L = prod(out);
  std::vector<long double> y(static_cast<std::size_t>(N * Cout * L), 0.0L);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t ci = 0; ci < Cin; ++ci)
      for (std::int64_t pi = 0; pi < P; ++pi)
        for (std::int64_t co = 0; co < Cog; ++co)
          for (std::int64_t kj = 0; kj < K; ++kj) {
            std::int64_t ri = pi, rk = kj, o = 0, mult = 1;
            bool inside = true;
            for (std::int64_t dd = static_cast<std::int64_t>(D) - 1; dd >= 0; --dd) {
              const auto u = static_cast<std::size_t>(dd);
              const std::int64_t iv = ri % in[u], kv = rk % k[u];
              ri /= in[u];
              rk /= k[u];
              const std::int64_t ov = iv * s[u] - p[u] + kv * d[u];
              inside = inside && ov >= 0 && ov < out[u];
              o += ov * mult;
              mult *= out[u];
            }
            if (!inside) continue;
            const std::int64_t oc = (ci / Cig) * Cog + co;
            y[static_cast<std::size_t>((n * Cout + oc) * L + o)] +=
                static_cast<long double>(x[static_cast<std::size_t>((n * Cin + ci) * P + pi)]) *
                w[static_cast<std::size_t>((ci * Cog + co) * K + kj)];
          }
  std::vector<double> r(y.size());
  const std::vector<double> b = bt.defined() ? vals(bt) : std::vector<double>(static_cast<std::size_t>(Cout), 0.0);
  for (std::size_t j = 0; j < y.size(); ++j)
    r[j] = static_cast<double>(y[j] + b[(j / static_cast<std::size_t>(L)) % static_cast<std::size_t>(Cout)]);
  return r;
}

Tensor conv_t(int nd, const Tensor& x, const Tensor& w, const Tensor& b, const Shape& s, const Shape& p, const Shape& op,
              std::int64_t g, const Shape& d) {
  if (nd == 1) return F::conv_transpose1d(x, w, b, s, p, op, g, d);
  if (nd == 2) return F::conv_transpose2d(x, w, b, s, p, op, g, d);
  return F::conv_transpose3d(x, w, b, s, p, op, g, d);
}

}  // namespace

TEST_CASE("conv_transpose1d/2d/3d match a direct scatter loop") {
  manual_seed(8);
  struct C {
    int nd;
    std::int64_t Cin, Cout, k, s, p, op, d, groups;
    bool bias;
  };
  const std::vector<C> cases = {{1, 3, 4, 3, 1, 0, 0, 1, 1, true},  {1, 4, 6, 3, 2, 1, 1, 1, 2, false},
                                {1, 2, 3, 4, 3, 2, 2, 1, 1, true},  {1, 2, 2, 1, 1, 0, 1, 2, 1, true},
                                {2, 3, 2, 3, 2, 1, 1, 1, 1, true},  {2, 4, 4, 2, 2, 0, 0, 1, 4, false},
                                {2, 2, 3, 3, 1, 2, 0, 2, 1, true},  {3, 2, 2, 2, 2, 0, 1, 1, 1, true},
                                {3, 2, 4, 3, 1, 1, 0, 1, 2, false}, {2, 3, 3, 1, 1, 0, 0, 1, 1, false}};
  for (const C& c : cases)
    for (Dtype dt : {float64, float32}) {
      CAPTURE(c.nd);
      CAPTURE(c.k);
      CAPTURE(c.s);
      CAPTURE(c.p);
      CAPTURE(c.op);
      CAPTURE(c.d);
      CAPTURE(c.groups);
      Shape xs{2, c.Cin}, ws{c.Cin, c.Cout / c.groups};
      for (int i = 0; i < c.nd; ++i) {
        xs.push_back(c.nd == 3 ? 3 + i : 5 - i);
        ws.push_back(c.k);
      }
      const Tensor x = randn(xs, float64).to(dt), w = randn(ws, float64).to(dt);
      const Tensor b = c.bias ? randn({c.Cout}, float64).to(dt) : Tensor();
      const Shape s(c.nd, c.s), p(c.nd, c.p), op(c.nd, c.op), d(c.nd, c.d);
      Shape os;
      const auto ref = naive_conv_transpose(x.to(float64), w.to(float64), c.bias ? b.to(float64) : Tensor(), s, p, op, d,
                                            c.groups, os);
      const Tensor y = conv_t(c.nd, x, w, b, s, p, op, c.groups, d);
      CHECK(y.shape() == os);
      check_vals(y, ref, dt == float32 ? 2e-5 : 1e-13);
      // unbatched
      CHECK(vals(conv_t(c.nd, x.select(0, 1), w, b, s, p, op, c.groups, d)) == vals(y.select(0, 1)));
    }
}

TEST_CASE("conv_transpose is conv's adjoint in its input, with gradients of every order") {
  manual_seed(9);
  // <conv2d(z, w), x> = <z, conv_transpose2d(x, w)> for the matching geometry
  const Tensor w = randn({4, 3, 3, 2}, float64);  // conv: 3 -> 4 channels; transpose: 4 -> 3
  const Tensor z = randn({2, 3, 9, 8}, float64);
  const Tensor cz = F::conv2d(z, w, Tensor(), {2, 1}, {1, 0}, {1, 2});
  const Tensor x = randn(cz.shape(), float64);
  const Tensor tx = F::conv_transpose2d(x, w, Tensor(), {2, 1}, {1, 0}, {0, 0}, 1, {1, 2});
  CHECK(tx.shape() == z.shape());
  CHECK(std::abs((cz * x).sum().item<double>() - (z * tx).sum().item<double>()) < 1e-10);
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& a) { return F::conv_transpose2d(a[0], a[1], a[2], 2, 1, 1, 2, 1); },
      {leaf64({2, 4, 3, 3}), leaf64({4, 2, 3, 3}), leaf64({4})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::conv_transpose1d(a[0], a[1], a[2], 3, 1, 2, 1, 2); },
                            {leaf64({2, 3, 4}), leaf64({3, 2, 3}), leaf64({2})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& a) { return F::conv_transpose3d(a[0], a[1], Tensor(), 2, 0, 1); },
                            {leaf64({1, 2, 2, 2, 2}), leaf64({2, 2, 2, 2, 2})}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& a) { return F::conv_transpose2d(a[0], a[1], a[2], 2, 1, 1); },
                                {leaf64({1, 2, 3, 3}), leaf64({2, 3, 3, 3}), leaf64({3})}));
}

TEST_CASE("ConvTranspose modules: parameters, output_size and repr") {
  manual_seed(10);
  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  CHECK(ct.weight.shape() == Shape{4, 3, 3, 3});
  CHECK(ct.bias.shape() == Shape{6});
  // torch's fan_in of the transposed weight: weight.size(1) * kernel = 27, bound 1/sqrt(27) for the bias
  CHECK(ct.bias.abs().max().item<double>() <= 1 / std::sqrt(27.0));
  const Tensor x = randn({2, 4, 5, 5});
  CHECK(vals(ct(x)) == vals(F::conv_transpose2d(x, ct.weight, ct.bias, 2, 1, 0, 2)));
  CHECK(ct(x).shape() == Shape{2, 6, 9, 9});
  CHECK(ct.forward(x, Shape{10, 10}).shape() == Shape{2, 6, 10, 10});
  CHECK(ct.forward(x, Shape{2, 6, 10, 9}).shape() == Shape{2, 6, 10, 9});
  CHECK(vals(ct.forward(x, Shape{10, 10})) == vals(F::conv_transpose2d(x, ct.weight, ct.bias, 2, 1, 1, 2)));
  CHECK_THROWS_WITH_AS(ct.forward(x, Shape{11, 10}),
                       "[ConvTranspose2d] requested an output size of (11, 10), but valid sizes along dim 0 range from 9 "
                       "to 10 (for an input of (2, 4, 5, 5))",
                       Error);
  CHECK(ct.extra_repr() == "4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2");
  ct.zero_grad();
  ct(x).sum().backward();
  CHECK(ct.weight.grad().defined());
  CHECK(ct.state_dict().size() == 2);
  nn::ConvTranspose1d c1(2, 3, 4);
  CHECK(c1(randn({1, 2, 5})).shape() == Shape{1, 3, 8});
  nn::ConvTranspose3d c3(nn::ConvTranspose3dOptions(2, 2, 2).stride(2).bias(false));
  CHECK(!c3.bias.defined());
  CHECK(c3(randn({2, 2, 2, 2})).shape() == Shape{2, 4, 4, 4});
  CHECK_THROWS_WITH_AS(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 6, 3).output_padding(1)),
                       "[ConvTranspose2d] output_padding (1, 1) must be smaller than the stride (1, 1) or the dilation (1, 1)",
                       Error);
  CHECK_THROWS_WITH_AS(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 6, 3).groups(2)),
                       "[ConvTranspose2d] in_channels 3 must be divisible by groups 2", Error);
}

TEST_CASE("conv_transpose errors name the op and the shapes") {
  const Tensor x = randn({1, 4, 5, 5}), w = randn({4, 2, 3, 3});
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, randn({4, 2, 3})), "[conv_transpose2d] weight must be 4-D, got (4, 2, 3)", Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(randn({1, 3, 5, 5}), w),
                       "[conv_transpose2d] expected input with 4 channels (weight (4, 2, 3, 3)), got (1, 3, 5, 5)", Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, randn({4})), "[conv_transpose2d] bias must have shape (2,), got (4,)", Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, Tensor(), 2, 0, 2),
                       "[conv_transpose2d] output_padding (2, 2) must be smaller than the stride (2, 2) or the dilation (1, 1)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, Tensor(), 1, 4),
                       "[conv_transpose2d] input (1, 4, 5, 5) gives output size (-1, -1), too small (kernel (3, 3), stride "
                       "(1, 1), padding (4, 4))",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w, Tensor(), 1, 0, 0, 3),
                       "[conv_transpose2d] groups 3 must divide in_channels 4 (weight (4, 2, 3, 3))", Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(x, w.to(float64)), "[conv_transpose2d] input dtype float32 and weight dtype float64 differ", Error);
  CHECK_THROWS_WITH_AS(F::conv_transpose2d(randn({5, 5}), w),
                       "[conv_transpose2d] expected a 3-D (unbatched) or 4-D (batched) input for weight (4, 2, 3, 3), got (5, 5)",
                       Error);
}
