// tests/test_attention.cpp - scaled_dot_product_attention, MultiheadAttention and the transformer layers against
// references written here as naive loops in double (scores, softmax, weighted sums, per-head projections, layer
// norms and feed-forward blocks from the modules' own parameters): masks (bool, float, causal, key padding),
// scale, grouped-query attention, batch broadcasting, unbatched and batch_first layouts, need_weights and
// average_attn_weights, kdim/vdim, add_bias_kv/add_zero_attn, pre/post norm, dropout statistics, torch's
// parameter names, gradcheck in float64 and every promised error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::check_close;
using phasor::test::vals;
using doctest::Contains;
namespace F = phasor::nn::functional;
using G = std::vector<Tensor>;
using D = std::vector<double>;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

std::int64_t prod(const Shape& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

/// Values of t broadcast to `shape`, row-major.
D bvals(const Tensor& t, const Shape& shape) { return vals(t.detach().to(float64).broadcast_to(shape).contiguous()); }
/// Values of a parameter (detached: reading it records nothing).
D pv(const Tensor& t) { return vals(t.detach()); }

struct Ref {
  D out;  ///< (B, L, Ev)
  D w;    ///< (B, L, S)
};

/// Naive attention: q (B, L, E), k (B, S, E), v (B, S, Ev); bias (B, L, S) added (may hold -inf), or empty.
Ref ref_attention(const D& q, const D& k, const D& v, const D& bias, std::int64_t B, std::int64_t L, std::int64_t S,
                  std::int64_t E, std::int64_t Ev, double scale) {
  Ref r{D(B * L * Ev, 0.0), D(B * L * S, 0.0)};
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < L; ++i) {
      D s(S);
      double m = -kInf;
      for (std::int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (std::int64_t e = 0; e < E; ++e) acc += q[(b * L + i) * E + e] * k[(b * S + j) * E + e];
        s[j] = acc * scale + (bias.empty() ? 0.0 : bias[(b * L + i) * S + j]);
        m = std::max(m, s[j]);
      }
      double z = 0;
      for (std::int64_t j = 0; j < S; ++j) z += (s[j] = std::exp(s[j] - m));
      for (std::int64_t j = 0; j < S; ++j) {
        const double w = s[j] / z;
        r.w[(b * L + i) * S + j] = w;
        for (std::int64_t e = 0; e < Ev; ++e) r.out[(b * L + i) * Ev + e] += w * v[(b * S + j) * Ev + e];
      }
    }
  return r;
}

/// A bool "takes part" mask broadcast to `shape` as an additive bias (0 / -inf).
D keep_bias(const Tensor& keep, const Shape& shape) {
  D b = bvals(keep, shape);
  for (auto& x : b) x = x != 0.0 ? 0.0 : -kInf;
  return b;
}

/// Checks t against ref where ref is finite, and NaN where ref is NaN.
void check_with_nan(const Tensor& t, const D& ref, double tol) {
  const D v = vals(t);
  REQUIRE(v.size() == ref.size());
  int bad = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(ref[i]) ? !std::isnan(v[i]) : !(std::abs(v[i] - ref[i]) <= tol * std::max(1.0, std::abs(ref[i]))))
      ++bad;
  }
  CHECK(bad == 0);
}

// ---- MultiheadAttention reference ----

/// Parameters of a MultiheadAttention as double vectors (absent biases as zeros).
struct MhaParams {
  std::int64_t E, H, kd, vd;
  D wq, wk, wv, bq, bk, bv, bias_k, bias_v, wo, bo;
  bool zero_attn;
};

MhaParams params_of(const nn::MultiheadAttention& m) {
  MhaParams p;
  p.E = m.options.embed_dim();
  p.H = m.options.num_heads();
  p.kd = m.options.kdim();
  p.vd = m.options.vdim();
  const std::int64_t E = p.E;
  if (m.in_proj_weight.defined()) {
    const D w = pv(m.in_proj_weight);
    p.wq.assign(w.begin(), w.begin() + E * E);
    p.wk.assign(w.begin() + E * E, w.begin() + 2 * E * E);
    p.wv.assign(w.begin() + 2 * E * E, w.end());
  } else {
    p.wq = pv(m.q_proj_weight);
    p.wk = pv(m.k_proj_weight);
    p.wv = pv(m.v_proj_weight);
  }
  if (m.in_proj_bias.defined()) {
    const D b = pv(m.in_proj_bias);
    p.bq.assign(b.begin(), b.begin() + E);
    p.bk.assign(b.begin() + E, b.begin() + 2 * E);
    p.bv.assign(b.begin() + 2 * E, b.end());
  } else {
    p.bq = p.bk = p.bv = D(E, 0.0);
  }
  if (m.bias_k.defined()) {
    p.bias_k = pv(m.bias_k);
    p.bias_v = pv(m.bias_v);
  }
  p.wo = pv(m.out_proj->weight);
  p.bo = m.out_proj->bias.defined() ? pv(m.out_proj->bias) : D(E, 0.0);
  p.zero_attn = m.options.add_zero_attn();
  return p;
}

/// y[r][o] = sum_c W[o][c] x[r][c] + b[o] for rows r.
D ref_linear(const D& x, std::int64_t rows, std::int64_t in, const D& W, const D& b, std::int64_t out) {
  D y(rows * out);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[o];
      for (std::int64_t c = 0; c < in; ++c) acc += W[o * in + c] * x[r * in + c];
      y[r * out + o] = acc;
    }
  return y;
}

struct MhaRef {
  D out;  ///< (L, N, E)
  D w;    ///< (N, H, L, S2)
  std::int64_t S2;
};

