// src/signal/stft.cpp - frame / overlap_add, stft / istft (torch.stft semantics), spectrogram,
// mel filterbanks and mel spectrograms. All compositions of differentiable public ops.
//
// Note [framing]
//   frame() gathers the samples t * hop + k with one index_select along the (moved-last) dim and
//   reshapes to (..., n_frames, frame_length); overlap_add() is its adjoint, one index_add of the
//   flattened frames into zeros. index_select and index_add are each other's gradients, so both
//   directions are differentiable to any order.
#include <cmath>

#include "core/device_check.hpp"
#include "core/index_ops.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/fft.hpp"
#include "phasor/linalg.hpp"
#include "signal/common.hpp"

namespace phasor::signal {

using detail::num;
using detail::shape_of;
using detail::str;

// ---- frame / overlap_add ---------------------------------------------------------------------------------
Tensor frame(const Tensor& x, std::int64_t frame_length, std::int64_t hop_length, std::int64_t dim) {
  detail::check_input(x, "frame");
  const std::int64_t d = ::phasor::detail::wrap_dim(dim, x.dim(), "frame");
  const std::int64_t L = x.size(d);
  if (frame_length < 1) throw Error("frame", "frame_length must be >= 1, got " + str(frame_length));
  if (hop_length < 1) throw Error("frame", "hop_length must be >= 1, got " + str(hop_length));
  if (frame_length > L)
    throw Error("frame", "frame_length " + str(frame_length) + " exceeds the " + str(L) + " samples along dim " +
                             str(d) + " of the input of shape " + shape_of(x));
  const std::int64_t n_frames = 1 + (L - frame_length) / hop_length;
  return ::phasor::detail::composite("frame", {x}, [&] {
    Tensor xl = x.movedim(d, -1);
    Shape s = xl.shape();
    s.back() = n_frames;
    s.push_back(frame_length);
    const Tensor idx = detail::frame_index(n_frames, frame_length, hop_length, x.device());
    Tensor y = ::phasor::detail::index_select_trusted(xl, -1, idx).reshape(s);
    return y.movedim(-2, d);
  });
}

Tensor overlap_add(const Tensor& frames, std::int64_t hop_length) {
  detail::check_input(frames, "overlap_add", "frames", 2);
  if (hop_length < 1) throw Error("overlap_add", "hop_length must be >= 1, got " + str(hop_length));
  const std::int64_t n_frames = frames.size(-2), F = frames.size(-1);
  if (n_frames < 1 || F < 1)
    throw Error("overlap_add", "frames of shape " + shape_of(frames) + " must hold at least one non-empty frame");
  const std::int64_t L = (n_frames - 1) * hop_length + F;
  return ::phasor::detail::composite("overlap_add", {frames}, [&] {
    Shape flat = frames.shape();
    flat.pop_back();
    flat.back() = n_frames * F;
    Shape out = flat;
    out.back() = L;
    return ::phasor::detail::index_add_trusted(zeros(out, frames.dtype(), frames.device()), -1,
                                               detail::frame_index(n_frames, F, hop_length, frames.device()),
                                               frames.reshape(flat));
  });
}

// ---- stft / istft ------------------------------------------------------------------------------------------
namespace {

struct Resolved {
  std::int64_t n_fft, hop, win_length;
  Tensor window;  // n_fft samples (the given window centered, or a rectangular one when padding is needed)
};

/// Checks n_fft / hop / win_length / window (shared by stft and istft) and pads the window to n_fft; a
/// default window is made on `device` (the input's), a given one must live there.
Resolved resolve(const char* op, const STFTOptions& o, Dtype dtype, Device device) {
  if (o.n_fft < 1) throw Error(op, "n_fft must be >= 1, got " + str(o.n_fft));
  const std::int64_t hop = o.hop_length.value_or(std::max<std::int64_t>(o.n_fft / 4, 1));
  if (hop < 1) throw Error(op, "hop_length must be >= 1, got " + str(hop));
  const std::int64_t win = o.win_length.value_or(o.window.defined() && o.window.dim() == 1 ? o.window.size(0) : o.n_fft);
  if (win < 1 || win > o.n_fft)
    throw Error(op, "win_length must lie in [1, n_fft = " + str(o.n_fft) + "], got " + str(win));
  Tensor w = o.window;
  if (w.defined()) {
    detail::check_input(w, op, "window");
    detail::check_device(w, device, op, "window");
    if (w.dim() != 1 || w.size(0) != win)
      throw Error(op, "window of shape " + shape_of(w) + " does not match win_length = " + str(win) +
                          " (expected a 1-D window of " + str(win) + " samples)");
  } else if (win < o.n_fft) {
    w = ones({win}, dtype, device);
  }
  if (w.defined() && win < o.n_fft) {
    const std::int64_t left = (o.n_fft - win) / 2;
    w = pad(w, {left, o.n_fft - win - left});
  }
  return {o.n_fft, hop, win, w};
}

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::constant: return "constant";
    case PadMode::reflect: return "reflect";
    case PadMode::replicate: return "replicate";
    case PadMode::circular: return "circular";
  }
  return "?";
}

}  // namespace

