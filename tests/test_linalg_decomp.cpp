// tests/test_linalg_decomp.cpp - linalg::qr, eigh, eigvalsh, svd, svdvals, lstsq, pinv, matrix_rank, matrix_norm and
// cond: values against independent references (Gram-Schmidt in long double, closed-form spectra, matrices built from
// explicit Householder reflections with known singular values, normal equations), the factorizations' defining
// properties in every dtype, batch and empty shapes, gradients (gradcheck / gradgradcheck, real and complex, through
// functions that do not depend on the factors' sign or phase), errors. On a device: tests/test_cuda_linalg.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "test_util.hpp"

using namespace phasor;

namespace {

using cd = std::complex<double>;
using cld = std::complex<long double>;
using VT = std::vector<Tensor>;
using Fn = std::function<Tensor(const VT&)>;

/// batch + {rows, cols}.
Shape with_matrix(Shape batch, std::int64_t rows, std::int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

/// Tolerance of a dtype for results of order 1.
double tol(Dtype dt) { return dt == float32 || dt == complex64 ? 2e-5 : 1e-12; }

/// max |x - y| (moved to the CPU, as complex128).
double max_diff(const Tensor& x, const Tensor& y) {
  if (x.numel() == 0) return 0;
  return (x.detach().to(Device::cpu()).to(complex128) - y.detach().to(Device::cpu()).to(complex128)).abs().max().item<double>();
}

Tensor adj(const Tensor& t) { return t.transpose(-1, -2).conj(); }

/// max |Q^H Q - I| over the batch for Q (..., m, c).
double orthonormality_error(const Tensor& q) {
  const std::int64_t c = q.size(-1);
  return max_diff(matmul(adj(q), q), eye(c, std::nullopt, q.dtype()).expand(with_matrix(Shape(q.shape().begin(), q.shape().end() - 2), c, c)));
}

/// The unitary Householder reflection I - 2 v v^H / |v|^2 of a random v (n x n), built entry by entry.
Tensor householder(std::int64_t n, Dtype dt) {
  const Tensor v = cuda_test::sample({n, 1}, dt).to(complex128);
  const Tensor h = eye(n, std::nullopt, complex128) - matmul(v, adj(v)) * (2.0 / (v.abs().square().sum().item<double>()));
  return is_complex(dt) ? h.to(dt) : real(h).to(dt);
}

/// An m x n matrix with the given singular values: H1 diag(s) H2 with Householder reflections H1, H2 (a product of
/// two for each side, so no structure is left).
Tensor with_singular_values(std::int64_t m, std::int64_t n, const std::vector<double>& s, Dtype dt) {
  Tensor d = zeros({m, n}, float64);
  for (std::size_t i = 0; i < s.size(); ++i) d.select(0, static_cast<std::int64_t>(i)).select(0, static_cast<std::int64_t>(i)).fill_(s[i]);
  const Tensor u = matmul(householder(m, dt), householder(m, dt)), v = matmul(householder(n, dt), householder(n, dt));
  return matmul(matmul(u, d.to(dt)), v);
}

/// Gram-Schmidt (modified, long double) of the columns of a full-rank m x n (m >= n) matrix: Q (m x n) and R (n x n)
/// with a positive diagonal, row-major.
void gram_schmidt(const std::vector<cld>& a, std::int64_t m, std::int64_t n, std::vector<cld>& q, std::vector<cld>& r) {
  q = a;
  r.assign(static_cast<std::size_t>(n * n), cld(0));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < j; ++i) {
      cld dot = 0;
      for (std::int64_t p = 0; p < m; ++p) dot += std::conj(q[p * n + i]) * q[p * n + j];
      r[i * n + j] = dot;
      for (std::int64_t p = 0; p < m; ++p) q[p * n + j] -= dot * q[p * n + i];
    }
    long double nrm = 0;
    for (std::int64_t p = 0; p < m; ++p) nrm += std::norm(q[p * n + j]);
    nrm = std::sqrt(nrm);
    r[j * n + j] = nrm;
    for (std::int64_t p = 0; p < m; ++p) q[p * n + j] /= nrm;
  }
}

std::vector<cld> long_values(const Tensor& t) {
  const auto v = to_vector<cd>(t.to(complex128));
  return std::vector<cld>(v.begin(), v.end());
}

Tensor leaf(const Shape& s, Dtype dt) { return cuda_test::sample(s, dt).requires_grad_(); }

}  // namespace

TEST_CASE("linalg::lu_factor: LU and pivots agree with Doolittle's elimination with partial pivoting in long double") {
  manual_seed(74);
  for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 5}, {6, 4}, {4, 6}}) {
    CAPTURE(m);
    CAPTURE(n);
    const Tensor a = randn({m, n}, float64);
    std::vector<long double> r(static_cast<std::size_t>(m * n));
    const auto av = test::vals(a);
    std::copy(av.begin(), av.end(), r.begin());
    std::vector<std::int64_t> piv;
    for (std::int64_t j = 0; j < std::min(m, n); ++j) {
      std::int64_t p = j;
      for (std::int64_t i = j + 1; i < m; ++i)
        if (std::abs(r[i * n + j]) > std::abs(r[p * n + j])) p = i;
      piv.push_back(p + 1);
      for (std::int64_t c = 0; c < n; ++c) std::swap(r[j * n + c], r[p * n + c]);
      for (std::int64_t i = j + 1; i < m; ++i) {
        r[i * n + j] /= r[j * n + j];
        for (std::int64_t c = j + 1; c < n; ++c) r[i * n + c] -= r[i * n + j] * r[j * n + c];
      }
    }
    const auto [lu, pivots] = linalg::lu_factor(a);
    CHECK(test::ivals(pivots) == piv);
    const auto got = test::vals(lu);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - static_cast<double>(r[i])) <= 1e-12);
  }
}

