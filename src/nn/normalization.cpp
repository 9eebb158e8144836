// src/nn/normalization.cpp - layer, group, instance and batch normalization.
//
// Note [one normalization primitive]
// Every norm reshapes its input to a contiguous (A, B, K) block whose statistics are taken per
// middle index b over all a and k (layer/group/instance norm: A = 1, rows of K; batch norm: A = N,
// B = C, K = spatial), and whose affine weight and bias (length Gb * Cg) apply to element (a, b, k)
// at channel c = (b % Gb) * Cg + k / S (Layout):
//   layer norm    (1, R, K)          Gb = 1, Cg = K, S = 1   (c = k)
//   group norm    (1, N G, Cg S)     Gb = G               (c = g Cg + k / S)
//   instance norm (1, N C, S)        Gb = C, Cg = 1       (c = b % C)
//   batch norm    (N, C, S)          Gb = C, Cg = 1       (c = b)
// The primitive "normalize" computes out = (x - mean) rsqrt(var + eps) w[c] + bias[c] in one kernel
// (x read twice, out written once; double accumulators, two-pass variance) and hands the batch
// statistics to its caller (running statistics) outside the graph.
// Backward, with r = rsqrt(var + eps), xh = (x - mean) r, gh = g w[c], M = A K:
//   gx = r (gh - mean(gh) - xh mean(gh xh)),  gw[c] = sum g xh,  gb[c] = sum g   (sums over c's elements)
// A first-order backward (no graph being built) runs this as one fused two-pass kernel; when a
// graph is built (create_graph, double backward) the same formula is evaluated with public ops on
// a 5-D view (A, B / Gb, Gb, Cg, S) of x, recomputing the statistics differentiably.
#include "phasor/nn/normalization.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <utility>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/device.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {
namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])
using detail::shape_str;

// ---- the primitive (Note [one normalization primitive]) ----------------------------------------

/// Where the affine channel of element (a, b, k) is: c = (b % Gb) * Cg + k / S.
struct Layout {
  std::int64_t Gb = 1, Cg = 1, S = 1;
};

/// Batch statistics of a normalize call, per b: mean and biased variance (shape (B,)).
struct NormStats {
  Tensor mean, var;
};

/// Sum of n contiguous values in double, 8 independent lanes.
template <class T>
double row_sum(const T* p, std::int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(p[i + k]);
  double s = 0;
  for (; i < n; ++i) s += static_cast<double>(p[i]);
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// Sum of (p[i] - mu)^2 over n contiguous values in double, 8 lanes.
template <class T>
double row_sq_dev(const T* p, std::int64_t n, double mu) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const double d = static_cast<double>(p[i + k]) - mu;
      acc[k] += d * d;
    }
  double s = 0;
  for (; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - mu;
    s += d * d;
  }
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// Threads for a kernel over B independent rows of `work` elements in all.
int row_threads(std::int64_t work, std::int64_t B) {
  return work >= 2 * detail::kParallelGrain && B > 1 ? std::min<int>(get_num_threads(), static_cast<int>(B)) : 1;
}

/// out = (x - mean) rstd w[c] + b[c] over S contiguous elements with one channel (w, b scalars).
template <class T>
void affine_run(const T* x, T* y, std::int64_t n, T mu, T scale, T shift) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] - mu) * scale + shift;
}

