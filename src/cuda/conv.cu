// src/cuda/conv.cu - im2col/col2im for CUDA convolutions and the per-mode complex channel contraction
// of spectral convolutions (Note [cuda conv kernels]).
//
// Note [cuda conv kernels]
// im2col writes one column entry per thread (row r = (n*C + c)*K + kidx, column o; Note [unfold
// layout] in src/nn/conv_kernels.cpp), reading x or writing zero where the tap falls in the padding.
// It only moves elements, so it is instantiated per element size (4, 8, 16 bytes) rather than per
// dtype. col2im gathers instead of scattering: one thread per input element (and real component)
// walks the K kernel taps in order, finds the one output position per dim that reads it (if any),
// and sums those column entries - no atomics, deterministic, and the same summation order as the CPU
// fold (rows in kernel-tap order).
//
// Spectral mix: out[b,o,k] = sum_i op(x)[b,i,k] op(w)[i,o,k] (op conjugating or not) on (B, I, K),
// (I, O, K) operands with contiguous modes and any strides over their first two dims. Per mode k it is
// a small product (B x I) @ (I x O), 20..32 x 32..64 x 32..64 at FNO shapes. Considered: a
// strided-batched complex gemm over the K modes (cublasCgemmStridedBatched), which needs x, w and the
// result in mode-major (K, B, I) / (K, I, O) / (K, B, O) layouts, i.e. three extra permuting copies of
// tensors as large as the operands, and then runs K tiny gemms well below the sizes cuBLAS tiles well.
// The direct kernel reads the spectra in the layout rfftn and narrow/cat produce (modes contiguous,
// coalesced over k) in one pass with no permutes; the forward and both gradients (grad_x = mix(g,
// conj(w)^T), grad_w = mix(conj(x)^T, g), see src/nn/spectral_mix.cpp) are the same kernel on
// transposed operands, read through strides and conjugated as they are read: no conj or transposing
// copies. Each thread computes a 4 x 4 register tile of (b, o) outputs of one mode, so every element
// it loads serves 4 products: one output per thread (the first version) loaded 2 elements per complex
// multiply-add, and at the FNO-2D large shape (B 32, I = O 64, K 2048) its 67 MB of weights, more than
// an H200's 60 MB L2, were read again from memory for every batch row. Tiles are ordered batches
// fastest, so the blocks resident at once read each weight tile for all batch tiles while it is in L2.
// Each output sums over i in order with the same formula as before, so results are unchanged.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/fast_div.hpp"
#include "cuda/launch.cuh"
#include "cuda/nn_kernels.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {
namespace {

/// The divisors of a convolution's index arithmetic (Note [fast index division]): the geometry's sizes
/// per dim and the flat extents of im2col's and col2im's loops.
struct ConvDivs {
  Divisor in[kMaxConvDims], out[kMaxConvDims], kernel[kMaxConvDims], stride[kMaxConvDims];
  Divisor L, K, P, comps;
};

/// The divisors for g and a loop of `total` elements: 32-bit ones when total and every size fit.
ConvDivs conv_divs(const ConvGeo& g, std::int64_t K, std::int64_t L, std::int64_t P, std::int64_t comps,
                   std::int64_t total) {
  bool fast = fits_fast_div(total) && fits_fast_div(K * L) && fits_fast_div(P * comps);
  for (int d = 0; d < g.nd; ++d)
    fast = fast && fits_fast_div(g.in[d] + g.pad[d] + 1) && fits_fast_div(g.kernel[d] * g.dilation[d]) &&
           fits_fast_div(g.stride[d]);
  ConvDivs v;
  for (int d = 0; d < g.nd; ++d) {
    v.in[d] = Divisor(g.in[d], fast);
    v.out[d] = Divisor(g.out[d], fast);
    v.kernel[d] = Divisor(g.kernel[d], fast);
    v.stride[d] = Divisor(g.stride[d], fast);
  }
  v.L = Divisor(L, fast);
  v.K = Divisor(K, fast);
  v.P = Divisor(P, fast);
  v.comps = Divisor(comps, fast);
  return v;
}

template <class E>
__global__ void im2col_kernel(const E* __restrict__ x, E* __restrict__ cols, ConvGeo g, ConvDivs v, std::int64_t P,
                              std::int64_t total) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    std::int64_t o, r, kidx, nc;
    v.L.divmod(idx, r, o);
    v.K.divmod(r, nc, kidx);
    std::int64_t orem = o, krem = kidx, off = 0, mult = 1;
    bool inside = true;
    for (int d = g.nd - 1; d >= 0; --d) {
      std::int64_t od, kd;
      v.out[d].divmod(orem, orem, od);
      v.kernel[d].divmod(krem, krem, kd);
      const std::int64_t i = od * g.stride[d] + kd * g.dilation[d] - g.pad[d];
      inside = inside && i >= 0 && i < g.in[d];
      off += i * mult;
      mult *= g.in[d];
    }
    cols[idx] = inside ? x[nc * P + off] : E{};
  }
}

