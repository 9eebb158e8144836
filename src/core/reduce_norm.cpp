// src/core/reduce_norm.cpp - vector norms (p = 0, 1, 2, inf, -inf, any p > 0, "fro").
//
// Note [norm gradients]
// With s = sgn(x) = x / |x| (0 at 0) and n the norm:
//   p = 2:      g * x / n             (0 where n == 0, like PyTorch)
//   p = 1:      g * s
//   p = +-inf:  g * s spread evenly over the elements with |x| == n
//   other p:    g * s |x|^(p-1) / n^(p-1)
//   p = 0:      zero (a count)
// The two power helpers below are internal differentiable primitives (|x|^q and s |x|^q, with
// real and complex Wirtinger gradients), so every norm gradient is differentiable again. Their
// forwards and the gradients' constant masks are compositions of public ops, so the same code runs
// on CPU and CUDA tensors (the norms themselves: run_reduce on the CPU, src/cuda/reduce.cu on CUDA).
#include <cmath>
#include <limits>

#include "autodiff/node.hpp"
#include "core/reduce.hpp"
#include "cuda/ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

Tensor sgn_abs_pow(const Tensor& x, double q);

/// |x|^q (real dtype); 0^q is taken as 0 for q != 0 and 1 for q == 0 (gradients at 0 are 0).
Tensor abs_pow(const Tensor& x, double q) {
  return apply_op(
      "abs_pow", {x}, kSaveInputs,
      [q](In in) {
        if (!is_floating_or_complex(in[0].dtype())) throw Error("norm", "internal: abs_pow needs a floating tensor");
        const Tensor a = in[0].abs();
        if (q == 0) return ones_like(a);
        if (q == 1) return a;
        return where(a == 0.0, zeros_like(a), pow(a, q));  // 0^q = 0 also for q < 0
      },
      [q](const Ctx& c, const G& g) {
        if (q == 0) return G{Tensor()};
        return G{g[0] * sgn_abs_pow(c.input(0), q - 1) * q};
      });
}

/// sgn(x) |x|^q (x's dtype, sgn(z) = z / |z|); 0 at x == 0.
Tensor sgn_abs_pow(const Tensor& x, double q) {
  return apply_op(
      "sgn_abs_pow", {x}, kSaveInputs,
      [q](In in) {
        const Tensor& x = in[0];
        if (!is_floating_or_complex(x.dtype())) throw Error("norm", "internal: sgn_abs_pow needs a floating tensor");
        const Tensor a = x.abs();
        const Tensor f = q == 0 ? ones_like(a) : q == 1 ? a : pow(a, q);
        return where(a == 0.0, zeros_like(x), x * (f / a));  // f / a is NaN or inf only where a == 0
      },
      [q](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        if (!x.is_complex()) {
          if (q == 0) return G{Tensor()};
          return G{g[0] * abs_pow(x, q - 1) * q};
        }
        // f(z) = z |z|^(q-1): df/dz = (q+1)/2 |z|^(q-1), df/dz* = (q-1)/2 z^2 |z|^(q-3);
        // grad = conj(g) df/dz* + g conj(df/dz)
        return G{g[0].conj() * x * sgn_abs_pow(x, q - 2) * ((q - 1) / 2) + g[0] * abs_pow(x, q - 1) * ((q + 1) / 2)};
      });
}

enum class NormKind { Zero, One, Two, Inf, NegInf, P };

template <class T, NormKind K>
struct NormOp {
  using R = real_t<T>;
  using in_t = T;
  using acc_t = R;
  using param_t = NoParam;
  using out_t = R;
  static constexpr int kLanes = lanes_for<R>;
  R p = 0;
  R identity() const {
    if constexpr (K == NormKind::NegInf) return std::numeric_limits<R>::infinity();
    else return R(0);
  }
  R map(const T& v, NoParam) const {
    if constexpr (K == NormKind::Zero) {
      return v != T(0) ? R(1) : R(0);
    } else if constexpr (K == NormKind::Two) {
      if constexpr (is_complex_v<T>) return v.real() * v.real() + v.imag() * v.imag();
      else return v * v;
    } else if constexpr (K == NormKind::P) {
      return std::pow(std::abs(v), p);
    } else {
      return std::abs(v);
    }
  }
  R combine(R a, R b) const {
    if constexpr (K == NormKind::Inf) return reduce_max(a, b);
    else if constexpr (K == NormKind::NegInf) return reduce_min(a, b);
    else return a + b;
  }
  R finalize(R a, NoParam) const {
    if constexpr (K == NormKind::Two) return std::sqrt(a);
    else if constexpr (K == NormKind::P) return std::pow(a, 1 / p);
    else return a;
  }
};

