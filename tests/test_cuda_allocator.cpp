// tests/test_cuda_allocator.cpp - the caching device allocator's bookkeeping (BlockPool), driven by a
// fake malloc backend with a byte budget: runs on every machine, GPU or not.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>
#include <phasor/phasor.hpp>

#include "../src/cuda/allocator.hpp"

using phasor::Error;
using phasor::cuda::detail::BlockPool;
using phasor::cuda::detail::RawBackend;

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

/// malloc-backed segments with a budget: a request past the budget fails like cudaMalloc does.
class FakeBackend : public RawBackend {
 public:
  explicit FakeBackend(std::size_t budget) : budget_(budget) {}
  ~FakeBackend() override { CHECK(live_.empty()); }
  void* raw_alloc(std::size_t bytes) override {
    ++alloc_calls;
    if (used_ + bytes > budget_) {
      ++failed_calls;
      return nullptr;
    }
    void* p = std::malloc(bytes);
    live_[p] = bytes;
    used_ += bytes;
    return p;
  }
  void raw_free(void* p) override {
    CHECK_FALSE(busy);  // a segment goes back only after the device's queued work
    ++free_calls;
    auto it = live_.find(p);
    REQUIRE(it != live_.end());  // only segments it handed out come back
    used_ -= it->second;
    live_.erase(it);
    std::free(p);
  }
  void mem_info(std::size_t& free_bytes, std::size_t& total_bytes) override {
    free_bytes = budget_ - used_;
    total_bytes = budget_;
  }  // events: a token per record_event, completed by the test
  void* record_event(void*) override {
    const std::uintptr_t id = next_event_++;
    events[id] = false;
    return reinterpret_cast<void*>(id);
  }
  bool event_done(void* e) override { return events.at(reinterpret_cast<std::uintptr_t>(e)); }
  void destroy_event(void* e) override { CHECK(events.erase(reinterpret_cast<std::uintptr_t>(e)) == 1); }
  void synchronize() override {  // all queued work done: every event, and whatever kept the device busy
    ++sync_calls;
    for (auto& kv : events) kv.second = true;
    busy = false;
  }
  std::map<std::uintptr_t, bool> events;  ///< live events and whether their work is done
  bool busy = false;  ///< the test's stand-in for kernels still queued: raw_free then would free memory in use
  int sync_calls = 0;

  std::size_t used() const { return used_; }
  int alloc_calls = 0, failed_calls = 0, free_calls = 0;

 private:
  std::size_t budget_, used_ = 0;
  std::map<void*, std::size_t> live_;
  std::uintptr_t next_event_ = 1;
};

void* const kStreamA = nullptr;  // the default stream
void* const kStreamB = reinterpret_cast<void*>(std::uintptr_t{0x1000});

}  // namespace

TEST_CASE("cuda allocator: rounding, small segments and splitting") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  CHECK(BlockPool::round_size(1) == 512);
  CHECK(BlockPool::round_size(512) == 512);
  CHECK(BlockPool::round_size(513) == 1024);
  CHECK(pool.allocate(0, kStreamA) == nullptr);

  char* a = static_cast<char*>(pool.allocate(100, kStreamA));
  REQUIRE(a != nullptr);
  CHECK(be.alloc_calls == 1);
  CHECK(be.used() == 2 * MiB);  // one small segment
  auto s = pool.stats();
  CHECK(s.current_bytes == 512);
  CHECK(s.cached_bytes == 2 * MiB - 512);
  CHECK(s.num_allocs == 1);
  CHECK(s.num_system_allocs == 1);
  // the next small request is carved from the same segment, right after the first block
  char* b = static_cast<char*>(pool.allocate(1000, kStreamA));
  CHECK(b == a + 512);
  CHECK(be.alloc_calls == 1);
  CHECK(pool.stats().current_bytes == 512 + 1024);
  std::memset(a, 1, 100);  // the blocks are real memory
  std::memset(b, 2, 1000);
  CHECK(a[99] == 1);
  CHECK(b[0] == 2);
  // a request as large as the small limit still comes from a 2 MiB segment
  void* c = pool.allocate(MiB, kStreamA);
  CHECK(static_cast<char*>(c) == b + 1024);
  CHECK(be.alloc_calls == 1);
  pool.free(a);
  pool.free(b);
  pool.free(c);
  s = pool.stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.cached_bytes == 2 * MiB);
  CHECK(s.peak_bytes == 512 + 1024 + MiB);
  CHECK(pool.num_segments() == 1);
}

