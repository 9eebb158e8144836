// tests/test_cuda_linalg_functions.cpp - linalg::matrix_exp, matrix_power, multi_dot, vector_norm and vecdot on a
// device (compositions of ops: src/linalg/matrix_functions.cpp): values and gradients agree with the CPU's in the
// floating and complex dtypes, results stay on the device, matrix_exp reads one number on the host per call. The
// GPU cases need a GPU (or the CUDA emulation build): without one doctest reports them as skipped; the [cpu:1]
// variants always run.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

using VT = std::vector<Tensor>;

/// The agreement tolerance of a dtype.
double tol(Dtype dt) { return dt == float32 || dt == complex64 ? 2e-4 : 1e-11; }

}  // namespace

DEVICE_CASE("cuda linalg functions: matrix_exp, matrix_power, multi_dot, vector_norm, vecdot and their gradients agree with the CPU") {
  manual_seed(71);
  const double inf = std::numeric_limits<double>::infinity();
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double t = tol(dt);
    // matrix_exp: small norms (low degrees), a batch with squarings, empty
    for (double scale : {0.05, 0.5, 8.0}) {
      CAPTURE(scale);
      agree(dev, "matrix_exp", [](const VT& in) { return linalg::matrix_exp(in[0]); }, {sample({2, 4, 4}, dt) * scale}, t);
    }
    agree(dev, "matrix_exp of empty", [](const VT& in) { return linalg::matrix_exp(in[0]); }, {sample({2, 0, 0}, dt)}, 0);
    // matrix_power: 0, positive, negative
    const Tensor a = sample({2, 3, 3}, dt) * 0.3 + eye(3, std::nullopt, dt);
    for (std::int64_t n : {0, 1, 5, -3})
      agree(dev, "matrix_power " + std::to_string(n), [n](const VT& in) { return linalg::matrix_power(in[0], n); }, {a}, t);
    // multi_dot with 1-D ends
    const VT chain = {sample({4}, dt), sample({4, 6}, dt), sample({6, 2}, dt), sample({2, 5}, dt), sample({5}, dt)};
    agree(dev, "multi_dot", [](const VT& in) { return linalg::multi_dot(in); }, chain, t);
    agree(dev, "multi_dot of matrices", [](const VT& in) { return linalg::multi_dot(in); },
          {sample({3, 7}, dt), sample({7, 2}, dt), sample({2, 4}, dt)}, t);
    // vector_norm, every kind of ord
    const Tensor x = sample({3, 5}, dt);
    for (double p : {2.0, 1.0, 0.0, 3.0, inf, -inf, -1.5}) {
      CAPTURE(p);
      agree(dev, "vector_norm", [p](const VT& in) { return linalg::vector_norm(in[0], p); }, {x}, t);
      agree(dev, "vector_norm over dim 1", [p](const VT& in) { return linalg::vector_norm(in[0], p, {1}, true); }, {x}, t);
    }
    // vecdot, broadcast
    agree(dev, "vecdot", [](const VT& in) { return linalg::vecdot(in[0], in[1]); }, {sample({2, 1, 4}, dt), sample({3, 4}, dt)}, t);
  }
  // int64: matrix_power and multi_dot exactly
  const Tensor ai = sample({3, 3}, int64);
  agree(dev, "matrix_power of int64", [](const VT& in) { return linalg::matrix_power(in[0], 4); }, {ai}, 0);
  agree(dev, "matrix_power 0 of int64", [](const VT& in) { return linalg::matrix_power(in[0], 0); }, {ai}, 0);
  agree(dev, "multi_dot of int64", [](const VT& in) { return linalg::multi_dot(in); },
        {sample({2, 3}, int64), sample({3, 4}, int64), sample({4}, int64)}, 0);

  // gradients
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = sample({2, 3, 3}, dt) * 0.3 + eye(3, std::nullopt, dt);
    grads_agree(dev, "matrix_exp", [](const VT& in) { return linalg::matrix_exp(in[0]); }, {a}, 1e-11);
    grads_agree(dev, "matrix_exp with squarings", [](const VT& in) { return linalg::matrix_exp(in[0] * 5.0); }, {a}, 1e-11);
    for (std::int64_t n : {0, 1, 3, -2})
      grads_agree(dev, "matrix_power " + std::to_string(n), [n](const VT& in) { return linalg::matrix_power(in[0], n); }, {a}, 1e-11);
    grads_agree(dev, "multi_dot", [](const VT& in) { return linalg::multi_dot(in); },
                {sample({4}, dt), sample({4, 6}, dt), sample({6, 2}, dt), sample({2, 3}, dt)}, 1e-11);
    const Tensor x = sample({3, 5}, dt);
    for (double p : {2.0, 1.0, 0.0, 3.0, inf, -inf, -1.5})
      grads_agree(dev, "vector_norm " + std::to_string(p), [p](const VT& in) { return linalg::vector_norm(in[0], p, {1}); }, {x}, 1e-11);
    grads_agree(dev, "vecdot", [](const VT& in) { return linalg::vecdot(in[0], in[1]); }, {sample({2, 1, 4}, dt), sample({3, 4}, dt)}, 1e-11);
  }
  grad2_agree(dev, "matrix_exp twice", [](const VT& in) { return linalg::matrix_exp(in[0]); }, {sample({3, 3}, float64)}, 1e-10);
  grad2_agree(dev, "vector_norm -1.5 twice", [](const VT& in) { return linalg::vector_norm(in[0], -1.5, {1}); }, {sample({2, 4}, float64)}, 1e-10);

  // on a GPU matrix_exp reads one number (the norm that picks the degree) on the host, whatever the batch (on
  // cpu:1 the LAPACK calls copy through the host)
  if (dev.is_cuda()) {
    const Tensor ad = (sample({4, 5, 5}, float64) * 3.0).to(dev);
    std::string last;
    CAPTURE(last);
    CHECK(host_copies([&] { (void)linalg::matrix_exp(ad); }, &last) == 1);
  }
  // errors as on the CPU
  CHECK(error_of([&] { (void)linalg::matrix_power(eye(2, std::nullopt, float64).to(dev) * 0.0, -1); }) ==
        error_of([&] { (void)linalg::matrix_power(eye(2, std::nullopt, float64) * 0.0, -1); }));
  CHECK_THROWS_WITH_AS(linalg::vector_norm(ones({3}, int64).to(dev)), doctest::Contains("[linalg_vector_norm]"), Error);
}
