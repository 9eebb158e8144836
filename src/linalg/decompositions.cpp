// src/linalg/decompositions.cpp - QR, the Hermitian eigendecomposition, the SVD and the general eigendecomposition
// (the primitives: linalg::qr, linalg::eigh, linalg::svd, linalg::eig), and what is made of them: eigvalsh, svdvals,
// eigvals, lstsq, pinv, matrix_rank, matrix_norm, cond.
//
// Note [decompositions on every device]
// Each primitive copies A once into a batch of column-major matrices of its own (A's transpose made contiguous)
// and hands them to one call per device with the same arguments: LAPACK from OpenBLAS on the host (?geqrf +
// ?orgqr/?ungqr, ?syevd/?heevd, ?gesdd), cuSOLVER on a GPU (src/linalg/cusolver_decomp.cpp: geqrf + orgqr,
// syevd, gesvdj), so the code around them (shapes, empty matrices, the results' layout, convergence checks) is
// written once. (eig, of general matrices, is LAPACK's ?geev for every device: a GPU's A is copied to the host and
// its results back.) A GPU's tensors stay there and nothing waits for the host except the eager convergence check
// (check_info, as solve's: deferred or captured it is reported by a later synchronization). The results are
// read back from the column-major buffers as views: a column-major m x n matrix is its transpose row-major.
//
// The gradients are written with public ops (matmul, solve_triangular, elementwise), so they run on A's device
// and differentiate again. With k = min(m, n), E_ij = s_j^2 - s_i^2 (SVD) or w_j - w_i (eigh), F = 1/E off the
// diagonal and 0 on it:
//   A = Q R, m >= n:  M = R gR^H - gQ^H Q,  gA = (gQ + Q copyltu(M)) R^{-H},  copyltu(M) = tril(M, -1) +
//     tril(M, -1)^H + Re diag(M) (R's diagonal is real, so Q's columns are unique up to sign); m < n: with
//     A = [X | Y], R = [U | V], X = Q U is square and Y = Q V: gY = Q gV, gX from the square case with
//     gQ + Y gV^H (complete Q with m > n is not unique: its gradient is refused);
//   A = V diag(w) V^H:  gA = V (diag(gw) + F o skew(V^H gV)) V^H, Hermitian (as torch's: a Hermitian perturbation);
//   A = U diag(s) V^H, reduced:  J = U^H gU, K = V^H gV,
//     gA = U (diag(gs) + (F o (J - J^H)) S + S (F o (K - K^H)) + i Im diag(J - K) / (2 S)) V^H
//          + (gU - U J) S^{-1} V^H + U S^{-1} (gV - V K)^H,
//     the last term of the middle bracket (complex only) the phase that U and V share; full matrices' extra
//     columns get no gradient (as torch's);
//   A V = V diag(L), general:  K = V^H gV,  gA = V^{-H} (diag(gL) + F^* o (K - V^H V diag(Re diag K))) V^H with
//     E_ij = l_j - l_i (the second term keeps the columns' unit norm).
#include <cmath>
#include <complex>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/blas.hpp"
#include "linalg/cusolver_decomp.hpp"
#include "linalg/cusolver_solve.hpp"
#include "linalg/lapack.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

using cf = std::complex<float>;
using cd = std::complex<double>;

extern "C" {
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork, int* info);
void cgeqrf_(const int* m, const int* n, cf* a, const int* lda, cf* tau, cf* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, cd* a, const int* lda, cd* tau, cd* work, const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, cf* a, const int* lda, const cf* tau, cf* work, const int* lwork,
             int* info);
void zungqr_(const int* m, const int* n, const int* k, cd* a, const int* lda, const cd* tau, cd* work, const int* lwork,
             int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, cf* a, const int* lda, float* w, cf* work,
             const int* lwork, float* rwork, const int* lrwork, int* iwork, const int* liwork, int* info);
void zheevd_(const char* jobz, const char* uplo, const int* n, cd* a, const int* lda, double* w, cd* work,
             const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info);
void cgesdd_(const char* jobz, const int* m, const int* n, cf* a, const int* lda, float* s, cf* u, const int* ldu,
             cf* vt, const int* ldvt, cf* work, const int* lwork, float* rwork, int* iwork, int* info);
void zgesdd_(const char* jobz, const int* m, const int* n, cd* a, const int* lda, double* s, cd* u, const int* ldu,
             cd* vt, const int* ldvt, cd* work, const int* lwork, double* rwork, int* iwork, int* info);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi, float* vl,
            const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, cf* a, const int* lda, cf* w, cf* vl, const int* ldvl,
            cf* vr, const int* ldvr, cf* work, const int* lwork, float* rwork, int* info);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, cd* a, const int* lda, cd* w, cd* vl, const int* ldvl,
            cd* vr, const int* ldvr, cd* work, const int* lwork, double* rwork, int* info);
#define PHASOR_GELS(p, T)                                                                                              \
  void p##gels_(const char* trans, const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b,             \
                const int* ldb, T* work, const int* lwork, int* info);
PHASOR_GELS(s, float)
PHASOR_GELS(d, double)
PHASOR_GELS(c, cf)
PHASOR_GELS(z, cd)
#undef PHASOR_GELS
void sgelsy_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, int* jpvt,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, int* jpvt,
             const double* rcond, int* rank, double* work, const int* lwork, int* info);
void cgelsy_(const int* m, const int* n, const int* nrhs, cf* a, const int* lda, cf* b, const int* ldb, int* jpvt,
             const float* rcond, int* rank, cf* work, const int* lwork, float* rwork, int* info);
void zgelsy_(const int* m, const int* n, const int* nrhs, cd* a, const int* lda, cd* b, const int* ldb, int* jpvt,
             const double* rcond, int* rank, cd* work, const int* lwork, double* rwork, int* info);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, double* s,
             const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void cgelsd_(const int* m, const int* n, const int* nrhs, cf* a, const int* lda, cf* b, const int* ldb, float* s,
             const float* rcond, int* rank, cf* work, const int* lwork, float* rwork, int* iwork, int* info);
void zgelsd_(const int* m, const int* n, const int* nrhs, cd* a, const int* lda, cd* b, const int* ldb, double* s,
             const double* rcond, int* rank, cd* work, const int* lwork, double* rwork, int* iwork, int* info);
void sgelss_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, double* s,
             const double* rcond, int* rank, double* work, const int* lwork, int* info);
void cgelss_(const int* m, const int* n, const int* nrhs, cf* a, const int* lda, cf* b, const int* ldb, float* s,
             const float* rcond, int* rank, cf* work, const int* lwork, float* rwork, int* info);
void zgelss_(const int* m, const int* n, const int* nrhs, cd* a, const int* lda, cd* b, const int* ldb, double* s,
             const double* rcond, int* rank, cd* work, const int* lwork, double* rwork, int* info);
}

