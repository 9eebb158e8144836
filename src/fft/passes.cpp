// src/fft/passes.cpp - blocked one-dimensional passes (Note [blocked passes]).
//
// Note [blocked passes]
// FFTW_ESTIMATE plans a batch of transforms along a non-innermost dim (stride > 1 between the
// points of one transform, consecutive transforms adjacent) poorly: measured here, the column
// pass of a 256x256 complex64 array took 9x longer than the row pass, and a whole 2-D
// out-of-place transform 4.5x longer than the FFTW_MEASURE plan. Under the estimate effort
// phasor therefore runs n-D transforms as one 1-D pass per dim; a pass along a dim with
// `inner` > 1 elements after it copies kBlock lines at a time into a contiguous buffer (a small
// transpose), transforms them as a contiguous batch, and copies them back. The blocks are
// independent, so large passes run them on several OpenMP threads (single-threaded plans).
// Measuring efforts (measure/patient/exhaustive) keep FFTW's own multi-dimensional plans.
#include "fft/passes.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "fft/fftw_backend.hpp"
#include "phasor/device.hpp"
#include "phasor/error.hpp"

namespace phasor::fft::detail {
namespace {

constexpr std::int64_t kBlock = 16;                            // lines per block
constexpr std::int64_t kParallelWork = std::int64_t(1) << 18;  // points before threads help

struct E16 {
  std::uint64_t a, b;
};

/// Element type of `bytes` bytes (values are only copied).
template <std::size_t Bytes>
struct Elem;
template <>
struct Elem<4> {
  using type = std::uint32_t;
};
template <>
struct Elem<8> {
  using type = std::uint64_t;
};
template <>
struct Elem<16> {
  using type = E16;
};

/// buf[j * n + r] = src[r * inner + j] for r < n, j < b (src already offset to the block).
template <class T>
void gather(T* buf, const T* src, std::int64_t n, std::int64_t inner, std::int64_t b) {
  for (std::int64_t r = 0; r < n; ++r) {
    const T* row = src + r * inner;
    for (std::int64_t j = 0; j < b; ++j) buf[j * n + r] = row[j];
  }
}

/// dst[r * inner + j] = buf[j * n + r].
template <class T>
void scatter(T* dst, const T* buf, std::int64_t n, std::int64_t inner, std::int64_t b) {
  for (std::int64_t r = 0; r < n; ++r) {
    T* row = dst + r * inner;
    for (std::int64_t j = 0; j < b; ++j) row[j] = buf[j * n + r];
  }
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

template <class S, class D>
void blocked(Kind kind, bool single, bool forward, std::int64_t n, std::int64_t ns, std::int64_t nd, std::int64_t outer,
             std::int64_t inner, void* src_v, void* dst_v) {
  const std::int64_t B = std::min(inner, kBlock);
  const std::int64_t per_outer = (inner + B - 1) / B;
  const std::int64_t blocks = outer * per_outer;
  const std::int64_t work = outer * inner * n;
  const int threads =
      work >= kParallelWork ? static_cast<int>(std::min<std::int64_t>(std::max(1, get_num_threads()), blocks)) : 1;
  const bool inplace_buf = kind == Kind::c2c;
  // per-thread buffers, 64-byte aligned (so every block matches the plans' alignment)
  const std::size_t in_bytes = (static_cast<std::size_t>(B * ns) * sizeof(S) + 63) / 64 * 64;
  const std::size_t out_bytes = inplace_buf ? 0 : (static_cast<std::size_t>(B * nd) * sizeof(D) + 63) / 64 * 64;
  const std::size_t per_thread = in_bytes + out_bytes;
  std::unique_ptr<void, AlignedFree> mem(std::aligned_alloc(64, per_thread * static_cast<std::size_t>(threads)));
  if (!mem)
    throw Error("fft", "out of memory for a blocked pass buffer of " + std::to_string(per_thread * threads) + " bytes");
  char* base = static_cast<char*>(mem.get());
  auto bin = [&](int t) { return base + per_thread * static_cast<std::size_t>(t); };
  auto bout = [&](int t) { return inplace_buf ? bin(t) : bin(t) + in_bytes; };
  // plans for a full block and for the remainder block (single-threaded: blocks run in parallel)
  auto plan_for = [&](std::int64_t b, PlanPtr& keep) -> const Plan* {
    PlanKey k;
    k.kind = kind;
    k.single = single;
    k.forward = forward;
    k.dims.push_back(IoDim{n, 1, 1});
    if (b > 1) k.howmany.push_back(IoDim{b, ns, nd});
    return acquire_plan(k, bin(0), bout(0), keep, 1);
  };
  PlanPtr keep_full, keep_rest;
  const Plan* full = plan_for(B, keep_full);
  const std::int64_t rest = inner % B;
  const Plan* part = rest ? plan_for(rest, keep_rest) : nullptr;
  const S* src = static_cast<const S*>(src_v);
  D* dst = static_cast<D*>(dst_v);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    const int t = omp_get_thread_num();
    const std::int64_t o = blk / per_outer, c0 = (blk % per_outer) * B, b = std::min(B, inner - c0);
    S* in = reinterpret_cast<S*>(bin(t));
    D* out = reinterpret_cast<D*>(bout(t));
    gather(in, src + o * ns * inner + c0, ns, inner, b);
    execute_plan(b == B ? full : part, kind, in, out);
    scatter(dst + o * nd * inner + c0, out, nd, inner, b);
  }
}

}  // namespace

void line_pass(Kind kind, bool single, bool forward, std::int64_t n, std::int64_t outer, std::int64_t inner, void* src,
               void* dst) {
  if (n == 0 || outer == 0 || inner == 0) return;
  const std::int64_t ns = kind == Kind::c2r ? n / 2 + 1 : n;
  const std::int64_t nd = kind == Kind::r2c ? n / 2 + 1 : n;
  if (inner == 1) {  // contiguous lines: one batched FFTW call
    PlanKey k;
    k.kind = kind;
    k.single = single;
    k.forward = forward;
    k.preserve_input = kind == Kind::c2r && src != dst;
    k.dims.push_back(IoDim{n, 1, 1});
    if (outer > 1) k.howmany.push_back(IoDim{outer, ns, nd});
    run_fftw(k, src, dst);
    return;
  }
  const std::size_t real = single ? 4 : 8;
  const std::size_t cplx = 2 * real;
  const std::size_t es = kind == Kind::r2c ? real : cplx, ed = kind == Kind::c2r ? real : cplx;
  auto go = [&](auto s_tag, auto d_tag) {
    using S = typename decltype(s_tag)::type;
    using D = typename decltype(d_tag)::type;
    blocked<S, D>(kind, single, forward, n, ns, nd, outer, inner, src, dst);
  };
  if (es == 4 && ed == 8)
    go(Elem<4>{}, Elem<8>{});  // r2c float
  else if (es == 8 && ed == 4)
    go(Elem<8>{}, Elem<4>{});  // c2r float
  else if (es == 8 && ed == 8)
    go(Elem<8>{}, Elem<8>{});  // c2c float
  else if (es == 8 && ed == 16)
    go(Elem<8>{}, Elem<16>{});  // r2c double
  else if (es == 16 && ed == 8)
    go(Elem<16>{}, Elem<8>{});  // c2r double
  else
    go(Elem<16>{}, Elem<16>{});  // c2c double
}

}  // namespace phasor::fft::detail
