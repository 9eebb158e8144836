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

#include <algorithm>
#include <cmath>

#include "autodiff/node.hpp"
#include "core/device_constants.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "fft/fftw_backend.hpp"
#include "fft/cufft_backend.hpp"
#include "fft/passes.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::fft::detail {

using ::phasor::detail::Ctx;
using ::phasor::detail::device_constant;
using ::phasor::detail::kSaveNone;
using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

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
  const Shape& shape = t.shape();
  const Shape& strides = t.strides();
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (strides[d] == 0 && shape[d] > 1) return true;
  return false;
}

/// Transform dims (logical lengths `n`) and batch dims of in -> out, batch dims merged where
/// their strides allow, size-1 batch dims dropped.
void layout(const Tensor& in, const Tensor& out, const DimList& dims, const DimList& n, IoDims& rank, IoDims& howmany) {
  rank.clear();
  howmany.clear();
  const Shape& is = in.strides();
  const Shape& os = out.strides();
  const Shape& shape = out.shape();
  for (std::size_t i = 0; i < dims.size(); ++i) rank.push_back(IoDim{n[i], is[u(dims[i])], os[u(dims[i])]});
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (shape[u(d)] == 1 || std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    IoDim h{shape[u(d)], is[u(d)], os[u(d)]};
    if (!howmany.empty() && howmany.back().is == h.n * h.is && howmany.back().os == h.n * h.os)
      howmany.back() = IoDim{howmany.back().n * h.n, h.is, h.os};
    else
      howmany.push_back(h);
  }
}

/// Multiplies a fresh tensor by the norm's scale `s` in place (nothing to do for 1).
void scale_inplace(Tensor& t, double s) {
  if (s != 1.0) t.mul_(s);
}

