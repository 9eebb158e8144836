// tests/test_linalg_compositions.cpp - cholesky_solve, cholesky_inverse, logdet, linalg::norm, matrix_norm over
// any two dims, linalg::diagonal, tensorinv, tensorsolve and householder_product: against loops in long double,
// closed forms (2 x 2 determinants and singular values) and identities, float64 gradcheck, and every error.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <phasor/phasor.hpp>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using V = std::vector<Tensor>;
using LD = long double;
using CLD = std::complex<long double>;

namespace {

/// A well-conditioned symmetric positive definite (n, n) float64 matrix M M^T + n I.
Tensor spd(std::int64_t n) {
  const Tensor M = randn({n, n}, float64);
  return M.matmul(M.transpose(0, 1)) + eye(n, std::nullopt, float64) * double(n);
}

/// The (r, c) row-major product A B of float64 matrices in long double.
std::vector<double> product(const Tensor& A, const Tensor& B) {
  const auto a = vals(A.contiguous()), b = vals(B.contiguous());
  const std::int64_t r = A.size(0), k = A.size(1), c = B.size(1);
  std::vector<double> out(static_cast<std::size_t>(r * c));
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) {
      LD s = 0;
      for (std::int64_t t = 0; t < k; ++t) s += LD(a[static_cast<std::size_t>(i * k + t)]) * b[static_cast<std::size_t>(t * c + j)];
      out[static_cast<std::size_t>(i * c + j)] = double(s);
    }
  return out;
}

/// Row-major (n, n) identity.
std::vector<double> identity(std::int64_t n) {
  std::vector<double> I(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) I[static_cast<std::size_t>(i * n + i)] = 1.0;
  return I;
}

}  // namespace

TEST_CASE("cholesky_solve and cholesky_inverse solve with the factor, lower or upper, batched and complex") {
  manual_seed(81);
  const Tensor A = spd(4), B = randn({4, 3}, float64);
  const Tensor L = linalg::cholesky(A), U = linalg::cholesky(A, true);
  check_close(from_vector(product(A, cholesky_solve(B, L))), vals(B), 1e-13);
  check_close(from_vector(product(A, cholesky_solve(B, U, true))), vals(B), 1e-13);
  check_close(from_vector(product(A, cholesky_inverse(L))), identity(4), 1e-13);
  check_close(from_vector(product(cholesky_inverse(U, true), A)), identity(4), 1e-13);
  // batch dims broadcast: one factor for a batch of right-hand sides
  const Tensor Bs = randn({2, 4, 2}, float64);
  const Tensor Xs = cholesky_solve(Bs, L);
  CHECK(Xs.shape() == Shape{2, 4, 2});
  for (std::int64_t b = 0; b < 2; ++b) check_close(from_vector(product(A, Xs.select(0, b))), vals(Bs.select(0, b)), 1e-13);
  // complex Hermitian: A X = B in complex arithmetic
  const Tensor M = randn({3, 3}, complex128);
  const Tensor H = M.matmul(M.transpose(0, 1).conj()) + eye(3, std::nullopt, complex128) * 3.0;
  const Tensor Bc = randn({3, 2}, complex128);
  const Tensor Xc = cholesky_solve(Bc, linalg::cholesky(H));
  CHECK(vals(abs(H.matmul(Xc) - Bc).max())[0] < 1e-13);
  // gradients in B and in the factor (only its lower triangle is read)
  CHECK(autodiff::gradcheck([](const V& t) { return cholesky_solve(t[0], t[1]); },
                            {B.clone().requires_grad_(), L.clone().requires_grad_()}));
  CHECK(autodiff::gradcheck([](const V& t) { return cholesky_inverse(t[0], true); }, {U.clone().requires_grad_()}));
  CHECK_THROWS_WITH_AS(cholesky_solve(randn({3, 2}, float64), L), doctest::Contains("[cholesky_solve] B of shape (3, 2) does not fit the factor of shape (4, 4)"), Error);
  CHECK_THROWS_WITH_AS(cholesky_inverse(randn({3, 2}, float64)), doctest::Contains("cholesky_inverse"), Error);
}

