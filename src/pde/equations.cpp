// src/pde/equations.cpp - the built-in equations of phasor::pde (solve.hpp): their diagonal linear
// symbols and dealiased pseudo-spectral nonlinear terms, written with public ops (differentiable).
#include <cmath>
#include <complex>
#include <numbers>

#include "cuda/backend.hpp"
#include "pde/solve_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor::pde {
namespace {

using detail::fmt;
using detail::shape_string;

// A scalar parameter as a 0-d float64 tensor; checks finiteness and the sign.
Tensor scalar_param(double v, const std::string& op, const char* what, bool allow_zero) {
  if (!std::isfinite(v) || v < 0.0 || (!allow_zero && v == 0.0))
    throw Error(op, std::string(what) + (allow_zero ? " must be finite and >= 0" : " must be finite and > 0") +
                        ", got " + fmt(v));
  return scalar_tensor(v, float64);
}

// A scalar parameter given as a tensor: one real floating element; reshaped to 0-d (differentiable).
Tensor scalar_param(const Tensor& t, const std::string& op, const char* what, bool allow_zero, bool signed_ok = false) {
  if (!t.defined()) throw Error(op, std::string(what) + " is undefined");
  if (t.numel() != 1 || !is_floating(t.dtype()))
    throw Error(op, std::string(what) + " must be a one-element float32/float64 tensor, got shape " + shape_string(t) +
                        " " + dtype_name(t.dtype()));
  double v;
  {
    NoGradGuard ng;
    v = t.detach().item<double>();
  }
  if (!std::isfinite(v) || (!signed_ok && (v < 0.0 || (!allow_zero && v == 0.0))))
    throw Error(op, std::string(what) +
                        (signed_ok    ? " must be finite"
                         : allow_zero ? " must be finite and >= 0"
                                      : " must be finite and > 0") +
                        ", got " + fmt(v));
  return t.reshape({});
}

// Throws unless the defined tensors in `ts` (named by `names`) share one device (Note [pde devices]).
void same_device(const std::string& op, const std::vector<Tensor>& ts, const std::vector<const char*>& names) {
  const Tensor* first = nullptr;
  std::size_t fi = 0;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].defined()) continue;
    if (!first) {
      first = &ts[i];
      fi = i;
    } else if (ts[i].device() != first->device()) {
      throw Error(op, std::string("parameters must live on one device, got ") + names[fi] + " on " +
                          first->device().str() + " and " + names[i] + " on " + ts[i].device().str() +
                          " (move them with .to(device); Note [pde devices])");
    }
  }
}

void require_dims(const Grid& g, std::int64_t d, const std::string& op) {
  if (g.ndim() != d) throw Error(op, "needs a " + std::to_string(d) + "-D grid, got " + g.str());
}

// Parameter at the state's real precision, on the state's device (differentiable).
Tensor at(const Tensor& p, const Tensor& u_hat) { return detail::on(p, to_real(u_hat.dtype()), u_hat.device()); }

// Cache key of a real precision.
int precision_key(Dtype real_dtype) { return real_dtype == float32 ? 32 : 64; }

// Angular wavenumbers along `axis` with the Nyquist mode of an even axis set to 0 (the symbol of
// odd-order derivatives, Note [pde grid conventions]).
Tensor odd_wavenumbers(const Grid& g, std::int64_t axis, Dtype dtype, Device device = Device::cpu()) {
  Tensor k = g.wavenumbers(axis, dtype, device);
  const std::int64_t n = g.size(axis);
  if (n % 2 == 0) {
    const double k_nyq = std::numbers::pi * static_cast<double>(n) / g.length(axis);
    k = masked_fill(k, abs(k) > 0.999 * k_nyq, 0.0);
  }
  return k;
}

// i k (complex) for an odd-order derivative along `axis`.
Tensor ik(const Grid& g, std::int64_t axis, Dtype real_dtype) {
  const Tensor k = odd_wavenumbers(g, axis, real_dtype);
  return complex(zeros_like(k), k);
}

