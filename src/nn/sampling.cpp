// src/nn/sampling.cpp - interpolate, pixel_shuffle / pixel_unshuffle, affine_grid, grid_sample and their
// modules, all compositions of differentiable tensor ops (so every device and every order of gradient).
//
// Note [separable interpolation]
// Every interpolate mode is separable: along each spatial dim d, output position o is a weighted sum of at
// most K input positions, y[o] = sum_k w[o, k] * x[idx[o, k]] (nearest K = 1, linear 2, cubic 4, area the
// longest window). The (idx, w) tables are small (out * K entries per dim), computed on the host in double
// with torch's source-index rules. A dim is resampled by one primitive, resample_op (src/nn/resample.hpp):
// the table as a sparse (out, in) matrix in CSR form (K taps per row as listed, zero weights included, as
// torch multiplies them too), applied along the dim in one pass over x with the weights cast to x's real
// type (a complex x: real and imaginary parts alike). Its gradient is resample_op with the transposed
// matrix, built once on the host when the result records a gradient, so every order of gradient is the
// same kernel. The CPU kernel accumulates whole rows of the dims after `dim` per tap (a dot over the taps
// per element along the last dim); the CUDA kernel (src/cuda/resample.cu) runs a thread per output element;
// both sum the taps in row order. A dim whose table is the identity (same size, source = destination) is
// skipped, and the dims that shrink go first (the later ones then work on fewer elements; among dims scaled
// alike the later one first, so the last dim's element-wise pass sees the fewest elements). nearest on
// integer or bool input (no weights, no gradient) is one index_select per dim.
//
// Note [antialiasing]
// With antialias (bilinear and bicubic, as torch and PIL): output position o of a dim with scale s (as the
// plain mode's: 1/scale_factor, in/out, or (in-1)/(out-1) with align_corners) centres the filter at
// c = s * (o + 0.5) in input pixel units; the filter (triangle, or Keys' cubic with A = -0.5) is stretched
// by s when s > 1 (shrinking), so its support is s times the plain one, and sampled at input pixel
// centres j + 0.5 for the j with floor-ish bounds max(0, (int)(c - support + 0.5)) <= j < min(in,
// (int)(c + support + 0.5)); the taps are normalised to sum 1 (so the border needs no clamping).
//
// Note [grid_sample as gathers]
// grid_sample unnormalises the grid to pixel coordinates on the device, applies the padding mode to them
// (border: clamp; reflection: reflect about the edges, then clamp), and for each of the 2^nd corners
// (bilinear), the nearest pixel, or the 16 taps (bicubic) builds a flat index into the spatial dims of x
// (clamped into range) and a weight that is zero where the tap lies outside x. The corner positions are
// floor(coordinate) without gradient; the weights are made of coordinate - floor(coordinate), so the
// gradient in x is gather's (a scatter_add) and the gradient in the grid flows through the weights.
#include "phasor/nn/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "nn/resample.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using ::phasor::detail::shape_str;

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  std::string r = s.str();
  if (r.find_first_of(".eni") == std::string::npos) r += ".0";
  return r;
}

std::string list_str(const std::vector<double>& v) {
  if (v.size() == 1) return num(v[0]);
  std::string r = "(";
  for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + num(v[i]);
  return r + ")";
}

// ---- interpolate ------------------------------------------------------------------------------------------

enum class Mode { nearest, nearest_exact, linear, bilinear, bicubic, trilinear, area };

Mode parse_mode(const std::string& m) {
  if (m == "nearest") return Mode::nearest;
  if (m == "nearest-exact") return Mode::nearest_exact;
  if (m == "linear") return Mode::linear;
  if (m == "bilinear") return Mode::bilinear;
  if (m == "bicubic") return Mode::bicubic;
  if (m == "trilinear") return Mode::trilinear;
  if (m == "area") return Mode::area;
  throw Error("interpolate", "mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', "
                             "'trilinear' or 'area', got '" + m + "'");
}

/// The (idx, w) table of one dim (Note [separable interpolation]); w empty means every weight is 1.
struct Taps {
  std::int64_t out = 0, K = 1;
  std::vector<std::int64_t> idx;
  std::vector<double> w;
};

