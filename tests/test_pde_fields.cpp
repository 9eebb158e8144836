// tests/test_pde_fields.cpp - Gaussian random fields (closed-form spectrum and covariance against
// seeded sample statistics, seeding, shapes) and the Darcy solver (manufactured solutions at second
// order, an independent long-double residual of the 5-point scheme, symmetry, batches, bad input).
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::check_close;
using phasor::test::vals;

namespace {

constexpr double kPi = 3.14159265358979323846;

double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

/// mu_k / |V| for integer frequencies m on a grid with lengths L (independent of the library's loop).
double mode_var(const std::vector<long>& m, const std::vector<double>& L, double sigma, double tau, double gamma) {
  double k2 = 0.0, vol = 1.0;
  for (std::size_t a = 0; a < m.size(); ++a) {
    const double k = 2 * kPi * static_cast<double>(m[a]) / L[a];
    k2 += k * k;
    vol *= L[a];
  }
  return sigma * sigma * std::pow(k2 + tau * tau, -gamma) / vol;
}

long freq(long j, long n) { return j <= (n - 1) / 2 ? j : j - n; }

/// Nodal values fn(x, y) on the s x s unit-square grid (dim 0 = x).
Tensor nodal(std::int64_t s, const std::function<double(double, double)>& fn) {
  std::vector<double> v;
  const double h = 1.0 / static_cast<double>(s - 1);
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = 0; j < s; ++j) v.push_back(fn(i * h, j * h));
  return from_vector(v, Shape{s, s});
}

/// max |A u - f| over the interior for the 5-point scheme (Note [Darcy discretization]), in long double.
double residual(const Tensor& a, const Tensor& u, const Tensor& f, bool harmonic) {
  const auto av = vals(a), uv = vals(u), fv = vals(f);
  const long s = a.size(-1);
  auto A = [&](long i, long j) { return static_cast<long double>(av[i * s + j]); };
  auto U = [&](long i, long j) { return static_cast<long double>(uv[i * s + j]); };
  auto avg = [&](long double p, long double q) { return harmonic ? 2 * p * q / (p + q) : (p + q) / 2; };
  const long double h2 = 1.0L / ((s - 1.0L) * (s - 1.0L));
  long double worst = 0;
  for (long i = 1; i < s - 1; ++i)
    for (long j = 1; j < s - 1; ++j) {
      const long double p = A(i, j);
      const long double e = avg(p, A(i + 1, j)), w = avg(p, A(i - 1, j)), n = avg(p, A(i, j + 1)),
                        so = avg(p, A(i, j - 1));
      const long double r =
          ((e + w + n + so) * U(i, j) - e * U(i + 1, j) - w * U(i - 1, j) - n * U(i, j + 1) - so * U(i, j - 1)) / h2 -
          fv[i * s + j];
      worst = std::max(worst, r < 0 ? -r : r);
    }
  return static_cast<double>(worst);
}

bool boundary_zero(const Tensor& u) {
  const long s = u.size(-1);
  Tensor t = u.reshape({-1, s, s});
  return max_abs(t.select(1, 0)) == 0.0 && max_abs(t.select(1, s - 1)) == 0.0 && max_abs(t.select(2, 0)) == 0.0 &&
         max_abs(t.select(2, s - 1)) == 0.0;
}

}  // namespace

