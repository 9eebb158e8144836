// tests/test_linalg_functions.cpp - linalg::matrix_exp (closed forms, a long-double scaled Taylor reference on
// every Pade degree, eigh of symmetric matrices, complex, float32, batches, empty), matrix_power (vs repeated
// matmul and inv, int64), multi_dot (vs left-to-right products, the order it picks), vector_norm (every ord vs
// hand computations, dims, keepdim, complex), vecdot (vs sum(conj(x) y), broadcasting): values, gradients
// (gradcheck / gradgradcheck, real and complex) and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <phasor/dispatch.hpp>
#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"
#include "test_util.hpp"

using namespace phasor;

namespace {

using cd = std::complex<double>;
using cld = std::complex<long double>;
using VT = std::vector<Tensor>;
using Mat = std::vector<cld>;  // an n x n matrix, row-major
const double kInf = std::numeric_limits<double>::infinity();

/// A standard-normal sample of dtype dt (complex: both parts) that requires grad.
Tensor leaf(const Shape& s, Dtype dt) { return cuda_test::sample(s, dt).requires_grad_(); }

/// The values of t (any dtype, on the CPU) as complex long double, row-major.
Mat values(const Tensor& t) {
  const auto v = to_vector<cd>(t.detach().to(complex128));
  return Mat(v.begin(), v.end());
}

/// a b for n x n matrices.
Mat mat_mul(const Mat& a, const Mat& b, std::int64_t n) {
  Mat c(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k)
      for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

/// exp of an n x n matrix in long double: A / 2^s with ||A / 2^s||_1 <= 1/8, its Taylor series to 40 terms,
/// squared s times (an independent reference: no Pade approximant).
Mat expm_reference(Mat a, std::int64_t n) {
  long double norm = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    long double col = 0;
    for (std::int64_t i = 0; i < n; ++i) col += std::abs(a[i * n + j]);
    norm = std::max(norm, col);
  }
  int s = 0;
  while (norm > 0.125L) norm /= 2, ++s;
  for (auto& v : a) v = std::ldexp(v.real(), -s) + cld(0, 1) * std::ldexp(v.imag(), -s);
  Mat result(static_cast<std::size_t>(n * n)), term(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i) result[i * n + i] = term[i * n + i] = 1;
  for (int k = 1; k <= 40; ++k) {
    term = mat_mul(term, a, n);
    for (auto& v : term) v /= static_cast<long double>(k);
    for (std::size_t i = 0; i < result.size(); ++i) result[i] += term[i];
  }
  for (int i = 0; i < s; ++i) result = mat_mul(result, result, n);
  return result;
}

/// max |got - want| / max |want| over the elements (got a CPU tensor, want row-major).
double rel_err(const Tensor& got, const Mat& want) {
  const Mat g = values(got);
  REQUIRE(g.size() == want.size());
  long double d = 0, m = 0;
  for (std::size_t i = 0; i < g.size(); ++i) d = std::max(d, std::abs(g[i] - want[i])), m = std::max(m, std::abs(want[i]));
  return static_cast<double>(d / std::max(m, 1e-300L));
}

/// max |a - b| / max |b| of two tensors (compared in complex128).
double rel_err(const Tensor& a, const Tensor& b) { return rel_err(a, values(b)); }

/// The 1-norm (largest column sum of |A|) of one n x n matrix.
double norm1(const Tensor& a) { return abs(a.detach()).sum({-2}).amax().item<double>(); }

/// Every matrix of a batch (..., n, n) against expm_reference, within tol.
void check_against_reference(const Tensor& a, double tol) {
  const std::int64_t n = a.size(-1);
  const Tensor e = linalg::matrix_exp(a);
  REQUIRE(e.shape() == a.shape());
  CHECK(e.dtype() == a.dtype());
  const Tensor flat_a = a.reshape({-1, n, n}), flat_e = e.reshape({-1, n, n});
  for (std::int64_t b = 0; b < flat_a.size(0); ++b) {
    CAPTURE(b);
    CHECK(rel_err(flat_e.select(0, b), expm_reference(values(flat_a.select(0, b)), n)) <= tol);
  }
}

/// Records the shapes of the operands of every matmul call.
struct MatmulShapes : OpObserver {
  std::vector<std::pair<Shape, Shape>> calls;
  void on_begin(const OpEvent& e) override {
    if (std::string(e.name) == "matmul" && e.inputs->size() == 2) calls.emplace_back((*e.inputs)[0].shape(), (*e.inputs)[1].shape());
  }
};

/// The product of `ts` from left to right with plain matmul.
Tensor left_to_right(const VT& ts) {
  Tensor r = ts[0];
  for (std::size_t i = 1; i < ts.size(); ++i) r = matmul(r, ts[i]);
  return r;
}

}  // namespace

