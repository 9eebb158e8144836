// tests/test_functional.cpp - the functional transforms of phasor/autodiff/functional.hpp (vjp, jvp, jacobian, hessian,
// vhp, hvp): against closed-form Jacobians and Hessians written out in long double, float64 central differences
// (independent of the engine) and each other; both Jacobian strategies, create_graph (differentiating the
// results again), strict mode and every error.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <phasor/phasor.hpp>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using autodiff::JacobianStrategy;
using V = std::vector<Tensor>;
using LD = long double;

namespace {

constexpr JacobianStrategy kRev = JacobianStrategy::reverse_mode;
constexpr JacobianStrategy kFwd = JacobianStrategy::forward_mode;

/// f(x, y) for x of shape (3,) and y of shape (2,): (x0^2 y1, 5 x0 + sin x1 - x2 y0) and x * y0 (shape (3,)).
V two_by_two(const V& t) {
  const Tensor& x = t[0];
  const Tensor& y = t[1];
  Tensor a = stack({x.select(0, 0) * x.select(0, 0) * y.select(0, 1), x.select(0, 0) * 5.0 + x.select(0, 1).sin() - x.select(0, 2) * y.select(0, 0)});
  return {a, x * y.select(0, 0)};
}

/// The Jacobian blocks of two_by_two, written out: J[i][j] flattened row-major (output element, input element).
std::vector<std::vector<std::vector<double>>> two_by_two_jacobian(const std::vector<double>& x,
                                                                  const std::vector<double>& y) {
  std::vector<std::vector<std::vector<double>>> J(2, std::vector<std::vector<double>>(2));
  J[0][0] = {2 * x[0] * y[1], 0, 0, 5, std::cos(x[1]), -y[0]};  // (2, 3)
  J[0][1] = {0, x[0] * x[0], -x[2], 0};                           // (2, 2)
  J[1][0] = {y[0], 0, 0, 0, y[0], 0, 0, 0, y[0]};                 // (3, 3)
  J[1][1] = {x[0], 0, x[1], 0, x[2], 0};                          // (3, 2)
  return J;
}

/// Float64 central differences of every output of fn in every input element: D[i][j] as J[i][j].
std::vector<std::vector<std::vector<double>>> central_differences(const autodiff::TensorsFn& fn, const V& inputs,
                                                                  double h = 1e-6) {
  NoGradGuard ng;
  const V base = fn(inputs);
  std::vector<std::vector<std::vector<double>>> D(base.size(), std::vector<std::vector<double>>(inputs.size()));
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    const std::int64_t n = inputs[j].numel();
    std::vector<std::vector<std::vector<double>>> cols(base.size());
    for (std::int64_t c = 0; c < n; ++c) {
      V plus = inputs, minus = inputs;
      plus[j] = inputs[j].clone();
      minus[j] = inputs[j].clone();
      plus[j].reshape({-1}).select(0, c).add_(Scalar(h));
      minus[j].reshape({-1}).select(0, c).add_(Scalar(-h));
      const V fp = fn(plus), fm = fn(minus);
      for (std::size_t i = 0; i < base.size(); ++i) cols[i].push_back(vals((fp[i] - fm[i]) / (2 * h)));
    }
    for (std::size_t i = 0; i < base.size(); ++i) {
      const std::size_t m = static_cast<std::size_t>(base[i].numel());
      for (std::size_t r = 0; r < m; ++r)
        for (std::int64_t c = 0; c < n; ++c) D[i][j].push_back(cols[i][static_cast<std::size_t>(c)][r]);
    }
  }
  return D;
}

/// M v for a row-major (rows x cols) matrix.
std::vector<double> matvec(const std::vector<double>& M, const std::vector<double>& v) {
  const std::size_t cols = v.size(), rows = M.size() / cols;
  std::vector<double> r(rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k) r[i] += M[i * cols + k] * v[k];
  return r;
}

/// v^T M for a row-major (rows x cols) matrix.
std::vector<double> vecmat(const std::vector<double>& v, const std::vector<double>& M) {
  const std::size_t rows = v.size(), cols = M.size() / rows;
  std::vector<double> r(cols, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k) r[k] += v[i] * M[i * cols + k];
  return r;
}

