// tests/test_fft.cpp - phasor::fft against independent references: naive DFTs in long double,
// closed forms, FFTW-style randomized identities, float64 finite differences (gradcheck).
#include <doctest/doctest.h>

#include <atomic>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <phasor/phasor.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace phasor;
namespace F = phasor::fft;
using F::Norm;
using ld = long double;
using cld = std::complex<long double>;
using cd = std::complex<double>;
using G = std::vector<Tensor>;
using Dims = std::vector<std::int64_t>;

namespace {

const Norm kNorms[] = {Norm::backward, Norm::ortho, Norm::forward};
const char* norm_name(Norm n) { return n == Norm::backward ? "backward" : n == Norm::ortho ? "ortho" : "forward"; }

std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }

// ---- long double reference arrays -------------------------------------------------------------------
struct Arr {
  Shape shape;
  std::vector<cld> v;
};

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

Arr arr_of(const Tensor& t) {
  Arr a{t.shape(), {}};
  for (const auto& z : to_vector<cd>(t)) a.v.emplace_back(z.real(), z.imag());
  return a;
}

/// Applies f (line of length shape[d] -> line of length out_len) along dim d.
template <class Fn>
Arr along(const Arr& a, std::int64_t d, std::int64_t out_len, Fn f) {
  Shape os = a.shape;
  os[u(d)] = out_len;
  Arr o{os, std::vector<cld>(u(numel_of(os)))};
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < d; ++i) outer *= a.shape[u(i)];
  for (std::int64_t i = d + 1; i < static_cast<std::int64_t>(a.shape.size()); ++i) inner *= a.shape[u(i)];
  const std::int64_t n = a.shape[u(d)];
  std::vector<cld> line(u(n));
  for (std::int64_t p = 0; p < outer; ++p)
    for (std::int64_t q = 0; q < inner; ++q) {
      for (std::int64_t k = 0; k < n; ++k) line[u(k)] = a.v[u((p * n + k) * inner + q)];
      std::vector<cld> r = f(line);
      for (std::int64_t k = 0; k < out_len; ++k) o.v[u((p * out_len + k) * inner + q)] = r[u(k)];
    }
  return o;
}

/// e^{-2 pi i k / n}, k = 0..n-1, in long double (cached per n).
const std::vector<cld>& twiddles(std::int64_t n) {
  static std::map<std::int64_t, std::vector<cld>> cache;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  const ld two_pi = 2 * std::acos(ld(-1));
  std::vector<cld> w(u(n));
  for (std::int64_t k = 0; k < n; ++k) {
    const ld a = two_pi * static_cast<ld>(k) / static_cast<ld>(n);
    w[u(k)] = cld(std::cos(a), -std::sin(a));
  }
  return cache.emplace(n, std::move(w)).first->second;
}

/// Naive unnormalized DFT, sign -1 (forward) or +1 (backward), in long double.
std::vector<cld> dft(const std::vector<cld>& x, int sign) {
  const auto n = static_cast<std::int64_t>(x.size());
  const auto& w = twiddles(n);
  std::vector<cld> y(u(n));
  for (std::int64_t k = 0; k < n; ++k) {
    ld re = 0, im = 0;
    std::int64_t idx = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const ld wr = w[u(idx)].real(), wi = sign < 0 ? w[u(idx)].imag() : -w[u(idx)].imag();
      const ld xr = x[u(j)].real(), xi = x[u(j)].imag();
      re += xr * wr - xi * wi;
      im += xr * wi + xi * wr;
      idx += k;
      if (idx >= n) idx -= n;
    }
    y[u(k)] = cld(re, im);
  }
  return y;
}

Arr resize_ax(const Arr& a, std::int64_t d, std::int64_t n) {
  return along(a, d, n, [n](const std::vector<cld>& l) {
    std::vector<cld> r(u(n));
    for (std::int64_t k = 0; k < n && k < static_cast<std::int64_t>(l.size()); ++k) r[u(k)] = l[u(k)];
    return r;
  });
}
Arr dft_ax(const Arr& a, std::int64_t d, int sign) {
  return along(a, d, a.shape[u(d)], [sign](const std::vector<cld>& l) { return dft(l, sign); });
}
Arr half_ax(const Arr& a, std::int64_t d) {
  const std::int64_t m = a.shape[u(d)] / 2 + 1;
  return along(a, d, m, [m](const std::vector<cld>& l) { return std::vector<cld>(l.begin(), l.begin() + m); });
}
/// Hermitian extension of a one-sided line (imaginary parts of DC/Nyquist dropped, as FFTW does),
/// backward DFT, real part.
Arr c2r_ax(const Arr& a, std::int64_t d, std::int64_t n) {
  return along(a, d, n, [n](const std::vector<cld>& l) {
    std::vector<cld> full(u(n));
    for (std::int64_t k = 0; k <= n / 2; ++k) full[u(k)] = l[u(k)];
    full[0] = full[0].real();
    if (n % 2 == 0) full[u(n / 2)] = full[u(n / 2)].real();
    for (std::int64_t k = n / 2 + 1; k < n; ++k) full[u(k)] = std::conj(l[u(n - k)]);
    std::vector<cld> y = dft(full, +1);
    for (auto& z : y) z = z.real();
    return y;
  });
}
Arr conj_arr(Arr a) {
  for (auto& z : a.v) z = std::conj(z);
  return a;
}
Arr scale_arr(Arr a, ld s) {
  for (auto& z : a.v) z *= s;
  return a;
}

ld fwd_scale(Norm norm, std::int64_t n) {
  return norm == Norm::backward ? 1 : norm == Norm::ortho ? 1 / std::sqrt(ld(n)) : 1 / ld(n);
}
ld inv_scale(Norm norm, std::int64_t n) {
  return norm == Norm::forward ? 1 : norm == Norm::ortho ? 1 / std::sqrt(ld(n)) : 1 / ld(n);
}

// Unnormalized n-D references (sizes are the transform lengths; for c2r the last is the output length).
Arr ref_c2c(Arr x, const Dims& dims, const Dims& sizes, int sign) {
  for (std::size_t i = 0; i < dims.size(); ++i) x = resize_ax(x, dims[i], sizes[i]);
  for (auto d : dims) x = dft_ax(x, d, sign);
  return x;
}
Arr ref_r2c(Arr x, const Dims& dims, const Dims& sizes) {
  for (std::size_t i = 0; i < dims.size(); ++i) x = resize_ax(x, dims[i], sizes[i]);
  x = half_ax(dft_ax(x, dims.back(), -1), dims.back());
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) x = dft_ax(x, dims[i], -1);
  return x;
}
Arr ref_c2r(Arr x, const Dims& dims, const Dims& sizes) {
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) x = resize_ax(x, dims[i], sizes[i]);
  x = resize_ax(x, dims.back(), sizes.back() / 2 + 1);
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) x = dft_ax(x, dims[i], +1);
  return c2r_ax(x, dims.back(), sizes.back());
}

ld eps_of(Dtype t) { return to_real(t) == Dtype::Float32 ? ld(FLT_EPSILON) : ld(DBL_EPSILON); }

/// The accuracy bound for an N-point transform: 4 eps log2(N) + eps.
ld dft_bound(Dtype t, std::int64_t n) {
  return 4 * eps_of(t) * std::log2(ld(std::max<std::int64_t>(n, 1))) + eps_of(t);
}

/// Relative L2 error ||y - ref|| / ||ref|| (0 when both are zero).
ld rel_err(const Tensor& y, const Arr& ref) {
  const Arr a = arr_of(y);
  ld num = 0, den = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    num += std::norm(a.v[i] - ref.v[i]);
    den += std::norm(ref.v[i]);
  }
  if (den == 0) return std::sqrt(num);
  return std::sqrt(num / den);
}

int g_failures_reported = 0;

