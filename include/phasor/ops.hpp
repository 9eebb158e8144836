// phasor/ops.hpp - free-function spelling of every tensor op (torch.* names and argument order).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

// ---- unary (see the Tensor methods of the same name) -----------------------------------------
Tensor neg(const Tensor& x);       ///< -x
Tensor abs(const Tensor& x);       ///< |x|
Tensor sign(const Tensor& x);      ///< sign
Tensor exp(const Tensor& x);       ///< e^x
Tensor expm1(const Tensor& x);     ///< e^x - 1
Tensor exp2(const Tensor& x);      ///< 2^x (complex: e^(x ln 2))
Tensor log(const Tensor& x);       ///< natural log
Tensor log1p(const Tensor& x);     ///< log(1 + x)
Tensor log2(const Tensor& x);      ///< base-2 log (complex: log(x) / ln 2)
Tensor log10(const Tensor& x);     ///< base-10 log (complex: log(x) / ln 10), e.g. decibels 20 log10|X|
Tensor sqrt(const Tensor& x);      ///< square root
Tensor rsqrt(const Tensor& x);     ///< 1 / sqrt(x)
Tensor reciprocal(const Tensor& x);  ///< 1 / x (int and bool promote to the default float dtype)
Tensor square(const Tensor& x);    ///< x * x
Tensor sin(const Tensor& x);       ///< sine
Tensor cos(const Tensor& x);       ///< cosine
Tensor tan(const Tensor& x);       ///< tangent
Tensor sinh(const Tensor& x);      ///< hyperbolic sine
Tensor cosh(const Tensor& x);      ///< hyperbolic cosine
Tensor tanh(const Tensor& x);      ///< hyperbolic tangent
Tensor asin(const Tensor& x);      ///< arcsine
Tensor acos(const Tensor& x);      ///< arccosine
Tensor atan(const Tensor& x);      ///< arctangent
Tensor asinh(const Tensor& x);     ///< inverse hyperbolic sine
Tensor acosh(const Tensor& x);     ///< inverse hyperbolic cosine (real part >= 0 for complex x)
Tensor atanh(const Tensor& x);     ///< inverse hyperbolic tangent
Tensor erf(const Tensor& x);       ///< error function
Tensor erfc(const Tensor& x);      ///< complementary error function 1 - erf(x), without its cancellation
Tensor sigmoid(const Tensor& x);   ///< logistic sigmoid
Tensor relu(const Tensor& x);      ///< max(x, 0)
Tensor gelu(const Tensor& x, bool tanh_approximation = false);  ///< GELU
Tensor silu(const Tensor& x);      ///< x * sigmoid(x)
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);  ///< smooth relu
Tensor floor(const Tensor& x);     ///< round down
Tensor ceil(const Tensor& x);      ///< round up
Tensor round(const Tensor& x);     ///< round half to even
Tensor trunc(const Tensor& x);     ///< round toward zero
Tensor frac(const Tensor& x);      ///< fractional part x - trunc(x), with x's sign (gradient 1)
Tensor conj(const Tensor& x);      ///< complex conjugate
Tensor angle(const Tensor& x);     ///< complex argument
Tensor isfinite(const Tensor& x);  ///< bool: finite
Tensor isnan(const Tensor& x);     ///< bool: NaN
Tensor isinf(const Tensor& x);     ///< bool: +-inf (complex: either part)
Tensor logical_not(const Tensor& x);  ///< bool: !x
Tensor signbit(const Tensor& x);    ///< bool: the sign bit is set (true for -0 and -NaN; real dtypes)
/// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the dtype's largest and lowest finite values);
/// complex: each part; integer and bool tensors are copied unchanged. The gradient passes where x is kept.
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

