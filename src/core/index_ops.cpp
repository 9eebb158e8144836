// src/core/index_ops.cpp - index_select and its adjoint index_add (gather/scatter along one dim).
#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;

namespace detail {
namespace {

void check_index(const Tensor& index, std::int64_t size, const char* op) {
  if (index.dtype() != Dtype::Int64)
    throw Error(op, std::string("index must be int64, got ") + dtype_name(index.dtype()));
  if (index.dim() > 1) throw Error(op, "index must be 1-D, got shape " + shape_str(index.shape()));
  Tensor ic = index.contiguous();
  const auto* p = ic.data<std::int64_t>();
  for (std::int64_t i = 0; i < ic.numel(); ++i)
    if (p[i] < -size || p[i] >= size)
      throw Error(op, "index " + std::to_string(p[i]) + " out of range for a dim of size " + std::to_string(size));
}

/// Copies (or adds, when `accumulate`) slices src.select(dim, k) <-> dst.select(dim, index[k]).
void index_copy_kernel(const Tensor& dst, const Tensor& src, std::int64_t dim, const Tensor& index, bool gather,
                       bool accumulate) {
  Tensor ic = index.reshape({-1}).contiguous();
  const auto* p = ic.data<std::int64_t>();
  const std::int64_t n = gather ? dst.size(dim) : src.size(dim);
  const std::int64_t big = gather ? src.size(dim) : dst.size(dim);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t j = p[k] < 0 ? p[k] + big : p[k];
    if (gather) {
      copy_into(make_view(dst, dst.shape(), dst.strides(), dst.storage_offset()).select(dim, k), src.select(dim, j));
    } else {
      Tensor d = dst.select(dim, j), s = src.select(dim, k);
      if (accumulate) {
        visit_dtype(dst.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          map_binary_into<T, T, T>(d, d, s, [](T a, T b) {
            if constexpr (std::is_same_v<T, bool>) return T(a || b);
            else return T(a + b);
          });
        });
      } else {
        copy_into(d, s);
      }
    }
  }
}

}  // namespace
}  // namespace detail

/// out = x with src's slices added at positions index along dim (adjoint of index_select).
Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src) {
  const auto d = detail::wrap_dim(dim, x.dim(), "index_add");
  detail::check_index(index, x.dim() == 0 ? 1 : x.size(d), "index_add");
  return detail::apply_op(
      "index_add", {x, src}, detail::kSaveNone,
      [&](const G& in) {
        NoGradGuard ng;
        Tensor out = in[0].clone();
        detail::index_copy_kernel(out, in[1].to(out.dtype()), d, index, false, true);
        return out;
      },
      [d, index](const detail::Ctx&, const G& g) { return G{g[0], index_select(g[0], d, index)}; });
}

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  detail::check_cpu(x, "index_select");
  if (x.dim() == 0) throw Error("index_select", "cannot index a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "index_select");
  detail::check_index(index, x.size(d), "index_select");
  return detail::apply_op(
      "index_select", {x}, detail::kSaveNone,
      [&](const G& in) {
        Shape s = in[0].shape();
        s[static_cast<std::size_t>(d)] = index.numel();
        Tensor out = detail::make_tensor(s, in[0].dtype(), in[0].device());
        NoGradGuard ng;
        detail::index_copy_kernel(out, in[0], d, index, true, false);
        return out;
      },
      [d, index](const detail::Ctx& c, const G& g) {
        return G{index_add(zeros(c.input_shape(0), g[0].dtype(), g[0].device()), d, index, g[0])};
      });
}

}  // namespace phasor
