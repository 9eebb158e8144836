// src/autodiff/functional.cpp - the functional transforms of phasor/autodiff/functional.hpp (torch.autograd.functional):
// vjp, jvp, jacobian, hessian, vhp and hvp, built on autodiff::grad.
//
// Note [functional transforms]
// Each transform calls fn on stand-ins of its inputs: the input itself when create_graph is set and it requires
// grad (so the results stay connected to its history and differentiate again), else a detached alias that
// requires grad (so nothing reaches the caller's graph or .grad()). Two linear maps serve every transform:
//   reverse(outs, xs, v)  = v^T J   one backward pass (autodiff::grad with the cotangents v);
//   Forward(outs, xs)(v)  = J v     the double-backward trick: g(u) = J^T u is built once by a backward pass
//                                   with create_graph from zero cotangents u that require grad; g is linear in
//                                   u, so its vjp in u against v is (J^T)^T v = J v, one backward pass of g's
//                                   graph per v. It needs every op's backward to be differentiable (phasor's
//                                   gradients are ops) and costs about two backward passes, built once.
// jacobian's rows (reverse_mode) are reverse(e_k) for the unit cotangents e_k of every output element; its
// columns (forward_mode) are Forward(e_c) for the unit tangents of every input element, so forward_mode wins
// when the inputs have far fewer elements than the outputs. hessian is the Jacobian of the gradient function
// x -> grad(fn(x), x) (built with create_graph); vhp = reverse(gradient, v) and hvp = Forward(gradient)(v).
// A pair that does not depend on each other contributes zeros, or throws under strict (an input no output
// depends on for the reverse maps, an output that depends on no input for the forward ones). Without
// create_graph every result is detached. jvp, jacobian, hessian, vhp and hvp take real floating tensors: a
// complex function that is not holomorphic has no complex Jacobian matrix (vjp, only a backward pass, takes
// complex ones with grad's convention). The unit vectors are made by ops (arange == k), not written into, so a
// function that calls a transform traces into a static graph that replays it.
#include <string>
#include <utility>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/autodiff/functional.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor::autodiff {

namespace {

using Tensors = std::vector<Tensor>;
using detail::shape_str;

std::string idx(std::size_t i) { return std::to_string(i); }

/// Checks that `t` (the `what` numbered i) is a defined floating (real_only: real floating) tensor.
void check_differentiable(const char* op, const Tensor& t, const char* what, std::size_t i, bool real_only) {
  if (!t.defined()) throw Error(op, std::string(what) + " " + idx(i) + " is undefined");
  if (!is_floating_or_complex(t.dtype()))
    throw Error(op, std::string(what) + " " + idx(i) + " is " + dtype_name(t.dtype()) +
                        "; only floating tensors can be differentiated");
  if (real_only && t.is_complex())
    throw Error(op, std::string(what) + " " + idx(i) + " is " + dtype_name(t.dtype()) +
                        ": a complex function that is not holomorphic has no complex Jacobian matrix; pass real "
                        "and imaginary parts as real tensors (view_as_real), or use vjp");
}

/// The tensors fn is called on (Note [functional transforms]).
Tensors stand_ins(const char* op, const Tensors& inputs, bool create_graph, bool real_only) {
  if (inputs.empty()) throw Error(op, "needs at least one input");
  Tensors xs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    check_differentiable(op, x, "input", i, real_only);
    if (create_graph && x.requires_grad()) {
      xs.push_back(x);
    } else {
      Tensor a = x.detach();
      a.requires_grad_();
      xs.push_back(a);
    }
  }
  return xs;
}

/// fn(xs) with graph recording on; its outputs checked.
Tensors call(const char* op, const TensorsFn& fn, const Tensors& xs, bool real_only) {
  Tensors outs;
  {
    EnableGradGuard eg;
    outs = fn(xs);
  }
  if (outs.empty()) throw Error(op, "the function returned no tensor");
  for (std::size_t i = 0; i < outs.size(); ++i) check_differentiable(op, outs[i], "output", i, real_only);
  return outs;
}

