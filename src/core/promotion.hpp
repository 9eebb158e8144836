// src/core/promotion.hpp - PyTorch's result_type for tensors and C++ scalars.
#pragma once
#include "core/tensor_impl.hpp"
#include "core/tensor_list.hpp"

namespace phasor::detail {

/// Category rank: bool 0, integer 1, floating 2, complex 3.
inline int category(Dtype t) {
  return t == Dtype::Bool ? 0 : t == Dtype::Int64 ? 1 : is_floating(t) ? 2 : 3;
}
/// Result dtype of an op between tensors: 0-d tensors only raise the category (PyTorch rules).
Dtype result_type(TensorList ts);
/// Result dtype of tensor (op) scalar: the scalar never widens within the tensor's category.
Dtype result_type(const Tensor& t, const Scalar& s);
/// Result dtype of (a tensor of dtype t) op scalar.
Dtype result_type(Dtype t, const Scalar& s);
/// A 0-d tensor holding `s` as `dtype` (a "wrapped number") on `device`, or on the host CPU for a CUDA
/// device (a host scalar: Note [host scalars] in core/tensor_impl.hpp).
Tensor wrap_scalar(const Scalar& s, Dtype dtype, Device device);

}  // namespace phasor::detail
