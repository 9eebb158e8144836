// tests/test_tensor.cpp - Tensor handle: metadata, dtypes and promotion, conversion, copies,
// from_blob, the caching allocator's statistics, threads, and their errors.
#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <phasor/phasor.hpp>

using namespace phasor;
using cd = std::complex<double>;

TEST_CASE("metadata of a new tensor") {
  Tensor t = zeros({2, 3, 4}, float64);
  CHECK(t.defined());
  CHECK(t.shape() == Shape{2, 3, 4});
  CHECK(t.strides() == Shape{12, 4, 1});
  CHECK(t.dim() == 3);
  CHECK(t.numel() == 24);
  CHECK(t.size(-1) == 4);
  CHECK(t.stride(0) == 12);
  CHECK(t.dtype() == float64);
  CHECK(t.device() == Device::cpu());
  CHECK(t.is_contiguous());
  CHECK(t.itemsize() == 8);
  CHECK(t.nbytes() == 192);
  CHECK(default_dtype() == float32);
  CHECK(zeros({2}).dtype() == float32);
  Tensor u;
  CHECK_FALSE(u.defined());
  CHECK_THROWS_WITH_AS(u.shape(), doctest::Contains("undefined"), Error);
  CHECK_THROWS_WITH_AS(t.size(3), doctest::Contains("dim 3 out of range for a tensor of 3 dims"), Error);
  CHECK_THROWS_WITH_AS(zeros({2, -1}), doctest::Contains("negative size"), Error);
  CHECK(Device::cuda(1).str() == "cuda:1");
}

TEST_CASE("dtype properties and promote_types") {
  CHECK(itemsize(complex128) == 16);
  CHECK(is_complex(complex64));
  CHECK_FALSE(is_complex(float64));
  CHECK(to_real(complex128) == float64);
  CHECK(to_complex(float32) == complex64);
  CHECK(promote_types(int64, float32) == float32);
  CHECK(promote_types(float32, float64) == float64);
  CHECK(promote_types(float64, complex64) == complex128);
  CHECK(promote_types(bool_, int64) == int64);
  CHECK(std::string(dtype_name(complex64)) == "complex64");
  CHECK_THROWS_AS(set_default_dtype(int64), Error);
}

TEST_CASE("type promotion of ops: a C++ scalar never widens a tensor") {
  Tensor f = ones({2}, float32), d = ones({2}, float64), i = ones({2}, int64), b = ones({2}, bool_);
  CHECK((f * 2.0).dtype() == float32);
  CHECK((i * 2).dtype() == int64);
  CHECK((i * 2.5).dtype() == float32);
  CHECK((b + 1).dtype() == int64);
  CHECK((f * cd(0, 1)).dtype() == complex64);
  CHECK((d * cd(0, 1)).dtype() == complex128);
  CHECK((f + d).dtype() == float64);
  CHECK((f + i).dtype() == float32);
  CHECK((f + scalar_tensor(1.0, float64)).dtype() == float32);  // 0-d tensor of the same category
  CHECK((i + scalar_tensor(1.0, float64)).dtype() == float64);  // 0-d tensor of a higher category
  CHECK((i / i).dtype() == float32);                            // true division
  auto v = to_vector<double>(i * 2.5);
  CHECK(v[0] == 2.5);
}

TEST_CASE("item, data<T> and to_vector") {
  Tensor t = full({1}, 3.5, float64);
  CHECK(t.item<double>() == 3.5);
  CHECK(t.item<std::int64_t>() == 3);
  CHECK(t.data<double>()[0] == 3.5);
  CHECK_THROWS_WITH_AS(t.data<float>(), doctest::Contains("float32 pointer from a tensor of dtype float64"), Error);
  CHECK_THROWS_WITH_AS(zeros({2}).item(), doctest::Contains("one element"), Error);
  Tensor c = full({}, cd(1, -2));
  CHECK(c.dtype() == complex64);
  CHECK(c.item<cd>() == cd(1, -2));
  CHECK(full({2}, 7).dtype() == int64);
  CHECK(full({2}, true).dtype() == bool_);
  CHECK(to_vector<bool>(from_vector(std::vector<bool>{true, false})) == std::vector<bool>{true, false});
  CHECK_THROWS_WITH_AS(from_vector(std::vector<double>{1, 2, 3}, Shape{2, 2}), doctest::Contains("(2, 2)"), Error);
}

