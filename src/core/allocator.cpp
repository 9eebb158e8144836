// src/core/allocator.cpp - CPU caching allocator (Note [caching allocator]) and Storage. CUDA storage
// takes a separate branch into src/cuda/allocator.hpp (Note [caching device allocator]).
//
// Note [caching allocator]
// On these VMs a first-touch page fault costs ~12 us per 4 KiB page, so a training loop that
// returned memory to the system every step would spend its time faulting. Freed blocks are kept
// in per-size-class free lists and handed out again; sizes are rounded up to classes (64-byte
// multiples for small blocks, 1/8-octave steps above 1 MiB) so a steady loop always hits a cached
// block. empty_cache() gives the blocks back.
//
// Note [small blocks]
// Every tensor also needs a few small heap objects: the shared_ptr control blocks of its
// TensorImpl and Storage, the Storage itself, and the shape and stride buffers. For small
// tensors malloc/free of these cost as much as the kernel (an FFT of 256 points takes ~0.2 us,
// creating its output tensor took ~0.1 us), so each thread keeps free lists of small blocks
// (16-byte classes up to 384 bytes, at most kSmallKeep per class) and a stack of dead
// TensorImpls whose shape/stride vectors keep their buffers (new_impl). Blocks freed by another
// thread join that thread's lists; a thread's lists are freed when it exits. Under
// AddressSanitizer a cached block is poisoned, so use-after-free is still reported. The
// allocator's own lock is a spinlock: its critical sections are a few loads and stores (system
// calls happen outside it), and an uncontended pthread mutex cost as much as the rest of the
// allocation.
//
// Note [thread data blocks]
// Data blocks up to 64 KiB (small tensors' storage) are also cached per thread: a thread frees into
// and allocates from its own bins (kTlsKeep blocks per size class) without the allocator's lock,
// whose two atomic exchanges per tensor were a tenth of a 256-point FFT. The statistics stay exact:
// each thread counts its bytes in its own slot of a fixed table (written only by that thread, so
// plain stores; memory_stats() sums the slots and the locked path's counters). A slot outlives its
// thread - the next thread to start inherits it with its counts - so no count ever moves between
// counters and a reader never sees one twice. A thread's bins go back to the shared lists when it
// exits. The peak is the largest total an allocating thread computes (its slot plus relaxed reads
// of the others): exact whenever allocations do not race; two threads allocating at the same
// instant may each miss the other's newest block.
//
// Note [parked tensors]
// A dying TensorImpl that was the only owner of a small CPU storage is parked with that storage
// (kParkKeep per data size class, per thread), and make_tensor takes a parked one of the same class:
// a steady loop of small ops then neither builds nor destroys Storage objects and their control
// blocks, which was a third of the host cost of a 256-point FFT. A parked tensor's block counts as
// cached, exactly like a block in the thread's bins; its version is reset when it is parked, and
// empty_cache() and thread exit release the parked tensors.
#include <sanitizer/asan_interface.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "jit/tracer.hpp"

