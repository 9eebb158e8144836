// src/pde/steppers.cpp - one step of RK4, IMEX CN-RK2/CN-RK3 and ETDRK4 for du/dt = L u + N(u, t)
// (Note [pde time stepping] in phasor/pde/solve.hpp). Written with public ops only, so every step is
// differentiable w.r.t. the state and, through L and N, the equation's parameters.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/device_constants.hpp"
#include "pde/solve_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor::pde {

std::string to_string(Stepper s) {
  switch (s) {
    case Stepper::rk4:
      return "rk4";
    case Stepper::cn_rk2:
      return "cn_rk2";
    case Stepper::cn_rk3:
      return "cn_rk3";
    case Stepper::etdrk4:
      return "etdrk4";
  }
  return "unknown";
}

int order(Stepper s) {
  switch (s) {
    case Stepper::rk4:
      return 4;
    case Stepper::cn_rk2:
      return 2;
    case Stepper::cn_rk3:
      return 2;
    case Stepper::etdrk4:
      return 4;
  }
  return 1;
}

Equation::~Equation() = default;
std::vector<double> Equation::max_velocity(const Tensor&) const { return {}; }
std::vector<Tensor> Equation::parameters() const { return {}; }
std::shared_ptr<const Equation> Equation::with_parameters(const std::vector<Tensor>&) const { return nullptr; }

