// CPU-vs-GPU agreement of the nn layer on CUDA tensors: convolutions (src/cuda/conv.cu + cuBLAS),
// unfold/fold, spectral_mix and SpectralConv, the fused optimizer updates (src/cuda/optim.cu),
// gradient clipping, normalization, and one FNO training step. Every case needs a GPU: without one
// doctest reports them as skipped. (The shared update formulas of src/nn/optim/update_rules.hpp
// run on the CPU in every build: test_optim.cpp checks them against closed forms.)
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <memory>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using cuda_test::kGpu;
using cuda_test::sample;
namespace F = phasor::nn::functional;

namespace {

/// Relative to max |b| itself (no floor of 1): these cases compare values of any magnitude.
double rel_diff(const Tensor& a, const Tensor& b) { return cuda_test::rel_diff(a, b, 1e-30); }

double tol(Dtype dt) { return dt == Dtype::Float32 || dt == Dtype::Complex64 ? 2e-5 : 1e-11; }

/// A CPU leaf and its copy on `dev` (both requiring grad).
struct Pair {
  Tensor cpu, gpu;
};
Pair leaf_pair(const Device& dev, const Shape& s, Dtype dt) {
  const Tensor v = sample(s, dt);
  Pair p{v.clone(), v.to(dev)};
  p.cpu.requires_grad_();
  p.gpu.requires_grad_();
  return p;
}

/// yg (on the device) agrees with yc (the CPU's) within t; then both run backward from one random gradient
/// and the gradients of `leaves` agree within t too.
void agree_with_grads(const Tensor& yc, const Tensor& yg, const std::vector<const Pair*>& leaves, double t) {
  CHECK(rel_diff(yg, yc) <= t);
  const Tensor go = sample(yc.shape(), yc.dtype());
  yc.backward(go);
  yg.backward(go.to(yg.device()));
  for (const Pair* p : leaves) CHECK(rel_diff(p->gpu.grad(), p->cpu.grad()) <= t);
}

}  // namespace

DEVICE_CASE("cuda nn: conv1d/2d/3d forward and gradients agree with the CPU") {
  manual_seed(11);
  struct Case {
    int nd;
    std::int64_t C, O, k, stride, pad, dil, groups;
    bool bias;
  };
  const std::vector<Case> cases = {
      {1, 4, 6, 1, 1, 0, 1, 1, true},   // pointwise (ChannelLinear's path)
      {1, 4, 6, 3, 1, 1, 1, 1, true},   {1, 4, 6, 3, 2, 2, 2, 2, false}, {1, 6, 6, 5, 3, 0, 1, 3, true},
      {2, 4, 6, 1, 1, 0, 1, 2, true},   {2, 3, 4, 3, 1, 1, 1, 1, true},  {2, 4, 4, 3, 2, 1, 2, 2, false},
      {2, 4, 8, 2, 2, 0, 1, 4, true},   {3, 2, 4, 3, 1, 1, 1, 1, true},  {3, 4, 4, 2, 2, 1, 2, 2, false},
      {1, 4, 6, 11, 1, 0, 1, 1, false},  // one output position: the weight gradient without per-sample partials
  };
  for (Dtype dt : {float32, float64, complex64}) {
    for (const Case& c : cases) {
      CAPTURE(dt);
      CAPTURE(c.nd);
      CAPTURE(c.k);
      CAPTURE(c.stride);
      CAPTURE(c.pad);
      CAPTURE(c.dil);
      CAPTURE(c.groups);
      Shape xs{3, c.C}, ws{c.O, c.C / c.groups};
      for (int d = 0; d < c.nd; ++d) {
        xs.push_back(c.nd == 3 ? 7 : 11 - d);
        ws.push_back(c.k);
      }
      Pair x = leaf_pair(dev, xs, dt), w = leaf_pair(dev, ws, dt), b = leaf_pair(dev, {c.O}, dt);
      auto run = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
        const Tensor bias = c.bias ? bb : Tensor();
        if (c.nd == 1) return F::conv1d(xx, ww, bias, c.stride, c.pad, c.dil, c.groups);
        if (c.nd == 2) return F::conv2d(xx, ww, bias, c.stride, c.pad, c.dil, c.groups);
        return F::conv3d(xx, ww, bias, c.stride, c.pad, c.dil, c.groups);
      };
      const Tensor yc = run(x.cpu, w.cpu, b.cpu), yg = run(x.gpu, w.gpu, b.gpu);
      CHECK(yg.device() == dev);
      agree_with_grads(yc, yg, c.bias ? std::vector<const Pair*>{&x, &w, &b} : std::vector<const Pair*>{&x, &w}, tol(dt));
    }
  }
}

