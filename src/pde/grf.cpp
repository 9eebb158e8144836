// src/pde/grf.cpp - Gaussian random fields on a periodic grid (Note [Gaussian random field
// normalization] in phasor/pde/fields.hpp).
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/device_constants.hpp"
#include "cuda/backend.hpp"
#include "pde/grid_detail.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/fft.hpp"
#include "phasor/ops.hpp"
#include "phasor/pde/fields.hpp"

namespace phasor::pde {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

void check_params(const char* op, double sigma, double tau, double gamma, bool zero_mean) {
  std::ostringstream os;
  if (!(std::isfinite(sigma) && sigma >= 0.0))
    os << "sigma must be finite and >= 0, got " << sigma;
  else if (!(std::isfinite(tau) && tau >= 0.0))
    os << "tau must be finite and >= 0, got " << tau;
  else if (!std::isfinite(gamma))
    os << "gamma must be finite, got " << gamma;
  else if (tau == 0.0 && !zero_mean && gamma > 0.0)
    os << "tau = 0 makes the k = 0 eigenvalue infinite; use zero_mean = true or tau > 0";
  const std::string msg = os.str();
  if (!msg.empty()) throw Error(op, msg);
}

/// mu_k / |V| over the full (fftn) spectrum of the grid, row-major over sizes(); k = 0 is 0 when zero_mean.
std::vector<double> mode_variances(const Grid& g, double sigma, double tau, double gamma, bool zero_mean) {
  const std::int64_t d = g.ndim();
  const auto& n = g.sizes();
  const std::int64_t total = g.numel();
  const double inv_vol = 1.0 / g.volume();
  std::vector<double> out(static_cast<std::size_t>(total));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(d), 0);
  for (std::int64_t flat = 0; flat < total; ++flat) {
    double k2 = 0.0;
    bool dc = true;
    for (std::int64_t a = 0; a < d; ++a) {
      const std::int64_t m = detail::frequency(idx[a], n[a], false);
      dc = dc && m == 0;
      const double k = kTwoPi * static_cast<double>(m) / g.lengths()[a];
      k2 += k * k;
    }
    out[flat] = (dc && zero_mean) ? 0.0 : sigma * sigma * std::pow(k2 + tau * tau, -gamma) * inv_vol;
    for (std::int64_t a = d - 1; a >= 0; --a) {
      if (++idx[a] < n[a]) break;
      idx[a] = 0;
    }
  }
  return out;
}

}  // namespace

double gaussian_random_field_variance(const Grid& g, double sigma, double tau, double gamma, bool zero_mean) {
  check_params("pde::gaussian_random_field_variance", sigma, tau, gamma, zero_mean);
  long double s = 0.0L;
  for (double v : mode_variances(g, sigma, tau, gamma, zero_mean)) s += v;
  return static_cast<double>(s);
}

Tensor gaussian_random_field(const Grid& g, std::int64_t batch, double sigma, double tau, double gamma, Dtype dtype,
                             Generator* gen, bool zero_mean, Device device) {
  const char* op = "pde::gaussian_random_field";
  if (batch < 1) throw Error(op, "batch must be >= 1, got " + std::to_string(batch));
  if (!is_floating(dtype)) throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
  check_params(op, sigma, tau, gamma, zero_mean);
  ::phasor::cuda::detail::check_device(device, op);
  NoGradGuard no_grad;
  const std::int64_t d = g.ndim();
  // amplitude N sqrt(mu_k / |V|), so that ifftn's 1/N leaves sqrt(mu_k / |V|) per mode; complex standard
  // normals have parts of variance 1/2: scaled by sqrt(2) for unit-variance parts. Made once per device off
  // the host CPU (Note [device constants]).
  using ::phasor::detail::key_bits;
  const auto key = std::make_tuple(key_bits(sigma), key_bits(tau), key_bits(gamma), zero_mean, g.sizes(),
                                   key_bits(g.lengths()));
  const Tensor amp = ::phasor::detail::device_constant(device, "grf amplitudes", key, [&] {
    std::vector<double> v = mode_variances(g, sigma, tau, gamma, zero_mean);
    const double N = static_cast<double>(g.numel());
    for (double& e : v) e = N * std::sqrt(e) * std::sqrt(2.0);
    return from_vector(v, g.sizes());
  });
  Shape shape{batch};
  shape.insert(shape.end(), g.sizes().begin(), g.sizes().end());
  // the generator draws the same numbers on every device
  Tensor w = randn(shape, complex128, device, gen);
  Tensor coeff = w * amp;
  std::vector<std::int64_t> dims;
  for (std::int64_t i = -d; i < 0; ++i) dims.push_back(i);
  Tensor u = real(fft::ifftn(coeff, std::nullopt, dims)).contiguous();
  return u.to(dtype);
}

}  // namespace phasor::pde
