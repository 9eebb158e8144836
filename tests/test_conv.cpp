// tests/test_conv.cpp - functional conv1d/2d/3d, unfold/fold, linear and dropout against direct
// loops (long double), gradcheck / gradgradcheck, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;
namespace F = phasor::nn::functional;
using nn::PaddingMode;

namespace {

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

/// Maps a padded position p into [0, n) for the mode, or -1 for a zero tap.
std::int64_t source(std::int64_t p, std::int64_t n, PaddingMode mode) {
  if (p >= 0 && p < n) return p;
  switch (mode) {
    case PaddingMode::zeros: return -1;
    case PaddingMode::reflect: return p < 0 ? -p : 2 * (n - 1) - p;
    case PaddingMode::replicate: return p < 0 ? 0 : n - 1;
    case PaddingMode::circular: return ((p % n) + n) % n;
  }
  return -1;
}

/// Direct-loop convolution (cross-correlation) of x (N, C, *in) with w (O, C/g, *k), in long double.
struct Naive {
  Shape out_shape;
  std::vector<double> out;
};
Naive naive_conv(const Tensor& xt, const Tensor& wt, const Tensor& bt, const Shape& s, const Shape& d, const Shape& lo,
                 const Shape& hi, std::int64_t groups, PaddingMode mode) {
  const auto x = vals(xt), w = vals(wt);
  const Shape& xs = xt.shape();
  const Shape& ws = wt.shape();
  const std::size_t D = xs.size() - 2;
  const std::int64_t N = xs[0], C = xs[1], O = ws[0], Cg = ws[1], Og = O / groups;
  Shape in(xs.begin() + 2, xs.end()), k(ws.begin() + 2, ws.end()), out(D);
  for (std::size_t i = 0; i < D; ++i) out[i] = (in[i] + lo[i] + hi[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  const std::int64_t P = numel_of(in), K = numel_of(k), L = numel_of(out);
  Naive r;
  r.out_shape = {N, O};
  r.out_shape.insert(r.out_shape.end(), out.begin(), out.end());
  r.out.assign(static_cast<std::size_t>(N * O * L), 0.0);
  std::vector<double> b = bt.defined() ? vals(bt) : std::vector<double>(static_cast<std::size_t>(O), 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t l = 0; l < L; ++l) {
        Shape op(D);
        for (std::int64_t rem = l, i = static_cast<std::int64_t>(D) - 1; i >= 0; --i) {
          op[static_cast<std::size_t>(i)] = rem % out[static_cast<std::size_t>(i)];
          rem /= out[static_cast<std::size_t>(i)];
        }
        long double acc = b[static_cast<std::size_t>(o)];
        const std::int64_t grp = o / Og;
        for (std::int64_t cg = 0; cg < Cg; ++cg) {
          const std::int64_t c = grp * Cg + cg;
          for (std::int64_t kk = 0; kk < K; ++kk) {
            std::int64_t rem = kk, xoff = 0, stride_acc = 1;
            bool zero = false;
            Shape kp(D);
            for (std::int64_t i = static_cast<std::int64_t>(D) - 1; i >= 0; --i) {
              kp[static_cast<std::size_t>(i)] = rem % k[static_cast<std::size_t>(i)];
              rem /= k[static_cast<std::size_t>(i)];
            }
            for (std::int64_t i = static_cast<std::int64_t>(D) - 1; i >= 0; --i) {
              const auto u = static_cast<std::size_t>(i);
              const std::int64_t p = source(op[u] * s[u] + kp[u] * d[u] - lo[u], in[u], mode);
              if (p < 0) zero = true;
              xoff += p * stride_acc;
              stride_acc *= in[u];
            }
            if (zero) continue;
            acc += static_cast<long double>(x[static_cast<std::size_t>((n * C + c) * P + xoff)]) *
                   w[static_cast<std::size_t>((o * Cg + cg) * K + kk)];
          }
        }
        r.out[static_cast<std::size_t>((n * O + o) * L + l)] = static_cast<double>(acc);
      }
  return r;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

struct Case {
  Shape x;            // input shape (batched)
  std::int64_t out;   // out channels
  Shape k;            // kernel
  Shape s, d, p;      // stride, dilation, padding (symmetric)
  std::int64_t groups;
  bool bias;
  PaddingMode mode;
};

Tensor run_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Case& c, const nn::Padding& pad) {
  const std::size_t D = c.k.size();
  if (D == 1) return F::conv1d(x, w, b, c.s, pad, c.d, c.groups, c.mode);
  if (D == 2) return F::conv2d(x, w, b, c.s, pad, c.d, c.groups, c.mode);
  return F::conv3d(x, w, b, c.s, pad, c.d, c.groups, c.mode);
}

void check_case(const Case& c) {
  const std::int64_t C = c.x[1];
  Shape ws{c.out, C / c.groups};
  ws.insert(ws.end(), c.k.begin(), c.k.end());
  Tensor x = randn(c.x, float64), w = randn(ws, float64);
  Tensor b = c.bias ? randn({c.out}, float64) : Tensor();
  Tensor y = run_conv(x, w, b, c, nn::Padding(c.p));
  Naive ref = naive_conv(x, w, b, c.s, c.d, c.p, c.p, c.groups, c.mode);
  CHECK(y.shape() == ref.out_shape);
  CHECK(max_abs_diff(vals(y), ref.out) < 1e-12);
}

}  // namespace

TEST_CASE("conv1d/2d/3d match a direct loop over many configurations") {
  manual_seed(1);
  const PaddingMode Z = PaddingMode::zeros, R = PaddingMode::reflect, P = PaddingMode::replicate,
                    Ci = PaddingMode::circular;
  const std::vector<Case> cases = {
      // 1-D
      {{2, 3, 11}, 4, {3}, {1}, {1}, {0}, 1, true, Z},
      {{2, 3, 11}, 4, {3}, {2}, {1}, {1}, 1, false, Z},
      {{1, 4, 13}, 6, {5}, {3}, {2}, {2}, 2, true, Z},
      {{2, 4, 9}, 4, {3}, {1}, {1}, {2}, 4, true, Ci},
      {{2, 2, 9}, 3, {4}, {2}, {1}, {3}, 1, true, R},
      {{2, 2, 7}, 3, {3}, {1}, {3}, {4}, 1, true, P},
      {{3, 5, 10}, 7, {1}, {1}, {1}, {0}, 1, true, Z},   // 1x1: one matmul
      {{3, 4, 10}, 6, {1}, {3}, {1}, {0}, 2, true, Z},   // strided 1x1, grouped
      // 2-D
      {{2, 3, 7, 8}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, Z},
      {{2, 3, 9, 7}, 5, {3, 2}, {2, 1}, {1, 2}, {1, 0}, 1, false, Z},
      {{1, 6, 8, 9}, 4, {3, 3}, {1, 2}, {2, 1}, {2, 1}, 2, true, Z},
      {{2, 4, 6, 7}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 2}, 4, true, Ci},
      {{1, 2, 6, 5}, 3, {3, 3}, {2, 1}, {1, 1}, {2, 1}, 1, true, R},
      {{1, 2, 5, 6}, 3, {2, 3}, {1, 1}, {1, 2}, {3, 2}, 1, false, P},
      {{2, 8, 5, 6}, 4, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, true, Z},
      {{2, 3, 7, 9}, 2, {1, 1}, {2, 3}, {1, 1}, {0, 0}, 1, false, Z},
      {{1, 2, 4, 4}, 3, {4, 4}, {1, 1}, {1, 1}, {0, 0}, 1, true, Z},  // kernel = input
      // 3-D
      {{2, 2, 4, 5, 6}, 3, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, true, Z},
      {{1, 4, 5, 6, 5}, 2, {2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {0, 1, 1}, 2, false, Z},
      {{1, 2, 4, 4, 5}, 2, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 2}, 1, true, Ci},
      {{1, 2, 4, 5, 4}, 2, {3, 2, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 2}, 1, true, R},
      {{1, 2, 3, 4, 4}, 2, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 2, 1}, 1, true, P},
      {{2, 3, 3, 4, 5}, 2, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1, true, Z},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    check_case(cases[i]);
  }
}

