// tests/test_creation.cpp - creation functions (filled tensors, host data, ranges, eye) and random
// generation (reproducibility, distributions, thread-count independence).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <phasor/phasor.hpp>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;
using cd = std::complex<double>;

namespace {

/// Restores the default dtype and thread count at scope exit.
struct DefaultsGuard {
  Dtype dt = default_dtype();
  int threads = get_num_threads();
  ~DefaultsGuard() {
    set_default_dtype(dt);
    set_num_threads(threads);
  }
};
}  // namespace

TEST_CASE("filled tensors and *_like") {
  Tensor z = zeros({2, 3});
  CHECK(z.dtype() == default_dtype());
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.is_contiguous());
  CHECK(vals(z) == std::vector<double>(6, 0.0));
  CHECK(vals(ones({4}, float64)) == std::vector<double>(4, 1.0));
  CHECK(empty({3, 0}).numel() == 0);
  CHECK(zeros({}).dim() == 0);
  CHECK(zeros({}).numel() == 1);
  // full: dtype from the value unless given
  CHECK(full({2}, 7).dtype() == int64);
  CHECK(full({2}, 2.5).dtype() == default_dtype());
  CHECK(full({2}, true).dtype() == bool_);
  CHECK(full({2}, cd(1, 2)).dtype() == complex64);
  CHECK(to_vector<cd>(full({2}, cd(1, 2), complex128)) == std::vector<cd>{{1, 2}, {1, 2}});
  CHECK(ivals(full({3}, 2.9, int64)) == std::vector<std::int64_t>{2, 2, 2});
  Tensor base = zeros({2, 2}, complex128);
  CHECK(zeros_like(base).dtype() == complex128);
  CHECK(ones_like(base, float32).dtype() == float32);
  CHECK(full_like(base, 3.0).shape() == Shape{2, 2});
  CHECK(to_vector<cd>(full_like(base, 3.0))[3] == cd(3, 0));
  CHECK(empty_like(base).shape() == Shape{2, 2});
  Tensor s = scalar_tensor(4.5);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 4.5);
  CHECK(scalar_tensor(3).dtype() == int64);
  CHECK(scalar_tensor(3, float64).item<double>() == 3.0);
  CHECK_THROWS_WITH_AS(zeros({2, -1}), Contains("negative size in shape (2, -1)"), Error);
  CHECK_THROWS_WITH_AS(full({-3}, 1.0), Contains("[full]"), Error);
  CHECK_THROWS_AS(empty({-1}), Error);
}

