// phasor/tensor.hpp - the Tensor handle: shape, dtype, device, views, math methods, autograd.
#pragma once
#include <atomic>
#include <complex>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define PHASOR_HAS_SINGLE_THREADED 1
#endif
#endif

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/error.hpp"
#include "phasor/scalar.hpp"

namespace phasor {

struct TensorImpl;
class Tensor;
namespace autodiff {
class Node;
}
namespace detail {
/// Reference counts at the start of every TensorImpl (Note [intrusive tensor counts], tensor_impl.hpp).
struct ImplCounts {
  std::atomic<std::uint32_t> strong{1};  ///< Tensor handles
  std::atomic<std::uint32_t> weak{1};    ///< internal weak handles, plus one while any Tensor handle lives
};
/// Destroys or recycles a TensorImpl whose last Tensor handle went away (internal).
void release_impl(TensorImpl* impl) noexcept;
/// The counts of `impl` (they sit at its start).
inline ImplCounts* impl_counts(TensorImpl* impl) noexcept { return reinterpret_cast<ImplCounts*>(impl); }
/// True while the process has one thread (glibc tracks it): counts then need no locked instructions,
/// as in libstdc++'s shared_ptr. Once false it stays false; a new thread sees every earlier write.
inline bool single_threaded() noexcept {
#ifdef PHASOR_HAS_SINGLE_THREADED
  return ::__libc_single_threaded != 0;
#else
  return false;
#endif
}
/// Adds one Tensor handle to `impl`.
inline void retain_impl(TensorImpl* impl) noexcept {
  auto& c = impl_counts(impl)->strong;
  if (single_threaded())
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  else
    c.fetch_add(1, std::memory_order_relaxed);
}
/// Drops one Tensor handle of `impl`; the last one releases it.
inline void drop_impl(TensorImpl* impl) noexcept {
  auto& c = impl_counts(impl)->strong;
  std::uint32_t before;
  if (single_threaded()) {
    before = c.load(std::memory_order_relaxed);
    c.store(before - 1, std::memory_order_relaxed);
  } else {
    before = c.fetch_sub(1, std::memory_order_acq_rel);
  }
  if (before == 1) release_impl(impl);
}
}  // namespace detail

/// A list of sizes, strides or dims.
using Shape = std::vector<std::int64_t>;

/// Python-style slice `start:stop:step` for Tensor::index (negative values count from the end).
struct Slice {
  std::optional<std::int64_t> start;  ///< first index (default 0)
  std::optional<std::int64_t> stop;   ///< one past the last index (default the size)
  std::int64_t step = 1;              ///< stride, >= 1
  /// `start:stop:step`; omitted bounds mean the whole dim.
  Slice(std::optional<std::int64_t> start_ = std::nullopt, std::optional<std::int64_t> stop_ = std::nullopt,
        std::int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
};
/// Index entry that inserts a new dim of size 1.
struct NoneIndex {};
/// Index entry that stands for as many full slices as needed.
struct EllipsisIndex {};
inline constexpr NoneIndex None{};          ///< new axis (numpy's None)
inline constexpr EllipsisIndex Ellipsis{};  ///< numpy's `...`

/// One entry of Tensor::index: an integer, a Slice, None, Ellipsis, or an int64/bool tensor.
class TensorIndex {
 public:
  /// Selects one position (removes the dim).
  TensorIndex(std::int64_t i) : v_(i) {}
  /// Selects one position (int).
  TensorIndex(int i) : v_(static_cast<std::int64_t>(i)) {}
  /// A 0-d bool mask, as numpy's x[True] / x[False]: a new dim of size 1 kept whole (true) or emptied (false).
  TensorIndex(bool b);
  /// Slices the dim.
  TensorIndex(Slice s) : v_(s) {}
  /// Inserts a dim of size 1.
  TensorIndex(NoneIndex n) : v_(n) {}
  /// Expands to full slices.
  TensorIndex(EllipsisIndex e) : v_(e) {}
  /// Selects positions with an int64 tensor, or a mask with a bool tensor (over as many dims); undefined: a
  /// whole dim.
  TensorIndex(const Tensor& t);
  /// The held alternative.
  const std::variant<std::int64_t, Slice, NoneIndex, EllipsisIndex, std::shared_ptr<Tensor>>& value() const { return v_; }

