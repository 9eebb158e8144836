// src/signal/common.hpp - small helpers shared by the phasor::signal sources: argument checks that
// throw phasor::Error naming the op, dtype choices and a few index computations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"
#include "phasor/signal.hpp"

namespace phasor::signal::detail {

inline std::string str(std::int64_t v) { return std::to_string(v); }
std::string num(double v);
inline std::string shape_of(const Tensor& t) { return ::phasor::detail::shape_str(t.shape()); }

/// Throws unless `x` is a defined tensor (any device) with at least `min_dim` dims.
void check_input(const Tensor& x, const char* op, const char* what = "input", std::int64_t min_dim = 1);
/// Real floating dtype an op computes in for `x` (ints and bools -> the default dtype).
Dtype real_dtype_of(const Tensor& x);
/// x as a floating (or complex) tensor: ints and bools cast to the default dtype.
Tensor as_floating(const Tensor& x);
/// 2, 3, 5-smooth length >= n (fast FFT size).
std::int64_t next_fast_len(std::int64_t n);
/// The samples of a window spec on `device`, checked to hold `n` values (and to live on `device`) when given
/// as a tensor.
Tensor window_values(const WindowSpec& w, std::int64_t n, bool periodic, Dtype dtype, Device device, const char* op);
/// Throws unless `t` (when defined) lives on `device`; `what` names it and `other` the tensor it must match.
void check_device(const Tensor& t, Device device, const char* op, const char* what, const char* other = "the input");
/// Throws naming `op` unless `device` exists (CPU, or a CUDA device of this build and machine).
void check_device_exists(Device device, const char* op);
/// Convolution mode parsed from "full" / "same" / "valid".
enum class ConvMode { full, same, valid };
ConvMode parse_mode(const std::string& mode, const char* op);
/// Index tensor t * hop + k for n_frames frames of frame_length samples, on `device`: a device constant
/// (Note [device constants]), in range by construction, for index_select_trusted / index_add_trusted, so
/// framing on a GPU neither uploads nor checks an index.
Tensor frame_index(std::int64_t n_frames, std::int64_t frame_length, std::int64_t hop, Device device);

}  // namespace phasor::signal::detail
