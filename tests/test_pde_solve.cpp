// tests/test_pde_solve.cpp - phasor::pde time steppers, equations and solve() against closed forms
// evaluated in long double (heat decay, advection shift, Cole-Hopf Burgers, KdV soliton, Taylor-Green),
// observed convergence orders, conservation laws, float64 gradchecks and the error paths.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <memory>
#include <phasor/pde/fields.hpp>
#include <phasor/pde/solve.hpp>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
namespace P = phasor::pde;
using ld = long double;
using P::Stepper;

namespace {

const ld kPi = 3.141592653589793238462643383279502884L;
const double kPiD = 3.141592653589793;
const Stepper kAll[] = {Stepper::rk4, Stepper::cn_rk2, Stepper::cn_rk3, Stepper::etdrk4};

// A 1-D float64 field f(x_j), x_j = j L / n, evaluated in long double.
Tensor field1(std::int64_t n, ld L, const std::function<ld(ld)>& f) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) v[static_cast<std::size_t>(j)] = static_cast<double>(f(L * j / n));
  return from_vector(v);
}

// A 2-D float64 field f(x_i, y_j) of shape (nx, ny).
Tensor field2(std::int64_t nx, std::int64_t ny, ld Lx, ld Ly, const std::function<ld(ld, ld)>& f) {
  std::vector<double> v(static_cast<std::size_t>(nx * ny));
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j)
      v[static_cast<std::size_t>(i * ny + j)] = static_cast<double>(f(Lx * i / nx, Ly * j / ny));
  return from_vector(v, Shape{nx, ny});
}

double maxdiff(const Tensor& a, const Tensor& b) { return max(abs(a.detach() - b.detach())).item<double>(); }
double maxabs(const Tensor& a) { return max(abs(a.detach())).item<double>(); }

P::SolveOptions with(Stepper s) {
  P::SolveOptions o;
  o.stepper = s;
  return o;
}

// Cole-Hopf: phi = a + e^{-nu t} cos x solves phi_t = nu phi_xx, so u = -2 nu phi_x / phi
// = 2 nu e^{-nu t} sin x / (a + e^{-nu t} cos x) solves u_t + u u_x = nu u_xx on [0, 2 pi).
ld cole_hopf(ld x, ld t, ld nu, ld a) {
  const ld e = std::exp(-nu * t);
  return 2 * nu * e * std::sin(x) / (a + e * std::cos(x));
}

// du/dt = -a u + cos(t), spatially uniform forcing: L = -a, N = cos(t) at the k = 0 mode (the spectrum
// is unnormalized, so the mean's coefficient is N_points * mean). Exact:
// u(x, t) = e^{-a t} (u0(x) - a / (1 + a^2)) + (a cos t + sin t) / (1 + a^2).
// Deliberately without with_parameters(), to exercise the checkpoint error.
struct Relaxation : P::Equation {
  P::Grid g;
  Tensor a;
  Relaxation(P::Grid grid, Tensor rate) : g(std::move(grid)), a(std::move(rate)) {}
  const P::Grid& grid() const override { return g; }
  Tensor linear() const override { return -a; }
  Tensor nonlinear(const Tensor& u_hat, double t) const override {
    Tensor n = zeros_like(u_hat);
    n.select(-1, 0).fill_(std::cos(t) * static_cast<double>(g.numel()));
    return n;
  }
  std::string name() const override { return "Relaxation"; }
  std::vector<Tensor> parameters() const override { return {a}; }
};

// du/dt = L u + s(x): the linear symbol of `base` plus a constant source (N independent of u and t).
// Exact per mode: u_m(t) = e^{L_m t} u_m(0) + (e^{L_m t} - 1) / L_m s_m, for which ETDRK4 is exact
// (f1 + 4 f2 + f3 = h phi_1(L h)), so it measures the contour-integral coefficients over all |L h|.
struct Sourced : P::Equation {
  const P::Equation& base;
  Tensor source;
  Sourced(const P::Equation& b, const Tensor& s) : base(b), source(s) {}
  const P::Grid& grid() const override { return base.grid(); }
  Tensor linear() const override { return base.linear(); }
  Tensor nonlinear(const Tensor& u_hat, double) const override {
    return P::to_spectral(grid(), source).to(u_hat.dtype()) + zeros_like(u_hat);
  }
  std::string name() const override { return "Sourced"; }
};

// A user equation that gets its shapes wrong (for the error tests).
struct Broken : P::Equation {
  P::Grid g;
  bool bad_linear;
  Broken(P::Grid grid, bool bl) : g(std::move(grid)), bad_linear(bl) {}
  const P::Grid& grid() const override { return g; }
  Tensor linear() const override { return bad_linear ? zeros({7}, float64) : zeros({1}, float64); }
  Tensor nonlinear(const Tensor& u_hat, double) const override { return zeros({3}, u_hat.dtype()); }
  std::string name() const override { return "Broken"; }
};

ld relaxation_exact(ld u0, ld a, ld t) {
  return std::exp(-a * t) * (u0 - a / (1 + a * a)) + (a * std::cos(t) + std::sin(t)) / (1 + a * a);
}

// Orders log2(e(dt) / e(dt/2)) over three halvings.
std::vector<double> orders(const std::function<Tensor(double)>& run, const Tensor& ref, double dt0) {
  std::vector<double> e;
  for (int i = 0; i < 3; ++i) e.push_back(maxdiff(run(dt0 / std::pow(2.0, i)), ref));
  return {std::log2(e[0] / e[1]), std::log2(e[1] / e[2]), e[2]};
}

}  // namespace

