// tests/test_sampling.cpp - interpolate (every mode), pixel_shuffle / pixel_unshuffle, affine_grid and
// grid_sample against direct loops in double written from the documented formulas (plus hand-checked
// small cases), gradcheck / gradgradcheck in float64, the modules and every error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace phasor;
using phasor::test::check_close;
using phasor::test::vals;
namespace F = phasor::nn::functional;

namespace {

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

/// Row-major offset of multi-index i in shape s.
std::int64_t offset(const Shape& s, const Shape& i) {
  std::int64_t o = 0;
  for (std::size_t d = 0; d < s.size(); ++d) o = o * s[d] + i[d];
  return o;
}

/// Multi-index of flat position p in shape s.
Shape unravel(std::int64_t p, const Shape& s) {
  Shape i(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    i[d] = p % s[d];
    p /= s[d];
  }
  return i;
}

/// Keys' cubic convolution kernel with A = -0.75 at distance d.
double keys(double d) {
  const double A = -0.75, a = std::fabs(d);
  if (a <= 1) return (A + 2) * a * a * a - (A + 3) * a * a + 1;
  if (a < 2) return A * a * a * a - 5 * A * a * a + 8 * A * a - 4 * A;
  return 0;
}

/// The (input position, weight) pairs output position o of one dim draws on, from the documented rules.
std::vector<std::pair<std::int64_t, double>> taps_1d(const std::string& mode, std::int64_t in, std::int64_t out,
                                                     std::int64_t o, bool align, std::optional<double> sf,
                                                     bool aa = false) {
  if (aa) {
    // antialias (torch / PIL): filter centred at s (o + 0.5), widened by s = in/out (or 1/scale_factor, or
    // (in-1)/(out-1) with align_corners) when s > 1, over the pixels j in [(int)(c - support + 0.5),
    // (int)(c + support + 0.5)) inside the input, at their centres j + 0.5, normalised
    const double s = align ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0) : sf ? 1.0 / *sf : double(in) / double(out);
    const double width = mode == "bicubic" ? 2.0 : 1.0;  // half width at scale 1
    const double stretch = s > 1 ? s : 1.0;
    const double c = s * (o + 0.5), support = width * stretch;
    std::vector<std::pair<std::int64_t, double>> r;
    double total = 0;
    for (std::int64_t j = 0; j < in; ++j) {
      if (j < static_cast<std::int64_t>(c - support + 0.5) || j >= static_cast<std::int64_t>(c + support + 0.5)) continue;
      const double x = std::fabs((j + 0.5 - c) / stretch);
      double w;
      if (mode == "bilinear") w = std::max(0.0, 1 - x);
      else {  // Keys with A = -0.5
        const double A = -0.5;
        w = x <= 1 ? (A + 2) * x * x * x - (A + 3) * x * x + 1 : x < 2 ? A * (x * x * x - 5 * x * x + 8 * x - 4) : 0.0;
      }
      r.emplace_back(j, w);
      total += w;
    }
    for (auto& e : r) e.second /= total;
    return r;
  }
  if (mode == "nearest" || mode == "nearest-exact") {
    // torch: scale = 1/scale_factor (or in/out) in float, source floor(o * scale) (legacy nearest, which copies
    // when out == in and halves when out == 2 in) or floor((o + 0.5) * scale) (exact), capped at in - 1
    const float scale = sf ? static_cast<float>(1.0 / *sf) : static_cast<float>(in) / static_cast<float>(out);
    std::int64_t s;
    if (mode == "nearest-exact") s = static_cast<std::int64_t>(std::floor(static_cast<float>((o + 0.5) * scale)));
    else if (out == in) s = o;
    else if (out == 2 * in) s = o / 2;
    else s = static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale));
    return {{std::min(s, in - 1), 1.0}};
  }
  if (mode == "area") {
    const auto start = static_cast<std::int64_t>(std::floor(static_cast<double>(o * in) / static_cast<double>(out)));
    const auto end = static_cast<std::int64_t>(std::ceil(static_cast<double>((o + 1) * in) / static_cast<double>(out)));
    std::vector<std::pair<std::int64_t, double>> r;
    for (std::int64_t i = start; i < end; ++i) r.emplace_back(i, 1.0 / static_cast<double>(end - start));
    return r;
  }
  const bool cubic = mode == "bicubic";
  double src;
  if (align) src = out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else {
    const double scale = sf ? 1.0 / *sf : static_cast<double>(in) / static_cast<double>(out);
    src = (static_cast<double>(o) + 0.5) * scale - 0.5;
    if (!cubic && src < 0) src = 0;
  }
  const double fl = std::floor(src);
  if (cubic) {
    std::vector<std::pair<std::int64_t, double>> r;
    for (int j = -1; j <= 2; ++j) {
      const double p = fl + j;
      r.emplace_back(std::clamp<std::int64_t>(static_cast<std::int64_t>(p), 0, in - 1), keys(src - p));
    }
    return r;
  }
  const auto i0 = static_cast<std::int64_t>(fl);
  if (i0 >= in - 1) return {{in - 1, 1.0}};
  return {{i0, 1.0 - (src - fl)}, {i0 + 1, src - fl}};
}

