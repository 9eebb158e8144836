// tests/test_spectral.cpp - spectral_mix and SpectralConv: against direct long-double DFT sums of
// the documented operator (1-D/2-D/3-D, even/odd sizes, super- and sub-resolution, all norms),
// gradcheck/gradgradcheck, module shapes and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "../src/nn/spectral_dft.hpp"
#include "test_util.hpp"

using namespace phasor;
using G = std::vector<Tensor>;
using cld = std::complex<long double>;

namespace {

constexpr long double kPi = 3.141592653589793238462643383279502884L;

std::int64_t prod(const Shape& s) {
  std::int64_t p = 1;
  for (auto v : s) p *= v;
  return p;
}

/// Multi-index of flat index `f` in row-major `shape`.
Shape unflat(std::int64_t f, const Shape& shape) {
  Shape idx(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    idx[i] = f % shape[i];
    f /= shape[i];
  }
  return idx;
}

long double norm_scale(fft::Norm norm, std::int64_t n, bool forward) {
  if (norm == fft::Norm::ortho) return 1.0L / std::sqrt(static_cast<long double>(n));
  if ((norm == fft::Norm::forward) == forward) return 1.0L / static_cast<long double>(n);
  return 1.0L;
}

/// The operator of Note [SpectralConv convention] by explicit DFT sums in long double.
/// x (B, I, *grid) float64, w (I, O, *wmodes) complex128, bias (O) or undefined.
std::vector<long double> naive_spectral_conv(const Tensor& x, const Tensor& w, const Tensor& bias,
                                             const std::vector<std::int64_t>& modes, const Shape& ogrid,
                                             fft::Norm norm) {
  const std::int64_t B = x.size(0), I = x.size(1), O = w.size(1);
  const std::size_t d = modes.size();
  const Shape grid(x.shape().begin() + 2, x.shape().end());
  const Shape wm(w.shape().begin() + 2, w.shape().end());
  const std::int64_t K = prod(wm), N = prod(grid), No = prod(ogrid);
  const auto xv = to_vector<double>(x);
  const auto wv = to_vector<std::complex<double>>(w);
  // frequency of each kept mode
  std::vector<Shape> freq(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) {
    Shape j = unflat(k, wm);
    for (std::size_t l = 0; l + 1 < d; ++l)
      if (j[l] >= modes[l]) j[l] -= 2 * modes[l];
    freq[static_cast<std::size_t>(k)] = j;
  }
  auto find_mode = [&](const Shape& f) -> std::int64_t {  // kept index of frequency f (output grid), or -1
    for (std::int64_t k = 0; k < K; ++k) {
      bool eq = true;
      for (std::size_t l = 0; l < d && eq; ++l) {
        const std::int64_t a = ((freq[static_cast<std::size_t>(k)][l] % ogrid[l]) + ogrid[l]) % ogrid[l];
        const std::int64_t b = ((f[l] % ogrid[l]) + ogrid[l]) % ogrid[l];
        eq = a == b;
      }
      if (eq) return k;
    }
    return -1;
  };
  // X[b,i,k]
  std::vector<cld> X(static_cast<std::size_t>(B * I * K));
  const long double sin_ = norm_scale(norm, N, true);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < I; ++i)
      for (std::int64_t k = 0; k < K; ++k) {
        cld acc = 0;
        for (std::int64_t t = 0; t < N; ++t) {
          const Shape tt = unflat(t, grid);
          long double ph = 0;
          for (std::size_t l = 0; l < d; ++l)
            ph += static_cast<long double>(freq[static_cast<std::size_t>(k)][l] * tt[l]) / grid[l];
          acc += static_cast<long double>(xv[static_cast<std::size_t>((b * I + i) * N + t)]) *
                 std::polar(1.0L, -2 * kPi * ph);
        }
        X[static_cast<std::size_t>((b * I + i) * K + k)] = acc * sin_;
      }
  // Y[b,o,k]
  std::vector<cld> Y(static_cast<std::size_t>(B * O * K));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t k = 0; k < K; ++k) {
        cld acc = 0;
        for (std::int64_t i = 0; i < I; ++i) {
          const auto wz = wv[static_cast<std::size_t>((i * O + o) * K + k)];
          acc += X[static_cast<std::size_t>((b * I + i) * K + k)] * cld(wz.real(), wz.imag());
        }
        Y[static_cast<std::size_t>((b * O + o) * K + k)] = acc;
      }
  // Hermitian part on the planes f_d == 0 and f_d == n_d/2 (even n_d of the output grid)
  const std::int64_t nl = ogrid.back();
  auto on_plane = [&](const Shape& f) { return f.back() == 0 || (nl % 2 == 0 && f.back() == nl / 2); };
  std::vector<cld> Yp = Y;
  for (std::int64_t k = 0; k < K; ++k) {
    const Shape& f = freq[static_cast<std::size_t>(k)];
    if (!on_plane(f)) continue;
    Shape neg(d);
    for (std::size_t l = 0; l < d; ++l) neg[l] = -f[l];
    const std::int64_t p = find_mode(neg);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t o = 0; o < O; ++o) {
        const auto at = static_cast<std::size_t>((b * O + o) * K);
        Yp[at + static_cast<std::size_t>(k)] =
            p < 0 ? cld(0) : (Y[at + static_cast<std::size_t>(k)] + std::conj(Y[at + static_cast<std::size_t>(p)])) / 2.0L;
      }
  }
  // y[b,o,t] = s * sum_k c_k Re(Y'[k] e^{+i theta})
  const long double sout = norm_scale(norm, No, false);
  const auto bv = bias.defined() ? to_vector<double>(bias) : std::vector<double>(static_cast<std::size_t>(O), 0.0);
  std::vector<long double> y(static_cast<std::size_t>(B * O * No));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t t = 0; t < No; ++t) {
        const Shape tt = unflat(t, ogrid);
        long double acc = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          const Shape& f = freq[static_cast<std::size_t>(k)];
          long double ph = 0;
          for (std::size_t l = 0; l < d; ++l) ph += static_cast<long double>(f[l] * tt[l]) / ogrid[l];
          const long double c = on_plane(f) ? 1.0L : 2.0L;
          acc += c * std::real(Yp[static_cast<std::size_t>((b * O + o) * K + k)] * std::polar(1.0L, 2 * kPi * ph));
        }
        y[static_cast<std::size_t>((b * O + o) * No + t)] = acc * sout + bv[static_cast<std::size_t>(o)];
      }
  return y;
}

