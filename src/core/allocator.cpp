// src/core/allocator.cpp - CPU caching allocator (Note [caching allocator]) and Storage.
//
// Note [caching allocator]
// On these VMs a first-touch page fault costs ~12 us per 4 KiB page, so a training loop that
// returned memory to the system every step would spend its time faulting. Freed blocks are kept
// in per-size-class free lists and handed out again; sizes are rounded up to classes (64-byte
// multiples for small blocks, 1/8-octave steps above 1 MiB) so a steady loop always hits a cached
// block. empty_cache() gives the blocks back.
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "core/tensor_impl.hpp"

namespace phasor {
namespace {

constexpr std::size_t kAlign = 64;

/// Size class (rounded size and bin index). Classes: powers of two from 64 B to 64 KiB,
/// 64 KiB steps up to 1 MiB, then 8 steps per octave.
struct SizeClass {
  std::size_t bytes;
  std::size_t bin;
};
SizeClass size_class(std::size_t n) {
  if (n <= kAlign) return {kAlign, 0};
  if (n <= 65536) {
    const unsigned lg = 64u - static_cast<unsigned>(__builtin_clzll(static_cast<unsigned long long>(n - 1)));  // ceil log2
    return {std::size_t{1} << lg, lg - 6};  // 2^7 -> bin 1 ... 2^16 -> bin 10
  }
  if (n <= (std::size_t{1} << 20)) {
    const std::size_t k = (n + 65535) / 65536;  // 2..16
    return {k * 65536, 9 + k};                  // bins 11..25
  }
  const unsigned oct = 63u - static_cast<unsigned>(__builtin_clzll(static_cast<unsigned long long>(n)));  // floor log2 >= 20
  const std::size_t p = std::size_t{1} << oct, step = p / 8;
  const std::size_t k = (n - p + step - 1) / step;  // 0..8
  return {p + k * step, 26 + (oct - 20) * 9 + k};
}
constexpr std::size_t kNumBins = 26 + 44 * 9 + 9;

class CpuCachingAllocator {
 public:
  void* allocate(std::size_t nbytes) {
    const SizeClass sc = size_class(nbytes);
    const std::size_t cls = sc.bytes;
    std::lock_guard<std::mutex> lk(mu_);
    ++stats_.num_allocs;
    stats_.current_bytes += static_cast<std::int64_t>(cls);
    if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
    auto& bin = free_[sc.bin];
    if (!bin.empty()) {
      void* p = bin.back();
      bin.pop_back();
      stats_.cached_bytes -= static_cast<std::int64_t>(cls);
      return p;
    }
    ++stats_.num_system_allocs;
    void* p = std::aligned_alloc(kAlign, cls);
    if (!p) {
      release_all_locked();
      p = std::aligned_alloc(kAlign, cls);
    }
    if (!p) {
      stats_.current_bytes -= static_cast<std::int64_t>(cls);
      throw Error("allocate", "out of memory: could not allocate " + std::to_string(nbytes) + " bytes on cpu");
    }
    return p;
  }
  void free(void* p, std::size_t nbytes) {
    const SizeClass sc = size_class(nbytes);
    std::lock_guard<std::mutex> lk(mu_);
    stats_.current_bytes -= static_cast<std::int64_t>(sc.bytes);
    stats_.cached_bytes += static_cast<std::int64_t>(sc.bytes);
    free_[sc.bin].push_back(p);
  }
  MemoryStats stats() {
    std::lock_guard<std::mutex> lk(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lk(mu_);
    stats_.peak_bytes = stats_.current_bytes;
  }
  void empty_cache() {
    std::lock_guard<std::mutex> lk(mu_);
    release_all_locked();
  }

 private:
  void release_all_locked() {
    for (auto& blocks : free_) {
      for (void* p : blocks) std::free(p);
      blocks.clear();
    }
    stats_.cached_bytes = 0;
  }
  std::mutex mu_;
  std::vector<std::vector<void*>> free_ = std::vector<std::vector<void*>>(kNumBins);
  MemoryStats stats_;
};

CpuCachingAllocator& cpu_allocator() {
  static auto* a = new CpuCachingAllocator();  // never destroyed: storages may die during exit
  return *a;
}

void check_device_available(Device d, const char* op) {
  if (!d.is_cpu())
    throw Error(op, "device " + d.str() + " is not available in this build (CPU only)");
}

}  // namespace

Storage::~Storage() {
  if (!data) return;
  if (deleter) {
    deleter(data);
  } else if (device.is_cpu()) {
    cpu_allocator().free(data, nbytes);
  }
}

std::shared_ptr<Storage> Storage::allocate(std::size_t nbytes, Device device) {
  check_device_available(device, "allocate");
  auto s = std::make_shared<Storage>();
  s->data = cpu_allocator().allocate(nbytes);
  s->nbytes = nbytes;
  s->device = device;
  return s;
}

MemoryStats memory_stats(Device device) {
  check_device_available(device, "memory_stats");
  return cpu_allocator().stats();
}
void reset_peak_memory_stats(Device device) {
  check_device_available(device, "reset_peak_memory_stats");
  cpu_allocator().reset_peak();
}
void empty_cache(Device device) {
  check_device_available(device, "empty_cache");
  cpu_allocator().empty_cache();
}

}  // namespace phasor
