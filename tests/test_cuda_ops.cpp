// CPU-vs-GPU agreement of the ops with CUDA kernels (Note [cuda elementwise], src/fft/cufft_backend.cpp).
// Every case needs a GPU: without one doctest reports them as skipped.
#include <doctest/doctest.h>

#include "cuda_test_util.hpp"

#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "../src/cuda/fast_div.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

double tol(Dtype dt) { return dt == Dtype::Float32 || dt == Dtype::Complex64 ? 2e-5 : 1e-12; }

using cld = std::complex<long double>;

/// A complex function with a kernel of phasor's own (Note [complex elementary functions]) and its long
/// double reference.
struct ComplexFn {
  const char* name;
  Tensor (*op)(const Tensor&);
  cld (*ref)(cld);
};

const std::vector<ComplexFn>& complex_fns() {
  static const std::vector<ComplexFn> fns = {
      {"exp", [](const Tensor& t) { return exp(t); }, [](cld w) { return std::exp(w); }},
      {"log", [](const Tensor& t) { return log(t); }, [](cld w) { return std::log(w); }},
      // log |1 + z| from |1 + z|^2 - 1 (exact enough in long double) unless |1 + z| is small
      {"log1p", [](const Tensor& t) { return log1p(t); },
       [](cld w) {
         const long double x = w.real(), y = w.imag(), h = std::hypot(1 + x, y);
         return cld(h < 0.5L ? std::log(h) : 0.5L * std::log1p(2 * x + x * x + y * y), std::atan2(y, 1 + x));
       }},
      {"sqrt", [](const Tensor& t) { return sqrt(t); }, [](cld w) { return std::sqrt(w); }},
      {"sin", [](const Tensor& t) { return sin(t); }, [](cld w) { return std::sin(w); }},
      {"cos", [](const Tensor& t) { return cos(t); }, [](cld w) { return std::cos(w); }},
      {"tan", [](const Tensor& t) { return tan(t); }, [](cld w) { return std::tan(w); }},
      {"sinh", [](const Tensor& t) { return sinh(t); }, [](cld w) { return std::sinh(w); }},
      {"cosh", [](const Tensor& t) { return cosh(t); }, [](cld w) { return std::cosh(w); }},
      {"tanh", [](const Tensor& t) { return tanh(t); }, [](cld w) { return std::tanh(w); }},
      {"asin", [](const Tensor& t) { return asin(t); }, [](cld w) { return std::asin(w); }},
      {"acos", [](const Tensor& t) { return acos(t); }, [](cld w) { return std::acos(w); }},
      {"atan", [](const Tensor& t) { return atan(t); }, [](cld w) { return std::atan(w); }},
      {"asinh", [](const Tensor& t) { return asinh(t); }, [](cld w) { return std::asinh(w); }},
      {"acosh", [](const Tensor& t) { return acosh(t); }, [](cld w) { return std::acosh(w); }},
      {"atanh", [](const Tensor& t) { return atanh(t); }, [](cld w) { return std::atanh(w); }},
      {"log2", [](const Tensor& t) { return log2(t); }, [](cld w) { return std::log(w) / std::log(2.0L); }},
      {"log10", [](const Tensor& t) { return log10(t); }, [](cld w) { return std::log10(w); }},
  };
  return fns;
}

/// Checks every complex_fns() function on `dev` at `points` (rounded to complex64 and complex128) against
/// its reference: each part on its own, not only |f(z)| (atan(100 - i)'s imaginary part is 1e-4 of it),
/// where the part is a normal number of the dtype (a part far below |f(z)| may underflow, as tanh(100 - i)'s
/// e^-200), within 2e-6 (complex64) or 4e-15 (complex128); a result beyond the dtype's range must be
/// infinite. Measured on glibc and the emulator's host libm: 3.7e-7 and 6.6e-16 at most.
void check_complex_accuracy(const Device& dev, const std::vector<std::complex<double>>& points) {
  for (Dtype dt : {complex64, complex128}) {
    const Tensor z = from_vector(points).to(dt);
    const auto zv = to_vector<std::complex<double>>(z.to(complex128));  // the inputs as rounded to dt
    const double tol = dt == complex64 ? 2e-6 : 4e-15;
    const long double lo = dt == complex64 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
    const long double hi = dt == complex64 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    for (const ComplexFn& fn : complex_fns()) {
      const std::string name = fn.name;
      CAPTURE(name);
      CAPTURE(dt);
      const auto got = to_vector<std::complex<double>>(fn.op(z.to(dev)).to(Device::cpu()).to(complex128));
      double worst = 0;
      std::complex<double> worst_at;
      for (std::size_t i = 0; i < zv.size(); ++i) {
        const cld want = fn.ref(cld(zv[i].real(), zv[i].imag()));
        if (!(std::abs(want) <= hi)) {
          CAPTURE(zv[i]);
          CHECK(std::isinf(std::abs(got[i])));  // beyond dt's range (exp(100 - i) in complex64)
          continue;
        }
        for (int part = 0; part < 2; ++part) {
          const long double w = part ? want.imag() : want.real();
          const double g = part ? got[i].imag() : got[i].real();
          const double err = std::fabs(w) >= lo ? static_cast<double>(std::fabs(g - w) / std::fabs(w)) : 0.0;
          if (!(err <= worst)) {  // NaN counts as the worst
            worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
            worst_at = zv[i];
          }
        }
      }
      CAPTURE(worst_at);
      CHECK(worst <= tol);
    }
  }
}

}  // namespace

TEST_CASE("cuda ops: FastDiv divides like / for every divisor to 4096 and random ones to 2^31 - 1") {
  // Note [fast index division]: numerators below 2^31; their edges are 0, multiples of d and their
  // neighbours, and 2^31 - 1
  constexpr std::uint32_t kTop = (std::uint32_t{1} << 31) - 1;
  std::mt19937_64 rng(7);
  auto check = [&](std::uint32_t d) {
    const cuda::FastDiv f(d);
    std::vector<std::uint32_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, kTop, kTop - 1, kTop / d * d,
                                     kTop / d * d - 1};
    for (int i = 0; i < 64; ++i) ns.push_back(static_cast<std::uint32_t>(rng() % (std::uint64_t{kTop} + 1)));
    for (int i = 0; i < 16; ++i) ns.push_back(static_cast<std::uint32_t>(rng() % 4096));
    int bad = 0;
    for (std::uint32_t n : ns)
      if (n <= kTop && f.div(n) != n / d) ++bad;
    if (bad) FAIL_CHECK("FastDiv(" << d << ") is wrong for " << bad << " numerators");
  };
  for (std::uint32_t d = 1; d <= 4096; ++d) check(d);
  for (int i = 0; i < 20000; ++i) check(static_cast<std::uint32_t>(1 + rng() % kTop));
  for (int s = 12; s < 31; ++s)  // powers of two and their neighbours
    for (std::uint32_t d : {(std::uint32_t{1} << s) - 1, std::uint32_t{1} << s, (std::uint32_t{1} << s) + 1}) check(d);
  check(kTop);
}

// Tensors below 2^31 elements take 32-bit index math (Note [fast index division]); the 64-bit paths serve
// larger ones, too large to test on every device, so this case lowers the limit and runs them.
DEVICE_CASE("cuda ops: strided, index, gapped-reduction and im2col/col2im kernels agree with 64-bit index math too") {
  manual_seed(40);
  const Tensor a = sample({6, 1, 7, 5}, float32), b = sample({4, 1, 5}, float64);  // broadcast to (6, 4, 7, 5)
  const Tensor c = sample({6, 4, 7, 5}, float32) > 0.0;
  const Tensor idx = from_vector(std::vector<std::int64_t>{3, 0, 6, 6, 1});
  const Tensor z = sample({9, 13, 11}, float64);
  struct Limit {  // restores the limit however the case ends
    std::int64_t before;
    explicit Limit(std::int64_t l) : before(cuda::set_fast_div_limit(l)) {}
    ~Limit() { cuda::set_fast_div_limit(before); }
  };
  for (std::int64_t limit : {std::int64_t{0}, std::int64_t{1} << 31}) {
    CAPTURE(limit);
    const Limit scope(limit);
    const Tensor ag = a.to(dev), bg = b.to(dev), zg = z.to(dev);
    CHECK(rel_diff(ag + bg, a + b) <= 1e-6);                                                     // strided binary, mixed dtypes
    CHECK(rel_diff(where(c.to(dev), ag, bg), where(c, a, b)) <= 1e-6);                           // where
    CHECK(rel_diff(ag.permute({2, 0, 3, 1}).contiguous(), a.permute({2, 0, 3, 1}).contiguous()) == 0);  // strided copy
    CHECK(rel_diff(zg.transpose(0, 2).exp(), z.transpose(0, 2).exp()) <= 1e-12);                 // strided unary
    Tensor fg = zeros({9, 13, 11}, float64, dev), fc = zeros({9, 13, 11}, float64);
    fg.transpose(0, 1).narrow(0, 2, 5).fill_(3.0);
    fc.transpose(0, 1).narrow(0, 2, 5).fill_(3.0);
    CHECK(rel_diff(fg, fc) == 0);                                                                // strided fill
    CHECK(rel_diff(index_select(zg, 1, idx.to(dev)), index_select(z, 1, idx)) == 0);              // gather
    CHECK(rel_diff(zg.sum({0, 2}), z.sum({0, 2})) <= 1e-12);                                      // gapped rows
    CHECK(rel_diff(zg.amax({0, 2}), z.amax({0, 2})) == 0);
    // im2col (the forward) and col2im (the input's gradient) of a strided, dilated, padded convolution
    Tensor xc = sample({2, 3, 9, 8}, float64).requires_grad_(), xg = xc.detach().to(dev).requires_grad_();
    const Tensor w = sample({4, 3, 3, 2}, float64);
    const Tensor yc = nn::functional::conv2d(xc, w, Tensor(), {2, 1}, {1, 2}, {1, 2});
    const Tensor yg = nn::functional::conv2d(xg, w.to(dev), Tensor(), {2, 1}, {1, 2}, {1, 2});
    CHECK(rel_diff(yg, yc) <= 1e-12);
    const Tensor go = sample(yc.shape(), float64);
    yc.backward(go);
    yg.backward(go.to(dev));
    CHECK(rel_diff(xg.grad(), xc.grad()) <= 1e-12);
  }
}