TEST_CASE("conv: unbatched input, same/valid padding, float32") {
  manual_seed(2);
  // unbatched = batched with N = 1, then squeezed
  Tensor x = randn({3, 10, 9}, float64), w = randn({5, 3, 3, 2}, float64), b = randn({5}, float64);
  Tensor y = F::conv2d(x, w, b, 1, 1);
  Tensor yb = F::conv2d(x.unsqueeze(0), w, b, 1, 1);
  CHECK(y.shape() == Shape{5, 10, 10});
  CHECK(max_abs_diff(vals(y), vals(yb.squeeze(0))) == 0.0);
  // "same" with even kernels: torch puts the odd extra pad after (left = total / 2)
  for (auto mode : {PaddingMode::zeros, PaddingMode::circular, PaddingMode::reflect, PaddingMode::replicate}) {
    CAPTURE(static_cast<int>(mode));
    Tensor xs = randn({2, 2, 7, 8}, float64), ws = randn({3, 2, 4, 2}, float64);
    Tensor ys = F::conv2d(xs, ws, Tensor(), 1, "same", {1, 3}, 1, mode);
    CHECK(ys.shape() == Shape{2, 3, 7, 8});
    // total pad = dilation * (k - 1): dim 0: 3 -> (1, 2); dim 1: 3 -> (1, 2)
    Naive ref = naive_conv(xs, ws, Tensor(), {1, 1}, {1, 3}, {1, 1}, {2, 2}, 1, mode);
    CHECK(max_abs_diff(vals(ys), ref.out) < 1e-12);
  }
  Tensor x1 = randn({2, 3, 12}, float64), w1 = randn({4, 3, 5}, float64);
  CHECK(max_abs_diff(vals(F::conv1d(x1, w1, Tensor(), 1, "valid")), vals(F::conv1d(x1, w1))) == 0.0);
  CHECK(F::conv1d(x1, w1, Tensor(), 1, "same").shape() == Shape{2, 4, 12});
  // float32 agrees with float64 to float precision
  Tensor y32 = F::conv1d(x1.to(float32), w1.to(float32), Tensor(), 2, 1);
  CHECK(y32.dtype() == float32);
  CHECK(max_abs_diff(vals(y32), vals(F::conv1d(x1, w1, Tensor(), 2, 1))) < 1e-4);
  // the conv3d of an unbatched 4-D input
  Tensor x3 = randn({2, 3, 4, 5}, float64), w3 = randn({1, 2, 2, 2, 2}, float64);
  CHECK(F::conv3d(x3, w3).shape() == Shape{1, 2, 3, 4});
  // an empty batch gives an empty output
  CHECK(F::conv2d(zeros({0, 3, 5, 5}, float64), randn({2, 3, 3, 3}, float64)).shape() == Shape{0, 2, 3, 3});
}

