// tests/test_stats.cpp - nansum, nanmean, aminmax, cov, corrcoef, bincount, histc: values against loops and
// closed forms (numpy's weighted covariance written out in long double), NaN, dims, errors and gradients.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <phasor/phasor.hpp>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

/// numpy.cov of the rows of a (vars x obs) matrix with weights w (fw * aw) and aweights aw (empty: none).
std::vector<double> ref_cov(const std::vector<double>& x, std::int64_t vars, std::int64_t obs, double correction,
                            const std::vector<double>& fw, const std::vector<double>& aw) {
  std::vector<long double> w(static_cast<std::size_t>(obs), 1.0L);
  for (std::size_t j = 0; j < w.size(); ++j) {
    if (!fw.empty()) w[j] *= fw[j];
    if (!aw.empty()) w[j] *= aw[j];
  }
  long double wsum = 0, waw = 0;
  for (std::size_t j = 0; j < w.size(); ++j) wsum += w[j], waw += aw.empty() ? 0 : w[j] * aw[j];
  const long double fact = aw.empty() ? wsum - correction : wsum - correction * waw / wsum;
  std::vector<long double> mean(static_cast<std::size_t>(vars), 0);
  for (std::int64_t i = 0; i < vars; ++i)
    for (std::int64_t j = 0; j < obs; ++j) mean[static_cast<std::size_t>(i)] += w[static_cast<std::size_t>(j)] * x[static_cast<std::size_t>(i * obs + j)] / wsum;
  std::vector<double> out;
  for (std::int64_t a = 0; a < vars; ++a)
    for (std::int64_t b = 0; b < vars; ++b) {
      long double s = 0;
      for (std::int64_t j = 0; j < obs; ++j)
        s += w[static_cast<std::size_t>(j)] * (x[static_cast<std::size_t>(a * obs + j)] - mean[static_cast<std::size_t>(a)]) *
             (x[static_cast<std::size_t>(b * obs + j)] - mean[static_cast<std::size_t>(b)]);
      out.push_back(static_cast<double>(s / fact));
    }
  return out;
}

}  // namespace

