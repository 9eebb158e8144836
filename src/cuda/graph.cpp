// src/cuda/graph.cpp - cuda::Graph: stream capture into a CUDA graph and its replay.
//
// Note [CUDA graphs]
// A training step of a small model is a few dozen kernels of microseconds each; launching them one by
// one costs more host time than the GPU spends running them. A CUDA graph records the kernels (and
// cuBLAS/cuFFT work, copies, memsets) queued on a stream once and replays them with one launch.
// Capture: capture_begin waits for the device, takes a private non-blocking stream of the device (kept
// in a per-device free list, so repeated captures reuse it), makes it the thread's current stream, tells
// the caching allocator (Note [caching device allocator]) and begins a global-mode capture. The code
// then runs as usual: ops queue their work on the current stream, which records instead of running it.
// Memory: tensors made during the capture come from the capture stream's segments, which nothing else
// allocates from: a replay writes them again, so they stay the graph's until reset(). Blocks that were
// live on other streams during the capture (parameters, inputs, caches) are not reused while the graph
// lives, even when freed. The allocator may cudaMalloc new segments during the capture (under relaxed
// capture mode: the segment is not part of the graph and outlives it).
// What cannot be captured fails at once with a phasor::Error naming the op (refuse_in_capture): host
// waits and copies to or from the CPU, random numbers from a generator other than the default one (Note
// [random numbers in CUDA graphs]), randperm (drawn on the host), the step of an Adam that is not
// capturable (its bias corrections depend on the host-side step count; capturable keeps the count on the
// device, incremented by a kernel), first optimizer steps (state made during a capture would be made
// again, zeroed, by every replay), and cuFFT plans or process-wide caches made during the capture (run
// the work once before capturing). Anything else the CUDA runtime rejects invalidates the capture and
// capture_end throws. Either way the capture is discarded: the stream, the allocator and the current
// stream are as before capture_begin.
// Replay queues the graph on the device's current stream; CUDA orders the launches of one graph. Values
// ops validate (indices, a few flags) are checked by the device at each replay (Note [device checks in
// CUDA graphs]).
// Resources the captured work uses beyond device memory (cuFFT plans) are kept alive by the graph
// (keep_for_graph). reset() and the destructor wait for the device before releasing memory.
//
// Note [host values in CUDA graphs]
// Host values are frozen into a capture, except those the captured work reads from device memory that
// each replay rewrites: capture_host_values gives captured work a few words of device memory plus a host
// function that says what they hold, and kernels take the address instead of the value. Every replay
// first calls each function and writes all the words with one write_words kernel queued on the replay's
// stream before the graph, so the graph reads the values of the moment of the replay. The words are not
// from the graph's pool: there a block the captured work used and freed earlier is handed out again, and
// the replay's own earlier kernels would overwrite them. The functions run on the replaying thread and
// must stay valid as long as the graph: they hold the graph's own state or weak references. Users:
// random numbers (below) and the learning rate of SGD/Adam/AdamW steps (Optimizer::captured_lr: an LR
// scheduler's changes reach the replays; once the optimizer is gone, replays keep its last rate).
//
// Note [random numbers in CUDA graphs]
// Random fills take their Philox counters from the host (Note [counter-based random numbers]); a graph
// that baked them in would draw the same numbers on every replay. So inside a capture a draw from the
// default generator does not advance it: the graph counts the counters its draws use (n in all, each draw
// its offset from a base) and the captured kernels read the seed and the base from two host-value words
// (Note [host values in CUDA graphs]), which each replay sets by reserving n counters of the default
// generator (its seed, and its offset at that moment). So replays draw fresh numbers, exactly those the
// same work run eagerly would draw from the generator's state at the replay, and leave the generator
// where the eager work would (manual_seed between replays takes effect, as eager). The capture itself
// draws nothing. A Generator the caller passes may not outlive the graph, so drawing from one in a
// capture is refused.
//
// Note [device checks in CUDA graphs]
// Some ops validate values the device computes: index_select, index_add, gather and scatter_add the range
// of their indices, and a few ops one flag each (detail::check_device_value, core/device_check.cpp:
// nll_loss's and cross_entropy's class targets, clip_grad_norm_'s error_if_nonfinite, welch's window sum,
// istft's NOLA condition, pde's explicit-stability check). Eagerly the host waits for the answer (one
// wait on a GPU) and throws before any work, unless checks are deferred (Note [deferred device checks] in
// deferred_checks.cpp queues these same checks eagerly). A capture cannot wait, and a replay must check
// the values of its own moment. So inside a capture such an op registers a check (capture_check, with a
// function that writes its message) and queues kernels that test the values at each replay and, on a
// failure, record the check's number and two words for the message in the graph's three check words:
//  - an index check (check_index_range) scans every index; each offending one records the number and,
//    with atomicMin, lowers the position word to the smallest offending position (in the index's logical
//    order); a one-thread kernel then stores the value there. The op's kernel reads the first word: when
//    any check of this replay has failed, a gather writes zeros and a scatter adds nothing (index_add and
//    scatter_add return their input unchanged);
//  - a flag check (queue_flag_check) is one thread: when the flag is set it records the number and the
//    two float64 values the message names. The op itself keeps a failure harmless to the work that
//    follows (clip_grad_norm_ then leaves the gradients as they were; nll_loss and cross_entropy map bad
//    targets to class 0, so that their own gather stays in range).
// Checks after a failed one stand down, so the first failure of a replay is reported. The words are host
// values (Note [host values in CUDA graphs]), reset before every replay; a graph without checks makes no
// host wait. replay() of a graph with checks waits for the replay to end and reads the words: a failed
// check throws the eager op's message (for an index check, naming the first offending value), with " (in
// a CUDA graph replay)" appended. The replay's other work did run, on what the failed op left: results
// computed from it are not meaningful. Indices the library builds in range itself (the `trusted` ops, as
// in pad and in the losses' gathers) take no check, eagerly or in a capture; in a capture with checks their
// kernels read the first word too (current_check_words), so they stand down after a failure as well.
#include "cuda/graph.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/runtime.hpp"
#include "phasor/creation.hpp"
#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace cuda {