/// Forward kernel: x (A, B, K) -> out; fills mean, var (B,) and rstd (B,).
Tensor normalize_kernel(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in, Layout L, double eps,
                        NormStats& stats, Tensor& rstd) {
  Tensor x = x_in.contiguous();
  const std::int64_t A = x.size(0), B = x.size(1), K = x.size(2), M = A * K;
  Tensor y = detail::make_tensor(x.shape(), x.dtype(), x.device());
  stats.mean = detail::make_tensor({B}, x.dtype(), x.device());
  stats.var = detail::make_tensor({B}, x.dtype(), x.device());
  rstd = detail::make_tensor({B}, x.dtype(), x.device());
  Tensor w = w_in.defined() ? w_in.to(x.dtype()).contiguous() : Tensor();
  Tensor bb = b_in.defined() ? b_in.to(x.dtype()).contiguous() : Tensor();
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* xp = static_cast<const T*>(x.data_ptr());
      const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
      const T* bp = bb.defined() ? static_cast<const T*>(bb.data_ptr()) : nullptr;
      T* yp = static_cast<T*>(y.data_ptr());
      T* mp = static_cast<T*>(stats.mean.data_ptr());
      T* vp = static_cast<T*>(stats.var.data_ptr());
      T* rp = static_cast<T*>(rstd.data_ptr());
      const int threads = row_threads(A * B * K, B);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t b = 0; b < B; ++b) {
        double s = 0;
        for (std::int64_t a = 0; a < A; ++a) s += row_sum(xp + (a * B + b) * K, K);
        const double mu = s / static_cast<double>(M);
        double q = 0;
        for (std::int64_t a = 0; a < A; ++a) q += row_sq_dev(xp + (a * B + b) * K, K, mu);
        const double v = q / static_cast<double>(M);
        const T mu_t = static_cast<T>(mu), r_t = static_cast<T>(1.0 / std::sqrt(v + eps));
        const std::int64_t c0 = (b % L.Gb) * L.Cg;
        for (std::int64_t a = 0; a < A; ++a) {
          const T* xr = xp + (a * B + b) * K;
          T* yr = yp + (a * B + b) * K;
          if (!wp && !bp) {
            affine_run(xr, yr, K, mu_t, r_t, T(0));
          } else if (L.S == 1) {  // one channel per element (layer norm)
            const T* wc = wp ? wp + c0 : nullptr;
            const T* bc = bp ? bp + c0 : nullptr;
            if (wc && bc)
              for (std::int64_t k = 0; k < K; ++k) yr[k] = (xr[k] - mu_t) * r_t * wc[k] + bc[k];
            else if (wc)
              for (std::int64_t k = 0; k < K; ++k) yr[k] = (xr[k] - mu_t) * r_t * wc[k];
            else
              for (std::int64_t k = 0; k < K; ++k) yr[k] = (xr[k] - mu_t) * r_t + bc[k];
          } else {
            for (std::int64_t j = 0; j < L.Cg; ++j) {
              const T sc = wp ? r_t * wp[c0 + j] : r_t, sh = bp ? bp[c0 + j] : T(0);
              affine_run(xr + j * L.S, yr + j * L.S, L.S, mu_t, sc, sh);
            }
          }
        }
        mp[b] = mu_t;
        vp[b] = static_cast<T>(v);
        rp[b] = r_t;
      }
    }
  });
  return y;
}