// ---- binary, broadcasting --------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  ///< a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  ///< a - alpha * b
Tensor mul(const Tensor& a, const Tensor& b);      ///< a * b
Tensor div(const Tensor& a, const Tensor& b);      ///< a / b
/// input + value * tensor1 * tensor2 in one pass (torch.addcmul; all broadcast, the result type the three
/// tensors'; the value must fit it).
Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
/// input + value * tensor1 / tensor2 in one pass (torch.addcdiv; floating or complex result type).
Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
/// input + weight * (end - input) in one pass (torch.lerp; floating or complex, broadcast; exact at weight 0
/// and 1). A number weight does not widen the result type and must fit it.
Tensor lerp(const Tensor& input, const Tensor& end, const Scalar& weight);
/// lerp with a tensor weight (broadcast with input and end; the result type the three tensors').
Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight);
Tensor pow(const Tensor& a, const Tensor& b);      ///< a ^ b
Tensor pow(const Tensor& a, const Scalar& e);      ///< a ^ e
Tensor pow(const Scalar& a, const Tensor& e);      ///< a ^ e
Tensor maximum(const Tensor& a, const Tensor& b);  ///< elementwise max
Tensor minimum(const Tensor& a, const Tensor& b);  ///< elementwise min
Tensor atan2(const Tensor& y, const Tensor& x);    ///< atan2(y, x)
/// a - trunc(a / b) * b, the sign of a (C's fmod; torch.fmod). int64 too: a zero int64 divisor throws.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);  ///< fmod by a number
/// a - floor(a / b) * b, the sign of b (Python's %; torch.remainder). int64 too: a zero int64 divisor throws.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);  ///< remainder by a number
Tensor remainder(const Scalar& a, const Tensor& b);  ///< remainder of a number
/// floor(a / b) (Python's //; torch.floor_divide), int64 or floating; zero gradient. A zero int64 divisor throws.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Scalar& b);  ///< floor_divide by a number
/// a / b rounded as torch.div's rounding_mode: "floor" (floor_divide), "trunc" (toward zero; int64 stays
/// int64, zero gradient) or "" (true division, div(a, b)).
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, const std::string& rounding_mode);  ///< div by a number, rounded
Tensor hypot(const Tensor& a, const Tensor& b);      ///< sqrt(a^2 + b^2) without overflow (ints -> default float)
Tensor copysign(const Tensor& a, const Tensor& b);   ///< |a| with b's sign bit (ints -> default float)
Tensor logaddexp(const Tensor& a, const Tensor& b);  ///< log(e^a + e^b) without overflow
Tensor logaddexp2(const Tensor& a, const Tensor& b); ///< log2(2^a + 2^b) without overflow
/// x log y, 0 where x = 0 (also for y = 0) unless y is NaN (torch.xlogy; entropies)
Tensor xlogy(const Tensor& x, const Tensor& y);
Tensor xlogy(const Scalar& x, const Tensor& y);  ///< xlogy of a number
Tensor xlogy(const Tensor& x, const Scalar& y);  ///< xlogy with a number
Tensor complex(const Tensor& real, const Tensor& imag);   ///< real + i imag (float -> complex)
Tensor polar(const Tensor& abs, const Tensor& angle);     ///< abs * e^(i angle)
Tensor eq(const Tensor& a, const Tensor& b);  ///< bool: ==
Tensor ne(const Tensor& a, const Tensor& b);  ///< bool: !=
Tensor lt(const Tensor& a, const Tensor& b);  ///< bool: <
Tensor le(const Tensor& a, const Tensor& b);  ///< bool: <=
Tensor gt(const Tensor& a, const Tensor& b);  ///< bool: >
Tensor ge(const Tensor& a, const Tensor& b);  ///< bool: >=
Tensor logical_and(const Tensor& a, const Tensor& b);  ///< bool: a && b
Tensor logical_or(const Tensor& a, const Tensor& b);   ///< bool: a || b
Tensor logical_xor(const Tensor& a, const Tensor& b);  ///< bool: a != b (as bools)

