// src/nn/resample.cpp - resample_op (src/nn/resample.hpp): a sparse linear map along one dim, one pass over
// the input. The CPU loops below and src/cuda/resample.cu's kernel sum each output's taps in row order,
// starting from the first tap's product, so the devices agree to rounding of the same operations.
#include "nn/resample.hpp"

#include <omp.h>

#include <algorithm>
#include <string>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "cuda/nn_ops.hpp"

namespace phasor::nn::detail {

namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;

/// Threads for `work` multiply-adds.
int threads_for(std::int64_t work) {
  return work >= 2 * ::phasor::detail::kParallelGrain ? get_num_threads() : 1;
}

/// Splits the pre * out rows (r = p * out + o) into one contiguous range per thread and runs body(p, o0, o1)
/// for each piece of a range within one p (so the body's loop over o needs no index division).
template <class Body>
void for_row_spans(std::int64_t pre, std::int64_t out, std::int64_t work, Body&& body) {
  const std::int64_t rows = pre * out;
  const int threads = static_cast<int>(std::min<std::int64_t>(threads_for(work), rows));
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const std::int64_t end = rows * (t + 1) / n;
    for (std::int64_t r = rows * t / n; r < end;) {
      const std::int64_t p = r / out, o0 = r - p * out, o1 = std::min(out, o0 + (end - r));
      body(p, o0, o1);
      r += o1 - o0;
    }
  }
}

/// The taps of one output, K of them at c and v (K > 0 fixed at compile time, else n), summed in order.
template <int K, class R>
inline R dot_taps(const R* __restrict xp, const std::int64_t* __restrict c, const R* __restrict v, std::int64_t n,
                  std::int64_t P) {
  const std::int64_t k_end = K > 0 ? K : n;
  if (k_end == 0) return R(0);
  R acc = v[0] * xp[c[0] * P];
  for (std::int64_t k = 1; k < k_end; ++k) acc += v[k] * xp[c[k] * P];
  return acc;
}

/// The dot path of resample_cpu: each output component from its taps, rows of K taps each (K > 0), or any.
template <int K, class R>
void resample_dots(const R* __restrict x, R* __restrict y, const SparseMap& m, const R* __restrict v, std::int64_t pre,
                   std::int64_t P, std::int64_t work) {
  const std::int64_t* __restrict rp = m.row_ptr.data();
  const std::int64_t* __restrict col = m.col.data();
  const std::int64_t in = m.in, out = m.out;
  for_row_spans(pre, out, work, [=](std::int64_t p, std::int64_t o0, std::int64_t o1) {
    const R* __restrict xp = x + p * in * P;
    R* __restrict yp = y + p * out * P;
    if (P == 1) {
      for (std::int64_t o = o0; o < o1; ++o) {
        const std::int64_t b = K > 0 ? o * K : rp[o];
        yp[o] = dot_taps<K>(xp, col + b, v + b, K > 0 ? K : rp[o + 1] - b, 1);
      }
      return;
    }
    for (std::int64_t o = o0; o < o1; ++o) {
      const std::int64_t b = K > 0 ? o * K : rp[o], n = K > 0 ? K : rp[o + 1] - b;
      for (std::int64_t q = 0; q < P; ++q) yp[o * P + q] = dot_taps<K>(xp + q, col + b, v + b, n, P);
    }
  });
}

/// y (pre, out, P) = map along the middle dim of the contiguous x (pre, in, P), R the real type (a complex
/// element is two adjacent R, so P counts real components).
template <class R>
void resample_cpu(const R* __restrict x, R* __restrict y, const SparseMap& m, std::int64_t pre, std::int64_t P) {
  const std::vector<R> val(m.val.begin(), m.val.end());
  const std::int64_t* rp = m.row_ptr.data();
  const std::int64_t* col = m.col.data();
  const R* v = val.data();
  const std::int64_t in = m.in;
  const std::int64_t work = pre * P * std::max<std::int64_t>(static_cast<std::int64_t>(m.col.size()), m.out);
  if (P >= 8) {
    // whole rows of P: one multiply-add over a contiguous row per tap (vectorised)
    const std::int64_t out = m.out;
    for_row_spans(pre, out, work, [=](std::int64_t p, std::int64_t o0, std::int64_t o1) {
      const R* __restrict xp = x + p * in * P;
      for (std::int64_t o = o0; o < o1; ++o) {
        R* __restrict yr = y + (p * out + o) * P;
        const std::int64_t b = rp[o], e = rp[o + 1];
        if (b == e) {
          std::fill(yr, yr + P, R(0));
          continue;
        }
        const R* __restrict x0 = xp + col[b] * P;
        const R v0 = v[b];
        for (std::int64_t i = 0; i < P; ++i) yr[i] = v0 * x0[i];
        for (std::int64_t j = b + 1; j < e; ++j) {
          const R* __restrict xj = xp + col[j] * P;
          const R vj = v[j];
          for (std::int64_t i = 0; i < P; ++i) yr[i] += vj * xj[i];
        }
      }
    });
    return;
  }
  // a few components per position (P == 1: the last dim of a real tensor): a dot over the taps per element,
  // unrolled for the common uniform rows of 1, 2 or 4 taps (interpolate's tables)
  std::int64_t K = m.out > 0 ? rp[1] - rp[0] : 0;
  for (std::int64_t o = 0; o <= m.out && K > 0; ++o)
    if (rp[o] != o * K) K = 0;
  if (K == 1) resample_dots<1>(x, y, m, v, pre, P, work);
  else if (K == 2) resample_dots<2>(x, y, m, v, pre, P, work);
  else if (K == 4) resample_dots<4>(x, y, m, v, pre, P, work);
  else resample_dots<0>(x, y, m, v, pre, P, work);
}

