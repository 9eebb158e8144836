// phasor/nn/layers.hpp - standard layers as modules (torch.nn names): Linear, Conv1d/2d/3d, Dropout,
// activations, Identity, Sequential, ModuleList and MLP. Parameters are public members
// (`linear->weight`) initialised exactly as PyTorch does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "phasor/dtype.hpp"
#include "phasor/nn/conv.hpp"
#include "phasor/nn/module.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn {

// ---- Linear --------------------------------------------------------------------------------------

/// Options of Linear: `LinearOptions(in, out).bias(false).dtype(float64)`.
struct LinearOptions {
  /// in_features -> out_features.
  LinearOptions(std::int64_t in_features, std::int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  /// Whether the layer adds a learned bias (default true).
  LinearOptions& bias(bool v) { bias_ = v; return *this; }
  /// Parameter dtype (default float32).
  LinearOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t in_features() const { return in_features_; }    ///< size of each input sample
  std::int64_t out_features() const { return out_features_; }  ///< size of each output sample
  bool bias() const { return bias_; }                           ///< learned bias on
  Dtype dtype() const { return dtype_; }                        ///< parameter dtype

  std::int64_t in_features_;   ///< see in_features()
  std::int64_t out_features_;  ///< see out_features()
  bool bias_ = true;           ///< see bias()
  Dtype dtype_ = Dtype::Float32;  ///< see dtype()
};

/// y = x @ weight^T + bias, acting on the last dim: weight (out, in), bias (out).
class Linear : public Module {
 public:
  /// A layer with PyTorch's default initialisation.
  explicit Linear(const LinearOptions& options);
  /// Linear(LinearOptions(in, out).bias(bias).dtype(dtype)).
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true, Dtype dtype = Dtype::Float32);
  /// x (..., in) -> (..., out).
  Tensor forward(const Tensor& x) override;
  /// "in_features=3, out_features=4, bias=true".
  std::string extra_repr() const override;
  /// Redraws weight ~ kaiming_uniform(a = sqrt(5)) and bias ~ U(-1/sqrt(in), 1/sqrt(in)).
  void reset_parameters();

  LinearOptions options;  ///< the options it was built with
  Tensor weight;          ///< (out_features, in_features)
  Tensor bias;            ///< (out_features), undefined without bias
};

// ---- convolutions -------------------------------------------------------------------------------

