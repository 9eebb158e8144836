// bench/bench_fft.cpp - phasor::fft vs raw FFTW in the same binary, identical plan flags and
// thread counts: forward c2c and r2c, float32 and float64, on the shapes of issue #3; plus the
// forward and forward+backward of a spectral filter irfft(rfft(x) * w, n).
//
// Threads: phasor gives a plan get_num_threads() FFTW threads when the transform has at least
// 2^18 points and 1 thread otherwise (src/fft/fftw_backend.cpp, Note [fft threads]); the raw
// FFTW runs here use the same rule. Planner effort: "estimate" (phasor's default) and
// "measure" (fft::set_planner_effort), the raw plans use the same flag. The raw FFTW runs use the
// same input and output arrays as phasor's (see BM_fftw): the arrays' relative placement alone
// moves FFTW's time by ~5% at n = 4096. The counters in_page_off/out_page_off show it.
//
// Run:  ./build/bench/bench_fft --benchmark_min_time=0.2s
//       PHASOR_BENCH_THREADS=2 ./build/bench/bench_fft      (thread count, default 1)
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <phasor/phasor.hpp>
#include <type_traits>
#include <string>
#include <vector>

namespace ph = phasor;
namespace F = phasor::fft;

namespace {

struct ShapeCase {
  const char* name;
  ph::Shape shape;
  std::vector<std::int64_t> dims;  // transform dims (the rest is batch)
};

const std::vector<ShapeCase>& cases() {
  static const std::vector<ShapeCase> c = {
      {"1d_256", {256}, {0}},
      {"1d_4096", {4096}, {0}},
      {"1d_65536", {65536}, {0}},
      {"1d_1048576", {1 << 20}, {0}},
      {"batch_256x1024", {256, 1024}, {1}},
      {"2d_256x256", {256, 256}, {0, 1}},
      {"2d_1024x1024", {1024, 1024}, {0, 1}},
      {"3d_64x64x64", {64, 64, 64}, {0, 1, 2}},
  };
  return c;
}

int bench_threads() {
  const char* e = std::getenv("PHASOR_BENCH_THREADS");
  return e ? std::max(1, std::atoi(e)) : 1;
}

/// The thread rule phasor applies per plan (Note [fft threads]).
int threads_for(std::int64_t points) { return points >= (std::int64_t(1) << 18) ? ph::get_num_threads() : 1; }

std::int64_t numel(const ph::Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

unsigned flags_of(bool measure) { return measure ? FFTW_MEASURE : FFTW_ESTIMATE; }

/// guru64 dims of a row-major array with transform dims `dims` (halved last dim for r2c output).
void guru_dims(const ph::Shape& shape, const std::vector<std::int64_t>& dims, bool r2c, std::vector<fftw_iodim64>& rank,
               std::vector<fftw_iodim64>& howmany) {
  ph::Shape out_shape = shape;
  if (r2c) out_shape[static_cast<std::size_t>(dims.back())] = shape[static_cast<std::size_t>(dims.back())] / 2 + 1;
  auto strides = [](const ph::Shape& s) {
    ph::Shape st(s.size());
    std::int64_t acc = 1;
    for (std::size_t i = s.size(); i-- > 0;) {
      st[i] = acc;
      acc *= s[i];
    }
    return st;
  };
  const ph::Shape is = strides(shape), os = strides(out_shape);
  rank.clear();
  howmany.clear();
  for (auto d : dims) {
    const auto k = static_cast<std::size_t>(d);
    rank.push_back({shape[k], is[k], os[k]});
  }
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(k)) == dims.end())
      howmany.push_back({shape[k], is[k], os[k]});
}

// ---- the same problem through phasor ---------------------------------------------------------------
ph::Dtype input_dtype(bool r2c, bool single) {
  return r2c ? (single ? ph::float32 : ph::float64) : (single ? ph::complex64 : ph::complex128);
}
ph::Tensor phasor_forward(const ph::Tensor& x, const ShapeCase& c, bool r2c) {
  const bool one = c.dims.size() == 1;
  if (r2c) return one ? F::rfft(x, std::nullopt, c.dims[0]) : F::rfftn(x, std::nullopt, c.dims);
  return one ? F::fft(x, std::nullopt, c.dims[0]) : F::fftn(x, std::nullopt, c.dims);
}
/// Offset of an address within its 4 KiB page (the placement of the two arrays relative to each
/// other changes FFTW's own time by up to ~5% at n = 4096, see bench/README_fft.md).
double page_offset(const void* p) { return static_cast<double>(reinterpret_cast<std::uintptr_t>(p) % 4096); }

