// src/fft/fft.cpp - the public torch.fft-style front end: argument checking and dtype
// promotion, then crop/pad (resize) and one of the three primitives (c2c, r2c, c2r).
//
// Note [fft lowering]
//   fft/ifft/fft2/ifft2/fftn/ifftn  -> c2c (forward / backward sign)
//   rfft/rfft2/rfftn                -> r2c;           irfft/irfft2/irfftn -> c2r
//   hfft/hfft2/hfftn                -> c2r(conj(x)) with swap_norm(norm): the forward DFT of a
//                                      Hermitian signal is real, so it equals its conjugate, the
//                                      backward DFT of conj(x)
//   ihfft/ihfft2/ihfftn             -> conj(r2c(x)) with swap_norm(norm) (x real)
// For n-D real transforms the last of `dims` is the halved one.
#include <algorithm>
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "fft/primitives.hpp"
#include "phasor/creation.hpp"
#include "phasor/fft.hpp"
#include "phasor/ops.hpp"

namespace phasor::fft {

namespace {

using Dims = std::vector<std::int64_t>;

std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

std::string list_str(const Dims& v) { return ::phasor::detail::shape_str(v); }

/// Input of a c2c transform: integers -> default float dtype, real -> complex.
Tensor complex_input(const Tensor& x, const char* op) {
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  ::phasor::detail::check_cpu(x, op);
  if (x.is_complex()) return x;
  if (!x.is_floating_point()) return x.to(to_complex(default_dtype()));
  return x.to(to_complex(x.dtype()));
}

/// Input of a real-to-complex transform: integers -> default float dtype; complex rejected.
Tensor real_input(const Tensor& x, const char* op) {
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  ::phasor::detail::check_cpu(x, op);
  if (x.is_complex())
    throw Error(op, std::string("expected a real input tensor, got ") + dtype_name(x.dtype()) + " of shape " +
                        ::phasor::detail::shape_str(x.shape()) + " (use fft/fftn for complex input)");
  if (!x.is_floating_point()) return x.to(default_dtype());
  return x;
}

void check_length(std::int64_t n, const char* op, const char* what) {
  if (n < 1)
    throw Error(op, std::string("invalid number of data points ") + what + " = " + std::to_string(n) +
                        "; it must be >= 1");
}

/// Dims and sizes of an n-D transform, torch's rules: dims given -> those; else s given -> the
/// last len(s) dims; else all dims. `sizes` defaults to the input's sizes.
struct NdArgs {
  Dims dims;
  Dims sizes;
  bool has_s = false;
};

NdArgs nd_args(const Tensor& x, const Sizes& s, const Sizes& dims, const char* op) {
  NdArgs a;
  const std::int64_t nd = x.dim();
  if (s) {
    for (auto v : *s)
      if (v < 1)
        throw Error(op, "invalid number of data points in s = " + list_str(*s) + "; every entry must be >= 1");
  }
  if (dims) {
    if (s && s->size() != dims->size())
      throw Error(op, "s = " + list_str(*s) + " and dims = " + list_str(*dims) + " must have the same length");
    for (auto d : *dims) {
      if (d < -nd || d >= nd || nd == 0)
        throw Error(op, "dim " + std::to_string(d) + " in dims = " + list_str(*dims) + " out of range for a tensor of " +
                            std::to_string(nd) + " dims");
    }
    Dims seen;
    for (auto d : *dims) {
      const std::int64_t w = d < 0 ? d + nd : d;
      if (std::find(seen.begin(), seen.end(), w) != seen.end())
        throw Error(op, "dim " + std::to_string(d) + " appears more than once in dims = " + list_str(*dims));
      seen.push_back(w);
    }
    a.dims = seen;
  } else if (s) {
    if (static_cast<std::int64_t>(s->size()) > nd)
      throw Error(op, "s = " + list_str(*s) + " has more entries than the input's " + std::to_string(nd) + " dims");
    for (std::int64_t d = nd - static_cast<std::int64_t>(s->size()); d < nd; ++d) a.dims.push_back(d);
  } else {
    for (std::int64_t d = 0; d < nd; ++d) a.dims.push_back(d);
  }
  a.has_s = s.has_value();
  for (std::size_t i = 0; i < a.dims.size(); ++i) a.sizes.push_back(s ? (*s)[i] : x.size(a.dims[i]));
  return a;
}

/// Rejects transforms over a dim of length 0 (after applying s).
void check_sizes(const NdArgs& a, const Tensor& x, const char* op) {
  for (std::size_t i = 0; i < a.dims.size(); ++i)
    if (a.sizes[i] < 1)
      throw Error(op, "invalid number of data points (" + std::to_string(a.sizes[i]) + ") along dim " +
                          std::to_string(a.dims[i]) + " of the input of shape " +
                          ::phasor::detail::shape_str(x.shape()) + "; give s/n to zero-pad");
}

Tensor c2c_nd(const char* op, const Tensor& x_in, const Sizes& s, const Sizes& dims, Norm norm, bool forward) {
  return ::phasor::detail::composite(op, {x_in}, [&] {
    Tensor x = complex_input(x_in, op);
    NdArgs a = nd_args(x, s, dims, op);
    check_sizes(a, x, op);
    return detail::c2c(detail::resize(x, a.dims, a.sizes), a.dims, forward, norm);
  });
}

/// r2c over a.dims (rfftn and, conjugated, ihfftn).
Tensor r2c_nd(const char* op, const Tensor& x_in, const Sizes& s, const Sizes& dims, Norm norm, bool hermitian) {
  return ::phasor::detail::composite(op, {x_in}, [&] {
    Tensor x = real_input(x_in, op);
    NdArgs a = nd_args(x, s, dims, op);
    if (a.dims.empty()) throw Error(op, "must transform at least one dim");
    check_sizes(a, x, op);
    Tensor xr = detail::resize(x, a.dims, a.sizes);
    if (!hermitian) return detail::r2c(xr, a.dims, norm);
    return detail::r2c(xr, a.dims, detail::swap_norm(norm)).conj();
  });
}

/// c2r over a.dims (irfftn and, on the conjugate, hfftn); the last of s (default 2*(m-1))
/// is the output length of the halved dim.
Tensor c2r_nd(const char* op, const Tensor& x_in, const Sizes& s, const Sizes& dims, Norm norm, bool hermitian) {
  return ::phasor::detail::composite(op, {x_in}, [&] {
    Tensor x = complex_input(x_in, op);
    NdArgs a = nd_args(x, s, dims, op);
    if (a.dims.empty()) throw Error(op, "must transform at least one dim");
    const std::int64_t last = a.dims.back();
    const std::int64_t last_n = a.has_s ? a.sizes.back() : 2 * (x.size(last) - 1);
    if (last_n < 1)
      throw Error(op, "invalid output length " + std::to_string(last_n) + " along dim " + std::to_string(last) +
                          " (input of shape " + ::phasor::detail::shape_str(x.shape()) +
                          " has " + std::to_string(x.size(last)) + " bins there); give n/s >= 1");
    a.sizes.back() = last_n;
    check_sizes(a, x, op);
    Dims in_sizes = a.sizes;
    in_sizes.back() = last_n / 2 + 1;
    Tensor xr = detail::resize(x, a.dims, in_sizes);
    if (!hermitian) return detail::c2r(xr, a.dims, norm, last_n);
    return detail::c2r(xr.conj(), a.dims, detail::swap_norm(norm), last_n);
  });
}

/// The (s, dims) pair of a 1-D transform.
Sizes one_s(const Length& n, const char* op) {
  if (!n) return std::nullopt;
  check_length(*n, op, "n");
  return Dims{*n};
}

}  // namespace

// ---- complex-to-complex ---------------------------------------------------------------------------------
Tensor fft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return c2c_nd("fft", x, one_s(n, "fft"), Dims{dim}, norm, true);
}
Tensor ifft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return c2c_nd("ifft", x, one_s(n, "ifft"), Dims{dim}, norm, false);
}
Tensor fft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return c2c_nd("fft2", x, s, dims, norm, true); }
Tensor ifft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return c2c_nd("ifft2", x, s, dims, norm, false); }
Tensor fftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return c2c_nd("fftn", x, s, dims, norm, true); }
Tensor ifftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return c2c_nd("ifftn", x, s, dims, norm, false); }

