// bench/bench_matmul.cpp - matmul through phasor vs raw cblas gemm in the same binary.
// Counter GFLOP, reported as a rate (GFLOP/s); a complex multiply-add counts as 8 real flops, a real one as 2.
//   ./bench_matmul --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <complex>
#include <phasor/phasor.hpp>

using namespace phasor;

namespace {

constexpr std::int64_t kN = 1024;

double flops_per_gemm(std::int64_t n, std::int64_t m, std::int64_t k, bool complex) {
  return (complex ? 8.0 : 2.0) * static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k);
}

void set_gflops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP"] =  // a rate: shown as GFLOP/s
      benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_phasor_matmul(benchmark::State& state, Dtype dtype) {
  const std::int64_t n = state.range(0);
  manual_seed(0);
  Tensor a = randn({n, n}, dtype), b = randn({n, n}, dtype);
  for (auto _ : state) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, flops_per_gemm(n, n, n, is_complex(dtype)));
}

void BM_cblas_sgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  manual_seed(0);
  Tensor a = randn({n, n}, float32), b = randn({n, n}, float32), c = empty({n, n}, float32);
  const auto N = static_cast<blasint>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a.data<float>(), N, b.data<float>(), N,
                0.0f, c.data<float>(), N);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, flops_per_gemm(n, n, n, false));
}

void BM_cblas_cgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  manual_seed(0);
  Tensor a = randn({n, n}, complex64), b = randn({n, n}, complex64), c = empty({n, n}, complex64);
  const auto N = static_cast<blasint>(n);
  const std::complex<float> one(1, 0), zero(0, 0);
  for (auto _ : state) {
    cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, &one, a.data_ptr(), N, b.data_ptr(), N, &zero,
                c.data_ptr(), N);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, flops_per_gemm(n, n, n, true));
}

/// A batch of products: small ones (the FNO spectral mixing shape) run one per thread, large ones threaded
/// by OpenBLAS (Note [batched gemm threading]); phasor's batched path.
void BM_phasor_bmm(benchmark::State& state, Dtype dtype) {
  const std::int64_t batch = state.range(0), n = state.range(1);
  manual_seed(0);
  Tensor a = randn({batch, n, n}, dtype), b = randn({batch, n, n}, dtype);
  for (auto _ : state) {
    Tensor c = bmm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, static_cast<double>(batch) * flops_per_gemm(n, n, n, is_complex(dtype)));
}

/// The same batch as a plain loop of cblas gemm calls.
void BM_cblas_loop(benchmark::State& state, Dtype dtype) {
  const std::int64_t batch = state.range(0), n = state.range(1);
  manual_seed(0);
  Tensor a = randn({batch, n, n}, dtype), b = randn({batch, n, n}, dtype), c = empty({batch, n, n}, dtype);
  const auto N = static_cast<blasint>(n);
  const std::complex<float> one(1, 0), zero(0, 0);
  const std::int64_t step = n * n;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < batch; ++i) {
      if (dtype == complex64)
        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, &one, a.data<std::complex<float>>() + i * step,
                    N, b.data<std::complex<float>>() + i * step, N, &zero, c.data<std::complex<float>>() + i * step, N);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a.data<float>() + i * step, N,
                    b.data<float>() + i * step, N, 0.0f, c.data<float>() + i * step, N);
    }
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_gflops(state, static_cast<double>(batch) * flops_per_gemm(n, n, n, is_complex(dtype)));
}

void small_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {4, 8, 16, 24, 32, 64}) b->Args({(1 << 18) / (n * n), n});
}

/// Batches of products above kSmallGemm multiply-adds each (OpenBLAS threads each call).
void large_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t n : {128, 256, 512}) b->Args({(1 << 21) / (n * n), n});
}

}  // namespace

BENCHMARK_CAPTURE(BM_phasor_matmul, float32, float32)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cblas_sgemm)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_phasor_matmul, complex64, complex64)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cblas_cgemm)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_phasor_bmm, complex64, complex64)->Apply(small_args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_cblas_loop, complex64, complex64)->Apply(small_args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_phasor_bmm, float32, float32)->Apply(small_args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_cblas_loop, float32, float32)->Apply(small_args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_phasor_bmm, float32_large, float32)->Apply(large_args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_cblas_loop, float32_large, float32)->Apply(large_args)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
