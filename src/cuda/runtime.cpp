// src/cuda/runtime.cpp - devices, streams, events and error checks of the CUDA runtime; in a CPU-only
// build the public functions report no devices or throw a named error.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "cuda/runtime.hpp"
#include "phasor/cuda.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace cuda {

namespace {
/// Throws unless elapsed_time can read the times of `start` and `end` (both builds check the same).
void check_elapsed(const Event& start, const Event& end) {
  const char* op = "Event.elapsed_time";
  if (!start.timing_enabled() || !end.timing_enabled())
    throw Error(op, std::string("both events need enable_timing (start: ") + (start.timing_enabled() ? "true" : "false") +
                        ", end: " + (end.timing_enabled() ? "true" : "false") + ")");
  if (!start.is_recorded() || !end.is_recorded())
    throw Error(op, std::string("the ") + (start.is_recorded() ? "end" : "start") + " event was never recorded");
  if (start.device() != end.device())
    throw Error(op, "the events were recorded on different devices (cuda:" + std::to_string(start.device()) +
                        " and cuda:" + std::to_string(end.device()) + ")");
}
}  // namespace

Event::Event(Event&& other) noexcept : handle_(other.handle_), device_(other.device_), timing_(other.timing_) {
  other.handle_ = nullptr;
  other.device_ = -1;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event dead(std::move(*this));  // released by its destructor
    handle_ = other.handle_;
    device_ = other.device_;
    timing_ = other.timing_;
    other.handle_ = nullptr;
    other.device_ = -1;
  }
  return *this;
}

Event Stream::record_event(bool enable_timing) const {
  Event e(enable_timing);
  e.record(*this);
  return e;
}

void Stream::wait_event(const Event& event) const { event.wait(*this); }

namespace detail {
namespace {
/// check_device for a CPU device: cpu:0 always exists, cpu:i only below cpu_device_count().
void check_cpu_device(Device d, const char* op) {
  const int n = cpu_device_count();
  if (d.index >= 0 && d.index < n) return;
  throw Error(op, "device " + d.str() + " does not exist (" + std::to_string(n) +
                      (n == 1 ? " CPU device; phasor::set_cpu_device_count(n) makes virtual ones)" : " CPU devices)"));
}
}  // namespace
}  // namespace detail

#if PHASOR_WITH_CUDA

namespace detail {

void check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls start clean
  const bool capture = e == cudaErrorStreamCaptureUnsupported || e == cudaErrorStreamCaptureInvalidated ||
                       e == cudaErrorStreamCaptureImplicit || e == cudaErrorStreamCaptureIsolation;
  throw Error("cuda", std::string(call) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) +
                          (capture ? " (the call cannot run while a CUDA graph is being captured)" : ""));
}

namespace {
struct DeviceInfo {
  int count = 0;
  cudaError_t error = cudaSuccess;  // why count is 0, when it is
};
const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    d.error = cudaGetDeviceCount(&d.count);
    if (d.error != cudaSuccess) {
      (void)cudaGetLastError();
      d.count = 0;
    }
    return d;
  }();
  return info;
}
}  // namespace

int current_device() {
  int d = 0;
  PHASOR_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

int checked_device(int device, const char* op) {
  if (device < 0) {
    check_device(Device::cuda(0), op);  // a clear error when there is no device at all
    device = current_device();
  }
  check_device(Device::cuda(device), op);
  return device;
}

DeviceGuard::DeviceGuard(int device) : device_(device) {
  PHASOR_CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ != device_) PHASOR_CUDA_CHECK(cudaSetDevice(device_));
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0 && prev_ != device_) (void)cudaSetDevice(prev_);
}

namespace {
/// The calling thread's current stream per device (nullptr: legacy default stream).
std::vector<cudaStream_t>& thread_streams() {
  thread_local std::vector<cudaStream_t> streams;
  if (streams.empty()) streams.assign(static_cast<std::size_t>(device_info().count), nullptr);
  return streams;
}
}  // namespace

