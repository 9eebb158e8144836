// src/nn/conv_kernels.cpp - the N-d im2col (unfold) and col2im (fold) primitives.
//
// Note [unfold layout]
// unfold maps x (N, C, *in) to columns (N, C*K, L), K = prod(kernel), L = prod(out): row
// c*K + kidx (kidx = kernel position, row-major) holds, at column o (output position, row-major),
// x[n, c, o*stride + kidx*dilation - pad_lo] (per dim), or zero where that falls outside the input.
// This is torch.nn.functional.unfold's layout, and the form a convolution needs: w (O, C*K) @ cols.
// fold is its adjoint: it adds every column entry back onto the input position it was read from.
// Each is the other's gradient, so gradients of any order stay within these two primitives.
//
// Kernels: one output row (a fixed (n, c, kidx)) is a set of runs along the last spatial dim;
// for each run, the valid output range [lo, hi) is computed once, the rest is zero-filled, and
// with stride 1 the valid part is one contiguous copy. unfold is parallel over rows, fold over
// (n, c) planes (each thread owns its planes, so the accumulation has no races).
#include "nn/conv_kernels.hpp"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "autodiff/node.hpp"
#include "core/device_constants.hpp"
#include "core/elementwise.hpp"
#include "cuda/nn_ops.hpp"
#include "linalg/blas.hpp"
#include "linalg/cublas_gemm.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor::detail {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

std::int64_t ConvGeometry::kernel_numel() const { return shape_numel(kernel.data(), kernel.size()); }
std::int64_t ConvGeometry::out_numel() const { return shape_numel(out.data(), out.size()); }
std::int64_t ConvGeometry::in_numel() const { return shape_numel(in.data(), in.size()); }

