// src/fft/cufft_backend.cpp - cuFFT execution of the three FFT primitives for CUDA tensors.
//
// Note [cufft backend]
// cuFFT plans take contiguous batches of rank <= 3 transforms (advanced layouts cover one batch
// dim only), so a CUDA transform first brings its transform dims innermost, in order, and makes
// that contiguous (one copy kernel when the dims are not already innermost and contiguous: the
// common last-dim case copies nothing), runs one batched plan per group of at most three dims, and
// permutes the result back (a copy again only when the dims were moved). A multi-group r2c runs
// r2c over the last group, then c2c over the others; c2r the reverse. Plans live in a bounded LRU
// per device keyed by (type, lengths, batch); they are made without their own work area
// (cufftSetAutoAllocation 0) and each execution takes one from the caching device allocator on the
// current stream, so idle plans hold no device memory. A plan's stream and work area are set and
// the execution launched under the plan's lock (cuFFT plans are not safe to share unlocked).
// cuFFT's c2r overwrites its input, so c2r always works on a copy it owns.
#include "fft/cufft_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "cuda/graph.hpp"
#include "phasor/ops.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#endif

namespace phasor::fft::detail {

#if PHASOR_WITH_CUDA
namespace {

const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE: return "CUFFT_NVSHMEM_FAILURE";
    default: return "unknown cufftResult";
  }
}

/// Throws "[fft] <call> failed: <result>" unless r is CUFFT_SUCCESS.
void check(cufftResult r, const char* call) {
  if (r != CUFFT_SUCCESS) throw Error("fft", std::string(call) + " failed: " + cufft_error_name(r) + " (" + std::to_string(int(r)) + ")");
}

struct Key {
  int type = 0;
  std::vector<long long> n;
  long long batch = 0;
  bool operator<(const Key& o) const {
    if (type != o.type) return type < o.type;
    if (batch != o.batch) return batch < o.batch;
    return n < o.n;
  }
};

struct CufftPlan {
  const ::phasor::cuda::detail::CufftApi* api = nullptr;  // set with the handle
  cufftHandle handle = 0;
  std::size_t work = 0;
  int device = 0;
  std::mutex mu;
  /// Destroyed when evicted, cleared, or right after its exec with the cache off: an exec queued on any
  /// stream may still read the plan's device data, and cufftDestroy is not documented to wait for it, so
  /// the device is synchronized first (errors ignored: a destructor must not throw).
  ~CufftPlan() {
    if (!api) return;
    int prev = -1;
    if (cudaGetDevice(&prev) == cudaSuccess && prev != device) (void)cudaSetDevice(device);
    (void)cudaDeviceSynchronize();
    api->cufftDestroy(handle);
    if (prev >= 0 && prev != device) (void)cudaSetDevice(prev);
  }
};

/// One device's plans, most recently used first.
struct DeviceCache {
  std::mutex mu;
  std::list<std::pair<Key, std::shared_ptr<CufftPlan>>> lru;
  std::map<Key, decltype(lru)::iterator> index;
};

std::mutex g_caches_mu;
// never destroyed (as the device pools): cufftDestroy must not run after the CUDA runtime's teardown at exit
std::map<int, std::unique_ptr<DeviceCache>>& g_caches = *new std::map<int, std::unique_ptr<DeviceCache>>();
std::atomic<std::size_t> g_capacity{256};  // as the CPU cache (set_plan_cache_capacity sets both); read unlocked

DeviceCache& cache_of(int device) {
  std::lock_guard<std::mutex> lk(g_caches_mu);
  auto& c = g_caches[device];
  if (!c) c = std::make_unique<DeviceCache>();
  return *c;
}