TEST_CASE("cuda allocator: best fit and merging of free neighbours") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  char* p[4];
  for (auto& q : p) q = static_cast<char*>(pool.allocate(4 * KiB, kStreamA));
  for (int i = 1; i < 4; ++i) CHECK(p[i] == p[0] + i * 4 * KiB);
  // free a 4 KiB hole at p[1]: an 8 KiB request does not fit there, a 2 KiB one does (best fit over the
  // large tail of the segment)
  pool.free(p[1]);
  char* big = static_cast<char*>(pool.allocate(8 * KiB, kStreamA));
  CHECK(big == p[3] + 4 * KiB);
  char* small = static_cast<char*>(pool.allocate(2 * KiB, kStreamA));
  CHECK(small == p[1]);
  // freeing p[2] merges it with the free 2 KiB remainder after `small` (6 KiB); freeing `small` merges
  // that too: an 8 KiB hole at p[1], the best fit for an 8 KiB request
  pool.free(p[2]);
  pool.free(small);
  char* eight = static_cast<char*>(pool.allocate(8 * KiB, kStreamA));
  CHECK(eight == p[1]);
  CHECK(pool.num_segments() == 1);
  pool.free(eight);
  pool.free(p[0]);
  pool.free(p[3]);
  pool.free(big);
  // everything merged back into one free block spanning the segment: a 2 MiB request can't use it
  // (it is large) but the whole segment is free, so empty_cache returns it
  CHECK(pool.stats().cached_bytes == 2 * MiB);
  pool.empty_cache();
  CHECK(be.free_calls == 1);
  CHECK(be.used() == 0);
  CHECK(pool.stats().cached_bytes == 0);
  CHECK(pool.num_segments() == 0);
}

TEST_CASE("cuda allocator: large blocks have their own segments") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  void* a = pool.allocate(MiB + 1, kStreamA);  // large: rounds to 1 MiB + 512, segment 2 MiB
  CHECK(be.used() == 2 * MiB);
  // the remainder (1 MiB - 512) is below the 1 MiB large split limit: it stays with the block
  CHECK(pool.stats().current_bytes == 2 * MiB);
  void* b = pool.allocate(5 * MiB, kStreamA);  // segment of 6 MiB, remainder 1 MiB kept free
  CHECK(be.used() == 8 * MiB);
  CHECK(pool.stats().current_bytes == 2 * MiB + 5 * MiB);
  CHECK(pool.stats().cached_bytes == MiB);
  void* c = pool.allocate(MiB + 512, kStreamA);  // fits the 1 MiB tail? no (larger): new segment
  CHECK(be.used() == 10 * MiB);
  void* d = pool.allocate(MiB + 1024, kStreamA);  // large requests never use small segments either
  CHECK(be.alloc_calls == 4);
  pool.free(d);
  void* e = pool.allocate(MiB + 1024, kStreamA);  // reuses d's block
  CHECK(e == d);
  CHECK(be.alloc_calls == 4);
  pool.free(b);
  void* f = pool.allocate(3 * MiB, kStreamA);  // best fit: b's 6 MiB segment, split (3 MiB tail)
  CHECK(f == b);
  CHECK(be.alloc_calls == 4);
  for (void* q : {a, c, e, f}) pool.free(q);
  CHECK(pool.stats().current_bytes == 0);
  pool.empty_cache();
  CHECK(be.used() == 0);
  CHECK(be.free_calls == 4);
}

TEST_CASE("cuda allocator: blocks are reused only on their stream") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  void* a = pool.allocate(4 * KiB, kStreamA);
  CHECK(pool.stream_of(a) == kStreamA);
  pool.free(a);
  void* b = pool.allocate(4 * KiB, kStreamB);  // stream B gets its own segment
  CHECK(b != a);
  CHECK(be.alloc_calls == 2);
  CHECK(pool.stream_of(b) == kStreamB);
  void* c = pool.allocate(4 * KiB, kStreamA);  // stream A gets its freed block back
  CHECK(c == a);
  CHECK(be.alloc_calls == 2);
  pool.free(b);
  pool.free(c);
  CHECK_THROWS_WITH_AS(pool.free(reinterpret_cast<void*>(std::uintptr_t{0x40})),
                       "[free] pointer was not allocated by the cuda:0 caching allocator", Error);
  CHECK_THROWS_AS(pool.stream_of(a), Error);  // no longer live
  pool.empty_cache();
  CHECK(be.used() == 0);
}

