// src/core/tensor_impl.hpp - what a Tensor handle points to: storage, layout and autograd metadata.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/tensor_list.hpp"
#include "phasor/tensor.hpp"

namespace phasor {
namespace autodiff {
class Node;
}
namespace detail {
struct OpNode;
/// A block of `bytes` from the calling thread's free list of small blocks (Note [small blocks]).
void* small_block_alloc(std::size_t bytes);
/// Returns a block from small_block_alloc(bytes) to the calling thread's free list.
void small_block_free(void* p, std::size_t bytes) noexcept;
/// Standard allocator over small_block_alloc: tensors' shared_ptr control blocks, autograd's graph nodes.
template <class T>
struct SmallBlockAllocator {
  using value_type = T;
  SmallBlockAllocator() = default;
  template <class U>
  SmallBlockAllocator(const SmallBlockAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "small blocks have operator new's alignment");
    return static_cast<T*>(small_block_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { small_block_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const SmallBlockAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const SmallBlockAllocator<U>&) const noexcept { return false; }
};
}  // namespace detail

/// A block of memory on one device; views share it. Its version counts in-place writes.
struct Storage {
  void* data = nullptr;
  std::size_t nbytes = 0;
  Device device = Device::cpu();
  BlobDeleter deleter;         // set for from_blob storage; otherwise the caching allocator owns data
  void* stream = nullptr;      // CUDA storage: the stream its block belongs to (cudaStream_t; null: legacy default)
  std::uint64_t version = 0;   // bumped by every in-place write; see Note [in-place and autograd]
  std::uint32_t history = 0;   // histories rebased over it while recording (Note [views and in-place history])
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
  /// Fresh storage of `nbytes` from the device's caching allocator.
  static std::shared_ptr<Storage> allocate(std::size_t nbytes, Device device);
};

/// Per-tensor autograd state, created lazily on first use.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<detail::OpNode> grad_fn;     // null for leaves
  std::uint32_t output_nr = 0;                  // which output of grad_fn this is
  std::weak_ptr<detail::OpNode> grad_accumulator;  // leaves: the AccumulateGrad node, shared by all uses
  std::vector<std::pair<std::size_t, GradHook>> hooks;  // leaves only (non-leaf hooks live on grad_fn)
  std::size_t next_hook_id = 1;
  // from the small-block lists: recording an op gives each output one (Note [graph node memory])
  static void* operator new(std::size_t n) { return detail::small_block_alloc(n); }
  static void operator delete(void* p, std::size_t n) noexcept { detail::small_block_free(p, n); }
};

// Note [intrusive tensor counts]
// A Tensor is one pointer to a TensorImpl that carries its own counts (detail::ImplCounts, first
// member): copying a handle is one atomic increment, and making a tensor allocates no shared_ptr
// control block. When the last Tensor handle goes, release_impl drops the impl's contents (storage,
// autograd state, view base) and recycles the memory (Note [small blocks], Note [parked tensors]).
// Autograd's back links (a leaf's AccumulateGrad, retain_grad) are WeakTensors: they hold a weak
// count, which keeps the memory, not the contents, and lock() revives the tensor only while a
// Tensor handle lives. The memory goes back when both counts reach zero.
struct TensorImpl {
  detail::ImplCounts counts;  // must stay the first member: Tensor reaches it by a cast
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;           // in elements
  std::int64_t offset = 0; // in elements
  Dtype dtype = Dtype::Float32;
  std::uint32_t history_seen = 0;  // a view: storage->history when its history was made (Note [views and in-place history])
  std::unique_ptr<AutogradMeta> autograd;
  Tensor view_base;  // set when this tensor is a view made by a view op: the root (views of views flatten)

