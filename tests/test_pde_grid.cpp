// tests/test_pde_grid.cpp - pde::Grid and the spectral operators: closed forms (derivatives of
// trigonometric polynomials, symbols from naive loops), identities (inverse Laplacian round trip,
// divergence of gradient), float64 finite differences (gradcheck) and bad input.
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
using G = std::vector<Tensor>;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Integer frequency of index j on an axis of n points (fftfreq order, or rfftfreq when halved).
long freq(long j, long n, bool halved) { return halved ? j : (j <= (n - 1) / 2 ? j : j - n); }

/// Values of fn(x, y, z) over the grid points, row-major (unused coordinates are 0).
std::vector<double> sample(const pde::Grid& g, const std::function<double(double, double, double)>& fn) {
  const auto& n = g.sizes();
  const auto d = g.ndim();
  std::vector<long> s{1, 1, 1};
  for (long a = 0; a < d; ++a) s[a] = n[a];
  std::vector<double> out;
  for (long i = 0; i < s[0]; ++i)
    for (long j = 0; j < s[1]; ++j)
      for (long k = 0; k < s[2]; ++k) {
        double x[3] = {0, 0, 0};
        const long idx[3] = {i, j, k};
        for (long a = 0; a < d; ++a) x[a] = idx[a] * g.lengths()[a] / static_cast<double>(n[a]);
        out.push_back(fn(x[0], x[1], x[2]));
      }
  return out;
}

Tensor field(const pde::Grid& g, const std::function<double(double, double, double)>& fn) {
  return from_vector(sample(g, fn), g.sizes());
}

double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

}  // namespace

TEST_CASE("pde grid: sizes, lengths, spacing, spectral sizes") {
  pde::Grid g({8, 6, 5}, {2.0, 3.0, 0.5});
  CHECK(g.ndim() == 3);
  CHECK(g.sizes() == std::vector<std::int64_t>{8, 6, 5});
  CHECK(g.lengths() == std::vector<double>{2.0, 3.0, 0.5});
  CHECK(g.spacing(0) == doctest::Approx(0.25));
  CHECK(g.spacing(1) == doctest::Approx(0.5));
  CHECK(g.spacing(-1) == doctest::Approx(0.1));
  CHECK(g.size(-2) == 6);
  CHECK(g.length(2) == 0.5);
  CHECK(g.numel() == 240);
  CHECK(g.volume() == doctest::Approx(3.0));
  CHECK(g.spectral_sizes() == std::vector<std::int64_t>{8, 6, 3});
  CHECK(pde::Grid({7}).spectral_sizes() == std::vector<std::int64_t>{4});
  CHECK(pde::Grid({4, 4}).lengths() == std::vector<double>{1.0, 1.0});
  CHECK(pde::Grid({4, 4}, 2.0) == pde::Grid({4, 4}, {2.0, 2.0}));
  CHECK(pde::Grid({4, 4}) != pde::Grid({4, 5}));
  CHECK(g.str() == "Grid(sizes=(8, 6, 5), lengths=(2, 3, 0.5))");
}