/// First-order backward kernel (Note [one normalization primitive]): gx (when need_x) and the
/// weight / bias gradients (when need_w / need_b) from x, go, w and the saved mean and rstd.
G normalize_backward_kernel(const Tensor& x_in, const Tensor& go_in, const Tensor& w_in, const Tensor& mean,
                            const Tensor& rstd, Layout L, bool need_x, bool need_w, bool need_b) {
  Tensor x = x_in.contiguous();
  const Dtype dt = x.dtype();
  Tensor go = go_in.to(dt).contiguous();
  Tensor w = w_in.defined() ? w_in.to(dt).contiguous() : Tensor();
  const std::int64_t A = x.size(0), B = x.size(1), K = x.size(2), M = A * K, WL = L.Gb * L.Cg;
  Tensor gx = need_x ? detail::make_tensor(x.shape(), dt, x.device()) : Tensor();
  Tensor gw = need_w ? zeros({WL}, dt, x.device()) : Tensor();
  Tensor gb = need_b ? zeros({WL}, dt, x.device()) : Tensor();
  detail::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* xp = static_cast<const T*>(x.data_ptr());
      const T* gp = static_cast<const T*>(go.data_ptr());
      const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
      const T* mp = static_cast<const T*>(mean.data_ptr());
      const T* rp = static_cast<const T*>(rstd.data_ptr());
      T* gxp = need_x ? static_cast<T*>(gx.data_ptr()) : nullptr;
      const int threads = row_threads(A * B * K, B);
      const bool acc_wb = need_w || need_b;
      // per-thread accumulators of sum g xh (weight) and sum g (bias), combined afterwards
      std::vector<double> acc(static_cast<std::size_t>(threads) * 2 * static_cast<std::size_t>(WL), 0.0);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t b = 0; b < B; ++b) {
        const int tid = threads > 1 ? omp_get_thread_num() : 0;
        double* aw = acc.data() + static_cast<std::size_t>(tid) * 2 * static_cast<std::size_t>(WL);
        double* ab = aw + WL;
        const T mu = mp[b], r = rp[b];
        const std::int64_t c0 = (b % L.Gb) * L.Cg;
        // pass 1: s1 = sum gh, s2 = sum gh xh, and the weight / bias sums per channel
        double l1[8] = {0, 0, 0, 0, 0, 0, 0, 0}, l2[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (std::int64_t a = 0; a < A; ++a) {
          const T* xr = xp + (a * B + b) * K;
          const T* gr = gp + (a * B + b) * K;
          if (L.S == 1) {  // one channel per element (layer norm): 8 lanes
            double* awc = aw + c0;
            double* abc = ab + c0;
            const T* wc = wp ? wp + c0 : nullptr;
            std::int64_t k = 0;
            for (; k + 8 <= K; k += 8)
              for (int l = 0; l < 8; ++l) {
                const double xh = static_cast<double>((xr[k + l] - mu) * r), g = static_cast<double>(gr[k + l]);
                const double wk = wc ? static_cast<double>(wc[k + l]) : 1.0;
                l1[l] += wk * g;
                l2[l] += wk * g * xh;
                awc[k + l] += g * xh;
                abc[k + l] += g;
              }
            for (; k < K; ++k) {
              const double xh = static_cast<double>((xr[k] - mu) * r), g = static_cast<double>(gr[k]);
              const double wk = wc ? static_cast<double>(wc[k]) : 1.0;
              l1[0] += wk * g;
              l2[0] += wk * g * xh;
              awc[k] += g * xh;
              abc[k] += g;
            }
          } else {
            for (std::int64_t j = 0; j < L.Cg; ++j) {
              const double wj = wp ? static_cast<double>(wp[c0 + j]) : 1.0;
              double sg[4] = {0, 0, 0, 0}, sgx[4] = {0, 0, 0, 0};
              const T* xs = xr + j * L.S;
              const T* gs = gr + j * L.S;
              std::int64_t i = 0;
              for (; i + 4 <= L.S; i += 4)
                for (int l = 0; l < 4; ++l) {
                  const double xh = static_cast<double>((xs[i + l] - mu) * r), g = static_cast<double>(gs[i + l]);
                  sg[l] += g;
                  sgx[l] += g * xh;
                }
              for (; i < L.S; ++i) {
                const double xh = static_cast<double>((xs[i] - mu) * r), g = static_cast<double>(gs[i]);
                sg[0] += g;
                sgx[0] += g * xh;
              }
              const double tg = (sg[0] + sg[1]) + (sg[2] + sg[3]), tgx = (sgx[0] + sgx[1]) + (sgx[2] + sgx[3]);
              l1[0] += wj * tg;
              l2[0] += wj * tgx;
              aw[c0 + j] += tgx;
              ab[c0 + j] += tg;
            }
          }
        }
        double s1 = 0, s2 = 0;
        for (int l = 0; l < 8; ++l) s1 += l1[l], s2 += l2[l];
        if (!need_x) continue;
        // pass 2: gx = r w g - r s1 / M - (x - mu) r^2 s2 / M
        const T cst = static_cast<T>(-static_cast<double>(r) * s1 / static_cast<double>(M));
        const T coef = static_cast<T>(-static_cast<double>(r) * static_cast<double>(r) * s2 / static_cast<double>(M));
        for (std::int64_t a = 0; a < A; ++a) {
          const T* xr = xp + (a * B + b) * K;
          const T* gr = gp + (a * B + b) * K;
          T* out = gxp + (a * B + b) * K;
          if (!wp) {
            for (std::int64_t k = 0; k < K; ++k) out[k] = gr[k] * r + (xr[k] - mu) * coef + cst;
          } else if (L.S == 1) {
            const T* wc = wp + c0;
            for (std::int64_t k = 0; k < K; ++k) out[k] = gr[k] * (r * wc[k]) + (xr[k] - mu) * coef + cst;
          } else {
            for (std::int64_t j = 0; j < L.Cg; ++j) {
              const T rw = r * wp[c0 + j];
              for (std::int64_t i = j * L.S; i < (j + 1) * L.S; ++i) out[i] = gr[i] * rw + (xr[i] - mu) * coef + cst;
            }
          }
        }
      }
      if (acc_wb) {
        T* gwp = need_w ? static_cast<T*>(gw.data_ptr()) : nullptr;
        T* gbp = need_b ? static_cast<T*>(gb.data_ptr()) : nullptr;
        for (std::int64_t c = 0; c < WL; ++c) {
          double sw = 0, sb = 0;
          for (int t = 0; t < threads; ++t) {
            sw += acc[static_cast<std::size_t>(t) * 2 * static_cast<std::size_t>(WL) + static_cast<std::size_t>(c)];
            sb += acc[static_cast<std::size_t>(t) * 2 * static_cast<std::size_t>(WL) + static_cast<std::size_t>(WL + c)];
          }
          if (gwp) gwp[c] = static_cast<T>(sw);
          if (gbp) gbp[c] = static_cast<T>(sb);
        }
      }
    }
  });
  return {gx, gw, gb};
}

