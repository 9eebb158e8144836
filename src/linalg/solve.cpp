// src/linalg/solve.cpp - linear systems and determinants through an LU factorization with partial pivoting
// (LAPACK's ?getrf / ?getrs from OpenBLAS on the host, cuBLAS / cuSOLVER on a GPU): linalg::solve and
// linalg::slogdet are the primitives; linalg::inv (a solve against the identity) and linalg::det (sign *
// exp(logabsdet)) are made of them. linalg::cholesky (?potrf) and linalg::solve_triangular (?trtrs, cuBLAS's
// trsm) share the paths.
//
// Note [LU on the host]
// On the CPU (and a virtual CPU device, copied to the host and back) LAPACK factors each batch element once per
// call; batch dims broadcast (torch.linalg's rules) before the primitive, so the gradients of broadcast operands
// are summed by broadcast_to's own. The gradients are written with the ops themselves (solve, matmul, conj), so
// they run on the input's device and differentiate again:
//   X = solve(A, B):  gB = solve(A^H, G),  gA = -gB X^H;
//   (s, l) = slogdet(A):  gA = (g_l + i Im(conj(s) g_s)) A^{-H}   (for real A the sign has no gradient);
//   X = solve_triangular(A, B):  gB = solve_triangular(A^H, G),  gA = -gB X^H on A's triangle;
//   L = cholesky(A):  gA = L^{-H} Phi(L^H gL) L^{-1}, made Hermitian (Phi: lower triangle, diagonal halved).
// A singular matrix (a zero pivot of U) is refused by solve and inv, naming the batch element; slogdet gives
// sign 0 and logabsdet -inf there, and refuses its gradient.
//
// Note [LU on the device]
// A matrix on a GPU is factored there (src/linalg/cusolver_solve.cpp), read column-major as on the host: each
// row-major A is A^T column-major, whose LU factors have A's determinant and solve A's systems with getrs's
// 'T'; a triangular solve runs from the right on the rows of B (X^T A^T = B^T: no transposed copies); the
// Cholesky factor is potrf's upper one of A^T. A failure (a zero pivot, a leading minor that is not positive, a
// zero on a triangular diagonal) is the libraries' info flags, or the diagonal's zeros, tested by
// check_device_value: eagerly the host waits for that flag and throws before the solve, as on the CPU and with
// the same message; in a CUDA graph capture or with deferred checks the test is queued and a later
// synchronization reports it (Note [deferred device checks]), the results then holding inf or NaN. slogdet
// reads U's diagonal and the pivots' parity with tensor ops on the device.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/cusolver_solve.hpp"
#include "linalg/lapack.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info);
void strtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const float* a,
             const int* lda, float* b, const int* ldb, int* info);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const double* a,
             const int* lda, double* b, const int* ldb, int* info);
void ctrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
             const std::complex<float>* a, const int* lda, std::complex<float>* b, const int* ldb, int* info);
void ztrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
             const std::complex<double>* a, const int* lda, std::complex<double>* b, const int* ldb, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv, float* b,
             const int* ldb, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<float>* a, const int* lda,
             const int* ipiv, std::complex<float>* b, const int* ldb, int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<double>* a, const int* lda,
             const int* ipiv, std::complex<double>* b, const int* ldb, int* info);
}

