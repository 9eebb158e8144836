// src/core/binary.cpp - broadcasting binary arithmetic (add sub mul div) with PyTorch promotion,
// their gradients, the scalar and operator spellings, and in-place forms; pow (three spellings),
// maximum / minimum, complex and polar with their gradients (atan2: binary_math.cpp).
#include <cmath>
#include <complex>
#include <limits>

#include "autodiff/node.hpp"
#include "core/complex_div_kernels.hpp"
#include "core/complex_math.hpp"
#include "core/elementwise.hpp"
#include "core/pointwise.hpp"
#include "core/pow_rules.hpp"
#include "core/promotion.hpp"
#include "cuda/ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace detail {

Dtype result_type(TensorList ts) {
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
  if (category(zero_t) <= category(dim_t)) return dim_t;
  // A 0-d tensor of a higher category (PyTorch's combine_categories): a complex one next to a
  // floating tensor gives the complex type of the tensor's precision (float32 + 0-d complex128
  // -> complex64); otherwise its own dtype, widened by promote_types (int64 + 0-d float64 -> float64).
  if (phasor::is_complex(zero_t) && is_floating(dim_t)) return to_complex(dim_t);
  return promote_types(dim_t, zero_t);
}

Dtype result_type(const Tensor& t, const Scalar& s) { return result_type(t.dtype(), s); }

Dtype result_type(Dtype td, const Scalar& s) {
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
  // next to a CUDA tensor the number is a host scalar: its value rides in the kernel's arguments
  Tensor t = make_tensor({}, dtype, device.is_cuda() ? Device::cpu() : device);  // Note [host scalars]
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(t.data_ptr()) = scalar_as<T>(s);
  });
  return t;
}

/// Throws phasor::Error naming `op` unless in[0] (self) can take the in-place result of in: every input on
/// self's device (an in-place output is never a host scalar of a CUDA op), their result type castable to
/// self's dtype, their broadcast shape self's.
void check_inplace_output(TensorList in, const char* op) {
  const Tensor& self = in[0];
  if (elementwise_device(in, op) != self.device()) check_same_device(in, op);
  const Dtype rt = result_type(in);
  if (category(rt) > category(self.dtype()))
    throw Error(op, std::string("result type ") + dtype_name(rt) + " cannot be cast to the in-place output type " +
                        dtype_name(self.dtype()));
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  const Shape s = broadcast_shapes(shapes, op);
  if (s != self.shape())
    throw Error(op, "in-place output of shape " + shape_str(self.shape()) + " does not match the broadcast shape " +
                        shape_str(s));
}

namespace {

/// An uninitialized `dt` tensor on `device` of a and b's broadcast shape (a's or b's own shape, not copied,
/// when they agree or the other is 0-d, a number: a conditional expression with a prvalue branch would copy
/// it); a mismatch throws naming `op`.
Tensor empty_broadcast(const Tensor& a, const Tensor& b, Dtype dt, const char* op, Device device) {
  if (a.shape() == b.shape() || b.dim() == 0) return make_tensor(a.shape(), dt, device);
  if (a.dim() == 0) return make_tensor(b.shape(), dt, device);
  return make_tensor(broadcast_shapes({a.shape(), b.shape()}, op), dt, device);
}

// The per-element functors of arith / arith_inplace (and DivF) are inlined into the loops, whatever their
// size (complex division's is large): a call passes and returns std::complex through the stack, which cost
// complex128 division 1.75x its time (bench_core BM_DivComplex).
#define PHASOR_INLINE_FUNCTOR __attribute__((always_inline))

/// Runs f(x, y) over a and b cast to `dt` (the result type), broadcasting.
template <class F>
Tensor arith(const Tensor& a, const Tensor& b, Dtype dt, const char* op, F f) {
  const Device device = elementwise_device(a, b, op);
  if (device.is_cuda()) {  // Note [cuda elementwise]: the kernel converts a and b per element
    Tensor out = empty_broadcast(a, b, dt, op, device);
    phasor::cuda::detail::binary(op, out, a, b, dt);
    return out;
  }
  // complex with real of the same precision (spectra times real symbols, masks, weights): the real
  // operand is widened to (r, 0) per element instead of converted into a temporary first
  if (is_complex(dt) && a.dtype() != b.dtype() && (a.dtype() == dt || b.dtype() == dt) &&
      (a.dtype() == to_real(dt) || b.dtype() == to_real(dt))) {
    return visit_dtype(dt, [&](auto tag) -> Tensor {
      using C = typename decltype(tag)::type;
      if constexpr (is_complex_v<C>) {
        using R = typename C::value_type;
        Tensor out = empty_broadcast(a, b, dt, op, device);
        if (a.dtype() == dt) map_binary_into<C, C, R>(out, a, b, [f](C u, R v) PHASOR_INLINE_FUNCTOR { return f(u, C(v)); });
        else map_binary_into<C, R, C>(out, a, b, [f](R u, C v) PHASOR_INLINE_FUNCTOR { return f(C(u), v); });
        return out;
      } else {
        return Tensor();
      }
    });
  }
  Tensor x = a.to(dt), y = b.to(dt);
  return visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return map_binary<T>(x, y, [f](T u, T v) PHASOR_INLINE_FUNCTOR { return convert<T>(f(u, v)); }, op);
  });
}