TEST_CASE("pde::solve: heat equation damps each Fourier mode by exp(-nu |k|^2 t)") {
  const ld L = 2 * kPi, nu = 0.3L, T = 0.4L;
  P::Grid g({32}, static_cast<double>(L));
  P::Heat eq(g, static_cast<double>(nu));
  auto f = [&](ld x, ld t) {
    return std::sin(x) * std::exp(-nu * t) + 0.5L * std::cos(3 * x) * std::exp(-9 * nu * t) +
           0.2L * std::sin(7 * x + 0.3L) * std::exp(-49 * nu * t) + 0.7L;
  };
  const Tensor u0 = field1(32, L, [&](ld x) { return f(x, 0); });
  const Tensor ref = field1(32, L, [&](ld x) { return f(x, T); });
  // etdrk4 is exact for a linear diagonal problem; the others have their truncation error.
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.02, Stepper::etdrk4), ref) < 1e-13);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.002, Stepper::rk4), ref) < 1e-9);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.002, Stepper::cn_rk2), ref) < 1e-4);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.002, Stepper::cn_rk3), ref) < 1e-4);

  // 2-D, non-square box, batch of two fields.
  const ld Lx = 2 * kPi, Ly = kPi;
  P::Grid g2({16, 12}, {static_cast<double>(Lx), static_cast<double>(Ly)});
  P::Heat eq2(g2, 0.1);
  auto f2 = [&](ld x, ld y, ld t) {
    return std::cos(2 * x) * std::sin(2 * y) * std::exp(-0.1L * 8 * t) + std::sin(x) * std::exp(-0.1L * t);
  };
  const Tensor a0 = field2(16, 12, Lx, Ly, [&](ld x, ld y) { return f2(x, y, 0); });
  const Tensor a1 = field2(16, 12, Lx, Ly, [&](ld x, ld y) { return f2(x, y, 0.5L); });
  const Tensor u = P::solve(eq2, stack({a0, a0 * 2.0}), 0.5, 0.05, Stepper::etdrk4);
  REQUIRE(u.shape() == Shape{2, 16, 12});
  CHECK(maxdiff(u.select(0, 0), a1) < 1e-13);
  CHECK(maxdiff(u.select(0, 1), a1 * 2.0) < 1e-13);

  // 3-D: sin(x) cos(2y) sin(3z) decays at nu * 14.
  P::Grid g3({8, 8, 8}, 2 * kPiD);
  std::vector<double> v0, v1;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) {
        const ld m = std::sin(2 * kPi * i / 8) * std::cos(4 * kPi * j / 8) * std::sin(6 * kPi * k / 8);
        v0.push_back(static_cast<double>(m));
        v1.push_back(static_cast<double>(m * std::exp(-0.02L * 14 * 0.5L)));
      }
  P::Heat eq3(g3, 0.02);
  for (Stepper s : kAll)
    CHECK(maxdiff(P::solve(eq3, from_vector(v0, Shape{8, 8, 8}), 0.5, 0.05, s), from_vector(v1, Shape{8, 8, 8})) <
          (P::order(s) == 4 ? 1e-9 : 1e-5));
}

TEST_CASE("pde::solve: advection-diffusion shifts exactly (and damps)") {
  const ld L = 2 * kPi, c = 0.7L, T = 1.3L;
  P::Grid g({32}, static_cast<double>(L));
  auto f = [&](ld x) { return std::exp(std::sin(x)) + 0.3L * std::cos(2 * x); };
  const Tensor u0 = field1(32, L, f);
  const Tensor ref = field1(32, L, [&](ld x) { return f(x - c * T); });
  P::AdvectionDiffusion eq(g, {static_cast<double>(c)}, 0.0);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.1, Stepper::etdrk4), ref) < 1e-12);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.01, Stepper::rk4), ref) < 1e-7);
  CHECK(maxdiff(P::solve(eq, u0, static_cast<double>(T), 0.01, Stepper::cn_rk2), ref) < 2e-2);

  // 2-D with diffusion: mode (1, 2) moves with c and decays with exp(-nu |k|^2 t).
  const ld cx = 0.5L, cy = -0.3L, nu = 0.05L;
  P::Grid g2({16, 16}, 2 * kPiD);
  P::AdvectionDiffusion eq2(g2, {static_cast<double>(cx), static_cast<double>(cy)}, static_cast<double>(nu));
  auto h = [&](ld x, ld y, ld t) {
    return std::sin(x - cx * t + 2 * (y - cy * t)) * std::exp(-5 * nu * t) +
           std::cos(3 * (x - cx * t)) * std::exp(-9 * nu * t);
  };
  const Tensor v0 = field2(16, 16, L, L, [&](ld x, ld y) { return h(x, y, 0); });
  const Tensor v1 = field2(16, 16, L, L, [&](ld x, ld y) { return h(x, y, T); });
  CHECK(maxdiff(P::solve(eq2, v0, static_cast<double>(T), 0.1, Stepper::etdrk4), v1) < 1e-12);
}

TEST_CASE("pde::solve: viscous Burgers matches the Cole-Hopf solution") {
  const ld nu = 0.2L, a = 1.5L, T = 1.0L;
  P::Grid g({128}, 2 * kPiD);
  P::Burgers eq(g, static_cast<double>(nu));
  const Tensor u0 = field1(128, 2 * kPi, [&](ld x) { return cole_hopf(x, 0, nu, a); });
  const Tensor ref = field1(128, 2 * kPi, [&](ld x) { return cole_hopf(x, T, nu, a); });
  CHECK(maxabs(u0) > 0.3);
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    const double dt = s == Stepper::rk4 ? 2e-3 : s == Stepper::etdrk4 ? 1e-2 : 1e-3;
    const double err = maxdiff(P::solve(eq, u0, static_cast<double>(T), dt, s), ref);
    MESSAGE(P::to_string(s) << " Burgers Cole-Hopf error " << err);
    CHECK(err < (P::order(s) == 4 ? 1e-9 : 1e-5));
  }
}

TEST_CASE("pde::solve: KdV soliton travels at speed c with its shape") {
  // u_t + 6 u u_x + u_xxx = 0: u = (c/2) sech^2(sqrt(c)/2 (x - c t - x0)).
  const ld c = 4, x0 = 12, L = 40, T = 0.5L;
  auto sol = [&](ld x, ld t) {
    ld xi = x - c * t - x0;
    const ld s = 1 / std::cosh(std::sqrt(c) / 2 * xi);
    return c / 2 * s * s;
  };
  P::Grid g({256}, static_cast<double>(L));
  P::KdV eq(g);
  const Tensor u0 = field1(256, L, [&](ld x) { return sol(x, 0); });
  const Tensor ref = field1(256, L, [&](ld x) { return sol(x, T); });
  const double err = maxdiff(P::solve(eq, u0, static_cast<double>(T), 2e-3, Stepper::etdrk4), ref);
  MESSAGE("KdV soliton error " << err);
  CHECK(err < 1e-6);
}

