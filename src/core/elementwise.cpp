// src/core/elementwise.cpp - loop construction (broadcast strides, coalescing), casts and copies.
#include "core/elementwise.hpp"

#include <charconv>
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "autodiff/node.hpp"
#include "cuda/backend.hpp"
#include "cuda/ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* op) {
  std::size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const auto& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::int64_t& o = out[nd - s.size() + i];
      const std::int64_t v = s[i];
      if (v == o || v == 1) continue;
      if (o == 1) {
        o = v;
        continue;
      }
      std::string all;
      for (std::size_t k = 0; k < shapes.size(); ++k) all += (k ? " and " : "") + detail::shape_str(shapes[k]);
      throw Error(op, "shapes " + all + " cannot be broadcast together");
    }
  }
  detail::check_shape(out, op);  // negative sizes; a product overflowing int64
  return out;
}

namespace detail {

namespace {
StridedLoop build_loop(const Tensor* const* ops, int nt, const Shape& shape, bool cpu = true) {
  StridedLoop L;
  L.nt = nt;
  L.numel = shape_numel(shape);
  const std::size_t nd = shape.size();
  if (nd > static_cast<std::size_t>(kMaxLoopDims))
    throw Error("elementwise", "tensors with more than " + std::to_string(kMaxLoopDims) + " dims are not supported, got " +
                                   std::to_string(nd));
  for (int k = 0; k < nt; ++k) {
    // the CPU loop must never see device memory: a kernel that forgot check_cpu still throws here
    if (cpu && !ops[k]->device().is_cpu()) [[unlikely]]
      check_cpu(*ops[k], "elementwise");
    L.base[static_cast<std::size_t>(k)] = static_cast<char*>(ops[k]->data_ptr());
  }
  // walk dims outer to inner: drop size-1 dims, merge dims whose strides chain for every operand
  for (std::size_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    std::array<std::int64_t, kMaxOperands> st{};
    for (int k = 0; k < nt; ++k) {
      const Tensor& t = *ops[k];
      const auto& ts = t.shape();
      const std::size_t off = nd - ts.size();
      st[static_cast<std::size_t>(k)] =
          (d >= off && ts[d - off] != 1) ? t.strides()[d - off] * static_cast<std::int64_t>(t.itemsize()) : 0;
    }
    if (L.nd > 0) {
      auto& ps = L.strides[static_cast<std::size_t>(L.nd - 1)];
      bool merge = true;
      for (int k = 0; k < nt; ++k)
        if (ps[static_cast<std::size_t>(k)] != st[static_cast<std::size_t>(k)] * shape[d]) merge = false;
      if (merge) {
        L.shape[static_cast<std::size_t>(L.nd - 1)] *= shape[d];
        ps = st;
        continue;
      }
    }
    L.shape[static_cast<std::size_t>(L.nd)] = shape[d];
    L.strides[static_cast<std::size_t>(L.nd)] = st;
    ++L.nd;
  }
  if (L.nd == 0) {
    L.shape[0] = 1;
    L.strides[0] = {};
    L.nd = 1;
  }
  return L;
}
}  // namespace

StridedLoop make_loop(std::initializer_list<const Tensor*> ops, const Shape& shape) {
  return build_loop(ops.begin(), static_cast<int>(ops.size()), shape);
}
StridedLoop make_loop(const std::vector<const Tensor*>& ops, const Shape& shape) {
  return build_loop(ops.data(), static_cast<int>(ops.size()), shape);
}
StridedLoop make_device_loop(std::initializer_list<const Tensor*> ops, const Shape& shape) {
  return build_loop(ops.begin(), static_cast<int>(ops.size()), shape, /*cpu=*/false);
}

/// A scalar as the conversion errors show it: the shortest round-trip form, complex as 1+2j.
std::string scalar_text(const Scalar& value) {
  if (value.is_integral()) return std::to_string(value.to_int());
  const auto str = [](double d) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
  };
  const std::complex<double> v = value.to_complex();
  return value.is_complex() ? str(v.real()) + (v.imag() < 0 ? "" : "+") + str(v.imag()) + "j" : str(v.real());
}