#if PHASOR_WITH_CUDA

struct Graph::Impl {
  int device = -1;
  std::uint64_t id = 0;             // the allocator's name for this capture (0: none)
  cudaStream_t stream = nullptr;    // the private capture stream (nullptr: none held)
  cudaStream_t previous = nullptr;  // the thread's current stream before capture_begin
  bool capturing = false;
  cudaGraphExec_t exec = nullptr;
  std::vector<std::shared_ptr<const void>> kept;  // keep_for_graph
  struct HostValues {  // capture_host_values
    Tensor words;       // int64[n] on the device (not from the graph's pool)
    std::function<void(std::uint64_t*)> fill;
  };
  std::vector<HostValues> host_values;
  const void* counter_state = nullptr;  // in host_values: (seed, base) of a replay's random draws
  std::uint64_t counters = 0;           // Philox counters the captured random draws use per replay
  std::vector<detail::DeviceCheck> checks;  // capture_check: what a failure of check number i + 1 reports
  std::uint64_t* check_words = nullptr;  // in host_values: failed check's number (0: none), position, value
};

namespace detail {
namespace {

thread_local Graph::Impl* t_capture = nullptr;  // the calling thread's capture in progress
std::atomic<std::uint64_t> g_next_id{1};
std::mutex g_streams_mu;
std::vector<std::vector<cudaStream_t>> g_free_streams;  // per device: capture streams no graph holds

cudaStream_t take_stream(int device) {
  {
    std::lock_guard<std::mutex> lk(g_streams_mu);
    if (g_free_streams.size() > static_cast<std::size_t>(device) && !g_free_streams[device].empty()) {
      cudaStream_t s = g_free_streams[device].back();
      g_free_streams[device].pop_back();
      return s;
    }
  }
  DeviceGuard g(device);
  cudaStream_t s = nullptr;
  PHASOR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));  // lives as long as the process
  return s;
}

void give_stream(int device, cudaStream_t s) {
  std::lock_guard<std::mutex> lk(g_streams_mu);
  if (g_free_streams.size() <= static_cast<std::size_t>(device)) g_free_streams.resize(device + 1);
  g_free_streams[device].push_back(s);
}