std::shared_ptr<CufftPlan> plan_for(int device, const Key& key) {
  DeviceCache& c = cache_of(device);
  {
    std::lock_guard<std::mutex> lk(c.mu);
    if (auto it = c.index.find(key); it != c.index.end()) {
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      return it->second->second;
    }
  }
  // making a plan allocates and waits on the device outside any stream: not during a capture
  ::phasor::cuda::detail::refuse_in_capture(Device::cuda(device), "fft", "making a cuFFT plan",
                                            "run the transform once before capturing, so its plan is cached");
  const auto& api = ::phasor::cuda::detail::cufft("fft");
  // a plan's own device data comes from cudaMalloc, outside the caching allocator: when that fails, the
  // cache's free segments are returned and the plan is made once more
  std::shared_ptr<CufftPlan> p;
  for (int attempt = 0;; ++attempt) {
    p = std::make_shared<CufftPlan>();
    p->device = device;
    check(api.cufftCreate(&p->handle), "cufftCreate");
    p->api = &api;
    check(api.cufftSetAutoAllocation(p->handle, 0), "cufftSetAutoAllocation");
    std::vector<long long> n = key.n;
    const cufftResult r = api.cufftMakePlanMany64(p->handle, static_cast<int>(n.size()), n.data(), nullptr, 1, 0,
                                                  nullptr, 1, 0, static_cast<cufftType>(key.type), key.batch, &p->work);
    if (r == CUFFT_ALLOC_FAILED && attempt == 0) {
      ::phasor::cuda::detail::device_empty_cache(device);
      continue;
    }
    check(r, "cufftMakePlanMany64");
    break;
  }
  std::lock_guard<std::mutex> lk(c.mu);
  if (auto it = c.index.find(key); it != c.index.end()) return it->second->second;  // made meanwhile
  if (g_capacity == 0) return p;
  c.lru.emplace_front(key, p);
  c.index[key] = c.lru.begin();
  while (c.lru.size() > g_capacity) {
    c.index.erase(c.lru.back().first);
    c.lru.pop_back();
  }
  return p;
}

/// Runs one batched transform of `n` (innermost, contiguous) from in to out on device's current stream.
void execute(int device, cufftType type, const std::vector<long long>& n, long long batch, void* in, void* out,
             int direction) {
  if (batch == 0) return;
  ::phasor::cuda::detail::DeviceGuard guard(device);
  const std::shared_ptr<CufftPlan> plan = plan_for(device, Key{static_cast<int>(type), n, batch});
  ::phasor::cuda::detail::keep_for_graph(Device::cuda(device), plan);  // a replay executes it again
  const auto& api = *plan->api;
  void* stream = nullptr;
  void* work = plan->work ? ::phasor::cuda::detail::device_alloc(plan->work, device, &stream) : nullptr;
  if (!work) stream = ::phasor::cuda::detail::current_stream_handle(device);
  struct Free {
    void* p;
    int d;
    ~Free() {
      if (p) ::phasor::cuda::detail::device_free(p, d);
    }
  } release{work, device};  // stream-ordered: later work on this stream may reuse it
  std::lock_guard<std::mutex> lk(plan->mu);
  check(api.cufftSetStream(plan->handle, static_cast<cudaStream_t>(stream)), "cufftSetStream");
  if (work) check(api.cufftSetWorkArea(plan->handle, work), "cufftSetWorkArea");
  switch (type) {
    case CUFFT_C2C:
      check(api.cufftExecC2C(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), direction),
            "cufftExecC2C");
      break;
    case CUFFT_Z2Z:
      check(api.cufftExecZ2Z(plan->handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out),
                         direction),
            "cufftExecZ2Z");
      break;
    case CUFFT_R2C:
      check(api.cufftExecR2C(plan->handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)), "cufftExecR2C");
      break;
    case CUFFT_D2Z:
      check(api.cufftExecD2Z(plan->handle, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out)),
            "cufftExecD2Z");
      break;
    case CUFFT_C2R:
      check(api.cufftExecC2R(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)), "cufftExecC2R");
      break;
    case CUFFT_Z2D:
      check(api.cufftExecZ2D(plan->handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out)),
            "cufftExecZ2D");
      break;
  }
}

