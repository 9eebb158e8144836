// tests/test_cuda_rnn.cpp - the recurrent cells and layers of phasor/nn/rnn.hpp on a device agree with the CPU:
// values and gradients of every functional form (2 layers, bidirectional, batch_first, proj_size, states given or
// not, unbatched), the modules moved with to(), and dropout between layers in training. DEVICE_CASEs: on cuda:0
// with a GPU, on the virtual CPU device everywhere.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

using V = std::vector<Tensor>;

double tol(Dtype dt) { return dt == float32 ? 1e-5 : 1e-12; }

/// Random inputs: x, h, c, then the cell weights for `gates` gates.
V cell_inputs(std::int64_t gates, Dtype dt) {
  const std::int64_t N = 3, I = 5, H = 4;
  return {sample({N, I}, dt), sample({N, H}, dt), sample({N, H}, dt), sample({gates * H, I}, dt) * 0.5,
          sample({gates * H, H}, dt) * 0.5, sample({gates * H}, dt) * 0.5, sample({gates * H}, dt) * 0.5};
}

/// x (L, N, in) followed by `params` (the flat weights of a module of the same configuration, CPU copies).
V layer_inputs(const Tensor& x, const nn::RNNBase& m) {
  V in{x};
  for (const auto& p : m.flat_weights()) in.push_back(p.detach().clone());
  return in;
}

}  // namespace

DEVICE_CASE("cuda rnn: the cells agree with the CPU, with gradients") {
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const V a1 = cell_inputs(1, dt), a3 = cell_inputs(3, dt), a4 = cell_inputs(4, dt);
    const V s1{a1[0], a1[1], a1[3], a1[4], a1[5], a1[6]}, s3{a3[0], a3[1], a3[3], a3[4], a3[5], a3[6]};
    const auto tanh_cell = [](const V& a) { return F::rnn_tanh_cell(a[0], a[1], a[2], a[3], a[4], a[5]); };
    const auto relu_cell = [](const V& a) { return F::rnn_relu_cell(a[0], a[1], a[2], a[3], a[4], a[5]); };
    const auto gru_cell = [](const V& a) { return F::gru_cell(a[0], a[1], a[2], a[3], a[4], a[5]); };
    const auto lstm_cell = [](const V& a) {
      auto [h, c] = F::lstm_cell(a[0], {a[1], a[2]}, a[3], a[4], a[5], a[6]);
      return stack({h, c});
    };
    agree(dev, "rnn_tanh_cell", tanh_cell, s1, tol(dt));
    agree(dev, "rnn_relu_cell", relu_cell, s1, tol(dt));
    agree(dev, "gru_cell", gru_cell, s3, tol(dt));
    agree(dev, "lstm_cell", lstm_cell, a4, tol(dt));
    agree(dev, "gru_cell without state or biases", [](const V& a) { return F::gru_cell(a[0], Tensor(), a[2], a[3]); }, s3,
          tol(dt));
    agree(dev, "lstm_cell unbatched without state",
          [](const V& a) { return F::lstm_cell(a[0].select(0, 1), {}, a[3], a[4], a[5], a[6]).second; }, a4, tol(dt));
    if (dt == float64) {
      grads_agree(dev, "rnn_tanh_cell", tanh_cell, s1, 1e-10);
      grads_agree(dev, "rnn_relu_cell", relu_cell, s1, 1e-10);
      grads_agree(dev, "gru_cell", gru_cell, s3, 1e-10);
      grads_agree(dev, "lstm_cell", lstm_cell, a4, 1e-10);
      grad2_agree(dev, "lstm_cell", lstm_cell, a4, 1e-10);
      grad2_agree(dev, "gru_cell", gru_cell, s3, 1e-10);
    }
  }
}

