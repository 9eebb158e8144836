// src/cuda/elementwise.cu - the elementwise engine's entry points for CUDA tensors (Note [cuda elementwise]
// in elementwise.hpp): unary() (its kernels for bool, int64 and real compute dtypes here, complex ones in
// elementwise_complex.cu: Note [elementwise translation units]), fill() and ramp(). The device arithmetic
// and kernels are in elementwise_ops.cuh.
#include "cuda/elementwise_ops.cuh"

namespace phasor::cuda {

bool unary(const char* op, Dtype compute, const Operands& o, const double* params, void* stream) {
  const double p0 = params ? params[0] : 0, p1 = params ? params[1] : 0;
  if (is_complex(compute)) return detail::unary_complex(op, compute, o, p0, p1, stream);
  return unary_table<kBool | kInt | kReal>(op, compute, o, p0, p1, stream);
}

namespace {
/// A contiguous fill: p[i] = v.
template <class T>
__global__ void fill_flat_kernel(T* p, std::int64_t n, T v) {
  for (std::int64_t i = grid_start(); i < n; i += grid_step()) p[i] = v;
}
/// Any layout: offsets from the linear index.
template <class T>
__global__ void fill_kernel(Operands o, T v) {
  for (std::int64_t i = grid_start(); i < o.numel; i += grid_step()) {
    std::int64_t off[1];
    operand_offsets<0>(o, i, off);
    *reinterpret_cast<T*>(o.data[0] + off[0]) = v;
  }
}
/// An arithmetic sequence (core/ramp.hpp): one thread per element.
template <class T>
__global__ void ramp_kernel(T* p, ::phasor::detail::Ramp r) {
  for (std::int64_t i = grid_start(); i < r.n; i += grid_step()) p[i] = r.element<T, c128>(i);
}
}  // namespace

void ramp(Dtype dtype, void* out, const ::phasor::detail::Ramp& r, void* stream_v) {
  if (r.n <= 0) return;
  auto stream = static_cast<cudaStream_t>(stream_v);
  with_type<kAll>(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      launch_kernel(ramp_kernel<T>, blocks_for(r.n), kThreads, stream, static_cast<T*>(out), r);
  });
  check_launch("ramp");
}

void fill(const Operands& o, double re, double im, std::int64_t integer, void* stream_v) {
  if (o.numel == 0) return;
  auto stream = static_cast<cudaStream_t>(stream_v);
  with_type<kAll>(o.dtype[0], [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (is_cplx_v<T>) v = T(static_cast<real_t<T>>(re), static_cast<real_t<T>>(im));
    else if constexpr (std::is_same_v<T, bool>) v = re != 0 || im != 0;
    else if constexpr (std::is_same_v<T, std::int64_t>) v = integer;  // exact: a double holds 53 bits
    else v = static_cast<T>(re);
    if (o.ndim == 0 || o.numel == 1 || (o.ndim == 1 && o.strides[0][0] == static_cast<std::int64_t>(sizeof(T))))
      launch_kernel(fill_flat_kernel<T>, blocks_for(o.numel), kThreads, stream, reinterpret_cast<T*>(o.data[0]),
                    o.numel, v);
    else
      launch_kernel(fill_kernel<T>, blocks_for(o.numel), kThreads, stream, o, v);
  });
  check_launch("fill");
}

}  // namespace phasor::cuda