/// Naive multi-head attention, seq-first: q (L, N, E), k (S, N, kd), v (S, N, vd); kpm (N, S) additive or empty;
/// am additive (L, S), or (N * H, L, S) when am3, or empty.
MhaRef ref_mha(const MhaParams& p, const D& q, const D& k, const D& v, std::int64_t L, std::int64_t N, std::int64_t S,
               const D& kpm, const D& am, bool am3) {
  const std::int64_t E = p.E, H = p.H, hd = E / H;
  const std::int64_t S1 = S + (p.bias_k.empty() ? 0 : 1), S2 = S1 + (p.zero_attn ? 1 : 0);
  MhaRef r{D(L * N * E, 0.0), D(N * H * L * S2, 0.0), S2};
  const D Q = ref_linear(q, L * N, E, p.wq, p.bq, E);     // (L, N, E)
  const D K0 = ref_linear(k, S * N, p.kd, p.wk, p.bk, E);  // (S, N, E)
  const D V0 = ref_linear(v, S * N, p.vd, p.wv, p.bv, E);
  for (std::int64_t n = 0; n < N; ++n) {
    // keys/values of batch n: (S2, E)
    D K(S2 * E, 0.0), V(S2 * E, 0.0);
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t e = 0; e < E; ++e) {
        K[s * E + e] = K0[(s * N + n) * E + e];
        V[s * E + e] = V0[(s * N + n) * E + e];
      }
    if (!p.bias_k.empty())
      for (std::int64_t e = 0; e < E; ++e) {
        K[S * E + e] = p.bias_k[e];
        V[S * E + e] = p.bias_v[e];
      }
    D ctx(L * E, 0.0);
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < L; ++i) {
        D s(S2);
        double m = -kInf;
        for (std::int64_t j = 0; j < S2; ++j) {
          double acc = 0;
          for (std::int64_t d = 0; d < hd; ++d) acc += Q[(i * N + n) * E + h * hd + d] * K[j * E + h * hd + d];
          acc /= std::sqrt(static_cast<double>(hd));
          if (j < S) {
            if (!kpm.empty()) acc += kpm[n * S + j];
            if (!am.empty()) acc += am3 ? am[((n * H + h) * L + i) * S + j] : am[i * S + j];
          }
          s[j] = acc;
          m = std::max(m, acc);
        }
        double z = 0;
        for (std::int64_t j = 0; j < S2; ++j) z += (s[j] = std::exp(s[j] - m));
        for (std::int64_t j = 0; j < S2; ++j) {
          const double w = s[j] / z;
          r.w[((n * H + h) * L + i) * S2 + j] = w;
          for (std::int64_t d = 0; d < hd; ++d) ctx[i * E + h * hd + d] += w * V[j * E + h * hd + d];
        }
      }
    const D o = ref_linear(ctx, L, E, p.wo, p.bo, E);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t e = 0; e < E; ++e) r.out[(i * N + n) * E + e] = o[i * E + e];
  }
  return r;
}

/// Mean over heads of w (N, H, L, S2) -> (N, L, S2).
D head_mean(const D& w, std::int64_t N, std::int64_t H, std::int64_t L, std::int64_t S2) {
  D r(N * L * S2, 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t x = 0; x < L * S2; ++x) r[n * L * S2 + x] += w[(n * H + h) * L * S2 + x] / H;
  return r;
}

/// A bool "ignore" mask as an additive bias (-inf where true).
D ignore_bias(const Tensor& m) {
  D b = vals(m.to(float64));
  for (auto& x : b) x = x != 0.0 ? -kInf : 0.0;
  return b;
}

// ---- transformer layer references ----

D ref_layer_norm(const D& x, std::int64_t rows, std::int64_t E, const nn::LayerNorm& ln) {
  const D w = pv(ln.weight), b = ln.bias.defined() ? pv(ln.bias) : D(E, 0.0);
  D y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = 0, var = 0;
    for (std::int64_t e = 0; e < E; ++e) m += x[r * E + e] / E;
    for (std::int64_t e = 0; e < E; ++e) var += (x[r * E + e] - m) * (x[r * E + e] - m) / E;
    for (std::int64_t e = 0; e < E; ++e) y[r * E + e] = (x[r * E + e] - m) / std::sqrt(var + ln.eps) * w[e] + b[e];
  }
  return y;
}

D add(const D& a, const D& b) {
  D r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = a[i] + b[i];
  return r;
}

/// linear2(act(linear1(x))) from the modules' parameters.
D ref_ff(const D& x, std::int64_t rows, const nn::Linear& l1, const nn::Linear& l2, bool gelu) {
  const std::int64_t E = l1.options.in_features(), Fd = l1.options.out_features();
  D h = ref_linear(x, rows, E, pv(l1.weight), l1.bias.defined() ? pv(l1.bias) : D(), Fd);
  for (auto& v : h) v = gelu ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) : std::max(v, 0.0);
  return ref_linear(h, rows, Fd, pv(l2.weight), l2.bias.defined() ? pv(l2.bias) : D(), E);
}

/// One encoder layer (eval) on seq-first x (L, N, E).
D ref_encoder_layer(const nn::TransformerEncoderLayer& l, const D& x, std::int64_t L, std::int64_t N, const D& kpm,
                    const D& am) {
  const std::int64_t E = l.options.d_model(), rows = L * N;
  const MhaParams p = params_of(*l.self_attn);
  const bool gelu = l.options.activation() == nn::Activation::gelu;
  const auto sa = [&](const D& y) { return ref_mha(p, y, y, y, L, N, L, kpm, am, false).out; };
  if (l.options.norm_first()) {
    D y = add(x, sa(ref_layer_norm(x, rows, E, *l.norm1)));
    return add(y, ref_ff(ref_layer_norm(y, rows, E, *l.norm2), rows, *l.linear1, *l.linear2, gelu));
  }
  D y = ref_layer_norm(add(x, sa(x)), rows, E, *l.norm1);
  return ref_layer_norm(add(y, ref_ff(y, rows, *l.linear1, *l.linear2, gelu)), rows, E, *l.norm2);
}

/// One decoder layer (eval) on seq-first tgt (T, N, E) and memory (S, N, E).
D ref_decoder_layer(const nn::TransformerDecoderLayer& l, const D& x, const D& mem, std::int64_t T, std::int64_t S,
                    std::int64_t N, const D& tgt_am, const D& mem_kpm) {
  const std::int64_t E = l.options.d_model(), rows = T * N;
  const MhaParams ps = params_of(*l.self_attn), pc = params_of(*l.multihead_attn);
  const bool gelu = l.options.activation() == nn::Activation::gelu;
  const auto sa = [&](const D& y) { return ref_mha(ps, y, y, y, T, N, T, {}, tgt_am, false).out; };
  const auto ca = [&](const D& y) { return ref_mha(pc, y, mem, mem, T, N, S, mem_kpm, {}, false).out; };
  if (l.options.norm_first()) {
    D y = add(x, sa(ref_layer_norm(x, rows, E, *l.norm1)));
    y = add(y, ca(ref_layer_norm(y, rows, E, *l.norm2)));
    return add(y, ref_ff(ref_layer_norm(y, rows, E, *l.norm3), rows, *l.linear1, *l.linear2, gelu));
  }
  D y = ref_layer_norm(add(x, sa(x)), rows, E, *l.norm1);
  y = ref_layer_norm(add(y, ca(y)), rows, E, *l.norm2);
  return ref_layer_norm(add(y, ref_ff(y, rows, *l.linear1, *l.linear2, gelu)), rows, E, *l.norm3);
}

std::vector<std::string> param_names(const nn::Module& m) {
  std::vector<std::string> r;
  for (const auto& [name, t] : m.named_parameters()) r.push_back(name);
  return r;
}

}  // namespace