// ---- matrix_exp -------------------------------------------------------------------------------------------------

TEST_CASE("linalg::matrix_exp: closed forms (diagonal, nilpotent, rotation generator, Pauli matrices)") {
  // diagonal: exp of the diagonal (norm 7: squarings)
  const std::vector<double> d = {-3, 0.5, 2, 7};
  const Tensor e = linalg::matrix_exp(diag(from_vector(d)));
  std::vector<double> want(16, 0.0);
  for (int i = 0; i < 4; ++i) want[i * 5] = std::exp(d[i]);
  test::check_close(e, want, 1e-14);

  // nilpotent (N^3 = 0): I + N + N^2 / 2
  const Tensor n = from_vector<double>({0, 1, 2, 0, 0, 3, 0, 0, 0}).reshape({3, 3});
  test::check_close(linalg::matrix_exp(n), {1, 1, 3.5, 0, 1, 3, 0, 0, 1}, 1e-15);
  const Tensor n4 = from_vector<double>({0, 2, -1, 4, 0, 0, 3, 1, 0, 0, 0, -2, 0, 0, 0, 0}).reshape({4, 4});
  const Tensor n4_2 = matmul(n4, n4), n4_3 = matmul(n4_2, n4);
  CHECK(rel_err(linalg::matrix_exp(n4), eye(4, std::nullopt, float64) + n4 + n4_2 / 2.0 + n4_3 / 6.0) <= 1e-15);

  // rotation generator [[0, -t], [t, 0]] -> [[cos t, -sin t], [sin t, cos t]], with and without squarings
  for (double t : {0.01, 0.3, 2.0, 10.0, 100.0}) {
    CAPTURE(t);
    const Tensor r = linalg::matrix_exp(from_vector<double>({0, -t, t, 0}).reshape({2, 2}));
    const std::vector<double> rot = {std::cos(t), -std::sin(t), std::sin(t), std::cos(t)};
    const auto got = test::vals(r);
    for (int i = 0; i < 4; ++i) CHECK(std::abs(got[i] - rot[i]) <= 1e-15 * std::max(1.0, t) * 4);
  }

  // exp(i theta sigma) = cos theta I + i sin theta sigma for each Pauli matrix sigma
  const std::vector<std::vector<cd>> pauli = {{0, 1, 1, 0}, {0, cd(0, -1), cd(0, 1), 0}, {1, 0, 0, -1}};
  for (double theta : {0.2, 1.0, 4.0, 30.0})
    for (const auto& s : pauli) {
      CAPTURE(theta);
      const Tensor sigma = from_vector(s).reshape({2, 2});
      const Tensor got = linalg::matrix_exp(sigma * cd(0, theta));
      CHECK(got.dtype() == complex128);
      const Tensor want2 = eye(2, std::nullopt, complex128) * std::cos(theta) + sigma * cd(0, std::sin(theta));
      CHECK(rel_err(got, want2) <= 4e-15 * std::max(1.0, theta));
    }
}

TEST_CASE("linalg::matrix_exp: every Pade degree and the squarings agree with a long-double Taylor reference") {
  manual_seed(301);
  // 1-norms on both sides of each theta of float64 (3: 0.015, 5: 0.25, 7: 0.95, 9: 2.1, 13: 5.37) and far above
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    for (double target : {0.0, 1e-3, 0.012, 0.2, 0.9, 2.0, 5.0, 6.0, 30.0, 300.0}) {
      CAPTURE(target);
      const Tensor g = cuda_test::sample({5, 5}, dt);
      const Tensor a = target == 0 ? g * 0.0 : g * (target / norm1(g));
      // the reference's own error grows with the squarings (about 2^s ulps of long double) and exp(A)'s
      // conditioning: a few ulps of float64 per unit of norm
      check_against_reference(a, 2e-15 * std::max(1.0, target));
    }
  }
  // float32: thetas 0.43, 1.88, 3.93 (degree 7 scaled above)
  for (Dtype dt : {float32, complex64}) {
    CAPTURE(dtype_name(dt));
    for (double target : {0.1, 0.4, 1.5, 3.5, 20.0}) {
      CAPTURE(target);
      const Tensor g = cuda_test::sample({4, 4}, dt);
      check_against_reference(g * (target / norm1(g)), 3e-6 * std::max(1.0, target));
    }
  }
}

