// CPU-vs-device agreement on drawn layouts. The other agreement cases (test_cuda_ops.cpp,
// test_cuda_reduce.cpp) choose their shapes and views by hand; here a seeded generator draws them:
// shapes from 0-d to 4-d with empty and size-1 dims, views cut from a storage tensor (its dims permuted,
// an extra dim selected away, each dim sliced with an offset and a step, size-1 dims expanded, the real
// or imaginary part of a complex storage), dtypes, broadcasting partners and ops. So the kernels' index
// math (flat and strided elementwise kernels, broadcasting, gapped and split reduction rows, scans, the
// gradients' scatters into views) meets layouts nobody wrote down. Every drawn op also runs on contiguous
// copies of its CPU inputs, and an op that throws on one side must throw the same phasor::Error on the
// other. PHASOR_TEST_LAYOUT_SEED=<n> draws other cases.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <phasor/phasor.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace phasor;
using namespace cuda_test;

namespace {

using Rng = std::mt19937_64;

/// A case's seed: `base`, plus PHASOR_TEST_LAYOUT_SEED when set (other draws, for a sweep by hand).
std::uint64_t case_seed(std::uint64_t base) {
  const char* extra = std::getenv("PHASOR_TEST_LAYOUT_SEED");
  return base + (extra ? std::strtoull(extra, nullptr, 10) : 0);
}

/// A uniform integer in [lo, hi].
std::int64_t draw(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
/// True with probability p.
bool coin(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }
/// A uniformly drawn element of v.
template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(draw(rng, 0, static_cast<std::int64_t>(v.size()) - 1))];
}

/// "(2, 3)".
std::string str(const Shape& s) {
  std::ostringstream o;
  o << '(';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << ')';
  return o.str();
}

/// Every dtype.
const std::vector<Dtype> kDtypes = {bool_, int64, float32, float64, complex64, complex128};

/// A view of shape `shape` cut from a storage tensor: storage dim i is view-order dim perm[i] (the
/// storage is permuted back), the view-order dim `extra` (if >= 0) is selected away at `extra_at`, each
/// other dim d is sliced from offset[d] with step[d], the dims marked expanded (size 1 in the storage) are
/// expanded, and for part 1 / 2 the view is the real / imaginary part of a complex storage.
struct View {
  Shape shape, full, perm, offset, step;
  std::vector<bool> expanded;
  std::int64_t extra = -1, extra_at = 0;
  int part = 0;
  Dtype dtype = float64;

  /// A random storage for this view, on the CPU.
  Tensor storage() const {
    Shape s;
    for (auto p : perm) s.push_back(full[static_cast<std::size_t>(p)]);
    const Dtype sd = part == 0 ? dtype : dtype == float32 ? complex64 : complex128;
    return sample(s, sd);
  }

  /// The view of `storage` (on any device).
  Tensor cut(const Tensor& storage) const {
    Tensor t = part == 0 ? storage : part == 1 ? storage.real() : storage.imag();
    if (!perm.empty()) {
      Shape inv(perm.size());
      for (std::size_t i = 0; i < perm.size(); ++i) inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
      t = t.permute(inv);
    }
    if (extra >= 0) t = t.select(extra, extra_at);
    bool expand = false;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto di = static_cast<std::int64_t>(d);
      if (expanded[d]) {
        expand = true;
        continue;
      }
      const std::int64_t stop = shape[d] == 0 ? offset[d] : offset[d] + (shape[d] - 1) * step[d] + 1;
      t = t.slice(di, offset[d], stop, step[d]);
    }
    return expand ? t.expand(shape) : t;
  }

  std::string describe() const {
    std::ostringstream o;
    o << dtype_name(dtype) << str(shape) << " from storage dims " << str(full) << " permuted " << str(perm);
    if (extra >= 0) o << ", dim " << extra << " selected at " << extra_at;
    o << ", offsets " << str(offset) << ", steps " << str(step) << ", expanded";
    for (bool e : expanded) o << ' ' << e;
    if (part) o << (part == 1 ? ", real part" : ", imaginary part");
    return o.str();
  }
};

/// A drawn view of `shape` and `dtype` (expanded dims only when allow_expand).
View draw_view(Rng& rng, const Shape& shape, Dtype dtype, bool allow_expand) {
  View v;
  v.shape = shape;
  v.dtype = dtype;
  for (std::int64_t n : shape) {
    const bool e = allow_expand && n > 1 && coin(rng, 0.15);
    v.expanded.push_back(e);
    v.step.push_back(!e && coin(rng, 0.3) ? draw(rng, 2, 3) : 1);
    v.offset.push_back(!e && coin(rng, 0.3) ? draw(rng, 1, 2) : 0);
    const std::int64_t used = n > 0 ? (n - 1) * v.step.back() + 1 : 0;
    v.full.push_back(e ? 1 : v.offset.back() + used + (coin(rng, 0.2) ? 1 : 0));
  }
  if (coin(rng, 0.2)) {
    v.extra = draw(rng, 0, static_cast<std::int64_t>(shape.size()));
    const std::int64_t n = draw(rng, 2, 3);
    v.extra_at = draw(rng, 0, n - 1);
    v.full.insert(v.full.begin() + v.extra, n);
  }
  v.perm.resize(v.full.size());
  std::iota(v.perm.begin(), v.perm.end(), std::int64_t{0});
  if (coin(rng, 0.5)) std::shuffle(v.perm.begin(), v.perm.end(), rng);
  if ((dtype == float32 || dtype == float64) && coin(rng, 0.15)) v.part = coin(rng, 0.5) ? 1 : 2;
  return v;
}

