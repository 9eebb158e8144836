// src/core/profiler.cpp - phasor::profiler (phasor/profiler.hpp): an OpObserver that keeps one record per op
// call and per RecordScope range, their summaries and the Chrome trace export.
//
// Note [profiler records]
// Each thread has a stack of the calls it has open in a profiler: a call's begin pushes its record (or a
// placeholder past max_depth, so the stack keeps matching the calls), its end pops it. An op that throws never
// reaches its end (observers see only normal returns): the next op to begin on that thread at the same or a
// shallower op depth (OpEvent::depth), or the end of an enclosing op or range, finds it still open and closes it
// as not completed. A range (RecordScope) is not an op: other observers never see it, and its op depth is the
// thread's at its opening. GPU spans: when an op's first CUDA input is on device d (for a range: d is the current
// device, when there is a GPU) and d is not capturing a graph, a timing event is recorded on d's current stream
// at the call's begin and another at its end; stop()
// waits for the devices used and reads each span against that device's first event, recorded with the wall
// time of its recording, which puts the GPU spans on the wall clock to within a launch latency.
#include "phasor/profiler.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/cuda.hpp"
#include "phasor/dispatch.hpp"
#include "phasor/error.hpp"

namespace phasor {
namespace profiler {

namespace {

using Clock = std::chrono::steady_clock;

/// An open call on a thread's stack: its record (-1: past max_depth), its op depth, whether a range.
struct Open {
  std::int64_t record;
  int op_depth;
  bool range;
};

/// A record's GPU span: its two timing events.
struct Span {
  std::unique_ptr<cuda::Event> start, stop;
};

/// A device's reference for reading spans: its first event and the wall time it was recorded at.
struct DeviceClock {
  std::unique_ptr<cuda::Event> ref;
  double ref_us = 0;
};

/// Bytes of the defined tensors in `ts`.
double bytes_of(const std::vector<Tensor>* ts) {
  double b = 0;
  if (ts)
    for (const Tensor& t : *ts)
      if (t.defined()) b += static_cast<double>(t.numel()) * static_cast<double>(itemsize(t.dtype()));
  return b;
}

/// Where t's storage begins (views of one storage share it).
const void* storage_base(const Tensor& t) {
  return static_cast<const char*>(t.data_ptr()) - t.storage_offset() * static_cast<std::int64_t>(itemsize(t.dtype()));
}

/// True when some output shares an input's storage (a view; in-place ops, named with a trailing '_', are not).
bool is_view(const std::string& name, const std::vector<Tensor>* in, const std::vector<Tensor>* out) {
  if (!in || !out || (!name.empty() && name.back() == '_')) return false;
  for (const Tensor& o : *out)
    for (const Tensor& i : *in)
      if (o.defined() && i.defined() && o.numel() > 0 && storage_base(o) == storage_base(i)) return true;
  return false;
}

}  // namespace

namespace detail {

/// A profiler's records and the observer that makes them (Note [profiler records]).
struct ProfilerState : OpObserver {
  ProfilerOptions options;
  std::mutex mu;
  bool running = false;
  Clock::time_point t0;
  std::vector<Record> records;
  std::vector<Span> spans;  // one per record
  std::map<std::thread::id, std::vector<Open>> stacks;
  std::map<std::thread::id, int> threads;
  std::map<int, DeviceClock> clocks;

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

  /// Records the stop event of record r's span, if it has a started one (failures drop the span).
  void stop_span(std::int64_t r) {
    Span& sp = spans[static_cast<std::size_t>(r)];
    if (!sp.start || sp.stop) return;
    try {
      sp.stop = std::make_unique<cuda::Event>(true);
      sp.stop->record(cuda::current_stream(records[static_cast<std::size_t>(r)].gpu_device));
    } catch (const std::exception&) {
      sp = Span{};
      records[static_cast<std::size_t>(r)].gpu_device = -1;
    }
  }

