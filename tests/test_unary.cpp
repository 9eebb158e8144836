// Tests of the elementwise unary ops: values against long-double std:: math / closed forms for
// every dtype, dtype rules (PyTorch's), errors, gradcheck (real and complex), gradgradcheck.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <complex>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using cd = std::complex<double>;
using cld = std::complex<long double>;
using G = std::vector<Tensor>;

namespace {

using RealRef = std::function<long double(long double)>;
using ComplexRef = std::function<cld(cld)>;
using Op = std::function<Tensor(const Tensor&)>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const long double kPiL = 3.141592653589793238462643383279502884L;

double rtol_for(Dtype t) { return t == float32 || t == complex64 ? 2e-5 : 1e-13; }

/// |got - want| <= atol + rtol |want|, with NaN matching NaN and infinities matching exactly.
bool close(cd got, cld want, double rtol, double atol) {
  const bool wn = std::isnan(static_cast<double>(want.real())) || std::isnan(static_cast<double>(want.imag()));
  const bool gn = std::isnan(got.real()) || std::isnan(got.imag());
  if (wn || gn) return wn && gn;
  if (std::isinf(static_cast<double>(want.real())) || std::isinf(static_cast<double>(want.imag())))
    return got.real() == static_cast<double>(want.real()) && got.imag() == static_cast<double>(want.imag());
  const long double err = std::abs(cld(got.real(), got.imag()) - want);
  return err <= atol + rtol * std::abs(want);
}

/// Checks y == ref(x) elementwise; x's values are read from the (possibly rounded) input tensor.
void check_real(const Tensor& x, const Tensor& y, const RealRef& ref, double rtol, double atol = 0) {
  REQUIRE(y.shape() == x.shape());
  auto xv = to_vector<double>(x);
  auto yv = to_vector<double>(y);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const long double want = ref(xv[i]);
    INFO("x = ", xv[i], ", got ", yv[i], ", want ", static_cast<double>(want));
    CHECK(close(cd(yv[i]), cld(want), rtol, atol));
  }
}

void check_complex(const Tensor& x, const Tensor& y, const ComplexRef& ref, double rtol, double atol = 0) {
  REQUIRE(y.shape() == x.shape());
  auto xv = to_vector<cd>(x);
  auto yv = to_vector<cd>(y);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const cld want = ref(cld(xv[i].real(), xv[i].imag()));
    INFO("x = ", xv[i], ", got ", yv[i], ", want ", cd(static_cast<double>(want.real()), static_cast<double>(want.imag())));
    CHECK(close(yv[i], want, rtol, atol));
  }
}

Tensor real_t(const std::vector<double>& v, Dtype dt = float64) { return from_vector(v).to(dt); }
Tensor cplx_t(const std::vector<cd>& v, Dtype dt = complex128) { return from_vector(v).to(dt); }
Tensor int_t(const std::vector<std::int64_t>& v) { return from_vector(v); }

const std::vector<cd> kZ = {{1, 2}, {-0.5, 0.3}, {0.2, -1.1}, {-2, -0.7}, {0.05, 0.4}};

long double sigmoid_ld(long double x) { return 1 / (1 + std::exp(-x)); }
// closed forms without cancellation: 1 + erf(t) = erfc(-t), (1 + tanh(u)) / 2 = 1 / (1 + e^(-2u))
long double gelu_ld(long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); }
long double gelu_tanh_ld(long double x) {
  const long double k = std::sqrt(2 / kPiL);
  return x / (1 + std::exp(-2 * k * (x + 0.044715L * x * x * x)));
}

/// A float function of the table: real reference, complex reference (empty: complex unsupported),
/// and inputs inside its real domain.
struct FloatCase {
  const char* name;
  Op op;
  RealRef ref;
  ComplexRef cref;
  std::vector<double> xs;
};

const std::vector<double> kAll = {-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 3.0};
const std::vector<double> kPos = {0.1, 0.5, 1.0, 2.0, 10.0};
const std::vector<double> kUnit = {-0.9, -0.3, 0.0, 0.5, 0.99};