// ---- scaled_dot_product_attention --------------------------------------------------------------------------

TEST_CASE("sdpa: values, default and explicit scale, batch broadcasting, float32") {
  manual_seed(1);
  {
    const Tensor q = randn({2, 3, 4, 5}, float64), k = randn({2, 3, 6, 5}, float64), v = randn({2, 3, 6, 7}, float64);
    const Tensor y = F::scaled_dot_product_attention(q, k, v);
    CHECK(y.shape() == Shape{2, 3, 4, 7});
    check_close(y, ref_attention(vals(q), vals(k), vals(v), {}, 6, 4, 6, 5, 7, 1.0 / std::sqrt(5.0)).out, 1e-12);
    const Tensor ys = F::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, false, 0.3);
    check_close(ys, ref_attention(vals(q), vals(k), vals(v), {}, 6, 4, 6, 5, 7, 0.3).out, 1e-12);
  }
  {  // batch dims broadcast: (2, 1) x (3) x (1) -> (2, 3); 2-D inputs too
    const Tensor q = randn({2, 1, 4, 5}, float64), k = randn({3, 6, 5}, float64), v = randn({1, 6, 7}, float64);
    const Tensor y = F::scaled_dot_product_attention(q, k, v);
    CHECK(y.shape() == Shape{2, 3, 4, 7});
    const D ref = ref_attention(bvals(q, {2, 3, 4, 5}), bvals(k, {2, 3, 6, 5}), bvals(v, {2, 3, 6, 7}), {}, 6, 4, 6, 5, 7,
                                1.0 / std::sqrt(5.0)).out;
    check_close(y, ref, 1e-12);
    const Tensor y2 = F::scaled_dot_product_attention(q.select(0, 0).select(0, 0), k.select(0, 0), v.select(0, 0));
    CHECK(y2.shape() == Shape{4, 7});
    check_close(y2,
                ref_attention(vals(q.select(0, 0).select(0, 0)), vals(k.select(0, 0)), vals(v.select(0, 0)), {}, 1, 4,
                              6, 5, 7, 1.0 / std::sqrt(5.0)).out,
                1e-12);
  }
  {  // float32 against the double reference
    const Tensor q = randn({3, 4, 8}), k = randn({3, 5, 8}), v = randn({3, 5, 2});
    const Tensor y = F::scaled_dot_product_attention(q, k, v);
    CHECK(y.dtype() == float32);
    check_close(y, ref_attention(vals(q), vals(k), vals(v), {}, 3, 4, 5, 8, 2, 1.0 / std::sqrt(8.0)).out, 2e-5);
  }
}

TEST_CASE("sdpa: bool, float and causal masks; fully masked rows give NaN") {
  manual_seed(2);
  const Tensor q = randn({2, 3, 4, 5}, float64), k = randn({2, 3, 6, 5}, float64), v = randn({2, 3, 6, 7}, float64);
  const Shape ws{2, 3, 4, 6};
  const double sc = 1.0 / std::sqrt(5.0);
  {  // bool (L, S), true = takes part; every row keeps a key
    Tensor keep = rand({4, 6}, float64) > 0.4;
    keep = logical_or(keep, arange(0, 6).unsqueeze(0) == arange(0, 4).unsqueeze(1));
    const Tensor y = F::scaled_dot_product_attention(q, k, v, keep);
    check_close(y, ref_attention(vals(q), vals(k), vals(v), keep_bias(keep, ws), 6, 4, 6, 5, 7, sc).out, 1e-12);
  }
  {  // float (2, 1, 4, 6) added to the scores
    const Tensor bias = randn({2, 1, 4, 6}, float64);
    const Tensor y = F::scaled_dot_product_attention(q, k, v, bias);
    check_close(y, ref_attention(vals(q), vals(k), vals(v), bvals(bias, ws), 6, 4, 6, 5, 7, sc).out, 1e-12);
  }
  for (auto [L, S] : {std::pair<std::int64_t, std::int64_t>{4, 6}, {6, 4}, {5, 5}}) {  // causal, top-left aligned
    CAPTURE(L);
    CAPTURE(S);
    const Tensor qc = randn({2, L, 3}, float64), kc = randn({2, S, 3}, float64), vc = randn({2, S, 2}, float64);
    D bias(2 * L * S);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t i = 0; i < L; ++i)
        for (std::int64_t j = 0; j < S; ++j) bias[(b * L + i) * S + j] = j <= i ? 0.0 : -kInf;
    const Tensor y = F::scaled_dot_product_attention(qc, kc, vc, Tensor(), 0.0, true);
    check_close(y, ref_attention(vals(qc), vals(kc), vals(vc), bias, 2, L, S, 3, 2, 1.0 / std::sqrt(3.0)).out, 1e-12);
  }
  {  // a row with every key masked out: NaN there, the other rows fine
    Tensor keep = ones({4, 6}, Dtype::Bool);
    keep = where(arange(0, 4).unsqueeze(1) == 2, zeros({}, Dtype::Bool), keep);
    const Tensor y = F::scaled_dot_product_attention(q, k, v, keep);
    const D ref = ref_attention(vals(q), vals(k), vals(v), keep_bias(keep, ws), 6, 4, 6, 5, 7, sc).out;
    CHECK(std::isnan(ref[2 * 7]));
    check_with_nan(y, ref, 1e-12);
  }
}

TEST_CASE("sdpa: grouped-query attention repeats key/value heads") {
  manual_seed(3);
  const std::int64_t B = 2, Hq = 4, Hk = 2, Hv = 1, L = 3, S = 5, E = 4, Ev = 3;
  const Tensor q = randn({B, Hq, L, E}, float64), k = randn({B, Hk, S, E}, float64), v = randn({B, Hv, S, Ev}, float64);
  const Tensor y = F::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, false, std::nullopt, true);
  CHECK(y.shape() == Shape{B, Hq, L, Ev});
  const D kv = vals(k), vv = vals(v);
  D kk(B * Hq * S * E), vx(B * Hq * S * Ev);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < Hq; ++h) {
      const std::int64_t hk = h / (Hq / Hk), hv = h / (Hq / Hv);
      for (std::int64_t x = 0; x < S * E; ++x) kk[(b * Hq + h) * S * E + x] = kv[(b * Hk + hk) * S * E + x];
      for (std::int64_t x = 0; x < S * Ev; ++x) vx[(b * Hq + h) * S * Ev + x] = vv[(b * Hv + hv) * S * Ev + x];
    }
  check_close(y, ref_attention(vals(q), kk, vx, {}, B * Hq, L, S, E, Ev, 0.5).out, 1e-12);
  // equal head counts: enable_gqa changes nothing
  const Tensor k4 = randn({B, Hq, S, E}, float64), v4 = randn({B, Hq, S, Ev}, float64);
  CHECK(equal(F::scaled_dot_product_attention(q, k4, v4, Tensor(), 0.0, false, std::nullopt, true),
              F::scaled_dot_product_attention(q, k4, v4)));
}

