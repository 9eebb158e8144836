// Tests of the real binary functions: the division family (fmod, remainder, floor_divide, div's rounding
// modes, operator%) and hypot, copysign, logaddexp, logaddexp2, xlogy: values against long double
// references (special values and signed zeros included), int64 semantics, promotion, errors, gradcheck and
// gradgradcheck.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <phasor/phasor.hpp>
#include <random>
#include <utility>
#include <vector>

#include "binary_ref.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

using ld = long double;
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// Dividends against divisors (broadcast 9 x 8): signs, exact multiples, zeros of both signs, infinities, NaN.
const std::vector<double> kA = {7.5, -7.5, 6.0, -6.0, 0.0, -0.0, 1e300, kInf, kNaN};
const std::vector<double> kB = {2.0, -2.0, 0.1, -0.7, 3.0, 0.0, kInf, -kInf};

ld fmod_ref(ld a, ld b) { return std::fmod(a, b); }
ld remainder_ref(ld a, ld b) {
  const ld r = std::fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/// Checks out == ref elementwise for kA (as a column) against kB (as a row), signed zeros included.
void check_grid(const Tensor& out, ld (*ref)(ld, ld), double rtol) {
  const auto v = to_vector<double>(out.to(float64));
  REQUIRE(v.size() == kA.size() * kB.size());
  for (std::size_t i = 0; i < kA.size(); ++i)
    for (std::size_t j = 0; j < kB.size(); ++j) {
      const double got = v[i * kB.size() + j];
      const ld want = ref(kA[i], kB[j]);
      INFO("a = ", kA[i], ", b = ", kB[j], ", got ", got, ", want ", static_cast<double>(want));
      CHECK(close(got, want, rtol));
      if (want == 0) CHECK(std::signbit(got) == std::signbit(want));
    }
}

/// Python's a // b and a % b on int64 (wrapping INT64_MIN // -1).
std::int64_t py_floordiv(std::int64_t a, std::int64_t b) {
  if (b == -1) return a == kMin ? kMin : -a;
  const std::int64_t q = a / b;
  return a % b != 0 && ((a < 0) != (b < 0)) ? q - 1 : q;
}
std::int64_t py_mod(std::int64_t a, std::int64_t b) {
  if (b == -1) return 0;
  const std::int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/// log_base(base^a + base^b) in long double, as max + log_base(1 + base^(min - max)) (e^-710 is lost next to 1
/// even in long double).
ld lse_ref(ld a, ld b, ld base) {
  const ld m = std::max(a, b), d = std::min(a, b) - m;
  return m + std::log1p(std::pow(base, d)) / std::log(base);
}

/// v rounded to dt (float32 or float64), where a tiny reference value becomes 0 or a subnormal.
ld in_dtype(Dtype dt, ld v) { return dt == float32 ? static_cast<ld>(static_cast<float>(v)) : static_cast<ld>(static_cast<double>(v)); }

/// q b + r with int64 wrapping.
std::int64_t wrapped(std::int64_t q, std::int64_t b, std::int64_t r) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(q) * static_cast<std::uint64_t>(b) + static_cast<std::uint64_t>(r));
}

/// The sign bit of each element.
std::vector<bool> sign_of_each(const Tensor& t) {
  std::vector<bool> out;
  for (double v : to_vector<double>(t.to(float64))) out.push_back(std::signbit(v));
  return out;
}

}  // namespace