template <class R>
__global__ void col2im_kernel(const R* __restrict__ cols, R* __restrict__ y, ConvGeo g, ConvDivs v, std::int64_t K,
                              std::int64_t L, int comps, std::int64_t total) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    std::int64_t j, e, p, nc;
    v.comps.divmod(idx, e, j);
    v.P.divmod(e, nc, p);
    // the dim loops run over all kMaxConvDims dims, unrolled, so pos[] stays in registers (a loop bound by
    // g.nd indexed it at run time: a stack array)
    std::int64_t pos[kMaxConvDims] = {};
    std::int64_t prem = p;
#pragma unroll
    for (int d = kMaxConvDims - 1; d >= 0; --d)
      if (d < g.nd) v.in[d].divmod(prem, prem, pos[d]);
    R acc = R(0);
    for (std::int64_t kidx = 0; kidx < K; ++kidx) {
      std::int64_t krem = kidx, o = 0, mult = 1;
      bool hit = true;
#pragma unroll
      for (int d = kMaxConvDims - 1; d >= 0; --d) {
        if (d >= g.nd) continue;
        std::int64_t kd, q, rest;
        v.kernel[d].divmod(krem, krem, kd);
        const std::int64_t t = pos[d] + g.pad[d] - kd * g.dilation[d];  // = od * stride
        if (t < 0) {
          hit = false;
          break;
        }
        v.stride[d].divmod(t, q, rest);
        if (rest != 0 || q >= g.out[d]) {
          hit = false;
          break;
        }
        o += q * mult;
        mult *= g.out[d];
      }
      if (hit) acc += cols[((nc * K + kidx) * L + o) * comps + j];
    }
    y[idx] = acc;
  }
}

template <class R>
struct alignas(2 * sizeof(R)) Cplx {
  R re, im;
};

/// The spectral mix's tiles (Note [cuda conv kernels]): each thread computes kMixB x kMixO outputs (b, o)
/// of one mode k; a block's 256 threads are 32 modes (a warp's lanes, coalesced) times 8 (b, o) groups,
/// 2 along b and 4 along o, so a block covers 32 modes x kMixB*2 batches x kMixO*4 output channels.
constexpr int kMixB = 4, kMixO = 4, kMixLanes = 32, kMixGroupsB = 2, kMixGroupsO = 4;
static_assert(kMixLanes * kMixGroupsB * kMixGroupsO == kThreads, "spectral mix tiles fill a block");

/// Tiles of the spectral mix over (modes, output channels, batches), batches fastest: blocks running
/// at once share the weights' tiles of the same modes (through L2) across all batch tiles.
struct MixGrid {
  std::int64_t nb, no, nk;
};