Shape wshape(std::int64_t in, std::int64_t out, const std::vector<std::int64_t>& modes) {
  Shape s{in, out};
  for (std::size_t i = 0; i < modes.size(); ++i) s.push_back(i + 1 < modes.size() ? 2 * modes[i] : modes[i]);
  return s;
}

void check_against_naive(const Shape& grid, const std::vector<std::int64_t>& modes, std::optional<Shape> ogrid,
                         fft::Norm norm = fft::Norm::forward, bool with_bias = true) {
  const std::int64_t B = 2, I = 2, O = 3;
  Shape xs{B, I};
  xs.insert(xs.end(), grid.begin(), grid.end());
  Tensor x = randn(xs, float64);
  Tensor w = randn(wshape(I, O, modes), complex128);
  Tensor bias = with_bias ? randn({O}, float64) : Tensor();
  Tensor y = nn::functional::spectral_conv(x, w, bias, modes, ogrid, norm);
  const Shape og = ogrid ? *ogrid : grid;
  Shape ys{B, O};
  ys.insert(ys.end(), og.begin(), og.end());
  REQUIRE(y.shape() == ys);
  REQUIRE(y.dtype() == float64);
  const auto ref = naive_spectral_conv(x, w, bias, modes, og, norm);
  const auto got = to_vector<double>(y);
  double err = 0, mag = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(static_cast<long double>(got[i]) - ref[i])));
    mag = std::max(mag, static_cast<double>(std::fabs(ref[i])));
  }
  std::string label = "grid";
  for (auto v : grid) label += " " + std::to_string(v);
  label += " modes";
  for (auto v : modes) label += " " + std::to_string(v);
  label += " out";
  for (auto v : og) label += " " + std::to_string(v);
  CAPTURE(label);
  CHECK(mag > 1e-3);
  CHECK(err <= 1e-12 * std::max(1.0, mag));
}

}  // namespace


