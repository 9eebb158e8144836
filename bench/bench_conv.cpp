// bench/bench_conv.cpp - convolution layers: conv2d 3x3 (8, 32, 64, 64) 32->32 and a 1x1 conv1d
// (20, 64, 1024) 64->64, float32, forward alone and forward + sum + backward (grads of x, w, b); and the
// U-Net layers: a 2x2 stride-2 conv_transpose2d (8, 32, 32, 32) 32->16, max_pool2d 2x2 and avg_pool2d 3x3
// (stride 1, padding 1) of (8, 32, 64, 64), adaptive_avg_pool2d of it to 7x7, and its bilinear 2x upsampling
// (interpolate to 128x128, align_corners=false).
// Argument: threads. Wall time, and CPU time of the whole process (all threads).
// bench/conv_torch.py runs the same shapes with PyTorch.
//   ./build/bench/bench_conv --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <functional>
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

/// A layer of one input (and a weight for the transposed convolution): forward, or forward + sum + backward into x.
void run_layer(benchmark::State& state, const Shape& xs, bool backward, const std::function<Tensor(const Tensor&)>& f) {
  set_num_threads(static_cast<int>(state.range(0)));
  manual_seed(0);
  Tensor x = randn(xs);
  if (backward) x.requires_grad_();
  for (auto _ : state) {
    if (backward) {
      f(x).sum().backward();
      benchmark::DoNotOptimize(x.grad().data_ptr());
      x.set_grad(Tensor());
    } else {
      Tensor y = f(x);
      benchmark::DoNotOptimize(y.data_ptr());
    }
  }
}

const Shape kPoolX{8, 32, 64, 64};
const Tensor& up_weight() {
  static const Tensor w = [] {
    manual_seed(1);
    return randn({32, 16, 2, 2}) * 0.1;
  }();
  return w;
}
Tensor up(const Tensor& x) { return F::conv_transpose2d(x, up_weight(), Tensor(), 2); }
Tensor maxp(const Tensor& x) { return F::max_pool2d(x, 2); }
Tensor avgp(const Tensor& x) { return F::avg_pool2d(x, 3, 1, 1); }
Tensor adap(const Tensor& x) { return F::adaptive_avg_pool2d(x, 7); }
Tensor bilin2x(const Tensor& x) { return F::interpolate(x, std::nullopt, std::vector<double>{2}, "bilinear", false); }

void BM_conv_transpose2d_2x2_fwd(benchmark::State& s) { run_layer(s, {8, 32, 32, 32}, false, up); }
void BM_conv_transpose2d_2x2_fwd_bwd(benchmark::State& s) { run_layer(s, {8, 32, 32, 32}, true, up); }
void BM_max_pool2d_2x2_fwd(benchmark::State& s) { run_layer(s, kPoolX, false, maxp); }
void BM_max_pool2d_2x2_fwd_bwd(benchmark::State& s) { run_layer(s, kPoolX, true, maxp); }
void BM_avg_pool2d_3x3_fwd(benchmark::State& s) { run_layer(s, kPoolX, false, avgp); }
void BM_avg_pool2d_3x3_fwd_bwd(benchmark::State& s) { run_layer(s, kPoolX, true, avgp); }
void BM_adaptive_avg_pool2d_7_fwd(benchmark::State& s) { run_layer(s, kPoolX, false, adap); }
void BM_adaptive_avg_pool2d_7_fwd_bwd(benchmark::State& s) { run_layer(s, kPoolX, true, adap); }
void BM_interpolate_bilinear_2x_fwd(benchmark::State& s) { run_layer(s, kPoolX, false, bilin2x); }
void BM_interpolate_bilinear_2x_fwd_bwd(benchmark::State& s) { run_layer(s, kPoolX, true, bilin2x); }

}  // namespace

BENCHMARK(BM_conv2d_3x3_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv2d_3x3_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv1d_1x1_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv1d_1x1_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv_transpose2d_2x2_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_conv_transpose2d_2x2_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_max_pool2d_2x2_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_max_pool2d_2x2_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_avg_pool2d_3x3_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_avg_pool2d_3x3_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_adaptive_avg_pool2d_7_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_adaptive_avg_pool2d_7_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_interpolate_bilinear_2x_fwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_interpolate_bilinear_2x_fwd_bwd)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
