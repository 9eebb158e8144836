// src/core/reduce.cpp - sum, mean and sum_to (the reductions autodiff itself needs).
#include <algorithm>

#include "autodiff/node.hpp"
#include "core/promotion.hpp"
#include "core/reduce.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;

namespace detail {

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

Tensor sum_kernel(const Tensor& x, const Shape& dims, bool keepdim) {
  ReducePlan p = plan_reduce(x, dims, keepdim, "sum");
  const Dtype od = sum_dtype(x.dtype());
  Tensor rows = p.rows.to(od);
  p.rows = rows;
  Tensor out = make_tensor(p.out_shape, od, x.device());
  visit_dtype(od, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      T* o = static_cast<T*>(out.data_ptr());
      if (p.outer == 1) o[0] = sum_parallel<T>(static_cast<const T*>(rows.data_ptr()), p.inner);
      else reduce_rows<T, T>(p, o, [](const T* r, std::int64_t n) { return sum_contiguous<T>(r, n); });
    }
  });
  return out;
}

}  // namespace detail

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  return detail::apply_op(
      "sum", {x}, detail::kSaveNone, [&](const G& in) { return detail::sum_kernel(in[0], dims, keepdim); },
      [dims, keepdim](const detail::Ctx& c, const G& g) {
        const Shape& in_shape = c.input_shape(0);
        Tensor gg = g[0];
        if (!keepdim) {
          // put the reduced dims back as size 1, then broadcast
          auto wd = detail::wrap_dims(dims, static_cast<std::int64_t>(in_shape.size()), "sum", true);
          Shape ks = in_shape;
          for (auto d : wd) ks[static_cast<std::size_t>(d)] = 1;
          gg = gg.reshape(ks);
        }
        return G{gg.expand(in_shape)};
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

}  // namespace phasor