/// In-place a op= b: result type must be castable to a's dtype.
template <class F>
void arith_inplace(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_inplace_output({a, b}, op);
  if (a.device().is_cuda()) {
    phasor::cuda::detail::binary(op, a, a, b, a.dtype());
    return;
  }
  Tensor y = b.to(a.dtype());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary_into<T, T, T>(a, a, y, [f](T u, T v) PHASOR_INLINE_FUNCTOR { return convert<T>(f(u, v)); });
  });
}

struct AddF {
  template <class T> auto operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return wrap_add(a, b);  // int64 wraps (element_traits.hpp)
  }
};
struct SubF {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return wrap_sub(a, b);
  }
};
struct MulF {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_complex_v<T>)  // the textbook product, as PyTorch: vectorizes (no C99 Annex G
      return T(a.real() * b.real() - a.imag() * b.imag(),  // inf recovery, which calls __mul?c3)
               a.real() * b.imag() + a.imag() * b.real());
    else return wrap_mul(a, b);
  }
};
struct DivF {
  template <class T> PHASOR_INLINE_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) return a;  // never used: div promotes
    else if constexpr (is_complex_v<T>) return cdiv(a, b);  // Note [complex division]
    else return a / b;
  }
};

Dtype div_type(Dtype t) { return category(t) < 2 ? default_dtype() : t; }

/// a / b in `dt`: for complex a and b of that dtype on one CPU device, the vectorized rows (Note [vector
/// complex division]; bit for bit DivF's quotients), else DivF per element.
Tensor div_forward(const Tensor& a, const Tensor& b, Dtype dt) {
  if (!is_complex(dt) || a.dtype() != dt || b.dtype() != dt || a.device() != b.device() || !a.device().is_cpu())
    return arith(a, b, dt, "div", DivF{});
  if (dt == Dtype::Complex64)
    return map_rows_pair<std::complex<float>>(a, b, "div", [](const auto& in, std::complex<float>* o, std::int64_t n) {
      div_c64(in[0], in[1], o, n);
    });
  return map_rows_pair<std::complex<double>>(a, b, "div", [](const auto& in, std::complex<double>* o, std::int64_t n) {
    div_c128(in[0], in[1], o, n);
  });
}

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
      [](detail::TensorList in) {
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
      [](detail::TensorList in) {
        return detail::arith(in[0], in[1], detail::result_type(in), "sub", detail::SubF{});
      },
      [](const detail::Ctx&, const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0], -g[0]}; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return detail::apply_op(
      "mul", {a, b}, detail::kSaveInputs,
      [](detail::TensorList in) {
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
      [](detail::TensorList in) {
        return detail::div_forward(in[0], in[1], detail::div_type(detail::result_type(in)));
      },
      [](const detail::Ctx& c, const std::vector<Tensor>& g) {
        Tensor b = c.input(1);
        Tensor ga = g[0] / b.conj();
        Tensor gb = c.needs_grad(1) ? -ga * (c.input(0) / b).conj() : Tensor();
        return std::vector<Tensor>{c.needs_grad(0) ? ga : Tensor(), gb};
      });
}