template <class R>
__global__ void mix_kernel(const Cplx<R>* __restrict__ x, const Cplx<R>* __restrict__ w, Cplx<R>* __restrict__ out,
                           std::int64_t B, std::int64_t I, std::int64_t O, std::int64_t K, MixStrides st, R x_im,
                           R w_im, MixGrid grid) {
  const int lane = static_cast<int>(threadIdx.x) % kMixLanes, group = static_cast<int>(threadIdx.x) / kMixLanes;
  const std::int64_t tiles = grid.nb * grid.no * grid.nk;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t bt = tile % grid.nb, rest = tile / grid.nb, ot = rest % grid.no, kt = rest / grid.no;
    const std::int64_t k = kt * kMixLanes + lane;
    const std::int64_t b0 = (bt * kMixGroupsB + group / kMixGroupsO) * kMixB;
    const std::int64_t o0 = (ot * kMixGroupsO + group % kMixGroupsO) * kMixO;
    if (k >= K || b0 >= B || o0 >= O) continue;  // no __syncthreads below: idle threads may leave
    const int nb = static_cast<int>(B - b0 < kMixB ? B - b0 : kMixB), no = static_cast<int>(O - o0 < kMixO ? O - o0 : kMixO);
    const Cplx<R>* xp = x + b0 * st.xb + k;
    const Cplx<R>* wp = w + o0 * st.wo + k;
    R re[kMixB][kMixO] = {}, im[kMixB][kMixO] = {};
    for (std::int64_t i = 0; i < I; ++i) {
      Cplx<R> a[kMixB], c[kMixO];
#pragma unroll
      for (int u = 0; u < kMixB; ++u) a[u] = u < nb ? xp[u * st.xb + i * st.xi] : Cplx<R>{0, 0};
#pragma unroll
      for (int v = 0; v < kMixO; ++v) c[v] = v < no ? wp[v * st.wo + i * st.wi] : Cplx<R>{0, 0};
#pragma unroll
      for (int u = 0; u < kMixB; ++u) {
        const R ai = x_im * a[u].im;  // -1 conjugates (exact)
#pragma unroll
        for (int v = 0; v < kMixO; ++v) {
          const R ci = w_im * c[v].im;
          re[u][v] += a[u].re * c[v].re - ai * ci;
          im[u][v] += a[u].re * ci + ai * c[v].re;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kMixB; ++u)
#pragma unroll
      for (int v = 0; v < kMixO; ++v)
        if (u < nb && v < no) out[((b0 + u) * O + o0 + v) * K + k] = Cplx<R>{re[u][v], im[u][v]};
  }
}

/// spectral_planes (Note [spectral planes] in src/nn/spectral_planes.hpp): one thread per element of
/// the contiguous mode tensor, Hermitian planes from the shared formula, the rest copied.
template <class R>
__global__ void planes_kernel(const Cplx<R>* __restrict__ y, const R* __restrict__ bias, Cplx<R>* __restrict__ out,
                              std::int64_t total, nn::detail::PlaneGeo g) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    const std::int64_t j = idx % g.md;
    if (j == 0 || j == g.nyquist) {
      Cplx<R> v;
      nn::detail::plane_element(reinterpret_cast<const R*>(y), bias, idx / g.md, j, g, v.re, v.im);
      out[idx] = v;
    } else {
      out[idx] = y[idx];
    }
  }
}

/// spectral_bias_grad: one thread per channel.
template <class R>
__global__ void plane_bias_grad_kernel(const R* __restrict__ g, R* __restrict__ out, std::int64_t batch,
                                       nn::detail::PlaneGeo geo) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < geo.channels; o += step)
    out[o] = nn::detail::plane_bias_grad(g, o, batch, geo);
}

}  // namespace

