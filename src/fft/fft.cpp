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
#include "phasor/fft.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "core/ramp.hpp"
#include "fft/primitives.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::fft {

namespace {

using detail::ArgRef;
using detail::DimList;
using Dims = std::vector<std::int64_t>;

std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

std::string list_str(const Dims& v) { return ::phasor::detail::shape_str(v); }


/// Input of a c2c transform: integers -> default float dtype, real -> complex.
void complex_input(ArgRef& a, const char* op) {
  const Tensor& x = a.get();
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  if (x.is_complex()) return;
  a.replace(x.to(to_complex(x.is_floating_point() ? x.dtype() : default_dtype())));
}

/// Input of a real-to-complex transform: integers -> default float dtype; complex rejected.
void real_input(ArgRef& a, const char* op) {
  const Tensor& x = a.get();
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  if (x.is_complex())
    throw Error(op, std::string("expected a real input tensor, got ") + dtype_name(x.dtype()) + " of shape " +
                        ::phasor::detail::shape_str(x.shape()) + " (use fft/fftn for complex input)");
  if (!x.is_floating_point()) a.replace(x.to(default_dtype()));
}

void check_length(std::int64_t n, const char* op, const char* what) {
  if (n < 1)
    throw Error(op,
                std::string("invalid number of data points ") + what + " = " + std::to_string(n) + "; it must be >= 1");
}


std::string list_str(const DimList& v) { return list_str(v.to_vector()); }

/// Runs `fn` as the composite `op`; skips building the observers' input list when nobody listens.
template <class Fn>
Tensor run_composite(const char* op, const Tensor& x, Fn&& fn) {
  if (::phasor::detail::g_num_observers.load(std::memory_order_relaxed) == 0) return fn();
  return ::phasor::detail::composite(op, {x}, fn);
}

/// Dims and sizes of an n-D transform, torch's rules: dims given -> those; else s given -> the
/// last len(s) dims; else all dims. `sizes` defaults to the input's sizes.
struct NdArgs {
  DimList dims;
  DimList sizes;
  bool has_s = false;
};

NdArgs nd_args(const Tensor& x, const DimList* s, const DimList* dims, const char* op) {
  NdArgs a;
  const std::int64_t nd = x.dim();
  if (s) {
    for (auto v : *s)
      if (v < 1) throw Error(op, "invalid number of data points in s = " + list_str(*s) + "; every entry must be >= 1");
  }
  if (dims) {
    if (s && s->size() != dims->size())
      throw Error(op, "s = " + list_str(*s) + " and dims = " + list_str(*dims) + " must have the same length");
    for (auto d : *dims) {
      if (d < -nd || d >= nd || nd == 0)
        throw Error(op, "dim " + std::to_string(d) + " in dims = " + list_str(*dims) +
                            " out of range for a tensor of " + std::to_string(nd) + " dims");
      const std::int64_t w = d < 0 ? d + nd : d;
      if (std::find(a.dims.begin(), a.dims.end(), w) != a.dims.end())
        throw Error(op, "dim " + std::to_string(d) + " appears more than once in dims = " + list_str(*dims));
      a.dims.push_back(w);
    }
  } else if (s) {
    if (static_cast<std::int64_t>(s->size()) > nd)
      throw Error(op, "s = " + list_str(*s) + " has more entries than the input's " + std::to_string(nd) + " dims");
    for (std::int64_t d = nd - static_cast<std::int64_t>(s->size()); d < nd; ++d) a.dims.push_back(d);
  } else {
    for (std::int64_t d = 0; d < nd; ++d) a.dims.push_back(d);
  }
  a.has_s = s != nullptr;
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

/// Optional list arguments of the public functions, as inline lists (null = not given).
struct ListArg {
  DimList list;
  bool given = false;
  ListArg() = default;
  explicit ListArg(const Sizes& v) : given(v.has_value()) {
    if (v) list = DimList(*v);
  }
  explicit ListArg(const Dims& v) : list(v), given(true) {}
  const DimList* ptr() const { return given ? &list : nullptr; }
};

// ---- 1-D transforms: the same rules as the n-D ones with one dim, without the list handling
/// Wrapped dim of a 1-D transform (same message as nd_args).
std::int64_t one_dim(const Tensor& x, std::int64_t dim, const char* op) {
  const std::int64_t nd = x.dim();
  if (dim < -nd || dim >= nd || nd == 0)
    throw Error(op, "dim " + std::to_string(dim) + " in dims = (" + std::to_string(dim) +
                        ",) out of range for a tensor of " + std::to_string(nd) + " dims");
  return dim < 0 ? dim + nd : dim;
}

void check_one_size(std::int64_t len, std::int64_t d, const Tensor& x, const char* op) {
  if (len < 1)
    throw Error(op, "invalid number of data points (" + std::to_string(len) + ") along dim " + std::to_string(d) +
                        " of the input of shape " + ::phasor::detail::shape_str(x.shape()) + "; give s/n to zero-pad");
}

/// Crops or zero-pads the argument to `len` along d (kept as is when it has that length).
/// Returns true if the result is a fresh copy made here.
bool resize_one(ArgRef& a, std::int64_t d, std::int64_t len) {
  if (a.get().shape()[u(d)] == len) return a.owned();
  bool padded = false;
  a.replace(detail::resize(a.get(), DimList{d}, DimList{len}, &padded));
  return padded;
}

/// c2c_1d beyond the fast path (kept out of line so the fast path stays small).
[[gnu::noinline]] Tensor c2c_1d_general(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm,
                                        bool forward) {
  if (n) check_length(*n, op, "n");
  return run_composite(op, x_in, [&] {
    ArgRef x(x_in);
    complex_input(x, op);
    const std::int64_t d = one_dim(x.get(), dim, op);
    const std::int64_t len = n ? *n : x.get().shape()[u(d)];
    check_one_size(len, d, x.get(), op);
    resize_one(x, d, len);
    return detail::c2c(x.get(), DimList{d}, forward, norm);
  });
}

Tensor c2c_1d(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm, bool forward) {
  if (Tensor y = detail::fast_1d(detail::Kind::c2c, x_in, n, dim, norm, forward); y.defined()) return y;
  return c2c_1d_general(op, x_in, n, dim, norm, forward);
}

/// r2c_1d beyond the fast path (kept out of line so the fast path stays small).
[[gnu::noinline]] Tensor r2c_1d_general(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm,
                                        bool hermitian) {
  if (n) check_length(*n, op, "n");
  return run_composite(op, x_in, [&] {
    ArgRef x(x_in);
    real_input(x, op);
    const std::int64_t d = one_dim(x.get(), dim, op);
    const std::int64_t len = n ? *n : x.get().shape()[u(d)];
    check_one_size(len, d, x.get(), op);
    resize_one(x, d, len);
    if (!hermitian) return detail::r2c(x.get(), DimList{d}, norm);
    return detail::r2c(x.get(), DimList{d}, detail::swap_norm(norm)).conj();
  });
}

Tensor r2c_1d(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm, bool hermitian) {
  if (!hermitian)
    if (Tensor y = detail::fast_1d(detail::Kind::r2c, x_in, n, dim, norm, true); y.defined()) return y;
  return r2c_1d_general(op, x_in, n, dim, norm, hermitian);
}

/// c2r_1d beyond the fast path (kept out of line so the fast path stays small).
[[gnu::noinline]] Tensor c2r_1d_general(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm,
                                        bool hermitian) {
  if (n) check_length(*n, op, "n");
  return run_composite(op, x_in, [&] {
    ArgRef x(x_in);
    complex_input(x, op);
    const std::int64_t d = one_dim(x.get(), dim, op);
    const std::int64_t m = x.get().shape()[u(d)];
    const std::int64_t len = n ? *n : 2 * (m - 1);
    if (len < 1)
      throw Error(op, "invalid output length " + std::to_string(len) + " along dim " + std::to_string(d) +
                          " (input of shape " + ::phasor::detail::shape_str(x.get().shape()) + " has " +
                          std::to_string(m) + " bins there); give n/s >= 1");
    const bool scratch = resize_one(x, d, len / 2 + 1);
    if (!hermitian) return detail::c2r(x.get(), DimList{d}, norm, len, scratch);
    return detail::c2r(x.get().conj(), DimList{d}, detail::swap_norm(norm), len, true);
  });
}

Tensor c2r_1d(const char* op, const Tensor& x_in, const Length& n, std::int64_t dim, Norm norm, bool hermitian) {
  if (!hermitian)
    if (Tensor y = detail::fast_1d(detail::Kind::c2r, x_in, n, dim, norm, false); y.defined()) return y;
  return c2r_1d_general(op, x_in, n, dim, norm, hermitian);
}

Tensor c2c_nd(const char* op, const Tensor& x_in, const ListArg& s, const ListArg& dims, Norm norm, bool forward) {
  return run_composite(op, x_in, [&] {
    ArgRef xa(x_in);
    complex_input(xa, op);
    const Tensor& x = xa.get();
    NdArgs a = nd_args(x, s.ptr(), dims.ptr(), op);
    check_sizes(a, x, op);
    return detail::c2c(detail::resize(x, a.dims, a.sizes), a.dims, forward, norm);
  });
}

/// r2c over a.dims (rfftn and, conjugated, ihfftn).
Tensor r2c_nd(const char* op, const Tensor& x_in, const ListArg& s, const ListArg& dims, Norm norm, bool hermitian) {
  return run_composite(op, x_in, [&] {
    ArgRef xa(x_in);
    real_input(xa, op);
    const Tensor& x = xa.get();
    NdArgs a = nd_args(x, s.ptr(), dims.ptr(), op);
    if (a.dims.empty()) throw Error(op, "must transform at least one dim");
    check_sizes(a, x, op);
    Tensor xr = detail::resize(x, a.dims, a.sizes);
    if (!hermitian) return detail::r2c(xr, a.dims, norm);
    return detail::r2c(xr, a.dims, detail::swap_norm(norm)).conj();
  });
}

/// c2r over a.dims (irfftn and, on the conjugate, hfftn); the last of s (default 2*(m-1))
/// is the output length of the halved dim.
Tensor c2r_nd(const char* op, const Tensor& x_in, const ListArg& s, const ListArg& dims, Norm norm, bool hermitian) {
  return run_composite(op, x_in, [&] {
    ArgRef xa(x_in);
    complex_input(xa, op);
    const Tensor& x = xa.get();
    NdArgs a = nd_args(x, s.ptr(), dims.ptr(), op);
    if (a.dims.empty()) throw Error(op, "must transform at least one dim");
    const std::int64_t last = a.dims.back();
    const std::int64_t last_n = a.has_s ? a.sizes.back() : 2 * (x.size(last) - 1);
    if (last_n < 1)
      throw Error(op, "invalid output length " + std::to_string(last_n) + " along dim " + std::to_string(last) +
                          " (input of shape " + ::phasor::detail::shape_str(x.shape()) + " has " +
                          std::to_string(x.size(last)) + " bins there); give n/s >= 1");
    a.sizes.back() = last_n;
    check_sizes(a, x, op);
    DimList in_sizes = a.sizes;
    in_sizes.back() = last_n / 2 + 1;
    bool padded = false;
    Tensor xr = detail::resize(x, a.dims, in_sizes, &padded);
    if (!hermitian) return detail::c2r(xr, a.dims, norm, last_n, padded || (xa.owned() && xr.is_same(x)));
    return detail::c2r(xr.conj(), a.dims, detail::swap_norm(norm), last_n, true);
  });
}

}  // namespace

// ---- complex-to-complex ---------------------------------------------------------------------------------
Tensor fft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return c2c_1d("fft", x, n, dim, norm, true); }
Tensor ifft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return c2c_1d("ifft", x, n, dim, norm, false); }
Tensor fft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return c2c_nd("fft2", x, ListArg(s), ListArg(dims), norm, true);
}
Tensor ifft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return c2c_nd("ifft2", x, ListArg(s), ListArg(dims), norm, false);
}
Tensor fftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return c2c_nd("fftn", x, ListArg(s), ListArg(dims), norm, true);
}
Tensor ifftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return c2c_nd("ifftn", x, ListArg(s), ListArg(dims), norm, false);
}

