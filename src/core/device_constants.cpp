// src/core/device_constants.cpp - the per-device cache of constant tensors (Note [device constants]).
#include "core/device_constants.hpp"

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "cuda/backend.hpp"
#include "phasor/autodiff.hpp"

namespace phasor::detail {

Tensor device_constant(Device device, const std::function<std::string()>& key, const std::function<Tensor()>& make) {
  if (device == Device::cpu()) return make();
  using Key = std::tuple<std::string, int, int>;
  static std::mutex mu;
  static auto* cache = new std::map<Key, Tensor>();  // never destroyed (Note [device constants])
  Key k{key(), static_cast<int>(device.type), device.index};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(k);
    if (it != cache->end()) return it->second;
  }
  // made without the lock: make() may itself ask for a device constant
  Tensor t;
  {
    NoGradGuard ng;
    t = make().to(device);
  }
  cuda::detail::finish_current_stream(device);  // cached: any stream may read it next
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(k);
  if (it != cache->end()) return it->second;  // another thread made it meanwhile: share one
  if (cache->size() >= kMaxDeviceConstants) cache->clear();
  cache->emplace(std::move(k), t);
  return t;
}

}  // namespace phasor::detail
