// src/cuda/fast_div.hpp - division by a divisor fixed for a whole launch (Note [fast index division]).
// Plain C++ (the host computes the constants; kernels and tests divide).
#pragma once
#include <cstdint>

#include "../core/element_traits.hpp"  // PHASOR_HOST_DEVICE (relative: the tests include this header too)

namespace phasor::cuda {

// Note [fast index division]
// Kernels that turn a linear index into per-dim indices (the strided elementwise kernels, gathers and
// scatters, reductions over gapped rows, im2col and col2im) divide every element's index by the same
// sizes; col2im divides by each dim's kernel size and stride for every tap too. A 64-bit
// division is a subroutine of some 70 instructions on the GPU (about 20 when nvcc's check finds both
// operands below 2^32), which puts a 3-d strided float32 op near the instructions an H200 can spend on a
// memory-bound element (about 90 for 12 bytes moved). For numerators below 2^31 the quotient is
//   n / d = (umulhi(n, m) + n) >> s,  s = ceil(log2 d),  m = floor(2^32 (2^s - d) / d) + 1
// (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994, section 4): a
// multiply-high, an add and a shift; umulhi(n, m) < n keeps the sum below 2^32. The host makes (m, s)
// once per launch. tests/test_cuda_ops.cpp checks it against `/` for every divisor up to 4096 and
// random ones up to 2^31 - 1, and runs the kernels' 64-bit paths (for larger tensors) by lowering the
// limit (set_fast_div_limit).

/// Division of numerators 0 <= n < 2^31 by a divisor 1 <= d < 2^31 fixed when made.
struct FastDiv {
  std::uint32_t m = 1;  ///< the multiplier (1 with s = 0 divides by 1)
  std::uint32_t s = 0;  ///< the shift, ceil(log2 d)

  FastDiv() = default;
  /// The constants for divisor d (1 <= d < 2^31).
  explicit FastDiv(std::int64_t d) {
    while ((std::int64_t{1} << s) < d) ++s;
    const std::uint64_t num = (std::uint64_t{1} << 32) * ((std::uint64_t{1} << s) - static_cast<std::uint64_t>(d));
    m = static_cast<std::uint32_t>(num / static_cast<std::uint64_t>(d) + 1);
  }
  /// n / d for 0 <= n < 2^31.
  PHASOR_HOST_DEVICE std::uint32_t div(std::uint32_t n) const {
    return (static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * m) >> 32) + n) >> s;
  }
};

/// A divisor that divides by FastDiv when the launch's indices fit 32 bits, else by `/` (a choice uniform
/// over the launch, so the branch costs nothing).
struct Divisor {
  std::int64_t d = 1;  ///< the divisor
  FastDiv f;           ///< its constants when `fast`
  bool fast = false;   ///< numerators below 2^31: divide by f
  Divisor() = default;
  /// Divisor d (>= 1), by FastDiv when `use_fast` (then d < 2^31 and every numerator below 2^31).
  Divisor(std::int64_t divisor, bool use_fast) : d(divisor), f(use_fast ? FastDiv(divisor) : FastDiv()), fast(use_fast) {}
  /// n / d for n >= 0.
  PHASOR_HOST_DEVICE std::int64_t div(std::int64_t n) const {
    return fast ? static_cast<std::int64_t>(f.div(static_cast<std::uint32_t>(n))) : n / d;
  }
  /// n / d into q and n % d into r, for n >= 0.
  PHASOR_HOST_DEVICE void divmod(std::int64_t n, std::int64_t& q, std::int64_t& r) const {
    q = div(n);
    r = n - q * d;
  }
};

/// Whether indices below n (and divisors up to n) take FastDiv: n < 2^31, or below the limit a test set.
bool fits_fast_div(std::int64_t n);
/// For tests of the 64-bit index paths: only n below `limit` (at most 2^31) fit from now on; returns the
/// previous limit.
std::int64_t set_fast_div_limit(std::int64_t limit);

}  // namespace phasor::cuda
