// tests/test_signal.cpp - phasor::signal against closed forms (window formulas, the STFT of a pure
// tone, the analytic signal of a cosine, istft(stft(x)) == x), naive long-double loops (convolution,
// correlation, framing), scipy.signal / torch reference values stored as .npy fixtures (made by
// tests/fixtures/make_signal_fixtures.py), float64 finite differences (gradcheck) and error paths.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
namespace S = phasor::signal;
using cd = std::complex<double>;
using cld = std::complex<long double>;
using G = std::vector<Tensor>;

namespace {

constexpr double kPi = 3.14159265358979323846;

Tensor fixture(const std::string& name) {
  return io::load_npy(std::string(PHASOR_TEST_DATA_DIR) + "/signal/" + name + ".npy");
}

/// Largest |a - b| over all elements (complex-aware), shapes must match.
double max_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto va = to_vector<cd>(a.is_complex() ? a : a.to(float64));
  auto vb = to_vector<cd>(b.is_complex() ? b : b.to(float64));
  double m = 0.0;
  for (std::size_t i = 0; i < va.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}

double max_abs(const Tensor& a) {
  double m = 0.0;
  for (auto v : to_vector<cd>(a.is_complex() ? a : a.to(float64))) m = std::max(m, std::abs(v));
  return m;
}

/// Checks a against b to `tol` relative to b's largest magnitude.
void check_near(const Tensor& a, const Tensor& b, double tol = 1e-10) {
  const double d = max_diff(a, b), s = std::max(1.0, max_abs(b));
  INFO("max |a - b| = " << d << " (scale " << s << ")");
  CHECK(d <= tol * s);
}

/// Naive full linear convolution (long double) of two complex sequences.
std::vector<cld> naive_conv(const std::vector<cd>& a, const std::vector<cd>& b) {
  std::vector<cld> y(a.size() + b.size() - 1);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) y[i + j] += cld(a[i].real(), a[i].imag()) * cld(b[j].real(), b[j].imag());
  return y;
}

/// Crops a full convolution to scipy's mode.
std::vector<cld> crop(const std::vector<cld>& full, std::size_t La, std::size_t Lb, const std::string& mode) {
  std::size_t start = 0, len = full.size();
  if (mode == "same") start = (Lb - 1) / 2, len = La;
  if (mode == "valid") start = std::min(La, Lb) - 1, len = std::max(La, Lb) - std::min(La, Lb) + 1;
  return std::vector<cld>(full.begin() + static_cast<std::ptrdiff_t>(start),
                          full.begin() + static_cast<std::ptrdiff_t>(start + len));
}

void check_vs(const Tensor& t, const std::vector<cld>& ref, double tol) {
  auto v = to_vector<cd>(t.is_complex() ? t : t.to(float64));
  REQUIRE(v.size() == ref.size());
  long double m = 0, s = 1;
  for (std::size_t i = 0; i < v.size(); ++i) {
    m = std::max(m, std::abs(cld(v[i].real(), v[i].imag()) - ref[i]));
    s = std::max(s, std::abs(ref[i]));
  }
  INFO("max error " << static_cast<double>(m) << " scale " << static_cast<double>(s));
  CHECK(static_cast<double>(m) <= tol * static_cast<double>(s));
}

Tensor rnd(const Shape& s, Dtype dt = float64) { return randn(s, dt); }
Tensor leaf(const Shape& s, Dtype dt = float64) { return randn(s, dt).requires_grad_(); }

}  // namespace

// ---- windows -----------------------------------------------------------------------------------------------
TEST_CASE("signal windows: Hann closed form, periodic = symmetric of N + 1 truncated, edge lengths") {
  for (std::int64_t N : {2, 7, 16}) {
    auto sym = to_vector<double>(S::hann_window(N, false, float64));
    auto per = to_vector<double>(S::hann_window(N, true, float64));
    for (std::int64_t k = 0; k < N; ++k) {
      const double kk = static_cast<double>(k);
      CHECK(sym[static_cast<std::size_t>(k)] ==
            doctest::Approx(0.5 - 0.5 * std::cos(2 * kPi * kk / static_cast<double>(N - 1))).epsilon(1e-14));
      CHECK(per[static_cast<std::size_t>(k)] ==
            doctest::Approx(0.5 - 0.5 * std::cos(2 * kPi * kk / static_cast<double>(N))).epsilon(1e-14));
    }
  }
  CHECK(S::hann_window(0).numel() == 0);
  CHECK(to_vector<double>(S::kaiser_window(1, true, 5.0, float64)) == std::vector<double>{1.0});
  Tensor w = S::hann_window(512, float32);  // the API sketch's call
  CHECK(w.dtype() == float32);
  CHECK(w.shape() == Shape{512});
  CHECK(S::hann_window(8).dtype() == default_dtype());
  // Bartlett: triangle with zero end points; Kaiser(beta = 0) is rectangular.
  CHECK(max_diff(S::bartlett_window(5, false, float64), from_vector(std::vector<double>{0, 0.5, 1, 0.5, 0})) < 1e-15);
  CHECK(max_diff(S::kaiser_window(6, false, 0.0, float64), ones({6}, float64)) < 1e-15);
  CHECK(max_diff(S::tukey_window(9, 0.0, false, float64), ones({9}, float64)) < 1e-15);
  CHECK(max_diff(S::tukey_window(9, 1.0, false, float64), S::hann_window(9, false, float64)) < 1e-15);
}