/// torch's scale of the linear modes and bicubic: (in-1)/(out-1) with align_corners, else 1/scale_factor when
/// one is used, else in/out.
double linear_scale(std::int64_t in, std::int64_t out, bool align, std::optional<double> sf) {
  if (align) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return sf ? 1.0 / *sf : static_cast<double>(in) / static_cast<double>(out);
}

/// Source coordinate of output position o: scale * o with align_corners, else (o + 0.5) * scale - 0.5
/// (clamped at 0 except for cubic).
double source_coord(double scale, std::int64_t o, bool align, bool cubic) {
  if (align) return scale * static_cast<double>(o);
  const double s = scale * (static_cast<double>(o) + 0.5) - 0.5;
  return (!cubic && s < 0) ? 0.0 : s;
}

/// floor(src) capped at in - 1, and src - that index clamped to [0, 1] (torch's guard_index_and_lambda).
void index_and_lambda(double src, std::int64_t in, std::int64_t& i0, double& lambda) {
  i0 = std::min(static_cast<std::int64_t>(std::floor(src)), in - 1);
  lambda = std::clamp(src - static_cast<double>(i0), 0.0, 1.0);
}

double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

/// Antialiased bilinear / bicubic (Note [antialiasing]): the filter stretched by the scale when shrinking,
/// over the input positions within its support, normalised to sum 1.
Taps make_aa_taps(Mode mode, std::int64_t in, std::int64_t out, bool align, std::optional<double> sf) {
  Taps t;
  t.out = out;
  const double scale = linear_scale(in, out, align, sf);
  const double size = mode == Mode::bicubic ? 4.0 : 2.0;  // the filter's width at scale 1
  const double support = scale >= 1.0 ? size * 0.5 * scale : size * 0.5;
  const double inv = scale >= 1.0 ? 1.0 / scale : 1.0;
  const auto filter = [&](double x) {
    x = std::fabs(x);
    if (mode == Mode::bilinear) return x < 1.0 ? 1.0 - x : 0.0;
    return x < 1.0 ? cubic1(x, -0.5) : x < 2.0 ? cubic2(x, -0.5) : 0.0;
  };
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows;
  for (std::int64_t o = 0; o < out; ++o) {
    const double center = scale * (static_cast<double>(o) + 0.5);
    const std::int64_t lo = std::max<std::int64_t>(static_cast<std::int64_t>(center - support + 0.5), 0);
    const std::int64_t hi = std::min<std::int64_t>(static_cast<std::int64_t>(center + support + 0.5), in);
    std::vector<std::pair<std::int64_t, double>> row;
    double total = 0;
    for (std::int64_t j = lo; j < hi; ++j) {
      row.emplace_back(j, filter((static_cast<double>(j) - center + 0.5) * inv));
      total += row.back().second;
    }
    if (total != 0.0)
      for (auto& e : row) e.second /= total;
    if (row.empty()) row.emplace_back(std::min(lo, in - 1), 0.0);
    t.K = std::max<std::int64_t>(t.K, static_cast<std::int64_t>(row.size()));
    rows.push_back(std::move(row));
  }
  for (const auto& row : rows)
    for (std::int64_t k = 0; k < t.K; ++k) {
      const bool inside = k < static_cast<std::int64_t>(row.size());
      t.idx.push_back(inside ? row[static_cast<std::size_t>(k)].first : row[0].first);
      t.w.push_back(inside ? row[static_cast<std::size_t>(k)].second : 0.0);
    }
  return t;
}