// ---- real-to-complex and back ------------------------------------------------------------------------------
Tensor rfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return r2c_1d("rfft", x, n, dim, norm, false); }
Tensor irfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return c2r_1d("irfft", x, n, dim, norm, false); }
Tensor rfft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return r2c_nd("rfft2", x, ListArg(s), ListArg(dims), norm, false);
}
Tensor irfft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return c2r_nd("irfft2", x, ListArg(s), ListArg(dims), norm, false);
}
Tensor rfftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return r2c_nd("rfftn", x, ListArg(s), ListArg(dims), norm, false);
}
Tensor irfftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return c2r_nd("irfftn", x, ListArg(s), ListArg(dims), norm, false);
}

// ---- Hermitian ---------------------------------------------------------------------------------------------------
Tensor hfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return c2r_1d("hfft", x, n, dim, norm, true); }
Tensor ihfft(const Tensor& x, Length n, std::int64_t dim, Norm norm) { return r2c_1d("ihfft", x, n, dim, norm, true); }
Tensor hfft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return c2r_nd("hfft2", x, ListArg(s), ListArg(dims), norm, true);
}
Tensor ihfft2(const Tensor& x, const Sizes& s, const Dims& dims, Norm norm) {
  return r2c_nd("ihfft2", x, ListArg(s), ListArg(dims), norm, true);
}
Tensor hfftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return c2r_nd("hfftn", x, ListArg(s), ListArg(dims), norm, true);
}
Tensor ihfftn(const Tensor& x, const Sizes& s, const Sizes& dims, Norm norm) {
  return r2c_nd("ihfftn", x, ListArg(s), ListArg(dims), norm, true);
}

