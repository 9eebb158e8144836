// src/core/sort_rules.hpp - the order of Note [sort order] (core/sort.cpp) and the binary search in it, one
// definition for the CPU (core/sort.cpp) and the CUDA kernels (cuda/sort.cu), so sort, argsort, topk and
// searchsorted give the same answers on both devices.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// True when key a goes before key b, ascending or descending: NaN above every number, so last ascending and
/// first descending; equal keys (and two NaNs) neither way.
template <class T>
PHASOR_HOST_DEVICE inline bool key_before(T a, T b, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = a != a, nb = b != b;
    if (na || nb) return descending ? na && !nb : !na && nb;
  }
  return descending ? b < a : a < b;
}

/// Where v goes in the ascending line[0], line[stride], ... (n elements): the number of elements before it
/// (the first place v fits, `right` false) or not after it (the last place). torch.searchsorted's answer
/// for sorted lines; a NaN value goes after the numbers (before any NaN, `right` false).
template <class T>
PHASOR_HOST_DEVICE inline std::int64_t sorted_position(const T* line, std::int64_t n, std::int64_t stride, T v,
                                                       bool right) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const T m = line[mid * stride];
    if (right ? !key_before(v, m, false) : key_before(m, v, false)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace phasor::detail
