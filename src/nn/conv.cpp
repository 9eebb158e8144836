// src/nn/conv.cpp - functional linear, convolutions, unfold/fold and dropout.
//
// Note [convolution as matmul]
// A convolution is a matrix product with the unfolded input: with cols = unfold(x) (N, C*K, L),
//   out = w.reshape(groups, O/groups, C/groups*K) @ cols.reshape(N, groups, C/groups*K, L)
// conv_nd runs it through three primitives (src/nn/conv_kernels.cpp, Note [convolution
// primitives]) that unfold a cache-sized chunk of the batch at a time and multiply it with BLAS, and
// whose gradients are each other, so gradients of any order work and the column matrix of the
// whole batch is never stored. Non-zero padding modes pad the input with pad() first; zero
// padding happens inside the unfold (no padded copy). A 1x1 kernel with stride 1 and no padding
// skips the unfold: the input is already the column matrix, so it is one gemm per sample.
// The public unfold/fold are the same kernels as primitives of their own (each the other's gradient).
#include "phasor/nn/conv.hpp"

#include <cmath>
#include <sstream>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
#include "nn/conv_kernels.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn {

using detail::shape_str;

const char* padding_mode_name(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::zeros: return "zeros";
    case PaddingMode::reflect: return "reflect";
    case PaddingMode::replicate: return "replicate";
    case PaddingMode::circular: return "circular";
  }
  return "?";
}

Shape IntList::expand(std::int64_t ndim, const char* op, const char* what) const {
  if (values.size() == 1) return Shape(static_cast<std::size_t>(ndim), values[0]);
  if (static_cast<std::int64_t>(values.size()) != ndim)
    throw Error(op, std::string(what) + " " + shape_str(values) + " must have 1 or " + std::to_string(ndim) +
                        " entries");
  return values;
}

Padding::Padding(const std::string& s) {
  if (s == "same") kind = Kind::same;
  else if (s == "valid") kind = Kind::valid;
  else throw Error("Padding", "padding string must be 'same' or 'valid', got '" + s + "'");
}

std::string Padding::str(std::int64_t ndim) const {
  if (kind == Kind::same) return "same";
  if (kind == Kind::valid) return "valid";
  return shape_str(values.size() == 1 ? Shape(static_cast<std::size_t>(ndim), values[0]) : values);
}