// ---- bitwise ops, shifts, gcd and lcm (torch's; bool and int64, no gradient) ------------------------------
// Note [bitwise ops]
// Operands are bool or int64 tensors (or C++ integers and bools as scalars); they promote as torch's: bool op
// bool is bool (and, or, xor, not are then the logical ops), an int64 operand makes the result int64. A
// floating or complex operand throws, as do two bool operands of the shifts, gcd and lcm (torch has no bool
// kernel for them). Shifts take torch's rule for amounts outside [0, 63]: a << b is 0 there, and a >> b is
// a >> 63 (0 for a >= 0, -1 for a < 0); >> is arithmetic (it keeps the sign). gcd is non-negative, gcd(0, 0) =
// 0; lcm(a, b) = |a / gcd(a, b) * b| in wrapping int64 arithmetic (0 when either is 0). The one value past
// int64, 2^63 (gcd(INT64_MIN, 0), gcd(INT64_MIN, INT64_MIN)), wraps to INT64_MIN as -INT64_MIN does.
Tensor bitwise_and(const Tensor& a, const Tensor& b);  ///< a & b (torch.bitwise_and)
Tensor bitwise_and(const Tensor& a, const Scalar& b);  ///< a & b for a number b
Tensor bitwise_and(const Scalar& a, const Tensor& b);  ///< a & b for a number a
Tensor bitwise_or(const Tensor& a, const Tensor& b);   ///< a | b (torch.bitwise_or)
Tensor bitwise_or(const Tensor& a, const Scalar& b);   ///< a | b for a number b
Tensor bitwise_or(const Scalar& a, const Tensor& b);   ///< a | b for a number a
Tensor bitwise_xor(const Tensor& a, const Tensor& b);  ///< a ^ b (torch.bitwise_xor)
Tensor bitwise_xor(const Tensor& a, const Scalar& b);  ///< a ^ b for a number b
Tensor bitwise_xor(const Scalar& a, const Tensor& b);  ///< a ^ b for a number a
Tensor bitwise_not(const Tensor& x);                   ///< ~x: bitwise on int64, logical on bool (torch.bitwise_not)
/// a << b (torch.bitwise_left_shift): 0 for shift amounts outside [0, 63] (Note [bitwise ops])
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Scalar& b);  ///< a << b for a number b
Tensor bitwise_left_shift(const Scalar& a, const Tensor& b);  ///< a << b for a number a
/// a >> b, arithmetic (torch.bitwise_right_shift): a >> 63 for amounts outside [0, 63] (Note [bitwise ops])
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Scalar& b);  ///< a >> b for a number b
Tensor bitwise_right_shift(const Scalar& a, const Tensor& b);  ///< a >> b for a number a
Tensor gcd(const Tensor& a, const Tensor& b);  ///< greatest common divisor, >= 0, gcd(0, 0) = 0 (torch.gcd)
Tensor gcd(const Tensor& a, const Scalar& b);  ///< gcd with a number
Tensor lcm(const Tensor& a, const Tensor& b);  ///< least common multiple, >= 0, wrapping on overflow (torch.lcm)
Tensor lcm(const Tensor& a, const Scalar& b);  ///< lcm with a number
/// bool: |a - b| <= atol + rtol |b| elementwise (broadcast), infinities equal only to themselves, NaN
/// equal to NaN only with equal_nan; as torch.isclose, but mixed dtypes promote (integers in float64).
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// True when isclose holds everywhere (torch.allclose; true for empty tensors).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// True when a and b have the same shape and equal values (torch.equal; NaN is never equal).
bool equal(const Tensor& a, const Tensor& b);
/// Picks `a` where `cond` is true, else `b` (all broadcast).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// where with a number for the false branch; it promotes as a Python number does in torch.where.
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
/// where with a number for the true branch; it promotes as a Python number does in torch.where.
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
/// Clips to [min, max] (either bound optional).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);  ///< max(x, min): clamp with a lower bound only
Tensor clamp_max(const Tensor& x, const Scalar& max);  ///< min(x, max): clamp with an upper bound only
/// `value` where `mask` (broadcast to x) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);

// ---- elementwise functions built from other ops -----------------------------------------------------------
Tensor sinc(const Tensor& x);  ///< sin(pi x) / (pi x), 1 at 0 (normalized sinc)
/// log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps is given (torch.logit).
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor deg2rad(const Tensor& x);  ///< degrees to radians
Tensor rad2deg(const Tensor& x);  ///< radians to degrees
/// Step function: 0 for x < 0, `values` at x == 0, 1 for x > 0 (torch.heaviside; no gradient).
Tensor heaviside(const Tensor& x, const Tensor& values);
Tensor fmax(const Tensor& a, const Tensor& b);  ///< elementwise max where a NaN loses to a number
Tensor fmin(const Tensor& a, const Tensor& b);  ///< elementwise min where a NaN loses to a number