/// x with `dims` moved innermost in order (contiguous), and the permutation that undoes it.
struct Moved {
  Tensor t;
  Shape undo;
  bool moved = false;  // the dims were not already innermost
  bool copied = false;  // t is a copy made here
};
Moved move_innermost(const Tensor& x, const DimList& dims) {
  const std::int64_t nd = x.dim();
  Shape perm;
  for (std::int64_t d = 0; d < nd; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  for (auto d : dims) perm.push_back(d);
  Moved m;
  for (std::int64_t i = 0; i < nd; ++i) m.moved |= perm[static_cast<std::size_t>(i)] != i;
  Tensor p = m.moved ? x.permute(perm) : x;
  m.copied = !p.is_contiguous();
  m.t = m.copied ? p.contiguous() : p;
  m.undo.assign(static_cast<std::size_t>(nd), 0);
  for (std::int64_t i = 0; i < nd; ++i) m.undo[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = i;
  return m;
}

/// The output, contiguous in x's dim order.
Tensor move_back(const Tensor& out, const Moved& m) { return m.moved ? out.permute(m.undo).contiguous() : out; }

long long product(const std::vector<long long>& v) {
  return std::accumulate(v.begin(), v.end(), 1LL, std::multiplies<long long>());
}

/// The last min(3, n.size()) lengths of n: the group one cuFFT plan transforms.
std::vector<long long> last_group(const std::vector<long long>& n) {
  return std::vector<long long>(n.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, n.size())), n.end());
}

/// The leading transform dims of a tensor of `nd` dims whose last n_total dims are transformed, when
/// the last `g` of them are done.
DimList leading_dims(std::int64_t nd, std::size_t n_total, std::size_t g) {
  DimList d;
  for (std::int64_t i = nd - static_cast<std::int64_t>(n_total); i < nd - static_cast<std::int64_t>(g); ++i) d.push_back(i);
  return d;
}

Tensor c2c_unscaled(const Tensor& x, const DimList& dims, bool forward);

/// c2c over the trailing n.size() dims of the contiguous t, unscaled.
Tensor c2c_trailing(const Tensor& t, const std::vector<long long>& n, bool forward) {
  const bool single = t.dtype() == Dtype::Complex64;
  Tensor out = ::phasor::detail::make_tensor(t.shape(), t.dtype(), t.device());
  const std::vector<long long> g = last_group(n);
  execute(t.device().index, single ? CUFFT_C2C : CUFFT_Z2Z, g, t.numel() / product(g), t.data_ptr(), out.data_ptr(),
          forward ? CUFFT_FORWARD : CUFFT_INVERSE);
  if (n.size() > g.size()) out = c2c_unscaled(out, leading_dims(out.dim(), n.size(), g.size()), forward);
  return out;
}

/// c2c over `dims` of x (any layout), unscaled, contiguous in x's dim order.
Tensor c2c_unscaled(const Tensor& x, const DimList& dims, bool forward) {
  Moved m = move_innermost(x, dims);
  std::vector<long long> n;
  for (auto d : dims) n.push_back(x.shape()[static_cast<std::size_t>(d)]);
  return move_back(c2c_trailing(m.t, n, forward), m);
}

std::vector<long long> lengths(const Tensor& x, const DimList& dims) {
  std::vector<long long> n;
  for (auto d : dims) n.push_back(x.shape()[static_cast<std::size_t>(d)]);
  return n;
}

void scale(Tensor& out, double s) {
  if (s != 1.0) out.mul_(s);
}

}  // namespace

Tensor c2c_cuda(const Tensor& x, const DimList& dims, bool forward, Norm norm) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  Tensor out = c2c_unscaled(x, dims, forward);
  scale(out, norm_scale(norm, product(lengths(x, dims)), forward));
  return out;
}

