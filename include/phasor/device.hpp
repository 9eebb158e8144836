// phasor/device.hpp - where a tensor lives, and the memory statistics of each device.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

namespace phasor {

/// Kind of device.
enum class DeviceType : std::uint8_t { CPU, CUDA };

/// A device: CPU, or CUDA with an ordinal.
struct Device {
  DeviceType type = DeviceType::CPU;  ///< kind
  int index = 0;                      ///< ordinal (0 for the CPU)
  /// The host CPU.
  static Device cpu() { return Device{DeviceType::CPU, 0}; }
  /// The i-th CUDA GPU.
  static Device cuda(int i = 0) { return Device{DeviceType::CUDA, i}; }
  /// True for the CPU.
  bool is_cpu() const { return type == DeviceType::CPU; }
  /// True for a CUDA device.
  bool is_cuda() const { return type == DeviceType::CUDA; }
  /// "cpu" or "cuda:i".
  std::string str() const;
  /// The device named "cpu", "cuda" (cuda:0) or "cuda:i"; throws phasor::Error for any other text.
  static Device parse(const std::string& name);
  /// Same type and index.
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  /// Different type or index.
  bool operator!=(const Device& o) const { return !(*this == o); }
};
/// Prints "cpu" or "cuda:i".
std::ostream& operator<<(std::ostream& os, const Device& d);

/// Allocator statistics of one device, in bytes.
struct MemoryStats {
  std::int64_t current_bytes = 0;  ///< bytes held by live tensors
  std::int64_t peak_bytes = 0;     ///< high-water mark of current_bytes since the last reset
  std::int64_t cached_bytes = 0;   ///< bytes kept by the caching allocator for reuse
  std::int64_t num_allocs = 0;     ///< allocation requests served
  std::int64_t num_system_allocs = 0;  ///< requests that reached the system allocator
};

/// Allocator statistics for `device` (the CPU's, or a CUDA device's caching allocator; a missing device throws).
MemoryStats memory_stats(Device device = Device::cpu());
/// Resets the peak of `device`'s allocator to the current value.
void reset_peak_memory_stats(Device device = Device::cpu());
/// Returns cached, unused blocks to the system: CPU: those of the shared lists and of the calling thread (other threads keep up to 16 small blocks per size class until they exit); CUDA: every fully free segment (cudaFree).
void empty_cache(Device device = Device::cpu());

/// Number of threads used by phasor's CPU kernels (OpenMP, BLAS, FFTW).
int get_num_threads();
/// Sets the number of threads used by phasor's CPU kernels (n >= 1).
void set_num_threads(int n);

}  // namespace phasor
