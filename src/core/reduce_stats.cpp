// src/core/reduce_stats.cpp - var, std, logsumexp and the scans: cumsum, cumprod, cummax, cummin,
// logcumsumexp (CUDA tensors: kernels in src/cuda/reduce.cu through the glue of src/cuda/ops.hpp; gradients
// are public ops, so they run on the GPU too).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/index_ops.hpp"
#include "core/pointwise.hpp"
#include "core/reduce.hpp"
#include "core/scan_rules.hpp"
#include "cuda/ops.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

void check_float(const Tensor& x, const char* op) {
  if (!is_floating_or_complex(x.dtype()))
    throw Error(op, std::string("expected a floating or complex tensor, got ") + dtype_name(x.dtype()));
}

/// Sum of |x - mean|^2 with the mean as per-output parameter; finalize divides (and takes sqrt).
template <class T>
struct VarOp {
  using R = real_t<T>;
  using in_t = T;
  using acc_t = R;
  using param_t = T;
  using out_t = R;
  static constexpr int kLanes = lanes_for<R>;
  R divisor;
  bool take_sqrt;
  R identity() const { return R(0); }
  R map(const T& v, const T& m) const {
    const T d = v - m;
    if constexpr (is_complex_v<T>) return d.real() * d.real() + d.imag() * d.imag();
    else return d * d;
  }
  R combine(R a, R b) const { return a + b; }
  R finalize(R a, const T&) const { return take_sqrt ? std::sqrt(a / divisor) : a / divisor; }
};

/// Largest real part (NaN propagates); the shift of logsumexp.
template <class T>
struct MaxRealOp {
  using R = real_t<T>;
  using in_t = T;
  using acc_t = R;
  using param_t = NoParam;
  using out_t = R;
  static constexpr int kLanes = lanes_for<R>;
  R identity() const { return -std::numeric_limits<R>::infinity(); }
  R map(const T& v, NoParam) const {
    if constexpr (is_complex_v<T>) return v.real();
    else return v;
  }
  R combine(R a, R b) const { return reduce_max(a, b); }
  R finalize(R a, NoParam) const { return a; }
};

/// log(sum(exp(x - m))) + m with the shift m as per-output parameter.
template <class T>
struct LseOp {
  using R = real_t<T>;
  using in_t = T;
  using acc_t = T;
  using param_t = R;
  using out_t = T;
  static constexpr int kLanes = lanes_for<T>;
  T identity() const { return T(0); }
  T map(const T& v, const R& m) const { return std::exp(v - m); }
  T combine(T a, T b) const { return a + b; }
  T finalize(T a, const R& m) const { return std::log(a) + m; }
};

Tensor var_kernel(const Tensor& x, const Shape& dims, double correction, bool keepdim, bool take_sqrt, const char* op) {
  check_float(x, op);
  if (x.device().is_cuda()) return phasor::cuda::detail::reduce_stat(op, x, dims, keepdim, correction);
  ReduceLayout L = plan_layout(x, dims, keepdim, op);
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_float_v<T> || is_complex_v<T>) {
      using R = real_t<T>;
      // pass 1: the mean (stored contiguously in the keepdim layout, the parameter of pass 2)
      Tensor mean = run_reduce(x, L, SumOp<T, T>{});
      T* mp = static_cast<T*>(mean.data_ptr());
      for (std::int64_t i = 0; i < L.n_out; ++i) mp[i] /= static_cast<R>(L.n_red);
      const double dof = std::max(0.0, static_cast<double>(L.n_red) - correction);
      return run_reduce(x, L, VarOp<T>{static_cast<R>(dof), take_sqrt}, mean);
    } else {
      throw Error(op, "internal: integer input reached the var kernel");
    }
  });
}

Tensor logsumexp_kernel(const Tensor& x, const Shape& dims, bool keepdim) {
  check_float(x, "logsumexp");
  if (x.device().is_cuda()) return phasor::cuda::detail::reduce_stat("logsumexp", x, dims, keepdim, 0);
  ReduceLayout L = plan_layout(x, dims, keepdim, "logsumexp");
  return visit_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (is_real_float_v<T> || is_complex_v<T>) {
      using R = real_t<T>;
      Tensor m = run_reduce(x, L, MaxRealOp<T>{});
      R* mp = static_cast<R*>(m.data_ptr());
      for (std::int64_t i = 0; i < L.n_out; ++i)
        if (std::isinf(mp[i])) mp[i] = 0;  // all -inf (or a +inf): shifting would give NaN
      return run_reduce(x, L, LseOp<T>{}, m);
    } else {
      throw Error("logsumexp", "internal: integer input reached the logsumexp kernel");
    }
  });
}

