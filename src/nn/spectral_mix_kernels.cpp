// src/nn/spectral_mix_kernels.cpp - spectral_mix's direct CPU kernel: complex multiply-adds along contiguous
// modes, compiled once per ISA (AVX-512, AVX2, baseline; the ifunc picks one at load time, as Note [vector
// gelu]). Note [spectral_mix kernel] in spectral_mix.cpp says when it runs.
#include "nn/spectral_mix_kernels.hpp"

#include "core/cpu_features.hpp"

namespace phasor::nn::detail {

namespace {

/// acc[k] += op(x[k]) op(w[k]) for k < K over (re, im) pairs; op = conj where CX (CW).
template <class R, bool CX, bool CW>
PHASOR_INLINE void mac_row(R* __restrict acc, const R* __restrict x, const R* __restrict w, std::int64_t K) {
  for (std::int64_t k = 0; k < K; ++k) {
    const R xr = x[2 * k], xm = CX ? -x[2 * k + 1] : x[2 * k + 1];
    const R wr = w[2 * k], wm = CW ? -w[2 * k + 1] : w[2 * k + 1];
    acc[2 * k] += xr * wr - xm * wm;
    acc[2 * k + 1] += xr * wm + xm * wr;
  }
}

/// mix_tile with the flags as template arguments: each w row read once for the tile's nb rows of x, the nb
/// output rows staying in L1 while i runs. (Keeping register blocks of the output rows instead, written as
/// arrays, made GCC's code 40% slower.)
template <class R, bool CX, bool CW>
PHASOR_INLINE void mix_tile_flags(R* out, std::int64_t ob, const R* x, std::int64_t xb, std::int64_t xi, const R* w,
                            std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K) {
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t k = 0; k < 2 * K; ++k) out[2 * b * ob + k] = R(0);
  for (std::int64_t i = 0; i < I; ++i)
    for (std::int64_t b = 0; b < nb; ++b)
      mac_row<R, CX, CW>(out + 2 * b * ob, x + 2 * (b * xb + i * xi), w + 2 * i * wi, K);
}

template <class R>
PHASOR_INLINE void mix_tile_any(R* out, std::int64_t ob, const R* x, std::int64_t xb, std::int64_t xi, const R* w,
                                std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw) {
  if (cx && cw) mix_tile_flags<R, true, true>(out, ob, x, xb, xi, w, wi, nb, I, K);
  else if (cx) mix_tile_flags<R, true, false>(out, ob, x, xb, xi, w, wi, nb, I, K);
  else if (cw) mix_tile_flags<R, false, true>(out, ob, x, xb, xi, w, wi, nb, I, K);
  else mix_tile_flags<R, false, false>(out, ob, x, xb, xi, w, wi, nb, I, K);
}

}  // namespace

bool modes_contiguous(const Tensor& t) {
  std::int64_t expect = 1;
  for (std::int64_t d = t.dim() - 1; d >= 2; --d) {
    if (t.size(d) != 1 && t.stride(d) != expect) return false;
    expect *= t.size(d);
  }
  return true;
}

PHASOR_CLONES
void mix_tile(float* out, std::int64_t ob, const float* x, std::int64_t xb, std::int64_t xi, const float* w,
              std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw) {
  mix_tile_any(out, ob, x, xb, xi, w, wi, nb, I, K, cx, cw);
}

PHASOR_CLONES
void mix_tile(double* out, std::int64_t ob, const double* x, std::int64_t xb, std::int64_t xi, const double* w,
              std::int64_t wi, std::int64_t nb, std::int64_t I, std::int64_t K, bool cx, bool cw) {
  mix_tile_any(out, ob, x, xb, xi, w, wi, nb, I, K, cx, cw);
}

}  // namespace phasor::nn::detail
