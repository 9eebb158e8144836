// src/linalg/matrix_functions.cpp - functions of matrices and vectors made of other ops (torch.linalg's):
// matrix_exp, matrix_power, multi_dot, vector_norm, vecdot. Each is a composition of public ops (matmul,
// solve_ex, inv_ex, norm, reductions, elementwise), so it runs on every device and its gradient (and the
// gradient's gradient) comes from theirs.
//
// Note [matrix exponential]
// exp(A) by scaling and squaring (Higham 2005, "The scaling and squaring method for the matrix exponential
// revisited"): exp(A) = r_m(A / 2^s)^(2^s), r_m the [m/m] Pade approximant p_m(X) / p_m(-X) with
// p_m(X) = sum_j c_j X^j, c_j = (2m - j)! m! / ((2m)! j! (m - j)!). Splitting p_m into its even part V and odd
// part U gives p_m(X) = V + U, p_m(-X) = V - U, so r_m(X) = solve(V - U, V + U): one LU solve, and the matmuls
// that make X^2, X^4, ... (degree 13 shares them as A6 (c13 A6 + c11 A4 + c9 A2) + ..., Higham's scheme: 6
// products and a solve). The degree m and the number of squarings s come from ||A||_1 (the largest column sum of
// |A|): the smallest m in {3, 5, 7, 9, 13} with ||A||_1 <= theta_m, where theta_m is the largest norm for which
// r_m's backward error stays below the unit roundoff (Higham's bound), else the largest degree with
// s = ceil(log2(||A||_1 / theta_max)) so that ||A / 2^s||_1 <= theta_max. The thetas per precision:
//   float64 (u = 2^-53): theta_3 = 1.50e-2, theta_5 = 2.54e-1, theta_7 = 9.50e-1, theta_9 = 2.10, theta_13 = 5.37;
//   float32 (u = 2^-24): theta_3 = 4.26e-1, theta_5 = 1.88, theta_7 = 3.93, and degree 7 is the one to scale to
//   (Higham's choice for single precision: counting the squarings, degrees 9 and 13 save no matmuls there).
// float32 makes at most 4 matmuls (degree 7) and a solve before its s squarings, float64 at most 6 (degree 13).
// Dividing by 2^s is exact. The norm is read on the host once per call (it decides the computation's shape); a
// batch takes the largest over its finite matrices (a matrix with a non-finite entry gives NaN / inf through the
// same arithmetic, and solve_ex does not stop on it). The degree and s are constants locally, so the gradient is
// that of the matmuls and the solve made (exact for the approximant, which agrees with exp to the roundoff).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/lapack.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {
namespace linalg {
namespace {

using namespace internal;

// ---- matrix_exp (Note [matrix exponential]) ---------------------------------------------------------------------

/// The Pade degree m and the number of squarings s for a 1-norm of `norm1` in single or double precision.
struct PadePlan {
  int degree = 3;
  int squarings = 0;
};

/// Picks the plan of Note [matrix exponential] for a finite norm1 >= 0.
PadePlan pade_plan(double norm1, bool single) {
  static const int kDegrees64[] = {3, 5, 7, 9, 13};
  static const double kTheta64[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                    2.097847961257068e0, 5.371920351148152e0};
  static const int kDegrees32[] = {3, 5, 7};
  static const double kTheta32[] = {4.258730016922831e-1, 1.880152677804762e0, 3.925724783138660e0};
  const int count = single ? 3 : 5;
  const int* degrees = single ? kDegrees32 : kDegrees64;
  const double* theta = single ? kTheta32 : kTheta64;
  for (int i = 0; i < count; ++i)
    if (norm1 <= theta[i]) return {degrees[i], 0};
  const double top = theta[count - 1];
  int s = std::max(0, static_cast<int>(std::ceil(std::log2(norm1 / top))));
  while (std::ldexp(norm1, -s) > top) ++s;  // guards log2's rounding
  return {degrees[count - 1], s};
}

/// The Pade coefficients c_0 = 1, ..., c_m of degree m (c_j / c_{j-1} = (m - j + 1) / (j (2m - j + 1))).
std::vector<double> pade_coefficients(int m) {
  std::vector<double> c(static_cast<std::size_t>(m) + 1, 1.0);
  for (int j = 1; j <= m; ++j) c[j] = c[j - 1] * (m - j + 1) / (static_cast<double>(j) * (2 * m - j + 1));
  return c;
}

/// r_m(X) = p_m(-X)^{-1} p_m(X) for square matrices X (..., n, n) of floating or complex dtype.
Tensor pade_approximant(const Tensor& x, int m) {
  const std::vector<double> c = pade_coefficients(m);
  const Tensor id = eye(x.size(-1), std::nullopt, x.dtype(), x.device());
  const Tensor x2 = matmul(x, x);
  Tensor u, v;
  if (m == 13) {
    const Tensor x4 = matmul(x2, x2), x6 = matmul(x4, x2);
    u = matmul(x, matmul(x6, x6 * c[13] + x4 * c[11] + x2 * c[9]) + x6 * c[7] + x4 * c[5] + x2 * c[3] + id * c[1]);
    v = matmul(x6, x6 * c[12] + x4 * c[10] + x2 * c[8]) + x6 * c[6] + x4 * c[4] + x2 * c[2] + id * c[0];
  } else {
    // even powers X^0, X^2, ..., X^(m-1): U = X sum_k c_{2k+1} X^(2k), V = sum_k c_{2k} X^(2k)
    Tensor odd = id * c[1], even = id * c[0], power = x2;
    for (int j = 2; j <= m; j += 2) {
      odd = odd + power * c[j + 1];
      even = even + power * c[j];
      if (j + 2 <= m) power = matmul(power, x2);
    }
    u = matmul(x, odd);
    v = even;
  }
  return solve_ex(v - u, v + u).first;
}

/// The largest 1-norm (column sum of |A|) over the finite matrices of a batch A (..., n, n), read on the host.
double batch_norm1(const Tensor& a) {
  NoGradGuard no_grad;
  const Tensor norms = matrix_norm(a.detach(), 1.0);
  return amax(where(isfinite(norms), norms, 0.0)).item<double>();
}

// ---- matrix_power ------------------------------------------------------------------------------------------------

/// The message for a singular matrix raised to a negative power.
std::string singular_power(const std::string& which, std::int64_t pivot) {
  return which + " is singular (its LU factorization has a zero pivot at " + std::to_string(pivot) +
         "), so it has no negative powers";
}

// ---- multi_dot ---------------------------------------------------------------------------------------------------

/// The cheapest parenthesization of a chain of matrices of sizes dims[i] x dims[i + 1]: split[i][j] is the k at
/// which the product of matrices i..j splits into (i..k)(k+1..j) (the classic O(k^3) dynamic program).
std::vector<std::vector<std::size_t>> chain_order(const std::vector<double>& dims) {
  const std::size_t k = dims.size() - 1;
  std::vector<std::vector<double>> cost(k, std::vector<double>(k, 0.0));
  std::vector<std::vector<std::size_t>> split(k, std::vector<std::size_t>(k, 0));
  for (std::size_t len = 1; len < k; ++len)
    for (std::size_t i = 0; i + len < k; ++i) {
      const std::size_t j = i + len;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (std::size_t s = i; s < j; ++s) {
        const double c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1];
        if (c < cost[i][j]) cost[i][j] = c, split[i][j] = s;
      }
    }
  return split;
}

/// The product of matrices i..j in the order `split` gives.
Tensor chain_product(const std::vector<Tensor>& m, const std::vector<std::vector<std::size_t>>& split, std::size_t i,
                     std::size_t j) {
  if (i == j) return m[i];
  const std::size_t s = split[i][j];
  const Tensor left = chain_product(m, split, i, s);  // left first: a fixed order of the products
  return matmul(left, chain_product(m, split, s + 1, j));
}

// ---- vector_norm -------------------------------------------------------------------------------------------------

/// (sum |x|^p)^(1/p) over dims for p < 0 (finite): 0 where a reduced element is 0 (the limit), with a zero gradient
/// there (torch's); elsewhere the gradient of the ops.
Tensor negative_p_norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  const Tensor ax = abs(x);
  Tensor zero, any_zero;
  {
    NoGradGuard no_grad;
    zero = ax.detach() == 0.0;
    any_zero = any(zero, dims, keepdim);
  }
  const Tensor terms = where(zero, 0.0, pow(where(zero, 1.0, ax), p));
  const Tensor s = sum(terms, dims, keepdim);
  return where(any_zero, 0.0, pow(where(any_zero, 1.0, s), 1.0 / p));
}