 private:
  std::variant<std::int64_t, Slice, NoneIndex, EllipsisIndex, std::shared_ptr<Tensor>> v_;
};

/// Deleter called with the data pointer when a from_blob tensor's storage dies (may be empty).
using BlobDeleter = std::function<void(void*)>;
/// Gradient hook: receives the gradient, returns a replacement (or an undefined Tensor to keep it).
using GradHook = std::function<Tensor(const Tensor&)>;

/// Padding modes of pad().
enum class PadMode { constant, reflect, replicate, circular };

/// A cheap handle to an n-dimensional array with shared storage and autograd metadata.
/// Copies share the same tensor (like torch.Tensor in Python); use clone() for a deep copy.
class Tensor {
 public:
  /// An undefined tensor (defined() is false).
  Tensor() noexcept : impl_(nullptr) {}
  /// Another handle to the same tensor.
  Tensor(const Tensor& o) noexcept : impl_(o.impl_) {
    if (impl_) detail::retain_impl(impl_);
  }
  /// Takes over `o`'s handle (o becomes undefined).
  Tensor(Tensor&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
  /// Makes this a handle to o's tensor.
  Tensor& operator=(const Tensor& o) noexcept {
    Tensor t(o);
    std::swap(impl_, t.impl_);
    return *this;
  }
  /// Takes over `o`'s handle.
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor t(std::move(o));
    std::swap(impl_, t.impl_);
    return *this;
  }
  /// Drops this handle; the last one frees the tensor.
  ~Tensor() {
    if (impl_) detail::drop_impl(impl_);
  }
  /// Wraps an implementation, taking over one of its counts (internal).
  static Tensor adopt(TensorImpl* impl) noexcept {
    Tensor t;
    t.impl_ = impl;
    return t;
  }

  // ---- metadata -------------------------------------------------------------------------
  /// True unless default-constructed.
  bool defined() const { return impl_ != nullptr; }
  /// Sizes of every dim.
  const Shape& shape() const;
  /// Size of dim `d` (negative counts from the end).
  std::int64_t size(std::int64_t d) const;
  /// Strides of every dim, in elements.
  const Shape& strides() const;
  /// Stride of dim `d`, in elements.
  std::int64_t stride(std::int64_t d) const;
  /// Offset of the first element in the storage, in elements.
  std::int64_t storage_offset() const;
  /// Number of dims.
  std::int64_t dim() const;
  /// Number of elements.
  std::int64_t numel() const;
  /// Element type.
  Dtype dtype() const;
  /// Device the storage lives on.
  Device device() const;
  /// True if the elements are laid out row-major without gaps.
  bool is_contiguous() const;
  /// True for complex dtypes.
  bool is_complex() const { return phasor::is_complex(dtype()); }
  /// True for float32/float64.
  bool is_floating_point() const { return phasor::is_floating(dtype()); }
  /// Bytes per element.
  std::size_t itemsize() const { return phasor::itemsize(dtype()); }
  /// Bytes spanned by the elements (numel * itemsize).
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * itemsize(); }
  /// Address of the first element (CPU tensors).
  void* data_ptr() const;
  /// Typed address of the first element; throws if T does not match dtype().
  template <class T>
  T* data() const;
  /// The single element's value; throws unless numel() == 1.
  Scalar item() const;
  /// The single element converted to T (bool, integers, float, double, std::complex); an integer T must
  /// hold it (floats truncate toward zero), else phasor::Error, as PyTorch's checked item<T>().
  template <class T>
  T item() const;
  /// Internal implementation (for phasor's own code).
  TensorImpl* impl() const { return impl_; }
  /// True if both handles refer to the same tensor.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  /// Wraps external memory without copying; `deleter` (may be empty) runs when the storage dies. A CUDA
  /// pointer must be aligned to the element size (16 bytes for complex128), else phasor::Error.
  static Tensor from_blob(void* data, const Shape& shape, Dtype dtype, BlobDeleter deleter = nullptr,
                          Device device = Device::cpu());
  /// Wraps external strided memory (strides in elements) without copying.
  static Tensor from_blob(void* data, const Shape& shape, const Shape& strides, Dtype dtype,
                          BlobDeleter deleter = nullptr, Device device = Device::cpu());

  // ---- conversion and copies ----------------------------------------------------------
  /// Converts to `dtype` (returns *this when already of that dtype).
  Tensor to(Dtype dtype) const;
  /// Moves to `device` (returns *this when already there).
  Tensor to(Device device) const;
  /// A contiguous tensor with the same values (*this when already contiguous).
  Tensor contiguous() const;
  /// A deep copy (differentiable).
  Tensor clone() const;
  /// A tensor sharing storage but cut from the autograd graph.
  Tensor detach() const;
  /// Copies `src` (broadcast, converted) into this tensor in place.
  Tensor& copy_(const Tensor& src);
  /// Sets every element to `value` in place.
  Tensor& fill_(const Scalar& value);
  /// Sets every element to zero in place.
  Tensor& zero_();