TEST_CASE("cuda allocator: a block used on another stream is reused only after that stream's work") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  char* a = static_cast<char*>(pool.allocate(4096, kStreamA));
  pool.record_use(a, kStreamB);
  pool.record_use(a, kStreamB);  // once per stream
  pool.record_use(a, kStreamA);  // its own stream: nothing to wait for
  pool.free(a);
  CHECK(be.events.size() == 1);
  CHECK(pool.num_pending() == 1);
  CHECK(pool.stats().current_bytes == 0);
  CHECK(pool.stats().cached_bytes == static_cast<std::int64_t>(2 * MiB));
  char* b = static_cast<char*>(pool.allocate(4096, kStreamA));  // stream B may still read a's block
  CHECK(b == a + 4096);
  be.events.begin()->second = true;  // stream B's work is done
  char* c = static_cast<char*>(pool.allocate(4096, kStreamA));
  CHECK(c == a);  // reused now
  CHECK(pool.num_pending() == 0);
  CHECK(be.events.empty());
  // empty_cache waits for every stream: a pending block becomes free (its segment stays: c and b live)
  pool.record_use(c, kStreamB);
  pool.free(c);
  CHECK(pool.num_pending() == 1);
  pool.empty_cache();
  CHECK(pool.num_pending() == 0);
  CHECK(pool.num_segments() == 1);
  c = static_cast<char*>(pool.allocate(4096, kStreamA));
  CHECK(c == a);
  // a block without other streams is free at once
  pool.free(b);
  pool.free(c);
  CHECK(pool.num_pending() == 0);
  pool.empty_cache();
  CHECK(pool.num_segments() == 0);
  CHECK_THROWS_WITH_AS(pool.record_use(a, kStreamB), doctest::Contains("not allocated by the cuda:0"), phasor::Error);
}

TEST_CASE("cuda allocator: a long random run of allocations and frees keeps blocks disjoint and whole") {
  // Blocks, free-set and live-map nodes are recycled (Note [caching device allocator]): a recycled one
  // carrying stale state (a neighbour link, another stream's use) would show up here as overlapping or
  // clobbered blocks, wrong statistics or a segment that never merges back whole.
  FakeBackend be(256 * MiB);
  BlockPool pool(be, "cuda:0");
  std::mt19937_64 rng(12345);
  struct Live {
    std::size_t size;
    void* stream;
    unsigned char tag;
  };
  std::map<char*, Live> live;
  std::int64_t current = 0;
  auto release = [&](std::map<char*, Live>::iterator it) {
    char* p = it->first;
    const Live& l = it->second;
    bool intact = true;  // not clobbered by another block
    for (std::size_t k = 0; k < l.size; k += 97) intact = intact && static_cast<unsigned char>(p[k]) == l.tag;
    REQUIRE(intact);
    if (rng() % 4 == 0) pool.record_use(p, l.stream == kStreamA ? kStreamB : kStreamA);
    current -= static_cast<std::int64_t>(BlockPool::round_size(l.size));
    pool.free(p);
    live.erase(it);
  };
  for (int step = 0; step < 4000; ++step) {
    if (live.size() < 48 && (live.empty() || rng() % 5 < 3)) {
      const std::size_t size = rng() % 8 == 0 ? MiB + rng() % (5 * MiB) : 1 + rng() % (64 * KiB);
      void* stream = rng() % 2 ? kStreamA : kStreamB;
      char* p = static_cast<char*>(pool.allocate(size, stream));
      REQUIRE(p != nullptr);
      CHECK(pool.stream_of(p) == stream);
      auto next = live.lower_bound(p);  // disjoint from its live neighbours
      if (next != live.end()) REQUIRE(p + size <= next->first);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        REQUIRE(prev->first + prev->second.size <= p);
      }
      const auto tag = static_cast<unsigned char>(1 + step % 250);
      for (std::size_t k = 0; k < size; k += 97) p[k] = static_cast<char>(tag);
      live[p] = Live{size, stream, tag};
      current += static_cast<std::int64_t>(BlockPool::round_size(size));
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      release(it);
    }
    if (step % 500 == 499) be.synchronize();  // the other streams' work done: pending blocks become free
    // a large block keeps a tail under 1 MiB unsplit, so it may count more than its rounded size
    REQUIRE(pool.stats().current_bytes >= current);
    if (current == 0) REQUIRE(pool.stats().current_bytes == 0);
  }
  while (!live.empty()) release(live.begin());
  CHECK(pool.stats().current_bytes == 0);
  pool.empty_cache();  // every segment merged back into one free block, so all go back
  CHECK(pool.num_pending() == 0);
  CHECK(pool.num_segments() == 0);
  CHECK(be.used() == 0);
  CHECK(pool.stats().cached_bytes == 0);
}

