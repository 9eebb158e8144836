// tests/test_quantile.cpp - what reads a sort: msort, kthvalue, median, nanmedian, quantile, nanquantile
// (values and indices against a stable sort of (NaN flag, value, position) per line, quantiles against the
// interpolation written out in long double), and searchsorted / bucketize against std::lower_bound and
// std::upper_bound; dims, keepdim, layouts, NaN, errors and gradients.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

/// The positions of a line in ascending stable order, NaN last.
std::vector<std::int64_t> ascending(const std::vector<double>& v) {
  std::vector<std::int64_t> p(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) p[i] = static_cast<std::int64_t>(i);
  std::stable_sort(p.begin(), p.end(), [&](std::int64_t a, std::int64_t b) {
    const double x = v[static_cast<std::size_t>(a)], y = v[static_cast<std::size_t>(b)];
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x < y;
  });
  return p;
}

/// Checks (values, indices) of a rank-picking op along dim d: index = ascending(line)[rank(line)].
template <class Rank>
void check_rank_op(const Tensor& x, std::int64_t d, const Tensor& values, const Tensor& indices, Rank rank) {
  std::vector<std::int64_t> want;
  for (const auto& line : lines_of(x, d)) want.push_back(ascending(line)[static_cast<std::size_t>(rank(line))]);
  CHECK(ivals(indices) == want);
  // the values are x at the indices
  CHECK(vals(values.to(float64)).size() == want.size());
  const Tensor at = gather(x.to(float64), d, indices.unsqueeze(d)).squeeze(d);
  const auto a = vals(at), b = vals(values.to(float64));
  int bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) bad += !(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])));
  CHECK(bad == 0);
}

/// median's rank in a line: its first NaN (position n - #NaN) when it has one, else (n - 1) / 2.
std::int64_t median_rank(const std::vector<double>& l) {
  const auto nans = std::count_if(l.begin(), l.end(), [](double v) { return std::isnan(v); });
  return nans ? static_cast<std::int64_t>(l.size()) - nans : (static_cast<std::int64_t>(l.size()) - 1) / 2;
}

/// nanmedian's rank in a line: (c - 1) / 2 of its c numbers (0 for none).
std::int64_t nanmedian_rank(const std::vector<double>& l) {
  const auto c = std::count_if(l.begin(), l.end(), [](double v) { return !std::isnan(v); });
  return c == 0 ? std::int64_t{0} : (c - 1) / 2;
}

/// kthvalue at each k, median and nanmedian of x along d against the stable sort (check_rank_op).
void check_rank_ops(const Tensor& x, std::int64_t d, const std::vector<std::int64_t>& ks) {
  for (std::int64_t k : ks) {
    const auto [v, i] = kthvalue(x, k, d);
    check_rank_op(x, d, v, i, [k](const std::vector<double>&) { return k - 1; });
  }
  const auto [mv, mi] = median(x, d);
  check_rank_op(x, d, mv, mi, median_rank);
  const auto [nv, ni] = x.nanmedian(d);
  check_rank_op(x, d, nv, ni, nanmedian_rank);
}

/// True when a and b hold the same values (NaN matching NaN).
bool same_or_nan(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  const auto x = vals(a.to(float64)), y = vals(b.to(float64));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

/// torch.quantile of one line in long double (the position q (n - 1) in double, as the op).
double ref_quantile(const std::vector<double>& line, double q, const std::string& how, bool ignore_nan) {
  std::vector<double> num;
  for (double v : line)
    if (!std::isnan(v)) num.push_back(v);
  if (num.empty() || (!ignore_nan && num.size() < line.size())) return kNaN;
  std::sort(num.begin(), num.end());
  const double r = q * static_cast<double>(num.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(r)), hi = static_cast<std::size_t>(std::ceil(r));
  if (how == "lower") return num[lo];
  if (how == "higher") return num[hi];
  if (how == "nearest") return num[static_cast<std::size_t>(std::nearbyint(r))];
  const long double a = num[lo], b = num[hi], w = how == "midpoint" ? 0.5L : static_cast<long double>(r) - lo;
  return static_cast<double>(a + (b - a) * w);
}

}  // namespace

