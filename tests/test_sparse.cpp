// tests/test_sparse.cpp - phasor::sparse (phasor/sparse.hpp): COO and CSR tensors against dense references
// (conversions both ways, repeated positions, coalesce, transpose), sparse-dense products against dense matmul in
// every dtype, gradients by gradcheck (values and the dense operand), and the errors promised.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <phasor/phasor.hpp>

using namespace phasor;
using sparse::COO;
using sparse::CSR;

namespace {

Tensor i64(const std::vector<std::int64_t>& v, const Shape& s) { return from_vector(v, s); }

/// max |a - b| (complex: the modulus), on the CPU in float64.
double max_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  if (a.numel() == 0) return 0;
  return (a.to(complex128) - b.to(complex128)).abs().max().item<double>();
}

/// A random dense matrix with about a third of its elements zero.
Tensor sparse_sample(const Shape& s, Dtype dt) {
  const Tensor r = randn(s, float64);
  Tensor v = dt == complex64 || dt == complex128 ? complex(r, randn(s, float64)) : r;
  return where(rand(s) < 0.35, zeros({}, v.dtype()), v).to(dt);
}

}  // namespace

TEST_CASE("sparse: COO holds positions and values; to_dense sums repeated positions; coalesce sorts and sums them") {
  // the 3 x 4 matrix [[0, 2, 0, 0], [5, 0, 0, 7], [0, 0, 0, 0]] with (1, 3) given twice (3 + 4)
  const Tensor idx = i64({1, 0, 1, 1, 3, 1, 3, 0}, {2, 4});  // rows, then columns
  const Tensor val = from_vector<double>({3, 2, 4, 5});
  const COO a(idx, val, {3, 4});
  CHECK(a.nnz() == 4);
  CHECK(a.dim() == 2);
  CHECK(a.dtype() == float64);
  CHECK_FALSE(a.is_coalesced());
  const Tensor want = from_vector<double>({0, 2, 0, 0, 5, 0, 0, 7, 0, 0, 0, 0}).reshape({3, 4});
  CHECK(max_diff(a.to_dense(), want) == 0);
  const COO c = a.coalesce();
  CHECK(c.is_coalesced());
  CHECK(c.nnz() == 3);
  CHECK(to_vector<std::int64_t>(c.indices()) == std::vector<std::int64_t>{0, 1, 1, 1, 0, 3});
  CHECK(to_vector<double>(c.values()) == std::vector<double>{2, 5, 7});
  CHECK(max_diff(c.to_dense(), want) == 0);
  CHECK(max_diff(a.t().to_dense(), want.t()) == 0);
  // a 3-d tensor, and an empty one
  const Tensor d3 = sparse_sample({2, 3, 4}, float32);
  const COO s3 = COO::from_dense(d3);
  CHECK(s3.is_coalesced());
  CHECK(s3.nnz() == (d3 != 0.0).sum().item<std::int64_t>());
  CHECK(max_diff(s3.to_dense(), d3) == 0);
  CHECK(max_diff(COO::from_dense(zeros({2, 2})).to_dense(), zeros({2, 2})) == 0);
  CHECK(COO(zeros({1, 0}, int64), zeros({0}), {5}).to_dense().shape() == Shape{5});
}

TEST_CASE("sparse: CSR from COO and dense, row indices, round trips") {
  const Tensor d = from_vector<double>({0, 2, 0, 0, 5, 0, 0, 7, 0, 0, 0, 0, 1, 0, 0, 3}).reshape({4, 4});
  const CSR a = CSR::from_dense(d);
  CHECK(to_vector<std::int64_t>(a.crow_indices()) == std::vector<std::int64_t>{0, 1, 3, 3, 5});
  CHECK(to_vector<std::int64_t>(a.col_indices()) == std::vector<std::int64_t>{1, 0, 3, 0, 3});
  CHECK(to_vector<std::int64_t>(a.row_indices()) == std::vector<std::int64_t>{0, 1, 1, 3, 3});
  CHECK(to_vector<double>(a.values()) == std::vector<double>{2, 5, 7, 1, 3});
  CHECK(max_diff(a.to_dense(), d) == 0);
  CHECK(max_diff(a.to_coo().to_dense(), d) == 0);
  const CSR b(a.crow_indices(), a.col_indices(), a.values() * 2.0, {4, 4});
  CHECK(max_diff(b.to_dense(), d * 2.0) == 0);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const Tensor x = sparse_sample({7, 5}, dt);
    CHECK(max_diff(CSR::from_dense(x).to_dense(), x) == 0);
    CHECK(max_diff(COO::from_dense(x).to_csr().to_coo().to_dense(), x) == 0);
  }
}