/// interpolate by a direct loop: every output point sums the product of its per-dim taps.
std::vector<double> interp_ref(const Tensor& x, const Shape& out, const std::string& mode, bool align,
                               std::vector<std::optional<double>> sf, bool aa = false) {
  const Shape xs = x.shape();
  const std::vector<double> xv = vals(x);
  const std::size_t nd = xs.size() - 2;
  const Shape in(xs.begin() + 2, xs.end());
  Shape full{xs[0], xs[1]};
  full.insert(full.end(), out.begin(), out.end());
  std::vector<double> r(static_cast<std::size_t>(numel_of(full)));
  for (std::int64_t p = 0; p < numel_of(full); ++p) {
    const Shape i = unravel(p, full);
    std::vector<std::vector<std::pair<std::int64_t, double>>> t;
    for (std::size_t d = 0; d < nd; ++d) t.push_back(taps_1d(mode, in[d], out[d], i[d + 2], align, sf[d], aa));
    double acc = 0;
    std::vector<std::size_t> k(nd, 0);
    while (true) {
      Shape src{i[0], i[1]};
      double w = 1;
      for (std::size_t d = 0; d < nd; ++d) {
        src.push_back(t[d][k[d]].first);
        w *= t[d][k[d]].second;
      }
      acc += w * xv[static_cast<std::size_t>(offset(xs, src))];
      std::size_t d = 0;
      while (d < nd && ++k[d] == t[d].size()) k[d++] = 0;
      if (d == nd) break;
    }
    r[static_cast<std::size_t>(p)] = acc;
  }
  return r;
}

/// Reflects c into [lo, hi] by repeated mirroring.
double reflect_ref(double c, double lo, double hi) {
  if (lo == hi) return 0;
  while (c < lo || c > hi) c = c < lo ? 2 * lo - c : 2 * hi - c;
  return c;
}

/// The padding mode applied to pixel coordinate c of a dim of size n.
double pad_ref(double c, const std::string& pad, std::int64_t n, bool align) {
  if (pad == "zeros") return c;
  if (pad == "reflection") c = align ? reflect_ref(c, 0, n - 1) : reflect_ref(c, -0.5, n - 0.5);
  return std::clamp(c, 0.0, static_cast<double>(n - 1));
}

/// grid_sample by a direct loop over the output points.
std::vector<double> grid_ref(const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& pad,
                             bool align) {
  const Shape xs = x.shape(), gs = grid.shape();
  const std::vector<double> xv = vals(x), gv = vals(grid);
  const std::size_t nd = xs.size() - 2;
  const Shape O(gs.begin() + 1, gs.end() - 1);
  const std::int64_t N = xs[0], C = xs[1], P = numel_of(O);
  std::vector<double> r;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t p = 0; p < P; ++p) {
        std::vector<double> u(nd);
        for (std::size_t k = 0; k < nd; ++k) {
          const double g = gv[static_cast<std::size_t>((n * P + p) * static_cast<std::int64_t>(nd) +
                                                       static_cast<std::int64_t>(nd - 1 - k))];
          const double sz = static_cast<double>(xs[k + 2]);
          u[k] = align ? (g + 1) / 2 * (sz - 1) : ((g + 1) * sz - 1) / 2;
          if (mode != "bicubic") u[k] = pad_ref(u[k], pad, xs[k + 2], align);
        }
        // the value at integer position q (padding applied for bicubic), 0 outside
        const auto at = [&](std::vector<double> q) {
          Shape idx{n, c};
          for (std::size_t k = 0; k < nd; ++k) {
            if (mode == "bicubic") q[k] = pad_ref(q[k], pad, xs[k + 2], align);
            if (q[k] < 0 || q[k] > static_cast<double>(xs[k + 2] - 1)) return 0.0;
            idx.push_back(static_cast<std::int64_t>(q[k]));
          }
          return xv[static_cast<std::size_t>(offset(xs, idx))];
        };
        double acc = 0;
        if (mode == "nearest") {
          std::vector<double> q;
          for (double v : u) q.push_back(std::nearbyint(v));
          acc = at(q);
        } else if (mode == "bilinear") {
          for (int corner = 0; corner < (1 << nd); ++corner) {
            std::vector<double> q;
            double w = 1;
            for (std::size_t k = 0; k < nd; ++k) {
              const double f = std::floor(u[k]), t = u[k] - f;
              const bool up = (corner >> k) & 1;
              q.push_back(f + up);
              w *= up ? t : 1 - t;
            }
            acc += w * at(q);
          }
        } else {
          const double fy = std::floor(u[0]), fx = std::floor(u[1]);
          for (int a = -1; a <= 2; ++a)
            for (int b = -1; b <= 2; ++b) acc += keys(u[0] - (fy + a)) * keys(u[1] - (fx + b)) * at({fy + a, fx + b});
        }
        r.push_back(acc);
      }
  return r;
}

/// A grid (N, *O, nd) for x's spatial sizes whose pixel coordinates sit 0.15-0.35 past an integer (away from
/// the kinks of the interpolation at integers and of reflection at half-integers), some outside the input.
Tensor smooth_grid(const Shape& xs, std::int64_t N, const Shape& O, bool align) {
  const std::size_t nd = xs.size() - 2;
  Shape gs{N};
  gs.insert(gs.end(), O.begin(), O.end());
  gs.push_back(static_cast<std::int64_t>(nd));
  const std::vector<double> r = vals(rand({numel_of(gs), 2}, float64));
  std::vector<double> g;
  for (std::int64_t i = 0; i < numel_of(gs); ++i) {
    const std::int64_t k = static_cast<std::int64_t>(nd) - 1 - i % static_cast<std::int64_t>(nd);  // x's spatial dim
    const double n = static_cast<double>(xs[static_cast<std::size_t>(k) + 2]);
    const double pix = std::floor(r[static_cast<std::size_t>(2 * i)] * (n + 3)) - 2 + 0.15 + 0.2 * r[static_cast<std::size_t>(2 * i + 1)];
    g.push_back(align ? 2 * pix / (n - 1) - 1 : (2 * pix + 1) / n - 1);
  }
  return from_vector(g, gs);
}

}  // namespace

