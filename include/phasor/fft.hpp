// phasor/fft.hpp - discrete Fourier transforms (torch.fft's vocabulary, argument order and
// defaults), differentiable, on the CPU through FFTW; plan cache, planner effort and wisdom.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/tensor.hpp"

namespace phasor::fft {

/// Normalization: backward (forward unscaled, inverse 1/n), ortho (both 1/sqrt(n)), forward (forward 1/n).
enum class Norm { backward, ortho, forward };

/// Optional transform length of a 1-D transform (crop or zero-pad the input to it).
using Length = std::optional<std::int64_t>;
/// Optional list of transform lengths or dims of an n-D transform.
using Sizes = std::optional<std::vector<std::int64_t>>;

// ---- complex-to-complex ---------------------------------------------------------------------------
/// 1-D DFT along `dim` (real input is promoted to complex; `n` crops or zero-pads).
Tensor fft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// 1-D inverse DFT along `dim`.
Tensor ifft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// 2-D DFT over `dims` (default the last two).
Tensor fft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
            Norm norm = Norm::backward);
/// 2-D inverse DFT over `dims`.
Tensor ifft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
             Norm norm = Norm::backward);
/// n-D DFT over `dims` (default: the last len(s) dims when `s` is given, else all dims).
Tensor fftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
            Norm norm = Norm::backward);
/// n-D inverse DFT over `dims`.
Tensor ifftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
             Norm norm = Norm::backward);

// ---- real-to-complex (one-sided spectra) and back -------------------------------------------------
/// 1-D DFT of a real signal: the n/2+1 non-negative frequencies.
Tensor rfft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// Inverse of rfft: real signal of length `n` (default 2*(m-1); odd lengths are exact when given).
Tensor irfft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// 2-D rfft over `dims` (the last one is halved).
Tensor rfft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
             Norm norm = Norm::backward);
/// 2-D irfft over `dims` (the last one is the halved one).
Tensor irfft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
              Norm norm = Norm::backward);
/// n-D rfft over `dims` (the last one is halved).
Tensor rfftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
             Norm norm = Norm::backward);
/// n-D irfft over `dims` (the last one is the halved one).
Tensor irfftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
              Norm norm = Norm::backward);

// ---- Hermitian signals (one-sided in time, real in frequency) -------------------------------------
/// 1-D DFT of a Hermitian-symmetric signal given by its first half: a real spectrum of length `n`.
Tensor hfft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// Inverse of hfft: the one-sided inverse DFT of a real signal.
Tensor ihfft(const Tensor& x, Length n = std::nullopt, std::int64_t dim = -1, Norm norm = Norm::backward);
/// 2-D hfft over `dims` (the last one is the halved one).
Tensor hfft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
             Norm norm = Norm::backward);
/// 2-D ihfft over `dims` (the last one is halved).
Tensor ihfft2(const Tensor& x, const Sizes& s = std::nullopt, const std::vector<std::int64_t>& dims = {-2, -1},
              Norm norm = Norm::backward);
/// n-D hfft over `dims` (the last one is the halved one).
Tensor hfftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
             Norm norm = Norm::backward);
/// n-D ihfft over `dims` (the last one is halved).
Tensor ihfftn(const Tensor& x, const Sizes& s = std::nullopt, const Sizes& dims = std::nullopt,
              Norm norm = Norm::backward);

// ---- helpers -------------------------------------------------------------------------------------
/// Sample frequencies of an n-point DFT with spacing `d`: [0, 1, ..., -(n/2), ..., -1] / (d*n).
Tensor fftfreq(std::int64_t n, double d = 1.0, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Non-negative sample frequencies of an n-point rfft: [0, 1, ..., n/2] / (d*n).
Tensor rfftfreq(std::int64_t n, double d = 1.0, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Moves the zero frequency to the center of `dims` (default all dims).
Tensor fftshift(const Tensor& x, const Sizes& dims = std::nullopt);
/// Inverse of fftshift (differs from it for odd lengths).
Tensor ifftshift(const Tensor& x, const Sizes& dims = std::nullopt);

// ---- plans, planner effort and wisdom ------------------------------------------------------------
/// FFTW planner rigor: estimate (default, no measuring) or measure/patient/exhaustive (slower planning, faster plans).
enum class Effort { estimate, measure, patient, exhaustive };
/// Number of plans held by the plan cache (FFTW's, for CPU tensors).
std::size_t plan_cache_size();
/// Number of cuFFT plans cached for `device` (a CUDA device; the CPU's count for Device::cpu()).
std::size_t plan_cache_size(Device device);
/// Most plans the cache holds before evicting the least recently used (default 256; per device).
std::size_t plan_cache_capacity();
/// Sets the cache capacity of every device's cache (0 disables caching); evicts down to it at once.
void set_plan_cache_capacity(std::size_t capacity);
/// Drops every cached plan, on every device.
void clear_plan_cache();
/// Sets the planner effort for plans made from now on (cached plans keep theirs).
void set_planner_effort(Effort effort);
/// Current planner effort.
Effort planner_effort();
/// Writes FFTW's accumulated wisdom (float and double) to `path`; throws phasor::Error on failure.
void export_wisdom(const std::string& path);
/// Reads wisdom written by export_wisdom; throws phasor::Error if the file is missing or corrupt.
void import_wisdom(const std::string& path);
/// Forgets all accumulated wisdom (cached plans stay valid).
void forget_wisdom();

}  // namespace phasor::fft