/// One input of a drawn case: its view, and its storage on the CPU and on the device.
struct Operand {
  View view;
  Tensor cpu, dev;
  Tensor on_cpu() const { return view.cut(cpu); }
  Tensor on_dev() const { return view.cut(dev); }
};

/// A drawn operand of `shape` and `dt`, its storage sampled on the CPU and copied to `dev`.
Operand operand(Rng& rng, const Device& dev, const Shape& shape, Dtype dt, bool allow_expand = true) {
  Operand o;
  o.view = draw_view(rng, shape, dt, allow_expand);
  o.cpu = o.view.storage();
  o.dev = o.cpu.to(dev);
  return o;
}

/// A shape of rank 0-4, dims 1-5 (one dim up to 40 in a fifth of the draws; an empty dim in 1 of 25).
Shape draw_shape(Rng& rng) {
  Shape s(static_cast<std::size_t>(draw(rng, 0, 4)));
  for (auto& n : s) n = draw(rng, 1, 5);
  if (!s.empty() && coin(rng, 0.2)) s[static_cast<std::size_t>(draw(rng, 0, static_cast<std::int64_t>(s.size()) - 1))] = draw(rng, 6, 40);
  if (!s.empty() && coin(rng, 0.04)) s[static_cast<std::size_t>(draw(rng, 0, static_cast<std::int64_t>(s.size()) - 1))] = 0;
  return s;
}

/// A shape that broadcasts to `out`: leading dims dropped, some dims set to 1.
Shape broadcast_partner(Rng& rng, const Shape& out) {
  Shape s(out.begin() + draw(rng, 0, coin(rng, 0.7) ? 0 : static_cast<std::int64_t>(out.size())), out.end());
  for (auto& n : s)
    if (coin(rng, 0.2)) n = 1;
  return s;
}


/// The drawn arguments of an op besides its tensors: dims to reduce or transform (empty: the op's
/// default), keepdim, one dim, a length (FFT lengths, shifts) or none.
struct Params {
  Shape dims;
  bool keep = false;
  std::int64_t dim = 0;
  std::optional<std::int64_t> n;
};

/// Drawn arguments for an op on a tensor of `rank` dims.
Params draw_params(Rng& rng, std::int64_t rank) {
  Params p;
  for (std::int64_t d = 0; d < rank; ++d)
    if (coin(rng, 0.5)) p.dims.push_back(coin(rng, 0.3) ? d - rank : d);  // some counted from the end
  std::shuffle(p.dims.begin(), p.dims.end(), rng);
  p.keep = coin(rng, 0.5);
  p.dim = rank > 0 ? draw(rng, -rank, rank - 1) : 0;
  if (coin(rng, 0.4)) p.n = draw(rng, 1, 7);
  return p;
}

/// The arguments in words, for failure reports.
std::string describe(const Params& p) {
  return "dims " + str(p.dims) + (p.keep ? " keepdim" : "") + " dim " + std::to_string(p.dim) + " n " +
         (p.n ? std::to_string(*p.n) : "none");
}

using Fn = std::function<Tensor(const std::vector<Tensor>&, const Params&)>;

/// A drawn op: its name, what it computes, whether float inputs take its gradient (checked in the
/// gradient case), and whether its results carry sums (reductions, FFTs, products: looser tolerances).
struct Op {
  const char* name;
  Fn f;
  bool grad;
  bool sums;
};

#define OP(NAME, GRAD, SUMS, EXPR)                                    \
  Op {                                                                \
    NAME,                                                             \
        [](const std::vector<Tensor>& x, const Params& p) {           \
          const Tensor& a = x[0];                                     \
          const Tensor& b = x.size() > 1 ? x[1] : x[0];               \
          (void)p;                                                    \
          (void)b;                                                    \
          return EXPR;                                                \
        },                                                            \
        GRAD, SUMS                                                    \
  }

/// p.dims, or none (the op's default) when empty.
std::optional<std::vector<std::int64_t>> dims_or_default(const Params& p) {
  return p.dims.empty() ? std::nullopt : std::optional<std::vector<std::int64_t>>(p.dims);
}

/// While set (the graph case), index tensors made on a GPU are kept by device, shape and values: an op's
/// eager run makes them, and its capture then finds them on the device (an upload cannot be captured).
std::map<std::string, Tensor>* g_index_memo = nullptr;

/// The int64 tensor of `shape` holding v, on `device` (memoized there while g_index_memo is set).
Tensor index_tensor(const std::vector<std::int64_t>& v, const Shape& shape, Device device) {
  if (!g_index_memo || !device.is_cuda()) return from_vector(v, shape).to(device);
  std::ostringstream key;
  key << device.str() << '/' << str(shape) << '/' << str(v);
  auto [it, made] = g_index_memo->try_emplace(key.str());
  if (made) it->second = from_vector(v, shape).to(device);
  return it->second;
}

/// Indices into dim `dim` of x (repeats, both ends, one counted from the end), on x's device: for
/// index_select and index_add.
Tensor some_indices(const Tensor& x, std::int64_t dim) {
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(dim < 0 ? dim + x.dim() : dim);
  const std::vector<std::int64_t> idx = n > 0 ? std::vector<std::int64_t>{n - 1, 0, n / 2, -1} : std::vector<std::int64_t>{};
  return index_tensor(idx, {static_cast<std::int64_t>(idx.size())}, x.device());
}