TEST_CASE("interpolate: hand-checked small cases") {
  const Tensor x = test::seq({1, 1, 2, 2});  // [[0, 1], [2, 3]]
  // 2x bilinear, align_corners=false: rows and columns at source -0.25 (clamped), 0.25, 0.75, 1.25 (capped)
  check_close(F::interpolate(x, std::nullopt, std::vector<double>{2}, "bilinear"),
              {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3});
  // align_corners=true: sources 0, 1/3, 2/3, 1
  const double t = 1.0 / 3;
  check_close(F::interpolate(x, Shape{4, 4}, std::nullopt, "bilinear", true),
              {0, t, 2 * t, 1, 2 * t, 1, 4 * t, 5 * t, 4 * t, 5 * t, 2, 7 * t, 2, 7 * t, 8 * t, 3});
  // bicubic of the linear image col + 2 row: each line [0, 1] goes to [-0.10546875, 0.2265625, 0.7734375,
  // 1.10546875] (Keys' kernel with A = -0.75 and border-replicated taps, worked by hand)
  const std::vector<double> a{-0.10546875, 0.2265625, 0.7734375, 1.10546875};
  std::vector<double> want;
  for (double ai : a)
    for (double aj : a) want.push_back(aj + 2 * ai);
  check_close(F::interpolate(x, std::nullopt, std::vector<double>{2}, "bicubic"), want);
  // nearest 3 -> 5: scale 0.6, sources floor(0, 0.6, 1.2, 1.8, 2.4); nearest-exact: floor(0.3, 0.9, 1.5, 2.1, 2.7)
  const Tensor l = from_vector(std::vector<double>{10, 20, 30}, Shape{1, 1, 3});
  check_close(F::interpolate(l, Shape{5}), {10, 10, 20, 20, 30});
  check_close(F::interpolate(l, Shape{5}, std::nullopt, "nearest-exact"), {10, 10, 20, 30, 30});
  // area 5 -> 2: windows [0, 3) and [2, 5)
  const Tensor l5 = from_vector(std::vector<double>{1, 2, 3, 4, 5}, Shape{1, 1, 5});
  check_close(F::interpolate(l5, Shape{2}, std::nullopt, "area"), {2, 4});
  // antialiased bilinear 4 -> 2: the triangle widened to support 2 around 1 and 3, taps (3, 3, 1) / 7
  check_close(F::interpolate(test::seq({1, 1, 1, 4}), Shape{1, 2}, std::nullopt, "bilinear", std::nullopt, std::nullopt, true),
              {5.0 / 7, 16.0 / 7});
  // linear 2 -> 3 with align_corners: the midpoint
  check_close(F::interpolate(from_vector(std::vector<double>{10, 20}, Shape{1, 1, 2}), Shape{3}, std::nullopt, "linear", true),
              {10, 15, 20});
}