  // ---- views (share storage) ------------------------------------------------------------
  /// Same data, new shape (one entry may be -1); copies only when a view is impossible.
  Tensor reshape(const Shape& shape) const;
  /// Same data, new shape; throws when the strides make a view impossible.
  Tensor view(const Shape& shape) const;
  /// Merges dims start..end into one.
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  /// Reorders dims.
  Tensor permute(const Shape& dims) const;
  /// Swaps two dims.
  Tensor transpose(std::int64_t d0, std::int64_t d1) const;
  /// Transpose of a 2-D tensor (0-D and 1-D unchanged).
  Tensor t() const;
  /// Moves dims `src` to positions `dst`.
  Tensor movedim(const Shape& src, const Shape& dst) const;
  /// Moves dim `src` to position `dst`.
  Tensor movedim(std::int64_t src, std::int64_t dst) const;
  /// Removes every dim of size 1.
  Tensor squeeze() const;
  /// Removes dim `d` if its size is 1.
  Tensor squeeze(std::int64_t d) const;
  /// Inserts a dim of size 1 at `d`.
  Tensor unsqueeze(std::int64_t d) const;
  /// Broadcasts to `shape` (-1 keeps a size) without copying.
  Tensor expand(const Shape& shape) const;
  /// Broadcasts to `shape` without copying.
  Tensor broadcast_to(const Shape& shape) const;
  /// Elements start, start+step, ... < stop of dim `d` (bounds clamp like Python).
  Tensor slice(std::int64_t d, std::optional<std::int64_t> start = std::nullopt,
               std::optional<std::int64_t> stop = std::nullopt, std::int64_t step = 1) const;
  /// Position `i` of dim `d`, removing the dim.
  Tensor select(std::int64_t d, std::int64_t i) const;
  /// `length` elements of dim `d` from `start`.
  Tensor narrow(std::int64_t d, std::int64_t start, std::int64_t length) const;
  /// Real part of a complex tensor as a view (the tensor itself when real).
  Tensor real() const;
  /// Imaginary part of a complex tensor as a view.
  Tensor imag() const;
  /// numpy-style indexing: integers, Slice, None, Ellipsis (a view), and int64 or bool tensors (a copy;
  /// several broadcast together, their dims in place when adjacent, first otherwise; integers select first).
  Tensor index(const std::vector<TensorIndex>& indices) const;

  // ---- autograd ---------------------------------------------------------------------------
  /// True if gradients flow to or through this tensor.
  bool requires_grad() const;
  /// Marks a leaf as needing gradients (floating or complex dtypes only).
  Tensor& requires_grad_(bool requires_grad = true);
  /// Accumulated gradient (undefined until a backward reaches this tensor).
  Tensor grad() const;
  /// Replaces the accumulated gradient (undefined clears it).
  void set_grad(const Tensor& g);
  /// True for tensors not produced by a recorded op.
  bool is_leaf() const;
  /// The node that produced this tensor (null for leaves).
  std::shared_ptr<autodiff::Node> grad_fn() const;
  /// Runs reverse mode from this tensor; `gradient` may be omitted for one-element tensors.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// Makes a non-leaf keep its .grad() after backward.
  Tensor& retain_grad();
  /// True if retain_grad() was called (or for leaves).
  bool retains_grad() const;
  /// Adds a hook run on this tensor's gradient; returns a handle for remove_hook.
  std::size_t register_hook(GradHook hook);
  /// Removes a hook added by register_hook.
  void remove_hook(std::size_t handle);
  /// Number of in-place changes made to the storage (shared with views).
  std::uint64_t version() const;
  /// Makes this leaf hold `data`'s storage, shape and dtype, keeping its identity and requires_grad
  /// (how Module::to changes parameters that other handles share); the gradient is dropped when the
  /// dtype or device changes.
  void set_data(const Tensor& data);