// -(1/2) d(u^2)/dx of a 1-D half spectrum, 2/3-rule dealiased (u from the truncated spectrum).
Tensor conservative_advection(const Grid& g, const detail::SpectralCache& ops, const Tensor& u_hat) {
  const auto& c = ops.get(to_real(u_hat.dtype()), u_hat.device());
  const Tensor u = from_spectral(g, u_hat * c.mask);
  return to_spectral(g, u * u) * c.half_dx_masked;
}

double max_abs(const Grid& g, const Tensor& u_hat) {
  NoGradGuard ng;
  return max(abs(from_spectral(g, u_hat.detach()))).item<double>();
}

}  // namespace

Tensor detail::on(const Tensor& p, Dtype dtype, Device device) { return p.to(dtype).to(device); }

std::vector<Tensor> detail::DeviceCopies::get(int key, Device device,
                                              const std::function<std::vector<Tensor>()>& make) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto k = std::make_tuple(key, static_cast<int>(device.type), device.index);
  auto it = copies_.find(k);
  if (it == copies_.end()) {
    std::vector<Tensor> made = make();
    cuda::detail::finish_current_stream(device);  // cached: any stream may read them next
    it = copies_.emplace(k, std::move(made)).first;
  }
  return it->second;
}

const detail::SpectralCache::Set& detail::SpectralCache::get(Dtype real_dtype, Device device) const {
  const Set& host = real_dtype == float32 ? f32 : f64;
  if (device == Device::cpu()) return host;
  std::lock_guard<std::mutex> lock(mu_);
  const auto k = std::make_tuple(precision_key(real_dtype), static_cast<int>(device.type), device.index);
  auto it = on_device_.find(k);
  if (it == on_device_.end()) {
    NoGradGuard ng;
    Set s;
    auto mv = [&](const Tensor& t) { return t.defined() ? t.to(device) : t; };
    s.mask = mv(host.mask);
    for (const auto& t : host.ik) s.ik.push_back(mv(t));
    s.half_dx_masked = mv(host.half_dx_masked);
    s.inv_k2 = mv(host.inv_k2);
    for (const auto& t : host.vorticity_terms) s.vorticity_terms.push_back(mv(t));
    cuda::detail::finish_current_stream(device);  // cached: any stream may read them next
    it = on_device_.emplace(k, std::move(s)).first;
  }
  return it->second;
}

detail::SpectralCache::SpectralCache(const Grid& g, bool with_inv_k2) {
  NoGradGuard ng;
  const auto inverse_k2 = [&](Dtype dt) {  // 1/|k|^2, 0 at k = 0
    const Tensor k2 = -g.laplacian_symbol(dt);
    return masked_fill(1.0 / masked_fill(k2, k2 == 0.0, 1.0), k2 == 0.0, 0.0);
  };
  std::vector<Tensor> vorticity64;  // formed once in float64, rounded once to each set's precision
  if (with_inv_k2) {
    const Tensor m = g.dealias_mask(float64), ikx = ik(g, 0, float64), iky = ik(g, 1, float64);
    const Tensor mk = m * inverse_k2(float64);
    vorticity64 = {-(mk * iky), mk * ikx, m * ikx, m * iky};
  }
  for (Dtype dt : {float32, float64}) {
    Set& s = dt == float32 ? f32 : f64;
    s.mask = g.dealias_mask(dt);
    for (std::int64_t a = 0; a < g.ndim(); ++a) s.ik.push_back(ik(g, a, dt));
    s.half_dx_masked = s.ik[0] * s.mask * -0.5;
    if (with_inv_k2) s.inv_k2 = inverse_k2(dt);
    for (const Tensor& t : vorticity64) s.vorticity_terms.push_back(t.to(to_complex(dt)));
  }
}

// ---- Heat ----------------------------------------------------------------------------------------