DEVICE_CASE("cuda ops: unary ops agree with the CPU") {
  manual_seed(1);
  using U = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, U>> ops = {
      {"neg", [](const Tensor& x) { return -x; }},          {"abs", [](const Tensor& x) { return x.abs(); }},
      {"exp", [](const Tensor& x) { return x.exp(); }},     {"expm1", [](const Tensor& x) { return x.expm1(); }},
      {"log", [](const Tensor& x) { return x.abs().log(); }}, {"sqrt", [](const Tensor& x) { return x.abs().sqrt(); }},
      {"sin", [](const Tensor& x) { return x.sin(); }},     {"cos", [](const Tensor& x) { return x.cos(); }},
      {"tanh", [](const Tensor& x) { return x.tanh(); }},   {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }},
      {"square", [](const Tensor& x) { return x.square(); }}, {"conj", [](const Tensor& x) { return x.conj(); }},
      {"sign", [](const Tensor& x) { return x.sign(); }},   {"isfinite", [](const Tensor& x) { return x.isfinite(); }},
  };
  const std::vector<std::pair<std::string, U>> real_ops = {
      {"erf", [](const Tensor& x) { return x.erf(); }},     {"relu", [](const Tensor& x) { return x.relu(); }},
      {"gelu", [](const Tensor& x) { return x.gelu(); }},   {"gelu_tanh", [](const Tensor& x) { return x.gelu(true); }},
      {"silu", [](const Tensor& x) { return x.silu(); }},   {"softplus", [](const Tensor& x) { return x.softplus(2.0, 5.0); }},
      {"floor", [](const Tensor& x) { return x.floor(); }}, {"round", [](const Tensor& x) { return x.round(); }},
      {"trunc", [](const Tensor& x) { return x.trunc(); }}, {"frac", [](const Tensor& x) { return x.frac(); }},
      {"atan", [](const Tensor& x) { return x.atan(); }},   {"clamp", [](const Tensor& x) { return x.clamp(-0.5, 0.7); }},
  };
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const Tensor x = sample({37, 65}, dt);
    const Tensor xt = x.transpose(0, 1);  // strided input
    for (const auto& [name, f] : ops) {
      CAPTURE(name);
      CAPTURE(dt);
      CHECK(rel_diff(f(x.to(dev)), f(x)) <= tol(dt));
      CHECK(rel_diff(f(xt.to(dev).transpose(0, 1).transpose(0, 1)), f(xt)) <= tol(dt));
    }
    if (is_complex(dt)) continue;
    for (const auto& [name, f] : real_ops) {
      CAPTURE(name);
      CAPTURE(dt);
      CHECK(rel_diff(f(x.to(dev)), f(x)) <= tol(dt));
    }
  }
  // integer input promotes to the default float dtype on both devices
  const Tensor i = sample({100}, int64);
  CHECK(rel_diff(i.to(dev).exp(), i.exp()) <= 2e-5);
}

DEVICE_CASE("cuda ops: unary ops keep NaN and stay accurate where the naive formula loses it") {
  // per element: NaN where the CPU has NaN, else a relative error within tol (tiny results included)
  auto check_close = [](const Tensor& gpu, const Tensor& cpu, double t) {
    const Tensor g = gpu.to(Device::cpu());
    REQUIRE(g.dtype() == cpu.dtype());
    CHECK((g.isnan() == cpu.isnan()).all().item<bool>());
    const Tensor ok = cpu.isnan() | ((g - cpu).abs().to(float64) <= cpu.abs().to(float64) * t);
    CHECK(ok.all().item<bool>());
  };
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const double t = dt == float32 ? 1e-5 : 1e-13;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor x = from_vector(std::vector<double>{nan, -30.0, -12.0, -3.0, -0.5, 0.0, 0.25, 4.0}, Shape{8}).to(dt);
    const Tensor xd = x.to(dev);
    check_close(xd.sign(), x.sign(), 0);      // sign(NaN) = NaN
    check_close(xd.relu(), x.relu(), 0);      // relu(NaN) = NaN
    check_close(xd.sigmoid(), x.sigmoid(), t);  // e^-30 / (1 + e^-30), not 1 / (1 + e^30) rounded
    check_close(xd.silu(), x.silu(), t);
    check_close(xd.gelu(), x.gelu(), t * 10);  // x Phi(x) for x = -12 is ~1e-32, not 0
    check_close(xd.gelu(true), x.gelu(true), t * 10);
  }
  for (Dtype dt : {complex64, complex128}) {
    CAPTURE(dt);
    const double t = dt == complex64 ? 1e-5 : 1e-13;
    const Tensor re = from_vector(std::vector<double>{1e-9, -3e-7, 2e-12, 0.5}, Shape{4});
    const Tensor im = from_vector(std::vector<double>{-2e-9, 1e-8, 0.0, -0.25}, Shape{4});
    const Tensor z = complex(re, im).to(dt);
    // |expm1(z)| ~ |z| and |log1p(z)| ~ |z|: exp(z) - 1 and log(1 + z) would lose every digit
    check_close(z.to(dev).expm1(), z.expm1(), t);
    check_close(z.to(dev).log1p(), z.log1p(), t);
    // pow as the CPU's cpow: integer exponents by squaring, 0^w = 0 for Re w > 0
    const Tensor zz = complex(from_vector(std::vector<double>{0.0, 0.0, 1.5, -0.75}, Shape{4}),
                              from_vector(std::vector<double>{0.0, 0.0, -0.5, 2.0}, Shape{4})).to(dt);
    const Tensor w = complex(from_vector(std::vector<double>{3.0, 0.5, -2.0, 0.3}, Shape{4}),
                             from_vector(std::vector<double>{0.0, 1.0, 0.0, -0.2}, Shape{4})).to(dt);
    check_close(pow(zz.to(dev), w.to(dev)), pow(zz, w), t * 10);
    check_close(zz.to(dev).pow(Scalar(3.0)), zz.pow(Scalar(3.0)), t * 10);
  }
  // complex functions within a few ulps of a long double reference, also where the textbook formulas cancel
  // or overflow early (Note [complex elementary functions]): tanh near i pi/2, tan near pi/2, log near 1 and
  // near |z| = 1, asin and acos near 1, atan near i and far from 0 on the line Re = +-1 (atan(100 - i)'s small
  // imaginary part), sinh and cosh past exp's range in float (sinh(88.5 + 1e-30i) = 1.4e38 + 1.4e8i: e^88.5
  // overflows float, the results do not)
  const double h = 1.5707963267948966;
  check_complex_accuracy(dev, {{1e-3, h - 1e-3}, {-2e-4, h + 3e-4}, {h - 1e-3, 1e-3}, {0.3, -1.2},     {-4.0, 2.5},
                               {12.0, -0.7},     {0.6, 0.8},         {1.0, 1e-4},      {-0.999, 0.04},  {25.0, 1.0},
                               {1e-3, 0.999},    {-2e-4, -1.0003},   {100.0, -1.0},    {-1.0, 30.0},    {1e-30, 1.0},
                               {-1e-30, -1.0},   {1.0, 1e-30},       {0.7, -1e3},      {88.5, 1e-30},   {-88.5, 2.0},
                               {1e-30, 88.5},    {-3.0, -88.5},      {0.7071, -0.7071}, {-0.28, 0.96}});
  // on the branch cuts (the side set by the sign of a zero part), at the branch points and at infinities
  // the values and their signs are the CPU's (C99's rules): acos(2 + 0i) = 0 - 1.317i, acos(2 - 0i) = 0 + 1.317i
  const double nz = -0.0, inf = std::numeric_limits<double>::infinity();
  const std::vector<std::complex<double>> cuts = {{2, 0},  {2, nz},  {-2, 0}, {-2, nz}, {0, 2},   {nz, 2},
                                                  {0, -2}, {nz, -2}, {1, 0},  {-1, 0},  {0, 0},   {nz, nz},
                                                  {-4, 0}, {-4, nz}, {inf, 1}, {1, inf}, {-inf, inf}, {3, 1e-30}};
  using UF = std::function<Tensor(const Tensor&)>;
  auto same_as_cpu = [&](const std::vector<std::complex<double>>& points, const std::vector<UF>& fs) {
    for (Dtype dt : {complex64, complex128}) {
      const Tensor z = from_vector(points).to(dt);
      for (std::size_t k = 0; k < fs.size(); ++k) {
        const auto want = to_vector<std::complex<double>>(fs[k](z).to(complex128));
        const auto got = to_vector<std::complex<double>>(fs[k](z.to(dev)).to(Device::cpu()).to(complex128));
        for (std::size_t i = 0; i < points.size(); ++i) {
          CAPTURE(k);
          CAPTURE(dt);
          CAPTURE(points[i]);
          CAPTURE(got[i]);
          CAPTURE(want[i]);
          auto same_part = [&](double g, double w) {
            if (std::isnan(w)) return std::isnan(g);
            if (std::isinf(w)) return g == w;
            return std::signbit(g) == std::signbit(w) && std::abs(g - w) <= (dt == complex64 ? 1e-6 : 1e-14) * std::abs(w);
          };
          CHECK(same_part(got[i].real(), want[i].real()));
          CHECK(same_part(got[i].imag(), want[i].imag()));
        }
      }
    }
  };
  same_as_cpu(cuts, {[](const Tensor& t) { return asin(t); }, [](const Tensor& t) { return acos(t); },
                     [](const Tensor& t) { return atan(t); }, [](const Tensor& t) { return sqrt(t); },
                     [](const Tensor& t) { return log(t); }, [](const Tensor& t) { return tanh(t); },
                     [](const Tensor& t) { return tan(t); }});
  // past exp's range (88 in float, 709 in double) next to an axis: sinh(95 + 0i) = inf + 0i and
  // exp(95 + 1e-30i) = inf + 1.8e11i in complex64, where libcu++'s textbook products give inf + NaN i
  // (cosh x * sin 0) and inf + inf i
  const std::vector<std::complex<double>> far = {{95, 0},    {95, nz},     {-95, nz},   {0, 95},     {nz, -95},
                                                 {95, 1e-30}, {-95, -1e-5}, {1e-30, 95}, {712, 0},   {-712, nz},
                                                 {0, 712},    {nz, -712},   {712, 1e-30}, {-1e-5, 712}, {712, 30}};
  same_as_cpu(far, {[](const Tensor& t) { return exp(t); }, [](const Tensor& t) { return sin(t); },
                    [](const Tensor& t) { return cos(t); }, [](const Tensor& t) { return sinh(t); },
                    [](const Tensor& t) { return cosh(t); }, [](const Tensor& t) { return tanh(t); },
                    [](const Tensor& t) { return tan(t); }});
  // tanh with an infinite or NaN imaginary part: C99's NaN + NaN i for finite nonzero x (not the +-1 of
  // the large-x formula), x + NaN i for x = 0, +-1 +- 0i for infinite x
  const double nan = std::numeric_limits<double>::quiet_NaN();
  same_as_cpu({{20, inf}, {-20, -inf}, {0.5, inf}, {0, inf}, {nz, -inf}, {20, nan}, {0, nan}, {inf, 2}, {-inf, -3}},
              {[](const Tensor& t) { return tanh(t); }});
  // int64 powers run on the GPU (the CPU's ipow: a negative exponent gives 1, +-1 or 0)
  const Tensor a = from_vector(std::vector<std::int64_t>{-3, -1, 0, 1, 2, 7}, Shape{6});
  const Tensor e = from_vector(std::vector<std::int64_t>{3, -3, 0, -2, 10, 2}, Shape{6});
  CHECK((pow(a.to(dev), e.to(dev)).to(Device::cpu()) == pow(a, e)).all().item<bool>());
  CHECK((a.to(dev).pow(Scalar(std::int64_t{3})).to(Device::cpu()) == a.pow(Scalar(std::int64_t{3}))).all().item<bool>());
}

