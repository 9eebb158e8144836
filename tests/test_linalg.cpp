// tests/test_linalg.cpp - matmul family and einsum: values vs naive long double loops, layouts,
// zero sizes, dtype promotion, gradients (gradcheck / gradgradcheck, real and complex), errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <map>
#include <phasor/phasor.hpp>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace phasor;

namespace {

using cd = std::complex<double>;
using cld = std::complex<long double>;
using Fn1 = std::function<Tensor(const std::vector<Tensor>&)>;

/// Reference values: shape, exact-ish values and sum of |terms| (scale for the float tolerance).
struct Ref {
  Shape shape;
  std::vector<cld> v;
  std::vector<long double> mag;
};

std::vector<cld> values(const Tensor& t) {
  auto d = to_vector<cd>(t);
  return std::vector<cld>(d.begin(), d.end());
}

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

/// Row-major linear index of `idx` into `shape`, where size-1 dims broadcast (index 0).
std::int64_t lin(const Shape& shape, const Shape& idx) {
  std::int64_t r = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) r = r * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
  return r;
}

Shape unravel(std::int64_t i, const Shape& shape) {
  Shape idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    if (shape[d]) i /= shape[d];
  }
  return idx;
}

/// numpy matmul semantics written out with plain loops in long double.
Ref ref_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const std::int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const std::size_t nb = std::max(ba.size(), bb.size());
  while (ba.size() < nb) ba.insert(ba.begin(), 1);
  while (bb.size() < nb) bb.insert(bb.begin(), 1);
  Shape batch(nb);
  for (std::size_t i = 0; i < nb; ++i) batch[i] = std::max(ba[i], bb[i]);
  auto av = values(a), bv = values(b);
  Ref r;
  Shape full = batch;
  full.push_back(n);
  full.push_back(m);
  r.v.assign(static_cast<std::size_t>(numel_of(full)), 0);
  r.mag.assign(r.v.size(), 0);
  Shape fa = ba, fb = bb;
  fa.push_back(1);
  fa.push_back(1);
  fb.push_back(1);
  fb.push_back(1);
  for (std::int64_t o = 0; o < numel_of(full); ++o) {
    Shape idx = unravel(o, full);
    const std::int64_t i = idx[nb], j = idx[nb + 1];
    idx[nb] = idx[nb + 1] = 0;
    // batch-broadcast offsets of the (n, k) and (k, m) matrices, then plain row-major indexing
    const std::int64_t abase = lin(fa, idx) * n * k, bbase = lin(fb, idx) * k * m;
    cld s = 0;
    long double mg = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      const cld x = av[static_cast<std::size_t>(abase + i * k + p)], y = bv[static_cast<std::size_t>(bbase + p * m + j)];
      s += x * y;
      mg += std::abs(x) * std::abs(y);
    }
    r.v[static_cast<std::size_t>(o)] = s;
    r.mag[static_cast<std::size_t>(o)] = mg;
  }
  r.shape = batch;
  if (!a1) r.shape.push_back(n);
  if (!b1) r.shape.push_back(m);
  return r;
}

/// Brute-force einsum over every assignment of every label (letters and "..."), in long double.
Ref ref_einsum(const std::string& eq, const std::vector<Tensor>& ops) {
  const auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t b = 0;;) {
    auto e = lhs.find(',', b);
    terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  // expand "..." into digits '0'.. right-aligned over the longest ellipsis
  std::size_t ell = 0;
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (terms[i].find("...") != std::string::npos) ell = std::max(ell, ops[i].shape().size() - (terms[i].size() - 3));
  auto expand = [&](const std::string& t, std::size_t e) {
    auto p = t.find("...");
    if (p == std::string::npos) return t;
    std::string mid;
    for (std::size_t d = 0; d < e; ++d) mid += static_cast<char>('0' + (ell - e + d));
    return t.substr(0, p) + mid + t.substr(p + 3);
  };
  std::vector<std::string> sub;
  for (std::size_t i = 0; i < terms.size(); ++i)
    sub.push_back(expand(terms[i], terms[i].find("...") == std::string::npos ? 0 : ops[i].shape().size() - (terms[i].size() - 3)));
  std::string out;
  if (arrow == std::string::npos) {
    for (std::size_t d = 0; d < ell; ++d) out += static_cast<char>('0' + d);
    std::map<char, int> cnt;
    for (auto& s : sub)
      for (char c : s)
        if (std::isalpha(static_cast<unsigned char>(c))) ++cnt[c];
    for (auto& [c, n] : cnt)
      if (n == 1) out += c;  // std::map orders by ASCII: upper case first
  } else {
    out = expand(eq.substr(arrow + 2), ell);
  }
  std::map<char, std::int64_t> size;
  for (std::size_t i = 0; i < sub.size(); ++i)
    for (std::size_t d = 0; d < sub[i].size(); ++d) {
      auto s = ops[i].shape()[d];
      if (!size.count(sub[i][d]) || size[sub[i][d]] == 1) size[sub[i][d]] = s;
    }
  std::string all;
  for (auto& [c, s] : size) all += c;
  Shape all_shape;
  for (char c : all) all_shape.push_back(size[c]);
  Ref r;
  for (char c : out) r.shape.push_back(size[c]);
  r.v.assign(static_cast<std::size_t>(numel_of(r.shape)), 0);
  r.mag.assign(r.v.size(), 0);
  std::vector<std::vector<cld>> vals;
  for (auto& t : ops) vals.push_back(values(t));
  for (std::int64_t it = 0; it < numel_of(all_shape); ++it) {
    Shape idx = unravel(it, all_shape);
    auto at = [&](char c) { return idx[all.find(c)]; };
    cld p = 1;
    long double mg = 1;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Shape oi;
      for (char c : sub[i]) oi.push_back(at(c));
      const cld x = vals[i][static_cast<std::size_t>(lin(ops[i].shape(), oi))];
      p *= x;
      mg *= std::abs(x);
    }
    Shape o;
    for (char c : out) o.push_back(at(c));
    const auto li = static_cast<std::size_t>(lin(r.shape, o));
    r.v[li] += p;
    r.mag[li] += mg;
  }
  return r;
}

/// Checks t against r: same shape, |t - r| <= tol * (sum of |terms|) + tiny.
void check_ref(const Tensor& t, const Ref& r, double tol) {
  REQUIRE(t.shape() == r.shape);
  auto tv = values(t);
  REQUIRE(tv.size() == r.v.size());
  for (std::size_t i = 0; i < tv.size(); ++i) {
    const long double err = std::abs(tv[i] - r.v[i]);
    const long double bound = tol * r.mag[i] + 1e-30L;
    if (!(err <= bound)) {
      INFO("element " << i << " got " << static_cast<double>(tv[i].real()) << "+" << static_cast<double>(tv[i].imag())
                      << "i want " << static_cast<double>(r.v[i].real()) << "+" << static_cast<double>(r.v[i].imag()) << "i");
      CHECK(err <= bound);
      return;
    }
  }
}

