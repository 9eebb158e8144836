// src/core/random.cpp - Philox-4x32-10 counter-based generator (Salmon et al., SC'11) and the
// random creation functions. Each element's numbers depend only on (seed, counter), so results
// are identical for any thread count and reproducible for a seed.
#include <cmath>
#include <mutex>
#include <numeric>

#include "core/elementwise.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/random.hpp"

namespace phasor {

namespace {

struct Block {
  std::uint32_t v[4];
};

inline void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

/// Philox-4x32 with 10 rounds for counter `ctr` under key `seed`.
inline Block philox(std::uint64_t seed, std::uint64_t ctr) {
  std::uint32_t c0 = static_cast<std::uint32_t>(ctr), c1 = static_cast<std::uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, c0, hi0, lo0);
    mulhilo(0xCD9E8D57u, c2, hi1, lo1);
    const std::uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Block{{c0, c1, c2, c3}};
}

/// Uniform double in [0, 1) from 53 random bits.
inline double u53(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t x = (static_cast<std::uint64_t>(a) << 32 | b) >> 11;
  return static_cast<double>(x) * (1.0 / 9007199254740992.0);
}
/// Uniform float in [0, 1) from 24 random bits.
inline float u24(std::uint32_t a) { return static_cast<float>(a >> 8) * (1.0f / 16777216.0f); }

std::mutex g_gen_mu;

Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

/// Reserves `nblocks` counters from the generator (thread-safe for the default one).
std::uint64_t reserve(Generator& g, std::uint64_t nblocks, std::uint64_t& seed) {
  std::lock_guard<std::mutex> lk(g_gen_mu);
  seed = g.seed();
  return g.advance(nblocks);
}

/// Runs body(i, block) for i in [0, n) in parallel.
template <class F>
void for_blocks(std::int64_t n, std::uint64_t seed, std::uint64_t start, F body) {
  const int threads = n >= 8192 ? get_num_threads() : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t i = 0; i < n; ++i) body(i, philox(seed, start + static_cast<std::uint64_t>(i)));
}

}  // namespace

Generator::Generator(std::uint64_t seed) : seed_(seed) {}
void Generator::manual_seed(std::uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

Generator& default_generator() {
  static Generator g(67280421310721ULL);
  return g;
}
void manual_seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lk(g_gen_mu);
  default_generator().manual_seed(seed);
}

Tensor rand(const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  detail::check_shape(shape, "rand");
  if (!is_floating_or_complex(dtype))
    throw Error("rand", std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  Tensor t = detail::make_tensor(shape, dtype, device);
  detail::check_cpu(t, "rand");
  const std::int64_t n = t.numel() * (is_complex(dtype) ? 2 : 1);  // real values to draw
  const std::int64_t nb = (n + 1) / 2;                                // 2 doubles per block
  std::uint64_t seed;
  const std::uint64_t start = reserve(gen_or_default(gen), static_cast<std::uint64_t>(nb), seed);
  if (to_real(dtype) == Dtype::Float64) {
    double* p = static_cast<double*>(t.data_ptr());
    for_blocks(nb, seed, start, [&](std::int64_t i, const Block& b) {
      p[2 * i] = u53(b.v[0], b.v[1]);
      if (2 * i + 1 < n) p[2 * i + 1] = u53(b.v[2], b.v[3]);
    });
  } else {
    float* p = static_cast<float*>(t.data_ptr());
    for_blocks(nb, seed, start, [&](std::int64_t i, const Block& b) {
      p[2 * i] = u24(b.v[0]);
      if (2 * i + 1 < n) p[2 * i + 1] = u24(b.v[2]);
    });
  }
  return t;
}

Tensor randn(const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  detail::check_shape(shape, "randn");
  if (!is_floating_or_complex(dtype))
    throw Error("randn", std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  Tensor t = detail::make_tensor(shape, dtype, device);
  detail::check_cpu(t, "randn");
  const bool cplx = is_complex(dtype);
  const std::int64_t n = t.numel() * (cplx ? 2 : 1);
  const std::int64_t nb = (n + 1) / 2;  // one Box-Muller pair per block
  const double scale = cplx ? std::sqrt(0.5) : 1.0;
  std::uint64_t seed;
  const std::uint64_t start = reserve(gen_or_default(gen), static_cast<std::uint64_t>(nb), seed);
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for_blocks(nb, seed, start, [&](std::int64_t i, const Block& b) {
      const double u1 = 1.0 - u53(b.v[0], b.v[1]);  // (0, 1]
      const double u2 = u53(b.v[2], b.v[3]);
      const double r = std::sqrt(-2.0 * std::log(u1)) * scale;
      const double th = 2.0 * M_PI * u2;
      p[2 * i] = static_cast<T>(r * std::cos(th));
      if (2 * i + 1 < n) p[2 * i + 1] = static_cast<T>(r * std::sin(th));
    });
  };
  if (to_real(dtype) == Dtype::Float64) fill(static_cast<double*>(t.data_ptr()));
  else fill(static_cast<float*>(t.data_ptr()));
  return t;
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  detail::check_shape(shape, "randint");
  if (high <= low)
    throw Error("randint", "expected low < high, got low=" + std::to_string(low) + " high=" + std::to_string(high));
  if (dtype == Dtype::Bool && (low < 0 || high > 2))
    throw Error("randint", "range [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit bool");
  Tensor r = detail::make_tensor(shape, Dtype::Int64, device);
  detail::check_cpu(r, "randint");
  const std::int64_t n = r.numel();
  const std::int64_t nb = (n + 1) / 2;
  const auto range = static_cast<unsigned __int128>(static_cast<std::uint64_t>(high - low));
  std::uint64_t seed;
  const std::uint64_t start = reserve(gen_or_default(gen), static_cast<std::uint64_t>(nb), seed);
  auto* p = static_cast<std::int64_t*>(r.data_ptr());
  auto draw = [&](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t x = static_cast<std::uint64_t>(a) << 32 | b;
    return low + static_cast<std::int64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
  };
  for_blocks(nb, seed, start, [&](std::int64_t i, const Block& b) {
    p[2 * i] = draw(b.v[0], b.v[1]);
    if (2 * i + 1 < n) p[2 * i + 1] = draw(b.v[2], b.v[3]);
  });
  return dtype == Dtype::Int64 ? r : r.to(dtype);
}

Tensor randperm(std::int64_t n, Dtype dtype, Device device, Generator* gen) {
  if (n < 0) throw Error("randperm", "n must be non-negative, got " + std::to_string(n));
  if (dtype == Dtype::Bool) throw Error("randperm", "bool dtype cannot hold a permutation");
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  std::uint64_t seed;
  const std::uint64_t start = reserve(gen_or_default(gen), static_cast<std::uint64_t>(n), seed);
  for (std::int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    Block b = philox(seed, start + static_cast<std::uint64_t>(i));
    const std::uint64_t x = static_cast<std::uint64_t>(b.v[0]) << 32 | b.v[1];
    const auto j = static_cast<std::int64_t>((static_cast<unsigned __int128>(x) * static_cast<std::uint64_t>(i + 1)) >> 64);
    std::swap(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(j)]);
  }
  Tensor t = from_vector(v, std::nullopt, device);
  return dtype == Dtype::Int64 ? t : t.to(dtype);
}

Tensor rand_like(const Tensor& t, Generator* gen) { return rand(t.shape(), t.dtype(), t.device(), gen); }
Tensor randn_like(const Tensor& t, Generator* gen) { return randn(t.shape(), t.dtype(), t.device(), gen); }

}  // namespace phasor
