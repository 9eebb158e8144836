// src/core/polynomials.cpp - torch.special's orthogonal polynomials (chebyshev_polynomial_t/u/v/w, their shifted
// forms, hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p) as ops of (x, n) and their
// gradients.
//
// Note [polynomial gradients]
// Each family is one real binary op (core/real_binary.hpp: broadcast, int64 and bool in the default float dtype,
// complex refused) whose parameter k is the derivative order in x: the op of order k computes d^k/dx^k p_n(x) by
// the differentiated recurrence of Note [orthogonal polynomials] (core/polynomial_rules.hpp, the same code on the
// CPU and the GPU), and its gradient in x is g times the op of order k + 1, so gradients of gradients work to any
// order (up to kMaxPolynomialOrder; a higher one throws, naming the op). As torch's, there is no gradient in n
// (integer-valued): a backward that needs one throws.
#include <string>

#include "autodiff/node.hpp"
#include "core/pointwise.hpp"
#include "core/polynomial_rules.hpp"
#include "core/real_binary.hpp"
#include "phasor/special.hpp"

namespace phasor {
namespace {

using G = std::vector<Tensor>;
using detail::Ctx;
using detail::is_real_float_v;
using detail::polynomial_rules::kMaxPolynomialOrder;
namespace pr = detail::polynomial_rules;

/// d^k/dx^k p_n(x) of `family` (shifted: x -> 2x - 1) as the op `op` (Note [polynomial gradients]).
Tensor polynomial(const char* op, int family, bool shifted, const Tensor& x, const Tensor& n, int k) {
  if (k > kMaxPolynomialOrder)
    throw Error(op, "derivatives in x of order above " + std::to_string(kMaxPolynomialOrder) +
                        " are not supported (asked for order " + std::to_string(k) + ")");
  return detail::real_binary(
      op, x, n, false, detail::kSaveInputs,
      [family, shifted, k]<class T>(T u, T v) requires is_real_float_v<T> {
        return detail::polynomial_of(family, shifted, u, v, k);
      },
      [op, family, shifted, k](const Ctx& c, const G& g) {
        if (c.needs_grad(1)) detail::no_gradient(op, "n");
        return G{g[0] * polynomial(op, family, shifted, c.input(0), c.input(1), k + 1), Tensor()};
      },
      nullptr, static_cast<double>(k));
}

}  // namespace

namespace special {

// the three overloads of torch's (Tensor, Tensor), (Scalar, Tensor) and (Tensor, Scalar) of one family
#define PHASOR_POLYNOMIAL(NAME, FAMILY, SHIFTED)                                                                  \
  Tensor NAME(const Tensor& x, const Tensor& n) { return polynomial(#NAME, FAMILY, SHIFTED, x, n, 0); }         \
  Tensor NAME(const Scalar& x, const Tensor& n) { return NAME(detail::wrap_for(n, x), n); }                      \
  Tensor NAME(const Tensor& x, const Scalar& n) { return NAME(x, detail::wrap_for(x, n)); }

PHASOR_POLYNOMIAL(chebyshev_polynomial_t, pr::kChebyshevT, false)
PHASOR_POLYNOMIAL(chebyshev_polynomial_u, pr::kChebyshevU, false)
PHASOR_POLYNOMIAL(chebyshev_polynomial_v, pr::kChebyshevV, false)
PHASOR_POLYNOMIAL(chebyshev_polynomial_w, pr::kChebyshevW, false)
PHASOR_POLYNOMIAL(shifted_chebyshev_polynomial_t, pr::kChebyshevT, true)
PHASOR_POLYNOMIAL(shifted_chebyshev_polynomial_u, pr::kChebyshevU, true)
PHASOR_POLYNOMIAL(shifted_chebyshev_polynomial_v, pr::kChebyshevV, true)
PHASOR_POLYNOMIAL(shifted_chebyshev_polynomial_w, pr::kChebyshevW, true)
PHASOR_POLYNOMIAL(hermite_polynomial_h, pr::kHermiteH, false)
PHASOR_POLYNOMIAL(hermite_polynomial_he, pr::kHermiteHe, false)
PHASOR_POLYNOMIAL(laguerre_polynomial_l, pr::kLaguerreL, false)
PHASOR_POLYNOMIAL(legendre_polynomial_p, pr::kLegendreP, false)
#undef PHASOR_POLYNOMIAL

}  // namespace special
}  // namespace phasor
