// tests/test_cuda_special.cpp - the special functions (phasor/special.hpp) on a device agree with the CPU: values
// over their domains (poles, tails and special values included: the devices run one definition,
// core/special_rules.hpp, so they agree to the math libraries' rounding), the int and mixed-dtype promotions, and
// every gradient. DEVICE_CASEs: on cuda:0 with a GPU (or the CUDA emulation build), on the virtual CPU device
// everywhere.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.hpp"

using namespace phasor;
using namespace cuda_test;

namespace {

using V = std::vector<Tensor>;
using Fn = std::function<Tensor(const V&)>;

/// Agreement tolerance: the devices' libm differ by an ulp or so, amplified near a function's zeros.
double tol(Dtype dt) { return dt == float32 ? 2e-6 : 1e-12; }

/// v as a tensor of dtype dt.
Tensor values(const std::vector<double>& v, Dtype dt) { return from_vector(v).to(dt); }

}  // namespace

DEVICE_CASE("cuda special: the unary special functions agree with the CPU, special values included") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // a spread over each function's domain plus its special points
  const std::vector<double> real_line = {-30.5, -7.25, -2.5, -1.0, -0.3, -0.0, 0.0, 1e-7, 0.4, 1.46, 2.0, 9.7, 35.0, 200.0, inf, -inf, nan};
  const std::vector<double> unit = {-1.0, -0.999999, -0.7, -1e-9, -0.0, 0.0, 0.2, 0.5, 0.93, 1.0 - 1e-12, 1.0, 1.5, nan};
  const std::vector<double> probs = {0.0, 1e-300, 1e-12, 0.02, 0.3, 0.5, 0.77, 0.999, 1.0 - 1e-15, 1.0, -0.1, nan};
  const std::vector<double> above_one = {1.01, 1.2, 2.5, 7.0, 40.0};  // mvlgamma's domain for p = 3
  const std::vector<std::pair<std::string, std::pair<Fn, const std::vector<double>*>>> ops = {
      {"lgamma", {[](const V& a) { return lgamma(a[0]); }, &real_line}},
      {"digamma", {[](const V& a) { return digamma(a[0]); }, &real_line}},
      {"polygamma 1", {[](const V& a) { return polygamma(1, a[0]); }, &real_line}},
      {"polygamma 4", {[](const V& a) { return polygamma(4, a[0]); }, &real_line}},
      {"erfinv", {[](const V& a) { return erfinv(a[0]); }, &unit}},
      {"erfcx", {[](const V& a) { return special::erfcx(a[0]); }, &real_line}},
      {"i0", {[](const V& a) { return i0(a[0]); }, &real_line}},
      {"i0e", {[](const V& a) { return special::i0e(a[0]); }, &real_line}},
      {"i1", {[](const V& a) { return special::i1(a[0]); }, &real_line}},
      {"i1e", {[](const V& a) { return special::i1e(a[0]); }, &real_line}},
      {"ndtr", {[](const V& a) { return special::ndtr(a[0]); }, &real_line}},
      {"ndtri", {[](const V& a) { return special::ndtri(a[0]); }, &probs}},
      {"log_ndtr", {[](const V& a) { return special::log_ndtr(a[0]); }, &real_line}},
      {"entr", {[](const V& a) { return special::entr(a[0]); }, &real_line}},
      {"mvlgamma", {[](const V& a) { return mvlgamma(a[0], 3); }, &above_one}},
  };
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    for (const auto& [name, op] : ops) {
      CAPTURE(name);
      const auto& [f, xs] = op;
      const Tensor x = values(*xs, dt);
      const Tensor want = f({x}), got = f({x.to(dev)});
      CHECK(got.device() == dev);
      CHECK(got.dtype() == dt);
      // NaN and infinities in the same places, with the same signs; the finite values within rounding
      const Tensor wn = want.isnan(), gn = got.to(Device::cpu()).isnan();
      CHECK(to_vector<bool>(gn) == to_vector<bool>(wn));
      const Tensor wf = where(wn, Scalar(0.0), want), gf = where(gn, Scalar(0.0), got.to(Device::cpu()));
      CHECK(to_vector<bool>(gf.isinf()) == to_vector<bool>(wf.isinf()));
      CHECK(sign_bits(gf) == sign_bits(wf));
      CHECK(rel_diff(where(wf.isinf(), Scalar(0.0), gf), where(wf.isinf(), Scalar(0.0), wf)) <= tol(dt));
    }
  }
  // int64 input promotes on the device as on the CPU
  const Tensor n = from_vector(std::vector<std::int64_t>{1, 2, 7});
  agree(dev, "lgamma int64", [](const V& a) { return lgamma(a[0]); }, {n}, 1e-15);
  CHECK(lgamma(n.to(dev)).dtype() == default_dtype());
}

