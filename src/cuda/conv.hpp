// src/cuda/conv.hpp - the CUDA convolution primitives' launch interface: im2col/col2im over up to 3
// spatial dims and the spectral mode mix (kernels in src/cuda/conv.cu). Plain C++; the declarations
// live in src/cuda/nn_kernels.hpp with the other nn kernels, this header names them for conv users.
#pragma once
#include "cuda/nn_kernels.hpp"