TEST_CASE("cuda allocator: statistics") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  void* a = pool.allocate(3 * MiB, kStreamA);
  void* b = pool.allocate(1000, kStreamA);
  auto s = pool.stats();
  CHECK(s.current_bytes == 3 * MiB + 1024);  // 3 MiB from a 4 MiB segment (1 MiB tail split off), 1024 B small
  pool.free(a);
  s = pool.stats();
  CHECK(s.current_bytes == 1024);
  CHECK(s.peak_bytes == 3 * MiB + 1024);
  CHECK(s.cached_bytes == 4 * MiB + 2 * MiB - 1024);  // both segments minus b
  CHECK(s.num_allocs == 2);
  CHECK(s.num_system_allocs == 2);
  pool.reset_peak();
  CHECK(pool.stats().peak_bytes == 1024);
  pool.empty_cache();  // frees the large segment, keeps the small one (b lives in it)
  s = pool.stats();
  CHECK(s.cached_bytes == 2 * MiB - 1024);
  CHECK(be.used() == 2 * MiB);
  pool.free(b);
  pool.empty_cache();
  CHECK(be.used() == 0);
}

TEST_CASE("cuda allocator: out of memory frees the cache, retries, then throws") {
  FakeBackend be(8 * MiB);
  BlockPool pool(be, "cuda:1");
  void* a = pool.allocate(6 * MiB, kStreamA);
  pool.free(a);  // 6 MiB cached
  CHECK(pool.stats().cached_bytes == 6 * MiB);
  // 4 MiB does not fit next to the cached 6 MiB segment: the pool releases it and retries
  // (on stream B, so the cached block cannot simply be reused)
  void* b = pool.allocate(4 * MiB, kStreamB);
  REQUIRE(b != nullptr);
  CHECK(be.failed_calls == 1);
  CHECK(be.free_calls == 1);
  CHECK(pool.stats().cached_bytes == 0);
  // now nothing is cached and 4 MiB are left: 5 MiB fails twice and throws, naming the numbers
  CHECK_THROWS_WITH_AS(pool.allocate(5 * MiB, kStreamB),
                       "[allocate] out of memory on cuda:1: requested 5242880 bytes, free 4194304 bytes of 8388608 "
                       "(cudaMemGetInfo), cached 0 bytes",
                       Error);
  CHECK(be.failed_calls == 3);
  // a request beyond any device (whose rounding would overflow) fails without asking the backend
  CHECK_THROWS_WITH_AS(pool.allocate(~std::size_t{0} - 10, kStreamB),
                       doctest::Contains("[allocate] out of memory on cuda:1: requested 18446744073709551605 bytes"),
                       Error);
  CHECK(be.alloc_calls == 5);  // 6 MiB, 4 MiB twice, 5 MiB twice: nothing more
  auto s = pool.stats();  // the failed requests left no trace
  CHECK(s.current_bytes == 4 * MiB);
  CHECK(s.num_allocs == 2);
  pool.free(b);
  pool.empty_cache();
  CHECK(be.used() == 0);
}

TEST_CASE("cuda allocator: segments go back only after the device's queued work, which out of memory waits for") {
  FakeBackend be(8 * MiB);
  BlockPool pool(be, "cuda:0");
  void* a = pool.allocate(6 * MiB, kStreamA);
  pool.free(a);  // cached, while (say) a kernel queued on stream A still writes it
  be.busy = true;
  pool.empty_cache();  // the fake checks that raw_free comes after synchronize
  CHECK(be.sync_calls == 1);
  CHECK(be.free_calls == 1);
  CHECK(pool.stats().cached_bytes == 0);
  pool.empty_cache();  // nothing cached: it still waits (cheap), frees nothing
  CHECK(be.free_calls == 1);
  // out of memory: a block freed after record_use on a stream with queued work is reclaimed by waiting
  void* b = pool.allocate(6 * MiB, kStreamA);
  pool.record_use(b, kStreamB);
  pool.free(b);
  CHECK(pool.num_pending() == 1);
  be.busy = true;
  void* c = pool.allocate(4 * MiB, kStreamB);  // fails, synchronizes, reclaims b's segment, retries
  REQUIRE(c != nullptr);
  CHECK(pool.num_pending() == 0);
  CHECK(be.failed_calls == 1);
  CHECK(be.free_calls == 2);
  pool.free(c);
  pool.empty_cache();
  CHECK(be.used() == 0);
}

