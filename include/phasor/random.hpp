// phasor/random.hpp - seedable random number generation.
#pragma once
#include <cstdint>
#include <memory>

#include "phasor/tensor.hpp"

namespace phasor {

/// A seedable, counter-based random stream (Philox-4x32-10); same seed, same numbers.
class Generator {
 public:
  /// A generator seeded with `seed`.
  explicit Generator(std::uint64_t seed = 67280421310721ULL);
  /// Restarts the stream from `seed`.
  void manual_seed(std::uint64_t seed);
  /// The seed the stream started from.
  std::uint64_t seed() const { return seed_; }
  /// Position in the stream (128-bit blocks consumed since the seed).
  std::uint64_t offset() const { return offset_; }
  /// Moves to a position in the stream (with offset(), saves and restores the state).
  void set_offset(std::uint64_t offset) { offset_ = offset; }
  /// Reserves `n` 128-bit blocks of the stream and returns the counter of the first.
  std::uint64_t advance(std::uint64_t n) {
    std::uint64_t c = offset_;
    offset_ += n;
    return c;
  }

 private:
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
};

/// The process-wide default generator.
Generator& default_generator();
/// Seeds the default generator.
void manual_seed(std::uint64_t seed);

/// Uniform [0, 1) (complex: real and imaginary parts each uniform).
Tensor rand(const Shape& shape, Dtype dtype = default_dtype(), Device device = Device::cpu(), Generator* gen = nullptr);
/// Standard normal (complex: E|z|^2 = 1, parts with variance 1/2, as PyTorch).
Tensor randn(const Shape& shape, Dtype dtype = default_dtype(), Device device = Device::cpu(), Generator* gen = nullptr);
/// Integers uniform in [low, high).
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype = int64,
               Device device = Device::cpu(), Generator* gen = nullptr);
/// A random permutation of 0..n-1.
Tensor randperm(std::int64_t n, Dtype dtype = int64, Device device = Device::cpu(), Generator* gen = nullptr);
/// Uniform [0, 1) shaped like `t`.
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
/// Standard normal shaped like `t`.
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);

}  // namespace phasor