TEST_CASE("logdet: log of the determinant, -inf when singular, NaN when negative, the complex log for complex") {
  // 2 x 2 closed form det = ad - bc
  const Tensor A = from_vector(std::vector<double>{2.0, 0.5, -1.0, 3.0}).reshape({2, 2});  // det 6.5
  check_close(logdet(A), {std::log(6.5)}, 1e-15);
  const Tensor N = from_vector(std::vector<double>{1.0, 2.0, 3.0, 4.0}).reshape({2, 2});  // det -2
  CHECK(std::isnan(vals(logdet(N))[0]));
  const Tensor S = from_vector(std::vector<double>{1.0, 2.0, 2.0, 4.0}).reshape({2, 2});  // det 0
  CHECK(vals(logdet(S))[0] == -kInf);
  // batched
  check_close(logdet(stack({A, A * 2.0})), {std::log(6.5), std::log(26.0)}, 1e-14);
  // complex: the principal log of the complex determinant
  const std::complex<double> a(1, 2), b(0.5, -1), c(-2, 0.25), d(3, 1);
  const Tensor C = from_vector(std::vector<std::complex<double>>{a, b, c, d}).reshape({2, 2});
  const std::complex<double> ref = std::log(a * d - b * c);
  const auto got = to_vector<std::complex<double>>(logdet(C))[0];
  CHECK(got.real() == doctest::Approx(ref.real()).epsilon(1e-14));
  CHECK(got.imag() == doctest::Approx(ref.imag()).epsilon(1e-14));
  // d logdet / dA = inv(A)^T
  manual_seed(82);
  CHECK(autodiff::gradcheck([](const V& t) { return logdet(t[0]); }, {spd(3).requires_grad_()}));
  CHECK_THROWS_WITH_AS(logdet(randn({2, 3}, float64)), doctest::Contains("logdet"), Error);
}