Taps make_taps(Mode mode, std::int64_t in, std::int64_t out, bool align, std::optional<double> sf) {
  Taps t;
  t.out = out;
  switch (mode) {
    case Mode::nearest:
    case Mode::nearest_exact: {
      // torch computes this scale and the product in float (aten's nearest_idx); the same here, bit for bit
      const float scale = sf ? static_cast<float>(1.0 / *sf) : static_cast<float>(in) / static_cast<float>(out);
      for (std::int64_t o = 0; o < out; ++o) {
        std::int64_t s;
        if (mode == Mode::nearest_exact)
          s = static_cast<std::int64_t>(std::floor(static_cast<float>((static_cast<double>(o) + 0.5) * scale)));
        else if (out == in) s = o;
        else if (out == 2 * in) s = o >> 1;
        else s = static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale));
        t.idx.push_back(std::min(s, in - 1));
      }
      return t;
    }
    case Mode::linear:
    case Mode::bilinear:
    case Mode::trilinear: {
      t.K = 2;
      const double scale = linear_scale(in, out, align, sf);
      for (std::int64_t o = 0; o < out; ++o) {
        std::int64_t i0;
        double lambda;
        index_and_lambda(source_coord(scale, o, align, false), in, i0, lambda);
        t.idx.insert(t.idx.end(), {i0, i0 + (i0 < in - 1 ? 1 : 0)});
        t.w.insert(t.w.end(), {1 - lambda, lambda});
      }
      return t;
    }
    case Mode::bicubic: {
      t.K = 4;
      const double A = -0.75;
      const double scale = linear_scale(in, out, align, sf);
      for (std::int64_t o = 0; o < out; ++o) {
        std::int64_t i0;
        double x;
        index_and_lambda(source_coord(scale, o, align, true), in, i0, x);
        for (std::int64_t j = 0; j < 4; ++j) t.idx.push_back(std::clamp<std::int64_t>(i0 - 1 + j, 0, in - 1));
        t.w.insert(t.w.end(), {cubic2(x + 1, A), cubic1(x, A), cubic1(1 - x, A), cubic2(2 - x, A)});
      }
      return t;
    }
    case Mode::area: {
      std::vector<std::pair<std::int64_t, std::int64_t>> win;
      for (std::int64_t o = 0; o < out; ++o) {
        const std::int64_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
        win.emplace_back(start, end);
        t.K = std::max(t.K, end - start);
      }
      for (auto [start, end] : win)
        for (std::int64_t k = 0; k < t.K; ++k) {
          const bool inside = start + k < end;
          t.idx.push_back(inside ? start + k : start);
          t.w.push_back(inside ? 1.0 / static_cast<double>(end - start) : 0.0);
        }
      return t;
    }
  }
  return t;
}

/// True when the table maps every output position to the same input position with weight 1.
bool is_identity(const Taps& t, std::int64_t in) {
  if (t.out != in) return false;
  for (std::int64_t o = 0; o < t.out; ++o)
    for (std::int64_t k = 0; k < t.K; ++k) {
      const auto j = static_cast<std::size_t>(o * t.K + k);
      const double w = t.w.empty() ? 1.0 : t.w[j];
      if (w != 0.0 && !(w == 1.0 && t.idx[j] == o)) return false;
      if (w == 1.0 && t.idx[j] != o) return false;
    }
  return true;
}

/// One dim of Note [separable interpolation]: the table as a CSR map for resample_op.
Tensor resample_dim(const Tensor& x, std::int64_t dim, const Taps& t) {
  if (!is_floating_or_complex(x.dtype()))  // nearest on integers: a gather, nothing to differentiate
    return index_select(x, dim, from_vector(t.idx, std::nullopt, x.device()));
  auto m = std::make_shared<nn::detail::SparseMap>();
  m->in = x.size(dim);
  m->out = t.out;
  m->col = t.idx;
  m->val = t.w.empty() ? std::vector<double>(t.idx.size(), 1.0) : t.w;
  m->row_ptr.resize(static_cast<std::size_t>(t.out + 1));
  for (std::int64_t o = 0; o <= t.out; ++o) m->row_ptr[static_cast<std::size_t>(o)] = o * t.K;
  return nn::detail::resample_op(x, dim, std::move(m));
}

/// The entries of a per-dim list: one entry for every dim, or one per dim.
template <class T>
std::vector<T> per_dim(const std::vector<T>& v, std::size_t nd, const char* what, const std::string& shown) {
  if (v.size() == 1) return std::vector<T>(nd, v[0]);
  if (v.size() != nd)
    throw Error("interpolate", std::string(what) + " " + shown + " must have 1 or " + std::to_string(nd) +
                                   " entries for an input with " + std::to_string(nd) + " spatial dims");
  return v;
}

// ---- grid_sample ------------------------------------------------------------------------------------------

enum class GridMode { bilinear, nearest, bicubic };
enum class GridPad { zeros, border, reflection };