TEST_CASE("sdpa: dropout on the weights (statistics, generator, p = 0)") {
  // q = k = 0: uniform weights 1/S; v = 1: each output is (kept keys) / (S (1 - p)), mean 1
  const std::int64_t R = 400, S = 50;
  const double p = 0.3;
  const Tensor q = zeros({R, 1, 4}, float64), k = zeros({R, S, 4}, float64), v = ones({R, S, 1}, float64);
  Generator g1(7), g2(7);
  const Tensor y = F::scaled_dot_product_attention(q, k, v, Tensor(), p, false, std::nullopt, false, &g1);
  const D yv = vals(y);
  double mean = 0;
  int off_grid = 0;
  for (double x : yv) {
    mean += x / R;
    const double kept = x * S * (1 - p);
    off_grid += std::abs(kept - std::round(kept)) > 1e-9;
  }
  CHECK(off_grid == 0);
  CHECK(std::abs(mean - 1.0) < 0.03);  // std of the mean ~ sqrt(p / (1 - p) / S / R) = 0.0046
  CHECK(equal(y, F::scaled_dot_product_attention(q, k, v, Tensor(), p, false, std::nullopt, false, &g2)));
  const Tensor a = randn({2, 3, 4}, float64), b = randn({2, 5, 4}, float64), c = randn({2, 5, 3}, float64);
  CHECK(equal(F::scaled_dot_product_attention(a, b, c, Tensor(), 0.0), F::scaled_dot_product_attention(a, b, c)));
}

TEST_CASE("sdpa: gradcheck and gradgradcheck in float64 (with masks)") {
  manual_seed(4);
  const Tensor q = test::leaf64({2, 3, 4}), k = test::leaf64({2, 5, 4}), v = test::leaf64({2, 5, 3});
  CHECK(autodiff::gradcheck([](const G& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2]); }, {q, k, v}));
  const Tensor bias = test::leaf64({1, 3, 5});
  CHECK(autodiff::gradcheck(
      [](const G& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2], in[3], 0.0, false, 0.7); },
      {q, k, v, bias}));
  const Tensor keep = logical_or(rand({3, 5}, float64) > 0.5, arange(0, 5).unsqueeze(0) == 0);
  CHECK(autodiff::gradcheck([&](const G& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2], keep); },
                            {q, k, v}));
  CHECK(autodiff::gradcheck(
      [](const G& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, true); }, {q, k, v}));
  const Tensor qg = test::leaf64({1, 4, 2, 3}), kg = test::leaf64({1, 2, 3, 3}), vg = test::leaf64({1, 2, 3, 2});
  CHECK(autodiff::gradcheck(
      [](const G& in) {
        return F::scaled_dot_product_attention(in[0], in[1], in[2], Tensor(), 0.0, false, std::nullopt, true);
      },
      {qg, kg, vg}));
  CHECK(autodiff::gradgradcheck(
      [](const G& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2], in[3]); },
      {test::leaf64({2, 2, 3}), test::leaf64({2, 3, 3}), test::leaf64({2, 3, 2}), test::leaf64({2, 3})}));
}

TEST_CASE("sdpa: errors") {
  const Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 6});
  const auto sdpa = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& m = Tensor(), double p = 0.0,
                       bool causal = false, bool gqa = false) {
    return F::scaled_dot_product_attention(a, b, c, m, p, causal, std::nullopt, gqa);
  };
  CHECK_THROWS_WITH_AS(sdpa(randn({4}), k, v),
                       "[scaled_dot_product_attention] query, key and value must have at least 2 dims (..., L, E), got "
                       "query (4,), key (2, 5, 4), value (2, 5, 6)",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, randn({2, 5, 3}), v),
                       "[scaled_dot_product_attention] query and key must have the same embedding size (last dim), got "
                       "query (2, 3, 4), key (2, 5, 3), value (2, 5, 6)",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, randn({2, 4, 6})),
                       "[scaled_dot_product_attention] key and value must have the same sequence length (dim -2), got "
                       "query (2, 3, 4), key (2, 5, 4), value (2, 4, 6)",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, randn({3, 5, 4}), randn({3, 5, 6})),
                       "[scaled_dot_product_attention] the batch dims of query, key and value do not broadcast: query "
                       "(2, 3, 4), key (3, 5, 4), value (3, 5, 6)",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, ones({3, 4}, Dtype::Bool)),
                       "[scaled_dot_product_attention] attn_mask (3, 4) is not broadcastable to the attention weights "
                       "(2, 3, 5) (query (2, 3, 4), key (2, 5, 4), value (2, 5, 6))",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, ones({4, 2, 3, 5}, Dtype::Bool)), Contains("is not broadcastable"), Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, ones({3, 5}, Dtype::Bool), 0.0, true),
                       "[scaled_dot_product_attention] attn_mask and is_causal cannot both be given", Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, ones({3, 5}, Dtype::Int64)),
                       "[scaled_dot_product_attention] attn_mask must be bool or of query's dtype float32, got int64",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, ones({3, 5}, float64)), Contains("attn_mask must be bool or of query's dtype"), Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, Tensor(), 1.0),
                       "[scaled_dot_product_attention] dropout_p must be in [0, 1), got 1", Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k, v, Tensor(), -0.1), Contains("dropout_p must be in [0, 1)"), Error);
  CHECK_THROWS_WITH_AS(sdpa(randn({1, 3, 2, 4}), randn({1, 2, 5, 4}), randn({1, 2, 5, 6}), Tensor(), 0.0, false, true),
                       "[scaled_dot_product_attention] enable_gqa: query's heads (3) must be a multiple of key's (2) "
                       "and value's (2), got query (1, 3, 2, 4), key (1, 2, 5, 4), value (1, 2, 5, 6)",
                       Error);
  CHECK_THROWS_WITH_AS(sdpa(q.to(int64), k.to(int64), v.to(int64)),
                       "[scaled_dot_product_attention] query must be float32 or float64, got int64", Error);
  CHECK_THROWS_WITH_AS(sdpa(q, k.to(float64), v), Contains("must have the same dtype"), Error);
  CHECK_THROWS_WITH_AS(sdpa(Tensor(), k, v), "[scaled_dot_product_attention] query is undefined", Error);
}

// ---- MultiheadAttention ------------------------------------------------------------------------------------

