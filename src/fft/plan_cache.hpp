// src/fft/plan_cache.hpp - FFTW plans and the bounded LRU cache that keeps them.
//
// Note [plan cache]
// An FFTW plan is only valid for arrays of the exact layout it was made for: the transform
// and batch ("howmany") dims with their input/output strides, the precision, the kind, the
// direction, the planner flags, the thread count, whether it runs in place, and the SIMD
// alignment of both arrays (new-array execute requires the same fftw_alignment_of). The
// PlanKey holds all of them, so a hit can always be executed on the caller's arrays.
// Plans are shared_ptrs: eviction only drops the cache's reference, so a thread still
// executing an evicted plan keeps it alive; the last owner destroys it under the planner
// lock (FFTW's planner and destroy are not thread-safe, its execute functions are).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/small_vec.hpp"

namespace phasor::fft::detail {

/// The three transform kinds every public function lowers to.
enum class Kind : std::uint8_t { c2c, r2c, c2r };

/// One dim of an FFTW guru64 problem: length, input stride, output stride (in elements).
struct IoDim {
  std::int64_t n;   // no default initializers: keys are built on the hot path, unused
  std::int64_t is;  // inline slots of an IoDims are never read
  std::int64_t os;
  bool operator==(const IoDim& o) const { return n == o.n && is == o.is && os == o.os; }
};
using ::phasor::detail::SmallVec;
/// Transform or batch dims of a problem (inline up to 8).
using IoDims = SmallVec<IoDim, 8>;

/// Everything an FFTW plan depends on (Note [plan cache]).
struct PlanKey {
  Kind kind = Kind::c2c;
  bool single = false;  // float (fftwf) or double (fftw)
  bool forward = true;  // sign of the exponent (c2c; r2c is always forward, c2r backward)
  bool inplace = false;
  bool preserve_input = false;  // c2r: FFTW_PRESERVE_INPUT (rank 1 only) instead of DESTROY_INPUT
  int align_in = 0;             // fftw_alignment_of of the input and output arrays
  int align_out = 0;
  unsigned flags = 0;  // FFTW planner flags
  int threads = 1;
  IoDims dims;     // transform dims (for r2c/c2r the last is the halved one)
  IoDims howmany;  // batch dims
  bool operator==(const PlanKey& o) const;
};

/// Hash of a PlanKey.
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const;
};

/// An FFTW plan of either precision; destroyed under the planner lock.
struct Plan {
  void* handle = nullptr;  // fftw_plan or fftwf_plan
  bool single = false;
  Plan(void* h, bool s) : handle(h), single(s) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan();
};
using PlanPtr = std::shared_ptr<const Plan>;

/// Serializes every FFTW call that is not an execute (planning, destroy, wisdom, thread setup).
std::recursive_mutex& planner_mutex();

/// The cached plan for `key`, or null. A small per-thread list of recently used plans is
/// searched first (no lock, no reference counting: the thread's list keeps the plan alive until
/// this thread's next cache call); a hit in the shared LRU becomes its most recently used entry
/// and is also held in `keep`; with `share`, a per-thread hit is held in `keep` too.
const Plan* cache_find(const PlanKey& key, PlanPtr& keep, bool share = false);
/// Bumped by clear_plan_cache and set_plan_cache_capacity (Note [thread-local plans]).
extern std::atomic<std::uint64_t> g_generation;
/// False while the plan cache's capacity is 0.
extern std::atomic<bool> g_tls_enabled;
/// Changes whenever cached plans are dropped (clear_plan_cache, set_plan_cache_capacity); 0 while
/// the capacity is 0, i.e. while no plan may be remembered. Per-thread plan memos compare it.
inline std::uint64_t plan_generation() {
  return g_tls_enabled.load(std::memory_order_relaxed) ? g_generation.load(std::memory_order_acquire) : 0;
}
/// Inserts `plan` for `key` (an existing entry wins and is returned) and evicts beyond capacity.
PlanPtr cache_insert(const PlanKey& key, PlanPtr plan);

}  // namespace phasor::fft::detail
