// A program built against an installed phasor (through find_package or pkg-config).
// It runs a few ops and a backward pass, compares the results with closed forms, prints the checked
// value, and exits non-zero on any mismatch.
#include <phasor/phasor.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  namespace ph = phasor;
  int failures = 0;
  auto check = [&](const char* what, double got, double want) {
    const bool ok = std::abs(got - want) <= 1e-12 * (1.0 + std::abs(want));
    std::printf("%-28s %.15g (expected %.15g) %s\n", what, got, want, ok ? "ok" : "MISMATCH");
    if (!ok) ++failures;
  };

  // The headers and the library must come from the same version.
  std::printf("phasor %s (headers %s)\n", ph::version(), PHASOR_VERSION_STRING);
  if (std::strcmp(ph::version(), PHASOR_VERSION_STRING) != 0) ++failures;

  // y = sum(x * sin(x) + 2) over x = (0.5, 1, 1.5, 2); dy/dx_i = sin(x_i) + x_i cos(x_i).
  const std::vector<double> xs{0.5, 1.0, 1.5, 2.0};
  ph::Tensor x = ph::from_vector(xs, ph::Shape{2, 2}).requires_grad_();
  ph::Tensor y = (x * x.sin() + 2.0).sum();
  y.backward();
  double want_y = 0;
  for (double v : xs) want_y += v * std::sin(v) + 2.0;
  check("sum(x sin x + 2)", y.item<double>(), want_y);
  const std::vector<double> g = ph::to_vector<double>(x.grad());
  check("d/dx at x = 1.5", g[2], std::sin(1.5) + 1.5 * std::cos(1.5));

  // Broadcasting and a reduction over one dim: mean over rows of exp(x) * (1, 2).
  ph::Tensor w = ph::from_vector(std::vector<double>{1.0, 2.0});
  ph::Tensor m = (x.detach().exp() * w).mean({0});
  check("mean(exp(x) * w)[1]", ph::to_vector<double>(m)[1], (std::exp(1.0) + std::exp(2.0)) * 2.0 / 2.0);

  // Errors reach the caller as phasor::Error naming the op.
  try {
    (void)(x.detach() + ph::zeros({3}, ph::float64));
    std::printf("shape mismatch did not throw\n");
    ++failures;
  } catch (const ph::Error& e) {
    std::printf("error as expected: %s\n", e.what());
  }

  if (failures == 0)
    std::printf("consumer OK\n");
  else
    std::printf("consumer FAILED (%d mismatches)\n", failures);
  return failures == 0 ? 0 : 1;
}
