// src/nn/spectral_planes.hpp - the per-element formula of spectral_planes (src/nn/spectral.cpp), the
// step of a spectral convolution between the mode mix and the inverse transform, shared by the CPU loop
// and the CUDA kernel (src/cuda/conv.cu) so both devices compute the same arithmetic.
//
// Note [spectral planes]
// The mixed modes y (B, O, 2m_1, ..., 2m_{d-1}, m_d) (non-last dims ordered 0..m-1, -m..-1) feed a c2r
// transform, which reads only the Hermitian part of its DC plane (last index 0) and, when kept, its
// Nyquist plane. spectral_planes makes those planes Hermitian explicitly, so that the result and its
// gradient do not depend on how a c2r implementation treats the rest: on each such plane
//   z[i] = M(i) (y[i] + conj(y[R(i)])) / 2,   R(i)_k = (2m_k - i_k) mod 2m_k,
// with M(i) = 0 at an unpaired index i_k = m_k (2 m_k < n_k of the output grid: -m_k has no +m_k
// partner), else 1; every other plane passes through. A real bias b (O) is a constant per channel: its
// DC coefficient b[o] * scale is added at the origin (all indices 0; scale = the inverse transform's
// 1/normalization), a mode tensor update instead of a pass over the output.
// The map y -> z is real-linear and self-adjoint (R is an involution, M commutes with it), so its
// gradient is the same map without the bias, and the bias's is scale * sum_b Re g[b, o, origin] (one
// small kernel, spectral_bias_grad, whose own gradient is spectral_planes of zeros with that bias).
// One primitive replaces a select/flip/roll/conj/add/scale/mask/cat/pad chain: one kernel launch on
// a GPU for the forward and one for the backward.
#pragma once
#include <cstdint>

#include "core/element_traits.hpp"

namespace phasor::nn::detail {

/// Mode-layout parameters of spectral_planes (Note [spectral planes]).
struct PlaneGeo {
  int nd = 0;                    ///< non-last mode dims (0 to 2)
  std::int64_t size[2] = {};     ///< their lengths 2 m_k
  bool masked[2] = {};           ///< index m_k zeroed (unpaired on the output grid)
  std::int64_t md = 1;           ///< kept last-dim modes
  std::int64_t nyquist = -1;     ///< md - 1 when the Nyquist plane is kept, else -1
  std::int64_t channels = 1;     ///< O (bias length)
  double bias_scale = 0;         ///< the bias's DC coefficient per unit
  /// Elements of one plane per (b, o): the product of the non-last mode dims.
  PHASOR_HOST_DEVICE std::int64_t plane_elems() const { return nd == 0 ? 1 : nd == 1 ? size[0] : size[0] * size[1]; }
};

/// z at element `row * md + j` (j a Hermitian plane) from the contiguous, interleaved y: writes its real
/// and imaginary parts. `row` indexes (b, o, i_1, ..., i_{d-1}) row-major; `bias` may be null.
template <class R>
PHASOR_HOST_DEVICE inline void plane_element(const R* y, const R* bias, std::int64_t row, std::int64_t j,
                                             const PlaneGeo& g, R& re, R& im) {
  std::int64_t rest = row, partner = 0, stride = g.md;
  bool zero = false, origin = true;
  for (int k = g.nd - 1; k >= 0; --k) {
    const std::int64_t n = g.size[k], i = rest % n;
    rest /= n;
    partner += ((i == 0 ? 0 : n - i) - i) * stride;
    stride *= n;
    zero = zero || (g.masked[k] && 2 * i == n);
    origin = origin && i == 0;
  }
  const std::int64_t self = row * g.md + j, other = self + partner;
  re = zero ? R(0) : (y[2 * self] + y[2 * other]) * R(0.5);
  im = zero ? R(0) : (y[2 * self + 1] - y[2 * other + 1]) * R(0.5);
  if (bias && j == 0 && origin) re += bias[rest % g.channels] * static_cast<R>(g.bias_scale);
}

/// The bias's gradient for channel o from the contiguous, interleaved gradient g of the planes' output
/// (`batch` leading rows): scale * sum_b Re g[b, o, origin].
template <class R>
PHASOR_HOST_DEVICE inline R plane_bias_grad(const R* g, std::int64_t o, std::int64_t batch, const PlaneGeo& geo) {
  const std::int64_t per = geo.plane_elems() * geo.md;  // complex elements per (b, o)
  R acc = 0;
  for (std::int64_t b = 0; b < batch; ++b) acc += g[2 * (b * geo.channels + o) * per];
  return acc * static_cast<R>(geo.bias_scale);
}

}  // namespace phasor::nn::detail
