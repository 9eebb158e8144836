// src/cuda/int_gemm.hpp - int64 and bool matrix products on the GPU (kernel in int_gemm.cu), which cuBLAS
// lacks; the CUDA side of matmul's loop kernel for those dtypes (linalg/matmul.cpp). Plain C++, no CUDA types.
#pragma once
#include <cstdint>

#include "phasor/dtype.hpp"

namespace phasor::cuda {

/// `batch` products C_b (rows x cols, contiguous, one after another) = A_b (rows x inner) B_b (inner x cols).
/// A_b's element (i, p) is a[b * a_batch + i * a_row + p * a_col], in elements (likewise B_b's (p, j)); any
/// strides, 0 included.
struct IntGemm {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  std::int64_t rows = 0, cols = 0, inner = 0, batch = 0;
  std::int64_t a_batch = 0, a_row = 0, a_col = 0;
  std::int64_t b_batch = 0, b_row = 0, b_col = 0;
};

/// Runs the product for Int64 (sums wrap around modulo 2^64, as on the CPU) or Bool (OR of ANDs) on
/// `stream` (a cudaStream_t); false for other dtypes.
bool int_gemm(Dtype dtype, const IntGemm& g, void* stream);

}  // namespace phasor::cuda