TEST_CASE("spectral_mix matches the per-mode sum, any operand strides") {
  for (Shape modes : {Shape{5}, Shape{3, 4}, Shape{}}) {
    Shape xs{3, 4}, ws{4, 2};
    xs.insert(xs.end(), modes.begin(), modes.end());
    ws.insert(ws.end(), modes.begin(), modes.end());
    Tensor x = randn(xs, complex128), w = randn(ws, complex128);
    Tensor y = nn::functional::spectral_mix(x, w);
    Shape ys{3, 2};
    ys.insert(ys.end(), modes.begin(), modes.end());
    REQUIRE(y.shape() == ys);
    // reference: broadcast multiply and sum over i
    Tensor ref = (x.unsqueeze(2) * w.unsqueeze(0)).sum({1});
    CHECK(to_vector<std::complex<double>>((y - ref).abs().max())[0].real() < 1e-12);
    // transposed / sliced operands give the same values
    Tensor xt = x.transpose(0, 1).contiguous().transpose(0, 1);
    Tensor y2 = nn::functional::spectral_mix(xt, w.contiguous());
    CHECK((y2 - ref).abs().max().item<double>() < 1e-12);
  }
  // complex64, mode-last weights, a narrowed spectrum as x
  Tensor big = randn({2, 3, 9}, complex64);
  Tensor xs = big.narrow(2, 0, 4);
  Tensor w = randn({3, 5, 4}, complex64);
  Tensor y = nn::functional::spectral_mix(xs, w);
  Tensor ref = (xs.to(complex128).unsqueeze(2) * w.to(complex128).unsqueeze(0)).sum({1});
  CHECK(y.dtype() == complex64);
  CHECK((y.to(complex128) - ref).abs().max().item<double>() < 1e-5);
  // real operands are promoted
  Tensor yr = nn::functional::spectral_mix(randn({2, 3, 4}, float64), randn({3, 2, 4}, complex128));
  CHECK(yr.dtype() == complex128);
}