Tensor resample_forward(const Tensor& x_, std::int64_t dim, const SparseMap& m) {
  if (x_.device().is_cuda()) return cuda::detail::resample(x_, dim, m);
  const Tensor x = x_.contiguous();
  Shape ys = x.shape();
  ys[static_cast<std::size_t>(dim)] = m.out;
  Tensor y = ::phasor::detail::make_tensor(ys, x.dtype(), x.device());
  if (y.numel() == 0) return y;
  std::int64_t pre = 1, post = is_complex(x.dtype()) ? 2 : 1;
  for (std::int64_t d = 0; d < dim; ++d) pre *= x.size(d);
  for (std::int64_t d = dim + 1; d < x.dim(); ++d) post *= x.size(d);
  if (to_real(x.dtype()) == Dtype::Float64)
    resample_cpu(static_cast<const double*>(x.data_ptr()), static_cast<double*>(y.data_ptr()), m, pre, post);
  else
    resample_cpu(static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), m, pre, post);
  return y;
}

}  // namespace

SparseMap SparseMap::transposed() const {
  SparseMap t;
  t.in = out;
  t.out = in;
  t.row_ptr.assign(static_cast<std::size_t>(in + 1), 0);
  for (auto c : col) ++t.row_ptr[static_cast<std::size_t>(c + 1)];
  for (std::int64_t i = 0; i < in; ++i) t.row_ptr[static_cast<std::size_t>(i + 1)] += t.row_ptr[static_cast<std::size_t>(i)];
  t.col.resize(col.size());
  t.val.resize(val.size());
  std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t j = row_ptr[static_cast<std::size_t>(o)]; j < row_ptr[static_cast<std::size_t>(o + 1)]; ++j) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(col[static_cast<std::size_t>(j)])]++);
      t.col[at] = o;
      t.val[at] = val[static_cast<std::size_t>(j)];
    }
  return t;
}

Tensor resample_op(const Tensor& x, std::int64_t dim, std::shared_ptr<const SparseMap> map,
                   std::shared_ptr<const SparseMap> adjoint) {
  const char* op = "resample";
  if (!x.defined()) throw Error(op, "input is undefined");
  if (!map) throw Error(op, "no map given");
  const Dtype dt = x.dtype();
  if (dt != Dtype::Float32 && dt != Dtype::Float64 && dt != Dtype::Complex64 && dt != Dtype::Complex128)
    throw Error(op, std::string("expected a float32, float64, complex64 or complex128 input, got ") + dtype_name(dt));
  const std::int64_t nd = x.dim();
  if (dim < -nd || dim >= nd)
    throw Error(op, "dim " + std::to_string(dim) + " is out of range for input " + ::phasor::detail::shape_str(x.shape()));
  if (dim < 0) dim += nd;
  const SparseMap& m = *map;
  if (x.size(dim) != m.in || static_cast<std::int64_t>(m.row_ptr.size()) != m.out + 1 || m.col.size() != m.val.size() ||
      m.row_ptr.back() != static_cast<std::int64_t>(m.col.size()))
    throw Error(op, "a map of " + std::to_string(m.in) + " inputs and " + std::to_string(m.out) + " outputs (" +
                        std::to_string(m.col.size()) + " taps) does not fit dim " + std::to_string(dim) +
                        " of input " + ::phasor::detail::shape_str(x.shape()));
  for (auto c : m.col)
    if (c < 0 || c >= m.in) throw Error(op, "tap column " + std::to_string(c) + " is outside [0, " + std::to_string(m.in) + ")");
  // the adjoint is built once, before any backward, and shared by every gradient of this result
  if (!adjoint && GradMode::is_enabled() && x.requires_grad())
    adjoint = std::make_shared<const SparseMap>(map->transposed());
  return ::phasor::detail::apply_op(
      op, {x}, ::phasor::detail::kSaveNone, [dim, map](In in) { return resample_forward(in[0], dim, *map); },
      [dim, map, adjoint](const ::phasor::detail::Ctx&, const G& g) {
        const auto adj = adjoint ? adjoint : std::make_shared<const SparseMap>(map->transposed());
        return G{resample_op(g[0], dim, adj, map)};
      });
}

}  // namespace phasor::nn::detail
