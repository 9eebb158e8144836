// src/cuda/index.cu - along-dim gather and scatter kernels (index_select, gather, index_add,
// scatter_add) for CUDA tensors; see index.hpp.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/device_types.cuh"
#include "cuda/index.hpp"
#include "cuda/launch.cuh"

namespace phasor::cuda {
namespace {

/// The index of step k at position offsets off.
template <bool PerPosition>
__device__ __forceinline__ std::int64_t index_at(const AlongDim& a, const std::int64_t (&off)[3], std::int64_t k) {
  if constexpr (PerPosition) {
    return *reinterpret_cast<const std::int64_t*>(a.pos.data[2] + off[2] + k * a.step[2]);
  } else {
    const std::int64_t j = a.index[k];
    return j < 0 ? j + a.wrap : j;
  }
}

/// True when a device check (of the CUDA graph replay running this kernel, or a deferred one) has failed
/// (Note [device checks in CUDA graphs], Note [deferred device checks]): the kernel must not use its indices.
__device__ __forceinline__ bool check_failed(const AlongDim& a) { return a.checks && a.checks[0] != 0; }

/// f(out_at_k, data_at_k, out_at_j, data_at_j, p, k, j) for every (position p, step k) with j its index (0
/// when `ignore_index`), one thread per pair, consecutive threads on consecutive positions (the byte addresses
/// of out and data at steps k and j of p's line).
template <bool PerPosition, class F>
__device__ __forceinline__ void each_step(const AlongDim& a, bool ignore_index, F f) {
  const std::int64_t P = a.pos.numel, total = P * a.steps;
  for (std::int64_t t = grid_start(); t < total; t += grid_step()) {
    std::int64_t k, p;
    a.positions.divmod(t, k, p);
    std::int64_t off[3];
    operand_offsets<2>(a.pos, p, off);
    const std::int64_t j = ignore_index ? 0 : index_at<PerPosition>(a, off, k);
    char* out = a.pos.data[0] + off[0];
    const char* data = a.pos.data[1] + off[1];
    f(out + k * a.step[0], data + k * a.step[1], out + j * a.step[0], data + j * a.step[1], p, k, j);
  }
}

/// select / gather: out[p, k] = x[p, j] (zeros after a failed check).
template <class T, bool PerPosition>
__global__ void pick_kernel(AlongDim a) {
  const bool failed = check_failed(a);
  each_step<PerPosition>(a, failed, [failed](char* out_k, const char*, char*, const char* x_j, auto...) {
    *reinterpret_cast<T*>(out_k) = failed ? T{} : *reinterpret_cast<const T*>(x_j);
  });
}

using ::phasor::detail::ScatterKind;

/// index_add / scatter_add (any kind): one thread per position, k in order.
template <class T, bool PerPosition, ScatterKind K>
__global__ void add_kernel(AlongDim a) {
  if (check_failed(a)) return;
  for (std::int64_t p = grid_start(); p < a.pos.numel; p += grid_step()) {
    std::int64_t off[3];
    operand_offsets<2>(a.pos, p, off);
    for (std::int64_t k = 0; k < a.steps; ++k) {
      const std::int64_t j = index_at<PerPosition>(a, off, k);
      T& o = *reinterpret_cast<T*>(a.pos.data[0] + off[0] + j * a.step[0]);
      ::phasor::detail::scatter_combine<K>(o, *reinterpret_cast<const T*>(a.pos.data[1] + off[1] + k * a.step[1]));
    }
  }
}

/// The unsigned word a compare-and-swap on a T works with (none: 0).
template <class T>
using CasWord = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;

/// True when kind K of T combines atomically: sums with atomicAdd (not bool), products, maxima and minima of
/// 4- and 8-byte types with a compare-and-swap loop; replacements never (their order decides the value).
template <class T, ScatterKind K>
constexpr bool kAtomicKind = !std::is_same_v<T, bool> && K != ScatterKind::Replace &&
                             (K == ScatterKind::Sum || sizeof(T) == 4 || sizeof(T) == 8);

/// Combines v into o atomically as scatter_combine<K> (kAtomicKind<T, K>).
template <class T, ScatterKind K>
__device__ __forceinline__ void atomic_combine(T* o, const T& v) {
  if constexpr (K == ScatterKind::Sum) {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(o), static_cast<unsigned long long>(v));
    } else if constexpr (::phasor::detail::is_complex_v<T>) {
      using R = ::phasor::detail::real_t<T>;
      atomicAdd(reinterpret_cast<R*>(o), v.real());
      atomicAdd(reinterpret_cast<R*>(o) + 1, v.imag());
    } else {
      atomicAdd(o, v);
    }
  } else {
    using W = CasWord<T>;
    W* w = reinterpret_cast<W*>(o);
    W seen = *w;
    for (;;) {
      T cur;
      memcpy(&cur, &seen, sizeof(T));
      T next = cur;
      ::phasor::detail::scatter_combine<K>(next, v);
      W want;
      memcpy(&want, &next, sizeof(T));
      if (want == seen) return;  // nothing changes (a max already larger, a NaN kept)
      const W was = atomicCAS(w, seen, want);
      if (was == seen) return;
      seen = was;
    }
  }
}