TEST_CASE("linalg::norm dispatches to vector and matrix norms as torch.linalg.norm") {
  manual_seed(83);
  const Tensor x = randn({2, 3, 4}, float64);
  const auto xv = vals(x);
  LD ss = 0;
  for (double v : xv) ss += LD(v) * v;
  check_close(linalg::norm(x), {double(std::sqrt(ss))}, 1e-15);  // no ord, no dims: flattened 2-norm
  // ord 1 over dim 1 (vector norm): sum |x| along the 3
  const Tensor n1 = linalg::norm(x, 1.0, {1});
  CHECK(n1.shape() == Shape{2, 4});
  std::vector<double> ref1;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      LD s = 0;
      for (int j = 0; j < 3; ++j) s += std::fabs(LD(xv[static_cast<std::size_t>(i * 12 + j * 4 + k)]));
      ref1.push_back(double(s));
    }
  check_close(n1, ref1, 1e-15);
  check_close(linalg::norm(x, 1.0, {1}, true).reshape({2, 4}), ref1, 1e-15);
  CHECK(linalg::norm(x, 1.0, {1}, true).shape() == Shape{2, 1, 4});
  // 2 x 2 matrices: Frobenius, nuclear = sqrt(fro^2 + 2 |det|), spectral = sqrt((fro^2 + sqrt(fro^4 - 4 det^2)) / 2)
  const double a = 1.5, b = -0.5, c = 2.0, d = 0.25;
  const Tensor M = from_vector(std::vector<double>{a, b, c, d}).reshape({2, 2});
  const double f2 = a * a + b * b + c * c + d * d, det = a * d - b * c;
  check_close(linalg::norm(M), {std::sqrt(f2)}, 1e-15);
  check_close(linalg::norm(M, "fro"), {std::sqrt(f2)}, 1e-15);
  check_close(linalg::norm(M, "nuc"), {std::sqrt(f2 + 2 * std::fabs(det))}, 1e-14);
  check_close(linalg::norm(M, 2.0), {std::sqrt((f2 + std::sqrt(f2 * f2 - 4 * det * det)) / 2)}, 1e-14);
  check_close(linalg::norm(M, kInf), {std::max(std::fabs(a) + std::fabs(b), std::fabs(c) + std::fabs(d))}, 1e-15);
  check_close(linalg::norm(M, 1.0), {std::max(std::fabs(a) + std::fabs(c), std::fabs(b) + std::fabs(d))}, 1e-15);
  // a 1-D input with an ord: the vector norm
  check_close(linalg::norm(vec({3.0, -4.0}), 1.0), {7}, 1e-15);
  // matrix_norm over dims (0, 2) of (2, 3, 4): the 2 x 4 matrices x[:, j, :], and keepdim's shape
  const Tensor mn = linalg::matrix_norm(x, 1.0, {0, 2});
  CHECK(mn.shape() == Shape{3});
  for (int j = 0; j < 3; ++j) {
    double best = 0;
    for (int k = 0; k < 4; ++k) {
      LD s = 0;
      for (int i = 0; i < 2; ++i) s += std::fabs(LD(xv[static_cast<std::size_t>(i * 12 + j * 4 + k)]));
      best = std::max(best, double(s));
    }
    CHECK(vals(mn)[static_cast<std::size_t>(j)] == doctest::Approx(best).epsilon(1e-15));
  }
  CHECK(linalg::matrix_norm(x, "fro", {2, 0}, true).shape() == Shape{1, 3, 1});
  check_close(linalg::matrix_norm(x, "fro", {0, 2}), vals(linalg::norm(x, std::nullopt, {0, 2})), 1e-15);
  CHECK(autodiff::gradcheck([](const V& t) { return linalg::norm(t[0], "nuc", {2, 0}); }, {x.clone().requires_grad_()}));
  CHECK(autodiff::gradcheck([](const V& t) { return linalg::norm(t[0], 3.0, {1}); }, {x.clone().requires_grad_()}));
  // errors
  CHECK_THROWS_WITH_AS(linalg::norm(x, 2.0), doctest::Contains("[linalg_norm] with an ord and no dims the input must be 1-D or 2-D, got shape (2, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(linalg::norm(x, "fro", {1}), doctest::Contains("ord \"fro\" is a matrix norm: it needs two dims"), Error);
  CHECK_THROWS_WITH_AS(linalg::norm(x, 2.0, {0, 1, 2}), doctest::Contains("dims must name one or two dims"), Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(x, 1.0, {1, 1}), doctest::Contains("repeat a dim"), Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(x, 1.0, {0, 3}), doctest::Contains("dim 3 is out of range for a tensor of shape (2, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(x, "max", {0, 1}), doctest::Contains("ord must be"), Error);
}

TEST_CASE("linalg::diagonal takes the last two dims by default") {
  const Tensor x = seq({2, 3, 3});
  const Tensor d = linalg::diagonal(x);
  CHECK(d.shape() == Shape{2, 3});
  check_close(d, {0, 4, 8, 9, 13, 17}, 1e-15);
  check_close(linalg::diagonal(x, 1), {1, 5, 10, 14}, 1e-15);
  check_close(linalg::diagonal(x, 0, 0, 1), {0, 12, 1, 13, 2, 14}, 1e-15);  // (3, 2): x[i][i][k] at [k][i]
}

TEST_CASE("tensorinv and tensorsolve invert and solve tensors as linear maps") {
  manual_seed(84);
  const Tensor A = randn({4, 6, 8, 3}, float64);
  const Tensor Ai = linalg::tensorinv(A, 2);
  CHECK(Ai.shape() == Shape{8, 3, 4, 6});
  // tensordot(A, Ai, 2) is the identity on the (4, 6) index space
  check_close(tensordot(A, Ai, 2).reshape({24, 24}), identity(24), 1e-10);
  CHECK(autodiff::gradcheck([](const V& t) { return linalg::tensorinv(t[0], 1); }, {randn({6, 2, 3}, float64).requires_grad_()}));
  CHECK_THROWS_WITH_AS(linalg::tensorinv(A, 1), doctest::Contains("the product of the first 1 dims of shape (4, 6, 8, 3) (4) must equal the product of the others (144)"), Error);
  CHECK_THROWS_WITH_AS(linalg::tensorinv(A, 0), doctest::Contains("ind must be in [1, 4]"), Error);

  const Tensor T = randn({2, 3, 6}, float64), B = randn({2, 3}, float64);
  const Tensor X = linalg::tensorsolve(T, B);
  CHECK(X.shape() == Shape{6});
  check_close(tensordot(T, X, 1), vals(B), 1e-12);
  // dims moved to the end: the same system with its solution dim first
  const Tensor T2 = T.permute({2, 0, 1}).contiguous();
  check_close(linalg::tensorsolve(T2, B, Shape{0}), vals(X), 1e-12);
  CHECK(autodiff::gradcheck([](const V& t) { return linalg::tensorsolve(t[0], t[1]); },
                            {T.clone().requires_grad_(), B.clone().requires_grad_()}));
  CHECK_THROWS_WITH_AS(linalg::tensorsolve(T, randn({3, 2}, float64)), doctest::Contains("[linalg_tensorsolve] A of shape (2, 3, 6) must be B's shape (3, 2)"), Error);
  CHECK_THROWS_WITH_AS(linalg::tensorsolve(randn({2, 3, 5}, float64), B), doctest::Contains("followed by dims of the same product (6)"), Error);
}

TEST_CASE("householder_product multiplies the reflectors, as a loop over full matrices in long double") {
  manual_seed(85);
  const std::int64_t m = 5, n = 3, k = 2;
  const Tensor A = randn({m, n}, float64), tau = randn({k}, float64);
  const Tensor Q = linalg::householder_product(A, tau);
  CHECK(Q.shape() == Shape{m, n});
  // reference: H_1 H_2 as full m x m matrices, then the first n columns
  const auto a = vals(A), t = vals(tau);
  std::vector<LD> P(static_cast<std::size_t>(m * m), 0.0L);
  for (std::int64_t i = 0; i < m; ++i) P[static_cast<std::size_t>(i * m + i)] = 1.0L;
  for (std::int64_t r = 0; r < k; ++r) {
    std::vector<LD> v(static_cast<std::size_t>(m), 0.0L);
    v[static_cast<std::size_t>(r)] = 1.0L;
    for (std::int64_t i = r + 1; i < m; ++i) v[static_cast<std::size_t>(i)] = a[static_cast<std::size_t>(i * n + r)];
    std::vector<LD> next(P.size(), 0.0L);  // P H_r = P - tau (P v) v^T
    for (std::int64_t i = 0; i < m; ++i) {
      LD pv = 0;
      for (std::int64_t j = 0; j < m; ++j) pv += P[static_cast<std::size_t>(i * m + j)] * v[static_cast<std::size_t>(j)];
      for (std::int64_t j = 0; j < m; ++j)
        next[static_cast<std::size_t>(i * m + j)] = P[static_cast<std::size_t>(i * m + j)] - LD(t[static_cast<std::size_t>(r)]) * pv * v[static_cast<std::size_t>(j)];
    }
    P = next;
  }
  std::vector<double> ref;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) ref.push_back(double(P[static_cast<std::size_t>(i * m + j)]));
  check_close(Q, ref, 1e-14);
  // true reflectors (tau = 2 / |v|^2) give orthonormal columns, complex too
  const Tensor Ac = randn({2, m, n}, complex128);
  const Tensor Vc = tril(Ac, -1) + eye(m, n, complex128);
  const Tensor tc = (abs(Vc).square().sum({-2}) / 2.0).reciprocal().to(complex128);  // (2, n)
  const Tensor Qc = linalg::householder_product(Ac, tc);
  const Tensor G = Qc.transpose(-2, -1).conj().matmul(Qc) - eye(n, std::nullopt, complex128);
  CHECK(vals(abs(G).max())[0] < 1e-14);
  CHECK(autodiff::gradcheck([](const V& x) { return linalg::householder_product(x[0], x[1]); },
                            {A.clone().requires_grad_(), tau.clone().requires_grad_()}));
  CHECK_THROWS_WITH_AS(linalg::householder_product(randn({2, 3}, float64), randn({1}, float64)), doctest::Contains("needs m >= n"), Error);
  CHECK_THROWS_WITH_AS(linalg::householder_product(A, randn({4}, float64)), doctest::Contains("tau (..., k) needs k <= n = 3, got shape (4,)"), Error);
  CHECK_THROWS_WITH_AS(linalg::householder_product(A, tau.to(float32)), doctest::Contains("tau is float32 but A is float64"), Error);
  CHECK_THROWS_WITH_AS(linalg::householder_product(A, randn({2, 2}, float64)), doctest::Contains("the batch dims of A"), Error);
}