namespace phasor {
namespace linalg {
namespace {

using G = std::vector<Tensor>;
using In = detail::TensorList;
using namespace internal;

// ---- LAPACK, one overload per element type ----------------------------------------------------------------------

void geqrf(int m, int n, float* a, float* tau, float* w, int lw, int* info) { sgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, double* a, double* tau, double* w, int lw, int* info) { dgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, cf* a, cf* tau, cf* w, int lw, int* info) { cgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, cd* a, cd* tau, cd* w, int lw, int* info) { zgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }

void orgqr(int m, int n, int k, float* a, const float* tau, float* w, int lw, int* info) { sorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, double* a, const double* tau, double* w, int lw, int* info) { dorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, cf* a, const cf* tau, cf* w, int lw, int* info) { cungqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, cd* a, const cd* tau, cd* w, int lw, int* info) { zungqr_(&m, &n, &k, a, &m, tau, w, &lw, info); }

// the real routines take no rwork
void evd(char jz, char ul, int n, float* a, float* w, float* wk, int lw, float*, int, int* iw, int liw, int* info) {
  ssyevd_(&jz, &ul, &n, a, &n, w, wk, &lw, iw, &liw, info);
}
void evd(char jz, char ul, int n, double* a, double* w, double* wk, int lw, double*, int, int* iw, int liw, int* info) {
  dsyevd_(&jz, &ul, &n, a, &n, w, wk, &lw, iw, &liw, info);
}
void evd(char jz, char ul, int n, cf* a, float* w, cf* wk, int lw, float* rw, int lrw, int* iw, int liw, int* info) {
  cheevd_(&jz, &ul, &n, a, &n, w, wk, &lw, rw, &lrw, iw, &liw, info);
}
void evd(char jz, char ul, int n, cd* a, double* w, cd* wk, int lw, double* rw, int lrw, int* iw, int liw, int* info) {
  zheevd_(&jz, &ul, &n, a, &n, w, wk, &lw, rw, &lrw, iw, &liw, info);
}

void gesdd(char jz, int m, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt, float* w, int lw, float*,
           int* iw, int* info) {
  sgesdd_(&jz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, iw, info);
}
void gesdd(char jz, int m, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt, double* w, int lw,
           double*, int* iw, int* info) {
  dgesdd_(&jz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, iw, info);
}
void gesdd(char jz, int m, int n, cf* a, float* s, cf* u, int ldu, cf* vt, int ldvt, cf* w, int lw, float* rw, int* iw,
           int* info) {
  cgesdd_(&jz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, rw, iw, info);
}
void gesdd(char jz, int m, int n, cd* a, double* s, cd* u, int ldu, cd* vt, int ldvt, cd* w, int lw, double* rw,
           int* iw, int* info) {
  zgesdd_(&jz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, rw, iw, info);
}

/// The least-squares drivers, one overload set per element type: driver 'g' gels, 'y' gelsy, 'd' gelsd, 's' gelss
/// (rwork unused by the real types, jpvt by all but gelsy, s and iwork by gels / gelsy).
template <class T, class R>
void gelsx(char driver, int m, int n, int k, T* a, T* b, int ldb, int* jpvt, R* s, R rcond, int* rank, T* w, int lw, R* rw,
           int* iw, int* info) {
  const char tr = 'N';
  const int lda = std::max(m, 1);
  if constexpr (std::is_same_v<T, float>) {
    if (driver == 'g') sgels_(&tr, &m, &n, &k, a, &lda, b, &ldb, w, &lw, info);
    else if (driver == 'y') sgelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw, info);
    else if (driver == 'd') sgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, iw, info);
    else sgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, info);
  } else if constexpr (std::is_same_v<T, double>) {
    if (driver == 'g') dgels_(&tr, &m, &n, &k, a, &lda, b, &ldb, w, &lw, info);
    else if (driver == 'y') dgelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw, info);
    else if (driver == 'd') dgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, iw, info);
    else dgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, info);
  } else if constexpr (std::is_same_v<T, cf>) {
    if (driver == 'g') cgels_(&tr, &m, &n, &k, a, &lda, b, &ldb, w, &lw, info);
    else if (driver == 'y') cgelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw, rw, info);
    else if (driver == 'd') cgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw, iw, info);
    else cgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw, info);
  } else {
    if (driver == 'g') zgels_(&tr, &m, &n, &k, a, &lda, b, &ldb, w, &lw, info);
    else if (driver == 'y') zgelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rcond, rank, w, &lw, rw, info);
    else if (driver == 'd') zgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw, iw, info);
    else zgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, w, &lw, rw, info);
  }
}

/// A workspace size LAPACK returned from a query (the real part of its first element).
template <class T>
int query_size(const T& v) {
  return std::max(1, static_cast<int>(std::real(v)));
}

/// Runs f(i) for the `batch` matrices of `work` multiply-adds each, over OpenMP threads when they are many and small
/// (as batched gemm: Note [batched gemm threading]); the first LAPACK argument error is thrown afterwards.
template <class F>
void for_each_matrix(const char* routine, std::int64_t batch, std::int64_t work, F&& f) {
  std::vector<int> bad(static_cast<std::size_t>(batch), 0);
  detail::gemm_loop(detail::batched_gemm_threads(work, batch), batch, [&](std::int64_t i) { bad[static_cast<std::size_t>(i)] = f(i); });
  for (int b : bad)
    if (b < 0) throw Error("linalg", std::string("LAPACK ") + routine + " rejected argument " + std::to_string(-b));
}

/// The host's cuda_geqrf (same arguments, host memory).
template <class T>
void host_geqrf(std::int64_t m, std::int64_t n, std::int64_t batch, T* a, T* tau) {
  const int M = static_cast<int>(m), N = static_cast<int>(n), k = static_cast<int>(std::min(m, n));
  T q{};
  int info = 0;
  geqrf(M, N, a, tau, &q, -1, &info);
  const int lw = query_size(q);
  for_each_matrix("geqrf", batch, m * n * k, [&](std::int64_t i) {
    std::vector<T> w(static_cast<std::size_t>(lw));
    int inf = 0;
    geqrf(M, N, a + i * m * n, tau + i * k, w.data(), lw, &inf);
    return inf;
  });
}

/// The host's cuda_orgqr.
template <class T>
void host_orgqr(std::int64_t m, std::int64_t cols, std::int64_t k, std::int64_t batch, T* q, const T* tau) {
  const int M = static_cast<int>(m), C = static_cast<int>(cols), K = static_cast<int>(k);
  T qs{};
  int info = 0;
  orgqr(M, C, K, q, tau, &qs, -1, &info);
  const int lw = query_size(qs);
  for_each_matrix("orgqr", batch, m * cols * k, [&](std::int64_t i) {
    std::vector<T> w(static_cast<std::size_t>(lw));
    int inf = 0;
    orgqr(M, C, K, q + i * m * cols, tau + i * k, w.data(), lw, &inf);
    return inf;
  });
}