TEST_CASE("fmod and remainder: values, signs and special values against long double") {
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double tol = dt == float32 ? 1e-6 : 1e-15;
    const Tensor a = real_t(kA, {9, 1}, dt), b = real_t(kB, {1, 8}, dt);
    // the float32 grid's own values (1e300 is inf, 0.1 and -0.7 are rounded) make the reference
    auto in_dt = [dt](double v) { return dt == float32 ? static_cast<double>(static_cast<float>(v)) : v; };
    std::vector<double> a32, b32;
    for (double v : kA) a32.push_back(in_dt(v));
    for (double v : kB) b32.push_back(in_dt(v));
    const Tensor f = fmod(a, b), r = remainder(a, b);
    CHECK(f.dtype() == dt);
    CHECK(r.shape() == Shape{9, 8});
    check_binary(real_t(a32, {9, 1}), real_t(b32, {1, 8}), f, [](cld x, cld y) { return cld(fmod_ref(x.real(), y.real())); }, tol);
    check_binary(real_t(a32, {9, 1}), real_t(b32, {1, 8}), r,
                 [](cld x, cld y) { return cld(remainder_ref(x.real(), y.real())); }, tol);
    if (dt == float64) {
      check_grid(f, fmod_ref, tol);
      check_grid(r, remainder_ref, tol);
    }
  }
  // the sign conventions, exactly
  const Tensor a = real_t({5.0, -5.0, 5.0, -5.0}), b = real_t({3.0, 3.0, -3.0, -3.0});
  CHECK(to_vector<double>(fmod(a, b)) == std::vector<double>{2.0, -2.0, 2.0, -2.0});
  CHECK(to_vector<double>(remainder(a, b)) == std::vector<double>{2.0, 1.0, -1.0, -2.0});
  CHECK(to_vector<double>(a % b) == std::vector<double>{2.0, 1.0, -1.0, -2.0});
  CHECK(to_vector<double>(a.fmod(3.0)) == std::vector<double>{2.0, -2.0, 2.0, -2.0});
  CHECK(to_vector<double>(a.remainder(-3.0)) == std::vector<double>{-1.0, -2.0, -1.0, -2.0});
  CHECK(to_vector<double>(a % 3) == std::vector<double>{2.0, 1.0, 2.0, 1.0});
  CHECK(to_vector<double>(remainder(Scalar(7.0), b)) == std::vector<double>{1.0, 1.0, -2.0, -2.0});
  // phase wrapping, the everyday use: angles into [0, 2 pi)
  const double two_pi = 6.283185307179586;
  const auto w = to_vector<double>(real_t({-0.5, 7.0, 12.0, -13.0}).remainder(two_pi));
  for (double v : w) CHECK((v >= 0 && v < two_pi));
  CHECK(w[0] == doctest::Approx(two_pi - 0.5).epsilon(1e-15));
}

TEST_CASE("fmod is C's fmod bit for bit, remainder and floor_divide exact, over random operands of every scale (Note [fast fmod])") {
  // a = m1 2^e1, b = m2 2^e2 with random signs, mantissas and exponents 60 apart at most: quotients from 2^-60
  // to 2^60 (the C library's range past 2^52), cancelling ones (a within an ulp of a multiple of b) included
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(-30, 30), coin(0, 1), kind(0, 9);
  std::vector<double> av, bv;
  for (int i = 0; i < 200000; ++i) {
    const double b = (coin(rng) ? -1 : 1) * std::ldexp(mant(rng), ex(rng));
    double a = (coin(rng) ? -1 : 1) * std::ldexp(mant(rng), ex(rng));
    if (kind(rng) == 0) a = std::nextafter(std::round(a / b) * b, kind(rng) < 5 ? kInf : -kInf);  // near a multiple
    av.push_back(a);
    bv.push_back(b);
  }
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    const Tensor a = real_t(av, dt), b = real_t(bv, dt);
    const auto got = to_vector<double>(fmod(a, b).to(float64)), rem = to_vector<double>(remainder(a, b).to(float64));
    const auto fdiv = to_vector<double>(floor_divide(a, b).to(float64));
    const auto ad = to_vector<double>(a.to(float64)), bd = to_vector<double>(b.to(float64));
    auto round_dt = [dt](ld v) { return dt == float32 ? static_cast<double>(static_cast<float>(v)) : static_cast<double>(v); };
    int bad = 0, bad_rem = 0, bad_div = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < av.size(); ++i) {
      const double want = dt == float32 ? static_cast<double>(std::fmod(static_cast<float>(ad[i]), static_cast<float>(bd[i])))
                                        : std::fmod(ad[i], bd[i]);
      if (std::memcmp(&got[i], &want, sizeof want) != 0 && bad++ == 0) first = i;
      // remainder: C's exact fmod, moved into b's sign by one rounded sum in dt (a zero keeps a's sign)
      const double m = want;
      const double moved = dt == float32 ? static_cast<double>(static_cast<float>(m) + static_cast<float>(bd[i])) : m + bd[i];
      const double want_rem = m != 0 && ((m < 0) != (bd[i] < 0)) ? moved : want;
      if (std::memcmp(&rem[i], &want_rem, sizeof want_rem) != 0) ++bad_rem;
      // floor_divide: the floor of the long double quotient, where that decides it and dt holds it exactly
      const ld qd = static_cast<ld>(ad[i]) / static_cast<ld>(bd[i]);
      if (std::fabs(qd) < (dt == float32 ? 0x1p24L : 0x1p40L) && fdiv[i] != static_cast<double>(std::floor(qd))) ++bad_div;
    }
    INFO("mismatches: ", bad, ", first: fmod(", ad[first], ", ", bd[first], ") = ", got[first]);
    CHECK(bad == 0);
    CHECK(bad_rem == 0);
    CHECK(bad_div == 0);
  }
}

