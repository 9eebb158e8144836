// src/cuda/elementwise_binary.cu - binary() for CUDA tensors (its kernels for bool, int64 and real compute
// dtypes here, complex ones in elementwise_complex.cu: Note [elementwise translation units]), where() and
// ternary() (addcmul, addcdiv, lerp) on all dtypes.
#include "cuda/elementwise_ops.cuh"

namespace phasor::cuda {

bool binary(const char* op, Dtype compute, const Operands& o, double alpha, void* stream) {
  if (is_complex(compute)) return detail::binary_complex(op, compute, o, alpha, stream);
  return binary_table<kBool | kInt | kReal>(op, compute, o, alpha, stream);
}

bool ternary(const char* op, Dtype compute, const Operands& o, double re, double im, std::int64_t integer,
             void* stream) {
  if (std::strcmp(op, "addcmul") == 0)
    return with_type<kInt | kFloat>(
        compute, [&](auto tag) { launch<3, decltype(tag)>(o, Addc<Mul>{re, im, integer}, op, stream); });
  if (std::strcmp(op, "addcdiv") == 0)
    return with_type<kFloat>(compute,
                             [&](auto tag) { launch<3, decltype(tag)>(o, Addc<Div>{re, im, integer}, op, stream); });
  if (std::strcmp(op, "lerp") == 0)
    return with_type<kFloat>(compute, [&](auto tag) { launch<3, decltype(tag)>(o, Lerp{}, op, stream); });
  return false;
}

bool where(Dtype compute, const Operands& o, void* stream) {
  // operands: out, cond, a, b; Select converts cond to the compute type and back to bool
  return with_type<kAll>(compute, [&](auto tag) { launch<3, decltype(tag)>(o, Select{}, "where", stream); });
}

}  // namespace phasor::cuda
