// tests/test_cuda_pde.cpp - phasor::pde on CUDA tensors (Note [pde devices] in phasor/pde/solve.hpp):
// CPU-vs-GPU agreement of the grid symbols, the spectral operators, every equation's short rollout with
// every stepper (float64 and float32), Gaussian random fields for a seed, Integrator and checkpointed
// solves, and gradients through a GPU rollout w.r.t. the initial state and a (CPU or GPU) viscosity.
// Those cases need a GPU (doctest reports them as skipped without one). The CPU cases check the new
// device parameters with Device::cpu() against closed forms and the errors for devices that do not exist.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cmath>
#include <functional>
#include <memory>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace P = phasor::pde;
using P::Stepper;

namespace {

const Device kCpu = Device::cpu();
const double kPi = 3.141592653589793;
const Stepper kAll[] = {Stepper::rk4, Stepper::cn_rk2, Stepper::cn_rk3, Stepper::etdrk4};

/// doctest's Contains matcher for a std::string.
doctest::Contains has(const std::string& s) { return doctest::Contains(s.c_str()); }

/// A device that does not exist on this machine (cuda:N with N = device_count()).
Device missing_device() { return Device::cuda(cuda::device_count()); }

/// A smooth 1-D float64 field on n points: the box's lowest modes 1, 2, 3.
Tensor smooth1(std::int64_t n, double amp = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    const double x = 2.0 * kPi * static_cast<double>(j) / static_cast<double>(n);
    v[static_cast<std::size_t>(j)] = amp * (std::sin(x) + 0.5 * std::cos(2.0 * x + 0.3) + 0.2 * std::sin(3.0 * x));
  }
  return from_vector(v);
}

/// A smooth 2-D float64 field (nx, ny).
Tensor smooth2(std::int64_t nx, std::int64_t ny) {
  std::vector<double> v(static_cast<std::size_t>(nx * ny));
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j) {
      const double x = 2.0 * kPi * static_cast<double>(i) / static_cast<double>(nx);
      const double y = 2.0 * kPi * static_cast<double>(j) / static_cast<double>(ny);
      v[static_cast<std::size_t>(i * ny + j)] =
          std::sin(x) * std::cos(y) + 0.3 * std::cos(2.0 * x - y) + 0.1 * std::sin(3.0 * y);
    }
  return from_vector(v, Shape{nx, ny});
}

/// One equation of each kind with a short rollout setting that every stepper (rk4 included) handles.
struct Case {
  std::string name;
  std::function<std::shared_ptr<P::Equation>()> make;
  Tensor u0;  // float64, CPU
  double t_end, dt;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const P::Grid g1({32}, 2.0 * kPi), g2({16, 16}, 2.0 * kPi);
  out.push_back({"Heat2D", [g2] { return std::make_shared<P::Heat>(g2, 0.1); }, smooth2(16, 16), 0.05, 0.005});
  out.push_back({"AdvectionDiffusion1D",
                 [g1] { return std::make_shared<P::AdvectionDiffusion>(g1, std::vector<double>{0.7}, 0.05); },
                 smooth1(32), 0.05, 0.005});
  out.push_back({"Burgers", [g1] { return std::make_shared<P::Burgers>(g1, 0.1); }, smooth1(32), 0.05,
                 0.005});
  const P::Grid gk({16}, 2.0 * kPi);
  out.push_back({"KdV", [gk] { return std::make_shared<P::KdV>(gk, 1.5, 0.2); }, smooth1(16, 0.5), 0.05,
                 0.005});
  const P::Grid gs({32}, 8.0 * kPi);
  out.push_back({"KuramotoSivashinsky", [gs] { return std::make_shared<P::KuramotoSivashinsky>(gs, 1.0); },
                 smooth1(32), 0.05, 0.005});
  const Tensor forcing = smooth2(16, 16) * 0.1;
  out.push_back({"NavierStokes2D",
                 [g2, forcing] { return std::make_shared<P::NavierStokes2D>(g2, 0.01, forcing, 0.05); },
                 smooth2(16, 16), 0.05, 0.005});
  return out;
}

}  // namespace

// ---- CPU: device parameters and errors -----------------------------------------------------------

