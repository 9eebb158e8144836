// phasor/sparse.hpp - sparse tensors: coordinate (COO, any number of dims) and compressed sparse row (CSR,
// matrices) forms, their conversions to and from dense tensors and each other, and sparse-dense matrix
// products (torch.sparse's roles). Every operation is made of tensor ops (index_add, index_select, unique,
// searchsorted, ...), so it runs on the values' device, CPU or GPU, and differentiates: gradients reach the
// sparse values (not the pattern) and the dense operands.
//
//   auto a = phasor::sparse::COO(indices, values, {m, n});   // indices int64 (2, nnz), values (nnz)
//   Tensor y = phasor::sparse::matmul(a.to_csr(), x);       // x (n) or (n, k)
//   Tensor d = a.to_dense();
#pragma once
#include <cstdint>

#include "phasor/tensor.hpp"

namespace phasor {
namespace sparse {

class CSR;

/// A sparse tensor in coordinate form (torch.sparse_coo_tensor): values[i] sits at the position indices[:, i] of
/// a dense tensor of `shape`; positions may repeat (they add up) until coalesce().
class COO {
 public:
  /// indices: int64 (ndim, nnz) with ndim = shape.size() >= 1; values: (nnz), any dtype, on the indices' device.
  /// Each index is checked against its dim's size unless `check_indices` is false.
  COO(const Tensor& indices, const Tensor& values, const Shape& shape, bool check_indices = true);
  /// The nonzero elements of `dense` (in row-major order, so coalesced); differentiable in dense's values.
  static COO from_dense(const Tensor& dense);
  /// int64 (ndim, nnz) positions.
  const Tensor& indices() const { return indices_; }
  /// (nnz) values.
  const Tensor& values() const { return values_; }
  /// The dense shape.
  const Shape& shape() const { return shape_; }
  /// Number of stored values (repeated positions counted each time).
  std::int64_t nnz() const { return values_.numel(); }
  /// Number of dims of the dense shape.
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  /// The values' dtype.
  Dtype dtype() const { return values_.dtype(); }
  /// The values' (and indices') device.
  Device device() const { return values_.device(); }
  /// True when the positions are sorted in row-major order without repeats (from_dense, coalesce).
  bool is_coalesced() const { return coalesced_; }
  /// The dense tensor (repeated positions summed); differentiable in the values.
  Tensor to_dense() const;
  /// Sorted positions, each once, its values summed; differentiable in the values.
  COO coalesce() const;
  /// The same tensor on `device`.
  COO to(Device device) const;
  /// The transpose of a matrix (2 dims).
  COO t() const;
  /// The matrix (2 dims) in CSR form (coalesced first).
  CSR to_csr() const;

 private:
  struct Made {};  // the tag of the constructor for what this library made (no checks)
  COO(Made, Tensor indices, Tensor values, Shape shape, bool coalesced, bool in_range);
  friend class CSR;
  friend Tensor matmul(const COO& a, const Tensor& b);
  Tensor indices_, values_;
  Shape shape_;
  bool coalesced_ = false;
  bool in_range_ = false;  // indices known to be in range (checked, or made here): kernels that skip the checks
};

/// A sparse matrix in compressed sparse row form (torch.sparse_csr_tensor): row r's values are
/// values[crow_indices[r] : crow_indices[r + 1]], in the columns col_indices of the same range.
class CSR {
 public:
  /// crow_indices: int64 (rows + 1), from 0 to nnz, non-decreasing; col_indices: int64 (nnz), each in [0, cols);
  /// values: (nnz); shape: {rows, cols}; all on one device. The indices are checked unless `check_indices` is
  /// false.
  CSR(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values, const Shape& shape,
      bool check_indices = true);
  /// The nonzero elements of a dense matrix; differentiable in its values.
  static CSR from_dense(const Tensor& dense);
  /// int64 (rows + 1) offsets of each row's values.
  const Tensor& crow_indices() const { return crow_; }
  /// int64 (nnz) column of each value.
  const Tensor& col_indices() const { return col_; }
  /// (nnz) values.
  const Tensor& values() const { return values_; }
  /// {rows, cols}.
  const Shape& shape() const { return shape_; }
  /// Number of stored values.
  std::int64_t nnz() const { return values_.numel(); }
  /// The values' dtype.
  Dtype dtype() const { return values_.dtype(); }
  /// The values' (and indices') device.
  Device device() const { return values_.device(); }
  /// int64 (nnz) row of each value: the crow offsets expanded once, when the matrix is made (no host wait).
  const Tensor& row_indices() const { return rows_; }
  /// The dense matrix; differentiable in the values.
  Tensor to_dense() const;
  /// The same matrix in COO form.
  COO to_coo() const;
  /// The same matrix on `device`.
  CSR to(Device device) const;

 private:
  struct Made {};  // the tag of the constructor for what this library made (no checks)
  CSR(Made, Tensor crow, Tensor col, Tensor values, Shape shape, bool in_range, Tensor rows = Tensor());  // rows: made if undefined
  friend class COO;
  friend Tensor matmul(const CSR& a, const Tensor& b);
  Tensor crow_, col_, values_, rows_;
  Shape shape_;
  bool in_range_ = false;  // indices known to be in range (checked, or made here): kernels that skip the checks
};

/// The product of a sparse (m, n) matrix and a dense b of shape (n) or (n, k): dense (m) or (m, k), in the
/// promoted dtype; differentiable in the sparse values and in b.
Tensor matmul(const COO& a, const Tensor& b);
/// The product of a sparse (m, n) matrix and a dense b of shape (n) or (n, k), as matmul(COO, b).
Tensor matmul(const CSR& a, const Tensor& b);

}  // namespace sparse
}  // namespace phasor
