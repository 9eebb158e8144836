// src/core/views.cpp - view ops (share storage): reshape, permute, expand, slice, select, ...
//
// Note [view gradients]
// A view's gradient is one of three kinds:
//  - bijective views (reshape, permute, squeeze, unsqueeze, movedim): apply the inverse view;
//  - broadcasting (expand): the gradient passes through and the engine sums it back to the
//    input's shape (Note [gradient reduction]);
//  - selections (slice, select, narrow, diagonal): view_scatter puts the gradient into zeros of the
//    input's shape through the same view. view_scatter is itself a primitive whose gradient is
//    the view again, so gradients of gradients work.
#include <algorithm>
#include <numeric>
#include <utility>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

/// Marks `v` as a view of `x` (for the in-place safety check).
Tensor as_view_of(Tensor v, const Tensor& x) {
  set_view_base(v, x);
  return v;
}

template <class View>
Tensor selection_view(const char* name, const Tensor& x, View view);

/// Zeros of `shape` with `g` written through `view` (the adjoint of a selection view; diag_embed's forward). Its
/// gradient is the selection view again, as an op (differentiable, and seen by a trace).
template <class View>
Tensor view_scatter(const Tensor& g, const Shape& shape, View view, const char* name = "view_scatter") {
  return apply_op(
      name, {g}, kSaveNone,
      [shape, view](In in) {
        Tensor z = zeros(shape, in[0].dtype(), in[0].device());
        copy_into(view(z), in[0]);
        return z;
      },
      [view](const Ctx&, const G& gg) { return G{selection_view("view_scatter_backward", gg[0], view)}; });
}

/// A selection view op: forward = view(x), backward = view_scatter.
template <class View>
Tensor selection_view(const char* name, const Tensor& x, View view) {
  return apply_op(
      name, {x}, kSaveNone, [view](In in) { return as_view_of(view(in[0]), in[0]); },
      [view](const Ctx& c, const G& g) { return G{view_scatter(g[0], c.input_shape(0), view)}; });
}

// ---- raw layout computations (no autograd) ----
Tensor raw_permute(const Tensor& x, const std::vector<std::int64_t>& perm) {
  Shape s(perm.size()), st(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    s[i] = x.shape()[static_cast<std::size_t>(perm[i])];
    st[i] = x.strides()[static_cast<std::size_t>(perm[i])];
  }
  return make_view(x, s, st, x.storage_offset());
}

Tensor raw_slice(const Tensor& x, std::int64_t d, std::int64_t start, std::int64_t stop, std::int64_t step) {
  Shape s = x.shape(), st = x.strides();
  const std::int64_t len = stop > start ? (stop - start - 1) / step + 1 : 0;  // ceil, without overflow for any step
  s[static_cast<std::size_t>(d)] = len;
  if (len > 1) st[static_cast<std::size_t>(d)] *= step;  // step < the dim's size here: no overflow
  return make_view(x, s, st, x.storage_offset() + (len > 0 ? start * x.strides()[static_cast<std::size_t>(d)] : 0));
}

