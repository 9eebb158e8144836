// src/nn/rnn.cpp - recurrent cells and layers (RNN, LSTM, GRU) as compositions of differentiable ops.
//
// Note [recurrent layers as compositions]
// Every cell and layer is built from matmul, sigmoid, tanh/relu, addcmul, stack, cat and one split (below), so
// gradients of any order and every device come from those ops; each public function is one composite op
// ("rnn_tanh_cell", "lstm", ...) for the profiler, the device coverage and traces. A layer direction
// multiplies the whole sequence by W_ih^T at once ((L, N, in) @ (in, G H), one gemm), with b_ih (and, but for
// GRU, b_hh: it sits outside the reset gate there) added once, then steps through time doing only
// h @ W_hh^T and the gate arithmetic; the steps' outputs are stacked once at the end. An absent initial state
// is zero: the first step then skips its hidden product (and c, h terms) instead of multiplying zeros.
// Gates follow torch's layout: LSTM rows (i, f, g, o), GRU rows (r, z, n) with
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) n + z h = n + z (h - n).
//
// Note [variable lengths]
// Instead of torch's PackedSequence, the layers take the sequences' lengths (host integers, one per batch entry,
// in [1, L]) next to a padded input. At a step t past some sequence's end, that sequence keeps its state (h, c)
// and its output is 0, as pad_packed_sequence(padding_value = 0) gives; the reverse direction thus starts at
// each sequence's own last element, and h_n holds each sequence's state at its end, as with packed input.
// Steps before the shortest length run unmasked. Finite values at padded positions never reach the results; the
// steps still compute on them (batched), so NaN or inf padding would reach the weights' gradients (0 * NaN).

#include "phasor/nn/rnn.hpp"

#include <algorithm>
#include <cmath>

#include "autodiff/node.hpp"
#include "core/promotion.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/nn/conv.hpp"
#include "phasor/nn/init.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using detail::shape_str;

