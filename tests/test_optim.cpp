// tests/test_optim.cpp - optimizers, schedulers and gradient clipping.
//
// References: straightforward scalar formulas evaluated in long double (Adam, AdamW, SGD), closed
// forms (schedulers, norms), the real-pair representation of complex parameters, and values printed
// by PyTorch 1.13 (Debian python3-torch) for the same problems, produced by this script:
//
//   import torch; torch.set_default_dtype(torch.float64)
//   def rosen(x): return (1 - x[0])**2 + 100 * (x[1] - x[0]**2)**2
//   for ls, iters, lr in [("strong_wolfe", 8, 1.0), ("strong_wolfe", 100, 1.0), (None, 6, 0.5)]:
//       x = torch.tensor([-1.5, 2.0], requires_grad=True)
//       opt = torch.optim.LBFGS([x], lr=lr, max_iter=iters, line_search_fn=ls, history_size=5)
//       def closure(): opt.zero_grad(); l = rosen(x); l.backward(); return l
//       opt.step(closure); print(x.tolist(), opt.state[x]['func_evals'], opt.state[x]['n_iter'])
//       opt.step(closure); print(x.tolist(), opt.state[x]['func_evals'], opt.state[x]['n_iter'])
//   z0 = torch.tensor([1+2j, -0.5+0.25j, 3-1j], dtype=torch.complex128)
//   for mk in [lambda p: torch.optim.Adam([p], lr=0.1, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1),
//              lambda p: torch.optim.AdamW([p], lr=0.1, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, maximize=True),
//              lambda p: torch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)]:
//       p = z0.clone().requires_grad_(); opt = mk(p)
//       for k in range(5):
//           opt.zero_grad(); ((p.abs()**3).sum() + (p.real * p.imag).sum()).backward(); opt.step()
//       print(p.tolist())
//   r = torch.tensor([1.0, -2.0, 0.5], requires_grad=True); opt = torch.optim.AdamW([r], lr=0.05, amsgrad=True)
//   for k in range(6):
//       opt.zero_grad(); ((r**4).sum() - 3*(r**2).sum() + r[0]*r[1]).backward(); opt.step()
//   print(r.tolist())
//   (OneCycleLR and ReduceLROnPlateau: the sequences below, lr/momentum read before each step.)
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::vals;
namespace optim = phasor::optim;
using LD = long double;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Test gradient g_i = c_i p_i + cos(p_i) + i / 4 (independent of autodiff).
template <class T>
T test_grad(T p, std::size_t i) {
  const T c = static_cast<T>(0.5 + 0.75 * static_cast<double>(i));
  return c * p + std::cos(p) + static_cast<T>(i) / 4;
}

/// Sets p.grad() to test_grad of p's current values.
void set_test_grad(Tensor p) {
  std::vector<double> v = vals(p), g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) g[i] = test_grad(v[i], i);
  p.set_grad(from_vector(g, p.shape()).to(p.dtype()));
}

struct AdamRef {
  LD lr, b1, b2, eps, wd;
  bool amsgrad, maximize, decoupled;
  std::vector<LD> m, v, vmax;
  int t = 0;
  void step(std::vector<LD>& p) {
    if (m.empty()) m.assign(p.size(), 0), v.assign(p.size(), 0), vmax.assign(p.size(), 0);
    ++t;
    for (std::size_t i = 0; i < p.size(); ++i) {
      LD g = test_grad(p[i], i);
      if (maximize) g = -g;
      if (decoupled)
        p[i] *= 1 - lr * wd;
      else
        g += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      vmax[i] = std::max(vmax[i], v[i]);
      const LD vhat = (amsgrad ? vmax[i] : v[i]) / (1 - std::pow(b2, static_cast<LD>(t)));
      const LD mhat = m[i] / (1 - std::pow(b1, static_cast<LD>(t)));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

struct SGDRef {
  LD lr, momentum, dampening, wd;
  bool nesterov, maximize;
  std::vector<LD> buf;
  void step(std::vector<LD>& p) {
    const bool first = buf.empty();
    if (first) buf.assign(p.size(), 0);
    for (std::size_t i = 0; i < p.size(); ++i) {
      LD g = test_grad(p[i], i);
      if (maximize) g = -g;
      g += wd * p[i];
      if (momentum != 0) {
        buf[i] = first ? g : momentum * buf[i] + (1 - dampening) * g;
        g = nesterov ? g + momentum * buf[i] : buf[i];
      }
      p[i] -= lr * g;
    }
  }
};

void check_close(const std::vector<double>& got, const std::vector<LD>& want, double rtol, double atol = 0) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - static_cast<double>(want[i])) <= atol + rtol * std::fabs(static_cast<double>(want[i])));
  }
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol = 0) {
  check_close(got, std::vector<LD>(want.begin(), want.end()), rtol, atol);
}

const std::vector<double> kInit = {0.7, -1.3, 2.1, 0.05, -0.4};

Tensor rosenbrock(const Tensor& x) {
  Tensor a = x.index({0}), b = x.index({1});
  return (1.0 - a).square() + 100.0 * (b - a.square()).square();
}

}  // namespace

// ---- first-order optimizers against scalar references ------------------------------------------------

TEST_CASE("optim: Adam and AdamW match a long double scalar reference") {
  struct Case {
    const char* name;
    bool adamw, amsgrad, maximize;
    double wd;
  };
  for (Case c : {Case{"adam", false, false, false, 0.0}, Case{"adam wd", false, false, false, 0.1},
                 Case{"adam amsgrad", false, true, false, 0.05}, Case{"adam maximize", false, false, true, 0.0},
                 Case{"adamw", true, false, false, 0.2}, Case{"adamw amsgrad", true, true, false, 0.01},
                 Case{"adamw maximize", true, false, true, 0.1}}) {
    CAPTURE(c.name);
    for (Dtype dt : {float64, float32}) {
      CAPTURE(dt);
      Tensor p = from_vector(kInit).to(dt).requires_grad_();
      std::unique_ptr<optim::Optimizer> opt;
      if (c.adamw)
        opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamWOptions(0.05)
                                                                         .betas({0.8, 0.95})
                                                                         .eps(1e-6)
                                                                         .weight_decay(c.wd)
                                                                         .amsgrad(c.amsgrad)
                                                                         .maximize(c.maximize));
      else
        opt = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.05)
                                                                        .betas({0.8, 0.95})
                                                                        .eps(1e-6)
                                                                        .weight_decay(c.wd)
                                                                        .amsgrad(c.amsgrad)
                                                                        .maximize(c.maximize));
      AdamRef ref{0.05L, 0.8L, 0.95L, 1e-6L, static_cast<LD>(c.wd), c.amsgrad, c.maximize, c.adamw, {}, {}, {}};
      std::vector<LD> want(kInit.begin(), kInit.end());
      for (int k = 0; k < 12; ++k) {
        set_test_grad(p);
        opt->step();
        ref.step(want);
      }
      check_close(vals(p), want, dt == float64 ? 1e-12 : 2e-5, dt == float64 ? 1e-13 : 2e-6);
      CHECK(opt->state(p).at("step").item<double>() == 12);
      CHECK(p.is_leaf());
      CHECK(p.requires_grad());
    }
  }
}