std::vector<FloatCase> float_cases() {
  return {
      {"exp", [](const Tensor& x) { return exp(x); }, [](long double v) { return std::exp(v); },
       [](cld z) { return std::exp(z); }, kAll},
      {"expm1", [](const Tensor& x) { return expm1(x); }, [](long double v) { return std::expm1(v); },
       [](cld z) { return std::exp(z) - 1.0L; }, kAll},
      {"log", [](const Tensor& x) { return log(x); }, [](long double v) { return std::log(v); },
       [](cld z) { return std::log(z); }, kPos},
      {"log1p", [](const Tensor& x) { return log1p(x); }, [](long double v) { return std::log1p(v); },
       [](cld z) { return std::log(1.0L + z); }, {-0.5, 1e-10, 0.3, 5.0}},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](long double v) { return std::sqrt(v); },
       [](cld z) { return std::sqrt(z); }, kPos},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](long double v) { return 1 / std::sqrt(v); },
       [](cld z) { return 1.0L / std::sqrt(z); }, kPos},
      {"sin", [](const Tensor& x) { return sin(x); }, [](long double v) { return std::sin(v); },
       [](cld z) { return std::sin(z); }, kAll},
      {"cos", [](const Tensor& x) { return cos(x); }, [](long double v) { return std::cos(v); },
       [](cld z) { return std::cos(z); }, kAll},
      {"tan", [](const Tensor& x) { return tan(x); }, [](long double v) { return std::tan(v); },
       [](cld z) { return std::tan(z); }, {-1.2, -0.3, 0.0, 0.4, 1.0}},
      {"sinh", [](const Tensor& x) { return sinh(x); }, [](long double v) { return std::sinh(v); },
       [](cld z) { return std::sinh(z); }, kAll},
      {"cosh", [](const Tensor& x) { return cosh(x); }, [](long double v) { return std::cosh(v); },
       [](cld z) { return std::cosh(z); }, kAll},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](long double v) { return std::tanh(v); },
       [](cld z) { return std::tanh(z); }, kAll},
      {"asin", [](const Tensor& x) { return asin(x); }, [](long double v) { return std::asin(v); },
       [](cld z) { return std::asin(z); }, kUnit},
      {"acos", [](const Tensor& x) { return acos(x); }, [](long double v) { return std::acos(v); },
       [](cld z) { return std::acos(z); }, kUnit},
      {"atan", [](const Tensor& x) { return atan(x); }, [](long double v) { return std::atan(v); },
       [](cld z) { return std::atan(z); }, kAll},
      {"asinh", [](const Tensor& x) { return asinh(x); }, [](long double v) { return std::asinh(v); },
       [](cld z) { return std::asinh(z); }, kAll},
      {"acosh", [](const Tensor& x) { return acosh(x); }, [](long double v) { return std::acosh(v); },
       [](cld z) { return std::acosh(z); }, {1.2, 1.5, 3.0, 10.0}},
      {"atanh", [](const Tensor& x) { return atanh(x); }, [](long double v) { return std::atanh(v); },
       [](cld z) { return std::atanh(z); }, kUnit},
      {"exp2", [](const Tensor& x) { return exp2(x); }, [](long double v) { return std::exp2(v); },
       [](cld z) { return std::exp(z * std::log(2.0L)); }, kAll},
      {"log2", [](const Tensor& x) { return log2(x); }, [](long double v) { return std::log2(v); },
       [](cld z) { return std::log(z) / std::log(2.0L); }, kPos},
      {"log10", [](const Tensor& x) { return log10(x); }, [](long double v) { return std::log10(v); },
       [](cld z) { return std::log10(z); }, kPos},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }, [](long double v) { return 1 / v; },
       [](cld z) { return 1.0L / z; }, {-2.5, -1.0, -0.3, 0.4, 1.0, 3.0}},
      {"erfc", [](const Tensor& x) { return erfc(x); }, [](long double v) { return std::erfc(v); }, nullptr,
       {-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 3.0, 9.0}},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, sigmoid_ld,
       [](cld z) { return 1.0L / (1.0L + std::exp(-z)); }, {-30.0, -2.5, -0.3, 0.0, 0.4, 3.0, 30.0}},
      {"erf", [](const Tensor& x) { return erf(x); }, [](long double v) { return std::erf(v); }, nullptr, kAll},
      {"gelu", [](const Tensor& x) { return gelu(x); }, gelu_ld, nullptr, kAll},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); }, gelu_tanh_ld, nullptr, kAll},
      {"silu", [](const Tensor& x) { return silu(x); }, [](long double v) { return v * sigmoid_ld(v); }, nullptr, kAll},
      {"softplus", [](const Tensor& x) { return softplus(x); },
       [](long double v) { return v > 20 ? v : std::log1p(std::exp(v)); }, nullptr, {-30.0, -2.5, 0.0, 1.0, 19.0, 25.0}},
  };
}

}  // namespace

TEST_CASE("float functions: values for float32/float64/complex64/complex128 and int/bool promotion") {
  for (const auto& c : float_cases()) {
    INFO("op ", c.name);
    for (Dtype dt : {float32, float64}) {
      Tensor x = real_t(c.xs, dt);
      Tensor y = c.op(x);
      CHECK(y.dtype() == dt);
      check_real(x, y, c.ref, rtol_for(dt), 1e-300);
    }
    if (c.cref) {
      for (Dtype dt : {complex64, complex128}) {
        Tensor z = cplx_t(kZ, dt);
        Tensor y = c.op(z);
        CHECK(y.dtype() == dt);
        check_complex(z, y, c.cref, rtol_for(dt));
      }
    } else {
      CHECK_THROWS_AS(c.op(cplx_t(kZ)), Error);
    }
    // int64 -> default float dtype (values: the integer inputs of the domain)
    std::vector<std::int64_t> ints;
    for (double v : c.xs)
      if (v == std::floor(v)) ints.push_back(static_cast<std::int64_t>(v));
    if (!ints.empty()) {
      Tensor xi = int_t(ints);
      Tensor y = c.op(xi);
      CHECK(y.dtype() == float32);
      check_real(xi, y, c.ref, rtol_for(float32), 1e-30);
    }
  }
}

TEST_CASE("float functions: default dtype float64 promotes ints to float64; bool promotes") {
  set_default_dtype(float64);
  Tensor y = exp(int_t({0, 1, 2}));
  set_default_dtype(float32);
  CHECK(y.dtype() == float64);
  check_real(int_t({0, 1, 2}), y, [](long double v) { return std::exp(v); }, 1e-15);
  Tensor b = from_vector(std::vector<bool>{true, false});
  Tensor s = sqrt(b);
  CHECK(s.dtype() == float32);
  CHECK(to_vector<float>(s) == std::vector<float>{1.0f, 0.0f});
}