namespace {

/// True when the truncation of v lies in [lo, hi] (false for NaN and infinities): a real that an integer
/// type with that range holds. The ends are exact as doubles below 64 bits; for int64, -2^63 <= v < 2^63.
bool fits_integer(double v, std::int64_t lo, std::int64_t hi) {
  const bool above_lo = lo == INT64_MIN ? v >= -0x1p63 : v > static_cast<double>(lo) - 1.0;
  return above_lo && v < (hi == INT64_MAX ? 0x1p63 : static_cast<double>(hi) + 1.0);
}

[[noreturn]] void throw_imaginary_lost(const Scalar& value, const std::string& type, const char* op) {
  throw Error(op, "complex value " + scalar_text(value) + " cannot be converted to " + type +
                      " (its imaginary part would be lost)");
}

[[noreturn]] void throw_overflow(const Scalar& value, const std::string& type, const char* op) {
  throw Error(op, "value " + scalar_text(value) + " cannot be converted to " + type + " without overflow");
}

}  // namespace

void check_scalar_fits(const Scalar& value, Dtype dtype, const char* op) {
  if (dtype == Dtype::Bool || value.is_integral()) return;  // integers fit every non-bool dtype
  const std::complex<double> v = value.to_complex();
  const auto fails = [&](double part) {
    if (dtype == Dtype::Int64) return !fits_integer(part, INT64_MIN, INT64_MAX);  // NaN and infinities too
    if (dtype == Dtype::Float32 || dtype == Dtype::Complex64)
      return std::isfinite(part) && std::abs(part) > static_cast<double>(std::numeric_limits<float>::max());
    return false;
  };
  if (!is_complex(dtype) && v.imag() != 0) throw_imaginary_lost(value, dtype_name(dtype), op);
  if (fails(v.real()) || fails(v.imag())) throw_overflow(value, dtype_name(dtype), op);
}

std::int64_t item_as_integer(const Scalar& s, int bits, bool is_signed) {
  const std::string type = (is_signed ? "int" : "uint") + std::to_string(bits);
  // [lo, hi]: the type's range, clipped to int64's (a Scalar holds no larger integer)
  const std::int64_t lo = is_signed ? (bits >= 64 ? INT64_MIN : -(std::int64_t{1} << (bits - 1))) : 0;
  const std::int64_t hi = bits - is_signed >= 63 ? INT64_MAX : (std::int64_t{1} << (bits - is_signed)) - 1;
  if (s.is_integral()) {
    const std::int64_t v = s.to_int();
    if (v < lo || v > hi) throw_overflow(s, type, "item");
    return v;
  }
  if (s.to_complex().imag() != 0) throw_imaginary_lost(s, type, "item");
  if (!fits_integer(s.to_double(), lo, hi)) throw_overflow(s, type, "item");
  return static_cast<std::int64_t>(s.to_double());
}

}  // namespace detail

std::int64_t Scalar::to_int() const { return is_integral() ? i_ : detail::saturating_int64(re_); }

