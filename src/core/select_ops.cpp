// src/core/select_ops.cpp - ops whose result size depends on the values: nonzero, argwhere, masked_select,
// unique, unique_consecutive, repeat_interleave with a tensor of repeats, bincount; and the index-taking ops
// take, take_along_dim, index_fill and masked_scatter, with count_nonzero and histc; advanced indexing
// (Tensor::index with tensors, index_put, Tensor::index_put_: Note [index_put]).
//
// Note [selections]
// One mechanism serves them all: true_positions ranks the true elements of a mask by a prefix sum and
// writes each one's flat position to its rank (an index_add into slots no two elements share), so it is a
// handful of existing ops, on any device, with their kernels (the host CPU writes them in one loop instead). The number of true elements decides the
// result's shape, so the host reads it: one wait on a GPU, and no such op inside a CUDA graph capture (as
// in PyTorch). The values reach the result through index_select / gather at the positions, which carry the
// gradient (unique's and the position results have none).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "core/sort_rules.hpp"
#include "core/tensor_impl.hpp"
#include "core/pointwise.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace detail {
namespace {

/// true_positions' work, outside any step.
Tensor true_positions_kernel(const Tensor& m_in) {
  NoGradGuard ng;
  const Tensor m = m_in.reshape({-1});
  const std::int64_t n = m.numel();
  if (n == 0) return zeros({0}, Dtype::Int64, m.device());
  if (!m.device().is_cuda()) {  // the host: one pass that writes the positions in order
    const Tensor mc = m.contiguous();
    const bool* p = mc.data<bool>();
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < n; ++i) count += p[i];
    Tensor out = make_tensor({count}, Dtype::Int64, m.device());
    std::int64_t* o = out.data<std::int64_t>();
    for (std::int64_t i = 0, w = 0; i < n; ++i)
      if (p[i]) o[w++] = i;
    return out;
  }
  const Tensor rank = cumsum(m, 0);  // int64: 1 + the trues before, at each true
  const std::int64_t count = rank.select(0, n - 1).item<std::int64_t>();
  const Tensor at = arange(n, Dtype::Int64, m.device());
  // a true element to its rank - 1, a false one to a slot of its own past the count (cut off below)
  const Tensor slot = where(m, rank - 1, at + count);
  return index_add_trusted(zeros({count + n}, Dtype::Int64, m.device()), 0, slot, at).narrow(0, 0, count);
}

/// The flat (row-major) positions where the bool tensor m holds, in order: int64 1-D on m's device (Note
/// [selections]; one host read of their number), as a step named op, so a replay finds them anew (Note [value
/// steps]).
Tensor true_positions(const Tensor& m, const char* op) {
  return apply_nondiff(op, {m}, [](TensorList in) { return true_positions_kernel(in[0]); });
}

