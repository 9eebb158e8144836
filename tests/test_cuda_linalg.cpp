// tests/test_cuda_linalg.cpp - linalg on a GPU (Note [LU on the device] in src/linalg/solve.cpp, Note [cuSOLVER
// decompositions] in src/linalg/cusolver_decomp.cpp): solve, inv, det, slogdet, solve_triangular, cholesky, qr,
// eigh and svd through cuBLAS and cuSOLVER agree with the CPU's LAPACK in every dtype and on every path (one matrix,
// a batch of small ones, a batch of larger ones, empty ones), refuse a failed factorization with the CPU's message,
// leave their inputs as they were, stay on the device, defer their checks and are captured into CUDA graphs; what is
// made of them (lu_solve, lstsq, pinv, matrix_rank, matrix_norm, cond), lu_factor of A itself, eig (on the host)
// and every gradient agree with the CPU's. The GPU cases need a GPU (or the CUDA emulation build): without one
// doctest reports them as skipped.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <phasor/phasor.hpp>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

using VT = std::vector<Tensor>;

/// batch + {rows, cols}.
Shape with_matrix(Shape batch, std::int64_t rows, std::int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

/// A well-conditioned (..., n, n) sample: 2 I + G / (2 sqrt(n)), G standard normal (singular values about 1 to 3).
Tensor well_conditioned(const Shape& batch, std::int64_t n, Dtype dt) {
  return sample(with_matrix(batch, n, n), dt) * (0.5 / std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1)))) +
         eye(n, std::nullopt, dt) * 2.0;
}

/// A Hermitian positive-definite (..., n, n) sample: G G^H / n + I.
Tensor positive_definite(const Shape& batch, std::int64_t n, Dtype dt) {
  const Tensor g = sample(with_matrix(batch, n, n), dt);
  return matmul(g, g.transpose(-1, -2).conj()) / static_cast<double>(std::max<std::int64_t>(n, 1)) + eye(n, std::nullopt, dt);
}

/// The agreement tolerance of a dtype.
double tol(Dtype dt) { return dt == float32 || dt == complex64 ? 2e-4 : 1e-11; }

/// x^H over the last two dims.
Tensor mH(const Tensor& x) { return x.transpose(-1, -2).conj(); }

/// A Hermitian (..., n, n) sample: G + G^H.
Tensor hermitian(const Shape& batch, std::int64_t n, Dtype dt) {
  const Tensor g = sample(with_matrix(batch, n, n), dt);
  return g + mH(g);
}

/// How far x^H x is from the identity (x's columns orthonormal).
double orthonormality(const Tensor& x) {
  const Tensor g = matmul(mH(x), x);
  return rel_diff(g, eye(g.size(-1), std::nullopt, g.dtype(), g.device()).expand(g.shape()));
}

/// How far |x^H y| is from the identity: x's columns are y's up to a sign (phase) each.
double same_columns(const Tensor& x, const Tensor& y) {
  const Tensor g = matmul(mH(x.to(Device::cpu())), y.to(Device::cpu())).abs();
  return rel_diff(g, eye(g.size(-1), std::nullopt, g.dtype()).expand(g.shape()));
}

/// The agreement tolerance of eigen- and singular vectors (the devices' algorithms differ: Jacobi on a GPU).
double vector_tol(Dtype dt) { return dt == float32 || dt == complex64 ? 3e-3 : 1e-8; }

/// V diag(w) V^H.
Tensor eigen_product(const Tensor& w, const Tensor& v) { return matmul(v * w.unsqueeze(-2).to(v.dtype()), mH(v)); }

/// U_k diag(s) Vh_k from the first k = s.size(-1) columns of U and rows of Vh.
Tensor svd_product(const Tensor& u, const Tensor& s, const Tensor& vh) {
  const std::int64_t k = s.size(-1);
  return matmul(u.narrow(-1, 0, k) * s.unsqueeze(-2).to(u.dtype()), vh.narrow(-2, 0, k));
}

}  // namespace

DEVICE_CASE("cuda linalg: solve, inv, det, slogdet, solve_triangular and cholesky and their gradients agree with the CPU, results on the device") {
  manual_seed(47);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = sample({2, 3, 3}, dt) * 0.3 + eye(3, std::nullopt, dt), b = sample({3, 2}, dt);
    const Tensor x = linalg::solve(a.to(dev), b.to(dev));
    CHECK(x.device() == dev);
    CHECK(rel_diff(x, linalg::solve(a, b)) <= 1e-13);
    const auto [s, l] = linalg::slogdet(a.to(dev));
    CHECK(s.device() == dev);
    CHECK(rel_diff(l, linalg::slogdet(a).second) <= 1e-13);
    grads_agree(dev, "solve", [](const VT& in) { return linalg::solve(in[0], in[1]); }, {a, b}, 1e-12);
    grads_agree(dev, "inv", [](const VT& in) { return linalg::inv(in[0]); }, {a}, 1e-12);
    grads_agree(dev, "det", [](const VT& in) { return linalg::det(in[0]); }, {a}, 1e-12);
    grads_agree(dev, "slogdet", [](const VT& in) { return linalg::slogdet(in[0]).second; }, {a}, 1e-12);
    grad2_agree(dev, "solve twice", [](const VT& in) { return linalg::solve(in[0], in[1]); }, {a, b}, 1e-10);
    for (bool upper : {true, false})
      grads_agree(dev, "solve_triangular", [upper](const VT& in) { return linalg::solve_triangular(in[0], in[1], upper); }, {a, b}, 1e-12);
    grads_agree(dev, "cholesky", [](const VT& in) {
      return linalg::cholesky(matmul(in[0], in[0].transpose(-1, -2).conj()) + eye(3, std::nullopt, in[0].dtype(), in[0].device()));
    }, {a}, 1e-12);
  }
  CHECK_THROWS_WITH_AS(linalg::solve(eye(2, std::nullopt, float64).to(dev), ones({2}, float64)), doctest::Contains("[linalg_solve]"), Error);
}

