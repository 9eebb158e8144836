// src/core/shape_ops.cpp - joining and rearranging: cat, stack, hstack, vstack, dstack, column_stack, split,
// chunk, repeat, tile, unbind, meshgrid, cartesian_prod, atleast_1d/2d/3d, block_diag, diagflat, rot90, flipud,
// fliplr, flip, roll, tril, triu, diag, trace, diff.
//
// Primitives (kernel + gradient here): cat (gradient = narrow of each piece), flip (its own
// adjoint), tril/triu (their own adjoints). stack, split, chunk, repeat, tile, unbind, meshgrid, rot90, roll,
// diag, trace and diff are compositions of views (expand, select, diagonal, diag_embed: core/views.cpp), cat,
// flip, sub and index_select, so their gradients come from those.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

/// PyTorch keeps accepting 1-D tensors of size 0 in cat whatever the other shapes (legacy).
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

/// Shapes of all inputs, for error messages: "(2, 3), (2, 4)".
std::string shapes_str(const std::vector<Tensor>& xs) {
  std::string s;
  for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + shape_str(xs[i].shape());
  return s;
}

}  // namespace
}  // namespace detail

// ---- cat / stack ---------------------------------------------------------------------------------------------
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim) {
  if (xs.empty()) throw Error("cat", "expected a non-empty list of tensors");
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined()) throw Error("cat", "tensor " + std::to_string(i) + " is undefined");
    if (xs[i].dim() == 0) throw Error("cat", "zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
  }
  detail::check_same_device(xs, "cat");
  Dtype dt = xs[0].dtype();
  for (const auto& t : xs) dt = promote_types(dt, t.dtype());
  // the reference tensor: the first one that is not a legacy empty
  const Tensor* ref = nullptr;
  for (const auto& t : xs)
    if (!detail::legacy_empty(t)) {
      ref = &t;
      break;
    }
  // all legacy empties: the result is one too
  const auto d = ref ? detail::wrap_dim(dim, ref->dim(), "cat") : detail::wrap_dim(dim, 1, "cat");
  Shape out_shape = ref ? ref->shape() : Shape{0};
  out_shape[static_cast<std::size_t>(d)] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    if (detail::legacy_empty(t)) continue;
    if (t.dim() != ref->dim())
      throw Error("cat", "tensors must have the same number of dims, got shapes " + detail::shapes_str(xs) +
                             " (tensor " + std::to_string(i) + " has shape " + detail::shape_str(t.shape()) + ")");
    for (std::int64_t k = 0; k < t.dim(); ++k)
      if (k != d && t.size(k) != ref->size(k))
        throw Error("cat", "sizes must match except in dim " + std::to_string(d) + ", got shapes " +
                               detail::shapes_str(xs) + " (tensor " + std::to_string(i) + " has shape " +
                               detail::shape_str(t.shape()) + ", differing at dim " + std::to_string(k) + ")");
    std::int64_t& total = out_shape[static_cast<std::size_t>(d)];
    if (__builtin_add_overflow(total, t.size(d), &total))
      throw Error("cat", "the sizes along dim " + std::to_string(d) + " of " + detail::shapes_str(xs) +
                             " add up to more than an int64 can count");
  }
  detail::check_shape(out_shape, "cat", itemsize(dt));
  std::vector<std::int64_t> offsets, sizes;  // per input along d; -1 size marks a skipped legacy empty
  {
    std::int64_t off = 0;
    for (const auto& t : xs) {
      offsets.push_back(off);
      sizes.push_back(detail::legacy_empty(t) ? -1 : t.size(d));
      if (!detail::legacy_empty(t)) off += t.size(d);
    }
  }
  return detail::apply_op(
      "cat", xs, detail::kSaveNone,
      [out_shape, dt, d, offsets, sizes](In in) {
        Tensor out = detail::make_tensor(out_shape, dt, in[0].device());
        const std::int64_t sd = out.strides()[static_cast<std::size_t>(d)];
        for (std::size_t i = 0; i < in.size(); ++i) {
          if (sizes[i] <= 0) continue;
          detail::copy_into(detail::make_view(out, in[i].shape(), out.strides(), offsets[i] * sd), in[i]);
        }
        return out;
      },
      [d, offsets, sizes](const detail::Ctx& c, const G& g) {
        G r(sizes.size());
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          if (!c.needs_grad(i)) continue;
          r[i] = sizes[i] < 0 ? zeros({0}, g[0].dtype(), g[0].device()) : g[0].narrow(d, offsets[i], sizes[i]);
        }
        return r;
      });
}

Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim) {
  if (xs.empty()) throw Error("stack", "expected a non-empty list of tensors");
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined()) throw Error("stack", "tensor " + std::to_string(i) + " is undefined");
    if (xs[i].shape() != xs[0].shape())
      throw Error("stack", "expected tensors of equal shape, got " + detail::shape_str(xs[0].shape()) +
                               " at entry 0 and " + detail::shape_str(xs[i].shape()) + " at entry " + std::to_string(i));
  }
  const auto d = detail::wrap_dim(dim, xs[0].dim() + 1, "stack");
  return detail::composite("stack", xs, [&] {
    std::vector<Tensor> u;
    u.reserve(xs.size());
    for (const auto& t : xs) u.push_back(t.unsqueeze(d));
    return cat(u, d);
  });
}

