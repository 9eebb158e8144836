// src/nn/spectral.cpp - spectral convolution: rfftn, keep the lowest modes, spectral_mix,
// Hermitian projection of the DC/Nyquist planes with the bias (spectral_planes, Note [spectral planes]),
// zero spectrum of the output grid, irfftn (Note [SpectralConv convention] in phasor/nn/spectral.hpp).
//
// Copies around the transforms: for 1-D the kept modes are a narrow() view of the rfft output
// that spectral_mix packs mode-major in the same pass it needs anyway; for 2-D/3-D one cat per
// non-last dim gathers the low and high blocks. On the way back the negative-frequency blocks
// are moved to the end of each non-last dim with one cat (zeros in between) and the last dim is
// zero-padded by irfftn's own resize, whose fresh buffer the c2r transform may then use as its
// scratch input (no further copy). The two truncated transforms are primitives whose gradients
// weight only the kept modes (Note [truncated transforms]).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "fft/primitives.hpp"
#include "nn/optim/optim_util.hpp"
#include "nn/spectral_dft.hpp"
#include "nn/spectral_planes.hpp"
#include "cuda/nn_ops.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/nn/spectral.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"

namespace phasor::nn {

namespace {

using ::phasor::detail::shape_str;

/// Expected weight shape (in, out, 2m_1, ..., 2m_{d-1}, m_d).
Shape weight_shape(std::int64_t in, std::int64_t out, const std::vector<std::int64_t>& modes) {
  Shape s{in, out};
  for (std::size_t i = 0; i < modes.size(); ++i) s.push_back(i + 1 < modes.size() ? 2 * modes[i] : modes[i]);
  return s;
}

void check_modes_fit(const std::vector<std::int64_t>& modes, const Shape& grid, const char* what, const char* op) {
  const std::size_t d = modes.size();
  for (std::size_t i = 0; i < d; ++i) {
    const std::int64_t n = grid[i], m = modes[i];
    const bool last = i + 1 == d;
    const std::int64_t limit = last ? n / 2 + 1 : n / 2;
    if (m > limit)
      throw Error(op, "modes (" + std::to_string(m) + ") exceed what " + what + " spatial size " + std::to_string(n) +
                          " allows along spatial dim " + std::to_string(i) + " (at most " + std::to_string(limit) +
                          (last ? " = n/2+1 for the last, halved dim)"
                                : " = n/2 for a non-last dim, which keeps frequencies -m..m-1)"));
  }
}

/// The kept modes (B, C, 2m_1, ..., m_d) of a half spectrum over the grid `grid`.
Tensor gather_modes(const Tensor& X, const std::vector<std::int64_t>& modes, const Shape& grid) {
  const std::size_t d = modes.size();
  const std::int64_t last = static_cast<std::int64_t>(d) + 1;
  Tensor xm = X.narrow(last, 0, modes.back());
  for (std::size_t i = 0; i + 1 < d; ++i) {
    const std::int64_t dim = static_cast<std::int64_t>(2 + i), n = grid[i], m = modes[i];
    if (2 * m < n) xm = cat({xm.narrow(dim, 0, m), xm.narrow(dim, n - m, m)}, dim);
  }
  return xm;
}

/// Mode tensor -> half spectrum of the grid `grid` along the non-last dims (negative-frequency
/// blocks moved to the end, zeros between); the last dim stays m_d long (irfftn pads it).
Tensor scatter_modes(Tensor y, const std::vector<std::int64_t>& modes, const Shape& grid) {
  const std::size_t d = modes.size();
  for (std::size_t i = 0; i + 1 < d; ++i) {
    const std::int64_t dim = static_cast<std::int64_t>(2 + i), n = grid[i], m = modes[i];
    if (2 * m < n) {
      Shape zs = y.shape();
      zs[static_cast<std::size_t>(dim)] = n - 2 * m;
      y = cat({y.narrow(dim, 0, m), zeros(zs, y.dtype(), y.device()), y.narrow(dim, m, m)}, dim);
    }
  }
  return y;
}

/// Weights of the m kept last-dim bins of an n-point real transform (m <= n/2 + 1): 1 at DC and Nyquist,
/// `interior` elsewhere (the factors the FFT primitives' backward applies to whole spectra).
Tensor kept_half_weights(std::int64_t m, std::int64_t n, std::size_t d, Dtype real_dtype, double interior,
                         Device device) {
  const auto last = static_cast<std::int64_t>(d + 1);
  return ::phasor::fft::detail::half_weights(n, last, last + 1, real_dtype, interior, device).narrow(last, 0, m);
}

fft::Norm swapped(fft::Norm n) {
  return n == fft::Norm::backward ? fft::Norm::forward : n == fft::Norm::forward ? fft::Norm::backward : n;
}

Shape spatial_dims(std::size_t d) {
  Shape dims;
  for (std::size_t i = 0; i < d; ++i) dims.push_back(static_cast<std::int64_t>(2 + i));
  return dims;
}

/// Whether every non-last dim's kept 2m of n frequencies are a matrix product too (Note [truncated DFT]).
bool middle_as_matrices(const std::vector<std::int64_t>& modes, const Shape& grid) {
  for (std::size_t i = 0; i + 1 < modes.size(); ++i)
    if (!detail::use_dft_matrix(grid[i], 2 * modes[i])) return false;
  return true;
}

// Note [truncated transforms]
// rfft_modes = gather o rfftn and irfft_modes = irfftn o scatter are primitives of their own so
// that their gradients touch only the kept modes: the FFT primitives' generic backward scales
// the whole half spectrum by the DC/Nyquist/interior weights (a pass over a spectrum that is zero
// or discarded outside the kept modes), here the weights apply to the small mode tensor. With the
// dL/dz* convention: grad of rfftn is irfftn(G * w_half(0.5)) with the swapped norm; grad of irfftn
// is rfftn(g) * w_half(2) with the swapped norm. So each primitive carries a weight `interior` of the
// last dim's bins other than DC and Nyquist (w_half(interior)), and each gradient is the other
// primitive with the weight halved or doubled: gradients of gradients work and take the same kernels.
// When few bins of the last dim are kept, that dim is a matrix product instead of an FFT (Note
// [truncated DFT], src/nn/spectral_dft.cpp) with the weight and the norm's scale folded into the
// matrix (no scaling launch on a GPU); the other dims are then matrix products too when their kept
// modes qualify (one batched gemm each, no permuting copies or gathers), else FFTs on the already
// reduced tensor.

Tensor irfft_modes(const Tensor& y, const std::vector<std::int64_t>& modes, const Shape& ogrid, fft::Norm norm,
                   double interior);

/// Kept modes of rfftn(x) over the last d dims, the last dim's bins other than DC and Nyquist times
/// `interior` (Note [truncated transforms]).
Tensor rfft_modes(const Tensor& x, const std::vector<std::int64_t>& modes, fft::Norm norm, double interior) {
  const std::size_t d = modes.size();
  const Shape grid(x.shape().begin() + 2, x.shape().end());
  return ::phasor::detail::apply_op(
      "rfft_modes", {x}, ::phasor::detail::kSaveNone,
      [d, modes, grid, norm, interior](::phasor::detail::TensorList in) {
        if (!detail::use_dft_matrix(grid.back(), modes.back())) {
          Tensor y = gather_modes(fft::rfftn(in[0], std::nullopt, spatial_dims(d), norm), modes, grid);
          if (interior != 1.0)
            y = y * kept_half_weights(modes.back(), grid.back(), d, to_real(y.dtype()), interior, y.device());
          return y;
        }
        // last dim as a matrix product (Note [truncated DFT]), the others unscaled FFTs
        Tensor y = detail::rdft_head(
            in[0], modes.back(),
            ::phasor::fft::detail::norm_scale(norm, ::phasor::detail::shape_numel(grid), true), interior);
        if (d > 1 && middle_as_matrices(modes, grid)) {
          for (std::size_t i = 0; i + 1 < d; ++i)
            y = detail::cdft_along(y, static_cast<std::int64_t>(2 + i), modes[i], grid[i], false);
        } else if (d > 1) {
          Shape dims = spatial_dims(d);
          dims.pop_back();
          y = gather_modes(fft::fftn(y, std::nullopt, dims, fft::Norm::backward), modes, grid);
        }
        return y;
      },
      [modes, grid, norm, interior](const ::phasor::detail::Ctx&, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{irfft_modes(g[0], modes, grid, swapped(norm), interior * 0.5)};
      });
}

/// irfftn over the last d dims, to the grid `ogrid`, of a spectrum whose only non-zero entries
/// are the modes `y`, the last dim's bins other than DC and Nyquist first weighted by `interior` (Note
/// [truncated transforms]).
Tensor irfft_modes(const Tensor& y, const std::vector<std::int64_t>& modes, const Shape& ogrid, fft::Norm norm,
                   double interior) {
  const std::size_t d = modes.size();
  return ::phasor::detail::apply_op(
      "irfft_modes", {y}, ::phasor::detail::kSaveNone,
      [d, modes, ogrid, norm, interior](::phasor::detail::TensorList in) {
        if (!detail::use_dft_matrix(ogrid.back(), modes.back())) {
          Tensor z = in[0];
          if (interior != 1.0)
            z = z * kept_half_weights(modes.back(), ogrid.back(), d, to_real(z.dtype()), interior, z.device());
          return fft::irfftn(scatter_modes(z, modes, ogrid), ogrid, spatial_dims(d), norm);
        }
        Tensor z = in[0];
        if (d > 1 && middle_as_matrices(modes, ogrid)) {
          for (std::size_t i = 0; i + 1 < d; ++i)
            z = detail::cdft_along(z, static_cast<std::int64_t>(2 + i), modes[i], ogrid[i], true);
        } else if (d > 1) {
          Shape dims = spatial_dims(d);
          dims.pop_back();
          z = fft::ifftn(scatter_modes(z, modes, ogrid), std::nullopt, dims, fft::Norm::forward);
        }
        return detail::irdft_head(
            z, ogrid.back(), ::phasor::fft::detail::norm_scale(norm, ::phasor::detail::shape_numel(ogrid), false),
            interior);
      },
      [modes, ogrid, norm, interior](const ::phasor::detail::Ctx&, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{rfft_modes(g[0], modes, swapped(norm), interior * 2.0)};
      });
}

/// spectral_planes on the host: each row of md modes copied, its Hermitian planes recomputed.
template <class R>
void planes_host(const R* y, const R* bias, R* out, std::int64_t rows, const detail::PlaneGeo& g) {
  const auto row_bytes = static_cast<std::size_t>(g.md) * 2 * sizeof(R);
  ::phasor::optim::detail::parallel_for(rows, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      std::memcpy(out + 2 * r * g.md, y + 2 * r * g.md, row_bytes);
      for (std::int64_t j : {std::int64_t{0}, g.nyquist}) {
        if (j < 0) continue;
        const std::int64_t at = 2 * (r * g.md + j);
        detail::plane_element(y, bias, r, j, g, out[at], out[at + 1]);
      }
    }
  });
}

