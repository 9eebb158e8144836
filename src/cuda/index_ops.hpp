// src/cuda/index_ops.hpp - CUDA-free glue for the core's along-dim ops (core/index_ops.cpp) and sort (core/sort.cpp), device checks
// (core/device_check.cpp) and random creation (core/random.cpp): every build has these; a
// CPU-only build's throw.
#pragma once
#include <cstdint>
#include <string>

#include "core/scatter_rules.hpp"
#include "cuda/graph.hpp"
#include "cuda/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::cuda::detail {

/// out[..., k, ...] = x[..., index[k], ...] along dim d; index: a contiguous 1-D int64 tensor on out's device,
/// values in [-wrap, wrap) (negative ones count from the end of x's dim of size wrap).
/// `checks`: the words check_index_on_device returned for this index (nullptr: checked on the host).
void index_select(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index, std::int64_t wrap,
                  const std::uint64_t* checks = nullptr);
/// out[..., index[k], ...] (kind)= src[..., k, ...] along dim d (out and src of one dtype; index and checks as
/// index_select's, wrap = out's size along d; scatter_combine's rules in core/scatter_rules.hpp).
void index_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index, std::int64_t wrap,
               const std::uint64_t* checks = nullptr, ::phasor::detail::ScatterKind kind = ::phasor::detail::ScatterKind::Sum);
/// out[p] = x[p with p[d] = index[p]] over index's shape (index in range, on x's device; checks as
/// index_select's).
void gather(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index,
            const std::uint64_t* checks = nullptr);
/// out[p with p[d] = index[p]] (kind)= src[p] over index's shape (out and src of one dtype; checks as
/// index_select's; kind as index_add's).
void scatter_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index,
                 const std::uint64_t* checks = nullptr, ::phasor::detail::ScatterKind kind = ::phasor::detail::ScatterKind::Sum);
/// out (int64, lines x n) = the positions that sort each contiguous line of n elements of the CUDA tensor rows
/// (bool, int64 or real), as Note [sort order] in core/sort.cpp.
void sort_lines(const Tensor& rows, const Tensor& out, std::int64_t n, bool descending);
/// out (int64, like values) = where each element of the contiguous CUDA tensor values goes in its line (element
/// t: line t / k) of the contiguous sorted lines of m elements seq (same dtype), as searchsorted.
void search_sorted(const Tensor& seq, const Tensor& values, const Tensor& out, std::int64_t m, std::int64_t k,
                   bool right);
/// When index's device checks on the device (cuda::detail::checks_on_device: a CUDA graph capture, or deferred
/// checks): queues a device-side check that every element of the int64 tensor `index` lies in [lo, hi), whose
/// failure is reported as phasor::Error(op, "<prefix><value><suffix> (...)") naming the first offending one
/// (Note [device checks in CUDA graphs] in cuda/graph.cpp, Note [deferred device checks]), and returns the
/// check words the op's kernel takes. nullptr otherwise (or `index` is empty): the caller checks on the host.
const std::uint64_t* check_index_on_device(const Tensor& index, std::int64_t lo, std::int64_t hi, const char* op,
                                           std::string prefix, std::string suffix);
/// When bad's device checks on the device (as check_index_on_device): queues a device-side check that fails
/// when the contiguous 0-d bool tensor `bad` holds true, reported as phasor::Error(op, "<report(a's bits, b's
/// bits)> (...)") with a and b contiguous 0-d 8-byte tensors on that device (undefined: 0), and returns true;
/// false otherwise (or bad is not on a GPU).
bool check_flag_on_device(const Tensor& bad, const Tensor& a, const Tensor& b, const char* op, CheckReport report);
/// Fills the contiguous CUDA tensor t with n values of `kind` from the counters c (Note [counter-based
/// random numbers] in core/philox.hpp).
void random_fill(RandomKind kind, const Tensor& t, std::int64_t n, const Counters& c, double scale = 1,
                 std::int64_t low = 0, std::uint64_t range = 1);

}  // namespace phasor::cuda::detail