  /// Autograd metadata, created on demand.
  AutogradMeta& meta() {
    if (!autograd) autograd = std::make_unique<AutogradMeta>();
    return *autograd;
  }
  /// Requires grad: its own flag, or a view behind its root's history whose root requires grad.
  bool requires_grad() const {
    if (autograd && autograd->requires_grad) return true;
    return __builtin_expect(view_is_behind(), 0) && view_base.impl()->requires_grad();
  }
  /// A view whose root's history was rebased since its own was made (Note [views and in-place history]).
  bool view_is_behind() const { return view_base.defined() && storage->history != history_seen; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  char* data() const {
    return static_cast<char*>(storage->data) + offset * static_cast<std::int64_t>(itemsize(dtype));
  }
};

namespace detail {
/// A handle that does not keep the tensor alive (autograd's back links: Note [intrusive tensor counts]).
class WeakTensor {
 public:
  WeakTensor() = default;
  /// A weak handle to t's tensor (none when t is undefined).
  explicit WeakTensor(const Tensor& t) noexcept : p_(t.impl()) { retain(); }
  WeakTensor(const WeakTensor& o) noexcept : p_(o.p_) { retain(); }
  WeakTensor(WeakTensor&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  WeakTensor& operator=(WeakTensor o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~WeakTensor();
  /// A Tensor handle while the tensor lives, else an undefined tensor.
  Tensor lock() const noexcept;

 private:
  void retain() noexcept {
    if (p_) p_->counts.weak.fetch_add(1, std::memory_order_relaxed);
  }
  TensorImpl* p_ = nullptr;
};
/// A fresh, default-initialized tensor with no storage (recycled when possible: Note [small blocks]).
Tensor new_impl();
/// A fresh tensor holding new storage of `nbytes` (a parked one when possible: Note [parked tensors]).
Tensor new_impl_with_storage(std::size_t nbytes, Device device);
/// Row-major strides for `shape`.
Shape contiguous_strides(const Shape& shape);
/// Element offsets sum_d i_d * strides[d] of every index (i_0, ...) of `sizes`, in row-major order
/// (batch or mode offsets for per-slice BLAS calls; a stride of 0 broadcasts).
std::vector<std::int64_t> element_offsets(const Shape& sizes, const Shape& strides);
/// Product of sizes.
std::int64_t shape_numel(const Shape& shape);
/// Product of sizes[0..ndim) (no Shape needed by the caller).
std::int64_t shape_numel(const std::int64_t* sizes, std::size_t ndim);
/// Throws "[op] negative size in shape (...)" when a size is negative, and "[op] shape (...) is too large"
/// when its element count, its largest contiguous stride (zero sizes counted as 1) or its size in bytes
/// for `item`-byte elements overflows int64: every tensor's element and byte offsets fit in an int64.
void check_shape(const Shape& shape, const char* op, std::size_t item = 1);
/// A new tensor with fresh (uninitialized) contiguous storage; a shape check_shape refuses throws its
/// error under the name `op`.
Tensor make_tensor(const Shape& shape, Dtype dtype, Device device = Device::cpu(), const char* op = "empty");
/// make_tensor for the shape sizes[0..ndim) (no Shape needed by the caller).
Tensor make_tensor(const std::int64_t* sizes, std::size_t ndim, Dtype dtype, Device device = Device::cpu(),
                   const char* op = "empty");
/// Marks `v` as a view of `x` (its root: x's root, or x), as of the storage's current history (Note [views and
/// in-place history]).
inline void set_view_base(const Tensor& v, const Tensor& x) {
  v.impl()->view_base = x.impl()->view_base.defined() ? x.impl()->view_base : x;
  v.impl()->history_seen = v.impl()->storage->history;
}
/// A tensor sharing `base`'s storage with the given layout (no autograd metadata).
Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, std::int64_t offset,
                 std::optional<Dtype> dtype = std::nullopt);
/// Wraps dim `d` into [0, ndim); throws "[op] dim d out of range for a tensor of n dims".
std::int64_t wrap_dim(std::int64_t d, std::int64_t ndim, const char* op);
/// Wraps and checks a list of dims (no repeats); empty means all dims when `empty_is_all`.
std::vector<std::int64_t> wrap_dims(const Shape& dims, std::int64_t ndim, const char* op, bool empty_is_all = true);
/// "(2, 3, 4)".
std::string shape_str(const Shape& s);
/// shape_str of sizes[0..ndim).
std::string shape_str(const std::int64_t* sizes, std::size_t ndim);
/// Marks an in-place write to t's storage.
inline void bump_version(const Tensor& t) { ++t.impl()->storage->version; }
/// Throws "[op] expected a CPU tensor" style errors for devices without a kernel.
void check_cpu(const Tensor& t, const char* op);
/// Throws when tensors live on different devices.
void check_same_device(TensorList ts, const char* op);
/// check_same_device for two tensors (no list built: it sits on every binary op's path).
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
/// Throws phasor::Error(op, "not supported for complex tensors (got <dtype>)") for a complex x.
void check_not_complex(const Tensor& x, const char* op);

// Note [host scalars]
// An elementwise op (arithmetic, comparisons, pow, where) of CUDA tensors also takes 0-d tensors on the
// host CPU that need no gradient, as PyTorch does: their value travels in the kernel's arguments (Note
// [cuda elementwise]). A C++ number next to a CUDA tensor (x * 0.5, x.add_(1), where(m, x, 0)) is wrapped
// as such a host scalar, so it costs no fill kernel, no device allocation and no host-to-device copy.
// Every other mix of devices is refused, as is a host scalar that needs a gradient (its gradient would be
// computed on the GPU) and an in-place op writing into one.

/// The device an elementwise op of `ts` runs on: their common device, or the CUDA device of the others
/// when the rest are host scalars (Note [host scalars]); throws "[op] expected all tensors on one device".
Device elementwise_device(TensorList ts, const char* op);
/// elementwise_device for two tensors (no list built: it sits on every binary op's path).
Device elementwise_device(const Tensor& a, const Tensor& b, const char* op);
}  // namespace detail
}  // namespace phasor
