// Bitwise ops, shifts, gcd and lcm (torch's, Note [bitwise ops] in phasor/ops.hpp) against plain C++ loops over
// int64 values from INT64_MIN to INT64_MAX: the references compute in unsigned and 128-bit arithmetic (shifts as
// multiplications and floor divisions by powers of two, gcd by the binary algorithm), not with the library's
// element functions. Also scalar and bool forms, promotion, broadcasting, the operators, in-place forms, errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <random>
#include <vector>

#include "binary_ref.hpp"

using namespace phasor;
using namespace phasor::test;
using i64 = std::int64_t;
using u64 = std::uint64_t;
using i128 = __int128;
using u128 = unsigned __int128;

namespace {

constexpr i64 kMin = std::numeric_limits<i64>::min(), kMax = std::numeric_limits<i64>::max();

/// Edge values (0, +-1, shift amounts around 0 and 64, powers of two, the extremes) and random ones.
std::vector<i64> values() {
  std::vector<i64> v = {kMin, kMin + 1, -(i64(1) << 40) - 3, -65, -64, -63, -12, -7, -2, -1, 0, 1, 2, 3, 6, 12,
                        18, 62, 63, 64, 65, 100, i64(1) << 40, i64(3) << 61, kMax - 1, kMax};
  std::mt19937_64 rng(20261207);
  for (int i = 0; i < 10; ++i) v.push_back(static_cast<i64>(rng()));
  for (int i = 0; i < 10; ++i) v.push_back(static_cast<i64>(rng() % 2001) - 1000);
  return v;
}

/// The int64 with the two's complement bits of x mod 2^64.
i64 wrap(i128 x) { return static_cast<i64>(static_cast<u64>(static_cast<u128>(x))); }

i64 ref_left_shift(i64 a, i64 b) {
  if (b < 0 || b > 63) return 0;
  u128 p = static_cast<u64>(a);
  for (i64 k = 0; k < b; ++k) p *= 2;  // a * 2^b mod 2^64
  return static_cast<i64>(static_cast<u64>(p));
}
i64 ref_right_shift(i64 a, i64 b) {
  if (b < 0 || b > 63) return a < 0 ? -1 : 0;
  const i128 d = i128(1) << b;  // floor(a / 2^b)
  const i128 q = a / d;
  return static_cast<i64>(q * d > a ? q - 1 : q);
}
u128 binary_gcd(u128 x, u128 y) {  // Stein's algorithm
  if (x == 0) return y;
  if (y == 0) return x;
  int shift = 0;
  while (((x | y) & 1) == 0) x >>= 1, y >>= 1, ++shift;
  while ((x & 1) == 0) x >>= 1;
  while (y != 0) {
    while ((y & 1) == 0) y >>= 1;
    if (x > y) std::swap(x, y);
    y -= x;
  }
  return x << shift;
}
u128 mag(i64 a) { return a < 0 ? u128(-i128(a)) : u128(a); }
i64 ref_gcd(i64 a, i64 b) { return wrap(i128(binary_gcd(mag(a), mag(b)))); }
i64 ref_lcm(i64 a, i64 b) {
  const u128 g = binary_gcd(mag(a), mag(b));
  if (g == 0) return 0;
  const u128 l = mag(a) / g * mag(b);  // exact, below 2^127
  const i64 p = wrap((a < 0) != (b < 0) ? -i128(l) : i128(l));  // a / g * b in wrapping int64
  return p < 0 ? wrap(-i128(p)) : p;                         // its wrapping absolute value
}

using Ref = std::function<i64(i64, i64)>;
using Op = std::function<Tensor(const Tensor&, const Tensor&)>;

/// op over every pair of values (a column against a row, broadcast) equals ref, int64 out, no gradient.
void check_pairs(const char* name, const Op& op, const Ref& ref) {
  CAPTURE(name);
  const std::vector<i64> v = values();
  const i64 n = static_cast<i64>(v.size());
  const Tensor a = int_t(v).reshape({n, 1}), b = int_t(v).reshape({1, n});
  const Tensor y = op(a, b);
  REQUIRE(y.shape() == Shape{n, n});
  CHECK(y.dtype() == int64);
  CHECK_FALSE(y.requires_grad());
  const std::vector<i64> got = to_vector<i64>(y);
  int bad = 0;
  for (i64 i = 0; i < n; ++i)
    for (i64 j = 0; j < n; ++j)
      if (got[static_cast<std::size_t>(i * n + j)] != ref(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(j)]) && bad++ < 5)
        FAIL_CHECK(name << "(" << v[static_cast<std::size_t>(i)] << ", " << v[static_cast<std::size_t>(j)] << ") = "
                        << got[static_cast<std::size_t>(i * n + j)] << ", want "
                        << ref(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(j)]));
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("bitwise: and, or, xor, not, shifts, gcd, lcm of int64 against C++ loops, broadcast") {
  check_pairs("bitwise_and", [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) & static_cast<u64>(b)); });
  check_pairs("bitwise_or", [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) | static_cast<u64>(b)); });
  check_pairs("bitwise_xor", [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) ^ static_cast<u64>(b)); });
  check_pairs("operator&", [](const Tensor& a, const Tensor& b) { return a & b; },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) & static_cast<u64>(b)); });
  check_pairs("operator|", [](const Tensor& a, const Tensor& b) { return a | b; },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) | static_cast<u64>(b)); });
  check_pairs("operator^", [](const Tensor& a, const Tensor& b) { return a ^ b; },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(a) ^ static_cast<u64>(b)); });
  check_pairs("bitwise_left_shift", [](const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }, ref_left_shift);
  check_pairs("operator<<", [](const Tensor& a, const Tensor& b) { return a << b; }, ref_left_shift);
  check_pairs("bitwise_right_shift", [](const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }, ref_right_shift);
  check_pairs("operator>>", [](const Tensor& a, const Tensor& b) { return a >> b; }, ref_right_shift);
  check_pairs("gcd", [](const Tensor& a, const Tensor& b) { return gcd(a, b); }, ref_gcd);
  check_pairs("lcm", [](const Tensor& a, const Tensor& b) { return lcm(a, b); }, ref_lcm);
  check_pairs("methods", [](const Tensor& a, const Tensor& b) { return a.gcd(b).bitwise_xor(a.lcm(b)); },
              [](i64 a, i64 b) { return static_cast<i64>(static_cast<u64>(ref_gcd(a, b)) ^ static_cast<u64>(ref_lcm(a, b))); });

  const std::vector<i64> v = values();
  const Tensor x = int_t(v);
  const std::vector<i64> nx = to_vector<i64>(bitwise_not(x)), tx = to_vector<i64>(~x), mx = to_vector<i64>(x.bitwise_not());
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(v[i]);
    CHECK(nx[i] == -1 - static_cast<i128>(v[i]));  // ~a = -a - 1 in two's complement
    CHECK(tx[i] == nx[i]);
    CHECK(mx[i] == nx[i]);
  }
  CHECK(bitwise_not(x).dtype() == int64);
}