TEST_CASE("sparse: matmul agrees with dense matmul in every dtype, vectors and matrices, COO and CSR") {
  manual_seed(60);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == float32 || dt == complex64 ? 1e-5 : 1e-12;
    const Tensor d = sparse_sample({6, 5}, dt), b = randn({5, 3}).to(dt), v = randn({5}).to(dt);
    CHECK(max_diff(sparse::matmul(COO::from_dense(d), b), matmul(d, b)) <= tol);
    CHECK(max_diff(sparse::matmul(CSR::from_dense(d), b), matmul(d, b)) <= tol);
    CHECK(max_diff(sparse::matmul(CSR::from_dense(d), v), matmul(d, v)) <= tol);
    const Tensor c = randn({6, 2}).to(dt);
    CHECK(max_diff(sparse::matmul(COO::from_dense(d).t(), c), matmul(d.t(), c)) <= tol);
    CHECK(max_diff(sparse::matmul(COO::from_dense(d).t().to_csr(), c), matmul(d.t(), c)) <= tol);
  }
  // the CPU's primitive (checked indices) and the composition of ops (unchecked ones) agree
  for (Dtype dt : {float64, complex128}) {
    const CSR a = CSR::from_dense(sparse_sample({9, 7}, dt));
    const CSR u(a.crow_indices(), a.col_indices(), a.values(), a.shape(), false);
    for (const Shape& bs : {Shape{7}, Shape{7, 1}, Shape{7, 4}}) {
      const Tensor b = randn(bs).to(dt);
      CHECK(max_diff(sparse::matmul(a, b), sparse::matmul(u, b)) <= 1e-12);
    }
  }
  // int64 values (the composition of ops; the primitive takes floating and complex values)
  const Tensor di = (sparse_sample({5, 4}, float64) * 3.0).round().to(int64), bi = randint(-3, 4, {4, 2});
  CHECK(max_diff(sparse::matmul(CSR::from_dense(di), bi), matmul(di, bi)) == 0);
  // dtype promotion: float32 values times a float64 b
  const Tensor d = sparse_sample({4, 4}, float32);
  const Tensor b = randn({4, 2}, float64);
  CHECK(sparse::matmul(CSR::from_dense(d), b).dtype() == float64);
  CHECK(max_diff(sparse::matmul(CSR::from_dense(d), b), matmul(d.to(float64), b)) <= 1e-12);
}

TEST_CASE("sparse: gradients reach the values and the dense operand (gradcheck)") {
  manual_seed(61);
  const Tensor idx = i64({0, 2, 2, 1, 0, 1, 1, 0, 2, 1}, {2, 5});  // (1, 1) twice
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Tensor val = randn({5}).to(dt).requires_grad_(), b = randn({3, 2}).to(dt).requires_grad_();
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) { return COO(idx, in[0], {3, 3}).to_dense(); }, {val}));
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) { return COO(idx, in[0], {3, 3}).coalesce().values(); }, {val}));
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) { return sparse::matmul(COO(idx, in[0], {3, 3}), in[1]); }, {val, b}));
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) {
      return sparse::matmul(COO(idx, in[0], {3, 3}).to_csr(), in[1].select(1, 0));
    }, {val, b}));
    const Tensor dense = randn({3, 3}).to(dt).requires_grad_();
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return COO::from_dense(in[0]).values(); }, {dense}));
  }
}

TEST_CASE("sparse: indices given unchecked take the checked kernels: right results, and no access outside the tensor") {
  const Tensor idx = i64({0, 1, 1, 0}, {2, 2}), val = from_vector<double>({2, 3});
  const Tensor want = from_vector<double>({0, 2, 3, 0}).reshape({2, 2});
  CHECK(max_diff(COO(idx, val, {2, 2}, false).to_dense(), want) == 0);
  CHECK(max_diff(sparse::matmul(COO(idx, val, {2, 2}, false).to_csr(), eye(2, std::nullopt, float64)), want) == 0);
  // a position past the end: the checked index_add refuses it
  CHECK_THROWS_WITH_AS(COO(i64({2, 1}, {2, 1}), ones({1}), {2, 2}, false).to_dense(), doctest::Contains("[index_add] index 5 out of range"), Error);
}

