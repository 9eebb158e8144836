// tests/test_calculus.cpp - integrals and derivatives of sampled functions: trapezoid, cumulative_trapezoid and
// gradient against loops over the samples (in long double), closed forms (the second-order formulas are exact for
// quadratics), their errors, and gradcheck in the samples and the coordinates.
#include <doctest/doctest.h>

#include <cmath>
#include <phasor/phasor.hpp>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {
/// Every value of t is exactly ref's.
void check_exact(const Tensor& t, const std::vector<double>& ref) { CHECK(vals(t) == ref); }
constexpr double kPi = 3.14159265358979323846;

/// Sorted uneven sample points: cumulative sums of spacings in [0.2, 1.2).
Tensor uneven_points(std::int64_t n) { return (rand({n}, float64) + 0.2).cumsum(0); }
}  // namespace

TEST_CASE("trapezoid and cumulative_trapezoid against loops") {
  manual_seed(301);
  const Tensor y = randn({3, 5}, float64), x = uneven_points(5), x0 = uneven_points(3);
  const auto yv = vals(y), xv = vals(x), x0v = vals(x0);
  std::vector<double> want_last, want_first, want_dx, cum_last, cum_dx;
  for (std::size_t r = 0; r < 3; ++r) {
    long double s = 0, sd = 0;
    for (std::size_t i = 0; i + 1 < 5; ++i) {
      s += (static_cast<long double>(xv[i + 1]) - xv[i]) * (static_cast<long double>(yv[r * 5 + i]) + yv[r * 5 + i + 1]) / 2;
      sd += 0.25L * (static_cast<long double>(yv[r * 5 + i]) + yv[r * 5 + i + 1]) / 2;
      cum_last.push_back(static_cast<double>(s));
      cum_dx.push_back(static_cast<double>(sd));
    }
    want_last.push_back(static_cast<double>(s));
    want_dx.push_back(static_cast<double>(sd));
  }
  for (std::size_t c = 0; c < 5; ++c) {
    long double s = 0;
    for (std::size_t i = 0; i + 1 < 3; ++i)
      s += (static_cast<long double>(x0v[i + 1]) - x0v[i]) * (static_cast<long double>(yv[i * 5 + c]) + yv[(i + 1) * 5 + c]) / 2;
    want_first.push_back(static_cast<double>(s));
  }
  check_close(trapezoid(y, x), want_last, 1e-14);
  check_close(trapezoid(y, x0, 0), want_first, 1e-14);
  check_close(trapezoid(y, 0.25), want_dx, 1e-14);
  check_close(trapezoid(y, x.expand({3, 5})), want_last, 1e-14);  // x of y's shape
  check_close(trapezoid(y, x.unsqueeze(0)), want_last, 1e-14);    // x broadcast with y
  const Tensor cum = cumulative_trapezoid(y, x);
  REQUIRE(cum.shape() == Shape{3, 4});
  check_close(cum, cum_last, 1e-14);
  check_close(cumulative_trapezoid(y, 0.25), cum_dx, 1e-14);
  CHECK(cumulative_trapezoid(y, x0, 0).shape() == Shape{2, 5});
  // the default spacing is 1; integers integrate to a float
  CHECK(trapezoid(from_vector(std::vector<std::int64_t>{1, 2, 3})).item<double>() == 4.0);
  CHECK(is_floating(trapezoid(from_vector(std::vector<std::int64_t>{1, 2, 3})).dtype()));
  // fewer than two samples integrate to zero, keeping the other dims
  CHECK(vals(trapezoid(randn({2, 1}, float64))) == std::vector<double>{0, 0});
  CHECK(vals(trapezoid(zeros({2, 0}, float64))) == std::vector<double>{0, 0});
  CHECK(cumulative_trapezoid(randn({2, 1}, float64)).shape() == Shape{2, 0});
  // a closed form: the integral of sin over [0, pi] is 2; the rule's error is about pi^3 / (12 n^2)
  const Tensor t = linspace(0, kPi, 1001, float64);
  CHECK(std::abs(trapezoid(sin(t), t).item<double>() - 2) < 2e-6);
  CHECK(std::abs(trapezoid(sin(t), kPi / 1000).item<double>() - 2) < 2e-6);
  const Tensor F = cumulative_trapezoid(sin(t), t);  // 1 - cos, at the upper ends
  CHECK((F - (1 - cos(t.narrow(0, 1, 1000)))).abs().max().item<double>() < 2e-6);
}