TEST_CASE("pde::solve: Taylor-Green vorticity decays exactly as exp(-(2 nu + drag) t)") {
  const ld L = 2 * kPi, nu = 0.05L, drag = 0.1L, T = 1.0L;
  P::Grid g({16, 16}, static_cast<double>(L));
  // Any combination of Laplacian eigenfunctions with |k|^2 = 2 makes u . grad(w) vanish.
  auto w = [&](ld x, ld y, ld t) {
    return (2 * std::cos(x) * std::cos(y) + 0.5L * std::sin(x + y)) * std::exp(-(2 * nu + drag) * t);
  };
  const Tensor w0 = field2(16, 16, L, L, [&](ld x, ld y) { return w(x, y, 0); });
  const Tensor w1 = field2(16, 16, L, L, [&](ld x, ld y) { return w(x, y, T); });
  P::NavierStokes2D eq(g, static_cast<double>(nu), Tensor(), static_cast<double>(drag));
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    const double err = maxdiff(P::solve(eq, w0, static_cast<double>(T), 0.01, s), w1);
    MESSAGE(P::to_string(s) << " Taylor-Green error " << err);
    CHECK(err < (s == Stepper::etdrk4 ? 1e-12 : P::order(s) == 4 ? 1e-10 : 1e-5));
  }
}

TEST_CASE("pde steppers: etdrk4 is exact for a constant source over |L dt| from 0 to 1e4") {
  // Modes m with amplitudes a (initial) and b (source), phases p, q; L_m = -i c m - nu m^2.
  struct Mode {
    int m;
    ld a, p, b, q;
  };
  const std::vector<Mode> modes = {{0, 0.5L, 0, 0.3L, 0},
                                   {1, 1, 0.2L, 0.7L, 1.1L},
                                   {5, 0.4L, 1.3L, 0.2L, -0.4L},
                                   {13, 0.3L, -0.7L, 0.5L, 0.9L},
                                   {31, 0.1L, 0.5L, 0.25L, 2.0L}};
  for (const std::int64_t n : {std::int64_t{64}, std::int64_t{1} << 15}) {  // 2^15: the contour goes in batches
    CAPTURE(n);
    P::Grid g({n}, 2 * kPiD);
    auto sum_modes = [&](const std::function<std::complex<ld>(const Mode&)>& coef) {
      return field1(n, 2 * kPi, [&](ld x) {
        ld v = 0;
        for (const Mode& md : modes) v += std::real(coef(md) * std::exp(std::complex<ld>(0, md.m * x)));
        return v;
      });
    };
    const Tensor u0 = sum_modes([](const Mode& md) { return std::polar(md.a, md.p); });
    const Tensor src = sum_modes([](const Mode& md) { return std::polar(md.b, md.q); });
    struct Case {
      ld nu, c, dt;
      int steps;
    };
    // |L dt| spans [1e-7, 1e-4] (small-argument cancellation), [0.05, 1e2] and up to ~1e4 (stiff).
    const std::vector<Case> cases =
        n == 64 ? std::vector<Case>{Case{1e-7L, 0, 1e-2L, 3}, Case{0.05L, 0, 1.0L, 2}, Case{10, 0, 1.0L, 2},
                                    Case{0.3L, 0.7L, 0.25L, 4}, Case{1e-7L, 2.0L, 1e-2L, 3}}
                : std::vector<Case>{Case{0.05L, 0, 1.0L, 1}, Case{0.3L, 0.7L, 0.25L, 1}};
    for (const Case& cs : cases) {
      CAPTURE(static_cast<double>(cs.nu));
      CAPTURE(static_cast<double>(cs.c));
      const ld T = cs.dt * cs.steps;
      std::unique_ptr<P::Equation> base;
      if (cs.c == 0)
        base = std::make_unique<P::Heat>(g, static_cast<double>(cs.nu));
      else
        base = std::make_unique<P::AdvectionDiffusion>(g, std::vector<double>{static_cast<double>(cs.c)},
                                                       static_cast<double>(cs.nu));
      Sourced eq(*base, src);
      const Tensor ref = sum_modes([&](const Mode& md) {
        const std::complex<ld> Lm(-cs.nu * md.m * md.m, -cs.c * md.m);
        const std::complex<ld> e = std::exp(Lm * T);
        const std::complex<ld> phi = md.m == 0 ? std::complex<ld>(T) : (e - std::complex<ld>(1)) / Lm;
        return e * std::polar(md.a, md.p) + phi * std::polar(md.b, md.q);
      });
      const double err = maxdiff(P::solve(eq, u0, static_cast<double>(T), static_cast<double>(cs.dt)), ref);
      CHECK(err < 1e-13);
    }
  }
}

