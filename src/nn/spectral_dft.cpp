// src/nn/spectral_dft.cpp - truncated real DFTs as matrix products.
//
// Note [truncated DFT]
// A spectral convolution keeps m of the n/2+1 bins of each real transform along the last dim
// (FNO-1D: 16 of 513). An FFT computes all bins and the spectrum is then cut (forward) or
// zero-padded (inverse); as a product with the n x 2m matrix of kept cosines and sines the work is
// 4nm multiply-adds per row at BLAS speed, and no full spectrum is written, zeroed or read.
//   forward: Y = X W, W[j][2k] = cos(2 pi jk/n), W[j][2k+1] = -sin(2 pi jk/n), so the rows of the
//            real (R x 2m) product are the interleaved complex bins (R x m);
//   inverse: x = Yr V, V[2k][j] = w_k cos(2 pi jk/n), V[2k+1][j] = -w_k sin(2 pi jk/n), w_k = 2
//            for the bins standing for a conjugate pair and 1 at DC and Nyquist (whose sine rows
//            vanish, so their imaginary parts are ignored exactly as a c2r transform ignores them).
// A non-last dim keeps 2m of its n frequencies (0..m-1 and -m..-1): its c2c transform and the gather
// (or the scatter and the inverse) are one complex (2m x n) (or (n x 2m)) matrix applied along that
// dim, a batched gemm reading the tensor as it lies - no moving the dim innermost, no cat - used when
// 2m bins qualify by the same rule as the last dim's (use_dft_matrix(n, 2m)).
// Both are exact linear maps of the FFT path (same values up to rounding); the gradients in
// spectral.cpp are the other transform, so they take the same path. The transform's scale and a
// weight of the interior bins (the gradients' half-spectrum weights, Note [truncated transforms]) are
// folded into the matrix, so a product is the whole transform: one gemm, no scaling pass. Angles are
// reduced as (j k mod n) / n in double before the cosine, and the matrices are cached per (n, m,
// direction, scale, weight, dtype) and per device (CUDA tensors take the same products through cuBLAS).
#include "nn/spectral_dft.hpp"

#include <atomic>
#include <cmath>
#include <complex>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "core/device_constants.hpp"
#include "core/elementwise.hpp"
#include "core/tensor_impl.hpp"
#include "linalg/blas.hpp"
#include "linalg/cublas_gemm.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/nn/spectral.hpp"