DEVICE_CASE("cuda nn: conv 'same' padding, unbatched input and double backward agree") {
  manual_seed(12);
  Pair x = leaf_pair(dev, {3, 9, 8}, float64), w = leaf_pair(dev, {5, 3, 3, 2}, float64);
  const Tensor yc = F::conv2d(x.cpu, w.cpu, Tensor(), 1, nn::Padding("same"), {2, 1});
  const Tensor yg = F::conv2d(x.gpu, w.gpu, Tensor(), 1, nn::Padding("same"), {2, 1});
  CHECK(rel_diff(yg, yc) <= 1e-11);
  // grad of a grad: the three conv primitives are each other's gradients on the device too
  const Tensor gc = autodiff::grad({yc.square().sum()}, {x.cpu}, {}, std::nullopt, true)[0];
  const Tensor gg = autodiff::grad({yg.square().sum()}, {x.gpu}, {}, std::nullopt, true)[0];
  CHECK(rel_diff(gg, gc) <= 1e-11);
  gc.square().sum().backward();
  gg.square().sum().backward();
  CHECK(rel_diff(w.gpu.grad(), w.cpu.grad()) <= 1e-11);
}

DEVICE_CASE("cuda nn: unfold and fold agree with the CPU") {
  manual_seed(13);
  for (Dtype dt : {float32, complex128}) {
    CAPTURE(dt);
    Pair x = leaf_pair(dev, {2, 3, 9, 10}, dt);
    const Tensor uc = F::unfold(x.cpu, {3, 2}, {1, 2}, {1, 0}, {2, 1});
    const Tensor ug = F::unfold(x.gpu, {3, 2}, {1, 2}, {1, 0}, {2, 1});
    CHECK(rel_diff(ug, uc) <= tol(dt));
    const Tensor fc = F::fold(uc, {9, 10}, {3, 2}, {1, 2}, {1, 0}, {2, 1});
    const Tensor fg = F::fold(ug, {9, 10}, {3, 2}, {1, 2}, {1, 0}, {2, 1});
    CHECK(rel_diff(fg, fc) <= tol(dt));
    const Tensor go = sample(fc.shape(), dt);
    fc.backward(go);
    fg.backward(go.to(dev));
    CHECK(rel_diff(x.gpu.grad(), x.cpu.grad()) <= tol(dt));
  }
}

DEVICE_CASE("cuda nn: conv errors name mixed devices") {
  const Tensor x = randn({2, 3, 8}).to(dev), w = randn({4, 3, 3});
  CHECK_THROWS_WITH_AS(F::conv1d(x, w), doctest::Contains(("[conv1d] expected weight on the input's device " + dev.str()).c_str()),
                       Error);
  CHECK_THROWS_WITH_AS(F::conv1d(x, w.to(dev), randn({4})), doctest::Contains("expected bias on the input's device"),
                       Error);
  if (dev.is_cuda()) {  // the CUDA im2col takes up to 3 spatial dims
    const Tensor x4 = randn({1, 2, 3, 3, 3, 3}).to(dev);
    CHECK_THROWS_WITH_AS(F::unfold_nd(x4, {2, 2, 2, 2}), doctest::Contains("CUDA convolutions take 1 to 3 spatial dims"),
                         Error);
  }
  // spectral_mix and clip_grad_norm_ name mixed devices
  const Tensor a = complex(randn({2, 3, 4}), randn({2, 3, 4})), b = complex(randn({3, 2, 4}), randn({3, 2, 4}));
  CHECK_THROWS_WITH_AS(F::spectral_mix(a.to(dev), b), doctest::Contains("[spectral_mix] expected x and w on one device"),
                       Error);
  Tensor p0 = zeros({3}).requires_grad_(), p1 = zeros({3}, float32, dev).requires_grad_();
  p0.set_grad(ones({3}));
  p1.set_grad(ones({3}, float32, dev));
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({p0, p1}, 1.0),
                       doctest::Contains("[clip_grad_norm_] expected all gradients on one device"), Error);
  CHECK(p0.grad().sum().item<double>() == 3);  // inputs unchanged
}

