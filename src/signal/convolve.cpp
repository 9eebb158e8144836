// src/signal/convolve.cpp - FFT convolution (direct and overlap-add), correlation, the analytic
// signal and Fourier resampling (scipy.signal's fftconvolve, oaconvolve, correlate, hilbert, resample).
//
// Note [convolution along a dim]
//   Both inputs have `dim` moved last; their other dims broadcast (so a 1-D filter applies to a
//   batch). The full linear convolution has La + Lb - 1 samples; "same" keeps La of them centered
//   (start (Lb - 1) / 2, scipy's _centered) and "valid" keeps the |La - Lb| + 1 that never touch the
//   zero padding (start min(La, Lb) - 1). The result has the time dim moved back to `dim`
//   (counted in the broadcast result when negative).
#include <algorithm>
#include <cmath>

#include "core/device_constants.hpp"
#include "phasor/fft.hpp"
#include "signal/common.hpp"

namespace phasor::signal {

using detail::ConvMode;
using detail::shape_of;
using detail::str;

namespace {

struct ConvArgs {
  Tensor a, b;  // time dim last, floating
  std::int64_t La, Lb;
  ConvMode mode;
};

ConvArgs conv_args(const char* op, const Tensor& a, const Tensor& b, const std::string& mode, std::int64_t dim) {
  const ConvMode m = detail::parse_mode(mode, op);
  detail::check_input(a, op, "in1");
  detail::check_input(b, op, "in2");
  detail::check_device(b, a.device(), op, "in2", "in1");
  if (dim >= 0 && a.dim() != b.dim())
    throw Error(op, "a non-negative dim = " + str(dim) + " needs inputs of equal rank, got shapes " + shape_of(a) +
                        " and " + shape_of(b) + " (use a negative dim to broadcast)");
  const std::int64_t da = ::phasor::detail::wrap_dim(dim, a.dim(), op);
  const std::int64_t db = ::phasor::detail::wrap_dim(dim, b.dim(), op);
  ConvArgs c{detail::as_floating(a).movedim(da, -1), detail::as_floating(b).movedim(db, -1), a.size(da), b.size(db), m};
  if (c.La < 1 || c.Lb < 1)
    throw Error(op, "inputs must be non-empty along dim " + str(dim) + ", got shapes " + shape_of(a) + " and " +
                        shape_of(b));
  // Validate broadcasting of the batch dims now, so the error names this op.
  Shape sa = c.a.shape(), sb = c.b.shape();
  sa.pop_back();
  sb.pop_back();
  broadcast_shapes({sa, sb}, op);
  return c;
}

/// Crops the full convolution (time last) to the mode and moves time back to `dim`.
Tensor finish(Tensor full, const ConvArgs& c, std::int64_t dim) {
  std::int64_t start = 0, len = c.La + c.Lb - 1;
  if (c.mode == ConvMode::same) {
    start = (c.Lb - 1) / 2;
    len = c.La;
  } else if (c.mode == ConvMode::valid) {
    start = std::min(c.La, c.Lb) - 1;
    len = std::max(c.La, c.Lb) - std::min(c.La, c.Lb) + 1;
  }
  Tensor y = full.narrow(-1, start, len);
  return y.movedim(-1, ::phasor::detail::wrap_dim(dim, y.dim(), "convolve"));
}

/// Full convolution of the time-last inputs with one FFT of size >= La + Lb - 1.
Tensor full_fft(const Tensor& a, const Tensor& b, std::int64_t La, std::int64_t Lb) {
  const std::int64_t n = La + Lb - 1, nf = detail::next_fast_len(n);
  Tensor y;
  if (a.is_complex() || b.is_complex())
    y = fft::ifft(fft::fft(a, nf) * fft::fft(b, nf), nf);
  else
    y = fft::irfft(fft::rfft(a, nf) * fft::rfft(b, nf), nf);
  return y.narrow(-1, 0, n);
}

}  // namespace

Tensor fftconvolve(const Tensor& a, const Tensor& b, const std::string& mode, std::int64_t dim) {
  const ConvArgs c = conv_args("fftconvolve", a, b, mode, dim);
  return ::phasor::detail::composite("fftconvolve", {a, b},
                                     [&] { return finish(full_fft(c.a, c.b, c.La, c.Lb), c, dim); });
}

Tensor oaconvolve(const Tensor& a, const Tensor& b, const std::string& mode, std::int64_t dim) {
  const ConvArgs c = conv_args("oaconvolve", a, b, mode, dim);
  return ::phasor::detail::composite("oaconvolve", {a, b}, [&] {
    // x: the longer input, split into blocks of B samples; h: the shorter one.
    const bool swap = c.La < c.Lb;
    const Tensor& x = swap ? c.b : c.a;
    const Tensor& h = swap ? c.a : c.b;
    const std::int64_t Lx = swap ? c.Lb : c.La, Lh = swap ? c.La : c.Lb;
    std::int64_t N = 16;
    while (N < 4 * Lh) N *= 2;  // block FFT size: a few times the filter, a power of two
    if (N >= detail::next_fast_len(Lx + Lh - 1)) return finish(full_fft(c.a, c.b, c.La, c.Lb), c, dim);
    const std::int64_t B = N - Lh + 1, nb = (Lx + B - 1) / B;
    Tensor xp = pad(x.dim() == 1 ? x.unsqueeze(0) : x, {0, nb * B - Lx});
    if (x.dim() == 1) xp = xp.squeeze(0);
    Shape s = xp.shape();
    s.back() = nb;
    s.push_back(B);
    Tensor blocks = xp.reshape(s);  // (..., nb, B)
    Tensor yb;
    if (x.is_complex() || h.is_complex())
      yb = fft::ifft(fft::fft(blocks, N) * fft::fft(h, N).unsqueeze(-2), N);
    else
      yb = fft::irfft(fft::rfft(blocks, N) * fft::rfft(h, N).unsqueeze(-2), N);
    Tensor y = overlap_add(yb, B).narrow(-1, 0, Lx + Lh - 1);
    return finish(y, c, dim);
  });
}

Tensor correlate(const Tensor& a, const Tensor& b, const std::string& mode, std::int64_t dim) {
  detail::parse_mode(mode, "correlate");
  detail::check_input(a, "correlate", "in1");
  detail::check_input(b, "correlate", "in2");
  detail::check_device(b, a.device(), "correlate", "in2", "in1");
  const std::int64_t db = ::phasor::detail::wrap_dim(dim, b.dim(), "correlate");
  return ::phasor::detail::composite("correlate", {a, b}, [&] {
    Tensor br = flip(b, {db});
    if (br.is_complex()) br = br.conj();
    const ConvArgs c = conv_args("correlate", a, br, mode, dim);
    return finish(full_fft(c.a, c.b, c.La, c.Lb), c, dim);
  });
}

Tensor hilbert(const Tensor& x_in, std::optional<std::int64_t> n, std::int64_t dim) {
  detail::check_input(x_in, "hilbert");
  if (x_in.is_complex())
    throw Error("hilbert", std::string("x must be real, got ") + dtype_name(x_in.dtype()) + " of shape " +
                               shape_of(x_in));
  const std::int64_t d = ::phasor::detail::wrap_dim(dim, x_in.dim(), "hilbert");
  const std::int64_t N = n.value_or(x_in.size(d));
  if (N < 1) throw Error("hilbert", "N must be >= 1, got " + str(N) + " (input shape " + shape_of(x_in) + ")");
  const Tensor x = detail::as_floating(x_in);
  std::vector<double> h(static_cast<std::size_t>(N), 0.0);
  h[0] = 1.0;
  if (N % 2 == 0) {
    h[static_cast<std::size_t>(N / 2)] = 1.0;
    for (std::int64_t k = 1; k < N / 2; ++k) h[static_cast<std::size_t>(k)] = 2.0;
  } else {
    for (std::int64_t k = 1; k < (N + 1) / 2; ++k) h[static_cast<std::size_t>(k)] = 2.0;
  }
  Shape hs(static_cast<std::size_t>(x.dim()), 1);
  hs[static_cast<std::size_t>(d)] = N;
  const Tensor ht = ::phasor::detail::device_constant(  // Note [device constants]
      x.device(), "hilbert", std::make_tuple(N, x.dim(), d, x.dtype()),
      [&] { return from_vector(h, hs).to(x.dtype()); });
  return ::phasor::detail::composite("hilbert", {x_in}, [&] { return fft::ifft(fft::fft(x, N, d) * ht, N, d); });
}

Tensor resample(const Tensor& x_in, std::int64_t num, std::int64_t dim, const Tensor& window) {
  detail::check_input(x_in, "resample");
  const std::int64_t d = ::phasor::detail::wrap_dim(dim, x_in.dim(), "resample");
  const std::int64_t Nx = x_in.size(d);
  if (num < 1) throw Error("resample", "num must be >= 1, got " + str(num));
  if (Nx < 1) throw Error("resample", "cannot resample an empty signal of shape " + shape_of(x_in));
  if (window.defined()) {
    detail::check_input(window, "resample", "window");
    detail::check_device(window, x_in.device(), "resample", "window");
    if (window.dim() != 1 || window.size(0) != Nx)
      throw Error("resample", "window of shape " + shape_of(window) + " must be 1-D with " + str(Nx) +
                                  " samples (the input's length along dim " + str(d) + ")");
  }
  const Tensor x = detail::as_floating(x_in).movedim(d, -1);
  const bool real_in = !x.is_complex();
  const std::int64_t N = std::min(num, Nx), nyq = N / 2 + 1;
  std::vector<Tensor> ins{x_in};
  if (window.defined()) ins.push_back(window);
  return ::phasor::detail::composite("resample", ins, [&] {
    Tensor X = real_in ? fft::rfft(x) : fft::fft(x);
    if (window.defined()) {
      // spectral weights in FFT order (scipy's array window); real input folds them, W[k] ~ (W[k] + W[-k]) / 2
      Tensor W = window;
      if (real_in) W = ((W + roll(flip(W, {0}), {1}, {0})) * 0.5).narrow(0, 0, Nx / 2 + 1);
      X = X * W;
    }
    const std::int64_t out_bins = real_in ? num / 2 + 1 : num;
    // Positive frequencies 0 .. nyq-1 (and for complex input the N - nyq negative ones at the end).
    std::vector<double> scale(static_cast<std::size_t>(out_bins), 1.0);
    Tensor Y;
    const auto pad_last = [](const Tensor& t, std::int64_t l, std::int64_t r) {
      if (l == 0 && r == 0) return t;
      Tensor t2 = t.dim() == 1 ? t.unsqueeze(0) : t;
      Tensor p = pad(t2, {l, r});
      return t.dim() == 1 ? p.squeeze(0) : p;
    };
    if (real_in) {
      Y = pad_last(X.narrow(-1, 0, nyq), 0, out_bins - nyq);
      if (N % 2 == 0 && num != Nx) scale[static_cast<std::size_t>(N / 2)] = num < Nx ? 2.0 : 0.5;
    } else {
      Tensor pos = X.narrow(-1, 0, nyq);
      const std::int64_t nneg = N > 2 ? N - nyq : 0;
      Tensor neg = X.narrow(-1, Nx - nneg, nneg);
      Y = cat({pad_last(pos, 0, num - nyq - nneg), neg}, -1);
      if (N % 2 == 0) {
        if (num < Nx) {
          // +N/2 bin also collects the -N/2 component of X.
          Tensor extra = pad_last(X.narrow(-1, Nx - N / 2, 1), N / 2, num - N / 2 - 1);
          Y = Y + extra;
        } else if (num > Nx) {
          scale[static_cast<std::size_t>(N / 2)] = 0.5;
          Tensor copy = pad_last(X.narrow(-1, N / 2, 1) * 0.5, num - N / 2, N / 2 - 1);
          Y = Y + copy;
        }
      }
    }
    const Dtype rd = detail::real_dtype_of(x);
    Y = Y * ::phasor::detail::device_constant(  // Note [device constants]: scale depends on Nx, num, real_in
                x.device(), "resample scale", std::make_tuple(Nx, num, real_in, rd),
                [&] { return from_vector(scale).to(rd); });
    Tensor y = real_in ? fft::irfft(Y, num) : fft::ifft(Y, num);
    y = y * (static_cast<double>(num) / static_cast<double>(Nx));
    return y.movedim(-1, d);
  });
}

}  // namespace phasor::signal