TEST_CASE("pde steppers: observed convergence orders by halving dt") {
  // (1) Burgers nu = 0.1, smooth data; reference: etdrk4 with a 100x smaller step.
  P::Grid g({32}, 2 * kPiD);
  P::Burgers eq(g, 0.1);
  const Tensor u0 = field1(32, 2 * kPi, [](ld x) { return std::sin(x) + 0.3L * std::cos(2 * x); });
  const double T = 0.5;
  const Tensor ref = P::solve(eq, u0, T, 5e-4, Stepper::etdrk4);
  // (2) the relaxation ODE with time-dependent forcing (stiff-free L = -2), against its closed form.
  P::Grid g1({8}, 1.0);
  Relaxation rel(g1, scalar_tensor(2.0, float64));
  const Tensor r0 = field1(8, 1, [](ld x) { return std::cos(2 * kPi * x); });
  const Tensor rref = field1(8, 1, [](ld x) { return relaxation_exact(std::cos(2 * kPi * x), 2, 1); });
  // (3) heat with nu |k|^2 dt up to ~1.6: L dominates.
  P::Heat heat(g, 0.05);
  auto hf = [](ld x, ld t) { return std::sin(3 * x) * std::exp(-0.45L * t) + std::cos(5 * x) * std::exp(-1.25L * t); };
  const Tensor h0 = field1(32, 2 * kPi, [&](ld x) { return hf(x, 0); });
  const Tensor href = field1(32, 2 * kPi, [&](ld x) { return hf(x, 1); });
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    const auto ob = orders([&](double dt) { return P::solve(eq, u0, T, dt, s); }, ref, 0.05);
    const auto orl = orders([&](double dt) { return P::solve(rel, r0, 1.0, dt, s); }, rref, 0.1);
    MESSAGE(P::to_string(s) << " order Burgers " << ob[0] << " " << ob[1] << "; relaxation " << orl[0] << " " << orl[1]
                            << " (finest error " << orl[2] << ")");
    const double p = P::order(s);
    if (s == Stepper::cn_rk3) {
      // Williamson RK3 dominates while N dominates (~2.8 here); the CN part makes it 2 asymptotically.
      CHECK(ob[1] > 2.6);
      CHECK(ob[1] < 3.2);
    } else {
      CHECK(std::abs(ob[1] - p) < 0.2);
    }
    CHECK(std::abs(orl[1] - p) < 0.25);
    if (s != Stepper::etdrk4) {  // etdrk4 is exact for this linear problem
      const auto oh = orders([&](double dt) { return P::solve(heat, h0, 1.0, dt, s); }, href, 0.1);
      MESSAGE(P::to_string(s) << " order heat " << oh[0] << " " << oh[1]);
      CHECK(std::abs(oh[1] - p) < 0.2);
    }
  }
}

TEST_CASE("pde::solve: conservation of the mean (Burgers, KdV, KS) and NS energy balance") {
  P::Grid g({64}, 32 * kPiD);
  const Tensor u0 = field1(64, 32 * kPi, [](ld x) { return std::cos(x / 16) * (1 + std::sin(x / 16)) + 0.25L; });
  const double m0 = mean(u0).item<double>();
  P::Burgers b(g, 0.5);
  P::KdV k(g, 1.0, 0.5);
  P::KuramotoSivashinsky ks(g);
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    CHECK(std::abs(mean(P::solve(b, u0, 2.0, 0.01, s)).item<double>() - m0) < 1e-13);
    if (s != Stepper::rk4) {  // rk4 is limited by |L| dt for these stiff symbols
      CHECK(std::abs(mean(P::solve(k, u0, 2.0, 0.01, s)).item<double>() - m0) < 1e-13);
      const Tensor uks = P::solve(ks, u0, 5.0, 0.01, s);
      CHECK(std::abs(mean(uks).item<double>() - m0) < 1e-13);
      CHECK(maxdiff(uks, P::solve(ks, u0, 5.0, 0.005, Stepper::etdrk4)) < (P::order(s) == 4 ? 1e-7 : 1e-3));
    }
  }

  // Unforced NS: dE/dt = -nu <w^2> for the 2/3-truncated (Galerkin) dynamics; E decreases.
  const ld L = 2 * kPi;
  P::Grid g2({32, 32}, 2 * kPiD);
  const double nu = 0.02;
  P::NavierStokes2D ns(g2, nu);
  auto w = [](ld x, ld y) {
    return std::sin(x + 0.3L) * std::cos(2 * y) + 0.8L * std::cos(3 * x - y + 1) +
           0.6L * std::sin(4 * y) * std::cos(x) + 0.4L * std::cos(2 * x + 3 * y);
  };
  const Tensor w0 = field2(32, 32, L, L, w);
  P::SolveOptions o;
  o.save_every = 1;
  const double dt = 0.01;
  const P::Solution sol = P::solve(ns, w0, 0.2, dt, o);
  REQUIRE(sol.trajectory.size(0) == 21);
  std::vector<double> E, Z;
  for (std::int64_t i = 0; i < 21; ++i) {
    const Tensor wi = sol.trajectory.select(0, i);
    const Tensor v = ns.velocity(P::to_spectral(g2, wi));
    E.push_back(0.5 * mean(sum(v * v, {0})).item<double>());
    Z.push_back(mean(wi * wi).item<double>());
  }
  for (std::size_t i = 1; i < 21; ++i) CHECK(E[i] < E[i - 1]);
  for (std::size_t i = 1; i < 20; ++i) {
    const double dEdt = (E[i + 1] - E[i - 1]) / (2 * dt);
    CHECK(dEdt == doctest::Approx(-nu * Z[i]).epsilon(1e-4));
  }
}

TEST_CASE("pde::solve: Kolmogorov-forced NS2D with drag approaches its laminar state in closed form") {
  // f = F sin(n y): w = A(t) sin(n y) has u = (A/n) cos(n y), v = 0, so u . grad(w) = 0 and
  // A' = -(nu n^2 + drag) A + F, A(0) = 0: A(t) = F (1 - e^{-lambda t}) / lambda.
  const ld L = 2 * kPi, F = 0.8L, nu = 0.05L, drag = 0.1L, T = 2.0L;
  const int n = 3;
  const ld lambda = nu * n * n + drag;
  P::Grid g({16, 16}, 2 * kPiD);
  const Tensor f = field2(16, 16, L, L, [&](ld, ld y) { return F * std::sin(n * y); });
  const Tensor ref =
      field2(16, 16, L, L, [&](ld, ld y) { return F * (1 - std::exp(-lambda * T)) / lambda * std::sin(n * y); });
  P::NavierStokes2D eq(g, static_cast<double>(nu), f, static_cast<double>(drag));
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    const double err = maxdiff(P::solve(eq, zeros({16, 16}, float64), static_cast<double>(T), 0.02, s), ref);
    CHECK(err < (s == Stepper::etdrk4 ? 1e-13 : P::order(s) == 4 ? 1e-9 : 1e-4));
  }
}

