// tests/test_rnn.cpp - recurrent cells and layers (RNNCell, LSTMCell, GRUCell, RNN, LSTM, GRU) against direct
// loops in double over time, gates, layers and directions written here; gradcheck in float64; parameter names,
// shapes and initialisation; dropout between layers; errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::check_close;
using phasor::test::vals;
namespace F = phasor::nn::functional;
using G = std::vector<Tensor>;

namespace {

using Vec = std::vector<double>;
enum class M { tanh, relu, lstm, gru };

std::int64_t gates_of(M m) { return m == M::lstm ? 4 : m == M::gru ? 3 : 1; }
double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// One direction's weights as row-major doubles (w_hr empty without projection, biases empty without bias).
struct W {
  Vec w_ih, w_hh, b_ih, b_hh, w_hr;
  std::int64_t in = 0, H = 0, Hout = 0;
};

W weights(M m, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, const Tensor& w_hr) {
  W w;
  w.w_ih = vals(w_ih);
  w.w_hh = vals(w_hh);
  if (b_ih.defined()) w.b_ih = vals(b_ih);
  if (b_hh.defined()) w.b_hh = vals(b_hh);
  if (w_hr.defined()) w.w_hr = vals(w_hr);
  w.H = w_ih.size(0) / gates_of(m);
  w.in = w_ih.size(1);
  w.Hout = w_hr.defined() ? w_hr.size(0) : w.H;
  return w;
}

/// One step for one sample: h (Hout) and c (H) updated from x (in), written from the formulas directly.
void ref_step(M m, const W& w, const double* x, Vec& h, Vec& c) {
  const std::int64_t GH = gates_of(m) * w.H;
  Vec gi(GH), gh(GH);
  for (std::int64_t j = 0; j < GH; ++j) {
    double a = w.b_ih.empty() ? 0.0 : w.b_ih[j], b = w.b_hh.empty() ? 0.0 : w.b_hh[j];
    for (std::int64_t k = 0; k < w.in; ++k) a += w.w_ih[j * w.in + k] * x[k];
    for (std::int64_t k = 0; k < w.Hout; ++k) b += w.w_hh[j * w.Hout + k] * h[k];
    gi[j] = a;
    gh[j] = b;
  }
  const std::int64_t H = w.H;
  Vec hn(H);
  for (std::int64_t j = 0; j < H; ++j) {
    switch (m) {
      case M::tanh: hn[j] = std::tanh(gi[j] + gh[j]); break;
      case M::relu: hn[j] = std::max(0.0, gi[j] + gh[j]); break;
      case M::lstm: {
        const double i = sig(gi[j] + gh[j]), f = sig(gi[H + j] + gh[H + j]);
        const double g = std::tanh(gi[2 * H + j] + gh[2 * H + j]), o = sig(gi[3 * H + j] + gh[3 * H + j]);
        c[j] = f * c[j] + i * g;
        hn[j] = o * std::tanh(c[j]);
        break;
      }
      case M::gru: {
        const double r = sig(gi[j] + gh[j]), z = sig(gi[H + j] + gh[H + j]);
        const double n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
        hn[j] = (1 - z) * n + z * h[j];
        break;
      }
    }
  }
  if (w.w_hr.empty()) {
    h = hn;
  } else {
    for (std::int64_t p = 0; p < w.Hout; ++p) {
      double s = 0;
      for (std::int64_t j = 0; j < H; ++j) s += w.w_hr[p * H + j] * hn[j];
      h[p] = s;
    }
  }
}

/// A cell on x (N, in) with states (N, H) (empty: zeros): {h', c'} flattened.
std::pair<Vec, Vec> ref_cell(M m, const Tensor& x, const Tensor& h0, const Tensor& c0, const W& w) {
  const Vec xv = vals(x);
  const std::int64_t N = x.numel() / w.in;
  Vec hs = h0.defined() ? vals(h0) : Vec(N * w.Hout, 0.0), cs = c0.defined() ? vals(c0) : Vec(N * w.H, 0.0);
  for (std::int64_t n = 0; n < N; ++n) {
    Vec h(hs.begin() + n * w.Hout, hs.begin() + (n + 1) * w.Hout), c(cs.begin() + n * w.H, cs.begin() + (n + 1) * w.H);
    ref_step(m, w, xv.data() + n * w.in, h, c);
    std::copy(h.begin(), h.end(), hs.begin() + n * w.Hout);
    std::copy(c.begin(), c.end(), cs.begin() + n * w.H);
  }
  return {hs, cs};
}

struct RefOut {
  Vec out, hn, cn;  // out (L, N, D * Hout), hn (layers, N, Hout), cn (layers, N, H)
};

/// The stacked, optionally bidirectional recurrence on x (L, N, in) with the flat parameter list (torch's order),
/// no dropout.
RefOut ref_layers(M m, const Tensor& x, const Tensor& h0, const Tensor& c0, const std::vector<Tensor>& params,
                  bool bias, std::int64_t nl, bool bidir, bool proj) {
  const std::int64_t L = x.size(0), N = x.size(1), D = bidir ? 2 : 1;
  const std::int64_t per = (bias ? 4 : 2) + (proj ? 1 : 0);
  Vec in = vals(x);
  std::int64_t in_size = x.size(2);
  RefOut r;
  const Vec h0v = h0.defined() ? vals(h0) : Vec(), c0v = c0.defined() ? vals(c0) : Vec();
  for (std::int64_t k = 0; k < nl; ++k) {
    std::vector<W> ws;
    for (std::int64_t d = 0; d < D; ++d) {
      const std::size_t a = static_cast<std::size_t>((k * D + d) * per);
      ws.push_back(weights(m, params[a], params[a + 1], bias ? params[a + 2] : Tensor(), bias ? params[a + 3] : Tensor(),
                           proj ? params[a + per - 1] : Tensor()));
    }
    const std::int64_t Hout = ws[0].Hout, H = ws[0].H;
    Vec out(L * N * D * Hout);
    for (std::int64_t d = 0; d < D; ++d) {
      const std::int64_t g = k * D + d;
      for (std::int64_t n = 0; n < N; ++n) {
        Vec h(Hout, 0.0), c(H, 0.0);
        if (!h0v.empty())
          for (std::int64_t j = 0; j < Hout; ++j) h[j] = h0v[(g * N + n) * Hout + j];
        if (!c0v.empty())
          for (std::int64_t j = 0; j < H; ++j) c[j] = c0v[(g * N + n) * H + j];
        for (std::int64_t s = 0; s < L; ++s) {
          const std::int64_t t = d == 0 ? s : L - 1 - s;
          ref_step(m, ws[d], in.data() + (t * N + n) * in_size, h, c);
          for (std::int64_t j = 0; j < Hout; ++j) out[(t * N + n) * D * Hout + d * Hout + j] = h[j];
        }
        r.hn.insert(r.hn.end(), h.begin(), h.end());
        r.cn.insert(r.cn.end(), c.begin(), c.end());
      }
    }
    in = out;
    in_size = D * Hout;
  }
  r.out = in;
  return r;
}

/// Values of a (A, B, C) tensor with its first two dims swapped.
Vec swap01(const Vec& v, std::int64_t A, std::int64_t B, std::int64_t C) {
  Vec o(v.size());
  for (std::int64_t a = 0; a < A; ++a)
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t c = 0; c < C; ++c) o[(b * A + a) * C + c] = v[(a * B + b) * C + c];
  return o;
}

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& p : m.named_parameters()) out.push_back(p.first);
  return out;
}

