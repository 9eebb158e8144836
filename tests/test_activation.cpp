// tests/test_activation.cpp - phasor/nn/activation.hpp: values against closed forms in long double over grids
// that hold the kinks, +-inf and NaN (float64 and float32); the gradients' values at the kinks (torch's
// conventions); gradcheck and gradgradcheck in float64 for every function; prelu / rrelu / glu / softmin against
// direct loops; dtype rules; every promised error; the modules.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
namespace F = phasor::nn::functional;
using doctest::Contains;

namespace {

using LD = long double;
using V = std::vector<Tensor>;
using Ref = std::function<LD(LD)>;

constexpr LD kSeluAlpha = 1.6732632423543772848170429916717L;
constexpr LD kSeluScale = 1.0507009873554804934193349852946L;

/// The grid: kinks of every function here (0, +-0.5, +-1, +-3, 6), +-inf, NaN, large values and tails.
const std::vector<double> kGrid = {-kInf, -800.0, -40.0, -20.5, -7.0, -6.0, -3.0, -2.999, -2.5, -1.0, -0.75, -0.5,
                                   -0.25, -1e-9, -0.0, 0.0, 1e-9, 0.25, 0.5, 0.75, 1.0, 2.5, 3.0, 3.001, 6.0, 6.5,
                                   19.5, 20.5, 40.0, 800.0, kInf, kNaN};

/// Each value of t (any real dtype) matches ref: NaN with NaN, infinities exactly, else within tol relative
/// (absolute below 1).
void check_values(const Tensor& t, const std::vector<LD>& ref, double tol) {
  const auto v = vals(t.to(float64));
  REQUIRE(v.size() == ref.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(i);
    CAPTURE(v[i]);
    CAPTURE(static_cast<double>(ref[i]));
    if (std::isnan(static_cast<double>(ref[i]))) {
      CHECK(std::isnan(v[i]));
    } else if (std::isinf(static_cast<double>(ref[i]))) {
      CHECK(v[i] == static_cast<double>(ref[i]));
    } else {
      const LD err = std::fabs(static_cast<LD>(v[i]) - ref[i]);
      CHECK(err <= tol * std::max<LD>(1, std::fabs(ref[i])));
    }
  }
}

/// ref over the grid, with its values first rounded to dt (the input the op sees).
std::vector<LD> reference(const Ref& ref, Dtype dt) {
  std::vector<LD> out;
  for (double x : vals(vec(kGrid).to(dt).to(float64))) out.push_back(ref(static_cast<LD>(x)));
  return out;
}

LD hardtanh_ref(LD x, LD lo, LD hi) { return std::isnan(x) ? x : (x < lo ? lo : (x > hi ? hi : x)); }
LD elu_ref(LD x, LD alpha) { return x > 0 ? x : alpha * std::expm1(x); }

/// The functions of one float argument with their long double closed forms.
std::vector<std::pair<std::string, std::pair<std::function<Tensor(const Tensor&)>, Ref>>> unary_cases() {
  return {
      {"elu", {[](const Tensor& x) { return F::elu(x); }, [](LD x) { return elu_ref(x, 1); }}},
      {"elu alpha 2", {[](const Tensor& x) { return F::elu(x, 2.0); }, [](LD x) { return elu_ref(x, 2); }}},
      {"selu", {[](const Tensor& x) { return F::selu(x); }, [](LD x) { return kSeluScale * elu_ref(x, kSeluAlpha); }}},
      {"celu", {[](const Tensor& x) { return F::celu(x, 1.5); },
                [](LD x) { return x > 0 ? x : 1.5L * std::expm1(x / 1.5L); }}},
      {"leaky_relu", {[](const Tensor& x) { return F::leaky_relu(x); }, [](LD x) { return x > 0 ? x : x * 0.01L; }}},
      {"leaky_relu 0.2", {[](const Tensor& x) { return F::leaky_relu(x, 0.2); }, [](LD x) { return x > 0 ? x : x * 0.2L; }}},
      {"rrelu eval", {[](const Tensor& x) { return F::rrelu(x, 0.1, 0.3); }, [](LD x) { return x > 0 ? x : x * 0.2L; }}},
      {"hardtanh", {[](const Tensor& x) { return F::hardtanh(x); }, [](LD x) { return hardtanh_ref(x, -1, 1); }}},
      {"hardtanh -0.5 3", {[](const Tensor& x) { return F::hardtanh(x, -0.5, 3.0); },
                           [](LD x) { return hardtanh_ref(x, -0.5L, 3); }}},
      {"relu6", {[](const Tensor& x) { return F::relu6(x); }, [](LD x) { return hardtanh_ref(x, 0, 6); }}},
      {"hardsigmoid", {[](const Tensor& x) { return F::hardsigmoid(x); },
                       [](LD x) { return hardtanh_ref(x + 3, 0, 6) / 6; }}},
      {"hardswish", {[](const Tensor& x) { return F::hardswish(x); },
                     [](LD x) { return x <= -3 ? LD(0) : x * hardtanh_ref(x + 3, 0, 6) / 6; }}},
      {"mish", {[](const Tensor& x) { return F::mish(x); },
                [](LD x) { return std::isinf(x) && x < 0 ? LD(0) : x * std::tanh(std::log1p(std::exp(x))); }}},
      {"softsign", {[](const Tensor& x) { return F::softsign(x); },
                    [](LD x) { return std::isinf(x) ? (x > 0 ? LD(1) : LD(-1)) : x / (1 + std::fabs(x)); }}},
      {"softshrink", {[](const Tensor& x) { return F::softshrink(x); },
                      [](LD x) { return std::isnan(x) ? x : (x > 0.5L ? x - 0.5L : (x < -0.5L ? x + 0.5L : LD(0))); }}},
      {"softshrink 0", {[](const Tensor& x) { return F::softshrink(x, 0.0); }, [](LD x) { return x; }}},
      {"hardshrink", {[](const Tensor& x) { return F::hardshrink(x); },
                      [](LD x) { return std::isnan(x) ? x : (std::fabs(x) <= 0.5L ? LD(0) : x); }}},
      {"tanhshrink", {[](const Tensor& x) { return F::tanhshrink(x); }, [](LD x) { return x - std::tanh(x); }}},
      {"threshold", {[](const Tensor& x) { return F::threshold(x, 0.5, -7.0); },
                     [](LD x) { return x <= 0.5L ? LD(-7) : x; }}},
      {"logsigmoid", {[](const Tensor& x) { return F::logsigmoid(x); },
                      [](LD x) { return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x)); }}},
  };
}

