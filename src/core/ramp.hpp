// src/core/ramp.hpp - arithmetic sequences (arange, linspace, fftfreq, rfftfreq): one definition of each
// element for the CPU (core/creation.cpp) and the CUDA ramp kernel (cuda/elementwise.cu), so a sequence
// written on a GPU is the CPU's bit for bit.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/element_traits.hpp"
#include "phasor/dtype.hpp"

namespace phasor {
class Tensor;
struct Device;
}  // namespace phasor

namespace phasor::detail {

// Double arithmetic rounded once per operation: nvcc would contract a + b * c into one fma, which the
// CPU build (x86-64 baseline) never does.
PHASOR_HOST_DEVICE inline double ramp_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
PHASOR_HOST_DEVICE inline double ramp_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
PHASOR_HOST_DEVICE inline double ramp_sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

/// An arithmetic sequence of n elements. Element i is lo + step * i below `half` and hi - step * (n - 1 - i)
/// from there (linspace's symmetric form keeps both ends exact), in complex double arithmetic; with
/// `period` > 0 (frequencies), (i < half ? i : i - period) * step_re; an `exact` ramp (int64 only) is
/// lo_int + step_int * i in int64 arithmetic, wrapping.
struct Ramp {
  std::int64_t n = 0, half = 0;
  double lo_re = 0, lo_im = 0, hi_re = 0, hi_im = 0, step_re = 0, step_im = 0;
  bool exact = false;
  std::int64_t lo_int = 0, step_int = 0;
  std::int64_t period = 0;

  /// Element i as re + i im (not for exact ramps).
  PHASOR_HOST_DEVICE void at(std::int64_t i, double& re, double& im) const {
    const bool up = i < half;
    if (period > 0) {  // one product, no sum
      re = ramp_mul(static_cast<double>(up ? i : i - period), step_re);
      im = 0;
      return;
    }
    const double k = static_cast<double>(up ? i : n - 1 - i);
    re = up ? ramp_add(lo_re, ramp_mul(step_re, k)) : ramp_sub(hi_re, ramp_mul(step_re, k));
    im = up ? ramp_add(lo_im, ramp_mul(step_im, k)) : ramp_sub(hi_im, ramp_mul(step_im, k));
  }
  /// Element i as a T, through the complex type C (std::complex<double> or cuda::std::complex<double>).
  template <class T, class C>
  PHASOR_HOST_DEVICE T element(std::int64_t i) const {
    if constexpr (std::is_same_v<T, std::int64_t>)
      if (exact) return at_int(i);
    double re, im;
    at(i, re, im);
    return convert<T>(C(re, im));
  }
  /// Element i of an exact ramp (unsigned arithmetic: wraps without signed-overflow UB).
  PHASOR_HOST_DEVICE std::int64_t at_int(std::int64_t i) const {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo_int) +
                                     static_cast<std::uint64_t>(step_int) * static_cast<std::uint64_t>(i));
  }
};

/// A new 1-D tensor of r.n elements of `dtype` (not bool) holding r, written where it lives: by the CPU,
/// or on a GPU by the ramp kernel (no copy from the host, capturable in a CUDA graph). `op` names the
/// caller in errors.
Tensor ramp_tensor(const char* op, const Ramp& r, Dtype dtype, Device device);

}  // namespace phasor::detail