double tol_for(Dtype t) {
  switch (t) {
    case Dtype::Float32:
    case Dtype::Complex64: return 2e-6;
    case Dtype::Int64: return 0;  // exact
    default: return 1e-14;
  }
}

/// Random tensor of `dtype` (int64: small integers so sums stay exact).
Tensor rnd(const Shape& s, Dtype dtype) {
  if (dtype == int64) return randint(-5, 6, s);
  if (dtype == bool_) return randint(0, 2, s).to(bool_);
  return randn(s, dtype);
}

const std::vector<Dtype> kAll = {float32, float64, complex64, complex128, int64};

void check_matmul(const Tensor& a, const Tensor& b) {
  Tensor c = matmul(a, b);
  CHECK(c.dtype() == a.dtype());
  check_ref(c, ref_matmul(a, b), tol_for(a.dtype()));
}

std::string sstr(const Shape& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

struct Recorder : OpObserver {
  std::vector<std::string> names;
  void on_begin(const OpEvent& e) override { names.emplace_back(e.name); }
  bool saw(const std::string& n) const { return std::find(names.begin(), names.end(), n) != names.end(); }
};

}  // namespace

TEST_CASE("matmul values: all dtypes and rank cases") {
  manual_seed(1);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}},          {{4}, {4}},           {{4}, {4, 3}},             {{2, 3}, {3}},
      {{4}, {2, 4, 3}},          {{2, 3, 4}, {4}},     {{2, 1, 3, 4}, {5, 4, 2}}, {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},       {{1, 6}, {6, 1}},     {{9, 10}, {10, 11}},       {{17, 40}, {40, 23}},
      {{6, 8, 8}, {6, 8, 8}},    {{3, 50, 20}, {20, 30}}, {{2, 3, 50, 20}, {20, 30}}, {{4, 1, 12, 9}, {3, 9, 10}},
      {{70}, {70, 9}},           {{9, 70}, {70}},      {{300}, {300}},            {{1, 9, 10}, {10, 11}},
      {{3, 30, 30}, {3, 30, 31}}, {{2, 100, 100}, {1, 100, 90}}, {{5, 1, 40}, {40, 30}},
      {{16, 40, 40}, {16, 40, 41}}};  // the last: OpenMP over the batch
  for (Dtype dt : kAll) {
    for (const auto& [sa, sb] : cases) {
      CAPTURE(dt);
      CAPTURE(sstr(sa));
      CAPTURE(sstr(sb));
      check_matmul(rnd(sa, dt), rnd(sb, dt));
    }
  }
  // the method spelling
  Tensor a = rnd({3, 4}, float64), b = rnd({4, 2}, float64);
  check_ref(a.matmul(b), ref_matmul(a, b), 1e-14);
}

TEST_CASE("matmul values: transposed, strided and broadcast layouts") {
  manual_seed(2);
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    Tensor x = rnd({12, 11}, dt), y = rnd({13, 12}, dt);
    check_matmul(x.t(), y.t());                                   // both transposed (BLAS Trans flags)
    check_matmul(x.t(), rnd({12, 9}, dt));                        // left transposed
    check_matmul(rnd({9, 12}, dt), y.t().slice(1, 0, 10));        // right transposed and narrowed
    check_matmul(x.slice(1, 0, std::nullopt, 2), rnd({6, 10}, dt));  // column step 2: copied
    check_matmul(x.slice(0, 1, 10), y.slice(0, 2, 13).slice(1, 0, 11));  // row slices: ld > cols
    check_matmul(ones({1, 11}, dt).expand({10, 11}), rnd({11, 9}, dt));  // stride-0 rows
    check_matmul(x.unsqueeze(0).expand({3, 12, 11}), rnd({3, 11, 8}, dt));  // stride-0 batch
    Tensor z = rnd({4, 9, 10}, dt);
    check_matmul(z.transpose(-1, -2), rnd({4, 9, 7}, dt));        // batched transposed
    check_matmul(z.permute({1, 0, 2}), rnd({9, 10, 6}, dt));      // non-contiguous batch dim
    check_matmul(rnd({2, 5, 4, 3}, dt).permute({2, 0, 3, 1}), rnd({5, 3}, dt));  // no fold possible
    Tensor big = rnd({3, 20, 30}, dt);
    check_matmul(big.slice(2, 0, 25), rnd({25, 7}, dt));          // fold with lda > k
  }
}

TEST_CASE("matmul avoids copies of transposed operands") {
  manual_seed(3);
  auto rec = std::make_shared<Recorder>();
  Tensor x = randn({40, 60}), y = randn({40, 50});  // large enough for the BLAS path
  add_op_observer(rec);
  Tensor c1 = matmul(x.t(), y);
  const bool copied_t = rec->saw("clone");
  rec->names.clear();
  Tensor c2 = matmul(x.slice(1, 0, std::nullopt, 2).t(), y);
  const bool copied_strided = rec->saw("clone");
  remove_op_observer(rec);
  CHECK_FALSE(copied_t);
  CHECK(copied_strided);
  check_ref(c1, ref_matmul(x.t(), y), 2e-6);
  check_ref(c2, ref_matmul(x.slice(1, 0, std::nullopt, 2).t(), y), 2e-6);
}

TEST_CASE("matmul zero-size dims") {
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    Tensor z = matmul(rnd({3, 0}, dt), rnd({0, 4}, dt));  // k = 0: zeros
    REQUIRE(z.shape() == Shape{3, 4});
    for (auto v : values(z)) CHECK(v == cld(0));
    Tensor zb = matmul(rnd({2, 5, 0}, dt), rnd({0, 3}, dt));
    REQUIRE(zb.shape() == Shape{2, 5, 3});
    for (auto v : values(zb)) CHECK(v == cld(0));
    CHECK(matmul(rnd({0, 3}, dt), rnd({3, 4}, dt)).shape() == Shape{0, 4});
    CHECK(matmul(rnd({2, 0, 3}, dt), rnd({3, 5}, dt)).shape() == Shape{2, 0, 5});
    CHECK(matmul(rnd({0, 2, 3}, dt), rnd({1, 3, 5}, dt)).shape() == Shape{0, 2, 5});
    Tensor d = matmul(rnd({0}, dt), rnd({0}, dt));
    CHECK(d.dim() == 0);
    CHECK(values(d)[0] == cld(0));
  }
}

