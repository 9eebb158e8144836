// phasor/linalg.hpp - matrix products and einsum (OpenBLAS underneath on the CPU).
#pragma once
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor {

/// Matrix product with numpy semantics: 1-D operands are promoted, batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
/// (n, k) x (k, m) matrix product.
Tensor mm(const Tensor& a, const Tensor& b);
/// (b, n, k) x (b, k, m) batched product.
Tensor bmm(const Tensor& a, const Tensor& b);
/// Inner product of two 1-D tensors (no conjugation).
Tensor dot(const Tensor& a, const Tensor& b);
/// Inner product conj(a) . b of two 1-D tensors.
Tensor vdot(const Tensor& a, const Tensor& b);
/// Outer product of two 1-D tensors.
Tensor outer(const Tensor& a, const Tensor& b);
/// Einstein summation, e.g. einsum("bix,iox->box", {x, w}); supports "..." and implicit output.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace phasor
