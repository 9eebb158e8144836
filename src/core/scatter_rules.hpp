// src/core/scatter_rules.hpp - how a scatter combines a value landing on an element (scatter, scatter_add,
// scatter_reduce, index_add, index_copy, index_reduce, index_put): one rule per kind, used by the CPU loops
// (core/index_ops.cpp) and the CUDA kernels (cuda/index.cu) alike, so both devices give the same values.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/scan_rules.hpp"

namespace phasor::detail {

/// What a scatter does with a value v landing on element o (mean is a sum divided afterwards).
enum class ScatterKind : std::uint8_t { Replace, Sum, Prod, Max, Min };

/// True when kind K has a rule for element type T (max and min: not complex).
template <ScatterKind K, class T>
inline constexpr bool scatter_supports_v = !(is_complex_v<T> && (K == ScatterKind::Max || K == ScatterKind::Min));

/// o combined with v: replaced, or the scan rule of its kind (int64 wraps; max and min let a NaN win and keep
/// it); bool sums and maxima are `or`, products and minima `and`.
template <ScatterKind K, class T>
PHASOR_HOST_DEVICE inline void scatter_combine(T& o, const T& v) {
  if constexpr (K == ScatterKind::Replace) o = v;
  else if constexpr (std::is_same_v<T, bool>) o = (K == ScatterKind::Sum || K == ScatterKind::Max) ? (o || v) : (o && v);
  else if constexpr (K == ScatterKind::Sum) o = scan_combine<ScanKind::Sum, T>(o, v);
  else if constexpr (K == ScatterKind::Prod) o = scan_combine<ScanKind::Prod, T>(o, v);
  else if constexpr (K == ScatterKind::Max) o = scan_combine<ScanKind::Max, T>(o, v);
  else o = scan_combine<ScanKind::Min, T>(o, v);
}

/// Calls f(std::integral_constant<ScatterKind, K>{}) for the runtime kind k.
template <class F>
inline void visit_scatter(ScatterKind k, F&& f) {
  switch (k) {
    case ScatterKind::Replace: f(std::integral_constant<ScatterKind, ScatterKind::Replace>{}); break;
    case ScatterKind::Sum: f(std::integral_constant<ScatterKind, ScatterKind::Sum>{}); break;
    case ScatterKind::Prod: f(std::integral_constant<ScatterKind, ScatterKind::Prod>{}); break;
    case ScatterKind::Max: f(std::integral_constant<ScatterKind, ScatterKind::Max>{}); break;
    case ScatterKind::Min: f(std::integral_constant<ScatterKind, ScatterKind::Min>{}); break;
  }
}

}  // namespace phasor::detail