std::int64_t prod(const DimList& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

Tensor as_complex(const Tensor& g) { return g.is_complex() ? g : g.to(to_complex(g.dtype())); }

// ---- pass decomposition (Note [blocked passes], src/fft/passes.cpp) -----------------------------------
std::int64_t outer_of(const Shape& s, std::int64_t d) {
  std::int64_t p = 1;
  for (std::int64_t i = 0; i < d; ++i) p *= s[u(i)];
  return p;
}
std::int64_t inner_of(const Shape& s, std::int64_t d) {
  std::int64_t p = 1;
  for (std::size_t i = u(d) + 1; i < s.size(); ++i) p *= s[i];
  return p;
}

/// Under the estimate effort, a transform along one non-innermost dim (any kind) and a 2-D
/// c2c run as 1-D passes; everything else is one FFTW guru64 call on the caller's strides.
/// Measured here (1 thread, see bench/README_fft.md): passes were 1.1-2.6x faster for such
/// column transforms and 1.5-3.7x for 2-D c2c, but slower than FFTW's own plans for 3-D c2c
/// (611 vs 891 us at 64^3) and for 2-D r2c/c2r (141 vs 252 us at 256^2 float64).
bool use_passes(Kind kind, const Shape& shape, const DimList& dims) {
  if (!effort_is_estimate()) return false;
  if (dims.size() == 1) return inner_of(shape, dims[0]) > 1;
  return kind == Kind::c2c && dims.size() == 2;
}

/// c2c over `dims` as passes: the innermost dim straight from x when x is contiguous, the rest
/// in place in `out` (contiguous).
void c2c_passes(const Tensor& x, const Tensor& out, const DimList& dims, bool forward) {
  const bool single = x.dtype() == Dtype::Complex64;
  const Shape& shape = out.shape();
  const std::int64_t di = *std::max_element(dims.begin(), dims.end());
  bool done_inner = false;
  if (x.is_contiguous() && inner_of(shape, di) == 1) {
    line_pass(Kind::c2c, single, forward, shape[u(di)], outer_of(shape, di), 1, x.data_ptr(), out.data_ptr());
    done_inner = true;
  } else {
    ::phasor::detail::copy_into(out, x);
  }
  for (auto d : dims) {
    if (done_inner && d == di) continue;
    line_pass(Kind::c2c, single, forward, shape[u(d)], outer_of(shape, d), inner_of(shape, d), out.data_ptr(),
              out.data_ptr());
  }
}

/// Plans (through the cache) and runs one FFTW transform of x into out over `dims` (lengths `n`).
void run_plan(Kind kind, bool single, bool forward, const Tensor& x, const Tensor& out, const DimList& dims,
              const DimList& n, bool preserve_input = false) {
  PlanKey key;
  key.kind = kind;
  key.single = single;
  key.forward = forward;
  key.preserve_input = preserve_input;
  layout(x, out, dims, n, key.dims, key.howmany);
  run_fftw(key, x.data_ptr(), out.data_ptr());
}

// ---- forward kernels -----------------------------------------------------------------------------------
Tensor c2c_kernel(const Tensor& x_in, const DimList& dims, bool forward, Norm norm) {
  if (x_in.device().is_cuda() && !dims.empty() && x_in.numel() > 0) return c2c_cuda(x_in, dims, forward, norm);
  ArgRef xa(x_in);
  if (has_broadcast_dim(x_in)) xa.replace(x_in.clone());
  const Tensor& x = xa.get();
  Tensor out = ::phasor::detail::make_tensor(x.shape(), x.dtype(), x.device());
  if (dims.empty()) {
    ::phasor::detail::copy_into(out, x);
    return out;
  }
  if (out.numel() == 0) return out;
  DimList n;
  for (auto d : dims) n.push_back(x.shape()[u(d)]);
  if (use_passes(Kind::c2c, out.shape(), dims)) {
    c2c_passes(x, out, dims, forward);
    scale_inplace(out, norm_scale(norm, prod(n), forward));
    return out;
  }
  run_plan(Kind::c2c, x.dtype() == Dtype::Complex64, forward, x, out, dims, n);
  scale_inplace(out, norm_scale(norm, prod(n), forward));
  return out;
}

Tensor r2c_kernel(const Tensor& x_in, const DimList& dims, Norm norm) {
  if (x_in.device().is_cuda() && x_in.numel() > 0) return r2c_cuda(x_in, dims, norm);
  ArgRef xa(x_in);
  if (has_broadcast_dim(x_in)) xa.replace(x_in.clone());
  const Tensor& x = xa.get();
  Shape shape = x.shape();
  const std::int64_t n_last = shape[u(dims.back())];
  shape[u(dims.back())] = n_last / 2 + 1;
  Tensor out = ::phasor::detail::make_tensor(shape, to_complex(x.dtype()), x.device());
  if (out.numel() == 0) return out;
  DimList n;
  for (auto d : dims) n.push_back(x.shape()[u(d)]);
  if (use_passes(Kind::r2c, out.shape(), dims)) {
    const bool single = x.dtype() == Dtype::Float32;
    const std::int64_t L = dims.back();
    const Tensor xs = x.is_contiguous() ? x : x.clone();
    line_pass(Kind::r2c, single, true, n_last, outer_of(shape, L), inner_of(shape, L), xs.data_ptr(), out.data_ptr());
    for (std::size_t i = 0; i + 1 < dims.size(); ++i)
      line_pass(Kind::c2c, single, true, shape[u(dims[i])], outer_of(shape, dims[i]), inner_of(shape, dims[i]),
                out.data_ptr(), out.data_ptr());
    scale_inplace(out, norm_scale(norm, prod(n), true));
    return out;
  }
  run_plan(Kind::r2c, x.dtype() == Dtype::Float32, true, x, out, dims, n);
  scale_inplace(out, norm_scale(norm, prod(n), true));
  return out;
}

// Note [c2r scratch input]
// FFTW's multi-dimensional c2r always overwrites its input, and cuFFT's c2r may (any rank), so
// they work on a copy. When the front end built the input itself for this one call (a
// zero-padded or conjugated copy, the weighted gradient in r2c's backward), the copy is skipped
// (on the CPU and on CUDA devices) if the tensor still owns its
// storage alone (no views), came from the caching allocator and has no broadcast dims. No
// backward saves c2r's input (kSaveNone), so nothing observes the overwritten values.
bool reusable_scratch(const Tensor& x) {
  const auto& st = x.impl()->storage;
  return st.use_count() == 1 && !st->deleter && !has_broadcast_dim(x);
}

Tensor c2r_kernel(const Tensor& x_in, const DimList& dims, Norm norm, std::int64_t last_n, bool x_is_scratch) {
  if (x_in.device().is_cuda() && x_in.numel() > 0)
    return c2r_cuda(x_in, dims, norm, last_n, x_is_scratch && reusable_scratch(x_in));
  Shape shape = x_in.shape();
  const std::int64_t L = dims.back();
  shape[u(L)] = last_n;
  Tensor out = ::phasor::detail::make_tensor(shape, to_real(x_in.dtype()), x_in.device());
  if (out.numel() == 0) return out;
  const bool single = x_in.dtype() == Dtype::Complex64;
  DimList n;
  for (auto d : dims) n.push_back(shape[u(d)]);
  if (dims.size() == 1) {
    // Rank 1: input-preserving FFTW plans (measured faster here than copy + destroy) and the
    // blocked passes only read the input, so no copy is needed.
    ArgRef xa(x_in);
    if (has_broadcast_dim(x_in)) xa.replace(x_in.clone());
    if (use_passes(Kind::c2r, shape, dims)) {
      if (!xa.get().is_contiguous()) xa.replace(xa.get().clone());
      line_pass(Kind::c2r, single, false, last_n, outer_of(shape, L), inner_of(shape, L), xa.get().data_ptr(),
                out.data_ptr());
    } else {
      run_plan(Kind::c2r, single, false, xa.get(), out, dims, n, /*preserve_input=*/true);
    }
  } else {
    // FFTW has no input-preserving multi-dimensional c2r: it works on a copy (or the scratch).
    const Tensor tmp = x_is_scratch && reusable_scratch(x_in) ? x_in : x_in.clone();
    run_plan(Kind::c2r, single, false, tmp, out, dims, n);
  }
  scale_inplace(out, norm_scale(norm, prod(n), false));
  return out;
}

// Note [no-grad fast path]
// A transform of 256 points takes FFTW ~0.2 us, so per-call overhead matters. When nothing
// records (grad mode off or the input needs no gradient) and no observer listens, apply_op
// would only build its input/output lists and guards around the kernel, so the kernel runs
// directly; otherwise the call goes through apply_op as usual, with the gradient below.
/// `kernel` (x -> out) becomes the forward: it holds what it needs by value (Note [replayable forwards]).
template <class Kernel, class Backward>
Tensor primitive(const char* name, const Tensor& x, Kernel kernel, Backward&& backward) {
  if (::phasor::detail::g_num_observers.load(std::memory_order_relaxed) == 0 &&
      !(x.requires_grad() && GradMode::is_enabled()))
    return kernel(x);
  return ::phasor::detail::apply_op(
      name, {x}, kSaveNone, [kernel = std::move(kernel)](In in) { return kernel(in[0]); },
      std::forward<Backward>(backward));
}

}  // namespace