TEST_CASE("MultiheadAttention: parameters, names and initialisation as torch") {
  manual_seed(5);
  nn::MultiheadAttention m(8, 2);
  CHECK(param_names(m) == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(m.in_proj_weight.shape() == Shape{24, 8});
  CHECK(m.in_proj_weight.dtype() == float32);
  CHECK(pv(m.in_proj_bias) == D(24, 0.0));
  CHECK(pv(m.out_proj->bias) == D(8, 0.0));
  const double bound = std::sqrt(6.0 / (8 + 24));  // xavier_uniform_ of (3E, E)
  CHECK(m.in_proj_weight.detach().abs().max().item<double>() <= bound);
  CHECK(m.in_proj_weight.detach().abs().max().item<double>() > 0.8 * bound);
  CHECK(m.head_dim() == 4);
  nn::MultiheadAttention s(nn::MultiheadAttentionOptions(6, 3).kdim(4).vdim(5).add_bias_kv(true).dtype(float64));
  CHECK(param_names(s) == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                                   "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"});
  CHECK(s.k_proj_weight.shape() == Shape{6, 4});
  CHECK(s.v_proj_weight.shape() == Shape{6, 5});
  CHECK(s.bias_k.shape() == Shape{1, 1, 6});
  CHECK(s.bias_k.dtype() == float64);
  CHECK(!s.in_proj_weight.defined());
  nn::MultiheadAttention nb(nn::MultiheadAttentionOptions(4, 1).bias(false));
  CHECK(param_names(nb) == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
  CHECK(m.extra_repr() == "embed_dim=8, num_heads=2");
}

TEST_CASE("MultiheadAttention: batched, unbatched and batch_first against per-head loops; weights") {
  manual_seed(6);
  const std::int64_t E = 6, H = 2, L = 3, N = 2, S = 4;
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(E, H).dtype(float64));
  nn::init::normal_(m.in_proj_bias);  // nonzero biases exercise the bias path
  nn::init::normal_(m.out_proj->bias);
  const MhaParams p = params_of(m);
  const Tensor q = randn({L, N, E}, float64), k = randn({S, N, E}, float64), v = randn({S, N, E}, float64);
  const MhaRef ref = ref_mha(p, vals(q), vals(k), vals(v), L, N, S, {}, {}, false);
  auto r = m.forward(q, k, v);
  CHECK(r.output.shape() == Shape{L, N, E});
  check_close(r.output, ref.out, 1e-12);
  CHECK(r.weights.shape() == Shape{N, L, S});
  check_close(r.weights, head_mean(ref.w, N, H, L, S), 1e-12);
  r = m.forward(q, k, v, Tensor(), true, Tensor(), false);
  CHECK(r.weights.shape() == Shape{N, H, L, S});
  check_close(r.weights, ref.w, 1e-12);
  r = m.forward(q, k, v, Tensor(), false);
  CHECK(!r.weights.defined());
  check_close(r.output, ref.out, 1e-12);
  // self-attention through forward(x)
  const MhaRef self = ref_mha(p, vals(q), vals(q), vals(q), L, N, L, {}, {}, false);
  check_close(m.forward(q), self.out, 1e-12);
  // unbatched (L, E)
  const Tensor q0 = q.select(1, 1), k0 = k.select(1, 1), v0 = v.select(1, 1);
  r = m.forward(q0, k0, v0);
  CHECK(r.output.shape() == Shape{L, E});
  CHECK(r.weights.shape() == Shape{L, S});
  const MhaRef ref0 = ref_mha(p, vals(q0), vals(k0), vals(v0), L, 1, S, {}, {}, false);
  check_close(r.output, ref0.out, 1e-12);
  check_close(r.weights, head_mean(ref0.w, 1, H, L, S), 1e-12);
  // batch_first: same module parameters, (N, L, E) in and out
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(E, H).batch_first(true).dtype(float64));
  bf.load_state_dict(m.state_dict());
  r = bf.forward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), Tensor(), true, Tensor(), false);
  CHECK(r.output.shape() == Shape{N, L, E});
  check_close(r.output.transpose(0, 1).contiguous(), ref.out, 1e-12);
  check_close(r.weights, ref.w, 1e-12);
  // float32 parameters and inputs
  nn::MultiheadAttention m32(E, H);
  m32.load_state_dict(m.state_dict());
  check_close(m32.forward(q.to(float32), k.to(float32), v.to(float32)).output, ref.out, 5e-5);
  // converted to float64 by Module::to: float64 inputs
  m32.to(float64);
  check_close(m32.forward(q, k, v).output, ref.out, 5e-5);
}

TEST_CASE("MultiheadAttention: key padding and attention masks (bool and float), kdim/vdim, no bias") {
  manual_seed(7);
  const std::int64_t E = 4, H = 2, L = 3, N = 2, S = 5;
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(E, H).kdim(3).vdim(2).dtype(float64));
  nn::init::normal_(m.in_proj_bias);
  const MhaParams p = params_of(m);
  const Tensor q = randn({L, N, E}, float64), k = randn({S, N, 3}, float64), v = randn({S, N, 2}, float64);
  // bool key padding (true = ignore) and bool attn_mask (true = not allowed), each row keeps key 0
  const Tensor kpm = logical_and(rand({N, S}, float64) > 0.5, arange(0, S).unsqueeze(0) > 0);
  const Tensor am = logical_and(rand({L, S}, float64) > 0.6, arange(0, S).unsqueeze(0) > 0);
  MhaRef ref = ref_mha(p, vals(q), vals(k), vals(v), L, N, S, ignore_bias(kpm), ignore_bias(am), false);
  auto r = m.forward(q, k, v, kpm, true, am, false);
  check_close(r.output, ref.out, 1e-12);
  check_close(r.weights, ref.w, 1e-12);
  // float masks: (N, S) and (N * H, L, S), added
  const Tensor fk = randn({N, S}, float64), fa = randn({N * H, L, S}, float64);
  ref = ref_mha(p, vals(q), vals(k), vals(v), L, N, S, vals(fk), vals(fa), true);
  r = m.forward(q, k, v, fk, true, fa, false);
  check_close(r.output, ref.out, 1e-12);
  check_close(r.weights, ref.w, 1e-12);
  // a float32 mask is converted to the parameters' dtype
  check_close(m.forward(q, k, v, fk.to(float32), false, fa.to(float32)).output,
              ref_mha(p, vals(q), vals(k), vals(v), L, N, S, vals(fk.to(float32)), vals(fa.to(float32)), true).out, 1e-12);
  // causal hint with its mask
  const Tensor causal = nn::Transformer::generate_square_subsequent_mask(L, float64);
  const Tensor qs = randn({L, N, 3}, float64), vs = randn({L, N, 2}, float64);
  check_close(m.forward(q, qs, vs, Tensor(), false, causal, true, true).output,
              ref_mha(p, vals(q), vals(qs), vals(vs), L, N, L, {}, vals(causal), false).out, 1e-12);
  // unbatched key padding (S)
  r = m.forward(q.select(1, 0), k.select(1, 0), v.select(1, 0), kpm.select(0, 0));
  check_close(r.output, ref_mha(p, vals(q.select(1, 0)), vals(k.select(1, 0)), vals(v.select(1, 0)), L, 1, S,
                                ignore_bias(kpm.select(0, 0)), {}, false).out, 1e-12);
  // no biases
  nn::MultiheadAttention nb(nn::MultiheadAttentionOptions(E, H).bias(false).dtype(float64));
  const Tensor kk = randn({S, N, E}, float64);
  check_close(nb.forward(q, kk, kk).output, ref_mha(params_of(nb), vals(q), vals(kk), vals(kk), L, N, S, {}, {}, false).out,
              1e-12);
}