Tensor spectral_bias_grad(const Tensor& gy, const detail::PlaneGeo& geo);

/// The mode tensor y (B, O, 2m_1, ..., m_d) with its DC (and kept Nyquist) planes made Hermitian and the
/// bias's DC coefficient added (Note [spectral planes]); bias may be undefined.
Tensor spectral_planes(const Tensor& y, const Tensor& bias, const detail::PlaneGeo& g) {
  std::vector<Tensor> in{y};
  if (bias.defined()) in.push_back(bias);
  return ::phasor::detail::apply_op(
      "spectral_planes", in, ::phasor::detail::kSaveNone,
      [g](::phasor::detail::TensorList t) {
        const Tensor yc = t[0].contiguous();
        const Tensor bc = t.size() > 1 ? t[1].to(to_real(yc.dtype())).contiguous() : Tensor();
        if (yc.device().is_cuda()) return ::phasor::cuda::detail::spectral_planes(yc, bc, g);
        Tensor out = ::phasor::detail::make_tensor(yc.shape(), yc.dtype(), yc.device());
        const std::int64_t rows = yc.numel() / g.md;
        ::phasor::optim::detail::visit_real(yc.dtype(), [&](auto tag) {
          using R = decltype(tag);
          planes_host(static_cast<const R*>(yc.data_ptr()), bc.defined() ? static_cast<const R*>(bc.data_ptr()) : nullptr,
                      static_cast<R*>(out.data_ptr()), rows, g);
        });
        return out;
      },
      [g, has_bias = bias.defined()](const ::phasor::detail::Ctx& c, const std::vector<Tensor>& gr) {
        // self-adjoint without the bias; the bias's gradient is scale * sum_b Re g at the origin
        std::vector<Tensor> out{spectral_planes(gr[0], Tensor(), g)};
        if (has_bias && c.needs_grad(1)) out.push_back(spectral_bias_grad(gr[0], g));
        return out;
      });
}