// ---- scalar forms: the scalar becomes a 0-d tensor of the result dtype ---------------------------------
using detail::wrap_for;

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
      // a clone: mul saves its inputs, and self's storage is overwritten with the result
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

// ---- addcmul / addcdiv ---------------------------------------------------------------------------------
// Note [fused multiply-add]
// addcmul(x, a, b, v) = x + v * (a * b) and addcdiv(x, a, b, v) = x + v * (a / b) make one pass and one
// result where the composition makes three passes and two temporaries: in a PDE stepper's stage
// (ETDRK4's E u + Q N) a third of the memory traffic and, on a GPU, of the launches. The value multiplies
// the product or quotient, which are mul's and div's (the textbook complex product, Note [complex
// division]), so on the CPU the result is the composition x + v * (a op b)'s bit for bit, and x + a op b's
// for v = 1 (a product by 1 is skipped on both devices: for complex types it costs a third of the CPU
// loop's arithmetic, and it could only turn an infinite part's zero partner into NaN). The result type is
// the three tensors' (as in torch the value does not widen it and must fit it: an integer for int64, real
// for a real type); the in-place forms compute in self's dtype, as add_. On the CPU a real `a` next to
// complex operands of its precision is widened per element, as in binary ops (addcmul puts a real b first:
// the product commutes bit for bit); a CUDA kernel converts every operand per element. addcdiv refuses
// integer result types (no integer division), both refuse bool.
namespace detail {
namespace {

/// x + v * (a op b) in T, op = MulF or DivF (Note [fused multiply-add]); `a` may be the real type of a
/// complex T (widened per element). Unit: v is 1 and not multiplied (for complex T a textbook product, 6
/// flops per element, in a loop bound by its arithmetic on the CPU).
template <class T, class Op, bool Unit = false>
struct AddcF {
  T v;
  template <class A>
  PHASOR_INLINE_FUNCTOR T operator()(T x, A a, T b) const {
    if constexpr (Unit) return AddF{}(x, Op{}(T(a), b));
    else return AddF{}(x, MulF{}(v, Op{}(T(a), b)));
  }
};

/// out = x + value * (a op b) computed in `dt` (out's dtype), op the product (div false) or the quotient
/// (div true), a and b broadcast to out's shape, x too or out itself (the in-place forms): Note [fused
/// multiply-add]. A CUDA device runs the CUDA kernel.
void addc_into(const char* op, const Tensor& out, const Tensor& x_in, const Tensor& a_in, const Tensor& b_in,
               const Scalar& value, bool div) {
  const Dtype dt = out.dtype();
  if (out.device().is_cuda()) {  // Note [cuda elementwise]: the kernel converts every operand per element
    phasor::cuda::detail::ternary(op, out, x_in, a_in, b_in, dt, value);
    return;
  }
  Tensor x = x_in, a = a_in, b = b_in;
  const bool cplx = phasor::is_complex(dt);
  if (!div && cplx && a.dtype() == dt && b.dtype() == to_real(dt)) std::swap(a, b);
  const bool real_a = cplx && a.dtype() == to_real(dt);
  x = x.to(dt);
  b = b.to(dt);
  if (!real_a) a = a.to(dt);
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {  // refused by check_addc
      const auto run = [&](auto f) {
        if constexpr (is_complex_v<T>)
          if (real_a) return map_ternary_into<T, T, typename T::value_type, T>(out, x, a, b, f);
        map_ternary_into<T, T, T, T>(out, x, a, b, f);
      };
      const T v = scalar_as<T>(value);
      if constexpr (is_complex_v<T>) {
        if (v == T(1)) return div ? run(AddcF<T, DivF, true>{v}) : run(AddcF<T, MulF, true>{v});
      }
      if (div) run(AddcF<T, DivF>{v});
      else run(AddcF<T, MulF>{v});
    }
  });
}