// Module::to(dtype) converts a parameter in place (set_data keeps its identity, so its optimizer state is
// still found): the state follows the parameter's dtype (it used to be read as the new dtype's flat array,
// twice its size, past its end) and its layout.
TEST_CASE("optim: a parameter converted to another dtype between steps keeps stepping with its state converted") {
  for (bool adam : {true, false}) {
    CAPTURE(adam);
    Tensor p = from_vector(kInit).to(float32).requires_grad_();
    std::unique_ptr<optim::Optimizer> opt;
    if (adam)
      opt = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.05).betas({0.8, 0.95}).eps(1e-6).amsgrad(true));
    else
      opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.05).momentum(0.9));
    AdamRef aref{0.05L, 0.8L, 0.95L, 1e-6L, 0.0L, true, false, false, {}, {}, {}};
    SGDRef sref{0.05L, 0.9L, 0.0L, 0.0L, false, false, {}};
    std::vector<LD> want(kInit.begin(), kInit.end());
    for (int k = 0; k < 8; ++k) {
      if (k == 4) {
        NoGradGuard ng;
        p.set_data(p.to(float64));  // as Module::to(float64)
      }
      set_test_grad(p);
      opt->step();
      if (adam) aref.step(want);
      else sref.step(want);
    }
    CHECK(p.dtype() == float64);
    check_close(vals(p), want, 2e-5, 2e-6);  // float32 for the first half
    for (const auto& [key, t] : opt->state(p))
      if (key != "step") {
        CAPTURE(key);
        CHECK(t.dtype() == float64);
      }
  }
  // a parameter whose shape changed under its state is named
  Tensor q = from_vector(kInit).requires_grad_();
  optim::Adam a({q}, optim::AdamOptions(0.1));
  set_test_grad(q);
  a.step();
  {
    NoGradGuard ng;
    q.set_data(zeros({2}, float64));
  }
  q.set_grad(ones({2}, float64));
  CHECK_THROWS_WITH_AS(a.step(), doctest::Contains("state 'exp_avg' of shape (5,) does not match its parameter of shape (2,)"),
                       Error);
}

TEST_CASE("optim: AdamW defaults are torch's") {
  optim::AdamWOptions o;
  CHECK(o.lr() == 1e-3);
  CHECK(o.weight_decay() == 0.01);
  CHECK(std::get<0>(o.betas()) == 0.9);
  CHECK(std::get<1>(o.betas()) == 0.999);
  CHECK(o.eps() == 1e-8);
  CHECK_FALSE(o.amsgrad());
  optim::AdamOptions a;
  CHECK(a.weight_decay() == 0.0);
  optim::LBFGSOptions l;
  CHECK(l.lr() == 1.0);
  CHECK(l.max_iter() == 20);
  CHECK(l.history_size() == 100);
  CHECK(l.tolerance_grad() == 1e-7);
  CHECK(l.tolerance_change() == 1e-9);
  CHECK_FALSE(l.line_search_fn().has_value());
}

TEST_CASE("optim: SGD matches a long double scalar reference") {
  struct Case {
    const char* name;
    double momentum, dampening, wd;
    bool nesterov, maximize;
  };
  for (Case c : {Case{"plain", 0, 0, 0, false, false}, Case{"weight decay", 0, 0, 0.1, false, false},
                 Case{"momentum", 0.9, 0, 0, false, false}, Case{"momentum dampening", 0.8, 0.3, 0.05, false, false},
                 Case{"nesterov", 0.9, 0, 0.01, true, false}, Case{"maximize", 0.5, 0, 0, false, true}}) {
    CAPTURE(c.name);
    for (Dtype dt : {float64, float32}) {
      Tensor p = from_vector(kInit).to(dt).requires_grad_();
      optim::SGD opt({p}, optim::SGDOptions(0.02)
                              .momentum(c.momentum)
                              .dampening(c.dampening)
                              .weight_decay(c.wd)
                              .nesterov(c.nesterov)
                              .maximize(c.maximize));
      SGDRef ref{0.02L, static_cast<LD>(c.momentum), static_cast<LD>(c.dampening), static_cast<LD>(c.wd),
                 c.nesterov, c.maximize, {}};
      std::vector<LD> want(kInit.begin(), kInit.end());
      for (int k = 0; k < 10; ++k) {
        set_test_grad(p);
        opt.step();
        ref.step(want);
      }
      check_close(vals(p), want, dt == float64 ? 1e-12 : 1e-5, dt == float64 ? 1e-13 : 1e-6);
      CHECK(opt.state(p).count("momentum_buffer") == (c.momentum != 0 ? 1u : 0u));
    }
  }
}

TEST_CASE("optim: updates run in place, without autograd, and skip parameters without grad") {
  Tensor a = from_vector(std::vector<double>{1, 2, 3}).requires_grad_();
  Tensor b = from_vector(std::vector<double>{4, 5}).requires_grad_();
  Tensor alias = a;  // a module would hold this same handle
  void* data = a.data_ptr();
  const auto v0 = a.version();
  optim::SGD opt({a, b}, optim::SGDOptions(0.5));
  (a * a).sum().backward();  // b gets no gradient
  opt.step();
  CHECK(a.data_ptr() == data);
  CHECK(vals(alias) == std::vector<double>{0, 0, 0});  // a - 0.5 * 2a
  CHECK(vals(b) == std::vector<double>{4, 5});
  CHECK(a.version() > v0);
  CHECK(a.is_leaf());
  CHECK(a.grad_fn() == nullptr);
  // a loss built after the step uses the new values and differentiates normally
  opt.zero_grad();
  CHECK_FALSE(a.grad().defined());
  ((a + 1.0) * (a + 1.0)).sum().backward();
  CHECK(vals(a.grad()) == std::vector<double>{2, 2, 2});
  opt.zero_grad(/*set_to_none=*/false);
  REQUIRE(a.grad().defined());
  CHECK(vals(a.grad()) == std::vector<double>{0, 0, 0});
  // step(closure) evaluates the closure first and returns its loss
  Tensor l = opt.step([&] {
    opt.zero_grad();
    Tensor loss = (a * a).sum() * 0.5;
    loss.backward();
    return loss;
  });
  CHECK(l.item<double>() == 0);
  CHECK_FALSE(opt.step().defined());
}

TEST_CASE("optim: a non-contiguous parameter is updated like its contiguous copy") {
  manual_seed(3);
  Tensor base = randn({3, 4}, float64);
  Tensor p = base.t().detach().requires_grad_();  // (4, 3), non-contiguous leaf
  REQUIRE_FALSE(p.is_contiguous());
  Tensor q = p.detach().contiguous().clone().requires_grad_();
  optim::Adam o1({p}, optim::AdamOptions(0.1).amsgrad(true));
  optim::Adam o2({q}, optim::AdamOptions(0.1).amsgrad(true));
  for (int k = 0; k < 3; ++k) {
    o1.zero_grad();
    o2.zero_grad();
    (p.sin() * p).sum().backward();
    (q.sin() * q).sum().backward();
    o1.step();
    o2.step();
  }
  CHECK(vals(p) == vals(q));
  CHECK(vals(base.t()) == vals(q));  // written through to the shared storage
}

