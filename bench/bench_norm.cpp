// bench/bench_norm.cpp - normalization layers and losses, float32, 2 threads: forward alone and
// forward + backward. bench/norm_torch.py times the same shapes with PyTorch and prints ratios.
// Every benchmark reports real (wall) time; inputs are made before the timed loop.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#include <phasor/phasor.hpp>

namespace {

using phasor::Shape;
using phasor::Tensor;
namespace F = phasor::nn::functional;

/// Threads: $PHASOR_BENCH_THREADS, default 2.
const int kThreads = [] {
  const char* e = std::getenv("PHASOR_BENCH_THREADS");
  return e ? std::atoi(e) : 2;
}();

Tensor input(const Shape& s, bool grad) {
  phasor::manual_seed(0);
  Tensor x = phasor::randn(s);
  if (grad) x.requires_grad_();
  return x;
}

void BM_LayerNormFwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  Tensor x = input({4096, 1024}, false), w = phasor::ones({1024}), b = phasor::zeros({1024});
  for (auto _ : st) benchmark::DoNotOptimize(F::layer_norm(x, {1024}, w, b));
}
BENCHMARK(BM_LayerNormFwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LayerNormFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  Tensor x = input({4096, 1024}, true), w = phasor::ones({1024}).requires_grad_(),
         b = phasor::zeros({1024}).requires_grad_();
  Tensor g = phasor::randn({4096, 1024});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({F::layer_norm(x, {1024}, w, b)}, {x, w, b}, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_LayerNormFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_BatchNorm2dFwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::nn::BatchNorm2d bn(64);
  Tensor x = input({32, 64, 32, 32}, false);
  phasor::NoGradGuard ng;
  for (auto _ : st) benchmark::DoNotOptimize(bn.forward(x));
}
BENCHMARK(BM_BatchNorm2dFwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_BatchNorm2dFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::nn::BatchNorm2d bn(64);
  Tensor x = input({32, 64, 32, 32}, true);
  Tensor g = phasor::randn({32, 64, 32, 32});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({bn.forward(x)}, {x, bn.weight, bn.bias}, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_BatchNorm2dFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_GroupNormFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::nn::GroupNorm gn(8, 64);
  Tensor x = input({32, 64, 32, 32}, true);
  Tensor g = phasor::randn({32, 64, 32, 32});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({gn.forward(x)}, {x, gn.weight, gn.bias}, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_GroupNormFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_RelativeL2FwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  Tensor p = input({20, 1, 1024}, true), t = phasor::randn({20, 1, 1024});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({F::relative_lp_loss(p, t)}, {p});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_RelativeL2FwdBwd)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CrossEntropyFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  Tensor x = input({1024, 100}, true);
  Tensor t = phasor::randint(0, 100, {1024});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({F::cross_entropy(x, t)}, {x});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_CrossEntropyFwdBwd)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
