// src/cuda/sparse_ops.cpp - Tensor-level glue of phasor::sparse's CUDA kernel (src/cuda/sparse_ops.hpp): output
// allocation, the device guard and the current stream.
#include "cuda/sparse_ops.hpp"

#include <string>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "phasor/error.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/launch.hpp"
#endif

namespace phasor::cuda::detail {

#if PHASOR_WITH_CUDA

Tensor csr_mm(const Tensor& crow, const Tensor& col, const Tensor& values, const Tensor& b) {
  const char* op = "sparse_csr_mm";
  check_device(values.device(), op);
  Tensor out = ::phasor::detail::make_tensor({crow.numel() - 1, b.size(1)}, values.dtype(), values.device());
  Launch l(out);
  if (!::phasor::cuda::csr_mm(values.dtype(), crow.data<std::int64_t>(), col.data<std::int64_t>(), values.data_ptr(),
                              b.data_ptr(), out.data_ptr(), out.size(0), out.size(1), l.stream))
    throw Error(op, std::string("no CUDA sparse product for ") + dtype_name(values.dtype()) + " values");
  return out;
}

#else  // CPU-only build

Tensor csr_mm(const Tensor&, const Tensor&, const Tensor& values, const Tensor&) {
  no_cuda_backend("sparse_csr_mm", values.device());
}

#endif

}  // namespace phasor::cuda::detail
