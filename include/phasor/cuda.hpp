// phasor/cuda.hpp - CUDA devices, streams, events and graphs (issue #6). Every build has these declarations: without
// the CUDA backend (or without a driver or GPU) is_available() is false and device_count() is 0.
#pragma once
#include <functional>
#include <memory>

namespace phasor {
class Tensor;
namespace cuda {

/// True when phasor was built with the CUDA backend (PHASOR_CUDA), whether or not a GPU is present.
bool is_built();
/// True when the CUDA backend is built and at least one CUDA device is usable.
bool is_available();
/// Number of usable CUDA devices: 0 without a driver or device, or in a CPU-only build (never throws).
int device_count();
/// Waits until all work queued on `device` (-1: the calling thread's current device) has finished.
void synchronize(int device = -1);

class Event;

/// A CUDA stream of one device: an opaque handle (no CUDA types; native_handle() is a cudaStream_t).
class Stream {
 public:
  /// The legacy default stream of device 0.
  Stream() = default;
  /// A new stream on `device` that synchronizes with the legacy default stream; it lives until the process exits.
  static Stream create(int device = 0);
  /// Waits until all work queued on this stream has finished.
  void synchronize() const;
  /// True when all work queued on this stream has finished (the host does not wait).
  bool query() const;
  /// Makes the work queued on this stream from now on wait for `event`'s recorded work (Event::wait).
  void wait_event(const Event& event) const;
  /// Makes the work queued on this stream from now on wait for the work queued on `other` so far (on
  /// the GPU: the host does not wait); `other` may belong to another device.
  void wait_stream(const Stream& other) const;
  /// A new event recorded on this stream now (Event::record).
  Event record_event(bool enable_timing = false) const;
  /// The device this stream belongs to.
  int device() const { return device_; }
  /// The cudaStream_t, as a pointer (nullptr for the legacy default stream).
  void* native_handle() const { return handle_; }
  /// True for the legacy default stream.
  bool is_default() const { return handle_ == nullptr; }
  /// Same device and stream.
  bool operator==(const Stream& o) const { return handle_ == o.handle_ && device_ == o.device_; }
  /// Different device or stream.
  bool operator!=(const Stream& o) const { return !(*this == o); }
  /// Wraps an existing cudaStream_t of `device` (not owned; nullptr: the legacy default stream).
  static Stream from_native(void* handle, int device) { return Stream(handle, device); }

 private:
  Stream(void* handle, int device) : handle_(handle), device_(device) {}
  void* handle_ = nullptr;
  int device_ = 0;
};

/// A marker in a stream's work, as torch.cuda.Event: record() it on a stream, then make other streams
/// wait() for the work before it, ask whether that work has finished (query, synchronize), or time the
/// work between two events (elapsed_time). Its CUDA event is made on the first record(), on the stream's
/// device, which the event keeps. Move-only (an opaque handle; native_handle() is a cudaEvent_t).
class Event {
 public:
  /// An event not yet recorded; with `enable_timing` elapsed_time() can read the times of its records.
  explicit Event(bool enable_timing = false) : timing_(enable_timing) {}
  /// Releases the CUDA event (work queued to record it still completes).
  ~Event();
  /// Takes other's event; other is left unrecorded.
  Event(Event&& other) noexcept;
  /// Releases this event and takes other's; other is left unrecorded.
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;             ///< not copyable (owns its CUDA event)
  Event& operator=(const Event&) = delete;  ///< not copyable
  /// Marks the work queued on `stream` so far (a later record moves the mark); the stream must be on the
  /// device of the event's first record.
  void record(const Stream& stream);
  /// Records on the calling thread's current stream (of the event's device, or of the current device
  /// before the first record).
  void record();
  /// Makes the work queued on `stream` from now on wait for the recorded work (on the GPU: the host does
  /// not wait); nothing when never recorded. `stream` may belong to another device.
  void wait(const Stream& stream) const;
  /// wait() on the calling thread's current stream of the current device.
  void wait() const;
  /// True when the recorded work has finished, or the event was never recorded.
  bool query() const;
  /// Blocks the host until the recorded work has finished (at once when never recorded).
  void synchronize() const;
  /// Milliseconds of GPU time from this event's record to `end`'s: both made with enable_timing, recorded on
  /// one device, and `end` finished (call end.synchronize() first).
  float elapsed_time(const Event& end) const;
  /// True once recorded.
  bool is_recorded() const { return handle_ != nullptr; }
  /// The device of the event's records (-1 before the first).
  int device() const { return device_; }
  /// Whether elapsed_time() is enabled.
  bool timing_enabled() const { return timing_; }
  /// The cudaEvent_t, as a pointer (nullptr before the first record).
  void* native_handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
  int device_ = -1;
  bool timing_ = false;
};

/// The calling thread's current stream on `device` (-1: the current device); initially the legacy default stream.
Stream current_stream(int device = -1);
/// Makes `stream` the calling thread's current stream on its device: new CUDA tensors and copies use it.
void set_current_stream(const Stream& stream);
/// False when the environment variable PHASOR_NO_CUDA_MEMORY_CACHING is set to anything but 0 (read once, at the
/// first CUDA allocation or call of this function): every tensor then gets its own cudaMalloc of its exact size
/// and its cudaFree when it dies (after waiting for the device), so memory checkers such as compute-sanitizer see
/// each tensor's bounds. A debugging mode: slow.
bool memory_caching_enabled();
/// Marks t's memory as used by work queued on `stream` (another stream than the one it was made on):
/// when t's storage is freed, its block is reused only after that stream's work up to the free is done.
void record_stream(const Tensor& t, const Stream& stream);

/// CUDA work captured once and replayed with one launch (Note [CUDA graphs] in src/cuda/graph.cpp), as
/// torch.cuda.CUDAGraph: for steps whose kernels are small, where launching them costs more than running
/// them. Capture runs the code once without executing its kernels: tensors made during the capture keep
/// their memory (a private pool), and each replay() runs the same kernels on the same memory. So:
///  - run the work once or more before capturing (plans, caches, optimizer state are made then);
///  - feed new data by copying into tensors that existed before the capture (x.copy_(batch)) and read
///    results from tensors the capture made (they are overwritten by each replay);
///  - everything the host decides is frozen: shapes, branches, scalars. Work that makes the host wait
///    (item(), to(cpu), printing), random numbers from a Generator passed in, randperm, first optimizer
///    steps and the step of an Adam that is not capturable (AdamOptions::capturable) cannot be
///    captured and throw phasor::Error; the capture is discarded.
///  - two host values are read anew by each replay: the lr of SGD/Adam/AdamW steps (set by hand or by
///    an LR scheduler between replays), and random numbers from the default generator (rand, randn,
///    randint, dropout): each replay draws what the same work run eagerly would draw from the
///    generator's state then, and advances it as that work would; the capture itself draws nothing.
///  - values ops validate are checked on the device at every replay (see replay()): index tensors on the
///    GPU (index_select, index_add, gather, scatter_add, cross_entropy's and nll_loss's targets),
///    clip_grad_norm_'s total with error_if_nonfinite, welch's window sum, istft's NOLA condition and
///    pde::step's RK4 stability.
/// Memory that was live during the capture is not reused while the graph lives (see reset()).
class Graph {
 public:
  /// An empty graph (nothing captured).
  Graph();
  /// Discards the capture (waits for its replays to finish first).
  ~Graph();
  /// Moves the captured work.
  Graph(Graph&& other) noexcept;
  /// Discards this graph's capture and takes other's.
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;             ///< not copyable (owns the captured work and its memory)
  Graph& operator=(const Graph&) = delete;  ///< not copyable

