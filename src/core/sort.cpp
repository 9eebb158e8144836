// src/core/sort.cpp - sort, argsort, topk, msort and what reads a sort: kthvalue, median, nanmedian,
// quantile, nanquantile; searchsorted and bucketize (the binary search of core/sort_rules.hpp).
//
// Note [sort order]
// One order on every device: ascending puts NaN after every number, descending before; equal keys (+0 and -0,
// two NaNs) keep their input order, so a sort is always stable and its indices are one answer on the CPU (a
// stable merge sort per line) and on a GPU (a bitonic network over (key, position) pairs, cuda/sort.cu) alike.
// The kernels only make the indices; the values are a gather of x at them, so the gradient is gather's
// (a scatter of the incoming gradient back to the sorted positions) on any device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "core/promotion.hpp"
#include "core/reduce.hpp"
#include "core/sort_rules.hpp"
#include "core/pointwise.hpp"
#include "cuda/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace detail {
namespace {

// Note [radix sort]
// A long line sorts by the bits of order-preserving unsigned keys: floats with -0 as +0 and the sign folded
// (negative ones complemented, positive ones with the top bit set), every NaN one key above +inf, int64 with
// its sign bit flipped; complemented for descending, which puts NaN first. A least-significant-digit radix
// sort (8-bit digits, a pass skipped where all keys share its digit) of (key, position) pairs is stable, so it
// gives the stable sort's answer (Note [sort order]) in 4 (float32) or 8 passes over the data, in per-thread
// buffers kept across calls for lines up to 4M elements (fresh ones cost more in page faults than the sort):
// 1M float32 took 134 ms as a comparison sort of positions into the line, 100 ms as one of (key, position)
// pairs, 15 ms so (torch 1.13: 95 ms). Lines shorter than kRadixMin sort their (key, position) pairs by comparisons.

/// The shortest line the radix sort takes: below it, its 256-bucket passes cost more than comparisons.
constexpr std::int64_t kRadixMin = 512;
/// The longest line whose radix buffers a thread keeps for the next sort (at most 64 MiB of them).
constexpr std::int64_t kKeptRadix = std::int64_t{1} << 22;

/// The radix key of v (Note [radix sort]).
template <class T>
auto radix_key(T v, bool descending) {
  if constexpr (std::is_same_v<T, bool>) {
    const std::uint32_t b = v ? 1u : 0u;
    return descending ? ~b : b;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    const std::uint64_t b = static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
    return descending ? ~b : b;
  } else {  // without branches on the value (random signs would mispredict half the time): selects
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    constexpr U top = U{1} << (8 * sizeof(T) - 1);
    U b;
    std::memcpy(&b, &v, sizeof b);
    b ^= (U{0} - (b >> (8 * sizeof(T) - 1))) | top;  // negative: all bits flipped; positive: the top bit set
    b = v == T(0) ? top : b;                           // -0 as +0
    b = v != v ? ~U{0} : b;                            // every NaN one key above +inf
    return descending ? ~b : b;
  }
}

/// The LSD passes of Note [radix sort] over n keys (and, with kPositions, their positions alongside), between
/// the buffers (key, key2) and (pos, pos2); the sorted ones end in key and pos (the pointers are swapped).
template <bool kPositions, class K>
void radix_passes(std::size_t n, K*& key, K*& key2, std::int64_t*& pos, std::int64_t*& pos2) {
  for (unsigned shift = 0; shift < 8 * sizeof(K); shift += 8) {
    std::size_t start[257] = {};
    for (std::size_t i = 0; i < n; ++i) ++start[((key[i] >> shift) & 255u) + 1];
    if (std::find(start + 1, start + 257, n) != start + 257) continue;  // one digit for all: nothing moves
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = start[(key[i] >> shift) & 255u]++;
      key2[at] = key[i];
      if constexpr (kPositions) pos2[at] = pos[i];
    }
    std::swap(key, key2);
    if constexpr (kPositions) std::swap(pos, pos2);
  }
}

/// Two buffers of n elements of A: a thread's kept ones (slots `slot` and slot + 1) for n up to kKeptRadix (fresh
/// ones cost more in page faults than the sort), else `own`'s, uninitialized, freed with it.
template <class A>
std::pair<A*, A*> radix_buffers(std::size_t n, int slot, std::unique_ptr<A[]>& own) {
  if (static_cast<std::int64_t>(n) <= kKeptRadix) return {thread_scratch<A>(n, slot), thread_scratch<A>(n, slot + 1)};
  own.reset(new A[2 * n]);
  return {own.get(), own.get() + n};
}