/// {0, n} for dim `dim` of size n (n is out of range), on x's device.
Tensor bad_indices(const Tensor& x, std::int64_t dim) {
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(dim < 0 ? dim + x.dim() : dim);
  return index_tensor({0, n}, {2}, x.device());
}

/// An index tensor of x's shape whose values lie in dim `dim`'s range, on x's device: for gather and
/// scatter_add.
Tensor gather_indices(const Tensor& x, std::int64_t dim) {
  const std::int64_t n = x.dim() == 0 ? 1 : std::max<std::int64_t>(1, x.size(dim < 0 ? dim + x.dim() : dim));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(x.numel()));
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>(i * 7) % n;
  return index_tensor(idx, x.shape(), x.device());
}

const std::vector<Op> kUnary = {
    OP("neg", true, false, neg(a)), OP("abs", true, false, abs(a)), OP("sign", false, false, sign(a)),
    OP("exp", true, false, exp(a)), OP("expm1", true, false, expm1(a)), OP("log", false, false, log(a)),
    OP("log1p", false, false, log1p(a)), OP("sqrt", false, false, sqrt(a)), OP("rsqrt", false, false, rsqrt(a)),
    OP("square", true, false, square(a)), OP("sin", true, false, sin(a)), OP("cos", true, false, cos(a)),
    OP("tan", false, false, tan(a)), OP("sinh", true, false, sinh(a)), OP("cosh", true, false, cosh(a)),
    OP("tanh", true, false, tanh(a)), OP("asin", false, false, asin(a)), OP("acos", false, false, acos(a)),
    OP("atan", true, false, atan(a)), OP("asinh", true, false, asinh(a)), OP("atanh", false, false, atanh(a)),
    OP("acosh", false, false, acosh(a)), OP("exp2", true, false, exp2(a)), OP("log2", false, false, log2(a)),
    OP("log10", false, false, log10(a)), OP("reciprocal", false, false, reciprocal(a)),
    OP("erf", true, false, erf(a)), OP("erfc", true, false, erfc(a)), OP("sigmoid", true, false, sigmoid(a)),
    OP("relu", true, false, relu(a)), OP("gelu", true, false, gelu(a)), OP("gelu tanh", true, false, gelu(a, true)),
    OP("silu", true, false, silu(a)), OP("softplus", true, false, softplus(a, 2.0, 5.0)),
    OP("floor", false, false, floor(a)), OP("ceil", false, false, ceil(a)), OP("round", false, false, round(a)),
    OP("trunc", false, false, trunc(a)), OP("frac", true, false, frac(a)),
    OP("conj", true, false, conj(a)), OP("angle", false, false, angle(a)), OP("isfinite", false, false, isfinite(a)),
    OP("isnan", false, false, isnan(a)), OP("isinf", false, false, isinf(a)),
    OP("logical_not", false, false, logical_not(a)),
    OP("signbit", false, false, signbit(a)), OP("nan_to_num", true, false, nan_to_num(a, 0.5, 2.0)),
    OP("clamp_min", true, false, clamp_min(a, Scalar(0.1))), OP("clamp_max", true, false, clamp_max(a, Scalar(-0.2))),
    OP("diagonal", true, false, a.diagonal(1, 0, -1)), OP("diag_embed", true, false, diag_embed(a, -1)),
    OP("diag", true, false, diag(a, 1)), OP("trace", true, true, trace(a)), OP("diff", true, false, diff(a, 2, p.dim)),
    OP("clamp", true, false, clamp(a, Scalar(-0.5), Scalar(0.7))),
    OP("clamp max", true, false, clamp(a, std::nullopt, Scalar(0.3))), OP("pow 2", true, false, pow(a, Scalar(2))),
    OP("pow 0.5", false, false, pow(a, Scalar(0.5))), OP("2 pow", true, false, pow(Scalar(2.0), a)),
    OP("mul scalar", true, false, a * 3), OP("add scalar", true, false, a + 2.5),
    OP("mul complex scalar", true, false, a * Scalar(std::complex<double>(0.5, -1.0))),
    OP("scalar minus", true, false, 1.5 - a), OP("scalar over", false, false, Scalar(std::int64_t{2}) / a),
    OP("div int scalar", true, false, a / Scalar(std::int64_t{4})), OP("eq scalar", false, false, a == Scalar(1.0)),
    OP("lt int scalar", false, false, a < Scalar(std::int64_t{0})),
    OP("where scalar", true, false, where(isnan(a), Scalar(2.0), a)),
    OP("clamp int", false, false, clamp(a, Scalar(std::int64_t{-1}), Scalar(std::int64_t{2}))),
    OP("to float32", true, false, a.to(float32)), OP("to int64", false, false, a.to(int64)),
    OP("to complex128", true, false, a.to(complex128)), OP("contiguous", true, false, a.contiguous()),
    OP("real", true, false, real(a) * 1.0), OP("imag", true, false, imag(a) * 1.0),
    // shape and index ops
    OP("flip", true, false, flip(a, p.dims)), OP("roll", true, false, roll(a, {p.n.value_or(-2)}, {p.dim})),
    OP("pad constant", true, false, pad(a, {1, 2}, PadMode::constant, 0.5)),
    OP("pad reflect", true, false, pad(a, {1, 1}, PadMode::reflect)),
    OP("pad circular", true, false, pad(a, {2, 1, 0, 1}, PadMode::circular)),
    OP("pad replicate", true, false, pad(a, {0, 2}, PadMode::replicate)), OP("tril", true, false, tril(a, 1)),
    OP("triu", true, false, triu(a, -1)), OP("cat", true, false, cat({a, a * 2}, p.dim)),
    OP("stack", true, false, stack({a, a}, p.dim)),
    OP("index_select", true, false, index_select(a, p.dim, some_indices(a, p.dim))),
    OP("index_add", true, true, index_add(a, p.dim, some_indices(a, p.dim), index_select(a, p.dim, some_indices(a, p.dim)))),
    OP("gather", true, false, gather(a, p.dim, gather_indices(a, p.dim))),
    OP("index_select out of range", false, false, index_select(a, p.dim, bad_indices(a, p.dim))),
    OP("gather out of range", false, false, gather(a, p.dim, gather_indices(a, p.dim) - 3)),
    OP("scatter_add", true, true, scatter_add(a, p.dim, gather_indices(a, p.dim), a)),
    // reductions
    OP("sum", true, true, sum(a, p.dims, p.keep)), OP("mean", true, true, mean(a, p.dims, p.keep)),
    // floating factors scaled below 1 in modulus: long products of larger ones overflow, and which parts of
    // a complex product come out inf or NaN then depends on the order of the multiplications
    OP("prod", false, true, prod(a.is_floating_point() || a.is_complex() ? a / (abs(a) + 1.0) : a, p.dims, p.keep)), OP("amax", true, true, amax(a, p.dims, p.keep)),
    OP("amin", true, true, amin(a, p.dims, p.keep)), OP("var", true, true, var(a, p.dims, 1, p.keep)),
    OP("var correction 0", true, true, var(a, p.dims, 0, p.keep)),
    OP("std", false, true, phasor::std(a, p.dims, 1, p.keep)), OP("norm 2", false, true, norm(a, 2, p.dims, p.keep)),
    OP("norm 1", false, true, norm(a, 1, p.dims, p.keep)),
    OP("norm inf", false, true, norm(a, std::numeric_limits<double>::infinity(), p.dims, p.keep)),
    OP("norm 3", false, true, norm(a, 3, p.dims, p.keep)), OP("logsumexp", true, true, logsumexp(a, p.dims, p.keep)),
    OP("all", false, true, all(a, p.dims, p.keep)), OP("any", false, true, any(a, p.dims, p.keep)),
    OP("argmax dim", false, true, argmax(a, p.dim, p.keep)), OP("argmin dim", false, true, argmin(a, p.dim, p.keep)),
    OP("argmax", false, true, argmax(a)), OP("max", false, true, max(a)), OP("min", false, true, min(a)),
    OP("cumsum", true, true, cumsum(a, p.dim)),
    OP("cumprod", true, true, cumprod(a, p.dim)),
    OP("sort", true, true, std::get<0>(sort(a, p.dim, p.keep))), OP("argsort", false, true, argsort(a, p.dim, !p.keep)),
    OP("topk", true, true, std::get<0>(topk(a, std::min<std::int64_t>(2, a.dim() == 0 ? 1 : a.size(p.dim)), p.dim))),
    // transforms
    OP("fft", true, true, fft::fft(a, p.n, p.dim)), OP("ifft", true, true, fft::ifft(a, p.n, p.dim, fft::Norm::ortho)),
    OP("rfft", true, true, fft::rfft(a, p.n, p.dim)), OP("irfft", true, true, fft::irfft(a, p.n, p.dim)),
    OP("hfft", true, true, fft::hfft(a, p.n, p.dim, fft::Norm::forward)), OP("ihfft", true, true, fft::ihfft(a, p.n, p.dim)),
    OP("fftn", true, true, fft::fftn(a, std::nullopt, dims_or_default(p))),
    OP("rfftn", true, true, fft::rfftn(a, std::nullopt, dims_or_default(p))),
    OP("fft2", true, true, fft::fft2(a)), OP("irfft2", true, true, fft::irfft2(a)),
    OP("fftshift", true, false, fft::fftshift(a, dims_or_default(p))),
    // nn functions over one tensor
    OP("softmax", true, true, nn::functional::softmax(a, p.dim)),
    OP("log_softmax", true, true, nn::functional::log_softmax(a, p.dim)),
    OP("layer_norm", true, true, nn::functional::layer_norm(a, Shape(a.shape().end() - std::min<std::int64_t>(a.dim(), 2), a.shape().end()))),
    OP("group_norm", true, true, nn::functional::group_norm(a, 1)),
};

