// src/cuda/runtime.cpp - devices, streams and error checks of the CUDA runtime; in a CPU-only build the
// public functions report no devices or throw a named error.
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
  if (device < 0) {
    detail::check_device(Device::cuda(0), "synchronize");  // a clear error when there is no device at all
    device = detail::current_device();
  }
  detail::check_device(Device::cuda(device), "synchronize");
  detail::DeviceGuard g(device);
  PHASOR_CUDA_CHECK(cudaDeviceSynchronize());
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
}

Stream current_stream(int device) {
  if (device < 0) {
    detail::check_device(Device::cuda(0), "current_stream");
    device = detail::current_device();
  }
  detail::check_device(Device::cuda(device), "current_stream");
  return Stream::from_native(detail::current_stream_handle(device), device);
}

namespace detail {
void finish_current_stream(Device device) {
  if (!device.is_cuda()) return;
  check_device(device, "finish_current_stream");
  refuse_in_capture(device, "cuda.Graph", "filling a process-wide cache (DFT matrices, constant tables)",
                    "the host would wait for the GPU; run the work once before capturing so the cache is filled");
  DeviceGuard g(device.index);
  PHASOR_CUDA_CHECK(cudaStreamSynchronize(current_stream_handle(device.index)));
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

#endif

namespace {
std::atomic<bool> g_allow_tf32{false};
}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

}  // namespace cuda
}  // namespace phasor
