// src/cuda/nn_ops.cpp - Tensor-level glue of the nn layer's CUDA kernels (src/cuda/nn_kernels.hpp):
// operand layout (contiguous copies), output allocation, the device guard and the current stream.
#include "cuda/nn_ops.hpp"

#include <string>
#include <vector>

#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"

#if PHASOR_WITH_CUDA
#include "cuda/launch.hpp"
#include "cuda/nn_kernels.hpp"
#include "cuda/runtime.hpp"
#include "nn/spectral_mix_kernels.hpp"
#endif

namespace phasor::cuda::detail {

#if PHASOR_WITH_CUDA
namespace {

using ::phasor::detail::shape_str;

ConvGeo to_geo(const ::phasor::detail::ConvGeometry& g, const char* op) {
  const auto nd = static_cast<int>(g.in.size());
  if (nd < 1 || nd > kMaxConvDims)
    throw Error(op, "CUDA convolutions take 1 to " + std::to_string(kMaxConvDims) + " spatial dims, got " +
                        std::to_string(nd) + " (window " + shape_str(g.kernel.data(), g.kernel.size()) + ")");
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

Tensor spectral_mix(const Tensor& x, const Tensor& w, bool conj_x, bool conj_w) {
  const char* op = "spectral_mix";
  check_device(x.device(), op);
  check_on(w, x, op);
  if (x.dtype() != w.dtype() || (x.dtype() != Dtype::Complex64 && x.dtype() != Dtype::Complex128))
    throw Error(op, std::string("the CUDA kernel takes two complex64 or two complex128 tensors, got ") +
                        dtype_name(x.dtype()) + " and " + dtype_name(w.dtype()));
  NoGradGuard ng;
  using nn::detail::modes_contiguous;  // src/nn/spectral_mix_kernels.hpp
  const Tensor xc = modes_contiguous(x) ? x : x.contiguous(), wc = modes_contiguous(w) ? w : w.contiguous();
  const std::int64_t B = x.size(0), I = x.size(1), O = w.size(1);
  Shape os{B, O};
  os.insert(os.end(), x.shape().begin() + 2, x.shape().end());
  Tensor out = ::phasor::detail::make_tensor(os, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (I == 0) return out.zero_();
  const std::int64_t K = ::phasor::detail::shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  const MixStrides st{xc.stride(0), xc.stride(1), wc.stride(0), wc.stride(1)};
  Launch l(out);
  ::phasor::cuda::spectral_mix(xc.data_ptr(), wc.data_ptr(), out.data_ptr(), B, I, O, K, st, conj_x, conj_w,
                               x.dtype() == Dtype::Complex128, l.stream);
  return out;
}

namespace {
/// Throws "[op] the CUDA kernel takes a complex64 or complex128 tensor, got <dtype>" otherwise.
void expect_complex(const Tensor& t, const char* op) {
  if (t.dtype() != Dtype::Complex64 && t.dtype() != Dtype::Complex128)
    throw Error(op, std::string("the CUDA kernel takes a complex64 or complex128 tensor, got ") + dtype_name(t.dtype()));
}
}  // namespace

Tensor spectral_planes(const Tensor& y, const Tensor& bias, const nn::detail::PlaneGeo& g) {
  const char* op = "spectral_planes";
  check_device(y.device(), op);
  check_on(bias, y, op);
  expect_complex(y, op);
  Tensor out = ::phasor::detail::make_tensor(y.shape(), y.dtype(), y.device());
  Launch l(out);
  ::phasor::cuda::spectral_planes(y.data_ptr(), bias.defined() ? bias.data_ptr() : nullptr, out.data_ptr(), y.numel(),
                                  g, y.dtype() == Dtype::Complex128, l.stream);
  return out;
}

Tensor spectral_bias_grad(const Tensor& g, const nn::detail::PlaneGeo& geo) {
  const char* op = "spectral_bias_grad";
  check_device(g.device(), op);
  expect_complex(g, op);
  Tensor out = ::phasor::detail::make_tensor({geo.channels}, to_real(g.dtype()), g.device());
  Launch l(out);
  ::phasor::cuda::spectral_bias_grad(g.data_ptr(), out.data_ptr(), g.size(0), geo, g.dtype() == Dtype::Complex128,
                                     l.stream);
  return out;
}

namespace {
/// Checks every parameter's operands (on one CUDA device each) before anything runs, then calls
/// run(device, is_double, slices, stream) once per device and real type with the slices make(param)
/// builds, in the parameters' order (Note [multi-tensor launch] in optim.cu).
template <class Slice, class P, class Make, class Run>
void by_device_and_type(const std::vector<P>& ps, const char* op, Make make, Run run) {
  for (const P& q : ps) {
    check_device(q.p.device(), op);
    for (const Tensor* t : q.operands()) check_on(*t, q.p, op);
  }
  std::vector<bool> done(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (done[i]) continue;
    const Device dev = ps[i].p.device();
    const bool dbl = to_real(ps[i].p.dtype()) == Dtype::Float64;
    std::vector<Slice> slices;
    for (std::size_t j = i; j < ps.size(); ++j)
      if (!done[j] && ps[j].p.device() == dev && (to_real(ps[j].p.dtype()) == Dtype::Float64) == dbl) {
        done[j] = true;
        slices.push_back(make(ps[j], ps[j].p.numel() * (ps[j].p.is_complex() ? 2 : 1)));
      }
    Launch l(ps[i].p);
    run(dev, dbl, slices, l.stream);
  }
}

void* ptr_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }
}  // namespace

void sgd_step(const std::vector<SgdParam>& ps, bool wd, bool momentum, bool nesterov, const LrOn& lr_on) {
  by_device_and_type<SgdSlice>(
      ps, "optim.SGD",
      [](const SgdParam& q, std::int64_t n) {
        return SgdSlice{q.p.data_ptr(), q.g.data_ptr(), ptr_or_null(q.buf), n, q.c, q.first};
      },
      [&](Device dev, bool dbl, const std::vector<SgdSlice>& s, void* stream) {
        ::phasor::cuda::sgd_step(dbl, s.data(), static_cast<int>(s.size()), wd, momentum, nesterov,
                                 lr_on ? lr_on(dev) : nullptr, stream);
      });
}

void adam_step(const std::vector<AdamParam>& ps, bool amsgrad, bool l2, const optim::detail::AdamBias& bias,
               const LrOn& lr_on, double decoupled_wd) {
  by_device_and_type<AdamSlice>(
      ps, "optim.Adam",
      [](const AdamParam& q, std::int64_t n) {
        return AdamSlice{q.p.data_ptr(), q.g.data_ptr(), q.m.data_ptr(), q.v.data_ptr(), ptr_or_null(q.vmax), n, q.c,
                         static_cast<double*>(ptr_or_null(q.step))};
      },
      [&](Device dev, bool dbl, const std::vector<AdamSlice>& s, void* stream) {
        // torch.lerp's formula choice, made in the parameter's real type as the CPU makes it
        const bool low = dbl ? s[0].c.w1 < 0.5 : static_cast<float>(s[0].c.w1) < 0.5f;
        ::phasor::cuda::adam_step(dbl, s.data(), static_cast<int>(s.size()), amsgrad, l2, low, bias,
                                  lr_on ? lr_on(dev) : nullptr, decoupled_wd, stream);
      });
}

namespace {
/// NC, and the element type of a pooling's CUDA operand (float32 or float64).
bool pool_is_double(const Tensor& t, const char* op) {
  if (t.dtype() != Dtype::Float32 && t.dtype() != Dtype::Float64)
    throw Error(op, std::string("no CUDA kernel for ") + dtype_name(t.dtype()) + " input");
  return t.dtype() == Dtype::Float64;
}
}  // namespace

std::pair<Tensor, Tensor> max_pool(const Tensor& x, const nn::detail::PoolGeo& g, const Shape& out_shape) {
  const char* op = "max_pool";
  check_device(x.device(), op);
  const bool dbl = pool_is_double(x, op);
  NoGradGuard ng;
  const Tensor xc = x.contiguous();
  Tensor y = ::phasor::detail::make_tensor(out_shape, x.dtype(), x.device());
  Tensor idx = ::phasor::detail::make_tensor(out_shape, Dtype::Int64, x.device());
  if (y.numel() == 0) return {y, idx};
  Launch l(y);
  ::phasor::cuda::max_pool(xc.data_ptr(), y.data_ptr(), static_cast<std::int64_t*>(idx.data_ptr()),
                           x.size(0) * x.size(1), g, dbl, l.stream);
  return {y, idx};
}

Tensor avg_pool(const Tensor& x, const nn::detail::PoolGeo& g, const Shape& out_shape) {
  const char* op = "avg_pool";
  check_device(x.device(), op);
  const bool dbl = pool_is_double(x, op);
  NoGradGuard ng;
  const Tensor xc = x.contiguous();
  Tensor y = ::phasor::detail::make_tensor(out_shape, x.dtype(), x.device());
  if (y.numel() == 0) return y;
  Launch l(y);
  ::phasor::cuda::avg_pool(xc.data_ptr(), y.data_ptr(), x.size(0) * x.size(1), g, dbl, l.stream);
  return y;
}

Tensor avg_pool_adjoint(const Tensor& gy, const nn::detail::PoolGeo& g, const Shape& in_shape) {
  const char* op = "avg_pool_backward";
  check_device(gy.device(), op);
  const bool dbl = pool_is_double(gy, op);
  NoGradGuard ng;
  const Tensor gc = gy.contiguous();
  Tensor gx = ::phasor::detail::make_tensor(in_shape, gy.dtype(), gy.device());
  if (gx.numel() == 0) return gx;
  if (gy.numel() == 0) return gx.zero_();
  Launch l(gx);
  ::phasor::cuda::avg_pool_adjoint(gc.data_ptr(), gx.data_ptr(), gy.size(0) * gy.size(1), g, dbl, l.stream);
  return gx;
}

Tensor resample(const Tensor& x, std::int64_t dim, const nn::detail::SparseMap& map) {
  const char* op = "resample";
  check_device(x.device(), op);
  const Dtype dt = x.dtype();
  if (dt != Dtype::Float32 && dt != Dtype::Float64 && dt != Dtype::Complex64 && dt != Dtype::Complex128)
    throw Error(op, std::string("no CUDA kernel for ") + dtype_name(dt) + " input");
  const Dtype rt = to_real(dt);
  NoGradGuard ng;
  const Tensor xc = x.contiguous();
  Shape ys = x.shape();
  ys[static_cast<std::size_t>(dim)] = map.out;
  Tensor y = ::phasor::detail::make_tensor(ys, dt, x.device());
  if (y.numel() == 0) return y;
  std::int64_t pre = 1, post = is_complex(dt) ? 2 : 1;
  for (std::int64_t d = 0; d < dim; ++d) pre *= x.size(d);
  for (std::int64_t d = dim + 1; d < x.dim(); ++d) post *= x.size(d);
  const Tensor rp = from_vector(map.row_ptr, std::nullopt, x.device());
  const Tensor col = from_vector(map.col, std::nullopt, x.device());
  const Tensor val = from_vector(map.val, std::nullopt, x.device()).to(rt);
  Launch l(y);
  ::phasor::cuda::resample(xc.data_ptr(), y.data_ptr(), static_cast<const std::int64_t*>(rp.data_ptr()),
                           static_cast<const std::int64_t*>(col.data_ptr()), val.data_ptr(), pre, map.in, map.out, post,
                           rt == Dtype::Float64, l.stream);
  return y;
}

#else  // CPU-only build

Tensor unfold(const Tensor& x, const ::phasor::detail::ConvGeometry&, const char* op) { no_cuda_backend(op, x.device()); }
Tensor fold(const Tensor& cols, const ::phasor::detail::ConvGeometry&, const char* op) { no_cuda_backend(op, cols.device()); }
Tensor spectral_mix(const Tensor& x, const Tensor&, bool, bool) { no_cuda_backend("spectral_mix", x.device()); }
Tensor spectral_planes(const Tensor& y, const Tensor&, const nn::detail::PlaneGeo&) {
  no_cuda_backend("spectral_planes", y.device());
}
Tensor spectral_bias_grad(const Tensor& g, const nn::detail::PlaneGeo&) { no_cuda_backend("spectral_bias_grad", g.device()); }
void sgd_step(const std::vector<SgdParam>& ps, bool, bool, bool, const LrOn&) {
  if (!ps.empty()) no_cuda_backend("optim.SGD", ps[0].p.device());
}
void adam_step(const std::vector<AdamParam>& ps, bool, bool, const optim::detail::AdamBias&, const LrOn&, double) {
  if (!ps.empty()) no_cuda_backend("optim.Adam", ps[0].p.device());
}

std::pair<Tensor, Tensor> max_pool(const Tensor& x, const nn::detail::PoolGeo&, const Shape&) {
  no_cuda_backend("max_pool", x.device());
}
Tensor avg_pool(const Tensor& x, const nn::detail::PoolGeo&, const Shape&) { no_cuda_backend("avg_pool", x.device()); }
Tensor avg_pool_adjoint(const Tensor& gy, const nn::detail::PoolGeo&, const Shape&) {
  no_cuda_backend("avg_pool_backward", gy.device());
}
Tensor resample(const Tensor& x, std::int64_t, const nn::detail::SparseMap&) { no_cuda_backend("resample", x.device()); }

#endif

}  // namespace phasor::cuda::detail