/// Checks shape, dtype and relative error against the reference; reports the first few failures.
void check_ref(const Tensor& y, const Arr& ref, Dtype want_dtype, std::int64_t npoints, const std::string& what) {
  bool ok = y.shape() == ref.shape && y.dtype() == want_dtype;
  ld err = -1, bound = dft_bound(want_dtype, npoints);
  if (ok) {
    err = rel_err(y, ref);
    ok = err <= bound;
  }
  if (!ok && g_failures_reported++ < 20) {
    const std::string dn = dtype_name(y.dtype());
    INFO(what << ": shape " << y.shape().size() << "-d, dtype " << dn << ", rel err " << static_cast<double>(err)
              << " > bound " << static_cast<double>(bound));
    CHECK(ok);
  } else {
    CHECK(ok);
  }
}

Dtype cplx(Dtype t) { return to_complex(t); }

// Which public function, as a tag for the n-D reference driver.
enum class Fn { fft, ifft, rfft, irfft, hfft, ihfft };

/// Reference of a public function given the canonical dims and sizes (torch's rules, re-derived here).
Arr reference(Fn f, const Arr& x, const Dims& dims, const Dims& sizes, Norm norm, std::int64_t& npoints) {
  npoints = 1;
  for (auto s : sizes) npoints *= s;
  switch (f) {
    case Fn::fft: return scale_arr(ref_c2c(x, dims, sizes, -1), fwd_scale(norm, npoints));
    case Fn::ifft: return scale_arr(ref_c2c(x, dims, sizes, +1), inv_scale(norm, npoints));
    case Fn::rfft: return scale_arr(ref_r2c(x, dims, sizes), fwd_scale(norm, npoints));
    case Fn::ihfft: return scale_arr(conj_arr(ref_r2c(x, dims, sizes)), inv_scale(norm, npoints));
    case Fn::irfft: return scale_arr(ref_c2r(x, dims, sizes), inv_scale(norm, npoints));
    case Fn::hfft: return scale_arr(ref_c2r(conj_arr(x), dims, sizes), fwd_scale(norm, npoints));
  }
  return x;
}

Dtype out_dtype(Fn f, Dtype in) { return (f == Fn::irfft || f == Fn::hfft) ? to_real(in) : to_complex(in); }

Tensor call1(Fn f, const Tensor& x, F::Length n, std::int64_t dim, Norm norm) {
  switch (f) {
    case Fn::fft: return F::fft(x, n, dim, norm);
    case Fn::ifft: return F::ifft(x, n, dim, norm);
    case Fn::rfft: return F::rfft(x, n, dim, norm);
    case Fn::irfft: return F::irfft(x, n, dim, norm);
    case Fn::hfft: return F::hfft(x, n, dim, norm);
    case Fn::ihfft: return F::ihfft(x, n, dim, norm);
  }
  return x;
}

Tensor calln(Fn f, const Tensor& x, F::Sizes s, F::Sizes dims, Norm norm) {
  switch (f) {
    case Fn::fft: return F::fftn(x, s, dims, norm);
    case Fn::ifft: return F::ifftn(x, s, dims, norm);
    case Fn::rfft: return F::rfftn(x, s, dims, norm);
    case Fn::irfft: return F::irfftn(x, s, dims, norm);
    case Fn::hfft: return F::hfftn(x, s, dims, norm);
    case Fn::ihfft: return F::ihfftn(x, s, dims, norm);
  }
  return x;
}

Tensor call2(Fn f, const Tensor& x, F::Sizes s, const Dims& dims, Norm norm) {
  switch (f) {
    case Fn::fft: return F::fft2(x, s, dims, norm);
    case Fn::ifft: return F::ifft2(x, s, dims, norm);
    case Fn::rfft: return F::rfft2(x, s, dims, norm);
    case Fn::irfft: return F::irfft2(x, s, dims, norm);
    case Fn::hfft: return F::hfft2(x, s, dims, norm);
    case Fn::ihfft: return F::ihfft2(x, s, dims, norm);
  }
  return x;
}

const char* fn_name(Fn f) {
  const char* names[] = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"};
  return names[static_cast<int>(f)];
}
const Fn kFns[] = {Fn::fft, Fn::ifft, Fn::rfft, Fn::irfft, Fn::hfft, Fn::ihfft};

bool real_input(Fn f) { return f == Fn::rfft || f == Fn::ihfft; }
bool c2r_kind(Fn f) { return f == Fn::irfft || f == Fn::hfft; }

/// Canonical dims and sizes for an n-D call (torch's rules), computed independently of the library.
void canon(Fn f, const Tensor& x, const F::Sizes& s, const F::Sizes& dims, Dims& cd_, Dims& cs) {
  const auto nd = x.dim();
  cd_.clear();
  cs.clear();
  if (dims) {
    for (auto d : *dims) cd_.push_back(d < 0 ? d + nd : d);
  } else if (s) {
    for (auto d = nd - static_cast<std::int64_t>(s->size()); d < nd; ++d) cd_.push_back(d);
  } else {
    for (std::int64_t d = 0; d < nd; ++d) cd_.push_back(d);
  }
  for (std::size_t i = 0; i < cd_.size(); ++i) cs.push_back(s ? (*s)[i] : x.size(cd_[i]));
  if (c2r_kind(f) && !s) cs.back() = 2 * (x.size(cd_.back()) - 1);
}

Tensor make_input(Fn f, const Shape& shape, Dtype real_dt) {
  return real_input(f) ? randn(shape, real_dt) : randn(shape, cplx(real_dt));
}

std::string dims_str(const Dims& d) {
  std::string s = "(";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}

}  // namespace

// =====================================================================================================
// Accuracy against naive long double DFTs
// =====================================================================================================
TEST_CASE("fft: 1-D family vs naive long double DFT, n = 1..64, batched, both dims, all norms and dtypes") {
  manual_seed(1);
  for (std::int64_t n = 1; n <= 64; ++n) {
    for (Dtype dt : {float32, float64}) {
      for (int layout = 0; layout < 2; ++layout) {
        const std::int64_t dim = layout == 0 ? -1 : 0;
        const std::int64_t wd = layout == 0 ? 1 : 0;  // wrapped dim
        const std::int64_t m = n / 2 + 1;
        auto shape_of = [&](std::int64_t len) { return layout == 0 ? Shape{3, len} : Shape{len, 3}; };
        for (Fn f : kFns) {
          // c2r-style inputs are one-sided (m bins) with the output length n given explicitly
          Tensor x = make_input(f, shape_of(c2r_kind(f) ? m : n), dt);
          const Arr xa = arr_of(x);
          for (Norm norm : kNorms) {
            Tensor y = call1(f, x, c2r_kind(f) ? F::Length(n) : F::Length(), dim, norm);
            std::int64_t np = 0;
            Arr ref = reference(f, xa, {wd}, {n}, norm, np);
            check_ref(y, ref, out_dtype(f, dt), np,
                      std::string(fn_name(f)) + " n=" + std::to_string(n) + " dim=" + std::to_string(dim) + " " +
                          dtype_name(dt) + " " + norm_name(norm));
          }
          // crop and zero-pad through n (backward norm)
          for (std::int64_t n2 : {std::max<std::int64_t>(1, n - 2), n + 3}) {
            Tensor y = call1(f, x, n2, dim, Norm::backward);
            std::int64_t np = 0;
            Arr ref = reference(f, xa, {wd}, {n2}, Norm::backward, np);
            check_ref(
                y, ref, out_dtype(f, dt), np,
                std::string(fn_name(f)) + " n=" + std::to_string(n) + "->" + std::to_string(n2) + " " + dtype_name(dt));
          }
        }
      }
    }
  }
}

