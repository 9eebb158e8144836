// src/core/tensor_list.hpp - TensorList: the tensor arguments of an op, passed without a heap allocation.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::detail {

// Note [tensor lists]
// Every op hands its tensor arguments to apply_op (and composite, apply_nondiff, apply_inplace) as a
// braced list: apply_op("mul", {a, b}, ...). When that parameter was a std::vector, each op call
// allocated and freed the vector's buffer: about 210 of the ~3,350 host instructions phasor spent on a
// 1-element `a + b` on a GPU, and 220 of the 1,450 of one on the CPU (bench/README.md, at
// BM_host_overhead_add). A TensorList views the braced list's array (or a caller's vector) instead, and
// owns nothing. The array of a braced list lives until the end of the full expression that contains the
// call, so a TensorList is a function parameter only, never a variable or member that outlives the call
// that received it. Observers (Note [dispatch cost]) still get a std::vector: on the observed path only,
// the op copies its list into one, once, for both notify_begin and notify_end.

/// A view of an op's tensor arguments: a braced list or a vector (Note [tensor lists]). Parameters only.
class TensorList {
 public:
  // GCC's -Winit-list-lifetime warns that keeping l.begin() does not extend the array's life: by design
  // (the array outlives the call that takes the TensorList, which is all a parameter needs).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  /// Views a braced list's tensors (valid until the end of the caller's full expression).
  TensorList(std::initializer_list<Tensor> l) noexcept : data_(l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  /// Views a vector's tensors.
  TensorList(const std::vector<Tensor>& v) noexcept : data_(v.data()), size_(v.size()) {}

  /// The first tensor.
  const Tensor* begin() const noexcept { return data_; }
  /// One past the last tensor.
  const Tensor* end() const noexcept { return data_ + size_; }
  /// Number of tensors.
  std::size_t size() const noexcept { return size_; }
  /// Tensor i (unchecked, like std::vector's).
  const Tensor& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// A copy as a vector, for what must keep the tensors or takes a std::vector.
  std::vector<Tensor> vec() const { return std::vector<Tensor>(begin(), end()); }

 private:
  const Tensor* data_;
  std::size_t size_;
};

}  // namespace phasor::detail
