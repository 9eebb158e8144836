// src/core/device_check.cpp - check_device_value, check_index_values and first_where (see device_check.hpp).
#include "core/device_check.hpp"

#include <cstring>

#include "core/index_ops.hpp"
#include "cuda/graph.hpp"
#include "cuda/index_ops.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor::detail {

namespace {

/// A 0-d check value as a contiguous float64 tensor on `device` (undefined stays undefined).
Tensor as_word(const Tensor& t, Device device, const char* op) {
  if (!t.defined()) return t;
  if (t.numel() != 1 || t.is_complex() || t.device() != device)
    throw Error(op, "internal: a check value must be one real number on " + device.str());
  return t.detach().reshape({}).to(float64).contiguous();
}

double as_double(std::uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

bool check_device_value(const char* op, const Tensor& bad, const CheckValues& values, const CheckMessage& message) {
  const Device device = bad.device();
  if (cuda::detail::checks_on_device(device)) {
    const Tensor flag = bad.detach().reshape({}).to(Dtype::Bool).contiguous();
    const auto [a, b] = values();
    const Tensor wa = as_word(a, device, op), wb = as_word(b, device, op);
    cuda::detail::check_flag_on_device(flag, wa, wb, op, [message](std::uint64_t x, std::uint64_t y) {
      return message(as_double(x), as_double(y));
    });
    return true;
  }
  if (!bad.detach().reshape({}).to(Dtype::Bool).item<bool>()) return false;
  const auto [a, b] = values();
  const auto value = [](const Tensor& t) { return t.defined() ? t.detach().item<double>() : 0.0; };
  throw Error(op, message(value(a), value(b)));
}

bool check_index_values(const Tensor& idx, std::int64_t lo, std::int64_t hi, const std::string& what, const char* op,
                        const char* noun) {
  if (idx.dtype() != Dtype::Int64) throw Error(op, std::string("indices must be int64, got ") + dtype_name(idx.dtype()));
  if (idx.numel() == 0) return false;
  NoGradGuard ng;
  const Tensor bad = logical_or(idx < lo, idx >= hi);
  return check_device_value(
      op, bad.any(), [&] { return std::pair<Tensor, Tensor>{first_where(idx, bad), Tensor()}; },
      [what, noun = std::string(noun)](double v, double) {
        return noun + " " + std::to_string(static_cast<std::int64_t>(v)) + " out of range " + what;
      });
}

Tensor first_where(const Tensor& t, const Tensor& bad) {
  const Tensor first = bad.reshape({-1}).to(Dtype::Int64).argmax().reshape({1});
  return index_select_trusted(t.reshape({-1}), 0, first).reshape({});
}

}  // namespace phasor::detail