TEST_CASE("pde::NavierStokes2D: velocity and nonlinear term against closed forms") {
  // w = cos x + cos 2y: psi = cos x + cos(2y)/4, u = psi_y = -sin(2y)/2, v = -psi_x = sin x,
  // u w_x + v w_y = -1.5 sin x sin 2y, so N = 1.5 sin x sin 2y (+ forcing).
  const ld L = 2 * kPi;
  P::Grid g({16, 16}, 2 * kPiD);
  const Tensor w = field2(16, 16, L, L, [](ld x, ld y) { return std::cos(x) + std::cos(2 * y); });
  const Tensor f = field2(16, 16, L, L, [](ld x, ld y) { return 0.1L * std::sin(4 * y) + 0 * x; });
  P::NavierStokes2D eq(g, 0.01, f, 0.0);
  const Tensor wh = P::to_spectral(g, w);
  const Tensor vel = eq.velocity(wh);
  REQUIRE(vel.shape() == Shape{2, 16, 16});
  CHECK(maxdiff(vel.select(0, 0), field2(16, 16, L, L, [](ld, ld y) { return -std::sin(2 * y) / 2; })) < 1e-14);
  CHECK(maxdiff(vel.select(0, 1), field2(16, 16, L, L, [](ld x, ld) { return std::sin(x); })) < 1e-14);
  const Tensor n = P::from_spectral(g, eq.nonlinear(wh, 0.0));
  CHECK(maxdiff(n, field2(16, 16, L, L, [](ld x, ld y) {
                  return 1.5L * std::sin(x) * std::sin(2 * y) + 0.1L * std::sin(4 * y);
                })) < 1e-13);
  // unforced, and in float32 (the multipliers are formed in float64 and rounded once)
  const Tensor n_ref = field2(16, 16, L, L, [](ld x, ld y) { return 1.5L * std::sin(x) * std::sin(2 * y); });
  P::NavierStokes2D free_eq(g, 0.01);
  CHECK(maxdiff(P::from_spectral(g, free_eq.nonlinear(wh, 0.0)), n_ref) < 1e-13);
  const Tensor n32 = P::from_spectral(g, free_eq.nonlinear(P::to_spectral(g, w.to(float32)), 0.0));
  CHECK(n32.dtype() == float32);
  CHECK(maxdiff(n32.to(float64), n_ref) < 2e-6);
  const auto mv = eq.max_velocity(wh);
  REQUIRE(mv.size() == 2);
  CHECK(mv[0] == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(mv[1] == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(eq.name().find("forced") != std::string::npos);
}

TEST_CASE("pde::step: one step equals a one-step solve; float32 states stay float32") {
  P::Grid g({16}, 2 * kPiD);
  P::Burgers eq(g, 0.1);
  const Tensor u0 = field1(16, 2 * kPi, [](ld x) { return std::sin(x); });
  for (Stepper s : kAll) {
    const Tensor a = P::from_spectral(g, P::step(eq, P::to_spectral(g, u0), 0.0, 0.01, s));
    CHECK(maxdiff(a, P::solve(eq, u0, 0.01, 0.01, s)) < 1e-15);
  }
  P::Heat heat(g, 0.2);
  const Tensor h0 = field1(16, 2 * kPi, [](ld x) { return std::sin(2 * x); });
  const Tensor h1 = field1(16, 2 * kPi, [](ld x) { return std::sin(2 * x) * std::exp(-0.8L * 0.5L); });
  for (Stepper s : kAll) {
    const Tensor u = P::solve(heat, h0.to(float32), 0.5, 0.01, s);
    CHECK(u.dtype() == float32);
    CHECK(maxdiff(u.to(float64), h1) < 1e-5);
  }
}

TEST_CASE("pde::Integrator: coefficients built once, same steps as solve") {
  P::Grid g({16}, 2 * kPiD);
  P::KuramotoSivashinsky eq(g, 0.5);
  const Tensor u0 = field1(16, 2 * kPi, [](ld x) { return std::sin(x) + 0.1L * std::cos(3 * x); });
  for (Stepper s : {Stepper::cn_rk2, Stepper::cn_rk3, Stepper::etdrk4}) {
    P::Integrator it(eq, 0.01, s);
    CHECK(it.dt() == 0.01);
    CHECK(it.stepper() == s);
    const Tensor a = P::from_spectral(g, it.steps(P::to_spectral(g, u0), 0.0, 30));
    CHECK(maxdiff(a, P::solve(eq, u0, 0.3, 0.01, s)) < 1e-14);
    const Tensor b = P::from_spectral(g, it.step(P::to_spectral(g, u0.to(float32)), 0.0));
    CHECK(b.dtype() == float32);
    CHECK(maxdiff(b.to(float64), P::solve(eq, u0, 0.01, 0.01, s)) < 1e-6);
  }
  // Differentiable w.r.t. the state and (through the prebuilt coefficients) nu.
  const Tensor nu = scalar_tensor(0.5, float64).requires_grad_();
  const Tensor uh = (randn({9}, complex128) * 0.3).requires_grad_();
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) {
        P::KuramotoSivashinsky e(P::Grid({16}, 2 * kPiD), in[1]);
        return P::Integrator(e, 0.05, Stepper::etdrk4).steps(in[0], 0.0, 2);
      },
      {uh, nu}));
  CHECK_THROWS_WITH_AS(P::Integrator(eq, 0.0), doctest::Contains("dt must be"), Error);
  CHECK_THROWS_WITH_AS(P::Integrator(eq, 0.1, Stepper::rk4), doctest::Contains("unstable"), Error);
  CHECK_THROWS_WITH_AS(P::Integrator(eq, 0.1, Stepper::etdrk4, 2), doctest::Contains("contour_points"), Error);
  P::Integrator it(eq, 0.01);
  CHECK_THROWS_WITH_AS(it.step(u0, 0.0), doctest::Contains("complex64/complex128"), Error);
  CHECK_THROWS_AS(it.step(zeros({16}, complex128), 0.0), Error);
  CHECK_THROWS_WITH_AS(it.steps(P::to_spectral(g, u0), 0.0, -1), doctest::Contains(">= 0"), Error);
  CHECK_THROWS_WITH_AS(P::Integrator(Broken(g, false), 0.1), doctest::Contains("nonlinear() must return"), Error);
}