// ---- reductions (empty dims = all dims) -----------------------------------------------------
Tensor sum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);    ///< sum
Tensor mean(const Tensor& x, const Shape& dims = {}, bool keepdim = false);   ///< mean
Tensor prod(const Tensor& x, const Shape& dims = {}, bool keepdim = false);   ///< product
Tensor max(const Tensor& x);  ///< largest element
Tensor min(const Tensor& x);  ///< smallest element
std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim = false);  ///< (values, indices)
std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim = false);  ///< (values, indices)
Tensor amax(const Tensor& x, const Shape& dims = {}, bool keepdim = false);   ///< max over dims
Tensor amin(const Tensor& x, const Shape& dims = {}, bool keepdim = false);   ///< min over dims
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);  ///< index of max
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);  ///< index of min
Tensor var(const Tensor& x, const Shape& dims = {}, double correction = 1, bool keepdim = false);  ///< variance
Tensor std(const Tensor& x, const Shape& dims = {}, double correction = 1, bool keepdim = false);  ///< std deviation
/// Vector p-norm over dims (p = 1, 2, inf, -inf or any p > 0).
Tensor norm(const Tensor& x, double p = 2, const Shape& dims = {}, bool keepdim = false);
/// Named norm: "fro" (Frobenius over dims, all by default).
Tensor norm(const Tensor& x, const std::string& p, const Shape& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const Shape& dims = {}, bool keepdim = false);  ///< log(sum(exp))
Tensor cumsum(const Tensor& x, std::int64_t dim);  ///< running sum along dim
/// Running product along dim (bool and int64: int64, wrapping); its gradient is exact where x holds zeros.
Tensor cumprod(const Tensor& x, std::int64_t dim);
/// sum over dims with NaNs counted as zero (integers: sum).
Tensor nansum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// mean over dims of the non-NaN elements (NaN where there are none).
Tensor nanmean(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// (amin, amax) over dim (all dims when none).
std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
/// Covariance matrix of the variables in x's rows (observations in columns; 1-d x: one variable, 0-d result),
/// divided by (observations - correction), with optional int64 frequency and float observation weights
/// (torch.cov).
Tensor cov(const Tensor& x, double correction = 1, const Tensor& fweights = Tensor(), const Tensor& aweights = Tensor());
/// Pearson correlation coefficients of x's rows (torch.corrcoef; clipped to [-1, 1]).
Tensor corrcoef(const Tensor& x);
/// (values, indices) of the running max along dim (torch.cummax): a NaN wins and stays; on a tie the later
/// index. The values' gradient goes back to the indices.
std::tuple<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim);
/// (values, indices) of the running min along dim, as cummax.
std::tuple<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim);
/// log(cumsum(exp(x))) along dim without overflow (real floating x; float32 accumulates in double).
Tensor logcumsumexp(const Tensor& x, std::int64_t dim);
Tensor all(const Tensor& x, const Shape& dims = {}, bool keepdim = false);  ///< bool: all nonzero
Tensor any(const Tensor& x, const Shape& dims = {}, bool keepdim = false);  ///< bool: any nonzero
// ---- sorting and searching (NaN sorts above every number; equal keys keep their order: always stable) ------
/// (values, indices) of x sorted along dim, ascending or descending (torch.sort; `stable` is accepted for
/// torch's signature: the sort is always stable). The values' gradient goes back to the sorted positions.
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false, bool stable = false);
/// The int64 indices that sort x along dim (torch.argsort; always stable).
Tensor argsort(const Tensor& x, std::int64_t dim = -1, bool descending = false, bool stable = false);
/// (values, indices) of the k largest (or smallest) entries along dim, in sorted order (torch.topk; NaN counts
/// as the largest). `sorted` is accepted for torch's signature: the result is always sorted.
std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                bool sorted = true);

