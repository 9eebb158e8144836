// src/fft/primitives.cpp - c2c, r2c and c2r: forward kernels (FFTW through the plan cache)
// and their gradients, written with public ops and the primitives themselves so that
// gradients of gradients work. Also the pad/crop and roll helpers of the front end.
//
// Note [fft gradients]
// Let s be the scale a primitive applies (norm_scale) and F/B the unnormalized forward/
// backward DFTs over its dims. With the dL/dz* convention (PyTorch's):
//  - c2c:  y = s F x           =>  grad_x = s B g  = c2c(g, opposite direction, swap_norm(norm)),
//          since swap_norm gives the opposite direction the same scale s.
//  - r2c:  y = s (F x)[half]   =>  grad_x_j = s Re sum_{k in half} g_k e^{+2 pi i jk/n}.
//          c2r evaluates Re Y_0 + 2 sum_{interior k} Re(Y_k e^{..}) + Re(Y_{n/2} (-1)^j), so
//          grad_x = c2r(g * w, swap_norm(norm)) with w = 1/2 on interior bins and 1 on the DC
//          bin and (n even) the Nyquist bin.
//  - c2r:  y_j = s [Re X_0 + 2 sum_{interior k} Re(X_k e^{+..}) + Re(X_{n/2}) (-1)^j] (after a
//          backward c2c over the other dims for n-D)  =>  grad_X = r2c(g, swap_norm(norm)) * w
//          with w = 2 on interior bins and 1 on DC/Nyquist; the imaginary parts of DC/Nyquist
//          get zero gradient because c2r ignores them. For n-D the c2c over the other dims
//          commutes with the weighting along the halved dim.
// The weights only touch the halved (last) dim; odd lengths have no Nyquist bin.
#include "fft/primitives.hpp"

#include <omp.h>

#include <cmath>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "fft/fftw_backend.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::fft::detail {

using ::phasor::detail::Ctx;
using ::phasor::detail::kSaveNone;
using G = std::vector<Tensor>;

double norm_scale(Norm norm, std::int64_t n, bool forward) {
  switch (norm) {
    case Norm::ortho: return 1.0 / std::sqrt(static_cast<double>(n));
    case Norm::backward: return forward ? 1.0 : 1.0 / static_cast<double>(n);
    case Norm::forward: return forward ? 1.0 / static_cast<double>(n) : 1.0;
  }
  return 1.0;
}

Norm swap_norm(Norm norm) {
  return norm == Norm::backward ? Norm::forward : norm == Norm::forward ? Norm::backward : Norm::ortho;
}

