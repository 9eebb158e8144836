// src/core/complex_div_kernels.cpp - contiguous complex division, vectorized.
//
// Note [vector complex division]
// cdiv (core/complex_math.hpp) divides one element at a time, with a branch per element (and, before 2026-12-06,
// three double divisions for complex64 too): ~9-10 ns on these machines, where torch's vectorized division takes
// 0.6-0.9 ns (complex64) and 1.7-2.1 ns (complex128). These loops run the same arithmetic branch-free over a row:
// every element takes the common path (complex64: float_div; complex128: Smith's, div_in_safe_range and smith_div
// being selects, not branches), so GCC vectorizes it, and an element outside it (rare: zeros, infinities, NaN; for
// complex128 parts beyond 2^+-510) is redone as cdiv does it in a second pass over the row, only when the row has
// one. The results are cdiv's bit for bit: the same operations in the same order, and no contraction into fma (the
// clones are AVX2 without FMA, and the baseline). A row is split into arrays of parts by blocks of 64 first: on
// interleaved (re, im) pairs GCC vectorized across the pair and divided twice an element. complex64 1.65 -> 1.16-1.22 ns
// an element with float_div (one division), complex128 1.39 -> 1.31 (a /tmp driver over 4096 elements, AVX2
// clones, 2026-12-06; bench table (e)). Compiled once per ISA with the ifunc picked at load time (Note [vector gelu]).
#include "core/complex_div_kernels.hpp"

#include "core/complex_math.hpp"
#include "core/cpu_features.hpp"

namespace phasor::detail {

namespace {

/// o = a / b over n interleaved (re, im) pairs of R: every element by the common path (float: float_div, double:
/// Smith's unscaled), then the few outside it again as cdiv does them; blocks of kBlock elements are split into
/// arrays of parts first (Note [vector complex division]).
template <class R>
inline __attribute__((always_inline)) void div_row(const R* __restrict a, const R* __restrict b, R* __restrict o,
                                                   std::int64_t n) {
  constexpr bool kFloat = sizeof(R) == sizeof(float);
  const auto common = [](double ar, double ai, double br, double bi) {
    return kFloat ? float_div_applies(ar, ai, br, bi) : div_in_safe_range(ar, ai, br, bi);
  };
  constexpr std::int64_t kBlock = 64;
  double ar[kBlock], ai[kBlock], br[kBlock], bi[kBlock], x[kBlock], y[kBlock];
  int rare = 0;
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    const R *pa = a + 2 * i0, *pb = b + 2 * i0;
    for (std::int64_t j = 0; j < m; ++j) {
      ar[j] = pa[2 * j];
      ai[j] = pa[2 * j + 1];
      br[j] = pb[2 * j];
      bi[j] = pb[2 * j + 1];
    }
    for (std::int64_t j = 0; j < m; ++j) {
      rare |= !common(ar[j], ai[j], br[j], bi[j]);
      if constexpr (kFloat) float_div(ar[j], ai[j], br[j], bi[j], x[j], y[j]);
      else smith_div(ar[j], ai[j], br[j], bi[j], x[j], y[j]);
    }
    R* po = o + 2 * i0;
    for (std::int64_t j = 0; j < m; ++j) {
      po[2 * j] = static_cast<R>(x[j]);
      po[2 * j + 1] = static_cast<R>(y[j]);
    }
  }
  if (!rare) return;
  for (std::int64_t i = 0; i < n; ++i) {
    const double ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    if (common(ar, ai, br, bi)) continue;
    double x, y;
    if constexpr (kFloat) div_parts(ar, ai, br, bi, x, y);
    else div_parts_rare(ar, ai, br, bi, x, y);
    o[2 * i] = static_cast<R>(x);
    o[2 * i + 1] = static_cast<R>(y);
  }
}

}  // namespace

PHASOR_CLONES_EXACT
void div_c64(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* out, std::int64_t n) {
  div_row(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), reinterpret_cast<float*>(out), n);
}

PHASOR_CLONES_EXACT
void div_c128(const std::complex<double>* a, const std::complex<double>* b, std::complex<double>* out,
              std::int64_t n) {
  div_row(reinterpret_cast<const double*>(a), reinterpret_cast<const double*>(b), reinterpret_cast<double*>(out),
          n);
}

}  // namespace phasor::detail