TEST_CASE("linalg::lu_factor, lu, lu_unpack: P L U = A in every dtype and shape; singular matrices; empty; errors") {
  manual_seed(75);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
      for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 5}, {6, 3}, {3, 6}, {1, 4}}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(m);
        CAPTURE(n);
        const Tensor a = cuda_test::sample(with_matrix(batch, m, n), dt);
        const std::int64_t k = std::min(m, n);
        const auto [p, l, u] = linalg::lu(a);
        CHECK(p.shape() == with_matrix(batch, m, m));
        CHECK(l.shape() == with_matrix(batch, m, k));
        CHECK(u.shape() == with_matrix(batch, k, n));
        CHECK(max_diff(matmul(matmul(p, l), u), a) <= 10 * tol(dt));
        CHECK(max_diff(l, tril(l)) == 0.0);
        CHECK((diagonal(l, 0, -2, -1) == 1.0).all().item<bool>());
        CHECK(max_diff(u, triu(u)) == 0.0);
        CHECK(max_diff(matmul(p.transpose(-1, -2), p), eye(m, std::nullopt, dt).expand(with_matrix(batch, m, m))) == 0.0);
        // |L| <= 1 from partial pivoting; sqrt(2) for complex numbers (LAPACK compares |re| + |im|)
        CHECK(l.abs().max().item<double>() <= (is_complex(dt) ? std::sqrt(2.0) : 1.0) + 1e-6);
        const auto [lu, pivots] = linalg::lu_factor(a);
        const auto [p2, l2, u2] = linalg::lu_unpack(lu, pivots);
        CHECK(max_diff(p2, p) == 0.0);
        CHECK(max_diff(l2, l) == 0.0);
        CHECK(max_diff(u2, u) == 0.0);
      }
    }
  }
  // a singular matrix: lu_factor refuses it naming the batch element, lu_factor_ex flags it, lu factors it
  Tensor s = eye(3, std::nullopt, float64).expand({2, 3, 3}).contiguous();
  s.select(0, 1).select(1, 2).fill_(0.0);  // matrix 1's last column is zero
  CHECK_THROWS_WITH_AS(linalg::lu_factor(s), "[linalg_lu_factor] the matrix at batch index (1,) is singular: U's diagonal element 2 is zero", Error);
  const auto [lue, pe, info] = linalg::lu_factor_ex(s);
  CHECK(test::ivals(info) == std::vector<std::int64_t>{0, 3});
  const auto [ps, ls, us] = linalg::lu(s);
  CHECK(max_diff(matmul(matmul(ps, ls), us), s) == 0.0);
  // empty
  const auto [pz, lz, uz] = linalg::lu(zeros({2, 0, 3}, float32));
  CHECK(pz.shape() == Shape{2, 0, 0});
  CHECK(lz.shape() == Shape{2, 0, 0});
  CHECK(uz.shape() == Shape{2, 0, 3});
  CHECK(linalg::lu_factor(zeros({0, 4, 4}, complex64)).second.shape() == Shape{0, 4});
  CHECK_THROWS_WITH_AS(linalg::lu_factor(ones({3}, float64)), "[linalg_lu_factor] A must be a batch of matrices (..., m, n), got shape (3,)", Error);
  const auto [lu3, piv3] = linalg::lu_factor(randn({3, 3}, float64));
  CHECK_THROWS_WITH_AS(linalg::lu_unpack(lu3, piv3.to(float64)),
                       "[lu_unpack] pivots must be an int64 tensor (..., 3) for LU of shape (3, 3), got float64 (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::lu_unpack(lu3, from_vector(std::vector<std::int64_t>{1, 4, 3})),
                       "[lu_unpack] pivots must be in [1, 3], got 4 at position 1 of the matrix", Error);
}

TEST_CASE("linalg::lu_solve: every side and adjoint agree with solve; broadcasting; gradients of lu_factor, lu, lu_solve") {
  manual_seed(76);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double t = dt == float32 || dt == complex64 ? 1e-4 : 1e-12;
    const Tensor a = cuda_test::sample({2, 4, 4}, dt) + eye(4, std::nullopt, dt) * 3.0;
    const auto [lu, piv] = linalg::lu_factor(a);
    const Tensor b = cuda_test::sample({3, 1, 4, 2}, dt), br = cuda_test::sample({2, 4}, dt);
    CHECK(max_diff(linalg::lu_solve(lu, piv, b), linalg::solve(a, b)) <= t);
    CHECK(max_diff(linalg::lu_solve(lu, piv, b, true, true), linalg::solve(adj(a), b)) <= t);
    CHECK(max_diff(linalg::lu_solve(lu, piv, br, false), adj(linalg::solve(adj(a), adj(br)))) <= t);
    CHECK(max_diff(linalg::lu_solve(lu, piv, br, false, true), adj(linalg::solve(a, adj(br)))) <= t);
    CHECK(linalg::lu_solve(lu, piv, b).shape() == Shape{3, 2, 4, 2});
    // LAPACK's getrs (nothing to record) and the ops taken when a gradient is recorded agree
    for (bool left : {true, false})
      for (bool adjoint : {false, true}) {
        const Tensor rhs = left ? b : br;
        const Tensor plain = linalg::lu_solve(lu, piv, rhs, left, adjoint);
        const Tensor traced = linalg::lu_solve(lu.detach().clone().requires_grad_(), piv, rhs, left, adjoint);
        CHECK(max_diff(plain, traced) <= t);
      }
  }
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    for (const Shape& s : {Shape{2, 4, 4}, Shape{5, 3}, Shape{3, 5}}) {
      CAPTURE(s.back());
      CHECK(autodiff::gradcheck([](const VT& in) { return linalg::lu_factor(in[0]).first; }, {leaf(s, dt)}));
      CHECK(autodiff::gradcheck([](const VT& in) {
        const auto [p, l, u] = linalg::lu(in[0]);
        return matmul(l.abs().to(l.dtype()), u);  // L and U both used
      }, {leaf(s, dt)}));
    }
    const Tensor a = cuda_test::sample({4, 4}, dt) + eye(4, std::nullopt, dt) * 3.0;
    const Tensor piv = linalg::lu_factor(a).second;
    for (bool left : {true, false})
      for (bool adjoint : {false, true})
        CHECK(autodiff::gradcheck([&](const VT& in) { return linalg::lu_solve(in[0], piv, in[1], left, adjoint); },
                                  {linalg::lu_factor(a).first.detach().requires_grad_(), leaf({4, 4}, dt)}));
    CHECK(autodiff::gradgradcheck([](const VT& in) { return linalg::lu_factor(in[0]).first; }, {leaf({3, 3}, dt)}));
  }
  const auto [lu, piv] = linalg::lu_factor(randn({3, 3}, float64));
  CHECK_THROWS_WITH_AS(linalg::lu_solve(lu, piv, randn({4, 1}, float64)),
                       "[linalg_lu_solve] B of shape (4, 1) does not match LU of shape (3, 3) (B must be (..., 3, k))", Error);
  CHECK_THROWS_WITH_AS(linalg::lu_solve(lu, from_vector(std::vector<std::int64_t>{1, 0, 3}), randn({3, 1}, float64)),
                       "[linalg_lu_solve] pivots must be in [1, 3], got 0 at position 1 of the matrix", Error);
  CHECK_THROWS_WITH_AS(linalg::lu_solve(lu.detach().clone().requires_grad_(), from_vector(std::vector<std::int64_t>{1, 0, 3}), randn({3, 1}, float64)),
                       "[linalg_lu_solve] pivots must be in [1, 3], got 0 at position 1 of the matrix", Error);
  CHECK_THROWS_WITH_AS(linalg::lu_solve(randn({3, 4}, float64), piv, randn({3, 1}, float64)),
                       "[linalg_lu_solve] A must be a batch of square matrices (..., n, n), got shape (3, 4)", Error);
}

