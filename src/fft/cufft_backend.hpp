// src/fft/cufft_backend.hpp - the FFT primitives' kernels for CUDA tensors, through cuFFT
// (Note [cufft backend] in cufft_backend.cpp). CUDA-free: a CPU-only build's functions throw.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fft/primitives.hpp"

namespace phasor::fft::detail {

/// c2c over `dims` of a CUDA tensor (the contract of c2c's kernel).
Tensor c2c_cuda(const Tensor& x, const DimList& dims, bool forward, Norm norm);
/// r2c over `dims` of a real CUDA tensor; the last of `dims` keeps n/2+1 bins.
Tensor r2c_cuda(const Tensor& x, const DimList& dims, Norm norm);
/// c2r over `dims` of a complex CUDA tensor, output length `last_n` along the last of `dims`; x is
/// not modified unless `x_is_scratch` (the caller's own copy: Note [c2r scratch input]).
Tensor c2r_cuda(const Tensor& x, const DimList& dims, Norm norm, std::int64_t last_n, bool x_is_scratch);

/// Plans in the cuFFT plan cache of CUDA device `device` (0 in a CPU-only build).
std::size_t cufft_plan_cache_size(int device);
/// Drops the cached cuFFT plans of `device` (every device when -1).
void clear_cufft_plan_cache(int device = -1);
/// Most cuFFT plans kept per device (least recently used ones go first); 0 keeps none.
void set_cufft_plan_cache_capacity(std::size_t capacity);

}  // namespace phasor::fft::detail