/// The first k positions of the line (n elements) in the order of Note [sort order], by a radix sort of
/// (key, position) pairs (Note [radix sort]).
template <class T>
void radix_sort_line(const T* line, std::int64_t n, std::int64_t k, bool descending, std::int64_t* out) {
  using K = decltype(radix_key(T(), false));
  const auto sz = static_cast<std::size_t>(n);
  std::unique_ptr<K[]> own_keys;
  std::unique_ptr<std::int64_t[]> own_pos;
  auto [key, key2] = radix_buffers(sz, 0, own_keys);
  auto [pos, pos2] = radix_buffers(sz, 0, own_pos);
  for (std::size_t i = 0; i < sz; ++i) key[i] = radix_key(line[i], descending), pos[i] = static_cast<std::int64_t>(i);
  radix_passes<true>(sz, key, key2, pos, pos2);
  std::copy(pos, pos + k, out);
}

/// The position of the element at rank r (0-based) of the line's ascending order (Note [sort order]) by a radix
/// selection (Note [radix sort]'s keys, most significant digit first): each pass counts the candidates' digits,
/// finds the one holding rank r and keeps only the candidates with it (the first pass reads the line; about a
/// tenth of 1M normals is left after it), until one key is left; its position is then that key's
/// (r - #smaller)-th occurrence in the line (equal keys keep their input order).
template <class T>
std::int64_t radix_select_line(const T* line, std::int64_t n, std::int64_t r) {
  using K = decltype(radix_key(T(), false));
  constexpr unsigned kTop = 8 * sizeof(K) - 8;
  std::int64_t below = 0;  // keys known to be smaller than rank r's
  // the digit holding rank r among counts c, which below then counts past
  const auto digit_of_rank = [&](const std::int64_t* c) {
    unsigned d = 0;
    while (below + c[d] <= r) below += c[d++];
    return d;
  };
  std::int64_t c[256] = {};
  for (std::int64_t i = 0; i < n; ++i) ++c[radix_key(line[i], false) >> kTop];
  const unsigned top = digit_of_rank(c);
  std::unique_ptr<K[]> own;  // one buffer of candidates: a thread's kept one, or its own for a line past kKeptRadix
  K* cand = n <= kKeptRadix ? thread_scratch<K>(static_cast<std::size_t>(n), 0) : (own.reset(new K[n]), own.get());
  std::int64_t m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const K key = radix_key(line[i], false);
    cand[m] = key;
    m += (key >> kTop) == top;
  }
  for (int shift = static_cast<int>(kTop) - 8; shift >= 0 && m > 1; shift -= 8) {
    std::fill(c, c + 256, 0);
    for (std::int64_t j = 0; j < m; ++j) ++c[(cand[j] >> shift) & 255u];
    const unsigned d = digit_of_rank(c);
    std::int64_t w = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      cand[w] = cand[j];
      w += ((cand[j] >> shift) & 255u) == d;
    }
    m = w;
  }
  const K target = cand[0];
  std::int64_t skip = r - below;  // equal keys before rank r's in the line
  for (std::int64_t i = 0; i < n; ++i)
    if (radix_key(line[i], false) == target && skip-- == 0) return i;
  return n - 1;  // not reached
}