DEVICE_CASE("cuda nn: spectral_mix and its gradients agree with the CPU") {
  manual_seed(14);
  for (Dtype dt : {complex64, complex128}) {
    CAPTURE(dt);
    using View = Tensor (*)(const Tensor&);
    // spectral_mix(vx(x), vw(w)) and its gradients into x and w on the device against the CPU's
    auto agree = [&](const Shape& xs, const Shape& ws, View vx, View vw) {
      Pair x = leaf_pair(dev, xs, dt), w = leaf_pair(dev, ws, dt);
      agree_with_grads(F::spectral_mix(vx(x.cpu), vw(w.cpu)), F::spectral_mix(vx(x.gpu), vw(w.gpu)), {&x, &w}, tol(dt));
    };
    // a strided operand (a narrowed spectrum) as SpectralConv produces
    agree({5, 4, 6, 7}, {4, 3, 6, 7}, [](const Tensor& t) { return t.narrow(3, 1, 5); },
          [](const Tensor& t) { return t.narrow(3, 0, 5); });
    // several register tiles (Note [cuda conv kernels]: 8 batches x 16 output channels x 32 modes per block)
    // with partial ones along every axis: B 19, O 37, K 75; x transposed (strides over its first two dims)
    agree({5, 19, 3, 25}, {5, 37, 3, 25}, [](const Tensor& t) { return t.transpose(0, 1); },
          [](const Tensor& t) { return t; });
  }
  {
    // grads of grads: the gradients are spectral_mix with conjugation flags on transposed operands, whose
    // own gradients flip the flags again; every flag combination runs on the device
    Pair x = leaf_pair(dev, {3, 4, 5}, complex128), w = leaf_pair(dev, {4, 2, 5}, complex128);
    auto second = [](const Tensor& xx, const Tensor& ww) {
      const Tensor y = F::spectral_mix(xx, ww);
      const auto g = autodiff::grad({(y * y.conj()).real().sum()}, {xx, ww}, {}, std::nullopt, true);
      (g[0] * g[0].conj() + (g[1].sum() * g[1].conj().sum()) * 0.5).real().sum().backward();
    };
    second(x.cpu, w.cpu);
    second(x.gpu, w.gpu);
    CHECK(rel_diff(x.gpu.grad(), x.cpu.grad()) <= 1e-11);
    CHECK(rel_diff(w.gpu.grad(), w.cpu.grad()) <= 1e-11);
  }
  // against a naive long double loop on one mode
  const Tensor x = sample({2, 3, 4}, complex128), w = sample({3, 2, 4}, complex128);
  const Tensor y = F::spectral_mix(x.to(dev), w.to(dev)).to(Device::cpu());
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t o = 0; o < 2; ++o) {
      std::complex<long double> acc = 0;
      for (std::int64_t i = 0; i < 3; ++i) {
        const auto xv = x.select(0, b).select(0, i).select(0, 2).item<std::complex<double>>();
        const auto wv = w.select(0, i).select(0, o).select(0, 2).item<std::complex<double>>();
        acc += std::complex<long double>(xv.real(), xv.imag()) * std::complex<long double>(wv.real(), wv.imag());
      }
      const auto yv = y.select(0, b).select(0, o).select(0, 2).item<std::complex<double>>();
      CHECK(std::abs(std::complex<long double>(yv.real(), yv.imag()) - acc) <= 1e-13L);
    }
}

