// src/cuda/sparse_ops.hpp - phasor::sparse's CUDA work on tensors (the CSR product's kernel), called by
// src/sparse/sparse.cpp once it has decided shapes, dtypes and errors. CUDA-free: every build has these; a
// CPU-only build's throw.
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::cuda {
/// out (m, k) = the CSR matrix (crow, col, values) times b (n, k), contiguous device arrays of the dtype's type, on
/// `stream` (src/cuda/sparse.cu); false for a dtype other than float32, float64, complex64 and complex128.
bool csr_mm(Dtype dtype, const std::int64_t* crow, const std::int64_t* col, const void* values, const void* b, void* out,
            std::int64_t m, std::int64_t k, void* stream);
}  // namespace phasor::cuda

namespace phasor::cuda::detail {
/// The CSR matrix (crow, col, values) times b (n, k), all contiguous on one CUDA device, values and b of one
/// floating or complex dtype: a new (m, k) tensor (m = crow's size - 1).
Tensor csr_mm(const Tensor& crow, const Tensor& col, const Tensor& values, const Tensor& b);
}  // namespace phasor::cuda::detail