NormKind kind_of(double p) {
  if (p == 0) return NormKind::Zero;
  if (p == 1) return NormKind::One;
  if (p == 2) return NormKind::Two;
  if (p == std::numeric_limits<double>::infinity()) return NormKind::Inf;
  if (p == -std::numeric_limits<double>::infinity()) return NormKind::NegInf;
  return NormKind::P;
}

Tensor norm_kernel(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  const NormKind k = kind_of(p);
  if (x.device().is_cuda()) {
    if (k == NormKind::Inf || k == NormKind::NegInf) check_nonempty(x, dims, "norm");
    return phasor::cuda::detail::reduce_stat("norm", x, dims, keepdim, p);
  }
  ReduceLayout L = plan_layout(x, dims, keepdim, "norm");
  if (k == NormKind::Inf || k == NormKind::NegInf) check_nonempty(L, "norm");
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_float_v<T> || is_complex_v<T>) {
      using R = real_t<T>;
      switch (k) {
        case NormKind::Zero: return run_reduce(x, L, NormOp<T, NormKind::Zero>{});
        case NormKind::One: return run_reduce(x, L, NormOp<T, NormKind::One>{});
        case NormKind::Two: return run_reduce(x, L, NormOp<T, NormKind::Two>{});
        case NormKind::Inf: return run_reduce(x, L, NormOp<T, NormKind::Inf>{});
        case NormKind::NegInf: return run_reduce(x, L, NormOp<T, NormKind::NegInf>{});
        default: return run_reduce(x, L, NormOp<T, NormKind::P>{static_cast<R>(p)});
      }
    } else {
      throw Error("norm", "internal: integer input reached the norm kernel");
    }
  });
}

/// Constant (real dtype) indicator of n == 0, so that x / (n + zero_mask(n)) is 0 where n is.
Tensor zero_mask(const Tensor& n) {
  NoGradGuard ng;
  return (n.detach() == 0.0).to(n.dtype());
}

/// Constant weights splitting a gradient evenly over the elements with |x| == n (NaN matches NaN).
Tensor abs_tie_weights(const Tensor& x, const Tensor& n_keep, const Shape& dims) {
  Tensor m;
  {
    NoGradGuard ng;
    const Tensor a = x.detach().abs(), b = n_keep.detach();
    m = ((a == b) | (a.isnan() & b.isnan())).to(to_real(x.dtype()));
  }
  return m / sum(m, dims, true);
}

Tensor norm_impl(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  if (!is_floating_or_complex(x.dtype()))
    throw Error("norm", std::string("expected a floating or complex tensor, got ") + dtype_name(x.dtype()));
  if (std::isnan(p) || (p < 0 && p != -std::numeric_limits<double>::infinity()))
    throw Error("norm", "p must be >= 0, inf or -inf, got " + std::to_string(p));
  return apply_op(
      "norm", {x}, kSaveInputs | kSaveOutputs, [p, dims, keepdim](In in) { return norm_kernel(in[0], p, dims, keepdim); },
      [p, dims, keepdim](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        const NormKind k = kind_of(p);
        if (k == NormKind::Zero) return G{zeros(x.shape(), to_real(x.dtype()), x.device())};
        Tensor gk = unsqueeze_reduced(g[0], x.shape(), dims, keepdim, "norm");
        if (k == NormKind::One) return G{gk * sgn_abs_pow(x, 0)};
        Tensor nk = unsqueeze_reduced(c.output(0), x.shape(), dims, keepdim, "norm");
        Tensor safe = nk + zero_mask(nk);
        switch (k) {
          case NormKind::Two: return G{gk * x / safe};
          case NormKind::Inf:
          case NormKind::NegInf: return G{gk * abs_tie_weights(x, nk, dims) * x / safe};
          default: return G{gk * sgn_abs_pow(x, p - 1) / abs_pow(safe, p - 1)};
        }
      });
}

}  // namespace
}  // namespace detail

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  return detail::norm_impl(x, p, dims, keepdim);
}

Tensor norm(const Tensor& x, const std::string& p, const Shape& dims, bool keepdim) {
  if (p != "fro") throw Error("norm", "unsupported norm '" + p + "'; use \"fro\" or a number p");
  return detail::norm_impl(x, 2, dims, keepdim);
}

Tensor Tensor::norm(double p, const Shape& dims, bool keepdim) const { return phasor::norm(*this, p, dims, keepdim); }

}  // namespace phasor