/// unique's work on the n items (slices along dim 0 of rows, a (n, L) view) given their order (perm: the
/// items in the order grouping them, equal ones adjacent): the first item of each group (its position in x),
/// and when asked the group of each item (inverse, in x's item order) and each group's size.
std::tuple<Tensor, Tensor, Tensor> groups_of(const Tensor& rows, const Tensor& perm, bool return_inverse,
                                             bool return_counts) {
  NoGradGuard ng;
  const std::int64_t n = rows.size(0);
  const Device dev = rows.device();
  if (n == 0) {
    const Tensor none = zeros({0}, Dtype::Int64, dev);
    return {none, return_inverse ? none : Tensor(), return_counts ? none : Tensor()};
  }
  const Tensor r = index_select_trusted(rows, 0, perm);
  // an item starts a group where it differs from the one before (NaN differs from everything, as in torch)
  Tensor differs = r.narrow(0, 1, n - 1) != r.narrow(0, 0, n - 1);
  if (r.dim() > 1) differs = differs.any({1});
  const Tensor starts_group = cat({ones({1}, Dtype::Bool, dev), differs});
  const Tensor starts = true_positions_kernel(starts_group);
  Tensor inverse, counts;
  if (return_inverse)  // perm is a permutation: each item's slot written once
    inverse = index_add_trusted(zeros({n}, Dtype::Int64, dev), 0, perm, cumsum(starts_group, 0) - 1);
  if (return_counts) counts = diff(starts, 1, 0, Tensor(), full({1}, n, Dtype::Int64, dev));
  return {index_select_trusted(perm, 0, starts), inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_kernel(const Tensor& x, bool sort_items, bool return_inverse,
                                                 bool return_counts, std::optional<std::int64_t> dim, std::int64_t d);

/// unique and unique_consecutive: the items are x's elements (no dim) or its slices along dim.
std::tuple<Tensor, Tensor, Tensor> unique_impl(const Tensor& x, bool sort_items, bool return_inverse,
                                               bool return_counts, std::optional<std::int64_t> dim, const char* op) {
  check_not_complex(x, op);
  const std::int64_t d = dim ? wrap_dim(*dim, std::max<std::int64_t>(x.dim(), 1), op) : 0;
  if (dim && x.dim() == 0) throw Error(op, "cannot take the unique slices of a 0-d tensor along a dim");
  // all of it depends on the values (no gradient): one step (Note [value steps])
  const std::vector<Tensor> r = apply_nondiff_n(op, {x}, [sort_items, return_inverse, return_counts, dim, d](TensorList in) {
    auto [values, inverse, counts] = unique_kernel(in[0], sort_items, return_inverse, return_counts, dim, d);
    return std::vector<Tensor>{values, inverse, counts};
  });
  return {r[0], r[1], r[2]};
}

/// unique_impl's work on a checked x (d: dim wrapped), outside any step.
std::tuple<Tensor, Tensor, Tensor> unique_kernel(const Tensor& x, bool sort_items, bool return_inverse,
                                                 bool return_counts, std::optional<std::int64_t> dim, std::int64_t d) {
  const Tensor xd = x.detach();
  const Tensor items = dim ? xd.movedim(d, 0) : xd.reshape({-1});
  const std::int64_t n = items.size(0);
  if (sort_items && !dim && !return_inverse && x.device().is_cpu() && n >= 512) {
    // the values alone: a radix sort of their keys, as torch sorts the values (no positions to carry)
    auto [values, counts] = unique_values_cpu(items.contiguous(), return_counts);
    return {values, Tensor(), counts};
  }
  const Tensor rows = items.reshape({n, n == 0 ? 0 : items.numel() / n});  // (n, L)
  Tensor perm = arange(n, Dtype::Int64, x.device());
  if (sort_items && x.device().is_cpu() && rows.size(1) > 32) {
    // lexicographic order of wide rows (Note [sort order]): one stable sort of their positions on the host
    // (100,000 rows of 64: 56 ms where the sorts by column below take 125; of 16, 35 ms against 28)
    const Tensor rc = rows.contiguous();
    const std::int64_t L = rc.size(1);
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    visit_dtype(rc.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!is_complex_v<T>) {
        const T* base = rc.data<T>();
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
          const T *ra = base + a * L, *rb = base + b * L;
          for (std::int64_t c = 0; c < L; ++c) {
            if (key_before(ra[c], rb[c], false)) return true;
            if (key_before(rb[c], ra[c], false)) return false;
          }
          return false;
        });
      }
    });
    perm = from_vector(order, std::nullopt, x.device());
  } else if (sort_items) {
    NoGradGuard ng;
    // lexicographic order of the rows: stable sorts by each column, last to first (Note [sort order])
    for (std::int64_t c = rows.size(1) - 1; c >= 0; --c)
      perm = index_select_trusted(perm, 0, argsort(index_select_trusted(rows.select(1, c), 0, perm)));
  }
  auto [first, inverse, counts] = groups_of(rows, perm, return_inverse, return_counts);
  const Tensor values = dim ? index_select_trusted(xd, d, first) : index_select_trusted(items, 0, first);
  if (inverse.defined() && !dim) inverse = inverse.reshape(x.shape());
  return {values, inverse, counts};
}

/// The repeats of repeat_interleave as an int64 1-D tensor of n entries (a 0-d or one-entry one
/// broadcast), checked non-negative.
Tensor repeats_for(const Tensor& repeats, std::int64_t n, const char* op) {
  if (repeats.dtype() != Dtype::Int64) throw Error(op, std::string("repeats must be int64, got ") + dtype_name(repeats.dtype()));
  if (repeats.dim() > 1 || (repeats.numel() != n && repeats.numel() != 1))
    throw Error(op, "repeats must be 0-d or 1-d with 1 or " + std::to_string(n) + " entries, got shape " +
                        shape_str(repeats.shape()));
  const Tensor r = repeats.reshape({-1}).expand({n});
  NoGradGuard ng;
  check_device_value(
      op, (r < 0).any(), [&] { return std::pair<Tensor, Tensor>{r.min(), Tensor()}; },
      [](double v, double) { return "repeats must be non-negative, got " + std::to_string(static_cast<std::int64_t>(v)); });
  return r;
}

}  // namespace
}  // namespace detail

Tensor nonzero(const Tensor& x) {
  const Tensor flat = detail::true_positions(x.dtype() == Dtype::Bool ? x.detach() : x.detach() != 0, "nonzero");
  // row-major coordinates of each flat position, one column per dim
  std::vector<Tensor> cols;
  std::int64_t stride = 1;
  for (std::int64_t k = x.dim() - 1; k >= 0; --k) {
    const Tensor q = stride == 1 ? flat : floor_divide(flat, stride);
    cols.insert(cols.begin(), k == 0 ? q : remainder(q, x.size(k)));
    stride *= x.size(k);
  }
  if (cols.empty()) return zeros({flat.size(0), 0}, Dtype::Int64, x.device());
  return stack(cols, 1);
}

