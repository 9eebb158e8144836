// bratu_newton.cpp - a nonlinear boundary-value problem solved by Newton's method with Jacobians from autodiff,
// and the sensitivity of its solution to a parameter by implicit differentiation (phasor/autodiff/functional.hpp).
//
// The Bratu problem u''(x) + lambda e^{u(x)} = 0 on (0, 1), u(0) = u(1) = 0, has for lambda below ~3.5138 the
// closed-form solution (the lower branch)
//   u(x) = -2 ln( cosh((x - 1/2) theta / 2) / cosh(theta / 4) ),   theta = sqrt(2 lambda) cosh(theta / 4).
// Second-order finite differences on N interior points (h = 1 / (N + 1)) give the residual
//   F(u, lambda)_i = (u_{i-1} - 2 u_i + u_{i+1}) / h^2 + lambda e^{u_i}.
// Newton's method: J = dF/du by autodiff::jacobian (one backward pass per row), u <- u - J^{-1} F, from u = 0.
// The sensitivity du/dlambda of the discrete solution follows from F(u(lambda), lambda) = 0 (implicit function
// theorem): J du/dlambda = -dF/dlambda, where dF/dlambda is one forward-mode product (autodiff::jvp with the
// tangent (0, 1) on (u, lambda)), so no finite differences enter.
//
//   usage: bratu_newton [--png PATH]
//
// Checks (exit status 1 when one fails): Newton reaches |F| < 1e-10 within 8 iterations; the error against the
// closed form shrinks by 4 +- 0.3 when h halves (second order), for u and for du/dlambda; du/dlambda agrees with
// central differences of two Newton solves (lambda +- 1e-4) to 1e-6 relative.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <phasor/phasor.hpp>

#include "common/plot.hpp"

namespace ph = phasor;
using ph::Tensor;
using V = std::vector<Tensor>;