TEST_CASE("matmul dtype promotion and bool") {
  manual_seed(4);
  Tensor f = rnd({3, 4}, float32), d = rnd({4, 2}, float64), i = rnd({4, 2}, int64), c = rnd({4, 2}, complex128);
  Tensor fd = matmul(f, d);
  CHECK(fd.dtype() == float64);
  check_ref(fd, ref_matmul(f, d), 1e-14);
  Tensor fi = matmul(f, i);
  CHECK(fi.dtype() == float32);
  check_ref(fi, ref_matmul(f, i), 2e-6);
  Tensor fc = matmul(f, c);
  CHECK(fc.dtype() == complex128);
  check_ref(fc, ref_matmul(f, c), 1e-14);
  CHECK(matmul(rnd({2, 3}, int64), rnd({3, 2}, int64)).dtype() == int64);

  // bool: logical or of ands
  Tensor a = rnd({4, 5}, bool_), b = rnd({5, 3}, bool_);
  Tensor p = matmul(a, b);
  CHECK(p.dtype() == bool_);
  auto av = to_vector<bool>(a), bv = to_vector<bool>(b), pv = to_vector<bool>(p);
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 3; ++q) {
      bool want = false;
      for (int k = 0; k < 5; ++k) want = want || (av[static_cast<std::size_t>(r * 5 + k)] && bv[static_cast<std::size_t>(k * 3 + q)]);
      CHECK(pv[static_cast<std::size_t>(r * 3 + q)] == want);
    }
}

TEST_CASE("int64 matmul is exact for large values") {
  Tensor a = from_vector(std::vector<std::int64_t>{1000000007, -3, 5, 123456789}, Shape{2, 2});
  Tensor b = from_vector(std::vector<std::int64_t>{2, 1000003, -7, 11}, Shape{2, 2});
  auto v = to_vector<std::int64_t>(matmul(a, b));
  CHECK(v[0] == 1000000007LL * 2 + (-3) * (-7));
  CHECK(v[1] == 1000000007LL * 1000003 + (-3) * 11);
  CHECK(v[2] == 5 * 2 + 123456789LL * (-7));
  CHECK(v[3] == 5 * 1000003LL + 123456789LL * 11);
  // overflow wraps around (two's complement), as in PyTorch
  Tensor big = from_vector(std::vector<std::int64_t>{INT64_MAX, 1}, Shape{1, 2});
  Tensor two = from_vector(std::vector<std::int64_t>{2, 3}, Shape{2, 1});
  CHECK(to_vector<std::int64_t>(matmul(big, two))[0] == 1);  // 2 * (2^63 - 1) + 3 = 2^64 + 1
}

TEST_CASE("mm, bmm, dot, vdot, outer values") {
  manual_seed(5);
  for (Dtype dt : kAll) {
    CAPTURE(dt);
    Tensor a = rnd({3, 4}, dt), b = rnd({4, 5}, dt);
    check_ref(mm(a, b), ref_matmul(a, b), tol_for(dt));
    Tensor x = rnd({6, 3, 4}, dt), y = rnd({6, 4, 2}, dt);
    check_ref(bmm(x, y), ref_matmul(x, y), tol_for(dt));
    Tensor u = rnd({7}, dt), v = rnd({7}, dt);
    Tensor dd = dot(u, v);
    CHECK(dd.dim() == 0);
    check_ref(dd, ref_matmul(u, v), tol_for(dt));
    Tensor vd = vdot(u, v);
    check_ref(vd, ref_matmul(u.conj(), v), tol_for(dt));
    Tensor w = rnd({3}, dt);
    Tensor o = outer(u, w);
    check_ref(o, ref_matmul(u.unsqueeze(1), w.unsqueeze(0)), tol_for(dt));
  }
  // vdot conjugates its first argument
  Tensor p = from_vector(std::vector<cd>{{1, 2}, {3, -1}}), q = from_vector(std::vector<cd>{{0, 1}, {2, 2}});
  const cd got = vdot(p, q).item<cd>();
  const cd want = std::conj(cd(1, 2)) * cd(0, 1) + std::conj(cd(3, -1)) * cd(2, 2);
  CHECK(got.real() == doctest::Approx(want.real()));
  CHECK(got.imag() == doctest::Approx(want.imag()));
  const cd gd = dot(p, q).item<cd>();
  const cd wd = cd(1, 2) * cd(0, 1) + cd(3, -1) * cd(2, 2);
  CHECK(gd.real() == doctest::Approx(wd.real()));
  CHECK(gd.imag() == doctest::Approx(wd.imag()));
}

TEST_CASE("einsum values vs brute force") {
  manual_seed(6);
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"bix,iox->box", {{2, 3, 4}, {3, 5, 4}}},
      {"ii->i", {{4, 4}}},
      {"ii", {{4, 4}}},
      {"ij,jk", {{3, 4}, {4, 5}}},
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"...ij,...jk", {{2, 3, 4}, {4, 5}}},
      {"i,i->", {{6}, {6}}},
      {"i,i", {{6}, {6}}},
      {"bij->jb", {{2, 3, 4}}},
      {"ij->", {{3, 4}}},
      {"ij", {{3, 4}}},
      {"ji", {{3, 4}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}},
      {"ij,ij->ij", {{1, 4}, {3, 4}}},
      {"bi,bi->b", {{5, 4}, {5, 4}}},
      {"i,j->ij", {{3}, {4}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
      {"ij,jk,kl", {{2, 3}, {3, 4}, {4, 2}}},
      {"iij,jk->ik", {{3, 3, 4}, {4, 2}}},
      {"iji->j", {{3, 2, 3}}},
      {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
      {"abc,cd,ea->bde", {{2, 3, 4}, {4, 5}, {3, 2}}},
      {"...->", {{2, 3}}},
      {"i...->...", {{3, 2, 2}}},
      {"...ii->...i", {{2, 3, 3}}},
      {"Ab,bA->A", {{3, 4}, {4, 3}}},
      {"bA,Ab", {{2, 3}, {3, 2}}},
      {"ij,kl->", {{2, 3}, {4, 2}}},
      {"ij, jk -> ki", {{3, 2}, {2, 4}}},
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}},
      {"ij,j->i", {{4, 0}, {0}}},
      {"ij,jk->ik", {{0, 3}, {3, 2}}},
  };
  for (Dtype dt : kAll) {
    for (const auto& c : cases) {
      CAPTURE(dt);
      CAPTURE(c.eq);
      std::vector<Tensor> ops;
      for (const auto& s : c.shapes) ops.push_back(rnd(s, dt));
      std::string ref_eq;
      for (char ch : c.eq)
        if (ch != ' ') ref_eq += ch;
      Tensor r = einsum(c.eq, ops);
      CHECK(r.dtype() == dt);
      check_ref(r, ref_einsum(ref_eq, ops), tol_for(dt));
    }
  }
}

TEST_CASE("einsum matches matmul and mixed dtypes promote") {
  manual_seed(7);
  Tensor a = rnd({2, 3, 4}, float32), b = rnd({4, 5}, complex128);
  Tensor e = einsum("bij,jk->bik", {a, b});
  CHECK(e.dtype() == complex128);
  check_ref(e, ref_matmul(a, b), 2e-6);
}