/// Points away from every kink, for the finite differences of gradcheck.
Tensor smooth_points() {
  return vec({-4.1, -3.3, -2.7, -1.3, -0.8, -0.6, -0.2, 0.3, 0.7, 0.9, 1.6, 2.2, 3.9, 5.2, 7.5}).requires_grad_();
}

/// d f / d x at the points xs (float64), by backward.
std::vector<double> grad_at(const std::function<Tensor(const Tensor&)>& f, const std::vector<double>& xs) {
  Tensor x = vec(xs).requires_grad_();
  f(x).sum().backward();
  return vals(x.grad());
}

}  // namespace

TEST_CASE("activation: values against closed forms over the kinks, +-inf and NaN (float64 and float32)") {
  for (const auto& [name, c] : unary_cases()) {
    CAPTURE(name);
    const auto& [f, ref] = c;
    const Tensor y64 = f(vec(kGrid));
    CHECK(y64.dtype() == float64);
    check_values(y64, reference(ref, float64), 1e-15);
    const Tensor y32 = f(vec(kGrid).to(float32));
    CHECK(y32.dtype() == float32);
    check_values(y32, reference(ref, float32), 8e-7);
    // a strided (transposed) input gives the same values
    const Tensor x2 = vec(kGrid).reshape({4, 8}).t();
    check_values(f(x2).t().reshape({32}), reference(ref, float64), 1e-15);
    check_values(f(x2.to(float32)).t().reshape({32}), reference(ref, float32), 8e-7);
  }
}