namespace phasor::nn::detail {

namespace {

/// What a truncated DFT matrix depends on.
struct MatrixKey {
  std::int64_t n, m;
  bool inverse;
  double scale, interior;
  Dtype dtype;
  bool middle = false;  // the complex matrix of a non-last dim (scale and interior unused)
  bool operator<(const MatrixKey& o) const {
    return std::tie(n, m, inverse, scale, interior, dtype, middle) <
           std::tie(o.n, o.m, o.inverse, o.scale, o.interior, o.dtype, o.middle);
  }
};

/// The complex (2m x n) forward or (n x 2m) inverse matrix of a non-last dim (Note [truncated DFT]).
Tensor middle_matrix(const MatrixKey& key) {
  const std::int64_t n = key.n, m = key.m;
  std::vector<std::complex<double>> a(static_cast<std::size_t>(n * 2 * m));
  for (std::int64_t k = 0; k < 2 * m; ++k) {
    const std::int64_t f = k < m ? k : n - 2 * m + k;  // kept frequencies 0..m-1, then -m..-1
    for (std::int64_t h = 0; h < n; ++h) {
      const double th = 2 * std::numbers::pi * static_cast<double>((f * h) % n) / static_cast<double>(n);
      const std::complex<double> e(std::cos(th), key.inverse ? std::sin(th) : -std::sin(th));
      a[static_cast<std::size_t>(key.inverse ? h * 2 * m + k : k * n + h)] = e;
    }
  }
  const Shape shape = key.inverse ? Shape{n, 2 * m} : Shape{2 * m, n};
  return from_data(a.data(), n * 2 * m, complex128, shape).to(key.dtype);
}

/// The (n x 2m) forward or (2m x n) inverse matrix of Note [truncated DFT] with the scale and the interior
/// bins' weight folded in, cached.
Tensor dft_matrix(const MatrixKey& key) {
  static std::mutex mu;
  static std::map<MatrixKey, Tensor> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;  // a copy: a later clear() must not free it under us
  if (key.middle) {
    Tensor t = middle_matrix(key);
    if (cache.size() >= 64) cache.clear();
    cache.emplace(key, t);
    return t;
  }
  const std::int64_t n = key.n, m = key.m;
  std::vector<double> a(static_cast<std::size_t>(n * 2 * m));
  for (std::int64_t k = 0; k < m; ++k) {
    const bool edge = k == 0 || 2 * k == n;  // DC or Nyquist
    const double w = key.scale * (edge ? 1.0 : key.interior * (key.inverse ? 2.0 : 1.0));
    for (std::int64_t j = 0; j < n; ++j) {
      const double th = 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      const double c = w * std::cos(th), s = -w * std::sin(th);
      if (key.inverse) {
        a[static_cast<std::size_t>(2 * k * n + j)] = c;
        a[static_cast<std::size_t>((2 * k + 1) * n + j)] = s;
      } else {
        a[static_cast<std::size_t>(j * 2 * m + 2 * k)] = c;
        a[static_cast<std::size_t>(j * 2 * m + 2 * k + 1)] = s;
      }
    }
  }
  Tensor t = from_vector(a, key.inverse ? Shape{2 * m, n} : Shape{n, 2 * m}).to(key.dtype);
  if (cache.size() >= 64) cache.clear();  // a model uses a handful; bound the cache anyway
  cache.emplace(key, t);
  return t;
}

/// The matrix on `device`: the host's cached one, or made once per device (Note [device constants]).
Tensor dft_matrix_on(const MatrixKey& key, Device device) {
  if (device == Device::cpu()) return dft_matrix(key);
  return ::phasor::detail::device_constant(device, "dft matrix", key, [&] { return dft_matrix(key); });
}

/// `batch` row-major products C_i (rows x cols) = A_i (rows x inner) B_i (inner x cols), X_i = X + i *
/// stride_x elements (a stride of 0 reuses the operand), of dtype dt (real or complex float) on `device`
/// (BLAS or cuBLAS).
void gemm_on(const char* op, Dtype dt, Device device, std::int64_t rows, std::int64_t cols, std::int64_t inner,
             const void* A, std::int64_t sa, const void* B, std::int64_t sb, void* C, std::int64_t sc,
             std::int64_t batch = 1) {
  if (device.is_cuda()) {
    if (batch == 1)
      ::phasor::detail::cuda_gemm(op, dt, device.index, false, false, rows, cols, inner, A, inner, B, cols, C, cols);
    else
      ::phasor::detail::cuda_gemm_batched(op, dt, device.index, false, false, rows, cols, inner, A, inner, sa, B, cols,
                                          sb, C, cols, sc, batch);
    return;
  }
  ::phasor::detail::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || ::phasor::detail::is_complex_v<T>) {
      // a non-last dim's matrix applied per plane: many small products (FNO-2D: 640 of 24 x 12 x 64)
      const auto one = [&](std::int64_t i) {
        ::phasor::detail::gemm<T>(false, false, rows, cols, inner, T(1), static_cast<const T*>(A) + i * sa, inner,
                                  static_cast<const T*>(B) + i * sb, cols, T(0), static_cast<T*>(C) + i * sc, cols);
      };
      ::phasor::detail::gemm_loop(::phasor::detail::batched_gemm_threads(rows * cols * inner, batch), batch, one);
    }
  });
}

}  // namespace

namespace {
std::atomic<functional::TruncatedTransform> g_transform{functional::TruncatedTransform::automatic};
}  // namespace

bool use_dft_matrix(std::int64_t n, std::int64_t m) {
  switch (g_transform.load(std::memory_order_relaxed)) {
    case functional::TruncatedTransform::fft: return false;
    case functional::TruncatedTransform::matrix: return 2 * m * n <= (std::int64_t{1} << 23);  // under 32 MiB
    case functional::TruncatedTransform::automatic: break;
  }
  // Measured (bench/README.md "FNO", spectral conv forward + backward, 1 thread, 2^20 values):
  // the product wins up to m = 48 at every n from 32 to 4096 (2-3x at m <= 16, n >= 256) and up
  // to m = 64 from n = 1024; beyond that the FFT's n log n wins. n is capped so the cached
  // matrix stays below 32 MiB.
  return n <= 65536 && (m <= 48 || (m <= 64 && n >= 1024));
}