TEST_CASE("fmod, remainder, floor_divide and div(trunc) on int64: exact, wrapping, zero divisors throw") {
  const std::vector<std::int64_t> av = {7, -7, 7, -7, 0, kMin, kMin, kMax, 6, -6};
  const std::vector<std::int64_t> bv = {3, 3, -3, -3, 5, -1, 2, -1, 3, -4};
  const Tensor a = int_t(av), b = int_t(bv);
  const auto f = to_vector<std::int64_t>(fmod(a, b)), r = to_vector<std::int64_t>(remainder(a, b));
  const auto q = to_vector<std::int64_t>(floor_divide(a, b)), t = to_vector<std::int64_t>(div(a, b, "trunc"));
  CHECK(fmod(a, b).dtype() == int64);
  CHECK(floor_divide(a, b).dtype() == int64);
  CHECK(div(a, b, "trunc").dtype() == int64);
  for (std::size_t i = 0; i < av.size(); ++i) {
    CAPTURE(av[i]);
    CAPTURE(bv[i]);
    CHECK(f[i] == (bv[i] == -1 ? 0 : av[i] % bv[i]));
    CHECK(r[i] == py_mod(av[i], bv[i]));
    CHECK(q[i] == py_floordiv(av[i], bv[i]));
    CHECK(t[i] == (bv[i] == -1 ? (av[i] == kMin ? kMin : -av[i]) : av[i] / bv[i]));
    CHECK(wrapped(q[i], bv[i], r[i]) == av[i]);  // a = (a // b) b + a % b, wrapping included
  }
  // a number divisor keeps int64 (a float one makes the default float dtype); bool mixes in as int
  CHECK(to_vector<std::int64_t>(a.floor_divide(2)) == std::vector<std::int64_t>{3, -4, 3, -4, 0, kMin / 2, kMin / 2, kMax / 2, 3, -3});
  CHECK(fmod(a, 2.5).dtype() == float32);
  CHECK(to_vector<std::int64_t>(remainder(bool_t({true, false}), int_t({2, 2}))) == std::vector<std::int64_t>{1, 0});
  // zero divisors: a phasor::Error naming the op and the divisor's shape, for tensors and numbers alike
  const Tensor z = int_t({1, 0, 2}).reshape({3, 1});
  CHECK_THROWS_WITH_AS(fmod(a, z), doctest::Contains("[fmod] integer division by zero (a divisor of shape (3, 1)"), Error);
  CHECK_THROWS_WITH_AS(remainder(a, z), doctest::Contains("[remainder] integer division by zero"), Error);
  CHECK_THROWS_WITH_AS(floor_divide(a, z), doctest::Contains("[floor_divide] integer division by zero"), Error);
  CHECK_THROWS_WITH_AS(div(a, z, "trunc"), doctest::Contains("integer division by zero"), Error);
  CHECK_THROWS_WITH_AS(a % 0, doctest::Contains("[remainder] integer division by zero (a divisor of shape ()"), Error);
  CHECK_THROWS_WITH_AS(a.fmod(false), doctest::Contains("integer division by zero"), Error);
  CHECK(to_vector<std::int64_t>(a) == av);  // inputs unchanged
  // a float zero divisor is IEEE division: NaN, or +-inf for floor_divide
  CHECK(std::isnan(to_vector<double>(fmod(real_t({1.0}), real_t({0.0})))[0]));
  CHECK(to_vector<double>(floor_divide(real_t({1.0, -1.0, 0.0}), real_t({0.0, 0.0, 0.0})))[1] == -kInf);
  CHECK(std::isnan(to_vector<double>(floor_divide(real_t({0.0}), real_t({0.0})))[0]));
}

