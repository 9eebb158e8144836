// src/core/index_ops.cpp - gathers and scatters along one dim: index_select / index_add (a 1-D
// index shared by every position) and gather / scatter_add (an index per position).
//
// Note [along-dim kernels]
// All four ops visit every position of the other dims once and run a short loop along `dim`
// there. The positions are iterated with the elementwise engine's StridedLoop over views whose
// `dim` has size 1 (so it is dropped and the other dims are coalesced); the loop runs in parallel
// over those positions. A position's writes stay inside that position's line along `dim`, so
// scatters (index_add, scatter_add) never race, even with repeated indices. Inside a row segment
// the loop order follows the memory: rows of a contiguous inner run are copied whole, otherwise
// each position walks its line along `dim`.
#include <algorithm>
#include <cstdlib>

#include "core/index_ops.hpp"

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "cuda/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

/// Throws unless `index` is a 0-d or 1-D int64 tensor.
void check_index_kind(const Tensor& index, const char* op) {
  if (!index.defined()) throw Error(op, "index is undefined");
  if (index.dtype() != Dtype::Int64) throw Error(op, std::string("index must be int64, got ") + dtype_name(index.dtype()));
  if (index.dim() > 1) throw Error(op, "index must be 0-D or 1-D, got shape " + shape_str(index.shape()));
}

/// What follows "index <value>" in the range error of index_select / index_add (eager and in a CUDA graph replay).
std::string range_suffix(std::int64_t size) { return " out of range for a dim of size " + std::to_string(size); }

/// Index values of a 0-d/1-D int64 tensor, wrapped into [0, size) (negative counts from the end).
std::vector<std::int64_t> wrapped_index(const Tensor& index, std::int64_t size, const char* op) {
  check_index_kind(index, op);
  std::vector<std::int64_t> v(static_cast<std::size_t>(index.numel()));
  // read on the host: directly on a CPU device (virtual ones too), through a copy from any other
  const Tensor flat = index.reshape({-1});
  const Tensor ic = (flat.device().is_cpu() ? flat : flat.to(Device::cpu())).contiguous();
  const auto* p = ic.data<std::int64_t>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::int64_t j = p[i];
    if (j < -size || j >= size)
      throw Error(op, "index " + std::to_string(j) + range_suffix(size));
    v[i] = j < 0 ? j + size : j;
  }
  return v;
}

/// The index of index_select / index_add, checked against a dim of `size`: wrapped host values for a
/// CPU target; for a CUDA target an int64 1-D tensor on that device, which the kernel reads (wrapping
/// negative values itself), and inside a CUDA graph capture the words of its device-side check.
struct AlongIndex {
  std::vector<std::int64_t> host;
  Tensor device;
  std::int64_t count = 0;
  const std::uint64_t* checks = nullptr;
};

/// `index` for an op whose output lives on `target`. An index already on the CUDA target stays there: its
/// range is checked by one wait for its min and max, or in a CUDA graph capture by the device (Note [device
/// checks in CUDA graphs]; neither when `trusted`); any other index is read on the host, checked and
/// wrapped there, and uploaded for a CUDA target.
AlongIndex along_index(const Tensor& index, std::int64_t size, Device target, bool trusted, const char* op) {
  AlongIndex r;
  if (target.is_cuda() && index.defined() && index.device() == target) {
    check_index_kind(index, op);
    r.count = index.numel();
    NoGradGuard ng;
    r.device = index.detach().reshape({-1}).contiguous();
    if (trusted || r.count == 0) return r;
    r.checks = cuda::detail::check_index_in_capture(r.device, -size, size, op, "index ", range_suffix(size));
    if (r.checks) return r;
    const Tensor ends = stack({r.device.min(), r.device.max()}).to(Device::cpu());
    if (ends.data<std::int64_t>()[0] >= -size && ends.data<std::int64_t>()[1] < size) return r;
    (void)wrapped_index(index, size, op);  // names the first offending value
    throw Error(op, "index" + range_suffix(size));
  }
  r.host = wrapped_index(index, size, op);
  r.count = static_cast<std::int64_t>(r.host.size());
  if (target.is_cuda()) r.device = from_vector(r.host, std::nullopt, target);
  return r;
}

