// src/cuda/nn_ops.hpp - the nn layer's CUDA work on tensors (convolution unfold/fold, the spectral
// mode mix, multi-tensor optimizer updates), called by the CPU launchers in src/nn once they have decided
// shapes, dtypes and errors. CUDA-free: every build has these; a CPU-only build's throw.
#pragma once
#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "nn/conv_kernels.hpp"
#include "nn/optim/update_rules.hpp"
#include "nn/pool_rules.hpp"
#include "nn/resample.hpp"
#include "nn/spectral_planes.hpp"
#include "phasor/tensor.hpp"

namespace phasor::cuda::detail {

/// Columns (N, C*K, L) of the CUDA tensor x (N, C, *in) (Note [unfold layout]); at most 3 spatial dims.
Tensor unfold(const Tensor& x, const ::phasor::detail::ConvGeometry& g, const char* op);
/// Adjoint of unfold: cols (N, C*K, L) -> (N, C, *g.in), overlaps summed.
Tensor fold(const Tensor& cols, const ::phasor::detail::ConvGeometry& g, const char* op);
/// out (B, O, *M) = sum_i op(x)[b,i,*k] op(w)[i,o,*k] for complex CUDA tensors x (B, I, *M), w (I, O, *M)
/// of one dtype (any strides; copied only where the modes are not contiguous), op conjugating x when
/// `conj_x` and w when `conj_w`.
Tensor spectral_mix(const Tensor& x, const Tensor& w, bool conj_x = false, bool conj_w = false);
/// spectral_planes (Note [spectral planes]) of the contiguous complex CUDA mode tensor y with the contiguous
/// bias of y's real dtype (undefined for none): a new contiguous tensor.
Tensor spectral_planes(const Tensor& y, const Tensor& bias, const nn::detail::PlaneGeo& g);
/// The bias's gradient (channels,) from the contiguous complex CUDA gradient g of spectral_planes' output
/// (Note [spectral planes]).
Tensor spectral_bias_grad(const Tensor& g, const nn::detail::PlaneGeo& geo);

/// Max pooling of the CUDA tensor x (N, C, *in) as N*C planes (float32/float64): the maxima and their flat
/// in-plane indices (int64), both of `out_shape` (N, C, *out).
std::pair<Tensor, Tensor> max_pool(const Tensor& x, const nn::detail::PoolGeo& g, const Shape& out_shape);
/// Average pooling of the CUDA tensor x (N, C, *in) into `out_shape` (N, C, *out).
Tensor avg_pool(const Tensor& x, const nn::detail::PoolGeo& g, const Shape& out_shape);
/// The adjoint of avg_pool: the gradient (N, C, *in) = `in_shape` from gy (N, C, *out).
Tensor avg_pool_adjoint(const Tensor& gy, const nn::detail::PoolGeo& g, const Shape& in_shape);

/// resample_op's forward on the CUDA tensor x (float32, float64, complex64 or complex128): `map` applied along
/// `dim` (in range), a new contiguous tensor with that dim of size map.out.
Tensor resample(const Tensor& x, std::int64_t dim, const nn::detail::SparseMap& map);

/// One CUDA parameter of a multi-tensor SGD step: its contiguous storage p (updated in place), the
/// contiguous gradient g, the momentum buffer (undefined without momentum; `first` when fresh) and the
/// step's coefficients.
struct SgdParam {
  Tensor p, g, buf;
  optim::detail::SgdCoeffs<double> c;
  bool first;
  /// The tensors that must share p's device.
  std::array<const Tensor*, 2> operands() const { return {&g, &buf}; }
};

/// One CUDA parameter of a multi-tensor Adam/AdamW step: contiguous p (updated in place), g, m, v and
/// vmax (undefined without amsgrad), with the coefficients of this parameter's step count; `step`, when
/// defined, is that count as a float64 0-d tensor on p's device (capturable: incremented on the device).
struct AdamParam {
  Tensor p, g, m, v, vmax;
  optim::detail::AdamCoeffs<double> c;
  Tensor step;
  /// The tensors that must share p's device.
  std::array<const Tensor*, 5> operands() const { return {&g, &m, &v, &vmax, &step}; }
};

/// Where the kernels of a step on a device read the learning rate: lr_on(device) is null (the coefficients'
/// lr), or the device address of a float64 rate (a step captured into a CUDA graph: each replay rewrites
/// it, Note [host values in CUDA graphs]). An empty function: null everywhere.
using LrOn = std::function<const void*(Device)>;

/// Fused SGD updates of every parameter of `ps` (any CUDA devices, real or complex dtypes): one launch
/// per device, real type and kMaxSlices parameters; checks every device before anything runs.
void sgd_step(const std::vector<SgdParam>& ps, bool wd, bool momentum, bool nesterov, const LrOn& lr_on = {});
/// Fused Adam/AdamW updates of every parameter of `ps`, as sgd_step.
/// `bias` makes the bias corrections of parameters whose step count is on the device; with a device lr,
/// AdamW's decay is 1 - lr * decoupled_wd (0 for Adam).
void adam_step(const std::vector<AdamParam>& ps, bool amsgrad, bool l2, const optim::detail::AdamBias& bias,
               const LrOn& lr_on = {}, double decoupled_wd = 0);

}  // namespace phasor::cuda::detail