TEST_CASE("floor_divide and div's rounding modes on floating tensors") {
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor a = real_t(kA, {9, 1}, dt).narrow(0, 0, 6), b = real_t(kB, {1, 8}, dt).narrow(1, 0, 6);  // moderate
    const Tensor fa = a.to(float64), fb = b.to(float64);
    // floor of the exact quotient (the long double quotient of the dtype's values is exact enough here);
    // trunc of the quotient rounded to dt, as torch's "trunc" mode
    check_binary(fa, fb, floor_divide(a, b), [](cld x, cld y) { return cld(std::floor(x.real() / y.real())); }, 0);
    check_binary(fa, fb, div(a, b, "trunc"),
                 [dt](cld x, cld y) {
                   const ld q = dt == float32 ? static_cast<ld>(static_cast<float>(x.real()) / static_cast<float>(y.real()))
                                              : static_cast<ld>(static_cast<double>(x.real()) / static_cast<double>(y.real()));
                   return cld(std::trunc(q));
                 },
                 0);
    check_binary(fa, fb, div(a, b, ""), [](cld x, cld y) { return cld(x.real() / y.real()); }, rtol_for(dt));
    CHECK(floor_divide(a, b).dtype() == dt);
  }
  // quotients whose rounded value is an integer the exact one does not reach: 1 // 0.1 is 9 (as Python)
  CHECK(to_vector<double>(floor_divide(real_t({1.0, -1.0, 0.3}), real_t({0.1, 0.1, 0.1}))) == std::vector<double>{9.0, -10.0, 2.0});
  CHECK(to_vector<double>(div(real_t({1.0, -1.0}), 0.1, "floor")) == std::vector<double>{9.0, -10.0});
  CHECK(to_vector<double>(real_t({7.0, -7.0}).floor_divide(2.0)) == std::vector<double>{3.0, -4.0});
  // signed zero quotients take the true quotient's sign
  CHECK(sign_of_each(floor_divide(real_t({0.0, -0.0, 0.5}), real_t({1.0, 1.0, -2.0}))) == std::vector<bool>{false, true, true});
  CHECK_THROWS_WITH_AS(div(real_t({1.0}), real_t({2.0}), "round"),
                       doctest::Contains("[div] rounding_mode must be \"floor\", \"trunc\" or empty"), Error);
}