/// Float64 leaves requiring grad, copies of `ts`.
G leaves(const G& ts) {
  G out;
  for (const auto& t : ts) out.push_back(t.detach().clone().requires_grad_());
  return out;
}

}  // namespace

// ---- cells ----------------------------------------------------------------------------------------

TEST_CASE("rnn cells match direct loops: RNNCell tanh/relu, LSTMCell, GRUCell, batched and unbatched") {
  manual_seed(11);
  const std::int64_t N = 3, I = 5, H = 4;
  const Tensor x = randn({N, I}, float64), h = randn({N, H}, float64), c = randn({N, H}, float64);
  SUBCASE("RNNCell") {
    for (const char* act : {"tanh", "relu"}) {
      CAPTURE(act);
      nn::RNNCell cell(nn::RNNCellOptions(I, H).nonlinearity(act).dtype(float64));
      const M m = std::string(act) == "relu" ? M::relu : M::tanh;
      const W w = weights(m, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, Tensor());
      check_close(cell.forward(x, h), ref_cell(m, x, h, Tensor(), w).first);
      check_close(cell.forward(x), ref_cell(m, x, Tensor(), Tensor(), w).first);
      const Tensor u = cell.forward(x.select(0, 1), h.select(0, 1));  // unbatched
      CHECK(u.shape() == Shape{H});
      check_close(u, ref_cell(m, x.select(0, 1), h.select(0, 1), Tensor(), w).first);
      const auto fn = m == M::relu ? F::rnn_relu_cell : F::rnn_tanh_cell;
      check_close(fn(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), ref_cell(m, x, h, Tensor(), w).first);
    }
    nn::RNNCell nb(nn::RNNCellOptions(I, H).bias(false).dtype(float64));
    CHECK(names_of(nb) == std::vector<std::string>{"weight_ih", "weight_hh"});
    check_close(nb.forward(x, h), ref_cell(M::tanh, x, h, Tensor(), weights(M::tanh, nb.weight_ih, nb.weight_hh, Tensor(), Tensor(), Tensor())).first);
  }
  SUBCASE("LSTMCell") {
    nn::LSTMCell cell(nn::LSTMCellOptions(I, H).dtype(float64));
    const W w = weights(M::lstm, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, Tensor());
    auto [h1, c1] = cell.forward(x, {h, c});
    const auto ref = ref_cell(M::lstm, x, h, c, w);
    check_close(h1, ref.first);
    check_close(c1, ref.second);
    auto [h2, c2] = cell.forward(x, {});
    const auto ref0 = ref_cell(M::lstm, x, Tensor(), Tensor(), w);
    check_close(h2, ref0.first);
    check_close(c2, ref0.second);
    check_close(cell.forward(x), ref0.first);
    auto [hu, cu] = cell.forward(x.select(0, 2), {h.select(0, 2), c.select(0, 2)});
    CHECK(hu.shape() == Shape{H});
    const auto refu = ref_cell(M::lstm, x.select(0, 2), h.select(0, 2), c.select(0, 2), w);
    check_close(hu, refu.first);
    check_close(cu, refu.second);
    auto [hf, cf] = F::lstm_cell(x, {h, c}, cell.weight_ih, cell.weight_hh);  // no biases
    const auto refnb = ref_cell(M::lstm, x, h, c, weights(M::lstm, cell.weight_ih, cell.weight_hh, Tensor(), Tensor(), Tensor()));
    check_close(hf, refnb.first);
    check_close(cf, refnb.second);
  }
  SUBCASE("GRUCell") {
    nn::GRUCell cell(nn::GRUCellOptions(I, H).dtype(float64));
    const W w = weights(M::gru, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, Tensor());
    check_close(cell.forward(x, h), ref_cell(M::gru, x, h, Tensor(), w).first);
    check_close(cell.forward(x), ref_cell(M::gru, x, Tensor(), Tensor(), w).first);
    const Tensor u = cell.forward(x.select(0, 0), h.select(0, 0));
    CHECK(u.shape() == Shape{H});
    check_close(u, ref_cell(M::gru, x.select(0, 0), h.select(0, 0), Tensor(), w).first);
    const W wnb = weights(M::gru, cell.weight_ih, cell.weight_hh, Tensor(), Tensor(), Tensor());
    check_close(F::gru_cell(x, h, cell.weight_ih, cell.weight_hh), ref_cell(M::gru, x, h, Tensor(), wnb).first);
    check_close(F::gru_cell(x, Tensor(), cell.weight_ih, cell.weight_hh), ref_cell(M::gru, x, Tensor(), Tensor(), wnb).first);
  }
}

