// src/cuda/sort.cu - the positions that sort contiguous lines (sort, argsort, topk; see index.hpp): a
// bitonic network over (key, position) pairs per line, padded to a power of two; and searchsorted's binary
// search. Ties are broken by position, so the network's order is the CPU's stable sort (Note [sort order] in
// core/sort.cpp).
//
// Note [bitonic tiles]
// A step whose pairs lie within aligned tiles of kTile elements (distance < kTile) needs no other tile, so
// runs of them go to shared memory in one launch: every block size up to kTile at once, then for each larger
// size its far steps (distance >= kTile) one global launch each and its near ones in one tile launch. A line
// of 2^20 takes 12 tile launches and 66 global ones instead of 210 global ones, and its near steps read and
// write global memory once per size rather than once per step. Lines shorter than kTile run every step globally (over all lines at once).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/sort_rules.hpp"
#include "cuda/device_types.cuh"
#include "cuda/index.hpp"
#include "cuda/launch.cuh"

namespace phasor::cuda {
namespace {

using ::phasor::detail::key_before;
using ::phasor::detail::sorted_position;

/// True when (key a, position i) goes before (key b, position j): padding (positions >= n) last, then
/// Note [sort order] on the keys, then the positions.
template <class T>
__device__ __forceinline__ bool before(T a, std::int64_t i, T b, std::int64_t j, std::int64_t n, bool descending) {
  if (i >= n || j >= n) return i < j;  // a real element before padding; paddings by position
  if (key_before(a, b, descending)) return true;
  return !key_before(b, a, descending) && i < j;
}

/// keys, pos = line elements and their positions, padded to p per line.
template <class T>
__global__ void sort_init_kernel(const T* x, T* keys, std::int64_t* pos, std::int64_t lines, std::int64_t n,
                                 std::int64_t p) {
  for (std::int64_t t = grid_start(); t < lines * p; t += grid_step()) {
    const std::int64_t r = t / p, k = t % p;
    keys[t] = k < n ? x[r * n + k] : T();
    pos[t] = k;
  }
}

/// One compare-exchange of the network: the pairs (k[a], s[a]) and (k[b], s[b]) put in order, ascending when
/// `up` (Note [sort order], positions breaking ties; padding last).
template <class T>
__device__ __forceinline__ void order_pair(T* k, std::int64_t* s, std::int64_t a, std::int64_t b, bool up,
                                           std::int64_t n, bool descending) {
  const bool swap = up ? before(k[b], s[b], k[a], s[a], n, descending) : before(k[a], s[a], k[b], s[b], n, descending);
  if (swap) {
    const T tk = k[a];
    k[a] = k[b];
    k[b] = tk;
    const std::int64_t ts = s[a];
    s[a] = s[b];
    s[b] = ts;
  }
}

/// One step (block size `size`, partner distance `dist`) of the bitonic network on every line: each thread
/// orders one pair, ascending where its block of `size` is even-numbered, descending where odd.
template <class T>
__global__ void bitonic_step_kernel(T* keys, std::int64_t* pos, std::int64_t lines, std::int64_t n, std::int64_t p,
                                    std::int64_t size, std::int64_t dist, bool descending) {
  const std::int64_t half = p / 2;
  for (std::int64_t t = grid_start(); t < lines * half; t += grid_step()) {
    const std::int64_t r = t / half, q = t % half;
    const std::int64_t a = (q / dist) * 2 * dist + q % dist, b = a + dist;
    T* k = keys + r * p;
    std::int64_t* s = pos + r * p;
    order_pair(k, s, a, b, (a & size) == 0, n, descending);
  }
}

/// Elements a block sorts in shared memory: two per thread.
constexpr std::int64_t kTile = 2 * kThreads;

/// The steps of the bitonic network whose pairs lie within tiles of kTile elements, run in shared memory:
/// for each block size from size_lo to size_hi (powers of two), the distances min(size, kTile) / 2 down to 1.
/// One block per tile (grid-stride over the lines' tiles; p >= kTile); each thread orders one pair a step.
template <class T>
__global__ void bitonic_tile_kernel(T* keys, std::int64_t* pos, std::int64_t lines, std::int64_t n, std::int64_t p,
                                    std::int64_t size_lo, std::int64_t size_hi, bool descending) {
  __shared__ T sk[kTile];
  __shared__ std::int64_t sp[kTile];
  const std::int64_t per_line = p / kTile;
  const int q = static_cast<int>(threadIdx.x);
  for (std::int64_t tile = blockIdx.x; tile < lines * per_line; tile += gridDim.x) {
    const std::int64_t base = (tile % per_line) * kTile;  // the tile's first position in its line
    T* k = keys + (tile / per_line) * p + base;
    std::int64_t* s = pos + (tile / per_line) * p + base;
    for (int i = q; i < kTile; i += kThreads) sk[i] = k[i], sp[i] = s[i];
    __syncthreads();
    for (std::int64_t size = size_lo; size <= size_hi; size *= 2)
      for (std::int64_t dist = (size < kTile ? size : kTile) / 2; dist > 0; dist /= 2) {
        const std::int64_t a = (q / dist) * 2 * dist + q % dist, b = a + dist;
        order_pair(sk, sp, a, b, ((base + a) & size) == 0, n, descending);  // a's block of `size` in the line
        __syncthreads();
      }
    for (int i = q; i < kTile; i += kThreads) k[i] = sk[i], s[i] = sp[i];
    __syncthreads();  // before the next tile overwrites the shared arrays
  }
}

/// out = the first n positions of each sorted line.
__global__ void sort_out_kernel(const std::int64_t* pos, std::int64_t* out, std::int64_t lines, std::int64_t n,
                                std::int64_t p) {
  for (std::int64_t t = grid_start(); t < lines * n; t += grid_step()) out[t] = pos[(t / n) * p + t % n];
}

/// out[t] = where value t goes in its line (t / k) of m sorted elements (sorted_position).
template <class T>
__global__ void search_sorted_kernel(const T* seq, const T* values, std::int64_t* out, std::int64_t count,
                                     std::int64_t m, std::int64_t k, bool right) {
  for (std::int64_t t = grid_start(); t < count; t += grid_step())
    out[t] = sorted_position(seq + (t / k) * m, m, 1, values[t], right);
}

}  // namespace

bool search_sorted(Dtype dt, const void* seq, const void* values, std::int64_t* out, std::int64_t count,
                   std::int64_t m, std::int64_t k, bool right, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return with_type<kBool | kInt | kReal>(dt, [&](auto tag) {
    using T = decltype(tag);
    launch_kernel(search_sorted_kernel<T>, blocks_for(count), kThreads, s, static_cast<const T*>(seq),
                  static_cast<const T*>(values), out, count, m, k, right);
    check_launch("searchsorted");
  });
}

bool sort_lines(Dtype dt, const void* x, void* keys, std::int64_t* pos, std::int64_t* out, std::int64_t lines,
                std::int64_t n, std::int64_t p, bool descending, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return with_type<kBool | kInt | kReal>(dt, [&](auto tag) {
    using T = decltype(tag);
    T* k = static_cast<T*>(keys);
    launch_kernel(sort_init_kernel<T>, blocks_for(lines * p), kThreads, s, static_cast<const T*>(x), k, pos, lines, n, p);
    const auto global_step = [&](std::int64_t size, std::int64_t dist) {
      launch_kernel(bitonic_step_kernel<T>, blocks_for(lines * p / 2), kThreads, s, k, pos, lines, n, p, size, dist,
                    descending);
    };
    if (p < kTile) {  // short lines: every step over all lines at once
      for (std::int64_t size = 2; size <= p; size *= 2)
        for (std::int64_t dist = size / 2; dist > 0; dist /= 2) global_step(size, dist);
    } else {  // Note [bitonic tiles]
      const unsigned tiles = static_cast<unsigned>(std::min<std::int64_t>(lines * (p / kTile), 65535));
      launch_kernel(bitonic_tile_kernel<T>, tiles, kThreads, s, k, pos, lines, n, p, std::int64_t{2}, kTile, descending);
      for (std::int64_t size = 2 * kTile; size <= p; size *= 2) {
        for (std::int64_t dist = size / 2; dist >= kTile; dist /= 2) global_step(size, dist);
        launch_kernel(bitonic_tile_kernel<T>, tiles, kThreads, s, k, pos, lines, n, p, size, size, descending);
      }
    }
    launch_kernel(sort_out_kernel, blocks_for(lines * n), kThreads, s, static_cast<const std::int64_t*>(pos), out,
                  lines, n, p);
    check_launch("sort");
  });
}

}  // namespace phasor::cuda