TEST_CASE("pde grf: shapes, dtypes, seeding, zero mean") {
  pde::Grid g({16, 12}, {1.0, 2.0});
  Generator g1(7), g2(7), g3(8);
  Tensor a = pde::gaussian_random_field(g, 3, 1.0, 3.0, 2.0, float32, &g1);
  CHECK(a.shape() == Shape{3, 16, 12});
  CHECK(a.dtype() == float32);
  CHECK(!a.requires_grad());
  Tensor b = pde::gaussian_random_field(g, 3, 1.0, 3.0, 2.0, float64, &g2);
  CHECK(b.dtype() == float64);
  CHECK(max_abs(a - b.to(float32)) == 0.0);  // same seed: same field, whatever the dtype
  CHECK(max_abs(pde::gaussian_random_field(g, 3, 1.0, 3.0, 2.0, float32, &g3) - a) > 1e-3);
  CHECK(max_abs(pde::gaussian_random_field(g, 3, 1.0, 3.0, 2.0, float32, &g1) - a) > 1e-3);  // the stream moved on
  manual_seed(123);
  Tensor c = pde::gaussian_random_field(g, 2, 1.0, 3.0, 2.0, float64);
  manual_seed(123);
  CHECK(max_abs(pde::gaussian_random_field(g, 2, 1.0, 3.0, 2.0, float64) - c) == 0.0);
  // zero mean per sample, and a non-zero mean without it
  CHECK(max_abs(b.mean({1, 2})) < 1e-14 * max_abs(b));
  Generator g4(5);
  Tensor nz = pde::gaussian_random_field(g, 64, 1.0, 1.0, 1.0, float64, &g4, false);
  CHECK(max_abs(nz.mean({1, 2})) > 1e-3);
  // 1-D and 3-D shapes
  CHECK(pde::gaussian_random_field(pde::Grid({32}), 5, 1.0, 2.0, 1.5).shape() == Shape{5, 32});
  CHECK(pde::gaussian_random_field(pde::Grid({6, 5, 4}), 2, 1.0, 2.0, 1.5).shape() == Shape{2, 6, 5, 4});
}

TEST_CASE("pde grf: closed-form variance") {
  // naive sum over the grid's frequencies
  pde::Grid g({6, 5}, {1.5, 0.5});
  for (bool zm : {true, false}) {
    long double s = 0;
    for (long i = 0; i < 6; ++i)
      for (long j = 0; j < 5; ++j)
        if (!(zm && i == 0 && j == 0)) s += mode_var({freq(i, 6), freq(j, 5)}, {1.5, 0.5}, 2.0, 1.5, 1.2);
    CHECK(pde::gaussian_random_field_variance(g, 2.0, 1.5, 1.2, zm) == doctest::Approx(static_cast<double>(s)).epsilon(1e-14));
  }
  // FNO's GaussianRF(2, s, alpha, tau) amplitude carries an extra sqrt(2): our sigma * sqrt(2) doubles the variance
  pde::Grid u({8, 8});
  CHECK(pde::gaussian_random_field_variance(u, 3.0 * std::sqrt(2.0), 3.0, 2.0) ==
        doctest::Approx(2 * pde::gaussian_random_field_variance(u, 3.0, 3.0, 2.0)).epsilon(1e-14));
}

TEST_CASE("pde grf: sample spectrum and variance match the closed form (2-D)") {
  const long n0 = 16, n1 = 12, B = 2000;
  const std::vector<double> L{1.0, 2.0};
  const double sigma = 2.0, tau = 3.0, gamma = 2.0;
  pde::Grid g({n0, n1}, L);
  Generator gen(2024);
  Tensor u = pde::gaussian_random_field(g, B, sigma, tau, gamma, float64, &gen);
  const double N = static_cast<double>(n0 * n1);
  Tensor p = fft::fft2(u).abs().square().mean({0}) / (N * N);  // E|DFT(u)_m|^2 / N^2 = mu_k / |V|
  const auto pv = vals(p);
  const double tol = 5 * std::sqrt(2.0 / B);
  long bad = 0;
  for (long i = 0; i < n0; ++i)
    for (long j = 0; j < n1; ++j) {
      const double got = pv[i * n1 + j];
      if (i == 0 && j == 0) {
        CHECK(got < 1e-24);
        continue;
      }
      const double want = mode_var({freq(i, n0), freq(j, n1)}, L, sigma, tau, gamma);
      if (std::abs(got / want - 1) > tol && bad++ == 0) INFO("mode (" << i << ", " << j << "): " << got << " vs " << want);
    }
  CHECK(bad == 0);
  const double var = u.square().mean().item<double>();
  CHECK(var == doctest::Approx(pde::gaussian_random_field_variance(g, sigma, tau, gamma)).epsilon(0.05));
}

