// bench/bench_core.cpp - tensor core benchmarks: eager dispatch overhead and elementwise /
// reduction bandwidth against memcpy. See bench/README.md for the targets and latest figures;
// bench/compare_torch.py runs the same shapes with PyTorch and prints the ratios.
//
// Conventions (compare_torch.py relies on them):
//  * Every benchmark reports real (wall) time.
//  * Dispatch benchmarks set the counter `ops` to the number of tensor ops one iteration counts
//    (time per op = real_time / ops) and `per_op` to seconds per op.
//  * Bandwidth benchmarks set `bytes` to the bytes one iteration touches (each operand read or
//    written once: a + b on n floats = 3 * 4n bytes; memcpy of n floats = 2 * 4n bytes; sum of n
//    floats = 4n bytes) and SetBytesProcessed accordingly, so bytes_per_second is the bandwidth.
//  * Bandwidth inputs and outputs are allocated and touched before the timed loop; phasor's
//    caching allocator hands each iteration's result the block the previous one freed, so no
//    timed iteration pays first-touch page faults (~12 us per 4 KiB page on these VMs).
#include <benchmark/benchmark.h>

#include <functional>
#include <omp.h>
#if defined(__SSE__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <vector>

#include <phasor/phasor.hpp>

namespace {

using phasor::Shape;
using phasor::Tensor;

constexpr std::int64_t kBig = std::int64_t{1} << 24;  // 16M elements

Tensor filled(const Shape& shape, double v) { return phasor::full(shape, v, phasor::float32); }

void set_ops(benchmark::State& st, double ops) {
  st.counters["ops"] = ops;
  st.counters["per_op"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
}

// ---- (a) eager dispatch ----------------------------------------------------------------------

// a + b on one-element float32 tensors, no autograd: the fixed cost of one op call.
void BM_Add1(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor a = filled({1}, 1.5), b = filled({1}, 2.5);
  for (auto _ : st) benchmark::DoNotOptimize(a + b);
  set_ops(st, 1);
}
BENCHMARK(BM_Add1)->UseRealTime();

// -a on a one-element tensor: the unary path.
void BM_Neg1(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor a = filled({1}, 1.5);
  for (auto _ : st) benchmark::DoNotOptimize(-a);
  set_ops(st, 1);
}
BENCHMARK(BM_Neg1)->UseRealTime();

// a + 1.0 on a one-element tensor: the C++ scalar is wrapped in a 0-d tensor first.
void BM_AddScalar1(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor a = filled({1}, 1.5);
  for (auto _ : st) benchmark::DoNotOptimize(a + 1.0);
  set_ops(st, 1);
}
BENCHMARK(BM_AddScalar1)->UseRealTime();

// a += b on one-element tensors: in place, no result allocation.
void BM_AddInplace1(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor a = filled({1}, 0.0), b = filled({1}, 1e-9);
  for (auto _ : st) {
    a += b;
    benchmark::ClobberMemory();
  }
  set_ops(st, 1);
}
BENCHMARK(BM_AddInplace1)->UseRealTime();

// a + b where a requires grad: forward only, but the op records a graph node.
void BM_Add1RecordGraph(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor a = filled({1}, 1.5), b = filled({1}, 2.5);
  a.requires_grad_();
  for (auto _ : st) benchmark::DoNotOptimize(a + b);
  set_ops(st, 1);
}
BENCHMARK(BM_Add1RecordGraph)->UseRealTime();

// empty({1}): one tensor allocation (TensorImpl + Storage + cached block), the floor under any op.
void BM_Empty1(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(phasor::empty({1}, phasor::float32));
  set_ops(st, 1);
}
BENCHMARK(BM_Empty1)->UseRealTime();

// The 10-op chain: mul add tanh sin sub cos mul exp div neg (then sum, not counted as an op).
Tensor chain10(const Tensor& x, const Tensor& c) {
  Tensor y = x * c;
  y = y + c;
  y = y.tanh();
  y = y.sin();
  y = y - c;
  y = y.cos();
  y = y * c;
  y = y.exp();
  y = y / c;
  y = -y;
  return y.sum();
}

// Forward + backward of the chain on 4-element tensors with x a requires_grad leaf.
// per_op = (forward of the 10 ops + sum + backward + clearing x.grad) / 10.
void BM_Chain10FwdBwd(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor x = filled({4}, 0.5), c = filled({4}, 1.25);
  x.requires_grad_();
  for (auto _ : st) {
    Tensor loss = chain10(x, c);
    loss.backward();
    x.set_grad(Tensor());
  }
  set_ops(st, 10);
}
BENCHMARK(BM_Chain10FwdBwd)->UseRealTime();

// Forward only of the same chain with x requiring grad (graph recorded, never run).
void BM_Chain10Fwd(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor x = filled({4}, 0.5), c = filled({4}, 1.25);
  x.requires_grad_();
  for (auto _ : st) benchmark::DoNotOptimize(chain10(x, c));
  set_ops(st, 10);
}
BENCHMARK(BM_Chain10Fwd)->UseRealTime();

// Forward only without autograd (no input requires grad).
void BM_Chain10NoGrad(benchmark::State& st) {
  phasor::set_num_threads(1);
  Tensor x = filled({4}, 0.5), c = filled({4}, 1.25);
  for (auto _ : st) benchmark::DoNotOptimize(chain10(x, c));
  set_ops(st, 10);
}
BENCHMARK(BM_Chain10NoGrad)->UseRealTime();

// ---- (b) bandwidth ------------------------------------------------------------------------------

void set_bytes(benchmark::State& st, double bytes_per_iter) {
  st.counters["bytes"] = bytes_per_iter;
  st.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_iter) * st.iterations());
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

Buffer touched_buffer(std::size_t bytes, int value) {
  Buffer b(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  std::memset(b.get(), value, bytes);
  return b;
}

// memcpy of n floats, split into `threads` equal contiguous chunks (one per OpenMP thread).
void BM_Memcpy(benchmark::State& st) {
  const auto n = st.range(0);
  const int threads = static_cast<int>(st.range(1));
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  Buffer src = touched_buffer(bytes, 1), dst = touched_buffer(bytes, 0);
  for (auto _ : st) {
    if (threads == 1) {
      std::memcpy(dst.get(), src.get(), bytes);
    } else {
#pragma omp parallel num_threads(threads)
      {
        const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
        const std::size_t k = static_cast<std::size_t>(omp_get_num_threads());
        const std::size_t chunk = (bytes / k + 63) / 64 * 64;
        const std::size_t b = std::min(bytes, t * chunk), e = std::min(bytes, b + chunk);
        if (b < e) std::memcpy(dst.get() + b, src.get() + b, e - b);
      }
    }
    benchmark::ClobberMemory();
  }
  set_bytes(st, 2.0 * static_cast<double>(bytes));
}
BENCHMARK(BM_Memcpy)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();

// Reference: a hand-written `o[i] = a[i] + b[i]` loop over pre-touched arrays, split like
// BM_Memcpy, built with the same flags as phasor: what the hardware gives a plain loop.
void BM_RawAddLoop(benchmark::State& st) {
  const auto n = st.range(0);
  const int threads = static_cast<int>(st.range(1));
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  Buffer a = touched_buffer(bytes, 0), b = touched_buffer(bytes, 0), o = touched_buffer(bytes, 0);
  float* __restrict po = reinterpret_cast<float*>(o.get());
  const float* __restrict pa = reinterpret_cast<const float*>(a.get());
  const float* __restrict pb = reinterpret_cast<const float*>(b.get());
  for (auto _ : st) {
#pragma omp parallel num_threads(threads)
    {
      const std::int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
      const std::int64_t chunk = (n / k + 15) / 16 * 16;
      const std::int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
      for (std::int64_t i = lo; i < hi; ++i) po[i] = pa[i] + pb[i];
    }
    benchmark::ClobberMemory();
  }
  set_bytes(st, 3.0 * static_cast<double>(bytes));
}
BENCHMARK(BM_RawAddLoop)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();

#if defined(__SSE__)
// Reference: the same loop with non-temporal (streaming) stores. A normal store first reads the
// destination line (read-for-ownership), so o = a + b moves 4 arrays over the memory bus while
// memcpy (rep movsb / streaming) moves 2; streaming stores skip that read.
void BM_RawAddLoopNT(benchmark::State& st) {
  const auto n = st.range(0);
  const int threads = static_cast<int>(st.range(1));
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  Buffer a = touched_buffer(bytes, 0), b = touched_buffer(bytes, 0), o = touched_buffer(bytes, 0);
  float* po = reinterpret_cast<float*>(o.get());
  const float* pa = reinterpret_cast<const float*>(a.get());
  const float* pb = reinterpret_cast<const float*>(b.get());
  for (auto _ : st) {
#pragma omp parallel num_threads(threads)
    {
      const std::int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
      const std::int64_t chunk = (n / k + 15) / 16 * 16;  // 64-byte aligned chunks
      const std::int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
      std::int64_t i = lo;
      for (; i + 4 <= hi; i += 4) _mm_stream_ps(po + i, _mm_add_ps(_mm_load_ps(pa + i), _mm_load_ps(pb + i)));
      for (; i < hi; ++i) po[i] = pa[i] + pb[i];
      _mm_sfence();
    }
    benchmark::ClobberMemory();
  }
  set_bytes(st, 3.0 * static_cast<double>(bytes));
}
BENCHMARK(BM_RawAddLoopNT)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();
#endif

// Contiguous a + b, n float32 elements each.
void BM_AddContig(benchmark::State& st) {
  const auto n = st.range(0);
  phasor::set_num_threads(static_cast<int>(st.range(1)));
  Tensor a = filled({n}, 1.5), b = filled({n}, 2.5);
  { Tensor warm = a + b; }  // the result block goes to the cache and is reused below
  for (auto _ : st) benchmark::DoNotOptimize(a + b);
  set_bytes(st, 3.0 * static_cast<double>(n) * sizeof(float));
}
BENCHMARK(BM_AddContig)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();

// Row broadcast: a (M, N) + b (1, N) with M * N = 16M. Bytes = a read + out written + b read.
void BM_AddBcastRow(benchmark::State& st) {
  const auto cols = st.range(0);
  const auto rows = kBig / cols;
  phasor::set_num_threads(static_cast<int>(st.range(1)));
  Tensor a = filled({rows, cols}, 1.5), b = filled({1, cols}, 2.5);
  { Tensor warm = a + b; }
  for (auto _ : st) benchmark::DoNotOptimize(a + b);
  set_bytes(st, (2.0 * static_cast<double>(rows * cols) + static_cast<double>(cols)) * sizeof(float));
}
BENCHMARK(BM_AddBcastRow)
    ->ArgNames({"N", "threads"})
    ->Args({4096, 1})
    ->Args({4096, 2})
    ->Args({64, 1})
    ->Args({64, 2})
    ->UseRealTime();

// reduce(a) over all n float32 elements of a (one 0-d result), n and the thread count from the args.
template <class Reduce>
void full_reduction(benchmark::State& st, Reduce reduce) {
  const auto n = st.range(0);
  phasor::set_num_threads(static_cast<int>(st.range(1)));
  Tensor a = filled({n}, 1.0);
  benchmark::DoNotOptimize(reduce(a));
  for (auto _ : st) benchmark::DoNotOptimize(reduce(a));
  set_bytes(st, static_cast<double>(n) * sizeof(float));
}

// sum over all n float32 elements.
void BM_Sum(benchmark::State& st) { full_reduction(st, [](const Tensor& a) { return a.sum(); }); }
BENCHMARK(BM_Sum)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();

// amax over all n float32 elements (NaN-propagating, +-0 ties by sign).
void BM_Amax(benchmark::State& st) { full_reduction(st, [](const Tensor& a) { return a.amax(); }); }
BENCHMARK(BM_Amax)->ArgNames({"n", "threads"})->Args({kBig, 1})->Args({kBig, 2})->UseRealTime();

// ---- (c) complex division and expm1 ------------------------------------------------------------

constexpr std::int64_t kDiv = std::int64_t{1} << 20;  // 1M complex elements

/// n standard normal complex numbers of the bench's dtype argument (0: complex64, 1: complex128).
Tensor complex_randn(std::int64_t n, std::int64_t dtype_arg) {
  const phasor::Dtype re = dtype_arg == 0 ? phasor::float32 : phasor::float64;
  return phasor::complex(phasor::randn({n}, re), phasor::randn({n}, re));
}

// a / b on n random complex elements (complex64: dtype 0, complex128: dtype 1), one thread: phasor's
// division (Note [complex division]), compute-bound, so time per element is the figure.
void BM_DivComplex(benchmark::State& st) {
  const auto n = st.range(0);
  phasor::set_num_threads(1);
  phasor::manual_seed(5);
  Tensor a = complex_randn(n, st.range(1)), b = complex_randn(n, st.range(1));
  { Tensor warm = a / b; }
  for (auto _ : st) benchmark::DoNotOptimize(a / b);
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_DivComplex)->ArgNames({"n", "dtype"})->Args({kDiv, 0})->Args({kDiv, 1})->UseRealTime();

// expm1 on n random complex elements, one thread: complex64 computes its parts in double (Note [complex
// elementary functions]), so this row shows what that costs against complex128.
void BM_Expm1Complex(benchmark::State& st) {
  const auto n = st.range(0);
  phasor::set_num_threads(1);
  phasor::manual_seed(5);
  Tensor a = complex_randn(n, st.range(1));
  { Tensor warm = phasor::expm1(a); }
  for (auto _ : st) benchmark::DoNotOptimize(phasor::expm1(a));
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_Expm1Complex)->ArgNames({"n", "dtype"})->Args({kDiv, 0})->Args({kDiv, 1})->UseRealTime();

// ---- (d) fused multiply-add (Note [fused multiply-add]) ------------------------------------------------

// x + r * b with complex128 x and b and a float64 r, one thread: an ETDRK4 stage's E u + Q N on the 256^2
// Navier-Stokes half spectrum (33,024 elements, in cache) and on 1M elements (from memory). fused: one
// addcmul pass; else the composition x + r * b (a product, then a sum: two passes, one temporary).
void multiply_add(benchmark::State& st, bool fused) {
  const auto n = st.range(0);
  phasor::set_num_threads(1);
  phasor::manual_seed(6);
  const Tensor x = complex_randn(n, 1), b = complex_randn(n, 1), r = phasor::randn({n}, phasor::float64);
  const auto f = [&] { return fused ? phasor::addcmul(x, r, b) : x + r * b; };
  { Tensor warm = f(); }
  for (auto _ : st) benchmark::DoNotOptimize(f());
  st.SetItemsProcessed(st.iterations() * n);
}
void BM_AddcmulComplex(benchmark::State& st) { multiply_add(st, true); }
void BM_MulAddComplex(benchmark::State& st) { multiply_add(st, false); }
BENCHMARK(BM_AddcmulComplex)->ArgName("n")->Arg(33024)->Arg(std::int64_t{1} << 20)->UseRealTime();
BENCHMARK(BM_MulAddComplex)->ArgName("n")->Arg(33024)->Arg(std::int64_t{1} << 20)->UseRealTime();

// ---- (e) lerp (Note [lerp]) ---------------------------------------------------------------------------------

// x + 0.1 (e - x) on 1M float32 elements, one thread: 0 lerp(x, e, 0.1) (one pass), 1 the composition
// x + 0.1 * (e - x) (three passes, two temporaries), 2 x.lerp_(e, 0.1) in place (a running average's update).
void BM_Lerp(benchmark::State& st) {
  const auto n = st.range(0), form = st.range(1);
  phasor::set_num_threads(1);
  phasor::manual_seed(7);
  Tensor x = phasor::randn({n}), e = phasor::randn({n});
  const auto f = [&] {
    if (form == 0) benchmark::DoNotOptimize(phasor::lerp(x, e, 0.1));
    else if (form == 1) benchmark::DoNotOptimize(x + 0.1 * (e - x));
    else x.lerp_(e, 0.1);
  };
  f();
  for (auto _ : st) f();
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_Lerp)->ArgNames({"n", "form"})->Args({1 << 20, 0})->Args({1 << 20, 1})->Args({1 << 20, 2})->UseRealTime();

// ---- (f) where and masked_fill on a random mask (select_bits, src/core/elementwise.hpp) --------------------

// 1M float32 elements, a mask true for half of them at random, one thread: 0 where(m, x, e), 1 where(m, x, 0)
// (a number: one broadcast element), 2 x.masked_fill(m, 0).
void BM_WhereRandomMask(benchmark::State& st) {
  const auto n = st.range(0), form = st.range(1);
  phasor::set_num_threads(1);
  phasor::manual_seed(8);
  const Tensor x = phasor::randn({n}), e = phasor::randn({n}), m = phasor::randn({n}) > 0.0;
  const auto f = [&] {
    if (form == 0) return phasor::where(m, x, e);
    if (form == 1) return phasor::where(m, x, 0.0);
    return x.masked_fill(m, 0.0);
  };
  { Tensor warm = f(); }
  for (auto _ : st) benchmark::DoNotOptimize(f());
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_WhereRandomMask)->ArgNames({"n", "form"})->Args({1 << 20, 0})->Args({1 << 20, 1})->Args({1 << 20, 2})->UseRealTime();

// ---- (g) elementwise rows and full reductions, 1 thread (Note [engine rows], [rounding without libm], [vector
// sigmoid], [vector softplus], [vector reduction blocks]) ------

/// The ops of BM_Unary1M, by its "op" argument (the names compare_torch.py prints).
const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>>& unary_rows() {
  static const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>> ops = {
      {"relu", [](const Tensor& x, const Tensor&) { return x.relu(); }},
      {"minimum", [](const Tensor& x, const Tensor& e) { return phasor::minimum(x, e); }},
      {"sign", [](const Tensor& x, const Tensor&) { return x.sign(); }},
      {"floor", [](const Tensor& x, const Tensor&) { return x.floor(); }},
      {"logical_not", [](const Tensor& x, const Tensor&) { return (x > 0.0).logical_not(); }},
      {"sigmoid", [](const Tensor& x, const Tensor&) { return x.sigmoid(); }},
      {"silu", [](const Tensor& x, const Tensor&) { return x.silu(); }},
      {"exp", [](const Tensor& x, const Tensor&) { return x.exp(); }},
      {"tanh", [](const Tensor& x, const Tensor&) { return x.tanh(); }},
      {"clamp", [](const Tensor& x, const Tensor&) { return x.clamp(-1.0, 1.0); }},
      {"softplus", [](const Tensor& x, const Tensor&) { return x.softplus(); }},
      {"sum", [](const Tensor& x, const Tensor&) { return x.sum(); }},
      {"amax", [](const Tensor& x, const Tensor&) { return x.amax(); }},
      {"round", [](const Tensor& x, const Tensor&) { return x.round(); }},
      {"gelu", [](const Tensor& x, const Tensor&) { return x.gelu(); }},
      {"gelu fwd+bwd", [](const Tensor& x, const Tensor& e) {  // autograd: gelu, then gelu_backward
         Tensor leaf = x.detach();
         leaf.requires_grad_();
         leaf.gelu().backward(e);
         return leaf.grad();
       }},
      {"remainder", [](const Tensor& x, const Tensor& e) { return x.remainder(e); }},
      {"fmod", [](const Tensor& x, const Tensor& e) { return x.fmod(e); }},
      {"hypot", [](const Tensor& x, const Tensor& e) { return x.hypot(e); }},
      {"logaddexp", [](const Tensor& x, const Tensor& e) { return x.logaddexp(e); }},
      {"xlogy", [](const Tensor& x, const Tensor& e) { return x.xlogy(e); }},
      {"cumprod", [](const Tensor& x, const Tensor&) { return x.cumprod(0); }},
      {"sort", [](const Tensor& x, const Tensor&) { return std::get<0>(x.sort()); }},
      {"topk 10", [](const Tensor& x, const Tensor&) { return std::get<0>(x.topk(10)); }},
      {"cummax", [](const Tensor& x, const Tensor&) { return std::get<0>(x.cummax(0)); }},
      {"logcumsumexp", [](const Tensor& x, const Tensor&) { return x.logcumsumexp(0); }},
      {"median", [](const Tensor& x, const Tensor&) { return x.median(); }},
      {"quantile 3", [](const Tensor& x, const Tensor&) {
         static const Tensor q = phasor::from_vector(std::vector<float>{0.25f, 0.5f, 0.75f});
         return x.quantile(q);
       }},
      {"searchsorted", [](const Tensor& x, const Tensor& e) {  // e's 1M values in x sorted (made at the warm-up)
         static const Tensor sorted = std::get<0>(x.sort());
         return phasor::searchsorted(sorted, e);
       }},
      {"nonzero", [](const Tensor& x, const Tensor&) { return (x > 0.0).nonzero(); }},
      {"masked_select", [](const Tensor& x, const Tensor&) { return x.masked_select(x > 0.0); }},
      {"unique", [](const Tensor& x, const Tensor&) { return std::get<0>((x * 100.0).round().unique()); }},
      // the scatters: 1M values into 1024 bins picked by e (the index made at the warm-up), or a permutation
      {"scatter_reduce amax", [](const Tensor& x, const Tensor& e) {
         static const Tensor bins = (e.abs() * 300.0).floor().clamp_max(1023.0).to(phasor::int64);
         return phasor::scatter_reduce(phasor::zeros({1024}), 0, bins, x, "amax");
       }},
      {"index_put acc", [](const Tensor& x, const Tensor& e) {
         static const Tensor bins = (e.abs() * 300.0).floor().clamp_max(1023.0).to(phasor::int64);
         return phasor::index_put(phasor::zeros({1024}), {bins}, x, true);
       }},
      {"scatter perm", [](const Tensor& x, const Tensor& e) {
         static const Tensor perm = e.argsort();
         return phasor::scatter(x, 0, perm, e);
       }},
      {"index_put_ 1K in place", [](const Tensor& x, const Tensor&) {  // x[idx] += v, 1024 of x's 1M elements
         static Tensor acc = phasor::zeros({x.numel()});
         static const Tensor idx = phasor::randint(0, x.numel(), {1024}), v = x.narrow(0, 0, 1024);
         return acc.index_put_({idx}, v, true);
       }},
      {"gather perm", [](const Tensor& x, const Tensor& e) {
         static const Tensor perm = e.argsort();
         return phasor::gather(x, 0, perm);
       }},
      {"unique rows of 64", [](const Tensor& x, const Tensor&) {  // 16384 rows of 64 small integers, along dim 0
         return std::get<0>(phasor::unique((x * 1.5).round().reshape({-1, 64}), true, false, false, 0));
       }},
      // the special functions (phasor/special.hpp)
      {"lgamma", [](const Tensor& x, const Tensor&) { return x.lgamma(); }},
      {"digamma", [](const Tensor& x, const Tensor&) { return x.digamma(); }},
      {"erfinv of tanh", [](const Tensor& x, const Tensor&) { return x.tanh().erfinv(); }},
      {"i0", [](const Tensor& x, const Tensor&) { return x.i0(); }},
      {"log_ndtr", [](const Tensor& x, const Tensor&) { return phasor::special::log_ndtr(x); }},
      {"igamma", [](const Tensor& x, const Tensor& e) { return phasor::igamma(x.abs(), e.abs()); }},
      // the activations (phasor/nn/activation.hpp)
      {"elu", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::elu(x); }},
      {"selu", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::selu(x); }},
      {"leaky_relu", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::leaky_relu(x); }},
      {"hardswish", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::hardswish(x); }},
      {"mish", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::mish(x); }},
      {"logsigmoid", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::logsigmoid(x); }},
      {"hardtanh", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::hardtanh(x); }},
      {"softshrink", [](const Tensor& x, const Tensor&) { return phasor::nn::functional::softshrink(x); }},
      // the Bessel and Airy functions and orthogonal polynomials of phasor::special (degree 10)
      {"bessel_j0", [](const Tensor& x, const Tensor&) { return phasor::special::bessel_j0(x * 5.0); }},
      {"modified_bessel_k0", [](const Tensor& x, const Tensor&) { return phasor::special::modified_bessel_k0(x.abs()); }},
      {"airy_ai", [](const Tensor& x, const Tensor&) { return phasor::special::airy_ai(x); }},
      {"chebyshev_t 10", [](const Tensor& x, const Tensor&) { return phasor::special::chebyshev_polynomial_t(x.tanh(), 10); }},
      {"legendre_p 10", [](const Tensor& x, const Tensor&) { return phasor::special::legendre_polynomial_p(x.tanh(), 10); }},
      {"hermite_h 10", [](const Tensor& x, const Tensor&) { return phasor::special::hermite_polynomial_h(x, 10); }},
  };
  return ops;
}

