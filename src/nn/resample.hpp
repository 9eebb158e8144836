// src/nn/resample.hpp - resample_op: a sparse linear map applied along one dim of a tensor, the primitive of
// interpolate (Note [separable interpolation] in src/nn/sampling.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::nn::detail {

/// A real sparse matrix (out, in) in CSR form: row o holds the taps col[j], val[j] for row_ptr[o] <= j <
/// row_ptr[o + 1], summed in that order.
struct SparseMap {
  std::int64_t in = 0, out = 0;
  std::vector<std::int64_t> row_ptr, col;  // row_ptr has out + 1 entries
  std::vector<double> val;

  /// The transposed map (in, out): each of its rows lists its taps by increasing column (the original row).
  SparseMap transposed() const;
};

/// y[pre, o, post] = sum over row o of `map` of val[j] * x[pre, col[j], post], along `dim` of x (float32,
/// float64, complex64 or complex128; the values cast to x's real type). Differentiable to every order: the
/// gradient is resample_op with the transposed map, computed once on the host (`adjoint`, or built here when
/// null) and shared by every gradient of the result.
Tensor resample_op(const Tensor& x, std::int64_t dim, std::shared_ptr<const SparseMap> map,
                   std::shared_ptr<const SparseMap> adjoint = nullptr);

}  // namespace phasor::nn::detail