TEST_CASE("activation: float32 elu, mish and logsigmoid (vector loops) within a few ulps on dense grids") {
  // 20001 points over [-25, 5] (denser near 0, where the elu series and the exponential meet at -0.7)
  std::vector<double> xs;
  for (int k = -10000; k <= 10000; ++k) xs.push_back(k < 0 ? -25.0 * std::pow(-k / 10000.0, 3.0) : 5.0 * k / 10000.0);
  const Tensor x = vec(xs).to(float32);
  const auto xf = vals(x);
  const std::vector<std::pair<std::string, std::pair<Tensor, Ref>>> cases = {
      {"elu", {F::elu(x, 1.3), [](LD v) { return v > 0 ? v : 1.3L * std::expm1(v); }}},
      {"celu", {F::celu(x, 0.5), [](LD v) { return v > 0 ? v : 0.5L * std::expm1(v / 0.5L); }}},
      {"mish", {F::mish(x), [](LD v) { return v * std::tanh(std::log1p(std::exp(v))); }}},
      {"logsigmoid", {F::logsigmoid(x), [](LD v) { return -std::log1p(std::exp(-v)); }}},
  };
  for (const auto& [name, c] : cases) {
    CAPTURE(name);
    const auto y = vals(c.first.to(float64));
    double worst = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const LD r = c.second(static_cast<LD>(xf[i]));
      if (r == 0) continue;
      worst = std::max(worst, static_cast<double>(std::fabs((y[i] - r) / r)));
    }
    CHECK(worst <= 3e-7);  // a few float ulps (2^-24 = 5.96e-8 relative at most per ulp)
  }
}

TEST_CASE("activation: gradients at the kinks follow torch's conventions") {
  // hardtanh / relu6: 1 strictly inside, 0 at the bounds; NaN passes the gradient
  CHECK(grad_at([](const Tensor& x) { return F::hardtanh(x); }, {-1.0, -0.99, 0.0, 1.0, 1.5, kNaN}) ==
        std::vector<double>{0, 1, 1, 0, 0, 1});
  CHECK(grad_at([](const Tensor& x) { return F::relu6(x); }, {-1.0, 0.0, 3.0, 6.0, 7.0}) ==
        std::vector<double>{0, 0, 1, 0, 0});
  // hardsigmoid: 1/6 strictly inside (-3, 3); hardswish: x / 3 + 1/2 on [-3, 3]
  check_close(vec(grad_at([](const Tensor& x) { return F::hardsigmoid(x); }, {-3.0, -2.0, 0.0, 3.0, 4.0})),
              {0, 1.0 / 6, 1.0 / 6, 0, 0});
  check_close(vec(grad_at([](const Tensor& x) { return F::hardswish(x); }, {-3.5, -3.0, 0.0, 3.0, 3.5})),
              {0, -0.5, 0.5, 1.5, 1});
  // leaky_relu, prelu, elu at 0 take the negative branch
  check_close(vec(grad_at([](const Tensor& x) { return F::leaky_relu(x, 0.2); }, {-1.0, 0.0, 1.0})), {0.2, 0.2, 1});
  check_close(vec(grad_at([](const Tensor& x) { return F::elu(x, 2.0); }, {0.0, 1.0})), {2, 1});
  check_close(vec(grad_at([](const Tensor& x) { return F::celu(x, 2.0); }, {0.0, 1.0})), {1, 1});
  check_close(vec(grad_at([](const Tensor& x) { return F::prelu(x, vec({0.3})); }, {-1.0, 0.0, 1.0})),
              {0.3, 0.3, 1});
  // shrinks: 0 on the closed band [-lambd, lambd]; threshold: 0 at the threshold
  CHECK(grad_at([](const Tensor& x) { return F::softshrink(x); }, {-0.6, -0.5, 0.0, 0.5, 0.6}) ==
        std::vector<double>{1, 0, 0, 0, 1});
  CHECK(grad_at([](const Tensor& x) { return F::hardshrink(x); }, {-0.6, -0.5, 0.0, 0.5, 0.6}) ==
        std::vector<double>{1, 0, 0, 0, 1});
  CHECK(grad_at([](const Tensor& x) { return F::threshold(x, 0.5, 3.0); }, {0.4, 0.5, 0.6}) ==
        std::vector<double>{0, 0, 1});
  // the smooth ones at points far out: no 0 * inf
  check_close(vec(grad_at([](const Tensor& x) { return F::elu(x); }, {-800.0, 800.0})), {0, 1});
  check_close(vec(grad_at([](const Tensor& x) { return F::logsigmoid(x); }, {-800.0, 0.0, 800.0})), {1, 0.5, 0});
  check_close(vec(grad_at([](const Tensor& x) { return F::mish(x); }, {-800.0, 0.0, 800.0})), {0, 0.6, 1});
}

