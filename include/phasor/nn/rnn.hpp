// phasor/nn/rnn.hpp - recurrent layers (torch.nn names, parameter names, gate order, defaults): the cells
// RNNCell, LSTMCell, GRUCell and the multi-layer, optionally bidirectional RNN, LSTM, GRU, with their
// functional forms (torch.rnn_tanh_cell / lstm_cell / gru_cell and torch.rnn_tanh / rnn_relu / lstm / gru).
// All are compositions of differentiable ops, so gradients of any order and every device come with them.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "phasor/dtype.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// One Elman step h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh): input (N, H_in) or (H_in), hx (N, H) or (H)
/// (undefined: zeros), w_ih (H, H_in), w_hh (H, H), optional biases (H).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
/// rnn_tanh_cell with relu instead of tanh.
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
/// One LSTM step with torch's gate order (i, f, g, o) in w_ih (4H, H_in), w_hh (4H, H), biases (4H):
/// hx = {h (N, H) or (H), c (same)} (undefined: zeros) -> {h', c'}.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& input, const std::pair<Tensor, Tensor>& hx, const Tensor& w_ih,
                                    const Tensor& w_hh, const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());
/// One GRU step with torch's gate order (r, z, n) in w_ih (3H, H_in), w_hh (3H, H), biases (3H):
/// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) n + z h.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = Tensor(), const Tensor& b_hh = Tensor());

/// Multi-layer Elman RNN with tanh (torch.rnn_tanh): input (L, N, H_in) ((N, L, H_in) when batch_first) or
/// (L, H_in); hx (D * num_layers, N, H) or (D * num_layers, H) (undefined: zeros); params per layer and direction
/// w_ih, w_hh[, b_ih, b_hh] (the order of torch's _flat_weights); dropout on every layer's output but the last
/// when `train`; optional `lengths` (one per sequence, in [1, L]) for padded variable-length input (a sequence keeps
/// its state past its end, where its output is 0: torch's packed-sequence results; padding must be finite).
/// Returns {output (L, N, D * H), h_n}.
std::pair<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                   bool has_biases, std::int64_t num_layers, double dropout, bool train,
                                   bool bidirectional, bool batch_first, const std::vector<std::int64_t>& lengths = {});
/// rnn_tanh with relu instead of tanh (torch.rnn_relu).
std::pair<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                   bool has_biases, std::int64_t num_layers, double dropout, bool train,
                                   bool bidirectional, bool batch_first, const std::vector<std::int64_t>& lengths = {});
/// Multi-layer LSTM (torch.lstm): hx = {} or {h0, c0}; params per layer and direction w_ih, w_hh[, b_ih, b_hh]
/// [, w_hr] (w_hr (H_out, H) projects h when present for every layer). Returns {output, h_n, c_n}.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, std::int64_t num_layers,
                                        double dropout, bool train, bool bidirectional, bool batch_first,
                                        const std::vector<std::int64_t>& lengths = {});
/// Multi-layer GRU (torch.gru), arguments as rnn_tanh's.
std::pair<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                              bool has_biases, std::int64_t num_layers, double dropout, bool train, bool bidirectional,
                              bool batch_first, const std::vector<std::int64_t>& lengths = {});

}  // namespace functional

// ---- cells ----------------------------------------------------------------------------------------