namespace phasor {
namespace linalg {
namespace {

using G = std::vector<Tensor>;
using In = detail::TensorList;
using namespace internal;

/// The LU factors (with partial pivoting) of an m x n column-major matrix in place.
template <class T>
void getrf(int m, int n, T* a, int* p, int* info) {
  const int lda = std::max(m, 1);
  if constexpr (std::is_same_v<T, float>) sgetrf_(&m, &n, a, &lda, p, info);
  else if constexpr (std::is_same_v<T, double>) dgetrf_(&m, &n, a, &lda, p, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) cgetrf_(&m, &n, a, &lda, p, info);
  else zgetrf_(&m, &n, a, &lda, p, info);
}
/// The Cholesky factor of a Hermitian positive-definite matrix in place: LAPACK's upper factor U (A^T = U^H U,
/// column-major), which read row-major is the lower L with A = L L^H.
template <class T>
void potrf(int n, T* a, int* info) {
  const char u = 'U';
  if constexpr (std::is_same_v<T, float>) spotrf_(&u, &n, a, &n, info);
  else if constexpr (std::is_same_v<T, double>) dpotrf_(&u, &n, a, &n, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) cpotrf_(&u, &n, a, &n, info);
  else zpotrf_(&u, &n, a, &n, info);
}

/// Solves A X = B for a triangular A given row-major (LAPACK reads A^T, whose triangle is the other one: trans 'T'),
/// B and X column-major.
template <class T>
void trtrs(bool upper, bool unit, int n, int k, const T* a, T* b, int* info) {
  const char uplo = upper ? 'L' : 'U', trans = 'T', diag = unit ? 'U' : 'N';
  if constexpr (std::is_same_v<T, float>) strtrs_(&uplo, &trans, &diag, &n, &k, a, &n, b, &n, info);
  else if constexpr (std::is_same_v<T, double>) dtrtrs_(&uplo, &trans, &diag, &n, &k, a, &n, b, &n, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) ctrtrs_(&uplo, &trans, &diag, &n, &k, a, &n, b, &n, info);
  else ztrtrs_(&uplo, &trans, &diag, &n, &k, a, &n, b, &n, info);
}

/// Solves op(M) X = B from getrf's factors of M (trans 'N': M, 'T': M^T, 'C': M^H), B and X column-major.
template <class T>
void getrs(char t, int n, int k, const T* a, const int* p, T* b, int* info) {
  if constexpr (std::is_same_v<T, float>) sgetrs_(&t, &n, &k, a, &n, p, b, &n, info);
  else if constexpr (std::is_same_v<T, double>) dgetrs_(&t, &n, &k, a, &n, p, b, &n, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) cgetrs_(&t, &n, &k, a, &n, p, b, &n, info);
  else zgetrs_(&t, &n, &k, a, &n, p, b, &n, info);
}

/// B (..., n, k) on the host as column-major n x k matrices of its own, one per batch element (LAPACK solves in
/// place).
Tensor host_columns(const Tensor& b) {
  return own_contiguous(b.to(Device::cpu()).reshape({detail::shape_numel(batch_of(b)), b.size(-2), b.size(-1)}).transpose(1, 2));
}

/// The solved columns of host_columns(b) back in b's shape, on `device`.
Tensor from_host_columns(const Tensor& x, const Tensor& b, Device device) {
  return x.transpose(1, 2).contiguous().reshape(b.shape()).to(device);
}

/// The LU factors of a batch of square matrices on the host (Note [LU on the host]).
struct LU {
  Tensor factors;           ///< (batch, n, n) contiguous: the factors of each A^T (A row-major is A^T column-major)
  std::vector<int> pivots;  ///< n per matrix, 1-based (LAPACK's)
  std::int64_t batch = 0, n = 0;
  std::int64_t singular = -1;  ///< the first batch element with a zero pivot, or -1
  std::vector<std::int64_t> info;  ///< per matrix: 0, or j > 0 where U(j, j) is zero (LAPACK's info)
};

/// Factors every matrix of a (..., n, n) tensor (any device, a floating or complex dtype).
LU lu_factor(const Tensor& a) {
  LU f;
  f.n = a.size(-1);
  f.batch = detail::shape_numel(batch_of(a));
  if (f.n > std::numeric_limits<int>::max()) throw Error("linalg", "matrices of order " + std::to_string(f.n) + " are too large for LAPACK");
  // LAPACK reads the row-major matrices column-major: it factors each A^T, which has A's determinant and, with
  // getrs's trans 'T', solves A's systems (no transposed copy)
  f.factors = own_contiguous(a.to(Device::cpu()).reshape({f.batch, f.n, f.n}));
  f.pivots.assign(static_cast<std::size_t>(f.batch * f.n), 0);
  f.info.assign(static_cast<std::size_t>(f.batch), 0);
  const int n = static_cast<int>(f.n);
  visit_lapack(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* base = f.factors.template data<T>();
    for (std::int64_t b = 0; b < f.batch && n > 0; ++b) {
      int info = 0;
      getrf(n, n, base + b * f.n * f.n, f.pivots.data() + b * f.n, &info);
      if (info < 0) throw Error("linalg", "LAPACK getrf rejected argument " + std::to_string(-info));
      f.info[static_cast<std::size_t>(b)] = info;
      if (info > 0 && f.singular < 0) f.singular = b;
    }
  });
  return f;
}

/// The error of a zero pivot of U in `which` matrix.
std::string zero_pivot(const std::string& which) { return which + " is singular: its LU factorization has a zero pivot"; }
/// The error of a zero at diagonal element j of a triangular matrix.
std::string zero_diagonal(const std::string& which, std::int64_t j) {
  return which + " is singular: its diagonal element " + std::to_string(j) + " is zero";
}
/// The error of a leading minor of order j that is not positive.
std::string not_positive_definite(const std::string& which, std::int64_t j) {
  return which + " is not positive-definite: its leading minor of order " + std::to_string(j) + " is not positive";
}

/// The LU factors of a batch of square matrices on a GPU (Note [LU on the device]).
struct DeviceLU {
  Tensor factors;  ///< (batch, n, n) contiguous: the factors of each A^T
  Tensor pivots;   ///< an int32_buffer of n pivots per matrix, 1-based
  Tensor info;     ///< int64 (batch): j > 0 where U(j, j) is zero
  std::int64_t batch = 0, n = 0;
};

/// Factors every matrix of a (..., n, n) tensor on a GPU.
DeviceLU device_lu(const Tensor& a, const char* op) {
  DeviceLU f;
  f.n = a.size(-1);
  f.batch = detail::shape_numel(batch_of(a));
  f.factors = own_contiguous(a.reshape({f.batch, f.n, f.n}));
  f.pivots = detail::int32_buffer(f.batch * f.n, a.device());
  const Tensor info = detail::int32_buffer(f.batch, a.device());
  detail::cuda_getrf(op, a.dtype(), a.device().index, f.n, f.n, f.batch, f.factors.data_ptr(), detail::int32_data(f.pivots),
                     detail::int32_data(info));
  f.info = detail::widen_int32(info, {f.batch});
  return f;
}

/// X with A X = B on a GPU, batch shapes equal; with `info_out`, A's info flags there instead of the check.
Tensor device_solve(const Tensor& a, const Tensor& b, Tensor* info_out) {
  const DeviceLU f = device_lu(a, "linalg_solve");
  if (info_out) *info_out = f.info.reshape(batch_of(a));
  else check_info("linalg_solve", f.info, batch_of(a), [](const std::string& which, std::int64_t) { return zero_pivot(which); });
  const std::int64_t k = b.size(-1);
  Tensor x = own_contiguous(b.reshape({f.batch, f.n, k}).transpose(1, 2));  // each B column-major
  detail::cuda_getrs("linalg_solve", a.dtype(), a.device().index, true, f.n, k, f.batch, f.factors.data_ptr(),
                     detail::int32_data(f.pivots), x.data_ptr());
  return x.transpose(1, 2).contiguous().reshape(b.shape());
}

/// (sign, logabsdet) of A on a GPU: U's diagonal and the pivots' parity.
std::vector<Tensor> device_slogdet(const Tensor& a) {
  const DeviceLU f = device_lu(a, "linalg_slogdet");
  const Shape batch = batch_of(a);
  const Tensor u = phasor::diagonal(f.factors, 0, -2, -1);  // (batch, n): det A^T = det A
  const Tensor moved = detail::widen_int32(f.pivots, {f.batch, f.n}) != arange(1, f.n + 1, 1, Dtype::Int64, a.device());
  const Tensor flip = 1 - 2 * remainder(moved.sum({-1}), 2);  // (-1)^(rows swapped)
  // a singular matrix gets sign 0 and -inf whatever the library left past its zero pivot (LAPACK leaves that
  // part finite; the GPU libraries do not promise to)
  const Tensor singular = f.info > 0;
  const Tensor sign = where(singular, 0.0, u.sign().prod({-1}) * flip.to(a.dtype()));
  const Tensor logabs = where(singular, -std::numeric_limits<double>::infinity(), log(abs(u)).sum({-1}));
  return {sign.reshape(batch), logabs.reshape(batch)};
}

/// X with A X = B for a triangular A on a GPU, batch shapes equal.
Tensor device_triangular(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  const char* op = "linalg_solve_triangular";
  const Shape batch = batch_of(a);
  const std::int64_t n = a.size(-1), k = b.size(-1), count = detail::shape_numel(batch);
  if (!unit && count * n > 0) {
    const Tensor bad = phasor::diagonal(a, 0, -2, -1).reshape({count * n}) == 0;
    detail::check_device_value(
        op, bad.any(), [&] { return std::pair<Tensor, Tensor>{detail::first_where(arange(count * n, Dtype::Int64, a.device()), bad), Tensor()}; },
        [batch, n](double at, double) {
          const auto i = static_cast<std::int64_t>(at);
          return zero_diagonal(which_matrix(batch, i / n), i % n);
        });
  }
  // row-major A and B are A^T and B^T column-major: X^T A^T = B^T, A^T triangular the other way
  const Tensor ac = a.reshape({count, n, n}).contiguous();
  Tensor x = own_contiguous(b.reshape({count, n, k}));
  detail::cuda_trsm_right(op, a.dtype(), a.device().index, upper, unit, k, n, count, ac.data_ptr(), x.data_ptr());
  return x.reshape(b.shape());
}

/// The Cholesky factor L of A on a GPU; with `info_out`, the info flags there instead of the check.
Tensor device_cholesky(const Tensor& a, Tensor* info_out) {
  const char* op = "linalg_cholesky";
  const Shape batch = batch_of(a);
  const std::int64_t n = a.size(-1), count = detail::shape_numel(batch);
  // tril(A) row-major is A^T's upper triangle column-major; potrf's upper factor of A^T read row-major is L
  Tensor l = tril(a).reshape({count, n, n}).contiguous();
  const Tensor info = detail::int32_buffer(count, a.device());
  detail::cuda_potrf(op, a.dtype(), a.device().index, true, n, count, l.data_ptr(), detail::int32_data(info));
  const Tensor flags = detail::widen_int32(info, {count});
  if (info_out) *info_out = flags.reshape(batch);
  else check_info(op, flags, batch, not_positive_definite);
  return l.reshape(a.shape());
}

void check_square(const Tensor& a, const char* op) { check_matrix(a, op, true); }

/// Throws unless B is defined and on A's device.
void check_rhs(const Tensor& a, const Tensor& b, const char* op) {
  if (!b.defined()) throw Error(op, "B is undefined");
  detail::check_same_device(a, b, op);
}

/// A and B broadcast to their common batch dims, in their promoted dtype: the primitives take equal batch shapes,
/// and broadcast_to's gradient sums what was broadcast.
std::pair<Tensor, Tensor> common_batch(const Tensor& a, const Tensor& b, const char* op) {
  const Shape batch = broadcast_shapes({batch_of(a), batch_of(b)}, op);
  const Dtype dt = promote_types(a.dtype(), b.dtype());
  Shape as = batch, bs = batch;
  as.insert(as.end(), {a.size(-2), a.size(-1)});
  bs.insert(bs.end(), {b.size(-2), b.size(-1)});
  return {a.to(dt).broadcast_to(as), b.to(dt).broadcast_to(bs)};
}

/// The gradient of A in A X = B given B's gradient gb: -gb X^H.
Tensor solve_grad_a(const Tensor& gb, const Tensor& x) { return -matmul(gb, adjoint(x)); }

/// X with A X = B for A (..., n, n) and B (..., n, k), batch shapes equal: the primitive. A singular A is an error,
/// or, with `info_out`, flagged there (int64 of A's batch shape: LAPACK's info; the primitive's second output), X
/// then holding inf or NaN.
Tensor solve_primitive(const Tensor& a, const Tensor& b, Tensor* info_out = nullptr) {
  const bool with_info = info_out != nullptr;
  G out = detail::apply_op_n(
      "linalg_solve", {a, b}, detail::kSaveInputs | detail::kSaveOutputs,
      [with_info](In in) {
        Tensor info;
        if (in[0].device().is_cuda()) {
          Tensor x = device_solve(in[0], in[1], with_info ? &info : nullptr);
          return with_info ? G{x, info} : G{x};
        }
        const LU f = lu_factor(in[0]);
        if (with_info) info = from_vector(f.info, batch_of(in[0]), in[0].device());
        else if (f.singular >= 0)
          throw Error("linalg_solve", zero_pivot(which_matrix(batch_of(in[0]), f.singular)));
        const std::int64_t k = in[1].size(-1);
        Tensor x = host_columns(in[1]);
        visit_lapack(in[0].dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* lu = f.factors.template data<T>();
          T* xs = x.template data<T>();
          for (std::int64_t i = 0; i < f.batch && f.n > 0 && k > 0; ++i) {
            int info = 0;
            // with A^T's factors, trans 'T' solves A's systems
            getrs('T', static_cast<int>(f.n), static_cast<int>(k), lu + i * f.n * f.n, f.pivots.data() + i * f.n, xs + i * f.n * k, &info);
            if (info != 0) throw Error("linalg_solve", "LAPACK getrs rejected argument " + std::to_string(-info));
          }
        });
        Tensor xd = from_host_columns(x, in[1], in[0].device());
        return with_info ? G{xd, info} : G{xd};
      },
      [](const detail::Ctx& c, const G& g) {
        const Tensor gb = solve_primitive(adjoint(c.input(0)), g[0]);
        return G{c.needs_grad(0) ? solve_grad_a(gb, c.output(0)) : Tensor(), gb};
      });
  if (with_info) *info_out = out[1];
  return out[0];
}

/// (sign, logabsdet) of A (..., n, n): the primitive.
std::vector<Tensor> slogdet_primitive(const Tensor& a) {
  return detail::apply_op_n(
      "linalg_slogdet", {a}, detail::kSaveInputs | detail::kSaveOutputs,
      [](In in) {
        if (in[0].device().is_cuda()) return device_slogdet(in[0]);
        const LU f = lu_factor(in[0]);
        Tensor sign = detail::make_tensor(batch_of(in[0]), in[0].dtype(), Device::cpu());
        Tensor logabs = detail::make_tensor(batch_of(in[0]), to_real(in[0].dtype()), Device::cpu());
        visit_lapack(in[0].dtype(), [&](auto tag) {
          using T = decltype(tag);
          using R = decltype(std::abs(T{}));
          const T* lu = f.factors.template data<T>();
          T* s = sign.template data<T>();
          R* l = logabs.template data<R>();
          for (std::int64_t i = 0; i < f.batch; ++i) {
            // |det| as a double mantissa times a power of two (no overflow, one log per matrix)
            T si = T(1);
            double mant = 1;
            long exp2 = 0;
            for (std::int64_t j = 0; j < f.n && mant != 0; ++j) {
              const T u = lu[i * f.n * f.n + j * f.n + j];  // U's diagonal: det A^T = det A
              const R m = std::abs(u);
              if (m == R(0)) {
                si = T(0), mant = 0;
                break;
              }
              if constexpr (std::is_floating_point_v<T>) si = u < 0 ? -si : si;
              else si *= u / m;
              if (f.pivots[static_cast<std::size_t>(i * f.n + j)] != j + 1) si = -si;
              int e = 0;
              mant = std::frexp(mant * static_cast<double>(m), &e);
              exp2 += e;
            }
            s[i] = si;
            l[i] = mant == 0 ? -std::numeric_limits<R>::infinity()
                             : static_cast<R>(std::log(mant) + static_cast<double>(exp2) * 0.69314718055994530942);
          }
        });
        return G{sign.to(in[0].device()), logabs.to(in[0].device())};
      },
      [](const detail::Ctx& c, const G& g) {
        const Tensor a = c.input(0), sign = c.output(0);
        {
          NoGradGuard ng;
          if ((sign == 0.0).any().item<bool>())
            throw Error("linalg_slogdet", "the gradient at a singular matrix (sign 0, logabsdet -inf) is not supported");
        }
        Tensor gy = g[1].defined() ? g[1] : zeros(c.output(1).shape(), to_real(a.dtype()), a.device());
        if (a.is_complex()) {
          gy = gy.to(a.dtype());
          if (g[0].defined()) gy = gy + imag(conj(sign) * g[0]) * std::complex<double>(0, 1);
        }
        // (gy A^{-H}) per matrix: solve(A^H, diag(gy)) = A^{-H} gy
        const std::int64_t n = a.size(-1);
        const Tensor id = eye(n, std::nullopt, a.dtype(), a.device());
        return G{solve_primitive(adjoint(a), id * gy.unsqueeze(-1).unsqueeze(-1))};
      });
}

/// X with A X = B for A (..., n, n) triangular (only its `upper` or lower triangle read; a unit diagonal assumed
/// when `unit`) and B (..., n, k), batch shapes equal: the primitive.
Tensor triangular_primitive(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  return detail::apply_op(
      "linalg_solve_triangular", {a, b}, detail::kSaveInputs | detail::kSaveOutputs,
      [upper, unit](In in) {
        if (in[0].device().is_cuda()) return device_triangular(in[0], in[1], upper, unit);
        const Shape batch = batch_of(in[0]);
        const std::int64_t n = in[0].size(-1), k = in[1].size(-1), count = detail::shape_numel(batch);
        const Tensor ah = in[0].to(Device::cpu()).contiguous();
        Tensor x = host_columns(in[1]);
        visit_lapack(in[0].dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* as = ah.template data<T>();
          T* xs = x.template data<T>();
          for (std::int64_t i = 0; i < count && n > 0 && k > 0; ++i) {
            int info = 0;
            trtrs(upper, unit, static_cast<int>(n), static_cast<int>(k), as + i * n * n, xs + i * n * k, &info);
            if (info > 0)
              throw Error("linalg_solve_triangular", zero_diagonal(which_matrix(batch, i), info - 1));
            if (info < 0) throw Error("linalg_solve_triangular", "LAPACK trtrs rejected argument " + std::to_string(-info));
          }
        });
        return from_host_columns(x, in[1], in[0].device());
      },
      [upper, unit](const detail::Ctx& c, const G& g) {
        const Tensor gb = triangular_primitive(adjoint(c.input(0)), g[0], !upper, unit);
        Tensor ga;
        if (c.needs_grad(0)) {
          const Tensor full = solve_grad_a(gb, c.output(0));
          ga = upper ? triu(full, unit ? 1 : 0) : tril(full, unit ? -1 : 0);  // only the triangle read counts
        }
        return G{ga, gb};
      });
}