TEST_CASE("activation: gradcheck and gradgradcheck in float64") {
  using autodiff::gradcheck;
  using autodiff::gradgradcheck;
  for (const auto& [name, c] : unary_cases()) {
    CAPTURE(name);
    const auto f = c.first;
    const auto fn = [f](const V& in) { return f(in[0]); };
    CHECK(gradcheck(fn, {smooth_points()}));
    CHECK(gradgradcheck([f](const V& in) { return V{f(in[0])}; }, {smooth_points()}));
  }
  const Tensor x = (randn({2, 3, 4}, float64) * 2.0).requires_grad_();
  const Tensor w = vec({0.25, -0.5, 1.5}).requires_grad_();
  CHECK(gradcheck([](const V& in) { return F::prelu(in[0], in[1]); }, {x, w}));
  CHECK(gradgradcheck([](const V& in) { return V{F::prelu(in[0], in[1])}; }, {x, w}));
  CHECK(gradcheck([](const V& in) { return F::prelu(in[0], in[1]); }, {x, vec({0.1}).requires_grad_()}));
  CHECK(gradcheck([](const V& in) { return F::glu(in[0], 1); }, {randn({3, 4, 2}, float64).requires_grad_()}));
  CHECK(gradgradcheck([](const V& in) { return V{F::glu(in[0])}; }, {randn({3, 4}, float64).requires_grad_()}));
  CHECK(gradcheck([](const V& in) { return F::softmin(in[0], 0); }, {randn({3, 4}, float64).requires_grad_()}));
  CHECK(gradgradcheck([](const V& in) { return V{F::softmin(in[0], -1)}; }, {randn({3, 4}, float64).requires_grad_()}));
  // training rrelu: a fresh generator of the same seed gives the same slopes on every call
  const auto train = [](const V& in) {
    Generator gen(7);
    return F::rrelu(in[0], 0.1, 0.4, true, &gen);
  };
  CHECK(gradcheck(train, {smooth_points()}));
  CHECK(gradgradcheck([train](const V& in) { return V{train(in)}; }, {smooth_points()}));
}