/// torch's reflect_coordinates: c reflected about twice_low / 2 and twice_high / 2 until it lies between them.
Tensor reflect(const Tensor& c, double twice_low, double twice_high) {
  if (twice_low == twice_high) return c * 0.0;
  const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
  const Tensor a = (c - mn).abs();
  const Tensor flips = (a / span).floor().detach();
  const Tensor extra = a - flips * span;
  const Tensor odd = flips.remainder(2.0) == 1.0;
  return where(odd, (extra * -1.0) + (span + mn), extra + mn);
}

/// The padding mode applied to a pixel coordinate of a dim of `size` (zeros: unchanged).
Tensor pad_coord(const Tensor& c, GridPad pad, std::int64_t size, bool align) {
  if (pad == GridPad::zeros) return c;
  const double hi = static_cast<double>(size - 1);
  if (pad == GridPad::border) return c.clamp(0.0, hi);
  const Tensor r = align ? reflect(c, 0.0, 2.0 * hi) : reflect(c, -1.0, 2.0 * static_cast<double>(size) - 1.0);
  return r.clamp(0.0, hi);
}

}  // namespace

namespace functional {

Tensor interpolate(const Tensor& x, const std::optional<Shape>& size, const std::optional<std::vector<double>>& scale_factor,
                   const std::string& mode_name, std::optional<bool> align_corners,
                   std::optional<bool> recompute_scale_factor, bool antialias) {
  const char* op = "interpolate";
  if (!x.defined()) throw Error(op, "input is undefined");
  const Mode mode = parse_mode(mode_name);
  if (x.dim() < 3 || x.dim() > 5)
    throw Error(op, "expected a 3-D, 4-D or 5-D input (N, C, *spatial), got " + shape_str(x.shape()));
  const std::int64_t need = mode == Mode::linear ? 3 : (mode == Mode::bilinear || mode == Mode::bicubic) ? 4
                            : mode == Mode::trilinear                                       ? 5
                                                                                            : 0;
  if (need != 0 && x.dim() != need)
    throw Error(op, "mode '" + mode_name + "' needs a " + std::to_string(need) + "-D input, got " +
                        std::to_string(x.dim()) + "-D input " + shape_str(x.shape()));
  if (antialias && mode != Mode::bilinear && mode != Mode::bicubic)
    throw Error(op, "antialias=true needs mode 'bilinear' or 'bicubic' (4-D input), got mode '" + mode_name + "'");
  const bool interpolating = mode == Mode::linear || mode == Mode::bilinear || mode == Mode::bicubic ||
                             mode == Mode::trilinear;
  if (align_corners && !interpolating)
    throw Error(op, "align_corners can only be set with the interpolating modes linear, bilinear, bicubic and "
                    "trilinear, not with mode '" + mode_name + "'");
  if (size && scale_factor) throw Error(op, "only one of size or scale_factor may be given, got both");
  if (!size && !scale_factor) throw Error(op, "either size or scale_factor must be given");
  if (size && recompute_scale_factor.value_or(false))
    throw Error(op, "recompute_scale_factor is not meaningful with an explicit size");
  if (mode != Mode::nearest && mode != Mode::nearest_exact && !is_floating_or_complex(x.dtype()))
    throw Error(op, std::string("mode '") + mode_name + "' needs a floating or complex input, got " +
                        dtype_name(x.dtype()) + " of shape " + shape_str(x.shape()));
  const auto nd = static_cast<std::size_t>(x.dim() - 2);
  const Shape in(x.shape().begin() + 2, x.shape().end());
  for (auto v : in)
    if (v < 1) throw Error(op, "expected non-empty spatial dims, got input " + shape_str(x.shape()));

  Shape out;
  std::vector<std::optional<double>> sf(nd);  // the scale factor each dim's source scale uses, if any
  if (size) {
    out = per_dim(*size, nd, "size", shape_str(*size));
    for (auto v : out)
      if (v < 1) throw Error(op, "size must be positive, got " + shape_str(*size));
  } else {
    const std::vector<double> f = per_dim(*scale_factor, nd, "scale_factor", list_str(*scale_factor));
    for (double v : f)
      if (!(v > 0) || !std::isfinite(v))
        throw Error(op, "scale_factor must be positive and finite, got " + list_str(*scale_factor));
    for (std::size_t d = 0; d < nd; ++d) {
      const double o = std::floor(static_cast<double>(in[d]) * f[d]);
      if (o < 1)
        throw Error(op, "scale_factor " + list_str(*scale_factor) + " gives an empty output for input " +
                            shape_str(x.shape()));
      out.push_back(static_cast<std::int64_t>(o));
      if (!recompute_scale_factor.value_or(false)) sf[d] = f[d];
    }
  }
  const bool align = align_corners.value_or(false);
  std::vector<Taps> taps;
  for (std::size_t d = 0; d < nd; ++d)
    taps.push_back(antialias ? make_aa_taps(mode, in[d], out[d], align, sf[d]) : make_taps(mode, in[d], out[d], align, sf[d]));

  return ::phasor::detail::composite(op, {x}, [&] {
    Tensor y = x;
    // the dims that shrink first: the later ones then work on fewer elements; among dims scaled alike the
    // later first (the last dim, resampled element by element rather than by whole rows, on the fewest)
    std::vector<std::size_t> order(nd);
    for (std::size_t d = 0; d < nd; ++d) order[d] = nd - 1 - d;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return out[a] * in[b] < out[b] * in[a];
    });
    for (std::size_t d : order)
      if (!is_identity(taps[d], in[d])) y = resample_dim(y, static_cast<std::int64_t>(d) + 2, taps[d]);
    return y.is_same(x) ? x.clone() : y;
  });
}

