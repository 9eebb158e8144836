// src/cuda/device_complex.cuh - cuda::std::complex as phasor's complex element type in device code: the
// element traits of core/element_traits.hpp specialized for it, the c64/c128 names the kernels use, and
// device helpers shared by the kernel files (d_isnan).
#pragma once
#include <cuda/std/complex>

#include <type_traits>

#include "core/element_traits.hpp"

namespace phasor::detail {
template <class T> struct is_complex_t<::cuda::std::complex<T>> : std::true_type {};
template <class T> struct real_of<::cuda::std::complex<T>> { using type = T; };
}  // namespace phasor::detail

namespace phasor::cuda {
using c64 = ::cuda::std::complex<float>;    ///< complex64 on the device
using c128 = ::cuda::std::complex<double>;  ///< complex128 on the device

/// True for a NaN element (complex: either part NaN; integers and bool never), in device code. The one
/// NaN test of the elementwise and reduction kernels.
template <class T>
__device__ __forceinline__ bool d_isnan(const T& v) {
  if constexpr (::phasor::detail::is_complex_v<T>) return ::isnan(v.real()) || ::isnan(v.imag());
  else if constexpr (::phasor::detail::is_real_float_v<T>) return ::isnan(v);
  else return false;
}
}  // namespace phasor::cuda
