// src/cuda/sort.cu - the positions that sort contiguous lines (sort, argsort, topk; see index.hpp): a
// bitonic network over (key, position) pairs per line, padded to a power of two, one launch per step.
// Ties are broken by position, so the network's order is the CPU's stable sort (Note [sort order] in
// core/sort.cpp).
#include <cuda_runtime_api.h>

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
    const bool up = (a & size) == 0;
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
    for (std::int64_t size = 2; size <= p; size *= 2)
      for (std::int64_t dist = size / 2; dist > 0; dist /= 2)
        launch_kernel(bitonic_step_kernel<T>, blocks_for(lines * p / 2), kThreads, s, k, pos, lines, n, p, size, dist,
                      descending);
    launch_kernel(sort_out_kernel, blocks_for(lines * n), kThreads, s, static_cast<const std::int64_t*>(pos), out,
                  lines, n, p);
    check_launch("sort");
  });
}

}  // namespace phasor::cuda
