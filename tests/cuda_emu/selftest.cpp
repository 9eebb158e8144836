// tests/cuda_emu/selftest.cpp - the host CUDA emulator's own tests (Note [CUDA emulation]): that it catches
// what it promises to catch, through the CUDA runtime, cuFFT, cuBLAS and cuSOLVER calls alone (no phasor).
#include "device_prelude.hpp"  // first: it defines __shared__ before the toolkit's headers do

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" void phasor_emu_fail_next(const char* call, int status);  // emu.hpp

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

namespace {

/// Device buffer of n elements of T (freed at scope end).
template <class T>
struct DeviceArray {
  T* p = nullptr;
  explicit DeviceArray(std::size_t n) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T)) == cudaSuccess);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p); }
};

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> h(n);
  REQUIRE(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

template <class T>
void to_device(T* d, const std::vector<T>& h) {
  REQUIRE(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
}

/// The device array of device pointers the batched calls take: `ptrs`, built on the host and copied over.
template <class T>
struct PointerArray : DeviceArray<T*> {
  explicit PointerArray(const std::vector<T*>& ptrs) : DeviceArray<T*>(ptrs.size()) { to_device(this->p, ptrs); }
  /// base, base + stride, ... (count of them)
  PointerArray(T* base, std::size_t stride, int count) : PointerArray(strided(base, stride, count)) {}
  static std::vector<T*> strided(T* base, std::size_t stride, int count) {
    std::vector<T*> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = base + static_cast<std::size_t>(i) * stride;
    return v;
  }
};

template <class S>
S conj_if(S v, bool c) {
  if constexpr (std::is_floating_point_v<S>) return v;
  else return c ? std::conj(v) : v;
}

/// max |op(A) X - B| over the n x nrhs entries (op 'N', 'T' or 'C'; column-major, leading dimensions lda, ldx, ldb).
template <class S>
double solve_residual(char op, int n, int nrhs, const S* a, int lda, const S* x, int ldx, const S* b, int ldb) {
  double err = 0;
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      S s = 0;
      for (int k = 0; k < n; ++k)
        s += (op == 'N' ? a[i + k * lda] : conj_if(a[k + i * lda], op == 'C')) * x[k + j * ldx];
      err = std::max(err, static_cast<double>(std::abs(s - b[i + j * ldb])));
    }
  return err;
}

/// Whether every pivot of the n * batch lies in [1, n].
bool pivots_in_range(const std::vector<int>& piv, int n) {
  return std::all_of(piv.begin(), piv.end(), [n](int p) { return p >= 1 && p <= n; });
}

}  // namespace

