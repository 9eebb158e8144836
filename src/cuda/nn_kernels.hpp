// src/cuda/nn_kernels.hpp - raw launches of the nn layer's CUDA kernels (im2col/col2im and the
// spectral mode mix and planes in conv.cu, pooling in pool.cu, resample in resample.cu, the multi-tensor
// optimizer updates in optim.cu). Plain C++, no CUDA types:
// pointers are device memory, `stream` is a cudaStream_t; the Tensor-level glue is src/cuda/nn_ops.cpp.
#pragma once
#include <cstdint>

#include "nn/optim/update_rules.hpp"
#include "nn/pool_rules.hpp"
#include "nn/spectral_planes.hpp"

namespace phasor::cuda {

/// Most spatial dims of a CUDA convolution.
inline constexpr int kMaxConvDims = 3;

/// Sliding-window geometry (Note [unfold layout] in src/nn/conv_kernels.cpp), nd <= kMaxConvDims.
struct ConvGeo {
  int nd = 0;                                ///< spatial dims
  std::int64_t in[kMaxConvDims] = {};        ///< input sizes (unpadded)
  std::int64_t out[kMaxConvDims] = {};       ///< window positions per dim
  std::int64_t kernel[kMaxConvDims] = {};    ///< window sizes
  std::int64_t stride[kMaxConvDims] = {};    ///< window steps
  std::int64_t dilation[kMaxConvDims] = {};  ///< tap spacing
  std::int64_t pad[kMaxConvDims] = {};       ///< zero padding before the input
};

/// cols (NC*K, L) = unfold of x (NC, *in), contiguous; elements of `elem_bytes` (4, 8 or 16) bytes.
void im2col(const void* x, void* cols, std::int64_t NC, const ConvGeo& g, int elem_bytes, void* stream);
/// y (NC, *in) = fold of cols (NC*K, L) (overlaps summed), contiguous; R = float (double when
/// `is_double`), `comps` = 2 for complex elements (interleaved), else 1.
void col2im(const void* cols, void* y, std::int64_t NC, const ConvGeo& g, bool is_double, int comps, void* stream);
/// Element strides of spectral_mix's operands over their first two dims (x (B, I, K): xb, xi; w (I, O, K):
/// wi, wo); the K modes are contiguous in both.
struct MixStrides {
  std::int64_t xb, xi, wi, wo;
};
/// out[b,o,k] = sum_i op(x)[b,i,k] op(w)[i,o,k] for complex x (B, I, K), w (I, O, K) with strides `st` and
/// a contiguous out (B, O, K), op conjugating x when `conj_x` (w when `conj_w`); complex128 when
/// `is_double`, else complex64.
void spectral_mix(const void* x, const void* w, void* out, std::int64_t B, std::int64_t I, std::int64_t O,
                  std::int64_t K, const MixStrides& st, bool conj_x, bool conj_w, bool is_double, void* stream);

/// spectral_planes (Note [spectral planes] in src/nn/spectral_planes.hpp) over the `total` elements of the
/// contiguous complex mode tensor y into out; bias (real, channels long) may be null; complex128 when
/// `is_double`, else complex64.
void spectral_planes(const void* y, const void* bias, void* out, std::int64_t total, const nn::detail::PlaneGeo& g,
                     bool is_double, void* stream);

/// out[o] = plane_bias_grad (spectral_planes.hpp) for every channel of the contiguous complex gradient g
/// (batch, channels, ...); real out of double when `is_double`, else float.
void spectral_bias_grad(const void* g, void* out, std::int64_t batch, const nn::detail::PlaneGeo& geo, bool is_double,
                        void* stream);

/// Max pooling of NC contiguous planes x (NC, prod(g.in)) into y and the flat in-plane index of each maximum
/// idx (NC, prod(g.out)) (pool.cu); double when `is_double`, else float.
void max_pool(const void* x, void* y, std::int64_t* idx, std::int64_t NC, const nn::detail::PoolGeo& g, bool is_double,
              void* stream);
/// Average pooling of NC contiguous planes x (NC, prod(g.in)) into y (NC, prod(g.out)).
void avg_pool(const void* x, void* y, std::int64_t NC, const nn::detail::PoolGeo& g, bool is_double, void* stream);
/// The adjoint of avg_pool: gx (NC, prod(g.in)) from gy (NC, prod(g.out)), gathered per input element.
void avg_pool_adjoint(const void* gy, void* gx, std::int64_t NC, const nn::detail::PoolGeo& g, bool is_double,
                      void* stream);

/// y (pre, out, post) = the CSR map (row_ptr: out + 1 entries, col, val of the real type) applied along the
/// middle dim of the contiguous x (pre, in, post) (resample.cu), each output's taps summed in row order;
/// post counts real components (a complex element is two); double when `is_double`, else float.
void resample(const void* x, void* y, const std::int64_t* row_ptr, const std::int64_t* col, const void* val,
              std::int64_t pre, std::int64_t in, std::int64_t out, std::int64_t post, bool is_double, void* stream);

/// Most parameters one multi-tensor optimizer launch updates (Note [multi-tensor launch] in optim.cu).
inline constexpr int kMaxSlices = 24;

/// One parameter of a multi-tensor SGD update: n real components of the contiguous device arrays p
/// (updated in place), g and buf (null without momentum; `first` when it is fresh).
struct SgdSlice {
  void* p;
  const void* g;
  void* buf;
  std::int64_t n;
  optim::detail::SgdCoeffs<double> c;
  bool first;
};

/// One parameter of a multi-tensor Adam/AdamW update: n real components of the contiguous device arrays
/// p (updated in place), g, m, v and vmax (null without amsgrad), with the parameter's own step's
/// coefficients; with `step` (a device float64 count, capturable) the step count is incremented on the
/// device and the bias corrections (c.step_size, c.bc2_sqrt) are computed there from it.
struct AdamSlice {
  void* p;
  const void* g;
  void* m;
  void* v;
  void* vmax;
  std::int64_t n;
  optim::detail::AdamCoeffs<double> c;
  double* step;
};


/// sgd_update (update_rules.hpp) over every slice, all of real type double when `is_double`, else float
/// (coefficients cast as the CPU casts them), on one device: one launch per kMaxSlices slices. `lr`: null,
/// or the device address of a float64 learning rate that replaces the coefficients' (a captured step).
void sgd_step(bool is_double, const SgdSlice* slices, int count, bool wd, bool momentum, bool nesterov,
              const void* lr, void* stream);
/// adam_update over every slice, as sgd_step; with `lr`, AdamW's decay is 1 - lr * decoupled_wd.
void adam_step(bool is_double, const AdamSlice* slices, int count, bool amsgrad, bool l2, bool lerp_low,
               const optim::detail::AdamBias& bias, const void* lr, double decoupled_wd, void* stream);

}  // namespace phasor::cuda