TEST_CASE("activation: prelu against a direct loop, per channel and shared") {
  const Tensor x = randn({2, 3, 5}, float64);
  const Tensor w = vec({0.25, -0.5, 2.0});
  const auto xv = vals(x), wv = vals(w);
  std::vector<double> ref(xv.size()), shared(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double slope = wv[(i / 5) % 3];
    ref[i] = xv[i] > 0 ? xv[i] : slope * xv[i];
    shared[i] = xv[i] > 0 ? xv[i] : 0.7 * xv[i];
  }
  check_close(F::prelu(x, w), ref, 1e-15);
  check_close(F::prelu(x, vec({0.7})), shared, 1e-15);
  check_close(F::prelu(x, full({}, 0.7, float64)), shared, 1e-15);
  // 1-D input: its dim 0 is the channel dim; 0-d input with one slope
  check_close(F::prelu(vec({-1.0, 2.0, -3.0}), w), {-0.25, 2.0, -6.0}, 1e-15);
  check_close(F::prelu(full({}, -2.0, float64), vec({0.5})), {-1.0}, 1e-15);
  // the gradient of the weight: sum of x over the non-positive elements of its channel
  const Tensor wg = w.clone().requires_grad_();
  F::prelu(x, wg).sum().backward();
  std::vector<double> gref(3, 0.0);
  for (std::size_t i = 0; i < xv.size(); ++i)
    if (!(xv[i] > 0)) gref[(i / 5) % 3] += xv[i];
  check_close(wg.grad(), gref, 1e-14);
  // float32
  check_close(F::prelu(x.to(float32), w.to(float32)).to(float64), ref, 1e-6);
}

TEST_CASE("activation: training rrelu draws one slope per non-positive element from the generator") {
  const Tensor x = (randn({4000}, float64) * 2.0).requires_grad_();
  Generator g1(11), g2(11);
  const Tensor y = F::rrelu(x, 0.1, 0.4, true, &g1);
  const Tensor y2 = F::rrelu(x, 0.1, 0.4, true, &g2);
  CHECK(vals(y) == vals(y2));  // the same seed, the same slopes
  y.sum().backward();
  const auto xv = vals(x), yv = vals(y), gv = vals(x.grad());
  double lo = 1, hi = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    if (xv[i] > 0) {
      CHECK(yv[i] == xv[i]);
      CHECK(gv[i] == 1.0);
    } else {
      const double a = yv[i] / xv[i];
      lo = std::min(lo, a);
      hi = std::max(hi, a);
      CHECK(gv[i] == doctest::Approx(a).epsilon(1e-12));  // the gradient uses the same slope
    }
  }
  CHECK(lo >= 0.1);
  CHECK(hi <= 0.4);
  CHECK(hi - lo > 0.25);  // spread over the range
  // the default generator when none is given; eval mode takes the mean slope
  CHECK(F::rrelu(x.detach(), 0.1, 0.4, true).shape() == Shape{4000});
  check_close(F::rrelu(vec({-2.0, 3.0}), 0.1, 0.4), {-0.5, 3.0}, 1e-15);
}

TEST_CASE("activation: glu and softmin against direct formulas") {
  const Tensor x = randn({3, 4, 6}, float64);
  const auto xv = vals(x);
  for (std::int64_t dim : {0, 1, 2}) {
    const std::int64_t n = x.size(dim);
    if (n % 2) continue;
    CAPTURE(dim);
    const Tensor y = F::glu(x, dim);
    Shape s = x.shape();
    s[static_cast<std::size_t>(dim)] = n / 2;
    CHECK(y.shape() == s);
    const std::int64_t inner = dim == 2 ? 1 : (dim == 1 ? 6 : 24);
    std::vector<double> ref;
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const std::int64_t k = (static_cast<std::int64_t>(i) / inner) % n;
      if (k >= n / 2) continue;
      const LD a = xv[i], b = xv[i + static_cast<std::size_t>(n / 2 * inner)];
      ref.push_back(static_cast<double>(a / (1 + std::exp(-b))));
    }
    check_close(y, ref, 1e-15);
  }
  check_close(F::glu(vec({1.0, 2.0, 0.0, -1.0})), {0.5, 2.0 / (1.0 + std::exp(1.0))}, 1e-15);
  // softmin along each dim: e^-x / sum e^-x
  const Tensor m = F::softmin(x, 1);
  std::vector<double> ref(xv.size());
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t c = 0; c < 6; ++c) {
      LD sum = 0;
      for (std::int64_t b = 0; b < 4; ++b) sum += std::exp(-static_cast<LD>(xv[static_cast<std::size_t>(a * 24 + b * 6 + c)]));
      for (std::int64_t b = 0; b < 4; ++b) {
        const auto i = static_cast<std::size_t>(a * 24 + b * 6 + c);
        ref[i] = static_cast<double>(std::exp(-static_cast<LD>(xv[i])) / sum);
      }
    }
  check_close(m, ref, 1e-14);
  check_close(F::softmin(vec({1000.0, 1001.0}), 0), {1.0 / (1.0 + std::exp(-1.0)), 1.0 / (1.0 + std::exp(1.0))}, 1e-15);
}