/// The Rosenbrock function sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2.
Tensor rosenbrock(const Tensor& x) {
  const std::int64_t n = x.numel();
  const Tensor a = x.slice(0, 0, n - 1), b = x.slice(0, 1, n);
  return ((b - a * a).square() * 100.0 + (1.0 - a).square()).sum();
}

/// Rosenbrock's Hessian, written out (row-major n x n).
std::vector<double> rosenbrock_hessian(const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::vector<LD> H(n * n, 0.0L);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const LD a = x[i], b = x[i + 1];
    H[i * n + i] += 1200.0L * a * a - 400.0L * b + 2.0L;
    H[i * n + i + 1] += -400.0L * a;
    H[(i + 1) * n + i] += -400.0L * a;
    H[(i + 1) * n + i + 1] += 200.0L;
  }
  return std::vector<double>(H.begin(), H.end());
}

}  // namespace

TEST_CASE("jacobian matches the written-out Jacobian for several inputs and outputs, in both strategies") {
  const std::vector<double> xv = {0.7, -1.3, 2.1}, yv = {0.4, -0.9};
  const V in = {vec(xv), vec(yv)};
  const auto ref = two_by_two_jacobian(xv, yv);
  for (JacobianStrategy s : {kRev, kFwd}) {
    const auto J = autodiff::jacobian(two_by_two, in, false, false, s);
    REQUIRE(J.size() == 2);
    REQUIRE(J[0].size() == 2);
    CHECK(J[0][0].shape() == Shape{2, 3});
    CHECK(J[0][1].shape() == Shape{2, 2});
    CHECK(J[1][0].shape() == Shape{3, 3});
    CHECK(J[1][1].shape() == Shape{3, 2});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        check_close(J[i][j], ref[i][j], 1e-15);
        CHECK_FALSE(J[i][j].requires_grad());
      }
  }
  // inputs are untouched and get no .grad()
  CHECK(vals(in[0]) == xv);
  CHECK_FALSE(in[0].grad().defined());
}

TEST_CASE("jacobian of composite functions (an FFT filter, a tanh network) agrees with central differences") {
  manual_seed(71);
  // a circular convolution by FFT: linear, so its Jacobian is the circulant matrix of the kernel, written out
  const std::int64_t n = 8;
  const Tensor k = randn({n}, float64);
  const auto filter = [&](const Tensor& x) { return fft::irfft(fft::rfft(x) * fft::rfft(k), n); };
  const Tensor x = randn({n}, float64);
  std::vector<double> circ(static_cast<std::size_t>(n * n));
  const auto kv = vals(k);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < n; ++c) circ[static_cast<std::size_t>(r * n + c)] = kv[static_cast<std::size_t>((r - c + n) % n)];
  check_close(autodiff::jacobian(filter, x), circ, 1e-13);
  check_close(autodiff::jacobian(filter, x, false, false, kFwd), circ, 1e-13);

  // a two-layer tanh network of a (2, 3) input with a (4, 3) weight: a nonlinear function of both
  const auto net = [](const V& t) { return V{(t[0].matmul(t[1].transpose(0, 1)).tanh() * 1.5).sin()}; };
  const V in = {randn({2, 3}, float64), randn({4, 3}, float64)};
  const auto D = central_differences(net, in);
  for (JacobianStrategy s : {kRev, kFwd}) {
    const auto J = autodiff::jacobian(net, in, false, false, s);
    CHECK(J[0][0].shape() == Shape{2, 4, 2, 3});
    CHECK(J[0][1].shape() == Shape{2, 4, 4, 3});
    check_close(J[0][0], D[0][0], 1e-8);
    check_close(J[0][1], D[0][1], 1e-8);
  }
}

