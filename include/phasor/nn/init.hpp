// phasor/nn/init.hpp - parameter initialisers (torch.nn.init): fill a tensor in place without
// recording gradients. Complex tensors get independent real and imaginary parts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "phasor/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::nn::init {

/// Which fan the Kaiming initialisers preserve the variance of.
enum class FanMode { fan_in, fan_out };

/// Recommended gain for a nonlinearity ("linear", "conv1d/2d/3d", "conv_transpose1d/2d/3d", "sigmoid",
/// "tanh", "relu", "leaky_relu" (param = negative slope, default 0.01), "selu").
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);
/// (fan_in, fan_out) of a weight of shape (out, in, *kernel): in * prod(kernel), out * prod(kernel).
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

/// Fills with U(a, b).
Tensor& uniform_(Tensor& tensor, double a = 0.0, double b = 1.0, Generator* gen = nullptr);
/// Fills with N(mean, std^2).
Tensor& normal_(Tensor& tensor, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// Fills with `value`.
Tensor& constant_(Tensor& tensor, double value);
/// Fills with zeros.
Tensor& zeros_(Tensor& tensor);
/// Fills with ones.
Tensor& ones_(Tensor& tensor);
/// Glorot uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor& xavier_uniform_(Tensor& tensor, double gain = 1.0, Generator* gen = nullptr);
/// Glorot normal: N(0, s^2), s = gain * sqrt(2 / (fan_in + fan_out)).
Tensor& xavier_normal_(Tensor& tensor, double gain = 1.0, Generator* gen = nullptr);
/// He uniform: U(-b, b), b = sqrt(3) * calculate_gain(nonlinearity, a) / sqrt(fan).
Tensor& kaiming_uniform_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::fan_in,
                         const std::string& nonlinearity = "leaky_relu", Generator* gen = nullptr);
/// He normal: N(0, s^2), s = calculate_gain(nonlinearity, a) / sqrt(fan).
Tensor& kaiming_normal_(Tensor& tensor, double a = 0.0, FanMode mode = FanMode::fan_in,
                        const std::string& nonlinearity = "leaky_relu", Generator* gen = nullptr);

}  // namespace phasor::nn::init