DEVICE_CASE("cuda linalg: every factorization path agrees with the CPU in every dtype") {
  manual_seed(48);
  struct Case {
    Shape batch;
    std::int64_t n;
  };
  // one matrix (cuSOLVER's getrf / potrf), a batch of small ones (the batched calls), a batch of larger ones
  // (cuSOLVER one matrix at a time), empty ones
  const std::vector<Case> cases = {{{}, 5}, {{2, 3}, 4}, {{2}, 70}, {{3}, 0}, {{0}, 3}};
  for (Dtype dt : {float32, float64, complex64, complex128})
    for (const Case& c : cases) {
      CAPTURE(dtype_name(dt));
      CAPTURE(c.n);
      CAPTURE(c.batch.size());
      const double t = tol(dt);
      const Tensor a = well_conditioned(c.batch, c.n, dt), b = sample(with_matrix(c.batch, c.n, 3), dt);
      const Tensor h = positive_definite(c.batch, c.n, dt);
      agree(dev, "solve", [](const VT& in) { return linalg::solve(in[0], in[1]); }, {a, b}, t);
      agree(dev, "solve a vector", [](const VT& in) { return linalg::solve(in[0], in[1].select(-1, 0)); }, {a, b}, t);
      agree(dev, "inv", [](const VT& in) { return linalg::inv(in[0]); }, {a}, t);
      agree(dev, "det", [](const VT& in) { return linalg::det(in[0]); }, {a}, t);
      agree(dev, "slogdet's sign", [](const VT& in) { return linalg::slogdet(in[0]).first; }, {a}, t);
      agree(dev, "slogdet's log", [](const VT& in) { return linalg::slogdet(in[0]).second; }, {a}, t);
      agree(dev, "cholesky", [](const VT& in) { return linalg::cholesky(in[0]); }, {h}, t);
      for (bool upper : {true, false})
        for (bool left : {true, false})
          for (bool unit : {false, true}) {
            CAPTURE(upper);
            CAPTURE(left);
            CAPTURE(unit);
            agree(dev, "solve_triangular", [&](const VT& in) {
              return linalg::solve_triangular(in[0], left ? in[1] : in[1].transpose(-1, -2), upper, left, unit);
            }, {a, b}, t);
          }
    }
  // a matrix that needs row swaps: the sign of its determinant comes from the pivots
  const Tensor p = from_vector<double>({0, 0, 1, 0, 1, 0, 2, 0, 0}).reshape({3, 3});
  agree(dev, "det of a permutation", [](const VT& in) { return linalg::det(in[0]); }, {p}, 0);
  CHECK(linalg::det(p.to(dev)).item<double>() == -2.0);
}