/// L with A = L L^H for A (..., n, n) Hermitian positive-definite (its lower triangle read): the primitive. A
/// matrix that is not positive-definite is an error, or, with `info_out`, flagged there (int64 of A's batch shape:
/// the order of the first leading minor that is not positive; the primitive's second output), its L then partial.
Tensor cholesky_primitive(const Tensor& a, Tensor* info_out = nullptr) {
  const bool with_info = info_out != nullptr;
  G out = detail::apply_op_n(
      "linalg_cholesky", {a}, detail::kSaveOutputs,
      [with_info](In in) {
        if (in[0].device().is_cuda()) {
          Tensor info;
          Tensor l = device_cholesky(in[0], with_info ? &info : nullptr);
          return with_info ? G{l, info} : G{l};
        }
        const Shape batch = batch_of(in[0]);
        const std::int64_t n = in[0].size(-1), count = detail::shape_numel(batch);
        // A row-major read column-major is A^T: LAPACK's upper factor of A^T, read row-major, is L (tril of A read)
        Tensor l = own_contiguous(tril(in[0].to(Device::cpu())).reshape({count, n, n}));
        std::vector<std::int64_t> flags(static_cast<std::size_t>(count), 0);
        visit_lapack(in[0].dtype(), [&](auto tag) {
          using T = decltype(tag);
          T* base = l.template data<T>();
          for (std::int64_t i = 0; i < count && n > 0; ++i) {
            int info = 0;
            potrf(static_cast<int>(n), base + i * n * n, &info);
            if (info > 0 && !with_info)
              throw Error("linalg_cholesky", not_positive_definite(which_matrix(batch, i), info));
            if (info < 0) throw Error("linalg_cholesky", "LAPACK potrf rejected argument " + std::to_string(-info));
            flags[static_cast<std::size_t>(i)] = info;
          }
        });
        Tensor ld = l.reshape(in[0].shape()).to(in[0].device());
        return with_info ? G{ld, from_vector(flags, batch, in[0].device())} : G{ld};
      },
      [](const detail::Ctx& c, const G& g) {
        // gA = L^{-H} Phi(L^H gL) L^{-1}, made Hermitian (Phi: the lower triangle, its diagonal halved), with the
        // ops themselves (so it differentiates again)
        const Tensor l = c.output(0), lh = adjoint(l);
        const std::int64_t n = l.size(-1);
        const Tensor half = tril(ones({n, n}, to_real(l.dtype()), l.device()), -1) + eye(n, std::nullopt, to_real(l.dtype()), l.device()) * 0.5;
        const Tensor phi = matmul(lh, g[0]) * half;
        const Tensor left = triangular_primitive(lh, phi, true, false);                    // L^{-H} Phi
        const Tensor ga = adjoint(triangular_primitive(lh, adjoint(left), true, false));  // (L^{-H} left^H)^H
        return G{(ga + adjoint(ga)) * 0.5};
      });
  if (with_info) *info_out = out[1];
  return out[0];
}

}  // namespace

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg_solve_triangular";
  check_square(a, op);
  check_rhs(a, b, op);
  if (b.dim() < 2)
    throw Error(op, "B must be a batch of matrices (..., n, k), got shape " + detail::shape_str(b.shape()));
  const std::int64_t n = a.size(-1);
  if (b.size(left ? -2 : -1) != n)
    throw Error(op, "B of shape " + detail::shape_str(b.shape()) + " does not match A of shape " + detail::shape_str(a.shape()) +
                        (left ? " (B must be (..., " + std::to_string(n) + ", k))" : " (B must be (..., k, " + std::to_string(n) + ") with left = false)"));
  return detail::composite(op, {a, b}, [&] {
    const auto [ab, bb] = common_batch(a, b, op);
    if (left) return triangular_primitive(ab, bb, upper, unitriangular);
    // X A = B is A^T X^T = B^T, A^T triangular the other way
    return triangular_primitive(ab.transpose(-1, -2), bb.transpose(-1, -2), !upper, unitriangular).transpose(-1, -2);
  });
}

