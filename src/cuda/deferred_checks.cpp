// src/cuda/deferred_checks.cpp - device checks that report at the next synchronization (cuda::set_deferred_checks)
// and the one entry point ops use for a device-side check, in a capture or eagerly (device_check).
//
// Note [deferred device checks]
// Some ops validate values the device computes (Note [device checks in CUDA graphs] lists them: index ranges,
// class targets, integer divisors, ...). By default the host waits for the answer, so the op throws before any
// work: one host wait per such op, which on a GPU stops the host from running ahead of the device. With
// cuda::set_deferred_checks(true) an op on a GPU instead queues the check that a CUDA graph capture queues: the
// same kernels, writing the same three words (the failed check's number, the position and value its message
// names), here one set per device that lives as long as the process. The host does not wait. Each check is
// registered with its op, its message function and the stream it was queued on. Where the host waits for a
// device anyway, the failures that device recorded are reported (report_deferred_checks): cuda::synchronize,
// Stream::synchronize, every copy to the host (item(), to(cpu), printing) and the library's own waits (not
// Event::synchronize: an event does not tell its stream). The words are read after the wait (one 24-byte copy,
// only while checks are pending); a failure throws the op's eager message with " (a deferred device check:
// <op> ran earlier; this synchronization reports it)" appended, and resets the words. Checks queued on the
// waited stream (every one after a device-wide wait) have then finished: they are forgotten.
// Between a failure and its report the ops behave as after a failed check in a replay: every kernel that reads
// an index (index_select, gather, the scatters, and what is built on them: take, tensor indexing, index_put_,
// ...; the ones whose index the library trusts too, through current_check_words) writes zeros or adds nothing,
// so inputs and in-place targets stay as they were; later checks stand down; results computed from a failed
// op are not meaningful. A process that never waits keeps at most kMaxPending checks per device: the next
// check waits for the device first and reports. The backward of an index op keeps its own device check while
// checks are deferred (Note [index in backward]): its forward's check may not have been read yet. A CUDA graph
// replay with checks (Note [device checks in CUDA graphs]) does not wait either: its checks are registered
// anew for each replay (defer_replay_checks), and a one-thread kernel after the replay copies its first
// failure, if any, into the device's words, numbered as the replay's registration.
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "cuda/runtime.hpp"
#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace cuda {

namespace {
std::atomic<bool> g_deferred{false};
}  // namespace

void set_deferred_checks(bool on) { g_deferred.store(on, std::memory_order_relaxed); }
bool deferred_checks() { return g_deferred.load(std::memory_order_relaxed); }

#if PHASOR_WITH_CUDA