DEVICE_CASE("cuda nn: SpectralConv 1-D and 2-D forward and backward agree with the CPU") {
  // the truncated-DFT product path (modes <= 48 on the last dim) and the rfftn path (modes 50)
  const std::vector<std::pair<std::vector<std::int64_t>, Shape>> cases = {
      {{6}, {16}}, {{5, 4}, {16, 14}}, {{40}, {96}}, {{50}, {128}}, {{4, 50}, {12, 128}}};
  for (const auto& [modes, grid] : cases) {
    CAPTURE(modes.size());
    CAPTURE(modes.back());
    manual_seed(15);
    nn::SpectralConv mc(nn::SpectralConvOptions(3, 4, modes).bias(true));
    manual_seed(15);
    nn::SpectralConv mg(nn::SpectralConvOptions(3, 4, modes).bias(true));
    mg.weight.set_grad(ones(mg.weight.shape(), mg.weight.dtype()));
    mg.to(dev);
    REQUIRE(mg.weight.grad().defined());
    CHECK(mg.weight.grad().device() == dev);  // Module::to moves accumulated gradients too
    mg.weight.set_grad(Tensor());
    Shape xs{2, 3};
    xs.insert(xs.end(), grid.begin(), grid.end());
    Pair x = leaf_pair(dev, xs, float32);
    const Tensor yc = mc.forward(x.cpu), yg = mg.forward(x.gpu);
    CHECK(yg.device() == dev);
    agree_with_grads(yc, yg, {&x}, 2e-5);
    const auto pc = mc.named_parameters(), pg = mg.named_parameters();
    REQUIRE(pc.size() == pg.size());
    for (std::size_t i = 0; i < pc.size(); ++i) {
      CAPTURE(pc[i].first);
      CHECK(rel_diff(pg[i].second.grad(), pc[i].second.grad()) <= 2e-5);
    }
  }
}

DEVICE_CASE("cuda nn: SGD, Adam and AdamW steps agree with the CPU over several steps") {
  manual_seed(16);
  using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
  std::vector<std::pair<std::string, Make>> makers = {
      {"sgd", [](std::vector<Tensor> p) { return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.1)); }},
      {"sgd wd momentum dampening",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(
             p, optim::SGDOptions(0.05).momentum(0.9).dampening(0.2).weight_decay(0.01));
       }},
      {"sgd nesterov maximize",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05).momentum(0.8).nesterov(true).maximize(true));
       }},
      {"adam", [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2)); }},
      {"adam l2 amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2).weight_decay(0.1).amsgrad(true));
       }},
      {"adam betas maximize",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(
             p, optim::AdamOptions(1e-2).betas({0.3, 0.99}).eps(1e-6).maximize(true));
       }},
      {"adamw", [](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-2)); }},
      {"adamw amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-2).weight_decay(0.2).amsgrad(true));
       }},
      // the step count on the GPU, the bias corrections made by the kernel (the CPU side keeps its count)
      {"adam capturable",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2).betas({0.5, 0.9}).capturable(true));
       }},
      {"adamw amsgrad capturable",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-2).amsgrad(true).capturable(true));
       }},
  };
  for (Dtype dt : {float32, float64, complex64}) {
    for (const auto& [name, make] : makers) {
      CAPTURE(name);
      CAPTURE(dt);
      const Tensor a0 = sample({33, 7}, dt), b0 = sample({5}, dt);
      std::vector<Tensor> pc{a0.clone().requires_grad_(), b0.clone().requires_grad_()};
      std::vector<Tensor> pg{a0.to(dev).requires_grad_(), b0.to(dev).requires_grad_()};
      auto oc = make(pc), og = make(pg);
      for (int step = 0; step < 4; ++step) {
        for (std::size_t i = 0; i < pc.size(); ++i) {
          const Tensor g = sample(pc[i].shape(), dt);
          pc[i].set_grad(g);
          pg[i].set_grad(g.to(dev));
        }
        oc->step();
        og->step();
        for (std::size_t i = 0; i < pc.size(); ++i) {
          CHECK(pg[i].device() == dev);
          CHECK(rel_diff(pg[i].detach(), pc[i].detach()) <= tol(dt));
        }
      }
      // the optimizer state lives on the parameter's device (param_groups.*: host-side bookkeeping)
      for (const auto& kv : og->state_dict())
        if (kv.first.rfind("state.", 0) == 0 && kv.second.dim() > 0) CHECK(kv.second.device() == dev);
      if (name.find("capturable") != std::string::npos) {  // its count lives with the parameter: 4 steps
        CHECK(og->state(pg[0]).at("step").device() == (dev.is_cuda() ? dev : Device::cpu()));
        CHECK(og->state(pg[0]).at("step").item<double>() == 4);
        CHECK(oc->state(pc[0]).at("step").device() == Device::cpu());
      }
    }
  }
}

