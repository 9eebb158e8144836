// src/core/creation.cpp - empty/zeros/ones/full, *_like, scalar tensors, host data, ranges, eye.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/elementwise.hpp"
#include "jit/tracer.hpp"
#include "core/promotion.hpp"
#include "cuda/backend.hpp"
#include "core/ramp.hpp"
#include "cuda/ops.hpp"
#include "jit/tracer.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {
Dtype dtype_for_value(const Scalar& v) {
  if (v.is_complex()) return to_complex(default_dtype());
  if (v.is_floating()) return default_dtype();
  return v.kind() == Scalar::Kind::Bool ? Dtype::Bool : Dtype::Int64;
}
}  // namespace

Tensor empty(const Shape& shape, Dtype dtype, Device device) {
  return detail::make_tensor(shape, dtype, device, "empty");  // checks the shape (check_shape)
}
Tensor full(const Shape& shape, const Scalar& value, std::optional<Dtype> dtype, Device device) {
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  const Dtype dt = dtype.value_or(dtype_for_value(value));
  detail::check_shape(shape, "full", itemsize(dt));
  detail::check_scalar_fits(value, dt, "full");
  Tensor t = detail::make_tensor(shape, dt, device);
  NoGradGuard ng;
  t.fill_(value);
  return t;
}
Tensor zeros(const Shape& shape, Dtype dtype, Device device) {
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  Tensor t = detail::make_tensor(shape, dtype, device, "zeros");
  if (device.is_cpu()) std::memset(t.data_ptr(), 0, t.nbytes());
  else cuda::detail::fill_zero(t.data_ptr(), device, t.nbytes());
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
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  detail::check_shape(shape, "from_data", itemsize(dtype));
  if (detail::shape_numel(shape) != count)
    throw Error("from_vector", std::to_string(count) + " values cannot fill shape " + detail::shape_str(shape) +
                                   " (" + std::to_string(detail::shape_numel(shape)) + " elements)");
  Tensor t = detail::make_tensor(shape, dtype, device);
  if (count == 0) return t;
  if (device.is_cpu()) std::memcpy(t.data_ptr(), data, static_cast<std::size_t>(count) * itemsize(dtype));
  else cuda::detail::copy_bytes(t.data_ptr(), device, data, Device::cpu(), static_cast<std::size_t>(count) * itemsize(dtype));
  return t;
}

template <class T>
std::vector<T> to_vector(const Tensor& t) {
  if (t.defined() && !t.device().is_cpu()) return to_vector<T>(t.to(Device::cpu()));
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
  if (t.defined() && !t.device().is_cpu()) return to_vector<bool>(t.to(Device::cpu()));
  Tensor c = t.to(Dtype::Bool).contiguous();
  const bool* p = static_cast<const bool*>(c.data_ptr());
  return std::vector<bool>(p, p + c.numel());
}

// ---- ranges and eye ------------------------------------------------------------------------------------
namespace detail {
Tensor ramp_tensor(const char* op, const Ramp& r, Dtype dtype, Device device) {
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  Tensor t = make_tensor({r.n}, dtype, device);
  if (device.is_cuda()) {
    cuda::detail::ramp(op, t, r);
    return t;
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(t.data_ptr());
      for (std::int64_t i = 0; i < r.n; ++i) p[i] = r.element<T, std::complex<double>>(i);
    }
  });
  return t;
}
}  // namespace detail

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<Dtype> dtype, Device device) {
  if (start.is_complex() || end.is_complex() || step.is_complex())
    throw Error("arange", "complex start, end or step is not supported");
  const bool all_int = start.is_integral() && end.is_integral() && step.is_integral();
  const Dtype dt = dtype.value_or(all_int ? Dtype::Int64 : default_dtype());
  if (dt == Dtype::Bool || is_complex(dt))
    throw Error("arange", std::string("dtype ") + dtype_name(dt) + " is not supported (use int64 or a floating dtype)");
  const double s0 = start.to_double(), s1 = end.to_double(), st = step.to_double();
  if (!std::isfinite(s0) || !std::isfinite(s1) || !std::isfinite(st))
    throw Error("arange", "start, end and step must be finite, got " + std::to_string(s0) + ", " + std::to_string(s1) +
                              ", " + std::to_string(st));
  if (st == 0) throw Error("arange", "step must be nonzero");
  if ((st > 0 && s1 < s0) || (st < 0 && s1 > s0))
    throw Error("arange", "end " + std::to_string(s1) + " cannot be reached from start " + std::to_string(s0) +
                              " with step " + std::to_string(st) + " (wrong sign)");
  std::int64_t n;
  const auto too_many = [&] {
    auto str = [all_int](const Scalar& v) { return all_int ? std::to_string(v.to_int()) : std::to_string(v.to_double()); };
    return Error("arange", "the range from " + str(start) + " to " + str(end) + " with step " + str(step) +
                               " has more elements than an int64 can count");
  };
  if (all_int) {  // exact integer count ceil(|end - start| / |step|), in unsigned arithmetic (no overflow)
    const auto a = static_cast<std::uint64_t>(start.to_int()), b = static_cast<std::uint64_t>(end.to_int());
    const std::int64_t c = step.to_int();
    const std::uint64_t span = c > 0 ? b - a : a - b;
    const std::uint64_t mag = c > 0 ? static_cast<std::uint64_t>(c) : 0 - static_cast<std::uint64_t>(c);
    const std::uint64_t count = span / mag + (span % mag != 0 ? 1 : 0);
    if (count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) throw too_many();
    n = static_cast<std::int64_t>(count);
  } else {
    const double count = std::ceil((s1 - s0) / st);
    if (!(count < 0x1p63)) throw too_many();  // also infinite (s1 - s0 overflowing a double)
    n = static_cast<std::int64_t>(count);
  }
  detail::check_shape({n}, "arange", itemsize(dt));
  detail::Ramp r;
  r.n = r.half = n;
  r.lo_re = s0, r.step_re = st;
  r.exact = all_int && dt == Dtype::Int64, r.lo_int = start.to_int(), r.step_int = step.to_int();
  return detail::ramp_tensor("arange", r, dt, device);
}

