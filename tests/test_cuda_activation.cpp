// tests/test_cuda_activation.cpp - the activations of phasor/nn/activation.hpp on a device agree with the CPU:
// values over a grid with the kinks, +-inf and NaN (the devices run one definition, nn/activation_rules.hpp),
// int64 inputs, first and second derivatives, prelu's weight gradient, training rrelu's slopes from a generator,
// and the modules. DEVICE_CASEs: on cuda:0 with a GPU, on the virtual CPU device everywhere.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

using V = std::vector<Tensor>;
using Fn = std::function<Tensor(const V&)>;

double tol(Dtype dt) { return dt == float32 ? 2e-6 : 1e-13; }

/// Every function of one tensor, by its op name.
std::vector<std::pair<std::string, Fn>> unary_ops() {
  return {
      {"elu", [](const V& a) { return F::elu(a[0], 1.5); }},
      {"selu", [](const V& a) { return F::selu(a[0]); }},
      {"celu", [](const V& a) { return F::celu(a[0], 0.7); }},
      {"leaky_relu", [](const V& a) { return F::leaky_relu(a[0], 0.2); }},
      {"rrelu", [](const V& a) { return F::rrelu(a[0]); }},
      {"hardtanh", [](const V& a) { return F::hardtanh(a[0], -0.5, 2.0); }},
      {"relu6", [](const V& a) { return F::relu6(a[0]); }},
      {"hardsigmoid", [](const V& a) { return F::hardsigmoid(a[0]); }},
      {"hardswish", [](const V& a) { return F::hardswish(a[0]); }},
      {"mish", [](const V& a) { return F::mish(a[0]); }},
      {"softsign", [](const V& a) { return F::softsign(a[0]); }},
      {"softshrink", [](const V& a) { return F::softshrink(a[0], 0.5); }},
      {"hardshrink", [](const V& a) { return F::hardshrink(a[0], 0.5); }},
      {"tanhshrink", [](const V& a) { return F::tanhshrink(a[0]); }},
      {"threshold", [](const V& a) { return F::threshold(a[0], 0.5, -2.0); }},
      {"logsigmoid", [](const V& a) { return F::logsigmoid(a[0]); }},
      {"glu", [](const V& a) { return F::glu(a[0], -1); }},
      {"softmin", [](const V& a) { return F::softmin(a[0], 0); }},
  };
}

}  // namespace

DEVICE_CASE("cuda activation: values agree with the CPU, kinks, infinities and NaN included") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> grid = {-inf, -800.0, -40.0, -20.5, -6.0, -3.0, -2.5, -1.0, -0.5, -0.25, -0.0, 0.0,
                                    0.25, 0.5, 1.0, 2.0, 3.0, 6.0, 20.5, 40.0, 800.0, inf, nan, 1.5};
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor x = from_vector(grid).to(dt);
    for (const auto& [name, f] : unary_ops()) {
      if (name == "softmin") continue;  // a row with infinities is NaN throughout; below on finite values
      CAPTURE(name);
      const Tensor want = f({x}), got = f({x.to(dev)});
      CHECK(got.device() == dev);
      CHECK(got.dtype() == dt);
      const Tensor wn = want.isnan(), gn = got.to(Device::cpu()).isnan();
      CHECK(to_vector<bool>(gn) == to_vector<bool>(wn));
      const Tensor wf = where(wn, Scalar(0.0), want), gf = where(gn, Scalar(0.0), got.to(Device::cpu()));
      CHECK(to_vector<bool>(gf.isinf()) == to_vector<bool>(wf.isinf()));
      CHECK(rel_diff(where(wf.isinf(), Scalar(0.0), gf), where(wf.isinf(), Scalar(0.0), wf)) <= tol(dt));
    }
    const Tensor s = sample({6, 8}, dt) * 3.0;
    for (const auto& [name, f] : unary_ops()) {
      CAPTURE(name);
      agree(dev, name, f, {s}, tol(dt));
      agree(dev, name + " strided", f, {s.t()}, tol(dt));
    }
    agree(dev, "prelu per channel", [](const V& a) { return F::prelu(a[0], a[1]); },
          {sample({3, 4, 5}, dt), from_vector(std::vector<double>{0.1, -0.3, 0.5, 2.0}).to(dt)}, tol(dt));
    agree(dev, "prelu shared", [](const V& a) { return F::prelu(a[0], a[1]); },
          {sample({3, 4, 5}, dt), from_vector(std::vector<double>{0.3}).to(dt)}, tol(dt));
  }
  // int64 kept by hardtanh, relu6 and threshold; promoted by softsign and tanhshrink
  const Tensor n = sample({5, 4}, int64);
  agree(dev, "hardtanh int64", [](const V& a) { return F::hardtanh(a[0], -2.0, 3.0); }, {n}, 0);
  agree(dev, "relu6 int64", [](const V& a) { return F::relu6(a[0]); }, {n}, 0);
  agree(dev, "threshold int64", [](const V& a) { return F::threshold(a[0], 1.0, 9.0); }, {n}, 0);
  agree(dev, "softsign int64", [](const V& a) { return F::softsign(a[0]); }, {n}, 1e-7);
  agree(dev, "tanhshrink int64", [](const V& a) { return F::tanhshrink(a[0]); }, {n}, 1e-7);
  CHECK(F::hardtanh(n.to(dev)).dtype() == int64);
  CHECK(F::softsign(n.to(dev)).dtype() == default_dtype());
}

