// src/core/creation.cpp - empty/zeros/ones/full, *_like, scalar tensors, host data, ranges, eye.
#include <cmath>
#include <cstring>

#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {
void check_shape(const Shape& shape, const char* op) {
  for (auto s : shape)
    if (s < 0) throw Error(op, "negative size in shape " + detail::shape_str(shape));
}
Dtype dtype_for_value(const Scalar& v) {
  if (v.is_complex()) return to_complex(default_dtype());
  if (v.is_floating()) return default_dtype();
  return v.kind() == Scalar::Kind::Bool ? Dtype::Bool : Dtype::Int64;
}
}  // namespace

Tensor empty(const Shape& shape, Dtype dtype, Device device) {
  check_shape(shape, "empty");
  return detail::make_tensor(shape, dtype, device);
}
Tensor full(const Shape& shape, const Scalar& value, std::optional<Dtype> dtype, Device device) {
  check_shape(shape, "full");
  Tensor t = detail::make_tensor(shape, dtype.value_or(dtype_for_value(value)), device);
  NoGradGuard ng;
  t.fill_(value);
  return t;
}
Tensor zeros(const Shape& shape, Dtype dtype, Device device) {
  check_shape(shape, "zeros");
  Tensor t = detail::make_tensor(shape, dtype, device);
  std::memset(t.data_ptr(), 0, t.nbytes());
  return t;
}
Tensor ones(const Shape& shape, Dtype dtype, Device device) { return full(shape, 1, dtype, device); }
Tensor empty_like(const Tensor& t, std::optional<Dtype> dtype) { return empty(t.shape(), dtype.value_or(t.dtype()), t.device()); }
Tensor zeros_like(const Tensor& t, std::optional<Dtype> dtype) { return zeros(t.shape(), dtype.value_or(t.dtype()), t.device()); }
Tensor ones_like(const Tensor& t, std::optional<Dtype> dtype) { return ones(t.shape(), dtype.value_or(t.dtype()), t.device()); }
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<Dtype> dtype) {
  return full(t.shape(), value, dtype.value_or(t.dtype()), t.device());
}
Tensor scalar_tensor(const Scalar& value, std::optional<Dtype> dtype, Device device) {
  return full({}, value, dtype.value_or(dtype_for_value(value)), device);
}

Tensor from_data(const void* data, std::int64_t count, Dtype dtype, const Shape& shape, Device device) {
  check_shape(shape, "from_data");
  if (detail::shape_numel(shape) != count)
    throw Error("from_vector", std::to_string(count) + " values cannot fill shape " + detail::shape_str(shape) +
                                   " (" + std::to_string(detail::shape_numel(shape)) + " elements)");
  Tensor t = detail::make_tensor(shape, dtype, device);
  if (count) std::memcpy(t.data_ptr(), data, static_cast<std::size_t>(count) * itemsize(dtype));
  return t;
}

template <class T>
std::vector<T> to_vector(const Tensor& t) {
  detail::check_cpu(t, "to_vector");
  Tensor c = t.to(detail::dtype_of<T>::value).contiguous();
  const T* p = static_cast<const T*>(c.data_ptr());
  return std::vector<T>(p, p + c.numel());
}
template std::vector<float> to_vector<float>(const Tensor&);
template std::vector<double> to_vector<double>(const Tensor&);
template std::vector<std::int64_t> to_vector<std::int64_t>(const Tensor&);
template std::vector<std::complex<float>> to_vector<std::complex<float>>(const Tensor&);
template std::vector<std::complex<double>> to_vector<std::complex<double>>(const Tensor&);
template <>
std::vector<bool> to_vector<bool>(const Tensor& t) {
  detail::check_cpu(t, "to_vector");
  Tensor c = t.to(Dtype::Bool).contiguous();
  const bool* p = static_cast<const bool*>(c.data_ptr());
  return std::vector<bool>(p, p + c.numel());
}

}  // namespace phasor