/// Degrees of freedom of var/std over dims: max(0, N - correction).
double var_dof(const Shape& in_shape, const Shape& dims, double correction, const char* op) {
  auto wd = wrap_dims(dims, static_cast<std::int64_t>(in_shape.size()), op, true);
  double n = 1;
  for (auto d : wd) n *= static_cast<double>(in_shape[static_cast<std::size_t>(d)]);
  return std::max(0.0, n - correction);
}

Tensor var_std(const char* op, const Tensor& x, const Shape& dims, double correction, bool keepdim, bool take_sqrt) {
  check_float(x, op);
  return apply_op(
      op, {x}, take_sqrt ? (kSaveInputs | kSaveOutputs) : kSaveInputs,
      [dims, correction, keepdim, take_sqrt, op](In in) { return var_kernel(in[0], dims, correction, keepdim, take_sqrt, op); },
      [op, dims, correction, keepdim, take_sqrt](const Ctx& c, const G& g) {
        Tensor x = c.input(0);
        const double dof = var_dof(x.shape(), dims, correction, op);
        Tensor gk = unsqueeze_reduced(g[0], x.shape(), dims, keepdim, op);
        Tensor d = x - mean(x, dims, true);
        if (!take_sqrt) return G{gk * d * (2.0 / dof)};
        // d std = d var / (2 std)
        Tensor sk = unsqueeze_reduced(c.output(0), x.shape(), dims, keepdim, op);
        return G{gk * d / (sk * dof)};
      });
}

// ---- scans: cumsum, cumprod, cummax, cummin, logcumsumexp ------------------------------------------
template <class T> struct scan_acc { using type = T; };
template <> struct scan_acc<float> { using type = double; };
template <> struct scan_acc<c64> { using type = c128; };

/// The running values of `kind` (scan_rules.hpp) along dim d, from the end when `reverse`: bool and int64
/// give int64 (sums and products wrap), float32 accumulates in double, complex64 in complex128. The caller
/// has checked that the kind takes x's dtype.
Tensor scan_kernel(const Tensor& x, std::int64_t d, bool reverse, ScanKind kind) {
  const Dtype od = x.dtype() == Dtype::Bool ? Dtype::Int64 : x.dtype();
  Tensor src = x.to(od).contiguous();
  Tensor out = make_tensor(x.shape(), od, x.device());
  std::int64_t outer = 1, n = 1, inner = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    const auto s = x.shape()[static_cast<std::size_t>(i)];
    if (i < d) outer *= s;
    else if (i == d) n = s;
    else inner *= s;
  }
  if (out.numel() == 0) return out;
  if (x.device().is_cuda()) {
    phasor::cuda::detail::scan(kind, src, out, outer, n, inner, reverse);
    return out;
  }
  visit_scan(kind, [&](auto kind_tag) {
    constexpr ScanKind K = decltype(kind_tag)::value;
    visit_dtype(od, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename scan_acc<T>::type;
      if constexpr (!std::is_same_v<T, bool> && scan_supports_v<K, A>) {
        const T* xp = static_cast<const T*>(src.data_ptr());
        T* op = static_cast<T*>(out.data_ptr());
        if (inner == 1) {  // lines along the last dim: one running value per line, no accumulator array
          const int threads = reduce_threads(out.numel()) > 1 && outer > 1 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
          for (std::int64_t o = 0; o < outer; ++o) {
            const T* a = xp + o * n;
            T* b = op + o * n;
            A acc = scan_identity<K, A>();
            for (std::int64_t kk = 0; kk < n; ++kk) {
              const std::int64_t k = reverse ? n - 1 - kk : kk;
              acc = scan_combine<K>(acc, static_cast<A>(a[k]));
              b[k] = static_cast<T>(acc);
            }
          }
          return;
        }
        const std::int64_t tile = std::min<std::int64_t>(inner, 1024);
        const std::int64_t ntiles = (inner + tile - 1) / tile;
        const std::int64_t tasks = outer * ntiles;
        const int threads = reduce_threads(out.numel()) > 1 && tasks > 1 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
        for (std::int64_t task = 0; task < tasks; ++task) {
          const std::int64_t o = task / ntiles, i0 = (task % ntiles) * tile, w = std::min(tile, inner - i0);
          const T* xr = xp + o * n * inner + i0;
          T* orow = op + o * n * inner + i0;
          A* acc = thread_scratch<A>(static_cast<std::size_t>(w));
          for (std::int64_t j = 0; j < w; ++j) acc[j] = scan_identity<K, A>();
          for (std::int64_t kk = 0; kk < n; ++kk) {
            const std::int64_t k = reverse ? n - 1 - kk : kk;
            const T* a = xr + k * inner;
            T* b = orow + k * inner;
            for (std::int64_t j = 0; j < w; ++j) b[j] = static_cast<T>(acc[j] = scan_combine<K>(acc[j], static_cast<A>(a[j])));
          }
        }
      }
    });
  });
  return out;
}