TEST_CASE("spectral_mix: the direct kernel (contiguous modes, K >= 64) and the per-mode gemms agree, gradients too") {
  const int saved_threads = get_num_threads();
  for (Dtype dt : {complex128, complex64}) {
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      CAPTURE(threads);
      const double tol = dt == complex128 ? 1e-12 : 2e-5;
      // B = 6 (a tile of 4 and one of 2), K = 8 x 9 = 72 contiguous modes: the direct kernel
      Tensor x = randn({6, 5, 8, 9}, dt).requires_grad_();
      Tensor w = randn({5, 3, 8, 9}, dt).requires_grad_();
      Tensor y = nn::functional::spectral_mix(x, w);
      CHECK(y.shape() == Shape{6, 3, 8, 9});
      Tensor ref = (x.to(complex128).unsqueeze(2) * w.to(complex128).unsqueeze(0)).sum({1});
      CHECK((y.to(complex128) - ref).abs().max().item<double>() < tol * 10);
      // the same values with mode-first weights (the per-mode gemm path)
      Tensor wm = w.detach().permute({2, 3, 0, 1}).contiguous().permute({2, 3, 0, 1});
      Tensor ym = nn::functional::spectral_mix(x.detach(), wm);
      CHECK((ym.to(complex128) - y.detach().to(complex128)).abs().max().item<double>() < tol * 10);
      // gradients (the conjugation flags) against the reference composition's
      Tensor g = randn({6, 3, 8, 9}, dt);
      auto grads = autodiff::grad({(y * g.conj()).real().sum()}, {x, w});
      auto refs = autodiff::grad({(ref * g.to(complex128).conj()).real().sum()}, {x, w});
      CHECK((grads[0].to(complex128) - refs[0].to(complex128)).abs().max().item<double>() < tol * 10);
      CHECK((grads[1].to(complex128) - refs[1].to(complex128)).abs().max().item<double>() < tol * 10);
    }
  }
  set_num_threads(saved_threads);
  // a narrowed spectrum (modes contiguous within each row) and a strided batch
  Tensor big = randn({4, 3, 80}, complex128);
  Tensor xs = big.narrow(2, 5, 70).narrow(0, 1, 3);
  Tensor w = randn({3, 2, 70}, complex128);
  Tensor ref = (xs.unsqueeze(2) * w.unsqueeze(0)).sum({1});
  CHECK((nn::functional::spectral_mix(xs, w) - ref).abs().max().item<double>() < 1e-12);
  // second derivatives through the direct kernel
  Tensor x2 = randn({2, 2, 64}, complex128).requires_grad_();
  Tensor w2 = randn({2, 2, 64}, complex128).requires_grad_();
  auto f = [](const G& in) { return nn::functional::spectral_mix(in[0], in[1]); };
  CHECK(autodiff::gradgradcheck(f, G{x2, w2}));
}

TEST_CASE("spectral_mix gradcheck and gradgradcheck") {
  Tensor x = randn({2, 3, 4}, complex128).requires_grad_();
  Tensor w = randn({3, 2, 4}, complex128).requires_grad_();
  auto f = [](const G& in) { return nn::functional::spectral_mix(in[0], in[1]); };
  CHECK(autodiff::gradcheck(f, G{x, w}));
  CHECK(autodiff::gradgradcheck(f, G{x, w}));
  Tensor x2 = randn({2, 2, 3, 2}, complex128).requires_grad_();
  Tensor w2 = randn({2, 3, 3, 2}, complex128).requires_grad_();
  CHECK(autodiff::gradcheck(f, G{x2, w2}));
  // real x, complex w
  Tensor xr = randn({2, 3, 4}, float64).requires_grad_();
  CHECK(autodiff::gradcheck(f, G{xr, w}));
}

TEST_CASE("spectral_mix errors") {
  using nn::functional::spectral_mix;
  Tensor x = randn({2, 3, 4}, complex64);
  CHECK_THROWS_WITH_AS(spectral_mix(x, randn({2, 2, 4}, complex64)),
                       doctest::Contains("[spectral_mix] expected x (B, I, *modes) and w (I, O, *modes)"), Error);
  CHECK_THROWS_WITH_AS(spectral_mix(x, randn({3, 2, 5}, complex64)), doctest::Contains("(3, 2, 5)"), Error);
  CHECK_THROWS_WITH_AS(spectral_mix(x, zeros({3, 2, 4}, int64)), doctest::Contains("floating or complex"), Error);
}

TEST_CASE("SpectralConv 1-D equals direct DFT sums") {
  check_against_naive({8}, {3}, std::nullopt);
  check_against_naive({8}, {5}, std::nullopt);             // Nyquist mode kept
  check_against_naive({7}, {4}, std::nullopt);             // odd size, all modes
  check_against_naive({8}, {3}, Shape{13});                // super-resolution, odd
  check_against_naive({8}, {4}, Shape{6});                 // sub-resolution: output Nyquist kept
  check_against_naive({9}, {3}, Shape{16}, fft::Norm::backward, false);
  check_against_naive({6}, {2}, Shape{10}, fft::Norm::ortho);
}