TEST_CASE("nansum, nanmean and aminmax") {
  const Tensor x = from_vector(std::vector<double>{1, kNaN, 3, kNaN, kNaN, 4}, Shape{2, 3});
  CHECK(nansum(x).item<double>() == 8);
  CHECK(vals(nansum(x, {1})) == std::vector<double>{4, 4});
  CHECK(vals(nanmean(x, {1})) == std::vector<double>{2, 4});
  CHECK(vals(nanmean(x, {0}, true)).size() == 3);
  CHECK(std::isnan(vals(nanmean(x, {0}))[1]));  // an all-NaN column
  CHECK(nansum(seq({3}, int64)).item<std::int64_t>() == 3);
  CHECK_THROWS_WITH_AS(nanmean(seq({3}, int64)), Contains("[nanmean] expected a floating or complex tensor, got int64"), Error);
  const auto [lo, hi] = aminmax(seq({2, 3}), 1);
  CHECK(vals(lo) == std::vector<double>{0, 3});
  CHECK(vals(hi) == std::vector<double>{2, 5});
  CHECK(std::get<1>(aminmax(seq({2, 3}))).item<double>() == 5);
  CHECK(std::get<0>(aminmax(seq({2, 3}), std::nullopt, true)).shape() == Shape{1, 1});
  // the gradient skips the NaNs
  Tensor g = from_vector(std::vector<double>{1, kNaN, 3, 5}).requires_grad_();
  nanmean(g).backward();
  CHECK(vals(g.grad()) == std::vector<double>{1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
  manual_seed(71);
  CHECK(autodiff::gradcheck([](const V& in) { return nansum(in[0], {0}) + nanmean(in[0], {1}).sum(); }, {leaf64({3, 4})}));
}

TEST_CASE("cov and corrcoef against numpy's formulas, weights, corrections, complex, errors, gradients") {
  manual_seed(72);
  const Tensor x = randn({3, 7}, float64);
  const auto xv = vals(x);
  const std::vector<double> fw{1, 2, 0, 3, 1, 1, 2}, aw{0.5, 1.0, 2.0, 0.25, 1.5, 1.0, 0.75};
  check_close(cov(x), ref_cov(xv, 3, 7, 1, {}, {}), 1e-13);
  check_close(cov(x, 0), ref_cov(xv, 3, 7, 0, {}, {}), 1e-13);
  check_close(cov(x, 1, from_vector(I{1, 2, 0, 3, 1, 1, 2})), ref_cov(xv, 3, 7, 1, fw, {}), 1e-13);
  check_close(cov(x, 1, Tensor(), from_vector(aw)), ref_cov(xv, 3, 7, 1, {}, aw), 1e-13);
  check_close(cov(x, 2, from_vector(I{1, 2, 0, 3, 1, 1, 2}), from_vector(aw)), ref_cov(xv, 3, 7, 2, fw, aw), 1e-13);
  CHECK(cov(x.select(0, 0)).shape() == Shape{});
  CHECK(cov(x.select(0, 0)).item<double>() == doctest::Approx(ref_cov(xv, 1, 7, 1, {}, {})[0]).epsilon(1e-13));
  CHECK(cov(seq({2, 4}, int64)).dtype() == default_dtype());
  // complex: conj on the second factor (Hermitian)
  const Tensor z = complex(randn({2, 5}, float64), randn({2, 5}, float64));
  const Tensor cz = cov(z);
  CHECK(std::abs(imag(cz).select(0, 0).select(0, 0).item<double>()) < 1e-15);
  CHECK((cz - cz.t().conj()).abs().max().item<double>() < 1e-14);
  // corrcoef: unit diagonal, the correlation of two columns written out
  const Tensor r = corrcoef(x);
  check_close(diagonal(r), {1, 1, 1}, 1e-14);
  const auto c = vals(cov(x));
  CHECK(r.select(0, 1).select(0, 2).item<double>() == doctest::Approx(c[5] / std::sqrt(c[4] * c[8])).epsilon(1e-13));
  CHECK(corrcoef(vec({1, 2, 3})).item<double>() == 1);
  CHECK(std::abs(vals(corrcoef(from_vector(std::vector<double>{1, 2, 3, 3, 2, 1}, Shape{2, 3})))[1] + 1) < 1e-15);
  CHECK_THROWS_WITH_AS(cov(zeros({2, 2, 2})), Contains("[cov] expected a 1-d or 2-d tensor"), Error);
  CHECK_THROWS_WITH_AS(cov(x, 1, vec({1, 2})), Contains("[cov] fweights must be 1-d with one entry per observation (7), got shape (2,)"), Error);
  CHECK_THROWS_WITH_AS(cov(x, 1, vec({1, 1, 1, 1, 1, 1, 1})), Contains("[cov] fweights must be int64, got float64"), Error);
  CHECK_THROWS_WITH_AS(cov(x, 1, Tensor(), from_vector(I{1, 1, 1, 1, 1, 1, 1})), Contains("[cov] aweights must be float32 or float64, got int64"), Error);
  CHECK_THROWS_WITH_AS(cov(x, 1, from_vector(I{1, -1, 1, 1, 1, 1, 1})), Contains("[cov] fweights must be non-negative, got -1"), Error);
  CHECK(autodiff::gradcheck([](const V& in) { return cov(in[0]); }, {leaf64({2, 5})}));
  CHECK(autodiff::gradcheck([&](const V& in) { return cov(in[0], 1, Tensor(), in[1]); },
                            {leaf64({2, 5}), (rand({5}, float64) + 0.5).requires_grad_()}));
  CHECK(autodiff::gradcheck([](const V& in) { return corrcoef(in[0]); }, {leaf64({3, 6})}));
}

TEST_CASE("bincount and histc against loops") {
  const Tensor x = from_vector(I{2, 0, 2, 5, 2});
  CHECK(ivals(bincount(x)) == I{1, 0, 3, 0, 0, 1});
  CHECK(ivals(bincount(x, Tensor(), 8)) == I{1, 0, 3, 0, 0, 1, 0, 0});
  CHECK(vals(bincount(x, vec({0.5, 1, 2, 3, 4}))) == std::vector<double>{1, 0, 6.5, 0, 0, 3});
  CHECK(bincount(from_vector(I{}), Tensor(), 3).shape() == Shape{3});
  CHECK_THROWS_WITH_AS(bincount(from_vector(I{1, -2})), Contains("[bincount] the input must be non-negative, got -2"), Error);
  CHECK_THROWS_WITH_AS(bincount(vec({1})), Contains("[bincount] expected a 1-d int64 tensor, got float64 of shape (1,)"), Error);
  CHECK_THROWS_WITH_AS(bincount(x, vec({1})), Contains("[bincount] weights must have the input's shape (5,), got (1,)"), Error);
  CHECK_THROWS_WITH_AS(bincount(x, Tensor(), -1), Contains("[bincount] minlength must be non-negative, got -1"), Error);
  Tensor w = vec({0.5, 1, 2, 3, 4}).requires_grad_();
  (bincount(x, w) * vec({1, 2, 3, 4, 5, 6})).sum().backward();
  CHECK(vals(w.grad()) == std::vector<double>{3, 1, 3, 6, 3});
  // histc: [0, 4) in 4 bins, max in the last, outside and NaN left out
  CHECK(vals(histc(vec({0, 0.5, 1, 3.99, 4, 4.5, -1, kNaN}), 4, 0, 4)) == std::vector<double>{2, 1, 0, 2});
  CHECK(vals(histc(vec({1, 2, 1}), 4)) == std::vector<double>{2, 0, 0, 1});  // the data's range [1, 2]
  CHECK(vals(histc(vec({3, 3}), 2)) == std::vector<double>{0, 2});           // one value: [2, 4]
  manual_seed(73);
  const Tensor r = randn({10000}, float64);
  const auto h = vals(histc(r, 10, -2, 2));
  const auto rv = vals(r);
  std::vector<double> want(10, 0);
  for (double v : rv)
    if (v >= -2 && v <= 2) want[static_cast<std::size_t>(std::min(9.0, std::floor((v + 2) * 10 / 4)))] += 1;
  CHECK(h == want);
  CHECK(histc(randn({5}), 3).dtype() == float32);
  CHECK_THROWS_WITH_AS(histc(from_vector(I{1}), 3), Contains("[histc] expected a float32 or float64 tensor, got int64"), Error);
  CHECK_THROWS_WITH_AS(histc(vec({1}), 0), Contains("[histc] bins must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(histc(vec({1}), 3, 2, 1), Contains("[histc] min (2.000000) must not exceed max (1.000000)"), Error);
  CHECK_THROWS_WITH_AS(histc(vec({1, std::numeric_limits<double>::infinity()}), 3), Contains("[histc] the range of the data"), Error);
}
