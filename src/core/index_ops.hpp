// src/core/index_ops.hpp - library-internal entry points of the along-dim ops (core/index_ops.cpp).
#pragma once
#include <cstdint>

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

}  // namespace phasor::detail