TEST_CASE("pde grf: sample covariance matches the closed form (1-D, with mean and Nyquist)") {
  const long n = 10, B = 4000;
  const double L = 3.0, sigma = 1.5, tau = 1.0, gamma = 1.0;
  pde::Grid g({n}, L);
  Generator gen(99);
  Tensor u = pde::gaussian_random_field(g, B, sigma, tau, gamma, float64, &gen, false);
  const auto uv = vals(u);
  double c0 = 0;
  for (long m = -n / 2; m < (n + 1) / 2; ++m) c0 += mode_var({m}, {L}, sigma, tau, gamma);
  for (long lag = 0; lag < n; ++lag) {
    double want = 0;  // |V|^-1 sum_k mu_k cos(k x), over m = -5 .. 4
    for (long m = -n / 2; m < (n + 1) / 2; ++m)
      want += mode_var({m}, {L}, sigma, tau, gamma) * std::cos(2 * kPi * m / L * (lag * L / n));
    double got = 0;
    for (long b = 0; b < B; ++b)
      for (long i = 0; i < n; ++i) got += uv[b * n + i] * uv[b * n + (i + lag) % n];
    got /= static_cast<double>(B * n);
    INFO("lag " << lag);
    CHECK(std::abs(got - want) < 5 * std::sqrt(2.0 / B) * c0);
  }
  // 3-D variance
  pde::Grid h({6, 5, 4}, {1.0, 1.0, 2.0});
  Generator gen3(3);
  Tensor w = pde::gaussian_random_field(h, 1500, 1.0, 2.0, 1.5, float64, &gen3);
  CHECK(w.square().mean().item<double>() ==
        doctest::Approx(pde::gaussian_random_field_variance(h, 1.0, 2.0, 1.5)).epsilon(0.05));
}

TEST_CASE("pde darcy: manufactured solutions converge at second order") {
  const auto exact = [](double x, double y) { return std::sin(kPi * x) * std::sin(kPi * y); };
  // a = 1 + x^2 + y: f = -div(a grad u) = -(2x u_x + u_y) + 2 pi^2 a u
  const auto coef = [](double x, double y) { return 1.0 + x * x + y; };
  const auto src = [&](double x, double y) {
    const double ux = kPi * std::cos(kPi * x) * std::sin(kPi * y), uy = kPi * std::sin(kPi * x) * std::cos(kPi * y);
    return -(2 * x * ux + uy) + 2 * kPi * kPi * coef(x, y) * exact(x, y);
  };
  for (auto faces : {pde::FaceAverage::arithmetic, pde::FaceAverage::harmonic}) {
    std::vector<double> err;
    for (std::int64_t s : {17, 33, 65}) {
      Tensor u = pde::darcy_solve(nodal(s, coef), nodal(s, src), faces);
      CHECK(boundary_zero(u));
      err.push_back(max_abs(u - nodal(s, exact)));
    }
    INFO("errors " << err[0] << " " << err[1] << " " << err[2]);
    CHECK(err[1] < 2e-3);
    for (int k = 0; k < 2; ++k) {
      const double order = std::log2(err[k] / err[k + 1]);
      CHECK(order > 1.9);
      CHECK(order < 2.1);
    }
  }
  // constant a = 2 with the scalar source overload's linearity: f = 4 pi^2 u
  const std::int64_t s = 33;
  Tensor u = pde::darcy_solve(full({s, s}, 2.0, float64), nodal(s, [&](double x, double y) {
                                return 4 * kPi * kPi * exact(x, y);
                              }));
  CHECK(max_abs(u - nodal(s, exact)) < 2e-3);
}