TEST_CASE("linalg::qr: Q and R agree with Gram-Schmidt in long double (up to the signs of R's rows)") {
  manual_seed(61);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const std::int64_t m = 6, n = 4;
    const Tensor a = cuda_test::sample({m, n}, dt);
    const auto [q, r] = linalg::qr(a);
    std::vector<cld> qr_ref, rr_ref;
    gram_schmidt(long_values(a), m, n, qr_ref, rr_ref);
    const auto qv = long_values(q), rv = long_values(r);
    for (std::int64_t i = 0; i < n; ++i) {
      // the phase of R's row i (LAPACK leaves R's diagonal real, of either sign)
      const cld d = rv[i * n + i] / std::abs(rv[i * n + i]);
      CHECK(std::abs(std::imag(rv[i * n + i])) == 0.0L);
      for (std::int64_t j = 0; j < n; ++j) CHECK(std::abs(std::conj(d) * rv[i * n + j] - rr_ref[i * n + j]) < 1e-12L);
      for (std::int64_t p = 0; p < m; ++p) CHECK(std::abs(qv[p * n + i] * d - qr_ref[p * n + i]) < 1e-12L);
    }
  }
}

TEST_CASE("linalg::qr: every mode, dtype and shape: Q R = A, Q orthonormal, R upper-trapezoidal; empty matrices") {
  manual_seed(62);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
      for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 3}, {3, 5}, {4, 4}, {1, 3}}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(m);
        CAPTURE(n);
        const Tensor a = cuda_test::sample(with_matrix(batch, m, n), dt);
        const std::int64_t k = std::min(m, n);
        for (const std::string mode : {"reduced", "complete"}) {
          CAPTURE(mode);
          const auto [q, r] = linalg::qr(a, mode);
          const std::int64_t c = mode == "complete" ? m : k;
          CHECK(q.shape() == with_matrix(batch, m, c));
          CHECK(r.shape() == with_matrix(batch, c, n));
          CHECK(q.dtype() == dt);
          CHECK(max_diff(matmul(q, r), a) <= 10 * tol(dt));
          CHECK(orthonormality_error(q) <= 10 * tol(dt));
          CHECK(max_diff(r, triu(r)) == 0.0);
        }
        const auto [q0, r0] = linalg::qr(a, "r");
        CHECK(q0.numel() == 0);
        CHECK(max_diff(r0, linalg::qr(a).second) == 0.0);
      }
    }
  }
  // empty: no rows, no columns, no matrices; the complete Q of a matrix without columns is the identity
  const auto [q1, r1] = linalg::qr(zeros({3, 0}, float64), "complete");
  CHECK(q1.shape() == Shape{3, 3});
  CHECK(max_diff(q1, eye(3, std::nullopt, float64)) == 0.0);
  CHECK(r1.shape() == Shape{3, 0});
  const auto [q2, r2] = linalg::qr(zeros({2, 0, 4}, float32));
  CHECK(q2.shape() == Shape{2, 0, 0});
  CHECK(r2.shape() == Shape{2, 0, 4});
  const auto [q3, r3] = linalg::qr(zeros({0, 5, 3}, complex64));
  CHECK(q3.shape() == Shape{0, 5, 3});
  CHECK(r3.shape() == Shape{0, 3, 3});
}