TEST_CASE("signal windows: all nine against scipy.signal.windows (sym and periodic, odd and even)") {
  for (std::int64_t M : {16, 17}) {
    for (bool periodic : {false, true}) {
      Tensor ref = fixture(std::string(periodic ? "windows_periodic_" : "windows_sym_") + std::to_string(M));
      const std::vector<Tensor> ours{
          S::hann_window(M, periodic, float64),
          S::hamming_window(M, periodic, 0.54, 0.46, float64),
          S::blackman_window(M, periodic, float64),
          S::bartlett_window(M, periodic, float64),
          S::kaiser_window(M, periodic, 8.6, float64),
          S::kaiser_window(M, periodic, 12.0, float64),
          S::gaussian_window(M, 2.5, periodic, float64),
          S::tukey_window(M, 0.3, periodic, float64),
          S::general_cosine_window(M, {0.5, 0.3, 0.2}, periodic, float64),
      };
      for (std::size_t i = 0; i < ours.size(); ++i) {
        INFO("M = " << M << " periodic = " << periodic << " window #" << i);
        CHECK(max_diff(ours[i], ref.select(0, static_cast<std::int64_t>(i))) < 1e-13);
      }
    }
  }
  // get_window by name matches the direct calls
  CHECK(max_diff(S::get_window("hann", 10, true, float64), S::hann_window(10, true, float64)) == 0.0);
  CHECK(max_diff(S::get_window(S::WindowSpec("kaiser", 3.0), 10, false, float64),
                 S::kaiser_window(10, false, 3.0, float64)) == 0.0);
  CHECK(max_diff(S::get_window("boxcar", 4, true, float64), ones({4}, float64)) == 0.0);
}

TEST_CASE("signal windows: bad arguments throw naming the op and value") {
  CHECK_THROWS_WITH_AS(S::hann_window(-1), doctest::Contains("[hann_window] window_length must be >= 0, got -1"), Error);
  CHECK_THROWS_WITH_AS(S::kaiser_window(8, true, -2.0), doctest::Contains("[kaiser_window] beta"), Error);
  CHECK_THROWS_WITH_AS(S::tukey_window(8, 1.5), doctest::Contains("[tukey_window] alpha must lie in [0, 1], got 1.5"), Error);
  CHECK_THROWS_WITH_AS(S::gaussian_window(8, 0.0), doctest::Contains("[gaussian_window] std"), Error);
  CHECK_THROWS_WITH_AS(S::general_cosine_window(8, {}), doctest::Contains("[general_cosine_window]"), Error);
  CHECK_THROWS_WITH_AS(S::hann_window(8, true, int64), doctest::Contains("int64"), Error);
  CHECK_THROWS_WITH_AS(S::get_window("hannn", 8), doctest::Contains("[get_window] unknown window \"hannn\""), Error);
  CHECK_THROWS_WITH_AS(S::get_window("gaussian", 8), doctest::Contains("std parameter"), Error);
  CHECK_THROWS_WITH_AS(S::get_window(S::WindowSpec("hann", 2.0), 8), doctest::Contains("takes no parameter"), Error);
  CHECK_THROWS_WITH_AS(S::get_window(ones({5}), 8), doctest::Contains("(5,)"), Error);
}

// ---- frame / overlap_add ------------------------------------------------------------------------------------
TEST_CASE("signal frame: values, any dim, and overlap_add is its adjoint") {
  Tensor x = arange(0, 2 * 11 * 3, 1, float64).reshape({2, 11, 3});
  Tensor f = S::frame(x, 4, 3, 1);  // (2, 3 frames, 3, 4)
  REQUIRE(f.shape() == Shape{2, 3, 3, 4});
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 3; ++t)
      for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t k = 0; k < 4; ++k)
          CHECK(f.index({b, t, c, k}).item<double>() == x.index({b, t * 3 + k, c}).item<double>());
  // <frame(x), y> == <x, overlap_add(y)>
  Tensor x1 = rnd({2, 50}), y1 = rnd({2, 9, 10});
  Tensor fr = S::frame(x1, 10, 5);
  REQUIRE(fr.shape() == Shape{2, 9, 10});
  Tensor ola = S::overlap_add(y1, 5);
  REQUIRE(ola.shape() == Shape{2, 50});
  CHECK((fr * y1).sum().item<double>() == doctest::Approx((x1 * ola).sum().item<double>()).epsilon(1e-12));
}

