// tests/test_cuda.cpp - the CUDA backend's foundation: devices, streams, device errors, transfers and the
// device allocator's statistics. Cases that need a GPU are skipped (doctest::skip) on machines without
// one; the cases that check the no-GPU behaviour are skipped on machines with one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>
#include <fstream>
#include <phasor/phasor.hpp>
#include <sstream>
#include <string>

#include "../src/cuda/libraries.hpp"
#include "cuda_test_util.hpp"

using namespace phasor;
using cuda_test::kGpu;

namespace {

/// Why Device::cuda(i) does not exist on this machine, as the error messages put it.
std::string no_device_suffix() {
  if (!cuda::is_built()) return "(CPU-only build)";
  return "";  // built with CUDA but no device: "(no CUDA driver)" or "(0 CUDA devices...)"
}

/// The tensor's values as bytes, copied to the CPU through the public API.
bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor x = a.device().is_cpu() ? a.contiguous() : a.to(Device::cpu());
  const Tensor y = b.device().is_cpu() ? b.contiguous() : b.to(Device::cpu());
  return x.nbytes() == y.nbytes() && (x.nbytes() == 0 || std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0);
}

/// n values of `dt` that differ from element to element (bool: a pattern of both values).
Tensor sample(std::int64_t n, Dtype dt) {
  Tensor v = arange(n, Dtype::Float64) * 0.37 - 5.0;
  if (dt == Dtype::Bool) return v.sin() > 0.0;
  if (is_complex(dt)) return complex(v, v * -2.0 + 1.0).to(dt);
  if (dt == Dtype::Int64) return (v * 1000.0).to(dt);
  return v.to(dt);
}

/// doctest::Contains for a std::string.
doctest::Contains has(const std::string& s) { return doctest::Contains(s.c_str()); }

const Dtype kAllDtypes[] = {Dtype::Bool, Dtype::Int64, Dtype::Float32, Dtype::Float64, Dtype::Complex64,
                            Dtype::Complex128};

}  // namespace

// ---- always meaningful ------------------------------------------------------------------------------------

TEST_CASE("cuda: without a GPU there are no devices" * doctest::skip(kGpu)) {
  CHECK_FALSE(cuda::is_available());
  CHECK(cuda::device_count() == 0);
  CHECK(cuda::device_count() == 0);  // cached, still no throw
}

TEST_CASE("cuda: operations on a missing device throw a named error" * doctest::skip(kGpu)) {
  const std::string suffix = no_device_suffix();
  auto expect = [&](const std::string& op, int i) {
    // "[op] device cuda:i does not exist (CPU-only build)", or "(no CUDA driver)" / "(0 CUDA devices)" when
    // the backend is built but the machine has no GPU
    return "[" + op + "] device cuda:" + std::to_string(i) + " does not exist " + suffix;
  };
  CHECK_THROWS_WITH_AS(empty({2, 3}, Dtype::Float32, Device::cuda(0)), has(expect("empty", 0)), Error);
  CHECK_THROWS_WITH_AS(zeros({2}, Dtype::Float32, Device::cuda(0)), doctest::Contains("device cuda:0 does not exist"),
                       Error);
  CHECK_THROWS_WITH_AS(from_vector(std::vector<double>{1.0, 2.0}, std::nullopt, Device::cuda(0)),
                       doctest::Contains("device cuda:0 does not exist"), Error);
  const Tensor x = ones({4});
  CHECK_THROWS_WITH_AS(x.to(Device::cuda(0)), has(expect("to", 0)), Error);
  CHECK(x.device() == Device::cpu());  // input unchanged
  CHECK(x.sum().item<double>() == 4.0);
  CHECK_THROWS_WITH_AS(memory_stats(Device::cuda(0)), has(expect("memory_stats", 0)), Error);
  CHECK_THROWS_WITH_AS(reset_peak_memory_stats(Device::cuda(1)), has(expect("reset_peak_memory_stats", 1)),
                       Error);
  CHECK_THROWS_WITH_AS(empty_cache(Device::cuda(0)), has(expect("empty_cache", 0)), Error);
  CHECK_THROWS_WITH_AS(empty({1}, Dtype::Float64, Device::cuda(-1)), has(expect("empty", -1)), Error);
  if (cuda::is_built()) {
    // the reason is one of the two a GPU-less machine can give
    try {
      (void)empty({1}, Dtype::Float32, Device::cuda(0));
      FAIL("no error");
    } catch (const Error& e) {
      const std::string m = e.what();
      CHECK((m.find("(no CUDA driver)") != std::string::npos || m.find("(0 CUDA devices") != std::string::npos));
    }
  } else {
    CHECK_THROWS_WITH_AS(empty({2}, Dtype::Float32, Device::cuda(0)),
                         "[empty] device cuda:0 does not exist (CPU-only build)", Error);
  }
}

