// phasor/nn/spectral.hpp - spectral convolution (the Fourier layer of the FNO) for 1, 2 and 3
// spatial dims, and its mode-mixing primitive.
//
// Note [SpectralConv convention]
// x (B, in, n_1, ..., n_d) real -> X = rfftn(x) over the last d dims (the last one halved) ->
// keep the lowest modes -> multiply channel-wise by complex weights per mode -> write them into
// a zero spectrum of the output grid -> irfftn to the output spatial shape (default: the input's).
// `modes` = (m_1, ..., m_d), the original FNO's convention (Li et al. 2021):
//   * the last (rfft) dim keeps the frequencies 0 .. m_d-1            (needs m_d <= n_d/2 + 1),
//   * every other dim keeps 0 .. m_i-1 and -m_i .. -1 (2 m_i indices)  (needs 2 m_i <= n_i),
// for the input grid and for the output grid alike. The weight is (in, out, 2m_1, ..., 2m_{d-1},
// m_d), its non-last mode dims ordered [0, 1, ..., m_i-1, -m_i, ..., -1].
// Hermitian care: the mixed spectrum's planes at last-dim frequency 0 (and at the output's
// Nyquist frequency n_d/2 when it is kept) must be Hermitian over the other dims for the inverse
// real transform to be well defined. There the mixed modes are replaced by their Hermitian part
// over the kept set, (Y[k] + conj(Y[-k]))/2; a kept frequency whose negative is not kept (-m_i
// with 2 m_i < n_i of the output grid) has no partner and is set to 0 (with 2 m_i == n_i it is
// that dim's Nyquist frequency, its own partner). The spectrum fed to irfftn is then exactly
// Hermitian, so the output does not depend on how an FFT library treats the imaginary parts of
// those bins. In 1-D this is: the imaginary part of the DC (and kept Nyquist) mode is dropped.
// Norm: fft::Norm::forward by default (forward transform scaled 1/prod(n), inverse unscaled), so
// the operator is resolution invariant: evaluating at a finer output grid samples the same
// trigonometric polynomial. (With `backward`, which the original FNO used, the output of a
// super-resolution call scales by prod(n_in)/prod(n_out); at equal grids both agree.)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phasor/dtype.hpp"
#include "phasor/fft.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

namespace functional {

/// Per-mode complex channel mixing: out[b,o,*k] = sum_i x[b,i,*k] * w[i,o,*k] for x (B, I, *M)
/// and w (I, O, *M), complex (real operands are promoted); differentiable twice (its gradients
/// are spectral_mix calls). Runs one complex gemm per mode; the result is laid out mode-major
/// (a permuted view of a (*M, B, O) buffer).
Tensor spectral_mix(const Tensor& x, const Tensor& w);

/// How spectral convolutions compute their truncated transforms: a dim keeping few of its modes can be a
/// product with the matrix of the kept DFT rows instead of an FFT followed by a cut (and a zero fill
/// followed by an inverse FFT). `automatic` picks per dim by a rule measured on CPUs (up to 48 kept bins;
/// 64 from n = 1024; n <= 65536); `matrix` takes the product wherever the matrix stays under 32 MiB
/// (2m n <= 2^23); `fft` never does. Every choice computes the same operator (up to rounding).
enum class TruncatedTransform { automatic, matrix, fft };
/// Sets how every spectral convolution computes its truncated transforms from now on (all threads, also
/// the backward of graphs recorded before); returns the previous choice.
TruncatedTransform set_truncated_transform(TruncatedTransform t);
/// The current choice (default `automatic`).
TruncatedTransform truncated_transform();

/// Spectral convolution (Note [SpectralConv convention]): x (B, in, *spatial) real, weight
/// (in, out, 2m_1, ..., m_d) complex, bias (out) or undefined; `out_shape` (d sizes) defaults to
/// the input's spatial shape. `op` names the caller in error messages.
Tensor spectral_conv(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<std::int64_t>& modes,
                     const std::optional<Shape>& out_shape = std::nullopt, fft::Norm norm = fft::Norm::forward,
                     const char* op = "spectral_conv");

}  // namespace functional

/// Options of SpectralConv (chained setters).
struct SpectralConvOptions {
  /// in/out channels and the modes per spatial dim (1 to 3 entries).
  SpectralConvOptions(std::int64_t in_channels, std::int64_t out_channels, std::vector<std::int64_t> modes)
      : in_channels_(in_channels), out_channels_(out_channels), modes_(std::move(modes)) {}
  std::int64_t in_channels_;                 ///< input channels
  std::int64_t out_channels_;                ///< output channels
  std::vector<std::int64_t> modes_;          ///< kept modes per spatial dim (Note [SpectralConv convention])
  fft::Norm norm_ = fft::Norm::forward;      ///< FFT normalization (forward: resolution invariant)
  bool bias_ = true;                         ///< add a learned per-channel bias (initialized to 0)
  Dtype dtype_ = Dtype::Float32;             ///< real dtype of the layer (weights use its complex dtype)
  /// Sets the FFT normalization.
  SpectralConvOptions& norm(fft::Norm v) { norm_ = v; return *this; }
  /// Turns the bias on or off.
  SpectralConvOptions& bias(bool v) { bias_ = v; return *this; }
  /// Sets the real dtype (float32 or float64).
  SpectralConvOptions& dtype(Dtype v) { dtype_ = v; return *this; }
};

/// Fourier layer: rfftn, per-mode complex channel mixing of the lowest modes, irfftn
/// (Note [SpectralConv convention]). Weight init as the original FNO: (1/(in*out)) * U[0,1) for
/// the real and imaginary parts.
class SpectralConv : public Module {
 public:
  /// Builds the layer from options.
  explicit SpectralConv(const SpectralConvOptions& options);
  /// Output on the input's spatial grid.
  Tensor forward(const Tensor& x) override;
  /// Output on the grid `out_shape` (one size per spatial dim; super- or sub-resolution).
  Tensor forward(const Tensor& x, const Shape& out_shape);
  /// "in_channels=.., out_channels=.., modes=(..), norm=.., bias=.."
  std::string extra_repr() const override;
  /// The options the layer was built with.
  const SpectralConvOptions& options() const { return opt_; }

  Tensor weight;  ///< (in, out, 2m_1, ..., 2m_{d-1}, m_d) complex
  Tensor bias;    ///< (out) real, or undefined

 private:
  SpectralConvOptions opt_;
};

}  // namespace phasor::nn
