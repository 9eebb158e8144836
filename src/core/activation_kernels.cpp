// src/core/activation_kernels.cpp - vectorized float32 gelu and gelu backward, sigmoid, silu, exp, tanh and
// softplus.
//
// Note [vector gelu]
// libm's erfcf is a scalar call with branches; in a float32 FNO step it was the largest CPU item
// (a third of the step). These loops evaluate the normal CDF branch-free so GCC vectorizes them,
// and are compiled once per ISA (AVX-512, AVX2+FMA, baseline) with the ifunc picked at load time.
//   Phi(x) = erfc(z) / 2 for x < 0 and 1 - erfc(z) / 2 otherwise, z = |x| / sqrt(2), with
//   erfc(z) = t Q(t) e^(-z^2), t = 1 / (1 + z / 2) in (0, 1], Q a degree-10 polynomial fitted to
//   erfc(z) e^(z^2) / t, a smooth function of t (scripts/fit_gelu_erfc.py: relative error 5.2e-8 with its
//   float coefficients in exact arithmetic, 2.0e-7 evaluated in float).
// e^(-z^2) = e^(-x^2 / 2) takes x^2 rounded once, and the gradient's density is the same exponential, so
// the backward evaluates one exponential, not two, and the exponential does not wait for the division and
// the polynomial (the form t e^(P(t) - z^2) of Numerical Recipes' erfcc, used before 2026-12-06, chained
// all three: a 1M-element gelu 433 -> 295 us, forward + backward 1022 -> 636 us, one thread).
// exp is a Cody-Waite reduction to |r| <= ln2/2 and a degree-7 Taylor polynomial (error < 5e-9),
// scaled by 2^k built from the exponent bits. Exponents below -87.3 give exactly 0 instead of a
// subnormal (subnormal arithmetic is ~100x slower on x86): gelu values beyond x ~ -13.2 flush to 0
// (from -12.9 down they are under 1e-36 and may be subnormal). Measured against long double on a 1e-4
// grid over [-14, 14] (tests/test_unary.cpp): gelu's absolute error below 6.9e-8 (1 + |x|), its relative
// error below 4.0e-6 (in the far tail, where the exponential's argument is large; 7.1e-7 for |x| < 5), the
// gradient's absolute error below 1.8e-7. Clones are picked by ISA feature, not CPU model ("arch="
// clones dispatch on the exact model and fell back to the baseline here), and the helpers are
// always_inline builtins: an out-of-line call (std::bit_cast was one) keeps a clone scalar.
#include "core/activation_kernels.hpp"

#include "core/cpu_features.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace phasor::detail {

