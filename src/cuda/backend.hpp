// src/cuda/backend.hpp - what the core (Storage, Tensor::to, memory statistics) needs from the CUDA
// backend, without CUDA types: every build has these functions; a CPU-only build's throw (or report
// no devices).
#pragma once
#include <cstddef>

#include "phasor/device.hpp"

namespace phasor {
namespace cuda {
namespace detail {

/// Throws "[op] device cuda:i does not exist (N CUDA devices)" (or "(CPU-only build)", "(no CUDA
/// driver)", or for cpu:i "(N CPU devices)") unless `d` is an existing CPU or CUDA device.
void check_device(Device d, const char* op);
/// In a CPU-only build: throws what `op` on device `d` gets there (check_device's "[op] device cuda:i
/// does not exist (CPU-only build)"). The CPU-only versions of the CUDA glue end here.
[[noreturn]] void no_cuda_backend(const char* op, Device d);

/// A block of `nbytes` on CUDA `device` from its caching allocator, for the calling thread's current
/// stream (stored in *stream); nullptr for 0 bytes. The device must have passed check_device.
void* device_alloc(std::size_t nbytes, int device, void** stream);
/// Returns a block from device_alloc (never throws: a failure is reported on stderr).
void device_free(void* p, int device) noexcept;
/// memory_stats for a CUDA device.
MemoryStats device_memory_stats(int device);
/// reset_peak_memory_stats for a CUDA device.
void device_reset_peak(int device);
/// empty_cache for a CUDA device.
void device_empty_cache(int device);

/// Copies `bytes` contiguous bytes between devices (host<->device, device<->device), ordered on the
/// current streams: the result is ready for later work on the destination's current stream, and a
/// copy to the CPU has finished when this returns.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes);

/// Waits for the work queued so far on `device`'s current stream (nothing for a CPU device). A tensor made
/// for a process-wide cache is then ready for every stream, not only for the one that made it.
void finish_current_stream(Device device);

/// Sets `bytes` bytes at `dst` on `device` to zero (CUDA: cudaMemsetAsync on the current stream).
void fill_zero(void* dst, Device device, std::size_t bytes);

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
