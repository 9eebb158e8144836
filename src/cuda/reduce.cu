// src/cuda/reduce.cu - row reductions for CUDA tensors: sum, prod, amax, amin, all, any, norms, var/std,
// logsumexp and argmax/argmin over the contiguous (n_out, n_red) rows the host glue (src/cuda/ops.cpp)
// lays out, one block per row (a group of a block's threads, or one thread, per short row: Note [short
// rows]; a block per chunk of a long row: Note [split rows]) with a shared-memory tree, accumulating as
// the CPU reducers do (bool sums in int64; NaN wins max/min) or wider (norms and variances in double);
// and running sums and products (cumsum, cumprod) along the middle dim of a contiguous (outer, n, inner) tensor.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <cuda/std/limits>
#include <string>
#include <type_traits>

#include "core/complex_math.hpp"
#include "core/scan_rules.hpp"
#include "cuda/backend.hpp"
#include "cuda/device_types.cuh"
#include "cuda/launch.cuh"
#include "cuda/reduce.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {
namespace {

using ::phasor::detail::convert;
using ::phasor::detail::reduce_max;
using ::phasor::detail::reduce_min;
using ::phasor::detail::wrap_add;
using ::phasor::detail::wrap_mul;
using ::phasor::detail::is_complex_v;
using ::phasor::detail::real_t;
using ::phasor::detail::scan_combine;
using ::phasor::detail::scan_identity;
using ::phasor::detail::scan_name;
using ::phasor::detail::scan_supports_v;
using ::phasor::detail::ScanKind;
using ::phasor::detail::visit_scan;

// Reducers: accumulator A from input T, result O.
// Sums of float32 / complex64 accumulate in double / complex128: a thread adds up to a chunk's
// n / 256 elements serially, which float32 would round visibly (the CPU sums pairwise).
template <class T>
struct Sum {
  using O = std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>;
  using A = std::conditional_t<std::is_same_v<T, float>, double, std::conditional_t<std::is_same_v<T, c64>, c128, O>>;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return wrap_add(a, b); }  // int64 wraps, as on the CPU
  __device__ A load(T v) const { return convert<A>(v); }
};
template <class T>
struct Prod {
  using A = std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>;
  using O = A;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return A(1); }
  __device__ A combine(A a, A b) const { return wrap_mul(a, b); }
  __device__ A load(T v) const { return convert<A>(v); }
};
template <class T, bool Max>
struct Extremum {
  using A = T;
  using O = T;
  static constexpr bool kHasIdentity = false;
  __device__ A identity() const { return A(0); }  // unused: empty rows are rejected on the host
  __device__ A combine(A a, A b) const {  // the CPU's rule: NaN wins, +0 and -0 tie by sign, not order
    return Max ? reduce_max(a, b) : reduce_min(a, b);
  }
  __device__ A load(T v) const { return v; }
};
template <class T, bool All>
struct Logical {
  using A = bool;
  using O = bool;
  static constexpr bool kHasIdentity = true;
  __device__ A identity() const { return All; }
  __device__ A combine(A a, A b) const { return All ? (a && b) : (a || b); }
  __device__ A load(T v) const { return convert<bool>(v); }
};


/// Grid size for `work` independent items of `per_block` items each (at least 1, at most 65535 blocks).
unsigned grid_for(std::int64_t work, std::int64_t per_block) {
  const std::int64_t b = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : b < 65535 ? b : 65535);
}

/// Pass 2 of a split reduction: combines the partial accumulators of each row (Note [split rows]).
template <class R>
struct Partials {
  using A = typename R::A;
  using O = typename R::O;
  static constexpr bool kHasIdentity = R::kHasIdentity;
  R r;
  __device__ A identity() const { return r.identity(); }
  __device__ A combine(A a, A b) const { return r.combine(a, b); }
  __device__ A load(A v) const { return v; }
};

// Note [gapped rows]
// A reduction's rows need not be contiguous: element j of row r lies at r * row_stride + (j / inner) *
// outer_stride + j % inner. Contiguous rows are row_stride = inner = n_red. A contiguous tensor reduced
// over a leading and a trailing block of dims, keeping the block between (a bias gradient: (N, C, L)
// summed over N and L), is row_stride = inner = L, outer_stride = C * L: read in place, where moving the
// reduced dims last would first copy the whole tensor. The sum-like reductions take this layout; the
// statistics kernels read contiguous rows.

/// Where the elements of a reduction's rows lie (Note [gapped rows]).
struct RowLayout {
  std::int64_t row_stride, outer_stride;
  Divisor inner;  ///< FastDiv for rows shorter than 2^31 (Note [fast index division])
};

/// The element of a gapped row at index j (Note [gapped rows]).
template <class T>
__device__ __forceinline__ const T& gapped(const T* base, std::int64_t j, const RowLayout& lay) {
  std::int64_t q, r;
  lay.inner.divmod(j, q, r);
  return base[q * lay.outer_stride + r];
}