// ---- split / chunk ---------------------------------------------------------------------------------------------
// Note [split gradients]
// split, chunk, unbind and tensor_split cut a dim into pieces that follow one another. Taken one by one (narrow,
// select), each piece would be an op whose gradient scatters into zeros of the whole input, and the engine would
// add those up: over L pieces O(L x size) work and memory in backward (70% of an LSTM's backward at L = 100,
// stepping through time with unbind). So the pieces come from one op whose gradient joins the pieces' gradients
// once, with zeros for pieces that got none (torch's SplitBackward and UnbindBackward do the same); the join is
// a cat, so higher derivatives and every device come for free.

namespace {
/// Pieces of x along dim d, lens[i] long, back to back from 0 and covering the dim, as views in one op (Note
/// [split gradients]); with `squeeze` (every length 1) the dim is dropped, as select does.
std::vector<Tensor> split_views(const char* name, const Tensor& x, std::int64_t d, std::vector<std::int64_t> lens,
                                bool squeeze) {
  return detail::apply_op_n(
      name, {x}, detail::kSaveNone,
      [d, lens, squeeze](detail::TensorList in) {
        const Tensor& t = in[0];
        const auto du = static_cast<std::size_t>(d);
        std::vector<Tensor> out;
        std::int64_t off = 0;
        for (const std::int64_t len : lens) {
          Shape shape = t.shape(), strides = t.strides();
          const std::int64_t offset = t.storage_offset() + (len > 0 ? off * strides[du] : 0);
          if (squeeze) {
            shape.erase(shape.begin() + d);
            strides.erase(strides.begin() + d);
          } else {
            shape[du] = len;
          }
          out.push_back(detail::make_view(t, shape, strides, offset));
          detail::set_view_base(out.back(), t);
          off += len;
        }
        return out;
      },
      [d, lens, squeeze](const detail::Ctx& c, const std::vector<Tensor>& g) {
        const auto some = std::find_if(g.begin(), g.end(), [](const Tensor& t) { return t.defined(); });
        if (some == g.end()) return std::vector<Tensor>{Tensor()};
        std::vector<Tensor> parts;
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (g[i].defined()) {
            parts.push_back(squeeze ? g[i].unsqueeze(d) : g[i]);
          } else {
            Shape piece = c.input_shape(0);
            piece[static_cast<std::size_t>(d)] = lens[i];
            parts.push_back(zeros(piece, some->dtype(), some->device()));
          }
        }
        return std::vector<Tensor>{cat(parts, d)};
      });
}
}  // namespace

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  if (x.dim() == 0) throw Error("split", "cannot split a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "split");
  const std::int64_t n = x.size(d);
  if (split_size < 0) throw Error("split", "split_size must be non-negative, got " + std::to_string(split_size));
  if (split_size == 0 && n != 0)
    throw Error("split", "split_size can only be 0 if dim " + std::to_string(d) + " has size 0, but it has size " +
                             std::to_string(n));
  if (n == 0) return {x.narrow(d, 0, 0)};
  std::vector<std::int64_t> lens;
  for (std::int64_t s = 0; s < n; s += split_size) lens.push_back(std::min(split_size, n - s));
  return split_views("split", x, d, std::move(lens), false);
}