TEST_CASE("interpolate: every mode against the direct loop, up and down, sizes and scale factors") {
  manual_seed(1);
  struct Case {
    std::string mode;
    Shape in, out;  // spatial
    std::optional<std::vector<double>> sf;
    bool align;
    bool recompute;
  };
  const std::vector<Case> cases = {
      {"nearest", {7}, {12}, std::nullopt, false, false},
      {"nearest", {7}, {3}, std::nullopt, false, false},
      {"nearest", {5, 6}, {}, std::vector<double>{1.7, 0.6}, false, false},
      {"nearest", {5, 6}, {}, std::vector<double>{1.7, 0.6}, false, true},
      {"nearest", {10}, {}, std::vector<double>{1.05}, false, false},  // out == in: a copy (torch's legacy rule)
      {"nearest", {3, 4, 5}, {6, 2, 5}, std::nullopt, false, false},
      {"nearest", {4, 3}, {}, std::vector<double>{2}, false, false},
      {"nearest-exact", {7}, {12}, std::nullopt, false, false},
      {"nearest-exact", {5, 6}, {}, std::vector<double>{1.7, 0.45}, false, false},
      {"nearest-exact", {3, 4, 5}, {2, 7, 5}, std::nullopt, false, false},
      {"linear", {7}, {12}, std::nullopt, false, false},
      {"linear", {7}, {12}, std::nullopt, true, false},
      {"linear", {9}, {4}, std::nullopt, false, false},
      {"linear", {5}, {}, std::vector<double>{1.7}, false, false},
      {"linear", {5}, {}, std::vector<double>{1.7}, false, true},
      {"linear", {5}, {1}, std::nullopt, true, false},
      {"bilinear", {5, 6}, {8, 3}, std::nullopt, false, false},
      {"bilinear", {5, 6}, {8, 3}, std::nullopt, true, false},
      {"bilinear", {4, 5}, {}, std::vector<double>{2.5, 0.7}, false, false},
      {"bilinear", {4, 5}, {}, std::vector<double>{2.5, 0.7}, true, false},
      {"bicubic", {5, 6}, {9, 4}, std::nullopt, false, false},
      {"bicubic", {5, 6}, {9, 4}, std::nullopt, true, false},
      {"bicubic", {4, 5}, {}, std::vector<double>{1.6, 0.5}, false, false},
      {"trilinear", {3, 4, 5}, {5, 3, 8}, std::nullopt, false, false},
      {"trilinear", {3, 4, 5}, {5, 3, 8}, std::nullopt, true, false},
      {"trilinear", {3, 4, 5}, {}, std::vector<double>{1.5, 2, 0.5}, false, false},
      {"area", {10}, {3}, std::nullopt, false, false},
      {"area", {11}, {2}, std::nullopt, false, false},  // windows of 6 (more than 4 taps)
      {"bilinear", {9, 6}, {10, 11}, std::nullopt, false, false},  // last dim enlarged, the one before >= 8
      {"area", {7, 9}, {3, 4}, std::nullopt, false, false},
      {"area", {4, 5}, {7, 5}, std::nullopt, false, false},  // area upsampling: windows of one or two
      {"area", {6, 4, 5}, {}, std::vector<double>{0.5, 0.75, 1.4}, false, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.in);
    CAPTURE(c.align);
    Shape xs{2, 3};
    xs.insert(xs.end(), c.in.begin(), c.in.end());
    const Tensor x = randn(xs, float64);
    const bool interp = c.mode != "nearest" && c.mode != "nearest-exact" && c.mode != "area";
    const std::optional<bool> align = interp ? std::optional<bool>(c.align) : std::nullopt;
    Shape out = c.out;
    std::vector<std::optional<double>> sf(c.in.size());
    Tensor y;
    if (c.sf) {
      out.clear();
      for (std::size_t d = 0; d < c.in.size(); ++d) {
        const double f = (*c.sf)[c.sf->size() == 1 ? 0 : d];
        out.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(c.in[d]) * f)));
        if (!c.recompute) sf[d] = f;
      }
      y = F::interpolate(x, std::nullopt, c.sf, c.mode, align, c.recompute);
    } else {
      y = F::interpolate(x, c.out, std::nullopt, c.mode, align);
    }
    Shape want_shape{2, 3};
    want_shape.insert(want_shape.end(), out.begin(), out.end());
    REQUIRE(y.shape() == want_shape);
    check_close(y, interp_ref(x, out, c.mode, c.align, sf), 1e-12);
    // float32 agrees with the float64 result
    const Tensor y32 = F::interpolate(x.to(float32), c.sf ? std::nullopt : std::optional<Shape>(c.out), c.sf, c.mode,
                                      align, c.recompute);
    CHECK(y32.dtype() == float32);
    check_close(y32, vals(y), 1e-5);
  }
}

TEST_CASE("interpolate: antialiased bilinear and bicubic against the direct loop, gradcheck") {
  manual_seed(9);
  struct Case {
    std::string mode;
    Shape in, out;
    std::optional<std::vector<double>> sf;
    bool align;
  };
  const std::vector<Case> cases = {
      {"bilinear", {9, 7}, {4, 3}, std::nullopt, false}, {"bilinear", {4, 5}, {7, 9}, std::nullopt, false},
      {"bilinear", {9, 7}, {4, 3}, std::nullopt, true},  {"bilinear", {10, 6}, {}, std::vector<double>{0.35, 1.5}, false},
      {"bicubic", {10, 8}, {3, 5}, std::nullopt, false}, {"bicubic", {10, 8}, {3, 12}, std::nullopt, true},
      {"bicubic", {7, 9}, {}, std::vector<double>{0.4, 0.7}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.in);
    CAPTURE(c.out);
    CAPTURE(c.align);
    const Tensor x = randn({2, 2, c.in[0], c.in[1]}, float64);
    Shape out = c.out;
    std::vector<std::optional<double>> sf(2);
    if (c.sf) {
      out.clear();
      for (std::size_t d = 0; d < 2; ++d) {
        out.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(c.in[d]) * (*c.sf)[d])));
        sf[d] = (*c.sf)[d];
      }
    }
    const auto f = [&](const std::vector<Tensor>& in) {
      return F::interpolate(in[0], c.sf ? std::nullopt : std::optional<Shape>(c.out), c.sf, c.mode, c.align, std::nullopt, true);
    };
    const Tensor y = f({x});
    REQUIRE(y.shape() == Shape{2, 2, out[0], out[1]});
    check_close(y, interp_ref(x, out, c.mode, c.align, sf, true), 1e-12);
    CHECK(autodiff::gradcheck(f, {test::leaf64({1, 1, c.in[0], c.in[1]})}));
  }
}

TEST_CASE("interpolate: scale_factor's source scale differs from the size's unless recomputed") {
  manual_seed(2);
  const Tensor x = randn({1, 2, 5, 5}, float64);
  const Tensor a = F::interpolate(x, std::nullopt, std::vector<double>{1.7}, "bilinear");  // 8x8, scale 1/1.7
  const Tensor b = F::interpolate(x, Shape{8}, std::nullopt, "bilinear");                  // scale 5/8
  const Tensor c = F::interpolate(x, std::nullopt, std::vector<double>{1.7}, "bilinear", std::nullopt, true);
  CHECK(a.shape() == Shape{1, 2, 8, 8});
  const std::vector<double> av = vals(a), bv = vals(b), cv = vals(c);
  double dab = 0, dcb = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    dab = std::max(dab, std::fabs(av[i] - bv[i]));
    dcb = std::max(dcb, std::fabs(cv[i] - bv[i]));
  }
  CHECK(dab > 1e-3);
  CHECK(dcb == 0.0);
  // one size entry applies to every spatial dim; the same size as the input is a copy
  CHECK(F::interpolate(x, Shape{3}, std::nullopt, "area").shape() == Shape{1, 2, 3, 3});
  const Tensor same = F::interpolate(x, Shape{5, 5}, std::nullopt, "bilinear");
  check_close(same, vals(x), 1e-15);
  CHECK(!same.is_same(x));
  // nearest works on int64 too
  CHECK(test::ivals(F::interpolate(arange(0, 3).reshape({1, 1, 3}), Shape{6})) == test::I{0, 0, 1, 1, 2, 2});
}