// Note [split rows]
// A block (a group of its threads, or one, for a short unit: Note [short rows]) reduces one unit: a row,
// or with splits > 1 one of the row's `splits` consecutive chunks of `chunk` elements (the last may be shorter,
// none is empty). Few long rows - a full reduction, a loss over a small batch - would leave most of the
// GPU idle with one block per row, so they are split until there are about 4 blocks per multiprocessor:
// pass 1 writes each chunk's accumulator, pass 2 (the same kernel with Partials<R>) combines each row's
// partials. Chunks keep every thread's serial sum short, which also keeps float32 sums accurate.
//
// Note [short rows]
// A unit goes to a group of G threads, G the smallest power of two that leaves each thread at most
// loads_in_flight elements (8 float32, 4 float64 or int64, 2 complex128; Note [loads in flight]), at most
// kThreads: a block reduces kThreads / G units at once (group_size, Group, for_units), and each thread
// loads all its elements of a unit before it folds any (stride_fold). One block per short row would
// leave most of its threads idle and walk the whole log2(kThreads)-step tree for a handful of elements -
// a reduction over a dim of 4 of a (4, 6000) tensor made 6000 blocks of 252 idle threads. A thread per
// element would do no better on a GPU: each thread would keep one 4-byte load in flight and then wait at
// the tree's barriers, 1024 resident threads x 4 bytes where a multiprocessor needs about 25 KB in flight.
// With up to 8 elements a thread, a row of 8 float32 is one thread's (no tree: group_reduce returns at
// once for G = 1), a row of 100 a group of 16, and rows of more than 1024 the whole block. Every
// thread's accumulator starts from the identity, as the CPU's reducers do (a sum of -0s is +0; a complex
// product multiplies by 1 + 0i first), and folds its elements in index order; results differ from the
// CPU's only in how the additions are grouped. For gapped rows (a sum over dim 0) neighbouring units are
// neighbouring columns, so a warp of one-thread units reads 32 adjacent elements per load.

/// Threads per unit for units of up to `len` elements of `bytes` bytes (Note [short rows]): the smallest
/// power of two that leaves each thread at most loads_in_flight(bytes) elements, at most kThreads.
int group_size(std::int64_t len, std::size_t bytes) {
  const std::int64_t per = loads_in_flight(bytes);
  int g = 1;
  while (g < kThreads && g * per < len) g <<= 1;
  return g;
}

/// This thread's place in its group of `size` consecutive threads of the block (Note [short rows]).
struct Group {
  int size;   ///< threads per unit: a power of two dividing kThreads
  int lane;   ///< this thread's index in its group
  int first;  ///< the group's first thread in the block
  __device__ explicit Group(int s)
      : size(s), lane(static_cast<int>(threadIdx.x) & (s - 1)), first(static_cast<int>(threadIdx.x) - lane) {}
};

/// One unit of a reduction (Note [split rows]): its index, its row, and its elements' span in the row.
struct Unit {
  std::int64_t index, row, start, len;
  bool live;  ///< false for a group past the last unit: len 0, and it writes nothing
};

/// Calls body(unit) for each unit this thread's group reduces, of n_units units that split rows of n_red
/// elements into `splits` chunks of `chunk` (a split's pass 2: rows of `splits` partials as (splits, 1,
/// splits)): the block's groups take kThreads / size consecutive units, then a grid's worth further on.
/// Every thread of the block makes the same calls, so the body may hold barriers.
template <class Body>
__device__ __forceinline__ void for_units(const Group& g, std::int64_t n_units, std::int64_t n_red,
                                          std::int64_t splits, std::int64_t chunk, const Body& body) {
  const int per = kThreads / g.size;
  for (std::int64_t u0 = static_cast<std::int64_t>(blockIdx.x) * per; u0 < n_units;
       u0 += static_cast<std::int64_t>(gridDim.x) * per) {
    const std::int64_t i = u0 + g.first / g.size;
    const bool live = i < n_units;
    const std::int64_t index = live ? i : n_units - 1, row = index / splits;
    const std::int64_t start = (index - row * splits) * chunk;
    body(Unit{index, row, start, !live ? 0 : chunk < n_red - start ? chunk : n_red - start, live});
  }
}

/// Shared scratch of one block: kThreads values of up to 32 bytes (a complex128 variance partial).
struct alignas(16) Scratch {
  unsigned char bytes[kThreads * 32];
};

/// v combined over the threads of this thread's group (a shared-memory tree); every thread of the group
/// gets its group's result. Must be reached by all threads of the block.
template <class A, class C>
__device__ A group_reduce(A v, const Group& g, Scratch& scratch, C combine) {
  static_assert(sizeof(A) <= 32, "group_reduce: accumulator too large");
  if (g.size == 1) return v;  // a unit per thread (the same for the whole block: no thread waits alone)
  A* sh = reinterpret_cast<A*>(scratch.bytes);
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = g.size / 2; s > 0; s >>= 1) {
    if (g.lane < s) sh[threadIdx.x] = combine(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  const A r = sh[g.first];
  __syncthreads();  // the scratch may be reused right after
  return r;
}

template <class T, class R, class Out>
__global__ void rows_kernel(const T* rows, std::int64_t n_units, std::int64_t n_red, std::int64_t splits,
                            std::int64_t chunk, RowLayout lay, Out* out, R r, int group) {
  using A = typename R::A;
  __shared__ Scratch scratch;
  const Group g(group);
  const bool flat = lay.inner.d >= n_red;  // contiguous rows
  for_units(g, n_units, n_red, splits, chunk, [&](const Unit& u) {
    const T* base = rows + u.row * lay.row_stride;
    auto read = [&](std::int64_t j) { return flat ? base[j] : gapped(base, j, lay); };
    // every thread starts from the identity, as the CPU's reducers do (so a sum of -0s is +0 and a complex
    // product multiplies by 1 + 0i first); Extremum has none: it starts from the first element it sees
    A acc = r.identity();
    bool first = true;
    stride_fold<kLoadsInFlight<T>>(u.start + g.lane, u.start + u.len, g.size, read, [&](const T& x, std::int64_t) {
      const A v = r.load(x);
      acc = R::kHasIdentity || !first ? r.combine(acc, v) : v;
      first = false;
    });
    // threads that saw nothing hold the identity; without one (max/min) they take the unit's first
    // element (a repeated operand does not change a max or min)
    if constexpr (!R::kHasIdentity) {
      if (first && u.len > 0) acc = r.load(read(u.start));
    }
    const A total = group_reduce(acc, g, scratch, [&](const A& a, const A& b) { return r.combine(a, b); });
    if (g.lane == 0 && u.live) out[u.index] = convert<Out>(total);
  });
}

/// Multiprocessors of the current device (132 on an H100/H200 when the query fails).
int multiprocessors() {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      n <= 0) {
    (void)cudaGetLastError();
    return 132;
  }
  return n;
}