TEST_CASE("kthvalue, median, nanmedian, msort: values and indices against a stable sort, dims, keepdim, NaN") {
  manual_seed(51);
  for (Dtype dt : {float64, float32, int64}) {
    CAPTURE(dt);
    Tensor x = (randn({5, 8, 7}) * 2.0).round();  // ties
    if (dt != int64) x = where(rand({5, 8, 7}) < 0.08, full({}, kNaN), x);
    x = x.to(dt);
    for (const Tensor& in : {x, x.transpose(0, 2)})
      for (std::int64_t d : {0, 1, 2}) {
        CAPTURE(d);
        const std::int64_t n = in.size(d);
        check_rank_ops(in, d, {1, n / 2, n});
        const auto [mv, mi] = median(in, d);
        const auto [kv, ki] = median(in, d, true);
        CHECK(kv.dim() == 3);
        CHECK(kv.size(d) == 1);
        CHECK(ivals(ki.squeeze(d)) == ivals(mi));
      }
  }
  // whole-tensor forms and hand-checked cases
  CHECK(median(vec({3, 1, 4, 1, 5, 9})).item<double>() == 3);  // lower median
  CHECK(vec({3, 1, 4, 1, 5}).median().item<double>() == 3);
  CHECK(std::isnan(median(vec({3, kNaN, 4})).item<double>()));
  CHECK(nanmedian(vec({3, kNaN, 4, 1})).item<double>() == 3);
  CHECK(std::isnan(nanmedian(vec({kNaN, kNaN})).item<double>()));
  CHECK(std::isnan(median(zeros({0})).item<double>()));
  CHECK(median(from_vector(std::vector<std::int64_t>{7, 2, 9, 4})).item<std::int64_t>() == 4);
  const auto [av, ai] = median(from_vector(std::vector<double>{2, kNaN, 1, kNaN}, Shape{1, 4}), 1);
  CHECK(std::isnan(av.item<double>()));
  CHECK(ai.item<std::int64_t>() == 1);  // the first NaN
  const auto [kv, ki] = kthvalue(vec({5, 1, 5, 3}), 3);
  CHECK(kv.item<double>() == 5);
  CHECK(ki.item<std::int64_t>() == 0);  // stable: the first 5
  CHECK(std::get<0>(kthvalue(scalar_tensor(2.5), 1)).item<double>() == 2.5);
  CHECK(std::get<1>(median(scalar_tensor(2.5), 0)).item<std::int64_t>() == 0);
  CHECK(vals(msort(from_vector(std::vector<double>{3, 1, 2, 0}, Shape{2, 2}))) == std::vector<double>{2, 0, 3, 1});
  CHECK(seq({3, 2}).msort().shape() == Shape{3, 2});
}

TEST_CASE("kthvalue, median, nanmedian of long lines (the CPU's radix selection): the stable sort's element, -0 and +0 tied") {
  manual_seed(57);
  for (Dtype dt : {float32, float64, int64}) {
    CAPTURE(dt);
    Tensor x = (randn({3, 2000}) * 3.0).round();  // heavy ties; rounding small negatives gives -0
    if (dt != int64) x = where(rand({3, 2000}) < 0.05, full({}, kNaN), x);
    x = x.to(dt);
    for (const Tensor& in : {x, x.t()}) {
      check_rank_ops(in, in.size(0) == 3 ? 1 : 0, {1, 777, 2000});
    }
  }
  // the whole tensor's median: the element of rank (n - 1) / 2 with ties in input order (-0 before +0 here)
  std::vector<double> z(1001, 0.0);
  for (std::size_t i = 0; i < z.size(); i += 2) z[i] = -0.0;
  for (std::size_t i = 0; i < 300; ++i) z[i] = -1.0 - static_cast<double>(i), z[z.size() - 1 - i] = 5.0;
  const auto [zv, zi] = median(from_vector(z), 0);
  CHECK(zi.item<std::int64_t>() == 500);  // ranks 300..700 are the zeros in input order: 300 + 200 is position 500
  CHECK(std::signbit(zv.item<double>()));
}

