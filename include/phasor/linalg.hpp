// phasor/linalg.hpp - matrix products, einsum, linear systems, determinants, Cholesky, QR, eigh, SVD, eig, least
// squares, pseudo-inverse, rank, norms, the matrix exponential and powers (OpenBLAS and its LAPACK; cuBLAS and
// cuSOLVER on a GPU).
#pragma once
#include <optional>
#include <string>
#include <tuple>
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
/// Sum over the last `dims` dims of a times the first `dims` of b (torch.tensordot): shape a's other dims then b's.
Tensor tensordot(const Tensor& a, const Tensor& b, std::int64_t dims = 2);
/// Sum over a's dims dims_a paired with b's dims_b (same sizes), the free dims of a then of b (torch.tensordot).
Tensor tensordot(const Tensor& a, const Tensor& b, const Shape& dims_a, const Shape& dims_b);

/// X solving A X = B for A = L L^H given by its lower Cholesky factor L (..., n, n), or A = U^H U by its upper one
/// (torch.cholesky_solve); B (..., n, k), batch dims broadcast; differentiable in B and the factor.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
/// The inverse of A = L L^H (or U^H U) from its Cholesky factor (..., n, n) (torch.cholesky_inverse).
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
/// log det(A) of each square matrix (torch.logdet): -inf for a singular matrix, NaN for a real one of negative
/// determinant; complex A: the principal log of the complex determinant.
Tensor logdet(const Tensor& A);

/// torch.linalg's vocabulary: linear systems, determinants, factorizations and decompositions (by LAPACK on the
/// CPU, by cuBLAS and cuSOLVER on a GPU, the tensors staying there; eig on the host for both), and functions of
/// matrices made of ops.
namespace linalg {
/// X with A X = B (X A = B when !left): A (..., n, n), B (..., n, k) ((..., k, n) when !left) or a vector (n) /
/// (..., n); batch dims broadcast; a singular A is an error naming its batch index.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
/// solve without the singularity check (torch.linalg.solve_ex): (X, info), info int64 of the broadcast batch
/// shape, 0 or, for a singular matrix, j > 0 where U(j, j) is zero (X then holds inf or NaN there). On a GPU
/// nothing waits for the flags.
std::pair<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left = true);
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
/// its lower triangle; with `upper`, the upper factor U = L^H (A = U^H U), read from A's upper triangle. A matrix
/// that is not positive-definite is an error naming its batch index.
Tensor cholesky(const Tensor& A, bool upper = false);
/// cholesky without the positive-definiteness check (torch.linalg.cholesky_ex): (L, info), info int64 of A's batch
/// shape, 0 or the order of the first leading minor that is not positive (L then partial). On a GPU nothing waits
/// for the flags.
std::pair<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false);

/// (LU, pivots) with A = P L U (partial pivoting) for A (..., m, n), as torch.linalg.lu_factor: LU (..., m, n) packs
/// L's strictly lower part (its unit diagonal implied) and U's upper part; pivots int64 (..., min(m, n)), LAPACK's
/// 1-based row interchanges (row i was swapped with row pivots[i]). A zero pivot (U(j, j) = 0) is an error naming
/// the batch element. Differentiable in LU (through L and U; a square A must be invertible).
std::pair<Tensor, Tensor> lu_factor(const Tensor& A);
/// lu_factor without the check (torch.linalg.lu_factor_ex): (LU, pivots, info), info int64 (...) 0 or j > 0 where
/// U(j, j) is zero. On a GPU nothing waits for the flags.
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A);
/// (P, L, U) with A = P L U for A (..., m, n), k = min(m, n): P (..., m, m) a permutation in A's dtype, L (..., m, k)
/// unit lower-trapezoidal, U (..., k, n) upper-trapezoidal (torch.linalg.lu); singular matrices are fine.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A);
/// (P, L, U) from lu_factor's (LU, pivots) (torch.lu_unpack); the pivots are read on the host.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots);
/// X with A X = B (A^H X = B when `adjoint`; X A = B, or X A^H = B, when !left) from lu_factor's (LU, pivots) of a
/// square A (..., n, n) and B (..., n, k) ((..., k, n) when !left), batch dims broadcast (torch.linalg.lu_solve);
/// differentiable in LU and B; the pivots are read on the host.
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);

