// src/core/binary.cpp - broadcasting binary arithmetic (add sub mul div) with PyTorch promotion,
// their gradients, the scalar and operator spellings, and in-place forms.
#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace detail {

Dtype result_type(const std::vector<Tensor>& ts) {
  // three priority classes as in PyTorch: dim>0 tensors, 0-d tensors (wrapped scalars are 0-d
  // tensors created by wrap_scalar with the already-resolved dtype)
  bool have_dim = false, have_zero = false;
  Dtype dim_t = Dtype::Bool, zero_t = Dtype::Bool;
  for (const auto& t : ts) {
    if (t.dim() > 0) {
      dim_t = have_dim ? promote_types(dim_t, t.dtype()) : t.dtype();
      have_dim = true;
    } else {
      zero_t = have_zero ? promote_types(zero_t, t.dtype()) : t.dtype();
      have_zero = true;
    }
  }
  if (!have_dim) return zero_t;
  if (!have_zero) return dim_t;
  if (category(zero_t) > category(dim_t)) {
    // a 0-d tensor of a higher category: its dtype, widened to keep the tensor's precision
    return promote_types(dim_t, zero_t);
  }
  return dim_t;
}

Dtype result_type(const Tensor& t, const Scalar& s) {
  const Dtype td = t.dtype();
  const int tc = category(td);
  int sc = s.is_complex() ? 3 : s.is_floating() ? 2 : s.kind() == Scalar::Kind::Int ? 1 : 0;
  if (sc <= tc) return td;
  switch (sc) {
    case 1: return Dtype::Int64;
    case 2: return default_dtype();
    default: return tc == 2 ? to_complex(td) : to_complex(default_dtype());
  }
}

Tensor wrap_scalar(const Scalar& s, Dtype dtype, Device device) {
  Tensor t = make_tensor({}, dtype, device);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(t.data_ptr()) = scalar_as<T>(s);
  });
  return t;
}

namespace {

/// Runs f(x, y) over a and b cast to `dt` (the result type), broadcasting.
template <class F>
Tensor arith(const Tensor& a, const Tensor& b, Dtype dt, const char* op, F f) {
  check_cpu(a, op);
  check_same_device({a, b}, op);
  Tensor x = a.to(dt), y = b.to(dt);
  return visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return map_binary<T>(x, y, [f](T u, T v) { return convert<T>(f(u, v)); }, op);
  });
}

/// In-place a op= b: result type must be castable to a's dtype.
template <class F>
void arith_inplace(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_cpu(a, op);
  check_same_device({a, b}, op);
  Dtype rt = result_type({a, b});
  if (category(rt) > category(a.dtype()))
    throw Error(op, std::string("result type ") + dtype_name(rt) + " cannot be cast to the in-place output type " +
                        dtype_name(a.dtype()));
  Shape s = broadcast_shapes({a.shape(), b.shape()}, op);
  if (s != a.shape())
    throw Error(op, "in-place output of shape " + shape_str(a.shape()) + " does not match the broadcast shape " +
                        shape_str(s));
  Tensor y = b.to(a.dtype());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary_into<T, T, T>(a, a, y, [f](T u, T v) { return convert<T>(f(u, v)); });
  });
}

struct AddF {
  template <class T> auto operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return a + b;
  }
};
struct SubF {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return a - b;
  }
};
struct MulF {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return a * b;
  }
};
struct DivF {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) return a;  // never used: div promotes
    else return a / b;
  }
};

Dtype div_type(Dtype t) { return category(t) < 2 ? default_dtype() : t; }

Tensor scaled(const Tensor& b, const Scalar& alpha) {
  if (!alpha.is_complex() && alpha.to_double() == 1.0) return b;
  return b * alpha;
}

}  // namespace
}  // namespace detail

