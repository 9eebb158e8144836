// tests/test_reduce.cpp - reductions: values vs naive long double loops over every layout,
// dtypes, dims combos; gradients (gradcheck / gradgradcheck); errors; accuracy of large sums.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

using namespace phasor;
using cd = std::complex<double>;
using cld = std::complex<long double>;
using Group = std::vector<cld>;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Wrapped, sorted reduced dims (empty = all).
std::vector<std::int64_t> wrap(const Shape& dims, std::int64_t nd) {
  std::vector<std::int64_t> w;
  if (dims.empty())
    for (std::int64_t d = 0; d < nd; ++d) w.push_back(d);
  for (auto d : dims) w.push_back(d < 0 ? d + nd : d);
  std::sort(w.begin(), w.end());
  return w;
}

/// Naive reduction: groups x's values (logical row-major order) per output and applies f.
std::vector<cld> ref_reduce(const Tensor& x, const Shape& dims, const std::function<cld(const Group&)>& f,
                            Shape* out_shape = nullptr, bool keepdim = false) {
  const auto vals = to_vector<cd>(x);
  const Shape& s = x.shape();
  const auto nd = static_cast<std::int64_t>(s.size());
  auto wd = wrap(dims, nd);
  std::vector<bool> red(static_cast<std::size_t>(nd), false);
  for (auto d : wd) red[static_cast<std::size_t>(d)] = true;
  Shape os;
  std::int64_t nout = 1;
  for (std::int64_t d = 0; d < nd; ++d) {
    if (!red[static_cast<std::size_t>(d)]) {
      os.push_back(s[static_cast<std::size_t>(d)]);
      nout *= s[static_cast<std::size_t>(d)];
    } else if (keepdim) {
      os.push_back(1);
    }
  }
  if (out_shape) *out_shape = os;
  std::vector<Group> groups(static_cast<std::size_t>(nout));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(nd), 0);
  for (std::size_t i = 0; i < vals.size(); ++i) {
    std::int64_t o = 0;
    for (std::int64_t d = 0; d < nd; ++d)
      if (!red[static_cast<std::size_t>(d)]) o = o * s[static_cast<std::size_t>(d)] + idx[static_cast<std::size_t>(d)];
    groups[static_cast<std::size_t>(o)].push_back(cld(vals[i].real(), vals[i].imag()));
    for (std::int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < s[static_cast<std::size_t>(d)]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  std::vector<cld> r;
  for (auto& g : groups) r.push_back(f(g));
  return r;
}

bool close(cld a, cld b, double rtol, double atol) {
  auto one = [&](long double x, long double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (std::isinf(x) || std::isinf(y)) return x == y;
    return std::abs(x - y) <= atol + rtol * std::abs(y);
  };
  return one(a.real(), b.real()) && one(a.imag(), b.imag());
}

/// Checks y (shape, values) against the reference reduction of x.
void check_against(const Tensor& y, const Tensor& x, const Shape& dims, bool keepdim,
                   const std::function<cld(const Group&)>& f, double rtol, double atol = 1e-12) {
  Shape os;
  auto ref = ref_reduce(x, dims, f, &os, keepdim);
  REQUIRE(y.shape() == os);
  auto got = to_vector<cd>(y);
  REQUIRE(got.size() == ref.size());
  int bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (!close(cld(got[i].real(), got[i].imag()), ref[i], rtol, atol) && bad++ < 3)
      FAIL_CHECK("element " << i << ": got " << got[i].real() << "+" << got[i].imag() << "i, want "
                            << static_cast<double>(ref[i].real()) << "+" << static_cast<double>(ref[i].imag()) << "i");
  CHECK(bad == 0);
}

// ---- reference reductions in long double ---------------------------------------------------------
cld r_sum(const Group& g) {
  cld s = 0;
  for (auto v : g) s += v;
  return s;
}
cld r_prod(const Group& g) {
  cld s = 1;
  for (auto v : g) s *= v;
  return s;
}
cld r_mean(const Group& g) { return r_sum(g) / static_cast<long double>(g.size()); }
cld r_max(const Group& g) {
  long double m = -INFINITY;
  for (auto v : g) {
    if (std::isnan(v.real())) return NAN;
    m = std::max(m, v.real());
  }
  return m;
}
cld r_min(const Group& g) {
  long double m = INFINITY;
  for (auto v : g) {
    if (std::isnan(v.real())) return NAN;
    m = std::min(m, v.real());
  }
  return m;
}
std::function<cld(const Group&)> r_var(double corr, bool take_sqrt) {
  return [corr, take_sqrt](const Group& g) -> cld {
    const cld m = r_mean(g);
    long double s = 0;
    for (auto v : g) s += std::norm(v - m);
    const long double v = s / std::max<long double>(0, static_cast<long double>(g.size()) - corr);
    return take_sqrt ? std::sqrt(v) : v;
  };
}
std::function<cld(const Group&)> r_norm(double p) {
  return [p](const Group& g) -> cld {
    if (p == kInf || p == -kInf) {
      long double m = p > 0 ? 0 : INFINITY;
      for (auto v : g) m = p > 0 ? std::max(m, std::abs(v)) : std::min(m, std::abs(v));
      return m;
    }
    long double s = 0;
    for (auto v : g) s += p == 0 ? (std::abs(v) != 0 ? 1 : 0) : std::pow(std::abs(v), static_cast<long double>(p));
    return p == 0 ? s : std::pow(s, 1 / static_cast<long double>(p));
  };
}
cld r_lse(const Group& g) {
  cld s = 0;
  for (auto v : g) s += std::exp(v);
  return std::log(s);
}
cld r_all(const Group& g) {
  for (auto v : g)
    if (v == cld(0)) return 0;
  return 1;
}
cld r_any(const Group& g) {
  for (auto v : g)
    if (v != cld(0)) return 1;
  return 0;
}

/// Tensors with the same logical shape (3, 4, 5) in different memory layouts.
std::vector<std::pair<std::string, Tensor>> layouts(Dtype dt, std::uint64_t seed = 1) {
  manual_seed(seed);
  auto make = [&](const Shape& s) {
    if (dt == Dtype::Int64) return randint(-5, 6, s);
    if (dt == Dtype::Bool) return randint(0, 2, s).to(Dtype::Bool);
    return randn(s, dt);
  };
  std::vector<std::pair<std::string, Tensor>> v;
  v.emplace_back("contiguous", make({3, 4, 5}));
  v.emplace_back("transposed", make({5, 4, 3}).permute({2, 1, 0}));
  v.emplace_back("sliced step", make({3, 8, 5}).slice(1, 1, std::nullopt, 2));
  v.emplace_back("sliced last", make({3, 4, 11}).slice(2, 0, 10, 2));
  v.emplace_back("expanded", make({3, 1, 5}).expand({3, 4, 5}));
  v.emplace_back("expanded inner", make({3, 4, 1}).expand({3, 4, 5}));
  return v;
}

const std::vector<Shape> kDims = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {-1, 0}, {1, 2}, {0, 1}, {0, 1, 2}};

