// bench/bench_jit.cpp - static graphs (phasor/jit.hpp) against eager execution, side by side in one run.
//
// BM_Mlp/width:{16,64}/replay:{0,1}: forward of a small MLP (batch width/4, 4 layers Linear(width, width) + gelu;
//   16 primitive ops) in float32 on one thread, eager and replayed: small tensors, where the host's per-op work
//   (argument checks, shape arithmetic, dispatch) is a large part of the time. Counter: steps (ops per call).
// BM_FNO1d_train/{eager,forward_graph,step_graph}: the FNO-1D training step (batch 20, n 1024, width 64,
//   modes 16, 4 layers; relative L2 loss, Adam) in float32 on 2 threads: eager; the forward replayed from a graph
//   (backward and Adam eager); the whole loss and gradient computation replayed (autodiff::grad traced into the
//   graph, the gradients handed to Adam). Counters: median_step_ms, steps.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <phasor/phasor.hpp>

namespace ph = phasor;
using V = std::vector<ph::Tensor>;

namespace {

struct Mlp {
  std::vector<ph::Tensor> w, b;
  explicit Mlp(std::int64_t width) {
    for (int i = 0; i < 4; ++i) {
      w.push_back(ph::randn({width, width}) * 0.1);
      b.push_back(ph::zeros({width}));
    }
  }
  ph::Tensor operator()(ph::Tensor x) const {
    for (std::size_t i = 0; i < w.size(); ++i) x = ph::gelu(ph::nn::functional::linear(x, w[i], b[i]));
    return x;
  }
};

void BM_Mlp(benchmark::State& state) {
  const std::int64_t width = state.range(0);
  const bool replay = state.range(1) == 1;
  ph::set_num_threads(1);
  ph::manual_seed(0);
  Mlp net(width);
  const ph::Tensor x = ph::randn({width / 4, width});
  ph::NoGradGuard ng;
  const ph::jit::Graph g = ph::jit::trace([&](const V& in) { return V{net(in[0])}; }, {x});
  for (int i = 0; i < 10; ++i) benchmark::DoNotOptimize(replay ? g({x})[0] : net(x));
  for (auto _ : state) benchmark::DoNotOptimize(replay ? g({x})[0] : net(x));
  state.counters["steps"] = static_cast<double>(g.num_steps());
  state.SetLabel(replay ? "replay" : "eager");
}
BENCHMARK(BM_Mlp)->ArgNames({"width", "replay"})->ArgsProduct({{16, 64}, {0, 1}})->UseRealTime();

void BM_FNO1d_train(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));  // 0 eager, 1 forward graph, 2 step graph
  ph::set_num_threads(2);
  ph::manual_seed(0);
  ph::nn::FNO model(ph::nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4)
                        .projection_channels(128));
  const V params = model.parameters();
  ph::optim::Adam adam(params, ph::optim::AdamOptions(1e-3));
  const ph::Tensor x = ph::randn({20, 1, 1024}), y = ph::randn({20, 1, 1024});
  const ph::jit::Graph forward = ph::jit::trace([&](const ph::Tensor& in) { return model.forward(in); }, x);
  const ph::jit::Graph grads = ph::jit::trace(
      [&](const V& in) {
        const ph::Tensor loss = ph::nn::functional::relative_lp_loss(model.forward(in[0]), in[1]);
        V out = ph::autodiff::grad({loss}, params);
        out.push_back(loss.detach());
        return out;
      },
      {x, y});
  auto step = [&] {
    adam.zero_grad();
    if (mode == 2) {
      const V g = grads({x, y});
      for (std::size_t i = 0; i < params.size(); ++i) {
        ph::Tensor p = params[i];
        p.set_grad(g[i]);
      }
      adam.step();
      return g.back();
    }
    ph::Tensor loss = ph::nn::functional::relative_lp_loss(mode == 1 ? forward({x})[0] : model.forward(x), y);
    loss.backward();
    adam.step();
    return loss;
  };
  for (int i = 0; i < 2; ++i) step();
  std::vector<double> times;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(step());
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  state.counters["median_step_ms"] = times.empty() ? 0.0 : times[times.size() / 2];
  state.counters["steps"] = static_cast<double>(mode == 2 ? grads.num_steps() : forward.num_steps());
  state.SetLabel(mode == 0 ? "eager" : mode == 1 ? "forward_graph" : "step_graph");
}
BENCHMARK(BM_FNO1d_train)->ArgName("mode")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