TEST_CASE("SpectralConv 2-D equals direct DFT sums") {
  check_against_naive({6, 8}, {2, 3}, std::nullopt);
  check_against_naive({5, 7}, {2, 4}, std::nullopt);       // odd sizes
  check_against_naive({4, 6}, {2, 4}, std::nullopt);       // 2m == n and Nyquist kept
  check_against_naive({6, 8}, {2, 3}, Shape{9, 12});       // super-resolution
  check_against_naive({6, 8}, {3, 4}, Shape{6, 6});        // 2m == n_out, output Nyquist
  check_against_naive({6, 5}, {2, 2}, Shape{8, 6}, fft::Norm::backward);
}

TEST_CASE("SpectralConv 3-D equals direct DFT sums") {
  check_against_naive({4, 5, 6}, {2, 2, 3}, std::nullopt);
  check_against_naive({4, 5, 6}, {1, 2, 2}, Shape{6, 7, 8});
  check_against_naive({4, 4, 4}, {2, 2, 3}, std::nullopt, fft::Norm::ortho);
}

TEST_CASE("SpectralConv: both last-dim kernels (matrix product for few modes, FFT for many) equal direct DFT sums") {
  // Note [truncated DFT]: up to 48 kept bins (64 from n = 1024) the last dim is a matrix product;
  // the cases above all take it. These keep more bins and take the FFT path.
  check_against_naive({130}, {60}, std::nullopt);
  check_against_naive({128}, {65}, std::nullopt);            // Nyquist kept
  check_against_naive({120}, {55}, Shape{131}, fft::Norm::backward);
  check_against_naive({3, 100}, {1, 50}, std::nullopt, fft::Norm::ortho);
  // a non-last dim keeping too many modes for a matrix product (2m = 50 > 48) takes the FFT path while
  // the last dim stays a product; all dims products (the 2-D and 3-D cases above) is the other mix
  check_against_naive({50, 6}, {25, 2}, std::nullopt);
  check_against_naive({50, 6}, {25, 3}, Shape{52, 7}, fft::Norm::backward);
  // the matrix path at large n (FNO-1D's shape class) and the cap of 64 bins from n = 1024
  check_against_naive({1024}, {16}, std::nullopt);
  check_against_naive({1025}, {64}, Shape{1030}, fft::Norm::backward);
  auto gc = [](Shape xs, std::vector<std::int64_t> modes) {
    Tensor x = randn(xs, float64).requires_grad_();
    Tensor w = randn(wshape(xs[1], 1, modes), complex128).requires_grad_();
    return autodiff::gradcheck([modes](const G& in) { return nn::functional::spectral_conv(in[0], in[1], Tensor(), modes); },
                               G{x, w});
  };
  CHECK(gc({1, 1, 100}, {50}));
  CHECK(gc({1, 1, 50, 6}, {25, 2}));  // FFT along the non-last dim, product along the last
  // second order on the FFT path: the gradients are the other truncated transform with the interior
  // bins' weight halved or doubled (Note [truncated transforms]), there applied as a product
  {
    Tensor x2 = randn({1, 1, 100}, float64).requires_grad_();
    Tensor w2 = randn(wshape(1, 1, {50}), complex128).requires_grad_();
    CHECK(autodiff::gradgradcheck(
        [](const G& in) { return G{nn::functional::spectral_conv(in[0], in[1], Tensor(), {50}).square()}; },
        G{x2, w2}));
  }
  // float32 through the matrix path stays at float accuracy against the float64 result
  Tensor x = randn({4, 8, 1024}, float64);
  Tensor w = randn({8, 8, 16}, complex128) * 0.1;
  Tensor y64 = nn::functional::spectral_conv(x, w, Tensor(), {16});
  Tensor y32 = nn::functional::spectral_conv(x.to(float32), w.to(complex64), Tensor(), {16});
  CHECK(((y32.to(float64) - y64).abs().max().item<double>()) <= 2e-6 * y64.abs().max().item<double>());
}

