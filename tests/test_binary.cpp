// Tests of the broadcasting binary ops (arithmetic, the fused addcmul/addcdiv, lerp, pow, maximum/minimum, atan2,
// complex, polar), comparisons, logical ops, where, clamp and masked_fill: values against long-double references,
// PyTorch promotion, broadcasting (0-d, size 0), errors, gradcheck and gradgradcheck.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <random>
#include <string>
#include <vector>

#include "binary_ref.hpp"

using namespace phasor;
using namespace phasor::test;

// ---- promotion and broadcasting ---------------------------------------------------------------------------
TEST_CASE("type promotion follows PyTorch (checked against torch 1.13)") {
  Tensor i = int_t({1, -2, 0});
  Tensor f = real_t({1.5, -2.5, 0.5}, float32);
  Tensor d0 = scalar_tensor(1.0, float64);
  CHECK((i * 2.5).dtype() == float32);                 // int tensor * float scalar -> default float
  CHECK(to_vector<float>(i * 2.5) == std::vector<float>{2.5f, -5.0f, 0.0f});
  CHECK((f * 2.0).dtype() == float32);                 // a C++ double never widens float32
  CHECK((f * cd(1, 1)).dtype() == complex64);          // complex scalar -> complex of the same precision
  CHECK((real_t({1.0}) * cd(1, 1)).dtype() == complex128);
  CHECK((i * cd(1, 1)).dtype() == complex64);
  CHECK((i * 2).dtype() == int64);
  CHECK((f + d0).dtype() == float32);                  // same category: the dim tensor wins
  CHECK((i + d0).dtype() == float64);                  // higher-category 0-d tensor keeps its own dtype
  CHECK((bool_t({true, false}) + d0).dtype() == float64);
  CHECK((i + scalar_tensor(cd(1, 1), complex128)).dtype() == complex128);
  CHECK((f + scalar_tensor(cd(1, 1), complex128)).dtype() == complex64);
  CHECK((scalar_tensor(1) + scalar_tensor(2.0, float32)).dtype() == float32);  // two 0-d tensors: promote_types
  CHECK((scalar_tensor(1.0, float64) + scalar_tensor(2.0, float32)).dtype() == float64);
  CHECK((f + real_t({1.0})).dtype() == float64);        // two dim tensors: promote_types
  CHECK((i / int_t({2, 2, 2})).dtype() == float32);     // true division of ints
  CHECK(to_vector<float>(i / int_t({2, 2, 2})) == std::vector<float>{0.5f, -1.0f, 0.0f});
  CHECK((bool_t({true}) + bool_t({true})).dtype() == bool_);
}

TEST_CASE("broadcasting: shapes, 0-d and size-0 tensors, values against a naive loop") {
  Tensor a = randn({2, 1, 3}, float64);
  Tensor b = randn({4, 1}, float64);
  Tensor s = a * b + a / (b * b + 1.0);
  CHECK(s.shape() == Shape{2, 4, 3});
  check_binary(a, b, a * b, [](cld x, cld y) { return x * y; }, 1e-15);
  check_binary(a, b, a - b, [](cld x, cld y) { return x - y; }, 1e-15);
  check_binary(a, b, a / b, [](cld x, cld y) { return x / y; }, 1e-15);
  Tensor z0 = scalar_tensor(2.0, float64);
  CHECK((z0 * a).shape() == a.shape());
  check_binary(z0, a, z0 * a, [](cld x, cld y) { return x * y; }, 1e-15);
  CHECK((z0 + z0).dim() == 0);
  Tensor e = zeros({0, 3}, float32);
  CHECK((e + real_t({1.0, 2.0, 3.0}, float32)).shape() == Shape{0, 3});
  CHECK((zeros({0}, float64) * real_t({1.0})).shape() == Shape{0});
  CHECK((e * z0).shape() == Shape{0, 3});
  CHECK(pow(e, 2).shape() == Shape{0, 3});
  CHECK(where(zeros({0, 1}, bool_), e, z0).shape() == Shape{0, 3});
  CHECK(maximum(e, real_t({1.0, 2.0, 3.0})).shape() == Shape{0, 3});
  // non-contiguous operands
  Tensor m = randn({3, 4}, float64);
  check_binary(m.t(), m.t() * 0.5, maximum(m.t(), m.t() * 0.5), [](cld x, cld y) { return cld(std::max(x.real(), y.real())); },
               0);
}

TEST_CASE("broadcast and in-place errors name the op and the shapes, and leave inputs unchanged") {
  Tensor a = zeros({2, 3}), b = zeros({4});
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("[add]"), Error);
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("(2, 3)"), Error);
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("(4,)"), Error);
  CHECK_THROWS_WITH_AS(pow(a, b), doctest::Contains("[pow]"), Error);
  CHECK_THROWS_WITH_AS(maximum(a, b), doctest::Contains("[maximum]"), Error);
  CHECK_THROWS_WITH_AS(a < b, doctest::Contains("[lt]"), Error);
  CHECK_THROWS_WITH_AS(where(a > 0, a, b), doctest::Contains("[where]"), Error);
  CHECK_THROWS_WITH_AS(atan2(a, b), doctest::Contains("(4,)"), Error);

  Tensor i = int_t({1, 2});
  CHECK_THROWS_WITH_AS(i.add_(2.5), doctest::Contains("cannot be cast"), Error);
  CHECK_THROWS_WITH_AS(i.add_(real_t({1.0, 1.0})), doctest::Contains("[add_]"), Error);
  CHECK_THROWS_WITH_AS(i.mul_(0.5), doctest::Contains("[mul_]"), Error);
  CHECK_THROWS_WITH_AS(i.div_(2), doctest::Contains("[div_]"), Error);
  CHECK(to_vector<std::int64_t>(i) == std::vector<std::int64_t>{1, 2});
  Tensor f = real_t({1.0, 2.0}, float32);
  CHECK_THROWS_WITH_AS(f.add_(cd(1, 1)), doctest::Contains("complex64"), Error);
  Tensor small = zeros({1, 2});
  CHECK_THROWS_WITH_AS(small.add_(zeros({3, 2})), doctest::Contains("(3, 2)"), Error);
  CHECK(to_vector<float>(f) == std::vector<float>{1.0f, 2.0f});
  CHECK_THROWS_WITH_AS(bool_t({true}) - bool_t({true}), doctest::Contains("[sub]"), Error);
}

TEST_CASE("in-place ops refuse inputs sharing memory with self other than element for element") {
  const std::vector<double> v0{1, 2, 3, 4, 5, 6};
  Tensor x = real_t(v0);
  // a broadcast element of self, shifted windows of self, interleaved halves: the result would depend on
  // the write order (on a GPU: a race)
  CHECK_THROWS_WITH_AS(x.div_(x.select(0, 0)), doctest::Contains("[div_] an input (shape (), strides (), offset 0)"),
                       Error);
  CHECK_THROWS_WITH_AS(x.narrow(0, 1, 5).add_(x.narrow(0, 0, 5)), doctest::Contains("shares memory with the written-to"),
                       Error);
  CHECK_THROWS_WITH_AS(x.narrow(0, 1, 5).copy_(x.narrow(0, 0, 5)), doctest::Contains("[copy_]"), Error);
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 6, 2).mul_(x.slice(0, 1, 6, 2)), doctest::Contains("clone() the input first"), Error);
  CHECK_THROWS_WITH_AS(x.view({2, 3}).add_(x.view({3, 2}).t()), doctest::Contains("strides (1, 2)"), Error);
  // a written-to tensor with several elements in one location
  Tensor one = real_t({7});
  CHECK_THROWS_WITH_AS(one.expand({4}).add_(1.0), doctest::Contains("several elements in one memory location"), Error);
  CHECK_THROWS_WITH_AS(one.expand({2, 3}).fill_(0.0), doctest::Contains("[fill_]"), Error);
  CHECK(to_vector<double>(x) == v0);  // nothing written
  CHECK(to_vector<double>(one) == std::vector<double>{7});
  // fine: self itself, a same-layout view, disjoint parts of one storage, a copy, a single element
  x.mul_(x);
  x.add_(x.view({6}));
  CHECK(to_vector<double>(x) == std::vector<double>{2, 8, 18, 32, 50, 72});
  x.narrow(0, 0, 3).sub_(x.narrow(0, 3, 3));
  CHECK(to_vector<double>(x) == std::vector<double>{-30, -42, -54, 32, 50, 72});
  x.div_(x.select(0, 3).clone());
  CHECK(to_vector<double>(x)[3] == 1.0);
  x.select(0, 0).add_(x.select(0, 0));
  CHECK(to_vector<double>(x)[0] == -60.0 / 32);
  // also while recording gradients
  Tensor w = real_t({1, 2, 3}).requires_grad_();
  Tensor y = w * 2.0;
  CHECK_THROWS_WITH_AS(y.narrow(0, 1, 2).add_(y.narrow(0, 0, 2)), doctest::Contains("[add_]"), Error);
}

// ---- pow -------------------------------------------------------------------------------------------------
TEST_CASE("pow: values for every dtype and the three spellings") {
  for (Dtype dt : {float32, float64}) {
    Tensor a = real_t({0.5, 1.5, 2.0, 3.0, 0.0}, dt);
    Tensor e = real_t({2.0, -1.5, 0.5, 3.3, 2.0}, dt);
    check_binary(a, e, pow(a, e), [](cld x, cld y) { return cld(std::pow(x.real(), y.real())); }, rtol_for(dt));
    for (double p : {2.0, 0.5, 3.0, -1.0, -0.5, 1.7, 0.0}) {
      INFO("p = ", p);
      Tensor y = pow(a, p);
      CHECK(y.dtype() == dt);
      check_binary(a, scalar_tensor(p, float64), y, [](cld x, cld q) { return cld(std::pow(x.real(), q.real())); },
                   rtol_for(dt));
    }
    Tensor s = pow(2.5, e);
    CHECK(s.dtype() == dt);
    check_binary(scalar_tensor(2.5, float64), e, s, [](cld x, cld y) { return cld(std::pow(x.real(), y.real())); },
                 rtol_for(dt));
  }
  CHECK(std::isnan(to_vector<double>(pow(real_t({-2.0}), 0.5))[0]));
  CHECK(to_vector<double>(pow(real_t({0.0}), -1.0))[0] == kInf);
  for (Dtype dt : {complex64, complex128}) {
    Tensor a = cplx_t({{1, 2}, {-0.5, 0.3}, {0.2, -1.1}, {-2, -0.7}}, dt);
    Tensor e = cplx_t({{2, 0}, {0.5, 1}, {-1.5, 0.2}, {3, 0}}, dt);
    const double tol = dt == complex64 ? 2e-5 : 1e-13;
    check_binary(a, e, pow(a, e), [](cld x, cld y) { return std::pow(x, y); }, tol);
    for (cd p : {cd(2, 0), cd(3, 0), cd(-2, 0), cd(0.5, 0), cd(1.5, -0.5)}) {
      INFO("p = ", p);
      Tensor y = pow(a, p);
      CHECK(y.dtype() == dt);
      check_binary(a, scalar_tensor(p, complex128), y, [](cld x, cld q) { return std::pow(x, q); }, tol);
    }
  }
  // complex integer powers are exact for Gaussian integers, and 0^0 = 1
  CHECK(to_vector<cd>(pow(cplx_t({{1, 2}, {0, 0}}), 3)) == std::vector<cd>{{-11, -2}, {0, 0}});
  CHECK(to_vector<cd>(pow(cplx_t({{0, 0}}), 0))[0] == cd(1, 0));
  CHECK(to_vector<cd>(pow(cplx_t({{0, 0}}), cplx_t({{0, 0}})))[0] == cd(1, 0));
  // a real tensor to a complex power is complex
  CHECK(pow(real_t({2.0}, float32), cd(0, 1)).dtype() == complex64);
}