// ---- real-to-complex and back ------------------------------------------------------------------------------
Tensor rfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return r2c_nd("rfft", x, one_s(n, "rfft"), Dims{dim}, norm, false);
}
Tensor irfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return c2r_nd("irfft", x, one_s(n, "irfft"), Dims{dim}, norm, false);
}
Tensor rfft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return r2c_nd("rfft2", x, s, dims, norm, false); }
Tensor irfft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return c2r_nd("irfft2", x, s, dims, norm, false); }
Tensor rfftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return r2c_nd("rfftn", x, s, dims, norm, false); }
Tensor irfftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return c2r_nd("irfftn", x, s, dims, norm, false); }

// ---- Hermitian ---------------------------------------------------------------------------------------------------
Tensor hfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return c2r_nd("hfft", x, one_s(n, "hfft"), Dims{dim}, norm, true);
}
Tensor ihfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) {
  return r2c_nd("ihfft", x, one_s(n, "ihfft"), Dims{dim}, norm, true);
}
Tensor hfft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return c2r_nd("hfft2", x, s, dims, norm, true); }
Tensor ihfft2(const Tensor& x, Sizes s, const Dims& dims, Norm norm) { return r2c_nd("ihfft2", x, s, dims, norm, true); }
Tensor hfftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return c2r_nd("hfftn", x, s, dims, norm, true); }
Tensor ihfftn(const Tensor& x, Sizes s, Sizes dims, Norm norm) { return r2c_nd("ihfftn", x, s, dims, norm, true); }

