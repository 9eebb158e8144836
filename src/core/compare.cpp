// src/core/compare.cpp - comparisons and logical ops (bool results, no gradient), signbit, and the
// masking ops where / clamp / masked_fill / nan_to_num with their gradients and in-place forms.
#include <complex>
#include <limits>
#include <string>

#include "autodiff/node.hpp"
#include "core/pointwise.hpp"
#include "core/unary.hpp"
#include "cuda/ops.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using detail::Ctx;
using detail::is_complex_v;
using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

// ---- comparisons: both sides promoted to the common dtype; ordering is undefined for complex -------------
namespace {

template <class Cmp>
Tensor compare(const char* op, const Tensor& a, const Tensor& b, bool ordered, Cmp cmp) {
  return detail::apply_nondiff(op, {a, b}, [op, ordered, cmp](In in) {
    const Dtype dt = detail::result_type(in);
    if (ordered && phasor::is_complex(dt))
      throw Error(op, std::string("ordering comparisons are not defined for complex tensors (got ") + dtype_name(dt) + ")");
    return detail::binary_kernel(in[0], in[1], dt, op, cmp);
  });
}

struct Less {
  template <class T>
    requires(!is_complex_v<T>)
  bool operator()(T a, T b) const { return a < b; }
};
struct LessEq {
  template <class T>
    requires(!is_complex_v<T>)
  bool operator()(T a, T b) const { return a <= b; }
};
struct Greater {
  template <class T>
    requires(!is_complex_v<T>)
  bool operator()(T a, T b) const { return a > b; }
};
struct GreaterEq {
  template <class T>
    requires(!is_complex_v<T>)
  bool operator()(T a, T b) const { return a >= b; }
};

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) {
  return compare("eq", a, b, false, [](auto u, auto v) -> bool { return u == v; });
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return compare("ne", a, b, false, [](auto u, auto v) -> bool { return u != v; });
}
Tensor lt(const Tensor& a, const Tensor& b) { return compare("lt", a, b, true, Less{}); }
Tensor le(const Tensor& a, const Tensor& b) { return compare("le", a, b, true, LessEq{}); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare("gt", a, b, true, Greater{}); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare("ge", a, b, true, GreaterEq{}); }

Tensor Tensor::eq(const Tensor& o) const { return phasor::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return phasor::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return phasor::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return phasor::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return phasor::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return phasor::ge(*this, o); }

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, detail::wrap_for(a, b)); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, detail::wrap_for(a, b)); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, detail::wrap_for(a, b)); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, detail::wrap_for(a, b)); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, detail::wrap_for(a, b)); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, detail::wrap_for(a, b)); }

// ---- logical ops: any dtype, nonzero is true ---------------------------------------------------------------
namespace {
template <class F>
Tensor logical(const char* op, const Tensor& a, const Tensor& b, F f) {
  return detail::apply_nondiff(op, {a, b}, [op, f](In in) {
    return detail::binary_kernel(in[0], in[1], Dtype::Bool, op, [f]<class T>(T u, T v) requires std::is_same_v<T, bool> {
      return f(u, v);
    });
  });
}
}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical("logical_and", a, b, [](bool u, bool v) { return u && v; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical("logical_or", a, b, [](bool u, bool v) { return u || v; });
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return logical("logical_xor", a, b, [](bool u, bool v) { return u != v; });
}

// ---- closeness (no gradient) ----------------------------------------------------------------------------------
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (!(rtol >= 0) || !(atol >= 0))
    throw Error("isclose", "rtol and atol must be non-negative (got rtol=" + std::to_string(rtol) +
                               ", atol=" + std::to_string(atol) + ")");
  detail::check_same_device(a, b, "isclose");
  (void)broadcast_shapes({a.shape(), b.shape()}, "isclose");
  NoGradGuard no_grad;
  // integers and bools compare in float64, so that a tolerance can apply to them
  const Dtype dt = promote_types(a.dtype(), b.dtype());
  const Dtype ft = phasor::is_floating_or_complex(dt) ? dt : Dtype::Float64;
  const Tensor x = a.to(ft), y = b.to(ft);
  // equal values (infinities of one sign included), or finite and within atol + rtol |b|
  Tensor close = eq(x, y) | (le((x - y).abs(), y.abs() * rtol + atol) & isfinite(x) & isfinite(y));
  if (equal_nan) close = close | (isnan(x) & isnan(y));
  return close;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  detail::check_same_device(a, b, "equal");
  if (a.shape() != b.shape()) return false;
  NoGradGuard no_grad;
  return eq(a, b).all().item<bool>();
}