/// The first k of the int64 positions sorting each contiguous line of `rows` (lines x n) into `out` (lines x
/// k), on the CPU: for k >= n / 4 a radix sort (Note [radix sort]) or, for a short line, a comparison sort of
/// (key, position) pairs; else a partial (heap) sort of positions. Both comparison sorts order by the keys with
/// positions breaking ties (a strict total order), so all three give the stable sort's first k.
void sort_lines_cpu(const Tensor& rows, const Tensor& out, std::int64_t n, std::int64_t k, bool descending) {
  const std::int64_t lines = n == 0 ? 0 : rows.numel() / n;
  visit_dtype(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      const T* x = static_cast<const T*>(rows.data_ptr());
      std::int64_t* idx = static_cast<std::int64_t*>(out.data_ptr());
      const int threads = lines > 1 && lines * n >= 32768 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
      for (std::int64_t r = 0; r < lines; ++r) {
        const T* line = x + r * n;
        std::int64_t* o = idx + r * k;
        if (k * 4 >= n && n >= kRadixMin) {
          radix_sort_line(line, n, k, descending, o);
        } else if (k * 4 >= n) {  // a short line: a comparison sort of (key, position) pairs, NaNs apart
          using KP = std::pair<T, std::int64_t>;
          KP* kv = thread_scratch<KP>(static_cast<std::size_t>(n), 0);
          std::int64_t* nans = thread_scratch<std::int64_t>(static_cast<std::size_t>(n), 2);
          std::int64_t m = 0, c = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            if (line[i] != line[i]) nans[c++] = i;  // NaN (never for bool and int64)
            else kv[m++] = KP(line[i], i);
          }
          if (descending)
            std::sort(kv, kv + m, [](const KP& a, const KP& b) {
              return b.first < a.first || (!(a.first < b.first) && a.second < b.second);
            });
          else
            std::sort(kv, kv + m, [](const KP& a, const KP& b) {
              return a.first < b.first || (!(b.first < a.first) && a.second < b.second);
            });
          // NaN after every number ascending, before descending (Note [sort order])
          std::int64_t w = 0;
          if (descending) w = std::copy(nans, nans + std::min(c, k), o) - o;
          for (std::int64_t j = 0; j < m && w < k; ++j) o[w++] = kv[j].second;
          if (!descending) std::copy(nans, nans + std::min(c, k - w), o + w);
        } else if (k > 0) {  // a few of many: a heap of the best k (value, position) so far, the worst on top
          using KP = std::pair<T, std::int64_t>;
          KP* heap = thread_scratch<KP>(static_cast<std::size_t>(k), 0);
          const auto before = [descending](const KP& a, const KP& b) {
            return key_before(a.first, b.first, descending) ||
                   (!key_before(b.first, a.first, descending) && a.second < b.second);
          };
          for (std::int64_t i = 0; i < k; ++i) heap[i] = KP(line[i], i);
          std::make_heap(heap, heap + k, before);
          for (std::int64_t i = k; i < n; ++i)
            if (key_before(line[i], heap[0].first, descending)) {  // a later position loses ties
              std::pop_heap(heap, heap + k, before);
              heap[k - 1] = KP(line[i], i);
              std::push_heap(heap, heap + k, before);
            }
          std::sort_heap(heap, heap + k, before);
          for (std::int64_t i = 0; i < k; ++i) o[i] = heap[i].second;
        }
      }
    }
  });
}

/// The CPU's at_rank positions without a whole sort: per line a radix selection (radix_select_line) or, for a
/// short line, std::nth_element under the stable order's strict form (ties by position): the sort's element.
Tensor select_rank_cpu(const Tensor& x, std::int64_t d, const Tensor& rank) {
  const Tensor rows = x.detach().movedim(d, -1).contiguous(), ranks = rank.movedim(d, -1).contiguous();
  const std::int64_t n = x.size(d), lines = ranks.numel();
  Tensor out = make_tensor(ranks.shape(), Dtype::Int64, x.device());
  visit_dtype(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      const T* xp = static_cast<const T*>(rows.data_ptr());
      const std::int64_t* rp = static_cast<const std::int64_t*>(ranks.data_ptr());
      std::int64_t* op = static_cast<std::int64_t*>(out.data_ptr());
      const int threads = lines > 1 && lines * n >= 32768 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
      for (std::int64_t r = 0; r < lines; ++r) {
        const T* line = xp + r * n;
        if (n >= kRadixMin) {
          op[r] = radix_select_line(line, n, rp[r]);
          continue;
        }
        std::vector<std::int64_t> p(static_cast<std::size_t>(n));
        std::iota(p.begin(), p.end(), std::int64_t{0});
        std::nth_element(p.begin(), p.begin() + rp[r], p.end(), [line](std::int64_t i, std::int64_t j) {
          return key_before(line[i], line[j], false) || (!key_before(line[j], line[i], false) && i < j);
        });
        op[r] = p[static_cast<std::size_t>(rp[r])];
      }
    }
  });
  return out.movedim(-1, d);
}

/// sort_indices' kernels, outside any step.
Tensor sort_indices_kernel(const Tensor& x, std::int64_t d, bool descending, std::int64_t k) {
  const Tensor rows = x.detach().movedim(d, -1).contiguous();
  const std::int64_t n = x.size(d);
  const bool cuda = x.device().is_cuda();
  Shape s = rows.shape();
  s.back() = cuda ? n : k;  // the GPU sorts whole lines
  Tensor out = make_tensor(s, Dtype::Int64, x.device());
  if (out.numel() > 0) {
    if (cuda) phasor::cuda::detail::sort_lines(rows, out, n, descending);
    else sort_lines_cpu(rows, out, n, k, descending);
  }
  if (cuda && k < n) out = out.narrow(-1, 0, k);
  return out.movedim(-1, d).contiguous();
}

