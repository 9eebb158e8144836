// src/linalg/cusolver_solve.hpp - the CUDA counterparts of the LAPACK calls of src/linalg/solve.cpp (Note [LU
// on the device] there): LU, solves from LU factors, triangular solves and Cholesky of batches of column-major
// matrices on a GPU, through cuBLAS and cuSOLVER, on the device's current stream. CUDA-free; a CPU-only
// build's throw.
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// Room for n int32 on `device`, zeros (int64 storage: phasor has no int32 dtype), for the libraries' pivots and
/// info; the calls leave it so for an empty problem.
Tensor int32_buffer(std::int64_t n, Device device);
/// The int32 array in an int32_buffer.
int* int32_data(const Tensor& buffer);
/// The first shape_numel(shape) int32 of an int32_buffer as an int64 tensor of `shape` on its device.
Tensor widen_int32(const Tensor& buffer, const Shape& shape);
/// An int64 tensor's values (each within int's range) as an int32_buffer on its device, in logical order.
Tensor narrow_int32(const Tensor& values);
/// The permutations (..., m) int64 on the pivots' device that LAPACK's pivots (..., k) (int64, each in [1, m],
/// unchecked) make: row i swapped with row pivots[i] - 1 in order, so (P^T A)[i] = A[perm[i]]. No host wait.
Tensor pivots_to_perm(const Tensor& pivots, std::int64_t m);

/// LU factors with partial pivoting of `batch` m x n column-major matrices in place at `a` (m * n elements apart)
/// on CUDA device `device`: pivots (min(m, n) per matrix, 1-based, LAPACK's) and info (one per matrix: j > 0 when
/// U(j, j) is zero) are int32 device arrays. cuBLAS's getrfBatched for several small square matrices, cuSOLVER's
/// getrf one matrix at a time otherwise. `op` names the caller in errors.
void cuda_getrf(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t n, std::int64_t batch, void* a,
                int* pivots, int* info);
/// Solves op(A_i) X_i = B_i in place from cuda_getrf's factors (op: A^T when `trans`, else A), each B_i n x k
/// column-major (n * k elements apart), with cuBLAS's getrsBatched.
void cuda_getrs(const char* op, Dtype dtype, int device, bool trans, std::int64_t n, std::int64_t k, std::int64_t batch,
                const void* lu, const int* pivots, void* b);
/// Solves X_i A_i = B_i in place for triangular A_i (n x n column-major, its `lower` or upper triangle read, a
/// unit diagonal assumed when `unit`) and B_i m x n column-major, with cuBLAS's trsmBatched.
void cuda_trsm_right(const char* op, Dtype dtype, int device, bool lower, bool unit, std::int64_t m, std::int64_t n,
                     std::int64_t batch, const void* a, void* b);
/// Cholesky factors of `batch` Hermitian positive-definite n x n column-major matrices in place at `a`: the
/// `upper` (U^H U) or lower (L L^H) triangle read and written; info (int32 device array, one per matrix: j > 0
/// when the leading minor of order j is not positive). cuSOLVER's potrfBatched for several small matrices,
/// potrf one matrix at a time otherwise.
void cuda_potrf(const char* op, Dtype dtype, int device, bool upper, std::int64_t n, std::int64_t batch, void* a,
                int* info);

}  // namespace phasor::detail

namespace phasor::cuda {
/// Widens n int32 at src into int64 at dst on `stream` (a cudaStream_t; src/cuda/int32.cu).
void widen_int32(const int* src, std::int64_t* dst, std::int64_t n, void* stream);
/// Narrows n int64 at src into int32 at dst on `stream`.
void narrow_int64(const std::int64_t* src, int* dst, std::int64_t n, void* stream);
/// detail::pivots_to_perm of `count` matrices' contiguous pivots (count, k) into perm (count, m) on `stream`.
void pivots_to_perm(const std::int64_t* pivots, std::int64_t* perm, std::int64_t count, std::int64_t k, std::int64_t m,
                    void* stream);
}  // namespace phasor::cuda
