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
// current stream, so idle plans hold no device memory. A plan's stream and work area are set (only
// when they differ from the plan's last ones: the caching allocator mostly hands the same block
// back) and the execution launched under the plan's lock (cuFFT plans are not safe to share
// unlocked). cuFFT's c2r overwrites its input, so c2r works on a copy it owns, unless its input is
// the caller's scratch (Note [c2r scratch input]). The norm's scale rides on the first copy a
// transform makes anyway (its input's, or its output's move back), since the transforms are linear;
// only a transform that copies nothing scales its output in a pass of its own. Like the FFTW
// path, a transform over trailing dims makes no heap allocation of its own besides its output (the
// lengths and plan keys are SmallVecs), so a small transform costs about what its cuFFT call does.
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

/// Transform lengths, outermost first.
using Lengths = SmallVec<long long, 8>;
/// The lengths one plan transforms: at most 3 (cuFFT's rank limit).
using Group = SmallVec<long long, 3>;

struct Key {
  int type = 0;
  Group n;
  long long batch = 0;
  bool operator<(const Key& o) const {
    if (type != o.type) return type < o.type;
    if (batch != o.batch) return batch < o.batch;
    return std::lexicographical_compare(n.begin(), n.end(), o.n.begin(), o.n.end());
  }
};

/// A plan's stream or work area before any is set, or after a failed set.
void* const kUnset = reinterpret_cast<void*>(~std::uintptr_t(0));