/// Options of RNNCell, LSTMCell and GRUCell: `RNNCellOptions(in, hidden).bias(false).nonlinearity("relu")`.
struct RNNCellOptions {
  /// input_size -> hidden_size.
  RNNCellOptions(std::int64_t input_size, std::int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Whether the cell has bias_ih and bias_hh (default true).
  RNNCellOptions& bias(bool v) { bias_ = v; return *this; }
  /// "tanh" (default) or "relu" (RNNCell only).
  RNNCellOptions& nonlinearity(std::string v) { nonlinearity_ = std::move(v); return *this; }
  /// Parameter dtype (default float32).
  RNNCellOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t input_size() const { return input_size_; }    ///< features of each input
  std::int64_t hidden_size() const { return hidden_size_; }  ///< features of the hidden state
  bool bias() const { return bias_; }                        ///< biases on
  const std::string& nonlinearity() const { return nonlinearity_; }  ///< "tanh" or "relu"
  Dtype dtype() const { return dtype_; }                     ///< parameter dtype

  std::int64_t input_size_;          ///< see input_size()
  std::int64_t hidden_size_;         ///< see hidden_size()
  bool bias_ = true;                 ///< see bias()
  std::string nonlinearity_ = "tanh";  ///< see nonlinearity()
  Dtype dtype_ = Dtype::Float32;     ///< see dtype()
};
using LSTMCellOptions = RNNCellOptions;  ///< options of LSTMCell (nonlinearity unused)
using GRUCellOptions = RNNCellOptions;   ///< options of GRUCell (nonlinearity unused)

/// Shared part of the cells (torch's RNNCellBase): parameters weight_ih (G H, in), weight_hh (G H, H),
/// bias_ih, bias_hh (G H) ~ U(-1/sqrt(H), 1/sqrt(H)), G the number of gates.
class RNNCellBase : public Module {
 public:
  /// "10, 20, bias=false, nonlinearity=relu" (non-default fields only, as torch).
  std::string extra_repr() const override;
  /// Redraws every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
  void reset_parameters();

  RNNCellOptions options;  ///< the options it was built with
  Tensor weight_ih;        ///< (G * hidden_size, input_size)
  Tensor weight_hh;        ///< (G * hidden_size, hidden_size)
  Tensor bias_ih;          ///< (G * hidden_size), undefined without bias
  Tensor bias_hh;          ///< (G * hidden_size), undefined without bias

