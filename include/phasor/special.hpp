// phasor/special.hpp - special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma, Hurwitz zeta),
// the incomplete gamma functions, the error-function family (erfinv, erfcx), the Bessel functions (J, Y, I, K of
// orders 0 and 1, the spherical j0), the Airy function Ai, the standard normal distribution's functions and the
// classical orthogonal polynomials with their derivatives in x (Note [orthogonal polynomials] in
// src/core/polynomial_rules.hpp); the top-level names are torch's (torch.lgamma, torch.igamma, ...) and namespace
// `special` holds torch.special's. Real floating inputs (int64 and bool promote to the default float dtype, complex
// is refused), any device, differentiable where torch's are and beyond (Note [special functions] in
// src/core/special.cpp has the gradients; the values are src/core/special_rules.hpp's, the same code on the CPU and
// the GPU).
#pragma once
#include <cstdint>
#include <optional>

#include "phasor/scalar.hpp"
#include "phasor/tensor.hpp"

namespace phasor {

/// log|Gamma(x)| (torch.lgamma): +inf at 0 and the negative integers.
Tensor lgamma(const Tensor& x);
/// psi(x) = Gamma'(x) / Gamma(x) (torch.digamma): -inf at +0, NaN at the negative integers.
Tensor digamma(const Tensor& x);
/// psi^(n)(x), the n-th derivative of digamma, n >= 0 (torch.polygamma).
Tensor polygamma(std::int64_t n, const Tensor& x);
/// log of the multivariate gamma function of dimension p >= 1 (torch.mvlgamma); every element must exceed (p - 1) / 2.
Tensor mvlgamma(const Tensor& x, std::int64_t p);
/// The inverse error function (torch.erfinv): +-inf at +-1, NaN outside [-1, 1].
Tensor erfinv(const Tensor& x);
/// The modified Bessel function of the first kind of order 0 (torch.i0).
Tensor i0(const Tensor& x);
/// The regularized lower incomplete gamma function P(a, x) (torch.igamma); differentiable in x (not in a, as torch).
Tensor igamma(const Tensor& a, const Tensor& x);
/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (torch.igammac); differentiable in x.
Tensor igammac(const Tensor& a, const Tensor& x);

/// torch.special's functions (those of the top level under their special names too).
namespace special {

/// log|Gamma(x)| (torch.special.gammaln).
Tensor gammaln(const Tensor& x);
/// psi(x), the digamma function (torch.special.digamma).
Tensor digamma(const Tensor& x);
/// psi(x), the digamma function (torch.special.psi).
Tensor psi(const Tensor& x);
/// psi^(n)(x), n >= 0 (torch.special.polygamma).
Tensor polygamma(std::int64_t n, const Tensor& x);
/// log of the multivariate gamma function of dimension p (torch.special.multigammaln).
Tensor multigammaln(const Tensor& x, std::int64_t p);
/// The Hurwitz zeta function sum_k (k + q)^-x (torch.special.zeta; x = 1: +inf, x < 1: NaN); differentiable in q.
Tensor zeta(const Tensor& x, const Tensor& q);
/// zeta of a number x.
Tensor zeta(const Scalar& x, const Tensor& q);
/// zeta at a number q.
Tensor zeta(const Tensor& x, const Scalar& q);
/// P(a, x), the regularized lower incomplete gamma function (torch.special.gammainc).
Tensor gammainc(const Tensor& a, const Tensor& x);
/// Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function (torch.special.gammaincc).
Tensor gammaincc(const Tensor& a, const Tensor& x);
/// The error function (torch.special.erf).
Tensor erf(const Tensor& x);
/// 1 - erf(x) without its cancellation (torch.special.erfc).
Tensor erfc(const Tensor& x);
/// exp(x^2) erfc(x), the scaled complementary error function (torch.special.erfcx): no overflow for large x.
Tensor erfcx(const Tensor& x);
/// The inverse error function (torch.special.erfinv).
Tensor erfinv(const Tensor& x);
/// I0(x) (torch.special.i0).
Tensor i0(const Tensor& x);
/// exp(-|x|) I0(x), no overflow for large |x| (torch.special.i0e).
Tensor i0e(const Tensor& x);
/// I1(x), the modified Bessel function of the first kind of order 1 (torch.special.i1).
Tensor i1(const Tensor& x);
/// exp(-|x|) I1(x) (torch.special.i1e).
Tensor i1e(const Tensor& x);
/// J0(x), the Bessel function of the first kind of order 0 (torch.special.bessel_j0); differentiable (-J1).
Tensor bessel_j0(const Tensor& x);
/// J1(x), the Bessel function of the first kind of order 1 (torch.special.bessel_j1); differentiable.
Tensor bessel_j1(const Tensor& x);
/// Y0(x), the Bessel function of the second kind of order 0 (torch.special.bessel_y0): -inf at 0, NaN below.
Tensor bessel_y0(const Tensor& x);
/// Y1(x), the Bessel function of the second kind of order 1 (torch.special.bessel_y1): -inf at 0, NaN below.
Tensor bessel_y1(const Tensor& x);
/// I0(x) (torch.special.modified_bessel_i0, the same op as i0).
Tensor modified_bessel_i0(const Tensor& x);
/// I1(x) (torch.special.modified_bessel_i1, the same op as i1).
Tensor modified_bessel_i1(const Tensor& x);
/// K0(x), the modified Bessel function of the second kind of order 0 (torch.special.modified_bessel_k0): +inf at 0, NaN below.
Tensor modified_bessel_k0(const Tensor& x);
/// K1(x), the modified Bessel function of the second kind of order 1 (torch.special.modified_bessel_k1): +inf at 0, NaN below.
Tensor modified_bessel_k1(const Tensor& x);
/// e^x K0(x), no underflow for large x (torch.special.scaled_modified_bessel_k0).
Tensor scaled_modified_bessel_k0(const Tensor& x);
/// e^x K1(x), no underflow for large x (torch.special.scaled_modified_bessel_k1).
Tensor scaled_modified_bessel_k1(const Tensor& x);
/// sin(x) / x, the spherical Bessel function of the first kind of order 0, 1 at 0 (torch.special.spherical_bessel_j0).
Tensor spherical_bessel_j0(const Tensor& x);
/// Ai(x), the Airy function of the first kind (torch.special.airy_ai); differentiable (Ai', whose derivative is x Ai).
Tensor airy_ai(const Tensor& x);

// The orthogonal polynomials p_n(x), torch.special's: n broadcasts with x and is integer-valued (a fractional n is
// truncated toward zero, as torch's; n < 0 gives 0; NaN or infinite n gives NaN); differentiable in x to any
// order (not in n: a backward that needs it throws).
/// T_n(x), the Chebyshev polynomial of the first kind (torch.special.chebyshev_polynomial_t).
Tensor chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
/// T_n at a number x.
Tensor chebyshev_polynomial_t(const Scalar& x, const Tensor& n);
/// T_n(x) for a number n.
Tensor chebyshev_polynomial_t(const Tensor& x, const Scalar& n);
/// U_n(x), the Chebyshev polynomial of the second kind (torch.special.chebyshev_polynomial_u).
Tensor chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
/// U_n at a number x.
Tensor chebyshev_polynomial_u(const Scalar& x, const Tensor& n);
/// U_n(x) for a number n.
Tensor chebyshev_polynomial_u(const Tensor& x, const Scalar& n);
/// V_n(x), the Chebyshev polynomial of the third kind (torch.special.chebyshev_polynomial_v).
Tensor chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
/// V_n at a number x.
Tensor chebyshev_polynomial_v(const Scalar& x, const Tensor& n);
/// V_n(x) for a number n.
Tensor chebyshev_polynomial_v(const Tensor& x, const Scalar& n);
/// W_n(x), the Chebyshev polynomial of the fourth kind (torch.special.chebyshev_polynomial_w).
Tensor chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
/// W_n at a number x.
Tensor chebyshev_polynomial_w(const Scalar& x, const Tensor& n);
/// W_n(x) for a number n.
Tensor chebyshev_polynomial_w(const Tensor& x, const Scalar& n);
/// T*_n(x) = T_n(2x - 1), the shifted Chebyshev polynomial of the first kind (torch.special.shifted_chebyshev_polynomial_t).
Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
/// T*_n at a number x.
Tensor shifted_chebyshev_polynomial_t(const Scalar& x, const Tensor& n);
/// T*_n(x) for a number n.
Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Scalar& n);
/// U*_n(x) = U_n(2x - 1) (torch.special.shifted_chebyshev_polynomial_u).
Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
/// U*_n at a number x.
Tensor shifted_chebyshev_polynomial_u(const Scalar& x, const Tensor& n);
/// U*_n(x) for a number n.
Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Scalar& n);
/// V*_n(x) = V_n(2x - 1) (torch.special.shifted_chebyshev_polynomial_v).
Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
/// V*_n at a number x.
Tensor shifted_chebyshev_polynomial_v(const Scalar& x, const Tensor& n);
/// V*_n(x) for a number n.
Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Scalar& n);
/// W*_n(x) = W_n(2x - 1) (torch.special.shifted_chebyshev_polynomial_w).
Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
/// W*_n at a number x.
Tensor shifted_chebyshev_polynomial_w(const Scalar& x, const Tensor& n);
/// W*_n(x) for a number n.
Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Scalar& n);
/// H_n(x), the physicists' Hermite polynomial (torch.special.hermite_polynomial_h).
Tensor hermite_polynomial_h(const Tensor& x, const Tensor& n);
/// H_n at a number x.
Tensor hermite_polynomial_h(const Scalar& x, const Tensor& n);
/// H_n(x) for a number n.
Tensor hermite_polynomial_h(const Tensor& x, const Scalar& n);
/// He_n(x), the probabilists' Hermite polynomial (torch.special.hermite_polynomial_he).
Tensor hermite_polynomial_he(const Tensor& x, const Tensor& n);
/// He_n at a number x.
Tensor hermite_polynomial_he(const Scalar& x, const Tensor& n);
/// He_n(x) for a number n.
Tensor hermite_polynomial_he(const Tensor& x, const Scalar& n);
/// L_n(x), the Laguerre polynomial (torch.special.laguerre_polynomial_l).
Tensor laguerre_polynomial_l(const Tensor& x, const Tensor& n);
/// L_n at a number x.
Tensor laguerre_polynomial_l(const Scalar& x, const Tensor& n);
/// L_n(x) for a number n.
Tensor laguerre_polynomial_l(const Tensor& x, const Scalar& n);
/// P_n(x), the Legendre polynomial (torch.special.legendre_polynomial_p).
Tensor legendre_polynomial_p(const Tensor& x, const Tensor& n);
/// P_n at a number x.
Tensor legendre_polynomial_p(const Scalar& x, const Tensor& n);
/// P_n(x) for a number n.
Tensor legendre_polynomial_p(const Tensor& x, const Scalar& n);
/// The standard normal distribution function (torch.special.ndtr), accurate in both tails.
Tensor ndtr(const Tensor& x);
/// The inverse of ndtr (torch.special.ndtri): -inf at 0, +inf at 1, NaN outside [0, 1].
Tensor ndtri(const Tensor& x);
/// log ndtr(x), accurate far into the lower tail (torch.special.log_ndtr).
Tensor log_ndtr(const Tensor& x);
/// -x log x, 0 at 0, -inf below (torch.special.entr).
Tensor entr(const Tensor& x);
/// x log1p(y), 0 where x = 0 unless y is NaN (torch.special.xlog1py).
Tensor xlog1py(const Tensor& x, const Tensor& y);
/// xlog1py of a number x.
Tensor xlog1py(const Scalar& x, const Tensor& y);
/// xlog1py with a number y.
Tensor xlog1py(const Tensor& x, const Scalar& y);
/// x log y, 0 where x = 0 unless y is NaN (torch.special.xlogy).
Tensor xlogy(const Tensor& x, const Tensor& y);
/// 1 / (1 + exp(-x)), the logistic sigmoid (torch.special.expit).
Tensor expit(const Tensor& x);
/// log(x / (1 - x)) (torch.special.logit).
Tensor logit(const Tensor& x);
/// sin(pi x) / (pi x), 1 at 0 (torch.special.sinc).
Tensor sinc(const Tensor& x);
/// 2^x (torch.special.exp2).
Tensor exp2(const Tensor& x);
/// exp(x) - 1 without cancellation near 0 (torch.special.expm1).
Tensor expm1(const Tensor& x);
/// log(1 + x) without cancellation near 0 (torch.special.log1p).
Tensor log1p(const Tensor& x);
/// x rounded half to even at `decimals` decimal places (negative: to tens, hundreds, ...), as torch.special.round:
/// round(x * 10^decimals) / 10^decimals.
Tensor round(const Tensor& x, std::int64_t decimals = 0);
/// exp(x) / sum(exp(x)) along dim, with a max shift, in `dtype` when given (torch.special.softmax).
Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<Dtype> dtype = std::nullopt);
/// x - logsumexp(x) along dim, in `dtype` when given (torch.special.log_softmax).
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<Dtype> dtype = std::nullopt);
/// log(sum(exp(x))) over dims without overflow (torch.special.logsumexp).
Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim = false);

}  // namespace special
}  // namespace phasor
