// phasor/pde/solve.hpp - time stepping of semi-linear PDEs du/dt = L u + N(u, t) on a periodic grid,
// with L diagonal in Fourier space: explicit RK4, IMEX Crank-Nicolson/RK2 and /RK3, and ETDRK4;
// the equations Heat, AdvectionDiffusion, Burgers, KdV, KuramotoSivashinsky, NavierStokes2D; solve().
//
// Note [pde time stepping]
// The state lives in spectral space: the half spectrum u_hat = to_spectral(grid, u) (grid.hpp).
// An Equation gives the diagonal symbol L (a tensor broadcasting over the half spectrum, real or
// complex) and the nonlinear term N(u_hat, t) (a half spectrum). Schemes, one step of size h:
//  * rk4: classical RK4 on F = L u + N (global order 4). Fully explicit: before stepping, solve() and
//    step() throw phasor::Error when some mode with Re(L) <= 0 has |R(L h)| > 1 (R the RK4 stability
//    polynomial), reporting max|L| h.
//  * cn_rk2 / cn_rk3: the low-storage IMEX family (Spalart-Moser-Rogers form, as in jax-cfd):
//      for each stage k: g = N(u, t + a_k h) + c_k g;  m = h (a_{k+1} - a_k) / 2;
//                        u = (u + m L u + h b_k g) / (1 - m L)
//    cn_rk2 (Heun): a = (0, 1, 1), b = (1, 1/2), c = (0, -1); global order 2.
//    cn_rk3 (Williamson): a = (0, 1/3, 3/4, 1), b = (1/3, 15/16, 8/15), c = (0, -5/9, -153/128);
//    global order 2 when L != 0 (the Crank-Nicolson part limits it: measured 2.00 on heat and on a
//    forced relaxation ODE), 3 for L = 0; while N dominates the error it looks like ~2.8 (viscous
//    Burgers, nu = 0.1, in the tests). The step-doubling estimate uses 2.
//  * etdrk4: Cox-Matthews ETDRK4 with Kassam & Trefethen's (2005) coefficients, the phi functions
//    evaluated by averaging over M (SolveOptions::contour_points, default 32) points on the unit circle
//    around each L h, written with public complex ops (differentiable w.r.t. L's parameters); global
//    order 4; exact for a constant N. The coefficients are computed once per (solve, step size), or
//    once per Integrator.
// Advective CFL: where an Equation reports velocities (Equation::max_velocity), solve() throws when
// C = h * sum_i max|v_i| / dx_i exceeds SolveOptions::max_cfl (default 1.5: beyond it even the 2/3-
// dealiased top mode has |v k h| > pi > 2.83, outside every explicit scheme's stability region).
// It is checked on u0 and at every finiteness check. A non-finite state found at a check is traced
// back (replaying from the last finite state) to the first step that produced it; the Error names
// that step (1-based) and its time. t_end not a multiple of dt: the last step is shortened to land on
// t_end exactly (SolveOptions::partial_last_step, default), or, with partial_last_step = false,
// phasor::Error. Steps whose count n = t_end / dt lies within 1e-9 n of an integer count as exact.
//
// Note [pde devices]
// The same code runs on a GPU: pass a CUDA field u0 (or a CUDA half spectrum to step/Integrator) and
// everything is computed on its device (cuFFT, CUDA kernels). The rule for where things live:
//  * The state decides: the spectral multipliers, nonlinear terms and steps run on the state's device.
//  * An equation's tensor parameters (nu, velocity, alpha, beta, drag, forcing) may live on the CPU or
//    on a CUDA device, but all on ONE device (the equation's device; its scalar-valued parameters are
//    made on the CPU, or on the device of a tensor forcing). Parameters on different devices throw
//    phasor::Error naming the devices. linear() is computed on the equation's device.
//  * Parameters reach the state's device through Tensor::to(device), which is differentiable: a CPU
//    parameter that requires grad gets its gradient (on the CPU) from a GPU rollout.
//  * Stepper coefficients are computed once per solve / step call / Integrator on L's device (ETDRK4's
//    contour integrals in complex128) and moved to the state's device once, never per step; an
//    Integrator keeps one copy per device. Parameters that do not require grad and are used by
//    nonlinear() (KdV's alpha, NavierStokes2D's forcing spectrum) are copied to a state's device once per
//    equation (later in-place changes of such a parameter are not seen on that device); ones that require
//    grad are moved inside the graph on every evaluation (put them on the state's device to avoid it).
//  * Host reads (finiteness / CFL / stability checks) happen once per check_every steps, not per step.
//  * A user Equation whose nonlinear() returns a tensor on another device than the state throws.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phasor/pde/grid.hpp"
#include "phasor/tensor.hpp"