TEST_CASE("quantile and nanquantile against the interpolation written out, every mode, dims, keepdim, q shapes") {
  manual_seed(52);
  const std::vector<double> qs{0, 0.1, 0.25, 0.5, 0.73, 0.875, 1};
  const Tensor qt = from_vector(qs);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    Tensor x = randn({4, 9, 6});
    const Tensor r = rand({4, 9, 6});
    x = where(r < 0.04, full({}, kNaN), x).to(dt);
    x = where(r > 0.9, x.round(), x);  // some ties
    for (const std::string how : {"linear", "lower", "higher", "midpoint", "nearest"})
      for (bool ignore_nan : {false, true})
        for (std::int64_t d : {0, 1, 2}) {
          CAPTURE(how);
          CAPTURE(ignore_nan);
          CAPTURE(d);
          const Tensor y = ignore_nan ? nanquantile(x, qt, d, false, how) : quantile(x, qt, d, false, how);
          CHECK(y.dtype() == dt);
          Shape want_shape{static_cast<std::int64_t>(qs.size())};
          for (std::int64_t i = 0; i < 3; ++i)
            if (i != d) want_shape.push_back(x.size(i));
          REQUIRE(y.shape() == want_shape);
          std::vector<double> want;
          for (double q : qs)
            for (const auto& line : lines_of(x, d)) want.push_back(ref_quantile(line, q, how, ignore_nan));
          const auto got = vals(y.to(float64));
          int bad = 0;
          for (std::size_t i = 0; i < want.size(); ++i) {
            const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
            if (!both_nan && !(std::abs(got[i] - want[i]) <= (dt == float32 ? 1e-6 : 1e-14) * (1 + std::abs(want[i])))) ++bad;
          }
          CHECK(bad == 0);
          // keepdim and a strided input give the same numbers
          const Tensor yk = ignore_nan ? nanquantile(x.transpose(0, 2), qt, 2 - d, true, how)
                                       : quantile(x.transpose(0, 2), qt, 2 - d, true, how);
          CHECK(yk.dim() == 4);
          CHECK(yk.size(1 + (2 - d)) == 1);
          CHECK(same_or_nan(yk.squeeze(1 + (2 - d)), y.transpose(1, 2)));
        }
  }
  // whole-tensor, scalar q, 0-d q, keepdim without a dim; hand-checked values
  const Tensor v = vec({1, 2, 3, 4});
  CHECK(quantile(v, 0.5).item<double>() == 2.5);
  CHECK(quantile(v, 0.5, std::nullopt, false, "lower").item<double>() == 2);
  CHECK(quantile(v, 0.5, std::nullopt, false, "higher").item<double>() == 3);
  CHECK(quantile(v, 0.5, std::nullopt, false, "midpoint").item<double>() == 2.5);
  CHECK(quantile(vec({1, 2, 3, 4, 5}), 0.625, std::nullopt, false, "nearest").item<double>() == 3);  // 2.5 -> 2 (even)
  CHECK(quantile(vec({1, 2, 3, 4, 5}), 0.875, std::nullopt, false, "nearest").item<double>() == 5);  // 3.5 -> 4 (even)
  CHECK(quantile(vec({1, 2, 3, 4, 5, 6}), 0.5, std::nullopt, false, "nearest").item<double>() == 3);  // 2.5 -> 2 (even)
  CHECK(quantile(v, scalar_tensor(0.25)).shape() == Shape{});
  CHECK(quantile(seq({2, 3}), vec({0.5, 1}), std::nullopt, true).shape() == Shape{2, 1, 1});
  CHECK(quantile(seq({2, 3}), 0.5, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(seq({2, 3}).quantile(0.5, 1).shape() == Shape{2});
  CHECK(std::isnan(quantile(vec({1, kNaN}), 0.0).item<double>()));
  CHECK(nanquantile(vec({1, kNaN, 3}), 0.5).item<double>() == 2);
  CHECK(vec({1, kNaN, 3}).nanquantile(vec({0, 1})).shape() == Shape{2});
  CHECK(std::isnan(nanquantile(vec({kNaN, kNaN}), 0.3).item<double>()));
  CHECK(quantile(scalar_tensor(4.0), 0.3, 0).item<double>() == 4);
}

TEST_CASE("quantile, median, kthvalue: errors and gradients") {
  const Tensor x = seq({2, 3});
  CHECK_THROWS_WITH_AS(quantile(x, 1.5), Contains("[quantile] q must lie in [0, 1], got 1.5"), Error);
  CHECK_THROWS_WITH_AS(nanquantile(x, -0.1), Contains("[nanquantile] q must lie in [0, 1], got -0.1"), Error);
  CHECK_THROWS_WITH_AS(quantile(x, vec({0.5, 2, 3})), Contains("[quantile] q values must lie in [0, 1], got 2"), Error);
  CHECK_THROWS_WITH_AS(quantile(x, vec({kNaN})), Contains("[quantile] q values must lie in [0, 1], got nan"), Error);
  CHECK_THROWS_WITH_AS(quantile(x, seq({2, 2})), Contains("[quantile] q must be a 0-d or 1-d float32 or float64 tensor, got float64 of shape (2, 2)"), Error);
  CHECK_THROWS_WITH_AS(quantile(x, seq({2}, int64)), Contains("[quantile] q must be a 0-d or 1-d"), Error);
  CHECK_THROWS_WITH_AS(quantile(seq({3}, int64), 0.5), Contains("[quantile] expected a float32 or float64 input, got int64"), Error);
  CHECK_THROWS_WITH_AS(quantile(x, 0.5, 0, false, "cubic"), Contains("[quantile] interpolation must be \"linear\""), Error);
  CHECK_THROWS_WITH_AS(quantile(x, 0.5, 2), Contains("[quantile] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(quantile(zeros({0}), 0.5), Contains("[quantile] input is empty along the reduced dim (shape (0,))"), Error);
  CHECK_THROWS_WITH_AS(median(zeros({2, 0}), 1), Contains("[median] cannot take the median over dim 1 of size 0 (shape (2, 0))"), Error);
  CHECK_THROWS_WITH_AS(median(zeros({0}, int64)), Contains("[median] cannot take the median of an empty int64 tensor"), Error);
  const Tensor c = from_vector(std::vector<std::complex<double>>{{1, 1}, {0, 1}});
  CHECK_THROWS_WITH_AS(median(c), Contains("[median] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(nanmedian(c, 0), Contains("[nanmedian] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(kthvalue(x, 4, 1), Contains("[kthvalue] k (4) out of range [1, 3] for dim 1 (shape (2, 3))"), Error);
  CHECK_THROWS_WITH_AS(kthvalue(x, 0), Contains("[kthvalue] k (0) out of range"), Error);
  CHECK_THROWS_WITH_AS(kthvalue(c, 1), Contains("[kthvalue] not supported for complex"), Error);
  // gradients reach the picked elements (linear quantile: split by the weights)
  Tensor g = vec({4, 1, 3, 2}).requires_grad_();
  quantile(g, 0.5).backward();  // position 1.5 between 2 (index 3) and 3 (index 2)
  CHECK(vals(g.grad()) == std::vector<double>{0, 0, 0.5, 0.5});
  manual_seed(53);
  CHECK(autodiff::gradcheck([](const V& in) { return quantile(in[0], vec({0.1, 0.5, 0.9}), 1); }, {leaf64({3, 6})}));
  CHECK(autodiff::gradcheck([](const V& in) { return nanquantile(in[0], 0.3, 0, true, "midpoint"); }, {leaf64({5, 2})}));
  CHECK(autodiff::gradcheck([](const V& in) { return std::get<0>(median(in[0], 0)); }, {leaf64({5, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return nanmedian(in[0]); }, {leaf64({4, 3})}));
  CHECK(autodiff::gradcheck([](const V& in) { return std::get<0>(kthvalue(in[0], 2, 1, true)); }, {leaf64({3, 4})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return quantile(in[0] * in[0], 0.4, 1); }, {leaf64({3, 5})}));
}

TEST_CASE("searchsorted of many values (the CPU's merge of sorted values) against lower_bound / upper_bound, NaN, -0") {
  manual_seed(58);
  // the order of Note [sort order] for the reference: NaN after every number, -0 equal to +0
  const auto before = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? !std::isnan(a) && std::isnan(b) : a < b; };
  for (Dtype dt : {float64, float32, int64}) {
    CAPTURE(dt);
    Tensor seq1 = (randn({3000}) * 20.0).round();  // ties, -0 and +0
    Tensor v = (randn({2, 2600}) * 25.0).round();
    if (dt != int64) {
      seq1 = where(rand({3000}) < 0.02, full({}, kNaN), seq1);
      v = where(rand({2, 2600}) < 0.02, full({}, kNaN), v);
    }
    seq1 = std::get<0>(sort(seq1)).to(dt);
    v = v.to(dt);
    const auto s = vals(seq1.to(float64));
    for (bool right : {false, true}) {
      std::vector<std::int64_t> want;
      for (double x : vals(v.to(float64)))
        want.push_back(right ? std::upper_bound(s.begin(), s.end(), x, before) - s.begin()
                             : std::lower_bound(s.begin(), s.end(), x, before) - s.begin());
      CHECK(ivals(searchsorted(seq1, v, right)) == want);
      CHECK(ivals(searchsorted(seq1, v.t(), right)) == ivals(searchsorted(seq1, v, right).t().contiguous()));
    }
    // batched: each row of values merges with its own row
    const Tensor sb = std::get<0>(sort((randn({3, 700}) * 9.0).round(), 1)).to(dt);
    const Tensor vb = ((randn({3, 900}) * 10.0).round()).to(dt);
    const Tensor gb = searchsorted(sb, vb, true);
    for (std::int64_t r = 0; r < 3; ++r) {
      const auto row = vals(sb.select(0, r).to(float64));
      std::vector<std::int64_t> want;
      for (double x : vals(vb.select(0, r).to(float64))) want.push_back(std::upper_bound(row.begin(), row.end(), x, before) - row.begin());
      CHECK(ivals(gb.select(0, r)) == want);
    }
  }
}

TEST_CASE("searchsorted and bucketize against lower_bound / upper_bound, batched sequences, sorter, NaN") {
  manual_seed(54);
  for (Dtype dt : {float64, float32, int64}) {
    CAPTURE(dt);
    const Tensor seq1 = std::get<0>(sort((randn({40}) * 4.0).round())).to(dt);  // ties
    const Tensor v = ((randn({3, 50}) * 5.0).round()).to(dt);
    const auto s = vals(seq1.to(float64));
    for (bool right : {false, true}) {
      const Tensor got = searchsorted(seq1, v, right);
      CHECK(got.dtype() == int64);
      CHECK(got.shape() == v.shape());
      std::vector<std::int64_t> want;
      for (double x : vals(v.to(float64)))
        want.push_back(right ? std::upper_bound(s.begin(), s.end(), x) - s.begin() : std::lower_bound(s.begin(), s.end(), x) - s.begin());
      CHECK(ivals(got) == want);
      CHECK(ivals(searchsorted(seq1, v, false, right ? "right" : "left")) == want);
      CHECK(ivals(bucketize(v, seq1, right)) == want);
      CHECK(ivals(searchsorted(seq1, v.t(), right)) == ivals(got.t().contiguous()));  // strided values
    }
    // batched: each row of values searches its own row
    const Tensor sb = std::get<0>(sort(randn({4, 30}) * 3.0, 1)).to(dt);
    const Tensor vb = (randn({4, 11}) * 3.0).to(dt);
    const Tensor gb = searchsorted(sb, vb, true);
    for (std::int64_t r = 0; r < 4; ++r) CHECK(ivals(gb.select(0, r)) == ivals(searchsorted(sb.select(0, r), vb.select(0, r), true)));
  }
  // sorter: an unsorted sequence with the permutation that sorts it
  const Tensor raw = vec({5, 1, 4, 2, 3});
  CHECK(ivals(searchsorted(raw, vec({0, 2.5, 6}), false, std::nullopt, argsort(raw))) == std::vector<std::int64_t>{0, 2, 5});
  // NaN: values go after the numbers (before a NaN for left), a sequence's NaN sorts last
  CHECK(ivals(searchsorted(vec({1, 2, kNaN}), vec({kNaN, 3}))) == std::vector<std::int64_t>{2, 2});
  CHECK(ivals(searchsorted(vec({1, 2, kNaN}), vec({kNaN, 3}), true)) == std::vector<std::int64_t>{3, 2});
  // scalars, mixed dtypes, empties
  CHECK(searchsorted(vec({1, 2, 3}), 2.5).item<std::int64_t>() == 2);
  CHECK(searchsorted(vec({1, 2, 3}), 2, true).item<std::int64_t>() == 2);
  CHECK(bucketize(2.0, vec({1, 2, 3})).item<std::int64_t>() == 1);
  CHECK(bucketize(2.0, vec({1, 2, 3}), true).item<std::int64_t>() == 2);
  CHECK(ivals(searchsorted(seq({4}, int64), vec({1.5, -1}))) == std::vector<std::int64_t>{2, 0});
  CHECK(ivals(searchsorted(zeros({0}), vec({1, 2}))) == std::vector<std::int64_t>{0, 0});
  CHECK(searchsorted(vec({1, 2}), zeros({0})).shape() == Shape{0});
  // errors
  CHECK_THROWS_WITH_AS(searchsorted(vec({1, 2}), vec({1}), false, "middle"), Contains("[searchsorted] side must be \"left\" or \"right\", got \"middle\""), Error);
  CHECK_THROWS_WITH_AS(searchsorted(vec({1, 2}), vec({1}), true, "left"), Contains("[searchsorted] side and right can't be set to opposites"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(scalar_tensor(1.0), vec({1})), Contains("[searchsorted] the sorted sequence must have at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(zeros({2, 3}), zeros({3, 3})), Contains("[searchsorted] the sorted sequence's leading dims must match the values' (sequence shape (2, 3), values shape (3, 3))"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(zeros({2, 3}), 1.0), Contains("[searchsorted] a number as the value needs a 1-d sorted sequence, got shape (2, 3)"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(vec({1, 2}), vec({1}), false, std::nullopt, vec({0, 1})), Contains("[searchsorted] sorter must be an int64 tensor of the sequence's shape (2,), got float64 of shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(searchsorted(vec({1, 2}), vec({1}), false, std::nullopt, from_vector(std::vector<std::int64_t>{0, 2})), Contains("[searchsorted] sorter index 2 out of range for a sequence of 2"), Error);
  const Tensor c = from_vector(std::vector<std::complex<double>>{{1, 1}});
  CHECK_THROWS_WITH_AS(searchsorted(c, c), Contains("[searchsorted] not supported for complex tensors"), Error);
  CHECK_THROWS_WITH_AS(bucketize(vec({1}), zeros({2, 2})), Contains("[bucketize] boundaries must be a 1-d tensor, got shape (2, 2)"), Error);
}