/// The bias's gradient scale * sum_b Re g[b, o, origin] from the gradient g of spectral_planes' output
/// (Note [spectral planes]); its own gradient is spectral_planes of zeros with that bias.
Tensor spectral_bias_grad(const Tensor& gy, const detail::PlaneGeo& geo) {
  return ::phasor::detail::apply_op(
      "spectral_bias_grad", {gy}, ::phasor::detail::kSaveNone,
      [geo](::phasor::detail::TensorList t) {
        const Tensor gc = t[0].contiguous();
        if (gc.device().is_cuda()) return ::phasor::cuda::detail::spectral_bias_grad(gc, geo);
        Tensor out = ::phasor::detail::make_tensor({geo.channels}, to_real(gc.dtype()), gc.device());
        ::phasor::optim::detail::visit_real(gc.dtype(), [&](auto tag) {
          using R = decltype(tag);
          const R* g = static_cast<const R*>(gc.data_ptr());
          R* o = static_cast<R*>(out.data_ptr());
          for (std::int64_t k = 0; k < geo.channels; ++k) o[k] = detail::plane_bias_grad(g, k, gc.size(0), geo);
        });
        return out;
      },
      [geo](const ::phasor::detail::Ctx& c, const std::vector<Tensor>& gr) {
        const Tensor z = zeros(c.input_shape(0), to_complex(gr[0].dtype()), gr[0].device());
        return std::vector<Tensor>{spectral_planes(z, gr[0], geo)};
      });
}

}  // namespace

