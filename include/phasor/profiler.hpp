// phasor/profiler.hpp - a profiler of op calls (the role of torch.profiler): it collects every op's wall time
// on the calling thread and, for ops on a GPU, the GPU time of the work the op queued; it summarizes them per
// op name (calls, total and self times, bytes moved) and exports a Chrome trace (chrome://tracing, Perfetto).
//
//   phasor::profiler::Profiler prof;              // ProfilerOptions().record_shapes(true) to keep shapes
//   prof.start();
//   {
//     phasor::profiler::RecordScope step("train step");   // a named range around the ops inside it
//     loss = model.forward(x); loss.backward(); opt.step();
//   }
//   const phasor::profiler::Profile p = prof.stop();
//   std::cout << p.table("cpu_self");               // or "cpu_total", "gpu_total", "gpu_self", "calls"
//   p.export_chrome_trace("trace.json");            // or export_stats_csv("ops.csv")
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {
namespace profiler {

namespace detail {
struct ProfilerState;  // src/core/profiler.cpp
}  // namespace detail

/// What a Profiler records.
class ProfilerOptions {
 public:
  /// Whether each record keeps its op's input shapes (and the trace's args show them); false by default.
  bool record_shapes() const { return record_shapes_; }
  /// Keeps (or not) each op's input shapes.
  ProfilerOptions& record_shapes(bool v) { record_shapes_ = v; return *this; }
  /// Whether ops whose inputs are on a CUDA device, and ranges when there is a GPU (on the current device), get a
  /// GPU span: a pair of timing events on that device's current stream around the call (none while a CUDA graph
  /// is being captured); true by default.
  bool cuda() const { return cuda_; }
  /// Turns the GPU spans on or off.
  ProfilerOptions& cuda(bool v) { cuda_ = v; return *this; }
  /// The deepest nesting recorded (0: only what the user called; -1, the default: every depth).
  int max_depth() const { return max_depth_; }
  /// Sets the deepest nesting recorded.
  ProfilerOptions& max_depth(int v) { max_depth_ = v; return *this; }

 private:
  bool record_shapes_ = false;
  bool cuda_ = true;
  int max_depth_ = -1;
};

/// One op call, or one RecordScope range, as recorded.
struct Record {
  std::string name;            ///< the op's name ("add", "matmul", "linalg_solve") or the range's
  int depth = 0;               ///< nesting: 0 for a call the user made, 1 for the ops inside it, ...
  std::int64_t parent = -1;    ///< index of the enclosing record in Profile::records(), -1 at depth 0
  bool primitive = false;      ///< an op with its own kernels and gradient (false: composite op or range)
  bool range = false;          ///< a RecordScope, not an op
  bool completed = true;       ///< false when the op threw, or was still open at stop() (its time ends there)
  int thread = 0;              ///< the calling thread: 0 for the first thread seen, 1 for the next, ...
  double start_us = 0;         ///< wall time from Profiler::start to the call
  double cpu_us = 0;           ///< wall time of the call on its thread
  int gpu_device = -1;         ///< the CUDA device of the GPU span, -1 for none
  double gpu_start_us = 0;     ///< the GPU span's start (on the wall clock of start_us, aligned per device)
  double gpu_us = 0;           ///< GPU time between the span's two events
  double bytes = 0;            ///< the fewest bytes the op moves: its inputs and outputs once each (0 for a view)
  std::vector<Shape> shapes;   ///< input shapes (with record_shapes)
};

/// Totals per op (or range) name.
struct OpStats {
  std::string name;           ///< op or range name
  std::vector<Shape> shapes;  ///< the input shapes of the group (stats with group_by_shapes; empty otherwise)
  std::int64_t calls = 0;     ///< records of that name
  double cpu_total_us = 0;    ///< summed wall time
  double cpu_self_us = 0;     ///< summed wall time outside the recorded children
  double gpu_total_us = 0;    ///< summed GPU span time
  double gpu_self_us = 0;     ///< summed GPU span time outside the children's spans
  double bytes = 0;           ///< summed Record::bytes
};

/// What a Profiler recorded between start() and stop(), and its summaries.
class Profile {
 public:
  /// Every record, in the order the calls began (per thread).
  const std::vector<Record>& records() const { return records_; }
  /// Wall time from start() to stop(), microseconds.
  double wall_us() const { return wall_us_; }
  /// Totals per name (per name and input shapes with `group_by_shapes`, which needs records made with
  /// record_shapes), sorted by `sort_by` ("cpu_total", "cpu_self", "gpu_total", "gpu_self", "calls"), largest
  /// first.
  std::vector<OpStats> stats(const std::string& sort_by = "cpu_total", bool group_by_shapes = false) const;
  /// stats(sort_by, group_by_shapes) as a text table of its first `rows` rows (milliseconds, shares of the wall
  /// time, GB, GB/s; the shapes in a last column when grouped by them).
  std::string table(const std::string& sort_by = "cpu_total", std::size_t rows = 25, bool group_by_shapes = false) const;
  /// Writes stats(sort_by, group_by_shapes) as CSV: a header line, then one line per group (name, shapes,
  /// calls, cpu_total_us, cpu_self_us, gpu_total_us, gpu_self_us, bytes).
  void export_stats_csv(const std::string& path, const std::string& sort_by = "cpu_total", bool group_by_shapes = false) const;
  /// Writes the records as a Chrome trace (JSON: one complete event per record; GPU spans on a process of
  /// their own, one track per device), for chrome://tracing or https://ui.perfetto.dev.
  void export_chrome_trace(const std::string& path) const;

 private:
  friend class Profiler;
  std::vector<Record> records_;
  double wall_us_ = 0;
};

/// Records every op call on every thread between start() and stop() (OpObserver, phasor/dispatch.hpp), and the
/// RecordScope ranges. Profilers may run side by side; each sees everything.
class Profiler {
 public:
  /// A profiler not yet started.
  explicit Profiler(ProfilerOptions options = {});
  /// Stops recording (what was recorded is dropped unless stop() returned it).
  ~Profiler();
  Profiler(const Profiler&) = delete;             ///< not copyable
  Profiler& operator=(const Profiler&) = delete;  ///< not copyable
  /// Starts recording (a profiler that already runs throws).
  void start();
  /// Stops recording and returns the records; waits for the GPU work of the recorded spans.
  Profile stop();
  /// True between start() and stop().
  bool running() const;

 private:
  std::shared_ptr<detail::ProfilerState> state_;
};

/// A named range around the work of its lifetime (a training step, a solver phase): recorded by every running
/// profiler as a record of its own, the ops inside nested under it. Costs one atomic load when none runs.
class RecordScope {
 public:
  /// Opens the range `name` on the calling thread.
  explicit RecordScope(const char* name);
  /// Opens the range `name` on the calling thread.
  explicit RecordScope(const std::string& name) : RecordScope(name.c_str()) {}
  /// Opens the range prefix + suffix, the name made only when a profiler runs (for ranges on hot paths).
  RecordScope(const std::string& prefix, const char* suffix);
  /// Closes it.
  ~RecordScope();
  RecordScope(const RecordScope&) = delete;             ///< not copyable
  RecordScope& operator=(const RecordScope&) = delete;  ///< not copyable

 private:
  bool open_ = false;
};

}  // namespace profiler
}  // namespace phasor