/// The host's cuda_syevd.
template <class T>
void host_syevd(bool vectors, bool lower, std::int64_t n, std::int64_t batch, T* a, decltype(std::abs(T{}))* w, int* info) {
  using R = decltype(std::abs(T{}));
  const char jz = vectors ? 'V' : 'N', ul = lower ? 'L' : 'U';
  const int N = static_cast<int>(n);
  T wq{};
  R rq{};
  int iq = 0, inf = 0;
  evd(jz, ul, N, a, w, &wq, -1, &rq, -1, &iq, -1, &inf);
  const int lw = query_size(wq), lrw = query_size(rq), liw = std::max(1, iq);
  for_each_matrix("syevd", batch, n * n * n, [&](std::int64_t i) {
    std::vector<T> wk(static_cast<std::size_t>(lw));
    std::vector<R> rw(static_cast<std::size_t>(lrw));
    std::vector<int> iw(static_cast<std::size_t>(liw));
    int r = 0;
    evd(jz, ul, N, a + i * n * n, w + i * n, wk.data(), lw, rw.data(), lrw, iw.data(), liw, &r);
    info[i] = r > 0 ? r : 0;
    return r;
  });
}

/// The host's cuda_gesvd (gesdd: divide and conquer; LAPACK gives V^H, conjugate-transposed into v).
template <class T>
void host_gesvd(bool vectors, bool full, std::int64_t m, std::int64_t n, std::int64_t batch, T* a,
                decltype(std::abs(T{}))* s, T* u, T* v, int* info) {
  using R = decltype(std::abs(T{}));
  const std::int64_t k = std::min(m, n), mx = std::max(m, n);
  const std::int64_t ucols = full ? m : k, vrows = full ? n : k;  // V^H is vrows x n
  const char jz = !vectors ? 'N' : full ? 'A' : 'S';
  const int M = static_cast<int>(m), N = static_cast<int>(n), ldu = vectors ? M : 1, ldvt = vectors ? static_cast<int>(vrows) : 1;
  const std::size_t lrw = static_cast<std::size_t>(std::max<std::int64_t>(
      1, vectors ? std::max(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k) : 7 * k));
  T wq{}, dummy{};
  R rdummy{};
  int idummy = 0, inf = 0;
  gesdd(jz, M, N, a, s, &dummy, ldu, &dummy, ldvt, &wq, -1, &rdummy, &idummy, &inf);
  const int lw = query_size(wq);
  for_each_matrix("gesdd", batch, m * n * k, [&](std::int64_t i) {
    std::vector<T> wk(static_cast<std::size_t>(lw)), vt(vectors ? static_cast<std::size_t>(vrows * n) : 1);
    std::vector<R> rw(lrw);
    std::vector<int> iw(static_cast<std::size_t>(8 * k));
    T udummy{};
    int r = 0;
    gesdd(jz, M, N, a + i * m * n, s + i * k, vectors ? u + i * m * ucols : &udummy, ldu, vt.data(), ldvt, wk.data(), lw,
          rw.data(), iw.data(), &r);
    info[i] = r > 0 ? r : 0;
    if (vectors && r == 0) {
      T* vi = v + i * n * vrows;  // V (n x vrows column-major): V(p, q) = conj(V^H(q, p))
      for (std::int64_t q = 0; q < vrows; ++q)
        for (std::int64_t p = 0; p < n; ++p) {
          const T x = vt[static_cast<std::size_t>(p * vrows + q)];
          if constexpr (std::is_floating_point_v<T>) vi[q * n + p] = x;
          else vi[q * n + p] = std::conj(x);
        }
    }
    return r;
  });
}

/// Least squares on the host by LAPACK's `driver` ('g' gels, 'y' gelsy, 'd' gelsd, 's' gelss) for `batch` m x n
/// column-major matrices at a and their k right-hand sides at b (ldb x k column-major, ldb = max(m, n), B in the first
/// m rows; the solution comes back in the first n, the residuals' components of a full-rank tall system below
/// them); rank (y, d, s) and the singular values s (d, s) per matrix; info as LAPACK's (> 0: gels' zero on R's
/// diagonal, gelsd / gelss not converged).
template <class T>
void host_lstsq(char driver, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, T* a, T* b,
                decltype(std::abs(T{}))* s, decltype(std::abs(T{})) rcond, std::int64_t* rank, int* info) {
  using R = decltype(std::abs(T{}));
  const std::int64_t ldb = std::max(m, n), mn = std::min(m, n);
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k), LDB = static_cast<int>(ldb);
  T wq{};
  R rq{}, sq{};
  int iq = 0, jq = 0, rk = 0, inf = 0;
  gelsx(driver, M, N, K, a, b, LDB, &jq, &sq, rcond, &rk, &wq, -1, &rq, &iq, &inf);
  const int lw = query_size(wq);
  // gelsd returns its rwork and iwork sizes from the query; gelsy and gelss need 2n and 5 min(m, n) reals
  const std::size_t lrw = static_cast<std::size_t>(std::max<std::int64_t>({1, static_cast<std::int64_t>(std::real(rq)), 2 * n, 5 * mn}));
  const std::size_t liw = static_cast<std::size_t>(std::max(1, iq));
  for_each_matrix("gels", batch, m * n * std::max(mn, k), [&](std::int64_t i) {
    std::vector<T> w(static_cast<std::size_t>(lw));
    std::vector<R> rw(lrw), sv(static_cast<std::size_t>(std::max<std::int64_t>(mn, 1)));
    std::vector<int> iw(liw), jpvt(static_cast<std::size_t>(n), 0);
    int r = 0, rnk = 0;
    gelsx(driver, M, N, K, a + i * m * n, b + i * ldb * k, LDB, jpvt.data(), sv.data(), rcond, &rnk, w.data(), lw,
          rw.data(), iw.data(), &r);
    info[i] = r > 0 ? r : 0;
    rank[i] = rnk;
    if (s) std::copy(sv.begin(), sv.begin() + mn, s + i * mn);
    return r;
  });
}

void geev(char jr, int n, float* a, float* wr, float* wi, cf*, float* vr, int ldv, float* w, int lw, float*, int* info) {
  const char jl = 'N';
  int one = 1;
  sgeev_(&jl, &jr, &n, a, &n, wr, wi, nullptr, &one, vr, &ldv, w, &lw, info);
}
void geev(char jr, int n, double* a, double* wr, double* wi, cd*, double* vr, int ldv, double* w, int lw, double*, int* info) {
  const char jl = 'N';
  int one = 1;
  dgeev_(&jl, &jr, &n, a, &n, wr, wi, nullptr, &one, vr, &ldv, w, &lw, info);
}
void geev(char jr, int n, cf* a, float*, float*, cf* wc, cf* vr, int ldv, cf* w, int lw, float* rw, int* info) {
  const char jl = 'N';
  int one = 1;
  cgeev_(&jl, &jr, &n, a, &n, wc, nullptr, &one, vr, &ldv, w, &lw, rw, info);
}
void geev(char jr, int n, cd* a, double*, double*, cd* wc, cd* vr, int ldv, cd* w, int lw, double* rw, int* info) {
  const char jl = 'N';
  int one = 1;
  zgeev_(&jl, &jr, &n, a, &n, wc, nullptr, &one, vr, &ldv, w, &lw, rw, info);
}

