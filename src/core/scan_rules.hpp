// src/core/scan_rules.hpp - the running operations of the scans (cumsum, cumprod, cummax, cummin,
// logcumsumexp): one identity and one combine per kind, used by the CPU loops (core/reduce_stats.cpp) and the
// CUDA kernels (cuda/reduce.cu) alike, so both devices give the same values.
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"
#include "core/real_binary_rules.hpp"

namespace phasor::detail {

/// What a scan accumulates.
enum class ScanKind : std::uint8_t { Sum, Prod, Max, Min, LogAddExp };

/// True when kind K has a rule for accumulator type A (sums and products: all; max and min: real and
/// integer; logaddexp: real floating).
template <ScanKind K, class A>
inline constexpr bool scan_supports_v = K == ScanKind::Sum || K == ScanKind::Prod ||
                                        (K == ScanKind::LogAddExp ? std::is_floating_point_v<A> : !is_complex_v<A>);

/// The running value before the first element.
template <ScanKind K, class A>
PHASOR_HOST_DEVICE inline A scan_identity() {
  if constexpr (K == ScanKind::Sum) return A(0);
  else if constexpr (K == ScanKind::Prod) return A(1);
  else if constexpr (std::is_floating_point_v<A>) return K == ScanKind::Min ? A(INFINITY) : A(-INFINITY);
  else return K == ScanKind::Min ? A(INT64_MAX) : A(INT64_MIN);
}

/// The running value `acc` combined with the next element v (int64 sums and products wrap; max and min let a
/// NaN win and keep it; logaddexp as Note [logaddexp]). Associative, so the GPU's tree scan agrees.
template <ScanKind K, class A>
PHASOR_HOST_DEVICE inline A scan_combine(A acc, A v) {
  if constexpr (K == ScanKind::Sum) return wrap_add(acc, v);
  else if constexpr (K == ScanKind::Prod) return wrap_mul(acc, v);
  else if constexpr (K == ScanKind::Max) return maximum_of(acc, v);
  else if constexpr (K == ScanKind::Min) return minimum_of(acc, v);
  else return logaddexp_of(acc, v);
}

/// The op named for a scan kind (errors, the CUDA glue).
inline const char* scan_name(ScanKind k) {
  switch (k) {
    case ScanKind::Sum: return "cumsum";
    case ScanKind::Prod: return "cumprod";
    case ScanKind::Max: return "cummax";
    case ScanKind::Min: return "cummin";
    case ScanKind::LogAddExp: return "logcumsumexp";
  }
  return "scan";
}

/// Calls f(std::integral_constant<ScanKind, K>{}) for the runtime kind k.
template <class F>
inline void visit_scan(ScanKind k, F&& f) {
  switch (k) {
    case ScanKind::Sum: f(std::integral_constant<ScanKind, ScanKind::Sum>{}); break;
    case ScanKind::Prod: f(std::integral_constant<ScanKind, ScanKind::Prod>{}); break;
    case ScanKind::Max: f(std::integral_constant<ScanKind, ScanKind::Max>{}); break;
    case ScanKind::Min: f(std::integral_constant<ScanKind, ScanKind::Min>{}); break;
    case ScanKind::LogAddExp: f(std::integral_constant<ScanKind, ScanKind::LogAddExp>{}); break;
  }
}

}  // namespace phasor::detail