TEST_CASE("interpolate: gradcheck for every mode") {
  manual_seed(3);
  struct Case {
    std::string mode;
    Shape xs, out;
    std::optional<bool> align;
  };
  const std::vector<Case> cases = {
      {"nearest", {1, 2, 5}, {8}, std::nullopt},        {"nearest", {1, 2, 4, 3}, {3, 7}, std::nullopt},
      {"nearest-exact", {1, 2, 5, 3}, {3, 5}, std::nullopt}, {"linear", {2, 2, 5}, {7}, false},
      {"linear", {2, 2, 5}, {3}, true},                 {"bilinear", {1, 2, 4, 5}, {6, 3}, false},
      {"bilinear", {1, 2, 4, 5}, {6, 3}, true},         {"bicubic", {1, 2, 4, 5}, {7, 3}, false},
      {"bicubic", {1, 1, 4, 5}, {3, 6}, true},          {"trilinear", {1, 1, 3, 4, 3}, {4, 3, 5}, false},
      {"trilinear", {1, 1, 3, 4, 3}, {2, 5, 4}, true},  {"area", {1, 2, 7, 5}, {3, 4}, std::nullopt},
      {"area", {1, 1, 3, 4, 5}, {2, 5, 3}, std::nullopt}, {"area", {1, 2, 11}, {2}, std::nullopt},
      {"bilinear", {1, 1, 8, 3}, {9, 5}, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mode);
    CAPTURE(c.xs);
    const auto f = [&](const std::vector<Tensor>& in) { return F::interpolate(in[0], c.out, std::nullopt, c.mode, c.align); };
    CHECK(autodiff::gradcheck(f, {test::leaf64(c.xs)}));
  }
  CHECK(autodiff::gradgradcheck(
      [](const std::vector<Tensor>& in) { return F::interpolate(in[0], Shape{5, 3}, std::nullopt, "bicubic"); },
      {test::leaf64({1, 1, 3, 4})}));
}

TEST_CASE("interpolate: float32 rounds the float64 result, complex parts resample apart, second derivatives") {
  manual_seed(4);
  // positive inputs and non-negative weights (bilinear, area, nearest): no cancellation, so float32 carries
  // float64's result to a few roundings relative to each value
  const Tensor x64 = rand({2, 3, 6, 7}, float64) + 0.5;
  const Tensor x32 = x64.to(float32);
  const Tensor xr = x32.to(float64);  // the float32 inputs, exactly
  for (const char* mode : {"bilinear", "area", "nearest"}) {
    CAPTURE(mode);
    for (const Shape& out : {Shape{11, 13}, Shape{4, 3}}) {
      CAPTURE(out);
      const std::vector<double> a = vals(F::interpolate(x32, out, std::nullopt, mode));
      const std::vector<double> b = vals(F::interpolate(xr, out, std::nullopt, mode));
      REQUIRE(a.size() == b.size());
      double worst = 0;
      for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
      CHECK(worst <= 1e-6);
    }
  }
  // a complex input: the real and imaginary parts interpolate independently, the weights being real
  const Tensor re = randn({2, 2, 5, 6}, float64), im = randn({2, 2, 5, 6}, float64);
  const Tensor z = complex(re, im);
  struct Case {
    std::string mode;
    Shape out;
    bool aa;
  };
  for (const Case& c : {Case{"bicubic", {9, 4}, false}, Case{"bilinear", {7, 11}, false}, Case{"area", {3, 4}, false},
                        Case{"nearest", {8, 3}, false}, Case{"bilinear", {3, 4}, true}}) {
    CAPTURE(c.mode);
    CAPTURE(c.aa);
    const auto f = [&](const Tensor& t) { return F::interpolate(t, c.out, std::nullopt, c.mode, std::nullopt, std::nullopt, c.aa); };
    const Tensor y = f(z);
    CHECK(y.dtype() == complex128);
    REQUIRE(y.shape() == Shape{2, 2, c.out[0], c.out[1]});
    check_close(real(y), vals(f(re)), 1e-14);
    check_close(imag(y), vals(f(im)), 1e-14);
    const Tensor y64 = f(z.to(complex64));
    CHECK(y64.dtype() == complex64);
    check_close(real(y64), vals(f(re.to(float32))), 1e-6);
    check_close(imag(y64), vals(f(im.to(float32))), 1e-6);
  }
  // gradients: a complex input, and second derivatives of bilinear and area (real and complex)
  const auto bil = [](const std::vector<Tensor>& in) { return F::interpolate(in[0], Shape{6, 3}, std::nullopt, "bilinear"); };
  const auto area = [](const std::vector<Tensor>& in) { return F::interpolate(in[0], Shape{2, 3}, std::nullopt, "area"); };
  const Tensor zc = complex(randn({1, 2, 4, 5}, float64), randn({1, 2, 4, 5}, float64)).requires_grad_();
  CHECK(autodiff::gradcheck(bil, {zc}));
  CHECK(autodiff::gradgradcheck(bil, {test::leaf64({1, 2, 4, 5})}));
  CHECK(autodiff::gradgradcheck(bil, {zc}));
  CHECK(autodiff::gradgradcheck(area, {test::leaf64({1, 1, 5, 7})}));
}