Tensor half_weights(std::int64_t n, std::int64_t dim, std::int64_t ndim, Dtype real_dtype, double interior,
                    Device device) {
  const auto key = std::make_tuple(n, dim, ndim, real_dtype, interior);
  return device_constant(device, "fft half_weights", key, [&] {  // Note [device constants]
    const std::int64_t m = n / 2 + 1;
    std::vector<double> w(u(m), interior);
    w[0] = 1.0;
    if (n % 2 == 0) w[u(m - 1)] = 1.0;
    Shape shape(u(ndim), 1);
    shape[u(dim)] = m;
    return from_vector(w, shape).to(real_dtype);
  });
}

// ---- the primitives (Note [fft gradients]) ---------------------------------------------------------------
Tensor c2c(const Tensor& x, const DimList& dims, bool forward, Norm norm) {
  return primitive(
      "fft_c2c", x, [dims, forward, norm](const Tensor& in) { return c2c_kernel(in, dims, forward, norm); },
      [dims, forward, norm](const Ctx&, const G& g) {
        return G{c2c(as_complex(g[0]), dims, !forward, swap_norm(norm))};
      });
}

Tensor r2c(const Tensor& x, const DimList& dims, Norm norm) {
  const std::int64_t n_last = x.size(dims.back()), ndim = x.dim();
  return primitive(
      "fft_r2c", x, [dims, norm](const Tensor& in) { return r2c_kernel(in, dims, norm); },
      [dims, norm, n_last, ndim](const Ctx&, const G& g) {
        Tensor gc = as_complex(g[0]);
        Tensor w = half_weights(n_last, dims.back(), ndim, to_real(gc.dtype()), 0.5, gc.device());
        return G{c2r(gc * w, dims, swap_norm(norm), n_last, /*x_is_scratch=*/true)};
      });
}

