// src/nn/spectral_mix.cpp - the per-mode complex channel contraction of spectral convolutions,
// out[b,o,*k] = sum_i x[b,i,*k] w[i,o,*k], as one primitive with two CPU kernels.
//
// Note [spectral_mix kernel]
// Where x's and w's modes are contiguous (every (b, i) and (i, o) row's K modes one element apart: rfft
// spectra, weights (I, O, *M), their transposes in the gradients) and K >= 64, the direct kernel
// (spectral_mix_kernels.cpp, compiled per ISA) runs the complex multiply-adds along the modes: for a tile of 4
// batch rows and one o, out[b, o, :] += x[b, i, :] w[i, o, :] over i, the output rows staying in L1 and each
// w row read once per tile; the output is (B, O, *M) contiguous. Tiles are split over OpenMP threads. On the
// FNO-2D bench (B 20, I = O = 32, K = 288) it took the step from 136-138 to 130-131 ms on one thread; at
// FNO-1D's K = 16 per-mode gemms were 2% faster, hence the K threshold (kDirectModes).
// Otherwise, for every mode k the contraction is a (B x I) @ (I x O) complex matrix product, and the
// kernel runs one cblas_?gemm per mode on mode-major operands. An operand whose per-mode matrix has a
// unit stride in one of its two dims (any stride between modes) goes to BLAS as is (transposed if
// need be); otherwise it is packed once into a contiguous (K, r, c) buffer - a pass over an operand that is
// small next to the gemm work. A conjugated operand (the gradients' flags, below) is packed, conjugated on the
// way, instead of materializing its conjugate first. The output is written mode-major, (*M, B, O) in memory,
// and returned as a permuted view with the logical shape (B, O, *M); consumers (the scatter into the output
// spectrum, the weight's gradient) read either layout through strides.
// Threads: modes are split over OpenMP threads from 1M complex multiply-adds per call
// (kParallelMix, ~0.3 ms of work on one core); the OpenMP build of OpenBLAS runs single-threaded
// inside a parallel region, so BLAS threads never nest. (FNO-2D bench: 5.9M per call, FNO-1D:
// 1.3M. An earlier threshold of 8M, chosen on a VM loaded by other jobs where every barrier waits
// for a descheduled thread, left FNO-1D's contraction serial.)
// Gradients (PyTorch's complex convention): grad_x[b,i,k] = sum_o g[b,o,k] conj(w[i,o,k]) and
// grad_w[i,o,k] = sum_b conj(x[b,i,k]) g[b,o,k]: the primitive carries a conjugation flag per operand,
// so both are the primitive again on transposed operands (gradients of gradients work), and the kernels
// read the transposed, conjugated operands in place (the gemm path packs them).
// CUDA tensors take a dedicated kernel on contiguous operands (Note [cuda conv kernels] in
// src/cuda/conv.cu explains why not a batched gemm); same formula, same gradients.

#include <algorithm>
#include <climits>
#include <complex>
#include <vector>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "core/tensor_impl.hpp"
#include "cuda/nn_ops.hpp"
#include "linalg/blas.hpp"
#include "nn/spectral_mix_kernels.hpp"
#include "phasor/creation.hpp"
#include "phasor/nn/spectral.hpp"
#include "phasor/ops.hpp"

namespace phasor::nn::functional {

namespace {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])
using ::phasor::detail::shape_str;

/// Element offsets of every mode (row-major over the mode dims [2, ndim) of t).
std::vector<std::int64_t> mode_offsets(const Tensor& t) {
  const Shape sizes(t.shape().begin() + 2, t.shape().end()), strides(t.strides().begin() + 2, t.strides().end());
  return ::phasor::detail::element_offsets(sizes, strides);
}

/// One operand as BLAS sees it: per-mode base pointers, transposition and leading dimension.
template <class T>
struct Operand {
  std::vector<const T*> ptr;  // one per mode
  bool trans = false;
  std::int64_t ld = 0;
  std::vector<T> packed;  // owns the data when packed
};