// ---- gradients ------------------------------------------------------------------------------------------
namespace {
Tensor leaf(const Shape& s, Dtype dt) { return randn(s, dt).requires_grad_(); }
const std::vector<std::pair<Shape, Shape>> kGradCases = {
    {{3}, {3}},       {{3}, {3, 2}},          {{2, 3}, {3}},          {{2, 3}, {3, 4}},
    {{3}, {2, 3, 2}}, {{2, 2, 3}, {3}},       {{2, 1, 2, 3}, {3, 3, 2}}, {{2, 2, 3}, {3, 2}},
    {{2, 3}, {2, 3, 2}}, {{2, 0, 3}, {3, 2}}};
}  // namespace

TEST_CASE("matmul gradcheck, real and complex, all rank cases") {
  manual_seed(8);
  Fn1 f = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  for (Dtype dt : {float64, complex128}) {
    for (const auto& [sa, sb] : kGradCases) {
      CAPTURE(dt);
      CAPTURE(sstr(sa));
      CAPTURE(sstr(sb));
      CHECK(autodiff::gradcheck(f, {leaf(sa, dt), leaf(sb, dt)}));
    }
  }
  // mixed real / complex operands, and only one operand requiring grad
  CHECK(autodiff::gradcheck(f, {leaf({2, 3}, float64), leaf({3, 2}, complex128)}));
  CHECK(autodiff::gradcheck(f, {leaf({2, 3}, complex128), leaf({3, 2}, float64)}));
  CHECK(autodiff::gradcheck(f, {randn({2, 3}, float64), leaf({3, 2}, float64)}));
  // transposed operands (BLAS Trans path, larger than the loop-kernel cutoff)
  Fn1 ft = [](const std::vector<Tensor>& in) { return matmul(in[0].t(), in[1].t()); };
  CHECK(autodiff::gradcheck(ft, {leaf({9, 8}, complex128), leaf({9, 9}, complex128)}));
}

TEST_CASE("matmul gradgradcheck") {
  manual_seed(9);
  Fn1 f = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dt);
    CHECK(autodiff::gradgradcheck(f, {leaf({2, 3}, dt), leaf({3, 2}, dt)}));
    CHECK(autodiff::gradgradcheck(f, {leaf({3}, dt), leaf({2, 3, 2}, dt)}));
    CHECK(autodiff::gradgradcheck(f, {leaf({2, 2, 3}, dt), leaf({3}, dt)}));
    CHECK(autodiff::gradgradcheck(f, {leaf({2, 1, 2, 3}, dt), leaf({2, 3, 2}, dt)}));
    CHECK(autodiff::gradgradcheck(f, {leaf({2, 2, 3}, dt), leaf({3, 2}, dt)}));
  }
  // a nonlinear use: second derivative of sum((A x)^2) w.r.t. x is 2 A^T A (times ones)
  Tensor A = randn({3, 3}, float64), x = leaf({3}, float64);
  Tensor y = matmul(A, x);
  Tensor g = autodiff::grad({(y * y).sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor h = autodiff::grad({g.sum()}, {x})[0];
  check_ref(h, ref_matmul(2.0 * matmul(A.t(), A), ones({3}, float64)), 1e-12);
}

TEST_CASE("mm, bmm, dot, vdot, outer gradcheck") {
  manual_seed(10);
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dt);
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return mm(in[0], in[1]); },
                              {leaf({2, 3}, dt), leaf({3, 4}, dt)}));
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return bmm(in[0], in[1]); },
                              {leaf({2, 2, 3}, dt), leaf({2, 3, 2}, dt)}));
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return dot(in[0], in[1]); },
                              {leaf({4}, dt), leaf({4}, dt)}));
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return vdot(in[0], in[1]); },
                              {leaf({4}, dt), leaf({4}, dt)}));
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return outer(in[0], in[1]); },
                              {leaf({3}, dt), leaf({2}, dt)}));
  }
  CHECK(autodiff::gradgradcheck([](const std::vector<Tensor>& in) { return vdot(in[0], in[1]); },
                                {leaf({3}, complex128), leaf({3}, complex128)}));
}

TEST_CASE("einsum gradcheck and gradgradcheck") {
  manual_seed(11);
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"bix,iox->box", {{2, 2, 3}, {2, 2, 3}}},
      {"ii->i", {{3, 3}}},
      {"ii", {{3, 3}}},
      {"ij,jk", {{2, 3}, {3, 2}}},
      {"...ij,...jk->...ik", {{2, 2, 3}, {2, 3, 2}}},
      {"...ij,...jk->...ik", {{2, 1, 2, 2}, {2, 2, 2}}},
      {"i,i->", {{4}, {4}}},
      {"bij->jb", {{2, 3, 2}}},
      {"ij,ij->ij", {{1, 3}, {2, 3}}},
      {"bi,bi->b", {{2, 3}, {2, 3}}},
      {"ij,jk,kl->il", {{2, 2}, {2, 3}, {3, 2}}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},
  };
  for (Dtype dt : {float64, complex128}) {
    for (const auto& c : cases) {
      CAPTURE(dt);
      CAPTURE(c.eq);
      std::vector<Tensor> ops;
      for (const auto& s : c.shapes) ops.push_back(leaf(s, dt));
      const std::string eq = c.eq;
      CHECK(autodiff::gradcheck([eq](const std::vector<Tensor>& in) { return einsum(eq, in); }, ops));
    }
    for (const std::string eq : {"ii->i", "bix,iox->box", "...ij,...jk->...ik", "ij,ij->ij"}) {
      CAPTURE(dt);
      CAPTURE(eq);
      std::vector<Tensor> ops;
      if (eq == "ii->i") ops = {leaf({3, 3}, dt)};
      else if (eq == "bix,iox->box") ops = {leaf({2, 2, 2}, dt), leaf({2, 2, 2}, dt)};
      else if (eq == "ij,ij->ij") ops = {leaf({2, 2}, dt), leaf({2, 2}, dt)};
      else ops = {leaf({2, 2, 2}, dt), leaf({2, 2}, dt)};
      CHECK(autodiff::gradgradcheck([eq](const std::vector<Tensor>& in) { return einsum(eq, in); }, ops));
    }
  }
}