using ROp = std::function<Tensor(const Tensor&, const Shape&, bool)>;

/// Runs op over every layout, dims combo and keepdim, comparing with the reference.
void sweep(Dtype dt, const ROp& op, const std::function<cld(const Group&)>& ref, Dtype want_dtype, double rtol,
           double atol = 1e-12) {
  for (auto& [name, x] : layouts(dt)) {
    for (const auto& dims : kDims) {
      for (bool keep : {false, true}) {
        CAPTURE(name);
        CAPTURE(dims.size());
        CAPTURE(keep);
        Tensor y = op(x, dims, keep);
        CHECK(y.dtype() == want_dtype);
        check_against(y, x, dims, keep, ref, rtol, atol);
      }
    }
  }
}

Tensor rnd(const Shape& s, Dtype dt = float64, std::uint64_t seed = 7) {
  manual_seed(seed);
  return randn(s, dt);
}

}  // namespace

// ======================================================================================================
TEST_CASE("sum over every layout, dtype and dims combo") {
  ROp op = [](const Tensor& x, const Shape& d, bool k) { return sum(x, d, k); };
  sweep(float64, op, r_sum, float64, 1e-13);
  sweep(float32, op, r_sum, float32, 1e-5, 1e-5);
  sweep(complex128, op, r_sum, complex128, 1e-13);
  sweep(complex64, op, r_sum, complex64, 1e-5, 1e-5);
  sweep(int64, op, r_sum, int64, 0, 0);
  sweep(bool_, op, r_sum, int64, 0, 0);
}

TEST_CASE("mean, prod, all, any over every layout") {
  sweep(float64, [](const Tensor& x, const Shape& d, bool k) { return mean(x, d, k); }, r_mean, float64, 1e-13);
  sweep(complex128, [](const Tensor& x, const Shape& d, bool k) { return x.mean(d, k); }, r_mean, complex128, 1e-13);
  sweep(float32, [](const Tensor& x, const Shape& d, bool k) { return mean(x, d, k); }, r_mean, float32, 1e-5, 1e-6);
  ROp p = [](const Tensor& x, const Shape& d, bool k) { return prod(x, d, k); };
  sweep(float64, p, r_prod, float64, 1e-12, 1e-300);
  sweep(complex128, p, r_prod, complex128, 1e-12, 1e-300);
  sweep(int64, p, r_prod, int64, 0, 0);
  sweep(bool_, p, r_prod, int64, 0, 0);
  for (Dtype dt : {float64, int64, bool_, complex64}) {
    sweep(dt, [](const Tensor& x, const Shape& d, bool k) { return all(x, d, k); }, r_all, bool_, 0, 0);
    sweep(dt, [](const Tensor& x, const Shape& d, bool k) { return x.any(d, k); }, r_any, bool_, 0, 0);
  }
}

TEST_CASE("amax/amin over every layout") {
  sweep(float64, [](const Tensor& x, const Shape& d, bool k) { return amax(x, d, k); }, r_max, float64, 0, 0);
  sweep(float32, [](const Tensor& x, const Shape& d, bool k) { return amin(x, d, k); }, r_min, float32, 0, 0);
  sweep(int64, [](const Tensor& x, const Shape& d, bool k) { return x.amax(d, k); }, r_max, int64, 0, 0);
  sweep(int64, [](const Tensor& x, const Shape& d, bool k) { return x.amin(d, k); }, r_min, int64, 0, 0);
  sweep(bool_, [](const Tensor& x, const Shape& d, bool k) { return amax(x, d, k); }, r_max, bool_, 0, 0);
  // NaN propagates
  Tensor x = from_vector(std::vector<double>{1, kNaN, 3, 4, 5, 6}, Shape{2, 3});
  auto m = to_vector<double>(amax(x, {1}));
  CHECK(std::isnan(m[0]));
  CHECK(m[1] == 6);
  CHECK(std::isnan(max(x).item<double>()));
  CHECK(std::isnan(min(x).item<double>()));
  CHECK(amin(x, {0}).index({0}).item<double>() == 1);
}

TEST_CASE("var/std/logsumexp/norm over every layout") {
  for (double corr : {0.0, 1.0, 2.5}) {
    sweep(float64, [corr](const Tensor& x, const Shape& d, bool k) { return var(x, d, corr, k); }, r_var(corr, false),
          float64, 1e-12);
    sweep(complex128, [corr](const Tensor& x, const Shape& d, bool k) { return x.std(d, corr, k); },
          r_var(corr, true), float64, 1e-12);
  }
  sweep(float32, [](const Tensor& x, const Shape& d, bool k) { return var(x, d, 1, k); }, r_var(1, false), float32, 1e-5);
  sweep(complex64, [](const Tensor& x, const Shape& d, bool k) { return var(x, d, 1, k); }, r_var(1, false), float32, 1e-5);
  sweep(float64, [](const Tensor& x, const Shape& d, bool k) { return logsumexp(x, d, k); }, r_lse, float64, 1e-13);
  sweep(float32, [](const Tensor& x, const Shape& d, bool k) { return x.logsumexp(d, k); }, r_lse, float32, 1e-5);
  sweep(complex128, [](const Tensor& x, const Shape& d, bool k) { return logsumexp(x, d, k); }, r_lse, complex128, 1e-12);
  for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf, -kInf}) {
    CAPTURE(p);
    sweep(float64, [p](const Tensor& x, const Shape& d, bool k) { return norm(x, p, d, k); }, r_norm(p), float64, 1e-12);
    sweep(complex128, [p](const Tensor& x, const Shape& d, bool k) { return x.norm(p, d, k); }, r_norm(p), float64, 1e-12);
    sweep(float32, [p](const Tensor& x, const Shape& d, bool k) { return norm(x, p, d, k); }, r_norm(p), float32, 2e-5);
  }
  sweep(complex64, [](const Tensor& x, const Shape& d, bool k) { return norm(x, "fro", d, k); }, r_norm(2), float32, 1e-5);
}