/// Options of Conv1d/2d/3d: `Conv2dOptions(in, out, 3).stride(2).padding(1).groups(2).bias(false)`.
struct ConvOptions {
  /// in_channels -> out_channels with a kernel (one size for every dim, or one per dim).
  ConvOptions(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  /// Window step (default 1).
  ConvOptions& stride(IntList v) { stride_ = std::move(v); return *this; }
  /// Padding sizes per dim, or "same" / "valid" (default 0).
  ConvOptions& padding(Padding v) { padding_ = std::move(v); return *this; }
  /// Spacing of kernel taps (default 1).
  ConvOptions& dilation(IntList v) { dilation_ = std::move(v); return *this; }
  /// Number of channel groups (default 1); must divide both channel counts.
  ConvOptions& groups(std::int64_t v) { groups_ = v; return *this; }
  /// Whether the layer adds a learned bias (default true).
  ConvOptions& bias(bool v) { bias_ = v; return *this; }
  /// How the border is padded (default zeros).
  ConvOptions& padding_mode(PaddingMode v) { padding_mode_ = v; return *this; }
  /// Parameter dtype (default float32).
  ConvOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t in_channels() const { return in_channels_; }    ///< input channels
  std::int64_t out_channels() const { return out_channels_; }  ///< output channels
  const IntList& kernel_size() const { return kernel_size_; }  ///< kernel size
  const IntList& stride() const { return stride_; }            ///< stride
  const Padding& padding() const { return padding_; }          ///< padding
  const IntList& dilation() const { return dilation_; }        ///< dilation
  std::int64_t groups() const { return groups_; }              ///< groups
  bool bias() const { return bias_; }                          ///< learned bias on
  PaddingMode padding_mode() const { return padding_mode_; }   ///< padding mode
  Dtype dtype() const { return dtype_; }                       ///< parameter dtype

  std::int64_t in_channels_;   ///< see in_channels()
  std::int64_t out_channels_;  ///< see out_channels()
  IntList kernel_size_;        ///< see kernel_size()
  IntList stride_ = 1;         ///< see stride()
  Padding padding_ = 0;        ///< see padding()
  IntList dilation_ = 1;       ///< see dilation()
  std::int64_t groups_ = 1;    ///< see groups()
  bool bias_ = true;           ///< see bias()
  PaddingMode padding_mode_ = PaddingMode::zeros;  ///< see padding_mode()
  Dtype dtype_ = Dtype::Float32;                   ///< see dtype()
};
using Conv1dOptions = ConvOptions;  ///< options of Conv1d
using Conv2dOptions = ConvOptions;  ///< options of Conv2d
using Conv3dOptions = ConvOptions;  ///< options of Conv3d

/// Convolution over `ndim` spatial dims (base of Conv1d/2d/3d): weight (out, in / groups, *kernel), bias (out).
class ConvNd : public Module {
 public:
  /// Validates the options and initialises the parameters as PyTorch does; `name` is the class name.
  ConvNd(std::string name, std::int64_t ndim, const ConvOptions& options);
  /// x (N, C_in, *spatial) or (C_in, *spatial) -> (N, C_out, *spatial_out).
  Tensor forward(const Tensor& x) override;
  /// "3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)" (non-default fields only, as torch).
  std::string extra_repr() const override;
  /// Redraws weight ~ kaiming_uniform(a = sqrt(5)) and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  void reset_parameters();
  /// Number of spatial dims.
  std::int64_t ndim() const { return ndim_; }
  /// Kernel size per spatial dim.
  const Shape& kernel_size() const { return kernel_; }

  ConvOptions options;  ///< the options it was built with
  Tensor weight;        ///< (out_channels, in_channels / groups, *kernel_size)
  Tensor bias;          ///< (out_channels), undefined without bias

