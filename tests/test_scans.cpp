// tests/test_scans.cpp - cummax, cummin and logcumsumexp: values and indices against line-by-line references
// (torch's running loop for the extremes, long double sums for logcumsumexp), every dim and layout, dtypes,
// NaN and ties, infinities, errors and gradients (gradcheck, gradgradcheck, and a mixed-sign incoming
// gradient against its closed form).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using namespace phasor::test;

namespace {

/// torch.cummax's loop on one line (cummin with `is_max` false): a NaN takes over, a tie moves the index on.
void ref_running(const std::vector<double>& line, bool is_max, std::vector<double>& v, std::vector<std::int64_t>& i) {
  double best = 0;
  std::int64_t at = 0;
  for (std::size_t j = 0; j < line.size(); ++j) {
    const double x = line[j];
    const bool take = j == 0 || std::isnan(x) || (!std::isnan(best) && (is_max ? x >= best : x <= best));
    if (take) best = x, at = static_cast<std::int64_t>(j);
    v.push_back(best);
    i.push_back(at);
  }
}

/// Checks cummax / cummin of x along dim against ref_running, values bit for bit (sign of zero included).
void check_running(const Tensor& x, std::int64_t dim, bool is_max) {
  const auto [values, indices] = is_max ? cummax(x, dim) : cummin(x, dim);
  REQUIRE(values.shape() == x.shape());
  CHECK(values.dtype() == x.dtype());
  CHECK(indices.dtype() == int64);
  const std::int64_t d = dim < 0 ? dim + x.dim() : dim;
  std::vector<double> want_v;
  std::vector<std::int64_t> want_i;
  for (const auto& line : lines_of(x, d)) ref_running(line, is_max, want_v, want_i);
  const auto got_v = vals(values.to(float64).movedim(d, -1).contiguous());
  const auto got_i = ivals(indices.movedim(d, -1).contiguous());
  int bad = 0;
  for (std::size_t k = 0; k < want_v.size(); ++k) {
    const bool same = (got_v[k] == want_v[k] && std::signbit(got_v[k]) == std::signbit(want_v[k])) ||
                      (std::isnan(got_v[k]) && std::isnan(want_v[k]));
    if (!same || got_i[k] != want_i[k]) ++bad;
  }
  CHECK(bad == 0);
}

/// log(sum_{i <= j} e^x_i) per prefix in long double, shifted by the prefix's max.
std::vector<double> ref_logcumsumexp(const std::vector<double>& line) {
  std::vector<double> out;
  for (std::size_t j = 0; j < line.size(); ++j) {
    long double m = -INFINITY;
    bool nan = false;
    for (std::size_t i = 0; i <= j; ++i) nan |= std::isnan(line[i]), m = std::max<long double>(m, line[i]);
    if (nan) { out.push_back(kNaN); continue; }
    if (std::isinf(m)) { out.push_back(static_cast<double>(m)); continue; }
    long double s = 0;
    for (std::size_t i = 0; i <= j; ++i) s += std::exp(static_cast<long double>(line[i]) - m);
    out.push_back(static_cast<double>(m + std::log(s)));
  }
  return out;
}

}  // namespace

TEST_CASE("cummax and cummin: values and indices against torch's loop, every dim, layouts, dtypes, NaN, ties, -0") {
  manual_seed(41);
  for (Dtype dt : {float64, float32, int64, bool_}) {
    CAPTURE(dt);
    Tensor x = tie_sample({4, 9, 6}, dt, 2.0, 0.05);
    if (dt == float64 || dt == float32) x = where(rand({4, 9, 6}) < 0.03, full({}, -kInf, dt), x);
    for (std::int64_t dim : {0, 1, 2, -1})
      for (bool is_max : {true, false}) {
        CAPTURE(dim);
        CAPTURE(is_max);
        check_running(x, dim, is_max);
        check_running(x.transpose(0, 2), dim, is_max);  // a strided input
        check_running(x.slice(1, 1, std::nullopt, 2), dim, is_max);
      }
  }
  check_running(randn({3, 20000}), 1, true);  // long lines
  check_running(randn({2000, 3}), 0, false);
  // hand-checked: a later tie moves the index; NaN takes over and a later NaN moves it again
  const auto [v, i] = cummax(vec({1, 3, 3, 2, kNaN, 5, kNaN}), 0);
  CHECK(ivals(i) == std::vector<std::int64_t>{0, 1, 2, 2, 4, 4, 6});
  CHECK(vals(v.narrow(0, 0, 4)) == std::vector<double>{1, 3, 3, 3});
  CHECK(ivals(std::get<1>(vec({2, 1, 1, 4}).cummin(0))) == std::vector<std::int64_t>{0, 1, 2, 2});
  CHECK(std::get<1>(cummax(from_vector(std::vector<std::int64_t>{INT64_MIN, INT64_MIN}), 0)).dtype() == int64);
  CHECK(ivals(std::get<1>(cummax(from_vector(std::vector<std::int64_t>{INT64_MIN, INT64_MIN}), 0))) ==
        std::vector<std::int64_t>{0, 1});
  // empty and 0-d
  CHECK(std::get<0>(cummax(zeros({0, 3}), 0)).shape() == Shape{0, 3});
  const auto [sv, si] = cummin(scalar_tensor(2.5), 0);
  CHECK(sv.item<double>() == 2.5);
  CHECK(si.item<std::int64_t>() == 0);
}

