// src/nn/pooling.cpp - max, average, adaptive and power-average pooling, max unpooling, and the pooling modules.
//
// Note [pooling]
// Every pooling is a reduction of windows over kPoolDims = 3 spatial dims of the N*C planes of x (1-D and
// 2-D pooling put size-1 dims in front), and the windows are all in PoolGeo (src/nn/pool_rules.hpp):
// regular ones (kernel, stride, padding, dilation; ceil_mode only changes the output size) or adaptive ones
// [floor(o L / n), ceil((o + 1) L / n)). Which inputs an output reads, and what an average divides by
// (count_include_pad, divisor_override), is defined once there, for the CPU loops below and the CUDA
// kernels of src/cuda/pool.cu. Three primitives:
//   max_pool(x)            -> (values, flat in-plane indices of the maxima; NaN wins, ties keep the first)
//                             gradient: the cotangent scatter_add-ed at the indices (an op, so the second
//                             derivative is gather's);
//   avg_pool(x)            -> y
//   avg_pool_backward(gy)  -> gx, the adjoint of avg_pool, gathered per input element over the outputs that
//                             read it (no atomics; each is the other's gradient, so every order works).
// lp_pool (avg_pool of x^p), max_unpool (a scatter) and the adaptive and n-d forms are compositions.
#include "phasor/nn/pooling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "cuda/nn_ops.hpp"
#include "nn/pool_rules.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using ::phasor::detail::shape_str;
using detail::kPoolDims;
using detail::PoolGeo;

namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;

// ---- kernels -----------------------------------------------------------------------------------------------
std::int64_t plane_in(const PoolGeo& g) { return g.in[0] * g.in[1] * g.in[2]; }
std::int64_t plane_out(const PoolGeo& g) { return g.out[0] * g.out[1] * g.out[2]; }

/// Threads for `work` independent element computations.
int threads_for(std::int64_t work) {
  return work >= 2 * ::phasor::detail::kParallelGrain ? get_num_threads() : 1;
}

template <class F>
void visit_pool_dtype(Dtype t, const char* op, F&& f) {
  if (t == Dtype::Float32) f(float{});
  else if (t == Dtype::Float64) f(double{});
  else throw Error(op, std::string("expected a float32 or float64 input, got ") + dtype_name(t));
}

/// Every output index's window per dim (pool_taps, pool_count), so the CPU loops below do no index division.
struct PoolTables {
  std::vector<std::int64_t> first[kPoolDims], end[kPoolDims], count[kPoolDims];
  std::int64_t step[kPoolDims] = {1, 1, 1};
  explicit PoolTables(const PoolGeo& g) {
    for (int d = 0; d < kPoolDims; ++d)
      for (std::int64_t o = 0; o < g.out[d]; ++o) {
        std::int64_t f, e;
        detail::pool_taps(g, d, o, f, e, step[d]);
        first[d].push_back(f);
        end[d].push_back(e);
        count[d].push_back(detail::pool_count(g, d, o));
      }
  }
  /// pool_divisor of output (o0, o1, o2).
  double divisor(const PoolGeo& g, std::int64_t o0, std::int64_t o1, std::int64_t o2) const {
    if (g.divisor > 0) return static_cast<double>(g.divisor);
    return static_cast<double>(count[0][static_cast<std::size_t>(o0)] * count[1][static_cast<std::size_t>(o1)] *
                               count[2][static_cast<std::size_t>(o2)]);
  }
  /// Calls f(flat in-plane index) for every tap of output (o0, o1, o2), in row-major order.
  template <class F>
  void taps(const PoolGeo& g, std::int64_t o0, std::int64_t o1, std::int64_t o2, F&& f) const {
    const auto a = static_cast<std::size_t>(o0), b = static_cast<std::size_t>(o1), c = static_cast<std::size_t>(o2);
    for (std::int64_t i0 = first[0][a]; i0 < end[0][a]; i0 += step[0])
      for (std::int64_t i1 = first[1][b]; i1 < end[1][b]; i1 += step[1]) {
        const std::int64_t row = (i0 * g.in[1] + i1) * g.in[2];
        for (std::int64_t i2 = first[2][c]; i2 < end[2][c]; i2 += step[2]) f(row + i2);
      }
  }
};

