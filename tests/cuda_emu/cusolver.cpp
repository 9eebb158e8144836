// tests/cuda_emu/cusolver.cpp - the dense factorizations and solves phasor calls, through OpenBLAS's LAPACK and
// CBLAS on emulated device memory (Note [CUDA emulation] in emu.hpp): cuBLAS's batched LU (getrfBatched),
// solve from it (getrsBatched) and triangular solve (trsmBatched), and cuSOLVER's dense LU (getrf), Cholesky
// (potrf, potrfBatched), QR (geqrf, orgqr / ungqr), Hermitian eigendecomposition (syevd / heevd, syevjBatched /
// heevjBatched) and SVD (gesvdj, gesvdjBatched), with cuSOLVER's handles (create, destroy, set and get stream) and
// the Jacobi routines' parameters (create, destroy). Column-major, 1-based pivots and LAPACK's info conventions (0:
// success, k > 0: U(k,k) exactly zero for LU, the leading minor of order k not positive definite for Cholesky, not
// converged for syevd), cuSOLVER's for the Jacobi routines (n + 1, min(m, n) + 1: not converged).
// Conventions:
// - Arguments are checked when the call is made, as cuBLAS and cuSOLVER do; the pointer arrays of the batched
//   calls are device memory that earlier work in the stream may write, so each matrix pointer is read, and its
//   extent checked against its allocation, only when the queued work runs: a bad one is reported and its
//   matrix skipped (its info and pivots are left as they were).
// - A zero-size problem (n == 0, nrhs == 0 or no batch) returns success and queues nothing: device info is not
//   written, so a caller that reads it anyway reads whatever the buffer held (0xFF bytes for fresh memory).
// - getrf's Workspace must span getrf_bufferSize's Lwork = max(1, n) elements, potrf's Lwork must be at least
//   potrf_bufferSize's max(1, n) and its Workspace span Lwork elements (LAPACK needs none: the sizes are only
//   checked, so code that ignores the buffer-size query fails here too).
// - The other calls' workspaces are checked the same way against what their bufferSize calls ask for (sizes of the
//   emulator's choosing, growing with the batch for the batched calls); LAPACK's own workspaces are the emulator's.
// - The Jacobi routines are emulated by LAPACK's direct ones (syevd, gesvd) with the parameters' defaults taken as
//   met (tolerance, sweeps; results sorted); gesvdj returns V itself, not V^H; without vectors U and V are neither
//   checked nor touched (may be null); the batched ones take m, n <= 32.
// - A null pivot array (getrfBatched's P, getrf's devIpiv) asks for LU without pivoting, as documented; the
//   pivots getrsBatched reads must lie in [1, n] (the matrix is reported and skipped otherwise).
// - getrsBatched's info is a host int: 0, or -k for the k-th argument invalid, not counting the handle
//   (trans 1, n 2, nrhs 3, Aarray 4, lda 5, devIpiv 6, Barray 7, ldb 8, batchSize 10), as cuBLAS sets it.
// Scalars (trsm's alpha) are read from host memory when the call is made (CUBLAS_POINTER_MODE_HOST).
#include <cblas.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "emu.hpp"

using namespace phasor_emu;
using Lock = std::lock_guard<std::recursive_mutex>;

struct cusolverDnContext {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// LAPACK's Fortran interface (OpenBLAS): every argument by address; the trailing size_t are the hidden lengths
// of the character arguments (gfortran's convention, harmless where the routine is written in C).
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t trans_len);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t trans_len);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<float>* a, const int* lda,
             const int* ipiv, std::complex<float>* b, const int* ldb, int* info, std::size_t trans_len);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<double>* a, const int* lda,
             const int* ipiv, std::complex<double>* b, const int* ldb, int* info, std::size_t trans_len);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info, std::size_t uplo_len);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info, std::size_t uplo_len);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void cgeqrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, std::complex<float>* tau,
             std::complex<float>* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, std::complex<double>* tau,
             std::complex<double>* work, const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, std::complex<float>* a, const int* lda,
             const std::complex<float>* tau, std::complex<float>* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, std::complex<double>* a, const int* lda,
             const std::complex<double>* tau, std::complex<double>* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void cheevd_(const char* jobz, const char* uplo, const int* n, std::complex<float>* a, const int* lda, float* w,
             std::complex<float>* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void zheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda, double* w,
             std::complex<double>* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* info,
             std::size_t jobu_len, std::size_t jobvt_len);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* info,
             std::size_t jobu_len, std::size_t jobvt_len);
void cgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, std::complex<float>* a, const int* lda,
             float* s, std::complex<float>* u, const int* ldu, std::complex<float>* vt, const int* ldvt,
             std::complex<float>* work, const int* lwork, float* rwork, int* info, std::size_t jobu_len,
             std::size_t jobvt_len);
void zgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, std::complex<double>* a, const int* lda,
             double* s, std::complex<double>* u, const int* ldu, std::complex<double>* vt, const int* ldvt,
             std::complex<double>* work, const int* lwork, double* rwork, int* info, std::size_t jobu_len,
             std::size_t jobvt_len);
}