Heat::Heat(Grid grid, double nu) : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::Heat", "nu", true)) {}
Heat::Heat(Grid grid, Tensor nu) : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::Heat", "nu", true)) {}
Tensor Heat::linear() const { return grid_.laplacian_symbol(float64, nu_.device()) * nu_.to(float64); }
Tensor Heat::nonlinear(const Tensor& u_hat, double) const { return zeros_like(u_hat); }
std::string Heat::name() const { return "Heat(nu=" + fmt(nu_.detach().item<double>()) + ")"; }
std::shared_ptr<const Equation> Heat::with_parameters(const std::vector<Tensor>& p) const {
  if (p.size() != 1) throw Error("pde::Heat", "with_parameters expects 1 tensor, got " + std::to_string(p.size()));
  auto e = std::make_shared<Heat>(*this);
  e->nu_ = p[0];
  return e;
}

// ---- AdvectionDiffusion --------------------------------------------------------------------------

namespace {
Tensor velocity_param(const Grid& g, const Tensor& c, const std::string& op) {
  if (!c.defined()) throw Error(op, "velocity is undefined");
  if (c.dim() != 1 || c.size(0) != g.ndim() || !is_floating(c.dtype()))
    throw Error(op, "velocity must be a float32/float64 tensor of shape [" + std::to_string(g.ndim()) + "] for " +
                        g.str() + ", got shape " + shape_string(c) + " " + dtype_name(c.dtype()));
  NoGradGuard ng;
  if (!all(isfinite(c.detach())).item<bool>()) throw Error(op, "velocity must be finite");
  return c;
}
}  // namespace

AdvectionDiffusion::AdvectionDiffusion(Grid grid, std::vector<double> velocity, double nu)
    : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::AdvectionDiffusion", "nu", true)) {
  if (static_cast<std::int64_t>(velocity.size()) != grid_.ndim())
    throw Error("pde::AdvectionDiffusion", "velocity needs " + std::to_string(grid_.ndim()) + " entries for " +
                                               grid_.str() + ", got " + std::to_string(velocity.size()));
  velocity_ = velocity_param(grid_, from_vector(velocity), "pde::AdvectionDiffusion");
}
AdvectionDiffusion::AdvectionDiffusion(Grid grid, Tensor velocity, Tensor nu)
    : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::AdvectionDiffusion", "nu", true)) {
  velocity_ = velocity_param(grid_, velocity, "pde::AdvectionDiffusion");
  same_device("pde::AdvectionDiffusion", {velocity_, nu_}, {"velocity", "nu"});
}
Tensor AdvectionDiffusion::linear() const {
  const Device dev = nu_.device();
  const Tensor c = velocity_.to(float64);
  Tensor ck;
  for (std::int64_t i = 0; i < grid_.ndim(); ++i) {
    Tensor term = odd_wavenumbers(grid_, i, float64, dev) * c.select(0, i);
    ck = ck.defined() ? ck + term : term;
  }
  const Tensor diff = grid_.laplacian_symbol(float64, dev) * nu_.to(float64);
  return complex(diff + zeros_like(ck), -ck + zeros_like(diff));
}
Tensor AdvectionDiffusion::nonlinear(const Tensor& u_hat, double) const { return zeros_like(u_hat); }
std::string AdvectionDiffusion::name() const {
  std::string s = "AdvectionDiffusion(c=[";
  const Tensor c = velocity_.detach().to(float64);
  for (std::int64_t i = 0; i < c.numel(); ++i) s += (i ? ", " : "") + fmt(c.select(0, i).item<double>());
  return s + "], nu=" + fmt(nu_.detach().item<double>()) + ")";
}
std::shared_ptr<const Equation> AdvectionDiffusion::with_parameters(const std::vector<Tensor>& p) const {
  if (p.size() != 2)
    throw Error("pde::AdvectionDiffusion", "with_parameters expects 2 tensors, got " + std::to_string(p.size()));
  auto e = std::make_shared<AdvectionDiffusion>(*this);
  e->velocity_ = p[0];
  e->nu_ = p[1];
  return e;
}

// ---- Burgers -------------------------------------------------------------------------------------

