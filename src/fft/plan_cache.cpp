// src/fft/plan_cache.cpp - bounded LRU cache of FFTW plans (Note [plan cache]).
#include "fft/plan_cache.hpp"

#include <array>
#include <atomic>
#include <list>
#include <unordered_map>
#include <utility>

#include "fft/cufft_backend.hpp"
#include "phasor/fft.hpp"

namespace phasor::fft {
namespace detail {

bool PlanKey::operator==(const PlanKey& o) const {
  return kind == o.kind && single == o.single && forward == o.forward && inplace == o.inplace &&
         preserve_input == o.preserve_input && align_in == o.align_in && align_out == o.align_out && flags == o.flags &&
         threads == o.threads && dims == o.dims && howmany == o.howmany;
}

namespace {
inline void mix(std::size_t& h, std::uint64_t v) {
  // splitmix64-style mixing: cheap and well spread for small integers.
  v += 0x9e3779b97f4a7c15ULL + h;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  h = static_cast<std::size_t>(v ^ (v >> 31));
}
}  // namespace

std::size_t PlanKeyHash::operator()(const PlanKey& k) const {
  std::size_t h = 0;
  mix(h, static_cast<std::uint64_t>(k.kind) | (std::uint64_t(k.single) << 8) | (std::uint64_t(k.forward) << 9) |
             (std::uint64_t(k.inplace) << 10) | (std::uint64_t(k.preserve_input) << 11) |
             (std::uint64_t(k.align_in) << 16) | (std::uint64_t(k.align_out) << 32) | (std::uint64_t(k.threads) << 48));
  mix(h, k.flags);
  for (const auto& d : k.dims) {
    mix(h, static_cast<std::uint64_t>(d.n));
    mix(h, static_cast<std::uint64_t>(d.is) ^ (static_cast<std::uint64_t>(d.os) << 32));
  }
  mix(h, 0xffff);  // separates dims from howmany
  for (const auto& d : k.howmany) {
    mix(h, static_cast<std::uint64_t>(d.n));
    mix(h, static_cast<std::uint64_t>(d.is) ^ (static_cast<std::uint64_t>(d.os) << 32));
  }
  return h;
}

std::recursive_mutex& planner_mutex() {
  static std::recursive_mutex m;
  return m;
}

namespace {

/// The LRU: a list (front = most recent) and an index into it.
struct Cache {
  std::mutex mutex;
  std::size_t capacity = 256;
  std::list<std::pair<PlanKey, PlanPtr>> lru;
  std::unordered_map<PlanKey, std::list<std::pair<PlanKey, PlanPtr>>::iterator, PlanKeyHash> index;

  /// Evicts down to capacity; the evicted plans are handed back so they die outside the lock.
  void evict(std::vector<PlanPtr>& dead) {
    while (lru.size() > capacity) {
      dead.push_back(std::move(lru.back().second));
      index.erase(lru.back().first);
      lru.pop_back();
    }
  }
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: plans may outlive static destruction order
  return *c;
}

}  // namespace

// Note [thread-local plans]
// Each thread remembers its last few plans (kTlsSlots) and finds them without the cache lock
// or a hash lookup. Changing the capacity or clearing the cache bumps g_generation, which
// invalidates every thread's list; with capacity 0 nothing is remembered. A plan evicted from
// the shared LRU may stay in a thread's list until that thread replaces it (it stays valid).
std::atomic<std::uint64_t> g_generation{1};
std::atomic<bool> g_tls_enabled{true};
namespace {
constexpr std::size_t kTlsSlots = 4;

struct TlsSlot {
  std::uint64_t generation = 0;
  PlanKey key;
  PlanPtr plan;
};
struct TlsPlans {
  std::array<TlsSlot, kTlsSlots> slots;
  std::size_t next = 0;
};
TlsPlans& tls_plans() {
  thread_local TlsPlans t;
  return t;
}

void tls_remember(const PlanKey& key, const PlanPtr& plan) {
  if (!g_tls_enabled.load(std::memory_order_relaxed)) return;
  TlsPlans& t = tls_plans();
  TlsSlot& s = t.slots[t.next];
  t.next = (t.next + 1) % kTlsSlots;
  s.generation = g_generation.load(std::memory_order_acquire);
  s.key = key;
  s.plan = plan;
}

void invalidate_tls() { g_generation.fetch_add(1, std::memory_order_acq_rel); }
}  // namespace


const Plan* cache_find(const PlanKey& key, PlanPtr& keep, bool share) {
  {
    TlsPlans& t = tls_plans();
    const std::uint64_t gen = g_generation.load(std::memory_order_acquire);
    for (auto& s : t.slots)
      if (s.plan && s.generation == gen && s.key == key) {
        if (share) keep = s.plan;
        return s.plan.get();
      }
  }
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.index.find(key);
    if (it == c.index.end()) return nullptr;
    if (it->second != c.lru.begin()) c.lru.splice(c.lru.begin(), c.lru, it->second);
    keep = it->second->second;
  }
  tls_remember(key, keep);
  return keep.get();
}

PlanPtr cache_insert(const PlanKey& key, PlanPtr plan) {
  Cache& c = cache();
  std::vector<PlanPtr> dead;  // destroyed after the lock is released
  PlanPtr result = plan;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.capacity == 0) return plan;
    auto it = c.index.find(key);
    if (it != c.index.end()) {
      dead.push_back(std::move(plan));  // another thread planned the same problem first
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      result = it->second->second;
    } else {
      c.lru.emplace_front(key, plan);
      c.index.emplace(key, c.lru.begin());
      c.evict(dead);
    }
  }
  tls_remember(key, result);
  return result;
}

}  // namespace detail

std::size_t plan_cache_size() {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.lru.size();
}

std::size_t plan_cache_size(Device device) {
  return device.is_cpu() ? plan_cache_size() : detail::cufft_plan_cache_size(device.index);
}

std::size_t plan_cache_capacity() {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.capacity;
}

void set_plan_cache_capacity(std::size_t capacity) {
  auto& c = detail::cache();
  std::vector<detail::PlanPtr> dead;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.capacity = capacity;
    c.evict(dead);
    detail::set_cufft_plan_cache_capacity(capacity);
    detail::g_tls_enabled.store(capacity > 0);
    detail::invalidate_tls();
  }
}

void clear_plan_cache() {
  auto& c = detail::cache();
  std::vector<detail::PlanPtr> dead;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto& e : c.lru) dead.push_back(std::move(e.second));
    c.lru.clear();
    c.index.clear();
    detail::invalidate_tls();
  }
  detail::clear_cufft_plan_cache();
}

}  // namespace phasor::fft