Tensor stft(const Tensor& x_in, const STFTOptions& o) {
  detail::check_input(x_in, "stft");
  const Tensor x = detail::as_floating(x_in);
  const Resolved r = resolve("stft", o, detail::real_dtype_of(x), x.device());
  const bool complex_in = x.is_complex() || (r.window.defined() && r.window.is_complex());
  const bool onesided = o.onesided.value_or(!complex_in);
  if (onesided && complex_in)
    throw Error("stft", "onesided = true needs a real input and window (got a complex one); pass onesided = false");
  const std::int64_t L = x.size(-1);
  const std::int64_t p = o.center ? r.n_fft / 2 : 0;
  if (o.center && o.pad_mode == PadMode::reflect && p >= L && p > 0)
    throw Error("stft", "center = true with reflect padding needs more than n_fft / 2 = " + str(p) +
                            " samples, got a signal of " + str(L) + " samples (input shape " + shape_of(x) +
                            "); use a smaller n_fft or another pad_mode");
  if (o.center && (o.pad_mode == PadMode::replicate || o.pad_mode == PadMode::circular) && L == 0)
    throw Error("stft", std::string("cannot ") + mode_name(o.pad_mode) + "-pad an empty signal");
  const std::int64_t Lp = L + 2 * p;
  if (r.n_fft > Lp)
    throw Error("stft", "n_fft = " + str(r.n_fft) + " exceeds the " + (o.center ? "padded " : "") + "signal length " +
                            str(Lp) + " (input shape " + shape_of(x) + ")");
  std::vector<Tensor> ins{x_in};
  if (o.window.defined()) ins.push_back(o.window);
  return ::phasor::detail::composite("stft", ins, [&] {
    Tensor xp = x;
    if (p > 0) {
      // pad() works on the trailing dims; give 1-D signals a batch dim so every mode applies.
      Tensor x2 = x.dim() == 1 ? x.unsqueeze(0) : x;
      xp = pad(x2, {p, p}, o.pad_mode);
      if (x.dim() == 1) xp = xp.squeeze(0);
    }
    Tensor frames = frame(xp, r.n_fft, r.hop, -1);  // (..., n_frames, n_fft)
    if (r.window.defined()) frames = frames * r.window;
    const fft::Norm norm = o.normalized ? fft::Norm::ortho : fft::Norm::backward;
    Tensor S = onesided ? fft::rfft(frames, r.n_fft, -1, norm) : fft::fft(frames, r.n_fft, -1, norm);
    S = S.transpose(-1, -2);  // (..., n_freq, n_frames)
    if (!o.return_complex.value_or(true)) return stack({real(S), imag(S)}, -1);
    return S;
  });
}