TEST_CASE("pde grid: coordinates, mesh, wavenumbers, symbols") {
  pde::Grid g({6, 5}, {2.0, 3.0});
  Tensor x0 = g.coordinates(0), x1 = g.coordinates(1, float32);
  CHECK(x0.shape() == Shape{6, 1});
  CHECK(x1.shape() == Shape{1, 5});
  CHECK(x1.dtype() == float32);
  check_close(x0, {0.0, 1.0 / 3, 2.0 / 3, 1.0, 4.0 / 3, 5.0 / 3}, 1e-15);
  check_close(x1, {0.0, 0.6, 1.2, 1.8, 2.4}, 1e-7);
  auto m = g.mesh();
  REQUIRE(m.size() == 2);
  CHECK(m[0].shape() == Shape{6, 5});
  CHECK(m[1].shape() == Shape{6, 5});
  check_close(m[0], sample(g, [](double x, double, double) { return x; }), 1e-15);
  check_close(m[1], sample(g, [](double, double y, double) { return y; }), 1e-15);

  // non-last axis: fftfreq order; last axis: rfftfreq (n = 5 -> 0, 1, 2)
  Tensor k0 = g.wavenumbers(0), k1 = g.wavenumbers(-1);
  CHECK(k0.shape() == Shape{6, 1});
  CHECK(k1.shape() == Shape{1, 3});
  const double s0 = 2 * kPi / 2.0, s1 = 2 * kPi / 3.0;
  check_close(k0, {0, s0, 2 * s0, -3 * s0, -2 * s0, -s0}, 1e-15);
  check_close(k1, {0, s1, 2 * s1}, 1e-15);
  // 1-D even grid: the last axis holds the Nyquist frequency +n/2
  check_close(pde::Grid({4}, 2 * kPi).wavenumbers(0), {0, 1, 2}, 1e-15);

  // Laplacian symbol from a naive loop
  pde::Grid h({5, 4, 6}, {1.0, 2.0, 0.75});
  std::vector<double> ref;
  for (long i = 0; i < 5; ++i)
    for (long j = 0; j < 4; ++j)
      for (long k = 0; k < 4; ++k) {
        const double a = 2 * kPi * freq(i, 5, false) / 1.0, b = 2 * kPi * freq(j, 4, false) / 2.0,
                     c = 2 * kPi * freq(k, 6, true) / 0.75;
        ref.push_back(-(a * a + b * b + c * c));
      }
  Tensor sym = h.laplacian_symbol();
  CHECK(sym.shape() == Shape{5, 4, 4});
  check_close(sym, ref, 1e-14);
  CHECK(h.laplacian_symbol(float32).dtype() == float32);
}

TEST_CASE("pde grid: dealias mask keeps 3|m| < n on every axis") {
  // n = 8: |m| <= 2 (5 of 8); n = 9: |m| <= 2 (5 of 9); last n = 10: m <= 3 (4 of 6)
  pde::Grid g({8, 9, 10});
  Tensor mask = g.dealias_mask();
  CHECK(mask.shape() == Shape{8, 9, 6});
  CHECK(mask.sum().item<double>() == 5 * 5 * 4);
  std::vector<double> ref;
  for (long i = 0; i < 8; ++i)
    for (long j = 0; j < 9; ++j)
      for (long k = 0; k < 6; ++k)
        ref.push_back(3 * std::labs(freq(i, 8, false)) < 8 && 3 * std::labs(freq(j, 9, false)) < 9 &&
                              3 * freq(k, 10, true) < 10
                          ? 1.0
                          : 0.0);
  check_close(mask, ref, 1e-15);
  // 1-D: n = 12 keeps m = 0..3; n = 3 keeps only the mean; n = 1 keeps the mean
  CHECK(pde::Grid({12}).dealias_mask().sum().item<double>() == 4);
  check_close(pde::Grid({3}).dealias_mask(), {1, 0}, 1e-15);
  check_close(pde::Grid({1}).dealias_mask(), {1}, 1e-15);

  Tensor uh = fft::rfft2(randn({2, 8, 9}, float64));
  Tensor d = pde::dealias(pde::Grid({8, 9}), uh);
  CHECK(d.shape() == uh.shape());
  CHECK(max_abs(d - uh * pde::Grid({8, 9}).dealias_mask()) == 0.0);
  CHECK(max_abs(d.select(-1, 4)) == 0.0);  // last-axis frequency 4: 12 >= 9
  CHECK(max_abs(d.select(-2, 3)) == 0.0);  // first-axis frequency 3: 9 >= 8
  CHECK(max_abs(d.select(-2, 2) - uh.select(-2, 2) * pde::Grid({8, 9}).dealias_mask().select(0, 2)) == 0.0);
}