Tensor argwhere(const Tensor& x) { return nonzero(x); }

Tensor count_nonzero(const Tensor& x, const Shape& dims) {
  return (x.dtype() == Dtype::Bool ? x.detach() : x.detach() != 0).sum(dims);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  if (mask.dtype() != Dtype::Bool)
    throw Error("masked_select", std::string("mask must be bool, got ") + dtype_name(mask.dtype()));
  detail::check_same_device(x, mask, "masked_select");
  const Shape s = broadcast_shapes({x.shape(), mask.shape()}, "masked_select");
  const Tensor at = detail::true_positions(mask.broadcast_to(s), "masked_select");
  return detail::composite("masked_select", {x},
                           [&] { return detail::index_select_trusted(x.broadcast_to(s).reshape({-1}), 0, at); });
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool /*sorted*/, bool return_inverse, bool return_counts,
                                          std::optional<std::int64_t> dim) {
  return detail::unique_impl(x, true, return_inverse, return_counts, dim, "unique");
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse, bool return_counts,
                                                      std::optional<std::int64_t> dim) {
  return detail::unique_impl(x, false, return_inverse, return_counts, dim, "unique_consecutive");
}

Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim) {
  if (repeats < 0) throw Error("repeat_interleave", "repeats must be non-negative, got " + std::to_string(repeats));
  const Tensor xs = dim ? (x.dim() == 0 ? x.reshape({1}) : x) : x.reshape({-1});
  const std::int64_t d = dim ? detail::wrap_dim(*dim, std::max<std::int64_t>(x.dim(), 1), "repeat_interleave") : 0;
  Shape e = xs.shape();
  e.insert(e.begin() + d + 1, repeats);
  return detail::composite("repeat_interleave", {x}, [&] { return xs.unsqueeze(d + 1).expand(e).flatten(d, d + 1); });
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<std::int64_t> dim) {
  detail::check_same_device(x, repeats, "repeat_interleave");
  const Tensor xs = dim ? (x.dim() == 0 ? x.reshape({1}) : x) : x.reshape({-1});
  const std::int64_t d = dim ? detail::wrap_dim(*dim, std::max<std::int64_t>(x.dim(), 1), "repeat_interleave") : 0;
  const std::int64_t n = xs.size(d);
  // the source entry of each output, its number (a host read) and the check of the repeats: one step (Note [value
  // steps]); output j comes from the entry whose running total of repeats first passes j
  const Tensor idx = detail::apply_nondiff("repeat_interleave", {repeats}, [n](detail::TensorList in) {
    const Tensor ends = cumsum(detail::repeats_for(in[0], n, "repeat_interleave"), 0);
    const std::int64_t total = n == 0 ? 0 : ends.select(0, n - 1).item<std::int64_t>();
    return searchsorted(ends, arange(total, Dtype::Int64, in[0].device()), true);
  });
  return detail::composite("repeat_interleave", {x}, [&] { return detail::index_select_trusted(xs, d, idx); });
}

Tensor repeat_interleave(const Tensor& repeats) {
  if (repeats.dim() != 1) throw Error("repeat_interleave", "repeats alone must be 1-d, got shape " + detail::shape_str(repeats.shape()));
  return repeat_interleave(arange(repeats.numel(), Dtype::Int64, repeats.device()), repeats, 0);
}

Tensor take(const Tensor& x, const Tensor& index) {
  detail::check_same_device(x, index, "take");
  const std::int64_t n = x.numel();
  // the index's values are checked in a step of their own, whose output the trusted index_select reads (Note
  // [value steps])
  const Tensor i = detail::apply_nondiff("take", {index}, [n](detail::TensorList in) {
    const bool deferred = detail::check_index_values(in[0], -n, n, "for a tensor of " + std::to_string(n) + " elements", "take");
    const Tensor i = in[0].detach().reshape({-1});
    return deferred ? i.clamp(-n, std::max<std::int64_t>(n - 1, 0)) : i;
  });
  return detail::composite("take", {x}, [&] {
    return detail::index_select_trusted(x.reshape({-1}), 0, i).reshape(index.shape());
  });
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<std::int64_t> dim) {
  detail::check_same_device(x, indices, "take_along_dim");
  if (!dim) return take_along_dim(x.reshape({-1}), indices.reshape({-1}), 0);
  if (x.dim() != indices.dim())
    throw Error("take_along_dim", "input and indices must have the same number of dims, got shapes " +
                                      detail::shape_str(x.shape()) + " and " + detail::shape_str(indices.shape()));
  const std::int64_t d = detail::wrap_dim(*dim, std::max<std::int64_t>(x.dim(), 1), "take_along_dim");
  if (x.dim() == 0) return take_along_dim(x.reshape({1}), indices.reshape({1}), 0).reshape({});
  // the other dims broadcast; dim d keeps each side's length
  Shape xs = x.shape(), is = indices.shape();
  xs[static_cast<std::size_t>(d)] = 1, is[static_cast<std::size_t>(d)] = 1;
  Shape s = broadcast_shapes({xs, is}, "take_along_dim");
  const std::int64_t n = x.size(d);
  s[static_cast<std::size_t>(d)] = indices.size(d);
  // the index's values are checked in a step of their own, whose output the trusted gather reads (Note [value
  // steps])
  const Tensor i = detail::apply_nondiff("take_along_dim", {indices}, [n, d, s](detail::TensorList in) {
    const bool deferred = detail::check_index_values(in[0], 0, n, "for dim " + std::to_string(d) + " of size " + std::to_string(n), "take_along_dim");
    const Tensor i = in[0].detach().broadcast_to(s);
    return deferred ? i.clamp(0, std::max<std::int64_t>(n - 1, 0)) : i;
  });
  s[static_cast<std::size_t>(d)] = n;
  return detail::composite("take_along_dim", {x}, [&] { return detail::gather_trusted(x.broadcast_to(s), d, i); });
}