TEST_CASE("cuda: streams and synchronize need a device" * doctest::skip(kGpu)) {
  CHECK_THROWS_AS(cuda::synchronize(), Error);
  CHECK_THROWS_AS(cuda::synchronize(0), Error);
  CHECK_THROWS_AS(cuda::Stream::create(0), Error);
  CHECK_THROWS_AS(cuda::current_stream(0), Error);
  CHECK_THROWS_AS(cuda::set_current_stream(cuda::Stream()), Error);
  CHECK_THROWS_AS(cuda::Stream().synchronize(), Error);
  if (cuda::is_built()) {
    CHECK_THROWS_WITH_AS(cuda::synchronize(2), doctest::Contains("[synchronize] device cuda:2 does not exist ("), Error);
    CHECK_THROWS_WITH_AS(cuda::Stream::create(0), doctest::Contains("[Stream::create] device cuda:0 does not exist ("),
                         Error);
  } else {
    CHECK_THROWS_WITH_AS(cuda::synchronize(), doctest::Contains("[synchronize] phasor was built without CUDA"), Error);
    CHECK_THROWS_WITH_AS(cuda::current_stream(0), doctest::Contains("[current_stream] phasor was built without CUDA"),
                         Error);
  }
  // an event needs a stream only to be recorded; unrecorded, it has nothing to wait for or time
  cuda::Event ev(true);
  CHECK_FALSE(ev.is_recorded());
  CHECK(ev.device() == -1);
  CHECK(ev.timing_enabled());
  CHECK(ev.query());
  ev.synchronize();
  CHECK_THROWS_WITH_AS(ev.record(), doctest::Contains("[Event.record] "), Error);
  CHECK_THROWS_WITH_AS(ev.record(cuda::Stream()), doctest::Contains("[Event.record] "), Error);
  CHECK_THROWS_WITH_AS(ev.wait(cuda::Stream()), doctest::Contains("[Event.wait] "), Error);
  CHECK_THROWS_WITH_AS(cuda::Stream().query(), doctest::Contains("[Stream::query] "), Error);
  CHECK_THROWS_WITH_AS(cuda::Stream().wait_stream(cuda::Stream()), doctest::Contains("[Stream::wait_stream] "), Error);
  CHECK_THROWS_WITH_AS(cuda::Stream().record_event(), doctest::Contains("[Event.record] "), Error);
  CHECK_THROWS_WITH_AS((void)ev.elapsed_time(cuda::Event(true)), "[Event.elapsed_time] the start event was never recorded",
                       Error);
  CHECK_FALSE(ev.is_recorded());
  // the handle itself is plain data
  const cuda::Stream s;
  CHECK(s.is_default());
  CHECK(s.device() == 0);
  CHECK(s.native_handle() == nullptr);
  CHECK(s == cuda::Stream::from_native(nullptr, 0));
  CHECK(s != cuda::Stream::from_native(nullptr, 1));
}

TEST_CASE("cuda: a wrapped device pointer is a CUDA tensor whose CPU kernels refuse it" * doctest::skip(kGpu)) {
  // from_blob records the device without touching the memory; no CPU kernel may read it
  static float fake_device_memory[6] = {1, 2, 3, 4, 5, 6};  // never read through the tensor
  Tensor t = Tensor::from_blob(fake_device_memory, {2, 3}, Dtype::Float32, nullptr, Device::cuda(0));
  CHECK(t.device() == Device::cuda(0));
  CHECK(t.data_ptr() == static_cast<void*>(fake_device_memory));  // the device pointer, as given
  // a device pointer not aligned to the element size is refused (a GPU load of it would fault)
  alignas(16) static char raw[64];
  CHECK_THROWS_WITH_AS(Tensor::from_blob(raw + 8, {2}, Dtype::Complex128, nullptr, Device::cuda(0)),
                       has("is not aligned to 16 bytes, as complex128 elements on cuda:0 need"), Error);
  CHECK_THROWS_WITH_AS(Tensor::from_blob(raw + 2, {2}, Dtype::Float32, nullptr, Device::cuda(0)), has("to 4 bytes"), Error);
  CHECK(Tensor::from_blob(raw + 8, {2}, Dtype::Complex64, nullptr, Device::cuda(0)).numel() == 2);
  CHECK(Tensor::from_blob(raw + 8, {2}, Dtype::Complex128).numel() == 2);  // the host: no such need
  CHECK(t.shape() == Shape{2, 3});
  const std::string missing = "device cuda:0 does not exist";
  CHECK_THROWS_WITH_AS(t + 1.0, has(missing), Error);
  CHECK_THROWS_WITH_AS(t.exp(), has(missing), Error);
  CHECK_THROWS_WITH_AS(t.sum(), has(missing), Error);
  CHECK_THROWS_WITH_AS(t.clone(), has(missing), Error);
  CHECK_THROWS_WITH_AS(t.to(Device::cpu()), has("[to] " + missing), Error);
  CHECK_THROWS_WITH_AS(t.reshape({3, 2}).to(Dtype::Float64), has(missing), Error);
  CHECK_THROWS_WITH_AS(t.select(0, 0).select(0, 0).item(), has("[to] " + missing), Error);  // item copies to the CPU first
  std::ostringstream os;
  CHECK_THROWS_WITH_AS(os << t, has("[to] " + missing), Error);
  CHECK_THROWS_WITH_AS(ones({2, 3}) + t, doctest::Contains("cuda:0"), Error);  // mixed devices
  CHECK(fake_device_memory[0] == 1.0f);
}

