// src/linalg/lu.cpp - the LU factorization as torch.linalg exposes it: lu_factor (the primitive), lu_factor_ex, lu,
// lu_unpack, lu_solve.
//
// Note [LU factors]
// lu_factor copies A into column-major matrices of its own and factors them with LAPACK's ?getrf on the host or
// cuSOLVER's getrf (cuBLAS's getrfBatched for batches of small square ones) on a GPU; host_getrf and cuda_getrf
// take the same arguments. (solve.cpp factors A^T instead, which serves its solves; these factors must be A's.)
// The pivots are LAPACK's: row i was swapped with row pivots[i] (1-based), in order. The permutation they make,
// perm with (P^T A)[i] = A[perm[i]], is built where the pivots are (detail::pivots_to_perm: a loop of swaps per
// matrix on the host, one block per matrix on a GPU), so lu_unpack, lu_solve and the gradient read nothing on the
// host; user-given pivots are range-checked as device checks are (eagerly one flag read on a GPU). lu_solve with
// no gradient to record is LAPACK's getrs (cuBLAS's getrsBatched on a GPU) on a column-major copy of LU; otherwise
// it is made of ops: B's rows gathered by perm and two triangular solves reading LU's triangles, so it
// differentiates in LU and B.
// The gradient of A = P L U (L, U read from LU; gL = tril(gLU, -1), gU = triu(gLU)), in P^T A's rows:
//   square:  sq(L, U, gL, gU) = L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H};
//   m > n, L = [L1; L2]:  [sq(L1, U, gL1, gU - L2^H gL2 U^{-H}); gL2 U^{-H}]   (L2 = A2 U^{-1});
//   m < n, U = [U1 | U2]:  [sq(L, U1, gL - L^{-H} gU2 U2^H, gU1) | L^{-H} gU2]   (U2 = L^{-1} A2);
// then P times it. A square A must be invertible (U's diagonal divides).
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/index_ops.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/cusolver_solve.hpp"
#include "linalg/lapack.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {
namespace linalg {
namespace {

using G = std::vector<Tensor>;
using In = detail::TensorList;
using namespace internal;

/// The error of a zero at U's diagonal element j - 1 (info j).
std::string zero_u_pivot(const std::string& which, std::int64_t j) {
  return which + " is singular: U's diagonal element " + std::to_string(j - 1) + " is zero";
}

/// LAPACK's pivots (..., k), each checked to lie in [1, m] (an error of `op` naming the first that does not) as
/// device checks are (core/device_check.hpp): eagerly one host wait on a GPU; in a CUDA graph capture or with deferred
/// checks a test on the device, and the pivots clamped so that a failed check permutes in range.
Tensor checked_pivots(const Tensor& pivots, std::int64_t m, const char* op) {
  const Shape batch(pivots.shape().begin(), pivots.shape().end() - 1);
  const std::int64_t k = pivots.size(-1);
  if (pivots.numel() == 0) return pivots;
  NoGradGuard ng;
  const Tensor bad = logical_or(pivots < 1, pivots > m);
  const bool on_device = detail::check_device_value(
      op, bad.any(),
      [&] {
        const Tensor at = bad.reshape({-1}).to(Dtype::Int64).argmax();
        return std::pair<Tensor, Tensor>{detail::first_where(pivots, bad), at};
      },
      [m, k, batch](double value, double at) {
        const auto i = static_cast<std::int64_t>(at);
        return "pivots must be in [1, " + std::to_string(m) + "], got " + std::to_string(static_cast<std::int64_t>(value)) +
               " at position " + std::to_string(i % k) + " of " + which_matrix(batch, i / k);
      });
  return on_device ? pivots.clamp(Scalar(1), Scalar(m)) : pivots;
}

/// The permutations (..., m) that user-given pivots (..., k) make (Note [LU factors]); a pivot outside [1, m] is an
/// error of `op`.
Tensor pivots_to_perm(const Tensor& pivots, std::int64_t m, const char* op) {
  return detail::pivots_to_perm(checked_pivots(pivots, m, op), m);
}

/// X with op(A) X = B from (LU, pivots) (..., n, n) / (..., n) and B (..., n, k), all of one batch shape, with no
/// gradient recorded: LAPACK's getrs on the host, cuBLAS's getrsBatched on a GPU, on a column-major copy of LU and
/// the checked pivots narrowed to int. (getrsBatched solves with A^T, not A^H: a complex A^H X = B is solved as
/// A^T conj(X) = conj(B).)
Tensor getrs(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint_a, const char* op) {
  const Shape batch = batch_of(lu);
  const std::int64_t n = lu.size(-1), k = b.size(-1), count = detail::shape_numel(batch);
  const Tensor piv = detail::narrow_int32(checked_pivots(pivots, n, op));
  const Tensor f = column_major_copy(lu);
  const bool cuda = f.device().is_cuda(), conj = cuda && adjoint_a && lu.is_complex();
  const Tensor rhs = b.reshape({count, n, k});
  Tensor x = own_contiguous((conj ? rhs.conj() : rhs).transpose(1, 2));  // B column-major
  if (cuda)
    detail::cuda_getrs(op, lu.dtype(), f.device().index, adjoint_a, n, k, count, f.data_ptr(), detail::int32_data(piv),
                       x.data_ptr());
  else
    host_getrs(lu.dtype(), adjoint_a ? 'C' : 'N', n, k, count, f.data_ptr(), detail::int32_data(piv), x.data_ptr());
  x = x.transpose(1, 2).reshape(b.shape());
  return conj ? x.conj() : x;
}

/// P y: the rows of y (..., m, c) put back where perm took them from ((P y)[perm[i]] = y[i]). perm is a
/// permutation (built from checked or clamped pivots), so the gathers need no range check.
Tensor apply_p(const Tensor& y, const Tensor& perm) {
  const Tensor inv = argsort(perm, -1);
  return detail::gather_trusted(y, -2, inv.unsqueeze(-1).expand(y.shape()));
}

/// P^T y: y's rows in perm's order ((P^T y)[i] = y[perm[i]]).
Tensor apply_pt(const Tensor& y, const Tensor& perm) {
  return detail::gather_trusted(y, -2, perm.unsqueeze(-1).expand(y.shape()));
}

/// (L, U) of a packed LU (..., m, n): L (..., m, k) unit lower-trapezoidal, U (..., k, n) upper-trapezoidal.
std::pair<Tensor, Tensor> factors(const Tensor& lu) {
  const std::int64_t m = lu.size(-2), k = std::min(m, lu.size(-1));
  return {tril(lu.narrow(-1, 0, k), -1) + eye(m, k, lu.dtype(), lu.device()), triu(lu.narrow(-2, 0, k))};
}

/// L^{-H} m for unit lower-triangular L.
Tensor solve_lh(const Tensor& l, const Tensor& m) { return solve_triangular(adjoint(l), m, /*upper=*/true, true, /*unitriangular=*/true); }
/// m U^{-H} for upper-triangular U.
Tensor solve_uh_right(const Tensor& u, const Tensor& m) { return solve_triangular(adjoint(u), m, /*upper=*/false, /*left=*/false); }

/// The square case of Note [LU factors]: L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}.
Tensor lu_grad_square(const Tensor& l, const Tensor& u, const Tensor& gl, const Tensor& gu) {
  const Tensor phi = tril(matmul(adjoint(l), gl), -1) + triu(matmul(gu, adjoint(u)));
  return solve_uh_right(u, solve_lh(l, phi));
}

/// The gradient of LU (..., m, n) = lu_factor(A) from gLU, with LU's permutation perm (Note [LU factors]).
Tensor lu_grad(const Tensor& lu, const Tensor& perm, const Tensor& glu) {
  const std::int64_t m = lu.size(-2), n = lu.size(-1), k = std::min(m, n);
  const auto [l, u] = factors(lu);
  const Tensor gl = tril(glu.narrow(-1, 0, k), -1), gu = triu(glu.narrow(-2, 0, k));
  Tensor y;
  if (m == n) {
    y = lu_grad_square(l, u, gl, gu);
  } else if (m > n) {
    const Tensor l1 = l.narrow(-2, 0, k), l2 = l.narrow(-2, k, m - k);
    const Tensor gl1 = gl.narrow(-2, 0, k), gl2 = gl.narrow(-2, k, m - k);
    y = cat({lu_grad_square(l1, u, gl1, gu - solve_uh_right(u, matmul(adjoint(l2), gl2))), solve_uh_right(u, gl2)}, -2);
  } else {
    const Tensor u1 = u.narrow(-1, 0, k), u2 = u.narrow(-1, k, n - k);
    const Tensor gu1 = gu.narrow(-1, 0, k), gu2 = gu.narrow(-1, k, n - k);
    y = cat({lu_grad_square(l, u1, gl - matmul(solve_lh(l, gu2), adjoint(u2)), gu1), solve_lh(l, gu2)}, -1);
  }
  return apply_p(y, perm);
}

/// (LU, pivots) of A (..., m, n), the primitive (Note [LU factors]); a zero pivot is an error, or, with `with_info`,
/// flagged in a third output (int64 (...)).
G lu_factor_primitive(const Tensor& a, bool with_info) {
  const char* op = "linalg_lu_factor";
  return detail::apply_op_n(
      op, {a}, detail::kSaveOutputs,
      [op, with_info](In in) {
        const Tensor& x = in[0];
        const Shape batch = batch_of(x);
        const std::int64_t m = x.size(-2), n = x.size(-1), k = std::min(m, n), count = detail::shape_numel(batch);
        Tensor f = column_major_copy(x);  // (count, n, m): A column-major
        const Tensor piv = detail::int32_buffer(count * k, f.device()), info = detail::int32_buffer(count, f.device());
        if (f.device().is_cuda())
          detail::cuda_getrf(op, x.dtype(), f.device().index, m, n, count, f.data_ptr(), detail::int32_data(piv),
                             detail::int32_data(info));
        else
          host_getrf(x.dtype(), m, n, count, f.data_ptr(), detail::int32_data(piv), detail::int32_data(info));
        const Tensor flags = detail::widen_int32(info, {count}).reshape(batch);
        if (!with_info) check_info(op, flags.reshape({count}), batch, zero_u_pivot);
        G out{f.transpose(1, 2).reshape(with_tail(batch, {m, n})).to(x.device()),
              detail::widen_int32(piv, {count, k}).reshape(with_tail(batch, {k})).to(x.device())};
        if (with_info) out.push_back(flags.to(x.device()));
        return out;
      },
      [](const detail::Ctx& c, const G& g) {
        const Tensor lu = c.output(0);
        return G{lu_grad(lu, detail::pivots_to_perm(c.output(1), lu.size(-2)), g[0])};
      });
}

/// Throws unless pivots is an int64 (..., min(m, n)) tensor on LU's device matching LU (..., m, n).
void check_pivots(const Tensor& lu, const Tensor& pivots, const char* op) {
  if (!pivots.defined()) throw Error(op, "pivots is undefined");
  detail::check_same_device(lu, pivots, op);
  const std::int64_t k = std::min(lu.size(-2), lu.size(-1));
  if (pivots.dtype() != Dtype::Int64 || pivots.dim() < 1 || pivots.size(-1) != k)
    throw Error(op, "pivots must be an int64 tensor (..., " + std::to_string(k) + ") for LU of shape " + detail::shape_str(lu.shape()) +
                        ", got " + dtype_name(pivots.dtype()) + " " + detail::shape_str(pivots.shape()));
}

/// (P, L, U) from LU and its permutation.
G unpack(const Tensor& lu, const Tensor& perm) {
  const std::int64_t m = lu.size(-2);
  const auto [l, u] = factors(lu);
  Shape ps(perm.shape());
  ps.push_back(m);
  // P^T's row i is e_{perm[i]}: the identity's rows in perm's order
  const Tensor pt = apply_pt(eye(m, std::nullopt, lu.dtype(), lu.device()).expand(ps), perm);
  return G{pt.transpose(-1, -2), l, u};
}

}  // namespace

std::pair<Tensor, Tensor> lu_factor(const Tensor& a) {
  check_matrix(a, "linalg_lu_factor", false);
  const G out = lu_factor_primitive(a, false);
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a) {
  check_matrix(a, "linalg_lu_factor_ex", false);
  const G out = lu_factor_primitive(a, true);
  return {out[0], out[1], out[2]};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots) {
  const char* op = "lu_unpack";
  check_matrix(lu, op, false);
  check_pivots(lu, pivots, op);
  const G out = detail::composite(op, {lu, pivots}, [&] {
    const Shape batch = broadcast_shapes({batch_of(lu), Shape(pivots.shape().begin(), pivots.shape().end() - 1)}, op);
    const Tensor l = lu.broadcast_to(with_tail(batch, {lu.size(-2), lu.size(-1)}));
    return unpack(l, pivots_to_perm(pivots.broadcast_to(with_tail(batch, {pivots.size(-1)})), lu.size(-2), op));
  });
  return {out[0], out[1], out[2]};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a) {
  const char* op = "linalg_lu";
  check_matrix(a, op, false);
  const G out = detail::composite(op, {a}, [&] {
    const G f = lu_factor_primitive(a, true);  // singular matrices have their factors too
    return unpack(f[0], detail::pivots_to_perm(f[1], a.size(-2)));
  });
  return {out[0], out[1], out[2]};
}

Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint_a) {
  const char* op = "linalg_lu_solve";
  check_matrix(lu, op, true);
  check_pivots(lu, pivots, op);
  if (!b.defined()) throw Error(op, "B is undefined");
  detail::check_same_device(lu, b, op);
  const std::int64_t n = lu.size(-1);
  if (b.dim() < 2 || b.size(left ? -2 : -1) != n)
    throw Error(op, "B of shape " + detail::shape_str(b.shape()) + " does not match LU of shape " + detail::shape_str(lu.shape()) +
                        (left ? " (B must be (..., " + std::to_string(n) + ", k))" : " (B must be (..., k, " + std::to_string(n) + ") with left = false)"));
  return detail::composite(op, {lu, pivots, b}, [&] {
    const Shape batch = broadcast_shapes({batch_of(lu), Shape(pivots.shape().begin(), pivots.shape().end() - 1), batch_of(b)}, op);
    const Dtype dt = promote_types(lu.dtype(), b.dtype());
    const Tensor f = lu.to(dt).broadcast_to(with_tail(batch, {n, n}));
    const Tensor pv = pivots.broadcast_to(with_tail(batch, {n}));
    // X A = B is A^H X^H = B^H, and X A^H = B is A X^H = B^H: the left solves with the other `adjoint`
    const Tensor rhs = (left ? b : adjoint(b)).to(dt);
    const Tensor bb = rhs.broadcast_to(with_tail(batch, {n, rhs.size(-1)}));
    const bool adj = left ? adjoint_a : !adjoint_a;
    // getrs itself (the ops below when a gradient is recorded, or a static graph records: getrs is no op of its own)
    if (!detail::any_requires_grad({lu, b}) && !detail::tracing()) {
      const Tensor x = getrs(f, pv, bb, adj, op);
      return left ? x : adjoint(x);
    }
    const Tensor perm = pivots_to_perm(pv, n, op);
    Tensor x;
    if (!adj) {  // A = P L U: X = U^{-1} L^{-1} P^T B
      x = solve_triangular(f, apply_pt(bb, perm), /*upper=*/false, true, /*unitriangular=*/true);
      x = solve_triangular(f, x, /*upper=*/true);
    } else {  // A^H = U^H L^H P^T: X = P L^{-H} U^{-H} B
      const Tensor fh = adjoint(f);
      x = solve_triangular(fh, bb, /*upper=*/false);
      x = apply_p(solve_triangular(fh, x, /*upper=*/true, true, /*unitriangular=*/true), perm);
    }
    return left ? x : adjoint(x);
  });
}

}  // namespace linalg
}  // namespace phasor