/// The indices of the first k (of n = x.size(d)) in the sort of x along d (wrapped; x not 0-d): int64 of x's
/// shape with dim d of size k, on x's device (Note [sort order]); a step named op (Note [value steps]).
Tensor sort_indices(const Tensor& x, std::int64_t d, bool descending, std::int64_t k, const char* op) {
  check_not_complex(x, op);
  return apply_nondiff(op, {x}, [d, descending, k](TensorList in) { return sort_indices_kernel(in[0], d, descending, k); });
}


/// v printed as %g (an error's offending value).
std::string num_str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// (values, indices) of x at the per-line positions `rank` (int64, x's shape with dim d of size 1, each in
/// [0, n)) of its ascending sort along d; dim d dropped unless keepdim. The values are a gather of x.
std::tuple<Tensor, Tensor> at_rank(const Tensor& x, std::int64_t d, const Tensor& rank, bool keepdim, const char* op) {
  // the positions are a step of their own (Note [value steps]): rank's entries lie in [0, n), as the callers build them
  Tensor idx = apply_nondiff(op, {x, rank}, [d](TensorList in) {
    return in[0].device().is_cuda() ? gather_trusted(sort_indices_kernel(in[0], d, false, in[0].size(d)), d, in[1])
                                    : select_rank_cpu(in[0], d, in[1]);
  });
  Tensor v = composite(op, {x}, [&] { return gather_trusted(x, d, idx); });
  if (!keepdim) return {v.squeeze(d), idx.squeeze(d)};
  return {v, idx};
}

// Note [median and quantile]
// Both read x's ascending sort (Note [sort order]: NaNs last, in input order) at computed positions, so the
// same values and indices come on every device and the gradient is the sort's gather's. median is the lower
// median, position (n - 1) / 2; a line with NaN gives its first NaN (position n - #NaN). nanmedian and
// nanquantile count only the c numbers of a line (position (c - 1) / 2, or q (c - 1)), an all-NaN line
// giving NaN. quantile's position r = q (n - 1) (n - 1 with NaN present) is computed in double; "linear"
// interpolates lerp(x_floor(r), x_ceil(r), r - floor(r)), "midpoint" at weight 1/2, "lower", "higher" and
// "nearest" (round half to even, as torch) take one element.

/// (values, indices) of the (nan)median along d (wrapped; x not 0-d, dim d not empty).
std::tuple<Tensor, Tensor> median_along(const Tensor& x, std::int64_t d, bool keepdim, bool ignore_nan, const char* op) {
  const std::int64_t n = x.size(d);
  if (n == 0)
    throw Error(op, "cannot take the median over dim " + std::to_string(d) + " of size 0 (shape " + shape_str(x.shape()) + ")");
  Tensor rank;
  {
    NoGradGuard ng;
    Shape ks = x.shape();
    ks[static_cast<std::size_t>(d)] = 1;
    if (!is_floating(x.dtype())) {
      rank = full(ks, (n - 1) / 2, Dtype::Int64, x.device());
    } else {
      const Tensor nans = x.detach().isnan().sum({d}, true);
      rank = ignore_nan ? floor_divide(clamp_min(n - nans - 1, 0), 2)  // over the numbers; 0 (a NaN) for none
                        : where(nans > 0, n - nans, Scalar((n - 1) / 2));
    }
  }
  return at_rank(x, d, rank, keepdim, op);
}

/// The whole-tensor (nan)median: 0-d, NaN for an empty floating x.
Tensor median_all(const Tensor& x, bool ignore_nan, const char* op) {
  check_not_complex(x, op);
  if (x.numel() == 0) {
    if (!is_floating(x.dtype())) throw Error(op, "cannot take the median of an empty " + std::string(dtype_name(x.dtype())) + " tensor");
    return composite(op, {x}, [&] { return full({}, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device()) + x.sum() * 0.0; });
  }
  return std::get<0>(median_along(x.reshape({-1}), 0, false, ignore_nan, op));
}

/// (nan)median along an optional dim: 0-d x gives itself and index 0.
std::tuple<Tensor, Tensor> median_dim(const Tensor& x, std::int64_t dim, bool keepdim, bool ignore_nan, const char* op) {
  const std::int64_t d = wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), op);
  check_not_complex(x, op);
  if (x.dim() == 0) return {composite(op, {x}, [&] { return x.clone(); }), zeros({}, Dtype::Int64, x.device())};
  return median_along(x, d, keepdim, ignore_nan, op);
}

