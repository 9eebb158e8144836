// src/fft/primitives.hpp - the three differentiable FFT primitives every public transform
// lowers to (c2c, r2c, c2r), plus the zero-pad/crop and roll helpers of the front end.
#pragma once
#include <cstdint>
#include <vector>

#include "fft/plan_cache.hpp"
#include "core/small_vec.hpp"
#include "phasor/fft.hpp"
#include "phasor/tensor.hpp"

namespace phasor::fft::detail {

using ::phasor::detail::SmallVec;
/// Dims or lengths of a transform (inline up to 8 entries).
using DimList = SmallVec<std::int64_t, 8>;

/// A tensor argument held without copying the caller's handle, or a replacement owned here
/// (saves the atomic reference-count traffic of handle copies on the hot path).
class ArgRef {
 public:
  explicit ArgRef(const Tensor& t) : p_(&t) {}
  ArgRef(const ArgRef&) = delete;
  ArgRef& operator=(const ArgRef&) = delete;
  /// Replaces the argument with `t` (owned here).
  void replace(Tensor t) {
    own_ = std::move(t);
    p_ = &own_;
  }
  /// The current argument.
  const Tensor& get() const { return *p_; }
  /// True once replaced, i.e. the argument is a tensor made here rather than the caller's.
  bool owned() const { return p_ == &own_; }

 private:
  const Tensor* p_;
  Tensor own_;
};

/// Scale a transform in the given direction applies under `norm`, for `n` points in total.
double norm_scale(Norm norm, std::int64_t n, bool forward);
/// The norm whose scale in the opposite direction equals `norm`'s (backward <-> forward).
Norm swap_norm(Norm norm);

/// Complex-to-complex DFT over `dims` (wrapped, distinct, non-empty sizes); `x` complex.
Tensor c2c(const Tensor& x, const DimList& dims, bool forward, Norm norm);
/// Forward real-to-complex DFT over `dims`; the last of `dims` keeps n/2+1 bins. `x` real.
Tensor r2c(const Tensor& x, const DimList& dims, Norm norm);
/// Backward complex-to-real DFT over `dims`; `x` complex with size last_n/2+1 along the last
/// of `dims`, whose output length is `last_n`. Imaginary parts of the DC (and, for even
/// last_n, Nyquist) bins of the last dim are ignored, as by FFTW. `x` is never modified: a
/// multi-dimensional c2r (which FFTW runs destructively) works on a copy unless `x_is_scratch`
/// says the caller made `x` for this call alone (Note [c2r scratch input]).
Tensor c2r(const Tensor& x, const DimList& dims, Norm norm, std::int64_t last_n, bool x_is_scratch = false);

/// The public 1-D fft/ifft (c2c), rfft (r2c) or irfft (c2r) of `x` when the call can skip the
/// general lowering (Note [fft fast path]); an undefined tensor when it cannot, and then the
/// caller takes the general path (which also reports any bad argument).
Tensor fast_1d(Kind kind, const Tensor& x, const Length& n, std::int64_t dim, Norm norm, bool forward);

/// Weights along the halved dim `dim` of an `ndim`-dim tensor whose full length is `n`:
/// `interior` on the bins 1..ceil(n/2)-1, 1 on the DC and (n even) Nyquist bins, on `device`: the
/// factors a real transform's backward applies to a half spectrum. Made once per device off the host CPU
/// (Note [device constants]): never modify the result.
Tensor half_weights(std::int64_t n, std::int64_t dim, std::int64_t ndim, Dtype real_dtype, double interior,
                    Device device);

/// Crops (a view) or zero-pads (a copy) `x` to `sizes` along `dims`; differentiable. `padded`
/// (optional) tells whether the result is a fresh copy.
Tensor resize(const Tensor& x, const DimList& dims, const DimList& sizes, bool* padded = nullptr);

}  // namespace phasor::fft::detail