TEST_CASE("hypot and copysign: values, overflow, special values, signed zeros") {
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor a = real_t({3.0, -3.0, 0.0, 1e30, 1e-30, kInf, kNaN, -0.0}, {8, 1}, dt);
    const Tensor b = real_t({4.0, -0.0, kNaN, 1e-20}, {1, 4}, dt);
    const Tensor h = hypot(a, b), c = copysign(a, b);
    CHECK(h.dtype() == dt);
    check_binary(a.to(float64), b.to(float64), h, [](cld x, cld y) { return cld(std::hypot(x.real(), y.real())); }, rtol_for(dt));
    check_binary(a.to(float64), b.to(float64), c, [](cld x, cld y) { return cld(std::copysign(x.real(), y.real())); }, 0);
    CHECK(sign_of_each(c) == sign_of_each(b.expand({8, 4}).contiguous()));
  }
  // no overflow where the squares would: hypot(1e300, 1e300) = sqrt(2) e300
  CHECK(to_vector<double>(hypot(real_t({1e300}), real_t({1e300})))[0] == doctest::Approx(1.4142135623730951e300).epsilon(1e-15));
  CHECK(to_vector<double>(hypot(real_t({kInf}), real_t({kNaN})))[0] == kInf);  // inf wins over NaN (C's rule)
  CHECK(to_vector<float>(hypot(real_t({kNaN, -kInf}, float32), real_t({-kInf, kNaN}, float32))) ==
        std::vector<float>{INFINITY, INFINITY});
  {  // float32 (squares and sum in double): bit for bit glibc's hypotf, over 200,000 pairs of every scale
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
    std::uniform_int_distribution<int> expo(-149, 127);
    std::vector<float> x(200000), y(200000);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = std::ldexp(mant(gen), expo(gen));
      const int near = x[i] == 0 ? 0 : std::ilogb(x[i]);  // y of x's scale for every other pair (ilogb(0) is INT_MIN)
      y[i] = std::ldexp(mant(gen), i % 2 ? expo(gen) : std::clamp(near + (expo(gen) % 8), -149, 127));
    }
    const auto h = to_vector<float>(hypot(from_vector(x), from_vector(y)));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float want = std::hypot(x[i], y[i]);
      differ += std::memcmp(&h[i], &want, sizeof want) != 0;
    }
    CHECK(differ == 0);
  }
  // ints promote to the default float dtype, as atan2
  const Tensor hi = hypot(int_t({3, 5}), int_t({4, 12}));
  CHECK(hi.dtype() == float32);
  CHECK(to_vector<float>(hi) == std::vector<float>{5.0f, 13.0f});
  CHECK(copysign(int_t({3, 3}), real_t({-1.0, 1.0})).dtype() == float64);
  CHECK(to_vector<double>(real_t({2.0}).hypot(real_t({0.0}))) == std::vector<double>{2.0});
  CHECK(to_vector<double>(real_t({2.0}).copysign(real_t({-0.0}))) == std::vector<double>{-2.0});
}

TEST_CASE("logaddexp and logaddexp2 in float32: within 5 units in the last place of long double's over 400,000 "
          "pairs, contiguous, broadcast and strided") {
  // Note [vector logaddexp]: the unit is the last place of the largest of |max|, the log1p term and the result,
  // since the sum cancels where max is near -term
  manual_seed(12);
  const std::int64_t n = 100000;
  const Tensor a = randn({n}) * 20.0, far = randn({n}) * 20.0, near = a + randn({n}) * 1e-3;
  const Tensor rows = randn({200, 1}) * 5.0, cols = randn({1, 500}) * 5.0;
  const Tensor strided = randn({n, 2}).select(1, 1) * 3.0;
  const std::vector<std::pair<Tensor, Tensor>> cases = {{a, far}, {a, near}, {rows, cols}, {a, strided}};
  for (bool base2 : {false, true}) {
    CAPTURE(base2);
    for (const auto& [x, y] : cases) {
      const Tensor got = (base2 ? logaddexp2(x, y) : logaddexp(x, y)).reshape({-1});
      const Shape s = got.shape();
      const auto xv = to_vector<float>(x.broadcast_to(broadcast_shapes({x.shape(), y.shape()})).reshape(s));
      const auto yv = to_vector<float>(y.broadcast_to(broadcast_shapes({x.shape(), y.shape()})).reshape(s));
      const auto gv = to_vector<float>(got);
      double worst = 0;
      for (std::size_t i = 0; i < gv.size(); ++i) {
        const long double u = xv[i], v = yv[i], m = std::max(u, v), d = -std::fabs(u - v);
        const long double term = base2 ? std::log2(1.0L + std::exp2(d)) : std::log1p(std::exp(d));
        const float big = std::max({static_cast<float>(std::fabs(m)), static_cast<float>(term),
                                    static_cast<float>(std::fabs(m + term))});
        const double ulp = std::nextafter(big, std::numeric_limits<float>::infinity()) - big;
        worst = std::max(worst, static_cast<double>(std::fabs(gv[i] - (m + term)) / ulp));
      }
      CHECK(worst <= 5.0);
    }
  }
}