TEST_CASE("pde spectral: to_spectral / from_spectral") {
  pde::Grid g({6, 7});
  Tensor u = randn({3, 6, 7}, float64);
  Tensor uh = pde::to_spectral(g, u);
  CHECK(uh.shape() == Shape{3, 6, 4});
  CHECK(uh.dtype() == complex128);
  CHECK(max_abs(uh - fft::rfft2(u)) == 0.0);
  CHECK(max_abs(pde::from_spectral(g, uh) - u) < 1e-14);
  Tensor u32 = randn({6, 7}, float32);
  CHECK(pde::to_spectral(g, u32).dtype() == complex64);
  CHECK(pde::from_spectral(g, pde::to_spectral(g, u32)).dtype() == float32);
}

TEST_CASE("pde spectral: derivatives of trigonometric polynomials (1-D)") {
  const double L = 3.0, w3 = 2 * kPi * 3 / L, w5 = 2 * kPi * 5 / L;
  pde::Grid g({16}, L);
  Tensor u = field(g, [&](double x, double, double) { return std::sin(w3 * x) + 0.5 * std::cos(w5 * x); });
  check_close(pde::derivative(g, u, 0),
              sample(g, [&](double x, double, double) { return w3 * std::cos(w3 * x) - 0.5 * w5 * std::sin(w5 * x); }),
              1e-12);
  check_close(pde::derivative(g, u, -1, 2),
              sample(g, [&](double x, double, double) {
                return -w3 * w3 * std::sin(w3 * x) - 0.5 * w5 * w5 * std::cos(w5 * x);
              }),
              1e-12);
  check_close(pde::derivative(g, u, 0, 3),
              sample(g, [&](double x, double, double) {
                return -w3 * w3 * w3 * std::cos(w3 * x) + 0.5 * w5 * w5 * w5 * std::sin(w5 * x);
              }),
              1e-12);
  check_close(pde::derivative(g, u, 0, 4),
              sample(g, [&](double x, double, double) {
                return std::pow(w3, 4) * std::sin(w3 * x) + 0.5 * std::pow(w5, 4) * std::cos(w5 * x);
              }),
              1e-12);
  check_close(pde::derivative(g, u, 0, 0), vals(u), 1e-15);
  // batch dims are carried along
  Tensor b = stack({u, 2.0 * u, -u}, 0).reshape({3, 1, 16});
  Tensor db = pde::derivative(g, b, 0);
  CHECK(db.shape() == Shape{3, 1, 16});
  check_close(db.select(0, 1).squeeze(0), vals(2.0 * pde::derivative(g, u, 0)), 1e-12);
  // the Nyquist mode cos(pi n x / L) = (-1)^j: zeroed by odd orders, -(k_N)^2 for the second
  const double kn = 2 * kPi * 8 / L;
  Tensor nyq = field(g, [&](double x, double, double) { return std::cos(kn * x); });
  CHECK(max_abs(pde::derivative(g, nyq, 0)) < 1e-13);
  CHECK(max_abs(pde::derivative(g, nyq, 0, 3)) < 1e-13);
  check_close(pde::derivative(g, nyq, 0, 2), vals(-kn * kn * nyq), 1e-12);
  // float32 fields stay float32
  Tensor d32 = pde::derivative(g, u.to(float32), 0);
  CHECK(d32.dtype() == float32);
  check_close(d32, vals(pde::derivative(g, u, 0)), 2e-6);
}