/// `t` viewed with the sizes of `shape` (dim `d` set to 1) and its own strides.
Tensor line_view(const Tensor& t, Shape shape, std::int64_t d) {
  shape[static_cast<std::size_t>(d)] = 1;
  return make_view(t, shape, t.strides(), t.storage_offset());
}

/// Runs body(ptrs, strides, n) over every position of `shape` except along `d`, for operands
/// given as tensors whose sizes (other than `d`) are at least `shape`'s; `work` = steps per position.
template <class F>
void for_each_line(const std::vector<Tensor>& ops, const Shape& shape, std::int64_t d, std::int64_t work, F&& body) {
  std::vector<Tensor> views;
  views.reserve(ops.size());
  for (const auto& t : ops) views.push_back(line_view(t, shape, d));
  std::vector<const Tensor*> ptrs;
  for (const auto& v : views) ptrs.push_back(&v);
  Shape s = shape;
  s[static_cast<std::size_t>(d)] = 1;
  StridedLoop L = make_loop(ptrs, s);
  L.run(body, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(work, 1)));
}

/// Element stride of `t` along `d` (in elements of T).
std::int64_t dim_stride(const Tensor& t, std::int64_t d) { return t.strides()[static_cast<std::size_t>(d)]; }

template <class T>
inline void accumulate(T& a, const T& b) {
  if constexpr (std::is_same_v<T, bool>) a = a || b;
  else a = wrap_add(a, b);  // int64 wraps, as on the GPU
}

/// Calls f(k, i) for every k < K, i < n, in 64 x 64 tiles; inside a tile i runs innermost when
/// `i_inner`. For a fixed i, k always increases (so accumulation order never depends on tiling).
template <class F>
inline void tiled(std::int64_t K, std::int64_t n, bool i_inner, F&& f) {
  constexpr std::int64_t B = 64;
  for (std::int64_t k0 = 0; k0 < K; k0 += B) {
    const std::int64_t k1 = std::min(K, k0 + B);
    for (std::int64_t i0 = 0; i0 < n; i0 += B) {
      const std::int64_t i1 = std::min(n, i0 + B);
      if (i_inner) {
        for (std::int64_t k = k0; k < k1; ++k)
          for (std::int64_t i = i0; i < i1; ++i) f(k, i);
      } else {
        for (std::int64_t i = i0; i < i1; ++i)
          for (std::int64_t k = k0; k < k1; ++k) f(k, i);
      }
    }
  }
}

template <class T>
constexpr std::int64_t elems(std::int64_t bytes) {
  return bytes / static_cast<std::int64_t>(sizeof(T));
}

/// out[..., k, ...] = x[..., index[k], ...] (out has index.count elements along d).
void index_select_kernel(const Tensor& out, const Tensor& x, std::int64_t d, const AlongIndex& index) {
  if (out.device().is_cuda()) return cuda::detail::index_select(out, x, d, index.device, x.size(d), index.checks);
  const std::vector<std::int64_t>& idx = index.host;
  const auto K = static_cast<std::int64_t>(idx.size());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t od = dim_stride(out, d), xd = dim_stride(x, d);
    const std::int64_t* ip = idx.data();
    for_each_line({out, x}, out.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* xs = reinterpret_cast<const T*>(p[1]);
      const std::int64_t so = elems<T>(s[0]), sx = elems<T>(s[1]);
      if (so == 1 && sx == 1) {  // whole rows
        for (std::int64_t k = 0; k < K; ++k) std::copy(xs + ip[k] * xd, xs + ip[k] * xd + n, o + k * od);
      } else {
        tiled(K, n, std::abs(so) <= std::abs(od), [&](std::int64_t k, std::int64_t i) { o[i * so + k * od] = xs[i * sx + ip[k] * xd]; });
      }
    });
  });
}

/// out[..., index[k], ...] += src[..., k, ...] (out and src of one dtype).
void index_add_kernel(const Tensor& out, const Tensor& src, std::int64_t d, const AlongIndex& index) {
  if (out.device().is_cuda()) return cuda::detail::index_add(out, src, d, index.device, out.size(d), index.checks);
  const std::vector<std::int64_t>& idx = index.host;
  const auto K = static_cast<std::int64_t>(idx.size());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t od = dim_stride(out, d), sd = dim_stride(src, d);
    const std::int64_t* ip = idx.data();
    for_each_line({out, src}, src.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* ss = reinterpret_cast<const T*>(p[1]);
      const std::int64_t so = elems<T>(s[0]), sx = elems<T>(s[1]);
      if (so == 1 && sx == 1) {  // whole rows
        for (std::int64_t k = 0; k < K; ++k) {
          T* orow = o + ip[k] * od;
          const T* srow = ss + k * sd;
          for (std::int64_t i = 0; i < n; ++i) accumulate(orow[i], srow[i]);
        }
      } else {
        tiled(K, n, std::abs(so) <= std::abs(od),
              [&](std::int64_t k, std::int64_t i) { accumulate(o[i * so + ip[k] * od], ss[i * sx + k * sd]); });
      }
    });
  });
}