TEST_CASE("activation: dtypes (int64 kept by hardtanh / relu6 / threshold, promoted by softsign / tanhshrink)") {
  const Tensor i = from_vector(std::vector<std::int64_t>{-9, -1, 0, 2, 7});
  CHECK(F::hardtanh(i, -2.0, 3.0).dtype() == int64);
  CHECK(ivals(F::hardtanh(i, -2.0, 3.0)) == std::vector<std::int64_t>{-2, -1, 0, 2, 3});
  CHECK(ivals(F::relu6(i)) == std::vector<std::int64_t>{0, 0, 0, 2, 6});
  CHECK(ivals(F::threshold(i, 0.0, 5.0)) == std::vector<std::int64_t>{5, 5, 5, 2, 7});
  CHECK(F::softsign(i).dtype() == default_dtype());
  check_close(F::softsign(i).to(float64), {-0.9, -0.5, 0.0, 2.0 / 3.0, 0.875}, 1e-7);
  CHECK(F::tanhshrink(i).dtype() == default_dtype());
  check_close(F::tanhshrink(i).to(float64), {-9 - std::tanh(-9.0), -1 - std::tanh(-1.0), 0, 2 - std::tanh(2.0), 7 - std::tanh(7.0)}, 1e-6);
  // float32 stays float32 through the compositions too
  CHECK(F::prelu(vec({1.0}).to(float32), vec({0.5}).to(float32)).dtype() == float32);
  CHECK(F::glu(vec({1.0, 2.0}).to(float32)).dtype() == float32);
  CHECK(F::softmin(vec({1.0, 2.0}).to(float32), 0).dtype() == float32);
}

