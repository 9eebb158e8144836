// src/cuda/elementwise_complex.cu - the unary and binary elementwise kernels for complex compute dtypes
// (Note [elementwise translation units]); unary() and binary() come here for them.
#include "cuda/elementwise_ops.cuh"

namespace phasor::cuda::detail {

bool unary_complex(const char* op, Dtype compute, const Operands& o, double p0, double p1, void* stream) {
  return unary_table<kCplx>(op, compute, o, p0, p1, stream);
}

bool binary_complex(const char* op, Dtype compute, const Operands& o, double alpha, void* stream) {
  return binary_table<kCplx>(op, compute, o, alpha, stream);
}

}  // namespace phasor::cuda::detail
