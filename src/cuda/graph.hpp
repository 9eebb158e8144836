// src/cuda/graph.hpp - what the rest of the library needs to know about CUDA graph capture (Note
// [CUDA graphs] in graph.cpp), without CUDA types: whether the calling thread is capturing, refusing
// work that cannot be captured, keeping resources alive as long as a captured graph, host values the
// captured work reads (random numbers' counters, learning rates).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "phasor/device.hpp"

namespace phasor {
namespace cuda {
namespace detail {

/// True while the calling thread captures a graph on CUDA device `device` (false for a CPU device).
bool capturing(Device device);
/// Throws phasor::Error(op, "<what> cannot be captured into a CUDA graph: <why>") while the calling thread
/// captures on `device`; nothing otherwise.
void refuse_in_capture(Device device, const char* op, const char* what, const char* why);
/// Keeps `resource` alive as long as the graph being captured on `device` (nothing when not capturing).
void keep_for_graph(Device device, std::shared_ptr<const void> resource);
/// While the calling thread captures on `device`: `words` uint64 of device memory, owned by the graph,
/// that the captured work reads and that each replay first sets to what `fill` writes on the host then
/// (Note [host values in CUDA graphs]); nullptr when not capturing. At most kMaxWordWrites words.
const void* capture_host_values(Device device, int words, std::function<void(std::uint64_t*)> fill);
/// While the calling thread captures on `device`: reserves n counters of the graph's share of the default
/// generator, sets `start` to the first one's offset from a replay's base and returns the device address of
/// the (seed, base) pair each replay writes (Note [random numbers in CUDA graphs]); nullptr otherwise.
const void* capture_random_counters(Device device, std::uint64_t n, std::uint64_t& start);

/// What a failed device check reports: the message of phasor::Error(op, ...) made from the two words its
/// kernels stored (Note [device checks in CUDA graphs]).
using CheckReport = std::function<std::string(std::uint64_t, std::uint64_t)>;
/// A registered device check: the op whose phasor::Error a failure throws, and its message.
struct DeviceCheck {
  std::string op;
  CheckReport report;
};
/// While the calling thread captures on `device`: registers a device-side check of `op` (Note [device checks
/// in CUDA graphs]) whose failure replay() reports as phasor::Error(op, "<report(words[1], words[2])> (in a
/// CUDA graph replay)"), sets `id` to its number (from 1) and returns the graph's three check words; nullptr
/// when not capturing.
std::uint64_t* capture_check(Device device, const char* op, CheckReport report, std::uint64_t& id);
/// The check words of the graph the calling thread captures on `device`; nullptr when not capturing there or
/// when the capture has registered no check yet.
std::uint64_t* capture_check_words(Device device);

/// True when ops on `device` check values on the device instead of waiting for them: a CUDA device the calling
/// thread captures on, or any CUDA device while checks are deferred (Note [deferred device checks]).
bool checks_on_device(Device device);
/// Registers a device-side check of `op` and returns the three check words its kernels write, setting `id` to
/// its number: the capture's (capture_check) while the calling thread captures on `device`, else, while checks
/// are deferred, the device's, reported by report_deferred_checks (Note [deferred device checks]); nullptr
/// when `device` checks on the host (a CPU device, or checks not deferred).
std::uint64_t* device_check(Device device, const char* op, CheckReport report, std::uint64_t& id);
/// The check words an op on `device` that reads an index it trusts passes its kernel, which then stands down
/// once any check has failed (writes zeros, adds nothing): the capture's or, while checks are deferred, the
/// device's; nullptr where no check can have failed (Note [deferred device checks]).
const std::uint64_t* current_check_words(Device device);
/// Defers the checks of a CUDA graph replay just queued on `stream` of `device` (Note [deferred device
/// checks]): checks[i] is the graph's check number i + 1, whose failure the replay records in
/// graph_words; a kernel queued after the replay copies it into the device's words, reported by a later
/// synchronization with " (in a CUDA graph replay)" appended to the message.
void defer_replay_checks(int device, void* stream, const std::uint64_t* graph_words,
                         const std::vector<DeviceCheck>& checks);
/// Queues on `stream` one thread that, when `from` (a replay's check words) records a failure and `to` (the
/// device's deferred words) none yet, sets to = {first + from[0] - 1, from[1], from[2]} (graph_values.cu).
void queue_check_transfer(const std::uint64_t* from, std::uint64_t* to, std::uint64_t first, void* stream);
/// After the host waited for `stream` (a cudaStream_t) of CUDA device `device`, or for the whole device: throws
/// the first failed deferred check that device recorded (Note [deferred device checks]); nothing when none
/// is pending.
void report_deferred_checks(int device, void* stream, bool device_wide = false);

/// Queues flag check number `id` (capture_check) on `stream` (a cudaStream_t; graph_values.cu): one thread
/// that, when the device bool *bad is true and no check of this replay has failed yet, sets words to {id,
/// *a, *b} (device addresses of two 8-byte values, e.g. float64 bits; nullptr stores 0).
void queue_flag_check(const bool* bad, const std::uint64_t* a, const std::uint64_t* b, std::uint64_t id,
                      std::uint64_t* words, void* stream);

/// Most words one write_words launch writes.
inline constexpr int kMaxWordWrites = 32;
/// Writes values[i] to the device address dst[i] for i < count (<= kMaxWordWrites) with one kernel queued
/// on `stream` (a cudaStream_t; graph_values.cu).
void write_words(std::uint64_t* const* dst, const std::uint64_t* values, int count, void* stream);

/// Reserves n counters of the default generator (core/random.cpp, under its lock) and sets `seed` to its
/// seed: what a replay of a graph that draws random numbers takes.
std::uint64_t reserve_default_counters(std::uint64_t n, std::uint64_t& seed);

/// The caching allocator's side of a capture on `device` (BlockPool::begin_capture, end_capture,
/// release_graph); `stream` is a cudaStream_t.
void allocator_begin_capture(int device, std::uint64_t graph, void* stream);
void allocator_end_capture(int device);
void allocator_release_graph(int device, std::uint64_t graph);

}  // namespace detail
}  // namespace cuda
}  // namespace phasor