TEST_CASE("cuda pde: Grid's device parameters with Device::cpu() give the closed forms on the CPU") {
  const P::Grid g({4, 6}, std::vector<double>{2.0, 3.0});
  for (Dtype dt : {float32, float64}) {
    const Tensor x = g.coordinates(1, dt, kCpu);
    CHECK(x.device() == kCpu);
    CHECK(x.dtype() == dt);
    CHECK(x.shape() == Shape{1, 6});
    for (std::int64_t j = 0; j < 6; ++j) CHECK(x.select(1, j).item<double>() == doctest::Approx(0.5 * j).epsilon(1e-7));
    const auto m = g.mesh(dt, kCpu);
    REQUIRE(m.size() == 2);
    CHECK(m[0].shape() == Shape{4, 6});
    CHECK(m[0].select(0, 3).select(0, 5).item<double>() == doctest::Approx(1.5).epsilon(1e-7));
    CHECK(m[1].select(0, 3).select(0, 5).item<double>() == doctest::Approx(2.5).epsilon(1e-7));
    // axis 0: fftfreq order (0, 1, -2, -1) * 2 pi / 2; axis 1 (halved): (0, 1, 2, 3) * 2 pi / 3
    const Tensor k0 = g.wavenumbers(0, dt, kCpu), k1 = g.wavenumbers(-1, dt, kCpu);
    CHECK(k0.shape() == Shape{4, 1});
    CHECK(k1.shape() == Shape{1, 4});
    const double m0[] = {0, 1, -2, -1};
    for (std::int64_t j = 0; j < 4; ++j) {
      CHECK(k0.select(0, j).item<double>() == doctest::Approx(m0[j] * kPi).epsilon(1e-6));
      CHECK(k1.select(1, j).item<double>() == doctest::Approx(j * 2.0 * kPi / 3.0).epsilon(1e-6));
    }
    const Tensor lap = g.laplacian_symbol(dt, kCpu);
    CHECK(lap.shape() == Shape{4, 4});
    CHECK(lap.device() == kCpu);
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 4; ++j) {
        const double ka = m0[i] * kPi, kb = j * 2.0 * kPi / 3.0;
        CHECK(lap.select(0, i).select(0, j).item<double>() == doctest::Approx(-(ka * ka + kb * kb)).epsilon(1e-6));
      }
    const Tensor mask = g.dealias_mask(dt, kCpu);
    CHECK(mask.shape() == Shape{4, 4});
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 4; ++j) {
        const double want = (3 * std::abs(m0[i]) < 4 && 3 * j < 6) ? 1.0 : 0.0;
        CHECK(mask.select(0, i).select(0, j).item<double>() == want);
      }
    // explicit CPU equals the default
    CHECK(rel_diff(g.laplacian_symbol(dt, kCpu), g.laplacian_symbol(dt)) == 0.0);
    CHECK(rel_diff(g.dealias_mask(dt, kCpu), g.dealias_mask(dt)) == 0.0);
    CHECK(rel_diff(g.wavenumbers(0, dt, kCpu), g.wavenumbers(0, dt)) == 0.0);
  }
}

DEVICE_CASE("cuda pde: Grid's tensors on a device equal the host's bitwise and are the caller's own") {
  for (const P::Grid& g : {P::Grid({8}, 2.0), P::Grid({4, 6}, std::vector<double>{2.0, 3.0}),
                           P::Grid({3, 4, 5}, std::vector<double>{1.0, 2.0, 0.5})}) {
    CAPTURE(g.str());
    for (Dtype dt : {float32, float64}) {
      CAPTURE(dt);
      // every Grid method, on the host and on dev (device-built from small per-axis constants, Note [device
      // constants]); a caller scribbling on what it got changes nothing later calls return
      std::vector<std::pair<std::string, std::function<Tensor(Device)>>> calls = {
          {"laplacian_symbol", [&](Device d) { return g.laplacian_symbol(dt, d); }},
          {"dealias_mask", [&](Device d) { return g.dealias_mask(dt, d); }},
      };
      for (std::int64_t a = 0; a < g.ndim(); ++a) {
        calls.push_back({"coordinates", [&, a](Device d) { return g.coordinates(a, dt, d); }});
        calls.push_back({"wavenumbers", [&, a](Device d) { return g.wavenumbers(a, dt, d); }});
        calls.push_back({"mesh", [&, a](Device d) { return g.mesh(dt, d)[static_cast<std::size_t>(a)]; }});
      }
      for (const auto& [name, f] : calls) {
        CAPTURE(name);
        const Tensor host = f(kCpu);
        for (int k = 0; k < 2; ++k) {
          Tensor t = f(dev);
          CHECK(t.device() == dev);
          CHECK(t.dtype() == dt);
          CHECK(rel_diff(t, host) == 0.0);
          t.fill_(7.0);
        }
      }
      // -|k|^2 is +0 at k = 0, on both
      CHECK_FALSE(std::signbit(g.laplacian_symbol(dt, dev).reshape({-1}).select(0, 0).item<double>()));
      CHECK_FALSE(std::signbit(g.laplacian_symbol(dt).reshape({-1}).select(0, 0).item<double>()));
    }
  }
}