/// (nan)quantile of x at q (0-d or 1-d floating, x's device) along dim (the flattened x when none), Note
/// [median and quantile]; the q dim comes first, dropped for a 0-d q.
Tensor quantile_impl(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                     const std::string& interpolation, bool ignore_nan, const char* op) {
  if (!is_floating(x.dtype()))
    throw Error(op, std::string("expected a float32 or float64 input, got ") + dtype_name(x.dtype()));
  if (!q.defined() || q.dim() > 1 || !is_floating(q.dtype()))
    throw Error(op, "q must be a 0-d or 1-d float32 or float64 tensor, got " +
                        (q.defined() ? std::string(dtype_name(q.dtype())) + " of shape " + shape_str(q.shape()) : "undefined"));
  check_same_device(x, q, op);
  if (interpolation != "linear" && interpolation != "lower" && interpolation != "higher" &&
      interpolation != "midpoint" && interpolation != "nearest")
    throw Error(op, "interpolation must be \"linear\", \"lower\", \"higher\", \"midpoint\" or \"nearest\", got \"" +
                        interpolation + "\"");
  const Tensor xs = dim ? (x.dim() == 0 ? x.reshape({1}) : x) : x.reshape({-1});
  const std::int64_t d = dim ? wrap_dim(*dim, std::max<std::int64_t>(x.dim(), 1), op) : 0;
  const std::int64_t n = xs.size(d);
  if (n == 0) throw Error(op, "input is empty along the reduced dim (shape " + shape_str(x.shape()) + ")");
  // q as float64, its values checked in a step of their own, so that a replay checks its q too (Note [value steps])
  const Tensor qd = apply_nondiff(op, {q}, [op](TensorList in) {
    const Tensor qf = in[0].detach().to(Dtype::Float64).reshape({-1});
    const Tensor bad = logical_or(logical_or(qf < 0.0, qf > 1.0), qf.isnan());
    check_device_value(
        op, bad.any(), [&] { return std::pair<Tensor, Tensor>{first_where(qf, bad), Tensor()}; },
        [](double v, double) { return "q values must lie in [0, 1], got " + num_str(v); });
    return qf;
  });
  // positions in the sorted lines (..., Q), in double
  Tensor lo, hi, w;
  {
    NoGradGuard ng;
    const Tensor nans = xs.detach().isnan().sum({d}, true).movedim(d, -1).to(Dtype::Float64);  // (..., 1)
    Tensor r = ignore_nan ? clamp_min(qd * (n - nans - 1.0), 0.0) : where(nans > 0.0, Scalar(double(n - 1)), qd * double(n - 1));
    r = clamp(r, 0.0, double(n - 1));  // q checked above; the clamp keeps a capture's replay in range
    if (interpolation == "nearest") r = r.round();
    lo = interpolation == "higher" ? r.ceil() : r.floor();
    hi = r.ceil();
    w = interpolation == "midpoint" ? full_like(r, 0.5) : r - lo;
    lo = lo.to(Dtype::Int64), hi = hi.to(Dtype::Int64), w = w.to(x.dtype());
  }
  const bool one_element = interpolation == "lower" || interpolation == "higher" || interpolation == "nearest";
  Tensor out = composite(op, {x}, [&] {
    const Tensor sl = std::get<0>(sort(xs, d)).movedim(d, -1);  // (..., n)
    const Tensor vlo = gather_trusted(sl, -1, lo);
    return one_element ? vlo : lerp(vlo, gather_trusted(sl, -1, hi), w);
  });
  out = out.movedim(-1, 0);  // (Q, ...)
  if (keepdim) {
    if (dim) {
      if (x.dim() > 0) out = out.unsqueeze(d + 1);
    } else {
      Shape ks(static_cast<std::size_t>(x.dim()) + 1, 1);
      ks[0] = out.size(0);
      out = out.reshape(ks);
    }
  }
  return q.dim() == 0 ? out.squeeze(0) : out;
}

/// A number q as a 0-d float64 tensor on `device`, checked to lie in [0, 1].
Tensor quantile_scalar(double q, Device device, const char* op) {
  if (!(q >= 0.0 && q <= 1.0)) throw Error(op, "q must lie in [0, 1], got " + num_str(q));
  return full({}, q, Dtype::Float64, device);
}