// ---- where ---------------------------------------------------------------------------------------------------
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (cond.dtype() != Dtype::Bool)
    throw Error("where", std::string("expected a bool condition, got ") + dtype_name(cond.dtype()));
  return detail::apply_op(
      "where", {cond, a, b}, detail::kSaveInputs,
      [](In in) {
        const Device device = detail::elementwise_device(in, "where");
        const Shape shape = broadcast_shapes({in[0].shape(), in[1].shape(), in[2].shape()}, "where");
        const Dtype dt = detail::result_type({in[1], in[2]});
        if (device.is_cuda()) {  // the kernel converts a and b per element
          Tensor out = detail::make_tensor(shape, dt, device);
          phasor::cuda::detail::where(out, in[0], in[1], in[2]);
          return out;
        }
        Tensor x = in[1].to(dt), y = in[2].to(dt);
        Tensor out = detail::make_tensor(shape, dt, in[1].device());
        detail::visit_dtype(dt, [&](auto tag) {
          using T = typename decltype(tag)::type;
          detail::map_ternary_into<T, std::uint8_t, T, T>(out, in[0], x, y, [](std::uint8_t c, const T& u, const T& v) {
            return detail::select_bits(c, u, v);
          });
        });
        return out;
      },
      // each branch gets the gradient where it was picked (the engine sums broadcast dims)
      [](const Ctx& c, const G& g) {
        Tensor cond = c.input(0), zero = detail::zero_scalar_like(g[0]);
        return G{Tensor(), c.needs_grad(1) ? where(cond, g[0], zero) : Tensor(),
                 c.needs_grad(2) ? where(cond, zero, g[0]) : Tensor()};
      });
}

// the number becomes a 0-d tensor of result_type(tensor, number) on the tensor's device: a 0-d operand
// of a higher category promotes like the number itself (result_type's combine_categories)
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) { return where(cond, a, detail::wrap_for(a, b)); }
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) { return where(cond, detail::wrap_for(b, a), b); }

// ---- clamp -----------------------------------------------------------------------------------------------------
namespace {

/// Checks the bounds and returns the result dtype (the tensor's, raised by the scalars' categories).
Dtype clamp_type(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi, const char* op) {
  if (!lo && !hi) throw Error(op, "at least one of min and max must be given");
  if (x.is_complex() || (lo && lo->is_complex()) || (hi && hi->is_complex()))
    throw Error(op, std::string("not supported for complex values (tensor is ") + dtype_name(x.dtype()) + ")");
  Dtype dt = x.dtype();
  if (lo) dt = detail::result_type(dt, *lo);
  if (hi) dt = detail::result_type(dt, *hi);
  return dt;
}

/// out = min(max(in, lo), hi) elementwise in `in`'s dtype (NaN stays NaN; lo > hi gives hi).
void clamp_into(const Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  if (out.device().is_cuda()) {  // bounds as doubles, a missing one infinite
    const double inf = std::numeric_limits<double>::infinity();
    const double bounds[2] = {lo ? lo->to_double() : -inf, hi ? hi->to_double() : inf};
    phasor::cuda::detail::unary("clamp", out, in, in.dtype(), bounds);
    return;
  }
  detail::visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      // a missing bound is the type's end (infinite for floating types), so the loop has no test of its own
      // and vectorizes (a max and a min; NaN stays NaN: no comparison with it holds)
      using Lim = std::numeric_limits<T>;
      const T l = lo ? detail::scalar_as<T>(*lo) : Lim::has_infinity ? -Lim::infinity() : Lim::lowest();
      const T h = hi ? detail::scalar_as<T>(*hi) : Lim::has_infinity ? Lim::infinity() : Lim::max();
      detail::map_unary_into<T, T>(out, in, [l, h](T v) {
        v = v < l ? l : v;
        return v > h ? h : v;
      });
    }
  });
}

}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  const Dtype dt = clamp_type(x, min, max, "clamp");
  return detail::apply_op(
      "clamp", {x}, detail::kSaveInputs,
      [dt, min, max](In in) {
        Tensor v = in[0].to(dt);
        Tensor out = detail::make_tensor(v.shape(), dt, v.device());
        clamp_into(out, v, min, max);
        return out;
      },
      // gradient passes where min <= x <= max (NaN x gets none)
      [min, max](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor inside = min ? x >= *min : Tensor();
        if (max) inside = inside.defined() ? inside & (x <= *max) : x <= *max;
        return G{where(inside, g[0], detail::zero_scalar_like(g[0]))};
      });
}

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return phasor::clamp(*this, min, max); }
Tensor clamp_min(const Tensor& x, const Scalar& min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& max) { return clamp(x, std::nullopt, max); }
Tensor Tensor::clamp_min(const Scalar& min) const { return phasor::clamp(*this, min, std::nullopt); }
Tensor Tensor::clamp_max(const Scalar& max) const { return phasor::clamp(*this, std::nullopt, max); }

