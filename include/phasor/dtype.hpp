// phasor/dtype.hpp - element types and PyTorch-style type promotion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>

namespace phasor {

/// Element type of a tensor.
enum class Dtype : std::uint8_t { Bool, Int64, Float32, Float64, Complex64, Complex128 };

inline constexpr Dtype bool_ = Dtype::Bool;            ///< boolean
inline constexpr Dtype int64 = Dtype::Int64;           ///< 64-bit signed integer
inline constexpr Dtype float32 = Dtype::Float32;       ///< IEEE single
inline constexpr Dtype float64 = Dtype::Float64;       ///< IEEE double
inline constexpr Dtype complex64 = Dtype::Complex64;   ///< pair of float32
inline constexpr Dtype complex128 = Dtype::Complex128; ///< pair of float64

/// Bytes per element.
constexpr std::size_t itemsize(Dtype t) {
  constexpr std::size_t sizes[] = {1, 8, 4, 8, 8, 16};
  return static_cast<std::size_t>(t) < 6 ? sizes[static_cast<std::size_t>(t)] : 0;
}
/// True for complex64 and complex128.
constexpr bool is_complex(Dtype t) { return t == Dtype::Complex64 || t == Dtype::Complex128; }
/// True for float32 and float64.
constexpr bool is_floating(Dtype t) { return t == Dtype::Float32 || t == Dtype::Float64; }
/// True for float32, float64, complex64, complex128 (types that carry gradients).
constexpr bool is_floating_or_complex(Dtype t) { return is_floating(t) || is_complex(t); }
/// Real counterpart (complex64 -> float32, complex128 -> float64, others unchanged).
Dtype to_real(Dtype t);
/// Complex counterpart (float32 -> complex64, float64 -> complex128; int/bool -> complex64).
Dtype to_complex(Dtype t);
/// PyTorch's promote_types: the smallest type both convert to without losing category.
Dtype promote_types(Dtype a, Dtype b);
/// Name as used in messages: "float32", "complex64", ...
const char* dtype_name(Dtype t);
/// Prints the dtype's name.
std::ostream& operator<<(std::ostream& os, Dtype t);

/// Default floating dtype for creation functions and int->float promotion (float32).
Dtype default_dtype();
/// Sets the default floating dtype (float32 or float64).
void set_default_dtype(Dtype t);

}  // namespace phasor
