// tests/test_profiler.cpp - phasor::profiler (phasor/profiler.hpp): what a Profiler records (every op call with
// its nesting, ranges, shapes, bytes, threads, ops that throw), its summaries and its Chrome trace; bad use.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <phasor/phasor.hpp>

using namespace phasor;
using profiler::Profile;
using profiler::Profiler;
using profiler::ProfilerOptions;
using profiler::Record;
using profiler::RecordScope;

namespace {

/// The records named `name`.
std::vector<Record> named(const Profile& p, const std::string& name) {
  std::vector<Record> out;
  for (const Record& r : p.records())
    if (r.name == name) out.push_back(r);
  return out;
}

/// The stats row of `name` (calls 0 when absent).
profiler::OpStats stats_of(const Profile& p, const std::string& name) {
  for (const auto& s : p.stats()) if (s.name == name) return s;
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("profiler: records each op call with its time, nesting and bytes; nothing before start or after stop") {
  const Tensor x = randn({1000}), y = randn({1000});
  Profiler prof;
  (void)(x + y);  // not started: not recorded
  CHECK_FALSE(prof.running());
  prof.start();
  CHECK(prof.running());
  const Tensor s = (x + y).mean();
  const Tensor l = nn::functional::mse_loss(x, y);  // a composite op: its primitives nest under it
  const Tensor v = x.reshape({10, 100});            // a view moves nothing
  const Profile p = prof.stop();
  (void)(x * y);
  CHECK_FALSE(prof.running());
  REQUIRE(named(p, "add").size() == 1);
  const Record add = named(p, "add")[0];
  CHECK(add.depth == 0);
  CHECK(add.parent == -1);
  CHECK(add.primitive);
  CHECK(add.completed);
  CHECK(add.thread == 0);
  CHECK(add.cpu_us >= 0);
  CHECK(add.gpu_device == -1);
  CHECK(add.bytes == 3 * 1000 * 4);  // two float32 inputs and one output
  CHECK(named(p, "mul").empty());
  CHECK(named(p, "mean").size() == 2);  // the user's and mse_loss's
  CHECK(named(p, "mean")[0].depth == 0);
  CHECK(named(p, "mean")[1].depth == 1);
  REQUIRE(named(p, "mse_loss").size() == 1);
  const Record mse = named(p, "mse_loss")[0];
  CHECK_FALSE(mse.primitive);
  std::int64_t mse_index = -1, children = 0;
  for (std::size_t i = 0; i < p.records().size(); ++i)
    if (p.records()[i].name == "mse_loss") mse_index = static_cast<std::int64_t>(i);
  double child_us = 0;
  for (const Record& r : p.records())
    if (r.parent == mse_index) {
      ++children;
      CHECK(r.depth == 1);
      CHECK(r.start_us >= mse.start_us);
      CHECK(r.start_us + r.cpu_us <= mse.start_us + mse.cpu_us + 1e-3);
      child_us += r.cpu_us;
    }
  CHECK(children >= 2);
  CHECK(child_us <= mse.cpu_us + 1e-3);
  for (const Record& r : named(p, "reshape")) CHECK(r.bytes == 0);
  // records in call order, within the wall time
  for (std::size_t i = 1; i < p.records().size(); ++i) CHECK(p.records()[i].start_us >= p.records()[i - 1].start_us);
  for (const Record& r : p.records()) CHECK(r.start_us + r.cpu_us <= p.wall_us() + 1e-3);
  // the summary: self time is the total less the recorded children's
  const auto st = stats_of(p, "mse_loss");
  CHECK(st.calls == 1);
  CHECK(st.cpu_total_us == doctest::Approx(mse.cpu_us));
  CHECK(st.cpu_self_us == doctest::Approx(std::max(0.0, mse.cpu_us - child_us)));
  CHECK(stats_of(p, "add").bytes == 12000);
  // a profiler starts again with fresh records
  prof.start();
  (void)(x * y);
  const Profile q = prof.stop();
  CHECK(named(q, "mul").size() == 1);
  CHECK(named(q, "add").empty());
}

TEST_CASE("profiler: RecordScope ranges nest the ops inside them; backward and optimizer steps are ranges of their own") {
  {
    RecordScope idle("nobody listens");  // no profiler runs: nothing happens
  }
  nn::Linear lin(4, 3);
  optim::Adam adam(lin.parameters(), optim::AdamOptions(1e-2));
  const Tensor x = randn({8, 4}), y = randn({8, 3});
  Profiler prof;
  prof.start();
  {
    RecordScope step("train step");
    {
      RecordScope fwd(std::string("forward"));
      const Tensor loss = nn::functional::mse_loss(lin.forward(x), y);
      adam.zero_grad();
      loss.backward();
    }
    adam.step();
  }
  const Profile p = prof.stop();
  REQUIRE(named(p, "train step").size() == 1);
  const Record step = named(p, "train step")[0];
  CHECK(step.range);
  CHECK(step.depth == 0);
  CHECK(step.completed);
  REQUIRE(named(p, "forward").size() == 1);
  CHECK(named(p, "forward")[0].depth == 1);
  CHECK(named(p, "mse_loss")[0].depth == 2);
  REQUIRE(named(p, "autograd.backward").size() == 1);
  CHECK(named(p, "autograd.backward")[0].depth == 2);
  REQUIRE(named(p, "optim.Adam.step").size() == 1);
  CHECK(named(p, "optim.Adam.step")[0].depth == 1);
  // every record but the outermost range lies inside it
  for (const Record& r : p.records()) {
    if (r.name == "train step") continue;
    CHECK(r.depth >= 1);
    CHECK(r.start_us >= step.start_us);
  }
  // the table names the ranges and ops, largest first
  const std::string t = p.table("cpu_total", 5);
  CHECK(t.find("phasor profile: ") == 0);
  CHECK(t.find("train step") != std::string::npos);
  CHECK(t.find("more\n") != std::string::npos);
  CHECK(t.find("gpu ms") == std::string::npos);  // no GPU span: no GPU columns
  const auto st = p.stats("cpu_total");
  CHECK(st[0].name == "train step");
  for (std::size_t i = 1; i < st.size(); ++i) CHECK(st[i - 1].cpu_total_us >= st[i].cpu_total_us);
  const auto by_calls = p.stats("calls");
  for (std::size_t i = 1; i < by_calls.size(); ++i) CHECK(by_calls[i - 1].calls >= by_calls[i].calls);
}

TEST_CASE("profiler: options: shapes, the deepest nesting; ops that throw; other threads") {
  const Tensor a = randn({3, 4}), b = randn({4, 5});
  {
    Profiler prof(ProfilerOptions().record_shapes(true).max_depth(0));
    prof.start();
    (void)matmul(a, b);
    (void)nn::functional::mse_loss(a, a);
    const Profile p = prof.stop();
    REQUIRE(named(p, "matmul").size() == 1);
    CHECK(named(p, "matmul")[0].shapes == std::vector<Shape>{{3, 4}, {4, 5}});
    for (const Record& r : p.records()) CHECK(r.depth == 0);
    CHECK(named(p, "mse_loss").size() == 1);
  }
  {
    // an op that throws: its record is closed, not completed, and the calls after it nest as they should
    Profiler prof;
    prof.start();
    CHECK_THROWS_AS((void)linalg::solve(zeros({2, 2}), ones({2})), Error);  // thrown inside the primitive
    (void)(a + a);
    const Profile p = prof.stop();
    REQUIRE(named(p, "linalg_solve").size() == 2);  // the composite and its primitive
    CHECK_FALSE(named(p, "linalg_solve")[0].completed);
    CHECK_FALSE(named(p, "linalg_solve")[1].completed);
    CHECK(named(p, "linalg_solve")[1].depth == 1);
    REQUIRE(named(p, "add").size() == 1);
    CHECK(named(p, "add")[0].depth == 0);
    CHECK(named(p, "add")[0].completed);
  }
  {
    // a second thread's ops get a thread id of their own
    Profiler prof;
    prof.start();
    (void)(a + a);
    std::thread t([&] { (void)(a * a); });
    t.join();
    const Profile p = prof.stop();
    REQUIRE(named(p, "mul").size() == 1);
    CHECK(named(p, "add")[0].thread == 0);
    CHECK(named(p, "mul")[0].thread == 1);
    CHECK(named(p, "mul")[0].depth == 0);
  }
  {
    // a range still open at stop() ends there, not completed
    Profiler prof;
    prof.start();
    RecordScope open("still open");
    const Profile p = prof.stop();
    REQUIRE(named(p, "still open").size() == 1);
    CHECK_FALSE(named(p, "still open")[0].completed);
  }
}

TEST_CASE("profiler: the Chrome trace has one complete event per record") {
  const Tensor x = randn({16});
  Profiler prof(ProfilerOptions().record_shapes(true));
  prof.start();
  {
    RecordScope r("a \"quoted\" range");
    (void)(x.exp() + 1.0).sum();
  }
  const Profile p = prof.stop();
  const std::string path = "phasor_test_trace.json";
  p.export_chrome_trace(path);
  const std::string json = read_file(path);
  std::remove(path.c_str());
  CHECK(json.find("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [") == 0);
  CHECK(json.substr(json.size() - 4) == "\n]}\n");
  std::size_t events = 0;
  for (std::size_t at = json.find("\"ph\": \"X\""); at != std::string::npos; at = json.find("\"ph\": \"X\"", at + 1)) ++events;
  CHECK(events == p.records().size());
  CHECK(json.find("\"name\": \"a \\\"quoted\\\" range\", \"cat\": \"range\"") != std::string::npos);
  CHECK(json.find("\"name\": \"exp\", \"cat\": \"op\"") != std::string::npos);
  CHECK(json.find("\"shapes\": \"(16,)\"") != std::string::npos);
}

TEST_CASE("profiler: totals grouped by input shapes; the CSV export of the totals") {
  const Tensor a = randn({3, 4}), b = randn({8});
  Profiler prof(ProfilerOptions().record_shapes(true));
  prof.start();
  for (int i = 0; i < 3; ++i) (void)(a + a);
  (void)(b + b);
  {
    RecordScope r("a \"range\", with a comma");
  }
  const Profile p = prof.stop();
  std::vector<profiler::OpStats> adds;
  for (const auto& st : p.stats("calls", true))
    if (st.name == "add") adds.push_back(st);
  REQUIRE(adds.size() == 2);
  CHECK(adds[0].calls == 3);
  CHECK(adds[0].shapes == std::vector<Shape>{{3, 4}, {3, 4}});
  CHECK(adds[1].calls == 1);
  CHECK(adds[1].shapes == std::vector<Shape>{{8}, {8}});
  CHECK(stats_of(p, "add").calls == 4);  // by name only
  CHECK(stats_of(p, "add").shapes.empty());
  CHECK(p.table("calls", 10, true).find("(3, 4), (3, 4)") != std::string::npos);
  const std::string path = "phasor_test_stats.csv";
  p.export_stats_csv(path, "calls", true);
  const std::string csv = read_file(path);
  std::remove(path.c_str());
  CHECK(csv.find("name,shapes,calls,cpu_total_us,cpu_self_us,gpu_total_us,gpu_self_us,bytes\n") == 0);
  CHECK(csv.find("\nadd,\"(3, 4), (3, 4)\",3,") != std::string::npos);
  CHECK(csv.find("\n\"a \"\"range\"\", with a comma\",,1,") != std::string::npos);
  std::size_t lines = 0;
  for (const char c : csv) lines += c == '\n';
  CHECK(lines == p.stats("calls", true).size() + 1);
  CHECK_THROWS_WITH_AS(p.export_stats_csv("/nonexistent/dir/ops.csv"),
                       "[profiler.export_stats_csv] cannot open '/nonexistent/dir/ops.csv' for writing", Error);
}

TEST_CASE("profiler: bad use is an error") {
  Profiler prof;
  CHECK_THROWS_WITH_AS(prof.stop(), "[profiler.stop] the profiler is not running (call start first)", Error);
  prof.start();
  CHECK_THROWS_WITH_AS(prof.start(), "[profiler.start] the profiler is already running", Error);
  const Profile p = prof.stop();
  CHECK_THROWS_WITH_AS(p.stats("time"),
                       "[profiler.stats] unknown sort key 'time' (use cpu_total, cpu_self, gpu_total, gpu_self or calls)", Error);
  CHECK_THROWS_WITH_AS(p.export_chrome_trace("/nonexistent/dir/trace.json"),
                       "[profiler.export_chrome_trace] cannot open '/nonexistent/dir/trace.json' for writing", Error);
}