/// index_add / scatter_add with few positions and many steps: one thread per (position, step), combined
/// atomically (the order into one element is unspecified, as in PyTorch).
template <class T, bool PerPosition, ScatterKind K>
__global__ void add_atomic_kernel(AlongDim a) {
  if (check_failed(a)) return;
  each_step<PerPosition>(a, false, [](char*, const char* src_k, char* out_j, const char*, auto...) {
    atomic_combine<T, K>(reinterpret_cast<T*>(out_j), *reinterpret_cast<const T*>(src_k));
  });
}

// Note [parallel replacement]
// A replacement must leave the last value landing on an element (the serial kernel's order), so with few
// long lines it runs in two passes over (position p, step k) pairs: each pair raises its target's slot to
// k + 1 (atomicMax: the order of the raises does not matter), then the pair holding its target's slot writes.
// The slots are a zeroed scratch of positions x targets, 4 bytes each (AlongDim::winners).

/// The first pass: slot (p, j) = max(slot, k + 1).
template <bool PerPosition>
__global__ void claim_kernel(AlongDim a) {
  if (check_failed(a)) return;
  each_step<PerPosition>(a, false, [&a](char*, const char*, char*, const char*, std::int64_t p, std::int64_t k, std::int64_t j) {
    atomicMax(a.winners + p * a.targets + j, static_cast<unsigned>(k + 1));
  });
}

/// The second pass: the pair holding its target's slot writes its value.
template <class T, bool PerPosition>
__global__ void replace_winner_kernel(AlongDim a) {
  if (check_failed(a)) return;
  each_step<PerPosition>(a, false, [&a](char*, const char* src_k, char* out_j, const char*, std::int64_t p, std::int64_t k, std::int64_t j) {
    if (a.winners[p * a.targets + j] == static_cast<unsigned>(k + 1))
      *reinterpret_cast<T*>(out_j) = *reinterpret_cast<const T*>(src_k);
  });
}

/// The int64 at logical position i of the one-operand `index`.
__device__ __forceinline__ std::int64_t index_value(const Operands& index, std::int64_t i) {
  std::int64_t off[1];
  operand_offsets<0>(index, i, off);
  return *reinterpret_cast<const std::int64_t*>(index.data[0] + off[0]);
}

/// check_index_range's scan: every out-of-range element records check `id` and lowers the position word.
__global__ void range_check_kernel(Operands index, std::int64_t lo, std::int64_t hi, std::uint64_t id,
                                   unsigned long long* words) {
  if (words[0] != 0 && words[0] != id) return;  // an earlier check of this replay failed: its report stands
  for (std::int64_t i = grid_start(); i < index.numel; i += grid_step()) {
    const std::int64_t v = index_value(index, i);
    if (v < lo || v >= hi) {
      words[0] = id;  // every writer writes the same value
      atomicMin(&words[1], static_cast<unsigned long long>(i));
    }
  }
}