DEVICE_CASE("cuda linalg: a failed factorization is refused with the CPU's message, naming the batch element; inputs unchanged") {
  manual_seed(49);
  // one matrix, a batch of small ones, a batch of larger ones
  for (const auto& [batch, n] : std::vector<std::pair<Shape, std::int64_t>>{{{}, 4}, {{2, 3}, 4}, {{2}, 70}}) {
    CAPTURE(batch.size());
    CAPTURE(n);
    Tensor a = well_conditioned(batch, n, float64);
    Tensor last = a.reshape({-1, n, n}).select(0, a.numel() / (n * n) - 1);
    last.select(0, 1).zero_();  // the last matrix has a zero row
    const Tensor b = sample(with_matrix(batch, n, 2), float64);
    const Tensor ad = a.to(dev), bd = b.to(dev);
    const std::string want = error_of([&] { (void)linalg::solve(a, b); });
    CHECK(want.find("is singular: its LU factorization has a zero pivot") != std::string::npos);
    CHECK(error_of([&] { (void)linalg::solve(ad, bd); }) == want);
    CHECK(error_of([&] { (void)linalg::inv(ad); }) == error_of([&] { (void)linalg::inv(a); }));
    CHECK(rel_diff(ad, a) == 0);
    CHECK(rel_diff(bd, b) == 0);
    // slogdet takes it: sign 0, log|det| -inf
    agree(dev, "slogdet's sign", [](const VT& in) { return linalg::slogdet(in[0]).first; }, {a}, 0);
    agree(dev, "slogdet's log", [](const VT& in) { return linalg::slogdet(in[0]).second; }, {a}, 1e-12);
    CHECK(std::isinf(linalg::slogdet(ad).second.reshape({-1}).select(0, -1).item<double>()));
    // a zero on a triangle's diagonal
    const std::string tri = error_of([&] { (void)linalg::solve_triangular(a, b, true); });
    CHECK(tri.find("is singular: its diagonal element 1 is zero") != std::string::npos);
    CHECK(error_of([&] { (void)linalg::solve_triangular(ad, bd, true); }) == tri);
    agree(dev, "a unit triangle reads no diagonal", [](const VT& in) { return linalg::solve_triangular(in[0], in[1], true, true, true); }, {a, b}, 1e-12);
    // a matrix that is not positive-definite
    Tensor h = positive_definite(batch, n, float64);
    h.reshape({-1, n, n}).select(0, h.numel() / (n * n) - 1).select(0, 2).select(0, 2).fill_(-1.0);
    const Tensor hd = h.to(dev);
    const std::string chol = error_of([&] { (void)linalg::cholesky(h); });
    CHECK(chol.find("is not positive-definite: its leading minor of order 3 is not positive") != std::string::npos);
    CHECK(error_of([&] { (void)linalg::cholesky(hd); }) == chol);
    CHECK(rel_diff(hd, h) == 0);
  }
  CHECK(error_of([&] { (void)linalg::solve(zeros({2, 2}, float64, dev), ones({2}, float64, dev)); }) ==
        "[linalg_solve] the matrix is singular: its LU factorization has a zero pivot");
}

DEVICE_CASE("cuda linalg: solve_ex, inv_ex and cholesky_ex flag what the checked ops refuse, as the CPU's") {
  manual_seed(53);
  for (const auto& [batch, n] : std::vector<std::pair<Shape, std::int64_t>>{{{}, 4}, {{3}, 4}, {{2}, 70}}) {
    CAPTURE(batch.size());
    CAPTURE(n);
    Tensor a = well_conditioned(batch, n, float64);
    a.reshape({-1, n, n}).select(0, 0).select(1, 2).zero_();  // the first matrix: column 2 is zero
    const Tensor b = sample(with_matrix(batch, n, 2), float64);
    const auto [x, info] = linalg::solve_ex(a.to(dev), b.to(dev));
    const auto [xc, infoc] = linalg::solve_ex(a, b);
    CHECK(info.device() == dev);
    CHECK(info.shape() == batch);
    CHECK(rel_diff(info, infoc) == 0);
    CHECK(info.reshape({-1}).select(0, 0).item<std::int64_t>() > 0);  // a zero pivot (where: the CPU's, checked above)
    if (info.numel() > 1) CHECK(rel_diff(x.reshape({-1, n, 2}).select(0, 1), xc.reshape({-1, n, 2}).select(0, 1)) <= 1e-12);
    CHECK(rel_diff(linalg::inv_ex(a.to(dev)).second, infoc) == 0);
    Tensor h = positive_definite(batch, n, float64);
    h.reshape({-1, n, n}).select(0, 0).select(0, 1).select(0, 1).fill_(-1.0);
    const auto [l, hinfo] = linalg::cholesky_ex(h.to(dev));
    CHECK(rel_diff(hinfo, linalg::cholesky_ex(h).second) == 0);
    CHECK(hinfo.reshape({-1}).select(0, 0).item<std::int64_t>() == 2);
    if (hinfo.numel() > 1) CHECK(hinfo.reshape({-1}).select(0, 1).item<std::int64_t>() == 0);
  }
}

TEST_CASE("cuda linalg: the factorizations stay on the device: no host copy, and no host wait with deferred checks" * doctest::skip(!kGpu)) {
  manual_seed(50);
  const Tensor a = well_conditioned({3}, 4, float64).to(kDev), b = sample({3, 4, 2}, float64).to(kDev);
  const Tensor h = positive_definite({3}, 4, float64).to(kDev);
  Tensor x, l, t, d;
  const auto work = [&] {
    x = linalg::solve(a, b);
    l = linalg::cholesky(h);
    t = linalg::solve_triangular(l, b, false);
    d = linalg::det(a);
  };
  work();  // loads the libraries, makes the handles
  // eagerly the host reads one flag per check (solve's zero pivots, cholesky's minors, the triangle's diagonal)
  CHECK(host_copies(work) == 3);
  // the _ex forms check nothing: no host copy, no host wait
  const auto unchecked = [&] {
    x = linalg::solve_ex(a, b).first;
    l = linalg::cholesky_ex(h).first;
  };
  unchecked();
  CHECK(host_copies(unchecked) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, unchecked) <= 0);
  cuda::set_deferred_checks(true);
  work();  // makes the device's deferred check words
  CHECK(host_copies(work) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, work) <= 0);  // -1: not counted (a real GPU)
  // a singular matrix: the next synchronization reports it
  Tensor s = a.clone();
  s.select(0, 1).select(0, 0).zero_();
  CHECK(error_of([&] { x = linalg::solve(s, b); }).empty());
  CHECK(error_of([] { cuda::synchronize(); }) ==
        "[linalg_solve] the matrix at batch index (1,) is singular: its LU factorization has a zero pivot (a deferred device "
        "check: linalg_solve ran earlier; this synchronization reports it)");
  CHECK(error_of([] { cuda::synchronize(); }).empty());  // reported once
  cuda::set_deferred_checks(false);
  CHECK(rel_diff(x.to(Device::cpu()).select(0, 0), linalg::solve(a.to(Device::cpu()), b.to(Device::cpu())).select(0, 0)) <= 1e-12);
}

