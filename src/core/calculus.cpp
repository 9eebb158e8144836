// src/core/calculus.cpp - integrals and derivatives of sampled functions: trapezoid, cumulative_trapezoid and
// gradient (torch's and numpy's definitions). Compositions of views and elementwise ops, so they run on every
// device, replay in static graphs, and their gradients (in the samples and in the coordinates) come from those ops.
#include <string>
#include <vector>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {

/// 1-d t (size k) reshaped to broadcast along dim d of a tensor of `ndim` dims.
Tensor along(const Tensor& t, std::int64_t d, std::int64_t ndim) {
  Shape s(static_cast<std::size_t>(ndim), 1);
  s[static_cast<std::size_t>(d)] = t.numel();
  return t.reshape(s);
}

/// Checks y and returns dim wrapped.
std::int64_t sample_dim(const char* op, const Tensor& y, std::int64_t dim) {
  if (y.dim() == 0) throw Error(op, "expected y of at least 1 dim, got a 0-d tensor");
  return detail::wrap_dim(dim, y.dim(), op);
}

/// The sample points x of trapezoid(y, x, dim) as a tensor of y's dims whose dim d has y's size there.
Tensor sample_points(const char* op, const Tensor& y, const Tensor& x, std::int64_t d) {
  detail::check_same_device(y, x, op);
  const std::int64_t n = y.size(d);
  if (x.dim() == 1) {
    if (x.size(0) != n)
      throw Error(op, "x of size " + std::to_string(x.size(0)) + " doesn't match dim " + std::to_string(d) + " of y " +
                          detail::shape_str(y.shape()));
    return along(x, d, y.dim());
  }
  if (x.dim() > y.dim() || x.dim() == 0)
    throw Error(op, "x must be 1-d or have at most y's dims and broadcast with y, got x " + detail::shape_str(x.shape()) +
                        " and y " + detail::shape_str(y.shape()));
  Shape padded(static_cast<std::size_t>(y.dim() - x.dim()), 1);
  padded.insert(padded.end(), x.shape().begin(), x.shape().end());
  broadcast_shapes({padded, y.shape()}, op);
  if (padded[static_cast<std::size_t>(d)] != n)
    throw Error(op, "x " + detail::shape_str(x.shape()) + " must have y's size " + std::to_string(n) + " along dim " +
                        std::to_string(d) + " (y " + detail::shape_str(y.shape()) + ")");
  return x.reshape(padded);
}

/// t's intervals along d: (later samples, earlier samples), n - 1 each (none for n <= 1).
std::pair<Tensor, Tensor> interval_ends(const Tensor& t, std::int64_t d) {
  const std::int64_t n = t.size(d), m = n > 0 ? n - 1 : 0;
  return {t.narrow(d, n > 0 ? 1 : 0, m), t.narrow(d, 0, m)};
}

/// Twice the area of each trapezoid along d: (y_i+1 + y_i) (x_i+1 - x_i).
Tensor doubled_areas(const Tensor& y, const Tensor& x, std::int64_t d) {
  const auto [y1, y0] = interval_ends(y, d);
  const auto [x1, x0] = interval_ends(x, d);
  return (y1 + y0) * (x1 - x0);
}

/// y_i+1 + y_i along d (uniform spacing: each trapezoid is dx / 2 times this).
Tensor pair_sums(const Tensor& y, std::int64_t d) {
  const auto [y1, y0] = interval_ends(y, d);
  return y1 + y0;
}

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim) {
  const auto d = sample_dim("trapezoid", y, dim);
  const Tensor xs = sample_points("trapezoid", y, x, d);
  return detail::composite("trapezoid", {y, x}, [&] { return doubled_areas(y, xs, d).sum({d}) * 0.5; });
}

Tensor trapezoid(const Tensor& y, double dx, std::int64_t dim) {
  const auto d = sample_dim("trapezoid", y, dim);
  return detail::composite("trapezoid", {y}, [&] { return pair_sums(y, d).sum({d}) * (dx / 2); });
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim) {
  const auto d = sample_dim("cumulative_trapezoid", y, dim);
  const Tensor xs = sample_points("cumulative_trapezoid", y, x, d);
  return detail::composite("cumulative_trapezoid", {y, x}, [&] { return doubled_areas(y, xs, d).cumsum(d) * 0.5; });
}

Tensor cumulative_trapezoid(const Tensor& y, double dx, std::int64_t dim) {
  const auto d = sample_dim("cumulative_trapezoid", y, dim);
  return detail::composite("cumulative_trapezoid", {y}, [&] { return pair_sums(y, d).cumsum(d) * (dx / 2); });
}

// ---- gradient -------------------------------------------------------------------------------------------------------
// Samples f_0 .. f_n-1 along a dim at spacings h_i = x_i+1 - x_i. Inside, the second-order estimate for uneven
// spacing (numpy.gradient's): with hs = h_i-1, hd = h_i,
//   f'_i = -hd / (hs (hs + hd)) f_i-1 + (hd - hs) / (hs hd) f_i + hs / (hd (hs + hd)) f_i+1,
// which is (f_i+1 - f_i-1) / 2h for even spacing. At the ends: first-order one-sided differences, or with
// edge_order 2 the second-order one-sided estimates through the three end samples.