namespace {

static_assert(sizeof(cuComplex) == sizeof(std::complex<float>), "cuComplex: complex<float>'s layout");
static_assert(sizeof(cuDoubleComplex) == sizeof(std::complex<double>), "cuDoubleComplex: complex<double>'s layout");

/// The element type LAPACK and the emulator compute with for the CUDA element type T.
template <class T>
struct StdOf {
  using type = T;
};
template <>
struct StdOf<cuComplex> {
  using type = std::complex<float>;
};
template <>
struct StdOf<cuDoubleComplex> {
  using type = std::complex<double>;
};
template <class T>
using Std = typename StdOf<T>::type;

// LAPACK and CBLAS by element type; each returns LAPACK's info.
int lapack_getrf(int m, int n, float* a, int lda, int* ipiv) {
  int info = 0;
  sgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
int lapack_getrf(int m, int n, double* a, int lda, int* ipiv) {
  int info = 0;
  dgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
int lapack_getrf(int m, int n, std::complex<float>* a, int lda, int* ipiv) {
  int info = 0;
  cgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
int lapack_getrf(int m, int n, std::complex<double>* a, int lda, int* ipiv) {
  int info = 0;
  zgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}

int lapack_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb) {
  int info = 0;
  sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
int lapack_getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb) {
  int info = 0;
  dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
int lapack_getrs(char trans, int n, int nrhs, const std::complex<float>* a, int lda, const int* ipiv,
                 std::complex<float>* b, int ldb) {
  int info = 0;
  cgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
int lapack_getrs(char trans, int n, int nrhs, const std::complex<double>* a, int lda, const int* ipiv,
                 std::complex<double>* b, int ldb) {
  int info = 0;
  zgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

int lapack_potrf(char uplo, int n, float* a, int lda) {
  int info = 0;
  spotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
int lapack_potrf(char uplo, int n, double* a, int lda) {
  int info = 0;
  dpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
int lapack_potrf(char uplo, int n, std::complex<float>* a, int lda) {
  int info = 0;
  cpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
int lapack_potrf(char uplo, int n, std::complex<double>* a, int lda) {
  int info = 0;
  zpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}

void blas_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, float alpha, const float* a,
               int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
}
void blas_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, double alpha, const double* a,
               int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
}
void blas_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, std::complex<float> alpha,
               const std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
  cblas_ctrsm(CblasColMajor, s, u, t, d, m, n, &alpha, a, lda, b, ldb);
}
void blas_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, std::complex<double> alpha,
               const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
  cblas_ztrsm(CblasColMajor, s, u, t, d, m, n, &alpha, a, lda, b, ldb);
}

/// LU without pivoting of the column-major m x n matrix a, in place (what a null pivot array asks for), in
/// LAPACK getf2's steps: info = k when U(k,k) is exactly zero (the first such k), its column then left unscaled.
template <class S>
int lu_unpivoted(int m, int n, S* a, int lda) {
  const auto at = [&](int i, int j) -> S& { return a[i + static_cast<std::ptrdiff_t>(j) * lda]; };
  int info = 0;
  for (int k = 0; k < std::min(m, n); ++k) {
    const S pivot = at(k, k);
    if (pivot == S(0)) {
      if (info == 0) info = k + 1;
    } else {
      for (int i = k + 1; i < m; ++i) at(i, k) /= pivot;
    }
    for (int j = k + 1; j < n; ++j) {
      const S u = at(k, j);
      for (int i = k + 1; i < m; ++i) at(i, j) -= at(i, k) * u;
    }
  }
  return info;
}

/// The workspace, in elements, getrf and potrf ask for and then check (LAPACK itself needs none).
int getrf_lwork(int /*m*/, int n) { return std::max(1, n); }
int potrf_lwork(int n) { return std::max(1, n); }

/// Bytes a column-major rows x cols matrix with leading dimension ld spans.
std::size_t extent(long long rows, long long cols, long long ld, std::size_t elem) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>(ld * (cols - 1) + rows) * elem;
}

/// check_device_range for argument `arg` of call `name`.
bool device_arg(const void* p, std::size_t bytes, int device, const char* name, const char* arg) {
  char what[160];
  std::snprintf(what, sizeof what, "%s: %s", name, arg);
  return check_device_range(p, bytes, device, what);
}

/// Matrix b of the device pointer array `arr` (only inside queued work), a rows x cols matrix with leading
/// dimension ld; nullptr (reported: the work skips the matrix) when it does not lie inside one allocation of `device`.
const void* matrix_at(const void* const* arr, int b, long long rows, long long cols, int ld, std::size_t elem,
                      int device, const char* name, const char* arg) {
  const void* p = arr[b];
  char what[200];
  std::snprintf(what, sizeof what, "%s: %s[%d] (matrix skipped)", name, arg, b);
  return check_device_range(p, extent(rows, cols, ld, elem), device, what) ? p : nullptr;
}

template <class S, class P>
S* matrix_at(P const* arr, int b, long long rows, long long cols, int ld, int device, const char* name,
             const char* arg) {
  const void* p = matrix_at(reinterpret_cast<const void* const*>(arr), b, rows, cols, ld, sizeof(S), device, name, arg);
  return static_cast<S*>(const_cast<void*>(p));
}

bool valid_op(cublasOperation_t o) { return o == CUBLAS_OP_N || o == CUBLAS_OP_T || o == CUBLAS_OP_C; }
bool valid_fill(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_LOWER || u == CUBLAS_FILL_MODE_UPPER; }
char op_char(cublasOperation_t o) { return o == CUBLAS_OP_N ? 'N' : o == CUBLAS_OP_T ? 'T' : 'C'; }
char fill_char(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_LOWER ? 'L' : 'U'; }

// ---- cuBLAS: getrfBatched, getrsBatched, trsmBatched ----

/// The device and stream of cuBLAS handle `h`; `live` false for a handle the emulator does not know (the call
/// returns NOT_INITIALIZED).
struct BlasHandle {
  int device = 0;
  cudaStream_t stream = nullptr;
  bool live = false;
  explicit BlasHandle(cublasHandle_t h) : live(cublas_handle_info(h, device, stream)) {}
  /// True when the handle's device is current; reports otherwise.
  bool on_current_device(const char* name) const {
    if (current_device() == device) return true;
    report("%s: handle made on cuda:%d used while cuda:%d is current", name, device, current_device());
    return false;
  }
};

cublasStatus_t blas_queued(cudaError_t e) {
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

/// LU with partial pivoting (without, when P is null) of each n x n matrix A[b] in place: pivots at P + b * n,
/// info[b] as LAPACK's getrf.
template <class T>
cublasStatus_t getrf_batched(cublasHandle_t handle, int n, T* const A[], int lda, int* P, int* info, int batch,
                             const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cublasStatus_t>(status);
  const BlasHandle h(handle);
  if (!h.live) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n < 0 || lda < std::max(1, n) || batch < 0) {
    report("%s: invalid arguments (n %d, lda %d, batch %d)", name, n, lda, batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!h.on_current_device(name)) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  const std::size_t nb = static_cast<std::size_t>(n) * batch;
  if (!device_arg(A, batch * sizeof(void*), h.device, name, "A (pointer array)") ||
      (P && !device_arg(P, nb * sizeof(int), h.device, name, "P")) ||
      !device_arg(info, batch * sizeof(int), h.device, name, "info"))
    return CUBLAS_STATUS_INVALID_VALUE;
  return blas_queued(enqueue(h.stream, [=, device = h.device] {
    for (int b = 0; b < batch; ++b)
      if (S* a = matrix_at<S>(A, b, n, n, lda, device, name, "A"))
        info[b] = P ? lapack_getrf(n, n, a, lda, P + static_cast<std::size_t>(b) * n) : lu_unpivoted(n, n, a, lda);
  }));
}

/// Solves op(A[b]) X = B[b] in place from getrf's factors and pivots (devIpiv + b * n); *info (host) is 0 or
/// -(the invalid argument's position, not counting the handle).
template <class T>
cublasStatus_t getrs_batched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs, const T* const A[],
                             int lda, const int* ipiv, T* const B[], int ldb, int* info, int batch, const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cublasStatus_t>(status);
  const BlasHandle h(handle);
  if (!h.live) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!info) {
    report("%s: info is a null pointer", name);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *info = 0;
  if (!valid_op(trans)) *info = -1;
  else if (n < 0) *info = -2;
  else if (nrhs < 0) *info = -3;
  else if (lda < std::max(1, n)) *info = -5;
  else if (ldb < std::max(1, n)) *info = -8;
  else if (batch < 0) *info = -10;
  if (*info != 0) {
    report("%s: invalid argument %d (trans %d, n %d, nrhs %d, lda %d, ldb %d, batch %d)", name, -*info,
           static_cast<int>(trans), n, nrhs, lda, ldb, batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!h.on_current_device(name)) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (n == 0 || nrhs == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  const std::size_t nb = static_cast<std::size_t>(n) * batch;
  if (!device_arg(A, batch * sizeof(void*), h.device, name, "Aarray (pointer array)")) *info = -4;
  else if (!device_arg(ipiv, nb * sizeof(int), h.device, name, "devIpiv")) *info = -6;
  else if (!device_arg(B, batch * sizeof(void*), h.device, name, "Barray (pointer array)")) *info = -7;
  if (*info != 0) return CUBLAS_STATUS_INVALID_VALUE;
  const char op = op_char(trans);
  return blas_queued(enqueue(h.stream, [=, device = h.device] {
    for (int b = 0; b < batch; ++b) {
      const S* a = matrix_at<const S>(A, b, n, n, lda, device, name, "Aarray");
      S* x = matrix_at<S>(B, b, n, nrhs, ldb, device, name, "Barray");
      if (!a || !x) continue;
      const int* piv = ipiv + static_cast<std::size_t>(b) * n;
      if (const int* bad = std::find_if(piv, piv + n, [n](int p) { return p < 1 || p > n; }); bad != piv + n) {
        report("%s: devIpiv[%zu] = %d of matrix %d is not a pivot in [1, %d] (matrix skipped)", name,
               static_cast<std::size_t>(b) * n + (bad - piv), *bad, b, n);
        continue;
      }
      if (const int e = lapack_getrs(op, n, nrhs, a, lda, piv, x, ldb); e != 0)
        report("%s: LAPACK getrs failed with info %d on matrix %d", name, e, b);
    }
  }));
}

/// B[b] = alpha op(A[b])^-1 B[b] (left) or alpha B[b] op(A[b])^-1 (right), A[b] triangular (uplo), m x m on
/// the left, n x n on the right, B[b] m x n.
template <class T>
cublasStatus_t trsm_batched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                            cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T* alpha,
                            const T* const A[], int lda, T* const B[], int ldb, int batch, const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cublasStatus_t>(status);
  const BlasHandle h(handle);
  if (!h.live) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool left = side == CUBLAS_SIDE_LEFT;
  const int k = left ? m : n;
  if ((!left && side != CUBLAS_SIDE_RIGHT) || !valid_fill(uplo) || !valid_op(trans) ||
      (diag != CUBLAS_DIAG_NON_UNIT && diag != CUBLAS_DIAG_UNIT) || m < 0 || n < 0 || lda < std::max(1, k) ||
      ldb < std::max(1, m) || batch < 0 || !alpha) {
    report("%s: invalid arguments (side %d, uplo %d, trans %d, diag %d, m %d, n %d, lda %d, ldb %d, batch %d, "
           "alpha %p)",
           name, static_cast<int>(side), static_cast<int>(uplo), static_cast<int>(trans), static_cast<int>(diag), m,
           n, lda, ldb, batch, static_cast<const void*>(alpha));
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!h.on_current_device(name)) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  if (!device_arg(A, batch * sizeof(void*), h.device, name, "A (pointer array)") ||
      !device_arg(B, batch * sizeof(void*), h.device, name, "B (pointer array)"))
    return CUBLAS_STATUS_INVALID_VALUE;
  const S al = *reinterpret_cast<const S*>(alpha);
  const CBLAS_SIDE cs = left ? CblasLeft : CblasRight;
  const CBLAS_UPLO cu = uplo == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE ct = trans == CUBLAS_OP_N ? CblasNoTrans : trans == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
  const CBLAS_DIAG cd = diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit;
  return blas_queued(enqueue(h.stream, [=, device = h.device] {
    for (int b = 0; b < batch; ++b) {
      const S* a = matrix_at<const S>(A, b, k, k, lda, device, name, "A");
      S* x = matrix_at<S>(B, b, m, n, ldb, device, name, "B");
      if (a && x) blas_trsm(cs, cu, ct, cd, m, n, al, a, lda, x, ldb);
    }
  }));
}

// ---- cuSOLVER dense: handles, getrf, potrf, potrfBatched ----

std::set<cusolverDnHandle_t>& solver_handles() {
  static auto* s = new std::set<cusolverDnHandle_t>;
  return *s;
}

cusolverStatus_t solver_queued(cudaError_t e) {
  return e == cudaSuccess ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_EXECUTION_FAILED;
}

/// The checks every cuSOLVER entry makes before it checks its arguments: a failure a test asked for, a live handle.
/// Returns SUCCESS when the call may go on.
cusolverStatus_t solver_handle(const char* name, cusolverDnHandle_t h) {
  if (int status = 0; take_failure(name, status)) return static_cast<cusolverStatus_t>(status);
  return solver_handles().count(h) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
}

/// True when the handle's device is current; reports otherwise.
bool solver_on_current_device(const char* name, cusolverDnHandle_t h) {
  if (current_device() == h->device) return true;
  report("%s: handle made on cuda:%d used while cuda:%d is current", name, h->device, current_device());
  return false;
}

/// The bufferSize query of an m x n routine (getrf, geqrf): the handle and the arguments checked, *lwork = need(m, n).
cusolverStatus_t mn_buffer_size(cusolverDnHandle_t h, int m, int n, int lda, int* lwork, const char* name,
                                int (*need)(int, int)) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (m < 0 || n < 0 || lda < std::max(1, m) || !lwork) {
    report("%s: invalid arguments (m %d, n %d, lda %d, Lwork %p)", name, m, n, lda, static_cast<void*>(lwork));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = need(m, n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// LU with partial pivoting (without, when ipiv is null) of the m x n matrix A in place; *devInfo as LAPACK's.
template <class T>
cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T* work, int* ipiv, int* devInfo,
                       const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (m < 0 || n < 0 || lda < std::max(1, m)) {
    report("%s: invalid arguments (m %d, n %d, lda %d)", name, m, n, lda);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (m == 0 || n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, extent(m, n, lda, sizeof(T)), d, name, "A") ||
      !device_arg(work, static_cast<std::size_t>(getrf_lwork(m, n)) * sizeof(T), d, name,
                  "Workspace (getrf_bufferSize's Lwork elements)") ||
      (ipiv && !device_arg(ipiv, static_cast<std::size_t>(std::min(m, n)) * sizeof(int), d, name, "devIpiv")) ||
      !device_arg(devInfo, sizeof(int), d, name, "devInfo"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  return solver_queued(enqueue(h->stream, [=] {
    *devInfo = ipiv ? lapack_getrf(m, n, a, lda, ipiv) : lu_unpivoted(m, n, a, lda);
  }));
}

template <class T>
cusolverStatus_t potrf_buffer_size(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int lda, int* lwork,
                                   const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!valid_fill(uplo) || n < 0 || lda < std::max(1, n) || !lwork) {
    report("%s: invalid arguments (uplo %d, n %d, lda %d, Lwork %p)", name, static_cast<int>(uplo), n, lda,
           static_cast<void*>(lwork));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = potrf_lwork(n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// Cholesky factor of the n x n Hermitian positive definite A in its `uplo` triangle (the other is neither read
/// nor written); *devInfo as LAPACK's potrf.
template <class T>
cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T* A, int lda, T* work, int lwork,
                       int* devInfo, const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!valid_fill(uplo) || n < 0 || lda < std::max(1, n) || lwork < potrf_lwork(n)) {
    report("%s: invalid arguments (uplo %d, n %d, lda %d, Lwork %d where potrf_bufferSize asks for %d)", name,
           static_cast<int>(uplo), n, lda, lwork, potrf_lwork(n));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, extent(n, n, lda, sizeof(T)), d, name, "A") ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "Workspace (Lwork elements)") ||
      !device_arg(devInfo, sizeof(int), d, name, "devInfo"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  const char u = fill_char(uplo);
  return solver_queued(enqueue(h->stream, [=] { *devInfo = lapack_potrf(u, n, a, lda); }));
}

/// potrf of each n x n matrix A[b] (a device array of device pointers), infoArray[b] as LAPACK's potrf.
template <class T>
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T* A[], int lda, int* infoArray,
                               int batch, const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!valid_fill(uplo) || n < 0 || lda < std::max(1, n) || batch < 0) {
    report("%s: invalid arguments (uplo %d, n %d, lda %d, batch %d)", name, static_cast<int>(uplo), n, lda, batch);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (n == 0 || batch == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, batch * sizeof(void*), d, name, "Aarray (pointer array)") ||
      !device_arg(infoArray, batch * sizeof(int), d, name, "infoArray"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  const char u = fill_char(uplo);
  return solver_queued(enqueue(h->stream, [=] {
    for (int b = 0; b < batch; ++b)
      if (S* a = matrix_at<S>(A, b, n, n, lda, d, name, "Aarray")) infoArray[b] = lapack_potrf(u, n, a, lda);
  }));
}

// ---- cuSOLVER dense: QR (geqrf, orgqr / ungqr), eigh (syevd / heevd, syevjBatched / heevjBatched), SVD (gesvdj,
// gesvdjBatched) ----

// LAPACK by element type, with its own workspace (queried, then allocated on the host: the emulated device
// workspaces are only checked). Each returns LAPACK's info.
void lapack_geqrf_raw(int m, int n, float* a, int lda, float* tau, float* w, int lw, int& info) {
  sgeqrf_(&m, &n, a, &lda, tau, w, &lw, &info);
}
void lapack_geqrf_raw(int m, int n, double* a, int lda, double* tau, double* w, int lw, int& info) {
  dgeqrf_(&m, &n, a, &lda, tau, w, &lw, &info);
}
void lapack_geqrf_raw(int m, int n, std::complex<float>* a, int lda, std::complex<float>* tau, std::complex<float>* w,
                      int lw, int& info) {
  cgeqrf_(&m, &n, a, &lda, tau, w, &lw, &info);
}
void lapack_geqrf_raw(int m, int n, std::complex<double>* a, int lda, std::complex<double>* tau,
                      std::complex<double>* w, int lw, int& info) {
  zgeqrf_(&m, &n, a, &lda, tau, w, &lw, &info);
}

void lapack_orgqr_raw(int m, int n, int k, float* a, int lda, const float* tau, float* w, int lw, int& info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, &info);
}
void lapack_orgqr_raw(int m, int n, int k, double* a, int lda, const double* tau, double* w, int lw, int& info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, &info);
}
void lapack_orgqr_raw(int m, int n, int k, std::complex<float>* a, int lda, const std::complex<float>* tau,
                      std::complex<float>* w, int lw, int& info) {
  cungqr_(&m, &n, &k, a, &lda, tau, w, &lw, &info);
}
void lapack_orgqr_raw(int m, int n, int k, std::complex<double>* a, int lda, const std::complex<double>* tau,
                      std::complex<double>* w, int lw, int& info) {
  zungqr_(&m, &n, &k, a, &lda, tau, w, &lw, &info);
}

/// The real type of S (eigenvalues and singular values).
template <class S>
using RealOf = decltype(std::abs(S{}));

/// conj(v) for complex S, v for real S.
template <class S>
S conj_of(S v) {
  if constexpr (std::is_floating_point_v<S>)
    return v;
  else
    return std::conj(v);
}

/// LAPACK's optimal workspace size from a query's first work element.
template <class S>
int queried(S w) {
  return std::max(1, static_cast<int>(std::real(w)));
}

template <class S>
int lapack_geqrf(int m, int n, S* a, int lda, S* tau) {
  int info = 0;
  S q{};
  lapack_geqrf_raw(m, n, a, lda, tau, &q, -1, info);
  std::vector<S> work(static_cast<std::size_t>(queried(q)));
  lapack_geqrf_raw(m, n, a, lda, tau, work.data(), static_cast<int>(work.size()), info);
  return info;
}

template <class S>
int lapack_orgqr(int m, int n, int k, S* a, int lda, const S* tau) {
  int info = 0;
  S q{};
  lapack_orgqr_raw(m, n, k, a, lda, tau, &q, -1, info);
  std::vector<S> work(static_cast<std::size_t>(queried(q)));
  lapack_orgqr_raw(m, n, k, a, lda, tau, work.data(), static_cast<int>(work.size()), info);
  return info;
}

/// ?syevd / ?heevd of the n x n Hermitian a (its `uplo` triangle), eigenvalues ascending at w; eigenvectors in a
/// when jobz is 'V'.
template <class S>
int lapack_syevd(char jobz, char uplo, int n, S* a, int lda, RealOf<S>* w) {
  using R = RealOf<S>;
  int info = 0, lw = -1, liw = -1, iq = 0;
  S q{};
  if constexpr (std::is_floating_point_v<S>) {
    const auto f = [&](S* work, int* iwork) {
      if constexpr (std::is_same_v<S, float>)
        ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lw, iwork, &liw, &info, 1, 1);
      else
        dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lw, iwork, &liw, &info, 1, 1);
    };
    f(&q, &iq);
    lw = queried(q);
    liw = std::max(1, iq);
    std::vector<S> work(static_cast<std::size_t>(lw));
    std::vector<int> iwork(static_cast<std::size_t>(liw));
    f(work.data(), iwork.data());
  } else {
    int lrw = -1;
    R rq = 0;
    const auto f = [&](S* work, R* rwork, int* iwork) {
      if constexpr (std::is_same_v<R, float>)
        cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lw, rwork, &lrw, iwork, &liw, &info, 1, 1);
      else
        zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lw, rwork, &lrw, iwork, &liw, &info, 1, 1);
    };
    f(&q, &rq, &iq);
    lw = queried(q);
    lrw = std::max(1, static_cast<int>(rq));
    liw = std::max(1, iq);
    std::vector<S> work(static_cast<std::size_t>(lw));
    std::vector<R> rwork(static_cast<std::size_t>(lrw));
    std::vector<int> iwork(static_cast<std::size_t>(liw));
    f(work.data(), rwork.data(), iwork.data());
  }
  return info;
}

/// The SVD of the m x n a (destroyed) as gesvdj returns it: s descending (k = min(m, n)); with `vectors`, U (m x m,
/// or m x k when `econ`) at u and V itself (n x n, or n x k) at v, conjugate-transposed from LAPACK's V^H.
template <class S>
int lapack_gesvdj(bool vectors, bool econ, int m, int n, S* a, int lda, RealOf<S>* s, S* u, int ldu, S* v, int ldv) {
  using R = RealOf<S>;
  const int k = std::min(m, n);
  const char job = !vectors ? 'N' : econ ? 'S' : 'A';
  const int vtrows = econ ? k : n;
  std::vector<S> vt(vectors ? static_cast<std::size_t>(vtrows) * n : 1);
  S dummy{};
  S* uu = vectors ? u : &dummy;
  const int lu = vectors ? ldu : 1, lvt = vectors ? vtrows : 1;
  int info = 0, lw = -1;
  S q{};
  std::vector<R> rwork(std::is_floating_point_v<S> ? 1 : static_cast<std::size_t>(std::max(1, 5 * k)));
  const auto f = [&](S* work) {
    if constexpr (std::is_same_v<S, float>)
      sgesvd_(&job, &job, &m, &n, a, &lda, s, uu, &lu, vt.data(), &lvt, work, &lw, &info, 1, 1);
    else if constexpr (std::is_same_v<S, double>)
      dgesvd_(&job, &job, &m, &n, a, &lda, s, uu, &lu, vt.data(), &lvt, work, &lw, &info, 1, 1);
    else if constexpr (std::is_same_v<R, float>)
      cgesvd_(&job, &job, &m, &n, a, &lda, s, uu, &lu, vt.data(), &lvt, work, &lw, rwork.data(), &info, 1, 1);
    else
      zgesvd_(&job, &job, &m, &n, a, &lda, s, uu, &lu, vt.data(), &lvt, work, &lw, rwork.data(), &info, 1, 1);
  };
  f(&q);
  lw = queried(q);
  std::vector<S> work(static_cast<std::size_t>(lw));
  f(work.data());
  if (vectors)
    for (int c = 0; c < vtrows; ++c)
      for (int r = 0; r < n; ++r)
        v[r + static_cast<std::ptrdiff_t>(c) * ldv] = conj_of(vt[c + static_cast<std::size_t>(r) * vtrows]);
  return info;
}

/// The workspaces, in elements, the bufferSize calls ask for and the calls then check (LAPACK's own are the
/// emulator's business): they grow with the batch for the batched calls.
int geqrf_lwork(int /*m*/, int n) { return std::max(1, n); }
int orgqr_lwork(int n) { return std::max(1, n); }
int syevd_lwork(int n) { return std::max(1, 2 * n); }
int syevj_batched_lwork(int n, int batch) { return std::max(1, n * batch); }
int gesvdj_lwork(int m, int n) { return std::max(1, std::max(m, n)); }
int gesvdj_batched_lwork(int m, int n, int batch) { return std::max(1, std::max(m, n) * batch); }

/// The largest order the batched Jacobi routines take (documented).
constexpr int kJacobiMax = 32;

/// Bytes `batch` column-major rows x cols matrices packed ld * cols elements apart span.
std::size_t batch_extent(long long rows, long long cols, long long ld, long long batch, std::size_t elem) {
  if (batch == 0 || rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>((batch - 1) * ld * cols) * elem + extent(rows, cols, ld, elem);
}

bool valid_jobz(cusolverEigMode_t j) { return j == CUSOLVER_EIG_MODE_NOVECTOR || j == CUSOLVER_EIG_MODE_VECTOR; }

}  // namespace

// The Jacobi routines' parameters: the library's defaults (tolerance machine precision, 100 sweeps, sorted
// results), which the emulation takes as met (LAPACK's direct methods stand in for the sweeps).
struct syevjInfo {};
struct gesvdjInfo {};

namespace {

std::set<syevjInfo_t>& syevj_params() {
  static auto* s = new std::set<syevjInfo_t>;
  return *s;
}

std::set<gesvdjInfo_t>& gesvdj_params() {
  static auto* s = new std::set<gesvdjInfo_t>;
  return *s;
}

/// True when `p` is live Jacobi parameters; reports otherwise.
template <class P>
bool live_params(const std::set<P>& live, P p, const char* name) {
  if (live.count(p)) return true;
  report("%s: params %p are not live syevjInfo_t / gesvdjInfo_t", name, static_cast<void*>(p));
  return false;
}

/// QR factors of the m x n A in place (R on and above the diagonal, the Householder vectors below), the k = min(m,
/// n) scalars at TAU; *devInfo 0.
template <class T>
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T* TAU, T* work, int lwork, int* devInfo,
                       const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (m < 0 || n < 0 || lda < std::max(1, m) || lwork < geqrf_lwork(m, n)) {
    report("%s: invalid arguments (m %d, n %d, lda %d, Lwork %d where geqrf_bufferSize asks for %d)", name, m, n, lda,
           lwork, geqrf_lwork(m, n));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (m == 0 || n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, extent(m, n, lda, sizeof(T)), d, name, "A") ||
      !device_arg(TAU, static_cast<std::size_t>(std::min(m, n)) * sizeof(T), d, name, "TAU") ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "Workspace (Lwork elements)") ||
      !device_arg(devInfo, sizeof(int), d, name, "devInfo"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  S* tau = reinterpret_cast<S*>(TAU);
  return solver_queued(enqueue(h->stream, [=] { *devInfo = lapack_geqrf(m, n, a, lda, tau); }));
}

/// The orgqr / ungqr arguments' check: 0 <= k <= n <= m, lda >= max(1, m).
bool orgqr_args(int m, int n, int k, int lda) { return n >= 0 && n <= m && k >= 0 && k <= n && lda >= std::max(1, m); }

template <class T>
cusolverStatus_t orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, int lda, int* lwork, const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!orgqr_args(m, n, k, lda) || !lwork) {
    report("%s: invalid arguments (m %d, n %d, k %d, lda %d, lwork %p)", name, m, n, k, lda, static_cast<void*>(lwork));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = orgqr_lwork(n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// The first n columns of the m x m unitary Q = H(1) ... H(k) from geqrf's reflectors (the first k columns of A on
/// entry) and tau, in place; *info 0.
template <class T>
cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T* A, int lda, const T* tau, T* work, int lwork,
                       int* info, const char* name) {
  using S = Std<T>;
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!orgqr_args(m, n, k, lda) || lwork < orgqr_lwork(n)) {
    report("%s: invalid arguments (m %d, n %d, k %d, lda %d, lwork %d where the bufferSize call asks for %d)", name, m,
           n, k, lda, lwork, orgqr_lwork(n));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, extent(m, n, lda, sizeof(T)), d, name, "A") ||
      (k > 0 && !device_arg(tau, static_cast<std::size_t>(k) * sizeof(T), d, name, "tau")) ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "work (lwork elements)") ||
      !device_arg(info, sizeof(int), d, name, "info"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  const S* t = reinterpret_cast<const S*>(tau);
  return solver_queued(enqueue(h->stream, [=] { *info = lapack_orgqr(m, n, k, a, lda, t); }));
}

/// The eigen calls' argument check.
bool eig_args(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda) {
  return valid_jobz(jobz) && valid_fill(uplo) && n >= 0 && lda >= std::max(1, n);
}

template <class T>
cusolverStatus_t syevd_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda,
                                   int* lwork, const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!eig_args(jobz, uplo, n, lda) || !lwork) {
    report("%s: invalid arguments (jobz %d, uplo %d, n %d, lda %d, lwork %p)", name, static_cast<int>(jobz),
           static_cast<int>(uplo), n, lda, static_cast<void*>(lwork));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = syevd_lwork(n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// Eigenvalues (ascending, at W) and with CUSOLVER_EIG_MODE_VECTOR the orthonormal eigenvectors (the columns of A)
/// of the n x n Hermitian A, read from its `uplo` triangle; A is overwritten either way; *info as LAPACK's syevd
/// (i > 0: not converged).
template <class T, class R>
cusolverStatus_t syevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T* A, int lda, R* W,
                       T* work, int lwork, int* info, const char* name) {
  using S = Std<T>;
  static_assert(std::is_same_v<R, RealOf<S>>, "W: A's real type");
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!eig_args(jobz, uplo, n, lda) || lwork < syevd_lwork(n)) {
    report("%s: invalid arguments (jobz %d, uplo %d, n %d, lda %d, lwork %d where the bufferSize call asks for %d)",
           name, static_cast<int>(jobz), static_cast<int>(uplo), n, lda, lwork, syevd_lwork(n));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, extent(n, n, lda, sizeof(T)), d, name, "A") ||
      !device_arg(W, static_cast<std::size_t>(n) * sizeof(R), d, name, "W") ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "work (lwork elements)") ||
      !device_arg(info, sizeof(int), d, name, "info"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  const char jz = jobz == CUSOLVER_EIG_MODE_VECTOR ? 'V' : 'N', u = fill_char(uplo);
  return solver_queued(enqueue(h->stream, [=] { *info = lapack_syevd(jz, u, n, a, lda, W); }));
}

/// The batched Jacobi eigen calls' argument check (n <= 32 besides syevd's).
bool syevj_batched_args(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda, int batch) {
  return eig_args(jobz, uplo, n, lda) && n <= kJacobiMax && batch >= 0;
}

template <class T>
cusolverStatus_t syevj_batched_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                           int lda, int* lwork, syevjInfo_t params, int batch, const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!syevj_batched_args(jobz, uplo, n, lda, batch) || !lwork || !live_params(syevj_params(), params, name)) {
    report("%s: invalid arguments (jobz %d, uplo %d, n %d (at most %d), lda %d, lwork %p, batch %d)", name,
           static_cast<int>(jobz), static_cast<int>(uplo), n, kJacobiMax, lda, static_cast<void*>(lwork), batch);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = syevj_batched_lwork(n, batch);
  return CUSOLVER_STATUS_SUCCESS;
}