/// "2", "-1.5", "inf": a norm order for messages.
std::string ord_str(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::string s = std::to_string(ord);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

Tensor matrix_exp(const Tensor& a) {
  const char* op = "linalg_matrix_exp";
  check_matrix(a, op, true);
  return detail::composite(op, {a}, [&]() -> Tensor {
    if (a.numel() == 0) return a.clone();
    const PadePlan plan = pade_plan(batch_norm1(a), to_real(a.dtype()) == Dtype::Float32);
    Tensor r = pade_approximant(plan.squarings ? a * std::ldexp(1.0, -plan.squarings) : a, plan.degree);
    for (int i = 0; i < plan.squarings; ++i) r = matmul(r, r);
    return r;
  });
}

Tensor matrix_power(const Tensor& a, std::int64_t n) {
  const char* op = "linalg_matrix_power";
  if (!a.defined()) throw Error(op, "A is undefined");
  if (a.dim() < 2 || a.size(-1) != a.size(-2))
    throw Error(op, "A must be a batch of square matrices (..., n, n), got shape " + detail::shape_str(a.shape()));
  if (n < 0 && !is_floating_or_complex(a.dtype()))
    throw Error(op, "a negative power (n = " + std::to_string(n) + ") needs a floating or complex A, got " +
                        dtype_name(a.dtype()));
  return detail::composite(op, {a}, [&]() -> Tensor {
    if (n == 0) {
      // the identity in A's shape and dtype, a tensor of its own; where() keeps it in A's graph (zero gradient)
      const Tensor id = eye(a.size(-1), std::nullopt, a.dtype(), a.device());
      return where(ones({}, Dtype::Bool, a.device()), id, a);
    }
    Tensor base = a;
    if (n < 0) {
      const auto [inverse, info] = inv_ex(a);
      check_info(op, info, batch_of(a), singular_power);
      base = inverse;
    }
    // repeated squaring over the bits of |n| (unsigned: |INT64_MIN| fits)
    std::uint64_t e = n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    Tensor result;
    while (true) {
      if (e & 1u) result = result.defined() ? matmul(result, base) : base;
      e >>= 1;
      if (e == 0) break;
      base = matmul(base, base);
    }
    return result.is_same(a) ? a.clone() : result;
  });
}

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  const char* op = "linalg_multi_dot";
  const std::size_t k = tensors.size();
  if (k < 2) throw Error(op, "expected at least 2 tensors, got " + std::to_string(k));
  std::vector<double> dims;  // matrix i is dims[i] x dims[i + 1]
  for (std::size_t i = 0; i < k; ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) throw Error(op, "tensor " + std::to_string(i) + " is undefined");
    const bool end = i == 0 || i + 1 == k;
    if (t.dim() != 2 && !(end && t.dim() == 1))
      throw Error(op, std::string(i == 0 ? "the first tensor" : i + 1 == k ? "the last tensor" : "tensor " + std::to_string(i)) +
                          (end ? " must be 1-D or 2-D" : " must be 2-D") + ", got shape " + detail::shape_str(t.shape()));
    const std::int64_t rows = t.dim() == 1 ? (i == 0 ? 1 : t.size(0)) : t.size(0);
    const std::int64_t cols = t.dim() == 1 ? (i == 0 ? t.size(0) : 1) : t.size(1);
    if (i == 0) dims.push_back(static_cast<double>(rows));
    else if (static_cast<double>(rows) != dims.back())
      throw Error(op, "tensor " + std::to_string(i - 1) + " of shape " + detail::shape_str(tensors[i - 1].shape()) +
                          " and tensor " + std::to_string(i) + " of shape " + detail::shape_str(t.shape()) +
                          " cannot be multiplied (" + std::to_string(static_cast<std::int64_t>(dims.back())) +
                          " != " + std::to_string(rows) + ")");
    dims.push_back(static_cast<double>(cols));
  }
  detail::check_same_device(tensors, op);
  return detail::composite(op, tensors, [&]() -> Tensor {
    if (k == 2) return matmul(tensors[0], tensors[1]);  // matmul's 1-D rules are multi_dot's
    const bool row = tensors[0].dim() == 1, col = tensors[k - 1].dim() == 1;
    std::vector<Tensor> m(tensors);
    if (row) m[0] = m[0].unsqueeze(0);
    if (col) m[k - 1] = m[k - 1].unsqueeze(-1);
    Tensor r = chain_product(m, chain_order(dims), 0, k - 1);
    if (col) r = r.squeeze(-1);
    if (row) r = r.squeeze(0);
    return r;
  });
}