// ---- nan_to_num, signbit ------------------------------------------------------------------------------------
Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  return detail::composite("nan_to_num", {x}, [&]() -> Tensor {
    if (x.is_complex()) return complex(nan_to_num(x.real(), nan, posinf, neginf), nan_to_num(x.imag(), nan, posinf, neginf));
    if (!is_floating(x.dtype())) return x.clone();
    const double big = x.dtype() == Dtype::Float32 ? static_cast<double>(std::numeric_limits<float>::max())
                                                   : std::numeric_limits<double>::max();
    const double inf = std::numeric_limits<double>::infinity();
    // the replacements are numbers of x's dtype (a double never widens float32); each where passes the
    // gradient where it keeps x
    Tensor r = where(x.isnan(), Scalar(nan), x);
    r = where(r == inf, Scalar(posinf.value_or(big)), r);
    return where(r == -inf, Scalar(neginf.value_or(-big)), r);
  });
}
Tensor Tensor::nan_to_num(double nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return phasor::nan_to_num(*this, nan, posinf, neginf);
}

Tensor signbit(const Tensor& x) {
  detail::check_not_complex(x, "signbit");
  return detail::composite("signbit", {x}, [&] {
    if (x.dtype() == Dtype::Bool) return zeros(x.shape(), Dtype::Bool, x.device());
    if (x.dtype() == Dtype::Int64) return x < 0;
    return copysign(ones({}, x.dtype(), x.device()), x.detach()) < 0;  // sees -0 and -NaN
  });
}
Tensor Tensor::signbit() const { return phasor::signbit(*this); }

Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  const Dtype dt = clamp_type(*this, min, max, "clamp_");
  if (detail::category(dt) > detail::category(dtype()))
    throw Error("clamp_", std::string("result type ") + dtype_name(dt) + " cannot be cast to the in-place output type " +
                              dtype_name(dtype()));
  return detail::apply_inplace(
      "clamp_", *this, {}, [&] { clamp_into(*this, *this, min, max); },
      // a clone: clamp saves its input, and self's storage is overwritten with the result
      [&](const Tensor& self) { return phasor::clamp(self, min, max); });
}

// ---- masked_fill ------------------------------------------------------------------------------------------------
namespace {

void check_masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value, const char* op) {
  detail::check_same_device({x, mask}, op);
  if (mask.dtype() != Dtype::Bool) throw Error(op, std::string("expected a bool mask, got ") + dtype_name(mask.dtype()));
  if (mask.shape() != x.shape() && broadcast_shapes({x.shape(), mask.shape()}, op) != x.shape())
    throw Error(op, "mask of shape " + detail::shape_str(mask.shape()) + " cannot be broadcast to the tensor's shape " +
                        detail::shape_str(x.shape()));
  if (value.is_complex() && !x.is_complex())
    throw Error(op, std::string("a complex value cannot be written into a ") + dtype_name(x.dtype()) + " tensor");
  detail::check_scalar_fits(value, x.dtype(), op);
}

/// out = mask ? value : in, all of in's dtype (mask broadcast).
void masked_fill_into(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& value) {
  if (in.device().is_cuda()) {  // where(mask, value, in) with a 0-d value
    phasor::cuda::detail::where(out, mask, detail::wrap_scalar(value, in.dtype(), in.device()), in);
    return;
  }
  detail::visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = detail::scalar_as<T>(value);
    detail::map_binary_into<T, T, std::uint8_t>(
        out, in, mask, [v](const T& a, std::uint8_t m) { return detail::select_bits(m, v, a); });
  });
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  check_masked_fill(x, mask, value, "masked_fill");
  return detail::apply_op(
      "masked_fill", {x, mask}, detail::kSaveInputs,
      [value](In in) {
        Tensor out = detail::make_tensor(in[0].shape(), in[0].dtype(), in[0].device());
        masked_fill_into(out, in[0], in[1], value);
        return out;
      },
      [](const Ctx& c, const G& g) {
        return G{where(c.input(1), detail::zero_scalar_like(g[0]), g[0]), Tensor()};
      });
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return phasor::masked_fill(*this, mask, value); }

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  check_masked_fill(*this, mask, value, "masked_fill_");
  return detail::apply_inplace(
      "masked_fill_", *this, {mask}, [&] { masked_fill_into(*this, *this, mask, value); },
      [&](const Tensor& self) { return phasor::masked_fill(self, mask, value); });
}

}  // namespace phasor
