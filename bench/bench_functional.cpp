// bench/bench_functional.cpp - the functional transforms of phasor/autodiff/functional.hpp on a small tanh network
// f(x) = W2 tanh(W1 x + b1), R^64 -> R^64 with width 128, float32, and on the Rosenbrock function in R^32 (float64):
// jacobian (reverse mode: 64 backward passes; forward mode: 64 products), jvp, vjp, hessian and hvp.
// bench/functional_torch.py times torch.autograd.functional on the same functions and prints ratios. Real (wall)
// time, 2 threads by default ($PHASOR_BENCH_THREADS); inputs are made before the timed loop.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#include <phasor/phasor.hpp>

namespace {

using phasor::Tensor;
namespace ad = phasor::autodiff;

/// Threads: $PHASOR_BENCH_THREADS, default 2.
const int kThreads = [] {
  const char* e = std::getenv("PHASOR_BENCH_THREADS");
  return e ? std::atoi(e) : 2;
}();

constexpr std::int64_t kIn = 64, kWidth = 128, kRosen = 32;

/// The network's weights, seeded.
struct Net {
  Tensor W1, b1, W2;
  Net() {
    phasor::manual_seed(0);
    W1 = phasor::randn({kWidth, kIn}) * 0.1;
    b1 = phasor::randn({kWidth}) * 0.1;
    W2 = phasor::randn({kIn, kWidth}) * 0.1;
  }
  Tensor operator()(const Tensor& x) const { return W2.matmul((W1.matmul(x) + b1).tanh()); }
};

/// sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2.
Tensor rosenbrock(const Tensor& x) {
  const Tensor a = x.slice(0, 0, kRosen - 1), b = x.slice(0, 1, kRosen);
  return ((b - a * a).square() * 100.0 + (1.0 - a).square()).sum();
}

void BM_JacobianRev(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  const Net f;
  const Tensor x = phasor::randn({kIn});
  for (auto _ : st) benchmark::DoNotOptimize(ad::jacobian(f, x));
}
BENCHMARK(BM_JacobianRev)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_JacobianFwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  const Net f;
  const Tensor x = phasor::randn({kIn});
  for (auto _ : st) benchmark::DoNotOptimize(ad::jacobian(f, x, false, false, ad::JacobianStrategy::forward_mode));
}
BENCHMARK(BM_JacobianFwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Vjp(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  const Net f;
  const Tensor x = phasor::randn({kIn}), v = phasor::randn({kIn});
  for (auto _ : st) benchmark::DoNotOptimize(ad::vjp(f, x, v));
}
BENCHMARK(BM_Vjp)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_Jvp(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  const Net f;
  const Tensor x = phasor::randn({kIn}), v = phasor::randn({kIn});
  for (auto _ : st) benchmark::DoNotOptimize(ad::jvp(f, x, v));
}
BENCHMARK(BM_Jvp)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_HessianRosenbrock(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(1);
  const Tensor x = phasor::randn({kRosen}, phasor::float64);
  for (auto _ : st) benchmark::DoNotOptimize(ad::hessian(rosenbrock, x));
}
BENCHMARK(BM_HessianRosenbrock)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HvpRosenbrock(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(1);
  const Tensor x = phasor::randn({kRosen}, phasor::float64), v = phasor::randn({kRosen}, phasor::float64);
  for (auto _ : st) benchmark::DoNotOptimize(ad::hvp(rosenbrock, x, v));
}
BENCHMARK(BM_HvpRosenbrock)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