Tensor arange(const Scalar& end, std::optional<Dtype> dtype, Device device) {
  return arange(Scalar(std::int64_t{0}), end, Scalar(std::int64_t{1}), dtype, device);
}

Tensor linspace(const Scalar& start, const Scalar& end, std::int64_t steps, Dtype dtype, Device device) {
  if (steps < 0) throw Error("linspace", "number of steps must be non-negative, got " + std::to_string(steps));
  if (dtype == Dtype::Bool) throw Error("linspace", "bool dtype is not supported");
  detail::check_shape({steps}, "linspace", itemsize(dtype));
  if ((start.is_complex() || end.is_complex()) && !is_complex(dtype))
    throw Error("linspace", std::string("complex start or end needs a complex dtype, got ") + dtype_name(dtype));
  // symmetric evaluation: the first half counts up from start, the second down from end, so both end
  // points are exact (one element: start itself, as hi - 0)
  const std::complex<double> a = start.to_complex(), b = end.to_complex();
  const std::complex<double> h = steps > 1 ? (b - a) / static_cast<double>(steps - 1) : std::complex<double>();
  const std::complex<double> hi = steps == 1 ? a : b;
  detail::Ramp r;
  r.n = steps;
  r.half = steps == 1 ? 0 : steps / 2;
  r.lo_re = a.real(), r.lo_im = a.imag(), r.hi_re = hi.real(), r.hi_im = hi.imag(), r.step_re = h.real(), r.step_im = h.imag();
  return detail::ramp_tensor("linspace", r, dtype, device);
}

Tensor logspace(const Scalar& start, const Scalar& end, std::int64_t steps, double base, Dtype dtype, Device device) {
  if (steps < 0) throw Error("logspace", "number of steps must be non-negative, got " + std::to_string(steps));
  if (dtype == Dtype::Bool) throw Error("logspace", "bool dtype is not supported");
  // the exponents in double (complex ones complex), base^e, then dtype
  const Dtype work = is_complex(dtype) || start.is_complex() || end.is_complex() ? Dtype::Complex128 : Dtype::Float64;
  return pow(Scalar(base), linspace(start, end, steps, work, device)).to(dtype);
}

namespace {
/// The (2, count) row and column indices of the lower (or upper) triangle of a rows x cols matrix.
Tensor triangle_indices(const char* op, std::int64_t rows, std::int64_t cols, std::int64_t offset, bool lower, Device device) {
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  if (rows < 0 || cols < 0)
    throw Error(op, "sizes must be non-negative, got rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
  const Tensor m = ones({rows, cols}, Dtype::Float32, device);
  return nonzero(lower ? tril(m, offset) : triu(m, offset)).t().contiguous();
}
}  // namespace

Tensor tril_indices(std::int64_t rows, std::int64_t cols, std::int64_t offset, Device device) {
  return triangle_indices("tril_indices", rows, cols, offset, true, device);
}
Tensor triu_indices(std::int64_t rows, std::int64_t cols, std::int64_t offset, Device device) {
  return triangle_indices("triu_indices", rows, cols, offset, false, device);
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, Dtype dtype, Device device) {
  detail::TraceSuspend untraced;  // a constant of a trace (Note [static graphs]): its fills are not steps
  const std::int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0)
    throw Error("eye", "sizes must be non-negative, got n=" + std::to_string(n) + " m=" + std::to_string(cols));
  detail::check_shape({n, cols}, "eye", itemsize(dtype));
  Tensor t = zeros({n, cols}, dtype, device);
  // the diagonal, a strided view of the flat tensor, filled where t lives (on a GPU: no copy from the host)
  const std::int64_t k = std::min(n, cols);
  if (k > 0) t.reshape({n * cols}).slice(0, 0, k * (cols + 1), cols + 1).fill_(1);
  return t;
}

}  // namespace phasor
