// src/linalg/matmul.cpp - matmul (numpy semantics), mm, bmm, dot, vdot, outer: one primitive
// ("matmul" on >= 2-D operands with broadcast batch dims) whose kernel calls OpenBLAS gemm.
//
// Note [gemm operand layouts]
// cblas in row-major order reads an (r, c) operand either as a row-major matrix (NoTrans,
// leading dimension = row stride, column stride 1) or as the transpose of a row-major (c, r)
// matrix (Trans, leading dimension = column stride, row stride 1). So any operand with one of
// its last two strides equal to 1 goes to BLAS without a copy (transposed and sliced views
// included); only the rest (stride-0 broadcasts inside the matrix, doubly strided slices) are
// made contiguous first. Batch dims may have any strides (broadcast batch dims have stride 0):
// the kernel computes one pointer offset per batch entry and never materializes them.
//
// Note [batched gemm threading]
// One product, or a batch of large ones: gemm calls threaded by OpenBLAS itself. A batch of
// small products (< kSmallGemm multiply-adds each, >= kBatchParallelWork in all): OpenMP over
// the batch (batched_gemm_threads in src/linalg/blas.hpp; the truncated DFT's per-plane products,
// gemm_on in src/nn/spectral_dft.cpp, follow the same rule). The OpenMP build of OpenBLAS checks
// omp_in_parallel() and runs single-threaded inside an active parallel region, so BLAS threads
// never nest, and we never touch OpenBLAS's global thread count (which would race with other
// threads). Smaller batches stay serial: on the shared 2-vCPU VMs, concurrent single-threaded
// gemm calls from two OpenMP threads measured 2-3x slower than one thread looping (contention
// inside OpenBLAS when a thread is descheduled), so the parallel path is kept for batches with
// enough work to pay off on an idle machine; set_num_threads(1) forces the serial loop.
// The serial loop is a plain loop (gemm_loop, blas.hpp), never the parallel one under
// `if (threads > 1)`: an inactive region still counts as a nesting level, so OpenBLAS's own
// parallel region inside it is a nested one, which libgomp runs with a new thread team while the
// pool's idle thread spins beside it. On 2 cores that made such calls 2-5x slower (a batch of 128
// float32 products of 128^3: 19.9 ms, 4.0 ms as a plain loop, bench/README.md (c); an FNO-1D step
// 34 -> 62-70 ms when gemm_on looped that way).
// A hand-written loop kernel was slower than OpenBLAS's single-threaded gemm even at 8x8 (OpenBLAS
// picks AVX-512 kernels at run time, we compile for baseline x86-64), so every floating product
// goes to BLAS; int64 and bool (which BLAS lacks) use a plain loop kernel, parallel over output
// rows (on a GPU: src/cuda/int_gemm.cu).

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "autodiff/node.hpp"
#include "core/elementwise.hpp"
#include "core/promotion.hpp"
#include "cuda/backend.hpp"
#include "cuda/ops.hpp"
#include "linalg/blas.hpp"
#include "linalg/cublas_gemm.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {

using G = std::vector<Tensor>;
using In = ::phasor::detail::TensorList;  // an op's tensor arguments (Note [tensor lists])