TEST_CASE("rnn cells: parameter names, shapes, initialisation, float32, repr") {
  manual_seed(3);
  nn::LSTMCell l(6, 5);
  CHECK(names_of(l) == std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
  CHECK(l.weight_ih.shape() == Shape{20, 6});
  CHECK(l.weight_hh.shape() == Shape{20, 5});
  CHECK(l.bias_ih.shape() == Shape{20});
  CHECK(l.weight_ih.dtype() == float32);
  nn::GRUCell g(6, 5);
  CHECK(g.weight_ih.shape() == Shape{15, 6});
  nn::RNNCell r(6, 5, true, "relu");
  CHECK(r.weight_hh.shape() == Shape{5, 5});
  const double b = 1.0 / std::sqrt(5.0);
  for (const nn::Module* m : {static_cast<const nn::Module*>(&l), static_cast<const nn::Module*>(&g),
                              static_cast<const nn::Module*>(&r)})
    for (const auto& p : m->parameters()) {
      const Vec v = vals(p.detach());
      double lo = 1e9, hi = -1e9;
      for (double e : v) lo = std::min(lo, e), hi = std::max(hi, e);
      CHECK(lo >= -b);
      CHECK(hi <= b);
      CHECK(hi - lo > b);  // spread over the range, not constant
    }
  const Tensor y = l.forward(randn({2, 6}));
  CHECK(y.dtype() == float32);
  CHECK(y.shape() == Shape{2, 5});
  std::ostringstream os;
  os << r;
  CHECK(os.str().find("RNNCell(6, 5, nonlinearity=relu)") != std::string::npos);
}

TEST_CASE("rnn cells: gradcheck and gradgradcheck in float64") {
  manual_seed(5);
  const std::int64_t N = 2, I = 3, H = 2;
  const G in1 = leaves({randn({N, I}, float64), randn({N, H}, float64), randn({H, I}, float64), randn({H, H}, float64),
                        randn({H}, float64), randn({H}, float64)});
  CHECK(autodiff::gradcheck([](const G& a) { return F::rnn_tanh_cell(a[0], a[1], a[2], a[3], a[4], a[5]); }, in1));
  CHECK(autodiff::gradcheck([](const G& a) { return F::rnn_relu_cell(a[0], a[1], a[2], a[3], a[4], a[5]); }, in1));
  CHECK(autodiff::gradgradcheck([](const G& a) { return F::rnn_tanh_cell(a[0], a[1], a[2], a[3], a[4], a[5]); }, in1));
  const G in4 = leaves({randn({N, I}, float64), randn({N, H}, float64), randn({N, H}, float64), randn({4 * H, I}, float64),
                        randn({4 * H, H}, float64), randn({4 * H}, float64), randn({4 * H}, float64)});
  auto lstm = [](const G& a) {
    auto [h, c] = F::lstm_cell(a[0], {a[1], a[2]}, a[3], a[4], a[5], a[6]);
    return G{h, c};
  };
  CHECK(autodiff::gradcheck(lstm, in4));
  CHECK(autodiff::gradgradcheck(lstm, in4));
  CHECK(autodiff::gradcheck([](const G& a) { return F::lstm_cell(a[0], {}, a[3], a[4], a[5], a[6]).second; }, in4));
  const G in3 = leaves({randn({N, I}, float64), randn({N, H}, float64), randn({3 * H, I}, float64),
                        randn({3 * H, H}, float64), randn({3 * H}, float64), randn({3 * H}, float64)});
  CHECK(autodiff::gradcheck([](const G& a) { return F::gru_cell(a[0], a[1], a[2], a[3], a[4], a[5]); }, in3));
  CHECK(autodiff::gradgradcheck([](const G& a) { return F::gru_cell(a[0], a[1], a[2], a[3], a[4], a[5]); }, in3));
  CHECK(autodiff::gradcheck([](const G& a) { return F::gru_cell(a[0], Tensor(), a[2], a[3], a[4], a[5]); }, in3));
  // unbatched
  CHECK(autodiff::gradcheck([](const G& a) { return F::gru_cell(a[0].select(0, 0), a[1].select(0, 0), a[2], a[3]); }, in3));
}

// ---- layers ---------------------------------------------------------------------------------------

namespace {

/// Runs module `m` of kind `mode` on x (L, N, in), with states or not, batch_first or not, and compares with
/// ref_layers.
void check_layer(M mode, nn::RNNBase& m, const Tensor& x, const Tensor& h0, const Tensor& c0) {
  const auto& o = m.options;
  const bool proj = o.proj_size() > 0;
  const RefOut ref = ref_layers(mode, x, h0, c0, m.flat_weights(), o.bias(), o.num_layers(), o.bidirectional(), proj);
  const std::int64_t L = x.size(0), N = x.size(1), D = o.bidirectional() ? 2 : 1;
  const std::int64_t Hout = proj ? o.proj_size() : o.hidden_size();
  const Tensor xin = o.batch_first() ? x.transpose(0, 1).contiguous() : x;
  Tensor out, hn, cn;
  if (mode == M::lstm) {
    auto r = static_cast<nn::LSTM&>(m).forward(xin, {h0, c0});
    out = r.first;
    hn = r.second.first;
    cn = r.second.second;
  } else if (mode == M::gru) {
    std::tie(out, hn) = static_cast<nn::GRU&>(m).forward(xin, h0);
  } else {
    std::tie(out, hn) = static_cast<nn::RNN&>(m).forward(xin, h0);
  }
  const Shape want_out = o.batch_first() ? Shape{N, L, D * Hout} : Shape{L, N, D * Hout};
  CHECK(out.shape() == want_out);
  CHECK(hn.shape() == Shape{D * o.num_layers(), N, Hout});
  check_close(out, o.batch_first() ? swap01(ref.out, L, N, D * Hout) : ref.out);
  check_close(hn, ref.hn);
  if (mode == M::lstm) {
    CHECK(cn.shape() == Shape{D * o.num_layers(), N, o.hidden_size()});
    check_close(cn, ref.cn);
  }
  check_close(m.forward(xin), o.batch_first() ? swap01(ref_layers(mode, x, Tensor(), Tensor(), m.flat_weights(), o.bias(), o.num_layers(), o.bidirectional(), proj).out, L, N, D * Hout)
                                              : ref_layers(mode, x, Tensor(), Tensor(), m.flat_weights(), o.bias(), o.num_layers(), o.bidirectional(), proj).out);
}

}  // namespace

TEST_CASE("RNN, LSTM, GRU match direct loops: 2 layers, bidirectional, batch_first, proj_size, h0 given or not") {
  manual_seed(21);
  const std::int64_t L = 4, N = 3, I = 5, H = 4, P = 3;
  const Tensor x = randn({L, N, I}, float64);
  for (bool bidir : {false, true})
    for (bool bf : {false, true})
      for (bool bias : {true, false}) {
        CAPTURE(bidir);
        CAPTURE(bf);
        CAPTURE(bias);
        const std::int64_t D = bidir ? 2 : 1;
        const Tensor h0 = randn({2 * D, N, H}, float64), c0 = randn({2 * D, N, H}, float64);
        const Tensor hp = randn({2 * D, N, P}, float64);
        auto opts = nn::RNNOptions(I, H).num_layers(2).bidirectional(bidir).batch_first(bf).bias(bias).dtype(float64);
        for (const char* act : {"tanh", "relu"}) {
          CAPTURE(act);
          nn::RNN rnn(nn::RNNOptions(opts).nonlinearity(act));
          const M mode = std::string(act) == "relu" ? M::relu : M::tanh;
          check_layer(mode, rnn, x, h0, Tensor());
          check_layer(mode, rnn, x, Tensor(), Tensor());
        }
        nn::GRU gru(opts);
        check_layer(M::gru, gru, x, h0, Tensor());
        check_layer(M::gru, gru, x, Tensor(), Tensor());
        nn::LSTM lstm(opts);
        check_layer(M::lstm, lstm, x, h0, c0);
        check_layer(M::lstm, lstm, x, Tensor(), Tensor());
        check_layer(M::lstm, lstm, x, h0, Tensor());  // either state may be absent
        nn::LSTM lstmp(nn::LSTMOptions(opts).proj_size(P));
        check_layer(M::lstm, lstmp, x, hp, c0);
        check_layer(M::lstm, lstmp, x, Tensor(), Tensor());
      }
}

TEST_CASE("RNN, LSTM, GRU: unbatched input equals the batch of one; one layer; Sequential") {
  manual_seed(22);
  const std::int64_t L = 5, I = 3, H = 4;
  const Tensor x = randn({L, 1, I}, float64);
  nn::LSTM lstm(nn::LSTMOptions(I, H).num_layers(2).bidirectional(true).proj_size(2).dtype(float64));
  const Tensor h0 = randn({4, 1, 2}, float64), c0 = randn({4, 1, H}, float64);
  auto [ob, st] = lstm.forward(x, {h0, c0});
  auto [ou, su] = lstm.forward(x.squeeze(1), {h0.squeeze(1), c0.squeeze(1)});
  CHECK(ou.shape() == Shape{L, 4});
  CHECK(su.first.shape() == Shape{4, 2});
  CHECK(su.second.shape() == Shape{4, H});
  check_close(ou, vals(ob));
  check_close(su.first, vals(st.first));
  check_close(su.second, vals(st.second));
  // batch_first does not apply to unbatched input (torch)
  nn::GRU gru(nn::GRUOptions(I, H).batch_first(true).dtype(float64));
  const Tensor u = gru.forward(x.squeeze(1));
  CHECK(u.shape() == Shape{L, H});
  check_close(u, ref_layers(M::gru, x, Tensor(), Tensor(), gru.flat_weights(), true, 1, false, false).out);
  nn::RNN rnn(I, H);  // float32, one layer
  const Tensor x32 = x.to(float32);
  auto [o32, h32] = rnn.forward(x32, {});
  CHECK(o32.dtype() == float32);
  G p64;
  for (const auto& p : rnn.flat_weights()) p64.push_back(p.detach().to(float64));
  check_close(o32.detach(), ref_layers(M::tanh, x, Tensor(), Tensor(), p64, true, 1, false, false).out, 1e-5);
  nn::Sequential seq({std::make_shared<nn::LSTM>(nn::LSTMOptions(I, H).dtype(float64)), std::make_shared<nn::Identity>()});
  const auto first = seq.at<nn::LSTM>(0);
  check_close(seq.forward(x), ref_layers(M::lstm, x, Tensor(), Tensor(), first->flat_weights(), true, 1, false, false).out);
}

TEST_CASE("RNN, LSTM, GRU: parameter names and shapes as torch's, initialisation, state_dict, repr") {
  manual_seed(23);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  const std::vector<std::string> want = {
      "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_hr_l0_reverse",
      "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse", "weight_hr_l1_reverse"};
  CHECK(names_of(lstm) == want);
  CHECK(lstm.flat_weights_names() == want);
  const auto sd = lstm.state_dict();
  CHECK(sd.at("weight_ih_l0").shape() == Shape{16, 3});
  CHECK(sd.at("weight_hh_l0").shape() == Shape{16, 2});
  CHECK(sd.at("bias_ih_l0").shape() == Shape{16});
  CHECK(sd.at("weight_hr_l0").shape() == Shape{2, 4});
  CHECK(sd.at("weight_ih_l1").shape() == Shape{16, 4});  // D * proj_size
  CHECK(sd.at("weight_ih_l1_reverse").shape() == Shape{16, 4});
  nn::LSTM other(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  other.load_state_dict(sd);
  CHECK(vals(other.flat_weights()[7].detach()) == vals(lstm.flat_weights()[7].detach()));

  nn::GRU gru(nn::GRUOptions(3, 6).num_layers(2).bias(false));
  CHECK(names_of(gru) == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "weight_ih_l1", "weight_hh_l1"});
  CHECK(gru.flat_weights()[0].shape() == Shape{18, 3});
  CHECK(gru.flat_weights()[2].shape() == Shape{18, 6});
  nn::RNN rnn(nn::RNNOptions(3, 6).bidirectional(true));
  CHECK(names_of(rnn) == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                                   "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                                   "bias_hh_l0_reverse"});
  for (const nn::RNNBase* m : {static_cast<const nn::RNNBase*>(&lstm), static_cast<const nn::RNNBase*>(&gru),
                               static_cast<const nn::RNNBase*>(&rnn)}) {
    const double b = 1.0 / std::sqrt(static_cast<double>(m->options.hidden_size()));
    for (const auto& p : m->parameters()) {
      CHECK(p.dtype() == float32);
      CHECK(p.requires_grad());
      const Tensor a = p.detach().abs();
      CHECK(a.max().item<double>() <= b);
      CHECK(a.max().item<double>() > b / 4);
    }
  }
  std::ostringstream os;
  os << lstm << "\n" << nn::GRU(nn::GRUOptions(3, 6).batch_first(true).dropout(0.25).num_layers(2));
  CHECK(os.str().find("LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=true)") != std::string::npos);
  CHECK(os.str().find("GRU(3, 6, num_layers=2, batch_first=true, dropout=0.25)") != std::string::npos);
}

TEST_CASE("RNN, LSTM, GRU: dropout between layers (training statistics, eval deterministic, last layer untouched)") {
  manual_seed(24);
  const std::int64_t L = 40, N = 25, H = 8;
  const double p = 0.3;
  // Layer 0: relu with positive weights on a positive input, so its outputs are positive. Layer 1: relu of the
  // identity of its input (w_hh = 0, no bias), so the output is relu(dropout(layer 0)) = mask * out0 / (1 - p).
  const Tensor x = rand({L, N, H}, float64) + 0.1;
  const Tensor w0 = rand({H, H}, float64) + 0.1, wh0 = rand({H, H}, float64) * 0.1;
  const Tensor eye_w = eye(H, std::nullopt, float64), zero_w = zeros({H, H}, float64);
  const auto [out0, h0] = F::rnn_relu(x, Tensor(), {w0, wh0}, false, 1, 0.0, false, false, false);
  const auto [eval_out, eval_h] = F::rnn_relu(x, Tensor(), {w0, wh0, eye_w, zero_w}, false, 2, p, false, false, false);
  check_close(eval_out, vals(out0));  // train = false: no dropout
  const auto [tr_out, tr_h] = F::rnn_relu(x, Tensor(), {w0, wh0, eye_w, zero_w}, false, 2, p, true, false, false);
  const Vec a = vals(out0), b = vals(tr_out);
  std::size_t zeros_seen = 0, bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i] > 0);
    if (b[i] == 0.0) ++zeros_seen;
    else if (std::abs(b[i] - a[i] / (1 - p)) > 1e-12 * a[i]) ++bad;
  }
  CHECK(bad == 0);
  const double n = static_cast<double>(a.size()), frac = static_cast<double>(zeros_seen) / n;
  CHECK(std::abs(frac - p) < 4 * std::sqrt(p * (1 - p) / n));
  // The module uses its training flag; eval gives the reference without dropout.
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5).dtype(float64));
  const Tensor xs = randn({6, 2, 3}, float64);
  lstm.eval();
  const Tensor e1 = lstm.forward(xs), e2 = lstm.forward(xs);
  check_close(e1, vals(e2));
  check_close(e1, ref_layers(M::lstm, xs, Tensor(), Tensor(), lstm.flat_weights(), true, 2, false, false).out);
  lstm.train();
  manual_seed(1);
  const Tensor t1 = lstm.forward(xs);
  manual_seed(2);
  const Tensor t2 = lstm.forward(xs);
  CHECK((t1 - t2).detach().abs().max().item<double>() > 1e-6);  // different masks
  // one layer: dropout never applies
  nn::GRU g1(nn::GRUOptions(3, 4).dropout(0.9).dtype(float64));
  check_close(g1.forward(xs), ref_layers(M::gru, xs, Tensor(), Tensor(), g1.flat_weights(), true, 1, false, false).out);
}