TEST_CASE("pde spectral: derivatives in 2-D and 3-D, gradient") {
  const double Lx = 2.0, Ly = 5.0, a = 2 * kPi * 2 / Lx, b = 2 * kPi * 3 / Ly;
  pde::Grid g({12, 10}, {Lx, Ly});
  Tensor u = field(g, [&](double x, double y, double) { return std::sin(a * x) * std::cos(b * y) + std::cos(b * y); });
  auto dx = sample(g, [&](double x, double y, double) { return a * std::cos(a * x) * std::cos(b * y); });
  auto dy = sample(g, [&](double x, double y, double) {
    return -b * std::sin(a * x) * std::sin(b * y) - b * std::sin(b * y);
  });
  check_close(pde::derivative(g, u, 0), dx, 1e-12);
  check_close(pde::derivative(g, u, 1), dy, 1e-12);
  check_close(pde::derivative(g, u, -2), dx, 1e-12);
  Tensor grad = pde::gradient(g, stack({u, u}, 0));
  CHECK(grad.shape() == Shape{2, 2, 12, 10});
  check_close(grad.select(0, 1).select(0, 0), dx, 1e-12);
  check_close(grad.select(0, 0).select(0, 1), dy, 1e-12);
  check_close(pde::laplacian(g, u), sample(g, [&](double x, double y, double) {
                return -(a * a + b * b) * std::sin(a * x) * std::cos(b * y) - b * b * std::cos(b * y);
              }),
              1e-12);
  // Nyquist along the non-last axis (stored as -n/2): zeroed by the first derivative
  Tensor nyq = field(g, [&](double x, double y, double) { return std::cos(2 * kPi * 6 / Lx * x) * std::sin(b * y); });
  CHECK(max_abs(pde::derivative(g, nyq, 0)) < 1e-12);
  check_close(pde::derivative(g, nyq, 1), sample(g, [&](double x, double y, double) {
                return std::cos(2 * kPi * 6 / Lx * x) * b * std::cos(b * y);
              }),
              1e-12);

  // 3-D, odd last size, non-unit box
  const double L0 = 1.5, L1 = 2.5, L2 = 0.7;
  const double p = 2 * kPi / L0, q = 2 * kPi * 2 / L1, r = 2 * kPi * 2 / L2;
  pde::Grid h({8, 6, 5}, {L0, L1, L2});
  auto fn = [&](double x, double y, double z) { return std::sin(p * x + q * y) * std::cos(r * z); };
  Tensor v = field(h, fn);
  check_close(pde::derivative(h, v, 0),
              sample(h, [&](double x, double y, double z) { return p * std::cos(p * x + q * y) * std::cos(r * z); }),
              1e-12);
  check_close(pde::derivative(h, v, 1),
              sample(h, [&](double x, double y, double z) { return q * std::cos(p * x + q * y) * std::cos(r * z); }),
              1e-12);
  check_close(pde::derivative(h, v, 2),
              sample(h, [&](double x, double y, double z) { return -r * std::sin(p * x + q * y) * std::sin(r * z); }),
              1e-12);
  check_close(pde::derivative(h, v, 2, 2), vals(-r * r * v), 1e-12);
  check_close(pde::laplacian(h, v), vals(-(p * p + q * q + r * r) * v), 1e-12);
  Tensor gv = pde::gradient(h, v);
  CHECK(gv.shape() == Shape{3, 8, 6, 5});
  for (long i = 0; i < 3; ++i) check_close(gv.select(0, i), vals(pde::derivative(h, v, i)), 1e-13);
  // divergence of (u, 0, 0) is d/dx u
  Tensor vec = stack({v, zeros_like(v), zeros_like(v)}, 0);
  check_close(pde::divergence(h, vec), vals(pde::derivative(h, v, 0)), 1e-12);
}

