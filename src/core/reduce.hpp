// src/core/reduce.hpp - the one reduction engine.
//
// Note [reduction engine]
// A reduction is described by a Reducer (identity, map element -> accumulator, combine two
// accumulators, finalize accumulator -> output, optionally with a per-output parameter such as
// the mean for var or the max for logsumexp). plan_layout() drops size-1 dims, sorts the dims
// of x by input stride (innermost first, broadcast dims outermost) and merges dims that chain,
// so transposed, sliced and expanded inputs are read in place (no permute + contiguous copy).
// Then one of two loops runs:
//  - inner mode (the innermost dim in memory is reduced): every output reduces its own region;
//    the innermost reduced dim is a (contiguous or strided) segment summed with kLanes
//    independent accumulators in blocks of kPairwiseBlock, blocks and segments combined
//    pairwise. Parallel over outputs, or inside the region when there are fewer outputs than
//    threads (a full sum).
//  - outer mode (the innermost dim is kept, e.g. sum over dim 0 of a row-major matrix): a tile
//    of output columns is accumulated row by row with a vectorizable loop over the columns;
//    blocks of rows are combined pairwise with a binary counter. Parallel over tiles, or over
//    rows (partial tiles combined) when there are fewer tiles than threads.
// Both keep float32 sums accumulating in float with an error that grows like log(n), not n.
// argmax-style reductions (which need the logical index order) use plan_reduce's copy path.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/elementwise.hpp"
#include "core/reduce_kernels.hpp"