namespace phasor {
namespace {

constexpr std::size_t kAlign = 64;

/// Size class (rounded size and bin index). Classes: powers of two from 64 B to 64 KiB,
/// 64 KiB steps up to 1 MiB, then 8 steps per octave.
struct SizeClass {
  std::size_t bytes;
  std::size_t bin;
};
inline __attribute__((always_inline)) SizeClass size_class(std::size_t n) {
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

/// Test-and-test-and-set lock that yields while another thread holds it.
class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int i = 0; locked_.load(std::memory_order_relaxed); ++i)
        if (i >= 64) std::this_thread::yield();
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

/// Per-thread statistics slots (Note [thread data blocks]); slot counters are written only by the
/// thread holding the slot.
struct alignas(64) StatSlot {
  std::atomic<std::int64_t> current{0}, cached{0}, allocs{0};
  std::atomic<bool> used{false};
};
constexpr int kMaxSlots = 256;
StatSlot g_slots[kMaxSlots];
std::atomic<int> g_num_slots{0};           // slots [0, n) were handed out at least once
std::atomic<std::int64_t> g_shared_current{0};  // the locked path's current bytes (mirror)
std::atomic<std::int64_t> g_peak{0};

/// Adds d to a counter only this thread writes (no locked instruction).
inline void bump(std::atomic<std::int64_t>& c, std::int64_t d) {
  c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}
/// Bytes held by live tensors, all threads.
std::int64_t total_current() {
  std::int64_t t = g_shared_current.load(std::memory_order_relaxed);
  const int n = g_num_slots.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) t += g_slots[i].current.load(std::memory_order_relaxed);
  return t;
}
inline void note_peak(std::int64_t total) {
  std::int64_t p = g_peak.load(std::memory_order_relaxed);
  while (total > p && !g_peak.compare_exchange_weak(p, total, std::memory_order_relaxed)) {
  }
}

class CpuCachingAllocator {
 public:
  void* allocate(std::size_t nbytes) {
    const SizeClass sc = size_class(nbytes);
    const std::size_t cls = sc.bytes;
    void* p = nullptr;
    {
      std::lock_guard<SpinLock> lk(mu_);
      ++stats_.num_allocs;
      stats_.current_bytes += static_cast<std::int64_t>(cls);
      g_shared_current.store(stats_.current_bytes, std::memory_order_relaxed);
      auto& bin = free_[sc.bin];
      if (!bin.empty()) {
        p = bin.back();
        bin.pop_back();
        stats_.cached_bytes -= static_cast<std::int64_t>(cls);
      } else {
        ++stats_.num_system_allocs;
      }
    }
    note_peak(total_current());
    if (p) return p;
    p = std::aligned_alloc(kAlign, cls);
    if (!p) {
      empty_cache();
      p = std::aligned_alloc(kAlign, cls);
    }
    if (!p) {
      std::lock_guard<SpinLock> lk(mu_);
      stats_.current_bytes -= static_cast<std::int64_t>(cls);
      g_shared_current.store(stats_.current_bytes, std::memory_order_relaxed);
      throw Error("allocate", "out of memory: could not allocate " + std::to_string(nbytes) + " bytes on cpu");
    }
    return p;
  }
  void free(void* p, std::size_t nbytes) {
    const SizeClass sc = size_class(nbytes);
    std::lock_guard<SpinLock> lk(mu_);
    stats_.current_bytes -= static_cast<std::int64_t>(sc.bytes);
    g_shared_current.store(stats_.current_bytes, std::memory_order_relaxed);
    stats_.cached_bytes += static_cast<std::int64_t>(sc.bytes);
    free_[sc.bin].push_back(p);
  }
  /// Takes `n` cached blocks of bin `bin` (class size `cls`) from an exiting or emptied thread cache.
  void adopt(std::size_t bin, std::size_t cls, void* const* blocks, std::uint32_t n) {
    std::lock_guard<SpinLock> lk(mu_);
    for (std::uint32_t i = 0; i < n; ++i) free_[bin].push_back(blocks[i]);
    stats_.cached_bytes += static_cast<std::int64_t>(cls) * n;
  }
  MemoryStats stats() {
    MemoryStats s;
    {
      std::lock_guard<SpinLock> lk(mu_);
      s = stats_;
    }
    const int n = g_num_slots.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      s.current_bytes += g_slots[i].current.load(std::memory_order_relaxed);
      s.cached_bytes += g_slots[i].cached.load(std::memory_order_relaxed);
      s.num_allocs += g_slots[i].allocs.load(std::memory_order_relaxed);
    }
    s.peak_bytes = std::max(g_peak.load(std::memory_order_relaxed), s.current_bytes);
    return s;
  }
  void reset_peak() { g_peak.store(total_current(), std::memory_order_relaxed); }
  void empty_cache() {
    std::vector<std::vector<void*>> blocks(kNumBins);
    {
      std::lock_guard<SpinLock> lk(mu_);
      blocks.swap(free_);
      stats_.cached_bytes = 0;
    }
    for (auto& bin : blocks)
      for (void* p : bin) std::free(p);  // outside the lock
  }

