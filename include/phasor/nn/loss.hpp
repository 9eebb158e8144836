// phasor/nn/loss.hpp - loss functions (torch.nn.functional semantics) and the operator-learning
// losses of the FNO papers (relative Lp, spectral H1), plus softmax / log_softmax.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::nn {

/// How a loss combines its per-element (or per-sample) values: keep them, average, or add; batchmean
/// (kl_div only) adds and divides by the batch size (dim 0).
enum class Reduction { none, mean, sum, batchmean };

/// Parses "none", "mean", "sum" or "batchmean" (torch's reduction strings); throws phasor::Error otherwise.
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

// ---- probabilistic losses ---------------------------------------------------------------------------
// Input and target must have the same shape; a weight broadcasts to the input's shape.

/// -w (t log(x) + (1 - t) log(1 - x)) with each log clamped at -100 (as torch), for probabilities x in
/// [0, 1] (checked: one host read); optional `weight` broadcast to the input. Differentiable in input,
/// target and weight; where a log is clamped its derivative is 0.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::mean);
/// Binary cross entropy of logits x: w ((1 - t) softplus(x) + pw t softplus(-x)), computed without
/// overflow or cancellation; `weight` and `pos_weight` (pw, e.g. (C)) broadcast to the input.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        Reduction reduction = Reduction::mean, const Tensor& pos_weight = Tensor());
/// Kullback-Leibler divergence of log-probabilities `input` from `target`: t (log t - x) (0 where t = 0),
/// or e^t (t - x) when `log_target`; batchmean divides the sum by input.size(0) (torch's correct KL).
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean,
              bool log_target = false);
/// Poisson negative log-likelihood: e^x - t x (log_input) or x - t log(x + eps); `full` adds the
/// Stirling term t log t - t + 0.5 log(2 pi t) where t > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, Reduction reduction = Reduction::mean);
/// Gaussian negative log-likelihood 0.5 (log v + (x - t)^2 / v) (+ 0.5 log(2 pi) when `full`), v = var
/// clamped at eps (the clamp passes gradients through, as torch). var has the input's shape, or one dim
/// fewer, or a last dim of 1 (homoscedastic); var must be >= 0 (checked: one host read).
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full = false,
                         double eps = 1e-6, Reduction reduction = Reduction::mean);

// ---- margin and embedding losses --------------------------------------------------------------------

/// 1 - cos(x1, x2) where target = 1, max(0, cos - margin) where target = -1 (0 elsewhere); inputs (N, D)
/// or (D), target (N) or (); cos uses torch's 1e-12 guard on the squared norms.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0,
                             Reduction reduction = Reduction::mean);
/// max(0, -target (input1 - input2) + margin); the three have the same number of dims and broadcast.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0,
                           Reduction reduction = Reduction::mean);
/// x where target != -1 plus max(0, margin - x) where target != 1 (target normally +-1).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = Reduction::mean);
/// log(1 + exp(-target x)), computed without overflow.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);
/// Per sample mean over the classes (last dim) of -w (t log sigmoid(x) + (1 - t) log sigmoid(-x)),
/// then reduced over the samples; `weight` broadcasts to the input (e.g. (C)).
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                   Reduction reduction = Reduction::mean);
/// Multi-class hinge: per sample sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C, for input
/// (N, C) or (C) and int64 classes y (N) or (); p is 1 or 2; weight (C).
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, std::int64_t p = 1, double margin = 1.0,
                         const Tensor& weight = Tensor(), Reduction reduction = Reduction::mean);
/// max(0, margin + d(a, p) - d(a, n)) with d = pairwise_distance(., ., p, eps); `swap` uses
/// min(d(a, n), d(p, n)) for the negative distance; the inputs have the same number of dims.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin = 1.0,
                           double p = 2, double eps = 1e-6, bool swap = false, Reduction reduction = Reduction::mean);

// ---- distances -------------------------------------------------------------------------------------

/// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along `dim` of the broadcast inputs.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, std::int64_t dim = 1, double eps = 1e-8);
/// ||x1 - x2 + eps||_p over the last dim of the broadcast inputs (p >= 0, or infinity).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6, bool keepdim = false);
/// The p-norm distances of the rows of x (N, M) for i < j in row-major order: (N (N - 1) / 2); p >= 0.
Tensor pdist(const Tensor& x, double p = 2);

}  // namespace functional
}  // namespace phasor::nn