  // ---- elementwise math --------------------------------------------------------------
  Tensor neg() const;      ///< -x
  Tensor abs() const;      ///< |x| (real for complex x)
  Tensor sign() const;     ///< sign (x/|x| for complex, 0 at 0)
  Tensor exp() const;      ///< e^x
  Tensor expm1() const;    ///< e^x - 1
  Tensor exp2() const;     ///< 2^x
  Tensor log() const;      ///< natural log
  Tensor log1p() const;    ///< log(1 + x)
  Tensor log2() const;     ///< base-2 log
  Tensor log10() const;    ///< base-10 log
  Tensor sqrt() const;     ///< square root
  Tensor rsqrt() const;    ///< 1 / sqrt(x)
  Tensor reciprocal() const;  ///< 1 / x
  Tensor square() const;   ///< x * x
  Tensor sin() const;      ///< sine
  Tensor cos() const;      ///< cosine
  Tensor tan() const;      ///< tangent
  Tensor sinh() const;     ///< hyperbolic sine
  Tensor cosh() const;     ///< hyperbolic cosine
  Tensor tanh() const;     ///< hyperbolic tangent
  Tensor asin() const;     ///< arcsine
  Tensor acos() const;     ///< arccosine
  Tensor atan() const;     ///< arctangent
  Tensor asinh() const;    ///< inverse hyperbolic sine
  Tensor acosh() const;    ///< inverse hyperbolic cosine
  Tensor atanh() const;    ///< inverse hyperbolic tangent
  Tensor erf() const;      ///< error function
  Tensor erfc() const;     ///< complementary error function
  Tensor erfinv() const;   ///< inverse error function (phasor/special.hpp)
  Tensor lgamma() const;   ///< log|Gamma(x)|
  Tensor digamma() const;  ///< psi(x) = Gamma'(x) / Gamma(x)
  Tensor polygamma(std::int64_t n) const;  ///< psi^(n)(x)
  Tensor mvlgamma(std::int64_t p) const;   ///< log of the multivariate gamma function of dimension p
  Tensor i0() const;       ///< modified Bessel function of the first kind, order 0
  Tensor igamma(const Tensor& x) const;   ///< P(this, x), the regularized lower incomplete gamma function
  Tensor igammac(const Tensor& x) const;  ///< Q(this, x) = 1 - P(this, x)
  Tensor sigmoid() const;  ///< 1 / (1 + e^-x)
  Tensor relu() const;     ///< max(x, 0)
  Tensor gelu(bool tanh_approximation = false) const;  ///< GELU (exact erf form, or tanh form)
  Tensor silu() const;     ///< x * sigmoid(x)
  Tensor softplus(double beta = 1.0, double threshold = 20.0) const;  ///< log(1 + e^(beta x)) / beta
  Tensor floor() const;    ///< round down
  Tensor ceil() const;     ///< round up
  Tensor round() const;    ///< round half to even
  Tensor trunc() const;    ///< round toward zero
  Tensor frac() const;     ///< fractional part x - trunc(x)
  Tensor conj() const;     ///< complex conjugate (copy; identity for real)
  Tensor angle() const;    ///< argument of a complex number (0 or pi for reals)
  Tensor isfinite() const; ///< bool: finite
  Tensor isnan() const;    ///< bool: NaN
  Tensor isinf() const;    ///< bool: +-inf
  Tensor logical_not() const;  ///< bool: !x
  Tensor bitwise_not() const;  ///< ~x: bitwise not of int64, logical not of bool (torch.bitwise_not)
  Tensor signbit() const;  ///< bool: the sign bit is set (-0 and -NaN too)
  /// NaN, +inf, -inf replaced (defaults: 0 and the dtype's largest and lowest finite values)
  Tensor nan_to_num(double nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;

  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;  ///< this + alpha * o
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;  ///< this - alpha * o
  Tensor mul(const Tensor& o) const;       ///< this * o
  Tensor div(const Tensor& o) const;       ///< this / o (true division)
  Tensor pow(const Tensor& o) const;       ///< this ^ o
  Tensor pow(const Scalar& e) const;       ///< this ^ e
  Tensor maximum(const Tensor& o) const;   ///< elementwise max (NaN propagates)
  Tensor minimum(const Tensor& o) const;   ///< elementwise min (NaN propagates)
  Tensor atan2(const Tensor& o) const;     ///< atan2(this, o)
  Tensor fmod(const Tensor& o) const;          ///< this - trunc(this / o) * o (sign of this)
  Tensor fmod(const Scalar& o) const;          ///< fmod by a number
  Tensor remainder(const Tensor& o) const;     ///< this - floor(this / o) * o (sign of o)
  Tensor remainder(const Scalar& o) const;     ///< remainder by a number
  Tensor floor_divide(const Tensor& o) const;  ///< floor(this / o)
  Tensor floor_divide(const Scalar& o) const;  ///< floor(this / o) for a number o
  Tensor bitwise_and(const Tensor& o) const;   ///< this & o (bool or int64)
  Tensor bitwise_or(const Tensor& o) const;    ///< this | o (bool or int64)
  Tensor bitwise_xor(const Tensor& o) const;   ///< this ^ o (bool or int64)
  Tensor bitwise_left_shift(const Tensor& o) const;   ///< this << o (int64)
  Tensor bitwise_right_shift(const Tensor& o) const;  ///< this >> o (int64, arithmetic)
  Tensor gcd(const Tensor& o) const;           ///< greatest common divisor (int64)
  Tensor lcm(const Tensor& o) const;           ///< least common multiple (int64)
  Tensor hypot(const Tensor& o) const;         ///< sqrt(this^2 + o^2)
  Tensor copysign(const Tensor& o) const;      ///< |this| with o's sign
  Tensor logaddexp(const Tensor& o) const;     ///< log(e^this + e^o)
  Tensor logaddexp2(const Tensor& o) const;    ///< log2(2^this + 2^o)
  Tensor xlogy(const Tensor& o) const;         ///< this log o (0 where this = 0)
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;  ///< this + value * t1 * t2
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;  ///< this + value * t1 / t2
  Tensor lerp(const Tensor& end, const Scalar& weight) const;  ///< this + weight * (end - this)
  Tensor lerp(const Tensor& end, const Tensor& weight) const;  ///< this + weight * (end - this), tensor weight
  Tensor eq(const Tensor& o) const;        ///< bool: ==
  Tensor ne(const Tensor& o) const;        ///< bool: !=
  Tensor lt(const Tensor& o) const;        ///< bool: <
  Tensor le(const Tensor& o) const;        ///< bool: <=
  Tensor gt(const Tensor& o) const;        ///< bool: >
  Tensor ge(const Tensor& o) const;        ///< bool: >=
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;  ///< clip to [min, max]
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;  ///< value where mask
  Tensor clamp_min(const Scalar& min) const;  ///< clamp with a lower bound only
  Tensor clamp_max(const Scalar& max) const;  ///< clamp with an upper bound only
  /// The diagonal at `offset` of dims dim1, dim2 as a view (appended as the last dim)
  Tensor diagonal(std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) const;
  /// n-th forward difference along dim (see phasor::diff)
  Tensor diff(std::int64_t n = 1, std::int64_t dim = -1, const Tensor& prepend = Tensor(),
              const Tensor& append = Tensor()) const;

  // In-place ops (the *_ forms, copy_, fill_) throw when an input shares memory with this other than
  // element for element (x.div_(x[0]), x[1:].add_(x[:-1])) or when this is an expanded tensor: the result
  // would depend on the write order. x.mul_(x) is fine; clone() such an input first.
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);  ///< in place this += alpha * o
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);  ///< in place this -= alpha * o
  Tensor& mul_(const Tensor& o);   ///< in place this *= o
  Tensor& div_(const Tensor& o);   ///< in place this /= o
  Tensor& add_(const Scalar& s);   ///< in place this += s
  Tensor& sub_(const Scalar& s);   ///< in place this -= s
  Tensor& mul_(const Scalar& s);   ///< in place this *= s
  Tensor& div_(const Scalar& s);   ///< in place this /= s
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);  ///< in place this += value * t1 * t2
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);  ///< in place this += value * t1 / t2
  Tensor& lerp_(const Tensor& end, const Scalar& weight);  ///< in place this += weight * (end - this)
  Tensor& lerp_(const Tensor& end, const Tensor& weight);  ///< in place this += weight * (end - this), tensor weight
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);  ///< in place clamp
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);  ///< in place masked_fill
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);  ///< in place masked_scatter
  Tensor& scatter_(std::int64_t dim, const Tensor& index, const Tensor& src);   ///< in place scatter
  Tensor& scatter_(std::int64_t dim, const Tensor& index, const Scalar& value);  ///< in place scatter of a value
  Tensor& scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src);  ///< in place scatter_add
  /// in place scatter_reduce
  Tensor& scatter_reduce_(std::int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                          bool include_self = true);
  /// in place index_add (alpha * src)
  Tensor& index_add_(std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha = 1);
  Tensor& index_copy_(std::int64_t dim, const Tensor& index, const Tensor& source);  ///< in place index_copy
  Tensor& index_fill_(std::int64_t dim, const Tensor& index, const Scalar& value);   ///< in place index_fill
  /// in place index_reduce
  Tensor& index_reduce_(std::int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                        bool include_self = true);
  /// this[indices] = values (+= when accumulate), values broadcast to this[indices]'s shape, as libtorch's
  /// index_put_: the integers, slices, None and Ellipsis pick a view, the tensors index it as index_put's
  Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate = false);
  /// this[indices] = value
  Tensor& index_put_(const std::vector<TensorIndex>& indices, const Scalar& value);

  // ---- reductions (empty dims = all dims) ------------------------------------------------
  Tensor sum(const Shape& dims = {}, bool keepdim = false) const;   ///< sum
  Tensor mean(const Shape& dims = {}, bool keepdim = false) const;  ///< mean
  Tensor prod(const Shape& dims = {}, bool keepdim = false) const;  ///< product
  Tensor max() const;  ///< largest element
  Tensor min() const;  ///< smallest element
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;  ///< (values, indices) along dim
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;  ///< (values, indices) along dim
  Tensor amax(const Shape& dims = {}, bool keepdim = false) const;  ///< max over dims
  Tensor amin(const Shape& dims = {}, bool keepdim = false) const;  ///< min over dims
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;  ///< index of max
  Tensor argmin(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;  ///< index of min
  Tensor var(const Shape& dims = {}, double correction = 1, bool keepdim = false) const;  ///< variance
  Tensor std(const Shape& dims = {}, double correction = 1, bool keepdim = false) const;  ///< standard deviation
  Tensor norm(double p = 2, const Shape& dims = {}, bool keepdim = false) const;  ///< vector p-norm (p may be inf)
  Tensor logsumexp(const Shape& dims = {}, bool keepdim = false) const;  ///< log(sum(exp(x)))
  Tensor cumsum(std::int64_t dim) const;  ///< running sum along dim
  Tensor cumprod(std::int64_t dim) const;  ///< running product along dim
  std::tuple<Tensor, Tensor> cummax(std::int64_t dim) const;  ///< (values, indices) of the running max
  std::tuple<Tensor, Tensor> cummin(std::int64_t dim) const;  ///< (values, indices) of the running min
  Tensor logcumsumexp(std::int64_t dim) const;  ///< log(cumsum(exp(x))) without overflow
  /// (values, indices) sorted along dim (always stable; see phasor::sort)
  std::tuple<Tensor, Tensor> sort(std::int64_t dim = -1, bool descending = false, bool stable = false) const;
  /// indices that sort along dim (always stable)
  Tensor argsort(std::int64_t dim = -1, bool descending = false, bool stable = false) const;
  /// (values, indices) of the k largest (smallest) entries along dim, sorted
  std::tuple<Tensor, Tensor> topk(std::int64_t k, std::int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor msort() const;  ///< sorted along dim 0
  Tensor repeat(const Shape& repeats) const;  ///< repeated along each dim (see phasor::repeat)
  /// each entry repeated along dim (flattened when none)
  Tensor repeat_interleave(std::int64_t repeats, std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor nonzero() const;  ///< (count, dim) coordinates of the nonzero elements
  Tensor masked_select(const Tensor& mask) const;  ///< 1-D: the elements where mask holds
  // the gathers and scatters (see the free functions of the same names)
  Tensor index_select(std::int64_t dim, const Tensor& index) const;  ///< entries at index along dim
  Tensor gather(std::int64_t dim, const Tensor& index) const;        ///< entries at an index per position
  Tensor take(const Tensor& index) const;                            ///< entries of the flattened tensor
  /// gather with the other dims broadcast (flattened when dim is none)
  Tensor take_along_dim(const Tensor& indices, std::optional<std::int64_t> dim = std::nullopt) const;
  /// copy with alpha * src's slices added at index along dim
  Tensor index_add(std::int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha = 1) const;
  Tensor index_copy(std::int64_t dim, const Tensor& index, const Tensor& source) const;  ///< see phasor::index_copy
  Tensor index_fill(std::int64_t dim, const Tensor& index, const Scalar& value) const;    ///< see phasor::index_fill
  /// see phasor::index_reduce
  Tensor index_reduce(std::int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                      bool include_self = true) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const;       ///< see phasor::scatter
  Tensor scatter(std::int64_t dim, const Tensor& index, const Scalar& value) const;     ///< scatter of a value
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const;   ///< see phasor::scatter_add
  /// see phasor::scatter_reduce
  Tensor scatter_reduce(std::int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;  ///< see phasor::masked_scatter
  /// see phasor::index_put
  Tensor index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false) const;
  /// (values, inverse, counts) of the distinct elements (see phasor::unique)
  std::tuple<Tensor, Tensor, Tensor> unique(bool sorted = true, bool return_inverse = false, bool return_counts = false,
                                            std::optional<std::int64_t> dim = std::nullopt) const;
  /// (values, indices) of the k-th smallest (k from 1) along dim
  std::tuple<Tensor, Tensor> kthvalue(std::int64_t k, std::int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;  ///< lower median of all elements (NaN if any)
  std::tuple<Tensor, Tensor> median(std::int64_t dim, bool keepdim = false) const;  ///< (values, indices) along dim
  Tensor nanmedian() const;  ///< lower median of the non-NaN elements
  std::tuple<Tensor, Tensor> nanmedian(std::int64_t dim, bool keepdim = false) const;  ///< ignoring NaN, along dim
  /// q-th quantiles (see phasor::quantile)
  Tensor quantile(const Tensor& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  /// quantile at one q
  Tensor quantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  /// quantiles of the non-NaN elements
  Tensor nanquantile(const Tensor& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  /// nanquantile at one q
  Tensor nanquantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  Tensor all(const Shape& dims = {}, bool keepdim = false) const;  ///< bool: all nonzero
  Tensor any(const Shape& dims = {}, bool keepdim = false) const;  ///< bool: any nonzero

  /// Matrix product with broadcast batch dims (see phasor::matmul).
  Tensor matmul(const Tensor& o) const;

 private:
  TensorImpl* impl_;
};

// ---- operators (elementwise, broadcasting; a C++ scalar never widens the tensor) --------
Tensor operator-(const Tensor& a);                      ///< negation
Tensor operator+(const Tensor& a, const Tensor& b);     ///< sum
Tensor operator-(const Tensor& a, const Tensor& b);     ///< difference
Tensor operator*(const Tensor& a, const Tensor& b);     ///< product
Tensor operator/(const Tensor& a, const Tensor& b);     ///< quotient
Tensor operator+(const Tensor& a, const Scalar& b);     ///< sum with a scalar
Tensor operator-(const Tensor& a, const Scalar& b);     ///< difference with a scalar
Tensor operator*(const Tensor& a, const Scalar& b);     ///< product with a scalar
Tensor operator/(const Tensor& a, const Scalar& b);     ///< quotient by a scalar
Tensor operator%(const Tensor& a, const Tensor& b);     ///< remainder (sign of b, as Python)
Tensor operator%(const Tensor& a, const Scalar& b);     ///< remainder by a scalar
Tensor operator+(const Scalar& a, const Tensor& b);     ///< scalar plus tensor
Tensor operator-(const Scalar& a, const Tensor& b);     ///< scalar minus tensor
Tensor operator*(const Scalar& a, const Tensor& b);     ///< scalar times tensor
Tensor operator/(const Scalar& a, const Tensor& b);     ///< scalar over tensor
Tensor& operator+=(Tensor& a, const Tensor& b);         ///< in place add
Tensor& operator-=(Tensor& a, const Tensor& b);         ///< in place subtract
Tensor& operator*=(Tensor& a, const Tensor& b);         ///< in place multiply
Tensor& operator/=(Tensor& a, const Tensor& b);         ///< in place divide
Tensor& operator+=(Tensor& a, const Scalar& b);         ///< in place add a scalar
Tensor& operator-=(Tensor& a, const Scalar& b);         ///< in place subtract a scalar
Tensor& operator*=(Tensor& a, const Scalar& b);         ///< in place multiply by a scalar
Tensor& operator/=(Tensor& a, const Scalar& b);         ///< in place divide by a scalar
Tensor operator==(const Tensor& a, const Tensor& b);    ///< bool: equal
Tensor operator!=(const Tensor& a, const Tensor& b);    ///< bool: not equal
Tensor operator<(const Tensor& a, const Tensor& b);     ///< bool: less
Tensor operator<=(const Tensor& a, const Tensor& b);    ///< bool: less or equal
Tensor operator>(const Tensor& a, const Tensor& b);     ///< bool: greater
Tensor operator>=(const Tensor& a, const Tensor& b);    ///< bool: greater or equal
Tensor operator==(const Tensor& a, const Scalar& b);    ///< bool: equal to scalar
Tensor operator!=(const Tensor& a, const Scalar& b);    ///< bool: not equal to scalar
Tensor operator<(const Tensor& a, const Scalar& b);     ///< bool: less than scalar
Tensor operator<=(const Tensor& a, const Scalar& b);    ///< bool: less or equal to scalar
Tensor operator>(const Tensor& a, const Scalar& b);     ///< bool: greater than scalar
Tensor operator>=(const Tensor& a, const Scalar& b);    ///< bool: greater or equal to scalar
// & | ^ ~ << >> are torch's bitwise ops (phasor/ops.hpp): logical on bool tensors, bitwise on int64 ones
Tensor operator&(const Tensor& a, const Tensor& b);     ///< bitwise and (bitwise_and)
Tensor operator|(const Tensor& a, const Tensor& b);     ///< bitwise or (bitwise_or)
Tensor operator^(const Tensor& a, const Tensor& b);     ///< bitwise xor (bitwise_xor)
Tensor operator~(const Tensor& a);                      ///< bitwise not (bitwise_not)
Tensor operator&(const Tensor& a, const Scalar& b);     ///< bitwise and with a scalar
Tensor operator|(const Tensor& a, const Scalar& b);     ///< bitwise or with a scalar
Tensor operator^(const Tensor& a, const Scalar& b);     ///< bitwise xor with a scalar
Tensor operator&(const Scalar& a, const Tensor& b);     ///< scalar bitwise and tensor
Tensor operator|(const Scalar& a, const Tensor& b);     ///< scalar bitwise or tensor
Tensor operator^(const Scalar& a, const Tensor& b);     ///< scalar bitwise xor tensor
Tensor operator<<(const Tensor& a, const Tensor& b);    ///< left shift (bitwise_left_shift)
Tensor operator>>(const Tensor& a, const Tensor& b);    ///< arithmetic right shift (bitwise_right_shift)
Tensor operator<<(const Tensor& a, const Scalar& b);    ///< left shift by a scalar
Tensor operator>>(const Tensor& a, const Scalar& b);    ///< right shift by a scalar
Tensor& operator&=(Tensor& a, const Tensor& b);         ///< in place bitwise and
Tensor& operator|=(Tensor& a, const Tensor& b);         ///< in place bitwise or
Tensor& operator^=(Tensor& a, const Tensor& b);         ///< in place bitwise xor
Tensor& operator<<=(Tensor& a, const Tensor& b);        ///< in place left shift
Tensor& operator>>=(Tensor& a, const Tensor& b);        ///< in place right shift
Tensor& operator&=(Tensor& a, const Scalar& b);         ///< in place bitwise and with a scalar
Tensor& operator|=(Tensor& a, const Scalar& b);         ///< in place bitwise or with a scalar
Tensor& operator^=(Tensor& a, const Scalar& b);         ///< in place bitwise xor with a scalar
Tensor& operator<<=(Tensor& a, const Scalar& b);        ///< in place left shift by a scalar
Tensor& operator>>=(Tensor& a, const Scalar& b);        ///< in place right shift by a scalar

/// Prints dtype, shape, device and values (summarized with "..." when large).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- typed access -------------------------------------------------------------------------
namespace detail {
template <class T>
struct dtype_of;
template <> struct dtype_of<bool> { static constexpr Dtype value = Dtype::Bool; };
template <> struct dtype_of<std::int64_t> { static constexpr Dtype value = Dtype::Int64; };
template <> struct dtype_of<float> { static constexpr Dtype value = Dtype::Float32; };
template <> struct dtype_of<double> { static constexpr Dtype value = Dtype::Float64; };
template <> struct dtype_of<std::complex<float>> { static constexpr Dtype value = Dtype::Complex64; };
template <> struct dtype_of<std::complex<double>> { static constexpr Dtype value = Dtype::Complex128; };
[[noreturn]] void throw_data_dtype_mismatch(Dtype want, Dtype have);
/// The value of s as a `bits`-bit (un)signed integer, truncated toward zero; throws "[item] value v cannot be
/// converted to int32 without overflow" when it does not fit (NaN and infinities included) and refuses a
/// nonzero imaginary part, as PyTorch's checked item<T>().
std::int64_t item_as_integer(const Scalar& s, int bits, bool is_signed);
}  // namespace detail

template <class T>
T* Tensor::data() const {
  using U = std::remove_const_t<T>;
  if (detail::dtype_of<U>::value != dtype()) detail::throw_data_dtype_mismatch(detail::dtype_of<U>::value, dtype());
  return static_cast<T*>(data_ptr());
}

template <class T>
T Tensor::item() const {
  Scalar s = item();
  if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(detail::item_as_integer(s, static_cast<int>(sizeof(T) * 8), std::is_signed_v<T>));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(s.to_double());
  } else {
    auto c = s.to_complex();
    return T(static_cast<typename T::value_type>(c.real()), static_cast<typename T::value_type>(c.imag()));
  }
}

}  // namespace phasor