// one op (elementwise, a full reduction, a scan, a sort or a selection) on 1M float32 normals, one thread (logical_not: of a
// bool mask, its making included)
void BM_Unary1M(benchmark::State& st) {
  const auto n = st.range(0);
  const auto& op = unary_rows()[static_cast<std::size_t>(st.range(1))];
  phasor::set_num_threads(1);
  phasor::manual_seed(9);
  const Tensor x = phasor::randn({n}), e = phasor::randn({n});
  { Tensor warm = op.second(x, e); }
  for (auto _ : st) benchmark::DoNotOptimize(op.second(x, e));
  st.SetLabel(op.first);
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_Unary1M)->ArgNames({"n", "op"})->ArgsProduct({{1 << 20}, benchmark::CreateDenseRange(0, 57, 1)})->UseRealTime();

/// The reductions over some dims of BM_ReduceDims, by its "op" argument (compare_torch.py's REDUCE_DIMS).
const std::vector<std::pair<const char*, std::function<Tensor()>>>& reduce_dim_rows() {
  static const Tensor a = [] {
    phasor::manual_seed(10);
    return phasor::randn({4096, 256});
  }();
  static const Tensor b = phasor::randn({64, 1024, 16}), c = phasor::randn({20, 32, 4096});
  static const std::vector<std::pair<const char*, std::function<Tensor()>>> ops = {
      {"a.sum(0)", [] { return a.sum({0}); }},          {"b.sum(1)", [] { return b.sum({1}); }},
      {"c.sum((0,2))", [] { return c.sum({0, 2}); }},   {"a.amax(0)", [] { return a.amax({0}); }},
      {"c.mean(2)", [] { return c.mean({2}); }},
  };
  return ops;
}

