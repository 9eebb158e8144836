// tests/test_util.hpp - small helpers shared by the test files.
#pragma once
#include <phasor/phasor.hpp>

#include <cstdint>
#include <vector>

namespace phasor::test {

/// Values of a tensor as float64, row-major.
inline std::vector<double> vals(const Tensor& t) { return to_vector<double>(t); }
/// Values of a tensor as int64, row-major.
inline std::vector<std::int64_t> ivals(const Tensor& t) { return to_vector<std::int64_t>(t); }
/// 0, 1, 2, ... laid out in `shape`, as `dt`.
inline Tensor seq(const Shape& shape, Dtype dt = float64) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return arange(0, n).reshape(shape).to(dt);
}
/// A float64 standard-normal leaf that requires grad.
inline Tensor leaf64(const Shape& s) { return randn(s, float64).requires_grad_(); }
/// A 1-D float64 tensor.
inline Tensor vec(const std::vector<double>& v) { return from_vector(v); }

}  // namespace phasor::test
