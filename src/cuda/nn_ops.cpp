// src/cuda/nn_ops.cpp - Tensor-level glue of the nn layer's CUDA kernels (src/cuda/nn_kernels.hpp):
// operand layout (contiguous copies), output allocation, the device guard and the current stream.
#include "cuda/nn_ops.hpp"

#include <string>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "phasor/autodiff.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/nn_kernels.hpp"
#include "cuda/runtime.hpp"
#endif

namespace phasor::cuda::detail {

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::detail::shape_str;

struct Launch {
  DeviceGuard guard;
  void* stream;
  explicit Launch(const Tensor& t) : guard(t.device().index), stream(current_stream_handle(t.device().index)) {}
};

ConvGeo to_geo(const ::phasor::detail::ConvGeometry& g, const char* op) {
  const auto nd = static_cast<int>(g.in.size());
  if (nd < 1 || nd > kMaxConvDims)
    throw Error(op, "CUDA convolutions take 1 to " + std::to_string(kMaxConvDims) + " spatial dims, got " +
                        std::to_string(nd) + " (window " + shape_str(g.kernel) + ")");
  ConvGeo c;
  c.nd = nd;
  for (int d = 0; d < nd; ++d) {
    const auto i = static_cast<std::size_t>(d);
    c.in[d] = g.in[i];
    c.out[d] = g.out[i];
    c.kernel[d] = g.kernel[i];
    c.stride[d] = g.stride[i];
    c.dilation[d] = g.dilation[i];
    c.pad[d] = g.pad_lo[i];
  }
  return c;
}

void check_on(const Tensor& t, const Tensor& ref, const char* op) {
  if (t.defined() && t.device() != ref.device())
    throw Error(op, "expected all tensors on " + ref.device().str() + ", got one on " + t.device().str());
}

}  // namespace

Tensor unfold(const Tensor& x, const ::phasor::detail::ConvGeometry& g, const char* op) {
  check_device(x.device(), op);
  const ConvGeo geo = to_geo(g, op);
  NoGradGuard ng;
  const Tensor xc = x.contiguous();
  const std::int64_t N = x.size(0), C = x.size(1), K = g.kernel_numel(), L = g.out_numel();
  Tensor cols = ::phasor::detail::make_tensor({N, C * K, L}, x.dtype(), x.device());
  if (cols.numel() == 0) return cols;
  Launch l(cols);
  im2col(xc.data_ptr(), cols.data_ptr(), N * C, geo, static_cast<int>(itemsize(x.dtype())), l.stream);
  return cols;
}

Tensor fold(const Tensor& cols, const ::phasor::detail::ConvGeometry& g, const char* op) {
  check_device(cols.device(), op);
  const ConvGeo geo = to_geo(g, op);
  NoGradGuard ng;
  const Tensor cc = cols.contiguous();
  const std::int64_t N = cols.size(0), K = g.kernel_numel(), C = cols.size(1) / K;
  Shape ys{N, C};
  ys.insert(ys.end(), g.in.begin(), g.in.end());
  Tensor y = ::phasor::detail::make_tensor(ys, cols.dtype(), cols.device());
  if (y.numel() == 0) return y;
  if (cols.numel() == 0) return y.zero_();
  const Dtype rt = to_real(cols.dtype());
  if (rt != Dtype::Float32 && rt != Dtype::Float64)
    throw Error(op, std::string("no CUDA kernel for ") + dtype_name(cols.dtype()) + " input");
  Launch l(y);
  col2im(cc.data_ptr(), y.data_ptr(), N * C, geo, rt == Dtype::Float64, cols.is_complex() ? 2 : 1, l.stream);
  return y;
}

Tensor spectral_mix(const Tensor& x, const Tensor& w) {
  const char* op = "spectral_mix";
  check_device(x.device(), op);
  check_on(w, x, op);
  if (x.dtype() != w.dtype() || (x.dtype() != Dtype::Complex64 && x.dtype() != Dtype::Complex128))
    throw Error(op, std::string("the CUDA kernel takes two complex64 or two complex128 tensors, got ") +
                        dtype_name(x.dtype()) + " and " + dtype_name(w.dtype()));
  NoGradGuard ng;
  const Tensor xc = x.contiguous(), wc = w.contiguous();
  const std::int64_t B = x.size(0), I = x.size(1), O = w.size(1);
  Shape os{B, O};
  os.insert(os.end(), x.shape().begin() + 2, x.shape().end());
  Tensor out = ::phasor::detail::make_tensor(os, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (I == 0) return out.zero_();
  const std::int64_t K = ::phasor::detail::shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  Launch l(out);
  ::phasor::cuda::spectral_mix(xc.data_ptr(), wc.data_ptr(), out.data_ptr(), B, I, O, K, x.dtype() == Dtype::Complex128, l.stream);
  return out;
}

void sgd_step(const Tensor& p, const Tensor& g, const Tensor& buf, const optim::detail::SgdCoeffs<double>& c, bool wd,
              bool momentum, bool nesterov, bool first) {
  check_device(p.device(), "optim.SGD");
  check_on(g, p, "optim.SGD");
  check_on(buf, p, "optim.SGD");
  const std::int64_t n = p.numel() * (p.is_complex() ? 2 : 1);
  Launch l(p);
  ::phasor::cuda::sgd_step(to_real(p.dtype()) == Dtype::Float64, p.data_ptr(), g.data_ptr(),
                           buf.defined() ? buf.data_ptr() : nullptr, n, c, wd, momentum, nesterov, first, l.stream);
}

void adam_step(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& vmax,
               const optim::detail::AdamCoeffs<double>& c, bool amsgrad, bool l2, bool lerp_low) {
  check_device(p.device(), "optim.Adam");
  for (const Tensor* t : {&g, &m, &v, &vmax}) check_on(*t, p, "optim.Adam");
  const std::int64_t n = p.numel() * (p.is_complex() ? 2 : 1);
  Launch l(p);
  ::phasor::cuda::adam_step(to_real(p.dtype()) == Dtype::Float64, p.data_ptr(), g.data_ptr(), m.data_ptr(),
                            v.data_ptr(), vmax.defined() ? vmax.data_ptr() : nullptr, n, c, amsgrad, l2, lerp_low,
                            l.stream);
}

#else  // CPU-only build

Tensor unfold(const Tensor& x, const ::phasor::detail::ConvGeometry&, const char* op) { no_cuda_backend(op, x.device()); }
Tensor fold(const Tensor& cols, const ::phasor::detail::ConvGeometry&, const char* op) { no_cuda_backend(op, cols.device()); }
Tensor spectral_mix(const Tensor& x, const Tensor&) { no_cuda_backend("spectral_mix", x.device()); }
void sgd_step(const Tensor& p, const Tensor&, const Tensor&, const optim::detail::SgdCoeffs<double>&, bool, bool, bool,
              bool) {
  no_cuda_backend("optim.SGD", p.device());
}
void adam_step(const Tensor& p, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
               const optim::detail::AdamCoeffs<double>&, bool, bool, bool) {
  no_cuda_backend("optim.Adam", p.device());
}

#endif

}  // namespace phasor::cuda::detail
