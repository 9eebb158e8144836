// fit_function.cpp - fits f(x) = sin(3x) exp(-x^2) on [-2, 2] with a one-hidden-layer tanh network,
// trained by full-batch Adam with a cosine learning-rate schedule; gradients come from phasor's reverse-mode
// autodiff, and the optimizer update is plain tensor arithmetic under a NoGradGuard.
//
//   usage: fit_function [steps]        (default 3000)
//
// It prints the loss every 250 steps,
// then the relative L2 error on a held-out grid that interleaves the training points, and exits with
// status 1 if that error is above kMaxRelError.
#include <phasor/phasor.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ph = phasor;
using ph::Tensor;

namespace {

constexpr double kMaxRelError = 0.02;  // pass/fail threshold on the held-out relative L2 error

double target(double x) { return std::sin(3.0 * x) * std::exp(-x * x); }

// n points on [a, b] as an (n, 1) column: endpoints included, or cell midpoints (held-out grid).
Tensor grid(double a, double b, int n, bool midpoints) {
  const double h = (b - a) / n;
  Tensor x = midpoints ? ph::linspace(a + h / 2, b - h / 2, n, ph::float64) : ph::linspace(a, b, n, ph::float64);
  return x.unsqueeze(1);
}

// The same function evaluated with tensor ops (so the reference is computed independently of `target`).
Tensor target(const Tensor& x) { return (x * 3.0).sin() * (-(x * x)).exp(); }

// A dense layer y = x W + b for x of shape (n, in), W (in, out), b (out).
Tensor dense(const Tensor& x, const Tensor& W, const Tensor& b) { return ph::matmul(x, W) + b; }

struct Mlp {
  Tensor W1, b1, W2, b2;
  std::vector<Tensor> params() const { return {W1, b1, W2, b2}; }
  Tensor forward(const Tensor& x) const { return dense(dense(x, W1, b1).tanh(), W2, b2); }
};

double rel_l2(const Tensor& pred, const Tensor& ref) { return ((pred - ref).norm() / ref.norm()).item<double>(); }

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 3000;
  if (steps < 1) {
    std::fprintf(stderr, "usage: %s [steps >= 1]\n", argv[0]);
    return 2;
  }
  const int hidden = 32;
  const double lr = 0.02, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::printf("phasor %s: fitting sin(3x) exp(-x^2) on [-2, 2] with a %d-unit tanh network\n", ph::version(), hidden);

  ph::manual_seed(0);
  const Tensor x_train = grid(-2.0, 2.0, 128, /*midpoints=*/false);
  const Tensor y_train = target(x_train);
  const Tensor x_test = grid(-2.0, 2.0, 397, /*midpoints=*/true);
  const Tensor y_test = target(x_test);
  // spot-check the tensor-op reference against the scalar formula
  if (std::abs(y_test.index({5, 0}).item<double>() - target(-2.0 + 4.0 * 5.5 / 397)) > 1e-12) {
    std::fprintf(stderr, "reference mismatch\n");
    return 2;
  }

  Mlp net;
  net.W1 = (ph::randn({1, hidden}, ph::float64) * 2.0).requires_grad_();
  net.b1 = ph::randn({hidden}, ph::float64).requires_grad_();
  net.W2 = (ph::randn({hidden, 1}, ph::float64) * (1.0 / std::sqrt(double(hidden)))).requires_grad_();
  net.b2 = ph::zeros({1}, ph::float64).requires_grad_();
  std::vector<Tensor> m1, m2;  // Adam's first and second moment estimates
  for (const Tensor& p : net.params()) {
    m1.push_back(ph::zeros_like(p));
    m2.push_back(ph::zeros_like(p));
  }

  const auto t0 = std::chrono::steady_clock::now();
  double loss_value = 0;
  for (int step = 1; step <= steps; ++step) {
    Tensor r = net.forward(x_train) - y_train;
    Tensor loss = (r * r).mean();
    for (Tensor& p : net.params()) p.set_grad(Tensor());
    loss.backward();
    loss_value = loss.item<double>();
    {
      ph::NoGradGuard no_grad;  // the update itself is not part of the graph
      auto params = net.params();
      const double lr_t = lr * 0.5 * (1.0 + std::cos(3.141592653589793 * (step - 1) / steps));
      const double c1 = 1.0 - std::pow(beta1, step), c2 = 1.0 - std::pow(beta2, step);
      for (std::size_t i = 0; i < params.size(); ++i) {
        const Tensor g = params[i].grad();
        m1[i].mul_(beta1).add_(g, 1.0 - beta1);
        m2[i].mul_(beta2).add_(g * g, 1.0 - beta2);
        params[i].sub_(m1[i] / ((m2[i] / c2).sqrt() + eps), lr_t / c1);
      }
    }
    if (step % 250 == 0 || step == 1) std::printf("step %5d  train mse %.3e\n", step, loss_value);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  double err;
  {
    ph::NoGradGuard no_grad;
    err = rel_l2(net.forward(x_test), y_test);
  }
  std::printf("trained %d steps in %.2f s (%.1f us/step)\n", steps, secs, 1e6 * secs / steps);
  std::printf("held-out relative L2 error: %.4e (threshold %.1e) -> %s\n", err, kMaxRelError,
              err <= kMaxRelError ? "PASS" : "FAIL");
  return err <= kMaxRelError ? 0 : 1;
}
