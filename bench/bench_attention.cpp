// bench/bench_attention.cpp - scaled_dot_product_attention (batch 8, 8 heads, L = S = 256, E = 64, float32) and a
// MultiheadAttention self-attention layer (L = 256, N = 8, E = 512, 8 heads), 2 threads: forward alone and
// forward + backward. bench/attention_torch.py times the same shapes with PyTorch and prints ratios.
// Every benchmark reports real (wall) time; inputs are made before the timed loop.
#include <benchmark/benchmark.h>

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
  Tensor x = phasor::randn(s);
  if (grad) x.requires_grad_();
  return x;
}

void BM_SDPAFwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  Tensor q = input({8, 8, 256, 64}, false), k = input({8, 8, 256, 64}, false), v = input({8, 8, 256, 64}, false);
  for (auto _ : st) benchmark::DoNotOptimize(F::scaled_dot_product_attention(q, k, v));
}
BENCHMARK(BM_SDPAFwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SDPAFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  Tensor q = input({8, 8, 256, 64}, true), k = input({8, 8, 256, 64}, true), v = input({8, 8, 256, 64}, true);
  Tensor g = phasor::randn({8, 8, 256, 64});
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({F::scaled_dot_product_attention(q, k, v)}, {q, k, v}, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_SDPAFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_SDPACausalFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  Tensor q = input({8, 8, 256, 64}, true), k = input({8, 8, 256, 64}, true), v = input({8, 8, 256, 64}, true);
  Tensor g = phasor::randn({8, 8, 256, 64});
  for (auto _ : st) {
    auto grads =
        phasor::autodiff::grad({F::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true)}, {q, k, v}, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_SDPACausalFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_MHAFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  phasor::nn::MultiheadAttention m(512, 8);
  Tensor x = input({256, 8, 512}, true), g = phasor::randn({256, 8, 512});
  auto params = m.parameters();
  params.push_back(x);
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({m.forward(x, x, x, Tensor(), false).output}, params, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_MHAFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