/// cumsum as a primitive whose gradient is the cumsum in the other direction.
Tensor cumsum_dir(const Tensor& x, std::int64_t d, bool reverse) {
  return apply_op(
      reverse ? "cumsum_reverse" : "cumsum", {x}, kSaveNone,
      [d, reverse](In in) { return scan_kernel(in[0], d, reverse, ScanKind::Sum); },
      [d, reverse](const Ctx&, const G& g) { return G{cumsum_dir(g[0], d, !reverse)}; });
}

// Note [cumprod gradient]
// y_j = x_0 ... x_j, so dL/dx_k = sum_{j >= k} g_j conj(o_kj) with o_kj = prod_{i <= j, i != k} x_i (conj:
// PyTorch's convention, Note [complex gradcheck]). As in Note [prod gradient with zeros], let m be the
// (constant) indicator of zeros, c_j = m_0 + ... + m_j the zeros up to j, y = x + m (no zeros), Y = cumprod(y)
// and s_j = sum_{i <= j} m_i x_i (value 0, derivative 1 at the zeros). Then, exactly in value and first
// derivative (so double backward is right too):
//   c_j == 0: o_kj = Y_j / y_k;
//   c_j == 1: o_kj = Y_j / y_k at the zero (k = z), Y_j / y_k * s_j elsewhere;
//   c_j == 2: o_kj = Y_j / y_k * (s_j - x_k) at the two zeros, 0 elsewhere;
//   c_j >= 3: o_kj = 0.
// The masks split into a factor of j and one of k, so each term is a reverse running sum over j of g conj(Y)
// times a mask of j (and conj(s)), scaled per k; all of it ops with gradients of their own, one pass each and
// no host wait (no test for zeros first), so it runs in CUDA graphs too.
Tensor cumprod_backward(const Tensor& x, const Tensor& g, std::int64_t d) {
  const Dtype rd = to_real(x.dtype());
  Tensor m, none, one, two;
  {
    NoGradGuard ng;  // constant masks
    m = (x.detach() == 0.0).to(rd);
    const Tensor c = cumsum(m, d);
    none = (c == 0.0).to(rd), one = (c == 1.0).to(rd), two = (c == 2.0).to(rd);
  }
  const Tensor y = x + m, gY = g * cumprod(y, d).conj(), sc = cumsum(x * m, d).conj();
  const auto rsum = [d](const Tensor& t) { return cumsum_dir(t, d, true); };  // sum over j >= k
  const Tensor g1 = gY * one, g2 = gY * two;
  const Tensor terms = rsum(gY * none) + m * rsum(g1) + (1.0 - m) * rsum(g1 * sc) +
                       m * (rsum(g2 * sc) - x.conj() * rsum(g2));
  return terms / y.conj();
}