Tensor vector_norm(const Tensor& x, double ord, const Shape& dims, bool keepdim) {
  const char* op = "linalg_vector_norm";
  if (!x.defined()) throw Error(op, "x is undefined");
  if (!is_floating_or_complex(x.dtype()))
    throw Error(op, std::string("expected a floating or complex tensor, got ") + dtype_name(x.dtype()));
  if (std::isnan(ord)) throw Error(op, "ord must be a number, got nan");
  const std::vector<std::int64_t> reduced = detail::wrap_dims(dims, x.dim(), op);
  if (ord < 0 || ord == std::numeric_limits<double>::infinity())
    for (auto d : reduced)
      if (x.size(d) == 0)
        throw Error(op, "ord " + ord_str(ord) + " of an empty vector is not defined (shape " +
                            detail::shape_str(x.shape()) + ", reducing dim " + std::to_string(d) + ")");
  return detail::composite(op, {x}, [&] {
    if (ord < 0 && !std::isinf(ord)) return negative_p_norm(x, ord, dims, keepdim);
    return phasor::norm(x, ord, dims, keepdim);
  });
}

Tensor vecdot(const Tensor& x, const Tensor& y, std::int64_t dim) {
  const char* op = "linalg_vecdot";
  if (!x.defined() || !y.defined()) throw Error(op, std::string(x.defined() ? "y" : "x") + " is undefined");
  detail::check_same_device(x, y, op);
  const Shape shape = broadcast_shapes({x.shape(), y.shape()}, op);
  if (shape.empty())
    throw Error(op, "x and y must have at least one dim, got shapes " + detail::shape_str(x.shape()) + " and " +
                        detail::shape_str(y.shape()));
  detail::wrap_dim(dim, static_cast<std::int64_t>(shape.size()), op);
  return detail::composite(op, {x, y}, [&] { return sum(conj(x) * y, {dim}); });
}

}  // namespace linalg
}  // namespace phasor