TEST_CASE("float functions: special values and accuracy near zero") {
  Tensor x = real_t({0.0, -1.0, kInf});
  auto l = to_vector<double>(log(x));
  CHECK(l[0] == -kInf);
  CHECK(std::isnan(l[1]));
  CHECK(l[2] == kInf);
  CHECK(std::isnan(to_vector<double>(sqrt(real_t({-1.0})))[0]));
  CHECK(to_vector<double>(rsqrt(real_t({0.0})))[0] == kInf);
  // expm1 / log1p keep full relative accuracy for tiny arguments (real and complex)
  check_real(real_t({1e-12, -3e-9}), expm1(real_t({1e-12, -3e-9})), [](long double v) { return std::expm1(v); }, 1e-15);
  check_real(real_t({1e-12, -3e-9}), log1p(real_t({1e-12, -3e-9})), [](long double v) { return std::log1p(v); }, 1e-15);
  Tensor z = cplx_t({{1e-10, 2e-10}, {-3e-9, 1e-9}});
  check_complex(z, expm1(z), [](cld w) { return w + w * w / 2.0L + w * w * w / 6.0L; }, 1e-14);
  check_complex(z, log1p(z), [](cld w) { return w - w * w / 2.0L + w * w * w / 3.0L; }, 1e-14);
  // ... and near z = -1, where |1 + z|^2 = 1 + (x (2 + x) + y^2) cancels (it lost all digits before
  // Note [complex elementary functions]); 1 + w is exact in long double
  for (Dtype dt : {complex128, complex64}) {
    CAPTURE(dt);
    Tensor zm = cplx_t({{-1 + 1e-6, 1e-6}, {-0.9, 0.3}, {-1.3, -0.2}, {-1 - 2e-7, 3e-7}, {-0.45, 0.45}}, dt);
    check_complex(zm, log1p(zm), [](cld w) { return std::log(1.0L + w); }, dt == complex128 ? 1e-14 : 1e-6);
  }
  // ... and near the circle |1 + z| = 1 away from z = -1, where log |1 + z| cancels (z = e^it - 1): the real
  // part to its own relative accuracy, not only |log1p z|'s. The points lie on a grid of 2^-30 (2^-12 in
  // complex64), so |1 + z|^2 - 1 = 2x + x^2 + y^2 is exact in long double
  for (Dtype dt : {complex128, complex64}) {
    CAPTURE(dt);
    const double grid = dt == complex128 ? 0x1p-30 : 0x1p-12, tol = dt == complex128 ? 1e-14 : 1e-6;
    std::vector<cd> pts;
    for (double t : {0.3, 1.1, 2.0, 2.6, -0.8, -1.9})
      pts.emplace_back(std::round((std::cos(t) - 1) / grid) * grid, std::round(std::sin(t) / grid) * grid);
    const auto got = to_vector<cd>(log1p(cplx_t(pts, dt)));
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const long double x = pts[i].real(), y = pts[i].imag();
      const long double re = 0.5L * std::log1p(2 * x + x * x + y * y), im = std::atan2(y, 1 + x);
      CAPTURE(pts[i]);
      CAPTURE(got[i]);
      REQUIRE(re != 0);
      CHECK(static_cast<double>(std::fabs((got[i].real() - re) / re)) <= tol);
      CHECK(static_cast<double>(std::fabs((got[i].imag() - im) / im)) <= tol);
    }
  }
  // sigmoid does not overflow for large |x| in float32
  auto s = to_vector<float>(sigmoid(real_t({-200.0, 200.0}, float32)));
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 1.0f);
}

TEST_CASE("float functions: non-contiguous, broadcast-strided, 0-d and size-0 inputs") {
  Tensor base = from_vector(std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, Shape{2, 3});
  Tensor t = base.t();  // (3, 2), non-contiguous
  Tensor y = t.sin();
  CHECK(y.shape() == Shape{3, 2});
  check_real(t, y, [](long double v) { return std::sin(v); }, 1e-15);
  Tensor e = from_vector(std::vector<double>{0.7}).reshape({}).expand({4});
  check_real(e, e.tanh(), [](long double v) { return std::tanh(v); }, 1e-15);
  Tensor s0 = scalar_tensor(0.5, float64);
  Tensor y0 = s0.atan();
  CHECK(y0.dim() == 0);
  CHECK(y0.item<double>() == doctest::Approx(std::atan(0.5)).epsilon(1e-15));
  Tensor empty = zeros({0, 3}, float32);
  Tensor ye = empty.log();
  CHECK(ye.shape() == Shape{0, 3});
  CHECK(ye.dtype() == float32);
  CHECK(abs(zeros({2, 0}, complex64)).dtype() == float32);
}

TEST_CASE("abs, sign, square keep int64; abs/angle of complex are real") {
  CHECK(to_vector<std::int64_t>(abs(int_t({-3, 0, 5}))) == std::vector<std::int64_t>{3, 0, 5});
  CHECK(abs(int_t({-3})).dtype() == int64);
  CHECK(to_vector<std::int64_t>(sign(int_t({-3, 0, 5}))) == std::vector<std::int64_t>{-1, 0, 1});
  CHECK(to_vector<std::int64_t>(square(int_t({-3, 0, 5}))) == std::vector<std::int64_t>{9, 0, 25});
  // bool: sign is the identity, square widens to int64 (as PyTorch), abs is rejected
  Tensor b = from_vector(std::vector<bool>{true, false});
  CHECK(sign(b).dtype() == bool_);
  CHECK(to_vector<bool>(sign(b)) == std::vector<bool>{true, false});
  CHECK(square(b).dtype() == int64);
  CHECK(to_vector<std::int64_t>(square(b)) == std::vector<std::int64_t>{1, 0});
  CHECK_THROWS_WITH_AS(abs(b), doctest::Contains("[abs]"), Error);

  for (Dtype dt : {float32, float64}) {
    Tensor x = real_t({-2.5, -0.0, 0.0, 3.0, kNaN}, dt);
    check_real(x, abs(x), [](long double v) { return std::fabs(v); }, 0);
    check_real(x, sign(x), [](long double v) { return std::isnan(v) ? v : (v > 0) - (v < 0); }, 0);
    check_real(x, square(x), [](long double v) { return v * v; }, rtol_for(dt));
    check_real(x, angle(x), [](long double v) { return std::isnan(v) ? v : v < 0 ? kPiL : 0; },
               rtol_for(dt));
    CHECK(abs(x).dtype() == dt);
  }
  for (Dtype dt : {complex64, complex128}) {
    std::vector<cd> zs = kZ;
    zs.push_back({0, 0});
    zs.push_back({3e200, 4e200});  // hypot, no overflow (complex128 only matters)
    if (dt == complex64) zs.pop_back();
    Tensor z = cplx_t(zs, dt);
    Tensor a = abs(z), an = angle(z);
    CHECK(a.dtype() == to_real(dt));
    CHECK(an.dtype() == to_real(dt));
    check_complex(z, a, [](cld w) { return cld(std::abs(w)); }, rtol_for(dt));
    check_complex(z, an, [](cld w) { return cld(std::arg(w)); }, rtol_for(dt));
    check_complex(z, sign(z), [](cld w) { return std::abs(w) == 0 ? cld(0) : w / std::abs(w); }, rtol_for(dt));
    CHECK(sign(z).dtype() == dt);
    Tensor zs2 = cplx_t(kZ, dt);
    check_complex(zs2, square(zs2), [](cld w) { return w * w; }, rtol_for(dt));
  }
  // angle of integers / bools is a float: pi for negatives
  Tensor ai = angle(int_t({-2, 0, 3}));
  CHECK(ai.dtype() == float32);
  CHECK(to_vector<float>(ai) == std::vector<float>{static_cast<float>(kPiL), 0.0f, 0.0f});
}

