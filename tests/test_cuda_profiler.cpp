// tests/test_cuda_profiler.cpp - phasor::profiler on a GPU: ops whose inputs are on a CUDA device get GPU spans
// (timing events on the device's current stream), which the summary and the Chrome trace report; none while a
// CUDA graph is being captured. GPU-only cases (skipped without a GPU; the CUDA emulation build runs them).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;
using profiler::Profile;
using profiler::Profiler;
using profiler::Record;

TEST_CASE("cuda profiler: ops on a GPU get GPU spans; the summary and the trace report them" * doctest::skip(!kGpu)) {
  const Tensor a = randn({64, 64}).to(kDev), b = randn({64, 64}).to(kDev);
  (void)matmul(a, b);  // warm: cuBLAS loaded
  Profiler prof;
  prof.start();
  Tensor c;
  {
    profiler::RecordScope range("gpu work");  // a range's span: the current device's
    c = (matmul(a, b) + 1.0).exp().sum();
  }
  const Tensor h = randn({8});  // a CPU op: no span
  const Profile p = prof.stop();
  bool matmul_seen = false;
  for (const Record& r : p.records()) {
    CAPTURE(r.name);
    if (r.name == "gpu work") CHECK(r.gpu_device == 0);
    if (r.name == "randn" || r.name == "normal_") CHECK(r.gpu_device == -1);
    if (r.name == "matmul") {
      matmul_seen = true;
      CHECK(r.gpu_device == 0);
      CHECK(r.gpu_us >= 0);
      CHECK(r.gpu_start_us >= 0);
      CHECK(r.gpu_start_us <= p.wall_us() + 1e3);
    }
  }
  CHECK(matmul_seen);
  double gpu = 0;
  for (const auto& s : p.stats("gpu_total")) gpu += s.gpu_self_us;
  CHECK(gpu >= 0);
  CHECK(p.table("gpu_self").find("gpu ms") != std::string::npos);
  const std::string path = "phasor_test_cuda_trace.json";
  p.export_chrome_trace(path);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::remove(path.c_str());
  CHECK(ss.str().find("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"CUDA\"}}") != std::string::npos);
  CHECK(ss.str().find("\"cat\": \"gpu\"") != std::string::npos);
  CHECK(c.device() == kDev);
}

TEST_CASE("cuda profiler: no GPU spans while a CUDA graph is being captured; the replayed graph is not an op" * doctest::skip(!kGpu)) {
  Tensor x = randn({1000}).to(kDev), y;
  const auto work = [&] { y = (x * 2.0 + 1.0).exp(); };
  work();
  Profiler prof;
  prof.start();
  cuda::Graph g;
  g.capture(work);
  g.replay();
  const Profile p = prof.stop();
  int captured = 0;
  for (const Record& r : p.records())
    if (r.name == "exp") {
      ++captured;
      CHECK(r.gpu_device == -1);
    }
  CHECK(captured == 1);
}