TEST_CASE("bitwise: shift edge cases, gcd and lcm conventions") {
  const Tensor a = int_t({5, -5, kMin, kMax, -1});
  // amounts outside [0, 63]: << gives 0, >> gives 0 or -1 by the sign (torch's rule)
  for (i64 s : {i64(-1), i64(64), i64(65), i64(1000), kMin, kMax}) {
    CAPTURE(s);
    CHECK(to_vector<i64>(a << s) == std::vector<i64>{0, 0, 0, 0, 0});
    CHECK(to_vector<i64>(a >> s) == std::vector<i64>{0, -1, -1, 0, -1});
  }
  CHECK(to_vector<i64>(a >> 63) == std::vector<i64>{0, -1, -1, 0, -1});
  CHECK(to_vector<i64>(a >> 1) == std::vector<i64>{2, -3, kMin / 2, kMax / 2, -1});  // arithmetic: floor
  CHECK(to_vector<i64>(int_t({1, -1, 3}) << 63) == std::vector<i64>{kMin, kMin, kMin});
  CHECK(to_vector<i64>(int_t({1, kMax}) << 1) == std::vector<i64>{2, -2});  // wraps
  // gcd: non-negative, gcd(0, 0) = 0, gcd(a, 0) = |a|; 2^63 wraps to INT64_MIN
  CHECK(to_vector<i64>(gcd(int_t({0, -6, 6, -6, 0, kMin, kMin, kMin}), int_t({0, 4, -4, -4, -7, 6, 0, kMin}))) ==
        std::vector<i64>{0, 2, 2, 2, 7, 2, kMin, kMin});
  // lcm: non-negative, 0 with a zero operand
  CHECK(to_vector<i64>(lcm(int_t({0, -6, 6, -6, 5, 0}), int_t({0, 4, -4, -4, 0, kMin}))) ==
        std::vector<i64>{0, 12, 12, 12, 0, 0});
}