 private:
  std::int64_t ndim_;
  Shape kernel_, stride_, dilation_;
};

/// 1-D convolution over (N, C, L).
class Conv1d : public ConvNd {
 public:
  /// A layer from options.
  explicit Conv1d(const Conv1dOptions& options) : ConvNd("Conv1d", 1, options) {}
  /// Conv1d(Conv1dOptions(in, out, kernel_size)).
  Conv1d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : Conv1d(Conv1dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

/// 2-D convolution over (N, C, H, W).
class Conv2d : public ConvNd {
 public:
  /// A layer from options.
  explicit Conv2d(const Conv2dOptions& options) : ConvNd("Conv2d", 2, options) {}
  /// Conv2d(Conv2dOptions(in, out, kernel_size)).
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : Conv2d(Conv2dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

/// 3-D convolution over (N, C, D, H, W).
class Conv3d : public ConvNd {
 public:
  /// A layer from options.
  explicit Conv3d(const Conv3dOptions& options) : ConvNd("Conv3d", 3, options) {}
  /// Conv3d(Conv3dOptions(in, out, kernel_size)).
  Conv3d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : Conv3d(Conv3dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

/// Options of a transposed convolution layer (torch.nn.ConvTranspose1d/2d/3d's arguments).
struct ConvTransposeOptions {
  /// in_channels -> out_channels with a kernel (one size for every dim, or one per dim).
  ConvTransposeOptions(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  /// Step of the convolution this one transposes (default 1).
  ConvTransposeOptions& stride(IntList v) { stride_ = std::move(v); return *this; }
  /// dilation (k - 1) - padding zeros taken off both sides of the output (default 0).
  ConvTransposeOptions& padding(IntList v) { padding_ = std::move(v); return *this; }
  /// Extra size on one side of the output, smaller than the stride or the dilation (default 0).
  ConvTransposeOptions& output_padding(IntList v) { output_padding_ = std::move(v); return *this; }
  /// Number of channel groups (default 1); must divide both channel counts.
  ConvTransposeOptions& groups(std::int64_t v) { groups_ = v; return *this; }
  /// Whether the layer adds a learned bias (default true).
  ConvTransposeOptions& bias(bool v) { bias_ = v; return *this; }
  /// Spacing of kernel taps (default 1).
  ConvTransposeOptions& dilation(IntList v) { dilation_ = std::move(v); return *this; }
  /// Parameter dtype (default float32).
  ConvTransposeOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t in_channels() const { return in_channels_; }        ///< input channels
  std::int64_t out_channels() const { return out_channels_; }      ///< output channels
  const IntList& kernel_size() const { return kernel_size_; }      ///< kernel size
  const IntList& stride() const { return stride_; }                ///< stride
  const IntList& padding() const { return padding_; }              ///< padding
  const IntList& output_padding() const { return output_padding_; }  ///< output padding
  std::int64_t groups() const { return groups_; }                  ///< groups
  bool bias() const { return bias_; }                              ///< learned bias on
  const IntList& dilation() const { return dilation_; }            ///< dilation
  Dtype dtype() const { return dtype_; }                           ///< parameter dtype

  std::int64_t in_channels_;     ///< see in_channels()
  std::int64_t out_channels_;    ///< see out_channels()
  IntList kernel_size_;          ///< see kernel_size()
  IntList stride_ = 1;           ///< see stride()
  IntList padding_ = 0;          ///< see padding()
  IntList output_padding_ = 0;   ///< see output_padding()
  std::int64_t groups_ = 1;      ///< see groups()
  bool bias_ = true;             ///< see bias()
  IntList dilation_ = 1;         ///< see dilation()
  Dtype dtype_ = Dtype::Float32;  ///< see dtype()
};
using ConvTranspose1dOptions = ConvTransposeOptions;  ///< options of ConvTranspose1d
using ConvTranspose2dOptions = ConvTransposeOptions;  ///< options of ConvTranspose2d
using ConvTranspose3dOptions = ConvTransposeOptions;  ///< options of ConvTranspose3d

/// Transposed convolution over `ndim` spatial dims (base of ConvTranspose1d/2d/3d): weight
/// (in, out / groups, *kernel), bias (out).
class ConvTransposeNd : public Module {
 public:
  /// Validates the options and initialises the parameters as PyTorch does; `name` is the class name.
  ConvTransposeNd(std::string name, std::int64_t ndim, const ConvTransposeOptions& options);
  /// x (N, C_in, *spatial) or (C_in, *spatial) -> (N, C_out, *spatial_out).
  Tensor forward(const Tensor& x) override;
  /// forward with the output_padding that makes the output's spatial size `output_size` (the spatial sizes,
  /// or the whole shape); throws when no output_padding below the stride gives it.
  Tensor forward(const Tensor& x, const Shape& output_size);
  /// "16, 8, kernel_size=(2, 2), stride=(2, 2)" (non-default fields only, as torch).
  std::string extra_repr() const override;
  /// Redraws weight ~ kaiming_uniform(a = sqrt(5)) and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with torch's
  /// fan_in of the transposed weight (out / groups * kernel elements).
  void reset_parameters();
  /// Number of spatial dims.
  std::int64_t ndim() const { return ndim_; }

  ConvTransposeOptions options;  ///< the options it was built with
  Tensor weight;                 ///< (in_channels, out_channels / groups, *kernel_size)
  Tensor bias;                   ///< (out_channels), undefined without bias

 private:
  std::int64_t ndim_;
  Shape kernel_, stride_, padding_, output_padding_, dilation_;
};

/// 1-D transposed convolution over (N, C, L).
class ConvTranspose1d : public ConvTransposeNd {
 public:
  /// A layer from options.
  explicit ConvTranspose1d(const ConvTranspose1dOptions& options) : ConvTransposeNd("ConvTranspose1d", 1, options) {}
  /// ConvTranspose1d(ConvTranspose1dOptions(in, out, kernel_size)).
  ConvTranspose1d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : ConvTranspose1d(ConvTranspose1dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

/// 2-D transposed convolution over (N, C, H, W).
class ConvTranspose2d : public ConvTransposeNd {
 public:
  /// A layer from options.
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options) : ConvTransposeNd("ConvTranspose2d", 2, options) {}
  /// ConvTranspose2d(ConvTranspose2dOptions(in, out, kernel_size)).
  ConvTranspose2d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : ConvTranspose2d(ConvTranspose2dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

/// 3-D transposed convolution over (N, C, D, H, W).
class ConvTranspose3d : public ConvTransposeNd {
 public:
  /// A layer from options.
  explicit ConvTranspose3d(const ConvTranspose3dOptions& options) : ConvTransposeNd("ConvTranspose3d", 3, options) {}
  /// ConvTranspose3d(ConvTranspose3dOptions(in, out, kernel_size)).
  ConvTranspose3d(std::int64_t in_channels, std::int64_t out_channels, IntList kernel_size)
      : ConvTranspose3d(ConvTranspose3dOptions(in_channels, out_channels, std::move(kernel_size))) {}
};

// ---- parameter-free layers ----------------------------------------------------------------------

/// Returns its input.
class Identity : public Module {
 public:
  /// An identity layer.
  Identity() : Module("Identity") {}
  /// x.
  Tensor forward(const Tensor& x) override { return x; }
};

/// Inverted dropout in training mode (seeded by the default generator, see manual_seed); identity in eval mode.
class Dropout : public Module {
 public:
  /// Zeros elements with probability p in [0, 1].
  explicit Dropout(double p = 0.5);
  /// functional::dropout(x, p, is_training()).
  Tensor forward(const Tensor& x) override;
  /// "p=0.5".
  std::string extra_repr() const override;
  double p;  ///< drop probability
};

/// max(x, 0).
class ReLU : public Module {
 public:
  /// A ReLU layer.
  ReLU() : Module("ReLU") {}
  /// relu(x).
  Tensor forward(const Tensor& x) override;
};

/// GELU, exact ("none") or with the tanh approximation ("tanh").
class GELU : public Module {
 public:
  /// approximate is "none" or "tanh".
  explicit GELU(std::string approximate = "none");
  /// gelu(x).
  Tensor forward(const Tensor& x) override;
  /// "approximate='none'".
  std::string extra_repr() const override;
  std::string approximate;  ///< "none" or "tanh"
};

/// tanh(x).
class Tanh : public Module {
 public:
  /// A Tanh layer.
  Tanh() : Module("Tanh") {}
  /// tanh(x).
  Tensor forward(const Tensor& x) override;
};

/// x * sigmoid(x).
class SiLU : public Module {
 public:
  /// A SiLU layer.
  SiLU() : Module("SiLU") {}
  /// silu(x).
  Tensor forward(const Tensor& x) override;
};

/// 1 / (1 + e^-x).
class Sigmoid : public Module {
 public:
  /// A Sigmoid layer.
  Sigmoid() : Module("Sigmoid") {}
  /// sigmoid(x).
  Tensor forward(const Tensor& x) override;
};

/// log(1 + e^(beta x)) / beta, linear above beta x > threshold.
class Softplus : public Module {
 public:
  /// A Softplus layer.
  explicit Softplus(double beta = 1.0, double threshold = 20.0);
  /// softplus(x, beta, threshold).
  Tensor forward(const Tensor& x) override;
  /// "beta=1, threshold=20".
  std::string extra_repr() const override;
  double beta;       ///< sharpness
  double threshold;  ///< linear above this value of beta x
};

// ---- containers -----------------------------------------------------------------------------------

/// Runs its modules one after the other; they are named "0", "1", ... (so parameters are "0.weight").
class Sequential : public Module {
 public:
  /// An empty sequence.
  Sequential() : Module("Sequential") {}
  /// A sequence of the given modules.
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  /// A sequence of the given modules.
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  /// Appends a module named after its position.
  Sequential& push_back(std::shared_ptr<Module> module);
  /// Appends a module under `name`.
  Sequential& push_back(const std::string& name, std::shared_ptr<Module> module);
  /// The i-th module.
  std::shared_ptr<Module> operator[](std::size_t i) const;
  /// The i-th module as type M (throws if it is not an M).
  template <class M>
  std::shared_ptr<M> at(std::size_t i) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!m) throw Error(name(), "module " + std::to_string(i) + " is a " + (*this)[i]->name() + ", not the requested type");
    return m;
  }
  /// Number of modules.
  std::size_t size() const { return modules_.size(); }
  /// True when empty.
  bool empty() const { return modules_.empty(); }
  /// Feeds x through every module in order (x itself when empty).
  Tensor forward(const Tensor& x) override;

 protected:
  /// An empty sequence printed as `name` (for subclasses such as MLP).
  explicit Sequential(std::string name) : Module(std::move(name)) {}

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

/// A list of submodules named "0", "1", ...; it has no forward of its own.
class ModuleList : public Module {
 public:
  /// An empty list.
  ModuleList() : Module("ModuleList") {}
  /// A list of the given modules.
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
  /// Appends a module.
  ModuleList& push_back(std::shared_ptr<Module> module);
  /// The i-th module.
  std::shared_ptr<Module> operator[](std::size_t i) const;
  /// Number of modules.
  std::size_t size() const { return modules_.size(); }
  /// True when empty.
  bool empty() const { return modules_.empty(); }
  /// First module (iteration).
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  /// Past the last module (iteration).
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// ---- MLP ---------------------------------------------------------------------------------------------

/// Activation layers MLP can build.
enum class Activation { relu, gelu, gelu_tanh, tanh, silu, sigmoid, softplus, identity };
/// A fresh activation module of the given kind.
std::shared_ptr<Module> make_activation(Activation kind);
/// Builds a fresh module (e.g. a custom activation) each time it is called.
using ModuleFactory = std::function<std::shared_ptr<Module>()>;

/// Options of MLP: `MLPOptions(in, {hidden, hidden, out}).activation(Activation::gelu).dropout(0.1)`.
struct MLPOptions {
  /// in_features, then the output size of every Linear (the last one is the output size).
  MLPOptions(std::int64_t in_features, Shape hidden_features)
      : in_features_(in_features), hidden_features_(std::move(hidden_features)) {}
  /// Activation after every Linear but the last (default relu).
  MLPOptions& activation(Activation v) { activation_ = v; factory_ = nullptr; return *this; }
  /// Custom activation: `factory` builds one module per hidden layer.
  MLPOptions& activation(ModuleFactory factory) { factory_ = std::move(factory); return *this; }
  /// Dropout probability after every activation and after the last Linear (default 0).
  MLPOptions& dropout(double v) { dropout_ = v; return *this; }
  /// Learned biases in the Linear layers (default true).
  MLPOptions& bias(bool v) { bias_ = v; return *this; }
  /// Parameter dtype (default float32).
  MLPOptions& dtype(Dtype v) { dtype_ = v; return *this; }
  std::int64_t in_features() const { return in_features_; }        ///< input size
  const Shape& hidden_features() const { return hidden_features_; } ///< output sizes of the Linears
  Activation activation() const { return activation_; }             ///< built-in activation
  const ModuleFactory& activation_factory() const { return factory_; }  ///< custom activation (may be empty)
  double dropout() const { return dropout_; }                       ///< dropout probability
  bool bias() const { return bias_; }                               ///< biases on
  Dtype dtype() const { return dtype_; }                            ///< parameter dtype

  std::int64_t in_features_;            ///< see in_features()
  Shape hidden_features_;               ///< see hidden_features()
  Activation activation_ = Activation::relu;  ///< see activation()
  ModuleFactory factory_;               ///< see activation_factory()
  double dropout_ = 0.0;                ///< see dropout()
  bool bias_ = true;                    ///< see bias()
  Dtype dtype_ = Dtype::Float32;        ///< see dtype()
};

/// Multi-layer perceptron on the last dim, laid out as torchvision.ops.MLP:
/// [Linear, activation, Dropout] per hidden layer, then Linear, Dropout (children "0", "1", ...).
class MLP : public Sequential {
 public:
  /// Builds the layers.
  explicit MLP(const MLPOptions& options);
  MLPOptions options;  ///< the options it was built with
};

}  // namespace phasor::nn