namespace {
/// sin(a * i) laid out in `shape`: the same inputs are easy to build in PyTorch.
Tensor wave(const Shape& shape, double a) { return sin(arange(0, numel_of(shape), 1, float64) * a).reshape(shape); }
/// A weighted checksum of all entries.
double checksum(const Tensor& y) { return (y * wave(y.shape(), 0.05)).sum().item<double>(); }
}  // namespace

TEST_CASE("conv, unfold and fold agree with PyTorch 1.13 on fixed inputs") {
  // Reference checksums computed with torch 1.13 (torch.nn.ConvNd with padding_mode, float64):
  //   mk = lambda s, a: torch.sin(a * torch.arange(prod(s), dtype=torch.float64)).reshape(s)
  //   x = mk(xs, .37); weight = mk(ws, .11); bias = mk((out,), .7); checksum = (y * mk(y.shape, .05)).sum()
  using PM = PaddingMode;
  auto conv = [](const Shape& xs, const Shape& ws) {
    return std::vector<Tensor>{wave(xs, 0.37), wave(ws, 0.11), wave({ws[0]}, 0.7)};
  };
  auto a = conv({2, 2, 7, 8}, {3, 2, 4, 2});
  CHECK(checksum(F::conv2d(a[0], a[1], a[2], 1, "same", {1, 3})) == doctest::Approx(25.240505812356).epsilon(1e-11));
  CHECK(checksum(F::conv2d(a[0], a[1], a[2], 1, "same", {1, 3}, 1, PM::circular)) ==
        doctest::Approx(30.850556259010).epsilon(1e-11));
  auto b = conv({1, 2, 6, 5}, {3, 2, 3, 3});
  Tensor yb = F::conv2d(b[0], b[1], b[2], {2, 1}, {2, 1}, 1, 1, PM::reflect);
  CHECK(yb.shape() == Shape{1, 3, 4, 5});
  CHECK(checksum(yb) == doctest::Approx(28.258438411148).epsilon(1e-11));
  auto c = conv({2, 4, 9}, {4, 2, 3});
  Tensor yc = F::conv1d(c[0], c[1], c[2], 1, 3, 2, 2, PM::replicate);
  CHECK(yc.shape() == Shape{2, 4, 11});
  CHECK(checksum(yc) == doctest::Approx(7.941644720662).epsilon(1e-11));
  auto d = conv({1, 2, 4, 4, 5}, {2, 2, 3, 3, 3});
  CHECK(checksum(F::conv3d(d[0], d[1], d[2], 1, 1, 1, 1, PM::circular)) == doctest::Approx(-16.033581130129).epsilon(1e-11));
  // F.unfold(mk((2,3,6,7), .37), (2,3), dilation=(1,2), padding=(1,2), stride=(2,1)); F.fold(mk((2,12,28), .29), (6,7), ...)
  Tensor u = F::unfold(wave({2, 3, 6, 7}, 0.37), {2, 3}, {1, 2}, {1, 2}, {2, 1});
  CHECK(u.shape() == Shape{2, 18, 28});
  CHECK(checksum(u) == doctest::Approx(-16.939477262821).epsilon(1e-11));
  Tensor f = F::fold(wave({2, 12, 28}, 0.29), {6, 7}, {2, 3}, {1, 2}, {1, 2}, {2, 1});
  CHECK(f.shape() == Shape{2, 2, 6, 7});
  CHECK(checksum(f) == doctest::Approx(1.244178882193).epsilon(1e-11));
}