/// Eigenvalues (complex, n apart at w) and, with `vectors`, right eigenvectors (complex n x n column-major at v, unit
/// norm, largest component real) of `batch` general n x n column-major matrices at a (overwritten), by LAPACK's ?geev;
/// info as LAPACK's (> 0: the QR algorithm did not converge). A real matrix's complex pairs come from geev's two real
/// columns x, y: v_j = x + i y and v_{j+1} = x - i y.
template <class T>
void host_geev(bool vectors, std::int64_t n, std::int64_t batch, T* a, std::complex<decltype(std::abs(T{}))>* w,
               std::complex<decltype(std::abs(T{}))>* v, int* info) {
  using R = decltype(std::abs(T{}));
  using C = std::complex<R>;
  const char jr = vectors ? 'V' : 'N';
  const int N = static_cast<int>(n), ldv = vectors ? N : 1;
  T wq{};
  int inf = 0;
  {  // the query may touch the arrays: give it room
    std::vector<T> scratch(static_cast<std::size_t>(n * n));
    std::vector<R> re(static_cast<std::size_t>(n)), im(static_cast<std::size_t>(n)), rw(static_cast<std::size_t>(2 * n));
    std::vector<C> wc(static_cast<std::size_t>(n));
    std::vector<T> vq(vectors ? static_cast<std::size_t>(n * n) : 1);
    geev(jr, N, scratch.data(), re.data(), im.data(), wc.data(), vq.data(), ldv, &wq, -1, rw.data(), &inf);
  }
  const int lw = query_size(wq);
  for_each_matrix("geev", batch, n * n * n, [&](std::int64_t i) {
    std::vector<T> work(static_cast<std::size_t>(lw)), vr(vectors ? static_cast<std::size_t>(n * n) : 1);
    std::vector<R> re(static_cast<std::size_t>(n)), im(static_cast<std::size_t>(n)), rw(static_cast<std::size_t>(2 * n));
    C* wi = w + i * n;
    int r = 0;
    if constexpr (std::is_floating_point_v<T>) {
      geev(jr, N, a + i * n * n, re.data(), im.data(), nullptr, vr.data(), ldv, work.data(), lw, rw.data(), &r);
      for (std::int64_t j = 0; j < n; ++j) wi[j] = C(re[j], im[j]);
      if (vectors && r == 0) {
        C* vi = v + i * n * n;
        for (std::int64_t j = 0; j < n; ++j) {
          const T* x = vr.data() + j * n;
          if (im[j] == 0) {
            for (std::int64_t p = 0; p < n; ++p) vi[j * n + p] = C(x[p], 0);
          } else {  // a pair: columns j and j + 1 hold the real and imaginary parts
            const T* y = x + n;
            for (std::int64_t p = 0; p < n; ++p) vi[j * n + p] = C(x[p], y[p]), vi[(j + 1) * n + p] = C(x[p], -y[p]);
            ++j;
          }
        }
      }
    } else {
      geev(jr, N, a + i * n * n, nullptr, nullptr, wi, vectors ? v + i * n * n : vr.data(), ldv, work.data(), lw, rw.data(), &r);
    }
    info[i] = r > 0 ? r : 0;
    return r;
  });
}

// ---- one call per device (Note [decompositions on every device]) -----------------------------------------------

/// QR factors in place of `batch` m x n column-major matrices in `a`, the reflectors' scalars in `tau`.
void run_geqrf(const char* op, std::int64_t m, std::int64_t n, std::int64_t batch, Tensor& a, Tensor& tau) {
  if (std::min({m, n, batch}) == 0) return;
  if (a.device().is_cuda()) return detail::cuda_geqrf(op, a.dtype(), a.device().index, m, n, batch, a.data_ptr(), tau.data_ptr());
  visit_lapack(a.dtype(), [&](auto t) {
    using T = decltype(t);
    host_geqrf(m, n, batch, a.template data<T>(), tau.template data<T>());
  });
}

/// Q's first `cols` columns in place in `q` (batch x m x cols column-major) from k reflectors.
void run_orgqr(const char* op, std::int64_t m, std::int64_t cols, std::int64_t k, std::int64_t batch, Tensor& q,
               const Tensor& tau) {
  if (std::min({m, cols, k, batch}) == 0) return;
  if (q.device().is_cuda())
    return detail::cuda_orgqr(op, q.dtype(), q.device().index, m, cols, k, batch, q.data_ptr(), tau.data_ptr());
  visit_lapack(q.dtype(), [&](auto t) {
    using T = decltype(t);
    host_orgqr(m, cols, k, batch, q.template data<T>(), tau.template data<const T>());
  });
}

/// Eigenvalues into w (and eigenvectors into a, with `vectors`) of batch Hermitian n x n column-major matrices.
void run_syevd(const char* op, bool vectors, bool lower, std::int64_t n, std::int64_t batch, Tensor& a, Tensor& w,
               const Tensor& info) {
  if (std::min(n, batch) == 0) return;
  if (a.device().is_cuda())
    return detail::cuda_syevd(op, a.dtype(), a.device().index, vectors, lower, n, batch, a.data_ptr(), w.data_ptr(),
                              detail::int32_data(info));
  visit_lapack(a.dtype(), [&](auto t) {
    using T = decltype(t);
    using R = decltype(std::abs(T{}));
    host_syevd(vectors, lower, n, batch, a.template data<T>(), w.template data<R>(), detail::int32_data(info));
  });
}

/// Singular values into s (and U, V into u, v, with `vectors`) of batch m x n column-major matrices in a.
void run_gesvd(const char* op, bool vectors, bool full, std::int64_t m, std::int64_t n, std::int64_t batch, Tensor& a,
               Tensor& s, Tensor& u, Tensor& v, const Tensor& info) {
  if (std::min({m, n, batch}) == 0) return;
  if (a.device().is_cuda())
    return detail::cuda_gesvd(op, a.dtype(), a.device().index, vectors, full, m, n, batch, a.data_ptr(), s.data_ptr(),
                              vectors ? u.data_ptr() : nullptr, vectors ? v.data_ptr() : nullptr, detail::int32_data(info));
  visit_lapack(a.dtype(), [&](auto t) {
    using T = decltype(t);
    using R = decltype(std::abs(T{}));
    host_gesvd(vectors, full, m, n, batch, a.template data<T>(), s.template data<R>(),
               vectors ? u.template data<T>() : nullptr, vectors ? v.template data<T>() : nullptr, detail::int32_data(info));
  });
}

// ---- shared pieces ------------------------------------------------------------------------------------------------

/// The error of a decomposition that did not converge.
std::string not_converged(const std::string& which, std::int64_t) {
  return which + " is too ill-conditioned: the algorithm did not converge";
}

/// The zero gradient of `like` where g is undefined.
Tensor or_zeros(const Tensor& g, const Tensor& like) { return g.defined() ? g : zeros_like(like); }

/// F with F_ij = 1 / e_ij off the diagonal and 0 on it, for e (..., k, k).
Tensor off_diagonal_inverse(const Tensor& e) {
  const std::int64_t k = e.size(-1);
  const Tensor diag = eye(k, std::nullopt, Dtype::Bool, e.device());
  return where(diag, 0.0, 1.0 / where(diag, 1.0, e));
}

// ---- QR -----------------------------------------------------------------------------------------------------------