namespace {

enum class Mode { tanh, relu, lstm, gru };

std::int64_t gate_count(Mode m) { return m == Mode::lstm ? 4 : m == Mode::gru ? 3 : 1; }

std::string num(std::int64_t v) { return std::to_string(v); }

// ---- one step -------------------------------------------------------------------------------------

/// h @ w_hh^T + b_hh; undefined h is zero (then b_hh alone, or undefined without it).
Tensor hidden_gates(const Tensor& h, const Tensor& w_hh_t, const Tensor& b_hh) {
  if (!h.defined()) return b_hh;
  Tensor g = matmul(h, w_hh_t);
  return b_hh.defined() ? g + b_hh : g;
}

/// xg + hg where hg may be undefined (xg is always defined).
Tensor plus(const Tensor& xg, const Tensor& hg) { return hg.defined() ? xg + hg : xg; }

/// Elman step from the input gates xg (..., H).
Tensor step_rnn(const Tensor& xg, const Tensor& h, const Tensor& w_hh_t, const Tensor& b_hh, bool relu_act) {
  const Tensor p = plus(xg, hidden_gates(h, w_hh_t, b_hh));
  return relu_act ? relu(p) : tanh(p);
}

/// LSTM step from the input gates xg (..., 4H); c updated in place of the handle; returns h' (projected by
/// w_hr_t when defined).
Tensor step_lstm(const Tensor& xg, const Tensor& h, Tensor& c, const Tensor& w_hh_t, const Tensor& b_hh,
                 const Tensor& w_hr_t) {
  const auto q = chunk(plus(xg, hidden_gates(h, w_hh_t, b_hh)), 4, -1);
  const Tensor i = sigmoid(q[0]), g = tanh(q[2]), o = sigmoid(q[3]);
  c = c.defined() ? addcmul(sigmoid(q[1]) * c, i, g) : i * g;
  const Tensor h2 = o * tanh(c);
  return w_hr_t.defined() ? matmul(h2, w_hr_t) : h2;
}

/// GRU step from the input gates xg (..., 3H) (b_ih included, b_hh not).
Tensor step_gru(const Tensor& xg, const Tensor& h, const Tensor& w_hh_t, const Tensor& b_hh) {
  const Tensor hg = hidden_gates(h, w_hh_t, b_hh);
  const auto xs = chunk(xg, 3, -1);
  Tensor r, z, n;
  if (hg.defined()) {
    const auto hs = chunk(hg, 3, -1);
    r = sigmoid(xs[0] + hs[0]);
    z = sigmoid(xs[1] + hs[1]);
    n = tanh(addcmul(xs[2], r, hs[2]));
  } else {
    z = sigmoid(xs[1]);
    n = tanh(xs[2]);
  }
  return h.defined() ? addcmul(n, z, h - n) : n - z * n;
}

// ---- checks ---------------------------------------------------------------------------------------

void check_param(const Tensor& input, const Tensor& p, const Shape& want, const char* op, const std::string& what) {
  if (!p.defined()) throw Error(op, what + " is undefined");
  if (p.shape() != want)
    throw Error(op, "expected " + what + " of shape " + shape_str(want) + ", got " + shape_str(p.shape()));
  if (p.dtype() != input.dtype())
    throw Error(op, what + " dtype " + dtype_name(p.dtype()) + " differs from the input's " + dtype_name(input.dtype()));
  if (p.device() != input.device())
    throw Error(op, "expected " + what + " on the input's device " + input.device().str() + ", got " + p.device().str());
}

void check_input_tensor(const Tensor& input, const char* op, std::int64_t min_dim, std::int64_t max_dim) {
  if (!input.defined()) throw Error(op, "input is undefined");
  if (input.dim() < min_dim || input.dim() > max_dim)
    throw Error(op, "expected a " + num(min_dim) + "-D (unbatched) or " + num(max_dim) + "-D (batched) input, got " +
                        shape_str(input.shape()));
  if (!is_floating(input.dtype()))
    throw Error(op, std::string("expected a float32 or float64 input, got ") + dtype_name(input.dtype()));
}

/// A state tensor `what` (undefined is fine) must have shape `want`.
void check_state(const Tensor& input, const Tensor& s, const Shape& want, const char* op, const char* what) {
  if (!s.defined()) return;
  if (s.shape() != want)
    throw Error(op, std::string("expected ") + what + " of shape " + shape_str(want) + " for input " +
                        shape_str(input.shape()) + ", got " + shape_str(s.shape()));
  if (s.dtype() != input.dtype())
    throw Error(op, std::string(what) + " dtype " + dtype_name(s.dtype()) + " differs from the input's " +
                        dtype_name(input.dtype()));
  if (s.device() != input.device())
    throw Error(op, std::string("expected ") + what + " on the input's device " + input.device().str() + ", got " +
                        s.device().str());
}

/// Validates a cell's operands; returns H.
std::int64_t check_cell(Mode m, const char* op, const Tensor& input, const Tensor& h, const Tensor& c,
                        const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_input_tensor(input, op, 1, 2);
  if (!w_hh.defined()) throw Error(op, "w_hh is undefined");
  if (w_hh.dim() != 2) throw Error(op, "w_hh must be 2-D (gates * hidden, hidden), got " + shape_str(w_hh.shape()));
  const std::int64_t G = gate_count(m), H = w_hh.size(1);
  check_param(input, w_hh, {G * H, H}, op, "w_hh");
  check_param(input, w_ih, {G * H, input.size(-1)}, op, "w_ih");
  if (b_ih.defined()) check_param(input, b_ih, {G * H}, op, "b_ih");
  if (b_hh.defined()) check_param(input, b_hh, {G * H}, op, "b_hh");
  Shape hs = input.shape();
  hs.back() = H;
  check_state(input, h, hs, op, m == Mode::lstm ? "h" : "hx");
  check_state(input, c, hs, op, "c");
  return H;
}

Tensor simple_cell(Mode m, const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                   const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell(m, op, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
  std::vector<Tensor> ins{input, w_ih, w_hh};
  for (const Tensor* t : {&hx, &b_ih, &b_hh})
    if (t->defined()) ins.push_back(*t);
  return detail::composite(op, ins, [&] {
    Tensor xg = matmul(input, w_ih.t());
    if (b_ih.defined()) xg = xg + b_ih;
    return m == Mode::gru ? step_gru(xg, hx, w_hh.t(), b_hh) : step_rnn(xg, hx, w_hh.t(), b_hh, m == Mode::relu);
  });
}

// ---- layers ---------------------------------------------------------------------------------------

const char* mode_op(Mode m) {
  switch (m) {
    case Mode::tanh: return "rnn_tanh";
    case Mode::relu: return "rnn_relu";
    case Mode::lstm: return "lstm";
    case Mode::gru: return "gru";
  }
  return "?";
}

/// The whole multi-layer recurrence: {output, h_n} (and c_n for LSTM).
std::vector<Tensor> run_layers(Mode m, const Tensor& input, const Tensor& h0, const Tensor& c0,
                               const std::vector<Tensor>& params, bool has_biases, std::int64_t num_layers,
                               double dropout, bool train, bool bidirectional, bool batch_first,
                               const std::vector<std::int64_t>& lengths) {
  const char* op = mode_op(m);
  check_input_tensor(input, op, 2, 3);
  if (num_layers < 1) throw Error(op, "num_layers must be >= 1, got " + num(num_layers));
  if (!(dropout >= 0.0 && dropout <= 1.0))
    throw Error(op, "dropout must be a probability in [0, 1], got " + std::to_string(dropout));
  const bool batched = input.dim() == 3;
  const std::int64_t D = bidirectional ? 2 : 1, G = gate_count(m);
  const std::int64_t base = has_biases ? 4 : 2;
  const std::int64_t groups = num_layers * D;
  const auto np = static_cast<std::int64_t>(params.size());
  bool proj = false;
  if (np != groups * base) {
    if (m == Mode::lstm && np == groups * (base + 1))
      proj = true;
    else
      throw Error(op, "expected " + num(groups * base) + (m == Mode::lstm ? " or " + num(groups * (base + 1)) : "") +
                          " parameters for " + num(num_layers) + " layer(s), " + num(D) + " direction(s)" +
                          (has_biases ? " with" : " without") + " biases, got " + num(np));
  }
  const std::int64_t per = base + (proj ? 1 : 0);
  if (!params[0].defined()) throw Error(op, "parameter 0 (w_ih of layer 0) is undefined");
  if (params[0].dim() != 2 || params[0].size(0) % G != 0)
    throw Error(op, "w_ih of layer 0 must be 2-D with a multiple of " + num(G) + " rows, got " +
                        shape_str(params[0].shape()));
  const std::int64_t H = params[0].size(0) / G;
  std::int64_t H_out = H;
  if (proj) {
    const Tensor& w_hr = params[static_cast<std::size_t>(per - 1)];
    if (!w_hr.defined() || w_hr.dim() != 2)
      throw Error(op, "w_hr of layer 0 must be 2-D (proj_size, hidden_size), got " +
                          (w_hr.defined() ? shape_str(w_hr.shape()) : std::string("undefined")));
    H_out = w_hr.size(0);
  }
  for (std::int64_t k = 0; k < num_layers; ++k)
    for (std::int64_t d = 0; d < D; ++d) {
      const std::size_t at = static_cast<std::size_t>((k * D + d) * per);
      const std::string sfx = "_l" + num(k) + (d == 1 ? "_reverse" : "");
      const std::int64_t in = k == 0 ? input.size(-1) : D * H_out;
      check_param(input, params[at], {G * H, in}, op, "weight_ih" + sfx);
      check_param(input, params[at + 1], {G * H, H_out}, op, "weight_hh" + sfx);
      if (has_biases) {
        check_param(input, params[at + 2], {G * H}, op, "bias_ih" + sfx);
        check_param(input, params[at + 3], {G * H}, op, "bias_hh" + sfx);
      }
      if (proj) check_param(input, params[at + static_cast<std::size_t>(per) - 1], {H_out, H}, op, "weight_hr" + sfx);
    }
  const std::int64_t L = input.size(batched && batch_first ? 1 : 0);
  const std::int64_t N = batched ? input.size(batch_first ? 0 : 1) : 1;
  if (L < 1) throw Error(op, "expected a sequence length of at least 1, got input " + shape_str(input.shape()));
  const Shape hs = batched ? Shape{groups, N, H_out} : Shape{groups, H_out};
  const Shape cs = batched ? Shape{groups, N, H} : Shape{groups, H};
  check_state(input, h0, hs, op, m == Mode::lstm ? "h0" : "hx");
  check_state(input, c0, cs, op, "c0");
  std::int64_t min_len = L;
  if (!lengths.empty()) {
    if (static_cast<std::int64_t>(lengths.size()) != N)
      throw Error(op, "expected " + num(N) + " lengths (one per sequence of input " + shape_str(input.shape()) +
                          "), got " + num(static_cast<std::int64_t>(lengths.size())));
    for (auto len : lengths)
      if (len < 1 || len > L)
        throw Error(op, "lengths must lie in [1, " + num(L) + "] (the sequence length of input " +
                            shape_str(input.shape()) + "), got " + shape_str(lengths));
    for (auto len : lengths) min_len = std::min(min_len, len);
  }

  std::vector<Tensor> ins{input};
  if (h0.defined()) ins.push_back(h0);
  if (c0.defined()) ins.push_back(c0);
  ins.insert(ins.end(), params.begin(), params.end());
  return detail::composite(op, ins, [&] {
    const Tensor x = batched ? (batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
    const Tensor h0b = h0.defined() && !batched ? h0.unsqueeze(1) : h0;
    const Tensor c0b = c0.defined() && !batched ? c0.unsqueeze(1) : c0;
    std::vector<Tensor> hn, cn, outs(static_cast<std::size_t>(L)), dir_out, masks;
    if (min_len < L) {  // masks[t] (N, 1): sequences still running at step t (Note [variable lengths])
      const Tensor len = from_vector(lengths, Shape{1, N, 1}, x.device());
      masks = unbind(arange(L, Dtype::Int64, x.device()).reshape({L, 1, 1}) < len, 0);
    }
    Tensor layer_in = x;
    for (std::int64_t k = 0; k < num_layers; ++k) {
      dir_out.clear();
      for (std::int64_t d = 0; d < D; ++d) {
        const std::int64_t g = k * D + d;
        const Tensor* p = &params[static_cast<std::size_t>(g * per)];
        const Tensor b_ih = has_biases ? p[2] : Tensor(), b_hh = has_biases ? p[3] : Tensor();
        const Tensor w_hh_t = p[1].t(), w_hr_t = proj ? p[per - 1].t() : Tensor();
        // Input projection of the whole sequence (Note [recurrent layers as compositions]).
        Tensor xg = matmul(layer_in, p[0].t());
        if (has_biases) xg = xg + (m == Mode::gru ? b_ih : b_ih + b_hh);
        const Tensor b_step = m == Mode::gru ? b_hh : Tensor();
        const std::vector<Tensor> xs = unbind(xg, 0);  // one op, one cat in backward (Note [split gradients])
        Tensor h = h0b.defined() ? h0b.select(0, g) : Tensor();
        Tensor c = c0b.defined() ? c0b.select(0, g) : Tensor();
        for (std::int64_t s = 0; s < L; ++s) {
          const std::size_t t = static_cast<std::size_t>(d == 0 ? s : L - 1 - s);
          const Tensor h_prev = h, c_prev = c;
          switch (m) {
            case Mode::lstm: h = step_lstm(xs[t], h, c, w_hh_t, b_step, w_hr_t); break;
            case Mode::gru: h = step_gru(xs[t], h, w_hh_t, b_step); break;
            default: h = step_rnn(xs[t], h, w_hh_t, b_step, m == Mode::relu);
          }
          if (static_cast<std::int64_t>(t) >= min_len) {  // some sequences have ended: they keep their state
            const Tensor& run = masks[t];
            outs[t] = where(run, h, Scalar(0.0));
            h = h_prev.defined() ? where(run, h, h_prev) : outs[t];
            if (m == Mode::lstm) c = c_prev.defined() ? where(run, c, c_prev) : where(run, c, Scalar(0.0));
          } else {
            outs[t] = h;
          }
        }
        dir_out.push_back(stack(outs, 0));
        hn.push_back(h);
        if (m == Mode::lstm) cn.push_back(c);
      }
      layer_in = D == 2 ? cat(dir_out, 2) : dir_out[0];
      if (train && dropout > 0.0 && k + 1 < num_layers) layer_in = functional::dropout(layer_in, dropout, true);
    }
    Tensor output = batched ? (batch_first ? layer_in.transpose(0, 1) : layer_in) : layer_in.squeeze(1);
    Tensor h_n = stack(hn, 0);
    std::vector<Tensor> r{output, batched ? h_n : h_n.squeeze(1)};
    if (m == Mode::lstm) {
      Tensor c_n = stack(cn, 0);
      r.push_back(batched ? c_n : c_n.squeeze(1));
    }
    return r;
  });
}

}  // namespace

// ---- functional -----------------------------------------------------------------------------------

namespace functional {

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return simple_cell(Mode::tanh, "rnn_tanh_cell", input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return simple_cell(Mode::relu, "rnn_relu_cell", input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return simple_cell(Mode::gru, "gru_cell", input, hx, w_ih, w_hh, b_ih, b_hh);
}

std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const std::pair<Tensor, Tensor>& hx, const Tensor& w_ih,
                                    const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const char* op = "lstm_cell";
  check_cell(Mode::lstm, op, input, hx.first, hx.second, w_ih, w_hh, b_ih, b_hh);
  std::vector<Tensor> ins{input, w_ih, w_hh};
  for (const Tensor* t : {&hx.first, &hx.second, &b_ih, &b_hh})
    if (t->defined()) ins.push_back(*t);
  const std::vector<Tensor> r = detail::composite(op, ins, [&] {
    Tensor xg = matmul(input, w_ih.t());
    if (b_ih.defined()) xg = xg + b_ih;
    Tensor c = hx.second;
    Tensor h = step_lstm(xg, hx.first, c, w_hh.t(), b_hh, Tensor());
    return std::vector<Tensor>{h, c};
  });
  return {r[0], r[1]};
}

std::pair<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                   bool has_biases, std::int64_t num_layers, double dropout, bool train,
                                   bool bidirectional, bool batch_first, const std::vector<std::int64_t>& lengths) {
  auto r = run_layers(Mode::tanh, input, hx, Tensor(), params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first, lengths);
  return {r[0], r[1]};
}

std::pair<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                   bool has_biases, std::int64_t num_layers, double dropout, bool train,
                                   bool bidirectional, bool batch_first, const std::vector<std::int64_t>& lengths) {
  auto r = run_layers(Mode::relu, input, hx, Tensor(), params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first, lengths);
  return {r[0], r[1]};
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, std::int64_t num_layers,
                                        double dropout, bool train, bool bidirectional, bool batch_first,
                                        const std::vector<std::int64_t>& lengths) {
  if (!hx.empty() && hx.size() != 2)
    throw Error("lstm", "hx must be empty or {h0, c0}, got " + std::to_string(hx.size()) + " tensors");
  const Tensor h0 = hx.empty() ? Tensor() : hx[0], c0 = hx.empty() ? Tensor() : hx[1];
  auto r = run_layers(Mode::lstm, input, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first, lengths);
  return {r[0], r[1], r[2]};
}

std::pair<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                              bool has_biases, std::int64_t num_layers, double dropout, bool train, bool bidirectional,
                              bool batch_first, const std::vector<std::int64_t>& lengths) {
  auto r = run_layers(Mode::gru, input, hx, Tensor(), params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first, lengths);
  return {r[0], r[1]};
}

}  // namespace functional