DEVICE_CASE("cuda ops: complex elementary functions: each part within a few ulps of long double over a sweep") {
  // Note [complex elementary functions]: 18,000 points at six scales and near the lines Re z = +-1, Im z =
  // +-1 and the circle |z| = 1, where the textbook formulas cancel. Not expm1: its real part,
  // e^x cos y - 1, cancels near e^x cos y = 1 in complex128 (its own case below).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::complex<double>> pts;
  for (double scale : {1e-3, 0.3, 1.0, 3.0, 30.0, 1e3})
    for (int i = 0; i < 2000; ++i) pts.emplace_back(u(rng) * scale, u(rng) * scale);
  for (int i = 0; i < 2000; ++i) pts.emplace_back(std::copysign(1.0, u(rng)) + u(rng) * 1e-2, u(rng) * 50);
  for (int i = 0; i < 2000; ++i) pts.emplace_back(u(rng) * 50, std::copysign(1.0, u(rng)) + u(rng) * 1e-2);
  for (int i = 0; i < 2000; ++i) {
    const double t = u(rng) * 3.2, r = 1 + u(rng) * 1e-3;
    pts.emplace_back(r * std::cos(t), r * std::sin(t));
  }
  check_complex_accuracy(dev, pts);
}

DEVICE_CASE("cuda ops: complex expm1's real part near e^x cos y = 1: float's digits in complex64, an ulp of its larger term in complex128") {
  // Note [complex elementary functions]: Re expm1(x + iy) = expm1(x) cos y - 2 sin^2(y/2) cancels on the
  // curve x = -log cos y. Points on either side of it, 10^-3 to 10^-7 of x away, from tiny to large z; the
  // error of the real part is at most eps |Re| + 4 * 2^-53 * T, T the larger term (eps = 2^-23 complex64,
  // 2^-52 complex128), the imaginary part's 2 eps |Im|. complex64 computes in double, so its 2^-53 T is
  // far below its own rounding; computed in float it would be 2^-24 T, 10^7 times the real part at the
  // closest points. The long double reference has 11 bits more than double, enough at these distances.
  std::vector<std::complex<double>> pts;
  for (double y : {1e-4, -3e-3, 0.05, 0.3, -1.0, 1.4, 1.5, 5.0, -7.0})
    for (double d : {1e-3, -1e-3, 1e-5, -1e-5, 1e-7, -1e-7}) pts.emplace_back(-std::log(std::cos(y)) * (1 + d), y);
  pts.emplace_back(-20.0, 1e-20);  // e^x sin y and expm1(x) cos y far apart in scale
  pts.emplace_back(100.0, 1e-30);  // complex64: inf + 2.7e13i (e^100 sin(1e-30); a float e^100 is inf)
  for (Dtype dt : {complex64, complex128}) {
    CAPTURE(dt);
    const double eps = dt == complex64 ? 0x1p-23 : 0x1p-52;
    const long double hi = dt == complex64 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    const Tensor z = from_vector(pts).to(dt);
    const auto zv = to_vector<std::complex<double>>(z.to(complex128));  // the inputs as rounded to dt
    const auto got = to_vector<std::complex<double>>(expm1(z.to(dev)).to(Device::cpu()).to(complex128));
    int bad = 0;
    for (std::size_t i = 0; i < zv.size(); ++i) {
      const long double x = zv[i].real(), y = zv[i].imag(), s = std::sin(y / 2);
      const long double a = std::expm1(x) * std::cos(y), b = 2 * s * s;
      const long double re = a - b, im = std::exp(x) * std::sin(y), big = std::max(std::fabs(a), b);
      const bool ok = (std::fabs(re) > hi ? got[i].real() == std::copysign(HUGE_VAL, static_cast<double>(re))
                                          : std::fabs(got[i].real() - re) <= eps * std::fabs(re) + 4 * 0x1p-53L * big) &&
                      std::fabs(got[i].imag() - im) <= 2 * eps * std::fabs(im);
      if (!ok && ++bad <= 5) {
        CAPTURE(zv[i]);
        CAPTURE(got[i]);
        CAPTURE(static_cast<double>(re));
        CAPTURE(static_cast<double>(im));
        FAIL_CHECK("expm1 misses its bound");
      }
    }
    CHECK(bad == 0);
  }
}

DEVICE_CASE("cuda ops: complex division, sqrt, rsqrt and sigmoid as on the CPU: special values and signed zeros exactly, extremes within 2 ulps") {
  // Note [complex division]: both engines call cdiv (libcu++'s division gave 1 / (1e-310 + 0i) = inf + 0i
  // where the CPU gave inf + NaN i, and differed in signed zeros). The GPU may contract a * b + c into an
  // fma, so finite quotients are compared to within 2 ulps of |n / w|; zeros' signs, infinities and NaN
  // exactly. The CPU's own accuracy and special values: test_binary.
  const double nz = -0.0, inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::complex<double>> n = {{1, 0},   {1e308, 1e308}, {1e-320, 1e-320}, {1, 2},   {1, 0},   {0, 0},  {nan, 1},
                                         {inf, 0}, {inf, inf},     {1, 2},           {1, 2},   {0, 0},   {1, 2},  {3e38, 3e38},
                                         {1, 0},   {-1, 0},        {1e-40, 1e-40},   {6, -8}};
  std::vector<std::complex<double>> w = {{1e-310, 0}, {2, 2},    {1e-320, 0}, {0, 0}, {0, 0},    {0, 0},    {0, 0},
                                         {1, 0},      {1, 2},    {inf, 0},    {-inf, inf}, {-1, 0}, {nz, 0},  {2, 2},
                                         {1e-40, 0},  {0, 0},    {1e-40, 0},  {0, 2}};
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-1074, 1023);
  for (int i = 0; i < 4000; ++i) {
    auto part = [&] { return std::ldexp(u(rng), i % 2 ? e(rng) : e(rng) / 64); };
    n.emplace_back(part(), part());
    w.emplace_back(part(), part());
  }
  for (Dtype dt : {complex64, complex128}) {
    CAPTURE(dt);
    const double ulp = dt == complex64 ? 0x1p-23 : 0x1p-52;
    const Tensor nt = from_vector(n).to(dt), wt = from_vector(w).to(dt);
    const std::vector<std::function<Tensor(const Tensor&, const Tensor&)>> fs = {
        [](const Tensor& a, const Tensor& b) { return a / b; },
        [](const Tensor& a, const Tensor& b) { return a.clone().div_(b); },
        [](const Tensor& a, const Tensor&) { return sqrt(a); },  // csqrt scales subnormal and huge z exactly
        [](const Tensor& a, const Tensor&) { return rsqrt(a); },
        [](const Tensor& a, const Tensor&) { return sigmoid(a); }};
    for (std::size_t k = 0; k < fs.size(); ++k) {
      const auto want = to_vector<std::complex<double>>(fs[k](nt, wt).to(complex128));
      const auto got = to_vector<std::complex<double>>(fs[k](nt.to(dev), wt.to(dev)).to(Device::cpu()).to(complex128));
      int bad = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double m = std::abs(want[i]);
        auto same_part = [&](double g, double v) {
          if (std::isnan(v) || std::isinf(v)) return std::isnan(v) ? std::isnan(g) : g == v;
          if (v == 0 && i < 18) return g == 0 && std::signbit(g) == std::signbit(v);
          return std::abs(g - v) <= 2 * ulp * m;
        };
        if (!same_part(got[i].real(), want[i].real()) || !same_part(got[i].imag(), want[i].imag())) {
          if (++bad <= 5) {
            CAPTURE(k);
            CAPTURE(n[i]);
            CAPTURE(w[i]);
            CAPTURE(got[i]);
            CAPTURE(want[i]);
            FAIL_CHECK("the device's quotient differs from the CPU's");
          }
        }
      }
      CHECK(bad == 0);
    }
  }
}

