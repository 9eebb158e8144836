// src/sparse/sparse.cpp - phasor::sparse (phasor/sparse.hpp): COO and CSR tensors made of tensor ops.
//
// Note [sparse as tensor ops]
// A sparse tensor is a few dense tensors (indices or offsets, values) and a shape; every operation on it is a
// composition of dense ops, so one implementation serves every device and autodiff comes from those ops:
//   to_dense:   zeros(numel).index_add(0, linear index, values)           (repeats add up)
//   coalesce:   unique(linear index, return_inverse) and index_add of the values into the unique positions
//   to_csr:     crow = [0, cumsum(bincount(rows, minlength = m))]
//   CSR rows:   searchsorted(crow, arange(nnz), right) - 1                 (no host wait, unlike repeat_interleave;
//               once per matrix, kept beside crow)
//   matmul:     zeros(m, k).index_add(0, rows, values[:, None] * b.index_select(0, cols)); a CSR matrix with
//               checked indices takes the primitive sparse_csr_mm instead: one pass over each row's values into
//               its output row, no (nnz, k) temporary and no atomics (rows in parallel on the CPU, one GPU thread
//               per output element); its gradients are the ops: g_values = sum_k (g[rows] * conj(b[cols])),
//               g_b = zeros(n, k).index_add(0, cols, conj(values)[:, None] * g[rows])
// The linear index of position (i_0, ..., i_{d-1}) is sum_j i_j * stride_j (row-major strides of the shape).
// Index checks use check_index_values, so on a GPU they wait for one flag, or are deferred (Note [deferred
// device checks]). Indices checked at construction, or made here, are in range: the gathers and index_adds then
// take the trusted kernels (index_select_trusted, index_add_trusted), which check nothing, so a product or
// to_dense makes no host wait; indices given with check_indices = false go through the checked ops.
// from_dense and coalesce read their nnz on the host (a wait on a GPU), as torch's do.
#include "phasor/sparse.hpp"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/elementwise.hpp"
#include "core/index_ops.hpp"
#include "core/tensor_impl.hpp"
#include "core/pointwise.hpp"
#include "cuda/sparse_ops.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/error.hpp"
#include "phasor/ops.hpp"