TEST_CASE("relu and rounding: dtype rules and values") {
  CHECK(to_vector<std::int64_t>(relu(int_t({-2, 0, 3}))) == std::vector<std::int64_t>{0, 0, 3});
  CHECK(relu(int_t({-2})).dtype() == int64);
  auto r = to_vector<double>(relu(real_t({-1.5, 0.0, 2.0, kNaN})));
  CHECK(r[0] == 0.0);
  CHECK(r[1] == 0.0);
  CHECK(r[2] == 2.0);
  CHECK(std::isnan(r[3]));  // NaN propagates as in max(x, 0)

  for (Dtype dt : {float32, float64}) {
    Tensor x = real_t({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7, 1e300, kInf, kNaN}, dt);
    check_real(x, floor(x), [](long double v) { return std::floor(v); }, 0);
    check_real(x, ceil(x), [](long double v) { return std::ceil(v); }, 0);
    check_real(x, trunc(x), [](long double v) { return std::trunc(v); }, 0);
    check_real(x, frac(x), [](long double v) { return std::isinf(v) ? NAN : v - std::trunc(v); }, 0);
    // half to even
    check_real(x, round(x), [](long double v) {
      if (!std::isfinite(v)) return v;
      long double f = std::floor(v), d = v - f;
      if (d > 0.5L) return f + 1;
      if (d < 0.5L) return f;
      return std::fmod(f, 2.0L) == 0 ? f : f + 1;
    }, 0);
    CHECK(round(x).dtype() == dt);
  }
  CHECK(to_vector<double>(round(real_t({0.5, 1.5, 2.5, -0.5, -1.5}))) == std::vector<double>{0, 2, 2, -0.0, -2});
  // Note [rounding without libm]: bit for bit libm's floor, ceil and nearbyint (signed zeros included) at
  // every magnitude, around 2^23 and 2^52 (where the float and double forms stop adding), halves, subnormals
  std::vector<double> vals = {0.0, -0.0, 0.3, -0.3, 0.7, -0.7, 0.5, -0.5, 1.0, -1.0, 8388607.5, -8388607.5,
                              8388608.0, 8388609.0, 16777215.0, 4503599627370495.5, -4503599627370495.5,
                              4503599627370496.0, 9007199254740991.0, 1e-310, -1e-310, 1e-40, -1e-40,
                              std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), kInf, -kInf};
  std::mt19937_64 gen(5);
  for (int k = 0; k < 4000; ++k) {
    const double mag = std::ldexp(1.0, static_cast<int>(gen() % 120) - 60);
    vals.push_back((static_cast<double>(gen() % 2000001) / 1e6 - 1.0) * mag);
    vals.push_back(std::ldexp(static_cast<double>(gen() % 64) + 0.5, static_cast<int>(gen() % 60) - 8));  // halves
  }
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dtype_name(dt));
    const Tensor x = from_vector(vals).to(dt);
    const auto xv = to_vector<double>(x);  // the values as rounded to dt
    const auto fl = to_vector<double>(floor(x)), ce = to_vector<double>(ceil(x)), ro = to_vector<double>(round(x));
    const auto tr = to_vector<double>(trunc(x));
    bool same = true;
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const auto want = [&](double v) { return dt == float32 ? static_cast<double>(static_cast<float>(v)) : v; };
      const float f = static_cast<float>(xv[i]);
      const double wf = dt == float32 ? want(std::floor(f)) : std::floor(xv[i]);
      const double wc = dt == float32 ? want(std::ceil(f)) : std::ceil(xv[i]);
      const double wr = dt == float32 ? want(std::nearbyint(f)) : std::nearbyint(xv[i]);
      const double wt = dt == float32 ? want(std::trunc(f)) : std::trunc(xv[i]);
      const bool ok = fl[i] == wf && ce[i] == wc && ro[i] == wr && std::signbit(fl[i]) == std::signbit(wf) &&
                      std::signbit(ce[i]) == std::signbit(wc) && std::signbit(ro[i]) == std::signbit(wr) &&
                      tr[i] == wt && std::signbit(tr[i]) == std::signbit(wt);
      if (!ok && same) {
        CAPTURE(xv[i]);
        CHECK(ok);
      }
      same = same && ok;
    }
    CHECK(same);
    const auto nan = to_vector<double>(floor(real_t({kNaN}, dt)));
    CHECK(std::isnan(nan[0]));
  }
  // identity on int64 (a copy, dtype kept)
  Tensor xi = int_t({-3, 4});
  for (const auto& f : {Op([](const Tensor& t) { return floor(t); }), Op([](const Tensor& t) { return ceil(t); }),
                        Op([](const Tensor& t) { return round(t); }), Op([](const Tensor& t) { return trunc(t); })}) {
    Tensor y = f(xi);
    CHECK(y.dtype() == int64);
    CHECK(to_vector<std::int64_t>(y) == std::vector<std::int64_t>{-3, 4});
    CHECK(!y.is_same(xi));
  }
}

