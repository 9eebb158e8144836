// src/cuda/ops.cpp - builds the operands of CUDA elementwise kernels from tensors with the CPU
// engine's own loop builder (broadcasting, dim coalescing) and launches them on the current stream.
#include "cuda/ops.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/elementwise.hpp"
#include "core/scan_rules.hpp"
#include "phasor/autodiff.hpp"

#include "cuda/backend.hpp"
#include "cuda/fast_div.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/launch.hpp"
#include "cuda/reduce.hpp"
#endif

namespace phasor::cuda {

namespace {
std::atomic<std::int64_t> g_fast_div_limit{std::int64_t{1} << 31};
}  // namespace

bool fits_fast_div(std::int64_t n) { return n < g_fast_div_limit.load(std::memory_order_relaxed); }

std::int64_t set_fast_div_limit(std::int64_t limit) {
  return g_fast_div_limit.exchange(std::min(limit, std::int64_t{1} << 31));
}

}  // namespace phasor::cuda

namespace phasor::cuda::detail {

#if PHASOR_WITH_CUDA
Operands operands(std::initializer_list<const Tensor*> ts, const char* op) { return operands(ts, (*ts.begin())->shape(), op); }

Operands operands(std::initializer_list<const Tensor*> ts, const Shape& shape, const char* op) {
  const Tensor& out = **ts.begin();
  const Device device = out.device();
  // an input may be a host scalar: a 0-d host tensor whose value travels by value (Note [host scalars]);
  // the kernels take one (Note [cuda elementwise])
  unsigned by_value = 0;  // bit k: operand k
  int k = 0;
  for (const Tensor* t : ts) {
    const Device d = t->device();
    if (d != device) {
      if (k == 0 || t->dim() != 0 || d != Device::cpu())
        throw Error(op, "expected all tensors on " + device.str() + ", got one on " + d.str());
      if (by_value) throw Error(op, "internal: a CUDA elementwise kernel takes one input by value, got more");
      by_value |= 1u << k;
    }
    ++k;
  }
  check_device(out.device(), op);  // "[op] device cuda:i does not exist (...)"
  const ::phasor::detail::StridedLoop loop = ::phasor::detail::make_device_loop(ts, shape);
  if (loop.nd > kMaxDims)
    throw Error(op, "a CUDA elementwise kernel takes at most " + std::to_string(kMaxDims) + " dims after merging, got " +
                        std::to_string(loop.nd));
  Operands o;
  o.count = static_cast<int>(ts.size());
  o.ndim = loop.nd;
  o.numel = loop.numel;
  k = 0;
  for (const Tensor* t : ts) {
    o.data[k] = loop.base[static_cast<std::size_t>(k)];
    o.dtype[k] = t->dtype();
    if (by_value >> k & 1u) {
      std::memcpy(o.value[k], t->data_ptr(), t->itemsize());
      o.data[k] = nullptr;
    }
    for (int d = 0; d < loop.nd; ++d)
      o.strides[k][d] = loop.strides[static_cast<std::size_t>(d)][static_cast<std::size_t>(k)];
    ++k;
  }
  for (int d = 0; d < loop.nd; ++d) o.sizes[d] = loop.shape[static_cast<std::size_t>(d)];
  o.index32 = o.numel > 0 && fits_fast_div(o.numel);
  if (o.index32)
    for (int d = 1; d < loop.nd; ++d) o.div[d] = FastDiv(o.sizes[d]);  // every size is >= 1 when numel > 0
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

namespace {

/// The three inputs of a ternary kernel as it takes them: the kernels take one input by value (Note [cuda
/// elementwise]), so of several host scalars all but the last are filled on out's device (any other mix of
/// devices is left for operands() to refuse).
std::array<Tensor, 3> one_by_value(const Tensor& out, std::array<Tensor, 3> in) {
  const auto by_value = [&](const Tensor& t) {
    return t.device() != out.device() && t.device() == Device::cpu() && t.dim() == 0;
  };
  int values = 0;
  for (const Tensor& t : in) values += by_value(t);
  for (Tensor& t : in) {
    if (values < 2) break;
    if (!by_value(t)) continue;
    Tensor d = ::phasor::detail::make_tensor({}, t.dtype(), out.device());
    fill(d, t.item());
    t = d;
    --values;
  }
  return in;
}

}  // namespace

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  const auto in = one_by_value(out, {cond, a, b});
  const Operands o = operands({&out, &in[0], &in[1], &in[2]}, "where");
  Launch l(out);
  if (!cuda::where(out.dtype(), o, l.stream)) no_kernel("where", out.dtype());
}

void ternary(const char* op, const Tensor& out, const Tensor& x, const Tensor& a, const Tensor& b, Dtype compute,
             const Scalar& value) {
  const auto in = one_by_value(out, {x, a, b});
  const Operands o = operands({&out, &in[0], &in[1], &in[2]}, op);
  Launch l(out);
  const std::complex<double> v = value.to_complex();
  if (!cuda::ternary(kernel_name(op).c_str(), compute, o, v.real(), v.imag(), value.to_int(), l.stream))
    no_kernel(op, compute);
}

void fill(const Tensor& out, const Scalar& v) {
  const Operands o = operands({&out}, "fill_");
  Launch l(out);
  const auto c = v.to_complex();
  cuda::fill(o, c.real(), c.imag(), v.to_int(), l.stream);
}

void ramp(const char* op, const Tensor& out, const ::phasor::detail::Ramp& r) {
  check_device(out.device(), op);
  Launch l(out);
  cuda::ramp(out.dtype(), out.data_ptr(), r, l.stream);
}

namespace {

/// A reduction of x over some dims laid out as (n_out, n_red) rows: contiguous (the reduced dims moved
/// last and copied contiguous on the GPU), or, when `gapped` is allowed and x's layout fits, x itself read
/// as gapped rows (Note [gapped rows] in reduce.cu: inner > 0).
struct Rows {
  Tensor rows;
  Shape out_shape;
  std::vector<std::int64_t> dims;  // reduced dims (wrapped)
  std::int64_t n_out = 1, n_red = 1;
  std::int64_t inner = 0, outer_stride = 0;  // gapped rows when inner > 0
};

/// For a contiguous x whose kept dims (size-1 dims aside) form one block after a leading block of reduced
/// dims and before an optional trailing one: the gapped layout's inner block size and outer stride; 0, 0
/// where x needs the copy or is already contiguous rows.
std::pair<std::int64_t, std::int64_t> gapped_layout(const Tensor& x, const std::vector<bool>& is_red) {
  if (!x.is_contiguous()) return {0, 0};
  int phase = 0;  // 0: leading reduced, 1: kept, 2: trailing reduced
  bool lead = false;
  std::int64_t kept = 1, inner = 1;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const std::int64_t sz = x.size(d);
    const bool r = is_red[static_cast<std::size_t>(d)];
    if (sz == 1) continue;
    if (phase == 0 && r) lead = true;
    else if (phase <= 1 && !r) phase = 1, kept *= sz;
    else if (phase >= 1 && r) phase = 2, inner *= sz;
    else return {0, 0};  // a kept dim after a trailing reduced one
  }
  if (!lead || phase == 0) return {0, 0};  // contiguous rows already, or a full reduction
  return {inner, kept * inner};
}

Rows rows_of(const Tensor& x, const Shape& dims, bool keepdim, const char* op, bool gapped = false) {
  check_device(x.device(), op);
  Rows r;
  r.dims = ::phasor::detail::wrap_dims(dims, x.dim(), op, true);
  std::vector<bool> is_red(static_cast<std::size_t>(x.dim()), false);
  for (auto d : r.dims) is_red[static_cast<std::size_t>(d)] = true;
  Shape perm;
  perm.reserve(static_cast<std::size_t>(x.dim()));
  r.out_shape.reserve(static_cast<std::size_t>(x.dim()));
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const std::int64_t sz = x.shape()[static_cast<std::size_t>(d)];
    if (is_red[static_cast<std::size_t>(d)]) {
      r.n_red *= sz;
      if (keepdim) r.out_shape.push_back(1);
    } else {
      perm.push_back(d);
      r.n_out *= sz;
      r.out_shape.push_back(sz);
    }
  }
  if (gapped) {
    std::tie(r.inner, r.outer_stride) = gapped_layout(x, is_red);
    if (r.inner > 0) {
      r.rows = x;
      return r;
    }
  }
  for (auto d : r.dims) perm.push_back(d);
  bool in_order = true;  // the reduced dims are last already: no view to make
  for (std::size_t i = 0; i < perm.size(); ++i) in_order = in_order && perm[i] == static_cast<std::int64_t>(i);
  NoGradGuard ng;
  r.rows = (in_order ? x : x.permute(perm)).contiguous();  // reduced dims last (copy kernel)
  return r;
}

}  // namespace