TEST_CASE("RNN, GRU: gradcheck in float64 (2 layers, bidirectional, h0, batch_first)") {
  manual_seed(25);
  const std::int64_t L = 3, N = 2, I = 2, H = 2;
  auto params = [](const nn::RNNBase& m) { return leaves(m.flat_weights()); };
  const Tensor x = randn({L, N, I}, float64);
  {
    nn::RNN rnn(nn::RNNOptions(I, H).num_layers(2).bidirectional(true).dtype(float64));
    G in = params(rnn);
    in.insert(in.begin(), {x.clone().requires_grad_(), randn({4, N, H}, float64).requires_grad_()});
    CHECK(autodiff::gradcheck([](const G& a) {
      auto [o, h] = F::rnn_tanh(a[0], a[1], G(a.begin() + 2, a.end()), true, 2, 0.0, false, true, false);
      return G{o, h};
    }, in));
    CHECK(autodiff::gradcheck([](const G& a) {
      return F::rnn_relu(a[0], Tensor(), G(a.begin() + 2, a.end()), true, 2, 0.0, false, true, false).first;
    }, in));
  }
  {
    nn::GRU gru(nn::GRUOptions(I, H).num_layers(2).bidirectional(true).dtype(float64));
    G in = params(gru);
    in.insert(in.begin(), {x.transpose(0, 1).contiguous().requires_grad_(), randn({4, N, H}, float64).requires_grad_()});
    CHECK(autodiff::gradcheck([](const G& a) {
      auto [o, h] = F::gru(a[0], a[1], G(a.begin() + 2, a.end()), true, 2, 0.0, false, true, /*batch_first=*/true);
      return G{o, h};
    }, in));
  }
}

