// tests/cuda_test_util.hpp - what the CPU-vs-GPU agreement tests (tests/test_cuda_*.cpp) share: whether a
// GPU is present (the GPU cases are skipped without one), the device, random samples and the comparison.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <phasor/phasor.hpp>

namespace cuda_test {

/// True when a CUDA device is usable (the GPU cases are skipped otherwise).
inline const bool kGpu = phasor::cuda::is_available();
/// The device the GPU cases run on.
inline const phasor::Device kDev = phasor::Device::cuda(0);

/// max |a - b| / max(floor, max |b|), both moved to the CPU, in float64 (complex: the modulus); NaN
/// matching NaN and equal infinities count as equal; bool and int64 compare exactly (absolute).
inline double rel_diff(const phasor::Tensor& a, const phasor::Tensor& b, double floor = 1.0) {
  using namespace phasor;
  const Tensor x = a.detach().to(Device::cpu()), y = b.detach().to(Device::cpu());
  REQUIRE(x.shape() == y.shape());
  REQUIRE(x.dtype() == y.dtype());
  if (x.numel() == 0) return 0;
  if (x.dtype() == Dtype::Bool || x.dtype() == Dtype::Int64)
    return (x.to(float64) - y.to(float64)).abs().max().item<double>();
  const Tensor same = (x.isnan() & y.isnan()) | (x == y);
  const Tensor zero = zeros({}, float64);
  const double dmax = where(same, zero, (x - y).abs().to(float64)).max().item<double>();
  return dmax / std::max(floor, where(same, zero, y.abs().to(float64)).max().item<double>());
}

/// Random values of dtype dt and shape s on the CPU: normals (complex: both parts), ints in [-5, 5],
/// bools half true.
inline phasor::Tensor sample(const phasor::Shape& s, phasor::Dtype dt) {
  using namespace phasor;
  const Tensor r = randn(s, float64);
  switch (dt) {
    case Dtype::Bool: return r > 0.0;
    case Dtype::Int64: return (r * 3.0).round().clamp(-5, 5).to(int64);
    case Dtype::Complex64:
    case Dtype::Complex128: return complex(r, randn(s, float64)).to(dt);
    default: return r.to(dt);
  }
}

}  // namespace cuda_test
