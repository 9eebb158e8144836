// CPU-vs-device agreement of the bitwise ops, shifts, gcd and lcm (tests/test_bitwise.cpp checks the values):
// int64 over the full range with shift amounts in and out of [0, 63], bool operands, the flat kernel (same-dtype
// contiguous operands, a 0-d operand, a host scalar) and the strided one (broadcasting, a transposed operand, bool
// next to int64), the in-place operators and the errors. Skipped without a GPU (they run on the virtual CPU
// device everywhere).
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <cstdint>
#include <limits>
#include <phasor/phasor.hpp>
#include <random>
#include <vector>

using namespace phasor;
using namespace cuda_test;
using V = std::vector<Tensor>;
using I = std::vector<std::int64_t>;

namespace {

/// n int64 values: the extremes, small values, shift amounts around 0 and 64, and random 64-bit ones.
Tensor int_values(std::int64_t n, std::uint64_t seed) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();
  I v = {kMin, kMax, -1, 0, 1, 63, 64, 65, -64, 12, -18};
  std::mt19937_64 rng(seed);
  while (static_cast<std::int64_t>(v.size()) < n)
    v.push_back(v.size() % 2 ? static_cast<std::int64_t>(rng()) : static_cast<std::int64_t>(rng() % 141) - 70);
  v.resize(static_cast<std::size_t>(n));
  return from_vector(v);
}

/// agree within 0 (rel_diff) and equal element for element (int64 past 2^53 included).
void exact(const Device& dev, const std::string& name, const std::function<Tensor(const V&)>& f, const V& in) {
  agree(dev, name, f, in, 0);
  V g;
  for (const Tensor& t : in) g.push_back(on(dev, t));
  const Tensor c = f(in), d = f(g);
  CHECK(d.dtype() == c.dtype());
  CHECK(equal(d.to(Device::cpu()), c));
}

}  // namespace

DEVICE_CASE("cuda bitwise: and, or, xor, not, shifts, gcd and lcm agree with the CPU") {
  const Tensor a = int_values(96, 1).reshape({8, 12}), b = int_values(96, 2).reshape({8, 12});
  const Tensor row = int_values(12, 3), col = int_values(8, 4).reshape({8, 1});
  const Tensor p = sample({8, 12}, bool_), q = sample({8, 12}, bool_);
  struct Named {
    const char* name;
    Tensor (*f)(const Tensor&, const Tensor&);
  };
  const Named ops[] = {
      {"bitwise_and", [](const Tensor& x, const Tensor& y) { return bitwise_and(x, y); }},
      {"bitwise_or", [](const Tensor& x, const Tensor& y) { return bitwise_or(x, y); }},
      {"bitwise_xor", [](const Tensor& x, const Tensor& y) { return bitwise_xor(x, y); }},
      {"bitwise_left_shift", [](const Tensor& x, const Tensor& y) { return bitwise_left_shift(x, y); }},
      {"bitwise_right_shift", [](const Tensor& x, const Tensor& y) { return bitwise_right_shift(x, y); }},
      {"gcd", [](const Tensor& x, const Tensor& y) { return gcd(x, y); }},
      {"lcm", [](const Tensor& x, const Tensor& y) { return lcm(x, y); }},
  };
  for (const auto& op : ops) {
    const std::string n = op.name;
    const auto f = op.f;
    exact(dev, n + " flat", [f](const V& t) { return f(t[0], t[1]); }, {a, b});
    exact(dev, n + " broadcast", [f](const V& t) { return f(t[0], t[1]); }, {col, row});
    exact(dev, n + " transposed", [f](const V& t) { return f(t[0].t(), t[1]); }, {a, b.t().contiguous()});
    exact(dev, n + " 0-d", [f](const V& t) { return f(t[0], t[1].select(0, 3).select(0, 4)); }, {a, b});
    exact(dev, n + " bool and int64", [f](const V& t) { return f(t[0], t[1]); }, {p, b});
    exact(dev, n + " int64 and bool", [f](const V& t) { return f(t[0], t[1]); }, {a, q});
  }
  // the host-scalar forms (Note [host scalars])
  exact(dev, "& scalar", [](const V& t) { return t[0] & 0x0F0F0F0F0F0F0F0F; }, {a});
  exact(dev, "scalar |", [](const V& t) { return 5 | t[0]; }, {a});
  exact(dev, "^ scalar", [](const V& t) { return t[0] ^ -1; }, {a});
  exact(dev, "<< scalar", [](const V& t) { return t[0] << 7; }, {a});
  exact(dev, ">> scalar", [](const V& t) { return t[0] >> 70; }, {a});
  exact(dev, "scalar <<", [](const V& t) { return bitwise_left_shift(3, t[0]); }, {a});
  exact(dev, "scalar >>", [](const V& t) { return bitwise_right_shift(-1000, t[0]); }, {a});
  exact(dev, "gcd scalar", [](const V& t) { return gcd(t[0], 12); }, {a});
  exact(dev, "lcm scalar", [](const V& t) { return lcm(t[0], 6); }, {a});
  // bool op bool stays bool; not of both dtypes
  exact(dev, "bool &", [](const V& t) { return t[0] & t[1]; }, {p, q});
  exact(dev, "bool |", [](const V& t) { return t[0] | t[1]; }, {p, q.narrow(0, 0, 1)});
  exact(dev, "bool ^", [](const V& t) { return t[0] ^ true; }, {p});
  exact(dev, "~ int64", [](const V& t) { return ~t[0]; }, {a});
  exact(dev, "~ int64 transposed", [](const V& t) { return ~t[0].t(); }, {a});
  exact(dev, "~ bool", [](const V& t) { return bitwise_not(t[0]); }, {p});
  // in place
  exact(dev, "&= |= ^= <<= >>=", [](const V& t) {
    Tensor x = t[0].clone();
    x &= t[1];
    x |= 0x55;
    x ^= t[2];
    x <<= 3;
    x >>= t[1].narrow(1, 0, 1);
    return x;
  }, {a, b, p});
}

DEVICE_CASE("cuda bitwise: floating and complex operands throw on the device as on the CPU") {
  const Tensor f = on(dev, sample({3}, float32)), c = on(dev, sample({3}, complex128)), i = on(dev, sample({3}, int64));
  const Tensor p = on(dev, sample({3}, bool_));
  CHECK_THROWS_WITH_AS(f & i, doctest::Contains("[bitwise_and]"), Error);
  CHECK_THROWS_WITH_AS(i | c, doctest::Contains("complex128"), Error);
  CHECK_THROWS_WITH_AS(~f, doctest::Contains("[bitwise_not]"), Error);
  CHECK_THROWS_WITH_AS(p << p, doctest::Contains("[bitwise_left_shift]"), Error);
  CHECK_THROWS_WITH_AS(gcd(i, f), doctest::Contains("[gcd]"), Error);
  CHECK_THROWS_WITH_AS(lcm(p, p), doctest::Contains("[lcm]"), Error);
  // an operand left on the default CPU device is refused, as every elementwise op refuses it
  CHECK_THROWS_AS(i & sample({3}, int64), Error);
}