/// Runs body(plane, o0, o1, k0) for each row (o0, o1) of the outputs of every plane, k0 its first flat output
/// index, rows in parallel (each row writes outputs of its own).
template <class Body>
void for_each_output_row(const PoolGeo& g, std::int64_t NC, Body&& body) {
  const std::int64_t per_plane = g.out[0] * g.out[1], rows = NC * per_plane;
  // taps read: every window's (regular), or about every input element once (adaptive: kernel is 1)
  const std::int64_t work = NC * std::max(plane_out(g) * g.kernel[0] * g.kernel[1] * g.kernel[2], plane_in(g));
#pragma omp parallel for num_threads(threads_for(work)) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t nc = r / per_plane, rem = r - nc * per_plane;
    body(nc, rem / g.out[1], rem % g.out[1], r * g.out[2]);
  }
}

// The CPU kernels compute what src/cuda/pool.cu's do (pool_max_at, pool_avg_at, pool_avg_adjoint_at), in the
// same order, from the tables: the maxima and their indices are identical, the sums bitwise so.
G max_pool_forward(const Tensor& x_, const PoolGeo& g, const Shape& os) {
  if (x_.device().is_cuda()) {
    auto [y, i] = cuda::detail::max_pool(x_, g, os);
    return G{y, i};
  }
  const Tensor x = x_.contiguous();
  Tensor y = ::phasor::detail::make_tensor(os, x.dtype(), x.device());
  Tensor idx = ::phasor::detail::make_tensor(os, Dtype::Int64, x.device());
  const PoolTables t(g);
  const std::int64_t P = plane_in(g);
  visit_pool_dtype(x.dtype(), "max_pool", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    auto* ip = static_cast<std::int64_t*>(idx.data_ptr());
    for_each_output_row(g, x.size(0) * x.size(1), [&](std::int64_t nc, std::int64_t o0, std::int64_t o1, std::int64_t k) {
      const T* plane = xp + nc * P;
      for (std::int64_t o2 = 0; o2 < g.out[2]; ++o2, ++k) {
        T best = -std::numeric_limits<T>::infinity();
        std::int64_t at = (t.first[0][static_cast<std::size_t>(o0)] * g.in[1] + t.first[1][static_cast<std::size_t>(o1)]) *
                              g.in[2] + t.first[2][static_cast<std::size_t>(o2)];
        t.taps(g, o0, o1, o2, [&](std::int64_t i) {
          const T v = plane[i];
          if (v > best || v != v) {
            best = v;
            at = i;
          }
        });
        yp[k] = best;
        ip[k] = at;
      }
    });
  });
  return G{y, idx};
}

Tensor avg_pool_forward(const Tensor& x_, const PoolGeo& g, const Shape& os) {
  if (x_.device().is_cuda()) return cuda::detail::avg_pool(x_, g, os);
  const Tensor x = x_.contiguous();
  Tensor y = ::phasor::detail::make_tensor(os, x.dtype(), x.device());
  const PoolTables t(g);
  const std::int64_t P = plane_in(g);
  visit_pool_dtype(x.dtype(), "avg_pool", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    for_each_output_row(g, x.size(0) * x.size(1), [&](std::int64_t nc, std::int64_t o0, std::int64_t o1, std::int64_t k) {
      const T* plane = xp + nc * P;
      for (std::int64_t o2 = 0; o2 < g.out[2]; ++o2, ++k) {
        T sum = T(0);
        t.taps(g, o0, o1, o2, [&](std::int64_t i) { sum += plane[i]; });
        yp[k] = sum / static_cast<T>(t.divisor(g, o0, o1, o2));
      }
    });
  });
  return y;
}

// The adjoint scatters each output's share into its taps, outputs in row-major order: every input element
// receives the same terms in the same order as the CUDA kernel's gather sums them.
Tensor avg_pool_adjoint_forward(const Tensor& gy_, const PoolGeo& g, const Shape& in_shape) {
  if (gy_.device().is_cuda()) return cuda::detail::avg_pool_adjoint(gy_, g, in_shape);
  const Tensor gy = gy_.contiguous();
  Tensor gx = ::phasor::detail::make_tensor(in_shape, gy.dtype(), gy.device());
  const PoolTables t(g);
  const std::int64_t P = plane_in(g), L = plane_out(g), NC = gy.size(0) * gy.size(1);
  const std::int64_t work = NC * std::max(P, L * g.kernel[0] * g.kernel[1] * g.kernel[2]);
  const int threads = static_cast<int>(std::min<std::int64_t>(threads_for(work), std::max<std::int64_t>(NC, 1)));
  visit_pool_dtype(gy.dtype(), "avg_pool_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = static_cast<const T*>(gy.data_ptr());
    T* xp = static_cast<T*>(gx.data_ptr());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t nc = 0; nc < NC; ++nc) {
      T* plane = xp + nc * P;
      std::fill(plane, plane + P, T(0));
      std::int64_t k = nc * L;
      for (std::int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (std::int64_t o2 = 0; o2 < g.out[2]; ++o2, ++k) {
            const T v = gp[k] / static_cast<T>(t.divisor(g, o0, o1, o2));
            t.taps(g, o0, o1, o2, [&](std::int64_t i) { plane[i] += v; });
          }
    }
  });
  return gx;
}