TEST_CASE("cuda linalg: a CUDA graph captures solve, det and cholesky; replays factor the inputs' new values" * doctest::skip(!kGpu)) {
  manual_seed(51);
  for (const Shape& batch : {Shape{}, Shape{3}}) {  // cuSOLVER's path and the batched one
    CAPTURE(batch.size());
    Tensor a = well_conditioned(batch, 5, float64).to(kDev), b = sample(with_matrix(batch, 5, 2), float64).to(kDev);
    Tensor x, d, l;
    const auto work = [&] {
      x = linalg::solve(a, b);
      d = linalg::det(a);
      l = linalg::cholesky(matmul(a, a.transpose(-1, -2)));
    };
    work();
    cuda::Graph g;
    g.capture(work);
    for (int k = 0; k < 2; ++k) {
      const Tensor ac = well_conditioned(batch, 5, float64), bc = sample(with_matrix(batch, 5, 2), float64);
      a.copy_(ac.to(kDev));
      b.copy_(bc.to(kDev));
      g.replay();
      CHECK(rel_diff(x, linalg::solve(ac, bc)) <= 1e-12);
      CHECK(rel_diff(d, linalg::det(ac)) <= 1e-12);
      CHECK(rel_diff(l, linalg::cholesky(matmul(ac, ac.transpose(-1, -2)))) <= 1e-12);
    }
    // a singular matrix: the replay reports the captured check
    a.copy_(zeros(a.shape(), float64, kDev));
    CHECK(error_of([&] { g.replay(); }).find("is singular: its LU factorization has a zero pivot (in a CUDA graph replay)") !=
          std::string::npos);
  }
}

#if PHASOR_TEST_CUDA_EMULATION
TEST_CASE("cuda linalg: a failed cuBLAS or cuSOLVER call is an error naming it; the inputs stay as they were") {
  const int kCublasExecutionFailed = 13, kCusolverExecutionFailed = 6;  // CUBLAS_/CUSOLVER_STATUS_EXECUTION_FAILED
  manual_seed(52);
  const Tensor one = well_conditioned({}, 3, float64).to(kDev), many = well_conditioned({2}, 3, complex128).to(kDev);
  const Tensor keep = one.clone();
  phasor_emu_fail_next("cusolverDnDgetrf", kCusolverExecutionFailed);
  CHECK(error_of([&] { (void)linalg::inv(one); }) == "[linalg_solve] cusolverDnDgetrf failed: CUSOLVER_STATUS_EXECUTION_FAILED (6)");
  CHECK(rel_diff(one, keep) == 0);
  phasor_emu_fail_next("cublasZgetrfBatched", kCublasExecutionFailed);
  CHECK(error_of([&] { (void)linalg::det(many); }).find("[linalg_slogdet] cublasZgetrfBatched failed: CUBLAS_STATUS_EXECUTION_FAILED") == 0);
  phasor_emu_fail_next("cublasDgetrsBatched", kCublasExecutionFailed);
  CHECK(error_of([&] { (void)linalg::solve(one, one); }).find("[linalg_solve] cublasDgetrsBatched failed") == 0);
  phasor_emu_fail_next("cublasDtrsmBatched", kCublasExecutionFailed);
  CHECK(error_of([&] { (void)linalg::solve_triangular(one, one, true); }).find("[linalg_solve_triangular] cublasDtrsmBatched failed") == 0);
  phasor_emu_fail_next("cusolverDnZpotrfBatched", kCusolverExecutionFailed);
  CHECK(error_of([&] { (void)linalg::cholesky(matmul(many, many.transpose(-1, -2).conj())); }) ==
        "[linalg_cholesky] cusolverDnZpotrfBatched failed: CUSOLVER_STATUS_EXECUTION_FAILED (6)");
  phasor_emu_fail_next("cusolverDnDpotrf", kCusolverExecutionFailed);
  CHECK(error_of([&] { (void)linalg::cholesky(matmul(one, one.transpose(-1, -2))); }).find("[linalg_cholesky] cusolverDnDpotrf failed") == 0);
  // the next calls work again
  CHECK(rel_diff(linalg::inv(one), linalg::inv(keep.to(Device::cpu()))) <= 1e-12);
}
#endif