namespace {

/// Valid output range [lo, hi) along one dim: 0 <= o*s + off < n.
inline void valid_range(std::int64_t off, std::int64_t s, std::int64_t n, std::int64_t out, std::int64_t& lo,
                        std::int64_t& hi) {
  // smallest o with o*s + off >= 0
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  // largest o with o*s + off <= n - 1, plus one
  hi = (n - 1 - off) < 0 ? 0 : (n - 1 - off) / s + 1;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

/// Per kernel position: the offset of the kernel tap per dim and the valid output ranges.
struct Tap {
  std::vector<std::int64_t> off, lo, hi;
};

std::vector<Tap> make_taps(const ConvGeometry& g) {
  const auto D = g.in.size();
  const std::int64_t K = g.kernel_numel();
  std::vector<Tap> taps(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) {
    Tap& t = taps[static_cast<std::size_t>(k)];
    t.off.resize(D);
    t.lo.resize(D);
    t.hi.resize(D);
    std::int64_t rem = k;
    for (std::size_t d = D; d-- > 0;) {
      const std::int64_t kd = rem % g.kernel[d];
      rem /= g.kernel[d];
      t.off[d] = kd * g.dilation[d] - g.pad_lo[d];
      valid_range(t.off[d], g.stride[d], g.in[d], g.out[d], t.lo[d], t.hi[d]);
    }
  }
  return taps;
}

/// Calls f(q, inside, base) for every run q (outer output position) of a tap: base is the input
/// offset of the run's output position 0 along the last dim (may be negative: only positions in
/// [lo, hi) are read); inside is false when the run lies outside the input in an outer dim.
template <class F>
inline void for_each_run(const ConvGeometry& g, const Tap& t, const Shape& in_strides, F&& f) {
  const auto D = g.in.size();
  const std::int64_t runs = g.out_numel() / std::max<std::int64_t>(g.out[D - 1], 1);
  for (std::int64_t q = 0; q < runs; ++q) {
    std::int64_t rem = q, base = t.off[D - 1];
    bool inside = true;
    for (std::size_t d = D - 1; d-- > 0;) {
      const std::int64_t o = rem % g.out[d];
      rem /= g.out[d];
      if (o < t.lo[d] || o >= t.hi[d]) {
        inside = false;
        break;
      }
      base += (o * g.stride[d] + t.off[d]) * in_strides[d];
    }
    f(q, inside, base);
  }
}

int threads_for(std::int64_t parts, std::int64_t work) {
  if (parts < 2 || work < 2 * kParallelGrain) return 1;
  return static_cast<int>(std::min<std::int64_t>({get_num_threads(), parts, work / kParallelGrain}));
}

template <class T>
void unfold_kernel(const T* x, T* cols, std::int64_t NC, const ConvGeometry& g, bool parallel = true) {
  const auto D = g.in.size();
  const std::int64_t K = g.kernel_numel(), L = g.out_numel(), P = g.in_numel();
  const std::int64_t W = g.out[D - 1], s = g.stride[D - 1];
  const Shape in_strides = contiguous_strides(g.in.to_vector());
  const std::vector<Tap> taps = make_taps(g);
  const std::int64_t rows = NC * K;
  const int threads = parallel ? threads_for(rows, rows * L) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* src = x + (r / K) * P;
    T* dst = cols + r * L;
    const Tap& t = taps[static_cast<std::size_t>(r % K)];
    const std::int64_t lo = t.lo[D - 1], hi = t.hi[D - 1];
    for_each_run(g, t, in_strides, [&](std::int64_t q, bool inside, std::int64_t base) {
      T* d = dst + q * W;
      if (!inside || lo >= hi) {
        std::fill(d, d + W, T(0));
        return;
      }
      std::fill(d, d + lo, T(0));
      const T* sp = src + (base + lo * s);  // first valid tap (base alone may point before the plane)
      if (s == 1) {
        std::memcpy(static_cast<void*>(d + lo), sp, static_cast<std::size_t>(hi - lo) * sizeof(T));
      } else {
        for (std::int64_t o = lo; o < hi; ++o) d[o] = sp[(o - lo) * s];
      }
      std::fill(d + hi, d + W, T(0));
    });
  }
}

template <class T>
void fold_kernel(const T* cols, T* y, std::int64_t NC, const ConvGeometry& g, bool parallel = true) {
  const auto D = g.in.size();
  const std::int64_t K = g.kernel_numel(), L = g.out_numel(), P = g.in_numel();
  const std::int64_t W = g.out[D - 1], s = g.stride[D - 1];
  const Shape in_strides = contiguous_strides(g.in.to_vector());
  const std::vector<Tap> taps = make_taps(g);
  const int threads = parallel ? threads_for(NC, NC * K * L) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t nc = 0; nc < NC; ++nc) {
    T* plane = y + nc * P;
    std::fill(plane, plane + P, T(0));
    for (std::int64_t k = 0; k < K; ++k) {
      const T* row = cols + (nc * K + k) * L;
      const Tap& t = taps[static_cast<std::size_t>(k)];
      const std::int64_t lo = t.lo[D - 1], hi = t.hi[D - 1];
      if (lo >= hi) continue;
      for_each_run(g, t, in_strides, [&](std::int64_t q, bool inside, std::int64_t base) {
        if (!inside) return;
        const T* rp = row + q * W + lo;
        T* dp = plane + (base + lo * s);
        const std::int64_t n = hi - lo;
        if (s == 1) {
          for (std::int64_t o = 0; o < n; ++o) dp[o] += rp[o];
        } else {
          for (std::int64_t o = 0; o < n; ++o) dp[o * s] += rp[o];
        }
      });
    }
  }
}

template <class F>
void visit_float(Dtype dt, const char* op, F&& f) {
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>)
      throw Error(op, std::string("expected a floating or complex tensor, got ") + dtype_name(dt));
    else
      f(tag);
  });
}

}  // namespace

