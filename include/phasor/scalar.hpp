// phasor/scalar.hpp - a C++ number passed to an op (bool, integer, real or complex).
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

#include "phasor/dtype.hpp"

namespace phasor {

/// A C++ number; it never widens a tensor's dtype within the tensor's category.
class Scalar {
 public:
  /// Kind of number held.
  enum class Kind : std::uint8_t { Bool, Int, Float, Complex };
  /// Zero (integer).
  Scalar() = default;
  /// A boolean.
  Scalar(bool v) : kind_(Kind::Bool), re_(v ? 1.0 : 0.0), i_(v) {}
  /// Any integer type.
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : kind_(Kind::Int), re_(static_cast<double>(v)), i_(static_cast<std::int64_t>(v)) {}
  /// A real number.
  Scalar(double v) : kind_(Kind::Float), re_(v) {}
  /// A real number (float).
  Scalar(float v) : kind_(Kind::Float), re_(v) {}
  /// A complex number.
  Scalar(std::complex<double> v) : kind_(Kind::Complex), re_(v.real()), im_(v.imag()) {}
  /// A complex number (float).
  Scalar(std::complex<float> v) : kind_(Kind::Complex), re_(v.real()), im_(v.imag()) {}

  /// Kind of number held.
  Kind kind() const { return kind_; }
  /// True when complex.
  bool is_complex() const { return kind_ == Kind::Complex; }
  /// True when real floating point.
  bool is_floating() const { return kind_ == Kind::Float; }
  /// True when integer or bool.
  bool is_integral() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }
  /// Value as double (real part for complex).
  double to_double() const { return re_; }
  /// Value as int64: reals truncate toward zero and saturate at int64's ends, NaN gives 0 (as a float ->
  /// int64 tensor cast; never undefined).
  std::int64_t to_int() const;
  /// Value as complex<double>.
  std::complex<double> to_complex() const { return {re_, im_}; }
  /// Value as bool (nonzero).
  bool to_bool() const { return re_ != 0.0 || im_ != 0.0; }
  /// Dtype a 0-d tensor holding this value would have on its own.
  Dtype dtype() const {
    switch (kind_) {
      case Kind::Bool: return Dtype::Bool;
      case Kind::Int: return Dtype::Int64;
      case Kind::Float: return Dtype::Float64;
      default: return Dtype::Complex128;
    }
  }
  /// Negation (same kind).
  Scalar operator-() const;

 private:
  Kind kind_ = Kind::Int;
  double re_ = 0.0;
  double im_ = 0.0;
  std::int64_t i_ = 0;
};

inline Scalar Scalar::operator-() const {
  switch (kind_) {
    case Kind::Bool:
    case Kind::Int: return Scalar(-i_);
    case Kind::Float: return Scalar(-re_);
    default: return Scalar(std::complex<double>(-re_, -im_));
  }
}

}  // namespace phasor