TEST_CASE("reductions of 0-d tensors") {
  Tensor s = scalar_tensor(-2.5, float64);
  CHECK(sum(s).dim() == 0);
  CHECK(sum(s).item<double>() == -2.5);
  CHECK(sum(s, {0}, true).dim() == 0);
  CHECK(sum(s, {-1}).item<double>() == -2.5);
  CHECK(prod(s).item<double>() == -2.5);
  CHECK(mean(s).item<double>() == -2.5);
  CHECK(max(s).item<double>() == -2.5);
  CHECK(amin(s, {0}).item<double>() == -2.5);
  CHECK(norm(s).item<double>() == 2.5);
  CHECK(std::isnan(var(s).item<double>()));  // one element, correction 1: 0/0 like PyTorch
  CHECK(var(s, {}, 0).item<double>() == 0);
  CHECK(logsumexp(s).item<double>() == doctest::Approx(-2.5));
  CHECK(argmax(s).item<std::int64_t>() == 0);
  auto [v, i] = max(s, 0);
  CHECK(v.dim() == 0);
  CHECK(v.item<double>() == -2.5);
  CHECK(i.item<std::int64_t>() == 0);
  CHECK(cumsum(s, 0).item<double>() == -2.5);
  CHECK(all(s).item<bool>());
  CHECK(any(scalar_tensor(0.0, float64)).item<bool>() == false);
}

TEST_CASE("empty reductions") {
  Tensor e = zeros({3, 0}, float64);
  CHECK(to_vector<double>(sum(e, {1})) == std::vector<double>{0, 0, 0});
  CHECK(to_vector<double>(prod(e, {1})) == std::vector<double>{1, 1, 1});
  CHECK(sum(e, {0}).shape() == Shape{0});
  CHECK(sum(e).item<double>() == 0);
  CHECK(prod(e).item<double>() == 1);
  CHECK(sum(zeros({0}, int64)).item<std::int64_t>() == 0);
  CHECK(std::isnan(mean(e).item<double>()));
  CHECK(std::isnan(var(e).item<double>()));
  CHECK(norm(e).item<double>() == 0);
  CHECK(logsumexp(e, {1}).index({0}).item<double>() == -kInf);
  CHECK(all(e).item<bool>() == true);
  CHECK(any(e).item<bool>() == false);
  CHECK(cumsum(e, 1).shape() == Shape{3, 0});
  CHECK(amax(zeros({0, 3}), {1}).shape() == Shape{0});  // nothing reduced is empty: fine
}