Burgers::Burgers(Grid grid, double nu) : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::Burgers", "nu", true)) {
  require_dims(grid_, 1, "pde::Burgers");
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
}
Burgers::Burgers(Grid grid, Tensor nu) : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::Burgers", "nu", true)) {
  require_dims(grid_, 1, "pde::Burgers");
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
}
Tensor Burgers::linear() const { return grid_.laplacian_symbol(float64, nu_.device()) * nu_.to(float64); }
Tensor Burgers::nonlinear(const Tensor& u_hat, double) const { return conservative_advection(grid_, *ops_, u_hat); }
std::string Burgers::name() const { return "Burgers(nu=" + fmt(nu_.detach().item<double>()) + ")"; }
std::vector<double> Burgers::max_velocity(const Tensor& u_hat) const { return {max_abs(grid_, u_hat)}; }
std::shared_ptr<const Equation> Burgers::with_parameters(const std::vector<Tensor>& p) const {
  if (p.size() != 1) throw Error("pde::Burgers", "with_parameters expects 1 tensor, got " + std::to_string(p.size()));
  auto e = std::make_shared<Burgers>(*this);
  e->nu_ = p[0];
  return e;
}

// ---- KdV -----------------------------------------------------------------------------------------

KdV::KdV(Grid grid, double alpha, double beta) : grid_(std::move(grid)) {
  require_dims(grid_, 1, "pde::KdV");
  if (!std::isfinite(alpha)) throw Error("pde::KdV", "alpha must be finite, got " + fmt(alpha));
  if (!std::isfinite(beta)) throw Error("pde::KdV", "beta must be finite, got " + fmt(beta));
  alpha_ = scalar_tensor(alpha, float64);
  beta_ = scalar_tensor(beta, float64);
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
  copies_ = std::make_shared<detail::DeviceCopies>();
}
KdV::KdV(Grid grid, Tensor alpha, Tensor beta)
    : grid_(std::move(grid)),
      alpha_(scalar_param(alpha, "pde::KdV", "alpha", true, true)),
      beta_(scalar_param(beta, "pde::KdV", "beta", true, true)) {
  require_dims(grid_, 1, "pde::KdV");
  same_device("pde::KdV", {alpha_, beta_}, {"alpha", "beta"});
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
  copies_ = std::make_shared<detail::DeviceCopies>();
}
Tensor KdV::linear() const {
  const Tensor k = odd_wavenumbers(grid_, 0, float64, beta_.device());
  const Tensor im = k * k * k * beta_.to(float64);
  return complex(zeros_like(im), im);
}
Tensor KdV::nonlinear(const Tensor& u_hat, double) const {
  const Device dev = u_hat.device();
  const Dtype rd = to_real(u_hat.dtype());
  Tensor a;
  if (alpha_.device() == dev || alpha_.requires_grad()) {
    a = at(alpha_, u_hat);
  } else {  // a constant alpha is copied to the state's device once (Note [pde devices])
    a = copies_->get(precision_key(rd), dev, [&] {
      NoGradGuard ng;
      return std::vector<Tensor>{at(alpha_.detach(), u_hat)};
    })[0];
  }
  return conservative_advection(grid_, *ops_, u_hat) * a;
}
std::string KdV::name() const {
  return "KdV(alpha=" + fmt(alpha_.detach().item<double>()) + ", beta=" + fmt(beta_.detach().item<double>()) + ")";
}
std::vector<double> KdV::max_velocity(const Tensor& u_hat) const {
  return {std::abs(alpha_.detach().item<double>()) * max_abs(grid_, u_hat)};
}
std::shared_ptr<const Equation> KdV::with_parameters(const std::vector<Tensor>& p) const {
  if (p.size() != 2) throw Error("pde::KdV", "with_parameters expects 2 tensors, got " + std::to_string(p.size()));
  auto e = std::make_shared<KdV>(*this);
  e->alpha_ = p[0];
  e->beta_ = p[1];
  e->copies_ = std::make_shared<detail::DeviceCopies>();
  return e;
}

// ---- Kuramoto-Sivashinsky ------------------------------------------------------------------------