/// Times row st.range(0) of a table of named calls on one thread (after one call to warm up), labelled by its name.
void run_row(benchmark::State& st, const std::vector<std::pair<const char*, std::function<Tensor()>>>& rows) {
  const auto& op = rows[static_cast<std::size_t>(st.range(0))];
  phasor::set_num_threads(1);
  { Tensor warm = op.second(); }
  for (auto _ : st) benchmark::DoNotOptimize(op.second());
  st.SetLabel(op.first);
}

// a reduction over some dims of a 1M or 2.6M float32 tensor, one thread (Note [vector reduction blocks]: the
// outer mode's rows, the inner mode's blocks)
void BM_ReduceDims(benchmark::State& st) { run_row(st, reduce_dim_rows()); }
BENCHMARK(BM_ReduceDims)->ArgName("op")->DenseRange(0, 4, 1)->UseRealTime();

/// The LU-based linalg calls of BM_Linalg, by its "op" argument (compare_torch.py's LINALG), float64.
const std::vector<std::pair<const char*, std::function<Tensor()>>>& linalg_rows() {
  static const Tensor a = [] {
    phasor::manual_seed(11);
    return phasor::randn({256, 256}, phasor::float64) + phasor::eye(256, std::nullopt, phasor::float64) * 16.0;
  }();
  static const Tensor b = phasor::randn({256, 64}, phasor::float64);
  static const Tensor small = phasor::randn({4096, 4, 4}, phasor::float64);
  static const Tensor big = phasor::randn({512, 512}, phasor::float64);
  static const Tensor spd = phasor::matmul(big, big.t()) + phasor::eye(512, std::nullopt, phasor::float64);
  static const std::vector<std::pair<const char*, std::function<Tensor()>>> ops = {
      {"solve(a, b)", [] { return phasor::linalg::solve(a, b); }},
      {"inv(a)", [] { return phasor::linalg::inv(a); }},
      {"det(small)", [] { return phasor::linalg::det(small); }},
      {"slogdet(big)", [] { return phasor::linalg::slogdet(big).second; }},
      {"cholesky(spd)", [] { return phasor::linalg::cholesky(spd); }},
  };
  return ops;
}

