// src/core/unary.cpp - elementwise unary ops: forward kernel and gradient side by side.
#include <cmath>

#include "autodiff/node.hpp"
#include "core/unary.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using detail::Ctx;
using detail::kSaveInputs;
using detail::kSaveNone;
using detail::kSaveOutputs;
using G = std::vector<Tensor>;

Tensor neg(const Tensor& x) {
  if (x.dtype() == Dtype::Bool) throw Error("neg", "negation of a bool tensor is not supported; use logical_not");
  return detail::apply_op(
      "neg", {x}, kSaveNone,
      [](const G& in) { return detail::unary_same_kernel(in[0], "neg", [](auto v) { return decltype(v)(-v); }); },
      [](const Ctx&, const G& g) { return G{-g[0]}; });
}

Tensor exp(const Tensor& x) {
  return detail::apply_op(
      "exp", {x}, kSaveOutputs,
      [](const G& in) { return detail::unary_float_kernel(in[0], "exp", [](auto v) { return std::exp(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] * c.output(0).conj()}; });
}

Tensor sin(const Tensor& x) {
  return detail::apply_op(
      "sin", {x}, kSaveInputs,
      [](const G& in) { return detail::unary_float_kernel(in[0], "sin", [](auto v) { return std::sin(v); }); },
      [](const Ctx& c, const G& g) { return G{g[0] * c.input(0).cos().conj()}; });
}

Tensor cos(const Tensor& x) {
  return detail::apply_op(
      "cos", {x}, kSaveInputs,
      [](const G& in) { return detail::unary_float_kernel(in[0], "cos", [](auto v) { return std::cos(v); }); },
      [](const Ctx& c, const G& g) { return G{-g[0] * c.input(0).sin().conj()}; });
}

Tensor tanh(const Tensor& x) {
  return detail::apply_op(
      "tanh", {x}, kSaveOutputs,
      [](const G& in) { return detail::unary_float_kernel(in[0], "tanh", [](auto v) { return std::tanh(v); }); },
      [](const Ctx& c, const G& g) {
        Tensor y = c.output(0);
        return G{g[0] * (1 - y * y).conj()};
      });
}

Tensor conj(const Tensor& x) {
  if (!x.is_complex()) return x;  // identity for real tensors (no copy)
  return detail::apply_op(
      "conj", {x}, kSaveNone,
      [](const G& in) { return detail::unary_same_kernel(in[0], "conj", [](auto v) { return std::conj(v); }); },
      [](const Ctx&, const G& g) { return G{g[0].conj()}; });
}

Tensor Tensor::neg() const { return phasor::neg(*this); }
Tensor Tensor::exp() const { return phasor::exp(*this); }
Tensor Tensor::sin() const { return phasor::sin(*this); }
Tensor Tensor::cos() const { return phasor::cos(*this); }
Tensor Tensor::tanh() const { return phasor::tanh(*this); }
Tensor Tensor::conj() const { return phasor::conj(*this); }

}  // namespace phasor