/// check_index_range's report: the value at the smallest offending position of a failed check `id`.
__global__ void range_value_kernel(Operands index, std::uint64_t id, unsigned long long* words) {
  if (words[0] == id) words[2] = static_cast<unsigned long long>(index_value(index, static_cast<std::int64_t>(words[1])));
}

template <class T, bool PerPosition>
void pick(const AlongDim& a, cudaStream_t s) {
  launch_kernel(pick_kernel<T, PerPosition>, blocks_for(a.pos.numel * a.steps), kThreads, s, a);
}
template <class T, bool PerPosition, ScatterKind K>
void add(const AlongDim& a, cudaStream_t s) {
  // one thread per position keeps the CPU's order (deterministic) and is fast when positions are many
  // or lines short; a few long lines (a 1-D index_add, the gradient of x[idx]) go atomic where the kind can
  if constexpr (kAtomicKind<T, K>) {
    if (parallel_steps(a.pos.numel, a.steps)) {
      launch_kernel(add_atomic_kernel<T, PerPosition, K>, blocks_for(a.pos.numel * a.steps), kThreads, s, a);
      return;
    }
  }
  if constexpr (K == ScatterKind::Replace) {
    if (a.winners) {  // Note [parallel replacement]
      launch_kernel(claim_kernel<PerPosition>, blocks_for(a.pos.numel * a.steps), kThreads, s, a);
      launch_kernel(replace_winner_kernel<T, PerPosition>, blocks_for(a.pos.numel * a.steps), kThreads, s, a);
      return;
    }
  }
  launch_kernel(add_kernel<T, PerPosition, K>, blocks_for(a.pos.numel), kThreads, s, a);
}

}  // namespace

void check_index_range(const Operands& index, std::int64_t lo, std::int64_t hi, std::uint64_t id, std::uint64_t* words,
                       void* stream_v) {
  const auto s = static_cast<cudaStream_t>(stream_v);
  auto* w = reinterpret_cast<unsigned long long*>(words);
  launch_kernel(range_check_kernel, blocks_for(index.numel), kThreads, s, index, lo, hi, id, w);
  launch_kernel(range_value_kernel, 1, 1, s, index, id, w);
  check_launch("index check");
}

bool along_dim(AlongOp op, Dtype dtype, const AlongDim& a, void* stream_v) {
  if (a.pos.numel == 0 || a.steps == 0) return true;
  const auto s = static_cast<cudaStream_t>(stream_v);
  if (op == AlongOp::select || op == AlongOp::gather) {
    const bool per_pos = op == AlongOp::gather;
    // a copy moves bytes: one kernel per element size
    switch (itemsize(dtype)) {
      case 1: per_pos ? pick<std::uint8_t, true>(a, s) : pick<std::uint8_t, false>(a, s); break;
      case 4: per_pos ? pick<std::uint32_t, true>(a, s) : pick<std::uint32_t, false>(a, s); break;
      case 8: per_pos ? pick<std::uint64_t, true>(a, s) : pick<std::uint64_t, false>(a, s); break;
      case 16: per_pos ? pick<Bytes16, true>(a, s) : pick<Bytes16, false>(a, s); break;
      default: return false;
    }
    check_launch(per_pos ? "gather" : "index_select");
    return true;
  }
  const bool per_pos = op == AlongOp::scatter_add;
  bool ran = false;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    ::phasor::detail::visit_scatter(a.kind, [&](auto kc) {
      constexpr ScatterKind K = decltype(kc)::value;
      if constexpr (::phasor::detail::scatter_supports_v<K, T>) {
        per_pos ? add<T, true, K>(a, s) : add<T, false, K>(a, s);
        ran = true;
      }
    });
  };
  with_type<kAll>(dtype, run);
  if (!ran) return false;
  check_launch(per_pos ? "scatter_add" : "index_add");
  return true;
}

}  // namespace phasor::cuda