std::vector<Tensor> split(const Tensor& x, const Shape& sizes, std::int64_t dim) {
  if (x.dim() == 0) throw Error("split", "cannot split a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "split");
  std::int64_t total = 0;
  for (auto s : sizes) {
    if (s < 0) throw Error("split", "split sizes must be non-negative, got " + detail::shape_str(sizes));
    total += s;
  }
  if (total != x.size(d))
    throw Error("split", "split sizes " + detail::shape_str(sizes) + " sum to " + std::to_string(total) +
                             " but dim " + std::to_string(d) + " of the tensor of shape " +
                             detail::shape_str(x.shape()) + " has size " + std::to_string(x.size(d)));
  if (sizes.empty()) return {};
  return split_views("split", x, d, std::vector<std::int64_t>(sizes.begin(), sizes.end()), false);
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  if (chunks <= 0) throw Error("chunk", "chunks must be positive, got " + std::to_string(chunks));
  if (x.dim() == 0) throw Error("chunk", "cannot chunk a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "chunk");
  const std::int64_t n = x.size(d);
  if (n == 0) return std::vector<Tensor>(static_cast<std::size_t>(chunks), x.narrow(d, 0, 0));
  return split(x, (n + chunks - 1) / chunks, d);
}

std::vector<Tensor> tensor_split(const Tensor& x, std::int64_t sections, std::int64_t dim) {
  if (x.dim() == 0) throw Error("tensor_split", "cannot split a 0-d tensor");
  if (sections <= 0) throw Error("tensor_split", "sections must be positive, got " + std::to_string(sections));
  const auto d = detail::wrap_dim(dim, x.dim(), "tensor_split");
  const std::int64_t n = x.size(d), base = n / sections, longer = n % sections;
  std::vector<std::int64_t> lens;
  for (std::int64_t i = 0; i < sections; ++i) lens.push_back(base + (i < longer ? 1 : 0));
  return split_views("tensor_split", x, d, std::move(lens), false);
}

std::vector<Tensor> tensor_split(const Tensor& x, const Shape& indices, std::int64_t dim) {
  if (x.dim() == 0) throw Error("tensor_split", "cannot split a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "tensor_split");
  const std::int64_t n = x.size(d);
  // Python slice bounds: negative from the end, then clamped to [0, n]
  const auto bound = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
  std::vector<std::int64_t> starts{0}, lens;
  for (const auto i : indices) starts.push_back(bound(i));
  bool in_order = true;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t end = k + 1 < starts.size() ? starts[k + 1] : n;
    in_order = in_order && end >= starts[k];
    lens.push_back(std::max<std::int64_t>(end - starts[k], 0));
  }
  if (in_order) return split_views("tensor_split", x, d, std::move(lens), false);
  std::vector<Tensor> out;  // bounds out of order: pieces may overlap, each its own view
  for (std::size_t k = 0; k < starts.size(); ++k) out.push_back(x.narrow(d, starts[k], lens[k]));
  return out;
}

namespace {
void check_min_dims(const char* op, const Tensor& x, std::int64_t min_dims) {
  if (x.dim() < min_dims)
    throw Error(op, "expected a tensor of at least " + std::to_string(min_dims) + " dims, got shape " +
                        detail::shape_str(x.shape()));
}
/// hsplit / vsplit / dsplit: tensor_split along `dim` of an x of at least `min_dims` dims, equal sections.
std::vector<Tensor> numpy_split(const char* op, const Tensor& x, std::int64_t min_dims, std::int64_t dim,
                                std::int64_t sections) {
  check_min_dims(op, x, min_dims);
  if (sections <= 0) throw Error(op, "sections must be positive, got " + std::to_string(sections));
  if (x.size(dim) % sections != 0)
    throw Error(op, "dim " + std::to_string(dim) + " of size " + std::to_string(x.size(dim)) +
                        " can't be split into " + std::to_string(sections) + " equal sections (shape " +
                        detail::shape_str(x.shape()) + ")");
  return tensor_split(x, sections, dim);
}
}  // namespace

std::vector<Tensor> hsplit(const Tensor& x, std::int64_t sections) {
  return numpy_split("hsplit", x, 1, x.dim() == 1 ? 0 : 1, sections);
}
std::vector<Tensor> hsplit(const Tensor& x, const Shape& indices) {
  check_min_dims("hsplit", x, 1);
  return tensor_split(x, indices, x.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> vsplit(const Tensor& x, std::int64_t sections) { return numpy_split("vsplit", x, 2, 0, sections); }
std::vector<Tensor> vsplit(const Tensor& x, const Shape& indices) {
  check_min_dims("vsplit", x, 2);
  return tensor_split(x, indices, 0);
}
std::vector<Tensor> dsplit(const Tensor& x, std::int64_t sections) { return numpy_split("dsplit", x, 3, 2, sections); }
std::vector<Tensor> dsplit(const Tensor& x, const Shape& indices) {
  check_min_dims("dsplit", x, 3);
  return tensor_split(x, indices, 2);
}

// ---- repeat / tile / unbind / meshgrid / rot90 ---------------------------------------------------------------------
Tensor repeat(const Tensor& x, const Shape& repeats) {
  const auto nd = static_cast<std::size_t>(x.dim());
  if (repeats.size() < nd)
    throw Error("repeat", "the number of repeats (" + std::to_string(repeats.size()) + ") is smaller than the dims of the tensor of shape " +
                              detail::shape_str(x.shape()));
  for (auto r : repeats)
    if (r < 0) throw Error("repeat", "repeats must be non-negative, got " + detail::shape_str(repeats));
  // x as (1, s0, 1, s1, ...) with leading 1s for the new dims, expanded to (r0, s0, r1, s1, ...), merged pairwise
  Shape padded(repeats.size() - nd, 1);
  padded.insert(padded.end(), x.shape().begin(), x.shape().end());
  Shape split, expanded, out;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    split.insert(split.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    out.push_back(repeats[i] * padded[i]);
  }
  return detail::composite("repeat", {x}, [&] { return x.reshape(split).expand(expanded).reshape(out); });
}
Tensor Tensor::repeat(const Shape& repeats) const { return phasor::repeat(*this, repeats); }

Tensor tile(const Tensor& x, const Shape& reps) {
  Shape r(reps);
  if (r.size() < static_cast<std::size_t>(x.dim())) r.insert(r.begin(), static_cast<std::size_t>(x.dim()) - r.size(), 1);
  return repeat(x, r);
}

std::vector<Tensor> unbind(const Tensor& x, std::int64_t dim) {
  if (x.dim() == 0) throw Error("unbind", "cannot unbind a 0-d tensor");
  const auto d = detail::wrap_dim(dim, x.dim(), "unbind");
  if (x.size(d) == 0) return {};
  return split_views("unbind", x, d, std::vector<std::int64_t>(static_cast<std::size_t>(x.size(d)), 1), true);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy")
    throw Error("meshgrid", "indexing must be \"ij\" or \"xy\", got \"" + indexing + "\"");
  if (xs.empty()) throw Error("meshgrid", "expected a non-empty list of tensors");
  Shape full;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined()) throw Error("meshgrid", "tensor " + std::to_string(i) + " is undefined");
    if (xs[i].dim() > 1)
      throw Error("meshgrid", "expected 0-d or 1-d tensors, got shape " + detail::shape_str(xs[i].shape()) + " at entry " +
                                  std::to_string(i));
    if (xs[i].dtype() != xs[0].dtype())
      throw Error("meshgrid", std::string("expected tensors of one dtype, got ") + dtype_name(xs[0].dtype()) +
                                  " at entry 0 and " + dtype_name(xs[i].dtype()) + " at entry " + std::to_string(i));
    full.push_back(xs[i].numel());
  }
  detail::check_same_device(xs, "meshgrid");
  // "xy": the first two inputs vary along the output's second and first dims (Cartesian, as numpy)
  const bool xy = indexing == "xy" && xs.size() >= 2;
  if (xy) std::swap(full[0], full[1]);
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::size_t at = xy && i < 2 ? 1 - i : i;
    Shape s(xs.size(), 1);
    s[at] = xs[i].numel();
    out.push_back(xs[i].reshape(s).expand(full));
  }
  return out;
}

Tensor cartesian_prod(const std::vector<Tensor>& xs) {
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (xs[i].defined() && xs[i].dim() != 1)
      throw Error("cartesian_prod", "expected 1-d tensors, got shape " + detail::shape_str(xs[i].shape()) + " at entry " +
                                        std::to_string(i));
  if (xs.size() == 1) return xs[0].clone();
  std::vector<Tensor> cols;
  for (const Tensor& g : meshgrid(xs, "ij")) cols.push_back(g.reshape({-1}));
  return stack(cols, 1);
}

Tensor atleast_1d(const Tensor& x) { return x.dim() == 0 ? x.reshape({1}) : x; }
Tensor atleast_2d(const Tensor& x) { return x.dim() >= 2 ? x : atleast_1d(x).unsqueeze(0); }
Tensor atleast_3d(const Tensor& x) {
  if (x.dim() >= 3) return x;
  if (x.dim() == 2) return x.unsqueeze(2);
  return atleast_1d(x).reshape({1, -1, 1});  // numpy: (n) -> (1, n, 1)
}

namespace {
/// Each of xs through f, then cat along dim; throws naming `op` for an empty list.
Tensor stack_with(const char* op, const std::vector<Tensor>& xs, Tensor (*f)(const Tensor&), std::int64_t dim) {
  if (xs.empty()) throw Error(op, "expected a non-empty list of tensors");
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) ys.push_back(f(x));
  return cat(ys, dim);
}
Tensor as_column(const Tensor& x) { return x.dim() < 2 ? x.reshape({-1, 1}) : x; }
}  // namespace

