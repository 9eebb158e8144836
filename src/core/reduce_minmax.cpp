// src/core/reduce_minmax.cpp - max/min (full and along a dim), amax/amin, argmax/argmin.
//
// Gradients follow PyTorch: full max/min and amax/amin split the gradient evenly among the
// tied extreme elements (a NaN result selects the NaN elements); max/min along a dim send it
// to the returned index. The masks are constants, so these gradients are linear in the
// incoming gradient and double backward works.
#include <cmath>
#include <tuple>

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

/// Throws naming `op` for a complex x (no order), pointing to abs() and real().
void check_ordered(const Tensor& x, const char* op) {
  if (x.is_complex())
    throw Error(op, std::string("not defined for complex input (got ") + dtype_name(x.dtype()) +
                        "); compare abs() or real() instead");
}

Tensor extremum_kernel(const Tensor& x, const Shape& dims, bool keepdim, bool is_max, const char* op) {
  check_ordered(x, op);
  if (x.device().is_cuda()) {
    check_nonempty(x, dims, op);
    return phasor::cuda::detail::reduce(is_max ? "amax" : "amin", x, dims, keepdim, x.dtype());
  }
  ReduceLayout L = plan_layout(x, dims, keepdim, op);
  check_nonempty(L, op);
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      throw Error(op, "internal: complex input reached the max/min kernel");
    } else {
      if (is_max) return run_reduce(x, L, ExtremumOp<T, true>{});
      return run_reduce(x, L, ExtremumOp<T, false>{});
    }
  });
}

/// Constant weights (x's dtype) that split a gradient evenly among the positions of x equal to
/// their reduced value `r_keep` (keepdim shape); NaN matches NaN. Public ops: runs on any device.
Tensor tie_weights(const Tensor& x, const Tensor& r_keep, const Shape& dims) {
  if (!is_floating(x.dtype())) throw Error("max", "internal: gradient of max/min needs a floating tensor");
  Tensor m;
  {
    NoGradGuard ng;
    const Tensor a = x.detach(), b = r_keep.detach();
    m = ((a == b) | (a.isnan() & b.isnan())).to(x.dtype());
  }
  return m / sum(m, dims, true);
}

/// Gradient of amax/amin/max/min: g spread evenly over the ties.
G extremum_backward(const Ctx& c, const G& g, const Shape& dims, bool keepdim, const char* op) {
  Tensor x = c.input(0);
  Tensor out = unsqueeze_reduced(c.output(0).detach(), x.shape(), dims, keepdim, op);
  Tensor gk = unsqueeze_reduced(g[0], x.shape(), dims, keepdim, op);
  return G{gk * tie_weights(x, out, dims)};
}

Tensor extremum(const char* op, const Tensor& x, const Shape& dims, bool keepdim, bool is_max) {
  return apply_op(
      op, {x}, kSaveInputs | kSaveOutputs, [dims, keepdim, is_max, op](In in) { return extremum_kernel(in[0], dims, keepdim, is_max, op); },
      [dims, keepdim, op](const Ctx& c, const G& g) { return extremum_backward(c, g, dims, keepdim, op); });
}

/// Index of the first maximum (or minimum) of r[0..n); a NaN counts as the extreme.
template <class T, bool Max>
std::int64_t arg_scan(const T* r, std::int64_t n) {
  std::int64_t bi = 0;
  T best = r[0];
  if constexpr (std::is_floating_point_v<T>)
    if (best != best) return 0;
  for (std::int64_t i = 1; i < n; ++i) {
    const T v = r[i];
    if constexpr (std::is_floating_point_v<T>)
      if (v != v) return i;
    if (Max ? (v > best) : (v < best)) {
      best = v;
      bi = i;
    }
  }
  return bi;
}

void arg_rows_cpu(const ReducePlan& p, Tensor& idx, Tensor& val, bool is_max);

/// (values, indices) of the max/min along `dim` (dim = nullopt: over the flattened tensor).
std::pair<Tensor, Tensor> arg_kernel(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim, bool is_max,
                                     const char* op, bool want_values) {
  check_ordered(x, op);
  std::int64_t d = 0;
  Tensor src = x;
  if (dim) {
    d = wrap_dim(*dim, x.dim(), op);
  } else {
    NoGradGuard ng;
    src = x.reshape({-1});
  }
  if (src.dim() > 0 && src.shape()[static_cast<std::size_t>(d)] == 0)
    throw Error(op, "cannot reduce over an empty dim: input shape " + shape_str(x.shape()) +
                        (dim ? ", dim " + std::to_string(*dim) : std::string(" (flattened)")) +
                        " (the operation has no identity)");
  Tensor idx, val;
  if (x.device().is_cuda()) {
    std::tie(val, idx) = phasor::cuda::detail::arg_reduce(op, src, d, dim ? keepdim : false, is_max, want_values);
  } else {
    ReducePlan p = plan_reduce(src, Shape{d}, dim ? keepdim : false, op);
    idx = make_tensor(p.out_shape, Dtype::Int64, x.device());
    if (want_values) val = make_tensor(p.out_shape, x.dtype(), x.device());
    arg_rows_cpu(p, idx, val, is_max);
  }
  if (!dim && keepdim) {
    Shape ones(static_cast<std::size_t>(x.dim()), 1);
    idx = idx.reshape(ones);
    if (want_values) val = val.reshape(ones);
  }
  return {val, idx};
}

