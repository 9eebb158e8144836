// examples/common/device.hpp - the examples' --device option: a device name that must exist here.
#pragma once
#include <phasor/phasor.hpp>

#include <algorithm>
#include <cstdio>

namespace cli {

/// Parses `name` ("cpu", "cuda", "cuda:i", or "cpu:i", a virtual CPU device made here: CPU kernels,
/// its own device, to check a program's device handling without a GPU) into `d`; prints why and
/// returns false when the name is unknown or the device does not exist on this machine (or build).
inline bool parse_device(const char* name, phasor::Device& d) {
  try {
    d = phasor::Device::parse(name);
  } catch (const phasor::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return false;
  }
  if (d.is_cuda() && d.index >= phasor::cuda::device_count()) {
    std::fprintf(stderr, "device %s is not available: %d CUDA device(s)%s\n", d.str().c_str(), phasor::cuda::device_count(),
                 phasor::cuda::is_built() ? "" : " (CPU-only build)");
    return false;
  }
  if (d.is_cpu() && d.index >= 1) {
    phasor::set_cpu_device_count(std::max(phasor::cpu_device_count(), d.index + 1));
    std::printf("running on %s, a virtual CPU device (the CPU kernels; phasor::set_cpu_device_count)\n", d.str().c_str());
  }
  return true;
}

}  // namespace cli
