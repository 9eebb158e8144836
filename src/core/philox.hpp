// src/core/philox.hpp - Philox-4x32-10 (Salmon et al., SC'11) and the maps from its output words to
// uniform, normal and integer values: the one definition used by the CPU creation functions
// (core/random.cpp) and the CUDA kernels (cuda/random.cu), so a seed gives the same numbers on
// every device.
//
// Note [counter-based random numbers]
// A draw of n real values reserves ceil(n / 2) counters [start, start + ceil(n / 2)) from the
// generator; counter start + i fills values 2i and 2i + 1 (words 0,1 and 2,3 for doubles and integers,
// words 0 and 2 for floats, a Box-Muller pair for normals). Each value depends only on (seed, counter),
// so results are identical for any thread count or launch shape, and the CPU and GPU agree: exactly for
// uniforms and integers, to the last bits of log/sqrt/cos for normals.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/element_traits.hpp"

namespace phasor::detail {

/// Four 32-bit output words of one Philox call.
struct PhiloxBlock {
  std::uint32_t v[4];
};

/// Philox-4x32 with 10 rounds for counter `ctr` under key `seed`.
PHASOR_HOST_DEVICE inline PhiloxBlock philox(std::uint64_t seed, std::uint64_t ctr) {
  std::uint32_t c0 = static_cast<std::uint32_t>(ctr), c1 = static_cast<std::uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

/// Uniform double in [0, 1) from 53 random bits.
PHASOR_HOST_DEVICE inline double u53(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t x = (static_cast<std::uint64_t>(a) << 32 | b) >> 11;
  return static_cast<double>(x) * (1.0 / 9007199254740992.0);
}
/// Uniform float in [0, 1) from 24 random bits.
PHASOR_HOST_DEVICE inline float u24(std::uint32_t a) { return static_cast<float>(a >> 8) * (1.0f / 16777216.0f); }

/// The Box-Muller pair of one block, each scaled by `scale`: out0 = r cos(th), out1 = r sin(th).
PHASOR_HOST_DEVICE inline void normal_pair(const PhiloxBlock& b, double scale, double& out0, double& out1) {
  const double u1 = 1.0 - u53(b.v[0], b.v[1]);  // (0, 1]
  const double u2 = u53(b.v[2], b.v[3]);
  const double r = ::sqrt(-2.0 * ::log(u1)) * scale;
  const double th = 6.283185307179586476925286766559 * u2;
  out0 = r * ::cos(th);
  out1 = r * ::sin(th);
}

/// An integer in [low, low + range) from the 64 bits (a, b), by multiply-high (range >= 1).
PHASOR_HOST_DEVICE inline std::int64_t draw_below(std::uint32_t a, std::uint32_t b, std::int64_t low, std::uint64_t range) {
  const std::uint64_t x = static_cast<std::uint64_t>(a) << 32 | b;
#if defined(__CUDA_ARCH__)
  const std::uint64_t hi = __umul64hi(x, range);
#else
  const auto hi = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
#endif
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + hi);  // in [low, high): no overflow, unsigned
}

}  // namespace phasor::detail