TEST_CASE("pde::solve: trajectory, shortened last step, step-doubling error estimate") {
  P::Grid g({16}, 2 * kPiD);
  P::Heat heat(g, 0.5);
  const Tensor u0 = field1(16, 2 * kPi, [](ld x) { return std::cos(x) + 1; });
  auto exact = [&](ld t) { return field1(16, 2 * kPi, [&](ld x) { return std::cos(x) * std::exp(-0.5L * t) + 1; }); };
  P::SolveOptions o;
  o.save_every = 3;
  P::Solution s = P::solve(heat, u0, 0.5, 0.05, o);
  CHECK(s.steps == 10);
  REQUIRE(s.times.size() == 5);
  const double want[] = {0.0, 0.15, 0.3, 0.45, 0.5};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(s.times[i] == doctest::Approx(want[i]).epsilon(1e-14));
    CHECK(maxdiff(s.trajectory.select(0, static_cast<std::int64_t>(i)), exact(want[i])) < 1e-13);
  }
  CHECK(maxdiff(s.u, exact(0.5)) < 1e-13);
  // t_end = 0.52 is not a multiple of 0.05: ten steps, then one of 0.02.
  s = P::solve(heat, u0, 0.52, 0.05, o);
  CHECK(s.steps == 11);
  CHECK(s.times.back() == 0.52);
  CHECK(maxdiff(s.u, exact(0.52)) < 1e-13);
  CHECK(maxdiff(P::solve(heat, u0, 0.52, 0.05, Stepper::rk4), exact(0.52)) < 1e-6);
  // save_every = 0: only the final state; t_end = 0: u0.
  s = P::solve(heat, u0, 0.5, 0.05, P::SolveOptions{});
  CHECK(s.trajectory.size(0) == 1);
  CHECK(s.times == std::vector<double>{0.5});
  s = P::solve(heat, u0, 0.0, 0.05, P::SolveOptions{});
  CHECK(s.steps == 0);
  CHECK(maxdiff(s.u, u0) == 0.0);

  // Step doubling against the true error (reference: etdrk4 with a tiny step).
  P::Burgers eq(g, 0.1);
  const Tensor b0 = field1(16, 2 * kPi, [](ld x) { return std::sin(x) + 0.2L; });
  const Tensor ref = P::solve(eq, b0, 0.5, 5e-4, Stepper::etdrk4);
  for (Stepper st : kAll) {
    CAPTURE(P::to_string(st));
    P::SolveOptions oe = with(st);
    oe.error_estimate = true;
    const P::Solution r = P::solve(eq, b0, 0.5, 0.05, oe);
    const double truth = maxdiff(r.u, ref);
    MESSAGE(P::to_string(st) << " step doubling estimate " << r.error_estimate << " true " << truth);
    CHECK(r.error_estimate > 0.7 * truth);
    CHECK(r.error_estimate < 1.5 * truth);
  }
}

TEST_CASE("pde::solve: gradcheck w.r.t. u0 and parameters for every stepper") {
  manual_seed(7);
  P::Grid g({8}, 2 * kPiD);
  const Tensor u0 = (randn({8}, float64) * 0.5).requires_grad_();
  const Tensor nu = scalar_tensor(0.3, float64).requires_grad_();
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    CHECK(autodiff::gradcheck(
        [s](const std::vector<Tensor>& in) {
          P::Burgers eq(P::Grid({8}, 2 * kPiD), in[1]);
          return P::solve(eq, in[0], 0.15, 0.05, s);
        },
        {u0, nu}));
    // KdV: complex symbol i beta k^3 (etdrk4's contour average over a complex L), alpha in N.
    const Tensor ab = from_vector(std::vector<double>{1.5, 0.2}).requires_grad_();
    if (s != Stepper::rk4)
      CHECK(autodiff::gradcheck(
          [s](const std::vector<Tensor>& in) {
            P::KdV eq(P::Grid({8}, 2 * kPiD), in[1].select(0, 0), in[1].select(0, 1));
            return P::solve(eq, in[0], 0.1, 0.05, s);
          },
          {u0, ab}));
  }
  // Advection velocity (complex L) and NS2D's nu, drag and forcing field.
  const Tensor c = from_vector(std::vector<double>{0.7}).requires_grad_();
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    CHECK(autodiff::gradcheck(
        [s](const std::vector<Tensor>& in) {
          P::AdvectionDiffusion eq(P::Grid({8}, 2 * kPiD), in[1], in[2]);
          return P::solve(eq, in[0], 0.2, 0.1, s);
        },
        {u0, c, nu}));
  }
  const Tensor w0 = (randn({6, 6}, float64) * 0.5).requires_grad_();
  const Tensor f = (randn({6, 6}, float64) * 0.5).requires_grad_();
  const Tensor drag = scalar_tensor(0.1, float64).requires_grad_();
  for (Stepper s : {Stepper::cn_rk2, Stepper::etdrk4}) {
    CAPTURE(P::to_string(s));
    CHECK(autodiff::gradcheck(
        [s](const std::vector<Tensor>& in) {
          P::NavierStokes2D eq(P::Grid({6, 6}, 2 * kPiD), in[1], in[2], in[3]);
          return P::solve(eq, in[0], 0.1, 0.05, s);
        },
        {w0, nu, f, drag}));
  }
  // Second derivatives: NS2D with cn_rk2, Burgers with etdrk4 (contour coefficients included).
  CHECK(autodiff::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        P::NavierStokes2D eq(P::Grid({4, 4}, 2 * kPiD), in[1], in[2], scalar_tensor(0.0, float64));
        return P::solve(eq, in[0], 0.05, 0.05, Stepper::cn_rk2);
      },
      {(randn({4, 4}, float64) * 0.5).requires_grad_(), nu, (randn({4, 4}, float64) * 0.5).requires_grad_()}));
  CHECK(autodiff::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        P::Burgers eq(P::Grid({8}, 2 * kPiD), in[1]);
        return P::solve(eq, in[0], 0.1, 0.05, Stepper::etdrk4);
      },
      {u0, nu}));
}

TEST_CASE("pde::step: complex128 gradcheck w.r.t. the half spectrum and time dependence of N") {
  manual_seed(5);
  const Tensor uh = (randn({5}, complex128) * 2.0).requires_grad_();
  const Tensor rate = scalar_tensor(0.8, float64).requires_grad_();
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    CHECK(autodiff::gradcheck(
        [s](const std::vector<Tensor>& in) {
          P::Burgers eq(P::Grid({8}, 2 * kPiD), in[1]);
          return P::step(eq, in[0], 0.0, 0.05, s);
        },
        {uh, rate}));
    CHECK(autodiff::gradcheck(
        [s](const std::vector<Tensor>& in) {
          Relaxation eq(P::Grid({8}, 1.0), in[1]);
          return P::step(eq, P::step(eq, in[0], 0.3, 0.1, s), 0.4, 0.1, s);
        },
        {uh, rate}));
  }
}