TEST_CASE("pow: integer and bool rules as PyTorch") {
  Tensor i = int_t({1, -2, 0, 3});
  CHECK(pow(i, i).dtype() == int64);
  CHECK(to_vector<std::int64_t>(pow(i, int_t({5, 3, 0, 4}))) == std::vector<std::int64_t>{1, -8, 1, 81});
  // negative integer exponents of tensors: 1 -> 1, -1 -> +-1, others 0 (no division)
  CHECK(to_vector<std::int64_t>(pow(int_t({1, -1, -1, 2, 0}), int_t({-1, -1, -2, -1, -1}))) ==
        std::vector<std::int64_t>{1, -1, 1, 0, 0});
  CHECK_THROWS_WITH_AS(pow(i, -1), doctest::Contains("negative integer powers"), Error);
  CHECK_THROWS_WITH_AS(i.pow(-2), doctest::Contains("[pow]"), Error);
  CHECK(to_vector<std::int64_t>(pow(int_t({3}), 40))[0] == static_cast<std::int64_t>(12157665459056928801ULL));  // wraps
  CHECK(pow(i, 2.5).dtype() == float32);
  CHECK(pow(2, i).dtype() == int64);
  CHECK(to_vector<std::int64_t>(pow(2, int_t({3, -1, 0}))) == std::vector<std::int64_t>{8, 0, 1});
  CHECK(pow(2.0, i).dtype() == float32);
  CHECK(to_vector<float>(pow(2.0, int_t({3, -1}))) == std::vector<float>{8.0f, 0.5f});
  Tensor b = bool_t({true, false});
  CHECK(pow(b, 2).dtype() == int64);
  CHECK(to_vector<std::int64_t>(pow(b, 2)) == std::vector<std::int64_t>{1, 0});
  CHECK(pow(b, int_t({2, 2})).dtype() == int64);
  CHECK_THROWS_WITH_AS(pow(b, b), doctest::Contains("[pow]"), Error);
  CHECK_THROWS_AS(pow(b, true), Error);
}

TEST_CASE("pow: gradients (real, complex, scalar forms, zero base)") {
  Tensor a = real_t({0.5, 1.5, 2.0, 3.0}).requires_grad_();
  Tensor e = real_t({2.0, -1.5, 0.5, 1.3}).requires_grad_();
  CHECK(gc([](const G& in) { return pow(in[0], in[1]); }, {a, e}));
  CHECK(gc([](const G& in) { return pow(in[0], in[1]); }, {a.reshape({4, 1}), e}));  // broadcast
  for (double p : {2.0, 0.5, -1.5, 3.0, 1.0, 0.0})
    CHECK(gc([p](const G& in) { return pow(in[0], p); }, {a}));
  CHECK(gc([](const G& in) { return pow(2.5, in[0]); }, {e}));
  CHECK(gc([](const G& in) { return in[0].pow(in[1]); }, {a, scalar_tensor(1.7, float64).requires_grad_()}));
  Tensor z = cplx_t({{1, 2}, {-0.5, 0.3}, {0.2, -1.1}}).requires_grad_();
  Tensor w = cplx_t({{2, 0.5}, {0.5, 1}, {-1.5, 0.2}}).requires_grad_();
  CHECK(gc([](const G& in) { return pow(in[0], in[1]); }, {z, w}));
  CHECK(gc([](const G& in) { return pow(in[0], cd(1.5, -0.5)); }, {z}));
  CHECK(gc([](const G& in) { return pow(in[0], 3); }, {z}));
  CHECK(gc([](const G& in) { return pow(cd(0.3, 1.2), in[0]); }, {w}));
  CHECK(gc([](const G& in) { return pow(in[0], in[1]); }, {a.slice(0, 0, 3), w}));  // real base, complex exponent
  CHECK(ggc([](const G& in) { return pow(in[0], in[1]); }, {a, e}));
  CHECK(ggc([](const G& in) { return pow(in[0], 2.5); }, {a}));
  CHECK(ggc([](const G& in) { return pow(in[0], in[1]); }, {z, w}));

  // zero base: d/da of a^2 at 0 is 0, a^0 has zero gradient, d/de at a = 0 (e >= 0) is 0, no NaN
  Tensor a0 = real_t({0.0, 0.0, 2.0}).requires_grad_();
  Tensor e0 = real_t({2.0, 0.0, 1.0}).requires_grad_();
  pow(a0, e0).sum().backward();
  CHECK(to_vector<double>(a0.grad()) == std::vector<double>{0.0, 0.0, 1.0});
  auto ge = to_vector<double>(e0.grad());
  CHECK(ge[0] == 0.0);
  CHECK(ge[1] == 0.0);
  CHECK(ge[2] == doctest::Approx(2 * std::log(2.0)).epsilon(1e-15));
  Tensor a1 = real_t({0.0, 1.0}).requires_grad_();
  pow(a1, 2).sum().backward();
  CHECK(to_vector<double>(a1.grad()) == std::vector<double>{0.0, 2.0});
  Tensor a2 = real_t({0.0}).requires_grad_();
  pow(a2, 0).sum().backward();
  CHECK(to_vector<double>(a2.grad()) == std::vector<double>{0.0});
  // the most negative int64 exponent: e a^(e - 1) without overflowing e - 1
  Tensor a3 = real_t({1.0, 2.0}).requires_grad_();
  pow(a3, Scalar(std::numeric_limits<std::int64_t>::min())).sum().backward();
  CHECK(to_vector<double>(a3.grad()) == std::vector<double>{-0x1p63, 0.0});
}

// ---- maximum / minimum / atan2 ---------------------------------------------------------------------------
TEST_CASE("maximum/minimum: values, NaN propagation, promotion, ties split the gradient") {
  Tensor a = real_t({1.0, -2.0, kNaN, 3.0, 0.5}, float32);
  Tensor b = real_t({2.0, -3.0, 1.0, kNaN, 0.5}, float32);
  auto mx = to_vector<float>(maximum(a, b)), mn = to_vector<float>(minimum(a, b));
  {
    // the rule bit for bit over vector rows and tails: a NaN wins (a's when both are), a tie (+0 and -0) gives a
    auto to_f = [](std::uint32_t u) {
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    };
    auto to_u = [](float f) {
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    };
    const float na = to_f(0x7fc00001u), nb = to_f(0xffc00002u);
    const std::vector<float> pool = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, na, nb, 1e-40f, -3e38f};
    std::vector<float> av, bv;
    for (float x : pool)
      for (float y : pool) {
        av.push_back(x);
        bv.push_back(y);
      }
    const auto gx = to_vector<float>(maximum(from_vector(av), from_vector(bv)));
    const auto gn = to_vector<float>(minimum(from_vector(av), from_vector(bv)));
    bool same = true;
    for (std::size_t i = 0; i < av.size(); ++i) {
      const float x = av[i], y = bv[i];
      const float wx = std::isnan(x) ? x : std::isnan(y) ? y : x < y ? y : x;
      const float wn = std::isnan(x) ? x : std::isnan(y) ? y : y < x ? y : x;
      same = same && to_u(gx[i]) == to_u(wx) && to_u(gn[i]) == to_u(wn);
    }
    CHECK(same);
  }
  CHECK(mx[0] == 2.0f);
  CHECK(mx[1] == -2.0f);
  CHECK(std::isnan(mx[2]));
  CHECK(std::isnan(mx[3]));
  CHECK(mx[4] == 0.5f);
  CHECK(mn[0] == 1.0f);
  CHECK(mn[1] == -3.0f);
  CHECK(std::isnan(mn[2]));
  CHECK(std::isnan(mn[3]));
  CHECK(to_vector<std::int64_t>(maximum(int_t({1, 5}), int_t({3, 2}))) == std::vector<std::int64_t>{3, 5});
  CHECK(maximum(int_t({1}), real_t({1.5}, float32)).dtype() == float32);
  CHECK(maximum(int_t({1, 2}), scalar_tensor(1.5, float64)).dtype() == float64);
  CHECK(to_vector<bool>(maximum(bool_t({true, false, false}), bool_t({false, false, true}))) ==
        std::vector<bool>{true, false, true});
  CHECK(to_vector<bool>(minimum(bool_t({true, false, true}), bool_t({false, false, true}))) ==
        std::vector<bool>{false, false, true});
  Tensor r1 = randn({3, 1}, float64), r2 = randn({4}, float64);
  check_binary(r1, r2, r1.maximum(r2), [](cld x, cld y) { return cld(std::max(x.real(), y.real())); }, 0);
  check_binary(r1, r2, r1.minimum(r2), [](cld x, cld y) { return cld(std::min(x.real(), y.real())); }, 0);
  CHECK_THROWS_WITH_AS(maximum(cplx_t({{1, 1}}), cplx_t({{1, 1}})), doctest::Contains("[maximum]"), Error);
  CHECK_THROWS_WITH_AS(minimum(cplx_t({{1, 1}}), real_t({1.0})), doctest::Contains("complex"), Error);

  Tensor x = real_t({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = real_t({2.0, 2.0, 1.0}).requires_grad_();
  maximum(x, y).sum().backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{0.0, 0.5, 1.0});
  CHECK(to_vector<double>(y.grad()) == std::vector<double>{1.0, 0.5, 0.0});
  Tensor u = real_t({1.0, 2.0, 3.0}).requires_grad_();
  Tensor v = real_t({2.0, 2.0, 1.0}).requires_grad_();
  minimum(u, v).sum().backward();
  CHECK(to_vector<double>(u.grad()) == std::vector<double>{1.0, 0.5, 0.0});
  CHECK(to_vector<double>(v.grad()) == std::vector<double>{0.0, 0.5, 1.0});
  Tensor p = real_t({0.3, -1.2, 2.2, 0.9}).requires_grad_();
  Tensor q = real_t({0.1, 0.5, -0.4}).reshape({3, 1}).requires_grad_();
  CHECK(gc([](const G& in) { return maximum(in[0], in[1]); }, {p, q}));
  CHECK(gc([](const G& in) { return minimum(in[0], in[1]); }, {p, q}));
  CHECK(ggc([](const G& in) { return maximum(in[0], in[1]) * in[0]; }, {p, q}));
}