namespace phasor::detail {

// ---- layout ----------------------------------------------------------------------------------
/// Most dims a reduction handles (larger tensors are rejected with an error).
inline constexpr int kMaxReduceDims = 64;

/// One dim of a strided reduction: size, input stride and output stride (elements).
struct RDim {
  std::int64_t size = 1, in_stride = 0, out_stride = 0;
};

/// Layout of a reduction of x over some dims, read in place (Note [reduction engine]).
struct ReduceLayout {
  std::vector<std::int64_t> dims;  // reduced dims (wrapped, sorted)
  Shape out_shape;                 // result shape (keepdim honoured)
  Shape keep_shape;                // result shape with reduced dims kept as 1
  Shape in_shape;                  // x's shape
  std::vector<RDim> red;           // reduced dims after sorting/merging, innermost first (never empty)
  std::vector<RDim> kept;          // kept dims after sorting/merging, innermost first
  bool inner = true;               // innermost dim in memory is reduced (or nothing is kept)
  std::int64_t n_out = 1;          // number of outputs
  std::int64_t n_red = 1;          // elements reduced into each output
};

/// Plans a reduction of x over dims (empty = all), checking dims against x (errors name `op`).
ReduceLayout plan_layout(const Tensor& x, const Shape& dims, bool keepdim, const char* op);

/// Throws "[op] cannot reduce over an empty dim ..." when the reduction has no elements per output.
void check_nonempty(const ReduceLayout& L, const char* op);
/// The same check from x's shape alone, for any device: reductions without an identity (amax, amin,
/// max, min, norm with p = +-inf) call it before dispatching to a device's kernels.
void check_nonempty(const Tensor& x, const Shape& dims, const char* op);

/// Shape of x with `dims` (wrapped) set to 1: where a non-keepdim result broadcasts back.
Shape keep_shape_of(const Shape& in_shape, const Shape& dims, const char* op);

/// Reshapes a reduction result (or its gradient) to the keepdim shape so it broadcasts against x.
Tensor unsqueeze_reduced(const Tensor& r, const Shape& in_shape, const Shape& dims, bool keepdim, const char* op);

// ---- reducers ------------------------------------------------------------------------------
/// Parameter type of reducers without a per-output parameter.
struct NoParam {};

/// Number of independent accumulators for an accumulator type (4-8 SIMD registers' worth).
template <class A>
inline constexpr int lanes_for = sizeof(A) <= 4 ? 32 : sizeof(A) <= 8 ? 16 : 8;

/// Sum of elements converted to A.
template <class T, class A = T, class O = A>
struct SumOp {
  using in_t = T;
  using acc_t = A;
  using param_t = NoParam;
  using out_t = O;
  static constexpr int kLanes = lanes_for<A>;
  A identity() const { return A(0); }
  A map(const T& v, NoParam) const { return convert<A>(v); }
  A combine(A a, A b) const { return wrap_add(a, b); }
  O finalize(A a, NoParam) const { return convert<O>(a); }
};

/// Product of elements converted to A.
template <class T, class A = T>
struct ProdOp {
  using in_t = T;
  using acc_t = A;
  using param_t = NoParam;
  using out_t = A;
  static constexpr int kLanes = lanes_for<A>;
  A identity() const { return A(1); }
  A map(const T& v, NoParam) const { return convert<A>(v); }
  A combine(A a, A b) const { return wrap_mul(a, b); }
  A finalize(A a, NoParam) const { return a; }
};

/// Largest (Max = true) or smallest element; NaN propagates (bool accumulates as a byte).
template <class T, bool Max>
struct ExtremumOp {
  static constexpr bool kBool = std::is_same_v<T, bool>;
  using in_t = T;
  using acc_t = std::conditional_t<kBool, unsigned char, T>;
  using param_t = NoParam;
  using out_t = T;
  static constexpr int kLanes = lanes_for<acc_t>;
  acc_t identity() const {
    if constexpr (kBool) return Max ? 0 : 1;
    else if constexpr (std::is_floating_point_v<T>)
      return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  acc_t map(const T& v, NoParam) const { return static_cast<acc_t>(v); }
  acc_t combine(acc_t a, acc_t b) const {
    if constexpr (kBool) return Max ? (a | b) : (a & b);
    else return Max ? reduce_max(a, b) : reduce_min(a, b);  // element_traits: NaN wins, +-0 tie by sign
  }
  T finalize(acc_t a, NoParam) const { return static_cast<T>(a); }
};

/// all (All = true) or any over elements, as bool.
template <class T, bool All>
struct BoolOp {
  using in_t = T;
  using acc_t = unsigned char;
  using param_t = NoParam;
  using out_t = bool;
  static constexpr int kLanes = 32;
  acc_t identity() const { return All ? 1 : 0; }
  acc_t map(const T& v, NoParam) const { return convert<bool>(v) ? 1 : 0; }
  acc_t combine(acc_t a, acc_t b) const { return All ? (a & b) : (a | b); }
  bool finalize(acc_t a, NoParam) const { return a != 0; }
};

/// Reducers whose contiguous runs go to a vectorized kernel of reduce_kernels.hpp (Note [vector reduction
/// blocks]): `block` sums a block and `blocks4` four distant ones as the scalar loops do; `run` is an exact
/// extremum over any run; `rows4` is the outer mode's four-row step.
template <class Red, class = void>
struct VectorBlock {
  static constexpr bool kBlock = false, kRun = false, kRows4 = false;
};
/// float and double: the element types with kernels.
template <class T>
inline constexpr bool kVectorReal = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
struct VectorBlock<SumOp<T>, std::enable_if_t<kVectorReal<T>>> {
  static constexpr bool kBlock = true, kRun = false, kRows4 = true;
  static T block(const T* p, std::int64_t n) { return sum_block(p, n); }
  static void blocks4(const T* p, std::int64_t gap, std::int64_t n, T* out) { sum_blocks4(p, gap, n, out); }
  static void rows4(T* acc, const T* const* r, std::int64_t w) { fold_rows4(acc, r, w, RowFold::Sum); }
};
template <class T, bool Max>
struct VectorBlock<ExtremumOp<T, Max>, std::enable_if_t<kVectorReal<T>>> {
  static constexpr bool kBlock = false, kRun = true, kRows4 = true;
  static T run(const T* p, std::int64_t n) { return extremum_block(p, n, Max); }
  static void rows4(T* acc, const T* const* r, std::int64_t w) {
    fold_rows4(acc, r, w, Max ? RowFold::Max : RowFold::Min);
  }
};

// ---- inner loops -----------------------------------------------------------------------------
/// Elements summed by kLanes accumulators before blocks are combined pairwise.
inline constexpr std::int64_t kPairwiseBlock = 4096;

/// Returns the parameter at output offset `off` (NoParam for reducers without one).
template <class Red>
inline typename Red::param_t param_at(const typename Red::param_t* p, std::int64_t off) {
  if constexpr (std::is_same_v<typename Red::param_t, NoParam>) {
    (void)p;
    (void)off;
    return NoParam{};
  } else {
    return p[off];
  }
}

/// A per-thread scratch buffer of n elements of A, reused across calls (no page faults);
/// slots 0/1: outer-mode tiles, slot 2: block results of reduce_streams.
template <class A>
A* thread_scratch(std::size_t n, int slot = 0) {
  thread_local std::vector<A> buf[3];
  auto& b = buf[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

/// Reduces a short run (a small reduced dim) with four chains, so the adds stay pipelined.
template <class Red>
inline typename Red::acc_t reduce_short(const typename Red::in_t* p, std::int64_t n, std::int64_t s, const Red& r,
                                        const typename Red::param_t& q) {
  using A = typename Red::acc_t;
  A a0 = r.identity(), a1 = r.identity(), a2 = r.identity(), a3 = r.identity();
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 = r.combine(a0, r.map(p[i * s], q));
    a1 = r.combine(a1, r.map(p[(i + 1) * s], q));
    a2 = r.combine(a2, r.map(p[(i + 2) * s], q));
    a3 = r.combine(a3, r.map(p[(i + 3) * s], q));
  }
  for (; i < n; ++i) a0 = r.combine(a0, r.map(p[i * s], q));
  return r.combine(r.combine(a0, a1), r.combine(a2, a3));
}

/// Combines v[0..n) pairwise.
template <class Red>
typename Red::acc_t combine_pairwise(const typename Red::acc_t* v, std::int64_t n, const Red& r) {
  if (n <= 8) {
    typename Red::acc_t a = v[0];
    for (std::int64_t i = 1; i < n; ++i) a = r.combine(a, v[i]);
    return a;
  }
  const std::int64_t h = n / 2;
  return r.combine(combine_pairwise(v, h, r), combine_pairwise(v + h, n - h, r));
}

template <class Red>
typename Red::acc_t reduce_seq(const typename Red::in_t* p, std::int64_t n, std::int64_t s, const Red& r,
                               const typename Red::param_t& q);

/// Long contiguous runs: blocks of kPairwiseBlock are reduced four at a time from four distant
/// places (four memory streams keep more loads in flight than one), then combined pairwise.
template <class Red>
typename Red::acc_t reduce_streams(const typename Red::in_t* p, std::int64_t n, const Red& r,
                                   const typename Red::param_t& q) {
  using A = typename Red::acc_t;
  constexpr int LS = Red::kLanes >= 4 ? Red::kLanes / 2 : 2;
  constexpr std::int64_t kB = kPairwiseBlock;
  const std::int64_t nb = n / kB, qn = (nb + 3) / 4;
  A* bs = thread_scratch<A>(static_cast<std::size_t>(nb), 2);
  for (std::int64_t i = 0; i < qn; ++i) {
    const std::int64_t b[4] = {i, i + qn, i + 2 * qn, i + 3 * qn};
    if (b[3] >= nb) {
      for (int k = 0; k < 4; ++k)
        if (b[k] < nb) bs[b[k]] = reduce_seq(p + b[k] * kB, kB, 1, r, q);
      continue;
    }
    if constexpr (VectorBlock<Red>::kBlock) {
      static_assert(LS == lanes_for<A> / 2);  // the kernels' lanes
      A out[4];
      VectorBlock<Red>::blocks4(p + i * kB, qn * kB, kB, out);
      for (int k = 0; k < 4; ++k) bs[b[k]] = out[k];
      continue;
    }
    const typename Red::in_t* ps[4] = {p + b[0] * kB, p + b[1] * kB, p + b[2] * kB, p + b[3] * kB};
    A a[4][LS];
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < LS; ++l) a[k][l] = r.identity();
    for (std::int64_t j = 0; j < kB; j += LS)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < LS; ++l) a[k][l] = r.combine(a[k][l], r.map(ps[k][j + l], q));
    for (int k = 0; k < 4; ++k) {
      for (int w = LS / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) a[k][l] = r.combine(a[k][l], a[k][l + w]);
      bs[b[k]] = a[k][0];
    }
  }
  A t = combine_pairwise(bs, nb, r);
  if (nb * kB < n) t = r.combine(t, reduce_seq(p + nb * kB, n - nb * kB, 1, r, q));
  return t;
}

/// Reduces n elements p[0], p[s], ... with kLanes accumulators, pairwise over blocks.
template <class Red>
typename Red::acc_t reduce_seq(const typename Red::in_t* p, std::int64_t n, std::int64_t s, const Red& r,
                               const typename Red::param_t& q) {
  using A = typename Red::acc_t;
  constexpr int L = Red::kLanes;
  if constexpr (VectorBlock<Red>::kRun) {
    if (s == 1) return VectorBlock<Red>::run(p, n);
  }
  if (s == 1 && n >= 16 * kPairwiseBlock) return reduce_streams(p, n, r, q);
  if constexpr (VectorBlock<Red>::kBlock) {
    if (s == 1 && n >= 2 * L && n <= kPairwiseBlock) return VectorBlock<Red>::block(p, n);
  }
  if (n > kPairwiseBlock) {
    const std::int64_t h = (n / 2 + L - 1) / L * L;
    return r.combine(reduce_seq(p, h, s, r, q), reduce_seq(p + h * s, n - h, s, r, q));
  }
  if (n < 2 * L) return reduce_short(p, n, s, r, q);
  A a[L];
  for (int k = 0; k < L; ++k) a[k] = r.identity();
  std::int64_t i = 0;
  if (s == 1) {
    for (; i + L <= n; i += L)
      for (int k = 0; k < L; ++k) a[k] = r.combine(a[k], r.map(p[i + k], q));
  } else {
    for (; i + L <= n; i += L)
      for (int k = 0; k < L; ++k) a[k] = r.combine(a[k], r.map(p[(i + k) * s], q));
  }
  for (int w = L / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) a[k] = r.combine(a[k], a[k + w]);
  A t = a[0];
  for (const typename Red::in_t* e = p + i * s; i < n; ++i, e += s) t = r.combine(t, r.map(*e, q));
  return t;
}

/// Offset of segment `s` (flattened over red[1..nred)) from the region origin.
inline std::int64_t segment_offset(const RDim* red, int nred, std::int64_t s) {
  std::int64_t off = 0;
  for (int d = 1; d < nred && s > 0; ++d) {
    off += (s % red[d].size) * red[d].in_stride;
    s /= red[d].size;
  }
  return off;
}

/// Reduces segments [sb, se) of a region (segment = the innermost reduced dim), pairwise.
template <class Red>
typename Red::acc_t reduce_region(const typename Red::in_t* base, const RDim* red, int nred, std::int64_t sb,
                                  std::int64_t se, const Red& r, const typename Red::param_t& q) {
  using A = typename Red::acc_t;
  const std::int64_t n0 = red[0].size, s0 = red[0].in_stride, nseg = se - sb;
  if (nseg == 1) return reduce_seq(base + segment_offset(red, nred, sb), n0, s0, r, q);
  if (nseg * n0 > kPairwiseBlock || nseg > 64) {
    const std::int64_t h = sb + nseg / 2;
    return r.combine(reduce_region(base, red, nred, sb, h, r, q), reduce_region(base, red, nred, h, se, r, q));
  }
  A a = r.identity();
  std::int64_t idx[kMaxReduceDims] = {};
  std::int64_t off = 0, s = sb;
  for (int d = 1; d < nred; ++d) {
    idx[d] = s % red[d].size;
    s /= red[d].size;
    off += idx[d] * red[d].in_stride;
  }
  for (std::int64_t k = 0; k < nseg; ++k) {
    a = r.combine(a, reduce_seq(base + off, n0, s0, r, q));
    for (int d = 1; d < nred; ++d) {
      off += red[d].in_stride;
      if (++idx[d] < red[d].size) break;
      off -= idx[d] * red[d].in_stride;
      idx[d] = 0;
    }
  }
  return a;
}

/// Outer mode: acc[j] (j < w) = reduction over rows [r0, r1) of base[row_off + j*sw].
/// Rows are blocks of `B` summed sequentially, blocks combined pairwise by a binary counter.
template <class Red>
void reduce_rows_tile(const typename Red::in_t* base, std::int64_t w, std::int64_t sw, const RDim* red, int nred,
                      std::int64_t r0, std::int64_t r1, const Red& r, const typename Red::param_t* pp,
                      std::int64_t ps, typename Red::acc_t* acc, int slot = 0) {
  using A = typename Red::acc_t;
  using T = typename Red::in_t;
  using P = typename Red::param_t;
  constexpr bool kHasParam = !std::is_same_v<P, NoParam>;
  const std::int64_t B = std::clamp<std::int64_t>(1024 / std::max<std::int64_t>(w, 1), 16, 64);
  const std::int64_t nblocks = (r1 - r0 + B - 1) / B;
  int levels = 1;
  while ((std::int64_t{1} << levels) <= nblocks) ++levels;
  A* scratch = thread_scratch<A>(static_cast<std::size_t>((levels + 1) * w), slot);
  A* lv[64];
  for (int k = 0; k < levels; ++k) lv[k] = scratch + k * w;
  A* tmp = scratch + levels * w;
  std::uint64_t occ = 0;
  // odometer over the reduced dims, starting at row r0
  std::int64_t idx[kMaxReduceDims] = {};
  std::int64_t off = 0;
  {
    std::int64_t s = r0;
    for (int d = 0; d < nred; ++d) {
      idx[d] = s % red[d].size;
      s /= red[d].size;
      off += idx[d] * red[d].in_stride;
    }
  }
  for (std::int64_t row = r0; row < r1;) {
    const std::int64_t nb = std::min(B, r1 - row);
    // gather the block's row pointers, then fold them into tmp (four rows per pass when contiguous)
    const T* rows[64];
    for (std::int64_t b = 0; b < nb; ++b) {
      rows[b] = base + off;
      for (int d = 0; d < nred; ++d) {
        off += red[d].in_stride;
        if (++idx[d] < red[d].size) break;
        off -= idx[d] * red[d].in_stride;
        idx[d] = 0;
      }
    }
    for (std::int64_t j = 0; j < w; ++j) tmp[j] = r.identity();
    std::int64_t b = 0;
    if constexpr (!kHasParam) {
      if (sw == 1 && VectorBlock<Red>::kRows4 && w >= 64) {  // narrower rows: the call costs more than it saves
        if constexpr (VectorBlock<Red>::kRows4)
          for (; b + 4 <= nb; b += 4) VectorBlock<Red>::rows4(tmp, rows + b, w);
      } else if (sw == 1) {
        for (; b + 4 <= nb; b += 4) {
          const T *r0p = rows[b], *r1p = rows[b + 1], *r2p = rows[b + 2], *r3p = rows[b + 3];
          for (std::int64_t j = 0; j < w; ++j)
            tmp[j] = r.combine(tmp[j], r.combine(r.combine(r.map(r0p[j], NoParam{}), r.map(r1p[j], NoParam{})),
                                                 r.combine(r.map(r2p[j], NoParam{}), r.map(r3p[j], NoParam{}))));
        }
      }
    }
    for (; b < nb; ++b) {
      const T* rp = rows[b];
      if constexpr (kHasParam) {
        for (std::int64_t j = 0; j < w; ++j) tmp[j] = r.combine(tmp[j], r.map(rp[j * sw], pp[j * ps]));
      } else if (sw == 1) {
        for (std::int64_t j = 0; j < w; ++j) tmp[j] = r.combine(tmp[j], r.map(rp[j], NoParam{}));
      } else {
        for (std::int64_t j = 0; j < w; ++j) tmp[j] = r.combine(tmp[j], r.map(rp[j * sw], NoParam{}));
      }
    }
    row += nb;
    int k = 0;
    while (occ & (std::uint64_t{1} << k)) {
      const A* l = lv[k];
      for (std::int64_t j = 0; j < w; ++j) tmp[j] = r.combine(l[j], tmp[j]);
      occ &= ~(std::uint64_t{1} << k);
      ++k;
    }
    std::swap(lv[k], tmp);
    occ |= std::uint64_t{1} << k;
  }
  bool first = true;
  for (int k = levels; k-- > 0;) {
    if (!(occ & (std::uint64_t{1} << k))) continue;
    const A* l = lv[k];
    if (first) std::copy(l, l + w, acc);
    else
      for (std::int64_t j = 0; j < w; ++j) acc[j] = r.combine(acc[j], l[j]);
    first = false;
  }
  if (first) std::fill(acc, acc + w, r.identity());
}

// ---- the driver --------------------------------------------------------------------------------
/// Threads for a reduction reading `work` elements.
inline int reduce_threads(std::int64_t work) { return work >= 2 * kParallelGrain ? get_num_threads() : 1; }

/// Runs reducer `r` over x laid out by L; returns the result (out_shape, dtype of out_t).
/// `param` (when the reducer has one) is a contiguous tensor of keep_shape and param_t.
template <class Red>
Tensor run_reduce(const Tensor& x, const ReduceLayout& L, const Red& r, const Tensor& param = Tensor()) {
  using T = typename Red::in_t;
  using A = typename Red::acc_t;
  using P = typename Red::param_t;
  using O = typename Red::out_t;
  Tensor out = make_tensor(L.keep_shape, dtype_of<O>::value, x.device());
  O* o = static_cast<O*>(out.data_ptr());
  const P* prm = nullptr;
  if constexpr (!std::is_same_v<P, NoParam>) prm = static_cast<const P*>(param.data_ptr());
  const T* xb = static_cast<const T*>(x.data_ptr());
  const RDim* red = L.red.data();
  const int nred = static_cast<int>(L.red.size());
  const int nk = static_cast<int>(L.kept.size());
  if (L.n_out == 0) return out.reshape(L.out_shape);
  if (L.n_red == 0) {
    for (std::int64_t i = 0; i < L.n_out; ++i) o[i] = r.finalize(r.identity(), param_at<Red>(prm, i));
    return out.reshape(L.out_shape);
  }
  const int threads = reduce_threads(L.n_out * L.n_red);
  std::int64_t nseg = 1;
  for (int d = 1; d < nred; ++d) nseg *= red[d].size;

  if (L.inner) {
    if (threads <= 1 || L.n_out >= threads) {
      // parallel over outputs; an odometer over the kept dims gives input/output offsets
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::int64_t chunk = (L.n_out + nt - 1) / nt;
        const std::int64_t b = std::min<std::int64_t>(L.n_out, t * chunk), e = std::min<std::int64_t>(L.n_out, b + chunk);
        std::int64_t idx[kMaxReduceDims] = {};
        std::int64_t ioff = 0, ooff = 0, s = b;
        for (int d = 0; d < nk; ++d) {
          idx[d] = s % L.kept[d].size;
          s /= L.kept[d].size;
          ioff += idx[d] * L.kept[d].in_stride;
          ooff += idx[d] * L.kept[d].out_stride;
        }
        for (std::int64_t i = b; i < e; ++i) {
          const P q = param_at<Red>(prm, ooff);
          A a;
          if (nseg != 1) a = reduce_region(xb + ioff, red, nred, 0, nseg, r, q);
          else if (red[0].size < 2 * Red::kLanes) a = reduce_short(xb + ioff, red[0].size, red[0].in_stride, r, q);
          else a = reduce_seq(xb + ioff, red[0].size, red[0].in_stride, r, q);
          o[ooff] = r.finalize(a, q);
          for (int d = 0; d < nk; ++d) {
            ioff += L.kept[d].in_stride;
            ooff += L.kept[d].out_stride;
            if (++idx[d] < L.kept[d].size) break;
            ioff -= idx[d] * L.kept[d].in_stride;
            ooff -= idx[d] * L.kept[d].out_stride;
            idx[d] = 0;
          }
        }
      }
    } else {
      // few outputs: split each region among the threads, combine the partials in order
      std::vector<A> part(static_cast<std::size_t>(threads));
      for (std::int64_t i = 0; i < L.n_out; ++i) {
        std::int64_t ioff = 0, ooff = 0, s = i;
        for (int d = 0; d < nk; ++d) {
          const std::int64_t id = s % L.kept[d].size;
          s /= L.kept[d].size;
          ioff += id * L.kept[d].in_stride;
          ooff += id * L.kept[d].out_stride;
        }
        const P q = param_at<Red>(prm, ooff);
        const T* base = xb + ioff;
        int used = threads;
#pragma omp parallel num_threads(threads)
        {
          const int t = omp_get_thread_num(), nt = omp_get_num_threads();
          if (t == 0) used = nt;
          A a = r.identity();
          if (nseg == 1) {
            const std::int64_t n0 = red[0].size;
            const std::int64_t chunk = ((n0 + nt - 1) / nt + 63) / 64 * 64;
            const std::int64_t cb = std::min<std::int64_t>(n0, t * chunk), ce = std::min<std::int64_t>(n0, cb + chunk);
            if (cb < ce) a = reduce_seq(base + cb * red[0].in_stride, ce - cb, red[0].in_stride, r, q);
          } else {
            const std::int64_t chunk = (nseg + nt - 1) / nt;
            const std::int64_t cb = std::min<std::int64_t>(nseg, t * chunk), ce = std::min<std::int64_t>(nseg, cb + chunk);
            if (cb < ce) a = reduce_region(base, red, nred, cb, ce, r, q);
          }
          part[static_cast<std::size_t>(t)] = a;
        }
        A a = part[0];
        for (int t = 1; t < used; ++t) a = r.combine(a, part[static_cast<std::size_t>(t)]);
        o[ooff] = r.finalize(a, q);
      }
    }
    return out.reshape(L.out_shape);
  }