TEST_CASE("item<integer> truncates toward zero and refuses values the type cannot hold, as PyTorch") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(full({}, -2.7, float64).item<std::int64_t>() == -2);
  CHECK(full({}, 2.7f, float32).item<int>() == 2);
  CHECK(full({}, -0.5, float64).item<unsigned>() == 0u);  // truncates to 0, which fits
  CHECK(full({}, std::int64_t{-5}).item<std::int8_t>() == -5);
  CHECK(full({}, std::int64_t{255}).item<std::uint8_t>() == 255);
  CHECK(full({}, -0x1p63, float64).item<std::int64_t>() == INT64_MIN);  // the ends that fit
  CHECK(full({}, 0x1p62, float64).item<std::int64_t>() == (std::int64_t{1} << 62));
  CHECK(full({}, std::int64_t{INT64_MIN}).item<std::int64_t>() == INT64_MIN);
  CHECK(full({}, cd(3, 0)).item<int>() == 3);
  CHECK(full({}, 2.0, float64).item<bool>());
  CHECK_THROWS_WITH_AS(full({}, 1e30, float64).item<std::int64_t>(),
                       "[item] value 1e+30 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, 0x1p63, float64).item<std::int64_t>(),
                       "[item] value 9223372036854775808 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, nan, float64).item<std::int64_t>(),
                       "[item] value nan cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, -inf, float32).item<int>(),
                       "[item] value -inf cannot be converted to int32 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, 2147483648.0, float64).item<int>(),
                       "[item] value 2147483648 cannot be converted to int32 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, std::int64_t{1} << 40).item<int>(),
                       "[item] value 1099511627776 cannot be converted to int32 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, std::int64_t{-1}).item<std::uint64_t>(),
                       "[item] value -1 cannot be converted to uint64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, std::int64_t{256}).item<std::uint8_t>(),
                       "[item] value 256 cannot be converted to uint8 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({}, cd(1, 2)).item<std::int64_t>(),
                       "[item] complex value 1+2j cannot be converted to int64 (its imaginary part would be lost)",
                       Error);
  // Scalar::to_int, the raw conversion, saturates as a float -> int64 tensor cast does (never undefined)
  CHECK(Scalar(1e30).to_int() == INT64_MAX);
  CHECK(Scalar(-inf).to_int() == INT64_MIN);
  CHECK(Scalar(nan).to_int() == 0);
  CHECK(Scalar(-2.9).to_int() == -2);
}

TEST_CASE("to(dtype) converts values") {
  Tensor x = from_vector(std::vector<double>{-1.75, 0.0, 2.5});
  CHECK(to_vector<std::int64_t>(x.to(int64)) == std::vector<std::int64_t>{-1, 0, 2});
  CHECK(to_vector<bool>(x.to(bool_)) == std::vector<bool>{true, false, true});
  auto c = to_vector<cd>(x.to(complex64));
  CHECK(c[2] == cd(2.5, 0));
  Tensor z = from_vector(std::vector<cd>{{1.5, 2}});
  CHECK(to_vector<double>(z.to(float64))[0] == 1.5);  // real part
  CHECK(x.to(float64).is_same(x));                    // no copy when the dtype matches
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return in[0].to(complex128) * cd(0.5, 2); },
                            {from_vector(std::vector<double>{0.3, -0.2}).requires_grad_()}));
}

TEST_CASE("copy_, fill_, clone, contiguous") {
  Tensor a = zeros({2, 3}, float64);
  a.copy_(from_vector(std::vector<std::int64_t>{1, 2, 3}));  // broadcast + convert
  CHECK(to_vector<double>(a) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(a.version() == 1);
  a.fill_(-2.0);
  CHECK(to_vector<double>(a) == std::vector<double>(6, -2.0));
  CHECK_THROWS_WITH_AS(a.copy_(zeros({4})), doctest::Contains("cannot be broadcast"), Error);
  CHECK(to_vector<double>(a) == std::vector<double>(6, -2.0));  // unchanged
  Tensor t = a.t();
  CHECK_FALSE(t.is_contiguous());
  Tensor c = t.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.shape() == Shape{3, 2});
  Tensor k = a.clone();
  k.fill_(1.0);
  CHECK(to_vector<double>(a)[0] == -2.0);
  // copy_ is differentiable w.r.t. the source
  Tensor src = from_vector(std::vector<double>{1.0, 2.0}).requires_grad_();
  Tensor dst = zeros({3, 2}, float64);
  dst.copy_(src);
  (dst * 2.0).sum().backward();
  CHECK(to_vector<double>(src.grad()) == std::vector<double>{6, 6});
}

TEST_CASE("from_blob wraps memory without copying and calls the deleter") {
  std::vector<double> buf{1, 2, 3, 4, 5, 6};
  int deleted = 0;
  {
    Tensor t = Tensor::from_blob(buf.data(), {2, 3}, float64, [&](void* p) {
      CHECK(p == buf.data());
      ++deleted;
    });
    CHECK(t.data_ptr() == buf.data());
    t.mul_(10.0);
    CHECK(buf[5] == 60.0);
    Tensor col = Tensor::from_blob(buf.data() + 1, {2}, {3}, float64);  // strided: elements 1 and 4
    CHECK(to_vector<double>(col) == std::vector<double>{20, 50});
  }
  CHECK(deleted == 1);
  CHECK_THROWS_WITH_AS(Tensor::from_blob(buf.data(), {2}, {1, 1}, float64), doctest::Contains("differ in length"), Error);
  CHECK_THROWS_AS(Tensor::from_blob(nullptr, {2}, float64), Error);
}