// Note [searchsorted by merging]
// A binary search per value costs log2(m) reads scattered over the line (1M values into 1M: about 20 cache misses
// each, 219 ms; torch 1.13: 193 ms). When a line has many values (k >= 512 and 8 k >= m) the CPU instead sorts
// them (Note [radix sort], positions kept) and walks the line once beside them: the position only grows with the
// value, so each value's answer is where the walk stands, under the same comparisons as sorted_position (NaN after
// the numbers, -0 equal to +0), and so the same answer for a sorted line.

Tensor search_kernel(const Tensor& seq_in, const Tensor& values, const Tensor& sorter, bool right);

/// searchsorted's work: where each element of `values` goes in its line of seq (sorted along its last dim).
Tensor search_impl(const Tensor& seq_in, const Tensor& values, bool right, const std::optional<std::string>& side,
                   const Tensor& sorter) {
  const char* op = "searchsorted";
  if (side) {
    if (*side != "left" && *side != "right") throw Error(op, "side must be \"left\" or \"right\", got \"" + *side + "\"");
    if (right && *side == "left") throw Error(op, "side and right can't be set to opposites (side \"left\", right true)");
    right = *side == "right";
  }
  if (sorter.defined()) check_same_device({seq_in, values, sorter}, op);
  else check_same_device(seq_in, values, op);
  if (seq_in.dim() == 0) throw Error(op, "the sorted sequence must have at least 1 dim, got a 0-d tensor");
  if (seq_in.is_complex() || values.is_complex())
    throw Error(op, std::string("not supported for complex tensors (got ") + dtype_name(seq_in.dtype()) + " and " +
                        dtype_name(values.dtype()) + ")");
  if (seq_in.dim() > 1) {
    bool ok = values.dim() == seq_in.dim();
    for (std::int64_t i = 0; ok && i + 1 < seq_in.dim(); ++i) ok = values.size(i) == seq_in.size(i);
    if (!ok)
      throw Error(op, "the sorted sequence's leading dims must match the values' (sequence shape " + shape_str(seq_in.shape()) +
                          ", values shape " + shape_str(values.shape()) + ")");
  }
  if (sorter.defined() && (sorter.dtype() != Dtype::Int64 || sorter.shape() != seq_in.shape()))
    throw Error(op, "sorter must be an int64 tensor of the sequence's shape " + shape_str(seq_in.shape()) + ", got " +
                        dtype_name(sorter.dtype()) + " of shape " + shape_str(sorter.shape()));
  // the search, and the check of the sorter's values, as one step (Note [value steps])
  const auto search = [right](TensorList in) { return search_kernel(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), right); };
  if (sorter.defined()) return apply_nondiff(op, {seq_in, values, sorter}, search);
  return apply_nondiff(op, {seq_in, values}, search);
}

/// search_impl's work on checked arguments (sorter undefined or checked but for its values).
Tensor search_kernel(const Tensor& seq_in, const Tensor& values, const Tensor& sorter, bool right) {
  const char* op = "searchsorted";
  const std::int64_t m = seq_in.size(-1);
  Tensor seq = seq_in.detach();
  if (sorter.defined()) {
    check_index_values(sorter, 0, m, "for a sequence of " + std::to_string(m), op, "sorter index");
    seq = gather_trusted(seq, -1, sorter.clamp(0, std::max<std::int64_t>(m - 1, 0)));
  }
  const Dtype dt = promote_types(seq.dtype(), values.dtype());
  const Tensor s = seq.to(dt).contiguous(), v = values.detach().to(dt).contiguous();
  Tensor out = make_tensor(values.shape(), Dtype::Int64, values.device());
  if (out.numel() == 0) return out;
  if (m == 0) return out.zero_();
  const std::int64_t k = seq.dim() == 1 ? v.numel() : v.size(-1);  // values per line
  if (out.device().is_cuda()) {
    phasor::cuda::detail::search_sorted(s, v, out, m, k, right);
    return out;
  }
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      const T* sp = static_cast<const T*>(s.data_ptr());
      const T* vp = static_cast<const T*>(v.data_ptr());
      std::int64_t* op_ = static_cast<std::int64_t*>(out.data_ptr());
      const std::int64_t count = out.numel();
      if (k >= kRadixMin && k * 8 >= m) {  // many values per line: Note [searchsorted by merging]
        const std::int64_t lines = count / k;
        const int threads = lines > 1 && count >= 16384 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
        for (std::int64_t r = 0; r < lines; ++r) {
          const T* line = sp + r * m;
          const T* vals = vp + r * k;
          std::int64_t* o = op_ + r * k;
          std::int64_t* order = thread_scratch<std::int64_t>(static_cast<std::size_t>(k), 2);
          radix_sort_line(vals, k, k, false, order);
          std::int64_t j = 0;
          for (std::int64_t q = 0; q < k; ++q) {
            const T v = vals[order[q]];
            while (j < m && (right ? !key_before(v, line[j], false) : key_before(line[j], v, false))) ++j;
            o[order[q]] = j;
          }
        }
        return;
      }
      const int threads = count >= 16384 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t t = 0; t < count; ++t) op_[t] = sorted_position(sp + (t / k) * m, m, 1, vp[t], right);
    }
  });
  return out;
}

