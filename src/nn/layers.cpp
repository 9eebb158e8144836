// src/nn/layers.cpp - Linear, Conv1d/2d/3d, Dropout, activations, Sequential, ModuleList, MLP.
//
// Note [default initialisation]
// As torch.nn: weight ~ kaiming_uniform_(a = sqrt(5)), i.e. U(-b, b) with b = gain * sqrt(3 / fan_in),
// gain = sqrt(2 / (1 + 5)), so b = 1 / sqrt(fan_in); bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))
// (bound 0 when fan_in is 0). fan_in = in_features, or in_channels / groups * prod(kernel).
#include "phasor/nn/layers.hpp"

#include <cmath>
#include <sstream>

#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/nn/init.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using detail::shape_str;

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_dtype(const std::string& op, Dtype dt) {
  if (!is_floating_or_complex(dt))
    throw Error(op, std::string("parameter dtype must be floating or complex, got ") + dtype_name(dt));
}

/// PyTorch's default initialisation of (weight, bias) (Note [default initialisation]).
void reset_default(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const std::int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

std::string tuple_str(const Shape& s) { return shape_str(s); }

/// A convolution layer's channel counts: positive, each divisible by the (positive) number of groups.
void check_channels(const char* op, std::int64_t in, std::int64_t out, std::int64_t g) {
  if (in <= 0 || out <= 0)
    throw Error(op, "in_channels and out_channels must be positive, got " + std::to_string(in) + " and " +
                        std::to_string(out));
  if (g < 1) throw Error(op, "groups must be >= 1, got " + std::to_string(g));
  if (in % g != 0) throw Error(op, "in_channels " + std::to_string(in) + " must be divisible by groups " + std::to_string(g));
  if (out % g != 0)
    throw Error(op, "out_channels " + std::to_string(out) + " must be divisible by groups " + std::to_string(g));
}

/// Throws naming `what` unless every entry of v is at least min.
void check_at_least(const char* op, const Shape& v, std::int64_t min, const char* what) {
  for (auto e : v)
    if (e < min) throw Error(op, std::string(what) + " must be >= " + std::to_string(min) + ", got " + tuple_str(v));
}

}  // namespace

// ---- Linear --------------------------------------------------------------------------------------

Linear::Linear(const LinearOptions& o) : Module("Linear"), options(o) {
  if (o.in_features() < 0 || o.out_features() < 0)
    throw Error("Linear", "in_features and out_features must be >= 0, got " + std::to_string(o.in_features()) +
                              " and " + std::to_string(o.out_features()));
  check_dtype("Linear", o.dtype());
  weight = register_parameter("weight", empty({o.out_features(), o.in_features()}, o.dtype()));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}, o.dtype()));
  reset_parameters();
}

Linear::Linear(std::int64_t in, std::int64_t out, bool has_bias, Dtype dtype)
    : Linear(LinearOptions(in, out).bias(has_bias).dtype(dtype)) {}

void Linear::reset_parameters() { reset_default(weight, bias); }

Tensor Linear::forward(const Tensor& x) {
  if (!x.defined()) throw Error("Linear", "input is undefined");
  if (x.dim() < 1 || x.size(-1) != options.in_features())
    throw Error("Linear", "expected input with " + std::to_string(options.in_features()) +
                              " features in the last dim, got " + shape_str(x.shape()));
  return functional::linear(x, weight, bias);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) + ", out_features=" +
         std::to_string(options.out_features()) + ", bias=" + (bias.defined() ? "true" : "false");
}

// ---- convolutions -------------------------------------------------------------------------------

