// src/nn/activation_rules.hpp - the scalar activation functions behind nn/activation.hpp's dedicated kernels
// (elu / selu / celu, leaky_relu, hardtanh, hardsigmoid, hardswish, mish, softshrink, hardshrink, logsigmoid,
// softsign, threshold): one definition that the CPU element loop (src/nn/activation.cpp) and the CUDA kernel of
// the op's name (src/cuda/elementwise_ops.cuh) both run, so the two devices compute the same formulas. T is float
// or double (hardtanh and threshold also int64); the parameters arrive already converted to T, as torch converts
// its Scalar arguments to the tensor's type. NaN propagates through every function.
#pragma once
#include <math.h>

#include "core/element_traits.hpp"

namespace phasor::detail::activation_rules {

/// scale * x for x > 0, scale * alpha * (e^(x * input_scale) - 1) otherwise (elu, selu; celu has input_scale = 1 / alpha).
template <class T>
PHASOR_HOST_DEVICE inline T elu_of(T x, T alpha, T scale, T input_scale) {
  return x > T(0) ? scale * x : scale * alpha * ::expm1(x * input_scale);
}

/// x for x > 0, x * slope otherwise.
template <class T>
PHASOR_HOST_DEVICE inline T leaky_relu_of(T x, T slope) {
  return x > T(0) ? x : x * slope;
}

/// min(max(x, lo), hi), NaN kept.
template <class T>
PHASOR_HOST_DEVICE inline T hardtanh_of(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/// relu6(x + 3) / 6.
template <class T>
PHASOR_HOST_DEVICE inline T hardsigmoid_of(T x) {
  return x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : (x + T(3)) / T(6));
}

/// x * relu6(x + 3) / 6.
template <class T>
PHASOR_HOST_DEVICE inline T hardswish_of(T x) {
  return x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6));
}

/// x * tanh(softplus(x)) with tanh(log(1 + e)) = n / (n + 2), n = e (e + 2), e = e^x: one exp, no cancellation;
/// x itself above 20 (there n / (n + 2) rounds to 1 in double) and -0 at -inf (the limit; x * 0 would be NaN).
template <class T>
PHASOR_HOST_DEVICE inline T mish_of(T x) {
  if (x > T(20)) return x;
  if (x < T(0) && ::isinf(x)) return T(-0.0);
  const T e = ::exp(x);
  const T n = e * (e + T(2));
  return x * (n / (n + T(2)));
}

/// x - lambd above lambd, x + lambd below -lambd, 0 between (x * 0: NaN stays NaN).
template <class T>
PHASOR_HOST_DEVICE inline T softshrink_of(T x, T lambd) {
  return x > lambd ? x - lambd : (x < -lambd ? x + lambd : x * T(0));
}

/// 0 on [-lambd, lambd], x elsewhere (NaN stays NaN).
template <class T>
PHASOR_HOST_DEVICE inline T hardshrink_of(T x, T lambd) {
  return (x >= -lambd && x <= lambd) ? T(0) : x;
}

/// log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|): no overflow, no cancellation.
template <class T>
PHASOR_HOST_DEVICE inline T logsigmoid_of(T x) {
  return (x < T(0) ? x : T(0)) - ::log1p(::exp(-::fabs(x)));
}

/// x / (1 + |x|), +-1 at +-inf (the limit; inf / inf would be NaN).
template <class T>
PHASOR_HOST_DEVICE inline T softsign_of(T x) {
  if (::isinf(x)) return x > T(0) ? T(1) : T(-1);
  return x / (T(1) + ::fabs(x));
}

/// value where x <= threshold, x elsewhere.
template <class T>
PHASOR_HOST_DEVICE inline T threshold_of(T x, T threshold, T value) {
  return x <= threshold ? value : x;
}

}  // namespace phasor::detail::activation_rules
