// cuda::set_deferred_checks (Note [deferred device checks] in src/cuda/deferred_checks.cpp): ops on a GPU check
// the values they validate on the device without a host wait, and the next synchronization throws the op's
// eager error. The GPU cases need a GPU (or the CUDA emulation build): without one doctest reports them as
// skipped.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

using namespace phasor;
using namespace cuda_test;
namespace F = phasor::nn::functional;

namespace {

/// Defers the checks for its lifetime; at its end nothing may be left to report.
struct Deferred {
  Deferred() { cuda::set_deferred_checks(true); }
  ~Deferred() {
    cuda::set_deferred_checks(false);
    if (kGpu) CHECK_MESSAGE(error_of([] { cuda::synchronize(); }).empty(), "a deferred failure was left unreported");
  }
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;
};

/// What the deferred report of a failure of `op` appends to the op's eager message.
std::string later(const std::string& op) {
  return " (a deferred device check: " + op + " ran earlier; this synchronization reports it)";
}

Tensor gpu(const std::vector<std::int64_t>& v) { return from_vector(v).to(kDev); }

}  // namespace

TEST_CASE("cuda deferred checks: off by default, and process-wide") {
  CHECK_FALSE(cuda::deferred_checks());
  {
    Deferred on;
    CHECK(cuda::deferred_checks());
  }
  CHECK_FALSE(cuda::deferred_checks());
}

TEST_CASE("cuda deferred checks: an op on the CPU still throws at once") {
  Deferred on;
  const Tensor x = randn({6, 5});
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector<std::int64_t>({1, 9})),
                       "[index_select] index 9 out of range for a dim of size 6", Error);
  CHECK_THROWS_WITH_AS(F::cross_entropy(randn({2, 3}), from_vector<std::int64_t>({0, 3})),
                       "[cross_entropy] target 3 is out of bounds for 3 classes", Error);
}

TEST_CASE("cuda deferred checks: a failed index check is reported once, at the next synchronization; the failed op and "
          "later checked ones write zeros or add nothing" * doctest::skip(!kGpu)) {
  manual_seed(5);
  const Tensor xc = randn({6, 5}, float64), x = xc.to(kDev);
  const Tensor good = gpu({4, 0, -1}), bad = gpu({1, 9, -8});
  Deferred on;
  Tensor y, z;
  // no host copy and no host wait: the op returns before its check has run
  CHECK(host_copies([&] { y = index_select(x, 0, bad); }) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { z = index_select(x, 0, good); }) <= 0);
  // the first offending value in index order (9, not -8) is named, by the eager message plus the suffix
  const std::string eager = "[index_select] index 9 out of range for a dim of size 6";
  CHECK(error_of([] { cuda::synchronize(); }) == eager + later("index_select"));
  CHECK(error_of([] { cuda::synchronize(); }).empty());  // reported once
  CHECK(rel_diff(y, zeros({3, 5}, float64)) == 0);
  CHECK(rel_diff(z, zeros({3, 5}, float64)) == 0);  // a later checked op stood down
  // after the report the checks run again: the same good call agrees with the CPU
  CHECK(rel_diff(index_select(x, 0, good), index_select(xc, 0, good.to(Device::cpu()))) == 0);
  // item() and to(cpu) are synchronizations too; gather names its dim
  CHECK(error_of([&] { (void)gather(x, 1, gpu({0, 7, 1, 2, 3, 4}).reshape({2, 3})).sum().item<double>(); }) ==
        "[gather] index 7 out of range for dim 1 of size 5" + later("gather"));
  // in place: a scatter with a bad index adds nothing, so its target stays as it was
  Tensor acc = zeros({6, 5}, float64).to(kDev) + 1.0;
  acc.index_add_(0, bad, ones({3, 5}, float64).to(kDev));
  CHECK(error_of([&] { (void)acc.to(Device::cpu()); }) ==
        "[index_add] index 9 out of range for a dim of size 6" + later("index_add"));
  CHECK(rel_diff(acc, ones({6, 5}, float64)) == 0);
  // so do the ops whose flag-checked index is clamped, in place or not
  acc.index_put_({gpu({0, 2}), gpu({1, 5})}, scalar_tensor(7.0, float64, kDev));
  acc.index_fill_(0, bad, 3.0);
  const Tensor taken = take(x, gpu({0, 31}));
  CHECK(error_of([&] { (void)acc.to(Device::cpu()); }) ==
        "[index_put_] index 5 out of range for dim 1 of size 5" + later("index_put_"));
  CHECK(rel_diff(acc, ones({6, 5}, float64)) == 0);
  CHECK(rel_diff(taken, zeros({2}, float64)) == 0);
  // Stream::synchronize reports the checks of its stream
  Tensor w = gather(x, 0, gpu({6, 0, 0, 0, 0}).reshape({1, 5}));
  CHECK(error_of([] { cuda::current_stream().synchronize(); }) ==
        "[gather] index 6 out of range for dim 0 of size 6" + later("gather"));
}