TEST_CASE("bitwise: scalar forms, bool operands and promotion") {
  const std::vector<i64> v = values();
  const Tensor x = int_t(v);
  const i64 m = 0x0F0F0F0F0F0F0F0F;
  const std::vector<i64> andm = to_vector<i64>(bitwise_and(x, m)), mand = to_vector<i64>(bitwise_and(m, x)),
                         orm = to_vector<i64>(x | m), xorm = to_vector<i64>(m ^ x), ls = to_vector<i64>(bitwise_left_shift(x, 3)),
                         rs = to_vector<i64>(x >> 3), ls1 = to_vector<i64>(bitwise_left_shift(1, int_t({0, 5, 63, 64}))),
                         rs1 = to_vector<i64>(bitwise_right_shift(-256, int_t({0, 4, 70}))), g = to_vector<i64>(gcd(x, 12)),
                         l = to_vector<i64>(lcm(x, 6)), o2 = to_vector<i64>(bitwise_or(1, x)), x2 = to_vector<i64>(bitwise_xor(x, -1));
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(v[i]);
    const u64 u = static_cast<u64>(v[i]);
    CHECK(andm[i] == static_cast<i64>(u & static_cast<u64>(m)));
    CHECK(mand[i] == andm[i]);
    CHECK(orm[i] == static_cast<i64>(u | static_cast<u64>(m)));
    CHECK(xorm[i] == static_cast<i64>(u ^ static_cast<u64>(m)));
    CHECK(o2[i] == static_cast<i64>(u | 1u));
    CHECK(x2[i] == static_cast<i64>(~u));
    CHECK(ls[i] == ref_left_shift(v[i], 3));
    CHECK(rs[i] == ref_right_shift(v[i], 3));
    CHECK(g[i] == ref_gcd(v[i], 12));
    CHECK(l[i] == ref_lcm(v[i], 6));
  }
  CHECK(ls1 == std::vector<i64>{1, 32, kMin, 0});
  CHECK(rs1 == std::vector<i64>{-256, -16, -1});

  // bool op bool is bool (the logical ops); bool with int64 is int64
  const Tensor p = bool_t({true, true, false, false}), q = bool_t({true, false, true, false});
  CHECK(bitwise_and(p, q).dtype() == bool_);
  CHECK(to_vector<bool>(bitwise_and(p, q)) == std::vector<bool>{true, false, false, false});
  CHECK(to_vector<bool>(bitwise_or(p, q)) == std::vector<bool>{true, true, true, false});
  CHECK(to_vector<bool>(bitwise_xor(p, q)) == std::vector<bool>{false, true, true, false});
  CHECK(to_vector<bool>(bitwise_not(p)) == std::vector<bool>{false, false, true, true});
  CHECK(to_vector<bool>(p & true) == std::vector<bool>{true, true, false, false});
  CHECK(to_vector<bool>(false | q) == std::vector<bool>{true, false, true, false});
  CHECK((p ^ true).dtype() == bool_);
  const Tensor k = int_t({6, 6, -1, 2});
  CHECK((p & k).dtype() == int64);
  CHECK(to_vector<i64>(p & k) == std::vector<i64>{0, 0, 0, 0});
  CHECK(to_vector<i64>(p | k) == std::vector<i64>{7, 7, -1, 2});
  CHECK(to_vector<i64>(k ^ q) == std::vector<i64>{7, 6, -2, 2});
  CHECK(to_vector<i64>(p << k) == std::vector<i64>{64, 64, 0, 0});
  CHECK(to_vector<i64>(gcd(k, p)) == std::vector<i64>{1, 1, 1, 2});
  CHECK((p & 3).dtype() == int64);
  CHECK(to_vector<i64>(p & 3) == std::vector<i64>{1, 1, 0, 0});
  // 0-d operands and empty tensors
  CHECK(to_vector<i64>(int_t({12}).reshape({}) & int_t({10, 7})) == std::vector<i64>{8, 4});
  CHECK((int_t({}) | int_t({5})).numel() == 0);
}