namespace phasor {
namespace sparse {

namespace {

using ::phasor::detail::shape_str;

/// Row-major strides of `shape`, as an int64 (ndim, 1) tensor on `device`.
Tensor strides_of(const Shape& shape, Device device) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t j = shape.size(); j-- > 1;) s[j - 1] = s[j] * shape[j];
  return from_vector(s, Shape{static_cast<std::int64_t>(s.size()), 1}, device);
}

/// The linear (row-major) index of each position of indices (ndim, nnz), given strides_of the shape.
Tensor linear_index(const Tensor& indices, const Tensor& strides) { return (indices * strides).sum({0}); }
/// The same, for `shape`.
Tensor linear_index(const Tensor& indices, const Shape& shape) { return linear_index(indices, strides_of(shape, indices.device())); }

/// Throws unless `shape` has `dims` dims (or, with dims < 0, at least one), none negative.
void check_shape(const Shape& shape, std::int64_t dims, const char* op) {
  if ((dims < 0 && shape.empty()) || (dims >= 0 && static_cast<std::int64_t>(shape.size()) != dims))
    throw Error(op, "shape " + shape_str(shape) + (dims < 0 ? " must have at least one dim" : " must have " + std::to_string(dims) + " dims"));
  for (std::int64_t n : shape)
    if (n < 0) throw Error(op, "shape " + shape_str(shape) + " has a negative size");
}

/// Throws unless t is a defined 1-D int64 tensor (named `what`).
void check_index_tensor(const Tensor& t, const char* what, const char* op) {
  if (!t.defined()) throw Error(op, std::string(what) + " is undefined");
  if (t.dtype() != Dtype::Int64) throw Error(op, std::string(what) + " must be int64, got " + dtype_name(t.dtype()));
}

/// Throws unless `values` is a defined 1-D tensor of nnz elements on `device`.
void check_values(const Tensor& values, std::int64_t nnz, Device device, const char* op) {
  if (!values.defined()) throw Error(op, "values are undefined");
  if (values.dim() != 1 || values.size(0) != nnz)
    throw Error(op, "values of shape " + shape_str(values.shape()) + " must be (nnz) = (" + std::to_string(nnz) + ",)");
  if (values.device() != device)
    throw Error(op, "values on " + values.device().str() + " and indices on " + device.str() + " (one device expected)");
}

/// The row of each of the nnz values of a CSR matrix with offsets crow: searchsorted(crow, i, right) - 1.
Tensor expand_rows(const Tensor& crow, std::int64_t nnz) {
  NoGradGuard ng;
  return searchsorted(crow, arange(nnz, Dtype::Int64, crow.device()), true) - 1;
}

/// x.index_select(dim, index), without the range check where the index is known to be `in_range`.
Tensor gather_rows(const Tensor& x, const Tensor& index, bool in_range) {
  return in_range ? ::phasor::detail::index_select_trusted(x, 0, index) : index_select(x, 0, index);
}
/// x.index_add(0, index, src), without the range check where the index is known to be `in_range`.
Tensor add_rows(const Tensor& x, const Tensor& index, const Tensor& src, bool in_range) {
  return in_range ? ::phasor::detail::index_add_trusted(x, 0, index, src) : x.index_add(0, index, src);
}

/// out (m, k) = the CSR matrix (crow, col, values) times b (n, k), all contiguous on the CPU, T the common dtype
/// (the GPU's kernel: src/cuda/sparse.cu).
template <class T>
void csr_mm_kernel(const std::int64_t* crow, const std::int64_t* col, const T* values, const T* b, T* out, std::int64_t m,
                   std::int64_t k) {
  const std::int64_t nnz = crow[m];
  const auto grain = ::phasor::detail::kParallelGrain;
  const int threads = (m < 2 || nnz * k < 2 * grain) ? 1 : static_cast<int>(std::min<std::int64_t>(get_num_threads(), m));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t r = 0; r < m; ++r) {
    if (k == 1) {  // a matrix-vector product: one running sum per row
      T acc = T(0);
      for (std::int64_t j = crow[r]; j < crow[r + 1]; ++j) acc += values[j] * b[col[j]];
      out[r] = acc;
      continue;
    }
    T* o = out + r * k;
    for (std::int64_t c = 0; c < k; ++c) o[c] = T(0);
    for (std::int64_t j = crow[r]; j < crow[r + 1]; ++j) {
      const T v = values[j];
      const T* src = b + col[j] * k;
      for (std::int64_t c = 0; c < k; ++c) o[c] += v * src[c];
    }
  }
}