Tensor pixel_shuffle(const Tensor& x, std::int64_t r) {
  const char* op = "pixel_shuffle";
  if (!x.defined()) throw Error(op, "input is undefined");
  if (x.dim() < 3) throw Error(op, "expected an input of at least 3 dims (*, C, H, W), got " + shape_str(x.shape()));
  if (r < 1) throw Error(op, "upscale_factor must be positive, got " + std::to_string(r));
  const Shape& s = x.shape();
  const std::size_t L = s.size() - 3;
  const std::int64_t C = s[L], H = s[L + 1], W = s[L + 2];
  if (C % (r * r) != 0)
    throw Error(op, "the channel dim of input " + shape_str(s) + " must be divisible by upscale_factor^2 = " +
                        std::to_string(r * r));
  return ::phasor::detail::composite(op, {x}, [&] {
    Shape split(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(L)), perm, merged = split;
    for (std::size_t i = 0; i < L; ++i) perm.push_back(static_cast<std::int64_t>(i));
    split.insert(split.end(), {C / (r * r), r, r, H, W});
    const auto l = static_cast<std::int64_t>(L);
    perm.insert(perm.end(), {l, l + 3, l + 1, l + 4, l + 2});
    merged.insert(merged.end(), {C / (r * r), H * r, W * r});
    return x.reshape(split).permute(perm).reshape(merged);
  });
}

Tensor pixel_unshuffle(const Tensor& x, std::int64_t r) {
  const char* op = "pixel_unshuffle";
  if (!x.defined()) throw Error(op, "input is undefined");
  if (x.dim() < 3) throw Error(op, "expected an input of at least 3 dims (*, C, H, W), got " + shape_str(x.shape()));
  if (r < 1) throw Error(op, "downscale_factor must be positive, got " + std::to_string(r));
  const Shape& s = x.shape();
  const std::size_t L = s.size() - 3;
  const std::int64_t C = s[L], H = s[L + 1], W = s[L + 2];
  if (H % r != 0 || W % r != 0)
    throw Error(op, "the spatial dims of input " + shape_str(s) + " must be divisible by downscale_factor = " +
                        std::to_string(r));
  return ::phasor::detail::composite(op, {x}, [&] {
    Shape split(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(L)), perm, merged = split;
    for (std::size_t i = 0; i < L; ++i) perm.push_back(static_cast<std::int64_t>(i));
    split.insert(split.end(), {C, H / r, r, W / r, r});
    const auto l = static_cast<std::int64_t>(L);
    perm.insert(perm.end(), {l, l + 2, l + 4, l + 1, l + 3});
    merged.insert(merged.end(), {C * r * r, H / r, W / r});
    return x.reshape(split).permute(perm).reshape(merged);
  });
}