Tensor hstack(const std::vector<Tensor>& xs) {
  const bool all_1d = std::all_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.dim() <= 1; });
  return stack_with("hstack", xs, atleast_1d, all_1d ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& xs) { return stack_with("vstack", xs, atleast_2d, 0); }
Tensor dstack(const std::vector<Tensor>& xs) { return stack_with("dstack", xs, atleast_3d, 2); }
Tensor column_stack(const std::vector<Tensor>& xs) { return stack_with("column_stack", xs, as_column, 1); }

Tensor flipud(const Tensor& x) {
  if (x.dim() < 1) throw Error("flipud", "expected a tensor of 1 or more dims, got a 0-d tensor");
  return flip(x, {0});
}
Tensor fliplr(const Tensor& x) {
  if (x.dim() < 2) throw Error("fliplr", "expected a tensor of 2 or more dims, got shape " + detail::shape_str(x.shape()));
  return flip(x, {1});
}

Tensor block_diag(const std::vector<Tensor>& xs) {
  if (xs.empty()) throw Error("block_diag", "expected a non-empty list of tensors");
  std::int64_t rows = 0, cols = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined() || xs[i].dim() > 2)
      throw Error("block_diag", "expected 0-d, 1-d or 2-d tensors, got " +
                                    (xs[i].defined() ? "shape " + detail::shape_str(xs[i].shape()) : std::string("undefined")) +
                                    " at entry " + std::to_string(i));
    const Tensor b = atleast_2d(xs[i]);
    rows += b.size(0), cols += b.size(1);
  }
  detail::check_same_device(xs, "block_diag");
  const Dtype dt = detail::result_type(xs);
  return detail::composite("block_diag", xs, [&] {
    // each block padded with zeros to the full width at its column offset, the rows stacked
    std::vector<Tensor> bands;
    std::int64_t at = 0;
    for (const Tensor& x : xs) {
      const Tensor b = atleast_2d(x).to(dt);
      bands.push_back(pad(b, {at, cols - at - b.size(1)}));
      at += b.size(1);
    }
    return cat(bands, 0);
  });
}