// ---- helpers ------------------------------------------------------------------------------------------------------
namespace {
Tensor freq(const char* op, std::int64_t n, double d, Dtype dtype, Device device, bool onesided) {
  if (n < 0) throw Error(op, "n must be >= 0, got " + std::to_string(n));
  if (!is_floating_or_complex(dtype))
    throw Error(op, std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  const std::int64_t m = onesided ? n / 2 + 1 : n;
  std::vector<double> v(u(n == 0 ? 0 : m));
  const double scale = 1.0 / (static_cast<double>(n) * d);
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(v.size()); ++k) {
    const std::int64_t f = (!onesided && k > (n - 1) / 2) ? k - n : k;  // [0..(n-1)/2, -(n/2)..-1]
    v[u(k)] = static_cast<double>(f) * scale;
  }
  Tensor t = from_vector(v, Shape{static_cast<std::int64_t>(v.size())}).to(dtype);
  return device.is_cpu() ? t : t.to(device);
}

Tensor shift(const char* op, const Tensor& x, const Sizes& dims, bool inverse) {
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  return ::phasor::detail::composite(op, {x}, [&] {
    Dims ds;
    if (dims) ds = ::phasor::detail::wrap_dims(*dims, x.dim(), op, false);
    else
      for (std::int64_t d = 0; d < x.dim(); ++d) ds.push_back(d);
    Dims shifts;
    for (auto d : ds) shifts.push_back(inverse ? -(x.size(d) / 2) : x.size(d) / 2);
    return detail::roll(x, ds, shifts);
  });
}
}  // namespace

Tensor fftfreq(std::int64_t n, double d, Dtype dtype, Device device) { return freq("fftfreq", n, d, dtype, device, false); }
Tensor rfftfreq(std::int64_t n, double d, Dtype dtype, Device device) {
  return freq("rfftfreq", n, d, dtype, device, true);
}
Tensor fftshift(const Tensor& x, Sizes dims) { return shift("fftshift", x, dims, false); }
Tensor ifftshift(const Tensor& x, Sizes dims) { return shift("ifftshift", x, dims, true); }

}  // namespace phasor::fft
