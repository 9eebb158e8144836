// tests/cuda_emu/selftest.cpp - the host CUDA emulator's own tests (Note [CUDA emulation]): that it catches
// what it promises to catch, through the CUDA runtime, cuFFT and cuBLAS calls alone (no phasor).
#include "device_prelude.hpp"  // first: it defines __shared__ before the toolkit's headers do

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cublas_v2.h>
#include <cufft.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// Device buffer of n floats (freed at scope end).
struct DeviceFloats {
  float* p = nullptr;
  explicit DeviceFloats(std::size_t n) { REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(float)) == cudaSuccess); }
  ~DeviceFloats() { cudaFree(p); }
};

std::vector<float> download(const float* d, std::size_t n) {
  std::vector<float> h(n);
  REQUIRE(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

void upload(float* d, const std::vector<float>& h) {
  REQUIRE(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
}

}  // namespace

TEST_CASE("emu: devices and their attributes") {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(n >= 1);
  CHECK(cudaSetDevice(n) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);  // reading it clears it
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  CHECK(sms > 0);
}

TEST_CASE("emu: fresh device memory reads as NaN, copies round trip") {
  DeviceFloats d(100);
  for (float v : download(d.p, 100)) CHECK(std::isnan(v));
  std::vector<float> h(100);
  for (int i = 0; i < 100; ++i) h[i] = static_cast<float>(i);
  upload(d.p, h);
  CHECK(download(d.p, 100) == h);
}

TEST_CASE("emu: host code that touches device memory crashes") {
  DeviceFloats d(16);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    (void)!freopen("/dev/null", "w", stderr);
    volatile float x = d.p[3];  // a host read of device memory
    (void)x;
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
}

TEST_CASE("emu: copies outside live allocations fail") {
  std::vector<float> h(64, 1.0f);
  float* p = nullptr;
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), 32 * sizeof(float)) == cudaSuccess);
  CHECK(cudaMemcpy(p, h.data(), 33 * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);  // overrun
  CHECK(cudaMemcpy(h.data(), p, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);       // wrong direction
  CHECK(cudaMemcpy(p, h.data(), 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);       // wrong direction
  REQUIRE(cudaFree(p) == cudaSuccess);
  CHECK(cudaMemcpy(p, h.data(), 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);  // use after free
  CHECK(cudaFree(p) == cudaErrorInvalidValue);                                           // double free
  (void)cudaGetLastError();
}

TEST_CASE("emu: streams run their work only when something waits for it") {
  DeviceFloats d(1024);
  upload(d.p, std::vector<float>(1024, 7.0f));
  float* pinned = nullptr;
  REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 1024 * sizeof(float), cudaHostAllocPortable) == cudaSuccess);
  std::fill(pinned, pinned + 1024, 0.0f);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(pinned, d.p, 1024 * sizeof(float), cudaMemcpyDeviceToHost, s) == cudaSuccess);
  REQUIRE(cudaEventRecord(e, s) == cudaSuccess);
  CHECK(pinned[0] == 0.0f);  // not run yet: reading now is the missing-synchronization bug
  CHECK(cudaEventQuery(e) == cudaErrorNotReady);
  CHECK(cudaEventQuery(e) == cudaSuccess);  // the second query completes it
  CHECK(pinned[1023] == 7.0f);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e, e) == cudaErrorInvalidResourceHandle);  // made without timing
  CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
  // so does a stream query
  REQUIRE(cudaMemcpyAsync(d.p, pinned, 4, cudaMemcpyHostToDevice, s) == cudaSuccess);
  CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaStreamQuery(s) == cudaSuccess);
  // a pinned source is read when the copy runs, not when it is queued
  std::fill(pinned, pinned + 1024, 1.0f);
  REQUIRE(cudaMemcpyAsync(d.p, pinned, 1024 * sizeof(float), cudaMemcpyHostToDevice, s) == cudaSuccess);
  std::fill(pinned, pinned + 1024, 2.0f);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(download(d.p, 1024)[5] == 2.0f);
  // the legacy default stream waits for a blocking stream's earlier work
  std::fill(pinned, pinned + 1024, 3.0f);
  REQUIRE(cudaMemcpyAsync(d.p, pinned, 1024 * sizeof(float), cudaMemcpyHostToDevice, s) == cudaSuccess);
  CHECK(download(d.p, 1024)[9] == 3.0f);  // cudaMemcpy on the legacy stream
  // a stream that waits on an event runs the producer's work first
  cudaStream_t s2 = nullptr;
  REQUIRE(cudaStreamCreate(&s2) == cudaSuccess);
  std::fill(pinned, pinned + 1024, 4.0f);
  REQUIRE(cudaMemcpyAsync(d.p, pinned, 1024 * sizeof(float), cudaMemcpyHostToDevice, s) == cudaSuccess);
  REQUIRE(cudaEventRecord(e, s) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(s2, e, 0) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(pinned, d.p, 4 * sizeof(float), cudaMemcpyDeviceToHost, s2) == cudaSuccess);
  std::fill(pinned, pinned + 1024, 5.0f);  // overwritten before either copy ran: the device gets 5
  REQUIRE(cudaStreamSynchronize(s2) == cudaSuccess);
  CHECK(pinned[0] == 5.0f);
  CHECK(download(d.p, 1024)[0] == 5.0f);
  REQUIRE(cudaEventDestroy(e) == cudaSuccess);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
}

