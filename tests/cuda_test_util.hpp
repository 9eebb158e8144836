// tests/cuda_test_util.hpp - what the CPU-vs-GPU agreement tests (tests/test_cuda_*.cpp) share: whether a
// GPU is present (the GPU cases are skipped without one), the device, random samples, the comparison, and
// DEVICE_CASE, which runs one agreement case on the GPU and on a virtual CPU device.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <phasor/phasor.hpp>

namespace cuda_test {

/// True when a CUDA device is usable (the GPU cases are skipped otherwise).
inline const bool kGpu = phasor::cuda::is_available();
/// The device the GPU-only cases run on.
inline const phasor::Device kDev = phasor::Device::cuda(0);

/// Makes the virtual CPU device cpu:1 exist for its lifetime (phasor::set_cpu_device_count).
struct VirtualCpu {
  VirtualCpu() { phasor::set_cpu_device_count(2); }
  ~VirtualCpu() { phasor::set_cpu_device_count(1); }
  VirtualCpu(const VirtualCpu&) = delete;
  VirtualCpu& operator=(const VirtualCpu&) = delete;
};

#if PHASOR_TEST_CUDA_EMULATION
extern "C" std::uint64_t phasor_emu_host_waits(void);  // tests/cuda_emu/emu.hpp
extern "C" std::uint64_t phasor_emu_launches(void);
extern "C" std::uint64_t phasor_emu_graph_launches(void);
extern "C" void phasor_emu_fail_next(const char* call, int status);
#endif

/// What the CUDA emulator (Note [CUDA emulation]) counts.
enum class EmuCounter {
  HostWaits,  ///< calls that made the host wait for device work (synchronizations, synchronous copies, frees)
  Launches,   ///< kernel launches
  GraphLaunches,  ///< CUDA graph launches
};

/// Runs f() and returns what the emulator counted meanwhile on `dev`; -1 where nothing counts (a real GPU, a
/// CPU device, and host waits with the caching allocator off: then every free waits for the device).
inline long emu_count(const phasor::Device& dev, EmuCounter what, const std::function<void()>& f) {
#if PHASOR_TEST_CUDA_EMULATION
  if (dev.is_cuda() && (what != EmuCounter::HostWaits || phasor::cuda::memory_caching_enabled())) {
    auto read = [what] {
      return what == EmuCounter::HostWaits ? phasor_emu_host_waits()
             : what == EmuCounter::Launches ? phasor_emu_launches()
                                            : phasor_emu_graph_launches();
    };
    const std::uint64_t before = read();
    f();
    return static_cast<long>(read() - before);
  }
#endif
  (void)dev;
  (void)what;
  f();
  return -1;
}

/// Counts op calls that copy a tensor between the host CPU and another device (`to` from or to cpu:0;
/// item() on a device goes through one too).
struct HostCopies : phasor::OpObserver {
  int count = 0;
  std::string last;
  void on_end(const phasor::OpEvent& e) override {
    if (std::string(e.name) != "to" || e.inputs->empty() || e.outputs->empty()) return;
    const phasor::Device from = (*e.inputs)[0].device(), to = (*e.outputs)[0].device();
    if (from != to && (from == phasor::Device::cpu() || to == phasor::Device::cpu())) {
      ++count;
      last = from.str() + " -> " + to.str() + ", shape";
      for (auto n : (*e.inputs)[0].shape()) last += " " + std::to_string(n);
    }
  }
};

/// The message of the phasor::Error f() throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const phasor::Error& e) {
    return e.what();
  }
  return "";
}

/// Copies between the host and a device made by f(): each one stalls the host on a GPU.
inline int host_copies(const std::function<void()>& f, std::string* last = nullptr) {
  auto obs = std::make_shared<HostCopies>();
  phasor::add_op_observer(obs);
  try {
    f();
  } catch (...) {
    phasor::remove_op_observer(obs);
    throw;
  }
  phasor::remove_op_observer(obs);
  if (last) *last = obs->last;
  return obs->count;
}

}  // namespace cuda_test

/// An agreement case whose body compares results on `dev` with the CPU's. It is registered twice:
/// "<name> [cuda:0]", skipped without a GPU, and "<name> [cpu:1]", which always runs on the virtual CPU
/// device cpu:1. The CPU kernels compute both sides there, so the values mostly agree trivially (batched
/// matmul is the exception: cpu:1 runs its GPU path's host logic with CPU gemms); what the cpu:1 run
/// checks is the device plumbing: an op mixing the input's device with a tensor made on the default
/// device (cpu:0) throws, exactly as it would on a GPU, and every result must land on `dev`.
#define DEVICE_CASE(name) DEVICE_CASE_IMPL(DOCTEST_ANONYMOUS(device_case_), name)
#define DEVICE_CASE_IMPL(body, name)                                                          \
  static void body(const phasor::Device& dev);                                                \
  TEST_CASE(name " [cuda:0]" * doctest::skip(!cuda_test::kGpu)) { body(phasor::Device::cuda(0)); } \
  TEST_CASE(name " [cpu:1]") {                                                                \
    cuda_test::VirtualCpu virtual_cpu;                                                        \
    body(phasor::Device::cpu(1));                                                             \
  }                                                                                           \
  static void body(const phasor::Device& dev)