DEVICE_CASE("cuda ops: floating -> int64 casts truncate and saturate (NaN -> 0) identically on the CPU and the GPU") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
  const std::vector<double> v = {2.7, -2.7, -0.5, nan, inf, -inf, 1e30, -1e30, 0x1p63, -0x1p63, 0x1p62};
  const std::vector<std::int64_t> want = {2, -2, 0, 0, big, small, big, small, big, small, std::int64_t{1} << 62};
  for (const Device& d : {Device::cpu(), dev}) {
    CAPTURE(d.str());
    for (Dtype dt : {float64, float32, complex128, complex64}) {
      CAPTURE(dt);
      CHECK(to_vector<std::int64_t>(from_vector(v).to(dt).to(d).to(int64)) == want);
    }
  }
}

DEVICE_CASE("cuda ops: int64 add, sub, mul, neg, abs and square wrap on overflow (two's complement) as on the CPU") {
  // expected values from unsigned arithmetic, what PyTorch's int64 ops give; alpha too (add/sub scale b)
  const std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> a = {big, small, big - 3, std::int64_t{1} << 62, -7};
  const std::vector<std::int64_t> b = {1, -1, big, 4, small};
  auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  std::vector<std::int64_t> sum, diff, prod, sum3, diff3;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sum.push_back(static_cast<std::int64_t>(u(a[i]) + u(b[i])));
    diff.push_back(static_cast<std::int64_t>(u(a[i]) - u(b[i])));
    prod.push_back(static_cast<std::int64_t>(u(a[i]) * u(b[i])));
    sum3.push_back(static_cast<std::int64_t>(u(a[i]) + 3 * u(b[i])));
    diff3.push_back(static_cast<std::int64_t>(u(a[i]) - 3 * u(b[i])));
  }
  for (const Device& d : {Device::cpu(), dev}) {
    CAPTURE(d.str());
    const Tensor x = from_vector(a).to(d), y = from_vector(b).to(d);
    CHECK(to_vector<std::int64_t>(x + y) == sum);
    CHECK(to_vector<std::int64_t>(x - y) == diff);
    CHECK(to_vector<std::int64_t>(x * y) == prod);
    CHECK(to_vector<std::int64_t>(add(x, y, 3)) == sum3);
    CHECK(to_vector<std::int64_t>(sub(x, y, 3)) == diff3);
    Tensor z = x.clone();
    z.mul_(y);
    CHECK(to_vector<std::int64_t>(z) == prod);
    // the minimum is its own negation and absolute value; squares keep the low 64 bits
    std::vector<std::int64_t> negs, abss, squares;
    for (std::int64_t v : a) {
      negs.push_back(static_cast<std::int64_t>(0 - u(v)));
      abss.push_back(v < 0 ? static_cast<std::int64_t>(0 - u(v)) : v);
      squares.push_back(static_cast<std::int64_t>(u(v) * u(v)));
    }
    CHECK(negs[1] == small);
    CHECK(to_vector<std::int64_t>(-x) == negs);
    CHECK(to_vector<std::int64_t>(x.abs()) == abss);
    CHECK(to_vector<std::int64_t>(x.square()) == squares);
  }
}

DEVICE_CASE("cuda ops: abs clears the sign bit of -0 and -NaN; maximum and minimum of tied +-0 give the first operand, as on the CPU") {
  const double nz = -0.0, inf = std::numeric_limits<double>::infinity();
  const double neg_nan = -std::numeric_limits<double>::quiet_NaN();
  REQUIRE(std::signbit(neg_nan));
  for (Dtype dt : {float32, float64}) {
    for (const Device& d : {Device::cpu(), dev}) {
      CAPTURE(dt);
      CAPTURE(d.str());
      const Tensor x = from_vector(std::vector<double>{nz, 0.0, neg_nan, -2.5, -inf}).to(dt).to(d);
      REQUIRE(sign_bits(x) == std::vector<bool>{true, false, true, true, true});
      const Tensor r = x.abs();
      CHECK(sign_bits(r) == std::vector<bool>(5, false));
      const auto rv = to_vector<double>(r.to(Device::cpu()).to(float64));
      CHECK(rv[0] == 0.0);
      CHECK(std::isnan(rv[2]));
      CHECK(rv[3] == 2.5);
      CHECK(rv[4] == inf);
      const Tensor a = from_vector(std::vector<double>{0.0, nz, nz, 0.0, 1.0, -1.0}).to(dt).to(d);
      const Tensor b = from_vector(std::vector<double>{nz, 0.0, nz, 0.0, nz, 0.0}).to(dt).to(d);
      CHECK(sign_bits(maximum(a, b)) == std::vector<bool>{false, true, true, false, false, false});
      CHECK(sign_bits(minimum(a, b)) == std::vector<bool>{false, true, true, false, true, true});
      CHECK(sign_bits(maximum(b, a)) == std::vector<bool>{true, false, true, false, false, false});
    }
  }
}

DEVICE_CASE("cuda ops: binary ops, broadcasting and type promotion agree with the CPU") {
  manual_seed(2);
  using B = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, B>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a.sub(b, 0.5); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / (b.abs() + 1.0); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return a == b; }},
  };
  const std::vector<std::pair<std::string, B>> real_ops = {
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }},
      {"ge", [](const Tensor& a, const Tensor& b) { return a >= b; }},
      {"atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a.abs() + 0.1, b); }},
  };
  const std::vector<std::pair<Dtype, Dtype>> pairs = {
      {float32, float32}, {float64, float32}, {complex64, float32}, {complex128, complex64}, {int64, float64}, {bool_, int64}};
  for (const auto& [da, db] : pairs) {
    const Tensor a = sample({8, 1, 33}, da), b = sample({5, 33}, db);  // broadcast to (8, 5, 33)
    for (const auto& [name, f] : ops) {
      if (name == "sub" && da == Dtype::Bool) continue;
      CAPTURE(name);
      CAPTURE(da);
      CAPTURE(db);
      CHECK(rel_diff(f(a.to(dev), b.to(dev)), f(a, b)) <= 2e-5);
    }
    if (is_complex(da) || is_complex(db)) continue;
    for (const auto& [name, f] : real_ops) {
      if (name == "pow" && da == Dtype::Bool) continue;  // abs() takes no bool, on either device
      CAPTURE(name);
      CHECK(rel_diff(f(a.to(dev), b.to(dev)), f(a, b)) <= 2e-5);
    }
  }
  // scalars, in-place ops, where, fill, casts and strided copies
  const Tensor x = sample({64, 48}, float32), y = sample({64, 48}, float32);
  Tensor g = x.to(dev);
  g.mul_(2.0).add_(y.to(dev), -1.0);
  CHECK(rel_diff(g, x * 2.0 - y) <= 2e-5);
  CHECK(rel_diff(where(x.to(dev) > 0.0, x.to(dev), y.to(dev)), where(x > 0.0, x, y)) == 0);
  CHECK(rel_diff(full({7, 9}, 3.5, float64, dev), full({7, 9}, 3.5, float64)) == 0);
  CHECK(rel_diff(x.to(dev).to(float64), x.to(float64)) == 0);
  CHECK(rel_diff(x.to(dev).transpose(0, 1).contiguous(), x.transpose(0, 1).contiguous()) == 0);
  Tensor z = zeros({64, 48}, complex64, dev);
  z.copy_(x.to(dev));
  CHECK(rel_diff(z, x.to(complex64)) == 0);
}

// The flat kernel (contiguous operands, each thread loading 4 elements a grid step apart, with a tail
// loop) and its 0-d operands: sizes on both sides of every boundary, scalars on either side, in place,
// a bool output, three inputs (where), and contiguous and strided fills.
DEVICE_CASE("cuda ops: fmod, remainder, floor_divide, hypot, copysign, logaddexp(2) and xlogy agree with the CPU, bit for bit on special values") {
  manual_seed(3);
  using B = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, B>> ops = {
      {"fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); }},
      {"remainder", [](const Tensor& a, const Tensor& b) { return a % b; }},
      {"floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); }},
      {"div trunc", [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); }},
      {"hypot", [](const Tensor& a, const Tensor& b) { return hypot(a, b); }},
      {"copysign", [](const Tensor& a, const Tensor& b) { return copysign(a, b); }},
      {"logaddexp", [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }},
      {"logaddexp2", [](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); }},
      {"xlogy", [](const Tensor& a, const Tensor& b) { return xlogy(a, b); }},
  };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> av = {7.5, -7.5, 6.0, -0.0, 0.0, 1e300, inf, -inf, nan, 0.3};
  const std::vector<double> bv = {2.0, -2.0, 0.1, -0.7, 0.0, -0.0, inf, -inf, nan};
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor a = from_vector(av).reshape({10, 1}).to(dt), b = from_vector(bv).reshape({1, 9}).to(dt);
    for (const auto& [name, f] : ops) {
      CAPTURE(name);
      const Tensor want = f(a, b), got = f(a.to(dev), b.to(dev));
      CHECK(got.device() == dev);
      // the division family is exact, the rest within rounding; signs of zeros and NaN placement exactly
      CHECK(rel_diff(got, want) <= (name == "hypot" || name.rfind("log", 0) == 0 || name == "xlogy" ? 4e-7 : 0));
      CHECK(sign_bits(where(got.isnan(), got.abs(), got)) == sign_bits(where(want.isnan(), want.abs(), want)));
    }
    // random operands, mixed dtypes, broadcasting
    const Tensor x = sample({8, 1, 33}, dt) * 4.0, y = sample({5, 33}, float64);
    for (const auto& [name, f] : ops) {
      CAPTURE(name);
      CHECK(rel_diff(f(x.to(dev), y.to(dev)), f(x, y)) <= 2e-6);
    }
  }
  // large float quotients (2^22 to 2^30 and past): the same exact quotients on both devices (Note [fast fmod])
  for (Dtype dt : {float32, float64}) {
    const Tensor a = sample({4096}, dt) * 3e8, b = sample({4096}, dt);
    for (const auto& [name, f] : ops) {
      if (name != "fmod" && name != "remainder" && name != "floor_divide" && name != "div trunc") continue;
      CAPTURE(name);
      CHECK(rel_diff(f(a.to(dev), b.to(dev)), f(a, b)) == 0);
    }
  }
  // int64: exact, wrapping at INT64_MIN / -1; a zero divisor throws on the device as on the CPU
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const Tensor ia = from_vector(std::vector<std::int64_t>{7, -7, 7, -7, lo, lo, 0, 9});
  const Tensor ib = from_vector(std::vector<std::int64_t>{3, 3, -3, -3, -1, 2, 5, -4});
  for (const auto& [name, f] : ops) {
    if (name != "fmod" && name != "remainder" && name != "floor_divide" && name != "div trunc") continue;
    CAPTURE(name);
    const Tensor got = f(ia.to(dev), ib.to(dev));
    CHECK(got.dtype() == int64);
    CHECK(rel_diff(got, f(ia, ib)) == 0);
    const Tensor zero_in = from_vector(std::vector<std::int64_t>{1, 0, 2, 3, 4, 5, 6, 7}).to(dev);
    CHECK_THROWS_WITH_AS(f(ia.to(dev), zero_in), doctest::Contains("integer division by zero"), Error);
  }
  CHECK_THROWS_WITH_AS(ia.to(dev) % 0, doctest::Contains("[remainder] integer division by zero"), Error);
  CHECK(rel_diff(ia.to(dev) % 4, ia % 4) == 0);  // a host scalar divisor
  CHECK(rel_diff(fmod(ia.to(dev), 2.5), fmod(ia, 2.5)) == 0);
}