TEST_CASE("linalg::matrix_exp: symmetric matrices vs eigh (V diag(exp w) V^T), float32 vs float64, exp(A) exp(-A) = I") {
  manual_seed(302);
  for (double scale : {0.1, 1.0, 5.0}) {
    CAPTURE(scale);
    const Tensor g = randn({6, 6}, float64) * scale;
    const Tensor s = g + g.transpose(-1, -2);
    const auto [w, v] = linalg::eigh(s);
    const Tensor want = matmul(v * exp(w).unsqueeze(-2), v.transpose(-1, -2));
    CHECK(rel_err(linalg::matrix_exp(s), want) <= 1e-13);
  }
  for (double scale : {0.1, 1.0, 4.0}) {
    CAPTURE(scale);
    const Tensor a = randn({2, 5, 5}, float64) * scale;
    const Tensor e32 = linalg::matrix_exp(a.to(float32));
    CHECK(e32.dtype() == float32);
    CHECK(rel_err(e32, linalg::matrix_exp(a)) <= 2e-5 * std::max(1.0, scale));
    // the product's rounding error is about u ||exp(A)|| ||exp(-A)|| (cancellation for a large ||A||)
    const Tensor ep = linalg::matrix_exp(a), em = linalg::matrix_exp(-a);
    const double bound = 1e-14 * abs(ep).amax().item<double>() * abs(em).amax().item<double>();
    CHECK(rel_err(matmul(ep, em), eye(5, std::nullopt, float64).expand({2, 5, 5})) <= bound);
  }
}

TEST_CASE("linalg::matrix_exp: batches (matrices of different norms), empty shapes, inputs unchanged, errors") {
  manual_seed(303);
  // one plan for the whole batch (the largest norm): each matrix still agrees with its own exp
  const Tensor scales = from_vector<double>({0.01, 0.5, 3.0, 40.0, 1.0, 0.0}).reshape({2, 3, 1, 1});
  const Tensor a = randn({2, 3, 4, 4}, float64) * scales;
  const Tensor before = a.clone();
  const Tensor e = linalg::matrix_exp(a);
  CHECK(equal(a, before));
  REQUIRE(e.shape() == Shape{2, 3, 4, 4});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(rel_err(e.select(0, i).select(0, j), linalg::matrix_exp(a.select(0, i).select(0, j))) <= 1e-13);
    }
  check_against_reference(a, 1e-13);
  // a broadcast (stride 0) batch
  const Tensor base = randn({3, 3}, float64);
  CHECK(rel_err(linalg::matrix_exp(base.expand({4, 3, 3})), linalg::matrix_exp(base).expand({4, 3, 3})) <= 1e-15);

  for (const Shape& s : {Shape{0, 0}, Shape{3, 0, 0}, Shape{0, 2, 2}, Shape{2, 0, 1, 1}}) {
    CAPTURE(s.size());
    const Tensor z = linalg::matrix_exp(zeros(s, complex64));
    CHECK(z.shape() == s);
    CHECK(z.dtype() == complex64);
  }
  CHECK_THROWS_WITH_AS(linalg::matrix_exp(ones({2, 3}, float64)),
                       "[linalg_matrix_exp] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_exp(ones({3}, float64)),
                       "[linalg_matrix_exp] A must be a batch of square matrices (..., n, n), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_exp(eye(2, std::nullopt, int64)),
                       "[linalg_matrix_exp] A must be a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_exp(Tensor()), "[linalg_matrix_exp] A is undefined", Error);
  // a non-finite entry spoils its own matrix only
  Tensor bad = randn({2, 3, 3}, float64);
  bad.select(0, 1).select(0, 0).select(0, 0).fill_(std::numeric_limits<double>::quiet_NaN());
  const Tensor eb = linalg::matrix_exp(bad);
  CHECK(isnan(eb.select(0, 1)).any().item<bool>());
  CHECK(rel_err(eb.select(0, 0), linalg::matrix_exp(bad.select(0, 0))) <= 1e-15);
}