// Note [cummax indices]
// cummax's (cummin's) index at j is the last i <= j where x_i equals the running max at i, a NaN matching a
// NaN: the running max is constant from the position of its value on, so that i holds the value, and a
// later tie wins (torch.cummax). One running-max scan gives the values to match, a second one over the
// matching positions (-1 elsewhere) the indices (the GPU's way; the CPU runs torch's one-pass loop); the
// values returned are x gathered at them, so their gradient is gather's on any device (the CPU's loop writes
// the same values itself where no gradient is recorded, which saves the gather: 1210 -> 815 us for 1M float32).
/// The CPU's cummax (cummin) indices in one pass per line, torch.cummax's loop, and with `with_values` the
/// values too (else undefined): the index moves to an element that ties or beats the running extreme, or is
/// NaN, and stays on a NaN; the value is x there. The same indices as the two scans (DEVICE_CASEs compare them).
std::pair<Tensor, Tensor> running_extreme_cpu(const Tensor& x, std::int64_t d, bool is_max, bool with_values) {
  const Tensor rows = x.detach().movedim(d, -1).contiguous();
  const std::int64_t n = x.size(d), lines = n == 0 ? 0 : x.numel() / n;
  Tensor out = make_tensor(rows.shape(), Dtype::Int64, x.device());
  Tensor values = with_values ? make_tensor(rows.shape(), x.dtype(), x.device()) : Tensor();
  visit_dtype(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T>) {
      const T* xp = static_cast<const T*>(rows.data_ptr());
      std::int64_t* op = static_cast<std::int64_t*>(out.data_ptr());
      T* vp = with_values ? static_cast<T*>(values.data_ptr()) : nullptr;
      const int threads = reduce_threads(out.numel()) > 1 && lines > 1 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t r = 0; r < lines; ++r) {
        const T* a = xp + r * n;
        std::int64_t* o = op + r * n;
        T* w = vp ? vp + r * n : nullptr;
        T best = a[0];
        std::int64_t at = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const T v = a[j];
          // a NaN takes over (a later one too); a number ties or beats a number
          if (v != v || (best == best && (is_max ? v >= best : v <= best))) best = v, at = j;
          o[j] = at;
          if (w) w[j] = best;
        }
      }
    }
  });
  return {with_values ? values.movedim(-1, d) : values, out.movedim(-1, d)};
}

std::tuple<Tensor, Tensor> running_extreme(const Tensor& x, std::int64_t dim, ScanKind kind) {
  const char* op = scan_name(kind);
  const std::int64_t d = wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), op);
  check_not_complex(x, op);
  if (x.dim() == 0) return {composite(op, {x}, [&] { return x.clone(); }), zeros({}, Dtype::Int64, x.device())};
  // the indices (and the CPU loop's values, taken where no gradient is recorded and nothing is traced: a replay
  // may record one) are a step of their own (Note [value steps])
  const bool with_values = !x.device().is_cuda() && !(GradMode::is_enabled() && x.requires_grad()) && !tracing();
  const std::vector<Tensor> r = apply_nondiff_n(op, {x}, [d, kind, with_values](TensorList in) {
    const Tensor& xd = in[0];
    if (!xd.device().is_cuda()) {
      auto [values, idx] = running_extreme_cpu(xd, d, kind == ScanKind::Max, with_values);
      return std::vector<Tensor>{idx, values};
    }
    const Tensor run = scan_kernel(xd, d, false, kind);  // bool runs as int64
    const Tensor xv = xd.to(run.dtype());
    Tensor match = xv == run;
    if (is_floating(xd.dtype())) match = match | (xv.isnan() & run.isnan());
    Shape ps(static_cast<std::size_t>(xd.dim()), 1);
    ps[static_cast<std::size_t>(d)] = xd.size(d);
    const Tensor pos = arange(xd.size(d), Dtype::Int64, xd.device()).reshape(ps);
    return std::vector<Tensor>{scan_kernel(where(match, pos, Scalar(std::int64_t{-1})), d, false, ScanKind::Max), Tensor()};
  });
  const Tensor& idx = r[0];
  const Tensor& values = r[1];
  return {composite(op, {x}, [&] { return values.defined() ? values : gather_trusted(x, d, idx); }), idx};
}