TEST_CASE("cuda pde: gaussian_random_field with Device::cpu() draws the default's numbers") {
  const P::Grid g({8, 8}, 1.0);
  Generator a(123), b(123);
  const Tensor u = P::gaussian_random_field(g, 2, 1.0, 3.0, 2.0, float64, &a, true);
  const Tensor v = P::gaussian_random_field(g, 2, 1.0, 3.0, 2.0, float64, &b, true, kCpu);
  CHECK(v.device() == kCpu);
  CHECK(v.shape() == Shape{2, 8, 8});
  CHECK(rel_diff(v, u) == 0.0);
}

TEST_CASE("cuda pde: a device that does not exist throws naming the op and the device") {
  const Device bad = missing_device();
  const P::Grid g({8}, 1.0);
  const std::string name = bad.str();
  CHECK_THROWS_WITH_AS(g.laplacian_symbol(float64, bad),
                       has("[pde::Grid::laplacian_symbol] device " + name + " does not exist"), Error);
  CHECK_THROWS_WITH_AS(g.dealias_mask(float32, bad), has("[pde::Grid::dealias_mask] device " + name),
                       Error);
  CHECK_THROWS_WITH_AS(g.wavenumbers(0, float64, bad), has("[pde::Grid::wavenumbers] device " + name),
                       Error);
  CHECK_THROWS_WITH_AS(g.coordinates(0, float64, bad), has("[pde::Grid::coordinates] device " + name),
                       Error);
  CHECK_THROWS_WITH_AS(g.mesh(float64, bad), has("[pde::Grid::mesh] device " + name), Error);
  CHECK_THROWS_WITH_AS(P::gaussian_random_field(g, 1, 1.0, 1.0, 1.0, float32, nullptr, true, bad),
                       has("[pde::gaussian_random_field] device " + name), Error);
  if (!cuda::is_built()) {
    // a CPU-only build names the device and says why
    CHECK_THROWS_WITH_AS(g.laplacian_symbol(float64, kDev),
                         doctest::Contains("device cuda:0 does not exist (CPU-only build)"), Error);
    CHECK_THROWS_WITH_AS(P::gaussian_random_field(g, 1, 1.0, 1.0, 1.0, float32, nullptr, true, kDev),
                         doctest::Contains("cuda:0"), Error);
  }
}

// ---- GPU agreement ------------------------------------------------------------------------------

DEVICE_CASE("cuda pde: Grid symbols on the GPU equal the CPU's") {
  const P::Grid g({6, 5, 4}, std::vector<double>{1.0, 2.0, 3.0});
  for (Dtype dt : {float32, float64}) {
    for (std::int64_t a = 0; a < 3; ++a) {
      const Tensor c = g.coordinates(a, dt, dev), w = g.wavenumbers(a, dt, dev);
      CHECK(c.device() == dev);
      CHECK(w.device() == dev);
      CHECK(rel_diff(c, g.coordinates(a, dt)) == 0.0);
      CHECK(rel_diff(w, g.wavenumbers(a, dt)) == 0.0);
    }
    const auto m = g.mesh(dt, dev), mc = g.mesh(dt);
    for (std::size_t i = 0; i < m.size(); ++i) {
      CHECK(m[i].device() == dev);
      CHECK(rel_diff(m[i], mc[i]) == 0.0);
    }
    CHECK(g.laplacian_symbol(dt, dev).device() == dev);
    CHECK(rel_diff(g.laplacian_symbol(dt, dev), g.laplacian_symbol(dt)) == 0.0);
    CHECK(rel_diff(g.dealias_mask(dt, dev), g.dealias_mask(dt)) == 0.0);
  }
}