TEST_CASE("LSTM: gradcheck in float64 (2 layers, bidirectional, h0 and c0, proj_size; unbatched, no bias)") {
  manual_seed(26);
  const std::int64_t L = 3, N = 2, I = 2, H = 2;
  auto params = [](const nn::RNNBase& m) { return leaves(m.flat_weights()); };
  const Tensor x = randn({L, N, I}, float64);
  {
    nn::LSTM lstm(nn::LSTMOptions(I, 3).num_layers(2).bidirectional(true).proj_size(H).dtype(float64));
    G in = params(lstm);
    in.insert(in.begin(), {x.clone().requires_grad_(), randn({4, N, H}, float64).requires_grad_(),
                           randn({4, N, 3}, float64).requires_grad_()});
    CHECK(autodiff::gradcheck([](const G& a) {
      auto [o, h, c] = F::lstm(a[0], {a[1], a[2]}, G(a.begin() + 3, a.end()), true, 2, 0.0, false, true, false);
      return G{o, h, c};
    }, in));
  }
  {
    nn::LSTM lstm(nn::LSTMOptions(I, H).num_layers(1).bias(false).dtype(float64));
    G in = params(lstm);
    in.insert(in.begin(), x.select(1, 0).clone().requires_grad_());  // unbatched
    CHECK(autodiff::gradcheck([](const G& a) {
      auto [o, h, c] = F::lstm(a[0], {}, G(a.begin() + 1, a.end()), false, 1, 0.0, false, false, false);
      return G{o, h, c};
    }, in));
    CHECK(autodiff::gradgradcheck([](const G& a) {
      return std::get<0>(F::lstm(a[0], {}, G(a.begin() + 1, a.end()), false, 1, 0.0, false, false, false));
    }, in));
  }
  // The module's parameters receive gradients.
  nn::GRU gru(nn::GRUOptions(I, H).dtype(float64));
  gru.forward(x).sum().backward();
  for (const auto& p : gru.parameters()) CHECK(p.grad().defined());
}