TEST_CASE("cuda allocator: concurrent use from several threads") {
  struct LockedBackend : FakeBackend {
    using FakeBackend::FakeBackend;
    std::mutex mu;
    void* raw_alloc(std::size_t b) override {
      std::lock_guard<std::mutex> lk(mu);
      return FakeBackend::raw_alloc(b);
    }
    void raw_free(void* p) override {
      std::lock_guard<std::mutex> lk(mu);
      FakeBackend::raw_free(p);
    }
  } be(1024 * MiB);
  BlockPool pool(be, "cuda:0");
  std::atomic<int> corrupted{0};
  auto work = [&pool, &corrupted](unsigned seed, void* stream) {
    std::mt19937 rng(seed);
    std::vector<std::pair<unsigned char*, std::size_t>> live;
    for (int i = 0; i < 2000; ++i) {
      if (live.empty() || (live.size() < 8 && rng() % 3 != 0)) {
        const std::size_t n = 1 + rng() % (rng() % 8 == 0 ? 3 * MiB : 64 * KiB);
        auto* p = static_cast<unsigned char*>(pool.allocate(n, stream));
        std::memset(p, static_cast<int>(seed), n);  // a block handed to two threads would be overwritten
        live.emplace_back(p, n);
      } else {
        const std::size_t k = rng() % live.size();
        const auto [p, n] = live[k];
        for (std::size_t j = 0; j < n; j += 97)
          if (p[j] != static_cast<unsigned char>(seed)) ++corrupted;
        pool.free(p);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    for (const auto& e : live) pool.free(e.first);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back(work, 11 + t, t % 2 ? kStreamB : kStreamA);  // two threads per stream
  for (auto& th : threads) th.join();
  CHECK(corrupted.load() == 0);
  const auto s = pool.stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.num_allocs >= 4000);  // each thread: allocations + frees = 2000, frees <= allocations
  pool.empty_cache();  // every segment merged back into one free block: all released
  CHECK(be.used() == 0);
  CHECK(pool.num_segments() == 0);
}

TEST_CASE("cuda allocator: a CUDA graph's capture stream is its private pool, and what it saw live is kept while it lives") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0");
  void* const kCapture = reinterpret_cast<void*>(std::uintptr_t{0x2000});
  void* param = pool.allocate(4 * KiB, kStreamA);    // live before the capture: the graph may read it
  void* spare = pool.allocate(4 * KiB, kStreamA);
  pool.free(spare);                                  // free before the capture: ordinary cache
  pool.begin_capture(7, kCapture);
  CHECK_THROWS_WITH_AS(pool.begin_capture(8, kStreamB), "[cuda.Graph] a CUDA graph capture is already in progress on cuda:0",
                       Error);
  CHECK_THROWS_WITH_AS(pool.empty_cache(), "[empty_cache] not possible on cuda:0 during a CUDA graph capture", Error);
  // temporaries of the capture come from the capture stream and are reused within it (stream order)
  void* t1 = pool.allocate(8 * KiB, kCapture);
  pool.free(t1);
  void* t2 = pool.allocate(8 * KiB, kCapture);
  CHECK(t2 == t1);
  void* out = pool.allocate(8 * KiB, kCapture);      // an output the graph keeps writing
  // a block live during the capture and freed meanwhile is kept, not handed to the next request
  pool.free(param);
  CHECK(pool.num_kept() == 1);
  void* other = pool.allocate(4 * KiB, kStreamA);   // on another stream during the capture: kept once freed too
  CHECK(other != param);
  CHECK(other == spare);                             // the pre-capture free block is still fair game
  pool.end_capture();
  pool.free(t2);
  pool.free(out);
  // out of the capture's way: other streams never get the capture stream's blocks, empty_cache keeps them
  void* b = pool.allocate(8 * KiB, kStreamB);
  CHECK(b != t1);
  CHECK(b != out);
  pool.free(b);
  pool.free(other);
  const std::size_t before = pool.num_segments();
  pool.empty_cache();
  CHECK(pool.num_segments() == 2);                   // stream A's (holding the kept blocks) and the capture's
  CHECK(before > pool.num_segments());               // stream B's went back
  CHECK(pool.num_kept() == 2);
  // the graph is gone: its blocks are free and its segments go back
  pool.release_graph(7);
  CHECK(pool.num_kept() == 0);
  pool.empty_cache();
  CHECK(pool.num_segments() == 0);
  CHECK(be.used() == 0);
}

TEST_CASE("cuda allocator: out of memory during a capture neither waits nor releases the cache") {
  FakeBackend be(8 * MiB);
  BlockPool pool(be, "cuda:0");
  void* const kCapture = reinterpret_cast<void*>(std::uintptr_t{0x2000});
  void* a = pool.allocate(6 * MiB, kStreamA);
  pool.free(a);  // cached: releasing it would need a device synchronization, which a capture prohibits
  pool.begin_capture(1, kCapture);
  const int syncs = be.sync_calls;
  CHECK_THROWS_WITH_AS(pool.allocate(4 * MiB, kCapture),
                       doctest::Contains("cached 6291456 bytes (during a CUDA graph capture, which cannot release the cache)"),
                       Error);
  CHECK(be.sync_calls == syncs);
  CHECK(be.free_calls == 0);
  pool.end_capture();
  pool.release_graph(1);
  void* b = pool.allocate(4 * MiB, kCapture);  // outside the capture the usual retry frees the cache
  REQUIRE(b != nullptr);
  CHECK(be.free_calls == 1);
  pool.free(b);
  pool.empty_cache();
}

TEST_CASE("cuda allocator: without caching every request is an exact segment, returned when freed") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0", /*caching=*/false);
  CHECK_FALSE(pool.caching());
  void* a = pool.allocate(1000, kStreamA);  // exact bytes: a memory checker sees the tensor's own end
  void* b = pool.allocate(1000, kStreamA);
  CHECK(be.used() == 2000);
  CHECK(a != b);
  CHECK(pool.num_segments() == 2);
  phasor::MemoryStats s = pool.stats();
  CHECK(s.current_bytes == 2000);
  CHECK(s.cached_bytes == 0);
  CHECK(s.num_system_allocs == 2);
  be.busy = true;  // kernels still queued: the segment goes back only after the device's work
  const int syncs = be.sync_calls;
  pool.free(a);
  CHECK(be.sync_calls == syncs + 1);
  CHECK(be.free_calls == 1);
  CHECK(be.used() == 1000);
  CHECK(pool.stats().cached_bytes == 0);
  void* c = pool.allocate(1000, kStreamA);  // never a cached block
  CHECK(be.alloc_calls == 3);
  // a block another stream uses waits for that stream's work, then goes back at the next call
  pool.record_use(c, kStreamB);
  pool.free(c);
  CHECK(pool.num_pending() == 1);
  CHECK(be.used() == 1000 + 1000);
  for (auto& kv : be.events) kv.second = true;
  void* d = pool.allocate(24, kStreamA);
  CHECK(pool.num_pending() == 0);
  CHECK(be.used() == 1000 + 24);
  pool.free(b);
  pool.free(d);
  CHECK(be.used() == 0);
  CHECK(pool.stats().current_bytes == 0);
}

