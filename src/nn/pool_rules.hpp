// src/nn/pool_rules.hpp - the window arithmetic of pooling, shared by the CPU kernels (src/nn/pooling.cpp)
// and the CUDA kernels (src/cuda/pool.cu): one definition of which inputs an output reads and what it
// divides by, so the devices cannot disagree (Note [pooling] in src/nn/pooling.cpp).
#pragma once
#include <math.h>

#include <cstdint>

#include "core/element_traits.hpp"

namespace phasor::nn::detail {

/// Spatial dims of every pooling geometry: 1-D and 2-D pooling pad the front with dims of size 1.
inline constexpr int kPoolDims = 3;

/// The windows of a pooling over kPoolDims spatial dims of planes of prod(in) elements.
struct PoolGeo {
  std::int64_t in[kPoolDims];        ///< input sizes
  std::int64_t out[kPoolDims];       ///< output sizes
  std::int64_t kernel[kPoolDims];    ///< window sizes (regular windows)
  std::int64_t stride[kPoolDims];    ///< window steps (regular windows)
  std::int64_t pad[kPoolDims];       ///< implicit padding before the input (regular windows)
  std::int64_t dilation[kPoolDims];  ///< tap spacing (regular windows)
  bool adaptive;                     ///< windows [floor(o in / out), ceil((o + 1) in / out)) instead
  bool count_include_pad;            ///< average: divide by the window clipped to the padded input
  std::int64_t divisor;              ///< average: divide by this when > 0 (divisor_override)
};

/// The taps of output index o along dim d that fall inside the input: first, first + step, ... < end.
PHASOR_HOST_DEVICE inline void pool_taps(const PoolGeo& g, int d, std::int64_t o, std::int64_t& first,
                                         std::int64_t& end, std::int64_t& step) {
  if (g.adaptive) {
    first = o * g.in[d] / g.out[d];
    end = ((o + 1) * g.in[d] + g.out[d] - 1) / g.out[d];
    step = 1;
    return;
  }
  const std::int64_t start = o * g.stride[d] - g.pad[d];
  step = g.dilation[d];
  first = start < 0 ? start + (-start + step - 1) / step * step : start;
  const std::int64_t last = start + (g.kernel[d] - 1) * step + 1;
  end = last < g.in[d] ? last : g.in[d];
}

/// True when input index i along dim d is a tap of output index o.
PHASOR_HOST_DEVICE inline bool pool_reads(const PoolGeo& g, int d, std::int64_t o, std::int64_t i) {
  std::int64_t first, end, step;
  pool_taps(g, d, o, first, end, step);
  return i >= first && i < end && (i - first) % step == 0;
}

/// The outputs along dim d whose windows may read input index i: lo .. hi (check with pool_reads).
PHASOR_HOST_DEVICE inline void pool_readers(const PoolGeo& g, int d, std::int64_t i, std::int64_t& lo,
                                            std::int64_t& hi) {
  if (g.adaptive) {
    lo = i * g.out[d] / g.in[d] - 1;
    hi = (i + 1) * g.out[d] / g.in[d] + 1;
  } else {  // o stride - pad <= i <= o stride - pad + (kernel - 1) dilation
    const std::int64_t a = i + g.pad[d] - (g.kernel[d] - 1) * g.dilation[d];
    lo = a <= 0 ? 0 : (a + g.stride[d] - 1) / g.stride[d];
    hi = (i + g.pad[d]) / g.stride[d];
  }
  lo = lo < 0 ? 0 : lo;
  hi = hi >= g.out[d] ? g.out[d] - 1 : hi;
}

/// Output o's factor along dim d of an average's divisor (the divisor is their product unless overridden):
/// the window clipped to the padded input when count_include_pad (regular windows), else its taps.
PHASOR_HOST_DEVICE inline std::int64_t pool_count(const PoolGeo& g, int d, std::int64_t o) {
  if (g.count_include_pad && !g.adaptive) {
    const std::int64_t start = o * g.stride[d] - g.pad[d];
    const std::int64_t stop = start + g.kernel[d], lim = g.in[d] + g.pad[d];
    return (stop < lim ? stop : lim) - start;
  }
  std::int64_t first, end, step;
  pool_taps(g, d, o, first, end, step);
  return end > first ? (end - first + step - 1) / step : 0;
}

/// What the average of output (o0, o1, o2) divides its sum by (torch's avg_pool / adaptive_avg_pool rule).
PHASOR_HOST_DEVICE inline double pool_divisor(const PoolGeo& g, const std::int64_t* o) {
  if (g.divisor > 0) return static_cast<double>(g.divisor);
  std::int64_t n = 1;
  for (int d = 0; d < kPoolDims; ++d) n *= pool_count(g, d, o[d]);
  return static_cast<double>(n);
}

/// Output j of a plane as (o0, o1, o2).
PHASOR_HOST_DEVICE inline void pool_out_coords(const PoolGeo& g, std::int64_t j, std::int64_t* o) {
  o[2] = j % g.out[2];
  j /= g.out[2];
  o[1] = j % g.out[1];
  o[0] = j / g.out[1];
}

/// The largest tap of output (o0, o1, o2) of the plane x and its flat index in the plane; NaN wins (the
/// last one), ties keep the first tap in row-major order, as torch's max_pool.
template <class T>
PHASOR_HOST_DEVICE inline void pool_max_at(const PoolGeo& g, const T* x, const std::int64_t* o, T& best,
                                           std::int64_t& best_i) {
  std::int64_t f0, e0, s0, f1, e1, s1, f2, e2, s2;
  pool_taps(g, 0, o[0], f0, e0, s0);
  pool_taps(g, 1, o[1], f1, e1, s1);
  pool_taps(g, 2, o[2], f2, e2, s2);
  best = -static_cast<T>(INFINITY);
  best_i = (f0 * g.in[1] + f1) * g.in[2] + f2;
  for (std::int64_t i0 = f0; i0 < e0; i0 += s0)
    for (std::int64_t i1 = f1; i1 < e1; i1 += s1) {
      const std::int64_t row = (i0 * g.in[1] + i1) * g.in[2];
      for (std::int64_t i2 = f2; i2 < e2; i2 += s2) {
        const T v = x[row + i2];
        if (v > best || v != v) {
          best = v;
          best_i = row + i2;
        }
      }
    }
}

/// The average of output (o0, o1, o2) of the plane x (sum of its taps over pool_divisor).
template <class T>
PHASOR_HOST_DEVICE inline T pool_avg_at(const PoolGeo& g, const T* x, const std::int64_t* o) {
  std::int64_t f0, e0, s0, f1, e1, s1, f2, e2, s2;
  pool_taps(g, 0, o[0], f0, e0, s0);
  pool_taps(g, 1, o[1], f1, e1, s1);
  pool_taps(g, 2, o[2], f2, e2, s2);
  T sum = T(0);
  for (std::int64_t i0 = f0; i0 < e0; i0 += s0)
    for (std::int64_t i1 = f1; i1 < e1; i1 += s1) {
      const std::int64_t row = (i0 * g.in[1] + i1) * g.in[2];
      for (std::int64_t i2 = f2; i2 < e2; i2 += s2) sum += x[row + i2];
    }
  return sum / static_cast<T>(pool_divisor(g, o));
}

/// Input element p (flat in the plane) of the average pooling's adjoint: the sum of gy[o] / divisor(o) over
/// the outputs o whose windows read p, in row-major order of o.
template <class T>
PHASOR_HOST_DEVICE inline T pool_avg_adjoint_at(const PoolGeo& g, const T* gy, std::int64_t p) {
  std::int64_t i[kPoolDims];
  i[2] = p % g.in[2];
  p /= g.in[2];
  i[1] = p % g.in[1];
  i[0] = p / g.in[1];
  std::int64_t lo[kPoolDims], hi[kPoolDims];
  for (int d = 0; d < kPoolDims; ++d) pool_readers(g, d, i[d], lo[d], hi[d]);
  T sum = T(0);
  std::int64_t o[kPoolDims];
  for (o[0] = lo[0]; o[0] <= hi[0]; ++o[0]) {
    if (!pool_reads(g, 0, o[0], i[0])) continue;
    for (o[1] = lo[1]; o[1] <= hi[1]; ++o[1]) {
      if (!pool_reads(g, 1, o[1], i[1])) continue;
      for (o[2] = lo[2]; o[2] <= hi[2]; ++o[2]) {
        if (!pool_reads(g, 2, o[2], i[2])) continue;
        sum += gy[(o[0] * g.out[1] + o[1]) * g.out[2] + o[2]] / static_cast<T>(pool_divisor(g, o));
      }
    }
  }
  return sum;
}

}  // namespace phasor::nn::detail