TEST_CASE("RNN, LSTM, GRU: variable lengths equal each sequence run alone (2 layers, bidirectional, batch_first)") {
  manual_seed(27);
  const std::int64_t L = 5, N = 4, I = 3, H = 4, P = 2;
  const std::vector<std::int64_t> lengths = {5, 2, 4, 1};
  const Tensor x = randn({L, N, I}, float64);
  for (bool bf : {false, true}) {
    CAPTURE(bf);
    const auto opts = nn::RNNOptions(I, H).num_layers(2).bidirectional(true).batch_first(bf).dtype(float64);
    nn::GRU gru(opts);
    nn::LSTM lstm(nn::LSTMOptions(opts).proj_size(P));
    nn::RNN rnn(nn::RNNOptions(opts).nonlinearity("relu"));
    const Tensor h0 = randn({4, N, H}, float64), hp = randn({4, N, P}, float64), c0 = randn({4, N, H}, float64);
    const Tensor xin = bf ? x.transpose(0, 1).contiguous() : x;
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(kind);
      const M mode = kind == 0 ? M::gru : kind == 1 ? M::lstm : M::relu;
      nn::RNNBase& m = kind == 0 ? static_cast<nn::RNNBase&>(gru) : kind == 1 ? static_cast<nn::RNNBase&>(lstm)
                                                                              : static_cast<nn::RNNBase&>(rnn);
      const std::int64_t Hout = kind == 1 ? P : H;
      const Tensor hx = kind == 1 ? hp : h0;
      Tensor out, hn, cn;
      if (kind == 1) {
        auto r = lstm.forward(xin, {hx, c0}, lengths);
        out = r.first;
        hn = r.second.first;
        cn = r.second.second;
      } else if (kind == 0) {
        std::tie(out, hn) = gru.forward(xin, hx, lengths);
      } else {
        std::tie(out, hn) = rnn.forward(xin, hx, lengths);
      }
      if (bf) out = out.transpose(0, 1);
      // reference: each sequence alone, cut to its length; zeros past its end
      Vec want_out(static_cast<std::size_t>(L * N * 2 * Hout), 0.0), want_h(static_cast<std::size_t>(4 * N * Hout)),
          want_c(static_cast<std::size_t>(4 * N * H));
      for (std::int64_t n = 0; n < N; ++n) {
        const std::int64_t len = lengths[static_cast<std::size_t>(n)];
        const Tensor xn = x.narrow(0, 0, len).narrow(1, n, 1).contiguous();
        const RefOut r = ref_layers(mode, xn, hx.narrow(1, n, 1).contiguous(), kind == 1 ? c0.narrow(1, n, 1).contiguous() : Tensor(),
                                    m.flat_weights(), true, 2, true, kind == 1);
        for (std::int64_t t = 0; t < len; ++t)
          for (std::int64_t j = 0; j < 2 * Hout; ++j) want_out[static_cast<std::size_t>((t * N + n) * 2 * Hout + j)] = r.out[static_cast<std::size_t>(t * 2 * Hout + j)];
        for (std::int64_t g = 0; g < 4; ++g) {
          for (std::int64_t j = 0; j < Hout; ++j) want_h[static_cast<std::size_t>((g * N + n) * Hout + j)] = r.hn[static_cast<std::size_t>(g * Hout + j)];
          for (std::int64_t j = 0; j < H; ++j) want_c[static_cast<std::size_t>((g * N + n) * H + j)] = r.cn[static_cast<std::size_t>(g * H + j)];
        }
      }
      check_close(out.detach(), want_out);
      check_close(hn.detach(), want_h);
      if (kind == 1) check_close(cn.detach(), want_c);
    }
  }
  // all full length: the same as no lengths; unbatched with one length
  nn::LSTM lstm(nn::LSTMOptions(I, H).dtype(float64));
  check_close(lstm.forward(x, {}, {5, 5, 5, 5}).first.detach(), vals(lstm.forward(x).detach()));
  const Tensor u = lstm.forward(x.select(1, 0), {}, {3}).first.detach();
  check_close(u.narrow(0, 0, 3), vals(lstm.forward(x.select(1, 0).narrow(0, 0, 3)).detach()));
  check_close(u.narrow(0, 3, 2), Vec(2 * H, 0.0));
  // gradients
  const G in = leaves({randn({3, 2, 2}, float64), randn({6, 2}, float64), randn({6, 2}, float64), randn({6}, float64),
                       randn({6}, float64)});
  CHECK(autodiff::gradcheck([](const G& a) {
    auto [o, h] = F::gru(a[0], Tensor(), G(a.begin() + 1, a.end()), true, 1, 0.0, false, false, false, {1, 3});
    return G{o, h};
  }, in));
}

// ---- errors ---------------------------------------------------------------------------------------