void stream_wait(cudaStream_t waiter, int wd, cudaStream_t producer, int pd) {
  cudaEvent_t ev = nullptr;
  {
    DeviceGuard g(pd);
    PHASOR_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const cudaError_t e = cudaEventRecord(ev, producer);
    if (e != cudaSuccess) {
      (void)cudaEventDestroy(ev);
      check(e, "cudaEventRecord");
    }
  }
  DeviceGuard g(wd);
  const cudaError_t e = cudaStreamWaitEvent(waiter, ev, 0);
  (void)cudaEventDestroy(ev);  // released once it has completed
  check(e, "cudaStreamWaitEvent");
}

namespace {
/// The answer of cudaStreamQuery/cudaEventQuery: true when done, false when not ready (cleared: not an
/// error), else a named error.
bool ready(cudaError_t e, const char* call) {
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check(e, call);
  return true;
}
}  // namespace

cudaStream_t current_stream_handle(int device) {
  auto& s = thread_streams();
  return device >= 0 && static_cast<std::size_t>(device) < s.size() ? s[static_cast<std::size_t>(device)] : nullptr;
}

void check_device(Device d, const char* op) {
  if (d.is_cpu()) return check_cpu_device(d, op);
  const DeviceInfo& info = device_info();
  if (d.index >= 0 && d.index < info.count) return;
  std::string why;
  if (info.count > 0)
    why = std::to_string(info.count) + (info.count == 1 ? " CUDA device" : " CUDA devices");
  else if (info.error == cudaErrorInsufficientDriver)
    why = "no CUDA driver";
  else if (info.error == cudaErrorNoDevice || info.error == cudaSuccess)
    why = "0 CUDA devices";
  else
    why = std::string("0 CUDA devices: ") + cudaGetErrorName(info.error);
  throw Error(op, "device " + d.str() + " does not exist (" + why + ")");
}

}  // namespace detail

bool is_built() { return true; }
int device_count() { return detail::device_info().count; }
bool is_available() { return device_count() > 0; }

void synchronize(int device) {
  device = detail::checked_device(device, "synchronize");
  detail::DeviceGuard g(device);
  PHASOR_CUDA_CHECK(cudaDeviceSynchronize());
  detail::report_deferred_checks(device, detail::current_stream_handle(device), true);
}

Stream Stream::create(int device) {
  detail::check_device(Device::cuda(device), "Stream::create");
  detail::DeviceGuard g(device);
  cudaStream_t s = nullptr;
  PHASOR_CUDA_CHECK(cudaStreamCreate(&s));  // blocking: orders with the legacy default stream
  return Stream(s, device);
}

void Stream::synchronize() const {
  detail::check_device(Device::cuda(device_), "Stream::synchronize");
  detail::DeviceGuard g(device_);
  PHASOR_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)));
  detail::report_deferred_checks(device_, handle_);
}

namespace {
/// current_stream(device), its errors naming `op`.
Stream current_stream_of(int device, const char* op) {
  device = detail::checked_device(device, op);
  return Stream::from_native(detail::current_stream_handle(device), device);
}
}  // namespace

bool Stream::query() const {
  detail::check_device(Device::cuda(device_), "Stream::query");
  detail::DeviceGuard g(device_);
  return detail::ready(cudaStreamQuery(static_cast<cudaStream_t>(handle_)), "cudaStreamQuery");
}

void Stream::wait_stream(const Stream& other) const {
  detail::check_device(Device::cuda(device_), "Stream::wait_stream");
  detail::check_device(Device::cuda(other.device_), "Stream::wait_stream");
  if (*this == other) return;  // a stream's own work is in order
  detail::stream_wait(static_cast<cudaStream_t>(handle_), device_, static_cast<cudaStream_t>(other.handle_), other.device_);
}

Event::~Event() {
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
}

void Event::record(const Stream& stream) {
  detail::check_device(Device::cuda(stream.device()), "Event.record");
  if (handle_ && stream.device() != device_)
    throw Error("Event.record", "the event belongs to cuda:" + std::to_string(device_) +
                                    " (its first record) but the stream to cuda:" + std::to_string(stream.device()));
  detail::DeviceGuard g(stream.device());
  const bool made = !handle_;
  if (made) {
    cudaEvent_t e = nullptr;
    PHASOR_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming));
    handle_ = e;
    device_ = stream.device();
  }
  const cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(handle_), static_cast<cudaStream_t>(stream.native_handle()));
  if (e != cudaSuccess && made) {  // as before: never recorded
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
    handle_ = nullptr;
    device_ = -1;
  }
  detail::check(e, "cudaEventRecord");
}