TEST_CASE("optim: parameter groups carry their own options") {
  Tensor a = from_vector(std::vector<double>{1.0}).requires_grad_();
  Tensor b = from_vector(std::vector<double>{1.0}).requires_grad_();
  optim::SGD opt({optim::ParamGroup({a}), optim::ParamGroup({b}, optim::SGDOptions(0.25))}, optim::SGDOptions(0.5));
  REQUIRE(opt.param_groups().size() == 2);
  CHECK(opt.param_groups()[0].lr() == 0.5);
  CHECK(opt.param_groups()[1].lr() == 0.25);
  (a + b).sum().backward();
  opt.step();
  CHECK(a.item<double>() == 0.5);
  CHECK(b.item<double>() == 0.75);
  opt.param_groups()[1].set_lr(1.0);
  opt.step();
  CHECK(b.item<double>() == -0.25);
  Tensor c = from_vector(std::vector<double>{2.0}).requires_grad_();
  opt.add_param_group(optim::ParamGroup({c}));
  CHECK(opt.param_groups()[2].lr() == 0.5);
  CHECK(opt.parameters().size() == 3);
  CHECK_THROWS_WITH_AS(opt.add_param_group(optim::ParamGroup({a})), doctest::Contains("appears more than once"),
                       phasor::Error);
  CHECK_THROWS_WITH_AS(opt.add_param_group(optim::ParamGroup({c.detach().requires_grad_()}, optim::AdamOptions())),
                       "[optim.SGD] parameter group options must be SGDOptions", phasor::Error);
  CHECK(opt.param_groups().size() == 3);
}

TEST_CASE("optim: convergence on a quadratic") {
  // f(x) = 1/2 sum a_i (x_i - c_i)^2, minimum at c
  const std::vector<double> a = {1.0, 3.0, 0.5, 2.0}, c = {1.0, -2.0, 0.5, 3.0};
  Tensor A = from_vector(a), C = from_vector(c);
  auto run = [&](optim::Optimizer& opt, Tensor& x, int steps) {
    for (int k = 0; k < steps; ++k) {
      opt.zero_grad();
      (0.5 * A * (x - C).square()).sum().backward();
      opt.step();
    }
  };
  {
    Tensor x = zeros({4}, float64).requires_grad_();
    optim::SGD opt({x}, optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
    run(opt, x, 300);
    check_close(vals(x), c, 0, 1e-8);
  }
  {
    Tensor x = zeros({4}, float64).requires_grad_();
    optim::Adam opt({x}, optim::AdamOptions(0.05));
    run(opt, x, 2000);
    check_close(vals(x), c, 0, 1e-3);
  }
  {
    Tensor x = zeros({4}, float32).requires_grad_();
    optim::AdamW opt({x}, optim::AdamWOptions(0.05).weight_decay(0.0).amsgrad(true));
    run(opt, x, 2000);
    check_close(vals(x), c, 0, 2e-3);
  }
}

// ---- complex parameters ------------------------------------------------------------------------------

TEST_CASE("optim: complex parameters behave as their real pairs") {
  const std::vector<std::complex<double>> z0 = {{1, 2}, {-0.5, 0.25}, {3, -1}};
  // Same loss written on the real pairs (n, 2): sum |z|^3 + re * im.
  auto loss_c = [](const Tensor& z) { return z.abs().pow(3.0).sum() + (z.real() * z.imag()).sum(); };
  auto loss_r = [](const Tensor& r) {
    Tensor re = r.select(1, 0), im = r.select(1, 1);
    return (re.square() + im.square()).pow(1.5).sum() + (re * im).sum();
  };
  auto make = [](int which, const Tensor& p) -> std::unique_ptr<optim::Optimizer> {
    switch (which) {
      case 0: return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.1).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1));
      case 1: return std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamWOptions(0.1).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1).maximize(true));
      case 2: return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.1));
      default: return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.1).amsgrad(true));
    }
  };
  // PyTorch 1.13 results of the first three (script at the top of this file).
  const std::vector<std::vector<double>> torch_ref = {
      {0.5115532072387521, 1.5084973816859442, -0.1125791932706217, 0.130683351663975, 2.504743560748322, -0.5218637818709307},
      {1.443801547526275, 2.39458820494629, -0.9590196538091911, -0.22053358332596862, 3.34492191446578, -1.443736784525459},
      {0.33540378465441956, -0.30536130388250393, -0.09417153754537982, 0.2143500374254122, -0.24494431659172716,
       0.4467935581610196}};
  for (int which = 0; which < 4; ++which) {
    CAPTURE(which);
    Tensor z = from_vector(z0).requires_grad_();
    Tensor r = from_vector(std::vector<double>{1, 2, -0.5, 0.25, 3, -1}, Shape{3, 2}).requires_grad_();
    auto oz = make(which, z);
    auto orr = make(which, r);
    for (int k = 0; k < 5; ++k) {
      oz->zero_grad();
      orr->zero_grad();
      loss_c(z).backward();
      loss_r(r).backward();
      // The complex gradient is dL/dre + i dL/dim, i.e. exactly the real pair's gradient.
      check_close(vals(z.grad().real()), vals(r.grad().select(1, 0)), 1e-13, 1e-14);
      check_close(vals(z.grad().imag()), vals(r.grad().select(1, 1)), 1e-13, 1e-14);
      oz->step();
      orr->step();
    }
    std::vector<double> zr;
    for (auto v : to_vector<std::complex<double>>(z)) zr.insert(zr.end(), {v.real(), v.imag()});
    check_close(zr, vals(r), 1e-12, 1e-13);
    if (which < 3) check_close(zr, torch_ref[which], 1e-10, 1e-12);
  }
  SUBCASE("Adam's second moment is per real component, not |g|^2") {
    Tensor z = from_vector(std::vector<std::complex<double>>{{3, 4}}).requires_grad_();
    optim::Adam opt({z}, optim::AdamOptions(0.1).betas({0.5, 0.75}));
    z.set_grad(from_vector(std::vector<std::complex<double>>{{2, -6}}));
    opt.step();
    auto v = to_vector<std::complex<double>>(opt.state(z).at("exp_avg_sq"));
    CHECK(v[0].real() == doctest::Approx(0.25 * 4));
    CHECK(v[0].imag() == doctest::Approx(0.25 * 36));
    // first step of Adam moves each component by lr * sign(g) (up to eps)
    auto zn = to_vector<std::complex<double>>(z);
    CHECK(zn[0].real() == doctest::Approx(3 - 0.1).epsilon(1e-9));
    CHECK(zn[0].imag() == doctest::Approx(4 + 0.1).epsilon(1e-9));
  }
  SUBCASE("complex64") {
    Tensor z = from_vector(z0).to(complex64).requires_grad_();
    Tensor r = from_vector(std::vector<double>{1, 2, -0.5, 0.25, 3, -1}, Shape{3, 2}).to(float32).requires_grad_();
    optim::AdamW oz({z}, optim::AdamWOptions(0.1).amsgrad(true));
    optim::AdamW orr({r}, optim::AdamWOptions(0.1).amsgrad(true));
    for (int k = 0; k < 4; ++k) {
      oz.zero_grad();
      orr.zero_grad();
      loss_c(z).backward();
      loss_r(r).backward();
      oz.step();
      orr.step();
    }
    std::vector<double> zr;
    for (auto v : to_vector<std::complex<double>>(z)) zr.insert(zr.end(), {v.real(), v.imag()});
    check_close(zr, vals(r), 1e-5, 1e-6);
  }
}