TEST_CASE("pde spectral: inverse Laplacian round trip, divergence of gradient") {
  pde::Grid g({10, 12}, {1.0, 2.0});
  Tensor f = randn({2, 10, 12}, float64);
  Tensor u = pde::inverse_laplacian(g, f);
  CHECK(u.shape() == f.shape());
  CHECK(max_abs(u.mean({-2, -1})) < 1e-14);
  Tensor f0 = f - f.mean({-2, -1}, true);
  CHECK(max_abs(pde::laplacian(g, u) - f0) < 1e-12);
  CHECK(max_abs(pde::inverse_laplacian(g, pde::laplacian(g, u)) - u) < 1e-12);
  // closed form: lap^-1 of sin(2 pi x) = -sin(2 pi x) / (2 pi)^2 (plus the mean, dropped)
  Tensor s = field(g, [](double x, double, double) { return 3.0 + std::sin(2 * kPi * x); });
  check_close(pde::inverse_laplacian(g, s),
              sample(g, [](double x, double, double) { return -std::sin(2 * kPi * x) / (4 * kPi * kPi); }), 1e-13);

  // odd grids: no Nyquist, so div grad == lap for any field
  for (auto sizes : {std::vector<std::int64_t>{9, 7}, std::vector<std::int64_t>{5, 7, 3}, std::vector<std::int64_t>{11}}) {
    pde::Grid h(sizes, 1.7);
    Shape shape{2};
    shape.insert(shape.end(), sizes.begin(), sizes.end());
    Tensor w = randn(shape, float64);
    CHECK(max_abs(pde::divergence(h, pde::gradient(h, w)) - pde::laplacian(h, w)) < 1e-10);
  }
  // even grid: they differ by the Nyquist content only (equal after removing it)
  pde::Grid e({8, 6});
  Tensor w = randn({8, 6}, float64);
  Tensor wb = pde::from_spectral(e, pde::dealias(e, pde::to_spectral(e, w)));
  CHECK(max_abs(pde::divergence(e, pde::gradient(e, wb)) - pde::laplacian(e, wb)) < 1e-10);
  CHECK(max_abs(pde::divergence(e, pde::gradient(e, w)) - pde::laplacian(e, w)) > 1.0);
}

TEST_CASE("pde spectral: gradcheck") {
  pde::Grid g1({8}, 2.0);
  pde::Grid g2({6, 5}, {1.0, 3.0});
  Tensor x1 = randn({2, 8}, float64).requires_grad_();
  Tensor x2 = randn({6, 5}, float64).requires_grad_();
  for (int order = 1; order <= 3; ++order)
    CHECK(autodiff::gradcheck([&](const G& in) { return pde::derivative(g1, in[0], 0, order); }, {x1}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::derivative(g2, in[0], 0); }, {x2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::derivative(g2, in[0], 1, 2); }, {x2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::gradient(g2, in[0]); }, {x2}));
  Tensor v2 = randn({2, 6, 5}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::divergence(g2, in[0]); }, {v2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::laplacian(g2, in[0]); }, {x2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::inverse_laplacian(g2, in[0]); }, {x2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::to_spectral(g2, in[0]); }, {x2}));
  Tensor z2 = randn({6, 3}, complex128).requires_grad_();
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::dealias(g2, in[0]); }, {z2}));
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::from_spectral(g2, pde::dealias(g2, in[0])); }, {z2}));
  Tensor x3 = randn({4, 3, 5}, float64).requires_grad_();
  pde::Grid g3({4, 3, 5});
  CHECK(autodiff::gradcheck([&](const G& in) { return pde::laplacian(g3, in[0]); }, {x3}));
  CHECK(autodiff::gradgradcheck([&](const G& in) { return pde::derivative(g1, in[0], 0); }, {x1}));
  CHECK(autodiff::gradgradcheck([&](const G& in) { return pde::inverse_laplacian(g2, in[0]) * in[0]; }, {x2}));
}

