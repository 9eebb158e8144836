// tests/cuda_emu/emu.hpp - the host CUDA emulator's internals shared by its runtime, cuFFT, cuBLAS and cuSOLVER
// parts.
//
// Note [CUDA emulation]
// No GPU is lent to most sessions, so the CUDA backend would otherwise only ever be compiled. An
// emulation build (cmake -DPHASOR_CUDA_EMULATION=ON) compiles the very same src/cuda sources with the
// host compiler and links them against libphasor_cuda_emu, a host implementation of the parts of the
// CUDA runtime, cuFFT, cuBLAS and cuSOLVER that phasor calls, written from their documented semantics. The whole
// test suite then runs its [cuda:0] cases on emulated devices. What it checks, and how:
// - Kernels: every launch runs each thread of the grid on the host, blocks one after another. A
//   block's thread 0 runs first; kernels with __syncthreads run their threads as fibers that meet at
//   each barrier (between barriers the threads run in alternating forward and reverse order, so a
//   read of a neighbour's shared value without a barrier sees a stale value in one of the orders).
//   Launch configurations are checked as the driver does (block <= 1024 threads, grid limits, the
//   stream's device is the current device).
// - Memory: each device's memory is a reserved region, inaccessible (PROT_NONE) except while the
//   emulator itself runs work: host code that dereferences a device pointer faults, and the fault
//   handler names the address. cudaMalloc returns memory filled with 0xFF bytes (NaN floats), so
//   code that reads before writing shows. Copies, memsets, FFTs and GEMMs check that every byte they
//   touch lies inside one live allocation of the right device (use-after-free, overruns, wrong
//   direction or device are reported on stderr and fail with cudaErrorInvalidValue).
// - Streams are queues: work runs only when something waits for it (stream/event/device
//   synchronize, a synchronous copy, cudaFree), so a missing synchronization reads stale data, as it
//   may on a GPU; blocking streams and the legacy default stream order each other as in CUDA.
//   cudaEventQuery on pending work reports cudaErrorNotReady once, then completes it.
// - Stream capture records the work queued on a capturing stream instead of queueing it; a graph launch
//   queues the recorded work as one item. The calls capture prohibits (synchronizations, cudaMalloc and
//   cudaFree outside relaxed mode, copies to or from pageable memory, legacy-stream work that would wait
//   for a capturing blocking stream, waits across the capture's boundary) fail and invalidate the
//   capture, as on a GPU, so code that is not capturable fails in the emulator too.
// - cuFFT through FFTW (plans as documented for cufftMakePlanMany64 with default layouts; c2r leaves
//   its input overwritten, as cuFFT may), cuBLAS GEMMs through CBLAS (column-major, op(A) op(B)), cuBLAS's
//   batched LU and triangular solves and cuSOLVER's LU, Cholesky, QR, Hermitian eigendecomposition and SVD through
//   LAPACK (cusolver.cpp).
// - Failures on demand: phasor_emu_fail_next(call, status) makes the next call of a cuBLAS, cuFFT or cuSOLVER
//   function, or the next kernel launch ("cudaLaunchKernel"), fail with that status, so tests reach the
//   error paths a GPU does not take on demand.
// What it cannot check: real concurrency (threads never overlap, so races between threads of
// different blocks, atomics and the memory model go untested), performance, and numerics of the real
// libraries (accuracy, TF32).
// - Kernels' own accesses, in a build with PHASOR_EMU_SANITIZE=ON: the CUDA backend's sources are
//   compiled with AddressSanitizer and UBSan, and the emulator poisons every device byte no live
//   allocation owns (freed memory, the rounding past a cudaMalloc's requested size, unallocated space),
//   so a kernel reading or writing outside its allocations is reported where it happens, and undefined
//   behaviour in index arithmetic too. Run with PHASOR_NO_CUDA_MEMORY_CACHING=1 (Note [caching device
//   allocator]) each tensor is an allocation of its own, so one element past a tensor's end is caught;
//   with caching on, only accesses past a whole cached segment are.
//
// Knobs (environment): PHASOR_EMU_DEVICES (default 2), PHASOR_EMU_MEMORY_MB per device (default
// 4096), PHASOR_EMU_SMS multiprocessors per device (default 4), PHASOR_EMU_PROTECT=0 leaves device
// memory accessible, PHASOR_EMU_SYNC=1 runs all work at once (no queues), PHASOR_EMU_TRACE_WAITS=1 prints
// a backtrace for every call that makes the host wait for device work, PHASOR_EMU_TRACE_LAUNCHES=1 prints
// every kernel launch (kernel and configuration; phasor_emu_launches() counts them).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

struct cublasContext;  // cublas_api.h's handle type (cublas.cpp defines it)
typedef struct cublasContext* cublasHandle_t;

namespace phasor_emu {

/// The lock every emulated API call holds (recursive: work may wait for other work).
std::recursive_mutex& api_mutex();

/// Number of emulated devices and the calling thread's current device.
int device_count();
int current_device();

/// True when a test asked the next call of the library function `call` ("cublasSgemm", "cufftExecC2C",
/// "cufftMakePlanMany64", ...) to fail (phasor_emu_fail_next); sets `status` to what the call must return and
/// forgets the request.
bool take_failure(const char* call, int& status);

/// Prints "phasor_emu: <message>" on stderr (misuse a GPU would punish, found by a check).
void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// True when [p, p + bytes) lies inside one live allocation of `device` (-1: any device); otherwise
/// reports `what` and why, and returns false.
bool check_device_range(const void* p, std::size_t bytes, int device, const char* what);

/// The device of stream `s` (nullptr and the special handles: the current device), or -1 (reported)
/// for a handle the emulator never made.
int stream_device(cudaStream_t s, const char* what);

/// Queues `work` on stream `s` (it runs when something waits for it); device memory is accessible
/// while it runs. Returns cudaErrorInvalidResourceHandle for an unknown stream.
cudaError_t enqueue(cudaStream_t s, std::function<void()> work);

/// Sets the calling thread's last error (what cudaGetLastError returns) and returns `e`.
cudaError_t fail(cudaError_t e);

/// True when `h` is a live cuBLAS handle (cublas.cpp); sets `device` and `stream` to its device and stream.
bool cublas_handle_info(cublasHandle_t h, int& device, cudaStream_t& stream);

}  // namespace phasor_emu

/// The number of emulated calls so far that blocked the host until device work was done (stream, event
/// and device synchronizations, synchronous copies, cudaFree, cudaFreeHost): a warm training step should
/// make none.
extern "C" std::uint64_t phasor_emu_host_waits(void);
/// Makes the next call of the emulated cuBLAS, cuFFT or cuSOLVER function `call` ("cublasSgemm",
/// "cublasSgemmStridedBatched", "cufftMakePlanMany64", "cufftExecC2C", "cusolverDnDgetrf", ...), or the next kernel launch
/// ("cudaLaunchKernel"), fail with `status` without doing anything: tests of the library's error paths.
/// One request per name; a later one replaces it.
extern "C" void phasor_emu_fail_next(const char* call, int status);
/// The number of kernel launches so far (not counting those a bad configuration refused).
extern "C" std::uint64_t phasor_emu_launches(void);
/// The number of graph launches so far (cudaGraphLaunch calls that queued their graph).
extern "C" std::uint64_t phasor_emu_graph_launches(void);