// ---- errors -----------------------------------------------------------------------------------------------
TEST_CASE("matmul family errors") {
  Tensor a34 = ones({3, 4}), a56 = ones({5, 6}), s = scalar_tensor(1.0);
  CHECK_THROWS_WITH_AS(matmul(a34, a56), "[matmul] shapes (3, 4) and (5, 6) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(matmul(ones({3}), ones({4})), "[matmul] shapes (3,) and (4,) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 3}), ones({2})), "[matmul] shapes (2, 3) and (2,) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(matmul(ones({3}), ones({2, 4, 5})), "[matmul] shapes (3,) and (2, 4, 5) cannot be multiplied",
                       Error);
  CHECK_THROWS_WITH_AS(matmul(ones({2, 3, 4}), ones({5, 4, 2})),
                       "[matmul] shapes (2, 3, 4) and (5, 4, 2) cannot be multiplied: batch dims (2,) and (5,) do not "
                       "broadcast",
                       Error);
  CHECK_THROWS_WITH_AS(matmul(s, a34), "[matmul] both arguments need at least 1 dim, got shapes () and (3, 4)", Error);
  CHECK_THROWS_WITH_AS(matmul(a34, s), "[matmul] both arguments need at least 1 dim, got shapes (3, 4) and ()", Error);
  CHECK_THROWS_AS(matmul(Tensor(), a34), Error);
  CHECK_THROWS_WITH_AS(a34.matmul(a56), "[matmul] shapes (3, 4) and (5, 6) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(mm(a34, a56), "[mm] shapes (3, 4) and (5, 6) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(mm(ones({4}), a34), "[mm] expected 2-D tensors, got shapes (4,) and (3, 4)", Error);
  CHECK_THROWS_WITH_AS(bmm(a34, a34), "[bmm] expected 3-D tensors, got shapes (3, 4) and (3, 4)", Error);
  CHECK_THROWS_WITH_AS(bmm(ones({2, 3, 4}), ones({3, 4, 5})),
                       "[bmm] shapes (2, 3, 4) and (3, 4, 5) cannot be multiplied: batch sizes 2 and 3 differ", Error);
  CHECK_THROWS_WITH_AS(bmm(ones({2, 3, 4}), ones({2, 5, 5})),
                       "[bmm] shapes (2, 3, 4) and (2, 5, 5) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(dot(ones({3}), ones({4})), "[dot] shapes (3,) and (4,) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(dot(a34, ones({4})), "[dot] expected 1-D tensors, got shapes (3, 4) and (4,)", Error);
  CHECK_THROWS_WITH_AS(vdot(ones({3}), ones({2})), "[vdot] shapes (3,) and (2,) cannot be multiplied", Error);
  CHECK_THROWS_WITH_AS(vdot(s, ones({2})), "[vdot] expected 1-D tensors, got shapes () and (2,)", Error);
  CHECK_THROWS_WITH_AS(outer(a34, ones({2})), "[outer] expected 1-D tensors, got shapes (3, 4) and (2,)", Error);
  // inputs are left unchanged
  CHECK(a34.shape() == Shape{3, 4});
  for (auto v : to_vector<float>(a34)) CHECK(v == 1.0f);
}

TEST_CASE("einsum errors") {
  Tensor a = ones({2, 3}), b = ones({4, 5}), c = ones({3, 3});
  CHECK_THROWS_WITH_AS(einsum("ij,jk", {a}),
                       "[einsum] equation \"ij,jk\" has 2 operand subscripts but 1 operands were given", Error);
  CHECK_THROWS_WITH_AS(einsum("i", {a, b}),
                       "[einsum] equation \"i\" has 1 operand subscripts but 2 operands were given", Error);
  CHECK_THROWS_WITH_AS(einsum("ijk", {a}),
                       "[einsum] operand 0 has 2 dims (shape (2, 3)) but its subscripts \"ijk\" name 3", Error);
  CHECK_THROWS_WITH_AS(einsum("ij...k", {a}),
                       "[einsum] operand 0 has 2 dims (shape (2, 3)) but its subscripts \"ij...k\" name at most 3", Error);
  CHECK_THROWS_WITH_AS(einsum("ij,jk", {a, b}), "[einsum] label 'j' has size 3 in operand 0 but size 4 in operand 1",
                       Error);
  CHECK_THROWS_WITH_AS(einsum("...i,...i", {ones({2, 3}), ones({4, 3})}),
                       "[einsum] ellipsis dim 0 has size 2 in operand 0 but size 4 in operand 1", Error);
  CHECK_THROWS_WITH_AS(einsum("ii", {a}), "[einsum] label 'i' is repeated in operand 0 with different sizes 2 and 3",
                       Error);
  CHECK_THROWS_WITH_AS(einsum("i1", {a}),
                       "[einsum] invalid character '1' in equation \"i1\"; subscripts must be letters a-z, A-Z or \"...\"",
                       Error);
  CHECK_THROWS_WITH_AS(einsum("ij->i_", {a}),
                       "[einsum] invalid character '_' in equation \"ij->i_\"; subscripts must be letters a-z, A-Z or "
                       "\"...\"",
                       Error);
  CHECK_THROWS_WITH_AS(einsum("ij->iz", {a}),
                       "[einsum] output label 'z' does not appear in the inputs of \"ij->iz\"", Error);
  CHECK_THROWS_WITH_AS(einsum("ij->ii", {a}), "[einsum] output label 'i' appears more than once in \"ij->ii\"", Error);
  CHECK_THROWS_WITH_AS(einsum("......", {a}), "[einsum] subscripts \"......\" contain more than one \"...\"", Error);
  CHECK_THROWS_WITH_AS(einsum("i.j", {a}), "[einsum] found a '.' that is not part of \"...\" in \"i.j\"", Error);
  CHECK_THROWS_WITH_AS(einsum("ij->j->i", {a}), "[einsum] equation \"ij->j->i\" has more than one \"->\"", Error);
  CHECK_THROWS_WITH_AS(einsum("", {}), "[einsum] expected at least one operand", Error);
  CHECK_THROWS_WITH_AS(einsum("ij", {Tensor()}), "[einsum] operand 0 is undefined", Error);
  CHECK_NOTHROW(einsum("ii", {c}));
  CHECK(a.shape() == Shape{2, 3});
}

// ---- linalg::solve, inv, det, slogdet (src/linalg/solve.cpp) -------------------------------------------------
namespace {

/// A reference in long double: Gaussian elimination with partial pivoting of one n x n system A X = B (row-major,
/// B n x k, overwritten with X); returns the determinant.
cld gauss(std::vector<cld> a, std::vector<cld>& b, std::int64_t n, std::int64_t k) {
  cld det = 1;
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t p = c;
    for (std::int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    if (a[p * n + c] == cld(0)) return 0;
    if (p != c) {
      det = -det;
      for (std::int64_t j = 0; j < n; ++j) std::swap(a[p * n + j], a[c * n + j]);
      for (std::int64_t j = 0; j < k; ++j) std::swap(b[p * k + j], b[c * k + j]);
    }
    det *= a[c * n + c];
    for (std::int64_t r = c + 1; r < n; ++r) {
      const cld f = a[r * n + c] / a[c * n + c];
      for (std::int64_t j = c; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
      for (std::int64_t j = 0; j < k; ++j) b[r * k + j] -= f * b[c * k + j];
    }
  }
  for (std::int64_t c = n; c-- > 0;)
    for (std::int64_t j = 0; j < k; ++j) {
      cld s = b[c * k + j];
      for (std::int64_t i = c + 1; i < n; ++i) s -= a[c * n + i] * b[i * k + j];
      b[c * k + j] = s / a[c * n + c];
    }
  return det;
}

/// max |got - want| / max(1, max |want|) over a batch of long double references.
double rel_err(const Tensor& got, const std::vector<cld>& want) {
  const auto g = values(got.to(complex128));
  REQUIRE(g.size() == want.size());
  long double d = 0, m = 1;
  for (std::size_t i = 0; i < g.size(); ++i) d = std::max(d, std::abs(g[i] - want[i])), m = std::max(m, std::abs(want[i]));
  return static_cast<double>(d / m);
}

}  // namespace

TEST_CASE("linalg::solve, inv, det and slogdet against Gaussian elimination in long double, every dtype") {
  manual_seed(31);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = (dt == float32 || dt == complex64) ? 2e-4 : 1e-11;
    const std::int64_t n = 5, k = 3;
    const Tensor a = randn({2, 3, n, n}, dt) + eye(n, std::nullopt, dt) * 2.0, b = randn({3, n, k}, dt);  // b broadcasts
    const Tensor x = linalg::solve(a, b);
    CHECK(x.shape() == Shape{2, 3, n, k});
    CHECK(x.dtype() == dt);
    const Tensor inv_a = linalg::inv(a), det_a = linalg::det(a);
    const auto [sign, logabs] = linalg::slogdet(a);
    CHECK(sign.dtype() == dt);
    CHECK(logabs.dtype() == to_real(dt));
    std::vector<cld> want_x, want_inv, want_det, want_sign, want_log;
    const auto av = values(a), bv = values(b.broadcast_to({2, 3, n, k}).contiguous());
    for (std::int64_t i = 0; i < 6; ++i) {
      std::vector<cld> ai(av.begin() + i * n * n, av.begin() + (i + 1) * n * n);
      std::vector<cld> xi(bv.begin() + i * n * k, bv.begin() + (i + 1) * n * k), id(static_cast<std::size_t>(n * n), 0);
      for (std::int64_t j = 0; j < n; ++j) id[static_cast<std::size_t>(j * n + j)] = 1;
      const cld d = gauss(ai, xi, n, k);
      (void)gauss(ai, id, n, n);
      want_x.insert(want_x.end(), xi.begin(), xi.end());
      want_inv.insert(want_inv.end(), id.begin(), id.end());
      want_det.push_back(d);
      want_sign.push_back(d / std::abs(d));
      want_log.push_back(std::log(std::abs(d)));
    }
    CHECK(rel_err(x, want_x) <= tol);
    CHECK(rel_err(inv_a, want_inv) <= tol);
    CHECK(rel_err(det_a, want_det) <= tol);
    CHECK(rel_err(sign, want_sign) <= tol);
    CHECK(rel_err(logabs, want_log) <= tol);
  }
  // vectors: B (n) and (..., n) give X of B's shape (torch's rule)
  const Tensor a = randn({2, 3, 3}, float64) + eye(3, std::nullopt, float64) * 3.0, v = randn({3}, float64), vb = randn({2, 3}, float64);
  CHECK(linalg::solve(a, v).shape() == Shape{2, 3});
  CHECK(test::vals(linalg::solve(a, vb)) == test::vals(linalg::solve(a, vb.unsqueeze(-1)).squeeze(-1)));
  CHECK(allclose(matmul(a, linalg::solve(a, v).unsqueeze(-1)).squeeze(-1), v.broadcast_to({2, 3})));
  // closed forms: a permutation, a triangular matrix, a 2 x 2, dtype promotion
  CHECK(linalg::det(from_vector(std::vector<double>{0, 1, 0, 0, 0, 1, 1, 0, 0}).reshape({3, 3})).item<double>() == 1.0);
  CHECK(linalg::det(from_vector(std::vector<double>{0, 1, 1, 0}).reshape({2, 2})).item<double>() == -1.0);
  CHECK(linalg::det(from_vector(std::vector<double>{2, 7, -1, 0, 3, 5, 0, 0, -4}).reshape({3, 3})).item<double>() == doctest::Approx(-24.0));
  const Tensor m = from_vector(std::vector<double>{4, 7, 2, 6}).reshape({2, 2});
  CHECK(allclose(linalg::inv(m), from_vector(std::vector<double>{0.6, -0.7, -0.2, 0.4}).reshape({2, 2}), 1e-15, 1e-15));
  CHECK(linalg::solve(m, from_vector(std::vector<float>{1, 2})).dtype() == float64);
  // singular: det 0, slogdet (0, -inf); zero-size matrices: det 1
  const Tensor s = from_vector(std::vector<double>{1, 2, 2, 4}).reshape({2, 2});
  CHECK(linalg::det(s).item<double>() == 0.0);
  CHECK(linalg::slogdet(s).first.item<double>() == 0.0);
  CHECK(std::isinf(linalg::slogdet(s).second.item<double>()));
  CHECK(linalg::det(zeros({3, 0, 0}, float64)).shape() == Shape{3});
  CHECK(test::vals(linalg::det(zeros({3, 0, 0}, float64))) == std::vector<double>{1, 1, 1});
  CHECK(linalg::solve(zeros({0, 0}, float64), zeros({0, 2}, float64)).shape() == Shape{0, 2});
}

TEST_CASE("linalg::solve, inv, det and slogdet: gradients (gradcheck, gradgradcheck), real and complex") {
  manual_seed(32);
  const auto well = [](const Shape& s, Dtype dt) {  // a well-conditioned leaf
    return (randn(s, dt) * 0.3 + eye(s.back(), std::nullopt, dt)).detach().requires_grad_();
  };
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Fn1 solve_f = [](const std::vector<Tensor>& in) { return linalg::solve(in[0], in[1]); };
    CHECK(autodiff::gradcheck(solve_f, {well({2, 3, 3}, dt), leaf({3, 2}, dt)}));
    CHECK(autodiff::gradgradcheck(solve_f, {well({3, 3}, dt), leaf({3}, dt)}));
    const Fn1 inv_f = [](const std::vector<Tensor>& in) { return linalg::inv(in[0]); };
    CHECK(autodiff::gradcheck(inv_f, {well({2, 3, 3}, dt)}));
    CHECK(autodiff::gradgradcheck(inv_f, {well({3, 3}, dt)}));
    const Fn1 det_f = [](const std::vector<Tensor>& in) { return linalg::det(in[0]); };
    CHECK(autodiff::gradcheck(det_f, {well({2, 4, 4}, dt)}));
    CHECK(autodiff::gradgradcheck(det_f, {well({3, 3}, dt)}));
    const Fn1 logabs_f = [](const std::vector<Tensor>& in) { return linalg::slogdet(in[0]).second; };
    CHECK(autodiff::gradcheck(logabs_f, {well({2, 3, 3}, dt)}));
    if (dt == complex128) {
      const Fn1 sign_f = [](const std::vector<Tensor>& in) { return linalg::slogdet(in[0]).first; };
      CHECK(autodiff::gradcheck(sign_f, {well({2, 3, 3}, dt)}));
    }
  }
}

