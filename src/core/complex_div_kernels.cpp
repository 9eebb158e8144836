// src/core/complex_div_kernels.cpp - contiguous complex division, vectorized.
//
// Note [vector complex division]
// cdiv (core/complex_math.hpp) divides one element at a time: three double divisions and a branch per
// element, ~9-10 ns on these machines, where torch's vectorized division takes 0.6-0.9 ns (complex64) and
// 1.7-2.1 ns (complex128). These loops run the same arithmetic branch-free over a row: every element takes
// Smith's path (div_in_safe_range and smith_div are selects, not branches), so GCC vectorizes it, and
// an element outside the safe range (rare: parts beyond 2^+-510, zeros, infinities, NaN) is redone by
// div_parts_rare in a second pass over the row, only when the row has one. The results are cdiv's bit for
// bit: the same operations in the same order, and no contraction into fma (the clones are AVX2 without
// FMA, and the baseline). Compiled once per ISA with the ifunc picked at load time (Note [vector gelu]).
#include "core/complex_div_kernels.hpp"

#include "core/complex_math.hpp"
#include "core/cpu_features.hpp"

namespace phasor::detail {

namespace {

/// o = a / b over n interleaved (re, im) pairs of R.
template <class R>
inline __attribute__((always_inline)) void div_row(const R* __restrict a, const R* __restrict b, R* __restrict o,
                                                   std::int64_t n) {
  int rare = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    rare |= !div_in_safe_range(ar, ai, br, bi);
    double x, y;
    smith_div(ar, ai, br, bi, x, y);
    o[2 * i] = static_cast<R>(x);
    o[2 * i + 1] = static_cast<R>(y);
  }
  if (!rare) return;
  for (std::int64_t i = 0; i < n; ++i) {
    const double ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    if (div_in_safe_range(ar, ai, br, bi)) continue;
    double x, y;
    div_parts_rare(ar, ai, br, bi, x, y);
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
