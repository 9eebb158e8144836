// src/core/reduce.hpp - the one reduction engine: moves reduced dims last, then reduces rows.
#pragma once
#include "core/elementwise.hpp"

namespace phasor::detail {

/// Layout of a reduction: x viewed as (outer, inner) rows with `inner` reduced elements each.
struct ReducePlan {
  std::vector<std::int64_t> dims;  // reduced dims (wrapped, sorted)
  Shape out_shape;                 // result shape (keepdim honoured)
  Shape keep_shape;                // result shape with reduced dims kept as 1
  Tensor rows;                     // contiguous (outer, inner) tensor
  std::int64_t outer = 1, inner = 1;
};

/// Plans a reduction of x over dims (empty = all); `rows` holds x's data with reduced dims last.
ReducePlan plan_reduce(const Tensor& x, const Shape& dims, bool keepdim, const char* op);

/// Runs f(const T* row, n) -> R for every row in parallel, writing into `out` (contiguous, R typed).
template <class T, class R, class F>
void reduce_rows(const ReducePlan& p, R* out, F f) {
  const T* base = static_cast<const T*>(p.rows.data_ptr());
  const std::int64_t outer = p.outer, inner = p.inner;
  const int threads = outer * inner >= 2 * kParallelGrain && outer > 1 ? std::min<int>(get_num_threads(), static_cast<int>(outer)) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t o = 0; o < outer; ++o) out[o] = f(base + o * inner, inner);
}

/// Accurate, vectorizable sum of n contiguous values (blocked pairwise with 8 lanes).
template <class T, class Acc = T>
Acc sum_contiguous(const T* p, std::int64_t n) {
  constexpr std::int64_t kBlock = 4096;
  if (n > kBlock) {
    const std::int64_t h = (n / 2 + 7) / 8 * 8;
    return sum_contiguous<T, Acc>(p, h) + sum_contiguous<T, Acc>(p + h, n - h);
  }
  Acc a[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) a[k] += static_cast<Acc>(p[i + k]);
  Acc s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  for (; i < n; ++i) s += static_cast<Acc>(p[i]);
  return s;
}

/// Parallel sum of one long contiguous row (used when there is a single output).
template <class T, class Acc = T>
Acc sum_parallel(const T* p, std::int64_t n) {
  const int threads = n >= 2 * kParallelGrain ? get_num_threads() : 1;
  if (threads <= 1) return sum_contiguous<T, Acc>(p, n);
  std::vector<Acc> part(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t chunk = (n + nt - 1) / nt;
    const std::int64_t b = std::min<std::int64_t>(n, t * chunk), e = std::min<std::int64_t>(n, b + chunk);
    part[static_cast<std::size_t>(t)] = b < e ? sum_contiguous<T, Acc>(p + b, e - b) : Acc{};
  }
  Acc s{};
  for (auto v : part) s += v;
  return s;
}

}  // namespace phasor::detail