TEST_CASE("predicates: isfinite, isnan, isinf, logical_not return bool for every dtype") {
  Tensor x = real_t({1.0, kInf, -kInf, kNaN, 0.0}, float32);
  CHECK(isfinite(x).dtype() == bool_);
  CHECK(to_vector<bool>(isfinite(x)) == std::vector<bool>{true, false, false, false, true});
  CHECK(to_vector<bool>(isnan(x)) == std::vector<bool>{false, false, false, true, false});
  CHECK(to_vector<bool>(isinf(x)) == std::vector<bool>{false, true, true, false, false});
  CHECK(to_vector<bool>(logical_not(x)) == std::vector<bool>{false, false, false, false, true});
  Tensor z = cplx_t({{1, kInf}, {kNaN, 0}, {0, 0}, {0, 2}});
  CHECK(to_vector<bool>(isfinite(z)) == std::vector<bool>{false, false, true, true});
  CHECK(to_vector<bool>(isnan(z)) == std::vector<bool>{false, true, false, false});
  CHECK(to_vector<bool>(isinf(z)) == std::vector<bool>{true, false, false, false});
  CHECK(to_vector<bool>(logical_not(z)) == std::vector<bool>{false, false, true, false});
  Tensor i = int_t({0, 7});
  CHECK(to_vector<bool>(isfinite(i)) == std::vector<bool>{true, true});
  CHECK(to_vector<bool>(isnan(i)) == std::vector<bool>{false, false});
  CHECK(to_vector<bool>(isinf(i)) == std::vector<bool>{false, false});
  CHECK(to_vector<bool>(isinf(real_t({kInf, 1.0}, float64))) == std::vector<bool>{true, false});
  CHECK(to_vector<bool>(logical_not(i)) == std::vector<bool>{true, false});
  Tensor b = from_vector(std::vector<bool>{true, false});
  CHECK(to_vector<bool>(~b) == std::vector<bool>{false, true});
  CHECK(to_vector<bool>(b.isnan()) == std::vector<bool>{false, false});
  CHECK(to_vector<bool>(b.isinf()) == std::vector<bool>{false, false});
  // no gradient flows through predicates
  Tensor xr = real_t({1.0}).requires_grad_();
  CHECK(!isnan(xr).requires_grad());
}

TEST_CASE("unary errors name the op and leave the input unchanged") {
  Tensor z = cplx_t({{1, 2}});
  for (const auto& [name, f] : std::vector<std::pair<std::string, Op>>{
           {"erf", [](const Tensor& t) { return erf(t); }},
           {"relu", [](const Tensor& t) { return relu(t); }},
           {"gelu", [](const Tensor& t) { return gelu(t); }},
           {"silu", [](const Tensor& t) { return silu(t); }},
           {"softplus", [](const Tensor& t) { return softplus(t); }},
           {"floor", [](const Tensor& t) { return floor(t); }},
           {"ceil", [](const Tensor& t) { return ceil(t); }},
           {"round", [](const Tensor& t) { return round(t); }},
           {"trunc", [](const Tensor& t) { return trunc(t); }},
           {"frac", [](const Tensor& t) { return frac(t); }}}) {
    INFO(name);
    CHECK_THROWS_WITH_AS(f(z), doctest::Contains(("[" + name + "]").c_str()), Error);
    CHECK_THROWS_WITH_AS(f(z), doctest::Contains("complex"), Error);
  }
  CHECK(to_vector<cd>(z)[0] == cd(1, 2));
  Tensor b = from_vector(std::vector<bool>{true});
  CHECK_THROWS_WITH_AS(neg(b), doctest::Contains("[neg]"), Error);
  CHECK_THROWS_WITH_AS(-b, doctest::Contains("bool"), Error);
  CHECK_THROWS_WITH_AS(relu(b), doctest::Contains("[relu]"), Error);
  CHECK_THROWS_WITH_AS(floor(b), doctest::Contains("[floor]"), Error);
  CHECK_THROWS_WITH_AS(trunc(b), doctest::Contains("[trunc]"), Error);
  CHECK_THROWS_WITH_AS(frac(b), "[frac] not supported for bool input", Error);
  CHECK(to_vector<bool>(b)[0]);
}

// ---- gradients ----------------------------------------------------------------------------------------------
TEST_CASE("gradcheck: every float function, float64 and complex128") {
  for (const auto& c : float_cases()) {
    INFO("op ", c.name);
    Tensor x = real_t(c.xs).requires_grad_();
    CHECK(autodiff::gradcheck([&](const G& in) { return c.op(in[0]); }, {x}));
    if (c.cref) {
      Tensor z = cplx_t(kZ).requires_grad_();
      CHECK(autodiff::gradcheck([&](const G& in) { return c.op(in[0]); }, {z}));
    }
  }
}

TEST_CASE("gradcheck: abs, sign, angle, square, relu, rounding, softplus regimes") {
  Tensor x = real_t({-2.3, -0.3, 0.4, 1.7}).requires_grad_();
  Tensor z = cplx_t(kZ).requires_grad_();
  auto gc = [](std::function<Tensor(const Tensor&)> f, const Tensor& t) {
    return autodiff::gradcheck([f](const G& in) { return f(in[0]); }, {t});
  };
  for (const auto& f : {Op([](const Tensor& t) { return abs(t); }), Op([](const Tensor& t) { return sign(t); }),
                        Op([](const Tensor& t) { return angle(t); }), Op([](const Tensor& t) { return square(t); })}) {
    CHECK(gc(f, x));
    CHECK(gc(f, z));
  }
  for (const auto& f : {Op([](const Tensor& t) { return relu(t); }), Op([](const Tensor& t) { return floor(t); }),
                        Op([](const Tensor& t) { return ceil(t); }), Op([](const Tensor& t) { return round(t); }),
                        Op([](const Tensor& t) { return trunc(t); }), Op([](const Tensor& t) { return frac(t); }),
                        Op([](const Tensor& t) { return softplus(t, 2.0, 3.0); })}) {
    CHECK(gc(f, x));
  }
  // softplus: both the smooth regime and the linear one (beta x > threshold)
  Tensor xs = real_t({-1.0, 0.5, 1.4, 1.6, 4.0}).requires_grad_();
  CHECK(gc([](const Tensor& t) { return softplus(t, 2.0, 3.0); }, xs));
  // analytic spot values: d|z|/dz* convention gives z/|z|; angle gives i z/|z|^2; 0 at z = 0
  Tensor z0 = cplx_t({{3, 4}, {0, 0}}).requires_grad_();
  abs(z0).sum().backward();
  auto ga = to_vector<cd>(z0.grad());
  CHECK(std::abs(ga[0] - cd(0.6, 0.8)) < 1e-15);
  CHECK(ga[1] == cd(0, 0));
  Tensor z1 = cplx_t({{3, 4}, {0, 0}}).requires_grad_();
  angle(z1).sum().backward();
  auto gn = to_vector<cd>(z1.grad());
  CHECK(std::abs(gn[0] - cd(-4.0 / 25, 3.0 / 25)) < 1e-15);
  CHECK(gn[1] == cd(0, 0));
  // real sign/angle/floor have zero gradient, relu passes only where x > 0
  Tensor xr = real_t({-1.0, 0.0, 2.0}).requires_grad_();
  (sign(xr) + angle(xr) + floor(xr) + relu(xr)).sum().backward();
  CHECK(to_vector<double>(xr.grad()) == std::vector<double>{0, 0, 1});
  // abs of real at 0 has gradient 0
  Tensor x0 = real_t({0.0, -2.0}).requires_grad_();
  abs(x0).sum().backward();
  CHECK(to_vector<double>(x0.grad()) == std::vector<double>{0, -1});
}