namespace functional {

Tensor spectral_conv(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<std::int64_t>& modes,
                     const std::optional<Shape>& out_shape, fft::Norm norm, const char* op) {
  const std::size_t d = modes.size();
  if (d < 1 || d > 3) throw Error(op, "expected modes for 1 to 3 spatial dims, got " + shape_str(modes));
  for (auto m : modes)
    if (m < 1) throw Error(op, "modes must be >= 1, got " + shape_str(modes));
  if (!x.defined() || !weight.defined()) throw Error(op, "got an undefined input or weight");
  if (!weight.is_complex() || weight.dim() != static_cast<std::int64_t>(d) + 2 ||
      weight.shape() != weight_shape(weight.size(0), weight.size(1), modes))
    throw Error(op, "expected a complex weight of shape " + shape_str(weight_shape(weight.dim() >= 1 ? weight.size(0) : 0, weight.dim() >= 2 ? weight.size(1) : 0, modes)) +
                        " (in, out, 2m_1, ..., m_d) for modes " + shape_str(modes) + ", got " +
                        dtype_name(weight.dtype()) + " " + shape_str(weight.shape()));
  const std::int64_t in = weight.size(0), out = weight.size(1);
  if (x.dim() != static_cast<std::int64_t>(d) + 2)
    throw Error(op, "expected input (batch, " + std::to_string(in) + ", " + std::to_string(d) +
                        " spatial dims) with " + std::to_string(d + 2) + " dims, got shape " + shape_str(x.shape()));
  if (x.size(1) != in)
    throw Error(op, "expected " + std::to_string(in) + " input channels, got input of shape " + shape_str(x.shape()));
  if (!x.is_floating_point())
    throw Error(op, std::string("expected a real floating input, got ") + dtype_name(x.dtype()));
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out))
    throw Error(op, "expected a bias of shape (" + std::to_string(out) + ",), got " + shape_str(bias.shape()));
  const Shape grid(x.shape().begin() + 2, x.shape().end());
  const Shape ogrid = out_shape ? *out_shape : grid;
  if (ogrid.size() != d)
    throw Error(op, "out_shape " + shape_str(ogrid) + " must have one size per spatial dim (" + std::to_string(d) + ")");
  for (auto n : ogrid)
    if (n < 1) throw Error(op, "out_shape " + shape_str(ogrid) + " must have sizes >= 1");
  check_modes_fit(modes, grid, "the input's", op);
  if (out_shape) check_modes_fit(modes, ogrid, "the output's", op);

  const std::int64_t md = modes.back();

  // kept modes of the input spectrum: (B, in, 2m_1, ..., m_d)
  Tensor xm = rfft_modes(x, modes, norm, 1.0);

  // mix, then make the DC (and kept Nyquist) planes Hermitian and add the bias's DC coefficient (a
  // constant per channel: an update of the small mode tensor instead of a pass over the output)
  const Tensor y = spectral_mix(xm, weight);
  const std::int64_t nl = ogrid.back();
  detail::PlaneGeo g;
  g.nd = static_cast<int>(d) - 1;
  for (std::size_t i = 0; i + 1 < d; ++i) {
    g.size[i] = 2 * modes[i];
    g.masked[i] = 2 * modes[i] < ogrid[i];
  }
  g.md = md;
  g.nyquist = nl % 2 == 0 && md - 1 == nl / 2 && md > 1 ? md - 1 : -1;
  g.channels = out;
  const double n_out = static_cast<double>(::phasor::detail::shape_numel(ogrid));
  g.bias_scale = norm == fft::Norm::forward ? 1.0 : norm == fft::Norm::backward ? n_out : std::sqrt(n_out);
  const Tensor z = spectral_planes(y, bias, g);

  // zero spectrum of the output grid around the modes, inverse transform
  return irfft_modes(z, modes, ogrid, norm, 1.0);
}

}  // namespace functional