Tensor diagflat(const Tensor& x, std::int64_t offset) { return diag(x.reshape({-1}), offset); }

Tensor rot90(const Tensor& x, std::int64_t k, const Shape& dims) {
  if (dims.size() != 2) throw Error("rot90", "expected 2 dims, got " + detail::shape_str(dims));
  if (x.dim() < 2) throw Error("rot90", "expected a tensor of 2 or more dims, got shape " + detail::shape_str(x.shape()));
  const auto d0 = detail::wrap_dim(dims[0], x.dim(), "rot90"), d1 = detail::wrap_dim(dims[1], x.dim(), "rot90");
  if (d0 == d1) throw Error("rot90", "the two dims must differ, got " + detail::shape_str(dims));
  switch (((k % 4) + 4) % 4) {  // turns from dims[0] toward dims[1]
    case 1: return flip(x, {d1}).transpose(d0, d1);
    case 2: return flip(x, {d0, d1});
    case 3: return flip(x, {d0}).transpose(d0, d1);
    default: return x.clone();
  }
}

// ---- flip / roll -----------------------------------------------------------------------------------------------------
Tensor flip(const Tensor& x, const Shape& dims) {
  auto ds = detail::wrap_dims(dims, x.dim(), "flip", false);
  if (ds.empty()) return x.clone();
  Shape dd(ds.begin(), ds.end());
  return detail::apply_op(
      "flip", {x}, detail::kSaveNone,
      [ds = std::move(ds)](In in) {
        const Tensor& t = in[0];
        // a view walking the flipped dims backwards (negative strides), copied once
        Shape st = t.strides();
        std::int64_t off = t.storage_offset();
        for (auto k : ds) {
          const auto ks = static_cast<std::size_t>(k);
          if (t.shape()[ks] > 0) off += (t.shape()[ks] - 1) * st[ks];
          st[ks] = -st[ks];
        }
        Tensor out = detail::make_tensor(t.shape(), t.dtype(), t.device());
        if (t.numel() > 0) detail::copy_into(out, detail::make_view(t, t.shape(), st, off));
        return out;
      },
      [dd](const detail::Ctx&, const G& g) { return G{flip(g[0], dd)}; });
}

Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims) {
  if (shifts.empty()) throw Error("roll", "expected at least one shift");
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw Error("roll", "got " + std::to_string(shifts.size()) + " shifts " + detail::shape_str(shifts) +
                              " without dims; give one shift to roll the flattened tensor");
    return detail::composite("roll", {x}, [&] { return roll(x.flatten(), shifts, {0}).reshape(x.shape()); });
  }
  if (shifts.size() != dims.size())
    throw Error("roll", "shifts " + detail::shape_str(shifts) + " and dims " + detail::shape_str(dims) +
                            " must have the same length");
  std::vector<std::int64_t> ds;
  for (auto dm : dims) ds.push_back(detail::wrap_dim(dm, x.dim(), "roll"));
  if (x.dim() == 0) return x.clone();
  // dims that actually move, with shifts reduced to [1, n); a dim listed twice adds its shifts
  std::vector<std::int64_t> rd, rs;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const std::int64_t n = x.size(ds[i]);
    if (n == 0) continue;
    const std::int64_t s = ((shifts[i] % n) + n) % n;
    auto it = std::find(rd.begin(), rd.end(), ds[i]);
    if (it != rd.end()) {
      auto& acc = rs[static_cast<std::size_t>(it - rd.begin())];
      acc = (acc + s) % n;
    } else if (s != 0) {
      rd.push_back(ds[i]);
      rs.push_back(s);
    }
  }
  for (std::size_t i = rd.size(); i-- > 0;)
    if (rs[i] == 0) {
      rd.erase(rd.begin() + static_cast<std::ptrdiff_t>(i));
      rs.erase(rs.begin() + static_cast<std::ptrdiff_t>(i));
    }
  if (rd.empty()) return x.clone();
  return detail::apply_op(
      "roll", {x}, detail::kSaveNone,
      [rd, rs](In in) {
        const Tensor& src = in[0];
        Tensor out = detail::make_tensor(src.shape(), src.dtype(), src.device());
        if (out.numel() == 0) return out;
        // one copy per block: along each moved dim, [0, n-s) goes to [s, n) and [n-s, n) to [0, s)
        for (std::size_t mask = 0; mask < (std::size_t(1) << rd.size()); ++mask) {
          Tensor a = src, b = out;
          for (std::size_t j = 0; j < rd.size(); ++j) {
            const std::int64_t n = src.size(rd[j]), sh = rs[j];
            if (mask & (std::size_t(1) << j)) {
              a = a.narrow(rd[j], n - sh, sh);
              b = b.narrow(rd[j], 0, sh);
            } else {
              a = a.narrow(rd[j], 0, n - sh);
              b = b.narrow(rd[j], sh, n - sh);
            }
          }
          detail::copy_into(b, a);
        }
        return out;
      },
      [rd, rs](const detail::Ctx&, const G& g) {
        Shape neg;
        for (auto v : rs) neg.push_back(-v);
        return G{roll(g[0], neg, Shape(rd.begin(), rd.end()))};
      });
}