TEST_CASE("cuda deferred checks: the index ops give what checked ones give, with no host copy in forward or "
          "backward" * doctest::skip(!kGpu)) {
  manual_seed(17);
  const Tensor x = randn({6, 5}, float64).to(kDev), s = randn({7, 5}, float64).to(kDev);
  const Tensor i1 = gpu({4, 0, 4, 1, 2, 0, 3}), gi = randint(0, 6, {7, 5}).to(kDev);
  const Tensor i2 = gpu({1, 3, 0, 4, 4, 2, 1}), flat = randint(-30, 30, {9}).to(kDev);
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, Fn>> fs = {
      {"index_select", [&](const Tensor& a) { return index_select(a, 0, i1); }},
      {"gather", [&](const Tensor& a) { return gather(a, 0, gi.narrow(0, 0, 6)); }},
      {"scatter", [&](const Tensor& a) { return scatter(a, 0, gi, s * 1.0); }},
      {"scatter_add", [&](const Tensor& a) { return scatter_add(a, 0, gi, s); }},
      {"scatter_reduce amax", [&](const Tensor& a) { return scatter_reduce(a, 0, gi, s, "amax"); }},
      {"index_add", [&](const Tensor& a) { return index_add(a, 0, i1, s, 2.0); }},
      {"index_copy", [&](const Tensor& a) { return index_copy(a, 0, i1, s); }},
      {"index_fill", [&](const Tensor& a) { return index_fill(a, 1, i1.narrow(0, 0, 3), 1.5); }},
      {"take", [&](const Tensor& a) { return take(a, flat); }},
      {"take_along_dim", [&](const Tensor& a) { return take_along_dim(a, gi.narrow(0, 0, 6), 0); }},
      {"index", [&](const Tensor& a) { return a.index({i1, remainder(i2, 5)}); }},
      {"index_put", [&](const Tensor& a) { return index_put(a, {i1, remainder(i2, 5)}, s.select(1, 0), true); }},
      {"integer division", [&](const Tensor& a) { return a * floor_divide(i1, i2 + 1).to(float64).sum(); }},
  };
  for (const auto& [name, f] : fs) {
    CAPTURE(name);
    const Tensor w = randn(f(x).shape(), float64).to(kDev);
    const Tensor a = x.detach().requires_grad_();
    f(a).backward(w);  // checked: waits for each check
    const Tensor b = x.detach().requires_grad_();
    Tensor y;
    Deferred on;
    std::string last;
    CHECK_MESSAGE(host_copies([&] { y = f(b); }, &last) == 0, "copied: " << last);
    CHECK_MESSAGE(host_copies([&] { y.backward(w); }, &last) == 0, "copied: " << last);
    CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { f(b).backward(w); }) <= 0);
    CHECK(rel_diff(b.grad(), a.grad() * 2.0) == 0);  // two backward passes accumulated
  }
}

TEST_CASE("cuda deferred checks: a classifier's training step waits for nothing, and a bad target is reported by "
          "the loss's item()" * doctest::skip(!kGpu)) {
  manual_seed(8);
  nn::Linear lin(4, 6);
  lin.to(kDev);
  const Tensor emb = randn({10, 4}).to(kDev).requires_grad_();
  optim::SGD opt(lin.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  const Tensor tokens = gpu({3, 1, 9, 0, 4}), target = gpu({5, 0, -100, 3, 2});
  auto step = [&](const Tensor& t) {
    opt.zero_grad();
    Tensor loss = F::cross_entropy(lin.forward(index_select(emb, 0, tokens)), t);
    loss.backward();
    opt.step();
    return loss;
  };
  const double first = step(target).item<double>();  // warm: momentum buffers, checked eagerly
  Deferred on;
  Tensor loss;
  CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { loss = step(target); }) <= 0);
  CHECK(loss.item<double>() < first);
  CHECK(error_of([&] { (void)step(gpu({5, 6, -100, 3, -1})).item<double>(); }) ==
        "[cross_entropy] target 6 is out of bounds for 6 classes" + later("cross_entropy"));
}

