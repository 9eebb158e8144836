// src/linalg/lapack.hpp - what the LAPACK-backed linalg files (solve.cpp, decompositions.cpp) share: the dtype
// visit, batches of matrices, the name of a batch element in errors and the check of info flags.
#pragma once
#include <complex>
#include <initializer_list>
#include <string>

#include "phasor/tensor.hpp"

namespace phasor::linalg::internal {

/// f(T{}) for the LAPACK type T of a floating or complex dtype.
template <class F>
void visit_lapack(Dtype t, F&& f) {
  switch (t) {
    case Dtype::Float32: return f(float{});
    case Dtype::Float64: return f(double{});
    case Dtype::Complex64: return f(std::complex<float>{});
    case Dtype::Complex128: return f(std::complex<double>{});
    default: throw Error("linalg", std::string("expected a floating or complex tensor, got ") + dtype_name(t));
  }
}

/// t's values in a contiguous tensor of their own (LAPACK overwrites it): t.contiguous() unless that is t itself.
Tensor own_contiguous(const Tensor& t);
/// The batch dims of a (..., n, m) tensor.
Shape batch_of(const Tensor& t);
/// The conjugate transpose of the last two dims.
Tensor adjoint(const Tensor& t);
/// "the matrix at batch index (i, j)" for element k of a batch of shape `batch`, or "the matrix" without one.
std::string which_matrix(const Shape& batch, std::int64_t k);
/// Refuses a failed factorization of the matrices of batch shape `batch`: some info (int64, one per matrix) > 0,
/// reported as message(which matrix, its info) through check_device_value (eagerly on a GPU the host waits for the
/// flag; deferred or captured, a later synchronization reports it).
void check_info(const char* op, const Tensor& info, const Shape& batch,
                std::string (*message)(const std::string&, std::int64_t));
/// Throws unless A is a defined (..., m, n) floating or complex tensor (square when `square`) whose dims fit an int.
void check_matrix(const Tensor& a, const char* op, bool square);
/// `batch` followed by `tail`.
inline Shape with_tail(Shape batch, std::initializer_list<std::int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}
/// A's matrices, on the host unless A is on a GPU (a virtual CPU device's go to the host and back), as a batch of
/// column-major copies of their own: (count, n, m) contiguous, each A^T row-major.
Tensor column_major_copy(const Tensor& a);
/// LU factors with partial pivoting (LAPACK's ?getrf) of `batch` m x n column-major matrices in place at `a` (host
/// memory, m * n elements apart): pivots min(m, n) per matrix (1-based), info one per matrix (j > 0: U(j, j) is 0).
void host_getrf(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t batch, void* a, int* pivots, int* info);
/// Solves op(M_i) X_i = B_i in place (LAPACK's ?getrs; trans 'N', 'T' or 'C') from host_getrf's factors of `batch` n x n
/// column-major M_i (n * n apart) and their pivots (n apart), each B_i n x k column-major (n * k apart).
void host_getrs(Dtype dtype, char trans, std::int64_t n, std::int64_t k, std::int64_t batch, const void* lu,
                const int* pivots, void* b);

}  // namespace phasor::linalg::internal