/// logcumsumexp along d (from the end when `reverse`) as a primitive. Its gradient, sum over j >= i of
/// g_j e^(x_i - y_j), is two logcumsumexps the other way over log|g| - y (positive and negative g apart),
/// so it never overflows and has gradients of its own.
Tensor logcumsumexp_dir(const Tensor& x, std::int64_t d, bool reverse) {
  return apply_op(
      "logcumsumexp", {x}, kSaveInputs | kSaveOutputs,
      [d, reverse](In in) { return scan_kernel(in[0], d, reverse, ScanKind::LogAddExp); },
      [d, reverse](const Ctx& c, const G& g) {
        const Tensor& gy = g[0];
        const Tensor y = c.output(0), x = c.input(0);
        Tensor pos, neg;
        {
          NoGradGuard ng;
          pos = gy.detach() > 0.0;
          neg = gy.detach() < 0.0;
        }
        const double inf = std::numeric_limits<double>::infinity();
        const Tensor lp = where(pos, where(pos, gy, 1.0).log() - y, -inf);
        const Tensor ln = where(neg, where(neg, -gy, 1.0).log() - y, -inf);
        return G{(x + logcumsumexp_dir(lp, d, !reverse)).exp() - (x + logcumsumexp_dir(ln, d, !reverse)).exp()};
      });
}

}  // namespace
}  // namespace detail

Tensor var(const Tensor& x, const Shape& dims, double correction, bool keepdim) {
  return detail::var_std("var", x, dims, correction, keepdim, false);
}

Tensor std(const Tensor& x, const Shape& dims, double correction, bool keepdim) {
  return detail::var_std("std", x, dims, correction, keepdim, true);
}

Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim) {
  detail::check_float(x, "logsumexp");
  return detail::apply_op(
      "logsumexp", {x}, detail::kSaveInputs | detail::kSaveOutputs,
      [dims, keepdim](In in) { return detail::logsumexp_kernel(in[0], dims, keepdim); },
      [dims, keepdim](const detail::Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor ok = detail::unsqueeze_reduced(c.output(0), x.shape(), dims, keepdim, "logsumexp");
        Tensor gk = detail::unsqueeze_reduced(g[0], x.shape(), dims, keepdim, "logsumexp");
        return G{gk * (x - ok).exp().conj()};
      });
}

Tensor cumsum(const Tensor& x, std::int64_t dim) {
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "cumsum");
  return detail::cumsum_dir(x, d, false);
}

Tensor Tensor::var(const Shape& dims, double correction, bool keepdim) const {
  return phasor::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const Shape& dims, double correction, bool keepdim) const {
  return phasor::std(*this, dims, correction, keepdim);
}
Tensor Tensor::logsumexp(const Shape& dims, bool keepdim) const { return phasor::logsumexp(*this, dims, keepdim); }
Tensor Tensor::cumsum(std::int64_t dim) const { return phasor::cumsum(*this, dim); }

Tensor cumprod(const Tensor& x, std::int64_t dim) {
  const std::int64_t d = detail::wrap_dim(dim, x.dim(), "cumprod");
  return detail::apply_op(
      "cumprod", {x}, detail::kSaveInputs, [d](In in) { return detail::scan_kernel(in[0], d, false, detail::ScanKind::Prod); },
      [d](const detail::Ctx& c, const G& g) { return G{detail::cumprod_backward(c.input(0), g[0], d)}; });
}
Tensor Tensor::cumprod(std::int64_t dim) const { return phasor::cumprod(*this, dim); }

}  // namespace phasor