namespace {

/// The value thread t of block b writes in launch `salt`.
float value(unsigned t, unsigned b, int salt) { return static_cast<float>(t + 1000 * b + 100000 * salt); }

/// Each thread stores a value in shared memory and reads its right neighbour's, with or without a
/// barrier in between.
void neighbour_kernel(float* out, bool barrier, int salt) {
  __shared__ float sh[256];
  sh[threadIdx.x] = value(threadIdx.x, blockIdx.x, salt);
  if (barrier) __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x];
}

/// Whether every thread of 2 blocks read its neighbour's value.
bool neighbours_read(bool barrier) {
  static int salt = 0;
  ++salt;
  DeviceFloats d(512);
  float* out = d.p;
  const int s = salt;
  phasor_emu::launch(nullptr, dim3(2), dim3(256), 0, nullptr, [=] { neighbour_kernel(out, barrier, s); });
  REQUIRE(cudaGetLastError() == cudaSuccess);
  const std::vector<float> h = download(d.p, 512);
  for (unsigned i = 0; i < 512; ++i)
    if (h[i] != value((i % 256 + 1) % 256, i / 256, s)) return false;
  return true;
}

}  // namespace

TEST_CASE("emu: threads meet at barriers; a missing barrier reads stale shared memory") {
  CHECK(neighbours_read(true));
  CHECK(neighbours_read(true));
  // consecutive launches run the threads in opposite orders: one of them reads before the write
  const bool a = neighbours_read(false), b = neighbours_read(false);
  CHECK_FALSE((a && b));
}

TEST_CASE("emu: bad launch configurations fail as on a GPU") {
  phasor_emu::launch(nullptr, dim3(1), dim3(2048), 0, nullptr, [] {});
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  phasor_emu::launch(nullptr, dim3(0), dim3(32), 0, nullptr, [] {});
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n >= 2) {  // a stream of device 0 while device 1 is current
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    phasor_emu::launch(nullptr, dim3(1), dim3(32), 0, s, [] {});
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
  }
}

TEST_CASE("emu: cuFFT c2c matches a naive DFT; c2r leaves its input overwritten; a missing work area fails") {
  const int n = 12, batch = 3;
  std::vector<std::complex<float>> x(n * batch);
  for (int i = 0; i < n * batch; ++i) x[i] = {std::sin(0.7f * i), std::cos(0.3f * i * i)};
  DeviceFloats in(2 * n * batch), out(2 * n * batch), work(4096);
  upload(in.p, std::vector<float>(reinterpret_cast<float*>(x.data()), reinterpret_cast<float*>(x.data()) + 2 * n * batch));
  cufftHandle plan;
  REQUIRE(cufftCreate(&plan) == CUFFT_SUCCESS);
  REQUIRE(cufftSetAutoAllocation(plan, 0) == CUFFT_SUCCESS);
  long long len = n;
  std::size_t ws = 0;
  REQUIRE(cufftMakePlanMany64(plan, 1, &len, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, batch, &ws) == CUFFT_SUCCESS);
  auto* ci = reinterpret_cast<cufftComplex*>(in.p);
  auto* co = reinterpret_cast<cufftComplex*>(out.p);
  CHECK(cufftExecC2C(plan, ci, co, CUFFT_FORWARD) == CUFFT_EXEC_FAILED);  // no work area
  REQUIRE(ws <= 4096 * sizeof(float));
  REQUIRE(cufftSetWorkArea(plan, work.p) == CUFFT_SUCCESS);
  REQUIRE(cufftExecC2C(plan, ci, co, CUFFT_FORWARD) == CUFFT_SUCCESS);
  const std::vector<float> y = download(out.p, 2 * n * batch);
  double err = 0;
  for (int b = 0; b < batch; ++b)
    for (int k = 0; k < n; ++k) {
      std::complex<long double> s = 0;
      for (int j = 0; j < n; ++j)
        s += std::complex<long double>(x[b * n + j]) * std::polar(1.0L, -2.0L * 3.14159265358979323846L * j * k / n);
      err = std::max(err, double(std::abs(s - std::complex<long double>(y[2 * (b * n + k)], y[2 * (b * n + k) + 1]))));
    }
  CHECK(err < 1e-4);
  REQUIRE(cufftDestroy(plan) == CUFFT_SUCCESS);
  // c2r: the complex input (n/2 + 1 per transform) reads as NaN afterwards
  REQUIRE(cufftCreate(&plan) == CUFFT_SUCCESS);
  REQUIRE(cufftMakePlanMany64(plan, 1, &len, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2R, batch, &ws) == CUFFT_SUCCESS);
  REQUIRE(cufftExecC2R(plan, ci, out.p) == CUFFT_SUCCESS);
  CHECK(std::isnan(download(in.p, 1)[0]));
  REQUIRE(cufftDestroy(plan) == CUFFT_SUCCESS);
}