TEST_CASE("fft: 1-D family at larger sizes (primes 1009, 4099; 2^11; 2*3*5*7*11; 3^7)") {
  manual_seed(2);
  for (std::int64_t n : {1009, 4099, 2048, 2310, 2187}) {
    for (Dtype dt : {float32, float64}) {
      // One naive DFT per input serves two functions (index reversal turns D- into D+).
      Tensor c = randn({n}, cplx(dt)), r = randn({n}, dt), h = randn({n / 2 + 1}, cplx(dt));
      const Arr ca = arr_of(c), ra = arr_of(r);
      const std::vector<cld> dc = dft(ca.v, -1), dr = dft(ra.v, -1);
      const Arr ha = arr_of(h);
      std::vector<cld> full(u(n));
      for (std::int64_t k = 0; k <= n / 2; ++k) full[u(k)] = ha.v[u(k)];
      full[0] = full[0].real();
      if (n % 2 == 0) full[u(n / 2)] = full[u(n / 2)].real();
      for (std::int64_t k = n / 2 + 1; k < n; ++k) full[u(k)] = std::conj(ha.v[u(n - k)]);
      const std::vector<cld> dh = dft(full, +1);
      const std::int64_t m = n / 2 + 1;
      for (Norm norm : kNorms) {
        const ld sf = fwd_scale(norm, n), si = inv_scale(norm, n);
        Arr rf{{n}, {}}, ri{{n}, {}}, rr{{m}, {}}, rih{{m}, {}}, rir{{n}, {}}, rh{{n}, {}};
        for (std::int64_t k = 0; k < n; ++k) {
          rf.v.push_back(dc[u(k)] * sf);
          ri.v.push_back(dc[u((n - k) % n)] * si);
          rir.v.push_back(cld(dh[u(k)].real() * si, 0));
          rh.v.push_back(cld(dh[u((n - k) % n)].real() * sf, 0));
        }
        for (std::int64_t k = 0; k < m; ++k) {
          rr.v.push_back(dr[u(k)] * sf);
          rih.v.push_back(std::conj(dr[u(k)]) * si);
        }
        const std::string tag = " n=" + std::to_string(n) + " " + dtype_name(dt) + " " + norm_name(norm);
        check_ref(F::fft(c, std::nullopt, -1, norm), rf, cplx(dt), n, "fft" + tag);
        check_ref(F::ifft(c, std::nullopt, -1, norm), ri, cplx(dt), n, "ifft" + tag);
        check_ref(F::rfft(r, std::nullopt, -1, norm), rr, cplx(dt), n, "rfft" + tag);
        check_ref(F::ihfft(r, std::nullopt, -1, norm), rih, cplx(dt), n, "ihfft" + tag);
        check_ref(F::irfft(h, n, -1, norm), rir, dt, n, "irfft" + tag);
        check_ref(F::hfft(h, n, -1, norm), rh, dt, n, "hfft" + tag);
      }
    }
  }
}

TEST_CASE("fft: 2-D and n-D family vs naive long double DFT (dims subsets and orders, s crop/pad)") {
  manual_seed(3);
  struct Case {
    Shape shape;  // of the real-space signal (for c2r kinds: the spectrum shape is derived)
    F::Sizes s;
    F::Sizes dims;
  };
  const std::vector<Case> cases = {
      {{4, 6}, std::nullopt, std::nullopt},     {{5, 7}, std::nullopt, Dims{1, 0}},
      {{3, 4, 5}, std::nullopt, Dims{0, 2}},    {{3, 4, 5}, std::nullopt, Dims{2, 0, 1}},
      {{3, 4, 5}, std::nullopt, Dims{-1}},      {{3, 4, 5}, Dims{6, 3}, std::nullopt},  // last two dims, pad and crop
      {{4, 6}, Dims{3, 9}, Dims{0, 1}},         {{5, 7}, Dims{6, 5}, Dims{-1, -2}},
      {{2, 3, 4, 5}, std::nullopt, Dims{3, 1}}, {{1, 8}, std::nullopt, std::nullopt},  // size-1 transform dim
  };
  for (const auto& cs : cases) {
    for (Fn f : kFns) {
      for (Dtype dt : {float32, float64}) {
        // Build the input: for c2r kinds, a one-sided spectrum whose halved dim has n/2+1 bins.
        Shape in_shape = cs.shape;
        Dims cdims, csizes;
        {
          Tensor probe = zeros(cs.shape);
          canon(Fn::fft, probe, cs.s, cs.dims, cdims, csizes);
        }
        if (c2r_kind(f)) in_shape[u(cdims.back())] = cs.shape[u(cdims.back())] / 2 + 1;
        Tensor x = make_input(f, in_shape, dt);
        const Arr xa = arr_of(x);
        for (Norm norm : kNorms) {
          // For c2r kinds without s the output length is 2*(m-1): pass s = the real shape instead so
          // odd lengths are covered too.
          F::Sizes s = cs.s;
          if (c2r_kind(f) && !s) s = csizes;  // cdims are all dims here, so s = csizes keeps them
          const F::Sizes dims_arg = cs.dims;
          Dims d2, s2;
          canon(f, x, s, dims_arg, d2, s2);
          std::int64_t np = 0;
          Arr ref = reference(f, xa, d2, s2, norm, np);
          const std::string tag = std::string(fn_name(f)) + "n shape " + dims_str(in_shape) + " dims " +
                                  (dims_arg ? dims_str(*dims_arg) : "all") + " s " + (s ? dims_str(*s) : "none") + " " +
                                  dtype_name(dt) + " " + norm_name(norm);
          check_ref(calln(f, x, s, dims_arg, norm), ref, out_dtype(f, dt), np, tag);
          if (d2.size() == 2) {
            Tensor y2 = call2(f, x, s, d2, norm);
            check_ref(y2, ref, out_dtype(f, dt), np, tag + " (2-D spelling)");
          }
        }
      }
    }
  }
  // c2r kinds with the default output length: 2*(m-1) along the last dim, the others unchanged
  Tensor h = randn({4, 5}, complex128);
  std::int64_t np = 0;
  Arr ref = reference(Fn::irfft, arr_of(h), {0, 1}, {4, 8}, Norm::backward, np);
  check_ref(F::irfft2(h), ref, float64, np, "irfft2 default s");
  ref = reference(Fn::hfft, arr_of(h), {0, 1}, {4, 8}, Norm::ortho, np);
  check_ref(F::hfftn(h, std::nullopt, std::nullopt, Norm::ortho), ref, float64, np, "hfftn default s");
}

TEST_CASE("fft: n-D family with a measuring planner (FFTW's own multi-dimensional plans)") {
  // Under the estimate effort n-D transforms run as blocked 1-D passes; measuring efforts hand the
  // whole problem to FFTW (one guru64 plan). Both must agree with the reference, including c2r of
  // spectra that are not Hermitian-consistent (imaginary parts of DC/Nyquist lines dropped).
  manual_seed(31);
  F::set_planner_effort(F::Effort::measure);
  struct Case {
    Shape shape;
    Dims dims;
  };
  const std::vector<Case> cases = {
      {{6, 8}, {0, 1}}, {{5, 7}, {1, 0}}, {{3, 4, 5}, {0, 2}}, {{4, 3, 6}, {2, 0, 1}}, {{9, 4}, {0}}};
  for (const auto& cs : cases) {
    for (Fn f : kFns) {
      for (Dtype dt : {float32, float64}) {
        Shape in_shape = cs.shape;
        if (c2r_kind(f)) in_shape[u(cs.dims.back())] = cs.shape[u(cs.dims.back())] / 2 + 1;
        Tensor x = make_input(f, in_shape, dt);
        Dims sizes;
        for (auto d : cs.dims) sizes.push_back(cs.shape[u(d)]);
        for (Norm norm : {Norm::backward, Norm::ortho}) {
          std::int64_t np = 0;
          const Arr ref = reference(f, arr_of(x), cs.dims, sizes, norm, np);
          check_ref(calln(f, x, sizes, cs.dims, norm), ref, out_dtype(f, dt), np,
                    std::string(fn_name(f)) + "n (measure) shape " + dims_str(in_shape) + " dims " + dims_str(cs.dims));
        }
      }
    }
  }
  Tensor z = randn({3, 4}, complex128).requires_grad_();
  Tensor r = randn({3, 4}, float64).requires_grad_();
  CHECK(autodiff::gradcheck([](const G& in) { return F::irfft2(in[0], Dims{3, 5}); }, {z}));
  CHECK(autodiff::gradcheck([](const G& in) { return F::rfft2(in[0], std::nullopt, {1, 0}); }, {r}));
  CHECK(autodiff::gradcheck([](const G& in) { return F::hfftn(in[0], Dims{4, 6}, Dims{1, 0}); }, {z}));
  F::set_planner_effort(F::Effort::estimate);
}