// ---- primitives (Note [pooling]) ---------------------------------------------------------------------------
Tensor avg_pool_op(const Tensor& x, const PoolGeo& g, const Shape& out_shape);

Tensor avg_pool_backward_op(const Tensor& gy, const PoolGeo& g, const Shape& in_shape) {
  return ::phasor::detail::apply_op(
      "avg_pool_backward", {gy}, ::phasor::detail::kSaveNone,
      [g, in_shape](In in) { return avg_pool_adjoint_forward(in[0], g, in_shape); },
      [g, out_shape = gy.shape()](const ::phasor::detail::Ctx&, const G& gr) {
        return G{avg_pool_op(gr[0], g, out_shape)};
      });
}

Tensor avg_pool_op(const Tensor& x, const PoolGeo& g, const Shape& out_shape) {
  return ::phasor::detail::apply_op(
      "avg_pool", {x}, ::phasor::detail::kSaveNone, [g, out_shape](In in) { return avg_pool_forward(in[0], g, out_shape); },
      [g, in_shape = x.shape()](const ::phasor::detail::Ctx&, const G& gr) {
        return G{avg_pool_backward_op(gr[0], g, in_shape)};
      });
}

G max_pool_op(const Tensor& x, const PoolGeo& g, const Shape& out_shape) {
  return ::phasor::detail::apply_op_n(
      "max_pool", {x}, ::phasor::detail::kSaveOutputs, [g, out_shape](In in) { return max_pool_forward(in[0], g, out_shape); },
      [](const ::phasor::detail::Ctx& c, const G& gr) {
        if (!gr[0].defined()) return G{Tensor()};
        // the cotangent lands on the maxima: scatter_add over each flattened plane
        const Shape& xs = c.input_shape(0);
        const Tensor idx = c.output(1);
        const Shape xflat{xs[0], xs[1], ::phasor::detail::shape_numel(xs.data() + 2, xs.size() - 2)};
        const Shape oflat{xs[0], xs[1], ::phasor::detail::shape_numel(idx.shape().data() + 2, xs.size() - 2)};
        const Tensor gx = zeros(xflat, gr[0].dtype(), gr[0].device());
        return G{scatter_add(gx, 2, idx.reshape(oflat), gr[0].reshape(oflat)).reshape(xs)};
      });
}

// ---- arguments -----------------------------------------------------------------------------------------------
/// Checks x for an nd-dim pooling: defined, float32/float64, (N, C, *spatial) or (C, *spatial) with every
/// non-batch dim non-zero. Returns whether it is batched.
bool check_input(const char* op, const Tensor& x, std::int64_t nd) {
  if (!x.defined()) throw Error(op, "input is undefined");
  if (x.dim() != nd + 1 && x.dim() != nd + 2)
    throw Error(op, "expected a " + std::to_string(nd + 1) + "-D (unbatched) or " + std::to_string(nd + 2) +
                        "-D (batched) input, got " + shape_str(x.shape()));
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64)
    throw Error(op, std::string("expected a float32 or float64 input, got ") + dtype_name(x.dtype()));
  const bool batched = x.dim() == nd + 2;
  for (std::int64_t d = batched ? 1 : 0; d < x.dim(); ++d)
    if (x.size(d) == 0)
      throw Error(op, "expected non-zero sizes except the batch dim, got input " + shape_str(x.shape()));
  return batched;
}

/// A geometry of size-1 dims (the front dims of 1-D and 2-D pooling).
PoolGeo unit_geo() {
  PoolGeo g{};
  for (int d = 0; d < kPoolDims; ++d) g.in[d] = g.out[d] = g.kernel[d] = g.stride[d] = g.dilation[d] = 1;
  g.count_include_pad = true;
  return g;
}