DEVICE_CASE("cuda linalg: qr, eigh, eigvalsh, svd and svdvals agree with the CPU in every dtype, shape and path") {
  manual_seed(54);
  struct Case {
    Shape batch;
    std::int64_t m, n;
  };
  // one matrix (cuSOLVER one at a time), batches of small ones (the batched Jacobi routines for eigh and svd), a
  // batch of larger ones (one at a time again), tall, wide and empty ones
  std::vector<Case> cases;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}, Shape{0}})
    for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 5}, {6, 4}, {3, 5}, {0, 3}, {3, 0}})
      cases.push_back({batch, m, n});
  cases.push_back({{2}, 40, 35});
  cases.push_back({{2}, 35, 40});
  for (Dtype dt : {float32, float64, complex64, complex128})
    for (const Case& c : cases) {
      CAPTURE(dtype_name(dt));
      CAPTURE(c.batch.size());
      CAPTURE(c.m);
      CAPTURE(c.n);
      const double t = tol(dt), vt = vector_tol(dt);
      const std::int64_t k = std::min(c.m, c.n);
      const Tensor a = sample(with_matrix(c.batch, c.m, c.n), dt), ad = a.to(dev);
      // QR: Q R = A, Q orthonormal, R upper; Q's first k columns and R's rows are the CPU's up to a phase each
      for (const std::string mode : {"reduced", "complete"}) {
        CAPTURE(mode);
        const auto [q, r] = linalg::qr(ad, mode);
        const auto [qc, rc] = linalg::qr(a, mode);
        REQUIRE(q.shape() == qc.shape());
        REQUIRE(r.shape() == rc.shape());
        CHECK(q.device() == dev);
        CHECK(r.device() == dev);
        CHECK(rel_diff(matmul(q, r), a) <= t);
        CHECK(orthonormality(q) <= t);
        CHECK(rel_diff(r, triu(r)) == 0);
        CHECK(rel_diff(r.abs(), rc.abs()) <= t);
        CHECK(same_columns(q.narrow(-1, 0, k), qc.narrow(-1, 0, k)) <= vt);
      }
      CHECK(linalg::qr(ad, "r").first.numel() == 0);
      CHECK(rel_diff(linalg::qr(ad, "r").second.abs(), linalg::qr(a, "r").second.abs()) <= t);
      // eigh of a Hermitian matrix of order m, read from either triangle
      const Tensor h = hermitian(c.batch, c.m, dt), hd = h.to(dev);
      for (const std::string uplo : {"L", "U"}) {
        CAPTURE(uplo);
        const auto [w, v] = linalg::eigh(hd, uplo);
        const auto [wc, vc] = linalg::eigh(h, uplo);
        CHECK(w.device() == dev);
        CHECK(v.device() == dev);
        CHECK(rel_diff(w, wc) <= t);
        CHECK(rel_diff(eigen_product(w, v), h) <= t);
        CHECK(orthonormality(v) <= t);
        CHECK(same_columns(v, vc) <= vt);
        agree(dev, "eigvalsh", [&](const VT& in) { return linalg::eigvalsh(in[0], uplo); }, {h}, t);
      }
      // SVD: S as the CPU's, U diag(S) Vh = A, U and Vh unitary, the singular vectors the CPU's up to a phase each
      for (const bool full : {true, false}) {
        CAPTURE(full);
        const auto [u, s, vh] = linalg::svd(ad, full);
        const auto [uc, sc, vhc] = linalg::svd(a, full);
        REQUIRE(u.shape() == uc.shape());
        REQUIRE(vh.shape() == vhc.shape());
        CHECK(u.device() == dev);
        CHECK(s.device() == dev);
        CHECK(vh.device() == dev);
        CHECK(rel_diff(s, sc) <= t);
        CHECK(rel_diff(svd_product(u, s, vh), a) <= t);
        CHECK(orthonormality(u) <= t);
        CHECK(orthonormality(mH(vh)) <= t);
        CHECK(same_columns(u.narrow(-1, 0, k), uc.narrow(-1, 0, k)) <= vt);
        CHECK(same_columns(mH(vh.narrow(-2, 0, k)), mH(vhc.narrow(-2, 0, k))) <= vt);
      }
      agree(dev, "svdvals", [](const VT& in) { return linalg::svdvals(in[0]); }, {a}, t);
    }
}

