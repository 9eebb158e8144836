// src/core/device_check.hpp - the one way an op validates a value the device computes (a non-finite norm,
// a window that sums to zero): eagerly the host reads a flag; inside a CUDA graph capture the device tests
// it at every replay (Note [device checks in CUDA graphs] in cuda/graph.cpp), and with deferred checks the
// device tests it and a later synchronization reports it (Note [deferred device checks]).
#pragma once
#include <functional>
#include <string>
#include <utility>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// The two 0-d real tensors a failed check's message names (an undefined one reads 0).
using CheckValues = std::function<std::pair<Tensor, Tensor>()>;
/// A failed check's message, from those two values.
using CheckMessage = std::function<std::string(double, double)>;

/// Throws phasor::Error(op, message(a, b)) when the 0-d tensor `bad` holds true (nonzero), with a and b the
/// values of the tensors values() returns. Eagerly the host reads `bad` (one wait on a GPU) and calls
/// values() only on a failure; returns false. Where bad's device checks on the device (a CUDA graph capture
/// on it, or deferred checks: cuda::detail::checks_on_device) it throws nothing: it queues the test, whose
/// failure replay() or a later synchronization reports with the same message plus a suffix, and returns
/// true. The caller must then keep a failure harmless to the work after it (inputs unchanged, nothing read
/// out of range).
bool check_device_value(const char* op, const Tensor& bad, const CheckValues& values, const CheckMessage& message);

/// Throws phasor::Error(op, "<noun> <value> out of range <what>") naming the first element of the int64 tensor idx
/// outside [lo, hi), as check_device_value: eagerly one host wait on a GPU, a check on the device in a CUDA graph
/// capture or with deferred checks; true then (the caller clamps idx so a failed op reads in range).
bool check_index_values(const Tensor& idx, std::int64_t lo, std::int64_t hi, const std::string& what, const char* op,
                        const char* noun = "index");

/// The first element of t in logical order where the bool tensor `bad` (t's shape) holds, 0-d on t's device
/// (the offending value a failed check names; argmax finds the first true).
Tensor first_where(const Tensor& t, const Tensor& bad);

}  // namespace phasor::detail