  /// Ends the record of the top entry of `stack` now and pops it.
  void close_top(std::vector<Open>& stack, bool completed, const std::vector<Tensor>* in = nullptr,
                 const std::vector<Tensor>* out = nullptr) {
    const Open o = stack.back();
    stack.pop_back();
    if (o.record < 0) return;
    Record& r = records[static_cast<std::size_t>(o.record)];
    r.cpu_us = now_us() - r.start_us;
    r.completed = completed;
    if (completed && !o.range) r.bytes = is_view(r.name, in, out) ? 0 : r.bytes + bytes_of(out);
    stop_span(o.record);
  }

  /// Closes, as not completed, the ops on top of `stack` that an exception left open: those with an op depth
  /// of at least `depth` (Note [profiler records]); ranges stop it.
  void close_stale(std::vector<Open>& stack, int depth) {
    while (!stack.empty() && !stack.back().range && stack.back().op_depth >= depth) close_top(stack, false);
  }

  /// Starts record of a call (op or range) on the calling thread.
  void begin(const char* name, bool primitive, bool range, int op_depth, const std::vector<Tensor>* inputs) {
    std::lock_guard<std::mutex> lk(mu);
    if (!running) return;
    const std::thread::id id = std::this_thread::get_id();
    std::vector<Open>& stack = stacks[id];
    close_stale(stack, op_depth);
    const int depth = static_cast<int>(stack.size());
    if (options.max_depth() >= 0 && depth > options.max_depth()) {
      stack.push_back({-1, op_depth, range});
      return;
    }
    Record r;
    r.name = name;
    r.depth = depth;
    for (auto it = stack.rbegin(); it != stack.rend() && r.parent < 0; ++it) r.parent = it->record;
    r.primitive = primitive;
    r.range = range;
    r.thread = threads.emplace(id, static_cast<int>(threads.size())).first->second;
    r.bytes = bytes_of(inputs);
    if (options.record_shapes() && inputs)
      for (const Tensor& t : *inputs) r.shapes.push_back(t.defined() ? t.shape() : Shape{});
    // the GPU span's device: an op's first CUDA input's; a range's, the current device when there is a GPU
    int dev = -1;
    if (options.cuda() && inputs)
      for (const Tensor& t : *inputs)
        if (t.defined() && t.device().is_cuda()) {
          dev = t.device().index;
          break;
        }
    if (options.cuda() && range && cuda::is_available()) dev = cuda::current_stream().device();
    Span span;
    if (dev >= 0) {
      try {
        if (!cuda::is_capturing(dev)) {
          DeviceClock& c = clocks[dev];
          if (!c.ref) {
            c.ref = std::make_unique<cuda::Event>(true);
            c.ref->record(cuda::current_stream(dev));
            c.ref_us = now_us();
          }
          span.start = std::make_unique<cuda::Event>(true);
          span.start->record(cuda::current_stream(dev));
          r.gpu_device = dev;
        }
      } catch (const std::exception&) {  // no span rather than a failed op
        span = Span{};
        r.gpu_device = -1;
      }
    }
    r.start_us = now_us();
    records.push_back(std::move(r));
    spans.push_back(std::move(span));
    stack.push_back({static_cast<std::int64_t>(records.size()) - 1, op_depth, range});
  }

  /// Ends the call (op or range) at the top of the calling thread's stack.
  void end(bool range, int op_depth, const std::vector<Tensor>* in, const std::vector<Tensor>* out) {
    std::lock_guard<std::mutex> lk(mu);
    if (!running) return;
    auto it = stacks.find(std::this_thread::get_id());
    if (it == stacks.end()) return;
    std::vector<Open>& stack = it->second;
    if (range) {
      // a range opened before start() has no entry; one opened after it has, with what it left open above
      if (std::none_of(stack.begin(), stack.end(), [](const Open& o) { return o.range; })) return;
      while (!stack.back().range) close_top(stack, false);
      close_top(stack, true);
      return;
    }
    while (!stack.empty() && !stack.back().range && stack.back().op_depth > op_depth) close_top(stack, false);
    if (!stack.empty() && !stack.back().range && stack.back().op_depth == op_depth) close_top(stack, true, in, out);
  }

