// tests/test_util.hpp - small helpers shared by the test files.
#pragma once
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace phasor::test {

using doctest::Contains;
using V = std::vector<Tensor>;        ///< tensors: an op's inputs, as gradcheck passes them
using I = std::vector<std::int64_t>;  ///< int64 values
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

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

/// The lines of x along dim d (moved last; a 0-d x is one line of one), as float64 rows.
inline std::vector<std::vector<double>> lines_of(const Tensor& x, std::int64_t d) {
  const Tensor l = x.to(float64).movedim(d, -1).contiguous();
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(d), count = n == 0 ? 0 : x.numel() / n;
  const auto v = vals(l);
  std::vector<std::vector<double>> out;
  for (std::int64_t r = 0; r < count; ++r) out.emplace_back(v.begin() + r * n, v.begin() + (r + 1) * n);
  return out;
}

/// Rounded normals times `scale` (many ties) for the ordering ops' tests, as dt: floating ones with NaN at
/// rate `nan_rate` and -0 mixed with +0; bool: the positive ones.
inline Tensor tie_sample(const Shape& shape, Dtype dt, double scale, double nan_rate) {
  Tensor x = (randn(shape) * scale).round();
  if (dt == Dtype::Float64 || dt == Dtype::Float32) {
    x = where(rand(shape) < nan_rate, full({}, std::numeric_limits<double>::quiet_NaN()), x);
    x = where(x == 0.0, where(rand(shape) < 0.5, full({}, -0.0), x), x);
  }
  return dt == Dtype::Bool ? x > 0.0 : x.to(dt);
}

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