/// How a reduction of n_out rows of n_red elements splits its rows (Note [split rows]): `splits` chunks of
/// `chunk` elements per row (the last may be shorter, none is empty); splits = 1 and chunk = n_red for no split.
struct Split {
  std::int64_t splits = 1, chunk = 0;
};
Split split_for(std::int64_t n_out, std::int64_t n_red) {
  constexpr std::int64_t kMinChunk = 4096;
  static const std::int64_t target = 4 * static_cast<std::int64_t>(multiprocessors());
  if (n_out >= target || n_red < 2 * kMinChunk) return Split{1, n_red};
  const std::int64_t want = (target + n_out - 1) / n_out, most = n_red / kMinChunk;
  const std::int64_t chunk = (n_red + (want < most ? want : most) - 1) / (want < most ? want : most);
  return Split{(n_red + chunk - 1) / chunk, chunk};
}

/// Device scratch for the partials of a split reduction, from the caching allocator on the current
/// stream (freed stream-ordered after the launches that use it).
struct PartialBuffer {
  void* ptr = nullptr;
  int device = 0;
  explicit PartialBuffer(std::size_t bytes) {
    void* stream = nullptr;
    if (cudaGetDevice(&device) != cudaSuccess) (void)cudaGetLastError();
    ptr = ::phasor::cuda::detail::device_alloc(bytes, device, &stream);
  }
  ~PartialBuffer() { ::phasor::cuda::detail::device_free(ptr, device); }
  PartialBuffer(const PartialBuffer&) = delete;
  PartialBuffer& operator=(const PartialBuffer&) = delete;
};

/// The launch of `units` units of up to `len` elements of `bytes` bytes each: threads per unit and blocks
/// (Note [short rows]).
struct UnitGrid {
  int group;
  unsigned blocks;
};
UnitGrid unit_grid(std::int64_t units, std::int64_t len, std::size_t bytes) {
  const int g = group_size(len, bytes);
  return UnitGrid{g, grid_for(units, kThreads / g)};
}

template <class T, class R>
void launch(const void* rows, std::int64_t n_out, std::int64_t n_red, const RowLayout& lay, void* out, R r,
            void* stream) {
  if (n_out == 0) return;
  using A = typename R::A;
  using O = typename R::O;
  const auto s = static_cast<cudaStream_t>(stream);
  const Split sp = split_for(n_out, n_red);
  if (sp.splits == 1) {
    const UnitGrid ug = unit_grid(n_out, n_red, sizeof(T));
    launch_kernel(rows_kernel<T, R, O>, ug.blocks, kThreads, s, static_cast<const T*>(rows), n_out, n_red, 1, n_red,
                  lay, static_cast<O*>(out), r, ug.group);
    check_launch("reduction");
    return;
  }
  PartialBuffer partial(static_cast<std::size_t>(n_out * sp.splits) * sizeof(A));
  A* p = static_cast<A*>(partial.ptr);
  const UnitGrid u1 = unit_grid(n_out * sp.splits, sp.chunk, sizeof(T)), u2 = unit_grid(n_out, sp.splits, sizeof(A));
  launch_kernel(rows_kernel<T, R, A>, u1.blocks, kThreads, s, static_cast<const T*>(rows), n_out * sp.splits, n_red,
                sp.splits, sp.chunk, lay, p, r, u1.group);
  check_launch("reduction (partials)");
  launch_kernel(rows_kernel<A, Partials<R>, O>, u2.blocks, kThreads, s, p, n_out, sp.splits, 1, sp.splits,
                RowLayout{sp.splits, 0, Divisor(sp.splits, false)}, static_cast<O*>(out), Partials<R>{r}, u2.group);
  check_launch("reduction");
}

// ---- statistics, norms, arg-extrema and scans -------------------------------------------------------

template <class T> struct wide { using type = T; };
template <> struct wide<float> { using type = double; };
template <> struct wide<c64> { using type = c128; };
/// The accumulator of sums of T: double for float, complex128 for complex64, T otherwise.
template <class T> using wide_t = typename wide<T>::type;