TEST_CASE("linalg::qr gradients: reduced (tall, square, wide), complete (wide), mode r; the refused case") {
  manual_seed(63);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Fn q_of = [](const VT& in) { return linalg::qr(in[0]).first; };
    const Fn r_of = [](const VT& in) { return linalg::qr(in[0]).second; };
    const Fn both = [](const VT& in) { const auto [q, r] = linalg::qr(in[0]); return q.sum() * 0.5 + r.sum(); };
    for (const Shape& s : {Shape{4, 3}, Shape{2, 3, 3}, Shape{3, 5}}) {
      CAPTURE(s.size());
      CAPTURE(s.back());
      CHECK(autodiff::gradcheck(q_of, {leaf(s, dt)}));
      CHECK(autodiff::gradcheck(r_of, {leaf(s, dt)}));
      CHECK(autodiff::gradcheck(both, {leaf(s, dt)}));
    }
    CHECK(autodiff::gradcheck([](const VT& in) { const auto [q, r] = linalg::qr(in[0], "complete"); return matmul(q, r.abs().to(q.dtype())); },
                              {leaf({3, 4}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::qr(in[0], "r").second; }, {leaf({5, 3}, dt)}));
    CHECK(autodiff::gradgradcheck(both, {leaf({4, 3}, dt)}));
  }
  const Tensor x = leaf({4, 2}, float64);
  const Tensor q = linalg::qr(x, "complete").first;
  CHECK_THROWS_WITH_AS(q.sum().backward(),
                       "[linalg_qr] the gradient of mode \"complete\" with more rows than columns (4 > 2) is not defined: Q's last columns are not unique; use mode \"reduced\"",
                       Error);
}

TEST_CASE("linalg::eigh, eigvalsh: a closed-form spectrum; V diag(w) V^H = A in every dtype; UPLO; empty") {
  // the tridiagonal Toeplitz matrix (2 on the diagonal, -1 beside it): w_k = 2 - 2 cos(k pi / (n + 1)),
  // v_k(j) = sin(j k pi / (n + 1)) up to scale
  const std::int64_t n = 7;
  std::vector<double> t(n * n, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    t[i * n + i] = 2;
    if (i + 1 < n) t[i * n + i + 1] = t[(i + 1) * n + i] = -1;
  }
  const Tensor a = from_vector(t).reshape({n, n});
  const auto [w, v] = linalg::eigh(a);
  const double pi = std::acos(-1.0);
  for (std::int64_t k = 1; k <= n; ++k) {
    CHECK(test::vals(w)[k - 1] == doctest::Approx(2 - 2 * std::cos(k * pi / (n + 1))).epsilon(1e-14));
    std::vector<double> ref(n);
    double nrm = 0;
    for (std::int64_t j = 0; j < n; ++j) nrm += (ref[j] = std::sin((j + 1) * k * pi / (n + 1))) * ref[j];
    double dot = 0;
    for (std::int64_t j = 0; j < n; ++j) dot += v.select(-1, k - 1).select(0, j).item<double>() * ref[j] / std::sqrt(nrm);
    CHECK(std::abs(dot) == doctest::Approx(1.0).epsilon(1e-13));
  }
  CHECK(max_diff(linalg::eigvalsh(a), w) <= 1e-14);  // without vectors LAPACK takes another path

  manual_seed(64);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
      CAPTURE(dtype_name(dt));
      const Tensor g = cuda_test::sample(with_matrix(batch, 5, 5), dt);
      const Tensor h = g + adj(g);
      for (const std::string uplo : {"L", "U"}) {
        CAPTURE(uplo);
        // only the named triangle is read
        const Tensor given = uplo == "L" ? tril(h) : triu(h);
        const auto [wv, vv] = linalg::eigh(given, uplo);
        CHECK(wv.dtype() == to_real(dt));
        CHECK(wv.shape() == [&] { Shape s = batch; s.push_back(5); return s; }());
        CHECK(max_diff(matmul(vv * wv.to(dt).unsqueeze(-2), adj(vv)), h) <= 20 * tol(dt));
        CHECK(orthonormality_error(vv) <= 20 * tol(dt));
        CHECK((wv.narrow(-1, 1, 4) >= wv.narrow(-1, 0, 4)).all().item<bool>());
        CHECK(max_diff(linalg::eigvalsh(given, uplo), wv) <= 10 * tol(dt));
      }
    }
  }
  const auto [we, ve] = linalg::eigh(zeros({2, 0, 0}, float64));
  CHECK(we.shape() == Shape{2, 0});
  CHECK(ve.shape() == Shape{2, 0, 0});
  CHECK(linalg::eigvalsh(zeros({0, 3, 3}, complex64)).shape() == Shape{0, 3});
}

TEST_CASE("linalg::eigh, eigvalsh gradients (Hermitian inputs), and the errors") {
  manual_seed(65);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const auto herm = [](const Tensor& x) { return x + x.transpose(-1, -2).conj(); };
    CHECK(autodiff::gradcheck([&](const VT& in) { return linalg::eigvalsh(herm(in[0])); }, {leaf({2, 4, 4}, dt)}));
    CHECK(autodiff::gradcheck([&](const VT& in) { return linalg::eigh(herm(in[0])).first; }, {leaf({4, 4}, dt)}));
    // functions of the eigenvectors that do not depend on their sign (phase)
    CHECK(autodiff::gradcheck([&](const VT& in) { return linalg::eigh(herm(in[0])).second.abs(); }, {leaf({2, 4, 4}, dt)}));
    CHECK(autodiff::gradcheck([&](const VT& in) {
      const auto [w, v] = linalg::eigh(herm(in[0]));
      const Tensor top = v.narrow(-1, 2, 2);
      return matmul(top, adj(top));  // the projector on the top two eigenvectors
    }, {leaf({4, 4}, dt)}));
    CHECK(autodiff::gradgradcheck([&](const VT& in) { return linalg::eigvalsh(herm(in[0])); }, {leaf({3, 3}, dt)}));
  }
  CHECK_THROWS_WITH_AS(linalg::eigh(ones({2, 3}, float64)), "[linalg_eigh] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::eigh(eye(2, std::nullopt, float64), "X"), "[linalg_eigh] UPLO must be \"L\" or \"U\", got \"X\"", Error);
  CHECK_THROWS_WITH_AS(linalg::eigvalsh(eye(2, std::nullopt, int64)), "[linalg_eigvalsh] A must be a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::eigvalsh(Tensor()), "[linalg_eigvalsh] A is undefined", Error);
}

