// src/autodiff/gradcheck.cpp - gradcheck and gradgradcheck: analytic vjps vs float64 central
// differences, complex-aware.
//
// Note [complex gradcheck]
// Every complex number is treated as two reals. With PyTorch's convention the gradient of a
// real L w.r.t. z = a + ib is dL/da + i dL/db. Backward with grad_output 1 at output element k
// therefore yields, for each input element, d(Re w_k)/da + i d(Re w_k)/db, and grad_output i
// yields the same for Im w_k. The numerical side perturbs a and b separately by +-eps and
// measures the change of Re w and Im w. The two Jacobians (over real components) must agree.
// Cost: two evaluations of fn per real input component (a column of the numerical Jacobian) and one
// backward pass per real output component (a row of the analytic one, for every input at once).
#include <cmath>
#include <complex>
#include <sstream>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"
#include "phasor/random.hpp"

namespace phasor::autodiff {

namespace {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using cd = std::complex<double>;

/// Flattened complex128 copy of a tensor's values (real tensors get zero imaginary parts).
std::vector<cd> values_of(const Tensor& t) {
  NoGradGuard ng;
  return to_vector<cd>(t.detach());
}

bool differentiable(const Tensor& t) { return t.defined() && is_floating_or_complex(t.dtype()); }

std::vector<Tensor> call(const Fn& fn, const std::vector<Tensor>& inputs) {
  EnableGradGuard eg;
  return fn(inputs);
}

/// Fresh leaves with the same values and requires_grad flags (so fn never sees shared storage).
std::vector<Tensor> fresh_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> r;
  for (const auto& t : inputs) {
    if (!t.defined()) {
      r.push_back(t);
      continue;
    }
    Tensor c;
    {
      NoGradGuard ng;
      c = t.detach().clone();
    }
    if (t.requires_grad()) c.requires_grad_();
    r.push_back(c);
  }
  return r;
}

std::string fmt(const cd& v) {
  std::ostringstream os;
  os.precision(10);
  os << v.real();
  return os.str();
}

bool check(const Fn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& o, const char* opname) {
  std::vector<std::size_t> wrt;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.requires_grad()) continue;
    if (t.dtype() != Dtype::Float64 && t.dtype() != Dtype::Complex128)
      throw Error(opname, "input " + std::to_string(i) + " is " + dtype_name(t.dtype()) +
                              "; gradcheck needs float64 or complex128 inputs for accurate differences");
    wrt.push_back(i);
  }
  if (wrt.empty()) throw Error(opname, "no input requires grad");

  // analytic pass
  std::vector<Tensor> xin = fresh_inputs(inputs);
  std::vector<Tensor> outs = call(fn, xin);
  std::vector<std::size_t> diff_out;
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (differentiable(outs[k])) diff_out.push_back(k);
  if (diff_out.empty()) throw Error(opname, "the function returned no floating or complex output");

  std::vector<Tensor> wrt_t;
  for (auto i : wrt) wrt_t.push_back(xin[i]);

  // Real output components, in (output, element, Re/Im) order: the rows of the Jacobians.
  struct OutComponent {
    std::size_t ko;  // index into diff_out
    std::int64_t m;
    int oc;
  };
  std::vector<OutComponent> rows;
  for (std::size_t ko = 0; ko < diff_out.size(); ++ko) {
    const Tensor& y = outs[diff_out[ko]];
    for (std::int64_t m = 0; m < y.numel(); ++m)
      for (int oc = 0; oc < (y.is_complex() ? 2 : 1); ++oc) rows.push_back({ko, m, oc});
  }
  const std::size_t n_rows = rows.size();
  // Jacobians per checked input, column-major over that input's real components (element j, part comp):
  // entry (row r, column c) at [c * n_rows + r]
  std::vector<std::size_t> n_cols(wrt.size());
  std::vector<std::vector<double>> num(wrt.size()), ana(wrt.size());
  for (std::size_t wi = 0; wi < wrt.size(); ++wi) {
    const Tensor& x = inputs[wrt[wi]];
    n_cols[wi] = static_cast<std::size_t>(x.numel()) * (x.is_complex() ? 2 : 1);
    num[wi].assign(n_cols[wi] * n_rows, 0.0);
    ana[wi].assign(n_cols[wi] * n_rows, 0.0);
  }

  // numerical Jacobians: two evaluations of fn per input component give a whole column
  for (std::size_t wi = 0; wi < wrt.size(); ++wi) {
    const std::size_t ii = wrt[wi];
    const bool xc = inputs[ii].is_complex();
    for (std::size_t c = 0; c < n_cols[wi]; ++c) {
      const auto j = static_cast<std::int64_t>(xc ? c / 2 : c);
      const int comp = xc ? static_cast<int>(c % 2) : 0;
      std::vector<std::vector<cd>> fp, fm;  // f(x + eps e_j) and f(x - eps e_j), per differentiable output
      for (int sgn : {+1, -1}) {
        std::vector<Tensor> xs = fresh_inputs(inputs);
        {
          NoGradGuard ng;
          Tensor e = xs[ii].detach().reshape({-1}).select(0, j);
          if (xc) e.add_(Scalar(comp == 0 ? cd(sgn * o.eps, 0) : cd(0, sgn * o.eps)));
          else e.add_(Scalar(sgn * o.eps));
        }
        auto ys = call(fn, xs);
        auto& dst = sgn > 0 ? fp : fm;
        for (auto k : diff_out) dst.push_back(values_of(ys[k]));
      }
      for (std::size_t r = 0; r < n_rows; ++r) {
        const auto m = static_cast<std::size_t>(rows[r].m);
        const cd d = (fp[rows[r].ko][m] - fm[rows[r].ko][m]) / (2 * o.eps);
        num[wi][c * n_rows + r] = rows[r].oc == 0 ? d.real() : d.imag();
      }
    }
  }

  // analytic Jacobians: one backward pass per output component gives a whole row, for every input at once
  std::vector<Tensor> douts;
  for (auto k : diff_out) douts.push_back(outs[k]);
  for (std::size_t r = 0; r < n_rows; ++r) {
    std::vector<Tensor> gos;
    for (auto k : diff_out) gos.push_back(zeros_like(outs[k]));
    {
      NoGradGuard ng;
      gos[rows[r].ko].reshape({-1}).select(0, rows[r].m).fill_(rows[r].oc == 0 ? Scalar(1.0) : Scalar(cd(0, 1)));
    }
    std::vector<Tensor> gs;
    {
      EnableGradGuard eg;
      gs = grad(douts, wrt_t, gos, /*retain_graph=*/true, false, /*allow_unused=*/true);
    }
    for (std::size_t wi = 0; wi < wrt.size(); ++wi) {
      if (!gs[wi].defined()) continue;  // unused input: a zero row
      const std::vector<cd> g = values_of(gs[wi]);
      const bool xc = inputs[wrt[wi]].is_complex();
      for (std::size_t c = 0; c < n_cols[wi]; ++c) {
        const cd v = g[xc ? c / 2 : c];
        ana[wi][c * n_rows + r] = xc && c % 2 ? v.imag() : v.real();
      }
    }
  }

  // compare, the first mismatch in (input, element, part, output, element, part) order
  for (std::size_t wi = 0; wi < wrt.size(); ++wi) {
    const std::size_t ii = wrt[wi];
    const bool xc = inputs[ii].is_complex();
    for (std::size_t c = 0; c < n_cols[wi]; ++c)
      for (std::size_t r = 0; r < n_rows; ++r) {
        const double n = num[wi][c * n_rows + r], a = ana[wi][c * n_rows + r];
        if (std::abs(a - n) <= o.atol + o.rtol * std::abs(n) && std::isnan(a) == std::isnan(n)) continue;
        if (!o.raise_exception) return false;
        const bool yc = outs[diff_out[rows[r].ko]].is_complex();
        std::ostringstream os;
        os << "Jacobian mismatch for output " << diff_out[rows[r].ko] << (yc ? (rows[r].oc ? " (imag)" : " (real)") : "")
           << " element " << rows[r].m << " w.r.t. input " << ii << (xc ? (c % 2 ? " (imag)" : " (real)") : "")
           << " element " << (xc ? c / 2 : c) << ": numerical " << fmt(cd(n)) << " vs analytical " << fmt(cd(a))
           << " (atol " << o.atol << ", rtol " << o.rtol << ")";
        throw Error(opname, os.str());
      }
  }
  return true;
}

}  // namespace