/// x sorted along dim 0 (torch.msort).
Tensor msort(const Tensor& x);
/// (values, indices) of the k-th smallest entry (k from 1) along dim (torch.kthvalue; NaN counts as the largest).
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, std::int64_t k, std::int64_t dim = -1, bool keepdim = false);
/// The lower median of all elements (torch.median): NaN when x holds one (or is empty).
Tensor median(const Tensor& x);
/// (values, indices) of the lower median along dim; a line holding NaN gives its first NaN.
std::tuple<Tensor, Tensor> median(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// The lower median of the non-NaN elements (NaN when there are none).
Tensor nanmedian(const Tensor& x);
/// (values, indices) of the lower median of the non-NaN entries along dim (a NaN for an all-NaN line).
std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// The q-th quantiles (q: 0-d or 1-d in [0, 1]; its dim comes first) of the float x along dim, of all
/// elements when none (torch.quantile); interpolation "linear", "lower", "higher", "midpoint" or "nearest".
/// NaN where the reduced elements hold one.
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
/// quantile at one q in [0, 1] (the result has no q dim).
Tensor quantile(const Tensor& x, double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
/// quantile of the non-NaN elements (NaN where there are none).
Tensor nanquantile(const Tensor& x, const Tensor& q, std::optional<std::int64_t> dim = std::nullopt,
                   bool keepdim = false, const std::string& interpolation = "linear");
/// nanquantile at one q in [0, 1].
Tensor nanquantile(const Tensor& x, double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
/// int64 positions where `values` go in sorted_sequence, sorted ascending along its last dim (1-d: one sequence
/// for all values; else its leading dims match the values'): the first fitting place, or the last when
/// `right` or side == "right" (torch.searchsorted; int64 indices only, phasor has no int32). `sorter`: int64
/// indices that sort the sequence along its last dim. NaN values go after the numbers.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = Tensor());
/// searchsorted of one number in a 1-d sorted sequence (0-d result).
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = Tensor());
/// The int64 bucket of each element of input among the ascending 1-d boundaries (torch.bucketize): i with
/// boundaries[i-1] < x <= boundaries[i], or boundaries[i-1] <= x < boundaries[i] when `right`.
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool right = false);
/// bucketize of one number (0-d result).
Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool right = false);