 protected:
  /// Validates the options and registers the parameters; `name` is the class name, `gates` G.
  RNNCellBase(const std::string& name, const RNNCellOptions& options, std::int64_t gates);
  /// Checks input (N, in) or (in) and a defined hidden-state tensor `what` against (N, H) or (H).
  void check_step(const Tensor& input, const Tensor& h, const char* what) const;
};

/// Elman RNN cell: h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T + b_hh).
class RNNCell : public RNNCellBase {
 public:
  /// A cell from options (nonlinearity "tanh" or "relu").
  explicit RNNCell(const RNNCellOptions& options);
  /// RNNCell(RNNCellOptions(input_size, hidden_size).bias(bias).nonlinearity(nonlinearity)).
  RNNCell(std::int64_t input_size, std::int64_t hidden_size, bool bias = true, const std::string& nonlinearity = "tanh");
  /// input (N, in) or (in), hx (N, H) or (H) (undefined: zeros) -> h'.
  Tensor forward(const Tensor& input, const Tensor& hx);
  /// forward(input, zeros).
  Tensor forward(const Tensor& input) override;
};

/// LSTM cell (gates i, f, g, o): c' = f c + i g, h' = o tanh(c').
class LSTMCell : public RNNCellBase {
 public:
  /// A cell from options.
  explicit LSTMCell(const LSTMCellOptions& options);
  /// LSTMCell(LSTMCellOptions(input_size, hidden_size).bias(bias)).
  LSTMCell(std::int64_t input_size, std::int64_t hidden_size, bool bias = true);
  /// input (N, in) or (in), hx = {h, c} each (N, H) or (H) (undefined: zeros) -> {h', c'}.
  std::pair<Tensor, Tensor> forward(const Tensor& input, const std::pair<Tensor, Tensor>& hx);
  /// h' of forward(input, zeros) (for Sequential).
  Tensor forward(const Tensor& input) override;
};

/// GRU cell (gates r, z, n): n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
class GRUCell : public RNNCellBase {
 public:
  /// A cell from options.
  explicit GRUCell(const GRUCellOptions& options);
  /// GRUCell(GRUCellOptions(input_size, hidden_size).bias(bias)).
  GRUCell(std::int64_t input_size, std::int64_t hidden_size, bool bias = true);
  /// input (N, in) or (in), hx (N, H) or (H) (undefined: zeros) -> h'.
  Tensor forward(const Tensor& input, const Tensor& hx);
  /// forward(input, zeros).
  Tensor forward(const Tensor& input) override;
};

// ---- layers ---------------------------------------------------------------------------------------

/// Options of RNN, LSTM and GRU: `LSTMOptions(in, hidden).num_layers(2).bidirectional(true).batch_first(true)`.
struct RNNOptions {
  /// input_size -> hidden_size.
  RNNOptions(std::int64_t input_size, std::int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Number of stacked layers (default 1).
  RNNOptions& num_layers(std::int64_t v) { num_layers_ = v; return *this; }
  /// "tanh" (default) or "relu" (RNN only).
  RNNOptions& nonlinearity(std::string v) { nonlinearity_ = std::move(v); return *this; }
  /// Whether every layer has bias_ih and bias_hh (default true).
  RNNOptions& bias(bool v) { bias_ = v; return *this; }
  /// Input and output as (N, L, features) instead of (L, N, features) (default false; h_n is unaffected).
  RNNOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  /// Dropout probability on every layer's output but the last, in training mode (default 0).
  RNNOptions& dropout(double v) { dropout_ = v; return *this; }
  /// Runs a second, reversed direction per layer and concatenates both (default false).
  RNNOptions& bidirectional(bool v) { bidirectional_ = v; return *this; }
  /// LSTM only: projects h to proj_size features with weight_hr (default 0: no projection).
  RNNOptions& proj_size(std::int64_t v) { proj_size_ = v; return *this; }
  /// Parameter dtype (default float32).
  RNNOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t input_size() const { return input_size_; }    ///< features of each input
  std::int64_t hidden_size() const { return hidden_size_; }  ///< features of the hidden state
  std::int64_t num_layers() const { return num_layers_; }    ///< stacked layers
  const std::string& nonlinearity() const { return nonlinearity_; }  ///< "tanh" or "relu"
  bool bias() const { return bias_; }                        ///< biases on
  bool batch_first() const { return batch_first_; }          ///< (N, L, features) layout
  double dropout() const { return dropout_; }                ///< dropout between layers
  bool bidirectional() const { return bidirectional_; }      ///< two directions
  std::int64_t proj_size() const { return proj_size_; }      ///< LSTM projection size (0: none)
  Dtype dtype() const { return dtype_; }                     ///< parameter dtype

  std::int64_t input_size_;          ///< see input_size()
  std::int64_t hidden_size_;         ///< see hidden_size()
  std::int64_t num_layers_ = 1;      ///< see num_layers()
  std::string nonlinearity_ = "tanh";  ///< see nonlinearity()
  bool bias_ = true;                 ///< see bias()
  bool batch_first_ = false;         ///< see batch_first()
  double dropout_ = 0.0;             ///< see dropout()
  bool bidirectional_ = false;       ///< see bidirectional()
  std::int64_t proj_size_ = 0;       ///< see proj_size()
  Dtype dtype_ = Dtype::Float32;     ///< see dtype()
};
using LSTMOptions = RNNOptions;  ///< options of LSTM
using GRUOptions = RNNOptions;   ///< options of GRU (nonlinearity and proj_size unused)

/// Shared part of RNN, LSTM and GRU (torch's RNNBase): per layer k and direction (suffix "" or "_reverse")
/// parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}[, weight_hr_l{k}] in torch's order,
/// all ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), so torch state_dicts load as they are.
class RNNBase : public Module {
 public:
  /// "10, 20, num_layers=2, batch_first=true, bidirectional=true" (non-default fields only, as torch).
  std::string extra_repr() const override;
  /// Redraws every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
  void reset_parameters();
  /// The parameters in torch's _flat_weights order (layer, then direction, then w_ih, w_hh, b_ih, b_hh, w_hr).
  std::vector<Tensor> flat_weights() const;
  /// The names of flat_weights(), e.g. "weight_ih_l0", "bias_hh_l1_reverse".
  const std::vector<std::string>& flat_weights_names() const { return names_; }