TEST_CASE("linalg::matrix_exp: gradients (gradcheck real, complex, batched, with squarings; gradgradcheck)") {
  manual_seed(304);
  const auto f = [](const VT& in) { return linalg::matrix_exp(in[0]); };
  CHECK(autodiff::gradcheck(f, {leaf({4, 4}, float64)}));
  CHECK(autodiff::gradcheck(f, {leaf({2, 3, 3}, float64)}));
  CHECK(autodiff::gradcheck(f, {leaf({3, 3}, complex128)}));
  CHECK(autodiff::gradcheck(f, {leaf({2, 2, 2}, complex128)}));
  // large norms: degree 13 and squarings
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::matrix_exp(in[0] * 4.0); }, {leaf({3, 3}, float64)}));
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::matrix_exp(in[0] * 0.001); }, {leaf({3, 3}, complex128)}));
  CHECK(autodiff::gradgradcheck(f, {leaf({3, 3}, float64)}));
  // d/dt exp(t A) at t = 0 is A: the gradient of <G, exp(A)> at A = 0 is G (exp's derivative there is the identity)
  const Tensor z = zeros({3, 3}, float64).requires_grad_();
  const Tensor gout = randn({3, 3}, float64);
  (linalg::matrix_exp(z) * gout).sum().backward();
  CHECK(rel_err(z.grad(), gout) <= 1e-15);
}

// ---- matrix_power -----------------------------------------------------------------------------------------------

TEST_CASE("linalg::matrix_power: n >= 0 vs repeated matmul, n < 0 vs inv, int64, the identity at n = 0") {
  manual_seed(305);
  for (Dtype dt : {float64, complex128, float32}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = cuda_test::sample({2, 3, 3}, dt) * 0.5 + eye(3, std::nullopt, dt);
    const Tensor before = a.clone();
    Tensor want = eye(3, std::nullopt, dt).expand({2, 3, 3});
    const double tol = dt == float32 ? 1e-5 : 1e-13;
    for (std::int64_t n = 0; n <= 9; ++n) {
      CAPTURE(n);
      const Tensor got = linalg::matrix_power(a, n);
      CHECK(got.dtype() == dt);
      CHECK(got.shape() == a.shape());
      CHECK(rel_err(got, want) <= tol);
      want = matmul(want, a);
    }
    const Tensor ai = linalg::inv(a);
    want = ai;
    for (std::int64_t n = -1; n >= -5; --n) {
      CAPTURE(n);
      CHECK(rel_err(linalg::matrix_power(a, n), want) <= tol * 10);
      want = matmul(want, ai);
    }
    CHECK(equal(a, before));
  }
  // int64 (exact), and bool
  const Tensor ai = from_vector<std::int64_t>({1, 2, 0, -1, 1, 3, 2, 0, 1}).reshape({3, 3});
  Tensor want = eye(3, std::nullopt, int64);
  for (std::int64_t n = 0; n <= 7; ++n) {
    CAPTURE(n);
    const Tensor got = linalg::matrix_power(ai, n);
    CHECK(got.dtype() == int64);
    CHECK(equal(got, want));
    want = matmul(want, ai);
  }
  // n = 0: a tensor of its own (not a broadcast view); n = 1: a copy
  Tensor id = linalg::matrix_power(ai.expand({2, 3, 3}), 0);
  CHECK(id.is_contiguous());
  id.fill_(5);
  Tensor one = linalg::matrix_power(ai, 1);
  CHECK(equal(one, ai));
  one.fill_(0);
  CHECK(test::ivals(ai)[1] == 2);
  // a large power of a matrix of spectral radius < 1
  const Tensor r = randn({4, 4}, float64) * 0.2;
  Tensor rep = eye(4, std::nullopt, float64);
  for (int i = 0; i < 37; ++i) rep = matmul(rep, r);
  CHECK(rel_err(linalg::matrix_power(r, 37), rep) <= 1e-12);
  // empty matrices
  CHECK(linalg::matrix_power(zeros({2, 0, 0}, float64), 3).shape() == Shape{2, 0, 0});
  CHECK(linalg::matrix_power(zeros({0, 2, 2}, float64), -2).shape() == Shape{0, 2, 2});
}