TEST_CASE("cuda allocator: without caching a capture reuses its pool's blocks of the exact size and releases nothing") {
  FakeBackend be(64 * MiB);
  BlockPool pool(be, "cuda:0", /*caching=*/false);
  void* const kCapture = reinterpret_cast<void*>(std::uintptr_t{0x2000});
  void* param = pool.allocate(4 * KiB, kStreamA);
  pool.begin_capture(3, kCapture);
  const int syncs = be.sync_calls;
  void* t1 = pool.allocate(8 * KiB, kCapture);
  pool.free(t1);  // no synchronization during a capture: kept in the graph's pool
  CHECK(pool.allocate(8 * KiB, kCapture) == t1);
  void* t3 = pool.allocate(8 * KiB - 4, kCapture);  // another size: its own segment
  CHECK(t3 != t1);
  pool.free(t3);
  pool.free(param);  // live when the capture began: kept for the graph
  CHECK(pool.num_kept() == 1);
  CHECK(be.sync_calls == syncs);
  CHECK(be.free_calls == 0);
  pool.end_capture();
  pool.free(t1);
  CHECK(be.free_calls == 0);  // the graph's pool and what it saw live stay while the graph lives
  pool.release_graph(3);      // (after a device synchronization, by contract): everything goes back
  CHECK(pool.num_kept() == 0);
  CHECK(pool.num_segments() == 0);
  CHECK(be.used() == 0);
}
