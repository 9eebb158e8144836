// bench/bench_conv.cpp - convolution layers: conv2d 3x3 (8, 32, 64, 64) 32->32 and a 1x1 conv1d
// (20, 64, 1024) 64->64, float32, forward alone and forward + sum + backward (grads of x, w, b).
// Argument: threads. Wall time, and CPU time of the whole process (all threads).
// bench/conv_torch.py runs the same shapes with PyTorch.
//   ./build/bench/bench_conv --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <phasor/phasor.hpp>

using namespace phasor;
namespace F = phasor::nn::functional;

namespace {

struct ConvCase {
  Shape x, w;
  std::int64_t padding;
};

const ConvCase kConv2d{{8, 32, 64, 64}, {32, 32, 3, 3}, 1};
const ConvCase kConv1x1{{20, 64, 1024}, {64, 64, 1}, 0};

Tensor conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return c.w.size() == 4 ? F::conv2d(x, w, b, 1, c.padding) : F::conv1d(x, w, b, 1, c.padding);
}

void run(benchmark::State& state, const ConvCase& c, bool backward) {
  set_num_threads(static_cast<int>(state.range(0)));
  manual_seed(0);
  Tensor x = randn(c.x), w = randn(c.w) * 0.1, b = randn({c.w[0]});
  if (backward) {
    x.requires_grad_();
    w.requires_grad_();
    b.requires_grad_();
  }
  for (auto _ : state) {
    if (backward) {
      conv(c, x, w, b).sum().backward();
      benchmark::DoNotOptimize(w.grad().data_ptr());
      x.set_grad(Tensor());
      w.set_grad(Tensor());
      b.set_grad(Tensor());
    } else {
      Tensor y = conv(c, x, w, b);
      benchmark::DoNotOptimize(y.data_ptr());
    }
  }
}

void BM_conv2d_3x3_fwd(benchmark::State& s) { run(s, kConv2d, false); }
void BM_conv2d_3x3_fwd_bwd(benchmark::State& s) { run(s, kConv2d, true); }
void BM_conv1d_1x1_fwd(benchmark::State& s) { run(s, kConv1x1, false); }
void BM_conv1d_1x1_fwd_bwd(benchmark::State& s) { run(s, kConv1x1, true); }

}  // namespace

BENCHMARK(BM_conv2d_3x3_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv2d_3x3_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv1d_1x1_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv1d_1x1_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