TEST_CASE("cuda: every CPU kernel refuses a CUDA tensor" * doctest::skip(kGpu)) {
  // A "CUDA" tensor over host memory: a CPU kernel that forgot its device check would read it silently
  // instead of throwing (on a GPU it would crash), so each op below must throw naming the device.
  static double host[4 * 6] = {};
  const Tensor t = Tensor::from_blob(host, {4, 6}, Dtype::Float64, nullptr, Device::cuda(0));
  const Tensor c = ones({4, 6}, Dtype::Float64);
  const Tensor idx = from_vector(std::vector<std::int64_t>{0, 2});
  const Tensor idx2 = zeros({4, 6}, Dtype::Int64);
  const Tensor mask = c > 0.5;
  namespace F = nn::functional;
  const std::pair<const char*, std::function<Tensor()>> ops[] = {
      {"exp", [&] { return exp(t); }},
      {"abs", [&] { return abs(t); }},
      {"neg", [&] { return -t; }},
      {"relu", [&] { return relu(t); }},
      {"gelu", [&] { return gelu(t); }},
      {"sigmoid", [&] { return sigmoid(t); }},
      {"isnan", [&] { return isnan(t); }},
      {"add", [&] { return t + c; }},
      {"add reversed", [&] { return c + t; }},
      {"mul scalar", [&] { return t * 2.0; }},
      {"pow", [&] { return pow(t, 2.0); }},
      {"atan2", [&] { return atan2(t, c); }},
      {"maximum", [&] { return maximum(c, t); }},
      {"compare", [&] { return t > 0.0; }},
      {"where", [&] { return where(mask, t, c); }},
      {"clamp", [&] { return clamp(t, 0.0, 1.0); }},
      {"masked_fill", [&] { return masked_fill(t, mask, 1.0); }},
      {"complex", [&] { return complex(t, t); }},
      {"to dtype", [&] { return t.to(Dtype::Float32); }},
      {"clone", [&] { return t.clone(); }},
      {"contiguous", [&] { return t.transpose(0, 1).contiguous(); }},
      {"sum", [&] { return t.sum(); }},
      {"mean", [&] { return mean(t, {1}); }},
      {"prod", [&] { return prod(t); }},
      {"max", [&] { return max(t); }},
      {"amax", [&] { return amax(t, {0}); }},
      {"argmax", [&] { return argmax(t, 1); }},
      {"var", [&] { return var(t); }},
      {"norm", [&] { return norm(t); }},
      {"logsumexp", [&] { return logsumexp(t, {1}); }},
      {"cumsum", [&] { return cumsum(t, 1); }},
      {"any", [&] { return any(t); }},
      {"cat", [&] { return cat({t, t}); }},
      {"cat mixed", [&] { return cat({c, t}); }},
      {"stack", [&] { return stack({t, t}); }},
      {"pad", [&] { return pad(t, {1, 1}); }},
      {"flip", [&] { return flip(t, {0}); }},
      {"roll", [&] { return roll(t, {1}, {0}); }},
      {"tril", [&] { return tril(t); }},
      {"index_select", [&] { return index_select(t, 0, idx); }},
      {"gather", [&] { return gather(t, 1, idx2); }},
      {"scatter_add", [&] { return scatter_add(c, 1, idx2, t); }},
      {"matmul", [&] { return matmul(t, c.transpose(0, 1)); }},
      {"matmul mixed", [&] { return matmul(c, t.transpose(0, 1)); }},
      {"einsum", [&] { return einsum("ij,kj->ik", {t, c}); }},
      {"fft", [&] { return fft::fft(t); }},
      {"rfft", [&] { return fft::rfft(t); }},
      {"fft2", [&] { return fft::fft2(t); }},
      {"softmax", [&] { return F::softmax(t, 1); }},
      {"mse_loss", [&] { return F::mse_loss(t, c); }},
      {"layer_norm", [&] { return F::layer_norm(t, {6}); }},
      {"linear", [&] { return F::linear(t, c); }},
      {"fill_", [&] { Tensor u = t; return u.fill_(1.0); }},
      {"copy_", [&] { Tensor u = t; return u.copy_(c); }},
      {"copy_ from", [&] { Tensor u = c.clone(); return u.copy_(t); }},
      {"to_vector", [&] { (void)to_vector<double>(t); return Tensor(); }},
  };
  for (const auto& [name, op] : ops) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS((void)op(), doctest::Contains("cuda:0"), Error);
  }
  for (double v : host) CHECK(v == 0.0);  // nothing wrote to the wrapped memory
}

/// True when a shared library whose file name contains `name` is mapped into this process.
bool library_mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

// What cuBLAS and cuFFT are mapped as: the host emulator stands in for both in an emulation build.
#if PHASOR_TEST_CUDA_EMULATION
const std::string kCublasFile = "libphasor_cuda_emu", kCufftFile = "libphasor_cuda_emu", kCusolverFile = "libphasor_cuda_emu";
#else
const std::string kCublasFile = "libcublas", kCufftFile = "libcufft", kCusolverFile = "libcusolver";
#endif

TEST_CASE("cuda: cuBLAS, cuFFT and cuSOLVER load on first use, not for CPU work (Note [lazy CUDA libraries])") {
  // CPU matrix products and FFTs never touch the CUDA libraries
  const Tensor a = randn({16, 16});
  CHECK(matmul(a, a).shape() == Shape{16, 16});
  CHECK(fft::rfft(a).shape() == Shape{16, 9});
  CHECK(linalg::det(a + eye(16) * 16.0).shape() == Shape{});
  if (!kGpu) {  // with a GPU, earlier cases in this process may have loaded them
    CHECK(cuda::detail::loaded_libraries().empty());
    CHECK_FALSE(library_mapped("libcublas"));
    CHECK_FALSE(library_mapped("libcufft"));
    CHECK_FALSE(library_mapped("libcusolver"));
  }
  if (cuda::is_built()) {
    // every function phasor calls resolves (no GPU needed to load them)
    cuda::detail::load_libraries("test");
    CHECK(cuda::detail::loaded_libraries() == "cublas,cufft,cusolver");
    CHECK(library_mapped(kCublasFile));
    CHECK(library_mapped(kCufftFile));
    CHECK(library_mapped(kCusolverFile));
  } else {
    CHECK_THROWS_WITH_AS(cuda::detail::load_libraries("test"),
                         doctest::Contains("[test] phasor was built without CUDA"), Error);
  }
}

