// src/core/reduce.cpp - reduction layout planning, and sum, mean, prod, all, any, sum_to.
#include <algorithm>
#include <limits>

#include "autodiff/node.hpp"
#include "core/promotion.hpp"
#include "core/reduce.hpp"
#include "cuda/ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {

ReduceLayout plan_layout(const Tensor& x, const Shape& dims, bool keepdim, const char* op) {
  check_cpu(x, op);
  if (x.dim() > kMaxReduceDims)
    throw Error(op, "tensors with more than " + std::to_string(kMaxReduceDims) + " dims are not supported (got " +
                        std::to_string(x.dim()) + ")");
  ReduceLayout L;
  L.in_shape = x.shape();
  L.dims = wrap_dims(dims, x.dim(), op, true);
  std::sort(L.dims.begin(), L.dims.end());
  const auto nd = static_cast<std::size_t>(x.dim());
  std::vector<bool> is_red(nd, false);
  for (auto d : L.dims) is_red[static_cast<std::size_t>(d)] = true;
  for (std::size_t d = 0; d < nd; ++d) {
    const auto sz = x.shape()[d];
    if (is_red[d]) {
      L.n_red *= sz;
      L.keep_shape.push_back(1);
      if (keepdim) L.out_shape.push_back(1);
    } else {
      L.n_out *= sz;
      L.keep_shape.push_back(sz);
      L.out_shape.push_back(sz);
    }
  }
  // dims of size > 1, innermost first; sorted by input stride (broadcast dims last), then merged
  const Shape ost = contiguous_strides(L.keep_shape);
  struct D {
    RDim r;
    bool red;
  };
  std::vector<D> ds;
  for (std::size_t i = nd; i-- > 0;) {
    if (x.shape()[i] == 1) continue;
    ds.push_back(D{RDim{x.shape()[i], x.strides()[i], is_red[i] ? 0 : ost[i]}, static_cast<bool>(is_red[i])});
  }
  auto key = [](const D& d) {
    return d.r.in_stride == 0 ? std::numeric_limits<std::int64_t>::max() : std::abs(d.r.in_stride);
  };
  std::stable_sort(ds.begin(), ds.end(), [&](const D& a, const D& b) { return key(a) < key(b); });
  std::vector<D> merged;
  for (const D& d : ds) {
    if (!merged.empty()) {
      D& m = merged.back();
      if (m.red == d.red && d.r.in_stride == m.r.in_stride * m.r.size &&
          (d.red || d.r.out_stride == m.r.out_stride * m.r.size)) {
        m.r.size *= d.r.size;
        continue;
      }
    }
    merged.push_back(d);
  }
  for (const D& d : merged) (d.red ? L.red : L.kept).push_back(d.r);
  L.inner = L.kept.empty() || (!merged.empty() && merged.front().red);
  if (L.red.empty()) L.red.push_back(RDim{1, 0, 0});
  return L;
}

namespace {
/// "[op] cannot reduce over an empty dim: input shape ..., reduced dims ..." (dims wrapped and sorted).
[[noreturn]] void throw_empty_reduction(const char* op, const Shape& in_shape, const std::vector<std::int64_t>& dims) {
  throw Error(op, "cannot reduce over an empty dim: input shape " + shape_str(in_shape) + ", reduced dims " +
                      shape_str(Shape(dims.begin(), dims.end())) + " (the operation has no identity)");
}
}  // namespace

void check_nonempty(const ReduceLayout& L, const char* op) {
  if (L.n_red != 0) return;
  throw_empty_reduction(op, L.in_shape, L.dims);
}

void check_nonempty(const Tensor& x, const Shape& dims, const char* op) {
  std::vector<std::int64_t> wd = wrap_dims(dims, x.dim(), op, true);
  std::int64_t n = 1;
  for (auto d : wd) n *= x.shape()[static_cast<std::size_t>(d)];
  if (n != 0) return;
  std::sort(wd.begin(), wd.end());
  throw_empty_reduction(op, x.shape(), wd);
}

Shape keep_shape_of(const Shape& in_shape, const Shape& dims, const char* op) {
  auto wd = wrap_dims(dims, static_cast<std::int64_t>(in_shape.size()), op, true);
  Shape ks = in_shape;
  for (auto d : wd) ks[static_cast<std::size_t>(d)] = 1;
  return ks;
}

