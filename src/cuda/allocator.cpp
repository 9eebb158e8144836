// src/cuda/allocator.cpp - BlockPool (Note [caching device allocator]) and the per-device pools.
#include "cuda/allocator.hpp"

#include <algorithm>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "cuda/runtime.hpp"
#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace cuda {
namespace detail {

BlockPool::BlockPool(RawBackend& backend, std::string device_name, bool caching)
    : backend_(backend), name_(std::move(device_name)), caching_(caching) {}

BlockPool::~BlockPool() {
  // Live blocks may still be referenced (a pool is destroyed only in tests or at exit): free what is
  // free, leave the rest to the process.
  try {
    empty_cache();
    for (auto& pe : pending_)  // blocks still waiting for other streams stay with the process
      for (void* ev : pe.events) backend_.destroy_event(ev);
  } catch (...) {
  }
  for (Block* b : spare_blocks_) delete b;
}

BlockPool::Block* BlockPool::make_block() {
  if (spare_blocks_.empty()) return new Block();
  Block* b = spare_blocks_.back();
  spare_blocks_.pop_back();
  return b;
}

void BlockPool::recycle(Block* b) {
  b->ptr = nullptr;
  b->size = 0;
  b->stream = nullptr;
  b->small = false;
  b->allocated = false;
  b->uses.clear();
  b->graphs.clear();
  b->prev = b->next = nullptr;
  try {
    spare_blocks_.push_back(b);
  } catch (...) {  // no memory for the spare list: the block goes, the bookkeeping stays whole
    delete b;
  }
}

void BlockPool::free_add(Block* b) {
  if (spare_free_nodes_.empty()) {
    free_.insert(b);
    return;
  }
  FreeSet::node_type nh = std::move(spare_free_nodes_.back());
  spare_free_nodes_.pop_back();
  nh.value() = b;
  free_.insert(std::move(nh));
}

namespace {
/// Takes the node at `it` out of `c` and keeps it in `spare` for reuse (or frees it when `spare` cannot grow).
template <class C>
void keep_node(C& c, typename C::iterator it, std::vector<typename C::node_type>& spare) {
  typename C::node_type nh = c.extract(it);
  try {
    spare.push_back(std::move(nh));
  } catch (...) {  // the node is freed with nh
  }
}
}  // namespace

void BlockPool::free_remove(FreeSet::iterator it) { keep_node(free_, it, spare_free_nodes_); }

void BlockPool::live_add(Block* b) {
  if (spare_live_nodes_.empty()) {
    live_.emplace(b->ptr, b);
    return;
  }
  LiveMap::node_type nh = std::move(spare_live_nodes_.back());
  spare_live_nodes_.pop_back();
  nh.key() = b->ptr;
  nh.mapped() = b;
  live_.insert(std::move(nh));
}

BlockPool::Block* BlockPool::live_remove(LiveMap::iterator it) {
  Block* b = it->second;
  keep_node(live_, it, spare_live_nodes_);
  return b;
}

BlockPool::Block* BlockPool::take_free(std::size_t size, bool small, void* stream) {
  Block key;
  key.small = small;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = free_.lower_bound(&key);
  if (it == free_.end() || (*it)->small != small || (*it)->stream != stream) return nullptr;
  if (!caching_ && (*it)->size != size) return nullptr;  // only a graph's pool keeps free blocks: exact reuse
  Block* b = *it;
  free_remove(it);
  return b;
}

BlockPool::Block* BlockPool::new_segment(std::size_t size, bool small, void* stream) {
  const std::size_t seg = !caching_ ? size : small ? kSmallSegment : (size + kLargeRound - 1) / kLargeRound * kLargeRound;
  void* p = backend_.raw_alloc(seg);
  if (!p && !capture_graph_) {  // out of memory: wait for all streams (pending blocks become free), give the cache back, retry
    backend_.synchronize();
    process_pending();
    release_free_segments(/*synced=*/true);
    p = backend_.raw_alloc(seg);
  }
  if (!p) return nullptr;
  Block* b = make_block();
  b->ptr = static_cast<char*>(p);
  b->size = seg;
  b->stream = stream;
  b->small = small;
  reserved_ += static_cast<std::int64_t>(seg);
  ++stats_.num_system_allocs;
  return b;
}

void* BlockPool::allocate(std::size_t nbytes, void* stream) {
  if (nbytes == 0) return nullptr;
  const bool absurd = nbytes > kMaxRequest;  // no device has that much; rounding it could overflow
  // without caching: exact bytes, a segment of its own (large), nothing split off
  const std::size_t size = absurd ? 0 : caching_ ? round_size(nbytes) : nbytes;
  const bool small = caching_ && size <= kSmallSize;
  std::lock_guard<std::mutex> lk(mu_);
  if (!pending_.empty()) process_pending();
  release_uncached(/*synced=*/false);  // blocks freed during a capture
  Block* b = absurd ? nullptr : take_free(size, small, stream);
  if (!b && !absurd) b = new_segment(size, small, stream);
  if (!b) {
    std::size_t free_bytes = 0, total_bytes = 0;
    backend_.mem_info(free_bytes, total_bytes);
    throw Error("allocate", "out of memory on " + name_ + ": requested " + std::to_string(nbytes) + " bytes, free " +
                                std::to_string(free_bytes) + " bytes of " + std::to_string(total_bytes) +
                                " (cudaMemGetInfo), cached " + std::to_string(reserved_ - stats_.current_bytes) +
                                " bytes" + (capture_graph_ ? " (during a CUDA graph capture, which cannot release the cache)" : ""));
  }
  const std::size_t rest = b->size - size;
  if (rest >= (small ? kRound : kMinLargeSplit)) {  // split: the tail stays free
    Block* r = make_block();
    r->ptr = b->ptr + size;
    r->size = rest;
    r->stream = stream;
    r->small = small;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    free_add(r);
  }
  b->allocated = true;
  if (capture_graph_ && stream != capture_stream_) b->graphs.push_back(capture_graph_);
  live_add(b);
  ++stats_.num_allocs;
  stats_.current_bytes += static_cast<std::int64_t>(b->size);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  return b->ptr;
}

void BlockPool::free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) throw Error("free", "pointer was not allocated by the " + name_ + " caching allocator");
  Block* b = live_remove(it);
  stats_.current_bytes -= static_cast<std::int64_t>(b->size);
  if (!b->graphs.empty()) {  // a live graph may still touch it: kept (and not merged) until release_graph
    b->uses.clear();         // release_graph follows a device synchronization: no stream's work is left
    kept_.push_back(b);
    return;
  }
  if (!b->uses.empty()) {  // other streams may still use it: reusable once their work so far is done
    Pending pe{b, {}};
    try {
      for (void* s : b->uses)
        if (void* ev = backend_.record_event(s)) pe.events.push_back(ev);
    } catch (...) {
      for (void* ev : pe.events) backend_.destroy_event(ev);
      pe.events.clear();
      b->uses.clear();
      insert_free(b);  // no event: the block is at least never lost
      throw;
    }
    b->uses.clear();
    if (!pe.events.empty()) {
      pending_.push_back(std::move(pe));
      return;
    }
  }
  insert_free(b);
  release_uncached(/*synced=*/false);
}

