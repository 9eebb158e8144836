// src/cuda/optim.cu - multi-tensor optimizer updates for CUDA parameters: one launch updates up to
// kMaxSlices parameters, each a slice of contiguous components, running the same per-component formulas
// as the CPU loops (src/nn/optim/update_rules.hpp, Note [shared update rules]) in place on the
// parameters and their state.
//
// Note [multi-tensor launch]
// An optimizer step is one launch per kMaxSlices parameters of a real type instead of one per parameter
// (the small FNO steps are launch-bound). The slice table (pointers, sizes, coefficients, and each
// slice's first block) is a kernel argument, so a launch needs no host-to-device copy and can be
// captured into a CUDA graph; __grid_constant__ lets a block read its slice from the parameter space
// at a run-time index without a per-thread copy of the table. Slice k owns blocks [start[k],
// start[k+1]) and walks its components with a grid-stride loop over those blocks.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/launch.cuh"
#include "cuda/nn_kernels.hpp"
#include "phasor/error.hpp"

namespace phasor::cuda {
namespace {

using optim::detail::AdamCoeffs;
using optim::detail::SgdCoeffs;

/// A launch's slice table: `count` slices and the first block of each (start[count] = the grid).
template <class S>
struct Batch {
  S s[kMaxSlices];
  unsigned start[kMaxSlices + 1];
  int count;
};

/// The slice the calling block works on.
template <class S>
__device__ inline int slice_of(const Batch<S>& b) {
  int k = 0;
  while (k + 1 < b.count && blockIdx.x >= b.start[k + 1]) ++k;
  return k;
}

/// Calls f(i) for the components of slice k this thread owns.
template <class S, class F>
__device__ inline void for_slice(const Batch<S>& b, int k, std::int64_t n, F&& f) {
  const std::int64_t step = static_cast<std::int64_t>(b.start[k + 1] - b.start[k]) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x - b.start[k]) * blockDim.x + threadIdx.x; i < n;
       i += step)
    f(i);
}

template <class R>
struct SgdDev {
  R* p;
  const R* g;
  R* buf;
  std::int64_t n;
  SgdCoeffs<R> c;
  bool first;
};

template <class R>
struct AdamDev {
  R *p;
  const R* g;
  R *m, *v, *vmax;
  std::int64_t n;
  AdamCoeffs<R> c;
  const double* step;  // capturable: the count on the device (step_kernel has incremented it), else null
};

/// The device-side step counts of one Adam launch's slices (capturable).
struct Steps {
  double* p[kMaxSlices];
  int count;
};

static_assert(sizeof(Batch<AdamDev<double>>) + sizeof(optim::detail::AdamBias) + 24 <= 4000 &&
                  sizeof(Batch<SgdDev<double>>) + 16 <= 4000,
              "a slice table must fit the 4 KiB kernel parameter space");

/// `lr`, when not null, is the device address of the learning rate (a captured step: Note [host values in
/// CUDA graphs] in graph.cpp), which replaces the coefficients' lr.
template <class R>
__global__ void sgd_kernel(const __grid_constant__ Batch<SgdDev<R>> b, bool wd, bool momentum, bool nesterov,
                           const double* lr) {
  const int k = slice_of(b);
  const SgdDev<R>& s = b.s[k];
  SgdCoeffs<R> c = s.c;
  if (lr) c.lr = static_cast<R>(*lr);
  for_slice(b, k, s.n, [&](std::int64_t i) {
    optim::detail::sgd_update(s.p[i], s.g[i], momentum ? s.buf + i : nullptr, c, wd, momentum, nesterov, s.first);
  });
}

/// Adds 1 to each device-side step count of a launch (before the update reads them).
__global__ void step_kernel(const __grid_constant__ Steps st) {
  if (static_cast<int>(threadIdx.x) < st.count) *st.p[threadIdx.x] += 1;
}