/// (Q, R) with A = Q R for A (..., m, n), k = min(m, n): mode "reduced" gives Q (..., m, k) with orthonormal
/// columns and R (..., k, n) upper-trapezoidal; "complete" gives Q (..., m, m) unitary and R (..., m, n); "r" gives
/// R (as "reduced") and an empty Q (torch.linalg.qr; R's diagonal may be negative, as LAPACK leaves it).
/// Differentiable except mode "complete" with m > n (the extra columns of Q are not unique); needs R of full rank.
std::pair<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced");
/// (eigenvalues, eigenvectors) of each Hermitian matrix of A (..., n, n), read from its lower triangle ("L") or
/// upper ("U"): eigenvalues real, ascending (..., n); eigenvectors the orthonormal columns of (..., n, n), each
/// unique up to sign (phase). Gradients, as torch's, assume distinct eigenvalues and a Hermitian perturbation.
std::pair<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO = "L");
/// The eigenvalues of eigh (real, ascending); their gradient exists at repeated eigenvalues too.
Tensor eigvalsh(const Tensor& A, const std::string& UPLO = "L");
/// (U, S, Vh) with A = U diag(S) Vh for A (..., m, n), k = min(m, n): S real, descending (..., k); U (..., m, m) and
/// Vh (..., n, n) unitary when `full_matrices`, else U (..., m, k) and Vh (..., k, n). Gradients need distinct
/// nonzero singular values where U or Vh is used, and ignore the extra columns of full matrices (as torch's).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
/// The singular values of A (..., m, n): real, descending (..., min(m, n)); differentiable at repeated ones too.
Tensor svdvals(const Tensor& A);

/// torch.linalg.lstsq's results: the solution and, depending on the driver, the squared residuals, the rank and
/// the singular values (empty tensors where not computed).
struct LstsqResult {
  Tensor solution;         ///< X (..., n, k) minimizing ||A X - B|| (of least norm for the rank-revealing drivers)
  Tensor residuals;        ///< (..., k) sums of squared residuals when m > n and every matrix has full rank, else empty
  Tensor rank;             ///< int64 (...) effective ranks (drivers "gelsy", "gelsd", "gelss"), else empty
  Tensor singular_values;  ///< (..., min(m, n)) (drivers "gelsd", "gelss"), else empty
};
/// Least-squares solution of A X = B for A (..., m, n) and B (..., m, k) or (..., m) (batch dims broadcast, dtypes
/// promoted), as torch.linalg.lstsq. Drivers: "gels" (QR; A must have full rank) and the rank-revealing "gelsy" (the
/// default: QR with column pivoting), "gelsd" and "gelss" (SVD), whose rank counts the singular values above rcond
/// times the largest (rcond defaults to eps(dtype) * max(m, n)). On the CPU LAPACK's driver of that name runs; on a
/// GPU, and whenever a gradient is recorded, QR ("gels") or the SVD (the others) made of ops, which give the same
/// least-norm solution and differentiate.
LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                  const std::string& driver = "");
/// The Moore-Penrose pseudo-inverse of A (..., m, n): singular values at or below max(atol, rtol * the largest) are
/// dropped; rtol defaults to eps(dtype) * max(m, n) when atol is not given, else 0. With `hermitian`, A is taken
/// Hermitian (its lower triangle) and eigh replaces the SVD.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);
/// The numerical rank (int64 (...)) of A (..., m, n): its singular values above max(atol, rtol * the largest), the
/// tolerances as pinv's; with `hermitian`, the absolute eigenvalues of eigvalsh.
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
                   bool hermitian = false);
/// Matrix norm of A over its last two dims: ord "fro" (default) or "nuc" (sum of singular values).
Tensor matrix_norm(const Tensor& A, const std::string& ord = "fro", bool keepdim = false);
/// Matrix norm of A over its last two dims: ord 2 / -2 (largest / smallest singular value), 1 / -1 (largest /
/// smallest column sum of |A|), inf / -inf (largest / smallest row sum of |A|).
Tensor matrix_norm(const Tensor& A, double ord, bool keepdim = false);
/// The condition number of A (..., m, n) in the 2-norm (by default: largest over smallest singular value) or in
/// `p` "fro", "nuc", 1, -1, inf, -inf (then A must be square: norm(A) norm(inv(A))), as torch.linalg.cond.
Tensor cond(const Tensor& A, std::optional<double> p = std::nullopt);
/// cond with a named norm: "fro" or "nuc".
Tensor cond(const Tensor& A, const std::string& p);