/// The gradient of A = Q R for m >= n (Q m x n, R n x n) (Note [decompositions on every device]).
Tensor qr_grad_tall(const Tensor& q, const Tensor& r, const Tensor& gq, const Tensor& gr) {
  const Tensor m = matmul(r, adjoint(gr)) - matmul(adjoint(gq), q);
  const Tensor low = tril(m, -1);
  const Tensor copyltu = low + adjoint(low) + diag_embed(real(phasor::diagonal(m, 0, -2, -1)).to(m.dtype()));
  const Tensor b = gq + matmul(q, copyltu);
  return solve_triangular(adjoint(r), b, /*upper=*/false, /*left=*/false);  // b R^{-H}
}

/// (Q, R) of A (..., m, n): Q (m x cols, cols = m when complete, else k) and R (rows x n, rows as cols), the primitive;
/// without `want_q` Q is not formed (and nothing is differentiable).
std::vector<Tensor> qr_primitive(const Tensor& a, bool complete, bool want_q) {
  const char* op = "linalg_qr";
  return detail::apply_op_n(
      op, {a}, detail::kSaveOutputs,
      [op, complete, want_q](In in) {
        const Tensor& x = in[0];
        const Shape batch = batch_of(x);
        const std::int64_t m = x.size(-2), n = x.size(-1), k = std::min(m, n), count = detail::shape_numel(batch);
        const std::int64_t cols = complete ? m : k;
        Tensor f = column_major_copy(x);  // (count, n, m)
        Tensor tau = empty({count, k}, x.dtype(), f.device());
        run_geqrf(op, m, n, count, f, tau);
        const Tensor r = triu(f.transpose(1, 2).narrow(1, 0, cols)).reshape(with_tail(batch, {cols, n})).to(x.device());
        if (!want_q) return G{Tensor(), r};
        Tensor q;
        if (k == 0) {
          q = eye(m, cols, x.dtype(), f.device()).expand({count, m, cols});
        } else {
          Tensor qc = zeros({count, cols, m}, x.dtype(), f.device());  // Q column-major, the reflectors first
          qc.narrow(1, 0, k).copy_(f.narrow(1, 0, k));
          run_orgqr(op, m, cols, k, count, qc, tau);
          q = qc.transpose(1, 2);
        }
        return G{q.reshape(with_tail(batch, {m, cols})).to(x.device()), r};
      },
      [complete](const detail::Ctx& c, const G& g) {
        const Tensor q = c.output(0), r = c.output(1);
        const std::int64_t m = q.size(-2), n = r.size(-1);
        if (complete && m > n)
          throw Error("linalg_qr",
                      "the gradient of mode \"complete\" with more rows than columns (" + std::to_string(m) + " > " +
                          std::to_string(n) + ") is not defined: Q's last columns are not unique; use mode \"reduced\"");
        const Tensor gq = or_zeros(g[0], q), gr = or_zeros(g[1], r);
        if (m >= n) return G{qr_grad_tall(q, r, gq, gr)};
        // A = [X | Y], R = [U | V]: X = Q U square, Y = Q V
        const Tensor u = r.narrow(-1, 0, m), v = r.narrow(-1, m, n - m);
        const Tensor gu = gr.narrow(-1, 0, m), gv = gr.narrow(-1, m, n - m);
        const Tensor y = matmul(q, v);
        const Tensor gx = qr_grad_tall(q, u, gq + matmul(y, adjoint(gv)), gu);
        return G{cat({gx, matmul(q, gv)}, -1)};
      });
}

// ---- eigh ---------------------------------------------------------------------------------------------------------

/// (eigenvalues, eigenvectors) of Hermitian A (..., n, n) read from its `lower` or upper triangle, the primitive;
/// without `vectors` only the eigenvalues (and nothing is differentiable).
std::vector<Tensor> eigh_primitive(const Tensor& a, bool lower, bool vectors) {
  const char* op = "linalg_eigh";
  return detail::apply_op_n(
      op, {a}, detail::kSaveOutputs,
      [op, lower, vectors](In in) {
        const Tensor& x = in[0];
        const Shape batch = batch_of(x);
        const std::int64_t n = x.size(-1), count = detail::shape_numel(batch);
        Tensor f = column_major_copy(x);  // (count, n, n): A column-major, the same triangle
        Tensor w = empty({count, n}, to_real(x.dtype()), f.device());
        const Tensor info = detail::int32_buffer(count, f.device());
        run_syevd(op, vectors, lower, n, count, f, w, info);
        check_info(op, detail::widen_int32(info, {count}), batch, not_converged);
        const Tensor values = w.reshape(with_tail(batch, {n})).to(x.device());
        if (!vectors) return G{values};
        return G{values, f.transpose(1, 2).reshape(with_tail(batch, {n, n})).to(x.device())};
      },
      [](const detail::Ctx& c, const G& g) {
        const Tensor w = c.output(0), v = c.output(1);
        Tensor inner = diag_embed(or_zeros(g[0], w).to(v.dtype()));
        if (g[1].defined()) {
          const Tensor k = matmul(adjoint(v), g[1]);
          const Tensor f = off_diagonal_inverse(w.unsqueeze(-2) - w.unsqueeze(-1));  // 1 / (w_j - w_i)
          inner = inner + f.to(v.dtype()) * ((k - adjoint(k)) * 0.5);
        }
        return G{matmul(matmul(v, inner), adjoint(v))};
      });
}

/// Throws unless uplo is "L" or "U"; true for "L".
bool lower_of(const std::string& uplo, const char* op) {
  if (uplo != "L" && uplo != "U") throw Error(op, "UPLO must be \"L\" or \"U\", got \"" + uplo + "\"");
  return uplo == "L";
}

// ---- SVD ----------------------------------------------------------------------------------------------------------

/// The gradient of A = U diag(s) Vh from (gU, gS, gVh) (Note [decompositions on every device]).
Tensor svd_grad(Tensor u, const Tensor& s, Tensor vh, Tensor gu, const Tensor& gs, Tensor gvh, bool full) {
  const std::int64_t m = u.size(-2), n = vh.size(-1), k = s.size(-1);
  const Dtype dt = u.dtype();
  if (full) {  // the extra columns of full matrices get no gradient
    u = u.narrow(-1, 0, k), vh = vh.narrow(-2, 0, k);
    if (gu.defined()) gu = gu.narrow(-1, 0, k);
    if (gvh.defined()) gvh = gvh.narrow(-2, 0, k);
  }
  const Tensor sc = s.to(dt);
  Tensor x = diag_embed(or_zeros(gs, s).to(dt));
  if (!gu.defined() && !gvh.defined()) return matmul(matmul(u, x), vh);
  const Tensor v = adjoint(vh);
  const Tensor gv = gvh.defined() ? adjoint(gvh) : Tensor();
  const Tensor f = off_diagonal_inverse(s.square().unsqueeze(-2) - s.square().unsqueeze(-1)).to(dt);
  Tensor j, kk;
  if (gu.defined()) {
    j = matmul(adjoint(u), gu);
    x = x + f * (j - adjoint(j)) * sc.unsqueeze(-2);
  }
  if (gv.defined()) {
    kk = matmul(adjoint(v), gv);
    x = x + sc.unsqueeze(-1) * (f * (kk - adjoint(kk)));
  }
  if (is_complex(dt)) {  // the phase U and V share
    Tensor d = zeros(s.shape(), to_real(dt), s.device());
    if (j.defined()) d = d + imag(phasor::diagonal(j, 0, -2, -1));
    if (kk.defined()) d = d - imag(phasor::diagonal(kk, 0, -2, -1));
    x = x + diag_embed((d / (2 * s)).to(dt)) * std::complex<double>(0, 1);
  }
  Tensor ga = matmul(matmul(u, x), vh);
  if (gu.defined() && m > k) ga = ga + matmul((gu - matmul(u, j)) / sc.unsqueeze(-2), vh);
  if (gv.defined() && n > k) ga = ga + matmul(u / sc.unsqueeze(-2), adjoint(gv - matmul(v, kk)));
  return ga;
}