// ---- tril / triu -----------------------------------------------------------------------------------------------------
namespace detail {
namespace {

/// Copy of x with the entries outside the kept triangle of the last two dims set to zero.
Tensor triangle_kernel(const Tensor& x, std::int64_t k, bool lower) {
  if (!x.device().is_cpu()) {  // a mask of column - row against k, by device ops
    const Tensor d = arange(x.size(-1), Dtype::Int64, x.device()) - arange(x.size(-2), Dtype::Int64, x.device()).unsqueeze(1);
    return where(lower ? d <= Scalar(k) : d >= Scalar(k), x, wrap_scalar(0, x.dtype(), x.device()));  // Note [host scalars]
  }
  Tensor out = make_tensor(x.shape(), x.dtype(), x.device());
  copy_into(out, x);
  const std::int64_t R = x.size(-2), C = x.size(-1);
  if (out.numel() == 0) return out;
  const std::int64_t rows = out.numel() / C;  // every row of every matrix
  const std::size_t isz = out.itemsize();
  char* base = static_cast<char*>(out.data_ptr());
  const int threads = rows * C >= 2 * kParallelGrain ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = r % R;
    // tril keeps j <= i + k; triu keeps j >= i + k
    std::int64_t b, e;
    if (lower) {
      b = std::clamp<std::int64_t>(i + k + 1, 0, C);
      e = C;
    } else {
      b = 0;
      e = std::clamp<std::int64_t>(i + k, 0, C);
    }
    if (e > b) std::memset(base + (r * C + b) * static_cast<std::int64_t>(isz), 0, static_cast<std::size_t>(e - b) * isz);
  }
  return out;
}

Tensor triangle(const Tensor& x, std::int64_t diagonal, bool lower) {
  const char* name = lower ? "tril" : "triu";
  if (x.dim() < 2) throw Error(name, "expected a tensor of at least 2 dims, got shape " + shape_str(x.shape()));
  return apply_op(
      name, {x}, kSaveNone, [diagonal, lower](In in) { return triangle_kernel(in[0], diagonal, lower); },
      [diagonal, lower](const Ctx&, const G& g) { return G{lower ? tril(g[0], diagonal) : triu(g[0], diagonal)}; });
}

}  // namespace
}  // namespace detail