TEST_CASE("trapezoid errors and gradients") {
  manual_seed(302);
  CHECK_THROWS_WITH_AS(trapezoid(full({}, 1.0)), Contains("[trapezoid] expected y of at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(trapezoid(randn({3, 4}), randn({5})), Contains("[trapezoid] x of size 5 doesn't match dim 1 of y (3, 4)"), Error);
  CHECK_THROWS_WITH_AS(trapezoid(randn({3, 4}), randn({2, 3, 4})), Contains("[trapezoid] x must be 1-d or have at most y's dims"), Error);
  CHECK_THROWS_WITH_AS(trapezoid(randn({3, 4}), randn({2, 4})), Contains("[trapezoid] shapes"), Error);
  CHECK_THROWS_WITH_AS(trapezoid(randn({3, 4}), randn({3, 1})), Contains("[trapezoid] x (3, 1) must have y's size 4 along dim 1"), Error);
  CHECK_THROWS_WITH_AS(trapezoid(randn({3, 4}), 1.0, 2), Contains("[trapezoid] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(cumulative_trapezoid(randn({3}), randn({4})), Contains("[cumulative_trapezoid] x of size 4"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return trapezoid(in[0], in[1]); }, {leaf64({3, 4}), uneven_points(4).requires_grad_()}));
  CHECK(autodiff::gradcheck([](const V& in) { return trapezoid(in[0], in[1], 0); }, {leaf64({3, 4}), leaf64({3, 4})}));
  CHECK(autodiff::gradcheck([](const V& in) { return trapezoid(in[0], 0.3, 0); }, {leaf64({3, 4})}));
  CHECK(autodiff::gradcheck([](const V& in) { return cumulative_trapezoid(in[0], in[1]); }, {leaf64({2, 5}), leaf64({5})}));
  CHECK(autodiff::gradcheck([](const V& in) { return cumulative_trapezoid(in[0], 0.7, 0); }, {leaf64({3, 2})}));
}

TEST_CASE("gradient: even spacing against the difference formulas") {
  manual_seed(303);
  const Tensor f = randn({4, 6}, float64);
  const auto fv = vals(f);
  const double h = 0.3;
  for (std::int64_t order : {1, 2}) {
    CAPTURE(order);
    const auto g = gradient(f, h, {1}, order);
    REQUIRE(g.size() == 1);
    std::vector<double> want;
    for (std::size_t r = 0; r < 4; ++r) {
      const auto F = [&](std::size_t i) { return static_cast<long double>(fv[r * 6 + i]); };
      for (std::size_t i = 0; i < 6; ++i) {
        long double d;
        if (i == 0) d = order == 1 ? (F(1) - F(0)) / h : (-3 * F(0) + 4 * F(1) - F(2)) / (2 * h);
        else if (i == 5) d = order == 1 ? (F(5) - F(4)) / h : (3 * F(5) - 4 * F(4) + F(3)) / (2 * h);
        else d = (F(i + 1) - F(i - 1)) / (2 * h);
        want.push_back(static_cast<double>(d));
      }
    }
    check_close(g[0], want, 1e-13);
  }
  // every dim by default, one spacing for all or one each; the dims' results in order
  const auto all = gradient(f);
  REQUIRE(all.size() == 2);
  const auto each = gradient(f, std::vector<double>{2.0, 0.5});
  check_close(each[0], vals(all[0] / 2.0), 1e-15);
  check_close(each[1], vals(all[1] * 2.0), 1e-15);
  check_exact(gradient(f, 1.0, {-1})[0], vals(all[1]));
  // two samples are enough for the first-order ends
  check_exact(gradient(vec({1, 4}))[0], {3, 3});
  // integers differentiate to a float
  CHECK(is_floating(gradient(from_vector(std::vector<std::int64_t>{1, 4, 9}))[0].dtype()));
}

TEST_CASE("gradient: uneven coordinates are exact for quadratics, errors, gradients") {
  manual_seed(304);
  // f = 3x^2 - 2x + 1 at uneven points: the second-order formulas give 6x - 2 exactly, inside and (edge_order 2) at the ends
  const Tensor x = uneven_points(7);
  const Tensor f = 3 * x * x - 2 * x + 1;
  const auto xv = vals(x);
  std::vector<double> want;
  for (double xi : xv) want.push_back(6 * xi - 2);
  check_close(gradient(f, std::vector<Tensor>{x}, {}, 2)[0], want, 1e-11);
  const auto g1 = vals(gradient(f, std::vector<Tensor>{x})[0]);
  for (std::size_t i = 1; i + 1 < 7; ++i) CHECK(g1[i] == doctest::Approx(want[i]).epsilon(1e-11));
  CHECK(g1[0] == doctest::Approx((vals(f)[1] - vals(f)[0]) / (xv[1] - xv[0])).epsilon(1e-13));  // one-sided first order
  // evenly spaced coordinates agree with the even-spacing form
  const Tensor u = randn({5, 3}, float64);
  check_close(gradient(u, std::vector<Tensor>{arange(0, 5, 1, float64) * 0.5}, {0}, 2)[0], vals(gradient(u, 0.5, {0}, 2)[0]), 1e-13);
  // two dims: f = x^2 y + y^2, df/dx = 2xy, df/dy = x^2 + 2y, exact with edge_order 2
  const Tensor px = uneven_points(5), py = uneven_points(4);
  const Tensor X = px.reshape({5, 1}), Y = py.reshape({1, 4});
  const Tensor F2 = X * X * Y + Y * Y;
  const auto g2 = gradient(F2, std::vector<Tensor>{px, py}, {}, 2);
  REQUIRE(g2.size() == 2);
  CHECK((g2[0] - 2 * X * Y).abs().max().item<double>() < 1e-10);
  CHECK((g2[1] - (X * X + 2 * Y)).abs().max().item<double>() < 1e-10);
  // errors
  CHECK_THROWS_WITH_AS(gradient(full({}, 1.0)), Contains("[gradient] expected a tensor of at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4}), 1.0, {}, 3), Contains("[gradient] edge_order must be 1 or 2, got 3"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4, 2}), 1.0, {}, 2),
                       Contains("[gradient] each differentiated dim needs at least edge_order + 1 = 3 samples, but dim 1"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4, 3}), std::vector<double>{1, 2, 3}), Contains("[gradient] expected one spacing or one per differentiated dim (2), got 3"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4, 3}), std::vector<Tensor>{randn({4})}), Contains("[gradient] expected one coordinate tensor per differentiated dim (2), got 1"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4, 3}), std::vector<Tensor>{randn({3})}, {0}), Contains("[gradient] the coordinates of dim 0 must be 1-d of its size 4, got shape (3,)"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4}), std::vector<Tensor>{complex(randn({4}), randn({4}))}), Contains("[gradient] coordinates must be real numbers"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4, 3}), 1.0, {0, -2}), Contains("[gradient] dim -2 appears more than once"), Error);
  CHECK_THROWS_WITH_AS(gradient(randn({4}) > 0.0), Contains("[gradient] expected a numeric tensor, got bool"), Error);
  // gradients through the samples and the coordinates
  for (std::int64_t order : {1, 2}) {
    CAPTURE(order);
    CHECK(autodiff::gradcheck([order](const V& in) { return gradient(in[0], 0.4, {}, order)[1]; }, {leaf64({3, 5})}));
    CHECK(autodiff::gradcheck([order](const V& in) { return gradient(in[0], std::vector<Tensor>{in[1]}, {1}, order)[0]; },
                              {leaf64({2, 5}), uneven_points(5).requires_grad_()}));
  }
}
