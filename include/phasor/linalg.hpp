// phasor/linalg.hpp - matrix products, einsum, linear systems, determinants, Cholesky (OpenBLAS and its LAPACK;
// cuBLAS and cuSOLVER on a GPU).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

/// Matrix product with numpy semantics: 1-D operands are promoted, batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
/// (n, k) x (k, m) matrix product.
Tensor mm(const Tensor& a, const Tensor& b);
/// (b, n, k) x (b, k, m) batched product.
Tensor bmm(const Tensor& a, const Tensor& b);
/// Inner product of two 1-D tensors (no conjugation).
Tensor dot(const Tensor& a, const Tensor& b);
/// Inner product conj(a) . b of two 1-D tensors.
Tensor vdot(const Tensor& a, const Tensor& b);
/// Outer product of two 1-D tensors.
Tensor outer(const Tensor& a, const Tensor& b);
/// Cross product of 3-vectors along dim (size 3; a and b broadcast), as torch.linalg.cross.
Tensor cross(const Tensor& a, const Tensor& b, std::int64_t dim = -1);
/// Kronecker product: block (i, j, ...) of the result is a[i, j, ...] * b (shapes padded with leading 1s).
Tensor kron(const Tensor& a, const Tensor& b);
/// p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R), batch dims broadcast
/// (torch.cdist; p = 0 counts differing features, inf takes the largest; pairwise differences, no matmul
/// shortcut, so P * R * M elements are made).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
/// Einstein summation, e.g. einsum("bix,iox->box", {x, w}); supports "..." and implicit output.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

/// Linear systems, determinants and Cholesky factors (torch.linalg's): by LAPACK on the CPU, by cuBLAS and
/// cuSOLVER on a GPU (the tensors stay there).
namespace linalg {
/// X with A X = B: A (..., n, n), B (..., n, k) or a vector (n) / (..., n); batch dims broadcast; a singular A is
/// an error naming its batch index.
Tensor solve(const Tensor& A, const Tensor& B);
/// solve without the singularity check (torch.linalg.solve_ex): (X, info), info int64 of the broadcast batch
/// shape, 0 or, for a singular matrix, j > 0 where U(j, j) is zero (X then holds inf or NaN there). On a GPU
/// nothing waits for the flags.
std::pair<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B);
/// The inverse of each square matrix of A (..., n, n); a singular one is an error.
Tensor inv(const Tensor& A);
/// inv without the singularity check (torch.linalg.inv_ex): (inverse, info), info as solve_ex's.
std::pair<Tensor, Tensor> inv_ex(const Tensor& A);
/// The determinant of each square matrix of A (..., n, n) (sign * exp(logabsdet)).
Tensor det(const Tensor& A);
/// (sign, log|det|) of each square matrix of A: sign of |sign| 1 (0 for a singular matrix, with log|det| -inf),
/// A's dtype; log|det| real.
std::pair<Tensor, Tensor> slogdet(const Tensor& A);
/// X with A X = B (X A = B when !left) for A (..., n, n) triangular: only its upper (lower) triangle is read, and
/// a unit diagonal is assumed when `unitriangular`; B (..., n, k) (left) or (..., k, n); batch dims broadcast; a zero
/// on the diagonal is an error naming its batch index.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);
/// The lower Cholesky factor L (A = L L^H) of each Hermitian positive-definite matrix of A (..., n, n), read from
/// its lower triangle; a matrix that is not positive-definite is an error naming its batch index.
Tensor cholesky(const Tensor& A);
/// cholesky without the positive-definiteness check (torch.linalg.cholesky_ex): (L, info), info int64 of A's batch
/// shape, 0 or the order of the first leading minor that is not positive (L then partial). On a GPU nothing waits
/// for the flags.
std::pair<Tensor, Tensor> cholesky_ex(const Tensor& A);
}  // namespace linalg

}  // namespace phasor
