// src/signal/spectral.cpp - spectral density estimates (scipy.signal.welch / periodogram) and FIR
// design and analysis (scipy.signal.firwin / freqz).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/device_check.hpp"
#include "fft/primitives.hpp"
#include "phasor/fft.hpp"
#include "signal/common.hpp"

namespace phasor::signal {

using detail::num;
using detail::shape_of;
using detail::str;

namespace {

constexpr double kPi = std::numbers::pi;

/// Removes the mean ("constant") or the least-squares line ("linear") of every segment (last dim).
Tensor detrend_segments(const Tensor& s, const std::string& type, const char* op) {
  if (type == "none" || type == "false") return s;
  if (type == "constant") return s - s.mean({-1}, true);
  if (type == "linear") {
    const std::int64_t n = s.size(-1);
    Tensor c = s - s.mean({-1}, true);
    if (n < 2) return c;
    // the centred sample times k - (n - 1) / 2 (exact in float64), made on s's device, and their squares' sum
    const double nd = static_cast<double>(n);
    const Tensor tv = (arange(n, float64, s.device()) - (nd - 1.0) / 2.0).to(detail::real_dtype_of(s));
    const double tt = nd * (nd * nd - 1.0) / 12.0;
    Tensor slope = (c * tv).sum({-1}, true) / tt;
    return c - slope * tv;
  }
  throw Error(op, "detrend must be \"constant\", \"linear\" or \"none\", got \"" + type + "\"");
}

struct WelchPlan {
  Tensor win;
  std::int64_t nperseg, noverlap, nfft;
};

std::tuple<Tensor, Tensor> welch_impl(const char* op, const Tensor& x_in, const WelchOptions& o, WelchPlan p,
                                      const std::string& scaling) {
  const Tensor x = detail::as_floating(x_in);
  const std::int64_t d = ::phasor::detail::wrap_dim(o.dim, x.dim(), op);
  const bool onesided = o.return_onesided && !x.is_complex();
  if (scaling != "density" && scaling != "spectrum")
    throw Error(op, "scaling must be \"density\" or \"spectrum\", got \"" + scaling + "\"");
  // scale = 1 / (fs sum(w^2)) or 1 / sum(w)^2, as a tensor so the window gets its gradient too
  const Tensor scale = scaling == "density" ? 1.0 / ((p.win * p.win).sum() * o.fs) : 1.0 / p.win.sum().square();
  ::phasor::detail::check_device_value(  // the one host readback (a flag) on a GPU
      op, scale.detach().isfinite().logical_not(), [] { return std::pair<Tensor, Tensor>{}; },
      [scaling](double, double) { return "the window sums to zero; cannot scale the " + scaling; });
  // detrend type validated before the work
  if (o.detrend != "none" && o.detrend != "false" && o.detrend != "constant" && o.detrend != "linear")
    throw Error(op, "detrend must be \"constant\", \"linear\" or \"none\", got \"" + o.detrend + "\"");
  const Dtype rdt = detail::real_dtype_of(x);
  Tensor freqs = onesided ? fft::rfftfreq(p.nfft, 1.0 / o.fs, rdt, x.device())
                          : fft::fftfreq(p.nfft, 1.0 / o.fs, rdt, x.device());
  std::vector<Tensor> ins{x_in};
  if (o.window.values.defined()) ins.push_back(o.window.values);
  Tensor P = ::phasor::detail::composite(op, ins, [&] {
    Tensor xl = x.movedim(d, -1);
    Tensor seg = frame(xl, p.nperseg, p.nperseg - p.noverlap, -1);  // (..., nseg, nperseg)
    seg = detrend_segments(seg, o.detrend, op) * p.win;
    Tensor S = onesided ? fft::rfft(seg, p.nfft) : fft::fft(seg, p.nfft);
    Tensor Pxx = addcmul(real(S) * real(S), imag(S), imag(S)) * scale;
    // one-sided: the bins standing for a conjugate pair count twice (DC and Nyquist once), with weights
    // made once per device (Note [device constants])
    if (onesided) Pxx = Pxx * fft::detail::half_weights(p.nfft, 0, 1, rdt, 2.0, Pxx.device());
    Pxx = Pxx.mean({-2});  // average over segments
    return Pxx.movedim(-1, d);
  });
  return {freqs, P};
}

}  // namespace

std::tuple<Tensor, Tensor> welch(const Tensor& x, const WelchOptions& o) {
  const char* op = "welch";
  detail::check_input(x, op);
  const std::int64_t d = ::phasor::detail::wrap_dim(o.dim, x.dim(), op);
  const std::int64_t L = x.size(d);
  if (L < 1) throw Error(op, "input of shape " + shape_of(x) + " is empty along dim " + str(d));
  if (!(o.fs > 0.0)) throw Error(op, "fs must be > 0, got " + num(o.fs));
  WelchPlan p;
  if (o.window.values.defined()) {
    detail::check_input(o.window.values, op, "window");
    detail::check_device(o.window.values, x.device(), op, "window");
    if (o.window.values.dim() != 1) throw Error(op, "window must be 1-D, got shape " + shape_of(o.window.values));
    const std::int64_t wl = o.window.values.size(0);
    if (o.nperseg && *o.nperseg != wl)
      throw Error(op, "nperseg = " + str(*o.nperseg) + " differs from the window's length " + str(wl));
    if (wl > L) throw Error(op, "window of " + str(wl) + " samples is longer than the input's " + str(L));
    p.nperseg = wl;
    p.win = o.window.values;
  } else {
    p.nperseg = o.nperseg.value_or(256);
    if (p.nperseg < 1) throw Error(op, "nperseg must be >= 1, got " + str(p.nperseg));
    p.nperseg = std::min(p.nperseg, L);  // scipy shortens (with a warning) to the signal length
    p.win = detail::window_values(o.window, p.nperseg, true, detail::real_dtype_of(x), x.device(), op);
  }
  p.noverlap = o.noverlap.value_or(p.nperseg / 2);
  if (p.noverlap < 0 || p.noverlap >= p.nperseg)
    throw Error(op, "noverlap must lie in [0, nperseg = " + str(p.nperseg) + "), got " + str(p.noverlap));
  p.nfft = o.nfft.value_or(p.nperseg);
  if (p.nfft < p.nperseg)
    throw Error(op, "nfft = " + str(p.nfft) + " must be >= nperseg = " + str(p.nperseg));
  return welch_impl(op, x, o, p, o.scaling);
}

std::tuple<Tensor, Tensor> periodogram(const Tensor& x_in, const WelchOptions& o) {
  const char* op = "periodogram";
  detail::check_input(x_in, op);
  const std::int64_t d = ::phasor::detail::wrap_dim(o.dim, x_in.dim(), op);
  const std::int64_t L = x_in.size(d);
  if (L < 1) throw Error(op, "input of shape " + shape_of(x_in) + " is empty along dim " + str(d));
  if (!(o.fs > 0.0)) throw Error(op, "fs must be > 0, got " + num(o.fs));
  Tensor x = x_in;
  WelchPlan p;
  p.noverlap = 0;
  if (!o.nfft) {
    p.nperseg = L;
    p.nfft = L;
  } else if (*o.nfft < 1) {
    throw Error(op, "nfft must be >= 1, got " + str(*o.nfft));
  } else if (*o.nfft >= L) {
    p.nperseg = L;
    p.nfft = *o.nfft;
  } else {  // scipy crops the signal to nfft samples
    x = x_in.narrow(d, 0, *o.nfft);
    p.nperseg = p.nfft = *o.nfft;
  }
  p.win = detail::window_values(o.window, p.nperseg, true, detail::real_dtype_of(x_in), x_in.device(), op);
  return welch_impl(op, x, o, p, o.scaling);
}

// ---- firwin / freqz -------------------------------------------------------------------------------------------
Tensor firwin(std::int64_t numtaps, const std::vector<double>& cutoff_hz, std::optional<double> width,
              const WindowSpec& window, const std::string& pass_zero_in, bool scale, double fs, Dtype dtype,
              Device device) {
  const char* op = "firwin";
  if (numtaps < 1) throw Error(op, "numtaps must be >= 1, got " + str(numtaps));
  if (!(fs > 0.0)) throw Error(op, "fs must be > 0, got " + num(fs));
  if (cutoff_hz.empty()) throw Error(op, "at least one cutoff frequency is needed");
  const double nyq = 0.5 * fs;
  std::vector<double> cutoff;
  for (std::size_t i = 0; i < cutoff_hz.size(); ++i) {
    const double c = cutoff_hz[i] / nyq;
    if (!(c > 0.0 && c < 1.0))
      throw Error(op, "cutoff " + num(cutoff_hz[i]) + " must lie strictly between 0 and fs / 2 = " + num(nyq));
    if (i > 0 && !(c > cutoff.back())) throw Error(op, "cutoff frequencies must be strictly increasing");
    cutoff.push_back(c);
  }
  bool pass_zero;
  const std::string& pz = pass_zero_in;
  if (pz == "true" || pz == "lowpass" || pz == "bandstop") {
    if (pz == "lowpass" && cutoff.size() != 1)
      throw Error(op, "pass_zero = \"lowpass\" needs exactly one cutoff, got " + str(static_cast<std::int64_t>(cutoff.size())));
    if (pz == "bandstop" && cutoff.size() < 2)
      throw Error(op, "pass_zero = \"bandstop\" needs at least two cutoffs, got " + str(static_cast<std::int64_t>(cutoff.size())));
    pass_zero = true;
  } else if (pz == "false" || pz == "highpass" || pz == "bandpass") {
    if (pz == "highpass" && cutoff.size() != 1)
      throw Error(op, "pass_zero = \"highpass\" needs exactly one cutoff, got " + str(static_cast<std::int64_t>(cutoff.size())));
    if (pz == "bandpass" && cutoff.size() < 2)
      throw Error(op, "pass_zero = \"bandpass\" needs at least two cutoffs, got " + str(static_cast<std::int64_t>(cutoff.size())));
    pass_zero = false;
  } else {
    throw Error(op, "pass_zero must be \"lowpass\", \"highpass\", \"bandpass\", \"bandstop\", \"true\" or \"false\", got \"" +
                        pz + "\"");
  }
  const bool pass_nyquist = ((cutoff.size() & 1U) != 0) != pass_zero;
  if (pass_nyquist && numtaps % 2 == 0)
    throw Error(op, "a filter with an even number of taps (" + str(numtaps) +
                        ") must have zero response at the Nyquist frequency; use an odd numtaps");
  WindowSpec win = window;
  if (width) {
    if (!(*width > 0.0)) throw Error(op, "width must be > 0, got " + num(*width));
    const double atten = 2.285 * static_cast<double>(numtaps - 1) * kPi * (*width / nyq) + 7.95;
    const double beta = atten > 50.0   ? 0.1102 * (atten - 8.7)
                        : atten > 21.0 ? 0.5842 * std::pow(atten - 21.0, 0.4) + 0.07886 * (atten - 21.0)
                                       : 0.0;
    win = WindowSpec("kaiser", beta);
  }
  std::vector<double> edges;
  if (pass_zero) edges.push_back(0.0);
  edges.insert(edges.end(), cutoff.begin(), cutoff.end());
  if (pass_nyquist) edges.push_back(1.0);
  const double alpha = 0.5 * static_cast<double>(numtaps - 1);
  const auto sinc = [](double v) { return v == 0.0 ? 1.0 : std::sin(kPi * v) / (kPi * v); };
  std::vector<double> h(static_cast<std::size_t>(numtaps), 0.0);
  for (std::int64_t k = 0; k < numtaps; ++k) {
    const double m = static_cast<double>(k) - alpha;
    for (std::size_t j = 0; j + 1 < edges.size(); j += 2)
      h[static_cast<std::size_t>(k)] += edges[j + 1] * sinc(edges[j + 1] * m) - edges[j] * sinc(edges[j] * m);
  }
  // the taps are designed on the host in float64 (a CPU window) and copied to `device` at the end
  detail::check_device_exists(device, op);
  auto wv = to_vector<double>(detail::window_values(win, numtaps, false, float64,
                                                    win.values.defined() ? win.values.device() : Device::cpu(), op));
  for (std::size_t k = 0; k < h.size(); ++k) h[k] *= wv[k];
  if (scale) {
    const double left = edges[0], right = edges[1];
    const double sf = left == 0.0 ? 0.0 : right == 1.0 ? 1.0 : 0.5 * (left + right);
    double s = 0.0;
    for (std::int64_t k = 0; k < numtaps; ++k)
      s += h[static_cast<std::size_t>(k)] * std::cos(kPi * (static_cast<double>(k) - alpha) * sf);
    for (double& v : h) v /= s;
  }
  if (!is_floating(dtype)) throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
  return from_vector(h).to(dtype).to(device);
}

Tensor freqz_at(const Tensor& b_in, const Tensor& a_in, const Tensor& w, std::optional<double> fs) {
  const char* op = "freqz";
  detail::check_input(b_in, op, "b");
  if (a_in.defined()) detail::check_input(a_in, op, "a");
  detail::check_input(w, op, "w", 0);
  detail::check_device(a_in, b_in.device(), op, "a", "b");
  detail::check_device(w, b_in.device(), op, "w", "b");
  if (w.dim() > 1) throw Error(op, "w must be 0-D or 1-D, got shape " + shape_of(w));
  if (w.is_complex()) throw Error(op, "w must be real, got " + std::string(dtype_name(w.dtype())));
  if (fs && !(*fs > 0.0)) throw Error(op, "fs must be > 0, got " + num(*fs));
  const Tensor b = detail::as_floating(b_in);
  Dtype rdt = detail::real_dtype_of(b);
  if (a_in.defined()) rdt = promote_types(rdt, detail::real_dtype_of(a_in));
  if (w.is_floating_point()) rdt = promote_types(rdt, w.dtype());
  std::vector<Tensor> ins{b_in};
  if (a_in.defined()) ins.push_back(a_in);
  return ::phasor::detail::composite(op, ins, [&] {
    Tensor wr = w.detach().to(rdt).reshape({-1});
    if (fs) wr = wr * (2.0 * kPi / *fs);
    const auto response = [&](const Tensor& c) {
      // sum_k c_k e^(-i w k): (..., 1, M) * (N, M) summed over M.
      const Tensor cf = detail::as_floating(c);
      Tensor k = arange(0, cf.size(-1), 1, rdt, cf.device());
      Tensor phase = -(wr.unsqueeze(1) * k.unsqueeze(0));
      Tensor E = polar(ones_like(phase), phase);  // (N, M)
      return (cf.unsqueeze(-2) * E).sum({-1});
    };
    Tensor h = response(b);
    if (a_in.defined()) h = h / response(a_in);
    if (w.dim() == 0) h = h.squeeze(-1);
    return h;
  });
}

std::tuple<Tensor, Tensor> freqz(const Tensor& b, const Tensor& a, std::int64_t worN, bool whole,
                                 std::optional<double> fs, bool include_nyquist) {
  if (worN < 1) throw Error("freqz", "worN must be >= 1, got " + str(worN));
  detail::check_input(b, "freqz", "b");
  const double last = whole ? 2.0 * kPi : kPi;
  const std::int64_t denom = include_nyquist && worN > 1 ? worN - 1 : worN;
  std::vector<double> wv(static_cast<std::size_t>(worN));
  for (std::int64_t k = 0; k < worN; ++k)
    wv[static_cast<std::size_t>(k)] = last * static_cast<double>(k) / static_cast<double>(denom);
  Dtype rdt = detail::real_dtype_of(b);
  if (a.defined()) rdt = promote_types(rdt, detail::real_dtype_of(a));
  Tensor w = from_vector(wv).to(rdt).to(b.device());
  Tensor h = freqz_at(b, a, w, std::nullopt);
  if (fs) w = w * (*fs / (2.0 * kPi));
  return {w, h};
}

}  // namespace phasor::signal