namespace phasor::pde {

namespace detail {
struct SpectralCache;  // constant spectral multipliers of an equation (internal)
class DeviceCopies;    // tensors copied to other devices on first use (internal)
}  // namespace detail

/// Time-stepping scheme for du/dt = L u + N(u, t) (Note [pde time stepping]).
enum class Stepper {
  rk4,     ///< classical explicit RK4 on L u + N (order 4, explicit stability limit on |L| dt)
  cn_rk2,  ///< IMEX Crank-Nicolson for L + Heun (RK2) for N (order 2)
  cn_rk3,  ///< IMEX Crank-Nicolson for L + Williamson low-storage RK3 for N (order 2; 3 when L = 0)
  etdrk4   ///< exponential time differencing RK4, Kassam-Trefethen contour coefficients (order 4)
};

/// The stepper's name: "rk4", "cn_rk2", "cn_rk3" or "etdrk4".
std::string to_string(Stepper s);
/// The stepper's global order of accuracy as used by the step-doubling estimate (4, 2, 2, 4).
int order(Stepper s);

/// An equation du/dt = L u + N(u, t) on a periodic grid, advanced in spectral space (half spectrum).
class Equation {
 public:
  /// Virtual destructor.
  virtual ~Equation();
  /// The grid the fields live on.
  virtual const Grid& grid() const = 0;
  /// Diagonal symbol of L, broadcasting over the half spectrum (real or complex; may carry grad).
  virtual Tensor linear() const = 0;
  /// N(u_hat, t) as a half spectrum of u_hat's shape and dtype (dealiased as the equation chooses).
  virtual Tensor nonlinear(const Tensor& u_hat, double t) const = 0;
  /// A short name, e.g. "Burgers(nu=0.1)".
  virtual std::string name() const = 0;
  /// Largest |advecting velocity| along each grid axis in state u_hat (empty: no advective CFL check).
  virtual std::vector<double> max_velocity(const Tensor& u_hat) const;
  /// The tensors linear() and nonlinear() depend on (parameters one may differentiate w.r.t.).
  virtual std::vector<Tensor> parameters() const;
  /// A copy whose parameters() are `params` (same order); used by checkpointed solves. The default
  /// returns null, which solve() accepts only when no parameter needs a gradient.
  virtual std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const;
};

/// Heat / diffusion equation u_t = nu laplacian(u) (any d); L = -nu |k|^2, N = 0.
class Heat : public Equation {
 public:
  /// Diffusivity nu >= 0.
  Heat(Grid grid, double nu);
  /// Diffusivity as a one-element real tensor (differentiable).
  Heat(Grid grid, Tensor nu);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// -nu |k|^2.
  Tensor linear() const override;
  /// Zero.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "Heat(nu=...)".
  std::string name() const override;
  /// {nu}.
  std::vector<Tensor> parameters() const override { return {nu_}; }
  /// Copy with nu replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;
  /// The diffusivity (0-d tensor).
  const Tensor& nu() const { return nu_; }

 private:
  Grid grid_;
  Tensor nu_;
};

/// The diffusion equation is the heat equation.
using Diffusion = Heat;

/// Linear advection-diffusion u_t + c . grad(u) = nu laplacian(u); L = -i c.k - nu |k|^2, N = 0
/// (the odd part drops the Nyquist modes, Note [pde grid conventions]).
class AdvectionDiffusion : public Equation {
 public:
  /// Constant velocity c (d entries) and diffusivity nu >= 0.
  AdvectionDiffusion(Grid grid, std::vector<double> velocity, double nu);
  /// Velocity as a real tensor of shape (d,) and nu as a one-element real tensor (differentiable).
  AdvectionDiffusion(Grid grid, Tensor velocity, Tensor nu);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// -i c.k - nu |k|^2 (complex).
  Tensor linear() const override;
  /// Zero.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "AdvectionDiffusion(c=[..], nu=...)".
  std::string name() const override;
  /// {velocity, nu}.
  std::vector<Tensor> parameters() const override { return {velocity_, nu_}; }
  /// Copy with velocity and nu replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;