TEST_CASE("linalg::matrix_power: gradients and errors") {
  manual_seed(306);
  for (std::int64_t n : {0, 1, 2, 3, 6, -1, -2}) {
    CAPTURE(n);
    const auto f = [n](const VT& in) { return linalg::matrix_power(in[0] * 0.3 + eye(3, std::nullopt, in[0].dtype()), n); };
    CHECK(autodiff::gradcheck(f, {leaf({2, 3, 3}, float64)}));
    CHECK(autodiff::gradcheck(f, {leaf({3, 3}, complex128)}));
  }
  CHECK_THROWS_WITH_AS(linalg::matrix_power(ones({2, 3}, float64), 2),
                       "[linalg_matrix_power] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_power(ones({3}, int64), 2),
                       "[linalg_matrix_power] A must be a batch of square matrices (..., n, n), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_power(eye(2, std::nullopt, int64), -1),
                       "[linalg_matrix_power] a negative power (n = -1) needs a floating or complex A, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::matrix_power(Tensor(), 2), "[linalg_matrix_power] A is undefined", Error);
  Tensor sing = eye(3, std::nullopt, float64).expand({2, 3, 3}).clone();
  sing.select(0, 1).select(0, 2).zero_();
  CHECK_THROWS_WITH_AS(linalg::matrix_power(sing, -2),
                       doctest::Contains("[linalg_matrix_power] the matrix at batch index (1,) is singular"), Error);
  CHECK_NOTHROW(linalg::matrix_power(sing, 2));
}

// ---- multi_dot --------------------------------------------------------------------------------------------------

TEST_CASE("linalg::multi_dot: 2 to 5 operands (1-D ends included) agree with left-to-right matmul; dtypes promote") {
  manual_seed(307);
  const std::vector<std::int64_t> sizes = {3, 7, 2, 9, 4, 5};
  for (std::size_t k = 2; k <= 5; ++k)
    for (int ends = 0; ends < 4; ++ends) {
      CAPTURE(k);
      CAPTURE(ends);
      const bool row = ends & 1, col = ends & 2;
      VT ts;
      for (std::size_t i = 0; i < k; ++i) ts.push_back(randn({sizes[i], sizes[i + 1]}, float64));
      if (row) ts[0] = ts[0].select(0, 0);
      if (col) ts[k - 1] = ts[k - 1].select(1, 0);
      const Tensor got = linalg::multi_dot(ts), want = left_to_right(ts);
      REQUIRE(got.shape() == want.shape());
      CHECK(rel_err(got, want) <= 1e-14);
      Shape s;
      if (!row) s.push_back(sizes[0]);
      if (!col) s.push_back(sizes[k]);
      CHECK(got.shape() == s);
    }
  // complex, mixed dtypes (promoted as matmul), int64 exact
  const VT c = {cuda_test::sample({2, 3}, complex128), cuda_test::sample({3, 4}, complex128), cuda_test::sample({4, 2}, complex128)};
  CHECK(rel_err(linalg::multi_dot(c), left_to_right(c)) <= 1e-14);
  const VT mixed = {randn({2, 3}, float32), randn({3, 4}, float64), randn({4, 2}, float32)};
  CHECK(linalg::multi_dot(mixed).dtype() == float64);
  CHECK(rel_err(linalg::multi_dot(mixed), left_to_right({mixed[0].to(float64), mixed[1], mixed[2].to(float64)})) <= 1e-14);
  const VT ints = {cuda_test::sample({2, 3}, int64), cuda_test::sample({3, 4}, int64), cuda_test::sample({4, 5}, int64),
                   cuda_test::sample({5, 1}, int64)};
  CHECK(linalg::multi_dot(ints).dtype() == int64);
  CHECK(equal(linalg::multi_dot(ints), left_to_right(ints)));
  // empty inner and outer sizes
  CHECK(equal(linalg::multi_dot({ones({2, 0}), ones({0, 3}), ones({3, 4})}), zeros({2, 4})));
  CHECK(linalg::multi_dot({ones({0, 3}), ones({3, 3}), ones({3, 4})}).shape() == Shape{0, 4});
  // two vectors: a 0-d dot product
  const Tensor u = randn({5}, float64), v = randn({5}, float64);
  CHECK(linalg::multi_dot({u, v}).dim() == 0);
  CHECK(rel_err(linalg::multi_dot({u, randn({5, 5}, float64) * 0.0 + eye(5, std::nullopt, float64), v}), dot(u, v)) <= 1e-15);
}

TEST_CASE("linalg::multi_dot: multiplies in the cheapest order (the matrix-chain dynamic program)") {
  const auto first_product = [](const VT& ts) {
    auto obs = std::make_shared<MatmulShapes>();
    add_op_observer(obs);
    (void)linalg::multi_dot(ts);
    remove_op_observer(obs);
    return obs->calls;
  };
  // (10x100)(100x5)(5x50): (AB)C costs 7,500 multiply-adds, A(BC) 75,000
  auto calls = first_product({ones({10, 100}), ones({100, 5}), ones({5, 50})});
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::make_pair(Shape{10, 100}, Shape{100, 5}));
  // (50x5)(5x100)(100x10): A(BC) is the cheaper one
  calls = first_product({ones({50, 5}), ones({5, 100}), ones({100, 10})});
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::make_pair(Shape{5, 100}, Shape{100, 10}));
  // CLRS's example: dims 30 35 15 5 10 20 25, best ((A1 (A2 A3)) ((A4 A5) A6)) at 15,125
  calls = first_product({ones({30, 35}), ones({35, 15}), ones({15, 5}), ones({5, 10}), ones({10, 20}), ones({20, 25})});
  REQUIRE(calls.size() == 5);
  double cost = 0;
  for (const auto& [x, y] : calls) cost += static_cast<double>(x[0] * x[1] * y[1]);
  CHECK(cost == 15125);
  CHECK(calls[0] == std::make_pair(Shape{35, 15}, Shape{15, 5}));
  // a row vector first: (1 x 100)(100 x 100)(100 x 2) goes left to right
  calls = first_product({ones({100}), ones({100, 100}), ones({100, 2})});
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::make_pair(Shape{1, 100}, Shape{100, 100}));
}