  void on_begin(const OpEvent& e) override { begin(e.name, e.primitive, false, e.depth, e.inputs); }
  void on_end(const OpEvent& e) override { end(false, e.depth, e.inputs, e.outputs); }
};

}  // namespace detail

namespace {

/// The running profilers (RecordScope's registry); g_running counts them.
std::mutex g_registry_mu;
std::vector<std::shared_ptr<detail::ProfilerState>>& registry() {
  static auto* v = new std::vector<std::shared_ptr<detail::ProfilerState>>;
  return *v;
}
std::atomic<int> g_running{0};

/// The running profilers now.
std::vector<std::shared_ptr<detail::ProfilerState>> running_states() {
  std::lock_guard<std::mutex> lk(g_registry_mu);
  return registry();
}

/// Makes `state` see every op call and RecordScope (`on`), or none any more.
void listen(const std::shared_ptr<detail::ProfilerState>& state, bool on) {
  {
    std::lock_guard<std::mutex> lk(g_registry_mu);
    auto& r = registry();
    if (on) r.push_back(state);
    else r.erase(std::remove(r.begin(), r.end(), state), r.end());
    g_running = static_cast<int>(r.size());
  }
  if (on) add_op_observer(state);
  else remove_op_observer(state);
}

}  // namespace

Profiler::Profiler(ProfilerOptions options) : state_(std::make_shared<detail::ProfilerState>()) { state_->options = options; }

Profiler::~Profiler() {
  if (running()) listen(state_, false);
}

bool Profiler::running() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->running;
}

void Profiler::start() {
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    if (state_->running) throw Error("profiler.start", "the profiler is already running");
    detail::ProfilerState& s = *state_;
    s.records.clear();
    s.spans.clear();
    s.stacks.clear();
    s.threads.clear();
    s.clocks.clear();
    s.t0 = Clock::now();
    s.running = true;
  }
  listen(state_, true);
}

Profile Profiler::stop() {
  if (!running()) throw Error("profiler.stop", "the profiler is not running (call start first)");
  listen(state_, false);
  std::lock_guard<std::mutex> lk(state_->mu);
  detail::ProfilerState& s = *state_;
  for (auto& [id, stack] : s.stacks)
    while (!stack.empty()) s.close_top(stack, false);
  Profile p;
  p.wall_us_ = s.now_us();
  s.running = false;
  for (auto& [dev, c] : s.clocks) cuda::synchronize(dev);
  for (std::size_t i = 0; i < s.records.size(); ++i) {
    Record& r = s.records[i];
    const Span& sp = s.spans[i];
    if (!sp.start || !sp.stop) {
      r.gpu_device = -1;
      continue;
    }
    const DeviceClock& c = s.clocks.at(r.gpu_device);
    r.gpu_start_us = c.ref_us + 1e3 * static_cast<double>(c.ref->elapsed_time(*sp.start));
    r.gpu_us = 1e3 * static_cast<double>(sp.start->elapsed_time(*sp.stop));
  }
  p.records_ = std::move(s.records);
  s.records.clear();
  s.spans.clear();
  s.clocks.clear();
  return p;
}

RecordScope::RecordScope(const char* name) {
  if (g_running.load(std::memory_order_relaxed) == 0) return;
  open_ = true;
  for (const auto& s : running_states()) s->begin(name, false, true, ::phasor::detail::op_depth(), nullptr);
}

RecordScope::RecordScope(const std::string& prefix, const char* suffix) {
  if (g_running.load(std::memory_order_relaxed) == 0) return;  // the name is made only when a profiler runs
  open_ = true;
  const std::string name = prefix + suffix;
  for (const auto& s : running_states()) s->begin(name.c_str(), false, true, ::phasor::detail::op_depth(), nullptr);
}