/// syevd of each of the `batch` n x n matrices packed lda * n elements apart from A, eigenvalues n apart at W,
/// info[i] 0, or n + 1 where matrix i did not converge (syevj's code for it).
template <class T, class R>
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T* A,
                               int lda, R* W, T* work, int lwork, int* info, syevjInfo_t params, int batch,
                               const char* name) {
  using S = Std<T>;
  static_assert(std::is_same_v<R, RealOf<S>>, "W: A's real type");
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!syevj_batched_args(jobz, uplo, n, lda, batch) || lwork < syevj_batched_lwork(n, batch) ||
      !live_params(syevj_params(), params, name)) {
    report(
        "%s: invalid arguments (jobz %d, uplo %d, n %d (at most %d), lda %d, lwork %d where the bufferSize call "
        "asks for %d, batch %d)",
        name, static_cast<int>(jobz), static_cast<int>(uplo), n, kJacobiMax, lda, lwork, syevj_batched_lwork(n, batch),
        batch);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (n == 0 || batch == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device;
  if (!device_arg(A, batch_extent(n, n, lda, batch, sizeof(T)), d, name, "A (batch matrices)") ||
      !device_arg(W, static_cast<std::size_t>(n) * batch * sizeof(R), d, name, "W") ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "work (lwork elements)") ||
      !device_arg(info, static_cast<std::size_t>(batch) * sizeof(int), d, name, "info"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  const char jz = jobz == CUSOLVER_EIG_MODE_VECTOR ? 'V' : 'N', u = fill_char(uplo);
  return solver_queued(enqueue(h->stream, [=] {
    for (int b = 0; b < batch; ++b) {
      const std::size_t i = static_cast<std::size_t>(b);
      info[b] = lapack_syevd(jz, u, n, a + i * lda * n, lda, W + i * n) > 0 ? n + 1 : 0;
    }
  }));
}

/// gesvdj's argument check.
bool gesvdj_args(cusolverEigMode_t jobz, int econ, int m, int n, int lda, int ldu, int ldv) {
  return valid_jobz(jobz) && (econ == 0 || econ == 1) && m >= 0 && n >= 0 && lda >= std::max(1, m) &&
         ldu >= std::max(1, m) && ldv >= std::max(1, n);
}

template <class T>
cusolverStatus_t gesvdj_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, int lda,
                                    int ldu, int ldv, int* lwork, gesvdjInfo_t params, const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!gesvdj_args(jobz, econ, m, n, lda, ldu, ldv) || !lwork || !live_params(gesvdj_params(), params, name)) {
    report("%s: invalid arguments (jobz %d, econ %d, m %d, n %d, lda %d, ldu %d, ldv %d, lwork %p)", name,
           static_cast<int>(jobz), econ, m, n, lda, ldu, ldv, static_cast<void*>(lwork));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = gesvdj_lwork(m, n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// The SVD A = U diag(S) V^H of the m x n A (destroyed): S descending (min(m, n)), and with
/// CUSOLVER_EIG_MODE_VECTOR U (m x m, or m x min(m, n) when `econ`) and V itself (n x n, or n x min(m, n)); U and V
/// are not referenced without vectors. *info 0, or min(m, n) + 1 when it did not converge.
template <class T, class R>
cusolverStatus_t gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, T* A, int lda, R* S_,
                        T* U, int ldu, T* V, int ldv, T* work, int lwork, int* info, gesvdjInfo_t params,
                        const char* name) {
  using S = Std<T>;
  static_assert(std::is_same_v<R, RealOf<S>>, "S: A's real type");
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!gesvdj_args(jobz, econ, m, n, lda, ldu, ldv) || lwork < gesvdj_lwork(m, n) ||
      !live_params(gesvdj_params(), params, name)) {
    report(
        "%s: invalid arguments (jobz %d, econ %d, m %d, n %d, lda %d, ldu %d, ldv %d, lwork %d where the "
        "bufferSize call asks for %d)",
        name, static_cast<int>(jobz), econ, m, n, lda, ldu, ldv, lwork, gesvdj_lwork(m, n));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (m == 0 || n == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device, k = std::min(m, n);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  if (!device_arg(A, extent(m, n, lda, sizeof(T)), d, name, "A") ||
      !device_arg(S_, static_cast<std::size_t>(k) * sizeof(R), d, name, "S") ||
      (vectors && !device_arg(U, extent(m, econ ? k : m, ldu, sizeof(T)), d, name, "U")) ||
      (vectors && !device_arg(V, extent(n, econ ? k : n, ldv, sizeof(T)), d, name, "V")) ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "work (lwork elements)") ||
      !device_arg(info, sizeof(int), d, name, "info"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  S* u = reinterpret_cast<S*>(U);
  S* v = reinterpret_cast<S*>(V);
  return solver_queued(enqueue(
      h->stream, [=] { *info = lapack_gesvdj(vectors, econ != 0, m, n, a, lda, S_, u, ldu, v, ldv) > 0 ? k + 1 : 0; }));
}

/// gesvdjBatched's argument check (m, n <= 32 besides gesvdj's, no economy mode).
bool gesvdj_batched_args(cusolverEigMode_t jobz, int m, int n, int lda, int ldu, int ldv, int batch) {
  return gesvdj_args(jobz, 0, m, n, lda, ldu, ldv) && m <= kJacobiMax && n <= kJacobiMax && batch >= 0;
}

template <class T>
cusolverStatus_t gesvdj_batched_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, int lda,
                                            int ldu, int ldv, int* lwork, gesvdjInfo_t params, int batch,
                                            const char* name) {
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!gesvdj_batched_args(jobz, m, n, lda, ldu, ldv, batch) || !lwork || !live_params(gesvdj_params(), params, name)) {
    report("%s: invalid arguments (jobz %d, m %d, n %d (both at most %d), lda %d, ldu %d, ldv %d, lwork %p, batch %d)",
           name, static_cast<int>(jobz), m, n, kJacobiMax, lda, ldu, ldv, static_cast<void*>(lwork), batch);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  *lwork = gesvdj_batched_lwork(m, n, batch);
  return CUSOLVER_STATUS_SUCCESS;
}

/// gesvdj (full U and V) of each of the `batch` m x n matrices packed lda * n elements apart from A: S min(m, n)
/// apart, U ldu * m apart, V ldv * n apart; info[i] 0, or min(m, n) + 1 where matrix i did not converge.
template <class T, class R>
cusolverStatus_t gesvdj_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, T* A, int lda, R* S_, T* U,
                                int ldu, T* V, int ldv, T* work, int lwork, int* info, gesvdjInfo_t params, int batch,
                                const char* name) {
  using S = Std<T>;
  static_assert(std::is_same_v<R, RealOf<S>>, "S: A's real type");
  Lock lk(api_mutex());
  if (const cusolverStatus_t s = solver_handle(name, h); s != CUSOLVER_STATUS_SUCCESS) return s;
  if (!gesvdj_batched_args(jobz, m, n, lda, ldu, ldv, batch) || lwork < gesvdj_batched_lwork(m, n, batch) ||
      !live_params(gesvdj_params(), params, name)) {
    report(
        "%s: invalid arguments (jobz %d, m %d, n %d (both at most %d), lda %d, ldu %d, ldv %d, lwork %d where the "
        "bufferSize call asks for %d, batch %d)",
        name, static_cast<int>(jobz), m, n, kJacobiMax, lda, ldu, ldv, lwork, gesvdj_batched_lwork(m, n, batch), batch);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (!solver_on_current_device(name, h)) return CUSOLVER_STATUS_EXECUTION_FAILED;
  if (m == 0 || n == 0 || batch == 0) return CUSOLVER_STATUS_SUCCESS;
  const int d = h->device, k = std::min(m, n);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  if (!device_arg(A, batch_extent(m, n, lda, batch, sizeof(T)), d, name, "A (batch matrices)") ||
      !device_arg(S_, static_cast<std::size_t>(k) * batch * sizeof(R), d, name, "S") ||
      (vectors && !device_arg(U, batch_extent(m, m, ldu, batch, sizeof(T)), d, name, "U (batch matrices)")) ||
      (vectors && !device_arg(V, batch_extent(n, n, ldv, batch, sizeof(T)), d, name, "V (batch matrices)")) ||
      !device_arg(work, static_cast<std::size_t>(lwork) * sizeof(T), d, name, "work (lwork elements)") ||
      !device_arg(info, static_cast<std::size_t>(batch) * sizeof(int), d, name, "info"))
    return CUSOLVER_STATUS_INVALID_VALUE;
  S* a = reinterpret_cast<S*>(A);
  S* u = reinterpret_cast<S*>(U);
  S* v = reinterpret_cast<S*>(V);
  return solver_queued(enqueue(h->stream, [=] {
    for (int b = 0; b < batch; ++b) {
      const std::size_t i = static_cast<std::size_t>(b);
      info[b] = lapack_gesvdj(vectors, false, m, n, a + i * lda * n, lda, S_ + i * k, vectors ? u + i * ldu * m : u,
                              ldu, vectors ? v + i * ldv * n : v, ldv) > 0
                    ? k + 1
                    : 0;
    }
  }));
}

/// Creates Jacobi parameters of type P (syevjInfo_t or gesvdjInfo_t) into *p.
template <class P>
cusolverStatus_t create_params(P* p, std::set<P>& live, const char* name) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cusolverStatus_t>(status);
  if (!p) return CUSOLVER_STATUS_INVALID_VALUE;
  *p = new std::remove_pointer_t<P>;
  live.insert(*p);
  return CUSOLVER_STATUS_SUCCESS;
}

template <class P>
cusolverStatus_t destroy_params(P p, std::set<P>& live, const char* name) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure(name, status)) return static_cast<cusolverStatus_t>(status);
  if (!live.erase(p)) {
    report("%s: params %p are not live", name, static_cast<void*>(p));
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  delete p;
  return CUSOLVER_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

// ---- cuBLAS ----

cublasStatus_t cublasSgetrfBatched(cublasHandle_t h, int n, float* const A[], int lda, int* P, int* info, int batch) {
  return getrf_batched(h, n, A, lda, P, info, batch, "cublasSgetrfBatched");
}

cublasStatus_t cublasDgetrfBatched(cublasHandle_t h, int n, double* const A[], int lda, int* P, int* info, int batch) {
  return getrf_batched(h, n, A, lda, P, info, batch, "cublasDgetrfBatched");
}

cublasStatus_t cublasCgetrfBatched(cublasHandle_t h, int n, cuComplex* const A[], int lda, int* P, int* info,
                                   int batch) {
  return getrf_batched(h, n, A, lda, P, info, batch, "cublasCgetrfBatched");
}

cublasStatus_t cublasZgetrfBatched(cublasHandle_t h, int n, cuDoubleComplex* const A[], int lda, int* P, int* info,
                                   int batch) {
  return getrf_batched(h, n, A, lda, P, info, batch, "cublasZgetrfBatched");
}

cublasStatus_t cublasSgetrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs, const float* const A[],
                                   int lda, const int* ipiv, float* const B[], int ldb, int* info, int batch) {
  return getrs_batched(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch, "cublasSgetrsBatched");
}

cublasStatus_t cublasDgetrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs, const double* const A[],
                                   int lda, const int* ipiv, double* const B[], int ldb, int* info, int batch) {
  return getrs_batched(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch, "cublasDgetrsBatched");
}