TEST_CASE("linalg::svd, svdvals: known singular values; U diag(S) Vh = A in every dtype, full and reduced; empty") {
  manual_seed(66);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const std::vector<double> s_ref{5.0, 2.5, 1.0, 0.25};
    for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{6, 4}, {4, 7}, {4, 4}}) {
      CAPTURE(m);
      CAPTURE(n);
      const Tensor a = with_singular_values(m, n, s_ref, dt);
      const Tensor s = linalg::svdvals(a);
      CHECK(s.dtype() == to_real(dt));
      for (std::size_t i = 0; i < s_ref.size(); ++i) CHECK(test::vals(s)[i] == doctest::Approx(s_ref[i]).epsilon(20 * tol(dt)));
    }
    for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
      for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 3}, {3, 5}, {4, 4}, {1, 3}}) {
        for (bool full : {true, false}) {
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(full);
          const Tensor a = cuda_test::sample(with_matrix(batch, m, n), dt);
          const auto [u, s, vh] = linalg::svd(a, full);
          const std::int64_t k = std::min(m, n);
          CHECK(u.shape() == with_matrix(batch, m, full ? m : k));
          CHECK(vh.shape() == with_matrix(batch, full ? n : k, n));
          CHECK(max_diff(matmul(u.narrow(-1, 0, k) * s.to(dt).unsqueeze(-2), vh.narrow(-2, 0, k)), a) <= 20 * tol(dt));
          CHECK(orthonormality_error(u) <= 20 * tol(dt));
          CHECK(orthonormality_error(adj(vh)) <= 20 * tol(dt));
          CHECK(s.min().item<double>() >= 0.0);
          if (k > 1) CHECK((s.narrow(-1, 1, k - 1) <= s.narrow(-1, 0, k - 1)).all().item<bool>());
          CHECK(max_diff(linalg::svdvals(a), s) <= 10 * tol(dt));
        }
      }
    }
  }
  // the sum of squares of the singular values is the squared Frobenius norm
  const Tensor g = randn({7, 5}, float64);
  CHECK(linalg::svdvals(g).square().sum().item<double>() == doctest::Approx(g.square().sum().item<double>()).epsilon(1e-13));
  const auto [ue, se, vhe] = linalg::svd(zeros({3, 0}, float64));
  CHECK(max_diff(ue, eye(3, std::nullopt, float64)) == 0.0);
  CHECK(se.shape() == Shape{0});
  CHECK(vhe.shape() == Shape{0, 0});
  const auto [ur, sr, vhr] = linalg::svd(zeros({2, 0, 4}, complex64), false);
  CHECK(ur.shape() == Shape{2, 0, 0});
  CHECK(vhr.shape() == Shape{2, 0, 4});
  CHECK(linalg::svdvals(zeros({0, 3, 2}, float32)).shape() == Shape{0, 2});
  CHECK_THROWS_WITH_AS(linalg::svd(ones({3}, float64)), "[linalg_svd] A must be a batch of matrices (..., m, n), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::svdvals(ones({2, 2}, int64)), "[linalg_svdvals] A must be a floating or complex tensor, got int64", Error);
}

TEST_CASE("linalg::svd, svdvals gradients: values, phase-free functions of U and Vh, full matrices; second order") {
  manual_seed(67);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    for (const Shape& s : {Shape{4, 3}, Shape{3, 5}, Shape{2, 3, 3}}) {
      CAPTURE(s.size());
      CAPTURE(s.back());
      CHECK(autodiff::gradcheck([](const VT& in) { return linalg::svdvals(in[0]); }, {leaf(s, dt)}));
      CHECK(autodiff::gradcheck([](const VT& in) { return std::get<0>(linalg::svd(in[0], false)).abs(); }, {leaf(s, dt)}));
      CHECK(autodiff::gradcheck([](const VT& in) { return std::get<2>(linalg::svd(in[0], false)).abs(); }, {leaf(s, dt)}));
      // the rank-2 truncation U_2 S_2 Vh_2: every factor used, no phase left
      CHECK(autodiff::gradcheck([](const VT& in) {
        const auto [u, sv, vh] = linalg::svd(in[0], false);
        return matmul(u.narrow(-1, 0, 2) * sv.narrow(-1, 0, 2).to(u.dtype()).unsqueeze(-2), vh.narrow(-2, 0, 2));
      }, {leaf(s, dt)}));
      // with full matrices the first k columns carry the gradient
      CHECK(autodiff::gradcheck([](const VT& in) {
        const auto [u, sv, vh] = linalg::svd(in[0], true);
        const std::int64_t k = sv.size(-1);
        return matmul(u.narrow(-1, 0, 1), vh.narrow(-2, 0, 1)) + matmul(u.narrow(-1, 0, k) * sv.to(u.dtype()).unsqueeze(-2), vh.narrow(-2, 0, k));
      }, {leaf(s, dt)}));
    }
    CHECK(autodiff::gradgradcheck([](const VT& in) { return linalg::svdvals(in[0]); }, {leaf({3, 2}, dt)}));
  }
}