TEST_CASE("cuda: a CUDA library that cannot be loaded is named, with both places tried") {
  std::string error;
  CHECK(cuda::detail::open_library("libphasor_missing.so.7", "/nonexistent/libphasor_missing.so.7.1", error) == nullptr);
  CHECK(error.find("cannot load libphasor_missing.so.7 (") == 0);
  CHECK(error.find(" nor /nonexistent/libphasor_missing.so.7.1 (") != std::string::npos);
  CHECK(error.find("LD_LIBRARY_PATH") != std::string::npos);
  error.clear();
  CHECK(cuda::detail::open_library("libphasor_missing.so.7", "", error) == nullptr);  // no build-time path
  CHECK(error.find(" nor ") == std::string::npos);
  error.clear();
  CHECK(cuda::detail::open_library("libphasor_missing.so.7", "libm.so.6", error) != nullptr);  // the fallback
  CHECK(error.empty());
}

TEST_CASE("cuda: TF32 for float32 products is off by default and a process-wide switch") {
  CHECK_FALSE(cuda::allow_tf32());
  const Tensor a = randn({8, 8}), full = matmul(a, a);
  cuda::set_allow_tf32(true);
  CHECK(cuda::allow_tf32());
  CHECK(same_bytes(matmul(a, a), full));  // CPU products ignore it
  cuda::set_allow_tf32(false);
  CHECK_FALSE(cuda::allow_tf32());
}

TEST_CASE("virtual CPU devices: cpu:i exists only after set_cpu_device_count, and counts as a device of its own") {
  CHECK(cpu_device_count() == 1);
  CHECK(Device::cpu(1).str() == "cpu:1");
  CHECK(Device::parse("cpu:1") == Device::cpu(1));
  CHECK(Device::parse("cpu") == Device::cpu());
  // a device that does not exist: named, and nothing is made
  const std::string one = "does not exist (1 CPU device; phasor::set_cpu_device_count(n) makes virtual ones)";
  CHECK_THROWS_WITH_AS(zeros({2}, Dtype::Float32, Device::cpu(1)), ("[empty] device cpu:1 " + one).c_str(), Error);
  const Tensor x = arange(6, Dtype::Float64).reshape({2, 3});
  CHECK_THROWS_WITH_AS(x.to(Device::cpu(1)), ("[to] device cpu:1 " + one).c_str(), Error);
  CHECK_THROWS_WITH_AS(memory_stats(Device::cpu(-1)), ("[memory_stats] device cpu:-1 " + one).c_str(), Error);
  CHECK_THROWS_WITH_AS(set_cpu_device_count(0), "[set_cpu_device_count] expected n >= 1, got 0", Error);
  CHECK(cpu_device_count() == 1);
  {
    cuda_test::VirtualCpu guard;
    CHECK(cpu_device_count() == 2);
    CHECK_THROWS_WITH_AS(x.to(Device::cpu(2)), "[to] device cpu:2 does not exist (2 CPU devices)", Error);
    // to() copies between CPU devices, and its gradient goes back to the source device
    Tensor leaf = x.clone().requires_grad_();
    const Tensor y = leaf.to(Device::cpu(1));
    CHECK(y.device() == Device::cpu(1));
    CHECK(y.data_ptr() != leaf.data_ptr());
    CHECK(same_bytes(y, x));
    CHECK(y.to(Device::cpu(1)).data_ptr() == y.data_ptr());
    CHECK((y * 2.0).exp().device() == Device::cpu(1));
    // mixing cpu and cpu:1 throws as mixing cpu and cuda:0 does, and changes nothing
    CHECK_THROWS_WITH_AS(x + y, doctest::Contains("cpu:1"), Error);
    CHECK_THROWS_WITH_AS(matmul(x, y.transpose(0, 1)), doctest::Contains("cpu:1"), Error);
    CHECK(same_bytes(y, x));
    (y * arange(3, Dtype::Float64, Device::cpu(1))).sum().backward();
    REQUIRE(leaf.grad().defined());
    CHECK(leaf.grad().device() == Device::cpu());
    CHECK(same_bytes(leaf.grad(), arange(3, Dtype::Float64).expand({2, 3}).contiguous()));
    // the virtual devices share the host allocator
    CHECK(memory_stats(Device::cpu(1)).current_bytes == memory_stats().current_bytes);
  }
  CHECK(cpu_device_count() == 1);
}

TEST_CASE("cuda: moving to the CPU is the identity for CPU tensors") {
  const Tensor x = arange(6, Dtype::Float64).reshape({2, 3});
  const Tensor y = x.to(Device::cpu());
  CHECK(y.data_ptr() == x.data_ptr());
}

// ---- with a GPU ----------------------------------------------------------------------------------------