namespace {

void check_defined(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw Error(op, std::string(what) + " is undefined");
}

/// Throws unless `t` lives on the input's device (CPU and CUDA tensors both run here).
void check_same_device(const Tensor& x, const Tensor& t, const char* op, const char* what) {
  if (t.device() != x.device())
    throw Error(op, std::string("expected ") + what + " on the input's device " + x.device().str() + ", got " +
                        t.device().str());
}

void check_float(const Tensor& t, const char* op, const char* what) {
  if (!is_floating_or_complex(t.dtype()))
    throw Error(op, std::string("expected a floating or complex ") + what + ", got " + dtype_name(t.dtype()) +
                        " of shape " + shape_str(t.shape()));
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  if (a.dtype() != b.dtype())
    throw Error(op, std::string(an) + " dtype " + dtype_name(a.dtype()) + " and " + bn + " dtype " +
                        dtype_name(b.dtype()) + " differ");
}

void check_min(const Shape& v, std::int64_t min, const char* op, const char* what) {
  for (auto e : v)
    if (e < min)
      throw Error(op, std::string(what) + " must be >= " + std::to_string(min) + ", got " + shape_str(v));
}

Shape spatial_of(const Shape& s, std::size_t skip) { return Shape(s.begin() + static_cast<std::ptrdiff_t>(skip), s.end()); }

/// The checks conv_nd and conv_transpose_nd share: x, weight (3-D or more; its layout named in the message)
/// and their dtypes; returns the number of spatial dims, weight.dim() - 2.
std::int64_t check_conv_operands(const Tensor& x, const Tensor& weight, const char* op, const char* layout) {
  check_defined(x, op, "input");
  check_defined(weight, op, "weight");
  if (weight.dim() < 3)
    throw Error(op, std::string("weight must have shape ") + layout + ", got " + shape_str(weight.shape()));
  const std::int64_t nd = weight.dim() - 2;
  if (x.dim() != nd + 1 && x.dim() != nd + 2)
    throw Error(op, "expected a " + std::to_string(nd + 1) + "-D (unbatched) or " + std::to_string(nd + 2) +
                        "-D (batched) input for weight " + shape_str(weight.shape()) + ", got " + shape_str(x.shape()));
  check_float(x, op, "input");
  check_same_dtype(x, weight, op, "input", "weight");
  return nd;
}

/// An optional bias: on the input's device, of its dtype, with one entry per output channel.
void check_conv_bias(const Tensor& x, const Tensor& bias, std::int64_t channels, const char* op) {
  if (!bias.defined()) return;
  check_same_device(x, bias, op, "bias");
  if (bias.dim() != 1 || bias.size(0) != channels)
    throw Error(op, "bias must have shape " + shape_str({channels}) + ", got " + shape_str(bias.shape()));
  check_same_dtype(x, bias, op, "input", "bias");
}

/// Sliding-window geometry for `in` with padding (lo, hi); throws when the window does not fit.
detail::ConvGeometry make_geometry(const char* op, const Shape& in, const Shape& kernel, const Shape& stride,
                                   const Shape& dilation, const Shape& lo, const Shape& hi, const Shape& xshape) {
  using detail::SpatialDims;
  detail::ConvGeometry g{SpatialDims(in),       SpatialDims(in.size()), SpatialDims(kernel), SpatialDims(stride),
                         SpatialDims(dilation), SpatialDims(lo)};
  Shape span(in.size()), padded(in.size());
  bool fits = true;
  for (std::size_t d = 0; d < in.size(); ++d) {
    span[d] = dilation[d] * (kernel[d] - 1) + 1;
    padded[d] = in[d] + lo[d] + hi[d];
    if (padded[d] < span[d]) fits = false;
    else g.out[d] = (padded[d] - span[d]) / stride[d] + 1;
  }
  if (!fits)
    throw Error(op, "kernel " + shape_str(kernel) + " with dilation " + shape_str(dilation) + " spans " +
                        shape_str(span) + ", larger than the padded input " + shape_str(padded) + " of input " +
                        shape_str(xshape));
  return g;
}

/// Checks kernel/dilation/padding/stride for unfold and fold and expands them to `nd` dims.
struct WindowArgs {
  Shape kernel, dilation, padding, stride;
};
WindowArgs window_args(const char* op, std::int64_t nd, const IntList& kernel_size, const IntList& dilation,
                       const IntList& padding, const IntList& stride) {
  WindowArgs a{kernel_size.expand(nd, op, "kernel_size"), dilation.expand(nd, op, "dilation"),
               padding.expand(nd, op, "padding"), stride.expand(nd, op, "stride")};
  check_min(a.kernel, 1, op, "kernel_size");
  check_min(a.dilation, 1, op, "dilation");
  check_min(a.padding, 0, op, "padding");
  check_min(a.stride, 1, op, "stride");
  return a;
}

Tensor unfold_impl(const char* op, const Tensor& x, std::int64_t nd, const IntList& kernel_size,
                   const IntList& dilation, const IntList& padding, const IntList& stride) {
  check_defined(x, op, "input");
  check_float(x, op, "input");
  if (x.dim() != nd + 1 && x.dim() != nd + 2)
    throw Error(op, "expected a " + std::to_string(nd + 1) + "-D (unbatched) or " + std::to_string(nd + 2) +
                        "-D (batched) input, got " + shape_str(x.shape()));
  const WindowArgs a = window_args(op, nd, kernel_size, dilation, padding, stride);
  const bool batched = x.dim() == nd + 2;
  const Tensor xb = batched ? x : x.unsqueeze(0);
  const detail::ConvGeometry g =
      make_geometry(op, spatial_of(xb.shape(), 2), a.kernel, a.stride, a.dilation, a.padding, a.padding, x.shape());
  return detail::composite(op, {x}, [&] {
    Tensor cols = detail::unfold_op(xb, g);
    return batched ? cols : cols.squeeze(0);
  });
}

Tensor fold_impl(const char* op, const Tensor& x, const Shape& output_size, const IntList& kernel_size,
                 const IntList& dilation, const IntList& padding, const IntList& stride) {
  check_defined(x, op, "input");
  check_float(x, op, "input");
  const auto nd = static_cast<std::int64_t>(output_size.size());
  if (nd < 1) throw Error(op, "output_size must name at least one spatial dim");
  if (x.dim() != 2 && x.dim() != 3)
    throw Error(op, "expected a 2-D (unbatched) or 3-D (batched) input of columns, got " + shape_str(x.shape()));
  const WindowArgs a = window_args(op, nd, kernel_size, dilation, padding, stride);
  check_min(output_size, 1, op, "output_size");
  const bool batched = x.dim() == 3;
  const Tensor xb = batched ? x : x.unsqueeze(0);
  const detail::ConvGeometry g =
      make_geometry(op, output_size, a.kernel, a.stride, a.dilation, a.padding, a.padding, x.shape());
  const std::int64_t K = g.kernel_numel(), L = g.out_numel();
  if (xb.size(1) % K != 0)
    throw Error(op, "expected the column dim of input " + shape_str(x.shape()) + " to be divisible by prod(kernel_size) = " +
                        std::to_string(K));
  if (xb.size(2) != L)
    throw Error(op, "input " + shape_str(x.shape()) + " has " + std::to_string(xb.size(2)) + " blocks, but output_size " +
                        shape_str(output_size) + " with kernel " + shape_str(a.kernel) + " gives " +
                        std::to_string(L) + " blocks " + shape_str(g.out.data(), g.out.size()));
  return detail::composite(op, {x}, [&] {
    Tensor y = detail::fold_op(xb, g);
    return batched ? y : y.squeeze(0);
  });
}

}  // namespace