DEVICE_CASE("cuda activation: first and second derivatives agree with the CPU") {
  manual_seed(5);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = dt == float32 ? 1e-5 : 1e-12;
    const Tensor x = sample({6, 8}, dt) * 3.0;
    for (const auto& [name, f] : unary_ops()) {
      grads_agree(dev, name, f, {x}, t);
      grad2_agree(dev, name, f, {x}, t);
    }
    const Fn pre = [](const V& a) { return F::prelu(a[0], a[1]); };
    const Tensor w = from_vector(std::vector<double>{0.1, -0.3, 0.5, 2.0, 0.7, 0.2}).to(dt);
    grads_agree(dev, "prelu", pre, {sample({2, 6, 3}, dt), w}, t);
    grad2_agree(dev, "prelu", pre, {sample({2, 6, 3}, dt), w}, t);
    grads_agree(dev, "prelu shared", pre, {sample({2, 6, 3}, dt), from_vector(std::vector<double>{0.4}).to(dt)}, t);
  }
}

DEVICE_CASE("cuda activation: training rrelu draws its slopes on the device, the gradient uses them") {
  const Tensor x = (sample({2000}, float64) * 2.0).to(dev).requires_grad_();
  Generator gen(3);
  const Tensor y = F::rrelu(x, 0.1, 0.4, true, &gen);
  CHECK(y.device() == dev);
  y.sum().backward();
  const Tensor xc = x.detach().to(Device::cpu()), yc = y.detach().to(Device::cpu()), gc = x.grad().to(Device::cpu());
  const Tensor neg = xc <= 0.0;
  const Tensor slope = where(neg, yc / xc, Scalar(1.0));
  CHECK(rel_diff(gc, slope) <= 1e-15);
  CHECK(where(neg, slope, Scalar(0.25)).min().item<double>() >= 0.1);
  CHECK(where(neg, slope, Scalar(0.25)).max().item<double>() <= 0.4);
  CHECK(rel_diff(where(neg, Scalar(0.0), yc), where(neg, Scalar(0.0), xc)) == 0);
}

DEVICE_CASE("cuda activation: modules run on the device, PReLU's weight moves and learns there") {
  const Tensor x = sample({2, 3, 4}, float32);
  nn::PReLU p(3);
  p.to(dev);
  CHECK(p.weight.device() == dev);
  const Tensor y = p.forward(x.to(dev));
  CHECK(y.device() == dev);
  CHECK(rel_diff(y, F::prelu(x, full({3}, 0.25, float32))) <= 1e-7);
  y.sum().backward();
  REQUIRE(p.weight.grad().defined());
  CHECK(p.weight.grad().device() == dev);
  nn::Mish m;
  CHECK(rel_diff(m.forward(x.to(dev)), F::mish(x)) <= 2e-6);
  nn::GLU g(1);
  CHECK(g.forward(x.to(dev).reshape({2, 12})).device() == dev);
  agree(dev, "Softmax", [](const V& a) { return nn::Softmax(1).forward(a[0]); }, {x}, 1e-6);
  agree(dev, "LogSoftmax", [](const V& a) { return nn::LogSoftmax(1).forward(a[0]); }, {x}, 1e-6);
  agree(dev, "Softmin", [](const V& a) { return nn::Softmin(-1).forward(a[0]); }, {x}, 1e-6);
}