DEVICE_CASE("cuda: round trips CPU -> CUDA -> CPU for every dtype and size") {
  for (Dtype dt : kAllDtypes) {
    for (std::int64_t n : {0, 1, 7, 1000, 131072, 300000}) {  // 300000 elements >= 1 MiB: pinned staging
      CAPTURE(dtype_name(dt));
      CAPTURE(n);
      const Tensor x = sample(n, dt);
      const Tensor d = x.to(dev);
      CHECK(d.device() == dev);
      CHECK(d.dtype() == dt);
      CHECK(d.shape() == x.shape());
      const Tensor back = d.to(Device::cpu());
      CHECK(back.device() == Device::cpu());
      CHECK(same_bytes(back, x));
    }
  }
  // a 2-D shape and a non-contiguous CPU source (made contiguous on the CPU first)
  const Tensor m = sample(12, Dtype::Float64).reshape({3, 4});
  const Tensor mt = m.transpose(0, 1);
  CHECK(same_bytes(mt.to(dev).to(Device::cpu()), mt.contiguous()));
  if (dev.is_cuda()) cuda::synchronize();
}

DEVICE_CASE("cuda: zeros and from_vector create CUDA tensors") {
  for (Dtype dt : kAllDtypes) {
    CAPTURE(dtype_name(dt));
    for (std::int64_t n : {0, 5, 400000}) {
      const Tensor z = zeros({n}, dt, dev);
      CHECK(z.device() == dev);
      CHECK(same_bytes(z, zeros({n}, dt)));
    }
  }
  const std::vector<double> v{1.5, -2.0, 3.25, 1e300};
  const Tensor d = from_vector(v, Shape{2, 2}, dev);
  CHECK(d.device() == dev);
  CHECK(same_bytes(d, from_vector(v, Shape{2, 2})));
  // shapes too large for int64 counts: the CPU's errors, before any device allocation
  const std::int64_t t40 = std::int64_t{1} << 40;
  const std::string too_large = " shape (1099511627776, 1099511627776) is too large: its element count overflows int64";
  CHECK_THROWS_WITH_AS(zeros({t40, t40}, float32, dev), ("[zeros]" + too_large).c_str(), Error);
  CHECK_THROWS_WITH_AS(randn({t40, t40}, float32, dev), ("[randn]" + too_large).c_str(), Error);
  CHECK_THROWS_WITH_AS(zeros({1}, float32, dev).expand({t40, t40}), ("[expand]" + too_large).c_str(), Error);
  const Tensor col = zeros({1}, float32, dev).expand({t40});
  CHECK_THROWS_WITH_AS(col * col.unsqueeze(1), ("[mul]" + too_large).c_str(), Error);
  // scalars that do not fit the dtype: the CPU's checked conversion
  Tensor i = arange(3).to(dev);
  CHECK_THROWS_WITH_AS(i.fill_(1e19), "[fill_] value 1e+19 cannot be converted to int64 without overflow", Error);
  CHECK_THROWS_WITH_AS(full({2}, 1e300, float32, dev), "[full] value 1e+300 cannot be converted to float32 without overflow", Error);
  CHECK_THROWS_WITH_AS(i.masked_fill(i > 0, std::nan("")), doctest::Contains("[masked_fill] value nan cannot be converted"), Error);
  CHECK(to_vector<std::int64_t>(i) == std::vector<std::int64_t>{0, 1, 2});
}

TEST_CASE("cuda: device to device copies" * doctest::skip(!kGpu)) {
  const Tensor x = sample(5000, Dtype::Complex128);
  const Tensor d0 = x.to(Device::cuda(0));
  CHECK(d0.to(Device::cuda(0)).data_ptr() == d0.data_ptr());  // same device: no copy
  // wrapping the device pointer (from_blob) and copying back reads the same bytes
  const Tensor w = Tensor::from_blob(d0.data_ptr(), d0.shape(), d0.dtype(), nullptr, Device::cuda(0));
  CHECK(same_bytes(w, x));
  if (cuda::device_count() >= 2) {
    const Tensor d1 = d0.to(Device::cuda(1));
    CHECK(d1.device() == Device::cuda(1));
    CHECK(same_bytes(d1, x));
    CHECK(same_bytes(d1.to(Device::cuda(0)), x));
  }
  // a strided CUDA source is made contiguous on the GPU (copy kernel) before the transfer
  const Tensor h = sample(12, Dtype::Float32).reshape({3, 4});
  const Tensor m = h.to(Device::cuda(0));
  CHECK(same_bytes(m.transpose(0, 1).to(Device::cpu()), h.transpose(0, 1).contiguous()));
}

DEVICE_CASE("cuda: item, printing and gradients go through the host") {
  const Tensor d = sample(3, Dtype::Float64).to(dev);
  CHECK(d.select(0, 1).item<double>() == doctest::Approx(0.37 - 5.0));
  std::ostringstream os;
  os << d;
  CHECK(os.str().find(dev.str()) != std::string::npos);
  CHECK(os.str().find("-4.63") != std::string::npos);
  // d/dx sum(w * to_cpu(to_cuda(x))) = w: the gradient of to(device) is grad.to(source device)
  Tensor x = sample(10, Dtype::Float64).requires_grad_();
  const Tensor w = arange(10, Dtype::Float64);
  Tensor y = (x.to(dev).to(Device::cpu()) * w).sum();
  y.backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == Device::cpu());
  CHECK(same_bytes(x.grad(), w));
}