Tensor unsqueeze_reduced(const Tensor& r, const Shape& in_shape, const Shape& dims, bool keepdim, const char* op) {
  if (keepdim) return r;
  return r.reshape(keep_shape_of(in_shape, dims, op));
}

ReducePlan plan_reduce(const Tensor& x, const Shape& dims, bool keepdim, const char* op) {
  check_cpu(x, op);
  ReducePlan p;
  p.dims = wrap_dims(dims, x.dim(), op, true);
  std::sort(p.dims.begin(), p.dims.end());
  std::vector<bool> red(static_cast<std::size_t>(x.dim()), false);
  for (auto d : p.dims) red[static_cast<std::size_t>(d)] = true;
  Shape perm;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const auto sz = x.shape()[static_cast<std::size_t>(d)];
    if (red[static_cast<std::size_t>(d)]) {
      p.inner *= sz;
      p.keep_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.outer *= sz;
      perm.push_back(d);
      p.keep_shape.push_back(sz);
      p.out_shape.push_back(sz);
    }
  }
  for (auto d : p.dims) perm.push_back(d);
  NoGradGuard ng;
  p.rows = (perm.empty() ? x : x.permute(perm)).contiguous();
  return p;
}

/// Sum's dtype: bool/int64 -> int64, floats and complex keep theirs.
Dtype sum_dtype(Dtype t) { return t == Dtype::Bool ? Dtype::Int64 : t; }

namespace {

Tensor sum_kernel(const Tensor& x, const Shape& dims, bool keepdim) {
  if (x.device().is_cuda()) return phasor::cuda::detail::reduce("sum", x, dims, keepdim, sum_dtype(x.dtype()));
  ReduceLayout L = plan_layout(x, dims, keepdim, "sum");
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) return run_reduce(x, L, SumOp<bool, std::int64_t>{});
    else return run_reduce(x, L, SumOp<T, T>{});
  });
}

Tensor prod_kernel(const Tensor& x, const Shape& dims, bool keepdim) {
  if (x.device().is_cuda()) return phasor::cuda::detail::reduce("prod", x, dims, keepdim, sum_dtype(x.dtype()));
  ReduceLayout L = plan_layout(x, dims, keepdim, "prod");
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) return run_reduce(x, L, ProdOp<bool, std::int64_t>{});
    else return run_reduce(x, L, ProdOp<T, T>{});
  });
}

template <bool All>
Tensor bool_kernel(const Tensor& x, const Shape& dims, bool keepdim, const char* op) {
  if (x.device().is_cuda()) return phasor::cuda::detail::reduce(All ? "all" : "any", x, dims, keepdim, Dtype::Bool);
  ReduceLayout L = plan_layout(x, dims, keepdim, op);
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    return run_reduce(x, L, BoolOp<T, All>{});
  });
}