/// Strides for viewing (shape, strides) as new_shape without copying, if possible (PyTorch's rule).
std::optional<Shape> view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape) {
  if (shape_numel(shape) == 0 || shape.empty()) return contiguous_strides(new_shape);
  Shape out(new_shape.size());
  std::int64_t view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[static_cast<std::size_t>(d)];
    if (d == 0 || (shape[static_cast<std::size_t>(d - 1)] != 1 &&
                   strides[static_cast<std::size_t>(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[static_cast<std::size_t>(view_d)] == 1)) {
        out[static_cast<std::size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_shape[static_cast<std::size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[static_cast<std::size_t>(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Shape infer_shape(const Shape& shape, std::int64_t numel, const char* op) {
  Shape s = shape;
  std::int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw Error(op, "only one dim can be -1 in " + shape_str(shape));
      infer = static_cast<std::int64_t>(i);
    } else if (s[i] < 0) {
      throw Error(op, "invalid size " + std::to_string(s[i]) + " in " + shape_str(shape));
    } else if (__builtin_mul_overflow(known, s[i], &known)) {
      throw Error(op, "shape " + shape_str(shape) + " is invalid for input of size " + std::to_string(numel));
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw Error(op, "shape " + shape_str(shape) + " is invalid for input of size " + std::to_string(numel));
    s[static_cast<std::size_t>(infer)] = numel / known;
  } else if (known != numel) {
    throw Error(op, "shape " + shape_str(shape) + " is invalid for input of size " + std::to_string(numel));
  }
  return s;
}

}  // namespace
}  // namespace detail

// ---- bijective views ------------------------------------------------------------------------------------
namespace detail {
namespace {

/// x viewed as shape s (-1 resolved) with strides st (from view_strides): the view op both view and
/// reshape record, reached with the shape and strides worked out once.
Tensor view_op(const Tensor& x, Shape s, Shape st) {
  if (s == x.shape()) return x;
  return apply_op(
      "view", {x}, kSaveNone,
      [s = std::move(s), st = std::move(st)](In in) {
        return as_view_of(make_view(in[0], s, st, in[0].storage_offset()), in[0]);
      },
      [](const Ctx& c, const G& g) { return G{g[0].reshape(c.input_shape(0))}; });
}

}  // namespace
}  // namespace detail

Tensor Tensor::view(const Shape& shape_in) const {
  Shape s = detail::infer_shape(shape_in, numel(), "view");
  auto st = detail::view_strides(shape(), strides(), s);
  if (!st)
    throw Error("view", "a tensor of shape " + detail::shape_str(shape()) + " and strides " +
                            detail::shape_str(strides()) + " cannot be viewed as " + detail::shape_str(s) +
                            "; use reshape()");
  return detail::view_op(*this, std::move(s), std::move(*st));
}

Tensor Tensor::reshape(const Shape& shape_in) const {
  Shape s = detail::infer_shape(shape_in, numel(), "reshape");
  if (auto st = detail::view_strides(shape(), strides(), s)) return detail::view_op(*this, std::move(s), std::move(*st));
  return contiguous().view(s);
}

Tensor reshape(const Tensor& x, const Shape& shape) { return x.reshape(shape); }

Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  const auto s = detail::wrap_dim(start_dim, dim(), "flatten"), e = detail::wrap_dim(end_dim, dim(), "flatten");
  if (s > e) throw Error("flatten", "start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim));
  Shape ns;
  for (std::int64_t i = 0; i < s; ++i) ns.push_back(shape()[static_cast<std::size_t>(i)]);
  std::int64_t m = 1;
  for (std::int64_t i = s; i <= e; ++i) m *= shape()[static_cast<std::size_t>(i)];
  ns.push_back(m);
  for (std::int64_t i = e + 1; i < dim(); ++i) ns.push_back(shape()[static_cast<std::size_t>(i)]);
  return reshape(ns);
}
Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim) { return x.flatten(start_dim, end_dim); }

Tensor Tensor::permute(const Shape& dims) const {
  if (static_cast<std::int64_t>(dims.size()) != dim())
    throw Error("permute", "got " + std::to_string(dims.size()) + " dims " + detail::shape_str(dims) +
                               " for a tensor of " + std::to_string(dim()) + " dims");
  auto perm = detail::wrap_dims(dims, dim(), "permute", false);
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return detail::apply_op(
      "permute", {*this}, detail::kSaveNone,
      [perm = std::move(perm)](In in) { return detail::as_view_of(detail::raw_permute(in[0], perm), in[0]); },
      [inv](const detail::Ctx&, const G& g) { return G{g[0].permute(Shape(inv.begin(), inv.end()))}; });
}
Tensor permute(const Tensor& x, const Shape& dims) { return x.permute(dims); }

Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const {
  if (dim() == 0) {
    detail::wrap_dim(d0, 0, "transpose");
    detail::wrap_dim(d1, 0, "transpose");
    return *this;
  }
  const auto a = detail::wrap_dim(d0, dim(), "transpose"), b = detail::wrap_dim(d1, dim(), "transpose");
  Shape perm(static_cast<std::size_t>(dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
  return permute(perm);
}
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1) { return x.transpose(d0, d1); }

Tensor Tensor::t() const {
  if (dim() > 2) throw Error("t", "expected a tensor of at most 2 dims, got shape " + detail::shape_str(shape()));
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::movedim(const Shape& src, const Shape& dst) const {
  if (src.size() != dst.size())
    throw Error("movedim", "source " + detail::shape_str(src) + " and destination " + detail::shape_str(dst) +
                               " differ in length");
  auto s = detail::wrap_dims(src, dim(), "movedim", false);
  auto d = detail::wrap_dims(dst, dim(), "movedim", false);
  const auto n = static_cast<std::size_t>(dim());
  std::vector<std::int64_t> perm(n, -1);
  std::vector<bool> used(n, false);
  for (std::size_t i = 0; i < s.size(); ++i) {
    perm[static_cast<std::size_t>(d[i])] = s[i];
    used[static_cast<std::size_t>(s[i])] = true;
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (perm[i] >= 0) continue;
    while (used[next]) ++next;
    perm[i] = static_cast<std::int64_t>(next++);
  }
  return permute(Shape(perm.begin(), perm.end()));
}
Tensor Tensor::movedim(std::int64_t src, std::int64_t dst) const { return movedim(Shape{src}, Shape{dst}); }
Tensor movedim(const Tensor& x, const Shape& src, const Shape& dst) { return x.movedim(src, dst); }
Tensor swapaxes(const Tensor& x, std::int64_t axis0, std::int64_t axis1) { return x.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& x, std::int64_t dim0, std::int64_t dim1) { return x.transpose(dim0, dim1); }

Tensor unflatten(const Tensor& x, std::int64_t dim, const Shape& sizes) {
  const char* op = "unflatten";
  if (x.dim() == 0) throw Error(op, "cannot unflatten a 0-d tensor");
  const auto d = static_cast<std::size_t>(detail::wrap_dim(dim, x.dim(), op));
  if (sizes.empty()) throw Error(op, "sizes must be non-empty");
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) throw Error(op, "only one size can be -1, got sizes " + detail::shape_str(sizes));
      inferred = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      throw Error(op, "sizes must be non-negative or -1, got " + detail::shape_str(sizes));
    } else {
      known *= sizes[i];
    }
  }
  const std::int64_t n = x.size(static_cast<std::int64_t>(d));
  Shape resolved = sizes;
  if (inferred >= 0 && known != 0 && n % known == 0) resolved[static_cast<std::size_t>(inferred)] = n / known;
  if ((inferred >= 0 && (known == 0 || n % known != 0)) || (inferred < 0 && known != n))
    throw Error(op, "sizes " + detail::shape_str(sizes) + " don't multiply up to the size " + std::to_string(n) + " of dim " +
                        std::to_string(d) + " of the tensor of shape " + detail::shape_str(x.shape()));
  Shape out(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(d));
  out.insert(out.end(), resolved.begin(), resolved.end());
  out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(d) + 1, x.shape().end());
  return x.view(out);  // splitting one dim never needs a copy
}

Tensor Tensor::squeeze() const {
  Shape s;
  for (auto v : shape())
    if (v != 1) s.push_back(v);
  return s.size() == shape().size() ? *this : reshape(s);
}
Tensor Tensor::squeeze(std::int64_t d) const {
  const auto w = detail::wrap_dim(d, dim(), "squeeze");
  if (dim() == 0 || shape()[static_cast<std::size_t>(w)] != 1) return *this;
  Shape s = shape();
  s.erase(s.begin() + w);
  return reshape(s);
}
Tensor squeeze(const Tensor& x, std::optional<std::int64_t> dim) { return dim ? x.squeeze(*dim) : x.squeeze(); }

Tensor Tensor::unsqueeze(std::int64_t d) const {
  const auto w = detail::wrap_dim(d, dim() + 1, "unsqueeze");
  Shape s = shape();
  s.insert(s.begin() + w, 1);
  return reshape(s);
}
Tensor unsqueeze(const Tensor& x, std::int64_t dim) { return x.unsqueeze(dim); }

// ---- broadcasting --------------------------------------------------------------------------------------
Tensor Tensor::expand(const Shape& shape_in) const {
  if (shape_in.size() < shape().size())
    throw Error("expand", "target shape " + detail::shape_str(shape_in) + " has fewer dims than the tensor's " +
                              detail::shape_str(shape()));
  const std::size_t off = shape_in.size() - shape().size();
  Shape s(shape_in.size()), st(shape_in.size());
  for (std::size_t i = 0; i < shape_in.size(); ++i) {
    const std::int64_t want = shape_in[i];
    if (i < off) {
      if (want < 0) throw Error("expand", "-1 is not allowed for a new leading dim in " + detail::shape_str(shape_in));
      s[i] = want;
      st[i] = 0;
      continue;
    }
    const std::int64_t have = shape()[i - off];
    if (want == -1 || want == have) {
      s[i] = have;
      st[i] = strides()[i - off];
    } else if (have == 1 && want >= 0) {
      s[i] = want;
      st[i] = 0;
    } else {
      throw Error("expand", "cannot expand shape " + detail::shape_str(shape()) + " to " + detail::shape_str(shape_in));
    }
  }
  if (s == shape()) return *this;
  detail::check_shape(s, "expand", itemsize());
  return detail::apply_op(
      "expand", {*this}, detail::kSaveNone,
      [s = std::move(s), st = std::move(st)](In in) {
        return detail::as_view_of(detail::make_view(in[0], s, st, in[0].storage_offset()), in[0]);
      },
      [](const detail::Ctx&, const G& g) { return G{g[0]}; });  // summed to the input's shape by the engine
}
Tensor Tensor::broadcast_to(const Shape& shape) const { return expand(shape); }
Tensor broadcast_to(const Tensor& x, const Shape& shape) { return x.expand(shape); }

// ---- selections ----------------------------------------------------------------------------------------
Tensor Tensor::slice(std::int64_t d, std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                     std::int64_t step) const {
  if (dim() == 0) throw Error("slice", "cannot slice a 0-d tensor");
  const auto w = detail::wrap_dim(d, dim(), "slice");
  if (step < 1) throw Error("slice", "step must be positive, got " + std::to_string(step));
  const std::int64_t n = shape()[static_cast<std::size_t>(w)];
  auto clampi = [n](std::int64_t v) { return v < 0 ? std::max<std::int64_t>(v + n, 0) : std::min(v, n); };
  const std::int64_t b = start ? clampi(*start) : 0;
  const std::int64_t e = std::max(b, stop ? clampi(*stop) : n);
  if (b == 0 && e == n && step == 1) return *this;
  return detail::selection_view("slice", *this,
                                [w, b, e, step](const Tensor& t) { return detail::raw_slice(t, w, b, e, step); });
}

Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  if (dim() == 0) throw Error("narrow", "cannot narrow a 0-d tensor");
  const auto w = detail::wrap_dim(d, dim(), "narrow");
  const std::int64_t n = shape()[static_cast<std::size_t>(w)];
  const std::int64_t s = start < 0 ? start + n : start;
  if (s < 0 || s > n || length < 0 || length > n - s)
    throw Error("narrow", "start " + std::to_string(start) + " and length " + std::to_string(length) +
                              " exceed dim " + std::to_string(d) + " of size " + std::to_string(n));
  return slice(w, s, s + length, 1);
}

Tensor Tensor::select(std::int64_t d, std::int64_t i) const {
  if (dim() == 0) throw Error("select", "cannot select from a 0-d tensor");
  const auto w = detail::wrap_dim(d, dim(), "select");
  const std::int64_t n = shape()[static_cast<std::size_t>(w)];
  if (i < -n || i >= n)
    throw Error("select", "index " + std::to_string(i) + " out of range for dim " + std::to_string(d) + " of size " +
                              std::to_string(n));
  const std::int64_t ii = i < 0 ? i + n : i;
  return detail::selection_view("select", *this, [w, ii](const Tensor& t) {
    Shape s = t.shape(), st = t.strides();
    const std::int64_t off = t.storage_offset() + ii * st[static_cast<std::size_t>(w)];
    s.erase(s.begin() + w);
    st.erase(st.begin() + w);
    return detail::make_view(t, s, st, off);
  });
}

// ---- diagonals ------------------------------------------------------------------------------------------
namespace detail {
namespace {

/// The diagonal view of t at `offset` over dims d1 != d2 (wrapped): those dims removed, the diagonal appended.
Tensor raw_diagonal(const Tensor& t, std::int64_t offset, std::int64_t d1, std::int64_t d2) {
  const auto n1 = t.shape()[static_cast<std::size_t>(d1)], n2 = t.shape()[static_cast<std::size_t>(d2)];
  const auto s1 = t.strides()[static_cast<std::size_t>(d1)], s2 = t.strides()[static_cast<std::size_t>(d2)];
  const std::int64_t len = std::max<std::int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  const std::int64_t start = len == 0 ? 0 : offset >= 0 ? offset * s2 : -offset * s1;
  Shape s, st;
  for (std::int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) {
      s.push_back(t.shape()[static_cast<std::size_t>(d)]);
      st.push_back(t.strides()[static_cast<std::size_t>(d)]);
    }
  s.push_back(len);
  st.push_back(s1 + s2);
  return make_view(t, s, st, t.storage_offset() + start);
}

/// dim1 and dim2 of a diagonal op wrapped for `ndim` dims; equal ones throw naming `op`.
std::pair<std::int64_t, std::int64_t> diagonal_dims(std::int64_t dim1, std::int64_t dim2, std::int64_t ndim, const char* op) {
  const auto d1 = wrap_dim(dim1, ndim, op), d2 = wrap_dim(dim2, ndim, op);
  if (d1 == d2)
    throw Error(op, "dim1 and dim2 must differ, got " + std::to_string(dim1) + " and " + std::to_string(dim2) +
                        " (both dim " + std::to_string(d1) + ")");
  return {d1, d2};
}

}  // namespace
}  // namespace detail

Tensor Tensor::diagonal(std::int64_t offset, std::int64_t dim1, std::int64_t dim2) const {
  if (dim() < 2) throw Error("diagonal", "expected a tensor of at least 2 dims, got shape " + detail::shape_str(shape()));
  const auto [d1, d2] = detail::diagonal_dims(dim1, dim2, dim(), "diagonal");
  return detail::selection_view("diagonal", *this,
                                [offset, d1 = d1, d2 = d2](const Tensor& t) { return detail::raw_diagonal(t, offset, d1, d2); });
}
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  return x.diagonal(offset, dim1, dim2);
}

