// src/linalg/compositions.cpp - torch.linalg's remaining functions made of other ops: norm (the dispatching
// norm), matrix_norm over any two dims, diagonal, tensorinv, tensorsolve and householder_product, and torch's
// cholesky_solve, cholesky_inverse and logdet. Each is a composition of public ops (solve_triangular, solve, inv,
// slogdet, the norms, views, elementwise ops), so it runs on every device, replays in static graphs, and its
// gradient (and the gradient's gradient) comes from theirs.
//
// Note [householder product]
// Q = H_1 H_2 ... H_k with H_i = I - tau_i v_i v_i^H, where v_i is column i of A below the diagonal with v_i[i] = 1
// and zeros above (LAPACK's ?orgqr convention, the form geqrf leaves its Q in). Only the first n columns of Q are
// wanted: Q[:, :n] = H_1 (H_2 (... (H_k I[:, :n]))), applied from the right end, each reflector a rank-one update
// C <- C - tau_i v_i (v_i^H C) of the (m, n) block C: 2 k small products instead of k (m, m) matrix products, and
// batch dims ride along in every op. The columns v_i come at once from the strictly lower triangle of A[:, :k] plus
// the identity.
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/lapack.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using detail::shape_str;

namespace {

/// The product of shape[begin, end).
std::int64_t product(const Shape& s, std::size_t begin, std::size_t end) {
  return std::accumulate(s.begin() + static_cast<std::ptrdiff_t>(begin), s.begin() + static_cast<std::ptrdiff_t>(end),
                         std::int64_t{1}, std::multiplies<>());
}

/// Checks a Cholesky factor (..., n, n) and (for cholesky_solve) right-hand sides (..., n, k).
void check_factor(const char* op, const Tensor& L, const Tensor* B) {
  linalg::internal::check_matrix(L, op, true);
  if (!B) return;
  linalg::internal::check_matrix(*B, op, false);
  if (B->size(-2) != L.size(-1))
    throw Error(op, "B of shape " + shape_str(B->shape()) + " does not fit the factor of shape " +
                        shape_str(L.shape()) + ": B needs " + std::to_string(L.size(-1)) + " rows");
}

}  // namespace

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  const char* op = "cholesky_solve";
  check_factor(op, L, &B);
  return detail::composite(op, {B, L}, [&] {
    // A = L L^H: L Y = B, then L^H X = Y (upper: A = U^H U, U^H Y = B, then U X = Y)
    const Tensor F = upper ? linalg::internal::adjoint(L) : L;
    const Tensor Y = linalg::solve_triangular(F, B, /*upper=*/false);
    return linalg::solve_triangular(linalg::internal::adjoint(F), Y, /*upper=*/true);
  });
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  const char* op = "cholesky_inverse";
  check_factor(op, L, nullptr);
  return detail::composite(op, {L}, [&] {
    const std::int64_t n = L.size(-1);
    return cholesky_solve(eye(n, std::nullopt, L.dtype(), L.device()), L, upper);
  });
}

Tensor logdet(const Tensor& A) {
  const char* op = "logdet";
  linalg::internal::check_matrix(A, op, true);
  return detail::composite(op, {A}, [&] {
    const auto [sign, logabs] = linalg::slogdet(A);
    if (A.is_complex()) return sign.log() + logabs.to(A.dtype());
    // a negative determinant has no real log; a zero one gives logabs = -inf already
    return where(sign < 0.0, full({}, std::numeric_limits<double>::quiet_NaN(), A.dtype(), A.device()), logabs);
  });
}