Tensor rdft_head(const Tensor& x, std::int64_t m, double scale, double interior) {
  const Dtype dt = x.dtype();
  if (dt != float32 && dt != float64) throw Error("rdft_head", std::string("expected a real float tensor, got ") + dtype_name(dt));
  const Tensor xc = x.contiguous();
  const std::int64_t n = x.size(-1), rows = n == 0 ? 0 : x.numel() / n;
  Shape os = x.shape();
  os.back() = m;
  if (rows == 0 || m == 0) return zeros(os, to_complex(dt), x.device());  // an empty sum (n = 0) is 0
  Tensor y = ::phasor::detail::make_tensor(os, to_complex(dt), x.device());
  const Tensor W = dft_matrix_on(MatrixKey{n, m, false, scale, interior, dt}, x.device());
  gemm_on("rdft_head", dt, x.device(), rows, 2 * m, n, xc.data_ptr(), 0, W.data_ptr(), 0, y.data_ptr(), 0);
  return y;
}

Tensor irdft_head(const Tensor& y, std::int64_t n, double scale, double interior) {
  const Dtype dt = to_real(y.dtype());
  if (!y.is_complex() || (dt != float32 && dt != float64))
    throw Error("irdft_head", std::string("expected a complex float tensor, got ") + dtype_name(y.dtype()));
  const Tensor yc = y.contiguous();
  const std::int64_t m = y.size(-1), rows = m == 0 ? 0 : y.numel() / m;
  Shape os = y.shape();
  os.back() = n;
  if (rows == 0 || n == 0) return zeros(os, dt, y.device());  // an empty sum (m = 0) is 0
  Tensor x = ::phasor::detail::make_tensor(os, dt, y.device());
  const Tensor V = dft_matrix_on(MatrixKey{n, m, true, scale, interior, dt}, y.device());
  gemm_on("irdft_head", dt, y.device(), rows, n, 2 * m, yc.data_ptr(), 0, V.data_ptr(), 0, x.data_ptr(), 0);
  return x;
}

Tensor cdft_along(const Tensor& x, std::int64_t dim, std::int64_t m, std::int64_t n, bool inverse) {
  const Dtype dt = x.dtype();
  if (dt != complex64 && dt != complex128)
    throw Error("cdft_along", std::string("expected a complex float tensor, got ") + dtype_name(dt));
  const Tensor xc = x.contiguous();
  const auto d = static_cast<std::size_t>(dim);
  const std::int64_t len = x.size(dim), out_len = inverse ? n : 2 * m;
  const std::int64_t outer = ::phasor::detail::shape_numel(Shape(x.shape().begin(), x.shape().begin() + dim));
  const std::int64_t inner = ::phasor::detail::shape_numel(Shape(x.shape().begin() + dim + 1, x.shape().end()));
  Shape os = x.shape();
  os[d] = out_len;
  if (len == 0 || outer * inner == 0) return zeros(os, dt, x.device());
  Tensor out = ::phasor::detail::make_tensor(os, dt, x.device());
  const Tensor M = dft_matrix_on(MatrixKey{n, m, inverse, 1.0, 1.0, dt, true}, x.device());
  gemm_on("cdft_along", dt, x.device(), out_len, inner, len, M.data_ptr(), 0, xc.data_ptr(), len * inner,
          out.data_ptr(), out_len * inner, outer);
  return out;
}

}  // namespace phasor::nn::detail

namespace phasor::nn::functional {

TruncatedTransform set_truncated_transform(TruncatedTransform t) {
  if (t != TruncatedTransform::automatic && t != TruncatedTransform::matrix && t != TruncatedTransform::fft)
    throw Error("set_truncated_transform", "unknown choice " + std::to_string(static_cast<int>(t)));
  return detail::g_transform.exchange(t);
}

TruncatedTransform truncated_transform() { return detail::g_transform.load(); }

}  // namespace phasor::nn::functional