TEST_CASE("from_vector / from_data / to_vector round trips") {
  Tensor a = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  CHECK(a.dtype() == float64);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(vals(a.t()) == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(from_vector(std::vector<int>{1, 2}).dtype() == int64);
  CHECK(to_vector<bool>(from_vector(std::vector<bool>{true, false, true})) == std::vector<bool>{true, false, true});
  CHECK(to_vector<float>(from_vector(std::vector<float>{1.5f})) == std::vector<float>{1.5f});
  CHECK(to_vector<cd>(from_vector(std::vector<std::complex<float>>{{1, -1}})) == std::vector<cd>{{1, -1}});
  const std::int64_t raw[4] = {9, 8, 7, 6};
  Tensor b = from_data(raw, 4, int64, {2, 2});
  CHECK(ivals(b) == std::vector<std::int64_t>{9, 8, 7, 6});
  CHECK(b.data_ptr() != static_cast<const void*>(raw));
  CHECK(to_vector<double>(b) == std::vector<double>{9, 8, 7, 6});
  CHECK_THROWS_WITH_AS(from_vector(std::vector<double>{1, 2, 3}, Shape{2, 2}), Contains("3 values cannot fill shape (2, 2)"), Error);
}

TEST_CASE("arange") {
  DefaultsGuard guard;
  Tensor a = arange(0, 5);
  CHECK(a.dtype() == int64);
  CHECK(ivals(a) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(ivals(arange(5)) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(ivals(arange(10, 0, -3)) == std::vector<std::int64_t>{10, 7, 4, 1});
  CHECK(ivals(arange(-3, 4, 3)) == std::vector<std::int64_t>{-3, 0, 3});
  CHECK(arange(1, 1).numel() == 0);
  CHECK(arange(0).numel() == 0);
  // floats: default dtype, count = ceil((end - start) / step), value i = start + i * step
  Tensor f = arange(0.0, 1.0, 0.3);
  CHECK(f.dtype() == float32);
  REQUIRE(f.numel() == 4);
  for (int i = 0; i < 4; ++i) CHECK(to_vector<float>(f)[static_cast<std::size_t>(i)] == static_cast<float>(0.3 * i));
  CHECK(arange(0, 10, 2.5).numel() == 4);
  CHECK(arange(0, 10.5, 2.5).numel() == 5);
  CHECK(arange(1.0, 0.0, -0.25).numel() == 4);
  Tensor d = arange(0, 3, 1, float64);
  CHECK(d.dtype() == float64);
  CHECK(vals(d) == std::vector<double>{0, 1, 2});
  CHECK(ivals(arange(0.5, 3.0, 1.0, int64)) == std::vector<std::int64_t>{0, 1, 2});
  set_default_dtype(float64);
  CHECK(arange(0.0, 1.0, 0.5).dtype() == float64);
  // large integer ranges are exact
  const std::int64_t big = std::int64_t{1} << 60;
  CHECK(ivals(arange(big, big + 3)) == std::vector<std::int64_t>{big, big + 1, big + 2});
  CHECK_THROWS_WITH_AS(arange(0, 10, 0), Contains("[arange] step must be nonzero"), Error);
  CHECK_THROWS_WITH_AS(arange(0, 10, -1), Contains("wrong sign"), Error);
  CHECK_THROWS_WITH_AS(arange(10, 0, 1), Contains("wrong sign"), Error);
  CHECK_THROWS_WITH_AS(arange(0, 10, 1, complex64), Contains("complex64 is not supported"), Error);
  CHECK_THROWS_WITH_AS(arange(0, 2, 1, bool_), Contains("bool is not supported"), Error);
  CHECK_THROWS_WITH_AS(arange(0.0, INFINITY), Contains("finite"), Error);
  CHECK_THROWS_AS(arange(cd(0, 1), 3), Error);
}

TEST_CASE("linspace") {
  Tensor l = linspace(0, 1, 5, float64);
  CHECK(vals(l) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  Tensor m = linspace(-1.3, 2.7, 7, float64);
  auto mv = vals(m);
  CHECK(mv.front() == -1.3);
  CHECK(mv.back() == 2.7);  // both end points exact
  for (int i = 0; i < 7; ++i) CHECK(mv[static_cast<std::size_t>(i)] == doctest::Approx(-1.3 + 4.0 * i / 6.0).epsilon(1e-15));
  CHECK(linspace(0, 1, 0).numel() == 0);
  CHECK(vals(linspace(3, 5, 1, float64)) == std::vector<double>{3});
  CHECK(linspace(0, 1, 3).dtype() == default_dtype());
  CHECK(ivals(linspace(0, 10, 4, int64)) == std::vector<std::int64_t>{0, 3, 6, 10});  // as torch
  CHECK(vals(linspace(5, 1, 3, float64)) == std::vector<double>{5, 3, 1});
  auto c = to_vector<cd>(linspace(cd(0, 0), cd(2, -4), 3, complex128));
  CHECK(c == std::vector<cd>{{0, 0}, {1, -2}, {2, -4}});
  CHECK_THROWS_WITH_AS(linspace(0, 1, -1), Contains("[linspace] number of steps must be non-negative"), Error);
  CHECK_THROWS_WITH_AS(linspace(cd(0, 1), 1, 3, float64), Contains("complex dtype"), Error);
  CHECK_THROWS_AS(linspace(0, 1, 3, bool_), Error);
}

TEST_CASE("eye") {
  CHECK(vals(eye(3, std::nullopt, float64)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(vals(eye(2, 3)) == std::vector<double>{1, 0, 0, 0, 1, 0});
  CHECK(vals(eye(3, 2)) == std::vector<double>{1, 0, 0, 1, 0, 0});
  CHECK(eye(0).shape() == Shape{0, 0});
  CHECK(eye(2).dtype() == default_dtype());
  CHECK(ivals(eye(2, 2, int64)) == std::vector<std::int64_t>{1, 0, 0, 1});
  CHECK(to_vector<cd>(eye(2, 1, complex64)) == std::vector<cd>{{1, 0}, {0, 0}});
  CHECK(to_vector<bool>(eye(2, 2, bool_)) == std::vector<bool>{true, false, false, true});
  CHECK_THROWS_WITH_AS(eye(-1), Contains("[eye] sizes must be non-negative"), Error);
  CHECK_THROWS_WITH_AS(eye(2, -2), Contains("m=-2"), Error);
}

// ---- random -------------------------------------------------------------------------------------------------
TEST_CASE("random streams are reproducible for a seed") {
  manual_seed(123);
  auto a = vals(randn({50}, float64));
  auto a2 = vals(rand({7}, float64));
  manual_seed(123);
  CHECK(vals(randn({50}, float64)) == a);
  CHECK(vals(rand({7}, float64)) == a2);
  CHECK(vals(randn({50}, float64)) != a);  // the stream moves on
  Generator g1(42), g2(42), g3(43);
  auto r1 = vals(rand({20}, float64, Device::cpu(), &g1));
  CHECK(vals(rand({20}, float64, Device::cpu(), &g2)) == r1);
  CHECK(vals(rand({20}, float64, Device::cpu(), &g3)) != r1);
  g1.manual_seed(42);
  CHECK(vals(rand({20}, float64, Device::cpu(), &g1)) == r1);
  CHECK(g1.seed() == 42);
  // a private generator leaves the default stream alone
  manual_seed(5);
  auto d1 = vals(rand({4}, float64));
  manual_seed(5);
  Generator other(5);
  rand({100}, float64, Device::cpu(), &other);
  CHECK(vals(rand({4}, float64)) == d1);
  // the other creators too
  manual_seed(9);
  auto i1 = ivals(randint(0, 100, {30}));
  auto p1 = ivals(randperm(30));
  manual_seed(9);
  CHECK(ivals(randint(0, 100, {30})) == i1);
  CHECK(ivals(randperm(30)) == p1);
}

TEST_CASE("rand and randn distributions") {
  manual_seed(2024);
  const std::size_t n = 100000;
  auto u = vals(rand({static_cast<std::int64_t>(n)}, float64));
  long double su = 0;
  std::size_t outside = 0;
  for (double v : u) {
    outside += (v < 0.0 || v >= 1.0);
    su += v;
  }
  CHECK(outside == 0);
  CHECK(static_cast<double>(su / n) == doctest::Approx(0.5).epsilon(0.01));
  auto uf = to_vector<float>(rand({1000}, float32));
  CHECK(*std::min_element(uf.begin(), uf.end()) >= 0.0f);
  CHECK(*std::max_element(uf.begin(), uf.end()) < 1.0f);
  auto g = vals(randn({static_cast<std::int64_t>(n)}, float64));
  long double s = 0, s2 = 0;
  for (double v : g) {
    s += v;
    s2 += static_cast<long double>(v) * v;
  }
  const double mean = static_cast<double>(s / n), var = static_cast<double>(s2 / n - (s / n) * (s / n));
  CHECK(std::fabs(mean) < 0.015);   // standard error 0.0032
  CHECK(std::fabs(var - 1.0) < 0.02);  // standard error 0.0045
  // complex normal: E|z|^2 = 1, real and imaginary parts each of variance 1/2
  auto z = to_vector<cd>(randn({static_cast<std::int64_t>(n)}, complex128));
  long double e2 = 0, re2 = 0, im2 = 0;
  for (const cd& v : z) {
    e2 += std::norm(v);
    re2 += v.real() * v.real();
    im2 += v.imag() * v.imag();
  }
  CHECK(static_cast<double>(e2 / n) == doctest::Approx(1.0).epsilon(0.02));
  CHECK(static_cast<double>(re2 / n) == doctest::Approx(0.5).epsilon(0.03));
  CHECK(static_cast<double>(im2 / n) == doctest::Approx(0.5).epsilon(0.03));
  CHECK(randn({3}, complex64).dtype() == complex64);
  CHECK(rand_like(zeros({2, 2}, float64)).dtype() == float64);
  CHECK(randn_like(zeros({2, 5})).shape() == Shape{2, 5});
}

TEST_CASE("randint and randperm") {
  manual_seed(77);
  auto r = ivals(randint(-3, 4, {20000}));
  std::vector<int> counts(7, 0);
  std::size_t outside = 0;
  for (auto v : r) {
    if (v < -3 || v >= 4) ++outside;
    else ++counts[static_cast<std::size_t>(v + 3)];
  }
  CHECK(outside == 0);
  for (int c : counts) CHECK(std::abs(c - 20000 / 7) < 300);  // ~2857 each, sd ~50
  CHECK(randint(0, 5, {3}, float64).dtype() == float64);
  CHECK(randint(0, 2, {4}, bool_).dtype() == bool_);
  // ranges at the int64 extremes: the width (up to 2^64 - 1) and the results are computed without overflow
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  std::size_t negative = 0;
  for (auto v : ivals(randint(lo, hi, {4000}))) negative += v < 0 ? 1 : 0;
  CHECK(std::abs(static_cast<double>(negative) - 2000.0) < 200);  // half of them, sd ~32
  for (auto v : ivals(randint(lo, lo + 2, {100}))) CHECK((v == lo || v == lo + 1));
  for (auto v : ivals(randint(hi - 2, hi, {100}))) CHECK((v == hi - 2 || v == hi - 1));
  auto p = ivals(randperm(1000));
  std::vector<std::int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(1000);
  for (std::int64_t i = 0; i < 1000; ++i) iota[static_cast<std::size_t>(i)] = i;
  CHECK(sorted == iota);
  CHECK(p != sorted);
  CHECK(randperm(0).numel() == 0);
  CHECK_THROWS_WITH_AS(randint(3, 3, {2}), Contains("[randint] expected low < high"), Error);
  CHECK_THROWS_WITH_AS(randint(0, 3, {2}, bool_), Contains("does not fit bool"), Error);
  CHECK_THROWS_WITH_AS(randperm(-1), Contains("[randperm]"), Error);
  CHECK_THROWS_WITH_AS(rand({2}, int64), Contains("[rand] expected a floating or complex dtype"), Error);
  CHECK_THROWS_WITH_AS(randn({-2}), Contains("negative size"), Error);
}

TEST_CASE("random results do not depend on the thread count") {
  DefaultsGuard guard;
  const Shape big{300, 100};  // large enough for the parallel path
  auto draw = [&] {
    manual_seed(31);
    std::vector<double> all;
    for (double v : vals(rand(big, float64))) all.push_back(v);
    for (double v : vals(randn(big, float64))) all.push_back(v);
    for (float v : to_vector<float>(randn(big, float32))) all.push_back(v);
    for (const cd& v : to_vector<cd>(randn(big, complex128))) all.push_back(v.real() + 3 * v.imag());
    for (auto v : ivals(randint(0, 1000, big))) all.push_back(static_cast<double>(v));
    for (auto v : ivals(randperm(20000))) all.push_back(static_cast<double>(v));
    return all;
  };
  set_num_threads(1);
  auto one = draw();
  set_num_threads(2);
  CHECK(draw() == one);
}

TEST_CASE("shapes too large for int64 element or byte counts are rejected by name, before any allocation") {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
  const std::int64_t t40 = std::int64_t{1} << 40;
  // element count, stride (a zero size elsewhere) and byte count overflow
  CHECK_THROWS_WITH_AS(zeros({t40, t40}), "[zeros] shape (1099511627776, 1099511627776) is too large: its element count overflows int64", Error);
  CHECK_THROWS_WITH_AS(empty({0, std::int64_t{1} << 62, 4}), Contains("[empty] shape (0, 4611686018427387904, 4) is too large: the product of its nonzero sizes"), Error);
  CHECK_THROWS_WITH_AS(zeros({std::int64_t{1} << 60}, complex128), "[zeros] shape (1152921504606846976,) is too large: its 1152921504606846976 elements of 16 bytes overflow int64 in bytes", Error);
  CHECK_THROWS_WITH_AS(full({t40, t40}, 1.0), Contains("[full] shape (1099511627776, 1099511627776) is too large"), Error);
  CHECK_THROWS_WITH_AS(rand({t40, t40}), Contains("[rand] shape"), Error);
  CHECK_THROWS_WITH_AS(randn({t40, t40}), Contains("[randn] shape"), Error);
  CHECK_THROWS_WITH_AS(randint(0, 3, {t40, t40}), Contains("[randint] shape"), Error);
  CHECK_THROWS_WITH_AS(eye(t40), Contains("[eye] shape (1099511627776, 1099511627776) is too large"), Error);
  CHECK_THROWS_WITH_AS(linspace(0, 1, big), Contains("[linspace] shape (9223372036854775807,) is too large"), Error);
  // the largest valid sizes still work: a zero-element tensor with a large dim, an empty product
  CHECK(empty({0, std::int64_t{1} << 40}).numel() == 0);
  // views: an expand, a broadcast of two expanded views, a reshape whose product wraps to the input's 0
  const Tensor one = zeros({1});
  CHECK_THROWS_WITH_AS(one.expand({t40, t40}), "[expand] shape (1099511627776, 1099511627776) is too large: its element count overflows int64", Error);
  const Tensor col = one.expand({t40});
  CHECK(col.numel() == t40);  // a valid broadcast view
  CHECK_THROWS_WITH_AS(col + col.unsqueeze(1), "[add] shape (1099511627776, 1099511627776) is too large: its element count overflows int64", Error);
  CHECK_THROWS_WITH_AS(broadcast_shapes({{t40, 1}, {1, t40}}, "f"), Contains("[f] shape (1099511627776, 1099511627776)"), Error);
  CHECK_THROWS_WITH_AS(zeros({0}).reshape({std::int64_t{1} << 32, std::int64_t{1} << 32}), "[reshape] shape (4294967296, 4294967296) is invalid for input of size 0", Error);
  const Tensor huge = zeros({1}, bool_).expand({std::int64_t{1} << 62});  // 2^62 one-byte elements
  CHECK_THROWS_WITH_AS(cat({huge, huge}), Contains("[cat] the sizes along dim 0"), Error);
  // arange counts in unsigned arithmetic: the full int64 range overflows, ranges at the extremes are exact
  CHECK_THROWS_WITH_AS(arange(Scalar(small), Scalar(big)), "[arange] the range from -9223372036854775808 to 9223372036854775807 with step 1 has more elements than an int64 can count", Error);
  CHECK_THROWS_WITH_AS(arange(0, 1e30), Contains("[arange] the range from 0.0"), Error);
  CHECK_THROWS_WITH_AS(arange(0.0, 1.0, 1e-300), Contains("more elements than an int64 can count"), Error);
  CHECK(to_vector<std::int64_t>(arange(Scalar(big - 5), Scalar(big), Scalar(std::int64_t{2}))) == std::vector<std::int64_t>{big - 5, big - 3, big - 1});
  CHECK(to_vector<std::int64_t>(arange(Scalar(big), Scalar(small), Scalar(small))) == std::vector<std::int64_t>{big, -1});
  // narrow and slice with extreme arguments: no wrapped sums
  const Tensor x = arange(4);
  CHECK_THROWS_WITH_AS(x.narrow(0, big, 2), "[narrow] start 9223372036854775807 and length 2 exceed dim 0 of size 4", Error);
  CHECK_THROWS_WITH_AS(x.narrow(0, 2, big), "[narrow] start 2 and length 9223372036854775807 exceed dim 0 of size 4", Error);
  CHECK(to_vector<std::int64_t>(x.slice(0, small, big, big)) == std::vector<std::int64_t>{0});
  CHECK(to_vector<std::int64_t>(x.slice(0, 1, big, big)) == std::vector<std::int64_t>{1});
  // from_blob: a shape too large, strides whose span overflows
  float f = 0;
  CHECK_THROWS_WITH_AS(Tensor::from_blob(&f, {t40, t40}, float32), Contains("[from_blob] shape (1099511627776, 1099511627776) is too large"), Error);
  CHECK_THROWS_WITH_AS(Tensor::from_blob(&f, {2, 2}, {big, 1}, float32), "[from_blob] shape (2, 2) with strides (9223372036854775807, 1) spans more bytes than an int64 can count", Error);
}

TEST_CASE("scalars written into a tensor must fit its dtype (checked conversion, as PyTorch)") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(full({2}, 1e30, int64), "[full] value 1e+30 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, nan, int64), "[full] value nan cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, -inf, int64), "[full] value -inf cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, 0x1p63, int64), "[full] value 9223372036854775808 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, 1e300, float32), "[full] value 1e+300 cannot be converted to float32 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, cd(1, -1e300), complex64), "[full] value 1-1e+300j cannot be converted to complex64 without overflow", Error);
  // what fits: the int64 minimum, a truncated real, infinities and NaN into floating dtypes, anything into bool
  CHECK(to_vector<std::int64_t>(full({1}, -0x1p63, int64)) == std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
  CHECK(to_vector<std::int64_t>(full({1}, -2.7, int64)) == std::vector<std::int64_t>{-2});
  CHECK(std::isinf(full({1}, inf, float32).item<float>()));
  CHECK(std::isnan(full({1}, nan, float32).item<float>()));
  CHECK(full({1}, 1e300, float64).item<double>() == 1e300);
  CHECK(full({1}, 1e300, bool_).item<bool>());
  // fill_, masked_fill(_) and pad check the same way and leave their tensor unchanged
  Tensor x = arange(3);
  CHECK_THROWS_WITH_AS(x.fill_(1e19), "[fill_] value 1e+19 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(x.masked_fill_(x > 0, nan), "[masked_fill_] value nan cannot be converted to int64 without overflow", Error);
  CHECK(to_vector<std::int64_t>(x) == std::vector<std::int64_t>{0, 1, 2});
  CHECK_THROWS_WITH_AS(masked_fill(x, x > 0, -1e20), Contains("[masked_fill] value -1e+20"), Error);
  CHECK_THROWS_WITH_AS(pad(x, {1, 1}, PadMode::constant, 1e19), "[pad] value 1e+19 cannot be converted to int64 without overflow", Error);
  Tensor f = zeros({2});
  CHECK_THROWS_WITH_AS(f.fill_(cd(1, 2)), "[fill_] complex value 1+2j cannot be converted to float32 (its imaginary part would be lost)", Error);
  CHECK(to_vector<float>(f) == std::vector<float>{0, 0});
  f.fill_(cd(3, 0));  // a zero imaginary part is kept
  CHECK(to_vector<float>(f) == std::vector<float>{3, 3});
}