DEVICE_CASE("cuda nn: capturable Adam counts the steps of every parameter, empty ones included, on its device") {
  manual_seed(17);
  std::vector<Tensor> ps{sample({4, 3}, float32).to(dev).requires_grad_(), zeros({0, 3}, float32, dev).requires_grad_()};
  optim::Adam adam(ps, optim::AdamOptions(1e-2).capturable(true));
  for (int k = 0; k < 3; ++k) {
    for (Tensor& p : ps) p.set_grad(ones_like(p));
    adam.step();
  }
  for (const Tensor& p : ps) {
    CHECK(adam.state(p).at("step").device() == (dev.is_cuda() ? dev : Device::cpu()));
    CHECK(adam.state(p).at("step").item<double>() == 3);
  }
}

// A step updates a group's CUDA parameters together: one launch per device, real type and 24 parameters
// (Note [multi-tensor launch] in src/cuda/optim.cu).
DEVICE_CASE("cuda nn: one step updates many parameters of mixed dtypes together and agrees with the CPU") {
  manual_seed(18);
  // 40 parameters: 10 float64 and 30 float32 or complex64 (one real type: more than one launch's 24), an
  // empty one (7), a non-contiguous one (11), and one with a gradient every other step only (5: its own
  // step count)
  std::vector<Tensor> init;
  for (int i = 0; i < 40; ++i) {
    const Dtype dt = i % 4 == 0 ? float64 : (i % 2 == 1 ? float32 : complex64);
    init.push_back(sample({i == 7 ? 0 : 1 + (i * 37) % 300, 1 + i % 4}, dt));
  }
  using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
  const std::vector<std::pair<std::string, Make>> makers = {
      {"sgd momentum nesterov",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01));
       }},
      {"adam l2 amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2).weight_decay(0.1).amsgrad(true));
       }},
      {"adamw", [](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-2)); }},
  };
  for (const auto& [name, make] : makers) {
    CAPTURE(name);
    std::vector<Tensor> pc, pg;
    for (std::size_t i = 0; i < init.size(); ++i) {
      if (i == 11) {  // a transposed (non-contiguous) leaf on both sides
        pc.push_back(init[i].t().contiguous().t().requires_grad_());
        pg.push_back(init[i].t().contiguous().to(dev).t().requires_grad_());
        REQUIRE_FALSE(pg.back().is_contiguous());
      } else {
        pc.push_back(init[i].clone().requires_grad_());
        pg.push_back(init[i].to(dev).requires_grad_());
      }
    }
    auto oc = make(pc), og = make(pg);
    for (int step = 0; step < 4; ++step) {
      CAPTURE(step);
      for (std::size_t i = 0; i < pc.size(); ++i) {
        const Tensor g = (i == 5 && step % 2 == 1) ? Tensor() : sample(pc[i].shape(), pc[i].dtype());
        pc[i].set_grad(g);
        pg[i].set_grad(g.defined() ? g.to(dev) : g);
      }
      oc->step();
      const long launches = cuda_test::emu_count(dev, cuda_test::EmuCounter::Launches, [&] { og->step(); });
      // once the state exists: 2 launches for the 29 non-empty float32/complex64 parameters, 1 for the 10
      // float64 ones, and the gather and scatter of the non-contiguous parameter
      if (step > 0 && launches != -1) CHECK(launches == 2 + 1 + 2);
      for (std::size_t i = 0; i < pc.size(); ++i) {
        CAPTURE(i);
        CHECK(pg[i].device() == dev);
        CHECK(rel_diff(pg[i].detach(), pc[i].detach()) <= tol(pc[i].dtype()));
      }
    }
  }
}

DEVICE_CASE("cuda nn: Adam state loaded from a state dict moved to the GPU keeps stepping") {
  // a checkpoint moved to the device whole: the step counter comes back as a CUDA tensor, which Adam
  // reads and bumps on the host, so loading keeps it on the CPU
  manual_seed(17);
  const Tensor a0 = sample({6, 3}, float64);
  std::vector<Tensor> pc{a0.clone().requires_grad_()}, pg{a0.to(dev).requires_grad_()};
  optim::Adam oc(pc, optim::AdamOptions(1e-2)), og(pg, optim::AdamOptions(1e-2));
  const Tensor g = sample({6, 3}, float64);
  pc[0].set_grad(g);
  pg[0].set_grad(g.to(dev));
  oc.step();
  og.step();
  StateDict sd = og.state_dict();
  for (auto& kv : sd)
    if (kv.second.defined()) kv.second = kv.second.to(dev);
  optim::Adam og2(pg, optim::AdamOptions(1e-2));
  og2.load_state_dict(sd);
  oc.step();
  og2.step();
  CHECK(rel_diff(pg[0].detach(), pc[0].detach()) <= 1e-12);
  CHECK(og2.state_dict().at("state.0.step").device() == Device::cpu());
  CHECK(og2.state_dict().at("state.0.step").item<double>() == 2.0);
}