TEST_CASE("emu: cuBLAS gemm is column-major op(A) op(B); bad leading dimensions fail") {
  const int m = 3, n = 2, k = 4;
  std::vector<float> a(m * k), b(k * n);  // A column-major m x k, B given as n x k (used transposed)
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>(i + 1);
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>(2 * i - 3);
  DeviceFloats da(m * k), db(k * n), dc(m * n);
  upload(da.p, a);
  upload(db.p, b);
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  const float one = 1, zero = 0;
  REQUIRE(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, da.p, m, db.p, n, &zero, dc.p, m) ==
          CUBLAS_STATUS_SUCCESS);
  const std::vector<float> c = download(dc.p, m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p) s += a[p * m + i] * b[p * n + j];
      CHECK(c[j * m + i] == s);  // beta = 0: the NaN C was not read
    }
  CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, da.p, m - 1, db.p, k, &zero, dc.p, m) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n + 1, k, &one, da.p, m, db.p, k, &zero, dc.p, m) ==
        CUBLAS_STATUS_INVALID_VALUE);  // B and C overrun their allocations
  REQUIRE(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
}

TEST_CASE("emu: stream capture records work that each graph launch runs; prohibited calls invalidate it") {
  DeviceFloats d(256);
  upload(d.p, std::vector<float>(256, 1.0f));
  float* pinned = nullptr;
  REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 256 * sizeof(float), cudaHostAllocPortable) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureStatus st{};
  REQUIRE(cudaStreamIsCapturing(s, &st) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusActive);
  std::fill(pinned, pinned + 256, 3.0f);
  REQUIRE(cudaMemcpyAsync(d.p, pinned, 256 * sizeof(float), cudaMemcpyHostToDevice, s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(d.p, 0, 4 * sizeof(float), s) == cudaSuccess);
  // work on the legacy stream does not wait for a non-blocking capturing stream: allowed
  CHECK(cudaMemsetAsync(d.p + 100, 0, 4, nullptr) == cudaSuccess);
  // cudaMalloc needs relaxed mode (it is not recorded)
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  void* extra = nullptr;
  CHECK(cudaMalloc(&extra, 512) == cudaSuccess);
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  std::size_t nodes = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
  CHECK(nodes == 2);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(download(d.p, 256)[5] == 1.0f);  // nothing ran at capture
  std::fill(pinned, pinned + 256, 4.0f);  // a pinned source is read when the graph runs
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  auto h = download(d.p, 256);
  CHECK(h[0] == 0.0f);
  CHECK(h[5] == 4.0f);
  upload(d.p, std::vector<float>(256, 1.0f));
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);  // again: the same work
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(download(d.p, 256)[5] == 4.0f);
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(cudaFree(extra) == cudaSuccess);
  // a synchronization during a global capture fails and invalidates it; so does a pageable copy
  std::vector<float> pageable(4, 0.0f);
  for (int k = 0; k < 2; ++k) {
    REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    if (k == 0) CHECK(cudaDeviceSynchronize() == cudaErrorStreamCaptureUnsupported);
    else CHECK(cudaMemcpyAsync(pageable.data(), d.p, 16, cudaMemcpyDeviceToHost, s) == cudaErrorStreamCaptureUnsupported);
    REQUIRE(cudaStreamIsCapturing(s, &st) == cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusInvalidated);
    CHECK(cudaMemsetAsync(d.p, 0, 4, s) == cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
    CHECK(graph == nullptr);
    (void)cudaGetLastError();
  }
  // legacy-stream work while a blocking stream captures would wait for it: refused
  cudaStream_t b = nullptr;
  REQUIRE(cudaStreamCreate(&b) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(b, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(cudaMemsetAsync(d.p, 0, 4, nullptr) == cudaErrorStreamCaptureImplicit);
  CHECK(cudaStreamEndCapture(b, &graph) == cudaErrorStreamCaptureInvalidated);
  (void)cudaGetLastError();
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
}