TEST_CASE("optim: AdamW amsgrad on a real parameter matches PyTorch") {
  Tensor r = from_vector(std::vector<double>{1.0, -2.0, 0.5}).requires_grad_();
  optim::AdamW opt({r}, optim::AdamWOptions(0.05).amsgrad(true));
  for (int k = 0; k < 6; ++k) {
    opt.zero_grad();
    (r.pow(4.0).sum() - 3.0 * r.square().sum() + r.index({0}) * r.index({1})).backward();
    opt.step();
  }
  check_close(vals(r), std::vector<double>{1.2872908882446952, -1.7018665800466146, 0.7990511589410251}, 1e-12);
}

// ---- LBFGS ---------------------------------------------------------------------------------------------

TEST_CASE("optim: LBFGS reproduces PyTorch's iterates on Rosenbrock") {
  struct Case {
    bool strong;
    std::int64_t iters;
    double lr;
    std::vector<double> x1;
    std::int64_t evals1, n1;
    std::vector<double> x2;
    std::int64_t evals2, n2;
  };
  const std::vector<Case> cases = {
      {true, 8, 1.0, {-1.286632758431496, 1.6040534520403236}, 10, 8, {-0.5315523149194874, 0.2659000702131374}, 20, 15},
      {true, 100, 1.0, {0.999984833521575, 0.9999695408627309}, 52, 41, {0.999984833521575, 0.9999695408627309}, 53, 42},
      {false, 6, 0.5, {-1.4185868897179825, 2.033813646791592}, 6, 6, {-1.4206960526732353, 2.0189538100985196}, 12, 12}};
  for (const auto& c : cases) {
    CAPTURE(c.strong);
    CAPTURE(c.iters);
    Tensor x = from_vector(std::vector<double>{-1.5, 2.0}).requires_grad_();
    optim::LBFGSOptions o(c.lr);
    o.max_iter(c.iters).history_size(5);
    if (c.strong) o.line_search_fn("strong_wolfe");
    optim::LBFGS opt({x}, o);
    int calls = 0;
    auto closure = [&] {
      ++calls;
      opt.zero_grad();
      Tensor l = rosenbrock(x);
      l.backward();
      return l;
    };
    Tensor l0 = opt.step(closure);
    CHECK(l0.item<double>() == doctest::Approx(12.5));
    check_close(vals(x), c.x1, 1e-9, 1e-12);
    CHECK(opt.func_evals() == c.evals1);
    CHECK(opt.n_iter() == c.n1);
    CHECK(calls == c.evals1);
    opt.step(closure);
    check_close(vals(x), c.x2, 1e-9, 1e-12);
    CHECK(opt.func_evals() == c.evals2);
    CHECK(opt.n_iter() == c.n2);
  }
}

TEST_CASE("optim: LBFGS over several parameters equals one stacked parameter; float32") {
  auto opts = optim::LBFGSOptions(1.0).max_iter(12).history_size(4).line_search_fn("strong_wolfe");
  Tensor x = from_vector(std::vector<double>{-1.5, 2.0}).requires_grad_();
  Tensor a = from_vector(std::vector<double>{-1.5}).requires_grad_(), b = from_vector(std::vector<double>{2.0}).requires_grad_();
  optim::LBFGS o1({x}, opts), o2({a, b}, opts);
  auto f2 = [](const Tensor& u, const Tensor& v) { return ((1.0 - u).square() + 100.0 * (v - u.square()).square()).sum(); };
  for (int k = 0; k < 2; ++k) {
    o1.step([&] {
      o1.zero_grad();
      Tensor l = rosenbrock(x);
      l.backward();
      return l;
    });
    o2.step([&] {
      o2.zero_grad();
      Tensor l = f2(a, b);
      l.backward();
      return l;
    });
  }
  check_close(vals(x), std::vector<double>{a.item<double>(), b.item<double>()}, 1e-14);
  CHECK(o1.func_evals() == o2.func_evals());
  // float32 parameters: same path, converges on Rosenbrock too
  Tensor y = from_vector(std::vector<float>{-1.5f, 2.0f}).requires_grad_();
  optim::LBFGS o3({y}, optim::LBFGSOptions(1.0).max_iter(200).line_search_fn("strong_wolfe"));
  o3.step([&] {
    o3.zero_grad();
    Tensor l = rosenbrock(y);
    l.backward();
    return l;
  });
  check_close(vals(y), std::vector<double>{1.0, 1.0}, 0, 1e-3);
}

TEST_CASE("optim: LBFGS with strong Wolfe on a quadratic matches PyTorch") {
  // f(x) = 1/2 x^T A x - b^T x, A = M^T M + I with M_ij = cos(0.37 (i+1) (j+2)^1.3), b_i = cos(i)
  // (eigenvalues 1.33 ... 9.01). PyTorch 1.13, LBFGS(lr=1, max_iter=10, line_search_fn="strong_wolfe"):
  // n_iter 10, func_evals 11, and x below. Then run to convergence (where the last iterations only
  // see rounding noise, so their count is not compared).
  const int n = 8;
  std::vector<double> m(n * n), bv(n);
  for (int i = 0; i < n; ++i) {
    bv[i] = std::cos(i);
    for (int j = 0; j < n; ++j) m[i * n + j] = std::cos(0.37 * (i + 1) * std::pow(j + 2.0, 1.3));
  }
  Tensor M = from_vector(m, Shape{n, n});
  Tensor A = M.t().matmul(M) + eye(n, std::nullopt, float64);
  Tensor b = from_vector(bv);
  const std::vector<double> torch_x = {0.12805274028633903,  0.2188346849253414,  0.014427067132671563,
                                       -0.17031869250259596, -0.1839338495722332, -0.10756039909028714,
                                       0.13699697924557422,  0.14365286240226027};
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dt);
    // complex: the same problem on the real parts, plus a decoupled bowl (im - 1)^2 for the imaginary parts
    Tensor x = zeros({n}, dt).requires_grad_();
    optim::LBFGS opt({x}, optim::LBFGSOptions(1.0).max_iter(10).line_search_fn("strong_wolfe"));
    auto closure = [&] {
      opt.zero_grad();
      Tensor xr = x.is_complex() ? x.real() : x;
      Tensor l = 0.5 * (xr * A.matmul(xr)).sum() - (b * xr).sum();
      if (x.is_complex()) l = l + (x.imag() - 1.0).square().sum();
      l.backward();
      return l;
    };
    opt.step(closure);
    if (dt == float64) {
      CHECK(opt.n_iter() == 10);
      CHECK(opt.func_evals() == 11);
      check_close(vals(x), torch_x, 0, 1e-12);
    }
    // continue to convergence
    auto& o = static_cast<optim::LBFGSOptions&>(opt.param_groups()[0].options());
    o.max_iter(60).tolerance_grad(1e-12).tolerance_change(1e-20);
    opt.step(closure);
    CHECK(opt.n_iter() <= 30);
    Tensor xr = x.is_complex() ? x.real() : x;
    Tensor resid = A.matmul(xr) - b;
    // a loss-based line search stalls once |g|^2 / lambda falls to rounding of f: |g| ~ sqrt(eps |f| lambda) ~ 2e-8
    CHECK(resid.abs().max().item<double>() < 1e-7);
    if (x.is_complex()) check_close(vals(x.imag()), std::vector<double>(n, 1.0), 0, 1e-7);
  }
}