/// Checks the vectors v (one per `of`, "output" or "input") against the tensors they pair with; an empty v
/// stands for 1 when there is one single-element tensor.
Tensors vectors(const char* op, const Tensors& v, const Tensors& against, const char* of) {
  if (v.empty()) {
    if (against.size() != 1 || against[0].numel() != 1)
      throw Error(op, std::string("v may be left out only for one single-element ") + of + "; got " +
                          idx(against.size()) + " " + of + "s, " + of + " 0 of shape " + shape_str(against[0].shape()));
    return {ones_like(against[0].detach())};
  }
  if (v.size() != against.size())
    throw Error(op, "got " + idx(v.size()) + " tensors in v for " + idx(against.size()) + " " + of + "s");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].defined()) throw Error(op, "v[" + idx(i) + "] is undefined");
    if (v[i].shape() != against[i].shape())
      throw Error(op, "v[" + idx(i) + "] has shape " + shape_str(v[i].shape()) + " but " + of + " " + idx(i) +
                          " has shape " + shape_str(against[i].shape()));
    if (v[i].device() != against[i].device())
      throw Error(op, "v[" + idx(i) + "] is on " + v[i].device().str() + " but " + of + " " + idx(i) + " is on " +
                          against[i].device().str());
  }
  return v;
}

/// The tensors of `ts` as results: detached unless create_graph.
Tensors results(Tensors ts, bool create_graph) {
  if (!create_graph)
    for (auto& t : ts) t = t.detach();
  return ts;
}

/// v^T J: sum_i v_i^T d outs_i / d xs_j for every j; undefined where no output depends on xs_j.
Tensors reverse(const Tensors& outs, const Tensors& xs, const Tensors& v, bool create_graph) {
  Tensors roots, cotangents;
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (outs[i].requires_grad()) {
      roots.push_back(outs[i]);
      cotangents.push_back(v[i]);
    }
  if (roots.empty()) return Tensors(xs.size());
  EnableGradGuard eg;
  return grad(roots, xs, cotangents, /*retain_graph=*/true, create_graph, /*allow_unused=*/true);
}