/// Releases what a graph holds once none of its work can run; never throws (destructors call it).
void release(Graph::Impl& g) noexcept {
  if (g.device < 0 || (!g.exec && !g.id)) return;
  int prev = -1;
  if (cudaGetDevice(&prev) == cudaSuccess && prev != g.device) (void)cudaSetDevice(g.device);
  (void)cudaDeviceSynchronize();  // replays still running read the memory released below
  if (g.exec) (void)cudaGraphExecDestroy(g.exec);
  g.exec = nullptr;
  try {
    if (g.id) allocator_release_graph(g.device, g.id);
  } catch (...) {
  }
  g.id = 0;
  if (g.stream) give_stream(g.device, g.stream);
  g.stream = nullptr;
  g.kept.clear();
  g.host_values.clear();
  g.counter_state = nullptr;
  g.counters = 0;
  g.checks.clear();
  g.check_words = nullptr;
  if (prev >= 0 && prev != g.device) (void)cudaSetDevice(prev);
}

/// Ends the capture in progress on the calling thread; returns the graph (nullptr when it failed) and the
/// runtime's answer. The current stream and the allocator are as before capture_begin afterwards.
cudaError_t end(Graph::Impl& g, cudaGraph_t* graph) {
  DeviceGuard guard(g.device);
  *graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(g.stream, graph);
  if (e != cudaSuccess) (void)cudaGetLastError();
  set_current_stream(Stream::from_native(g.previous, g.device));
  allocator_end_capture(g.device);
  g.capturing = false;
  t_capture = nullptr;
  return e;
}

/// Ends a capture that will not be kept (its code threw, or the graph dies mid-capture) and releases it;
/// never throws.
void abandon(Graph::Impl& g) noexcept {
  cudaGraph_t graph = nullptr;
  try {
    end(g, &graph);
  } catch (...) {
  }
  if (graph) (void)cudaGraphDestroy(graph);
  release(g);
}

Graph::Impl* capture_on(Device device) {
  return device.is_cuda() && t_capture && t_capture->device == device.index ? t_capture : nullptr;
}

}  // namespace

bool capturing(Device device) { return capture_on(device) != nullptr; }

std::uint64_t* capture_check_words(Device device) {
  Graph::Impl* g = capture_on(device);
  return g ? g->check_words : nullptr;
}

void refuse_in_capture(Device device, const char* op, const char* what, const char* why) {
  if (capture_on(device))
    throw Error(op, std::string(what) + " cannot be captured into a CUDA graph (capturing on " + device.str() +
                        "): " + why);
}

void keep_for_graph(Device device, std::shared_ptr<const void> resource) {
  if (Graph::Impl* g = capture_on(device)) g->kept.push_back(std::move(resource));
}

const void* capture_host_values(Device device, int words, std::function<void(std::uint64_t*)> fill) {
  Graph::Impl* g = capture_on(device);
  if (!g) return nullptr;
  if (words < 1 || words > kMaxWordWrites)
    throw Error("cuda.Graph", "capture_host_values: " + std::to_string(words) + " words (1 to " +
                                  std::to_string(kMaxWordWrites) + ")");
  // Not from the graph's pool: there a block the captured work used and freed earlier would be handed out
  // again, and a replay's earlier kernels would overwrite the values written before the graph. A block of
  // the stream the capture began from is never shared with the captured work (and is kept while the graph
  // lives, Note [caching device allocator]).
  set_current_stream(Stream::from_native(g->previous, g->device));
  Tensor buffer;
  try {
    buffer = empty({words}, Dtype::Int64, device);
  } catch (...) {
    set_current_stream(Stream::from_native(g->stream, g->device));
    throw;
  }
  set_current_stream(Stream::from_native(g->stream, g->device));
  g->host_values.push_back({std::move(buffer), std::move(fill)});
  return g->host_values.back().words.data_ptr();
}

const void* capture_random_counters(Device device, std::uint64_t n, std::uint64_t& start) {
  Graph::Impl* g = capture_on(device);
  if (!g) return nullptr;
  if (!g->counter_state)  // g outlives its host values (reset() and the destructor clear them)
    g->counter_state =
        capture_host_values(device, 2, [g](std::uint64_t* w) { w[1] = reserve_default_counters(g->counters, w[0]); });
  start = g->counters;
  g->counters += n;
  return g->counter_state;
}