TEST_CASE("pad_sequence and unpad_sequence") {
  namespace R = nn::utils::rnn;
  manual_seed(41);
  const std::vector<Tensor> seqs = {randn({3, 2}, float64), randn({1, 2}, float64), randn({4, 2}, float64)};
  const std::vector<std::int64_t> lens = {3, 1, 4};
  for (bool batch_first : {false, true})
    for (const char* side : {"right", "left"}) {
      CAPTURE(batch_first);
      CAPTURE(side);
      const Tensor p = R::pad_sequence(seqs, batch_first, -7.0, side);
      REQUIRE(p.shape() == (batch_first ? Shape{3, 4, 2} : Shape{4, 3, 2}));
      // element (t, b, f): sequence b's step t (shifted by the padding on the left), else the padding value
      const bool left = std::string(side) == "left";
      int bad = 0;
      for (std::int64_t b = 0; b < 3; ++b) {
        const auto sv = to_vector<double>(seqs[static_cast<std::size_t>(b)]);
        const std::int64_t len = lens[static_cast<std::size_t>(b)], shift = left ? 4 - len : 0;
        for (std::int64_t t = 0; t < 4; ++t)
          for (std::int64_t f = 0; f < 2; ++f) {
            const double got = (batch_first ? p.select(0, b).select(0, t) : p.select(0, t).select(0, b)).select(0, f).item<double>();
            const std::int64_t st = t - shift;
            const double want = st >= 0 && st < len ? sv[static_cast<std::size_t>(st * 2 + f)] : -7.0;
            bad += got != want;
          }
      }
      CHECK(bad == 0);
    }
  // unpad gives the sequences back (views of the batch)
  const Tensor p = R::pad_sequence(seqs, true);
  const auto back = R::unpad_sequence(p, lens, true);
  REQUIRE(back.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(to_vector<double>(back[i]) == to_vector<double>(seqs[i]));
  CHECK(R::unpad_sequence(R::pad_sequence(seqs), lens)[2].shape() == Shape{4, 2});
  // with lengths, the padded batch runs the variable-length LSTM
  nn::LSTM lstm(nn::LSTMOptions(2, 3).batch_first(true).dtype(float64));
  const Tensor out = lstm.forward(p, {}, lens).first;
  for (std::size_t i = 0; i < 3; ++i) {
    const Tensor alone = lstm.forward(seqs[i].unsqueeze(0), {}).first.select(0, 0);
    CHECK((out.select(0, static_cast<std::int64_t>(i)).narrow(0, 0, lens[i]) - alone).abs().max().item<double>() < 1e-14);
  }
  // dtypes promote; 1-d sequences; gradients reach every sequence
  CHECK(R::pad_sequence({from_vector(std::vector<std::int64_t>{1, 2}), from_vector(std::vector<double>{3})}).dtype() == Dtype::Float64);
  CHECK(R::pad_sequence({randn({2}), randn({3})}).shape() == Shape{3, 2});
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return R::pad_sequence(in, false, 0.5, "left").square(); },
                            {randn({2, 2}, float64).requires_grad_(), randn({3, 2}, float64).requires_grad_()}));
  // errors
  CHECK_THROWS_WITH_AS(R::pad_sequence({}), doctest::Contains("[pad_sequence] expected a non-empty list of sequences"), Error);
  CHECK_THROWS_WITH_AS(R::pad_sequence({randn({2, 3}), randn({2, 4})}),
                       doctest::Contains("[pad_sequence] sequences must be (L_i, *) with the same trailing dims, got (2, 3) and (2, 4) at entry 1"), Error);
  CHECK_THROWS_WITH_AS(R::pad_sequence({full({}, 1.0)}), doctest::Contains("[pad_sequence] sequences must be (L_i, *)"), Error);
  CHECK_THROWS_WITH_AS(R::pad_sequence(seqs, false, 0.0, "middle"), doctest::Contains("[pad_sequence] padding_side must be \"right\" or \"left\""), Error);
  CHECK_THROWS_AS(R::pad_sequence({from_vector(std::vector<std::int64_t>{1}), from_vector(std::vector<std::int64_t>{1, 2})}, false, 1e30),
                  Error);  // a padding value int64 can't hold
  CHECK_THROWS_WITH_AS(R::unpad_sequence(p, {3, 1}, true), doctest::Contains("[unpad_sequence] expected one length per sequence (3 in the batch of shape (3, 4, 2)), got 2"), Error);
  CHECK_THROWS_WITH_AS(R::unpad_sequence(p, {3, 5, 1}, true), doctest::Contains("[unpad_sequence] length 5 of sequence 1 is outside [0, 4]"), Error);
  CHECK_THROWS_WITH_AS(R::unpad_sequence(randn({3}), {1}), doctest::Contains("[unpad_sequence] expected a padded batch of at least 2 dims"), Error);
}