DEVICE_CASE("cuda pde: spectral operators on the GPU agree with the CPU") {
  manual_seed(11);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == float64 ? 1e-12 : 2e-5;
    for (const P::Grid& g : {P::Grid({16}, 2.0), P::Grid({8, 6}, std::vector<double>{1.0, 2.5}),
                             P::Grid({5, 4, 6}, 1.5)}) {
      CAPTURE(g.str());
      Shape s{3};
      s.insert(s.end(), g.sizes().begin(), g.sizes().end());
      const Tensor u = randn(s, dt), ug = u.to(dev);
      const Tensor uh = P::to_spectral(g, u), uhg = P::to_spectral(g, ug);
      CHECK(uhg.device() == dev);
      CHECK(rel_diff(uhg, uh) < tol);
      CHECK(rel_diff(P::from_spectral(g, uhg), P::from_spectral(g, uh)) < tol);
      for (std::int64_t a = 0; a < g.ndim(); ++a)
        for (int order = 0; order <= 3; ++order) {
          const Tensor d = P::derivative(g, ug, a, order);
          CHECK(d.device() == dev);
          CHECK(rel_diff(d, P::derivative(g, u, a, order)) < tol);
        }
      const Tensor grad = P::gradient(g, ug);
      CHECK(rel_diff(grad, P::gradient(g, u)) < tol);
      CHECK(rel_diff(P::divergence(g, grad), P::divergence(g, P::gradient(g, u))) < tol);
      CHECK(rel_diff(P::laplacian(g, ug), P::laplacian(g, u)) < tol);
      CHECK(rel_diff(P::inverse_laplacian(g, ug), P::inverse_laplacian(g, u)) < tol);
      CHECK(rel_diff(P::dealias(g, uhg), P::dealias(g, uh)) < tol);
    }
  }
}

DEVICE_CASE("cuda pde: each equation's rollout with each stepper agrees with the CPU") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const auto eq = c.make();
    for (Stepper s : kAll) {
      CAPTURE(P::to_string(s));
      for (Dtype dt : {float64, float32}) {
        CAPTURE(dtype_name(dt));
        const double tol = dt == float64 ? 1e-10 : 1e-4;
        P::SolveOptions opt;
        opt.stepper = s;
        opt.save_every = 4;
        opt.check_every = 3;
        const Tensor u0 = c.u0.to(dt);
        const P::Solution cpu = P::solve(*eq, u0, c.t_end, c.dt, opt);
        const P::Solution gpu = P::solve(*eq, u0.to(dev), c.t_end, c.dt, opt);
        CHECK(gpu.u.device() == dev);
        CHECK(gpu.u.dtype() == dt);
        CHECK(gpu.steps == cpu.steps);
        CHECK(gpu.times == cpu.times);
        CHECK(rel_diff(gpu.u, cpu.u) < tol);
        CHECK(rel_diff(gpu.trajectory, cpu.trajectory) < tol);
        // the rollout really moved the state
        CHECK(rel_diff(cpu.u, u0) > 1e-4);
      }
    }
  }
}

DEVICE_CASE("cuda pde: step, Integrator (one copy per device), shortened last step, error estimate") {
  const P::Burgers eq(P::Grid({32}, 2.0 * kPi), 0.1);
  const Tensor u0 = smooth1(32);
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    for (Dtype dt : {complex128, complex64}) {
      const double tol = dt == complex128 ? 1e-10 : 1e-4;
      const Tensor uh = P::to_spectral(eq.grid(), u0).to(dt);
      CHECK(rel_diff(P::step(eq, uh.to(dev), 0.1, 0.01, s), P::step(eq, uh, 0.1, 0.01, s)) < tol);
      const P::Integrator integ(eq, 0.01, s);
      const Tensor a = integ.steps(uh, 0.0, 5), b = integ.steps(uh.to(dev), 0.0, 5);
      CHECK(b.device() == dev);
      CHECK(rel_diff(b, a) < tol);
      CHECK(rel_diff(integ.step(uh.to(dev), 0.0), integ.step(uh, 0.0)) < tol);
    }
    P::SolveOptions opt;
    opt.stepper = s;
    opt.error_estimate = true;
    const P::Solution cpu = P::solve(eq, u0, 0.047, 0.01, opt);
    const P::Solution gpu = P::solve(eq, u0.to(dev), 0.047, 0.01, opt);
    CHECK(gpu.steps == 5);
    CHECK(rel_diff(gpu.u, cpu.u) < 1e-10);
    CHECK(cpu.error_estimate > 0.0);
    CHECK(std::abs(gpu.error_estimate - cpu.error_estimate) <= 1e-12 + 1e-6 * cpu.error_estimate);
  }
}