  RNNOptions options;  ///< the options it was built with

 protected:
  /// Validates the options and registers the parameters; `name` is the class name, `gates` G.
  RNNBase(const std::string& name, const RNNOptions& options, std::int64_t gates);
  /// Checks input (L, N, in) / (N, L, in) / (L, in) and a defined state tensor `what` against
  /// (D * num_layers, N, H) or (D * num_layers, H).
  void check_input(const Tensor& input, const Tensor& state, const char* what, std::int64_t size) const;

 private:
  std::vector<std::string> names_;
};

/// Multi-layer Elman RNN: h_t = tanh or relu(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).
class RNN : public RNNBase {
 public:
  /// A layer from options (nonlinearity "tanh" or "relu"; proj_size must be 0).
  explicit RNN(const RNNOptions& options);
  /// RNN(RNNOptions(input_size, hidden_size).num_layers(num_layers)).
  RNN(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers = 1);
  /// input (L, N, in) ((N, L, in) when batch_first) or (L, in), h0 (D * num_layers, N, H) or (D * num_layers, H)
  /// (pass {} for zeros), optional lengths of padded variable-length sequences (see functional::rnn_tanh)
  /// -> {output (L, N, D * H), h_n (D * num_layers, N, H)}.
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0, const std::vector<std::int64_t>& lengths = {});
  /// The output of forward(input, zeros) (for Sequential).
  Tensor forward(const Tensor& input) override;
};

/// Multi-layer LSTM (gates i, f, g, o), with an optional projection of h (proj_size > 0: H_out = proj_size).
class LSTM : public RNNBase {
 public:
  /// A layer from options (0 <= proj_size < hidden_size).
  explicit LSTM(const LSTMOptions& options);
  /// LSTM(LSTMOptions(input_size, hidden_size).num_layers(num_layers)).
  LSTM(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers = 1);
  /// input as RNN's, hx = {h0 (D * num_layers, N, H_out), c0 (D * num_layers, N, H)} (unbatched: no N; undefined:
  /// zeros), optional lengths as RNN's -> {output (L, N, D * H_out), {h_n, c_n}}.
  std::pair<Tensor, std::pair<Tensor, Tensor>> forward(const Tensor& input, const std::pair<Tensor, Tensor>& hx,
                                                       const std::vector<std::int64_t>& lengths = {});
  /// The output of forward(input, zeros) (for Sequential).
  Tensor forward(const Tensor& input) override;
};

/// Multi-layer GRU (gates r, z, n).
class GRU : public RNNBase {
 public:
  /// A layer from options (proj_size must be 0).
  explicit GRU(const GRUOptions& options);
  /// GRU(GRUOptions(input_size, hidden_size).num_layers(num_layers)).
  GRU(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers = 1);
  /// As RNN::forward.
  std::pair<Tensor, Tensor> forward(const Tensor& input, const Tensor& h0, const std::vector<std::int64_t>& lengths = {});
  /// The output of forward(input, zeros) (for Sequential).
  Tensor forward(const Tensor& input) override;
};

namespace utils::rnn {

/// The sequences (L_i, *) (same trailing dims) padded with padding_value to the longest and stacked: (L_max, B, *),
/// or (B, L_max, *) when batch_first, in their promoted dtype; padding_side "right" (default) or "left"
/// (torch.nn.utils.rnn.pad_sequence). With the lengths, the input of RNN / LSTM / GRU's variable-length forward.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0,
                    const std::string& padding_side = "right");
/// The sequences of a right-padded batch (L, B, *) ((B, L, *) when batch_first) cut to their lengths, as views
/// (torch.nn.utils.rnn.unpad_sequence).
std::vector<Tensor> unpad_sequence(const Tensor& padded, const std::vector<std::int64_t>& lengths,
                                   bool batch_first = false);

}  // namespace utils::rnn

}  // namespace phasor::nn