TEST_CASE("complex convolution is bilinear without conjugation") {
  manual_seed(3);
  Tensor xr = randn({2, 2, 9}, float64), xi = randn({2, 2, 9}, float64);
  Tensor wr = randn({3, 2, 3}, float64), wi = randn({3, 2, 3}, float64);
  Tensor y = F::conv1d(complex(xr, xi), complex(wr, wi), Tensor(), 2, 1);
  Tensor re = F::conv1d(xr, wr, Tensor(), 2, 1) - F::conv1d(xi, wi, Tensor(), 2, 1);
  Tensor im = F::conv1d(xr, wi, Tensor(), 2, 1) + F::conv1d(xi, wr, Tensor(), 2, 1);
  CHECK(max_abs_diff(vals(real(y)), vals(re)) < 1e-12);
  CHECK(max_abs_diff(vals(imag(y)), vals(im)) < 1e-12);
}

TEST_CASE("conv gradients: gradcheck and gradgradcheck") {
  manual_seed(4);
  using test::leaf64;
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) { return F::conv1d(in[0], in[1], in[2], 2, 1, 2, 1); },
      {leaf64({2, 2, 9}), leaf64({3, 2, 3}), leaf64({3})}));
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) {
        return F::conv1d(in[0], in[1], Tensor(), 1, 2, 1, 2, PaddingMode::circular);
      },
      {leaf64({1, 4, 6}), leaf64({2, 2, 3})}));
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) { return F::conv2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 2}); },
      {leaf64({2, 2, 5, 6}), leaf64({3, 2, 3, 2}), leaf64({3})}));
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) {
        return F::conv2d(in[0], in[1], Tensor(), 1, "same", 1, 1, PaddingMode::reflect);
      },
      {leaf64({1, 2, 4, 5}), leaf64({2, 2, 2, 3})}));
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) { return F::conv2d(in[0], in[1], in[2], 1, 0, 1, 2); },
      {leaf64({2, 4, 3, 3}), leaf64({2, 2, 1, 1}), leaf64({2})}));  // grouped 1x1 path
  CHECK(autodiff::gradcheck(
      [](const std::vector<Tensor>& in) { return F::conv3d(in[0], in[1], in[2], {1, 2, 1}, 1); },
      {leaf64({1, 2, 3, 4, 3}), leaf64({2, 2, 2, 2, 2}), leaf64({2})}));
  // complex128
  Tensor xc = randn({1, 2, 6}, complex128).requires_grad_(), wc = randn({2, 2, 3}, complex128).requires_grad_();
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return F::conv1d(in[0], in[1], Tensor(), 1, 1); },
                            {xc, wc}));
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& in) { return F::conv1d(in[0], in[1], Tensor(), 2, 1); },
                                {xc, wc}));
  // second order
  CHECK(autodiff::gradgradcheck(
      [](const std::vector<Tensor>& in) { return F::conv2d(in[0], in[1], in[2], {1, 2}, 1); },
      {leaf64({1, 2, 4, 5}), leaf64({2, 2, 3, 3}), leaf64({2})}));
  CHECK(autodiff::gradgradcheck(
      [](const std::vector<Tensor>& in) { return F::conv1d(in[0], in[1], Tensor(), 1, 1, 1, 1, PaddingMode::circular); },
      {leaf64({1, 2, 5}), leaf64({2, 2, 3})}));
}

