// src/core/rounding_kernels.cpp - floor, ceil, round half to even and trunc on contiguous float32/float64 rows.
//
// Note [rounding without libm]
// floor, ceil and nearbyint are libm calls on the SSE2 baseline (roundps is SSE4.1): a call per element,
// 13x torch's time for a 1M floor. Where the CPU has AVX (cpu_avx(), read once) the loops run
// vroundps / vroundpd, the IEEE 754 roundToIntegral of 8 floats or 4 doubles per instruction, exceptions
// masked. Elsewhere, and with PHASOR_CPU_BASELINE=1 in the environment (ctest's test_cpu_baseline sets it
// to check this form on any machine): for |v| < 2^(p-1) (p the mantissa's bits: 2^23 for float, 2^52 for
// double) (|v| + 2^(p-1)) - 2^(p-1) is |v| rounded to the nearest integer, ties to even, in the default
// rounding mode (what nearbyint does); floor and ceil step that by one where it went the wrong way, trunc is
// the floor of |v|. Larger values, infinities and NaN are integral or NaN already and stay as they are. The result
// takes v's sign, which is always the sign of floor, ceil and round of v (round(-0.3) = -0, ceil(-0.7) = -0).
// Branch-free, so the loops vectorize; the library is built without -ffast-math, which would fold the two
// additions.
// Both forms give libm's values bit for bit (tests/test_unary.cpp compares them with std::floor / ceil /
// nearbyint).
#include "core/rounding_kernels.hpp"

#include "core/cpu_features.hpp"

#include <immintrin.h>

#include <cmath>
#include <limits>

namespace phasor::detail {

namespace {

/// v rounded to the nearest integer, ties to even, without libm (Note [rounding without libm]).
template <class T>
inline T round_even(T v) {
  constexpr T big = T(1) / std::numeric_limits<T>::epsilon();  // 2^(p-1)
  const T a = std::fabs(v);
  const T r = std::copysign((a + big) - big, v);
  return a < big ? r : v;
}

/// The baseline loop of `mode` (vectorized with SSE2).
template <class T>
void round_portable(const T* x, T* y, std::int64_t n, RoundMode mode) {
  switch (mode) {
    case RoundMode::Floor:
      for (std::int64_t i = 0; i < n; ++i) {
        const T r = round_even(x[i]);
        y[i] = std::copysign(r - T(r > x[i]), x[i]);
      }
      break;
    case RoundMode::Ceil:
      for (std::int64_t i = 0; i < n; ++i) {
        const T r = round_even(x[i]);
        y[i] = std::copysign(r + T(r < x[i]), x[i]);
      }
      break;
    case RoundMode::HalfEven:
      for (std::int64_t i = 0; i < n; ++i) y[i] = round_even(x[i]);
      break;
    case RoundMode::Trunc:  // floor of |v|, v's sign
      for (std::int64_t i = 0; i < n; ++i) {
        const T a = std::fabs(x[i]), r = round_even(a);
        y[i] = std::copysign(r - T(r > a), x[i]);
      }
      break;
  }
}

/// The AVX loop for one rounding immediate (_MM_FROUND_TO_NEG_INF etc. with _MM_FROUND_NO_EXC).
template <int Imm>
__attribute__((target("avx"))) void round_avx(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_round_ps(_mm256_loadu_ps(x + i), Imm));
  for (; i < n; ++i) _mm_store_ss(y + i, _mm_round_ss(_mm_setzero_ps(), _mm_load_ss(x + i), Imm));
}
template <int Imm>
__attribute__((target("avx"))) void round_avx(const double* x, double* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, _mm256_round_pd(_mm256_loadu_pd(x + i), Imm));
  for (; i < n; ++i) _mm_store_sd(y + i, _mm_round_sd(_mm_setzero_pd(), _mm_load_sd(x + i), Imm));
}

template <class T>
void round_any(const T* x, T* y, std::int64_t n, RoundMode mode) {
  if (!cpu_avx()) return round_portable(x, y, n, mode);
  switch (mode) {
    case RoundMode::Floor: return round_avx<_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC>(x, y, n);
    case RoundMode::Ceil: return round_avx<_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC>(x, y, n);
    case RoundMode::HalfEven: return round_avx<_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC>(x, y, n);
    case RoundMode::Trunc: return round_avx<_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC>(x, y, n);
  }
}

}  // namespace

void round_rows(const float* x, float* y, std::int64_t n, RoundMode mode) { round_any(x, y, n, mode); }
void round_rows(const double* x, double* y, std::int64_t n, RoundMode mode) { round_any(x, y, n, mode); }

}  // namespace phasor::detail