  /// Captures the CUDA work `fn` queues from the calling thread on `device` (-1: the current device):
  /// capture_begin, fn(), capture_end. When fn throws, the capture is discarded and the error rethrown.
  void capture(const std::function<void()>& fn, int device = -1);
  /// Waits for the device, then makes a private stream the calling thread's current stream on `device`
  /// and starts capturing it. Throws when this graph holds a capture or another capture is in progress.
  void capture_begin(int device = -1);
  /// Ends the capture begun by capture_begin and restores the current stream; throws (discarding the
  /// capture) when the captured work made a call that cannot be captured.
  void capture_end();
  /// Queues the captured work on the device's current stream (one launch). A graph holding device checks
  /// waits for the replay and throws the eager op's phasor::Error for its first failed check ("... (in a
  /// CUDA graph replay)", naming an index op's first out-of-range index); a failed index op and later
  /// checked ones wrote zeros (gathers) or added nothing (scatters), a failed clip_grad_norm_ left the
  /// gradients unclipped, and the rest of the replay ran on what they left. With deferred checks
  /// (set_deferred_checks) it does not wait: a later synchronization throws that error.
  void replay() const;
  /// Discards the capture after waiting for its replays; its memory is reusable again.
  void reset();
  /// True when a capture has ended successfully and not been reset.
  bool is_captured() const;
  /// The device captured on (-1 before capture_begin).
  int device() const;

  /// The capture's state (defined in src/cuda/graph.cpp).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// True while the calling thread captures a Graph on `device` (-1: the current device).
bool is_capturing(int device = -1);

/// Defers the checks of values ops on a GPU validate (indices already on the GPU, class targets, integer
/// divisors, the flags listed for Graph) when `deferred` is true: the device checks them and the host does
/// not wait; a failure throws the op's phasor::Error at the next synchronization with that device
/// (synchronize(), Stream::synchronize, item(), to(cpu), printing), as PyTorch's asynchronous CUDA errors
/// (Note [deferred device checks] in src/cuda/deferred_checks.cpp). Until then every op that reads an index
/// on that device (index_select, gather, take, tensor indexing, the scatters, index_put_, ...) writes zeros
/// or adds nothing, so inputs and in-place targets stay as they were; what is computed from a failed op is
/// not meaningful. Process-wide; false by default: the op waits for the answer and throws before any work.
/// No effect on the CPU.
void set_deferred_checks(bool deferred);
/// Whether GPU ops defer their value checks to the next synchronization (see set_deferred_checks).
bool deferred_checks();

/// Lets float32 and complex64 matrix products on CUDA devices (matmul, bmm, einsum, linear, conv) use
/// TF32 tensor cores: operands rounded to 10 mantissa bits, several times faster. Process-wide; off by
/// default (as PyTorch's matmul), so GPU results match full float32 arithmetic. No effect on the CPU.
void set_allow_tf32(bool allow);
/// Whether float32/complex64 CUDA matrix products may use TF32 (see set_allow_tf32); false by default.
bool allow_tf32();

}  // namespace cuda
}  // namespace phasor