cublasStatus_t cublasCgetrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs,
                                   const cuComplex* const A[], int lda, const int* ipiv, cuComplex* const B[], int ldb,
                                   int* info, int batch) {
  return getrs_batched(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch, "cublasCgetrsBatched");
}

cublasStatus_t cublasZgetrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs,
                                   const cuDoubleComplex* const A[], int lda, const int* ipiv,
                                   cuDoubleComplex* const B[], int ldb, int* info, int batch) {
  return getrs_batched(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch, "cublasZgetrsBatched");
}

cublasStatus_t cublasStrsmBatched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                                  cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const float* alpha,
                                  const float* const A[], int lda, float* const B[], int ldb, int batch) {
  return trsm_batched(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch, "cublasStrsmBatched");
}

cublasStatus_t cublasDtrsmBatched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                                  cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const double* alpha,
                                  const double* const A[], int lda, double* const B[], int ldb, int batch) {
  return trsm_batched(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch, "cublasDtrsmBatched");
}

cublasStatus_t cublasCtrsmBatched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                                  cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                  const cuComplex* alpha, const cuComplex* const A[], int lda, cuComplex* const B[],
                                  int ldb, int batch) {
  return trsm_batched(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch, "cublasCtrsmBatched");
}

cublasStatus_t cublasZtrsmBatched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                                  cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                  const cuDoubleComplex* alpha, const cuDoubleComplex* const A[], int lda,
                                  cuDoubleComplex* const B[], int ldb, int batch) {
  return trsm_batched(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch, "cublasZtrsmBatched");
}

