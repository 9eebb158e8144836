// phasor/creation.hpp - tensors made from sizes, values, ranges and host data.
#pragma once
#include <complex>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

/// Uninitialized tensor of `shape`.
Tensor empty(const Shape& shape, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Tensor of zeros.
Tensor zeros(const Shape& shape, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Tensor of ones.
Tensor ones(const Shape& shape, Dtype dtype = default_dtype(), Device device = Device::cpu());
/// Tensor filled with `value`; the dtype defaults to the value's (int64, default float, complex64).
Tensor full(const Shape& shape, const Scalar& value, std::optional<Dtype> dtype = std::nullopt,
            Device device = Device::cpu());
/// Uninitialized tensor shaped like `t` (same dtype/device unless given).
Tensor empty_like(const Tensor& t, std::optional<Dtype> dtype = std::nullopt);
/// Zeros shaped like `t`.
Tensor zeros_like(const Tensor& t, std::optional<Dtype> dtype = std::nullopt);
/// Ones shaped like `t`.
Tensor ones_like(const Tensor& t, std::optional<Dtype> dtype = std::nullopt);
/// `value` everywhere, shaped like `t`.
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<Dtype> dtype = std::nullopt);
/// 0-d tensor holding `value` (dtype from the value unless given).
Tensor scalar_tensor(const Scalar& value, std::optional<Dtype> dtype = std::nullopt, Device device = Device::cpu());
/// Values start, start+step, ... < end; int64 when all arguments are integers, else the default dtype.
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, std::optional<Dtype> dtype = std::nullopt,
              Device device = Device::cpu());
/// Values 0, 1, ..., end-1.
Tensor arange(const Scalar& end, std::optional<Dtype> dtype = std::nullopt, Device device = Device::cpu());
/// `steps` evenly spaced values from start to end inclusive.
Tensor linspace(const Scalar& start, const Scalar& end, std::int64_t steps, Dtype dtype = default_dtype(),
                Device device = Device::cpu());
/// `steps` numbers base^e for e evenly spaced from start to end (torch.logspace); computed in double.
Tensor logspace(const Scalar& start, const Scalar& end, std::int64_t steps, double base = 10.0,
                Dtype dtype = default_dtype(), Device device = Device::cpu());
/// int64 (2, count): the row and column indices of the lower triangle (diagonal `offset` and below) of a
/// rows x cols matrix, row by row (torch.tril_indices).
Tensor tril_indices(std::int64_t rows, std::int64_t cols, std::int64_t offset = 0, Device device = Device::cpu());
/// The indices of the upper triangle (diagonal `offset` and above), as tril_indices.
Tensor triu_indices(std::int64_t rows, std::int64_t cols, std::int64_t offset = 0, Device device = Device::cpu());
/// n x m identity (m defaults to n).
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, Dtype dtype = default_dtype(),
           Device device = Device::cpu());
/// Copies `count` elements of `dtype` from host memory into a new tensor of `shape`.
Tensor from_data(const void* data, std::int64_t count, Dtype dtype, const Shape& shape, Device device = Device::cpu());

/// Copies a std::vector into a new tensor (1-D unless `shape` is given; sizes must match).
template <class T>
Tensor from_vector(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt, Device device = Device::cpu()) {
  const Shape s = shape ? *shape : Shape{static_cast<std::int64_t>(values.size())};
  const auto n = static_cast<std::int64_t>(values.size());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<unsigned char> bytes(values.begin(), values.end());
    return from_data(bytes.data(), n, Dtype::Bool, s, device);
  } else if constexpr (std::is_integral_v<T>) {
    std::vector<std::int64_t> v(values.begin(), values.end());
    return from_data(v.data(), n, Dtype::Int64, s, device);
  } else {
    return from_data(values.data(), n, detail::dtype_of<T>::value, s, device);
  }
}

/// Copies a tensor's elements (converted to T) into a std::vector in row-major order.
template <class T>
std::vector<T> to_vector(const Tensor& t);

}  // namespace phasor