TEST_CASE("MultiheadAttention: add_bias_kv and add_zero_attn (masks padded)") {
  manual_seed(8);
  const std::int64_t E = 4, H = 2, L = 2, N = 3, S = 3;
  for (auto [bkv, za] : {std::pair<bool, bool>{true, false}, {false, true}, {true, true}}) {
    CAPTURE(bkv);
    CAPTURE(za);
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(E, H).add_bias_kv(bkv).add_zero_attn(za).dtype(float64));
    const MhaParams p = params_of(m);
    const Tensor q = randn({L, N, E}, float64), k = randn({S, N, E}, float64), v = randn({S, N, E}, float64);
    const Tensor kpm = arange(0, S).unsqueeze(0).expand({N, S}) == 2;
    const Tensor am = randn({L, S}, float64);
    const MhaRef ref = ref_mha(p, vals(q), vals(k), vals(v), L, N, S, ignore_bias(kpm), vals(am), false);
    const auto r = m.forward(q, k, v, kpm, true, am, false);
    CHECK(r.weights.shape() == Shape{N, H, L, ref.S2});
    check_close(r.output, ref.out, 1e-12);
    check_close(r.weights, ref.w, 1e-12);
  }
}

TEST_CASE("MultiheadAttention: dropout in training, deterministic in eval") {
  manual_seed(9);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2).dropout(0.5).dtype(float64));
  nn::MultiheadAttention m0(nn::MultiheadAttentionOptions(4, 2).dtype(float64));
  m0.load_state_dict(m.state_dict());
  const Tensor x = randn({5, 2, 4}, float64);
  const auto a = m.forward(x, x, x, Tensor(), true, Tensor(), false), b = m.forward(x, x, x);
  CHECK(!equal(a.output, b.output));
  // weights in training are dropped (zeros) or scaled by 2
  int bad = 0, zeros_seen = 0;
  const D ref = ref_mha(params_of(m), vals(x), vals(x), vals(x), 5, 2, 5, {}, {}, false).w;
  const D w = vals(a.weights);
  for (std::size_t i = 0; i < w.size(); ++i) {
    zeros_seen += w[i] == 0.0;
    bad += !(w[i] == 0.0 || std::abs(w[i] - 2 * ref[i]) < 1e-12);
  }
  CHECK(bad == 0);
  CHECK(zeros_seen > 10);
  m.eval();
  const auto e1 = m.forward(x, x, x), e2 = m.forward(x, x, x);
  CHECK(equal(e1.output, e2.output));
  check_close(e1.output, vals(m0.forward(x, x, x).output), 1e-14);
}

TEST_CASE("MultiheadAttention: gradcheck in float64 (inputs, masks and parameters)") {
  manual_seed(10);
  auto m = std::make_shared<nn::MultiheadAttention>(
      nn::MultiheadAttentionOptions(4, 2).kdim(3).add_bias_kv(true).add_zero_attn(true).dtype(float64));
  const Tensor q = test::leaf64({2, 2, 4}), k = test::leaf64({3, 2, 3}), v = test::leaf64({3, 2, 4});
  const Tensor fk = test::leaf64({2, 3}), am = rand({2, 3}, float64) > 0.7;
  CHECK(autodiff::gradcheck([&](const G& in) { return m->forward(in[0], in[1], in[2], in[3], false, am).output; },
                            {q, k, v, fk}));
  CHECK(autodiff::gradcheck(
      [&](const G& in) { return m->forward(in[0], in[1], in[2], Tensor(), true, Tensor(), false).weights; }, {q, k, v}));
  // gradients with respect to the parameters: the members are swapped for gradcheck's inputs
  const nn::MultiheadAttention& cm = *m;
  const G saved{cm.q_proj_weight, cm.k_proj_weight, cm.v_proj_weight, cm.in_proj_bias, cm.bias_k, cm.bias_v,
                cm.out_proj->weight, cm.out_proj->bias};
  const auto set = [&](const G& t) {
    m->q_proj_weight = t[0], m->k_proj_weight = t[1], m->v_proj_weight = t[2], m->in_proj_bias = t[3];
    m->bias_k = t[4], m->bias_v = t[5], m->out_proj->weight = t[6], m->out_proj->bias = t[7];
  };
  G params;
  for (const auto& t : saved) params.push_back(t.detach().clone().requires_grad_());
  const Tensor qd = q.detach(), kd = k.detach(), vd = v.detach();
  CHECK(autodiff::gradcheck(
      [&](const G& in) {
        set(in);
        return m->forward(qd, kd, vd, Tensor(), false, am).output;
      },
      params));
  set(saved);
  // self-attention, plain layer: gradgradcheck
  nn::MultiheadAttention s(nn::MultiheadAttentionOptions(2, 1).dtype(float64));
  CHECK(autodiff::gradgradcheck([&](const G& in) { return s.forward(in[0]); }, {test::leaf64({3, 2})}));
}