DEVICE_CASE("cuda nn: a gradient on another device than its parameter is named") {
  std::vector<Tensor> p{randn({3}).to(dev).requires_grad_()};
  optim::Adam adam(p, optim::AdamOptions(0.1));
  p[0].set_grad(ones({3}));
  const Tensor before = p[0].detach().to(Device::cpu());
  CHECK_THROWS_WITH_AS(adam.step(), doctest::Contains(("[optim.Adam] gradient on cpu but its parameter on " + dev.str()).c_str()),
                       Error);
  CHECK(rel_diff(p[0].detach(), before) == 0);
}

DEVICE_CASE("cuda nn: clip_grad_norm_ and clip_grad_value_ on CUDA gradients") {
  manual_seed(17);
  for (Dtype dt : {float32, complex128}) {
    for (double p : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
      CAPTURE(dt);
      CAPTURE(p);
      const Tensor g0 = sample({20, 3}, dt), g1 = sample({7}, dt);
      std::vector<Tensor> pc{zeros({20, 3}, dt).requires_grad_(), zeros({7}, dt).requires_grad_()};
      std::vector<Tensor> pg{zeros({20, 3}, dt, dev).requires_grad_(), zeros({7}, dt, dev).requires_grad_()};
      pc[0].set_grad(g0.clone());
      pc[1].set_grad(g1.clone());
      pg[0].set_grad(g0.to(dev));
      pg[1].set_grad(g1.to(dev));
      const Tensor nc = optim::clip_grad_norm_(pc, 0.5, p);
      Tensor ng;
      const long waits =
          cuda_test::emu_count(dev, cuda_test::EmuCounter::HostWaits, [&] { ng = optim::clip_grad_norm_(pg, 0.5, p); });
      CHECK((waits == 0 || waits == -1));  // the total and the coefficient stay on the GPU
      CHECK(ng.device() == dev);
      CHECK(rel_diff(ng, nc) <= tol(dt));
      CHECK(rel_diff(pg[0].grad(), pc[0].grad()) <= tol(dt));
      CHECK(rel_diff(pg[1].grad(), pc[1].grad()) <= tol(dt));
    }
    // a total below max_norm leaves the gradients exact; a non-finite one throws only when asked to
    {
      std::vector<Tensor> pg{zeros({5}, dt, dev).requires_grad_()};
      const Tensor g5 = sample({5}, dt);
      pg[0].set_grad(g5.to(dev));
      CHECK(rel_diff(optim::clip_grad_norm_(pg, 1e6), g5.abs().pow(2).sum().sqrt().to(to_real(dt))) <= tol(dt));
      CHECK(rel_diff(pg[0].grad(), g5) == 0);
      pg[0].set_grad(full({5}, std::numeric_limits<double>::infinity(), dt, dev));
      CHECK_THROWS_WITH_AS(optim::clip_grad_norm_(pg, 1.0, 2.0, true),
                           doctest::Contains("[clip_grad_norm_] the total norm of order 2 for gradients from `parameters` "
                                             "is inf (non-finite)"),
                           Error);
      CHECK(std::isinf(optim::clip_grad_norm_(pg, 1.0).item<double>()));
    }
    const Tensor g = sample({40}, dt);
    Tensor qc = zeros({40}, dt).requires_grad_(), qg = zeros({40}, dt, dev).requires_grad_();
    qc.set_grad(g.clone());
    qg.set_grad(g.to(dev));
    optim::clip_grad_value_(qc, 0.3);
    optim::clip_grad_value_(qg, 0.3);
    CHECK(rel_diff(qg.grad(), qc.grad()) == 0);
  }
}