TEST_CASE("linalg::cholesky: L L^H gives A back, L lower with a real positive diagonal; gradients; errors") {
  manual_seed(33);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = (dt == float32 || dt == complex64) ? 1e-5 : 1e-13;
    const Tensor x = randn({2, 3, 5, 5}, dt);
    const Tensor a = matmul(x, x.transpose(-1, -2).conj()) + eye(5, std::nullopt, dt) * 5.0;
    const Tensor l = linalg::cholesky(a);
    CHECK(l.shape() == a.shape());
    CHECK(l.dtype() == dt);
    const Tensor back = matmul(l, l.transpose(-1, -2).conj());
    CHECK((back - a).abs().max().item<double>() <= tol * a.abs().max().item<double>());
    CHECK((l - tril(l)).abs().max().item<double>() == 0.0);
    const Tensor d = l.diagonal(0, -2, -1);
    CHECK(real(d).min().item<double>() > 0.0);
    if (is_complex(dt)) CHECK(imag(d).abs().max().item<double>() == 0.0);
    // only the lower triangle is read
    CHECK(test::vals(linalg::cholesky(tril(a)).to(complex128)) == test::vals(l.to(complex128)));
  }
  // a closed form: [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]
  CHECK(test::vals(linalg::cholesky(from_vector(std::vector<double>{4, 2, 2, 5}).reshape({2, 2}))) == std::vector<double>{2, 0, 1, 2});
  for (Dtype dt : {float64, complex128}) {
    CAPTURE(dtype_name(dt));
    const Fn1 f = [](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      return linalg::cholesky(matmul(x, x.transpose(-1, -2).conj()) + eye(3, std::nullopt, x.dtype()) * 3.0);
    };
    CHECK(autodiff::gradcheck(f, {leaf({2, 3, 3}, dt)}));
    CHECK(autodiff::gradgradcheck(f, {leaf({3, 3}, dt)}));
  }
  Tensor batch = eye(2, std::nullopt, float64).expand({3, 2, 2}).contiguous();
  batch.select(0, 2).select(0, 1).select(0, 1).fill_(-1.0);
  CHECK_THROWS_WITH_AS(linalg::cholesky(batch), "[linalg_cholesky] the matrix at batch index (2,) is not positive-definite: its leading minor of order 2 is not positive", Error);
  CHECK_THROWS_WITH_AS(linalg::cholesky(ones({2, 3}, float64)), "[linalg_cholesky] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
}