// solve, inv (256 x 256, 64 right-hand sides), det of 4096 4 x 4 matrices, slogdet and cholesky of a 512 x 512, one thread
void BM_Linalg(benchmark::State& st) { run_row(st, linalg_rows()); }
BENCHMARK(BM_Linalg)->ArgName("op")->DenseRange(0, 4, 1)->UseRealTime();

/// The decompositions of BM_Decomp, by its "op" argument (compare_torch.py's DECOMP), float64: a 512 x 256 matrix, a
/// symmetric 256 x 256 one, 1024 symmetric 8 x 8 ones, 16 right-hand sides and a general 256 x 256 matrix (eig, LU
/// factors, solves from them with 16 right-hand sides).
const std::vector<std::pair<const char*, std::function<Tensor()>>>& decomp_rows() {
  static const Tensor a = [] {
    phasor::manual_seed(13);
    return phasor::randn({512, 256}, phasor::float64);
  }();
  static const Tensor b = phasor::randn({512, 16}, phasor::float64);
  static const Tensor h = [] {
    const Tensor g = phasor::randn({256, 256}, phasor::float64);
    return g + g.t();
  }();
  static const Tensor hs = [] {
    const Tensor g = phasor::randn({1024, 8, 8}, phasor::float64);
    return g + g.transpose(-1, -2);
  }();
  static const Tensor g = phasor::randn({256, 256}, phasor::float64);
  static const std::pair<Tensor, Tensor> glu = phasor::linalg::lu_factor(g);
  static const Tensor b16 = phasor::randn({256, 16}, phasor::float64);
  static const std::vector<std::pair<const char*, std::function<Tensor()>>> ops = {
      {"qr(a)", [] { return phasor::linalg::qr(a).first; }},
      {"eigh(h)", [] { return phasor::linalg::eigh(h).second; }},
      {"eigvalsh(h)", [] { return phasor::linalg::eigvalsh(h); }},
      {"eigh(hs)", [] { return phasor::linalg::eigh(hs).second; }},
      {"svd(a)", [] { return std::get<0>(phasor::linalg::svd(a, false)); }},
      {"svdvals(a)", [] { return phasor::linalg::svdvals(a); }},
      {"lstsq(a, b) gelsd", [] { return phasor::linalg::lstsq(a, b, std::nullopt, "gelsd").solution; }},
      {"lstsq(a, b) gels", [] { return phasor::linalg::lstsq(a, b, std::nullopt, "gels").solution; }},
      {"pinv(h)", [] { return phasor::linalg::pinv(h); }},
      {"eig(g)", [] { return phasor::linalg::eig(g).second; }},
      {"lu_factor(g)", [] { return phasor::linalg::lu_factor(g).first; }},
      {"lu_solve(g's LU, b16)", [] { return phasor::linalg::lu_solve(glu.first, glu.second, b16); }},
  };
  return ops;
}