DEVICE_CASE("cuda ops: the flat elementwise kernel covers every size, 0-d operands and in-place use") {
  manual_seed(22);
  for (std::int64_t n : {1, 2, 3, 255, 256, 257, 1023, 1024, 1025, 4097, 65537, 262147, (1 << 20) + 7}) {
    CAPTURE(n);
    for (Dtype dt : {float32, float64, complex64, complex128, int64, bool_}) {
      CAPTURE(dt);
      const Tensor a = sample({n}, dt), b = sample({n}, dt), s = sample({}, dt);
      const Tensor ga = a.to(dev), gb = b.to(dev), gs = s.to(dev);
      CHECK(rel_diff(ga + gb, a + b) == 0);
      CHECK(rel_diff(ga * gs, a * s) == 0);   // a 0-d operand second
      CHECK(rel_diff(gs * gb, s * b) == 0);   // and first
      CHECK(rel_diff(ga == gb, a == b) == 0);  // a bool output from any compute type
      CHECK(rel_diff(where(gb == gs, ga, gb), where(b == s, a, b)) == 0);
      if (dt == bool_) continue;
      CHECK(rel_diff(ga * 3, a * 3) == 0);  // a wrapped scalar
      CHECK(rel_diff(-ga, -a) == 0);
      Tensor gi = ga.clone();
      gi.add_(gb);  // in place: out == a
      CHECK(rel_diff(gi, a + b) == 0);
      gi.mul_(gs);
      CHECK(rel_diff(gi, (a + b) * s) == 0);
      if (is_complex(dt) || dt == int64) continue;
      CHECK(rel_diff(ga.exp(), a.exp()) <= tol(dt));
      CHECK(rel_diff(ga / (gb.abs() + 1.0), a / (b.abs() + 1.0)) <= tol(dt));
    }
    // fills: contiguous and strided
    Tensor f = zeros({n, 2}, float32, dev);
    f.fill_(1.5);
    CHECK(rel_diff(f, full({n, 2}, 1.5, float32)) == 0);
    f.select(1, 0).fill_(-2.0);
    Tensor fc = full({n, 2}, 1.5, float32);
    fc.select(1, 0).fill_(-2.0);
    CHECK(rel_diff(f, fc) == 0);
  }
}

DEVICE_CASE("cuda ops: gradients computed on the GPU match the CPU's") {
  manual_seed(3);
  const Tensor x = sample({16, 24}, float64), w = sample({16, 24}, float64);
  // elementwise only (reductions have no CUDA kernel yet): backward from an explicit output gradient
  auto f = [](const Tensor& t) { return (t.sin() * t.exp() + t.square()).tanh(); };
  Tensor xc = x.clone().requires_grad_();
  f(xc).backward(w);
  Tensor xg = x.to(dev).requires_grad_();
  f(xg).backward(w.to(dev));
  REQUIRE(xg.grad().defined());
  CHECK(xg.grad().device() == dev);
  CHECK(rel_diff(xg.grad(), xc.grad()) <= 1e-12);
  // gelu's fused backward (the exact form, FNO's default activation)
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    Tensor gc = x.to(dt).clone().requires_grad_(), gg = x.to(dt).to(dev).requires_grad_();
    gc.gelu().backward(w.to(dt));
    gg.gelu().backward(w.to(dt).to(dev));
    CHECK(rel_diff(gg.grad(), gc.grad()) <= tol(dt));
  }
}

DEVICE_CASE("cuda ops: the FFT family agrees with FFTW") {
  manual_seed(4);
  for (Dtype dt : {complex64, complex128}) {
    const Tensor x = sample({6, 10, 12}, dt);
    const double t = dt == complex64 ? 1e-5 : 1e-12;
    CHECK(rel_diff(fft::fft(x.to(dev)), fft::fft(x)) <= t);
    CHECK(rel_diff(fft::ifft(x.to(dev), std::nullopt, 1, fft::Norm::ortho), fft::ifft(x, std::nullopt, 1, fft::Norm::ortho)) <= t);
    CHECK(rel_diff(fft::fftn(x.to(dev)), fft::fftn(x)) <= t);
    CHECK(rel_diff(fft::fft2(x.to(dev), std::nullopt, std::vector<std::int64_t>{0, 2}),
                   fft::fft2(x, std::nullopt, std::vector<std::int64_t>{0, 2})) <= t);
  }
  for (Dtype dt : {float32, float64}) {
    const Tensor x = sample({4, 9, 16}, dt);
    const double t = dt == float32 ? 1e-5 : 1e-12;
    CHECK(rel_diff(fft::rfft(x.to(dev)), fft::rfft(x)) <= t);
    CHECK(rel_diff(fft::rfft2(x.to(dev)), fft::rfft2(x)) <= t);
    CHECK(rel_diff(fft::rfftn(x.to(dev)), fft::rfftn(x)) <= t);
    const Tensor s = fft::rfftn(x);
    CHECK(rel_diff(fft::irfftn(s.to(dev), std::vector<std::int64_t>{4, 9, 16}), fft::irfftn(s, std::vector<std::int64_t>{4, 9, 16})) <= t);
    CHECK(rel_diff(fft::irfft(s.to(dev), 15), fft::irfft(s, 15)) <= t);  // odd output length
    const Tensor xo = sample({145}, dt);  // a view from element 1: cuFFT wants complex-aligned real input
    CHECK(rel_diff(fft::rfft(xo.to(dev).narrow(0, 1, 144)), fft::rfft(xo.narrow(0, 1, 144))) <= t);
    // gradients through r2c and c2r (their backward weights the half spectrum, made on the gradient's device)
    const Tensor ws = sample(s.select(0, 0).shape(), to_complex(dt));
    Tensor xc = x.clone().requires_grad_(), xg = x.to(dev).requires_grad_();
    fft::irfft(fft::rfft(xc) * ws, 16).square().sum().backward();
    fft::irfft(fft::rfft(xg) * ws.to(dev), 16).square().sum().backward();
    REQUIRE(xg.grad().defined());
    CHECK(rel_diff(xg.grad(), xc.grad()) <= 10 * t);
  }
  CHECK(fft::plan_cache_size(dev) > 0);
  fft::clear_plan_cache();
  CHECK(fft::plan_cache_size(dev) == 0);
}

