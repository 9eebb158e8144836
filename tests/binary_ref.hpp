// tests/binary_ref.hpp - helpers of the binary-op tests: tensors from lists, and a check of a broadcasting
// binary op's values against a long double reference computed by a naive loop.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <phasor/phasor.hpp>
#include <vector>

namespace phasor::test {

using cd = std::complex<double>;
using cld = std::complex<long double>;
using G = std::vector<Tensor>;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Tensors from lists (real ones converted to dt).
inline Tensor real_t(const std::vector<double>& v, Dtype dt = float64) { return from_vector(v).to(dt); }
inline Tensor real_t(const std::vector<double>& v, const Shape& s, Dtype dt = float64) {
  return from_vector(v, s).to(dt);
}
inline Tensor cplx_t(const std::vector<cd>& v, Dtype dt = complex128) { return from_vector(v).to(dt); }
inline Tensor int_t(const std::vector<std::int64_t>& v) { return from_vector(v); }
inline Tensor bool_t(const std::vector<bool>& v) { return from_vector(v); }

/// The relative tolerance of a correctly rounded result in dt (a few ulps).
inline double rtol_for(Dtype t) { return t == float32 || t == complex64 ? 2e-6 : 1e-14; }

/// got == want within rtol (NaN matches NaN, infinities match exactly).
inline bool close(cd got, cld want, double rtol) {
  const bool wn = std::isnan(static_cast<double>(want.real())) || std::isnan(static_cast<double>(want.imag()));
  const bool gn = std::isnan(got.real()) || std::isnan(got.imag());
  if (wn || gn) return wn && gn;
  if (std::isinf(static_cast<double>(want.real())) || std::isinf(static_cast<double>(want.imag())))
    return got.real() == static_cast<double>(want.real()) && got.imag() == static_cast<double>(want.imag());
  return std::abs(cld(got.real(), got.imag()) - want) <= rtol * std::abs(want) + 1e-300;
}

/// Row-major index of `idx` (in `out` coordinates) into a tensor of shape `s` broadcast to `out`.
inline std::int64_t bcast_index(const Shape& s, const Shape& out, std::int64_t flat) {
  std::int64_t r = 0, stride = 1;
  for (std::int64_t d = static_cast<std::int64_t>(out.size()) - 1; d >= 0; --d) {
    const std::int64_t i = flat % out[static_cast<std::size_t>(d)];
    flat /= out[static_cast<std::size_t>(d)];
    const std::int64_t sd = d - static_cast<std::int64_t>(out.size() - s.size());
    if (sd >= 0) {
      const std::int64_t n = s[static_cast<std::size_t>(sd)];
      r += (n == 1 ? 0 : i) * stride;
      stride *= n;
    }
  }
  return r;
}

/// Checks out == ref(a, b) with a naive broadcasting loop in long double.
inline void check_binary(const Tensor& a, const Tensor& b, const Tensor& out,
                         const std::function<cld(cld, cld)>& ref, double rtol) {
  auto av = to_vector<cd>(a), bv = to_vector<cd>(b), ov = to_vector<cd>(out);
  REQUIRE(out.numel() == static_cast<std::int64_t>(ov.size()));
  for (std::int64_t k = 0; k < out.numel(); ++k) {
    const cd x = av[static_cast<std::size_t>(bcast_index(a.shape(), out.shape(), k))];
    const cd y = bv[static_cast<std::size_t>(bcast_index(b.shape(), out.shape(), k))];
    const cld want = ref(cld(x.real(), x.imag()), cld(y.real(), y.imag()));
    INFO("a = ", x, ", b = ", y, ", got ", ov[static_cast<std::size_t>(k)], ", want ",
         cd(static_cast<double>(want.real()), static_cast<double>(want.imag())));
    CHECK(close(ov[static_cast<std::size_t>(k)], want, rtol));
  }
}

/// gradcheck and gradgradcheck of f at `in`.
inline bool gc(const std::function<Tensor(const G&)>& f, const G& in) { return autodiff::gradcheck(f, in); }
inline bool ggc(const std::function<Tensor(const G&)>& f, const G& in) { return autodiff::gradgradcheck(f, in); }

}  // namespace phasor::test