KuramotoSivashinsky::KuramotoSivashinsky(Grid grid, double nu)
    : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::KuramotoSivashinsky", "nu", false)) {
  require_dims(grid_, 1, "pde::KuramotoSivashinsky");
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
}
KuramotoSivashinsky::KuramotoSivashinsky(Grid grid, Tensor nu)
    : grid_(std::move(grid)), nu_(scalar_param(nu, "pde::KuramotoSivashinsky", "nu", false)) {
  require_dims(grid_, 1, "pde::KuramotoSivashinsky");
  ops_ = std::make_shared<detail::SpectralCache>(grid_, false);
}
Tensor KuramotoSivashinsky::linear() const {
  const Tensor k2 = -grid_.laplacian_symbol(float64, nu_.device());
  return k2 - k2 * k2 * nu_.to(float64);
}
Tensor KuramotoSivashinsky::nonlinear(const Tensor& u_hat, double) const {
  return conservative_advection(grid_, *ops_, u_hat);
}
std::string KuramotoSivashinsky::name() const {
  return "KuramotoSivashinsky(nu=" + fmt(nu_.detach().item<double>()) + ")";
}
std::vector<double> KuramotoSivashinsky::max_velocity(const Tensor& u_hat) const { return {max_abs(grid_, u_hat)}; }
std::shared_ptr<const Equation> KuramotoSivashinsky::with_parameters(const std::vector<Tensor>& p) const {
  if (p.size() != 1)
    throw Error("pde::KuramotoSivashinsky", "with_parameters expects 1 tensor, got " + std::to_string(p.size()));
  auto e = std::make_shared<KuramotoSivashinsky>(*this);
  e->nu_ = p[0];
  return e;
}

// ---- NavierStokes2D ------------------------------------------------------------------------------

namespace {
Tensor forcing_param(const Grid& g, const Tensor& f) {
  if (!f.defined()) return f;
  const char* op = "pde::NavierStokes2D";
  if (!is_floating(f.dtype()))
    throw Error(op, std::string("forcing must be a float32/float64 field, got ") + dtype_name(f.dtype()));
  if (f.dim() != 2) throw Error(op, "forcing must be one field of shape " + g.str() + ", got shape " + shape_string(f));
  g.check_field(op, f);
  NoGradGuard ng;
  if (!all(isfinite(f.detach())).item<bool>()) throw Error(op, "forcing must be finite");
  return f;
}
}  // namespace