/// out[p] = x[p with p[d] = index[p]] over index's shape (`checks`: check_gather_index's).
void gather_kernel(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index,
                   const std::uint64_t* checks) {
  if (out.device().is_cuda()) return cuda::detail::gather(out, x, d, index, checks);
  const std::int64_t K = index.size(d);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t od = dim_stride(out, d), xd = dim_stride(x, d), id = dim_stride(index, d);
    for_each_line({out, index, x}, index.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      const std::int64_t so = elems<T>(s[0]), si = elems<std::int64_t>(s[1]), sx = elems<T>(s[2]);
      T* o = reinterpret_cast<T*>(p[0]);
      const auto* ix = reinterpret_cast<const std::int64_t*>(p[1]);
      const T* xs = reinterpret_cast<const T*>(p[2]);
      tiled(K, n, std::abs(so) <= std::abs(od),
            [&](std::int64_t k, std::int64_t i) { o[i * so + k * od] = xs[i * sx + ix[i * si + k * id] * xd]; });
    });
  });
}

/// out[p with p[d] = index[p]] += src[p] over index's shape (out and src of one dtype; `checks`:
/// check_gather_index's).
void scatter_add_kernel(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index,
                        const std::uint64_t* checks) {
  if (out.device().is_cuda()) return cuda::detail::scatter_add(out, src, d, index, checks);
  const std::int64_t K = index.size(d);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t od = dim_stride(out, d), sd = dim_stride(src, d), id = dim_stride(index, d);
    for_each_line({out, index, src}, index.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      const std::int64_t so = elems<T>(s[0]), si = elems<std::int64_t>(s[1]), ss = elems<T>(s[2]);
      T* o = reinterpret_cast<T*>(p[0]);
      const auto* ix = reinterpret_cast<const std::int64_t*>(p[1]);
      const T* sp = reinterpret_cast<const T*>(p[2]);
      tiled(K, n, std::abs(ss) <= std::abs(sd),
            [&](std::int64_t k, std::int64_t i) { accumulate(o[i * so + ix[i * si + k * id] * od], sp[i * ss + k * sd]); });
    });
  });
}

/// `src` converted to `to` for an accumulating op; refuses conversions that lose a category.
Tensor src_as(const Tensor& src, Dtype to, const char* op) {
  if (category(src.dtype()) > category(to))
    throw Error(op, std::string("cannot add a ") + dtype_name(src.dtype()) + " source into a " + dtype_name(to) +
                        " tensor");
  return src.to(to);
}