TEST_CASE("argmax/argmin and max/min along a dim") {
  // ties: first occurrence; NaN counts as the max (and the min)
  Tensor a = from_vector(std::vector<double>{1, 5, 5, 2, -1, -1, 0, 3}, Shape{2, 4});
  CHECK(to_vector<std::int64_t>(argmax(a, 1)) == std::vector<std::int64_t>{1, 3});
  CHECK(to_vector<std::int64_t>(argmin(a, 1)) == std::vector<std::int64_t>{0, 0});
  CHECK(argmax(a).item<std::int64_t>() == 1);
  CHECK(argmin(a).item<std::int64_t>() == 4);
  CHECK(argmax(a, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(argmax(a, 0, true).shape() == Shape{1, 4});
  Tensor n = from_vector(std::vector<double>{1, kNaN, 7, kNaN}, Shape{4});
  CHECK(argmax(n).item<std::int64_t>() == 1);
  CHECK(argmin(n).item<std::int64_t>() == 1);
  auto [nv, ni] = max(n, 0);
  CHECK(std::isnan(nv.item<double>()));
  CHECK(ni.item<std::int64_t>() == 1);
  // random values in every layout against a naive loop (logical order)
  for (Dtype dt : {float64, float32, int64}) {
    for (auto& [name, x] : layouts(dt, 3)) {
      CAPTURE(name);
      const auto vals = to_vector<double>(x);
      const Shape s = x.shape();
      for (std::int64_t d = 0; d < 3; ++d) {
        for (bool is_max : {true, false}) {
          auto [v, i] = is_max ? x.max(d) : x.min(d);
          CHECK(i.dtype() == int64);
          CHECK(v.dtype() == dt);
          Tensor ai = is_max ? x.argmax(d) : x.argmin(d);
          CHECK(to_vector<std::int64_t>(ai) == to_vector<std::int64_t>(i));
          auto vi = to_vector<std::int64_t>(i);
          auto vv = to_vector<double>(v);
          // naive
          std::int64_t k = 0;
          for (std::int64_t p = 0; p < s[0] * s[1] * s[2] / s[static_cast<std::size_t>(d)]; ++p) {
            // output position p -> (o0, o1) over the kept dims
            std::int64_t kept[2], kk = 0;
            for (std::int64_t e = 0; e < 3; ++e)
              if (e != d) kept[kk++] = e;
            const std::int64_t i0 = p / s[static_cast<std::size_t>(kept[1])], i1 = p % s[static_cast<std::size_t>(kept[1])];
            double best = 0;
            std::int64_t bi = -1;
            for (std::int64_t j = 0; j < s[static_cast<std::size_t>(d)]; ++j) {
              std::int64_t pos[3];
              pos[d] = j;
              pos[kept[0]] = i0;
              pos[kept[1]] = i1;
              const double val = vals[static_cast<std::size_t>((pos[0] * s[1] + pos[1]) * s[2] + pos[2])];
              if (bi < 0 || (is_max ? val > best : val < best)) {
                best = val;
                bi = j;
              }
            }
            if (vi[static_cast<std::size_t>(p)] != bi || vv[static_cast<std::size_t>(p)] != best) ++k;
          }
          CHECK(k == 0);
        }
      }
      // flattened argmax is the logical flat index
      std::size_t best = 0;
      for (std::size_t j = 1; j < vals.size(); ++j)
        if (vals[j] > vals[best]) best = j;
      CHECK(argmax(x).item<std::int64_t>() == static_cast<std::int64_t>(best));
    }
  }
  auto [kv, kidx] = max(a, -1, true);
  CHECK(kv.shape() == Shape{2, 1});
  CHECK(kidx.shape() == Shape{2, 1});
}

TEST_CASE("cumsum and cumprod values, dtypes and layouts") {
  for (bool product : {false, true})
  for (Dtype dt : {float64, int64, bool_, complex128, float32}) {
    for (auto& [name, x] : layouts(dt, 5)) {
      CAPTURE(name);
      CAPTURE(product);
      const auto vals = to_vector<cd>(x);
      const Shape s = x.shape();
      for (std::int64_t d : {0, 1, 2, -1}) {
        Tensor y = product ? cumprod(x, d) : cumsum(x, d);
        CHECK(y.dtype() == (dt == bool_ ? int64 : dt));
        REQUIRE(y.shape() == s);
        const std::int64_t dd = d < 0 ? d + 3 : d;
        auto got = to_vector<cd>(y);
        int bad = 0;
        for (std::int64_t i0 = 0; i0 < s[0]; ++i0)
          for (std::int64_t i1 = 0; i1 < s[1]; ++i1)
            for (std::int64_t i2 = 0; i2 < s[2]; ++i2) {
              std::int64_t pos[3] = {i0, i1, i2};
              cld acc = product ? 1 : 0;
              for (std::int64_t j = 0; j <= pos[dd]; ++j) {
                std::int64_t q[3] = {i0, i1, i2};
                q[dd] = j;
                const cld v(vals[static_cast<std::size_t>((q[0] * s[1] + q[1]) * s[2] + q[2])].real(),
                            vals[static_cast<std::size_t>((q[0] * s[1] + q[1]) * s[2] + q[2])].imag());
                acc = product ? acc * v : acc + v;
              }
              const cd g = got[static_cast<std::size_t>((i0 * s[1] + i1) * s[2] + i2)];
              if (!close(cld(g.real(), g.imag()), acc, dt == float32 ? 1e-5 : 1e-13, 1e-6)) ++bad;
            }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("engine paths: outer, middle, multi-dim, row split, region split (float64 exact-ish)") {
  struct Case {
    Shape shape;
    Shape dims;
  };
  std::vector<Case> cases = {
      {{513, 1031}, {0}},        // outer reduction, tiles, parallel over tiles
      {{513, 1031}, {1}},        // inner reduction, parallel over outputs
      {{100003, 8}, {0}},        // outer with few columns: rows split among threads
      {{2, 300001}, {1}},        // two long rows
      {{600001}, {}},            // one long row: region split among threads
      {{37, 101, 53}, {1}},      // middle dim (outer mode per slice)
      {{37, 101, 53}, {0, 2}},   // interleaved reduced dims (inner mode, several segments)
      {{37, 101, 53}, {0, 1}},   // leading dims (outer mode with merged rows)
      {{7, 3, 5, 11, 13}, {1, 3}},
  };
  for (auto& c : cases) {
    CAPTURE(c.shape.size());
    Tensor x = rnd(c.shape);
    check_against(sum(x, c.dims), x, c.dims, false, r_sum, 1e-12, 1e-9);
    check_against(amax(x, c.dims), x, c.dims, false, r_max, 0, 0);
    check_against(var(x, c.dims), x, c.dims, false, r_var(1, false), 1e-11);
    check_against(norm(x, 3.0, c.dims), x, c.dims, false, r_norm(3), 1e-11);
    check_against(logsumexp(x, c.dims), x, c.dims, false, r_lse, 1e-12);
    // a transposed view of the same data reduced over the corresponding dims
    if (x.dim() == 2) {
      Tensor t = x.t();
      Shape td;
      for (auto d : c.dims) td.push_back(1 - d);
      check_against(sum(t, td), t, td, false, r_sum, 1e-12, 1e-9);
    }
  }
  // full reduction of a strided 2-D view: several segments split among threads
  Tensor big = rnd({700, 1200});
  Tensor v = big.slice(1, 0, std::nullopt, 3);
  check_against(sum(v), v, {}, false, r_sum, 1e-12, 1e-9);
  check_against(prod(v.slice(0, 0, 3) * 0.0 + 1.0001, {}), v.slice(0, 0, 3) * 0.0 + 1.0001, {}, false, r_prod, 1e-10);
}

TEST_CASE("float32 sum accuracy and no copy for outer reductions") {
  // 16M uniform values: blocked pairwise in float keeps the relative error near 1e-7
  manual_seed(42);
  const std::int64_t n = std::int64_t{1} << 24;
  Tensor x = rand({n}, float32);
  const float* p = x.data<float>();
  long double ref = 0;
  for (std::int64_t i = 0; i < n; ++i) ref += p[i];
  const int saved_threads = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const double s = sum(x).item<double>();
    CHECK(std::abs(s - static_cast<double>(ref)) / static_cast<double>(ref) < 1e-6);
  }
  set_num_threads(saved_threads);
  // sum over dim 0 of a (4096, 4096) matrix reads in place: the only allocation is the output
  Tensor m = x.reshape({4096, 4096});
  reset_peak_memory_stats();
  const auto before = memory_stats().current_bytes;
  Tensor c = sum(m, {0});
  const auto peak = memory_stats().peak_bytes;
  CHECK(peak - before <= 4096 * 4 + 4096);
  // column sums accurate against long double
  std::vector<long double> col(4096, 0);
  for (std::int64_t i = 0; i < 4096; ++i)
    for (std::int64_t j = 0; j < 4096; ++j) col[static_cast<std::size_t>(j)] += p[i * 4096 + j];
  auto cv = to_vector<float>(c);
  double worst = 0;
  for (std::size_t j = 0; j < 4096; ++j)
    worst = std::max(worst, static_cast<double>(std::abs(cv[j] - col[j]) / col[j]));
  CHECK(worst < 1e-6);
  // a middle-dim reduction of a contiguous tensor also reads in place
  Tensor m3 = x.reshape({64, 1024, 256});
  reset_peak_memory_stats();
  const auto b3 = memory_stats().current_bytes;
  Tensor r3 = sum(m3, {1});
  CHECK(memory_stats().peak_bytes - b3 <= 64 * 256 * 4 + 4096);
  CHECK(r3.shape() == Shape{64, 256});
}

TEST_CASE("vectorized blocks: float sums match the strided loop bitwise, extrema keep NaN and +-0 rules") {
  // Note [vector reduction blocks]: a contiguous run takes the ISA kernels, a stride-2 view of the same
  // values the scalar engine; the sums agree bit for bit and the extrema exactly, at every length that
  // crosses a lane or block boundary.
  manual_seed(5);
  const int saved_threads = get_num_threads();
  for (Dtype dt : {float32, float64}) {
    for (std::int64_t n : {1, 7, 31, 32, 33, 63, 64, 65, 100, 4095, 4096, 4097, 70001, 300000}) {
      INFO(std::string(dtype_name(dt)), " n ", n);
      Tensor x = randn({n}, dt);
      Tensor wide = zeros({n, 2}, dt);
      wide.select(1, 0).copy_(x);
      Tensor strided = wide.select(1, 0);  // stride 2: the scalar loop
      REQUIRE((n == 1 || !strided.is_contiguous()));
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        if (n < 16 * 4096) {  // longer contiguous runs read four streams at once (reduce_streams), in their order
          CHECK(sum(x).item<double>() == sum(strided).item<double>());
          CHECK(mean(x).item<double>() == mean(strided).item<double>());
        } else {
          CHECK(sum(x).item<double>() == doctest::Approx(sum(strided).item<double>()).epsilon(1e-5));
        }
        CHECK(amax(x).item<double>() == amax(strided).item<double>());
        CHECK(amin(x).item<double>() == amin(strided).item<double>());
      }
      set_num_threads(saved_threads);
      // integer values: every order of summation gives the exact total, so a lost or doubled element shows
      Tensor ints = (randn({n}, dt) * 4.0).round();
      long double exact = 0;
      for (double v : to_vector<double>(ints)) exact += v;
      CHECK(sum(ints).item<double>() == static_cast<double>(exact));
      // extrema against a plain loop
      auto v = to_vector<double>(x);
      CHECK(amax(x).item<double>() == *std::max_element(v.begin(), v.end()));
      CHECK(amin(x).item<double>() == *std::min_element(v.begin(), v.end()));
      // a NaN anywhere (lane, tail, either sign) wins
      for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
        for (double nan : {kNaN, -kNaN}) {
          Tensor y = x.clone();
          y.narrow(0, at, 1).fill_(nan);
          CHECK(std::isnan(amax(y).item<double>()));
          CHECK(std::isnan(amin(y).item<double>()));
        }
      }
      // infinities
      Tensor y = x.clone();
      y.narrow(0, n / 3, 1).fill_(-kInf);
      CHECK(amin(y).item<double>() == -kInf);
      y.narrow(0, n - 1, 1).fill_(kInf);
      CHECK(amax(y).item<double>() == kInf);
      // zeros of both signs: max +0 and min -0 wherever they sit; all -0 stays -0, all +0 stays +0
      Tensor z = full({n}, -0.0, dt);
      CHECK(std::signbit(amax(z).item<double>()));
      CHECK(std::signbit(amin(z).item<double>()));
      z.narrow(0, (n * 2) / 3, 1).fill_(0.0);
      CHECK(!std::signbit(amax(z).item<double>()));
      CHECK(std::signbit(amin(z).item<double>()) == (n > 1));
      Tensor pz = zeros({n}, dt);
      pz.narrow(0, n / 2, 1).fill_(-0.0);
      CHECK(std::signbit(amax(pz).item<double>()) == (n == 1));
      CHECK(std::signbit(amin(pz).item<double>()));
    }
  }
  // the largest and smallest finite values and subnormals order correctly
  Tensor e = from_vector(std::vector<float>(100, 1e-45f));
  e.narrow(0, 70, 1).fill_(std::numeric_limits<float>::max());
  e.narrow(0, 3, 1).fill_(-std::numeric_limits<float>::max());
  CHECK(amax(e).item<float>() == std::numeric_limits<float>::max());
  CHECK(amin(e).item<float>() == -std::numeric_limits<float>::max());
  CHECK(amin(e.narrow(0, 4, 60)).item<float>() == 1e-45f);
}

TEST_CASE("vectorized outer-mode rows: extrema over dim 0 match the strided loop bit for bit, sums are exact") {
  // Note [vector reduction blocks]: reduce_rows_tile's four-row step runs fold_rows4 on contiguous columns
  // (w >= 64); a column stride of 2 takes the scalar loop. Extrema are order-independent, so the two agree bit
  // for bit (signed zeros, NaNs); sums of integer values are exact in any order.
  manual_seed(11);
  for (Dtype dt : {float32, float64}) {
    for (std::int64_t w : {64, 100, 256}) {
      for (std::int64_t n : {4, 7, 64, 333}) {
        CAPTURE(w);
        CAPTURE(n);
        Tensor x = randn({n, w}, dt);
        // zeros of both signs and NaNs of both signs in some columns
        x.narrow(1, 3, 1).fill_(-0.0);
        x.narrow(0, n / 2, 1).narrow(1, 3, 1).fill_(0.0);
        x.narrow(1, 5, 1).fill_(0.0);
        x.narrow(0, n - 1, 1).narrow(1, 7, 1).fill_(std::numeric_limits<double>::quiet_NaN());
        x.narrow(0, 0, 1).narrow(1, 9, 1).fill_(-std::numeric_limits<double>::quiet_NaN());
        Tensor strided = zeros({n, w, 2}, dt).select(2, 0);
        strided.copy_(x);
        REQUIRE(!strided.is_contiguous());
        for (bool is_max : {true, false}) {
          const auto av = to_vector<double>((is_max ? x.amax({0}) : x.amin({0})).to(float64));
          const auto bv = to_vector<double>((is_max ? strided.amax({0}) : strided.amin({0})).to(float64));
          bool same = true;
          for (std::size_t j = 0; j < av.size(); ++j)
            same = same && (std::isnan(av[j]) ? std::isnan(bv[j])
                                              : av[j] == bv[j] && std::signbit(av[j]) == std::signbit(bv[j]));
          CHECK(same);
        }
        CHECK(!std::signbit(x.amax({0}).to(float64).select(0, 3).item<double>()));
        CHECK(std::signbit(x.amin({0}).to(float64).select(0, 3).item<double>()));
        CHECK(std::signbit(x.amax({0}).to(float64).select(0, 5).item<double>()) == false);
        CHECK(std::isnan(x.amax({0}).to(float64).select(0, 7).item<double>()));
        CHECK(std::isnan(x.amin({0}).to(float64).select(0, 9).item<double>()));
        // integer values: the column sums are exact whatever the order
        Tensor ints = (randn({n, w}, dt) * 8.0).round();
        const auto iv = to_vector<double>(ints);
        std::vector<double> col(static_cast<std::size_t>(w), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < w; ++j) col[static_cast<std::size_t>(j)] += iv[static_cast<std::size_t>(i * w + j)];
        CHECK(to_vector<double>(ints.sum({0}).to(float64)) == col);
      }
    }
  }
}

TEST_CASE("dtype rules") {
  Tensor i = from_vector(std::vector<std::int64_t>{1, 2, 3});
  Tensor b = from_vector(std::vector<bool>{true, false, true});
  CHECK(sum(i).dtype() == int64);
  CHECK(sum(b).item<std::int64_t>() == 2);
  CHECK(prod(i).dtype() == int64);
  CHECK(prod(i).item<std::int64_t>() == 6);
  CHECK(cumsum(b, 0).dtype() == int64);
  CHECK(to_vector<std::int64_t>(cumsum(b, 0)) == std::vector<std::int64_t>{1, 1, 2});
  CHECK(amax(i).dtype() == int64);
  CHECK(all(i).dtype() == bool_);
  CHECK(norm(zeros({2}, complex64)).dtype() == float32);
  CHECK(var(zeros({2}, complex128)).dtype() == float64);
  CHECK(logsumexp(zeros({2}, complex64)).dtype() == complex64);
  CHECK(sum(zeros({2}, float32)).dtype() == float32);
  CHECK(mean(zeros({2}, complex64)).dtype() == complex64);
  // int64 sums wrap around like PyTorch's
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  CHECK(sum(from_vector(std::vector<std::int64_t>{big, 1})).item<std::int64_t>() ==
        std::numeric_limits<std::int64_t>::min());
}

TEST_CASE("logsumexp is stable and handles infinities") {
  Tensor x = from_vector(std::vector<double>{1000, 1000, -kInf, -kInf, -1000, -1000.5, kInf, 1}, Shape{4, 2});
  auto r = to_vector<double>(logsumexp(x, {1}));
  CHECK(r[0] == doctest::Approx(1000 + std::log(2.0)));
  CHECK(r[1] == -kInf);
  CHECK(r[2] == doctest::Approx(-1000 + std::log1p(std::exp(-0.5))));
  CHECK(r[3] == kInf);
  Tensor f = from_vector(std::vector<float>{100, 100, 100});
  CHECK(logsumexp(f).item<double>() == doctest::Approx(100 + std::log(3.0)).epsilon(1e-6));
}

TEST_CASE("norm special cases") {
  Tensor x = from_vector(std::vector<double>{3, 0, -4, 0}, Shape{2, 2});
  CHECK(norm(x).item<double>() == doctest::Approx(5));
  CHECK(norm(x, 0).item<double>() == 2);
  CHECK(norm(x, 1).item<double>() == 7);
  CHECK(norm(x, kInf).item<double>() == 4);
  CHECK(norm(x, -kInf).item<double>() == 0);
  CHECK(to_vector<double>(norm(x, 2, {1})) == std::vector<double>{3, 4});
  CHECK(norm(x, "fro").item<double>() == doctest::Approx(5));
  CHECK(norm(x, "fro", {0}, true).shape() == Shape{1, 2});
  Tensor z = from_vector(std::vector<cd>{{3, 4}, {0, 0}});
  CHECK(norm(z).item<double>() == doctest::Approx(5));
  CHECK(norm(z, 1).item<double>() == doctest::Approx(5));
}

// ---- gradients -----------------------------------------------------------------------------------
namespace {
using Fn1 = std::function<Tensor(const std::vector<Tensor>&)>;
Tensor leaf(const Shape& s, Dtype dt, std::uint64_t seed) { return rnd(s, dt, seed).requires_grad_(); }
}  // namespace

TEST_CASE("gradcheck: sum, mean, cumsum (real and complex)") {
  for (Dtype dt : {float64, complex128}) {
    Tensor x = leaf({3, 4, 2}, dt, 11);
    for (const auto& d : std::vector<Shape>{{}, {0}, {1, 2}, {-1}}) {
      for (bool k : {false, true}) {
        CHECK(autodiff::gradcheck(Fn1([d, k](const std::vector<Tensor>& in) { return sum(in[0], d, k); }), {x}));
        CHECK(autodiff::gradcheck(Fn1([d, k](const std::vector<Tensor>& in) { return mean(in[0], d, k); }), {x}));
      }
    }
    for (std::int64_t d : {0, 1, -1})
      CHECK(autodiff::gradcheck(Fn1([d](const std::vector<Tensor>& in) { return cumsum(in[0], d); }), {x}));
    // non-contiguous input
    CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return sum(in[0].transpose(0, 2), {1}); }), {x}));
  }
  Tensor x = leaf({3, 4}, float64, 12);
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return (sum(in[0], {1}) * in[0].sum()).sum({}); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return mean(in[0] * in[0], {0}, true); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return cumsum(in[0] * in[0], 1); }), {x}));
}