TEST_CASE("pixel_shuffle and pixel_unshuffle: the index formula, leading dims, round trip, gradients") {
  manual_seed(4);
  const std::int64_t r = 3, C = 2, H = 2, W = 4;
  const Tensor x = randn({2, 3, C * r * r, H, W}, float64);
  const Tensor y = F::pixel_shuffle(x, r);
  REQUIRE(y.shape() == Shape{2, 3, C, H * r, W * r});
  const std::vector<double> xv = vals(x);
  std::vector<double> want;
  for (std::int64_t b = 0; b < 6; ++b)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H * r; ++h)
        for (std::int64_t w = 0; w < W * r; ++w)
          want.push_back(xv[static_cast<std::size_t>(offset({6, C * r * r, H, W}, {b, c * r * r + (h % r) * r + w % r, h / r, w / r}))]);
  check_close(y, want, 1e-15);
  check_close(F::pixel_unshuffle(y, r), xv, 1e-15);
  CHECK(F::pixel_unshuffle(randn({4, 6, 8}), 2).shape() == Shape{16, 3, 4});
  CHECK(F::pixel_shuffle(randn({4, 6, 8}), 1).shape() == Shape{4, 6, 8});
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return F::pixel_shuffle(in[0], 2); },
                            {test::leaf64({2, 8, 2, 3})}));
  CHECK(autodiff::gradcheck([](const std::vector<Tensor>& in) { return F::pixel_unshuffle(in[0], 2); },
                            {test::leaf64({2, 2, 4, 6})}));
  nn::PixelShuffle ps(r);
  nn::PixelUnshuffle pu(r);
  check_close(ps(x), want, 1e-15);
  check_close(pu(ps(x)), xv, 1e-15);
  CHECK(ps.extra_repr() == "upscale_factor=3");
  CHECK(pu.extra_repr() == "downscale_factor=3");
}

TEST_CASE("affine_grid: closed form in 2-D and 3-D, gradcheck in theta") {
  manual_seed(5);
  for (bool align : {false, true}) {
    CAPTURE(align);
    const auto lin = [&](std::int64_t i, std::int64_t n) {
      if (n == 1) return 0.0;
      return align ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1)
                   : (2.0 * static_cast<double>(i) + 1) / static_cast<double>(n) - 1;
    };
    const Tensor th2 = randn({2, 2, 3}, float64);
    const Tensor g2 = F::affine_grid(th2, {2, 5, 3, 4}, align);
    REQUIRE(g2.shape() == Shape{2, 3, 4, 2});
    const auto t2 = vals(th2);
    std::vector<double> want;
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t h = 0; h < 3; ++h)
        for (std::int64_t w = 0; w < 4; ++w)
          for (std::int64_t i = 0; i < 2; ++i) {
            const auto T = [&](std::int64_t j) { return t2[static_cast<std::size_t>(n * 6 + i * 3 + j)]; };
            want.push_back(T(0) * lin(w, 4) + T(1) * lin(h, 3) + T(2));
          }
    check_close(g2, want);
    const Tensor th3 = randn({1, 3, 4}, float64);
    const Tensor g3 = F::affine_grid(th3, {1, 1, 2, 1, 3}, align);
    REQUIRE(g3.shape() == Shape{1, 2, 1, 3, 3});
    const auto t3 = vals(th3);
    want.clear();
    for (std::int64_t d = 0; d < 2; ++d)
      for (std::int64_t w = 0; w < 3; ++w)
        for (std::int64_t i = 0; i < 3; ++i)
          want.push_back(t3[static_cast<std::size_t>(i * 4)] * lin(w, 3) + t3[static_cast<std::size_t>(i * 4 + 1)] * lin(0, 1) +
                         t3[static_cast<std::size_t>(i * 4 + 2)] * lin(d, 2) + t3[static_cast<std::size_t>(i * 4 + 3)]);
    check_close(g3, want);
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) { return F::affine_grid(in[0], {2, 1, 3, 2}, align); },
                              {test::leaf64({2, 2, 3})}));
    CHECK(autodiff::gradcheck([&](const std::vector<Tensor>& in) { return F::affine_grid(in[0], {1, 1, 2, 3, 2}, align); },
                              {test::leaf64({1, 3, 4})}));
  }
  // the identity transform with grid_sample reproduces the input (align_corners=false: pixel centres)
  const Tensor x = randn({1, 2, 3, 5}, float64);
  const Tensor id = from_vector(std::vector<double>{1, 0, 0, 0, 1, 0}, Shape{1, 2, 3});
  check_close(F::grid_sample(x, F::affine_grid(id, {1, 2, 3, 5})), vals(x), 1e-12);
}