TEST_CASE("atan2: quadrants, promotion, gradients") {
  Tensor y = real_t({1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 2.0}, float64);
  Tensor x = real_t({1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 0.0}, float64);
  for (Dtype dt : {float32, float64}) {
    Tensor yy = y.to(dt), xx = x.to(dt);
    Tensor r = atan2(yy, xx);
    CHECK(r.dtype() == dt);
    check_binary(yy, xx, r, [](cld a, cld b) { return cld(std::atan2(a.real(), b.real())); }, rtol_for(dt));
  }
  Tensor ri = atan2(int_t({1, -1}), int_t({0, 0}));
  CHECK(ri.dtype() == float32);
  check_binary(int_t({1, -1}), int_t({0, 0}), ri, [](cld a, cld b) { return cld(std::atan2(a.real(), b.real())); }, 1e-7);
  CHECK_THROWS_WITH_AS(atan2(cplx_t({{1, 1}}), real_t({1.0})), doctest::Contains("[atan2]"), Error);
  Tensor a = real_t({0.3, -1.2, 2.2}).requires_grad_();
  Tensor b = real_t({-0.5, 0.7}).reshape({2, 1}).requires_grad_();
  CHECK(gc([](const G& in) { return atan2(in[0], in[1]); }, {a, b}));
  CHECK(gc([](const G& in) { return in[0].atan2(in[1]); }, {a, b}));
  CHECK(ggc([](const G& in) { return atan2(in[0], in[1]); }, {a, b}));
}

// ---- complex / polar -------------------------------------------------------------------------------------
TEST_CASE("complex and polar: values, dtypes, errors, gradients") {
  for (Dtype dt : {float32, float64}) {
    Tensor re = real_t({1.0, -2.0, 0.5}, dt), im = real_t({0.25, 3.0}, Shape{2, 1}, dt);
    Tensor c = complex(re, im);
    CHECK(c.dtype() == to_complex(dt));
    CHECK(c.shape() == Shape{2, 3});
    check_binary(re, im, c, [](cld r, cld i) { return cld(r.real(), i.real()); }, 0);
    Tensor p = polar(re, im);
    CHECK(p.dtype() == to_complex(dt));
    check_binary(re, im, p, [](cld r, cld t) { return r.real() * cld(std::cos(t.real()), std::sin(t.real())); },
                 rtol_for(dt) * 2);
  }
  CHECK_THROWS_WITH_AS(complex(real_t({1.0}, float32), real_t({1.0}, float64)), doctest::Contains("[complex]"), Error);
  CHECK_THROWS_WITH_AS(complex(int_t({1}), int_t({1})), doctest::Contains("int64"), Error);
  CHECK_THROWS_WITH_AS(polar(cplx_t({{1, 0}}), cplx_t({{1, 0}})), doctest::Contains("[polar]"), Error);

  Tensor r = real_t({1.0, 2.5, 0.7}).requires_grad_();
  Tensor t = real_t({0.3, -1.2, 2.9}).requires_grad_();
  CHECK(gc([](const G& in) { return complex(in[0], in[1]); }, {r, t}));
  CHECK(gc([](const G& in) { return polar(in[0], in[1]); }, {r, t}));
  CHECK(gc([](const G& in) { return abs(complex(in[0], in[1])); }, {r, t}));
  CHECK(ggc([](const G& in) { return polar(in[0], in[1]); }, {r, t}));
  CHECK(ggc([](const G& in) { return complex(in[0], in[1]) * complex(in[1], in[0]); }, {r, t}));
  // complex(a, b).real() / .imag() give back the parts' gradients exactly
  Tensor a = real_t({1.0, 2.0}).requires_grad_(), b = real_t({3.0, 4.0}).requires_grad_();
  Tensor w = complex(a, b);
  (w.real() * 2.0 + w.imag() * 3.0).sum().backward();
  CHECK(to_vector<double>(a.grad()) == std::vector<double>{2.0, 2.0});
  CHECK(to_vector<double>(b.grad()) == std::vector<double>{3.0, 3.0});
}

// ---- comparisons and logical ops -------------------------------------------------------------------------
TEST_CASE("comparisons: bool results, promotion, NaN, complex only for eq/ne, scalar operators") {
  Tensor a = real_t({1.0, 2.0, kNaN, -1.0}, float32);
  Tensor b = real_t({1.0, 3.0, kNaN, -2.0}, float64);
  CHECK(eq(a, b).dtype() == bool_);
  CHECK(to_vector<bool>(eq(a, b)) == std::vector<bool>{true, false, false, false});
  CHECK(to_vector<bool>(ne(a, b)) == std::vector<bool>{false, true, true, true});
  CHECK(to_vector<bool>(lt(a, b)) == std::vector<bool>{false, true, false, false});
  CHECK(to_vector<bool>(le(a, b)) == std::vector<bool>{true, true, false, false});
  CHECK(to_vector<bool>(gt(a, b)) == std::vector<bool>{false, false, false, true});
  CHECK(to_vector<bool>(ge(a, b)) == std::vector<bool>{true, false, false, true});
  CHECK(to_vector<bool>(a == b) == to_vector<bool>(eq(a, b)));
  CHECK(to_vector<bool>(a != b) == to_vector<bool>(ne(a, b)));
  CHECK(to_vector<bool>(a < b) == to_vector<bool>(lt(a, b)));
  CHECK(to_vector<bool>(a <= b) == to_vector<bool>(le(a, b)));
  CHECK(to_vector<bool>(a > b) == to_vector<bool>(gt(a, b)));
  CHECK(to_vector<bool>(a >= b) == to_vector<bool>(ge(a, b)));
  CHECK(to_vector<bool>(a.eq(b)) == to_vector<bool>(eq(a, b)));
  CHECK(to_vector<bool>(a.ne(b)) == to_vector<bool>(ne(a, b)));
  CHECK(to_vector<bool>(a.lt(b)) == to_vector<bool>(lt(a, b)));
  CHECK(to_vector<bool>(a.le(b)) == to_vector<bool>(le(a, b)));
  CHECK(to_vector<bool>(a.gt(b)) == to_vector<bool>(gt(a, b)));
  CHECK(to_vector<bool>(a.ge(b)) == to_vector<bool>(ge(a, b)));
  // int vs float compares in float (1 == 1.5 is false), int tensor vs float scalar too
  CHECK(to_vector<bool>(int_t({1, -2, 0}) == real_t({1.5, -2.0, 0.5}, float32)) == std::vector<bool>{false, true, false});
  CHECK(to_vector<bool>(int_t({1, -2, 0}) < 0.5) == std::vector<bool>{false, true, true});
  CHECK(to_vector<bool>(int_t({1, -2, 0}) >= 0) == std::vector<bool>{true, false, true});
  CHECK(to_vector<bool>(int_t({1, 2}) == 2) == std::vector<bool>{false, true});
  CHECK(to_vector<bool>(int_t({1, 2}) != 2) == std::vector<bool>{true, false});
  CHECK(to_vector<bool>(int_t({1, 2}) <= 1) == std::vector<bool>{true, false});
  CHECK(to_vector<bool>(int_t({1, 2}) > 1) == std::vector<bool>{false, true});
  // float32 against a double scalar compares in float32 (PyTorch): 0.1f == 0.1 is true
  CHECK(to_vector<bool>(real_t({0.1}, float32) == 0.1)[0]);
  Tensor z = cplx_t({{1, 2}, {0, 0}, {1, 0}});
  CHECK(to_vector<bool>(z == cplx_t({{1, 2}, {0, 1}, {1, 0}})) == std::vector<bool>{true, false, true});
  CHECK(to_vector<bool>(z != real_t({1.0})) == std::vector<bool>{true, true, false});
  CHECK(to_vector<bool>(z == cd(0, 0)) == std::vector<bool>{false, true, false});
  CHECK_THROWS_WITH_AS(lt(z, z), doctest::Contains("[lt]"), Error);
  CHECK_THROWS_WITH_AS(z > 0, doctest::Contains("complex"), Error);
  CHECK_THROWS_WITH_AS(real_t({1.0}) <= cd(1, 1), doctest::Contains("[le]"), Error);
  // broadcasting with 0-d and size-0
  CHECK((randn({2, 3}) > scalar_tensor(0.0)).shape() == Shape{2, 3});
  CHECK((zeros({0, 2}) == zeros({2})).shape() == Shape{0, 2});
  Tensor r1 = randn({3, 1}, float64), r2 = randn({2}, float64);
  check_binary(r1, r2, (r1 < r2).to(float64), [](cld x, cld y) { return cld(x.real() < y.real() ? 1 : 0); }, 0);
  // no gradient
  Tensor g = real_t({1.0}).requires_grad_();
  CHECK(!(g > 0).requires_grad());
}

TEST_CASE("logical ops: nonzero is true, bool results, operators") {
  Tensor a = int_t({0, 3, 0, -1});
  Tensor b = real_t({0.0, 0.0, 2.5, kNaN}, float32);
  CHECK(logical_and(a, b).dtype() == bool_);
  CHECK(to_vector<bool>(logical_and(a, b)) == std::vector<bool>{false, false, false, true});
  CHECK(to_vector<bool>(logical_or(a, b)) == std::vector<bool>{false, true, true, true});
  CHECK(to_vector<bool>(logical_xor(a, b)) == std::vector<bool>{false, true, true, false});
  Tensor z = cplx_t({{0, 0}, {0, 1}});
  CHECK(to_vector<bool>(logical_xor(z, int_t({1, 1}))) == std::vector<bool>{true, false});
  Tensor p = bool_t({true, true, false, false}), q = bool_t({true, false, true, false});
  CHECK(to_vector<bool>(p & q) == std::vector<bool>{true, false, false, false});
  CHECK(to_vector<bool>(p | q) == std::vector<bool>{true, true, true, false});
  CHECK(to_vector<bool>(p ^ q) == std::vector<bool>{false, true, true, false});
  CHECK(to_vector<bool>(~p) == std::vector<bool>{false, false, true, true});
  // ~ is torch's bitwise not (bitwise on int64: tests/test_bitwise.cpp); logical_not keeps nonzero-is-true
  CHECK(to_vector<bool>(logical_not(a)) == std::vector<bool>{true, false, true, false});
  CHECK((p.reshape({4, 1}) & q).shape() == Shape{4, 4});
  CHECK_THROWS_WITH_AS(logical_or(p, bool_t({true, false})), doctest::Contains("[logical_or]"), Error);
}

// ---- where / clamp / masked_fill ---------------------------------------------------------------------------
TEST_CASE("where: broadcasting, promotion, errors") {
  Tensor c = bool_t({true, false, true}).reshape({3, 1});
  Tensor a = int_t({1, 2, 3, 4}).reshape({1, 4});
  Tensor b = scalar_tensor(2.5, float32);
  Tensor w = where(c, a, b);
  CHECK(w.shape() == Shape{3, 4});
  CHECK(w.dtype() == float32);
  auto v = to_vector<float>(w);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(v[static_cast<std::size_t>(i * 4 + j)] == (i != 1 ? float(j + 1) : 2.5f));
  CHECK(where(bool_t({true}), int_t({1}), int_t({2})).dtype() == int64);
  CHECK(where(bool_t({true, false}), cplx_t({{1, 1}, {2, 2}}, complex64), real_t({5.0, 6.0}, float64)).dtype() ==
        complex128);
  CHECK(to_vector<cd>(where(bool_t({true, false}), cplx_t({{1, 1}, {2, 2}}), real_t({5.0, 6.0}))) ==
        std::vector<cd>{{1, 1}, {6, 0}});
  CHECK_THROWS_WITH_AS(where(int_t({1}), a, b), doctest::Contains("bool"), Error);
  CHECK_THROWS_WITH_AS(where(bool_t({true, false}), zeros({3}), zeros({3})), doctest::Contains("(2,)"), Error);
}