TEST_CASE("SpectralConv: set_truncated_transform forces the matrix products or the FFTs, and both equal direct DFT sums") {
  using nn::functional::TruncatedTransform;
  struct Restore {  // the default choice back however the case ends
    ~Restore() { nn::functional::set_truncated_transform(TruncatedTransform::automatic); }
  } restore;
  CHECK(nn::functional::truncated_transform() == TruncatedTransform::automatic);
  for (TruncatedTransform t : {TruncatedTransform::fft, TruncatedTransform::matrix}) {
    CAPTURE(static_cast<int>(t));
    CHECK(nn::functional::set_truncated_transform(t) == TruncatedTransform::automatic);
    CHECK(nn::functional::truncated_transform() == t);
    CHECK(nn::detail::use_dft_matrix(256, 32) == (t == TruncatedTransform::matrix));
    CHECK(nn::detail::use_dft_matrix(130, 60) == (t == TruncatedTransform::matrix));  // past the automatic rule
    CHECK_FALSE(nn::detail::use_dft_matrix(1 << 20, 8));                               // the matrix would be 64 MiB
    check_against_naive({8}, {5}, std::nullopt);                  // Nyquist kept
    check_against_naive({7}, {4}, Shape{13});                     // odd, all modes, super-resolution
    check_against_naive({130}, {60}, std::nullopt, fft::Norm::backward);
    check_against_naive({6, 8}, {2, 3}, Shape{9, 12});            // both dims
    check_against_naive({4, 6}, {2, 4}, std::nullopt, fft::Norm::ortho);  // 2m == n and Nyquist kept
    check_against_naive({4, 5, 6}, {2, 2, 3}, std::nullopt);
    Tensor x = randn({1, 2, 6, 8}, float64).requires_grad_();
    Tensor w = randn(wshape(2, 1, {2, 3}), complex128).requires_grad_();
    CHECK(autodiff::gradcheck(
        [](const G& in) { return nn::functional::spectral_conv(in[0], in[1], Tensor(), {2, 3}); }, G{x, w}));
    nn::functional::set_truncated_transform(TruncatedTransform::automatic);
  }
  // a choice outside the enum is refused and changes nothing
  CHECK_THROWS_WITH_AS(nn::functional::set_truncated_transform(static_cast<TruncatedTransform>(7)),
                       doctest::Contains("[set_truncated_transform] unknown choice 7"), Error);
  CHECK(nn::functional::truncated_transform() == TruncatedTransform::automatic);
}

TEST_CASE("SpectralConv output is real-consistent: DFT of the output has the mixed modes") {
  // with no Hermitian conflict (interior modes only), rfftn(y) restricted to the kept modes
  // equals the mixed spectrum and everything else is zero
  Tensor x = randn({1, 2, 8}, float64);
  Tensor w = randn({2, 2, 3}, complex128);
  Tensor y = nn::functional::spectral_conv(x, w, Tensor(), {3});
  Tensor Y = fft::rfft(y, std::nullopt, -1, fft::Norm::forward);
  Tensor X = fft::rfft(x, std::nullopt, -1, fft::Norm::forward).narrow(2, 0, 3);
  Tensor mixed = nn::functional::spectral_mix(X, w);
  CHECK((Y.narrow(2, 1, 2) - mixed.narrow(2, 1, 2)).abs().max().item<double>() < 1e-12);
  CHECK((Y.narrow(2, 0, 1) - mixed.narrow(2, 0, 1).real().to(complex128)).abs().max().item<double>() < 1e-12);
  CHECK(Y.narrow(2, 3, 2).abs().max().item<double>() < 1e-12);
}