TEST_CASE("cuda linalg: qr, eigh and svd stay on the device: no host copy, and no host wait with deferred checks" * doctest::skip(!kGpu)) {
  manual_seed(55);
  const Tensor a = sample({3, 5, 4}, float64).to(kDev), h = hermitian({3}, 5, float64).to(kDev);
  const Tensor big = sample({2, 40, 36}, complex128).to(kDev), hbig = hermitian({}, 40, complex64).to(kDev);
  Tensor q, r, w, v, u, s, vh, sb, wb;
  const auto factor = [&] { std::tie(q, r) = linalg::qr(a); };
  const auto work = [&] {
    factor();
    std::tie(w, v) = linalg::eigh(h);
    std::tie(u, s, vh) = linalg::svd(a, false);
    sb = linalg::svdvals(big);
    wb = linalg::eigvalsh(hbig);
  };
  work();  // loads the libraries, makes the handles
  // QR checks nothing: no host copy, no host wait even eagerly
  CHECK(host_copies(factor) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, factor) <= 0);
  // eagerly the host reads one convergence flag per eigh / svd
  CHECK(host_copies(work) == 4);
  cuda::set_deferred_checks(true);
  work();
  CHECK(host_copies(work) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, work) <= 0);  // -1: not counted (a real GPU)
  cuda::set_deferred_checks(false);
  CHECK(error_of([] { cuda::synchronize(); }).empty());
  const Tensor ac = a.to(Device::cpu());
  CHECK(rel_diff(matmul(q, r), ac) <= 1e-12);
  CHECK(rel_diff(s, linalg::svdvals(ac)) <= 1e-12);
  CHECK(rel_diff(w, linalg::eigvalsh(h.to(Device::cpu()))) <= 1e-12);
  CHECK(rel_diff(sb, linalg::svdvals(big.to(Device::cpu()))) <= 1e-12);
  CHECK(rel_diff(wb, linalg::eigvalsh(hbig.to(Device::cpu()))) <= 1e-4);
}

TEST_CASE("cuda linalg: a CUDA graph captures qr, eigh and svd; replays factor the inputs' new values" * doctest::skip(!kGpu)) {
  manual_seed(56);
  for (const Shape& batch : {Shape{}, Shape{3}}) {  // one matrix at a time, and the batched Jacobi routines
    CAPTURE(batch.size());
    Tensor a = sample(with_matrix(batch, 5, 4), float64).to(kDev), h = hermitian(batch, 5, float64).to(kDev);
    Tensor q, r, w, v, u, s, vh;
    const auto work = [&] {
      std::tie(q, r) = linalg::qr(a);
      std::tie(w, v) = linalg::eigh(h);
      std::tie(u, s, vh) = linalg::svd(a, false);
    };
    work();
    cuda::Graph g;
    g.capture(work);
    for (int k = 0; k < 2; ++k) {
      const Tensor ac = sample(with_matrix(batch, 5, 4), float64), hc = hermitian(batch, 5, float64);
      a.copy_(ac.to(kDev));
      h.copy_(hc.to(kDev));
      g.replay();
      CHECK(rel_diff(matmul(q, r), ac) <= 1e-12);
      CHECK(rel_diff(r.abs(), linalg::qr(ac).second.abs()) <= 1e-12);
      CHECK(orthonormality(q) <= 1e-12);
      CHECK(rel_diff(w, linalg::eigvalsh(hc)) <= 1e-12);
      CHECK(rel_diff(eigen_product(w, v), hc) <= 1e-12);
      CHECK(rel_diff(s, linalg::svdvals(ac)) <= 1e-12);
      CHECK(rel_diff(svd_product(u, s, vh), ac) <= 1e-12);
    }
  }
}

TEST_CASE("cuda linalg: lu_unpack, lu_solve and lu_factor's gradient permute on the device: no host copy with deferred checks, and a CUDA graph captures them" * doctest::skip(!kGpu)) {
  manual_seed(57);
  Tensor a = well_conditioned({3}, 5, complex128).to(kDev), b = sample({3, 5, 2}, complex128).to(kDev);
  Tensor lu, piv, p, x, xa;
  std::tie(lu, piv) = linalg::lu_factor(a);
  const auto work = [&] {
    p = std::get<0>(linalg::lu_unpack(lu, piv));
    x = linalg::lu_solve(lu, piv, b);
    xa = linalg::lu_solve(lu, piv, b, true, /*adjoint=*/true);
  };
  const auto matches_cpu = [&](const Tensor& ac, const Tensor& bc) {
    const auto [luc, pivc] = linalg::lu_factor(ac);
    CHECK(rel_diff(piv, pivc) == 0);
    CHECK(rel_diff(p, std::get<0>(linalg::lu_unpack(luc, pivc))) == 0);
    CHECK(rel_diff(x, linalg::solve(ac, bc)) <= 1e-12);
    CHECK(rel_diff(xa, linalg::solve(mH(ac), bc)) <= 1e-12);
  };
  work();  // loads the libraries, makes the handles
  // eagerly the host reads one flag per range check of given pivots (lu_unpack, each lu_solve: cuBLAS's getrs)
  CHECK(host_copies(work) == 3);
  matches_cpu(a.to(Device::cpu()), b.to(Device::cpu()));
  cuda::set_deferred_checks(true);
  work();
  CHECK(host_copies(work) == 0);
  CHECK(emu_count(kDev, EmuCounter::HostWaits, work) <= 0);  // -1: not counted (a real GPU)
  // lu_factor's gradient (and lu) permute by lu_factor's own pivots: nothing to check
  const Tensor ag = a.detach().requires_grad_(true);
  const auto backward = [&] { (linalg::lu_factor(ag).first.abs() * 1.0).sum().backward(); };
  backward();
  CHECK(host_copies(backward) == 0);
  // a pivot out of range: the next synchronization reports it; meanwhile the work permutes in range
  Tensor bad = piv.clone();
  bad.select(0, 1).select(0, 2).fill_(7);
  CHECK(error_of([&] { x = linalg::lu_solve(lu, bad, b); }).empty());
  CHECK(error_of([] { cuda::synchronize(); }) ==
        "[linalg_lu_solve] pivots must be in [1, 5], got 7 at position 2 of the matrix at batch index (1,) (a deferred "
        "device check: linalg_lu_solve ran earlier; this synchronization reports it)");
  cuda::set_deferred_checks(false);
  CHECK(error_of([&] { linalg::lu_unpack(lu, bad); }) ==
        "[lu_unpack] pivots must be in [1, 5], got 7 at position 2 of the matrix at batch index (1,)");
  // the CUDA graph: LU of the new values, then its unpacking and solves from it
  cuda::Graph g;
  g.capture([&] {
    std::tie(lu, piv) = linalg::lu_factor(a);
    work();
  });
  for (int k = 0; k < 2; ++k) {
    const Tensor ac = well_conditioned({3}, 5, complex128), bc = sample({3, 5, 2}, complex128);
    a.copy_(ac.to(kDev));
    b.copy_(bc.to(kDev));
    g.replay();
    matches_cpu(ac, bc);
  }
}