namespace {

std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

/// True if some dim of size > 1 has stride 0 (an expanded view): FFTW gets a compact copy.
bool has_broadcast_dim(const Tensor& t) {
  for (std::int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  return false;
}

Tensor fresh_copy(const Tensor& t) {
  Tensor c = ::phasor::detail::make_tensor(t.shape(), t.dtype(), t.device());
  ::phasor::detail::copy_into(c, t);
  return c;
}

/// Transform dims (logical lengths `n`) and batch dims of in -> out, batch dims merged where
/// their strides allow, size-1 batch dims dropped.
void layout(const Tensor& in, const Tensor& out, const std::vector<std::int64_t>& dims,
            const std::vector<std::int64_t>& n, std::vector<IoDim>& rank, std::vector<IoDim>& howmany) {
  rank.clear();
  howmany.clear();
  std::vector<bool> is_dim(u(out.dim()), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    rank.push_back(IoDim{n[i], in.stride(dims[i]), out.stride(dims[i])});
    is_dim[u(dims[i])] = true;
  }
  for (std::int64_t d = 0; d < out.dim(); ++d) {
    if (is_dim[u(d)] || out.size(d) == 1) continue;
    IoDim h{out.size(d), in.stride(d), out.stride(d)};
    if (!howmany.empty() && howmany.back().is == h.n * h.is && howmany.back().os == h.n * h.os)
      howmany.back() = IoDim{howmany.back().n * h.n, h.is, h.os};
    else
      howmany.push_back(h);
  }
}

/// Multiplies a fresh contiguous tensor by `s` in place.
void scale_inplace(const Tensor& t, double s) {
  if (s == 1.0 || t.numel() == 0) return;
  const std::int64_t count = t.numel() * (t.is_complex() ? 2 : 1);
  auto run = [&](auto* p) {
    using R = std::remove_pointer_t<decltype(p)>;
    const int threads = count >= (std::int64_t(1) << 18) ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (std::int64_t i = 0; i < count; ++i) p[i] = static_cast<R>(static_cast<double>(p[i]) * s);
  };
  if (to_real(t.dtype()) == Dtype::Float32) run(static_cast<float*>(t.data_ptr()));
  else run(static_cast<double*>(t.data_ptr()));
}

std::int64_t prod(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

Tensor as_complex(const Tensor& g) { return g.is_complex() ? g : g.to(to_complex(g.dtype())); }

/// Weights along the halved dim `dim` of an `ndim`-dim tensor whose full length is `n`:
/// `interior` on the bins 1..ceil(n/2)-1, 1 on the DC and (n even) Nyquist bins.
Tensor half_weights(std::int64_t n, std::int64_t dim, std::int64_t ndim, Dtype real_dtype, double interior) {
  const std::int64_t m = n / 2 + 1;
  std::vector<double> w(u(m), interior);
  w[0] = 1.0;
  if (n % 2 == 0) w[u(m - 1)] = 1.0;
  Shape shape(u(ndim), 1);
  shape[u(dim)] = m;
  return from_vector(w, shape).to(real_dtype);
}

// ---- forward kernels -----------------------------------------------------------------------------------
Tensor c2c_kernel(Tensor x, const std::vector<std::int64_t>& dims, bool forward, Norm norm) {
  Tensor out = ::phasor::detail::make_tensor(x.shape(), x.dtype(), x.device());
  if (dims.empty()) {
    ::phasor::detail::copy_into(out, x);
    return out;
  }
  if (out.numel() == 0) return out;
  if (has_broadcast_dim(x)) x = fresh_copy(x);
  std::vector<std::int64_t> n;
  for (auto d : dims) n.push_back(x.size(d));
  std::vector<IoDim> rank, howmany;
  layout(x, out, dims, n, rank, howmany);
  run_fftw(Kind::c2c, x.dtype() == Dtype::Complex64, forward, rank, howmany, x.data_ptr(), out.data_ptr());
  scale_inplace(out, norm_scale(norm, prod(n), forward));
  return out;
}

Tensor r2c_kernel(Tensor x, const std::vector<std::int64_t>& dims, Norm norm) {
  Shape shape = x.shape();
  const std::int64_t n_last = shape[u(dims.back())];
  shape[u(dims.back())] = n_last / 2 + 1;
  Tensor out = ::phasor::detail::make_tensor(shape, to_complex(x.dtype()), x.device());
  if (out.numel() == 0) return out;
  if (has_broadcast_dim(x)) x = fresh_copy(x);
  std::vector<std::int64_t> n;
  for (auto d : dims) n.push_back(x.size(d));
  std::vector<IoDim> rank, howmany;
  layout(x, out, dims, n, rank, howmany);
  run_fftw(Kind::r2c, x.dtype() == Dtype::Float32, true, rank, howmany, x.data_ptr(), out.data_ptr());
  scale_inplace(out, norm_scale(norm, prod(n), true));
  return out;
}

Tensor c2r_kernel(const Tensor& x, const std::vector<std::int64_t>& dims, Norm norm, std::int64_t last_n) {
  Shape shape = x.shape();
  shape[u(dims.back())] = last_n;
  Tensor out = ::phasor::detail::make_tensor(shape, to_real(x.dtype()), x.device());
  if (out.numel() == 0) return out;
  Tensor tmp = fresh_copy(x);  // FFTW's c2r overwrites its input
  std::vector<std::int64_t> n;
  for (auto d : dims) n.push_back(out.size(d));
  std::vector<IoDim> rank, howmany;
  layout(tmp, out, dims, n, rank, howmany);
  run_fftw(Kind::c2r, x.dtype() == Dtype::Complex64, false, rank, howmany, tmp.data_ptr(), out.data_ptr());
  scale_inplace(out, norm_scale(norm, prod(n), false));
  return out;
}

}  // namespace

// ---- the primitives (Note [fft gradients]) ---------------------------------------------------------------
Tensor c2c(const Tensor& x, const std::vector<std::int64_t>& dims, bool forward, Norm norm) {
  return ::phasor::detail::apply_op(
      "fft_c2c", {x}, kSaveNone, [&](const G& in) { return c2c_kernel(in[0], dims, forward, norm); },
      [dims, forward, norm](const Ctx&, const G& g) {
        return G{c2c(as_complex(g[0]), dims, !forward, swap_norm(norm))};
      });
}

Tensor r2c(const Tensor& x, const std::vector<std::int64_t>& dims, Norm norm) {
  const std::int64_t n_last = x.size(dims.back()), ndim = x.dim();
  return ::phasor::detail::apply_op(
      "fft_r2c", {x}, kSaveNone, [&](const G& in) { return r2c_kernel(in[0], dims, norm); },
      [dims, norm, n_last, ndim](const Ctx&, const G& g) {
        Tensor gc = as_complex(g[0]);
        Tensor w = half_weights(n_last, dims.back(), ndim, to_real(gc.dtype()), 0.5);
        return G{c2r(gc * w, dims, swap_norm(norm), n_last)};
      });
}

Tensor c2r(const Tensor& x, const std::vector<std::int64_t>& dims, Norm norm, std::int64_t last_n) {
  const std::int64_t ndim = x.dim();
  return ::phasor::detail::apply_op(
      "fft_c2r", {x}, kSaveNone, [&](const G& in) { return c2r_kernel(in[0], dims, norm, last_n); },
      [dims, norm, last_n, ndim](const Ctx&, const G& g) {
        Tensor gr = g[0].is_complex() ? g[0].real() : g[0];
        Tensor w = half_weights(last_n, dims.back(), ndim, gr.dtype(), 2.0);
        return G{r2c(gr, dims, swap_norm(norm)) * w};
      });
}

// ---- pad/crop and roll ---------------------------------------------------------------------------------------
Tensor resize(const Tensor& x, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& sizes) {
  Tensor y = x;
  bool grow = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (sizes[i] < y.size(dims[i])) y = y.narrow(dims[i], 0, sizes[i]);
    else if (sizes[i] > y.size(dims[i])) grow = true;
  }
  if (!grow) return y;
  const Shape orig = y.shape();
  Shape target = orig;
  for (std::size_t i = 0; i < dims.size(); ++i) target[u(dims[i])] = sizes[i];
  return ::phasor::detail::apply_op(
      "fft_pad", {y}, kSaveNone,
      [&](const G& in) {
        Tensor z = zeros(target, in[0].dtype(), in[0].device());
        Tensor v = z;
        for (std::int64_t d = 0; d < z.dim(); ++d)
          if (orig[u(d)] != target[u(d)]) v = v.narrow(d, 0, orig[u(d)]);
        ::phasor::detail::copy_into(v, in[0]);
        return z;
      },
      [orig, target](const Ctx&, const G& g) {
        Tensor r = g[0];
        for (std::int64_t d = 0; d < r.dim(); ++d)
          if (orig[u(d)] != target[u(d)]) r = r.narrow(d, 0, orig[u(d)]);
        return G{r};
      });
}

Tensor roll(const Tensor& x, const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& shifts) {
  std::vector<std::int64_t> rd, rs;  // dims that actually move, shifts in [1, n)
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t n = x.size(dims[i]);
    if (n == 0) continue;
    const std::int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0) {
      rd.push_back(dims[i]);
      rs.push_back(s);
    }
  }
  if (rd.empty()) return x.clone();
  return ::phasor::detail::apply_op(
      "fft_roll", {x}, kSaveNone,
      [&](const G& in) {
        const Tensor& src = in[0];
        Tensor out = ::phasor::detail::make_tensor(src.shape(), src.dtype(), src.device());
        if (out.numel() == 0) return out;
        // 2^k blocks: along each dim, [0, n-s) goes to [s, n) and [n-s, n) to [0, s).
        for (std::size_t mask = 0; mask < (std::size_t(1) << rd.size()); ++mask) {
          Tensor a = src, b = out;
          for (std::size_t j = 0; j < rd.size(); ++j) {
            const std::int64_t n = src.size(rd[j]), s = rs[j];
            if (mask & (std::size_t(1) << j)) {
              a = a.narrow(rd[j], n - s, s);
              b = b.narrow(rd[j], 0, s);
            } else {
              a = a.narrow(rd[j], 0, n - s);
              b = b.narrow(rd[j], s, n - s);
            }
          }
          ::phasor::detail::copy_into(b, a);
        }
        return out;
      },
      [rd, rs](const Ctx&, const G& g) {
        std::vector<std::int64_t> neg(rs.size());
        for (std::size_t i = 0; i < rs.size(); ++i) neg[i] = -rs[i];
        return G{::phasor::fft::detail::roll(g[0], rd, neg)};
      });
}

}  // namespace phasor::fft::detail
