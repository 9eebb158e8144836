// phasor/signal.hpp - signal processing in the vocabulary of torch.stft / torchaudio / scipy.signal:
// windows, framing, STFT and its inverse, spectrograms, mel filterbanks, FFT convolution and
// correlation, the analytic signal, Fourier resampling, spectral density estimates (Welch,
// periodogram) and FIR design (firwin, freqz). Every tensor-valued op is built from differentiable
// phasor ops, so gradients (and gradients of gradients) flow through it.
//
// Devices: every op runs on the device of its input (CPU or CUDA) with the same code; results,
// default windows, frequency grids and filterbanks are made on that device, and tensors passed
// together (a window, a second input) must live on it. Windows, filterbanks and FIR taps are computed
// on the host in double precision and copied to their `device` argument (a nonexistent CUDA device is
// named in the error).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/tensor.hpp"

namespace phasor::signal {

// ---- windows --------------------------------------------------------------------------------------
// Every window takes `periodic` (torch's flag; scipy's sym = !periodic): a periodic window of length
// n is the symmetric window of length n + 1 without its last sample, the right choice for spectral
// analysis (stft, welch). Values are computed in double precision, then cast to `dtype` and placed on
// `device`.

/// Hann window 0.5 - 0.5 cos(2 pi k / (N - 1)) (torch.hann_window).
Tensor hann_window(std::int64_t window_length, bool periodic = true, Dtype dtype = default_dtype(),
                   Device device = Device::cpu());
/// Periodic Hann window of `dtype` (the torch-style call hann_window(512, float32)).
Tensor hann_window(std::int64_t window_length, Dtype dtype, Device device = Device::cpu());
/// Hamming window alpha - beta cos(2 pi k / (N - 1)) (torch.hamming_window).
Tensor hamming_window(std::int64_t window_length, bool periodic = true, double alpha = 0.54, double beta = 0.46,
                      Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Periodic Hamming window (0.54, 0.46) of `dtype`.
Tensor hamming_window(std::int64_t window_length, Dtype dtype, Device device = Device::cpu());
/// Blackman window 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1)) (torch.blackman_window).
Tensor blackman_window(std::int64_t window_length, bool periodic = true, Dtype dtype = default_dtype(),
                       Device device = Device::cpu());
/// Periodic Blackman window of `dtype`.
Tensor blackman_window(std::int64_t window_length, Dtype dtype, Device device = Device::cpu());
/// Bartlett (triangular, zero end points) window 1 - |2k / (N - 1) - 1| (torch.bartlett_window).
Tensor bartlett_window(std::int64_t window_length, bool periodic = true, Dtype dtype = default_dtype(),
                       Device device = Device::cpu());
/// Periodic Bartlett window of `dtype`.
Tensor bartlett_window(std::int64_t window_length, Dtype dtype, Device device = Device::cpu());
/// Kaiser window I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta) (torch.kaiser_window; beta >= 0).
Tensor kaiser_window(std::int64_t window_length, bool periodic = true, double beta = 12.0,
                     Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Periodic Kaiser window with beta = 12 of `dtype`.
Tensor kaiser_window(std::int64_t window_length, Dtype dtype, Device device = Device::cpu());
/// Gaussian window exp(-((k - (N - 1) / 2) / std)^2 / 2) (scipy.signal.windows.gaussian; std > 0).
Tensor gaussian_window(std::int64_t window_length, double std = 1.0, bool periodic = true,
                       Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Tukey (tapered cosine) window: flat top, cosine tapers over a fraction `alpha` in [0, 1]
/// (alpha = 0: rectangular, alpha = 1: Hann) (scipy.signal.windows.tukey).
Tensor tukey_window(std::int64_t window_length, double alpha = 0.5, bool periodic = true,
                    Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Sum of cosines sum_j (-1)^j a_j cos(2 pi j k / (N - 1)) (scipy.signal.windows.general_cosine; a non-empty).
Tensor general_cosine_window(std::int64_t window_length, const std::vector<double>& a, bool periodic = true,
                             Dtype dtype = default_dtype(), Device device = Device::cpu());

/// A window given by name (with an optional parameter) or as a tensor, as scipy's `window` arguments.
/// Names: "hann" ("hanning"), "hamming", "blackman", "bartlett", "boxcar" ("rectangular", "ones"),
/// "kaiser" (param = beta, default 12), "gaussian" (param = std, required), "tukey" (param = alpha,
/// default 0.5).
struct WindowSpec {
  /// A named window with its default parameter.
  WindowSpec(const char* name_) : name(name_) {}
  /// A named window with its default parameter.
  WindowSpec(std::string name_) : name(std::move(name_)) {}
  /// A named window with a parameter (kaiser beta, gaussian std, tukey alpha).
  WindowSpec(std::string name_, double param_) : name(std::move(name_)), param(param_) {}
  /// Explicit window values (1-D).
  WindowSpec(Tensor values_) : values(std::move(values_)) {}
  std::string name;             ///< window name (empty when `values` is given)
  std::optional<double> param;  ///< window parameter
  Tensor values;                ///< explicit window (defined when given as a tensor)
};

/// Window of `window_length` samples from a spec (scipy.signal.get_window; periodic = fftbins). A tensor
/// spec must have that length.
Tensor get_window(const WindowSpec& window, std::int64_t window_length, bool periodic = true,
                  Dtype dtype = default_dtype(), Device device = Device::cpu());

// ---- framing --------------------------------------------------------------------------------------
/// Sliding frames of `frame_length` samples every `hop_length` along `dim` (torch.Tensor.unfold):
/// `dim` becomes the number of frames 1 + (L - frame_length) / hop_length and a new last dim of
/// size frame_length holds each frame's samples. Differentiable (copies, unlike torch's view).
Tensor frame(const Tensor& x, std::int64_t frame_length, std::int64_t hop_length, std::int64_t dim = -1);
/// Overlap-add of frames (..., n_frames, frame_length) placed every `hop_length` samples: the adjoint of
/// frame(). The result has (n_frames - 1) * hop_length + frame_length samples in the last dim.
Tensor overlap_add(const Tensor& frames, std::int64_t hop_length);

// ---- short-time Fourier transform -------------------------------------------------------------------
/// All arguments of stft / istft / spectrogram besides the signal (fluent setters).
struct STFTOptions {
  /// Options for an n_fft-point transform.
  explicit STFTOptions(std::int64_t n_fft_) : n_fft(n_fft_) {}
  std::int64_t n_fft;                      ///< FFT size
  std::optional<std::int64_t> hop_length;  ///< frame step (default n_fft / 4)
  std::optional<std::int64_t> win_length;  ///< window size (default: the window's length, else n_fft); centered in n_fft
  Tensor window;                           ///< 1-D window of win_length samples (default: rectangular)
  bool center = true;                      ///< pad n_fft / 2 samples on both sides so frame t is centered at t * hop
  PadMode pad_mode = PadMode::reflect;     ///< how `center` pads
  bool normalized = false;                 ///< scale by n_fft^-1/2 (orthonormal frames)
  std::optional<bool> onesided;            ///< keep n_fft / 2 + 1 bins (default: true for real input and window)
  /// stft: complex result (default), else its real view with a trailing dim of 2; istft: complex output
  /// of a two-sided input (default false: a real signal)
  std::optional<bool> return_complex;
  std::optional<std::int64_t> length;      ///< istft only: output length (crop or zero-pad)
  /// Sets hop_length.
  STFTOptions& hop(std::int64_t v) { hop_length = v; return *this; }
  /// Sets win_length.
  STFTOptions& win(std::int64_t v) { win_length = v; return *this; }
  /// Sets the window.
  STFTOptions& with_window(Tensor w) { window = std::move(w); return *this; }
  /// Sets center.
  STFTOptions& centered(bool v) { center = v; return *this; }
  /// Sets the padding mode of center.
  STFTOptions& pad(PadMode m) { pad_mode = m; return *this; }
  /// Sets normalized.
  STFTOptions& normalize(bool v) { normalized = v; return *this; }
  /// Sets onesided.
  STFTOptions& one_sided(bool v) { onesided = v; return *this; }
  /// Sets return_complex.
  STFTOptions& complex_output(bool v) { return_complex = v; return *this; }
  /// Sets the istft output length.
  STFTOptions& output_length(std::int64_t v) { length = v; return *this; }
};

/// Short-time Fourier transform of x (..., L) (torch.stft): the result (..., n_freq, n_frames) holds
/// sum_k window[k] x[t * hop + k] e^(-2 pi i f k / n_fft) for each frame t (after `center` padding).
Tensor stft(const Tensor& x, std::int64_t n_fft, std::optional<std::int64_t> hop_length = std::nullopt,
            std::optional<std::int64_t> win_length = std::nullopt, const Tensor& window = Tensor(),
            bool center = true, PadMode pad_mode = PadMode::reflect, bool normalized = false,
            std::optional<bool> onesided = std::nullopt, bool return_complex = true);
/// stft with its arguments in an options struct.
Tensor stft(const Tensor& x, const STFTOptions& options);
/// Inverse STFT by windowed overlap-add (torch.istft): X (..., n_freq, n_frames) complex -> (..., length).
/// Throws phasor::Error when the squared window's overlap-add vanishes somewhere (NOLA violated).
Tensor istft(const Tensor& X, std::int64_t n_fft, std::optional<std::int64_t> hop_length = std::nullopt,
             std::optional<std::int64_t> win_length = std::nullopt, const Tensor& window = Tensor(),
             bool center = true, bool normalized = false, std::optional<bool> onesided = std::nullopt,
             std::optional<std::int64_t> length = std::nullopt, bool return_complex = false);
/// istft with its arguments in an options struct (pad_mode is ignored).
Tensor istft(const Tensor& X, const STFTOptions& options);
/// Spectrogram |stft(x)|^power (torchaudio.functional.spectrogram); power = nullopt returns the complex
/// STFT; normalized divides by sqrt(sum(window^2)) (torchaudio's "window" normalization). power 2 is
/// computed as re^2 + im^2, so its gradient is defined at zero too.
Tensor spectrogram(const Tensor& x, const STFTOptions& options, std::optional<double> power = 2.0);
/// spectrogram with the torch.stft-style positional arguments (onesided, real power).
Tensor spectrogram(const Tensor& x, std::int64_t n_fft, std::optional<std::int64_t> hop_length = std::nullopt,
                   std::optional<std::int64_t> win_length = std::nullopt, const Tensor& window = Tensor(),
                   double power = 2.0, bool normalized = false, bool center = true,
                   PadMode pad_mode = PadMode::reflect);

// ---- mel scale ------------------------------------------------------------------------------------------
/// Mel scale formula: HTK (2595 log10(1 + f / 700)) or Slaney (linear below 1 kHz, log above; librosa's default).
enum class MelScale { htk, slaney };
/// Filter normalization: none (peak 1) or Slaney (area normalization 2 / (f_right - f_left)).
enum class MelNorm { none, slaney };
/// Hz to mel on the given scale.
double hz_to_mel(double hz, MelScale scale = MelScale::htk);
/// Mel to Hz on the given scale.
double mel_to_hz(double mel, MelScale scale = MelScale::htk);
/// Triangular mel filterbank (n_freqs, n_mels) for frequencies linspace(0, sample_rate / 2, n_freqs)
/// (torchaudio.functional.melscale_fbanks); spec (..., n_freqs, t) maps to mels with fb^T @ spec.
Tensor melscale_fbanks(std::int64_t n_freqs, double f_min, double f_max, std::int64_t n_mels, double sample_rate,
                       MelNorm norm = MelNorm::none, MelScale mel_scale = MelScale::htk,
                       Dtype dtype = default_dtype(), Device device = Device::cpu());

/// Arguments of mel_spectrogram (torchaudio.transforms.MelSpectrogram's, same defaults).
struct MelSpectrogramOptions {
  double sample_rate = 16000;              ///< samples per second
  std::int64_t n_fft = 400;                ///< FFT size
  std::optional<std::int64_t> win_length;  ///< window size (default n_fft)
  std::optional<std::int64_t> hop_length;  ///< frame step (default win_length / 2)
  double f_min = 0.0;                      ///< lowest filter edge (Hz)
  std::optional<double> f_max;             ///< highest filter edge (default sample_rate / 2)
  std::int64_t n_mels = 128;               ///< number of mel bands
  Tensor window;                           ///< window (default: periodic Hann of win_length, x's dtype)
  double power = 2.0;                      ///< exponent of the magnitude
  bool normalized = false;                 ///< divide the STFT by sqrt(sum(window^2))
  bool center = true;                      ///< center frames (see STFTOptions)
  PadMode pad_mode = PadMode::reflect;     ///< padding mode of center
  MelNorm norm = MelNorm::none;            ///< filter normalization
  MelScale mel_scale = MelScale::htk;      ///< mel formula
  /// Sets sample_rate.
  MelSpectrogramOptions& rate(double v) { sample_rate = v; return *this; }
  /// Sets n_fft.
  MelSpectrogramOptions& fft_size(std::int64_t v) { n_fft = v; return *this; }
  /// Sets win_length.
  MelSpectrogramOptions& win(std::int64_t v) { win_length = v; return *this; }
  /// Sets hop_length.
  MelSpectrogramOptions& hop(std::int64_t v) { hop_length = v; return *this; }
  /// Sets n_mels.
  MelSpectrogramOptions& mels(std::int64_t v) { n_mels = v; return *this; }
  /// Sets f_min and f_max.
  MelSpectrogramOptions& band(double lo, std::optional<double> hi) { f_min = lo; f_max = hi; return *this; }
  /// Sets the filter normalization and mel formula.
  MelSpectrogramOptions& scale(MelNorm n, MelScale s) { norm = n; mel_scale = s; return *this; }
};
/// Mel spectrogram (..., n_mels, n_frames) of x (..., L) (torchaudio.transforms.MelSpectrogram).
Tensor mel_spectrogram(const Tensor& x, const MelSpectrogramOptions& options = {});

// ---- convolution and correlation -------------------------------------------------------------------------
/// Linear convolution of a and b along `dim` by FFT (scipy.signal.fftconvolve); the other dims broadcast.
/// mode "full" (La + Lb - 1 samples), "same" (La samples, centered) or "valid" (|La - Lb| + 1 samples
/// that do not depend on zero padding).
Tensor fftconvolve(const Tensor& a, const Tensor& b, const std::string& mode = "full", std::int64_t dim = -1);
/// Linear convolution by overlap-add of FFT blocks (scipy.signal.oaconvolve): the same result as
/// fftconvolve, faster when one input is much longer than the other.
Tensor oaconvolve(const Tensor& a, const Tensor& b, const std::string& mode = "full", std::int64_t dim = -1);
/// Cross-correlation sum_n a[n + k] conj(b[n]) along `dim` (scipy.signal.correlate, FFT method):
/// fftconvolve(a, conj(flip(b)), mode).
Tensor correlate(const Tensor& a, const Tensor& b, const std::string& mode = "full", std::int64_t dim = -1);

// ---- analytic signal and resampling ------------------------------------------------------------------------
/// Analytic signal x + i H(x) of a real x along `dim` (scipy.signal.hilbert), with an n-point FFT
/// (default the length along dim).
Tensor hilbert(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1);
/// Resamples x to `num` samples along `dim` with the Fourier method (scipy.signal.resample); an optional
/// `window` (L spectral weights in FFT order, like scipy's array window) weights the spectrum first.
Tensor resample(const Tensor& x, std::int64_t num, std::int64_t dim = -1, const Tensor& window = Tensor());

// ---- spectral density estimation ------------------------------------------------------------------------------
/// Arguments of welch / periodogram besides the signal (scipy.signal.welch's, same defaults).
struct WelchOptions {
  double fs = 1.0;                         ///< sampling frequency
  WindowSpec window = "hann";              ///< window (periodic when named)
  std::optional<std::int64_t> nperseg;     ///< segment length (default 256, or the window's length)
  std::optional<std::int64_t> noverlap;    ///< overlap (default nperseg / 2)
  std::optional<std::int64_t> nfft;        ///< FFT length (default nperseg; >= nperseg)
  std::string detrend = "constant";        ///< "constant" (segment mean), "linear" or "none"
  bool return_onesided = true;             ///< one-sided spectrum for real input (complex input: two-sided)
  std::string scaling = "density";         ///< "density" (V^2/Hz) or "spectrum" (V^2)
  std::int64_t dim = -1;                   ///< time dim
  /// Sets fs.
  WelchOptions& sampling_rate(double v) { fs = v; return *this; }
  /// Sets the window.
  WelchOptions& with_window(WindowSpec w) { window = std::move(w); return *this; }
  /// Sets nperseg.
  WelchOptions& segment(std::int64_t v) { nperseg = v; return *this; }
  /// Sets noverlap.
  WelchOptions& overlap(std::int64_t v) { noverlap = v; return *this; }
  /// Sets nfft.
  WelchOptions& fft_length(std::int64_t v) { nfft = v; return *this; }
  /// Sets detrend.
  WelchOptions& detrend_type(std::string v) { detrend = std::move(v); return *this; }
  /// Sets return_onesided.
  WelchOptions& onesided(bool v) { return_onesided = v; return *this; }
  /// Sets scaling.
  WelchOptions& scale(std::string v) { scaling = std::move(v); return *this; }
  /// Sets the time dim.
  WelchOptions& along(std::int64_t v) { dim = v; return *this; }
};
/// Default options of periodogram: WelchOptions with a rectangular ("boxcar") window.
inline WelchOptions periodogram_options() { return WelchOptions().with_window("boxcar"); }
/// Welch's averaged modified periodogram: returns (frequencies, Pxx) with Pxx of x's shape with `dim`
/// replaced by the frequency bins (scipy.signal.welch, average="mean").
std::tuple<Tensor, Tensor> welch(const Tensor& x, const WelchOptions& options = {});
/// Periodogram (scipy.signal.periodogram): one segment of the whole signal, rectangular window by
/// default (the options' nperseg and noverlap are ignored; a window, if given as a tensor, must span x).
std::tuple<Tensor, Tensor> periodogram(const Tensor& x, const WelchOptions& options = periodogram_options());

// ---- FIR filter design ------------------------------------------------------------------------------------------
/// FIR filter coefficients by the window method (scipy.signal.firwin): `cutoff` (increasing, in (0, fs/2))
/// band edges; pass_zero "lowpass" / "highpass" / "bandpass" / "bandstop", or "true" / "false" (whether
/// the DC gain is 1); `width` (transition width) selects a Kaiser window; scale normalizes the gain at
/// the first passband's center to 1.
Tensor firwin(std::int64_t numtaps, const std::vector<double>& cutoff, std::optional<double> width = std::nullopt,
              const WindowSpec& window = "hamming", const std::string& pass_zero = "true", bool scale = true,
              double fs = 2.0, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Frequency response of the digital filter b(z) / a(z) (scipy.signal.freqz): returns (w, h) with
/// h = sum_k b_k e^(-i w k) / sum_k a_k e^(-i w k) over the last dim of b and a (other dims broadcast).
/// worN frequencies evenly spaced over [0, pi) (or [0, 2 pi) if `whole`; the end point included when
/// include_nyquist), scaled to [0, fs/2) when fs is given; a undefined means a = 1. Differentiable in b, a.
std::tuple<Tensor, Tensor> freqz(const Tensor& b, const Tensor& a = Tensor(), std::int64_t worN = 512,
                                 bool whole = false, std::optional<double> fs = std::nullopt,
                                 bool include_nyquist = false);
/// freqz at the given frequencies `w` (in the units of fs, rad/sample when fs is not given).
Tensor freqz_at(const Tensor& b, const Tensor& a, const Tensor& w, std::optional<double> fs = std::nullopt);

}  // namespace phasor::signal
