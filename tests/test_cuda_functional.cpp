// CPU-vs-device agreement of the functional transforms of tests/test_functional.cpp (jacobian in both strategies,
// hessian, jvp, vjp, hvp, vhp): every backward pass they run stays on the device. Skipped without a GPU (they run
// on the virtual CPU device everywhere).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <phasor/phasor.hpp>
#include <vector>

using namespace phasor;
using namespace cuda_test;
using V = std::vector<Tensor>;

DEVICE_CASE("cuda functional transforms: Jacobians, Hessians and their products agree with the CPU") {
  manual_seed(331);
  const Tensor W = sample({4, 3}, float64);
  // f(x) = sin(W x) * x0 and a scalar s(x) = sum(tanh(W x)^2) + x0 x1^3, with W on the device of x
  const auto f = [&](const Tensor& x) { return (on(x.device(), W).matmul(x)).sin() * x.select(0, 0); };
  const auto s = [&](const Tensor& x) {
    return (on(x.device(), W).matmul(x)).tanh().square().sum() + x.select(0, 0) * x.select(0, 1).pow(3.0);
  };
  const Tensor x = sample({3}, float64), v = sample({3}, float64), u = sample({4}, float64);
  using autodiff::JacobianStrategy;
  agree(dev, "jacobian", [&](const V& t) { return autodiff::jacobian(f, t[0]); }, {x}, 1e-13);
  agree(dev, "jacobian forward mode", [&](const V& t) {
    return autodiff::jacobian(f, t[0], false, false, JacobianStrategy::forward_mode);
  }, {x}, 1e-13);
  agree(dev, "hessian", [&](const V& t) { return autodiff::hessian(s, t[0]); }, {x}, 1e-13);
  agree(dev, "jvp", [&](const V& t) { return autodiff::jvp(f, t[0], t[1]).second; }, {x, v}, 1e-13);
  agree(dev, "vjp", [&](const V& t) { return autodiff::vjp(f, t[0], t[1]).second; }, {x, u}, 1e-13);
  agree(dev, "hvp", [&](const V& t) { return autodiff::hvp(s, t[0], t[1]).second; }, {x, v}, 1e-13);
  agree(dev, "vhp", [&](const V& t) { return autodiff::vhp(s, t[0], t[1]).second; }, {x, v}, 1e-13);
  // the derivative of a Hessian (create_graph) on the device
  grads_agree(dev, "hessian create_graph", [&](const V& t) { return autodiff::hessian(s, t[0], true); }, {x}, 1e-12);
  // a tangent on another device than its input is refused, naming the transform
  CHECK_THROWS_WITH_AS(autodiff::jvp(f, x.to(dev), v), doctest::Contains("[jvp] v[0] is on"), Error);
}