DEVICE_CASE("cuda nn: losses with class-index targets and h1_loss agree with the CPU") {
  manual_seed(20);
  // what the losses build on the host: nll_loss / cross_entropy's targets and masks, h1_loss's weights
  Pair x = leaf_pair(dev, {4, 5, 3}, float64);
  const Tensor t = from_vector<std::int64_t>({0, 4, 2, -100, 1, 3, 3, 0, 2, 4, 1, 0}, Shape{4, 3});
  const Tensor w = sample({5}, float64).abs() + 0.5;
  const Tensor lc = F::cross_entropy(x.cpu, t, w, -100, nn::Reduction::mean, 0.1) + F::nll_loss(x.cpu, t);
  const Tensor tg = t.to(dev), wg = w.to(dev);
  Tensor lg;
  const long waits = cuda_test::emu_count(dev, cuda_test::EmuCounter::HostWaits, [&] {
    lg = F::cross_entropy(x.gpu, tg, wg, -100, nn::Reduction::mean, 0.1) + F::nll_loss(x.gpu, tg);
  });
  CHECK((waits == 2 || waits == -1));  // one bool per loss (a target out of range?); the targets stay on the GPU
  CHECK(lg.device() == dev);
  CHECK(rel_diff(lg, lc) <= 1e-12);
  lc.backward();
  const long back_waits = cuda_test::emu_count(dev, cuda_test::EmuCounter::HostWaits, [&] { lg.backward(); });
  CHECK((back_waits == 0 || back_waits == -1));  // the gathers' gradients trust their indices too
  CHECK(rel_diff(x.gpu.grad(), x.cpu.grad()) <= 1e-12);
  Pair u = leaf_pair(dev, {2, 1, 12, 10}, float64);
  const Tensor v = sample({2, 1, 12, 10}, float64);
  const Tensor hc = F::h1_loss(u.cpu, v, 2), hg = F::h1_loss(u.gpu, v.to(dev), 2);
  CHECK(rel_diff(hg, hc) <= 1e-12);
  hc.backward();
  hg.backward();
  CHECK(rel_diff(u.gpu.grad(), u.cpu.grad()) <= 1e-12);
}

DEVICE_CASE("cuda nn: layer, group and batch norm agree with the CPU") {
  manual_seed(18);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    Pair x = leaf_pair(dev, {4, 6, 5, 3}, dt), w = leaf_pair(dev, {6}, dt), b = leaf_pair(dev, {6}, dt);
    Pair lw = leaf_pair(dev, {5, 3}, dt);
    using Fn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&)>;
    const std::vector<std::pair<std::string, Fn>> fns = {
        {"layer_norm", [](const Tensor& xx, const Tensor&, const Tensor&, const Tensor& l) {
           return F::layer_norm(xx, {5, 3}, l);
         }},
        {"group_norm", [](const Tensor& xx, const Tensor& ww, const Tensor& bb, const Tensor&) {
           return F::group_norm(xx, 3, ww, bb);
         }},
        {"batch_norm", [](const Tensor& xx, const Tensor& ww, const Tensor& bb, const Tensor&) {
           return F::batch_norm(xx, Tensor(), Tensor(), ww, bb, true);
         }},
        {"instance_norm", [](const Tensor& xx, const Tensor& ww, const Tensor& bb, const Tensor&) {
           return F::instance_norm(xx, Tensor(), Tensor(), ww, bb, true);
         }},
    };
    for (const auto& [name, f] : fns) {
      CAPTURE(name);
      for (Pair* p : {&x, &w, &b, &lw}) {
        p->cpu.set_grad(Tensor());
        p->gpu.set_grad(Tensor());
      }
      const Tensor yc = f(x.cpu, w.cpu, b.cpu, lw.cpu), yg = f(x.gpu, w.gpu, b.gpu, lw.gpu);
      agree_with_grads(yc, yg, name == "layer_norm" ? std::vector<const Pair*>{&x, &lw} : std::vector<const Pair*>{&x, &w, &b},
                       10 * tol(dt));
    }
    // running statistics follow the batch on the device
    const Tensor rm0 = sample({6}, dt), rv0 = sample({6}, dt).abs();
    Tensor rmc = rm0.clone(), rvc = rv0.clone(), rmg = rm0.to(dev), rvg = rv0.to(dev);
    NoGradGuard ng;
    F::batch_norm(x.cpu, rmc, rvc, Tensor(), Tensor(), true);
    F::batch_norm(x.gpu, rmg, rvg, Tensor(), Tensor(), true);
    CHECK(rel_diff(rmg, rmc) <= 10 * tol(dt));
    CHECK(rel_diff(rvg, rvc) <= 10 * tol(dt));
    CHECK(rel_diff(F::batch_norm(x.gpu, rmg, rvg), F::batch_norm(x.cpu, rmc, rvc)) <= 10 * tol(dt));
  }
  // a float64 weight and bias with a float32 input: the output keeps the input's dtype on both devices
  const Tensor x32 = sample({4, 6, 5}, float32), w64 = sample({6}, float64), b64 = sample({6}, float64);
  const Tensor yc = F::group_norm(x32, 2, w64, b64), yg = F::group_norm(x32.to(dev), 2, w64.to(dev), b64.to(dev));
  CHECK(yc.dtype() == float32);
  CHECK(yg.dtype() == float32);
  CHECK(rel_diff(yg, yc) <= 10 * tol(float32));
  CHECK(F::layer_norm(x32.to(dev), {5}, sample({5}, float64).to(dev)).dtype() == float32);
  // weight, bias and running statistics on another device than the input are named, both ways
  const Tensor xd = x32.to(dev), wc = w64.to(float32);
  CHECK_THROWS_WITH_AS(F::group_norm(xd, 2, wc), doctest::Contains("[group_norm] weight is on cpu but the input is on"),
                       Error);
  CHECK_THROWS_WITH_AS(F::group_norm(x32, 2, Tensor(), wc.to(dev)), doctest::Contains("bias is on"), Error);
  CHECK_THROWS_WITH_AS(F::layer_norm(xd, {5}, ones({5})), doctest::Contains("[layer_norm] weight is on cpu"), Error);
  Tensor rm = zeros({6}), rv = ones({6});
  CHECK_THROWS_WITH_AS(F::batch_norm(xd, rm, rv, Tensor(), Tensor(), true), doctest::Contains("running_mean is on cpu"),
                       Error);
  CHECK(rm.abs().sum().item<double>() == 0);  // unchanged
}