namespace functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const char* op = "linear";
  check_defined(x, op, "input");
  check_defined(weight, op, "weight");
  if (weight.dim() != 2) throw Error(op, "weight must be 2-D (out, in), got " + shape_str(weight.shape()));
  if (x.dim() < 1 || x.size(-1) != weight.size(1))
    throw Error(op, "expected input with " + std::to_string(weight.size(1)) + " features in the last dim (weight " +
                        shape_str(weight.shape()) + "), got " + shape_str(x.shape()));
  check_same_dtype(x, weight, op, "input", "weight");
  check_same_device(x, weight, op, "weight");
  if (bias.defined()) {
    check_same_device(x, bias, op, "bias");
    if (bias.dim() != 1 || bias.size(0) != weight.size(0))
      throw Error(op, "bias must have shape " + shape_str({weight.size(0)}) + ", got " + shape_str(bias.shape()));
    check_same_dtype(x, bias, op, "input", "bias");
  }
  std::vector<Tensor> ins{x, weight};
  if (bias.defined()) ins.push_back(bias);
  return detail::composite(op, ins, [&] {
    Tensor y = matmul(x, weight.t());
    return bias.defined() ? y + bias : y;
  });
}

Tensor conv_nd(const Tensor& x, const Tensor& weight, const Tensor& bias, const IntList& stride_arg,
               const Padding& padding, const IntList& dilation_arg, std::int64_t groups, PaddingMode padding_mode,
               const char* op) {
  const std::int64_t nd = check_conv_operands(x, weight, op, "(out_channels, in_channels / groups, *kernel)");
  if (groups < 1) throw Error(op, "groups must be >= 1, got " + std::to_string(groups));
  const std::int64_t O = weight.size(0), Cg = weight.size(1);
  if (O % groups != 0)
    throw Error(op, "groups " + std::to_string(groups) + " must divide out_channels " + std::to_string(O) +
                        " (weight " + shape_str(weight.shape()) + ")");
  const bool batched = x.dim() == nd + 2;
  const std::int64_t C = x.size(batched ? 1 : 0);
  if (C != Cg * groups)
    throw Error(op, "expected input with " + std::to_string(Cg * groups) + " channels (weight " +
                        shape_str(weight.shape()) + ", groups " + std::to_string(groups) + "), got " +
                        shape_str(x.shape()));
  check_same_device(x, weight, op, "weight");
  check_conv_bias(x, bias, O, op);
  const Shape kernel = spatial_of(weight.shape(), 2);
  const Shape stride = stride_arg.expand(nd, op, "stride");
  const Shape dilation = dilation_arg.expand(nd, op, "dilation");
  check_min(stride, 1, op, "stride");
  check_min(dilation, 1, op, "dilation");
  check_min(kernel, 1, op, "kernel size");
  const Shape in = spatial_of(x.shape(), batched ? 2 : 1);
  Shape lo(static_cast<std::size_t>(nd), 0), hi(static_cast<std::size_t>(nd), 0);
  if (padding.kind == Padding::Kind::sizes) {
    lo = hi = IntList(padding.values).expand(nd, op, "padding");
    check_min(lo, 0, op, "padding");
  } else if (padding.kind == Padding::Kind::same) {
    for (auto s : stride)
      if (s != 1)
        throw Error(op, "padding='same' is not supported for strided convolutions (stride " + shape_str(stride) + ")");
    for (std::size_t d = 0; d < kernel.size(); ++d) {  // torch: the odd extra pad goes after
      const std::int64_t total = dilation[d] * (kernel[d] - 1);
      lo[d] = total / 2;
      hi[d] = total - lo[d];
    }
  }
  // The window must fit the padded input (checked before any work).
  detail::ConvGeometry g = make_geometry(op, in, kernel, stride, dilation, lo, hi, x.shape());
  bool any_pad = false;
  for (std::size_t d = 0; d < lo.size(); ++d) any_pad = any_pad || lo[d] > 0 || hi[d] > 0;
  if (any_pad && padding_mode != PaddingMode::zeros) {
    for (std::size_t d = 0; d < lo.size(); ++d) {
      const std::int64_t p = std::max(lo[d], hi[d]);
      const bool bad = (padding_mode == PaddingMode::reflect && p >= in[d]) ||
                       (padding_mode == PaddingMode::circular && p > in[d]) ||
                       (padding_mode == PaddingMode::replicate && in[d] == 0);
      if (bad)
        throw Error(op, std::string(padding_mode_name(padding_mode)) + " padding " + shape_str(lo) +
                            " is too large for input " + shape_str(x.shape()) +
                            (padding_mode == PaddingMode::reflect ? " (must be smaller than each spatial size)"
                                                                  : " (may not exceed each spatial size)"));
    }
  }
  std::vector<Tensor> ins{x, weight};
  if (bias.defined()) ins.push_back(bias);
  return detail::composite(op, ins, [&] {
    Tensor xb = batched ? x : x.unsqueeze(0);
    const std::int64_t N = xb.size(0);
    if (any_pad && padding_mode != PaddingMode::zeros) {
      Shape pads;  // pad() lists (left, right) from the last dim
      for (std::size_t d = lo.size(); d-- > 0;) {
        pads.push_back(lo[d]);
        pads.push_back(hi[d]);
      }
      const PadMode pm = padding_mode == PaddingMode::reflect     ? PadMode::reflect
                         : padding_mode == PaddingMode::replicate ? PadMode::replicate
                                                                  : PadMode::circular;
      xb = pad(xb, pads, pm);
      g.in = detail::SpatialDims(spatial_of(xb.shape(), 2));
      g.pad_lo.assign(lo.size(), 0);
    }
    Tensor out = detail::conv_op(xb, weight, detail::ConvSpec{g, groups});
    Shape os{N, O};
    os.insert(os.end(), g.out.begin(), g.out.end());
    out = out.reshape(os);
    if (bias.defined()) {
      Shape bs(static_cast<std::size_t>(nd) + 1, 1);
      bs[0] = O;
      out = out + bias.reshape(bs);
    }
    return batched ? out : out.squeeze(0);
  });
}

