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
// doubles). A double goes into a key as its bits (key_bits): every value, -0.0 and NaN too, is then
// told apart and compares as itself.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// Most tensors the device-constant cache holds before it starts over.
inline constexpr std::size_t kMaxDeviceConstants = 256;

/// make() moved to `device` (not the host CPU), after which every stream may read it (Note [device constants]).
Tensor make_device_constant(Device device, const std::function<Tensor()>& make);

/// A double as its bits, for a constant's key: every value (-0.0 and NaN too) is told apart and compares as itself.
inline std::uint64_t key_bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// key_bits of each entry.
inline std::vector<std::uint64_t> key_bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = key_bits(v[i]);
  return b;
}

/// make() (a tensor on any device) on `device`: built every call on the host CPU, else built and moved once
/// per (kind, key, device) and shared (Note [device constants]). `key`, a value of a type with operator<,
/// holds everything make() depends on; `kind`
/// (a string literal) tells apart the constants that share a key type. A lookup compares the key itself.
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