void BlockPool::insert_free(Block* b) {
  b->allocated = false;
  // merge with free neighbours (same segment, hence same stream and pool)
  if (Block* n = b->next; n && !n->allocated) {
    free_remove(free_.find(n));
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    recycle(n);
  }
  if (Block* q = b->prev; q && !q->allocated) {
    free_remove(free_.find(q));
    q->size += b->size;
    q->next = b->next;
    if (b->next) b->next->prev = q;
    recycle(b);
    b = q;
  }
  free_add(b);
}

void BlockPool::process_pending() {
  for (std::size_t i = 0; i < pending_.size();) {
    Pending& pe = pending_[i];
    bool done = true;
    for (void* ev : pe.events) done = done && backend_.event_done(ev);
    if (!done) {
      ++i;
      continue;
    }
    for (void* ev : pe.events) backend_.destroy_event(ev);
    insert_free(pe.block);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void BlockPool::record_use(void* p, void* stream) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end())
    throw Error("record_stream", "pointer was not allocated by the " + name_ + " caching allocator");
  Block* b = it->second;
  if (stream != b->stream && std::find(b->uses.begin(), b->uses.end(), stream) == b->uses.end()) b->uses.push_back(stream);
}

std::size_t BlockPool::num_pending() {
  std::lock_guard<std::mutex> lk(mu_);
  return pending_.size();
}

void* BlockPool::stream_of(void* p) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) throw Error("free", "pointer was not allocated by the " + name_ + " caching allocator");
  return it->second->stream;
}

