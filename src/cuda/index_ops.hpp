// src/cuda/index_ops.hpp - CUDA-free glue for the core's along-dim ops (core/index_ops.cpp) and
// random creation (core/random.cpp): every build has these; a CPU-only build's throw.
#pragma once
#include <cstdint>

#include "cuda/random.hpp"
#include "phasor/tensor.hpp"

namespace phasor::cuda::detail {

/// out[..., k, ...] = x[..., index[k], ...] along dim d; index: a contiguous 1-D int64 tensor on out's device,
/// values in [-wrap, wrap) (negative ones count from the end of x's dim of size wrap).
void index_select(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index, std::int64_t wrap);
/// out[..., index[k], ...] += src[..., k, ...] along dim d (out and src of one dtype; index as index_select's,
/// wrap = out's size along d).
void index_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index, std::int64_t wrap);
/// out[p] = x[p with p[d] = index[p]] over index's shape (index in range, on x's device).
void gather(const Tensor& out, const Tensor& x, std::int64_t d, const Tensor& index);
/// out[p with p[d] = index[p]] += src[p] over index's shape (out and src of one dtype).
void scatter_add(const Tensor& out, const Tensor& src, std::int64_t d, const Tensor& index);
/// Fills the contiguous CUDA tensor t with n values of `kind` from the counters c (Note [counter-based
/// random numbers] in core/philox.hpp).
void random_fill(RandomKind kind, const Tensor& t, std::int64_t n, const Counters& c, double scale = 1,
                 std::int64_t low = 0, std::uint64_t range = 1);

}  // namespace phasor::cuda::detail
