// tests/test_cuda_special_bessel.cpp - the Bessel functions and Ai (phasor/special.hpp) on a device agree with the CPU:
// values over their domains with the special values (0, negative x, infinities, NaN), the int promotion, and every
// gradient, twice. DEVICE_CASEs: on cuda:0 with a GPU (or the CUDA emulation build), on the virtual CPU device
// everywhere.
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

/// The ops of this file, by name.
std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>> bessel_ops() {
  return {{"bessel_j0", special::bessel_j0},
          {"bessel_j1", special::bessel_j1},
          {"bessel_y0", special::bessel_y0},
          {"bessel_y1", special::bessel_y1},
          {"modified_bessel_i0", special::modified_bessel_i0},
          {"modified_bessel_i1", special::modified_bessel_i1},
          {"modified_bessel_k0", special::modified_bessel_k0},
          {"modified_bessel_k1", special::modified_bessel_k1},
          {"scaled_modified_bessel_k0", special::scaled_modified_bessel_k0},
          {"scaled_modified_bessel_k1", special::scaled_modified_bessel_k1},
          {"spherical_bessel_j0", special::spherical_bessel_j0},
          {"airy_ai", special::airy_ai}};
}

}  // namespace

DEVICE_CASE("cuda special: the Bessel functions agree with the CPU, special values included") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> xs = {-250.0, -30.5, -7.25, -2.5, -1.0, -0.3, -0.0, 0.0, 1e-300, 1e-7, 0.4, 0.999, 1.0,
                                  1.46, 2.404825557695773, 9.7, 35.0, 200.0, 700.0, 1e5, inf, -inf, nan};
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor x = from_vector(xs).to(dt);
    for (const auto& [name, f] : bessel_ops()) {
      CAPTURE(name);
      const Tensor want = f(x), got = f(x.to(dev));
      CHECK(got.device() == dev);
      CHECK(got.dtype() == dt);
      // NaN and infinities in the same places; the devices' C libraries (J, Y) differ by a few ulps, which near the
      // zeros of J and Y is an absolute error of that size: relative to the largest value (1)
      const Tensor g = got.to(Device::cpu());
      CHECK(to_vector<bool>(g.isnan()) == to_vector<bool>(want.isnan()));
      CHECK(to_vector<bool>(g.isinf()) == to_vector<bool>(want.isinf()));
      const Tensor finite = want.isfinite();
      const Tensor w = where(finite, want, Scalar(0.0)), gf = where(finite, g, Scalar(0.0));
      CHECK(rel_diff(gf, w) <= (dt == float32 ? 2e-6 : 1e-12));
    }
  }
  // int64 input promotes on the device as on the CPU
  const Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 7});
  agree(dev, "bessel_j0 int64", [](const V& a) { return special::bessel_j0(a[0]); }, {n}, 1e-15);
  CHECK(special::modified_bessel_k1(n.to(dev)).dtype() == default_dtype());
}

DEVICE_CASE("cuda special: every Bessel function's gradient agrees with the CPU, twice") {
  manual_seed(83);
  const Tensor x = sample({5, 4}, float64), pos = x.abs() + 0.2;
  for (const auto& [name, f] : bessel_ops()) {
    const bool positive = name.find("_y") != std::string::npos || name.find("_k") != std::string::npos;
    const auto fn = [f = f](const V& a) { return f(a[0]); };
    grads_agree(dev, name, fn, {positive ? pos : x * 4.0}, 1e-11);
    grad2_agree(dev, name, fn, {positive ? pos : x * 4.0}, 1e-10);
  }
  // at 0: the spherical j0's second derivative runs the spherical j1's 1/3
  grad2_agree(dev, "spherical_bessel_j0 at 0", [](const V& a) { return special::spherical_bessel_j0(a[0]); },
              {from_vector(std::vector<double>{0.0, 1e-4, 0.5})}, 1e-12);
}
