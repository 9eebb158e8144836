// src/cuda/elementwise.hpp - the CUDA side of the one elementwise engine (Note [cuda elementwise]).
// Plain C++: included by host code that prepares the operands; the kernels live in elementwise_ops.cuh.
#pragma once
#include <cstdint>

#include "core/ramp.hpp"
#include "cuda/fast_div.hpp"
#include "phasor/dtype.hpp"

namespace phasor::cuda {

// Note [cuda elementwise]
// The CPU launchers (unary_kernel, binary ops, copies, fills) keep deciding every semantic question -
// output dtype, type promotion, broadcasting, error messages - and describe the work as Operands: the
// output and inputs as byte pointers with coalesced sizes and byte strides (0 = broadcast), exactly
// the layout the CPU engine's StridedLoop iterates. The GPU only supplies the arithmetic, looked up by
// the CPU op's own name ("exp", "add", ...), computed in one compute dtype: each input element is
// loaded and converted to it, the result converted to the output dtype on store. A contiguous output
// whose inputs are each contiguous or a single broadcast element (a 0-d operand such as a wrapped
// scalar), all of the compute dtype, takes a flat kernel; anything else (strides, broadcasts, mixed
// dtypes) the general one, which derives each operand's offset from the linear index. An input may
// also be a value (a host scalar: Note [host scalars] in core/tensor_impl.hpp): no pointer, its bytes
// in the Operands, converted to the compute dtype on the host and passed to either kernel as an argument,
// so a number next to a tensor (x * 0.5) costs one launch and no device memory. In-place ops never see an
// input overlapping the output in part (check_inplace_overlap refuses them first).

/// Most operands of one kernel (output first).
inline constexpr int kMaxOperands = 4;
/// Most dims after coalescing.
inline constexpr int kMaxDims = 12;

/// Operands of one elementwise kernel: output first, then the inputs.
struct Operands {
  int count = 0;                                      ///< operands, output included
  int ndim = 0;                                       ///< coalesced dims, innermost last
  std::int64_t numel = 0;                             ///< elements of the output
  char* data[kMaxOperands] = {};                      ///< first element of each operand (device memory); null: by value
  alignas(16) unsigned char value[kMaxOperands][16] = {};  ///< an input given by value: its bytes, of its dtype
  Dtype dtype[kMaxOperands] = {};                     ///< element type of each operand
  std::int64_t sizes[kMaxDims] = {};                  ///< the common (broadcast) shape
  std::int64_t strides[kMaxOperands][kMaxDims] = {};  ///< byte strides per operand and dim (0: broadcast)
  bool index32 = false;                               ///< numel < 2^31: indices divide by div (Note [fast index division])
  FastDiv div[kMaxDims];                              ///< division by sizes[d] (d >= 1) when index32
};

/// out = op(in) elementwise on `stream` (a cudaStream_t), computed in `compute` dtype; `params` are the
/// op's parameters (gelu: [tanh form 0/1]; softplus: [beta, threshold]; "copy" converts dtypes).
/// Returns false when there is no CUDA kernel for this op and compute dtype (the caller raises the error).
bool unary(const char* op, Dtype compute, const Operands& ops, const double* params, void* stream);
/// out = op(a, b) elementwise; `alpha` scales b for "add"/"sub".
bool binary(const char* op, Dtype compute, const Operands& ops, double alpha, void* stream);
/// out = cond ? a : b (operands out, cond (bool), a, b), computed in `compute` dtype.
bool where(Dtype compute, const Operands& ops, void* stream);
/// Ternary arithmetic op `op` (operands out, x, a, b): "addcmul" x + v (a b), "addcdiv" x + v (a / b) (Note
/// [fused multiply-add] in core/binary.cpp), v = value_re + i value_im (value_int for int64); "lerp" (x, e, w)
/// torch.lerp's two forms (Note [lerp]), no value.
bool ternary(const char* op, Dtype compute, const Operands& ops, double value_re, double value_im,
             std::int64_t value_int, void* stream);
/// Sets every element of ops.data[0] (ops.count == 1) to re + i im converted to its dtype (int64: `integer`).
void fill(const Operands& ops, double re, double im, std::int64_t integer, void* stream);

/// Writes `r` (core/ramp.hpp) into the contiguous device memory `out` of dtype `dtype` (not bool) on `stream`.
void ramp(Dtype dtype, void* out, const ::phasor::detail::Ramp& r, void* stream);

}  // namespace phasor::cuda
