// phasor/nn/loss.hpp - loss functions (torch.nn.functional semantics) and the operator-learning
// losses of the FNO papers (relative Lp, spectral H1), plus softmax / log_softmax.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::nn {

/// How a loss combines its per-element (or per-sample) values: keep them, average, or add.
enum class Reduction { none, mean, sum };

/// Parses "none", "mean" or "sum" (torch's reduction strings); throws phasor::Error otherwise.
Reduction reduction_from_string(const std::string& name);

namespace functional {

/// The reduction enum, also reachable as nn::functional::Reduction.
using phasor::nn::Reduction;

// ---- pointwise regression losses ----------------------------------------------------------------
// Input and target must have the same shape (no silent broadcasting; torch only warns).

/// Squared error (input - target)^2, reduced; complex inputs give |input - target|^2.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);
/// Absolute error |input - target|, reduced (complex inputs allowed).
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0 gives l1_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                      double beta = 1.0);
/// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target); delta > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
                  double delta = 1.0);

// ---- classification --------------------------------------------------------------------------------

/// exp(x) / sum(exp(x)) along `dim`, computed with a max shift (floating input).
Tensor softmax(const Tensor& x, std::int64_t dim);
/// x - logsumexp(x) along `dim`, computed with a max shift (floating input).
Tensor log_softmax(const Tensor& x, std::int64_t dim);
/// Negative log-likelihood of log-probabilities `input` (C), (N, C) or (N, C, d1, ...) at int64 class
/// indices `target` ((), (N) or (N, d1, ...)); optional per-class `weight` (C); targets equal to
/// `ignore_index` contribute nothing; mean divides by the summed weights of the counted targets.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                std::int64_t ignore_index = -100, Reduction reduction = Reduction::mean);
/// log_softmax over the class dim (dim 1, or 0 for 1-D input) followed by nll_loss, as
/// torch.nn.functional.cross_entropy: int64 class-index targets, or floating class-probability
/// targets of the input's shape (ignore_index not allowed then); label_smoothing in [0, 1].
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     std::int64_t ignore_index = -100, Reduction reduction = Reduction::mean,
                     double label_smoothing = 0.0);

// ---- operator-learning losses (per sample: dim 0 is the batch) ----------------------------------

/// Per-sample ||pred - target||_p over all non-batch dims, then reduced over the batch (no quadrature
/// weight: multiply by h^(d/p) for a grid-spacing-scaled norm). p > 0 or infinity; complex allowed.
Tensor lp_loss(const Tensor& pred, const Tensor& target, double p = 2, Reduction reduction = Reduction::mean);
/// Per-sample relative error ||pred - target||_p / ||target||_p over all non-batch dims, then reduced
/// over the batch (mean by default, as the FNO papers' LpLoss). p > 0 or infinity; complex allowed;
/// a sample whose target norm is 0 gives inf or NaN, as in the reference implementations.
Tensor relative_lp_loss(const Tensor& pred, const Tensor& target, double p = 2,
                        Reduction reduction = Reduction::mean);
/// Sobolev H1 loss on a periodic domain, computed spectrally over the last `spatial_dims` dims:
/// ||u||_H1^2 = V sum_k (1 + |k|^2) |c_k|^2 with c_k the Fourier coefficients (norm "forward"),
/// wavenumbers k = 2 pi m / L_i and V = prod L_i (`domain_lengths`, default 1 each; one value is
/// used for every dim). Dim 0 is the batch, dims between it and the spatial dims are channels
/// (summed into the norm). Per sample ||pred - target||_H1, divided by ||target||_H1 when
/// `relative`, then reduced over the batch. Real inputs use rfftn (interior half-spectrum bins
/// counted twice), complex inputs fftn.
Tensor h1_loss(const Tensor& pred, const Tensor& target, std::int64_t spatial_dims,
               const std::vector<double>& domain_lengths = {}, bool relative = true,
               Reduction reduction = Reduction::mean);

}  // namespace functional
}  // namespace phasor::nn