Tensor unfold_forward(const Tensor& x, const ConvGeometry& g) {
  const Tensor xc = x.contiguous();
  const std::int64_t N = x.size(0), C = x.size(1), K = g.kernel_numel(), L = g.out_numel();
  Tensor cols = make_tensor({N, C * K, L}, x.dtype(), x.device());
  if (cols.numel() == 0) return cols;
  visit_float(x.dtype(), "unfold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    unfold_kernel<T>(static_cast<const T*>(xc.data_ptr()), static_cast<T*>(cols.data_ptr()), N * C, g);
  });
  return cols;
}

/// Writes fold(cols) into the contiguous tensor y (N, C, *in).
void fold_into(const Tensor& cols, const ConvGeometry& g, const Tensor& y) {
  if (y.numel() == 0) return;
  const Tensor cc = cols.contiguous();
  visit_float(cols.dtype(), "fold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    fold_kernel<T>(static_cast<const T*>(cc.data_ptr()), static_cast<T*>(y.data_ptr()), y.size(0) * y.size(1), g);
  });
}

Tensor fold_forward(const Tensor& cols, const ConvGeometry& g) {
  const std::int64_t N = cols.size(0), K = g.kernel_numel(), C = cols.size(1) / K;
  Shape ys{N, C};
  ys.insert(ys.end(), g.in.begin(), g.in.end());
  Tensor y = make_tensor(ys, cols.dtype(), cols.device());
  fold_into(cols, g, y);
  return y;
}

Tensor unfold_op(const Tensor& x, const ConvGeometry& g) {
  return apply_op(
      "unfold", {x}, kSaveNone,
      [g](In in) {
        return in[0].device().is_cuda() ? ::phasor::cuda::detail::unfold(in[0], g, "unfold") : unfold_forward(in[0], g);
      },
      [g](const Ctx&, const G& gr) { return G{fold_op(gr[0], g)}; });
}

Tensor fold_op(const Tensor& cols, const ConvGeometry& g) {
  return apply_op(
      "fold", {cols}, kSaveNone,
      [g](In in) { return in[0].device().is_cuda() ? ::phasor::cuda::detail::fold(in[0], g, "fold") : fold_forward(in[0], g); },
      [g](const Ctx&, const G& gr) { return G{unfold_op(gr[0], g)}; });
}