/// (U, S, Vh) of A (..., m, n) (U m x ucols, Vh vrows x n: m and n when `full`, else k), the primitive; without
/// `vectors` only S (and nothing is differentiable).
std::vector<Tensor> svd_primitive(const Tensor& a, bool full, bool vectors) {
  const char* op = "linalg_svd";
  return detail::apply_op_n(
      op, {a}, detail::kSaveOutputs,
      [op, full, vectors](In in) {
        const Tensor& x = in[0];
        const Shape batch = batch_of(x);
        const std::int64_t m = x.size(-2), n = x.size(-1), k = std::min(m, n), count = detail::shape_numel(batch);
        const std::int64_t ucols = full ? m : k, vcols = full ? n : k;
        Tensor f = column_major_copy(x);  // (count, n, m)
        Tensor s = empty({count, k}, to_real(x.dtype()), f.device());
        const Tensor info = detail::int32_buffer(count, f.device());
        Tensor u, v;
        if (vectors) {
          // U m x ucols and V n x vcols column-major; the identity where there is nothing to factor
          const bool none = k == 0;
          u = none ? eye(ucols, m, x.dtype(), f.device()).expand({count, ucols, m}).contiguous() : empty({count, ucols, m}, x.dtype(), f.device());
          v = none ? eye(vcols, n, x.dtype(), f.device()).expand({count, vcols, n}).contiguous() : empty({count, vcols, n}, x.dtype(), f.device());
        }
        run_gesvd(op, vectors, full, m, n, count, f, s, u, v, info);
        check_info(op, detail::widen_int32(info, {count}), batch, not_converged);
        const Tensor values = s.reshape(with_tail(batch, {k})).to(x.device());
        if (!vectors) return G{values};
        // u (count, ucols, m) row-major is U^T; v row-major is V^T, so Vh = conj(v)
        return G{u.transpose(1, 2).reshape(with_tail(batch, {m, ucols})).to(x.device()), values,
                 v.conj().reshape(with_tail(batch, {vcols, n})).to(x.device())};
      },
      [full](const detail::Ctx& c, const G& g) {
        return G{svd_grad(c.output(0), c.output(1), c.output(2), g[0], g[1], g[2], full)};
      });
}

// ---- eig ----------------------------------------------------------------------------------------------------------

/// The gradient of A V = V diag(L) (Note [decompositions on every device]'s eigh, without symmetry): with K = V^H gV,
/// gP = diag(gL) + (K - V^H V diag(Re diag K)) / conj(E) off the diagonal, gA = V^{-H} gP V^H (the second term keeps
/// the columns' unit norm; their phases are the loss's to ignore).
Tensor eig_grad(const Tensor& l, const Tensor& v, const Tensor& gl, const Tensor& gv) {
  Tensor gp = diag_embed(or_zeros(gl, l));
  if (gv.defined()) {
    const Tensor k = matmul(adjoint(v), gv);
    const Tensor z = k - matmul(adjoint(v), v) * real(phasor::diagonal(k, 0, -2, -1)).to(v.dtype()).unsqueeze(-2);
    gp = gp + z * off_diagonal_inverse((l.unsqueeze(-2) - l.unsqueeze(-1)).conj());  // 1 / conj(l_j - l_i)
  }
  return solve(adjoint(v), matmul(gp, adjoint(v)));
}

/// (eigenvalues, eigenvectors) of general A (..., n, n), the primitive (LAPACK on the host for every device);
/// without `vectors` only the eigenvalues (and nothing is differentiable).
std::vector<Tensor> eig_primitive(const Tensor& a, bool vectors) {
  const char* op = "linalg_eig";
  return detail::apply_op_n(
      op, {a}, detail::kSaveOutputs,
      [op, vectors](In in) {
        const Tensor& x = in[0];
        const Shape batch = batch_of(x);
        const std::int64_t n = x.size(-1), count = detail::shape_numel(batch);
        const Dtype cdt = to_complex(x.dtype());
        Tensor f = column_major_copy(x.to(Device::cpu()));  // (count, n, n): A column-major, on the host
        Tensor w = empty({count, n}, cdt, Device::cpu());
        Tensor v = vectors ? empty({count, n, n}, cdt, Device::cpu()) : Tensor();
        std::vector<int> info(static_cast<std::size_t>(count), 0);
        if (n > 0 && count > 0)
          visit_lapack(x.dtype(), [&](auto t) {
            using T = decltype(t);
            using C = std::complex<decltype(std::abs(T{}))>;
            host_geev(vectors, n, count, f.template data<T>(), w.template data<C>(), vectors ? v.template data<C>() : nullptr,
                      info.data());
          });
        for (std::int64_t i = 0; i < count; ++i)
          if (info[static_cast<std::size_t>(i)] > 0) throw Error(op, not_converged(which_matrix(batch, i), 0));
        const Tensor values = w.reshape(with_tail(batch, {n})).to(x.device());
        if (!vectors) return G{values};
        return G{values, v.transpose(1, 2).reshape(with_tail(batch, {n, n})).to(x.device())};
      },
      [](const detail::Ctx& c, const G& g) { return G{eig_grad(c.output(0), c.output(1), g[0], g[1])}; });
}

/// The default relative tolerance of A's dtype and shape: eps * max(m, n).
double default_rtol(const Tensor& a) {
  const double eps = to_real(a.dtype()) == Dtype::Float32 ? std::numeric_limits<float>::epsilon()
                                                           : std::numeric_limits<double>::epsilon();
  return eps * static_cast<double>(std::max(a.size(-2), a.size(-1)));
}

/// Tolerance max(atol, rtol * largest) per matrix (..., 1) from the values (..., k), sorted or not, all >= 0.
Tensor tolerance(const Tensor& values, std::optional<double> atol, std::optional<double> rtol, const Tensor& a) {
  const double at = atol.value_or(0.0);
  const double rt = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : default_rtol(a));
  return clamp_min(amax(values, {-1}, true) * rt, at);
}

/// 1 / x where keep, else 0, with no infinite gradient where 1 / x is not taken.
Tensor inverse_where(const Tensor& keep, const Tensor& x) { return where(keep, 1.0 / where(keep, x, 1.0), 0.0); }

}  // namespace