TEST_CASE("linalg::eig, eigvals: closed-form spectra; A V = V diag(L); a real matrix's conjugate pairs; empty") {
  // min over mu of |lambda - mu|, for each lambda of `want`, over the computed values (order is LAPACK's)
  const auto matches = [](const Tensor& got, const std::vector<cd>& want) {
    const auto g = to_vector<cd>(got.to(complex128));
    REQUIRE(g.size() == want.size());
    double worst = 0;
    for (const cd& w : want) {
      double best = 1e300;
      for (const cd& x : g) best = std::min(best, std::abs(x - w));
      worst = std::max(worst, best);
    }
    return worst;
  };
  const double th = 0.3;
  const Tensor rot = from_vector(std::vector<double>{std::cos(th), -std::sin(th), std::sin(th), std::cos(th)}).reshape({2, 2});
  CHECK(matches(linalg::eigvals(rot), {std::polar(1.0, th), std::polar(1.0, -th)}) <= 1e-15);
  // the companion matrix of (x - 1)(x - 2)(x - 3)(x + 4) = x^4 - 2x^3 - 13x^2 + 38x - 24
  const Tensor comp = from_vector(std::vector<double>{2, 13, -38, 24, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}).reshape({4, 4});
  CHECK(matches(linalg::eigvals(comp), {1.0, 2.0, 3.0, -4.0}) <= 1e-12);
  // a triangular matrix's eigenvalues are its diagonal
  const Tensor tri = triu(randn({5, 5}, complex128)) + diag_embed(from_vector(std::vector<cd>{1, 2, 3, 4, 5}));
  CHECK(matches(linalg::eigvals(tri), {diagonal(tri).to(complex128).select(0, 0).item<cd>(), diagonal(tri).select(0, 1).item<cd>(),
                                       diagonal(tri).select(0, 2).item<cd>(), diagonal(tri).select(0, 3).item<cd>(),
                                       diagonal(tri).select(0, 4).item<cd>()}) <= 1e-12);
  manual_seed(72);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = cuda_test::sample({2, 3, 6, 6}, dt);
    const auto [l, v] = linalg::eig(a);
    CHECK(l.dtype() == to_complex(dt));
    CHECK(v.dtype() == to_complex(dt));
    CHECK(l.shape() == Shape{2, 3, 6});
    CHECK(max_diff(matmul(a.to(to_complex(dt)), v), v * l.unsqueeze(-2)) <= 50 * tol(dt));
    CHECK(max_diff(v.abs().square().sum({-2}), ones({2, 3, 6}, to_real(dt))) <= 10 * tol(dt));
    CHECK(max_diff(linalg::eigvals(a), l) == 0.0);
    if (!is_complex(dt)) {  // the spectrum of a real matrix is closed under conjugation
      for (std::int64_t i = 0; i < 6; ++i) {
        const Tensor li = l.select(-1, i).unsqueeze(-1);
        CHECK(max_diff((l - li.conj()).abs().amin({-1}), zeros({2, 3}, to_real(dt))) <= 10 * tol(dt));
      }
    }
  }
  const auto [le, ve] = linalg::eig(zeros({0, 3, 3}, float64));
  CHECK(le.shape() == Shape{0, 3});
  CHECK(ve.shape() == Shape{0, 3, 3});
  CHECK(linalg::eigvals(zeros({0, 0}, complex64)).shape() == Shape{0});
  CHECK_THROWS_WITH_AS(linalg::eig(ones({2, 3}, float64)), "[linalg_eig] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::eigvals(ones({2, 2}, int64)), "[linalg_eigvals] A must be a floating or complex tensor, got int64", Error);
}

TEST_CASE("linalg::eig, eigvals gradients: real and complex matrices, phase-free functions of the eigenvectors") {
  manual_seed(73);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::eigvals(in[0]); }, {leaf({2, 4, 4}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::eig(in[0]).second.abs(); }, {leaf({4, 4}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) {
      const auto [l, v] = linalg::eig(in[0]);
      return v.abs().square() * l.unsqueeze(-2);  // both outputs
    }, {leaf({2, 3, 3}, dt)}));
    CHECK(autodiff::gradgradcheck([](const VT& in) { return linalg::eigvals(in[0]); }, {leaf({3, 3}, dt)}));
  }
}

