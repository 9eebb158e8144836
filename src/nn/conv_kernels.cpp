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

#include <algorithm>
#include <cstring>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "phasor/creation.hpp"

namespace phasor::detail {

using G = std::vector<Tensor>;

std::int64_t ConvGeometry::kernel_numel() const { return shape_numel(kernel); }
std::int64_t ConvGeometry::out_numel() const { return shape_numel(out); }
std::int64_t ConvGeometry::in_numel() const { return shape_numel(in); }

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
void unfold_kernel(const T* x, T* cols, std::int64_t NC, const ConvGeometry& g) {
  const auto D = g.in.size();
  const std::int64_t K = g.kernel_numel(), L = g.out_numel(), P = g.in_numel();
  const std::int64_t W = g.out[D - 1], s = g.stride[D - 1];
  const Shape in_strides = contiguous_strides(g.in);
  const std::vector<Tap> taps = make_taps(g);
  const std::int64_t rows = NC * K;
  const int threads = threads_for(rows, rows * L);
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
void fold_kernel(const T* cols, T* y, std::int64_t NC, const ConvGeometry& g) {
  const auto D = g.in.size();
  const std::int64_t K = g.kernel_numel(), L = g.out_numel(), P = g.in_numel();
  const std::int64_t W = g.out[D - 1], s = g.stride[D - 1];
  const Shape in_strides = contiguous_strides(g.in);
  const std::vector<Tap> taps = make_taps(g);
  const int threads = threads_for(NC, NC * K * L);
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

Tensor fold_forward(const Tensor& cols, const ConvGeometry& g) {
  const Tensor cc = cols.contiguous();
  const std::int64_t N = cols.size(0), K = g.kernel_numel(), C = cols.size(1) / K;
  Shape ys{N, C};
  ys.insert(ys.end(), g.in.begin(), g.in.end());
  Tensor y = make_tensor(ys, cols.dtype(), cols.device());
  if (y.numel() == 0) return y;
  visit_float(cols.dtype(), "fold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    fold_kernel<T>(static_cast<const T*>(cc.data_ptr()), static_cast<T*>(y.data_ptr()), N * C, g);
  });
  return y;
}

Tensor unfold_op(const Tensor& x, const ConvGeometry& g) {
  return apply_op(
      "unfold", {x}, kSaveNone, [&](const G& in) { return unfold_forward(in[0], g); },
      [g](const Ctx&, const G& gr) { return G{fold_op(gr[0], g)}; });
}

Tensor fold_op(const Tensor& cols, const ConvGeometry& g) {
  return apply_op(
      "fold", {cols}, kSaveNone, [&](const G& in) { return fold_forward(in[0], g); },
      [g](const Ctx&, const G& gr) { return G{unfold_op(gr[0], g)}; });
}

}  // namespace phasor::detail