TEST_CASE("MultiheadAttention: errors") {
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(6, 4), "[MultiheadAttention] embed_dim 6 must be divisible by num_heads 4",
                       Error);
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(0, 1), "[MultiheadAttention] embed_dim must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(4, 0), "[MultiheadAttention] num_heads must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).dropout(1.5)),
                       "[MultiheadAttention] dropout must be in [0, 1], got 1.5", Error);
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).kdim(0)),
                       "[MultiheadAttention] kdim and vdim must be positive, got 0 and 4", Error);
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).dtype(int64)),
                       "[MultiheadAttention] parameter dtype must be float32 or float64, got int64", Error);
  nn::MultiheadAttention m(4, 2);
  const Tensor q = randn({3, 2, 4}), k = randn({5, 2, 4});
  CHECK_THROWS_WITH_AS(m.forward(randn({3, 2, 5}), k, k),
                       "[MultiheadAttention] expected query with embed_dim 4 features, got query (3, 2, 5), key (5, 2, "
                       "4), value (5, 2, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, randn({5, 2, 3}), k),
                       "[MultiheadAttention] expected key with kdim 4 and value with vdim 4 features, got query (3, 2, "
                       "4), key (5, 2, 3), value (5, 2, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, randn({6, 2, 4})),
                       "[MultiheadAttention] key and value must have the same batch size and sequence length, got query "
                       "(3, 2, 4), key (5, 2, 4), value (6, 2, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, randn({5, 3, 4}), randn({5, 3, 4})),
                       Contains("query and key must have the same batch size, got query (3, 2, 4), key (5, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(m.forward(randn({1, 3, 2, 4}), k, k), Contains("expected a 2-D (unbatched) or 3-D (batched) query"),
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, randn({5, 4}), randn({5, 4})),
                       Contains("query, key and value must all be batched (3-D) or all unbatched (2-D)"), Error);
  CHECK_THROWS_WITH_AS(m.forward(q.to(float64), k, k), Contains("must have the parameters' dtype float32"), Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, ones({2, 4}, Dtype::Bool)),
                       "[MultiheadAttention] expected key_padding_mask of shape (2, 5), got (2, 4) (query (3, 2, 4), "
                       "key (5, 2, 4), value (5, 2, 4))",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, Tensor(), true, ones({3, 4}, Dtype::Bool)),
                       "[MultiheadAttention] expected attn_mask of shape (3, 5) or (4, 3, 5), got (3, 4) (query (3, 2, "
                       "4), key (5, 2, 4), value (5, 2, 4))",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, ones({2, 5}, Dtype::Int64)),
                       "[MultiheadAttention] key_padding_mask must be bool or floating, got int64", Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, Tensor(), true, ones({3, 5}, Dtype::Int64)),
                       "[MultiheadAttention] attn_mask must be bool or floating, got int64", Error);
  CHECK_THROWS_WITH_AS(m.forward(q, k, k, Tensor(), true, Tensor(), true, true),
                       "[MultiheadAttention] is_causal is a hint that attn_mask is the causal mask: attn_mask must be "
                       "given with it",
                       Error);
  CHECK_THROWS_WITH_AS(m.forward(q, Tensor(), k), "[MultiheadAttention] key is undefined", Error);
}

// ---- transformer layers ------------------------------------------------------------------------------------

TEST_CASE("TransformerEncoderLayer: post-norm and pre-norm, relu and gelu, masks, batch_first, against loops") {
  manual_seed(11);
  const std::int64_t E = 4, L = 3, N = 2;
  for (bool norm_first : {false, true})
    for (auto act : {nn::Activation::relu, nn::Activation::gelu}) {
      CAPTURE(norm_first);
      nn::TransformerEncoderLayer layer(
          nn::TransformerLayerOptions(E, 2).dim_feedforward(6).norm_first(norm_first).activation(act).dtype(float64));
      for (auto& p : layer.parameters()) nn::init::normal_(p, 0.0, 0.5);  // nontrivial norms and biases
      layer.eval();
      const Tensor x = randn({L, N, E}, float64);
      check_close(layer.forward(x), ref_encoder_layer(layer, vals(x), L, N, {}, {}), 1e-11);
      const Tensor kpm = arange(0, L).unsqueeze(0).expand({N, L}) == 2;
      const Tensor am = nn::Transformer::generate_square_subsequent_mask(L, float64);
      check_close(layer.forward(x, am, kpm, true), ref_encoder_layer(layer, vals(x), L, N, ignore_bias(kpm), vals(am)),
                  1e-11);
      // unbatched
      check_close(layer.forward(x.select(1, 0)), ref_encoder_layer(layer, vals(x.select(1, 0)), L, 1, {}, {}), 1e-11);
    }
  nn::TransformerEncoderLayer l(nn::TransformerLayerOptions(4, 2).dim_feedforward(8).dtype(float64));
  nn::TransformerEncoderLayer lb(nn::TransformerLayerOptions(4, 2).dim_feedforward(8).batch_first(true).dtype(float64));
  lb.load_state_dict(l.state_dict());
  l.eval();
  lb.eval();
  const Tensor x = randn({2, 3, 4}, float64);
  check_close(lb.forward(x).transpose(0, 1).contiguous(), vals(l.forward(x.transpose(0, 1))), 1e-13);
  // torch's submodule and parameter names
  CHECK(param_names(l) == std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                                   "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                                                   "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                                                   "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"});
  std::vector<std::string> children;
  for (const auto& [name, c] : l.named_children()) children.push_back(name);
  CHECK(children == std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1",
                                             "dropout2"});
  CHECK(l.norm1->weight.dtype() == float64);
  nn::TransformerEncoderLayer nb(nn::TransformerLayerOptions(4, 2).dim_feedforward(8).bias(false));
  CHECK(param_names(nb) == std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.out_proj.weight",
                                                    "linear1.weight", "linear2.weight", "norm1.weight", "norm2.weight"});
}

TEST_CASE("TransformerEncoderLayer: dropout in training, eval equals dropout 0; gradcheck") {
  manual_seed(12);
  nn::TransformerEncoderLayer l(nn::TransformerLayerOptions(4, 2).dim_feedforward(8).dropout(0.3).dtype(float64));
  nn::TransformerEncoderLayer l0(nn::TransformerLayerOptions(4, 2).dim_feedforward(8).dropout(0.0).dtype(float64));
  l0.load_state_dict(l.state_dict());
  const Tensor x = randn({3, 2, 4}, float64);
  CHECK(!equal(l.forward(x), l.forward(x)));
  l.eval();
  CHECK(equal(l.forward(x), l.forward(x)));
  check_close(l.forward(x), vals(l0.forward(x)), 1e-14);
  CHECK(autodiff::gradcheck([&](const G& in) { return l0.forward(in[0], Tensor(), in[1]); },
                            {test::leaf64({3, 2, 4}), test::leaf64({2, 3})}));
}