DEVICE_CASE("cuda linalg: lu_factor's gradient of a matrix taller than a block's shared permutation (8192 rows) agrees with the CPU") {
  manual_seed(58);
  const Tensor a = sample({8200, 3}, float64);
  grads_agree(dev, "lu_factor", [](const VT& in) { return linalg::lu_factor(in[0]).first; }, {a}, 1e-9);
}

#if PHASOR_TEST_CUDA_EMULATION
TEST_CASE("cuda linalg: a failed cuSOLVER decomposition call is an error naming it; the inputs stay as they were") {
  const int kCusolverExecutionFailed = 6;  // CUSOLVER_STATUS_EXECUTION_FAILED
  manual_seed(57);
  const Tensor one = sample({4, 3}, float64).to(kDev), many = hermitian({2}, 3, complex128).to(kDev);
  const Tensor one_keep = one.clone(), many_keep = many.clone();
  const auto fails = [](const char* call, const std::function<void()>& f) {
    CAPTURE(call);
    phasor_emu_fail_next(call, kCusolverExecutionFailed);
    return error_of(f);
  };
  CHECK(fails("cusolverDnDgeqrf", [&] { (void)linalg::qr(one); }) ==
        "[linalg_qr] cusolverDnDgeqrf failed: CUSOLVER_STATUS_EXECUTION_FAILED (6)");
  CHECK(fails("cusolverDnDorgqr", [&] { (void)linalg::qr(one); }).find("[linalg_qr] cusolverDnDorgqr failed") == 0);
  CHECK(fails("cusolverDnDsyevd", [&] { (void)linalg::eigh(matmul(one, mH(one))); }).find("[linalg_eigh] cusolverDnDsyevd failed") == 0);
  CHECK(fails("cusolverDnZheevjBatched", [&] { (void)linalg::eigvalsh(many); }).find("[linalg_eigh] cusolverDnZheevjBatched failed") == 0);
  CHECK(fails("cusolverDnDgesvdj", [&] { (void)linalg::svd(one); }).find("[linalg_svd] cusolverDnDgesvdj failed") == 0);
  CHECK(fails("cusolverDnZgesvdjBatched", [&] { (void)linalg::svdvals(many); }).find("[linalg_svd] cusolverDnZgesvdjBatched failed") == 0);
  CHECK(rel_diff(one, one_keep) == 0);
  CHECK(rel_diff(many, many_keep) == 0);
  // the next calls work again
  CHECK(rel_diff(linalg::svdvals(one), linalg::svdvals(one_keep.to(Device::cpu()))) <= 1e-12);
}
#endif