// ---- convolution primitives -----------------------------------------------------------------------
//
// Note [convolution primitives]
// A convolution with zero padding is out_n = W U(x_n) (W = weight as (O, C*K) per group, U = unfold).
// Three bilinear maps (no conjugation) close under differentiation:
//   conv(x, w)          = W U(x_n)                 (N, O, L)
//   conv_input(g, w)    = fold(W^T g_n)            (N, C, *in)    adjoint of conv in x
//   conv_weight(x, g)   = sum_n g_n U(x_n)^T       (O, C/groups, *k)  adjoint of conv in w
// With the dL/dz* convention the gradient of a map that is linear in an argument is its adjoint
// (conjugate transpose) applied to the cotangent, which gives
//   conv:        dx = conv_input(G, w*),  dw = conv_weight(x*, G)
//   conv_input:  dg = conv(H, w*),        dw = conv_weight(H, g*)
//   conv_weight: dx = conv_input(g*, H),  dg = conv(x*, H)
// so gradients of every order stay within the three. Their kernels walk the batch in chunks whose
// columns U(x_chunk) fit in cache (kChunkBytes), so the (N, C*K, L) column matrix of the whole
// batch is never materialized or saved: a chunk is unfolded, multiplied and dropped while hot.
// A 1x1 kernel with stride 1 and no padding skips im2col entirely: the input is the column matrix
// (and conv_input's gemm writes dx directly), so the convolution is one gemm per sample.
namespace {

/// Columns per chunk stay under this many bytes (fits in cache with the output block).
constexpr std::int64_t kChunkBytes = std::int64_t(4) << 20;
/// Below this many multiply-adds a convolution stays on one thread.
constexpr std::int64_t kConvParallelWork = std::int64_t(1) << 21;

Tensor cj(const Tensor& t) { return t.is_complex() ? t.conj() : t; }

/// How a convolution kernel walks the batch: chunks of `chunk` samples; `outer` threads each take
/// whole chunks (kernels and BLAS single-threaded inside), or one thread walks the chunks and the
/// unfold/fold kernels and BLAS use the threads themselves. Fewer, larger parallel regions also
/// keep a loaded machine (threads descheduled at every barrier) from stalling.
struct ChunkPlan {
  std::int64_t chunk = 1, nchunks = 1;
  int outer = 1;
};

struct Dims {
  std::int64_t N, C, O, groups, Cg, Og, K, L, P;
  std::int64_t CgK() const { return Cg * K; }
};
Dims dims_of(std::int64_t N, std::int64_t C, std::int64_t O, const ConvSpec& s) {
  return {N, C, O, s.groups, C / s.groups, O / s.groups, s.geo.kernel_numel(), s.geo.out_numel(), s.geo.in_numel()};
}

/// True when the columns are the input itself (1x1 kernel, stride 1, no padding): no unfold/fold.
bool is_pointwise(const ConvGeometry& g) {
  for (std::size_t i = 0; i < g.in.size(); ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad_lo[i] != 0 || g.out[i] != g.in[i]) return false;
  return true;
}

ChunkPlan plan_chunks(const Dims& d, std::size_t itemsize) {
  if (std::max({d.L, d.CgK(), d.Og}) > INT_MAX)
    throw Error("conv", "matrix dims " + std::to_string(d.Og) + ", " + std::to_string(d.CgK()) + ", " +
                            std::to_string(d.L) + " exceed the BLAS index range");
  ChunkPlan p;
  const std::int64_t per = std::max<std::int64_t>(d.C * d.K * d.L * static_cast<std::int64_t>(itemsize), 1);
  p.chunk = std::clamp<std::int64_t>(kChunkBytes / per, 1, std::max<std::int64_t>(d.N, 1));
  const int threads = get_num_threads();
  const std::int64_t work = d.N * d.O * d.Cg * d.K * d.L;
  if (threads > 1 && d.N >= 2 && work >= kConvParallelWork) {
    p.chunk = std::min(p.chunk, (d.N + threads - 1) / threads);
    p.outer = static_cast<int>(std::min<std::int64_t>(threads, (d.N + p.chunk - 1) / p.chunk));
    // a whole number of chunks per thread, then the chunk size that spreads N over them: N 20 in chunks of 8
    // was 8 + 8 on one thread and 4 on the other (an FNO-2D step's 1x1 convolutions)
    const std::int64_t per_thread = ((d.N + p.chunk - 1) / p.chunk + p.outer - 1) / p.outer;
    p.chunk = (d.N + per_thread * p.outer - 1) / (per_thread * p.outer);
  }
  p.nchunks = d.N == 0 ? 0 : (d.N + p.chunk - 1) / p.chunk;
  return p;
}

/// Runs body(thread, first_sample, samples) over the chunks of `p`.
template <class Body>
void for_each_chunk(const ChunkPlan& p, std::int64_t N, Body&& body) {
  if (p.outer <= 1) {
    for (std::int64_t c = 0; c < p.nchunks; ++c) body(0, c * p.chunk, std::min(p.chunk, N - c * p.chunk));
    return;
  }
#pragma omp parallel for num_threads(p.outer) schedule(static)
  for (std::int64_t c = 0; c < p.nchunks; ++c) body(omp_get_thread_num(), c * p.chunk, std::min(p.chunk, N - c * p.chunk));
}

template <class F>
void visit_conv(Dtype dt, F&& f) {
  visit_float(dt, "conv", std::forward<F>(f));
}

Tensor conv_forward_kernel(const Tensor& x_, const Tensor& w_, const ConvSpec& s) {
  const Tensor x = x_.contiguous(), w = w_.contiguous();
  const Dims d = dims_of(x.size(0), x.size(1), w.size(0), s);
  Tensor out = make_tensor({d.N, d.O, d.L}, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const ChunkPlan p = plan_chunks(d, x.itemsize());
  const bool direct = is_pointwise(s.geo);
  const std::int64_t ccols = direct ? 0 : p.chunk * d.C * d.K * d.L;  // column elements per chunk
  Tensor buf = make_tensor({p.outer, ccols}, x.dtype(), x.device());
  visit_conv(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* X = static_cast<const T*>(x.data_ptr());
    const T* W = static_cast<const T*>(w.data_ptr());
    T* Y = static_cast<T*>(out.data_ptr());
    for_each_chunk(p, d.N, [&](int t, std::int64_t n0, std::int64_t nb) {
      const T* cols = X + n0 * d.C * d.P;
      if (!direct) {
        T* c = static_cast<T*>(buf.data_ptr()) + t * ccols;
        unfold_kernel<T>(X + n0 * d.C * d.P, c, nb * d.C, s.geo, p.outer <= 1);
        cols = c;
      }
      for (std::int64_t j = 0; j < nb; ++j)
        for (std::int64_t gi = 0; gi < d.groups; ++gi)  // (Og, CgK) @ (CgK, L)
          ::phasor::detail::gemm<T>(false, false, d.Og, d.L, d.CgK(), T(1), W + gi * d.Og * d.CgK(), d.CgK(),
                  cols + (j * d.C * d.K + gi * d.CgK()) * d.L, d.L, T(0), Y + ((n0 + j) * d.O + gi * d.Og) * d.L, d.L);
    });
  });
  return out;
}

Tensor conv_input_kernel(const Tensor& g_, const Tensor& w_, const ConvSpec& s, std::int64_t C) {
  const Tensor g = g_.contiguous(), w = w_.contiguous();
  const Dims d = dims_of(g.size(0), C, w.size(0), s);
  Shape xs{d.N, d.C};
  xs.insert(xs.end(), s.geo.in.begin(), s.geo.in.end());
  Tensor dx = make_tensor(xs, g.dtype(), g.device());
  if (dx.numel() == 0) return dx;
  const ChunkPlan p = plan_chunks(d, g.itemsize());
  const bool direct = is_pointwise(s.geo);  // the columns are dx itself
  const std::int64_t ccols = direct ? 0 : p.chunk * d.C * d.K * d.L;
  Tensor buf = make_tensor({p.outer, ccols}, g.dtype(), g.device());
  visit_conv(g.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* Gp = static_cast<const T*>(g.data_ptr());
    const T* W = static_cast<const T*>(w.data_ptr());
    T* DX = static_cast<T*>(dx.data_ptr());
    for_each_chunk(p, d.N, [&](int t, std::int64_t n0, std::int64_t nb) {
      T* cols = direct ? DX + n0 * d.C * d.P : static_cast<T*>(buf.data_ptr()) + t * ccols;
      for (std::int64_t j = 0; j < nb; ++j)
        for (std::int64_t gi = 0; gi < d.groups; ++gi)  // (CgK, Og) = W_g^T @ (Og, L)
          ::phasor::detail::gemm<T>(true, false, d.CgK(), d.L, d.Og, T(1), W + gi * d.Og * d.CgK(), d.CgK(),
                  Gp + ((n0 + j) * d.O + gi * d.Og) * d.L, d.L, T(0), cols + (j * d.C * d.K + gi * d.CgK()) * d.L, d.L);
      if (!direct) fold_kernel<T>(cols, DX + n0 * d.C * d.P, nb * d.C, s.geo, p.outer <= 1);
    });
  });
  return dx;
}

