// src/cuda/copy.cpp - byte copies between the host and CUDA devices (Tensor::to), with a small caching
// allocator of pinned host staging buffers.
//
// Note [pinned staging]
// A cudaMemcpyAsync from pageable host memory is not asynchronous: the driver copies through its own
// small pinned buffers, chunk by chunk, and the call returns only when the source has been read. From
// pinned memory the DMA engine reads the source directly, at full bus speed. Copies of at least
// kStagingMin bytes therefore go through pinned staging buffers of our own: host->device copies the
// data into a buffer and queues the DMA on the current stream, recording an event after it; the
// buffer goes back to the cache and is handed out again only when its event has completed (so the
// call returns before the transfer ends). Device->host queues the DMA into a buffer, waits for the
// stream, and copies out. Copies go in chunks of kStagingChunk through two buffers, so the host's
// memcpy of one chunk overlaps the DMA of the other and a copy of any size pins only 16 MiB. Buffers
// are powers of two (at least kStagingMin) and kept for reuse, as cudaHostAlloc costs milliseconds
// (it pins every page). A device's buffers total at most kMaxPinnedPerDevice: past it a request waits
// for the oldest cached buffer's transfer instead of pinning more (copies queued faster than the
// stream runs would otherwise pin a buffer each); only when every buffer is held by a running copy
// does it pin one more.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "cuda/runtime.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace cuda {
namespace detail {

#if PHASOR_WITH_CUDA

namespace {

constexpr std::size_t kStagingMin = std::size_t{1} << 20;
/// Larger copies are staged in chunks of this size through two buffers.
constexpr std::size_t kStagingChunk = std::size_t{8} << 20;
/// Pinned staging memory a device keeps before requests wait for a cached buffer (Note [pinned staging]).
constexpr std::size_t kMaxPinnedPerDevice = std::size_t{64} << 20;

/// Pinned host buffers with an event each (Note [pinned staging]).
class PinnedPool {
 public:
  struct Buffer {
    void* ptr = nullptr;
    std::size_t size = 0;
    cudaEvent_t done = nullptr;  // recorded after the last transfer that reads or writes ptr
    int device = -1;             // the device `done` belongs to (an event is recorded only on its device's streams)
  };
  /// A buffer of at least `bytes` whose last transfer has completed, with an event of `device` (the
  /// current device).
  Buffer acquire(std::size_t bytes, int device) {
    std::size_t size = kStagingMin;
    while (size < bytes) size *= 2;
    Buffer busy;  // at the cap: the oldest cached buffer that fits, whose transfer is still running
    {
      std::lock_guard<std::mutex> lk(mu_);
      std::size_t best = free_.size(), oldest = free_.size();
      for (std::size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].device != device || free_[i].size < bytes) continue;
        if (oldest == free_.size()) oldest = i;  // released first (release appends)
        if (best < free_.size() && free_[best].size <= free_[i].size) continue;
        const cudaError_t q = cudaEventQuery(free_[i].done);
        if (q == cudaSuccess) best = i;
        else if (q != cudaErrorNotReady) check(q, "cudaEventQuery");
      }
      if (best < free_.size()) return take(best);
      std::size_t& pinned = pinned_[device];
      if (pinned + size > kMaxPinnedPerDevice && oldest < free_.size()) busy = take(oldest);
      else pinned += size;  // reserved for the buffer made below
    }
    if (busy.ptr) {  // waited for outside the lock
      PHASOR_CUDA_CHECK(cudaEventSynchronize(busy.done));
      return busy;
    }
    Buffer b;
    b.device = device;
    b.size = size;
    cudaError_t e = cudaHostAlloc(&b.ptr, b.size, cudaHostAllocPortable);
    if (e == cudaSuccess) {
      e = cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming);
      if (e != cudaSuccess) (void)cudaFreeHost(b.ptr);
    }
    if (e != cudaSuccess) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        pinned_[device] -= size;
      }
      check(e, "cudaHostAlloc / cudaEventCreateWithFlags");
    }
    return b;
  }
  /// Returns a buffer; a transfer queued on `stream` may still use it (its event is recorded there).
  void release(Buffer b, cudaStream_t stream, bool record) {
    if (record) PHASOR_CUDA_CHECK(cudaEventRecord(b.done, stream));
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(b);
  }

 private:
  /// Removes and returns free_[i] (mu_ held).
  Buffer take(std::size_t i) {
    Buffer b = free_[i];
    free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
    return b;
  }
  std::mutex mu_;
  std::vector<Buffer> free_;
  std::map<int, std::size_t> pinned_;  // bytes pinned per device, cached or in use
};

PinnedPool& pinned_pool() {
  static auto* p = new PinnedPool();  // never destroyed: transfers may be in flight at exit
  return *p;
}

