// CPU-vs-device agreement of the utilities of tests/test_tensor_utils.cpp and tests/test_calculus.cpp: tensordot,
// vander, linalg.vander, isin, histogram, trapezoid, cumulative_trapezoid, gradient (and the views swapaxes,
// unflatten, tensor_split), with gradients computed on the device. Skipped without a GPU (they run on the virtual
// CPU device everywhere).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cstdint>
#include <phasor/phasor.hpp>
#include <vector>

using namespace phasor;
using namespace cuda_test;
using V = std::vector<Tensor>;
using I = std::vector<std::int64_t>;

DEVICE_CASE("cuda tensor utilities: products, powers, membership, histograms and views agree with the CPU") {
  manual_seed(321);
  const Tensor a = sample({2, 3, 4}, float64), b = sample({4, 2, 3}, float64);
  agree(dev, "tensordot", [](const V& t) { return tensordot(t[0], t[1], {0, 2}, {1, 0}); }, {a, b}, 1e-13);
  grads_agree(dev, "tensordot", [](const V& t) { return tensordot(t[0], t[1], {0, 2}, {1, 0}); }, {a, b}, 1e-13);
  agree(dev, "tensordot complex", [](const V& t) { return tensordot(t[0], t[1], 1); }, {sample({3, 2}, complex128), sample({2, 5}, complex128)}, 1e-13);
  const Tensor x = sample({5}, float64);
  agree(dev, "vander", [](const V& t) { return vander(t[0], 4); }, {x}, 1e-14);
  grads_agree(dev, "vander", [](const V& t) { return vander(t[0], 4, true); }, {x}, 1e-13);
  agree(dev, "vander int", [](const V& t) { return vander(t[0]); }, {sample({4}, int64)}, 0);
  agree(dev, "linalg.vander", [](const V& t) { return linalg::vander(t[0], 3); }, {sample({2, 4}, float32)}, 1e-6);
  grads_agree(dev, "linalg.vander", [](const V& t) { return linalg::vander(t[0], 3); }, {sample({2, 4}, float64)}, 1e-13);
  const auto b01 = [](const Tensor& t) { return t.to(float64); };
  agree(dev, "isin", [&](const V& t) { return b01(isin(t[0], t[1])); }, {sample({6, 5}, int64), sample({7}, int64)}, 0);
  agree(dev, "isin invert", [&](const V& t) { return b01(isin(t[0], t[1], false, true)); },
        {sample({9}, float64).round(), sample({2, 3}, float64).round()}, 0);
  const Tensor h = sample({300}, float64), w = rand({300}, float64);
  agree(dev, "histogram", [](const V& t) { return std::get<0>(histogram(t[0], 9)); }, {h}, 0);
  agree(dev, "histogram edges", [](const V& t) { return std::get<1>(histogram(t[0], 9)); }, {h}, 0);
  agree(dev, "histogram weighted density", [](const V& t) {
    return std::get<0>(histogram(t[0], 5, std::make_pair(-1.0, 2.0), t[1], true));
  }, {h, w}, 1e-13);
  agree(dev, "histogram given edges", [](const V& t) { return std::get<0>(histogram(t[0], t[1])); },
        {h.to(float32), from_vector(std::vector<float>{-3, -1, 0, 0.5f, 4})}, 0);
  // views and splits run on the device as on the CPU
  const Tensor s = sample({2, 12}, float64);
  agree(dev, "swapaxes", [](const V& t) { return swapaxes(unflatten(t[0], 1, {3, -1}), 0, 2).contiguous(); }, {s}, 0);
  agree(dev, "tensor_split", [](const V& t) { return tensor_split(t[0], Shape{3, 7}, 1)[1].contiguous(); }, {s}, 0);
  grads_agree(dev, "tensor_split", [](const V& t) { const auto p = tensor_split(t[0], 5, 1); return p[1] * p[0] + p[4].sum(); }, {s}, 1e-15);
}

DEVICE_CASE("cuda calculus: trapezoid, cumulative_trapezoid and gradient agree with the CPU, gradients too") {
  manual_seed(322);
  const Tensor y = sample({3, 6}, float64), x = (rand({6}, float64) + 0.2).cumsum(0);
  agree(dev, "trapezoid", [](const V& t) { return trapezoid(t[0], t[1]); }, {y, x}, 1e-13);
  grads_agree(dev, "trapezoid", [](const V& t) { return trapezoid(t[0], t[1]); }, {y, x}, 1e-13);
  agree(dev, "trapezoid dx", [](const V& t) { return trapezoid(t[0], 0.5, 0); }, {y}, 1e-13);
  agree(dev, "cumulative_trapezoid", [](const V& t) { return cumulative_trapezoid(t[0], t[1]); }, {y, x}, 1e-13);
  grads_agree(dev, "cumulative_trapezoid", [](const V& t) { return cumulative_trapezoid(t[0], t[1]); }, {y, x}, 1e-13);
  agree(dev, "cumulative_trapezoid dx", [](const V& t) { return cumulative_trapezoid(t[0], 0.25, 0); }, {y}, 1e-13);
  const auto sum_all = [](const std::vector<Tensor>& g) {
    Tensor s = g[0].sum({1});
    for (std::size_t i = 1; i < g.size(); ++i) s = s + g[i].sum({1});
    return s;
  };
  agree(dev, "gradient", [&](const V& t) { return sum_all(gradient(t[0], std::vector<double>{0.5, 2.0}, {}, 2)); }, {y}, 1e-13);
  grads_agree(dev, "gradient", [](const V& t) { return gradient(t[0], 0.3, {1})[0]; }, {y}, 1e-13);
  agree(dev, "gradient coordinates", [](const V& t) { return gradient(t[0], std::vector<Tensor>{t[1]}, {1}, 2)[0]; }, {y, x}, 1e-12);
  grads_agree(dev, "gradient coordinates", [](const V& t) { return gradient(t[0], std::vector<Tensor>{t[1]}, {1})[0]; }, {y, x}, 1e-12);
}
