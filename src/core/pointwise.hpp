// src/core/pointwise.hpp - helpers shared by the binary / comparison op files: a broadcasting
// binary kernel on a common dtype, wrapped scalars, non-differentiable ops and value steps, 0-d zeros.
#pragma once
#include <string>
#include <type_traits>

#include "autodiff/node.hpp"
#include "cuda/ops.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "phasor/creation.hpp"

namespace phasor::detail {

/// f(u, v) over a and b converted to `dt`, broadcast; f's return type sets the output dtype.
/// f is a (possibly constrained) generic functor; a dtype it does not accept throws naming `op`. `param` goes to
/// the CUDA kernel of the op's name (its alpha; the orthogonal polynomials' derivative order).
template <class F>
Tensor binary_kernel(const Tensor& a, const Tensor& b, Dtype dt, const char* op, F f, double param = 1) {
  const Device device = elementwise_device(a, b, op);
  const Shape shape = a.shape() == b.shape() || b.dim() == 0 ? a.shape()
                      : a.dim() == 0                         ? b.shape()
                                                              : broadcast_shapes({a.shape(), b.shape()}, op);
  if (device.is_cuda()) {  // Note [cuda elementwise]: the kernel converts a and b per element
    return visit_dtype(dt, [&](auto tag) -> Tensor {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_invocable_v<const F&, T, T>) {
        using Out = std::decay_t<std::invoke_result_t<const F&, T, T>>;
        Tensor out = make_tensor(shape, dtype_of<Out>::value, device);
        phasor::cuda::detail::binary(op, out, a, b, dt, param);
        return out;
      } else {
        throw Error(op, std::string("not implemented for ") + dtype_name(dt) + " tensors");
      }
    });
  }
  Tensor x = a.to(dt), y = b.to(dt);
  return visit_dtype(dt, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<const F&, T, T>) {
      return map_binary<T>(x, y, f, op);
    } else {
      throw Error(op, std::string("not implemented for ") + dtype_name(dt) + " tensors");
    }
  });
}

/// Throws phasor::Error naming `op` unless in[0] (self) can take the in-place result of in (core/binary.cpp):
/// every input on self's device, their result type castable to self's dtype, their broadcast shape self's.
void check_inplace_output(TensorList in, const char* op);

/// The C++ scalar `s` as a 0-d tensor of the dtype it takes next to `t` (it never widens t): on t's device,
/// or a host scalar next to a CUDA tensor (Note [host scalars]).
inline Tensor wrap_for(const Tensor& t, const Scalar& s) { return wrap_scalar(s, result_type(t, s), t.device()); }

/// A 0-d zero of g's dtype (the "else" branch of masked gradients), made as wrap_for makes numbers.
inline Tensor zero_scalar_like(const Tensor& g) { return wrap_scalar(0, g.dtype(), g.device()); }

// Note [value steps]
// A static-graph trace records the forwards of primitives only (Note [static graphs] in src/jit/trace.cpp, Note
// [replayable forwards] in autodiff/node.hpp). A tensor an op computes from its inputs' values by code outside
// such a forward (a kernel called from the op's body, a loop over data_ptr, a host read of a count that sets a
// shape) would be a frozen constant of the trace, and a value check made ahead of a primitive that trusts the
// values would not run at a replay, which would then read out of range. So that work runs as a step of its own:
//  - indices, counts, masks (sort's order, nonzero's positions, unique's groups, a bincount's length) come from
//    apply_nondiff (apply_nondiff_n for several outputs), and the differentiable values from the recorded
//    primitives that read them (a gather, an index_select, an index_add);
//  - a value check is a step whose output is the checked tensor itself (or its clamped copy where the check is
//    deferred to the device), and the primitives after it read that output, so a replay runs the check first
//    and throws the eager error message.
// A replay recomputes a value-dependent shape in its step; the next step whose input shape then differs from the
// trace's throws (the function's shapes depend on its inputs' values), while an output the step returns directly
// simply comes back with its new shape.

/// Runs an op without a gradient whose fwd returns several outputs as a std::vector<Tensor> (undefined entries
/// allowed): observers see one primitive call, a trace one step (Note [value steps]), no node is made.
template <class Fwd>
std::vector<Tensor> apply_nondiff_n(const char* name, TensorList inputs, Fwd&& fwd) {
  const bool observed = g_num_observers.load(std::memory_order_relaxed) > 0;
  const bool traced = observed && tracing();  // Note [replayable forwards]
  const std::vector<Tensor> seen = observe_begin(observed, name, true, inputs);
  std::vector<Tensor> out = run_forward(fwd, inputs);
  if (traced)
    trace_step(name, inputs, out, [name = intern_name(name), f = fwd](TensorList in) { return apply_nondiff_n(name, in, f); });
  if (observed) notify_end(name, true, seen, out);
  return out;
}

/// Runs an op without a gradient (bool outputs, indices, checked values): apply_nondiff_n with one output, and
/// without a vector when nobody observes.
template <class Fwd>
Tensor apply_nondiff(const char* name, TensorList inputs, Fwd&& fwd) {
  if (g_num_observers.load(std::memory_order_relaxed) == 0) return run_forward(fwd, inputs);
  return std::move(apply_nondiff_n(name, inputs, [f = std::forward<Fwd>(fwd)](TensorList in) { return std::vector<Tensor>{f(in)}; })[0]);
}

}  // namespace phasor::detail
