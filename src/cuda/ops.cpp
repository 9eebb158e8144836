// src/cuda/ops.cpp - builds the operands of CUDA elementwise kernels from tensors with the CPU
// engine's own loop builder (broadcasting, dim coalescing) and launches them on the current stream.
#include "cuda/ops.hpp"

#include <string>

#include "core/elementwise.hpp"
#include "phasor/autodiff.hpp"

#include "cuda/backend.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/launch.hpp"
#include "cuda/reduce.hpp"
#endif

namespace phasor::cuda::detail {

#if PHASOR_WITH_CUDA
Operands operands(std::initializer_list<const Tensor*> ts, const char* op) { return operands(ts, (*ts.begin())->shape(), op); }

Operands operands(std::initializer_list<const Tensor*> ts, const Shape& shape, const char* op) {
  const Tensor& out = **ts.begin();
  for (const Tensor* t : ts)
    if (t->device() != out.device())
      throw Error(op, "expected all tensors on " + out.device().str() + ", got one on " + t->device().str());
  check_device(out.device(), op);  // "[op] device cuda:i does not exist (...)"
  const ::phasor::detail::StridedLoop loop = ::phasor::detail::make_device_loop(ts, shape);
  if (loop.nd > kMaxDims)
    throw Error(op, "a CUDA elementwise kernel takes at most " + std::to_string(kMaxDims) + " dims after merging, got " +
                        std::to_string(loop.nd));
  Operands o;
  o.count = static_cast<int>(ts.size());
  o.ndim = loop.nd;
  o.numel = loop.numel;
  int k = 0;
  for (const Tensor* t : ts) {
    o.data[k] = loop.base[static_cast<std::size_t>(k)];
    o.dtype[k] = t->dtype();
    for (int d = 0; d < loop.nd; ++d)
      o.strides[k][d] = loop.strides[static_cast<std::size_t>(d)][static_cast<std::size_t>(k)];
    ++k;
  }
  for (int d = 0; d < loop.nd; ++d) o.sizes[d] = loop.shape[static_cast<std::size_t>(d)];
  return o;
}

void no_kernel(const char* op, Dtype compute) {
  throw Error(op, std::string("no CUDA kernel for ") + dtype_name(compute) + " input");
}

namespace {

/// The kernel's name: an in-place op's ("add_") is its out-of-place op's ("add").
std::string kernel_name(const char* op) {
  std::string k(op);
  if (!k.empty() && k.back() == '_') k.pop_back();
  return k;
}

}  // namespace

void unary(const char* op, const Tensor& out, const Tensor& in, Dtype compute, const double* params) {
  const Operands o = operands({&out, &in}, op);
  Launch l(out);
  if (!cuda::unary(kernel_name(op).c_str(), compute, o, params, l.stream)) no_kernel(op, compute);
}

void binary(const char* op, const Tensor& out, const Tensor& a, const Tensor& b, Dtype compute, double alpha) {
  const Operands o = operands({&out, &a, &b}, op);
  Launch l(out);
  if (!cuda::binary(kernel_name(op).c_str(), compute, o, alpha, l.stream)) no_kernel(op, compute);
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Operands o = operands({&out, &cond, &a, &b}, "where");
  Launch l(out);
  if (!cuda::where(out.dtype(), o, l.stream)) no_kernel("where", out.dtype());
}

void fill(const Tensor& out, const Scalar& v) {
  const Operands o = operands({&out}, "fill_");
  Launch l(out);
  const auto c = v.to_complex();
  cuda::fill(o, c.real(), c.imag(), l.stream);
}

Tensor reduce(const char* op, const Tensor& x, const Shape& dims, bool keepdim, Dtype out_dtype) {
  check_device(x.device(), op);
  const std::vector<std::int64_t> red = ::phasor::detail::wrap_dims(dims, x.dim(), op, true);
  std::vector<bool> is_red(static_cast<std::size_t>(x.dim()), false);
  for (auto d : red) is_red[static_cast<std::size_t>(d)] = true;
  Shape perm, out_shape;
  std::int64_t n_out = 1, n_red = 1;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const std::int64_t sz = x.shape()[static_cast<std::size_t>(d)];
    if (is_red[static_cast<std::size_t>(d)]) {
      n_red *= sz;
      if (keepdim) out_shape.push_back(1);
    } else {
      perm.push_back(d);
      n_out *= sz;
      out_shape.push_back(sz);
    }
  }
  for (auto d : red) perm.push_back(d);
  const std::string name(op);
  if (n_red == 0 && (name == "amax" || name == "amin"))
    throw Error(op, "cannot reduce over an empty dim: input shape " + ::phasor::detail::shape_str(x.shape()) +
                        ", reduced dims " + ::phasor::detail::shape_str(Shape(red.begin(), red.end())) +
                        " (the operation has no identity)");
  NoGradGuard ng;
  const Tensor rows = (perm.empty() ? x : x.permute(perm)).contiguous();  // reduced dims last (copy kernel)
  Tensor out = ::phasor::detail::make_tensor(out_shape, out_dtype, x.device());
  Launch l(out);
  if (!cuda::reduce_rows(op, x.dtype(), rows.data_ptr(), n_out, n_red, out.data_ptr(), l.stream)) no_kernel(op, x.dtype());
  return out;
}

#else  // CPU-only build

namespace {
[[noreturn]] void cpu_only(const char* op, const Tensor& out) {
  check_device(out.device(), op);  // names the device and the build
  throw Error(op, "no CUDA kernels in this build (CPU-only build)");
}
}  // namespace
void unary(const char* op, const Tensor& out, const Tensor&, Dtype, const double*) { cpu_only(op, out); }
void binary(const char* op, const Tensor& out, const Tensor&, const Tensor&, Dtype, double) { cpu_only(op, out); }
void where(const Tensor& out, const Tensor&, const Tensor&, const Tensor&) { cpu_only("where", out); }
void fill(const Tensor& out, const Scalar&) { cpu_only("fill_", out); }
Tensor reduce(const char* op, const Tensor& x, const Shape&, bool, Dtype) { cpu_only(op, x); }

#endif

}  // namespace phasor::cuda::detail