struct CufftPlan {
  const ::phasor::cuda::detail::CufftApi* api = nullptr;  // set with the handle
  cufftHandle handle = 0;
  std::size_t work = 0;
  int device = 0;
  std::mutex mu;
  void* stream = kUnset;     ///< the stream last set (under mu; nullptr is the legacy default stream)
  void* work_area = kUnset;  ///< the work area last set (under mu)
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
    long long n[3];
    std::copy(key.n.begin(), key.n.end(), n);
    const cufftResult r = api.cufftMakePlanMany64(p->handle, static_cast<int>(key.n.size()), n, nullptr, 1, 0,
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
void execute(int device, cufftType type, const Group& n, long long batch, void* in, void* out, int direction) {
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
  if (stream != plan->stream) {
    plan->stream = kUnset;  // unknown until the call succeeds
    check(api.cufftSetStream(plan->handle, static_cast<cudaStream_t>(stream)), "cufftSetStream");
    plan->stream = stream;
  }
  if (work && work != plan->work_area) {
    plan->work_area = kUnset;
    check(api.cufftSetWorkArea(plan->handle, work), "cufftSetWorkArea");
    plan->work_area = work;
  }
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

/// A new contiguous copy of x with its values times s; s is then 1 (applied).
Tensor copy_scaled(const Tensor& x, double& s) {
  Tensor c = s != 1.0 ? x * s : x.clone();
  s = 1.0;
  return c;
}

/// x with `dims` moved innermost in order (contiguous), and the permutation that undoes it.
/// A copy made here carries the norm's scale `s` (then set to 1: Note [cufft backend]).
struct Moved {
  Tensor t;
  Shape undo;
  bool moved = false;  // the dims were not already innermost
  bool copied = false;  // t is a copy made here
};
Moved move_innermost(const Tensor& x, const DimList& dims, double& s) {
  const std::int64_t nd = x.dim(), k = static_cast<std::int64_t>(dims.size());
  Moved m;
  for (std::int64_t i = 0; i < k; ++i) m.moved |= dims[static_cast<std::size_t>(i)] != nd - k + i;
  if (!m.moved) {  // the dims are the trailing ones, in order: the common case builds no permutation
    m.copied = !x.is_contiguous();
    m.t = m.copied ? copy_scaled(x, s) : x;
    return m;
  }
  Shape perm;
  for (std::int64_t d = 0; d < nd; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  for (auto d : dims) perm.push_back(d);
  Tensor p = x.permute(perm);
  m.copied = !p.is_contiguous();
  m.t = m.copied ? copy_scaled(p, s) : p;
  m.undo.assign(static_cast<std::size_t>(nd), 0);
  for (std::int64_t i = 0; i < nd; ++i) m.undo[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = i;
  return m;
}

/// The output, contiguous in x's dim order; a copy made here carries the scale left in `s`.
Tensor move_back(const Tensor& out, const Moved& m, double& s) {
  if (!m.moved) return out;
  const Tensor back = out.permute(m.undo);
  return back.is_contiguous() ? back : copy_scaled(back, s);
}

template <class V>
long long product(const V& v) {
  return std::accumulate(v.begin(), v.end(), 1LL, std::multiplies<long long>());
}

/// The last min(3, n.size()) lengths of n: the group one cuFFT plan transforms.
Group last_group(const Lengths& n) { return Group(n.end() - std::min<std::size_t>(3, n.size()), n.end()); }

/// The leading transform dims of a tensor of `nd` dims whose last n_total dims are transformed, when
/// the last `g` of them are done.
DimList leading_dims(std::int64_t nd, std::size_t n_total, std::size_t g) {
  DimList d;
  for (std::int64_t i = nd - static_cast<std::int64_t>(n_total); i < nd - static_cast<std::int64_t>(g); ++i) d.push_back(i);
  return d;
}

/// A new contiguous tensor of t's shape with the last dim `last` long, of `dtype`, on t's device.
Tensor empty_with_last(const Tensor& t, std::int64_t last, Dtype dtype) {
  DimList shape(t.shape().begin(), t.shape().end());
  shape.back() = last;
  return ::phasor::detail::make_tensor(shape.data(), shape.size(), dtype, t.device());
}

Tensor c2c_unscaled(const Tensor& x, const DimList& dims, bool forward);

/// c2c over the trailing n.size() dims of the contiguous t, unscaled.
Tensor c2c_trailing(const Tensor& t, const Lengths& n, bool forward) {
  const bool single = t.dtype() == Dtype::Complex64;
  Tensor out = ::phasor::detail::make_tensor(t.shape(), t.dtype(), t.device());
  const Group g = last_group(n);
  execute(t.device().index, single ? CUFFT_C2C : CUFFT_Z2Z, g, t.numel() / product(g), t.data_ptr(), out.data_ptr(),
          forward ? CUFFT_FORWARD : CUFFT_INVERSE);
  if (n.size() > g.size()) out = c2c_unscaled(out, leading_dims(out.dim(), n.size(), g.size()), forward);
  return out;
}

/// The lengths of x's `dims`, in order.
Lengths lengths(const Tensor& x, const DimList& dims) {
  Lengths n;
  for (auto d : dims) n.push_back(x.shape()[static_cast<std::size_t>(d)]);
  return n;
}

/// c2c over `dims` of x (any layout), unscaled, contiguous in x's dim order.
Tensor c2c_unscaled(const Tensor& x, const DimList& dims, bool forward) {
  double s = 1.0;
  Moved m = move_innermost(x, dims, s);
  return move_back(c2c_trailing(m.t, lengths(x, dims), forward), m, s);
}

/// Applies a scale no copy carried: a pass of its own.
void scale(Tensor& out, double s) {
  if (s != 1.0) out.mul_(s);
}

}  // namespace

Tensor c2c_cuda(const Tensor& x, const DimList& dims, bool forward, Norm norm) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  const Lengths n = lengths(x, dims);
  double s = norm_scale(norm, product(n), forward);
  Moved m = move_innermost(x, dims, s);
  Tensor out = move_back(c2c_trailing(m.t, n, forward), m, s);
  scale(out, s);
  return out;
}

Tensor r2c_cuda(const Tensor& x, const DimList& dims, Norm norm) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  const Lengths n = lengths(x, dims);
  const Group g = last_group(n);
  double s = norm_scale(norm, product(n), true);
  Moved m = move_innermost(x, dims, s);
  // cuFFT reads real input as if it were complex: a view starting at an odd element is copied
  if (reinterpret_cast<std::uintptr_t>(m.t.data_ptr()) % (2 * m.t.itemsize()) != 0) m.t = copy_scaled(m.t, s);
  const bool single = x.dtype() == Dtype::Float32;
  Tensor half = empty_with_last(m.t, m.t.shape().back() / 2 + 1, single ? Dtype::Complex64 : Dtype::Complex128);
  execute(x.device().index, single ? CUFFT_R2C : CUFFT_D2Z, g, m.t.numel() / product(g), m.t.data_ptr(),
          half.data_ptr(), CUFFT_FORWARD);
  if (n.size() > g.size()) half = c2c_unscaled(half, leading_dims(half.dim(), n.size(), g.size()), true);
  Tensor out = move_back(half, m, s);
  scale(out, s);
  return out;
}

Tensor c2r_cuda(const Tensor& x, const DimList& dims, Norm norm, std::int64_t last_n, bool x_is_scratch) {
  ::phasor::cuda::detail::check_device(x.device(), "fft");
  Lengths n = lengths(x, dims);
  n.back() = last_n;
  const Group g = last_group(n);
  double s = norm_scale(norm, product(n), false);
  Moved m = move_innermost(x, dims, s);
  Tensor half = m.t;
  if (n.size() > g.size())  // the leading transform dims first, as inverse c2c of the half spectrum (a new tensor)
    half = c2c_unscaled(half, leading_dims(half.dim(), n.size(), g.size()), false);
  else if (!m.copied && !x_is_scratch)
    half = copy_scaled(half, s);  // cuFFT's c2r overwrites its input
  const bool single = x.dtype() == Dtype::Complex64;
  Tensor out = empty_with_last(half, last_n, single ? Dtype::Float32 : Dtype::Float64);
  execute(x.device().index, single ? CUFFT_C2R : CUFFT_Z2D, g, out.numel() / product(g), half.data_ptr(),
          out.data_ptr(), CUFFT_INVERSE);
  out = move_back(out, m, s);
  scale(out, s);
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
Tensor c2r_cuda(const Tensor& x, const DimList&, Norm, std::int64_t, bool) { cpu_only(x); }
std::size_t cufft_plan_cache_size(int) { return 0; }
void clear_cufft_plan_cache(int) {}
void set_cufft_plan_cache_capacity(std::size_t) {}

#endif

}  // namespace phasor::fft::detail