/// The CSR product as a primitive (the CPU kernel above, src/cuda/sparse.cu's on a GPU; Note [sparse as tensor
/// ops]), values and b of one floating or complex dtype, b (n, k); rows, cols and crow trusted in range, crow and
/// cols contiguous. crow, cols and rows are inputs of the primitive too (no gradient), so that its forward and
/// backward read all they depend on through its inputs (Note [replayable forwards]).
Tensor csr_mm(const Tensor& crow, const Tensor& rows, const Tensor& cols, const Tensor& values, const Tensor& b,
              std::int64_t m) {
  return ::phasor::detail::apply_op(
      "sparse_csr_mm", {values, b, crow, cols, rows}, ::phasor::detail::kSaveInputs,
      [m](::phasor::detail::TensorList in) {
        const Tensor v = in[0].contiguous(), bc = in[1].contiguous();
        const Tensor &crow = in[2], &cols = in[3];
        if (v.device().is_cuda()) return cuda::detail::csr_mm(crow, cols, v, bc);
        Tensor out = empty({m, bc.size(1)}, v.dtype(), v.device());
        ::phasor::detail::visit_dtype(v.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (std::is_floating_point_v<T> || ::phasor::detail::is_complex_t<T>::value)
            csr_mm_kernel<T>(crow.data<std::int64_t>(), cols.data<std::int64_t>(), v.data<T>(), bc.data<T>(), out.data<T>(), m,
                             bc.size(1));
        });
        return out;
      },
      [](const ::phasor::detail::Ctx& c, const std::vector<Tensor>& g) {
        const Tensor v = c.input(0), b = c.input(1), cols = c.input(3), rows = c.input(4);
        const Tensor grows = ::phasor::detail::index_select_trusted(g[0], 0, rows);
        Tensor gv, gb;
        if (c.needs_grad(0)) gv = (grows * ::phasor::detail::index_select_trusted(b, 0, cols).conj()).sum({1});
        if (c.needs_grad(1))
          gb = ::phasor::detail::index_add_trusted(zeros(b.shape(), g[0].dtype(), b.device()), 0, cols, v.conj().unsqueeze(1) * grows);
        return std::vector<Tensor>{gv, gb, Tensor(), Tensor(), Tensor()};
      });
}

/// The product of sparse (m, n) given by (rows, cols, values) with b (n) or (n, k).
Tensor sparse_dense(const Tensor& crow, const Tensor& rows, const Tensor& cols, const Tensor& values, const Shape& shape,
                    const Tensor& b, bool in_range, const char* op) {
  if (!b.defined()) throw Error(op, "b is undefined");
  if (!(b.dim() == 1 || b.dim() == 2) || b.size(0) != shape[1])
    throw Error(op, "a sparse matrix of shape " + shape_str(shape) + " cannot multiply b of shape " + shape_str(b.shape()) +
                        " (b must be (" + std::to_string(shape[1]) + ",) or (" + std::to_string(shape[1]) + ", k))");
  if (b.device() != values.device())
    throw Error(op, "the sparse matrix is on " + values.device().str() + " and b on " + b.device().str());
  const Dtype dt = promote_types(values.dtype(), b.dtype());
  const Tensor bm = b.dim() == 1 ? b.unsqueeze(1) : b;
  if (crow.defined() && in_range && is_floating_or_complex(dt)) {  // int64 and bool values: the ops
    const Tensor out = csr_mm(crow.contiguous(), rows, cols.contiguous(), values.to(dt), bm.to(dt), shape[0]);
    return b.dim() == 1 ? out.squeeze(1) : out;
  }
  const Tensor terms = values.to(dt).unsqueeze(1) * gather_rows(bm.to(dt), cols, in_range);
  const Tensor out = add_rows(zeros({shape[0], bm.size(1)}, dt, b.device()), rows, terms, in_range);
  return b.dim() == 1 ? out.squeeze(1) : out;
}

}  // namespace

// ---- COO ----------------------------------------------------------------------------------------------------

COO::COO(const Tensor& indices, const Tensor& values, const Shape& shape, bool check_indices) {
  const char* op = "sparse_coo";
  check_shape(shape, -1, op);
  check_index_tensor(indices, "indices", op);
  const auto ndim = static_cast<std::int64_t>(shape.size());
  if (indices.dim() != 2 || indices.size(0) != ndim)
    throw Error(op, "indices of shape " + shape_str(indices.shape()) + " must be (ndim, nnz) with ndim = " +
                        std::to_string(ndim) + " for shape " + shape_str(shape));
  check_values(values, indices.size(1), indices.device(), op);
  // the checked indices are the output of a step that checks them, so that a traced function's replay checks its
  // indices before the trusted ops read them (Note [value steps] in core/pointwise.hpp)
  indices_ = !check_indices ? indices : ::phasor::detail::apply_nondiff(op, {indices}, [shape, op](::phasor::detail::TensorList in) {
    for (std::size_t j = 0; j < shape.size(); ++j)
      ::phasor::detail::check_index_values(in[0].select(0, static_cast<std::int64_t>(j)), 0, shape[j],
                                           "for dim " + std::to_string(j) + " of size " + std::to_string(shape[j]), op);
    return in[0];
  });
  values_ = values;
  shape_ = shape;
  in_range_ = check_indices;
}