RecordScope::~RecordScope() {
  if (!open_) return;
  for (const auto& s : running_states()) s->end(true, ::phasor::detail::op_depth(), nullptr, nullptr);
}

// ---- summaries --------------------------------------------------------------------------------------------

namespace {

/// Shapes as "(2, 3), (3,)".
std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& sh : shapes) s += (s.empty() ? "" : ", ") + ::phasor::detail::shape_str(sh);
  return s;
}

}  // namespace

std::vector<OpStats> Profile::stats(const std::string& sort_by, bool group_by_shapes) const {
  using Key = std::function<double(const OpStats&)>;
  static const std::map<std::string, Key> keys = {
      {"cpu_total", [](const OpStats& o) { return o.cpu_total_us; }},
      {"cpu_self", [](const OpStats& o) { return o.cpu_self_us; }},
      {"gpu_total", [](const OpStats& o) { return o.gpu_total_us; }},
      {"gpu_self", [](const OpStats& o) { return o.gpu_self_us; }},
      {"calls", [](const OpStats& o) { return static_cast<double>(o.calls); }}};
  const auto key = keys.find(sort_by);
  if (key == keys.end())
    throw Error("profiler.stats", "unknown sort key '" + sort_by + "' (use cpu_total, cpu_self, gpu_total, gpu_self or calls)");
  // what each record's children took, to subtract for the self times
  std::vector<double> child_cpu(records_.size(), 0), child_gpu(records_.size(), 0);
  for (const Record& r : records_)
    if (r.parent >= 0) {
      child_cpu[static_cast<std::size_t>(r.parent)] += r.cpu_us;
      if (r.gpu_device >= 0) child_gpu[static_cast<std::size_t>(r.parent)] += r.gpu_us;
    }
  std::map<std::pair<std::string, std::string>, OpStats> groups;  // by name, then shapes
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    OpStats& o = groups[{r.name, group_by_shapes ? shapes_str(r.shapes) : std::string()}];
    o.name = r.name;
    if (group_by_shapes) o.shapes = r.shapes;
    o.calls += 1;
    o.cpu_total_us += r.cpu_us;
    o.cpu_self_us += std::max(0.0, r.cpu_us - child_cpu[i]);
    if (r.gpu_device >= 0) {
      o.gpu_total_us += r.gpu_us;
      o.gpu_self_us += std::max(0.0, r.gpu_us - child_gpu[i]);
    }
    o.bytes += r.bytes;
  }
  std::vector<OpStats> out;
  for (auto& [key, o] : groups) out.push_back(std::move(o));
  std::stable_sort(out.begin(), out.end(),
                   [&](const OpStats& a, const OpStats& b) { return key->second(a) > key->second(b); });
  return out;
}

std::string Profile::table(const std::string& sort_by, std::size_t rows, bool group_by_shapes) const {
  const std::vector<OpStats> st = stats(sort_by, group_by_shapes);
  bool gpu = false;  // the GPU columns only where some record has a GPU span
  for (const Record& r : records_) gpu = gpu || r.gpu_device >= 0;
  char line[256];
  std::string s;
  std::snprintf(line, sizeof line, "phasor profile: %zu records in %.3f ms of wall time, sorted by %s\n",
                records_.size(), wall_us_ / 1e3, sort_by.c_str());
  s += line;
  std::snprintf(line, sizeof line, "%-32s %7s %11s %11s %7s", "name", "calls", "cpu ms", "cpu self", "self %");
  s += line;
  if (gpu) {
    std::snprintf(line, sizeof line, " %11s %11s", "gpu ms", "gpu self");
    s += line;
  }
  s += group_by_shapes ? "        GB     GB/s  shapes\n" : "        GB     GB/s\n";
  const double wall = wall_us_ > 0 ? wall_us_ : 1;
  for (std::size_t i = 0; i < st.size() && i < rows; ++i) {
    const OpStats& o = st[i];
    const std::string name = o.name.size() > 32 ? o.name.substr(0, 29) + "..." : o.name;
    std::snprintf(line, sizeof line, "%-32s %7lld %11.3f %11.3f %6.1f%%", name.c_str(), static_cast<long long>(o.calls),
                  o.cpu_total_us / 1e3, o.cpu_self_us / 1e3, 100.0 * o.cpu_self_us / wall);
    s += line;
    if (gpu) {
      std::snprintf(line, sizeof line, " %11.3f %11.3f", o.gpu_total_us / 1e3, o.gpu_self_us / 1e3);
      s += line;
    }
    // bandwidth over the GPU time where there is one, else the wall time
    const double t = o.gpu_total_us > 0 ? o.gpu_total_us : o.cpu_total_us;
    std::snprintf(line, sizeof line, " %9.3f %8.1f", o.bytes / 1e9, t > 0 ? o.bytes / t / 1e3 : 0.0);
    s += line;
    s += group_by_shapes ? "  " + shapes_str(o.shapes) + "\n" : "\n";
  }
  if (st.size() > rows) s += "... " + std::to_string(st.size() - rows) + " more\n";
  return s;
}

