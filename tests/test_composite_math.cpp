// tests/test_composite_math.cpp - ops written with other ops: cross, kron, cdist (linalg), cartesian_prod,
// logspace, tril_indices, triu_indices, and sinc, logit, deg2rad, rad2deg, heaviside, fmax, fmin: values
// against loops and closed forms, broadcasting, errors and gradients.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <phasor/phasor.hpp>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {
constexpr double kPi = 3.14159265358979323846;
}  // namespace

TEST_CASE("cross, kron and cdist against loops") {
  manual_seed(81);
  const Tensor a = randn({4, 3}, float64), b = randn({4, 3}, float64);
  const Tensor c = cross(a, b);
  const auto av = vals(a), bv = vals(b), cv = vals(c);
  for (std::size_t r = 0; r < 4; ++r) {
    const double* p = &av[r * 3];
    const double* q = &bv[r * 3];
    CHECK(cv[r * 3 + 0] == doctest::Approx(p[1] * q[2] - p[2] * q[1]).epsilon(1e-14));
    CHECK(cv[r * 3 + 1] == doctest::Approx(p[2] * q[0] - p[0] * q[2]).epsilon(1e-14));
    CHECK(cv[r * 3 + 2] == doctest::Approx(p[0] * q[1] - p[1] * q[0]).epsilon(1e-14));
  }
  CHECK(vals(cross(vec({1, 0, 0}), vec({0, 1, 0}))) == std::vector<double>{0, 0, 1});
  CHECK(vals(cross(a.t(), b.t(), 0).t().contiguous()) == cv);
  CHECK(cross(a, b.select(0, 1).unsqueeze(0)).shape() == Shape{4, 3});  // broadcast
  CHECK_THROWS_WITH_AS(cross(randn({2, 4}), randn({2, 4})), Contains("[cross] dim -1 must have size 3"), Error);
  CHECK_THROWS_WITH_AS(cross(randn({3}), randn({2, 3})), Contains("[cross] expected inputs with the same number of dims"), Error);
  // kron of a 2x2 and a 2x3: block (i, j) is a[i, j] * b
  const Tensor k = kron(from_vector(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}), seq({2, 3}));
  REQUIRE(k.shape() == Shape{4, 6});
  const auto kv = vals(k), sv = vals(seq({2, 3}));
  int bad = 0;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 6; ++j) bad += kv[i * 6 + j] != (1 + (i / 2) * 2 + j / 3) * sv[(i % 2) * 3 + j % 3];
  CHECK(bad == 0);
  CHECK(kron(vec({1, 2}), seq({2, 2})).shape() == Shape{2, 4});
  CHECK(vals(kron(vec({1, 10}), vec({1, 2, 3}))) == std::vector<double>{1, 2, 3, 10, 20, 30});
  // cdist: every pair's p-norm
  const Tensor x1 = randn({2, 4, 3}, float64), x2 = randn({2, 5, 3}, float64);
  for (double p : {2.0, 1.0, 0.5, 0.0, std::numeric_limits<double>::infinity()}) {
    CAPTURE(p);
    const Tensor d = cdist(x1, x2, p);
    REQUIRE(d.shape() == Shape{2, 4, 5});
    const Tensor want = norm(x1.unsqueeze(2) - x2.unsqueeze(1), p, {-1});
    CHECK((d - want).abs().max().item<double>() < 1e-14);
  }
  CHECK(cdist(x1.select(0, 0), x2.select(0, 0)).select(0, 1).select(0, 2).item<double>() ==
        doctest::Approx((x1.select(0, 0).select(0, 1) - x2.select(0, 0).select(0, 2)).square().sum().sqrt().item<double>()).epsilon(1e-14));
  CHECK_THROWS_WITH_AS(cdist(randn({3}), randn({3})), Contains("[cdist] expected inputs of 2 or more dims"), Error);
  CHECK_THROWS_WITH_AS(cdist(randn({2, 3}), randn({2, 4})), Contains("[cdist] the inputs' last dims (features) differ"), Error);
  CHECK_THROWS_WITH_AS(cdist(randn({2, 3}), randn({2, 3}), -1), Contains("[cdist] p must be non-negative"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return cross(in[0], in[1]); }, {leaf64({2, 3}), leaf64({2, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return kron(in[0], in[1]); }, {leaf64({2, 2}), leaf64({3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return cdist(in[0], in[1]); }, {leaf64({3, 2}), leaf64({4, 2})}));
  CHECK(autodiff::gradcheck([](const V& in) { return cdist(in[0], in[1], 1.5); }, {leaf64({3, 2}), leaf64({4, 2})}));
}

TEST_CASE("cartesian_prod, logspace, tril_indices, triu_indices") {
  const Tensor cp = cartesian_prod({vec({1, 2}), vec({3, 4, 5})});
  CHECK(cp.shape() == Shape{6, 2});
  CHECK(vals(cp) == std::vector<double>{1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5});
  CHECK(vals(cartesian_prod({vec({7, 8})})) == std::vector<double>{7, 8});
  CHECK_THROWS_WITH_AS(cartesian_prod({seq({2, 2})}), Contains("[cartesian_prod] expected 1-d tensors, got shape (2, 2) at entry 0"), Error);
  CHECK(vals(logspace(0, 3, 4, 10.0, float64)) == std::vector<double>{1, 10, 100, 1000});
  CHECK(vals(logspace(-1, 1, 3, 2.0, float64)) == std::vector<double>{0.5, 1, 2});
  CHECK(logspace(0, 2, 3).dtype() == default_dtype());
  CHECK(logspace(0, 1, 0).shape() == Shape{0});
  CHECK_THROWS_WITH_AS(logspace(0, 1, -1), Contains("[logspace] number of steps must be non-negative"), Error);
  CHECK(ivals(tril_indices(3, 3)) == I{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2});
  CHECK(ivals(triu_indices(3, 3)) == I{0, 0, 0, 1, 1, 2, 0, 1, 2, 1, 2, 2});
  CHECK(ivals(tril_indices(2, 4, 1)) == I{0, 0, 1, 1, 1, 0, 1, 0, 1, 2});
  CHECK(ivals(triu_indices(3, 2, -1)) == I{0, 0, 1, 1, 2, 0, 1, 0, 1, 1});
  CHECK(tril_indices(0, 3).shape() == Shape{2, 0});
  CHECK_THROWS_WITH_AS(tril_indices(-1, 3), Contains("[tril_indices] sizes must be non-negative"), Error);
}

TEST_CASE("sinc, logit, deg2rad, rad2deg, heaviside, fmax, fmin") {
  const Tensor x = vec({0, 0.5, 1, -2.25, 1e-9});
  const auto sv = vals(sinc(x));
  CHECK(sv[0] == 1);
  CHECK(sv[1] == doctest::Approx(std::sin(kPi * 0.5) / (kPi * 0.5)).epsilon(1e-15));
  CHECK(std::abs(sv[2]) < 1e-15);
  CHECK(sv[4] == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(sinc(from_vector(I{0, 1})).dtype() == default_dtype());
  check_close(logit(vec({0.5, 0.25, 0.9})), {0, std::log(1.0 / 3), std::log(9.0)}, 1e-15);
  const auto lv = vals(logit(vec({0, 1, 0.5}), 1e-6));
  CHECK(lv[0] == doctest::Approx(std::log(1e-6 / (1 - 1e-6))).epsilon(1e-12));
  const double hi = 1 - 1e-6;  // the clamp's upper end, as double holds it
  CHECK(lv[1] == doctest::Approx(std::log(hi / (1 - hi))).epsilon(1e-14));
  CHECK(vals(logit(vec({0})))[0] == -std::numeric_limits<double>::infinity());
  check_close(deg2rad(vec({180, -90})), {kPi, -kPi / 2}, 1e-15);
  check_close(rad2deg(vec({kPi, 1})), {180, 180 / kPi}, 1e-15);
  CHECK(deg2rad(from_vector(I{180})).dtype() == default_dtype());
  CHECK(vals(heaviside(vec({-1, 0, 2, kNaN}), vec({0.5}))).size() == 4);
  const auto hv = vals(heaviside(vec({-1, 0, 2}), vec({0.5})));
  CHECK(hv == std::vector<double>{0, 0.5, 1});
  CHECK(vals(heaviside(vec({0, 0}), vec({0.25, 0.75}))) == std::vector<double>{0.25, 0.75});
  CHECK_THROWS_WITH_AS(heaviside(randn({2}), vec({1})), Contains("[heaviside] values (float64) must not promote the input (float32)"), Error);
  const Tensor a = vec({1, kNaN, 3, kNaN}), b = vec({2, 5, kNaN, kNaN});
  const auto fx = vals(fmax(a, b)), fn = vals(fmin(a, b));
  CHECK(fx[0] == 2);
  CHECK(fx[1] == 5);
  CHECK(fx[2] == 3);
  CHECK(std::isnan(fx[3]));
  CHECK(fn[0] == 1);
  CHECK(fn[1] == 5);
  CHECK(std::isnan(fn[3]));
  CHECK(vals(fmax(seq({2, 2}), vec({1.5}))) == std::vector<double>{1.5, 1.5, 2, 3});  // broadcast
  const Tensor cz = from_vector(std::vector<std::complex<double>>{{1, 1}});
  CHECK_THROWS_WITH_AS(fmax(cz, cz), Contains("[fmax] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(logit(cz), Contains("[logit] not supported for complex tensors"), Error);
  manual_seed(82);
  CHECK(autodiff::gradcheck([](const V& in) { return sinc(in[0]); }, {leaf64({6})}));
  CHECK(autodiff::gradcheck([](const V& in) { return logit(in[0].sigmoid(), 1e-3); }, {leaf64({5})}));
  CHECK(autodiff::gradcheck([](const V& in) { return deg2rad(in[0]) + rad2deg(in[0]); }, {leaf64({3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return fmax(in[0], in[1]) + fmin(in[0], in[1]); }, {leaf64({4}), leaf64({4})}));
  // sinc's gradient at 0 is 0, not NaN
  Tensor z = vec({0, 0.5}).requires_grad_();
  sinc(z).sum().backward();
  CHECK(vals(z.grad())[0] == 0);
}