/// Real part (the value itself for real types), as double.
template <class T>
__device__ __forceinline__ double real_d(const T& v) {
  if constexpr (is_complex_v<T>) return static_cast<double>(v.real());
  else return static_cast<double>(v);
}
/// |v| in double (complex: hypot of the parts).
template <class T>
__device__ __forceinline__ double abs_d(const T& v) {
  if constexpr (is_complex_v<T>) return ::hypot(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  else return ::fabs(static_cast<double>(v));
}
/// |v|^2 in double.
template <class T>
__device__ __forceinline__ double abs2_d(const T& v) {
  if constexpr (is_complex_v<T>) {
    const double re = v.real(), im = v.imag();
    return re * re + im * im;
  } else {
    const double x = static_cast<double>(v);
    return x * x;
  }
}
template <class W>
__device__ __forceinline__ W exp_w(const W& v) {
  if constexpr (is_complex_v<W>) return ::phasor::detail::cexp(v);
  else return ::exp(v);
}
template <class W>
__device__ __forceinline__ W log_w(const W& v) {
  if constexpr (is_complex_v<W>) return ::phasor::detail::clog(v);
  else return ::log(v);
}

enum NormKind : int { kNorm0 = 0, kNorm1, kNorm2, kNormInf, kNormNegInf, kNormP };

/// The combine of a norm's accumulations: max/min with NaN winning (inf/-inf), else a sum.
struct NormCombine {
  int kind;
  __device__ double operator()(double a, double b) const {
    return kind == kNormInf ? reduce_max(a, b) : kind == kNormNegInf ? reduce_min(a, b) : a + b;
  }
};
/// A norm's result from its combined accumulation.
__device__ __forceinline__ double norm_finish(int kind, double total, double p) {
  return kind == kNorm2 ? ::sqrt(total) : kind == kNormP ? ::pow(total, 1.0 / p) : total;
}

/// Vector norm of each row (real result), accumulated in double: a count (0), sum |x| (1), sqrt(sum |x|^2)
/// (2), max/min |x| with NaN winning (inf/-inf), (sum |x|^p)^(1/p) (general p). Units as rows_kernel's
/// (Note [split rows]): with splits > 1 each unit's accumulation goes to `partial`, finished by
/// norm_partials_kernel; otherwise the row's norm goes to `out`.
template <class T>
__global__ void norm_kernel(const T* rows, std::int64_t n_units, std::int64_t n_red, std::int64_t splits,
                            std::int64_t chunk, real_t<T>* out, double* partial, int kind, double p, int group) {
  __shared__ Scratch scratch;
  const Group g(group);
  const NormCombine combine{kind};
  const double identity = kind == kNormNegInf ? ::cuda::std::numeric_limits<double>::infinity() : 0.0;
  for_units(g, n_units, n_red, splits, chunk, [&](const Unit& u) {
    const T* r = rows + u.row * n_red + u.start;
    double acc = identity;
    stride_fold<kLoadsInFlight<T>>(g.lane, u.len, g.size, [&](std::int64_t i) { return r[i]; },
                                   [&](const T& v, std::int64_t) {
                                     double m;
                                     switch (kind) {
                                       case kNorm0: m = convert<bool>(v) ? 1.0 : 0.0; break;
                                       case kNorm2: m = abs2_d(v); break;
                                       case kNormP: m = ::pow(abs_d(v), p); break;
                                       default: m = abs_d(v); break;
                                     }
                                     acc = combine(acc, m);
                                   });
    const double total = group_reduce(acc, g, scratch, combine);
    if (g.lane == 0 && u.live) {
      if (partial) partial[u.index] = total;
      else out[u.row] = static_cast<real_t<T>>(norm_finish(kind, total, p));
    }
  });
}

/// Pass 2 of a split norm: combines each row's `splits` partial accumulations and finishes the norm.
template <class R>
__global__ void norm_partials_kernel(const double* partial, std::int64_t n_out, std::int64_t splits, R* out, int kind,
                                     double p, int group) {
  __shared__ Scratch scratch;
  const Group g(group);
  const NormCombine combine{kind};
  for_units(g, n_out, splits, 1, splits, [&](const Unit& u) {
    double acc = kind == kNormNegInf ? ::cuda::std::numeric_limits<double>::infinity() : 0.0;
    const double* q = partial + u.row * splits;
    stride_fold<kLoadsInFlight<double>>(g.lane, u.len, g.size, [q](std::int64_t i) { return q[i]; },
                                        [&](double v, std::int64_t) { acc = combine(acc, v); });
    const double total = group_reduce(acc, g, scratch, combine);
    if (g.lane == 0 && u.live) out[u.row] = static_cast<R>(norm_finish(kind, total, p));
  });
}

/// The variance accumulation of n elements: their mean and the sum of |x - mean|^2 (m2).
template <class W>
struct VarPartial {
  W mean;
  double m2, n;
};
/// Two variance partials merged (Chan et al.'s pairwise update): exact for any split of a row.
template <class W>
__device__ __forceinline__ VarPartial<W> var_merge(const VarPartial<W>& a, const VarPartial<W>& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const double n = a.n + b.n;
  const W d = b.mean - a.mean;
  return VarPartial<W>{a.mean + d * (b.n / n), a.m2 + b.m2 + abs2_d(d) * (a.n * b.n / n), n};
}
/// m2 / divisor, or its square root.
__device__ __forceinline__ double var_finish(double m2, double divisor, bool take_sqrt) {
  const double v = m2 / divisor;
  return take_sqrt ? ::sqrt(v) : v;
}

/// Variance (or its square root) of each row in two passes: the mean, then the sum of |x - mean|^2,
/// divided by `divisor`; accumulated in double (complex128 for the complex mean). Two passes (the second
/// read often from L2) rather than Welford's one: its error grows with the elements one thread folds in
/// times |mean| / std, where the two-pass error in the mean enters only squared (as on the CPU). Units as rows_kernel's
/// (Note [split rows]): with splits > 1 each unit's (mean, m2, count) goes to `partial`, merged by
/// var_partials_kernel; otherwise the row's result goes to `out`.
template <class T>
__global__ void var_kernel(const T* rows, std::int64_t n_units, std::int64_t n_red, std::int64_t splits,
                           std::int64_t chunk, real_t<T>* out, VarPartial<wide_t<T>>* partial, double divisor,
                           bool take_sqrt, int group) {
  using W = wide_t<T>;
  __shared__ Scratch scratch;
  const Group g(group);
  auto add_w = [](const W& a, const W& b) { return a + b; };
  auto add_d = [](double a, double b) { return a + b; };
  for_units(g, n_units, n_red, splits, chunk, [&](const Unit& u) {
    const T* r = rows + u.row * n_red + u.start;
    auto read = [r](std::int64_t i) { return r[i]; };
    W s = W(0);
    stride_fold<kLoadsInFlight<T>>(g.lane, u.len, g.size, read, [&](const T& v, std::int64_t) { s += convert<W>(v); });
    const W mean = group_reduce(s, g, scratch, add_w) / static_cast<double>(u.len);  // 0/0: NaN, as on the CPU
    double q = 0;
    stride_fold<kLoadsInFlight<T>>(g.lane, u.len, g.size, read,
                                   [&](const T& v, std::int64_t) { q += abs2_d(convert<W>(v) - mean); });
    const double m2 = group_reduce(q, g, scratch, add_d);
    if (g.lane == 0 && u.live) {
      if (partial) partial[u.index] = VarPartial<W>{mean, m2, static_cast<double>(u.len)};
      else out[u.row] = static_cast<real_t<T>>(var_finish(m2, divisor, take_sqrt));
    }
  });
}

/// Pass 2 of a split variance: merges each row's `splits` partials and finishes the variance.
template <class W, class R>
__global__ void var_partials_kernel(const VarPartial<W>* partial, std::int64_t n_out, std::int64_t splits, R* out,
                                    double divisor, bool take_sqrt, int group) {
  __shared__ Scratch scratch;
  const Group g(group);
  auto merge = [](const VarPartial<W>& a, const VarPartial<W>& b) { return var_merge(a, b); };
  for_units(g, n_out, splits, 1, splits, [&](const Unit& u) {
    VarPartial<W> acc{W(0), 0.0, 0.0};
    const VarPartial<W>* q = partial + u.row * splits;
    stride_fold<kLoadsInFlight<VarPartial<W>>>(g.lane, u.len, g.size, [q](std::int64_t i) { return q[i]; },
                                               [&](const VarPartial<W>& v, std::int64_t) { acc = var_merge(acc, v); });
    const VarPartial<W> total = group_reduce(acc, g, scratch, merge);
    if (g.lane == 0 && u.live) out[u.row] = static_cast<R>(var_finish(total.m2, divisor, take_sqrt));
  });
}

/// The logsumexp accumulation of a chunk: its largest real part m (NaN wins) and s = sum(exp(x - shift(m))).
template <class W>
struct LsePartial {
  W s;
  double m;
};
/// The shift of a chunk or row whose largest real part is m: m, or 0 when m is infinite (as on the CPU:
/// shifting by an infinity would give NaN).
__device__ __forceinline__ double lse_shift(double m) { return ::isinf(m) ? 0.0 : m; }

/// log(sum(exp(x))) of each row, shifted by the row's largest real part m (NaN wins; an infinite m is
/// taken as 0, as on the CPU): log(sum(exp(x - m))) + m, summed in double / complex128. Units as
/// rows_kernel's (Note [split rows]): with splits > 1 each unit's (s, m) goes to `partial`, combined by
/// lse_partials_kernel; otherwise the row's result goes to `out`.
template <class T>
__global__ void lse_kernel(const T* rows, std::int64_t n_units, std::int64_t n_red, std::int64_t splits,
                           std::int64_t chunk, T* out, LsePartial<wide_t<T>>* partial, int group) {
  using W = wide_t<T>;
  __shared__ Scratch scratch;
  const Group g(group);
  auto max_d = [](double a, double b) { return reduce_max(a, b); };
  auto add_w = [](const W& a, const W& b) { return a + b; };
  for_units(g, n_units, n_red, splits, chunk, [&](const Unit& u) {
    const T* r = rows + u.row * n_red + u.start;
    auto read = [r](std::int64_t i) { return r[i]; };
    double m = -::cuda::std::numeric_limits<double>::infinity();
    stride_fold<kLoadsInFlight<T>>(g.lane, u.len, g.size, read,
                                   [&](const T& v, std::int64_t) { m = reduce_max(m, real_d(v)); });
    m = group_reduce(m, g, scratch, max_d);
    const double shift = lse_shift(m);
    W s = W(0);
    stride_fold<kLoadsInFlight<T>>(g.lane, u.len, g.size, read,
                                   [&](const T& v, std::int64_t) { s += exp_w(convert<W>(v) - W(shift)); });
    const W total = group_reduce(s, g, scratch, add_w);
    if (g.lane == 0 && u.live) {
      if (partial) partial[u.index] = LsePartial<W>{total, m};
      else out[u.row] = convert<T>(log_w(total) + W(shift));
    }
  });
}

/// v * f with the exact zeros of v kept when f is infinite (complex: per part, as exp(x + 0i) keeps its
/// zero imaginary part where a complex product would give 0 * inf = NaN).
template <class W>
__device__ __forceinline__ W scale_keeping_zeros(const W& v, double f) {
  if constexpr (is_complex_v<W>)
    return W(v.real() == 0 ? v.real() : v.real() * f, v.imag() == 0 ? v.imag() : v.imag() * f);
  else return v == 0 ? v : v * f;
}

/// Pass 2 of a split logsumexp: the row's shift M from the chunks' maxima, then
/// log(sum_c s_c exp(shift_c - M)) + M. A chunk with s_c = 0 (all -inf) adds nothing: skipping it avoids
/// 0 * inf when M is far below the chunk's shift of 0.
template <class T>
__global__ void lse_partials_kernel(const LsePartial<wide_t<T>>* partial, std::int64_t n_out, std::int64_t splits,
                                    T* out, int group) {
  using W = wide_t<T>;
  __shared__ Scratch scratch;
  const Group g(group);
  auto max_d = [](double a, double b) { return reduce_max(a, b); };
  auto add_w = [](const W& a, const W& b) { return a + b; };
  for_units(g, n_out, splits, 1, splits, [&](const Unit& u) {
    const LsePartial<W>* p = partial + u.row * splits;
    auto read = [p](std::int64_t i) { return p[i]; };
    constexpr int kU = kLoadsInFlight<LsePartial<W>>;
    double m = -::cuda::std::numeric_limits<double>::infinity();
    stride_fold<kU>(g.lane, u.len, g.size, read, [&](const LsePartial<W>& q, std::int64_t) { m = reduce_max(m, q.m); });
    const double shift = lse_shift(group_reduce(m, g, scratch, max_d));
    W s = W(0);
    stride_fold<kU>(g.lane, u.len, g.size, read, [&](const LsePartial<W>& q, std::int64_t) {
      if (!(q.s == W(0))) s += scale_keeping_zeros(q.s, ::exp(lse_shift(q.m) - shift));
    });
    const W total = group_reduce(s, g, scratch, add_w);
    if (g.lane == 0 && u.live) out[u.row] = convert<T>(log_w(total) + W(shift));
  });
}

/// The better of two (value, index) candidates of an arg-extremum: a NaN beats any number, a larger
/// (Max) or smaller value beats the other, ties go to the lower index; index < 0 marks "no candidate".
template <class T, bool Max>
__device__ __forceinline__ bool takes_over(const T& vb, std::int64_t ib, const T& va, std::int64_t ia) {
  if (ib < 0) return false;
  if (ia < 0) return true;
  const bool na = d_isnan(va), nb = d_isnan(vb);
  if (na || nb) return na && nb ? ib < ia : nb;
  if (Max ? vb > va : vb < va) return true;
  if (Max ? va > vb : va < vb) return false;
  return ib < ia;
}

/// An arg-extremum's candidate: a value and its index in the row (-1: none yet).
template <class T>
struct ArgCandidate {
  T v;
  std::int64_t i;
};
/// The better of two candidates (takes_over's rule).
template <class T, bool Max>
struct ArgBetter {
  __device__ ArgCandidate<T> operator()(const ArgCandidate<T>& a, const ArgCandidate<T>& b) const {
    return takes_over<T, Max>(b.v, b.i, a.v, a.i) ? b : a;
  }
};

/// Index (and value) of the first maximum / minimum of each row (NaN wins); rows have n_red >= 1. Units as
/// rows_kernel's (Note [split rows]): with splits > 1 each chunk's best (value, index within the row) goes
/// to pval / pidx, combined by arg_partials_kernel; otherwise the row's to idx / val.
template <class T, bool Max>
__global__ void arg_kernel(const T* rows, std::int64_t n_units, std::int64_t n_red, std::int64_t splits,
                           std::int64_t chunk, std::int64_t* idx, T* val, T* pval, std::int64_t* pidx, int group) {
  __shared__ Scratch scratch;
  const Group g(group);
  for_units(g, n_units, n_red, splits, chunk, [&](const Unit& u) {
    const T* r = rows + u.row * n_red;
    ArgCandidate<T> best{T(), -1};
    stride_fold<kLoadsInFlight<T>>(u.start + g.lane, u.start + u.len, g.size, [&](std::int64_t i) { return r[i]; },
                                   [&](const T& v, std::int64_t i) {
                                     if (takes_over<T, Max>(v, i, best.v, best.i)) best = ArgCandidate<T>{v, i};
                                   });
    best = group_reduce(best, g, scratch, ArgBetter<T, Max>{});
    if (g.lane == 0 && u.live) {
      if (pidx) {
        pidx[u.index] = best.i;
        pval[u.index] = best.v;
      } else {
        idx[u.row] = best.i;
        if (val) val[u.row] = best.v;
      }
    }
  });
}

/// Pass 2 of a split arg-extremum: the best of each row's `splits` (value, index) candidates.
template <class T, bool Max>
__global__ void arg_partials_kernel(const T* pval, const std::int64_t* pidx, std::int64_t n_out, std::int64_t splits,
                                    std::int64_t* idx, T* val, int group) {
  __shared__ Scratch scratch;
  const Group g(group);
  for_units(g, n_out, splits, 1, splits, [&](const Unit& u) {
    ArgCandidate<T> best{T(), -1};
    const std::int64_t k0 = u.row * splits;
    stride_fold<kLoadsInFlight<ArgCandidate<T>>>(
        g.lane, u.len, g.size, [&](std::int64_t i) { return ArgCandidate<T>{pval[k0 + i], pidx[k0 + i]}; },
        [&](const ArgCandidate<T>& c, std::int64_t) {
          if (takes_over<T, Max>(c.v, c.i, best.v, best.i)) best = c;
        });
    best = group_reduce(best, g, scratch, ArgBetter<T, Max>{});
    if (g.lane == 0 && u.live) {
      idx[u.row] = best.i;
      if (val) val[u.row] = best.v;
    }
  });
}

template <class T> struct scan_acc { using type = T; };
template <> struct scan_acc<float> { using type = double; };
template <> struct scan_acc<c64> { using type = c128; };

/// The running values of kind K (core/scan_rules.hpp) along the middle dim of a contiguous (outer, n, inner)
/// tensor, one thread per column (o, i) scanning serially: for short scans or many columns.
template <class T, ScanKind K>
__global__ void scan_columns_kernel(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                                    bool reverse) {
  using A = typename scan_acc<T>::type;
  const std::int64_t cols = outer * inner;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += step) {
    const std::int64_t first = (c / inner) * n * inner + c % inner + (reverse ? (n - 1) * inner : 0);
    const std::int64_t along = reverse ? -inner : inner;
    auto at = [&](std::int64_t kk) { return first + kk * along; };
    A acc = scan_identity<K, A>();
    // the next loads issued before the running value reaches them (Note [loads in flight]); each y element
    // is written after its own x element was read, so y may be x itself
    stride_fold<kLoadsInFlight<T>>(0, n, 1, [&](std::int64_t kk) { return x[at(kk)]; },
                                   [&](const T& v, std::int64_t kk) {
                                     acc = scan_combine<K>(acc, convert<A>(v));
                                     y[at(kk)] = convert<T>(acc);
                                   });
  }
}