/// Throws phasor::Error naming `op` unless x + value * (a op b) can be computed in `dt`: not bool, no
/// integer division, a value that fits dt (Note [fused multiply-add]).
void check_addc(const char* op, const Tensor& x, const Tensor& a, const Tensor& b, Dtype dt, const Scalar& value,
                bool div) {
  const auto types = [&] {
    return std::string(" (input ") + dtype_name(x.dtype()) + ", tensor1 " + dtype_name(a.dtype()) + ", tensor2 " +
           dtype_name(b.dtype()) + ")";
  };
  if (dt == Dtype::Bool) throw Error(op, "bool tensors are not supported" + types());
  if (div && !is_floating_or_complex(dt))
    throw Error(op, "integer division is not supported: the result type is " + std::string(dtype_name(dt)) + types() +
                        "; convert a tensor to a floating dtype");
  if (value.is_complex() && !phasor::is_complex(dt))
    throw Error(op, "value " + scalar_text(value) + " is complex but the result type is " + dtype_name(dt));
  if (!value.is_integral() && !is_floating_or_complex(dt))
    throw Error(op, "value " + scalar_text(value) + " is not an integer but the result type is " + dtype_name(dt));
  check_scalar_fits(value, dt, op);
}

/// addcmul (div false) or addcdiv (div true): checks, kernel and gradient (Note [fused multiply-add]).
Tensor addc(const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& value, bool div) {
  const char* op = div ? "addcdiv" : "addcmul";
  const Dtype dt = result_type({x, a, b});
  check_addc(op, x, a, b, dt, value, div);
  return apply_op(
      op, {x, a, b}, kSaveInputs,
      [op, dt, value, div](TensorList in) {
        const Device device = elementwise_device(in, op);
        Tensor out = make_tensor(broadcast_shapes({in[0].shape(), in[1].shape(), in[2].shape()}, op), dt, device);
        addc_into(op, out, in[0], in[1], in[2], value, div);
        return out;
      },
      // d/dx = g, d/da = g conj(v b) (addcdiv: g conj(v / b)), d/db = g conj(v a) (addcdiv: -g conj(v a / b^2))
      [value, div](const Ctx& c, const std::vector<Tensor>& g) {
        const Tensor &a = c.input(1), &b = c.input(2);
        Tensor ga, gb;
        if (c.needs_grad(1)) ga = div ? g[0] * (value / b).conj() : g[0] * scaled(b, value).conj();
        if (c.needs_grad(2))
          gb = div ? -(g[0] * (scaled(a, value) / b).conj()) / b.conj() : g[0] * scaled(a, value).conj();
        return std::vector<Tensor>{c.needs_grad(0) ? g[0] : Tensor(), ga, gb};
      });
}

/// addcmul_ / addcdiv_: self = self + value * (a op b) in self's dtype (as add_: the three tensors' result
/// type must not be of a higher category, and a and b must broadcast to self's shape).
Tensor& addc_(Tensor& self, const Tensor& a, const Tensor& b, const Scalar& value, bool div) {
  const char* op = div ? "addcdiv_" : "addcmul_";
  check_inplace_output({self, a, b}, op);
  check_addc(op, self, a, b, self.dtype(), value, div);
  return apply_inplace(
      op, self, {a, b}, [&] { addc_into(op, self, self, a, b, value, div); },
      [&](const Tensor& x) { return addc(x, a, b, value, div); });
}

}  // namespace
}  // namespace detail

Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return detail::addc(input, tensor1, tensor2, value, false);
}
Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return detail::addc(input, tensor1, tensor2, value, true);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return phasor::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return phasor::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return detail::addc_(*this, t1, t2, value, false);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return detail::addc_(*this, t1, t2, value, true);
}