TEST_CASE("linalg::multi_dot: gradients and errors") {
  manual_seed(308);
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::multi_dot(in); },
                            {leaf({4}, float64), leaf({4, 2}, float64), leaf({2, 5}, float64), leaf({5, 3}, float64)}));
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::multi_dot(in); },
                            {leaf({2, 3}, complex128), leaf({3, 4}, complex128), leaf({4}, complex128)}));
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::multi_dot(in); }, {leaf({3}, float64), leaf({3}, float64)}));
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({2, 2})}), "[linalg_multi_dot] expected at least 2 tensors, got 1", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({}), "[linalg_multi_dot] expected at least 2 tensors, got 0", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({2, 3}), ones({4, 5}), ones({5, 1})}),
                       "[linalg_multi_dot] tensor 0 of shape (2, 3) and tensor 1 of shape (4, 5) cannot be multiplied (3 != 4)", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({3}), ones({3, 4}), ones({5})}),
                       "[linalg_multi_dot] tensor 1 of shape (3, 4) and tensor 2 of shape (5,) cannot be multiplied (4 != 5)", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({2, 3}), ones({3}), ones({3, 1})}),
                       "[linalg_multi_dot] tensor 1 must be 2-D, got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({1, 2, 3}), ones({3, 1})}),
                       "[linalg_multi_dot] the first tensor must be 1-D or 2-D, got shape (1, 2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({2, 3}), ones({})}),
                       "[linalg_multi_dot] the last tensor must be 1-D or 2-D, got shape ()", Error);
  CHECK_THROWS_WITH_AS(linalg::multi_dot({ones({2, 3}), Tensor()}), "[linalg_multi_dot] tensor 1 is undefined", Error);
}

// ---- vector_norm ------------------------------------------------------------------------------------------------

