// src/core/device_constants.hpp - constant tensors (rfft weights, grid coordinates, DFT matrices, PDE
// symbols) made once per device instead of on every call.
//
// Note [device constants]
// Some ops need a small constant that depends only on sizes and a dtype: the rfft gradient's DC/Nyquist
// weights, the FNO's grid channels, a DFT matrix, a spectral symbol. They are built on the host. On the
// host CPU each call builds its own (cheap, and nothing is kept alive). On any other device - a GPU, where
// the host-to-device copy would stall the host on every call, or a virtual CPU device - the first call
// builds and moves it, waits for the copy (so that every stream may read it), and later calls share that
// tensor. The cache is process-wide, keyed by the caller's key string (asked for only off the host) and
// the device, never destroyed (device memory must not be freed after the CUDA runtime shut down at exit),
// and starts over when it holds kMaxDeviceConstants entries. Callers must never modify what they get.
#pragma once
#include <functional>
#include <string>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// Most tensors the device-constant cache holds before it starts over.
inline constexpr std::size_t kMaxDeviceConstants = 256;

/// make() (a tensor on any device) on `device`: built every call on the host CPU, else built and moved once
/// per (key(), device) and shared (Note [device constants]). key() must name everything make() depends on;
/// it is called only off the host CPU, so the host path builds no key.
Tensor device_constant(Device device, const std::function<std::string()>& key, const std::function<Tensor()>& make);

}  // namespace phasor::detail
