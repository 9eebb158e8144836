// src/core/random.cpp - the random creation functions over the counter-based Philox generator
// (core/philox.hpp, Note [counter-based random numbers]). Each element's numbers depend only on
// (seed, counter), so results are identical for any thread count, on the CPU and the GPU, and
// reproducible for a seed.
#include <cmath>
#include <mutex>
#include <numeric>

#include "core/elementwise.hpp"
#include "core/philox.hpp"
#include "cuda/graph.hpp"
#include "cuda/index_ops.hpp"
#include "jit/tracer.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/random.hpp"

namespace phasor {

namespace {

using detail::PhiloxBlock;
using detail::philox;
using detail::u24;
using detail::u53;

std::mutex g_gen_mu;

Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

/// Reserves `nblocks` counters from the generator (thread-safe for the default one).
std::uint64_t reserve(Generator& g, std::uint64_t nblocks, std::uint64_t& seed) {
  std::lock_guard<std::mutex> lk(g_gen_mu);
  seed = g.seed();
  return g.advance(nblocks);
}

/// The counters of a draw of `nblocks` by `op` on `device` from `gen` (null: the default generator):
/// reserved now, or inside a CUDA graph capture on `device` read by each replay (Note [random numbers in
/// CUDA graphs] in cuda/graph.cpp), where only the default generator may be drawn from.
cuda::Counters draw(Generator* gen, Device device, std::uint64_t nblocks, const char* op) {
  if (detail::tracing()) detail::refuse_untraced_random(op);
  cuda::Counters c;
  if (cuda::detail::capturing(device)) {
    if (gen && gen != &default_generator())
      throw Error(op, "random numbers from a Generator other than the default one cannot be captured into a CUDA "
                      "graph (capturing on " + device.str() + "): each replay draws from the default generator; "
                      "pass no generator (seed it with manual_seed)");
    c.state = cuda::detail::capture_random_counters(device, nblocks, c.start);
    return c;
  }
  c.start = reserve(gen_or_default(gen), nblocks, c.seed);
  return c;
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

namespace cuda::detail {
std::uint64_t reserve_default_counters(std::uint64_t n, std::uint64_t& seed) { return reserve(default_generator(), n, seed); }
}  // namespace cuda::detail

namespace {
/// While tracing, a random source is one recorded step that draws anew on every replay (Note [static graphs]):
/// `draw` calls the source again (the trace is suspended inside the step).
template <class Draw>
Tensor traced_draw(const char* name, Draw draw) {
  return detail::trace_opaque(name, {}, [draw](detail::TensorList) { return std::vector<Tensor>{draw()}; })[0];
}
}  // namespace

Tensor rand(const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  if (detail::tracing())
    return traced_draw("rand", [=] { return rand(shape, dtype, device, gen); });
  detail::check_shape(shape, "rand", itemsize(dtype));
  if (!is_floating_or_complex(dtype))
    throw Error("rand", std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  Tensor t = detail::make_tensor(shape, dtype, device);
  const std::int64_t n = t.numel() * (is_complex(dtype) ? 2 : 1);  // real values to draw
  const std::int64_t nb = (n + 1) / 2;                                // 2 doubles per block
  const cuda::Counters c = draw(gen, device, static_cast<std::uint64_t>(nb), "rand");
  const std::uint64_t seed = c.seed, start = c.start;
  if (device.is_cuda()) {
    cuda::detail::random_fill(cuda::RandomKind::uniform, t, n, c);
    return t;
  }
  if (to_real(dtype) == Dtype::Float64) {
    double* p = static_cast<double*>(t.data_ptr());
    for_blocks(nb, seed, start, [&](std::int64_t i, const PhiloxBlock& b) {
      p[2 * i] = u53(b.v[0], b.v[1]);
      if (2 * i + 1 < n) p[2 * i + 1] = u53(b.v[2], b.v[3]);
    });
  } else {
    float* p = static_cast<float*>(t.data_ptr());
    for_blocks(nb, seed, start, [&](std::int64_t i, const PhiloxBlock& b) {
      p[2 * i] = u24(b.v[0]);
      if (2 * i + 1 < n) p[2 * i + 1] = u24(b.v[2]);
    });
  }
  return t;
}

Tensor randn(const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  if (detail::tracing())
    return traced_draw("randn", [=] { return randn(shape, dtype, device, gen); });
  detail::check_shape(shape, "randn", itemsize(dtype));
  if (!is_floating_or_complex(dtype))
    throw Error("randn", std::string("expected a floating or complex dtype, got ") + dtype_name(dtype));
  Tensor t = detail::make_tensor(shape, dtype, device);
  const bool cplx = is_complex(dtype);
  const std::int64_t n = t.numel() * (cplx ? 2 : 1);
  const std::int64_t nb = (n + 1) / 2;  // one Box-Muller pair per block
  const double scale = cplx ? std::sqrt(0.5) : 1.0;
  const cuda::Counters c = draw(gen, device, static_cast<std::uint64_t>(nb), "randn");
  const std::uint64_t seed = c.seed, start = c.start;
  if (device.is_cuda()) {
    cuda::detail::random_fill(cuda::RandomKind::normal, t, n, c, scale);
    return t;
  }
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for_blocks(nb, seed, start, [&](std::int64_t i, const PhiloxBlock& b) {
      double v0, v1;
      detail::normal_pair(b, scale, v0, v1);
      p[2 * i] = static_cast<T>(v0);
      if (2 * i + 1 < n) p[2 * i + 1] = static_cast<T>(v1);
    });
  };
  if (to_real(dtype) == Dtype::Float64) fill(static_cast<double*>(t.data_ptr()));
  else fill(static_cast<float*>(t.data_ptr()));
  return t;
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  if (detail::tracing())
    return traced_draw("randint", [=] { return randint(low, high, shape, dtype, device, gen); });
  detail::check_shape(shape, "randint", itemsize(dtype));
  if (high <= low)
    throw Error("randint", "expected low < high, got low=" + std::to_string(low) + " high=" + std::to_string(high));
  if (dtype == Dtype::Bool && (low < 0 || high > 2))
    throw Error("randint", "range [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit bool");
  Tensor r = detail::make_tensor(shape, Dtype::Int64, device);
  const std::int64_t n = r.numel();
  const std::int64_t nb = (n + 1) / 2;
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);  // up to 2^64 - 1
  const cuda::Counters c = draw(gen, device, static_cast<std::uint64_t>(nb), "randint");
  const std::uint64_t seed = c.seed, start = c.start;
  if (device.is_cuda()) {
    cuda::detail::random_fill(cuda::RandomKind::integer, r, n, c, 1, low, range);
  } else {
    auto* p = static_cast<std::int64_t*>(r.data_ptr());
    for_blocks(nb, seed, start, [&](std::int64_t i, const PhiloxBlock& b) {
      p[2 * i] = detail::draw_below(b.v[0], b.v[1], low, range);
      if (2 * i + 1 < n) p[2 * i + 1] = detail::draw_below(b.v[2], b.v[3], low, range);
    });
  }
  return dtype == Dtype::Int64 ? r : r.to(dtype);
}

Tensor randperm(std::int64_t n, Dtype dtype, Device device, Generator* gen) {
  if (detail::tracing())
    return traced_draw("randperm", [=] { return randperm(n, dtype, device, gen); });
  if (n < 0) throw Error("randperm", "n must be non-negative, got " + std::to_string(n));
  if (dtype == Dtype::Bool) throw Error("randperm", "bool dtype cannot hold a permutation");
  cuda::detail::refuse_in_capture(device, "randperm", "a random permutation",
                                  "it is drawn on the host and copied to the GPU; draw it before capturing");
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  std::uint64_t seed;
  const std::uint64_t start = reserve(gen_or_default(gen), static_cast<std::uint64_t>(n), seed);
  for (std::int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    PhiloxBlock b = philox(seed, start + static_cast<std::uint64_t>(i));
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