TEST_CASE("cumprod: int64 wraps, zeros, empty and 0-d tensors, errors, gradients (zeros included)") {
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK(to_vector<std::int64_t>(cumprod(from_vector(std::vector<std::int64_t>{big, big, 3}), 0)) ==
        std::vector<std::int64_t>{big, 0, 0});  // 2^80 wraps to 0, as torch
  CHECK(cumprod(from_vector(std::vector<bool>{true, false}), 0).dtype() == int64);
  CHECK(to_vector<double>(from_vector(std::vector<double>{2, 0.5, 0, 4}).cumprod(0)) == std::vector<double>{2, 1, 0, 0});
  CHECK(cumprod(zeros({0, 3}), 0).shape() == Shape{0, 3});
  CHECK(cumprod(scalar_tensor(2.5), 0).item<double>() == 2.5);
  CHECK_THROWS_WITH_AS(cumprod(zeros({2, 2}), 2), "[cumprod] dim 2 out of range for a tensor of 2 dims", Error);
  // rows with no zero, one zero (first, middle, last), two and three zeros (Note [cumprod gradient])
  Tensor x = from_vector(std::vector<double>{1.5, -0.7, 2.0, 0.9, 1.1,   //
                                             0.0, 1.3, -0.8, 1.1, 0.6,   //
                                             1.2, 0.6, 0.0, -1.2, 0.8,   //
                                             0.5, 1.4, -0.3, 0.7, 0.0,   //
                                             0.9, 0.0, 0.7, 0.0, 1.3,   //
                                             0.0, 0.0, 0.7, 0.0, -2.0},
                         Shape{6, 5})
                 .requires_grad_();
  for (std::int64_t d : {0, 1})
    CHECK(autodiff::gradcheck(Fn1([d](const std::vector<Tensor>& in) { return cumprod(in[0], d); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return cumprod(in[0], 1); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return cumprod(in[0].t(), 0); }), {x}));
  // the gradient at a row's first zero: the products that skip it (y = [2, 0, 0], dL/dx1 = 2 + 2 * 3)
  Tensor y = from_vector(std::vector<double>{2, 0, 3}).requires_grad_();
  cumprod(y, 0).sum().backward();
  CHECK(to_vector<double>(y.grad()) == std::vector<double>{1, 8, 0});
  Tensor z = from_vector(std::vector<cd>{{1, 1}, {0, 0}, {0.5, -2}, {1.2, 0.3}, {-0.4, 0.9}, {0.7, 0.2}}, Shape{2, 3})
                 .requires_grad_();
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return cumprod(in[0], 1); }), {z}));
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return cumprod(in[0], 0); }), {z}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return cumprod(in[0], 1); }), {z}));
}