namespace detail {
namespace {

/// Checks a device may hold unreported before the next one waits for it.
constexpr std::size_t kMaxPending = 4096;

/// The deferred checks of one device: its words and what each queued check reports.
struct DeviceChecks {
  std::mutex mu;
  std::uint64_t* words = nullptr;  ///< device memory: failed check's number (0: none), position, value
  std::uint64_t next_id = 1;
  struct Pending {
    std::uint64_t id;
    cudaStream_t stream;
    DeviceCheck check;
  };
  std::deque<Pending> pending;
};

/// The pending checks of all devices: a copy to the host looks no further while it is 0.
std::atomic<std::size_t> g_pending{0};

DeviceChecks& checks_of(int device) {
  static std::mutex mu;
  static auto* all = new std::vector<std::unique_ptr<DeviceChecks>>;  // never destroyed: used at exit
  std::lock_guard<std::mutex> lk(mu);
  if (all->size() <= static_cast<std::size_t>(device)) all->resize(static_cast<std::size_t>(device) + 1);
  auto& c = (*all)[static_cast<std::size_t>(device)];
  if (!c) c = std::make_unique<DeviceChecks>();
  return *c;
}

constexpr std::uint64_t kClearWords[3] = {0, ~std::uint64_t{0}, 0};  // no failure, no position yet, no value

/// Reports the first failure c's words hold, after the host waited for stream s (or for the whole device): reads
/// them on s, forgets the checks that have finished, and throws. Holds c.mu.
void report_locked(DeviceChecks& c, cudaStream_t s, bool device_wide) {
  std::uint64_t w[3] = {};
  PHASOR_CUDA_CHECK(cudaMemcpyAsync(w, c.words, sizeof w, cudaMemcpyDeviceToHost, s));
  PHASOR_CUDA_CHECK(cudaStreamSynchronize(s));
  std::string op, message;
  if (w[0] != 0) {
    for (const auto& p : c.pending)
      if (p.id == w[0]) {
        op = p.check.op;
        message = p.check.report(w[1], w[2]);
      }
    PHASOR_CUDA_CHECK(cudaMemcpyAsync(c.words, kClearWords, sizeof kClearWords, cudaMemcpyHostToDevice, s));
    PHASOR_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  const std::size_t before = c.pending.size();
  for (auto it = c.pending.begin(); it != c.pending.end();)
    it = device_wide || it->stream == s || it->id == w[0] ? c.pending.erase(it) : it + 1;
  g_pending.fetch_sub(before - c.pending.size(), std::memory_order_relaxed);
  if (w[0] == 0) return;
  if (op.empty()) throw Error("cuda", "internal: a deferred device check failed with an unknown number");
  throw Error(op, message + " (a deferred device check: " + op + " ran earlier; this synchronization reports it)");
}

/// Makes room for n checks of c (queued on stream s of its device, which is current) and returns the first
/// one's number; the caller pushes them. Holds c.mu.
std::uint64_t reserve_locked(DeviceChecks& c, cudaStream_t s, std::size_t n) {
  if (!c.words) {
    void* p = nullptr;
    PHASOR_CUDA_CHECK(cudaMalloc(&p, sizeof kClearWords));  // kept for the process, as the device's own state
    PHASOR_CUDA_CHECK(cudaMemcpy(p, kClearWords, sizeof kClearWords, cudaMemcpyHostToDevice));
    c.words = static_cast<std::uint64_t*>(p);
  }
  if (c.pending.size() + n > kMaxPending) {  // never waited for: wait now, report what failed
    PHASOR_CUDA_CHECK(cudaDeviceSynchronize());
    report_locked(c, s, true);
  }
  const std::uint64_t first = c.next_id;
  c.next_id += n;
  g_pending.fetch_add(n, std::memory_order_relaxed);
  return first;
}

}  // namespace

bool checks_on_device(Device device) { return device.is_cuda() && (deferred_checks() || capturing(device)); }

std::uint64_t* device_check(Device device, const char* op, CheckReport report, std::uint64_t& id) {
  if (!device.is_cuda()) return nullptr;
  if (capturing(device)) return capture_check(device, op, std::move(report), id);
  if (!deferred_checks()) return nullptr;
  DeviceChecks& c = checks_of(device.index);
  std::lock_guard<std::mutex> lk(c.mu);
  DeviceGuard g(device.index);
  const cudaStream_t s = current_stream_handle(device.index);
  id = reserve_locked(c, s, 1);
  c.pending.push_back({id, s, {op, std::move(report)}});
  return c.words;
}

void defer_replay_checks(int device, void* stream, const std::uint64_t* graph_words,
                         const std::vector<DeviceCheck>& checks) {
  DeviceChecks& c = checks_of(device);
  std::lock_guard<std::mutex> lk(c.mu);
  DeviceGuard g(device);
  const auto s = static_cast<cudaStream_t>(stream);
  const std::uint64_t first = reserve_locked(c, s, checks.size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const CheckReport& report = checks[i].report;
    c.pending.push_back({first + i, s, {checks[i].op, [report](std::uint64_t a, std::uint64_t b) {
                                          return report(a, b) + " (in a CUDA graph replay)";
                                        }}});
  }
  queue_check_transfer(graph_words, c.words, first, s);
}

const std::uint64_t* current_check_words(Device device) {
  if (!checks_on_device(device)) return nullptr;
  if (capturing(device)) return capture_check_words(device);
  DeviceChecks& c = checks_of(device.index);
  std::lock_guard<std::mutex> lk(c.mu);
  return c.words;
}

void report_deferred_checks(int device, void* stream, bool device_wide) {
  if (g_pending.load(std::memory_order_relaxed) == 0) return;
  DeviceChecks& c = checks_of(device);
  std::lock_guard<std::mutex> lk(c.mu);
  if (c.pending.empty()) return;
  DeviceGuard g(device);
  report_locked(c, static_cast<cudaStream_t>(stream), device_wide);
}

}  // namespace detail

#else  // CPU-only build

namespace detail {
bool checks_on_device(Device) { return false; }
std::uint64_t* device_check(Device, const char*, CheckReport, std::uint64_t&) { return nullptr; }
const std::uint64_t* current_check_words(Device) { return nullptr; }
void defer_replay_checks(int, void*, const std::uint64_t*, const std::vector<DeviceCheck>&) {}
void report_deferred_checks(int, void*, bool) {}
}  // namespace detail

#endif

}  // namespace cuda
}  // namespace phasor
