// src/core/device_constants.cpp - the per-device cache of constant tensors (Note [device constants]).
#include "core/device_constants.hpp"

#include "cuda/backend.hpp"
#include "phasor/autodiff.hpp"

namespace phasor::detail {

Tensor make_device_constant(Device device, const std::function<Tensor()>& make) {
  Tensor t;
  {
    NoGradGuard ng;
    t = make().to(device);
  }
  cuda::detail::finish_current_stream(device);  // cached: any stream may read it next
  return t;
}

}  // namespace phasor::detail