TEST_CASE("SpectralConv gradcheck (input, weight, bias; 1-D/2-D/3-D, super-resolution)") {
  auto run = [](Shape xs, std::vector<std::int64_t> modes, std::optional<Shape> og) {
    Tensor x = randn(xs, float64).requires_grad_();
    Tensor w = randn(wshape(xs[1], 2, modes), complex128).requires_grad_();
    Tensor b = randn({2}, float64).requires_grad_();
    return autodiff::gradcheck(
        [modes, og](const G& in) { return nn::functional::spectral_conv(in[0], in[1], in[2], modes, og); },
        G{x, w, b});
  };
  CHECK(run({2, 2, 8}, {5}, std::nullopt));
  CHECK(run({1, 2, 7}, {3}, Shape{10}));
  CHECK(run({1, 2, 6, 5}, {2, 3}, std::nullopt));
  CHECK(run({1, 2, 4, 6}, {2, 4}, Shape{6, 6}));
  CHECK(run({1, 1, 4, 3, 4}, {1, 1, 3}, Shape{4, 4, 4}));
  // second order through the whole layer
  Tensor x = randn({1, 2, 6}, float64).requires_grad_();
  Tensor w = randn({2, 2, 3}, complex128).requires_grad_();
  CHECK(autodiff::gradgradcheck(
      [](const G& in) { return G{nn::functional::spectral_conv(in[0], in[1], Tensor(), {3}).square()}; }, G{x, w}));
  // with a bias: its gradient (spectral_bias_grad) has a gradient too (spectral_planes of zeros)
  Tensor b = randn({2}, float64).requires_grad_();
  CHECK(autodiff::gradgradcheck(
      [](const G& in) { return G{nn::functional::spectral_conv(in[0], in[1], in[2], {3}).square()}; }, G{x, w, b}));
  Tensor x2 = randn({2, 2, 4, 6}, float64).requires_grad_();
  Tensor w2 = randn(wshape(2, 2, {2, 4}), complex128).requires_grad_();
  CHECK(autodiff::gradgradcheck(
      [](const G& in) { return G{nn::functional::spectral_conv(in[0], in[1], in[2], {2, 4}).square()}; },
      G{x2, w2, b}));
}

TEST_CASE("SpectralConv module: parameters, init, dtype, repr") {
  nn::SpectralConv c1(nn::SpectralConvOptions(3, 5, {4}));
  CHECK(c1.weight.shape() == Shape{3, 5, 4});
  CHECK(c1.weight.dtype() == complex64);
  CHECK(c1.bias.shape() == Shape{5});
  CHECK(c1.num_parameters() == 3 * 5 * 4 + 5);
  // init: real and imaginary parts uniform in [0, 1/(in*out))
  const auto wr = to_vector<double>(c1.weight.real().contiguous());
  for (double v : wr) CHECK((v >= 0 && v < 1.0 / 15));
  nn::SpectralConv c2(nn::SpectralConvOptions(2, 3, {3, 4}).bias(false).dtype(float64));
  CHECK(c2.weight.shape() == Shape{2, 3, 6, 4});
  CHECK(c2.weight.dtype() == complex128);
  CHECK(!c2.bias.defined());
  CHECK(c2.num_parameters() == 2 * 3 * 6 * 4);
  nn::SpectralConv c3(nn::SpectralConvOptions(1, 1, {2, 2, 2}));
  CHECK(c3.weight.shape() == Shape{1, 1, 4, 4, 2});
  CHECK(c3.extra_repr() == "in_channels=1, out_channels=1, modes=(2, 2, 2), norm=forward, bias=true");
  // forward shapes
  CHECK(c1.forward(randn({2, 3, 16})).shape() == Shape{2, 5, 16});
  CHECK(c1.forward(randn({2, 3, 16}), {32}).shape() == Shape{2, 5, 32});
  CHECK(c2.forward(randn({1, 2, 8, 8}, float64)).shape() == Shape{1, 3, 8, 8});
  CHECK(c3.forward(randn({1, 1, 4, 4, 4})).shape() == Shape{1, 1, 4, 4, 4});
}