/// Checks gather/scatter index: int64, same number of dims as x, sizes within x (except dim d) and
/// within `src` (when given), values in [0, x.size(d)) (not for a `trusted` index: the caller built it in
/// range; checking it would make a GPU's host wait, and cost a CPU gather of sorted values a quarter of its
/// time). Inside a CUDA graph capture the values are
/// checked by the device: returns the words of that check for the op's kernel (Note [device checks in CUDA
/// graphs]); nullptr otherwise.
const std::uint64_t* check_gather_index(const Tensor& x, std::int64_t d, const Tensor& index, const Tensor* src,
                                        const char* op, bool trusted) {
  if (!index.defined()) throw Error(op, "index is undefined");
  if (index.dtype() != Dtype::Int64) throw Error(op, std::string("index must be int64, got ") + dtype_name(index.dtype()));
  if (index.device() != x.device())
    throw Error(op, "index on " + index.device().str() + " but the input on " + x.device().str());
  if (index.dim() != x.dim())
    throw Error(op, "index of shape " + shape_str(index.shape()) + " must have as many dims as the input of shape " +
                        shape_str(x.shape()));
  for (std::int64_t k = 0; k < x.dim(); ++k) {
    if (k != d && index.size(k) > x.size(k))
      throw Error(op, "index of shape " + shape_str(index.shape()) + " is larger than the input of shape " +
                          shape_str(x.shape()) + " at dim " + std::to_string(k));
    if (src && index.size(k) > src->size(k))
      throw Error(op, "index of shape " + shape_str(index.shape()) + " is larger than src of shape " +
                          shape_str(src->shape()) + " at dim " + std::to_string(k));
  }
  const std::int64_t n = x.size(d);
  if (index.numel() == 0 || trusted) return nullptr;
  const auto suffix = [&] { return " out of range for dim " + std::to_string(d) + " of size " + std::to_string(n); };
  // range on the device (one wait for both ends, or in a capture a check at each replay); the host sees the
  // values only to name a bad one
  if (index.device().is_cuda()) {
    if (const std::uint64_t* checks = cuda::detail::check_index_in_capture(index, 0, n, op, "index ", suffix()))
      return checks;
    NoGradGuard ng;
    const Tensor ends = stack({index.min(), index.max()}).to(Device::cpu());
    if (ends.data<std::int64_t>()[0] >= 0 && ends.data<std::int64_t>()[1] < n) return nullptr;
  }
  const Tensor ic = index.to(Device::cpu()).contiguous();
  const auto* p = ic.data<std::int64_t>();
  const std::int64_t m = ic.numel();
  // range check in parallel (indices can be as many as the output elements); the message names
  // the first offending value
  std::int64_t lo = 0, hi = 0;
  const int threads = m >= 2 * kParallelGrain ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : lo) reduction(max : hi) if (threads > 1)
  for (std::int64_t i = 0; i < m; ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  if (lo < 0 || hi >= n)
    for (std::int64_t i = 0; i < m; ++i)
      if (p[i] < 0 || p[i] >= n) throw Error(op, "index " + std::to_string(p[i]) + suffix());
  return nullptr;
}

}  // namespace
}  // namespace detail

// ---- index_select / index_add ---------------------------------------------------------------------------
namespace detail {
namespace {

Tensor index_select_impl(const Tensor& x, std::int64_t dim, const Tensor& index, bool trusted);

/// index_add; `trusted` (the caller built the index in range) skips a GPU index's range check, here and
/// in the gradient.
Tensor index_add_impl(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, bool trusted) {
  check_same_device(x, src, "index_add");
  if (x.dim() == 0) throw Error("index_add", "cannot index a 0-d tensor");
  const auto d = wrap_dim(dim, x.dim(), "index_add");
  const AlongIndex idx = along_index(index, x.size(d), x.device(), trusted, "index_add");
  Shape want = x.shape();
  want[static_cast<std::size_t>(d)] = idx.count;
  if (src.shape() != want)
    throw Error("index_add", "src of shape " + shape_str(src.shape()) + " does not match " + shape_str(want) +
                                 " (the input of shape " + shape_str(x.shape()) + " with " + std::to_string(idx.count) +
                                 " indices along dim " + std::to_string(d) + ")");
  src_as(src, x.dtype(), "index_add");  // validates the dtypes before any work
  return apply_op(
      "index_add", {x, src}, kSaveNone,
      [&](In in) {
        Tensor out = in[0].clone();
        index_add_kernel(out, src_as(in[1], out.dtype(), "index_add"), d, idx);
        return out;
      },
      [d, index, trusted](const Ctx&, const G& g) { return G{g[0], index_select_impl(g[0], d, index, trusted)}; });
}

/// index_select; `trusted` as index_add_impl's.
Tensor index_select_impl(const Tensor& x, std::int64_t dim, const Tensor& index, bool trusted) {
  if (x.dim() == 0) throw Error("index_select", "cannot index a 0-d tensor");
  const auto d = wrap_dim(dim, x.dim(), "index_select");
  const AlongIndex idx = along_index(index, x.size(d), x.device(), trusted, "index_select");
  return apply_op(
      "index_select", {x}, kSaveNone,
      [&](In in) {
        Shape s = in[0].shape();
        s[static_cast<std::size_t>(d)] = idx.count;
        Tensor out = make_tensor(s, in[0].dtype(), in[0].device());
        index_select_kernel(out, in[0], d, idx);
        return out;
      },
      [d, index, trusted](const Ctx& c, const G& g) {
        return G{index_add_impl(zeros(c.input_shape(0), g[0].dtype(), g[0].device()), d, index, g[0], trusted)};
      });
}

}  // namespace

Tensor index_select_trusted(const Tensor& x, std::int64_t dim, const Tensor& index) {
  return index_select_impl(x, dim, index, true);
}

Tensor index_add_trusted(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return index_add_impl(x, dim, index, src, true);
}

}  // namespace detail

Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::index_add_impl(x, dim, index, src, false);
}

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  return detail::index_select_impl(x, dim, index, false);
}

