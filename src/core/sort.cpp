// src/core/sort.cpp - sort, argsort and topk along a dim.
//
// Note [sort order]
// One order on every device: ascending puts NaN after every number, descending before; equal keys (+0 and -0,
// two NaNs) keep their input order, so a sort is always stable and its indices are one answer on the CPU (a
// stable merge sort per line) and on a GPU (a bitonic network over (key, position) pairs, cuda/sort.cu) alike.
// The kernels only make the indices; the values are a gather of x at them, so the gradient is gather's
// (a scatter of the incoming gradient back to the sorted positions) on any device.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <vector>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "cuda/index_ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace detail {
namespace {

/// True when key a goes before key b in the sort's order (Note [sort order]); ties are left to the caller.
template <class T>
bool goes_before(T a, T b, bool descending) {
  if constexpr (is_real_float_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return descending ? std::isnan(a) && !std::isnan(b) : !std::isnan(a) && std::isnan(b);
  }
  return descending ? b < a : a < b;
}

/// The first k of the int64 positions sorting each contiguous line of `rows` (lines x n) into `out` (lines x
/// k), on the CPU: a stable merge sort, or for k < n / 4 a partial (heap) sort under the order with positions
/// breaking ties (a strict total order, so the same first k).
void sort_lines_cpu(const Tensor& rows, const Tensor& out, std::int64_t n, std::int64_t k, bool descending) {
  const std::int64_t lines = n == 0 ? 0 : rows.numel() / n;
  visit_dtype(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      const T* x = static_cast<const T*>(rows.data_ptr());
      std::int64_t* idx = static_cast<std::int64_t*>(out.data_ptr());
      const int threads = lines > 1 && lines * n >= 32768 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
      for (std::int64_t r = 0; r < lines; ++r) {
        const T* line = x + r * n;
        std::vector<std::int64_t> scratch(k == n ? 0 : static_cast<std::size_t>(n));
        std::int64_t* p = k == n ? idx + r * n : scratch.data();
        std::iota(p, p + n, std::int64_t{0});
        if (k * 4 >= n) {
          std::stable_sort(p, p + n, [line, descending](std::int64_t i, std::int64_t j) {
            return goes_before(line[i], line[j], descending);
          });
        } else {  // a few of many: a heap of k
          std::partial_sort(p, p + k, p + n, [line, descending](std::int64_t i, std::int64_t j) {
            return goes_before(line[i], line[j], descending) || (!goes_before(line[j], line[i], descending) && i < j);
          });
        }
        if (k < n) std::copy(p, p + k, idx + r * k);
      }
    }
  });
}

/// Throws naming `op` for complex x (no order).
void check_sortable(const Tensor& x, const char* op) {
  if (x.is_complex()) throw Error(op, std::string("not supported for complex tensors (got ") + dtype_name(x.dtype()) + ")");
}

/// The indices of the first k (of n = x.size(d)) in the sort of x along d (wrapped; x not 0-d): int64 of x's
/// shape with dim d of size k, on x's device (Note [sort order]).
Tensor sort_indices(const Tensor& x, std::int64_t d, bool descending, std::int64_t k, const char* op) {
  check_sortable(x, op);
  const Tensor rows = x.detach().movedim(d, -1).contiguous();
  const std::int64_t n = x.size(d);
  const bool cuda = x.device().is_cuda();
  Shape s = rows.shape();
  s.back() = cuda ? n : k;  // the GPU sorts whole lines
  Tensor out = make_tensor(s, Dtype::Int64, x.device());
  if (out.numel() > 0) {
    if (cuda) phasor::cuda::detail::sort_lines(rows, out, n, descending);
    else sort_lines_cpu(rows, out, n, k, descending);
  }
  if (cuda && k < n) out = out.narrow(-1, 0, k);
  return out.movedim(-1, d).contiguous();
}

}  // namespace
}  // namespace detail

std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "sort");
  if (x.dim() == 0) {
    detail::check_sortable(x, "sort");
    return {detail::composite("sort", {x}, [&] { return x.clone(); }), zeros({}, Dtype::Int64, x.device())};
  }
  const Tensor idx = detail::sort_indices(x, d, descending, x.size(d), "sort");
  return {detail::composite("sort", {x}, [&] { return detail::gather_trusted(x, d, idx); }), idx};
}

Tensor argsort(const Tensor& x, std::int64_t dim, bool descending, bool /*stable*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "argsort");
  if (x.dim() == 0) {
    detail::check_sortable(x, "argsort");
    return zeros({}, Dtype::Int64, x.device());
  }
  return detail::sort_indices(x, d, descending, x.size(d), "argsort");
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim, bool largest, bool /*sorted*/) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "topk");
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 0 || k > n)
    throw Error("topk", "k (" + std::to_string(k) + ") out of range for dim " + std::to_string(dim) + " of size " +
                            std::to_string(n) + " (shape " + detail::shape_str(x.shape()) + ")");
  if (x.dim() == 0) {  // a line of one element: itself or nothing
    detail::check_sortable(x, "topk");
    if (k == 1) return sort(x, dim, largest);
    return {x.reshape({1}).narrow(0, 0, 0), zeros({0}, Dtype::Int64, x.device())};
  }
  const Tensor idx = detail::sort_indices(x, d, largest, k, "topk");
  return {detail::composite("topk", {x}, [&] { return detail::gather_trusted(x, d, idx); }), idx};
}

std::tuple<Tensor, Tensor> Tensor::sort(std::int64_t dim, bool descending, bool stable) const {
  return phasor::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(std::int64_t dim, bool descending, bool stable) const {
  return phasor::argsort(*this, dim, descending, stable);
}
std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t dim, bool largest, bool sorted) const {
  return phasor::topk(*this, k, dim, largest, sorted);
}

}  // namespace phasor