TEST_CASE("conv over several cache-sized batch chunks = unfold + matmul, values and gradients") {
  manual_seed(8);
  // per-sample columns 8*9*64*64*8 bytes = 2.4 MB: the kernels take one sample per chunk
  for (std::int64_t groups : {1, 2}) {
    CAPTURE(groups);
    Tensor x = randn({3, 8, 64, 64}, float64).requires_grad_();
    Tensor w = randn({6, 8 / groups, 3, 3}, float64).requires_grad_();
    Tensor y = F::conv2d(x, w, Tensor(), 1, 1, 1, groups);
    Tensor cols = F::unfold(x, 3, 1, 1).reshape({3, groups, 8 / groups * 9, 64 * 64});
    Tensor ref = matmul(w.reshape({groups, 6 / groups, 8 / groups * 9}), cols).reshape({3, 6, 64, 64});
    CHECK(max_abs_diff(vals(y), vals(ref)) < 1e-12);
    Tensor gy = randn(y.shape(), float64);
    auto g1 = autodiff::grad({y}, {x, w}, {gy});
    auto g2 = autodiff::grad({ref}, {x, w}, {gy});
    CHECK(max_abs_diff(vals(g1[0]), vals(g2[0])) < 1e-11);
    CHECK(max_abs_diff(vals(g1[1]), vals(g2[1])) < 1e-9);
  }
}