TEST_CASE("linalg::vector_norm: every ord vs a hand computation; dims, keepdim, complex, dtypes") {
  const std::vector<double> xs = {3, -4, 0, 1.5, -2, 0.25};
  const auto p_norm = [](const std::vector<double>& v, double p) {
    long double s = 0;
    for (double e : v) s += std::pow(static_cast<long double>(std::abs(e)), static_cast<long double>(p));
    return static_cast<double>(std::pow(s, 1.0L / p));
  };
  const Tensor x = from_vector(xs);
  const std::vector<double> nonzero = {3, -4, 1.5, -2, 0.25};
  const Tensor xn = from_vector(nonzero);
  CHECK(linalg::vector_norm(x).item<double>() == doctest::Approx(p_norm(xs, 2)).epsilon(1e-15));
  CHECK(linalg::vector_norm(x, 1).item<double>() == doctest::Approx(10.75).epsilon(1e-15));
  CHECK(linalg::vector_norm(x, kInf).item<double>() == 4);
  CHECK(linalg::vector_norm(x, -kInf).item<double>() == 0);
  CHECK(linalg::vector_norm(xn, -kInf).item<double>() == 0.25);
  CHECK(linalg::vector_norm(x, 0).item<double>() == 5);
  for (double p : {3.0, 0.5, 1.7, 10.0, -1.0, -2.0, -0.5}) {
    CAPTURE(p);
    CHECK(linalg::vector_norm(xn, p).item<double>() == doctest::Approx(p_norm(nonzero, p)).epsilon(1e-14));
    // p < 0 with a zero element: 0 (the limit); p > 0: the zero adds nothing
    CHECK(linalg::vector_norm(x, p).item<double>() == doctest::Approx(p < 0 ? 0.0 : p_norm(xs, p)).epsilon(1e-14));
  }
  // dims and keepdim on a (2, 3, 4) tensor, against loops
  manual_seed(309);
  const Tensor t = randn({2, 3, 4}, float64);
  for (double p : {2.0, 1.0, 3.0, kInf, -kInf, 0.0, -1.5}) {
    CAPTURE(p);
    for (bool keep : {false, true}) {
      const Tensor got = linalg::vector_norm(t, p, {0, -1}, keep);
      CHECK(got.shape() == (keep ? Shape{1, 3, 1} : Shape{3}));
      const auto gv = test::vals(got);
      for (std::int64_t j = 0; j < 3; ++j) {
        std::vector<double> line;
        for (std::int64_t i = 0; i < 2; ++i)
          for (std::int64_t k = 0; k < 4; ++k) line.push_back(t.select(0, i).select(0, j).select(0, k).item<double>());
        double want = 0;
        if (p == kInf || p == -kInf) {
          want = std::abs(line[0]);
          for (double e : line) want = p > 0 ? std::max(want, std::abs(e)) : std::min(want, std::abs(e));
        } else if (p == 0) {
          for (double e : line) want += e != 0;
        } else {
          want = p_norm(line, p);
        }
        CHECK(gv[j] == doctest::Approx(want).epsilon(1e-13));
      }
    }
    CHECK(linalg::vector_norm(t, p, {}, true).shape() == Shape{1, 1, 1});
    CHECK(linalg::vector_norm(t, p).dim() == 0);
  }
  // complex: a real result of the matching precision; |3 + 4i| = 5
  const Tensor z = from_vector<cd>({cd(3, 4), cd(0, -1), cd(0, 0)});
  CHECK(linalg::vector_norm(z).dtype() == float64);
  CHECK(linalg::vector_norm(z).item<double>() == doctest::Approx(std::sqrt(26.0)).epsilon(1e-15));
  CHECK(linalg::vector_norm(z, kInf).item<double>() == 5);
  CHECK(linalg::vector_norm(z, 0).item<double>() == 2);
  CHECK(linalg::vector_norm(z.narrow(0, 0, 2), -1).item<double>() == doctest::Approx(1 / (0.2 + 1.0)).epsilon(1e-15));
  CHECK(linalg::vector_norm(z.to(complex64), 1).dtype() == float32);
  CHECK(linalg::vector_norm(x.to(float32), -1).dtype() == float32);
  CHECK(linalg::vector_norm(z.to(complex64), 0).dtype() == float32);
  // empty: 0 for ord >= 0 (and -inf refuses as inf does)
  CHECK(linalg::vector_norm(zeros({0}, float64)).item<double>() == 0);
  CHECK(linalg::vector_norm(zeros({2, 0}, float64), 1, {1}).shape() == Shape{2});
  CHECK(linalg::vector_norm(zeros({2, 0}, float64), -1, {0}).shape() == Shape{0});
  // 0-d input
  CHECK(linalg::vector_norm(full({}, -2.5, float64), 3).item<double>() == doctest::Approx(2.5).epsilon(1e-15));
}

