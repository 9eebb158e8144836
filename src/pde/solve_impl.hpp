// src/pde/solve_impl.hpp - internals shared by the pde steppers, equations and solve loop.
#pragma once
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "phasor/pde/solve.hpp"

namespace phasor::pde::detail {

/// Tensors made for one device on first use and kept, under (key, device) (thread-safe).
class DeviceCopies {
 public:
  /// The tensors cached under (key, device); calls make() (under the lock) the first time.
  std::vector<Tensor> get(int key, Device device, const std::function<std::vector<Tensor>()>& make) const;

 private:
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, int, int>, std::vector<Tensor>> copies_;
};

/// Constant spectral multipliers of an equation, built once per equation for float32 and float64:
/// the 2/3 mask, i k_a (Nyquist dropped) per axis, -(1/2) i k_0 mask (1-D conservative advection), and
/// for 2-D 1/|k|^2 (0 at k = 0) and NavierStokes2D's four products of them. Built on the host; the copies
/// for a CUDA device are made on first use (once per device and precision) and kept.
struct SpectralCache {
  /// One precision's multipliers.
  struct Set {
    Tensor mask;             ///< 2/3-rule mask (real)
    std::vector<Tensor> ik;  ///< i k per axis (complex)
    Tensor half_dx_masked;   ///< -(1/2) i k_0 mask (complex)
    Tensor inv_k2;           ///< 1/|k|^2 with 0 at k = 0 (real; 2-D equations only)
    /// The dealiased spectra of -u, -v, w_x and w_y are w_hat times these (complex; 2-D equations only):
    /// -mask i k_1 / |k|^2, mask i k_0 / |k|^2, mask i k_0, mask i k_1.
    std::vector<Tensor> vorticity_terms;
  };
  Set f32, f64;
  /// Builds both precisions for grid g (on the CPU).
  SpectralCache(const Grid& g, bool with_inv_k2);
  /// The set for a state whose real dtype is `real_dtype` on `device`.
  const Set& get(Dtype real_dtype, Device device = Device::cpu()) const;

 private:
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, int, int>, Set> on_device_;
};

/// `p` cast to `dtype` and moved to `device` (differentiable; no copy when already there).
Tensor on(const Tensor& p, Dtype dtype, Device device);

/// Per-(stepper, dt) coefficients for a state of complex dtype `state_dtype` on `device`, computed on L's
/// device (ETDRK4's in complex128) and then moved to `device` once:
/// rk4 {L}; cn_rk2/cn_rk3 {A_k, B_k} per implicit stage (u <- A_k u + B_k g); etdrk4 {E, E2, Q, f1, f2, f3}.
std::vector<Tensor> stepper_coefficients(Stepper s, const Tensor& L, double dt, Dtype state_dtype, int contour_points,
                                         Device device = Device::cpu());

/// One step of size dt from u_hat at time t with coefficients from stepper_coefficients(s, ., dt, ...).
Tensor advance(const Equation& eq, Stepper s, const std::vector<Tensor>& coef, const Tensor& u_hat, double t,
               double dt);

/// rk4 only: throws phasor::Error naming `op` when some mode with Re(L) <= 0 is amplified by the RK4
/// stability polynomial at step dt (reporting max|L| dt and the worst amplification).
void check_explicit_stability(Stepper s, const Tensor& L, double dt, const char* op);

/// Throws phasor::Error naming `op` unless L broadcasts over u_hat without enlarging it and
/// (when check_n) N(u_hat, t) has u_hat's shape, a complex dtype and u_hat's device (catches user
/// equations that get the shapes or devices wrong).
void check_equation(const Equation& eq, const Tensor& L, const Tensor& u_hat, double t, const char* op,
                    bool check_n = true);

/// Formats a double for messages (%.6g).
std::string fmt(double v);
/// "[2, 3]" for a tensor's shape.
std::string shape_string(const Tensor& t);

}  // namespace phasor::pde::detail