TEST_CASE("sparse: bad input is an error naming the op and the offending shapes or values") {
  const Tensor idx = i64({0, 1, 1, 2}, {2, 2});
  const Tensor val = ones({2});
  CHECK_THROWS_WITH_AS(COO(idx, val, {2, 2}), "[sparse_coo] index 2 out of range for dim 1 of size 2", Error);
  CHECK_THROWS_WITH_AS(COO(i64({0, -1, 1, 1}, {2, 2}), val, {2, 2}), "[sparse_coo] index -1 out of range for dim 0 of size 2", Error);
  CHECK_THROWS_WITH_AS(COO(idx, val, {3}), "[sparse_coo] indices of shape (2, 2) must be (ndim, nnz) with ndim = 1 for shape (3,)", Error);
  CHECK_THROWS_WITH_AS(COO(idx, ones({3}), {3, 3}), "[sparse_coo] values of shape (3,) must be (nnz) = (2,)", Error);
  CHECK_THROWS_WITH_AS(COO(idx.to(float64), val, {3, 3}), "[sparse_coo] indices must be int64, got float64", Error);
  CHECK_THROWS_WITH_AS(COO(idx, val, {}), "[sparse_coo] shape () must have at least one dim", Error);
  CHECK_THROWS_WITH_AS(COO(idx, val, {3, -1}), "[sparse_coo] shape (3, -1) has a negative size", Error);
  CHECK_THROWS_WITH_AS(COO::from_dense(ones({})), "[sparse_coo.from_dense] a 0-d tensor has no sparse form (give it one dim)", Error);
  CHECK_THROWS_WITH_AS(COO(i64({0, 1}, {1, 2}), val, {3}).to_csr(), "[sparse_coo.to_csr] CSR needs a matrix (2 dims), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(COO(i64({0, 1}, {1, 2}), val, {3}).t(), "[sparse_coo.t] t() needs a matrix (2 dims), got shape (3,)", Error);
  const Tensor crow = i64({0, 1, 2}, {3}), col = i64({1, 0}, {2});
  CHECK_NOTHROW(CSR(crow, col, val, {2, 2}));
  CHECK_THROWS_WITH_AS(CSR(crow, i64({1, 2}, {2}), val, {2, 2}), "[sparse_csr] column 2 out of range for 2 columns", Error);
  CHECK_THROWS_WITH_AS(CSR(i64({0, 2, 1}, {3}), col, val, {2, 2}),
                       "[sparse_csr] crow_indices must run from 0 to nnz = 2 without decreasing (they run from 0 to 1)", Error);
  CHECK_THROWS_WITH_AS(CSR(i64({1, 1, 2}, {3}), col, val, {2, 2}),
                       "[sparse_csr] crow_indices must run from 0 to nnz = 2 without decreasing (they run from 1 to 2)", Error);
  CHECK_THROWS_WITH_AS(CSR(crow, col, val, {3, 2}), "[sparse_csr] crow_indices of shape (3,) must be (rows + 1) = (4,) for shape (3, 2)", Error);
  CHECK_THROWS_WITH_AS(CSR(crow, col, val, {2}), "[sparse_csr] shape (2,) must have 2 dims", Error);
  CHECK_THROWS_WITH_AS(CSR::from_dense(ones({2})), "[sparse_csr.from_dense] CSR needs a matrix (2 dims), got shape (2,)", Error);
  const CSR a(crow, col, val, {2, 2});
  CHECK_THROWS_WITH_AS(sparse::matmul(a, ones({3})),
                       "[sparse.matmul] a sparse matrix of shape (2, 2) cannot multiply b of shape (3,) (b must be (2,) or (2, k))", Error);
  CHECK_THROWS_WITH_AS(sparse::matmul(a, ones({2, 2, 2})),
                       "[sparse.matmul] a sparse matrix of shape (2, 2) cannot multiply b of shape (2, 2, 2) (b must be (2,) or (2, k))", Error);
  CHECK_THROWS_WITH_AS(sparse::matmul(COO(i64({0, 1}, {1, 2}), val, {3}), ones({3})),
                       "[sparse.matmul] the sparse operand must be a matrix (2 dims), got shape (3,)", Error);
}