const std::vector<Op> kBinary = {
    OP("add", true, false, add(a, b)), OP("add alpha", true, false, add(a, b, 2.5)), OP("sub", true, false, sub(a, b)),
    OP("sub alpha", true, false, sub(a, b, -1.5)), OP("mul", true, false, mul(a, b)), OP("div", false, false, div(a, b)),
    OP("pow", false, false, pow(a, b)), OP("maximum", true, false, maximum(a, b)),
    OP("minimum", true, false, minimum(a, b)), OP("atan2", true, false, atan2(a, b)), OP("eq", false, false, eq(a, b)),
    OP("ne", false, false, ne(a, b)), OP("lt", false, false, lt(a, b)), OP("le", false, false, le(a, b)),
    OP("gt", false, false, gt(a, b)), OP("ge", false, false, ge(a, b)),
    OP("logical_and", false, false, logical_and(a, b)), OP("logical_or", false, false, logical_or(a, b)),
    OP("logical_xor", false, false, logical_xor(a, b)), OP("complex", true, false, complex(a, b)),
    OP("polar", true, false, polar(a, b)), OP("isclose", false, false, isclose(a, b, 0.5, 0.5)),
    OP("fmod", true, false, fmod(a, b)), OP("remainder", true, false, remainder(a, b)),
    OP("floor_divide", true, false, floor_divide(a, b)), OP("div trunc", false, false, div(a, b, "trunc")),
    OP("hypot", true, false, hypot(a, b)), OP("copysign", true, false, copysign(a, b)),
    OP("logaddexp", true, false, logaddexp(a, b)), OP("logaddexp2", false, false, logaddexp2(a, b)),
    OP("xlogy", true, false, xlogy(a, b)),
    OP("masked_fill", true, false, masked_fill(a, b, Scalar(1.5))),
    OP("mse_loss", true, true, nn::functional::mse_loss(a, b)),
    OP("l1_loss sum", true, true, nn::functional::l1_loss(a, b, nn::Reduction::sum)),
    OP("smooth_l1_loss none", true, false, nn::functional::smooth_l1_loss(a, b, nn::Reduction::none, 0.5)),
    OP("huber_loss", true, true, nn::functional::huber_loss(a, b, nn::Reduction::mean, 0.7)),
};

