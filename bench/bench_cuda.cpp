// bench/bench_cuda.cpp - the CUDA backend on a GPU (issue #6), timed with CUDA events on the current
// stream (Google Benchmark's manual time; run with --benchmark_repetitions and read the medians):
//  - memory-bound kernels on 256 MiB float32 tensors against cudaMemcpy's device copy bandwidth
//    (counter GBps: bytes read + written per second);
//  - FFTs through phasor against direct cuFFT calls with the same plan (cufftPlanMany, out of place);
//  - host overhead per op: 1-element ops queued back to back (CPU time per op, one sync per batch);
//  - FNO training steps (forward, relative L2 loss, backward, Adam) of the nn issue's models and the
//    large one (batch 32, 256^2, width 64, modes 32), with the allocator's peak (counter peak_gib); the
//    small ones once more as whole steps replayed from a cuda::Graph (*_graph, capturable Adam);
//  - PDE time stepping (bench_pde's Burgers and Navier-Stokes problems), eager and replayed from a graph.
// bench/fno_torch_cuda.py times PyTorch eager on the same models in the same session. Built only with
// the CUDA backend; without a GPU every benchmark reports an error and skips.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <phasor/dispatch.hpp>
#include <phasor/phasor.hpp>

namespace ph = phasor;

namespace {

const ph::Device kDev = ph::Device::cuda(0);
constexpr std::int64_t kBig = std::int64_t{64} << 20;  // 64 Mi float32 = 256 MiB

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw std::runtime_error(std::string(what) + " failed with cufftResult " + std::to_string(r));
}

cudaStream_t stream() { return static_cast<cudaStream_t>(ph::cuda::current_stream(0).native_handle()); }