SpectralConv::SpectralConv(const SpectralConvOptions& o) : Module("SpectralConv"), opt_(o) {
  const char* op = "SpectralConv";
  if (o.in_channels_ < 1 || o.out_channels_ < 1)
    throw Error(op, "in_channels and out_channels must be >= 1, got " + std::to_string(o.in_channels_) + " and " +
                        std::to_string(o.out_channels_));
  if (o.modes_.empty() || o.modes_.size() > 3)
    throw Error(op, "expected modes for 1 to 3 spatial dims, got " + shape_str(o.modes_));
  for (auto m : o.modes_)
    if (m < 1) throw Error(op, "modes must be >= 1, got " + shape_str(o.modes_));
  if (!is_floating(o.dtype_))
    throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(o.dtype_));
  const double scale = 1.0 / static_cast<double>(o.in_channels_ * o.out_channels_);
  Tensor w = rand(weight_shape(o.in_channels_, o.out_channels_, o.modes_), to_complex(o.dtype_));
  {
    NoGradGuard ng;
    w.mul_(Scalar(scale));
  }
  weight = register_parameter("weight", w);
  if (o.bias_) bias = register_parameter("bias", zeros({o.out_channels_}, o.dtype_));
}

Tensor SpectralConv::forward(const Tensor& x) {
  return functional::spectral_conv(x, weight, bias, opt_.modes_, std::nullopt, opt_.norm_, "SpectralConv");
}

Tensor SpectralConv::forward(const Tensor& x, const Shape& out_shape) {
  return functional::spectral_conv(x, weight, bias, opt_.modes_, out_shape, opt_.norm_, "SpectralConv");
}

std::string SpectralConv::extra_repr() const {
  const char* nn = opt_.norm_ == fft::Norm::forward ? "forward" : opt_.norm_ == fft::Norm::ortho ? "ortho" : "backward";
  return "in_channels=" + std::to_string(opt_.in_channels_) + ", out_channels=" + std::to_string(opt_.out_channels_) +
         ", modes=" + shape_str(opt_.modes_) + ", norm=" + nn + ", bias=" + (opt_.bias_ ? "true" : "false");
}

}  // namespace phasor::nn
