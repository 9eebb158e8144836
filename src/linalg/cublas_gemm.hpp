// src/linalg/cublas_gemm.hpp - the CUDA counterpart of detail::gemm (src/linalg/blas.hpp): the typed
// entries that matrix products on CUDA tensors go through (cuBLAS, and for int64 / bool a kernel of
// phasor's). CUDA-free; a CPU-only build's throw.
#pragma once
#include <cstdint>

#include "cuda/int_gemm.hpp"
#include "phasor/dtype.hpp"

namespace phasor::detail {

/// Row-major C (m x n) = op(A) op(B) on CUDA device `device` (op transposing when ta / tb, without
/// conjugation), for float32, float64, complex64 and complex128, on the device's current stream.
/// float32 products use full float32 arithmetic unless cuda::allow_tf32(). `op` names the caller in errors.
void cuda_gemm(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n,
               std::int64_t k, const void* A, std::int64_t lda, const void* B, std::int64_t ldb, void* C,
               std::int64_t ldc);

/// `batch` products C_i = op(A_i) op(B_i) as cuda_gemm's, A_i = A + i*stride_a elements (likewise B,
/// C; a stride of 0 reuses one operand for every product), in one strided-batched cuBLAS call.
void cuda_gemm_batched(const char* op, Dtype dtype, int device, bool ta, bool tb, std::int64_t m, std::int64_t n,
                       std::int64_t k, const void* A, std::int64_t lda, std::int64_t stride_a, const void* B,
                       std::int64_t ldb, std::int64_t stride_b, void* C, std::int64_t ldc, std::int64_t stride_c,
                       std::int64_t batch);

/// The int64 / bool products of `g` (which cuBLAS lacks) on CUDA device `device`'s current stream, with
/// src/cuda/int_gemm.cu's kernel; other dtypes throw.
void cuda_int_gemm(const char* op, Dtype dtype, int device, const ::phasor::cuda::IntGemm& g);

}  // namespace phasor::detail