TEST_CASE("where with a number for either branch: values, torch's promotion, gradients, errors") {
  const Tensor c = bool_t({true, false, true});
  const Tensor i = int_t({1, 2, 3}), f = real_t({0.5, -1.0, 2.0}, float32);
  // an int tensor and a float number: the default float dtype; a float32 tensor keeps float32
  CHECK(where(c, i, 0.5).dtype() == default_dtype());
  CHECK(to_vector<double>(where(c, i, 0.5).to(float64)) == std::vector<double>{1.0, 0.5, 3.0});
  CHECK(where(c, f, 7).dtype() == float32);
  CHECK(to_vector<float>(where(c, 7, f)) == std::vector<float>{7.0f, -1.0f, 7.0f});
  CHECK(where(c, i, 4).dtype() == int64);
  CHECK(where(c, f, std::complex<double>(0, 1)).dtype() == complex64);
  // the gradient reaches the tensor branch where it was picked
  Tensor x = real_t({0.5, -1.0, 2.0}).requires_grad_();
  where(c, x, -3.0).sum().backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{1, 0, 1});
  CHECK(gc([c](const G& in) { return where(c, 2.0, in[0].sin()); }, {x}));
  CHECK_THROWS_WITH_AS(where(int_t({1, 0, 1}), f, 1.0), doctest::Contains("[where] expected a bool condition"), Error);
  CHECK_THROWS_WITH_AS(where(bool_t({true, false}), 1.0, f), doctest::Contains("[where]"), Error);
}

TEST_CASE("where: gradients masked to each branch (broadcast), gradgradcheck") {
  Tensor c = bool_t({true, false, true}).reshape({3, 1});
  Tensor a = real_t({0.5, -1.0, 2.0, 0.1}).reshape({1, 4}).requires_grad_();
  Tensor b = real_t({0.3, 0.7, -0.2}).reshape({3, 1}).requires_grad_();
  where(c, a, b).sum().backward();
  CHECK(to_vector<double>(a.grad()) == std::vector<double>{2, 2, 2, 2});
  CHECK(to_vector<double>(b.grad()) == std::vector<double>{0, 4, 0});
  CHECK(gc([c](const G& in) { return where(c, in[0], in[1]); }, {a, b}));
  CHECK(ggc([c](const G& in) { return where(c, in[0] * in[0], in[1].sin()); }, {a, b}));
  Tensor z = cplx_t({{1, 2}, {0.5, -1}, {0, 1}}).requires_grad_();
  CHECK(gc([](const G& in) { return where(bool_t({true, false, true}), in[0] * in[0], in[0].conj()); }, {z}));
}

// the CPU engine's ternary rows (src/core/elementwise.hpp): every input contiguous, one a single broadcast
// element in any slot, other layouts, and outputs of 8 MiB or more (streaming stores); where's and
// masked_fill's branch-free select keeps every bit (NaN payloads, -0)
TEST_CASE("where, masked_fill, addcmul, lerp: every row kind of the ternary engine, bits kept") {
  manual_seed(31);
  for (std::int64_t n : {std::int64_t{1000}, std::int64_t{3} << 20}) {  // 3M float32: a 12 MiB output
    CAPTURE(n);
    const Tensor x = randn({n}), y = randn({n}), m = randn({n}) > 0.0, w = rand({n});
    const Tensor one = scalar_tensor(0.25f), mone = ones({1}, Dtype::Bool);
    const auto xv = to_vector<float>(x), yv = to_vector<float>(y);
    const auto mv = to_vector<bool>(m);
    const auto pick = [&](const Tensor& got, const std::function<float(std::size_t)>& want) {
      const auto g = to_vector<float>(got);
      bool same = g.size() == static_cast<std::size_t>(n);
      for (std::size_t i = 0; same && i < g.size(); ++i) {
        const float v = want(i);
        same = std::memcmp(&g[i], &v, sizeof v) == 0;
      }
      return same;
    };
    CHECK(pick(where(m, x, y), [&](std::size_t i) { return mv[i] ? xv[i] : yv[i]; }));
    CHECK(pick(where(m, x, 0.5), [&](std::size_t i) { return mv[i] ? xv[i] : 0.5f; }));
    CHECK(pick(where(m, -1.5, y), [&](std::size_t i) { return mv[i] ? -1.5f : yv[i]; }));
    CHECK(pick(where(mone, x, y), [&](std::size_t i) { return xv[i]; }));
    CHECK(pick(x.masked_fill(m, 2.0), [&](std::size_t i) { return mv[i] ? 2.0f : xv[i]; }));
    CHECK(equal(addcmul(x, y, one), x + y * 0.25));
    CHECK(equal(addcmul(one, x, y), 0.25 + x * y));
    CHECK(equal(addcmul(x, one, y, 2), x + 2 * (0.25 * y)));
    CHECK(equal(lerp(x, y, one), lerp(x, y, 0.25)));
    // a strided input takes the general loop with the same values
    const Tensor xs = randn({2 * n}).narrow(0, 0, 2 * n).reshape({n, 2}).select(1, 0);
    CHECK(!xs.is_contiguous());
    CHECK(equal(where(m, xs, y), where(m, xs.contiguous(), y)));
    CHECK(equal(addcmul(xs, y, w), addcmul(xs.contiguous(), y, w)));
  }
  // bits: NaN payloads, -0, infinities and complex parts pass through unchanged
  const double nan2 = -std::numeric_limits<double>::quiet_NaN();
  const Tensor a = real_t({nan2, -0.0, kInf, 1.0}), b = real_t({0.0, 0.0, -kInf, kNaN});
  const Tensor c = bool_t({true, true, false, false});
  const auto got = to_vector<double>(where(c, a, b));
  CHECK(std::signbit(got[0]));
  CHECK(std::isnan(got[0]));
  CHECK((got[1] == 0.0 && std::signbit(got[1])));
  CHECK(got[2] == -kInf);
  CHECK(std::isnan(got[3]));
  const Tensor z = cplx_t({{1, -2}, {3, 4}}), zz = cplx_t({{-5, 6}, {7, -8}});
  CHECK(to_vector<cd>(where(bool_t({false, true}), z, zz)) == std::vector<cd>{{-5, 6}, {3, 4}});
  CHECK(to_vector<cd>(where(bool_t({true, false}), z.to(complex64), zz.to(complex64))) == std::vector<cd>{{1, -2}, {7, -8}});
  CHECK(to_vector<bool>(where(bool_t({true, false}), bool_t({false, false}), bool_t({true, true}))) == std::vector<bool>{false, true});
  CHECK(to_vector<std::int64_t>(where(bool_t({true, false}), int_t({-1, 2}), int_t({5, std::numeric_limits<std::int64_t>::min()}))) ==
        std::vector<std::int64_t>{-1, std::numeric_limits<std::int64_t>::min()});
}

TEST_CASE("clamp and clamp_: values, dtype rules, errors, gradients") {
  Tensor x = real_t({-2.0, -0.5, 0.0, 0.7, 3.0, kNaN}, float32);
  auto c = to_vector<float>(clamp(x, -1.0, 1.0));
  CHECK(std::vector<float>(c.begin(), c.end() - 1) == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.7f, 1.0f});
  CHECK(std::isnan(c.back()));
  CHECK(clamp(x, -1.0, 1.0).dtype() == float32);
  auto lo = to_vector<float>(clamp(x, 0.0));
  CHECK(lo[0] == 0.0f);
  CHECK(lo[4] == 3.0f);
  auto hi = to_vector<float>(x.clamp(std::nullopt, 0.0));
  CHECK(hi[0] == -2.0f);
  CHECK(hi[4] == 0.0f);
  CHECK(std::isnan(hi[5]));
  // a missing bound leaves infinities and the type's ends alone, NaN stays NaN
  const auto inf = to_vector<double>(clamp(real_t({-kInf, kInf, kNaN, -0.0}), 0.0));
  CHECK(inf[0] == 0.0);
  CHECK(inf[1] == kInf);
  CHECK(std::isnan(inf[2]));
  const auto ninf = to_vector<double>(clamp(real_t({-kInf, kInf, kNaN}), std::nullopt, 1.0));
  CHECK(ninf[0] == -kInf);
  CHECK(ninf[1] == 1.0);
  CHECK(std::isnan(ninf[2]));
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();
  CHECK(to_vector<std::int64_t>(clamp(int_t({kMin, kMax, 0}), std::nullopt, 5)) == std::vector<std::int64_t>{kMin, 5, 0});
  CHECK(to_vector<std::int64_t>(clamp(int_t({kMin, kMax, 0}), -5)) == std::vector<std::int64_t>{-5, kMax, 0});
  // min > max: everything becomes max (as PyTorch)
  auto inv = to_vector<float>(clamp(real_t({-3.0, 0.0, 3.0}, float32), 1, -1));
  CHECK(inv == std::vector<float>{-1.0f, -1.0f, -1.0f});
  CHECK(clamp(int_t({1, -2, 0}), 0.5).dtype() == float32);
  CHECK(to_vector<float>(clamp(int_t({1, -2, 0}), 0.5)) == std::vector<float>{1.0f, 0.5f, 0.5f});
  CHECK(clamp(int_t({1, -2, 5}), 0, 3).dtype() == int64);
  CHECK(to_vector<std::int64_t>(clamp(int_t({1, -2, 5}), 0, 3)) == std::vector<std::int64_t>{1, 0, 3});
  CHECK(clamp(bool_t({true, false}), 0, 1).dtype() == int64);
  CHECK_THROWS_WITH_AS(clamp(x, std::nullopt, std::nullopt), doctest::Contains("[clamp]"), Error);
  CHECK_THROWS_WITH_AS(clamp(cplx_t({{1, 1}}), 0.0), doctest::Contains("complex"), Error);
  CHECK_THROWS_WITH_AS(clamp(x, cd(0, 1)), doctest::Contains("[clamp]"), Error);

  Tensor y = real_t({-2.0, 0.5, 4.0});
  y.clamp_(-1.0, 1.0);
  CHECK(to_vector<double>(y) == std::vector<double>{-1.0, 0.5, 1.0});
  Tensor yi = int_t({-5, 5});
  yi.clamp_(-1, 1);
  CHECK(to_vector<std::int64_t>(yi) == std::vector<std::int64_t>{-1, 1});
  CHECK_THROWS_WITH_AS(yi.clamp_(0.5), doctest::Contains("[clamp_]"), Error);
  CHECK(to_vector<std::int64_t>(yi) == std::vector<std::int64_t>{-1, 1});

  Tensor g = real_t({-2.0, -0.5, 0.3, 1.5, 1.0}).requires_grad_();
  clamp(g, -1.0, 1.0).sum().backward();
  CHECK(to_vector<double>(g.grad()) == std::vector<double>{0, 1, 1, 0, 1});  // boundary counts as inside
  Tensor h = real_t({-2.0, -0.5, 0.3, 1.5}).requires_grad_();
  CHECK(gc([](const G& in) { return clamp(in[0], -1.0, 1.0); }, {h}));
  CHECK(gc([](const G& in) { return clamp(in[0], std::nullopt, 0.0) * in[0]; }, {h}));
  CHECK(ggc([](const G& in) { return clamp(in[0] * in[0], 0.2, 2.0); }, {h}));
  // clamp_ on a non-leaf records the gradient
  Tensor k = real_t({-2.0, 0.5, 4.0}).requires_grad_();
  Tensor m = k * 1.0;
  m.clamp_(-1.0, 1.0);
  (m * m).sum().backward();
  CHECK(to_vector<double>(k.grad()) == std::vector<double>{0.0, 1.0, 0.0});
}