// ---- state_dict --------------------------------------------------------------------------------------

namespace {
/// Runs `steps` steps of a small two-parameter problem.
void train(optim::Optimizer& opt, const Tensor& w, const Tensor& z, int steps) {
  for (int k = 0; k < steps; ++k) {
    opt.zero_grad();
    ((w.sin() * w).sum() + (z.abs().square() * 0.5).sum() + (z.real() * w.index({0})).sum()).backward();
    opt.step();
  }
}
}  // namespace

TEST_CASE("optim: state_dict round trip continues training identically") {
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    auto make = [&](const Tensor& w, const Tensor& z) -> std::unique_ptr<optim::Optimizer> {
      std::vector<optim::ParamGroup> groups;
      if (which == 0) {
        groups = {optim::ParamGroup({w}), optim::ParamGroup({z}, optim::AdamOptions(0.02).amsgrad(true))};
        return std::make_unique<optim::Adam>(groups, optim::AdamOptions(0.05).weight_decay(0.01));
      }
      if (which == 1) {
        groups = {optim::ParamGroup({w}), optim::ParamGroup({z}, optim::AdamWOptions(0.03))};
        return std::make_unique<optim::AdamW>(groups, optim::AdamWOptions(0.05).betas({0.85, 0.99}));
      }
      groups = {optim::ParamGroup({w}, optim::SGDOptions(0.05).momentum(0.9).nesterov(true)), optim::ParamGroup({z})};
      return std::make_unique<optim::SGD>(groups, optim::SGDOptions(0.02).momentum(0.5).dampening(0.1));
    };
    Tensor w = from_vector(std::vector<double>{0.3, -1.2, 2.0}).requires_grad_();
    Tensor z = from_vector(std::vector<std::complex<double>>{{1, -1}, {0.5, 2}}).requires_grad_();
    auto opt = make(w, z);
    train(*opt, w, z, 4);
    opt->param_groups()[0].set_lr(0.04);  // a changed hyperparameter must travel too
    StateDict sd = opt->state_dict();
    CHECK(sd.count("param_groups.0.lr"));
    CHECK(sd.at("param_groups.0.lr").dim() == 0);
    CHECK(sd.at("param_groups.0.lr").dtype() == float64);
    CHECK(sd.at("param_groups.1.params").dtype() == int64);
    CHECK(vals(sd.at("param_groups.1.params")) == std::vector<double>{1});
    if (which < 2) {
      CHECK(sd.at("state.0.step").item<double>() == 4);
      CHECK(sd.at("state.1.exp_avg").dtype() == complex128);
      CHECK(sd.count("state.1.max_exp_avg_sq") == (which == 0 ? 1u : 0u));
    } else {
      CHECK(sd.count("state.0.momentum_buffer") == 1);
    }
    Tensor w2 = w.detach().clone().requires_grad_(), z2 = z.detach().clone().requires_grad_();
    train(*opt, w, z, 5);  // the dict holds copies: this must not change it
    auto opt2 = make(w2, z2);
    opt2->load_state_dict(sd);
    CHECK(opt2->param_groups()[0].lr() == 0.04);
    train(*opt2, w2, z2, 5);
    CHECK(vals(w2) == vals(w));
    CHECK(to_vector<std::complex<double>>(z2) == to_vector<std::complex<double>>(z));
  }
}

TEST_CASE("optim: LBFGS state_dict round trip") {
  Tensor x = from_vector(std::vector<double>{-1.5, 2.0}).requires_grad_();
  optim::LBFGS opt({x}, optim::LBFGSOptions(1.0).max_iter(5).history_size(3).line_search_fn("strong_wolfe"));
  auto closure_for = [](optim::Optimizer& o, const Tensor& p) {
    return [&o, p] {
      o.zero_grad();
      Tensor l = rosenbrock(p);
      l.backward();
      return l;
    };
  };
  opt.step(closure_for(opt, x));
  opt.step(closure_for(opt, x));
  StateDict sd = opt.state_dict();
  CHECK(sd.at("state.0.old_dirs").dim() == 2);
  CHECK(sd.at("state.0.old_dirs").size(0) <= 3);
  CHECK(sd.at("state.0.old_dirs").size(1) == 2);
  CHECK(sd.at("param_groups.0.line_search_fn").item<double>() == 1);
  Tensor x2 = x.detach().clone().requires_grad_();
  optim::LBFGS opt2({x2}, optim::LBFGSOptions());
  opt2.load_state_dict(sd);
  opt.step(closure_for(opt, x));
  opt2.step(closure_for(opt2, x2));
  CHECK(vals(x2) == vals(x));
  CHECK(opt2.func_evals() == opt.func_evals());
  // bad history shape
  StateDict bad = sd;
  bad["state.0.old_dirs"] = zeros({1, 5}, float64);
  CHECK_THROWS_WITH_AS(opt2.load_state_dict(bad), doctest::Contains("state.0.old_dirs' should have shape"), phasor::Error);
}