/// Regular windows over x's last nd dims (validated as torch does); `is_max` allows dilation and the max
/// pooling's padding bound.
PoolGeo regular_geo(const char* op, const Tensor& x, std::int64_t nd, const IntList& kernel_size,
                    const IntList& stride_arg, const IntList& padding_arg, const IntList& dilation_arg,
                    bool ceil_mode, bool is_max) {
  const Shape k = kernel_size.expand(nd, op, "kernel_size");
  const Shape s = stride_arg.values.empty() ? k : stride_arg.expand(nd, op, "stride");
  const Shape p = padding_arg.expand(nd, op, "padding");
  const Shape dl = dilation_arg.expand(nd, op, "dilation");
  auto positive = [&](const Shape& v, const char* what, std::int64_t min) {
    for (auto e : v)
      if (e < min)
        throw Error(op, std::string(what) + " must be " + (min ? "positive" : "non-negative") + ", got " + shape_str(v));
  };
  positive(k, "kernel_size", 1);
  positive(s, "stride", 1);
  positive(p, "padding", 0);
  positive(dl, "dilation", 1);
  PoolGeo g = unit_geo();
  Shape out(static_cast<std::size_t>(nd));
  bool small = false;
  for (std::int64_t d = 0; d < nd; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const std::int64_t eff = dl[i] * (k[i] - 1) + 1;
    if (p[i] > (is_max ? eff : k[i]) / 2)
      throw Error(op, "padding should be at most half of the " + std::string(is_max ? "effective " : "") +
                          "kernel size, got padding " + shape_str(p) + " for kernel_size " + shape_str(k) +
                          (is_max ? " and dilation " + shape_str(dl) : std::string()));
    const std::int64_t in = x.size(x.dim() - nd + d);
    const std::int64_t num = in + 2 * p[i] - eff + (ceil_mode ? s[i] - 1 : 0);
    std::int64_t o = (num >= 0 ? num / s[i] : -((-num + s[i] - 1) / s[i])) + 1;  // floor division
    if (ceil_mode && (o - 1) * s[i] >= in + p[i]) --o;
    out[i] = o;
    small = small || o < 1;
    const int gd = kPoolDims - static_cast<int>(nd) + static_cast<int>(d);
    g.in[gd] = in;
    g.out[gd] = o;
    g.kernel[gd] = k[i];
    g.stride[gd] = s[i];
    g.pad[gd] = p[i];
    g.dilation[gd] = dl[i];
  }
  if (small)
    throw Error(op, "input " + shape_str(x.shape()) + " gives output size " + shape_str(out) + ", too small (kernel_size " +
                        shape_str(k) + ", stride " + shape_str(s) + ", padding " + shape_str(p) + ", dilation " +
                        shape_str(dl) + ")");
  return g;
}

/// Adaptive windows from x's last nd dims to output_size (-1: the input's size).
PoolGeo adaptive_geo(const char* op, const Tensor& x, std::int64_t nd, const IntList& output_size) {
  const Shape os = output_size.expand(nd, op, "output_size");
  for (auto e : os)
    if (e < -1) throw Error(op, "output_size must be non-negative (or -1 for the input's size), got " + shape_str(os));
  PoolGeo g = unit_geo();
  g.adaptive = true;
  for (std::int64_t d = 0; d < nd; ++d) {
    const int gd = kPoolDims - static_cast<int>(nd) + static_cast<int>(d);
    g.in[gd] = x.size(x.dim() - nd + d);
    const std::int64_t o = os[static_cast<std::size_t>(d)];
    g.out[gd] = o == -1 ? g.in[gd] : o;
  }
  return g;
}

/// (N, C, *out) for the batched input xb.
Shape out_shape(const Tensor& xb, const PoolGeo& g, std::int64_t nd) {
  Shape s{xb.size(0), xb.size(1)};
  for (int d = kPoolDims - static_cast<int>(nd); d < kPoolDims; ++d) s.push_back(g.out[d]);
  return s;
}

G max_pool_nd(const char* op, const Tensor& x, std::int64_t nd, const PoolGeo& g, bool batched) {
  return ::phasor::detail::composite(op, {x}, [&] {
    const Tensor xb = batched ? x : x.unsqueeze(0);
    G r = max_pool_op(xb, g, out_shape(xb, g, nd));
    if (!batched) r = G{r[0].squeeze(0), r[1].squeeze(0)};
    return r;
  });
}