/// Registers fn under its own name behind a guard: an exception (out of memory, a CUDA or cuFFT error)
/// skips that benchmark with its message instead of ending the program (Google Benchmark does not catch),
/// so the other rows and the JSON file still come out.
#define GUARDED_BENCHMARK(fn)                                  \
  void fn##_guarded(benchmark::State& s) {                     \
    try {                                                      \
      fn(s);                                                   \
    } catch (const std::exception& e) {                        \
      s.SkipWithError(e.what());                               \
    }                                                          \
  }                                                            \
  BENCHMARK(fn##_guarded)->Name(#fn)

/// Times f() with CUDA events around it on the current stream, after two warm-up calls and a wait for
/// them (so the first sample starts on an idle GPU, as fno_torch_cuda.py's do). With reps > 1 each sample
/// is reps back-to-back calls, divided by reps: for work of a few microseconds, whose single call would
/// measure the launch path more than the GPU.
template <class F>
void gpu_time(benchmark::State& state, F&& f, int reps = 1) {
  if (!ph::cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  f();
  f();
  check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  for (auto _ : state) {
    check(cudaEventRecord(a, stream()), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) f();
    check(cudaEventRecord(b, stream()), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3 / reps);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

void set_bytes(benchmark::State& state, double bytes_per_iter) {
  state.counters["GBps"] = benchmark::Counter(bytes_per_iter, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["GBps"].value /= 1e9;
}

// ---- memory-bound kernels --------------------------------------------------------------------------------
void BM_copy_cudaMemcpy(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::Tensor a = ph::rand({kBig}, ph::float32, kDev), b = ph::empty({kBig}, ph::float32, kDev);
  gpu_time(state, [&] {
    check(cudaMemcpyAsync(b.data_ptr(), a.data_ptr(), a.nbytes(), cudaMemcpyDeviceToDevice, stream()), "cudaMemcpyAsync");
  });
  set_bytes(state, 2.0 * static_cast<double>(a.nbytes()));
}
GUARDED_BENCHMARK(BM_copy_cudaMemcpy)->UseManualTime()->Unit(benchmark::kMillisecond);

/// A phasor op on 256 MiB float32 inputs; `streams` = tensors of that size read or written per call.
template <class F>
void memory_bound(benchmark::State& state, int streams, F&& f) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::manual_seed(0);
  ph::Tensor a = ph::rand({kBig}, ph::float32, kDev), b = ph::rand({kBig}, ph::float32, kDev);
  ph::NoGradGuard ng;
  gpu_time(state, [&] { benchmark::DoNotOptimize(f(a, b)); });
  set_bytes(state, streams * static_cast<double>(a.nbytes()));
}
void BM_copy_phasor(benchmark::State& s) {
  ph::Tensor out = ph::cuda::is_available() ? ph::empty({kBig}, ph::float32, kDev) : ph::Tensor();
  memory_bound(s, 2, [&](const ph::Tensor& a, const ph::Tensor&) { return out.copy_(a); });
}
void BM_add(benchmark::State& s) { memory_bound(s, 3, [](const ph::Tensor& a, const ph::Tensor& b) { return a + b; }); }
void BM_mul_scalar_inplace(benchmark::State& s) {
  memory_bound(s, 2, [](ph::Tensor& a, const ph::Tensor&) -> ph::Tensor& { return a.mul_(1.0); });
}
void BM_exp(benchmark::State& s) { memory_bound(s, 2, [](const ph::Tensor& a, const ph::Tensor&) { return a.exp(); }); }
void BM_gelu(benchmark::State& s) { memory_bound(s, 2, [](const ph::Tensor& a, const ph::Tensor&) { return a.gelu(); }); }
void BM_sum_all(benchmark::State& s) { memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return a.sum(); }); }
void BM_sum_rows(benchmark::State& s) {
  memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return a.reshape({4096, -1}).sum({1}); });
}
void BM_amax_all(benchmark::State& s) { memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return a.amax(); }); }
// 8M rows of 8 elements: a group of 8 threads per row, 32 rows per block (Note [short rows] in src/cuda/reduce.cu)
void BM_sum_short_rows(benchmark::State& s) {
  memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return a.reshape({-1, 8}).sum({1}); });
}
void BM_argmax_short_rows(benchmark::State& s) {
  memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return ph::argmax(a.reshape({-1, 8}), 1); });
}
void BM_lerp(benchmark::State& s) {
  memory_bound(s, 3, [](const ph::Tensor& a, const ph::Tensor& b) { return ph::lerp(a, b, 0.3); });
}
// a real multiplier times a complex spectrum plus another (ETDRK4's E u + Q N, Note [mixed flat kernel]): r
// float32 (256 MiB), x, y and the result complex64 (512 MiB each): 7 streams of 256 MiB
void BM_addcmul_mixed(benchmark::State& s) {
  ph::Tensor x, y;
  if (ph::cuda::is_available()) {
    ph::manual_seed(1);
    x = ph::complex(ph::rand({kBig}, ph::float32, kDev), ph::rand({kBig}, ph::float32, kDev));
    y = ph::complex(ph::rand({kBig}, ph::float32, kDev), ph::rand({kBig}, ph::float32, kDev));
  }
  memory_bound(s, 7, [&](const ph::Tensor& r, const ph::Tensor&) { return ph::addcmul(x, r, y); });
}
// full reductions that split the one row across blocks (Note [split rows] in src/cuda/reduce.cu); GBps counts
// the input once (var reads it twice, its second pass partly from L2)
void BM_var_all(benchmark::State& s) { memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return ph::var(a); }); }
void BM_logsumexp_all(benchmark::State& s) {
  memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return ph::logsumexp(a); });
}
void BM_argmax_all(benchmark::State& s) { memory_bound(s, 1, [](const ph::Tensor& a, const ph::Tensor&) { return ph::argmax(a); }); }
// the scatters on 64M float32 values with int64 indices (3 streams: 4 + 8 bytes per value): accumulated and
// maxed into 1M bins (the atomic paths), a permutation replaced (Note [parallel replacement] in cuda/index.cu)
ph::Tensor bins_of(const ph::Tensor& b) { return (b * static_cast<double>(1 << 20)).floor().clamp_max((1 << 20) - 1).to(ph::int64); }
void BM_index_put_acc(benchmark::State& s) {
  ph::Tensor bins, acc;
  if (ph::cuda::is_available()) bins = bins_of(ph::rand({kBig}, ph::float32, kDev)), acc = ph::zeros({1 << 20}, ph::float32, kDev);
  memory_bound(s, 3, [&](const ph::Tensor& a, const ph::Tensor&) -> ph::Tensor& { return acc.index_put_({bins}, a, true); });
}
void BM_scatter_reduce_amax(benchmark::State& s) {
  ph::Tensor bins, z;
  if (ph::cuda::is_available()) bins = bins_of(ph::rand({kBig}, ph::float32, kDev)), z = ph::zeros({1 << 20}, ph::float32, kDev);
  memory_bound(s, 3, [&](const ph::Tensor& a, const ph::Tensor&) { return ph::scatter_reduce(z, 0, bins, a, "amax"); });
}
void BM_index_copy_perm(benchmark::State& s) {
  ph::Tensor perm;
  if (ph::cuda::is_available()) perm = ph::randperm(kBig, ph::int64, kDev);
  memory_bound(s, 3, [&](const ph::Tensor& a, const ph::Tensor& b) { return ph::index_copy(a, 0, perm, b); });
}
GUARDED_BENCHMARK(BM_copy_phasor)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_add)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_mul_scalar_inplace)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_exp)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_lerp)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_addcmul_mixed)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_gelu)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_sum_all)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_sum_rows)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_amax_all)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_sum_short_rows)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_argmax_short_rows)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_var_all)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_logsumexp_all)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_argmax_all)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_index_put_acc)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_scatter_reduce_amax)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_index_copy_perm)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- FFT: phasor against cuFFT with the same plan ------------------------------------------------------
struct FftCase {
  const char* name;
  int rank;
  int n[2];
  std::int64_t batch;
  bool real;  // r2c (else c2c forward)
};
const FftCase kFft[] = {
    {"c2c 2^20 x 16", 1, {1 << 20, 0}, 16, false},
    {"c2c 1024 x 4096", 1, {1024, 0}, 4096, false},
    {"r2c 256x256 x 2048", 2, {256, 256}, 2048, true},  // FNO-2D large: batch 32 x width 64
    {"r2c 64x64 x 640", 2, {64, 64}, 640, true},        // FNO-2D: batch 20 x width 32
};

