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

#include "autodiff/node.hpp"
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

/// Shape and dtype checks of darcy_solve's inputs (values are checked by the kernel).
void check_inputs(const char* op, const Tensor& a, const Tensor* f) {
  if (!a.defined()) throw Error(op, "undefined coefficient");
  if (!(a.dim() == 2 || a.dim() == 3) || a.size(-1) != a.size(-2))
    throw Error(op, "coefficient a must be (s, s) or (batch, s, s) on the nodes of the unit square, got shape " +
                        shape_str(a.shape()));
  const std::int64_t s = a.size(-1);
  if (s < 3) throw Error(op, "grid size s = " + std::to_string(s) + " leaves no interior node (need s >= 3)");
  if (!a.is_floating_point())
    throw Error(op, std::string("coefficient a must be float32 or float64, got ") + dtype_name(a.dtype()));
  ::phasor::detail::check_cpu(a, op);
  if (!f) return;
  if (!f->defined()) throw Error(op, "undefined source f");
  if (!(f->shape() == Shape{s, s} || f->shape() == a.shape()))
    throw Error(op, "source f of shape " + shape_str(f->shape()) + " must be (s, s) = " + shape_str(Shape{s, s}) +
                        " or the coefficient's shape " + shape_str(a.shape()));
  if (!(f->is_floating_point() || f->dtype() == int64))
    throw Error(op, std::string("source f must be real, got ") + dtype_name(f->dtype()));
  ::phasor::detail::check_cpu(*f, op);
  ::phasor::detail::check_same_device(a, *f, op);  // virtual CPU devices (set_cpu_device_count) do not mix either
}

/// The forward kernel: u for coefficient a and source f (both checked), in a's dtype.
Tensor solve_kernel(const char* op, const Tensor& a, const Tensor& f, FaceAverage faces) {
  const std::int64_t s = a.size(-1);
  const std::int64_t batch = a.dim() == 3 ? a.size(0) : 1;
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
  const Tensor fd = f.detach().to(float64).contiguous();
  const double* fv = fd.data<const double>();
  const bool f_batched = a.dim() == 3 && fd.dim() == 3;

  Tensor u = zeros(a.shape(), float64, a.device());
  double* uv = u.data<double>();
  const std::int64_t m = s - 2;
  std::atomic<std::int64_t> failed{-1};
  // one thread per sample pays off only when each factorization is substantial (a parallel region
  // costs far more than a tiny solve, especially on a loaded machine)
#pragma omp parallel if (batch > 1 && m * m >= 2500)
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
      const double* fb = fv + (f_batched ? b * nn : 0);
      for (std::int64_t i = 1; i <= m; ++i)
        for (std::int64_t j = 1; j <= m; ++j) rhs[(i - 1) * m + (j - 1)] = fb[i * s + j];
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

/// dL/da from the solution u and the adjoint lam = A^-1 dL/du (Note [Darcy gradient]), public ops only.
Tensor coefficient_grad(const Tensor& a, const Tensor& u, const Tensor& lam, FaceAverage faces) {
  const std::int64_t s = a.size(-1);
  const double inv_h2 = static_cast<double>((s - 1) * (s - 1));
  Tensor ga;
  for (std::int64_t dim : {-2, -1}) {
    auto lo = [&](const Tensor& t) { return t.narrow(dim, 0, s - 1); };
    auto hi = [&](const Tensor& t) { return t.narrow(dim, 1, s - 1); };
    // dL/dc for the face between nodes P (lo) and Q (hi) along dim
    const Tensor gc = (hi(lam) - lo(lam)) * (hi(u) - lo(u)) * (-inv_h2);
    Tensor gp, gq;
    if (faces == FaceAverage::arithmetic) {
      gp = gq = gc * 0.5;
    } else {
      const Tensor p = lo(a), q = hi(a);
      const Tensor w = gc * 2.0 / (p + q).square();
      gp = w * q.square();
      gq = w * p.square();
    }
    // P = nodes 0 .. s-2 (one zero appended along dim), Q = nodes 1 .. s-1 (one zero prepended)
    const Shape pad_p = dim == -1 ? Shape{0, 1} : Shape{0, 0, 0, 1};
    const Shape pad_q = dim == -1 ? Shape{1, 0} : Shape{0, 0, 1, 0};
    const Tensor contrib = pad(gp, pad_p) + pad(gq, pad_q);
    ga = ga.defined() ? ga + contrib : contrib;
  }
  return ga;
}

Tensor solve(const char* op, const Tensor& a, const Tensor& f_in, FaceAverage faces) {
  const Tensor f = f_in.is_floating_point() ? f_in : f_in.to(a.dtype());
  return ::phasor::detail::apply_op(
      op, {a, f}, ::phasor::detail::kSaveInputs | ::phasor::detail::kSaveOutputs,
      [op, faces](::phasor::detail::TensorList in) { return solve_kernel(op, in[0], in[1], faces); },
      [faces](const ::phasor::detail::Ctx& c, const std::vector<Tensor>& g) {
        const Tensor a = c.input(0);
        // A is symmetric: the adjoint solve is a Darcy solve with dL/du as the source
        const Tensor lam = darcy_solve(a, g[0], faces);
        Tensor ga = c.needs_grad(0) ? coefficient_grad(a, c.output(0), lam, faces) : Tensor();
        return std::vector<Tensor>{ga, c.needs_grad(1) ? lam : Tensor()};
      });
}

}  // namespace

Tensor darcy_solve(const Tensor& a, double f, FaceAverage faces) {
  const char* op = "pde::darcy_solve";
  check_inputs(op, a, nullptr);
  if (!std::isfinite(f)) {
    std::ostringstream os;
    os << "source f must be finite, got " << f;
    throw Error(op, os.str());
  }
  const std::int64_t s = a.size(-1);
  return solve(op, a, full({s, s}, f, float64, a.device()), faces);
}

Tensor darcy_solve(const Tensor& a, const Tensor& f, FaceAverage faces) {
  const char* op = "pde::darcy_solve";
  check_inputs(op, a, &f);
  return solve(op, a, f, faces);
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