ConvNd::ConvNd(std::string name, std::int64_t ndim, const ConvOptions& o)
    : Module(std::move(name)), options(o), ndim_(ndim) {
  const char* op = this->name().c_str();
  const std::int64_t in = o.in_channels(), out = o.out_channels(), g = o.groups();
  check_channels(op, in, out, g);
  kernel_ = o.kernel_size().expand(ndim, op, "kernel_size");
  stride_ = o.stride().expand(ndim, op, "stride");
  dilation_ = o.dilation().expand(ndim, op, "dilation");
  check_at_least(op, kernel_, 1, "kernel_size");
  check_at_least(op, stride_, 1, "stride");
  check_at_least(op, dilation_, 1, "dilation");
  if (o.padding().kind == Padding::Kind::sizes) {
    check_at_least(op, IntList(o.padding().values).expand(ndim, op, "padding"), 0, "padding");
  } else if (o.padding().kind == Padding::Kind::same) {
    for (auto s : stride_)
      if (s != 1)
        throw Error(op, "padding='same' is not supported for strided convolutions (stride " + tuple_str(stride_) + ")");
  }
  check_dtype(op, o.dtype());
  Shape ws{out, in / g};
  ws.insert(ws.end(), kernel_.begin(), kernel_.end());
  weight = register_parameter("weight", empty(ws, o.dtype()));
  if (o.bias()) bias = register_parameter("bias", empty({out}, o.dtype()));
  reset_parameters();
}

void ConvNd::reset_parameters() { reset_default(weight, bias); }

Tensor ConvNd::forward(const Tensor& x) {
  const char* op = name().c_str();
  if (!x.defined()) throw Error(op, "input is undefined");
  if (x.dim() != ndim_ + 1 && x.dim() != ndim_ + 2)
    throw Error(op, "expected a " + std::to_string(ndim_ + 1) + "-D (unbatched) or " + std::to_string(ndim_ + 2) +
                        "-D (batched) input, got " + shape_str(x.shape()));
  const std::int64_t c = x.size(x.dim() == ndim_ + 2 ? 1 : 0);
  if (c != options.in_channels())
    throw Error(op, "expected input with " + std::to_string(options.in_channels()) + " channels, got " +
                        shape_str(x.shape()));
  return functional::conv_nd(x, weight, bias, stride_, options.padding(), dilation_, options.groups(),
                             options.padding_mode(), op);
}

std::string ConvNd::extra_repr() const {
  std::string s = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                  ", kernel_size=" + tuple_str(kernel_) + ", stride=" + tuple_str(stride_);
  const Padding& p = options.padding();
  if (p.kind != Padding::Kind::sizes) {
    s += ", padding=" + p.str(ndim_);
  } else {
    const Shape ps = IntList(p.values).expand(ndim_, "Conv", "padding");
    bool nonzero = false;
    for (auto v : ps) nonzero = nonzero || v != 0;
    if (nonzero) s += ", padding=" + tuple_str(ps);
  }
  bool dil = false;
  for (auto v : dilation_) dil = dil || v != 1;
  if (dil) s += ", dilation=" + tuple_str(dilation_);
  if (options.groups() != 1) s += ", groups=" + std::to_string(options.groups());
  if (!bias.defined()) s += ", bias=false";
  if (options.padding_mode() != PaddingMode::zeros) s += std::string(", padding_mode=") + padding_mode_name(options.padding_mode());
  return s;
}

// ---- ConvTranspose ------------------------------------------------------------------------------

ConvTransposeNd::ConvTransposeNd(std::string name, std::int64_t ndim, const ConvTransposeOptions& o)
    : Module(std::move(name)), options(o), ndim_(ndim) {
  const char* op = this->name().c_str();
  const std::int64_t in = o.in_channels(), out = o.out_channels(), g = o.groups();
  check_channels(op, in, out, g);
  kernel_ = o.kernel_size().expand(ndim, op, "kernel_size");
  stride_ = o.stride().expand(ndim, op, "stride");
  padding_ = o.padding().expand(ndim, op, "padding");
  output_padding_ = o.output_padding().expand(ndim, op, "output_padding");
  dilation_ = o.dilation().expand(ndim, op, "dilation");
  check_at_least(op, kernel_, 1, "kernel_size");
  check_at_least(op, stride_, 1, "stride");
  check_at_least(op, dilation_, 1, "dilation");
  check_at_least(op, padding_, 0, "padding");
  check_at_least(op, output_padding_, 0, "output_padding");
  for (std::int64_t d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (output_padding_[i] >= stride_[i] && output_padding_[i] >= dilation_[i])
      throw Error(op, "output_padding " + tuple_str(output_padding_) + " must be smaller than the stride " +
                          tuple_str(stride_) + " or the dilation " + tuple_str(dilation_));
  }
  check_dtype(op, o.dtype());
  Shape ws{in, out / g};
  ws.insert(ws.end(), kernel_.begin(), kernel_.end());
  weight = register_parameter("weight", empty(ws, o.dtype()));
  if (o.bias()) bias = register_parameter("bias", empty({out}, o.dtype()));
  reset_parameters();
}