TEST_CASE("cummax and cummin: errors and gradients") {
  const Tensor c = from_vector(std::vector<std::complex<double>>{{1, 1}, {0, 1}});
  CHECK_THROWS_WITH_AS(cummax(c, 0), Contains("[cummax] not supported for complex tensors (got complex128)"), Error);
  CHECK_THROWS_WITH_AS(cummin(seq({2, 3}), 2), Contains("[cummin] dim 2 out of range"), Error);
  CHECK_THROWS_WITH_AS(cummax(scalar_tensor(1.0), 1), Contains("[cummax]"), Error);
  // the gradient goes to each running extreme's index: x = [1, 3, 2, 5] keeps 1, 3, 3, 5
  Tensor x = vec({1, 3, 2, 5}).requires_grad_();
  (std::get<0>(cummax(x, 0)) * vec({1, 10, 100, 1000})).sum().backward();
  CHECK(vals(x.grad()) == std::vector<double>{1, 110, 0, 1000});
  manual_seed(42);
  for (std::int64_t d : {0, 1}) {
    CHECK(autodiff::gradcheck([d](const V& in) { return std::get<0>(cummax(in[0], d)); }, {leaf64({4, 5})}));
    CHECK(autodiff::gradcheck([d](const V& in) { return std::get<0>(in[0].cummin(d)); }, {leaf64({4, 5})}));
  }
  CHECK(autodiff::gradgradcheck([](const V& in) { return std::get<0>(cummax(in[0] * in[0], 1)); }, {leaf64({3, 4})}));
}

TEST_CASE("logcumsumexp: against long double prefix sums, every dim and layout, large values, infinities, NaN") {
  manual_seed(43);
  for (Dtype dt : {float64, float32}) {
    CAPTURE(dt);
    const Tensor x = (randn({5, 7, 4}) * 3.0).to(dt);
    for (std::int64_t dim : {0, 1, 2, -1})
      for (const Tensor& in : {x, x.transpose(0, 2), x.slice(1, 1, std::nullopt, 2)}) {
        CAPTURE(dim);
        const std::int64_t d = dim < 0 ? dim + in.dim() : dim;
        const Tensor y = logcumsumexp(in, dim);
        CHECK(y.dtype() == dt);
        std::vector<double> want;
        for (const auto& line : lines_of(in, d))
          for (double v : ref_logcumsumexp(line)) want.push_back(v);
        check_close(y.to(float64).movedim(d, -1).contiguous(), want, dt == float32 ? 1e-6 : 1e-14);
      }
  }
  // no overflow or underflow: e^1000 and e^-1000 terms; -inf terms add nothing; +inf and NaN stay
  check_close(logcumsumexp(vec({1000, 1000, -1000, 999}), 0),
              {1000, 1000 + std::log(2.0), 1000 + std::log(2.0), 1000 + std::log(2.0 + std::exp(-1.0))});
  check_close(logcumsumexp(vec({-1000, -1001}), 0), {-1000, -1000 + std::log1p(std::exp(-1.0))});
  CHECK(vals(logcumsumexp(vec({-kInf, 0, -kInf}), 0)) == std::vector<double>{-kInf, 0, 0});
  const auto w = vals(logcumsumexp(vec({1, kInf, 2, kNaN, 3}), 0));
  CHECK(w[1] == kInf);
  CHECK(w[2] == kInf);
  CHECK(std::isnan(w[3]));
  CHECK(std::isnan(w[4]));
  check_close(logcumsumexp(from_vector(std::vector<float>{88.f, 88.f}), 0), {88.0, 88.0 + std::log(2.0)}, 1e-7);
  // 0-d, empty, the long-line path
  CHECK(logcumsumexp(scalar_tensor(0.5), 0).item<double>() == 0.5);
  CHECK(logcumsumexp(zeros({3, 0}), 1).shape() == Shape{3, 0});
  const Tensor big = randn({2, 30000}, float64);
  CHECK((logcumsumexp(big, 1).select(1, -1) - logsumexp(big, {1})).abs().max().item<double>() < 1e-10);
  CHECK_THROWS_WITH_AS(logcumsumexp(seq({3}, int64), 0), Contains("[logcumsumexp] expected a real floating tensor, got int64"),
                       Error);
  CHECK_THROWS_WITH_AS(logcumsumexp(from_vector(std::vector<std::complex<double>>{{1, 1}}), 0),
                       Contains("[logcumsumexp] expected a real floating tensor, got complex128"), Error);
  CHECK_THROWS_WITH_AS(logcumsumexp(seq({3}), 1), Contains("[logcumsumexp] dim 1 out of range"), Error);
}

TEST_CASE("logcumsumexp: gradients (gradcheck, gradgradcheck, mixed-sign incoming gradient, large values)") {
  manual_seed(44);
  for (std::int64_t d : {0, 1})
    CHECK(autodiff::gradcheck([d](const V& in) { return logcumsumexp(in[0], d); }, {leaf64({4, 5})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return logcumsumexp(in[0], 1); }, {leaf64({3, 4})}));
  CHECK(autodiff::gradgradcheck([](const V& in) { return logcumsumexp(in[0].t(), 0); }, {leaf64({3, 4})}));
  // dL/dx_i = sum_{j >= i} g_j e^(x_i - y_j), with g of both signs and x near 700 (e^x alone overflows)
  const std::vector<double> xs{700, 701.5, 699, 702, 700.25}, gs{1.5, -2.0, 0.0, 3.0, -0.5};
  Tensor x = vec(xs).requires_grad_();
  logcumsumexp(x, 0).backward(vec(gs));
  const auto y = ref_logcumsumexp(xs);
  std::vector<double> want;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    long double s = 0;
    for (std::size_t j = i; j < xs.size(); ++j) s += gs[j] * std::exp(static_cast<long double>(xs[i]) - y[j]);
    want.push_back(static_cast<double>(s));
  }
  check_close(x.grad(), want, 1e-12);
}
