// phasor/nn/activation.hpp - the activation functions of torch.nn.functional that ops.hpp does not have (elu,
// selu, celu, leaky_relu, prelu, rrelu, hardtanh, relu6, hardsigmoid, hardswish, mish, softsign, softshrink,
// hardshrink, tanhshrink, threshold, logsigmoid, glu, softmin) and their modules (torch.nn names), on every
// device, with gradients that differentiate again. Inputs are float32 / float64 (hardtanh, relu6 and threshold
// also take int64, as torch's do); complex, bool and (for the others) int64 throw phasor::Error naming the op.
#pragma once
#include <cstdint>
#include <string>

#include "phasor/dtype.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {
namespace functional {

/// x for x > 0, alpha (e^x - 1) otherwise.
Tensor elu(const Tensor& x, double alpha = 1.0);
/// scale * elu(x, alpha) with torch's constants alpha = 1.6732632423543772, scale = 1.0507009873554805.
Tensor selu(const Tensor& x);
/// x for x > 0, alpha (e^(x / alpha) - 1) otherwise; alpha != 0.
Tensor celu(const Tensor& x, double alpha = 1.0);
/// x for x > 0, negative_slope * x otherwise.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
/// x for x > 0, weight * x otherwise; weight has 1 or C elements (C = x.size(1), or x.size(0) for 1-D x), one per channel.
Tensor prelu(const Tensor& x, const Tensor& weight);
/// Randomized leaky relu: in training, x * a for x <= 0 with a ~ U(lower, upper) drawn per element from `gen`
/// (the default generator when null; the gradient uses the same slopes); otherwise leaky_relu with (lower + upper) / 2.
Tensor rrelu(const Tensor& x, double lower = 1.0 / 8.0, double upper = 1.0 / 3.0, bool training = false,
             Generator* gen = nullptr);
/// min(max(x, min_val), max_val); gradient 1 strictly inside (min_val, max_val), 0 elsewhere; min_val <= max_val.
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
/// min(max(x, 0), 6).
Tensor relu6(const Tensor& x);
/// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& x);
/// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& x);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
/// x / (1 + |x|).
Tensor softsign(const Tensor& x);
/// x - lambd above lambd, x + lambd below -lambd, 0 between; lambd >= 0.
Tensor softshrink(const Tensor& x, double lambd = 0.5);
/// 0 on [-lambd, lambd], x elsewhere.
Tensor hardshrink(const Tensor& x, double lambd = 0.5);
/// x - tanh(x).
Tensor tanhshrink(const Tensor& x);
/// value where x <= threshold, x elsewhere.
Tensor threshold(const Tensor& x, double threshold, double value);
/// log(sigmoid(x)) = -softplus(-x), stable for large |x|.
Tensor logsigmoid(const Tensor& x);
/// a * sigmoid(b) for the halves a, b of x along dim (its size must be even).
Tensor glu(const Tensor& x, std::int64_t dim = -1);
/// softmax(-x, dim).
Tensor softmin(const Tensor& x, std::int64_t dim);

}  // namespace functional

/// ELU layer: functional::elu(x, alpha).
class ELU : public Module {
 public:
  /// An ELU layer.
  explicit ELU(double alpha = 1.0);
  /// elu(x, alpha).
  Tensor forward(const Tensor& x) override;
  /// "alpha=1".
  std::string extra_repr() const override;
  double alpha;  ///< slope scale of the negative part
};

/// SELU layer: functional::selu(x).
class SELU : public Module {
 public:
  /// A SELU layer.
  SELU() : Module("SELU") {}
  /// selu(x).
  Tensor forward(const Tensor& x) override;
};

/// CELU layer: functional::celu(x, alpha).
class CELU : public Module {
 public:
  /// A CELU layer (alpha != 0).
  explicit CELU(double alpha = 1.0);
  /// celu(x, alpha).
  Tensor forward(const Tensor& x) override;
  /// "alpha=1".
  std::string extra_repr() const override;
  double alpha;  ///< alpha of celu
};

/// LeakyReLU layer: functional::leaky_relu(x, negative_slope).
class LeakyReLU : public Module {
 public:
  /// A LeakyReLU layer.
  explicit LeakyReLU(double negative_slope = 0.01);
  /// leaky_relu(x, negative_slope).
  Tensor forward(const Tensor& x) override;
  /// "negative_slope=0.01".
  std::string extra_repr() const override;
  double negative_slope;  ///< slope for x <= 0
};

/// PReLU layer: functional::prelu(x, weight) with a learnable weight of num_parameters elements.
class PReLU : public Module {
 public:
  /// num_parameters (1, or the channel count) slopes, each set to init.
  explicit PReLU(std::int64_t num_parameters = 1, double init = 0.25, Dtype dtype = Dtype::Float32);
  /// prelu(x, weight).
  Tensor forward(const Tensor& x) override;
  /// "num_parameters=1".
  std::string extra_repr() const override;
  std::int64_t num_parameters;  ///< number of slopes
  Tensor weight;                ///< (num_parameters) slopes
};

/// RReLU layer: functional::rrelu(x, lower, upper, is_training()) with the default generator.
class RReLU : public Module {
 public:
  /// An RReLU layer (lower <= upper).
  explicit RReLU(double lower = 1.0 / 8.0, double upper = 1.0 / 3.0);
  /// rrelu(x, lower, upper, is_training()).
  Tensor forward(const Tensor& x) override;
  /// "lower=0.125, upper=0.333333".
  std::string extra_repr() const override;
  double lower;  ///< lower bound of the random slope
  double upper;  ///< upper bound of the random slope
};