TEST_CASE("gradgradcheck: tanh, sigmoid, abs/sign complex, gelu, softplus, asin, rsqrt") {
  Tensor x = real_t({-1.3, -0.2, 0.6, 1.1}).requires_grad_();
  Tensor u = real_t({-0.7, 0.1, 0.8}).requires_grad_();
  Tensor p = real_t({0.3, 1.2, 2.5}).requires_grad_();
  Tensor z = cplx_t({{1, 2}, {-0.5, 0.3}, {0.2, -1.1}}).requires_grad_();
  auto ggc = [](std::function<Tensor(const Tensor&)> f, const Tensor& t) {
    return autodiff::gradgradcheck([f](const G& in) { return f(in[0]); }, {t});
  };
  CHECK(ggc([](const Tensor& t) { return tanh(t); }, x));
  CHECK(ggc([](const Tensor& t) { return tanh(t); }, z));
  CHECK(ggc([](const Tensor& t) { return sigmoid(t); }, x));
  CHECK(ggc([](const Tensor& t) { return sigmoid(t); }, z));
  CHECK(ggc([](const Tensor& t) { return abs(t); }, z));
  CHECK(ggc([](const Tensor& t) { return sign(t); }, z));
  CHECK(ggc([](const Tensor& t) { return angle(t); }, z));
  CHECK(ggc([](const Tensor& t) { return gelu(t); }, x));
  CHECK(ggc([](const Tensor& t) { return gelu(t, true); }, x));
  CHECK(ggc([](const Tensor& t) { return silu(t); }, x));
  CHECK(ggc([](const Tensor& t) { return softplus(t, 1.5, 1.0); }, x));
  CHECK(ggc([](const Tensor& t) { return erf(t); }, x));
  CHECK(ggc([](const Tensor& t) { return asin(t); }, u));
  CHECK(ggc([](const Tensor& t) { return rsqrt(t); }, p));
  CHECK(ggc([](const Tensor& t) { return log1p(t); }, z));
  CHECK(ggc([](const Tensor& t) { return expm1(t); }, z));
}

TEST_CASE("Tensor methods forward to the free functions") {
  Tensor x = real_t({0.3, -0.6});
  auto same = [](const Tensor& a, const Tensor& b) { return to_vector<cd>(a) == to_vector<cd>(b); };
  CHECK(same(x.abs(), abs(x)));
  CHECK(same(x.sign(), sign(x)));
  CHECK(same(x.expm1(), expm1(x)));
  CHECK(same(x.abs().log(), log(abs(x))));
  CHECK(same(x.log1p(), log1p(x)));
  CHECK(same(x.abs().sqrt(), sqrt(abs(x))));
  CHECK(same(x.abs().rsqrt(), rsqrt(abs(x))));
  CHECK(same(x.square(), square(x)));
  CHECK(same(x.tan(), tan(x)));
  CHECK(same(x.sinh(), sinh(x)));
  CHECK(same(x.cosh(), cosh(x)));
  CHECK(same(x.asin(), asin(x)));
  CHECK(same(x.acos(), acos(x)));
  CHECK(same(x.atan(), atan(x)));
  CHECK(same(x.erf(), erf(x)));
  CHECK(same(x.erfc(), erfc(x)));
  CHECK(same(x.asinh(), asinh(x)));
  CHECK(same((x.abs() + 1).acosh(), acosh(abs(x) + 1)));
  CHECK(same(x.atanh(), atanh(x)));
  CHECK(same(x.exp2(), exp2(x)));
  CHECK(same(x.abs().log2(), log2(abs(x))));
  CHECK(same(x.abs().log10(), log10(abs(x))));
  CHECK(same(x.reciprocal(), reciprocal(x)));
  CHECK(same(x.sigmoid(), sigmoid(x)));
  CHECK(same(x.relu(), relu(x)));
  CHECK(same(x.gelu(true), gelu(x, true)));
  CHECK(same(x.silu(), silu(x)));
  CHECK(same(x.softplus(2.0, 1.0), softplus(x, 2.0, 1.0)));
  CHECK(same(x.floor(), floor(x)));
  CHECK(same(x.ceil(), ceil(x)));
  CHECK(same(x.round(), round(x)));
  CHECK(same(x.angle(), angle(x)));
  CHECK(same(x.isfinite(), isfinite(x)));
  CHECK(same(x.logical_not(), logical_not(x)));
}

TEST_CASE("large tensors take the parallel path and agree with a serial reference") {
  const std::int64_t n = 200003;  // above the engine's parallel grain, odd size
  Tensor x = randn({n}, float64);
  auto xv = to_vector<double>(x);
  auto s = to_vector<double>(sigmoid(x));
  auto g = to_vector<double>(gelu(x, true));
  auto a = to_vector<double>(abs(x.to(complex128) * cd(0.6, 0.8)));
  std::int64_t bad_s = 0, bad_g = 0, bad_a = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const long double v = xv[i];
    if (!close(cd(s[i]), cld(sigmoid_ld(v)), 1e-14, 0)) ++bad_s;
    if (!close(cd(g[i]), cld(gelu_tanh_ld(v)), 1e-13, 1e-300)) ++bad_g;
    if (!close(cd(a[i]), cld(std::fabs(v)), 1e-15, 0)) ++bad_a;
  }
  CHECK(bad_s == 0);
  CHECK(bad_g == 0);
  CHECK(bad_a == 0);
}