DEVICE_CASE("cuda linalg: lu_factor, lu, lu_unpack, lu_solve, lstsq, pinv, matrix_rank, matrix_norm, cond, eig and the decompositions' gradients agree with the CPU") {
  manual_seed(71);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double t = dt == float32 || dt == complex64 ? 2e-4 : 1e-11;
    const Tensor a = sample({2, 5, 3}, dt);
    agree(dev, "lstsq", [](const VT& in) { return linalg::lstsq(in[0], in[1]).solution; }, {a, a.narrow(-1, 0, 2)}, t * 10);
    agree(dev, "lstsq gels", [](const VT& in) { return linalg::lstsq(in[0], in[1], std::nullopt, "gels").solution; },
          {a, a.narrow(-1, 0, 2)}, t * 10);
    agree(dev, "pinv", [](const VT& in) { return linalg::pinv(in[0]); }, {a}, t * 10);
    agree(dev, "matrix_rank", [](const VT& in) { return linalg::matrix_rank(in[0]); }, {a}, 0);
    agree(dev, "matrix_norm", [](const VT& in) { return linalg::matrix_norm(in[0], "nuc"); }, {a}, t);
    agree(dev, "cond", [](const VT& in) { return linalg::cond(in[0]); }, {a}, t * 10);
    agree(dev, "eigvals", [](const VT& in) { return linalg::eigvals(in[0]); }, {a.narrow(-2, 0, 3)}, t * 10);
    // LU of A itself (tall, wide, a batch of small square ones: cuBLAS's batched LU), its unpacking and solves
    for (const Tensor& m : {a, mH(a), a.narrow(-2, 0, 3)}) {
      agree(dev, "lu_factor", [](const VT& in) { return linalg::lu_factor(in[0]).first; }, {m}, t);
      agree(dev, "lu_factor pivots", [](const VT& in) { return linalg::lu_factor(in[0]).second; }, {m}, 0);
      agree(dev, "lu_factor_ex", [](const VT& in) { return std::get<2>(linalg::lu_factor_ex(in[0])); }, {m}, 0);
      agree(dev, "lu", [](const VT& in) { const auto [p, l, u] = linalg::lu(in[0]); return matmul(p, l); }, {m}, t);
    }
    const Tensor sq3 = a.narrow(-2, 0, 3) + eye(3, std::nullopt, dt) * 3.0;
    agree(dev, "lu_unpack", [](const VT& in) {
      const auto [lu, piv] = linalg::lu_factor(in[0]);
      return std::get<0>(linalg::lu_unpack(lu, piv));
    }, {sq3}, 0);
    for (bool left : {true, false})
      for (bool adjoint : {false, true})
        agree(dev, "lu_solve", [left, adjoint](const VT& in) {
          const auto [lu, piv] = linalg::lu_factor(in[0]);
          return linalg::lu_solve(lu, piv, in[1], left, adjoint);
        }, {sq3, sample({2, 3, 3}, dt)}, t * 10);
    const auto [l, v] = linalg::eig(a.narrow(-2, 0, 3).to(dev));
    CHECK(l.device() == dev);
    CHECK(v.device() == dev);
  }
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = sample({2, 5, 3}, dt), sq = sample({4, 4}, dt);
    grads_agree(dev, "qr", [](const VT& in) { const auto [q, r] = linalg::qr(in[0]); return matmul(q, r.abs().to(q.dtype())); }, {a}, 1e-10);
    grads_agree(dev, "eigh", [](const VT& in) {
      const auto [w, v] = linalg::eigh(in[0] + mH(in[0]));
      return v.abs() * w.unsqueeze(-2);
    }, {sq}, 1e-10);
    grads_agree(dev, "svd", [](const VT& in) { const auto [u, s, vh] = linalg::svd(in[0], false); return u.abs().sum({-2}) + vh.abs().sum({-1}) * 0.5; }, {a}, 1e-10);
    grads_agree(dev, "eigvalsh", [](const VT& in) { return linalg::eigvalsh(in[0] + mH(in[0])); }, {sq}, 1e-10);
    grads_agree(dev, "svdvals", [](const VT& in) { return linalg::svdvals(in[0]); }, {a}, 1e-10);
    grads_agree(dev, "lstsq", [](const VT& in) { return linalg::lstsq(in[0], in[1], std::nullopt, "gelsd").solution; }, {a, a.narrow(-1, 0, 2) * 2.0}, 1e-9);
    grads_agree(dev, "pinv", [](const VT& in) { return linalg::pinv(in[0]); }, {a}, 1e-9);
    grads_agree(dev, "matrix_norm", [](const VT& in) { return linalg::matrix_norm(in[0], 2); }, {a}, 1e-10);
    grads_agree(dev, "cond", [](const VT& in) { return linalg::cond(in[0]); }, {a}, 1e-9);
    grads_agree(dev, "eig", [](const VT& in) { const auto [l, v] = linalg::eig(in[0]); return v.abs() * l.unsqueeze(-2); }, {sq}, 1e-9);
    grads_agree(dev, "eigvals", [](const VT& in) { return linalg::eigvals(in[0]); }, {sq}, 1e-9);
    grads_agree(dev, "lu_factor", [](const VT& in) { return linalg::lu_factor(in[0]).first; }, {a}, 1e-9);
    grads_agree(dev, "solve, left = false", [](const VT& in) { return linalg::solve(in[0], in[1], false); },
                {sq + eye(4, std::nullopt, dt) * 3.0, sample({2, 4}, dt)}, 1e-9);
    grads_agree(dev, "cholesky, upper", [](const VT& in) {
      return linalg::cholesky(matmul(in[0], mH(in[0])) + eye(4, std::nullopt, in[0].dtype(), in[0].device()), true);
    }, {sq}, 1e-9);
    grads_agree(dev, "lu", [](const VT& in) { const auto [p, l, u] = linalg::lu(in[0]); return matmul(l, u); }, {mH(a)}, 1e-9);
    grads_agree(dev, "lu_solve", [](const VT& in) {
      const auto [lu, piv] = linalg::lu_factor(in[0]);
      return linalg::lu_solve(lu, piv, in[1]);
    }, {sq + eye(4, std::nullopt, dt) * 3.0, sample({4, 2}, dt)}, 1e-9);
  }
}
