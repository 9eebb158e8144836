// src/core/reduce_kernels.cpp - vectorized contiguous blocks of float32/float64 sums and extrema.
//
// Note [vector reduction blocks]
// The reduction engine (Note [reduction engine]) folds a contiguous run in blocks of at most
// kPairwiseBlock elements, each with kLanes independent accumulators, and a long run (reduce_streams) four
// distant blocks at a time. Compiled for the SSE2 baseline those loops ran at 4 floats per instruction, and
// amax's order-independent combine (reduce_max: NaN first, +0 above -0) took a compare, two selects and a NaN
// test per element: a 1M float32 sum took 2.3x torch's time, amax 5x. These kernels do the same work wider:
//  - sums keep the engine's lanes, fold and tail, so every block's result is bitwise what the scalar loop
//    gave. A block alone is compiled once per ISA (AVX-512, AVX2, baseline; the ifunc picks one at load
//    time, as Note [vector gelu]); four blocks at once are AVX intrinsics where cpu_avx() (GCC kept the
//    four blocks' lanes on the stack otherwise), the scalar loop elsewhere. The four streams matter when
//    memory is the limit: a 2-thread 64 MiB sum ran at 59 GB/s with one stream per thread, 68 with four.
//  - extrema compare integer keys: a float's bits with the magnitude bits flipped when the sign is set order
//    as the floats do, -0 below +0, so one integer max (min) per element gives reduce_max's (reduce_min's)
//    result for every non-NaN input. NaN is found apart, as a magnitude above infinity's; a run holding one
//    returns its first NaN. The result is exact, so the lane count does not matter, and a contiguous run of
//    any length is one call.
//  - the outer mode's four-row step (reduce_rows_tile: a reduction over leading dims, columns contiguous, at
//    least 64 of them; narrower rows cost more in calls than they save) folds four rows into the column
//    accumulators in the scalar loop's order, with reduce_max / reduce_min themselves (element_traits.hpp:
//    selects only, as a `&&` there kept GCC's loop scalar). amax over dim 0 of a (4096, 256) float32 tensor
//    took 631 us, then 153, and 121-127 once reduce_max itself was selects only (its block combines in
//    reduce_rows_tile vectorize too; torch 70); its sum 66 -> 47 us (torch 58): bench_core BM_ReduceDims,
//    bench/README.md (l).
#include "core/reduce_kernels.hpp"

#include "core/cpu_features.hpp"
#include "core/element_traits.hpp"

#include <immintrin.h>

#include <limits>
#include <type_traits>

namespace phasor::detail {

namespace {

/// The engine's lanes for a block of F (lanes_for in reduce.hpp: 32 float, 16 double); four blocks at once
/// take half as many each.
template <class F>
inline constexpr int kLanes = static_cast<int>(128 / sizeof(F));

/// Sum of p[0..n) with L lanes folded as a halving tree, then the tail (the engine's reduce_seq block).
template <class F, int L = kLanes<F>>
PHASOR_INLINE F sum_lanes(const F* p, std::int64_t n) {
  F a[L];
  for (int k = 0; k < L; ++k) a[k] = F(0);
  std::int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) a[k] += p[i + k];
  for (int w = L / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) a[k] += a[k + w];
  F t = a[0];
  for (; i < n; ++i) t += p[i];
  return t;
}

/// Sums of four blocks of n elements, p + b gap for b < 4, each with half the lanes of a block alone (n a
/// multiple of them, so no tail): reduce_streams' scalar loop, for CPUs without AVX.
template <class F>
void sum_blocks4_portable(const F* p, std::int64_t gap, std::int64_t n, F* out) {
  for (int b = 0; b < 4; ++b) out[b] = sum_lanes<F, kLanes<F> / 2>(p + b * gap, n);
}

// With AVX: four blocks at once, each block's 16 float (8 double) lanes in two registers, lanes 0-7 (0-3) in
// the first; the halving tree is then the sum of the two registers, of its 128-bit halves, and so on (Avx::fold).
// GCC left the same loop written with arrays of lanes on the stack (a store and a reload per add, 3x slower
// than before), so these are intrinsics.

/// One AVX register of F lanes: 8 float or 4 double.
template <class F>
struct Avx;
template <>
struct Avx<float> {
  using V = __m256;
  __attribute__((target("avx"), always_inline)) static V zero() { return _mm256_setzero_ps(); }
  __attribute__((target("avx"), always_inline)) static V load(const float* p) { return _mm256_loadu_ps(p); }
  __attribute__((target("avx"), always_inline)) static V add(V a, V b) { return _mm256_add_ps(a, b); }
  /// The halving tree of v's 8 lanes.
  __attribute__((target("avx"), always_inline)) static float fold(V v) {
    const __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // w = 4
    const __m128 y = _mm_add_ps(x, _mm_movehl_ps(x, x));                                  // w = 2
    return _mm_cvtss_f32(_mm_add_ss(y, _mm_shuffle_ps(y, y, 1)));                        // w = 1
  }
};
template <>
struct Avx<double> {
  using V = __m256d;
  __attribute__((target("avx"), always_inline)) static V zero() { return _mm256_setzero_pd(); }
  __attribute__((target("avx"), always_inline)) static V load(const double* p) { return _mm256_loadu_pd(p); }
  __attribute__((target("avx"), always_inline)) static V add(V a, V b) { return _mm256_add_pd(a, b); }
  /// The halving tree of v's 4 lanes.
  __attribute__((target("avx"), always_inline)) static double fold(V v) {
    const __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));  // w = 2
    return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));                          // w = 1
  }
};

