// src/pde/darcy.cpp - the Darcy flow data solver (Note [Darcy discretization] in
// phasor/pde/fields.hpp): 5-point finite differences with face-averaged coefficients, sparse
// LDL^T per sample, samples in parallel (one solver per thread; the sparsity pattern, hence the
// fill-reducing ordering, is shared by every sample and analyzed once per thread).
#include <atomic>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"
#include "phasor/pde/fields.hpp"

namespace phasor::pde {

namespace {

using ::phasor::detail::shape_str;
using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
using Solver = Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>>;

double face(double p, double q, FaceAverage faces) {
  return faces == FaceAverage::arithmetic ? 0.5 * (p + q) : 2.0 * p * q / (p + q);
}

/// The lower triangle of the interior system for coefficient a (s x s row-major, dim 0 = x).
SpMat assemble(const double* a, std::int64_t s, FaceAverage faces) {
  const std::int64_t m = s - 2;
  const double inv_h2 = static_cast<double>((s - 1) * (s - 1));
  std::vector<Eigen::Triplet<double, int>> t;
  t.reserve(static_cast<std::size_t>(3 * m * m));
  auto at = [&](std::int64_t i, std::int64_t j) { return a[i * s + j]; };
  auto id = [&](std::int64_t i, std::int64_t j) { return static_cast<int>((i - 1) * m + (j - 1)); };
  for (std::int64_t i = 1; i <= m; ++i)
    for (std::int64_t j = 1; j <= m; ++j) {
      const double p = at(i, j);
      const double e = face(p, at(i + 1, j), faces), w = face(p, at(i - 1, j), faces);
      const double n = face(p, at(i, j + 1), faces), so = face(p, at(i, j - 1), faces);
      const int r = id(i, j);
      t.emplace_back(r, r, (e + w + n + so) * inv_h2);
      // lower triangle: neighbours with a larger unknown index (i+1 or j+1)
      if (i + 1 <= m) t.emplace_back(id(i + 1, j), r, -e * inv_h2);
      if (j + 1 <= m) t.emplace_back(id(i, j + 1), r, -n * inv_h2);
    }
  SpMat A(static_cast<int>(m * m), static_cast<int>(m * m));
  A.setFromTriplets(t.begin(), t.end());
  return A;
}

Tensor solve(const char* op, const Tensor& a, const Tensor* f_tensor, double f_value, FaceAverage faces) {
  if (!a.defined()) throw Error(op, "undefined coefficient");
  if (!(a.dim() == 2 || a.dim() == 3) || a.size(-1) != a.size(-2))
    throw Error(op, "coefficient a must be (s, s) or (batch, s, s) on the nodes of the unit square, got shape " +
                        shape_str(a.shape()));
  const std::int64_t s = a.size(-1);
  if (s < 3) throw Error(op, "grid size s = " + std::to_string(s) + " leaves no interior node (need s >= 3)");
  if (!a.is_floating_point())
    throw Error(op, std::string("coefficient a must be float32 or float64, got ") + dtype_name(a.dtype()));
  const std::int64_t batch = a.dim() == 3 ? a.size(0) : 1;
  ::phasor::detail::check_cpu(a, op);
  if (f_tensor) {
    const Tensor& f = *f_tensor;
    if (!f.defined()) throw Error(op, "undefined source f");
    const bool ok = f.shape() == Shape{s, s} || f.shape() == a.shape();
    if (!ok)
      throw Error(op, "source f of shape " + shape_str(f.shape()) + " must be (s, s) = " + shape_str(Shape{s, s}) +
                          " or the coefficient's shape " + shape_str(a.shape()));
    if (!(f.is_floating_point() || f.dtype() == int64))
      throw Error(op, std::string("source f must be real, got ") + dtype_name(f.dtype()));
    ::phasor::detail::check_cpu(f, op);
  } else if (!std::isfinite(f_value)) {
    std::ostringstream os;
    os << "source f must be finite, got " << f_value;
    throw Error(op, os.str());
  }

  NoGradGuard no_grad;
  const Tensor ad = a.detach().to(float64).contiguous();
  const double* av = ad.data<const double>();
  const std::int64_t nn = s * s;
  for (std::int64_t k = 0; k < batch * nn; ++k)
    if (!(std::isfinite(av[k]) && av[k] > 0.0)) {
      std::ostringstream os;
      os << "coefficient a must be positive and finite, got " << av[k] << " at ";
      if (a.dim() == 3) os << "(" << k / nn << ", " << (k % nn) / s << ", " << k % s << ")";
      else os << "(" << k / s << ", " << k % s << ")";
      throw Error(op, os.str());
    }
  Tensor fd;
  const double* fv = nullptr;
  bool f_batched = false;
  if (f_tensor) {
    fd = f_tensor->detach().to(float64).contiguous();
    fv = fd.data<const double>();
    f_batched = a.dim() == 3 && fd.dim() == 3;
  }

  Tensor u = zeros(a.shape(), float64);
  double* uv = u.data<double>();
  const std::int64_t m = s - 2;
  std::atomic<std::int64_t> failed{-1};
#pragma omp parallel if (batch > 1)
  {
    Solver solver;
    bool analyzed = false;
    Eigen::VectorXd rhs(m * m);
#pragma omp for schedule(dynamic)
    for (std::int64_t b = 0; b < batch; ++b) {
      if (failed.load() >= 0) continue;
      const SpMat A = assemble(av + b * nn, s, faces);
      if (!analyzed) {
        solver.analyzePattern(A);
        analyzed = true;
      }
      solver.factorize(A);
      if (solver.info() != Eigen::Success) {
        failed.store(b);
        continue;
      }
      const double* fb = fv ? fv + (f_batched ? b * nn : 0) : nullptr;
      for (std::int64_t i = 1; i <= m; ++i)
        for (std::int64_t j = 1; j <= m; ++j) rhs[(i - 1) * m + (j - 1)] = fb ? fb[i * s + j] : f_value;
      const Eigen::VectorXd x = solver.solve(rhs);
      double* ub = uv + b * nn;
      for (std::int64_t i = 1; i <= m; ++i)
        for (std::int64_t j = 1; j <= m; ++j) ub[i * s + j] = x[(i - 1) * m + (j - 1)];
    }
  }
  if (failed.load() >= 0)
    throw Error(op, "sparse factorization failed for sample " + std::to_string(failed.load()));
  return u.to(a.dtype());
}

}  // namespace

Tensor darcy_solve(const Tensor& a, double f, FaceAverage faces) { return solve("pde::darcy_solve", a, nullptr, f, faces); }

Tensor darcy_solve(const Tensor& a, const Tensor& f, FaceAverage faces) {
  return solve("pde::darcy_solve", a, &f, 0.0, faces);
}

Tensor darcy_coefficient(const Tensor& grf, double hi, double lo) {
  const char* op = "pde::darcy_coefficient";
  if (!grf.defined()) throw Error(op, "undefined field");
  if (!grf.is_floating_point())
    throw Error(op, std::string("field must be float32 or float64, got ") + dtype_name(grf.dtype()));
  if (!(std::isfinite(hi) && std::isfinite(lo))) {
    std::ostringstream os;
    os << "hi and lo must be finite, got hi = " << hi << ", lo = " << lo;
    throw Error(op, os.str());
  }
  NoGradGuard no_grad;
  const Tensor g = grf.detach();
  return where(g >= 0.0, full_like(g, hi), full_like(g, lo));
}

}  // namespace phasor::pde