Tensor reduce(const char* op, const Tensor& x, const Shape& dims, bool keepdim, Dtype out_dtype) {
  const Rows r = rows_of(x, dims, keepdim, op, true);
  Tensor out = ::phasor::detail::make_tensor(r.out_shape, out_dtype, x.device());
  Launch l(out);
  if (!cuda::reduce_rows(op, x.dtype(), r.rows.data_ptr(), r.n_out, r.n_red, out.data_ptr(), l.stream, r.inner,
                         r.outer_stride))
    no_kernel(op, x.dtype());
  return out;
}

Tensor reduce_stat(const char* op, const Tensor& x, const Shape& dims, bool keepdim, double param) {
  const Rows r = rows_of(x, dims, keepdim, op);
  const std::string name(op);
  // var/std divide by the degrees of freedom max(0, N - correction)
  const double p = name == "var" || name == "std" ? std::max(0.0, static_cast<double>(r.n_red) - param) : param;
  const Dtype od = name == "logsumexp" ? x.dtype() : to_real(x.dtype());
  Tensor out = ::phasor::detail::make_tensor(r.out_shape, od, x.device());
  Launch l(out);
  if (!cuda::stat_rows(op, x.dtype(), r.rows.data_ptr(), r.n_out, r.n_red, p, out.data_ptr(), l.stream))
    no_kernel(op, x.dtype());
  return out;
}