TEST_CASE("emu: cuBLAS getrfBatched + getrsBatched solve op(A) X = B; singular matrices, bad pointers, bad arguments") {
  const int n = 4, lda = 5, nrhs = 2, ldb = 4, batch = 3;
  const std::size_t sa = static_cast<std::size_t>(lda) * n, sb = static_cast<std::size_t>(ldb) * nrhs;
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(sa * batch), b(sb * batch);
  for (auto& v : a) v = u(g);  // the padding row of each column too: it must come back untouched
  for (auto& v : b) v = u(g);
  DeviceArray<double> da(a.size()), db(b.size());
  DeviceArray<int> piv(static_cast<std::size_t>(n) * batch), info(batch);
  PointerArray<double> pa(da.p, sa, batch), pb(db.p, sb, batch);
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  for (const cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    to_device(da.p, a);
    to_device(db.p, b);
    REQUIRE(cublasDgetrfBatched(h, n, pa.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_SUCCESS);
    int hinfo = -99;
    REQUIRE(cublasDgetrsBatched(h, op, n, nrhs, pa.p, lda, piv.p, pb.p, ldb, &hinfo, batch) == CUBLAS_STATUS_SUCCESS);
    CHECK(hinfo == 0);
    CHECK(to_host(info.p, batch) == std::vector<int>(batch, 0));
    CHECK(pivots_in_range(to_host(piv.p, static_cast<std::size_t>(n) * batch), n));
    const std::vector<double> lu = to_host(da.p, a.size()), x = to_host(db.p, b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      if (i % lda == static_cast<std::size_t>(n)) CHECK(lu[i] == a[i]);  // padding rows untouched
    for (int i = 0; i < batch; ++i)
      CHECK(solve_residual(op == CUBLAS_OP_N ? 'N' : 'T', n, nrhs, a.data() + i * sa, lda, x.data() + i * sb, ldb,
                           b.data() + i * sb, ldb) < 1e-10);
  }
  // column 3 of matrix 1 zero: U(3,3) is exactly zero, info 3 in its slot
  std::vector<double> singular = a;
  for (int r = 0; r < n; ++r) singular[sa + 2 * lda + r] = 0;
  to_device(da.p, singular);
  REQUIRE(cublasDgetrfBatched(h, n, pa.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_SUCCESS);
  CHECK(to_host(info.p, batch) == std::vector<int>{0, 3, 0});
  // a matrix pointer outside its allocation, read when the work runs: reported, that matrix skipped
  {
    DeviceArray<double> small(n * n - 1);
    PointerArray<double> bad({da.p, small.p, da.p + 2 * sa});
    to_device(da.p, a);
    to_device(info.p, std::vector<int>(batch, 77));
    REQUIRE(cublasDgetrfBatched(h, n, bad.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_SUCCESS);
    CHECK(to_host(info.p, batch) == std::vector<int>{0, 77, 0});
  }
  // no pivot array: LU without pivoting, L U = A for a diagonally dominant matrix
  {
    std::vector<double> d(sa);
    for (std::size_t i = 0; i < sa; ++i) d[i] = u(g) + (i % lda == i / lda ? 8.0 : 0.0);
    DeviceArray<double> dd(sa);
    PointerArray<double> pd({dd.p});
    to_device(dd.p, d);
    REQUIRE(cublasDgetrfBatched(h, n, pd.p, lda, nullptr, info.p, 1) == CUBLAS_STATUS_SUCCESS);
    CHECK(to_host(info.p, 1)[0] == 0);
    const std::vector<double> lu = to_host(dd.p, sa);
    double err = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k <= std::min(i, j); ++k) s += (k == i ? 1.0 : lu[i + k * lda]) * lu[k + j * lda];
        err = std::max(err, std::abs(s - d[i + j * lda]));
      }
    CHECK(err < 1e-12);
  }
  // bad arguments: INVALID_VALUE, and getrs's host info names the argument (not counting the handle)
  CHECK(cublasDgetrfBatched(h, n, pa.p, n - 1, piv.p, info.p, batch) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasDgetrfBatched(h, -1, pa.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_INVALID_VALUE);
  int hinfo = 0;
  CHECK(cublasDgetrsBatched(h, CUBLAS_OP_N, n, nrhs, pa.p, n - 1, piv.p, pb.p, ldb, &hinfo, batch) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(hinfo == -5);
  CHECK(cublasDgetrsBatched(h, CUBLAS_OP_N, n, nrhs, pa.p, lda, piv.p, pb.p, n - 1, &hinfo, batch) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(hinfo == -8);
  CHECK(cublasDgetrsBatched(h, CUBLAS_OP_N, -1, nrhs, pa.p, lda, piv.p, pb.p, ldb, &hinfo, batch) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(hinfo == -2);
  // zero-size problems succeed without touching anything
  CHECK(cublasDgetrfBatched(h, 0, nullptr, 1, nullptr, nullptr, batch) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasDgetrsBatched(h, CUBLAS_OP_N, n, 0, pa.p, lda, piv.p, nullptr, ldb, &hinfo, batch) ==
        CUBLAS_STATUS_SUCCESS);
  CHECK(hinfo == 0);
  // a failure on request
  phasor_emu_fail_next("cublasDgetrfBatched", CUBLAS_STATUS_EXECUTION_FAILED);
  CHECK(cublasDgetrfBatched(h, n, pa.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_EXECUTION_FAILED);
  REQUIRE(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasDgetrfBatched(h, n, pa.p, lda, piv.p, info.p, batch) == CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST_CASE("emu: cuBLAS getrfBatched + getrsBatched in complex64, op N and C") {
  using C = std::complex<float>;
  const int n = 3, nrhs = 2, batch = 2;
  const std::size_t sa = n * n, sb = n * nrhs;
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<C> a(sa * batch), b(sb * batch);
  for (auto& v : a) v = {u(g), u(g)};
  for (auto& v : b) v = {u(g), u(g)};
  DeviceArray<cuComplex> da(a.size()), db(b.size());
  DeviceArray<int> piv(n * batch), info(batch);
  PointerArray<cuComplex> pa(da.p, sa, batch), pb(db.p, sb, batch);
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  for (const cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_C}) {
    REQUIRE(cudaMemcpy(da.p, a.data(), a.size() * sizeof(C), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(db.p, b.data(), b.size() * sizeof(C), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cublasCgetrfBatched(h, n, pa.p, n, piv.p, info.p, batch) == CUBLAS_STATUS_SUCCESS);
    int hinfo = -99;
    REQUIRE(cublasCgetrsBatched(h, op, n, nrhs, pa.p, n, piv.p, pb.p, n, &hinfo, batch) == CUBLAS_STATUS_SUCCESS);
    CHECK(hinfo == 0);
    CHECK(to_host(info.p, batch) == std::vector<int>(batch, 0));
    std::vector<C> x(b.size());
    REQUIRE(cudaMemcpy(x.data(), db.p, x.size() * sizeof(C), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < batch; ++i)
      CHECK(solve_residual(op == CUBLAS_OP_N ? 'N' : 'C', n, nrhs, a.data() + i * sa, n, x.data() + i * sb, n,
                           b.data() + i * sb, n) < 1e-4);
  }
  REQUIRE(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
}

TEST_CASE("emu: cusolverDnDgetrf factors for getrsBatched; its workspace is what getrf_bufferSize says") {
  const int n = 5, lda = 6, nrhs = 3;
  std::mt19937 g(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(static_cast<std::size_t>(lda) * n), b(static_cast<std::size_t>(n) * nrhs);
  for (auto& v : a) v = u(g);
  for (auto& v : b) v = u(g);
  DeviceArray<double> da(a.size()), db(b.size());
  DeviceArray<int> piv(n), info(1);
  cusolverDnHandle_t s;
  REQUIRE(cusolverDnCreate(&s) == CUSOLVER_STATUS_SUCCESS);
  int lwork = 0;
  REQUIRE(cusolverDnDgetrf_bufferSize(s, n, n, da.p, lda, &lwork) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(lwork >= 2);
  DeviceArray<double> work(lwork);
  {
    DeviceArray<double> short_work(lwork - 1);
    CHECK(cusolverDnDgetrf(s, n, n, da.p, lda, short_work.p, piv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE);
  }
  to_device(da.p, a);
  to_device(db.p, b);
  REQUIRE(cusolverDnDgetrf(s, n, n, da.p, lda, work.p, piv.p, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(to_host(info.p, 1)[0] == 0);
  CHECK(pivots_in_range(to_host(piv.p, n), n));
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  PointerArray<double> pa({da.p}), pb({db.p});
  int hinfo = -99;
  REQUIRE(cublasDgetrsBatched(h, CUBLAS_OP_N, n, nrhs, pa.p, lda, piv.p, pb.p, n, &hinfo, 1) == CUBLAS_STATUS_SUCCESS);
  CHECK(hinfo == 0);
  CHECK(solve_residual('N', n, nrhs, a.data(), lda, to_host(db.p, b.size()).data(), n, b.data(), n) < 1e-10);
  // pivots that are not getrf's (fresh memory: -1) are reported and the matrix skipped
  {
    DeviceArray<int> garbage(n);
    to_device(db.p, b);
    REQUIRE(cublasDgetrsBatched(h, CUBLAS_OP_N, n, nrhs, pa.p, lda, garbage.p, pb.p, n, &hinfo, 1) ==
            CUBLAS_STATUS_SUCCESS);
    CHECK(to_host(db.p, b.size()) == b);
  }
  // singular: column 2 zero gives info 2
  std::vector<double> singular = a;
  for (int r = 0; r < n; ++r) singular[lda + r] = 0;
  to_device(da.p, singular);
  REQUIRE(cusolverDnDgetrf(s, n, n, da.p, lda, work.p, piv.p, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(to_host(info.p, 1)[0] == 2);
  // rectangular m > n
  to_device(da.p, a);
  REQUIRE(cusolverDnDgetrf(s, lda, n - 1, da.p, lda, work.p, piv.p, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(to_host(info.p, 1)[0] == 0);
  CHECK(cusolverDnDgetrf(s, n, n, da.p, n - 1, work.p, piv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE);  // lda < m
  CHECK(cusolverDnDgetrf_bufferSize(s, n, n, da.p, n - 1, &lwork) == CUSOLVER_STATUS_INVALID_VALUE);
  phasor_emu_fail_next("cusolverDnDgetrf", CUSOLVER_STATUS_INTERNAL_ERROR);
  CHECK(cusolverDnDgetrf(s, n, n, da.p, lda, work.p, piv.p, info.p) == CUSOLVER_STATUS_INTERNAL_ERROR);
  REQUIRE(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cusolverDnDestroy(s) == CUSOLVER_STATUS_SUCCESS);
  CHECK(cusolverDnDestroy(s) == CUSOLVER_STATUS_NOT_INITIALIZED);
}

TEST_CASE("emu: cuSOLVER potrfBatched and potrf: Cholesky in the uplo triangle only; info k when not definite") {
  const int n = 4, batch = 2;
  const std::size_t sa = n * n;
  std::mt19937 g(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(sa * batch);  // A = M M^T + n I, symmetric positive definite
  for (int i = 0; i < batch; ++i) {
    std::vector<double> m(sa);
    for (auto& v : m) v = u(g);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        double s = r == c ? n : 0;
        for (int k = 0; k < n; ++k) s += m[r + k * n] * m[c + k * n];
        a[i * sa + r + c * n] = s;
      }
  }
  DeviceArray<double> da(a.size());
  DeviceArray<int> info(batch);
  PointerArray<double> pa(da.p, sa, batch);
  cusolverDnHandle_t s;
  REQUIRE(cusolverDnCreate(&s) == CUSOLVER_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cusolverDnSetStream(s, stream) == CUSOLVER_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  REQUIRE(cusolverDnGetStream(s, &got) == CUSOLVER_STATUS_SUCCESS);
  CHECK(got == stream);
  /// max |F^H F - A| (upper) or |F F^H - A| (lower) of matrix i, F the factor in that triangle; the other
  /// triangle must be A's, untouched
  const auto check_factor = [&](const std::vector<double>& f, int i, bool lower) {
    const double* fa = f.data() + i * sa;
    const double* aa = a.data() + i * sa;
    const auto tri = [&](int r, int c) { return (lower ? r >= c : r <= c) ? fa[r + c * n] : 0.0; };
    double err = 0;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        double s = 0;
        for (int k = 0; k < n; ++k) s += lower ? tri(r, k) * tri(c, k) : tri(k, r) * tri(k, c);
        err = std::max(err, std::abs(s - aa[r + c * n]));
        if (lower ? r < c : r > c) CHECK(fa[r + c * n] == aa[r + c * n]);
      }
    CHECK(err < 1e-12);
  };
  for (const bool lower : {true, false}) {
    const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    to_device(da.p, a);
    REQUIRE(cusolverDnDpotrfBatched(s, uplo, n, pa.p, n, info.p, batch) == CUSOLVER_STATUS_SUCCESS);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(to_host(info.p, batch) == std::vector<int>(batch, 0));
    const std::vector<double> f = to_host(da.p, a.size());
    for (int i = 0; i < batch; ++i) check_factor(f, i, lower);
  }
  // not positive definite: the identity with -1 at (3,3) has info 3
  std::vector<double> indefinite = a;
  for (std::size_t k = 0; k < sa; ++k) indefinite[sa + k] = k % (n + 1) == 0 ? 1.0 : 0.0;
  indefinite[sa + 2 * (n + 1)] = -1;
  to_device(da.p, indefinite);
  REQUIRE(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n, info.p, batch) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(to_host(info.p, batch) == std::vector<int>{0, 3});
  // bad arguments
  CHECK(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n - 1, info.p, batch) ==
        CUSOLVER_STATUS_INVALID_VALUE);
  CHECK(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_FULL, n, pa.p, n, info.p, batch) == CUSOLVER_STATUS_INVALID_VALUE);
  CHECK(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n, info.p, -1) == CUSOLVER_STATUS_INVALID_VALUE);
  // a failure on request: the next call fails and does nothing, the one after works
  to_device(da.p, a);
  phasor_emu_fail_next("cusolverDnDpotrfBatched", CUSOLVER_STATUS_EXECUTION_FAILED);
  CHECK(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n, info.p, batch) ==
        CUSOLVER_STATUS_EXECUTION_FAILED);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(to_host(da.p, a.size()) == a);
  REQUIRE(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n, info.p, batch) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  check_factor(to_host(da.p, a.size()), 1, true);
  // potrf of one matrix, with the workspace potrf_bufferSize asks for
  to_device(da.p, a);
  int lwork = 0;
  REQUIRE(cusolverDnDpotrf_bufferSize(s, CUBLAS_FILL_MODE_UPPER, n, da.p, n, &lwork) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(lwork >= 1);
  DeviceArray<double> work(lwork);
  CHECK(cusolverDnDpotrf(s, CUBLAS_FILL_MODE_UPPER, n, da.p, n, work.p, lwork - 1, info.p) ==
        CUSOLVER_STATUS_INVALID_VALUE);
  REQUIRE(cusolverDnDpotrf(s, CUBLAS_FILL_MODE_UPPER, n, da.p, n, work.p, lwork, info.p) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(to_host(info.p, 1)[0] == 0);
  check_factor(to_host(da.p, a.size()), 0, false);
  // another device's stream, or the handle used while another device is current
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  if (devices >= 2) {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    cudaStream_t other = nullptr;
    REQUIRE(cudaStreamCreate(&other) == cudaSuccess);
    CHECK(cusolverDnDpotrfBatched(s, CUBLAS_FILL_MODE_LOWER, n, pa.p, n, info.p, batch) ==
          CUSOLVER_STATUS_EXECUTION_FAILED);
    CHECK(cusolverDnSetStream(s, other) == CUSOLVER_STATUS_INVALID_VALUE);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
  }
  REQUIRE(cusolverDnDestroy(s) == CUSOLVER_STATUS_SUCCESS);
}

TEST_CASE("emu: cuBLAS trsmBatched solves with the triangle it names, on the left and on the right") {
  const int m = 3, n = 4, batch = 2, ldb = m + 1;
  const double alpha = 2;
  const double nan = std::nan("");
  std::mt19937 g(9);
  std::uniform_real_distribution<double> u(-1, 1);
  struct Case {
    cublasSideMode_t side;
    cublasFillMode_t uplo;
    cublasOperation_t op;
    cublasDiagType_t diag;
  };
  cublasHandle_t h;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  for (const Case& c : {Case{CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT},
                        Case{CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT},
                        Case{CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT},
                        Case{CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT}}) {
    const bool left = c.side == CUBLAS_SIDE_LEFT, lower = c.uplo == CUBLAS_FILL_MODE_LOWER;
    const bool unit = c.diag == CUBLAS_DIAG_UNIT;
    const int k = left ? m : n, lda = k + 1;
    const std::size_t sa = static_cast<std::size_t>(lda) * k, sb = static_cast<std::size_t>(ldb) * n;
    // the triangle's entries; NaN where the call must not read (the other triangle, a unit diagonal, padding)
    std::vector<double> a(sa * batch), b(sb * batch);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const int r = static_cast<int>(i % sa % lda), col = static_cast<int>(i % sa / lda);
      const bool in = r < k && (lower ? r >= col : r <= col) && !(unit && r == col);
      a[i] = !in ? nan : r == col ? 2 + u(g) : u(g);
    }
    for (auto& v : b) v = u(g);
    DeviceArray<double> da(a.size()), db(b.size());
    to_device(da.p, a);
    to_device(db.p, b);
    PointerArray<double> pa(da.p, sa, batch), pb(db.p, sb, batch);
    REQUIRE(cublasDtrsmBatched(h, c.side, c.uplo, c.op, c.diag, m, n, &alpha, pa.p, lda, pb.p, ldb, batch) ==
            CUBLAS_STATUS_SUCCESS);
    const std::vector<double> x = to_host(db.p, b.size());
    for (int i = 0; i < batch; ++i) {
      // op(T) as a dense k x k matrix, T the triangle with its diagonal
      const auto t = [&](int r, int col) {
        if (c.op != CUBLAS_OP_N) std::swap(r, col);
        if (lower ? r < col : r > col) return 0.0;
        return r == col && unit ? 1.0 : a[i * sa + r + col * lda];
      };
      double err = 0;
      for (int r = 0; r < m; ++r)
        for (int col = 0; col < n; ++col) {
          double s = 0;
          if (left)
            for (int p = 0; p < m; ++p) s += t(r, p) * x[i * sb + p + col * ldb];
          else
            for (int p = 0; p < n; ++p) s += x[i * sb + r + p * ldb] * t(p, col);
          err = std::max(err, std::abs(s - alpha * b[i * sb + r + col * ldb]));
        }
      CHECK(err < 1e-12);
      for (int col = 0; col < n; ++col) CHECK(x[i * sb + m + col * ldb] == b[i * sb + m + col * ldb]);  // padding
    }
    CHECK(cublasDtrsmBatched(h, c.side, c.uplo, c.op, c.diag, m, n, &alpha, pa.p, k - 1, pb.p, ldb, batch) ==
          CUBLAS_STATUS_INVALID_VALUE);
  }
  REQUIRE(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
}

namespace {

/// The CUDA element type of S (cuComplex for std::complex<float>, ...) and a device pointer's cast to it.
template <class S>
struct CudaOf {
  using type = S;
};
template <>
struct CudaOf<std::complex<float>> {
  using type = cuComplex;
};
template <>
struct CudaOf<std::complex<double>> {
  using type = cuDoubleComplex;
};
template <class S>
typename CudaOf<S>::type* cu(S* p) {
  return reinterpret_cast<typename CudaOf<S>::type*>(p);
}

template <class S>
using RealOf = decltype(std::abs(S{}));

/// A column-major rows x cols matrix of uniform entries in [-1, 1] (real and imaginary parts), leading dimension ld;
/// the padding rows are `pad`.
template <class S>
std::vector<S> random_matrix(int rows, int cols, int ld, std::mt19937& g, S pad = S(0)) {
  std::uniform_real_distribution<RealOf<S>> u(-1, 1);
  std::vector<S> a(static_cast<std::size_t>(ld) * cols, pad);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) {
      S& v = a[r + static_cast<std::size_t>(c) * ld];
      if constexpr (std::is_floating_point_v<S>)
        v = u(g);
      else
        v = S(u(g), u(g));
    }
  return a;
}

/// op(A) B for column-major A (op: A^H when `adjoint`, then A is k x m) and B (k x n): m x n, leading dimension m.
template <class S>
std::vector<S> product(bool adjoint, int m, int k, int n, const S* a, int lda, const S* b, int ldb) {
  std::vector<S> c(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      S s = 0;
      for (int p = 0; p < k; ++p)
        s += (adjoint ? conj_if(a[p + static_cast<std::size_t>(i) * lda], true)
                      : a[i + static_cast<std::size_t>(p) * lda]) *
             b[p + static_cast<std::size_t>(j) * ldb];
      c[i + static_cast<std::size_t>(j) * m] = s;
    }
  return c;
}

/// max |X - Y| over the rows x cols entries (leading dimensions ldx, ldy).
template <class S>
double max_diff(int rows, int cols, const S* x, int ldx, const S* y, int ldy) {
  double e = 0;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      e = std::max(e, static_cast<double>(std::abs(x[i + static_cast<std::size_t>(j) * ldx] -
                                                   y[i + static_cast<std::size_t>(j) * ldy])));
  return e;
}

/// max |Q^H Q - I| for the m x c column-major Q (leading dimension ld).
template <class S>
double orthonormality(int m, int c, const S* q, int ld) {
  const std::vector<S> g = product(true, c, m, c, q, ld, q, ld);
  double e = 0;
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < c; ++i)
      e = std::max(e, static_cast<double>(std::abs(g[i + static_cast<std::size_t>(j) * c] - S(i == j ? 1 : 0))));
  return e;
}

template <class S>
struct QrCalls;
template <>
struct QrCalls<double> {
  static constexpr auto geqrf_size = cusolverDnDgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnDgeqrf;
  static constexpr auto orgqr_size = cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnDorgqr;
};
template <>
struct QrCalls<std::complex<float>> {
  static constexpr auto geqrf_size = cusolverDnCgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnCgeqrf;
  static constexpr auto orgqr_size = cusolverDnCungqr_bufferSize;
  static constexpr auto orgqr = cusolverDnCungqr;
};

/// geqrf of an m x n matrix (leading dimension m + 1), then orgqr's reduced (m x k) and complete (m x m) Q: both
/// orthonormal, Q R = A, the padding rows untouched.
template <class S>
void check_qr(cusolverDnHandle_t s, int m, int n, double tol) {
  using C = QrCalls<S>;
  const int lda = m + 1, k = std::min(m, n);
  std::mt19937 g(static_cast<unsigned>(11 * m + n));
  const std::vector<S> a = random_matrix<S>(m, n, lda, g, S(7));
  DeviceArray<S> da(a.size()), tau(static_cast<std::size_t>(k));
  DeviceArray<int> info(1);
  to_device(da.p, a);
  int lwork = 0;
  REQUIRE(C::geqrf_size(s, m, n, cu(da.p), lda, &lwork) == CUSOLVER_STATUS_SUCCESS);
  DeviceArray<S> work(static_cast<std::size_t>(lwork));
  CHECK(C::geqrf(s, m, n, cu(da.p), lda, cu(tau.p), cu(work.p), lwork - 1, info.p) == CUSOLVER_STATUS_INVALID_VALUE);
  REQUIRE(C::geqrf(s, m, n, cu(da.p), lda, cu(tau.p), cu(work.p), lwork, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(to_host(info.p, 1)[0] == 0);
  const std::vector<S> f = to_host(da.p, a.size());
  for (int c = 0; c < n; ++c) CHECK(f[m + static_cast<std::size_t>(c) * lda] == S(7));  // padding
  std::vector<S> r(static_cast<std::size_t>(k) * n, S(0));                              // R: k x n, upper-trapezoidal
  for (int c = 0; c < n; ++c)
    for (int i = 0; i <= std::min(c, k - 1); ++i)
      r[i + static_cast<std::size_t>(c) * k] = f[i + static_cast<std::size_t>(c) * lda];
  for (const int cols : {k, m}) {
    CAPTURE(cols);
    std::vector<S> q0(static_cast<std::size_t>(lda) * cols, S(7));  // the reflectors in the first k columns
    std::copy(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(lda) * k, q0.begin());
    DeviceArray<S> dq(q0.size());
    to_device(dq.p, q0);
    int qwork = 0;
    REQUIRE(C::orgqr_size(s, m, cols, k, cu(dq.p), lda, cu(tau.p), &qwork) == CUSOLVER_STATUS_SUCCESS);
    DeviceArray<S> w2(static_cast<std::size_t>(qwork));
    CHECK(C::orgqr(s, m, cols, k, cu(dq.p), lda, cu(tau.p), cu(w2.p), qwork - 1, info.p) ==
          CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(C::orgqr(s, m, cols, cols + 1, cu(dq.p), lda, cu(tau.p), cu(w2.p), qwork, info.p) ==
          CUSOLVER_STATUS_INVALID_VALUE);  // k > n
    REQUIRE(C::orgqr(s, m, cols, k, cu(dq.p), lda, cu(tau.p), cu(w2.p), qwork, info.p) == CUSOLVER_STATUS_SUCCESS);
    CHECK(to_host(info.p, 1)[0] == 0);
    const std::vector<S> q = to_host(dq.p, q0.size());
    CHECK(orthonormality(m, cols, q.data(), lda) < tol);
    const std::vector<S> qr = product(false, m, k, n, q.data(), lda, r.data(), k);
    CHECK(max_diff(m, n, qr.data(), m, a.data(), lda) < tol);
  }
}

template <class S>
struct EigCalls;
template <>
struct EigCalls<double> {
  static constexpr auto size = cusolverDnDsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnDsyevd;
  static constexpr auto batched_size = cusolverDnDsyevjBatched_bufferSize;
  static constexpr auto batched = cusolverDnDsyevjBatched;
};
template <>
struct EigCalls<std::complex<double>> {
  static constexpr auto size = cusolverDnZheevd_bufferSize;
  static constexpr auto syevd = cusolverDnZheevd;
  static constexpr auto batched_size = cusolverDnZheevjBatched_bufferSize;
  static constexpr auto batched = cusolverDnZheevjBatched;
};

/// `batch` random Hermitian n x n matrices (packed); the triangle not `lower` (strictly) is NaN in `h`, the
/// Hermitian whole in `full`.
template <class S>
void random_hermitian(int n, int batch, bool lower, std::mt19937& g, std::vector<S>& full, std::vector<S>& h) {
  const std::size_t sa = static_cast<std::size_t>(n) * n;
  full = random_matrix<S>(n, n * batch, n, g);
  h = full;
  const S nan = S(std::numeric_limits<RealOf<S>>::quiet_NaN());
  for (int b = 0; b < batch; ++b)
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < n; ++r) {
        S& x = full[b * sa + r + static_cast<std::size_t>(c) * n];
        if (r == c)
          x = std::real(x);
        else if (r < c)
          x = conj_if(full[b * sa + c + static_cast<std::size_t>(r) * n], true);
        if (lower ? r < c : r > c)
          h[b * sa + r + static_cast<std::size_t>(c) * n] = nan;
        else
          h[b * sa + r + static_cast<std::size_t>(c) * n] = x;
      }
}

/// max |A V - V diag(w)| of an n x n A and its eigenpairs, and whether w ascends.
template <class S>
double eigen_residual(int n, const S* a, const S* v, const RealOf<S>* w, bool& ascending) {
  const std::vector<S> av = product(false, n, n, n, a, n, v, n);
  double e = 0;
  ascending = true;
  for (int c = 0; c < n; ++c) {
    if (c > 0 && w[c] < w[c - 1]) ascending = false;
    for (int r = 0; r < n; ++r)
      e = std::max(e, static_cast<double>(std::abs(av[r + static_cast<std::size_t>(c) * n] -
                                                   v[r + static_cast<std::size_t>(c) * n] * w[c])));
  }
  return e;
}

/// syevd / heevd and syevjBatched / heevjBatched: the eigenpairs of Hermitian matrices read from one triangle (the
/// other NaN), eigenvalues ascending and the same without vectors.
template <class S>
void check_eigh(cusolverDnHandle_t s, double tol) {
  using C = EigCalls<S>;
  using R = RealOf<S>;
  const int n = 5, batch = 3;
  const std::size_t sa = static_cast<std::size_t>(n) * n;
  std::mt19937 g(21);
  for (const bool lower : {true, false}) {
    CAPTURE(lower);
    const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    std::vector<S> full, h;
    random_hermitian(n, batch, lower, g, full, h);
    DeviceArray<S> da(h.size());
    DeviceArray<R> dw(static_cast<std::size_t>(n) * batch);
    DeviceArray<int> info(batch);
    // one matrix at a time
    int lwork = 0;
    REQUIRE(C::size(s, CUSOLVER_EIG_MODE_VECTOR, uplo, n, cu(da.p), n, dw.p, &lwork) == CUSOLVER_STATUS_SUCCESS);
    DeviceArray<S> work(static_cast<std::size_t>(lwork));
    std::vector<R> values;
    for (const auto jobz : {CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_MODE_NOVECTOR}) {
      to_device(da.p, h);
      CHECK(C::syevd(s, jobz, uplo, n, cu(da.p), n, dw.p, cu(work.p), lwork - 1, info.p) ==
            CUSOLVER_STATUS_INVALID_VALUE);
      REQUIRE(C::syevd(s, jobz, uplo, n, cu(da.p), n, dw.p, cu(work.p), lwork, info.p) == CUSOLVER_STATUS_SUCCESS);
      CHECK(to_host(info.p, 1)[0] == 0);
      const std::vector<R> w = to_host(dw.p, n);
      if (jobz == CUSOLVER_EIG_MODE_VECTOR) {
        const std::vector<S> v = to_host(da.p, sa);
        bool ascending = false;
        CHECK(eigen_residual(n, full.data(), v.data(), w.data(), ascending) < tol);
        CHECK(ascending);
        CHECK(orthonormality(n, n, v.data(), n) < tol);
        values = w;
      } else {
        CHECK(max_diff(n, 1, w.data(), n, values.data(), n) < tol);
      }
    }
    // the batched Jacobi routine
    syevjInfo_t params = nullptr;
    REQUIRE(cusolverDnCreateSyevjInfo(&params) == CUSOLVER_STATUS_SUCCESS);
    REQUIRE(C::batched_size(s, CUSOLVER_EIG_MODE_VECTOR, uplo, n, cu(da.p), n, dw.p, &lwork, params, batch) ==
            CUSOLVER_STATUS_SUCCESS);
    DeviceArray<S> bwork(static_cast<std::size_t>(lwork));
    to_device(da.p, h);
    CHECK(C::batched(s, CUSOLVER_EIG_MODE_VECTOR, uplo, n, cu(da.p), n, dw.p, cu(bwork.p), lwork - 1, info.p, params,
                     batch) == CUSOLVER_STATUS_INVALID_VALUE);
    REQUIRE(C::batched(s, CUSOLVER_EIG_MODE_VECTOR, uplo, n, cu(da.p), n, dw.p, cu(bwork.p), lwork, info.p, params,
                       batch) == CUSOLVER_STATUS_SUCCESS);
    CHECK(to_host(info.p, batch) == std::vector<int>(batch, 0));
    const std::vector<S> v = to_host(da.p, h.size());
    const std::vector<R> w = to_host(dw.p, static_cast<std::size_t>(n) * batch);
    for (int b = 0; b < batch; ++b) {
      bool ascending = false;
      CHECK(eigen_residual(n, full.data() + b * sa, v.data() + b * sa, w.data() + b * n, ascending) < tol);
      CHECK(ascending);
      CHECK(orthonormality(n, n, v.data() + b * sa, n) < tol);
    }
    CHECK(max_diff(n, 1, w.data(), n, values.data(), n) < tol);  // matrix 0 is syevd's
    CHECK(C::batched_size(s, CUSOLVER_EIG_MODE_VECTOR, uplo, 33, cu(da.p), 33, dw.p, &lwork, params, 1) ==
          CUSOLVER_STATUS_INVALID_VALUE);  // n > 32
    REQUIRE(cusolverDnDestroySyevjInfo(params) == CUSOLVER_STATUS_SUCCESS);
    CHECK(C::batched(s, CUSOLVER_EIG_MODE_VECTOR, uplo, n, cu(da.p), n, dw.p, cu(bwork.p), lwork, info.p, params,
                     batch) == CUSOLVER_STATUS_INVALID_VALUE);  // destroyed parameters
  }
}

template <class S>
struct SvdCalls;
template <>
struct SvdCalls<float> {
  static constexpr auto size = cusolverDnSgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnSgesvdj;
  static constexpr auto batched_size = cusolverDnSgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnSgesvdjBatched;
};
template <>
struct SvdCalls<std::complex<double>> {
  static constexpr auto size = cusolverDnZgesvdj_bufferSize;
  static constexpr auto gesvdj = cusolverDnZgesvdj;
  static constexpr auto batched_size = cusolverDnZgesvdjBatched_bufferSize;
  static constexpr auto batched = cusolverDnZgesvdjBatched;
};

/// max |U diag(S) V^H - A| over the m x n A from U's and V's first k columns, and whether S descends and is >= 0.
template <class S>
double svd_residual(int m, int n, const S* a, int lda, const S* u, const RealOf<S>* sv, const S* v, bool& sorted) {
  const int k = std::min(m, n);
  std::vector<S> us(static_cast<std::size_t>(m) * k);
  sorted = true;
  for (int c = 0; c < k; ++c) {
    if (sv[c] < 0 || (c > 0 && sv[c] > sv[c - 1])) sorted = false;
    for (int r = 0; r < m; ++r)
      us[r + static_cast<std::size_t>(c) * m] = u[r + static_cast<std::size_t>(c) * m] * sv[c];
  }
  std::vector<S> vh(static_cast<std::size_t>(k) * n);
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < k; ++r)
      vh[r + static_cast<std::size_t>(c) * k] = conj_if(v[c + static_cast<std::size_t>(r) * n], true);
  const std::vector<S> usv = product(false, m, k, n, us.data(), m, vh.data(), k);
  return max_diff(m, n, usv.data(), m, a, lda);
}

/// gesvdj (economy and full, with and without vectors) and gesvdjBatched of m x n matrices.
template <class S>
void check_svd(cusolverDnHandle_t s, int m, int n, double tol) {
  using C = SvdCalls<S>;
  using R = RealOf<S>;
  const int k = std::min(m, n), batch = 3;
  const std::size_t sa = static_cast<std::size_t>(m) * n;
  std::mt19937 g(static_cast<unsigned>(31 * m + n));
  const std::vector<S> a = random_matrix<S>(m, n * batch, m, g);
  DeviceArray<S> da(a.size()), du(static_cast<std::size_t>(m) * m * batch), dv(static_cast<std::size_t>(n) * n * batch);
  DeviceArray<R> ds(static_cast<std::size_t>(k) * batch);
  DeviceArray<int> info(batch);
  gesvdjInfo_t params = nullptr;
  REQUIRE(cusolverDnCreateGesvdjInfo(&params) == CUSOLVER_STATUS_SUCCESS);
  std::vector<R> values;
  for (const int econ : {1, 0}) {
    CAPTURE(econ);
    const int uc = econ ? k : m, vc = econ ? k : n;
    int lwork = 0;
    REQUIRE(C::size(s, CUSOLVER_EIG_MODE_VECTOR, econ, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, &lwork,
                    params) == CUSOLVER_STATUS_SUCCESS);
    DeviceArray<S> work(static_cast<std::size_t>(lwork));
    to_device(da.p, a);
    CHECK(C::gesvdj(s, CUSOLVER_EIG_MODE_VECTOR, econ, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, cu(work.p),
                    lwork - 1, info.p, params) == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(C::gesvdj(s, CUSOLVER_EIG_MODE_VECTOR, econ, m, n, cu(da.p), m, ds.p, cu(du.p), m - 1, cu(dv.p), n,
                    cu(work.p), lwork, info.p, params) == CUSOLVER_STATUS_INVALID_VALUE);  // ldu < m
    REQUIRE(C::gesvdj(s, CUSOLVER_EIG_MODE_VECTOR, econ, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, cu(work.p),
                      lwork, info.p, params) == CUSOLVER_STATUS_SUCCESS);
    CHECK(to_host(info.p, 1)[0] == 0);
    const std::vector<S> u = to_host(du.p, static_cast<std::size_t>(m) * uc),
                         v = to_host(dv.p, static_cast<std::size_t>(n) * vc);
    const std::vector<R> sv = to_host(ds.p, k);
    bool sorted = false;
    CHECK(svd_residual(m, n, a.data(), m, u.data(), sv.data(), v.data(), sorted) < tol);
    CHECK(sorted);
    CHECK(orthonormality(m, uc, u.data(), m) < tol);
    CHECK(orthonormality(n, vc, v.data(), n) < tol);
    values = sv;
    // without vectors U and V are not referenced
    to_device(da.p, a);
    REQUIRE(C::gesvdj(s, CUSOLVER_EIG_MODE_NOVECTOR, econ, m, n, cu(da.p), m, ds.p, nullptr, m, nullptr, n, cu(work.p),
                      lwork, info.p, params) == CUSOLVER_STATUS_SUCCESS);
    CHECK(max_diff(k, 1, to_host(ds.p, k).data(), k, values.data(), k) < tol);
  }
  // the batched routine: full U and V
  int lwork = 0;
  REQUIRE(C::batched_size(s, CUSOLVER_EIG_MODE_VECTOR, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, &lwork,
                          params, batch) == CUSOLVER_STATUS_SUCCESS);
  DeviceArray<S> work(static_cast<std::size_t>(lwork));
  to_device(da.p, a);
  CHECK(C::batched(s, CUSOLVER_EIG_MODE_VECTOR, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, cu(work.p),
                   lwork - 1, info.p, params, batch) == CUSOLVER_STATUS_INVALID_VALUE);
  REQUIRE(C::batched(s, CUSOLVER_EIG_MODE_VECTOR, m, n, cu(da.p), m, ds.p, cu(du.p), m, cu(dv.p), n, cu(work.p), lwork,
                     info.p, params, batch) == CUSOLVER_STATUS_SUCCESS);
  CHECK(to_host(info.p, batch) == std::vector<int>(batch, 0));
  const std::vector<S> u = to_host(du.p, static_cast<std::size_t>(m) * m * batch),
                       v = to_host(dv.p, static_cast<std::size_t>(n) * n * batch);
  const std::vector<R> sv = to_host(ds.p, static_cast<std::size_t>(k) * batch);
  for (int b = 0; b < batch; ++b) {
    const S* ub = u.data() + static_cast<std::size_t>(b) * m * m;
    const S* vb = v.data() + static_cast<std::size_t>(b) * n * n;
    bool sorted = false;
    CHECK(svd_residual(m, n, a.data() + b * sa, m, ub, sv.data() + b * k, vb, sorted) < tol);
    CHECK(sorted);
    CHECK(orthonormality(m, m, ub, m) < tol);
    CHECK(orthonormality(n, n, vb, n) < tol);
  }
  CHECK(max_diff(k, 1, sv.data(), k, values.data(), k) < tol);  // matrix 0 is gesvdj's
  to_device(da.p, a);
  REQUIRE(C::batched(s, CUSOLVER_EIG_MODE_NOVECTOR, m, n, cu(da.p), m, ds.p, nullptr, m, nullptr, n, cu(work.p), lwork,
                     info.p, params, batch) == CUSOLVER_STATUS_SUCCESS);
  CHECK(max_diff(k * batch, 1, to_host(ds.p, static_cast<std::size_t>(k) * batch).data(), k, sv.data(), k) < tol);
  CHECK(C::batched_size(s, CUSOLVER_EIG_MODE_VECTOR, 33, n, cu(da.p), 33, ds.p, cu(du.p), 33, cu(dv.p), n, &lwork,
                        params, batch) == CUSOLVER_STATUS_INVALID_VALUE);  // m > 32
  REQUIRE(cusolverDnDestroyGesvdjInfo(params) == CUSOLVER_STATUS_SUCCESS);
  CHECK(cusolverDnDestroyGesvdjInfo(params) == CUSOLVER_STATUS_INVALID_VALUE);
}

}  // namespace

TEST_CASE("emu: cuSOLVER geqrf and orgqr / ungqr: Q orthonormal, Q R = A, reduced and complete, tall and wide") {
  cusolverDnHandle_t s;
  REQUIRE(cusolverDnCreate(&s) == CUSOLVER_STATUS_SUCCESS);
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{6, 4}, {3, 5}, {4, 4}}) {
    CAPTURE(m);
    CAPTURE(n);
    check_qr<double>(s, m, n, 1e-12);
    check_qr<std::complex<float>>(s, m, n, 1e-5);
  }
  // zero-size problems queue nothing; bad arguments; a failure on request
  DeviceArray<double> a(16), tau(4), work(16);
  DeviceArray<int> info(1);
  CHECK(cusolverDnDgeqrf(s, 0, 4, a.p, 1, tau.p, work.p, 4, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(cusolverDnDorgqr(s, 4, 0, 0, a.p, 4, tau.p, work.p, 1, info.p) == CUSOLVER_STATUS_SUCCESS);
  CHECK(cusolverDnDgeqrf(s, 4, 4, a.p, 3, tau.p, work.p, 4, info.p) == CUSOLVER_STATUS_INVALID_VALUE);     // lda < m
  CHECK(cusolverDnDorgqr(s, 3, 4, 2, a.p, 4, tau.p, work.p, 4, info.p) == CUSOLVER_STATUS_INVALID_VALUE);  // n > m
  phasor_emu_fail_next("cusolverDnDgeqrf", CUSOLVER_STATUS_INTERNAL_ERROR);
  CHECK(cusolverDnDgeqrf(s, 4, 4, a.p, 4, tau.p, work.p, 4, info.p) == CUSOLVER_STATUS_INTERNAL_ERROR);
  phasor_emu_fail_next("cusolverDnDorgqr", CUSOLVER_STATUS_EXECUTION_FAILED);
  CHECK(cusolverDnDorgqr(s, 4, 4, 4, a.p, 4, tau.p, work.p, 4, info.p) == CUSOLVER_STATUS_EXECUTION_FAILED);
  REQUIRE(cusolverDnDestroy(s) == CUSOLVER_STATUS_SUCCESS);
}

TEST_CASE("emu: cuSOLVER syevd / heevd and syevjBatched / heevjBatched: eigenpairs from one triangle, ascending") {
  cusolverDnHandle_t s;
  REQUIRE(cusolverDnCreate(&s) == CUSOLVER_STATUS_SUCCESS);
  check_eigh<double>(s, 1e-12);
  check_eigh<std::complex<double>>(s, 1e-12);
  DeviceArray<double> a(16), w(4), work(16);
  DeviceArray<int> info(1);
  CHECK(cusolverDnDsyevd(s, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_FULL, 4, a.p, 4, w.p, work.p, 16, info.p) ==
        CUSOLVER_STATUS_INVALID_VALUE);
  CHECK(cusolverDnDsyevd(s, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, 0, a.p, 1, w.p, work.p, 1, info.p) ==
        CUSOLVER_STATUS_SUCCESS);
  phasor_emu_fail_next("cusolverDnDsyevd", CUSOLVER_STATUS_EXECUTION_FAILED);
  CHECK(cusolverDnDsyevd(s, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, 4, a.p, 4, w.p, work.p, 16, info.p) ==
        CUSOLVER_STATUS_EXECUTION_FAILED);
  REQUIRE(cusolverDnDestroy(s) == CUSOLVER_STATUS_SUCCESS);
}

TEST_CASE("emu: cuSOLVER gesvdj and gesvdjBatched: U diag(S) V^H = A with V itself, S descending, economy and full") {
  cusolverDnHandle_t s;
  REQUIRE(cusolverDnCreate(&s) == CUSOLVER_STATUS_SUCCESS);
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{5, 3}, {3, 5}, {4, 4}}) {
    CAPTURE(m);
    CAPTURE(n);
    check_svd<float>(s, m, n, 2e-5);
    check_svd<std::complex<double>>(s, m, n, 1e-12);
  }
  phasor_emu_fail_next("cusolverDnCreateGesvdjInfo", CUSOLVER_STATUS_ALLOC_FAILED);
  gesvdjInfo_t params = nullptr;
  CHECK(cusolverDnCreateGesvdjInfo(&params) == CUSOLVER_STATUS_ALLOC_FAILED);
  REQUIRE(cusolverDnCreateGesvdjInfo(&params) == CUSOLVER_STATUS_SUCCESS);
  DeviceArray<double> a(16), sv(4), work(16);
  DeviceArray<int> info(1);
  CHECK(cusolverDnDgesvdj(s, CUSOLVER_EIG_MODE_NOVECTOR, 2, 4, 4, a.p, 4, sv.p, nullptr, 4, nullptr, 4, work.p, 16,
                          info.p, params) == CUSOLVER_STATUS_INVALID_VALUE);  // econ neither 0 nor 1
  phasor_emu_fail_next("cusolverDnDgesvdj", CUSOLVER_STATUS_EXECUTION_FAILED);
  CHECK(cusolverDnDgesvdj(s, CUSOLVER_EIG_MODE_NOVECTOR, 1, 4, 4, a.p, 4, sv.p, nullptr, 4, nullptr, 4, work.p, 16,
                          info.p, params) == CUSOLVER_STATUS_EXECUTION_FAILED);
  REQUIRE(cusolverDnDestroyGesvdjInfo(params) == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(cusolverDnDestroy(s) == CUSOLVER_STATUS_SUCCESS);
}
