// src/core/activation_kernels.hpp - contiguous float32 loops of the exact gelu and its backward, sigmoid,
// silu, exp, tanh, softplus and logaddexp, vectorized (Notes [vector gelu], [vector sigmoid], [vector exp],
// [vector tanh], [vector softplus], [vector logaddexp] in activation_kernels.cpp).
// float64 keeps libm.
#pragma once
#include <cstdint>

namespace phasor::detail {

/// y[i] = x[i] * Phi(x[i]) for i < n (Phi: the standard normal CDF).
void gelu_f32(const float* x, float* y, std::int64_t n);
/// out[i] = g[i] * (Phi(x[i]) + x[i] * phi(x[i])) for i < n (phi: the standard normal density).
void gelu_backward_f32(const float* g, const float* x, float* out, std::int64_t n);
/// y[i] = tanh(x[i]) for i < n.
void tanh_f32(const float* x, float* y, std::int64_t n);
/// y[i] = e^x[i] for i < n.
void exp_f32(const float* x, float* y, std::int64_t n);
/// y[i] = 1 / (1 + e^-x[i]) for i < n.
void sigmoid_f32(const float* x, float* y, std::int64_t n);
/// y[i] = x[i] / (1 + e^-x[i]) for i < n.
void silu_f32(const float* x, float* y, std::int64_t n);
/// y[i] = log(e^a[i] + e^b[i]) for i < n (Note [vector logaddexp]).
void logaddexp_f32(const float* a, const float* b, float* y, std::int64_t n);
/// y[i] = log2(2^a[i] + 2^b[i]) for i < n (Note [vector logaddexp]).
void logaddexp2_f32(const float* a, const float* b, float* y, std::int64_t n);
/// y[i] = log(1 + e^(beta x[i])) / beta, or x[i] where beta x[i] > threshold, for i < n.
void softplus_f32(const float* x, float* y, std::int64_t n, float beta, float threshold);

}  // namespace phasor::detail