namespace detail {
namespace {

/// How cblas reads one (rows, cols) operand (Note [gemm operand layouts]).
struct BlasLayout {
  bool ok = false;
  bool trans = false;
  std::int64_t ld = 0;
};

BlasLayout blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  const std::int64_t r1 = std::max<std::int64_t>(rows, 1), c1 = std::max<std::int64_t>(cols, 1);
  if (cs == 1 || cols <= 1) {
    const std::int64_t ld = rows <= 1 ? c1 : rs;
    if (ld >= c1 && ld <= INT_MAX) return {true, false, ld};
  }
  if (rs == 1 || rows <= 1) {
    const std::int64_t ld = cols <= 1 ? r1 : cs;
    if (ld >= r1 && ld <= INT_MAX) return {true, true, ld};
  }
  return {};
}

/// True if dims [0, end) of (shape, strides) can be merged into one dim (row-major chain).
bool mergeable(const Shape& shape, const Shape& strides, std::size_t end) {
  std::int64_t expect = -1;  // stride the next non-trivial outer dim must have
  for (std::size_t i = end; i-- > 0;) {
    if (shape[i] == 1) continue;
    if (expect >= 0 && strides[i] != expect) return false;
    expect = strides[i] * shape[i];
  }
  return true;
}

/// One output row of the int64/bool loop kernel: C[j] = sum_p A[p*sak] * B[p*sbk + j*sbm] (C contiguous).
template <class T>
void int_row(std::int64_t m, std::int64_t k, const T* A, std::int64_t sak, const T* B, std::int64_t sbk,
             std::int64_t sbm, T* C) {
  for (std::int64_t j = 0; j < m; ++j) C[j] = T(0);
  for (std::int64_t p = 0; p < k; ++p) {
    const T a = A[p * sak];
    if (a == T(0)) continue;
    const T* b = B + p * sbk;
    for (std::int64_t j = 0; j < m; ++j) {
      if constexpr (std::is_same_v<T, bool>) {
        C[j] = C[j] || b[j * sbm];
      } else {  // wrap around on overflow like PyTorch, without signed-overflow UB
        const auto prod = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b[j * sbm]);
        C[j] = static_cast<T>(static_cast<std::uint64_t>(C[j]) + prod);
      }
    }
  }
}

/// Per-batch element offsets of `t` (whose batch dims, its leading dims, broadcast to `batch`).
std::vector<std::int64_t> batch_offsets(const Tensor& t, const Shape& batch) {
  const std::size_t nb = batch.size();
  const std::size_t tb = static_cast<std::size_t>(t.dim()) - 2;  // t's own batch dims, right-aligned
  Shape st(nb, 0);
  for (std::size_t i = 0; i < tb; ++i) {
    const std::size_t d = nb - tb + i;
    st[d] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  }
  return element_offsets(batch, st);
}

/// True when t's matrices over the broadcast `batch` lie one element stride apart (batch element i at
/// i * stride; 0 for a broadcast operand), read off t's strides: each batch dim of more than one element
/// must step `stride` times the matrices in the dims after it (batch_offsets would list them all).
bool uniform_batch_stride(const Tensor& t, const Shape& batch, std::int64_t& stride) {
  const std::size_t nb = batch.size();
  const std::size_t tb = static_cast<std::size_t>(t.dim()) - 2;  // t's own batch dims, right-aligned
  stride = 0;
  std::int64_t inner = 0;  // matrices in the batch dims after d (0: none of more than one element yet)
  for (std::size_t d = nb; d-- > 0;) {
    if (batch[d] == 0) return (stride = 0, true);  // no matrices
    if (batch[d] == 1) continue;
    const std::size_t own = d + tb - nb;  // t's dim, when it has one here
    const std::int64_t st = d + tb >= nb && t.shape()[own] != 1 ? t.strides()[own] : 0;
    if (inner == 0) stride = st;
    else if (st != stride * inner) return false;
    inner = (inner == 0 ? 1 : inner) * batch[d];
  }
  return true;
}

/// t (..., r, c) broadcast to (batch..., r, c) and made contiguous: one matrix per batch element.
Tensor expand_batch(const Tensor& t, const Shape& batch) {
  Shape s = batch;
  s.push_back(t.size(-2));
  s.push_back(t.size(-1));
  return t.expand(s).contiguous();
}

/// Sets `stride` to the one element stride between t's matrices over the broadcast batch. When t's batch
/// offsets are not one stride apart, t becomes a contiguous copy, one matrix per batch element (its batch
/// dims then in front), and the result is true: the caller re-reads t's layout.
bool one_batch_stride(Tensor& t, const Shape& batch, std::int64_t& stride) {
  if (uniform_batch_stride(t, batch, stride)) return false;
  t = expand_batch(t, batch);
  stride = t.size(-2) * t.size(-1);
  return true;
}

/// Threads for `work` multiply-adds split into `parts` independent pieces.
int threads_for(std::int64_t work, std::int64_t parts) {
  if (parts < 2 || work < kParallelGrain) return 1;
  return static_cast<int>(std::min<std::int64_t>({get_num_threads(), parts, work / kParallelGrain}));
}