TEST_CASE("logaddexp, logaddexp2 and xlogy: values, no overflow, special values") {
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor a = real_t({0.0, 1.0, -3.5, 40.0, -700.0, 25.0}, {6, 1}, dt);
    const Tensor b = real_t({0.5, -2.0, 38.0, -710.0, 1e-3}, {1, 5}, dt);
    check_binary(a.to(float64), b.to(float64), logaddexp(a, b),
                 [dt](cld x, cld y) { return cld(in_dtype(dt, lse_ref(x.real(), y.real(), std::exp(1.0L)))); }, 4 * rtol_for(dt));
    check_binary(a.to(float64), b.to(float64), logaddexp2(a, b),
                 [dt](cld x, cld y) { return cld(in_dtype(dt, lse_ref(x.real(), y.real(), 2.0L))); }, 4 * rtol_for(dt));
    const Tensor x = real_t({0.0, 0.0, 0.0, 2.0, -1.5, 3.0, 0.5}, dt), y = real_t({0.0, kInf, 2.0, 3.0, 0.25, 0.0, -1.0}, dt);
    check_binary(x.to(float64), y.to(float64), xlogy(x, y),
                 [](cld u, cld v) { return cld(u.real() == 0 ? 0.0L : u.real() * std::log(v.real())); }, rtol_for(dt));
  }
  // huge arguments, where e^a overflows: the max plus log1p
  CHECK(to_vector<double>(logaddexp(real_t({1000.0}), real_t({1000.0})))[0] == doctest::Approx(1000.6931471805599).epsilon(1e-15));
  CHECK(to_vector<double>(logaddexp2(real_t({2000.0}), real_t({2000.0})))[0] == 2001.0);
  for (Dtype dt : {float32, float64}) {  // float32 on the CPU: the vectorized rows (Note [vector logaddexp])
    CAPTURE(dt);
    const Tensor inf = real_t({kInf, -kInf, kInf, -kInf, kNaN, 1.0, 1e30, -1e30}, dt);
    const Tensor other = real_t({kInf, -kInf, -kInf, 3.0, 1.0, kNaN, 1e30, -1e30}, dt);
    const auto l = to_vector<double>(logaddexp(inf, other)), l2 = to_vector<double>(logaddexp2(inf, other));
    for (const auto& v : {l, l2}) {
      CHECK(v[0] == kInf);
      CHECK(v[1] == -kInf);
      CHECK(v[2] == kInf);
      CHECK(v[3] == 3.0);
      CHECK(std::isnan(v[4]));
      CHECK(std::isnan(v[5]));
      CHECK(v[6] == to_vector<double>(real_t({1e30}, dt))[0]);  // + log 2 is below half an ulp there
      CHECK(v[7] == to_vector<double>(real_t({-1e30}, dt))[0]);
    }
  }
  // xlogy: 0 log 0 = 0 (entropies), NaN y stays NaN, numbers on either side
  CHECK(std::isnan(to_vector<double>(xlogy(real_t({0.0}), real_t({kNaN})))[0]));
  CHECK(to_vector<double>(xlogy(Scalar(2.0), real_t({1.0, 0.5})))[1] == doctest::Approx(2 * std::log(0.5)).epsilon(1e-15));
  CHECK(to_vector<double>(xlogy(real_t({0.0, 3.0}), 1.0)) == std::vector<double>{0.0, 0.0});
  CHECK(xlogy(int_t({1, 2}), int_t({3, 4})).dtype() == float32);
  CHECK(to_vector<double>(real_t({1.0}).logaddexp(real_t({1.0})))[0] == doctest::Approx(1.0 + std::log(2.0)).epsilon(1e-15));
  CHECK(to_vector<double>(real_t({1.0}).logaddexp2(real_t({1.0})))[0] == 2.0);
  CHECK(to_vector<double>(real_t({2.0}).xlogy(real_t({1.0})))[0] == 0.0);
}

