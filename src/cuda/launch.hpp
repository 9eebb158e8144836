// src/cuda/launch.hpp - host-side launch helpers shared by the CUDA glue files (ops.cpp,
// index_ops.cpp): operands built with the CPU engine's loop builder, and the device + stream of a
// launch. Only for PHASOR_WITH_CUDA builds (it includes the runtime).
#pragma once
#include <initializer_list>

#include "cuda/elementwise.hpp"
#include "cuda/runtime.hpp"
#include "phasor/tensor.hpp"

namespace phasor::cuda::detail {

/// The operands (output first) broadcast to `shape` (default: the output's), coalesced as the CPU
/// engine does; throws "[op] ..." for mixed devices, a missing device or too many dims.
Operands operands(std::initializer_list<const Tensor*> ts, const char* op);
/// As operands(ts, op), iterating `shape` instead of the output's shape.
Operands operands(std::initializer_list<const Tensor*> ts, const Shape& shape, const char* op);

/// Throws "[op] no CUDA kernel for <dtype> input".
[[noreturn]] void no_kernel(const char* op, Dtype dtype);

/// The current stream of out's device, with that device current for the launch.
struct Launch {
  DeviceGuard guard;  ///< makes the tensor's device current
  void* stream;       ///< its current stream (a cudaStream_t)
  /// Makes out's device current and picks its stream.
  explicit Launch(const Tensor& out) : guard(out.device().index), stream(current_stream_handle(out.device().index)) {}
};

}  // namespace phasor::cuda::detail