// Note [prod gradient with zeros]
// d prod / d x_i is the product of the others, o_i = prod_{j != i} x_j. With no zero in a row
// it is out / x_i. Otherwise let m be the (constant) indicator of zeros, c the zeros per row,
// y = x + m (no zeros, dy/dx = 1), P = prod(y) and s = sum(m * x) (value 0, derivative 1 at
// the zeros). Then, exactly in value and first derivative (so double backward is right too):
//   c == 1: o_i = P / y_i at the zero, P / y_i * s elsewhere;
//   c == 2: o_i = P / y_i * (s - x_i) at the zeros (= the other zero), 0 elsewhere;
//   c >= 3: o_i = 0.
// i.e. o = P / y * (A + B s + C (s - x)) with constant masks A, B, C built from m and c.
// Eagerly a host read of whether x has a zero picks out / x when it has none. Recorded into a trace (a gradient
// taken inside a traced function) a host read would be frozen (Note [value steps]), so there both are computed and
// where(c == 0, out / y, o) picks per row: out / y is out / x on a row without zeros (y = x there), and the same
// value as o (P is out then); a row with zeros takes o, as eagerly.
Tensor prod_others(const Tensor& x, const Tensor& out_keep, const Shape& dims) {
  const Dtype rd = to_real(x.dtype());
  const bool value_free = tracing();
  Tensor m, A, B, C, none;
  bool has_zeros = value_free;
  {
    // constant masks from public ops, so this runs on CPU and CUDA tensors alike
    NoGradGuard ng;
    m = (x.detach() == 0.0).to(rd);
    const Tensor cnt = sum(m, dims, true);
    if (!value_free) has_zeros = cnt.sum().item<double>() != 0;
    if (has_zeros) {
      const Tensor c1 = (cnt == 1.0).to(rd);
      A = (cnt == 0.0).to(rd) + c1 * m;
      B = c1 * (1.0 - m);
      C = (cnt == 2.0).to(rd) * m;
    }
    if (value_free) none = cnt == 0.0;
  }
  if (!has_zeros) return out_keep / x;
  Tensor y = x + m;
  Tensor P = prod(y, dims, true);
  Tensor s = sum(x * m, dims, true);
  Tensor o = P / y * (A + B * s + C * (s - x));
  return value_free ? where(none, out_keep / y, o) : o;
}

}  // namespace
}  // namespace detail

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::apply_op(
      "sum", {x}, detail::kSaveNone, [dims, keepdim](In in) { return detail::sum_kernel(in[0], dims, keepdim); },
      [dims, keepdim](const detail::Ctx& c, const G& g) {
        const Shape& in_shape = c.input_shape(0);
        return G{detail::unsqueeze_reduced(g[0], in_shape, dims, keepdim, "sum").expand(in_shape)};
      });
}

Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::composite("mean", {x}, [&] {
    if (!is_floating_or_complex(x.dtype()))
      throw Error("mean", std::string("expected a floating or complex tensor, got ") + dtype_name(x.dtype()));
    auto wd = detail::wrap_dims(dims, x.dim(), "mean", true);
    std::int64_t n = 1;
    for (auto d : wd) n *= x.shape()[static_cast<std::size_t>(d)];
    return sum(x, dims, keepdim) / static_cast<double>(n);
  });
}

Tensor prod(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::apply_op(
      "prod", {x}, detail::kSaveInputs | detail::kSaveOutputs,
      [dims, keepdim](In in) { return detail::prod_kernel(in[0], dims, keepdim); },
      [dims, keepdim](const detail::Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor out = detail::unsqueeze_reduced(c.output(0), x.shape(), dims, keepdim, "prod");
        Tensor gk = detail::unsqueeze_reduced(g[0], x.shape(), dims, keepdim, "prod");
        return G{gk * detail::prod_others(x, out, dims).conj()};
      });
}

Tensor all(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::apply_op(
      "all", {x}, detail::kSaveNone, [dims, keepdim](In in) { return detail::bool_kernel<true>(in[0], dims, keepdim, "all"); },
      [](const detail::Ctx&, const G&) { return G{Tensor()}; });
}

Tensor any(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::apply_op(
      "any", {x}, detail::kSaveNone, [dims, keepdim](In in) { return detail::bool_kernel<false>(in[0], dims, keepdim, "any"); },
      [](const detail::Ctx&, const G&) { return G{Tensor()}; });
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const auto nd = static_cast<std::int64_t>(shape.size());
  if (nd > x.dim())
    throw Error("sum_to", "cannot sum shape " + detail::shape_str(x.shape()) + " to " + detail::shape_str(shape));
  const std::int64_t lead = x.dim() - nd;
  Shape dims;
  for (std::int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (std::int64_t d = 0; d < nd; ++d) {
    const auto want = shape[static_cast<std::size_t>(d)], have = x.shape()[static_cast<std::size_t>(lead + d)];
    if (want == have) continue;
    if (want != 1)
      throw Error("sum_to", "cannot sum shape " + detail::shape_str(x.shape()) + " to " + detail::shape_str(shape));
    dims.push_back(lead + d);
  }
  if (dims.empty()) return x.reshape(shape);
  return sum(x, dims, true).reshape(shape);
}

Tensor Tensor::sum(const Shape& dims, bool keepdim) const { return phasor::sum(*this, dims, keepdim); }
Tensor Tensor::mean(const Shape& dims, bool keepdim) const { return phasor::mean(*this, dims, keepdim); }
Tensor Tensor::prod(const Shape& dims, bool keepdim) const { return phasor::prod(*this, dims, keepdim); }
Tensor Tensor::all(const Shape& dims, bool keepdim) const { return phasor::all(*this, dims, keepdim); }
Tensor Tensor::any(const Shape& dims, bool keepdim) const { return phasor::any(*this, dims, keepdim); }

}  // namespace phasor