// ---- lerp ----------------------------------------------------------------------------------------------
// Note [lerp]
// lerp(x, e, w) = x + w (e - x) in one pass, in torch.lerp's two forms: x + w (e - x) when |w| < 0.5, else
// e - (e - x) (1 - w), so that w = 0 gives x and w = 1 gives e exactly (the first form alone can miss e by
// an ulp) and the result is monotone across the switch. Floating and complex result types only (torch's);
// the weight is a number (it does not widen the result type, as addcmul's value, and must fit it) or a
// tensor (broadcast and promoted with x and e, where torch insists on one dtype). Both devices compute the
// same arithmetic: the CPU through the elementwise engine (a number weight is captured by the functor), a GPU
// in one kernel (Lerp in src/cuda/elementwise_ops.cuh, a number weight passed by value).
namespace detail {
namespace {

/// torch.lerp's value in T (Note [lerp]); |w| < 0.5 is tested as w w* < 0.25 for complex T.
template <class T>
inline T lerp_value(T x, T e, T w) {
  const T d = SubF{}(e, x);
  bool low;
  if constexpr (is_complex_v<T>) low = w.real() * w.real() + w.imag() * w.imag() < typename T::value_type(0.25);
  else low = std::abs(w) < T(0.5);
  return low ? AddF{}(x, MulF{}(w, d)) : SubF{}(e, MulF{}(d, SubF{}(T(1), w)));
}

/// out = lerp(x, e, w) computed in out's dtype, w the tensor `wt` when defined, else the number `wv`; x, e
/// and wt broadcast to out's shape (x may be out itself: lerp_).
void lerp_into(const char* op, const Tensor& out, const Tensor& x_in, const Tensor& e_in, const Tensor& wt,
               const Scalar& wv) {
  const Dtype dt = out.dtype();
  if (out.device().is_cuda()) {  // a number weight rides as a host scalar (Note [host scalars])
    phasor::cuda::detail::ternary(op, out, x_in, e_in, wt.defined() ? wt : wrap_scalar(wv, dt, out.device()), dt, 1);
    return;
  }
  const Tensor x = x_in.to(dt), e = e_in.to(dt);
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {  // others refused by check_lerp
      if (wt.defined()) {
        map_ternary_into<T, T, T, T>(out, x, e, wt.to(dt), [](T a, T b, T w) PHASOR_INLINE_FUNCTOR {
          return lerp_value(a, b, w);
        });
      } else {
        const T w = scalar_as<T>(wv);
        map_binary_into<T, T, T>(out, x, e, [w](T a, T b) PHASOR_INLINE_FUNCTOR { return lerp_value(a, b, w); });
      }
    }
  });
}

/// Throws phasor::Error naming `op` unless lerp can be computed in `dt`: a floating or complex type, a number
/// weight (wt undefined) that fits it (Note [lerp]).
void check_lerp(const char* op, const Tensor& x, const Tensor& e, const Tensor& wt, Dtype dt, const Scalar& wv) {
  if (!is_floating_or_complex(dt))
    throw Error(op, std::string("the result type ") + dtype_name(dt) + " is not floating or complex (input " +
                        dtype_name(x.dtype()) + ", end " + dtype_name(e.dtype()) +
                        (wt.defined() ? std::string(", weight ") + dtype_name(wt.dtype()) : std::string()) +
                        "); convert a tensor to a floating dtype");
  if (wt.defined()) return;
  if (wv.is_complex() && !phasor::is_complex(dt))
    throw Error(op, "weight " + scalar_text(wv) + " is complex but the result type is " + dtype_name(dt));
  check_scalar_fits(wv, dt, op);
}