namespace cuda_test {

/// max |a - b| / max(floor, max |b|), both moved to the CPU, in float64 (complex: the modulus); NaN
/// matching NaN and equal infinities count as equal; bool and int64 compare exactly (absolute).
inline double rel_diff(const phasor::Tensor& a, const phasor::Tensor& b, double floor = 1.0) {
  using namespace phasor;
  const Tensor x = a.detach().to(Device::cpu()), y = b.detach().to(Device::cpu());
  REQUIRE(x.shape() == y.shape());
  REQUIRE(x.dtype() == y.dtype());
  if (x.numel() == 0) return 0;
  if (x.dtype() == Dtype::Bool || x.dtype() == Dtype::Int64)
    return (x.to(float64) - y.to(float64)).abs().max().item<double>();
  const Tensor same = (x.isnan() & y.isnan()) | (x == y);
  const Tensor zero = zeros({}, float64);
  const double dmax = where(same, zero, (x - y).abs().to(float64)).max().item<double>();
  return dmax / std::max(floor, where(same, zero, y.abs().to(float64)).max().item<double>());
}

/// Random values of dtype dt and shape s on the CPU: normals (complex: both parts), ints in [-5, 5],
/// bools half true.
inline phasor::Tensor sample(const phasor::Shape& s, phasor::Dtype dt) {
  using namespace phasor;
  const Tensor r = randn(s, float64);
  switch (dt) {
    case Dtype::Bool: return r > 0.0;
    case Dtype::Int64: return (r * 3.0).round().clamp(-5, 5).to(int64);
    case Dtype::Complex64:
    case Dtype::Complex128: return complex(r, randn(s, float64)).to(dt);
    default: return r.to(dt);
  }
}

/// `t` copied to `dev` (undefined stays undefined).
inline phasor::Tensor on(const phasor::Device& dev, const phasor::Tensor& t) { return t.defined() ? t.to(dev) : t; }

/// The sign bit of each element of a real tensor on any device (tells -0 from +0 and -NaN from NaN).
inline std::vector<bool> sign_bits(const phasor::Tensor& t) {
  std::vector<bool> out;
  for (double v : phasor::to_vector<double>(t.to(phasor::Device::cpu()).to(phasor::float64))) out.push_back(std::signbit(v));
  return out;
}

/// True when the ctest case trace_replay runs (PHASOR_TEST_TRACE=1): every agreement case then also checks that its
/// function traced into a static graph replays as it runs eagerly (replay_agrees).
inline bool trace_checks_on() {
  static const bool on = [] {
    const char* e = std::getenv("PHASOR_TEST_TRACE");
    return e && *e && std::string(e) != "0";
  }();
  return on;
}

/// While one lives on this thread, replay_agrees expects tracing to refuse the function (in-place writes into views,
/// which a static graph cannot replay: Note [in-place ops in traces]) instead of replaying it.
struct ExpectUntraceable {
  static bool& on() {
    thread_local bool flag = false;
    return flag;
  }
  ExpectUntraceable() { on() = true; }
  ~ExpectUntraceable() { on() = false; }
  ExpectUntraceable(const ExpectUntraceable&) = delete;
  ExpectUntraceable& operator=(const ExpectUntraceable&) = delete;
};

/// Other values of the shapes, dtypes and layouts of `in`: contiguous inputs of every dtype reversed along every dim
/// (the same values elsewhere: domains and index ranges stay valid, and a step that kept a traced index is caught).
inline std::vector<phasor::Tensor> other_values(const std::vector<phasor::Tensor>& in) {
  std::vector<phasor::Tensor> out;
  for (const auto& t : in) {
    if (!t.defined() || t.dim() == 0 || !t.is_contiguous()) {
      out.push_back(t);
      continue;
    }
    phasor::Shape dims;
    for (std::int64_t d = 0; d < t.dim(); ++d) dims.push_back(d);
    phasor::Tensor o = phasor::flip(t.detach(), dims).contiguous();
    out.push_back(t.requires_grad() ? o.requires_grad_() : o);
  }
  return out;
}

/// g traced on `in` (phasor::jit::trace) and replayed on other_values(in) agrees with g run eagerly on those within
/// eps; where the eager run throws phasor::Error, the replay must throw too (Note [replayable forwards]).
inline void replay_agrees(const std::string& name,
                          const std::function<std::vector<phasor::Tensor>(const std::vector<phasor::Tensor>&)>& g,
                          const std::vector<phasor::Tensor>& in, double eps) {
  using namespace phasor;
  CAPTURE(name);
  jit::Graph graph;
  try {
    graph = jit::trace(g, in);
  } catch (const Error& e) {
    if (ExpectUntraceable::on())
      CHECK_MESSAGE(std::string(e.what()).find("which a replay cannot update") != std::string::npos, std::string(e.what()));
    else
      FAIL_CHECK("tracing failed: " << std::string(e.what()));
    return;
  }
  CHECK_MESSAGE(!ExpectUntraceable::on(), "tracing was expected to refuse the function");
  const std::vector<Tensor> other = other_values(in);
  std::vector<Tensor> want, got;
  std::string want_error, got_error;
  try {
    want = g(other);
  } catch (const Error& e) {
    want_error = e.what();
  }
  try {
    got = graph(other);
  } catch (const Error& e) {
    got_error = e.what();
  }
  if (!want_error.empty()) {
    CHECK_MESSAGE(!got_error.empty(), "the eager run threw (" << want_error << ") but the replay did not");
    return;
  }
  if (!got_error.empty()) {
    FAIL_CHECK("the replay threw: " << std::string(got_error));
    return;
  }
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].defined() == want[i].defined());
    if (want[i].defined()) CHECK(rel_diff(got[i], want[i]) <= eps);
  }
}

