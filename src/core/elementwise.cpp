// src/core/elementwise.cpp - loop construction (broadcast strides, coalescing), casts and copies.
#include "core/elementwise.hpp"

#include "autodiff/node.hpp"
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
  return out;
}

namespace detail {

StridedLoop make_loop(const std::vector<const Tensor*>& ops, const Shape& shape) {
  StridedLoop L;
  L.nt = static_cast<int>(ops.size());
  L.numel = shape_numel(shape);
  const std::size_t nd = shape.size();
  // per-dim byte strides, broadcast dims get 0
  std::vector<std::array<std::int64_t, kMaxOperands>> st(nd);
  for (int k = 0; k < L.nt; ++k) {
    const Tensor& t = *ops[static_cast<std::size_t>(k)];
    L.base[static_cast<std::size_t>(k)] = static_cast<char*>(t.data_ptr());
    const auto& ts = t.shape();
    const auto& tst = t.strides();
    const std::int64_t isz = static_cast<std::int64_t>(t.itemsize());
    const std::size_t off = nd - ts.size();
    for (std::size_t d = 0; d < nd; ++d) {
      std::int64_t s = 0;
      if (d >= off && ts[d - off] != 1) s = tst[d - off] * isz;
      st[d][static_cast<std::size_t>(k)] = s;
    }
  }
  // drop size-1 dims, then merge dims whose strides chain for every operand
  for (std::size_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (!L.shape.empty()) {
      auto& ps = L.strides.back();
      bool merge = true;
      for (int k = 0; k < L.nt; ++k)
        if (ps[static_cast<std::size_t>(k)] != st[d][static_cast<std::size_t>(k)] * shape[d]) merge = false;
      if (merge) {
        L.shape.back() *= shape[d];
        ps = st[d];
        continue;
      }
    }
    L.shape.push_back(shape[d]);
    L.strides.push_back(st[d]);
  }
  if (L.shape.empty()) {
    L.shape.push_back(1);
    L.strides.push_back({});
  }
  return L;
}

void copy_into(const Tensor& dst, const Tensor& src) {
  check_cpu(dst, "copy_");
  check_cpu(src, "copy_");
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
      [dtype](const std::vector<Tensor>& in) {
        Tensor out = detail::make_tensor(in[0].shape(), dtype, in[0].device());
        detail::copy_into(out, in[0]);
        return out;
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  throw Error("to", "cannot move a tensor from " + this->device().str() + " to " + device.str() +
                        ": device not available in this build (CPU only)");
}

Tensor Tensor::clone() const {
  return detail::apply_op(
      "clone", {*this}, detail::kSaveNone,
      [](const std::vector<Tensor>& in) {
        Tensor out = detail::make_tensor(in[0].shape(), in[0].dtype(), in[0].device());
        detail::copy_into(out, in[0]);
        return out;
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::detach() const { return detail::make_view(*this, shape(), strides(), storage_offset()); }

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
  return detail::apply_inplace(
      "fill_", *this, {},
      [&] {
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