Tensor c2r(const Tensor& x, const DimList& dims, Norm norm, std::int64_t last_n, bool x_is_scratch) {
  const std::int64_t ndim = x.dim();
  return primitive(
      "fft_c2r", x,
      [dims, norm, last_n, x_is_scratch](const Tensor& in) { return c2r_kernel(in, dims, norm, last_n, x_is_scratch); },
      [dims, norm, last_n, ndim](const Ctx&, const G& g) {
        Tensor gr = g[0].is_complex() ? g[0].real() : g[0];
        Tensor w = half_weights(last_n, dims.back(), ndim, gr.dtype(), 2.0, gr.device());
        return G{r2c(gr, dims, swap_norm(norm)) * w};
      });
}

// ---- the fast path --------------------------------------------------------------------------------------
// Note [fft fast path]
// The most common call - fft/ifft/rfft/irfft over the innermost dim of a contiguous CPU tensor
// with the default length, nothing recording and no observer - skips the general lowering (no
// argument lists, no resize, no apply_op) and makes its output directly. Its plan comes from a
// per-thread memo of the last such problem, keyed by everything the plan depends on for this
// layout: kind, precision, direction, length, batch count, both arrays' offsets modulo 64 bytes
// (which fix FFTW's alignment classes), planner flags, thread count, and the plan cache's
// generation (bumped by clear_plan_cache and set_plan_cache_capacity, 0 while the capacity is 0,
// when nothing is remembered). On a miss the plan comes from the shared cache exactly as on the
// general path (same PlanKey, built by layout()), so both paths run the same plan.
namespace {
struct FastKey {
  // Packed into words built in registers: a field-by-field key stored bytes and ints that the
  // comparison then reloaded as wider words, a store-forwarding stall that cost a tenth of the call.
  std::uint64_t n = 0, batch = 0, generation = 0, rest = 0;
  bool operator==(const FastKey& o) const {
    return n == o.n && batch == o.batch && generation == o.generation && rest == o.rest;
  }
};
struct FastMemo {
  FastKey key;
  PlanPtr plan;
};
// The memo is reached through an initial-exec TLS pointer (no __tls_get_addr call from a shared
// library); a thread_local owner holds it and drops the plan when the thread exits.
__attribute__((tls_model("initial-exec"))) thread_local FastMemo* t_memo = nullptr;
struct FastMemoOwner {
  FastMemo memo;
  FastMemoOwner() { t_memo = &memo; }
  ~FastMemoOwner() { t_memo = nullptr; }
};
[[gnu::noinline]] FastMemo* make_fast_memo() {
  thread_local FastMemoOwner owner;
  return t_memo;
}
std::uint8_t offset64(const void* p) { return static_cast<std::uint8_t>(reinterpret_cast<std::uintptr_t>(p) % 64); }

/// The fast path's memo miss (kept out of line so the hit path stays small): takes the plan from
/// the shared cache exactly as the general path does, remembers it, and executes it.
[[gnu::noinline]] void fast_plan_and_execute(Kind kind, bool single, bool fwd, const Tensor& x, const Tensor& out,
                                             std::int64_t len, int threads, const FastKey& k, void* in_p,
                                             void* out_p) {
  PlanKey key;
  key.kind = kind;
  key.single = single;
  key.forward = fwd;
  key.preserve_input = kind == Kind::c2r;  // rank 1: input-preserving, as c2r_kernel
  const DimList dims{x.dim() - 1};
  layout(x, out, dims, DimList{len}, key.dims, key.howmany);
  PlanPtr keep;
  const Plan* plan = acquire_plan(key, in_p, out_p, keep, threads, /*share=*/true);
  FastMemo* memo = t_memo ? t_memo : make_fast_memo();
  if (k.generation != 0 && keep && memo) {
    memo->key = k;
    memo->plan = keep;
  }
  execute_plan(plan, kind, in_p, out_p);  // `keep` outlives the execution
}
}  // namespace