 private:
  SpinLock mu_;
  std::vector<std::vector<void*>> free_ = std::vector<std::vector<void*>>(kNumBins);
  MemoryStats stats_;  // the locked path's counters (peak_bytes unused: g_peak)
};

CpuCachingAllocator& cpu_allocator() {
  static auto* a = new CpuCachingAllocator();  // never destroyed: storages may die during exit
  return *a;
}

// ---- per-thread caches (Note [small blocks]) ---------------------------------------------------------
constexpr std::size_t kSmallGranule = 16;
constexpr std::size_t kSmallClasses = 24;  // blocks up to 384 bytes (autograd graph nodes: Note [graph node memory])
constexpr std::uint32_t kSmallKeep = 64;   // per class
constexpr std::size_t kImplKeep = 64;
constexpr std::size_t kTlsBins = 11;      // data size classes 64 B .. 64 KiB (Note [thread data blocks])
constexpr std::uint32_t kTlsKeep = 16;    // data blocks per class
constexpr std::uint32_t kParkKeep = 8;    // parked tensors per class (Note [parked tensors])

struct ThreadCache {
  struct DataBin {
    void* blocks[kTlsKeep];
    std::uint32_t n = 0;
  };
  DataBin data[kTlsBins];
  StatSlot* slot = nullptr;  // null: no slot left, data blocks take the locked path
  struct Node {
    Node* next;
  };
  Node* head[kSmallClasses] = {};
  std::uint32_t count[kSmallClasses] = {};
  TensorImpl* impls[kImplKeep] = {};  // reset TensorImpls that kept their shape/stride buffers
  std::size_t num_impls = 0;
  struct ParkBin {
    TensorImpl* impls[kParkKeep];
    std::uint32_t n = 0;
  };
  ParkBin parked[kTlsBins];  // reset TensorImpls that kept their storage too, by data size class

  ~ThreadCache() {
    release_parked();
    while (num_impls > 0) {
      TensorImpl* p = impls[--num_impls];
      ASAN_UNPOISON_MEMORY_REGION(p, sizeof(TensorImpl));
      delete p;  // may free small blocks: the lists below are still in place
    }
    if (slot) {
      flush_data();
      slot->used.store(false, std::memory_order_release);  // the next thread inherits its counts
    }
    for (std::size_t c = 0; c < kSmallClasses; ++c)
      while (Node* n = head[c]) {
        ASAN_UNPOISON_MEMORY_REGION(n, (c + 1) * kSmallGranule);
        head[c] = n->next;
        ::operator delete(n);
      }
  }
  /// Deletes the parked tensors; their data blocks go back as ordinary cached blocks.
  void release_parked() {
    for (std::size_t b = 0; b < kTlsBins; ++b) {
      const auto cls = static_cast<std::int64_t>(std::size_t{64} << b);
      while (parked[b].n > 0) {
        TensorImpl* p = parked[b].impls[--parked[b].n];
        ASAN_UNPOISON_MEMORY_REGION(p, sizeof(TensorImpl));
        ASAN_UNPOISON_MEMORY_REGION(p->storage->data, static_cast<std::size_t>(cls));
        bump(slot->cached, -cls);  // counted as in use again: the storage's free below caches it
        bump(slot->current, cls);
        delete p;
      }
    }
  }
  /// Hands this thread's cached data blocks to the shared lists.
  void flush_data() {
    for (std::size_t b = 0; b < kTlsBins; ++b) {
      if (data[b].n == 0) continue;
      const std::size_t cls = std::size_t{64} << b;
      cpu_allocator().adopt(b, cls, data[b].blocks, data[b].n);
      bump(slot->cached, -static_cast<std::int64_t>(cls) * data[b].n);
      data[b].n = 0;
    }
  }
};

