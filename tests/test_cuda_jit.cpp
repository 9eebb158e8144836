// tests/test_cuda_jit.cpp - static graphs (phasor/jit.hpp) traced and replayed on a device agree with the CPU.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

using namespace phasor;
using cuda_test::rel_diff;
using V = std::vector<Tensor>;

DEVICE_CASE("cuda jit: a graph traced on the device replays there, values and gradients as on the CPU") {
  manual_seed(5);
  nn::FNO cpu_model(nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(8).modes({4}).n_layers(2)
                        .projection_channels(8).dtype(float64));
  nn::FNO dev_model(nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(8).modes({4}).n_layers(2)
                        .projection_channels(8).dtype(float64));
  dev_model.load_state_dict(cpu_model.state_dict());
  dev_model.to(dev);
  // a straight-through custom function: replayed with its own backward on the device too
  auto ste = [](const Tensor& x) {
    return autodiff::custom_function(
        "ste", [](autodiff::FunctionCtx&, const V& in) { return V{in[0].round()}; },
        [](autodiff::FunctionCtx&, const V& g) { return V{g[0] * 2.0}; }, {x})[0];
  };
  auto fn = [&](nn::FNO& m) {
    return [&m, ste](const V& in) { return V{m.forward(in[0]) + ste(in[0]) * 0.5}; };
  };
  const Tensor x0 = randn({2, 1, 16}, float64).requires_grad_();
  const jit::Graph gc = jit::trace(fn(cpu_model), {x0});
  const jit::Graph gd = jit::trace(fn(dev_model), {x0.detach().to(dev).requires_grad_()});
  CHECK(gd.input_specs()[0].device == dev);
  CHECK(gd.num_steps() == gc.num_steps());
  const Tensor x = randn({2, 1, 16}, float64);
  Tensor xc = x.clone().requires_grad_(), xd = x.to(dev).requires_grad_();
  const Tensor yc = gc({xc})[0], yd = gd({xd})[0];
  CHECK(yd.device() == dev);
  CHECK(rel_diff(yd, yc) <= 1e-12);
  (yc * yc).sum().backward();
  (yd * yd).sum().backward();
  CHECK(xd.grad().device() == dev);
  CHECK(rel_diff(xd.grad(), xc.grad()) <= 1e-12);
  // random draws replay on the device, from the generator as eager draws there
  const jit::Graph gr = jit::trace([](const V& in) { return V{in[0] + randn(in[0].shape(), float64, in[0].device())}; },
                                   {zeros({5}, float64, dev)});
  manual_seed(8);
  const Tensor r = gr({zeros({5}, float64, dev)})[0];
  manual_seed(8);
  const Tensor e = randn({5}, float64, dev);
  CHECK(r.device() == dev);
  CHECK(rel_diff(r, e) == 0);
}