  // outer mode: the innermost kept dim is the column dim of a tile
  const RDim col = L.kept[0];
  const std::int64_t w = col.size;
  const std::int64_t wt = std::min<std::int64_t>(w, std::max<std::int64_t>(64, 8192 / static_cast<std::int64_t>(sizeof(A))));
  const std::int64_t ntiles = (w + wt - 1) / wt;
  const std::int64_t n_oo = L.n_out / w;
  const std::int64_t tasks = n_oo * ntiles;
  auto task_offsets = [&](std::int64_t task, std::int64_t& ioff, std::int64_t& ooff, std::int64_t& c0, std::int64_t& cw) {
    std::int64_t oo = task / ntiles;
    c0 = (task % ntiles) * wt;
    cw = std::min(wt, w - c0);
    ioff = c0 * col.in_stride;
    ooff = c0 * col.out_stride;
    for (int d = 1; d < nk; ++d) {
      const std::int64_t id = oo % L.kept[d].size;
      oo /= L.kept[d].size;
      ioff += id * L.kept[d].in_stride;
      ooff += id * L.kept[d].out_stride;
    }
  };
  auto finish = [&](const A* acc, std::int64_t ooff, std::int64_t cw) {
    for (std::int64_t j = 0; j < cw; ++j) {
      const std::int64_t oj = ooff + j * col.out_stride;
      o[oj] = r.finalize(acc[j], param_at<Red>(prm, oj));
    }
  };
  if (threads <= 1 || tasks >= threads) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (std::int64_t task = 0; task < tasks; ++task) {
      std::int64_t ioff, ooff, c0, cw;
      task_offsets(task, ioff, ooff, c0, cw);
      A* acc = thread_scratch<A>(static_cast<std::size_t>(cw), 1);
      reduce_rows_tile(xb + ioff, cw, col.in_stride, red, nred, 0, L.n_red, r, prm ? prm + ooff : nullptr,
                       col.out_stride, acc);
      finish(acc, ooff, cw);
    }
  } else {
    // few tiles: split the rows among the threads, combine the partial tiles in order
    std::vector<A> parts(static_cast<std::size_t>(threads * wt));
    for (std::int64_t task = 0; task < tasks; ++task) {
      std::int64_t ioff, ooff, c0, cw;
      task_offsets(task, ioff, ooff, c0, cw);
      int used = threads;
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        if (t == 0) used = nt;
        const std::int64_t chunk = (L.n_red + nt - 1) / nt;
        const std::int64_t rb = std::min<std::int64_t>(L.n_red, t * chunk), re = std::min<std::int64_t>(L.n_red, rb + chunk);
        reduce_rows_tile(xb + ioff, cw, col.in_stride, red, nred, rb, re, r, prm ? prm + ooff : nullptr,
                         col.out_stride, parts.data() + t * wt);
      }
      A* acc = parts.data();
      for (int t = 1; t < used; ++t)
        for (std::int64_t j = 0; j < cw; ++j) acc[j] = r.combine(acc[j], parts[static_cast<std::size_t>(t * wt + j)]);
      finish(acc, ooff, cw);
    }
  }
  return out.reshape(L.out_shape);
}

