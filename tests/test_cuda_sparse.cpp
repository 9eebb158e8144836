// tests/test_cuda_sparse.cpp - phasor::sparse on a device (Note [sparse as tensor ops]): conversions, coalesce and
// sparse-dense products on the GPU agree with the CPU's, results and gradients stay on the device, a CSR product
// is one kernel and waits for nothing, and a bad index is refused as on the CPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
using sparse::COO;
using sparse::CSR;

DEVICE_CASE("cuda sparse: COO and CSR conversions, coalesce and products agree with the CPU; gradients on the device") {
  manual_seed(62);
  using VT = std::vector<Tensor>;
  for (Dtype dt : {float32, float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == float32 ? 1e-5 : 1e-12;
    const Tensor d = where(rand({6, 5}) < 0.4, zeros({}, dt), sample({6, 5}, dt)), b = sample({5, 3}, dt);
    agree(dev, "COO round trip", [](const VT& in) { return COO::from_dense(in[0]).to_dense(); }, {d}, 0);
    agree(dev, "CSR round trip", [](const VT& in) { return CSR::from_dense(in[0]).to_dense(); }, {d}, 0);
    agree(dev, "CSR offsets", [](const VT& in) { return CSR::from_dense(in[0]).crow_indices(); }, {d}, 0);
    agree(dev, "CSR product", [](const VT& in) { return sparse::matmul(CSR::from_dense(in[0]), in[1]); }, {d, b}, tol);
    agree(dev, "COO product of the transpose", [](const VT& in) { return sparse::matmul(COO::from_dense(in[0]).t(), in[1].t().conj()); },
          {d, sample({3, 6}, dt)}, tol);
    // repeated positions, coalesced
    const Tensor idx = from_vector<std::int64_t>({2, 0, 2, 1, 1, 3, 4, 3}, Shape{2, 4}), val = sample({4}, dt);
    agree(dev, "coalesce", [&](const VT& in) { return COO(in[0], in[1], {3, 5}).coalesce().values(); }, {idx, val}, tol);
    agree(dev, "coalesced indices", [&](const VT& in) { return COO(in[0], in[1], {3, 5}).coalesce().indices(); }, {idx, val}, 0);
    if (dt != float32)
      grads_agree(dev, "product", [&](const VT& in) { return sparse::matmul(COO(idx.to(in[0].device()), in[0], {3, 5}).to_csr(), in[1]); },
                  {val, sample({5, 2}, dt)}, 1e-12);
  }
  CHECK_THROWS_WITH_AS(COO(from_vector<std::int64_t>({0, 5}, Shape{1, 2}).to(dev), ones({2}, float32, dev), {5}),
                       "[sparse_coo] index 5 out of range for dim 0 of size 5", Error);
  CHECK(error_of([&] { (void)COO(from_vector<std::int64_t>({0, 1}, Shape{1, 2}).to(dev), ones({2}), {5}); }) ==
        "[sparse_coo] values on " + Device::cpu().str() + " and indices on " + dev.str() + " (one device expected)");
  const CSR a = CSR::from_dense(eye(3, std::nullopt, float32, dev));
  CHECK(error_of([&] { (void)sparse::matmul(a, ones({3})); }) == "[sparse.matmul] the sparse matrix is on " + dev.str() + " and b on " + Device::cpu().str());
}

TEST_CASE("cuda sparse: a CSR product is one kernel and makes no host copy" * doctest::skip(!kGpu)) {
  const CSR a = CSR::from_dense(where(rand({64, 64}) < 0.9, zeros({}), randn({64, 64})).to(kDev));
  const Tensor x = randn({64, 8}).to(kDev);
  (void)sparse::matmul(a, x);
  Tensor y;
  CHECK(host_copies([&] { y = sparse::matmul(a, x); }) == 0);
  CHECK(y.device() == kDev);
  // one kernel (src/cuda/sparse.cu), where the composition of ops would launch a gather, a product and a scatter
  CHECK(emu_count(kDev, EmuCounter::Launches, [&] { y = sparse::matmul(a, x); }) <= 1);
  CHECK(rel_diff(y, sparse::matmul(a.to(Device::cpu()), x.to(Device::cpu()))) <= 1e-6);
}

DEVICE_CASE("cuda sparse: a CSR matrix built from checked offsets and columns agrees with the CPU; bad ones are refused") {
  using VT = std::vector<Tensor>;
  const Tensor crow = from_vector<std::int64_t>({0, 2, 2, 3}, Shape{4}), col = from_vector<std::int64_t>({1, 3, 0}, Shape{3});
  const Tensor val = from_vector<double>({1.5, -2.0, 0.5}, Shape{3});
  agree(dev, "CSR from checked indices", [](const VT& in) { return sparse::matmul(CSR(in[0], in[1], in[2], {3, 4}), in[3]); },
        {crow, col, val, sample({4, 2}, float64)}, 1e-12);
  CHECK_THROWS_WITH_AS(CSR(crow.to(dev), from_vector<std::int64_t>({1, 4, 0}, Shape{3}).to(dev), val.to(dev), {3, 4}),
                       "[sparse_csr] column 4 out of range for 4 columns", Error);
  CHECK_THROWS_WITH_AS(CSR(from_vector<std::int64_t>({0, 2, 1, 3}, Shape{4}).to(dev), col.to(dev), val.to(dev), {3, 4}),
                       doctest::Contains("[sparse_csr] crow_indices must run from 0 to nnz = 3 without decreasing"), Error);
}