std::pair<Tensor, Tensor> arg_reduce(const char* op, const Tensor& x, std::int64_t d, bool keepdim, bool is_max,
                                     bool want_values) {
  const Rows r = rows_of(x, Shape{d}, keepdim, op);
  Tensor idx = ::phasor::detail::make_tensor(r.out_shape, Dtype::Int64, x.device());
  Tensor val = want_values ? ::phasor::detail::make_tensor(r.out_shape, x.dtype(), x.device()) : Tensor();
  Launch l(idx);
  if (!cuda::arg_rows(x.dtype(), is_max, r.rows.data_ptr(), r.n_out, r.n_red, static_cast<std::int64_t*>(idx.data_ptr()),
                      want_values ? val.data_ptr() : nullptr, l.stream))
    no_kernel(op, x.dtype());
  return {val, idx};
}

void scan(::phasor::detail::ScanKind kind, const Tensor& src, const Tensor& out, std::int64_t outer, std::int64_t n,
          std::int64_t inner, bool reverse) {
  const char* op = ::phasor::detail::scan_name(kind);
  check_device(out.device(), op);
  Launch l(out);
  if (!cuda::scan(kind, out.dtype(), src.data_ptr(), out.data_ptr(), outer, n, inner, reverse, l.stream))
    no_kernel(op, out.dtype());
}

#else  // CPU-only build

void unary(const char* op, const Tensor& out, const Tensor&, Dtype, const double*) { no_cuda_backend(op, out.device()); }
void binary(const char* op, const Tensor& out, const Tensor&, const Tensor&, Dtype, double) { no_cuda_backend(op, out.device()); }
void where(const Tensor& out, const Tensor&, const Tensor&, const Tensor&) { no_cuda_backend("where", out.device()); }
void ternary(const char* op, const Tensor& out, const Tensor&, const Tensor&, const Tensor&, Dtype, const Scalar&) {
  no_cuda_backend(op, out.device());
}
void fill(const Tensor& out, const Scalar&) { no_cuda_backend("fill_", out.device()); }
void ramp(const char* op, const Tensor& out, const ::phasor::detail::Ramp&) { no_cuda_backend(op, out.device()); }
Tensor reduce(const char* op, const Tensor& x, const Shape&, bool, Dtype) { no_cuda_backend(op, x.device()); }
Tensor reduce_stat(const char* op, const Tensor& x, const Shape&, bool, double) { no_cuda_backend(op, x.device()); }
std::pair<Tensor, Tensor> arg_reduce(const char* op, const Tensor& x, std::int64_t, bool, bool, bool) {
  no_cuda_backend(op, x.device());
}
void scan(::phasor::detail::ScanKind kind, const Tensor&, const Tensor& out, std::int64_t, std::int64_t, std::int64_t,
          bool) {
  no_cuda_backend(::phasor::detail::scan_name(kind), out.device());
}

#endif

}  // namespace phasor::cuda::detail