Tensor index_fill(const Tensor& x, std::int64_t dim, const Tensor& index, const Scalar& value) {
  detail::check_same_device(x, index, "index_fill");
  detail::check_scalar_fits(value, x.dtype(), "index_fill");
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "index_fill");
  if (index.dim() > 1) throw Error("index_fill", "index must be 0-d or 1-d, got shape " + detail::shape_str(index.shape()));
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d);
  // the index's values are checked in a step of their own, whose output the trusted index_copy reads (Note [value
  // steps])
  const Tensor i = detail::apply_nondiff("index_fill", {index}, [n, d](detail::TensorList in) {
    const bool deferred = detail::check_index_values(in[0], -n, n, "for dim " + std::to_string(d) + " of size " + std::to_string(n), "index_fill");
    const Tensor i = in[0].detach().reshape({-1});
    return deferred ? i.clamp(-n, std::max<std::int64_t>(n - 1, 0)) : i;
  });
  // index_copy of the value (x's dtype; it must fit) expanded to the slices
  return detail::composite("index_fill", {x}, [&] {
    const Tensor xs = x.dim() == 0 ? x.reshape({1}) : x;
    Shape s = xs.shape();
    s[static_cast<std::size_t>(d)] = i.numel();
    return detail::index_copy_trusted(xs, d, i, full({}, value, x.dtype(), x.device()).expand(s)).reshape(x.shape());
  });
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter";
  if (mask.dtype() != Dtype::Bool) throw Error(op, std::string("mask must be bool, got ") + dtype_name(mask.dtype()));
  detail::check_same_device({x, mask, source}, op);
  if (source.dtype() != x.dtype())
    throw Error(op, std::string("source must have the input's dtype ") + dtype_name(x.dtype()) + ", got " + dtype_name(source.dtype()));
  const Tensor m = mask.broadcast_to(broadcast_shapes({x.shape(), mask.shape()}, op));
  if (m.shape() != x.shape())
    throw Error(op, "mask of shape " + detail::shape_str(mask.shape()) + " must broadcast to the input's shape " + detail::shape_str(x.shape()));
  // the source element each true takes, in order, and the check that source has enough: one step (Note [value
  // steps]); with an empty source it is the mask itself, checked to hold no true
  const std::int64_t avail = source.numel();
  const Tensor at = detail::apply_nondiff(op, {m}, [avail, op](detail::TensorList in) {
    const Tensor rank = cumsum(in[0].reshape({-1}), 0);  // the number of trues up to each element
    const std::int64_t count = rank.numel() == 0 ? 0 : rank.select(0, rank.numel() - 1).item<std::int64_t>();
    if (count > avail)
      throw Error(op, "the mask selects " + std::to_string(count) + " elements but source has only " + std::to_string(avail));
    return avail == 0 ? in[0] : clamp_min(rank - 1, 0);
  });
  if (avail == 0) return detail::composite(op, {x, source}, [&] { return where(at, detail::zero_scalar_like(x), x); });
  return detail::composite(op, {x, source}, [&] {
    return where(m, detail::index_select_trusted(source.reshape({-1}), 0, at).reshape(x.shape()), x);
  });
}

