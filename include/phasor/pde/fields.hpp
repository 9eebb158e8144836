// phasor/pde/fields.hpp - data generation for operator learning: Gaussian random fields on a
// periodic grid and the Darcy flow solver of the FNO paper's benchmark (Li et al. 2021).
//
// Note [Gaussian random field normalization]
// gaussian_random_field samples the Karhunen-Loeve expansion of the stationary Gaussian field with
// covariance operator C = sigma^2 (-Laplacian + tau^2 I)^(-gamma) on the periodic box of the grid
// (volume |V| = L_0 ... L_{d-1}): C has the orthonormal eigenfunctions e_k(x) = |V|^(-1/2) exp(i k.x),
// k = 2 pi m / L (m integer per axis), with eigenvalues mu_k = sigma^2 (|k|^2 + tau^2)^(-gamma).
// The expansion is truncated to the grid's own frequencies (fftfreq's m = -(n/2) .. (n-1)/2 per
// axis, the Nyquist frequency of an even axis contributing its cosine only) and, when zero_mean,
// the k = 0 term is dropped (as the FNO paper's GaussianRF does). The samples are real with
//   E[u(x) u(y)] = |V|^(-1) sum_k mu_k cos(k.(x - y))      (pointwise variance |V|^(-1) sum_k mu_k),
// and their DFT over the grid (N = n_0 ... n_{d-1} points) has E|DFT(u)_m|^2 = N^2 mu_k / |V| for
// every retained m. They are drawn as u = Re(ifftn(N sqrt(mu_k/|V|) (xi_k + i eta_k))) with xi, eta
// independent standard normals from the generator, in float64, then cast to `dtype` (so float32 and
// float64 samples of one seed agree to float32 rounding).
// FNO's GaussianRF(dim, size, alpha, tau, sigma) on [0,1)^d uses (4 pi^2 |m|^2 + tau^2)^(-alpha/2)
// with an extra factor sqrt(2) in the amplitude: its samples have twice this variance, i.e. they
// are ours with gamma = alpha and sigma multiplied by sqrt(2).
//
// Note [Darcy discretization]
// darcy_solve solves -div(a grad u) = f on the unit square with u = 0 on the boundary, a and f given
// at the s x s nodes x_i = i h, y_j = j h, h = 1/(s-1), boundary included (as the FNO paper's 421 x
// 421 Darcy data); dim -2 is x and dim -1 is y. At each interior node the 5-point scheme
//   [ (a_E + a_W + a_N + a_S) u_P - a_E u_E - a_W u_W - a_N u_N - a_S u_S ] / h^2 = f_P
// uses face coefficients a_E = avg(a_P, a_E) etc.: the arithmetic mean (a_P + a_Q)/2 by default (the
// FNO data generator's choice), or the harmonic mean 2 a_P a_Q / (a_P + a_Q). The symmetric positive
// definite system of the (s-2)^2 interior unknowns is solved by a sparse Cholesky (LDL^T)
// factorization; a batch is solved in parallel. The scheme is second-order accurate for smooth a.
//
// Note [Darcy gradient]
// darcy_solve is differentiable in a and in a tensor f. With A(a) u = f over the interior and
// lam = A^-1 (dL/du) (A is symmetric, so this adjoint is one more darcy_solve with dL/du as the
// source; boundary entries of dL/du are ignored because u = 0 there), dL/df = lam (zero on the
// boundary) and, for each face between nodes P and Q with coefficient c = avg(a_P, a_Q),
// dL/dc = -(lam_P - lam_Q)(u_P - u_Q) / h^2 (lam and u taken 0 on the boundary), passed on to
// a_P and a_Q through the average's partial derivatives (1/2 each, or 2 a_Q^2/(a_P + a_Q)^2 and
// 2 a_P^2/(a_P + a_Q)^2). The backward is written with darcy_solve and public ops, so second
// derivatives work too. Each backward costs one more factorization per sample.
#pragma once
#include <cstdint>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/pde/grid.hpp"
#include "phasor/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::pde {

/// `batch` samples (shape (batch, n...)) of the Gaussian random field N(0, sigma^2 (-Laplacian + tau^2 I)^(-gamma))
/// on the periodic grid (Note [Gaussian random field normalization]); `gen` defaults to the default generator;
/// zero_mean drops the k = 0 mode (needs tau > 0 otherwise); sampled on `device` (a seed gives the CPU's numbers
/// up to FFT rounding). Not differentiable.
Tensor gaussian_random_field(const Grid& g, std::int64_t batch, double sigma, double tau, double gamma,
                             Dtype dtype = float32, Generator* gen = nullptr, bool zero_mean = true,
                             Device device = Device::cpu());

/// Closed-form pointwise variance of gaussian_random_field's samples: |V|^(-1) sum_k sigma^2 (|k|^2 + tau^2)^(-gamma).
double gaussian_random_field_variance(const Grid& g, double sigma, double tau, double gamma, bool zero_mean = true);

/// How darcy_solve averages the nodal coefficient onto the faces between two nodes.
enum class FaceAverage {
  arithmetic,  ///< (a_P + a_Q) / 2 (the FNO data generator's choice)
  harmonic     ///< 2 a_P a_Q / (a_P + a_Q)
};

/// Darcy flow -div(a grad u) = f on the unit square, u = 0 on the boundary (Note [Darcy discretization]):
/// a (s, s) or (batch, s, s), s >= 3, positive and finite, float32/float64, on the CPU (a sparse Cholesky on the
/// host: CUDA tensors throw; move them with .to(Device::cpu())); returns u shaped like a.
/// Differentiable in a (Note [Darcy gradient]).
Tensor darcy_solve(const Tensor& a, double f = 1.0, FaceAverage faces = FaceAverage::arithmetic);
/// darcy_solve with a nodal source f of shape (s, s) or a's shape (only its interior values are used);
/// differentiable in a and f.
Tensor darcy_solve(const Tensor& a, const Tensor& f, FaceAverage faces = FaceAverage::arithmetic);

/// The FNO paper's Darcy coefficient: `hi` where grf >= 0, else `lo` (same shape and dtype as grf); piecewise
/// constant, so the result carries no autograd history.
Tensor darcy_coefficient(const Tensor& grf, double hi = 12.0, double lo = 3.0);

}  // namespace phasor::pde