NavierStokes2D::NavierStokes2D(Grid grid, double nu, Tensor forcing, double drag)
    : grid_(std::move(grid)),
      nu_(scalar_param(nu, "pde::NavierStokes2D", "nu", true)),
      drag_(scalar_param(drag, "pde::NavierStokes2D", "drag", true)) {
  require_dims(grid_, 2, "pde::NavierStokes2D");
  forcing_ = forcing_param(grid_, forcing);
  if (forcing_.defined()) {  // the scalar parameters join a tensor forcing's device (Note [pde devices])
    nu_ = nu_.to(forcing_.device());
    drag_ = drag_.to(forcing_.device());
  }
  ops_ = std::make_shared<detail::SpectralCache>(grid_, true);
  copies_ = std::make_shared<detail::DeviceCopies>();
}
NavierStokes2D::NavierStokes2D(Grid grid, Tensor nu, Tensor forcing, Tensor drag)
    : grid_(std::move(grid)),
      nu_(scalar_param(nu, "pde::NavierStokes2D", "nu", true)),
      drag_(scalar_param(drag, "pde::NavierStokes2D", "drag", true)) {
  require_dims(grid_, 2, "pde::NavierStokes2D");
  forcing_ = forcing_param(grid_, forcing);
  same_device("pde::NavierStokes2D", {nu_, drag_, forcing_}, {"nu", "drag", "forcing"});
  ops_ = std::make_shared<detail::SpectralCache>(grid_, true);
  copies_ = std::make_shared<detail::DeviceCopies>();
}
Tensor NavierStokes2D::linear() const {
  return grid_.laplacian_symbol(float64, nu_.device()) * nu_.to(float64) - drag_.to(float64);
}
namespace {
// (u_hat, v_hat) of a vorticity spectrum: psi = w / |k|^2 (k = 0 -> 0), u = psi_y, v = -psi_x.
std::pair<Tensor, Tensor> velocity_spectra(const detail::SpectralCache& ops, const Tensor& w_hat) {
  const auto& c = ops.get(to_real(w_hat.dtype()), w_hat.device());
  const Tensor psi = w_hat * c.inv_k2;
  return {psi * c.ik[1], -(psi * c.ik[0])};
}
}  // namespace
Tensor NavierStokes2D::velocity(const Tensor& w_hat) const {
  grid_.check_spectrum("pde::NavierStokes2D::velocity", w_hat);
  auto [uh, vh] = velocity_spectra(*ops_, w_hat);
  const Tensor u = from_spectral(grid_, uh), v = from_spectral(grid_, vh);
  return stack({u, v}, u.dim() - 2);
}
Tensor NavierStokes2D::nonlinear(const Tensor& w_hat, double) const {
  const Dtype rd = to_real(w_hat.dtype());
  const Device dev = w_hat.device();
  const auto& c = ops_->get(rd, dev);
  // -mask FFT(u w_x + v w_y) (+ forcing) with u, v, w_x, w_y from the dealiased w_hat: as FFT((-u) w_x +
  // (-v) w_y) mask, one product of w_hat per field (SpectralCache's vorticity_terms) and fused
  // multiply-adds (Note [fused multiply-add]), 7 passes over a spectrum where one op each took 13
  const auto& m = c.vorticity_terms;
  const Tensor minus_u = from_spectral(grid_, w_hat * m[0]), minus_v = from_spectral(grid_, w_hat * m[1]);
  const Tensor wx = from_spectral(grid_, w_hat * m[2]), wy = from_spectral(grid_, w_hat * m[3]);
  const Tensor adv = to_spectral(grid_, addcmul(minus_u * wx, minus_v, wy));
  if (!forcing_.defined()) return adv * c.mask;
  Tensor f;
  if (forcing_.device() == dev || forcing_.requires_grad()) {  // moved inside the graph (Note [pde devices])
    f = to_spectral(grid_, at(forcing_, w_hat));
  } else {  // a constant forcing's spectrum is made once per precision and other device
    f = copies_->get(precision_key(rd), dev, [&] {
      NoGradGuard ng;
      return std::vector<Tensor>{to_spectral(grid_, at(forcing_.detach(), w_hat))};
    })[0];
  }
  return addcmul(f, adv, c.mask);
}
std::string NavierStokes2D::name() const {
  return "NavierStokes2D(nu=" + fmt(nu_.detach().item<double>()) + ", drag=" + fmt(drag_.detach().item<double>()) +
         (forcing_.defined() ? ", forced)" : ", unforced)");
}
std::vector<double> NavierStokes2D::max_velocity(const Tensor& w_hat) const {
  NoGradGuard ng;
  auto [uh, vh] = velocity_spectra(*ops_, w_hat.detach());
  return {max(abs(from_spectral(grid_, uh))).item<double>(), max(abs(from_spectral(grid_, vh))).item<double>()};
}
std::vector<Tensor> NavierStokes2D::parameters() const {
  if (forcing_.defined()) return {nu_, drag_, forcing_};
  return {nu_, drag_};
}
std::shared_ptr<const Equation> NavierStokes2D::with_parameters(const std::vector<Tensor>& p) const {
  const std::size_t want = forcing_.defined() ? 3 : 2;
  if (p.size() != want)
    throw Error("pde::NavierStokes2D",
                "with_parameters expects " + std::to_string(want) + " tensors, got " + std::to_string(p.size()));
  auto e = std::make_shared<NavierStokes2D>(*this);
  e->nu_ = p[0];
  e->drag_ = p[1];
  if (want == 3) e->forcing_ = p[2];
  e->copies_ = std::make_shared<detail::DeviceCopies>();
  return e;
}

}  // namespace phasor::pde