// ---- cell modules ---------------------------------------------------------------------------------

namespace {

void check_sizes(const char* op, std::int64_t input_size, std::int64_t hidden_size, Dtype dt) {
  if (input_size < 0) throw Error(op, "input_size must be >= 0, got " + num(input_size));
  if (hidden_size <= 0) throw Error(op, "hidden_size must be positive, got " + num(hidden_size));
  if (!is_floating(dt)) throw Error(op, std::string("parameter dtype must be float32 or float64, got ") + dtype_name(dt));
}

void check_nonlinearity(const char* op, const std::string& v) {
  if (v != "tanh" && v != "relu") throw Error(op, "unknown nonlinearity '" + v + "' (expected 'tanh' or 'relu')");
}

void reset_uniform(const std::vector<Tensor>& params, std::int64_t hidden_size) {
  const double b = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor p : params)
    if (p.defined()) init::uniform_(p, -b, b);
}

}  // namespace

RNNCellBase::RNNCellBase(const std::string& name, const RNNCellOptions& o, std::int64_t gates)
    : Module(name), options(o) {
  const char* op = this->name().c_str();
  check_sizes(op, o.input_size(), o.hidden_size(), o.dtype());
  if (name == "RNNCell") check_nonlinearity(op, o.nonlinearity());
  const std::int64_t H = o.hidden_size();
  weight_ih = register_parameter("weight_ih", empty({gates * H, o.input_size()}, o.dtype()));
  weight_hh = register_parameter("weight_hh", empty({gates * H, H}, o.dtype()));
  if (o.bias()) {
    bias_ih = register_parameter("bias_ih", empty({gates * H}, o.dtype()));
    bias_hh = register_parameter("bias_hh", empty({gates * H}, o.dtype()));
  }
  reset_parameters();
}