namespace detail {
namespace {

// Low-storage IMEX tableaux (Note [pde time stepping]).
struct Imex {
  std::vector<double> a, b, c;
};
const Imex& imex(Stepper s) {
  static const Imex rk2{{0.0, 1.0, 1.0}, {1.0, 0.5}, {0.0, -1.0}};
  static const Imex rk3{
      {0.0, 1.0 / 3.0, 3.0 / 4.0, 1.0}, {1.0 / 3.0, 15.0 / 16.0, 8.0 / 15.0}, {0.0, -5.0 / 9.0, -153.0 / 128.0}};
  return s == Stepper::cn_rk2 ? rk2 : rk3;
}

// Casts a coefficient to the state's precision, keeping real coefficients real, and moves it to the
// state's device (once per solve / step call; Note [pde devices]), contiguous: a real part's view (every
// other double) would read twice the bytes in every step and, on a GPU, take the strided kernels.
Tensor match(const Tensor& c, Dtype state_dtype, Device device) {
  return on(c, c.is_complex() ? to_complex(to_real(state_dtype)) : to_real(state_dtype), device).contiguous();
}

}  // namespace

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string shape_string(const Tensor& t) {
  std::string s = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

std::vector<Tensor> stepper_coefficients(Stepper s, const Tensor& L, double dt, Dtype state_dtype, int contour_points,
                                         Device device) {
  auto match = [&](const Tensor& c, Dtype dt_) { return detail::match(c, dt_, device); };
  switch (s) {
    case Stepper::rk4:
      return {match(L, state_dtype)};
    case Stepper::cn_rk2:
    case Stepper::cn_rk3: {
      // Stage k with m != 0: u <- A_k u + B_k g, A_k = (1 + m L) / (1 - m L), B_k = h b_k / (1 - m L).
      const Imex& tab = imex(s);
      std::vector<Tensor> out;
      for (std::size_t k = 0; k + 1 < tab.a.size(); ++k) {
        const double m = 0.5 * dt * (tab.a[k + 1] - tab.a[k]);
        if (m == 0.0) continue;
        const Tensor inv = 1.0 / (1.0 - L * m);
        out.push_back(match((1.0 + L * m) * inv, state_dtype));
        out.push_back(match(inv * (dt * tab.b[k]), state_dtype));
      }
      return out;
    }
    case Stepper::etdrk4: {
      // Kassam & Trefethen (2005): the phi-function combinations averaged over M points r_j on the
      // unit circle around z = L dt (full circle, so complex L works; real L keeps the real part).
      const bool real_L = !L.is_complex();
      const Dtype cd = to_complex(to_real(L.dtype()) == float32 ? float64 : to_real(L.dtype()));
      const Tensor Lh = (L * dt).to(cd);
      // The contour points go in batches along a new leading dim, at most 2^18 values per temporary
      // (memory O(spectrum) for large grids, few ops for small ones). For real L the conjugate points
      // give the conjugate values, so the upper half circle suffices and the real part is kept.
      const int M = contour_points;
      const std::int64_t J = real_L && M % 2 == 0 ? M / 2 : M;
      const std::int64_t per =
          std::clamp<std::int64_t>((std::int64_t{1} << 18) / std::max<std::int64_t>(1, Lh.numel()), 1, J);
      Tensor sQ, s1, s2, s3;
      auto acc = [](Tensor& sum, const Tensor& x) {
        const Tensor t = x.sum({0});
        sum = sum.defined() ? sum + t : t;
      };
      for (std::int64_t j0 = 0; j0 < J; j0 += per) {
        const std::int64_t cnt = std::min(per, J - j0);
        // the points' offsets, made once per device (Note [device constants]: no host copy per call)
        const Tensor roots = ::phasor::detail::device_constant(
            Lh.device(), "etdrk4 roots", std::make_tuple(M, j0, cnt), [&] {
              std::vector<std::complex<double>> r(static_cast<std::size_t>(cnt));
              for (std::int64_t j = 0; j < cnt; ++j)
                r[static_cast<std::size_t>(j)] = std::polar(
                    1.0, 2.0 * std::numbers::pi * (static_cast<double>(j0 + j) + 0.5) / static_cast<double>(M));
              return from_vector(r, Shape{cnt});
            });
        Shape rshape(static_cast<std::size_t>(Lh.dim() + 1), 1);
        rshape[0] = cnt;
        const Tensor z = Lh.unsqueeze(0) + roots.reshape(rshape);
        const Tensor ez2 = exp(z * 0.5), ez = ez2 * ez2, z2 = z * z, iz = 1.0 / z, iz3 = iz * iz * iz;
        acc(sQ, (ez2 - 1.0) * iz);
        acc(s1, (-4.0 - z + ez * (4.0 - 3.0 * z + z2)) * iz3);
        acc(s2, (2.0 + z + ez * (z - 2.0)) * iz3);
        acc(s3, (-4.0 - 3.0 * z - z2 + ez * (4.0 - z)) * iz3);
      }
      auto avg = [&](const Tensor& sum) {
        Tensor m = sum * (dt / static_cast<double>(J));
        return real_L ? real(m) : m;
      };
      const Tensor Q = avg(sQ), f1 = avg(s1), f2 = avg(s2), f3 = avg(s3);
      Tensor E = exp(Lh), E2 = exp(Lh * 0.5);
      if (real_L) {
        E = real(E);
        E2 = real(E2);
      }
      return {match(E, state_dtype),  match(E2, state_dtype), match(Q, state_dtype),
              match(f1, state_dtype), match(f2, state_dtype), match(f3, state_dtype)};
    }
  }
  throw Error("pde::step", "unknown stepper");
}

Tensor advance(const Equation& eq, Stepper s, const std::vector<Tensor>& coef, const Tensor& u, double t, double dt) {
  switch (s) {
    case Stepper::rk4: {
      const Tensor& L = coef[0];
      auto F = [&](const Tensor& v, double tv) { return addcmul(eq.nonlinear(v, tv), L, v); };
      const Tensor k1 = F(u, t);
      const Tensor k2 = F(u + k1 * (0.5 * dt), t + 0.5 * dt);
      const Tensor k3 = F(u + k2 * (0.5 * dt), t + 0.5 * dt);
      const Tensor k4 = F(u + k3 * dt, t + dt);
      return u + (k1 + k4 + (k2 + k3) * 2.0) * (dt / 6.0);
    }
    case Stepper::cn_rk2:
    case Stepper::cn_rk3: {
      const Imex& tab = imex(s);
      Tensor v = u, g;
      std::size_t next = 0;
      for (std::size_t k = 0; k < tab.b.size(); ++k) {
        const Tensor n = eq.nonlinear(v, t + tab.a[k] * dt);
        g = tab.c[k] == 0.0 ? n : n + g * tab.c[k];
        if (tab.a[k + 1] != tab.a[k]) {
          v = addcmul(coef[next] * v, coef[next + 1], g);
          next += 2;
        } else {
          v = v + g * (dt * tab.b[k]);
        }
      }
      return v;
    }
    case Stepper::etdrk4: {
      const Tensor &E = coef[0], &E2 = coef[1], &Q = coef[2], &f1 = coef[3], &f2 = coef[4], &f3 = coef[5];
      // each stage a chain of fused multiply-adds (Note [fused multiply-add]): 11 passes over the spectrum
      // where the products and sums one by one took 19
      const Tensor Nu = eq.nonlinear(u, t);
      const Tensor Eu = E2 * u;
      const Tensor a = addcmul(Eu, Q, Nu);
      const Tensor Na = eq.nonlinear(a, t + 0.5 * dt);
      const Tensor b = addcmul(Eu, Q, Na);
      const Tensor Nb = eq.nonlinear(b, t + 0.5 * dt);
      const Tensor c = addcmul(addcmul(E2 * a, Q, Nb, 2), Q, Nu, -1);  // E2 a + Q (2 Nb - Nu)
      const Tensor Nc = eq.nonlinear(c, t + dt);
      // E u + f1 Nu + 2 f2 (Na + Nb) + f3 Nc
      return addcmul(addcmul(addcmul(addcmul(E * u, f1, Nu), f2, Na, 2), f2, Nb, 2), f3, Nc);
    }
  }
  throw Error("pde::step", "unknown stepper");
}

void check_equation(const Equation& eq, const Tensor& L, const Tensor& u_hat, double t, const char* op, bool check_n) {
  if (!L.defined()) throw Error(op, eq.name() + ".linear() returned an undefined tensor");
  if (!is_floating_or_complex(L.dtype()))
    throw Error(op, eq.name() + ".linear() must be real or complex floating, got " + dtype_name(L.dtype()));
  bool ok = L.dim() <= u_hat.dim();
  for (std::int64_t i = 1; ok && i <= L.dim(); ++i) {
    const std::int64_t a = L.size(-i), b = u_hat.size(-i);
    ok = a == b || a == 1;
  }
  if (!ok)
    throw Error(op, eq.name() + ".linear() has shape " + shape_string(L) + ", which does not broadcast over the " +
                        "half spectrum of shape " + shape_string(u_hat));
  if (!check_n) return;
  NoGradGuard ng;
  const Tensor n = eq.nonlinear(u_hat.detach(), t);
  if (!n.defined() || n.shape() != u_hat.shape() || !n.is_complex())
    throw Error(op, eq.name() + ".nonlinear() must return a complex half spectrum of shape " + shape_string(u_hat) +
                        ", got " +
                        (n.defined() ? shape_string(n) + " " + dtype_name(n.dtype()) : std::string("undefined")));
  if (n.device() != u_hat.device())
    throw Error(op, eq.name() + ".nonlinear() returned a tensor on " + n.device().str() + " for a state on " +
                        u_hat.device().str() + " (it must compute on the state's device; Note [pde devices])");
}

void check_explicit_stability(Stepper s, const Tensor& L, double dt, const char* op) {
  if (s != Stepper::rk4) return;
  NoGradGuard ng;
  const Tensor z = (L.detach() * dt).to(complex128);
  const Tensor R = 1.0 + z * (1.0 + z * (0.5 + z * ((1.0 / 6.0) + z * (1.0 / 24.0))));
  const Tensor amp = abs(R);
  const Tensor bad = (amp > 1.0 + 1e-9) & (real(z) <= 0.0);
  ::phasor::detail::check_device_value(
      op, any(bad), [&] { return std::pair{max(abs(z)), max(masked_fill(amp, logical_not(bad), 0.0))}; },
      [dt](double zmax, double worst) {
        return "explicit rk4 step is unstable: max|L| dt = " + fmt(zmax) +
               " puts a decaying/oscillating mode outside the RK4 stability region (amplification " + fmt(worst) +
               " > 1 per step, dt = " + fmt(dt) +
               "); use a smaller dt (|L| dt <~ 2.7) or an implicit/exponential stepper";
      });
}

}  // namespace detail

Tensor step(const Equation& eq, const Tensor& u_hat, double t, double dt, Stepper s) {
  const char* op = "pde::step";
  if (!u_hat.defined()) throw Error(op, "u_hat is undefined");
  if (!u_hat.is_complex())
    throw Error(op, "u_hat must be a complex half spectrum, got " + std::string(dtype_name(u_hat.dtype())));
  eq.grid().check_spectrum(op, u_hat);
  if (!(dt > 0.0) || !std::isfinite(dt)) throw Error(op, "dt must be finite and > 0, got " + detail::fmt(dt));
  if (!std::isfinite(t)) throw Error(op, "t must be finite, got " + detail::fmt(t));
  return ::phasor::detail::composite(op, {u_hat}, [&] {
    const Tensor L = eq.linear();
    detail::check_equation(eq, L, u_hat, t, op, /*check_n=*/false);
    detail::check_explicit_stability(s, L, dt, op);
    return detail::advance(eq, s, detail::stepper_coefficients(s, L, dt, u_hat.dtype(), 32, u_hat.device()), u_hat,
                           t, dt);
  });
}

Integrator::Integrator(const Equation& eq, double dt, Stepper s, int contour_points) : eq_(&eq), dt_(dt), s_(s) {
  const char* op = "pde::Integrator";
  if (!(dt > 0.0) || !std::isfinite(dt)) throw Error(op, "dt must be finite and > 0, got " + detail::fmt(dt));
  if (contour_points < 8) throw Error(op, "contour_points must be >= 8, got " + std::to_string(contour_points));
  const Tensor L = eq.linear();
  detail::check_equation(eq, L, zeros(eq.grid().spectral_sizes(), complex128, L.device()), 0.0, op);
  detail::check_explicit_stability(s, L, dt, op);
  coef64_ = detail::stepper_coefficients(s, L, dt, complex128, contour_points, L.device());
  for (const auto& c : coef64_) coef32_.push_back(c.to(c.is_complex() ? complex64 : float32));
  copies_ = std::make_shared<detail::DeviceCopies>();
}

Tensor Integrator::step(const Tensor& u_hat, double t) const { return steps(u_hat, t, 1); }

Tensor Integrator::steps(const Tensor& u_hat, double t, std::int64_t n) const {
  const char* op = "pde::Integrator::step";
  if (!u_hat.defined()) throw Error(op, "u_hat is undefined");
  if (u_hat.dtype() != complex64 && u_hat.dtype() != complex128)
    throw Error(op,
                "u_hat must be a complex64/complex128 half spectrum, got " + std::string(dtype_name(u_hat.dtype())));
  eq_->grid().check_spectrum(op, u_hat);
  if (n < 0) throw Error(op, "the number of steps must be >= 0, got " + std::to_string(n));
  if (!std::isfinite(t)) throw Error(op, "t must be finite, got " + detail::fmt(t));
  const bool single = u_hat.dtype() == complex64;
  const auto& host = single ? coef32_ : coef64_;
  std::vector<Tensor> coef = host;
  const Device dev = u_hat.device();
  if (!host.empty() && host.front().device() != dev) {  // one copy per device, kept (Note [pde devices])
    coef = copies_->get(single ? 32 : 64, dev, [&] {
      EnableGradGuard g;  // keep a copy connected to L's parameters, as the coefficients themselves are
      std::vector<Tensor> out;
      for (const auto& c : host) out.push_back(c.to(dev));
      return out;
    });
  }
  return ::phasor::detail::composite(op, {u_hat}, [&] {
    Tensor u = u_hat;
    for (std::int64_t i = 0; i < n; ++i) u = detail::advance(*eq_, s_, coef, u, t + static_cast<double>(i) * dt_, dt_);
    return u;
  });
}

}  // namespace phasor::pde