TEST_CASE("grid_sample: every mode and padding against the direct loop, 4-D and 5-D") {
  manual_seed(6);
  for (bool align : {false, true})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
        CAPTURE(align);
        CAPTURE(pad);
        CAPTURE(mode);
        const Tensor x = randn({2, 3, 4, 5}, float64);
        const Tensor grid = rand({2, 6, 7, 2}, float64) * 2.6 - 1.3;  // some points outside
        const Tensor y = F::grid_sample(x, grid, mode, pad, align);
        REQUIRE(y.shape() == Shape{2, 3, 6, 7});
        check_close(y, grid_ref(x, grid, mode, pad, align), 1e-11);
        check_close(F::grid_sample(x.to(float32), grid.to(float32), mode, pad, align), vals(y), 2e-4);
        if (std::string(mode) == "bicubic") continue;
        const Tensor x3 = randn({2, 2, 3, 4, 5}, float64);
        const Tensor g3 = rand({2, 2, 3, 4, 3}, float64) * 2.6 - 1.3;
        const Tensor y3 = F::grid_sample(x3, g3, mode, pad, align);
        REQUIRE(y3.shape() == Shape{2, 2, 2, 3, 4});
        check_close(y3, grid_ref(x3, g3, mode, pad, align), 1e-11);
      }
  // hand-checked: the centre of a 2x2 image is the mean; a corner point at align_corners=true is the corner
  const Tensor x = test::seq({1, 1, 2, 2});
  check_close(F::grid_sample(x, zeros({1, 1, 1, 2}, float64)), {1.5});
  check_close(F::grid_sample(x, full({1, 1, 1, 2}, 1.0, float64), "bilinear", "zeros", true), {3});
  // align_corners=false: (1, 1) is the outer edge of the last pixel, half of it out of the image
  check_close(F::grid_sample(x, full({1, 1, 1, 2}, 1.0, float64)), {0.75});
  check_close(F::grid_sample(x, full({1, 1, 1, 2}, 1.0, float64), "bilinear", "border"), {3});
}

TEST_CASE("grid_sample: gradcheck in the input and the grid") {
  manual_seed(7);
  for (bool align : {false, true})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      CAPTURE(align);
      CAPTURE(pad);
      const Shape xs{2, 2, 3, 4};
      const Tensor grid = smooth_grid(xs, 2, {3, 2}, align).requires_grad_();
      for (const char* mode : {"bilinear", "bicubic"}) {
        CAPTURE(mode);
        CHECK(autodiff::gradcheck(
            [&](const std::vector<Tensor>& in) { return F::grid_sample(in[0], in[1], mode, pad, align); },
            {test::leaf64(xs), grid}));
      }
      CHECK(autodiff::gradcheck(
          [&](const std::vector<Tensor>& in) { return F::grid_sample(in[0], grid.detach(), "nearest", pad, align); },
          {test::leaf64(xs)}));
      const Shape xs3{1, 2, 3, 2, 4};
      CHECK(autodiff::gradcheck(
          [&](const std::vector<Tensor>& in) { return F::grid_sample(in[0], in[1], "bilinear", pad, align); },
          {test::leaf64(xs3), smooth_grid(xs3, 1, {2, 2, 2}, align).requires_grad_()}));
    }
  CHECK(autodiff::gradgradcheck(
      [&](const std::vector<Tensor>& in) { return F::grid_sample(in[0], in[1]); },
      {test::leaf64({1, 1, 3, 4}), smooth_grid({1, 1, 3, 4}, 1, {2, 2}, false).requires_grad_()}));
}

TEST_CASE("Upsample modules") {
  manual_seed(8);
  const Tensor x = randn({1, 2, 3, 4}, float64);
  nn::Upsample up(std::nullopt, std::vector<double>{2}, "bilinear");
  check_close(up(x), vals(F::interpolate(x, std::nullopt, std::vector<double>{2}, "bilinear")), 1e-15);
  CHECK(up.extra_repr() == "scale_factor=2.0, mode='bilinear'");
  nn::Upsample sized(Shape{5, 6});
  CHECK(sized(x).shape() == Shape{1, 2, 5, 6});
  CHECK(sized.extra_repr() == "size=(5, 6), mode='nearest'");
  nn::UpsamplingNearest2d un(std::nullopt, std::vector<double>{3});
  check_close(un(x), vals(F::interpolate(x, std::nullopt, std::vector<double>{3})), 1e-15);
  CHECK(un.name() == "UpsamplingNearest2d");
  nn::UpsamplingBilinear2d ub(Shape{5, 7});
  check_close(ub(x), vals(F::interpolate(x, Shape{5, 7}, std::nullopt, "bilinear", true)), 1e-15);
  check_close(ub(x), interp_ref(x, {5, 7}, "bilinear", true, {std::nullopt, std::nullopt}), 1e-12);
  CHECK(ub.name() == "UpsamplingBilinear2d");
}