/// out (batch..., n, m) = a (..., n, k) @ b (..., k, m); batch dims broadcast; same dtype; no autograd.
void matmul_into(const Tensor& out, Tensor a, Tensor b, const Shape& batch) {
  const std::int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  const std::int64_t nb = shape_numel(batch);
  if (out.numel() == 0) return;
  const bool gpu = out.device().is_cuda();  // cuBLAS through cuda_gemm(_batched), same layouts
  if (k == 0) {
    if (gpu) phasor::cuda::detail::fill(out, 0);
    else std::memset(out.data_ptr(), 0, out.nbytes());
    return;
  }
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t flops = n * m * k;
    T* C = static_cast<T*>(out.data_ptr());
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) {
      if (gpu) {  // a kernel of phasor's (cuBLAS has no integer products): any strides, one batch stride each
        phasor::cuda::IntGemm g;
        one_batch_stride(a, batch, g.a_batch);
        one_batch_stride(b, batch, g.b_batch);
        g.a = a.data_ptr(), g.b = b.data_ptr(), g.c = C;
        g.rows = n, g.cols = m, g.inner = k, g.batch = nb;
        g.a_row = a.stride(-2), g.a_col = a.stride(-1), g.b_row = b.stride(-2), g.b_col = b.stride(-1);
        cuda_int_gemm("matmul", out.dtype(), out.device().index, g);
        return;
      }
      // int64 / bool: a plain loop, parallel over (batch, row) pairs
      const auto oa = batch_offsets(a, batch), ob = batch_offsets(b, batch);
      const T* A = static_cast<const T*>(a.data_ptr());
      const T* B = static_cast<const T*>(b.data_ptr());
      const std::int64_t san = a.stride(-2), sak = a.stride(-1), sbk = b.stride(-2), sbm = b.stride(-1);
      const std::int64_t rows = nb * n;
      const int threads = threads_for(rows * m * k, rows);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t bi = r / n, i = r % n;
        int_row<T>(m, k, A + oa[static_cast<std::size_t>(bi)] + i * san, sak, B + ob[static_cast<std::size_t>(bi)],
                   sbk, sbm, C + r * m);
      }
    } else {
      const auto ad = static_cast<std::size_t>(a.dim()), bd = static_cast<std::size_t>(b.dim());
      // (batch..., n, k) @ (k, m) where a's batch and row dims form one row-major chain: one tall gemm
      const bool fold = nb > 1 && b.dim() == 2 && n > 1 && a.strides()[ad - 1] == 1 && a.strides()[ad - 2] >= k &&
                        a.strides()[ad - 2] <= INT_MAX && mergeable(a.shape(), a.strides(), ad - 1);
      if (std::max({n * (fold ? nb : 1), m, k}) > INT_MAX)
        throw Error("matmul", "matrix dims " + std::to_string(n) + ", " + std::to_string(k) + ", " +
                                  std::to_string(m) + " exceed the BLAS index range");
      BlasLayout la = blas_layout(n, k, a.strides()[ad - 2], a.strides()[ad - 1]);
      if (!la.ok) {
        a = a.contiguous();
        la = blas_layout(n, k, a.strides()[ad - 2], a.strides()[ad - 1]);
      }
      BlasLayout lb = blas_layout(k, m, b.strides()[bd - 2], b.strides()[bd - 1]);
      if (!lb.ok) {
        b = b.contiguous();
        lb = blas_layout(k, m, b.strides()[bd - 2], b.strides()[bd - 1]);
      }
      const T* A = static_cast<const T*>(a.data_ptr());
      const T* B = static_cast<const T*>(b.data_ptr());
      const std::int64_t ldc = std::max<std::int64_t>(m, 1);
      // C = op(A) op(B): OpenBLAS on the CPU, cuBLAS on the current stream of a CUDA device
      auto mm = [&](bool ta, bool tb, std::int64_t rows, std::int64_t cols, const T* X, std::int64_t ldx, const T* Y,
                    std::int64_t ldy, T* Z) {
        if (gpu) cuda_gemm("matmul", out.dtype(), out.device().index, ta, tb, rows, cols, k, X, ldx, Y, ldy, Z, ldc);
        else gemm<T>(ta, tb, rows, cols, k, T(1), X, ldx, Y, ldy, T(0), Z, ldc);
      };
      if (fold) {
        mm(false, lb.trans, nb * n, m, A, a.strides()[ad - 2], B, lb.ld, C);
        return;
      }
      if (nb == 1) {
        mm(la.trans, lb.trans, n, m, A, la.ld, B, lb.ld, C);
        return;
      }
      // one strided-batched cuBLAS call; an operand whose batch offsets are not one stride is copied. A
      // virtual CPU device (set_cpu_device_count) takes this path too, with one CPU gemm per matrix in
      // place of cuBLAS, so that its host logic is tested without a GPU.
      if (out.device() != Device::cpu()) {  // a GPU, or a virtual CPU device
        std::int64_t sa = 0, sb = 0;
        if (one_batch_stride(a, batch, sa)) {  // more dims than before: the matrix dims are the last two
          la = blas_layout(n, k, a.stride(-2), a.stride(-1));
          A = static_cast<const T*>(a.data_ptr());
        }
        if (one_batch_stride(b, batch, sb)) {
          lb = blas_layout(k, m, b.stride(-2), b.stride(-1));
          B = static_cast<const T*>(b.data_ptr());
        }
        if (gpu)
          cuda_gemm_batched("matmul", out.dtype(), out.device().index, la.trans, lb.trans, n, m, k, A, la.ld, sa, B,
                            lb.ld, sb, C, ldc, n * m, nb);
        else
          gemm_loop(batched_gemm_threads(flops, nb), nb, [&](std::int64_t i) {
            gemm<T>(la.trans, lb.trans, n, m, k, T(1), A + i * sa, la.ld, B + i * sb, lb.ld, T(0), C + i * n * m, ldc);
          });
        return;
      }
      const auto oa = batch_offsets(a, batch), ob = batch_offsets(b, batch);
      gemm_loop(batched_gemm_threads(flops, nb), nb, [&](std::int64_t i) {
        mm(la.trans, lb.trans, n, m, A + oa[static_cast<std::size_t>(i)], la.ld, B + ob[static_cast<std::size_t>(i)],
           lb.ld, C + i * n * m);
      });
    }
  });
}

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