/// Prepares the (r x c) per-mode matrices of `t` (r, c its dims 0 and 1), conjugated when `conj`, for cblas.
template <class T>
Operand<T> prepare(const Tensor& t, std::int64_t K, bool conj) {
  Operand<T> op;
  const std::int64_t r = t.size(0), c = t.size(1), rs = t.stride(0), cs = t.stride(1);
  const T* base = static_cast<const T*>(t.data_ptr());
  const auto off = mode_offsets(t);
  op.ptr.resize(static_cast<std::size_t>(K));
  // in place: row-major (unit column stride) or column-major (transposed) per-mode matrices, unconjugated
  const bool rows = !conj && (cs == 1 || c == 1) && (r == 1 || rs >= c) && rs <= INT_MAX;
  const bool cols = !conj && !rows && (rs == 1 || r == 1) && (c == 1 || cs >= r) && cs <= INT_MAX;
  if (rows || cols) {
    op.trans = cols;
    op.ld = rows ? (r == 1 ? std::max<std::int64_t>(c, 1) : rs) : (c == 1 ? std::max<std::int64_t>(r, 1) : cs);
    for (std::int64_t k = 0; k < K; ++k) op.ptr[static_cast<std::size_t>(k)] = base + off[static_cast<std::size_t>(k)];
    return op;
  }
  // packed into (K, r, c) contiguous, conjugated on the way when asked
  op.packed.resize(static_cast<std::size_t>(K * r * c));
  T* dst = op.packed.data();
  for (std::int64_t k = 0; k < K; ++k) {
    const T* src = base + off[static_cast<std::size_t>(k)];
    T* d = dst + k * r * c;
    if (conj) {
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) d[i * c + j] = std::conj(src[i * rs + j * cs]);
    } else {
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) d[i * c + j] = src[i * rs + j * cs];
    }
  }
  for (std::int64_t k = 0; k < K; ++k) op.ptr[static_cast<std::size_t>(k)] = dst + k * r * c;
  op.trans = false;
  op.ld = std::max<std::int64_t>(c, 1);
  return op;
}

/// Complex multiply-adds from which the modes are split over threads (Note [spectral_mix kernel]).
constexpr std::int64_t kParallelMix = std::int64_t(1) << 20;
/// Modes from which contiguous operands take the direct kernel (Note [spectral_mix kernel]).
constexpr std::int64_t kDirectModes = 64;

/// Rows of x taken together by the direct kernel (each w row is read once per tile).
constexpr std::int64_t kMixTile = 4;

/// The direct kernel: x (B, I, *M), w (I, O, *M) with contiguous modes, same complex dtype -> (B, O, *M)
/// contiguous, x and w conjugated when cx and cw.
Tensor mix_direct(const Tensor& x, const Tensor& w, bool cx, bool cw) {
  const std::int64_t B = x.size(0), I = x.size(1), O = w.size(1);
  Shape os = x.shape();
  os[1] = O;
  Tensor out = ::phasor::detail::make_tensor(os, x.dtype(), x.device());
  const std::int64_t K = ::phasor::detail::shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  const std::int64_t tiles = (B + kMixTile - 1) / kMixTile, work = K * B * I * O;
  const int threads = work >= kParallelMix && tiles * O > 1
                          ? static_cast<int>(std::min<std::int64_t>(get_num_threads(), tiles * O))
                          : 1;
  ::phasor::detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      using R = typename T::value_type;
      const R* xp = reinterpret_cast<const R*>(x.data_ptr());
      const R* wp = reinterpret_cast<const R*>(w.data_ptr());
      R* op = reinterpret_cast<R*>(out.data_ptr());
      const std::int64_t xb = x.stride(0), xi = x.stride(1), wi = w.stride(0), wo = w.stride(1);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t t = 0; t < tiles * O; ++t) {
        const std::int64_t b0 = (t / O) * kMixTile, o = t % O, nb = std::min(kMixTile, B - b0);
        R* dst = op + 2 * (b0 * O + o) * K;
        const R* xs = xp + 2 * b0 * xb;
        const R* ws = wp + 2 * o * wo;
        ::phasor::nn::detail::mix_tile(dst, O * K, xs, xb, xi, ws, wi, nb, I, K, cx, cw);
      }
    }
  });
  return out;
}