Tensor fast_1d(Kind kind, const Tensor& x, const Length& n, std::int64_t dim, Norm norm, bool forward) {
  const TensorImpl* xi = x.impl();
  if (!xi || ::phasor::detail::g_num_observers.load(std::memory_order_relaxed) != 0) return Tensor();
  if (xi->requires_grad() && GradMode::is_enabled()) return Tensor();
  const Dtype dt = xi->dtype;
  const bool single = dt == Dtype::Complex64 || dt == Dtype::Float32;
  if (kind == Kind::r2c ? !(dt == Dtype::Float32 || dt == Dtype::Float64)
                        : !(dt == Dtype::Complex64 || dt == Dtype::Complex128))
    return Tensor();
  const std::size_t nd = xi->shape.size();
  if (nd == 0 || nd > 8 || (dim != -1 && dim != static_cast<std::int64_t>(nd) - 1) || !xi->storage->device.is_cpu())
    return Tensor();
  // contiguous, no empty dims
  const std::int64_t* shape = xi->shape.data();
  const std::int64_t* strides = xi->strides.data();
  const std::int64_t m = shape[nd - 1];
  if (m < 1 || (m != 1 && strides[nd - 1] != 1)) return Tensor();
  std::int64_t batch = 1;  // the product of the other dims
#pragma GCC unroll 1
  for (std::size_t i = nd - 1; i-- > 0;) {
    const std::int64_t s = shape[i];
    if (s < 1 || (s != 1 && strides[i] != batch * m)) return Tensor();
    batch *= s;
  }
  std::int64_t len = m;  // the transform's (real) length
  if (kind == Kind::c2r) {
    len = n ? *n : 2 * (m - 1);
    if (len < 1 || len / 2 + 1 != m) return Tensor();
  } else if (n && *n != m) {
    return Tensor();
  }
  const bool fwd = kind == Kind::c2c ? forward : kind == Kind::r2c;
  std::int64_t sizes[8];  // the output's shape (c2c: the input's)
  if (kind != Kind::c2c) {
    for (std::size_t i = 0; i + 1 < nd; ++i) sizes[i] = shape[i];
    sizes[nd - 1] = kind == Kind::r2c ? m / 2 + 1 : len;
  }
  const Dtype out_dt = kind == Kind::r2c ? to_complex(dt) : kind == Kind::c2r ? to_real(dt) : dt;
  Tensor out = ::phasor::detail::make_tensor(kind == Kind::c2c ? shape : sizes, nd, out_dt, xi->storage->device);
  const std::int64_t in_item = (single ? 4 : 8) * (kind == Kind::r2c ? 1 : 2);
  void* in_p = static_cast<char*>(xi->storage->data) + xi->offset * in_item;
  void* out_p = out.impl()->storage->data;  // fresh: offset 0

  const int threads = fftw_threads_for(len * batch);
  FastKey k;
  k.n = static_cast<std::uint64_t>(len);
  k.batch = static_cast<std::uint64_t>(batch);
  k.generation = plan_generation();
  k.rest = static_cast<std::uint64_t>(g_effort.load(std::memory_order_relaxed)) | static_cast<std::uint64_t>(kind) << 4 |
           std::uint64_t{single} << 6 | std::uint64_t{fwd} << 7 | std::uint64_t{offset64(in_p)} << 8 |
           std::uint64_t{offset64(out_p)} << 16 | static_cast<std::uint64_t>(threads) << 24;
  FastMemo* memo = t_memo;
  if (k.generation != 0 && memo && memo->plan && memo->key == k) {
    execute_plan(memo->plan.get(), kind, in_p, out_p);
  } else {
    fast_plan_and_execute(kind, single, fwd, x, out, len, threads, k, in_p, out_p);
  }
  if (norm != Norm::backward || !fwd) scale_inplace(out, norm_scale(norm, len, fwd));
  return out;
}

// ---- pad/crop ---------------------------------------------------------------------------------------
Tensor resize(const Tensor& x, const DimList& dims, const DimList& sizes, bool* padded) {
  if (padded) *padded = false;
  Tensor y = x;
  bool grow = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (sizes[i] < y.size(dims[i]))
      y = y.narrow(dims[i], 0, sizes[i]);
    else if (sizes[i] > y.size(dims[i]))
      grow = true;
  }
  if (!grow) return y;
  if (padded) *padded = true;
  // zero-pad at the end of each growing dim: pad's list runs from the last dim backwards
  std::int64_t first = y.dim();
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (sizes[i] > y.size(dims[i])) first = std::min(first, dims[i]);
  Shape p(static_cast<std::size_t>(2 * (y.dim() - first)), 0);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (sizes[i] > y.size(dims[i])) p[u(2 * (y.dim() - 1 - dims[i]) + 1)] = sizes[i] - y.size(dims[i]);
  return ::phasor::pad(y, p);
}

}  // namespace phasor::fft::detail
