// src/cuda/reduce.hpp - row reductions on the GPU (kernels in reduce.cu). Plain C++, no CUDA types.
#pragma once
#include <cstdint>

#include "phasor/dtype.hpp"

namespace phasor::cuda {

/// out[r] = op over rows[r * n_red .. (r + 1) * n_red) for r < n_out, on `stream` (a cudaStream_t), for
/// op "sum"/"prod" (bool accumulates in int64), "all"/"any" (bool result), "amax"/"amin" (real dtypes,
/// NaN wins, n_red >= 1). The rows are contiguous device memory of dtype `in`; false when the op has no
/// kernel for that dtype.
bool reduce_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, void* out,
                 void* stream);

}  // namespace phasor::cuda