TEST_CASE("SpectralConv is resolution invariant (norm=forward)") {
  // a band-limited signal sampled on 16 and 48 points: the layer's outputs sample the same function,
  // and evaluating the coarse input on the fine grid gives the fine output
  nn::SpectralConv c(nn::SpectralConvOptions(1, 2, {4}).dtype(float64));
  auto signal = [](std::int64_t n) {
    Tensor t = arange(0, n, 1, float64) * (2 * 3.14159265358979323846 / static_cast<double>(n));
    return (t.cos() * 0.5 + (t * 3.0).sin() * 1.5 + 0.25).reshape({1, 1, n});
  };
  Tensor yc = c.forward(signal(16));
  Tensor yf = c.forward(signal(48));
  Tensor ycf = c.forward(signal(16), {48});
  CHECK((ycf - yf).abs().max().item<double>() < 1e-12);
  CHECK((yf.slice(2, 0, 48, 3) - yc).abs().max().item<double>() < 1e-12);
}

TEST_CASE("SpectralConv errors") {
  nn::SpectralConv c(nn::SpectralConvOptions(3, 2, {40}));
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 3, 64})),
                       doctest::Contains("[SpectralConv] modes (40) exceed what the input's spatial size 64 allows"),
                       Error);
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 4, 128})), doctest::Contains("[SpectralConv] expected 3 input channels"),
                       Error);
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 3, 128, 128})), doctest::Contains("with 3 dims, got shape (2, 3, 128, 128)"),
                       Error);
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 3, 128}), {64}),
                       doctest::Contains("modes (40) exceed what the output's spatial size 64"), Error);
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 3, 128}), {64, 64}), doctest::Contains("one size per spatial dim"), Error);
  CHECK_THROWS_WITH_AS(c.forward(randn({2, 3, 128}, complex64)), doctest::Contains("expected a real floating input"),
                       Error);
  nn::SpectralConv c2(nn::SpectralConvOptions(1, 1, {5, 3}));
  CHECK_THROWS_WITH_AS(c2.forward(randn({1, 1, 9, 16})), doctest::Contains("at most 4 = n/2 for a non-last dim"), Error);
  CHECK_THROWS_AS(nn::SpectralConv(nn::SpectralConvOptions(1, 1, {})), Error);
  CHECK_THROWS_WITH_AS(nn::SpectralConv(nn::SpectralConvOptions(1, 1, {2, 2, 2, 2})),
                       doctest::Contains("[SpectralConv] expected modes for 1 to 3 spatial dims"), Error);
  CHECK_THROWS_WITH_AS(nn::SpectralConv(nn::SpectralConvOptions(0, 1, {2})), doctest::Contains("must be >= 1"), Error);
  CHECK_THROWS_WITH_AS(nn::SpectralConv(nn::SpectralConvOptions(1, 1, {2}).dtype(int64)),
                       doctest::Contains("float32 or float64"), Error);
  CHECK_THROWS_WITH_AS(nn::functional::spectral_conv(randn({1, 1, 8}), randn({1, 1, 3}, complex64), Tensor(), {4}),
                       doctest::Contains("expected a complex weight of shape (1, 1, 4)"), Error);
}

TEST_CASE("spectral DFT heads: an empty sum gives zeros, not uninitialised memory") {
  // rdft_head over n = 0 samples and irdft_head over m = 0 modes: every output element is an empty sum
  const Tensor x = zeros({3, 0}, float64);
  const Tensor y = phasor::nn::detail::rdft_head(x, 2, 1.0);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.dtype() == complex128);
  CHECK(equal(y, zeros({3, 2}, complex128)));
  const Tensor z = phasor::nn::detail::irdft_head(zeros({3, 0}, complex64), 4, 1.0);
  CHECK(z.shape() == Shape{3, 4});
  CHECK(equal(z, zeros({3, 4}, float32)));
}