bool gradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
               const std::vector<Tensor>& inputs, const GradcheckOptions& opts) {
  return check(fn, inputs, opts, "gradcheck");
}

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& opts) {
  return gradcheck(Fn([fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; }), inputs, opts);
}

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               double eps, double atol, double rtol) {
  GradcheckOptions o;
  o.eps = eps;
  o.atol = atol;
  o.rtol = rtol;
  return gradcheck(fn, inputs, o);
}

bool gradgradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                   const std::vector<Tensor>& inputs, const GradcheckOptions& opts) {
  // Cotangents for the outputs, fixed by a seeded generator so the check is reproducible.
  std::vector<Tensor> outs = call(fn, fresh_inputs(inputs));
  Generator gen(1234);
  std::vector<Tensor> all = inputs;
  std::vector<std::size_t> diff_out;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (!differentiable(outs[k])) continue;
    diff_out.push_back(k);
    Tensor v = randn(outs[k].shape(), outs[k].dtype(), outs[k].device(), &gen);
    v.requires_grad_();
    all.push_back(v);
  }
  const std::size_t n_in = inputs.size();
  Fn vjp = [fn, n_in, diff_out](const std::vector<Tensor>& a) {
    std::vector<Tensor> in(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n_in));
    std::vector<Tensor> ys = fn(in);
    std::vector<Tensor> douts, gos, wrt;
    for (std::size_t k = 0; k < diff_out.size(); ++k) {
      douts.push_back(ys[diff_out[k]]);
      gos.push_back(a[n_in + k]);
    }
    for (const auto& t : in)
      if (t.defined() && t.requires_grad()) wrt.push_back(t);
    auto gs = grad(douts, wrt, gos, true, /*create_graph=*/true, /*allow_unused=*/true);
    std::vector<Tensor> r;
    for (std::size_t i = 0; i < gs.size(); ++i) r.push_back(gs[i].defined() ? gs[i] : zeros_like(wrt[i]));
    return r;
  };
  return check(vjp, all, opts, "gradgradcheck");
}

bool gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& opts) {
  return gradgradcheck(Fn([fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; }), inputs, opts);
}

}  // namespace phasor::autodiff
