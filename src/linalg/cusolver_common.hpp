// src/linalg/cusolver_common.hpp - what the cuBLAS / cuSOLVER glue (cusolver_solve.cpp, cusolver_decomp.cpp) shares:
// the calls' preamble (an empty problem does nothing, the int range, the device made current, the dtype's entry),
// workspaces from the caching allocator and the batched calls' device arrays of matrix addresses. Internal; CUDA
// builds only (it needs the libraries' headers).
#pragma once
#if PHASOR_WITH_CUDA
#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "cuda/libraries.hpp"
#include "cuda/runtime.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/tensor.hpp"

namespace phasor::detail::solver {

/// Calls f(Entry<T>{}) for `dtype`'s element type T (float, double, cuComplex, cuDoubleComplex): Entry is a file's
/// per-dtype table of library entry points; other dtypes throw.
template <template <class> class Entry, class F>
void with_solver(Dtype dtype, const char* op, F&& f) {
  switch (dtype) {
    case Dtype::Float32: return f(Entry<float>{});
    case Dtype::Float64: return f(Entry<double>{});
    case Dtype::Complex64: return f(Entry<cuComplex>{});
    case Dtype::Complex128: return f(Entry<cuDoubleComplex>{});
    default: throw Error(op, std::string("no CUDA factorization for ") + dtype_name(dtype) + " tensors");
  }
}

/// Throws when a dim or the batch count exceeds the libraries' int range.
inline void check_range(const char* op, std::initializer_list<std::int64_t> sizes) {
  if (std::max(sizes) <= INT_MAX) return;
  std::string s;
  for (std::int64_t v : sizes) s += (s.empty() ? "" : ", ") + std::to_string(v);
  throw Error(op, "matrix dims or batch (" + s + ") exceed the cuBLAS / cuSOLVER index range");
}

/// The calls' shared preamble: nothing for an empty problem (a zero in `empty_if_zero`), else the range check of
/// `sizes`, `device` made current, and f(Entry<T>{}) for `dtype`'s element type T.
template <template <class> class Entry, class F>
void solver_call(const char* op, Dtype dtype, int device, std::initializer_list<std::int64_t> empty_if_zero,
                 std::initializer_list<std::int64_t> sizes, F&& f) {
  for (std::int64_t v : empty_if_zero)
    if (v <= 0) return;
  check_range(op, sizes);
  ::phasor::cuda::detail::DeviceGuard guard(device);
  with_solver<Entry>(dtype, op, std::forward<F>(f));
}

/// A matrix_pointers array as the libraries' T* const[].
template <class T>
T* const* pointers(const Tensor& array) {
  return static_cast<T* const*>(array.data_ptr());
}

/// The batched calls' device array of the addresses of `batch` matrices of `elems` elements of S each, from
/// `base` on: an int64 arange made on the device (no host-to-device copy, so a CUDA graph capture records it).
template <class S>
Tensor matrix_pointers(const void* base, std::int64_t elems, std::int64_t batch, int device) {
  const auto b = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(base));
  const std::int64_t stride = elems * static_cast<std::int64_t>(sizeof(S));
  return arange(Scalar(b), Scalar(b + batch * stride), Scalar(stride), Dtype::Int64, Device::cuda(device));
}

/// A workspace of `elems` elements of `dtype` on `device` from the caching allocator.
inline Tensor workspace(int elems, Dtype dtype, int device) {
  return empty({std::max(elems, 1)}, dtype, Device::cuda(device));
}

}  // namespace phasor::detail::solver

#endif  // PHASOR_WITH_CUDA