Tensor r2c_cuda(const Tensor& x, const DimList& dims, Norm norm) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  const std::vector<long long> n = lengths(x, dims), g = last_group(n);
  Moved m = move_innermost(x, dims);
  // cuFFT reads real input as if it were complex: a view starting at an odd element is copied
  if (reinterpret_cast<std::uintptr_t>(m.t.data_ptr()) % (2 * m.t.itemsize()) != 0) m.t = m.t.clone();
  Shape oshape = m.t.shape();
  oshape.back() = oshape.back() / 2 + 1;
  const bool single = x.dtype() == Dtype::Float32;
  Tensor half = ::phasor::detail::make_tensor(oshape, single ? Dtype::Complex64 : Dtype::Complex128, x.device());
  execute(x.device().index, single ? CUFFT_R2C : CUFFT_D2Z, g, m.t.numel() / product(g), m.t.data_ptr(),
          half.data_ptr(), CUFFT_FORWARD);
  if (n.size() > g.size()) half = c2c_unscaled(half, leading_dims(half.dim(), n.size(), g.size()), true);
  Tensor out = move_back(half, m);
  scale(out, norm_scale(norm, product(n), true));
  return out;
}

Tensor c2r_cuda(const Tensor& x, const DimList& dims, Norm norm, std::int64_t last_n) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  std::vector<long long> n = lengths(x, dims);
  n.back() = last_n;
  const std::vector<long long> g = last_group(n);
  Moved m = move_innermost(x, dims);
  Tensor half = m.t;
  if (n.size() > g.size())  // the leading transform dims first, as inverse c2c of the half spectrum (a new tensor)
    half = c2c_unscaled(half, leading_dims(half.dim(), n.size(), g.size()), false);
  else if (!m.copied)
    half = half.clone();  // cuFFT's c2r overwrites its input
  Shape oshape = half.shape();
  oshape.back() = last_n;
  const bool single = x.dtype() == Dtype::Complex64;
  Tensor out = ::phasor::detail::make_tensor(oshape, single ? Dtype::Float32 : Dtype::Float64, x.device());
  execute(x.device().index, single ? CUFFT_C2R : CUFFT_Z2D, g, out.numel() / product(g), half.data_ptr(),
          out.data_ptr(), CUFFT_INVERSE);
  out = move_back(out, m);
  scale(out, norm_scale(norm, product(n), false));
  return out;
}

std::size_t cufft_plan_cache_size(int device) {
  DeviceCache& c = cache_of(device);
  std::lock_guard<std::mutex> lk(c.mu);
  return c.lru.size();
}

void clear_cufft_plan_cache(int device) {
  std::lock_guard<std::mutex> lk(g_caches_mu);
  for (auto& [d, c] : g_caches) {
    if (device >= 0 && d != device) continue;
    std::lock_guard<std::mutex> lc(c->mu);
    c->index.clear();
    c->lru.clear();
  }
}

void set_cufft_plan_cache_capacity(std::size_t capacity) {
  std::lock_guard<std::mutex> lk(g_caches_mu);
  g_capacity = capacity;
  for (auto& [d, c] : g_caches) {
    std::lock_guard<std::mutex> lc(c->mu);
    while (c->lru.size() > capacity) {
      c->index.erase(c->lru.back().first);
      c->lru.pop_back();
    }
  }
}

#else  // CPU-only build

namespace {
[[noreturn]] void cpu_only(const Tensor& x) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");  // names the device and the build
  throw Error("fft", "no cuFFT in this build (CPU-only build)");
}
}  // namespace
Tensor c2c_cuda(const Tensor& x, const DimList&, bool, Norm) { cpu_only(x); }
Tensor r2c_cuda(const Tensor& x, const DimList&, Norm) { cpu_only(x); }
Tensor c2r_cuda(const Tensor& x, const DimList&, Norm, std::int64_t) { cpu_only(x); }
std::size_t cufft_plan_cache_size(int) { return 0; }
void clear_cufft_plan_cache(int) {}
void set_cufft_plan_cache_capacity(std::size_t) {}

#endif

}  // namespace phasor::fft::detail
