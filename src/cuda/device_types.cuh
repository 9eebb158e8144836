// src/cuda/device_types.cuh - phasor's element types in device code: cuda::std::complex as its complex
// type (the element traits of core/element_traits.hpp specialized for it, the c64/c128 names the kernels
// use), with_type (the one dispatch from a dtype to its C++ type in the kernel files), and device helpers
// shared by the kernel files (d_isnan).
#pragma once
#include <cuda/std/complex>

#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"
#include "phasor/dtype.hpp"

namespace phasor::detail {
template <class T> struct is_complex_t<::cuda::std::complex<T>> : std::true_type {};
template <class T> struct real_of<::cuda::std::complex<T>> { using type = T; };
}  // namespace phasor::detail

namespace phasor::cuda {
using c64 = ::cuda::std::complex<float>;    ///< complex64 on the device
using c128 = ::cuda::std::complex<double>;  ///< complex128 on the device

/// Sets of dtypes, for the kernels a caller instantiates.
enum Types : unsigned { kBool = 1, kInt = 2, kReal = 4, kCplx = 8, kAll = 15, kNum = 14, kFloat = 12 };

/// Calls f(T{}) for the C++ type T of dtype t when `Allowed` includes it (only those are instantiated);
/// false otherwise.
template <unsigned Allowed, class F>
bool with_type(Dtype t, F&& f) {
  switch (t) {
    case Dtype::Bool:
      if constexpr ((Allowed & kBool) != 0) return f(bool{}), true;
      return false;
    case Dtype::Int64:
      if constexpr ((Allowed & kInt) != 0) return f(std::int64_t{}), true;
      return false;
    case Dtype::Float32:
      if constexpr ((Allowed & kReal) != 0) return f(float{}), true;
      return false;
    case Dtype::Float64:
      if constexpr ((Allowed & kReal) != 0) return f(double{}), true;
      return false;
    case Dtype::Complex64:
      if constexpr ((Allowed & kCplx) != 0) return f(c64{}), true;
      return false;
    case Dtype::Complex128:
      if constexpr ((Allowed & kCplx) != 0) return f(c128{}), true;
      return false;
  }
  return false;
}

/// True for a NaN element (complex: either part NaN; integers and bool never), in device code. The one
/// NaN test of the elementwise and reduction kernels.
template <class T>
__device__ __forceinline__ bool d_isnan(const T& v) {
  if constexpr (::phasor::detail::is_complex_v<T>) return ::isnan(v.real()) || ::isnan(v.imag());
  else if constexpr (::phasor::detail::is_real_float_v<T>) return ::isnan(v);
  else return false;
}
}  // namespace phasor::cuda