// A transposed convolution is conv_input_op (Note [convolution primitives]): the adjoint in x of the
// convolution that maps its output (the geometry's input, of the size below) to x (the geometry's output).
// Positions of that output past the last window (output_padding) receive nothing but the bias.
Tensor conv_transpose_nd(const Tensor& x, const Tensor& weight, const Tensor& bias, const IntList& stride_arg,
                         const IntList& padding_arg, const IntList& output_padding_arg, std::int64_t groups,
                         const IntList& dilation_arg, const char* op) {
  const std::int64_t nd = check_conv_operands(x, weight, op, "(in_channels, out_channels / groups, *kernel)");
  if (groups < 1) throw Error(op, "groups must be >= 1, got " + std::to_string(groups));
  const std::int64_t Cin = weight.size(0), Cout = weight.size(1) * groups;
  if (Cin % groups != 0)
    throw Error(op, "groups " + std::to_string(groups) + " must divide in_channels " + std::to_string(Cin) +
                        " (weight " + shape_str(weight.shape()) + ")");
  const bool batched = x.dim() == nd + 2;
  if (x.size(batched ? 1 : 0) != Cin)
    throw Error(op, "expected input with " + std::to_string(Cin) + " channels (weight " + shape_str(weight.shape()) +
                        "), got " + shape_str(x.shape()));
  check_same_device(x, weight, op, "weight");
  check_conv_bias(x, bias, Cout, op);
  const Shape kernel = spatial_of(weight.shape(), 2);
  const Shape stride = stride_arg.expand(nd, op, "stride");
  const Shape padding = padding_arg.expand(nd, op, "padding");
  const Shape out_pad = output_padding_arg.expand(nd, op, "output_padding");
  const Shape dilation = dilation_arg.expand(nd, op, "dilation");
  check_min(stride, 1, op, "stride");
  check_min(dilation, 1, op, "dilation");
  check_min(kernel, 1, op, "kernel size");
  check_min(padding, 0, op, "padding");
  check_min(out_pad, 0, op, "output_padding");
  const Shape in = spatial_of(x.shape(), batched ? 2 : 1);
  Shape out(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (out_pad[d] >= stride[d] && out_pad[d] >= dilation[d])
      throw Error(op, "output_padding " + shape_str(out_pad) + " must be smaller than the stride " + shape_str(stride) +
                          " or the dilation " + shape_str(dilation));
    out[d] = (in[d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1) + out_pad[d] + 1;
  }
  for (auto o : out)
    if (o < 1)
      throw Error(op, "input " + shape_str(x.shape()) + " gives output size " + shape_str(out) +
                          ", too small (kernel " + shape_str(kernel) + ", stride " + shape_str(stride) + ", padding " +
                          shape_str(padding) + ")");
  using detail::SpatialDims;
  const detail::ConvSpec spec{detail::ConvGeometry{SpatialDims(out), SpatialDims(in), SpatialDims(kernel),
                                                   SpatialDims(stride), SpatialDims(dilation), SpatialDims(padding)},
                              groups};
  std::vector<Tensor> ins{x, weight};
  if (bias.defined()) ins.push_back(bias);
  return detail::composite(op, ins, [&] {
    Tensor xb = batched ? x : x.unsqueeze(0);
    const std::int64_t N = xb.size(0);
    Tensor y = detail::conv_input_op(xb.reshape({N, Cin, spec.geo.out_numel()}), weight, spec, Cout);
    if (bias.defined()) {
      Shape bs(static_cast<std::size_t>(nd) + 1, 1);
      bs[0] = Cout;
      y = y + bias.reshape(bs);
    }
    return batched ? y : y.squeeze(0);
  });
}

namespace {
Tensor conv_fixed(const char* op, std::int64_t nd, const Tensor& x, const Tensor& w, const Tensor& b,
                  const IntList& stride, const Padding& padding, const IntList& dilation, std::int64_t groups,
                  PaddingMode mode) {
  check_defined(w, op, "weight");
  if (w.dim() != nd + 2)
    throw Error(op, "weight must be " + std::to_string(nd + 2) + "-D (out_channels, in_channels / groups, " +
                        (nd == 1 ? "k" : nd == 2 ? "kh, kw" : "kd, kh, kw") + "), got " + shape_str(w.shape()));
  return conv_nd(x, w, b, stride, padding, dilation, groups, mode, op);
}
}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const Padding& padding,
              const IntList& dilation, std::int64_t groups, PaddingMode mode) {
  return conv_fixed("conv1d", 1, x, w, b, stride, padding, dilation, groups, mode);
}
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const Padding& padding,
              const IntList& dilation, std::int64_t groups, PaddingMode mode) {
  return conv_fixed("conv2d", 2, x, w, b, stride, padding, dilation, groups, mode);
}
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const Padding& padding,
              const IntList& dilation, std::int64_t groups, PaddingMode mode) {
  return conv_fixed("conv3d", 3, x, w, b, stride, padding, dilation, groups, mode);
}

Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const IntList& padding,
                        const IntList& output_padding, std::int64_t groups, const IntList& dilation) {
  if (w.defined() && w.dim() != 3) throw Error("conv_transpose1d", "weight must be 3-D, got " + shape_str(w.shape()));
  return conv_transpose_nd(x, w, b, stride, padding, output_padding, groups, dilation, "conv_transpose1d");
}
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const IntList& padding,
                        const IntList& output_padding, std::int64_t groups, const IntList& dilation) {
  if (w.defined() && w.dim() != 4) throw Error("conv_transpose2d", "weight must be 4-D, got " + shape_str(w.shape()));
  return conv_transpose_nd(x, w, b, stride, padding, output_padding, groups, dilation, "conv_transpose2d");
}
Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntList& stride, const IntList& padding,
                        const IntList& output_padding, std::int64_t groups, const IntList& dilation) {
  if (w.defined() && w.dim() != 5) throw Error("conv_transpose3d", "weight must be 5-D, got " + shape_str(w.shape()));
  return conv_transpose_nd(x, w, b, stride, padding, output_padding, groups, dilation, "conv_transpose3d");
}