TEST_CASE("pde grid: bad input") {
  using V = std::vector<std::int64_t>;
  CHECK_THROWS_WITH_AS(pde::Grid(V{}), doctest::Contains("[pde::Grid] a grid has 1, 2 or 3 dims, got 0 sizes"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{2, 2, 2, 2}),
                       doctest::Contains("[pde::Grid] a grid has 1, 2 or 3 dims, got 4 sizes (2, 2, 2, 2)"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4, 0}),
                       doctest::Contains("[pde::Grid] size 0 along axis 1 is not positive (sizes (4, 0))"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4, -3}), doctest::Contains("size -3 along axis 1 is not positive"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4, 4}, {1.0, 0.0}),
                       doctest::Contains("[pde::Grid] length 0 along axis 1 is not a finite positive number"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4}, -2.0), doctest::Contains("length -2 along axis 0"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4}, std::numeric_limits<double>::infinity()),
                       doctest::Contains("length inf along axis 0"), Error);
  CHECK_THROWS_WITH_AS(pde::Grid(V{4, 4}, std::vector<double>{1.0}),
                       doctest::Contains("[pde::Grid] got 2 sizes (4, 4) but 1 lengths (1,)"), Error);

  pde::Grid g({8, 6});
  CHECK_THROWS_WITH_AS(pde::derivative(g, zeros({8, 5}, float64), 0),
                       doctest::Contains("[pde::derivative] field of shape (8, 5) does not fit the grid: its last 2 dims "
                                         "must be the grid sizes (8, 6)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::laplacian(g, zeros({6}, float64)),
                       doctest::Contains("[pde::laplacian] field of shape (6,) does not fit the grid"), Error);
  CHECK_THROWS_WITH_AS(pde::to_spectral(g, zeros({8, 6}, complex128)),
                       doctest::Contains("[pde::to_spectral] expects a real field, got complex128"), Error);
  CHECK_THROWS_WITH_AS(pde::derivative(g, zeros({8, 6}, float64), 2),
                       doctest::Contains("[pde::derivative] axis 2 out of range for a 2-D grid (valid: -2 .. 1)"), Error);
  CHECK_THROWS_WITH_AS(pde::derivative(g, zeros({8, 6}, float64), -3),
                       doctest::Contains("[pde::derivative] axis -3 out of range"), Error);
  CHECK_THROWS_WITH_AS(pde::derivative(g, zeros({8, 6}, float64), 0, -1),
                       doctest::Contains("[pde::derivative] order must be >= 0, got -1"), Error);
  CHECK_THROWS_WITH_AS(g.coordinates(5), doctest::Contains("[pde::Grid::coordinates] axis 5 out of range"), Error);
  CHECK_THROWS_WITH_AS(g.wavenumbers(-4), doctest::Contains("[pde::Grid::wavenumbers] axis -4 out of range"), Error);
  CHECK_THROWS_WITH_AS(g.spacing(2), doctest::Contains("[pde::Grid::spacing] axis 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(g.coordinates(0, int64),
                       doctest::Contains("[pde::Grid::coordinates] dtype must be float32 or float64, got int64"), Error);
  CHECK_THROWS_WITH_AS(g.dealias_mask(complex64), doctest::Contains("[pde::Grid::dealias_mask] dtype must be"), Error);
  CHECK_THROWS_WITH_AS(pde::divergence(g, zeros({3, 8, 6}, float64)),
                       doctest::Contains("[pde::divergence] vector field of shape (3, 8, 6) must be (..., 2, n...)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::divergence(g, zeros({8, 6}, float64)),
                       doctest::Contains("[pde::divergence] vector field of shape (8, 6)"), Error);
  CHECK_THROWS_WITH_AS(pde::from_spectral(g, zeros({8, 6}, complex128)),
                       doctest::Contains("[pde::from_spectral] spectrum of shape (8, 6) does not fit the grid: its last 2 "
                                         "dims must be the half-spectrum sizes (8, 4)"),
                       Error);
  CHECK_THROWS_WITH_AS(pde::dealias(g, zeros({8, 3}, complex64)),
                       doctest::Contains("[pde::dealias] spectrum of shape (8, 3)"), Error);
  CHECK_THROWS_WITH_AS(pde::dealias(g, zeros({8, 4}, int64)),
                       doctest::Contains("[pde::dealias] expects a floating or complex spectrum, got int64"), Error);
  CHECK_THROWS_WITH_AS(g.check_field("myop", zeros({2, 3})), doctest::Contains("[myop] field of shape (2, 3)"), Error);
}