/// idx (and val, when defined) of the first max/min of each of p's rows.
void arg_rows_cpu(const ReducePlan& p, Tensor& idx, Tensor& val, bool is_max) {
  const bool want_values = val.defined();
  visit_dtype(p.rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      auto* ip = static_cast<std::int64_t*>(idx.data_ptr());
      T* vp = want_values ? static_cast<T*>(val.data_ptr()) : nullptr;
      const T* base = static_cast<const T*>(p.rows.data_ptr());
      const std::int64_t outer = p.outer, inner = p.inner;
      const int threads = reduce_threads(outer * inner) > 1 && outer > 1 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t o = 0; o < outer; ++o) {
        const T* r = base + o * inner;
        const std::int64_t k = is_max ? arg_scan<T, true>(r, inner) : arg_scan<T, false>(r, inner);
        ip[o] = k;
        if (vp) vp[o] = r[k];
      }
    }
  });
}

/// Constant one-hot weights (dtype dt, shape `shape`, idx's device) with a 1 at idx (keepdim shape)
/// along dim d: positions along d compared with idx. Public ops: runs on any device.
Tensor onehot_along(const Shape& shape, Dtype dt, std::int64_t d, const Tensor& idx) {
  if (shape.empty()) return ones({}, dt, idx.device());  // a 0-dim tensor: its only element
  Shape at(shape.size(), 1);
  at[static_cast<std::size_t>(d)] = shape[static_cast<std::size_t>(d)];
  const Tensor pos = arange(shape[static_cast<std::size_t>(d)], Dtype::Int64, idx.device()).reshape(at);
  return (pos == idx).to(dt).expand(shape).contiguous();
}

std::tuple<Tensor, Tensor> extremum_dim(const char* op, const Tensor& x, std::int64_t dim, bool keepdim, bool is_max) {
  const std::int64_t d = wrap_dim(dim, x.dim(), op);
  auto outs = apply_op_n(
      op, {x}, kSaveOutputs,
      [dim, keepdim, is_max, op](In in) {
        auto [v, i] = arg_kernel(in[0], dim, keepdim, is_max, op, true);
        return G{v, i};
      },
      [d, keepdim, op](const Ctx& c, const G& g) {
        const Shape& xs = c.input_shape(0);
        Tensor idx = unsqueeze_reduced(c.output(1), xs, Shape{d}, keepdim, op);
        Tensor gk = unsqueeze_reduced(g[0], xs, Shape{d}, keepdim, op);
        Tensor w;
        {
          NoGradGuard ng;
          w = onehot_along(xs, c.input_dtype(0), xs.empty() ? 0 : d, idx);
        }
        return G{gk * w};
      });
  return {outs[0], outs[1]};
}

}  // namespace
}  // namespace detail

Tensor max(const Tensor& x) { return detail::extremum("max", x, {}, false, true); }
Tensor min(const Tensor& x) { return detail::extremum("min", x, {}, false, false); }
Tensor amax(const Tensor& x, const Shape& dims, bool keepdim) { return detail::extremum("amax", x, dims, keepdim, true); }
Tensor amin(const Tensor& x, const Shape& dims, bool keepdim) { return detail::extremum("amin", x, dims, keepdim, false); }

std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim) {
  return detail::extremum_dim("max", x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim) {
  return detail::extremum_dim("min", x, dim, keepdim, false);
}

Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return detail::apply_op(
      "argmax", {x}, detail::kSaveNone,
      [dim, keepdim](In in) { return detail::arg_kernel(in[0], dim, keepdim, true, "argmax", false).second; },
      [](const detail::Ctx&, const G&) { return G{Tensor()}; });  // int64 result: no gradient
}
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return detail::apply_op(
      "argmin", {x}, detail::kSaveNone,
      [dim, keepdim](In in) { return detail::arg_kernel(in[0], dim, keepdim, false, "argmin", false).second; },
      [](const detail::Ctx&, const G&) { return G{Tensor()}; });
}

Tensor Tensor::max() const { return phasor::max(*this); }
Tensor Tensor::min() const { return phasor::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const { return phasor::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(std::int64_t dim, bool keepdim) const { return phasor::min(*this, dim, keepdim); }
Tensor Tensor::amax(const Shape& dims, bool keepdim) const { return phasor::amax(*this, dims, keepdim); }
Tensor Tensor::amin(const Shape& dims, bool keepdim) const { return phasor::amin(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<std::int64_t> dim, bool keepdim) const { return phasor::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<std::int64_t> dim, bool keepdim) const { return phasor::argmin(*this, dim, keepdim); }

}  // namespace phasor