TEST_CASE("masked_fill and masked_fill_: values, broadcasting, errors, gradients") {
  Tensor x = real_t({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, Shape{2, 3});
  Tensor mrow = bool_t({true, false, true});
  Tensor y = masked_fill(x, mrow, -1.0);
  CHECK(y.dtype() == float64);
  CHECK(to_vector<double>(y) == std::vector<double>{-1, 2, -1, -1, 5, -1});
  CHECK(to_vector<double>(x.masked_fill(scalar_tensor(true), 0.0)) == std::vector<double>(6, 0.0));
  CHECK(to_vector<std::int64_t>(int_t({1, 2}).masked_fill(bool_t({true, false}), 2.7)) == std::vector<std::int64_t>{2, 2});
  CHECK(to_vector<bool>(bool_t({false, false}).masked_fill(bool_t({true, false}), 5)) == std::vector<bool>{true, false});
  CHECK(to_vector<cd>(cplx_t({{1, 1}, {2, 2}}).masked_fill(bool_t({false, true}), cd(0, 3))) ==
        std::vector<cd>{{1, 1}, {0, 3}});
  CHECK_THROWS_WITH_AS(x.masked_fill(int_t({1, 0, 1}), 0.0), doctest::Contains("bool"), Error);
  CHECK_THROWS_WITH_AS(x.masked_fill(bool_t({true, false}), 0.0), doctest::Contains("[masked_fill]"), Error);
  CHECK_THROWS_WITH_AS(x.masked_fill(zeros({2, 2, 3}, bool_), 0.0), doctest::Contains("(2, 2, 3)"), Error);
  CHECK_THROWS_WITH_AS(x.masked_fill(mrow, cd(1, 1)), doctest::Contains("complex"), Error);

  Tensor xi = x.clone();
  xi.masked_fill_(mrow, 9.0);
  CHECK(to_vector<double>(xi) == std::vector<double>{9, 2, 9, 9, 5, 9});
  CHECK_THROWS_WITH_AS(xi.masked_fill_(bool_t({true}).reshape({1, 1, 1}), 0.0), doctest::Contains("[masked_fill_]"), Error);
  CHECK(to_vector<double>(xi) == std::vector<double>{9, 2, 9, 9, 5, 9});

  Tensor a = real_t({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, Shape{2, 3}).requires_grad_();
  masked_fill(a, mrow, 0.0).sum().backward();
  CHECK(to_vector<double>(a.grad()) == std::vector<double>{0, 1, 0, 0, 1, 0});
  CHECK(gc([mrow](const G& in) { return masked_fill(in[0] * in[0], mrow, 3.0); }, {a}));
  CHECK(ggc([mrow](const G& in) { return masked_fill(in[0] * in[0], mrow, 3.0); }, {a}));
  Tensor z = cplx_t({{1, 2}, {0.5, -1}, {0, 1}}).requires_grad_();
  CHECK(gc([mrow](const G& in) { return masked_fill(in[0] * in[0], mrow, cd(1, 1)); }, {z}));
  // masked_fill_ on a non-leaf records the gradient
  Tensor b = real_t({1.0, 2.0, 3.0}).requires_grad_();
  Tensor c = b * 2.0;
  c.masked_fill_(bool_t({false, true, false}), 7.0);
  (c * c).sum().backward();
  CHECK(to_vector<double>(b.grad()) == std::vector<double>{8.0, 0.0, 24.0});
}

TEST_CASE("arithmetic gradients with broadcasting and promotion (add sub mul div, complex)") {
  Tensor a = randn({2, 3}, float64).requires_grad_();
  Tensor b = randn({3}, float64).requires_grad_();
  CHECK(gc([](const G& in) { return (in[0] + in[1]) * (in[0] - in[1] * 2.0) / (in[1] * in[1] + 1.0); }, {a, b}));
  CHECK(gc([](const G& in) { return in[0].add(in[1], 0.5).sub(in[0], 2.0); }, {a, b}));
  Tensor z = randn({3}, complex128).requires_grad_();
  CHECK(gc([](const G& in) { return in[0] * in[1] / (in[1] + cd(2, 1)); }, {a, z}));
  CHECK(ggc([](const G& in) { return in[0] * in[1] / (in[1] * in[1] + 1.0); }, {a, b}));
  // in-place mul_/div_ on a non-leaf record the gradient (the saved operand is not the overwritten self)
  Tensor k = real_t({1.0, 2.0, 3.0}).requires_grad_();
  Tensor o = real_t({2.0, 4.0, 0.5}).requires_grad_();
  Tensor m = k * 1.0;
  m.mul_(o);
  m.div_(o * o);
  (m * m).sum().backward();  // m = k / o, d(m^2)/dk = 2k/o^2, d/do = -2k^2/o^3
  auto gk = to_vector<double>(k.grad()), go = to_vector<double>(o.grad());
  for (std::size_t i = 0; i < 3; ++i) {
    const double kv = 1.0 + static_cast<double>(i), ov = std::vector<double>{2.0, 4.0, 0.5}[i];
    CHECK(gk[i] == doctest::Approx(2 * kv / (ov * ov)).epsilon(1e-14));
    CHECK(go[i] == doctest::Approx(-2 * kv * kv / (ov * ov * ov)).epsilon(1e-14));
  }
}

TEST_CASE("complex with real of the same precision: widened per element, same values as the converted path") {
  for (Dtype cd : {complex64, complex128}) {
    const Dtype rd = to_real(cd);
    Tensor z = randn({3, 5}, cd), r = randn({5}, rd), r2 = randn({3, 5}, rd);
    const double tol = cd == complex64 ? 1e-6 : 1e-14;
    auto close = [&](const Tensor& got, const Tensor& want) {
      CHECK(got.dtype() == cd);
      CHECK(got.shape() == want.shape());
      CHECK((got - want).abs().max().item<double>() <= tol * (1 + want.abs().max().item<double>()));
    };
    // reference: the real operand converted to complex first
    close(z * r, z * r.to(cd));
    close(r * z, r.to(cd) * z);
    close(z + r2, z + r2.to(cd));
    close(r2 - z, r2.to(cd) - z);
    close(z / r, z / r.to(cd));
    close(r / z, r.to(cd) / z);
    // against the textbook formula element by element
    const auto zv = to_vector<std::complex<double>>(z.to(complex128));
    const auto rv = to_vector<double>(r.to(float64));
    const auto pv = to_vector<std::complex<double>>((z * r).to(complex128));
    for (std::size_t i = 0; i < pv.size(); ++i) {
      const auto want = zv[i] * rv[i % 5];
      CHECK(std::abs(pv[i] - want) <= tol * (1 + std::abs(want)));
    }
  }
  // gradients flow to both operands (the real one gets the real part)
  Tensor z = randn({4}, complex128).requires_grad_(true), r = randn({4}, float64).requires_grad_(true);
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[1]; }, {z, r}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return in[1] / in[0] + in[0]; }, {z, r}));
}

TEST_CASE("complex multiplication is the textbook product (as PyTorch), NaN where an infinity meets a zero") {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor a = from_vector(std::vector<std::complex<double>>{{inf, 0.0}, {1.0, 2.0}});
  Tensor b = from_vector(std::vector<std::complex<double>>{{1.0, 0.0}, {3.0, -4.0}});
  auto p = to_vector<std::complex<double>>(a * b);
  CHECK(p[0].real() == inf);
  CHECK(std::isnan(p[0].imag()));  // torch 1.13: inf+nanj; C99 Annex G (std::complex) would recover 0
  CHECK(p[1] == std::complex<double>(11.0, 2.0));
}