const std::vector<Op> kProducts = {
    OP("matmul", true, true, matmul(a, b)), OP("bmm", true, true, bmm(a, b)),
    OP("einsum ...ij,...kj->...ik", true, true, einsum("...ij,...kj->...ik", {a, b.transpose(-1, -2)})),
};

#undef OP

/// A drawn convolution: x (N, C, *spatial) or unbatched, weight (C_out, C / groups, *kernel), an optional
/// bias, stride, padding, dilation and groups; sometimes sizes that do not fit (then both sides throw).
struct Conv {
  Shape x, w, b;
  std::int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  std::string describe() const {
    return "stride " + std::to_string(stride) + " padding " + std::to_string(padding) + " dilation " +
           std::to_string(dilation) + " groups " + std::to_string(groups);
  }
  Op op() const {
    const Conv c = *this;
    return Op{"conv", [c](const std::vector<Tensor>& t, const Params&) {
                return nn::functional::conv_nd(t[0], t[1], t.size() > 2 ? t[2] : Tensor(), c.stride, c.padding,
                                               c.dilation, c.groups, nn::PaddingMode::zeros);
              }, true, true};
  }
};

/// A drawn convolution.
Conv draw_conv(Rng& rng) {
  Conv c;
  const std::int64_t d = draw(rng, 1, 2), groups = coin(rng, 0.25) ? 2 : 1;
  const std::int64_t cin = groups * draw(rng, 1, 2), cout = groups * draw(rng, 1, 2);
  c.groups = groups, c.stride = draw(rng, 1, 2), c.padding = draw(rng, 0, 1), c.dilation = draw(rng, 1, 2);
  if (coin(rng, 0.8)) c.x.push_back(draw(rng, 1, 2));  // batched
  c.x.push_back(cin);
  c.w = {cout, cin / groups};
  for (std::int64_t i = 0; i < d; ++i) {
    c.x.push_back(draw(rng, 2, 8));
    c.w.push_back(draw(rng, 1, 3));
  }
  if (coin(rng, 0.5)) c.b = {cout};
  return c;
}

/// The agreement tolerance (rel_diff) for results of dtype dt.
double tol(Dtype dt, bool sums) {
  if (dt == float32 || dt == complex64) return sums ? 1e-4 : 2e-5;
  return sums ? 1e-10 : 1e-12;
}

/// What one side of a comparison gave: a result or a phasor::Error's message.
struct Outcome {
  Tensor value;
  std::string error;
};

/// f's result, or the message of the phasor::Error it threw.
Outcome attempt(const std::function<Tensor()>& f) {
  try {
    return {f(), {}};
  } catch (const Error& e) {
    return {Tensor(), e.what()};
  }
}

/// a and b (results of the same op) have the same shape and dtype and agree within eps (rel_diff).
void check_same(const Tensor& a, const Tensor& b, double eps, const char* what) {
  CAPTURE(what);
  CHECK(a.shape() == b.shape());
  CHECK(a.dtype() == b.dtype());
  if (a.shape() == b.shape() && a.dtype() == b.dtype()) CHECK(rel_diff(a, b) <= eps);
}

/// Both outcomes are the same error, or neither is an error (then true).
bool same_outcome(const Outcome& a, const Outcome& b, const char* what) {
  CAPTURE(what);
  CHECK_MESSAGE(a.error == b.error, "'" << a.error << "' / '" << b.error << "'");
  return a.error.empty() && b.error.empty();
}

/// `what` and each operand's view in words, for failure reports.
std::string layouts(const std::string& what, const std::vector<Operand>& in) {
  std::string s = what;
  for (const Operand& o : in) s += "\n  " + o.view.describe();
  return s;
}

/// The op, its arguments and its operands' views in words.
std::string layouts(const Op& op, const Params& p, const std::vector<Operand>& in) {
  return layouts(std::string(op.name) + ", " + describe(p), in);
}