/// The value whose radix key (ascending) is b: the inverse of radix_key but for -0 (+0) and NaN (one NaN).
template <class T, class K>
T from_radix_key(K b) {
  if constexpr (std::is_same_v<T, bool>) {
    return b != 0;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return static_cast<std::int64_t>(b ^ (std::uint64_t{1} << 63));
  } else {
    constexpr K top = K{1} << (8 * sizeof(K) - 1);
    const K bits = (b & top) ? (b ^ top) : ~b;
    T v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
}

}  // namespace

std::pair<Tensor, Tensor> unique_values_cpu(const Tensor& flat, bool with_counts) {
  const std::int64_t n = flat.numel();
  Tensor values, counts;
  visit_dtype(flat.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      using K = decltype(radix_key(T(), false));
      const T* x = flat.data<T>();
      const auto sz = static_cast<std::size_t>(n);
      std::unique_ptr<K[]> own;
      auto [key, key2] = radix_buffers(sz, 0, own);
      for (std::size_t i = 0; i < sz; ++i) key[i] = radix_key(x[i], false);
      std::int64_t* no_pos = nullptr;
      radix_passes<false>(sz, key, key2, no_pos, no_pos);
      // runs of equal keys; NaNs (the largest key, last) one value each
      std::vector<T> v;
      std::vector<std::int64_t> c;
      const K nan_key = radix_key(std::numeric_limits<T>::quiet_NaN(), false);
      const bool floating = std::is_floating_point_v<T>;
      for (std::size_t i = 0; i < sz;) {
        std::size_t j = i + 1;
        if (!(floating && key[i] == nan_key))
          while (j < sz && key[j] == key[i]) ++j;
        v.push_back(from_radix_key<T>(key[i]));
        c.push_back(static_cast<std::int64_t>(j - i));
        i = j;
      }
      if constexpr (std::is_floating_point_v<T>) {  // the zeros' value is x's first zero (-0 or +0)
        const auto zero = std::lower_bound(v.begin(), v.end(), T(0), [](T a, T b) { return key_before(a, b, false); });
        if (zero != v.end() && *zero == T(0)) *zero = *std::find(x, x + n, T(0));
      }
      values = from_vector(v, std::nullopt, flat.device());
      if (with_counts) counts = from_vector(c, std::nullopt, flat.device());
    }
  });
  return {values, counts};
}

}  // namespace detail

std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "sort");
  if (x.dim() == 0) {
    detail::check_not_complex(x, "sort");
    return {detail::composite("sort", {x}, [&] { return x.clone(); }), zeros({}, Dtype::Int64, x.device())};
  }
  const Tensor idx = detail::sort_indices(x, d, descending, x.size(d), "sort");
  return {detail::composite("sort", {x}, [&] { return detail::gather_trusted(x, d, idx); }), idx};
}