Tensor affine_grid(const Tensor& theta, const Shape& size, bool align_corners) {
  const char* op = "affine_grid";
  if (!theta.defined()) throw Error(op, "theta is undefined");
  if (!is_floating(theta.dtype()))
    throw Error(op, std::string("expected a floating theta, got ") + dtype_name(theta.dtype()) + " of shape " +
                        shape_str(theta.shape()));
  if (size.size() != 4 && size.size() != 5)
    throw Error(op, "size must be (N, C, H, W) or (N, C, D, H, W), got " + shape_str(size));
  const auto nd = static_cast<std::int64_t>(size.size()) - 2;
  for (std::size_t i = 2; i < size.size(); ++i)
    if (size[i] < 1) throw Error(op, "expected a positive output size, got " + shape_str(size));
  if (size[0] < 0) throw Error(op, "expected a non-negative batch size, got " + shape_str(size));
  const Shape want{size[0], nd, nd + 1};
  if (theta.shape() != want)
    throw Error(op, "expected theta of shape " + shape_str(want) + " for size " + shape_str(size) + ", got " +
                        shape_str(theta.shape()));
  // coordinates along one dim: n points spread over [-1, 1] (align_corners) or the pixel centres
  const auto coords = [&](std::int64_t n) {
    std::vector<double> c(static_cast<std::size_t>(n), 0.0);
    if (n > 1)
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
        c[static_cast<std::size_t>(i)] = align_corners ? v : v * static_cast<double>(n - 1) / static_cast<double>(n);
      }
    return c;
  };
  const Shape spatial(size.begin() + 2, size.end());
  const std::int64_t P = ::phasor::detail::shape_numel(spatial);
  std::vector<std::vector<double>> axes;  // axes[k]: coordinate k (x = last spatial dim, then y, z)
  for (std::int64_t k = 0; k < nd; ++k) axes.push_back(coords(spatial[static_cast<std::size_t>(nd - 1 - k)]));
  std::vector<double> base(static_cast<std::size_t>(P * (nd + 1)));
  for (std::int64_t p = 0; p < P; ++p) {
    std::int64_t rest = p;
    for (std::int64_t k = 0; k < nd; ++k) {  // k = 0 is the last spatial dim (fastest)
      const std::int64_t n = spatial[static_cast<std::size_t>(nd - 1 - k)];
      base[static_cast<std::size_t>(p * (nd + 1) + k)] = axes[static_cast<std::size_t>(k)][static_cast<std::size_t>(rest % n)];
      rest /= n;
    }
    base[static_cast<std::size_t>(p * (nd + 1) + nd)] = 1.0;
  }
  return ::phasor::detail::composite(op, {theta}, [&] {
    const Tensor b = from_vector(base, Shape{1, P, nd + 1}).to(theta.dtype()).to(theta.device());
    Shape out{size[0]};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(nd);
    return matmul(b.expand({size[0], P, nd + 1}), theta.transpose(1, 2)).reshape(out);
  });
}