namespace {

/// e^r for the reduced argument of a: a = k ln2 + r, |r| <= ln2 / 2 (Cody-Waite, ln2 split in two) and a
/// degree-7 Taylor polynomial; k (exact for |k| < 2^22) through `k`. Vectorizable (no calls, no branches).
PHASOR_INLINE float exp_reduced(float a, std::int32_t& k) {
  // k = round(a / ln2) via the 1.5 * 2^23 trick
  const float kf = (a * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (a - kf * 0.693359375f) - kf * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  k = static_cast<std::int32_t>(kf);
  return p;
}

/// 2^k as a float, for k in [-126, 127].
PHASOR_INLINE float pow2(std::int32_t k) {
  return __builtin_bit_cast(float, static_cast<std::int32_t>((k + 127) << 23));
}

/// e^a for a <= 0 (0 below -87.3); vectorizable (no calls, no branches).
PHASOR_INLINE float exp_nonpos(float a) {
  const bool under = a < -87.3f;
  std::int32_t k;
  const float p = exp_reduced(under ? -87.3f : a, k);
  return under ? 0.0f : p * pow2(k);  // k >= -126
}

/// erfc(z) e^(z^2) / t for z >= 0 as a function of t = 1 / (1 + z / 2) in (0, 1] (Note [vector gelu]).
PHASOR_INLINE float erfc_scaled(float t) {
  float q = 5.641314760e-02f;
  q = q * t - 2.984356582e-01f;
  q = q * t + 6.234881282e-01f;
  q = q * t - 6.004467607e-01f;
  q = q * t + 2.299287915e-01f;
  q = q * t - 9.946624190e-02f;
  q = q * t + 1.034309044e-01f;
  q = q * t + 1.739197224e-01f;
  q = q * t + 2.469820380e-01f;
  q = q * t + 2.820911705e-01f;
  return q * t + 2.820948064e-01f;
}

/// The standard normal CDF Phi(x) (NaN for NaN), and through `e` the exponential e^(-x^2 / 2) it is built
/// on (the density times sqrt(2 pi)).
PHASOR_INLINE float normal_cdf(float x, float& e) {
  const float z = (x < 0.0f ? -x : x) * 0.707106781186547524f;
  const float t = 1.0f / (1.0f + 0.5f * z);
  e = exp_nonpos(-0.5f * x * x);  // e^(-z^2), z^2 rounded once
  const float half_erfc = (0.5f * t * erfc_scaled(t)) * e;
  return x < 0.0f ? half_erfc : 1.0f - half_erfc;
}

// Note [vector exp]
// exp calls libm's expf per element otherwise (4.7x torch's time for a 1M float32 exp on one thread).
// exp_full extends exp_nonpos (Note [vector gelu]; both on exp_reduced) to float's range: inputs are clamped
// to [-103.97, 88.72] and the result is +inf above (e^a > FLT_MAX) and 0 below (e^a < 2^-150, which rounds to
// 0); in between 2^k is applied as two normal factors, 2^(k/2) then 2^(k - k/2), so a subnormal result is
// rounded once, by the last multiplication. NaN stays NaN (no comparison holds). Measured against long double on a
// grid over [-110, 95] (tests/test_unary.cpp): relative error 7.7e-8 at most for normal results (under an
// ulp), 0.85 units of 2^-149 for subnormal ones.

// Note [vector tanh]
// tanh calls libm's tanhf per element otherwise (7.7x torch's time for a 1M float32 tanh on one thread).
// For |x| >= 0.3, tanh|x| = (1 - e) / (1 + e) with e = e^(-2|x|) from exp_full: e <= 0.55, so 1 - e keeps
// its digits, and e -> 0 gives 1 for large |x| and infinities. Below 0.3 that difference would cancel, and the
// odd Taylor series to x^13 is used (its first neglected term is under 1e-10 of the value). The sign is x's
// (tanh(-0) = -0; NaN stays NaN). Both forms are computed and one picked, so the loop vectorizes. Against
// long double on a grid over [-20, 20] and around 0.3 (tests/test_unary.cpp): 1.7e-7 relative at most.

// Note [vector sigmoid]
// sigmoid and silu call libm's expf per element otherwise (16x torch's time for a 1M float32 sigmoid on one
// thread). Here sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = e^-|x| from exp_nonpos
// (no overflow for any x; NaN stays NaN), silu(x) = x sigmoid(x). Within 2 float ulps of the true value
// (relative errors 1.9e-7 and 2.3e-7 at most, tests/test_unary.cpp, against long double on a grid over
// [-110, 110]) for x >= -87.3; below, where the value is under 1.2e-38 (about the smallest normal float,
// 2^-126), the result is 0 (-0 for silu), as exp_nonpos flushes for gelu.

/// e^a over float's whole range (Note [vector exp]): exp_reduced's reduction and polynomial, 2^k applied as
/// two factors so that results down to the smallest subnormal come out rounded once.
PHASOR_INLINE float exp_full(float a) {
  const bool over = a > 88.7228394f, under = a < -103.972084f;  // e^a > FLT_MAX, e^a < 2^-150
  a = a < -103.972084f ? -103.972084f : a;
  a = a > 88.7228394f ? 88.7228394f : a;
  std::int32_t k;                                  // in [-150, 128]
  const float p = exp_reduced(a, k);
  const std::int32_t k1 = k / 2, k2 = k - k1;      // each in [-75, 64]: normal factors
  const float v = (p * pow2(k1)) * pow2(k2);
  return over ? __builtin_inff() : under ? 0.0f : v;
}

/// tanh(x) (Note [vector tanh]).
PHASOR_INLINE float tanh_vec(float x) {
  const float a = x < 0.0f ? -x : x;
  // |x| < 0.3: the odd Taylor series to x^13 (the next term is under 1e-10 of the value)
  const float z = a * a;
  float p = 21844.0f / 6081075.0f;
  p = p * z - 1382.0f / 155925.0f;
  p = p * z + 62.0f / 2835.0f;
  p = p * z - 17.0f / 315.0f;
  p = p * z + 2.0f / 15.0f;
  p = p * z - 1.0f / 3.0f;
  const float small = a + a * (z * p);
  // otherwise (1 - e) / (1 + e), e = e^(-2|x|) <= 0.55: no cancellation, no overflow
  const float e = exp_full(-2.0f * a);
  const float large = (1.0f - e) / (1.0f + e);
  const float t = a < 0.3f ? small : large;
  return __builtin_copysignf(t, x);
}

/// 1 / (1 + e^-x) (Note [vector sigmoid]).
PHASOR_INLINE float sigmoid(float x) {
  const float e = exp_nonpos(x < 0.0f ? x : -x);
  const float r = 1.0f / (1.0f + e);
  return x < 0.0f ? e * r : r;
}

// Note [vector softplus]
// softplus calls libm's expf and log1pf per element otherwise (8.4x torch's time for a 1M float32 softplus
// on one thread). log(1 + e^y) = max(y, 0) + log1p(u) with u = e^-|y| in (0, 1] from exp_full (so u never
// overflows and is right down to subnormals), and log1p(u) = 2 atanh(s) with s = u / (2 + u) <= 1/3: the odd
// series 2 s (1 + s^2/3 + ... + s^12/13), whose first neglected term is under 3e-8 of the value. The two
// parts have one sign, so nothing cancels. y = beta x; x itself where y > threshold, as the scalar form.
// NaN stays NaN. Against long double on a grid over [-110, 30] and across the threshold (tests/test_unary.cpp):
// relative error 2.5e-7 at most (3 float ulps) for normal results, subnormal ones (x < -87.3) within 2 units of
// 2^-149.

/// log(1 + u) for u in [0, 1] (NaN stays NaN): 2 atanh(u / (2 + u)) as an odd series (Note [vector softplus]).
PHASOR_INLINE float log1p_unit(float u) {
  const float s = u / (2.0f + u);
  const float z = s * s;
  float p = 1.0f / 13.0f;
  p = p * z + 1.0f / 11.0f;
  p = p * z + 1.0f / 9.0f;
  p = p * z + 1.0f / 7.0f;
  p = p * z + 1.0f / 5.0f;
  p = p * z + 1.0f / 3.0f;
  p = p * z + 1.0f;
  return 2.0f * s * p;
}

/// log(1 + e^(beta x)) / beta, or x where beta x > threshold (Note [vector softplus]).
PHASOR_INLINE float softplus_vec(float x, float beta, float threshold) {
  const float y = x * beta;
  const float l = (y > 0.0f ? y : 0.0f) + log1p_unit(exp_full(y < 0.0f ? y : -y));  // log1p(e^-|y|)
  return y > threshold ? x : l / beta;
}

// Note [vector logaddexp]
// logaddexp(a, b) = max(a, b) + log1p(e^-|a - b|) (Note [logaddexp]) called glibc's expf and a double log per
// element (2.7x torch's time for 1M float32 on one thread). Here the exponential is exp_full and the log1p
// term (in (0, ln 2]) is Note [vector softplus]'s series, so the loop vectorizes; logaddexp2 takes
// 2^-|a - b| as e^t (1 + (-|a - b| ln 2 - t)), t the product rounded to float (the product itself in double),
// and multiplies the term by log2(e). Against long double over 2M random pairs (N(0, 20^2), and pairs 1e-3
// apart), in units of the last place of the largest of |max|, the term and the result (the sum cancels where
// the max is near -term): at most 3.7 (logaddexp) and 4.6 (logaddexp2), where glibc's float exp and double log
// gave 3.4 and 3.4. Equal infinities give themselves (a - b is NaN there), a NaN gives NaN;
// tests/test_binary_math.cpp checks against long double.

/// log(e^a + e^b), or log2(2^a + 2^b) (Note [vector logaddexp]).
template <bool Base2>
PHASOR_INLINE float logaddexp_vec(float a, float b) {
  const float d = a - b;
  const float m = a > b ? a : b;
  const float nd = d < 0.0f ? d : -d;  // -|a - b|, NaN when d is
  float u;                             // e^nd or 2^nd
  if constexpr (Base2) {  // nd ln 2 in double, and its rounding to float as a factor 1 + error
    const double t = static_cast<double>(nd) * 0.69314718055994530942;
    const float tf = static_cast<float>(t);
    const float c = static_cast<float>(t - static_cast<double>(tf));  // NaN for an infinite t: no correction
    u = exp_full(tf) * (1.0f + (c == c ? c : 0.0f));
  } else {
    u = exp_full(nd);
  }
  const float term = Base2 ? log1p_unit(u) * 1.44269504088896340736f : log1p_unit(u);
  return a == b && std::fabs(a) == std::numeric_limits<float>::infinity() ? a : m + term;
}

}  // namespace

PHASOR_CLONES
void softplus_f32(const float* x, float* y, std::int64_t n, float beta, float threshold) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = softplus_vec(x[i], beta, threshold);
}

PHASOR_CLONES
void logaddexp_f32(const float* a, const float* b, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = logaddexp_vec<false>(a[i], b[i]);
}

PHASOR_CLONES
void logaddexp2_f32(const float* a, const float* b, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = logaddexp_vec<true>(a[i], b[i]);
}

PHASOR_CLONES
void exp_f32(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = exp_full(x[i]);
}

PHASOR_CLONES
void tanh_f32(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = tanh_vec(x[i]);
}

PHASOR_CLONES
void sigmoid_f32(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = sigmoid(x[i]);
}

PHASOR_CLONES
void silu_f32(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoid(x[i]);
}

PHASOR_CLONES
void gelu_f32(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    float e;
    y[i] = x[i] * normal_cdf(x[i], e);
  }
}

PHASOR_CLONES
void gelu_backward_f32(const float* g, const float* x, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    float e;
    const float cdf = normal_cdf(v, e);
    out[i] = g[i] * (cdf + v * (e * 0.398942280401432678f));
  }
}

}  // namespace phasor::detail