TEST_CASE("optim: load_state_dict validates and changes nothing on error") {
  Tensor w = from_vector(std::vector<double>{0.3, -1.2, 2.0}).requires_grad_();
  Tensor z = from_vector(std::vector<std::complex<double>>{{1, -1}, {0.5, 2}}).requires_grad_();
  optim::Adam opt({w, z}, optim::AdamOptions(0.05));
  train(opt, w, z, 2);
  const StateDict good = opt.state_dict();
  const auto exp_avg_before = vals(opt.state(w).at("exp_avg"));

  StateDict missing = good;
  missing.erase("state.0.exp_avg_sq");
  missing.erase("param_groups.0.eps");
  CHECK_THROWS_WITH_AS(opt.load_state_dict(missing),
                       "[optim.Adam] load_state_dict: 2 problem(s): missing key 'param_groups.0.eps'; missing key "
                       "'state.0.exp_avg_sq'",
                       phasor::Error);

  StateDict shape = good;
  shape["state.0.exp_avg"] = zeros({4}, float64);
  shape["param_groups.0.lr"] = scalar_tensor(-1.0, float64);
  try {
    opt.load_state_dict(shape);
    FAIL("expected an error");
  } catch (const phasor::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("key 'state.0.exp_avg' has shape (4,) but its parameter has shape (3,)") != std::string::npos);
    CHECK(msg.find("invalid learning rate: -1") != std::string::npos);
  }

  StateDict count = good;
  count["state.5.step"] = scalar_tensor(1.0, float64);
  count["param_groups.0.params"] = from_vector(std::vector<std::int64_t>{0, 1, 2});
  count["bogus"] = zeros({1});
  try {
    opt.load_state_dict(count);
    FAIL("expected an error");
  } catch (const phasor::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("parameter group 0 lists 3 parameter(s) in the state dict but has 2 in the optimizer") != std::string::npos);
    CHECK(msg.find("holds state of parameter 5, but the optimizer has 2 parameter(s)") != std::string::npos);
    CHECK(msg.find("unexpected key 'bogus'") != std::string::npos);
  }

  StateDict kind = good;
  kind["state.1.exp_avg"] = zeros({2}, float64);  // real moments for a complex parameter
  CHECK_THROWS_WITH_AS(opt.load_state_dict(kind), doctest::Contains("has dtype float64 but its parameter has dtype complex128"),
                       phasor::Error);

  StateDict groups = good;
  groups["param_groups.1.lr"] = scalar_tensor(0.1, float64);
  CHECK_THROWS_WITH_AS(opt.load_state_dict(groups), doctest::Contains("belongs to parameter group 1, but the optimizer has 1"),
                       phasor::Error);

  // nothing changed
  CHECK(opt.param_groups()[0].lr() == 0.05);
  CHECK(vals(opt.state(w).at("exp_avg")) == exp_avg_before);
  CHECK(opt.state(w).at("step").item<double>() == 2);
  // and the good dict still loads
  opt.load_state_dict(good);
  CHECK(vals(opt.state(w).at("exp_avg")) == exp_avg_before);
}

// ---- bad input ---------------------------------------------------------------------------------------

TEST_CASE("optim: bad arguments throw phasor::Error naming the optimizer and value") {
  Tensor p = zeros({2}, float64).requires_grad_();
  CHECK_THROWS_WITH_AS(optim::Adam(std::vector<Tensor>{}), "[optim.Adam] got an empty parameter list", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::SGD(std::vector<Tensor>{}, 0.1), "[optim.SGD] got an empty parameter list", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::LBFGS(std::vector<Tensor>{}), "[optim.LBFGS] got an empty parameter list", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::AdamW({optim::ParamGroup({})}), "[optim.AdamW] got an empty parameter list", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p}, optim::AdamOptions(-1)), "[optim.Adam] invalid learning rate: -1 (must be >= 0)",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p}, optim::AdamOptions().betas({1.0, 0.9})),
                       "[optim.Adam] invalid beta parameter at index 0: 1 (must be in [0, 1))", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::AdamW({p}, optim::AdamWOptions().betas({0.9, -0.1})),
                       "[optim.AdamW] invalid beta parameter at index 1: -0.1 (must be in [0, 1))", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p}, optim::AdamOptions().eps(-1e-8)),
                       "[optim.Adam] invalid epsilon value: -1e-08 (must be >= 0)", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p}, optim::AdamOptions().weight_decay(-0.5)),
                       "[optim.Adam] invalid weight_decay value: -0.5 (must be >= 0)", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, optim::SGDOptions(0.1).momentum(-0.9)),
                       "[optim.SGD] invalid momentum value: -0.9 (must be >= 0)", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, optim::SGDOptions(0.1).nesterov(true)),
                       "[optim.SGD] nesterov momentum requires a momentum > 0 and zero dampening (got momentum 0, dampening 0)",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)),
                       doctest::Contains("requires a momentum > 0 and zero dampening (got momentum 0.9, dampening 0.1)"),
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::SGD({p}, optim::SGDOptions(-0.1)), "[optim.SGD] invalid learning rate: -0.1 (must be >= 0)",
                       phasor::Error);
  Tensor ints = zeros({2}, int64);
  CHECK_THROWS_WITH_AS(optim::Adam({ints}),
                       "[optim.Adam] parameter 0 of group 0 has dtype int64; optimizers need float32, float64, complex64 "
                       "or complex128 parameters",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p * 2.0}), doctest::Contains("is not a leaf tensor"), phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({p, p}), doctest::Contains("appears more than once"), phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({Tensor()}), "[optim.Adam] parameter 0 of group 0 is an undefined tensor", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::Adam({optim::ParamGroup({p}, optim::SGDOptions(0.1))}),
                       "[optim.Adam] parameter group options must be AdamOptions", phasor::Error);

  optim::LBFGS lb({p});
  CHECK_THROWS_WITH_AS(lb.step(), doctest::Contains("[optim.LBFGS] step() requires a closure"), phasor::Error);
  Tensor q = zeros({1}, float64).requires_grad_();
  CHECK_THROWS_WITH_AS(lb.add_param_group(optim::ParamGroup({q})),
                       "[optim.LBFGS] LBFGS doesn't support per-parameter options (parameter groups)", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::LBFGS({p}, optim::LBFGSOptions().line_search_fn("backtracking")),
                       "[optim.LBFGS] unknown line_search_fn 'backtracking' (only \"strong_wolfe\" is supported)",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::LBFGS({p}, optim::LBFGSOptions().max_iter(0)), "[optim.LBFGS] invalid max_iter: 0 (must be >= 1)",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::LBFGS({p}, optim::LBFGSOptions().history_size(0)),
                       "[optim.LBFGS] invalid history_size: 0 (must be >= 1)", phasor::Error);
  CHECK_THROWS_WITH_AS(lb.step([] { return Tensor(); }),
                       "[optim.LBFGS] the closure must return a one-element loss tensor, got an undefined tensor",
                       phasor::Error);
}

// ---- schedulers ----------------------------------------------------------------------------------------

namespace {
Tensor sched_leaf() { return zeros({1}, float64).requires_grad_(); }
}  // namespace