TEST_CASE("jacobian of the identity, of a constant and of 0-d and empty tensors") {
  const Tensor x = vec({1.0, 2.0, 3.0});
  for (JacobianStrategy s : {kRev, kFwd}) {
    check_close(autodiff::jacobian([](const Tensor& t) { return t; }, x, false, false, s),
                {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-15);
    check_close(autodiff::jacobian([](const Tensor& t) { return t * 2.0; }, x, false, false, s),
                {2, 0, 0, 0, 2, 0, 0, 0, 2}, 1e-15);
    // a scalar function: the Jacobian is the gradient, of x's shape
    const Tensor g = autodiff::jacobian([](const Tensor& t) { return (t * t).sum(); }, x, false, false, s);
    CHECK(g.shape() == Shape{3});
    check_close(g, {2, 4, 6}, 1e-15);
    // a 0-d input
    const Tensor d = autodiff::jacobian([](const Tensor& t) { return stack({t, t * t}); }, full({}, 3.0, float64), false, false, s);
    CHECK(d.shape() == Shape{2});
    check_close(d, {1, 6}, 1e-15);
    // an output that does not depend on the input: zeros (non-strict)
    const auto J = autodiff::jacobian([](const V& t) { return V{t[0] * 2.0, ones({2}, float64)}; }, {x}, false, false, s);
    CHECK(J[1][0].shape() == Shape{2, 3});
    check_close(J[1][0], std::vector<double>(6, 0.0), 1e-15);
    // an empty output
    const Tensor e = autodiff::jacobian([](const Tensor& t) { return t.slice(0, 0, 0); }, x, false, false, s);
    CHECK(e.shape() == Shape{0, 3});
  }
}

TEST_CASE("vjp and jvp are v^T J and J v of the written-out Jacobian") {
  const std::vector<double> xv = {0.7, -1.3, 2.1}, yv = {0.4, -0.9};
  const V in = {vec(xv), vec(yv)};
  const auto J = two_by_two_jacobian(xv, yv);
  // vjp: one cotangent per output
  const std::vector<double> u0 = {0.3, -2.0}, u1 = {1.5, 0.25, -0.5};
  auto [outs, vj] = autodiff::vjp(two_by_two, in, {vec(u0), vec(u1)});
  check_close(outs[0], vals(two_by_two(in)[0]), 1e-15);
  const auto add = [](std::vector<double> a, const std::vector<double>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
  };
  check_close(vj[0], add(vecmat(u0, J[0][0]), vecmat(u1, J[1][0])), 1e-15);
  check_close(vj[1], add(vecmat(u0, J[0][1]), vecmat(u1, J[1][1])), 1e-15);
  CHECK_FALSE(vj[0].requires_grad());
  CHECK_FALSE(outs[0].requires_grad());
  // jvp: one tangent per input
  const std::vector<double> t0 = {0.5, 1.0, -1.5}, t1 = {2.0, -0.75};
  auto [outs2, jv] = autodiff::jvp(two_by_two, in, {vec(t0), vec(t1)});
  check_close(outs2[1], vals(two_by_two(in)[1]), 1e-15);
  check_close(jv[0], add(matvec(J[0][0], t0), matvec(J[0][1], t1)), 1e-15);
  check_close(jv[1], add(matvec(J[1][0], t0), matvec(J[1][1], t1)), 1e-15);
  CHECK_FALSE(jv[0].requires_grad());
  // one-tensor forms, and v left out for one single-element output / input
  auto [y, g] = autodiff::vjp([](const Tensor& t) { return (t * t).sum(); }, vec({1.0, -2.0}));
  check_close(y, {5}, 1e-15);
  check_close(g, {2, -4}, 1e-15);
  auto [y2, d] = autodiff::jvp([](const Tensor& t) { return stack({t.exp(), t * 3.0}); }, full({}, 0.5, float64));
  check_close(y2, {std::exp(0.5), 1.5}, 1e-15);
  check_close(d, {std::exp(0.5), 3}, 1e-15);
  // jvp of the identity and of an input-independent output
  auto [o3, j3] = autodiff::jvp([](const V& t) { return V{t[0], zeros({2}, float64)}; }, {vec({1.0, 2.0})}, {vec({4.0, 5.0})});
  check_close(j3[0], {4, 5}, 1e-15);
  check_close(j3[1], {0, 0}, 1e-15);
}

TEST_CASE("vjp takes complex functions with grad's convention") {
  manual_seed(72);
  const Tensor z = randn({4}, complex128), w = randn({4}, complex128);
  const auto f = [&](const Tensor& t) { return (t * t * w).exp(); };
  auto [y, g] = autodiff::vjp(f, z, ones({4}, complex128));
  Tensor zl = z.clone().requires_grad_();
  const Tensor ref = autodiff::grad({f(zl)}, {zl}, {ones({4}, complex128)})[0];
  CHECK(to_vector<std::complex<double>>(g) == to_vector<std::complex<double>>(ref));
  CHECK(y.is_complex());
}

TEST_CASE("hessian, vhp and hvp match written-out Hessians, in both outer strategies") {
  const std::vector<double> xv = {-1.2, 1.0, 0.8, 1.7};
  const Tensor x = vec(xv);
  const auto H = rosenbrock_hessian(xv);
  for (JacobianStrategy s : {kRev, kFwd}) {
    const Tensor h = autodiff::hessian(rosenbrock, x, false, false, s);
    CHECK(h.shape() == Shape{4, 4});
    check_close(h, H, 1e-14);
  }
  const std::vector<double> v = {0.5, -1.0, 2.0, 0.25};
  auto [y, vh] = autodiff::vhp(rosenbrock, x, vec(v));
  check_close(y, vals(rosenbrock(x)), 1e-15);
  check_close(vh, vecmat(v, H), 1e-14);
  auto [y2, hv] = autodiff::hvp(rosenbrock, x, vec(v));
  check_close(hv, matvec(H, v), 1e-14);
  CHECK_FALSE(hv.requires_grad());

  // several inputs: f(a, b) = sum(a^2 b) + a0 b1^3, a (2,), b (2,); blocks H[i][j] = d2 f / d a_i d b_j
  const auto f = [](const V& t) { return (t[0] * t[0] * t[1]).sum() + t[0].select(0, 0) * t[1].select(0, 1).pow(3.0); };
  const std::vector<double> a = {0.6, -1.1}, b = {1.3, 0.7};
  const std::vector<std::vector<std::vector<double>>> ref = {
      {{2 * b[0], 0, 0, 2 * b[1]}, {2 * a[0], 3 * b[1] * b[1], 0, 2 * a[1]}},
      {{2 * a[0], 0, 3 * b[1] * b[1], 2 * a[1]}, {0, 0, 0, 6 * a[0] * b[1]}}};
  for (JacobianStrategy s : {kRev, kFwd}) {
    const auto Hb = autodiff::hessian(f, {vec(a), vec(b)}, false, false, s);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) check_close(Hb[i][j], ref[i][j], 1e-15);
  }
  // hvp over several inputs: the block matrix times the stacked vector
  const std::vector<double> va = {1.0, 2.0}, vb = {-0.5, 0.3};
  auto [f0, hvs] = autodiff::hvp(f, {vec(a), vec(b)}, {vec(va), vec(vb)});
  for (int i = 0; i < 2; ++i) {
    std::vector<double> r = matvec(ref[i][0], va), r2 = matvec(ref[i][1], vb);
    for (std::size_t k = 0; k < r.size(); ++k) r[k] += r2[k];
    check_close(hvs[static_cast<std::size_t>(i)], r, 1e-15);
  }
}