// The hot path reads one initial-exec TLS pointer (no __tls_get_addr call in a shared library);
// the cache itself is owned by a thread_local with a destructor that runs at thread exit.
__attribute__((tls_model("initial-exec"))) thread_local ThreadCache* t_cache = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool t_cache_gone = false;

struct ThreadCacheOwner {
  ThreadCache cache;
  ThreadCacheOwner() {
    for (int i = 0; i < kMaxSlots; ++i) {
      if (!g_slots[i].used.load(std::memory_order_relaxed) && !g_slots[i].used.exchange(true, std::memory_order_acquire)) {
        cache.slot = &g_slots[i];
        int n = g_num_slots.load(std::memory_order_relaxed);
        while (n < i + 1 && !g_num_slots.compare_exchange_weak(n, i + 1, std::memory_order_release)) {
        }
        break;
      }
    }
    t_cache = &cache;
  }
  ~ThreadCacheOwner() {
    t_cache = nullptr;
    t_cache_gone = true;  // later frees on this thread go straight to the system
  }
};

[[gnu::noinline]] ThreadCache* make_thread_cache() {
  thread_local ThreadCacheOwner owner;
  return t_cache;
}

/// This thread's cache, or null while the thread is exiting.
inline ThreadCache* thread_cache() {
  if (ThreadCache* c = t_cache) return c;
  return t_cache_gone ? nullptr : make_thread_cache();
}

/// Recycling of TensorImpls whose last Tensor handle went away: resets the impl to a default one
/// (releasing its autograd state and view base) but keeps its shape/stride buffers, and parks it
/// with its storage (Note [parked tensors]) or stacks it for reuse without; or deletes it when this
/// thread's stack is full or gone.
struct ImplRecycler {
  // The reset below names every field: a new TensorImpl field must be reset here too.
  static_assert(sizeof(TensorImpl) == sizeof(detail::ImplCounts) + sizeof(std::shared_ptr<Storage>) + 2 * sizeof(Shape) +
                                          sizeof(std::int64_t) + sizeof(std::int64_t) +
                                          sizeof(std::unique_ptr<AutogradMeta>) + sizeof(Tensor),
                "TensorImpl changed: update ImplRecycler");
  static void recycle(TensorImpl* p) noexcept {
    if (p->autograd) p->autograd.reset();  // these may release other tensors, which may recycle theirs
    if (p->view_base.defined()) p->view_base = Tensor();
    p->offset = 0;
    p->dtype = Dtype::Float32;
    p->history_seen = 0;
    if (p->counts.weak.load(std::memory_order_acquire) != 1) {
      // Weak handles remain (Note [intrusive tensor counts]): the last one frees the memory.
      p->storage.reset();
      if (p->counts.weak.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
      return;
    }
    ThreadCache* c = thread_cache();
    if (!c) {
      delete p;
      return;
    }
    if (park(c, p)) return;
    if (c->num_impls >= kImplKeep) {
      delete p;
      return;
    }
    p->storage.reset();  // may release other tensors too
    if (c->num_impls >= kImplKeep) {  // filled meanwhile
      delete p;
      return;
    }
    ASAN_POISON_MEMORY_REGION(p, sizeof(TensorImpl));
    c->impls[c->num_impls++] = p;
  }
  /// Parks `p` with its storage when it was the storage's only owner and the block is small.
  static bool park(ThreadCache* c, TensorImpl* p) noexcept {
    Storage* s = p->storage.get();
    // host storage only (cpu:0): a parked impl is revived for cpu:0 without touching its device
    if (!s || !c->slot || s->deleter || !s->data || s->device != Device::cpu() || p->storage.use_count() != 1)
      return false;
    const SizeClass sc = size_class(s->nbytes);
    if (sc.bin >= kTlsBins || c->parked[sc.bin].n >= kParkKeep) return false;
    const auto cls = static_cast<std::int64_t>(sc.bytes);
    bump(c->slot->current, -cls);
    bump(c->slot->cached, cls);
    s->version = 0;
    ASAN_POISON_MEMORY_REGION(s->data, sc.bytes);
    ASAN_POISON_MEMORY_REGION(p, sizeof(TensorImpl));
    c->parked[sc.bin].impls[c->parked[sc.bin].n++] = p;
    return true;
  }
};

}  // namespace

