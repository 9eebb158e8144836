// src/core/index_ops.cpp - gathers and scatters along one dim: index_select and the index_* scatters (index_add,
// index_copy, index_reduce: a 1-D index shared by every position), gather and the scatter* ops (scatter,
// scatter_add, scatter_reduce: an index per position), and their in-place forms and methods.
//
// Note [along-dim kernels]
// Every kernel visits every position of the other dims once and runs a short loop along `dim`
// there. The positions are iterated with the elementwise engine's StridedLoop over views whose
// `dim` has size 1 (so it is dropped and the other dims are coalesced); the loop runs in parallel
// over those positions. A position's writes stay inside that position's line along `dim`, so
// the scatters never race, even with repeated indices. Inside a row segment
// the loop order follows the memory: rows of a contiguous inner run are copied whole, otherwise
// each position walks its line along `dim`.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/index_ops.hpp"

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/pointwise.hpp"
#include "core/promotion.hpp"
#include "core/scatter_rules.hpp"
#include "cuda/graph.hpp"
#include "cuda/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {

namespace {

/// scan_range's pass over p[b, e): bit 0 set by a value outside the range, bit 1 by a negative one. (Kept to a
/// few instructions a value: at the SSE2 baseline no 64-bit compare vectorizes; the sign bits are ORed.)
unsigned range_bits(const std::int64_t* p, std::int64_t b, std::int64_t e, std::uint64_t base, std::uint64_t span) {
  unsigned bad = 0;
  std::uint64_t bits = 0;
  if (base == 0) {  // lo = 0: a negative value is out of range too
    for (std::int64_t i = b; i < e; ++i) bad |= static_cast<unsigned>(static_cast<std::uint64_t>(p[i]) >= span);
  } else {
    for (std::int64_t i = b; i < e; ++i) {
      bad |= static_cast<unsigned>(static_cast<std::uint64_t>(p[i]) - base >= span);
      bits |= static_cast<std::uint64_t>(p[i]);
    }
  }
  return bad | static_cast<unsigned>(bits >> 63 << 1);
}

}  // namespace

RangeScan scan_range(const std::int64_t* p, std::int64_t n, std::int64_t lo, std::int64_t hi) {
  // [lo, hi) maps to [0, hi - lo) by an unsigned subtraction; anything else lands at or above hi - lo
  const auto base = static_cast<std::uint64_t>(lo), span = static_cast<std::uint64_t>(hi) - base;
  const int threads = n >= 2 * kParallelGrain ? get_num_threads() : 1;
  unsigned bits = 0;
  if (threads == 1) {  // no parallel region: its set-up costs microseconds, and its loop did not vectorize
    bits = range_bits(p, 0, n, base, span);
  } else {
    const std::int64_t chunks = (n + kParallelGrain - 1) / kParallelGrain;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(| : bits)
    for (std::int64_t c = 0; c < chunks; ++c)
      bits |= range_bits(p, c * kParallelGrain, std::min(n, (c + 1) * kParallelGrain), base, span);
  }
  const unsigned bad = bits & 1u, negative = bits >> 1;
  RangeScan r;
  r.negative = negative != 0;
  if (bad)
    for (std::int64_t i = 0; i < n && r.first_bad < 0; ++i)
      if (p[i] < lo || p[i] >= hi) r.first_bad = i;
  return r;
}

namespace {

/// Throws unless `index` is a 0-d or 1-D int64 tensor.
void check_index_kind(const Tensor& index, const char* op) {
  if (!index.defined()) throw Error(op, "index is undefined");
  if (index.dtype() != Dtype::Int64) throw Error(op, std::string("index must be int64, got ") + dtype_name(index.dtype()));
  if (index.dim() > 1) throw Error(op, "index must be 0-D or 1-D, got shape " + shape_str(index.shape()));
}

/// What follows "index <value>" in the range error of index_select / index_add (eager and in a CUDA graph replay).
std::string range_suffix(std::int64_t size) { return " out of range for a dim of size " + std::to_string(size); }

/// Index values of a 0-d/1-D int64 tensor, wrapped into [0, size) (negative counts from the end), as a contiguous
/// 1-D int64 tensor on the host: the index itself when it is one already and needs no wrapping.
Tensor wrapped_index(const Tensor& index, std::int64_t size, const char* op) {
  check_index_kind(index, op);
  // read on the host: directly on a CPU device (virtual ones too), through a copy from any other
  const Tensor flat = index.reshape({-1});
  const Tensor ic = (flat.device().is_cpu() ? flat : flat.to(Device::cpu())).contiguous();
  const auto* p = ic.data<std::int64_t>();
  const std::int64_t n = ic.numel();
  const RangeScan scan = scan_range(p, n, -size, size);
  if (scan.first_bad >= 0) throw Error(op, "index " + std::to_string(p[scan.first_bad]) + range_suffix(size));
  if (!scan.negative) return ic;
  Tensor w = make_tensor({n}, Dtype::Int64, Device::cpu());
  auto* q = w.data<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) q[i] = p[i] < 0 ? p[i] + size : p[i];
  return w;
}