namespace {

constexpr double kLambda = 1.0;

/// theta of the closed form, by Newton's method in long double, and dtheta/dlambda.
std::pair<long double, long double> theta_of(long double lambda) {
  const long double s = std::sqrt(2 * lambda);
  long double t = 1;
  for (int i = 0; i < 50; ++i) t -= (t - s * std::cosh(t / 4)) / (1 - s * std::sinh(t / 4) / 4);
  const long double dt = (std::cosh(t / 4) / s) / (1 - s * std::sinh(t / 4) / 4);  // ds/dlambda = 1 / s
  return {t, dt};
}

/// The closed-form u(x) and du/dlambda(x) at the grid points.
std::pair<std::vector<double>, std::vector<double>> exact(const std::vector<double>& xs, double lambda) {
  const auto [t, dt] = theta_of(lambda);
  std::vector<double> u, du;
  for (double x : xs) {
    const long double a = (x - 0.5L) / 2;
    u.push_back(double(-2 * std::log(std::cosh(a * t) / std::cosh(t / 4))));
    du.push_back(double(-2 * (a * std::tanh(a * t) - std::tanh(t / 4) / 4) * dt));
  }
  return {u, du};
}

/// F(u, lambda) of the finite-difference discretization (zero boundary values).
Tensor residual(const Tensor& u, const Tensor& lambda, double h) {
  const std::int64_t n = u.size(0);
  const Tensor e = ph::pad(u, {1, 1});
  const Tensor lap = (e.slice(0, 0, n) - e.slice(0, 1, n + 1) * 2.0 + e.slice(0, 2, n + 2)) / (h * h);
  return lap + lambda * u.exp();
}

struct Solve {
  std::vector<double> x, u, du;     ///< grid, solution, du/dlambda
  std::vector<double> residuals;    ///< max |F| before each Newton step and after the last
};

/// Newton's method on N interior points at lambda; with `sensitivity`, du/dlambda too.
Solve newton(std::int64_t n, double lambda_value, bool sensitivity) {
  const double h = 1.0 / static_cast<double>(n + 1);
  const Tensor lambda = ph::full({}, lambda_value, ph::float64);
  Tensor u = ph::zeros({n}, ph::float64);
  const auto F = [&](const Tensor& v) { return residual(v, lambda, h); };
  Solve s;
  for (int it = 0; it <= 8; ++it) {
    const Tensor r = F(u);
    s.residuals.push_back(r.abs().max().item<double>());
    if (s.residuals.back() < 1e-10) break;
    const Tensor J = ph::autodiff::jacobian(F, u);  // (n, n), tridiagonal
    u = u - ph::linalg::solve(J, r.unsqueeze(-1)).squeeze(-1);
  }
  for (std::int64_t i = 1; i <= n; ++i) s.x.push_back(static_cast<double>(i) * h);
  s.u = ph::to_vector<double>(u);
  if (sensitivity) {
    // J du/dlambda = -dF/dlambda; dF/dlambda = the jvp of F(u, lambda) with tangent (0, 1)
    const auto G = [&](const V& t) { return V{residual(t[0], t[1], h)}; };
    const Tensor dF = ph::autodiff::jvp(G, {u, lambda}, {ph::zeros_like(u), ph::ones_like(lambda)}).second[0];
    const Tensor J = ph::autodiff::jacobian(F, u);
    s.du = ph::to_vector<double>(ph::linalg::solve(J, -dF.unsqueeze(-1)).squeeze(-1));
  }
  return s;
}

/// max_i |a_i - b_i|.
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string png = "bratu_newton.png";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--png" && i + 1 < argc) {
      png = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bratu_newton [--png PATH]\n");
      return 2;
    }
  }
  bool ok = true;
  std::vector<double> err_u, err_du;
  Solve fine;
  for (std::int64_t n : {31, 63, 127}) {
    const Solve s = newton(n, kLambda, true);
    const auto [u_ex, du_ex] = exact(s.x, kLambda);
    err_u.push_back(max_diff(s.u, u_ex));
    err_du.push_back(max_diff(s.du, du_ex));
    std::printf("N = %3lld: Newton max|F|:", static_cast<long long>(n));
    for (double r : s.residuals) std::printf(" %.1e", r);
    std::printf("\n         error vs closed form: u %.3e, du/dlambda %.3e\n", err_u.back(), err_du.back());
    if (s.residuals.back() >= 1e-10) {
      std::printf("FAIL: Newton did not reach |F| < 1e-10 in 8 steps\n");
      ok = false;
    }
    fine = s;
  }
  for (std::size_t k = 1; k < err_u.size(); ++k) {
    const double ru = err_u[k - 1] / err_u[k], rd = err_du[k - 1] / err_du[k];
    std::printf("error ratio when h halves: u %.3f, du/dlambda %.3f (second order: 4)\n", ru, rd);
    if (std::fabs(ru - 4) > 0.3 || std::fabs(rd - 4) > 0.3) ok = false;
  }
  // du/dlambda against central differences of two Newton solves of the same discretization
  const double d = 1e-4;
  const Solve plus = newton(127, kLambda + d, false), minus = newton(127, kLambda - d, false);
  std::vector<double> fd;
  for (std::size_t i = 0; i < plus.u.size(); ++i) fd.push_back((plus.u[i] - minus.u[i]) / (2 * d));
  double scale = 0;
  for (double v : fine.du) scale = std::max(scale, std::fabs(v));
  const double rel = max_diff(fine.du, fd) / scale;
  std::printf("du/dlambda by implicit differentiation vs central differences of Newton solves: %.2e relative\n", rel);
  if (!(rel < 1e-6)) ok = false;

  const auto [u_ex, du_ex] = exact(fine.x, kLambda);
  plot::Panel sol{"Bratu, lambda = 1: u (N = 127)", "x", "u", {}};
  sol.series.push_back({fine.x, u_ex, {30, 90, 200}, "closed form", false});
  sol.series.push_back({fine.x, fine.u, {220, 60, 30}, "Newton (autodiff Jacobian)", true});
  plot::Panel sens{"du/dlambda", "x", "du/dlambda", {}};
  sens.series.push_back({fine.x, du_ex, {30, 90, 200}, "closed form", false});
  sens.series.push_back({fine.x, fine.du, {40, 160, 60}, "implicit (jvp + solve)", true});
  if (plot::save_png(png, {sol, sens}))
    std::printf("wrote %s\n", png.c_str());
  else
    std::fprintf(stderr, "could not write %s\n", png.c_str());
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