TEST_CASE("cuda: memory statistics and empty_cache" * doctest::skip(!kGpu)) {
  const Device dev = Device::cuda(0);
  const bool caching = cuda::memory_caching_enabled();  // off under PHASOR_NO_CUDA_MEMORY_CACHING=1
  cuda::synchronize(0);
  empty_cache(dev);
  const MemoryStats s0 = memory_stats(dev);
  const std::int64_t small = caching ? 4096 : 4000;  // 4000 bytes -> a 4096-byte block; exact without caching
  {
    const Tensor t = empty({1000}, Dtype::Float32, dev);
    const MemoryStats s1 = memory_stats(dev);
    CHECK(s1.current_bytes == s0.current_bytes + small);
    CHECK(s1.peak_bytes >= s1.current_bytes);
    CHECK(s1.num_allocs == s0.num_allocs + 1);
    const Tensor big = empty({3 << 20}, Dtype::Float32, dev);  // 12 MiB: its own segment
    CHECK(memory_stats(dev).current_bytes == s0.current_bytes + small + (12 << 20));
  }
  const MemoryStats s2 = memory_stats(dev);
  CHECK(s2.current_bytes == s0.current_bytes);
  if (caching) {
    CHECK(s2.cached_bytes >= (12 << 20));
  } else {
    CHECK(s2.cached_bytes == 0);  // both went back to cudaFree as they died
  }
  // a freed block is reused: no new cudaMalloc (without caching: one each time)
  { const Tensor t = empty({1000}, Dtype::Float32, dev); }
  CHECK(memory_stats(dev).num_system_allocs == s2.num_system_allocs + (caching ? 0 : 1));
  reset_peak_memory_stats(dev);
  CHECK(memory_stats(dev).peak_bytes == memory_stats(dev).current_bytes);
  empty_cache(dev);
  if (caching) {
    CHECK(memory_stats(dev).cached_bytes < s2.cached_bytes);
  } else {
    CHECK(memory_stats(dev).cached_bytes == 0);
  }
}

// AddressSanitizer's shadow query: present in the CUDA emulation build with PHASOR_EMU_SANITIZE (its kernels
// are instrumented, Note [CUDA emulation]), absent elsewhere.
extern "C" int __asan_address_is_poisoned(void const volatile* addr) __attribute__((weak));

TEST_CASE("cuda: without caching a kernel may touch exactly its tensors' bytes (emulation under AddressSanitizer)" *
          doctest::skip(!kGpu || cuda::memory_caching_enabled() || !__asan_address_is_poisoned)) {
  const Device dev = Device::cuda(0);
  const char* p = nullptr;
  {
    const Tensor x = full({1000}, 1.5f, Dtype::Float32, dev);
    p = static_cast<const char*>(x.data_ptr());
    CHECK_FALSE(__asan_address_is_poisoned(p));
    CHECK_FALSE(__asan_address_is_poisoned(p + 3999));
    CHECK(__asan_address_is_poisoned(p + 4000));  // the allocation's rounding belongs to no tensor
    const Tensor y = x * 2.0f;                    // a kernel over all of it: no report
    CHECK(y.sum().item<float>() == 3000.0f);
  }
  CHECK(__asan_address_is_poisoned(p));  // freed at once: a kernel still using it would be reported
}

TEST_CASE("cuda: out of memory names the device and the numbers" * doctest::skip(!kGpu)) {
  const std::int64_t n = std::int64_t{1} << 47;  // float64: 1 PiB
  CHECK_THROWS_WITH_AS(empty({n}, Dtype::Float64, Device::cuda(0)),
                       doctest::Contains("[allocate] out of memory on cuda:0: requested 1125899906842624 bytes, free "),
                       Error);
  // the allocator still works afterwards
  const Tensor x = sample(100, Dtype::Float32);
  CHECK(same_bytes(x.to(Device::cuda(0)).to(Device::cpu()), x));
}

