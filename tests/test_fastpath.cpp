// tests/test_fastpath.cpp - the per-call fast paths: recycled tensor bookkeeping (Note [small
// blocks], src/core/allocator.cpp) and the 1-D FFT fast path with its per-thread plan memo (Note
// [fft fast path], src/fft/primitives.cpp). References are independent: naive long double DFTs
// and the general (non-contiguous) FFT path, which the memo never serves. Also the inline list
// (src/core/small_vec.hpp) behind the FFT's dims and a convolution's geometry.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <phasor/phasor.hpp>
#include <thread>
#include <vector>

#include "../src/core/small_vec.hpp"

using namespace phasor;
namespace F = phasor::fft;
using cd = std::complex<double>;
using cld = std::complex<long double>;

namespace {

/// Naive forward DFT in long double of a complex128 vector.
std::vector<cld> naive_dft(const std::vector<cd>& x) {
  const std::size_t n = x.size();
  const long double pi = std::acos(-1.0L);
  std::vector<cld> y(n);
  for (std::size_t k = 0; k < n; ++k) {
    cld acc = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const long double a = -2 * pi * static_cast<long double>((j * k) % n) / static_cast<long double>(n);
      acc += cld(x[j].real(), x[j].imag()) * cld(std::cos(a), std::sin(a));
    }
    y[k] = acc;
  }
  return y;
}

/// Relative L2 error of `got` against the long double reference.
double rel_err(const std::vector<cd>& got, const std::vector<cld>& ref) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(cld(got[i].real(), got[i].imag()) - ref[i]);
    den += std::norm(ref[i]);
  }
  return static_cast<double>(std::sqrt(num / den));
}

double max_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item().to_double(); }

}  // namespace

TEST_CASE("fft fast path: views at every 8-byte offset get plans for their own alignment") {
  // A contiguous view starting k elements into a buffer has another SIMD alignment than the
  // buffer; the plan memo must not reuse the previous call's plan for it.
  manual_seed(3);
  const std::int64_t n = 256;
  {
    // complex64 views one element apart differ in FFTW's alignment class: a second plan is made
    // (a memo hit would have reused the first one; FFTW's codelets may even run it correctly)
    F::clear_plan_cache();
    Tensor buf = randn({n + 1}, complex64);
    F::fft(buf.narrow(0, 0, n));
    CHECK(F::plan_cache_size() == 1);
    F::fft(buf.narrow(0, 1, n));
    CHECK(F::plan_cache_size() == 2);
    F::fft(buf.narrow(0, 0, n));
    CHECK(F::plan_cache_size() == 2);
  }
  for (Dtype dt : {complex64, complex128}) {
    Tensor buf = randn({n + 8}, dt);
    for (std::int64_t k : {0, 1, 2, 3, 4, 0, 3}) {
      Tensor v = buf.narrow(0, k, n);
      REQUIRE(v.is_contiguous());
      const std::vector<cd> xv = to_vector<cd>(v);
      const double err = rel_err(to_vector<cd>(F::fft(v)), naive_dft(xv));
      CHECK(err < (dt == complex64 ? 1e-6 : 1e-14));
      // the same data through the general path (a non-contiguous view of a doubled buffer)
      Tensor strided = v.unsqueeze(1).expand({n, 2}).contiguous().select(1, 0);
      REQUIRE(!strided.is_contiguous());
      CHECK(max_diff(F::fft(v), F::fft(strided)) <= (dt == complex64 ? 1e-4 : 1e-11));
    }
  }
}

TEST_CASE("fft fast path: rfft/irfft (odd and even n) and ifft match the general path, batched") {
  manual_seed(4);
  for (std::int64_t n : {255, 256}) {
    Tensor x = randn({3, n}, float64);
    Tensor xt = x.t().contiguous().t();  // same values, strides (1, 3): the general path
    REQUIRE(!xt.is_contiguous());
    Tensor X = F::rfft(x);
    CHECK(max_diff(X, F::rfft(xt)) < 1e-12);
    CHECK(max_diff(F::irfft(X, n), x) < 1e-12);
    CHECK(max_diff(F::irfft(X, n), F::irfft(X.t().contiguous().t(), n)) < 1e-12);
    Tensor z = randn({3, n}, complex128);
    CHECK(max_diff(F::ifft(F::fft(z, std::nullopt, -1, F::Norm::ortho), std::nullopt, -1, F::Norm::ortho), z) <
          1e-12);
  }
}