DEVICE_CASE("cuda ops: FFT norms on every copy path (input, move back, c2r's own and scratch inputs), inputs left unchanged") {
  // A CUDA transform applies its norm's scale in the first copy it makes anyway, else in a pass of its
  // own; c2r copies its input (cuFFT may overwrite it) unless the front end made it (Note [cufft backend])
  using fft::Norm;
  using V = std::vector<Tensor>;
  manual_seed(5);
  const fft::Sizes none = std::nullopt;
  for (Norm norm : {Norm::backward, Norm::ortho, Norm::forward}) {
    CAPTURE(static_cast<int>(norm));
    const Tensor c = sample({6, 10, 12}, complex64), r = sample({4, 9, 16}, float32);
    const Tensor s = fft::rfft(r), s4 = fft::rfftn(sample({2, 3, 4, 6}, float32));
    const double t = 1e-5;
    const std::vector<std::pair<std::string, std::function<Tensor(const V&)>>> cases = {
        {"ifft, last dim (no copy)", [&](const V& v) { return fft::ifft(v[0], std::nullopt, -1, norm); }},
        {"ifft of a narrowed view (input copy)", [&](const V& v) { return fft::ifft(v[0].narrow(2, 1, 10), std::nullopt, -1, norm); }},
        {"ifft over dim 0 (moved: input copy)", [&](const V& v) { return fft::ifft(v[0], std::nullopt, 0, norm); }},
        {"fft over dim 0 of a permuted view (move back copy)",
         [&](const V& v) { return fft::fft(v[0].permute({2, 0, 1}), std::nullopt, 0, norm); }},
        {"ifftn over 3 dims", [&](const V& v) { return fft::ifftn(v[0], none, none, norm); }},
        {"rfft, last dim", [&](const V& v) { return fft::rfft(v[1], std::nullopt, -1, norm); }},
        {"rfft over dim 0 (moved)", [&](const V& v) { return fft::rfft(v[1], std::nullopt, 0, norm); }},
        {"rfft over dim 0 of a permuted view", [&](const V& v) { return fft::rfft(v[1].permute({2, 0, 1}), std::nullopt, 0, norm); }},
        {"rfft of an odd-aligned view (alignment copy)",
         [&](const V& v) { return fft::rfft(v[1].reshape({-1}).narrow(0, 1, 142), std::nullopt, -1, norm); }},
        {"rfft2 over dims 0, 2", [&](const V& v) { return fft::rfft2(v[1], none, {0, 2}, norm); }},
        {"irfft (c2r's own copy)", [&](const V& v) { return fft::irfft(v[2], 16, -1, norm); }},
        {"irfft, zero-padded (scratch input)", [&](const V& v) { return fft::irfft(v[2], 20, -1, norm); }},
        {"irfft over dim 1 (moved)", [&](const V& v) { return fft::irfft(v[2], 14, 1, norm); }},
        {"irfft2 over dims 1, 2", [&](const V& v) { return fft::irfft2(v[2], std::vector<std::int64_t>{9, 16}, {1, 2}, norm); }},
        {"irfftn over 4 dims (two plans)",
         [&](const V& v) { return fft::irfftn(v[3], std::vector<std::int64_t>{2, 3, 4, 6}, none, norm); }},
        {"hfft (conjugated scratch input)", [&](const V& v) { return fft::hfft(v[0], 18, -1, norm); }},
    };
    const V in = {c, r, s, s4};
    for (const auto& [name, f] : cases) {
      V d;
      for (const auto& x : in) d.push_back(x.to(dev));
      CAPTURE(name);
      CHECK(rel_diff(f(d), f(in)) <= t);
      for (std::size_t i = 0; i < in.size(); ++i) CHECK(rel_diff(d[i], in[i]) == 0);  // inputs unchanged
    }
    // kernel launches besides cuFFT's (counted by the emulator): the scale rides on the copies
    if (norm == Norm::backward) {
      const Tensor cd = c.to(dev), rd = r.to(dev), sd = s.to(dev);
      const std::vector<std::pair<std::function<void()>, long>> counted = {
          {[&] { (void)fft::rfft(rd); }, 0},                                      // no copy, no scale
          {[&] { (void)fft::ifft(cd); }, 1},                                      // the output's scale pass
          {[&] { (void)fft::ifft(cd, std::nullopt, 0); }, 2},                     // scaled input copy, move back
          {[&] { (void)fft::fft(cd.permute({2, 0, 1}), std::nullopt, 0); }, 1},  // move back only
          {[&] { (void)fft::irfft(sd, 16); }, 1},                                 // c2r's scaled copy
          {[&] { (void)fft::irfft(sd, 20, -1, Norm::forward); }, 2},  // the padded input (2): c2r's scratch, no copy
      };
      for (std::size_t i = 0; i < counted.size(); ++i) {
        CAPTURE(i);
        const long k = emu_count(dev, EmuCounter::Launches, counted[i].first);
        if (k >= 0) CHECK(k == counted[i].second);
      }
    }
    // r2c's backward runs c2r on a scratch gradient; c2r's backward runs r2c
    grads_agree(dev, "rfft gradient", [&](const V& v) { return fft::rfft(v[0], std::nullopt, -1, norm); }, {r}, 10 * t);
    grads_agree(dev, "irfft gradient", [&](const V& v) { return fft::irfft(v[0], 16, -1, norm); }, {s}, 10 * t);
  }
}

DEVICE_CASE("cuda ops: numbers next to tensors (host scalars): values, gradients, one launch each, and what still mixes devices") {
  // Note [host scalars]: on a GPU a number travels in the kernel's arguments, in the flat kernel
  // (contiguous operands of the compute dtype) and the strided one (views, mixed dtypes) alike
  using V = std::vector<Tensor>;
  manual_seed(6);
  const Tensor x = sample({5, 7}, float32), n = (sample({5, 7}, float64) * 10).to(int64), z = sample({5, 7}, complex64);
  const Tensor m = sample({5, 7}, float32) > 0;
  const std::vector<std::pair<std::string, std::function<Tensor(const V&)>>> cases = {
      {"x * 0.5", [](const V& v) { return v[0] * 0.5; }},
      {"0.5 * x", [](const V& v) { return 0.5 * v[0]; }},
      {"1 - x", [](const V& v) { return 1 - v[0]; }},
      {"x / 3", [](const V& v) { return v[0] / 3; }},
      {"3 / x", [](const V& v) { return 3.0 / v[0]; }},
      {"x^T * 0.5 (strided)", [](const V& v) { return v[0].transpose(0, 1) * 0.5; }},
      {"int64 n * 0.5 (promotes: strided)", [](const V& v) { return v[1] * 0.5; }},
      {"int64 n + 3", [](const V& v) { return v[1] + 3; }},
      {"complex z * 2", [](const V& v) { return v[2] * 2.0; }},
      {"complex z + (1 - 2i)", [](const V& v) { return v[2] + Scalar(std::complex<double>(1, -2)); }},
      {"x > 0.25", [](const V& v) { return v[0] > 0.25; }},
      {"n == 3", [](const V& v) { return v[1] == 3; }},
      {"pow(x, 2.5)", [](const V& v) { return pow(v[0].abs(), 2.5); }},
      {"pow(2, x)", [](const V& v) { return pow(2.0, v[0]); }},
      {"where(m, x, -1)", [](const V& v) { return where(v[3], v[0], -1.0); }},
      {"where(m, 2, x)", [](const V& v) { return where(v[3], 2.0, v[0]); }},
      {"masked_fill(x, m, 7)", [](const V& v) { return masked_fill(v[0], v[3], 7.0); }},
      {"x.add_(1).mul_(2)", [](const V& v) { Tensor y = v[0].clone(); y.add_(1); y.mul_(2); return y; }},
      {"clamp(x, -0.5, 0.5)", [](const V& v) { return clamp(v[0], -0.5, 0.5); }},
  };
  const V in = {x, n, z, m};
  V d;
  for (const auto& t : in) d.push_back(t.to(dev));
  for (const auto& [name, f] : cases) {
    CAPTURE(name);
    const Tensor got = f(d);
    CHECK(got.device() == dev);
    CHECK(rel_diff(got, f(in)) <= 1e-6);
  }
  grads_agree(dev, "x * 0.5 + 2, pow, where", [](const V& v) { return where(v[0] > 0, pow(v[0] * 0.5 + 2, 1.5), 1 - v[0]); },
              {x}, 1e-6);
  grads_agree(dev, "2^x / 3", [](const V& v) { return pow(2.0, v[0]) / 3; }, {x}, 1e-6);
  if (!dev.is_cuda()) return;
  // one kernel per op, no fill for the number (counted where the emulator runs the kernels)
  const std::vector<std::function<void()>> single = {
      [&] { (void)(d[0] * 0.5); }, [&] { (void)(1 - d[0]); }, [&] { (void)(d[0].transpose(0, 1) * 0.5); },
      [&] { (void)(d[1] * 0.5); }, [&] { (void)where(d[3], d[0], -1.0); }, [&] { (void)(d[0] > 0.25); },
      [&] { d[0].clone().mul_(2); },
  };
  for (std::size_t i = 0; i < single.size(); ++i) {
    CAPTURE(i);
    const long k = emu_count(dev, EmuCounter::Launches, single[i]);
    CHECK((k == -1 || k == (i + 1 == single.size() ? 2 : 1)));  // the last clones first
  }
  // a 0-d host tensor that needs no gradient mixes as a number does (PyTorch's rule), on either side
  const Tensor h = scalar_tensor(0.25, float32);
  CHECK(rel_diff(d[0] * h, x * h) == 0);
  CHECK(rel_diff(h - d[0], h - x) == 0);
  CHECK(rel_diff(where(scalar_tensor(true), d[0], h), x) == 0);  // kernels take one value: the others are filled
  CHECK(rel_diff(where(d[3], h, scalar_tensor(-1.0f)), where(m, h, scalar_tensor(-1.0f))) == 0);
  CHECK((d[0] * h).device() == dev);
  // what still mixes nothing: a host tensor of one element that is not 0-d, a 0-d one that needs a
  // gradient, an in-place op into a host scalar, a matrix product
  CHECK_THROWS_WITH_AS(d[0] * ones({1}), doctest::Contains("[mul] expected all tensors on one device, got cuda:0 and cpu"), Error);
  const Tensor hg = scalar_tensor(0.25, float32).requires_grad_();
  CHECK_THROWS_WITH_AS(d[0] * hg, doctest::Contains("[mul] expected all tensors on one device, got cuda:0 and cpu (a 0-d CPU "
                                                    "tensor joins a CUDA op only when it needs no gradient)"),
                       Error);
  CHECK_THROWS_WITH_AS(where(d[3], d[0], hg), doctest::Contains("[where] expected all tensors on one device"), Error);
  Tensor hs = scalar_tensor(0.25, float32);
  CHECK_THROWS_WITH_AS(hs.add_(d[0].sum()), doctest::Contains("[add_] expected all tensors on one device"), Error);
  CHECK(hs.item<float>() == 0.25f);
  CHECK_THROWS_WITH_AS(matmul(d[0], ones({7, 2})), doctest::Contains("cuda:0"), Error);
}