TEST_CASE("linalg::lstsq: normal equations, least norm, rank-deficient; residuals, rank, singular values; drivers") {
  manual_seed(68);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double t = dt == float32 || dt == complex64 ? 2e-4 : 1e-10;
    // tall, full rank: X = (A^H A)^{-1} A^H B
    const Tensor a = cuda_test::sample({2, 6, 3}, dt), b = cuda_test::sample({2, 6, 2}, dt);
    const Tensor x_ref = linalg::solve(matmul(adj(a), a), matmul(adj(a), b));
    for (const std::string driver : {"gels", "gelsy", "gelsd", "gelss"}) {
      CAPTURE(driver);
      const auto r = linalg::lstsq(a, b, std::nullopt, driver);
      CHECK(max_diff(r.solution, x_ref) <= t);
      if (driver == "gelsy" || driver == "gels") {
        CHECK(r.residuals.numel() == (driver == "gels" ? 4 : 0));
      }
      if (driver != "gelsy") {
        CHECK(r.residuals.shape() == Shape{2, 2});
        CHECK(max_diff(r.residuals, (matmul(a, x_ref) - b).abs().square().sum({-2})) <= t * 10);
      }
      if (driver != "gels") CHECK(test::ivals(r.rank) == std::vector<std::int64_t>{3, 3});
      else CHECK(r.rank.numel() == 0);
      CHECK(r.singular_values.numel() == (driver == "gelsd" || driver == "gelss" ? 6 : 0));
    }
    // wide, full rank: the least-norm solution A^H (A A^H)^{-1} B
    const Tensor w = cuda_test::sample({3, 5}, dt), bw = cuda_test::sample({3}, dt);
    const Tensor xw_ref = matmul(adj(w), linalg::solve(matmul(w, adj(w)), bw));
    CHECK(max_diff(linalg::lstsq(w, bw).solution, xw_ref) <= t);
    CHECK(max_diff(linalg::lstsq(w, bw, std::nullopt, "gels").solution, xw_ref) <= t);
    CHECK(linalg::lstsq(w, bw).solution.shape() == Shape{5});
  }
  // rank-deficient (rank 2 of 4 columns): the least-norm solution is pinv(A) B, the rank 2, no residuals
  const Tensor a = with_singular_values(6, 4, {3.0, 1.0}, float64), b = randn({6, 2}, float64);
  const auto r = linalg::lstsq(a, b, std::nullopt, "gelsd");
  CHECK(test::ivals(r.rank) == std::vector<std::int64_t>{2});
  CHECK(max_diff(r.solution, matmul(linalg::pinv(a), b)) <= 1e-12);
  CHECK(r.residuals.numel() == 0);
  CHECK(test::vals(r.singular_values)[0] == doctest::Approx(3.0));
  // LAPACK's drivers (no gradient) and the ops taken when a gradient is recorded: the same least-norm solution and rank
  for (const std::string driver : {"gelsy", "gelsd", "gelss"}) {
    CAPTURE(driver);
    const auto plain = linalg::lstsq(a, b, std::nullopt, driver);
    const auto traced = linalg::lstsq(a.detach().clone().requires_grad_(), b, std::nullopt, driver);
    CHECK(max_diff(plain.solution, traced.solution) <= 1e-12);
    CHECK(test::ivals(plain.rank) == test::ivals(traced.rank));
    CHECK(max_diff(plain.singular_values, traced.singular_values) <= 1e-12);
  }
  const Tensor tall = randn({2, 7, 3}, complex128), rhs = randn({2, 7, 2}, complex128);
  for (const std::string driver : {"gels", "gelsd", "gelss"}) {
    CAPTURE(driver);
    const auto plain = linalg::lstsq(tall, rhs, std::nullopt, driver);
    const auto traced = linalg::lstsq(tall.detach().clone().requires_grad_(), rhs, std::nullopt, driver);
    CHECK(max_diff(plain.solution, traced.solution) <= 1e-12);
    CHECK(max_diff(plain.residuals, traced.residuals) <= 1e-12);
  }
  // rcond decides the rank
  CHECK(test::ivals(linalg::lstsq(a, b, 0.5, "gelsd").rank) == std::vector<std::int64_t>{1});
  // broadcast batch dims and promoted dtypes
  const auto rb = linalg::lstsq(randn({3, 1, 5, 2}, float64), randn({4, 5, 3}, float32));
  CHECK(rb.solution.shape() == Shape{3, 4, 2, 3});
  CHECK(rb.solution.dtype() == float64);
  // gradients, through QR and through the SVD
  for (Dtype dt : {float64, complex128}) {
    for (const std::string driver : {"gels", "gelsd"}) {
      CAPTURE(driver);
      CHECK(autodiff::gradcheck([driver](const VT& in) { return linalg::lstsq(in[0], in[1], std::nullopt, driver).solution; },
                                {leaf({5, 3}, dt), leaf({5, 2}, dt)}));
      CHECK(autodiff::gradcheck([driver](const VT& in) { return linalg::lstsq(in[0], in[1], std::nullopt, driver).solution; },
                                {leaf({2, 4}, dt), leaf({2, 2}, dt)}));
    }
  }
  CHECK_THROWS_WITH_AS(linalg::lstsq(a, b, std::nullopt, "gelsx"),
                       "[linalg_lstsq] driver must be \"gels\", \"gelsy\", \"gelsd\" or \"gelss\", got \"gelsx\"", Error);
  CHECK_THROWS_WITH_AS(linalg::lstsq(a, randn({5, 2}, float64)),
                       "[linalg_lstsq] B of shape (5, 2) does not match A of shape (6, 4) (B must be (..., 6, k) or (..., 6))", Error);
  CHECK_THROWS_WITH_AS(linalg::lstsq(a, ones({6, 1}, int64)), "[linalg_lstsq] B must be a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::lstsq(a, b, -1.0), "[linalg_lstsq] rcond must be >= 0, got -1.000000", Error);
  // LAPACK's gels and the QR made of ops (taken when a gradient is recorded) refuse a rank-deficient A alike
  // (a second column of zeros: R's second diagonal element is exactly 0)
  const Tensor deficient = from_vector(std::vector<double>{1, 0, 2, 0, 3, 0}).reshape({3, 2});
  for (bool grad : {false, true})
    CHECK_THROWS_WITH_AS(linalg::lstsq(deficient.clone().requires_grad_(grad), ones({3, 1}, float64), std::nullopt, "gels"),
                         "[linalg_lstsq] driver \"gels\" needs A of full rank: the matrix is singular: its diagonal element 1 is zero", Error);
  CHECK_THROWS_WITH_AS(linalg::lstsq(stack({eye(3, 2, float64), deficient}), ones({2, 3, 1}, float64), std::nullopt, "gels"),
                       "[linalg_lstsq] driver \"gels\" needs A of full rank: the matrix at batch index (1,) is singular: its diagonal element 1 is zero", Error);
}