Tensor diag_embed(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  if (x.dim() < 1) throw Error("diag_embed", "expected a tensor of at least 1 dim, got a 0-d tensor");
  const auto [d1, d2] = detail::diagonal_dims(dim1, dim2, x.dim() + 1, "diag_embed");
  const std::int64_t n = x.shape().back() + (offset < 0 ? -offset : offset);
  Shape out;  // x's leading dims in order, n at d1 and d2
  for (std::int64_t d = 0, k = 0; d < x.dim() + 1; ++d) out.push_back(d == d1 || d == d2 ? n : x.shape()[static_cast<std::size_t>(k++)]);
  detail::check_shape(out, "diag_embed", x.itemsize());
  return detail::view_scatter(
      x, out, [offset, d1 = d1, d2 = d2](const Tensor& t) { return detail::raw_diagonal(t, offset, d1, d2); }, "diag_embed");
}

// ---- real / imag -----------------------------------------------------------------------------------------
namespace {
Tensor complex_part(const Tensor& x, bool imag_part) {
  Shape st = x.strides();
  for (auto& s : st) s *= 2;
  return detail::make_view(x, x.shape(), st, x.storage_offset() * 2 + (imag_part ? 1 : 0), to_real(x.dtype()));
}
}  // namespace

Tensor Tensor::real() const {
  if (!is_complex()) return *this;
  return detail::apply_op(
      "real", {*this}, detail::kSaveNone, [](In in) { return detail::as_view_of(complex_part(in[0], false), in[0]); },
      [](const detail::Ctx&, const G& g) { return G{g[0]}; });  // engine casts real -> complex (g + 0i)
}

