// bench/bench_rnn.cpp - a 2-layer LSTM (L = 100, N = 32, H_in = H = 128, float32), 2 threads: forward alone (no
// grad) and forward + backward (gradients of every parameter and the input for a given output gradient).
// bench/rnn_torch.py times torch.nn.LSTM on the same shapes and prints ratios. Real (wall) time; inputs are made
// before the timed loop.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <phasor/phasor.hpp>

namespace {

using phasor::Tensor;

/// Threads: $PHASOR_BENCH_THREADS, default 2.
const int kThreads = [] {
  const char* e = std::getenv("PHASOR_BENCH_THREADS");
  return e ? std::atoi(e) : 2;
}();

constexpr std::int64_t kL = 100, kN = 32, kH = 128;

void BM_LSTMFwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  phasor::nn::LSTM lstm(phasor::nn::LSTMOptions(kH, kH).num_layers(2));
  const Tensor x = phasor::randn({kL, kN, kH});
  phasor::NoGradGuard ng;
  for (auto _ : st) benchmark::DoNotOptimize(lstm.forward(x, {}));
}
BENCHMARK(BM_LSTMFwd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LSTMFwdBwd(benchmark::State& st) {
  phasor::set_num_threads(kThreads);
  phasor::manual_seed(0);
  phasor::nn::LSTM lstm(phasor::nn::LSTMOptions(kH, kH).num_layers(2));
  const Tensor x = phasor::randn({kL, kN, kH}).requires_grad_();
  const Tensor g = phasor::randn({kL, kN, kH});
  std::vector<Tensor> wrt = lstm.parameters();
  wrt.push_back(x);
  for (auto _ : st) {
    auto grads = phasor::autodiff::grad({lstm.forward(x)}, wrt, {g});
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_LSTMFwdBwd)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