void RNNCellBase::reset_parameters() { reset_uniform(parameters(false), options.hidden_size()); }

std::string RNNCellBase::extra_repr() const {
  std::string s = num(options.input_size()) + ", " + num(options.hidden_size());
  if (!options.bias()) s += ", bias=false";
  if (name() == "RNNCell" && options.nonlinearity() != "tanh") s += ", nonlinearity=" + options.nonlinearity();
  return s;
}

void RNNCellBase::check_step(const Tensor& input, const Tensor& h, const char* what) const {
  const char* op = name().c_str();
  if (!input.defined()) throw Error(op, "input is undefined");
  if (input.dim() != 1 && input.dim() != 2)
    throw Error(op, "expected a 1-D (unbatched) or 2-D (batched) input, got " + shape_str(input.shape()));
  if (input.size(-1) != options.input_size())
    throw Error(op, "expected input with " + num(options.input_size()) + " features in the last dim, got " +
                        shape_str(input.shape()));
  if (!h.defined()) return;
  Shape want = input.shape();
  want.back() = options.hidden_size();
  if (h.shape() != want)
    throw Error(op, std::string("expected ") + what + " of shape " + shape_str(want) + " for input " +
                        shape_str(input.shape()) + ", got " + shape_str(h.shape()));
}

RNNCell::RNNCell(const RNNCellOptions& o) : RNNCellBase("RNNCell", o, 1) {}
RNNCell::RNNCell(std::int64_t input_size, std::int64_t hidden_size, bool bias, const std::string& nonlinearity)
    : RNNCell(RNNCellOptions(input_size, hidden_size).bias(bias).nonlinearity(nonlinearity)) {}