/// The same with one block per column: chunks of kThreads elements scanned in shared memory
/// (Hillis-Steele inclusive scan), each chunk combined with the running value of the ones before it.
template <class T, ScanKind K>
__global__ void scan_blocks_kernel(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                                   bool reverse) {
  using A = typename scan_acc<T>::type;
  __shared__ Scratch scratch;
  static_assert(sizeof(A) <= 16, "scan: accumulator too large");
  A* sh = reinterpret_cast<A*>(scratch.bytes);
  const int t = static_cast<int>(threadIdx.x);
  for (std::int64_t c = blockIdx.x; c < outer * inner; c += gridDim.x) {
    const std::int64_t base = (c / inner) * n * inner + c % inner;
    A carry = scan_identity<K, A>();
    for (std::int64_t k0 = 0; k0 < n; k0 += kThreads) {
      const std::int64_t kk = k0 + t;
      const std::int64_t at = base + (reverse ? n - 1 - kk : kk) * inner;
      A v = kk < n ? convert<A>(x[at]) : scan_identity<K, A>();
      sh[t] = v;
      __syncthreads();
      for (int s = 1; s < kThreads; s <<= 1) {
        const A left = t >= s ? sh[t - s] : scan_identity<K, A>();
        __syncthreads();
        v = scan_combine<K>(left, v);
        sh[t] = v;
        __syncthreads();
      }
      if (kk < n) y[at] = convert<T>(scan_combine<K>(carry, v));
      carry = scan_combine<K>(carry, sh[kThreads - 1]);  // the chunk's total
      __syncthreads();  // before the next chunk overwrites sh
    }
  }
}

}  // namespace