TEST_CASE("exp float32: the vector kernel against long double over float's range, subnormals too (Note [vector exp])") {
  std::vector<float> xs;
  for (int i = -1100000; i <= 950000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);  // [-110, 95]
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.7228f, 88.72284f, -87.33655f, -103.9720f, -103.9721f})
    xs.push_back(v);
  const auto yv = to_vector<float>(exp(from_vector(xs)));
  const long double tiny = std::ldexp(1.0L, -126), unit = std::ldexp(1.0L, -149);
  const long double big = static_cast<long double>(std::numeric_limits<float>::max());
  double worst_rel = 0, worst_sub = 0;
  bool ends = true;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double ref = std::exp(static_cast<long double>(xs[i]));
    const long double err = std::fabs(static_cast<long double>(yv[i]) - ref);
    if (ref > big) ends = ends && yv[i] == std::numeric_limits<float>::infinity();
    else if (ref >= tiny) worst_rel = std::max(worst_rel, static_cast<double>(err / ref));
    else worst_sub = std::max(worst_sub, static_cast<double>(err / unit));
  }
  CHECK(worst_rel < 1.2e-7);  // 1 ulp; measured 7.7e-8
  CHECK(worst_sub <= 1.0);    // a unit of the smallest subnormal; measured 0.85
  CHECK(ends);
  const auto sp = to_vector<float>(exp(from_vector(std::vector<float>{
      0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(), -200.0f, 200.0f})));
  CHECK(sp[0] == 1.0f);
  CHECK(sp[1] == std::numeric_limits<float>::infinity());
  CHECK(sp[2] == 0.0f);
  CHECK(std::isnan(sp[3]));
  CHECK(sp[4] == 0.0f);
  CHECK(sp[5] == std::numeric_limits<float>::infinity());
  const Tensor b = randn({70, 6}).t();
  CHECK(to_vector<float>(exp(b)) == to_vector<float>(exp(b.contiguous())));
  CHECK(allclose(exp(b).to(float64), exp(b.to(float64)), 2.4e-7, 0));
}

TEST_CASE("tanh float32: the vector kernel against long double (Note [vector tanh])") {
  std::vector<float> xs;
  for (int i = -200000; i <= 200000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);  // [-20, 20]
  for (int i = -3000; i <= 3000; ++i) xs.push_back(0.3f + static_cast<float>(i) * 1e-7f);  // around the switch
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, 1e-40f, 9.0f, 50.0f, -50.0f}) xs.push_back(v);
  const auto yv = to_vector<float>(tanh(from_vector(xs)));
  double worst = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double ref = std::tanh(static_cast<long double>(xs[i]));
    if (ref != 0) worst = std::max(worst, static_cast<double>(std::fabs(yv[i] - ref) / std::fabs(ref)));
    else CHECK(yv[i] == 0.0f);
  }
  CHECK(worst < 2.4e-7);  // 2 ulps; measured 1.7e-7
  constexpr float inf = std::numeric_limits<float>::infinity();
  const auto sp =
      to_vector<float>(tanh(from_vector(std::vector<float>{inf, -inf, std::numeric_limits<float>::quiet_NaN(), -0.0f})));
  CHECK(sp[0] == 1.0f);
  CHECK(sp[1] == -1.0f);
  CHECK(std::isnan(sp[2]));
  CHECK((sp[3] == 0.0f && std::signbit(sp[3])));
  const Tensor b = randn({70, 6}).t();
  CHECK(to_vector<float>(tanh(b)) == to_vector<float>(tanh(b.contiguous())));
  CHECK(allclose(tanh(b).to(float64), tanh(b.to(float64)), 3.6e-7, 1e-30));
}

TEST_CASE("sigmoid and silu float32: the vector kernels against long double, in every layout (Note [vector sigmoid])") {
  std::vector<float> xs;
  for (int i = -1100000; i <= 1100000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);  // [-110, 110]
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 87.0f, -87.0f, 88.7f, -88.7f}) xs.push_back(v);
  const Tensor x = from_vector(xs);
  const auto sv = to_vector<float>(sigmoid(x)), lv = to_vector<float>(silu(x));
  const long double tiny = std::ldexp(1.0L, -126);  // the smallest normal float
  double worst_s = 0, worst_l = 0;
  bool flushed = true;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double v = xs[i], ref = 1 / (1 + std::exp(-v)), lref = v * ref;
    if (v >= -87.3L) {  // a normal float (e^-87.3 = 1.2e-38, 2^-126 = 1.18e-38)
      worst_s = std::max(worst_s, static_cast<double>(std::fabs(sv[i] - ref) / ref));
      if (std::fabs(lref) >= tiny) worst_l = std::max(worst_l, static_cast<double>(std::fabs(lv[i] - lref) / std::fabs(lref)));
    } else {  // flushed to 0 (-0 for silu), never garbage
      flushed = flushed && sv[i] == 0.0f && lv[i] == 0.0f;
    }
  }
  CHECK(worst_s < 3.6e-7);  // 3 ulps; measured 1.9e-7
  CHECK(worst_l < 3.6e-7);  // measured 2.3e-7
  CHECK(flushed);
  CHECK(to_vector<float>(sigmoid(from_vector(std::vector<float>{0.0f})))[0] == 0.5f);
  // special values as the scalar formulas give them
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const auto sp = to_vector<float>(sigmoid(from_vector(std::vector<float>{inf, -inf, nan})));
  CHECK(sp[0] == 1.0f);
  CHECK(sp[1] == 0.0f);
  CHECK(std::isnan(sp[2]));
  const auto lp = to_vector<float>(silu(from_vector(std::vector<float>{inf, nan, -0.0f})));
  CHECK(lp[0] == inf);
  CHECK(std::isnan(lp[1]));
  CHECK(lp[2] == 0.0f);
  // strided operands agree with the contiguous path; float64 keeps libm (agrees within float's precision)
  const Tensor b = randn({70, 6}).t();
  CHECK(to_vector<float>(sigmoid(b)) == to_vector<float>(sigmoid(b.contiguous())));
  CHECK(to_vector<float>(silu(b)) == to_vector<float>(silu(b.contiguous())));
  CHECK(allclose(sigmoid(b).to(float64), sigmoid(b.to(float64)), 3e-7, 0));
  CHECK(allclose(silu(b).to(float64), silu(b.to(float64)), 3e-7, 1e-30));
  // gradients through the vector forward
  Tensor w = b.contiguous().requires_grad_(true);
  (sigmoid(w) * silu(w)).sum().backward();
  Tensor w64 = b.to(float64).requires_grad_(true);
  (sigmoid(w64) * silu(w64)).sum().backward();
  CHECK(allclose(w.grad().to(float64), w64.grad(), 1e-5, 1e-6));
}