Tensor RNNCell::forward(const Tensor& input, const Tensor& hx) {
  check_step(input, hx, "hx");
  return options.nonlinearity() == "relu" ? functional::rnn_relu_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh)
                                          : functional::rnn_tanh_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}
Tensor RNNCell::forward(const Tensor& input) { return forward(input, Tensor()); }

LSTMCell::LSTMCell(const LSTMCellOptions& o) : RNNCellBase("LSTMCell", o, 4) {}
LSTMCell::LSTMCell(std::int64_t input_size, std::int64_t hidden_size, bool bias)
    : LSTMCell(LSTMCellOptions(input_size, hidden_size).bias(bias)) {}

std::pair<Tensor, Tensor> LSTMCell::forward(const Tensor& input, const std::pair<Tensor, Tensor>& hx) {
  check_step(input, hx.first, "h");
  check_step(input, hx.second, "c");
  return functional::lstm_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}
Tensor LSTMCell::forward(const Tensor& input) { return forward(input, {Tensor(), Tensor()}).first; }

GRUCell::GRUCell(const GRUCellOptions& o) : RNNCellBase("GRUCell", o, 3) {}
GRUCell::GRUCell(std::int64_t input_size, std::int64_t hidden_size, bool bias)
    : GRUCell(GRUCellOptions(input_size, hidden_size).bias(bias)) {}