TEST_CASE("bitwise: in-place operators") {
  Tensor a = int_t({12, -1, 5});
  a &= int_t({10, 6, 4});
  CHECK(to_vector<i64>(a) == std::vector<i64>{8, 6, 4});
  a |= 1;
  CHECK(to_vector<i64>(a) == std::vector<i64>{9, 7, 5});
  a ^= int_t({1});
  CHECK(to_vector<i64>(a) == std::vector<i64>{8, 6, 4});
  a <<= 2;
  CHECK(to_vector<i64>(a) == std::vector<i64>{32, 24, 16});
  a >>= int_t({1, 2, 70});
  CHECK(to_vector<i64>(a) == std::vector<i64>{16, 6, 0});
  a &= bool_t({true, false, true});  // bool into int64 is fine
  CHECK(to_vector<i64>(a) == std::vector<i64>{0, 0, 0});
  Tensor p = bool_t({true, false});
  p |= bool_t({false, true});
  CHECK(to_vector<bool>(p) == std::vector<bool>{true, true});
  p ^= true;
  CHECK(to_vector<bool>(p) == std::vector<bool>{false, false});
  // int64 results do not fit a bool tensor; a shape other than self's is refused; self is unchanged
  Tensor r = bool_t({true, false});
  CHECK_THROWS_WITH_AS(r &= int_t({1, 1}), doctest::Contains("cannot be cast"), Error);
  Tensor s = int_t({1, 2});
  CHECK_THROWS_WITH_AS(s |= int_t({1, 2, 3, 4}).reshape({2, 2}), doctest::Contains("[bitwise_or_]"), Error);
  CHECK(to_vector<bool>(r) == std::vector<bool>{true, false});
  CHECK(to_vector<i64>(s) == std::vector<i64>{1, 2});
}

TEST_CASE("bitwise: floating and complex operands throw naming the op and the dtype") {
  const Tensor f = real_t({1.0, 2.0}, float32), d = real_t({1.0, 2.0}), c = cplx_t({{1, 0}, {0, 1}}), i = int_t({1, 2});
  const Tensor p = bool_t({true, false});
  const std::vector<std::pair<const char*, Op>> ops = {
      {"bitwise_and", [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }},
      {"bitwise_or", [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }},
      {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }},
      {"bitwise_left_shift", [](const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }},
      {"bitwise_right_shift", [](const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }},
      {"gcd", [](const Tensor& a, const Tensor& b) { return gcd(a, b); }},
      {"lcm", [](const Tensor& a, const Tensor& b) { return lcm(a, b); }},
  };
  for (const auto& [name, op] : ops) {
    CAPTURE(name);
    const std::string tag = std::string("[") + name + "]";
    CHECK_THROWS_WITH_AS(op(f, f), doctest::Contains(tag.c_str()), Error);
    CHECK_THROWS_WITH_AS(op(i, f), doctest::Contains("float32"), Error);
    CHECK_THROWS_WITH_AS(op(d, i), doctest::Contains("float64"), Error);
    CHECK_THROWS_WITH_AS(op(i, c), doctest::Contains("complex128"), Error);
    CHECK_THROWS_WITH_AS(op(i, int_t({1, 2, 3})), doctest::Contains(tag.c_str()), Error);  // shapes that do not broadcast
  }
  CHECK_THROWS_WITH_AS(bitwise_and(i, 1.5), doctest::Contains("[bitwise_and]"), Error);
  CHECK_THROWS_WITH_AS(f & f, doctest::Contains("float32"), Error);
  CHECK_THROWS_WITH_AS(~d, doctest::Contains("[bitwise_not]"), Error);
  CHECK_THROWS_WITH_AS(bitwise_not(c), doctest::Contains("complex128"), Error);
  // torch has no bool kernels for the shifts, gcd and lcm
  CHECK_THROWS_WITH_AS(p << p, doctest::Contains("[bitwise_left_shift]"), Error);
  CHECK_THROWS_WITH_AS(bitwise_right_shift(p, p), doctest::Contains("bool"), Error);
  CHECK_THROWS_WITH_AS(gcd(p, p), doctest::Contains("[gcd]"), Error);
  CHECK_THROWS_WITH_AS(lcm(p, p), doctest::Contains("[lcm]"), Error);
  // an int64 result records no node
  CHECK_FALSE(gcd(i, i).requires_grad());
}