/// lerp with a tensor weight `wt` (defined) or the number `wv`: checks, kernel and gradient (Note [lerp]).
Tensor lerp_op(const Tensor& x, const Tensor& e, const Tensor& wt, const Scalar& wv) {
  const bool tw = wt.defined();
  const Dtype dt = tw ? result_type({x, e, wt}) : result_type({x, e});
  check_lerp("lerp", x, e, wt, dt, wv);
  const auto forward = [dt, wv](TensorList in) {
    const Device device = elementwise_device(in, "lerp");
    Shape s = in.size() == 3 ? broadcast_shapes({in[0].shape(), in[1].shape(), in[2].shape()}, "lerp")
                             : broadcast_shapes({in[0].shape(), in[1].shape()}, "lerp");
    Tensor out = make_tensor(s, dt, device);
    lerp_into("lerp", out, in[0], in[1], in.size() == 3 ? in[2] : Tensor(), wv);
    return out;
  };
  if (!tw) {
    // d/dx = g conj(1 - w), d/de = g conj(w)
    const std::complex<double> w = wv.to_complex();
    const auto number = [&](std::complex<double> c) { return wv.is_complex() ? Scalar(c) : Scalar(c.real()); };
    const Scalar gx = number(std::conj(1.0 - w)), ge = number(std::conj(w));
    return apply_op("lerp", {x, e}, kSaveNone, forward, [gx, ge](const Ctx& c, const std::vector<Tensor>& g) {
      return std::vector<Tensor>{c.needs_grad(0) ? g[0] * gx : Tensor(), c.needs_grad(1) ? g[0] * ge : Tensor()};
    });
  }
  // d/dx = g conj(1 - w), d/de = g conj(w), d/dw = g conj(e - x)
  return apply_op("lerp", {x, e, wt}, kSaveInputs, forward, [](const Ctx& c, const std::vector<Tensor>& g) {
    const Tensor &xi = c.input(0), &ei = c.input(1), &w = c.input(2);
    return std::vector<Tensor>{c.needs_grad(0) ? g[0] * (1 - w).conj() : Tensor(),
                               c.needs_grad(1) ? g[0] * w.conj() : Tensor(),
                               c.needs_grad(2) ? g[0] * (ei - xi).conj() : Tensor()};
  });
}

/// lerp_: self = lerp(self, e, w) in self's dtype (as add_: the result type must not be of a higher category,
/// e and w must broadcast to self's shape).
Tensor& lerp_inplace(Tensor& self, const Tensor& e, const Tensor& wt, const Scalar& wv) {
  if (wt.defined()) check_inplace_output({self, e, wt}, "lerp_");
  else check_inplace_output({self, e}, "lerp_");
  check_lerp("lerp_", self, e, wt, self.dtype(), wv);
  const auto kernel = [&] { lerp_into("lerp_", self, self, e, wt, wv); };
  const auto out_of_place = [&](const Tensor& x) { return lerp_op(x, e, wt, wv); };
  if (wt.defined()) return apply_inplace("lerp_", self, {e, wt}, kernel, out_of_place);
  return apply_inplace("lerp_", self, {e}, kernel, out_of_place);
}

}  // namespace
}  // namespace detail

Tensor lerp(const Tensor& input, const Tensor& end, const Scalar& weight) {
  return detail::lerp_op(input, end, Tensor(), weight);
}
Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight) {
  return detail::lerp_op(input, end, weight, 0);
}
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return phasor::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return phasor::lerp(*this, end, weight); }
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  return detail::lerp_inplace(*this, end, Tensor(), weight);
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) { return detail::lerp_inplace(*this, end, weight, 0); }

// ---- pow -----------------------------------------------------------------------------------------------
namespace detail {
namespace {

struct PowF {
  template <class T>
    requires std::is_same_v<T, std::int64_t>
  T operator()(T a, T b) const { return ipow(a, b); }
  template <class T>
    requires is_real_float_v<T>
  T operator()(T a, T b) const { return std::pow(a, b); }
  template <class T>
    requires is_complex_v<T>
  T operator()(T a, T b) const { return cpow(a, b); }
};

/// a^e with a C++ scalar exponent, computed in `dt`.
Tensor pow_scalar_kernel(const Tensor& a, const Scalar& e, Dtype dt) {
  if (a.device().is_cuda()) {  // the binary kernel with a 0-d exponent; squares and roots as on the CPU
    Tensor out = make_tensor(a.shape(), dt, a.device());
    if (dt == Dtype::Bool) throw Error("pow", "not implemented for bool");
    const bool real = is_floating(dt) && !e.is_complex();
    if (real && e.to_double() == 2) phasor::cuda::detail::binary("mul", out, a, a, dt);
    else if (real && e.to_double() == 0.5) phasor::cuda::detail::unary("sqrt", out, a, dt);
    else phasor::cuda::detail::binary("pow", out, a, wrap_scalar(e, dt, a.device()), dt);
    return out;
  }
  Tensor x = a.to(dt);
  return visit_dtype(dt, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("pow", "not implemented for bool");
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      const std::int64_t n = e.to_int();
      return map_unary<T>(x, [n](T v) { return ipow(v, n); });
    } else if constexpr (is_real_float_v<T>) {
      const T p = scalar_as<T>(e);
      if (p == T(2)) return map_unary<T>(x, [](T v) { return v * v; });
      if (p == T(0.5)) return map_unary<T>(x, [](T v) { return std::sqrt(v); });
      return map_unary<T>(x, [p](T v) { return std::pow(v, p); });
    } else {
      const T p = scalar_as<T>(e);
      return map_unary<T>(x, [p](T v) { return cpow(v, p); });
    }
  });
}