TEST_CASE("fft: default dims, dtype promotion and the 2-D defaults") {
  Tensor xi = from_vector(std::vector<std::int64_t>{1, 2, 3, 4});
  Tensor y = F::fft(xi);
  CHECK(y.dtype() == complex64);
  auto v = to_vector<std::complex<float>>(y);
  CHECK(v[0] == std::complex<float>(10, 0));
  CHECK(v[1] == std::complex<float>(-2, 2));
  CHECK(v[2] == std::complex<float>(-2, 0));
  CHECK(v[3] == std::complex<float>(-2, -2));
  CHECK(F::fft(randn({4}, float64)).dtype() == complex128);
  CHECK(F::rfft(xi).dtype() == complex64);
  CHECK(F::irfft(randn({3}, float64)).dtype() == float64);  // real input to c2r promotes to complex
  CHECK(F::irfft(randn({3}, float64)).shape() == Shape{4});
  CHECK(F::fft2(randn({2, 3, 4}, complex64)).shape() == Shape{2, 3, 4});
  CHECK(F::rfft2(randn({2, 3, 4}, float32)).shape() == Shape{2, 3, 3});
  CHECK(F::rfftn(randn({2, 3, 4}, float32), Dims{5}).shape() == Shape{2, 3, 3});
  CHECK(F::irfftn(randn({2, 3, 4}, complex64)).shape() == Shape{2, 3, 6});
  CHECK(F::ihfft2(randn({2, 5, 4}, float32)).shape() == Shape{2, 5, 3});
  CHECK(F::hfft2(randn({2, 5, 4}, complex64), Dims{5, 7}).shape() == Shape{2, 5, 7});
  // an empty dims list is the identity (as a complex copy) for c2c
  Tensor c = randn({3}, complex128);
  Tensor e = F::fftn(c, std::nullopt, Dims{});
  CHECK(to_vector<cd>(e) == to_vector<cd>(c));
}

// =====================================================================================================
// FFTW-style randomized checks at large sizes
// =====================================================================================================
namespace {
/// ||got - ref|| / ||ref|| in long double, ref(k) evaluated on the fly (no big temporaries).
template <class Ref>
ld rel_err_fn(const std::vector<cd>& got, Ref ref) {
  ld num = 0, den = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const cld r = ref(static_cast<std::int64_t>(k));
    num += std::norm(cld(got[k].real(), got[k].imag()) - r);
    den += std::norm(r);
  }
  return std::sqrt(num / den);
}
cld L(const cd& z) { return cld(z.real(), z.imag()); }
std::vector<cld> host(const Tensor& t) { return arr_of(t).v; }
}  // namespace

TEST_CASE("fft: large sizes 2^20 and 1000003: linearity, impulse response, time and frequency shift") {
  manual_seed(4);
  for (std::int64_t n : {std::int64_t(1) << 20, std::int64_t(1000003)}) {
    INFO("n = " << n);
    const Dtype dt = complex128;
    const ld bound1 = dft_bound(dt, n);  // one transform vs an exact reference
    const ld bound2 = 2 * bound1;        // two transforms compared with each other
    const auto& w = twiddles(n);         // e^{-2 pi i k / n} in long double
    Tensor x = randn({n}, dt), y = randn({n}, dt);
    const std::vector<cd> xv = to_vector<cd>(x), X = to_vector<cd>(F::fft(x));
    // linearity: fft(a x + b y) = a fft(x) + b fft(y)
    {
      const cd a(0.75, -1.25), b(-0.5, 2.0);
      const std::vector<cd> lhs = to_vector<cd>(F::fft(x * Scalar(a) + y * Scalar(b)));
      const std::vector<cd> Y = to_vector<cd>(F::fft(y));
      CHECK(rel_err_fn(lhs, [&](std::int64_t k) { return L(a) * L(X[u(k)]) + L(b) * L(Y[u(k)]); }) <=
            bound2 + 4 * eps_of(dt));  // + rounding of a x + b y
    }
    // impulse at position p: fft = e^{-2 pi i k p / n}
    {
      const std::int64_t p = n / 3 + 7;
      Tensor d = zeros({n}, dt);
      d.select(0, p).fill_(1.0);
      CHECK(rel_err_fn(to_vector<cd>(F::fft(d)), [&](std::int64_t k) { return w[u((k * p) % n)]; }) <= bound1);
    }
    // time shift: fft(roll(x, s))_k = fft(x)_k e^{-2 pi i k s / n}
    {
      const std::int64_t s = 12345 % n;
      std::vector<cd> xs(u(n));
      for (std::int64_t j = 0; j < n; ++j) xs[u((j + s) % n)] = xv[u(j)];
      CHECK(rel_err_fn(to_vector<cd>(F::fft(from_vector(xs))),
                       [&](std::int64_t k) { return L(X[u(k)]) * w[u((k * s) % n)]; }) <= bound2);
    }
    // frequency shift: fft(x_j e^{2 pi i j s / n})_k = fft(x)_{k-s}
    {
      const std::int64_t s = 777;
      std::vector<cd> xm(u(n));
      for (std::int64_t j = 0; j < n; ++j) {
        const cld z = L(xv[u(j)]) * std::conj(w[u((j * s) % n)]);
        xm[u(j)] = cd(static_cast<double>(z.real()), static_cast<double>(z.imag()));
      }
      CHECK(rel_err_fn(to_vector<cd>(F::fft(from_vector(xm))), [&](std::int64_t k) {
              return L(X[u((k - s + n) % n)]);
            }) <= bound2 + eps_of(dt));  // + rounding of the modulated input
    }
  }
  // single precision linearity at 2^20 (r2c)
  {
    const std::int64_t n = std::int64_t(1) << 20;
    Tensor x = randn({n}, float32), y = randn({n}, float32);
    const std::vector<cd> fx = to_vector<cd>(F::rfft(x)), fy = to_vector<cd>(F::rfft(y));
    CHECK(rel_err_fn(to_vector<cd>(F::rfft(x * 2.0f - y * 3.0f)), [&](std::int64_t k) {
            return ld(2) * L(fx[u(k)]) - ld(3) * L(fy[u(k)]);
          }) <= 2 * dft_bound(float32, n) + 4 * eps_of(float32));
  }
}