std::uint64_t* capture_check(Device device, const char* op, CheckReport report, std::uint64_t& id) {
  Graph::Impl* g = capture_on(device);
  if (!g) return nullptr;
  if (!g->check_words) {  // reset before each replay: no failure, no position yet (atomicMin lowers it), no value
    capture_host_values(device, 3, [](std::uint64_t* w) {
      w[0] = 0;
      w[1] = ~std::uint64_t{0};
      w[2] = 0;
    });
    g->check_words = static_cast<std::uint64_t*>(g->host_values.back().words.data_ptr());
  }
  g->checks.push_back({op, std::move(report)});
  id = g->checks.size();
  return g->check_words;
}

namespace {
/// Writes each host value of g (its fill, called now) before a replay on stream s.
void write_host_values(const Graph::Impl& g, cudaStream_t s) {
  std::uint64_t* dst[kMaxWordWrites];
  std::uint64_t val[kMaxWordWrites];
  int n = 0;
  for (const auto& hv : g.host_values) {
    const int words = static_cast<int>(hv.words.numel());
    if (n + words > kMaxWordWrites) {
      write_words(dst, val, n, s);
      n = 0;
    }
    hv.fill(val + n);
    auto* base = static_cast<std::uint64_t*>(hv.words.data_ptr());
    for (int i = 0; i < words; ++i) dst[n + i] = base + i;
    n += words;
  }
  write_words(dst, val, n, s);
}
}  // namespace

}  // namespace detail

Graph::Graph() : impl_(std::make_unique<Impl>()) {}

Graph::~Graph() {
  if (!impl_) return;
  if (impl_->capturing) detail::abandon(*impl_);
  else detail::release(*impl_);
}

Graph::Graph(Graph&& other) noexcept : impl_(std::move(other.impl_)) { other.impl_ = std::make_unique<Impl>(); }

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    Graph dead(std::move(*this));  // released by its destructor
    impl_ = std::move(other.impl_);
    other.impl_ = std::make_unique<Impl>();
  }
  return *this;
}

void Graph::capture_begin(int device) {
  Impl& g = *impl_;
  if (g.capturing) throw Error("cuda.Graph.capture_begin", "this graph is already capturing");
  if (g.exec) throw Error("cuda.Graph.capture_begin", "this graph already holds a capture (reset() discards it)");
  device = detail::checked_device(device, "cuda.Graph.capture_begin");
  if (detail::t_capture)
    throw Error("cuda.Graph.capture_begin", "the calling thread is already capturing a graph on " +
                                                Device::cuda(detail::t_capture->device).str());
  detail::DeviceGuard guard(device);
  PHASOR_CUDA_CHECK(cudaDeviceSynchronize());  // the captured work's inputs are ready, nothing in flight
  cudaStream_t s = detail::take_stream(device);
  const std::uint64_t id = detail::g_next_id++;
  try {
    detail::allocator_begin_capture(device, id, s);
  } catch (...) {
    detail::give_stream(device, s);
    throw;
  }
  g.device = device;
  g.id = id;
  g.stream = s;
  g.previous = detail::current_stream_handle(device);
  const cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (e != cudaSuccess) {
    detail::allocator_end_capture(device);
    detail::release(g);
    detail::check(e, "cudaStreamBeginCapture");
  }
  set_current_stream(Stream::from_native(s, device));
  g.capturing = true;
  detail::t_capture = &g;
}