TEST_CASE("linalg::vector_norm: gradients (gradcheck ords 2, 3, inf, -inf, -1, 0.5, complex) and errors") {
  manual_seed(310);
  // distinct magnitudes away from 0 (inf / -inf pick one element)
  const Tensor x = (from_vector<double>({0.5, -1.2, 2.1, -0.7, 1.6, 0.9}).reshape({2, 3})).requires_grad_();
  for (double p : {2.0, 3.0, kInf, -kInf, -1.0, 1.0, 0.5, -2.5}) {
    CAPTURE(p);
    CHECK(autodiff::gradcheck([p](const VT& in) { return linalg::vector_norm(in[0], p); }, {x}));
    CHECK(autodiff::gradcheck([p](const VT& in) { return linalg::vector_norm(in[0], p, {1}, true); }, {x}));
    CHECK(autodiff::gradcheck([p](const VT& in) { return linalg::vector_norm(in[0], p, {0}); }, {leaf({3, 2}, complex128)}));
  }
  CHECK(autodiff::gradgradcheck([](const VT& in) { return linalg::vector_norm(in[0], -1.5, {1}); }, {x}));
  // finite gradients where torch's are: ord 2 at a vector with zeros, p < 0 with a zero element (0 there)
  for (double p : {2.0, -1.0, 3.0}) {
    CAPTURE(p);
    const Tensor y = from_vector<double>({0.0, 2.0, -1.0}).requires_grad_();
    linalg::vector_norm(y, p).backward();
    CHECK(isfinite(y.grad()).all().item<bool>());
    if (p < 0) CHECK(equal(y.grad(), zeros({3}, float64)));
  }
  const Tensor zero = zeros({3}, float64).requires_grad_();
  linalg::vector_norm(zero).backward();
  CHECK(equal(zero.grad(), zeros({3}, float64)));

  CHECK_THROWS_WITH_AS(linalg::vector_norm(ones({3}, int64)), "[linalg_vector_norm] expected a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(Tensor()), "[linalg_vector_norm] x is undefined", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(ones({3}), std::nan("")), "[linalg_vector_norm] ord must be a number, got nan", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(ones({2, 3}), 2, {2}), doctest::Contains("[linalg_vector_norm] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(ones({2, 3}), 2, {1, -1}), "[linalg_vector_norm] dim -1 appears more than once", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(zeros({2, 0}), -1),
                       "[linalg_vector_norm] ord -1 of an empty vector is not defined (shape (2, 0), reducing dim 1)", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(zeros({2, 0}), kInf, {1}),
                       "[linalg_vector_norm] ord inf of an empty vector is not defined (shape (2, 0), reducing dim 1)", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(zeros({0, 3}), -kInf, {0}),
                       "[linalg_vector_norm] ord -inf of an empty vector is not defined (shape (0, 3), reducing dim 0)", Error);
  CHECK_THROWS_WITH_AS(linalg::vector_norm(zeros({0, 3}), -0.5, {0}), doctest::Contains("ord -0.5 of an empty vector"), Error);
}

// ---- vecdot -----------------------------------------------------------------------------------------------------

TEST_CASE("linalg::vecdot: sum(conj(x) y) over dim, broadcasting, dtype promotion, gradients, errors") {
  manual_seed(311);
  const Tensor x = cuda_test::sample({2, 1, 4}, complex128), y = cuda_test::sample({3, 4}, complex128);
  const Tensor got = linalg::vecdot(x, y);
  REQUIRE(got.shape() == Shape{2, 3});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      const Tensor want = vdot(x.select(0, i).select(0, 0), y.select(0, j));
      CHECK(rel_err(got.select(0, i).select(0, j), want) <= 1e-15);
    }
  // the conjugate is x's: vecdot(x, y) = conj(vecdot(y, x))
  CHECK(rel_err(linalg::vecdot(y, x), conj(got)) <= 1e-15);
  // another dim
  const Tensor a = randn({4, 3}, float64), b = randn({4, 3}, float64);
  CHECK(rel_err(linalg::vecdot(a, b, 0), (a * b).sum({0})) <= 1e-15);
  CHECK(linalg::vecdot(a, b, 0).shape() == Shape{3});
  // promotion: float32 with complex128, int64 with float32
  CHECK(linalg::vecdot(a.to(float32), x.select(1, 0).select(0, 0).narrow(0, 0, 3).to(complex128)).dtype() == complex128);
  CHECK(linalg::vecdot(ones({3}, int64), ones({3}, float32)).dtype() == float32);
  CHECK(linalg::vecdot(ones({3}, int64), full({3}, 2.0).to(int64)).item<std::int64_t>() == 6);
  CHECK(linalg::vecdot(zeros({2, 0}, float64), zeros({2, 0}, float64)).shape() == Shape{2});

  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::vecdot(in[0], in[1]); }, {leaf({2, 1, 4}, complex128), leaf({3, 4}, complex128)}));
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::vecdot(in[0], in[1], 0); }, {leaf({4, 3}, float64), leaf({4, 1}, float64)}));
  CHECK(autodiff::gradcheck([](const VT& in) { return linalg::vecdot(in[0], in[1]); }, {leaf({3}, float64), leaf({2, 3}, complex128)}));

  CHECK_THROWS_WITH_AS(linalg::vecdot(full({}, 1.0), full({}, 2.0)),
                       "[linalg_vecdot] x and y must have at least one dim, got shapes () and ()", Error);
  CHECK_THROWS_WITH_AS(linalg::vecdot(ones({2, 3}), ones({3}), 2), doctest::Contains("[linalg_vecdot] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(linalg::vecdot(ones({2, 3}), ones({4})), doctest::Contains("[linalg_vecdot]"), Error);
  CHECK_THROWS_WITH_AS(linalg::vecdot(ones({2, 3}), Tensor()), "[linalg_vecdot] y is undefined", Error);
}