std::pair<Tensor, Tensor> qr(const Tensor& a, const std::string& mode) {
  const char* op = "linalg_qr";
  check_matrix(a, op, false);
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw Error(op, "mode must be \"reduced\", \"complete\" or \"r\", got \"" + mode + "\"");
  const G out = detail::composite(op, {a}, [&] {
    const bool r_only = mode == "r";
    const G qr = qr_primitive(a, mode == "complete", !r_only || detail::any_requires_grad({a}));
    // mode "r" returns an empty Q, as torch's; its R still differentiates (through the Q made for it)
    return G{r_only ? empty({0}, a.dtype(), a.device()) : qr[0], qr[1]};
  });
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> eigh(const Tensor& a, const std::string& uplo) {
  const char* op = "linalg_eigh";
  check_matrix(a, op, true);
  const bool lower = lower_of(uplo, op);
  const auto out = eigh_primitive(a, lower, true);
  return {out[0], out[1]};
}

Tensor eigvalsh(const Tensor& a, const std::string& uplo) {
  const char* op = "linalg_eigvalsh";
  check_matrix(a, op, true);
  const bool lower = lower_of(uplo, op);
  return detail::composite(op, {a}, [&] { return eigh_primitive(a, lower, detail::any_requires_grad({a}))[0]; });
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& a, bool full_matrices) {
  check_matrix(a, "linalg_svd", false);
  const auto out = svd_primitive(a, full_matrices, true);
  return {out[0], out[1], out[2]};
}

Tensor svdvals(const Tensor& a) {
  const char* op = "linalg_svdvals";
  check_matrix(a, op, false);
  return detail::composite(op, {a}, [&] {
    const bool grad = detail::any_requires_grad({a});  // the factors only for a gradient
    return svd_primitive(a, false, grad)[grad ? 1 : 0];
  });
}

LstsqResult lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond, const std::string& driver_in) {
  const char* op = "linalg_lstsq";
  check_matrix(a, op, false);
  if (!b.defined()) throw Error(op, "B is undefined");
  detail::check_same_device(a, b, op);
  const std::string driver = driver_in.empty() ? "gelsy" : driver_in;
  if (driver != "gels" && driver != "gelsy" && driver != "gelsd" && driver != "gelss")
    throw Error(op, "driver must be \"gels\", \"gelsy\", \"gelsd\" or \"gelss\", got \"" + driver_in + "\"");
  if (!is_floating_or_complex(b.dtype()))
    throw Error(op, std::string("B must be a floating or complex tensor, got ") + dtype_name(b.dtype()));
  const std::int64_t m = a.size(-2), n = a.size(-1);
  // B is a vector (or a batch of them) when its shape is A's without the last dim (torch.linalg.solve's rule)
  const bool vector = b.dim() == a.dim() - 1 && Shape(a.shape().begin(), a.shape().end() - 1) == b.shape();
  const Tensor bm = vector ? b.unsqueeze(-1) : b;
  if (bm.dim() < 2 || bm.size(-2) != m)
    throw Error(op, "B of shape " + detail::shape_str(b.shape()) + " does not match A of shape " + detail::shape_str(a.shape()) +
                        " (B must be (..., " + std::to_string(m) + ", k) or (..., " + std::to_string(m) + "))");
  if (rcond && !(*rcond >= 0)) throw Error(op, "rcond must be >= 0, got " + std::to_string(*rcond));
  const G out = detail::composite(op, {a, b}, [&] {
    const Shape batch = broadcast_shapes({batch_of(a), batch_of(bm)}, op);
    const Dtype dt = promote_types(a.dtype(), b.dtype());
    const Tensor ab = a.to(dt).broadcast_to(with_tail(batch, {m, n}));
    const Tensor bb = bm.to(dt).broadcast_to(with_tail(batch, {m, bm.size(-1)}));
    LstsqResult r;
    bool full_rank = true;
    const std::int64_t k = bb.size(-1), count = detail::shape_numel(batch), mn = std::min(m, n);
    const double rc = rcond ? *rcond : default_rtol(ab);
    if (!ab.device().is_cuda() && !detail::any_requires_grad({ab, bb}) && !detail::tracing() && std::min({m, n, k, count}) > 0) {
      // LAPACK's driver itself: it never forms Q, U or V (a differentiable call and a GPU take the ops below)
      Tensor f = column_major_copy(ab);
      const std::int64_t ldb = std::max(m, n);
      Tensor x = zeros({count, k, ldb}, dt, Device::cpu());  // B^T in the first m columns: B column-major
      x.narrow(2, 0, m).copy_(bb.to(Device::cpu()).reshape({count, m, k}).transpose(1, 2));
      const bool values = driver == "gelsd" || driver == "gelss";
      Tensor sv = values ? empty({count, mn}, to_real(dt), Device::cpu()) : Tensor();
      std::vector<std::int64_t> ranks(static_cast<std::size_t>(count), 0);
      const Tensor info = detail::int32_buffer(count, Device::cpu());
      const char code = driver == "gels" ? 'g' : driver == "gelsy" ? 'y' : driver == "gelsd" ? 'd' : 's';
      visit_lapack(dt, [&](auto t) {
        using T = decltype(t);
        using Rl = decltype(std::abs(T{}));
        host_lstsq(code, m, n, k, count, f.template data<T>(), x.template data<T>(), values ? sv.template data<Rl>() : nullptr,
                   static_cast<Rl>(rc), ranks.data(), detail::int32_data(info));
      });
      const int* flags = detail::int32_data(info);
      for (std::int64_t i = 0; i < count; ++i)
        if (flags[i] > 0)
          throw Error(op, driver == "gels" ? "driver \"gels\" needs A of full rank: " + which_matrix(batch, i) +
                                                 " is singular: its diagonal element " + std::to_string(flags[i] - 1) + " is zero"
                                           : not_converged(which_matrix(batch, i), 0));
      const Device dev = a.device();
      r.solution = x.narrow(2, 0, n).transpose(1, 2).reshape(with_tail(batch, {n, k})).to(dev);
      if (driver != "gels") r.rank = from_vector(ranks, batch, dev);
      if (values) r.singular_values = sv.reshape(with_tail(batch, {mn})).to(dev);
      full_rank = driver == "gels" || std::all_of(ranks.begin(), ranks.end(), [n](std::int64_t v) { return v == n; });
      if (m > n && driver != "gelsy" && full_rank)  // the residual's components sit below the solution
        r.residuals = abs(x.narrow(2, n, m - n)).square().sum({-1}).reshape(with_tail(batch, {k})).to(dev);
    } else if (driver == "gels") {
      try {
        if (m >= n) {
          const auto [q, rr] = qr(ab);
          r.solution = solve_triangular(rr, matmul(adjoint(q), bb), /*upper=*/true);
        } else {  // the least-norm solution: A^H = Q R, X = Q R^{-H} B
          const auto [q, rr] = qr(adjoint(ab));
          r.solution = matmul(q, solve_triangular(adjoint(rr), bb, /*upper=*/false));
        }
      } catch (const Error& e) {
        // the solve's message without its op: "the matrix ... is singular: its diagonal element j is zero"
        const std::string why = e.what();
        throw Error(op, "driver \"gels\" needs A of full rank: " + why.substr(why.find("] ") + 2));
      }
    } else {
      const auto [u, s, vh] = svd(ab, false);
      const Tensor keep = s > amax(s, {-1}, true) * rc;
      r.solution = matmul(adjoint(vh), inverse_where(keep, s.to(dt)).unsqueeze(-1) * matmul(adjoint(u), bb));
      r.rank = keep.sum({-1}).to(Dtype::Int64);
      if (driver != "gelsy") r.singular_values = s;
      if (m > n && driver != "gelsy") full_rank = r.rank.numel() == 0 || (r.rank == n).all().item<bool>();
    }
    const bool residuals = m > n && driver != "gelsy" && full_rank;
    if (residuals && !r.residuals.defined())
      r.residuals = abs(matmul(ab, r.solution) - bb).square().sum({-2});
    else if (!residuals)
      r.residuals = empty({0}, to_real(dt), a.device());
    if (!r.rank.defined()) r.rank = empty({0}, Dtype::Int64, a.device());
    if (!r.singular_values.defined()) r.singular_values = empty({0}, to_real(dt), a.device());
    if (vector) {
      r.solution = r.solution.squeeze(-1);
      if (residuals) r.residuals = r.residuals.squeeze(-1);
    }
    return G{r.solution, r.residuals, r.rank, r.singular_values};
  });
  return LstsqResult{out[0], out[1], out[2], out[3]};
}