namespace phasor {

std::tuple<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim) {
  return detail::running_extreme(x, dim, detail::ScanKind::Max);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim) {
  return detail::running_extreme(x, dim, detail::ScanKind::Min);
}
Tensor logcumsumexp(const Tensor& x, std::int64_t dim) {
  const std::int64_t d = detail::wrap_dim(dim, std::max<std::int64_t>(x.dim(), 1), "logcumsumexp");
  if (!is_floating(x.dtype()))
    throw Error("logcumsumexp", std::string("expected a real floating tensor, got ") + dtype_name(x.dtype()));
  if (x.dim() == 0) return detail::composite("logcumsumexp", {x}, [&] { return x.clone(); });
  return detail::logcumsumexp_dir(x, d, false);
}
std::tuple<Tensor, Tensor> Tensor::cummax(std::int64_t dim) const { return phasor::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(std::int64_t dim) const { return phasor::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(std::int64_t dim) const { return phasor::logcumsumexp(*this, dim); }


// ---- NaN-ignoring reductions, aminmax, cov, corrcoef ---------------------------------------------------------
Tensor nansum(const Tensor& x, const Shape& dims, bool keepdim) {
  if (!is_floating_or_complex(x.dtype())) return x.sum(dims, keepdim);
  return detail::composite("nansum", {x}, [&] { return where(x.isnan(), Scalar(0), x).sum(dims, keepdim); });
}

Tensor nanmean(const Tensor& x, const Shape& dims, bool keepdim) {
  if (!is_floating_or_complex(x.dtype()))
    throw Error("nanmean", std::string("expected a floating or complex tensor, got ") + dtype_name(x.dtype()));
  return detail::composite("nanmean", {x}, [&] {
    const Tensor nan = x.detach().isnan();  // one mask for the sum and the count
    const Tensor count = nan.logical_not().sum(dims, keepdim).to(to_real(x.dtype()));
    return where(nan, Scalar(0), x).sum(dims, keepdim) / count;
  });
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  const Shape dims = dim ? Shape{*dim} : Shape{};
  return {amin(x, dims, keepdim), amax(x, dims, keepdim)};
}

Tensor cov(const Tensor& x, double correction, const Tensor& fweights, const Tensor& aweights) {
  const char* op = "cov";
  if (x.dim() > 2) throw Error(op, "expected a 1-d or 2-d tensor (variables x observations), got shape " + detail::shape_str(x.shape()));
  const Tensor X0 = x.dim() < 2 ? x.reshape({1, -1}) : x;
  const Tensor X = is_floating_or_complex(X0.dtype()) ? X0 : X0.to(default_dtype());
  const std::int64_t n = X.size(1);
  const auto check_weights = [&](Tensor& w, const char* name, bool integral) {
    if (!w.defined()) return;
    detail::check_same_device(x, w, op);
    if (w.dim() != 1 || w.numel() != n)
      throw Error(op, std::string(name) + " must be 1-d with one entry per observation (" + std::to_string(n) + "), got shape " +
                          detail::shape_str(w.shape()));
    if (integral ? w.dtype() != Dtype::Int64 : !is_floating(w.dtype()))
      throw Error(op, std::string(name) + (integral ? " must be int64" : " must be float32 or float64") + ", got " + dtype_name(w.dtype()));
    // the values are checked in a step whose output is w itself, read by the ops below, so a replay checks them
    // too (Note [value steps])
    w = detail::apply_nondiff(op, {w}, [op, name](detail::TensorList in) {
      const Tensor& v = in[0];
      detail::check_device_value(
          op, (v < 0).any(), [&] { return std::pair<Tensor, Tensor>{v.min().to(Dtype::Float64), Tensor()}; },
          [name](double m, double) { return std::string(name) + " must be non-negative, got " + std::to_string(m); });
      return v;
    });
  };
  Tensor fw = fweights, aw_in = aweights;
  check_weights(fw, "fweights", true);
  check_weights(aw_in, "aweights", false);
  std::vector<Tensor> ins{x};
  if (aw_in.defined()) ins.push_back(aw_in);
  Tensor c = detail::composite(op, ins, [&] {
    const Dtype rd = to_real(X.dtype());
    if (!fw.defined() && !aw_in.defined()) {
      const Tensor xc = X - X.mean({1}, true);
      const double fact = std::max(0.0, static_cast<double>(n) - correction);
      return matmul(xc, xc.conj().t()) / fact;
    }
    const Tensor aw = aw_in.defined() ? aw_in.to(rd) : Tensor();
    Tensor w = fw.defined() ? fw.to(rd) : Tensor();
    if (aw.defined()) w = w.defined() ? w * aw : aw;
    const Tensor wsum = w.sum();
    const Tensor xc = X - (X * w).sum({1}, true) / wsum;
    const Tensor fact = aw.defined() ? wsum - correction * (w * aw).sum() / wsum : wsum - correction;
    return matmul(xc * w, xc.conj().t()) / clamp_min(fact, 0.0);
  });
  return x.dim() < 2 ? c.reshape({}) : c;
}

Tensor corrcoef(const Tensor& x) {
  return detail::composite("corrcoef", {x}, [&] {
    const Tensor c = cov(x);
    if (c.dim() == 0) return c / c;
    const Tensor sd = real(diagonal(c)).sqrt();
    const Tensor r = c / sd.unsqueeze(1) / sd.unsqueeze(0);
    // rounding can carry |r| past 1: clipped, both parts for complex (as numpy and torch)
    if (!r.is_complex()) return clamp(r, -1.0, 1.0);
    return complex(clamp(real(r), -1.0, 1.0), clamp(imag(r), -1.0, 1.0));
  });
}

}  // namespace phasor