DEVICE_CASE("cuda special: zeta, igamma, igammac and xlog1py agree with the CPU, broadcast and mixed dtypes") {
  manual_seed(81);
  for (Dtype dt : {float32, float64}) {
    CAPTURE(dt);
    const Tensor s = values({1.0, 1.5, 2.0, 3.7, 12.0, 0.5}, dt).reshape({6, 1});
    const Tensor q = values({-2.5, -2.0, 0.0, 0.3, 1.0, 4.5, 80.0}, dt);
    const Tensor a = values({0.0, 0.02, 0.5, 1.0, 7.5, 40.0}, dt).reshape({6, 1});
    const Tensor x = values({0.0, 0.01, 0.6, 1.0, 6.0, 45.0, 400.0}, dt);
    agree(dev, "zeta", [](const V& v) { return special::zeta(v[0], v[1]); }, {s, q}, tol(dt));
    agree(dev, "igamma", [](const V& v) { return igamma(v[0], v[1]); }, {a, x}, tol(dt) * 10);
    agree(dev, "igammac", [](const V& v) { return igammac(v[0], v[1]); }, {a, x}, tol(dt) * 10);
    agree(dev, "xlog1py", [](const V& v) { return special::xlog1py(v[0], v[1]); }, {a - 0.5, x - 0.5}, tol(dt));
    // a float64 operand with a float32 one computes in float64 on both
    agree(dev, "igamma mixed", [](const V& v) { return igamma(v[0], v[1]); }, {a, x.to(float64)}, 1e-11);
  }
}

DEVICE_CASE("cuda special: every special function's gradient agrees with the CPU") {
  manual_seed(82);
  const Tensor x = sample({5, 4}, float64), pos = x.abs() + 0.3, unit = x.tanh() * 0.9, prob = x.sigmoid();
  const std::vector<std::pair<std::string, std::pair<Fn, Tensor>>> cases = {
      {"lgamma", {[](const V& a) { return lgamma(a[0]); }, pos}},
      {"digamma", {[](const V& a) { return digamma(a[0]); }, pos}},
      {"polygamma", {[](const V& a) { return polygamma(2, a[0]); }, pos}},
      {"mvlgamma", {[](const V& a) { return mvlgamma(a[0] + 1.0, 2); }, pos}},
      {"erfinv", {[](const V& a) { return erfinv(a[0]); }, unit}},
      {"erfcx", {[](const V& a) { return special::erfcx(a[0]); }, x}},
      {"i0", {[](const V& a) { return i0(a[0]); }, x}},
      {"i0e", {[](const V& a) { return special::i0e(a[0]); }, x}},
      {"i1", {[](const V& a) { return special::i1(a[0]); }, x}},
      {"i1e", {[](const V& a) { return special::i1e(a[0]); }, x}},
      {"ndtr", {[](const V& a) { return special::ndtr(a[0]); }, x}},
      {"ndtri", {[](const V& a) { return special::ndtri(a[0]); }, prob}},
      {"log_ndtr", {[](const V& a) { return special::log_ndtr(a[0]); }, x * 5.0}},
      {"entr", {[](const V& a) { return special::entr(a[0]); }, pos}},
  };
  for (const auto& [name, c] : cases) grads_agree(dev, name, c.first, {c.second}, 1e-11);
  const Tensor s = pos + 1.5;
  grads_agree(dev, "zeta", [s](const V& a) { return special::zeta(s.to(a[0].device()), a[0]); }, {pos}, 1e-11);
  grads_agree(dev, "igamma", [s](const V& a) { return igamma(s.to(a[0].device()), a[0]); }, {pos}, 1e-11);
  grads_agree(dev, "igammac", [s](const V& a) { return igammac(s.to(a[0].device()), a[0]); }, {pos}, 1e-11);
  grads_agree(dev, "xlog1py", [](const V& a) { return special::xlog1py(a[0], a[1]); }, {x, pos}, 1e-11);
  grad2_agree(dev, "xlog1py", [](const V& a) { return special::xlog1py(a[0], a[1]); }, {x, pos}, 1e-10);
  grad2_agree(dev, "lgamma", [](const V& a) { return lgamma(a[0]); }, {pos}, 1e-10);
  agree(dev, "special.round decimals", [](const V& a) { return special::round(a[0], 3); }, {x}, 0);
  grads_agree(dev, "special.log_softmax dtype", [](const V& a) { return special::log_softmax(a[0], 0, float64); }, {x}, 1e-12);
}