void Event::record() { record(current_stream_of(device_, "Event.record")); }

void Event::wait(const Stream& stream) const {
  detail::check_device(Device::cuda(stream.device()), "Event.wait");
  if (!handle_) return;
  detail::DeviceGuard g(stream.device());
  PHASOR_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream.native_handle()), static_cast<cudaEvent_t>(handle_), 0));
}

void Event::wait() const { wait(current_stream_of(-1, "Event.wait")); }

bool Event::query() const {
  if (!handle_) return true;
  detail::DeviceGuard g(device_);
  return detail::ready(cudaEventQuery(static_cast<cudaEvent_t>(handle_)), "cudaEventQuery");
}

void Event::synchronize() const {
  if (!handle_) return;
  detail::DeviceGuard g(device_);
  PHASOR_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)));
}

float Event::elapsed_time(const Event& end) const {
  check_elapsed(*this, end);
  detail::DeviceGuard g(device_);
  float ms = 0;
  const cudaError_t e = cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(handle_), static_cast<cudaEvent_t>(end.handle_));
  if (!detail::ready(e, "cudaEventElapsedTime"))
    throw Error("Event.elapsed_time", "the recorded work has not finished (call end.synchronize() first)");
  return ms;
}

Stream current_stream(int device) { return current_stream_of(device, "current_stream"); }

namespace detail {
void finish_current_stream(Device device) {
  if (!device.is_cuda()) return;
  check_device(device, "finish_current_stream");
  refuse_in_capture(device, "cuda.Graph", "filling a process-wide cache (DFT matrices, constant tables)",
                    "the host would wait for the GPU; run the work once before capturing so the cache is filled");
  DeviceGuard g(device.index);
  cudaStream_t s = current_stream_handle(device.index);
  PHASOR_CUDA_CHECK(cudaStreamSynchronize(s));
  report_deferred_checks(device.index, s);
}
}  // namespace detail

void set_current_stream(const Stream& stream) {
  detail::check_device(Device::cuda(stream.device()), "set_current_stream");
  detail::thread_streams()[static_cast<std::size_t>(stream.device())] = static_cast<cudaStream_t>(stream.native_handle());
}

#else  // CPU-only build

namespace detail {
void check_device(Device d, const char* op) {
  if (d.is_cpu()) return check_cpu_device(d, op);
  throw Error(op, "device " + d.str() + " does not exist (CPU-only build)");
}
void finish_current_stream(Device device) { check_device(device, "finish_current_stream"); }
void no_cuda_backend(const char* op, Device d) {
  check_device(d, op);
  throw Error(op, "no CUDA kernels in this build (CPU-only build)");
}
}  // namespace detail

namespace {
[[noreturn]] void no_cuda(const char* op) {
  throw Error(op, "phasor was built without CUDA (configure with -DPHASOR_CUDA=ON and a CUDA toolkit)");
}
}  // namespace

bool is_built() { return false; }
int device_count() { return 0; }
bool is_available() { return false; }
void synchronize(int) { no_cuda("synchronize"); }
Stream Stream::create(int) { no_cuda("Stream::create"); }
void Stream::synchronize() const { no_cuda("Stream::synchronize"); }
Stream current_stream(int) { no_cuda("current_stream"); }
void set_current_stream(const Stream&) { no_cuda("set_current_stream"); }
bool Stream::query() const { no_cuda("Stream::query"); }
void Stream::wait_stream(const Stream&) const { no_cuda("Stream::wait_stream"); }
Event::~Event() = default;  // never recorded: no CUDA event
void Event::record(const Stream&) { no_cuda("Event.record"); }
void Event::record() { no_cuda("Event.record"); }
void Event::wait(const Stream&) const { no_cuda("Event.wait"); }
void Event::wait() const { no_cuda("Event.wait"); }
bool Event::query() const { return true; }
void Event::synchronize() const {}
float Event::elapsed_time(const Event& end) const {
  check_elapsed(*this, end);  // throws: neither was recorded
  return 0;
}

#endif

namespace {
std::atomic<bool> g_allow_tf32{false};
}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

}  // namespace cuda
}  // namespace phasor