// QR, eigh, SVD, eig, LU and what is made of them, one thread
void BM_Decomp(benchmark::State& st) { run_row(st, decomp_rows()); }
BENCHMARK(BM_Decomp)->ArgName("op")->DenseRange(0, 11, 1)->UseRealTime();

/// The sparse calls of BM_Sparse, by its "op" argument (compare_torch.py's SPARSE), float64: the 5-point Laplacian
/// of a 256 x 256 grid (65536 rows, 326656 values) in CSR times a vector and times 16 columns, and the coalescing
/// of 1M random positions of a 4096 x 4096 matrix (with repeats).
const std::vector<std::pair<const char*, std::function<Tensor()>>>& sparse_rows() {
  static const phasor::sparse::CSR lap = [] {
    const std::int64_t g = 256, n = g * g;
    std::vector<std::int64_t> rows, cols;
    std::vector<double> vals;
    for (std::int64_t i = 0; i < g; ++i)
      for (std::int64_t j = 0; j < g; ++j) {
        const std::int64_t r = i * g + j;
        const auto add = [&](std::int64_t c, double v) { rows.push_back(r), cols.push_back(c), vals.push_back(v); };
        if (i > 0) add(r - g, -1);
        if (j > 0) add(r - 1, -1);
        add(r, 4);
        if (j + 1 < g) add(r + 1, -1);
        if (i + 1 < g) add(r + g, -1);
      }
    std::vector<std::int64_t> idx(rows);
    idx.insert(idx.end(), cols.begin(), cols.end());
    const auto nnz = static_cast<std::int64_t>(vals.size());
    return phasor::sparse::COO(phasor::from_vector(idx, Shape{2, nnz}), phasor::from_vector(vals), {n, n}).to_csr();
  }();
  static const Tensor x = [] {
    phasor::manual_seed(12);
    return phasor::randn({65536}, phasor::float64);
  }();
  static const Tensor x16 = phasor::randn({65536, 16}, phasor::float64);
  static const Tensor pos = phasor::randint(0, 4096, {2, 1 << 20});
  static const Tensor pv = phasor::randn({1 << 20}, phasor::float64);
  static const std::vector<std::pair<const char*, std::function<Tensor()>>> ops = {
      {"csr @ x", [] { return phasor::sparse::matmul(lap, x); }},
      {"csr @ x16", [] { return phasor::sparse::matmul(lap, x16); }},
      {"coalesce", [] { return phasor::sparse::COO(pos, pv, {4096, 4096}).coalesce().values(); }},
  };
  return ops;
}