/// The map v -> J v of outs with respect to xs by the double-backward trick (Note [functional transforms]).
class Forward {
 public:
  Forward(const Tensors& outs, const Tensors& xs) : n_outs_(outs.size()) {
    Tensors roots;
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (outs[i].requires_grad()) {
        out_of_u_.push_back(i);
        roots.push_back(outs[i]);
        Tensor u = zeros_like(outs[i].detach());
        u.requires_grad_();
        u_.push_back(u);
      }
    g_.resize(xs.size());
    if (roots.empty()) return;
    EnableGradGuard eg;
    Tensors g = grad(roots, xs, u_, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    for (std::size_t j = 0; j < xs.size(); ++j)
      if (g[j].defined() && g[j].requires_grad()) g_[j] = g[j];  // else J_j = 0: nothing to contribute
  }

  /// J v, one tensor per output (undefined where it depends on no input v reaches); v has one tensor per
  /// input, an undefined one counting as zero.
  Tensors operator()(const Tensors& v, bool create_graph) const {
    Tensors roots, tangents;
    for (std::size_t j = 0; j < g_.size(); ++j)
      if (g_[j].defined() && v[j].defined()) {
        roots.push_back(g_[j]);
        tangents.push_back(v[j]);
      }
    Tensors jv(n_outs_);
    if (roots.empty()) return jv;
    EnableGradGuard eg;
    const Tensors ju = grad(roots, u_, tangents, /*retain_graph=*/true, create_graph, /*allow_unused=*/true);
    for (std::size_t k = 0; k < u_.size(); ++k) jv[out_of_u_[k]] = ju[k];
    return jv;
  }

 private:
  std::size_t n_outs_;
  std::vector<std::size_t> out_of_u_;  // the output each dummy cotangent belongs to
  Tensors u_;                          // the dummy cotangents, zeros that require grad
  Tensors g_;                          // J_j^T u per input (undefined where it does not depend on u)
};

/// ts with zeros shaped as `like` in place of undefined entries, or under strict the error naming the first.
template <class Message>
Tensors zeros_for_independent(const char* op, Tensors ts, const Tensors& like, bool strict, Message message) {
  for (std::size_t k = 0; k < ts.size(); ++k) {
    if (ts[k].defined()) continue;
    if (strict) throw Error(op, message(k) + " (strict)");
    ts[k] = zeros_like(like[k].detach());
  }
  return ts;
}

/// "<noun> i is independent of input j": the strict error of the pair (output i, input j).
std::string independent(const char* noun, std::size_t i, std::size_t j) {
  return std::string(noun) + " " + idx(i) + " is independent of input " + idx(j);
}

/// Shape a + b.
Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

/// The unit tensor shaped as t with a 1 at flat index k (made of ops, not a write: traces replay it).
Tensor unit(const Tensor& t, std::int64_t k) {
  return (arange(t.numel(), Dtype::Int64, t.device()) == Scalar(k)).to(t.dtype()).reshape(t.shape());
}

/// The Jacobian blocks J[i][j] of outs with respect to xs (Note [functional transforms]); `noun` names an
/// output in strict errors.
std::vector<Tensors> jacobian_of(const char* op, const char* noun, const Tensors& outs, const Tensors& xs,
                                 bool create_graph, bool strict, JacobianStrategy strategy) {
  std::vector<Tensors> J(outs.size(), Tensors(xs.size()));
  if (strategy == JacobianStrategy::reverse_mode) {
    for (std::size_t i = 0; i < outs.size(); ++i) {
      std::vector<Tensors> rows(xs.size());  // rows[j][k] = d outs_i[k] / d xs_j
      for (std::int64_t k = 0; k < outs[i].numel(); ++k) {
        const Tensors g = zeros_for_independent(op, reverse({outs[i]}, xs, {unit(outs[i], k)}, create_graph), xs,
                                                strict, [&](std::size_t j) { return independent(noun, i, j); });
        for (std::size_t j = 0; j < xs.size(); ++j) rows[j].push_back(g[j]);
      }
      for (std::size_t j = 0; j < xs.size(); ++j) {
        const Shape s = concat(outs[i].shape(), xs[j].shape());
        J[i][j] = rows[j].empty() ? zeros(s, xs[j].dtype(), xs[j].device()) : stack(rows[j]).reshape(s);
      }
    }
  } else {
    const Forward jvp_of(outs, xs);
    for (std::size_t j = 0; j < xs.size(); ++j) {
      std::vector<Tensors> cols(outs.size());  // cols[i][c] = d outs_i / d xs_j[c]
      for (std::int64_t c = 0; c < xs[j].numel(); ++c) {
        Tensors v(xs.size());
        v[j] = unit(xs[j], c);
        const Tensors jv = zeros_for_independent(op, jvp_of(v, create_graph), outs, strict,
                                                 [&](std::size_t i) { return independent(noun, i, j); });
        for (std::size_t i = 0; i < outs.size(); ++i) cols[i].push_back(jv[i]);
      }
      for (std::size_t i = 0; i < outs.size(); ++i) {
        const Shape s = concat(outs[i].shape(), xs[j].shape());
        J[i][j] = cols[i].empty() ? zeros(s, outs[i].dtype(), outs[i].device()) : stack(cols[i], -1).reshape(s);
      }
    }
  }
  for (auto& row : J) row = results(row, create_graph);
  return J;
}

/// The gradient of fn (one single-element output) at xs, built with create_graph so that it differentiates
/// again (zeros for an input fn does not depend on, strict throws); `value` receives fn(xs).
Tensors gradient_of(const char* op, const ScalarFn& fn, const Tensors& xs, bool strict, Tensor& value) {
  {
    EnableGradGuard eg;
    value = fn(xs);
  }
  check_differentiable(op, value, "output", 0, true);
  if (value.numel() != 1)
    throw Error(op, "the function must return one single-element tensor; it returned shape " + shape_str(value.shape()));
  return zeros_for_independent(op, reverse({value}, xs, {ones_like(value.detach())}, /*create_graph=*/true), xs,
                               strict, [](std::size_t j) { return "the function is independent of input " + idx(j); });
}

/// (fn(inputs), v^T H), or with `forward` (fn(inputs), H v): vhp's and hvp's body (Note [functional transforms]).
std::pair<Tensor, Tensors> hessian_product(const char* op, const ScalarFn& fn, const Tensors& inputs, const Tensors& v,
                                           bool create_graph, bool strict, bool forward) {
  const Tensors xs = stand_ins(op, inputs, create_graph, true);
  const Tensors vs = vectors(op, v, inputs, "input");
  Tensor y;
  const Tensors g = gradient_of(op, fn, xs, strict, y);
  Tensors prods = zeros_for_independent(
      op, forward ? Forward(g, xs)(vs, create_graph) : reverse(g, xs, vs, create_graph), xs, strict,
      [forward](std::size_t k) {
        return forward ? "the gradient in input " + idx(k) + " is independent of the inputs"
                       : "the gradient is independent of input " + idx(k);
      });
  return {create_graph ? y : y.detach(), results(std::move(prods), create_graph)};
}

/// fn as a function of one-tensor lists.
TensorsFn lift(const UnaryFn& fn) {
  return [&fn](const Tensors& xs) { return Tensors{fn(xs[0])}; };
}

/// fn as a scalar function of one-tensor lists.
ScalarFn lift_scalar(const UnaryFn& fn) {
  return [&fn](const Tensors& xs) { return fn(xs[0]); };
}

/// v as the list of vectors: empty when undefined (v = 1 for one single-element tensor).
Tensors list(const Tensor& v) { return v.defined() ? Tensors{v} : Tensors{}; }

}  // namespace