namespace {

/// s as a JSON string literal.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

/// A number for JSON (finite, microseconds with 3 decimals).
std::string json_number(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.3f", std::isfinite(v) ? v : 0.0);
  return b;
}

}  // namespace

void Profile::export_stats_csv(const std::string& path, const std::string& sort_by, bool group_by_shapes) const {
  const std::vector<OpStats> st = stats(sort_by, group_by_shapes);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("profiler.export_stats_csv", "cannot open '" + path + "' for writing");
  // a field with a comma or a quote is quoted, its quotes doubled
  const auto field = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (const char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  f << "name,shapes,calls,cpu_total_us,cpu_self_us,gpu_total_us,gpu_self_us,bytes\n";
  for (const OpStats& o : st)
    f << field(o.name) << ',' << field(shapes_str(o.shapes)) << ',' << o.calls << ',' << json_number(o.cpu_total_us) << ','
      << json_number(o.cpu_self_us) << ',' << json_number(o.gpu_total_us) << ',' << json_number(o.gpu_self_us) << ','
      << json_number(o.bytes) << '\n';
  if (!f) throw Error("profiler.export_stats_csv", "writing '" + path + "' failed");
}

void Profile::export_chrome_trace(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("profiler.export_chrome_trace", "cannot open '" + path + "' for writing");
  f << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  f << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"CPU\"}}";
  bool gpu = false;
  for (const Record& r : records_) gpu = gpu || r.gpu_device >= 0;
  if (gpu) f << ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"CUDA\"}}";
  for (const Record& r : records_) {
    std::string args = "\"depth\": " + std::to_string(r.depth) + ", \"bytes\": " + json_number(r.bytes);
    if (!r.completed) args += ", \"completed\": false";
    if (!r.shapes.empty()) args += ", \"shapes\": " + json_string(shapes_str(r.shapes));
    const std::string cat = r.range ? "range" : r.primitive ? "op" : "composite";
    f << ",\n{\"name\": " << json_string(r.name) << ", \"cat\": \"" << cat << "\", \"ph\": \"X\", \"ts\": "
      << json_number(r.start_us) << ", \"dur\": " << json_number(r.cpu_us) << ", \"pid\": 0, \"tid\": " << r.thread
      << ", \"args\": {" << args << "}}";
    if (r.gpu_device >= 0)
      f << ",\n{\"name\": " << json_string(r.name) << ", \"cat\": \"gpu\", \"ph\": \"X\", \"ts\": "
        << json_number(r.gpu_start_us) << ", \"dur\": " << json_number(r.gpu_us) << ", \"pid\": 1, \"tid\": "
        << r.gpu_device << ", \"args\": {" << args << "}}";
  }
  f << "\n]}\n";
  if (!f) throw Error("profiler.export_chrome_trace", "writing '" + path + "' failed");
}

}  // namespace profiler
}  // namespace phasor