TEST_CASE("gradcheck: prod with zeros (real and complex)") {
  // rows with no zero, one zero, two zeros and three zeros
  Tensor x = from_vector(std::vector<double>{1.5, -0.7, 2.0, 0.9,   //
                                             0.0, 1.3, -0.8, 1.1,   //
                                             0.0, 0.6, 0.0, -1.2,   //
                                             0.0, 0.0, 0.7, 0.0},
                         Shape{4, 4})
                 .requires_grad_();
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {1}); }), {x}));
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {0}, true); }), {x}));
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0].slice(0, 0, 2)); }), {x}));
  // double backward through the zero-aware formula
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {1}); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0].slice(0, 0, 2)); }), {x}));
  // the gradient at a single zero is the product of the others
  Tensor y = from_vector(std::vector<double>{2, 0, 3}).requires_grad_();
  prod(y).backward();
  CHECK(to_vector<double>(y.grad()) == std::vector<double>{0, 6, 0});
  Tensor z = from_vector(std::vector<cd>{{1, 1}, {0, 0}, {0.5, -2}, {1.2, 0.3}, {-0.4, 0.9}, {0.7, 0.2}}, Shape{2, 3})
                 .requires_grad_();
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {1}); }), {z}));
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {0}); }), {z}));
  Tensor w = leaf({2, 3, 2}, complex128, 13);
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return prod(in[0], {0, 2}); }), {w}));
}

