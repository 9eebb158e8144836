// src/core/pad.cpp - pad(x, pad, mode, value), as torch.nn.functional.pad.
//
// Note [pad modes]
// `pad` lists (left, right) pairs starting from the last dim. Negative entries crop.
//  - constant: negative pads crop first (narrow views), then one primitive writes the input into
//    a tensor filled with `value`; its gradient narrows the output gradient back.
//  - reflect / replicate / circular: each padded dim becomes one index_select with a computed
//    source position per output position (a device constant: Note [device constants]), so the
//    gradient (index_add) comes for free and
//    corners are handled by applying the dims one after the other, as PyTorch does.
//    Output position o of a dim of size n with pads (l, r) reads source p = o - l mapped into
//    [0, n): reflect p -> -p or 2(n-1) - p (requires l, r < n); replicate clamps (requires n > 0);
//    circular crops the negative pads first, then wraps modulo the cropped size m (requires
//    l, r <= m: padding may not wrap around more than once). reflect/replicate outputs must be
//    non-empty, as in PyTorch.
// PyTorch limits the non-constant modes to the last 1-3 dims of 2-D..5-D inputs; here any number
// of trailing dims can be padded (same values wherever PyTorch accepts the call).
#include <algorithm>

#include "autodiff/node.hpp"
#include "core/device_constants.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "core/promotion.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::constant: return "constant";
    case PadMode::reflect: return "reflect";
    case PadMode::replicate: return "replicate";
    case PadMode::circular: return "circular";
  }
  return "?";
}

std::string pad_desc(std::int64_t l, std::int64_t r, std::int64_t dim, const Shape& shape) {
  return "padding (" + std::to_string(l) + ", " + std::to_string(r) + ") at dim " + std::to_string(dim) +
         " of an input of shape " + shape_str(shape);
}

/// Writes x into the window starting at `lo` of a tensor of `out_shape` filled with `value`.
Tensor constant_pad(const Tensor& x, const Shape& lo, const Shape& out_shape, const Scalar& value) {
  return apply_op(
      "constant_pad", {x}, kSaveNone,
      [lo, out_shape, value](In in) {
        Tensor out = full(out_shape, value, in[0].dtype(), in[0].device());
        std::int64_t off = 0;
        for (std::size_t k = 0; k < lo.size(); ++k) off += lo[k] * out.strides()[k];
        if (in[0].numel() > 0) copy_into(make_view(out, in[0].shape(), out.strides(), off), in[0]);
        return out;
      },
      [lo](const Ctx& c, const G& g) {
        Tensor r = g[0];
        const Shape& s = c.input_shape(0);
        for (std::size_t k = 0; k < s.size(); ++k)
          if (lo[k] != 0 || s[k] != r.size(static_cast<std::int64_t>(k)))
            r = r.narrow(static_cast<std::int64_t>(k), lo[k], s[k]);
        return G{r};
      });
}

/// Source positions for one dim of size n padded by (l, r) in a non-constant mode.
std::vector<std::int64_t> pad_source(PadMode mode, std::int64_t n, std::int64_t l, std::int64_t r) {
  std::vector<std::int64_t> idx;
  if (mode == PadMode::circular) {
    const std::int64_t cl = std::max<std::int64_t>(-l, 0), cr = std::max<std::int64_t>(-r, 0);
    const std::int64_t m = n - cl - cr, L = std::max<std::int64_t>(l, 0), R = std::max<std::int64_t>(r, 0);
    for (std::int64_t o = 0; o < m + L + R; ++o) idx.push_back(cl + ((o - L) % m + m) % m);
    return idx;
  }
  const std::int64_t len = n + l + r;
  for (std::int64_t o = 0; o < len; ++o) {
    std::int64_t p = o - l;
    if (mode == PadMode::reflect) {
      if (p < 0) p = -p;
      if (p >= n) p = 2 * (n - 1) - p;
    } else {
      p = std::clamp<std::int64_t>(p, 0, n - 1);
    }
    idx.push_back(p);
  }
  return idx;
}

}  // namespace
}  // namespace detail

