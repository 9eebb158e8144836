// bench/bench_pde.cpp - time per step of the pseudo-spectral solvers against their FFT floor.
//
//   BM_Burgers1d_etdrk4   viscous Burgers (nu = 0.01), 8192 points, ETDRK4, dt = 1e-4, float64
//   BM_NS2d_etdrk4        2-D Navier-Stokes in vorticity form (nu = 1e-3, Kolmogorov-type forcing
//                         0.1 (sin 2pi(x+y) + cos 2pi(x+y))), 256^2, ETDRK4, dt = 1e-3, float64
// Each runs 1000 steps per iteration through pde::Integrator (coefficients built once) and reports
// the time per step. The matching *_fft_floor benchmark runs, in the same binary, exactly the
// transforms one step performs - recorded by an OpObserver during one step (op name and input
// shape of every fft_r2c / fft_c2r / fft_c2c call), then replayed on tensors of those shapes - so
// `ratio = step / floor` says how much of a step is spent outside the FFTs (issue #5: at most 2x).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <phasor/phasor.hpp>

namespace ph = phasor;
using ph::Tensor;

namespace {

constexpr std::int64_t kSteps = 1000;
constexpr double kPi = 3.14159265358979323846;

struct Problem {
  std::unique_ptr<ph::pde::Equation> eq;
  Tensor u_hat;  // initial half spectrum
  double dt;
};

Problem burgers() {
  ph::pde::Grid g({8192});
  ph::manual_seed(0);
  Tensor u0 = ph::pde::gaussian_random_field(g, 1, 25.0, 5.0, 2.0, ph::float64);
  return {std::make_unique<ph::pde::Burgers>(g, 0.01), ph::pde::to_spectral(g, u0), 1e-4};
}

Problem navier_stokes() {
  ph::pde::Grid g({256, 256});
  auto xy = g.mesh(ph::float64);
  Tensor s = (xy[0] + xy[1]) * (2 * kPi);
  Tensor forcing = (s.sin() + s.cos()) * 0.1;
  ph::manual_seed(0);
  // the FNO paper's vorticity initial condition: N(0, 7^(3/2) (-Laplacian + 49 I)^(-2.5))
  Tensor w0 = ph::pde::gaussian_random_field(g, 1, std::pow(7.0, 0.75), 7.0, 2.5, ph::float64);
  return {std::make_unique<ph::pde::NavierStokes2D>(g, 1e-3, forcing), ph::pde::to_spectral(g, w0), 1e-3};
}

/// Records the FFT primitive calls of one step.
struct FftRecorder : ph::OpObserver {
  std::vector<std::pair<std::string, Tensor>> calls;  // op name, an input-shaped tensor
  void on_begin(const ph::OpEvent& e) override {
    const std::string name = e.name;
    if (e.primitive && (name == "fft_r2c" || name == "fft_c2r" || name == "fft_c2c") && e.inputs && !e.inputs->empty())
      calls.emplace_back(name, (*e.inputs)[0].detach().clone());
  }
};

void run_steps(benchmark::State& state, Problem p) {
  ph::set_num_threads(1);
  ph::NoGradGuard ng;
  ph::pde::Integrator integ(*p.eq, p.dt, ph::pde::Stepper::etdrk4);
  Tensor u = integ.step(p.u_hat, 0.0);  // warm up plans and caches
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    Tensor v = integ.steps(p.u_hat, 0.0, kSteps);
    benchmark::DoNotOptimize(v.data_ptr());
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["us_per_step"] = 1e6 * secs / static_cast<double>(state.iterations() * kSteps);
}

void run_floor(benchmark::State& state, Problem p) {
  ph::set_num_threads(1);
  ph::NoGradGuard ng;
  ph::pde::Integrator integ(*p.eq, p.dt, ph::pde::Stepper::etdrk4);
  auto rec = std::make_shared<FftRecorder>();
  ph::add_op_observer(rec);
  integ.step(p.u_hat, 0.0);
  ph::remove_op_observer(rec);
  const std::int64_t d = p.eq->grid().ndim();
  ph::Shape dims;
  for (std::int64_t i = 0; i < d; ++i) dims.push_back(i - d);
  const std::int64_t n_last = p.eq->grid().sizes().back();
  auto replay = [&] {
    for (const auto& [name, x] : rec->calls) {
      Tensor y = name == "fft_r2c"   ? ph::fft::rfftn(x, std::nullopt, dims)
                 : name == "fft_c2r" ? ph::fft::irfftn(x, std::nullopt, dims).narrow(-1, 0, n_last)
                                     : ph::fft::fftn(x, std::nullopt, dims);
      benchmark::DoNotOptimize(y.data_ptr());
    }
  };
  replay();  // plans
  double secs = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t s = 0; s < kSteps; ++s) replay();
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["ffts_per_step"] = static_cast<double>(rec->calls.size());
  state.counters["us_per_step"] = 1e6 * secs / static_cast<double>(state.iterations() * kSteps);
}

void BM_Burgers1d_etdrk4(benchmark::State& state) { run_steps(state, burgers()); }
void BM_Burgers1d_fft_floor(benchmark::State& state) { run_floor(state, burgers()); }
void BM_NS2d_etdrk4(benchmark::State& state) { run_steps(state, navier_stokes()); }
void BM_NS2d_fft_floor(benchmark::State& state) { run_floor(state, navier_stokes()); }

BENCHMARK(BM_Burgers1d_etdrk4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Burgers1d_fft_floor)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NS2d_etdrk4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NS2d_fft_floor)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