/// `lr`, when not null, is the device address of the learning rate (a captured step, as sgd_kernel's): it
/// replaces bias.lr, and makes AdamW's decay 1 - lr * decoupled_wd (decoupled_wd: 0 for Adam).
template <class R>
__global__ void adam_kernel(const __grid_constant__ Batch<AdamDev<R>> b, bool amsgrad, bool l2, bool lerp_low,
                            optim::detail::AdamBias bias, const double* lr, double decoupled_wd) {
  const int k = slice_of(b);
  const AdamDev<R>& s = b.s[k];
  AdamCoeffs<R> c = s.c;
  if (lr) {
    bias.lr = *lr;
    if (decoupled_wd != 0) c.decay = static_cast<R>(1 - *lr * decoupled_wd);  // as the host makes it
  }
  if (s.step) optim::detail::set_bias_corrections(c, bias, *s.step);
  for_slice(b, k, s.n, [&](std::int64_t i) {
    optim::detail::adam_update(s.p[i], s.g[i], s.m[i], s.v[i], amsgrad ? s.vmax + i : nullptr, c, amsgrad, l2,
                               lerp_low);
  });
}

template <class R>
SgdDev<R> to_dev(const SgdSlice& s) {
  return {static_cast<R*>(s.p), static_cast<const R*>(s.g), static_cast<R*>(s.buf), s.n,
          optim::detail::cast_coeffs<R>(s.c), s.first};
}

template <class R>
AdamDev<R> to_dev(const AdamSlice& s) {
  return {static_cast<R*>(s.p),    static_cast<const R*>(s.g), static_cast<R*>(s.m), static_cast<R*>(s.v),
          static_cast<R*>(s.vmax), s.n,                        optim::detail::cast_coeffs<R>(s.c), s.step};
}

/// Device-side step counts to increment before a launch: Adam's (capturable), none for SGD.
inline double* step_of(const AdamSlice& s) { return s.step; }
inline double* step_of(const SgdSlice&) { return nullptr; }

/// Launches `kernel` once per kMaxSlices non-empty slices of `slices`, each slice getting the blocks a
/// lone grid-stride launch over it would get; slices with a device-side step count have it incremented
/// by one step_kernel launch first.
template <class R, class Slice, class... Flags>
void launch_slices(void (*kernel)(const Batch<decltype(to_dev<R>(Slice{}))>, Flags...), const Slice* slices,
                   int count, void* stream, const char* what, Flags... flags) {
  using Dev = decltype(to_dev<R>(Slice{}));
  Batch<Dev> b{};
  Steps steps{};
  auto flush = [&] {
    if (steps.count) {
      launch_kernel(step_kernel, 1, 32, static_cast<cudaStream_t>(stream), steps);
      check_launch(what);
      steps.count = 0;
    }
    if (b.count == 0) return;
    launch_kernel(kernel, b.start[b.count], kThreads, static_cast<cudaStream_t>(stream), b, flags...);
    check_launch(what);
    b.count = 0;
  };
  for (int i = 0; i < count; ++i) {
    double* st = step_of(slices[i]);  // an empty parameter's count advances too, as on the host
    if (slices[i].n <= 0 && !st) continue;
    if (b.count == kMaxSlices || steps.count == kMaxSlices) flush();
    if (st) steps.p[steps.count++] = st;
    if (slices[i].n <= 0) continue;
    b.s[b.count] = to_dev<R>(slices[i]);
    b.start[b.count + 1] = b.start[b.count] + blocks_for(slices[i].n);
    ++b.count;
  }
  flush();
}

}  // namespace

void sgd_step(bool is_double, const SgdSlice* slices, int count, bool wd, bool momentum, bool nesterov,
              const void* lr, void* stream) {
  const auto* l = static_cast<const double*>(lr);
  if (is_double) launch_slices<double>(sgd_kernel<double>, slices, count, stream, "sgd", wd, momentum, nesterov, l);
  else launch_slices<float>(sgd_kernel<float>, slices, count, stream, "sgd", wd, momentum, nesterov, l);
}

void adam_step(bool is_double, const AdamSlice* slices, int count, bool amsgrad, bool l2, bool lerp_low,
               const optim::detail::AdamBias& bias, const void* lr, double decoupled_wd, void* stream) {
  const auto* l = static_cast<const double*>(lr);
  if (is_double)
    launch_slices<double>(adam_kernel<double>, slices, count, stream, "adam", amsgrad, l2, lerp_low, bias, l,
                          decoupled_wd);
  else
    launch_slices<float>(adam_kernel<float>, slices, count, stream, "adam", amsgrad, l2, lerp_low, bias, l,
                         decoupled_wd);
}

}  // namespace phasor::cuda