namespace detail {

void* small_block_alloc(std::size_t bytes) {
  const std::size_t c = (bytes - 1) / kSmallGranule;
  if (bytes == 0 || c >= kSmallClasses) return ::operator new(bytes);
  if (ThreadCache* tc = thread_cache()) {
    if (ThreadCache::Node* n = tc->head[c]) {
      ASAN_UNPOISON_MEMORY_REGION(n, (c + 1) * kSmallGranule);
      tc->head[c] = n->next;
      --tc->count[c];
      return n;
    }
  }
  return ::operator new((c + 1) * kSmallGranule);
}

void small_block_free(void* p, std::size_t bytes) noexcept {
  const std::size_t c = (bytes - 1) / kSmallGranule;
  if (bytes != 0 && c < kSmallClasses) {
    ThreadCache* tc = thread_cache();
    if (tc && tc->count[c] < kSmallKeep) {
      auto* n = static_cast<ThreadCache::Node*>(p);
      n->next = tc->head[c];
      tc->head[c] = n;
      ++tc->count[c];
      ASAN_POISON_MEMORY_REGION(n, (c + 1) * kSmallGranule);
      return;
    }
  }
  ::operator delete(p);
}

/// Sets a recycled impl's counts to one Tensor handle.
inline Tensor revive(TensorImpl* p) noexcept {
  p->counts.strong.store(1, std::memory_order_relaxed);
  p->counts.weak.store(1, std::memory_order_relaxed);
  return Tensor::adopt(p);
}

Tensor new_impl() {
  ThreadCache* c = thread_cache();
  if (c && c->num_impls > 0) {
    TensorImpl* p = c->impls[--c->num_impls];
    ASAN_UNPOISON_MEMORY_REGION(p, sizeof(TensorImpl));
    return revive(p);
  }
  return Tensor::adopt(new TensorImpl());
}

Tensor new_impl_with_storage(std::size_t nbytes, Device device) {
  if (device == Device::cpu()) {
    const SizeClass sc = size_class(nbytes);
    ThreadCache* c = sc.bin < kTlsBins ? thread_cache() : nullptr;
    if (c && c->parked[sc.bin].n > 0) {
      TensorImpl* p = c->parked[sc.bin].impls[--c->parked[sc.bin].n];
      ASAN_UNPOISON_MEMORY_REGION(p, sizeof(TensorImpl));
      Storage* s = p->storage.get();
      ASAN_UNPOISON_MEMORY_REGION(s->data, sc.bytes);
      s->nbytes = nbytes;
      const auto cls = static_cast<std::int64_t>(sc.bytes);
      bump(c->slot->cached, -cls);
      bump(c->slot->current, cls);
      bump(c->slot->allocs, 1);
      note_peak(total_current());
      Tensor t = revive(p);
      if (__builtin_expect(t_new_storages != nullptr, 0)) t_new_storages->insert(s);
      return t;
    }
  }
  Tensor t = new_impl();
  t.impl()->storage = Storage::allocate(nbytes, device);
  if (__builtin_expect(t_new_storages != nullptr, 0)) t_new_storages->insert(t.impl()->storage.get());
  return t;
}

void release_impl(TensorImpl* p) noexcept { ImplRecycler::recycle(p); }

WeakTensor::~WeakTensor() {
  if (p_ && p_->counts.weak.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;  // contents already reset
}

Tensor WeakTensor::lock() const noexcept {
  if (!p_) return Tensor();
  std::uint32_t n = p_->counts.strong.load(std::memory_order_relaxed);
  while (n != 0)
    if (p_->counts.strong.compare_exchange_weak(n, n + 1, std::memory_order_acquire, std::memory_order_relaxed))
      return Tensor::adopt(p_);
  return Tensor();
}

}  // namespace detail

namespace {
/// A CPU data block: from this thread's bins when small (Note [thread data blocks]), else the
/// shared allocator.
void* cpu_alloc(std::size_t nbytes) {
  const SizeClass sc = size_class(nbytes);
  if (sc.bin < kTlsBins) {
    ThreadCache* tc = thread_cache();
    if (tc && tc->slot && tc->data[sc.bin].n > 0) {
      void* p = tc->data[sc.bin].blocks[--tc->data[sc.bin].n];
      const auto cls = static_cast<std::int64_t>(sc.bytes);
      bump(tc->slot->cached, -cls);
      bump(tc->slot->current, cls);
      bump(tc->slot->allocs, 1);
      note_peak(total_current());
      return p;
    }
  }
  return cpu_allocator().allocate(nbytes);
}

void cpu_free(void* p, std::size_t nbytes) {
  const SizeClass sc = size_class(nbytes);
  if (sc.bin < kTlsBins) {
    ThreadCache* tc = thread_cache();
    if (tc && tc->slot && tc->data[sc.bin].n < kTlsKeep) {
      tc->data[sc.bin].blocks[tc->data[sc.bin].n++] = p;
      const auto cls = static_cast<std::int64_t>(sc.bytes);
      bump(tc->slot->current, -cls);
      bump(tc->slot->cached, cls);
      return;
    }
  }
  cpu_allocator().free(p, nbytes);
}
}  // namespace

Storage::~Storage() {
  if (!data) return;
  if (deleter) {
    deleter(data);
  } else if (device.is_cpu()) {
    cpu_free(data, nbytes);
  } else {
    cuda::detail::device_free(data, device.index);  // stream-ordered: pending work on its stream may still read it
  }
}

namespace {
/// Storage on a CUDA device, from its caching allocator (src/cuda/allocator.hpp).
[[gnu::noinline]] std::shared_ptr<Storage> allocate_cuda(std::size_t nbytes, Device device) {
  cuda::detail::check_device(device, "empty");
  auto s = std::allocate_shared<Storage>(detail::SmallBlockAllocator<Storage>());
  s->data = cuda::detail::device_alloc(nbytes, device.index, &s->stream);
  s->nbytes = nbytes;
  s->device = device;
  return s;
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(std::size_t nbytes, Device device) {
  if (!device.is_cpu()) return allocate_cuda(nbytes, device);
  if (device.index != 0) cuda::detail::check_device(device, "empty");  // a virtual CPU device (set_cpu_device_count)
  auto s = std::allocate_shared<Storage>(detail::SmallBlockAllocator<Storage>());
  s->data = cpu_alloc(nbytes);
  s->nbytes = nbytes;
  s->device = device;
  return s;
}

MemoryStats memory_stats(Device device) {
  cuda::detail::check_device(device, "memory_stats");
  if (!device.is_cpu()) return cuda::detail::device_memory_stats(device.index);
  return cpu_allocator().stats();
}
void reset_peak_memory_stats(Device device) {
  cuda::detail::check_device(device, "reset_peak_memory_stats");
  if (!device.is_cpu()) return cuda::detail::device_reset_peak(device.index);
  cpu_allocator().reset_peak();
}
void empty_cache(Device device) {
  cuda::detail::check_device(device, "empty_cache");
  if (!device.is_cpu()) return cuda::detail::device_empty_cache(device.index);
  if (ThreadCache* tc = thread_cache(); tc && tc->slot) {  // other threads keep theirs
    tc->release_parked();
    tc->flush_data();
  }
  cpu_allocator().empty_cache();
}

}  // namespace phasor