void BlockPool::release_free_segments(bool synced) {
  std::vector<Block*> whole;
  for (Block* b : free_)
    if (!b->prev && !b->next &&
        std::none_of(graph_pools_.begin(), graph_pools_.end(), [b](const auto& g) { return g.second == b->stream; }))
      whole.push_back(b);
  if (whole.empty()) return;
  if (!synced) backend_.synchronize();  // queued kernels may still use "free" blocks (Note [caching device allocator])
  for (Block* b : whole) {
    backend_.raw_free(b->ptr);  // first: a throw leaves the block cached and counted
    free_.erase(b);
    reserved_ -= static_cast<std::int64_t>(b->size);
    delete b;
  }
}

void BlockPool::release_uncached(bool synced) {
  if (caching_ || capture_graph_ || free_.empty()) return;  // nothing may synchronize during a capture
  release_free_segments(synced);
}

MemoryStats BlockPool::stats() {
  std::lock_guard<std::mutex> lk(mu_);
  MemoryStats s = stats_;
  s.cached_bytes = reserved_ - stats_.current_bytes;
  return s;
}

void BlockPool::reset_peak() {
  std::lock_guard<std::mutex> lk(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

void BlockPool::empty_cache() {
  std::lock_guard<std::mutex> lk(mu_);
  if (capture_graph_) throw Error("empty_cache", "not possible on " + name_ + " during a CUDA graph capture");
  backend_.synchronize();  // every stream's work done: pending blocks free, segments safe to return
  process_pending();
  release_free_segments(/*synced=*/true);
}

std::size_t BlockPool::num_segments() {
  std::lock_guard<std::mutex> lk(mu_);
  std::size_t n = 0;
  for (Block* b : free_)
    if (!b->prev) ++n;
  for (const auto& kv : live_)
    if (!kv.second->prev) ++n;
  for (const auto& pe : pending_)
    if (!pe.block->prev) ++n;
  for (const Block* b : kept_)
    if (!b->prev) ++n;
  return n;
}

void BlockPool::begin_capture(std::uint64_t graph, void* stream) {
  std::lock_guard<std::mutex> lk(mu_);
  if (capture_graph_) throw Error("cuda.Graph", "a CUDA graph capture is already in progress on " + name_);
  if (graph == 0) throw Error("cuda.Graph", "graph id 0 is reserved");
  for (auto& kv : live_)
    if (kv.second->stream != stream) kv.second->graphs.push_back(graph);
  capture_graph_ = graph;
  capture_stream_ = stream;
  graph_pools_[graph] = stream;
}

void BlockPool::end_capture() {
  std::lock_guard<std::mutex> lk(mu_);
  capture_graph_ = 0;
  capture_stream_ = nullptr;
}

void BlockPool::release_graph(std::uint64_t graph) {
  std::lock_guard<std::mutex> lk(mu_);
  auto forget = [graph](Block* b) {
    b->graphs.erase(std::remove(b->graphs.begin(), b->graphs.end(), graph), b->graphs.end());
    return b->graphs.empty();
  };
  for (auto& kv : live_) forget(kv.second);
  std::vector<Block*> still;
  for (Block* b : kept_) {
    if (forget(b)) insert_free(b);
    else still.push_back(b);
  }
  kept_.swap(still);
  graph_pools_.erase(graph);
  release_uncached(/*synced=*/true);  // the caller synchronized
}

std::size_t BlockPool::num_kept() {
  std::lock_guard<std::mutex> lk(mu_);
  return kept_.size();
}

// ---- the per-device pools ------------------------------------------------------------------------
/// t's storage, after checking that t is a defined CUDA tensor with allocator-owned storage on
/// stream's device.
const ::phasor::Storage* checked_cuda_storage(const Tensor& t, const Stream& stream) {
  if (!t.defined()) throw Error("record_stream", "undefined tensor");
  if (!t.device().is_cuda()) throw Error("record_stream", "expected a CUDA tensor, got one on " + t.device().str());
  check_device(t.device(), "record_stream");
  if (stream.device() != t.device().index)
    throw Error("record_stream", "the tensor is on " + t.device().str() + " but the stream on " +
                                     Device::cuda(stream.device()).str());
  const ::phasor::Storage* st = t.impl()->storage.get();
  if (st->deleter) throw Error("record_stream", "the tensor's memory is not owned by phasor's allocator (from_blob)");
  return st;
}

}  // namespace detail

bool memory_caching_enabled() {
  static const bool caching = [] {
    const char* v = std::getenv("PHASOR_NO_CUDA_MEMORY_CACHING");
    return !(v && *v && std::strcmp(v, "0") != 0);
  }();
  return caching;
}

namespace detail {

#if PHASOR_WITH_CUDA

namespace {
/// cudaMalloc/cudaFree on one device.
class CudaBackend final : public RawBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {}
  void* raw_alloc(std::size_t bytes) override {
    DeviceGuard g(device_);
    void* p = nullptr;
    // a capture in progress (Note [CUDA graphs]) prohibits cudaMalloc, which it does not record; the
    // segment outlives the graph's replays (the private pool), so this thread may allocate it: relaxed
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    PHASOR_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    const cudaError_t e = cudaMalloc(&p, bytes);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear it: out of memory is not sticky
      return nullptr;
    }
    check(e, "cudaMalloc");
    return p;
  }
  void raw_free(void* p) override {
    DeviceGuard g(device_);
    PHASOR_CUDA_CHECK(cudaFree(p));
  }
  void synchronize() override {
    DeviceGuard g(device_);
    PHASOR_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void mem_info(std::size_t& free_bytes, std::size_t& total_bytes) override {
    DeviceGuard g(device_);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      free_bytes = total_bytes = 0;
    }
  }
  void* record_event(void* stream) override {
    DeviceGuard g(device_);
    cudaEvent_t ev = nullptr;
    PHASOR_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const cudaError_t e = cudaEventRecord(ev, static_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) {
      (void)cudaEventDestroy(ev);
      check(e, "cudaEventRecord");
    }
    return ev;
  }
  bool event_done(void* event) override {
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (e == cudaErrorNotReady) return false;
    check(e, "cudaEventQuery");
    return true;
  }
  void destroy_event(void* event) override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

 private:
  int device_;
};

struct DevicePool {
  CudaBackend backend;
  BlockPool pool;
  explicit DevicePool(int d) : backend(d), pool(backend, Device::cuda(d).str(), memory_caching_enabled()) {}
};

/// The pool of `device` (checked by the caller), created on first use and never destroyed: storages
/// may die during exit.
BlockPool& pool_of(int device) {
  static std::vector<std::unique_ptr<DevicePool>>* pools = [] {
    auto* v = new std::vector<std::unique_ptr<DevicePool>>();
    for (int d = 0; d < cuda::device_count(); ++d) v->push_back(std::make_unique<DevicePool>(d));
    return v;
  }();
  return (*pools)[static_cast<std::size_t>(device)]->pool;
}
}  // namespace