DEVICE_CASE("cuda pde: gaussian_random_field on the GPU draws the CPU's field for a seed") {
  for (const P::Grid& g : {P::Grid({64}, 1.0), P::Grid({16, 12}, std::vector<double>{1.0, 2.0})}) {
    for (Dtype dt : {float64, float32}) {
      Generator a(5), b(5);
      const Tensor u = P::gaussian_random_field(g, 3, 2.0, 3.0, 2.5, dt, &a, true);
      const Tensor v = P::gaussian_random_field(g, 3, 2.0, 3.0, 2.5, dt, &b, true, dev);
      CHECK(v.device() == dev);
      CHECK(v.dtype() == dt);
      CHECK(rel_diff(v, u) < (dt == float64 ? 1e-12 : 1e-6));
    }
  }
  // the default generator, seeded
  const P::Grid g({32}, 1.0);
  manual_seed(9);
  const Tensor u = P::gaussian_random_field(g, 2, 1.0, 2.0, 2.0, float64, nullptr, false);
  manual_seed(9);
  const Tensor v = P::gaussian_random_field(g, 2, 1.0, 2.0, 2.0, float64, nullptr, false, dev);
  CHECK(rel_diff(v, u) < 1e-12);
  // darcy_coefficient thresholds on the GPU
  CHECK(rel_diff(P::darcy_coefficient(v), P::darcy_coefficient(u)) == 0.0);
}

DEVICE_CASE("cuda pde: gradients through a GPU rollout w.r.t. u0 and nu match the CPU") {
  const P::Grid g({16}, 2.0 * kPi);
  const Tensor u0c = smooth1(16, 0.5);
  const Tensor w = randn({16}, float64);  // a fixed readout
  for (Stepper s : kAll) {
    CAPTURE(P::to_string(s));
    for (bool checkpoint : {false, true}) {
      CAPTURE(checkpoint);
      P::SolveOptions opt;
      opt.stepper = s;
      opt.checkpoint = checkpoint;
      opt.checkpoint_every = 3;
      // CPU reference
      const Tensor u0 = u0c.clone().requires_grad_();
      const Tensor nu = scalar_tensor(0.2, float64).requires_grad_();
      const Tensor loss = (P::solve(P::Burgers(g, nu), u0, 0.1, 0.01, opt).u * w).sum();
      const auto ref = autodiff::grad({loss}, {u0, nu});
      // GPU state; nu on the CPU (moved inside the graph) and nu on the GPU
      for (bool nu_on_gpu : {false, true}) {
        CAPTURE(nu_on_gpu);
        const Tensor u0g = u0c.to(dev).requires_grad_();
        const Tensor nug = nu_on_gpu ? scalar_tensor(0.2, float64, dev).requires_grad_()
                                     : scalar_tensor(0.2, float64).requires_grad_();
        const P::Solution sol = P::solve(P::Burgers(g, nug), u0g, 0.1, 0.01, opt);
        CHECK(sol.u.device() == dev);
        const Tensor lg = (sol.u * w.to(dev)).sum();
        CHECK(lg.item<double>() == doctest::Approx(loss.item<double>()).epsilon(1e-10));
        const auto gg = autodiff::grad({lg}, {u0g, nug});
        CHECK(gg[0].device() == dev);
        CHECK(gg[1].device() == nug.device());
        CHECK(rel_diff(gg[0], ref[0]) < 1e-10);
        CHECK(rel_diff(gg[1], ref[1]) < 1e-10);
      }
    }
  }
}

