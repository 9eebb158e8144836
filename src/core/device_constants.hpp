// src/core/device_constants.hpp - constant tensors (rfft weights, grid coordinates, DFT matrices, PDE
// symbols) made once per device instead of on every call.
//
// Note [device constants]
// Some ops need a small constant that depends only on sizes and a dtype: the rfft gradient's DC/Nyquist
// weights, the FNO's grid channels, a DFT matrix, a spectral symbol. They are built on the host. On the
// host CPU each call builds its own (cheap, and nothing is kept alive). On any other device - a GPU, where
// the host-to-device copy would stall the host on every call, or a virtual CPU device - the first call
// builds and moves it, waits for the copy (so that every stream may read it), and later calls share that
// tensor. There is one process-wide cache per key type, keyed by the constant's kind (a string literal),
// the caller's key and the device, never destroyed (device memory must not be freed after the CUDA
// runtime shut down at exit), and starting over when it holds kMaxDeviceConstants entries. Callers must
// never modify what they get. The key is a value with operator< holding everything make() depends on,
// compared as it is: a constant looked up on every step (a DFT matrix, 16 lookups per FNO training step)
// builds no string, where a formatted key cost about 8,000 instructions per lookup (snprintf of two
// doubles). The string-keyed form asks for its key only off the host.
#pragma once
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// Most tensors the device-constant cache holds before it starts over.
inline constexpr std::size_t kMaxDeviceConstants = 256;

/// make() (a tensor on any device) on `device`: built every call on the host CPU, else built and moved once
/// per (key(), device) and shared (Note [device constants]). key() must name everything make() depends on;
/// it is called only off the host CPU, so the host path builds no key.
Tensor device_constant(Device device, const std::function<std::string()>& key, const std::function<Tensor()>& make);

/// make() moved to `device` (not the host CPU), after which every stream may read it (Note [device constants]).
Tensor make_device_constant(Device device, const std::function<Tensor()>& make);

/// device_constant keyed by `key`, a value of a type with operator< holding everything make() depends on,
/// and `kind` (a string literal), which tells apart the constants that share a key type (Note [device
/// constants]): a lookup compares the key itself, no string is built.
template <class K>
Tensor device_constant(Device device, std::string_view kind, const K& key, const std::function<Tensor()>& make) {
  if (device == Device::cpu()) return make();
  using Key = std::tuple<std::string_view, K, int, int>;
  static std::mutex mu;
  static auto* cache = new std::map<Key, Tensor>();  // never destroyed (Note [device constants])
  Key k{kind, key, static_cast<int>(device.type), device.index};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(k); it != cache->end()) return it->second;
  }
  const Tensor t = make_device_constant(device, make);  // without the lock: make() may ask for a constant
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(k); it != cache->end()) return it->second;  // made meanwhile: share one
  if (cache->size() >= kMaxDeviceConstants) cache->clear();
  cache->emplace(std::move(k), t);
  return t;
}

}  // namespace phasor::detail