/// The same backward in public ops (differentiable: used when a graph is being built).
G normalize_backward_graph(const Tensor& x3, const Tensor& w, const Tensor& go3, Layout L, double eps) {
  const std::int64_t A = x3.size(0), B = x3.size(1), WL = L.Gb * L.Cg;
  const Shape s5{A, B / L.Gb, L.Gb, L.Cg, L.S};
  const Shape red{0, 3, 4}, chan{0, 1, 4};
  Tensor x = x3.reshape(s5);
  Tensor xc = x - x.mean(red, true);
  Tensor r = (xc.square().mean(red, true) + eps).rsqrt();
  Tensor xh = xc * r;
  Tensor go = go3.reshape(s5);
  Tensor gh = w.defined() ? go * w.to(x3.dtype()).reshape({1, 1, L.Gb, L.Cg, 1}) : go;  // as the forward
  Tensor gx = r * (gh - gh.mean(red, true) - xh * (gh * xh).mean(red, true));
  return {gx.reshape(x3.shape()), (go * xh).sum(chan).reshape({WL}), go.sum(chan).reshape({WL})};
}

/// normalize_kernel for CUDA tensors, composed of device ops on the 5-D view of
/// normalize_backward_graph (two-pass variance, accumulation in the input's dtype); rstd gets (B,).
Tensor normalize_device(const Tensor& x3, const Tensor& w, const Tensor& b, Layout L, double eps, NormStats& st,
                        Tensor& rstd) {
  const std::int64_t A = x3.size(0), B = x3.size(1);
  const Shape s5{A, B / L.Gb, L.Gb, L.Cg, L.S};
  const Shape red{0, 3, 4};
  const Tensor x = x3.reshape(s5);
  const Tensor mean = x.mean(red, true);
  const Tensor xc = x - mean;
  const Tensor var = xc.square().mean(red, true);
  const Tensor r = (var + eps).rsqrt();
  Tensor out = xc * r;
  // weight and bias in x's dtype, as normalize_kernel casts them (no promotion of the output)
  if (w.defined()) out = out * w.to(x3.dtype()).reshape({1, 1, L.Gb, L.Cg, 1});
  if (b.defined()) out = out + b.to(x3.dtype()).reshape({1, 1, L.Gb, L.Cg, 1});
  st.mean = mean.reshape({B});
  st.var = var.reshape({B});
  rstd = r.reshape({B});
  return out.reshape(x3.shape());
}

/// The primitive: x (A, B, K) real floating, optional weight / bias (Gb * Cg,) -> out; the batch
/// statistics go to `stats` when given. CUDA tensors take normalize_device forward and the graph
/// backward (public device ops) at every order.
Tensor normalize(const Tensor& x, const Tensor& w, const Tensor& b, Layout L, double eps, NormStats* stats = nullptr) {
  G inputs{x};
  if (w.defined()) inputs.push_back(w);
  if (b.defined()) inputs.push_back(b);
  const bool has_w = w.defined(), has_b = b.defined();
  // The statistics are outputs (out, mean, rstd, var), so the backward reads the ones its own forward made even
  // when a static graph replays the forward (Note [replayable forwards]).
  G outs = detail::apply_op_n(
      "normalize", inputs, detail::kSaveInputs | detail::kSaveOutputs,
      [L, eps, has_w, has_b](In in) {
        NormStats st;
        Tensor rstd;
        const Tensor wi = has_w ? in[1] : Tensor(), bi = has_b ? in[has_w ? 2 : 1] : Tensor();
        Tensor out = in[0].device().is_cuda() ? normalize_device(in[0], wi, bi, L, eps, st, rstd)
                                              : normalize_kernel(in[0], wi, bi, L, eps, st, rstd);
        return G{out, st.mean, rstd, st.var};
      },
      [L, eps, has_w, has_b](const detail::Ctx& c, const G& g) {
        Tensor x = c.input(0);
        Tensor w = has_w ? c.input(1) : Tensor();
        const std::size_t ib = has_w ? 2 : 1;
        G r;
        if (GradMode::is_enabled() || x.device().is_cuda()) {
          r = normalize_backward_graph(x, w, g[0], L, eps);
        } else {
          r = normalize_backward_kernel(x, g[0], w, c.output(1), c.output(2), L, c.needs_grad(0),
                                        has_w && c.needs_grad(1), has_b && c.needs_grad(ib));
        }
        G out{r[0]};
        if (has_w) out.push_back(r[1]);
        if (has_b) out.push_back(r[2]);
        return out;
      });
  if (stats) {
    stats->mean = outs[1];
    stats->var = outs[3];
  }
  return outs[0];
}