/// a^H over the last two dims, written with public ops.
Tensor mH(const Tensor& x) { return x.conj().transpose(-1, -2); }

/// The primitive: a (..., n, k) @ b (..., k, m), both >= 2-D, shapes already checked.
Tensor matmul_nd(const Tensor& a, const Tensor& b, const char* op) {
  return apply_op(
      op, {a, b}, kSaveInputs,
      [op](In in) {
        const Dtype rt = result_type(in);
        const Shape batch = broadcast_shapes({batch_of(in[0].shape()), batch_of(in[1].shape())}, op);
        Shape os = batch;
        os.push_back(in[0].size(-2));
        os.push_back(in[1].size(-1));
        Tensor out = make_tensor(os, rt, in[0].device());
        matmul_into(out, in[0].to(rt), in[1].to(rt), batch);
        return out;
      },
      [](const Ctx& c, const G& g) {
        Tensor ga, gb;
        if (c.needs_grad(0)) ga = matmul(g[0], mH(c.input(1)));  // summed over broadcast batch dims by the engine
        if (c.needs_grad(1)) {
          Tensor a = c.input(0);
          if (c.input_shape(1).size() == 2 && a.dim() > 2) {  // fold a's batch into rows: (k, B*n) @ (B*n, m)
            const std::int64_t rows = shape_numel(Shape(a.shape().begin(), a.shape().end() - 1));
            gb = matmul(mH(a.reshape({rows, a.size(-1)})), g[0].reshape({rows, g[0].size(-1)}));
          } else {
            gb = matmul(mH(a), g[0]);
          }
        }
        return G{ga, gb};
      });
}

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  if (!a.defined() || !b.defined()) throw Error(op, "got an undefined tensor");
  check_same_device(a, b, op);
  if (a.device().is_cuda()) phasor::cuda::detail::check_device(a.device(), op);
}

