// src/nn/init.cpp - torch.nn.init: in-place fills under NoGradGuard (same formulas as PyTorch).
#include "phasor/nn/init.hpp"

#include <cmath>
#include <sstream>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn::init {
namespace {

void check_tensor(const Tensor& t, const char* op) {
  if (!t.defined()) throw Error(op, "tensor is undefined");
  if (!is_floating_or_complex(t.dtype()))
    throw Error(op, std::string("expected a floating or complex tensor, got ") + dtype_name(t.dtype()) + " of shape " +
                        detail::shape_str(t.shape()));
}

/// Writes `make(real_shape_dtype)` into t (into both parts of a complex t), without recording.
template <class Make>
Tensor& fill_random(Tensor& t, Make&& make) {
  NoGradGuard ng;
  const Dtype rdt = to_real(t.dtype());
  if (t.is_complex()) {
    Tensor re = t.real(), im = t.imag();
    re.copy_(make(rdt));
    im.copy_(make(rdt));
  } else {
    t.copy_(make(rdt));
  }
  return t;
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

double calculate_gain(const std::string& nl, std::optional<double> param) {
  if (nl == "linear" || nl == "conv1d" || nl == "conv2d" || nl == "conv3d" || nl == "conv_transpose1d" ||
      nl == "conv_transpose2d" || nl == "conv_transpose3d" || nl == "sigmoid")
    return 1.0;
  if (nl == "tanh") return 5.0 / 3.0;
  if (nl == "relu") return std::sqrt(2.0);
  if (nl == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nl == "selu") return 3.0 / 4.0;
  throw Error("calculate_gain", "unsupported nonlinearity '" + nl + "'");
}

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (!t.defined()) throw Error("calculate_fan_in_and_fan_out", "tensor is undefined");
  if (t.dim() < 2)
    throw Error("calculate_fan_in_and_fan_out",
                "fan in and fan out can not be computed for a tensor with fewer than 2 dims, got " +
                    detail::shape_str(t.shape()));
  std::int64_t receptive = 1;
  for (std::int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

Tensor& uniform_(Tensor& t, double a, double b, Generator* gen) {
  check_tensor(t, "uniform_");
  if (!(a <= b)) throw Error("uniform_", "expected a <= b, got a=" + num(a) + " and b=" + num(b));
  return fill_random(t, [&](Dtype dt) { return rand(t.shape(), dt, t.device(), gen) * (b - a) + a; });
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  check_tensor(t, "normal_");
  if (!(std >= 0)) throw Error("normal_", "expected std >= 0, got " + num(std));
  return fill_random(t, [&](Dtype dt) { return randn(t.shape(), dt, t.device(), gen) * std + mean; });
}

Tensor& constant_(Tensor& t, double value) {
  if (!t.defined()) throw Error("constant_", "tensor is undefined");
  NoGradGuard ng;
  t.fill_(Scalar(value));
  return t;
}

Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  check_tensor(t, "xavier_uniform_");
  const auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  if (t.numel() == 0) return t;  // as torch: initializing a zero-element tensor is a no-op
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(fi + fo));
  return uniform_(t, -bound, bound, gen);
}

Tensor& xavier_normal_(Tensor& t, double gain, Generator* gen) {
  check_tensor(t, "xavier_normal_");
  const auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  if (t.numel() == 0) return t;
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fi + fo)), gen);
}

namespace {
double kaiming_std(const char* op, const Tensor& t, double a, FanMode mode, const std::string& nl) {
  check_tensor(t, op);
  const auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  const std::int64_t fan = mode == FanMode::fan_in ? fi : fo;
  if (fan == 0) return 0.0;  // zero-element tensor: nothing to fill
  return calculate_gain(nl, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, const std::string& nl, Generator* gen) {
  const double bound = std::sqrt(3.0) * kaiming_std("kaiming_uniform_", t, a, mode, nl);
  return uniform_(t, -bound, bound, gen);
}

Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, const std::string& nl, Generator* gen) {
  return normal_(t, 0.0, kaiming_std("kaiming_normal_", t, a, mode, nl), gen);
}

}  // namespace phasor::nn::init