// ---- cuSOLVER dense ----

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure("cusolverDnCreate", status)) return static_cast<cusolverStatus_t>(status);
  if (!handle) return CUSOLVER_STATUS_INVALID_VALUE;
  auto* c = new cusolverDnContext;
  c->device = current_device();
  solver_handles().insert(c);
  *handle = c;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure("cusolverDnDestroy", status)) return static_cast<cusolverStatus_t>(status);
  if (!solver_handles().erase(handle)) return CUSOLVER_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure("cusolverDnSetStream", status)) return static_cast<cusolverStatus_t>(status);
  if (!solver_handles().count(handle)) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (stream_device(stream, "cusolverDnSetStream") != handle->device) {
    report("cusolverDnSetStream: stream of another device than the handle's cuda:%d", handle->device);
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  handle->stream = stream;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t* stream) {
  Lock lk(api_mutex());
  if (int status = 0; take_failure("cusolverDnGetStream", status)) return static_cast<cusolverStatus_t>(status);
  if (!solver_handles().count(handle)) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!stream) return CUSOLVER_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, float*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnSgetrf_bufferSize", getrf_lwork);
}

cusolverStatus_t cusolverDnDgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, double*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnDgetrf_bufferSize", getrf_lwork);
}

cusolverStatus_t cusolverDnCgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, cuComplex*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnCgetrf_bufferSize", getrf_lwork);
}