namespace detail {

void stream_copy(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  auto* d = static_cast<__m128i*>(dst);
  const auto* s = static_cast<const __m128i*>(src);
  for (std::size_t i = 0; i < bytes / 16; ++i) _mm_stream_si128(d + i, _mm_load_si128(s + i));
#else
  std::memcpy(dst, src, bytes);
#endif
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void copy_into(const Tensor& dst, const Tensor& src) {
  if (!dst.device().is_cpu() || !src.device().is_cpu()) {
    // across devices: move src first; then a CUDA copy kernel converts dtypes and broadcasts
    const Tensor s = src.device() == dst.device() ? src : src.to(dst.device());
    if (dst.device().is_cuda()) {
      phasor::cuda::detail::unary("copy_", dst, s, dst.dtype());
      return;
    }
    copy_into(dst, s);
    return;
  }
  visit_dtype(dst.dtype(), [&](auto to) {
    using To = typename decltype(to)::type;
    visit_dtype(src.dtype(), [&](auto from) {
      using From = typename decltype(from)::type;
      map_unary_into<To, From>(dst, src, [](const From& v) { return convert<To>(v); });
    });
  });
}

}  // namespace detail

// ---- copies and conversions (differentiable) ---------------------------------------------------------
Tensor Tensor::to(Dtype dtype) const {
  if (dtype == this->dtype()) return *this;
  return detail::apply_op(
      "to", {*this}, detail::kSaveNone,
      [dtype](detail::TensorList in) {
        Tensor out = detail::make_tensor(in[0].shape(), dtype, in[0].device());
        detail::copy_into(out, in[0]);
        return out;
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
}

Tensor Tensor::to(Device device) const {
  const Device from = this->device();
  if (device == from) return *this;
  cuda::detail::check_device(device, "to");
  cuda::detail::check_device(from, "to");
  return detail::apply_op(
      "to", {*this}, detail::kSaveNone,
      [device](detail::TensorList in) {
        const Tensor src = in[0].contiguous();  // on its own device (a CUDA copy kernel for a CUDA tensor)
        Tensor out = detail::make_tensor(src.shape(), src.dtype(), device);
        cuda::detail::copy_bytes(out.data_ptr(), device, src.data_ptr(), src.device(),
                                 static_cast<std::size_t>(src.numel()) * src.itemsize());
        return out;
      },
      [from](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0].to(from)}; });
}

Tensor Tensor::clone() const {
  return detail::apply_op(
      "clone", {*this}, detail::kSaveNone,
      [](detail::TensorList in) {
        Tensor out = detail::make_tensor(in[0].shape(), in[0].dtype(), in[0].device());
        detail::copy_into(out, in[0]);
        return out;
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::detach() const {
  if (detail::tracing())  // a step of its own: a replay must cut the history too (Note [static graphs])
    return detail::trace_opaque("detach", {*this}, [](detail::TensorList in) { return std::vector<Tensor>{in[0].detach()}; })[0];
  return detail::make_view(*this, shape(), strides(), storage_offset());
}

Tensor& Tensor::copy_(const Tensor& src) {
  if (!src.defined()) throw Error("copy_", "source tensor is undefined");
  if (src.shape() != shape()) broadcast_shapes({src.shape(), shape()}, "copy_");
  if (broadcast_shapes({src.shape(), shape()}, "copy_") != shape())
    throw Error("copy_", "source of shape " + detail::shape_str(src.shape()) + " cannot be broadcast to " +
                             detail::shape_str(shape()));
  if (phasor::is_complex(src.dtype()) && !phasor::is_complex(dtype()) && GradMode::is_enabled() && src.requires_grad())
    throw Error("copy_", std::string("cannot copy a complex tensor into a ") + dtype_name(dtype()) +
                             " tensor while recording gradients; take real() first");
  return detail::apply_inplace(
      "copy_", *this, {src}, [&] { detail::copy_into(*this, src); },
      [&](const Tensor& self) { return phasor::broadcast_to(src.to(self.dtype()), self.shape()); });
}

Tensor& Tensor::fill_(const Scalar& value) {
  detail::check_scalar_fits(value, dtype(), "fill_");
  return detail::apply_inplace(
      "fill_", *this, {},
      [&] {
        if (device().is_cuda()) {
          phasor::cuda::detail::fill(*this, value);
          return;
        }
        detail::visit_dtype(dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T v = detail::scalar_as<T>(value);
          detail::map_unary_into<T, T>(*this, *this, [v](const T&) { return v; });
        });
      },
      [&](const Tensor& self) { return full_like(self, value); });
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace phasor