TEST_CASE("activation: errors") {
  const Tensor i = from_vector(std::vector<std::int64_t>{1, -2});
  const Tensor c = complex(vec({1.0, 2.0}), vec({0.5, 0.0}));
  const Tensor b = vec({1.0, -1.0}) > 0.0;
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> float_only = {
      {"elu", [](const Tensor& x) { return F::elu(x); }},
      {"selu", [](const Tensor& x) { return F::selu(x); }},
      {"celu", [](const Tensor& x) { return F::celu(x); }},
      {"leaky_relu", [](const Tensor& x) { return F::leaky_relu(x); }},
      {"prelu", [](const Tensor& x) { return F::prelu(x, vec({0.25})); }},
      {"rrelu", [](const Tensor& x) { return F::rrelu(x); }},
      {"hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x); }},
      {"hardswish", [](const Tensor& x) { return F::hardswish(x); }},
      {"mish", [](const Tensor& x) { return F::mish(x); }},
      {"softshrink", [](const Tensor& x) { return F::softshrink(x); }},
      {"hardshrink", [](const Tensor& x) { return F::hardshrink(x); }},
      {"logsigmoid", [](const Tensor& x) { return F::logsigmoid(x); }},
      {"glu", [](const Tensor& x) { return F::glu(x); }},
      {"softmin", [](const Tensor& x) { return F::softmin(x, 0); }},
  };
  for (const auto& [name, f] : float_only) {
    CAPTURE(name);
    const std::string tag = "[" + name + "]";
    CHECK_THROWS_WITH_AS(f(i), Contains(tag.c_str()), Error);
    CHECK_THROWS_WITH_AS(f(i), Contains("int64"), Error);
    CHECK_THROWS_WITH_AS(f(c), Contains(tag.c_str()), Error);
    CHECK_THROWS_WITH_AS(f(b), Contains(tag.c_str()), Error);
    CHECK_THROWS_WITH_AS(f(Tensor()), Contains(tag.c_str()), Error);
  }
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> int_ok = {
      {"hardtanh", [](const Tensor& x) { return F::hardtanh(x); }},
      {"relu6", [](const Tensor& x) { return F::relu6(x); }},
      {"threshold", [](const Tensor& x) { return F::threshold(x, 0.0, 1.0); }},
      {"softsign", [](const Tensor& x) { return F::softsign(x); }},
      {"tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); }},
  };
  for (const auto& [name, f] : int_ok) {
    CAPTURE(name);
    const std::string tag = "[" + name + "]";
    CHECK_NOTHROW(f(i));
    CHECK_THROWS_WITH_AS(f(c), Contains(tag.c_str()), Error);
    CHECK_THROWS_WITH_AS(f(c), Contains("complex128"), Error);
    CHECK_THROWS_WITH_AS(f(b), Contains(tag.c_str()), Error);
  }
  const Tensor x = randn({2, 3, 4}, float64);
  CHECK_THROWS_WITH_AS(F::celu(x, 0.0), "[celu] alpha cannot be 0 (it divides x)", Error);
  CHECK_THROWS_WITH_AS(F::softshrink(x, -0.1), "[softshrink] lambd must be non-negative, got -0.1", Error);
  CHECK_THROWS_WITH_AS(F::hardtanh(x, 1.0, -1.0), "[hardtanh] min_val must be at most max_val, got min_val = 1, max_val = -1", Error);
  CHECK_THROWS_WITH_AS(F::rrelu(x, 0.5, 0.25), "[rrelu] lower bound must be at most the upper bound, got lower = 0.5, upper = 0.25", Error);
  CHECK_THROWS_WITH_AS(F::prelu(x, vec({1.0, 2.0})),
                       "[prelu] weight has 2 elements, expected 1 or the 3 channels of the input of shape (2, 3, 4)", Error);
  CHECK_THROWS_WITH_AS(F::prelu(vec({1.0, 2.0}), vec({1.0, 2.0, 3.0})), Contains("expected 1 or the 2 channels"), Error);
  CHECK_THROWS_WITH_AS(F::prelu(x, ones({3, 1}, float64)), "[prelu] weight must be a scalar or a 1-D tensor, got shape (3, 1)", Error);
  CHECK_THROWS_WITH_AS(F::prelu(x, Tensor()), "[prelu] weight is undefined", Error);
  CHECK_THROWS_WITH_AS(F::prelu(x, from_vector(std::vector<std::int64_t>{1})), Contains("[prelu] weight must be a real floating"), Error);
  CHECK_THROWS_WITH_AS(F::glu(x, 1), "[glu] the halved dim must have an even size, but dim 1 of the input of shape (2, 3, 4) has size 3", Error);
  CHECK_THROWS_WITH_AS(F::glu(full({}, 1.0, float64)), "[glu] a 0-d input has no dim to halve", Error);
  CHECK_THROWS_WITH_AS(F::glu(x, 3), Contains("[glu]"), Error);
  CHECK_THROWS_WITH_AS(F::softmin(x, 5), Contains("[softmin]"), Error);
  CHECK_THROWS_WITH_AS(nn::PReLU(0), "[PReLU] num_parameters must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::PReLU(1, 0.25, int64), "[PReLU] dtype must be float32 or float64, got int64", Error);
  CHECK_THROWS_WITH_AS(nn::CELU(0.0), "[CELU] alpha cannot be 0 (it divides x)", Error);
  CHECK_THROWS_WITH_AS(nn::Hardtanh(2.0, 1.0), Contains("[Hardtanh] min_val must be at most max_val"), Error);
  CHECK_THROWS_WITH_AS(nn::RReLU(0.5, 0.1), Contains("[RReLU] lower bound must be at most the upper bound"), Error);
  CHECK_THROWS_WITH_AS(nn::Softshrink(-1.0), "[Softshrink] lambd must be non-negative, got -1", Error);
}

TEST_CASE("activation: modules equal the functions; PReLU learns its weight") {
  const Tensor x = randn({2, 4, 3}, float64) * 3.0;
  const auto same = [](const Tensor& a, const Tensor& b) { CHECK(vals(a) == vals(b)); };
  same(nn::ELU(0.5).forward(x), F::elu(x, 0.5));
  same(nn::SELU().forward(x), F::selu(x));
  same(nn::CELU(2.0).forward(x), F::celu(x, 2.0));
  same(nn::LeakyReLU(0.2).forward(x), F::leaky_relu(x, 0.2));
  same(nn::Hardtanh(-2.0, 2.0).forward(x), F::hardtanh(x, -2.0, 2.0));
  same(nn::ReLU6().forward(x), F::relu6(x));
  same(nn::Hardsigmoid().forward(x), F::hardsigmoid(x));
  same(nn::Hardswish().forward(x), F::hardswish(x));
  same(nn::Mish().forward(x), F::mish(x));
  same(nn::Softsign().forward(x), F::softsign(x));
  same(nn::Softshrink(1.0).forward(x), F::softshrink(x, 1.0));
  same(nn::Hardshrink(1.0).forward(x), F::hardshrink(x, 1.0));
  same(nn::Tanhshrink().forward(x), F::tanhshrink(x));
  same(nn::Threshold(0.1, 20.0).forward(x), F::threshold(x, 0.1, 20.0));
  same(nn::LogSigmoid().forward(x), F::logsigmoid(x));
  same(nn::GLU(1).forward(x), F::glu(x, 1));
  same(nn::Softmin(2).forward(x), F::softmin(x, 2));
  same(nn::Softmax(0).forward(x), nn::functional::softmax(x, 0));
  same(nn::LogSoftmax(-1).forward(x), nn::functional::log_softmax(x, -1));
  nn::RReLU rr(0.1, 0.3);
  rr.eval();
  same(rr.forward(x), F::leaky_relu(x, 0.2));
  rr.train();
  const Tensor yr = rr.forward(x);
  const auto xv = vals(x), yv = vals(yr);
  for (std::size_t k = 0; k < xv.size(); ++k)
    if (xv[k] < 0) CHECK((yv[k] / xv[k] >= 0.1 - 1e-12 && yv[k] / xv[k] <= 0.3 + 1e-12));
  CHECK(nn::ELU(0.5).extra_repr() == "alpha=0.5");
  CHECK(nn::Threshold(0.1, 20.0).extra_repr() == "threshold=0.1, value=20");
  CHECK(nn::Hardtanh().extra_repr() == "min_val=-1, max_val=1");

  nn::PReLU p(4, 0.25, float64);
  CHECK(vals(p.weight) == std::vector<double>(4, 0.25));
  CHECK(p.weight.requires_grad());
  same(p.forward(x), F::prelu(x, vec({0.25, 0.25, 0.25, 0.25})));
  p.forward(x).sum().backward();
  REQUIRE(p.weight.grad().defined());
  std::vector<double> gref(4, 0.0);
  for (std::size_t k = 0; k < xv.size(); ++k)
    if (!(xv[k] > 0)) gref[(k / 3) % 4] += xv[k];
  check_close(p.weight.grad(), gref, 1e-14);
  const auto sd = p.state_dict();
  bool found = false;
  for (const auto& kv : sd) found = found || kv.first == "weight";
  CHECK(found);
  CHECK(p.parameters().size() == 1);
  CHECK(nn::PReLU().weight.shape() == Shape{1});
  CHECK(nn::PReLU().weight.dtype() == float32);
}
