// src/cuda/reduce.hpp - row reductions on the GPU (kernels in reduce.cu). Plain C++, no CUDA types.
#pragma once
#include <cstdint>

#include "phasor/dtype.hpp"

namespace phasor::detail {
enum class ScanKind : std::uint8_t;  // core/scan_rules.hpp
}

namespace phasor::cuda {

/// out[r] = op over rows[r * n_red .. (r + 1) * n_red) for r < n_out, on `stream` (a cudaStream_t), for
/// op "sum"/"prod" (bool accumulates in int64), "all"/"any" (bool result), "amax"/"amin" (real dtypes,
/// NaN wins, n_red >= 1). The rows are device memory of dtype `in`, contiguous, or with 0 < inner < n_red
/// gapped (Note [gapped rows] in reduce.cu): element j of row r at r * inner + (j / inner) * outer_stride +
/// j % inner. False when the op has no kernel for that dtype.
bool reduce_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, void* out,
                 void* stream, std::int64_t inner = 0, std::int64_t outer_stride = 0);

/// Row reductions with a real result (dtype to_real(in)) for floating/complex `in`: "norm" with p = `param`
/// (0: count of nonzeros, 1, 2, inf, -inf: max/min |x| with NaN winning, else (sum |x|^p)^(1/p)), "var" /
/// "std" (two passes: the mean, then sum |x - mean|^2 divided by `param`, then sqrt for std), all
/// accumulated in double; "logsumexp" (result of dtype `in`; shifted by the row's largest real part).
/// Inf norms need n_red >= 1 (checked by the caller). False when the op or dtype has no kernel.
bool stat_rows(const char* op, Dtype in, const void* rows, std::int64_t n_out, std::int64_t n_red, double param,
               void* out, void* stream);

/// idx[r] = index of the first maximum (is_max) or minimum of row r (a NaN counts as the extreme), and
/// values[r] = that element when `values` is not null; real dtypes and bool, n_red >= 1.
bool arg_rows(Dtype in, bool is_max, const void* rows, std::int64_t n_out, std::int64_t n_red, std::int64_t* idx,
              void* values, void* stream);

/// y = the running values of `kind` (core/scan_rules.hpp) of x along the middle dim of contiguous (outer, n,
/// inner) tensors of dtype `dt` (int64 sums and products wrap, float32 accumulates in double, complex64 in
/// complex128), from the end when `reverse`; false for bool (the caller converts it to int64 first) and
/// for a dtype the kind does not take.
bool scan(::phasor::detail::ScanKind kind, Dtype dt, const void* x, void* y, std::int64_t outer, std::int64_t n,
          std::int64_t inner, bool reverse, void* stream);

}  // namespace phasor::cuda