TEST_CASE("pde darcy: residual of the scheme, symmetry, scaling, batches") {
  const std::int64_t s = 29;
  Generator gen(11);
  pde::Grid g({s, s});
  Tensor r = pde::gaussian_random_field(g, 3, 3.0, 3.0, 2.0, float64, &gen);
  Tensor a = pde::darcy_coefficient(r);
  CHECK(a.shape() == Shape{3, s, s});
  Tensor u = pde::darcy_solve(a);
  CHECK(u.shape() == Shape{3, s, s});
  CHECK(u.dtype() == float64);
  CHECK(boundary_zero(u));
  CHECK(u.min().item<double>() >= 0.0);  // f = 1 > 0: u >= 0 (discrete maximum principle)
  Tensor ones_f = ones({s, s}, float64);
  for (long b = 0; b < 3; ++b) {
    // an independent long-double evaluation of the 5-point scheme
    CHECK(residual(a.select(0, b), u.select(0, b), ones_f, false) < 1e-9);
    // batch entries equal single solves
    CHECK(max_abs(pde::darcy_solve(a.select(0, b)) - u.select(0, b)) < 1e-13);
  }
  Tensor uh = pde::darcy_solve(a, 1.0, pde::FaceAverage::harmonic);
  CHECK(residual(a.select(0, 1), uh.select(0, 1), ones_f, true) < 1e-9);
  CHECK(max_abs(uh - u) > 1e-4);  // the averages differ across the jumps
  // batched source
  Tensor f = randn({3, s, s}, float64);
  Tensor uf = pde::darcy_solve(a, f);
  for (long b = 0; b < 3; ++b) CHECK(residual(a.select(0, b), uf.select(0, b), f.select(0, b), false) < 1e-9);
  CHECK(max_abs(pde::darcy_solve(a, ones_f) - u) < 1e-13);
  // linear in f, scales as 1/c in a
  CHECK(max_abs(pde::darcy_solve(a, 2.5) - 2.5 * u) < 1e-12);
  CHECK(max_abs(pde::darcy_solve(a * 4.0) - u / 4.0) < 1e-12);
  // a symmetric under x <-> y gives a symmetric u
  Tensor rs = r.select(0, 0) + r.select(0, 0).t();
  Tensor as = pde::darcy_coefficient(rs);
  Tensor us = pde::darcy_solve(as);
  CHECK(max_abs(us - us.t()) < 1e-12 * max_abs(us));
  // float32 in, float32 out (solved in double)
  Tensor u32 = pde::darcy_solve(a.select(0, 0).to(float32));
  CHECK(u32.dtype() == float32);
  CHECK(max_abs(u32.to(float64) - u.select(0, 0)) < 1e-6 * max_abs(u));
  // the coefficient carries no history
  CHECK(!pde::darcy_coefficient(r.clone().requires_grad_()).requires_grad());
}

TEST_CASE("pde darcy: gradients (adjoint) against finite differences") {
  using G = std::vector<Tensor>;
  Generator gen(5);
  for (auto faces : {pde::FaceAverage::arithmetic, pde::FaceAverage::harmonic}) {
    Tensor a = (1.0 + 2.0 * rand({2, 6, 6}, float64, Device::cpu(), &gen)).requires_grad_();
    Tensor f = randn({6, 6}, float64, Device::cpu(), &gen).requires_grad_();
    Tensor fb = randn({2, 6, 6}, float64, Device::cpu(), &gen).requires_grad_();
    CHECK(autodiff::gradcheck([&](const G& in) { return pde::darcy_solve(in[0], in[1], faces); }, {a, f}));
    CHECK(autodiff::gradcheck([&](const G& in) { return pde::darcy_solve(in[0], in[1], faces); }, {a, fb}));
    CHECK(autodiff::gradcheck([&](const G& in) { return pde::darcy_solve(in[0], 1.0, faces); }, {a}));
    Tensor a1 = (1.0 + rand({5, 5}, float64, Device::cpu(), &gen)).requires_grad_();
    Tensor f1 = randn({5, 5}, float64, Device::cpu(), &gen).requires_grad_();
    CHECK(autodiff::gradgradcheck([&](const G& in) { return pde::darcy_solve(in[0], in[1], faces); }, {a1, f1}));
  }
  // dL/df is the adjoint solution: zero on the boundary
  Tensor a = ones({7, 7}, float64).requires_grad_();
  Tensor f = ones({7, 7}, float64).requires_grad_();
  pde::darcy_solve(a, f).sum().backward();
  CHECK(boundary_zero(f.grad()));
  CHECK(f.grad().min().item<double>() >= 0.0);
  CHECK(a.grad().shape() == Shape{7, 7});
}