TEST_CASE("fft fast path: the plan memo follows clear_plan_cache and capacity changes") {
  const std::size_t cap0 = F::plan_cache_capacity();
  Tensor x = randn({128}, complex128);
  const Tensor y0 = F::fft(x);
  F::clear_plan_cache();
  CHECK(F::plan_cache_size() == 0);
  CHECK(max_diff(F::fft(x), y0) == 0);
  CHECK(F::plan_cache_size() == 1);  // the memo did not answer: the plan was made again
  F::set_plan_cache_capacity(0);
  CHECK(max_diff(F::fft(x), y0) == 0);
  CHECK(max_diff(F::fft(x), y0) == 0);
  CHECK(F::plan_cache_size() == 0);
  F::set_plan_cache_capacity(cap0);
  CHECK(max_diff(F::fft(x), y0) == 0);
  CHECK(F::plan_cache_size() == 1);
}

TEST_CASE("recycled tensors start clean: no autograd state, offset or old strides") {
  for (int round = 0; round < 3; ++round) {
    {
      Tensor a = ones({4, 5}, float64).requires_grad_();
      Tensor v = a.t().narrow(0, 1, 3);  // a view with an offset
      (v * 2.0).sum().backward();
      CHECK(a.grad().defined());
    }
    std::vector<Tensor> ts;
    for (int i = 0; i < 200; ++i) ts.push_back(empty({2, 3}, float32));
    for (const Tensor& t : ts) {
      CHECK(!t.requires_grad());
      CHECK(!t.grad().defined());
      CHECK(t.storage_offset() == 0);
      CHECK(t.strides() == Shape{3, 1});
      CHECK(t.shape() == Shape{2, 3});
    }
  }
}

TEST_CASE("tensors made on one thread and dropped on another; memory stats stay exact") {
  const auto before = memory_stats().current_bytes;
  for (int round = 0; round < 3; ++round) {
    std::vector<Tensor> made(300);
    std::thread t([&] {
      for (std::size_t i = 0; i < made.size(); ++i) made[i] = full({static_cast<std::int64_t>(i % 7) + 1}, double(i));
    });
    t.join();
    for (std::size_t i = 0; i < made.size(); ++i) CHECK(made[i].sum().item().to_double() == double(i) * double(i % 7 + 1));
    std::vector<Tensor> to_drop(300);
    for (auto& x : to_drop) x = ones({16}, complex64);
    std::thread d([v = std::move(to_drop)]() mutable { v.clear(); });  // dropped on the other thread
    d.join();
    made.clear();
    CHECK(memory_stats().current_bytes == before);
  }
}

TEST_CASE("SmallVec: inline up to N, spills to the heap beyond, copies and compares by value") {
  using V = phasor::detail::SmallVec<std::int64_t, 3>;
  V a{1, 2, 3};
  CHECK(a.size() == 3);
  CHECK(a.to_vector() == std::vector<std::int64_t>{1, 2, 3});
  const std::int64_t* inline_data = a.data();
  a.push_back(4);  // spills: the first N move to the heap
  CHECK(a.data() != inline_data);
  CHECK(a.to_vector() == std::vector<std::int64_t>{1, 2, 3, 4});
  V b = a;  // a spilled copy is a deep copy
  b[0] = 9;
  CHECK(a[0] == 1);
  CHECK(b.back() == 4);
  V c(std::vector<std::int64_t>{5, 6});
  c = b;  // inline <- spilled
  CHECK(c == b);
  c = V(2, 7);  // spilled <- inline
  CHECK(c.to_vector() == std::vector<std::int64_t>{7, 7});
  CHECK(c.data() != b.data());
  c.assign(5, 0);
  CHECK(c.to_vector() == std::vector<std::int64_t>(5, 0));
  c.assign(1, 8);
  CHECK(c.to_vector() == std::vector<std::int64_t>{8});
  CHECK_FALSE(c == V{8, 0});
  c.clear();
  CHECK(c.empty());
  CHECK(c == V());
}