TEST_CASE("real binary functions: errors name the op and the shapes or dtypes") {
  const Tensor c = cplx_t({{1, 1}, {2, 0}}), r = real_t({1.0, 2.0});
  using F = Tensor (*)(const Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, F>> ops = {
      {"fmod", static_cast<F>(fmod)},           {"remainder", static_cast<F>(remainder)},
      {"floor_divide", static_cast<F>(floor_divide)}, {"hypot", hypot},
      {"copysign", copysign},                   {"logaddexp", logaddexp},
      {"logaddexp2", logaddexp2},               {"xlogy", static_cast<F>(xlogy)}};
  for (const auto& [name, f] : ops) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(f(c, r), doctest::Contains((std::string("[") + name + "] not supported for complex tensors").c_str()), Error);
    CHECK_THROWS_WITH_AS(f(real_t({1.0, 2.0, 3.0}), r), doctest::Contains("(3,)"), Error);  // broadcast mismatch
  }
  CHECK_THROWS_WITH_AS(fmod(bool_t({true}), bool_t({true})), doctest::Contains("[fmod] not implemented for two bool"), Error);
  CHECK_THROWS_WITH_AS(floor_divide(bool_t({true}), bool_t({true})), doctest::Contains("[floor_divide]"), Error);
  // a bool pair promotes to float for the floating functions
  CHECK(hypot(bool_t({true}), bool_t({true})).dtype() == float32);
}

