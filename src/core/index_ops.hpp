// src/core/index_ops.hpp - library-internal entry points of the along-dim ops (core/index_ops.cpp).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// index_select for an index the caller built in range (its values lie in [-size, size) of x's dim): on a
/// GPU, an index on x's device goes to the kernel unchecked, so no range check waits for the device. The
/// gradient is index_add_trusted.
Tensor index_select_trusted(const Tensor& x, std::int64_t dim, const Tensor& index);

/// index_add for an index the caller built in range (as index_select_trusted); gradient index_select_trusted.
Tensor index_add_trusted(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);

/// index_copy for an index the caller built in range (as index_select_trusted): where indices repeat, the
/// last source slice wins.
Tensor index_copy_trusted(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);

/// gather for an index the caller built in range (values in [0, size) of x's dim): not range-checked on any
/// device (on a GPU no check waits for the device), in the gradient (a scatter_add) neither.
Tensor gather_trusted(const Tensor& x, std::int64_t dim, const Tensor& index);

/// unique's sorted values (and with `with_counts` each one's count) of a contiguous 1-D real CPU tensor of at least
/// 512 elements, by a radix sort of its keys alone (core/sort.cpp, Note [radix sort]): each NaN its own value,
/// last; +0 and -0 one value, the first one in x. Returns {values, counts} (counts undefined without with_counts).
std::pair<Tensor, Tensor> unique_values_cpu(const Tensor& flat, bool with_counts);

/// What scan_range finds among int64 values.
struct RangeScan {
  std::int64_t first_bad = -1;  ///< the position of the first value outside [lo, hi); -1: none
  bool negative = false;        ///< some value is negative
};

/// Scans p[0, n) for values outside [lo, hi) and negative ones: one branch-free unsigned compare per value, so
/// the pass vectorizes (and runs in parallel when long); a second pass locates a bad value only when there is one.
RangeScan scan_range(const std::int64_t* p, std::int64_t n, std::int64_t lo, std::int64_t hi);

/// Tensor::index's integers, slices, None and Ellipsis applied to x as a view, and its tensors as index_put's
/// list over that view (one entry per leading dim: undefined for a whole dim, a bool mask for as many dims);
/// throws naming op for too many indices or a second ellipsis (core/views.cpp).
std::pair<Tensor, std::vector<Tensor>> basic_index(const Tensor& x, const std::vector<TensorIndex>& indices,
                                                   const char* op);

/// x[indices] for index_put's list (Note [index_put] in core/select_ops.cpp): the indexed dims' broadcast
/// index dims in place when adjacent, first otherwise; x itself when no entry is defined.
Tensor advanced_index(const Tensor& x, const std::vector<Tensor>& indices, const char* op);

}  // namespace phasor::detail