Tensor stft(const Tensor& x, std::int64_t n_fft, std::optional<std::int64_t> hop_length,
            std::optional<std::int64_t> win_length, const Tensor& window, bool center, PadMode pad_mode,
            bool normalized, std::optional<bool> onesided, bool return_complex) {
  STFTOptions o(n_fft);
  o.hop_length = hop_length;
  o.win_length = win_length;
  o.window = window;
  o.center = center;
  o.pad_mode = pad_mode;
  o.normalized = normalized;
  o.onesided = onesided;
  o.return_complex = return_complex;
  return stft(x, o);
}

Tensor istft(const Tensor& X, const STFTOptions& o) {
  detail::check_input(X, "istft", "input", 2);
  if (!X.is_complex())
    throw Error("istft", std::string("expected a complex STFT (..., n_freq, n_frames), got ") + dtype_name(X.dtype()) +
                             " of shape " + shape_of(X));
  const Resolved r = resolve("istft", o, to_real(X.dtype()), X.device());
  const std::int64_t n_freq = X.size(-2), n_frames = X.size(-1);
  const bool onesided = o.onesided.value_or(n_freq != r.n_fft);
  const std::int64_t want = onesided ? r.n_fft / 2 + 1 : r.n_fft;
  if (n_freq != want)
    throw Error("istft", "input of shape " + shape_of(X) + " has " + str(n_freq) + " frequency bins, expected " +
                             str(want) + " for n_fft = " + str(r.n_fft) + (onesided ? " (onesided)" : " (two-sided)"));
  if (n_frames < 1) throw Error("istft", "input of shape " + shape_of(X) + " has no frames");
  if (o.return_complex.value_or(false) && onesided)
    throw Error("istft", "return_complex = true needs a two-sided input (onesided = false)");
  if (o.length && *o.length < 0) throw Error("istft", "length must be >= 0, got " + str(*o.length));
  const std::int64_t expected = r.n_fft + r.hop * (n_frames - 1);
  const std::int64_t start = o.center ? r.n_fft / 2 : 0;
  const std::int64_t end = o.length ? start + *o.length : (o.center ? expected - r.n_fft / 2 : expected);
  if (end < start)
    throw Error("istft", "the " + str(n_frames) + " frames of n_fft = " + str(r.n_fft) + " give " + str(expected) +
                             " samples, fewer than the 2 * (n_fft / 2) that center = true trims");
  Tensor wfull = r.window.defined() ? r.window : ones({r.n_fft}, to_real(X.dtype()), X.device());
  // NOLA: the squared window's overlap-add must not vanish on the output range (checked before any work;
  // on a GPU one flag comes back, and only a failure reads the first bad sample and its value).
  {
    NoGradGuard ng;
    Tensor env = overlap_add((wfull * wfull).detach().unsqueeze(0).expand({n_frames, r.n_fft}), r.hop);
    const std::int64_t stop = std::min(end, expected);
    if (stop > start) {
      const Tensor ea = env.abs().narrow(0, start, stop - start);
      const Tensor bad = logical_not(ea > 1e-11);  // NaN too
      ::phasor::detail::check_device_value(
          "istft", bad.any(),
          [&] {
            const Tensor first = bad.to(int64).argmax().reshape({1});  // argmax: the first maximum
            return std::pair{first.reshape({}), ::phasor::detail::index_select_trusted(ea, 0, first).reshape({})};
          },
          [n_fft = r.n_fft, hop = r.hop, win_length = r.win_length](double i, double e) {  // kept by a capture
            return "the squared window's overlap-add is " + num(e) + " at output sample " +
                   str(static_cast<std::int64_t>(i)) + " (NOLA condition violated) for n_fft = " + str(n_fft) +
                   ", hop_length = " + str(hop) + ", win_length = " + str(win_length) +
                   "; use a smaller hop or a window without zeros there";
          });
    }
  }
  std::vector<Tensor> ins{X};
  if (o.window.defined()) ins.push_back(o.window);
  return ::phasor::detail::composite("istft", ins, [&] {
    const fft::Norm norm = o.normalized ? fft::Norm::ortho : fft::Norm::backward;
    Tensor Xt = X.transpose(-1, -2);  // (..., n_frames, n_freq)
    Tensor frames;
    if (o.return_complex.value_or(false)) {
      frames = fft::ifft(Xt, r.n_fft, -1, norm);
    } else {
      if (!onesided) Xt = Xt.narrow(-1, 0, r.n_fft / 2 + 1);
      frames = fft::irfft(Xt, r.n_fft, -1, norm);
    }
    frames = frames * wfull;
    Tensor y = overlap_add(frames, r.hop);
    Tensor w2 = wfull * wfull;
    Tensor env = overlap_add(w2.unsqueeze(0).expand({n_frames, r.n_fft}), r.hop);
    if (end > expected) {
      const std::int64_t extra = end - expected;
      y = y.dim() == 1 ? pad(y.unsqueeze(0), {0, extra}).squeeze(0) : pad(y, {0, extra});
      env = pad(env.unsqueeze(0), {0, extra}, PadMode::constant, 1.0).squeeze(0);
    }
    y = y.narrow(-1, start, end - start);
    env = env.narrow(0, start, end - start);
    return y / env;
  });
}