TEST_CASE("unfold matches a direct loop; fold is its adjoint") {
  manual_seed(5);
  // unfold (N, C, H, W) -> (N, C*kh*kw, L), checked entry by entry
  const std::int64_t N = 2, C = 3, H = 6, W = 7, kh = 2, kw = 3, sh = 2, sw = 1, dh = 1, dw = 2, ph = 1, pw = 2;
  Tensor x = randn({N, C, H, W}, float64);
  Tensor cols = F::unfold(x, {kh, kw}, {dh, dw}, {ph, pw}, {sh, sw});
  const std::int64_t oh = (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  REQUIRE(cols.shape() == Shape{N, C * kh * kw, oh * ow});
  auto xv = vals(x), cv = vals(cols);
  std::vector<double> ref;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j)
          for (std::int64_t a = 0; a < oh; ++a)
            for (std::int64_t bb = 0; bb < ow; ++bb) {
              const std::int64_t r = a * sh + i * dh - ph, q = bb * sw + j * dw - pw;
              ref.push_back(r < 0 || r >= H || q < 0 || q >= W ? 0.0
                                                               : xv[static_cast<std::size_t>(((n * C + c) * H + r) * W + q)]);
            }
  CHECK(max_abs_diff(cv, ref) == 0.0);
  // <unfold(x), y> == <x, fold(y)>
  Tensor yc = randn(cols.shape(), float64);
  Tensor f = F::fold(yc, {H, W}, {kh, kw}, {dh, dw}, {ph, pw}, {sh, sw});
  REQUIRE(f.shape() == x.shape());
  CHECK(std::abs((cols * yc).sum().item<double>() - (x * f).sum().item<double>()) < 1e-10);
  // fold(unfold(ones)) counts the windows covering each pixel (here: 3x3, stride 1, padding 1, interior 9)
  Tensor cnt = F::fold(F::unfold(ones({1, 1, 5, 5}, float64), 3, 1, 1), 5, 3, 1, 1);
  CHECK(cnt.index({0, 0, 2, 2}).item<double>() == 9.0);
  CHECK(cnt.index({0, 0, 0, 0}).item<double>() == 4.0);
  CHECK(cnt.index({0, 0, 0, 2}).item<double>() == 6.0);
  // unbatched
  CHECK(F::unfold(x.select(0, 1), {kh, kw}, {dh, dw}, {ph, pw}, {sh, sw}).shape() == Shape{C * kh * kw, oh * ow});
  CHECK(max_abs_diff(vals(F::fold(yc.select(0, 0), {H, W}, {kh, kw}, {dh, dw}, {ph, pw}, {sh, sw})),
                     vals(f.select(0, 0))) == 0.0);
  // N-d: 1-D and 3-D adjointness
  for (const Shape& ks : {Shape{3}, Shape{2, 2, 3}}) {
    Shape xs{2, 2};
    for (std::size_t i = 0; i < ks.size(); ++i) xs.push_back(5);
    Tensor xn = randn(xs, float64);
    Tensor cn = F::unfold_nd(xn, ks, 1, 1, 2);
    Tensor yn = randn(cn.shape(), float64);
    Shape os(xs.begin() + 2, xs.end());
    Tensor fn = F::fold_nd(yn, os, ks, 1, 1, 2);
    CHECK(std::abs((cn * yn).sum().item<double>() - (xn * fn).sum().item<double>()) < 1e-10);
  }
}

TEST_CASE("unfold/fold gradients") {
  manual_seed(6);
  using test::leaf64;
  auto u = [](const std::vector<Tensor>& in) { return F::unfold(in[0], {2, 3}, {1, 2}, 1, {2, 1}); };
  auto f = [](const std::vector<Tensor>& in) { return F::fold(in[0], {4, 5}, {2, 2}, 1, {1, 0}, {1, 2}); };
  CHECK(autodiff::gradcheck(u, {leaf64({1, 2, 4, 5})}));
  CHECK(autodiff::gradgradcheck(u, {leaf64({1, 2, 4, 5})}));
  // fold over output 4x5, kernel 2x2, padding (1, 0), stride (1, 2): blocks 5 x 2
  CHECK(autodiff::gradcheck(f, {leaf64({2, 8, 10})}));
  CHECK(autodiff::gradgradcheck(f, {leaf64({2, 8, 10})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return F::unfold_nd(in[0], {2, 2, 2}, 1, 1, 2); },
                            {leaf64({1, 1, 3, 3, 4})}));
}