Tensor cholesky(const Tensor& a, bool upper) {
  check_square(a, "linalg_cholesky");
  // the upper factor of A is L^H for the lower factor L of A^H, whose lower triangle is A's upper one
  return upper ? adjoint(cholesky_primitive(adjoint(a))) : cholesky_primitive(a);
}

std::pair<Tensor, Tensor> cholesky_ex(const Tensor& a, bool upper) {
  check_square(a, "linalg_cholesky_ex");
  Tensor info;
  Tensor l = upper ? adjoint(cholesky_primitive(adjoint(a), &info)) : cholesky_primitive(a, &info);
  return {l, info};
}

namespace {

/// solve (info_out null) and solve_ex (info_out set): the checks of A and B, and their broadcast; X A = B when !left
/// is A^T X^T = B^T (a vector B then a row).
Tensor solve_checked(const Tensor& a, const Tensor& b, bool left, const char* op, Tensor* info_out) {
  check_square(a, op);
  check_rhs(a, b, op);
  const std::int64_t n = a.size(-1);
  // B is a vector (or a batch of them) when 1-D, or when its shape is A's without the last dim (torch's rule)
  const bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && Shape(a.shape().begin(), a.shape().end() - 1) == b.shape());
  const Tensor bm = vector ? b.unsqueeze(-1) : left ? b : b.transpose(-1, -2);
  if (bm.dim() < 2 || bm.size(-2) != n)
    throw Error(op, "B of shape " + detail::shape_str(b.shape()) + " does not match A of shape " + detail::shape_str(a.shape()) +
                        (left ? " (B must be (..., " + std::to_string(n) + ", k) or (..., " + std::to_string(n) + "))"
                              : " (B must be (..., k, " + std::to_string(n) + ") or (..., " + std::to_string(n) + ") with left = false)"));
  return detail::composite(op, {a, b}, [&] {
    const auto [ab, bb] = common_batch(left ? a : a.transpose(-1, -2), bm, op);
    const Tensor x = solve_primitive(ab, bb, info_out);
    return vector ? x.squeeze(-1) : left ? x : x.transpose(-1, -2);
  });
}

}  // namespace