TEST_CASE("TransformerEncoder: stacked layers start equal, final norm, names") {
  manual_seed(13);
  const auto lo = nn::TransformerLayerOptions(4, 2).dim_feedforward(6).dtype(float64);
  auto norm = std::make_shared<nn::LayerNorm>(Shape{4});
  norm->to(float64);
  nn::TransformerEncoder enc(lo, 2, norm);
  enc.eval();
  const auto names = param_names(enc);
  CHECK(names.front() == "layers.0.self_attn.in_proj_weight");
  CHECK(std::count(names.begin(), names.end(), "layers.1.linear2.bias") == 1);
  CHECK(names.back() == "norm.bias");
  const auto sd = enc.state_dict();
  CHECK(equal(sd.at("layers.0.linear1.weight"), sd.at("layers.1.linear1.weight")));  // torch's deep copies
  for (auto& p : enc.parameters()) nn::init::normal_(p, 0.0, 0.5);
  const Tensor x = randn({3, 2, 4}, float64), kpm = arange(0, 3).unsqueeze(0).expand({2, 3}) == 0;
  auto l0 = std::static_pointer_cast<nn::TransformerEncoderLayer>((*enc.layers)[0]);
  auto l1 = std::static_pointer_cast<nn::TransformerEncoderLayer>((*enc.layers)[1]);
  D y = ref_encoder_layer(*l0, vals(x), 3, 2, ignore_bias(kpm), {});
  y = ref_encoder_layer(*l1, y, 3, 2, ignore_bias(kpm), {});
  y = ref_layer_norm(y, 6, 4, *norm);
  check_close(enc.forward(x, Tensor(), kpm), y, 1e-11);
  nn::TransformerEncoder bare(lo, 1);
  CHECK(bare.norm == nullptr);
  CHECK(param_names(bare).back() == "layers.0.norm2.bias");
  CHECK_THROWS_WITH_AS(nn::TransformerEncoder(lo, -1), "[TransformerEncoder] num_layers must be >= 0, got -1", Error);
}

TEST_CASE("TransformerDecoderLayer, TransformerDecoder and Transformer against loops") {
  manual_seed(14);
  const std::int64_t E = 4, T = 3, S = 4, N = 2;
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    nn::TransformerDecoderLayer l(
        nn::TransformerLayerOptions(E, 2).dim_feedforward(5).norm_first(norm_first).dtype(float64));
    for (auto& p : l.parameters()) nn::init::normal_(p, 0.0, 0.5);
    l.eval();
    const Tensor tgt = randn({T, N, E}, float64), mem = randn({S, N, E}, float64);
    const Tensor tm = nn::Transformer::generate_square_subsequent_mask(T, float64);
    const Tensor mk = arange(0, S).unsqueeze(0).expand({N, S}) == 1;
    check_close(l.forward(tgt, mem, tm, Tensor(), Tensor(), mk, true),
                ref_decoder_layer(l, vals(tgt), vals(mem), T, S, N, vals(tm), ignore_bias(mk)), 1e-11);
  }
  nn::TransformerDecoderLayer l(4, 2);
  std::vector<std::string> children;
  for (const auto& [name, c] : l.named_children()) children.push_back(name);
  CHECK(children == std::vector<std::string>{"self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1",
                                             "norm2", "norm3", "dropout1", "dropout2", "dropout3"});
  CHECK(l.linear1->weight.shape() == Shape{2048, 4});
  // Transformer = encoder (with its norm) then decoder (with its norm)
  nn::Transformer tr(nn::TransformerOptions().d_model(4).nhead(2).num_encoder_layers(2).num_decoder_layers(1)
                         .dim_feedforward(6).dtype(float64));
  tr.eval();
  const auto names = param_names(tr);
  CHECK(names.front() == "encoder.layers.0.self_attn.in_proj_weight");
  CHECK(std::count(names.begin(), names.end(), "encoder.norm.weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "decoder.layers.0.multihead_attn.out_proj.bias") == 1);
  CHECK(names.back() == "decoder.norm.bias");
  const double bound = std::sqrt(6.0 / (4 + 6));  // xavier_uniform_ redraw of linear1 (6, 4)
  CHECK(tr.encoder->layers->operator[](0)->state_dict().at("linear1.weight").detach().abs().max().item<double>() <= bound);
  const Tensor src = randn({S, N, E}, float64), tgt = randn({T, N, E}, float64);
  const Tensor tm = nn::Transformer::generate_square_subsequent_mask(T, float64);
  const Tensor want = tr.decoder->forward(tgt, tr.encoder->forward(src), tm);
  CHECK(equal(tr.forward(src, tgt, Tensor(), tm), want));
  CHECK(tr.forward(src, tgt).shape() == Shape{T, N, E});
  CHECK_THROWS_WITH_AS(tr.forward(src, randn({T, 3, E}, float64)),
                       "[Transformer] src and tgt must have the same batch size, got src (4, 2, 4) and tgt (3, 3, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(tr.forward(src, randn({T, N, 5}, float64)),
                       "[Transformer] src and tgt must have d_model 4 features, got src (4, 2, 4) and tgt (3, 2, 5)",
                       Error);
  CHECK_THROWS_WITH_AS(tr.forward(src, tgt.select(0, 0)), Contains("src and tgt must both be batched or both unbatched"),
                       Error);
  // the causal mask
  const D cm = vals(nn::Transformer::generate_square_subsequent_mask(3, float64));
  CHECK(cm == D{0, -kInf, -kInf, 0, 0, -kInf, 0, 0, 0});
  CHECK_THROWS_WITH_AS(nn::Transformer::generate_square_subsequent_mask(-1),
                       "[generate_square_subsequent_mask] sz must be >= 0, got -1", Error);
}

TEST_CASE("transformer layers: errors") {
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(6, 4), "[TransformerEncoderLayer] d_model 6 must be divisible by nhead 4",
                       Error);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(nn::TransformerLayerOptions(4, 2).dim_feedforward(0)),
                       "[TransformerEncoderLayer] dim_feedforward must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::TransformerEncoderLayer(nn::TransformerLayerOptions(4, 2).dropout(-0.5)),
                       "[TransformerEncoderLayer] dropout must be in [0, 1], got -0.5", Error);
  CHECK_THROWS_WITH_AS(nn::TransformerDecoderLayer(0, 1),
                       "[TransformerDecoderLayer] d_model and nhead must be positive, got 0 and 1", Error);
  nn::TransformerEncoderLayer l(nn::TransformerLayerOptions(4, 2).dim_feedforward(8));
  CHECK_THROWS_WITH_AS(l.forward(randn({3, 2, 5})),
                       "[TransformerEncoderLayer] expected src of 2 (unbatched) or 3 (batched) dims with d_model 4 "
                       "features, got (3, 2, 5)",
                       Error);
  CHECK_THROWS_WITH_AS(l.forward(randn({3, 2, 4}), ones({3, 2}, Dtype::Bool)),
                       Contains("[MultiheadAttention] expected attn_mask of shape (3, 3) or (4, 3, 3), got (3, 2)"), Error);
  nn::TransformerDecoderLayer d(nn::TransformerLayerOptions(4, 2).dim_feedforward(8));
  CHECK_THROWS_WITH_AS(d.forward(randn({3, 2, 4}), randn({5, 2, 3})),
                       "[TransformerDecoderLayer] expected memory of 2 (unbatched) or 3 (batched) dims with d_model 4 "
                       "features, got (5, 2, 3)",
                       Error);
}