// =====================================================================================================
// Identities: round trips, Parseval, Hermitian symmetry, odd irfft lengths
// =====================================================================================================
namespace {
ld max_abs_diff(const Tensor& a, const Tensor& b) {
  auto va = host(a), vb = host(b);
  REQUIRE(va.size() == vb.size());
  ld m = 0;
  for (std::size_t i = 0; i < va.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}
}  // namespace

TEST_CASE("fft: round trips for every norm, odd and even lengths") {
  manual_seed(5);
  for (Norm norm : kNorms) {
    for (std::int64_t n : {1, 2, 7, 8, 15, 16, 243, 1000}) {
      Tensor c = randn({2, n}, complex128), r = randn({2, n}, float64);
      CHECK(max_abs_diff(F::ifft(F::fft(c, std::nullopt, -1, norm), std::nullopt, -1, norm), c) < 1e-12);
      CHECK(max_abs_diff(F::irfft(F::rfft(r, std::nullopt, -1, norm), n, -1, norm), r) < 1e-12);
      CHECK(max_abs_diff(F::hfft(F::ihfft(r, std::nullopt, -1, norm), n, -1, norm), r) < 1e-12);
      Tensor r3 = randn({3, n, 5}, float64);
      CHECK(max_abs_diff(F::irfftn(F::rfftn(r3, std::nullopt, Dims{2, 1}, norm), Dims{5, n}, Dims{2, 1}, norm), r3) <
            1e-12);
      CHECK(max_abs_diff(F::hfftn(F::ihfftn(r3, std::nullopt, Dims{0, 1}, norm), Dims{3, n}, Dims{0, 1}, norm), r3) <
            1e-12);
      Tensor c3 = randn({3, n, 2}, complex64);
      CHECK(max_abs_diff(F::ifftn(F::fftn(c3, std::nullopt, std::nullopt, norm), std::nullopt, std::nullopt, norm),
                         c3) < 2e-5);
    }
  }
}

TEST_CASE("fft: irfft with an odd output length is exact (not 2*(m-1))") {
  manual_seed(6);
  for (std::int64_t n : {1, 3, 5, 9, 17, 101}) {
    Tensor r = randn({n}, float64);
    Tensor y = F::irfft(F::rfft(r), n);
    CHECK(y.shape() == Shape{n});
    CHECK(max_abs_diff(y, r) < 1e-13);
    // the default length would be even and different
    if (n > 1) CHECK(F::irfft(F::rfft(r)).size(0) == 2 * (n / 2));
  }
}

TEST_CASE("fft: Parseval with ortho and Hermitian symmetry of rfft") {
  manual_seed(7);
  for (std::int64_t n : {1, 6, 7, 64, 1009}) {
    Tensor c = randn({n}, complex128);
    Tensor X = F::fft(c, std::nullopt, -1, Norm::ortho);
    const auto xv = host(c), Xv = host(X);
    ld ex = 0, eX = 0;
    for (auto z : xv) ex += std::norm(z);
    for (auto z : Xv) eX += std::norm(z);
    CHECK(std::abs(ex - eX) / ex <= 2 * dft_bound(complex128, n));
    // 2-D Parseval
    Tensor c2 = randn({5, n}, complex128);
    Tensor X2 = F::fft2(c2, std::nullopt, {-2, -1}, Norm::ortho);
    ld e1 = 0, e2 = 0;
    for (auto z : host(c2)) e1 += std::norm(z);
    for (auto z : host(X2)) e2 += std::norm(z);
    CHECK(std::abs(e1 - e2) / e1 <= 2 * dft_bound(complex128, 5 * n));
    // Hermitian symmetry: rfft(r) = fft(r)[:n/2+1], fft(r)[n-k] = conj(fft(r)[k]); DC/Nyquist real
    Tensor r = randn({n}, float64);
    const auto R = host(F::rfft(r)), Fr = host(F::fft(r));
    REQUIRE(static_cast<std::int64_t>(R.size()) == n / 2 + 1);
    CHECK(R[0].imag() == 0);
    if (n % 2 == 0) CHECK(R[u(n / 2)].imag() == 0);
    ld scale = 0;
    for (auto z : Fr) scale = std::max(scale, std::abs(z));
    for (std::int64_t k = 0; k <= n / 2; ++k)
      CHECK(std::abs(R[u(k)] - Fr[u(k)]) <= 8 * DBL_EPSILON * scale * std::log2(ld(n) + 1) + 1e-300);
    for (std::int64_t k = 1; k < n; ++k)
      CHECK(std::abs(Fr[u(n - k)] - std::conj(Fr[u(k)])) <= 8 * DBL_EPSILON * scale * std::log2(ld(n) + 1));
  }
}

// =====================================================================================================
// Layouts: zero-size and size-1 dims, batches, non-contiguous views
// =====================================================================================================
TEST_CASE("fft: zero-size and size-1 dims") {
  // zero-size batch dims give empty results of the right shape
  CHECK(F::fft(zeros({0, 8}, complex64)).shape() == Shape{0, 8});
  CHECK(F::rfft(zeros({0, 8}, float32)).shape() == Shape{0, 5});
  CHECK(F::irfft(zeros({3, 0, 5}, complex64), std::nullopt, -1).shape() == Shape{3, 0, 8});
  CHECK(F::fft2(zeros({0, 4, 4}, complex128)).shape() == Shape{0, 4, 4});
  // a transform dim of size 0 needs n/s to zero-pad
  CHECK_THROWS_WITH_AS(F::fft(zeros({4, 0}, complex64)), doctest::Contains("[fft] invalid number of data points (0)"),
                       Error);
  Tensor zp = F::fft(zeros({2, 0}, complex64), 4);
  CHECK(zp.shape() == Shape{2, 4});
  for (auto z : to_vector<std::complex<float>>(zp)) CHECK(z == std::complex<float>(0, 0));
  // size-1 transform dims are the identity (times the norm's scale, which is 1)
  Tensor c = randn({3, 1}, complex128);
  CHECK(max_abs_diff(F::fft(c), c) == 0);
  CHECK(max_abs_diff(F::ifft(c, std::nullopt, -1, Norm::ortho), c) == 0);
  Tensor r = randn({3, 1}, float64);
  CHECK(max_abs_diff(F::rfft(r), r.to(complex128)) == 0);
  CHECK(max_abs_diff(F::irfft(F::rfft(r), 1), r) == 0);
  // irfft of one bin without n would have output length 0
  CHECK_THROWS_WITH_AS(F::irfft(randn({1}, complex64)), doctest::Contains("[irfft] invalid output length 0"), Error);
  CHECK_THROWS_WITH_AS(F::hfft(randn({1}, complex64)), doctest::Contains("[hfft] invalid output length 0"), Error);
}

TEST_CASE("fft: non-contiguous inputs (transposed, stepped slices, expanded, real views) match contiguous ones") {
  manual_seed(8);
  Tensor base = randn({12, 10}, complex128);
  Tensor rbase = randn({12, 10}, float64);
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> views = {
      {"transposed", [](const Tensor& t) { return t.t(); }},
      {"step slice", [](const Tensor& t) { return t.slice(0, 1, std::nullopt, 3).slice(1, 0, std::nullopt, 2); }},
      {"expanded",
       [](const Tensor& t) {
         return t.select(0, 2).unsqueeze(0).expand({4, 10});
       }},
      {"narrowed", [](const Tensor& t) { return t.narrow(1, 3, 6); }},
  };
  for (const auto& [name, view] : views) {
    INFO(name);
    Tensor v = view(base), vc = v.contiguous();
    Tensor rv = view(rbase), rvc = rv.contiguous();
    REQUIRE_FALSE(v.is_contiguous());
    for (std::int64_t dim : {0, 1}) {
      CHECK(max_abs_diff(F::fft(v, std::nullopt, dim), F::fft(vc, std::nullopt, dim)) < 1e-12);
      CHECK(max_abs_diff(F::rfft(rv, std::nullopt, dim), F::rfft(rvc, std::nullopt, dim)) < 1e-12);
      CHECK(max_abs_diff(F::irfft(v, 9, dim), F::irfft(vc, 9, dim)) < 1e-12);
      CHECK(max_abs_diff(F::hfft(v, std::nullopt, dim), F::hfft(vc, std::nullopt, dim)) < 1e-12);
    }
    CHECK(max_abs_diff(F::fft2(v), F::fft2(vc)) < 1e-12);
    CHECK(max_abs_diff(F::rfft2(rv, std::nullopt, {1, 0}), F::rfft2(rvc, std::nullopt, {1, 0})) < 1e-12);
    CHECK(max_abs_diff(F::irfftn(v), F::irfftn(vc)) < 1e-12);
  }
  // real and imaginary parts of a complex tensor are stride-2 real views
  Tensor re = base.real(), im = base.imag();
  CHECK(max_abs_diff(F::rfft(re), F::rfft(re.contiguous())) < 1e-12);
  CHECK(max_abs_diff(F::rfft2(im), F::rfft2(im.contiguous())) < 1e-12);
  // inputs are left untouched (c2r works on a copy, or on a padded/converted copy made for it)
  Tensor h = randn({4, 5}, complex128);
  const auto before = to_vector<cd>(h);
  F::irfft2(h);
  F::hfft(h);
  F::irfft(h);
  F::irfft(h, std::nullopt, 0);
  F::irfft(h, 20);
  F::irfft(h.narrow(1, 0, 3), 4);
  F::hfftn(h, Dims{6, 9});
  F::irfftn(h.t(), Dims{9, 4});
  CHECK(to_vector<cd>(h) == before);
  Tensor hr = randn({4, 5}, float64);
  const auto before_r = to_vector<double>(hr);
  CHECK(max_abs_diff(F::irfft(hr), F::irfft(hr.to(complex128))) == 0);
  CHECK(to_vector<double>(hr) == before_r);
}

TEST_CASE("fft: batched transforms equal per-row transforms") {
  manual_seed(9);
  Tensor x = randn({6, 4, 33}, complex64);
  Tensor y = F::fft(x);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      CHECK(max_abs_diff(y.select(0, i).select(0, j), F::fft(x.select(0, i).select(0, j).contiguous())) < 1e-5);
  Tensor r = randn({5, 3, 8}, float64);
  Tensor R = F::rfft(r, std::nullopt, 0);
  for (std::int64_t k = 0; k < 8; ++k)
    CHECK(max_abs_diff(R.select(2, k), F::rfft(r.select(2, k).contiguous(), std::nullopt, 0)) < 1e-12);
}

// =====================================================================================================
// fftfreq, rfftfreq, fftshift, ifftshift
// =====================================================================================================
TEST_CASE("fft: fftfreq / rfftfreq closed forms") {
  auto f = to_vector<double>(F::fftfreq(5, 0.5, float64));
  std::vector<double> want = {0, 0.4, 0.8, -0.8, -0.4};
  REQUIRE(f.size() == want.size());
  for (std::size_t i = 0; i < f.size(); ++i) CHECK(f[i] == doctest::Approx(want[i]).epsilon(1e-15));
  f = to_vector<double>(F::fftfreq(4, 1.0, float64));
  CHECK(f == std::vector<double>{0, 0.25, -0.5, -0.25});
  f = to_vector<double>(F::rfftfreq(4, 0.1, float64));
  REQUIRE(f.size() == 3);
  CHECK(f[1] == doctest::Approx(2.5));
  CHECK(f[2] == doctest::Approx(5.0));
  f = to_vector<double>(F::rfftfreq(7, 1.0, float64));
  REQUIRE(f.size() == 4);
  CHECK(f[3] == doctest::Approx(3.0 / 7));
  CHECK(F::fftfreq(8).dtype() == float32);
  CHECK(F::fftfreq(0, 1.0, float64).numel() == 0);
  CHECK_THROWS_WITH_AS(F::fftfreq(-1), doctest::Contains("[fftfreq] n must be >= 0, got -1"), Error);
  CHECK_THROWS_WITH_AS(F::rfftfreq(4, 1.0, int64),
                       doctest::Contains("[rfftfreq] expected a floating or complex dtype, got int64"), Error);
}

TEST_CASE("fft: fftshift / ifftshift") {
  Tensor x = from_vector(std::vector<double>{0, 1, 2, 3, 4});
  CHECK(to_vector<double>(F::fftshift(x)) == std::vector<double>{3, 4, 0, 1, 2});
  CHECK(to_vector<double>(F::ifftshift(x)) == std::vector<double>{2, 3, 4, 0, 1});
  CHECK(to_vector<double>(F::ifftshift(F::fftshift(x))) == to_vector<double>(x));
  Tensor e = from_vector(std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(to_vector<double>(F::fftshift(e)) == std::vector<double>{3, 4, 5, 0, 1, 2});
  // fftshift of fftfreq is sorted
  auto fs = to_vector<double>(F::fftshift(F::fftfreq(7, 1.0, float64)));
  for (std::size_t i = 1; i < fs.size(); ++i) CHECK(fs[i - 1] < fs[i]);
  // 2-D, all dims and a subset
  Tensor m = from_vector(std::vector<double>{0, 1, 2, 3, 4, 5}, Shape{2, 3});
  CHECK(to_vector<double>(F::fftshift(m)) == std::vector<double>{5, 3, 4, 2, 0, 1});
  CHECK(to_vector<double>(F::fftshift(m, Dims{1})) == std::vector<double>{2, 0, 1, 5, 3, 4});
  CHECK(to_vector<double>(F::ifftshift(m, Dims{-1})) == std::vector<double>{1, 2, 0, 4, 5, 3});
  CHECK_THROWS_WITH_AS(F::fftshift(m, Dims{2}), doctest::Contains("[fftshift] dim 2 out of range"), Error);
}

// =====================================================================================================
// Gradients (float64 / complex128 finite differences)
// =====================================================================================================
namespace {
bool gc(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  return autodiff::gradcheck([f](const G& in) { return f(in[0]); }, {x});
}
bool ggc(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  return autodiff::gradgradcheck([f](const G& in) { return f(in[0]); }, {x});
}
}  // namespace

TEST_CASE("fft: gradcheck of the 1-D functions across n (odd/even/crop/pad), dims and norms") {
  manual_seed(10);
  struct Cfg {
    F::Length n;
    std::int64_t dim;
    Norm norm;
  };
  const std::vector<Cfg> cfgs = {{std::nullopt, -1, Norm::backward},
                                 {4, -1, Norm::ortho},
                                 {7, -1, Norm::forward},
                                 {6, 0, Norm::backward},
                                 {3, 0, Norm::ortho},
                                 {std::nullopt, 0, Norm::forward}};
  for (const auto& c : cfgs) {
    INFO("n " << (c.n ? *c.n : -1) << " dim " << c.dim << " norm " << norm_name(c.norm));
    Tensor z = randn({3, 5}, complex128).requires_grad_();
    Tensor r = randn({3, 5}, float64).requires_grad_();
    auto n = c.n;
    auto dim = c.dim;
    auto norm = c.norm;
    CHECK(gc([=](const Tensor& x) { return F::fft(x, n, dim, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::fft(x, n, dim, norm); }, r));  // real input promoted
    CHECK(gc([=](const Tensor& x) { return F::ifft(x, n, dim, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::rfft(x, n, dim, norm); }, r));
    CHECK(gc([=](const Tensor& x) { return F::ihfft(x, n, dim, norm); }, r));
    CHECK(gc([=](const Tensor& x) { return F::irfft(x, n, dim, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::hfft(x, n, dim, norm); }, z));
  }
}

TEST_CASE("fft: gradcheck of the 2-D and n-D functions across s (odd/even), dims and norms") {
  manual_seed(11);
  struct Cfg {
    F::Sizes s;
    Dims dims;
    Norm norm;
  };
  const std::vector<Cfg> cfgs = {{std::nullopt, {0, 1}, Norm::backward},
                                 {Dims{3, 5}, {0, 1}, Norm::ortho},
                                 {Dims{4, 2}, {1, 0}, Norm::forward},
                                 {Dims{2, 3}, {-1, 0}, Norm::backward}};
  for (const auto& c : cfgs) {
    INFO("s " << (c.s ? dims_str(*c.s) : "none") << " dims " << dims_str(c.dims) << " norm " << norm_name(c.norm));
    Tensor z = randn({3, 4}, complex128).requires_grad_();
    Tensor r = randn({3, 4}, float64).requires_grad_();
    auto s = c.s;
    auto d = c.dims;
    auto norm = c.norm;
    CHECK(gc([=](const Tensor& x) { return F::fft2(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::ifft2(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::rfft2(x, s, d, norm); }, r));
    CHECK(gc([=](const Tensor& x) { return F::irfft2(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::hfft2(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::ihfft2(x, s, d, norm); }, r));
    CHECK(gc([=](const Tensor& x) { return F::fftn(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::ifftn(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::rfftn(x, s, d, norm); }, r));
    CHECK(gc([=](const Tensor& x) { return F::irfftn(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::hfftn(x, s, d, norm); }, z));
    CHECK(gc([=](const Tensor& x) { return F::ihfftn(x, s, d, norm); }, r));
  }
  // 3-D inputs with default dims (all) and with s only (last dims)
  Tensor z3 = randn({2, 3, 3}, complex128).requires_grad_();
  Tensor r3 = randn({2, 3, 3}, float64).requires_grad_();
  CHECK(gc([](const Tensor& x) { return F::fftn(x); }, z3));
  CHECK(gc([](const Tensor& x) { return F::irfftn(x); }, z3));
  CHECK(gc([](const Tensor& x) { return F::hfftn(x, Dims{3, 5}); }, z3));
  CHECK(gc([](const Tensor& x) { return F::rfftn(x, Dims{4}); }, r3));
  CHECK(gc([](const Tensor& x) { return F::ihfftn(x, std::nullopt, Dims{2, 0}, Norm::ortho); }, r3));
}

TEST_CASE("fft: gradcheck of fftshift / ifftshift") {
  manual_seed(12);
  Tensor z = randn({3, 4}, complex128).requires_grad_();
  Tensor r = randn({3, 5}, float64).requires_grad_();
  CHECK(gc([](const Tensor& x) { return F::fftshift(x); }, z));
  CHECK(gc([](const Tensor& x) { return F::ifftshift(x); }, r));
  CHECK(gc([](const Tensor& x) { return F::fftshift(x, Dims{-1}); }, r));
  CHECK(gc([](const Tensor& x) { return F::ifftshift(x, Dims{0}); }, z));
  CHECK(ggc([](const Tensor& x) { return F::fftshift(x) * x; }, r));
}

TEST_CASE("fft: gradgradcheck of the three primitives (c2c, r2c, c2r), odd and even lengths") {
  manual_seed(13);
  Tensor z = randn({2, 5}, complex128).requires_grad_();
  Tensor z6 = randn({2, 4}, complex128).requires_grad_();
  Tensor r = randn({2, 5}, float64).requires_grad_();
  Tensor r6 = randn({2, 6}, float64).requires_grad_();
  // plain primitives
  CHECK(ggc([](const Tensor& x) { return F::fft(x); }, z));
  CHECK(ggc([](const Tensor& x) { return F::rfft(x, std::nullopt, -1, Norm::ortho); }, r));
  CHECK(ggc([](const Tensor& x) { return F::rfft(x); }, r6));
  CHECK(ggc([](const Tensor& x) { return F::irfft(x, 5, -1, Norm::forward); }, z));
  CHECK(ggc([](const Tensor& x) { return F::irfft(x); }, z6));
  // with nonlinearities, so second derivatives are non-trivial
  CHECK(ggc([](const Tensor& x) { return F::fft(x) * F::fft(x, std::nullopt, 0); }, z));
  CHECK(ggc([](const Tensor& x) { return F::irfft(F::rfft(x) * F::rfft(x), 6); }, r6));
  CHECK(ggc([](const Tensor& x) { return F::rfft(F::irfft(x, 7) * F::irfft(x, 7)); }, z));
  CHECK(ggc([](const Tensor& x) { return F::irfft2(x * x, Dims{2, 5}, {0, 1}, Norm::ortho); }, z6));
  CHECK(ggc([](const Tensor& x) { return F::rfft2(x.tanh(), std::nullopt, {1, 0}); }, r));
}

TEST_CASE("fft: backward through a spectral filter matches the adjoint identity") {
  // <irfft(rfft(x) * w), g> == <x, grad> for the linear map x -> irfft(rfft(x) * w, n)
  manual_seed(14);
  const std::int64_t n = 33;
  Tensor x = randn({4, n}, float64).requires_grad_();
  Tensor w = randn({n / 2 + 1}, complex128).requires_grad_();
  Tensor y = F::irfft(F::rfft(x) * w, n);
  Tensor g = randn({4, n}, float64);
  (y * g).sum().backward();
  const ld lhs = [&] {
    ld s = 0;
    auto yv = to_vector<double>(y.detach()), gv = to_vector<double>(g);
    for (std::size_t i = 0; i < yv.size(); ++i) s += ld(yv[i]) * gv[i];
    return s;
  }();
  const ld rhs = [&] {
    ld s = 0;
    auto xv = to_vector<double>(x.detach()), gx = to_vector<double>(x.grad());
    for (std::size_t i = 0; i < xv.size(); ++i) s += ld(xv[i]) * gx[i];
    return s;
  }();
  CHECK(std::abs(lhs - rhs) <= 1e-10 * (std::abs(lhs) + 1));
  REQUIRE(w.grad().defined());
  CHECK(w.grad().shape() == Shape{n / 2 + 1});
}

// =====================================================================================================
// Plan cache, planner effort, wisdom, threads
// =====================================================================================================
TEST_CASE("fft: plan cache size, capacity, eviction and clearing") {
  const std::size_t cap0 = F::plan_cache_capacity();
  F::clear_plan_cache();
  CHECK(F::plan_cache_size() == 0);
  Tensor a = randn({64}, complex128);
  Tensor ya = F::fft(a);
  CHECK(F::plan_cache_size() == 1);
  F::fft(a);  // same problem: a hit
  CHECK(F::plan_cache_size() == 1);
  F::fft(randn({64}, complex64));  // other precision: a new plan
  CHECK(F::plan_cache_size() == 2);
  F::ifft(a);  // other direction
  CHECK(F::plan_cache_size() == 3);
  F::fft(a.unsqueeze(0).expand({1, 64}).contiguous().t());  // other strides (64 x 1, stride 1 along dim 0)
  F::set_plan_cache_capacity(2);
  CHECK(F::plan_cache_size() == 2);
  for (std::int64_t n = 10; n < 20; ++n) F::fft(randn({n}, complex128));
  CHECK(F::plan_cache_size() == 2);
  CHECK(max_abs_diff(F::fft(a), ya) == 0);  // evicted plans are re-made and still give the same result
  F::set_plan_cache_capacity(0);            // no caching at all still works
  CHECK(F::plan_cache_size() == 0);
  CHECK(max_abs_diff(F::fft(a), ya) == 0);
  CHECK(F::plan_cache_size() == 0);
  F::set_plan_cache_capacity(cap0);
  F::clear_plan_cache();
  CHECK(F::plan_cache_size() == 0);
}

TEST_CASE("fft: measured plans give correct results and never touch the input; wisdom files") {
  manual_seed(15);
  const std::string path = "phasor_test_fft_wisdom.txt";
  F::set_planner_effort(F::Effort::measure);
  CHECK(F::planner_effort() == F::Effort::measure);
  for (std::int64_t n : {64, 100, 243}) {
    Tensor c = randn({8, n}, complex128);
    Tensor r = randn({8, n}, float32);
    Tensor h = randn({8, n / 2 + 1}, complex64);
    const auto cv = to_vector<cd>(c);
    const auto rv = to_vector<float>(r);
    const auto hv = to_vector<std::complex<float>>(h);
    Tensor yc = F::fft(c), yr = F::rfft(r), yh = F::irfft(h, n);
    CHECK(to_vector<cd>(c) == cv);  // planning ran on scratch arrays
    CHECK(to_vector<float>(r) == rv);
    CHECK(to_vector<std::complex<float>>(h) == hv);
    std::int64_t np = 0;
    const Arr rc = reference(Fn::fft, arr_of(c), {1}, {n}, Norm::backward, np);
    check_ref(yc, rc, complex128, np, "measured fft");
    const Arr rr = reference(Fn::rfft, arr_of(r), {1}, {n}, Norm::backward, np);
    check_ref(yr, rr, complex64, np, "measured rfft");
    const Arr rh = reference(Fn::irfft, arr_of(h), {1}, {n}, Norm::backward, np);
    check_ref(yh, rh, float32, np, "measured irfft");
  }
  F::set_planner_effort(F::Effort::estimate);
  // wisdom: export, forget, import back
  F::export_wisdom(path);
  {
    std::ifstream f(path);
    std::string first;
    std::getline(f, first);
    CHECK(first.rfind("phasor-fftw-wisdom 1 ", 0) == 0);
  }
  F::forget_wisdom();
  CHECK_NOTHROW(F::import_wisdom(path));
  // missing and corrupt files
  CHECK_THROWS_WITH_AS(F::import_wisdom("/nonexistent/dir/wisdom.txt"),
                       doctest::Contains("[import_wisdom] cannot open wisdom file '/nonexistent/dir/wisdom.txt'"),
                       Error);
  {
    std::ofstream f(path, std::ios::trunc);
    f << "this is not wisdom\n";
  }
  CHECK_THROWS_WITH_AS(F::import_wisdom(path), doctest::Contains("is not a valid phasor wisdom file"), Error);
  {
    std::ofstream f(path, std::ios::trunc);
    const std::string junk = "(fftw-3.3.10 fftw_wisdom #xgarbage";
    f << "phasor-fftw-wisdom 1 " << junk.size() << " 0\n" << junk;
  }
  CHECK_THROWS_WITH_AS(F::import_wisdom(path), doctest::Contains("holds corrupt double wisdom"), Error);
  {
    std::ofstream f(path, std::ios::trunc);
    f << "phasor-fftw-wisdom 1 100 100\n(short";  // truncated
  }
  CHECK_THROWS_WITH_AS(F::import_wisdom(path), doctest::Contains("corrupt or truncated"), Error);
  CHECK_THROWS_WITH_AS(F::export_wisdom("/nonexistent/dir/w.txt"), doctest::Contains("[export_wisdom] cannot open"),
                       Error);
  std::remove(path.c_str());
  // transforms still work after the failed imports
  Tensor c = randn({16}, complex128);
  CHECK(max_abs_diff(F::ifft(F::fft(c)), c) < 1e-14);
}

TEST_CASE("fft: large transforms use several threads and agree with one thread") {
  manual_seed(16);
  const int t0 = get_num_threads();
  Tensor x = randn({512, 1024}, complex128);
  set_num_threads(1);
  Tensor y1 = F::fft2(x);
  set_num_threads(std::max(2, t0));
  Tensor y2 = F::fft2(x);
  set_num_threads(t0);
  CHECK(max_abs_diff(y1, y2) <= 1e-9);
}

TEST_CASE("fft: concurrent calls from 8 threads equal serial results") {
  manual_seed(17);
  struct Job {
    std::function<Tensor(const Tensor&)> f;
    Tensor x;
  };
  std::vector<Job> jobs = {
      {[](const Tensor& x) { return F::fft(x); }, randn({16}, complex128)},
      {[](const Tensor& x) { return F::fft(x); }, randn({3, 17}, complex64)},
      {[](const Tensor& x) { return F::rfft(x); }, randn({64}, float64)},
      {[](const Tensor& x) { return F::irfft(x, 199); }, randn({100}, complex128)},
      {[](const Tensor& x) { return F::ifft(x, std::nullopt, 0); }, randn({243, 2}, complex64)},
      {[](const Tensor& x) { return F::rfft(x); }, randn({1009}, float32)},
      {[](const Tensor& x) {
         return F::fft2(x, std::nullopt, {0, 1}, Norm::ortho);
       },
       randn({30, 40}, complex128)},
      {[](const Tensor& x) { return F::hfft(x); }, randn({4, 2049}, complex64)},
      {[](const Tensor& x) { return F::irfftn(x); }, randn({6, 7, 8}, complex128)},
  };
  for (int phase = 0; phase < 2; ++phase) {
    // phase 1 uses a tiny cache so plans are evicted (and destroyed) while other threads run them
    const std::size_t cap0 = F::plan_cache_capacity();
    if (phase == 1) F::set_plan_cache_capacity(3);
    std::vector<std::vector<cd>> serial;
    for (auto& j : jobs) serial.push_back(to_vector<cd>(j.f(j.x)));
    std::atomic<int> mismatches{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        try {
          for (int i = 0; i < 200; ++i) {
            const std::size_t k = static_cast<std::size_t>(t + 3 * i) % jobs.size();
            if (to_vector<cd>(jobs[k].f(jobs[k].x)) != serial[k]) ++mismatches;
          }
        } catch (...) {
          ++errors;
        }
      });
    for (auto& th : threads) th.join();
    CHECK(mismatches.load() == 0);
    CHECK(errors.load() == 0);
    F::set_plan_cache_capacity(cap0);
  }
}

// =====================================================================================================
// Bad input
// =====================================================================================================
TEST_CASE("fft: bad input throws phasor::Error naming the op and the value, inputs unchanged") {
  Tensor c = randn({4, 6}, complex64);
  Tensor r = randn({4, 6}, float32);
  const auto cv = to_vector<std::complex<float>>(c);
  const auto rv = to_vector<float>(r);
  // n < 1
  CHECK_THROWS_WITH_AS(F::fft(c, 0), doctest::Contains("[fft] invalid number of data points n = 0"), Error);
  CHECK_THROWS_WITH_AS(F::rfft(r, -3), doctest::Contains("[rfft] invalid number of data points n = -3"), Error);
  CHECK_THROWS_WITH_AS(F::irfft(c, 0), doctest::Contains("[irfft] invalid number of data points n = 0"), Error);
  CHECK_THROWS_WITH_AS(F::ihfft(r, 0), doctest::Contains("[ihfft] invalid number of data points n = 0"), Error);
  CHECK_THROWS_WITH_AS(F::hfft(c, -1), doctest::Contains("[hfft] invalid number of data points n = -1"), Error);
  CHECK_THROWS_WITH_AS(F::ifft(c, 0), doctest::Contains("[ifft] invalid number of data points n = 0"), Error);
  // s entries < 1
  CHECK_THROWS_WITH_AS(F::fft2(c, Dims{0, 4}), doctest::Contains("[fft2] invalid number of data points in s = (0, 4)"),
                       Error);
  CHECK_THROWS_WITH_AS(F::rfftn(r, Dims{4, -2}),
                       doctest::Contains("[rfftn] invalid number of data points in s = (4, -2)"), Error);
  CHECK_THROWS_WITH_AS(F::irfft2(c, Dims{3, 0}),
                       doctest::Contains("[irfft2] invalid number of data points in s = (3, 0)"), Error);
  // dims out of range or repeated
  CHECK_THROWS_WITH_AS(F::fft(c, std::nullopt, 2), doctest::Contains("[fft] dim 2 in dims = (2,) out of range"), Error);
  CHECK_THROWS_WITH_AS(F::rfft(r, std::nullopt, -3), doctest::Contains("[rfft] dim -3 in dims = (-3,) out of range"),
                       Error);
  CHECK_THROWS_WITH_AS(F::fftn(c, std::nullopt, Dims{0, 5}),
                       doctest::Contains("[fftn] dim 5 in dims = (0, 5) out of range"), Error);
  CHECK_THROWS_WITH_AS(F::fft2(c, std::nullopt, {1, -1}),
                       doctest::Contains("[fft2] dim -1 appears more than once in dims = (1, -1)"), Error);
  CHECK_THROWS_WITH_AS(F::irfftn(c, std::nullopt, Dims{0, 0}),
                       doctest::Contains("[irfftn] dim 0 appears more than once"), Error);
  CHECK_THROWS_WITH_AS(F::fft(scalar_tensor(1.0)),
                       doctest::Contains("[fft] dim -1 in dims = (-1,) out of range for a tensor of 0 dims"), Error);
  // len(s) != len(dims), and s longer than the input's rank
  CHECK_THROWS_WITH_AS(F::fftn(c, Dims{4, 4, 4}, Dims{0, 1}),
                       doctest::Contains("[fftn] s = (4, 4, 4) and dims = (0, 1) must have the same length"), Error);
  CHECK_THROWS_WITH_AS(F::rfft2(r, Dims{4}),
                       doctest::Contains("[rfft2] s = (4,) and dims = (-2, -1) must have the same length"), Error);
  CHECK_THROWS_WITH_AS(F::ifftn(c, Dims{2, 2, 2}),
                       doctest::Contains("[ifftn] s = (2, 2, 2) has more entries than the input's 2 dims"), Error);
  // complex input to rfft / ihfft
  CHECK_THROWS_WITH_AS(F::rfft(c),
                       doctest::Contains("[rfft] expected a real input tensor, got complex64 of shape (4, 6)"), Error);
  CHECK_THROWS_WITH_AS(F::ihfft(c), doctest::Contains("[ihfft] expected a real input tensor, got complex64"), Error);
  CHECK_THROWS_WITH_AS(F::rfft2(c), doctest::Contains("[rfft2] expected a real input tensor"), Error);
  CHECK_THROWS_WITH_AS(F::ihfftn(c), doctest::Contains("[ihfftn] expected a real input tensor"), Error);
  // real transforms over no dims
  CHECK_THROWS_WITH_AS(F::rfftn(r, std::nullopt, Dims{}), doctest::Contains("[rfftn] must transform at least one dim"),
                       Error);
  CHECK_THROWS_WITH_AS(F::hfftn(c, std::nullopt, Dims{}), doctest::Contains("[hfftn] must transform at least one dim"),
                       Error);
  // undefined tensors
  CHECK_THROWS_WITH_AS(F::fft(Tensor()), doctest::Contains("[fft] got an undefined tensor"), Error);
  // inputs unchanged
  CHECK(to_vector<std::complex<float>>(c) == cv);
  CHECK(to_vector<float>(r) == rv);
}