TEST_CASE("gradients of max/min: ties split evenly, dim versions hit the index") {
  Tensor x = from_vector(std::vector<double>{1, 3, 3, -2, 3, 0}, Shape{2, 3}).requires_grad_();
  max(x).backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3, 0});
  x.set_grad(Tensor());
  amax(x, {1}).sum().backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{0, 0.5, 0.5, 0, 1, 0});
  x.set_grad(Tensor());
  std::get<0>(max(x, 1)).sum().backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{0, 1, 0, 0, 1, 0});
  x.set_grad(Tensor());
  min(x).backward();
  CHECK(to_vector<double>(x.grad()) == std::vector<double>{0, 0, 0, 1, 0, 0});
  // gradcheck on distinct values
  Tensor r = leaf({3, 4, 2}, float64, 21);
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return max(in[0]); }), {r}));
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return min(in[0]); }), {r}));
  for (const auto& d : std::vector<Shape>{{0}, {1, 2}, {-1}}) {
    CHECK(autodiff::gradcheck(Fn1([d](const std::vector<Tensor>& in) { return amax(in[0], d); }), {r}));
    CHECK(autodiff::gradcheck(Fn1([d](const std::vector<Tensor>& in) { return amin(in[0], d, true); }), {r}));
  }
  for (std::int64_t d : {0, 1, 2})
    for (bool k : {false, true}) {
      CHECK(autodiff::gradcheck(
          Fn1([d, k](const std::vector<Tensor>& in) { return std::get<0>(max(in[0], d, k)); }), {r}));
      CHECK(autodiff::gradcheck(
          Fn1([d, k](const std::vector<Tensor>& in) { return std::get<0>(in[0].min(d, k)); }), {r}));
    }
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return amax(in[0] * in[0], {1}); }), {r}));
}

TEST_CASE("gradcheck: var and std (real and complex)") {
  for (Dtype dt : {float64, complex128}) {
    Tensor x = leaf({3, 4, 2}, dt, 31);
    for (const auto& d : std::vector<Shape>{{}, {0}, {1, 2}, {-1}})
      for (double corr : {0.0, 1.0})
        for (bool k : {false, true}) {
          CHECK(autodiff::gradcheck(Fn1([d, corr, k](const std::vector<Tensor>& in) { return var(in[0], d, corr, k); }), {x}));
          CHECK(autodiff::gradcheck(Fn1([d, corr, k](const std::vector<Tensor>& in) { return in[0].std(d, corr, k); }), {x}));
        }
    CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return var(in[0], {1}); }), {x}));
    CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return phasor::std(in[0], {0, 2}, 0.0); }), {x}));
  }
}

TEST_CASE("gradcheck: logsumexp") {
  Tensor x = leaf({3, 4, 2}, float64, 41);
  for (const auto& d : std::vector<Shape>{{}, {0}, {1, 2}, {-1}})
    for (bool k : {false, true})
      CHECK(autodiff::gradcheck(Fn1([d, k](const std::vector<Tensor>& in) { return logsumexp(in[0], d, k); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return logsumexp(in[0], {1}); }), {x}));
  CHECK(autodiff::gradgradcheck(Fn1([](const std::vector<Tensor>& in) { return logsumexp(in[0]); }), {x}));
  Tensor z = leaf({3, 4}, complex128, 42);
  CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return logsumexp(in[0], {1}); }), {z}));
  // large values: the gradient is the softmax, not NaN
  Tensor big = from_vector(std::vector<double>{1000, 1000}).requires_grad_();
  logsumexp(big).backward();
  CHECK(big.grad().index({0}).item<double>() == doctest::Approx(0.5));
  CHECK(big.grad().index({1}).item<double>() == doctest::Approx(0.5));
}