TEST_CASE("complex division: within 1.6 ulps of long double from subnormal to huge parts, no spurious overflow, C99's infinities and zeros") {
  // Note [complex division]. Parts from subnormal to near overflow; the reference divides the same
  // values in long double, whose range no quotient here leaves
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Dtype dt : {complex64, complex128}) {
    CAPTURE(dt);
    const bool f = dt == complex64;
    const int emin = f ? -149 : -1074, emax = f ? 127 : 1023;
    std::uniform_int_distribution<int> e(emin, emax), e_near(-3, 3);
    std::vector<cd> n, w;
    for (int i = 0; i < 40000; ++i) {
      auto part = [&] { return std::ldexp(u(rng), i % 2 ? e(rng) : e_near(rng)); };
      const double a = part(), b = i % 7 ? part() : 0.0, c = part(), d = part();
      n.emplace_back(a, b);
      w.emplace_back(c, d);
    }
    for (int i = 0; i < 4000; ++i) {  // n = i k w up to the rounding of n's parts: the real part cancels
      const double c = std::ldexp(u(rng), e_near(rng)), d = std::ldexp(u(rng), e_near(rng)), k = u(rng);
      n.emplace_back(-k * d, k * c);
      w.emplace_back(c, d);
    }
    const Tensor nt = from_vector(n).to(dt), wt = from_vector(w).to(dt);
    const auto nv = to_vector<cd>(nt.to(complex128)), wv = to_vector<cd>(wt.to(complex128));
    const Tensor q_t = nt / wt;
    const auto q = to_vector<cd>(q_t.to(complex128));
    const long double ulp = f ? 0x1p-23L : 0x1p-52L, small = f ? 0x1p-100L : 0x1p-1000L, big = f ? 0x1p126L : 0x1p1022L;
    long double worst = 0;
    int checked = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const cld ref = cld(nv[i]) / cld(wv[i]);
      const long double m = std::abs(ref);
      if (!(m >= small && m <= big)) continue;  // a quotient that underflows or overflows the dtype
      ++checked;
      worst = std::max(worst, std::abs(cld(q[i]) - ref) / m / ulp);
    }
    CAPTURE(static_cast<double>(worst));
    CHECK(checked > 30000);
    CHECK(worst <= (f ? 1.0L : 1.6L));
    if (f) {
      // complex64 (float_div): each part within half an ulp of itself and 2^-27 ulp more, cancelling parts
      // and subnormal ones too. The reference forms each part from exact long double products, rounded once.
      long double worst_part = 0;
      for (std::size_t i = 0; i < q.size(); ++i) {
        const long double a = nv[i].real(), b = nv[i].imag(), c = wv[i].real(), d = wv[i].imag(), den = c * c + d * d;
        const long double want[2] = {(a * c + b * d) / den, (b * c - a * d) / den};
        const double got[2] = {q[i].real(), q[i].imag()};
        for (int k = 0; k < 2; ++k) {
          if (!(std::fabs(want[k]) <= std::numeric_limits<float>::max())) continue;  // overflows float
          const int e = want[k] == 0 ? -149 : std::max(std::ilogb(want[k]) - 23, -149);
          worst_part = std::max(worst_part, std::fabs(got[k] - want[k]) / std::ldexp(1.0L, e));
        }
      }
      CAPTURE(static_cast<double>(worst_part));
      CHECK(worst_part <= 0.5L + 0x1p-27L);
    }
    // the vectorized rows (a / b: Note [vector complex division]; broadcast and transposed operands go
    // through buffers) give the per-element path's quotients (div_) bit for bit
    auto same_bits = [](const Tensor& x, const Tensor& y) {
      const auto u = to_vector<cd>(x.to(complex128)), v = to_vector<cd>(y.to(complex128));
      return u.size() == v.size() && std::memcmp(u.data(), v.data(), u.size() * sizeof(cd)) == 0;
    };
    CHECK(same_bits(q_t, nt.clone().div_(wt)));
    const Tensor n2 = nt.narrow(0, 0, 40000).reshape({200, 200}), w2 = wt.narrow(0, 0, 40000).reshape({200, 200});
    CHECK(same_bits(n2 / w2.narrow(0, 7, 1), n2.clone().div_(w2.narrow(0, 7, 1))));
    CHECK(same_bits(n2.t() / w2.t(), n2.t().contiguous().div_(w2.t())));
  }
  // no spurious overflow or underflow, exact scaling by powers of two, and C99 Annex G's infinities
  // and zeros (as libgcc's): nonzero / 0 = inf, inf / finite = inf, finite / inf = 0
  const double nz = -0.0, big = std::ldexp(1.0, 1000);
  struct Case { cd n, w, q; };
  const std::vector<Case> common = {
      {{3, 4}, {big, 0}, {3 / big, 4 / big}},         {{1, 2}, {0, 0}, {kInf, kInf}},
      {{1, 0}, {0, 0}, {kInf, kNaN}},                   {{-1, 0}, {0, 0}, {-kInf, kNaN}},
      {{1, 2}, {nz, 0}, {-kInf, -kInf}},                {{0, 0}, {0, 0}, {kNaN, kNaN}},
      {{kNaN, 1}, {0, 0}, {kNaN, kInf}},                {{1, 1}, {kNaN, 0}, {kNaN, kNaN}},
      {{kInf, 0}, {1, 0}, {kInf, kNaN}},                {{kInf, kInf}, {1, 2}, {kInf, kNaN}},
      {{1, 2}, {kInf, 0}, {0, 0}},                      {{1, 2}, {-kInf, kInf}, {0, nz}},
      {{0, 0}, {-1, 0}, {nz, nz}},                      {{6, -8}, {0, 2}, {-4, -3}}};
  const double big64 = std::ldexp(1.0, 1000), sub64 = std::ldexp(1.0, -1070), sub32 = std::ldexp(1.0, -140);
  const std::vector<Case> c128 = {{{1, 0}, {1e-310, 0}, {kInf, 0}},           // 1e310 overflows; the imaginary part stays 0
                                  {{1e308, 1e308}, {2, 2}, {5e307, 0}},        // 2e308 would overflow in a + b r
                                  {{sub64, sub64}, {sub64, 0}, {1, 1}},        // subnormal parts scaled exactly
                                  {{big64, 0}, {1.0 / big64, 0}, {kInf, 0}}};  // overflows only in the quotient
  const double f_max = std::numeric_limits<float>::max();
  const std::vector<Case> c64 = {{{1, 0}, {1e-40, 0}, {kInf, 0}},
                                 {{f_max, f_max}, {2, 2}, {f_max / 2, 0}},
                                 {{sub32, sub32}, {sub32, 0}, {1, 1}}};
  auto same = [](double got, double want) {
    return std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want);
  };
  for (Dtype dt : {complex64, complex128}) {
    std::vector<Case> cases = common;
    for (const Case& c : dt == complex64 ? c64 : c128) cases.push_back(c);
    std::vector<cd> n, w;
    for (const Case& c : cases) {
      n.push_back(c.n);
      w.push_back(c.w);
    }
    Tensor nt = from_vector(n).to(dt);
    const Tensor wt = from_vector(w).to(dt);
    const auto q = to_vector<cd>((nt / wt).to(complex128));
    nt.div_(wt);  // the in-place form divides the same way
    const auto q_inplace = to_vector<cd>(nt.to(complex128));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(dt);
      CAPTURE(cases[i].n);
      CAPTURE(cases[i].w);
      CAPTURE(q[i]);
      const cd want = dt == complex64 ? cd(std::complex<float>(cases[i].q)) : cases[i].q;
      CHECK(same(q[i].real(), want.real()));
      CHECK(same(q[i].imag(), want.imag()));
      CHECK(same(q_inplace[i].real(), want.real()));
      CHECK(same(q_inplace[i].imag(), want.imag()));
    }
  }
  // rsqrt and sigmoid of complex numbers divide the same way: 1 / sqrt(-4 + 0i) = 0 - 0.5i,
  // sigmoid(-800 + 0i) = 1 / (1 + e^800) = 0 + 0i (e^800 is inf in double), not NaN
  const auto r = to_vector<cd>(rsqrt(cplx_t({{-4, 0}, {0, 2}})));
  CHECK(same(r[0].real(), 0.0));
  CHECK(same(r[0].imag(), -0.5));
  CHECK(std::abs(r[1] - cd(0.5, -0.5)) <= 1e-16);
  const auto sg = to_vector<cd>(sigmoid(cplx_t({{-800, 0}, {0, 0}})));
  CHECK(same(sg[0].real(), 0.0));
  CHECK(same(sg[0].imag(), 0.0));
  CHECK(sg[1] == cd(0.5, 0));
}

TEST_CASE("isclose, allclose and equal: torch's rules, promotion, broadcasting, errors") {
  const Tensor a = real_t({1, 1 + 1e-6, 1 + 1e-3, kInf, -kInf, kNaN, 0, 5});
  const Tensor b = real_t({1, 1, 1, kInf, kInf, kNaN, 1e-9, kInf});
  const std::vector<bool> want = {true, true, false, true, false, false, true, false};
  CHECK(to_vector<bool>(isclose(a, b)) == want);
  std::vector<bool> want_nan = want;
  want_nan[5] = true;
  CHECK(to_vector<bool>(isclose(a, b, 1e-5, 1e-8, true)) == want_nan);
  CHECK(to_vector<bool>(isclose(a, b, 0, 0)) == std::vector<bool>{true, false, false, true, false, false, false, false});
  CHECK(to_vector<bool>(isclose(a, b, 1e9, 1e9))[7] == false);  // a finite value is never close to an infinity
  // float32 vs float64 promote to float64: 1 + 1e-7 differs from float32(1 + 1e-7) by ~1e-7
  CHECK(isclose(real_t({1 + 1e-7}, float32), real_t({1 + 1e-7}), 0, 1e-6).item<bool>());
  CHECK_FALSE(isclose(real_t({1 + 1e-7}, float32), real_t({1 + 1e-7}), 0, 1e-9).item<bool>());
  // integers compare in float64, so tolerances apply
  CHECK(to_vector<bool>(isclose(int_t({1, 2}), int_t({1, 3}))) == std::vector<bool>{true, false});
  CHECK(to_vector<bool>(isclose(int_t({1, 2}), int_t({1, 3}), 0, 1)) == std::vector<bool>{true, true});
  // complex: the modulus of the difference
  CHECK(isclose(cplx_t({cd(1, 1)}), cplx_t({cd(1, 1 + 1e-7)})).item<bool>());
  CHECK_FALSE(isclose(cplx_t({cd(1, 1)}), cplx_t({cd(1 + 1e-4, 1)})).item<bool>());
  // broadcasting, and no gradient
  const Tensor col = real_t({0, 1}, {2, 1}).requires_grad_();
  const Tensor c = isclose(col, real_t({0, 1, 2}));
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.dtype() == bool_);
  CHECK_FALSE(c.requires_grad());
  CHECK(to_vector<bool>(c) == std::vector<bool>{true, false, false, false, true, false});

  CHECK(allclose(a.narrow(0, 0, 2), b.narrow(0, 0, 2)));
  CHECK_FALSE(allclose(a, b));
  CHECK(allclose(a, b, 1e-2, 0, true) == false);  // -inf vs inf
  CHECK(allclose(a.narrow(0, 0, 4), b.narrow(0, 0, 4), 1e-2));
  CHECK(allclose(zeros({0}), zeros({3, 0})));  // empty: vacuously true

  CHECK(equal(a.narrow(0, 0, 1), b.narrow(0, 0, 1)));
  CHECK(equal(int_t({1, 2}), real_t({1, 2})));  // values, after promotion
  CHECK_FALSE(equal(a, a));                     // NaN is never equal
  CHECK_FALSE(equal(real_t({1, 2}), real_t({1, 2}, {1, 2})));  // shapes differ
  CHECK_FALSE(equal(real_t({1, 2}), real_t({1, 3})));

  CHECK_THROWS_WITH_AS(isclose(a, b, -1), doctest::Contains("[isclose] rtol and atol must be non-negative (got rtol=-1"), Error);
  CHECK_THROWS_WITH_AS(allclose(a, b, 1e-5, kNaN), doctest::Contains("[isclose] rtol and atol must be non-negative"), Error);
  CHECK_THROWS_WITH_AS(isclose(real_t({1, 2}), real_t({1, 2, 3})), doctest::Contains("[isclose]"), Error);
}