Tensor solve(const Tensor& a, const Tensor& b, bool left) { return solve_checked(a, b, left, "linalg_solve", nullptr); }

std::pair<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left) {
  Tensor info;
  Tensor x = solve_checked(a, b, left, "linalg_solve_ex", &info);
  return {x, info};
}

Tensor inv(const Tensor& a) {
  check_square(a, "linalg_inv");
  return detail::composite("linalg_inv", {a}, [&] {
    const std::int64_t n = a.size(-1);
    return solve_primitive(a, eye(n, std::nullopt, a.dtype(), a.device()).expand(a.shape()));
  });
}

std::pair<Tensor, Tensor> inv_ex(const Tensor& a) {
  check_square(a, "linalg_inv_ex");
  Tensor info;
  Tensor x = detail::composite("linalg_inv_ex", {a}, [&] {
    const std::int64_t n = a.size(-1);
    return solve_primitive(a, eye(n, std::nullopt, a.dtype(), a.device()).expand(a.shape()), &info);
  });
  return {x, info};
}

std::pair<Tensor, Tensor> slogdet(const Tensor& a) {
  check_square(a, "linalg_slogdet");
  auto r = slogdet_primitive(a);
  return {r[0], r[1]};
}

Tensor det(const Tensor& a) {
  check_square(a, "linalg_det");
  return detail::composite("linalg_det", {a}, [&] {
    const auto r = slogdet_primitive(a);
    return r[0] * r[1].exp();
  });
}