Tensor bincount(const Tensor& x, const Tensor& weights, std::int64_t minlength) {
  const char* op = "bincount";
  if (x.dim() != 1 || x.dtype() != Dtype::Int64)
    throw Error(op, "expected a 1-d int64 tensor, got " + std::string(dtype_name(x.dtype())) + " of shape " + detail::shape_str(x.shape()));
  if (minlength < 0) throw Error(op, "minlength must be non-negative, got " + std::to_string(minlength));
  if (weights.defined()) {
    detail::check_same_device(x, weights, op);
    if (weights.shape() != x.shape())
      throw Error(op, "weights must have the input's shape " + detail::shape_str(x.shape()) + ", got " + detail::shape_str(weights.shape()));
  }
  const Dtype dt = weights.defined() ? weights.dtype() : Dtype::Int64;
  // the zero bins, as many as the largest value asks (one host read), and the check of the values: one step
  // (Note [value steps]); the trusted index_add reads x, whose values the step checked
  const Tensor bins = x.numel() == 0 ? zeros({minlength}, dt, x.device())
                                     : detail::apply_nondiff(op, {x}, [minlength, dt, op](detail::TensorList in) {
                                         const Tensor& v = in[0];
                                         detail::check_device_value(
                                             op, (v < 0).any(), [&] { return std::pair<Tensor, Tensor>{v.min(), Tensor()}; },
                                             [](double m, double) {
                                               return "the input must be non-negative, got " + std::to_string(static_cast<std::int64_t>(m));
                                             });
                                         const std::int64_t size = std::max(minlength, v.max().item<std::int64_t>() + 1);
                                         return zeros({size}, dt, v.device());
                                       });
  const Tensor w = weights.defined() ? weights : ones({x.numel()}, Dtype::Int64, x.device());
  return detail::composite(op, {w}, [&] { return detail::index_add_trusted(bins, 0, x.detach(), w); });
}

namespace detail {
namespace {
/// histc's work on a checked x, outside any step.
Tensor histc_kernel(const Tensor& x, std::int64_t bins, double min, double max) {
  const char* op = "histc";
  const Tensor xd = x.detach().reshape({-1});
  if (min == max && xd.numel() > 0) {  // the data's range (one host read)
    const Tensor lo_hi = stack({xd.amin(), xd.amax()}).to(Device::cpu()).to(Dtype::Float64);
    min = lo_hi.data<double>()[0], max = lo_hi.data<double>()[1];
    if (!std::isfinite(min) || !std::isfinite(max))
      throw Error(op, "the range of the data [" + std::to_string(min) + ", " + std::to_string(max) + "] is not finite");
  }
  if (min == max) min -= 1, max += 1;  // as torch: one unit either side
  // bin i holds [min + i w, min + (i + 1) w), the last one max too; elements outside (and NaN) are left out
  const Tensor inside = logical_and(xd >= min, xd <= max);
  const Tensor bin = clamp(((xd - min) * (static_cast<double>(bins) / (max - min))).floor(), 0.0, static_cast<double>(bins - 1));
  return index_add_trusted(zeros({bins}, x.dtype(), x.device()), 0, where(inside, bin, 0.0).to(Dtype::Int64),
                           inside.to(x.dtype()));
}
}  // namespace
}  // namespace detail

Tensor histc(const Tensor& x, std::int64_t bins, double min, double max) {
  const char* op = "histc";
  if (!is_floating(x.dtype())) throw Error(op, std::string("expected a float32 or float64 tensor, got ") + dtype_name(x.dtype()));
  if (bins <= 0) throw Error(op, "bins must be positive, got " + std::to_string(bins));
  if (min > max) throw Error(op, "min (" + std::to_string(min) + ") must not exceed max (" + std::to_string(max) + ")");
  // no gradient, and the range may come from the data: one step (Note [value steps])
  return detail::apply_nondiff(op, {x}, [bins, min, max](detail::TensorList in) { return detail::histc_kernel(in[0], bins, min, max); });
}

