// src/core/pointwise.hpp - helpers shared by the binary / comparison op files: a broadcasting
// binary kernel on a common dtype, wrapped scalars, non-differentiable ops, 0-d zeros.
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
/// f is a (possibly constrained) generic functor; a dtype it does not accept throws naming `op`.
template <class F>
Tensor binary_kernel(const Tensor& a, const Tensor& b, Dtype dt, const char* op, F f) {
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
        phasor::cuda::detail::binary(op, out, a, b, dt);
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

/// The C++ scalar `s` as a 0-d tensor of the dtype it takes next to `t` (it never widens t): on t's device,
/// or a host scalar next to a CUDA tensor (Note [host scalars]).
inline Tensor wrap_for(const Tensor& t, const Scalar& s) { return wrap_scalar(s, result_type(t, s), t.device()); }

/// A 0-d zero of g's dtype (the "else" branch of masked gradients), made as wrap_for makes numbers.
inline Tensor zero_scalar_like(const Tensor& g) { return wrap_scalar(0, g.dtype(), g.device()); }

/// Runs an op without a gradient (bool outputs): observers see it like a primitive, no node is made.
template <class Fwd>
Tensor apply_nondiff(const char* name, TensorList inputs, Fwd&& fwd) {
  const bool observed = g_num_observers.load(std::memory_order_relaxed) > 0;
  const bool traced = observed && tracing();  // Note [replayable forwards]
  const std::vector<Tensor> seen = observe_begin(observed, name, true, inputs);
  Tensor out = run_forward(fwd, inputs);
  if (traced)
    trace_step(name, inputs, {out}, [name = intern_name(name), f = fwd](TensorList in) { return std::vector<Tensor>{apply_nondiff(name, in, f)}; });
  if (observed) notify_end(name, true, seen, {out});
  return out;
}

}  // namespace phasor::detail
