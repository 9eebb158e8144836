// tests/special_test_util.hpp - what the special-function tests (tests/test_special*.cpp) share: an op's values
// on grids of points against a long double reference (check_accuracy), the grids, float64 leaves.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace special_test {

using namespace phasor;
using LD = long double;
constexpr LD kPiL = 3.141592653589793238462643383279502884L;     ///< pi in long double
constexpr LD kEulerL = 0.577215664901532860606512090082402431L;  ///< Euler's gamma in long double

/// Values of f (a phasor op) at xs, as float64 and float32 inputs, against ref: the largest relative error (absolute
/// below `floor` in magnitude; for float32 also below its smallest normal number) must stay within tol64 / tol32;
/// a value beyond the dtype's range must be its infinity. Reports the worst point.
inline void check_accuracy(const std::string& name, const std::function<Tensor(const Tensor&)>& f, const std::vector<double>& xs,
                    const std::function<long double(long double)>& ref, double tol64, double tol32, double floor = 0) {
  CAPTURE(name);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    const Tensor in = from_vector(xs).to(dt);
    const Tensor out = f(in);
    CHECK(out.dtype() == dt);
    const auto got = phasor::test::vals(out.to(float64)), used = phasor::test::vals(in.to(float64));
    const double fl = dt == float32 ? std::max(floor, 1e-37) : std::max(floor, 1e-300);
    const double top = dt == float32 ? 3.4028234663852886e38 : std::numeric_limits<double>::max();
    double worst = 0, at = 0, g = 0, w = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const long double want = ref(static_cast<long double>(used[i]));
      if (got[i] == static_cast<double>(want) || (std::isinf(got[i]) && std::fabs(want) > top && (got[i] > 0) == (want > 0)))
        continue;
      if (std::isinf(static_cast<double>(want)) || std::isnan(static_cast<double>(want))) {
        const bool same = std::isnan(got[i]) ? std::isnan(static_cast<double>(want)) : got[i] == static_cast<double>(want);
        if (!same) worst = phasor::test::kInf, at = used[i], g = got[i], w = static_cast<double>(want);
        continue;
      }
      const double wd = static_cast<double>(want);
      const double e = std::fabs(static_cast<double>(got[i] - want)) / std::max(std::fabs(wd), fl);
      if (!(e <= worst)) worst = e, at = used[i], g = got[i], w = wd;
    }
    INFO("worst relative error " << worst << " at x = " << at << ": got " << g << ", want " << w);
    CHECK(worst <= (dt == float64 ? tol64 : tol32));
  }
}

/// n points evenly spaced from a to b.
inline std::vector<double> grid(double a, double b, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(a + (b - a) * i / (n - 1));
  return v;
}

/// The concatenation of grids.
inline std::vector<double> grids(std::initializer_list<std::vector<double>> parts) {
  std::vector<double> v;
  for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
  return v;
}

/// A float64 tensor of values requiring grad.
inline Tensor leaf(const std::vector<double>& v) { return from_vector(v).requires_grad_(); }

}  // namespace special_test