/// Plans and runs a reducer in one call.
template <class Red>
Tensor reduce_with(const Tensor& x, const Shape& dims, bool keepdim, const char* op, const Red& r) {
  return run_reduce(x, plan_layout(x, dims, keepdim, op), r);
}

// ---- the copy path (argmax-style reductions that need logical order) ------------------------------
/// Layout of a reduction: x viewed as (outer, inner) rows with `inner` reduced elements each.
struct ReducePlan {
  std::vector<std::int64_t> dims;  // reduced dims (wrapped, sorted)
  Shape out_shape;                 // result shape (keepdim honoured)
  Shape keep_shape;                // result shape with reduced dims kept as 1
  Tensor rows;                     // contiguous (outer, inner) tensor
  std::int64_t outer = 1, inner = 1;
};

/// Plans a reduction of x over dims (empty = all); `rows` holds x's data with reduced dims last
/// (a copy unless they already are last and x is contiguous).
ReducePlan plan_reduce(const Tensor& x, const Shape& dims, bool keepdim, const char* op);

/// Runs f(const T* row, n) -> R for every row in parallel, writing into `out` (contiguous, R typed).
template <class T, class R, class F>
void reduce_rows(const ReducePlan& p, R* out, F f) {
  const T* base = static_cast<const T*>(p.rows.data_ptr());
  const std::int64_t outer = p.outer, inner = p.inner;
  const int threads = outer * inner >= 2 * kParallelGrain && outer > 1 ? std::min<int>(get_num_threads(), static_cast<int>(outer)) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t o = 0; o < outer; ++o) out[o] = f(base + o * inner, inner);
}

}  // namespace phasor::detail