[[noreturn]] void throw_shapes(const Tensor& a, const Tensor& b, const char* op, const std::string& why = "") {
  throw Error(op, "shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " cannot be multiplied" +
                      (why.empty() ? "" : ": " + why));
}

}  // namespace
}  // namespace detail

Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_operands(a, b, "matmul");
  if (a.dim() == 0 || b.dim() == 0)
    throw Error("matmul", "both arguments need at least 1 dim, got shapes " + detail::shape_str(a.shape()) + " and " +
                              detail::shape_str(b.shape()));
  const std::int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  if (ka != kb) detail::throw_shapes(a, b, "matmul");
  const Shape ba = a.dim() > 2 ? detail::batch_of(a.shape()) : Shape{};
  const Shape bb = b.dim() > 2 ? detail::batch_of(b.shape()) : Shape{};
  try {
    broadcast_shapes({ba, bb}, "matmul");
  } catch (const Error&) {
    detail::throw_shapes(a, b, "matmul",
                         "batch dims " + detail::shape_str(ba) + " and " + detail::shape_str(bb) + " do not broadcast");
  }
  if (a.dim() >= 2 && b.dim() >= 2) return detail::matmul_nd(a, b, "matmul");
  return detail::composite("matmul", {a, b}, [&] {
    // numpy promotion: a 1-D left operand is a row (1, k), a 1-D right operand a column (k, 1)
    Tensor r = detail::matmul_nd(a.dim() == 1 ? a.unsqueeze(0) : a, b.dim() == 1 ? b.unsqueeze(1) : b, "matmul");
    if (b.dim() == 1) r = r.squeeze(-1);
    if (a.dim() == 1) r = r.squeeze(b.dim() == 1 ? -1 : -2);
    return r;
  });
}

Tensor Tensor::matmul(const Tensor& o) const { return phasor::matmul(*this, o); }

Tensor mm(const Tensor& a, const Tensor& b) {
  detail::check_operands(a, b, "mm");
  if (a.dim() != 2 || b.dim() != 2)
    throw Error("mm", "expected 2-D tensors, got shapes " + detail::shape_str(a.shape()) + " and " +
                          detail::shape_str(b.shape()));
  if (a.size(1) != b.size(0)) detail::throw_shapes(a, b, "mm");
  return detail::matmul_nd(a, b, "mm");
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  detail::check_operands(a, b, "bmm");
  if (a.dim() != 3 || b.dim() != 3)
    throw Error("bmm", "expected 3-D tensors, got shapes " + detail::shape_str(a.shape()) + " and " +
                           detail::shape_str(b.shape()));
  if (a.size(0) != b.size(0))
    detail::throw_shapes(a, b, "bmm",
                         "batch sizes " + std::to_string(a.size(0)) + " and " + std::to_string(b.size(0)) + " differ");
  if (a.size(2) != b.size(1)) detail::throw_shapes(a, b, "bmm");
  return detail::matmul_nd(a, b, "bmm");
}

namespace {
void check_vectors(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_operands(a, b, op);
  if (a.dim() != 1 || b.dim() != 1)
    throw Error(op, "expected 1-D tensors, got shapes " + detail::shape_str(a.shape()) + " and " +
                        detail::shape_str(b.shape()));
}
}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  check_vectors(a, b, "dot");
  if (a.size(0) != b.size(0)) detail::throw_shapes(a, b, "dot");
  return detail::composite("dot", {a, b}, [&] { return matmul(a, b); });
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  check_vectors(a, b, "vdot");
  if (a.size(0) != b.size(0)) detail::throw_shapes(a, b, "vdot");
  return detail::composite("vdot", {a, b}, [&] { return matmul(a.conj(), b); });
}

Tensor outer(const Tensor& a, const Tensor& b) {
  check_vectors(a, b, "outer");
  return detail::composite("outer", {a, b}, [&] { return a.unsqueeze(1) * b.unsqueeze(0); });
}

}  // namespace phasor