namespace {

/// The samples of f along d from i, `len` of them.
Tensor at(const Tensor& f, std::int64_t d, std::int64_t i, std::int64_t len = 1) { return f.narrow(d, i, len); }

/// df along d for evenly spaced samples (h apart).
Tensor gradient_even(const Tensor& f, std::int64_t d, double h, std::int64_t edge_order) {
  const std::int64_t n = f.size(d);
  const Tensor inside = (at(f, d, 2, n - 2) - at(f, d, 0, n - 2)) * (0.5 / h);
  Tensor first, last;
  if (edge_order == 1) {
    first = (at(f, d, 1) - at(f, d, 0)) * (1 / h);
    last = (at(f, d, n - 1) - at(f, d, n - 2)) * (1 / h);
  } else {
    first = (at(f, d, 0) * -1.5 + at(f, d, 1) * 2.0 - at(f, d, 2) * 0.5) * (1 / h);
    last = (at(f, d, n - 3) * 0.5 - at(f, d, n - 2) * 2.0 + at(f, d, n - 1) * 1.5) * (1 / h);
  }
  return cat({first, inside, last}, d);
}

/// df along d for samples at the 1-d coordinates x.
Tensor gradient_at(const Tensor& f, std::int64_t d, const Tensor& x, std::int64_t edge_order) {
  const std::int64_t n = f.size(d), nd = f.dim();
  const Tensor h = x.narrow(0, 1, n - 1) - x.narrow(0, 0, n - 1);
  const Tensor hs = h.narrow(0, 0, n - 2), hd = h.narrow(0, 1, n - 2);
  const Tensor a = -hd / (hs * (hs + hd)), b = (hd - hs) / (hs * hd), c = hs / (hd * (hs + hd));
  const Tensor inside = along(a, d, nd) * at(f, d, 0, n - 2) + along(b, d, nd) * at(f, d, 1, n - 2) +
                        along(c, d, nd) * at(f, d, 2, n - 2);
  const auto hi = [&](std::int64_t i) { return along(h.narrow(0, i, 1), d, nd); };
  Tensor first, last;
  if (edge_order == 1) {
    first = (at(f, d, 1) - at(f, d, 0)) / hi(0);
    last = (at(f, d, n - 1) - at(f, d, n - 2)) / hi(n - 2);
  } else {
    const Tensor h0 = hi(0), h1 = hi(1), s = h0 + h1;
    first = -(h0 * 2 + h1) / (h0 * s) * at(f, d, 0) + s / (h0 * h1) * at(f, d, 1) - h0 / (h1 * s) * at(f, d, 2);
    const Tensor g1 = hi(n - 3), g2 = hi(n - 2), t = g1 + g2;
    last = g2 / (g1 * t) * at(f, d, n - 3) - t / (g1 * g2) * at(f, d, n - 2) + (g2 * 2 + g1) / (g2 * t) * at(f, d, n - 1);
  }
  return cat({first, inside, last}, d);
}

/// The dims gradient differentiates along, checked: f has every one of them with edge_order + 1 samples.
std::vector<std::int64_t> gradient_dims(const Tensor& f, const Shape& dims, std::int64_t edge_order) {
  const char* op = "gradient";
  if (f.dim() == 0) throw Error(op, "expected a tensor of at least 1 dim, got a 0-d tensor");
  if (edge_order != 1 && edge_order != 2) throw Error(op, "edge_order must be 1 or 2, got " + std::to_string(edge_order));
  if (f.dtype() == Dtype::Bool) throw Error(op, "expected a numeric tensor, got bool");
  const auto ds = detail::wrap_dims(dims, f.dim(), op, true);
  for (auto d : ds)
    if (f.size(d) < edge_order + 1)
      throw Error(op, "each differentiated dim needs at least edge_order + 1 = " + std::to_string(edge_order + 1) +
                          " samples, but dim " + std::to_string(d) + " of the tensor of shape " +
                          detail::shape_str(f.shape()) + " has " + std::to_string(f.size(d)));
  return ds;
}

}  // namespace

std::vector<Tensor> gradient(const Tensor& f, const std::vector<double>& spacing, const Shape& dims,
                             std::int64_t edge_order) {
  const auto ds = gradient_dims(f, dims, edge_order);
  if (spacing.size() != 1 && spacing.size() != ds.size())
    throw Error("gradient", "expected one spacing or one per differentiated dim (" + std::to_string(ds.size()) +
                                "), got " + std::to_string(spacing.size()));
  return detail::composite("gradient", {f}, [&] {
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < ds.size(); ++i)
      out.push_back(gradient_even(f, ds[i], spacing.size() == 1 ? spacing[0] : spacing[i], edge_order));
    return out;
  });
}

std::vector<Tensor> gradient(const Tensor& f, double spacing, const Shape& dims, std::int64_t edge_order) {
  return gradient(f, std::vector<double>{spacing}, dims, edge_order);
}

std::vector<Tensor> gradient(const Tensor& f, const std::vector<Tensor>& coordinates, const Shape& dims,
                             std::int64_t edge_order) {
  const auto ds = gradient_dims(f, dims, edge_order);
  if (coordinates.size() != ds.size())
    throw Error("gradient", "expected one coordinate tensor per differentiated dim (" + std::to_string(ds.size()) +
                                "), got " + std::to_string(coordinates.size()));
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const Tensor& x = coordinates[i];
    detail::check_same_device(f, x, "gradient");
    if (x.dim() != 1 || x.size(0) != f.size(ds[i]))
      throw Error("gradient", "the coordinates of dim " + std::to_string(ds[i]) + " must be 1-d of its size " +
                                  std::to_string(f.size(ds[i])) + ", got shape " + detail::shape_str(x.shape()) +
                                  " (f " + detail::shape_str(f.shape()) + ")");
    if (x.is_complex() || x.dtype() == Dtype::Bool)
      throw Error("gradient", std::string("coordinates must be real numbers, got ") + dtype_name(x.dtype()));
  }
  std::vector<Tensor> inputs{f};
  inputs.insert(inputs.end(), coordinates.begin(), coordinates.end());
  return detail::composite("gradient", inputs, [&] {
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < ds.size(); ++i) out.push_back(gradient_at(f, ds[i], coordinates[i], edge_order));
    return out;
  });
}

}  // namespace phasor
