// src/cuda/runtime.hpp - CUDA runtime helpers for src/cuda/*.cpp: error checks, the device guard and
// per-thread current streams. Only src/cuda includes this header (it pulls in cuda_runtime_api.h);
// the rest of the library talks to the backend through src/cuda/backend.hpp, which is CUDA-free.
#pragma once
#if PHASOR_WITH_CUDA
#include <cuda_runtime_api.h>

namespace phasor {
namespace cuda {
namespace detail {

/// Throws phasor::Error("cuda", "<call> failed: <error name>: <error string>") unless e is cudaSuccess.
void check(cudaError_t e, const char* call);

/// Checks a runtime call, naming the call's source text in the error.
#define PHASOR_CUDA_CHECK(expr) ::phasor::cuda::detail::check((expr), #expr)

/// Makes `device` current for its lifetime, restoring the previous device after.
class DeviceGuard {
 public:
  /// Switches to `device` (no runtime call when it is already current).
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
  int device_ = -1;
};

/// The calling thread's current stream on `device` (nullptr: the legacy default stream).
cudaStream_t current_stream_handle(int device);

/// The current device of the calling thread.
int current_device();
/// `device`, or the current device when it is -1, checked to exist (errors name `op`; without any device
/// the error is cuda:0's).
int checked_device(int device, const char* op);

/// Orders `waiter` (a stream of device wd) after the work queued so far on `producer` (of device pd),
/// through a one-off event: the host does not wait.
void stream_wait(cudaStream_t waiter, int wd, cudaStream_t producer, int pd);

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
#endif