bool reduce_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, void* out,
                 void* stream, std::int64_t inner, std::int64_t outer_stride) {
  const bool gapped = inner > 0 && inner < n_red;
  const RowLayout lay = gapped ? RowLayout{inner, outer_stride, Divisor(inner, fits_fast_div(n_red))}
                               : RowLayout{n_red, 0, Divisor(n_red, false)};
  bool done = false;
  with_type<kAll>(in, [&](auto tag) {
    using T = decltype(tag);
    if (!std::strcmp(op, "sum")) {
      launch<T>(rows, n_out, n_red, lay, out, Sum<T>{}, stream), done = true;
    } else if (!std::strcmp(op, "prod")) {
      launch<T>(rows, n_out, n_red, lay, out, Prod<T>{}, stream), done = true;
    } else if (!std::strcmp(op, "all")) {
      launch<T>(rows, n_out, n_red, lay, out, Logical<T, true>{}, stream), done = true;
    } else if (!std::strcmp(op, "any")) {
      launch<T>(rows, n_out, n_red, lay, out, Logical<T, false>{}, stream), done = true;
    } else if constexpr (!is_complex_v<T>) {
      if (!std::strcmp(op, "amax")) launch<T>(rows, n_out, n_red, lay, out, Extremum<T, true>{}, stream), done = true;
      else if (!std::strcmp(op, "amin")) launch<T>(rows, n_out, n_red, lay, out, Extremum<T, false>{}, stream), done = true;
    }
  });
  return done;
}

}  // namespace phasor::cuda

