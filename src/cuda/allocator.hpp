// src/cuda/allocator.hpp - the caching device allocator (Note [caching device allocator]).
//
// Note [caching device allocator]
// cudaMalloc and cudaFree are slow (cudaFree synchronizes the device), so device memory is cached,
// as on the CPU. BlockPool does the bookkeeping and knows nothing of CUDA: it gets whole segments
// from a RawBackend (cudaMalloc/cudaFree on a device; malloc with a byte budget in the tests) and
// carves blocks from them:
//  - sizes round up to 512 B; requests up to 1 MiB ("small") are carved from 2 MiB segments, larger
//    ones from their own segments (rounded up to 2 MiB);
//  - a request takes the best-fitting free block (smallest, then lowest address) of its pool and
//    stream; the rest of the block stays free when it is at least 512 B (small) / 1 MiB (large);
//  - a freed block merges with its free neighbours in the segment;
//  - every segment belongs to the stream it was allocated for, and its blocks are reused only for
//    that stream: work queued on a stream runs in order, so a block freed while a kernel of its
//    stream still reads it can be handed to the next kernel of that stream at once. (Using a block
//    on another stream needs record_use below; Tensor::to records an event where it crosses devices.)
//  - record_use(p, s) marks a live block as also used by work queued on another stream s (the public
//    cuda::record_stream). Freeing such a block records an event on each of those streams, and the
//    block joins the free lists only when every event has completed (checked on each allocate and
//    empty_cache); until then it is neither current nor reusable, only cached.
//  - when the backend fails, the device is synchronized (so every pending block's events are done),
//    the fully free segments are released (empty_cache) and the backend is asked once more; a second
//    failure throws "[allocate] out of memory on ...".
//  - segments go back to the backend only after a device synchronization: a "free" block may still be
//    read or written by queued kernels of its stream, and cudaFree is not promised to wait for them.
// CUDA graphs (Note [CUDA graphs] in src/cuda/graph.cpp) add two rules while a graph lives:
//  - its capture stream's segments are its private pool: blocks allocated during the capture come from
//    them and return to them (reusable within the capture, stream-ordered), nothing else allocates on
//    that stream, and empty_cache keeps them;
//  - a block that was live during the capture on another stream (parameters, inputs, caches: anything
//    captured work may read or write) is not reused while the graph lives: freed, it is kept aside
//    (cached, not free) until release_graph.
//  During a capture nothing synchronizes: out of memory fails without releasing the cache, and
//  empty_cache refuses.
// Without caching (PHASOR_NO_CUDA_MEMORY_CACHING=1, as PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING), for
// memory checkers: every request is a segment of exactly its bytes (no rounding, no splitting), and a
// freed block goes back to the backend at once, after a device synchronization. compute-sanitizer and
// the emulator's AddressSanitizer build (Note [CUDA emulation]) then see each tensor as an allocation
// of its own, so a kernel reading one element past a tensor's end is reported, where a cached 2 MiB
// segment would hide it. During a capture freed blocks stay cached (nothing may synchronize), to be
// released by the next free or allocation after it; a graph's private pool reuses blocks of the exact
// size. Slow: each free waits for the device. Statistics stay exact.
// One mutex per pool (one pool per device); the backend is called with it held, which serializes
// cudaMalloc calls of one device (they serialize inside the driver anyway). The bookkeeping keeps its
// Block objects and its set and map nodes for reuse, so a steady loop of allocate/free calls makes no
// heap allocation (those were about half the allocator's host cost per op).
//
// This header is C++17 and free of CUDA so that tests/test_cuda_allocator.cpp can drive BlockPool with
// a fake backend on any machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "phasor/device.hpp"

namespace phasor {
namespace cuda {
namespace detail {

/// Where BlockPool gets and returns whole segments.
class RawBackend {
 public:
  virtual ~RawBackend() = default;
  /// A segment of `bytes`, or nullptr when out of memory (other failures throw phasor::Error).
  virtual void* raw_alloc(std::size_t bytes) = 0;
  /// Returns a segment from raw_alloc.
  virtual void raw_free(void* p) = 0;
  /// Free and total memory of the device, for the out-of-memory message.
  virtual void mem_info(std::size_t& free_bytes, std::size_t& total_bytes) = 0;
  /// An event marking the work queued on `stream` so far (nullptr: nothing to wait for).
  virtual void* record_event(void* stream) { (void)stream; return nullptr; }
  /// True when the work before `event` (from record_event) has completed.
  virtual bool event_done(void* event) { (void)event; return true; }
  /// Destroys an event from record_event.
  virtual void destroy_event(void* event) { (void)event; }
  /// Waits for all work queued on the device, on every stream (then every recorded event is done).
  virtual void synchronize() {}
};

/// Block and segment bookkeeping of one device's caching allocator (Note [caching device allocator]).
class BlockPool {
 public:
  static constexpr std::size_t kRound = 512;                 ///< sizes round up to this
  static constexpr std::size_t kSmallSize = 1 << 20;         ///< requests up to this are small
  static constexpr std::size_t kSmallSegment = 2 << 20;      ///< small blocks come from segments of this size
  static constexpr std::size_t kLargeRound = 2 << 20;        ///< large segments round up to this
  static constexpr std::size_t kMinLargeSplit = 1 << 20;     ///< smallest free remainder kept from a large block
  static constexpr std::size_t kMaxRequest = std::size_t{1} << 60;  ///< larger requests fail at once (out of memory)