/// The kernel: x (B, I, *M), w (I, O, *M), same complex dtype -> (B, O, *M), with x and w conjugated when cx
/// and cw: the direct kernel where both operands' modes are contiguous, else a gemm per mode laid out
/// (*M, B, O).
Tensor mix_kernel(const Tensor& x, const Tensor& w, bool cx, bool cw) {
  const std::int64_t B = x.size(0), I = x.size(1), O = w.size(1);
  const Shape modes(x.shape().begin() + 2, x.shape().end());
  const std::int64_t K = ::phasor::detail::shape_numel(modes);
  using ::phasor::nn::detail::modes_contiguous;
  if (K >= kDirectModes && I > 0 && modes_contiguous(x) && modes_contiguous(w)) return mix_direct(x, w, cx, cw);
  Shape phys = modes;
  phys.push_back(B);
  phys.push_back(O);
  Tensor out = ::phasor::detail::make_tensor(phys, x.dtype(), x.device());
  if (out.numel() > 0) {
    if (I == 0) {
      out.zero_();
    } else if (std::max({B, I, O}) > INT_MAX) {
      throw Error("spectral_mix", "channel or batch size exceeds the BLAS index range");
    } else {
      ::phasor::detail::visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
          const Operand<T> a = prepare<T>(x, K, cx), b = prepare<T>(w, K, cw);
          T* C = static_cast<T*>(out.data_ptr());
          const std::int64_t work = K * B * I * O;
          const int threads = work >= kParallelMix && K > 1
                                  ? static_cast<int>(std::min<std::int64_t>(get_num_threads(), K))
                                  : 1;
          ::phasor::detail::gemm_loop(threads, K, [&](std::int64_t k) {
            ::phasor::detail::gemm<T>(a.trans, b.trans, B, O, I, T(1), a.ptr[static_cast<std::size_t>(k)], a.ld,
                                      b.ptr[static_cast<std::size_t>(k)], b.ld, T(0), C + k * B * O, O);
          });
        }
      });
    }
  }
  // (*M, B, O) -> (B, O, *M)
  const std::int64_t nm = static_cast<std::int64_t>(modes.size());
  Shape perm{nm, nm + 1};
  for (std::int64_t d = 0; d < nm; ++d) perm.push_back(d);
  return out.permute(perm);
}

void check_args(const Tensor& x, const Tensor& w) {
  const char* op = "spectral_mix";
  if (!x.defined() || !w.defined()) throw Error(op, "got an undefined tensor");
  if (x.device() != w.device())
    throw Error(op, "expected x and w on one device, got x on " + x.device().str() + " and w on " + w.device().str());
  if (x.dim() < 2 || w.dim() != x.dim() || w.size(0) != x.size(1) ||
      !std::equal(x.shape().begin() + 2, x.shape().end(), w.shape().begin() + 2))
    throw Error(op, "expected x (B, I, *modes) and w (I, O, *modes) with matching I and modes, got x " +
                        shape_str(x.shape()) + " and w " + shape_str(w.shape()));
  for (const Tensor* t : {&x, &w})
    if (!is_floating_or_complex(t->dtype()))
      throw Error(op, std::string("expected floating or complex tensors, got ") + dtype_name(t->dtype()));
}

}  // namespace

namespace {
/// spectral_mix with op(x) = conj(x) when cx and op(w) = conj(w) when cw (the primitive: its gradients are
/// the same op on transposed operands with other flags, so none of them materializes a conjugate or a
/// transpose on a GPU).
Tensor mix_op(const Tensor& x, const Tensor& w, bool cx, bool cw) {
  return ::phasor::detail::apply_op(
      "spectral_mix", {x, w}, ::phasor::detail::kSaveInputs,
      [cx, cw](In in) {
        const Dtype ct = to_complex(::phasor::detail::result_type(in));
        const Tensor a = in[0].to(ct), b = in[1].to(ct);
        if (a.device().is_cuda()) return ::phasor::cuda::detail::spectral_mix(a, b, cx, cw);
        return mix_kernel(a, b, cx, cw);
      },
      [cx, cw](const ::phasor::detail::Ctx& c, const G& g) {
        // out = sum_i X W with X = op(x), W = op(w): grad_X = sum_o g conj(W), grad_W = sum_b conj(X) g, and
        // grad_x = conj(grad_X) when x enters conjugated (likewise w); each is mix_op on transposed operands
        Tensor gx, gw;
        if (c.needs_grad(0)) gx = mix_op(g[0], c.input(1).transpose(0, 1), cx, cx ? cw : !cw);
        if (c.needs_grad(1)) gw = mix_op(c.input(0).transpose(0, 1), g[0], cw ? cx : !cx, cw);
        return G{gx, gw};
      });
}
}  // namespace

Tensor spectral_mix(const Tensor& x, const Tensor& w) {
  check_args(x, w);
  return mix_op(x, w, false, false);
}

}  // namespace phasor::nn::functional