void ConvTransposeNd::reset_parameters() { reset_default(weight, bias); }

Tensor ConvTransposeNd::forward(const Tensor& x) {
  const char* op = name().c_str();
  if (!x.defined()) throw Error(op, "input is undefined");
  return functional::conv_transpose_nd(x, weight, bias, stride_, padding_, output_padding_, options.groups(), dilation_,
                                       op);
}

Tensor ConvTransposeNd::forward(const Tensor& x, const Shape& output_size) {
  const char* op = name().c_str();
  if (!x.defined()) throw Error(op, "input is undefined");
  if (x.dim() != ndim_ + 1 && x.dim() != ndim_ + 2)
    throw Error(op, "expected a " + std::to_string(ndim_ + 1) + "-D (unbatched) or " + std::to_string(ndim_ + 2) +
                        "-D (batched) input, got " + shape_str(x.shape()));
  Shape os = output_size;
  if (static_cast<std::int64_t>(os.size()) == x.dim()) os.erase(os.begin(), os.end() - ndim_);
  if (static_cast<std::int64_t>(os.size()) != ndim_)
    throw Error(op, "output_size must have " + std::to_string(ndim_) + " or " + std::to_string(x.dim()) +
                        " elements, got " + tuple_str(output_size));
  Shape op_pad(static_cast<std::size_t>(ndim_));
  for (std::int64_t d = 0; d < ndim_; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const std::int64_t in = x.size(x.dim() - ndim_ + d);
    const std::int64_t lo = (in - 1) * stride_[i] - 2 * padding_[i] + dilation_[i] * (kernel_[i] - 1) + 1;
    const std::int64_t hi = lo + stride_[i] - 1;
    if (os[i] < lo || os[i] > hi)
      throw Error(op, "requested an output size of " + tuple_str(os) + ", but valid sizes along dim " +
                          std::to_string(d) + " range from " + std::to_string(lo) + " to " + std::to_string(hi) +
                          " (for an input of " + shape_str(x.shape()) + ")");
    op_pad[i] = os[i] - lo;
  }
  return functional::conv_transpose_nd(x, weight, bias, stride_, padding_, op_pad, options.groups(), dilation_, op);
}

std::string ConvTransposeNd::extra_repr() const {
  std::string s = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                  ", kernel_size=" + tuple_str(kernel_) + ", stride=" + tuple_str(stride_);
  auto nonzero = [](const Shape& v, std::int64_t base) {
    for (auto e : v)
      if (e != base) return true;
    return false;
  };
  if (nonzero(padding_, 0)) s += ", padding=" + tuple_str(padding_);
  if (nonzero(output_padding_, 0)) s += ", output_padding=" + tuple_str(output_padding_);
  if (nonzero(dilation_, 1)) s += ", dilation=" + tuple_str(dilation_);
  if (options.groups() != 1) s += ", groups=" + std::to_string(options.groups());
  if (!bias.defined()) s += ", bias=false";
  return s;
}

// ---- parameter-free layers ----------------------------------------------------------------------

Dropout::Dropout(double p_) : Module("Dropout"), p(p_) {
  if (!(p >= 0.0 && p <= 1.0)) throw Error("Dropout", "p must be in [0, 1], got " + num(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!(p >= 0.0 && p <= 1.0)) throw Error("Dropout", "p must be in [0, 1], got " + num(p));
  if (!x.defined()) throw Error("Dropout", "input is undefined");
  return functional::dropout(x, p, is_training());
}

std::string Dropout::extra_repr() const { return "p=" + num(p); }

Tensor ReLU::forward(const Tensor& x) { return relu(x); }

GELU::GELU(std::string approx) : Module("GELU"), approximate(std::move(approx)) {
  if (approximate != "none" && approximate != "tanh")
    throw Error("GELU", "approximate must be 'none' or 'tanh', got '" + approximate + "'");
}

Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate == "tanh"); }

