// src/pde/solve.cpp - the solve loop of phasor::pde: step planning, trajectory saving, finiteness and
// CFL checks, checkpointed chunks and the step-doubling error estimate (Note [pde time stepping]).
#include <algorithm>
#include <cmath>

#include "autodiff/node.hpp"
#include "pde/solve_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor::pde {
namespace {

using detail::fmt;
constexpr const char* kOp = "pde::solve";

struct Plan {
  std::int64_t full = 0;  // steps of size dt
  double last = 0.0;      // size of a final shortened step (0: none)
};

Plan plan_steps(double t_end, double dt, bool partial) {
  Plan p;
  if (t_end == 0.0) return p;
  const double n = t_end / dt;
  if (!(n < 9e15)) throw Error(kOp, "t_end / dt = " + fmt(n) + " steps is too many");
  const double nr = std::round(n);
  if (std::abs(n - nr) <= 1e-9 * std::max(1.0, n) && nr >= 1.0) {
    p.full = static_cast<std::int64_t>(nr);
    return p;
  }
  if (!partial)
    throw Error(kOp, "t_end = " + fmt(t_end) + " is not a whole number of steps dt = " + fmt(dt) +
                         " (t_end / dt = " + fmt(n) + ") and partial_last_step is false");
  p.full = static_cast<std::int64_t>(std::floor(n));
  p.last = t_end - static_cast<double>(p.full) * dt;
  if (!(p.last > 0.0)) {  // rounding put floor(n) steps past t_end
    p.full -= 1;
    p.last = t_end - static_cast<double>(p.full) * dt;
  }
  return p;
}

// Steps j = i0 .. i1-1 (time t0 + (j - i0) h); returns {state after step i1, states after the steps j+1 with
// (j+1) % save_every == 0}.
std::vector<Tensor> run_block(const Equation& eq, Stepper s, const std::vector<Tensor>& coef, Tensor u, std::int64_t i0,
                              std::int64_t i1, double t0, double h, std::int64_t save_every) {
  std::vector<Tensor> out{Tensor()};
  for (std::int64_t j = i0; j < i1; ++j) {
    u = detail::advance(eq, s, coef, u, t0 + static_cast<double>(j - i0) * h, h);
    if (save_every > 0 && (j + 1) % save_every == 0) out.push_back(u);
  }
  out[0] = u;
  return out;
}

bool all_finite(const Tensor& u) {
  NoGradGuard ng;
  return all(isfinite(u.detach())).item<bool>();
}

// Throws if u (after step i, time t) is non-finite: replays from `start` (after step i0, time t0) step by
// step to name the first step that produced a non-finite state.
void verify_finite(const Equation& eq, Stepper s, const std::vector<Tensor>& coef, const Tensor& start, const Tensor& u,
                   std::int64_t i0, std::int64_t i, double t0, double h) {
  if (all_finite(u)) return;
  NoGradGuard ng;
  std::vector<Tensor> c;
  for (const auto& x : coef) c.push_back(x.detach());
  Tensor v = start.detach();
  std::int64_t bad = i;
  for (std::int64_t j = i0; j < i; ++j) {
    v = detail::advance(eq, s, c, v, t0 + static_cast<double>(j - i0) * h, h);
    if (!all_finite(v)) {
      bad = j + 1;
      break;
    }
  }
  const double tb = t0 + static_cast<double>(bad - i0) * h;
  throw Error(kOp, "the solution of " + eq.name() + " became non-finite at step " + std::to_string(bad) +
                       " (t = " + fmt(tb) + ", dt = " + fmt(h) + ", stepper " + to_string(s) +
                       "); reduce dt or check the initial state and parameters");
}

void check_cfl(const Equation& eq, const Tensor& u_hat, double dt, double max_cfl, std::int64_t i, double t) {
  const std::vector<double> v = eq.max_velocity(u_hat);
  if (v.empty()) return;
  const Grid& g = eq.grid();
  double c = 0.0;
  std::string parts;
  for (std::size_t a = 0; a < v.size() && static_cast<std::int64_t>(a) < g.ndim(); ++a) {
    c += v[a] * dt / g.spacing(static_cast<std::int64_t>(a));
    parts += (a ? ", " : "") + fmt(v[a]);
  }
  if (!(c <= max_cfl))
    throw Error(kOp, "advective CFL number dt * sum(max|v_i| / dx_i) = " + fmt(c) + " exceeds max_cfl = " +
                         fmt(max_cfl) + " at step " + std::to_string(i) + " (t = " + fmt(t) + ", dt = " + fmt(dt) +
                         ", max|v| = [" + parts + "]) for " + eq.name() + ": the explicit part is unstable; reduce dt");
}

void validate(const Equation& eq, const Tensor& u0, double t_end, double dt, const SolveOptions& opt) {
  if (!u0.defined()) throw Error(kOp, "u0 is undefined");
  if (!is_floating(u0.dtype()))
    throw Error(kOp, std::string("u0 must be a real float32/float64 field, got ") + dtype_name(u0.dtype()));
  eq.grid().check_field(kOp, u0);
  if (!(dt > 0.0) || !std::isfinite(dt)) throw Error(kOp, "dt must be finite and > 0, got " + fmt(dt));
  if (!(t_end >= 0.0) || !std::isfinite(t_end)) throw Error(kOp, "t_end must be finite and >= 0, got " + fmt(t_end));
  if (opt.save_every < 0) throw Error(kOp, "save_every must be >= 0, got " + std::to_string(opt.save_every));
  if (opt.check_every < 1) throw Error(kOp, "check_every must be >= 1, got " + std::to_string(opt.check_every));
  if (opt.checkpoint_every < 0)
    throw Error(kOp, "checkpoint_every must be >= 0, got " + std::to_string(opt.checkpoint_every));
  if (opt.contour_points < 8)
    throw Error(kOp, "contour_points must be >= 8, got " + std::to_string(opt.contour_points));
  if (!(opt.max_cfl > 0.0)) throw Error(kOp, "max_cfl must be > 0, got " + fmt(opt.max_cfl));
}

Solution solve_impl(const Equation& eq, const Tensor& u0, double t_end, double dt, const SolveOptions& opt) {
  if (!all_finite(u0)) throw Error(kOp, "u0 has non-finite values");
  const Stepper s = opt.stepper;
  const Grid& g = eq.grid();
  const Plan plan = plan_steps(t_end, dt, opt.partial_last_step);
  Solution sol;
  if (plan.full == 0 && plan.last == 0.0) {
    sol.u = u0.clone();
    sol.trajectory = sol.u.unsqueeze(0);
    sol.times = {0.0};
    if (opt.error_estimate) sol.error_estimate = 0.0;
    return sol;
  }

  Tensor u_hat = to_spectral(g, u0);
  const Tensor L = eq.linear();
  detail::check_equation(eq, L, u_hat, 0.0, kOp);
  if (opt.check_stability) {
    detail::check_explicit_stability(s, L, dt, kOp);
    check_cfl(eq, u_hat, dt, opt.max_cfl, 0, 0.0);
  }
  const std::vector<Tensor> coef =
      detail::stepper_coefficients(s, L, dt, u_hat.dtype(), opt.contour_points, u_hat.device());

  std::vector<Tensor> saved;
  if (opt.save_every > 0) {
    saved.push_back(u_hat);
    sol.times.push_back(0.0);
  }

  // Checkpointing: the chunk function owns a copy of the equation rebound to its parameter inputs,
  // so parameter gradients flow through the recomputation and the graph outlives `eq`.
  std::int64_t block = opt.check_every;
  std::shared_ptr<const Equation> base;
  std::vector<Tensor> params;
  if (opt.checkpoint) {
    block = opt.checkpoint_every > 0
                ? opt.checkpoint_every
                : std::max<std::int64_t>(
                      1, static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(plan.full)))));
    params = eq.parameters();
    base = eq.with_parameters(params);
    if (!base) {
      for (const auto& p : params)
        if (p.defined() && p.requires_grad())
          throw Error(kOp, "checkpoint needs " + eq.name() +
                               " to implement with_parameters(), since its parameters require grad");
      params.clear();
    }
  }

  std::int64_t i = 0;
  while (i < plan.full) {
    const std::int64_t i1 = std::min(plan.full, i + block);
    const double t0 = static_cast<double>(i) * dt;
    std::vector<Tensor> outs;
    if (opt.checkpoint) {
      const std::size_t nc = coef.size(), np = params.size();
      const std::int64_t se = opt.save_every;
      const Equation* raw = base ? nullptr : &eq;
      auto fn = [base, raw, s, nc, np, i, i1, t0, dt, se](const std::vector<Tensor>& in) {
        std::vector<Tensor> c(in.begin() + 1, in.begin() + 1 + static_cast<std::ptrdiff_t>(nc));
        std::shared_ptr<const Equation> e;
        if (base) {
          std::vector<Tensor> p(in.begin() + 1 + static_cast<std::ptrdiff_t>(nc), in.end());
          e = np ? base->with_parameters(p) : base;
        }
        return run_block(e ? *e : *raw, s, c, in[0], i, i1, t0, dt, se);
      };
      std::vector<Tensor> inputs{u_hat};
      inputs.insert(inputs.end(), coef.begin(), coef.end());
      inputs.insert(inputs.end(), params.begin(), params.end());
      outs = autodiff::checkpoint(fn, inputs);
    } else {
      outs = run_block(eq, s, coef, u_hat, i, i1, t0, dt, opt.save_every);
    }
    verify_finite(eq, s, coef, u_hat, outs[0], i, i1, t0, dt);
    for (std::size_t k = 1; k < outs.size(); ++k) {
      saved.push_back(outs[k]);
      const std::int64_t j =
          (i / std::max<std::int64_t>(1, opt.save_every) + static_cast<std::int64_t>(k)) * opt.save_every;
      sol.times.push_back(static_cast<double>(j) * dt);
    }
    u_hat = outs[0];
    i = i1;
    if (opt.check_stability) check_cfl(eq, u_hat, dt, opt.max_cfl, i, static_cast<double>(i) * dt);
  }
  sol.steps = plan.full;
  if (plan.last > 0.0) {
    const std::vector<Tensor> cl = detail::stepper_coefficients(s, L, plan.last, u_hat.dtype(), opt.contour_points,
                                                                u_hat.device());
    const double t0 = static_cast<double>(plan.full) * dt;
    const Tensor next = detail::advance(eq, s, cl, u_hat, t0, plan.last);
    verify_finite(eq, s, cl, u_hat, next, plan.full, plan.full + 1, t0, plan.last);
    u_hat = next;
    sol.steps += 1;
  }
  const bool final_saved = opt.save_every > 0 && plan.last == 0.0 && plan.full % opt.save_every == 0;
  if (opt.save_every > 0 && !final_saved) {
    saved.push_back(u_hat);
    sol.times.push_back(t_end);
  }
  if (opt.save_every > 0 && final_saved) sol.times.back() = t_end;

  sol.u = from_spectral(g, u_hat);
  sol.trajectory = opt.save_every > 0 ? from_spectral(g, stack(saved, 0)) : sol.u.unsqueeze(0);
  if (opt.save_every == 0) sol.times = {t_end};

  if (opt.error_estimate) {
    NoGradGuard ng;
    SolveOptions half = opt;
    half.save_every = 0;
    half.error_estimate = false;
    half.checkpoint = false;
    const Solution fine = solve_impl(eq, u0.detach(), t_end, dt / 2.0, half);
    const double p = order(s);
    sol.error_estimate = max(abs(sol.u.detach() - fine.u)).item<double>() / (1.0 - std::pow(2.0, -p));
  }
  return sol;
}

}  // namespace

Solution solve(const Equation& eq, const Tensor& u0, double t_end, double dt, const SolveOptions& opt) {
  validate(eq, u0, t_end, dt, opt);
  std::vector<Tensor> inputs{u0};
  for (const auto& p : eq.parameters())
    if (p.defined()) inputs.push_back(p);
  Solution sol;
  ::phasor::detail::composite(kOp, inputs, [&] {
    sol = solve_impl(eq, u0, t_end, dt, opt);
    return std::vector<Tensor>{sol.u, sol.trajectory};
  });
  return sol;
}

Tensor solve(const Equation& eq, const Tensor& u0, double t_end, double dt, Stepper s) {
  SolveOptions opt;
  opt.stepper = s;
  return solve(eq, u0, t_end, dt, opt).u;
}

}  // namespace phasor::pde