Scalar minus_one(const Scalar& e) {
  if (e.is_complex()) return Scalar(e.to_complex() - 1.0);
  if (e.is_floating()) return Scalar(e.to_double() - 1.0);
  const std::int64_t n = e.to_int();  // int64's minimum has no int64 predecessor: its double's, -2^63
  return n == std::numeric_limits<std::int64_t>::min() ? Scalar(-0x1p63) : Scalar(n - 1);
}

std::string scalar_str(const Scalar& s) {
  if (s.is_complex()) return std::to_string(s.to_complex().real()) + "+" + std::to_string(s.to_complex().imag()) + "i";
  if (s.is_floating()) return std::to_string(s.to_double());
  return std::to_string(s.to_int());
}

}  // namespace
}  // namespace detail

Tensor pow(const Tensor& a, const Tensor& b) {
  return detail::apply_op(
      "pow", {a, b}, detail::kSaveInputs | detail::kSaveOutputs,
      [](detail::TensorList in) {
        const Dtype dt = detail::result_type(in);
        if (dt == Dtype::Bool) throw Error("pow", "not implemented for two bool tensors");
        return detail::binary_kernel(in[0], in[1], dt, "pow", detail::PowF{});
      },
      [](const detail::Ctx& c, const std::vector<Tensor>& g) {
        Tensor a = c.input(0), e = c.input(1), zero = detail::zero_scalar_like(g[0]);
        Tensor ga, ge;
        // d a^e / da = e a^(e-1), taken as 0 where e == 0 (so 0^0 has no NaN gradient)
        if (c.needs_grad(0)) ga = where(e == 0, zero, g[0] * (e * pow(a, e - 1)).conj());
        // d a^e / de = a^e log a, taken as 0 where a == 0 and e >= 0 (real e) as in PyTorch
        if (c.needs_grad(1)) {
          Tensor nonneg = e.is_complex() ? (e.imag() == 0) & (e.real() >= 0) : e >= 0;
          ge = where((a == 0) & nonneg, zero, g[0] * (c.output(0) * a.log()).conj());
        }
        return std::vector<Tensor>{ga, ge};
      });
}

Tensor pow(const Tensor& a, const Scalar& e) {
  const Dtype dt = detail::result_type(a, e);
  if (dt == Dtype::Bool) throw Error("pow", "not implemented for a bool tensor and a bool exponent");
  if (dt == Dtype::Int64 && e.to_int() < 0)
    throw Error("pow", "integers to negative integer powers are not allowed (exponent " + detail::scalar_str(e) + ")");
  return detail::apply_op(
      "pow", {a}, detail::kSaveInputs,
      [e, dt](detail::TensorList in) { return detail::pow_scalar_kernel(in[0], e, dt); },
      [e](const detail::Ctx& c, const std::vector<Tensor>& g) {
        if (!e.to_bool()) return std::vector<Tensor>{zeros_like(g[0])};
        return std::vector<Tensor>{g[0] * (pow(c.input(0), detail::minus_one(e)) * e).conj()};
      });
}

Tensor pow(const Scalar& a, const Tensor& e) { return pow(detail::wrap_for(e, a), e); }

Tensor Tensor::pow(const Tensor& o) const { return phasor::pow(*this, o); }
Tensor Tensor::pow(const Scalar& e) const { return phasor::pow(*this, e); }

