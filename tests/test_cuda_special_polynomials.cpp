// tests/test_cuda_special_polynomials.cpp - torch.special's orthogonal polynomials (phasor/special.hpp) on a device
// agree with the CPU: values (broadcast (x, n), numbers, torch's conventions for n, the Chebyshev fast path) and the
// derivatives in x to the third order. DEVICE_CASEs: on cuda:0 with a GPU (or the CUDA emulation build), on the
// virtual CPU device everywhere.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

using V = std::vector<Tensor>;
using Poly = Tensor (*)(const Tensor&, const Tensor&);

/// The ops of this file, by name, with the middle of their usual x range.
std::vector<std::pair<std::string, std::pair<Poly, double>>> polynomial_ops() {
  return {{"chebyshev_polynomial_t", {special::chebyshev_polynomial_t, 0.0}},
          {"chebyshev_polynomial_u", {special::chebyshev_polynomial_u, 0.0}},
          {"chebyshev_polynomial_v", {special::chebyshev_polynomial_v, 0.0}},
          {"chebyshev_polynomial_w", {special::chebyshev_polynomial_w, 0.0}},
          {"shifted_chebyshev_polynomial_t", {special::shifted_chebyshev_polynomial_t, 0.5}},
          {"shifted_chebyshev_polynomial_u", {special::shifted_chebyshev_polynomial_u, 0.5}},
          {"shifted_chebyshev_polynomial_v", {special::shifted_chebyshev_polynomial_v, 0.5}},
          {"shifted_chebyshev_polynomial_w", {special::shifted_chebyshev_polynomial_w, 0.5}},
          {"hermite_polynomial_h", {special::hermite_polynomial_h, 0.0}},
          {"hermite_polynomial_he", {special::hermite_polynomial_he, 0.0}},
          {"laguerre_polynomial_l", {special::laguerre_polynomial_l, 2.0}},
          {"legendre_polynomial_p", {special::legendre_polynomial_p, 0.0}}};
}

}  // namespace

DEVICE_CASE("cuda special: the orthogonal polynomials agree with the CPU, broadcast (x, n) and special n") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // n: negative, fractional, NaN, inf, small, the Chebyshev fast path (> 16) and large
  const Tensor n = from_vector(std::vector<double>{-2.0, -0.5, 0.0, 1.0, 2.7, 5.0, 12.0, 17.0, 60.0, 100.0, nan, inf}).reshape({12, 1});
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    for (const auto& [name, op] : polynomial_ops()) {
      CAPTURE(name);
      const auto [f, mid] = op;
      const Tensor x = (from_vector(std::vector<double>{-1.0, -0.999, -0.6, -0.05, 0.0, 0.3, 0.92, 1.0, 1.7, nan}) + mid).to(dt);
      const double t = dt == float32 ? 1e-5 : 1e-12;
      agree(dev, name, [f = f](const V& a) { return f(a[0], a[1]); }, {x, n.to(dt)}, t);
      // with numbers for x or n, and int64 n
      agree(dev, name + " number n", [f = f](const V& a) { return f(a[0], a[1] * 0.0 + 7.0); }, {x, n.to(dt)}, t);
      agree(dev, name + " int64 n", [f = f](const V& a) { return f(a[0], a[1]); },
            {x, from_vector(std::vector<std::int64_t>{0, 3, 9}).reshape({3, 1})}, t);
    }
  }
  CHECK(special::hermite_polynomial_h(0.5, from_vector(std::vector<double>{3.0}).to(dev)).device() == dev);
  CHECK(special::legendre_polynomial_p(from_vector(std::vector<double>{0.5}).to(dev), 3.0).device() == dev);
}

DEVICE_CASE("cuda special: the orthogonal polynomials' derivatives in x agree with the CPU") {
  manual_seed(84);
  const Tensor u = sample({3, 4}, float64).tanh() * 0.9;  // in (-0.9, 0.9)
  const Tensor n = from_vector(std::vector<double>{0.0, 2.0, 7.0, 20.0});
  for (const auto& [name, op] : polynomial_ops()) {
    const auto [f, mid] = op;
    const auto fn = [f = f, n](const V& a) { return f(a[0], n.to(a[0].device())); };
    grads_agree(dev, name, fn, {u + mid}, 1e-11);
    grad2_agree(dev, name, fn, {u + mid}, 1e-10);
  }
}
