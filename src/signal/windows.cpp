// src/signal/windows.cpp - window functions (torch.*_window and scipy.signal.windows), get_window,
// and the shared helpers of src/signal/common.hpp.
//
// Note [periodic windows]
//   A symmetric window of length N uses the denominator N - 1; the periodic window of length N is
//   the symmetric window of length N + 1 with its last sample dropped, so every window here is
//   computed as sym(M) with M = N + periodic and truncated to N samples. N = 1 gives [1].
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>

#include "core/device_constants.hpp"
#include "cuda/backend.hpp"
#include "signal/common.hpp"

namespace phasor::signal {

namespace detail {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_input(const Tensor& x, const char* op, const char* what, std::int64_t min_dim) {
  if (!x.defined()) throw Error(op, std::string(what) + " is undefined");
  if (x.dim() < min_dim)
    throw Error(op, std::string(what) + " must have at least " + str(min_dim) + " dim(s), got shape " +
                        shape_of(x));
}

void check_device(const Tensor& t, Device device, const char* op, const char* what, const char* other) {
  if (t.defined() && t.device() != device)
    throw Error(op, std::string(what) + " is on " + t.device().str() + " but " + other + " is on " + device.str() +
                        "; move both to one device");
}

void check_device_exists(Device device, const char* op) { ::phasor::cuda::detail::check_device(device, op); }

Dtype real_dtype_of(const Tensor& x) {
  if (x.is_complex()) return to_real(x.dtype());
  return x.is_floating_point() ? x.dtype() : default_dtype();
}

Tensor as_floating(const Tensor& x) {
  if (x.is_complex() || x.is_floating_point()) return x;
  return x.to(default_dtype());
}

std::int64_t next_fast_len(std::int64_t n) {
  if (n <= 1) return 1;
  for (std::int64_t m = n;; ++m) {
    std::int64_t r = m;
    for (std::int64_t p : {2, 3, 5}) while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

ConvMode parse_mode(const std::string& mode, const char* op) {
  if (mode == "full") return ConvMode::full;
  if (mode == "same") return ConvMode::same;
  if (mode == "valid") return ConvMode::valid;
  throw Error(op, "mode must be \"full\", \"same\" or \"valid\", got \"" + mode + "\"");
}

Tensor frame_index(std::int64_t n_frames, std::int64_t frame_length, std::int64_t hop, Device device) {
  return ::phasor::detail::device_constant(
      device, "frame index", std::make_tuple(n_frames, frame_length, hop), [&] {
        std::vector<std::int64_t> idx(static_cast<std::size_t>(n_frames * frame_length));
        std::size_t j = 0;
        for (std::int64_t t = 0; t < n_frames; ++t)
          for (std::int64_t k = 0; k < frame_length; ++k) idx[j++] = t * hop + k;
        return from_vector(idx);
      });
}

}  // namespace detail

namespace {

using detail::num;
using detail::str;
constexpr double kPi = std::numbers::pi;

/// Builds a window of n samples: f(k, M) for k < n with M = n + periodic (Note [periodic windows]).
Tensor make_window(const char* op, std::int64_t n, bool periodic, Dtype dtype, Device device,
                   const std::function<double(double, double)>& f) {
  if (n < 0) throw Error(op, "window_length must be >= 0, got " + str(n));
  detail::check_device_exists(device, op);
  if (!is_floating(dtype))
    throw Error(op, std::string("window dtype must be float32 or float64, got ") + dtype_name(dtype));
  std::vector<double> w(static_cast<std::size_t>(n));
  if (n == 1) {
    w[0] = 1.0;
  } else if (n > 1) {
    const double M = static_cast<double>(n + (periodic ? 1 : 0));
    for (std::int64_t k = 0; k < n; ++k) w[static_cast<std::size_t>(k)] = f(static_cast<double>(k), M);
  }
  return from_vector(w).to(dtype).to(device);
}

double cosine_sum(double k, double M, const std::vector<double>& a) {
  const double x = 2.0 * kPi * k / (M - 1.0);
  double s = 0.0, sign = 1.0;
  for (std::size_t j = 0; j < a.size(); ++j, sign = -sign) s += sign * a[j] * std::cos(static_cast<double>(j) * x);
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Tensor hann_window(std::int64_t n, bool periodic, Dtype dtype, Device device) {
  return make_window("hann_window", n, periodic, dtype, device,
                     [](double k, double M) { return cosine_sum(k, M, {0.5, 0.5}); });
}
Tensor hann_window(std::int64_t n, Dtype dtype, Device device) { return hann_window(n, true, dtype, device); }

Tensor hamming_window(std::int64_t n, bool periodic, double alpha, double beta, Dtype dtype, Device device) {
  return make_window("hamming_window", n, periodic, dtype, device,
                     [alpha, beta](double k, double M) { return cosine_sum(k, M, {alpha, beta}); });
}
Tensor hamming_window(std::int64_t n, Dtype dtype, Device device) {
  return hamming_window(n, true, 0.54, 0.46, dtype, device);
}

Tensor blackman_window(std::int64_t n, bool periodic, Dtype dtype, Device device) {
  return make_window("blackman_window", n, periodic, dtype, device,
                     [](double k, double M) { return cosine_sum(k, M, {0.42, 0.5, 0.08}); });
}
Tensor blackman_window(std::int64_t n, Dtype dtype, Device device) { return blackman_window(n, true, dtype, device); }

Tensor bartlett_window(std::int64_t n, bool periodic, Dtype dtype, Device device) {
  return make_window("bartlett_window", n, periodic, dtype, device,
                     [](double k, double M) { return 1.0 - std::abs(2.0 * k / (M - 1.0) - 1.0); });
}
Tensor bartlett_window(std::int64_t n, Dtype dtype, Device device) { return bartlett_window(n, true, dtype, device); }

Tensor kaiser_window(std::int64_t n, bool periodic, double beta, Dtype dtype, Device device) {
  if (!(beta >= 0.0) || !std::isfinite(beta))
    throw Error("kaiser_window", "beta must be finite and >= 0, got " + num(beta));
  const double i0b = std::cyl_bessel_i(0.0, beta);
  return make_window("kaiser_window", n, periodic, dtype, device, [beta, i0b](double k, double M) {
    const double r = 2.0 * k / (M - 1.0) - 1.0;
    return std::cyl_bessel_i(0.0, beta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0b;
  });
}
Tensor kaiser_window(std::int64_t n, Dtype dtype, Device device) { return kaiser_window(n, true, 12.0, dtype, device); }

Tensor gaussian_window(std::int64_t n, double std, bool periodic, Dtype dtype, Device device) {
  if (!(std > 0.0) || !std::isfinite(std))
    throw Error("gaussian_window", "std must be finite and > 0, got " + num(std));
  return make_window("gaussian_window", n, periodic, dtype, device, [std](double k, double M) {
    const double z = (k - (M - 1.0) / 2.0) / std;
    return std::exp(-0.5 * z * z);
  });
}

Tensor tukey_window(std::int64_t n, double alpha, bool periodic, Dtype dtype, Device device) {
  if (!(alpha >= 0.0 && alpha <= 1.0)) throw Error("tukey_window", "alpha must lie in [0, 1], got " + num(alpha));
  if (alpha == 1.0) return hann_window(n, periodic, dtype, device);
  return make_window("tukey_window", n, periodic, dtype, device, [alpha](double k, double M) {
    if (alpha == 0.0) return 1.0;
    // scipy's pieces: cosine tapers on the first and last floor(alpha (M - 1) / 2) + 1 samples, flat top.
    const double width = std::floor(alpha * (M - 1.0) / 2.0);
    const double kk = std::min(k, M - 1.0 - k);  // the window is symmetric about (M - 1) / 2
    if (kk <= width) return 0.5 * (1.0 + std::cos(kPi * (-1.0 + 2.0 * kk / alpha / (M - 1.0))));
    return 1.0;
  });
}

Tensor general_cosine_window(std::int64_t n, const std::vector<double>& a, bool periodic, Dtype dtype, Device device) {
  if (a.empty()) throw Error("general_cosine_window", "needs at least one coefficient a, got none");
  return make_window("general_cosine_window", n, periodic, dtype, device,
                     [a](double k, double M) { return cosine_sum(k, M, a); });
}

namespace detail {

Tensor window_values(const WindowSpec& w, std::int64_t n, bool periodic, Dtype dtype, Device device, const char* op) {
  if (w.values.defined()) {
    check_input(w.values, op, "window");
    check_device(w.values, device, op, "window");
    if (w.values.dim() != 1 || w.values.size(0) != n)
      throw Error(op, "window of shape " + shape_of(w.values) + " must be 1-D with " + str(n) + " samples");
    return w.values;
  }
  // a named window depends only on these: made once per device off the host CPU (Note [device constants])
  const auto key = std::make_tuple(w.name, n, periodic, dtype, w.param.has_value(),
                                   ::phasor::detail::key_bits(w.param.value_or(0.0)));
  return ::phasor::detail::device_constant(device, "window", key,
                                           [&] { return get_window(w, n, periodic, dtype, device); });
}

}  // namespace detail

Tensor get_window(const WindowSpec& window, std::int64_t n, bool periodic, Dtype dtype, Device device) {
  if (window.values.defined()) {
    detail::check_input(window.values, "get_window", "window");
    detail::check_device_exists(device, "get_window");
    if (window.values.dim() != 1 || window.values.size(0) != n)
      throw Error("get_window", "window of shape " + detail::shape_of(window.values) + " must be 1-D with " +
                                    str(n) + " samples");
    return window.values.to(dtype).to(device);
  }
  const std::string name = lower(window.name);
  const auto no_param = [&] {
    if (window.param)
      throw Error("get_window", "window \"" + window.name + "\" takes no parameter, got " + num(*window.param));
  };
  if (name == "hann" || name == "hanning") return no_param(), hann_window(n, periodic, dtype, device);
  if (name == "hamming") return no_param(), hamming_window(n, periodic, 0.54, 0.46, dtype, device);
  if (name == "blackman") return no_param(), blackman_window(n, periodic, dtype, device);
  if (name == "bartlett" || name == "triangle_zero_end") return no_param(), bartlett_window(n, periodic, dtype, device);
  if (name == "boxcar" || name == "rectangular" || name == "ones" || name == "rect") {
    no_param();
    if (n < 0) throw Error("get_window", "window_length must be >= 0, got " + str(n));
    detail::check_device_exists(device, "get_window");
    return ones({n}, dtype, device);
  }
  if (name == "kaiser") return kaiser_window(n, periodic, window.param.value_or(12.0), dtype, device);
  if (name == "tukey") return tukey_window(n, window.param.value_or(0.5), periodic, dtype, device);
  if (name == "gaussian") {
    if (!window.param) throw Error("get_window", "the gaussian window needs its std parameter: WindowSpec(\"gaussian\", std)");
    return gaussian_window(n, *window.param, periodic, dtype, device);
  }
  throw Error("get_window", "unknown window \"" + window.name +
                                "\" (known: hann, hamming, blackman, bartlett, boxcar, kaiser, gaussian, tukey)");
}

}  // namespace phasor::signal
