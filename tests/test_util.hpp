// tests/test_util.hpp - small helpers shared by the test files.
#pragma once
#include <doctest/doctest.h>
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

/// Checks every value of `t` against `ref` with relative tolerance `tol` (absolute near zero), reporting
/// the number of mismatches and the first one.
inline void check_close(const Tensor& t, const std::vector<double>& ref, double tol = 1e-12) {
  auto v = vals(t);
  REQUIRE(v.size() == ref.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(v[i] == doctest::Approx(ref[i]).epsilon(tol).scale(1.0)) && bad++ == 0) first = i;
  INFO("mismatches: " << bad << ", first at " << first << ": " << (bad ? v[first] : 0.0) << " vs "
                      << (bad ? ref[first] : 0.0));
  CHECK(bad == 0);
}

}  // namespace phasor::test