Tensor istft(const Tensor& X, std::int64_t n_fft, std::optional<std::int64_t> hop_length,
             std::optional<std::int64_t> win_length, const Tensor& window, bool center, bool normalized,
             std::optional<bool> onesided, std::optional<std::int64_t> length, bool return_complex) {
  STFTOptions o(n_fft);
  o.hop_length = hop_length;
  o.win_length = win_length;
  o.window = window;
  o.center = center;
  o.normalized = normalized;
  o.onesided = onesided;
  o.length = length;
  o.return_complex = return_complex;
  return istft(X, o);
}

// ---- spectrogram -------------------------------------------------------------------------------------------
Tensor spectrogram(const Tensor& x, const STFTOptions& options, std::optional<double> power) {
  if (power && !(*power > 0.0)) throw Error("spectrogram", "power must be > 0, got " + num(*power));
  STFTOptions o = options;
  o.normalized = false;
  o.return_complex = true;
  Tensor S = stft(x, o);
  return ::phasor::detail::composite("spectrogram", {x}, [&] {
    if (options.normalized) {
      Tensor w = options.window.defined()
                     ? options.window
                     : ones({o.win_length.value_or(o.n_fft)}, detail::real_dtype_of(x), x.device());
      S = S / (w * w).sum().sqrt();
    }
    if (!power) return S;
    if (*power == 2.0) return addcmul(real(S) * real(S), imag(S), imag(S));
    if (*power == 1.0) return S.abs();
    return S.abs().pow(*power);
  });
}

Tensor spectrogram(const Tensor& x, std::int64_t n_fft, std::optional<std::int64_t> hop_length,
                   std::optional<std::int64_t> win_length, const Tensor& window, double power, bool normalized,
                   bool center, PadMode pad_mode) {
  STFTOptions o(n_fft);
  o.hop_length = hop_length;
  o.win_length = win_length;
  o.window = window;
  o.center = center;
  o.pad_mode = pad_mode;
  o.normalized = normalized;
  return spectrogram(x, o, power);
}

// ---- mel scale -----------------------------------------------------------------------------------------------
namespace {
constexpr double kSlaneyFsp = 200.0 / 3.0, kSlaneyMinLogHz = 1000.0, kSlaneyMinLogMel = 15.0;
const double kSlaneyLogStep = std::log(6.4) / 27.0;
}  // namespace

double hz_to_mel(double hz, MelScale scale) {
  if (scale == MelScale::htk) return 2595.0 * std::log10(1.0 + hz / 700.0);
  if (hz >= kSlaneyMinLogHz) return kSlaneyMinLogMel + std::log(hz / kSlaneyMinLogHz) / kSlaneyLogStep;
  return hz / kSlaneyFsp;
}

double mel_to_hz(double mel, MelScale scale) {
  if (scale == MelScale::htk) return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
  if (mel >= kSlaneyMinLogMel) return kSlaneyMinLogHz * std::exp(kSlaneyLogStep * (mel - kSlaneyMinLogMel));
  return kSlaneyFsp * mel;
}