/// Hardtanh layer: functional::hardtanh(x, min_val, max_val).
class Hardtanh : public Module {
 public:
  /// A Hardtanh layer (min_val <= max_val).
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0);
  /// hardtanh(x, min_val, max_val).
  Tensor forward(const Tensor& x) override;
  /// "min_val=-1, max_val=1".
  std::string extra_repr() const override;
  double min_val;  ///< lower bound
  double max_val;  ///< upper bound
};

/// ReLU6 layer: functional::relu6(x).
class ReLU6 : public Module {
 public:
  /// A ReLU6 layer.
  ReLU6() : Module("ReLU6") {}
  /// relu6(x).
  Tensor forward(const Tensor& x) override;
};

/// Hardsigmoid layer: functional::hardsigmoid(x).
class Hardsigmoid : public Module {
 public:
  /// A Hardsigmoid layer.
  Hardsigmoid() : Module("Hardsigmoid") {}
  /// hardsigmoid(x).
  Tensor forward(const Tensor& x) override;
};

/// Hardswish layer: functional::hardswish(x).
class Hardswish : public Module {
 public:
  /// A Hardswish layer.
  Hardswish() : Module("Hardswish") {}
  /// hardswish(x).
  Tensor forward(const Tensor& x) override;
};

/// Mish layer: functional::mish(x).
class Mish : public Module {
 public:
  /// A Mish layer.
  Mish() : Module("Mish") {}
  /// mish(x).
  Tensor forward(const Tensor& x) override;
};

/// Softsign layer: functional::softsign(x).
class Softsign : public Module {
 public:
  /// A Softsign layer.
  Softsign() : Module("Softsign") {}
  /// softsign(x).
  Tensor forward(const Tensor& x) override;
};

/// Softshrink layer: functional::softshrink(x, lambd).
class Softshrink : public Module {
 public:
  /// A Softshrink layer (lambd >= 0).
  explicit Softshrink(double lambd = 0.5);
  /// softshrink(x, lambd).
  Tensor forward(const Tensor& x) override;
  /// "0.5".
  std::string extra_repr() const override;
  double lambd;  ///< half-width of the zero band
};

/// Hardshrink layer: functional::hardshrink(x, lambd).
class Hardshrink : public Module {
 public:
  /// A Hardshrink layer.
  explicit Hardshrink(double lambd = 0.5);
  /// hardshrink(x, lambd).
  Tensor forward(const Tensor& x) override;
  /// "0.5".
  std::string extra_repr() const override;
  double lambd;  ///< half-width of the zero band
};

/// Tanhshrink layer: functional::tanhshrink(x).
class Tanhshrink : public Module {
 public:
  /// A Tanhshrink layer.
  Tanhshrink() : Module("Tanhshrink") {}
  /// tanhshrink(x).
  Tensor forward(const Tensor& x) override;
};

/// Threshold layer: functional::threshold(x, threshold, value).
class Threshold : public Module {
 public:
  /// A Threshold layer.
  Threshold(double threshold, double value);
  /// threshold(x, threshold, value).
  Tensor forward(const Tensor& x) override;
  /// "threshold=0.1, value=20".
  std::string extra_repr() const override;
  double threshold;  ///< values at or below it are replaced
  double value;      ///< the replacement
};

/// LogSigmoid layer: functional::logsigmoid(x).
class LogSigmoid : public Module {
 public:
  /// A LogSigmoid layer.
  LogSigmoid() : Module("LogSigmoid") {}
  /// logsigmoid(x).
  Tensor forward(const Tensor& x) override;
};

/// GLU layer: functional::glu(x, dim).
class GLU : public Module {
 public:
  /// A GLU layer splitting along dim.
  explicit GLU(std::int64_t dim = -1);
  /// glu(x, dim).
  Tensor forward(const Tensor& x) override;
  /// "dim=-1".
  std::string extra_repr() const override;
  std::int64_t dim;  ///< the split dim
};

/// Softmin layer: functional::softmin(x, dim).
class Softmin : public Module {
 public:
  /// A Softmin layer along dim.
  explicit Softmin(std::int64_t dim);
  /// softmin(x, dim).
  Tensor forward(const Tensor& x) override;
  /// "dim=1".
  std::string extra_repr() const override;
  std::int64_t dim;  ///< the normalized dim
};

/// Softmax layer: functional::softmax(x, dim) (nn/loss.hpp).
class Softmax : public Module {
 public:
  /// A Softmax layer along dim.
  explicit Softmax(std::int64_t dim);
  /// softmax(x, dim).
  Tensor forward(const Tensor& x) override;
  /// "dim=1".
  std::string extra_repr() const override;
  std::int64_t dim;  ///< the normalized dim
};

/// LogSoftmax layer: functional::log_softmax(x, dim) (nn/loss.hpp).
class LogSoftmax : public Module {
 public:
  /// A LogSoftmax layer along dim.
  explicit LogSoftmax(std::int64_t dim);
  /// log_softmax(x, dim).
  Tensor forward(const Tensor& x) override;
  /// "dim=1".
  std::string extra_repr() const override;
  std::int64_t dim;  ///< the normalized dim
};

}  // namespace phasor::nn