COO::COO(Made, Tensor indices, Tensor values, Shape shape, bool coalesced, bool in_range)
    : indices_(std::move(indices)), values_(std::move(values)), shape_(std::move(shape)), coalesced_(coalesced), in_range_(in_range) {}

COO COO::from_dense(const Tensor& dense) {
  if (!dense.defined()) throw Error("sparse_coo.from_dense", "the dense tensor is undefined");
  if (dense.dim() == 0) throw Error("sparse_coo.from_dense", "a 0-d tensor has no sparse form (give it one dim)");
  const Tensor indices = nonzero(dense).t().contiguous();  // (ndim, nnz), row-major order
  const Tensor values = gather_rows(dense.reshape({-1}), linear_index(indices, dense.shape()), true);
  return COO(Made{}, indices, values, dense.shape(), true, true);
}

Tensor COO::to_dense() const {
  const Tensor flat = zeros({::phasor::detail::shape_numel(shape_)}, dtype(), device());
  return add_rows(flat, linear_index(indices_, shape_), values_, in_range_).reshape(shape_);
}

COO COO::coalesce() const {
  if (coalesced_) return *this;
  const Tensor strides = strides_of(shape_, device());
  const auto [positions, inverse, counts] = unique(linear_index(indices_, strides), true, true);
  (void)counts;
  // the positions are read first: a traced function's replay that finds another number of them then stops at the
  // first step reading them (Note [value steps]), before the sum into a buffer sized by the traced number
  std::vector<Tensor> rows;
  for (std::size_t j = 0; j < shape_.size(); ++j)
    rows.push_back(remainder(floor_divide(positions, strides.select(0, static_cast<std::int64_t>(j))), shape_[j]));
  const Tensor values = add_rows(zeros({positions.numel()}, dtype(), device()), inverse, values_, true);
  // positions of unchecked indices may lie outside the shape: they stay unchecked
  return COO(Made{}, stack(rows), values, shape_, true, in_range_);
}

COO COO::to(Device device) const { return COO(Made{}, indices_.to(device), values_.to(device), shape_, coalesced_, in_range_); }

COO COO::t() const {
  if (dim() != 2) throw Error("sparse_coo.t", "t() needs a matrix (2 dims), got shape " + shape_str(shape_));
  return COO(Made{}, flip(indices_, {0}), values_, Shape{shape_[1], shape_[0]}, false, in_range_);
}

CSR COO::to_csr() const {
  if (dim() != 2) throw Error("sparse_coo.to_csr", "CSR needs a matrix (2 dims), got shape " + shape_str(shape_));
  const COO c = coalesce();
  const Tensor counts = bincount(c.indices_.select(0, 0), Tensor(), shape_[0]);
  const Tensor crow = cat({zeros({1}, Dtype::Int64, device()), cumsum(counts, 0)});
  return CSR(CSR::Made{}, crow, c.indices_.select(0, 1).contiguous(), c.values_, shape_, c.in_range_);
}

// ---- CSR ----------------------------------------------------------------------------------------------------