TEST_CASE("signal frame: errors") {
  Tensor x = rnd({10});
  CHECK_THROWS_WITH_AS(S::frame(x, 11, 2), doctest::Contains("[frame] frame_length 11 exceeds the 10 samples"), Error);
  CHECK_THROWS_WITH_AS(S::frame(x, 4, 0), doctest::Contains("[frame] hop_length must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::frame(x, 4, -3), doctest::Contains("got -3"), Error);
  CHECK_THROWS_WITH_AS(S::frame(x, 0, 1), doctest::Contains("frame_length must be >= 1"), Error);
  CHECK_THROWS_WITH_AS(S::frame(x, 2, 1, 3), doctest::Contains("[frame]"), Error);
  CHECK_THROWS_WITH_AS(S::overlap_add(x, 2), doctest::Contains("[overlap_add]"), Error);
  CHECK_THROWS_WITH_AS(S::overlap_add(rnd({3, 4}), 0), doctest::Contains("hop_length must be >= 1, got 0"), Error);
}

// ---- stft / istft ---------------------------------------------------------------------------------------------
TEST_CASE("signal stft: a pure tone puts N/2 e^(i 2 pi k0 t hop / N) into bin k0, zero elsewhere") {
  const std::int64_t N = 32, k0 = 5, hop = 7, L = 160;
  std::vector<double> xv(L);
  for (std::int64_t n = 0; n < L; ++n)
    xv[static_cast<std::size_t>(n)] = std::cos(2 * kPi * k0 * static_cast<double>(n) / N);
  Tensor X = S::stft(from_vector(xv), N, hop, N, Tensor(), /*center=*/false);
  const std::int64_t T = 1 + (L - N) / hop;
  REQUIRE(X.shape() == Shape{N / 2 + 1, T});
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t f = 0; f <= N / 2; ++f) {
      const cd v = X.index({f, t}).item<cd>();
      const cd want = f == k0 ? 0.5 * N * std::polar(1.0, 2 * kPi * k0 * static_cast<double>(t * hop) / N) : cd(0);
      CHECK(std::abs(v - want) < 1e-11);
    }
  // the real view and the normalized transform
  Tensor R = S::stft(from_vector(xv), N, hop, N, Tensor(), false, PadMode::reflect, false, std::nullopt, false);
  CHECK(R.shape() == Shape{N / 2 + 1, T, 2});
  CHECK(max_diff(complex(R.select(-1, 0), R.select(-1, 1)), X) == 0.0);
  Tensor Xn = S::stft(from_vector(xv), N, hop, N, Tensor(), false, PadMode::reflect, true);
  CHECK(max_diff(Xn * std::sqrt(static_cast<double>(N)), X) < 1e-12);
}

TEST_CASE("signal stft: against torch.stft (center/reflect, no center + normalized + two-sided, rectangular)") {
  Tensor x = fixture("stft_x");
  Tensor S1 = S::stft(x, 64, 16, 48, S::hann_window(48, true, float64));
  check_near(S1, fixture("stft_center_reflect"), 1e-12);
  S::STFTOptions o(64);
  o.hop(20).with_window(S::hamming_window(64, float64)).centered(false).normalize(true).one_sided(false);
  check_near(S::stft(x, o), fixture("stft_nocenter_norm_twosided"), 1e-12);
  check_near(S::stft(x, S::STFTOptions(32).hop(8).pad(PadMode::constant)), fixture("stft_center_constant_rect"),
             1e-12);
  // batch dims: (3, 2, L) == stacking the (2, L) result
  Tensor xb = stack({x, x * 2.0, x * -1.0});
  Tensor Sb = S::stft(xb, 64, 16, 48, S::hann_window(48, true, float64));
  CHECK(Sb.shape() == Shape{3, 2, 33, 13});
  CHECK(max_diff(Sb.select(0, 1), S1 * 2.0) < 1e-11);
  // float32: the API sketch's call, close to the float64 result
  Tensor S32 = S::stft(x.to(float32), 64, 16, 48, S::hann_window(48, float32));
  CHECK(S32.dtype() == complex64);
  CHECK(max_diff(S32.to(complex128), S1) < 1e-4 * max_abs(S1));
  // other padding modes run and give the interior frames unchanged
  for (PadMode m : {PadMode::replicate, PadMode::circular}) {
    Tensor Sm = S::stft(x, 64, 16, 48, S::hann_window(48, true, float64), true, m);
    CHECK(max_diff(Sm.narrow(-1, 2, 8), S1.narrow(-1, 2, 8)) < 1e-11);
  }
}

TEST_CASE("signal istft: istft(stft(x)) == x (centered, uncentered with a NOLA window, two-sided complex)") {
  manual_seed(1);
  Tensor x = rnd({2, 300});
  Tensor w = S::hann_window(64, true, float64);
  Tensor X = S::stft(x, 64, 16, 64, w);
  check_near(S::istft(X, 64, 16, 64, w, true, false, std::nullopt, 300), x, 1e-12);
  // a longer length: the reflect-padded samples the frames cover (as torch.istft), then zeros
  Tensor y = S::istft(X, 64, 16, 64, w, true, false, std::nullopt, 330);
  CHECK(y.shape() == Shape{2, 330});
  check_near(y.narrow(-1, 0, 300), x, 1e-12);
  check_near(y.narrow(-1, 300, 20), flip(x.narrow(-1, 279, 20), {-1}), 1e-12);
  CHECK(max_abs(y.narrow(-1, 320, 10)) < 1e-12);
  check_near(S::istft(X, 64, 16, 64, w, true, false, std::nullopt, 123), x.narrow(-1, 0, 123), 1e-12);
  // without centering a Hamming window keeps NOLA everywhere
  Tensor wh = S::hamming_window(32, float64);
  Tensor Xu = S::stft(x, S::STFTOptions(32).hop(8).with_window(wh).centered(false));
  Tensor xu = S::istft(Xu, S::STFTOptions(32).hop(8).with_window(wh).centered(false));
  CHECK(xu.shape() == Shape{2, 32 + 8 * 33});
  check_near(xu, x.narrow(-1, 0, 32 + 8 * 33), 1e-12);
  // complex signal, two-sided, normalized, win_length < n_fft
  Tensor xc = complex(rnd({120}), rnd({120}));
  Tensor wc = S::hann_window(24, true, float64);
  S::STFTOptions oc(32);
  oc.hop(6).win(24).with_window(wc).normalize(true).complex_output(true).output_length(120);
  Tensor Xc = S::stft(xc, oc);
  CHECK(Xc.shape() == Shape{32, 21});
  check_near(S::istft(Xc, oc), xc, 1e-12);
}

TEST_CASE("signal stft/istft: bad input throws naming the op and the values") {
  Tensor x = rnd({100});
  Tensor w = S::hann_window(64, float64);
  CHECK_THROWS_WITH_AS(S::stft(x, 64, 0), doctest::Contains("[stft] hop_length must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 64, -4), doctest::Contains("got -4"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 64, 16, 48, w), doctest::Contains("[stft] window of shape (64,) does not match win_length = 48"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 64, 16, 80), doctest::Contains("win_length must lie in [1, n_fft = 64], got 80"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 0), doctest::Contains("n_fft must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 128, 16, 128, Tensor(), false), doctest::Contains("[stft] n_fft = 128 exceeds the signal length 100"), Error);
  CHECK_THROWS_WITH_AS(S::stft(rnd({20}), 64), doctest::Contains("reflect padding needs more than n_fft / 2 = 32 samples, got a signal of 20"), Error);
  CHECK_THROWS_WITH_AS(S::stft(complex(x, x), 16, 4, 16, Tensor(), true, PadMode::reflect, false, true),
                       doctest::Contains("onesided = true needs a real input"), Error);
  CHECK_THROWS_WITH_AS(S::stft(x, 16, 4, 16, rnd({4, 4})), doctest::Contains("window of shape (4, 4)"), Error);
  Tensor X = S::stft(x, 64, 16, 64, w);
  CHECK_THROWS_WITH_AS(S::istft(X.abs(), 64, 16), doctest::Contains("[istft] expected a complex STFT"), Error);
  CHECK_THROWS_WITH_AS(S::istft(X, 60, 16), doctest::Contains("has 33 frequency bins, expected 31 for n_fft = 60"), Error);
  CHECK_THROWS_WITH_AS(S::istft(X, 64, 16, 48, w), doctest::Contains("[istft] window of shape (64,) does not match win_length = 48"), Error);
  CHECK_THROWS_WITH_AS(S::istft(X, 64, 0), doctest::Contains("[istft] hop_length must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::istft(X, 64, 16, 64, w, true, false, std::nullopt, -5), doctest::Contains("length must be >= 0, got -5"), Error);
  // NOLA: a periodic Hann window is zero at the first sample, which center = false does not trim
  Tensor Xu = S::stft(x, 64, 16, 64, w, false);
  CHECK_THROWS_WITH_AS(S::istft(Xu, 64, 16, 64, w, false),
                       doctest::Contains("NOLA condition violated) for n_fft = 64, hop_length = 16, win_length = 64"), Error);
  // ... and a hop longer than the window leaves gaps
  Tensor Xg = S::stft(x, 16, 20, 16, Tensor(), false);
  CHECK_THROWS_WITH_AS(S::istft(Xg, 16, 20, 16, Tensor(), false), doctest::Contains("at output sample 16 (NOLA"), Error);
}

// ---- spectrogram / mel -------------------------------------------------------------------------------------------
TEST_CASE("signal spectrogram: |stft|^power and window normalization") {
  Tensor x = fixture("stft_x");
  Tensor w = S::hann_window(48, true, float64);
  Tensor X = S::stft(x, 64, 16, 48, w);
  Tensor P = S::spectrogram(x, 64, 16, 48, w);
  check_near(P, X.abs() * X.abs(), 1e-12);
  check_near(S::spectrogram(x, 64, 16, 48, w, 1.0), X.abs(), 1e-12);
  check_near(S::spectrogram(x, 64, 16, 48, w, 1.5), X.abs().pow(1.5), 1e-12);
  check_near(S::spectrogram(x, 64, 16, 48, w, 2.0, /*normalized=*/true), P / (w * w).sum(), 1e-12);
  check_near(S::spectrogram(x, S::STFTOptions(64).hop(16).win(48).with_window(w), std::nullopt), X, 0.0);
  CHECK_THROWS_WITH_AS(S::spectrogram(x, 64, 16, 48, w, -1.0), doctest::Contains("[spectrogram] power must be > 0, got -1"), Error);
}

TEST_CASE("signal mel: filterbanks against the torchaudio/librosa formulas, mel spectrogram of a chirp") {
  check_near(S::melscale_fbanks(129, 0.0, 8000.0, 20, 16000.0, S::MelNorm::none, S::MelScale::htk, float64),
             fixture("mel_fb_htk"), 1e-12);
  check_near(S::melscale_fbanks(129, 30.0, 7000.0, 24, 16000.0, S::MelNorm::slaney, S::MelScale::slaney, float64),
             fixture("mel_fb_slaney"), 1e-12);
  for (auto sc : {S::MelScale::htk, S::MelScale::slaney})
    for (double hz : {0.0, 440.0, 999.0, 1000.0, 5000.0})
      CHECK(S::mel_to_hz(S::hz_to_mel(hz, sc), sc) == doctest::Approx(hz).epsilon(1e-12));
  CHECK(S::hz_to_mel(1000.0, S::MelScale::slaney) == doctest::Approx(15.0));
  CHECK(S::hz_to_mel(700.0, S::MelScale::htk) == doctest::Approx(2595.0 * std::log10(2.0)));
  S::MelSpectrogramOptions m;
  m.rate(8000).fft_size(128).hop(64).mels(16);
  Tensor y = S::mel_spectrogram(fixture("melspec_x"), m);
  check_near(y, fixture("melspec_y"), 1e-11);
  CHECK_THROWS_WITH_AS(S::melscale_fbanks(10, 500.0, 100.0, 4, 8000.0), doctest::Contains("[melscale_fbanks] need 0 <= f_min < f_max"), Error);
  CHECK_THROWS_WITH_AS(S::melscale_fbanks(10, 0.0, 100.0, 0, 8000.0), doctest::Contains("n_mels must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::mel_spectrogram(rnd({400}), S::MelSpectrogramOptions().band(0.0, 9000.0)),
                       doctest::Contains("[mel_spectrogram] f_max = 9000 exceeds the Nyquist frequency"), Error);
}

// ---- convolution -------------------------------------------------------------------------------------------------
TEST_CASE("signal fftconvolve / oaconvolve / correlate: against a naive long-double loop, all modes") {
  manual_seed(7);
  for (auto [La, Lb] : std::vector<std::pair<std::int64_t, std::int64_t>>{{37, 8}, {8, 37}, {20, 20}, {300, 9}, {1, 5}}) {
    Tensor a = rnd({La}), b = rnd({Lb});
    auto va = to_vector<cd>(a), vb = to_vector<cd>(b);
    auto full = naive_conv(va, vb);
    std::vector<cd> vbr(vb.rbegin(), vb.rend());
    auto cfull = naive_conv(va, vbr);
    for (std::string mode : {"full", "same", "valid"}) {
      INFO("La = " << La << " Lb = " << Lb << " mode " << mode);
      auto ref = crop(full, va.size(), vb.size(), mode);
      check_vs(S::fftconvolve(a, b, mode), ref, 1e-13);
      check_vs(S::oaconvolve(a, b, mode), ref, 1e-13);
      check_vs(S::correlate(a, b, mode), crop(cfull, va.size(), vb.size(), mode), 1e-13);
    }
  }
  // complex inputs; correlate conjugates the second
  Tensor a = complex(rnd({40}), rnd({40})), b = complex(rnd({7}), rnd({7}));
  auto va = to_vector<cd>(a), vb = to_vector<cd>(b);
  std::vector<cd> vbc;
  for (auto it = vb.rbegin(); it != vb.rend(); ++it) vbc.push_back(std::conj(*it));
  check_vs(S::fftconvolve(a, b), naive_conv(va, vb), 1e-13);
  check_vs(S::oaconvolve(a, b, "same"), crop(naive_conv(va, vb), 40, 7, "same"), 1e-13);
  check_vs(S::correlate(a, b, "valid"), crop(naive_conv(va, vbc), 40, 7, "valid"), 1e-13);
}

TEST_CASE("signal fftconvolve: batched along a dim with a broadcast 1-D filter") {
  Tensor x = rnd({3, 50, 2});
  Tensor h = rnd({6});
  Tensor y = S::fftconvolve(x, h.reshape({1, 6, 1}), "same", 1);
  Tensor y2 = S::oaconvolve(x.movedim(1, -1), h, "same").movedim(-1, 1);  // negative dim broadcasts (3, 2, .)
  REQUIRE(y.shape() == Shape{3, 50, 2});
  CHECK(max_diff(y, y2) < 1e-12);
  auto vh = to_vector<cd>(h);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t c = 0; c < 2; ++c) {
      auto ref = crop(naive_conv(to_vector<cd>(x.index({i, Slice(), c})), vh), 50, 6, "same");
      check_vs(y.index({i, Slice(), c}), ref, 1e-13);
    }
}

TEST_CASE("signal convolution: errors") {
  Tensor a = rnd({10}), b = rnd({3});
  CHECK_THROWS_WITH_AS(S::fftconvolve(a, b, "circular"), doctest::Contains("[fftconvolve] mode must be \"full\", \"same\" or \"valid\", got \"circular\""), Error);
  CHECK_THROWS_WITH_AS(S::oaconvolve(a, b, "Full"), doctest::Contains("[oaconvolve] mode"), Error);
  CHECK_THROWS_WITH_AS(S::correlate(a, b, "xx"), doctest::Contains("[correlate] mode"), Error);
  CHECK_THROWS_WITH_AS(S::fftconvolve(a, zeros({0})), doctest::Contains("non-empty"), Error);
  CHECK_THROWS_WITH_AS(S::fftconvolve(rnd({2, 10}), rnd({3, 4})), doctest::Contains("[fftconvolve]"), Error);
  CHECK_THROWS_WITH_AS(S::fftconvolve(rnd({2, 10}), b, "full", 1), doctest::Contains("needs inputs of equal rank"), Error);
  CHECK_THROWS_WITH_AS(S::fftconvolve(a, b, "full", 2), doctest::Contains("dim"), Error);
  CHECK_THROWS_WITH_AS(S::fftconvolve(Tensor(), b), doctest::Contains("[fftconvolve] in1 is undefined"), Error);
}

// ---- hilbert / resample ---------------------------------------------------------------------------------------------
TEST_CASE("signal hilbert: cos -> cos + i sin, and scipy.signal.hilbert") {
  for (std::int64_t N : {64, 63}) {
    std::vector<double> c(static_cast<std::size_t>(N));
    std::vector<cd> want(static_cast<std::size_t>(N));
    for (std::int64_t n = 0; n < N; ++n) {
      const double ph = 2 * kPi * 5.0 * static_cast<double>(n) / static_cast<double>(N) + 0.3;
      c[static_cast<std::size_t>(n)] = std::cos(ph);
      want[static_cast<std::size_t>(n)] = std::polar(1.0, ph);
    }
    check_near(S::hilbert(from_vector(c)), from_vector(want), 1e-13);
  }
  Tensor x = fixture("hilbert_x");
  check_near(S::hilbert(x), fixture("hilbert_y"), 1e-13);
  check_near(S::hilbert(x, 48), fixture("hilbert_y_n48"), 1e-13);
  check_near(S::hilbert(x.t(), std::nullopt, 0).t(), fixture("hilbert_y"), 1e-13);
  CHECK_THROWS_WITH_AS(S::hilbert(complex(x, x)), doctest::Contains("[hilbert] x must be real, got complex128"), Error);
  CHECK_THROWS_WITH_AS(S::hilbert(x, 0), doctest::Contains("[hilbert] N must be >= 1, got 0"), Error);
}

TEST_CASE("signal resample: against scipy.signal.resample (real and complex, up and down, window)") {
  Tensor x = fixture("resample_x");
  for (std::int64_t num : {75, 32, 81, 50, 19}) {
    INFO("num = " << num);
    check_near(S::resample(x, num), fixture("resample_" + std::to_string(num)), 1e-12);
  }
  check_near(S::resample(x.t(), 32, 0).t(), fixture("resample_32"), 1e-12);
  Tensor xc = fixture("resample_xc");
  for (std::int64_t num : {60, 30, 25}) {
    INFO("complex num = " << num);
    check_near(S::resample(xc, num), fixture("resample_c_" + std::to_string(num)), 1e-12);
  }
  check_near(S::resample(fixture("resample_xwin"), 36, -1, fixture("resample_win_hann")), fixture("resample_win_36"),
             1e-12);
  // a band-limited periodic signal is reproduced exactly on the finer grid
  std::vector<double> s(20), t(60);
  for (std::size_t n = 0; n < 20; ++n) s[n] = std::sin(2 * kPi * 3.0 * static_cast<double>(n) / 20.0);
  for (std::size_t n = 0; n < 60; ++n) t[n] = std::sin(2 * kPi * 3.0 * static_cast<double>(n) / 60.0);
  check_near(S::resample(from_vector(s), 60), from_vector(t), 1e-13);
  CHECK_THROWS_WITH_AS(S::resample(x, 10, -1, ones({2, 25}, float64)), doctest::Contains("window of shape (2, 25) must be 1-D"), Error);
  CHECK_THROWS_WITH_AS(S::resample(x, 0), doctest::Contains("[resample] num must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::resample(x, 10, -1, ones({49}, float64)), doctest::Contains("window of shape (49,) must be 1-D with 50 samples"), Error);
}

// ---- welch / periodogram ---------------------------------------------------------------------------------------------
TEST_CASE("signal welch / periodogram: against scipy.signal") {
  Tensor x = fixture("welch_x");
  auto [f, P] = S::welch(x, S::WelchOptions().sampling_rate(100.0).segment(128));
  check_near(f, fixture("welch_default_f"), 1e-14);
  check_near(P, fixture("welch_default_P"), 1e-12);
  auto [f2, P2] = S::welch(x, S::WelchOptions()
                                  .sampling_rate(100.0)
                                  .with_window("hamming")
                                  .segment(100)
                                  .overlap(30)
                                  .fft_length(256)
                                  .detrend_type("linear")
                                  .scale("spectrum"));
  check_near(f2, fixture("welch_linear_spectrum_f"), 1e-14);
  check_near(P2, fixture("welch_linear_spectrum_P"), 1e-12);
  auto [f3, P3] = S::welch(fixture("welch_xc"), S::WelchOptions().sampling_rate(2.0).segment(64).detrend_type("none"));
  check_near(f3, fixture("welch_complex_f"), 1e-14);
  check_near(P3, fixture("welch_complex_P"), 1e-12);
  // a batch along dim 0 gives the same rows
  auto [fb, Pb] = S::welch(stack({x, x * 3.0}, 1), S::WelchOptions().sampling_rate(100.0).segment(128).along(0));
  CHECK(Pb.shape() == Shape{65, 2});
  check_near(Pb.select(1, 1), fixture("welch_default_P") * 9.0, 1e-12);
  // Parseval: the one-sided "spectrum" of a boxcar periodogram sums to the mean square (after detrend)
  Tensor xp = fixture("periodogram_x");
  auto [fp, Pp] = S::periodogram(xp, S::periodogram_options().sampling_rate(10.0));
  check_near(fp, fixture("periodogram_default_f"), 1e-14);
  check_near(Pp, fixture("periodogram_default_P"), 1e-12);
  auto [fq, Pq] = S::periodogram(xp, S::WelchOptions().sampling_rate(10.0).with_window("hann").fft_length(128).scale("spectrum"));
  check_near(fq, fixture("periodogram_hann_nfft_f"), 1e-14);
  check_near(Pq, fixture("periodogram_hann_nfft_P"), 1e-12);
  auto [fc, Pc] = S::periodogram(xp, S::periodogram_options().sampling_rate(10.0).fft_length(64).detrend_type("none"));
  check_near(fc, fixture("periodogram_crop_f"), 1e-14);
  check_near(Pc, fixture("periodogram_crop_P"), 1e-12);
  // two-sided welch of a real signal: one-sided bins 1..n/2-1 hold twice the two-sided ones
  auto [ft, Pt] = S::welch(x, S::WelchOptions().sampling_rate(100.0).segment(128).onesided(false));
  CHECK(Pt.shape() == Shape{128});
  check_near(Pt.narrow(0, 1, 63) * 2.0, P.narrow(0, 1, 63), 1e-12);
  check_near(Pt.narrow(0, 0, 1), P.narrow(0, 0, 1), 1e-12);
  check_near(ft.narrow(0, 0, 64), f.narrow(0, 0, 64), 1e-14);
  auto [fs_, Ps] = S::periodogram(xp, S::periodogram_options().scale("spectrum"));
  Tensor xc = xp - xp.mean();
  CHECK(Ps.sum().item<double>() == doctest::Approx((xc * xc).mean().item<double>()).epsilon(1e-12));
}

TEST_CASE("signal welch / periodogram: errors") {
  Tensor x = rnd({100});
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().segment(32).overlap(32)), doctest::Contains("[welch] noverlap must lie in [0, nperseg = 32), got 32"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().segment(32).fft_length(16)), doctest::Contains("nfft = 16 must be >= nperseg = 32"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().with_window(ones({128}, float64))), doctest::Contains("window of 128 samples is longer than the input's 100"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().with_window(ones({16}, float64)).segment(32)), doctest::Contains("nperseg = 32 differs from the window's length 16"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().scale("power")), doctest::Contains("scaling must be \"density\" or \"spectrum\", got \"power\""), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().detrend_type("quadratic")), doctest::Contains("detrend must be"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().sampling_rate(0.0)), doctest::Contains("[welch] fs must be > 0, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().with_window("nope")), doctest::Contains("unknown window"), Error);
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().with_window(zeros({32}, float64))),
                       "[welch] the window sums to zero; cannot scale the density", Error);
  const Tensor alternating = from_vector(std::vector<double>{1, -1, 1, -1});  // sums to zero, its squares do not
  CHECK_NOTHROW(S::welch(x, S::WelchOptions().with_window(alternating)));
  CHECK_THROWS_WITH_AS(S::welch(x, S::WelchOptions().with_window(alternating).scale("spectrum")),
                       "[welch] the window sums to zero; cannot scale the spectrum", Error);
  CHECK_THROWS_WITH_AS(S::periodogram(x, S::WelchOptions().with_window(ones({50}, float64))), doctest::Contains("[periodogram] window of shape (50,) must be 1-D with 100 samples"), Error);
  CHECK_THROWS_WITH_AS(S::periodogram(x, S::periodogram_options().fft_length(0)), doctest::Contains("nfft must be >= 1, got 0"), Error);
}

// ---- firwin / freqz -------------------------------------------------------------------------------------------------
TEST_CASE("signal firwin / freqz: against scipy.signal, and the response of [1, 1]") {
  check_near(S::firwin(31, {0.3}, std::nullopt, "hamming", "true", true, 2.0, float64), fixture("firwin_lowpass"), 1e-13);
  check_near(S::firwin(31, {0.4}, std::nullopt, "hamming", "highpass", true, 2.0, float64), fixture("firwin_highpass"), 1e-13);
  check_near(S::firwin(41, {0.2, 0.5}, std::nullopt, "blackman", "bandpass", true, 2.0, float64), fixture("firwin_bandpass"), 1e-13);
  check_near(S::firwin(41, {200.0, 500.0}, std::nullopt, "hann", "bandstop", true, 2000.0, float64), fixture("firwin_bandstop"), 1e-13);
  check_near(S::firwin(51, {1000.0}, 200.0, "hamming", "true", true, 8000.0, float64), fixture("firwin_kaiser_width"), 1e-13);
  check_near(S::firwin(45, {0.1, 0.3, 0.6}, std::nullopt, "hamming", "true", false, 2.0, float64), fixture("firwin_multiband_noscale"), 1e-13);
  Tensor b = fixture("firwin_lowpass");
  Tensor a = from_vector(std::vector<double>{1.0, -0.5, 0.25});
  auto [w, h] = S::freqz(b, a, 64);
  check_near(w, fixture("freqz_w"), 1e-14);
  check_near(h, fixture("freqz_h"), 1e-12);
  auto [w2, h2] = S::freqz(b, Tensor(), 50, true, 1000.0);
  check_near(w2, fixture("freqz_whole_fs_w"), 1e-14);
  check_near(h2, fixture("freqz_whole_fs_h"), 1e-12);
  auto [w3, h3] = S::freqz(b, a, 33, false, std::nullopt, true);
  check_near(w3, fixture("freqz_nyq_w"), 1e-14);
  check_near(h3, fixture("freqz_nyq_h"), 1e-12);
  // closed form: b = [1, 1] -> 1 + e^(-i w) = 2 cos(w / 2) e^(-i w / 2)
  auto [w4, h4] = S::freqz(from_vector(std::vector<double>{1.0, 1.0}), Tensor(), 8);
  auto wv = to_vector<double>(w4);
  auto hv = to_vector<cd>(h4);
  for (std::size_t k = 0; k < 8; ++k) CHECK(std::abs(hv[k] - 2.0 * std::cos(wv[k] / 2) * std::polar(1.0, -wv[k] / 2)) < 1e-14);
  // freqz_at a 0-d frequency, and batched coefficients
  Tensor hb = S::freqz_at(stack({b, b * 2.0}), Tensor(), scalar_tensor(0.0, float64));
  CHECK(hb.shape() == Shape{2});
  CHECK(std::abs(hb.index({1}).item<cd>() - 2.0) < 1e-12);  // scaled lowpass: unit DC gain
}

TEST_CASE("signal firwin / freqz: errors") {
  CHECK_THROWS_WITH_AS(S::firwin(30, {0.3}, std::nullopt, "hamming", "highpass"), doctest::Contains("[firwin] a filter with an even number of taps (30)"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {1.2}), doctest::Contains("cutoff 1.2 must lie strictly between 0 and fs / 2 = 1"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {0.5, 0.2}, std::nullopt, "hamming", "bandpass"), doctest::Contains("strictly increasing"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {0.2}, std::nullopt, "hamming", "bandpass"), doctest::Contains("needs at least two cutoffs, got 1"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {0.2, 0.4}, std::nullopt, "hamming", "lowpass"), doctest::Contains("needs exactly one cutoff, got 2"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {0.2}, std::nullopt, "hamming", "allpass"), doctest::Contains("pass_zero must be"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(0, {0.2}), doctest::Contains("numtaps must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::firwin(31, {}), doctest::Contains("at least one cutoff"), Error);
  CHECK_THROWS_WITH_AS(S::freqz(ones({3}), Tensor(), 0), doctest::Contains("[freqz] worN must be >= 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(S::freqz_at(ones({3}), Tensor(), ones({2, 2})), doctest::Contains("w must be 0-D or 1-D, got shape (2, 2)"), Error);
  CHECK_THROWS_WITH_AS(S::freqz(scalar_tensor(1.0)), doctest::Contains("[freqz] b must have at least 1 dim(s)"), Error);
}

// ---- gradients -----------------------------------------------------------------------------------------------------
TEST_CASE("signal gradcheck: frame, overlap_add, stft (input and window), istft, spectrogram, mel") {
  manual_seed(3);
  using autodiff::gradcheck;
  CHECK(gradcheck([](const G& in) { return S::frame(in[0], 4, 3, 0); }, {leaf({11, 2})}));
  CHECK(gradcheck([](const G& in) { return S::overlap_add(in[0], 2); }, {leaf({2, 3, 5})}));
  CHECK(gradcheck([](const G& in) { return S::stft(in[0], 8, 3, 6, in[1]); }, {leaf({2, 20}), leaf({6})}));
  CHECK(gradcheck([](const G& in) { return S::stft(in[0], 8, 2, 8, Tensor(), false, PadMode::constant, true, false); },
                  {complex(rnd({16}), rnd({16})).requires_grad_()}));
  Tensor w = S::hann_window(8, true, float64);
  Tensor X = S::stft(rnd({24}), 8, 2, 8, w).detach().requires_grad_();
  CHECK(gradcheck([w](const G& in) { return S::istft(in[0], 8, 2, 8, w); }, {X}));
  Tensor wl = (S::hamming_window(8, float64) + 0.1).requires_grad_();
  CHECK(gradcheck([](const G& in) { return S::istft(in[0], 8, 2, 8, in[1], false); }, {X, wl}));
  S::STFTOptions oc(8);
  oc.hop(2).with_window(w).complex_output(true).output_length(12);
  Tensor Xc = S::stft(complex(rnd({12}), rnd({12})), oc).detach().requires_grad_();
  CHECK(gradcheck([oc](const G& in) { return S::istft(in[0], oc); }, {Xc}));
  CHECK(gradcheck([w](const G& in) { return S::spectrogram(in[0], 8, 2, 8, w); }, {leaf({20})}));
  CHECK(gradcheck([w](const G& in) { return S::spectrogram(in[0], 8, 2, 8, w, 1.0, true); }, {leaf({20})}));
  S::MelSpectrogramOptions m;
  m.rate(800).fft_size(16).hop(4).mels(5);
  CHECK(gradcheck([m](const G& in) { return S::mel_spectrogram(in[0], m); }, {leaf({2, 30})}));
}

TEST_CASE("signal gradcheck: convolutions, hilbert, resample, welch, periodogram, freqz") {
  manual_seed(4);
  using autodiff::gradcheck;
  for (std::string mode : {"full", "same", "valid"}) {
    CHECK(gradcheck([mode](const G& in) { return S::fftconvolve(in[0], in[1], mode); }, {leaf({2, 9}), leaf({4})}));
    CHECK(gradcheck([mode](const G& in) { return S::correlate(in[0], in[1], mode); }, {leaf({9}), leaf({4})}));
  }
  CHECK(gradcheck([](const G& in) { return S::oaconvolve(in[0], in[1], "same"); }, {leaf({70}), leaf({3})}));
  CHECK(gradcheck([](const G& in) { return S::fftconvolve(in[0], in[1]); },
                  {complex(rnd({6}), rnd({6})).requires_grad_(), leaf({3})}));
  CHECK(gradcheck([](const G& in) { return S::correlate(in[0], in[1], "same"); },
                  {complex(rnd({8}), rnd({8})).requires_grad_(), complex(rnd({3}), rnd({3})).requires_grad_()}));
  CHECK(gradcheck([](const G& in) { return S::oaconvolve(in[0], in[1]); },
                  {complex(rnd({40}), rnd({40})).requires_grad_(), leaf({2})}));
  CHECK(gradcheck([](const G& in) { return S::hilbert(in[0]); }, {leaf({2, 9})}));
  CHECK(gradcheck([](const G& in) { return S::hilbert(in[0], 12); }, {leaf({7})}));
  for (std::int64_t num : {7, 12, 18})
    CHECK(gradcheck([num](const G& in) { return S::resample(in[0], num); }, {leaf({12})}));
  CHECK(gradcheck([](const G& in) { return S::resample(in[0], 9); }, {complex(rnd({12}), rnd({12})).requires_grad_()}));
  CHECK(gradcheck([](const G& in) { return std::get<1>(S::welch(in[0], S::WelchOptions().segment(8).detrend_type("linear"))); },
                  {leaf({2, 30})}));
  CHECK(gradcheck([](const G& in) { return std::get<1>(S::welch(in[0], S::WelchOptions().with_window(in[1]))); },
                  {leaf({30}), leaf({10})}));
  CHECK(gradcheck([](const G& in) { return std::get<1>(S::periodogram(in[0])); }, {leaf({15})}));
  CHECK(gradcheck([](const G& in) { return std::get<1>(S::freqz(in[0], in[1], 10)); },
                  {leaf({5}), (from_vector(std::vector<double>{1.0, -0.3, 0.1}) + 0.0).requires_grad_()}));
  CHECK(gradcheck([](const G& in) { return S::freqz_at(in[0], Tensor(), from_vector(std::vector<double>{0.1, 1.0, 3.0})); },
                  {complex(rnd({4}), rnd({4})).requires_grad_()}));
}

TEST_CASE("signal gradgradcheck: stft, istft, fftconvolve, welch") {
  manual_seed(5);
  using autodiff::gradgradcheck;
  Tensor w = S::hann_window(8, true, float64);
  CHECK(gradgradcheck([w](const G& in) { return S::stft(in[0], 8, 4, 8, w); }, {leaf({16})}));
  Tensor X = S::stft(rnd({16}), 8, 2, 8, w).detach().requires_grad_();
  CHECK(gradgradcheck([w](const G& in) { return S::istft(in[0], 8, 2, 8, w); }, {X}));
  CHECK(gradgradcheck([](const G& in) { return S::fftconvolve(in[0], in[1], "same"); }, {leaf({7}), leaf({3})}));
  CHECK(gradgradcheck([](const G& in) { return std::get<1>(S::welch(in[0], S::WelchOptions().segment(6))); }, {leaf({14})}));
}