Tensor avg_pool_nd(const char* op, const Tensor& x, std::int64_t nd, const PoolGeo& g, bool batched) {
  return ::phasor::detail::composite(op, {x}, [&] {
    const Tensor xb = batched ? x : x.unsqueeze(0);
    Tensor y = avg_pool_op(xb, g, out_shape(xb, g, nd));
    return batched ? y : y.squeeze(0);
  });
}

G max_pool_any(const char* op, const Tensor& x, std::int64_t nd, const IntList& kernel_size,
               const IntList& stride, const IntList& padding, const IntList& dilation, bool ceil_mode) {
  const bool batched = check_input(op, x, nd);
  const PoolGeo g = regular_geo(op, x, nd, kernel_size, stride, padding, dilation, ceil_mode, true);
  return max_pool_nd(op, x, nd, g, batched);
}

Tensor avg_pool_any(const char* op, const Tensor& x, std::int64_t nd, const IntList& kernel_size,
                    const IntList& stride, const IntList& padding, bool ceil_mode,
                    bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  const bool batched = check_input(op, x, nd);
  if (divisor_override && *divisor_override == 0) throw Error(op, "divisor_override must be non-zero");
  if (divisor_override && *divisor_override < 0)
    throw Error(op, "divisor_override must be positive, got " + std::to_string(*divisor_override));
  PoolGeo g = regular_geo(op, x, nd, kernel_size, stride, padding, 1, ceil_mode, false);
  g.count_include_pad = count_include_pad;
  g.divisor = divisor_override ? *divisor_override : 0;
  return avg_pool_nd(op, x, nd, g, batched);
}

G adaptive_any(const char* op, const Tensor& x, std::int64_t nd, const IntList& output_size, bool max) {
  const bool batched = check_input(op, x, nd);
  const PoolGeo g = adaptive_geo(op, x, nd, output_size);
  if (max) return max_pool_nd(op, x, nd, g, batched);
  return G{avg_pool_nd(op, x, nd, g, batched)};
}

Tensor lp_pool_any(const char* op, const Tensor& x, std::int64_t nd, double p, const IntList& kernel_size,
                   const IntList& stride, bool ceil_mode) {
  const bool batched = check_input(op, x, nd);
  if (!(p > 0) || !std::isfinite(p)) throw Error(op, "norm_type must be positive and finite, got " + std::to_string(p));
  const PoolGeo g = regular_geo(op, x, nd, kernel_size, stride, 0, 1, ceil_mode, false);
  double K = 1;
  for (int d = 0; d < kPoolDims; ++d) K *= static_cast<double>(g.kernel[d]);
  return ::phasor::detail::composite(op, {x}, [&] {
    // torch's formula: (sign(m) relu(|m|) K)^(1/p) with m the mean of x^p over the window
    const Tensor xb = batched ? x : x.unsqueeze(0);
    const Tensor m = avg_pool_op(p == 1 ? xb : pow(xb, p), g, out_shape(xb, g, nd));
    Tensor y = m.sign() * m.abs().relu() * K;
    if (p != 1) y = pow(y, 1.0 / p);
    return batched ? y : y.squeeze(0);
  });
}