TEST_CASE("pde::solve: checkpointed chunks give the same values and gradients") {
  manual_seed(11);
  P::Grid g({8, 8}, 2 * kPiD);
  const Tensor w0 = (randn({2, 8, 8}, float64) * 0.5).requires_grad_();
  const Tensor f = (randn({8, 8}, float64) * 0.5).requires_grad_();
  const Tensor nu = scalar_tensor(0.05, float64).requires_grad_();
  const Tensor drag = scalar_tensor(0.1, float64).requires_grad_();
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    auto run = [&](bool ck) {
      P::NavierStokes2D eq(g, nu, f, drag);
      P::SolveOptions o = with(s);
      o.save_every = 2;
      o.checkpoint = ck;
      o.checkpoint_every = 3;
      const P::Solution sol = P::solve(eq, w0, 0.35, 0.05, o);  // 7 steps: chunks 3 + 3 + 1
      const Tensor loss = sum(sol.trajectory * sol.trajectory) + sum(sol.u * sin(sol.u));
      auto gr = autodiff::grad({loss}, {w0, nu, f, drag});
      gr.insert(gr.begin(), sol.trajectory.detach());
      return gr;
    };
    const auto a = run(false), b = run(true);
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CHECK(maxdiff(a[i], b[i]) < 1e-12 * (1 + maxabs(a[i])));
    }
  }
  // gradcheck straight through the checkpointed solve; the equation is gone before backward runs.
  const Tensor u0 = (randn({8}, float64) * 0.5).requires_grad_();
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) {
        P::Burgers eq(P::Grid({8}, 2 * kPiD), in[1]);
        P::SolveOptions o;
        o.checkpoint = true;
        o.checkpoint_every = 2;
        return P::solve(eq, in[0], 0.25, 0.05, o).u;
      },
      {u0, nu}));
}

TEST_CASE("pde::solve: errors") {
  P::Grid g({16}, 2 * kPiD);
  const Tensor u0 = field1(16, 2 * kPi, [](ld x) { return std::sin(x); });
  P::Heat heat(g, 1.0);

  // Explicit rk4 with |L| dt far outside its stability region (k = 8: L dt = -64 * 0.2).
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.2, Stepper::rk4), doctest::Contains("max|L| dt = 12.8"), Error);
  CHECK_THROWS_WITH_AS(P::step(heat, P::to_spectral(g, u0), 0.0, 0.2, Stepper::rk4), doctest::Contains("unstable"),
                       Error);
  CHECK_NOTHROW(P::solve(heat, u0, 1.0, 0.2, Stepper::etdrk4));

  // Non-finite blow-up (checks off): the message names the first bad step, found independently by
  // stepping one step at a time.
  P::SolveOptions off = with(Stepper::rk4);
  off.check_stability = false;
  const Tensor noisy = u0 + field1(16, 2 * kPi, [](ld x) { return 1e-3L * std::cos(8 * x); });
  Tensor v = noisy;
  std::int64_t first_bad = 0;
  for (std::int64_t i = 1; i <= 400 && first_bad == 0; ++i) {
    try {  // a one-step solve from a finite state throws exactly when that step overflows
      v = P::solve(heat, v, 0.2, 0.2, off).u;
    } catch (const Error&) {
      first_bad = i;
    }
  }
  REQUIRE(first_bad > 50);  // so the check (every 50 steps) must trace it back
  const std::string where = "non-finite at step " + std::to_string(first_bad) + " ";
  CHECK_THROWS_WITH_AS(P::solve(heat, noisy, 400 * 0.2, 0.2, off), doctest::Contains(where.c_str()), Error);

  // Advective CFL: max|u| = 10, dx = 2 pi / 64, dt = 0.1 -> C ~ 10.
  P::Grid g64({64}, 2 * kPiD);
  P::Burgers burgers(g64, 0.01);
  const Tensor big = field1(64, 2 * kPi, [](ld x) { return 10 * std::sin(x); });
  CHECK_THROWS_WITH_AS(P::solve(burgers, big, 1.0, 0.1, Stepper::cn_rk2), doctest::Contains("CFL"), Error);
  CHECK_THROWS_WITH_AS(P::solve(burgers, big, 1.0, 0.1, Stepper::etdrk4), doctest::Contains("exceeds max_cfl"), Error);

  // Shapes, dtypes, times.
  CHECK_THROWS_AS(P::solve(heat, zeros({32}, float64), 1.0, 0.1), Error);
  CHECK_THROWS_AS(P::solve(heat, zeros({16, 3}, float64), 1.0, 0.1), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, arange(16), 1.0, 0.1), doctest::Contains("real float32/float64"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, Tensor(), 1.0, 0.1), doctest::Contains("undefined"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, u0 / 0.0, 1.0, 0.1), doctest::Contains("u0 has non-finite"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.0), doctest::Contains("dt must be finite and > 0"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, -0.1), doctest::Contains("dt must be"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, std::nan("")), doctest::Contains("dt must be"), Error);
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, -1.0, 0.1), doctest::Contains("t_end must be finite and >= 0"), Error);
  P::SolveOptions strict;
  strict.partial_last_step = false;
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 0.25, 0.1, strict), doctest::Contains("not a whole number of steps"), Error);
  CHECK_NOTHROW(P::solve(heat, u0, 0.3, 0.1, strict));  // 0.3 / 0.1 = 2.9999999999999996 counts as 3
  P::SolveOptions bad;
  bad.save_every = -1;
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.1, bad), doctest::Contains("save_every"), Error);
  bad = {};
  bad.check_every = 0;
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.1, bad), doctest::Contains("check_every"), Error);
  bad = {};
  bad.contour_points = 4;
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.1, bad), doctest::Contains("contour_points"), Error);
  bad = {};
  bad.max_cfl = 0;
  CHECK_THROWS_WITH_AS(P::solve(heat, u0, 1.0, 0.1, bad), doctest::Contains("max_cfl"), Error);

  // step(): spectral input checks.
  CHECK_THROWS_WITH_AS(P::step(heat, u0, 0.0, 0.1), doctest::Contains("complex half spectrum"), Error);
  CHECK_THROWS_AS(P::step(heat, zeros({5}, complex128), 0.0, 0.1), Error);
  CHECK_THROWS_WITH_AS(P::step(heat, P::to_spectral(g, u0), 0.0, 0.0), doctest::Contains("dt must be"), Error);

  // Equation parameters.
  CHECK_THROWS_WITH_AS(P::Heat(g, -1.0), doctest::Contains("nu must be finite and >= 0"), Error);
  CHECK_THROWS_WITH_AS(P::Heat(g, zeros({2}, float64)), doctest::Contains("one-element"), Error);
  CHECK_THROWS_WITH_AS(P::Burgers(g, std::nan("")), doctest::Contains("nu must be"), Error);
  CHECK_THROWS_WITH_AS(P::Burgers(P::Grid({8, 8}), 0.1), doctest::Contains("needs a 1-D grid"), Error);
  CHECK_THROWS_WITH_AS(P::KuramotoSivashinsky(g, 0.0), doctest::Contains("> 0"), Error);
  CHECK_THROWS_WITH_AS(P::KdV(g, std::nan(""), 1.0), doctest::Contains("alpha must be finite"), Error);
  CHECK_THROWS_WITH_AS(P::NavierStokes2D(g, 0.1), doctest::Contains("needs a 2-D grid"), Error);
  CHECK_THROWS_AS(P::NavierStokes2D(P::Grid({8, 8}), 0.1, zeros({8, 6}, float64)), Error);
  CHECK_THROWS_WITH_AS(P::NavierStokes2D(P::Grid({8, 8}), 0.1, Tensor(), -1.0), doctest::Contains("drag"), Error);
  CHECK_THROWS_WITH_AS(P::AdvectionDiffusion(g, std::vector<double>{1.0, 2.0}, 0.1), doctest::Contains("velocity"),
                       Error);
  CHECK_THROWS_WITH_AS(P::AdvectionDiffusion(g, zeros({2}, float64), scalar_tensor(0.1, float64)),
                       doctest::Contains("shape [1]"), Error);

  // User equations with wrong shapes.
  CHECK_THROWS_WITH_AS(P::solve(Broken(g, true), u0, 0.2, 0.1), doctest::Contains("does not broadcast"), Error);
  CHECK_THROWS_WITH_AS(P::solve(Broken(g, false), u0, 0.2, 0.1), doctest::Contains("shape [9], got [3]"), Error);
  CHECK_THROWS_WITH_AS(P::step(Broken(g, true), P::to_spectral(g, u0), 0.0, 0.1), doctest::Contains("linear()"), Error);

  // Checkpointing a user equation whose parameters need grad but that cannot rebind them.
  Relaxation rel(g, scalar_tensor(1.0, float64).requires_grad_());
  P::SolveOptions ck;
  ck.checkpoint = true;
  CHECK_THROWS_WITH_AS(P::solve(rel, u0, 0.2, 0.1, ck), doctest::Contains("with_parameters"), Error);
  Relaxation rel_const(g, scalar_tensor(1.0, float64));
  CHECK_NOTHROW(P::solve(rel_const, u0, 0.2, 0.1, ck));
}