/// Sums `x` down to `shape` (the inverse of broadcasting); used for broadcast gradients.
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- shape, joining, indexing -------------------------------------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);   ///< see Tensor::reshape
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);  ///< merge dims
Tensor permute(const Tensor& x, const Shape& dims);    ///< reorder dims
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1);  ///< swap dims
Tensor movedim(const Tensor& x, const Shape& src, const Shape& dst);  ///< move dims
Tensor swapaxes(const Tensor& x, std::int64_t axis0, std::int64_t axis1);  ///< same as transpose (numpy.swapaxes)
Tensor swapdims(const Tensor& x, std::int64_t dim0, std::int64_t dim1);    ///< same as transpose (torch.swapdims)
/// dim expanded into `sizes` (one may be -1, inferred; their product is dim's size), as torch.unflatten; a
/// view of x.
Tensor unflatten(const Tensor& x, std::int64_t dim, const Shape& sizes);
Tensor squeeze(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt);  ///< drop size-1 dims
Tensor unsqueeze(const Tensor& x, std::int64_t dim);    ///< insert a size-1 dim
Tensor broadcast_to(const Tensor& x, const Shape& shape);  ///< broadcast view
/// Broadcast shape of several shapes; throws naming `op` when incompatible.
Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* op = "broadcast_shapes");
Tensor real(const Tensor& x);   ///< real part (view)
Tensor imag(const Tensor& x);   ///< imaginary part (view)
Tensor cat(const std::vector<Tensor>& xs, std::int64_t dim = 0);    ///< join along an existing dim
Tensor stack(const std::vector<Tensor>& xs, std::int64_t dim = 0);  ///< join along a new dim
/// Pieces of `split_size` along dim (the last may be smaller); views.
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
/// Pieces of the given sizes along dim; views.
std::vector<Tensor> split(const Tensor& x, const Shape& sizes, std::int64_t dim = 0);
/// `chunks` nearly equal pieces along dim; views.
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
/// `sections` pieces along dim whose sizes differ by at most one, the longer ones first (size n: n % sections
/// pieces of n / sections + 1), empty pieces when sections > n (torch.tensor_split); views.
std::vector<Tensor> tensor_split(const Tensor& x, std::int64_t sections, std::int64_t dim = 0);
/// The pieces of x cut before each of `indices` along dim (x[:i0], x[i0:i1], ..., x[ik:]), indices read as
/// Python slice bounds: negative from the end, clamped to the size, empty pieces where they do not increase; views.
std::vector<Tensor> tensor_split(const Tensor& x, const Shape& indices, std::int64_t dim = 0);
/// tensor_split along dim 1 (dim 0 of a 1-d x) into sections that must be equal (torch.hsplit).
std::vector<Tensor> hsplit(const Tensor& x, std::int64_t sections);
std::vector<Tensor> hsplit(const Tensor& x, const Shape& indices);  ///< tensor_split at indices along hsplit's dim
/// tensor_split along dim 0 of an x of 2 or more dims into sections that must be equal (torch.vsplit).
std::vector<Tensor> vsplit(const Tensor& x, std::int64_t sections);
std::vector<Tensor> vsplit(const Tensor& x, const Shape& indices);  ///< tensor_split at indices along dim 0
/// tensor_split along dim 2 of an x of 3 or more dims into sections that must be equal (torch.dsplit).
std::vector<Tensor> dsplit(const Tensor& x, std::int64_t sections);
std::vector<Tensor> dsplit(const Tensor& x, const Shape& indices);  ///< tensor_split at indices along dim 2
/// x repeated along each dim (torch.repeat): repeats has at least x's dims; extra leading ones add dims.
Tensor repeat(const Tensor& x, const Shape& repeats);
/// x repeated as numpy.tile: reps shorter than x's dims is padded with leading 1s.
Tensor tile(const Tensor& x, const Shape& reps);
/// The slices of x along dim, as views (torch.unbind).
std::vector<Tensor> unbind(const Tensor& x, std::int64_t dim = 0);
/// Coordinate grids of 0-d / 1-d tensors, as expanded views: indexing "ij" (matrix) or "xy" (Cartesian: the
/// first two inputs vary along the second and first dims).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, const std::string& indexing = "ij");
Tensor atleast_1d(const Tensor& x);  ///< x, a 0-d one as (1)
Tensor atleast_2d(const Tensor& x);  ///< x with leading dims added up to 2: (n) -> (1, n)
Tensor atleast_3d(const Tensor& x);  ///< x with dims added up to 3 as numpy: (n) -> (1, n, 1), (m, n) -> (m, n, 1)
/// The tensors joined column-wise: along dim 1, or dim 0 when all are 0-d or 1-d (numpy.hstack).
Tensor hstack(const std::vector<Tensor>& xs);
Tensor vstack(const std::vector<Tensor>& xs);  ///< joined along dim 0 after atleast_2d (numpy.vstack)
Tensor dstack(const std::vector<Tensor>& xs);  ///< joined along dim 2 after atleast_3d (numpy.dstack)
/// 0-d and 1-d tensors as columns (n, 1), joined along dim 1 with the 2-d ones (numpy.column_stack).
Tensor column_stack(const std::vector<Tensor>& xs);
Tensor flipud(const Tensor& x);  ///< reversed along dim 0
Tensor fliplr(const Tensor& x);  ///< reversed along dim 1
/// The 0-d, 1-d (a row) and 2-d tensors as the diagonal blocks of a zero matrix, in their promoted dtype.
Tensor block_diag(const std::vector<Tensor>& xs);
/// The flattened x on diagonal `offset` of a square matrix (torch.diagflat).
Tensor diagflat(const Tensor& x, std::int64_t offset = 0);
/// (count, n) rows: every combination of one element from each 1-d tensor, the last varying fastest.
Tensor cartesian_prod(const std::vector<Tensor>& xs);
/// x rotated by 90 degrees k times in the plane of dims, from dims[0] toward dims[1] (torch.rot90).
Tensor rot90(const Tensor& x, std::int64_t k = 1, const Shape& dims = {0, 1});
/// Each entry of x repeated `repeats` times along dim (x flattened when none), as torch.repeat_interleave.
Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim = std::nullopt);
/// repeat_interleave with a count per entry (int64, 0-d or 1-d; one host read of the total on a GPU).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<std::int64_t> dim = std::nullopt);
/// 0, 1, ... each repeated repeats[i] times (torch.repeat_interleave(repeats)).
Tensor repeat_interleave(const Tensor& repeats);
// ---- selections: the result's size depends on the values (one host read on a GPU; Note [selections]) ------
/// int64 (count, x.dim()) coordinates of x's nonzero elements in row-major order (torch.nonzero).
Tensor nonzero(const Tensor& x);
Tensor argwhere(const Tensor& x);  ///< same as nonzero (torch.argwhere)
/// int64 number of nonzero elements over dims (all when empty).
Tensor count_nonzero(const Tensor& x, const Shape& dims = {});
/// 1-D: the elements of x where the bool mask (broadcast with x) holds, in row-major order; the gradient
/// goes back to them.
Tensor masked_select(const Tensor& x, const Tensor& mask);
/// (values, inverse, counts): the distinct elements of x sorted (of its slices along dim, sorted
/// lexicographically), and when asked, the index of each element's value in values (x's shape; along dim:
/// one per slice) and each value's count (undefined tensors when not asked). NaNs are distinct, as in
/// torch. `sorted` is accepted for torch's signature: the values are always sorted. No gradient.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<std::int64_t> dim = std::nullopt);
/// unique of runs: each run of equal consecutive elements (slices along dim) kept once, in order.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<std::int64_t> dim = std::nullopt);
/// Counts of each value 0 .. max(x) (at least minlength bins) in the non-negative 1-d int64 x, or sums of
/// `weights` (x's shape; the result its dtype, with gradient) per value (torch.bincount; one host read).
Tensor bincount(const Tensor& x, const Tensor& weights = Tensor(), std::int64_t minlength = 0);
/// Histogram of the float x in `bins` equal bins over [min, max] (the data's range when min == max; elements
/// outside left out), as x's dtype (torch.histc; no gradient).
Tensor histc(const Tensor& x, std::int64_t bins = 100, double min = 0, double max = 0);
/// (hist, bin_edges): the counts (sums of `weight`, x's shape) of the float x's elements in `bins` equal bins
/// over [range.first, range.second] (the data's range when none; widened by 0.5 each side when it is one
/// point; [0, 1] for no data), each bin [e_i, e_i+1) and the last closed, elements outside left out; with
/// `density`, counts divided by their total times the bin width (torch.histogram; no gradient).
std::tuple<Tensor, Tensor> histogram(const Tensor& x, std::int64_t bins = 100,
                                     std::optional<std::pair<double, double>> range = std::nullopt,
                                     const Tensor& weight = Tensor(), bool density = false);