/// Two pinned chunk buffers of a staged copy (Note [pinned staging]); returned to the pool on exit.
struct StagingRing {
  PinnedPool::Buffer buf[2];
  cudaStream_t stream;
  int device;
  StagingRing(cudaStream_t s, int d) : stream(s), device(d) {}
  /// The buffer for chunk i, acquired on first use.
  PinnedPool::Buffer& operator[](std::size_t i) {
    PinnedPool::Buffer& b = buf[i % 2];
    if (!b.ptr) b = pinned_pool().acquire(kStagingChunk, device);
    return b;
  }
  ~StagingRing() {
    for (auto& b : buf)
      if (b.ptr) pinned_pool().release(b, stream, false);  // each event was recorded after its last transfer
  }
};

void host_to_device(void* dst, int device, const void* src, std::size_t bytes) {
  DeviceGuard g(device);
  cudaStream_t s = current_stream_handle(device);
  if (bytes < kStagingMin) {
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  // chunk i: wait until buffer i % 2's previous DMA is done, fill it, queue its DMA and event; the host
  // fills one buffer while the other one's DMA runs
  StagingRing ring(s, device);
  std::size_t i = 0;
  for (std::size_t off = 0; off < bytes; off += kStagingChunk, ++i) {
    const std::size_t len = std::min(kStagingChunk, bytes - off);
    PinnedPool::Buffer& b = ring[i];
    if (i >= 2) PHASOR_CUDA_CHECK(cudaEventSynchronize(b.done));
    std::memcpy(b.ptr, static_cast<const char*>(src) + off, len);
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, b.ptr, len, cudaMemcpyHostToDevice, s));
    PHASOR_CUDA_CHECK(cudaEventRecord(b.done, s));
  }
}

void device_to_host(void* dst, const void* src, int device, std::size_t bytes) {
  DeviceGuard g(device);
  cudaStream_t s = current_stream_handle(device);
  if (bytes < kStagingMin) {
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
    PHASOR_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  // the DMA of chunk i + 1 runs while the host copies chunk i out
  StagingRing ring(s, device);
  const std::size_t n = (bytes + kStagingChunk - 1) / kStagingChunk;
  auto queue = [&](std::size_t i) {
    const std::size_t off = i * kStagingChunk, len = std::min(kStagingChunk, bytes - off);
    PinnedPool::Buffer& b = ring[i];
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(b.ptr, static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, s));
    PHASOR_CUDA_CHECK(cudaEventRecord(b.done, s));
  };
  queue(0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 1 < n) queue(i + 1);  // its buffer held chunk i - 1, already copied out
    PinnedPool::Buffer& b = ring[i];
    PHASOR_CUDA_CHECK(cudaEventSynchronize(b.done));
    const std::size_t off = i * kStagingChunk;
    std::memcpy(static_cast<char*>(dst) + off, b.ptr, std::min(kStagingChunk, bytes - off));
  }
}

void device_to_device(void* dst, int dd, const void* src, int sd, std::size_t bytes) {
  cudaStream_t ds = current_stream_handle(dd);
  if (dd == sd) {
    DeviceGuard g(dd);
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ds));
    return;
  }
  // The copy runs on the destination's stream after the source's pending work; the source's stream
  // then waits for the copy, so the source block (reused only on its own stream) is not overwritten
  // before it has been read.
  cudaStream_t ss = current_stream_handle(sd);
  stream_wait(ds, dd, ss, sd);
  {
    DeviceGuard g(dd);
    PHASOR_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dd, src, sd, bytes, ds));
  }
  stream_wait(ss, sd, ds, dd);
}

}  // namespace

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  check_device(dst_device, "to");
  check_device(src_device, "to");
  if (bytes == 0) return;
  if (dst_device.is_cpu() != src_device.is_cpu())
    refuse_in_capture(dst_device.is_cpu() ? src_device : dst_device, "to", "a copy between the CPU and a GPU",
                      "the host would wait for it or hand over memory the replays could not read again "
                      "(item(), to(), printing; copy new data into a tensor made before the capture)");
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
  } else if (src_device.is_cpu()) {
    host_to_device(dst, dst_device.index, src, bytes);
  } else if (dst_device.is_cpu()) {
    device_to_host(dst, src, src_device.index, bytes);
    // after its wait for the current stream (Note [deferred device checks])
    report_deferred_checks(src_device.index, current_stream_handle(src_device.index));
  } else {
    device_to_device(dst, dst_device.index, src, src_device.index, bytes);
  }
}

void fill_zero(void* dst, Device device, std::size_t bytes) {
  check_device(device, "zeros");
  if (bytes == 0) return;
  if (device.is_cpu()) {
    std::memset(dst, 0, bytes);
    return;
  }
  DeviceGuard g(device.index);
  PHASOR_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, current_stream_handle(device.index)));
}

#else  // CPU-only build

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  check_device(dst_device, "to");
  check_device(src_device, "to");
  if (bytes) std::memcpy(dst, src, bytes);  // both on the CPU
}

void fill_zero(void* dst, Device device, std::size_t bytes) {
  check_device(device, "zeros");
  if (bytes) std::memset(dst, 0, bytes);  // on the CPU
}

#endif

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