TEST_CASE("real binary functions: gradcheck and gradgradcheck") {
  const Tensor a = real_t({7.3, -5.2, 2.9, -0.4}).requires_grad_();
  const Tensor b = real_t({2.1, -1.7, 0.6}, {3, 1}).requires_grad_();
  CHECK(gc([](const G& in) { return fmod(in[0], in[1]); }, {a, b}));
  CHECK(gc([](const G& in) { return remainder(in[0], in[1]); }, {a, b}));
  CHECK(gc([](const G& in) { return in[0] % in[1]; }, {a, b}));
  CHECK(ggc([](const G& in) { return fmod(in[0], in[1]) * in[1]; }, {a, b}));
  CHECK(ggc([](const G& in) { return remainder(in[0], in[1]) * in[0]; }, {a, b}));
  CHECK(gc([](const G& in) { return floor_divide(in[0], in[1]) + in[0]; }, {a, b}));
  CHECK(gc([](const G& in) { return div(in[0], in[1], "trunc") + in[1]; }, {a, b}));
  CHECK(gc([](const G& in) { return hypot(in[0], in[1]); }, {a, b}));
  CHECK(ggc([](const G& in) { return hypot(in[0], in[1]); }, {a, b}));
  CHECK(gc([](const G& in) { return copysign(in[0], in[1]) + in[1]; }, {a, b}));
  CHECK(gc([](const G& in) { return logaddexp(in[0], in[1]); }, {a, b}));
  CHECK(ggc([](const G& in) { return logaddexp(in[0], in[1]); }, {a, b}));
  CHECK(gc([](const G& in) { return logaddexp2(in[0], in[1]); }, {a, b}));
  CHECK(ggc([](const G& in) { return logaddexp2(in[0], in[1]); }, {a, b}));
  const Tensor p = real_t({0.7, 1.9, 0.2}).requires_grad_(), q = real_t({0.4, 2.5}, {2, 1}).requires_grad_();
  CHECK(gc([](const G& in) { return xlogy(in[0], in[1]); }, {p, q}));
  CHECK(ggc([](const G& in) { return xlogy(in[0], in[1]); }, {p, q}));
  // the values the gradients take at the edges: hypot at the origin, xlogy at x = 0, copysign's b
  Tensor z = real_t({0.0, 3.0}).requires_grad_(), w = real_t({0.0, 4.0}).requires_grad_();
  hypot(z, w).sum().backward();
  CHECK(to_vector<double>(z.grad())[0] == 0.0);
  CHECK(to_vector<double>(z.grad())[1] == doctest::Approx(0.6).epsilon(1e-15));
  CHECK(to_vector<double>(w.grad())[0] == 0.0);
  CHECK(to_vector<double>(w.grad())[1] == doctest::Approx(0.8).epsilon(1e-15));
  Tensor x0 = real_t({0.0, 2.0}).requires_grad_(), y0 = real_t({0.5, 0.5}).requires_grad_();
  xlogy(x0, y0).sum().backward();
  CHECK(to_vector<double>(x0.grad()) == std::vector<double>{0.0, std::log(0.5)});
  CHECK(to_vector<double>(y0.grad()) == std::vector<double>{0.0, 4.0});
  Tensor s = real_t({2.0, -2.0, 0.0}).requires_grad_(), t = real_t({-1.0, -1.0, -1.0}).requires_grad_();
  copysign(s, t).sum().backward();
  CHECK(to_vector<double>(s.grad()) == std::vector<double>{-1.0, 1.0, 0.0});
  CHECK(to_vector<double>(t.grad()) == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("signbit, nan_to_num, clamp_min and clamp_max") {
  const Tensor x = real_t({-2.0, -0.0, 0.0, 3.0, -kInf, kInf, kNaN, -kNaN});
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor s = signbit(x.to(dt));
    CHECK(s.dtype() == bool_);
    CHECK(to_vector<bool>(s) == std::vector<bool>{true, true, false, false, true, false, false, true});
    const Tensor n = nan_to_num(x.to(dt));
    CHECK(n.dtype() == dt);
    const double big = dt == float32 ? static_cast<double>(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
    CHECK(to_vector<double>(n.to(float64)) == std::vector<double>{-2.0, -0.0, 0.0, 3.0, -big, big, 0.0, 0.0});
    CHECK(to_vector<double>(x.to(dt).nan_to_num(1.5, 100.0, -7.0).to(float64)) ==
          std::vector<double>{-2.0, -0.0, 0.0, 3.0, -7.0, 100.0, 1.5, 1.5});
  }
  CHECK(to_vector<bool>(signbit(int_t({-3, 0, 4}))) == std::vector<bool>{true, false, false});
  CHECK(to_vector<bool>(bool_t({true, false}).signbit()) == std::vector<bool>{false, false});
  CHECK_THROWS_WITH_AS(signbit(cplx_t({{1, 1}})), doctest::Contains("[signbit] not supported for complex tensors"), Error);
  // complex: each part; ints copied
  const auto z = to_vector<cd>(nan_to_num(cplx_t({{kNaN, kInf}, {1.0, -kInf}}), 0.0, 9.0, -9.0));
  CHECK(z == std::vector<cd>{{0.0, 9.0}, {1.0, -9.0}});
  const Tensor i = int_t({1, 2});
  const Tensor ic = nan_to_num(i);
  CHECK(to_vector<std::int64_t>(ic) == std::vector<std::int64_t>{1, 2});
  CHECK(ic.data_ptr() != i.data_ptr());
  // gradients pass where x is kept
  Tensor g = real_t({1.0, kNaN, kInf, -2.0}).requires_grad_();
  (nan_to_num(g) * 3.0).sum().backward();
  CHECK(to_vector<double>(g.grad()) == std::vector<double>{3.0, 0.0, 0.0, 3.0});
  CHECK(gc([](const G& in) { return nan_to_num(in[0] / in[1]); }, {real_t({1.0, 2.0, -3.0}).requires_grad_(), real_t({0.5, -1.0, 4.0}).requires_grad_()}));
  // clamp_min / clamp_max: clamp with one bound
  const Tensor c = real_t({-2.0, 0.5, 3.0});
  CHECK(to_vector<double>(clamp_min(c, 0.0)) == std::vector<double>{0.0, 0.5, 3.0});
  CHECK(to_vector<double>(clamp_max(c, 1.0)) == std::vector<double>{-2.0, 0.5, 1.0});
  CHECK(to_vector<double>(c.clamp_min(-1.0)) == std::vector<double>{-1.0, 0.5, 3.0});
  CHECK(to_vector<double>(c.clamp_max(0.0)) == std::vector<double>{-2.0, 0.0, 0.0});
  CHECK(gc([](const G& in) { return clamp_min(in[0], 0.1) + clamp_max(in[0], 0.2); }, {real_t({-0.5, 0.15, 0.7}).requires_grad_()}));
}
