// tests/main.cpp - doctest's main for the phasor test binary, and the device op coverage check.
//
// With PHASOR_TEST_DEVICE_COVERAGE=1 (the ctest case device_op_coverage runs the whole suite so) every op
// call is logged as run on the host CPU or on another device (a GPU, or the virtual CPU device the
// DEVICE_CASEs run on everywhere), and so is every primitive call that records a gradient (grad mode on,
// an input requiring grad: the call a backward, or a double backward, differentiates). An op the suite
// runs, or differentiates, on the host but never on a device has no CPU-vs-device agreement test for it:
// the run then fails and names it. Every new op, and every new gradient, needs a DEVICE_CASE.
//
// With PHASOR_TEST_CUDA_STREAM=1 the main thread's current stream on every CUDA device is a stream of its
// own (cuda::Stream::create) instead of the legacy default stream, so the suite also checks that no
// code path assumes the default stream (with the CUDA emulator's queued streams, a missing wait shows).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <phasor/dispatch.hpp>
#include <phasor/phasor.hpp>
#include <set>
#include <string>

namespace {

/// Ops defined by the tests themselves (custom autograd functions in test_autodiff.cpp): not library ops.
const std::set<std::string> kTestOnlyOps = {"bad_sin", "my_exp", "scaled_mul", "two"};

/// Counts each op's calls, and each primitive's calls that record a gradient, with every input on the host
/// CPU and with some input on another device.
class DeviceCoverage : public phasor::OpObserver {
 public:
  void on_begin(const phasor::OpEvent& e) override {
    bool on_device = false, records = false;
    for (const auto& t : *e.inputs) {
      on_device = on_device || (t.defined() && t.device() != phasor::Device::cpu());
      records = records || (t.defined() && t.requires_grad());
    }
    records = records && e.primitive && phasor::GradMode::is_enabled();
    std::lock_guard<std::mutex> lock(mu_);
    auto& c = calls_[e.name];
    ++(on_device ? c.second : c.first);
    if (!records) return;
    auto& g = recorded_[e.name];
    ++(on_device ? g.second : g.first);
  }
  /// Prints the ops run, or differentiated, only on the host; their count.
  int report() {
    std::lock_guard<std::mutex> lock(mu_);
    const auto missing_in = [](const std::map<std::string, std::pair<int, int>>& counts, const char* what) {
      int missing = 0, on_device = 0;
      for (const auto& [name, c] : counts) {
        if (c.second > 0) ++on_device;
        if (c.second > 0 || kTestOnlyOps.count(name)) continue;
        std::printf("device op coverage: '%s' %s %d times on the host CPU and never on a device\n", name.c_str(), what,
                    c.first);
        ++missing;
      }
      std::printf("device op coverage: %d ops %s on a device, %d only on the host CPU\n", on_device, what, missing);
      return missing;
    };
    return missing_in(calls_, "ran") + missing_in(recorded_, "recorded a gradient");
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<int, int>> calls_, recorded_;
};

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("PHASOR_TEST_DEVICE_COVERAGE");
  std::shared_ptr<DeviceCoverage> coverage;
  if (env && std::string(env) == "1") {
    coverage = std::make_shared<DeviceCoverage>();
    phasor::add_op_observer(coverage);
  }
  const char* stream_env = std::getenv("PHASOR_TEST_CUDA_STREAM");
  if (stream_env && std::string(stream_env) == "1")
    for (int d = 0; d < phasor::cuda::device_count(); ++d) phasor::cuda::set_current_stream(phasor::cuda::Stream::create(d));
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (!coverage) return rc;
  phasor::remove_op_observer(coverage);
  const int missing = coverage->report();
  return rc != 0 ? rc : missing > 0 ? 1 : 0;
}