/// op on the CPU views, on contiguous copies of them and on the device's views: all three throw the
/// same phasor::Error, or none throws and the results agree (the device's lives on the device).
void check_op(const Device& dev, const Op& op, const Params& p, const std::vector<Operand>& in) {
  std::vector<Tensor> c, k, g;
  for (const auto& o : in) {
    c.push_back(o.on_cpu());
    k.push_back(c.back().contiguous());
    g.push_back(o.on_dev());
  }
  const std::string where = layouts(op, p, in);
  CAPTURE(where);
  const Outcome rc = attempt([&] { return op.f(c, p); }), rk = attempt([&] { return op.f(k, p); }),
                rg = attempt([&] { return op.f(g, p); });
  const bool ok_dev = same_outcome(rc, rg, "CPU vs device"), ok_copies = same_outcome(rc, rk, "CPU views vs copies");
  if (!ok_dev || !ok_copies) return;
  CHECK(rg.value.device() == dev);
  const double eps = tol(rc.value.dtype(), op.sums);
  check_same(rg.value, rc.value, eps, "CPU vs device");
  check_same(rk.value, rc.value, eps, "CPU views vs copies");
}

/// Second order: d/ds <grad_s sum |op(views of s)|^2, w> for fixed random w, on `dev` (the storages
/// moved there); an error's message in place of a failure.
std::pair<std::vector<Tensor>, std::string> second_order(const Device& dev,
                                                         const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                         const std::vector<Tensor>& storages,
                                                         const std::vector<Tensor>& w) {
  std::vector<Tensor> s, out;
  for (const auto& t : storages) s.push_back(t.detach().to(dev).requires_grad_());
  const Outcome r = attempt([&] {
    const Tensor y = f(s);
    const Tensor loss = y.is_complex() ? (real(y) * real(y) + imag(y) * imag(y)).sum() : (y * y).sum();
    const std::vector<Tensor> g = autodiff::grad({loss}, s, {}, std::nullopt, true, true);
    Tensor dot = zeros({}, float64, dev);
    for (std::size_t i = 0; i < g.size(); ++i)
      if (g[i].defined()) dot = dot + real(g[i] * w[i].to(dev)).sum();
    if (!dot.requires_grad()) return Tensor();  // the gradient does not depend on s (a linear op)
    out = autodiff::grad({dot}, s, {}, std::nullopt, false, true);
    return dot;
  });
  return {out, r.error};
}

/// Gradients of sum |op(views of the storages)|^2 w.r.t. the storages, on the CPU and on the device
/// (grads_agree), where the CPU computes op at all; with `second`, also their gradients (second order).
void check_grads(const Device& dev, const Op& op, const Params& p, const std::vector<Operand>& in, bool second = false) {
  std::vector<Tensor> views, storages;
  for (const auto& o : in) {
    views.push_back(o.on_cpu());
    storages.push_back(o.cpu);
  }
  if (!attempt([&] { return op.f(views, p); }).error.empty()) return;  // refused: the error cases' business
  const std::string where = layouts(op, p, in);
  CAPTURE(where);
  const auto through_views = [&](const std::vector<Tensor>& s) {
    std::vector<Tensor> v;
    for (std::size_t i = 0; i < in.size(); ++i) v.push_back(in[i].view.cut(s[i]));
    return op.f(v, p);
  };
  grads_agree(dev, op.name, through_views, storages, 1e-10);
  if (!second) return;
  std::vector<Tensor> w;
  for (const auto& t : storages) w.push_back(sample(t.shape(), t.dtype()));
  const auto [c, ec] = second_order(Device::cpu(), through_views, storages, w);
  if (!ec.empty()) return;  // no second order on the CPU either (a gradient that is not differentiable)
  const auto [g, eg] = second_order(dev, through_views, storages, w);
  CHECK_MESSAGE(eg.empty(), eg);
  if (!eg.empty()) return;
  REQUIRE(g.size() == c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i].defined() == c[i].defined());
    if (c[i].defined() && g[i].defined()) {
      CHECK(g[i].device() == dev);
      check_same(g[i], c[i], 1e-9, "second order");
    }
  }
}

/// An in-place op on `self` (a view; its storage is compared whole afterwards) with a partner b.
struct InPlace {
  const char* name;
  std::function<void(Tensor&, const Tensor&)> f;
};

const std::vector<InPlace> kInPlace = {
    {"add_", [](Tensor& s, const Tensor& b) { s.add_(b); }},
    {"sub_ alpha", [](Tensor& s, const Tensor& b) { s.sub_(b, 2); }},
    {"mul_", [](Tensor& s, const Tensor& b) { s.mul_(b); }},
    {"div_", [](Tensor& s, const Tensor& b) { s.div_(b); }},
    {"copy_", [](Tensor& s, const Tensor& b) { s.copy_(b); }},
    {"masked_fill_", [](Tensor& s, const Tensor& b) { s.masked_fill_(b, -2.0); }},
    {"fill_", [](Tensor& s, const Tensor&) { s.fill_(1.25); }},
    {"clamp_", [](Tensor& s, const Tensor&) { s.clamp_(Scalar(-0.3), Scalar(0.4)); }},
    {"add_ scalar", [](Tensor& s, const Tensor&) { s.add_(Scalar(2)); }},
    {"mul_ scalar", [](Tensor& s, const Tensor&) { s.mul_(Scalar(-0.5)); }},
};