Tensor max_unpool_any(const char* op, const Tensor& x, const Tensor& indices, std::int64_t nd,
                      const IntList& kernel_size, const IntList& stride_arg, const IntList& padding_arg,
                      const std::optional<Shape>& output_size) {
  const bool batched = check_input(op, x, nd);
  if (!indices.defined()) throw Error(op, "indices is undefined");
  if (indices.dtype() != Dtype::Int64)
    throw Error(op, std::string("indices must be int64, got ") + dtype_name(indices.dtype()));
  if (indices.shape() != x.shape())
    throw Error(op, "indices " + shape_str(indices.shape()) + " must have the input's shape " + shape_str(x.shape()));
  if (indices.device() != x.device())
    throw Error(op, "expected input and indices on one device, got " + x.device().str() + " and " +
                        indices.device().str());
  const Shape k = kernel_size.expand(nd, op, "kernel_size");
  const Shape s = stride_arg.values.empty() ? k : stride_arg.expand(nd, op, "stride");
  const Shape p = padding_arg.expand(nd, op, "padding");
  for (std::size_t d = 0; d < k.size(); ++d)
    if (k[d] < 1 || s[d] < 1 || p[d] < 0)
      throw Error(op, "kernel_size and stride must be positive and padding non-negative, got kernel_size " +
                          shape_str(k) + ", stride " + shape_str(s) + ", padding " + shape_str(p));
  Shape deflt(k.size()), out(k.size());
  for (std::size_t d = 0; d < k.size(); ++d)
    deflt[d] = (x.size(x.dim() - nd + static_cast<std::int64_t>(d)) - 1) * s[d] - 2 * p[d] + k[d];
  out = deflt;
  if (output_size) {
    Shape os = *output_size;
    if (os.size() == static_cast<std::size_t>(x.dim())) os.erase(os.begin(), os.end() - nd);
    if (os.size() != static_cast<std::size_t>(nd))
      throw Error(op, "output_size must have " + std::to_string(nd) + " or " + std::to_string(x.dim()) +
                          " elements, got " + shape_str(*output_size));
    for (std::size_t d = 0; d < os.size(); ++d)
      if (os[d] <= deflt[d] - s[d] || os[d] >= deflt[d] + s[d])
        throw Error(op, "output_size " + shape_str(*output_size) + " is invalid: each spatial size must lie between " +
                            shape_str(deflt) + " - stride and + stride (exclusive), stride " + shape_str(s));
    out = os;
  }
  std::int64_t P = 1;
  for (auto e : out) P *= e;
  if (indices.numel() > 0) {
    const auto [mn, mx] = aminmax(indices);  // one reduction for both bounds
    const std::int64_t lo = mn.item<std::int64_t>(), hi = mx.item<std::int64_t>();
    if (lo < 0 || hi >= P)
      throw Error(op, "indices must be in [0, " + std::to_string(P) + ") for output size " + shape_str(out) + ", got " +
                          std::to_string(lo < 0 ? lo : hi));
  }
  return ::phasor::detail::composite(op, {x, indices}, [&] {
    const Tensor xb = batched ? x : x.unsqueeze(0), ib = batched ? indices : indices.unsqueeze(0);
    const std::int64_t N = xb.size(0), C = xb.size(1);
    const Shape flat{N, C, ::phasor::detail::shape_numel(xb.shape().data() + 2, xb.shape().size() - 2)};
    Shape ys{N, C};
    ys.insert(ys.end(), out.begin(), out.end());
    Tensor y = scatter(zeros({N, C, P}, x.dtype(), x.device()), 2, ib.reshape(flat), xb.reshape(flat)).reshape(ys);
    return batched ? y : y.squeeze(0);
  });
}

std::string bool_str(bool b) { return b ? "true" : "false"; }
std::string ints_str(const IntList& v) {
  if (v.values.size() == 1) return std::to_string(v.values[0]);
  return shape_str(v.values);
}

}  // namespace

namespace functional {

Tensor max_pool1d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, const IntList& d, bool c) {
  return max_pool_any("max_pool1d", x, 1, k, s, p, d, c)[0];
}
Tensor max_pool2d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, const IntList& d, bool c) {
  return max_pool_any("max_pool2d", x, 2, k, s, p, d, c)[0];
}
Tensor max_pool3d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, const IntList& d, bool c) {
  return max_pool_any("max_pool3d", x, 3, k, s, p, d, c)[0];
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const IntList& k, const IntList& s,
                                                   const IntList& p, const IntList& d, bool c) {
  G r = max_pool_any("max_pool1d", x, 1, k, s, p, d, c);
  return {r[0], r[1]};
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntList& k, const IntList& s,
                                                   const IntList& p, const IntList& d, bool c) {
  G r = max_pool_any("max_pool2d", x, 2, k, s, p, d, c);
  return {r[0], r[1]};
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const IntList& k, const IntList& s,
                                                   const IntList& p, const IntList& d, bool c) {
  G r = max_pool_any("max_pool3d", x, 3, k, s, p, d, c);
  return {r[0], r[1]};
}

Tensor avg_pool1d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, bool c, bool cip) {
  return avg_pool_any("avg_pool1d", x, 1, k, s, p, c, cip, std::nullopt);
}
Tensor avg_pool2d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, bool c, bool cip,
                  std::optional<std::int64_t> div) {
  return avg_pool_any("avg_pool2d", x, 2, k, s, p, c, cip, div);
}
Tensor avg_pool3d(const Tensor& x, const IntList& k, const IntList& s, const IntList& p, bool c, bool cip,
                  std::optional<std::int64_t> div) {
  return avg_pool_any("avg_pool3d", x, 3, k, s, p, c, cip, div);
}