TEST_CASE("the Laplacian of a network by hessian agrees with second central differences") {
  manual_seed(73);
  // u(p) = w2 . tanh(W1 p + b1), p in R^2: the trace of its Hessian, a physics-informed loss's Laplacian
  const Tensor W1 = randn({8, 2}, float64), b1 = randn({8}, float64), w2 = randn({8}, float64);
  const auto u = [&](const Tensor& p) { return (W1.matmul(p) + b1).tanh().mul(w2).sum(); };
  const Tensor p = vec({0.3, -0.4});
  const double lap = vals(autodiff::hessian(u, p).diagonal().sum())[0];
  const double h = 1e-4;
  NoGradGuard ng;
  const auto at = [&](double dx, double dy) { return vals(u(p + vec({dx, dy})))[0]; };
  const double fd = (at(h, 0) + at(-h, 0) + at(0, h) + at(0, -h) - 4 * at(0, 0)) / (h * h);
  CHECK(lap == doctest::Approx(fd).epsilon(1e-6));
}

TEST_CASE("create_graph keeps the results differentiable: derivatives of Jacobians, jvps and Hessians") {
  const Tensor x = vec({0.4, -0.8, 1.3}).requires_grad_();
  // d/dx sum(J) of f = sin(x) * x0, compared with the closed form
  const auto f = [](const Tensor& t) { return t.sin() * t.select(0, 0); };
  for (JacobianStrategy s : {kRev, kFwd}) {
    const Tensor J = autodiff::jacobian(f, x, true, false, s);
    REQUIRE(J.requires_grad());
    // J_ij = cos(x_i) x0 [i == j] + sin(x_i) [j == 0]; sum_ij J = x0 sum cos x_i + sum sin x_i
    const Tensor g = autodiff::grad({J.sum()}, {x})[0];
    const auto xv = vals(x.detach());
    std::vector<double> ref(3);
    for (int i = 0; i < 3; ++i) ref[static_cast<std::size_t>(i)] = -xv[0] * std::sin(xv[i]) + std::cos(xv[i]);
    double cs = 0;
    for (double xi : xv) cs += std::cos(xi);
    ref[0] += cs;
    check_close(g, ref, 1e-14);
  }
  // gradcheck through jvp and hvp with create_graph: their derivatives are right
  autodiff::GradcheckOptions o;
  o.atol = 1e-7;
  const Tensor v = vec({0.5, 1.5, -1.0});
  CHECK(autodiff::gradcheck(
      [&](const V& t) { return autodiff::jvp([](const Tensor& a) { return (a * a).cumsum(0).exp(); }, t[0], t[1], true).second; },
      {leaf64({3}) * 0.5, v.clone().requires_grad_()}, o));
  CHECK(autodiff::gradcheck([&](const V& t) { return V{autodiff::hvp(rosenbrock, t[0], v, true).second}; },
                            {leaf64({3})}, o));
  CHECK(autodiff::gradcheck([&](const V& t) { return V{autodiff::hessian(rosenbrock, t[0], true)}; }, {leaf64({3})}, o));
  // outside create_graph nothing is connected, even for inputs that require grad
  CHECK_FALSE(autodiff::jacobian(f, x).requires_grad());
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("a function computing a Hessian and a jvp traces into a static graph that replays on other inputs") {
  manual_seed(74);
  const Tensor W = randn({5, 2}, float64);
  const auto u = [&](const Tensor& p) { return (W.matmul(p)).tanh().sum(); };
  const jit::Function fn = [&](const V& t) {
    return V{autodiff::hessian(u, t[0]), autodiff::jvp([&](const Tensor& p) { return W.matmul(p).sin(); }, t[0], t[1]).second};
  };
  const Tensor p = vec({0.2, -0.7}), v = vec({1.0, 0.5});
  const jit::Graph g = jit::trace(fn, {p, v});
  const Tensor p2 = vec({-1.1, 0.4}), v2 = vec({0.3, -2.0});
  const V eager = fn({p2, v2}), replay = g({p2, v2});
  check_close(replay[0], vals(eager[0]), 1e-15);
  check_close(replay[1], vals(eager[1]), 1e-15);
}

TEST_CASE("the transforms work inside NoGradGuard") {
  NoGradGuard ng;
  const Tensor x = vec({1.0, 2.0});
  check_close(autodiff::jacobian([](const Tensor& t) { return t * t; }, x), {2, 0, 0, 4}, 1e-15);
  check_close(autodiff::hessian([](const Tensor& t) { return t.pow(3.0).sum(); }, x), {6, 0, 0, 12}, 1e-15);
}

TEST_CASE("strict mode throws for independent pairs; non-strict gives zeros") {
  const Tensor x = vec({1.0, 2.0}), y = vec({3.0});
  const auto f = [](const V& t) { return V{t[0] * 2.0}; };  // independent of input 1
  const auto J = autodiff::jacobian(f, {x, y});
  check_close(J[0][1], {0, 0}, 1e-15);
  CHECK_THROWS_WITH_AS(autodiff::jacobian(f, {x, y}, false, true),
                       doctest::Contains("output 0 is independent of input 1"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian(f, {x, y}, false, true, kFwd),
                       doctest::Contains("output 0 is independent of input 1"), Error);
  auto [o, vj] = autodiff::vjp(f, {x, y}, {vec({1.0, 1.0})});
  check_close(vj[1], {0}, 1e-15);
  CHECK_THROWS_WITH_AS(autodiff::vjp(f, {x, y}, {vec({1.0, 1.0})}, false, true),
                       doctest::Contains("independent of input 1"), Error);
  const auto g = [](const V& t) { return V{t[0] * 2.0, ones({1}, float64)}; };
  CHECK_THROWS_WITH_AS(autodiff::jvp(g, {x}, {vec({1.0, 1.0})}, false, true),
                       doctest::Contains("output 1 is independent of the inputs"), Error);
  const auto s = [](const V& t) { return (t[0] * t[0]).sum() + t[1].sum(); };  // linear in input 1
  const auto H = autodiff::hessian(s, {x, y});
  check_close(H[1][1], {0}, 1e-15);
  CHECK_THROWS_WITH_AS(autodiff::hessian(s, {x, y}, false, true),
                       doctest::Contains("the gradient in input 0 is independent of input 1"), Error);
  CHECK_THROWS_WITH_AS(autodiff::hessian([](const V& t) { return t[0].sum(); }, {x, y}, false, true),
                       doctest::Contains("the function is independent of input 1"), Error);
}

TEST_CASE("functional transforms: bad input throws naming the transform and changes nothing") {
  const Tensor x = vec({1.0, 2.0});
  const auto sq = [](const Tensor& t) { return t * t; };
  CHECK_THROWS_WITH_AS(autodiff::jacobian(sq, arange(3)), doctest::Contains("[jacobian] input 0 is int64"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian(sq, x.to(complex128)), doctest::Contains("no complex Jacobian matrix"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian(sq, Tensor()), doctest::Contains("input 0 is undefined"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian([](const V&) { return V{arange(2)}; }, {x}),
                       doctest::Contains("output 0 is int64"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian([](const V&) { return V{}; }, {x}),
                       doctest::Contains("returned no tensor"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jacobian([](const V& t) { return t; }, V{}), doctest::Contains("at least one input"), Error);
  CHECK_THROWS_WITH_AS(autodiff::vjp(sq, x), doctest::Contains("[vjp] v may be left out only for one single-element output"), Error);
  CHECK_THROWS_WITH_AS(autodiff::vjp(sq, x, vec({1.0, 2.0, 3.0})),
                       doctest::Contains("v[0] has shape (3,) but output 0 has shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jvp([](const V& t) { return t; }, {x, x}, {x}),
                       doctest::Contains("[jvp] got 1 tensors in v for 2 inputs"), Error);
  CHECK_THROWS_WITH_AS(autodiff::jvp(sq, x), doctest::Contains("v may be left out only for one single-element input"), Error);
  CHECK_THROWS_WITH_AS(autodiff::hessian(sq, x), doctest::Contains("[hessian] the function must return one single-element tensor; it returned shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(autodiff::hvp([](const Tensor& t) { return t.sum(); }, x, vec({1.0})),
                       doctest::Contains("[hvp] v[0] has shape (1,) but input 0 has shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(autodiff::vhp([](const Tensor& t) { return t.sum(); }, x, Tensor()),
                       doctest::Contains("[vhp] v may be left out"), Error);
  CHECK(vals(x) == std::vector<double>{1.0, 2.0});
  CHECK_FALSE(x.requires_grad());
}