Tensor tril(const Tensor& x, std::int64_t diagonal) { return detail::triangle(x, diagonal, true); }
Tensor triu(const Tensor& x, std::int64_t diagonal) { return detail::triangle(x, diagonal, false); }

// ---- diag, trace, diff ---------------------------------------------------------------------------------
Tensor diag(const Tensor& x, std::int64_t diagonal) {
  if (x.dim() == 1) return detail::composite("diag", {x}, [&] { return diag_embed(x, diagonal, 0, 1); });
  if (x.dim() == 2) return detail::composite("diag", {x}, [&] { return x.diagonal(diagonal).clone(); });
  throw Error("diag", "expected a 1-D or 2-D tensor, got shape " + detail::shape_str(x.shape()));
}

Tensor trace(const Tensor& x) {
  if (x.dim() != 2) throw Error("trace", "expected a 2-D tensor, got shape " + detail::shape_str(x.shape()));
  return detail::composite("trace", {x}, [&] { return x.diagonal().sum(); });
}

Tensor diff(const Tensor& x, std::int64_t n, std::int64_t dim, const Tensor& prepend, const Tensor& append) {
  if (x.dim() == 0) throw Error("diff", "expected a tensor of at least 1 dim, got a 0-d tensor");
  if (n < 0) throw Error("diff", "order n must be non-negative, got " + std::to_string(n));
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "diff");
  for (const Tensor* t : {&prepend, &append})
    if (t->defined() && t->dim() != x.dim())
      throw Error("diff", std::string(t == &prepend ? "prepend" : "append") + " of shape " + detail::shape_str(t->shape()) +
                              " must have the input's " + std::to_string(x.dim()) + " dims (input " +
                              detail::shape_str(x.shape()) + ")");
  return detail::composite("diff", {x}, [&] {
    std::vector<Tensor> parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(x);
    if (append.defined()) parts.push_back(append);
    Tensor r = parts.size() == 1 ? x : cat(parts, d);
    for (std::int64_t k = 0; k < n && r.size(d) > 0; ++k) {
      const std::int64_t len = r.size(d) - 1;
      const Tensor hi = r.narrow(d, 1, len), lo = r.narrow(d, 0, len);
      r = r.dtype() == Dtype::Bool ? logical_xor(hi, lo) : hi - lo;  // bools: "differ", as torch
    }
    return r;
  });
}

Tensor Tensor::diff(std::int64_t n, std::int64_t dim, const Tensor& prepend, const Tensor& append) const {
  return phasor::diff(*this, n, dim, prepend, append);
}

}  // namespace phasor