#if PHASOR_TEST_CUDA_EMULATION
// A GPU cannot be made to fail on demand; the emulator can (phasor_emu_fail_next), so the library's handling
// of a failing kernel launch, cuBLAS or cuFFT call is checked there. Status values from driver_types.h,
// cublas_api.h and cufft.h.
TEST_CASE("cuda: a failing kernel launch, cuBLAS or cuFFT call is named with its status, changes nothing, and the next call works") {
  constexpr int kCublasExecutionFailed = 13;  // CUBLAS_STATUS_EXECUTION_FAILED
  constexpr int kCufftAllocFailed = 2, kCufftInternalError = 5, kCufftExecFailed = 6;
  const Device dev = Device::cuda(0);
  auto check_unchanged = [](const Tensor& t, const Tensor& host) { CHECK(same_bytes(t, host)); };
  auto count = [](const Shape& s) {
    std::int64_t n = 1;
    for (const std::int64_t d : s) n *= d;
    return n;
  };
  using cuda_test::phasor_emu_fail_next;

  SUBCASE("cuBLAS: the failing call, plain or batched, for each dtype") {
    struct Case {
      Dtype dt;
      Shape sa, sb;
      const char* call;
    };
    for (const Case& c : {Case{Dtype::Float32, {3, 4}, {4, 5}, "cublasSgemm"},
                          Case{Dtype::Float64, {3, 4}, {4, 5}, "cublasDgemm"},
                          Case{Dtype::Complex64, {3, 4}, {4, 5}, "cublasCgemm"},
                          Case{Dtype::Complex128, {3, 4}, {4, 5}, "cublasZgemm"},
                          Case{Dtype::Float32, {2, 3, 4}, {2, 4, 5}, "cublasSgemmStridedBatched"},
                          Case{Dtype::Complex128, {2, 3, 4}, {2, 4, 5}, "cublasZgemmStridedBatched"}}) {
      CAPTURE(c.call);
      const Tensor ha = sample(count(c.sa), c.dt).reshape(c.sa), hb = sample(count(c.sb), c.dt).reshape(c.sb);
      const Tensor a = ha.to(dev), b = hb.to(dev);
      phasor_emu_fail_next(c.call, kCublasExecutionFailed);
      CHECK_THROWS_WITH_AS(matmul(a, b),
                           has(std::string("[matmul] ") + c.call + " failed: CUBLAS_STATUS_EXECUTION_FAILED"), Error);
      check_unchanged(a, ha);
      check_unchanged(b, hb);
      CHECK(allclose(matmul(a, b).to(Device::cpu()), matmul(ha, hb), 1e-5, 1e-5));  // the handle still works
    }
  }

  SUBCASE("a kernel launch: named with the CUDA error; the inputs and the allocator's bytes are unchanged") {
    constexpr int kLaunchOutOfResources = 701;  // cudaErrorLaunchOutOfResources
    const Tensor ha = sample(100, Dtype::Float32), a = ha.to(dev);
    const std::int64_t before = memory_stats(dev).current_bytes;
    phasor_emu_fail_next("cudaLaunchKernel", kLaunchOutOfResources);
    CHECK_THROWS_WITH_AS(a * a, has("[cuda] launch of the mul kernel failed: cudaErrorLaunchOutOfResources"), Error);
    check_unchanged(a, ha);
    CHECK(memory_stats(dev).current_bytes == before);  // the output was freed
    phasor_emu_fail_next("cudaLaunchKernel", kLaunchOutOfResources);
    CHECK_THROWS_WITH_AS(a.sum(), has("[cuda] launch of the reduction kernel failed: cudaErrorLaunchOutOfResources"),
                         Error);
    CHECK(memory_stats(dev).current_bytes == before);
    CHECK(same_bytes((a * a).to(Device::cpu()), ha * ha));  // the next launch works
  }

  SUBCASE("cuFFT: making a plan fails (nothing is cached), runs out of memory once (retried), or executing fails") {
    const Tensor hx = sample(3 * 37, Dtype::Complex64).reshape({3, 37}), x = hx.to(dev);
    const Tensor want = fft::fft(hx);
    fft::clear_plan_cache();  // the plans below are made here, whatever ran before
    phasor_emu_fail_next("cufftMakePlanMany64", kCufftInternalError);
    CHECK_THROWS_WITH_AS(fft::fft(x), has("[fft] cufftMakePlanMany64 failed: CUFFT_INTERNAL_ERROR (5)"), Error);
    check_unchanged(x, hx);
    CHECK(fft::plan_cache_size(dev) == 0);
    CHECK(allclose(fft::fft(x).to(Device::cpu()), want, 1e-5, 1e-5));  // a new plan, made this time

    phasor_emu_fail_next("cufftExecC2C", kCufftExecFailed);  // the cached plan's execution
    CHECK_THROWS_WITH_AS(fft::fft(x), has("[fft] cufftExecC2C failed: CUFFT_EXEC_FAILED (6)"), Error);
    check_unchanged(x, hx);
    CHECK(allclose(fft::fft(x).to(Device::cpu()), want, 1e-5, 1e-5));

    const Tensor hr = sample(2 * 41, Dtype::Float32).reshape({2, 41}), r = hr.to(dev);
    phasor_emu_fail_next("cufftMakePlanMany64", kCufftAllocFailed);  // the cache is released and the plan made again
    CHECK(allclose(fft::rfft(r).to(Device::cpu()), fft::rfft(hr), 1e-5, 1e-5));
    phasor_emu_fail_next("cufftExecR2C", kCufftExecFailed);
    CHECK_THROWS_WITH_AS(fft::rfft(r), has("[fft] cufftExecR2C failed: CUFFT_EXEC_FAILED (6)"), Error);
    check_unchanged(r, hr);
  }
}
#endif