/// (eigenvalues, eigenvectors) of each general square matrix of A (..., n, n), real or complex: both complex,
/// eigenvalues (..., n) in LAPACK's order (not sorted), eigenvectors the columns of (..., n, n), each of unit norm with
/// its largest component real (LAPACK's ?geev). On a GPU A is copied to the host for LAPACK and the results back
/// (the host waits). Gradients, as torch's, need distinct eigenvalues and a loss that does not depend on the
/// eigenvectors' phases.
std::pair<Tensor, Tensor> eig(const Tensor& A);
/// The eigenvalues of eig (complex); differentiable.
Tensor eigvals(const Tensor& A);

/// e^A of each square matrix of A (..., n, n), float or complex, by scaling and squaring a Pade approximant (as
/// torch.linalg.matrix_exp); differentiable (the gradient is the same computation's).
Tensor matrix_exp(const Tensor& A);
/// A^n of each square matrix of A (..., n, n) for an integer n by repeated squaring: n = 0 gives the identity, n < 0
/// inv(A)^|n| (a singular A is then an error), as torch.linalg.matrix_power; any dtype for n >= 0.
Tensor matrix_power(const Tensor& A, std::int64_t n);
/// The product of two or more matrices in the order that needs the fewest multiply-adds (the first may be 1-D, a
/// row, and the last 1-D, a column; both then dropped from the result), as torch.linalg.multi_dot.
Tensor multi_dot(const std::vector<Tensor>& tensors);
/// The vector norm of x over `dims` (all when empty): ord 2 (default), any p > 0, inf (largest |x|), -inf (smallest),
/// 0 (the number of nonzeros), or p < 0 (sum |x|^p)^(1/p), as torch.linalg.vector_norm; real result.
Tensor vector_norm(const Tensor& x, double ord = 2, const Shape& dims = {}, bool keepdim = false);
/// sum over `dim` of conj(x) * y, x and y broadcast (torch.linalg.vecdot).
Tensor vecdot(const Tensor& x, const Tensor& y, std::int64_t dim = -1);
/// The Vandermonde matrices (..., n, N) of x (..., n): column j is x^j (torch.linalg.vander; N defaults to n).
Tensor vander(const Tensor& x, std::optional<std::int64_t> N = std::nullopt);
/// The norm of torch.linalg.norm: with no ord, the 2-norm of x flattened (no dims), of vectors (one dim) or the
/// Frobenius norm (two dims); a number ord gives vector_norm over one dim (or of a 1-D x with no dims) and
/// matrix_norm over two (or of a 2-D x); keepdim keeps the reduced dims as size 1.
Tensor norm(const Tensor& x, std::optional<double> ord = std::nullopt, const Shape& dims = {}, bool keepdim = false);
/// norm with a matrix ord, "fro" or "nuc", over two dims (or of a 2-D x).
Tensor norm(const Tensor& x, const std::string& ord, const Shape& dims = {}, bool keepdim = false);
/// matrix_norm over the two dims `dims` instead of the last two (torch.linalg.matrix_norm's dim).
Tensor matrix_norm(const Tensor& A, const std::string& ord, const Shape& dims, bool keepdim = false);
/// matrix_norm of a number ord over the two dims `dims`.
Tensor matrix_norm(const Tensor& A, double ord, const Shape& dims, bool keepdim = false);
/// The diagonals of A in the plane of dim1 and dim2, by default the last two (torch.linalg.diagonal): a view.
Tensor diagonal(const Tensor& A, std::int64_t offset = 0, std::int64_t dim1 = -2, std::int64_t dim2 = -1);
/// The inverse of A read as a linear map from its last dims to its first `ind` (torch.linalg.tensorinv): the
/// product of A.shape[:ind] must equal that of A.shape[ind:]; the result has shape A.shape[ind:] + A.shape[:ind].
Tensor tensorinv(const Tensor& A, std::int64_t ind = 2);
/// X with tensordot(A, X, X.ndim) = B (torch.linalg.tensorsolve): A.shape = B.shape + X.shape after moving the
/// dims `dims` of A (if given) to its end; the products of both parts must agree.
Tensor tensorsolve(const Tensor& A, const Tensor& B, const std::optional<Shape>& dims = std::nullopt);
/// The first n columns of the product H_1 ... H_k of Householder reflectors H_i = I - tau_i v_i v_i^H, v_i the
/// i-th column of A (..., m, n) below the diagonal with a unit on it (torch.linalg.householder_product, LAPACK's
/// ?orgqr); tau (..., k), k <= n <= m. Differentiable in A and tau.
Tensor householder_product(const Tensor& A, const Tensor& tau);
}  // namespace linalg

}  // namespace phasor