namespace internal {

Tensor own_contiguous(const Tensor& t) {
  Tensor c = t.contiguous();
  return c.data_ptr() == t.data_ptr() ? c.clone() : c;
}

Shape batch_of(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

Tensor adjoint(const Tensor& t) { return t.transpose(-1, -2).conj(); }

std::string which_matrix(const Shape& batch, std::int64_t k) {
  if (batch.empty()) return "the matrix";
  std::string s = "the matrix at batch index (";
  std::vector<std::int64_t> at(batch.size());
  for (std::size_t d = batch.size(); d-- > 0;) at[d] = k % batch[d], k /= batch[d];
  for (std::size_t d = 0; d < at.size(); ++d) s += (d ? ", " : "") + std::to_string(at[d]);
  return s + (at.size() == 1 ? ",)" : ")");
}

void check_info(const char* op, const Tensor& info, const Shape& batch,
                std::string (*message)(const std::string&, std::int64_t)) {
  if (info.numel() == 0) return;
  const Tensor bad = info > 0;
  detail::check_device_value(
      op, bad.any(),
      [&] {
        return std::pair<Tensor, Tensor>{detail::first_where(arange(info.numel(), Dtype::Int64, info.device()), bad), detail::first_where(info, bad)};
      },
      [batch, message](double k, double v) {
        return message(which_matrix(batch, static_cast<std::int64_t>(k)), static_cast<std::int64_t>(v));
      });
}

Tensor column_major_copy(const Tensor& a) {
  const Tensor h = a.device().is_cuda() ? a : a.to(Device::cpu());
  return own_contiguous(h.reshape({detail::shape_numel(batch_of(a)), a.size(-2), a.size(-1)}).transpose(1, 2));
}

void host_getrf(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t batch, void* a, int* pivots, int* info) {
  if (m > std::numeric_limits<int>::max() || n > std::numeric_limits<int>::max())
    throw Error("linalg", "matrices of " + std::to_string(m) + " x " + std::to_string(n) + " are too large for LAPACK");
  const std::int64_t k = std::min(m, n);
  visit_lapack(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* base = static_cast<T*>(a);
    for (std::int64_t b = 0; b < batch && k > 0; ++b) {
      getrf(static_cast<int>(m), static_cast<int>(n), base + b * m * n, pivots + b * k, info + b);
      if (info[b] < 0) throw Error("linalg", "LAPACK getrf rejected argument " + std::to_string(-info[b]));
    }
  });
}

void host_getrs(Dtype dtype, char trans, std::int64_t n, std::int64_t k, std::int64_t batch, const void* lu,
                const int* pivots, void* b) {
  visit_lapack(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (std::int64_t i = 0; i < batch && n > 0 && k > 0; ++i) {
      int info = 0;
      getrs(trans, static_cast<int>(n), static_cast<int>(k), static_cast<const T*>(lu) + i * n * n, pivots + i * n,
            static_cast<T*>(b) + i * n * k, &info);
      if (info != 0) throw Error("linalg", "LAPACK getrs rejected argument " + std::to_string(-info));
    }
  });
}

void check_matrix(const Tensor& a, const char* op, bool square) {
  if (!a.defined()) throw Error(op, "A is undefined");
  if (a.dim() < 2 || (square && a.size(-1) != a.size(-2)))
    throw Error(op, std::string("A must be a batch of ") + (square ? "square matrices (..., n, n)" : "matrices (..., m, n)") +
                        ", got shape " + detail::shape_str(a.shape()));
  if (!is_floating_or_complex(a.dtype()))
    throw Error(op, std::string("A must be a floating or complex tensor, got ") + dtype_name(a.dtype()));
  if (std::max(a.size(-1), a.size(-2)) > std::numeric_limits<int>::max())
    throw Error(op, "matrices of shape " + detail::shape_str(a.shape()) + " exceed LAPACK's and cuSOLVER's int index range");
}

}  // namespace internal

}  // namespace linalg
}  // namespace phasor