std::pair<Tensors, Tensors> vjp(const TensorsFn& fn, const Tensors& inputs, const Tensors& v, bool create_graph,
                                bool strict) {
  const Tensors xs = stand_ins("vjp", inputs, create_graph, false);
  const Tensors outs = call("vjp", fn, xs, false);
  const Tensors vs = vectors("vjp", v, outs, "output");
  Tensors prods = zeros_for_independent("vjp", reverse(outs, xs, vs, create_graph), xs, strict, [](std::size_t j) {
    return "the function's output is independent of input " + idx(j);
  });
  return {results(outs, create_graph), results(std::move(prods), create_graph)};
}

std::pair<Tensor, Tensor> vjp(const UnaryFn& fn, const Tensor& x, const Tensor& v, bool create_graph, bool strict) {
  auto [outs, prods] = vjp(lift(fn), {x}, list(v), create_graph, strict);
  return {outs[0], prods[0]};
}

std::pair<Tensors, Tensors> jvp(const TensorsFn& fn, const Tensors& inputs, const Tensors& v, bool create_graph,
                                bool strict) {
  const Tensors xs = stand_ins("jvp", inputs, create_graph, true);
  const Tensors vs = vectors("jvp", v, inputs, "input");
  const Tensors outs = call("jvp", fn, xs, true);
  Tensors prods = zeros_for_independent("jvp", Forward(outs, xs)(vs, create_graph), outs, strict, [](std::size_t i) {
    return "output " + idx(i) + " is independent of the inputs";
  });
  return {results(outs, create_graph), results(std::move(prods), create_graph)};
}

std::pair<Tensor, Tensor> jvp(const UnaryFn& fn, const Tensor& x, const Tensor& v, bool create_graph, bool strict) {
  auto [outs, prods] = jvp(lift(fn), {x}, list(v), create_graph, strict);
  return {outs[0], prods[0]};
}

std::vector<Tensors> jacobian(const TensorsFn& fn, const Tensors& inputs, bool create_graph, bool strict,
                              JacobianStrategy strategy) {
  const Tensors xs = stand_ins("jacobian", inputs, create_graph, true);
  const Tensors outs = call("jacobian", fn, xs, true);
  return jacobian_of("jacobian", "output", outs, xs, create_graph, strict, strategy);
}

Tensor jacobian(const UnaryFn& fn, const Tensor& x, bool create_graph, bool strict, JacobianStrategy strategy) {
  return jacobian(lift(fn), {x}, create_graph, strict, strategy)[0][0];
}

std::vector<Tensors> hessian(const ScalarFn& fn, const Tensors& inputs, bool create_graph, bool strict,
                             JacobianStrategy outer) {
  const Tensors xs = stand_ins("hessian", inputs, create_graph, true);
  Tensor y;
  const Tensors g = gradient_of("hessian", fn, xs, strict, y);
  return jacobian_of("hessian", "the gradient in input", g, xs, create_graph, strict, outer);
}

Tensor hessian(const UnaryFn& fn, const Tensor& x, bool create_graph, bool strict, JacobianStrategy outer) {
  return hessian(lift_scalar(fn), {x}, create_graph, strict, outer)[0][0];
}

std::pair<Tensor, Tensors> vhp(const ScalarFn& fn, const Tensors& inputs, const Tensors& v, bool create_graph,
                               bool strict) {
  return hessian_product("vhp", fn, inputs, v, create_graph, strict, false);
}

std::pair<Tensor, Tensor> vhp(const UnaryFn& fn, const Tensor& x, const Tensor& v, bool create_graph, bool strict) {
  auto [y, prods] = vhp(lift_scalar(fn), {x}, list(v), create_graph, strict);
  return {y, prods[0]};
}

std::pair<Tensor, Tensors> hvp(const ScalarFn& fn, const Tensors& inputs, const Tensors& v, bool create_graph,
                               bool strict) {
  return hessian_product("hvp", fn, inputs, v, create_graph, strict, true);
}

std::pair<Tensor, Tensor> hvp(const UnaryFn& fn, const Tensor& x, const Tensor& v, bool create_graph, bool strict) {
  auto [y, prods] = hvp(lift_scalar(fn), {x}, list(v), create_graph, strict);
  return {y, prods[0]};
}

}  // namespace phasor::autodiff