CSR::CSR(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values, const Shape& shape,
         bool check_indices) {
  const char* op = "sparse_csr";
  check_shape(shape, 2, op);
  check_index_tensor(crow_indices, "crow_indices", op);
  check_index_tensor(col_indices, "col_indices", op);
  if (crow_indices.dim() != 1 || crow_indices.size(0) != shape[0] + 1)
    throw Error(op, "crow_indices of shape " + shape_str(crow_indices.shape()) + " must be (rows + 1) = (" +
                        std::to_string(shape[0] + 1) + ",) for shape " + shape_str(shape));
  if (col_indices.dim() != 1) throw Error(op, "col_indices of shape " + shape_str(col_indices.shape()) + " must be (nnz)");
  if (col_indices.device() != crow_indices.device())
    throw Error(op, "col_indices on " + col_indices.device().str() + " and crow_indices on " + crow_indices.device().str());
  const std::int64_t nnz = col_indices.size(0);
  check_values(values, nnz, crow_indices.device(), op);
  crow_ = crow_indices;
  col_ = col_indices;
  if (check_indices) {
    // checked by a step whose outputs are crow and col themselves, read by the trusted ops, so that a traced
    // function's replay checks them too (Note [value steps] in core/pointwise.hpp)
    const std::int64_t cols = shape[1];
    const std::vector<Tensor> checked = ::phasor::detail::apply_nondiff_n(
        op, {crow_indices, col_indices}, [cols, nnz, op](::phasor::detail::TensorList in) {
          const Tensor &crow = in[0], &col = in[1];
          ::phasor::detail::check_index_values(col, 0, cols, "for " + std::to_string(cols) + " columns", op, "column");
          // offsets from 0 to nnz, never decreasing
          const Tensor first = crow.select(0, 0), last = crow.select(0, -1);
          const Tensor bad = logical_or(logical_or(first != 0, last != nnz), (diff(crow) < 0).any());
          ::phasor::detail::check_device_value(
              op, bad, [&] { return std::pair<Tensor, Tensor>{first, last}; },
              [nnz](double f, double l) {
                return "crow_indices must run from 0 to nnz = " + std::to_string(nnz) + " without decreasing (they run from " +
                       std::to_string(static_cast<std::int64_t>(f)) + " to " + std::to_string(static_cast<std::int64_t>(l)) + ")";
              });
          return std::vector<Tensor>{crow, col};
        });
    crow_ = checked[0];
    col_ = checked[1];
  }
  values_ = values;
  shape_ = shape;
  in_range_ = check_indices;
  rows_ = expand_rows(crow_, nnz);
}

CSR::CSR(Made, Tensor crow, Tensor col, Tensor values, Shape shape, bool in_range, Tensor rows)
    : crow_(std::move(crow)), col_(std::move(col)), values_(std::move(values)), rows_(std::move(rows)), shape_(std::move(shape)),
      in_range_(in_range) {
  if (!rows_.defined()) rows_ = expand_rows(crow_, col_.numel());
}

CSR CSR::from_dense(const Tensor& dense) {
  if (!dense.defined() || dense.dim() != 2)
    throw Error("sparse_csr.from_dense", "CSR needs a matrix (2 dims), got " +
                                             (dense.defined() ? "shape " + shape_str(dense.shape()) : std::string("an undefined tensor")));
  return COO::from_dense(dense).to_csr();
}


Tensor CSR::to_dense() const { return to_coo().to_dense(); }

COO CSR::to_coo() const { return COO(COO::Made{}, stack({row_indices(), col_}), values_, shape_, false, in_range_); }

CSR CSR::to(Device device) const { return CSR(Made{}, crow_.to(device), col_.to(device), values_.to(device), shape_, in_range_, rows_.to(device)); }

// ---- products -------------------------------------------------------------------------------------------------

Tensor matmul(const COO& a, const Tensor& b) {
  if (a.dim() != 2) throw Error("sparse.matmul", "the sparse operand must be a matrix (2 dims), got shape " + shape_str(a.shape()));
  return sparse_dense(Tensor(), a.indices().select(0, 0), a.indices().select(0, 1), a.values(), a.shape(), b, a.in_range_,
                      "sparse.matmul");
}

Tensor matmul(const CSR& a, const Tensor& b) {
  return sparse_dense(a.crow_indices(), a.row_indices(), a.col_indices(), a.values(), a.shape(), b, a.in_range_, "sparse.matmul");
}

}  // namespace sparse
}  // namespace phasor