cusolverStatus_t cusolverDnZgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, cuDoubleComplex*, int lda,
                                             int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnZgetrf_bufferSize", getrf_lwork);
}

cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t h, int m, int n, float* A, int lda, float* work, int* ipiv,
                                  int* info) {
  return getrf(h, m, n, A, lda, work, ipiv, info, "cusolverDnSgetrf");
}

cusolverStatus_t cusolverDnDgetrf(cusolverDnHandle_t h, int m, int n, double* A, int lda, double* work, int* ipiv,
                                  int* info) {
  return getrf(h, m, n, A, lda, work, ipiv, info, "cusolverDnDgetrf");
}

cusolverStatus_t cusolverDnCgetrf(cusolverDnHandle_t h, int m, int n, cuComplex* A, int lda, cuComplex* work,
                                  int* ipiv, int* info) {
  return getrf(h, m, n, A, lda, work, ipiv, info, "cusolverDnCgetrf");
}

cusolverStatus_t cusolverDnZgetrf(cusolverDnHandle_t h, int m, int n, cuDoubleComplex* A, int lda,
                                  cuDoubleComplex* work, int* ipiv, int* info) {
  return getrf(h, m, n, A, lda, work, ipiv, info, "cusolverDnZgetrf");
}

cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float*, int lda,
                                             int* lwork) {
  return potrf_buffer_size<float>(h, uplo, n, lda, lwork, "cusolverDnSpotrf_bufferSize");
}

cusolverStatus_t cusolverDnDpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double*, int lda,
                                             int* lwork) {
  return potrf_buffer_size<double>(h, uplo, n, lda, lwork, "cusolverDnDpotrf_bufferSize");
}

cusolverStatus_t cusolverDnCpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuComplex*, int lda,
                                             int* lwork) {
  return potrf_buffer_size<cuComplex>(h, uplo, n, lda, lwork, "cusolverDnCpotrf_bufferSize");
}

cusolverStatus_t cusolverDnZpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuDoubleComplex*,
                                             int lda, int* lwork) {
  return potrf_buffer_size<cuDoubleComplex>(h, uplo, n, lda, lwork, "cusolverDnZpotrf_bufferSize");
}

cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A, int lda, float* work,
                                  int lwork, int* info) {
  return potrf(h, uplo, n, A, lda, work, lwork, info, "cusolverDnSpotrf");
}

