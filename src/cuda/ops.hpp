// src/cuda/ops.hpp - elementwise work on CUDA tensors for the core's kernel launchers (Note [cuda
// elementwise] in src/cuda/elementwise.hpp). CUDA-free: every build has these; a CPU-only build's throw.
#pragma once
#include <utility>

#include "phasor/scalar.hpp"
#include "phasor/tensor.hpp"

namespace phasor::detail {
struct Ramp;                           // core/ramp.hpp
enum class ScanKind : std::uint8_t;  // core/scan_rules.hpp
}

namespace phasor::cuda::detail {

/// out = op(in) elementwise on the GPU (in broadcast to out's shape), computed in `compute`; `params`
/// as cuda::unary's. Throws "[op] no CUDA kernel for <dtype> input" when there is none.
void unary(const char* op, const Tensor& out, const Tensor& in, Dtype compute, const double* params = nullptr);
/// out = op(a, b) elementwise on the GPU (a, b broadcast to out's shape); alpha scales b in add/sub.
void binary(const char* op, const Tensor& out, const Tensor& a, const Tensor& b, Dtype compute, double alpha = 1);
/// out = cond ? a : b on the GPU.
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
/// out = op(x, a, b; value) on the GPU computed in `compute`: "addcmul" x + value a b, "addcdiv" x + value a / b
/// (Note [fused multiply-add] in core/binary.cpp; "addcmul_" and "addcdiv_" too, x being out); "lerp" and
/// "lerp_" (x, end, weight; Note [lerp]) ignore the value.
void ternary(const char* op, const Tensor& out, const Tensor& x, const Tensor& a, const Tensor& b, Dtype compute,
             const Scalar& value);
/// Sets every element of out (a CUDA tensor) to v.
void fill(const Tensor& out, const Scalar& v);
/// Writes the sequence r (core/ramp.hpp) into out, a contiguous 1-D CUDA tensor of r.n elements (not
/// bool); `op` names the caller in errors.
void ramp(const char* op, const Tensor& out, const ::phasor::detail::Ramp& r);
/// op ("sum", "prod", "amax", "amin", "all", "any") of a CUDA tensor over `dims` (empty: all), as a new
/// tensor of `out_dtype`. The caller has checked that amax/amin reduce no empty dim (core/reduce.hpp's
/// check_nonempty, which names the user's op).
Tensor reduce(const char* op, const Tensor& x, const Shape& dims, bool keepdim, Dtype out_dtype);
/// op "norm" (p = param), "var" / "std" (correction = param) or "logsumexp" of a floating or complex CUDA
/// tensor over `dims` (empty: all), as a new tensor (real dtype; logsumexp: x's). The caller has checked
/// dtype and p, and that an inf norm reduces no empty dim.
Tensor reduce_stat(const char* op, const Tensor& x, const Shape& dims, bool keepdim, double param);
/// (values, indices) of the first maximum (is_max) or minimum along dim d (wrapped) of a real or bool CUDA
/// tensor, NaN counting as the extreme; values only when want_values. The caller has checked that dim d
/// is not empty.
std::pair<Tensor, Tensor> arg_reduce(const char* op, const Tensor& x, std::int64_t d, bool keepdim, bool is_max,
                                     bool want_values);
/// The running values of `kind` (core/scan_rules.hpp: cumsum, cumprod, cummax, cummin, logcumsumexp) of the
/// contiguous CUDA tensor src, viewed as (outer, n, inner), along n into out (same dtype and layout; int64,
/// floating or complex where the kind takes it), from the end when `reverse`.
void scan(::phasor::detail::ScanKind kind, const Tensor& src, const Tensor& out, std::int64_t outer, std::int64_t n,
          std::int64_t inner, bool reverse);

}  // namespace phasor::cuda::detail
