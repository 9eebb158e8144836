// src/cuda/device_complex.cuh - cuda::std::complex as phasor's complex element type in device code: the
// element traits of core/element_traits.hpp specialized for it, and the c64/c128 names the kernels use.
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
}  // namespace phasor::cuda
