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

std::size_t size_class(std::size_t n) {
  if (n == 0) n = 1;
  n = (n + kAlign - 1) / kAlign * kAlign;
  if (n <= (1u << 20)) {
    // below 1 MiB: next power of two for small sizes, 64 KiB steps between 64 KiB and 1 MiB
    if (n <= 65536) {
      std::size_t p = kAlign;
      while (p < n) p <<= 1;
      return p;
    }
    return (n + 65535) / 65536 * 65536;
  }
  // above 1 MiB: 8 steps per octave
  std::size_t p = 1u << 20;
  while (p * 2 <= n) p <<= 1;
  std::size_t step = p / 8;
  return (n + step - 1) / step * step;
}

class CpuCachingAllocator {
 public:
  void* allocate(std::size_t nbytes) {
    std::size_t cls = size_class(nbytes);
    std::lock_guard<std::mutex> lk(mu_);
    ++stats_.num_allocs;
    stats_.current_bytes += static_cast<std::int64_t>(cls);
    if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
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
    std::size_t cls = size_class(nbytes);
    std::lock_guard<std::mutex> lk(mu_);
    stats_.current_bytes -= static_cast<std::int64_t>(cls);
    stats_.cached_bytes += static_cast<std::int64_t>(cls);
    free_[cls].push_back(p);
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
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    stats_.cached_bytes = 0;
  }
  std::mutex mu_;
  std::map<std::size_t, std::vector<void*>> free_;
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