Tensor melscale_fbanks(std::int64_t n_freqs, double f_min, double f_max, std::int64_t n_mels, double sample_rate,
                       MelNorm norm, MelScale mel_scale, Dtype dtype, Device device) {
  const char* op = "melscale_fbanks";
  if (n_freqs < 1) throw Error(op, "n_freqs must be >= 1, got " + str(n_freqs));
  if (n_mels < 1) throw Error(op, "n_mels must be >= 1, got " + str(n_mels));
  if (!(sample_rate > 0.0)) throw Error(op, "sample_rate must be > 0, got " + num(sample_rate));
  if (!(f_min >= 0.0) || !(f_max > f_min))
    throw Error(op, "need 0 <= f_min < f_max, got f_min = " + num(f_min) + ", f_max = " + num(f_max));
  if (!is_floating(dtype)) throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
  detail::check_device_exists(device, op);
  const double m_min = hz_to_mel(f_min, mel_scale), m_max = hz_to_mel(f_max, mel_scale);
  std::vector<double> f_pts(static_cast<std::size_t>(n_mels + 2));
  for (std::int64_t j = 0; j < n_mels + 2; ++j)
    f_pts[static_cast<std::size_t>(j)] =
        mel_to_hz(m_min + (m_max - m_min) * static_cast<double>(j) / static_cast<double>(n_mels + 1), mel_scale);
  std::vector<double> fb(static_cast<std::size_t>(n_freqs * n_mels));
  for (std::int64_t i = 0; i < n_freqs; ++i) {
    const double f =
        n_freqs == 1 ? 0.0 : sample_rate / 2.0 * static_cast<double>(i) / static_cast<double>(n_freqs - 1);
    for (std::int64_t m = 0; m < n_mels; ++m) {
      const auto mm = static_cast<std::size_t>(m);
      const double lo = f_pts[mm], c = f_pts[mm + 1], hi = f_pts[mm + 2];
      const double down = (f - lo) / (c - lo), up = (hi - f) / (hi - c);
      double v = std::max(0.0, std::min(down, up));
      if (norm == MelNorm::slaney) v *= 2.0 / (hi - lo);
      fb[static_cast<std::size_t>(i * n_mels + m)] = v;
    }
  }
  return from_vector(fb, Shape{n_freqs, n_mels}).to(dtype).to(device);
}

Tensor mel_spectrogram(const Tensor& x, const MelSpectrogramOptions& m) {
  const char* op = "mel_spectrogram";
  detail::check_input(x, op);
  if (m.n_fft < 1) throw Error(op, "n_fft must be >= 1, got " + str(m.n_fft));
  const std::int64_t win = m.win_length.value_or(m.n_fft);
  if (win < 1) throw Error(op, "win_length must be >= 1, got " + str(win));
  const double f_max = m.f_max.value_or(m.sample_rate / 2.0);
  if (f_max > m.sample_rate / 2.0 + 1e-9 * m.sample_rate)
    throw Error(op, "f_max = " + num(f_max) + " exceeds the Nyquist frequency sample_rate / 2 = " +
                        num(m.sample_rate / 2.0));
  const Dtype dt = detail::real_dtype_of(x);
  STFTOptions o(m.n_fft);
  o.win_length = win;
  o.hop_length = m.hop_length.value_or(std::max<std::int64_t>(win / 2, 1));
  o.window = m.window.defined() ? m.window : hann_window(win, true, dt, x.device());
  o.center = m.center;
  o.pad_mode = m.pad_mode;
  o.normalized = m.normalized;
  o.onesided = true;
  Tensor fb = melscale_fbanks(m.n_fft / 2 + 1, m.f_min, f_max, m.n_mels, m.sample_rate, m.norm, m.mel_scale, dt, x.device());
  std::vector<Tensor> ins{x};
  if (m.window.defined()) ins.push_back(m.window);
  return ::phasor::detail::composite(op, ins, [&] {
    Tensor spec = spectrogram(x, o, m.power);  // (..., n_freq, T)
    return matmul(fb.t(), spec);               // (n_mels, n_freq) @ (..., n_freq, T)
  });
}

}  // namespace phasor::signal