DEVICE_CASE("cuda rnn: RNN, LSTM, GRU functional forms agree with the CPU (2 layers, bidirectional, batch_first, proj)") {
  manual_seed(4);
  const std::int64_t L = 4, N = 3, I = 5, H = 4;
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor x = sample({L, N, I}, dt), xb = sample({N, L, I}, dt);
    const auto opts = nn::RNNOptions(I, H).num_layers(2).bidirectional(true).dtype(dt);
    nn::RNN rnn(opts);
    nn::GRU gru(opts);
    nn::LSTM lstm(opts);
    nn::LSTM lstmp(nn::LSTMOptions(opts).proj_size(3));
    V ri = layer_inputs(x, rnn);
    ri.push_back(sample({4, N, H}, dt));
    const auto tanh_f = [](const V& a) {
      auto [o, h] = F::rnn_tanh(a[0], a.back(), V(a.begin() + 1, a.end() - 1), true, 2, 0.0, false, true, false);
      return cat({o.reshape({-1}), h.reshape({-1})});
    };
    const auto relu_f = [](const V& a) {
      return F::rnn_relu(a[0], Tensor(), V(a.begin() + 1, a.end()), true, 2, 0.0, false, true, false).first;
    };
    V gi = layer_inputs(xb, gru);
    gi.push_back(sample({4, N, H}, dt));
    const auto gru_f = [](const V& a) {
      auto [o, h] = F::gru(a[0], a.back(), V(a.begin() + 1, a.end() - 1), true, 2, 0.0, false, true, /*batch_first=*/true);
      return cat({o.reshape({-1}), h.reshape({-1})});
    };
    V li = layer_inputs(x, lstm);
    li.push_back(sample({4, N, H}, dt));
    li.push_back(sample({4, N, H}, dt));
    const auto lstm_f = [](const V& a) {
      auto [o, h, c] = F::lstm(a[0], {a[a.size() - 2], a.back()}, V(a.begin() + 1, a.end() - 2), true, 2, 0.0, false,
                               true, false);
      return cat({o.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
    };
    const V pi = layer_inputs(x.select(1, 0), lstmp);  // unbatched, projected, no state
    const auto lstmp_f = [](const V& a) {
      auto [o, h, c] = F::lstm(a[0], {}, V(a.begin() + 1, a.end()), true, 2, 0.0, false, true, false);
      return cat({o.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
    };
    const V li0(li.begin(), li.end() - 2);  // no states
    const auto lstm_len = [](const V& a) {  // variable lengths, batch_first
      auto [o, h, c] = F::lstm(a[0].transpose(0, 1), {}, V(a.begin() + 1, a.end()), true, 2, 0.0, false, true, true,
                               {2, 4, 1});
      return cat({o.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
    };
    agree(dev, "lstm with lengths", lstm_len, li0, tol(dt));
    agree(dev, "rnn_tanh", tanh_f, ri, tol(dt));
    const V ri0(ri.begin(), ri.end() - 1);  // no h0
    agree(dev, "rnn_relu", relu_f, ri0, tol(dt));
    agree(dev, "gru", gru_f, gi, tol(dt));
    agree(dev, "lstm", lstm_f, li, tol(dt));
    agree(dev, "lstm projected, unbatched", lstmp_f, pi, tol(dt));
    if (dt == float64) {
      grads_agree(dev, "rnn_tanh", tanh_f, ri, 1e-10);
      grads_agree(dev, "rnn_relu", relu_f, ri0, 1e-10);
      grads_agree(dev, "gru", gru_f, gi, 1e-10);
      grads_agree(dev, "lstm", lstm_f, li, 1e-10);
      grads_agree(dev, "lstm with lengths", lstm_len, li0, 1e-10);
      grads_agree(dev, "lstm projected, unbatched", lstmp_f, pi, 1e-10);
    }
  }
}

DEVICE_CASE("cuda rnn: pad_sequence agrees with the CPU, with gradients") {
  manual_seed(7);
  const std::vector<Tensor> seqs = {sample({3, 2}, float64), sample({1, 2}, float64), sample({4, 2}, float64)};
  const auto padded = [](const std::vector<Tensor>& t) { return nn::utils::rnn::pad_sequence(t, true, -1.0, "left"); };
  agree(dev, "pad_sequence", padded, seqs, 0);
  grads_agree(dev, "pad_sequence", padded, seqs, 0);
}

DEVICE_CASE("cuda rnn: modules moved to the device agree with the CPU; dropout between layers in training") {
  manual_seed(6);
  const Tensor x = sample({5, 2, 3}, float32);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  nn::LSTM moved(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  moved.load_state_dict(lstm.state_dict());
  moved.to(dev);
  lstm.eval();
  moved.eval();
  auto [oc, sc] = lstm.forward(x, {});
  auto [od, sd] = moved.forward(x.to(dev), {});
  CHECK(od.device() == dev);
  CHECK(sd.first.device() == dev);
  CHECK(sd.second.device() == dev);
  CHECK(rel_diff(od, oc) <= 1e-5);
  CHECK(rel_diff(sd.first, sc.first) <= 1e-5);
  CHECK(rel_diff(sd.second, sc.second) <= 1e-5);
  for (auto kind : {0, 1, 2}) {
    CAPTURE(kind);
    std::shared_ptr<nn::Module> c, d;
    if (kind == 0) {
      c = std::make_shared<nn::RNNCell>(3, 4, true, "relu");
      d = std::make_shared<nn::RNNCell>(3, 4, true, "relu");
    } else if (kind == 1) {
      c = std::make_shared<nn::GRUCell>(3, 4);
      d = std::make_shared<nn::GRUCell>(3, 4);
    } else {
      c = std::make_shared<nn::GRU>(nn::GRUOptions(3, 4).batch_first(true));
      d = std::make_shared<nn::GRU>(nn::GRUOptions(3, 4).batch_first(true));
    }
    d->load_state_dict(c->state_dict());
    d->to(dev);
    const Tensor xi = kind == 2 ? x : x.select(0, 0);
    const Tensor yd = d->forward(xi.to(dev));
    CHECK(yd.device() == dev);
    CHECK(rel_diff(yd, c->forward(xi)) <= 1e-5);
  }
  // Training mode: layer 0's output is dropped at rate p before layer 1 (relu of the identity), on the device.
  const std::int64_t H = 6;
  const Tensor xs = (rand({20, 10, H}, float64) + 0.1).to(dev);
  const Tensor w0 = (rand({H, H}, float64) + 0.1).to(dev), wh0 = (rand({H, H}, float64) * 0.1).to(dev);
  const Tensor id = eye(H, std::nullopt, float64).to(dev), zw = zeros({H, H}, float64).to(dev);
  const Tensor out0 = F::rnn_relu(xs, Tensor(), {w0, wh0}, false, 1, 0.0, false, false, false).first;
  const Tensor out1 = F::rnn_relu(xs, Tensor(), {w0, wh0, id, zw}, false, 2, 0.25, true, false, false).first;
  CHECK(out1.device() == dev);
  const Tensor zero = out1 == Scalar(0.0);
  const Tensor kept = where(zero, Scalar(0.0), out1 - out0 / 0.75);  // on the device
  CHECK(kept.abs().max().item<double>() < 1e-12);
  const double frac = zero.to(float64).mean().item<double>();
  CHECK(frac > 0.15);
  CHECK(frac < 0.35);
}