Tensor adaptive_avg_pool1d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_avg_pool1d", x, 1, o, false)[0]; }
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_avg_pool2d", x, 2, o, false)[0]; }
Tensor adaptive_avg_pool3d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_avg_pool3d", x, 3, o, false)[0]; }
Tensor adaptive_max_pool1d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_max_pool1d", x, 1, o, true)[0]; }
Tensor adaptive_max_pool2d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_max_pool2d", x, 2, o, true)[0]; }
Tensor adaptive_max_pool3d(const Tensor& x, const IntList& o) { return adaptive_any("adaptive_max_pool3d", x, 3, o, true)[0]; }
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x, const IntList& o) {
  G r = adaptive_any("adaptive_max_pool1d", x, 1, o, true);
  return {r[0], r[1]};
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, const IntList& o) {
  G r = adaptive_any("adaptive_max_pool2d", x, 2, o, true);
  return {r[0], r[1]};
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x, const IntList& o) {
  G r = adaptive_any("adaptive_max_pool3d", x, 3, o, true);
  return {r[0], r[1]};
}

Tensor lp_pool1d(const Tensor& x, double p, const IntList& k, const IntList& s, bool c) {
  return lp_pool_any("lp_pool1d", x, 1, p, k, s, c);
}
Tensor lp_pool2d(const Tensor& x, double p, const IntList& k, const IntList& s, bool c) {
  return lp_pool_any("lp_pool2d", x, 2, p, k, s, c);
}
Tensor lp_pool3d(const Tensor& x, double p, const IntList& k, const IntList& s, bool c) {
  return lp_pool_any("lp_pool3d", x, 3, p, k, s, c);
}

Tensor max_unpool1d(const Tensor& x, const Tensor& i, const IntList& k, const IntList& s, const IntList& p,
                    std::optional<Shape> o) {
  return max_unpool_any("max_unpool1d", x, i, 1, k, s, p, o);
}
Tensor max_unpool2d(const Tensor& x, const Tensor& i, const IntList& k, const IntList& s, const IntList& p,
                    std::optional<Shape> o) {
  return max_unpool_any("max_unpool2d", x, i, 2, k, s, p, o);
}
Tensor max_unpool3d(const Tensor& x, const Tensor& i, const IntList& k, const IntList& s, const IntList& p,
                    std::optional<Shape> o) {
  return max_unpool_any("max_unpool3d", x, i, 3, k, s, p, o);
}

}  // namespace functional

// ---- modules -------------------------------------------------------------------------------------------------
namespace {
/// Checks a module's size list when it is built (the functional form checks it again with the input).
void check_list(const char* op, std::int64_t nd, const IntList& v, const char* what, std::int64_t min) {
  for (auto e : v.expand(nd, op, what))
    if (e < min)
      throw Error(op, std::string(what) + " must be " + (min ? "positive" : "non-negative") + ", got " + ints_str(v));
}
std::string stride_str(const IntList& s, const IntList& k) { return ints_str(s.values.empty() ? k : s); }
}  // namespace

MaxPoolNd::MaxPoolNd(std::string name, std::int64_t nd, IntList k, IntList s, IntList p, IntList d,
                     bool c)
    : Module(std::move(name)), ndim(nd), kernel_size(std::move(k)), stride(std::move(s)), padding(std::move(p)),
      dilation(std::move(d)), ceil_mode(c) {
  const char* op = this->name().c_str();
  check_list(op, nd, kernel_size, "kernel_size", 1);
  if (!stride.values.empty()) check_list(op, nd, stride, "stride", 1);
  check_list(op, nd, padding, "padding", 0);
  check_list(op, nd, dilation, "dilation", 1);
}
Tensor MaxPoolNd::forward(const Tensor& x) {
  return max_pool_any(name().c_str(), x, ndim, kernel_size, stride, padding, dilation, ceil_mode)[0];
}
std::tuple<Tensor, Tensor> MaxPoolNd::forward_with_indices(const Tensor& x) {
  G r = max_pool_any(name().c_str(), x, ndim, kernel_size, stride, padding, dilation, ceil_mode);
  return {r[0], r[1]};
}
std::string MaxPoolNd::extra_repr() const {
  return "kernel_size=" + ints_str(kernel_size) + ", stride=" + stride_str(stride, kernel_size) +
         ", padding=" + ints_str(padding) + ", dilation=" + ints_str(dilation) + ", ceil_mode=" + bool_str(ceil_mode);
}