Tensor unfold(const Tensor& x, const IntList& kernel_size, const IntList& dilation, const IntList& padding,
              const IntList& stride) {
  return unfold_impl("unfold", x, 2, kernel_size, dilation, padding, stride);
}

Tensor fold(const Tensor& x, const IntList& output_size, const IntList& kernel_size, const IntList& dilation,
            const IntList& padding, const IntList& stride) {
  return fold_impl("fold", x, output_size.expand(2, "fold", "output_size"), kernel_size, dilation, padding, stride);
}

Tensor unfold_nd(const Tensor& x, const Shape& kernel_size, const IntList& dilation, const IntList& padding,
                 const IntList& stride) {
  if (kernel_size.empty()) throw Error("unfold_nd", "kernel_size must name at least one spatial dim");
  return unfold_impl("unfold_nd", x, static_cast<std::int64_t>(kernel_size.size()), kernel_size, dilation, padding,
                     stride);
}

Tensor fold_nd(const Tensor& x, const Shape& output_size, const Shape& kernel_size, const IntList& dilation,
               const IntList& padding, const IntList& stride) {
  if (kernel_size.size() != output_size.size())
    throw Error("fold_nd", "kernel_size " + shape_str(kernel_size) + " and output_size " + shape_str(output_size) +
                               " must have the same length");
  return fold_impl("fold_nd", x, output_size, kernel_size, dilation, padding, stride);
}

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  const char* op = "dropout";
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream s;
    s << "p must be in [0, 1], got " << p;
    throw Error(op, s.str());
  }
  check_defined(x, op, "input");
  if (!training || p == 0.0) return x;
  check_float(x, op, "input");
  return detail::composite(op, {x}, [&] {
    const Dtype rdt = to_real(x.dtype());
    Tensor mask;
    if (p == 1.0) {
      mask = zeros(x.shape(), rdt, x.device());
    } else {
      mask = (rand(x.shape(), rdt, x.device(), gen) >= Scalar(p)).to(rdt);
      mask.mul_(Scalar(1.0 / (1.0 - p)));
    }
    return x * mask;
  });
}

}  // namespace functional
}  // namespace phasor::nn
