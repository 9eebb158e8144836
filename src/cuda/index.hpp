// src/cuda/index.hpp - gathers and scatters along one dim on the GPU (kernels in index.cu), the CUDA
// side of Note [along-dim kernels] in core/index_ops.cpp, and the sort of lines and the search in them (sort.cu). Plain C++, no CUDA types.
#pragma once
#include <cstdint>

#include "core/scatter_rules.hpp"
#include "cuda/elementwise.hpp"

namespace phasor::cuda {

/// Which along-dim op a kernel runs.
enum class AlongOp {
  select,      ///< out[p, k] = x[p, index[k]]
  gather,      ///< out[p, k] = x[p, index[p, k]]
  add,         ///< out[p, index[k]] (kind)= src[p, k]
  scatter_add  ///< out[p, index[p, k]] (kind)= src[p, k]
};

/// The operands of one along-dim kernel. `pos` walks every position p of the dims other than the
/// indexed one (operands: out, x or src, and for gather/scatter_add the index tensor); `step` holds
/// each operand's byte stride along the indexed dim, which k (in [0, steps)) walks.
struct AlongDim {
  Operands pos;                           ///< out, data, [index]: positions with the indexed dim dropped
  std::int64_t steps = 0;                 ///< k runs over [0, steps)
  std::int64_t step[3] = {};              ///< byte stride along the indexed dim: out, data, index
  const std::int64_t* index = nullptr;    ///< select/add: `steps` indices in [-wrap, wrap) (device memory)
  std::int64_t wrap = 0;                  ///< select/add: a negative index counts from this size
  Divisor positions;                      ///< by pos.numel, for (position, step) pairs (Note [fast index division])
  const std::uint64_t* checks = nullptr;  ///< in a capture: the graph's check words; when the first is
                                          ///< set (a check failed) picks write zeros and adds add nothing
  ::phasor::detail::ScatterKind kind = ::phasor::detail::ScatterKind::Sum;  ///< add/scatter_add: how a value lands
  unsigned* winners = nullptr;  ///< a replacement on parallel_steps: pos.numel x targets zeroed slots (Note
                               ///< [parallel replacement] in index.cu; steps < 2^32 - 1); null: the serial kernel
  std::int64_t targets = 0;     ///< out's size along the indexed dim (the slots per position)
};

/// True when a scatter over `positions` lines of `steps` steps runs one thread per (position, step) rather
/// than one per position: few positions (< 16384, too few threads otherwise) and long lines (> 64 steps).
inline bool parallel_steps(std::int64_t positions, std::int64_t steps) { return positions < 16384 && steps > 64; }

/// The most slots (positions x targets, 4 bytes each) a replacement takes for its parallel passes (512 MiB:
/// a 1-D replacement into 128M elements).
inline constexpr std::int64_t kMaxWinners = std::int64_t{1} << 27;

/// Runs `op` for elements of `dtype` (out and data share it) on `stream` (a cudaStream_t). Indices are
/// already checked to lie in range. Scatters combine as scatter_combine<kind> (core/scatter_rules.hpp) and
/// run one thread per position, walking k in order, so repeated indices never race, sums are accumulated
/// in the CPU's order and the last of repeated replacements wins, as on the CPU - except when there are few
/// positions and long lines (parallel_steps), e.g. a 1-D index_add: then one thread per (position, step)
/// combines atomically, in no fixed order (sums with atomicAdd; products, maxima and minima of 4- and 8-byte
/// types with a compare-and-swap loop; bool and complex128 products keep the serial kernel), and replacements
/// given `winners` take two passes that keep the last value. False when there is no kernel for the dtype and
/// kind.
bool along_dim(AlongOp op, Dtype dtype, const AlongDim& a, void* stream);

/// Queues index check number `id` of a CUDA graph capture on `stream` (Note [device checks in CUDA graphs]
/// in graph.cpp): unless an earlier check failed, an element of the int64 operand `index` (data[0], any
/// layout, walked in logical order) outside [lo, hi) sets
/// words[0] = id and lowers words[1] to its position, and a second kernel stores the value there in words[2].
void check_index_range(const Operands& index, std::int64_t lo, std::int64_t hi, std::uint64_t id, std::uint64_t* words,
                       void* stream);

/// Sorts each of the `lines` contiguous lines of n elements of x (dtype dt: bool, int64 or real) in the order
/// of Note [sort order] (core/sort.cpp), writing each line's source positions to out (lines x n int64). keys
/// (lines x p elements of dt) and pos (lines x p int64) are scratch, p the power of two >= n. False for a dtype
/// without a kernel.
bool sort_lines(Dtype dt, const void* x, void* keys, std::int64_t* pos, std::int64_t* out, std::int64_t lines,
                std::int64_t n, std::int64_t p, bool descending, void* stream);

/// out[t] (t < count) = where values[t] goes in line t / k of the contiguous sorted lines of m elements seq
/// (dtype dt, like values): sorted_position in core/sort_rules.hpp. False for a dtype without a kernel.
bool search_sorted(Dtype dt, const void* seq, const void* values, std::int64_t* out, std::int64_t count,
                   std::int64_t m, std::int64_t k, bool right, void* stream);

}  // namespace phasor::cuda