  /// A pool drawing from `backend`; `device_name` ("cuda:0") appears in error messages; `caching` false:
  /// one exact segment per request, released when freed (Note [caching device allocator]).
  BlockPool(RawBackend& backend, std::string device_name, bool caching = true);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool();

  /// A block of at least `nbytes` for use on `stream` (nullptr for 0 bytes); throws when out of memory.
  void* allocate(std::size_t nbytes, void* stream);
  /// Returns a block from allocate (nullptr is ignored); throws for a pointer this pool did not hand out.
  void free(void* p);
  /// The stream a live block was allocated for.
  void* stream_of(void* p);
  /// Marks the live block at p as also used by work on `stream` (its own stream is ignored): once freed,
  /// it is reused only after the work queued on `stream` up to the free has completed.
  void record_use(void* p, void* stream);
  /// Blocks freed but waiting for their other streams' work (tests).
  std::size_t num_pending();
  /// Current, peak and cached bytes, requests and backend allocations.
  MemoryStats stats();
  /// Sets the peak to the current bytes.
  void reset_peak();
  /// Releases every fully free segment to the backend.
  void empty_cache();
  /// Number of segments held (tests).
  std::size_t num_segments();
  /// Starts capturing CUDA graph `graph` (a nonzero id) on `stream`: allocations on `stream` become its
  /// private pool, and the blocks live now (or allocated on other streams before end_capture) are kept
  /// from reuse until release_graph(graph). Throws when a capture is already in progress.
  void begin_capture(std::uint64_t graph, void* stream);
  /// Ends the capture (its graph keeps its pool and its blocks until release_graph).
  void end_capture();
  /// Forgets `graph` once no work of it can run (the caller synchronized the device): the blocks it kept
  /// become free, and its stream's free segments may be released.
  void release_graph(std::uint64_t graph);
  /// Blocks freed but kept for live graphs (tests).
  std::size_t num_kept();
  /// False for a pool made with caching off.
  bool caching() const { return caching_; }
  /// Rounded size of a request (tests and statistics).
  static std::size_t round_size(std::size_t nbytes) { return nbytes == 0 ? 0 : (nbytes + kRound - 1) / kRound * kRound; }

 private:
  struct Block {
    char* ptr = nullptr;
    std::size_t size = 0;
    void* stream = nullptr;
    bool small = false;
    bool allocated = false;
    std::vector<void*> uses;  // other streams that use the block (record_use), while allocated
    std::vector<std::uint64_t> graphs;  // live graphs whose capture saw it live: not reused while they live
    Block* prev = nullptr;  // neighbours in the same segment
    Block* next = nullptr;
  };
  struct Order {  // free blocks by (small, stream, size, address): best fit is lower_bound
    bool operator()(const Block* a, const Block* b) const {
      return std::make_tuple(a->small, reinterpret_cast<std::uintptr_t>(a->stream), a->size,
                             reinterpret_cast<std::uintptr_t>(a->ptr)) <
             std::make_tuple(b->small, reinterpret_cast<std::uintptr_t>(b->stream), b->size,
                             reinterpret_cast<std::uintptr_t>(b->ptr));
    }
  };
  struct Pending {  // a freed block and the events of its other streams
    Block* block;
    std::vector<void*> events;
  };
  using FreeSet = std::set<Block*, Order>;
  using LiveMap = std::unordered_map<void*, Block*>;
  Block* take_free(std::size_t size, bool small, void* stream);
  void insert_free(Block* b);
  // Bookkeeping without heap traffic in a steady loop: Block objects and the free set's and live
  // map's nodes are recycled (Note [caching device allocator]).
  Block* make_block();
  void recycle(Block* b);
  void free_add(Block* b);
  void free_remove(FreeSet::iterator it);
  void live_add(Block* b);
  Block* live_remove(LiveMap::iterator it);
  void process_pending();
  Block* new_segment(std::size_t size, bool small, void* stream);
  /// Returns the fully free segments to the backend, synchronizing the device first unless `synced`.
  void release_free_segments(bool synced);
  /// Without caching and outside a capture: release_free_segments (freed blocks go back at once).
  void release_uncached(bool synced);

  RawBackend& backend_;
  std::string name_;
  const bool caching_;
  std::mutex mu_;
  FreeSet free_;
  LiveMap live_;
  std::vector<Block*> spare_blocks_;
  std::vector<FreeSet::node_type> spare_free_nodes_;
  std::vector<LiveMap::node_type> spare_live_nodes_;
  std::vector<Pending> pending_;
  std::vector<Block*> kept_;                        // freed blocks kept for live graphs (still `allocated`)
  std::unordered_map<std::uint64_t, void*> graph_pools_;  // live graph -> its capture stream (its pool)
  std::uint64_t capture_graph_ = 0;                 // the graph being captured (0: none)
  void* capture_stream_ = nullptr;
  std::int64_t reserved_ = 0;  // bytes in segments
  MemoryStats stats_;          // cached_bytes derived: reserved_ - current
};

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