// ---- add / sub / mul / div -----------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor bb = detail::scaled(b, alpha);
  return detail::apply_op(
      "add", {a, bb}, detail::kSaveNone,
      [](const std::vector<Tensor>& in) {
        return detail::arith(in[0], in[1], detail::result_type(in), "add", detail::AddF{});
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0], g[0]}; });
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor bb = detail::scaled(b, alpha);
  if (a.dtype() == Dtype::Bool && bb.dtype() == Dtype::Bool)
    throw Error("sub", "subtraction of two bool tensors is not supported; use logical_xor");
  return detail::apply_op(
      "sub", {a, bb}, detail::kSaveNone,
      [](const std::vector<Tensor>& in) {
        return detail::arith(in[0], in[1], detail::result_type(in), "sub", detail::SubF{});
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0], -g[0]}; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return detail::apply_op(
      "mul", {a, b}, detail::kSaveInputs,
      [](const std::vector<Tensor>& in) {
        return detail::arith(in[0], in[1], detail::result_type(in), "mul", detail::MulF{});
      },
      [](const detail::Ctx& c, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{c.needs_grad(0) ? g[0] * c.input(1).conj() : Tensor(),
                                   c.needs_grad(1) ? g[0] * c.input(0).conj() : Tensor()};
      });
}

Tensor div(const Tensor& a, const Tensor& b) {
  return detail::apply_op(
      "div", {a, b}, detail::kSaveInputs,
      [](const std::vector<Tensor>& in) {
        return detail::arith(in[0], in[1], detail::div_type(detail::result_type(in)), "div", detail::DivF{});
      },
      [](const detail::Ctx& c, const std::vector<Tensor>& g) {
        Tensor b = c.input(1);
        Tensor ga = g[0] / b.conj();
        Tensor gb = c.needs_grad(1) ? -ga * (c.input(0) / b).conj() : Tensor();
        return std::vector<Tensor>{c.needs_grad(0) ? ga : Tensor(), gb};
      });
}

// ---- scalar forms: the scalar becomes a 0-d tensor of the result dtype ---------------------------------
namespace {
Tensor wrap_for(const Tensor& t, const Scalar& s) {
  return detail::wrap_scalar(s, detail::result_type(t, s), t.device());
}
}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, wrap_for(a, b)); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, wrap_for(a, b)); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, wrap_for(a, b)); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, wrap_for(a, b)); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(wrap_for(b, a), b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap_for(b, a), b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrap_for(b, a), b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrap_for(b, a), b); }
Tensor operator-(const Tensor& a) { return neg(a); }

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return phasor::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return phasor::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return phasor::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return phasor::div(*this, o); }

// ---- in place ----------------------------------------------------------------------------------------
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  Tensor b = detail::scaled(o, alpha);
  return detail::apply_inplace(
      "add_", *this, {b}, [&] { detail::arith_inplace(*this, b, "add_", detail::AddF{}); },
      [&](const Tensor& self) { return phasor::add(self, b); });
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  Tensor b = detail::scaled(o, alpha);
  return detail::apply_inplace(
      "sub_", *this, {b}, [&] { detail::arith_inplace(*this, b, "sub_", detail::SubF{}); },
      [&](const Tensor& self) { return phasor::sub(self, b); });
}
Tensor& Tensor::mul_(const Tensor& o) {
  return detail::apply_inplace(
      "mul_", *this, {o}, [&] { detail::arith_inplace(*this, o, "mul_", detail::MulF{}); },
      [&](const Tensor& self) { return phasor::mul(self, o); });
}
Tensor& Tensor::div_(const Tensor& o) {
  if (detail::category(dtype()) < 2)
    throw Error("div_", std::string("result type ") + dtype_name(default_dtype()) +
                            " cannot be cast to the in-place output type " + dtype_name(dtype()));
  return detail::apply_inplace(
      "div_", *this, {o}, [&] { detail::arith_inplace(*this, o, "div_", detail::DivF{}); },
      [&](const Tensor& self) { return phasor::div(self, o); });
}
Tensor& Tensor::add_(const Scalar& s) { return add_(wrap_for(*this, s)); }
Tensor& Tensor::sub_(const Scalar& s) { return sub_(wrap_for(*this, s)); }
Tensor& Tensor::mul_(const Scalar& s) { return mul_(wrap_for(*this, s)); }
Tensor& Tensor::div_(const Scalar& s) { return div_(wrap_for(*this, s)); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

}  // namespace phasor