Tensor Tensor::imag() const {
  if (!is_complex()) throw Error("imag", std::string("expected a complex tensor, got ") + dtype_name(dtype()));
  return detail::apply_op(
      "imag", {*this}, detail::kSaveNone, [](In in) { return detail::as_view_of(complex_part(in[0], true), in[0]); },
      [](const detail::Ctx&, const G& g) { return G{g[0] * std::complex<double>(0, 1)}; });
}
Tensor real(const Tensor& x) { return x.real(); }
Tensor imag(const Tensor& x) { return x.imag(); }

// ---- numpy-style indexing ----------------------------------------------------------------------------------
namespace detail {

std::pair<Tensor, std::vector<Tensor>> basic_index(const Tensor& x, const std::vector<TensorIndex>& indices,
                                                   const char* op) {
  std::int64_t consumed = 0, ellipses = 0;
  for (const auto& ix : indices) {
    const auto& v = ix.value();
    if (std::holds_alternative<std::int64_t>(v) || std::holds_alternative<Slice>(v)) ++consumed;
    if (std::holds_alternative<EllipsisIndex>(v)) ++ellipses;
    if (auto p = std::get_if<std::shared_ptr<Tensor>>(&v)) {
      const Tensor& t = **p;
      consumed += t.defined() && t.dtype() == Dtype::Bool ? t.dim() : 1;  // a 0-d mask: a new dim
    }
  }
  if (ellipses > 1) throw Error(op, "an index can only have a single ellipsis");
  if (consumed > x.dim())
    throw Error(op, "too many indices (" + std::to_string(consumed) + ") for a tensor of " + std::to_string(x.dim()) + " dims");
  Tensor r = x;
  std::vector<std::pair<std::int64_t, Tensor>> at;  // the tensor entries and the dims of r they start at
  std::int64_t d = 0;
  for (const auto& ix : indices) {
    const auto& v = ix.value();
    if (auto i = std::get_if<std::int64_t>(&v)) {
      r = r.select(d, *i);
    } else if (auto s = std::get_if<Slice>(&v)) {
      if (s->start || s->stop || s->step != 1) r = r.slice(d, s->start, s->stop, s->step);
      ++d;
    } else if (std::holds_alternative<NoneIndex>(v)) {
      r = r.unsqueeze(d);
      ++d;
    } else if (std::holds_alternative<EllipsisIndex>(v)) {
      d += x.dim() - consumed;
    } else {
      const Tensor& t = **std::get_if<std::shared_ptr<Tensor>>(&v);
      if (!t.defined()) {  // a whole dim, as an undefined entry of index_put's list
        ++d;
        continue;
      }
      if (t.dtype() == Dtype::Bool && t.dim() == 0) {  // numpy's x[True]: a new dim of size 1, masked by t
        r = r.unsqueeze(d);
        at.emplace_back(d, t.reshape({1}).to(x.device()));
        ++d;
        continue;
      }
      at.emplace_back(d, t);
      d += t.dtype() == Dtype::Bool ? t.dim() : 1;
    }
  }
  std::vector<Tensor> tensors;  // index_put's list over r: undefined for a whole dim, a mask for its dims
  std::int64_t covered = 0;
  for (const auto& [k, t] : at) {
    for (; covered < k; ++covered) tensors.emplace_back();
    tensors.push_back(t);
    covered += t.dtype() == Dtype::Bool ? t.dim() : 1;
  }
  return {r, tensors};
}

}  // namespace detail

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const {
  return detail::composite("index", {*this}, [&] {
    auto [r, tensors] = detail::basic_index(*this, indices, "index");
    if (tensors.empty()) return r;
    // one 1-D int64 index (after whole dims only): a plain index_select along its dim
    const Tensor& last = tensors.back();
    if (last.dtype() == Dtype::Int64 && last.dim() == 1 &&
        std::none_of(tensors.begin(), tensors.end() - 1, [](const Tensor& t) { return t.defined(); }))
      return phasor::index_select(r, static_cast<std::int64_t>(tensors.size()) - 1, last);
    return detail::advanced_index(r, tensors, "index");
  });
}

}  // namespace phasor