Tensor pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg_pinv";
  check_matrix(a, op, hermitian);
  return detail::composite(op, {a}, [&] {
    const std::int64_t m = a.size(-2), n = a.size(-1);
    if (std::min(m, n) == 0) return zeros(with_tail(batch_of(a), {n, m}), a.dtype(), a.device());
    if (hermitian) {
      const auto [w, v] = eigh(a);
      const Tensor keep = abs(w) > tolerance(abs(w), atol, rtol, a);
      return matmul(v * inverse_where(keep, w).to(a.dtype()).unsqueeze(-2), adjoint(v));
    }
    const auto [u, s, vh] = svd(a, false);
    const Tensor keep = s > tolerance(s, atol, rtol, a);
    return matmul(adjoint(vh), inverse_where(keep, s).to(a.dtype()).unsqueeze(-1) * adjoint(u));
  });
}

Tensor matrix_rank(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg_matrix_rank";
  check_matrix(a, op, hermitian);
  return detail::composite(op, {a}, [&] {
    NoGradGuard ng;
    if (std::min(a.size(-2), a.size(-1)) == 0) return zeros(batch_of(a), Dtype::Int64, a.device());
    const Tensor values = hermitian ? abs(eigvalsh(a)) : svdvals(a);
    return (values > tolerance(values, atol, rtol, a)).sum({-1}).to(Dtype::Int64);
  });
}

Tensor matrix_norm(const Tensor& a, const std::string& ord, bool keepdim) {
  const char* op = "linalg_matrix_norm";
  check_matrix(a, op, false);
  if (ord != "fro" && ord != "nuc") throw Error(op, "ord must be \"fro\" or \"nuc\" (or a number), got \"" + ord + "\"");
  return detail::composite(op, {a}, [&] {
    if (ord == "fro") return phasor::norm(a, "fro", {-2, -1}, keepdim);
    const Tensor s = svdvals(a).sum({-1});
    return keepdim ? s.unsqueeze(-1).unsqueeze(-1) : s;
  });
}

Tensor matrix_norm(const Tensor& a, double ord, bool keepdim) {
  const char* op = "linalg_matrix_norm";
  check_matrix(a, op, false);
  const double inf = std::numeric_limits<double>::infinity();
  if (ord != 2 && ord != -2 && ord != 1 && ord != -1 && ord != inf && ord != -inf)
    throw Error(op, "ord must be 2, -2, 1, -1, inf or -inf (or \"fro\", \"nuc\"), got " + std::to_string(ord));
  const std::int64_t m = a.size(-2), n = a.size(-1);
  if ((std::abs(ord) == 2 && std::min(m, n) == 0) || (std::abs(ord) == 1 && n == 0) || (std::isinf(ord) && m == 0))
    throw Error(op, "ord " + std::to_string(ord) + " of an empty matrix (shape " + detail::shape_str(a.shape()) +
                        ") is not defined");
  return detail::composite(op, {a}, [&] {
    Tensor r;
    if (std::abs(ord) == 2) {
      const Tensor s = svdvals(a);
      r = ord > 0 ? amax(s, {-1}) : amin(s, {-1});
    } else {
      const Tensor sums = abs(a).sum({std::abs(ord) == 1 ? -2 : -1});  // column sums for 1, row sums for inf
      r = ord > 0 ? amax(sums, {-1}) : amin(sums, {-1});
    }
    return keepdim ? r.unsqueeze(-1).unsqueeze(-1) : r;
  });
}

namespace {
/// cond for a norm other than 2 / -2: norm(A) norm(inv(A)) of square A.
template <class Ord>
Tensor cond_by_inverse(const Tensor& a, const Ord& p, const char* op) {
  if (a.size(-1) != a.size(-2))
    throw Error(op, "this norm needs square matrices, got shape " + detail::shape_str(a.shape()));
  return detail::composite(op, {a}, [&] { return matrix_norm(a, p) * matrix_norm(inv(a), p); });
}
}  // namespace

Tensor cond(const Tensor& a, std::optional<double> p) {
  const char* op = "linalg_cond";
  check_matrix(a, op, false);
  const double ord = p.value_or(2.0);
  if (std::abs(ord) != 2) {
    const double inf = std::numeric_limits<double>::infinity();
    if (ord != 1 && ord != -1 && ord != inf && ord != -inf)
      throw Error(op, "p must be 2, -2, 1, -1, inf or -inf (or \"fro\", \"nuc\"), got " + std::to_string(ord));
    return cond_by_inverse(a, ord, op);
  }
  return detail::composite(op, {a}, [&] {
    const Tensor s = svdvals(a);
    const Tensor hi = amax(s, {-1}), lo = amin(s, {-1});
    return ord > 0 ? hi / lo : lo / hi;
  });
}

Tensor cond(const Tensor& a, const std::string& p) {
  const char* op = "linalg_cond";
  check_matrix(a, op, false);
  if (p != "fro" && p != "nuc") throw Error(op, "p must be \"fro\" or \"nuc\" (or a number), got \"" + p + "\"");
  return cond_by_inverse(a, p, op);
}

std::pair<Tensor, Tensor> eig(const Tensor& a) {
  check_matrix(a, "linalg_eig", true);
  const auto out = eig_primitive(a, true);
  return {out[0], out[1]};
}

Tensor eigvals(const Tensor& a) {
  const char* op = "linalg_eigvals";
  check_matrix(a, op, true);
  return detail::composite(op, {a}, [&] { return eig_primitive(a, detail::any_requires_grad({a}))[0]; });
}

}  // namespace linalg
}  // namespace phasor