// ---- raw FFTW ---------------------------------------------------------------------------------------
// Identical work: the raw plan runs on the very arrays phasor's benchmark gets - the input made
// the same way and the output block phasor's caching allocator hands out for this problem -
// so both sides see the same data placement; only phasor's per-call work differs.
template <bool Single>
void BM_fftw(benchmark::State& state, const ShapeCase& c, bool r2c, bool measure) {
  ph::set_num_threads(bench_threads());
  const std::int64_t n = numel(c.shape);
  std::vector<fftw_iodim64> rank, hm;
  guru_dims(c.shape, c.dims, r2c, rank, hm);
  const int threads = threads_for(n);
  ph::manual_seed(0);
  ph::Tensor x = ph::randn(c.shape, input_dtype(r2c, Single));
  F::set_planner_effort(F::Effort::estimate);
  ph::Tensor y = phasor_forward(x, c, r2c);  // the output block (its values are overwritten below)
  const ph::Tensor x0 = x.clone();           // planning with FFTW_MEASURE overwrites the arrays
  void* in = x.data_ptr();
  void* out = y.data_ptr();
  using R = std::conditional_t<Single, float, double>;
  if constexpr (Single) {
    fftwf_init_threads();
    fftwf_plan_with_nthreads(threads);
    fftwf_plan p = r2c ? fftwf_plan_guru64_dft_r2c(static_cast<int>(rank.size()), rank.data(),
                                                   static_cast<int>(hm.size()), hm.data(), static_cast<R*>(in),
                                                   static_cast<fftwf_complex*>(out), flags_of(measure))
                       : fftwf_plan_guru64_dft(static_cast<int>(rank.size()), rank.data(), static_cast<int>(hm.size()),
                                               hm.data(), static_cast<fftwf_complex*>(in),
                                               static_cast<fftwf_complex*>(out), FFTW_FORWARD, flags_of(measure));
    std::memcpy(in, x0.data_ptr(), x0.nbytes());
    for (auto _ : state) {
      fftwf_execute(p);
      benchmark::DoNotOptimize(out);
    }
    fftwf_destroy_plan(p);
  } else {
    fftw_init_threads();
    fftw_plan_with_nthreads(threads);
    fftw_plan p = r2c ? fftw_plan_guru64_dft_r2c(static_cast<int>(rank.size()), rank.data(),
                                                 static_cast<int>(hm.size()), hm.data(), static_cast<R*>(in),
                                                 static_cast<fftw_complex*>(out), flags_of(measure))
                      : fftw_plan_guru64_dft(static_cast<int>(rank.size()), rank.data(), static_cast<int>(hm.size()),
                                             hm.data(), static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out),
                                             FFTW_FORWARD, flags_of(measure));
    std::memcpy(in, x0.data_ptr(), x0.nbytes());
    for (auto _ : state) {
      fftw_execute(p);
      benchmark::DoNotOptimize(out);
    }
    fftw_destroy_plan(p);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["threads"] = threads;
  state.counters["in_page_off"] = page_offset(in);
  state.counters["out_page_off"] = page_offset(out);
}

// ---- phasor ------------------------------------------------------------------------------------------
void BM_phasor(benchmark::State& state, const ShapeCase& c, bool r2c, bool single, bool measure) {
  ph::set_num_threads(bench_threads());
  F::set_planner_effort(measure ? F::Effort::measure : F::Effort::estimate);
  ph::manual_seed(0);
  ph::Tensor x = ph::randn(c.shape, input_dtype(r2c, single));
  const void* out = phasor_forward(x, c, r2c).data_ptr();  // plan (and measure) outside the timing loop
  for (auto _ : state) {
    ph::Tensor y = phasor_forward(x, c, r2c);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  F::set_planner_effort(F::Effort::estimate);
  state.SetItemsProcessed(state.iterations() * numel(c.shape));
  state.counters["threads"] = threads_for(numel(c.shape));
  state.counters["in_page_off"] = page_offset(x.data_ptr());
  state.counters["out_page_off"] = page_offset(out);
}

// ---- spectral filter: irfft(rfft(x) * w, n) on (64, 4096) float32 -------------------------------------
void BM_filter(benchmark::State& state, bool backward) {
  ph::set_num_threads(bench_threads());
  ph::manual_seed(0);
  const std::int64_t n = 4096;
  ph::Tensor x = ph::randn({64, n}, ph::float32).requires_grad_(backward);
  ph::Tensor w = ph::randn({n / 2 + 1}, ph::complex64).requires_grad_(backward);
  ph::Tensor g = ph::randn({64, n}, ph::float32);
  for (auto _ : state) {
    if (backward) {
      ph::Tensor y = F::irfft(F::rfft(x) * w, n);
      y.backward(g);
      benchmark::DoNotOptimize(x.grad().data_ptr());
      x.set_grad(ph::Tensor());
      w.set_grad(ph::Tensor());
    } else {
      ph::NoGradGuard ng;
      ph::Tensor y = F::irfft(F::rfft(x) * w, n);
      benchmark::DoNotOptimize(y.data_ptr());
    }
  }
}

int register_all() {
  for (bool measure : {false, true}) {
    const std::string eff = measure ? "measure" : "estimate";
    for (const auto& c : cases()) {
      for (bool r2c : {false, true}) {
        for (bool single : {true, false}) {
          const std::string tag =
              std::string(r2c ? "r2c" : "c2c") + "/" + (single ? "f32" : "f64") + "/" + c.name + "/" + eff;
          benchmark::RegisterBenchmark(("fftw/" + tag).c_str(), [c, r2c, single, measure](benchmark::State& s) {
            if (single)
              BM_fftw<true>(s, c, r2c, measure);
            else
              BM_fftw<false>(s, c, r2c, measure);
          })->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("phasor/" + tag).c_str(), [c, r2c, single, measure](benchmark::State& s) {
            BM_phasor(s, c, r2c, single, measure);
          })->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  benchmark::RegisterBenchmark("filter/forward/64x4096/f32", [](benchmark::State& s) {
    BM_filter(s, false);
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("filter/forward_backward/64x4096/f32", [](benchmark::State& s) {
    BM_filter(s, true);
  })->Unit(benchmark::kMicrosecond);
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