TEST_CASE("cuda: events order work across streams, time it, and name what they cannot do" * doctest::skip(!kGpu)) {
  const cuda::Stream main = cuda::current_stream(0), side = cuda::Stream::create(0);
  const Tensor xs = sample(300000, Dtype::Float32);
  const Tensor x = xs.to(Device::cuda(0));
  // the side stream computes from x once main's copy is done; main uses the result once side is done
  cuda::Event copied;
  copied.record();
  CHECK(copied.is_recorded());
  CHECK(copied.device() == 0);
  CHECK_FALSE(copied.timing_enabled());
  side.wait_event(copied);
  cuda::set_current_stream(side);
  const Tensor y = x * 3.0;
  const cuda::Event done = side.record_event();
  cuda::record_stream(x, side);
  cuda::set_current_stream(main);
  done.wait();  // on main, the current stream
  const Tensor z = y + 1.0;
  CHECK(same_bytes(z.to(Device::cpu()), xs * 3.0 + 1.0));
  done.synchronize();
  CHECK(done.query());
  CHECK(side.query());
  // wait_stream: the same order without naming an event
  cuda::set_current_stream(side);
  main.wait_stream(side);
  const Tensor w = z * 2.0;
  cuda::record_stream(z, side);
  cuda::set_current_stream(main);
  main.wait_stream(side);
  main.wait_stream(main);  // a stream's own work: nothing to do
  CHECK(same_bytes(w.to(Device::cpu()), (xs * 3.0 + 1.0) * 2.0));
  // timing: GPU milliseconds between two timing events' records
  cuda::Event start(true), stop(true);
  start.record(main);
  for (int i = 0; i < 20; ++i) (void)(x * 2.0).exp();
  stop.record();
  stop.synchronize();
  const float ms = start.elapsed_time(stop);
  CHECK(ms >= 0.0f);
  CHECK(ms < 60000.0f);
  CHECK(stop.elapsed_time(start) <= 0.0f);
  // moving hands the CUDA event over
  cuda::Event moved(std::move(start));
  CHECK_FALSE(start.is_recorded());
  CHECK(moved.is_recorded());
  CHECK(moved.elapsed_time(stop) == ms);
  start = std::move(moved);
  CHECK(start.elapsed_time(stop) == ms);
  // what cannot be timed or recorded
  CHECK_THROWS_WITH_AS((void)copied.elapsed_time(stop), "[Event.elapsed_time] both events need enable_timing (start: false, end: true)",
                       Error);
  CHECK_THROWS_WITH_AS((void)start.elapsed_time(cuda::Event(true)), "[Event.elapsed_time] the end event was never recorded", Error);
  const int n = cuda::device_count();
  const std::string absent = std::to_string(n);
  CHECK_THROWS_WITH_AS(copied.record(cuda::Stream::from_native(nullptr, n)),
                       has("[Event.record] device cuda:" + absent + " does not exist"), Error);
  CHECK_THROWS_WITH_AS(main.wait_stream(cuda::Stream::from_native(nullptr, n)),
                       has("[Stream::wait_stream] device cuda:" + absent + " does not exist"), Error);
  CHECK(copied.device() == 0);
  if (n >= 2) {  // an event keeps the device of its first record; streams of two devices order each other
    CHECK_THROWS_WITH_AS(copied.record(cuda::Stream::from_native(nullptr, 1)),
                         "[Event.record] the event belongs to cuda:0 (its first record) but the stream to cuda:1", Error);
    const cuda::Stream other = cuda::current_stream(1);
    const Tensor x1 = (x * 5.0).to(Device::cuda(1));  // ordered by the copy itself
    other.wait_stream(main);
    cuda::Event on1(true), later(true);
    on1.record(other);
    CHECK(on1.device() == 1);
    later.record(cuda::Stream::from_native(nullptr, 0));
    later.synchronize();
    on1.synchronize();
    CHECK_THROWS_WITH_AS((void)on1.elapsed_time(later),
                         "[Event.elapsed_time] the events were recorded on different devices (cuda:1 and cuda:0)", Error);
    done.wait(other);
    CHECK(same_bytes(x1.to(Device::cpu()), xs * 5.0));
  }
  cuda::synchronize();
}

TEST_CASE("cuda: devices out of range and mixed devices" * doctest::skip(!kGpu)) {
  const int n = cuda::device_count();
  const std::string count = std::to_string(n) + (n == 1 ? " CUDA device)" : " CUDA devices)");
  CHECK_THROWS_WITH_AS(empty({2}, Dtype::Float32, Device::cuda(n)),
                       ("[empty] device cuda:" + std::to_string(n) + " does not exist (" + count).c_str(), Error);
  CHECK_THROWS_WITH_AS(ones({2}).to(Device::cuda(n + 3)), has("does not exist (" + count), Error);
  const Tensor d = ones({2}).to(Device::cuda(0));
  CHECK_THROWS_WITH_AS(ones({2}) + d, doctest::Contains("cuda:0"), Error);
  CHECK(d.exp().device() == Device::cuda(0));  // exp has a CUDA kernel now (kernel-less ops: test_cuda_pde.cpp)
}

TEST_CASE("cuda: streams" * doctest::skip(!kGpu)) {
  const cuda::Stream prev = cuda::current_stream(0);  // the default one, unless PHASOR_TEST_CUDA_STREAM=1
  if (!prev.is_default()) cuda::set_current_stream(cuda::Stream::from_native(nullptr, 0));
  CHECK(cuda::current_stream(0).is_default());
  const cuda::Stream s = cuda::Stream::create(0);
  CHECK_FALSE(s.is_default());
  cuda::set_current_stream(s);
  CHECK(cuda::current_stream(0) == s);
  const Tensor x = sample(400000, Dtype::Float32);  // staged, asynchronous on s
  const Tensor d = x.to(Device::cuda(0));
  s.synchronize();
  CHECK(same_bytes(d, x));
  // a product on the side stream (its own cuBLAS handle and workspace), then one on the default stream
  const Tensor m = sample(64 * 48, Dtype::Float64).reshape({64, 48}), w = sample(48 * 32, Dtype::Float64).reshape({48, 32});
  const Tensor side = matmul(m.to(Device::cuda(0)), w.to(Device::cuda(0)));
  s.synchronize();
  cuda::set_current_stream(cuda::Stream::from_native(nullptr, 0));
  const Tensor on_default = matmul(m.to(Device::cuda(0)), w.to(Device::cuda(0)));
  CHECK(allclose(side.to(Device::cpu()), matmul(m, w), 1e-12, 1e-12));
  CHECK(equal(side, on_default));
  CHECK(cuda::current_stream(0).is_default());
  cuda::synchronize();
  cuda::set_current_stream(prev);
}