 private:
  Grid grid_;
  Tensor velocity_, nu_;
};

/// Viscous Burgers u_t + u u_x = nu u_xx on a 1-D grid; L = -nu k^2, N = -(1/2) i k dealias(FFT(u^2))
/// with u taken from the 2/3-truncated spectrum.
class Burgers : public Equation {
 public:
  /// Viscosity nu >= 0.
  Burgers(Grid grid, double nu);
  /// Viscosity as a one-element real tensor (differentiable).
  Burgers(Grid grid, Tensor nu);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// -nu k^2.
  Tensor linear() const override;
  /// -(1/2) d(u^2)/dx, dealiased.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "Burgers(nu=...)".
  std::string name() const override;
  /// {max |u|}.
  std::vector<double> max_velocity(const Tensor& u_hat) const override;
  /// {nu}.
  std::vector<Tensor> parameters() const override { return {nu_}; }
  /// Copy with nu replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;

 private:
  Grid grid_;
  Tensor nu_;
  std::shared_ptr<const detail::SpectralCache> ops_;
};

/// Korteweg-de Vries u_t + alpha u u_x + beta u_xxx = 0 on a 1-D grid (default alpha = 6, beta = 1,
/// whose soliton is u = (c/2) sech^2(sqrt(c)/2 (x - c t - x0))); L = i beta k^3 (Nyquist dropped),
/// N = -(alpha/2) i k dealias(FFT(u^2)).
class KdV : public Equation {
 public:
  /// Coefficients alpha and beta.
  explicit KdV(Grid grid, double alpha = 6.0, double beta = 1.0);
  /// Coefficients as one-element real tensors (differentiable).
  KdV(Grid grid, Tensor alpha, Tensor beta);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// i beta k^3.
  Tensor linear() const override;
  /// -(alpha/2) d(u^2)/dx, dealiased.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "KdV(alpha=..., beta=...)".
  std::string name() const override;
  /// {|alpha| max |u|}.
  std::vector<double> max_velocity(const Tensor& u_hat) const override;
  /// {alpha, beta}.
  std::vector<Tensor> parameters() const override { return {alpha_, beta_}; }
  /// Copy with alpha and beta replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;

 private:
  Grid grid_;
  Tensor alpha_, beta_;
  std::shared_ptr<const detail::SpectralCache> ops_;
  std::shared_ptr<const detail::DeviceCopies> copies_;
};

/// Kuramoto-Sivashinsky u_t + u u_x + u_xx + nu u_xxxx = 0 on a 1-D grid (default nu = 1);
/// L = k^2 - nu k^4, N = -(1/2) i k dealias(FFT(u^2)).
class KuramotoSivashinsky : public Equation {
 public:
  /// Hyperviscosity nu > 0.
  explicit KuramotoSivashinsky(Grid grid, double nu = 1.0);
  /// Hyperviscosity as a one-element real tensor (differentiable).
  KuramotoSivashinsky(Grid grid, Tensor nu);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// k^2 - nu k^4.
  Tensor linear() const override;
  /// -(1/2) d(u^2)/dx, dealiased.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "KuramotoSivashinsky(nu=...)".
  std::string name() const override;
  /// {max |u|}.
  std::vector<double> max_velocity(const Tensor& u_hat) const override;
  /// {nu}.
  std::vector<Tensor> parameters() const override { return {nu_}; }
  /// Copy with nu replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;

 private:
  Grid grid_;
  Tensor nu_;
  std::shared_ptr<const detail::SpectralCache> ops_;
};

/// 2-D incompressible Navier-Stokes in vorticity form on a 2-D grid (axis 0 = x, axis 1 = y):
///   w_t + u . grad(w) = nu laplacian(w) - drag w + f,
/// velocity (u, v) = (d psi/dy, -d psi/dx) with laplacian(psi) = -w. L = -nu |k|^2 - drag,
/// N = -dealias(FFT(u w_x + v w_y)) + FFT(f) (u, v, w_x, w_y from the 2/3-truncated spectrum).
class NavierStokes2D : public Equation {
 public:
  /// Viscosity nu >= 0, optional time-independent forcing f (a field of the grid's shape; undefined =
  /// none) and linear drag >= 0.
  NavierStokes2D(Grid grid, double nu, Tensor forcing = Tensor(), double drag = 0.0);
  /// Parameters as tensors (nu, drag one-element real; forcing a grid field or undefined).
  NavierStokes2D(Grid grid, Tensor nu, Tensor forcing, Tensor drag);
  /// The grid.
  const Grid& grid() const override { return grid_; }
  /// -nu |k|^2 - drag.
  Tensor linear() const override;
  /// -u . grad(w) (dealiased) + f.
  Tensor nonlinear(const Tensor& u_hat, double t) const override;
  /// "NavierStokes2D(nu=..., drag=..., forced|unforced)".
  std::string name() const override;
  /// {max |u|, max |v|}.
  std::vector<double> max_velocity(const Tensor& u_hat) const override;
  /// {nu, drag, forcing} (forcing omitted when undefined).
  std::vector<Tensor> parameters() const override;
  /// Copy with the parameters replaced.
  std::shared_ptr<const Equation> with_parameters(const std::vector<Tensor>& params) const override;
  /// Velocity field (..., 2, nx, ny) of a vorticity half spectrum w_hat.
  Tensor velocity(const Tensor& w_hat) const;