TEST_CASE("linear matches x @ w^T + b") {
  manual_seed(7);
  Tensor x = randn({2, 3, 4}, float64), w = randn({5, 4}, float64), b = randn({5}, float64);
  Tensor y = F::linear(x, w, b);
  CHECK(y.shape() == Shape{2, 3, 5});
  auto xv = vals(x), wv = vals(w), bv = vals(b), yv = vals(y);
  double err = 0;
  for (std::int64_t r = 0; r < 6; ++r)
    for (std::int64_t o = 0; o < 5; ++o) {
      long double acc = bv[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < 4; ++i)
        acc += static_cast<long double>(xv[static_cast<std::size_t>(r * 4 + i)]) * wv[static_cast<std::size_t>(o * 4 + i)];
      err = std::max(err, std::abs(static_cast<double>(acc) - yv[static_cast<std::size_t>(r * 5 + o)]));
    }
  CHECK(err < 1e-12);
  CHECK(F::linear(randn({4}, float64), w).shape() == Shape{5});
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return F::linear(in[0], in[1], in[2]); },
                            {test::leaf64({3, 4}), test::leaf64({2, 4}), test::leaf64({2})}));
}

TEST_CASE("dropout: scaling, p = 0 and 1, eval, determinism") {
  Tensor x = ones({100000}, float64);
  manual_seed(11);
  Tensor y = F::dropout(x, 0.3);
  auto v = vals(y);
  std::int64_t kept = 0, bad = 0;
  for (double e : v) {
    if (e != 0.0 && std::abs(e - 1.0 / 0.7) > 1e-12) ++bad;
    if (e != 0.0) ++kept;
  }
  CHECK(bad == 0);
  CHECK(std::abs(static_cast<double>(kept) / 100000.0 - 0.7) < 0.01);
  manual_seed(11);
  CHECK(max_abs_diff(vals(F::dropout(x, 0.3)), v) == 0.0);  // same seed, same mask
  Generator g(5), g2(5);
  CHECK(max_abs_diff(vals(F::dropout(x, 0.5, true, &g)), vals(F::dropout(x, 0.5, true, &g2))) == 0.0);
  CHECK(F::dropout(x, 0.3, false).is_same(x));
  CHECK(F::dropout(x, 0.0).is_same(x));
  CHECK(vals(F::dropout(x, 1.0).sum())[0] == 0.0);
  // the gradient is the mask
  Tensor xl = randn({50}, float64).requires_grad_();
  manual_seed(3);
  Tensor yl = F::dropout(xl, 0.4);
  yl.sum().backward();
  auto gy = vals(xl.grad()), yv = vals(yl), xv = vals(xl.detach());
  for (std::size_t i = 0; i < gy.size(); ++i) CHECK(std::abs(gy[i] * xv[i] - yv[i]) < 1e-12);
  CHECK_THROWS_WITH_AS(F::dropout(x, 1.5), "[dropout] p must be in [0, 1], got 1.5", Error);
  CHECK_THROWS_WITH_AS(F::dropout(x, -0.1), "[dropout] p must be in [0, 1], got -0.1", Error);
}