DEVICE_CASE("cuda pde: parameters on the GPU, forcing on either device, and a CPU state") {
  const P::Grid g2({16, 16}, 2.0 * kPi);
  const Tensor w0 = smooth2(16, 16), f = smooth2(16, 16) * 0.1;
  const P::NavierStokes2D cpu_eq(g2, 0.01, f, 0.05);
  const P::NavierStokes2D gpu_eq(g2, 0.01, f.to(dev), 0.05);  // nu and drag join the forcing's device
  CHECK(gpu_eq.parameters()[0].device() == dev);
  CHECK(gpu_eq.linear().device() == dev);
  const Tensor ref = P::solve(cpu_eq, w0, 0.05, 0.005, Stepper::etdrk4);
  CHECK(rel_diff(P::solve(gpu_eq, w0.to(dev), 0.05, 0.005, Stepper::etdrk4), ref) < 1e-10);
  CHECK(rel_diff(P::solve(gpu_eq, w0, 0.05, 0.005, Stepper::etdrk4), ref) < 1e-10);  // equation on GPU, state CPU
  CHECK(rel_diff(P::solve(cpu_eq, w0.to(dev), 0.05, 0.005, Stepper::cn_rk3),
                 P::solve(cpu_eq, w0, 0.05, 0.005, Stepper::cn_rk3)) < 1e-10);
  // KdV with alpha/beta on the GPU
  const P::Grid g({16}, 2.0 * kPi);
  const P::KdV kc(g, scalar_tensor(1.5, float64), scalar_tensor(0.2, float64));
  const P::KdV kg(g, scalar_tensor(1.5, float64, dev), scalar_tensor(0.2, float64, dev));
  const Tensor u0 = smooth1(16, 0.5);
  CHECK(rel_diff(P::solve(kg, u0.to(dev), 0.05, 0.005), P::solve(kc, u0, 0.05, 0.005)) < 1e-10);
  CHECK(rel_diff(P::solve(kc, u0.to(dev), 0.05, 0.005), P::solve(kc, u0, 0.05, 0.005)) < 1e-10);
}

namespace {
// A user equation whose nonlinear term is (wrongly) always on the CPU.
struct CpuOnlyN : P::Equation {
  P::Grid g{std::vector<std::int64_t>{8}, 1.0};
  const P::Grid& grid() const override { return g; }
  Tensor linear() const override { return g.laplacian_symbol(float64) * 0.1; }
  Tensor nonlinear(const Tensor& u_hat, double) const override { return zeros(u_hat.shape(), u_hat.dtype()); }
  std::string name() const override { return "CpuOnlyN"; }
};
}  // namespace

DEVICE_CASE("cuda pde: errors for mixed devices and the CPU-only Darcy solver") {
  const P::Grid g1({8}, 1.0), g2({8, 8}, 1.0);
  CHECK_THROWS_WITH_AS(P::KdV(g1, scalar_tensor(1.0, float64, dev), scalar_tensor(1.0, float64)),
                       doctest::Contains(
                           ("[pde::KdV] parameters must live on one device, got alpha on " + dev.str() + " and beta on cpu").c_str()),
                       Error);
  CHECK_THROWS_WITH_AS(P::AdvectionDiffusion(g1, from_vector(std::vector<double>{1.0}),
                                             scalar_tensor(0.1, float64, dev)),
                       doctest::Contains(("velocity on cpu and nu on " + dev.str()).c_str()), Error);
  CHECK_THROWS_WITH_AS(P::NavierStokes2D(g2, scalar_tensor(0.1, float64), zeros({8, 8}, float64, dev),
                                         scalar_tensor(0.0, float64)),
                       doctest::Contains("[pde::NavierStokes2D] parameters must live on one device"), Error);
  const CpuOnlyN eq;
  CHECK_THROWS_WITH_AS(P::solve(eq, zeros({8}, float64, dev), 0.1, 0.01),
                       doctest::Contains(("CpuOnlyN.nonlinear() returned a tensor on cpu for a state on " + dev.str()).c_str()), Error);
  const Tensor a = ones({5, 5}, float64, dev);
  if (dev.is_cuda()) {  // the Darcy solver is CPU-only
    CHECK_THROWS_WITH_AS(P::darcy_solve(a), doctest::Contains(("[pde::darcy_solve] no CUDA kernel yet (tensor on " + dev.str() + ")").c_str()),
                         Error);
  } else {  // the CPU solver on a virtual CPU device: the solution stays there
    CHECK(P::darcy_solve(a).device() == dev);
  }
  CHECK_THROWS_WITH_AS(P::darcy_solve(ones({5, 5}, float64), ones({5, 5}, float64, dev)),
                       doctest::Contains("[pde::darcy_solve]"), Error);
  // the inputs are unchanged and the CPU path works
  CHECK(rel_diff(a, ones({5, 5}, float64)) == 0.0);
  CHECK(P::darcy_solve(a.to(kCpu)).device() == kCpu);
}