TEST_CASE("pde::solve: the API example (GRF initial data, Burgers, etdrk4) at test scale, float32") {
  // ph::pde::Grid grid({8192}, {1.0}); u0 = gaussian_random_field(grid, 32, 25, 5, 2);
  // Burgers eq(grid, 0.1); u1 = solve(eq, u0, 1.0, 1e-4, etdrk4) -- here 256 points, 4 samples, t = 0.05.
  manual_seed(3);
  P::Grid grid({256}, std::vector<double>{1.0});
  const Tensor u0 = P::gaussian_random_field(grid, /*batch=*/4, /*sigma=*/25, /*tau=*/5, /*gamma=*/2);
  REQUIRE(u0.dtype() == float32);
  P::Burgers eq(grid, /*nu=*/0.1);
  const Tensor u1 = P::solve(eq, u0, /*t_end=*/0.05, /*dt=*/1e-4, P::Stepper::etdrk4);
  CHECK(u1.dtype() == float32);
  CHECK(u1.shape() == u0.shape());
  CHECK(all(isfinite(u1)).item<bool>());
  const Tensor u64 = P::solve(eq, u0.to(float64), 0.05, 1e-4, P::Stepper::etdrk4);
  const Tensor r64 = P::solve(eq, u0.to(float64), 0.05, 5e-5, P::Stepper::cn_rk3);
  CHECK(maxdiff(u64, r64) < 1e-7 * (1 + maxabs(u64)));
  CHECK(maxdiff(u1.to(float64), u64) < 1e-5 * (1 + maxabs(u64)));
  CHECK(maxdiff(mean(u1.to(float64), {1}), mean(u0.to(float64), {1})) < 1e-6);
  CHECK(maxabs(u1) < maxabs(u0));  // viscous Burgers: the maximum principle
}

namespace {
struct TopLevel : OpObserver {
  std::vector<std::string> names;
  void on_begin(const OpEvent& e) override {
    if (e.depth == 0) names.emplace_back(e.name);
  }
};
}  // namespace

TEST_CASE("pde::solve, pde::step and Integrator show up as one call each to op observers") {
  P::Grid g({16}, 2 * kPiD);
  P::Burgers eq(g, 0.1);
  const Tensor u0 = field1(16, 2 * kPi, [](ld x) { return std::sin(x); });
  const Tensor uh = P::to_spectral(g, u0);
  P::Integrator it(eq, 0.01);
  auto rec = std::make_shared<TopLevel>();
  add_op_observer(rec);
  P::solve(eq, u0, 0.05, 0.01);
  P::step(eq, uh, 0.0, 0.01);
  it.steps(uh, 0.0, 3);
  remove_op_observer(rec);
  CHECK(rec->names == std::vector<std::string>{"pde::solve", "pde::step", "pde::Integrator::step"});
}