/// The defined tensors of `ts` (what observers of a composite see).
G defined_of(std::initializer_list<Tensor> ts) {
  G out;
  for (const auto& t : ts)
    if (t.defined()) out.push_back(t);
  return out;
}

// ---- shared checks ----------------------------------------------------------------------------------

void check_input(const Tensor& x, const std::string& op, std::int64_t min_dim) {
  if (!x.defined()) throw Error(op, "input is undefined");
  if (!is_floating(x.dtype()))
    throw Error(op, std::string("expected a real floating input, got ") + dtype_name(x.dtype()));
  if (x.dim() < min_dim)
    throw Error(op, "expected an input with at least " + std::to_string(min_dim) + " dims, got shape " +
                        shape_str(x.shape()));
}

void check_eps(double eps, const std::string& op) {
  if (!(eps >= 0) || std::isinf(eps)) throw Error(op, "eps must be finite and >= 0, got " + std::to_string(eps));
}

/// An affine or statistics tensor must be undefined or real floating, on the input x's device.
void check_float_param(const Tensor& t, const char* what, const Tensor& x, const std::string& op) {
  if (!t.defined()) return;
  if (!is_floating(t.dtype()))
    throw Error(op, std::string(what) + " must be real floating, got " + dtype_name(t.dtype()));
  if (t.device() != x.device())
    throw Error(op, std::string(what) + " is on " + t.device().str() + " but the input is on " + x.device().str());
}

/// A per-channel tensor (weight, bias, running stat) must be undefined or real floating of shape (C), on
/// the input x's device.
void check_channel_tensor(const Tensor& t, const char* what, std::int64_t C, const Tensor& x, const std::string& op) {
  if (t.defined() && (t.dim() != 1 || t.size(0) != C))
    throw Error(op, std::string(what) + " must have shape (" + std::to_string(C) + ",) for " + std::to_string(C) +
                        " channels, got " + shape_str(t.shape()));
  check_float_param(t, what, x, op);
}

/// Product of the sizes from dim `from` on.
std::int64_t tail_numel(const Tensor& x, std::int64_t from) {
  std::int64_t n = 1;
  for (std::int64_t d = from; d < x.dim(); ++d) n *= x.size(d);
  return n;
}

/// (C) -> (C, 1, ..., 1) broadcasting along dim 1 of an input of rank `rank`.
Tensor channel_view(const Tensor& t, std::int64_t rank) {
  Shape s(static_cast<std::size_t>(rank - 1), 1);
  s[0] = t.size(0);
  return t.reshape(s);
}

/// running = (1 - m) running + m value in one pass (lerp_), in place without recording.
void update_running(const Tensor& running, const Tensor& value, double m) {
  NoGradGuard ng;
  Tensor r = running;
  r.lerp_(value.detach(), m);
}

/// Normalization with given statistics (eval mode): (x - mean) rsqrt(var + eps) weight + bias.
Tensor apply_stats(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias,
                   double eps) {
  Tensor scale = (var + eps).rsqrt();
  if (weight.defined()) scale = scale * weight;
  Tensor shift = -mean * scale;
  if (bias.defined()) shift = shift + bias;
  return x * channel_view(scale, x.dim()) + channel_view(shift, x.dim());
}

// ---- functional implementations with the caller's name -------------------------------------------------

