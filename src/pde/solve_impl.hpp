// src/pde/solve_impl.hpp - internals shared by the pde steppers, equations and solve loop.
#pragma once
#include <string>
#include <vector>

#include "phasor/pde/solve.hpp"

namespace phasor::pde::detail {

/// Per-(stepper, dt) coefficients for a state of complex dtype `state_dtype`:
/// rk4 {L}; cn_rk2 {L, 1/(1 - m_1 L)}; cn_rk3 {L, 1/(1 - m_k L), k = 1..3}; etdrk4 {E, E2, Q, f1, f2, f3}.
std::vector<Tensor> stepper_coefficients(Stepper s, const Tensor& L, double dt, Dtype state_dtype, int contour_points);

/// One step of size dt from u_hat at time t with coefficients from stepper_coefficients(s, ., dt, ...).
Tensor advance(const Equation& eq, Stepper s, const std::vector<Tensor>& coef, const Tensor& u_hat, double t,
               double dt);

/// rk4 only: throws phasor::Error naming `op` when some mode with Re(L) <= 0 is amplified by the RK4
/// stability polynomial at step dt (reporting max|L| dt and the worst amplification).
void check_explicit_stability(Stepper s, const Tensor& L, double dt, const char* op);

/// Formats a double for messages (%.6g).
std::string fmt(double v);
/// "[2, 3]" for a tensor's shape.
std::string shape_string(const Tensor& t);

}  // namespace phasor::pde::detail