Tensor GRUCell::forward(const Tensor& input, const Tensor& hx) {
  check_step(input, hx, "hx");
  return functional::gru_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}
Tensor GRUCell::forward(const Tensor& input) { return forward(input, Tensor()); }

// ---- layer modules --------------------------------------------------------------------------------

RNNBase::RNNBase(const std::string& name, const RNNOptions& o, std::int64_t gates) : Module(name), options(o) {
  const char* op = this->name().c_str();
  check_sizes(op, o.input_size(), o.hidden_size(), o.dtype());
  if (o.num_layers() < 1) throw Error(op, "num_layers must be >= 1, got " + num(o.num_layers()));
  if (!(o.dropout() >= 0.0 && o.dropout() <= 1.0))
    throw Error(op, "dropout must be a probability in [0, 1], got " + std::to_string(o.dropout()));
  if (name == "RNN") check_nonlinearity(op, o.nonlinearity());
  if (o.proj_size() < 0) throw Error(op, "proj_size must be >= 0, got " + num(o.proj_size()));
  if (o.proj_size() > 0 && name != "LSTM") throw Error(op, "proj_size is supported by LSTM only, got " + num(o.proj_size()));
  if (o.proj_size() >= o.hidden_size())
    throw Error(op, "proj_size " + num(o.proj_size()) + " must be smaller than hidden_size " + num(o.hidden_size()));
  const std::int64_t H = o.hidden_size(), H_out = o.proj_size() > 0 ? o.proj_size() : H, D = o.bidirectional() ? 2 : 1;
  for (std::int64_t k = 0; k < o.num_layers(); ++k)
    for (std::int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + num(k) + (d == 1 ? "_reverse" : "");
      const std::int64_t in = k == 0 ? o.input_size() : D * H_out;
      auto add = [&](const std::string& n, const Shape& s) {
        register_parameter(n + sfx, empty(s, o.dtype()));
        names_.push_back(n + sfx);
      };
      add("weight_ih", {gates * H, in});
      add("weight_hh", {gates * H, H_out});
      if (o.bias()) {
        add("bias_ih", {gates * H});
        add("bias_hh", {gates * H});
      }
      if (o.proj_size() > 0) add("weight_hr", {H_out, H});
    }
  reset_parameters();
}