TEST_CASE("sampling errors") {
  using doctest::Contains;
  const Tensor x = randn({1, 2, 4, 4});
  const std::vector<double> two{2};
  CHECK_THROWS_WITH_AS(F::interpolate(randn({2, 4}), Shape{3}), Contains("[interpolate] expected a 3-D, 4-D or 5-D input"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(randn({1, 2, 4}), Shape{3}, std::nullopt, "bilinear"),
                       Contains("[interpolate] mode 'bilinear' needs a 4-D input, got 3-D"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "linear"), Contains("mode 'linear' needs a 3-D input"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "trilinear"), Contains("mode 'trilinear' needs a 5-D"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "cubic"), Contains("[interpolate] mode must be one of"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, two), Contains("[interpolate] only one of size or scale_factor"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x), Contains("[interpolate] either size or scale_factor must be given"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{0, 3}), Contains("[interpolate] size must be positive, got (0, 3)"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, std::nullopt, std::vector<double>{-1}), Contains("scale_factor must be positive"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, std::nullopt, std::vector<double>{0.1}), Contains("gives an empty output"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3, 3, 3}), Contains("[interpolate] size (3, 3, 3) must have 1 or 2 entries"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, std::nullopt, std::vector<double>{2, 2, 2}),
                       Contains("scale_factor (2.0, 2.0, 2.0) must have 1 or 2 entries"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "nearest", false),
                       Contains("[interpolate] align_corners can only be set with the interpolating modes"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "area", true), Contains("align_corners can only be set"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "nearest", std::nullopt, std::nullopt, true),
                       Contains("[interpolate] antialias=true needs mode 'bilinear' or 'bicubic' (4-D input), got mode 'nearest'"),
                       Error);
  CHECK_THROWS_WITH_AS(F::interpolate(randn({1, 1, 3, 3, 3}), Shape{2}, std::nullopt, "trilinear", std::nullopt, std::nullopt, true),
                       Contains("antialias=true needs mode 'bilinear' or 'bicubic'"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(x, Shape{3}, std::nullopt, "nearest", std::nullopt, true),
                       Contains("recompute_scale_factor is not meaningful with an explicit size"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(ones({1, 1, 3}, int64), Shape{3}, std::nullopt, "linear"),
                       Contains("needs a floating or complex input, got int64"), Error);
  CHECK_THROWS_WITH_AS(F::interpolate(randn({1, 1, 0, 3}), Shape{3}), Contains("expected non-empty spatial dims"), Error);

  CHECK_THROWS_WITH_AS(F::pixel_shuffle(randn({4, 4}), 2), Contains("[pixel_shuffle] expected an input of at least 3 dims"), Error);
  CHECK_THROWS_WITH_AS(F::pixel_shuffle(x, 0), Contains("[pixel_shuffle] upscale_factor must be positive, got 0"), Error);
  CHECK_THROWS_WITH_AS(F::pixel_shuffle(randn({1, 6, 2, 2}), 2), Contains("must be divisible by upscale_factor^2 = 4"), Error);
  CHECK_THROWS_WITH_AS(F::pixel_unshuffle(randn({1, 1, 4, 5}), 2),
                       Contains("[pixel_unshuffle] the spatial dims of input (1, 1, 4, 5) must be divisible by downscale_factor = 2"), Error);
  CHECK_THROWS_WITH_AS(F::pixel_unshuffle(x, -1), Contains("[pixel_unshuffle] downscale_factor must be positive"), Error);
  CHECK_THROWS_WITH_AS(F::pixel_unshuffle(randn({4}), 2), Contains("[pixel_unshuffle] expected an input of at least 3 dims"), Error);

  const Tensor th = randn({1, 2, 3});
  CHECK_THROWS_WITH_AS(F::affine_grid(th, {1, 1, 4}), Contains("[affine_grid] size must be (N, C, H, W) or (N, C, D, H, W)"), Error);
  CHECK_THROWS_WITH_AS(F::affine_grid(th, {2, 1, 4, 4}), Contains("[affine_grid] expected theta of shape (2, 2, 3)"), Error);
  CHECK_THROWS_WITH_AS(F::affine_grid(th, {1, 1, 2, 4, 4}), Contains("expected theta of shape (1, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(F::affine_grid(ones({1, 2, 3}, int64), {1, 1, 4, 4}), Contains("[affine_grid] expected a floating theta"), Error);
  CHECK_THROWS_WITH_AS(F::affine_grid(th, {1, 1, 0, 4}), Contains("[affine_grid] expected a positive output size"), Error);

  const Tensor g = zeros({1, 3, 3, 2});
  CHECK_THROWS_WITH_AS(F::grid_sample(x, g, "area"), Contains("[grid_sample] mode must be 'bilinear', 'nearest' or 'bicubic'"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(x, g, "bilinear", "circular"), Contains("[grid_sample] padding_mode must be"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(randn({1, 2, 4}), zeros({1, 3, 1})), Contains("[grid_sample] expected a 4-D (N, C, H, W) or 5-D"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(randn({1, 2, 3, 4, 4}), zeros({1, 1, 1, 1, 3}), "bicubic"),
                       Contains("[grid_sample] mode 'bicubic' needs a 4-D input"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(x, zeros({2, 3, 3, 2})), Contains("[grid_sample] expected grid of shape (1, Ho, Wo, 2)"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(x, zeros({1, 3, 3, 3})), Contains("expected grid of shape"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(x, zeros({1, 3, 3, 2}, float64)), Contains("[grid_sample] grid dtype float64 and input dtype float32 differ"), Error);
  CHECK_THROWS_WITH_AS(F::grid_sample(ones({1, 1, 2, 2}, int64), zeros({1, 1, 1, 2}, int64)), Contains("[grid_sample] expected a floating input"), Error);

  CHECK_THROWS_WITH_AS(nn::Upsample(Shape{2}, two), Contains("[Upsample] only one of size or scale_factor"), Error);
  CHECK_THROWS_WITH_AS(nn::Upsample(), Contains("[Upsample] either size or scale_factor must be given"), Error);
  CHECK_THROWS_WITH_AS(nn::Upsample(Shape{2}, std::nullopt, "box"), Contains("[interpolate] mode must be one of"), Error);
  CHECK_THROWS_WITH_AS(nn::PixelShuffle(0), Contains("[PixelShuffle] upscale_factor must be positive"), Error);
  CHECK_THROWS_WITH_AS(nn::PixelUnshuffle(0), Contains("[PixelUnshuffle] downscale_factor must be positive"), Error);
}