void* device_alloc(std::size_t nbytes, int device, void** stream) {
  cudaStream_t s = current_stream_handle(device);
  *stream = s;
  return pool_of(device).allocate(nbytes, s);
}

void device_free(void* p, int device) noexcept {
  try {
    pool_of(device).free(p);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "phasor: freeing a CUDA block failed: %s\n", e.what());
  }
}

void allocator_begin_capture(int device, std::uint64_t graph, void* stream) {
  pool_of(device).begin_capture(graph, stream);
}
void allocator_end_capture(int device) { pool_of(device).end_capture(); }
void allocator_release_graph(int device, std::uint64_t graph) { pool_of(device).release_graph(graph); }

MemoryStats device_memory_stats(int device) { return pool_of(device).stats(); }
void device_reset_peak(int device) { pool_of(device).reset_peak(); }
void device_empty_cache(int device) { pool_of(device).empty_cache(); }

}  // namespace detail

void record_stream(const Tensor& t, const Stream& stream) {
  const ::phasor::Storage* st = detail::checked_cuda_storage(t, stream);
  if (!st->data) return;  // no elements, no block
  detail::pool_of(stream.device()).record_use(st->data, stream.native_handle());
}

namespace detail {

#else  // CPU-only build: check_device throws before any of these is reached

void* device_alloc(std::size_t, int device, void**) { no_cuda_backend("empty", Device::cuda(device)); }
void device_free(void*, int) noexcept {}
MemoryStats device_memory_stats(int device) { no_cuda_backend("memory_stats", Device::cuda(device)); }
void device_reset_peak(int device) { no_cuda_backend("reset_peak_memory_stats", Device::cuda(device)); }
void device_empty_cache(int device) { no_cuda_backend("empty_cache", Device::cuda(device)); }

}  // namespace detail

void record_stream(const Tensor& t, const Stream& stream) {
  detail::checked_cuda_storage(t, stream);  // throws: no CUDA tensor exists in this build
  throw Error("record_stream", "no CUDA backend in this build");
}

namespace detail {

#endif

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