// ---- helpers ------------------------------------------------------------------------------------------------------
namespace {
Tensor freq(const char* op, std::int64_t n, double d, Dtype dtype, Device device, bool onesided) {
  if (n < 0) throw Error(op, "n must be >= 0, got " + std::to_string(n));
  if (!is_floating_or_complex(dtype))
    throw Error(op, std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  const std::int64_t m = onesided ? n / 2 + 1 : n;
  const double scale = 1.0 / (static_cast<double>(n) * d);
  ::phasor::detail::Ramp r;  // [0..(n-1)/2, -(n/2)..-1] * scale; one-sided: [0..n/2] * scale
  r.n = n == 0 ? 0 : m;
  r.half = onesided ? m : (n - 1) / 2 + 1;
  r.period = std::max<std::int64_t>(n, 1);
  r.step_re = scale;
  // written on a GPU; a virtual CPU device gets the host's values copied, as every host-made tensor
  return ::phasor::detail::ramp_tensor(op, r, dtype, device.is_cuda() ? device : Device::cpu()).to(device);
}

Tensor shift(const char* op, const Tensor& x, const Sizes& dims, bool inverse) {
  if (!x.defined()) throw Error(op, "got an undefined tensor");
  return run_composite(op, x, [&] {
    Shape ds, shifts;
    if (dims)
      for (auto d : ::phasor::detail::wrap_dims(*dims, x.dim(), op, false)) ds.push_back(d);
    else
      for (std::int64_t d = 0; d < x.dim(); ++d) ds.push_back(d);
    if (ds.empty()) return x.clone();
    for (auto d : ds) shifts.push_back(inverse ? -(x.size(d) / 2) : x.size(d) / 2);
    return ::phasor::roll(x, shifts, ds);
  });
}
}  // namespace

Tensor fftfreq(std::int64_t n, double d, Dtype dtype, Device device) {
  return freq("fftfreq", n, d, dtype, device, false);
}
Tensor rfftfreq(std::int64_t n, double d, Dtype dtype, Device device) {
  return freq("rfftfreq", n, d, dtype, device, true);
}
Tensor fftshift(const Tensor& x, const Sizes& dims) { return shift("fftshift", x, dims, false); }
Tensor ifftshift(const Tensor& x, const Sizes& dims) { return shift("ifftshift", x, dims, true); }

}  // namespace phasor::fft