// Note [fused multiply-add]: one kernel, any mix of dtypes (converted per element), broadcasting, host scalars.
DEVICE_CASE("cuda ops: addcmul and addcdiv agree with the CPU, one launch each, gradients on the device") {
  manual_seed(13);
  using V = std::vector<Tensor>;
  const std::vector<std::tuple<Dtype, Dtype, Dtype>> types = {
      {float32, float32, float32},   {float64, float64, float64},       {complex64, complex64, complex64},
      {complex128, float64, complex128}, {complex128, complex128, float64}, {float64, complex128, float32},
      {int64, int64, int64},         {int64, float32, int64}};
  for (const auto& [tx, ta, tb] : types) {
    CAPTURE(dtype_name(tx));
    CAPTURE(dtype_name(ta));
    CAPTURE(dtype_name(tb));
    const Tensor x = sample({4, 1, 33}, tx), a = sample({5, 33}, ta), b = sample({4, 5, 1}, tb) + 4;
    const Tensor dx = x.to(dev), da = a.to(dev), db = b.to(dev);
    const bool integral = tx == int64 && ta == int64 && tb == int64;
    const Scalar v = integral ? Scalar(3) : Scalar(-0.75);
    CHECK(rel_diff(addcmul(dx, da, db, v), addcmul(x, a, b, v)) <= 2e-6);
    if (!integral) CHECK(rel_diff(addcdiv(dx, da, db, v), addcdiv(x, a, b, v)) <= 2e-6);
    CHECK(addcmul(dx, da, db).device() == dev);
  }
  const Tensor x = sample({6, 7}, float32), a = sample({6, 7}, float32), b = sample({7}, float32) + 3;
  const Tensor dx = x.to(dev), da = a.to(dev), db = b.to(dev);
  CHECK(rel_diff(addcmul(dx, da.transpose(0, 1).contiguous().transpose(0, 1), db, 2), addcmul(x, a, b, 2)) <= 1e-6);
  grads_agree(dev, "addcmul", [](const V& in) { return addcmul(in[0], in[1], in[2], 0.5); }, {x, a, b}, 1e-6);
  grads_agree(dev, "addcdiv", [](const V& in) { return addcdiv(in[0], in[1], in[2], -2); }, {x, a, b}, 1e-6);
  const Tensor z = sample({3, 7}, complex128), r = sample({7}, float64) + 3;
  grads_agree(dev, "addcdiv complex, real tensor2", [](const V& in) { return addcdiv(in[0], in[1], in[2], 0.5).abs(); },
              {z, z, r}, 1e-12);
  // mixing devices is refused as by binary ops, the inputs unchanged
  CHECK_THROWS_WITH_AS(addcmul(dx, a, db), doctest::Contains("[addcmul] expected all tensors on one device"), Error);
  CHECK(rel_diff(dx, x) == 0);
  // in place
  Tensor dy = dx.clone();
  dy.addcmul_(da, db, 2).addcdiv_(da, db);
  CHECK(rel_diff(dy, addcdiv(addcmul(x, a, b, 2), a, b)) <= 1e-6);
  if (!dev.is_cuda()) return;
  // numbers and 0-d host tensors (Note [host scalars]) in any slot, several at once (the kernels take one by
  // value, the others are filled on the device)
  const Tensor h = scalar_tensor(0.5, float32), h2 = scalar_tensor(-2.0, float32);
  CHECK(rel_diff(addcmul(dx, h, db), addcmul(x, h, b)) <= 1e-6);
  CHECK(rel_diff(addcmul(h, da, h2), addcmul(h, a, h2)) <= 1e-6);
  CHECK(rel_diff(addcdiv(h2, h, db, 3), addcdiv(h2, h, b, 3)) <= 1e-6);
  CHECK(rel_diff(addcmul(h, h2, da), addcmul(h, h2, a)) <= 1e-6);
  // in place with a host scalar operand; never into a host scalar
  dy.addcmul_(h, db, 2);
  CHECK(rel_diff(dy, addcmul(addcdiv(addcmul(x, a, b, 2), a, b), h, b, 2)) <= 1e-6);
  Tensor hs = scalar_tensor(0.25, float32);
  CHECK_THROWS_WITH_AS(hs.addcmul_(dx.sum(), dx.sum()), doctest::Contains("[addcmul_] expected all tensors on one device"), Error);
  CHECK(hs.item<float>() == 0.25f);
  const Tensor dz = z.to(dev), dr = r.to(dev);
  for (const auto& f : std::vector<std::function<void()>>{[&] { (void)addcmul(dx, da, db); },
                                                          [&] { dy.addcmul_(da, db, 3); },
                                                          [&] { (void)addcdiv(dx, h, db, 3); },
                                                          [&] { (void)addcmul(dz, dr, dz); }}) {
    const long k = emu_count(dev, EmuCounter::Launches, f);
    CHECK((k == -1 || k == 1));
  }
}

// Note [mixed flat kernel]: contiguous (or single broadcast element) operands of a complex type and its real
// type, every mask of real inputs, take the flat kernel for mixed operands; the values are the CPU's.
DEVICE_CASE("cuda ops: real operands next to complex ones, contiguous or one broadcast element, agree with the CPU") {
  manual_seed(19);
  using V = std::vector<Tensor>;
  for (Dtype ct : {complex64, complex128}) {
    CAPTURE(dtype_name(ct));
    const Dtype rt = to_real(ct);
    const double tol = ct == complex64 ? 2e-6 : 1e-14;
    // operand k of the masks: complex or real, a (6, 7) block or one element broadcast to it
    const auto operand = [&](bool real, bool one) {
      const Tensor t = sample(one ? Shape{1} : Shape{6, 7}, real ? rt : ct);
      return real ? t + 3 : t;  // real operands stay away from zero (they divide)
    };
    for (bool one : {false, true}) {
      CAPTURE(one);
      for (unsigned mask = 1; mask < 8; ++mask) {
        CAPTURE(mask);
        const Tensor x = operand(mask & 1, false), a = operand(mask & 2, one), b = operand(mask & 4, false);
        const Tensor dx = x.to(dev), da = a.to(dev), db = b.to(dev);
        if (is_complex(x.dtype()) || is_complex(b.dtype()) || is_complex(a.dtype())) {
          CHECK(rel_diff(addcmul(dx, da, db, 0.5), addcmul(x, a, b, 0.5)) <= tol);
          CHECK(rel_diff(addcdiv(dx, da, db), addcdiv(x, a, b)) <= tol);
          CHECK(rel_diff(lerp(dx, db, da), lerp(x, b, a)) <= tol);
        }
        if (mask < 4 && (is_complex(x.dtype()) || is_complex(a.dtype()))) {
          for (const char* op : {"add", "sub", "mul", "div"}) {
            CAPTURE(op);
            const auto f = [&](const Tensor& p, const Tensor& q) {
              return op[0] == 'a' ? p + q : op[0] == 's' ? p - q : op[0] == 'm' ? p * q : p / q;
            };
            CHECK(rel_diff(f(dx, da), f(x, a)) <= tol);
            CHECK(rel_diff(f(da, dx), f(a, x)) <= tol);
          }
        }
      }
    }
    // in place into the complex operand
    const Tensor z = sample({6, 7}, ct), r = sample({6, 7}, rt) + 3, w = sample({6, 7}, ct);
    Tensor dz = z.to(dev);
    dz.mul_(r.to(dev)).addcmul_(r.to(dev), w.to(dev), 2).div_(r.to(dev));
    CHECK(rel_diff(dz, addcmul(z * r, r, w, 2) / r) <= tol);
    grads_agree(dev, "mixed addcmul", [](const V& in) { return addcmul(in[0], in[1], in[2]).abs(); },
                {z.to(complex128), r.to(float64), w.to(complex128)}, 1e-12);
  }
}

// Note [lerp]: one kernel with torch's two forms, a number weight by value, any mix of dtypes.
DEVICE_CASE("cuda ops: lerp agrees with the CPU (number and tensor weights, mixed dtypes), one launch, gradients") {
  manual_seed(17);
  using V = std::vector<Tensor>;
  const std::vector<std::tuple<Dtype, Dtype, Dtype>> types = {
      {float32, float32, float32},       {float64, float64, float64},    {complex64, complex64, complex64},
      {complex128, float64, complex128}, {float32, complex64, float32}, {int64, float32, float64}};
  for (const auto& [tx, te, tw] : types) {
    CAPTURE(dtype_name(tx));
    CAPTURE(dtype_name(te));
    CAPTURE(dtype_name(tw));
    const Tensor x = sample({4, 1, 33}, tx), e = sample({5, 33}, te), w = sample({4, 5, 1}, tw);
    const Tensor dx = x.to(dev), de = e.to(dev), dw = w.to(dev);
    CHECK(rel_diff(lerp(dx, de, dw), lerp(x, e, w)) <= 2e-6);
    const bool cplx = is_complex(lerp(x, e, w).dtype());
    for (double re : {0.3, 0.8}) {  // both forms
      const Scalar v = cplx ? Scalar(std::complex<double>(re, -0.3)) : Scalar(re);
      CHECK(rel_diff(lerp(dx, de, v), lerp(x, e, v)) <= 2e-6);
    }
    CHECK(lerp(dx, de, dw).device() == dev);
  }
  // the ends exactly, as on the CPU
  const Tensor x = sample({6, 7}, float32), e = sample({6, 7}, float32), w = sample({7}, float32);
  const Tensor dx = x.to(dev), de = e.to(dev), dw = w.to(dev);
  CHECK(rel_diff(lerp(dx, de, 0), x) == 0);
  CHECK(rel_diff(lerp(dx, de, 1), e) == 0);
  CHECK(rel_diff(lerp(dx.transpose(0, 1), de.transpose(0, 1), 0.25), lerp(x.transpose(0, 1), e.transpose(0, 1), 0.25)) <= 1e-6);
  grads_agree(dev, "lerp", [](const V& in) { return lerp(in[0], in[1], in[2]); }, {x, e, w}, 1e-6);
  grads_agree(dev, "lerp number", [](const V& in) { return lerp(in[0], in[1], 0.7); }, {x, e}, 1e-6);
  const Tensor z = sample({3, 7}, complex128), r = sample({7}, float64);
  grads_agree(dev, "lerp complex, real weight", [](const V& in) { return lerp(in[0], in[1], in[2]).abs(); }, {z, z, r},
              1e-12);
  grad2_agree(dev, "lerp", [](const V& in) { return lerp(in[0], in[1], in[2]); }, {x.to(float64), e.to(float64), w.to(float64)}, 1e-12);
  // mixing devices is refused, the inputs unchanged
  CHECK_THROWS_WITH_AS(lerp(dx, e, 0.5), doctest::Contains("[lerp] expected all tensors on one device"), Error);
  CHECK_THROWS_WITH_AS(lerp(dx, de, w), doctest::Contains("[lerp] expected all tensors on one device"), Error);
  CHECK(rel_diff(dx, x) == 0);
  // in place, both weights
  Tensor dy = dx.clone();
  dy.lerp_(de, 0.3).lerp_(de, dw);
  CHECK(rel_diff(dy, lerp(lerp(x, e, 0.3), e, w)) <= 1e-6);
  if (!dev.is_cuda()) return;
  // a 0-d host weight (Note [host scalars]); one launch for each form
  const Tensor h = scalar_tensor(0.25, float32);
  CHECK(rel_diff(lerp(dx, de, h), lerp(x, e, h)) <= 1e-6);
  for (const auto& f : std::vector<std::function<void()>>{[&] { (void)lerp(dx, de, 0.6); },
                                                          [&] { (void)lerp(dx, de, dw); },
                                                          [&] { dy.lerp_(de, 0.5); }}) {
    const long k = emu_count(dev, EmuCounter::Launches, f);
    CHECK((k == -1 || k == 1));
  }
}

