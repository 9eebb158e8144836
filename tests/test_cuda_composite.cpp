// CPU-vs-device agreement of the ops written with other ops (tests/test_stats.cpp, test_composite_math.cpp):
// nansum, nanmean, aminmax, cov, corrcoef, bincount, histc, index_fill, masked_scatter, the stacks, block_diag,
// diagflat, flipud, fliplr, cross, kron, cdist, cartesian_prod, logspace, tril_indices, triu_indices, sinc, logit, deg2rad, rad2deg, heaviside, fmax, fmin, and their gradients
// computed on the device. Skipped without a GPU (they run on the virtual CPU device everywhere).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cstdint>
#include <limits>
#include <phasor/phasor.hpp>
#include <vector>

using namespace phasor;
using namespace cuda_test;
using V = std::vector<Tensor>;
using I = std::vector<std::int64_t>;

DEVICE_CASE("cuda composite: statistics, products and elementwise compositions agree with the CPU, gradients too") {
  manual_seed(91);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = where(rand({4, 6}) < 0.15, full({}, nan, float64), sample({4, 6}, float64));
  const Tensor y = sample({4, 6}, float64);
  agree(dev, "nansum", [](const V& a) { return nansum(a[0], {1}); }, {x}, 1e-14);
  agree(dev, "nanmean", [](const V& a) { return nanmean(a[0], {0}, true); }, {x}, 1e-14);
  agree(dev, "aminmax", [](const V& a) { return std::get<0>(aminmax(a[0], 1)) + std::get<1>(aminmax(a[0], 1)); }, {y}, 0);
  agree(dev, "cov", [](const V& a) { return cov(a[0], 1, Tensor(), a[1]); }, {y, rand({6}, float64) + 0.5}, 1e-13);
  agree(dev, "cov fweights", [](const V& a) { return cov(a[0], 0, a[1]); }, {y, from_vector(I{1, 0, 2, 3, 1, 1})}, 1e-13);
  agree(dev, "corrcoef", [](const V& a) { return corrcoef(a[0]); }, {y}, 1e-13);
  agree(dev, "bincount", [](const V& a) { return bincount(a[0], Tensor(), 9); }, {from_vector(I{3, 0, 3, 7, 1})}, 0);
  agree(dev, "bincount weights", [](const V& a) { return bincount(a[0], a[1]); }, {from_vector(I{3, 0, 3}), sample({3}, float64)}, 1e-15);
  agree(dev, "histc", [](const V& a) { return histc(a[0], 7, -1.5, 2.0); }, {x}, 0);
  agree(dev, "histc data range", [](const V& a) { return histc(a[0], 5); }, {y}, 0);
  agree(dev, "cross", [](const V& a) { return cross(a[0], a[1], 0); }, {sample({3, 5}, float64), sample({3, 1}, float64)}, 1e-14);
  agree(dev, "kron", [](const V& a) { return kron(a[0], a[1]); }, {sample({2, 3}, complex128), sample({3, 2}, complex128)}, 1e-14);
  agree(dev, "cdist", [](const V& a) { return cdist(a[0], a[1]) + cdist(a[0], a[1], 1.0); }, {sample({5, 3}, float64), sample({4, 3}, float64)}, 1e-13);
  agree(dev, "cartesian_prod", [](const V& a) { return cartesian_prod({a[0], a[1]}); }, {sample({3}, int64), sample({4}, int64)}, 0);
  CHECK(rel_diff(logspace(-2, 2, 9, 3.0, float64, dev), logspace(-2, 2, 9, 3.0, float64)) <= 1e-15);
  CHECK(rel_diff(tril_indices(4, 5, -1, dev), tril_indices(4, 5, -1)) == 0);
  CHECK(rel_diff(triu_indices(5, 3, 1, dev), triu_indices(5, 3, 1)) == 0);
  agree(dev, "sinc", [](const V& a) { return sinc(a[0]); }, {where(y > 0.5, zeros({}, float64), y)}, 1e-14);
  agree(dev, "logit", [](const V& a) { return logit(a[0], 0.01); }, {rand({4, 6}, float64)}, 1e-14);
  agree(dev, "deg2rad", [](const V& a) { return deg2rad(a[0]) + rad2deg(a[0]); }, {y}, 1e-15);
  agree(dev, "heaviside", [](const V& a) { return heaviside(a[0], a[1]); }, {y.round(), sample({6}, float64)}, 0);
  agree(dev, "fmax", [](const V& a) { return fmax(a[0], a[1]) + fmin(a[1], a[0]); }, {x, where(rand({4, 6}) < 0.2, full({}, nan, float64), y)}, 0);
  agree(dev, "index_fill", [](const V& a) { return index_fill(a[0], 1, a[1], -2.5); }, {y, from_vector(I{0, -1, 3})}, 0);
  agree(dev, "masked_scatter", [](const V& a) { return masked_scatter(a[0], a[1], a[2]); },
        {y, rand({1, 6}) < 0.5, sample({24}, float64)}, 0);
  agree(dev, "stacks", [](const V& a) { return hstack({a[0], a[1]}) + vstack({a[0], a[1]}).sum() + dstack({a[0], a[1]}).sum() +
                                              column_stack({a[0], a[1]}).sum(); }, {sample({3}, float64), sample({3}, float64)}, 1e-14);
  agree(dev, "block_diag", [](const V& a) { return block_diag({a[0], a[1]}) + diagflat(a[1], -1).sum(); }, {sample({2, 3}, float64), sample({4}, float64)}, 1e-14);
  agree(dev, "flipud", [](const V& a) { return flipud(a[0]) * fliplr(a[0]); }, {y}, 0);
  // gradients on the device
  grads_agree(dev, "nansum", [](const V& a) { return nansum(a[0], {0}) + nanmean(a[0], {1}).sum(); }, {x}, 1e-13);
  grads_agree(dev, "cov", [](const V& a) { return cov(a[0], 1, Tensor(), a[1]); }, {y, rand({6}, float64) + 0.5}, 1e-12);
  grads_agree(dev, "corrcoef", [](const V& a) { return corrcoef(a[0]); }, {y}, 1e-12);
  grads_agree(dev, "bincount", [](const V& a) { return bincount(from_vector(I{2, 0, 2}).to(a[0].device()), a[0]); }, {sample({3}, float64)}, 1e-14);
  grads_agree(dev, "cross", [](const V& a) { return cross(a[0], a[1]); }, {sample({2, 3}, float64), sample({2, 3}, float64)}, 1e-13);
  grads_agree(dev, "kron", [](const V& a) { return kron(a[0], a[1]); }, {sample({2, 2}, float64), sample({3}, float64)}, 1e-13);
  grads_agree(dev, "cdist", [](const V& a) { return cdist(a[0], a[1]); }, {sample({3, 2}, float64), sample({4, 2}, float64)}, 1e-12);
  grads_agree(dev, "sinc", [](const V& a) { return sinc(a[0]) + logit(a[0].sigmoid()); }, {y}, 1e-13);
  grads_agree(dev, "deg2rad", [](const V& a) { return deg2rad(a[0]) * rad2deg(a[0]); }, {y}, 1e-13);
  grads_agree(dev, "fmax", [](const V& a) { return fmax(a[0], a[1]) * fmin(a[0], a[1]); }, {y, sample({4, 6}, float64)}, 1e-13);
  grads_agree(dev, "index_fill", [](const V& a) { return index_fill(a[0], 0, from_vector(I{1}).to(a[0].device()), 3.0); }, {y}, 1e-14);
  grads_agree(dev, "masked_scatter", [](const V& a) {
    return masked_scatter(a[0], (arange(24, int64, a[0].device()).reshape({4, 6}) % 3) == 0, a[1]);
  }, {y, sample({8}, float64)}, 1e-14);
  grads_agree(dev, "block_diag", [](const V& a) { return block_diag({a[0], a[1]}) * 1.5; }, {sample({2, 2}, float64), sample({3}, float64)}, 1e-14);
  CHECK_THROWS_WITH_AS(cross(sample({2, 3}, float64).to(dev), sample({2, 3}, float64)), doctest::Contains("[cross]"), Error);
  CHECK_THROWS_WITH_AS(bincount(from_vector(I{1, -1}).to(dev)), doctest::Contains("[bincount] the input must be non-negative, got -1"), Error);
}