TEST_CASE("linalg::solve_triangular: upper, lower, unit diagonal, from the right; gradients; errors") {
  manual_seed(34);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = (dt == float32 || dt == complex64) ? 1e-4 : 1e-12;
    const Tensor a = randn({2, 1, 4, 4}, dt) + eye(4, std::nullopt, dt) * 4.0, b = randn({3, 4, 2}, dt);
    for (bool upper : {true, false}) {
      CAPTURE(upper);
      const Tensor t = upper ? triu(a) : tril(a);
      const Tensor x = linalg::solve_triangular(a, b, upper);  // only the triangle is read
      CHECK(x.shape() == Shape{2, 3, 4, 2});
      CHECK((x - linalg::solve(t, b)).abs().max().item<double>() <= tol);
      // from the right: X A = B
      const Tensor br = randn({2, 4}, dt);
      const Tensor xr = linalg::solve_triangular(a, br, upper, false);
      CHECK((matmul(xr, t) - br).abs().max().item<double>() <= tol * 10);
      // a unit diagonal: the diagonal is not read
      const Tensor u = t - diag_embed(t.diagonal(0, -2, -1) - 1.0);
      CHECK((linalg::solve_triangular(a, b, upper, true, true) - linalg::solve(u, b)).abs().max().item<double>() <= tol);
    }
  }
  for (Dtype dt : {float64, complex128})
    for (bool upper : {true, false})
      for (bool left : {true, false})
        for (bool unit : {false, true}) {
          CAPTURE(upper);
          CAPTURE(left);
          CAPTURE(unit);
          const Fn1 f = [=](const std::vector<Tensor>& in) { return linalg::solve_triangular(in[0], in[1], upper, left, unit); };
          const Tensor a = (randn({2, 3, 3}, dt) * 0.3 + eye(3, std::nullopt, dt) * 2.0).detach().requires_grad_();
          CHECK(autodiff::gradcheck(f, {a, leaf(left ? Shape{3, 2} : Shape{2, 3}, dt)}));
          if (!unit && left) CHECK(autodiff::gradgradcheck(f, {a, leaf({3, 2}, dt)}));
        }
  Tensor z = eye(3, std::nullopt, float64).expand({2, 3, 3}).contiguous();
  z.select(0, 1).select(0, 2).select(0, 2).fill_(0.0);
  CHECK_THROWS_WITH_AS(linalg::solve_triangular(z, ones({3, 1}, float64), true),
                       "[linalg_solve_triangular] the matrix at batch index (1,) is singular: its diagonal element 2 is zero", Error);
  CHECK_NOTHROW(linalg::solve_triangular(z, ones({3, 1}, float64), true, true, true));  // the diagonal is not read
  CHECK_THROWS_WITH_AS(linalg::solve_triangular(eye(3, std::nullopt, float64), ones({3}, float64), true),
                       "[linalg_solve_triangular] B must be a batch of matrices (..., n, k), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::solve_triangular(eye(3, std::nullopt, float64), ones({2, 3}, float64), true),
                       "[linalg_solve_triangular] B of shape (2, 3) does not match A of shape (3, 3) (B must be (..., 3, k))", Error);
}

TEST_CASE("linalg::solve, inv, det and slogdet: errors") {
  const Tensor a = eye(3, std::nullopt, float64);
  CHECK_THROWS_WITH_AS(linalg::solve(ones({2, 3}, float64), ones({2}, float64)), "[linalg_solve] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::inv(ones({3}, float64)), "[linalg_inv] A must be a batch of square matrices (..., n, n), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::det(ones({2, 2}, int64)), "[linalg_det] A must be a floating or complex tensor, got int64", Error);
  CHECK_THROWS_WITH_AS(linalg::slogdet(ones({2, 3, 2}, float64)), doctest::Contains("[linalg_slogdet] A must be a batch of square matrices"), Error);
  CHECK_THROWS_WITH_AS(linalg::solve(a, ones({4, 2}, float64)),
                       "[linalg_solve] B of shape (4, 2) does not match A of shape (3, 3) (B must be (..., 3, k) or (..., 3))", Error);
  CHECK_THROWS_WITH_AS(linalg::solve(ones({2, 3, 3}, float64), ones({4, 3, 1}, float64)), doctest::Contains("[linalg_solve] shapes (2,) and (4,) cannot be broadcast"), Error);
  // a singular matrix: solve and inv name it
  Tensor batch = eye(2, std::nullopt, float64).expand({2, 3, 2, 2}).contiguous();
  batch.select(0, 1).select(0, 2).zero_();
  CHECK_THROWS_WITH_AS(linalg::inv(batch), "[linalg_solve] the matrix at batch index (1, 2) is singular: its LU factorization has a zero pivot", Error);
  CHECK_THROWS_WITH_AS(linalg::solve(zeros({2, 2}, float64), ones({2}, float64)), doctest::Contains("[linalg_solve] the matrix is singular"), Error);
  // slogdet's gradient at a singular matrix
  const Tensor s = from_vector(std::vector<double>{1, 2, 2, 4}).reshape({2, 2}).requires_grad_();
  CHECK_THROWS_WITH_AS(linalg::slogdet(s).second.backward(), doctest::Contains("[linalg_slogdet] the gradient at a singular matrix"), Error);
}