void RNNBase::reset_parameters() { reset_uniform(parameters(false), options.hidden_size()); }

std::vector<Tensor> RNNBase::flat_weights() const { return parameters(false); }

std::string RNNBase::extra_repr() const {
  std::string s = num(options.input_size()) + ", " + num(options.hidden_size());
  if (options.proj_size() != 0) s += ", proj_size=" + num(options.proj_size());
  if (options.num_layers() != 1) s += ", num_layers=" + num(options.num_layers());
  if (name() == "RNN" && options.nonlinearity() != "tanh") s += ", nonlinearity=" + options.nonlinearity();
  if (!options.bias()) s += ", bias=false";
  if (options.batch_first()) s += ", batch_first=true";
  if (options.dropout() != 0.0) {
    std::string p = std::to_string(options.dropout());
    p.erase(p.find_last_not_of('0') + 1);
    if (!p.empty() && p.back() == '.') p += '0';
    s += ", dropout=" + p;
  }
  if (options.bidirectional()) s += ", bidirectional=true";
  return s;
}

void RNNBase::check_input(const Tensor& input, const Tensor& state, const char* what, std::int64_t size) const {
  const char* op = name().c_str();
  if (!input.defined()) throw Error(op, "input is undefined");
  if (input.dim() != 2 && input.dim() != 3)
    throw Error(op, "expected a 2-D (unbatched) or 3-D (batched) input, got " + shape_str(input.shape()));
  if (input.size(-1) != options.input_size())
    throw Error(op, "expected input with " + num(options.input_size()) + " features in the last dim, got " +
                        shape_str(input.shape()));
  if (!state.defined()) return;
  const std::int64_t layers = options.num_layers() * (options.bidirectional() ? 2 : 1);
  const bool batched = input.dim() == 3;
  const Shape want = batched ? Shape{layers, input.size(options.batch_first() ? 0 : 1), size} : Shape{layers, size};
  if (state.shape() != want)
    throw Error(op, std::string("expected ") + what + " of shape " + shape_str(want) + " for input " +
                        shape_str(input.shape()) + ", got " + shape_str(state.shape()));
}

RNN::RNN(const RNNOptions& o) : RNNBase("RNN", o, 1) {}
RNN::RNN(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers)
    : RNN(RNNOptions(input_size, hidden_size).num_layers(num_layers)) {}

std::pair<Tensor, Tensor> RNN::forward(const Tensor& input, const Tensor& h0, const std::vector<std::int64_t>& lengths) {
  check_input(input, h0, "h0", options.hidden_size());
  const auto& o = options;
  const auto f = o.nonlinearity() == "relu" ? functional::rnn_relu : functional::rnn_tanh;
  return f(input, h0, flat_weights(), o.bias(), o.num_layers(), o.dropout(), is_training(), o.bidirectional(),
           o.batch_first(), lengths);
}
Tensor RNN::forward(const Tensor& input) { return forward(input, Tensor()).first; }

LSTM::LSTM(const LSTMOptions& o) : RNNBase("LSTM", o, 4) {}
LSTM::LSTM(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers)
    : LSTM(LSTMOptions(input_size, hidden_size).num_layers(num_layers)) {}

