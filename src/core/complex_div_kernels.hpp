// src/core/complex_div_kernels.hpp - contiguous complex division loops, vectorized (Note [complex division]
// in core/complex_math.hpp, Note [vector complex division] in complex_div_kernels.cpp).
#pragma once
#include <complex>
#include <cstdint>

namespace phasor::detail {

/// out[i] = a[i] / b[i] for i < n, bit for bit cdiv's quotient.
void div_c64(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* out, std::int64_t n);
/// out[i] = a[i] / b[i] for i < n, bit for bit cdiv's quotient.
void div_c128(const std::complex<double>* a, const std::complex<double>* b, std::complex<double>* out,
              std::int64_t n);

}  // namespace phasor::detail
