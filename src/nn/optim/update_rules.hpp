// src/nn/optim/update_rules.hpp - the per-element update formulas of SGD and Adam/AdamW, shared by
// the CPU loops (src/nn/optim/sgd_adam.cpp) and the CUDA kernels (src/cuda/optim.cu), so both
// devices run the same arithmetic in the same order (Note [shared update rules]).
//
// Note [shared update rules]
// Each formula updates one real component (a complex parameter is its interleaved real and
// imaginary parts) of the parameter and its state in place. The flags are plain bool arguments of
// an always-inlined function: the CPU kernels pass them as template constants (each inner loop is
// branch-free after inlining, as fast as before), the CUDA kernel passes them at run time (uniform
// branches, one kernel per real type). Differences between the devices are rounding only: IEEE sqrt
// and division are correctly rounded on both, but nvcc may contract a*b+c into an FMA where the
// CPU build (baseline x86-64) rounds twice.
#pragma once
#include <cmath>

#include "core/element_traits.hpp"

#if defined(__CUDACC__)
#define PHASOR_UPDATE_INLINE __forceinline__
#else
#define PHASOR_UPDATE_INLINE inline __attribute__((always_inline))
#endif

namespace phasor::optim::detail {

/// Correctly rounded square root on either device.
template <class R>
PHASOR_HOST_DEVICE PHASOR_UPDATE_INLINE R update_sqrt(R x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

/// Scalars of one SGD step, converted to the parameter's real type R.
template <class R>
struct SgdCoeffs {
  R lr, wd, momentum, dampening, sign;  ///< sign = -1 for maximize
};

/// One SGD component update: d = sign*g (+ wd*p); with momentum buf = d on the first step, else
/// buf = momentum*buf + (1 - dampening)*d; nesterov uses d + momentum*buf; p -= lr*d.
template <class R>
PHASOR_HOST_DEVICE PHASOR_UPDATE_INLINE void sgd_update(R& p, R g, R* buf, const SgdCoeffs<R>& c, bool wd,
                                                        bool momentum, bool nesterov, bool first) {
  R d = c.sign * g;
  if (wd) d += c.wd * p;
  if (momentum) {
    if (first) {
      *buf = d;
      if (nesterov) d = d + c.momentum * d;
    } else {
      const R bi = c.momentum * *buf + (R(1) - c.dampening) * d;
      *buf = bi;
      d = nesterov ? d + c.momentum * bi : bi;
    }
  }
  p -= c.lr * d;
}

/// Scalars of one Adam/AdamW step, converted to the parameter's real type R.
template <class R>
struct AdamCoeffs {
  R w1;         ///< 1 - beta1 (the lerp weight)
  R b2;         ///< beta2
  R one_m_b2;   ///< 1 - beta2
  R wd;         ///< L2 weight decay (Adam)
  R eps;        ///< epsilon
  R decay;      ///< 1 - lr*wd for AdamW's decoupled decay, else 1 (leaves p exact)
  R step_size;  ///< lr / (1 - beta1^step)
  R bc2_sqrt;   ///< sqrt(1 - beta2^step)
  R sign;       ///< -1 for maximize
};

/// What Adam's bias corrections need besides the step count t (torch.optim.Adam).
struct AdamBias {
  double lr, beta1, beta2;
};

/// Sets c.step_size = lr / (1 - beta1^t) and c.bc2_sqrt = sqrt(1 - beta2^t), computed in double and
/// rounded to R once: the host (from its step count) and the CUDA kernel (from a device-side count,
/// capturable) make the same coefficients.
template <class R>
PHASOR_HOST_DEVICE inline void set_bias_corrections(AdamCoeffs<R>& c, const AdamBias& b, double t) {
#if defined(__CUDA_ARCH__)
  c.step_size = static_cast<R>(b.lr / (1 - ::pow(b.beta1, t)));
  c.bc2_sqrt = static_cast<R>(::sqrt(1 - ::pow(b.beta2, t)));
#else
  c.step_size = static_cast<R>(b.lr / (1 - std::pow(b.beta1, t)));
  c.bc2_sqrt = static_cast<R>(std::sqrt(1 - std::pow(b.beta2, t)));
#endif
}

/// One Adam component update (torch.optim.Adam/AdamW): decoupled decay, optional L2 term, m = lerp(m,
/// g, 1 - beta1) (torch.lerp's two formulas: `lerp_low` when the weight is < 0.5), v = beta2*v +
/// (1-beta2) g^2, amsgrad's running max (NaN propagates), p -= step_size * m / (sqrt(v)/bc2 + eps).
template <class R>
PHASOR_HOST_DEVICE PHASOR_UPDATE_INLINE void adam_update(R& p, R g, R& m, R& v, R* vmax, const AdamCoeffs<R>& c,
                                                         bool amsgrad, bool l2, bool lerp_low) {
  R gi = c.sign * g;
  const R pi = p * c.decay;
  if (l2) gi += c.wd * pi;
  const R mi = lerp_low ? m + c.w1 * (gi - m) : gi - (gi - m) * (R(1) - c.w1);
  const R vi = v * c.b2 + c.one_m_b2 * gi * gi;
  m = mi;
  v = vi;
  R vv = vi;
  if (amsgrad) {
    const R old = *vmax;
    vv = (old > vi || old != old) ? old : vi;
    *vmax = vv;
  }
  const R denom = update_sqrt(vv) / c.bc2_sqrt + c.eps;
  p = pi - c.step_size * mi / denom;
}

/// The coefficients in real type R (each cast from double, as the CPU kernels always did).
template <class R>
PHASOR_HOST_DEVICE inline SgdCoeffs<R> cast_coeffs(const SgdCoeffs<double>& c) {
  return SgdCoeffs<R>{static_cast<R>(c.lr), static_cast<R>(c.wd), static_cast<R>(c.momentum),
                      static_cast<R>(c.dampening), static_cast<R>(c.sign)};
}
/// The coefficients in real type R (each cast from double).
template <class R>
PHASOR_HOST_DEVICE inline AdamCoeffs<R> cast_coeffs(const AdamCoeffs<double>& c) {
  return AdamCoeffs<R>{static_cast<R>(c.w1),  static_cast<R>(c.b2),    static_cast<R>(c.one_m_b2),
                       static_cast<R>(c.wd),  static_cast<R>(c.eps),   static_cast<R>(c.decay),
                       static_cast<R>(c.step_size), static_cast<R>(c.bc2_sqrt), static_cast<R>(c.sign)};
}

}  // namespace phasor::optim::detail