Tensor layer_norm_impl(const std::string& op, const Tensor& x, const Shape& ns, const Tensor& weight,
                       const Tensor& bias, double eps) {
  check_input(x, op, 1);
  check_eps(eps, op);
  const std::int64_t k = static_cast<std::int64_t>(ns.size());
  bool ok = k >= 1 && k <= x.dim();
  for (std::int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == ns[static_cast<std::size_t>(i)];
  if (!ok)
    throw Error(op, "normalized_shape " + shape_str(ns) + " does not match the trailing dims of input " +
                        shape_str(x.shape()));
  if (weight.defined() && weight.shape() != ns)
    throw Error(op, "weight shape " + shape_str(weight.shape()) + " differs from normalized_shape " + shape_str(ns));
  if (bias.defined() && bias.shape() != ns)
    throw Error(op, "bias shape " + shape_str(bias.shape()) + " differs from normalized_shape " + shape_str(ns));
  check_float_param(weight, "weight", x, op);
  check_float_param(bias, "bias", x, op);
  return detail::composite("layer_norm", defined_of({x, weight, bias}), [&] {
    const std::int64_t M = tail_numel(x, x.dim() - k);
    const std::int64_t R = M == 0 ? 0 : x.numel() / M;
    const Tensor w = weight.defined() ? weight.reshape({M}) : Tensor();
    const Tensor b = bias.defined() ? bias.reshape({M}) : Tensor();
    return normalize(x.reshape({1, R, M}), w, b, Layout{1, M, 1}, eps).reshape(x.shape());
  });
}

Tensor group_norm_impl(const std::string& op, const Tensor& x, std::int64_t groups, const Tensor& weight,
                       const Tensor& bias, double eps) {
  check_input(x, op, 2);
  check_eps(eps, op);
  const std::int64_t N = x.size(0), C = x.size(1);
  if (groups <= 0 || C % groups != 0)
    throw Error(op, "num_groups " + std::to_string(groups) + " must divide the " + std::to_string(C) +
                        " channels of input " + shape_str(x.shape()));
  check_channel_tensor(weight, "weight", C, x, op);
  check_channel_tensor(bias, "bias", C, x, op);
  return detail::composite("group_norm", defined_of({x, weight, bias}), [&] {
    const std::int64_t S = tail_numel(x, 2);
    return normalize(x.reshape({1, N * groups, (C / groups) * S}), weight, bias, Layout{groups, C / groups, S}, eps)
        .reshape(x.shape());
  });
}

// Checks shared by instance_norm and batch_norm: an (N, C, ...) input, eps, and per-channel
// running statistics / affine parameters that are absent or of shape (C).
void check_stats_args(const std::string& op, const Tensor& x, const Tensor& rm, const Tensor& rv,
                      const Tensor& weight, const Tensor& bias, double eps) {
  check_input(x, op, 2);
  check_eps(eps, op);
  const std::int64_t C = x.size(1);
  check_channel_tensor(rm, "running_mean", C, x, op);
  check_channel_tensor(rv, "running_var", C, x, op);
  check_channel_tensor(weight, "weight", C, x, op);
  check_channel_tensor(bias, "bias", C, x, op);
  if (rm.defined() != rv.defined()) throw Error(op, "running_mean and running_var must both be given or both be absent");
}

Tensor instance_norm_impl(const std::string& op, const Tensor& x, const Tensor& rm, const Tensor& rv,
                          const Tensor& weight, const Tensor& bias, bool use_input_stats, double momentum,
                          double eps) {
  check_stats_args(op, x, rm, rv, weight, bias, eps);
  const std::int64_t N = x.size(0), C = x.size(1), S = tail_numel(x, 2);
  if (!use_input_stats) {
    if (!rm.defined()) throw Error(op, "running statistics are needed when use_input_stats is false");
    return detail::composite("instance_norm", defined_of({x, weight, bias}),
                             [&] { return apply_stats(x, rm, rv, weight, bias, eps); });
  }
  if (S <= 1)
    throw Error(op, "expected more than 1 spatial element when training, got input " + shape_str(x.shape()));
  return detail::composite("instance_norm", defined_of({x, weight, bias}), [&] {
    NormStats st;
    Tensor y = normalize(x.reshape({1, N * C, S}), weight, bias, Layout{C, 1, S}, eps, &st);
    if (rm.defined()) {
      NoGradGuard ng;
      update_running(rm, st.mean.reshape({N, C}).mean({0}), momentum);
      update_running(rv, st.var.reshape({N, C}).mean({0}) * (static_cast<double>(S) / static_cast<double>(S - 1)),
                     momentum);
    }
    return y.reshape(x.shape());
  });
}

Tensor batch_norm_impl(const std::string& op, const Tensor& x, const Tensor& rm, const Tensor& rv,
                       const Tensor& weight, const Tensor& bias, bool training, double momentum, double eps) {
  check_stats_args(op, x, rm, rv, weight, bias, eps);
  const std::int64_t N = x.size(0), C = x.size(1), S = tail_numel(x, 2);
  if (!training) {
    if (!rm.defined()) throw Error(op, "running_mean and running_var are needed in evaluation mode");
    return detail::composite("batch_norm", defined_of({x, weight, bias}), [&] { return apply_stats(x, rm, rv, weight, bias, eps); });
  }
  if (N * S <= 1)
    throw Error(op, "expected more than 1 value per channel when training, got input " + shape_str(x.shape()));
  return detail::composite("batch_norm", defined_of({x, weight, bias}), [&] {
    NormStats st;
    Tensor y = normalize(x.reshape({N, C, S}), weight, bias, Layout{C, 1, S}, eps, &st);
    if (rm.defined()) {
      const double M = static_cast<double>(N * S);
      update_running(rm, st.mean, momentum);
      update_running(rv, st.var * (M / (M - 1)), momentum);
    }
    return y.reshape(x.shape());
  });
}

}  // namespace