/// The index of index_select / index_add, checked against a dim of `size`: wrapped host values for a
/// CPU target; for a CUDA target an int64 1-D tensor on that device, which the kernel reads (wrapping
/// negative values itself), and the words of its device-side check (in a CUDA graph capture, or deferred).
struct AlongIndex {
  Tensor host;  ///< CPU target: the wrapped values (wrapped_index)
  Tensor device;
  std::int64_t count = 0;
  const std::uint64_t* checks = nullptr;
};

/// `index` for an op whose output lives on `target`. An index already on the CUDA target stays there: its
/// range is checked by one wait for its min and max, or in a CUDA graph capture or with deferred checks by
/// the device (Note [device checks in CUDA graphs], Note [deferred device checks]; neither when `trusted`);
/// any other index is read on the host, checked and wrapped there, and uploaded for a CUDA target.
AlongIndex along_index(const Tensor& index, std::int64_t size, Device target, bool trusted, const char* op) {
  AlongIndex r;
  if (target.is_cuda() && index.defined() && index.device() == target) {
    check_index_kind(index, op);
    r.count = index.numel();
    NoGradGuard ng;
    r.device = index.detach().reshape({-1}).contiguous();
    if (r.count == 0) return r;
    if (trusted) {  // no check of its own, but it stands down after a failed one
      r.checks = cuda::detail::current_check_words(target);
      return r;
    }
    r.checks = cuda::detail::check_index_on_device(r.device, -size, size, op, "index ", range_suffix(size));
    if (r.checks) return r;
    const Tensor ends = stack({r.device.min(), r.device.max()}).to(Device::cpu());
    if (ends.data<std::int64_t>()[0] >= -size && ends.data<std::int64_t>()[1] < size) return r;
    (void)wrapped_index(index, size, op);  // names the first offending value
    throw Error(op, "index" + range_suffix(size));
  }
  r.host = wrapped_index(index, size, op);
  r.count = r.host.numel();
  if (target.is_cuda()) r.device = r.host.to(target);
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

/// Runs body(tag, kind) for x's dtype and the scatter kind k (the combinations scatter_combine has a rule for;
/// the ops refuse max and min of complex tensors before any work).
template <class F>
void visit_scatter_dtype(Dtype dt, ScatterKind k, const char* op, F&& body) {
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    visit_scatter(k, [&](auto kind) {
      if constexpr (scatter_supports_v<decltype(kind)::value, T>) body(tag, kind);
      else throw Error(op, std::string("no rule for ") + dtype_name(dt));
    });
  });
}

/// Calls f(k, i) for every k < K, i < n, in 64 x 64 tiles; inside a tile i runs innermost when
/// `i_inner`. For a fixed i, k always increases (so accumulation order never depends on tiling).
template <class F>
inline void tiled(std::int64_t K, std::int64_t n, bool i_inner, F&& f) {
  if (n == 1) {  // one position (a 1-D op): a plain loop, i folded away
    for (std::int64_t k = 0; k < K; ++k) f(k, std::int64_t{0});
    return;
  }
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
  const std::int64_t K = index.count;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t od = dim_stride(out, d), xd = dim_stride(x, d);
    const std::int64_t* ip = index.host.data<std::int64_t>();
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

/// out[..., index[k], ...] (kind)= src[..., k, ...] (out and src of one dtype), k in order at each position.
void index_scatter_kernel(const Tensor& out, const Tensor& src, std::int64_t d, const AlongIndex& index, ScatterKind kind,
                          const char* op) {
  if (out.device().is_cuda())
    return cuda::detail::index_add(out, src, d, index.device, out.size(d), index.checks, kind);
  const std::int64_t K = index.count;
  visit_scatter_dtype(out.dtype(), kind, op, [&](auto tag, auto kc) {
    using T = typename decltype(tag)::type;
    constexpr ScatterKind Kd = decltype(kc)::value;
    const std::int64_t od = dim_stride(out, d), sd = dim_stride(src, d);
    const std::int64_t* ip = index.host.data<std::int64_t>();
    for_each_line({out, src}, src.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* ss = reinterpret_cast<const T*>(p[1]);
      const std::int64_t so = elems<T>(s[0]), sx = elems<T>(s[1]);
      if (so == 1 && sx == 1) {  // whole rows
        for (std::int64_t k = 0; k < K; ++k) {
          T* orow = o + ip[k] * od;
          const T* srow = ss + k * sd;
          for (std::int64_t i = 0; i < n; ++i) scatter_combine<Kd>(orow[i], srow[i]);
        }
      } else {
        tiled(K, n, std::abs(so) <= std::abs(od),
              [&](std::int64_t k, std::int64_t i) { scatter_combine<Kd>(o[i * so + ip[k] * od], ss[i * sx + k * sd]); });
      }
    });
  });
}

/// out[p] = x[p with p[d] = index[p]] over index's shape (`checks`: check_gather_values's).
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