DEVICE_CASE("cuda nn: an FNO training step on CUDA matches the CPU") {
  for (const auto& modes : std::vector<std::vector<std::int64_t>>{{8}, {6, 5}}) {
    CAPTURE(modes.size());
    const auto opts = nn::FNOOptions().in_channels(2).out_channels(1).hidden_channels(16).modes(modes).n_layers(3);
    manual_seed(19);
    nn::FNO mc(opts);
    manual_seed(19);
    nn::FNO mg(opts);
    mg.to(dev);
    Shape xs{4, 2};
    for (std::size_t d = 0; d < modes.size(); ++d) xs.push_back(modes.size() == 1 ? 64 : 20);
    const Tensor x = sample(xs, float32);
    Shape ys = xs;
    ys[1] = 1;
    const Tensor target = sample(ys, float32);
    // eps 1e-3: a gradient component at rounding level would otherwise take a full +-lr step whose
    // sign is rounding noise (Adam normalizes every component)
    optim::Adam oc(mc.parameters(), optim::AdamOptions(1e-3).eps(1e-3));
    optim::Adam og(mg.parameters(), optim::AdamOptions(1e-3).eps(1e-3));
    const Tensor yc = mc.forward(x), yg = mg.forward(x.to(dev));
    CHECK(yg.device() == dev);
    CHECK(rel_diff(yg, yc) <= 2e-5);
    const Tensor lc = (yc - target).square().mean(), lg = (yg - target.to(dev)).square().mean();
    CHECK(rel_diff(lg, lc) <= 2e-5);
    lc.backward();
    lg.backward();
    const auto pc = mc.named_parameters(), pg = mg.named_parameters();
    REQUIRE(pc.size() == pg.size());
    for (std::size_t i = 0; i < pc.size(); ++i) {
      CAPTURE(pc[i].first);
      CHECK(pg[i].second.device() == dev);
      CHECK(rel_diff(pg[i].second.grad(), pc[i].second.grad()) <= 2e-5);
    }
    oc.step();
    og.step();
    for (std::size_t i = 0; i < pc.size(); ++i) {
      CAPTURE(pc[i].first);
      CHECK(rel_diff(pg[i].second.detach(), pc[i].second.detach()) <= 2e-5);
    }
  }
}