TEST_CASE("linalg solve_ex, inv_ex, cholesky_ex: info flags instead of errors; results where the matrix is fine") {
  // a batch of three: the second singular (a zero row), the others fine
  Tensor a = randn({3, 4, 4}, float64) * 0.2 + eye(4, std::nullopt, float64) * 2.0;
  a.select(0, 1).select(0, 2).zero_();
  const Tensor b = randn({3, 4, 2}, float64);
  const auto [x, info] = linalg::solve_ex(a, b);
  CHECK(info.dtype() == int64);
  CHECK(info.shape() == Shape{3});
  const auto flags = to_vector<std::int64_t>(info);
  CHECK(flags[0] == 0);
  CHECK(flags[1] > 0);
  CHECK(flags[2] == 0);
  for (std::int64_t i : {0, 2})
    CHECK((x.select(0, i) - linalg::solve(a.select(0, i), b.select(0, i))).abs().max().item<double>() == 0);
  CHECK_THROWS_WITH_AS(linalg::solve(a, b), doctest::Contains("the matrix at batch index (1,) is singular"), Error);
  // a vector right-hand side and broadcasting: info has the broadcast batch shape
  CHECK(linalg::solve_ex(a.select(0, 0), b.select(0, 0).select(1, 0)).second.shape() == Shape{});
  CHECK(linalg::solve_ex(a.select(0, 0), randn({5, 4, 1}, float64)).second.shape() == Shape{5});
  const auto [ai, iinfo] = linalg::inv_ex(a);
  CHECK(to_vector<std::int64_t>(iinfo) == flags);
  CHECK((matmul(a.select(0, 2), ai.select(0, 2)) - eye(4, std::nullopt, float64)).abs().max().item<double>() <= 1e-12);
  // cholesky: the leading minor of order 3 of the first matrix is not positive
  const Tensor g = randn({2, 4, 4}, float64);
  Tensor h = matmul(g, g.transpose(-1, -2)) + eye(4, std::nullopt, float64);
  h.select(0, 0).select(0, 2).select(0, 2).fill_(-1.0);
  const auto [l, cinfo] = linalg::cholesky_ex(h);
  CHECK(to_vector<std::int64_t>(cinfo) == std::vector<std::int64_t>{3, 0});
  CHECK((l.select(0, 1) - linalg::cholesky(h.select(0, 1))).abs().max().item<double>() == 0);
  // the results differentiate as the checked ops' do
  const Tensor w = (randn({3, 3}, float64) * 0.2 + eye(3, std::nullopt, float64) * 2.0).requires_grad_();
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return linalg::solve_ex(in[0], in[1]).first; },
                            {w, randn({3, 2}, float64).requires_grad_()}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) {
    return linalg::cholesky_ex(matmul(in[0], in[0].t()) + eye(3, std::nullopt, float64)).first;
  }, {w}));
  // shapes are still checked
  CHECK_THROWS_WITH_AS(linalg::cholesky_ex(ones({2, 3})), "[linalg_cholesky_ex] A must be a batch of square matrices (..., n, n), got shape (2, 3)", Error);
  CHECK_THROWS_WITH_AS(linalg::inv_ex(ones({3})), "[linalg_inv_ex] A must be a batch of square matrices (..., n, n), got shape (3,)", Error);
  CHECK_THROWS_WITH_AS(linalg::solve_ex(eye(2, std::nullopt, float64), ones({3})),
                       doctest::Contains("[linalg_solve_ex] B of shape (3,) does not match A of shape (2, 2)"), Error);
}

TEST_CASE("linalg::solve and solve_ex with left = false (X A = B); cholesky and cholesky_ex with upper = true") {
  manual_seed(35);
  for (Dtype dt : {float32, float64, complex64, complex128}) {
    CAPTURE(dtype_name(dt));
    const double tol = (dt == float32 || dt == complex64) ? 1e-4 : 1e-12;
    const Tensor a = randn({2, 1, 4, 4}, dt) + eye(4, std::nullopt, dt) * 4.0;
    const Tensor b = randn({3, 2, 4}, dt);  // (..., k, n): 2 rows of 4
    const Tensor x = linalg::solve(a, b, false);
    CHECK(x.shape() == Shape{2, 3, 2, 4});
    CHECK((matmul(x, a) - b).abs().max().item<double>() <= tol);
    CHECK((linalg::solve_ex(a, b, false).first - x).abs().max().item<double>() == 0.0);
    // a vector is a row: x A = b
    const Tensor v = randn({4}, dt);
    const Tensor xv = linalg::solve(a.select(0, 0).select(0, 0), v, false);
    CHECK(xv.shape() == Shape{4});
    CHECK((matmul(xv, a.select(0, 0).select(0, 0)) - v).abs().max().item<double>() <= tol);
    // the upper factor is the lower one's adjoint and reads A's upper triangle
    const Tensor g = randn({2, 4, 4}, dt);
    const Tensor h = matmul(g, g.transpose(-1, -2).conj()) + eye(4, std::nullopt, dt) * 4.0;
    const Tensor u = linalg::cholesky(h, true);
    CHECK((u - triu(u)).abs().max().item<double>() == 0.0);
    CHECK((matmul(u.transpose(-1, -2).conj(), u) - h).abs().max().item<double>() <= tol * 10);
    CHECK((u - linalg::cholesky(h).transpose(-1, -2).conj()).abs().max().item<double>() <= tol);
    CHECK((linalg::cholesky(triu(h), true) - u).abs().max().item<double>() == 0.0);
    const auto [ue, info] = linalg::cholesky_ex(triu(h), true);
    CHECK((ue - u).abs().max().item<double>() == 0.0);
    CHECK(test::ivals(info) == std::vector<std::int64_t>{0, 0});
  }
  for (Dtype dt : {float64, complex128}) {
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return linalg::solve(in[0], in[1], false); },
                              {(randn({3, 3}, dt) + eye(3, std::nullopt, dt) * 3.0).requires_grad_(), leaf({2, 3}, dt)}));
    CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      return linalg::cholesky(matmul(x, x.transpose(-1, -2).conj()) + eye(3, std::nullopt, x.dtype()) * 3.0, true);
    }, {leaf({3, 3}, dt)}));
  }
  CHECK_THROWS_WITH_AS(linalg::solve(eye(3, std::nullopt, float64), ones({3, 2}, float64), false),
                       "[linalg_solve] B of shape (3, 2) does not match A of shape (3, 3) (B must be (..., k, 3) or (..., 3) with left = false)", Error);
}