cusolverStatus_t cusolverDnDpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A, int lda,
                                  double* work, int lwork, int* info) {
  return potrf(h, uplo, n, A, lda, work, lwork, info, "cusolverDnDpotrf");
}

cusolverStatus_t cusolverDnCpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuComplex* A, int lda,
                                  cuComplex* work, int lwork, int* info) {
  return potrf(h, uplo, n, A, lda, work, lwork, info, "cusolverDnCpotrf");
}

cusolverStatus_t cusolverDnZpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuDoubleComplex* A, int lda,
                                  cuDoubleComplex* work, int lwork, int* info) {
  return potrf(h, uplo, n, A, lda, work, lwork, info, "cusolverDnZpotrf");
}

cusolverStatus_t cusolverDnSpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A[], int lda,
                                         int* info, int batch) {
  return potrf_batched(h, uplo, n, A, lda, info, batch, "cusolverDnSpotrfBatched");
}

cusolverStatus_t cusolverDnDpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A[], int lda,
                                         int* info, int batch) {
  return potrf_batched(h, uplo, n, A, lda, info, batch, "cusolverDnDpotrfBatched");
}

cusolverStatus_t cusolverDnCpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuComplex* A[], int lda,
                                         int* info, int batch) {
  return potrf_batched(h, uplo, n, A, lda, info, batch, "cusolverDnCpotrfBatched");
}

cusolverStatus_t cusolverDnZpotrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, cuDoubleComplex* A[],
                                         int lda, int* info, int batch) {
  return potrf_batched(h, uplo, n, A, lda, info, batch, "cusolverDnZpotrfBatched");
}

// ---- cuSOLVER dense: QR, eigh, SVD ----

cusolverStatus_t cusolverDnSgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, float*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnSgeqrf_bufferSize", geqrf_lwork);
}

cusolverStatus_t cusolverDnDgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, double*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnDgeqrf_bufferSize", geqrf_lwork);
}

cusolverStatus_t cusolverDnCgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, cuComplex*, int lda, int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnCgeqrf_bufferSize", geqrf_lwork);
}

cusolverStatus_t cusolverDnZgeqrf_bufferSize(cusolverDnHandle_t h, int m, int n, cuDoubleComplex*, int lda,
                                             int* lwork) {
  return mn_buffer_size(h, m, n, lda, lwork, "cusolverDnZgeqrf_bufferSize", geqrf_lwork);
}

cusolverStatus_t cusolverDnSgeqrf(cusolverDnHandle_t h, int m, int n, float* A, int lda, float* tau, float* work,
                                  int lwork, int* info) {
  return geqrf(h, m, n, A, lda, tau, work, lwork, info, "cusolverDnSgeqrf");
}

cusolverStatus_t cusolverDnDgeqrf(cusolverDnHandle_t h, int m, int n, double* A, int lda, double* tau, double* work,
                                  int lwork, int* info) {
  return geqrf(h, m, n, A, lda, tau, work, lwork, info, "cusolverDnDgeqrf");
}

cusolverStatus_t cusolverDnCgeqrf(cusolverDnHandle_t h, int m, int n, cuComplex* A, int lda, cuComplex* tau,
                                  cuComplex* work, int lwork, int* info) {
  return geqrf(h, m, n, A, lda, tau, work, lwork, info, "cusolverDnCgeqrf");
}

cusolverStatus_t cusolverDnZgeqrf(cusolverDnHandle_t h, int m, int n, cuDoubleComplex* A, int lda, cuDoubleComplex* tau,
                                  cuDoubleComplex* work, int lwork, int* info) {
  return geqrf(h, m, n, A, lda, tau, work, lwork, info, "cusolverDnZgeqrf");
}

cusolverStatus_t cusolverDnSorgqr_bufferSize(cusolverDnHandle_t h, int m, int n, int k, const float*, int lda,
                                             const float*, int* lwork) {
  return orgqr_buffer_size<float>(h, m, n, k, lda, lwork, "cusolverDnSorgqr_bufferSize");
}

cusolverStatus_t cusolverDnDorgqr_bufferSize(cusolverDnHandle_t h, int m, int n, int k, const double*, int lda,
                                             const double*, int* lwork) {
  return orgqr_buffer_size<double>(h, m, n, k, lda, lwork, "cusolverDnDorgqr_bufferSize");
}

cusolverStatus_t cusolverDnCungqr_bufferSize(cusolverDnHandle_t h, int m, int n, int k, const cuComplex*, int lda,
                                             const cuComplex*, int* lwork) {
  return orgqr_buffer_size<cuComplex>(h, m, n, k, lda, lwork, "cusolverDnCungqr_bufferSize");
}

cusolverStatus_t cusolverDnZungqr_bufferSize(cusolverDnHandle_t h, int m, int n, int k, const cuDoubleComplex*, int lda,
                                             const cuDoubleComplex*, int* lwork) {
  return orgqr_buffer_size<cuDoubleComplex>(h, m, n, k, lda, lwork, "cusolverDnZungqr_bufferSize");
}

cusolverStatus_t cusolverDnSorgqr(cusolverDnHandle_t h, int m, int n, int k, float* A, int lda, const float* tau,
                                  float* work, int lwork, int* info) {
  return orgqr(h, m, n, k, A, lda, tau, work, lwork, info, "cusolverDnSorgqr");
}

cusolverStatus_t cusolverDnDorgqr(cusolverDnHandle_t h, int m, int n, int k, double* A, int lda, const double* tau,
                                  double* work, int lwork, int* info) {
  return orgqr(h, m, n, k, A, lda, tau, work, lwork, info, "cusolverDnDorgqr");
}

cusolverStatus_t cusolverDnCungqr(cusolverDnHandle_t h, int m, int n, int k, cuComplex* A, int lda,
                                  const cuComplex* tau, cuComplex* work, int lwork, int* info) {
  return orgqr(h, m, n, k, A, lda, tau, work, lwork, info, "cusolverDnCungqr");
}

cusolverStatus_t cusolverDnZungqr(cusolverDnHandle_t h, int m, int n, int k, cuDoubleComplex* A, int lda,
                                  const cuDoubleComplex* tau, cuDoubleComplex* work, int lwork, int* info) {
  return orgqr(h, m, n, k, A, lda, tau, work, lwork, info, "cusolverDnZungqr");
}

cusolverStatus_t cusolverDnSsyevd_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                             const float*, int lda, const float*, int* lwork) {
  return syevd_buffer_size<float>(h, jobz, uplo, n, lda, lwork, "cusolverDnSsyevd_bufferSize");
}

cusolverStatus_t cusolverDnDsyevd_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                             const double*, int lda, const double*, int* lwork) {
  return syevd_buffer_size<double>(h, jobz, uplo, n, lda, lwork, "cusolverDnDsyevd_bufferSize");
}

cusolverStatus_t cusolverDnCheevd_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                             const cuComplex*, int lda, const float*, int* lwork) {
  return syevd_buffer_size<cuComplex>(h, jobz, uplo, n, lda, lwork, "cusolverDnCheevd_bufferSize");
}

cusolverStatus_t cusolverDnZheevd_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                             const cuDoubleComplex*, int lda, const double*, int* lwork) {
  return syevd_buffer_size<cuDoubleComplex>(h, jobz, uplo, n, lda, lwork, "cusolverDnZheevd_bufferSize");
}

cusolverStatus_t cusolverDnSsyevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, float* A,
                                  int lda, float* W, float* work, int lwork, int* info) {
  return syevd(h, jobz, uplo, n, A, lda, W, work, lwork, info, "cusolverDnSsyevd");
}

cusolverStatus_t cusolverDnDsyevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double* A,
                                  int lda, double* W, double* work, int lwork, int* info) {
  return syevd(h, jobz, uplo, n, A, lda, W, work, lwork, info, "cusolverDnDsyevd");
}

cusolverStatus_t cusolverDnCheevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                  cuComplex* A, int lda, float* W, cuComplex* work, int lwork, int* info) {
  return syevd(h, jobz, uplo, n, A, lda, W, work, lwork, info, "cusolverDnCheevd");
}

cusolverStatus_t cusolverDnZheevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                  cuDoubleComplex* A, int lda, double* W, cuDoubleComplex* work, int lwork, int* info) {
  return syevd(h, jobz, uplo, n, A, lda, W, work, lwork, info, "cusolverDnZheevd");
}

cusolverStatus_t cusolverDnCreateSyevjInfo(syevjInfo_t* info) {
  return create_params(info, syevj_params(), "cusolverDnCreateSyevjInfo");
}

cusolverStatus_t cusolverDnDestroySyevjInfo(syevjInfo_t info) {
  return destroy_params(info, syevj_params(), "cusolverDnDestroySyevjInfo");
}

cusolverStatus_t cusolverDnSsyevjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                                                    int n, const float*, int lda, const float*, int* lwork,
                                                    syevjInfo_t params, int batch) {
  return syevj_batched_buffer_size<float>(h, jobz, uplo, n, lda, lwork, params, batch,
                                          "cusolverDnSsyevjBatched_bufferSize");
}