namespace phasor::cuda {

bool stat_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, double param,
               void* out, void* stream) {
  if (in != Dtype::Float32 && in != Dtype::Float64 && in != Dtype::Complex64 && in != Dtype::Complex128) return false;
  const std::string name(op);
  if (name != "norm" && name != "var" && name != "std" && name != "logsumexp") return false;
  if (n_out == 0) return true;
  const auto s = static_cast<cudaStream_t>(stream);
  const Split sp = split_for(n_out, n_red);  // Note [split rows]
  const std::int64_t units = n_out * sp.splits;
  const UnitGrid u1 = unit_grid(units, sp.chunk, itemsize(in));  // rows or chunks (Note [short rows])
  with_type<kAll>(in, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<real_t<T>, float> || std::is_same_v<real_t<T>, double>) {
      using W = wide_t<T>;
      const T* r = static_cast<const T*>(rows);
      auto* ro = static_cast<real_t<T>*>(out);
      if (name == "norm") {
        const double inf = std::numeric_limits<double>::infinity();
        const int kind = param == 0 ? kNorm0 : param == 1 ? kNorm1 : param == 2 ? kNorm2 : param == inf ? kNormInf
                         : param == -inf ? kNormNegInf : kNormP;
        if (sp.splits == 1) {
          launch_kernel(norm_kernel<T>, u1.blocks, kThreads, s, r, n_out, n_red, 1, n_red, ro, nullptr, kind, param,
                        u1.group);
        } else {
          PartialBuffer partial(static_cast<std::size_t>(units) * sizeof(double));
          auto* pp = static_cast<double*>(partial.ptr);
          launch_kernel(norm_kernel<T>, u1.blocks, kThreads, s, r, units, n_red, sp.splits, sp.chunk, ro, pp, kind,
                        param, u1.group);
          check_launch("norm (partials)");
          const UnitGrid u2 = unit_grid(n_out, sp.splits, sizeof(double));  // each row's partials
          launch_kernel(norm_partials_kernel<real_t<T>>, u2.blocks, kThreads, s, pp, n_out, sp.splits, ro, kind, param,
                        u2.group);
        }
      } else if (name == "logsumexp") {
        auto* o = static_cast<T*>(out);
        if (sp.splits == 1) {
          launch_kernel(lse_kernel<T>, u1.blocks, kThreads, s, r, n_out, n_red, 1, n_red, o, nullptr, u1.group);
        } else {
          PartialBuffer partial(static_cast<std::size_t>(units) * sizeof(LsePartial<W>));
          auto* pp = static_cast<LsePartial<W>*>(partial.ptr);
          launch_kernel(lse_kernel<T>, u1.blocks, kThreads, s, r, units, n_red, sp.splits, sp.chunk, o, pp, u1.group);
          check_launch("logsumexp (partials)");
          const UnitGrid u2 = unit_grid(n_out, sp.splits, sizeof(LsePartial<W>));
          launch_kernel(lse_partials_kernel<T>, u2.blocks, kThreads, s, pp, n_out, sp.splits, o, u2.group);
        }
      } else {
        const bool take_sqrt = name == "std";
        if (sp.splits == 1) {
          launch_kernel(var_kernel<T>, u1.blocks, kThreads, s, r, n_out, n_red, 1, n_red, ro, nullptr, param, take_sqrt,
                        u1.group);
        } else {
          PartialBuffer partial(static_cast<std::size_t>(units) * sizeof(VarPartial<W>));
          auto* pp = static_cast<VarPartial<W>*>(partial.ptr);
          launch_kernel(var_kernel<T>, u1.blocks, kThreads, s, r, units, n_red, sp.splits, sp.chunk, ro, pp, param,
                        take_sqrt, u1.group);
          check_launch("var (partials)");
          const UnitGrid u2 = unit_grid(n_out, sp.splits, sizeof(VarPartial<W>));
          launch_kernel(var_partials_kernel<W, real_t<T>>, u2.blocks, kThreads, s, pp, n_out, sp.splits, ro, param,
                        take_sqrt, u2.group);
        }
      }
    }
  });
  check_launch(op);
  return true;
}