Tensor conv_weight_kernel(const Tensor& x_, const Tensor& g_, const ConvSpec& s, const Shape& w_shape) {
  const Tensor x = x_.contiguous(), g = g_.contiguous();
  const Dims d = dims_of(x.size(0), x.size(1), g.size(1), s);
  const ChunkPlan p = plan_chunks(d, x.itemsize());
  const bool direct = is_pointwise(s.geo);
  const std::int64_t ccols = direct ? 0 : p.chunk * d.C * d.K * d.L, wn = d.O * d.CgK();
  Tensor dw = zeros(w_shape, x.dtype(), x.device());
  if (d.N == 0 || wn == 0) return dw;
  // per thread: its columns and its partial weight gradient
  Tensor buf = make_tensor({p.outer, ccols}, x.dtype(), x.device());
  Tensor partial = zeros({p.outer, wn}, x.dtype(), x.device());
  visit_conv(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* X = static_cast<const T*>(x.data_ptr());
    const T* Gp = static_cast<const T*>(g.data_ptr());
    T* B = static_cast<T*>(buf.data_ptr());
    T* A = static_cast<T*>(partial.data_ptr());
    for_each_chunk(p, d.N, [&](int t, std::int64_t n0, std::int64_t nb) {
      T* acc = A + t * wn;
      const T* cols = X + n0 * d.C * d.P;
      if (!direct) {
        T* c = B + t * ccols;
        unfold_kernel<T>(X + n0 * d.C * d.P, c, nb * d.C, s.geo, p.outer <= 1);
        cols = c;
      }
      for (std::int64_t j = 0; j < nb; ++j)
        for (std::int64_t gi = 0; gi < d.groups; ++gi)  // (Og, CgK) += (Og, L) @ (CgK, L)^T
          ::phasor::detail::gemm<T>(false, true, d.Og, d.CgK(), d.L, T(1), Gp + ((n0 + j) * d.O + gi * d.Og) * d.L, d.L,
                  cols + (j * d.C * d.K + gi * d.CgK()) * d.L, d.L, T(1), acc + gi * d.Og * d.CgK(), d.CgK());
    });
    T* DW = static_cast<T*>(dw.data_ptr());
    for (int t = 0; t < p.outer; ++t) {
      const T* acc = A + t * wn;
      for (std::int64_t i = 0; i < wn; ++i) DW[i] += acc[i];
    }
  });
  return dw;
}

}  // namespace