Tensor grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode_name, const std::string& padding_mode,
                   bool align_corners) {
  const char* op = "grid_sample";
  if (!x.defined()) throw Error(op, "input is undefined");
  if (!grid.defined()) throw Error(op, "grid is undefined");
  GridMode mode;
  if (mode_name == "bilinear") mode = GridMode::bilinear;
  else if (mode_name == "nearest") mode = GridMode::nearest;
  else if (mode_name == "bicubic") mode = GridMode::bicubic;
  else throw Error(op, "mode must be 'bilinear', 'nearest' or 'bicubic', got '" + mode_name + "'");
  GridPad pad;
  if (padding_mode == "zeros") pad = GridPad::zeros;
  else if (padding_mode == "border") pad = GridPad::border;
  else if (padding_mode == "reflection") pad = GridPad::reflection;
  else throw Error(op, "padding_mode must be 'zeros', 'border' or 'reflection', got '" + padding_mode + "'");
  if (x.dim() != 4 && x.dim() != 5)
    throw Error(op, "expected a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got " + shape_str(x.shape()));
  if (mode == GridMode::bicubic && x.dim() != 4)
    throw Error(op, "mode 'bicubic' needs a 4-D input, got " + shape_str(x.shape()));
  const std::int64_t nd = x.dim() - 2;
  if (!is_floating(x.dtype()))
    throw Error(op, std::string("expected a floating input, got ") + dtype_name(x.dtype()) + " of shape " +
                        shape_str(x.shape()));
  if (grid.dtype() != x.dtype())
    throw Error(op, std::string("grid dtype ") + dtype_name(grid.dtype()) + " and input dtype " +
                        dtype_name(x.dtype()) + " differ");
  if (grid.device() != x.device())
    throw Error(op, "expected grid on the input's device " + x.device().str() + ", got " + grid.device().str());
  if (grid.dim() != x.dim() || grid.size(0) != x.size(0) || grid.size(-1) != nd)
    throw Error(op, "expected grid of shape (" + std::to_string(x.size(0)) + (nd == 2 ? ", Ho, Wo, 2)" : ", Do, Ho, Wo, 3)") +
                        " for input " + shape_str(x.shape()) + ", got " + shape_str(grid.shape()));
  const Shape S(x.shape().begin() + 2, x.shape().end());
  for (auto v : S)
    if (v < 1) throw Error(op, "expected non-empty spatial dims, got input " + shape_str(x.shape()));
  const std::int64_t N = x.size(0), C = x.size(1);
  const Shape O(grid.shape().begin() + 1, grid.shape().end() - 1);
  const std::int64_t P = ::phasor::detail::shape_numel(O);

  return ::phasor::detail::composite(op, {x, grid}, [&] {
    const Tensor xf = x.reshape({N, C, ::phasor::detail::shape_numel(S)});
    const Tensor g = grid.reshape({N, P, nd});
    // coord[k]: pixel coordinate along spatial dim k of x (grid's last entry is the first spatial dim)
    std::vector<Tensor> coord;
    for (std::int64_t k = 0; k < nd; ++k) {
      const Tensor c = g.select(2, nd - 1 - k);
      const auto n = static_cast<double>(S[static_cast<std::size_t>(k)]);
      Tensor u = align_corners ? (c + 1.0) * ((n - 1) / 2) : ((c + 1.0) * n - 1.0) * 0.5;
      coord.push_back(mode == GridMode::bicubic ? u : pad_coord(u, pad, S[static_cast<std::size_t>(k)], align_corners));
    }
    // x at integer positions pos (one per spatial dim, float, no gradient) times w (undefined: 1), zero outside
    const auto tap = [&](std::vector<Tensor> pos, const Tensor& w) {
      Tensor flat, inside;
      for (std::int64_t k = 0; k < nd; ++k) {
        const std::int64_t n = S[static_cast<std::size_t>(k)];
        Tensor p = pos[static_cast<std::size_t>(k)];
        if (mode == GridMode::bicubic) p = pad_coord(p, pad, n, align_corners);
        const Tensor in = (p >= 0.0) & (p <= static_cast<double>(n - 1));
        inside = inside.defined() ? inside & in : in;
        const Tensor pi = p.clamp(0.0, static_cast<double>(n - 1)).to(int64);
        flat = flat.defined() ? flat * n + pi : pi;
      }
      const Tensor v = gather(xf, 2, flat.unsqueeze(1).expand({N, C, P}));
      const Tensor m = inside.to(x.dtype());
      return v * (w.defined() ? w * m : m).unsqueeze(1);
    };
    Tensor y;
    const auto add = [&](const Tensor& t) { y = y.defined() ? y + t : t; };
    if (mode == GridMode::nearest) {
      std::vector<Tensor> pos;
      for (const auto& c : coord) pos.push_back(c.detach().round());
      add(tap(pos, Tensor()));
    } else if (mode == GridMode::bilinear) {
      std::vector<Tensor> lo, frac;
      for (const auto& c : coord) {
        lo.push_back(c.detach().floor());
        frac.push_back(c - lo.back());
      }
      for (std::int64_t corner = 0; corner < (std::int64_t{1} << nd); ++corner) {
        std::vector<Tensor> pos;
        Tensor w;
        for (std::int64_t k = 0; k < nd; ++k) {
          const bool up = (corner >> k) & 1;
          const auto i = static_cast<std::size_t>(k);
          pos.push_back(up ? lo[i] + 1.0 : lo[i]);
          const Tensor wk = up ? frac[i] : (frac[i] * -1.0) + 1.0;
          w = w.defined() ? w * wk : wk;
        }
        add(tap(pos, w));
      }
    } else {  // bicubic, A = -0.75, taps at floor(c) - 1 .. floor(c) + 2 with the padding applied to each
      const double A = -0.75;
      const auto cc1 = [&](const Tensor& t) { return ((t * (A + 2)) - (A + 3)) * t * t + 1.0; };
      const auto cc2 = [&](const Tensor& t) { return (((t * A) - 5 * A) * t + 8 * A) * t - 4 * A; };
      std::vector<Tensor> lo;
      std::vector<std::vector<Tensor>> wts;
      for (const auto& c : coord) {
        lo.push_back(c.detach().floor());
        const Tensor t = c - lo.back();
        wts.push_back({cc2(t + 1.0), cc1(t), cc1((t * -1.0) + 1.0), cc2((t * -1.0) + 2.0)});
      }
      for (std::int64_t a = 0; a < 4; ++a)
        for (std::int64_t b = 0; b < 4; ++b)
          add(tap({lo[0] + static_cast<double>(a - 1), lo[1] + static_cast<double>(b - 1)},
                  wts[0][static_cast<std::size_t>(a)] * wts[1][static_cast<std::size_t>(b)]));
    }
    Shape out{N, C};
    out.insert(out.end(), O.begin(), O.end());
    return y.reshape(out);
  });
}

}  // namespace functional