TEST_CASE("sched: StepLR and CosineAnnealingLR follow their closed forms") {
  Tensor p = sched_leaf(), q = sched_leaf();
  optim::SGD opt({optim::ParamGroup({p}), optim::ParamGroup({q}, optim::SGDOptions(0.3))}, optim::SGDOptions(0.1));
  optim::StepLR s(opt, 3, 0.5);
  CHECK(s.last_epoch() == 0);
  for (int e = 0; e < 12; ++e) {
    CAPTURE(e);
    CHECK(opt.param_groups()[0].lr() == doctest::Approx(0.1 * std::pow(0.5, e / 3)).epsilon(1e-14));
    CHECK(opt.param_groups()[1].lr() == doctest::Approx(0.3 * std::pow(0.5, e / 3)).epsilon(1e-14));
    CHECK(s.get_last_lr()[1] == opt.param_groups()[1].lr());
    opt.step();
    s.step();
  }

  Tensor r = sched_leaf();
  optim::Adam adam({r}, optim::AdamOptions(0.2));
  const int T = 7;
  const double eta_min = 0.01;
  optim::CosineAnnealingLR c(adam, T, eta_min);
  for (int e = 0; e <= 4 * T; ++e) {
    CAPTURE(e);
    const double want = eta_min + (0.2 - eta_min) * (1 + std::cos(kPi * e / T)) / 2;
    CHECK(adam.param_groups()[0].lr() == doctest::Approx(want).epsilon(1e-12));
    c.step();
  }
}

TEST_CASE("sched: OneCycleLR matches PyTorch (lr and momentum)") {
  struct Case {
    const char* strategy;
    bool three_phase;
    std::vector<double> lrs, ms;
  };
  const std::vector<Case> cases = {
      {"cos",
       false,
       {0.040000000000000036, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631, 0.6112620219362893, 0.38874197806371075,
        0.18825834605023697, 0.049519367986526286, 4e-06},
       {0.95, 0.8999999999999999, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842, 0.9111260466978157,
        0.9311744900929366, 0.945048443395121, 0.95}},
      {"linear",
       false,
       {0.04, 0.52, 1.0, 0.8571434285714286, 0.7142868571428571, 0.5714302857142857, 0.42857371428571434,
        0.2857171428571429, 0.14286057142857145, 4.000000000004e-06},
       {0.95, 0.8999999999999999, 0.85, 0.8642857142857142, 0.8785714285714286, 0.8928571428571428, 0.9071428571428571,
        0.9214285714285714, 0.9357142857142857, 0.95}},
      {"cos",
       true,
       {0.040000000000000036, 0.52, 1.0, 0.52, 0.04, 0.0361807218535102, 0.0261817218535102, 0.013822278146489805,
        0.0038232781464898036, 4e-06},
       {0.95, 0.8999999999999999, 0.85, 0.8999999999999999, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95}}};
  for (const auto& c : cases) {
    CAPTURE(c.strategy);
    CAPTURE(c.three_phase);
    Tensor p = sched_leaf();
    optim::SGD opt({p}, optim::SGDOptions(0.1).momentum(0.9));
    optim::OneCycleLR s(opt, 1.0, 10, 0.3, c.strategy, true, 0.85, 0.95, 25.0, 1e4, c.three_phase);
    for (int i = 0; i < 10; ++i) {
      CAPTURE(i);
      const auto& o = static_cast<const optim::SGDOptions&>(opt.param_groups()[0].options());
      CHECK(o.lr() == doctest::Approx(c.lrs[i]).epsilon(1e-12));
      CHECK(o.momentum() == doctest::Approx(c.ms[i]).epsilon(1e-12));
      opt.step();
      if (i < 9) s.step();
    }
    s.step();  // step total_steps is still allowed (as in PyTorch), the next one is not
    CHECK(s.last_epoch() == 10);
    CHECK_THROWS_WITH_AS(s.step(), "[optim.OneCycleLR] tried to step 11 times; the specified number of total steps is 10",
                         phasor::Error);
    CHECK(s.last_epoch() == 10);
  }
  // Adam: beta1 cycles
  const std::vector<std::pair<double, double>> adam_ref = {
      {0.020000000000000018, 0.95}, {0.26, 0.8999999999999999}, {0.5, 0.85},
      {0.3750005, 0.875},           {0.12500150000000004, 0.9249999999999999}, {2e-06, 0.95}};
  Tensor p = sched_leaf();
  optim::Adam adam({p}, optim::AdamOptions(0.1));
  optim::OneCycleLR s(adam, 0.5, 6, 0.5);
  for (int i = 0; i < 6; ++i) {
    const auto& o = static_cast<const optim::AdamOptions&>(adam.param_groups()[0].options());
    CHECK(o.lr() == doctest::Approx(adam_ref[i].first).epsilon(1e-12));
    CHECK(std::get<0>(o.betas()) == doctest::Approx(adam_ref[i].second).epsilon(1e-12));
    CHECK(std::get<1>(o.betas()) == 0.999);
    if (i < 5) s.step();
  }
}

TEST_CASE("sched: ReduceLROnPlateau matches PyTorch") {
  Tensor p = sched_leaf();
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  optim::ReduceLROnPlateau s(opt, "min", 0.5, 2, 0.1, "rel", 1, {0.1});
  const std::vector<double> metrics = {10, 9.5, 9.2, 9.1, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 1.0, 1.0, 1.0, 1.0};
  const std::vector<double> want = {1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.125, 0.1};
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    CAPTURE(i);
    s.step(metrics[i]);
    CHECK(opt.param_groups()[0].lr() == want[i]);
    CHECK(s.get_last_lr()[0] == want[i]);
  }
  Tensor q = sched_leaf();
  optim::SGD opt2({q}, optim::SGDOptions(1.0));
  optim::ReduceLROnPlateau s2(opt2, "max", 0.1, 0, 0.5, "abs");
  const std::vector<double> m2 = {1, 2, 2.4, 3, 3.2, 3.3, 4};
  const std::vector<double> w2 = {1.0, 1.0, 0.1, 0.1, 0.010000000000000002, 0.0010000000000000002, 0.0010000000000000002};
  for (std::size_t i = 0; i < m2.size(); ++i) {
    CAPTURE(i);
    s2.step(scalar_tensor(m2[i], float64));
    CHECK(opt2.param_groups()[0].lr() == doctest::Approx(w2[i]).epsilon(1e-15));
  }
  CHECK(s2.best() == 4);
  // state round trip
  optim::ReduceLROnPlateau s3(opt2, "max", 0.1, 0, 0.5, "abs");
  s3.load_state_dict(s2.state_dict());
  CHECK(s3.best() == 4);
  CHECK(s3.last_epoch() == 7);
  CHECK_THROWS_WITH_AS(s3.load_state_dict({}), doctest::Contains("missing key 'best'"), phasor::Error);
}