AvgPoolNd::AvgPoolNd(std::string name, std::int64_t nd, IntList k, IntList s, IntList p, bool c,
                     bool cip, std::optional<std::int64_t> div)
    : Module(std::move(name)), ndim(nd), kernel_size(std::move(k)), stride(std::move(s)), padding(std::move(p)),
      ceil_mode(c), count_include_pad(cip), divisor_override(div) {
  const char* op = this->name().c_str();
  check_list(op, nd, kernel_size, "kernel_size", 1);
  if (!stride.values.empty()) check_list(op, nd, stride, "stride", 1);
  check_list(op, nd, padding, "padding", 0);
  if (divisor_override && *divisor_override <= 0)
    throw Error(op, "divisor_override must be positive, got " + std::to_string(*divisor_override));
}
Tensor AvgPoolNd::forward(const Tensor& x) {
  return avg_pool_any(name().c_str(), x, ndim, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override);
}
std::string AvgPoolNd::extra_repr() const {
  std::string r = "kernel_size=" + ints_str(kernel_size) + ", stride=" + stride_str(stride, kernel_size) +
                  ", padding=" + ints_str(padding);
  if (ceil_mode) r += ", ceil_mode=true";
  if (!count_include_pad) r += ", count_include_pad=false";
  if (divisor_override) r += ", divisor_override=" + std::to_string(*divisor_override);
  return r;
}

AdaptivePoolNd::AdaptivePoolNd(std::string name, std::int64_t nd, bool mx, IntList o)
    : Module(std::move(name)), ndim(nd), max(mx), output_size(std::move(o)) {
  check_list(this->name().c_str(), nd, output_size, "output_size", -1);
}
Tensor AdaptivePoolNd::forward(const Tensor& x) { return adaptive_any(name().c_str(), x, ndim, output_size, max)[0]; }
std::tuple<Tensor, Tensor> AdaptivePoolNd::forward_with_indices(const Tensor& x) {
  if (!max) throw Error(name(), "forward_with_indices needs max pooling (an AdaptiveMaxPool module)");
  G r = adaptive_any(name().c_str(), x, ndim, output_size, true);
  return {r[0], r[1]};
}
std::string AdaptivePoolNd::extra_repr() const { return "output_size=" + ints_str(output_size); }

LPPoolNd::LPPoolNd(std::string name, std::int64_t nd, double p, IntList k, IntList s, bool c)
    : Module(std::move(name)), ndim(nd), norm_type(p), kernel_size(std::move(k)), stride(std::move(s)), ceil_mode(c) {
  const char* op = this->name().c_str();
  if (!(p > 0) || !std::isfinite(p)) throw Error(op, "norm_type must be positive and finite, got " + std::to_string(p));
  check_list(op, nd, kernel_size, "kernel_size", 1);
  if (!stride.values.empty()) check_list(op, nd, stride, "stride", 1);
}
Tensor LPPoolNd::forward(const Tensor& x) {
  return lp_pool_any(name().c_str(), x, ndim, norm_type, kernel_size, stride, ceil_mode);
}
std::string LPPoolNd::extra_repr() const {
  std::ostringstream os;
  os << "norm_type=" << norm_type << ", kernel_size=" << ints_str(kernel_size)
     << ", stride=" << (stride.values.empty() ? std::string("none") : ints_str(stride)) << ", ceil_mode=" << bool_str(ceil_mode);
  return os.str();
}

MaxUnpoolNd::MaxUnpoolNd(std::string name, std::int64_t nd, IntList k, IntList s, IntList p)
    : Module(std::move(name)), ndim(nd), kernel_size(std::move(k)), stride(std::move(s)), padding(std::move(p)) {
  const char* op = this->name().c_str();
  check_list(op, nd, kernel_size, "kernel_size", 1);
  if (!stride.values.empty()) check_list(op, nd, stride, "stride", 1);
  check_list(op, nd, padding, "padding", 0);
}
Tensor MaxUnpoolNd::forward(const Tensor& x, const Tensor& indices, std::optional<Shape> output_size) {
  return max_unpool_any(name().c_str(), x, indices, ndim, kernel_size, stride, padding, output_size);
}
std::string MaxUnpoolNd::extra_repr() const {
  return "kernel_size=" + ints_str(kernel_size) + ", stride=" + stride_str(stride, kernel_size) +
         ", padding=" + ints_str(padding);
}

}  // namespace phasor::nn
