// phasor/autodiff/functional.hpp - the functional transforms of torch.autograd.functional: vjp, jvp, jacobian,
// hessian, vhp and hvp of a function of tensors, for several inputs and outputs or one tensor
// (Note [functional transforms] in src/autodiff/functional.cpp).
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::autodiff {

/// A function of several tensors to several tensors, as the functional transforms take it.
using TensorsFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
/// A function of several tensors to one single-element tensor (hessian, vhp, hvp).
using ScalarFn = std::function<Tensor(const std::vector<Tensor>&)>;
/// A function of one tensor to one tensor (the single-tensor forms of the transforms).
using UnaryFn = std::function<Tensor(const Tensor&)>;

/// How jacobian and hessian build a Jacobian: a backward pass per output element (rows), or a forward-mode
/// product per input element (columns; cheaper when inputs are much fewer than outputs).
enum class JacobianStrategy { reverse_mode, forward_mode };

/// (fn(inputs), v^T J): one vector-Jacobian product per input (torch.autograd.functional.vjp). v holds one
/// tensor per output, shaped as it; it may be left empty when fn returns one single-element tensor (v = 1).
/// create_graph: the results stay differentiable (else they are detached); strict: an input that no output
/// depends on throws (else its product is zeros).
std::pair<std::vector<Tensor>, std::vector<Tensor>> vjp(const TensorsFn& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);
/// vjp of a function of one tensor.
std::pair<Tensor, Tensor> vjp(const UnaryFn& fn, const Tensor& x, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
/// (fn(inputs), J v): one Jacobian-vector product per output (torch.autograd.functional.jvp, forward mode by
/// the double-backward trick). v holds one tensor per input, shaped as it; it may be left empty when there is
/// one single-element input. Real floating inputs and outputs. strict: an output that depends on no input throws.
std::pair<std::vector<Tensor>, std::vector<Tensor>> jvp(const TensorsFn& fn, const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& v = {}, bool create_graph = false,
                                                        bool strict = false);
/// jvp of a function of one tensor.
std::pair<Tensor, Tensor> jvp(const UnaryFn& fn, const Tensor& x, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
/// J[i][j] = d outputs[i] / d inputs[j], of shape outputs[i].shape + inputs[j].shape
/// (torch.autograd.functional.jacobian). Real floating inputs and outputs.
std::vector<std::vector<Tensor>> jacobian(const TensorsFn& fn, const std::vector<Tensor>& inputs,
                                          bool create_graph = false, bool strict = false,
                                          JacobianStrategy strategy = JacobianStrategy::reverse_mode);
/// The Jacobian of a function of one tensor, of shape fn(x).shape + x.shape.
Tensor jacobian(const UnaryFn& fn, const Tensor& x, bool create_graph = false, bool strict = false,
                JacobianStrategy strategy = JacobianStrategy::reverse_mode);
/// H[i][j] = d^2 fn / d inputs[i] d inputs[j], of shape inputs[i].shape + inputs[j].shape, for fn with one
/// single-element output (torch.autograd.functional.hessian); `outer` builds the Jacobian of the gradient.
std::vector<std::vector<Tensor>> hessian(const ScalarFn& fn, const std::vector<Tensor>& inputs,
                                         bool create_graph = false, bool strict = false,
                                         JacobianStrategy outer = JacobianStrategy::reverse_mode);
/// The Hessian of a function of one tensor, of shape x.shape + x.shape.
Tensor hessian(const UnaryFn& fn, const Tensor& x, bool create_graph = false, bool strict = false,
               JacobianStrategy outer = JacobianStrategy::reverse_mode);
/// (fn(inputs), v^T H): one tensor per input, two backward passes (torch.autograd.functional.vhp).
std::pair<Tensor, std::vector<Tensor>> vhp(const ScalarFn& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);
/// vhp of a function of one tensor.
std::pair<Tensor, Tensor> vhp(const UnaryFn& fn, const Tensor& x, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);
/// (fn(inputs), H v): one tensor per input, three backward passes (torch.autograd.functional.hvp); equal to
/// vhp's for twice continuously differentiable fn, whose Hessian is symmetric.
std::pair<Tensor, std::vector<Tensor>> hvp(const ScalarFn& fn, const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& v = {}, bool create_graph = false,
                                           bool strict = false);
/// hvp of a function of one tensor.
std::pair<Tensor, Tensor> hvp(const UnaryFn& fn, const Tensor& x, const Tensor& v = Tensor(),
                              bool create_graph = false, bool strict = false);

}  // namespace phasor::autodiff