Tensor pad(const Tensor& x, const Shape& p, PadMode mode, const Scalar& value) {
  if (!x.defined()) throw Error("pad", "input is undefined");
  if (p.size() % 2 != 0) throw Error("pad", "padding length must be even, got " + std::to_string(p.size()) + " values " + detail::shape_str(p));
  const auto npad = static_cast<std::int64_t>(p.size() / 2);
  if (npad > x.dim())
    throw Error("pad", "padding " + detail::shape_str(p) + " pads " + std::to_string(npad) +
                           " dims but the input of shape " + detail::shape_str(x.shape()) + " has " +
                           std::to_string(x.dim()));
  if (mode != PadMode::constant && value.to_bool())
    throw Error("pad", std::string("padding mode ") + detail::mode_name(mode) + " does not take a value argument");
  if (mode == PadMode::constant && value.is_complex() && !x.is_complex())
    throw Error("pad", std::string("complex padding value for a ") + dtype_name(x.dtype()) + " tensor");
  if (mode == PadMode::constant) detail::check_scalar_fits(value, x.dtype(), "pad");
  // per padded dim: (dim, left, right), checked before any work
  struct DimPad {
    std::int64_t dim, l, r;
  };
  std::vector<DimPad> dp;
  for (std::int64_t i = 0; i < npad; ++i) {
    const std::int64_t d = x.dim() - 1 - i, l = p[static_cast<std::size_t>(2 * i)], r = p[static_cast<std::size_t>(2 * i + 1)];
    const std::int64_t n = x.size(d), out = n + l + r;
    if (out < 0)
      throw Error("pad", detail::pad_desc(l, r, d, x.shape()) + " gives a negative output size " + std::to_string(out));
    if (mode == PadMode::reflect && (l >= n || r >= n))
      throw Error("pad", "reflect " + detail::pad_desc(l, r, d, x.shape()) +
                             ": each pad must be smaller than the size " + std::to_string(n));
    if (mode == PadMode::replicate && n == 0 && (l > 0 || r > 0))
      throw Error("pad", "replicate " + detail::pad_desc(l, r, d, x.shape()) + ": cannot replicate an empty dim");
    if ((mode == PadMode::reflect || mode == PadMode::replicate) && out == 0)
      throw Error("pad", std::string(detail::mode_name(mode)) + " " + detail::pad_desc(l, r, d, x.shape()) +
                             " gives an empty output, which this mode does not allow");
    if (mode == PadMode::circular) {
      const std::int64_t m = n - std::max<std::int64_t>(-l, 0) - std::max<std::int64_t>(-r, 0);
      if (m < 0 || l > m || r > m)
        throw Error("pad", "circular " + detail::pad_desc(l, r, d, x.shape()) +
                               " wraps around more than once (each pad must be at most the size after cropping, " +
                               std::to_string(std::max<std::int64_t>(m, 0)) + ")");
    }
    dp.push_back({d, l, r});
  }
  return detail::composite("pad", {x}, [&] {
    if (mode == PadMode::constant) {
      Tensor c = x;
      Shape lo(static_cast<std::size_t>(x.dim()), 0), out_shape;
      bool grow = false;
      for (const auto& e : dp) {
        const std::int64_t cl = std::max<std::int64_t>(-e.l, 0), cr = std::max<std::int64_t>(-e.r, 0);
        if (cl > 0 || cr > 0) c = c.narrow(e.dim, cl, c.size(e.dim) - cl - cr);
        lo[static_cast<std::size_t>(e.dim)] = std::max<std::int64_t>(e.l, 0);
        if (e.l > 0 || e.r > 0) grow = true;
      }
      if (!grow) return c.clone();
      out_shape = c.shape();
      for (const auto& e : dp) out_shape[static_cast<std::size_t>(e.dim)] += std::max<std::int64_t>(e.l, 0) + std::max<std::int64_t>(e.r, 0);
      return detail::constant_pad(c, lo, out_shape, value);
    }
    Tensor r = x;
    bool moved = false;
    for (const auto& e : dp) {
      if (e.l == 0 && e.r == 0) continue;
      // the source positions: a device constant, in range by construction (no upload, no check on a GPU)
      const std::int64_t n = x.size(e.dim);
      const Tensor src = detail::device_constant(x.device(), "pad source", std::make_tuple(mode, n, e.l, e.r),
                                                 [&] { return from_vector(detail::pad_source(mode, n, e.l, e.r)); });
      r = detail::index_select_trusted(r, e.dim, src);
      moved = true;
    }
    return moved ? r : x.clone();
  });
}

}  // namespace phasor