void im2col(const void* x, void* cols, std::int64_t NC, const ConvGeo& g, int elem_bytes, void* stream) {
  std::int64_t K = 1, L = 1, P = 1;
  for (int d = 0; d < g.nd; ++d) {
    K *= g.kernel[d];
    L *= g.out[d];
    P *= g.in[d];
  }
  const std::int64_t total = NC * K * L;
  if (total == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const ConvDivs v = conv_divs(g, K, L, P, 1, total);
  switch (elem_bytes) {
    case 4:
      launch_kernel(im2col_kernel<unsigned int>, blocks_for(total), kThreads, s, static_cast<const unsigned int*>(x),
                    static_cast<unsigned int*>(cols), g, v, P, total);
      break;
    case 8:
      launch_kernel(im2col_kernel<unsigned long long>, blocks_for(total), kThreads, s,
                    static_cast<const unsigned long long*>(x), static_cast<unsigned long long*>(cols), g, v, P, total);
      break;
    case 16:
      launch_kernel(im2col_kernel<Bytes16>, blocks_for(total), kThreads, s, static_cast<const Bytes16*>(x),
                    static_cast<Bytes16*>(cols), g, v, P, total);
      break;
    default:
      throw Error("unfold", "no CUDA im2col for " + std::to_string(elem_bytes) + "-byte elements");
  }
  check_launch("im2col");
}

void col2im(const void* cols, void* y, std::int64_t NC, const ConvGeo& g, bool is_double, int comps, void* stream) {
  std::int64_t K = 1, L = 1, P = 1;
  for (int d = 0; d < g.nd; ++d) {
    K *= g.kernel[d];
    L *= g.out[d];
    P *= g.in[d];
  }
  const std::int64_t total = NC * P * comps;
  if (total == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const ConvDivs v = conv_divs(g, K, L, P, comps, total);
  if (is_double)
    launch_kernel(col2im_kernel<double>, blocks_for(total), kThreads, s, static_cast<const double*>(cols),
                  static_cast<double*>(y), g, v, K, L, comps, total);
  else
    launch_kernel(col2im_kernel<float>, blocks_for(total), kThreads, s, static_cast<const float*>(cols),
                  static_cast<float*>(y), g, v, K, L, comps, total);
  check_launch("col2im");
}

void spectral_mix(const void* x, const void* w, void* out, std::int64_t B, std::int64_t I, std::int64_t O,
                  std::int64_t K, const MixStrides& st, bool conj_x, bool conj_w, bool is_double, void* stream) {
  if (B * O * K == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  constexpr std::int64_t tb = kMixB * kMixGroupsB, to = kMixO * kMixGroupsO;
  const MixGrid grid{(B + tb - 1) / tb, (O + to - 1) / to, (K + kMixLanes - 1) / kMixLanes};
  const std::int64_t tiles = grid.nb * grid.no * grid.nk;
  const auto blocks = static_cast<unsigned>(tiles < 65535 ? tiles : 65535);
  if (is_double)
    launch_kernel(mix_kernel<double>, blocks, kThreads, s, static_cast<const Cplx<double>*>(x),
                  static_cast<const Cplx<double>*>(w), static_cast<Cplx<double>*>(out), B, I, O, K, st,
                  conj_x ? -1.0 : 1.0, conj_w ? -1.0 : 1.0, grid);
  else
    launch_kernel(mix_kernel<float>, blocks, kThreads, s, static_cast<const Cplx<float>*>(x),
                  static_cast<const Cplx<float>*>(w), static_cast<Cplx<float>*>(out), B, I, O, K, st,
                  conj_x ? -1.0f : 1.0f, conj_w ? -1.0f : 1.0f, grid);
  check_launch("spectral_mix");
}

void spectral_planes(const void* y, const void* bias, void* out, std::int64_t total, const nn::detail::PlaneGeo& g,
                     bool is_double, void* stream) {
  if (total == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (is_double)
    launch_kernel(planes_kernel<double>, blocks_for(total), kThreads, s, static_cast<const Cplx<double>*>(y),
                  static_cast<const double*>(bias), static_cast<Cplx<double>*>(out), total, g);
  else
    launch_kernel(planes_kernel<float>, blocks_for(total), kThreads, s, static_cast<const Cplx<float>*>(y),
                  static_cast<const float*>(bias), static_cast<Cplx<float>*>(out), total, g);
  check_launch("spectral_planes");
}

void spectral_bias_grad(const void* g, void* out, std::int64_t batch, const nn::detail::PlaneGeo& geo, bool is_double,
                        void* stream) {
  if (geo.channels == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (is_double)
    launch_kernel(plane_bias_grad_kernel<double>, blocks_for(geo.channels), kThreads, s, static_cast<const double*>(g),
                  static_cast<double*>(out), batch, geo);
  else
    launch_kernel(plane_bias_grad_kernel<float>, blocks_for(geo.channels), kThreads, s, static_cast<const float*>(g),
                  static_cast<float*>(out), batch, geo);
  check_launch("spectral_bias_grad");
}

}  // namespace phasor::cuda
