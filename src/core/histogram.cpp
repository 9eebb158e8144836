// src/core/histogram.cpp - histogram and isin: counting into bins and membership, both by binary search
// (searchsorted) over sorted values, then elementwise ops and index_add. Compositions, so they run on every device
// and replay in static graphs with each replay's values (nothing is read back to the host but the check of given
// bin edges, a step of its own).
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/pointwise.hpp"
#include "core/promotion.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {

void check_histogram_input(const Tensor& x, const Tensor& weight) {
  const char* op = "histogram";
  if (!is_floating(x.dtype()) || x.is_complex())
    throw Error(op, std::string("expected a real floating tensor, got ") + dtype_name(x.dtype()));
  if (weight.defined()) {
    detail::check_same_device(x, weight, op);
    if (weight.shape() != x.shape() || weight.dtype() != x.dtype())
      throw Error(op, "weight must have the input's shape " + detail::shape_str(x.shape()) + " and dtype " +
                          dtype_name(x.dtype()) + ", got " + detail::shape_str(weight.shape()) + " " +
                          dtype_name(weight.dtype()));
  }
}

/// The histogram of x over the checked edges (nb + 1 of them): bins [e_i, e_i+1), the last one closed; returns
/// {hist, edges}.
std::vector<Tensor> histogram_over(const Tensor& x, const Tensor& edges, const Tensor& weight, bool density) {
  NoGradGuard no_grad;
  const std::int64_t nb = edges.numel() - 1;
  const Tensor v = x.detach().flatten(), lo = edges.narrow(0, 0, 1), hi = edges.narrow(0, nb, 1);
  Tensor bin = searchsorted(edges, v, true) - 1;  // e_bin <= v < e_bin+1, in [-1, nb]
  bin = where(v == hi, full({}, nb - 1, Dtype::Int64, x.device()), bin);  // the last bin holds its right edge
  bin = where(logical_and(v >= lo, v <= hi), bin, full({}, nb, Dtype::Int64, x.device()));  // outside (and NaN): bin nb
  const Tensor w = weight.defined() ? weight.detach().flatten() : ones_like(v);
  Tensor hist = zeros({nb + 1}, x.dtype(), x.device()).index_add(0, bin, w).narrow(0, 0, nb);
  if (density) hist = hist / (hist.sum() * edges.diff());
  return {hist.contiguous(), edges};
}

}  // namespace

std::tuple<Tensor, Tensor> histogram(const Tensor& x, const Tensor& bins, const Tensor& weight, bool density) {
  const char* op = "histogram";
  check_histogram_input(x, weight);
  detail::check_same_device(x, bins, op);
  if (bins.dim() != 1 || bins.numel() < 2 || bins.dtype() != x.dtype())
    throw Error(op, std::string("bin edges must be a 1-d tensor of at least 2 edges of the input's dtype ") +
                        dtype_name(x.dtype()) + ", got " + dtype_name(bins.dtype()) + " of shape " +
                        detail::shape_str(bins.shape()));
  const auto r = detail::composite(op, {x, bins}, [&] {
    // the edges' check is a step whose output the counting reads, so replays check theirs (Note [value steps])
    const Tensor edges = detail::apply_nondiff(op, {bins}, [op](detail::TensorList in) {
      if (any(in[0].diff() < 0).item<bool>() || any(isnan(in[0])).item<bool>())
        throw Error(op, "bin edges must be non-decreasing numbers");
      return in[0].clone();
    });
    return histogram_over(x, edges, weight, density);
  });
  return {r[0], r[1]};
}

std::tuple<Tensor, Tensor> histogram(const Tensor& x, std::int64_t bins, std::optional<std::pair<double, double>> range,
                                     const Tensor& weight, bool density) {
  const char* op = "histogram";
  check_histogram_input(x, weight);
  if (bins <= 0) throw Error(op, "bins must be positive, got " + std::to_string(bins));
  if (range && !(std::isfinite(range->first) && std::isfinite(range->second) && range->first <= range->second))
    throw Error(op, "range must be finite with min <= max, got [" + std::to_string(range->first) + ", " +
                        std::to_string(range->second) + "]");
  const auto r = detail::composite(op, {x}, [&] {
    NoGradGuard no_grad;
    const Dtype dt = x.dtype();
    const Device dev = x.device();
    Tensor lo, hi;
    if (range) {
      lo = full({}, range->first, dt, dev), hi = full({}, range->second, dt, dev);
    } else if (x.numel() == 0) {
      lo = zeros({}, dt, dev), hi = full({}, 1.0, dt, dev);
    } else {
      lo = x.detach().min(), hi = x.detach().max();
    }
    const Tensor point = lo == hi;  // one point: widened by 0.5 each side, as numpy and torch
    lo = where(point, lo - 0.5, lo), hi = where(point, hi + 0.5, hi);
    // linspace(lo, hi, bins + 1) from both ends, so the first and last edges are lo and hi exactly
    const Tensor i = arange(bins + 1, dt, dev), step = (hi - lo) / static_cast<double>(bins);
    const Tensor edges = where(i < bins / 2.0, lo + i * step, hi - (static_cast<double>(bins) - i) * step);
    return histogram_over(x, edges, weight, density);
  });
  return {r[0], r[1]};
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/, bool invert) {
  const char* op = "isin";
  detail::check_same_device(elements, test_elements, op);
  if (elements.is_complex() || test_elements.is_complex())
    throw Error(op, std::string("not supported for complex tensors (got ") + dtype_name(elements.dtype()) + " and " +
                        dtype_name(test_elements.dtype()) + ")");
  return detail::composite(op, {elements, test_elements}, [&] {
    NoGradGuard no_grad;
    const std::int64_t n = test_elements.numel();
    if (n == 0) return full(elements.shape(), invert, Dtype::Bool, elements.device());
    Dtype dt = promote_types(elements.dtype(), test_elements.dtype());
    if (dt == Dtype::Bool) dt = Dtype::Int64;
    // each element against the nearest test element at or above it in sorted order
    const Tensor sorted = std::get<0>(sort(test_elements.detach().to(dt).flatten()));
    const Tensor e = elements.detach().to(dt);
    const Tensor found = take(sorted, searchsorted(sorted, e).clamp(0, n - 1)) == e;
    return invert ? logical_not(found) : found;
  });
}

Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  return isin(elements, full({}, test_element, detail::result_type(elements, test_element), elements.device()),
              assume_unique, invert);
}

Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  return isin(full({}, element, detail::result_type(test_elements, element), test_elements.device()), test_elements,
              assume_unique, invert);
}

}  // namespace phasor