 private:
  Grid grid_;
  Tensor nu_, forcing_, drag_;
  std::shared_ptr<const detail::SpectralCache> ops_;
  std::shared_ptr<const detail::DeviceCopies> copies_;
};

/// One step of size dt > 0 from spectral state u_hat at time t (Note [pde time stepping]); builds the
/// stepper's coefficients on every call (use Integrator to build them once).
Tensor step(const Equation& eq, const Tensor& u_hat, double t, double dt, Stepper s = Stepper::etdrk4);

/// Steps one equation with a fixed dt, its coefficients (L, ETDRK4's phi functions ...) built once at
/// construction (differentiable w.r.t. L's parameters as of then). Keeps a reference: `eq` must outlive it.
class Integrator {
 public:
  /// Builds the coefficients of stepper `s` for step dt > 0 (rk4: throws when explicitly unstable).
  Integrator(const Equation& eq, double dt, Stepper s = Stepper::etdrk4, int contour_points = 32);
  /// One step from the half spectrum u_hat (complex64 or complex128, on any device) at time t.
  Tensor step(const Tensor& u_hat, double t) const;
  /// `n` steps from u_hat at time t (t, t + dt, ...).
  Tensor steps(const Tensor& u_hat, double t, std::int64_t n) const;
  /// The step size.
  double dt() const { return dt_; }
  /// The scheme.
  Stepper stepper() const { return s_; }
  /// The equation.
  const Equation& equation() const { return *eq_; }

 private:
  const Equation* eq_;
  double dt_;
  Stepper s_;
  std::vector<Tensor> coef64_, coef32_;
  std::shared_ptr<const detail::DeviceCopies> copies_;  // coefficients on other devices (Note [pde devices])
};

/// Options of solve().
struct SolveOptions {
  Stepper stepper = Stepper::etdrk4;  ///< time-stepping scheme
  std::int64_t save_every = 0;        ///< save every this many steps (plus t = 0 and t_end); 0: final only
  bool error_estimate = false;        ///< also estimate the final error by step doubling
  /// autodiff::checkpoint each chunk of steps (memory ~ one chunk); an equation whose with_parameters()
  /// returns null must then outlive the backward pass.
  bool checkpoint = false;
  std::int64_t checkpoint_every = 0;  ///< steps per checkpointed chunk (0: about sqrt(steps))
  std::int64_t check_every = 50;      ///< steps between finiteness / CFL checks (>= 1)
  bool check_stability = true;        ///< run the explicit-stability and CFL checks
  double max_cfl = 1.5;               ///< advective CFL number above which solve() throws
  bool partial_last_step = true;      ///< t_end not a multiple of dt: shorten the last step (else throw)
  int contour_points = 32;            ///< etdrk4 contour points M (>= 8)
};

/// Result of solve() with options.
struct Solution {
  Tensor u;                   ///< state at t_end (physical, u0's shape and dtype)
  Tensor trajectory;          ///< saved states stacked on a new leading dim (physical)
  std::vector<double> times;  ///< times of the saved states
  std::int64_t steps = 0;     ///< number of steps taken
  /// Step-doubling estimate of max |u - u_exact| at t_end: max|u_dt - u_dt/2| / (1 - 2^-p), p = order(stepper)
  /// (negative when not requested).
  double error_estimate = -1.0;
};

/// Advances the physical field u0 (last d dims = grid sizes, any device) from t = 0 to t_end with step dt.
Tensor solve(const Equation& eq, const Tensor& u0, double t_end, double dt, Stepper s = Stepper::etdrk4);
/// solve() with options: trajectory, step-doubling error estimate, checkpointing.
Solution solve(const Equation& eq, const Tensor& u0, double t_end, double dt, const SolveOptions& opt);

}  // namespace phasor::pde