/// Drawn shapes for a matrix product: batch dims broadcasting, (m, k) and (k, n), sometimes 1-D.
std::pair<Shape, Shape> product_shapes(Rng& rng) {
  const std::int64_t m = draw(rng, 1, 6), k = draw(rng, 1, 6), n = draw(rng, 1, 6);
  Shape batch(static_cast<std::size_t>(draw(rng, 0, 2)));
  for (auto& d : batch) d = draw(rng, 1, 3);
  Shape a = broadcast_partner(rng, batch), b = broadcast_partner(rng, batch);
  a.push_back(m), a.push_back(k), b.push_back(k), b.push_back(n);
  if (coin(rng, 0.1)) a = {k};
  if (coin(rng, 0.1)) b = {k};
  return {a, b};
}

/// Operands for op with output shape s: one of s, or (binary ops) two broadcasting to s, the second a
/// bool mask for masked_fill.
std::vector<Operand> operands_for(Rng& rng, const Device& dev, const Op& op, bool binary, const Shape& s,
                                  const std::vector<Dtype>& dts) {
  const Dtype da = pick(rng, dts);
  if (!binary) return {operand(rng, dev, s, da)};
  const bool masked = std::string(op.name) == "masked_fill";
  const Dtype db = masked ? bool_ : coin(rng, 0.5) ? da : pick(rng, dts);
  Shape sa = s, sb = broadcast_partner(rng, s);
  if (!masked && coin(rng, 0.5)) std::swap(sa, sb);  // masked_fill's result has a's shape
  return {operand(rng, dev, sa, da), operand(rng, dev, sb, db)};
}

}  // namespace

DEVICE_CASE("cuda layouts: drawn ops on drawn views agree with the CPU, errors included") {
  manual_seed(90);
  Rng rng(case_seed(90));
  for (int i = 0; i < 1400; ++i) {
    const Op& op = pick(rng, kUnary);
    Shape s = draw_shape(rng);
    if (op.sums && i % 25 == 0)  // long rows: split reductions, long scans and transforms
      s = coin(rng, 0.5) ? Shape{draw(rng, 8192, 20000)} : Shape{draw(rng, 1, 3), draw(rng, 8192, 12000)};
    check_op(dev, op, draw_params(rng, static_cast<std::int64_t>(s.size())), operands_for(rng, dev, op, false, s, kDtypes));
  }
  for (int i = 0; i < 600; ++i) {
    const Op& op = pick(rng, kBinary);
    const Shape s = draw_shape(rng);
    check_op(dev, op, Params{}, operands_for(rng, dev, op, true, s, kDtypes));
  }
  const Op where_op{"where", [](const std::vector<Tensor>& x, const Params&) { return where(x[0], x[1], x[2]); }, false, false};
  for (int i = 0; i < 120; ++i) {  // where(cond, a, b), each broadcasting
    const Shape s = draw_shape(rng);
    const Dtype da = pick(rng, kDtypes), db = coin(rng, 0.5) ? da : pick(rng, kDtypes);
    check_op(dev, where_op, Params{},
             {operand(rng, dev, broadcast_partner(rng, s), bool_), operand(rng, dev, s, da),
              operand(rng, dev, broadcast_partner(rng, s), db)});
  }
  for (int i = 0; i < 200; ++i) {  // matrix products (cuBLAS; int64 and bool: int_gemm.cu) of drawn views and batches
    const Op& op = pick(rng, kProducts);
    const auto [sa, sb] = product_shapes(rng);
    const Dtype da = pick(rng, kDtypes), db = coin(rng, 0.7) ? da : pick(rng, kDtypes);
    check_op(dev, op, Params{}, {operand(rng, dev, sa, da), operand(rng, dev, sb, db)});
  }
}

DEVICE_CASE("cuda layouts: drawn convolutions of drawn views agree with the CPU, gradients and errors included") {
  manual_seed(94);
  Rng rng(case_seed(94));
  for (int i = 0; i < 120; ++i) {
    const Conv c = draw_conv(rng);
    const Dtype dt = pick(rng, std::vector<Dtype>{float32, float64, float64, complex64, int64});
    std::vector<Operand> in = {operand(rng, dev, c.x, dt), operand(rng, dev, c.w, dt)};
    if (!c.b.empty()) in.push_back(operand(rng, dev, c.b, dt));
    const Params p;
    const Op op = c.op();
    CAPTURE(c.describe());
    check_op(dev, op, p, in);
    if (dt == float64) check_grads(dev, op, p, in, true);
  }
}