cusolverStatus_t cusolverDnDsyevjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                                                    int n, const double*, int lda, const double*, int* lwork,
                                                    syevjInfo_t params, int batch) {
  return syevj_batched_buffer_size<double>(h, jobz, uplo, n, lda, lwork, params, batch,
                                           "cusolverDnDsyevjBatched_bufferSize");
}

cusolverStatus_t cusolverDnCheevjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                                                    int n, const cuComplex*, int lda, const float*, int* lwork,
                                                    syevjInfo_t params, int batch) {
  return syevj_batched_buffer_size<cuComplex>(h, jobz, uplo, n, lda, lwork, params, batch,
                                              "cusolverDnCheevjBatched_bufferSize");
}

cusolverStatus_t cusolverDnZheevjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                                                    int n, const cuDoubleComplex*, int lda, const double*, int* lwork,
                                                    syevjInfo_t params, int batch) {
  return syevj_batched_buffer_size<cuDoubleComplex>(h, jobz, uplo, n, lda, lwork, params, batch,
                                                    "cusolverDnZheevjBatched_bufferSize");
}

cusolverStatus_t cusolverDnSsyevjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                         float* A, int lda, float* W, float* work, int lwork, int* info,
                                         syevjInfo_t params, int batch) {
  return syevj_batched(h, jobz, uplo, n, A, lda, W, work, lwork, info, params, batch, "cusolverDnSsyevjBatched");
}

cusolverStatus_t cusolverDnDsyevjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                         double* A, int lda, double* W, double* work, int lwork, int* info,
                                         syevjInfo_t params, int batch) {
  return syevj_batched(h, jobz, uplo, n, A, lda, W, work, lwork, info, params, batch, "cusolverDnDsyevjBatched");
}

cusolverStatus_t cusolverDnCheevjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                         cuComplex* A, int lda, float* W, cuComplex* work, int lwork, int* info,
                                         syevjInfo_t params, int batch) {
  return syevj_batched(h, jobz, uplo, n, A, lda, W, work, lwork, info, params, batch, "cusolverDnCheevjBatched");
}

cusolverStatus_t cusolverDnZheevjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                         cuDoubleComplex* A, int lda, double* W, cuDoubleComplex* work, int lwork,
                                         int* info, syevjInfo_t params, int batch) {
  return syevj_batched(h, jobz, uplo, n, A, lda, W, work, lwork, info, params, batch, "cusolverDnZheevjBatched");
}

cusolverStatus_t cusolverDnCreateGesvdjInfo(gesvdjInfo_t* info) {
  return create_params(info, gesvdj_params(), "cusolverDnCreateGesvdjInfo");
}

cusolverStatus_t cusolverDnDestroyGesvdjInfo(gesvdjInfo_t info) {
  return destroy_params(info, gesvdj_params(), "cusolverDnDestroyGesvdjInfo");
}

cusolverStatus_t cusolverDnSgesvdj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const float*, int lda, const float*, const float*, int ldu, const float*,
                                              int ldv, int* lwork, gesvdjInfo_t params) {
  return gesvdj_buffer_size<float>(h, jobz, econ, m, n, lda, ldu, ldv, lwork, params, "cusolverDnSgesvdj_bufferSize");
}

cusolverStatus_t cusolverDnDgesvdj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const double*, int lda, const double*, const double*, int ldu,
                                              const double*, int ldv, int* lwork, gesvdjInfo_t params) {
  return gesvdj_buffer_size<double>(h, jobz, econ, m, n, lda, ldu, ldv, lwork, params, "cusolverDnDgesvdj_bufferSize");
}

cusolverStatus_t cusolverDnCgesvdj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const cuComplex*, int lda, const float*, const cuComplex*, int ldu,
                                              const cuComplex*, int ldv, int* lwork, gesvdjInfo_t params) {
  return gesvdj_buffer_size<cuComplex>(h, jobz, econ, m, n, lda, ldu, ldv, lwork, params,
                                       "cusolverDnCgesvdj_bufferSize");
}

cusolverStatus_t cusolverDnZgesvdj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const cuDoubleComplex*, int lda, const double*, const cuDoubleComplex*,
                                              int ldu, const cuDoubleComplex*, int ldv, int* lwork,
                                              gesvdjInfo_t params) {
  return gesvdj_buffer_size<cuDoubleComplex>(h, jobz, econ, m, n, lda, ldu, ldv, lwork, params,
                                             "cusolverDnZgesvdj_bufferSize");
}

cusolverStatus_t cusolverDnSgesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, float* A,
                                   int lda, float* S, float* U, int ldu, float* V, int ldv, float* work, int lwork,
                                   int* info, gesvdjInfo_t params) {
  return gesvdj(h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, "cusolverDnSgesvdj");
}

cusolverStatus_t cusolverDnDgesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, double* A,
                                   int lda, double* S, double* U, int ldu, double* V, int ldv, double* work, int lwork,
                                   int* info, gesvdjInfo_t params) {
  return gesvdj(h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, "cusolverDnDgesvdj");
}

cusolverStatus_t cusolverDnCgesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, cuComplex* A,
                                   int lda, float* S, cuComplex* U, int ldu, cuComplex* V, int ldv, cuComplex* work,
                                   int lwork, int* info, gesvdjInfo_t params) {
  return gesvdj(h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, "cusolverDnCgesvdj");
}

cusolverStatus_t cusolverDnZgesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,
                                   cuDoubleComplex* A, int lda, double* S, cuDoubleComplex* U, int ldu,
                                   cuDoubleComplex* V, int ldv, cuDoubleComplex* work, int lwork, int* info,
                                   gesvdjInfo_t params) {
  return gesvdj(h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, "cusolverDnZgesvdj");
}

cusolverStatus_t cusolverDnSgesvdjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,
                                                     const float*, int lda, const float*, const float*, int ldu,
                                                     const float*, int ldv, int* lwork, gesvdjInfo_t params,
                                                     int batch) {
  return gesvdj_batched_buffer_size<float>(h, jobz, m, n, lda, ldu, ldv, lwork, params, batch,
                                           "cusolverDnSgesvdjBatched_bufferSize");
}

cusolverStatus_t cusolverDnDgesvdjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,
                                                     const double*, int lda, const double*, const double*, int ldu,
                                                     const double*, int ldv, int* lwork, gesvdjInfo_t params,
                                                     int batch) {
  return gesvdj_batched_buffer_size<double>(h, jobz, m, n, lda, ldu, ldv, lwork, params, batch,
                                            "cusolverDnDgesvdjBatched_bufferSize");
}

cusolverStatus_t cusolverDnCgesvdjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,
                                                     const cuComplex*, int lda, const float*, const cuComplex*, int ldu,
                                                     const cuComplex*, int ldv, int* lwork, gesvdjInfo_t params,
                                                     int batch) {
  return gesvdj_batched_buffer_size<cuComplex>(h, jobz, m, n, lda, ldu, ldv, lwork, params, batch,
                                               "cusolverDnCgesvdjBatched_bufferSize");
}

cusolverStatus_t cusolverDnZgesvdjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,
                                                     const cuDoubleComplex*, int lda, const double*,
                                                     const cuDoubleComplex*, int ldu, const cuDoubleComplex*, int ldv,
                                                     int* lwork, gesvdjInfo_t params, int batch) {
  return gesvdj_batched_buffer_size<cuDoubleComplex>(h, jobz, m, n, lda, ldu, ldv, lwork, params, batch,
                                                     "cusolverDnZgesvdjBatched_bufferSize");
}

cusolverStatus_t cusolverDnSgesvdjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, float* A, int lda,
                                          float* S, float* U, int ldu, float* V, int ldv, float* work, int lwork,
                                          int* info, gesvdjInfo_t params, int batch) {
  return gesvdj_batched(h, jobz, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, batch,
                        "cusolverDnSgesvdjBatched");
}

cusolverStatus_t cusolverDnDgesvdjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, double* A,
                                          int lda, double* S, double* U, int ldu, double* V, int ldv, double* work,
                                          int lwork, int* info, gesvdjInfo_t params, int batch) {
  return gesvdj_batched(h, jobz, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, batch,
                        "cusolverDnDgesvdjBatched");
}

cusolverStatus_t cusolverDnCgesvdjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, cuComplex* A,
                                          int lda, float* S, cuComplex* U, int ldu, cuComplex* V, int ldv,
                                          cuComplex* work, int lwork, int* info, gesvdjInfo_t params, int batch) {
  return gesvdj_batched(h, jobz, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, batch,
                        "cusolverDnCgesvdjBatched");
}

cusolverStatus_t cusolverDnZgesvdjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n,
                                          cuDoubleComplex* A, int lda, double* S, cuDoubleComplex* U, int ldu,
                                          cuDoubleComplex* V, int ldv, cuDoubleComplex* work, int lwork, int* info,
                                          gesvdjInfo_t params, int batch) {
  return gesvdj_batched(h, jobz, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, batch,
                        "cusolverDnZgesvdjBatched");
}
}  // extern "C"