/// sum_blocks4_portable with AVX (above).
template <class F>
__attribute__((target("avx"))) void sum_blocks4_avx(const F* p, std::int64_t gap, std::int64_t n, F* out) {
  using A = Avx<F>;
  constexpr std::int64_t kW = 32 / sizeof(F);  // lanes per register
  typename A::V lo[4], hi[4];
  for (int b = 0; b < 4; ++b) lo[b] = hi[b] = A::zero();
  for (std::int64_t i = 0; i < n; i += 2 * kW)
    for (int b = 0; b < 4; ++b) {
      lo[b] = A::add(lo[b], A::load(p + b * gap + i));
      hi[b] = A::add(hi[b], A::load(p + b * gap + i + kW));
    }
  for (int b = 0; b < 4; ++b) out[b] = A::fold(A::add(lo[b], hi[b]));
}

/// The ordering key of a float's bits b (I: the same-width signed integer): b itself for a clear sign bit,
/// b with its magnitude bits flipped otherwise. Keys compare as the floats do, -0 below +0; an involution.
template <class I>
PHASOR_INLINE I order_key(I b) {
  return b ^ ((b >> (sizeof(I) * 8 - 1)) & std::numeric_limits<I>::max());
}

/// max (Max) or min of p[0..n) by order keys in L lanes; the first NaN if there is one.
template <bool Max, class F, int L = kLanes<F>>
PHASOR_INLINE F extremum_keys(const F* p, std::int64_t n) {
  using I = std::conditional_t<sizeof(F) == 4, std::int32_t, std::int64_t>;
  constexpr I kMag = std::numeric_limits<I>::max();  // every bit but the sign
  constexpr F kInf = std::numeric_limits<F>::infinity();
  const I start = order_key(__builtin_bit_cast(I, Max ? -kInf : kInf));
  const I inf_bits = __builtin_bit_cast(I, kInf);
  I m[L], a[L];  // keys; magnitudes' bits (a NaN's exceed infinity's)
  for (int k = 0; k < L; ++k) {
    m[k] = start;
    a[k] = 0;
  }
  std::int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) {
      const I b = __builtin_bit_cast(I, p[i + k]);
      const I key = order_key(b);
      m[k] = Max ? (key > m[k] ? key : m[k]) : (key < m[k] ? key : m[k]);
      const I mag = b & kMag;
      a[k] = mag > a[k] ? mag : a[k];
    }
  I tm = m[0], ta = a[0];
  for (int k = 1; k < L; ++k) {
    tm = Max ? (m[k] > tm ? m[k] : tm) : (m[k] < tm ? m[k] : tm);
    ta = a[k] > ta ? a[k] : ta;
  }
  for (; i < n; ++i) {
    const I b = __builtin_bit_cast(I, p[i]);
    const I key = order_key(b);
    tm = Max ? (key > tm ? key : tm) : (key < tm ? key : tm);
    ta = (b & kMag) > ta ? (b & kMag) : ta;
  }
  if (ta > inf_bits) {
    for (std::int64_t j = 0;; ++j)
      if (p[j] != p[j]) return p[j];
  }
  return __builtin_bit_cast(F, order_key(tm));
}

/// fold_rows4 for one combine (F = reduce_max etc. as a functor).
template <class R, class F>
PHASOR_INLINE void fold4(R* __restrict acc, const R* __restrict r0, const R* __restrict r1, const R* __restrict r2,
                         const R* __restrict r3, std::int64_t w, F f) {
  for (std::int64_t j = 0; j < w; ++j) acc[j] = f(acc[j], f(f(r0[j], r1[j]), f(r2[j], r3[j])));
}

template <class R>
PHASOR_INLINE void fold_rows4_any(R* acc, const R* const* r, std::int64_t w, RowFold f) {
  switch (f) {
    case RowFold::Sum: return fold4(acc, r[0], r[1], r[2], r[3], w, [](R a, R b) { return a + b; });
    case RowFold::Max: return fold4(acc, r[0], r[1], r[2], r[3], w, [](R a, R b) { return reduce_max(a, b); });
    case RowFold::Min: return fold4(acc, r[0], r[1], r[2], r[3], w, [](R a, R b) { return reduce_min(a, b); });
  }
}

}  // namespace

PHASOR_CLONES float sum_block(const float* p, std::int64_t n) { return sum_lanes(p, n); }
PHASOR_CLONES double sum_block(const double* p, std::int64_t n) { return sum_lanes(p, n); }

void sum_blocks4(const float* p, std::int64_t gap, std::int64_t n, float* out) {
  (cpu_avx() ? sum_blocks4_avx<float> : sum_blocks4_portable<float>)(p, gap, n, out);
}
void sum_blocks4(const double* p, std::int64_t gap, std::int64_t n, double* out) {
  (cpu_avx() ? sum_blocks4_avx<double> : sum_blocks4_portable<double>)(p, gap, n, out);
}

PHASOR_CLONES float extremum_block(const float* p, std::int64_t n, bool is_max) {
  return is_max ? extremum_keys<true>(p, n) : extremum_keys<false>(p, n);
}
PHASOR_CLONES double extremum_block(const double* p, std::int64_t n, bool is_max) {
  return is_max ? extremum_keys<true>(p, n) : extremum_keys<false>(p, n);
}

PHASOR_CLONES void fold_rows4(float* acc, const float* const* r, std::int64_t w, RowFold f) {
  fold_rows4_any(acc, r, w, f);
}
PHASOR_CLONES void fold_rows4(double* acc, const double* const* r, std::int64_t w, RowFold f) {
  fold_rows4_any(acc, r, w, f);
}

}  // namespace phasor::detail