TEST_CASE("cuda deferred checks: flag checks (integer division, quantile, clip_grad_norm_, pde rk4) throw the eager "
          "error at a later synchronization" * doctest::skip(!kGpu)) {
  namespace P = phasor::pde;
  const Tensor a = gpu({7, -3, 5}), zero_in = gpu({2, 0, 1});
  const Tensor x = randn({9}).to(kDev), q = from_vector<float>({0.5f, 1.5f}).to(kDev);
  const Tensor p = zeros({3}).to(kDev).requires_grad_();
  (p * std::numeric_limits<float>::infinity()).sum().backward();  // an infinite gradient
  const P::Grid grid({32}, 2.0 * 3.141592653589793);
  const P::Burgers eq(grid, scalar_tensor(1000.0, float64, kDev));  // |L| dt far outside RK4's stability region
  const Tensor u = P::to_spectral(grid, randn({32}, float64)).to(kDev);
  struct Case {
    std::string op;
    std::function<void()> run;
    bool reads;  ///< the op reads a value on the host after its check: that read reports the failure
  };
  const std::vector<Case> cases = {
      {"floor_divide", [&] { (void)floor_divide(a, zero_in); }, false},
      {"quantile", [&] { (void)quantile(x, q); }, false},
      {"clip_grad_norm_", [&] { (void)optim::clip_grad_norm_({p}, 1.0, 2.0, true); }, false},
      {"pde::step", [&] { (void)P::step(eq, u, 0.0, 0.01, P::Stepper::rk4); }, true},
  };
  for (const auto& [op, run, reads] : cases) {
    CAPTURE(op);
    const std::string eager = error_of(run);
    REQUIRE(eager.find("[" + op + "]") == 0);
    Deferred on;
    std::string at_call;
    if (reads) {
      at_call = error_of(run);
    } else {
      CHECK(host_copies([&] { at_call = error_of(run); }) == 0);
    }
    CHECK(at_call.empty() == !reads);
    CHECK(at_call + error_of([] { cuda::synchronize(); }) == eager + later(op));
  }
}

TEST_CASE("cuda deferred checks: the backward of a failed gather reads no bad index" * doctest::skip(!kGpu)) {
  const Tensor x = randn({4, 3}, float64).to(kDev).requires_grad_();
  Deferred on;
  const Tensor idx = gpu({0, 5, 1, 2, 3, 1}).reshape({2, 3});
  gather(x, 0, idx).sum().backward();  // the backward keeps its own device check: it adds nothing
  CHECK(error_of([&] { (void)x.grad().to(Device::cpu()); }) ==
        "[gather] index 5 out of range for dim 0 of size 4" + later("gather"));
  CHECK(rel_diff(x.grad(), zeros({4, 3}, float64)) == 0);
}

TEST_CASE("cuda deferred checks: a process that never synchronizes waits once per 4096 checks, which reports a "
          "failure among them" * doctest::skip(!kGpu)) {
  const Tensor x = arange(8, float32).to(kDev), good = gpu({1, 2}), bad = gpu({1, 8});
  Deferred on;
  Tensor y = index_select(x, 0, bad);
  for (int i = 1; i < 4096; ++i) (void)index_select(x, 0, good);
  std::string err;
  const long waits = emu_count(kDev, EmuCounter::HostWaits, [&] { err = error_of([&] { y = index_select(x, 0, good); }); });
  CHECK(err == "[index_select] index 8 out of range for a dim of size 8" + later("index_select"));
  if (waits >= 0) CHECK(waits >= 1);
  y = index_select(x, 0, good);  // the report cleared the failure: this one runs
  CHECK(to_vector<float>(y) == std::vector<float>{1, 2});
  for (int i = 0; i < 4096; ++i) (void)index_select(x, 0, good);  // all good: the wait at 4096 reports nothing
}

TEST_CASE("cuda deferred checks: a CUDA graph replay with checks does not wait; a later synchronization reports its "
          "failure" * doctest::skip(!kGpu)) {
  const Tensor x = randn({5, 7}).to(kDev), idx = gpu({1, 2, 3});
  const Tensor xc = x.to(Device::cpu());
  Tensor y = index_select(x, 1, idx);
  cuda::Graph g;
  g.capture([&] { y = index_select(x, 1, idx); });
  Deferred on;
  CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); }) <= 0);
  CHECK(rel_diff(y, index_select(xc, 1, idx.to(Device::cpu()))) == 0);
  Tensor(idx).copy_(gpu({1, 9, 3}));
  CHECK(emu_count(kDev, EmuCounter::HostWaits, [&] { g.replay(); }) <= 0);
  g.replay();  // the words are reset before each replay: this one fails too, but the first failure is reported
  CHECK(error_of([] { cuda::synchronize(); }) ==
        "[index_select] index 9 out of range for a dim of size 7 (in a CUDA graph replay)" + later("index_select"));
  CHECK(rel_diff(y, zeros({5, 3})) == 0);
  Tensor(idx).copy_(gpu({0, 6, 2}));
  g.replay();
  CHECK(rel_diff(y, index_select(xc, 1, idx.to(Device::cpu()))) == 0);
  // with checks not deferred, replay() waits and throws itself
  cuda::set_deferred_checks(false);
  Tensor(idx).copy_(gpu({7, 0, 0}));
  CHECK(error_of([&] { g.replay(); }) == "[index_select] index 7 out of range for a dim of size 7 (in a CUDA graph replay)");
}
