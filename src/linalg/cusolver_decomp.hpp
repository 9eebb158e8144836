// src/linalg/cusolver_decomp.hpp - the CUDA counterparts of the LAPACK calls of src/linalg/decompositions.cpp
// (Note [decompositions on every device] there): QR, Hermitian eigendecomposition and SVD of batches of
// column-major matrices on a GPU, through cuSOLVER, on the device's current stream, with no host copy and no host
// wait (so they can be captured into a CUDA graph). The host's LAPACK calls in decompositions.cpp take the same
// arguments. CUDA-free; a CPU-only build's throw.
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor::detail {

/// QR factors of `batch` m x n column-major matrices in place at `a` (m * n elements apart), as LAPACK's ?geqrf: R
/// on and above the diagonal, the Householder vectors below it, and their k = min(m, n) scalars at `tau` (k
/// elements apart, a's dtype).
void cuda_geqrf(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t n, std::int64_t batch, void* a,
                void* tau);
/// The first `cols` columns (k <= cols <= m) of the unitary Q from cuda_geqrf's k reflectors, in place at `q` (m x cols
/// column-major per matrix, m * cols elements apart, the reflectors in its first k columns on entry) and `tau` (k
/// apart), as ?orgqr / ?ungqr.
void cuda_orgqr(const char* op, Dtype dtype, int device, std::int64_t m, std::int64_t cols, std::int64_t k,
                std::int64_t batch, void* q, const void* tau);
/// Eigenvalues (ascending, in the real dtype of `dtype`, n apart at `w`) of `batch` Hermitian n x n column-major
/// matrices at `a` (n * n apart, only the `lower` or upper triangle read), and with `vectors` their orthonormal
/// eigenvectors as the columns of a (a is overwritten either way), as ?syevd / ?heevd; `info` (int32 device array,
/// one per matrix) > 0 where the algorithm did not converge.
void cuda_syevd(const char* op, Dtype dtype, int device, bool vectors, bool lower, std::int64_t n, std::int64_t batch,
                void* a, void* w, int* info);
/// Singular values (descending, real dtype, k = min(m, n) apart at `s`) of `batch` m x n column-major matrices at `a`
/// (m * n apart, overwritten), and with `vectors` U (m x ucols column-major, m * ucols apart at `u`) and V itself,
/// not V^H (n x vcols column-major, n * vcols apart at `v`), where ucols = m and vcols = n when `full`, else both k;
/// `info` (int32 device array, one per matrix) > 0 where the algorithm did not converge. u and v are unused (may be
/// null) without `vectors`.
void cuda_gesvd(const char* op, Dtype dtype, int device, bool vectors, bool full, std::int64_t m, std::int64_t n,
                std::int64_t batch, void* a, void* s, void* u, void* v, int* info);

}  // namespace phasor::detail