/// f on the CPU and on `dev` (inputs copied there) agree within eps (rel_diff); the result lives on `dev`.
inline void agree(const phasor::Device& dev, const std::string& name, const std::function<phasor::Tensor(const std::vector<phasor::Tensor>&)>& f,
           const std::vector<phasor::Tensor>& in, double eps) {
  CAPTURE(name);
  std::vector<phasor::Tensor> g;
  for (const auto& t : in) g.push_back(on(dev, t));
  const phasor::Tensor c = f(in), d = f(g);
  CHECK(d.device() == dev);
  CHECK(rel_diff(d, c) <= eps);
  if (trace_checks_on()) replay_agrees(name, [&f](const std::vector<phasor::Tensor>& x) { return std::vector<phasor::Tensor>{f(x)}; }, in, eps);
}

/// sum |y|^2 (real y: sum y^2), the loss of grads_agree and grad2_agree.
inline phasor::Tensor sum_sq(const phasor::Tensor& y) {
  return y.is_complex() ? (phasor::real(y) * phasor::real(y) + phasor::imag(y) * phasor::imag(y)).sum() : (y * y).sum();
}

/// Each gradient on `dev` (got) is defined, lives on dev and agrees with the CPU's (want) within eps.
inline void gradients_match(const phasor::Device& dev, const std::vector<phasor::Tensor>& got,
                            const std::vector<phasor::Tensor>& want, double eps) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].defined());
    CHECK(got[i].device() == dev);
    CHECK(rel_diff(got[i], want[i]) <= eps);
  }
}

/// Gradients of sum |f(in)|^2 w.r.t. every input, on the CPU and on `dev`, agree.
inline void grads_agree(const phasor::Device& dev, const std::string& name, const std::function<phasor::Tensor(const std::vector<phasor::Tensor>&)>& f,
                 const std::vector<phasor::Tensor>& in, double eps) {
  CAPTURE(name);
  std::vector<phasor::Tensor> c, g;
  for (const auto& t : in) {
    c.push_back(t.detach().clone().requires_grad_());
    g.push_back(t.detach().to(dev).requires_grad_());
  }
  sum_sq(f(c)).backward();
  sum_sq(f(g)).backward();
  std::vector<phasor::Tensor> want, got;
  for (std::size_t i = 0; i < in.size(); ++i) {
    want.push_back(c[i].grad());
    got.push_back(g[i].grad());
  }
  gradients_match(dev, got, want, eps);
  if (trace_checks_on()) {  // the gradient computation traced: every backward formula's ops replayed
    std::vector<phasor::Tensor> x;
    for (const auto& t : in) x.push_back(t.detach().clone().requires_grad_());
    replay_agrees(name + " (gradients)", [&f](const std::vector<phasor::Tensor>& xs) {
      return phasor::autodiff::grad({sum_sq(f(xs))}, xs, {}, std::nullopt, false, /*allow_unused=*/true);
    }, x, eps);
  }
}

/// Second derivatives: h(x) = sum_i |d loss(f(x)) / d x_i|^2 with the first gradients made with create_graph
/// (loss as in grads_agree); h's gradients on `dev` agree with the CPU's within eps.
inline void grad2_agree(const phasor::Device& dev, const std::string& name,
                        const std::function<phasor::Tensor(const std::vector<phasor::Tensor>&)>& f,
                        const std::vector<phasor::Tensor>& in, double eps) {
  CAPTURE(name);
  const auto run = [&](const phasor::Device& d) {
    std::vector<phasor::Tensor> x;
    for (const auto& t : in) x.push_back(t.detach().to(d).requires_grad_());
    const auto g = phasor::autodiff::grad({sum_sq(f(x))}, x, {}, std::nullopt, /*create_graph=*/true);
    phasor::Tensor h;
    for (const auto& gi : g) h = h.defined() ? h + sum_sq(gi) : sum_sq(gi);
    h.backward();
    std::vector<phasor::Tensor> out;
    for (const auto& t : x) out.push_back(t.grad());
    return out;
  };
  gradients_match(dev, run(dev), run(phasor::Device::cpu()), eps);
}

}  // namespace cuda_test
