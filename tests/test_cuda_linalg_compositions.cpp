// CPU-vs-device agreement of tests/test_linalg_compositions.cpp's functions: cholesky_solve, cholesky_inverse,
// logdet, linalg::norm, matrix_norm over two dims, tensorinv, tensorsolve and householder_product, with gradients
// computed on the device. Skipped without a GPU (they run on the virtual CPU device everywhere).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <phasor/phasor.hpp>
#include <vector>

using namespace phasor;
using namespace cuda_test;
using V = std::vector<Tensor>;

DEVICE_CASE("cuda linalg compositions agree with the CPU, gradients too") {
  manual_seed(341);
  const Tensor M = sample({4, 4}, float64);
  const Tensor A = M.matmul(M.transpose(0, 1)) + eye(4, std::nullopt, float64) * 4.0;
  const Tensor L = linalg::cholesky(A), B = sample({2, 4, 3}, float64);
  agree(dev, "cholesky_solve", [](const V& t) { return cholesky_solve(t[0], t[1]); }, {B, L}, 1e-12);
  grads_agree(dev, "cholesky_solve", [](const V& t) { return cholesky_solve(t[0], t[1]); }, {B, L}, 1e-12);
  agree(dev, "cholesky_inverse upper", [](const V& t) { return cholesky_inverse(t[0], true); },
        {linalg::cholesky(A, true)}, 1e-12);
  agree(dev, "logdet", [](const V& t) { return logdet(t[0]); }, {stack({A, -A, M})}, 1e-12);
  grads_agree(dev, "logdet", [](const V& t) { return logdet(t[0]); }, {A}, 1e-12);
  const Tensor x = sample({2, 3, 4}, float64);
  agree(dev, "linalg.norm", [](const V& t) { return linalg::norm(t[0]); }, {x}, 1e-13);
  agree(dev, "linalg.norm ord dims", [](const V& t) { return linalg::norm(t[0], 3.0, {1}, true); }, {x}, 1e-13);
  agree(dev, "matrix_norm dims", [](const V& t) { return linalg::matrix_norm(t[0], "nuc", {0, 2}); }, {x}, 1e-12);
  grads_agree(dev, "matrix_norm dims", [](const V& t) { return linalg::matrix_norm(t[0], 1.0, {2, 0}); }, {x}, 1e-12);
  agree(dev, "tensorinv", [](const V& t) { return linalg::tensorinv(t[0], 1); }, {sample({6, 2, 3}, float64)}, 1e-11);
  agree(dev, "tensorsolve", [](const V& t) { return linalg::tensorsolve(t[0], t[1]); },
        {sample({2, 3, 6}, float64), sample({2, 3}, float64)}, 1e-11);
  const Tensor H = sample({2, 5, 3}, float64), tau = sample({2, 3}, float64);
  agree(dev, "householder_product", [](const V& t) { return linalg::householder_product(t[0], t[1]); }, {H, tau}, 1e-13);
  grads_agree(dev, "householder_product", [](const V& t) { return linalg::householder_product(t[0], t[1]); }, {H, tau}, 1e-13);
}