// ---- modules ----------------------------------------------------------------------------------------------

Upsample::Upsample(std::optional<Shape> size_, std::optional<std::vector<double>> scale_factor_, std::string mode_,
                   std::optional<bool> align_corners_, std::optional<bool> recompute_scale_factor_)
    : Module("Upsample"),
      size(std::move(size_)),
      scale_factor(std::move(scale_factor_)),
      mode(std::move(mode_)),
      align_corners(align_corners_),
      recompute_scale_factor(recompute_scale_factor_) {
  if (size && scale_factor) throw Error(name(), "only one of size or scale_factor may be given, got both");
  if (!size && !scale_factor) throw Error(name(), "either size or scale_factor must be given");
  parse_mode(mode);
}

Upsample::Upsample(std::string name_, std::optional<Shape> size_, std::optional<std::vector<double>> scale_factor_,
                   std::string mode_, std::optional<bool> align_corners_)
    : Module(std::move(name_)),
      size(std::move(size_)),
      scale_factor(std::move(scale_factor_)),
      mode(std::move(mode_)),
      align_corners(align_corners_) {
  if (size && scale_factor) throw Error(name(), "only one of size or scale_factor may be given, got both");
  if (!size && !scale_factor) throw Error(name(), "either size or scale_factor must be given");
}

Tensor Upsample::forward(const Tensor& x) {
  return functional::interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor);
}

std::string Upsample::extra_repr() const {
  std::string r = scale_factor ? "scale_factor=" + list_str(*scale_factor)
                               : "size=" + (size->size() == 1 ? std::to_string((*size)[0]) : shape_str(*size));
  return r + ", mode='" + mode + "'";
}

UpsamplingNearest2d::UpsamplingNearest2d(std::optional<Shape> size_, std::optional<std::vector<double>> scale_factor_)
    : Upsample("UpsamplingNearest2d", std::move(size_), std::move(scale_factor_), "nearest", std::nullopt) {}

UpsamplingBilinear2d::UpsamplingBilinear2d(std::optional<Shape> size_, std::optional<std::vector<double>> scale_factor_)
    : Upsample("UpsamplingBilinear2d", std::move(size_), std::move(scale_factor_), "bilinear", true) {}

PixelShuffle::PixelShuffle(std::int64_t r) : Module("PixelShuffle"), upscale_factor(r) {
  if (r < 1) throw Error("PixelShuffle", "upscale_factor must be positive, got " + std::to_string(r));
}

Tensor PixelShuffle::forward(const Tensor& x) { return functional::pixel_shuffle(x, upscale_factor); }

std::string PixelShuffle::extra_repr() const { return "upscale_factor=" + std::to_string(upscale_factor); }

PixelUnshuffle::PixelUnshuffle(std::int64_t r) : Module("PixelUnshuffle"), downscale_factor(r) {
  if (r < 1) throw Error("PixelUnshuffle", "downscale_factor must be positive, got " + std::to_string(r));
}

Tensor PixelUnshuffle::forward(const Tensor& x) { return functional::pixel_unshuffle(x, downscale_factor); }

std::string PixelUnshuffle::extra_repr() const { return "downscale_factor=" + std::to_string(downscale_factor); }

}  // namespace phasor::nn