std::tuple<Tensor, Tensor, Tensor> Tensor::unique(bool sorted, bool return_inverse, bool return_counts,
                                                  std::optional<std::int64_t> dim) const {
  return phasor::unique(*this, sorted, return_inverse, return_counts, dim);
}
Tensor Tensor::nonzero() const { return phasor::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const { return phasor::masked_select(*this, mask); }
Tensor Tensor::take(const Tensor& index) const { return phasor::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<std::int64_t> dim) const {
  return phasor::take_along_dim(*this, indices, dim);
}
Tensor Tensor::index_fill(std::int64_t dim, const Tensor& index, const Scalar& value) const {
  return phasor::index_fill(*this, dim, index, value);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const { return phasor::masked_scatter(*this, mask, source); }
Tensor Tensor::index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) const {
  return phasor::index_put(*this, indices, values, accumulate);
}
Tensor Tensor::repeat_interleave(std::int64_t repeats, std::optional<std::int64_t> dim) const {
  return phasor::repeat_interleave(*this, repeats, dim);
}

// ---- advanced indexing: x[indices] and index_put -------------------------------------------------------------
// Note [index_put]
// x[indices] (Tensor::index with tensors) is one index_select, and x[indices] = values (index_put; += with
// accumulate) one index_copy (index_add), along dim 0 of a view of x whose first dim is the indexed dims
// flattened: each index is checked and wrapped, the broadcast indices become one row-major position, the
// indexed dims move to the front (where numpy's rule puts the broadcast index dims in x[indices]: in place when
// the indexed dims are adjacent, first otherwise) and values, broadcast to x[indices]'s shape, are laid out to
// match. A bool index stands for its nonzero coordinates. Gradients are those ops' through the views. With
// nothing to record, Tensor::index_put_ runs index_copy_ (index_add_) on such a view of the tensor itself when
// its indexed dims merge into one (their strides nest), so it touches only the indexed elements.

namespace detail {
namespace {

/// The plan of x[indices] (Note [index_put]).
struct Advanced {
  std::vector<std::int64_t> dims;  ///< the indexed dims of x
  Shape B;                         ///< the broadcast shape of their indices
  Tensor pos;                      ///< the flat row-major position of each indexed element, numel(B), in range
  Shape perm, inverse;             ///< x's dims with the indexed ones first, and back
  Shape rest;                      ///< the sizes of the other dims, in order
  Shape target;                    ///< x[indices]'s shape
  bool adjacent = true;            ///< the indexed dims are adjacent (B takes their place in target)
  std::int64_t span = 1;           ///< the number of positions in the indexed dims
};

/// The flat row-major position, in the indexed dims D (of sizes `size`), of each of the count elements of the
/// broadcast shape B of the indices idx (one per dim of D), each index checked in range and wrapped: on the host
/// one pass checks, wraps and combines them; on a device tensor ops do.
Tensor advanced_positions(TensorList idx, const std::vector<std::int64_t>& D, const std::vector<std::int64_t>& size,
                          const Shape& B, std::int64_t count, const char* op) {
  if (idx[0].device().is_cpu()) {
    std::vector<Tensor> held;
    std::vector<const std::int64_t*> ptr;
    for (std::size_t j = 0; j < D.size(); ++j) {
      held.push_back(idx[j].broadcast_to(B).contiguous());
      ptr.push_back(held.back().data<std::int64_t>());
    }
    bool negative = false;
    for (std::size_t j = 0; j < D.size(); ++j) {
      const RangeScan scan = scan_range(ptr[j], count, -size[j], size[j]);
      if (scan.first_bad >= 0)
        throw Error(op, "index " + std::to_string(ptr[j][scan.first_bad]) + " out of range for dim " + std::to_string(D[j]) +
                            " of size " + std::to_string(size[j]));
      negative = negative || scan.negative;
    }
    if (D.size() == 1 && !negative) return held[0].reshape({-1});  // the index itself
    Tensor pos = make_tensor({count}, Dtype::Int64, idx[0].device());
    auto* out = pos.data<std::int64_t>();
    std::fill(out, out + count, std::int64_t{0});
    for (std::size_t j = 0; j < D.size(); ++j) {
      const std::int64_t n = size[j];
      const std::int64_t* v = ptr[j];
      for (std::int64_t e = 0; e < count; ++e) out[e] = out[e] * n + (v[e] < 0 ? v[e] + n : v[e]);
    }
    return pos;
  }
  Tensor pos;
  std::int64_t stride = 1;
  for (std::size_t j = D.size(); j-- > 0;) {
    const std::int64_t n = size[j];
    Tensor i = idx[j].detach();
    if (check_index_values(i, -n, n, "for dim " + std::to_string(D[j]) + " of size " + std::to_string(n), op))
      i = i.clamp(-n, std::max<std::int64_t>(n - 1, 0));
    i = where(i < 0, i + n, i) * stride;
    pos = pos.defined() ? pos + i : i;
    stride *= n;
  }
  return pos.broadcast_to(B).reshape({-1});
}

/// Plans x[indices] for index_put's list (one entry per leading dim: an int64 tensor, a bool mask over as many
/// dims, undefined for the whole dim); throws naming op for a bad entry or an index out of range. dims is
/// empty when no entry is defined.
Advanced plan_advanced(const Tensor& x, const std::vector<Tensor>& indices, const char* op) {
  // one entry per leading dim of x: an int64 index, or undefined for the whole dim
  std::vector<Tensor> per_dim;
  for (std::size_t j = 0; j < indices.size(); ++j) {
    const Tensor& t = indices[j];
    if (!t.defined()) {
      per_dim.emplace_back();
      continue;
    }
    check_same_device(x, t, op);
    if (t.dtype() == Dtype::Int64) {
      per_dim.push_back(t);
    } else if (t.dtype() == Dtype::Bool && t.dim() > 0) {
      const auto at = static_cast<std::int64_t>(per_dim.size());
      for (std::int64_t k = 0; k < t.dim(); ++k)
        if (at + k >= x.dim() || t.size(k) != x.size(at + k))
          throw Error(op, "bool index " + std::to_string(j) + " of shape " + shape_str(t.shape()) +
                              " does not match the input of shape " + shape_str(x.shape()) + " at dim " + std::to_string(at + k));
      const Tensor nz = nonzero(t);
      for (std::int64_t k = 0; k < t.dim(); ++k) per_dim.push_back(nz.select(1, k));
    } else {
      throw Error(op, "index " + std::to_string(j) + " must be an int64 or a bool tensor of at least 1 dim, got " +
                          dtype_name(t.dtype()) + " of shape " + shape_str(t.shape()));
    }
  }
  if (static_cast<std::int64_t>(per_dim.size()) > x.dim())
    throw Error(op, "too many indices (" + std::to_string(per_dim.size()) + ") for the input of shape " + shape_str(x.shape()));
  Advanced a;
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < per_dim.size(); ++k)
    if (per_dim[k].defined()) a.dims.push_back(static_cast<std::int64_t>(k)), shapes.push_back(per_dim[k].shape());
  if (a.dims.empty()) {
    a.target = x.shape();
    return a;
  }
  const std::vector<std::int64_t>& D = a.dims;
  a.B = broadcast_shapes(shapes, op);
  std::int64_t count = 1;
  for (auto b : a.B) count *= b;
  // the flat position of each indexed element in the indexed dims, row-major, the indices' values checked: a step
  // of its own (Note [value steps])
  std::vector<Tensor> given;
  std::vector<std::int64_t> sizes;
  for (auto k : D) given.push_back(per_dim[static_cast<std::size_t>(k)]), sizes.push_back(x.size(k));
  a.pos = apply_nondiff(op, given, [D, sizes, B = a.B, count, op](TensorList in) {
    return advanced_positions(in, D, sizes, B, count, op);
  });
  a.adjacent = D.back() - D.front() + 1 == static_cast<std::int64_t>(D.size());
  a.perm.assign(D.begin(), D.end());
  for (std::int64_t k = 0; k < x.dim(); ++k)
    if (std::find(D.begin(), D.end(), k) == D.end()) a.perm.push_back(k), a.rest.push_back(x.size(k));
  if (a.adjacent) {
    a.target.assign(x.shape().begin(), x.shape().begin() + D.front());
    a.target.insert(a.target.end(), a.B.begin(), a.B.end());
    a.target.insert(a.target.end(), x.shape().begin() + D.back() + 1, x.shape().end());
  } else {
    a.target = a.B;
    a.target.insert(a.target.end(), a.rest.begin(), a.rest.end());
  }
  a.inverse.resize(a.perm.size());
  for (std::size_t k = 0; k < a.perm.size(); ++k) a.inverse[static_cast<std::size_t>(a.perm[k])] = static_cast<std::int64_t>(k);
  for (auto d : D) a.span *= x.size(d);
  return a;
}

/// x with its indexed dims moved first and flattened: (span, rest...).
Tensor flat_indexed(const Tensor& x, const Advanced& a) {
  Shape s{a.span};
  s.insert(s.end(), a.rest.begin(), a.rest.end());
  return x.permute(a.perm).reshape(s);
}

/// A tensor of a.target's shape with the broadcast index dims moved first and flattened: (numel(B), rest...).
Tensor flat_target(const Tensor& t, const Advanced& a) {
  Tensor v = t;
  if (a.adjacent && a.dims.front() > 0) {  // the broadcast index dims to the front
    Shape from, to;
    for (std::size_t k = 0; k < a.B.size(); ++k)
      from.push_back(a.dims.front() + static_cast<std::int64_t>(k)), to.push_back(static_cast<std::int64_t>(k));
    v = v.movedim(from, to);
  }
  Shape s{a.pos.numel()};
  s.insert(s.end(), a.rest.begin(), a.rest.end());
  return v.reshape(s);
}

/// Plans putting values into x at indices, checking values (x's device and dtype, broadcasting to x[indices]).
Advanced plan_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, const char* op) {
  if (!values.defined()) throw Error(op, "values is undefined");
  check_same_device(x, values, op);
  if (values.dtype() != x.dtype())
    throw Error(op, std::string("values must have the input's dtype ") + dtype_name(x.dtype()) + ", got " + dtype_name(values.dtype()));
  Advanced a = plan_advanced(x, indices, op);
  const Shape& vs = values.shape();
  bool fits = vs.size() <= a.target.size();
  for (std::size_t k = 1; fits && k <= vs.size(); ++k)
    fits = vs[vs.size() - k] == 1 || vs[vs.size() - k] == a.target[a.target.size() - k];
  if (!fits)
    throw Error(op, "values of shape " + shape_str(vs) + " cannot be broadcast to the indexed shape " + shape_str(a.target));
  return a;
}

/// index_put_ with nothing to record, writing only the indexed elements: index_copy_ (index_add_) along dim 0
/// of a view of x whose indexed dims merge into one. False (nothing done) when they do not merge, or x has
/// elements sharing memory: the caller then computes the whole result.
bool put_in_place(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, const char* op) {
  const Advanced a = plan_put(x, indices, values, op);
  check_inplace_overlap(op, x, {values});
  const std::vector<std::int64_t>& D = a.dims;
  const Shape& st = x.strides();
  for (std::int64_t k = 0; k < x.dim(); ++k)
    if (st[static_cast<std::size_t>(k)] == 0 && x.size(k) > 1) return false;
  std::int64_t stride = st[static_cast<std::size_t>(D.back())], size = x.size(D.back());
  for (std::size_t j = D.size() - 1; j-- > 0;) {
    const std::int64_t n = x.size(D[j]), s = st[static_cast<std::size_t>(D[j])];
    if (n == 1) continue;
    if (size == 1) stride = s, size = n;
    else if (s != stride * size) return false;
    else size *= n;
  }
  Shape shape{a.span}, strides{stride};
  for (std::int64_t k = 0; k < x.dim(); ++k)
    if (std::find(D.begin(), D.end(), k) == D.end()) shape.push_back(x.size(k)), strides.push_back(st[static_cast<std::size_t>(k)]);
  Tensor flat = make_view(x, shape, strides, x.storage_offset());
  const Tensor v = flat_target(values.expand(a.target), a);
  if (accumulate) flat.index_add_(0, a.pos, v);
  else flat.index_copy_(0, a.pos, v);
  return true;
}

/// The work of index_put: returns the result of putting values (x's dtype) into x at indices.
Tensor index_put_impl(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                      const char* op) {
  const Advanced a = plan_put(x, indices, values, op);
  if (a.dims.empty())  // every element
    return composite(op, {x, values}, [&] { return accumulate ? x + values : values.expand(x.shape()).clone(); });
  return composite(op, {x, values}, [&] {
    const Tensor flat = flat_indexed(x, a), v = flat_target(values.expand(a.target), a);
    const Tensor out = accumulate ? index_add_trusted(flat, 0, a.pos, v) : index_copy_trusted(flat, 0, a.pos, v);
    Shape ps;
    for (auto k : a.perm) ps.push_back(x.size(k));
    const Tensor r = out.reshape(ps).permute(a.inverse);
    return r.is_contiguous() ? r : r.contiguous();
  });
}

}  // namespace