/// out[p with p[d] = index[p]] (kind)= src[p] over index's shape (out and src of one dtype; `checks`:
/// check_gather_values's), k in order at each position.
void scatter_kernel(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index, const std::uint64_t* checks,
                    ScatterKind kind, const char* op) {
  if (out.device().is_cuda()) return cuda::detail::scatter_add(out, src, d, index, checks, kind);
  const std::int64_t K = index.size(d);
  visit_scatter_dtype(out.dtype(), kind, op, [&](auto tag, auto kc) {
    using T = typename decltype(tag)::type;
    constexpr ScatterKind Kd = decltype(kc)::value;
    const std::int64_t od = dim_stride(out, d), sd = dim_stride(src, d), id = dim_stride(index, d);
    for_each_line({out, index, src}, index.shape(), d, K, [&](char** p, const std::int64_t* s, std::int64_t n) {
      const std::int64_t so = elems<T>(s[0]), si = elems<std::int64_t>(s[1]), ss = elems<T>(s[2]);
      T* o = reinterpret_cast<T*>(p[0]);
      const auto* ix = reinterpret_cast<const std::int64_t*>(p[1]);
      const T* sp = reinterpret_cast<const T*>(p[2]);
      tiled(K, n, std::abs(ss) <= std::abs(sd), [&](std::int64_t k, std::int64_t i) {
        scatter_combine<Kd>(o[i * so + ix[i * si + k * id] * od], sp[i * ss + k * sd]);
      });
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

/// Checks a gather/scatter index's kind and shape: int64, on x's device, same number of dims as x, sizes within
/// x (except dim d) and within `src` (when given). Its values are check_gather_values's.
void check_gather_shapes(const Tensor& x, std::int64_t d, const Tensor& index, const Tensor* src, const char* op) {
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
}

/// Checks the values of a gather/scatter index (check_gather_shapes's) against dim d of size n: in [0, n) (not for a
/// `trusted` index: the caller built it in range; checking it would make a GPU's host wait, and cost a CPU gather
/// of sorted values a quarter of its time). Inside a CUDA graph capture or with deferred checks (Note [deferred
/// device checks]) the values are checked by the device: returns the words of that check for the op's kernel (Note
/// [device checks in CUDA graphs]); nullptr otherwise. Value-dependent, so the ops call it in their forward (Note
/// [replayable forwards]).
const std::uint64_t* check_gather_values(std::int64_t n, std::int64_t d, const Tensor& index, const char* op,
                                         bool trusted) {
  if (index.numel() == 0) return nullptr;
  if (trusted) return cuda::detail::current_check_words(index.device());  // stands down after a failed check
  const auto suffix = [&] { return " out of range for dim " + std::to_string(d) + " of size " + std::to_string(n); };
  // range on the device (one wait for both ends, or a device-side check: in a capture, or deferred); the host sees the
  // values only to name a bad one
  if (index.device().is_cuda()) {
    if (const std::uint64_t* checks = cuda::detail::check_index_on_device(index, 0, n, op, "index ", suffix()))
      return checks;
    NoGradGuard ng;
    const Tensor ends = stack({index.min(), index.max()}).to(Device::cpu());
    if (ends.data<std::int64_t>()[0] >= 0 && ends.data<std::int64_t>()[1] < n) return nullptr;
  }
  const Tensor ic = index.to(Device::cpu()).contiguous();
  const auto* p = ic.data<std::int64_t>();
  const std::int64_t m = ic.numel();
  // the indices can be as many as the output elements: scan_range runs in parallel then
  const RangeScan scan = scan_range(p, m, 0, n);
  if (scan.first_bad >= 0) throw Error(op, "index " + std::to_string(p[scan.first_bad]) + suffix());
  return nullptr;
}

}  // namespace
}  // namespace detail

// ---- index_select / gather ---------------------------------------------------------------------------------
namespace detail {
namespace {

// Note [index in backward]
// An index op's backward reads the index its forward read, and the forward checked its values: the host read
// them, or (an index on a GPU) waited for their min and max. A second check in the backward would be a second
// wait per index op in every training step, so the backward trusts the index, kept with its storage version.
// A backward that finds that version changed (the index was written in place since) refuses to run, as it does
// for a saved tensor (SavedVariable): the values are no longer the ones checked, nor the ones the forward used.
// Inside a CUDA graph capture the forward's check runs on the device at each replay and reports only after it,
// and deferred checks (Note [deferred device checks]) report at a later synchronization; so there the backward
// keeps its own device check, which keeps a bad index from being read.

/// Whether the backward of `op` may skip the range check of `index`, kept at storage version `version` by a
/// forward that checked it (`trusted`: the caller built it in range). Throws when it changed since.
bool backward_trusts(const Tensor& index, std::uint64_t version, bool trusted, const char* op) {
  if (index.version() != version)
    throw Error(op, "the index of shape " + shape_str(index.shape()) +
                        " was modified by an in-place operation after the forward: it had version " +
                        std::to_string(version) + ", now " + std::to_string(index.version()));
  return trusted || !cuda::detail::checks_on_device(index.device());
}

/// What a scatter does with the values landing on an element (mean: their sum divided by their count).
enum class Reduce { replace, sum, prod, mean, amax, amin };

/// The sum of src landing in x (index per element or 1-D), the adjoint of gather and index_select (defined below).
Tensor scatter_sum(const Tensor& x, std::int64_t d, const Tensor& index, bool per_element, const Tensor& src, bool trusted);

/// index_select; `trusted` (the caller built the index in range) skips a GPU index's range check, here and
/// in the gradient.
Tensor index_select_impl(const Tensor& x, std::int64_t dim, const Tensor& index, bool trusted) {
  if (x.dim() == 0) throw Error("index_select", "cannot index a 0-d tensor");
  const auto d = wrap_dim(dim, x.dim(), "index_select");
  check_index_kind(index, "index_select");
  // the index is an input (no gradient): the forward checks and reads its values (Note [replayable forwards])
  return apply_op(
      "index_select", {x, index}, kSaveInput(1),
      [d, trusted](In in) {
        const AlongIndex idx = along_index(in[1], in[0].size(d), in[0].device(), trusted, "index_select");
        Shape s = in[0].shape();
        s[static_cast<std::size_t>(d)] = idx.count;
        Tensor out = make_tensor(s, in[0].dtype(), in[0].device());
        index_select_kernel(out, in[0], d, idx);
        return out;
      },
      [d, trusted](const Ctx& c, const G& g) {  // the index its forward read (a replay's too: Note [replayable forwards])
        const Tensor index = c.input(1);
        const bool t = backward_trusts(index, index.version(), trusted, "index_select");
        return G{scatter_sum(zeros(c.input_shape(0), g[0].dtype(), g[0].device()), d, index, false, g[0], t), Tensor()};
      });
}

/// gather; `trusted` as index_select_impl's.
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
  check_gather_shapes(x, d, index, nullptr, "gather");
  // the index is an input (no gradient): the forward checks and reads its values (Note [replayable forwards])
  return apply_op(
      "gather", {x, index}, kSaveInput(1),
      [d, trusted](In in) {
        const std::uint64_t* checks = check_gather_values(in[0].size(d), d, in[1], "gather", trusted);
        Tensor out = make_tensor(in[1].shape(), in[0].dtype(), in[0].device());
        gather_kernel(out, in[0], d, in[1], checks);
        return out;
      },
      [d, trusted](const Ctx& c, const G& g) {
        const Tensor index = c.input(1);
        const bool t = backward_trusts(index, index.version(), trusted, "gather");
        return G{scatter_sum(zeros(c.input_shape(0), g[0].dtype(), g[0].device()), d, index, true, g[0], t), Tensor()};
      });
}

}  // namespace
}  // namespace detail

// ---- the scatters: index_add, index_copy, index_reduce, scatter, scatter_add, scatter_reduce ---------------
//
// Note [scatter reductions]
// All six are one op, Scatter: a copy of x with src's values landing on it along dim d, at the positions of a
// 1-D index shared by every position of the other dims (index_*) or of an index per element (scatter*, the
// shape of gather's index), combined as scatter_combine of one ScatterKind (core/scatter_rules.hpp; mean is a
// sum). At each position of the other dims the kernels walk the index in order on every device, so a repeated
// index combines in a fixed order and the last replacement wins (only the GPU's atomic path for few long
// lines, see cuda/index.hpp, sums and multiplies in no fixed order). include_self = false first writes the
// kind's identity where a value lands; mean then divides by the count that landed (plus one for self),
// rounding integers down, as torch.
// The gradient is written once for both index forms with pull (gather / index_select: an element's target)
// and push (the scatter itself), so it has a gradient of its own (double backward):
//   replace: x gets g where nothing landed; a src element gets its target's g when it is the last to land there;
//   sum: x gets g (where nothing landed, without include_self); src gets pull(g);
//   mean: the same divided by the count;
//   amax, amin: g split evenly among the elements equal to the result (x counts when include_self, or where
//   nothing landed), a subgradient at ties as torch's;
//   prod: g times the product of the others in the group, exact with zeros (Note [prod gradient with zeros]).
namespace detail {
namespace {

const char* reduce_name(Reduce r) {
  switch (r) {
    case Reduce::replace: return "replace";
    case Reduce::sum: return "sum";
    case Reduce::prod: return "prod";
    case Reduce::mean: return "mean";
    case Reduce::amax: return "amax";
    case Reduce::amin: return "amin";
  }
  return "?";
}

/// The reduce named by torch's string.
Reduce parse_reduce(const std::string& s, const char* op) {
  for (Reduce r : {Reduce::sum, Reduce::prod, Reduce::mean, Reduce::amax, Reduce::amin})
    if (s == reduce_name(r)) return r;
  throw Error(op, "reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"" + s + "\"");
}

ScatterKind kind_of(Reduce r) {
  switch (r) {
    case Reduce::replace: return ScatterKind::Replace;
    case Reduce::prod: return ScatterKind::Prod;
    case Reduce::amax: return ScatterKind::Max;
    case Reduce::amin: return ScatterKind::Min;
    default: return ScatterKind::Sum;
  }
}

/// The value of kind k that leaves whatever combines with it unchanged, as a 0-d tensor of dt on dev.
Tensor identity_of(ScatterKind k, Dtype dt, Device dev) {
  const bool is_bool = dt == Dtype::Bool, is_int = dt == Dtype::Int64;
  Scalar v = 0;
  if (k == ScatterKind::Prod) v = 1;
  if (k == ScatterKind::Max)
    v = is_bool ? Scalar(false) : is_int ? Scalar(std::numeric_limits<std::int64_t>::min()) : Scalar(-INFINITY);
  if (k == ScatterKind::Min)
    v = is_bool ? Scalar(true) : is_int ? Scalar(std::numeric_limits<std::int64_t>::max()) : Scalar(INFINITY);
  return full({}, v, dt, dev);
}

struct ScatterSpec;
Tensor scatter_apply(const ScatterSpec& S, const Tensor& x, const Tensor& src);
ScatterSpec make_scatter(const Tensor& x, std::int64_t dim, const Tensor& index, bool per_element, const Tensor& src,
                         Reduce reduce, bool include_self, bool trusted, const char* op);

/// What a scatter does (Note [scatter reductions]): all its gradient needs, so cheap to copy.
struct ScatterSpec {
  const char* op = "";
  std::int64_t d = 0;
  Tensor index;               ///< the caller's index
  bool per_element = false;   ///< index per element (scatter*) or 1-D along d (index_*)
  bool trusted = false;       ///< the index was built in range: no check (here, in pull and push)
  std::uint64_t version = 0;  ///< the index's storage version when checked (Note [index in backward])
  Reduce reduce = Reduce::sum;
  bool include_self = true;
  Shape land;                 ///< the shape of the values that land (the index's or src's)

  /// src viewed as the values that land (scatter* reads only the index's part of a larger src).
  Tensor landing(const Tensor& src) const {
    Tensor s = src;
    for (std::int64_t k = 0; k < s.dim(); ++k)
      if (s.size(k) != land[static_cast<std::size_t>(k)]) s = s.narrow(k, 0, land[static_cast<std::size_t>(k)]);
    return s;
  }
  /// t (x's shape) read where each landing value lands (`land`'s shape).
  Tensor pull(const Tensor& t) const { return per_element ? gather_impl(t, d, index, trusted) : index_select_impl(t, d, index, trusted); }
  /// This scatter's index applied to other tensors, differentiably.
  Tensor push(const Tensor& base, const Tensor& src, Reduce r, bool self) const;
};

/// A validated scatter with its index prepared for the kernels (prepare_scatter).
struct Scatter : ScatterSpec {
  AlongIndex along;                       ///< index_*: the index for the kernels
  const std::uint64_t* checks = nullptr;  ///< scatter*: the words of a device-side check (capture or deferred)

  /// out (x's shape and dtype) (kind)= src (`land`'s shape) with one kernel.
  void run(const Tensor& out, const Tensor& src, ScatterKind k) const {
    if (per_element) scatter_kernel(out, src, d, index, checks, k, op);
    else index_scatter_kernel(out, src, d, along, k, op);
  }
  /// The whole forward on out (a copy of x, or x itself in place) with the landing values src.
  void into(const Tensor& out, const Tensor& src) const {
    const ScatterKind k = kind_of(reduce);
    if (!include_self && reduce != Reduce::replace) run(out, identity_of(k, out.dtype(), out.device()).expand(land), ScatterKind::Replace);
    run(out, src, k);
    if (reduce != Reduce::mean) return;
    NoGradGuard ng;
    Tensor count = (include_self ? ones : zeros)(out.shape(), Dtype::Int64, out.device());
    run(count, full({}, 1, Dtype::Int64, out.device()).expand(land), ScatterKind::Sum);
    count = count.clamp_min(1);
    copy_into(out, is_floating_or_complex(out.dtype()) ? out / count.to(to_real(out.dtype())) : div(out, count, "floor"));
  }
};

Tensor ScatterSpec::push(const Tensor& base, const Tensor& src, Reduce r, bool self) const {
  return scatter_apply(make_scatter(base, d, index, per_element, src, r, self, trusted, op), base, src);
}

/// Checks all of a scatter's operands but its index's values (nothing changes on an error): those are checked by
/// prepare_scatter, in the forward (Note [replayable forwards]).
ScatterSpec make_scatter(const Tensor& x, std::int64_t dim, const Tensor& index, bool per_element, const Tensor& src,
                         Reduce reduce, bool include_self, bool trusted, const char* op) {
  if (!src.defined()) throw Error(op, "src is undefined");
  check_same_device(x, src, op);
  if (x.dim() == 0) throw Error(op, "cannot index a 0-d tensor");
  ScatterSpec S;
  S.op = op, S.index = index, S.per_element = per_element, S.trusted = trusted, S.reduce = reduce;
  S.include_self = include_self;
  S.version = index.defined() ? index.version() : 0;
  S.d = wrap_dim(dim, x.dim(), op);
  if (src.dtype() != x.dtype())
    throw Error(op, std::string("src must have the input's dtype ") + dtype_name(x.dtype()) + ", got " + dtype_name(src.dtype()));
  if (x.is_complex() && (reduce == Reduce::amax || reduce == Reduce::amin))
    throw Error(op, std::string("reduce \"") + reduce_name(reduce) + "\" is not supported for complex tensors (got " + dtype_name(x.dtype()) + ")");
  if (x.dtype() == Dtype::Bool && reduce == Reduce::mean) throw Error(op, "reduce \"mean\" is not supported for bool tensors");
  if (per_element) {
    if (index.defined() && index.dim() == x.dim() && src.dim() != x.dim())
      throw Error(op, "src of shape " + shape_str(src.shape()) + " must have as many dims as the input of shape " + shape_str(x.shape()));
    check_gather_shapes(x, S.d, index, &src, op);
    S.land = index.shape();
    return S;
  }
  check_index_kind(index, op);
  const std::int64_t count = index.numel();
  Shape want = x.shape();
  want[static_cast<std::size_t>(S.d)] = count;
  if (src.shape() != want)
    throw Error(op, "src of shape " + shape_str(src.shape()) + " does not match " + shape_str(want) + " (the input of shape " +
                        shape_str(x.shape()) + " with " + std::to_string(count) + " indices along dim " + std::to_string(S.d) + ")");
  S.land = std::move(want);
  return S;
}

/// The scatter `spec` of `index` into a tensor of x's shape and device, its index's values checked and prepared for
/// the kernels.
Scatter prepare_scatter(const ScatterSpec& spec, const Tensor& x, const Tensor& index) {
  Scatter S;
  static_cast<ScatterSpec&>(S) = spec;
  S.index = index;
  if (S.per_element) S.checks = check_gather_values(x.size(S.d), S.d, index, S.op, S.trusted);
  else S.along = along_index(index, x.size(S.d), x.device(), S.trusted, S.op);
  return S;
}

/// The gradients of x and src (the landing values) of Note [scatter reductions]; the index is trusted as Note
/// [index in backward].
G scatter_backward(ScatterSpec S, const Ctx& c, const Tensor& g) {
  S.trusted = backward_trusts(S.index, S.version, S.trusted, S.op);
  const bool want_x = c.needs_grad(0), want_s = c.needs_grad(1);
  const Dtype rd = to_real(g.dtype());
  const Device dev = g.device();
  const Shape xs = c.input_shape(0);
  const Tensor zero = zero_scalar_like(g);
  // the number of values landing on each element (int64, a constant)
  const auto landed = [&] {
    NoGradGuard ng;
    return S.push(zeros(xs, Dtype::Int64, dev), full({}, 1, Dtype::Int64, dev).expand(S.land), Reduce::sum, true);
  };
  Tensor gx, gs;
  switch (S.reduce) {
    case Reduce::replace: {
      Tensor k, last;  // each landing value's step along d; the last step landing on each element (-1: none)
      {
        NoGradGuard ng;
        Shape ks(S.land.size(), 1);
        ks[static_cast<std::size_t>(S.d)] = S.land[static_cast<std::size_t>(S.d)];
        k = arange(ks[static_cast<std::size_t>(S.d)], Dtype::Int64, dev).reshape(ks).expand(S.land);
        last = S.push(full(xs, -1, Dtype::Int64, dev), k, Reduce::amax, true);
      }
      if (want_x) gx = where(last >= 0, zero, g);
      if (want_s) gs = where(S.pull(last) == k, S.pull(g), zero);
      break;
    }
    case Reduce::sum:
      if (want_x) gx = S.include_self ? g : where(landed() > 0, zero, g);
      if (want_s) gs = S.pull(g);
      break;
    case Reduce::mean: {
      const Tensor n = landed();
      const Tensor q = g / (S.include_self ? n + 1 : n.clamp_min(1)).to(rd);
      if (want_x) gx = S.include_self ? q : where(n > 0, zero, g);
      if (want_s) gs = S.pull(q);
      break;
    }
    case Reduce::amax:
    case Reduce::amin: {
      Tensor self_in, src_in, n;  // which elements equal the result; how many per group
      {
        NoGradGuard ng;
        const Tensor r = c.output(0).detach();
        self_in = S.include_self ? c.input(0).detach() == r : landed() == 0;
        src_in = c.input(1).detach() == S.pull(r);
        n = S.push(self_in.to(rd), src_in.to(rd), Reduce::sum, true);
      }
      if (want_x) gx = where(self_in, g / n, zero);
      if (want_s) gs = where(src_in, S.pull(g / n), zero);
      break;
    }
    case Reduce::prod: {
      const Tensor x = c.input(0), s = c.input(1), r = c.output(0);
      Tensor mx, ms, cnt;  // the zeros of x (when they count) and of src; the zeros per group
      // traced, no host read picks the formula: both, selected per group by where (as prod_others, Note [prod
      // gradient with zeros])
      const bool value_free = tracing();
      bool has_zeros = value_free;
      {
        NoGradGuard ng;
        mx = S.include_self ? (x.detach() == 0.0).to(rd) : zeros(xs, rd, dev);
        ms = (s.detach() == 0.0).to(rd);
        cnt = S.push(mx, ms, Reduce::sum, true);
        if (!value_free) has_zeros = cnt.sum().item<double>() != 0;
      }
      // each member's product of the others in its group: r / member without zeros; otherwise as Note [prod
      // gradient with zeros], with y = e + m, P the product of the y and s the sum of the zero members
      Tensor P, Sz;
      if (has_zeros) {
        P = S.push(x + mx, s + ms, Reduce::prod, S.include_self);
        Sz = S.push(x * mx, s * ms, Reduce::sum, S.include_self);
      }
      const auto others = [&](const Tensor& e, const Tensor& m, const Tensor& pr, const Tensor& Pg, const Tensor& Sg,
                              const Tensor& cg) {
        if (!has_zeros) return pr / e;
        Tensor A, B, C, none;
        {
          NoGradGuard ng;
          const Tensor c1 = (cg == 1.0).to(rd);
          A = (cg == 0.0).to(rd) + c1 * m;
          B = c1 * (1.0 - m);
          C = (cg == 2.0).to(rd) * m;
          if (value_free) none = cg == 0.0;
        }
        const Tensor y = e + m, o = Pg / y * (A + B * Sg + C * (Sg - e));
        return value_free ? where(none, pr / y, o) : o;
      };
      if (want_x) gx = S.include_self ? g * others(x, mx, r, P, Sz, cnt).conj() : where(landed() > 0, zero, g);
      if (want_s)
        gs = S.pull(g) * others(s, ms, S.pull(r), has_zeros ? S.pull(P) : P, has_zeros ? S.pull(Sz) : Sz, S.pull(cnt)).conj();
      break;
    }
  }
  return G{gx, gs};
}

/// The scatter S of src into a copy of x, with its gradient. The index is the third input (no gradient): the
/// forward checks and reads its values (Note [replayable forwards]).
Tensor scatter_apply(const ScatterSpec& S, const Tensor& x, const Tensor& src) {
  const bool reads = S.reduce == Reduce::prod || S.reduce == Reduce::amax || S.reduce == Reduce::amin;
  ScatterSpec forward = S;
  forward.index = Tensor();  // read as in[2]
  return apply_op(
      S.op, {x, S.landing(src), S.index}, reads ? kSaveInputs | kSaveOutputs : kSaveInput(2),
      [forward](In in) {
        const Scatter P = prepare_scatter(forward, in[0], in[2]);
        Tensor out = in[0].clone();
        P.into(out, in[1]);
        return out;
      },
      [spec = forward](const Ctx& c, const G& g) {
        ScatterSpec s = spec;  // with the index its forward read (a replay's too: Note [replayable forwards])
        s.index = c.input(2);
        s.version = s.index.version();
        G r = scatter_backward(s, c, g[0]);
        r.emplace_back();  // the index
        return r;
      });
}

Tensor scatter_sum(const Tensor& x, std::int64_t d, const Tensor& index, bool per_element, const Tensor& src, bool trusted) {
  const char* op = per_element ? "scatter_add" : "index_add";
  return scatter_apply(make_scatter(x, d, index, per_element, src, Reduce::sum, true, trusted, op), x, src);
}

/// A scatter* op (index per element) of x; a 0-d x is a 1-element one.
Tensor scatter_op(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, Reduce reduce,
                  bool include_self, bool trusted, const char* op) {
  if (x.dim() == 0 && src.defined()) {
    wrap_dim(dim, 0, op);
    if (!index.defined() || index.dim() != 0 || src.dim() > 1 || src.numel() < 1)
      throw Error(op, "a 0-d input needs a 0-d index and a non-empty src of at most 1 dim");
    return composite(op, {x, src}, [&] {
      return scatter_op(x.reshape({1}), 0, index.reshape({1}), src.reshape({-1}).narrow(0, 0, 1), reduce, include_self,
                        trusted, op).reshape({});
    });
  }
  return scatter_apply(make_scatter(x, dim, index, true, src, reduce, include_self, trusted, op), x, src);
}

/// An index_* op (1-D index along dim) of x.
Tensor index_op(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, Reduce reduce,
                bool include_self, bool trusted, const char* op) {
  return scatter_apply(make_scatter(x, dim, index, false, src, reduce, include_self, trusted, op), x, src);
}

/// alpha * s (s itself when alpha is 1; alpha must fit s's dtype).
Tensor scaled(const Tensor& s, const Scalar& alpha, const char* op) {
  if (alpha.is_integral() && alpha.to_int() == 1) return s;
  if (!is_floating_or_complex(s.dtype()) && !alpha.is_integral())
    throw Error(op, std::string("alpha must be an integer for a ") + dtype_name(s.dtype()) + " tensor, got " +
                        std::to_string(alpha.to_double()));
  check_scalar_fits(alpha, s.dtype(), op);
  return (s * alpha).to(s.dtype());
}

/// `value` of x's dtype as src for a scatter into x: a 0-d tensor expanded to the index's shape.
Tensor value_src(const Tensor& x, std::int64_t dim, const Tensor& index, const Scalar& value, const char* op) {
  check_scalar_fits(value, x.dtype(), op);
  if (x.dim() > 0) check_gather_shapes(x, wrap_dim(dim, x.dim(), op), index, nullptr, op);
  if (!index.defined()) throw Error(op, "index is undefined");
  return full({}, value, x.dtype(), x.device()).expand(index.shape());
}

/// Runs a scatter in place on self (Note [in-place and autograd]): the kernels write self directly when no
/// graph is recorded; `op(t)` is the out-of-place form.
template <class Op>
Tensor& scatter_inplace(const char* name, Tensor& self, const ScatterSpec& S, const Tensor& src, Op&& op) {
  const Tensor s = S.landing(src);
  return apply_inplace(name, self, {S.index, s}, [&] { prepare_scatter(S, self, S.index).into(self, s); },
                       std::forward<Op>(op));
}

}  // namespace

Tensor index_select_trusted(const Tensor& x, std::int64_t dim, const Tensor& index) {
  return index_select_impl(x, dim, index, true);
}

Tensor index_add_trusted(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return index_op(x, dim, index, src_as(src, x.dtype(), "index_add"), Reduce::sum, true, true, "index_add");
}

Tensor index_copy_trusted(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return index_op(x, dim, index, src, Reduce::replace, true, true, "index_copy");
}

Tensor gather_trusted(const Tensor& x, std::int64_t dim, const Tensor& index) { return gather_impl(x, dim, index, true); }

}  // namespace detail

using detail::Reduce;

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  return detail::index_select_impl(x, dim, index, false);
}

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) { return detail::gather_impl(x, dim, index, false); }

Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  if (!src.defined()) throw Error("index_add", "src is undefined");
  const Tensor s = detail::src_as(src, x.dtype(), "index_add");
  return detail::index_op(x, dim, index, detail::scaled(s, alpha, "index_add"), Reduce::sum, true, false, "index_add");
}