/// histogram over the given non-decreasing 1-d bin edges (at least two, x's dtype); bin_edges is a copy of them.
std::tuple<Tensor, Tensor> histogram(const Tensor& x, const Tensor& bins, const Tensor& weight = Tensor(),
                                     bool density = false);
/// Bool tensor of elements' shape: whether each element equals some element of test_elements (any shape),
/// negated when `invert` (torch.isin; NaN is in nothing; assume_unique is accepted for torch's signature).
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
/// isin against one number.
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false, bool invert = false);
/// isin of one number (0-d result).
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
/// Copy of x with the slices at int64 `index` (0-d or 1-d, negative from the end) along dim set to value
/// (torch.index_fill; the value must fit x's dtype).
Tensor index_fill(const Tensor& x, std::int64_t dim, const Tensor& index, const Scalar& value);
/// Copy of x with the elements where the bool mask (broadcast to x) holds taken from source's elements in
/// order (torch.masked_scatter; source of x's dtype with at least as many elements; one host read).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
/// The elements of x (as if flattened) at int64 `index` (negative from the end), in index's shape (torch.take).
Tensor take(const Tensor& x, const Tensor& index);
/// gather along dim with the other dims of x and indices broadcast (torch.take_along_dim); flattened when
/// dim is none.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<std::int64_t> dim = std::nullopt);
/// Pads the last dims: `pad` = (left_last, right_last, left_prev, right_prev, ...), as torch.nn.functional.pad.
Tensor pad(const Tensor& x, const Shape& pad, PadMode mode = PadMode::constant, const Scalar& value = 0);
Tensor flip(const Tensor& x, const Shape& dims);  ///< reverse along dims
/// Rotates elements along dims by shifts (flattened when dims is empty).
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims = {});
/// Entries of `x` at positions `index` (1-D int64) along dim.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
/// Copy of `x` with the slices of alpha * `src` added at positions `index` (0-d or 1-D int64, negative from the
/// end) along dim (torch.index_add).
Tensor index_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha = 1);
/// out[i][j] = x[index[i][j]][j] for dim 0 (torch.gather).
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
/// Copy of `x` with `src` added at `index` along dim (torch.scatter_add).
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
// The scatters below take src of x's dtype. Where indices repeat, values combine in index order at each
// position on every device, so the last replacement wins (Note [scatter reductions] in core/index_ops.cpp).
/// Copy of x with out[p with p[dim] = index[p]] = src[p] over index's shape (torch.scatter; index as gather's,
/// src at least index's size in every dim).
Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
/// scatter of one value (no gradient for it).
Tensor scatter(const Tensor& x, std::int64_t dim, const Tensor& index, const Scalar& value);
/// Copy of x with src's values landing at index (as scatter's) reduced with "sum", "prod", "mean" (integers
/// rounded down), "amax" or "amin" together with x's value when include_self, else replacing it
/// (torch.scatter_reduce; elements nothing lands on keep x's value).
Tensor scatter_reduce(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
/// Copy of x with the slices of source at positions `index` (0-d or 1-D int64, negative from the end) along
/// dim (torch.index_copy).
Tensor index_copy(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source);
/// index_copy whose slices reduce with x's as scatter_reduce's values do (torch.index_reduce; "sum" is index_add).
Tensor index_reduce(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self = true);
/// Copy of x with x[indices] = values (added when accumulate), values broadcast to x[indices]'s shape, as
/// torch.index_put: one index per leading dim (int64, broadcast together; bool: a mask over as many dims;
/// undefined: the whole dim), the indexed dims in place of adjacent indices or first (numpy's rule).
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
/// The diagonal at `offset` (> 0 above, < 0 below) of the dims dim1 and dim2 as a view: those dims removed, the
/// diagonal appended last (torch.diagonal).
Tensor diagonal(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1);
/// Zeros with x's last dim written on the diagonal at `offset` of new dims dim1 and dim2 (of the result, both
/// of size n + |offset|): batches of diagonal matrices (torch.diag_embed; its adjoint is diagonal).
Tensor diag_embed(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = -2, std::int64_t dim2 = -1);
/// 1-D x: the square matrix with x on diagonal `diagonal`; 2-D x: a copy of that diagonal (torch.diag).
Tensor diag(const Tensor& x, std::int64_t diagonal = 0);
Tensor trace(const Tensor& x);  ///< sum of a 2-D tensor's main diagonal
/// n-th forward difference along dim, x[i + 1] - x[i] (bool: !=), after joining prepend and append (tensors of
/// x's dims, undefined for none) to x along dim (torch.diff); each order shortens dim by one.
Tensor diff(const Tensor& x, std::int64_t n = 1, std::int64_t dim = -1, const Tensor& prepend = Tensor(),
            const Tensor& append = Tensor());
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);  ///< lower triangle of the last two dims
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);  ///< upper triangle of the last two dims
/// The Vandermonde matrix (n, N) of the 1-d x: column j is x^(N - 1 - j), or x^j when `increasing`
/// (torch.vander; N defaults to n; x's dtype).
Tensor vander(const Tensor& x, std::optional<std::int64_t> N = std::nullopt, bool increasing = false);