DEVICE_CASE("cuda ops: matmul through cuBLAS (int64 and bool: a kernel of phasor's) agrees with the CPU") {
  manual_seed(5);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    const double t = dt == float32 || dt == complex64 ? 1e-5 : 1e-12;
    const Tensor a = sample({3, 17, 9}, dt), b = sample({9, 11}, dt), c = sample({3, 11, 9}, dt);
    CAPTURE(dt);
    CHECK(rel_diff(matmul(a.to(dev), b.to(dev)), matmul(a, b)) <= t);  // batch folded into rows
    CHECK(rel_diff(matmul(a.to(dev), c.to(dev).transpose(-1, -2)), matmul(a, c.transpose(-1, -2))) <= t);  // transposed
    CHECK(rel_diff(matmul(a.to(dev).select(0, 0).t(), a.to(dev).select(0, 1)), matmul(a.select(0, 0).t(), a.select(0, 1))) <= t);
    CHECK(rel_diff(matmul(a.to(dev), b.to(dev).narrow(1, 0, 0)), matmul(a, b.narrow(1, 0, 0))) == 0);  // empty
    // batched: one strided-batched call; broadcast batch dims (offsets 0,0,0,s,s,s: copied) and a stride-0 operand
    const Tensor p = sample({2, 1, 4, 5}, dt), q = sample({1, 3, 5, 6}, dt), r = sample({3, 5, 6}, dt);
    CHECK(rel_diff(matmul(p.to(dev), q.to(dev)), matmul(p, q)) <= t);
    CHECK(rel_diff(matmul(p.select(0, 0).to(dev).expand({3, 4, 5}), r.to(dev)), matmul(p.select(0, 0).expand({3, 4, 5}), r)) <= t);
    CHECK(rel_diff(matmul(c.to(dev).transpose(-1, -2), b.to(dev).t()), matmul(c.transpose(-1, -2), b.t())) <= t);
    // an operand with fewer batch dims than the broadcast batch, copied: (2,3,4,5) @ (3,5,6) (attention-like),
    // a one-column product, and a transposed first operand with fewer batch dims
    const Tensor a4 = sample({2, 3, 4, 5}, dt), b1 = sample({3, 5, 1}, dt), c4 = sample({2, 3, 5, 4}, dt);
    CHECK(rel_diff(matmul(a4.to(dev), r.to(dev)), matmul(a4, r)) <= t);
    CHECK(rel_diff(matmul(a4.to(dev), b1.to(dev)), matmul(a4, b1)) <= t);
    CHECK(rel_diff(matmul(r.to(dev).transpose(-1, -2), c4.to(dev)), matmul(r.transpose(-1, -2), c4)) <= t);
    // batch dims swapped (strides 20, 60: not one stride, copied) against ones one stride apart after a size-1 dim
    CHECK(rel_diff(matmul(a4.to(dev).transpose(0, 1), c4.to(dev).transpose(0, 1)), matmul(a4.transpose(0, 1), c4.transpose(0, 1))) <= t);
    CHECK(rel_diff(matmul(a4.to(dev).narrow(0, 1, 1), c4.to(dev).narrow(0, 0, 1)), matmul(a4.narrow(0, 1, 1), c4.narrow(0, 0, 1))) <= t);
    grads_agree(dev, "matmul, broadcast batch", [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                {a4, r}, t);
  }
  // int64 and bool products (cuBLAS has none: src/cuda/int_gemm.cu): exact, int64 wrapping around 2^64 as
  // on the CPU, over transposed, broadcast and expanded operands
  for (Dtype dt : {int64, bool_}) {
    CAPTURE(dt);
    const Tensor p = sample({2, 1, 4, 5}, dt), q = sample({1, 3, 5, 6}, dt), r = sample({3, 6, 5}, dt);
    CHECK(rel_diff(matmul(p.to(dev), q.to(dev)), matmul(p, q)) == 0);
    CHECK(rel_diff(matmul(p.to(dev), r.to(dev).transpose(-1, -2)), matmul(p, r.transpose(-1, -2))) == 0);
    CHECK(rel_diff(matmul(p.select(0, 0).to(dev).expand({3, 4, 5}), q.select(0, 0).to(dev)),
                   matmul(p.select(0, 0).expand({3, 4, 5}), q.select(0, 0))) == 0);
    CHECK(rel_diff(matmul(r.to(dev).select(0, 1).select(0, 2), q.to(dev).select(0, 0)),
                   matmul(r.select(0, 1).select(0, 2), q.select(0, 0))) == 0);  // 1-D @ 3-D
    CHECK(rel_diff(bmm(q.to(dev).squeeze(0).transpose(1, 2), r.to(dev).transpose(1, 2)),
                   bmm(q.squeeze(0).transpose(1, 2), r.transpose(1, 2))) == 0);
  }
  const Tensor big = from_vector(std::vector<std::int64_t>{std::int64_t{1} << 62, 3, -(std::int64_t{1} << 61), 7}, Shape{2, 2});
  CHECK((matmul(big.to(dev), big.to(dev)).to(Device::cpu()) == matmul(big, big)).all().item<bool>());  // past 2^63: wraps
  CHECK(rel_diff(matmul(big.to(dev), big.to(dev).narrow(1, 0, 0)), matmul(big, big.narrow(1, 0, 0))) == 0);
  // gradients of a product, computed on the GPU
  const Tensor a = sample({5, 7}, float64), b = sample({7, 4}, float64);
  const Tensor w = sample({5, 4}, float64);
  Tensor ac = a.clone().requires_grad_(), bc = b.clone().requires_grad_();
  matmul(ac, bc).tanh().backward(w);
  Tensor ag = a.to(dev).requires_grad_(), bg = b.to(dev).requires_grad_();
  matmul(ag, bg).tanh().backward(w.to(dev));
  CHECK(rel_diff(ag.grad(), ac.grad()) <= 1e-12);
  CHECK(rel_diff(bg.grad(), bc.grad()) <= 1e-12);
}

TEST_CASE("cuda ops: float32 products use TF32 only after set_allow_tf32(true)" * doctest::skip(!kGpu)) {
  manual_seed(15);
  const Tensor a = sample({256, 512}, float64), b = sample({512, 256}, float64);
  const Tensor ref = matmul(a, b);  // float64 on the CPU
  const Tensor a32 = a.to(float32).to(kDev), b32 = b.to(float32).to(kDev);
  REQUIRE_FALSE(cuda::allow_tf32());
  const double full = rel_diff(matmul(a32, b32).to(float64), ref);
  cuda::set_allow_tf32(true);
  const double tf32 = rel_diff(matmul(a32, b32).to(float64), ref);
  cuda::set_allow_tf32(false);
  const double again = rel_diff(matmul(a32, b32).to(float64), ref);
  MESSAGE("float32 product vs float64: " << full << " default, " << tf32 << " with TF32");
  CHECK(full <= 2e-6);   // full float32: sums of 512 products
  CHECK(tf32 <= 2e-3);   // 10-bit mantissas
  CHECK(again == full);  // the handle's math mode follows the switch back
}

DEVICE_CASE("cuda ops: reductions agree with the CPU") {
  manual_seed(6);
  for (Dtype dt : {bool_, int64, float32, float64, complex64, complex128}) {
    const Tensor x = sample({6, 7, 300}, dt);
    const Tensor g = x.to(dev);
    const double t = dt == float32 || dt == complex64 ? 1e-5 : 1e-12;
    CAPTURE(dt);
    CHECK(rel_diff(g.sum(), x.sum()) <= t);
    CHECK(rel_diff(g.sum({0, 2}, true), x.sum({0, 2}, true)) <= t);
    CHECK(rel_diff(g.sum({1}), x.sum({1})) <= t);
    CHECK(rel_diff(g.all({2}), x.all({2})) == 0);
    CHECK(rel_diff(g.any({0}), x.any({0})) == 0);
    if (is_floating_or_complex(dt)) CHECK(rel_diff(g.mean({-1}), x.mean({-1})) <= t);
    if (!is_complex(dt)) {
      CHECK(rel_diff(g.amax({2}), x.amax({2})) == 0);
      CHECK(rel_diff(g.amin({0, 1}), x.amin({0, 1})) == 0);
      CHECK(rel_diff(g.max(), x.max()) == 0);
    }
    const Tensor small = sample({5, 4}, dt);
    CHECK(rel_diff(small.to(dev).prod({1}), small.prod({1})) <= t);
  }
  CHECK(rel_diff(zeros({0, 3}, float32, dev).sum({0}), zeros({3}, float32)) == 0);  // empty: the identity
  CHECK_THROWS_WITH_AS(zeros({0, 3}, float32, dev).amax({0}), doctest::Contains("cannot reduce over an empty dim"), Error);
  // a loss's gradient through sum and broadcasting, on the GPU
  const Tensor a = sample({4, 5}, float64), b = sample({5}, float64);
  Tensor ac = a.clone().requires_grad_(), bc = b.clone().requires_grad_();
  ((ac * bc).tanh().sum()).backward();
  Tensor ag = a.to(dev).requires_grad_(), bg = b.to(dev).requires_grad_();
  ((ag * bg).tanh().sum()).backward();
  CHECK(rel_diff(ag.grad(), ac.grad()) <= 1e-12);
  CHECK(rel_diff(bg.grad(), bc.grad()) <= 1e-12);
}