Tensor index_copy(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source) {
  return detail::index_op(x, dim, index, source, Reduce::replace, true, false, "index_copy");
}

Tensor index_reduce(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self) {
  return detail::index_op(x, dim, index, source, detail::parse_reduce(reduce, "index_reduce"), include_self, false,
                          "index_reduce");
}

Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::scatter_op(x, dim, index, src, Reduce::replace, true, false, "scatter");
}

Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter(x, dim, index, detail::value_src(x, dim, index, value, "scatter"));
}

Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  if (!src.defined()) throw Error("scatter_add", "src is undefined");
  return detail::scatter_op(x, dim, index, detail::src_as(src, x.dtype(), "scatter_add"), Reduce::sum, true, false,
                            "scatter_add");
}

Tensor scatter_reduce(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  return detail::scatter_op(x, dim, index, src, detail::parse_reduce(reduce, "scatter_reduce"), include_self, false,
                            "scatter_reduce");
}

// ---- in-place forms --------------------------------------------------------------------------------------------
// The scatters write self directly when nothing is recorded; a 0-d self goes through the out-of-place form.

namespace detail {
namespace {

/// In-place scatter* of src into self.
Tensor& scatter_self(Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src, Reduce reduce,
                     bool include_self, const char* name, const char* op) {
  if (self.dim() == 0)
    return inplace_from(name, self, {index, src}, [&](const Tensor& a) { return scatter_op(a, dim, index, src, reduce, include_self, false, op); });
  const ScatterSpec S = make_scatter(self, dim, index, true, src, reduce, include_self, false, op);
  return scatter_inplace(name, self, S, src, [&](const Tensor& a) { return scatter_apply(S, a, src); });
}

/// In-place index_* of src into self.
Tensor& index_self(Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src, Reduce reduce,
                   bool include_self, const char* name, const char* op) {
  const ScatterSpec S = make_scatter(self, dim, index, false, src, reduce, include_self, false, op);
  return scatter_inplace(name, self, S, src, [&](const Tensor& a) { return scatter_apply(S, a, src); });
}

}  // namespace
}  // namespace detail

Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::scatter_self(*this, dim, index, src, Reduce::replace, true, "scatter_", "scatter");
}

Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_(dim, index, detail::value_src(*this, dim, index, value, "scatter_"));
}

