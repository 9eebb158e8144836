// phasor/device.hpp - where a tensor lives, and the memory statistics of each device.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

namespace phasor {

/// Kind of device.
enum class DeviceType : std::uint8_t { CPU, CUDA };

/// A device: the CPU (cpu:0; virtual CPU devices cpu:1.. exist after set_cpu_device_count), or CUDA with an ordinal.
struct Device {
  DeviceType type = DeviceType::CPU;  ///< kind
  int index = 0;                      ///< ordinal (0 for the host CPU; >= 1 for a virtual CPU device)
  /// The host CPU, or with i >= 1 the i-th virtual CPU device (see set_cpu_device_count).
  static Device cpu(int i = 0) { return Device{DeviceType::CPU, i}; }
  /// The i-th CUDA GPU.
  static Device cuda(int i = 0) { return Device{DeviceType::CUDA, i}; }
  /// True for the CPU.
  bool is_cpu() const { return type == DeviceType::CPU; }
  /// True for a CUDA device.
  bool is_cuda() const { return type == DeviceType::CUDA; }
  /// "cpu", "cpu:i" (a virtual CPU device) or "cuda:i".
  std::string str() const;
  /// The device named "cpu" (cpu:0), "cpu:i", "cuda" (cuda:0) or "cuda:i"; throws phasor::Error for any other text.
  static Device parse(const std::string& name);
  /// Same type and index.
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  /// Different type or index.
  bool operator!=(const Device& o) const { return !(*this == o); }
};
/// Prints Device::str().
std::ostream& operator<<(std::ostream& os, const Device& d);

/// Allocator statistics of one device, in bytes.
struct MemoryStats {
  std::int64_t current_bytes = 0;  ///< bytes held by live tensors
  std::int64_t peak_bytes = 0;     ///< high-water mark of current_bytes since the last reset
  std::int64_t cached_bytes = 0;   ///< bytes kept by the caching allocator for reuse
  std::int64_t num_allocs = 0;     ///< allocation requests served
  std::int64_t num_system_allocs = 0;  ///< requests that reached the system allocator
};

/// Allocator statistics for `device` (the CPU's, shared by the virtual CPU devices, or a CUDA device's caching allocator; a missing device throws).
MemoryStats memory_stats(Device device = Device::cpu());
/// Resets the peak of `device`'s allocator to the current value.
void reset_peak_memory_stats(Device device = Device::cpu());
/// Returns cached, unused blocks to the system: CPU: those of the shared lists and of the calling thread (other threads keep up to 16 small blocks per size class until they exit); CUDA: waits for the device's queued work, then every fully free segment (cudaFree).
void empty_cache(Device device = Device::cpu());

/// Number of CPU devices: 1 (the host, cpu:0) unless set_cpu_device_count made virtual ones.
int cpu_device_count();
/// Makes cpu:1 .. cpu:n-1 exist (n >= 1; 1 removes them): virtual devices that compute with the CPU kernels
/// on host memory but count as devices of their own, so an op mixing cpu:0 and cpu:1 throws as one mixing
/// the CPU and a GPU would. A testing aid, like JAX's xla_force_host_platform_device_count: it runs a
/// multi-device code path, and catches tensors made on the default device by mistake, without a GPU.
void set_cpu_device_count(int n);

/// Number of threads used by phasor's CPU kernels (OpenMP, BLAS, FFTW).
int get_num_threads();
/// Sets the number of threads used by phasor's CPU kernels (n >= 1).
void set_num_threads(int n);

}  // namespace phasor