TEST_CASE("conv, unfold, fold, linear: bad input") {
  Tensor x = randn({8, 4, 32, 32}), w = randn({16, 3, 3, 3});
  Tensor xc = x.clone();
  CHECK_THROWS_WITH_AS(F::conv2d(x, w),
                       "[conv2d] expected input with 3 channels (weight (16, 3, 3, 3), groups 1), got (8, 4, 32, 32)",
                       Error);
  CHECK(vals(x) == vals(xc));  // input unchanged
  CHECK_THROWS_WITH_AS(F::conv2d(randn({4, 32}), w),
                       "[conv2d] expected a 3-D (unbatched) or 4-D (batched) input for weight (16, 3, 3, 3), got (4, 32)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 4, 4}), w, Tensor(), 1, 0, 1, 2),
                       "[conv2d] expected input with 6 channels (weight (16, 3, 3, 3), groups 2), got (1, 3, 4, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 4, 4}), randn({5, 1, 3, 3}), Tensor(), 1, 0, 1, 3),
                       "[conv2d] groups 3 must divide out_channels 5 (weight (5, 1, 3, 3))", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 2, 2}), randn({2, 3, 5, 5})),
                       "[conv2d] kernel (5, 5) with dilation (1, 1) spans (5, 5), larger than the padded input (2, 2) "
                       "of input (1, 3, 2, 2)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv1d(randn({1, 3, 4}), randn({2, 3, 3}), Tensor(), 1, 0, 3),
                       "[conv1d] kernel (3,) with dilation (3,) spans (7,), larger than the padded input (4,) of input "
                       "(1, 3, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, Tensor(), 0),
                       "[conv2d] stride must be >= 1, got (0, 0)", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, Tensor(), 1, 0, {1, 0}),
                       "[conv2d] dilation must be >= 1, got (1, 0)", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, Tensor(), 1, -1),
                       "[conv2d] padding must be >= 0, got (-1, -1)", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, Tensor(), 2, "same"),
                       "[conv2d] padding='same' is not supported for strided convolutions (stride (2, 2))", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, Tensor(), {1, 1, 1}),
                       "[conv2d] stride (1, 1, 1) must have 1 or 2 entries", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), w, randn({15})),
                       "[conv2d] bias must have shape (16,), got (15,)", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}, float64), w),
                       "[conv2d] input dtype float64 and weight dtype float32 differ", Error);
  CHECK_THROWS_WITH_AS(F::conv2d(randn({1, 3, 8, 8}), randn({16, 3, 3})),
                       "[conv2d] weight must be 4-D (out_channels, in_channels / groups, kh, kw), got (16, 3, 3)", Error);
  CHECK_THROWS_WITH_AS(F::conv1d(randn({1, 3, 4}), randn({2, 3, 3}), Tensor(), 1, 4, 1, 1, PaddingMode::reflect),
                       "[conv1d] reflect padding (4,) is too large for input (1, 3, 4) (must be smaller than each "
                       "spatial size)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv1d(randn({1, 3, 4}), randn({2, 3, 3}), Tensor(), 1, 5, 1, 1, PaddingMode::circular),
                       "[conv1d] circular padding (5,) is too large for input (1, 3, 4) (may not exceed each spatial "
                       "size)",
                       Error);
  CHECK_THROWS_WITH_AS(F::conv1d(zeros({1, 3, 4}, int64), randn({2, 3, 3})),
                       "[conv1d] expected a floating or complex input, got int64 of shape (1, 3, 4)", Error);
  CHECK_THROWS_WITH_AS(nn::Padding("full"), "[Padding] padding string must be 'same' or 'valid', got 'full'", Error);
  CHECK_THROWS_WITH_AS(F::unfold(randn({2, 3, 4}), 5),
                       "[unfold] kernel (5, 5) with dilation (1, 1) spans (5, 5), larger than the padded input (3, 4) "
                       "of input (2, 3, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(F::unfold(randn({3, 4}), 2), "[unfold] expected a 3-D (unbatched) or 4-D (batched) input, got (3, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(F::fold(randn({1, 7, 9}), 4, 2),
                       "[fold] expected the column dim of input (1, 7, 9) to be divisible by prod(kernel_size) = 4", Error);
  CHECK_THROWS_WITH_AS(F::fold(randn({1, 8, 8}), 4, 2),
                       "[fold] input (1, 8, 8) has 8 blocks, but output_size (4, 4) with kernel (2, 2) gives 9 blocks (3, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(F::linear(randn({8, 4}), randn({5, 3})),
                       "[linear] expected input with 3 features in the last dim (weight (5, 3)), got (8, 4)", Error);
}