TEST_CASE("softplus float32: the vector kernel against long double, in every layout (Note [vector softplus])") {
  std::vector<float> xs;
  for (int i = -1100000; i <= 300000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);  // [-110, 30]
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 87.0f, -87.0f, 88.7f, -88.7f, -103.0f, -104.0f})
    xs.push_back(v);
  const Tensor x = from_vector(xs);
  for (const auto& [beta, threshold] : {std::pair{1.0, 20.0}, std::pair{2.0, 3.0}, std::pair{0.5, 10.0}}) {
    INFO("beta ", beta, " threshold ", threshold);
    const auto yv = to_vector<float>(softplus(x, beta, threshold));
    const auto bf = static_cast<float>(beta);
    double worst = 0, worst_sub = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float bx = xs[i] * bf;  // the op's float product decides the regime
      if (bx > static_cast<float>(threshold)) {
        CHECK(yv[i] == xs[i]);
        continue;
      }
      const long double ref = std::log1p(std::exp(static_cast<long double>(bx))) / beta;
      if (ref >= std::ldexp(1.0L, -126)) worst = std::max(worst, static_cast<double>(std::fabs(yv[i] - ref) / ref));
      else worst_sub = std::max(worst_sub, static_cast<double>(std::fabs(yv[i] - ref) / std::ldexp(1.0L, -149)));
    }
    CHECK(worst < 3.6e-7);    // 3 ulps; measured 2.5e-7
    CHECK(worst_sub < 2.0);   // subnormal results: within 2 units of the smallest subnormal
  }
  // special values as the scalar formula gives them
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const auto sp = to_vector<float>(softplus(from_vector(std::vector<float>{inf, -inf, nan, 0.0f})));
  CHECK(sp[0] == inf);
  CHECK(sp[1] == 0.0f);
  CHECK(std::isnan(sp[2]));
  CHECK(std::fabs(sp[3] - 0.693147180559945309f) <= 6e-8f);
  CHECK(to_vector<float>(softplus(from_vector(std::vector<float>{-inf}), 1.0, kInf))[0] == 0.0f);
  // strided operands agree with the contiguous path; float64 keeps libm (agrees within float's precision)
  const Tensor b = (randn({70, 6}) * 8.0).t();
  CHECK(to_vector<float>(softplus(b)) == to_vector<float>(softplus(b.contiguous())));
  CHECK(allclose(softplus(b).to(float64), softplus(b.to(float64)), 3e-7, 1e-37));
  CHECK(allclose(softplus(b, 2.0, 3.0).to(float64), softplus(b.to(float64), 2.0, 3.0), 3e-7, 1e-37));
  // gradients through the vector forward
  Tensor w = b.contiguous().requires_grad_(true);
  softplus(w, 1.5, 4.0).sum().backward();
  Tensor w64 = b.to(float64).requires_grad_(true);
  softplus(w64, 1.5, 4.0).sum().backward();
  CHECK(allclose(w.grad().to(float64), w64.grad(), 1e-5, 1e-6));
}

TEST_CASE("gelu float32: the vector kernel against long double, in every layout (Note [vector gelu])") {
  // a dense grid over [-14, 14] plus signed zeros and tiny values
  std::vector<float> xs;
  for (int i = -140000; i <= 140000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f}) xs.push_back(v);
  const auto n = static_cast<std::int64_t>(xs.size());
  Tensor x = from_vector(xs).requires_grad_(true);
  Tensor y = gelu(x);
  y.sum().backward();
  const auto yv = to_vector<float>(y), gv = to_vector<float>(x.grad());
  const long double pi = 3.14159265358979323846264338327950288L;
  double worst_abs = 0, worst_rel = 0, worst_grad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const long double v = xs[static_cast<std::size_t>(i)];
    const long double cdf = 0.5L * std::erfc(-v / std::sqrt(2.0L));
    const long double ref = v * cdf, dref = cdf + v * std::exp(-0.5L * v * v) / std::sqrt(2 * pi);
    const long double err = std::fabs(yv[static_cast<std::size_t>(i)] - ref);
    worst_abs = std::max(worst_abs, static_cast<double>(err / (1 + std::fabs(v))));
    if (std::fabs(ref) >= 1e-36L) worst_rel = std::max(worst_rel, static_cast<double>(err / std::fabs(ref)));
    else CHECK(std::fabs(yv[static_cast<std::size_t>(i)]) <= 1e-36f);  // flushed, never garbage
    worst_grad = std::max(worst_grad, static_cast<double>(std::fabs(gv[static_cast<std::size_t>(i)] - dref)));
  }
  CHECK(worst_abs < 1.5e-7);   // measured 6.9e-8
  CHECK(worst_rel < 1e-5);     // measured 4.0e-6, in the far tail (x ~ -12.8); 7.1e-7 for |x| < 5
  CHECK(worst_grad < 3e-7);    // measured 1.8e-7
  // special values as the scalar formula gives them
  auto s = to_vector<float>(gelu(from_vector(std::vector<float>{std::numeric_limits<float>::infinity(),
                                                                   std::numeric_limits<float>::quiet_NaN()})));
  CHECK(s[0] == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(s[1]));
  // strided and broadcast operands go through the same kernel and agree with the contiguous path
  Tensor a = randn({6, 70}), b = randn({70, 6}).t();
  CHECK(to_vector<float>(gelu(b)) == to_vector<float>(gelu(b.contiguous())));
  Tensor w = a.detach().requires_grad_(true), wt = b.detach().requires_grad_(true);
  (gelu(w) * a).sum().backward();
  (gelu(wt) * a).sum().backward();
  Tensor ref_grad = b.contiguous().detach().requires_grad_(true);
  (gelu(ref_grad) * a).sum().backward();
  CHECK(to_vector<float>(wt.grad()) == to_vector<float>(ref_grad.grad()));
  CHECK(w.grad().shape() == Shape{6, 70});
}