TEST_CASE("rnn errors name the op or layer and the offending values") {
  using doctest::Contains;
  // options
  CHECK_THROWS_WITH_AS(nn::RNN(nn::RNNOptions(3, 4).dropout(1.5)),
                       "[RNN] dropout must be a probability in [0, 1], got 1.500000", Error);
  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).dropout(-0.1)),
                       "[LSTM] dropout must be a probability in [0, 1], got -0.100000", Error);
  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)), "[LSTM] proj_size 4 must be smaller than hidden_size 4",
                       Error);
  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(-1)), "[LSTM] proj_size must be >= 0, got -1", Error);
  CHECK_THROWS_WITH_AS(nn::GRU(nn::GRUOptions(3, 4).proj_size(2)), "[GRU] proj_size is supported by LSTM only, got 2", Error);
  CHECK_THROWS_WITH_AS(nn::GRU(nn::GRUOptions(3, 4).num_layers(0)), "[GRU] num_layers must be >= 1, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::RNN(nn::RNNOptions(3, 4).nonlinearity("sigmoid")),
                       "[RNN] unknown nonlinearity 'sigmoid' (expected 'tanh' or 'relu')", Error);
  CHECK_THROWS_WITH_AS(nn::RNNCell(3, 4, true, "gelu"), "[RNNCell] unknown nonlinearity 'gelu' (expected 'tanh' or 'relu')",
                       Error);
  CHECK_THROWS_WITH_AS(nn::GRUCell(3, 0), "[GRUCell] hidden_size must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).dtype(int64)), "[LSTM] parameter dtype must be float32 or float64, got int64",
                       Error);
  // layer inputs and states
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  CHECK_THROWS_WITH_AS(lstm.forward(randn({2, 3, 4, 3})), "[LSTM] expected a 2-D (unbatched) or 3-D (batched) input, got (2, 3, 4, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(lstm.forward(randn({5, 2, 4})), "[LSTM] expected input with 3 features in the last dim, got (5, 2, 4)",
                       Error);
  CHECK_THROWS_WITH_AS(lstm.forward(randn({5, 2, 3}), {randn({2, 3, 4}), Tensor()}),
                       "[LSTM] expected h0 of shape (2, 2, 4) for input (5, 2, 3), got (2, 3, 4)", Error);
  CHECK_THROWS_WITH_AS(lstm.forward(randn({5, 2, 3}), {randn({2, 2, 4}), randn({2, 4})}),
                       "[LSTM] expected c0 of shape (2, 2, 4) for input (5, 2, 3), got (2, 4)", Error);
  CHECK_THROWS_WITH_AS(lstm.forward(randn({5, 3}), {randn({2, 1, 4}), Tensor()}),
                       "[LSTM] expected h0 of shape (2, 4) for input (5, 3), got (2, 1, 4)", Error);
  nn::GRU gru(nn::GRUOptions(3, 4).batch_first(true).bidirectional(true));
  CHECK_THROWS_WITH_AS(gru.forward(randn({2, 5, 3}), randn({2, 5, 4})),
                       "[GRU] expected h0 of shape (2, 2, 4) for input (2, 5, 3), got (2, 5, 4)", Error);
  CHECK_THROWS_WITH_AS(gru.forward(randn({2, 5, 3}, float64)), "[gru] weight_ih_l0 dtype float32 differs from the input's float64",
                       Error);
  nn::RNN rnn(3, 4);
  CHECK_THROWS_WITH_AS(rnn.forward(randn({0, 2, 3})), "[rnn_tanh] expected a sequence length of at least 1, got input (0, 2, 3)",
                       Error);
  // cells
  nn::LSTMCell cell(3, 4);
  CHECK_THROWS_WITH_AS(cell.forward(randn({2, 5})), "[LSTMCell] expected input with 3 features in the last dim, got (2, 5)", Error);
  CHECK_THROWS_WITH_AS(cell.forward(randn({2, 3}), {randn({2, 4}), randn({3, 4})}),
                       "[LSTMCell] expected c of shape (2, 4) for input (2, 3), got (3, 4)", Error);
  CHECK_THROWS_WITH_AS(nn::RNNCell(3, 4).forward(randn({2, 2, 3})),
                       "[RNNCell] expected a 1-D (unbatched) or 2-D (batched) input, got (2, 2, 3)", Error);
  CHECK_THROWS_WITH_AS(nn::GRUCell(3, 4).forward(randn({2, 3}), randn({4})),
                       "[GRUCell] expected hx of shape (2, 4) for input (2, 3), got (4,)", Error);
  // functional forms
  CHECK_THROWS_WITH_AS(F::gru_cell(randn({2, 3}), Tensor(), randn({12, 3}), randn({4, 4})),
                       "[gru_cell] expected w_hh of shape (12, 4), got (4, 4)", Error);
  CHECK_THROWS_WITH_AS(F::rnn_tanh_cell(randn({2, 3}), Tensor(), randn({4, 2}), randn({4, 4})),
                       "[rnn_tanh_cell] expected w_ih of shape (4, 3), got (4, 2)", Error);
  CHECK_THROWS_WITH_AS(F::lstm_cell(randn({2, 3}), {}, randn({16, 3}), randn({16, 4}), randn({15})),
                       "[lstm_cell] expected b_ih of shape (16,), got (15,)", Error);
  CHECK_THROWS_WITH_AS(F::lstm_cell(zeros({2, 3}, int64), {}, randn({16, 3}), randn({16, 4})),
                       "[lstm_cell] expected a float32 or float64 input, got int64", Error);
  CHECK_THROWS_WITH_AS(F::gru(randn({5, 2, 3}), Tensor(), {randn({12, 3}), randn({12, 4})}, true, 1, 0.0, false, false, false),
                       "[gru] expected 4 parameters for 1 layer(s), 1 direction(s) with biases, got 2", Error);
  CHECK_THROWS_WITH_AS(F::lstm(randn({5, 2, 3}), {}, {randn({16, 3}), randn({16, 4})}, false, 2, 0.0, false, false, false),
                       "[lstm] expected 4 or 6 parameters for 2 layer(s), 1 direction(s) without biases, got 2", Error);
  CHECK_THROWS_WITH_AS(F::rnn_relu(randn({5, 2, 3}), Tensor(), {randn({4, 3}), randn({4, 4}), randn({4, 3}), randn({4, 4})},
                                   false, 2, 0.0, false, false, false),
                       "[rnn_relu] expected weight_ih_l1 of shape (4, 4), got (4, 3)", Error);
  CHECK_THROWS_WITH_AS(F::rnn_relu(randn({5, 2, 3}), Tensor(), {randn({4, 3}), randn({4, 4})}, false, 1, 2.0, true, false, false),
                       "[rnn_relu] dropout must be a probability in [0, 1], got 2.000000", Error);
  CHECK_THROWS_WITH_AS(F::rnn_relu(randn({5, 2, 3}), Tensor(), {randn({4, 3}), randn({4, 4})}, false, 0, 0.0, true, false, false),
                       "[rnn_relu] num_layers must be >= 1, got 0", Error);
  CHECK_THROWS_WITH_AS(F::lstm(randn({5, 2, 3}), {randn({1, 2, 4})}, {randn({16, 3}), randn({16, 4})}, false, 1, 0.0, false, false, false),
                       "[lstm] hx must be empty or {h0, c0}, got 1 tensors", Error);
  CHECK_THROWS_WITH_AS(nn::GRU(3, 4).forward(randn({5, 2, 3}), Tensor(), {5}),
                       "[gru] expected 2 lengths (one per sequence of input (5, 2, 3)), got 1", Error);
  CHECK_THROWS_WITH_AS(nn::GRU(3, 4).forward(randn({5, 2, 3}), Tensor(), {5, 6}),
                       "[gru] lengths must lie in [1, 5] (the sequence length of input (5, 2, 3)), got (5, 6)", Error);
  CHECK_THROWS_WITH_AS(nn::RNN(3, 4).forward(randn({5, 2, 3}), Tensor(), {0, 2}),
                       "[rnn_tanh] lengths must lie in [1, 5] (the sequence length of input (5, 2, 3)), got (0, 2)", Error);
  // a failed call changes nothing
  const Tensor before = lstm.flat_weights()[0].detach().clone();
  CHECK_THROWS_AS(lstm.forward(randn({5, 2, 4})), Error);
  CHECK(vals(lstm.flat_weights()[0].detach()) == vals(before));
}