namespace linalg {

namespace {

/// dims normalized against x's rank, checked to be distinct, for `op`.
Shape normalized_dims(const char* op, const Tensor& x, const Shape& dims) {
  Shape d;
  for (std::int64_t v : dims) {
    const std::int64_t nd = static_cast<std::int64_t>(x.dim());
    if (v < -nd || v >= nd)
      throw Error(op, "dim " + std::to_string(v) + " is out of range for a tensor of shape " + shape_str(x.shape()));
    const std::int64_t w = v < 0 ? v + nd : v;
    for (std::int64_t u : d)
      if (u == w) throw Error(op, "dims " + shape_str(dims) + " repeat a dim");
    d.push_back(w);
  }
  return d;
}

/// The matrix norm of ord over the two dims: those dims moved to the end, the norm, and keepdim's size-1 dims
/// put back where they were.
template <class Ord>
Tensor matrix_norm_over(const Tensor& A, const Ord& ord, const Shape& dims, bool keepdim) {
  const char* op = "linalg_matrix_norm";
  if (dims.size() != 2) throw Error(op, "dims must name two dims, got " + shape_str(dims));
  const Shape d = normalized_dims(op, A, dims);
  const Tensor moved = movedim(A, d, {-2, -1});
  Tensor r = matrix_norm(moved, ord, false);
  if (keepdim) {
    const Shape sorted = d[0] < d[1] ? d : Shape{d[1], d[0]};
    for (std::int64_t v : sorted) r = r.unsqueeze(v);
  }
  return r;
}

/// The dims linalg.norm reduces: `dims`, or all of x's (which must then be 1-D or 2-D when an ord is given).
Shape norm_dims(const char* op, const Tensor& x, const Shape& dims, bool ord_given) {
  if (!dims.empty()) {
    if (dims.size() > 2) throw Error(op, "dims must name one or two dims, got " + shape_str(dims));
    return dims;
  }
  if (ord_given && x.dim() != 1 && x.dim() != 2)
    throw Error(op, "with an ord and no dims the input must be 1-D or 2-D, got shape " + shape_str(x.shape()));
  Shape all(x.dim());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

}  // namespace

Tensor matrix_norm(const Tensor& A, const std::string& ord, const Shape& dims, bool keepdim) {
  return detail::composite("linalg_matrix_norm", {A}, [&] { return matrix_norm_over(A, ord, dims, keepdim); });
}

Tensor matrix_norm(const Tensor& A, double ord, const Shape& dims, bool keepdim) {
  return detail::composite("linalg_matrix_norm", {A}, [&] { return matrix_norm_over(A, ord, dims, keepdim); });
}

Tensor norm(const Tensor& x, std::optional<double> ord, const Shape& dims, bool keepdim) {
  const char* op = "linalg_norm";
  if (!x.defined()) throw Error(op, "the input is undefined");
  if (!ord) return detail::composite(op, {x}, [&] {
    // no ord: the 2-norm of the entries over dims (all of them when empty), the Frobenius norm for two
    if (dims.size() > 2) throw Error(op, "dims must name one or two dims, got " + shape_str(dims));
    return vector_norm(x, 2.0, dims, keepdim);
  });
  const Shape d = norm_dims(op, x, dims, true);
  return detail::composite(op, {x}, [&] {
    return d.size() == 1 ? vector_norm(x, *ord, d, keepdim) : matrix_norm_over(x, *ord, d, keepdim);
  });
}

Tensor norm(const Tensor& x, const std::string& ord, const Shape& dims, bool keepdim) {
  const char* op = "linalg_norm";
  if (!x.defined()) throw Error(op, "the input is undefined");
  const Shape d = norm_dims(op, x, dims, true);
  if (d.size() != 2)
    throw Error(op, "ord \"" + ord + "\" is a matrix norm: it needs two dims (or a 2-D input), got " +
                        (dims.empty() ? "shape " + shape_str(x.shape()) : "dims " + shape_str(dims)));
  return detail::composite(op, {x}, [&] { return matrix_norm_over(x, ord, d, keepdim); });
}

Tensor diagonal(const Tensor& A, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  return phasor::diagonal(A, offset, dim1, dim2);
}

Tensor tensorinv(const Tensor& A, std::int64_t ind) {
  const char* op = "linalg_tensorinv";
  if (!A.defined()) throw Error(op, "the input is undefined");
  const auto nd = static_cast<std::int64_t>(A.dim());
  if (ind <= 0 || ind > nd)
    throw Error(op, "ind must be in [1, " + std::to_string(nd) + "] for a tensor of shape " + shape_str(A.shape()) +
                        ", got " + std::to_string(ind));
  const Shape& s = A.shape();
  const auto split = static_cast<std::size_t>(ind);
  const std::int64_t rows = product(s, 0, split), cols = product(s, split, s.size());
  if (rows != cols)
    throw Error(op, "the product of the first " + std::to_string(ind) + " dims of shape " + shape_str(s) + " (" +
                        std::to_string(rows) + ") must equal the product of the others (" + std::to_string(cols) + ")");
  Shape out(s.begin() + static_cast<std::ptrdiff_t>(split), s.end());
  out.insert(out.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(split));
  return detail::composite(op, {A}, [&] { return inv(A.reshape({rows, cols})).reshape(out); });
}

Tensor tensorsolve(const Tensor& A, const Tensor& B, const std::optional<Shape>& dims) {
  const char* op = "linalg_tensorsolve";
  if (!A.defined() || !B.defined()) throw Error(op, "the inputs must be defined");
  Tensor a = A;
  if (dims) {
    const Shape d = normalized_dims(op, A, *dims);
    Shape to(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) to[i] = static_cast<std::int64_t>(A.dim() - d.size() + i);
    a = movedim(A, d, to);
  }
  const Shape& sa = a.shape();
  const Shape& sb = B.shape();
  const bool leads = sa.size() >= sb.size() && std::equal(sb.begin(), sb.end(), sa.begin());
  const Shape rest(sa.begin() + static_cast<std::ptrdiff_t>(std::min(sa.size(), sb.size())), sa.end());
  const std::int64_t n = B.numel(), m = product(rest, 0, rest.size());
  if (!leads || n != m)
    throw Error(op, "A of shape " + shape_str(sa) + (dims ? " (dims moved to the end)" : "") +
                        " must be B's shape " + shape_str(sb) + " followed by dims of the same product (" +
                        std::to_string(n) + ")");
  return detail::composite(op, {A, B}, [&] {
    return solve(a.reshape({n, n}), B.reshape({n, 1})).reshape(rest);
  });
}

Tensor householder_product(const Tensor& A, const Tensor& tau) {
  const char* op = "linalg_householder_product";
  internal::check_matrix(A, op, false);
  if (!tau.defined() || tau.dim() < 1)
    throw Error(op, "tau must be a tensor (..., k), got " + (tau.defined() ? shape_str(tau.shape()) : "undefined"));
  const std::int64_t m = A.size(-2), n = A.size(-1), k = tau.size(-1);
  if (n > m) throw Error(op, "A (..., m, n) needs m >= n, got shape " + shape_str(A.shape()));
  if (k > n) throw Error(op, "tau (..., k) needs k <= n = " + std::to_string(n) + ", got shape " + shape_str(tau.shape()));
  if (tau.dtype() != A.dtype())
    throw Error(op, std::string("tau is ") + dtype_name(tau.dtype()) + " but A is " + dtype_name(A.dtype()));
  const Shape batch_a = internal::batch_of(A), batch_t(tau.shape().begin(), tau.shape().end() - 1);
  if (batch_a != batch_t)
    throw Error(op, "the batch dims of A " + shape_str(A.shape()) + " and tau " + shape_str(tau.shape()) + " differ");
  if (A.device() != tau.device())
    throw Error(op, "A is on " + A.device().str() + " but tau is on " + tau.device().str());
  return detail::composite(op, {A, tau}, [&] {
    // the reflectors' vectors as the columns of V (..., m, k), Note [householder product]
    const Tensor I = eye(m, n, A.dtype(), A.device());
    const Tensor V = tril(A.narrow(-1, 0, k), -1) + I.narrow(-1, 0, k);
    Tensor C = I.expand(internal::with_tail(batch_a, {m, n}));
    for (std::int64_t i = k - 1; i >= 0; --i) {
      const Tensor v = V.narrow(-1, i, 1);                     // (..., m, 1)
      const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);     // (..., 1, 1)
      C = C - (v * t).matmul(internal::adjoint(v).matmul(C));  // C - tau v (v^H C)
    }
    return C;
  });
}

}  // namespace linalg
}  // namespace phasor