std::string GELU::extra_repr() const { return "approximate='" + approximate + "'"; }

Tensor Tanh::forward(const Tensor& x) { return tanh(x); }
Tensor SiLU::forward(const Tensor& x) { return silu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }

Softplus::Softplus(double b, double t) : Module("Softplus"), beta(b), threshold(t) {}

Tensor Softplus::forward(const Tensor& x) { return softplus(x, beta, threshold); }

std::string Softplus::extra_repr() const { return "beta=" + num(beta) + ", threshold=" + num(threshold); }

// ---- containers -----------------------------------------------------------------------------------

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) : Module("Sequential") {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) : Module("Sequential") {
  for (const auto& m : modules) push_back(m);
}

Sequential& Sequential::push_back(std::shared_ptr<Module> module) {
  return push_back(std::to_string(modules_.size()), std::move(module));
}

Sequential& Sequential::push_back(const std::string& n, std::shared_ptr<Module> module) {
  if (!module) throw Error(name(), "cannot add a null module as '" + n + "'");
  register_module(n, module);
  modules_.push_back(std::move(module));
  return *this;
}

std::shared_ptr<Module> Sequential::operator[](std::size_t i) const {
  if (i >= modules_.size())
    throw Error(name(), "index " + std::to_string(i) + " out of range for " + std::to_string(modules_.size()) +
                            " modules");
  return modules_[i];
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& m : modules_) y = m->forward(y);
  return y;
}

ModuleList::ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) : Module("ModuleList") {
  for (const auto& m : modules) push_back(m);
}

ModuleList& ModuleList::push_back(std::shared_ptr<Module> module) {
  if (!module) throw Error("ModuleList", "cannot add a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
  return *this;
}

std::shared_ptr<Module> ModuleList::operator[](std::size_t i) const {
  if (i >= modules_.size())
    throw Error("ModuleList", "index " + std::to_string(i) + " out of range for " + std::to_string(modules_.size()) +
                                  " modules");
  return modules_[i];
}

// ---- MLP ---------------------------------------------------------------------------------------------

std::shared_ptr<Module> make_activation(Activation kind) {
  switch (kind) {
    case Activation::relu: return std::make_shared<ReLU>();
    case Activation::gelu: return std::make_shared<GELU>();
    case Activation::gelu_tanh: return std::make_shared<GELU>("tanh");
    case Activation::tanh: return std::make_shared<Tanh>();
    case Activation::silu: return std::make_shared<SiLU>();
    case Activation::sigmoid: return std::make_shared<Sigmoid>();
    case Activation::softplus: return std::make_shared<Softplus>();
    case Activation::identity: return std::make_shared<Identity>();
  }
  throw Error("make_activation", "unknown activation");
}

MLP::MLP(const MLPOptions& o) : Sequential("MLP"), options(o) {
  if (o.hidden_features().empty()) throw Error("MLP", "hidden_features must name at least one layer size");
  if (o.in_features() < 0) throw Error("MLP", "in_features must be >= 0, got " + std::to_string(o.in_features()));
  for (auto h : o.hidden_features())
    if (h < 0) throw Error("MLP", "layer sizes must be >= 0, got " + shape_str(o.hidden_features()));
  if (!(o.dropout() >= 0.0 && o.dropout() <= 1.0)) throw Error("MLP", "dropout must be in [0, 1], got " + num(o.dropout()));
  std::int64_t in = o.in_features();
  const auto& hs = o.hidden_features();
  for (std::size_t i = 0; i < hs.size(); ++i) {
    push_back(std::make_shared<Linear>(LinearOptions(in, hs[i]).bias(o.bias()).dtype(o.dtype())));
    if (i + 1 < hs.size()) {
      std::shared_ptr<Module> act = o.activation_factory() ? o.activation_factory()() : make_activation(o.activation());
      if (!act) throw Error("MLP", "the activation factory returned a null module");
      push_back(act);
    }
    push_back(std::make_shared<Dropout>(o.dropout()));
    in = hs[i];
  }
}

}  // namespace phasor::nn