// ---- gather / scatter_add -----------------------------------------------------------------------------------
namespace detail {
namespace {

Tensor scatter_add_impl(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, bool trusted);

/// gather; `trusted` (the caller built the index in range) skips the index's range check, here and in
/// the gradient (as index_select_impl's).
Tensor gather_impl(const Tensor& x, std::int64_t dim, const Tensor& index, bool trusted) {
  if (x.dim() == 0) {
    wrap_dim(dim, 0, "gather");
    if (!index.defined() || index.dim() != 0)
      throw Error("gather", "index for a 0-d input must be 0-d, got shape " +
                                (index.defined() ? shape_str(index.shape()) : std::string("undefined")));
    return composite("gather", {x},
                     [&] { return gather_impl(x.reshape({1}), 0, index.reshape({1}), trusted).reshape({}); });
  }
  const auto d = wrap_dim(dim, x.dim(), "gather");
  const std::uint64_t* checks = check_gather_index(x, d, index, nullptr, "gather", trusted);
  return apply_op(
      "gather", {x}, kSaveNone,
      [&](In in) {
        Tensor out = make_tensor(index.shape(), in[0].dtype(), in[0].device());
        gather_kernel(out, in[0], d, index, checks);
        return out;
      },
      [d, index, trusted](const Ctx& c, const G& g) {
        return G{scatter_add_impl(zeros(c.input_shape(0), g[0].dtype(), g[0].device()), d, index, g[0], trusted)};
      });
}

/// scatter_add; `trusted` as gather_impl's.
Tensor scatter_add_impl(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, bool trusted) {
  check_same_device(x, src, "scatter_add");
  if (!src.defined()) throw Error("scatter_add", "src is undefined");
  if (x.dim() == 0) {
    wrap_dim(dim, 0, "scatter_add");
    if (!index.defined() || index.dim() != 0 || src.dim() > 1 || src.numel() < 1)
      throw Error("scatter_add", "a 0-d input needs a 0-d index and a non-empty src of at most 1 dim");
    return composite("scatter_add", {x, src}, [&] {
      return scatter_add_impl(x.reshape({1}), 0, index.reshape({1}), src.reshape({-1}), trusted).reshape({});
    });
  }
  const auto d = wrap_dim(dim, x.dim(), "scatter_add");
  if (src.dim() != x.dim())
    throw Error("scatter_add", "src of shape " + shape_str(src.shape()) + " must have as many dims as the input of shape " +
                                   shape_str(x.shape()));
  const std::uint64_t* checks = check_gather_index(x, d, index, &src, "scatter_add", trusted);
  src_as(src, x.dtype(), "scatter_add");
  const Shape src_shape = src.shape();
  return apply_op(
      "scatter_add", {x, src}, kSaveNone,
      [&](In in) {
        Tensor out = in[0].clone();
        scatter_add_kernel(out, src_as(in[1], out.dtype(), "scatter_add"), d, index, checks);
        return out;
      },
      [d, index, src_shape, trusted](const Ctx& c, const G& g) {
        Tensor gs;
        if (c.needs_grad(1)) {
          gs = gather_impl(g[0], d, index, trusted);
          if (gs.shape() != src_shape) {  // index smaller than src: the rest of src got no use
            Shape p;
            for (std::size_t k = src_shape.size(); k-- > 0;) {
              p.push_back(0);
              p.push_back(src_shape[k] - gs.shape()[k]);
            }
            gs = pad(gs, p);
          }
        }
        return G{g[0], gs};
      });
}

}  // namespace

Tensor gather_trusted(const Tensor& x, std::int64_t dim, const Tensor& index) { return gather_impl(x, dim, index, true); }

}  // namespace detail

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) { return detail::gather_impl(x, dim, index, false); }

Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::scatter_add_impl(x, dim, index, src, false);
}

}  // namespace phasor
