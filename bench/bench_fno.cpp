// bench/bench_fno.cpp - FNO training step (forward, relative L2 loss, backward, Adam step) in
// float32 on 2 threads: FNO-1D (batch 20, n 1024, width 64, modes 16, 4 layers, 1 -> 1 channels)
// and FNO-2D (batch 20, 64x64, 3 -> 1 channels, width 32, modes 12, 4 layers). Both with the
// positional grid channels, one-linear lifting, projection width 128 (the original FNO scripts'
// models, see bench/README.md "FNO"). bench/fno_torch.py builds the same models in PyTorch and
// runs this program once per config (fresh process) for the side-by-side table.
// BM_FNO2d_large_step is the issue #6 GPU model (batch 32, 256^2, width 64, modes 32) on the CPU, for
// its allocator peak (seconds per step here).
// Counters: median_step_ms is the median of the per-step wall times (what fno_torch.py reports for
// PyTorch too), median_cpu_ms the median process CPU time per step (all threads; spinning at
// OpenMP barriers counts); peak_rss_mb is the process's ru_maxrss after the run; alloc_peak_gib the
// allocator's peak of live tensor bytes over the warm-up and timed steps (memory_stats: what
// bench_cuda's peak_gib reads on a GPU). PHASOR_BENCH_DEVICE (default cpu) runs the models on another
// device, e.g. cuda:0 of the CUDA emulation build, whose allocator peak is the GPU path's.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <ctime>
#include <vector>

#include <phasor/phasor.hpp>

namespace ph = phasor;

namespace {

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

void run_fno(benchmark::State& state, ph::nn::FNOOptions opt, ph::Shape xshape, ph::Shape yshape) {
  const char* env = std::getenv("PHASOR_BENCH_THREADS");  // profiling aid; the figures use 2
  ph::set_num_threads(env ? std::atoi(env) : 2);
  const char* dev_env = std::getenv("PHASOR_BENCH_DEVICE");
  const ph::Device dev = dev_env ? ph::Device::parse(dev_env) : ph::Device::cpu();
  ph::manual_seed(0);
  ph::nn::FNO model(opt);
  model.to(dev);
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(1e-3));
  ph::Tensor x = ph::randn(xshape, ph::float32, dev), y = ph::randn(yshape, ph::float32, dev);
  ph::reset_peak_memory_stats(dev);
  auto step = [&] {
    adam.zero_grad();
    ph::Tensor loss = ph::nn::functional::relative_lp_loss(model.forward(x), y);
    loss.backward();
    adam.step();
    return loss;
  };
  for (int i = 0; i < 2; ++i) step();  // warm up plans, allocator caches, Adam state
  std::vector<double> times, cpu;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();  // process CPU time, all threads
    benchmark::DoNotOptimize(step());
    if (dev.is_cuda()) ph::cuda::synchronize(dev.index);
    cpu.push_back(1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  state.counters["median_step_ms"] = times.empty() ? 0.0 : times[times.size() / 2];
  state.counters["median_cpu_ms"] = cpu.empty() ? 0.0 : cpu[cpu.size() / 2];
  state.counters["params"] = static_cast<double>(model.num_parameters());
  state.counters["peak_rss_mb"] = peak_rss_mb();
  state.counters["alloc_peak_gib"] = static_cast<double>(ph::memory_stats(dev).peak_bytes) / (1 << 30);
}

void BM_FNO1d_step(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4)
              .projection_channels(128),
          {20, 1, 1024}, {20, 1, 1024});
}
BENCHMARK(BM_FNO1d_step)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FNO2d_step(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(32).modes({12, 12}).n_layers(4)
              .projection_channels(128),
          {20, 3, 64, 64}, {20, 1, 64, 64});
}
BENCHMARK(BM_FNO2d_step)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FNO2d_large_step(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(64).modes({32, 32}).n_layers(4)
              .projection_channels(128),
          {32, 3, 256, 256}, {32, 1, 256, 256});
}
BENCHMARK(BM_FNO2d_large_step)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