// ---- addcmul / addcdiv (Note [fused multiply-add]) -----------------------------------------------------
TEST_CASE("addcmul and addcdiv: values against long double with broadcasting, the composition bit for bit") {
  manual_seed(11);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const bool cplx = is_complex(dt);
    const Tensor x = randn({3, 1, 4}, dt), a = randn({5, 1}, dt), b = randn({1, 4}, dt) + 3.0;
    const Scalar v = cplx ? Scalar(cd(0.5, -2.0)) : Scalar(0.75);
    const cld vl(v.to_complex().real(), v.to_complex().imag());
    for (bool div : {false, true}) {
      CAPTURE(div);
      const Tensor got = div ? addcdiv(x, a, b, v) : addcmul(x, a, b, v);
      CHECK(got.dtype() == dt);
      CHECK(got.shape() == Shape{3, 5, 4});
      const auto xv = to_vector<cd>(x), av = to_vector<cd>(a), bv = to_vector<cd>(b), ov = to_vector<cd>(got);
      for (std::int64_t k = 0; k < got.numel(); ++k) {
        const auto at = [&](const std::vector<cd>& w, const Tensor& t) {
          const cd e = w[static_cast<std::size_t>(bcast_index(t.shape(), got.shape(), k))];
          return cld(e.real(), e.imag());
        };
        const cld want = at(xv, x) + vl * (div ? at(av, a) / at(bv, b) : at(av, a) * at(bv, b));
        CHECK(close(ov[static_cast<std::size_t>(k)], want, 8 * rtol_for(dt)));
      }
      // the composition x + v * (a op b), bit for bit (mul's and div's kernels, one rounding per step)
      CHECK(equal(got, x + v * (div ? a / b : a * b)));
    }
    CHECK(equal(addcmul(x, a, b), x + a * b));  // value 1 by default
    CHECK(equal(addcdiv(x, a, b), x + a / b));
  }
  // int64 (addcmul only): wraps as mul and add do
  const Tensor n = from_vector(std::vector<std::int64_t>{1, -2, 3}), m = from_vector(std::vector<std::int64_t>{4, 5, -6});
  CHECK(to_vector<std::int64_t>(addcmul(n, m, n, 2)) == std::vector<std::int64_t>{9, -22, -33});
  const Tensor big = from_vector(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max()});
  CHECK(equal(addcmul(big, big, big, 3), big + 3 * (big * big)));
  // empty and 0-d operands
  CHECK(addcmul(zeros({0, 3}), ones({3}), ones({1})).shape() == Shape{0, 3});
  CHECK(addcdiv(scalar_tensor(1.0), scalar_tensor(3.0), scalar_tensor(4.0), 2).item<double>() == 2.5);
}

TEST_CASE("addcmul and addcdiv: promotion as the three tensors', a real operand next to complex ones widened per element") {
  const Tensor f = randn({4}, float32), d = randn({4}, float64), i = from_vector(std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(addcmul(i, i, f).dtype() == float32);
  CHECK(addcmul(f, i, d).dtype() == float64);
  CHECK(addcdiv(i, i, i.to(float32)).dtype() == float32);                 // true division in the result type
  CHECK(addcmul(f, f, scalar_tensor(2.0)).dtype() == float32);             // a 0-d tensor does not widen
  CHECK(addcmul(f, f, f, 2.5).dtype() == float32);                        // nor does the value
  CHECK(addcmul(f, f, scalar_tensor(cd(1, 1))).dtype() == complex64);      // a 0-d complex: complex of f's precision
  CHECK(equal(addcdiv(i, i, i.to(float32), 2), i + 2 * (i / i.to(float32))));
  for (Dtype cdt : {complex64, complex128}) {
    CAPTURE(dtype_name(cdt));
    const Dtype rdt = to_real(cdt);
    const Tensor z = randn({3, 4}, cdt), w = randn({4}, cdt), r = randn({3, 4}, rdt) + 2.0, q = randn({4}, rdt);
    // real tensor1 or tensor2 (the ETDRK4 coefficients' case), real input: the composition's values exactly
    CHECK(equal(addcmul(z, r, w), z + r * w));
    CHECK(equal(addcmul(z, w, r), z + w * r));
    CHECK(equal(addcmul(q, z, r, 0.5), q + 0.5 * (z * r)));
    CHECK(equal(addcdiv(z, q, w), z + q / w));
    CHECK(equal(addcdiv(z, w, r), z + w / r));
    CHECK(equal(addcmul(z, r, q), z + r * q));  // only the input complex
  }
}

TEST_CASE("addcmul and addcdiv: errors name the op, the shapes or dtypes and the value, and change nothing") {
  const Tensor x = randn({2, 3}), a = randn({3}), b = randn({4});
  const Tensor x0 = x.clone();
  CHECK_THROWS_WITH_AS(addcmul(x, a, b),
                       doctest::Contains("[addcmul] shapes (2, 3) and (3,) and (4,) cannot be broadcast together"), Error);
  CHECK_THROWS_WITH_AS(addcdiv(x, b, a),
                       doctest::Contains("[addcdiv] shapes (2, 3) and (4,) and (3,) cannot be broadcast together"), Error);
  const Tensor t = ones({3}, Dtype::Bool);
  CHECK_THROWS_WITH_AS(addcmul(t, t, t), doctest::Contains("[addcmul] bool tensors are not supported (input bool, tensor1 bool, tensor2 bool)"), Error);
  const Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 3});
  CHECK_THROWS_WITH_AS(addcdiv(n, n, n), doctest::Contains("[addcdiv] integer division is not supported: the result type is int64"), Error);
  CHECK_THROWS_WITH_AS(addcmul(n, n, n, 0.5), doctest::Contains("[addcmul] value 0.5 is not an integer but the result type is int64"), Error);
  CHECK_THROWS_WITH_AS(addcmul(x, x, x, Scalar(cd(1, 2))), doctest::Contains("[addcmul] value 1+2j is complex but the result type is float32"), Error);
  CHECK_THROWS_WITH_AS(addcdiv(x, x, x, 1e300), doctest::Contains("[addcdiv] value 1e+300 cannot be converted to float32 without overflow"), Error);
  CHECK(equal(x, x0));
}

TEST_CASE("addcmul and addcdiv: gradients (broadcast, complex, a complex value, mixed real and complex), gradgradcheck") {
  manual_seed(12);
  const auto mul = [](const Scalar& v) { return [v](const G& in) { return addcmul(in[0], in[1], in[2], v); }; };
  const auto dv = [](const Scalar& v) { return [v](const G& in) { return addcdiv(in[0], in[1], in[2], v); }; };
  const Tensor x = randn({3, 1}, float64).requires_grad_(), a = randn({3, 4}, float64).requires_grad_();
  const Tensor b = (randn({4}, float64) + 3.0).requires_grad_();
  CHECK(gc(mul(0.5), {x, a, b}));
  CHECK(gc(dv(-1.5), {x, a, b}));
  CHECK(ggc(mul(0.5), {x, a, b}));
  CHECK(ggc(dv(2), {x, a, b}));
  const Tensor z = randn({2, 3}, complex128).requires_grad_(), w = (randn({3}, complex128) + 2.0).requires_grad_();
  const Tensor r = (randn({2, 3}, float64) + 2.0).requires_grad_();
  const Scalar cv(cd(0.5, -1.0));
  CHECK(gc(mul(cv), {z, w, z}));
  CHECK(gc(dv(cv), {z, w, z}));
  CHECK(gc(mul(1), {z, r, w}));   // real tensor1: its gradient keeps the real part
  CHECK(gc(mul(cv), {r, w, r}));  // real input and tensor2
  CHECK(gc(dv(cv), {z, w, r}));
  CHECK(ggc(dv(cv), {z, r, w}));
  // the input's gradient is the incoming one
  Tensor xi = randn({3}, float64).requires_grad_();
  addcmul(xi, randn({3}, float64), randn({3}, float64)).sum().backward();
  CHECK(equal(xi.grad(), ones({3}, float64)));
}

TEST_CASE("addcmul_ and addcdiv_: in self's dtype, the methods, autograd through them, errors leave self unchanged") {
  manual_seed(14);
  const Tensor x = randn({2, 3}), a = randn({3}), b = randn({2, 1}) + 3.0;
  Tensor y = x.clone();
  Tensor& r = y.addcmul_(a, b, 0.5);
  CHECK(&r == &y);
  CHECK(equal(y, addcmul(x, a, b, 0.5)));
  y = x.clone();
  y.addcdiv_(a, b, -2);
  CHECK(equal(y, addcdiv(x, a, b, -2)));
  CHECK(equal(x.addcmul(a, b, 3), addcmul(x, a, b, 3)));
  CHECK(equal(x.addcdiv(a, b), addcdiv(x, a, b)));
  // computed in self's dtype: a float64 operand is rounded to float32 first; a complex self takes real operands
  y = x.clone();
  y.addcmul_(a.to(float64), b, 0.5);
  CHECK(y.dtype() == float32);
  CHECK(equal(y, addcmul(x, a, b, 0.5)));
  Tensor z = randn({2, 3}, complex128);
  const Tensor z0 = z.clone();
  z.addcmul_(a.to(float64), b.to(float64));
  CHECK(equal(z, z0 + a.to(float64) * b.to(float64)));
  // errors: nothing written
  Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 3});
  CHECK_THROWS_WITH_AS(n.addcmul_(a, n), doctest::Contains("[addcmul_] result type float32 cannot be cast to the in-place output type int64"), Error);
  CHECK_THROWS_WITH_AS(n.addcdiv_(n, n), doctest::Contains("[addcdiv_] integer division is not supported"), Error);
  CHECK_THROWS_WITH_AS(n.addcmul_(n, n, 0.5), doctest::Contains("[addcmul_] value 0.5 is not an integer but the result type is int64"), Error);
  CHECK(to_vector<std::int64_t>(n) == std::vector<std::int64_t>{1, 2, 3});
  Tensor row = x.select(0, 0).clone();
  CHECK_THROWS_WITH_AS(row.addcmul_(a, b), doctest::Contains("[addcmul_] in-place output of shape (3,) does not match the broadcast shape (2, 3)"), Error);
  Tensor w = arange(0, 6, 1, float32);
  CHECK_THROWS_WITH_AS(w.narrow(0, 1, 5).addcmul_(w.narrow(0, 0, 5), w.narrow(0, 0, 5)), doctest::Contains("[addcmul_]"), Error);
  CHECK(equal(w, arange(0, 6, 1, float32)));
  Tensor leaf = randn({3}, float64).requires_grad_();
  CHECK_THROWS_WITH_AS(leaf.addcmul_(leaf.detach(), leaf.detach()), doctest::Contains("[addcmul_]"), Error);
  // autograd through the in-place forms: the same gradients as out of place
  const Tensor xd = randn({2, 3}, float64).requires_grad_(), ad = randn({3}, float64).requires_grad_();
  const Tensor bd = (randn({2, 1}, float64) + 3.0).requires_grad_();
  CHECK(gc([](const G& in) { Tensor t = in[0] * 1.0; t.addcmul_(in[1], in[2], 0.5); return t; }, {xd, ad, bd}));
  CHECK(gc([](const G& in) { Tensor t = in[0] * 1.0; t.addcdiv_(in[1], in[2], -1.5); return t; }, {xd, ad, bd}));
}