// ---- numerical integration and differentiation of sampled functions ---------------------------------------------
/// Integral of y along dim by the trapezoidal rule over the sample points x: 1-d of y's size along dim, or
/// broadcastable with y (torch.trapezoid; 0 for fewer than two samples).
Tensor trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim = -1);
/// trapezoid over samples spaced dx apart.
Tensor trapezoid(const Tensor& y, double dx = 1, std::int64_t dim = -1);
/// The running trapezoid integrals along dim: n - 1 of them for n samples (torch.cumulative_trapezoid).
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim = -1);
/// cumulative_trapezoid over samples spaced dx apart.
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1, std::int64_t dim = -1);
/// Derivatives of the sampled f along each of dims (all when empty), one tensor per dim, by second-order
/// central differences inside and one-sided differences of `edge_order` (1 or 2) at the ends; every sample
/// spaced `spacing` apart (torch.gradient; each dim needs edge_order + 1 samples).
std::vector<Tensor> gradient(const Tensor& f, double spacing = 1, const Shape& dims = {}, std::int64_t edge_order = 1);
/// gradient with a spacing per dim of dims (one number for all of them, or one each).
std::vector<Tensor> gradient(const Tensor& f, const std::vector<double>& spacing, const Shape& dims = {},
                             std::int64_t edge_order = 1);
/// gradient over sample coordinates, a 1-d tensor per dim of dims of that dim's size (unevenly spaced samples use
/// the second-order formula for uneven spacing, as numpy.gradient).
std::vector<Tensor> gradient(const Tensor& f, const std::vector<Tensor>& coordinates, const Shape& dims = {},
                             std::int64_t edge_order = 1);

}  // namespace phasor