ph::Shape fft_shape(const FftCase& c) {
  ph::Shape s = {c.batch};
  for (int k = 0; k < c.rank; ++k) s.push_back(c.n[k]);
  return s;
}

/// Transforms per timed sample (the smallest case is ~10 us of GPU work): fno_torch_cuda.py uses the same.
constexpr int kFftReps = 10;

void BM_fft_phasor(benchmark::State& state) {
  const FftCase& c = kFft[state.range(0)];
  state.SetLabel(c.name);
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::manual_seed(0);
  ph::Tensor x = ph::randn(fft_shape(c), c.real ? ph::float32 : ph::complex64, kDev);
  gpu_time(
      state,
      [&] {
        if (c.real) benchmark::DoNotOptimize(c.rank == 1 ? ph::fft::rfft(x) : ph::fft::rfft2(x));
        else benchmark::DoNotOptimize(c.rank == 1 ? ph::fft::fft(x) : ph::fft::fft2(x));
      },
      kFftReps);
}
GUARDED_BENCHMARK(BM_fft_phasor)->DenseRange(0, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_fft_cufft(benchmark::State& state) {
  const FftCase& c = kFft[state.range(0)];
  state.SetLabel(c.name);
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::manual_seed(0);
  ph::Tensor x = ph::randn(fft_shape(c), c.real ? ph::float32 : ph::complex64, kDev);
  ph::Shape os = fft_shape(c);
  if (c.real) os.back() = os.back() / 2 + 1;
  ph::Tensor y = ph::empty(os, ph::complex64, kDev);
  cufftHandle plan;
  int n[2] = {c.n[0], c.n[1]};
  check(cufftPlanMany(&plan, c.rank, n, nullptr, 1, 0, nullptr, 1, 0, c.real ? CUFFT_R2C : CUFFT_C2C,
                      static_cast<int>(c.batch)),
        "cufftPlanMany");
  check(cufftSetStream(plan, stream()), "cufftSetStream");
  gpu_time(
      state,
      [&] {
        if (c.real)
          check(cufftExecR2C(plan, static_cast<cufftReal*>(x.data_ptr()), static_cast<cufftComplex*>(y.data_ptr())),
                "cufftExecR2C");
        else
          check(cufftExecC2C(plan, static_cast<cufftComplex*>(x.data_ptr()), static_cast<cufftComplex*>(y.data_ptr()),
                             CUFFT_FORWARD),
                "cufftExecC2C");
      },
      kFftReps);
  cufftDestroy(plan);
}
GUARDED_BENCHMARK(BM_fft_cufft)->DenseRange(0, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- host overhead -----------------------------------------------------------------------------------------
/// 1-element a + b, 256 per batch and one sync per batch: CPU time per op is the host overhead.
void BM_host_overhead_add(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::Tensor a = ph::ones({1}, ph::float32, kDev), b = ph::ones({1}, ph::float32, kDev);
  ph::NoGradGuard ng;
  for (int i = 0; i < 256; ++i) benchmark::DoNotOptimize(a + b);
  ph::cuda::synchronize();
  for (auto _ : state) {
    for (int i = 0; i < 256; ++i) benchmark::DoNotOptimize(a + b);
    ph::cuda::synchronize();
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.counters["us_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()) * 256 * 1e-6,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
GUARDED_BENCHMARK(BM_host_overhead_add)->Unit(benchmark::kMicrosecond);

/// The same with autograd recording (requires_grad inputs), forward only.
void BM_host_overhead_add_grad(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::Tensor a = ph::ones({1}, ph::float32, kDev).requires_grad_(), b = ph::ones({1}, ph::float32, kDev);
  for (auto _ : state) {
    for (int i = 0; i < 256; ++i) benchmark::DoNotOptimize(a + b);
    ph::cuda::synchronize();
  }
  state.counters["us_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()) * 256 * 1e-6,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
GUARDED_BENCHMARK(BM_host_overhead_add_grad)->Unit(benchmark::kMicrosecond);

/// A small classifier's training step (an embedding lookup of 256 tokens in a 10000 x 128 table, a linear layer
/// to 100 classes, cross_entropy, SGD): launch-bound. deferred:0 waits for the device at the lookup's index
/// check and the loss's target check; deferred:1 defers them (cuda::set_deferred_checks, Note [deferred device
/// checks]). GPU time between events, so the waits count as the GPU idling.
void BM_classifier_step_cuda(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  struct Restore {
    ~Restore() { ph::cuda::set_deferred_checks(false); }
  } restore;
  ph::cuda::set_deferred_checks(state.range(0) != 0);
  ph::manual_seed(0);
  ph::nn::Linear head(128, 100);
  head.to(kDev);
  std::vector<ph::Tensor> params = head.parameters();
  params.push_back((ph::randn({10000, 128}) * 0.1).to(kDev).requires_grad_());
  ph::optim::SGD sgd(params, ph::optim::SGDOptions(0.1));
  const ph::Tensor tokens = ph::randint(0, 10000, {256}).to(kDev), target = ph::randint(0, 100, {256}).to(kDev);
  gpu_time(state, [&] {
    sgd.zero_grad();
    ph::nn::functional::cross_entropy(head.forward(ph::index_select(params.back(), 0, tokens)), target).backward();
    sgd.step();
  });
}
GUARDED_BENCHMARK(BM_classifier_step_cuda)->ArgName("deferred")->DenseRange(0, 1)->UseManualTime()->Unit(
    benchmark::kMicrosecond);

// ---- linear algebra (Note [LU on the device] in src/linalg/solve.cpp) ----------------------------------------
/// The float32 factorizations on the GPU, eager (each waits for its failure flag, as torch.linalg's do):
/// 0: solve of 512 systems of order 16 (cuBLAS's batched LU), 1: solve of one system of order 2048 with 16
/// right-hand sides (cuSOLVER's getrf), 2: cholesky of 512 matrices of order 16 (potrfBatched), 3: cholesky of
/// one matrix of order 2048 (potrf).
void BM_linalg_cuda(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  const bool batched = state.range(0) % 2 == 0, cholesky = state.range(0) >= 2;
  const std::int64_t n = batched ? 16 : 2048;
  const ph::Shape batch = batched ? ph::Shape{512} : ph::Shape{};
  ph::Shape ms = batch, bs = batch;
  ms.insert(ms.end(), {n, n});
  bs.insert(bs.end(), {n, 16});
  ph::manual_seed(0);
  const ph::Tensor g = ph::randn(ms, ph::float32, kDev);
  const ph::Tensor a = cholesky ? ph::matmul(g, g.transpose(-1, -2)) / static_cast<double>(n) + ph::eye(n, std::nullopt, ph::float32, kDev)
                                : g / std::sqrt(static_cast<double>(n)) + ph::eye(n, std::nullopt, ph::float32, kDev) * 2.0;
  const ph::Tensor b = ph::randn(bs, ph::float32, kDev);
  gpu_time(state, [&] { benchmark::DoNotOptimize(cholesky ? ph::linalg::cholesky(a) : ph::linalg::solve(a, b)); });
}
GUARDED_BENCHMARK(BM_linalg_cuda)->DenseRange(0, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);

/// The float32 decompositions on the GPU (src/linalg/cusolver_decomp.cpp), eager: 0: qr of a 1024 x 512, 1: eigh of
/// a symmetric 512 x 512, 2: svd (reduced) of a 1024 x 256, 3: eigh of 512 symmetric 16 x 16 matrices.
void BM_decomp_cuda(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::manual_seed(0);
  const int op = static_cast<int>(state.range(0));
  const ph::Tensor a = ph::randn({1024, op == 2 ? 256 : 512}, ph::float32, kDev);
  const ph::Tensor g = ph::randn(op == 3 ? ph::Shape{512, 16, 16} : ph::Shape{512, 512}, ph::float32, kDev);
  const ph::Tensor h = g + g.transpose(-1, -2);
  gpu_time(state, [&] {
    if (op == 0) benchmark::DoNotOptimize(ph::linalg::qr(a).first);
    else if (op == 2) benchmark::DoNotOptimize(std::get<0>(ph::linalg::svd(a, false)));
    else benchmark::DoNotOptimize(ph::linalg::eigh(h).second);
  });
}
GUARDED_BENCHMARK(BM_decomp_cuda)->DenseRange(0, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- FNO training steps --------------------------------------------------------------------------------------
/// One FNO training step per sample. Graphed: the whole step (forward, backward, Adam with its step
/// counts on the GPU: capturable) replayed from a cuda::Graph captured after two eager steps (Note [CUDA
/// graphs]).
void run_fno(benchmark::State& state, const ph::nn::FNOOptions& opt, const ph::Shape& xs, const ph::Shape& ys,
             bool graphed = false,
             ph::nn::functional::TruncatedTransform transform = ph::nn::functional::TruncatedTransform::automatic) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  struct Choice {  // the truncated transforms' path for this row only
    ph::nn::functional::TruncatedTransform before;
    ~Choice() { ph::nn::functional::set_truncated_transform(before); }
  } choice{ph::nn::functional::set_truncated_transform(transform)};
  ph::manual_seed(0);
  ph::nn::FNO model(opt);
  model.to(kDev);
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(1e-3).capturable(graphed));
  const ph::Tensor x = ph::randn(xs, ph::float32, kDev), y = ph::randn(ys, ph::float32, kDev);
  auto step = [&] {
    ph::nn::functional::relative_lp_loss(model.forward(x), y).backward();
    adam.step();
  };
  ph::reset_peak_memory_stats(kDev);
  if (!graphed) {
    gpu_time(state, [&] {
      adam.zero_grad();
      step();
    });
  } else {
    for (int i = 0; i < 2; ++i) {
      adam.zero_grad();
      step();
    }
    adam.zero_grad();  // the captured backward makes the gradients; each replay overwrites them
    ph::cuda::Graph graph;
    graph.capture(step);
    gpu_time(state, [&] { graph.replay(); });
  }
  state.counters["peak_gib"] = static_cast<double>(ph::memory_stats(kDev).peak_bytes) / (1 << 30);
}
void BM_FNO1d_step_cuda(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4)
              .projection_channels(128),
          {20, 1, 1024}, {20, 1, 1024});
}
void BM_FNO2d_step_cuda(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(32).modes({12, 12}).n_layers(4)
              .projection_channels(128),
          {20, 3, 64, 64}, {20, 1, 64, 64});
}
void BM_FNO2d_large_step_cuda(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(64).modes({32, 32}).n_layers(4)
              .projection_channels(128),
          {32, 3, 256, 256}, {32, 1, 256, 256});
}
void BM_FNO1d_step_cuda_graph(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4)
              .projection_channels(128),
          {20, 1, 1024}, {20, 1, 1024}, true);
}
void BM_FNO2d_step_cuda_graph(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(32).modes({12, 12}).n_layers(4)
              .projection_channels(128),
          {20, 3, 64, 64}, {20, 1, 64, 64}, true);
}
// the same steps with the truncated transforms forced down the other path (automatic: matrix products
// for the small models' dims; for the large one along the last dim only, its 2m = 64 of 256 rows along
// the other taking an FFT): which wins on this GPU
constexpr auto kByFft = ph::nn::functional::TruncatedTransform::fft;
constexpr auto kByMatrix = ph::nn::functional::TruncatedTransform::matrix;
void BM_FNO1d_step_cuda_fft(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(1).out_channels(1).hidden_channels(64).modes({16}).n_layers(4)
              .projection_channels(128),
          {20, 1, 1024}, {20, 1, 1024}, false, kByFft);
}
void BM_FNO2d_step_cuda_fft(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(32).modes({12, 12}).n_layers(4)
              .projection_channels(128),
          {20, 3, 64, 64}, {20, 1, 64, 64}, false, kByFft);
}
void BM_FNO2d_large_step_cuda_fft(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(64).modes({32, 32}).n_layers(4)
              .projection_channels(128),
          {32, 3, 256, 256}, {32, 1, 256, 256}, false, kByFft);
}
void BM_FNO2d_large_step_cuda_matrix(benchmark::State& state) {
  run_fno(state,
          ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(64).modes({32, 32}).n_layers(4)
              .projection_channels(128),
          {32, 3, 256, 256}, {32, 1, 256, 256}, false, kByMatrix);
}
GUARDED_BENCHMARK(BM_FNO1d_step_cuda)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_step_cuda)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_large_step_cuda)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO1d_step_cuda_graph)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_step_cuda_graph)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO1d_step_cuda_fft)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_step_cuda_fft)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_large_step_cuda_fft)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_FNO2d_large_step_cuda_matrix)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- PDE time stepping -------------------------------------------------------------------------------------
constexpr std::int64_t kPdeSteps = 100;
/// bench_pde's problems on the GPU (float64, ETDRK4 through pde::Integrator, the forcing on the device):
/// kPdeSteps steps per sample, run eagerly or replayed from a cuda::Graph that captured them (Note [CUDA
/// graphs]); counter per_step: seconds per step.
void run_pde(benchmark::State& state, bool navier_stokes, bool graphed) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::NoGradGuard ng;
  ph::manual_seed(0);
  std::unique_ptr<ph::pde::Equation> eq;
  ph::Tensor u;
  double dt;
  if (navier_stokes) {  // 256^2, nu = 1e-3, Kolmogorov-type forcing, the FNO paper's initial vorticity
    const ph::pde::Grid g({256, 256});
    const auto xy = g.mesh(ph::float64);
    const ph::Tensor s = (xy[0] + xy[1]) * (2 * 3.14159265358979323846);
    eq = std::make_unique<ph::pde::NavierStokes2D>(g, 1e-3, ((s.sin() + s.cos()) * 0.1).to(kDev));
    u = ph::pde::to_spectral(g, ph::pde::gaussian_random_field(g, 1, std::pow(7.0, 0.75), 7.0, 2.5, ph::float64));
    dt = 1e-3;
  } else {  // viscous Burgers, 8192 points, nu = 0.01
    const ph::pde::Grid g({8192});
    eq = std::make_unique<ph::pde::Burgers>(g, 0.01);
    u = ph::pde::to_spectral(g, ph::pde::gaussian_random_field(g, 1, 25.0, 5.0, 2.0, ph::float64));
    dt = 1e-4;
  }
  u = u.to(kDev);
  const ph::pde::Integrator integ(*eq, dt, ph::pde::Stepper::etdrk4);
  ph::Tensor out;
  auto run = [&] { out = integ.steps(u, 0.0, kPdeSteps); };
  run();  // plans, the coefficients' device copies
  if (!graphed) {
    gpu_time(state, run);
  } else {
    ph::cuda::Graph graph;
    graph.capture(run);
    gpu_time(state, [&] { graph.replay(); });
  }
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(kPdeSteps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_Burgers1d_steps_cuda(benchmark::State& state) { run_pde(state, false, false); }
void BM_Burgers1d_steps_cuda_graph(benchmark::State& state) { run_pde(state, false, true); }
void BM_NS2d_steps_cuda(benchmark::State& state) { run_pde(state, true, false); }
void BM_NS2d_steps_cuda_graph(benchmark::State& state) { run_pde(state, true, true); }
GUARDED_BENCHMARK(BM_Burgers1d_steps_cuda)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_Burgers1d_steps_cuda_graph)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_NS2d_steps_cuda)->UseManualTime()->Unit(benchmark::kMillisecond);
GUARDED_BENCHMARK(BM_NS2d_steps_cuda_graph)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- where a step's GPU time goes ----------------------------------------------------------------------------
/// One warm FNO-2D large training step under phasor::profiler, whose GPU spans (timing events around every op
/// with GPU inputs and every range: the backward pass, Adam's fused update) split its GPU time by op: the table,
/// sorted by GPU self time, on stderr (the last lines of scripts/gpu-check.sh repeat its top); the step's time
/// as the benchmark's; counters: the share of the step inside the outermost spans (the rest: the GPU waiting for
/// the host) and the fewest bytes those ops move; the three largest by GPU self time as the label.
void BM_FNO2d_large_step_profile(benchmark::State& state) {
  if (!ph::cuda::is_available()) return state.SkipWithError("no CUDA device");
  ph::manual_seed(0);
  ph::nn::FNO model(ph::nn::FNOOptions().in_channels(3).out_channels(1).hidden_channels(64).modes({32, 32}).n_layers(4)
                        .projection_channels(128));
  model.to(kDev);
  ph::optim::Adam adam(model.parameters(), ph::optim::AdamOptions(1e-3));
  const ph::Tensor x = ph::randn({32, 3, 256, 256}, ph::float32, kDev), y = ph::randn({32, 1, 256, 256}, ph::float32, kDev);
  auto step = [&] {
    adam.zero_grad();
    ph::nn::functional::relative_lp_loss(model.forward(x), y).backward();
    adam.step();
  };
  for (int i = 0; i < 2; ++i) step();  // warm: plans, caches, Adam state
  ph::cuda::synchronize();
  for (auto _ : state) {
    ph::profiler::Profiler prof;
    ph::cuda::Event begin(true), end(true);
    begin.record();
    prof.start();
    step();
    end.record();
    const ph::profiler::Profile p = prof.stop();  // waits for the spans
    end.synchronize();
    const double total = begin.elapsed_time(end);
    state.SetIterationTime(total / 1e3);
    // the outermost op spans (a range's span also holds the GPU's waits for the host inside it, so ranges count
    // only where no op inside them has a span: Adam's fused update)
    const auto& rs = p.records();
    std::vector<bool> inner_op(rs.size(), false);  // a range with an op span inside
    for (const ph::profiler::Record& r : rs)
      if (!r.range && r.gpu_device >= 0)
        for (std::int64_t q = r.parent; q >= 0; q = rs[static_cast<std::size_t>(q)].parent) inner_op[static_cast<std::size_t>(q)] = true;
    double covered = 0, bytes = 0;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const ph::profiler::Record& r = rs[i];
      if (r.gpu_device < 0 || (r.range && inner_op[i])) continue;
      bool outer = true;
      for (std::int64_t q = r.parent; q >= 0 && outer; q = rs[static_cast<std::size_t>(q)].parent)
        outer = rs[static_cast<std::size_t>(q)].range || rs[static_cast<std::size_t>(q)].gpu_device < 0;
      if (outer) covered += r.gpu_us / 1e3, bytes += r.bytes;
    }
    std::fprintf(stderr, "\n== GPU time per op, one FNO-2D large step: %.2f ms, %.1f%% inside op spans; %.2f GB moved at least\n%s",
                 total, 100.0 * covered / total, bytes / 1e9, p.table("gpu_self", 20).c_str());
    state.counters["covered_pct"] = 100.0 * covered / total;
    state.counters["min_GB"] = bytes / 1e9;
    const auto st = p.stats("gpu_self");
    std::string top;
    for (std::size_t i = 0; i < st.size() && i < 3; ++i)
      top += (i ? ", " : "") + st[i].name + " " + std::to_string(static_cast<int>(100.0 * st[i].gpu_self_us / 1e3 / total)) + "%";
    state.SetLabel(top);
  }
}
GUARDED_BENCHMARK(BM_FNO2d_large_step_profile)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