Tensor& Tensor::scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  if (!src.defined()) throw Error("scatter_add_", "src is undefined");
  return detail::scatter_self(*this, dim, index, detail::src_as(src, dtype(), "scatter_add_"), Reduce::sum, true,
                              "scatter_add_", "scatter_add");
}

Tensor& Tensor::scatter_reduce_(std::int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                                bool include_self) {
  return detail::scatter_self(*this, dim, index, src, detail::parse_reduce(reduce, "scatter_reduce_"), include_self,
                              "scatter_reduce_", "scatter_reduce");
}

Tensor& Tensor::index_add_(std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  if (!src.defined()) throw Error("index_add_", "src is undefined");
  const Tensor s = detail::src_as(src, dtype(), "index_add_");
  return detail::index_self(*this, dim, index, detail::scaled(s, alpha, "index_add_"), Reduce::sum, true, "index_add_",
                            "index_add");
}

// ---- the methods ----------------------------------------------------------------------------------------------
Tensor Tensor::index_select(std::int64_t dim, const Tensor& index) const { return phasor::index_select(*this, dim, index); }
Tensor Tensor::gather(std::int64_t dim, const Tensor& index) const { return phasor::gather(*this, dim, index); }
Tensor Tensor::index_add(std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) const {
  return phasor::index_add(*this, dim, index, src, alpha);
}
Tensor Tensor::index_copy(std::int64_t dim, const Tensor& index, const Tensor& source) const {
  return phasor::index_copy(*this, dim, index, source);
}
Tensor Tensor::index_reduce(std::int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                            bool include_self) const {
  return phasor::index_reduce(*this, dim, index, source, reduce, include_self);
}
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const { return phasor::scatter(*this, dim, index, src); }
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, const Scalar& value) const {
  return phasor::scatter(*this, dim, index, value);
}
Tensor Tensor::scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const {
  return phasor::scatter_add(*this, dim, index, src);
}
Tensor Tensor::scatter_reduce(std::int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                              bool include_self) const {
  return phasor::scatter_reduce(*this, dim, index, src, reduce, include_self);
}

Tensor& Tensor::index_copy_(std::int64_t dim, const Tensor& index, const Tensor& source) {
  return detail::index_self(*this, dim, index, source, Reduce::replace, true, "index_copy_", "index_copy");
}

Tensor& Tensor::index_reduce_(std::int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                              bool include_self) {
  return detail::index_self(*this, dim, index, source, detail::parse_reduce(reduce, "index_reduce_"), include_self,
                            "index_reduce_", "index_reduce");
}

}  // namespace phasor