// A captured op replays on its inputs' new values as it would run eagerly; every drawn op captures. The
// index ops' index tensors are made on the device by the op's eager run and found there by its capture
// (g_index_memo), so their captures hold the device-side index checks (Note [device checks in CUDA graphs]).
// GPU only: a virtual CPU device has no graphs.
DEVICE_CASE("cuda layouts: drawn ops captured in a CUDA graph replay on new values as they run eagerly") {
  if (!dev.is_cuda()) return;
  manual_seed(95);
  Rng rng(case_seed(95));
  std::map<std::string, Tensor> memo;
  g_index_memo = &memo;
  struct Forget {
    ~Forget() { g_index_memo = nullptr; }
  } forget;
  int captured = 0, with_indices = 0;
  for (int i = 0; i < 300; ++i) {
    const bool binary = coin(rng, 0.3);
    const Op& op = binary ? pick(rng, kBinary) : pick(rng, kUnary);
    const Shape s = draw_shape(rng);
    const Params p = draw_params(rng, static_cast<std::int64_t>(s.size()));
    const std::vector<Operand> in = operands_for(rng, dev, op, binary, s, kDtypes);
    std::vector<Tensor> views;
    for (const auto& o : in) views.push_back(o.on_dev());
    const std::string where = layouts(op, p, in);
    CAPTURE(where);
    if (!attempt([&] { return op.f(views, p); }).error.empty()) continue;  // the eager error cases' business
    cuda::Graph g;
    Tensor out;
    const std::size_t memo_before = memo.size();
    const Outcome cap = attempt([&] {
      g.capture([&] { out = op.f(views, p); });
      return out;
    });
    REQUIRE_MESSAGE(cap.error.empty(), cap.error);
    CHECK(memo.size() == memo_before);  // the capture made no index tensor of its own
    const std::string name = op.name;
    if (name.rfind("index_", 0) == 0 || name.rfind("gather", 0) == 0 || name == "scatter_add") ++with_indices;
    ++captured;
    for (int k = 0; k < 2; ++k) {  // new values in the same storages, then one replay
      for (const auto& o : in) {
        Tensor storage = o.dev;  // a handle to the same storage
        storage.copy_(sample(o.cpu.shape(), o.cpu.dtype()).to(dev));
      }
      g.replay();
      std::vector<Tensor> now;
      for (const auto& o : in) now.push_back(o.view.cut(o.dev.to(Device::cpu())));
      const Tensor want = op.f(now, p);
      check_same(out, want, tol(want.dtype(), op.sums), "replay vs eager on the CPU");
    }
  }
  MESSAGE("captured " << captured << ", " << with_indices << " of them index ops");
  CHECK(captured > 100);
  CHECK(with_indices > 0);
}

DEVICE_CASE("cuda layouts: drawn in-place ops on drawn views write the same storage as on the CPU, errors included") {
  manual_seed(92);
  Rng rng(case_seed(92));
  for (int i = 0; i < 400; ++i) {
    const InPlace& op = pick(rng, kInPlace);
    const Shape s = draw_shape(rng);
    const bool masked = std::string(op.name) == "masked_fill_";
    const Dtype ds = pick(rng, kDtypes), db = masked ? bool_ : coin(rng, 0.5) ? ds : pick(rng, kDtypes);
    const Operand self = operand(rng, dev, s, ds, coin(rng, 0.1));  // an expanded self must throw on both
    const Operand b = operand(rng, dev, broadcast_partner(rng, s), db);
    const std::string where = layouts(op.name, {self, b});
    CAPTURE(where);
    const Tensor before = self.cpu.clone();
    auto run = [&](const Tensor& storage, const Tensor& other) {
      return attempt([&] {
        Tensor v = self.view.cut(storage);
        op.f(v, b.view.cut(other));
        return storage;
      });
    };
    const Outcome rc = run(self.cpu, b.cpu), rg = run(self.dev, b.dev);
    if (!same_outcome(rc, rg, "CPU vs device")) {
      // a failed in-place op changes nothing, on either side
      if (!rc.error.empty()) CHECK(rel_diff(self.cpu, before) == 0);
      if (!rg.error.empty()) CHECK(rel_diff(self.dev, before) == 0);
      continue;
    }
    check_same(self.dev, self.cpu, tol(ds, false), "storage after the op");
  }
}

DEVICE_CASE("cuda layouts: gradients through drawn views agree with the CPU's") {
  manual_seed(93);
  Rng rng(case_seed(93));
  const std::vector<Dtype> dts = {float64, complex128};
  enum Kind { kUnaryOp, kBinaryOp, kProductOp };
  std::vector<std::pair<const Op*, Kind>> ops;
  for (const auto& [table, kind] : {std::pair{&kUnary, kUnaryOp}, {&kBinary, kBinaryOp}, {&kProducts, kProductOp}})
    for (const Op& op : *table)
      if (op.grad) ops.emplace_back(&op, kind);
  for (int i = 0; i < 500; ++i) {
    const auto [op_ptr, kind] = pick(rng, ops);
    const Op& op = *op_ptr;
    Shape s = draw_shape(rng);
    for (auto& n : s) n = std::max<std::int64_t>(n, 1);  // empty tensors take no gradient worth comparing
    const Params p = draw_params(rng, static_cast<std::int64_t>(s.size()));
    if (kind == kProductOp) {
      const auto [sa, sb] = product_shapes(rng);
      check_grads(dev, op, p, {operand(rng, dev, sa, pick(rng, dts)), operand(rng, dev, sb, pick(rng, dts))}, true);
      continue;
    }
    std::vector<Operand> in = operands_for(rng, dev, op, kind == kBinaryOp, s, dts);
    if (in.size() == 2 && in[1].view.dtype == bool_) {  // masked_fill: the mask takes no gradient
      const Tensor mask = in[1].on_cpu();
      const Op fill{op.name, [mask](const std::vector<Tensor>& x, const Params&) {
                      return masked_fill(x[0], mask.to(x[0].device()), Scalar(1.5));
                    }, true, false};
      check_grads(dev, fill, p, {in[0]});
      continue;
    }
    check_grads(dev, op, p, in, i % 2 == 0);
  }
}