// ---- maximum / minimum -------------------------------------------------------------------------------------
namespace detail {
namespace {

struct MaxF {
  template <class T>
    requires(!is_complex_v<T>)
  T operator()(T a, T b) const { return maximum_of(a, b); }
};
struct MinF {
  template <class T>
    requires(!is_complex_v<T>)
  T operator()(T a, T b) const { return minimum_of(a, b); }
};

Tensor min_max(const char* name, const Tensor& a, const Tensor& b, bool is_max) {
  return apply_op(
      name, {a, b}, kSaveInputs,
      [name, is_max](detail::TensorList in) {
        const Dtype dt = result_type(in);
        if (phasor::is_complex(dt)) throw Error(name, std::string("not supported for complex tensors (got ") + dtype_name(dt) + ")");
        return is_max ? binary_kernel(in[0], in[1], dt, name, MaxF{}) : binary_kernel(in[0], in[1], dt, name, MinF{});
      },
      // the loser gets nothing, ties split the gradient evenly (as PyTorch)
      [is_max](const Ctx& c, const std::vector<Tensor>& g) {
        Tensor a = c.input(0), b = c.input(1), zero = zero_scalar_like(g[0]);
        Tensor tie = a == b, half = g[0] * 0.5;
        Tensor ga, gb;
        if (c.needs_grad(0)) ga = where(tie, half, where(is_max ? a < b : a > b, zero, g[0]));
        if (c.needs_grad(1)) gb = where(tie, half, where(is_max ? a > b : a < b, zero, g[0]));
        return std::vector<Tensor>{ga, gb};
      });
}

}  // namespace
}  // namespace detail

Tensor maximum(const Tensor& a, const Tensor& b) { return detail::min_max("maximum", a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return detail::min_max("minimum", a, b, false); }
Tensor Tensor::maximum(const Tensor& o) const { return phasor::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return phasor::minimum(*this, o); }

// ---- complex / polar -------------------------------------------------------------------------------------------
namespace {
void check_real_pair(const char* op, const Tensor& a, const Tensor& b, const char* na, const char* nb) {
  if (!is_floating(a.dtype()) || a.dtype() != b.dtype())
    throw Error(op, std::string("expected ") + na + " and " + nb + " to be float32 or float64 tensors of the same dtype, got " +
                        dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
}
}  // namespace

Tensor complex(const Tensor& re, const Tensor& im) {
  check_real_pair("complex", re, im, "real", "imag");
  return detail::apply_op(
      "complex", {re, im}, detail::kSaveNone,
      [](detail::TensorList in) {
        return detail::binary_kernel(in[0], in[1], in[0].dtype(), "complex",
                                     []<class T>(T r, T i) requires detail::is_real_float_v<T> { return std::complex<T>(r, i); });
      },
      // real part gets Re g, imaginary part Im g = Re(-i g) (the engine keeps the real part)
      [](const detail::Ctx&, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{g[0], g[0] * Scalar(std::complex<double>(0, -1))};
      });
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  check_real_pair("polar", abs, angle, "abs", "angle");
  return detail::apply_op(
      "polar", {abs, angle}, detail::kSaveInputs | detail::kSaveOutputs,
      [](detail::TensorList in) {
        return detail::binary_kernel(in[0], in[1], in[0].dtype(), "polar",
                                     []<class T>(T r, T t) requires detail::is_real_float_v<T> {
                                       return std::complex<T>(r * std::cos(t), r * std::sin(t));
                                     });
      },
      // w = r e^(it): dw/dr = e^(it), dw/dt = i w; a real input gets Re(g conj(dw/dx))
      [](const detail::Ctx& c, const std::vector<Tensor>& g) {
        Tensor t = c.input(1);
        Tensor gr = c.needs_grad(0) ? g[0] * complex(t.cos(), -t.sin()) : Tensor();
        Tensor gt = c.needs_grad(1) ? g[0] * c.output(0).conj() * Scalar(std::complex<double>(0, -1)) : Tensor();
        return std::vector<Tensor>{gr, gt};
      });
}

}  // namespace phasor