TEST_CASE("linalg::pinv and matrix_rank: the Penrose conditions, Hermitian inputs, tolerances; gradients") {
  manual_seed(69);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double t = dt == float32 || dt == complex64 ? 1e-4 : 1e-11;
    for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 3}, {3, 5}}) {
      const Tensor a = with_singular_values(m, n, {2.0, 1.0}, dt);  // rank 2
      const Tensor p = linalg::pinv(a);
      CHECK(p.shape() == Shape{n, m});
      CHECK(max_diff(matmul(matmul(a, p), a), a) <= t);
      CHECK(max_diff(matmul(matmul(p, a), p), p) <= t);
      CHECK(max_diff(adj(matmul(a, p)), matmul(a, p)) <= t);
      CHECK(max_diff(adj(matmul(p, a)), matmul(p, a)) <= t);
      CHECK(test::ivals(linalg::matrix_rank(a)) == std::vector<std::int64_t>{2});
      CHECK(test::ivals(linalg::matrix_rank(a, 1.5)) == std::vector<std::int64_t>{1});
      CHECK(test::ivals(linalg::matrix_rank(a, std::nullopt, 0.6)) == std::vector<std::int64_t>{1});
    }
    const Tensor g = cuda_test::sample({2, 4, 4}, dt);
    const Tensor h = g + adj(g);
    CHECK(max_diff(linalg::pinv(h, std::nullopt, std::nullopt, true), linalg::pinv(h)) <= t * 10);
    CHECK(test::ivals(linalg::matrix_rank(h, std::nullopt, std::nullopt, true)) == test::ivals(linalg::matrix_rank(h)));
  }
  CHECK(linalg::pinv(zeros({2, 3, 0}, float64)).shape() == Shape{2, 0, 3});
  CHECK(test::ivals(linalg::matrix_rank(zeros({2, 0, 3}, float64))) == std::vector<std::int64_t>{0, 0});
  CHECK(test::ivals(linalg::matrix_rank(zeros({3, 3}, float64))) == std::vector<std::int64_t>{0});
  for (Dtype dt : {float64, complex128}) {
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::pinv(in[0]); }, {leaf({4, 3}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::pinv(in[0] + adj(in[0]), std::nullopt, std::nullopt, true); }, {leaf({3, 3}, dt)}));
  }
  CHECK_THROWS_WITH_AS(linalg::pinv(ones({2, 3}, float64), std::nullopt, std::nullopt, true),
                       "[linalg_pinv] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
}

TEST_CASE("linalg::matrix_norm and cond: closed forms for every ord; keepdim; gradients; errors") {
  manual_seed(70);
  const Tensor a = with_singular_values(5, 3, {4.0, 2.0, 0.5}, float64);
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(linalg::matrix_norm(a).item<double>() == doctest::Approx(std::sqrt(16 + 4 + 0.25)).epsilon(1e-13));
  CHECK(linalg::matrix_norm(a, "nuc").item<double>() == doctest::Approx(6.5).epsilon(1e-13));
  CHECK(linalg::matrix_norm(a, 2).item<double>() == doctest::Approx(4.0).epsilon(1e-13));
  CHECK(linalg::matrix_norm(a, -2).item<double>() == doctest::Approx(0.5).epsilon(1e-13));
  // 1 / -1: the largest / smallest column sum of |A|; inf / -inf: the row sums
  const Tensor m = from_vector(std::vector<double>{1, -2, 3, -4, 5, -6}).reshape({2, 3});
  CHECK(linalg::matrix_norm(m, 1).item<double>() == 9.0);
  CHECK(linalg::matrix_norm(m, -1).item<double>() == 5.0);
  CHECK(linalg::matrix_norm(m, inf).item<double>() == 15.0);
  CHECK(linalg::matrix_norm(m, -inf).item<double>() == 6.0);
  CHECK(linalg::matrix_norm(randn({2, 3, 4}, float32), "fro", true).shape() == Shape{2, 1, 1});
  CHECK(linalg::matrix_norm(randn({2, 3, 4}, complex64), 2).shape() == Shape{2});
  CHECK(linalg::matrix_norm(randn({2, 3, 4}, complex64), 2).dtype() == float32);
  CHECK(linalg::cond(a).item<double>() == doctest::Approx(8.0).epsilon(1e-13));
  CHECK(linalg::cond(a, -2.0).item<double>() == doctest::Approx(1.0 / 8).epsilon(1e-13));
  const Tensor sq = randn({3, 3}, float64) + eye(3, std::nullopt, float64) * 3.0;
  for (double p : {1.0, -1.0, inf, -inf})
    CHECK(linalg::cond(sq, p).item<double>() ==
          doctest::Approx(linalg::matrix_norm(sq, p).item<double>() * linalg::matrix_norm(linalg::inv(sq), p).item<double>()).epsilon(1e-13));
  CHECK(linalg::cond(sq, "fro").item<double>() ==
        doctest::Approx((linalg::matrix_norm(sq) * linalg::matrix_norm(linalg::inv(sq))).item<double>()).epsilon(1e-13));
  CHECK(linalg::cond(eye(4, std::nullopt, complex128), "nuc").item<double>() == doctest::Approx(16.0));
  for (Dtype dt : {float64, complex128}) {
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::matrix_norm(in[0], "nuc"); }, {leaf({4, 3}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::matrix_norm(in[0], 2); }, {leaf({3, 4}, dt)}));
    CHECK(autodiff::gradcheck([](const VT& in) { return linalg::cond(in[0]); }, {leaf({2, 3, 3}, dt)}));
  }
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(a, "max"), "[linalg_matrix_norm] ord must be \"fro\" or \"nuc\" (or a number), got \"max\"", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(a, 3), "[linalg_matrix_norm] ord must be 2, -2, 1, -1, inf or -inf (or \"fro\", \"nuc\"), got 3.000000", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_norm(zeros({0, 3}, float64), 2), "[linalg_matrix_norm] ord 2.000000 of an empty matrix (shape (0, 3)) is not defined", Error);
  CHECK_THROWS_WITH_AS(linalg::cond(a, 1.0), "[linalg_cond] this norm needs square matrices, got shape (5, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::cond(a, "max"), "[linalg_cond] p must be \"fro\" or \"nuc\" (or a number), got \"max\"", Error);
  CHECK_THROWS_WITH_AS(linalg::qr(a, "full"), "[linalg_qr] mode must be \"reduced\", \"complete\" or \"r\", got \"full\"", Error);
  // a dim past the libraries' int range (an expanded view: nothing allocated)
  CHECK_THROWS_WITH_AS(linalg::svdvals(zeros({1, 1}, float64).expand({1, std::int64_t(1) << 31})),
                       "[linalg_svdvals] matrices of shape (1, 2147483648) exceed LAPACK's and cuSOLVER's int index range", Error);
}