Tensor advanced_index(const Tensor& x, const std::vector<Tensor>& indices, const char* op) {
  const Advanced a = plan_advanced(x, indices, op);
  if (a.dims.empty()) return x;
  return composite(op, {x}, [&] {
    Shape s = a.B;
    s.insert(s.end(), a.rest.begin(), a.rest.end());
    Tensor r = index_select_trusted(flat_indexed(x, a), 0, a.pos).reshape(s);
    if (a.adjacent && a.dims.front() > 0) {  // the broadcast index dims back in place
      Shape from, to;
      for (std::size_t k = 0; k < a.B.size(); ++k)
        from.push_back(static_cast<std::int64_t>(k)), to.push_back(a.dims.front() + static_cast<std::int64_t>(k));
      r = r.movedim(from, to);
    }
    return r;
  });
}

}  // namespace detail

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return detail::index_put_impl(x, indices, values, accumulate, "index_put");
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  if (!values.defined()) throw Error(op, "values is undefined");
  // the integers, slices, None and Ellipsis pick a view; the tensors index it
  auto [view, tensors] = detail::basic_index(*this, indices, op);
  bool any = false;
  for (const Tensor& t : tensors) any = any || t.defined();
  if (!any) {  // a view assigned (or added to) whole
    if (accumulate) view.add_(values);
    else view.copy_(values);
    return *this;
  }
  Tensor& target = view.is_same(*this) ? *this : view;
  if (!(GradMode::is_enabled() && (target.requires_grad() || values.requires_grad())) &&
      detail::put_in_place(target, tensors, values, accumulate, op))
    return *this;
  std::vector<Tensor> others{values};
  for (const Tensor& t : tensors)
    if (t.defined()) others.push_back(t);
  detail::inplace_from(op, target, others, [&](const Tensor& self) {
    return detail::index_put_impl(self, tensors, values, accumulate, op);
  });
  return *this;
}

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Scalar& value) {
  return index_put_(indices, full({}, value, dtype(), device()));
}

Tensor& Tensor::index_fill_(std::int64_t dim, const Tensor& index, const Scalar& value) {
  return detail::inplace_from("index_fill_", *this, {index},
                              [&](const Tensor& self) { return phasor::index_fill(self, dim, index, value); });
}

Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  return detail::inplace_from("masked_scatter_", *this, {mask, source},
                              [&](const Tensor& self) { return phasor::masked_scatter(self, mask, source); });
}

}  // namespace phasor