TEST_CASE("gradcheck: norms (real and complex)") {
  for (Dtype dt : {float64, complex128}) {
    Tensor x = leaf({3, 4, 2}, dt, 51);
    for (double p : {1.0, 2.0, 3.0, 0.7, 1.5, kInf, -kInf}) {
      CAPTURE(p);
      for (const auto& d : std::vector<Shape>{{}, {0}, {1, 2}})
        for (bool k : {false, true})
          CHECK(autodiff::gradcheck(Fn1([p, d, k](const std::vector<Tensor>& in) { return norm(in[0], p, d, k); }), {x}));
    }
    CHECK(autodiff::gradcheck(Fn1([](const std::vector<Tensor>& in) { return norm(in[0], "fro", {0, 1}); }), {x}));
    for (double p : {2.0, 3.0, 1.0, 1.5, kInf}) {
      CAPTURE(p);
      CHECK(autodiff::gradgradcheck(Fn1([p](const std::vector<Tensor>& in) { return norm(in[0], p, {1}); }), {x}));
    }
  }
  // p < 1 with a zero entry: closed form s |x|^(p-1) / n^(p-1), 0 at the zero (PyTorch's values)
  Tensor h = from_vector(std::vector<double>{1, 0, 2}).requires_grad_();
  norm(h, 0.5).backward();
  const double nh = std::pow(1 + std::sqrt(2.0), 2);
  auto gh = to_vector<double>(h.grad());
  CHECK(gh[0] == doctest::Approx(std::sqrt(nh)));
  CHECK(gh[1] == 0);
  CHECK(gh[2] == doctest::Approx(std::sqrt(nh / 2)));
  // p = 0 counts and has a zero gradient
  Tensor y = from_vector(std::vector<double>{1, 0, 2}).requires_grad_();
  norm(y, 0).backward();
  CHECK(to_vector<double>(y.grad()) == std::vector<double>{0, 0, 0});
  // the gradient of the 2-norm at 0 is 0, not NaN (PyTorch's convention)
  for (Dtype dt : {float64, complex128}) {
    Tensor zz = zeros({2, 3}, dt).requires_grad_();
    norm(zz, 2, {1}).sum().backward();
    CHECK(to_vector<cd>(zz.grad()) == std::vector<cd>(6, cd(0)));
    Tensor z3 = zeros({4}, dt).requires_grad_();
    norm(z3, 3.0).backward();
    CHECK(to_vector<cd>(z3.grad()) == std::vector<cd>(4, cd(0)));
  }
  Tensor zi = zeros({3}, float64).requires_grad_();
  norm(zi, kInf).backward();
  CHECK(to_vector<double>(zi.grad()) == std::vector<double>{0, 0, 0});
}

// ---- errors ------------------------------------------------------------------------------------------
TEST_CASE("reduction errors name the op and the offending dims/shape") {
  Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, {2}), "[sum] dim 2 out of range for a tensor of 2 dims", Error);
  CHECK_THROWS_WITH_AS(prod(x, {-3}), "[prod] dim -3 out of range for a tensor of 2 dims", Error);
  CHECK_THROWS_WITH_AS(amax(x, {5}), "[amax] dim 5 out of range for a tensor of 2 dims", Error);
  CHECK_THROWS_WITH_AS(var(x, {1, -1}), "[var] dim -1 appears more than once", Error);
  CHECK_THROWS_WITH_AS(sum(x, {0, 0}), "[sum] dim 0 appears more than once", Error);
  CHECK_THROWS_WITH_AS(cumsum(x, 2), "[cumsum] dim 2 out of range for a tensor of 2 dims", Error);
  CHECK_THROWS_WITH_AS(argmax(x, 3), "[argmax] dim 3 out of range for a tensor of 2 dims", Error);
  CHECK_THROWS_WITH_AS(max(x, -3), "[max] dim -3 out of range for a tensor of 2 dims", Error);
  Tensor z = zeros({2}, complex64);
  CHECK_THROWS_WITH_AS(max(z), "[max] not defined for complex input (got complex64); compare abs() or real() instead",
                       Error);
  CHECK_THROWS_AS(amin(z, {0}), Error);
  CHECK_THROWS_AS(max(z, 0), Error);
  CHECK_THROWS_AS(argmax(z), Error);
  Tensor i = zeros({2}, int64);
  CHECK_THROWS_WITH_AS(mean(i), "[mean] expected a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(var(i), "[var] expected a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(phasor::std(zeros({2}, bool_)), "[std] expected a floating or complex tensor, got bool", Error);
  CHECK_THROWS_WITH_AS(norm(i), "[norm] expected a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(logsumexp(i), "[logsumexp] expected a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(norm(x, "nuc"), "[norm] unsupported norm 'nuc'; use \"fro\" or a number p", Error);
  CHECK_THROWS_AS(norm(x, -1.0), Error);
  Tensor e = zeros({3, 0});
  CHECK_THROWS_WITH_AS(max(e), "[max] cannot reduce over an empty dim: input shape (3, 0), reduced dims (0, 1) "
                               "(the operation has no identity)",
                       Error);
  CHECK_THROWS_WITH_AS(amin(e, {1}), "[amin] cannot reduce over an empty dim: input shape (3, 0), reduced dims (1,) "
                                     "(the operation has no identity)",
                       Error);
  CHECK_THROWS_WITH_AS(max(e, 1), "[max] cannot reduce over an empty dim: input shape (3, 0), dim 1 (the operation has "
                                  "no identity)",
                       Error);
  CHECK_THROWS_WITH_AS(argmin(zeros({0})), "[argmin] cannot reduce over an empty dim: input shape (0,) (flattened) (the "
                                           "operation has no identity)",
                       Error);
  CHECK_THROWS_AS(norm(e, kInf), Error);
  // inputs are left unchanged
  Tensor y = from_vector(std::vector<double>{1, 2, 3});
  CHECK_THROWS_AS(sum(y, {1}), Error);
  CHECK(to_vector<double>(y) == std::vector<double>{1, 2, 3});
}