TEST_CASE("pde darcy: coefficient thresholding") {
  Tensor grf = from_vector(std::vector<double>{-1.0, 0.0, 2.0, -1e-9}, Shape{2, 2});
  check_close(pde::darcy_coefficient(grf), {3, 12, 12, 3}, 1e-15);
  check_close(pde::darcy_coefficient(grf, 5.0, 0.5), {0.5, 5, 5, 0.5}, 1e-15);
  Tensor g32 = grf.to(float32);
  CHECK(pde::darcy_coefficient(g32).dtype() == float32);
  CHECK(pde::darcy_coefficient(g32).shape() == Shape{2, 2});
}

TEST_CASE("pde fields: bad input") {
  pde::Grid g({8, 8});
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 0, 1, 1, 1),
                       doctest::Contains("[pde::gaussian_random_field] batch must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 2, -1, 1, 1),
                       doctest::Contains("[pde::gaussian_random_field] sigma must be finite and >= 0, got -1"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 2, 1, std::nan(""), 1),
                       doctest::Contains("tau must be finite and >= 0, got nan"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 2, 1, 1, std::numeric_limits<double>::infinity()),
                       doctest::Contains("gamma must be finite, got inf"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 2, 1, 0, 1, float32, nullptr, false),
                       doctest::Contains("tau = 0 makes the k = 0 eigenvalue infinite"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field(g, 2, 1, 1, 1, int64),
                       doctest::Contains("dtype must be float32 or float64, got int64"), Error);
  CHECK_THROWS_WITH_AS(pde::gaussian_random_field_variance(g, 1, -2, 1),
                       doctest::Contains("[pde::gaussian_random_field_variance] tau must be finite and >= 0, got -2"),
                       Error);

  CHECK_THROWS_WITH_AS(pde::darcy_solve(ones({5}, float64)),
                       doctest::Contains("[pde::darcy_solve] coefficient a must be (s, s) or (batch, s, s) on the nodes "
                                         "of the unit square, got shape (5,)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(ones({4, 5}, float64)), doctest::Contains("got shape (4, 5)"), Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(ones({2, 2, 4, 4}, float64)), doctest::Contains("got shape (2, 2, 4, 4)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(ones({2, 2}, float64)),
                       doctest::Contains("[pde::darcy_solve] grid size s = 2 leaves no interior node (need s >= 3)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(ones({4, 4}, int64)),
                       doctest::Contains("coefficient a must be float32 or float64, got int64"), Error);
  Tensor a = ones({2, 4, 4}, float64);
  Tensor bad = a.clone();
  bad.select(0, 1).select(0, 2).select(0, 3).fill_(0.0);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(bad),
                       doctest::Contains("[pde::darcy_solve] coefficient a must be positive and finite, got 0 at (1, 2, 3)"),
                       Error);
  Tensor neg = ones({4, 4}, float64);
  neg.select(0, 0).select(0, 1).fill_(-2.0);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(neg), doctest::Contains("positive and finite, got -2 at (0, 1)"), Error);
  Tensor nan = ones({4, 4}, float32);
  nan.select(0, 3).select(0, 3).fill_(std::nan(""));
  CHECK_THROWS_WITH_AS(pde::darcy_solve(nan), doctest::Contains("got nan at (3, 3)"), Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(a, ones({3, 3}, float64)),
                       doctest::Contains("[pde::darcy_solve] source f of shape (3, 3) must be (s, s) = (4, 4) or the "
                                         "coefficient's shape (2, 4, 4)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(a, ones({4, 4}, complex64)),
                       doctest::Contains("source f must be real, got complex64"), Error);
  CHECK_THROWS_WITH_AS(pde::darcy_solve(a, std::numeric_limits<double>::infinity()),
                       doctest::Contains("source f must be finite, got inf"), Error);
  CHECK_THROWS_WITH_AS(pde::darcy_coefficient(ones({3, 3}, int64)),
                       doctest::Contains("[pde::darcy_coefficient] field must be float32 or float64, got int64"), Error);
  CHECK_THROWS_WITH_AS(pde::darcy_coefficient(ones({3, 3}), std::nan(""), 1.0),
                       doctest::Contains("hi and lo must be finite, got hi = nan, lo = 1"), Error);
}
