// src/core/division_kernels.cpp - fmod and remainder on contiguous float32 rows.
//
// Note [vector fmod]
// fmod_of and remainder_of (Note [fast fmod] in core/real_binary_rules.hpp) divide in double and mend the rare
// quotient the division rounded up, but per element they also test for the generic form (infinite divisor,
// zero divisor, quotient past 2^29) and call the C library's fmod there: the call keeps the engine's loop
// scalar (float32 remainder 3x torch's time on one thread). Here the fast form runs for every element as
// selects, no branch and no call, so the loop vectorizes; it also notes whether any element needed the generic
// form, and only then a second pass recomputes those elements with fmod_of / remainder_of. The formulas are
// fmod_of's, so the values are its values bit for bit: q y is exact in double (q below 2^29, y of 24 bits),
// so an fma that contracts x - q y rounds the same difference once, and the mend adds y or -y exactly; the
// kernels may take every clone, AVX-512 included (8 doubles a division). Measured (1M float32 operands, one
// thread, bench/README.md table (o)): remainder 3.9 ms -> 0.84-1.2 ms, fmod 1.9 -> 0.74-0.91 ms.
#include "core/division_kernels.hpp"

#include <cmath>

#include "core/cpu_features.hpp"
#include "core/real_binary_rules.hpp"

namespace phasor::detail {

namespace {

/// fmod_of(a, b) (or remainder_of) by its fast form; `slow` where that form does not apply (Note [vector fmod]).
/// (The tests combine with & and |, not && and ||: a short circuit is control flow, which keeps the loop scalar.)
template <bool Remainder>
PHASOR_INLINE float fast_fmod(float a, float b, int& slow) {
  const double x = a, y = b;
  const double q = std::trunc(x / y);
  slow = static_cast<int>(!(std::fabs(q) < 0x1p29) | std::isinf(y));
  double r = x - q * y;
  const bool over = (r != 0) & ((r < 0) != (x < 0));  // the division rounded up to an integer
  r = over ? r + (q > 0 ? y : -y) : r;
  float f = r == 0 ? std::copysign(0.0f, a) : static_cast<float>(r);
  if constexpr (Remainder) {
    const bool shift = (f != 0) & ((f < 0) != (b < 0));
    f = shift ? f + b : f;
  }
  return f;
}

template <bool Remainder>
PHASOR_INLINE void fmod_loop(const float* a, const float* b, float* y, std::int64_t n) {
  int any_slow = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    int slow;
    y[i] = fast_fmod<Remainder>(a[i], b[i], slow);
    any_slow |= slow;
  }
  if (!any_slow) return;
  for (std::int64_t i = 0; i < n; ++i) {
    int slow;
    (void)fast_fmod<Remainder>(a[i], b[i], slow);
    if (slow) y[i] = Remainder ? remainder_of(a[i], b[i]) : fmod_of(a[i], b[i]);
  }
}

}  // namespace

PHASOR_CLONES
void fmod_f32(const float* a, const float* b, float* y, std::int64_t n) { fmod_loop<false>(a, b, y, n); }

PHASOR_CLONES
void remainder_f32(const float* a, const float* b, float* y, std::int64_t n) { fmod_loop<true>(a, b, y, n); }

}  // namespace phasor::detail