TEST_CASE("sched: state_dict round trip and bad arguments") {
  Tensor p = sched_leaf();
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  optim::CosineAnnealingLR a(opt, 10, 0.0);
  for (int i = 0; i < 4; ++i) a.step();
  StateDict sd = a.state_dict();
  CHECK(sd.at("last_epoch").item<double>() == 4);
  Tensor q = sched_leaf();
  optim::SGD opt2({q}, optim::SGDOptions(0.1));
  optim::CosineAnnealingLR b(opt2, 10, 0.0);
  b.load_state_dict(sd);
  opt2.load_state_dict(opt.state_dict());
  for (int i = 0; i < 3; ++i) {
    a.step();
    b.step();
    CHECK(opt2.param_groups()[0].lr() == opt.param_groups()[0].lr());
  }
  StateDict bad = sd;
  bad["base_lrs"] = zeros({3}, float64);
  CHECK_THROWS_WITH_AS(b.load_state_dict(bad), doctest::Contains("key 'base_lrs' should be a real 1-d tensor of 1 values"),
                       phasor::Error);

  CHECK_THROWS_WITH_AS(optim::StepLR(opt, 0), "[optim.StepLR] step_size must be >= 1, got 0", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::CosineAnnealingLR(opt, 0), "[optim.CosineAnnealingLR] T_max must be >= 1, got 0",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::OneCycleLR(opt, 1.0, 0), "[optim.OneCycleLR] total_steps must be a positive integer, got 0",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::OneCycleLR(opt, 1.0, 10, 1.5), "[optim.OneCycleLR] pct_start must be in [0, 1], got 1.5",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::OneCycleLR(opt, 1.0, 10, 0.3, "cosine"),
                       "[optim.OneCycleLR] anneal_strategy must be \"cos\" or \"linear\", got \"cosine\"", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::OneCycleLR(opt, std::vector<double>{1.0, 2.0}, 10),
                       "[optim.OneCycleLR] expected 1 max_lr value(s), one per parameter group, got 2", phasor::Error);
  optim::LBFGS lb({q});
  CHECK_THROWS_WITH_AS(optim::OneCycleLR(lb, 1.0, 10),
                       "[optim.OneCycleLR] optimizer must support momentum or beta1 with the cycle_momentum option enabled",
                       phasor::Error);
  CHECK_NOTHROW(optim::OneCycleLR(lb, 1.0, 10, 0.3, "cos", /*cycle_momentum=*/false));
  CHECK_THROWS_WITH_AS(optim::ReduceLROnPlateau(opt, "minimum"),
                       "[optim.ReduceLROnPlateau] mode must be \"min\" or \"max\", got \"minimum\"", phasor::Error);
  CHECK_THROWS_WITH_AS(optim::ReduceLROnPlateau(opt, "min", 1.0), "[optim.ReduceLROnPlateau] factor must be in [0, 1), got 1",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::ReduceLROnPlateau(opt, "min", 0.1, 10, 1e-4, "relative"),
                       "[optim.ReduceLROnPlateau] threshold_mode must be \"rel\" or \"abs\", got \"relative\"",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::ReduceLROnPlateau(opt, "min", 0.1, -1), "[optim.ReduceLROnPlateau] patience must be >= 0, got -1",
                       phasor::Error);
  CHECK_THROWS_WITH_AS(optim::ReduceLROnPlateau(opt, "min", 0.1, 10, 1e-4, "rel", 0, {0.1, 0.2}),
                       "[optim.ReduceLROnPlateau] expected 1 or 1 min_lr value(s), got 2", phasor::Error);
}

// ---- gradient clipping -----------------------------------------------------------------------------------

TEST_CASE("clip_grad_norm_ and clip_grad_value_") {
  Tensor a = zeros({2}, float64).requires_grad_(), b = zeros({1}, float64).requires_grad_();
  Tensor c = zeros({1}, float64).requires_grad_();  // no gradient: ignored
  auto set = [&] {
    a.set_grad(from_vector(std::vector<double>{3, -4}));
    b.set_grad(from_vector(std::vector<double>{12}));
  };
  set();
  Tensor n = optim::clip_grad_norm_({a, b, c}, 6.5);
  CHECK(n.dim() == 0);
  CHECK(n.dtype() == float64);
  CHECK(n.item<double>() == doctest::Approx(13.0).epsilon(1e-15));
  const double k = 6.5 / (13.0 + 1e-6);
  check_close(vals(a.grad()), std::vector<double>{3 * k, -4 * k}, 1e-15);
  check_close(vals(b.grad()), std::vector<double>{12 * k}, 1e-15);
  CHECK_FALSE(c.grad().defined());

  set();  // below the limit: unchanged
  CHECK(optim::clip_grad_norm_({a, b}, 100.0).item<double>() == doctest::Approx(13.0));
  CHECK(vals(a.grad()) == std::vector<double>{3, -4});

  set();
  CHECK(optim::clip_grad_norm_({a, b}, 6.0, INFINITY).item<double>() == 12.0);
  check_close(vals(b.grad()), std::vector<double>{12 * 6.0 / (12.0 + 1e-6)}, 1e-15);
  set();
  CHECK(optim::clip_grad_norm_({a, b}, 100.0, 1.0).item<double>() == doctest::Approx(19.0));
  set();
  CHECK(optim::clip_grad_norm_({a, b}, 100.0, 3.0).item<double>() ==
        doctest::Approx(std::cbrt(27.0 + 64.0 + 1728.0)).epsilon(1e-14));

  // complex gradients: |3+4i| = 5, float32 result
  Tensor z = zeros({2}, complex64).requires_grad_();
  z.set_grad(from_vector(std::vector<std::complex<float>>{{3, 4}, {0, 12}}));
  Tensor nz = optim::clip_grad_norm_(z, 1.0);
  CHECK(nz.dtype() == float32);
  CHECK(nz.item<double>() == doctest::Approx(13.0).epsilon(1e-6));
  auto zg = to_vector<std::complex<float>>(z.grad());
  CHECK(std::abs(zg[0]) == doctest::Approx(5.0 / 13.0).epsilon(1e-5));
  CHECK(std::abs(zg[0] + zg[1]) == doctest::Approx(std::abs(std::complex<double>(3, 16)) / 13.0).epsilon(1e-5));

  // nothing to clip
  CHECK(optim::clip_grad_norm_({c}, 1.0).item<double>() == 0.0);

  // non-finite
  a.set_grad(from_vector(std::vector<double>{INFINITY, 1}));
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({a}, 1.0, 2.0, true), doctest::Contains("[clip_grad_norm_] the total norm of order 2"),
                       phasor::Error);
  CHECK(std::isinf(vals(a.grad())[0]));  // unchanged on error
  CHECK(std::isinf(optim::clip_grad_norm_({a}, 1.0).item<double>()));
  CHECK_THROWS_WITH_AS(optim::clip_grad_norm_({a}, 1.0, 0.0), "[clip_grad_norm_] norm_type must be > 0 or inf, got 0",
                       phasor::Error);

  // clip by value
  a.set_grad(from_vector(std::vector<double>{3, -4}));
  z.set_grad(from_vector(std::vector<std::complex<float>>{{3, -0.5f}, {-7, 2}}));
  optim::clip_grad_value_({a, z, c}, 2.5);
  CHECK(vals(a.grad()) == std::vector<double>{2.5, -2.5});
  auto zv = to_vector<std::complex<float>>(z.grad());
  CHECK(zv[0] == std::complex<float>(2.5f, -0.5f));
  CHECK(zv[1] == std::complex<float>(-2.5f, 2.0f));
  CHECK_THROWS_WITH_AS(optim::clip_grad_value_(a, -1.0), "[clip_grad_value_] clip_value must be >= 0, got -1", phasor::Error);
}