// ---- functional -----------------------------------------------------------------------------------------
namespace functional {

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return layer_norm_impl("layer_norm", input, normalized_shape, weight, bias, eps);
}

Tensor group_norm(const Tensor& input, std::int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  return group_norm_impl("group_norm", input, num_groups, weight, bias, eps);
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  return instance_norm_impl("instance_norm", input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                            eps);
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  return batch_norm_impl("batch_norm", input, running_mean, running_var, weight, bias, training, momentum, eps);
}

}  // namespace functional

// ---- modules -----------------------------------------------------------------------------------------------
namespace {

std::string fmt_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

LayerNorm::LayerNorm(Shape ns, double eps_, bool elementwise_affine, bool use_bias)
    : Module("LayerNorm"), normalized_shape(std::move(ns)), eps(eps_) {
  if (normalized_shape.empty()) throw Error("LayerNorm", "normalized_shape must not be empty");
  for (auto s : normalized_shape)
    if (s <= 0) throw Error("LayerNorm", "normalized_shape " + shape_str(normalized_shape) + " must be positive");
  check_eps(eps, "LayerNorm");
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", use_bias ? zeros(normalized_shape) : Tensor());
  } else {
    weight = register_parameter("weight", Tensor());
    bias = register_parameter("bias", Tensor());
  }
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm_impl("LayerNorm", input, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  return shape_str(normalized_shape) + ", eps=" + fmt_double(eps) +
         ", elementwise_affine=" + (weight.defined() ? "true" : "false");
}

GroupNorm::GroupNorm(std::int64_t groups, std::int64_t channels, double eps_, bool affine)
    : Module("GroupNorm"), num_groups(groups), num_channels(channels), eps(eps_) {
  if (groups <= 0 || channels <= 0 || channels % groups != 0)
    throw Error("GroupNorm", "num_groups " + std::to_string(groups) + " must be positive and divide num_channels " +
                                 std::to_string(channels));
  check_eps(eps, "GroupNorm");
  weight = register_parameter("weight", affine ? ones({channels}) : Tensor());
  bias = register_parameter("bias", affine ? zeros({channels}) : Tensor());
}

Tensor GroupNorm::forward(const Tensor& input) {
  if (input.defined() && input.dim() >= 2 && input.size(1) != num_channels)
    throw Error("GroupNorm", "expected " + std::to_string(num_channels) + " channels, got input " +
                                 shape_str(input.shape()));
  return group_norm_impl("GroupNorm", input, num_groups, weight, bias, eps);
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(num_groups) + ", " + std::to_string(num_channels) + ", eps=" + fmt_double(eps) +
         ", affine=" + (weight.defined() ? "true" : "false");
}

NormBase::NormBase(const std::string& name, std::int64_t features, double eps_, std::optional<double> momentum_,
                   bool affine_, bool track)
    : Module(name), num_features(features), eps(eps_), momentum(momentum_), affine(affine_),
      track_running_stats(track) {
  if (features <= 0) throw Error(name, "num_features must be positive, got " + std::to_string(features));
  check_eps(eps, name);
  if (momentum && !(*momentum >= 0 && *momentum <= 1))
    throw Error(name, "momentum must be in [0, 1], got " + std::to_string(*momentum));
  weight = register_parameter("weight", affine ? ones({features}) : Tensor());
  bias = register_parameter("bias", affine ? zeros({features}) : Tensor());
  running_mean = register_buffer("running_mean", track ? zeros({features}) : Tensor());
  running_var = register_buffer("running_var", track ? ones({features}) : Tensor());
  num_batches_tracked = register_buffer("num_batches_tracked", track ? zeros({}, int64) : Tensor());
}

void NormBase::reset_running_stats() {
  if (!track_running_stats) return;
  NoGradGuard ng;
  running_mean.zero_();
  running_var.fill_(Scalar(1.0));
  num_batches_tracked.zero_();
}

std::string NormBase::extra_repr() const {
  return std::to_string(num_features) + ", eps=" + fmt_double(eps) +
         ", momentum=" + (momentum ? fmt_double(*momentum) : std::string("None")) +
         ", affine=" + (affine ? "true" : "false") + ", track_running_stats=" + (track_running_stats ? "true" : "false");
}

void NormBase::check_input(const Tensor& input, std::int64_t min_rank, std::int64_t max_rank,
                           std::int64_t channel_dim) const {
  if (!input.defined()) throw Error(name(), "input is undefined");
  if (input.dim() < min_rank || input.dim() > max_rank) {
    std::string want = std::to_string(min_rank) + "D";
    for (std::int64_t r = min_rank + 1; r <= max_rank; ++r) want += (r == max_rank ? " or " : ", ") + std::to_string(r) + "D";
    throw Error(name(), "expected " + want + " input, got input " + shape_str(input.shape()));
  }
  if (input.size(channel_dim) != num_features)
    throw Error(name(), "expected " + std::to_string(num_features) + " channels, got input " + shape_str(input.shape()));
}

double NormBase::update_factor() {
  NoGradGuard ng;
  num_batches_tracked.add_(Scalar(1));
  if (momentum) return *momentum;
  return 1.0 / static_cast<double>(num_batches_tracked.item<std::int64_t>());
}

BatchNorm::BatchNorm(const std::string& name, std::int64_t min_rank, std::int64_t max_rank, std::int64_t features,
                     double eps_, std::optional<double> momentum_, bool affine_, bool track)
    : NormBase(name, features, eps_, momentum_, affine_, track), min_rank_(min_rank), max_rank_(max_rank) {}

Tensor BatchNorm::forward(const Tensor& input) {
  check_input(input, min_rank_, max_rank_, 1);
  if (is_training() && input.numel() / num_features <= 1)  // checked before the batch is counted
    throw Error(name(), "expected more than 1 value per channel when training, got input " + shape_str(input.shape()));
  double factor = 0.0;
  if (is_training() && track_running_stats) factor = update_factor();
  // Without tracking the buffers are undefined: batch statistics in train and eval alike.
  const bool use_batch_stats = is_training() || !track_running_stats;
  return batch_norm_impl(name(), input, running_mean, running_var, weight, bias, use_batch_stats, factor, eps);
}

BatchNorm1d::BatchNorm1d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : BatchNorm("BatchNorm1d", 2, 3, f, e, m, a, t) {}
BatchNorm2d::BatchNorm2d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : BatchNorm("BatchNorm2d", 4, 4, f, e, m, a, t) {}
BatchNorm3d::BatchNorm3d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : BatchNorm("BatchNorm3d", 5, 5, f, e, m, a, t) {}

InstanceNorm::InstanceNorm(const std::string& name, std::int64_t spatial, std::int64_t features, double eps_,
                           std::optional<double> momentum_, bool affine_, bool track)
    : NormBase(name, features, eps_, momentum_, affine_, track), spatial_(spatial) {}

Tensor InstanceNorm::forward(const Tensor& input) {
  // (C, *) unbatched or (N, C, *) batched; channels sit just before the spatial dims.
  check_input(input, spatial_ + 1, spatial_ + 2, input.defined() ? std::max<std::int64_t>(input.dim() - spatial_ - 1, 0) : 0);
  const bool unbatched = input.dim() == spatial_ + 1;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  const bool use_input_stats = is_training() || !track_running_stats;
  if (use_input_stats && tail_numel(x, 2) <= 1)  // checked before the batch is counted
    throw Error(name(), "expected more than 1 spatial element when training, got input " + shape_str(input.shape()));
  double factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats && !momentum) factor = update_factor();  // cumulative average
  Tensor y = instance_norm_impl(name(), x, running_mean, running_var, weight, bias, use_input_stats, factor, eps);
  return unbatched ? y.squeeze(0) : y;
}

InstanceNorm1d::InstanceNorm1d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : InstanceNorm("InstanceNorm1d", 1, f, e, m, a, t) {}
InstanceNorm2d::InstanceNorm2d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : InstanceNorm("InstanceNorm2d", 2, f, e, m, a, t) {}
InstanceNorm3d::InstanceNorm3d(std::int64_t f, double e, std::optional<double> m, bool a, bool t)
    : InstanceNorm("InstanceNorm3d", 3, f, e, m, a, t) {}

}  // namespace phasor::nn