Tensor argsort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "argsort");
  if (x.dim() == 0) {
    detail::check_not_complex(x, "argsort");
    return zeros({}, Dtype::Int64, x.device());
  }
  return detail::sort_indices(x, d, descending, x.size(d), "argsort");
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim, bool largest, bool /*sorted*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "topk");
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 0 || k > n)
    throw Error("topk", "k (" + std::to_string(k) + ") out of range for dim " + std::to_string(dim) + " of size " +
                            std::to_string(n) + " (shape " + detail::shape_str(x.shape()) + ")");
  if (x.dim() == 0) {  // a line of one element: itself or nothing
    detail::check_not_complex(x, "topk");
    if (k == 1) return sort(x, dim, largest);
    return {x.reshape({1}).narrow(0, 0, 0), zeros({0}, Dtype::Int64, x.device())};
  }
  const Tensor idx = detail::sort_indices(x, d, largest, k, "topk");
  return {detail::composite("topk", {x}, [&] { return detail::gather_trusted(x, d, idx); }), idx};
}

Tensor msort(const Tensor& x) {
  if (x.dim() == 0) {
    detail::check_not_complex(x, "msort");
    return detail::composite("msort", {x}, [&] { return x.clone(); });
  }
  return std::get<0>(sort(x, 0));
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, std::int64_t k, std::int64_t dim, bool keepdim) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "kthvalue");
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 1 || k > n)
    throw Error("kthvalue", "k (" + std::to_string(k) + ") out of range [1, " + std::to_string(n) + "] for dim " +
                                std::to_string(dim) + " (shape " + detail::shape_str(x.shape()) + ")");
  detail::check_not_complex(x, "kthvalue");
  if (x.dim() == 0) return {detail::composite("kthvalue", {x}, [&] { return x.clone(); }), zeros({}, Dtype::Int64, x.device())};
  Shape ks = x.shape();
  ks[static_cast<std::size_t>(d)] = 1;
  return detail::at_rank(x, d, full(ks, k - 1, Dtype::Int64, x.device()), keepdim, "kthvalue");
}

Tensor median(const Tensor& x) { return detail::median_all(x, false, "median"); }
std::tuple<Tensor, Tensor> median(const Tensor& x, std::int64_t dim, bool keepdim) {
  return detail::median_dim(x, dim, keepdim, false, "median");
}
Tensor nanmedian(const Tensor& x) { return detail::median_all(x, true, "nanmedian"); }
std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, std::int64_t dim, bool keepdim) {
  return detail::median_dim(x, dim, keepdim, true, "nanmedian");
}

Tensor quantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return detail::quantile_impl(x, q, dim, keepdim, interpolation, false, "quantile");
}
Tensor quantile(const Tensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile(x, detail::quantile_scalar(q, x.device(), "quantile"), dim, keepdim, interpolation);
}
Tensor nanquantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return detail::quantile_impl(x, q, dim, keepdim, interpolation, true, "nanquantile");
}
Tensor nanquantile(const Tensor& x, double q, std::optional<std::int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return nanquantile(x, detail::quantile_scalar(q, x.device(), "nanquantile"), dim, keepdim, interpolation);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  return detail::search_impl(sorted_sequence, values, right, side, sorter);
}
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  if (sorted_sequence.dim() != 1)
    throw Error("searchsorted", "a number as the value needs a 1-d sorted sequence, got shape " +
                                    detail::shape_str(sorted_sequence.shape()));
  const Tensor v = full({}, value, detail::result_type(sorted_sequence, value), sorted_sequence.device());
  return detail::search_impl(sorted_sequence, v, right, side, sorter);
}
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool right) {
  if (boundaries.dim() != 1)
    throw Error("bucketize", "boundaries must be a 1-d tensor, got shape " + detail::shape_str(boundaries.shape()));
  return detail::search_impl(boundaries, input, right, std::nullopt, Tensor());
}
Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool right) {
  if (boundaries.dim() != 1)
    throw Error("bucketize", "boundaries must be a 1-d tensor, got shape " + detail::shape_str(boundaries.shape()));
  const Tensor v = full({}, input, detail::result_type(boundaries, input), boundaries.device());
  return detail::search_impl(boundaries, v, right, std::nullopt, Tensor());
}

std::tuple<Tensor, Tensor> Tensor::sort(std::int64_t dim, bool descending, bool stable) const {
  return phasor::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(std::int64_t dim, bool descending, bool stable) const {
  return phasor::argsort(*this, dim, descending, stable);
}
std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t dim, bool largest, bool sorted) const {
  return phasor::topk(*this, k, dim, largest, sorted);
}

}  // namespace phasor

namespace phasor {

Tensor Tensor::msort() const { return phasor::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::kthvalue(std::int64_t k, std::int64_t dim, bool keepdim) const {
  return phasor::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return phasor::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(std::int64_t dim, bool keepdim) const { return phasor::median(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return phasor::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(std::int64_t dim, bool keepdim) const {
  return phasor::nanmedian(*this, dim, keepdim);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<std::int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return phasor::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(double q, std::optional<std::int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return phasor::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                           const std::string& interpolation) const {
  return phasor::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<std::int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return phasor::nanquantile(*this, q, dim, keepdim, interpolation);
}

}  // namespace phasor