// sparse products and coalescing, one thread
void BM_Sparse(benchmark::State& st) { run_row(st, sparse_rows()); }
BENCHMARK(BM_Sparse)->ArgName("op")->DenseRange(0, 2, 1)->UseRealTime();

// Reference: the same division as a raw loop of std::complex's operator/ (libgcc's __divsc3 / __divdc3,
// what phasor's CPU engine called before) on the same values.
template <class R>
void raw_div_loop(benchmark::State& st, const Tensor& a, const Tensor& b, std::int64_t n) {
  const auto* pa = a.data<std::complex<R>>();
  const auto* pb = b.data<std::complex<R>>();
  std::vector<std::complex<R>> out(static_cast<std::size_t>(n));
  for (auto _ : st) {
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = pa[i] / pb[i];
    benchmark::ClobberMemory();
  }
}
void BM_RawDivComplexLibgcc(benchmark::State& st) {
  const auto n = st.range(0);
  phasor::manual_seed(5);
  Tensor a = complex_randn(n, st.range(1)), b = complex_randn(n, st.range(1));
  if (st.range(1) == 0) raw_div_loop<float>(st, a, b, n);
  else raw_div_loop<double>(st, a, b, n);
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_RawDivComplexLibgcc)->ArgNames({"n", "dtype"})->Args({kDiv, 0})->Args({kDiv, 1})->UseRealTime();

}  // namespace