void Graph::capture_end() {
  Impl& g = *impl_;
  if (!g.capturing) throw Error("cuda.Graph.capture_end", "no capture in progress (call capture_begin first)");
  if (detail::t_capture != &g)
    throw Error("cuda.Graph.capture_end", "the capture was begun on another thread");
  cudaGraph_t graph = nullptr;
  const cudaError_t e = detail::end(g, &graph);
  if (e != cudaSuccess || !graph) {
    detail::release(g);
    throw Error("cuda.Graph.capture_end",
                std::string("the capture failed (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                    "): the captured work made a call that cannot be captured; the capture was discarded");
  }
  detail::DeviceGuard guard(g.device);
  const cudaError_t ei = cudaGraphInstantiate(&g.exec, graph, 0);
  (void)cudaGraphDestroy(graph);  // the executable graph is independent of it
  if (ei != cudaSuccess) {
    g.exec = nullptr;
    detail::release(g);
    detail::check(ei, "cudaGraphInstantiate");
  }
}

void Graph::capture(const std::function<void()>& fn, int device) {
  capture_begin(device);
  try {
    fn();
  } catch (...) {
    detail::abandon(*impl_);
    throw;
  }
  capture_end();
}

void Graph::replay() const {
  const Impl& g = *impl_;
  if (!g.exec)
    throw Error("cuda.Graph.replay", g.capturing ? "the capture has not ended (call capture_end first)"
                                                 : "nothing captured (call capture or capture_begin/capture_end)");
  if (!g.checks.empty())
    detail::refuse_in_capture(Device::cuda(g.device), "cuda.Graph.replay", "a replay of a graph with device checks",
                              "it waits for the replay to read them (Note [device checks in CUDA graphs])");
  detail::DeviceGuard guard(g.device);
  cudaStream_t s = detail::current_stream_handle(g.device);
  detail::write_host_values(g, s);  // Note [host values in CUDA graphs]
  PHASOR_CUDA_CHECK(cudaGraphLaunch(g.exec, s));
  if (g.checks.empty()) return;
  if (deferred_checks()) {  // Note [deferred device checks]: a later synchronization reports them
    detail::defer_replay_checks(g.device, s, g.check_words, g.checks);
    return;
  }
  // Note [device checks in CUDA graphs]: wait for this replay and report its first failed check
  std::uint64_t w[3] = {};
  PHASOR_CUDA_CHECK(cudaMemcpyAsync(w, g.check_words, sizeof(w), cudaMemcpyDeviceToHost, s));
  PHASOR_CUDA_CHECK(cudaStreamSynchronize(s));
  if (w[0] == 0) return;
  const detail::DeviceCheck& c = g.checks.at(static_cast<std::size_t>(w[0] - 1));
  throw Error(c.op, c.report(w[1], w[2]) + " (in a CUDA graph replay)");
}

void Graph::reset() {
  if (impl_->capturing) throw Error("cuda.Graph.reset", "a capture is in progress (end it with capture_end first)");
  detail::release(*impl_);
}

bool Graph::is_captured() const { return impl_->exec != nullptr; }
int Graph::device() const { return impl_->device; }

bool is_capturing(int device) {
  if (device < 0) {
    if (!detail::t_capture) return false;
    device = detail::current_device();
  }
  return detail::capturing(Device::cuda(device));
}

#else  // CPU-only build

struct Graph::Impl {};

namespace detail {
bool capturing(Device) { return false; }
void refuse_in_capture(Device, const char*, const char*, const char*) {}
void keep_for_graph(Device, std::shared_ptr<const void>) {}
const void* capture_host_values(Device, int, std::function<void(std::uint64_t*)>) { return nullptr; }
const void* capture_random_counters(Device, std::uint64_t, std::uint64_t&) { return nullptr; }
std::uint64_t* capture_check(Device, const char*, CheckReport, std::uint64_t&) { return nullptr; }
std::uint64_t* capture_check_words(Device) { return nullptr; }
}  // namespace detail

namespace {
[[noreturn]] void no_cuda(const char* op) {
  throw Error(op, "phasor was built without CUDA (configure with -DPHASOR_CUDA=ON and a CUDA toolkit)");
}
}  // namespace

Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&& other) noexcept : impl_(std::move(other.impl_)) { other.impl_ = std::make_unique<Impl>(); }
Graph& Graph::operator=(Graph&& other) noexcept {
  impl_.swap(other.impl_);
  return *this;
}
void Graph::capture(const std::function<void()>&, int) { no_cuda("cuda.Graph.capture"); }
void Graph::capture_begin(int) { no_cuda("cuda.Graph.capture_begin"); }
void Graph::capture_end() { no_cuda("cuda.Graph.capture_end"); }
void Graph::replay() const { no_cuda("cuda.Graph.replay"); }
void Graph::reset() {}
bool Graph::is_captured() const { return false; }
int Graph::device() const { return -1; }
bool is_capturing(int) { return false; }

#endif

}  // namespace cuda
}  // namespace phasor