std::pair<Tensor, std::pair<Tensor, Tensor>> LSTM::forward(const Tensor& input, const std::pair<Tensor, Tensor>& hx,
                                                           const std::vector<std::int64_t>& lengths) {
  const auto& o = options;
  check_input(input, hx.first, "h0", o.proj_size() > 0 ? o.proj_size() : o.hidden_size());
  check_input(input, hx.second, "c0", o.hidden_size());
  std::vector<Tensor> state;
  if (hx.first.defined() || hx.second.defined()) state = {hx.first, hx.second};
  auto [out, h, c] = functional::lstm(input, state, flat_weights(), o.bias(), o.num_layers(), o.dropout(),
                                      is_training(), o.bidirectional(), o.batch_first(), lengths);
  return {out, {h, c}};
}
Tensor LSTM::forward(const Tensor& input) { return forward(input, {Tensor(), Tensor()}).first; }

GRU::GRU(const GRUOptions& o) : RNNBase("GRU", o, 3) {}
GRU::GRU(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers)
    : GRU(GRUOptions(input_size, hidden_size).num_layers(num_layers)) {}

std::pair<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& h0, const std::vector<std::int64_t>& lengths) {
  check_input(input, h0, "h0", options.hidden_size());
  const auto& o = options;
  return functional::gru(input, h0, flat_weights(), o.bias(), o.num_layers(), o.dropout(), is_training(),
                         o.bidirectional(), o.batch_first(), lengths);
}
Tensor GRU::forward(const Tensor& input) { return forward(input, Tensor()).first; }

// ---- padding utilities --------------------------------------------------------------------------

Tensor utils::rnn::pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value,
                                const std::string& padding_side) {
  const char* op = "pad_sequence";
  if (sequences.empty()) throw Error(op, "expected a non-empty list of sequences");
  if (padding_side != "right" && padding_side != "left")
    throw Error(op, "padding_side must be \"right\" or \"left\", got \"" + padding_side + "\"");
  detail::check_same_device(sequences, op);
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    const bool same_tail = s.dim() >= 1 && s.dim() == sequences[0].dim() &&
                           std::equal(s.shape().begin() + 1, s.shape().end(), sequences[0].shape().begin() + 1);
    if (!same_tail)
      throw Error(op, "sequences must be (L_i, *) with the same trailing dims, got " + shape_str(sequences[0].shape()) +
                          " and " + shape_str(s.shape()) + " at entry " + num(static_cast<std::int64_t>(i)));
    longest = std::max(longest, s.size(0));
  }
  const Dtype dt = detail::result_type(sequences);
  return detail::composite(op, sequences, [&] {
    std::vector<Tensor> padded;
    for (const Tensor& s : sequences) {
      Shape widths(2 * static_cast<std::size_t>(s.dim()), 0);  // pad's order: the last dim first, dim 0 last
      widths[padding_side == "right" ? widths.size() - 1 : widths.size() - 2] = longest - s.size(0);
      padded.push_back(pad(s.to(dt), widths, PadMode::constant, padding_value));
    }
    return stack(padded, batch_first ? 0 : 1);
  });
}

std::vector<Tensor> utils::rnn::unpad_sequence(const Tensor& padded, const std::vector<std::int64_t>& lengths,
                                               bool batch_first) {
  const char* op = "unpad_sequence";
  if (padded.dim() < 2) throw Error(op, "expected a padded batch of at least 2 dims, got shape " + shape_str(padded.shape()));
  const std::int64_t time = batch_first ? 1 : 0, batch = 1 - time;
  if (static_cast<std::int64_t>(lengths.size()) != padded.size(batch))
    throw Error(op, "expected one length per sequence (" + num(padded.size(batch)) + " in the batch of shape " +
                        shape_str(padded.shape()) + "), got " + num(static_cast<std::int64_t>(lengths.size())));
  std::vector<Tensor> out;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] < 0 || lengths[b] > padded.size(time))
      throw Error(op, "length " + num(lengths[b]) + " of sequence " + num(static_cast<std::int64_t>(b)) +
                          " is outside [0, " + num(padded.size(time)) + "]");
    out.push_back(padded.select(batch, static_cast<std::int64_t>(b)).narrow(0, 0, lengths[b]));
  }
  return out;
}

}  // namespace phasor::nn