bool arg_rows(Dtype in, bool is_max, const void* rows, std::int64_t n_out, std::int64_t n_red, std::int64_t* idx,
              void* values, void* stream) {
  if (in == Dtype::Complex64 || in == Dtype::Complex128) return false;
  if (n_out == 0) return true;
  const auto s = static_cast<cudaStream_t>(stream);
  const Split sp = split_for(n_out, n_red);  // Note [split rows]
  const std::int64_t units = n_out * sp.splits;
  const UnitGrid u1 = unit_grid(units, sp.chunk, itemsize(in));  // rows or chunks (Note [short rows])
  with_type<kAll>(in, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T>) {
      const T* r = static_cast<const T*>(rows);
      T* v = static_cast<T*>(values);
      auto run = [&](auto max_tag) {
        constexpr bool Max = decltype(max_tag)::value;
        if (sp.splits == 1) {
          launch_kernel(arg_kernel<T, Max>, u1.blocks, kThreads, s, r, n_out, n_red, 1, n_red, idx, v, nullptr, nullptr,
                        u1.group);
          return;
        }
        // one buffer: the candidates' indices, then their values (8-byte aligned: sizeof(T) <= 8)
        PartialBuffer partial(static_cast<std::size_t>(units) * (sizeof(std::int64_t) + sizeof(T)));
        auto* pidx = static_cast<std::int64_t*>(partial.ptr);
        auto* pval = reinterpret_cast<T*>(pidx + units);
        launch_kernel(arg_kernel<T, Max>, u1.blocks, kThreads, s, r, units, n_red, sp.splits, sp.chunk, idx, v, pval,
                      pidx, u1.group);
        check_launch(Max ? "argmax (partials)" : "argmin (partials)");
        const UnitGrid u2 = unit_grid(n_out, sp.splits, sizeof(ArgCandidate<T>));  // each row's candidates
        launch_kernel(arg_partials_kernel<T, Max>, u2.blocks, kThreads, s, pval, pidx, n_out, sp.splits, idx, v,
                      u2.group);
      };
      if (is_max) run(std::true_type{});
      else run(std::false_type{});
    }
  });
  check_launch(is_max ? "argmax" : "argmin");
  return true;
}

bool scan(ScanKind kind, Dtype dt, const void* x, void* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
          bool reverse, void* stream) {
  if (dt == Dtype::Bool) return false;
  const std::int64_t cols = outer * inner;
  if (cols == 0 || n == 0) return true;
  const auto s = static_cast<cudaStream_t>(stream);
  // serial per column when the scans are short or there are enough columns to fill the GPU;
  // a block per column (chunked shared-memory scans) for few long scans
  const bool serial = n <= 64 || cols >= 4096;
  bool done = false;
  visit_scan(kind, [&](auto kind_tag) {
    constexpr ScanKind K = decltype(kind_tag)::value;
    with_type<kAll>(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool> && scan_supports_v<K, typename scan_acc<T>::type>) {
        const T* xp = static_cast<const T*>(x);
        T* yp = static_cast<T*>(y);
        if (serial)
          launch_kernel(scan_columns_kernel<T, K>, grid_for(cols, kThreads), kThreads, s, xp, yp, outer, n, inner, reverse);
        else
          launch_kernel(scan_blocks_kernel<T, K>, grid_for(cols, 1), kThreads, s, xp, yp, outer, n, inner, reverse);
        done = true;
      }
    });
  });
  if (done) check_launch(scan_name(kind));
  return done;
}

}  // namespace phasor::cuda