TEST_CASE("memory_stats: current, peak, reset and reuse without system calls") {
  empty_cache();
  reset_peak_memory_stats();
  const auto s0 = memory_stats();
  {
    Tensor a = empty({1 << 20}, float32);  // 4 MiB
    const auto s1 = memory_stats();
    CHECK(s1.current_bytes - s0.current_bytes >= 4 << 20);
    CHECK(s1.peak_bytes >= s1.current_bytes);
  }
  const auto s2 = memory_stats();
  CHECK(s2.current_bytes == s0.current_bytes);
  CHECK(s2.cached_bytes >= 4 << 20);
  // a steady loop reuses cached blocks: no new system allocations
  Tensor x = ones({1000}, float32);
  for (int i = 0; i < 3; ++i) Tensor y = (x * 2.0 + 1.0).exp();
  const auto before = memory_stats().num_system_allocs;
  for (int i = 0; i < 50; ++i) Tensor y = (x * 2.0 + 1.0).exp();
  CHECK(memory_stats().num_system_allocs == before);
  reset_peak_memory_stats();
  CHECK(memory_stats().peak_bytes == memory_stats().current_bytes);
  if (!cuda::is_available())
    CHECK_THROWS_WITH_AS(memory_stats(Device::cuda(0)), doctest::Contains("[memory_stats] device cuda:0 does not exist"),
                         Error);
}

TEST_CASE("small tensors are recycled with their storage (Note [parked tensors])") {
  empty_cache();
  const auto s0 = memory_stats();
  const void* first = nullptr;
  {
    Tensor a = full({100}, 3.0, float64);
    a.add_(1.0);
    CHECK(a.version() > 0);
    first = a.data_ptr();
  }
  const auto s1 = memory_stats();
  CHECK(s1.current_bytes == s0.current_bytes);  // the parked block counts as cached, not in use
  CHECK(s1.cached_bytes >= s0.cached_bytes + 800);
  {
    Tensor b = empty({100}, float64);  // same size class: the parked tensor's storage again
    CHECK(b.data_ptr() == first);
    CHECK(b.version() == 0);
    CHECK(memory_stats().current_bytes - s0.current_bytes >= 800);
    b.fill_(7.0);
    CHECK(b.sum().item<double>() == 700.0);
  }
  // a storage that a live view still holds is not parked: the view keeps its values
  Tensor keep;
  {
    Tensor c = full({100}, 5.0, float64);
    keep = c.slice(0, 10, 20);
  }
  Tensor d = full({100}, -1.0, float64);
  CHECK(keep.sum().item<double>() == 50.0);
  CHECK(d.sum().item<double>() == -100.0);
  // from_blob storage is never parked: its deleter runs when the tensor dies
  std::vector<double> buf(100, 2.0);
  int deleted = 0;
  { Tensor w = Tensor::from_blob(buf.data(), {100}, float64, [&](void*) { ++deleted; }); }
  CHECK(deleted == 1);
  keep = Tensor();
  d = Tensor();
  empty_cache();
  CHECK(memory_stats().current_bytes == s0.current_bytes);
  CHECK(memory_stats().cached_bytes == 0);
}

TEST_CASE("threads") {
  const int n = get_num_threads();
  CHECK(n >= 1);
  set_num_threads(1);
  CHECK(get_num_threads() == 1);
  Tensor big = ones({200000}, float64);
  CHECK((big * 2.0).sum().item<double>() == 400000.0);
  set_num_threads(2);
  CHECK((big * 2.0).sum().item<double>() == 400000.0);
  set_num_threads(n);
  CHECK_THROWS_WITH_AS(set_num_threads(0), doctest::Contains("n >= 1"), Error);
}

TEST_CASE("devices without a backend fail with a named error" * doctest::skip(cuda::is_available())) {
  CHECK_THROWS_WITH_AS(zeros({2}, float32, Device::cuda(0)), doctest::Contains("device cuda:0 does not exist"), Error);
  CHECK_THROWS_WITH_AS(ones({2}).to(Device::cuda(0)), doctest::Contains("[to] device cuda:0 does not exist"), Error);
}

TEST_CASE("broadcast_shapes") {
  CHECK(broadcast_shapes({{2, 1, 3}, {4, 1}}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes({{}, {5}}) == Shape{5});
  CHECK(broadcast_shapes({{0, 1}, {1, 3}}) == Shape{0, 3});
  CHECK_THROWS_WITH_AS(broadcast_shapes({{2, 3}, {4}}, "add"), doctest::Contains("[add] shapes (2, 3) and (4,)"), Error);
  CHECK_THROWS_WITH_AS(ones({2, 3}) + ones({4}), doctest::Contains("[add]"), Error);
}

TEST_CASE("zero-size tensors flow through ops") {
  Tensor e = zeros({0, 3});
  CHECK((e + 1.0).shape() == Shape{0, 3});
  CHECK(e.sum().item<double>() == 0.0);
  CHECK(e.sum({0}).shape() == Shape{3});
  CHECK(e.exp().numel() == 0);
}

TEST_CASE("version counter is shared by views") {
  Tensor a = zeros({4}, float64);
  Tensor v = a.slice(0, 1, 3);
  v.fill_(1.0);
  CHECK(a.version() == 1);
  CHECK(to_vector<double>(a) == std::vector<double>{0, 1, 1, 0});
}

TEST_CASE("version string") { CHECK(std::string(version()) == PHASOR_VERSION_STRING); }