// ---- CUDA -----------------------------------------------------------------------------------------
//
// Note [cuda convolution]
// On CUDA tensors the three primitives unfold the whole batch at once (src/cuda/conv.cu; a 1x1
// stride-1 unpadded kernel uses the input itself) and multiply with cuBLAS:
//   conv:        per group one strided-batched gemm over the samples, W_g (Og, CgK) broadcast
//                (stride 0) against cols_n,g (CgK, L) into out_n,g (Og, L);
//   conv_input:  per group one strided-batched gemm W_g^T (CgK, Og) @ g_n,g (Og, L) into the
//                columns (dx itself when pointwise), then col2im;
//   conv_weight: the sum over samples is the inner dim of one gemm per group after moving the batch
//                inside: g as (O, N*L) and cols as (C*K, N*L) (permuted copies), dW_g = g_g cols_g^T.
// Same formulas and layouts as the CPU kernels above, so the Note [convolution primitives]
// gradients hold unchanged.
namespace {

const void* elem_at(const Tensor& t, std::int64_t i) { return static_cast<const char*>(t.data_ptr()) + i * t.itemsize(); }
void* elem_at_mut(const Tensor& t, std::int64_t i) { return static_cast<char*>(t.data_ptr()) + i * t.itemsize(); }

Tensor conv_forward_cuda(const Tensor& x_, const Tensor& w_, const ConvSpec& s) {
  const Tensor x = x_.contiguous(), w = w_.contiguous();
  const Dims d = dims_of(x.size(0), x.size(1), w.size(0), s);
  Tensor out = make_tensor({d.N, d.O, d.L}, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (d.CgK() == 0) return out.zero_();
  const Tensor cols = is_pointwise(s.geo) ? x : ::phasor::cuda::detail::unfold(x, s.geo, "conv");
  for (std::int64_t gi = 0; gi < d.groups; ++gi)
    cuda_gemm_batched("conv", x.dtype(), x.device().index, false, false, d.Og, d.L, d.CgK(), elem_at(w, gi * d.Og * d.CgK()),
                      d.CgK(), 0, elem_at(cols, gi * d.CgK() * d.L), d.L, d.C * d.K * d.L,
                      elem_at_mut(out, gi * d.Og * d.L), d.L, d.O * d.L, d.N);
  return out;
}

Tensor conv_input_cuda(const Tensor& g_, const Tensor& w_, const ConvSpec& s, std::int64_t C) {
  const Tensor g = g_.contiguous(), w = w_.contiguous();
  const Dims d = dims_of(g.size(0), C, w.size(0), s);
  Shape xs{d.N, d.C};
  xs.insert(xs.end(), s.geo.in.begin(), s.geo.in.end());
  const bool direct = is_pointwise(s.geo);
  Tensor dx = make_tensor(xs, g.dtype(), g.device());
  if (dx.numel() == 0) return dx;
  if (d.Og == 0 || d.L == 0) return dx.zero_();
  Tensor cols = direct ? dx : make_tensor({d.N, d.C * d.K, d.L}, g.dtype(), g.device());
  for (std::int64_t gi = 0; gi < d.groups; ++gi)
    cuda_gemm_batched("conv", g.dtype(), g.device().index, true, false, d.CgK(), d.L, d.Og, elem_at(w, gi * d.Og * d.CgK()),
                      d.CgK(), 0, elem_at(g, gi * d.Og * d.L), d.L, d.O * d.L, elem_at_mut(cols, gi * d.CgK() * d.L), d.L,
                      d.C * d.K * d.L, d.N);
  return direct ? dx : ::phasor::cuda::detail::fold(cols, s.geo, "conv");
}

// Note [cuda conv weight gradient]
// dw = sum_n g[n] cols[n]^T per group, with g (N, O, L) and cols (N, C*K, L): the sample index sits
// between the rows and the columns of both operands, so no single gemm reads them as stored. Moving it
// next to L (permute + contiguous) copies g and cols, each the size of an activation, on every step.
// Instead one strided-batched gemm writes each sample's product into partials (N, O*Cg*K) and one more
// gemm sums them with a row of ones (a device constant): two launches and N weight-sized partials.
// Where the partials would outweigh the copies (few output positions, large weights), the copies win.
Tensor conv_weight_cuda(const Tensor& x_, const Tensor& g_, const ConvSpec& s, const Shape& w_shape) {
  const Tensor x = x_.contiguous(), g = g_.contiguous();
  const Dims d = dims_of(x.size(0), x.size(1), g.size(1), s);
  Tensor dw = make_tensor(w_shape, x.dtype(), x.device());
  if (dw.numel() == 0) return dw;
  if (d.N * d.L == 0) return dw.zero_();
  const Tensor cols = is_pointwise(s.geo) ? x.reshape({d.N, d.C, d.L}) : ::phasor::cuda::detail::unfold(x, s.geo, "conv");
  const std::int64_t W = d.O * d.CgK();  // weight elements
  if (d.N == 1 || W > d.L * (d.O + d.C * d.K)) {
    const std::int64_t NL = d.N * d.L;
    if (std::max({NL, d.Og, d.CgK()}) > INT_MAX)
      throw Error("conv", "matrix dims " + std::to_string(d.Og) + ", " + std::to_string(d.CgK()) + ", " +
                              std::to_string(NL) + " exceed the cuBLAS index range");
    const Tensor gp = g.permute({1, 0, 2}).contiguous();     // (O, N, L): no copy when N == 1
    const Tensor cp = cols.permute({1, 0, 2}).contiguous();  // (C*K, N, L)
    for (std::int64_t gi = 0; gi < d.groups; ++gi)
      cuda_gemm("conv", x.dtype(), x.device().index, false, true, d.Og, d.CgK(), NL, elem_at(gp, gi * d.Og * NL), NL,
                elem_at(cp, gi * d.CgK() * NL), NL, elem_at_mut(dw, gi * d.Og * d.CgK()), d.CgK());
    return dw;
  }
  if (std::max({d.L, d.Og, d.CgK(), W}) > INT_MAX)
    throw Error("conv", "matrix dims " + std::to_string(d.Og) + ", " + std::to_string(d.CgK()) + ", " +
                            std::to_string(d.L) + " exceed the cuBLAS index range");
  const Tensor part = make_tensor({d.N, W}, x.dtype(), x.device());
  for (std::int64_t gi = 0; gi < d.groups; ++gi)
    cuda_gemm_batched("conv", x.dtype(), x.device().index, false, true, d.Og, d.CgK(), d.L, elem_at(g, gi * d.Og * d.L),
                      d.L, d.O * d.L, elem_at(cols, gi * d.CgK() * d.L), d.L, d.C * d.K * d.L,
                      elem_at_mut(part, gi * d.Og * d.CgK()), d.CgK(), W, d.N);
  const Tensor one = device_constant(x.device(), "conv_weight ones", std::make_tuple(d.N, x.dtype()),
                                     [&] { return ones({d.N}, x.dtype()); });
  cuda_gemm("conv", x.dtype(), x.device().index, false, false, 1, W, d.N, one.data_ptr(), d.N, part.data_ptr(), W,
            dw.data_ptr(), W);
  return dw;
}

}  // namespace

Tensor conv_op(const Tensor& x, const Tensor& w, const ConvSpec& s) {
  return apply_op(
      "conv", {x, w}, kSaveInputs, [s](In in) {
        return in[0].device().is_cuda() ? conv_forward_cuda(in[0], in[1], s) : conv_forward_kernel(in[0], in[1], s);
      },
      [s](const Ctx& c, const G& gr) {
        Tensor dx, dw;
        if (c.needs_grad(0)) dx = conv_input_op(gr[0], cj(c.input(1)), s, c.input_shape(0)[1]);
        if (c.needs_grad(1)) dw = conv_weight_op(cj(c.input(0)), gr[0], s, c.input_shape(1));
        return G{dx, dw};
      });
}

Tensor conv_input_op(const Tensor& g, const Tensor& w, const ConvSpec& s, std::int64_t in_channels) {
  return apply_op(
      "conv_input", {g, w}, kSaveInputs,
      [s, in_channels](In in) {
        return in[0].device().is_cuda() ? conv_input_cuda(in[0], in[1], s, in_channels)
                                        : conv_input_kernel(in[0], in[1], s, in_channels);
      },
      [s](const Ctx& c, const G& gr) {
        Tensor dg, dw;
        if (c.needs_grad(0)) dg = conv_op(gr[0], cj(c.input(1)), s);
        if (c.needs_grad(1)) dw = conv_weight_op(gr[0], cj(c.input(0)), s, c.input_shape(1));
        return G{dg, dw};
      });
}

Tensor conv_weight_op(const Tensor& x, const Tensor& g, const ConvSpec& s, const Shape& w_shape) {
  return apply_op(
      "conv_weight", {x, g}, kSaveInputs,
      [s, w_shape](In in) {
        return in[0].device().is_cuda() ? conv_weight_cuda(in[0], in[1], s, w_shape)
                                        : conv_weight_kernel(in[0], in[1], s, w_shape);
      },
      [s](const Ctx& c, const G& gr) {
        Tensor dx, dg;
        if (c.needs_grad(0)) dx = conv_input_op(cj(c.input(1)), gr[0], s, c.input_shape(0)[1]);
        if (c.needs_grad(1)) dg = conv_op(cj(c.input(0)), gr[0], s);
        return G{dx, dg};
      });
}

}  // namespace phasor::detail