// ---- lerp (Note [lerp]) ----------------------------------------------------------------------------------
TEST_CASE("lerp: values against long double (number and tensor weights, both forms, broadcasting), exact ends") {
  manual_seed(21);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const bool cplx = is_complex(dt);
    const Tensor x = randn({3, 1, 4}, dt), e = randn({5, 1}, dt);
    // weights on both sides of |w| = 0.5 (both formulas), as numbers and as a broadcast tensor
    const std::vector<cd> ws = cplx ? std::vector<cd>{{0.3, 0.2}, {0.6, -0.5}, {-0.1, 0.45}, {1.5, 0.0}}
                                    : std::vector<cd>{0.25, 0.75, -0.3, 1.5};
    const Tensor wt = from_vector(ws).to(dt);
    const auto xv = to_vector<cd>(x), ev = to_vector<cd>(e);
    const auto check = [&](const Tensor& got, const auto& weight_at) {
      CHECK(got.dtype() == dt);
      CHECK(got.shape() == Shape{3, 5, 4});
      const auto ov = to_vector<cd>(got);
      for (std::int64_t k = 0; k < got.numel(); ++k) {
        const cd xe = xv[static_cast<std::size_t>(bcast_index(x.shape(), got.shape(), k))];
        const cd ee = ev[static_cast<std::size_t>(bcast_index(e.shape(), got.shape(), k))];
        const cld xl(xe.real(), xe.imag()), el(ee.real(), ee.imag()), wl = weight_at(k);
        const cld want = xl + wl * (el - xl);
        // the error is relative to the ends' size (x + w (e - x) cancels)
        const double tol = 8 * rtol_for(dt) * (std::abs(xe) + std::abs(ee));
        const cd o = ov[static_cast<std::size_t>(k)];
        CHECK(std::abs(cld(o.real(), o.imag()) - want) <= tol);
      }
    };
    for (const cd& w : ws) {
      CAPTURE(w);
      const Scalar sw = cplx ? Scalar(w) : Scalar(w.real());
      check(lerp(x, e, sw), [&](std::int64_t) { return cld(w.real(), w.imag()); });
    }
    check(lerp(x, e, wt), [&](std::int64_t k) {
      const cd w = ws[static_cast<std::size_t>(k % 4)];
      return cld(w.real(), w.imag());
    });
    // the number and the tensor weight compute the same arithmetic
    CHECK(equal(lerp(x, e, wt.select(0, 1)), lerp(x, e, cplx ? Scalar(ws[1]) : Scalar(ws[1].real()))));
    // exact ends: w = 0 gives x, w = 1 gives e (the second form), broadcast
    CHECK(equal(lerp(x, e, 0), x.expand({3, 5, 4})));
    CHECK(equal(lerp(x, e, 1), e.expand({3, 5, 4})));
    CHECK(equal(lerp(x, e, zeros({4}, dt)), x.expand({3, 5, 4})));
    CHECK(equal(lerp(x, e, ones({4}, dt)), e.expand({3, 5, 4})));
    CHECK(equal(x.lerp(e, 0.25), lerp(x, e, 0.25)));
    CHECK(equal(x.lerp(e, wt), lerp(x, e, wt)));
  }
  // the two forms meet: monotone across w = 0.5 for a wide range of ends
  const Tensor a = real_t({-1e8, 1.0, 3.0}), b = real_t({1e8, 1.0 + 1e-15, -7.0});
  const Tensor lo = lerp(a, b, std::nextafter(0.5, 0.0)), mid = lerp(a, b, 0.5);
  const Tensor hi = lerp(a, b, std::nextafter(0.5, 1.0));
  const auto lv = to_vector<double>(lo), mv = to_vector<double>(mid), hv = to_vector<double>(hi);
  for (std::size_t k = 0; k < 3; ++k)
    CHECK(((lv[k] <= mv[k] && mv[k] <= hv[k]) || (lv[k] >= mv[k] && mv[k] >= hv[k])));
  // empty and 0-d, NaN and infinite ends propagate as the formula does
  CHECK(lerp(zeros({0, 3}), ones({3}), 0.5).shape() == Shape{0, 3});
  CHECK(lerp(scalar_tensor(1.0), scalar_tensor(3.0), 0.25).item<double>() == 1.5);
  CHECK(std::isnan(lerp(real_t({kNaN}), real_t({1.0}), 0.5).item<double>()));
  CHECK(lerp(real_t({1.0}), real_t({kInf}), 0.25).item<double>() == kInf);
}

TEST_CASE("lerp: promotion (a number weight does not widen, a tensor weight does), a real end next to complex") {
  const Tensor f = randn({4}, float32), d = randn({4}, float64), z = randn({4}, complex64);
  CHECK(lerp(f, f, 0.5).dtype() == float32);
  CHECK(lerp(f, d, 0.5).dtype() == float64);
  CHECK(lerp(f, f, d).dtype() == float64);
  CHECK(lerp(f, f, scalar_tensor(0.5)).dtype() == float32);  // a 0-d float64 weight does not widen
  CHECK(lerp(f, z, 0.5).dtype() == complex64);
  CHECK(lerp(d, d, scalar_tensor(cd(0.5, 0.5))).dtype() == complex128);  // a 0-d complex weight: complex result
  // mixed dtypes: the values of the promoted operands' lerp
  CHECK(equal(lerp(f, d, 0.75), lerp(f.to(float64), d, 0.75)));
  CHECK(equal(lerp(f, z, f), lerp(f.to(complex64), z, f.to(complex64))));
  const Tensor i = from_vector(std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(equal(lerp(i, f, 0.5), lerp(i.to(float32), f, 0.5)));  // an int64 end next to a float32 one
}

TEST_CASE("lerp: errors name the op, the dtypes, shapes or weight, and change nothing") {
  const Tensor x = randn({2, 3}), e = randn({3}), b = randn({4});
  const Tensor x0 = x.clone();
  const Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 3});
  CHECK_THROWS_WITH_AS(lerp(n, n, 0.5), doctest::Contains("[lerp] the result type int64 is not floating or complex (input int64, end int64); convert a tensor to a floating dtype"), Error);
  CHECK_THROWS_WITH_AS(lerp(n, n, n), doctest::Contains("[lerp] the result type int64 is not floating or complex (input int64, end int64, weight int64)"), Error);
  const Tensor t = ones({3}, Dtype::Bool);
  CHECK_THROWS_WITH_AS(lerp(t, t, 1), doctest::Contains("[lerp] the result type bool is not floating or complex"), Error);
  CHECK_THROWS_WITH_AS(lerp(x, e, Scalar(cd(0.5, 1))), doctest::Contains("[lerp] weight 0.5+1j is complex but the result type is float32"), Error);
  CHECK_THROWS_WITH_AS(lerp(x, e, 1e300), doctest::Contains("[lerp] value 1e+300 cannot be converted to float32 without overflow"), Error);
  CHECK_THROWS_WITH_AS(lerp(x, b, 0.5), doctest::Contains("[lerp] shapes (2, 3) and (4,) cannot be broadcast together"), Error);
  CHECK_THROWS_WITH_AS(lerp(x, e, b), doctest::Contains("[lerp] shapes (2, 3) and (3,) and (4,) cannot be broadcast together"), Error);
  CHECK(equal(x, x0));
}

TEST_CASE("lerp: gradients (number and tensor weights, broadcast, complex, mixed real and complex), gradgradcheck") {
  manual_seed(22);
  const auto num = [](const Scalar& w) { return [w](const G& in) { return lerp(in[0], in[1], w); }; };
  const auto ten = [](const G& in) { return lerp(in[0], in[1], in[2]); };
  const Tensor x = randn({3, 1}, float64).requires_grad_(), e = randn({3, 4}, float64).requires_grad_();
  const Tensor w = randn({4}, float64).requires_grad_();
  CHECK(gc(num(0.3), {x, e}));
  CHECK(gc(num(0.8), {x, e}));
  CHECK(gc(ten, {x, e, w}));
  CHECK(ggc(ten, {x, e, w}));
  CHECK(ggc(num(0.7), {x, e}));
  const Tensor z = randn({2, 3}, complex128).requires_grad_(), zw = (0.5 * randn({3}, complex128)).requires_grad_();
  const Tensor r = randn({2, 3}, float64).requires_grad_();
  CHECK(gc(num(Scalar(cd(0.2, -0.4))), {z, z.detach().clone().requires_grad_()}));
  CHECK(gc(num(Scalar(cd(0.9, 0.1))), {r, z}));  // real input next to complex
  CHECK(gc(ten, {z, r, zw}));
  CHECK(gc(ten, {z, z.detach().clone().requires_grad_(), w.narrow(0, 0, 3)}));  // real weight, complex ends
  CHECK(ggc(ten, {z, r, zw}));
  // the ends' gradients are the weight's complements
  Tensor xi = randn({3}, float64).requires_grad_(), ei = randn({3}, float64).requires_grad_();
  lerp(xi, ei, 0.25).sum().backward();
  CHECK(equal(xi.grad(), full({3}, 0.75, float64)));
  CHECK(equal(ei.grad(), full({3}, 0.25, float64)));
}

TEST_CASE("lerp_: in self's dtype, both weights, autograd through it, errors leave self unchanged") {
  manual_seed(23);
  const Tensor x = randn({2, 3}), e = randn({3}), w = rand({2, 1});
  Tensor y = x.clone();
  Tensor& r = y.lerp_(e, 0.3);
  CHECK(&r == &y);
  CHECK(equal(y, lerp(x, e, 0.3)));
  y = x.clone();
  y.lerp_(e, w);
  CHECK(equal(y, lerp(x, e, w)));
  y = x.clone();
  y.lerp_(e.to(float64), 0.6);  // computed in self's dtype: e rounded to float32 first
  CHECK(y.dtype() == float32);
  CHECK(equal(y, lerp(x, e, 0.6)));
  Tensor z = randn({2, 3}, complex128);
  const Tensor z0 = z.clone();
  z.lerp_(e.to(float64), Scalar(cd(0.25, 0.5)));
  CHECK(equal(z, lerp(z0, e.to(complex128), Scalar(cd(0.25, 0.5)))));
  // errors: nothing written
  Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 3});
  CHECK_THROWS_WITH_AS(n.lerp_(n, 0.5), doctest::Contains("[lerp_] the result type int64 is not floating or complex"), Error);
  CHECK_THROWS_WITH_AS(n.lerp_(e, 0.5), doctest::Contains("[lerp_] result type float32 cannot be cast to the in-place output type int64"), Error);
  CHECK(to_vector<std::int64_t>(n) == std::vector<std::int64_t>{1, 2, 3});
  Tensor row = x.select(0, 0).clone();
  const Tensor row0 = row.clone();
  CHECK_THROWS_WITH_AS(row.lerp_(e, w), doctest::Contains("[lerp_] in-place output of shape (3,) does not match the broadcast shape (2, 3)"), Error);
  Tensor f = x.clone();
  CHECK_THROWS_WITH_AS(f.lerp_(e, Scalar(cd(0, 1))), doctest::Contains("[lerp_] weight 0+1j is complex but the result type is float32"), Error);
  CHECK(equal(row, row0));
  CHECK(equal(f, x));
  Tensor leaf = randn({3}, float64).requires_grad_();
  CHECK_THROWS_WITH_AS(leaf.lerp_(leaf.detach(), 0.5), doctest::Contains("[lerp_]"), Error);
  // autograd through the in-place form: the same gradients as out of place
  const Tensor xd = randn({2, 3}, float64).requires_grad_(), ed = randn({3}, float64).requires_grad_();
  const Tensor wd = rand({2, 1}, float64).requires_grad_();
  CHECK(gc([](const G& in) { Tensor t = in[0] * 1.0; t.lerp_(in[1], 0.4); return t; }, {xd, ed}));
  CHECK(gc([](const G& in) { Tensor t = in[0] * 1.0; t.lerp_(in[1], in[2]); return t; }, {xd, ed, wd}));
}
