// src/linalg/products.cpp - cross, kron, cdist, tensordot and the Vandermonde matrices: compositions of
// broadcasting elementwise ops, views, norm, mm and cumprod, so they run on every device and their gradients come
// from those ops.
#include <algorithm>
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/promotion.hpp"
#include "core/tensor_impl.hpp"
#include "phasor/creation.hpp"
#include "phasor/linalg.hpp"
#include "phasor/ops.hpp"

namespace phasor {

Tensor cross(const Tensor& a, const Tensor& b, std::int64_t dim) {
  detail::check_same_device(a, b, "cross");
  if (a.dim() != b.dim())
    throw Error("cross", "expected inputs with the same number of dims, got shapes " + detail::shape_str(a.shape()) +
                             " and " + detail::shape_str(b.shape()));
  const Shape s = broadcast_shapes({a.shape(), b.shape()}, "cross");
  const std::int64_t d = detail::wrap_dim(dim, static_cast<std::int64_t>(s.size()), "cross");
  if (s[static_cast<std::size_t>(d)] != 3)
    throw Error("cross", "dim " + std::to_string(dim) + " must have size 3, got shapes " + detail::shape_str(a.shape()) +
                             " and " + detail::shape_str(b.shape()));
  return detail::composite("cross", {a, b}, [&] {
    const Tensor x = a.broadcast_to(s), y = b.broadcast_to(s);
    const auto c = [&](const Tensor& t, std::int64_t i) { return t.select(d, i); };
    return stack({c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1), c(x, 2) * c(y, 0) - c(x, 0) * c(y, 2),
                  c(x, 0) * c(y, 1) - c(x, 1) * c(y, 0)},
                 d);
  });
}

Tensor kron(const Tensor& a, const Tensor& b) {
  detail::check_same_device(a, b, "kron");
  const std::size_t nd = static_cast<std::size_t>(std::max(a.dim(), b.dim()));
  // a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...), the pairs merged (shapes padded with leading 1s)
  Shape as(nd - static_cast<std::size_t>(a.dim()), 1), bs(nd - static_cast<std::size_t>(b.dim()), 1);
  as.insert(as.end(), a.shape().begin(), a.shape().end());
  bs.insert(bs.end(), b.shape().begin(), b.shape().end());
  Shape ai, bi, out;
  for (std::size_t i = 0; i < nd; ++i) {
    ai.insert(ai.end(), {as[i], 1});
    bi.insert(bi.end(), {1, bs[i]});
    out.push_back(as[i] * bs[i]);
  }
  return detail::composite("kron", {a, b}, [&] { return (a.reshape(ai) * b.reshape(bi)).reshape(out); });
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  detail::check_same_device(x1, x2, "cdist");
  if (x1.dim() < 2 || x2.dim() < 2)
    throw Error("cdist", "expected inputs of 2 or more dims, got shapes " + detail::shape_str(x1.shape()) + " and " +
                             detail::shape_str(x2.shape()));
  if (x1.size(-1) != x2.size(-1))
    throw Error("cdist", "the inputs' last dims (features) differ: shapes " + detail::shape_str(x1.shape()) + " and " +
                             detail::shape_str(x2.shape()));
  if (!(p >= 0)) throw Error("cdist", "p must be non-negative, got " + std::to_string(p));
  if (x1.is_complex() || x2.is_complex()) throw Error("cdist", "expected real inputs");
  return detail::composite("cdist", {x1, x2}, [&] {
    // (..., P, 1, M) - (..., 1, R, M): every pair's difference, then its p-norm over the features
    return phasor::norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
  });
}

Tensor tensordot(const Tensor& a, const Tensor& b, const Shape& dims_a, const Shape& dims_b) {
  const char* op = "tensordot";
  detail::check_same_device(a, b, op);
  if (dims_a.size() != dims_b.size())
    throw Error(op, "expected as many dims of a as of b to contract, got " + detail::shape_str(dims_a) + " and " +
                        detail::shape_str(dims_b));
  const auto da = detail::wrap_dims(dims_a, a.dim(), op, false), db = detail::wrap_dims(dims_b, b.dim(), op, false);
  std::int64_t k = 1;
  for (std::size_t i = 0; i < da.size(); ++i) {
    if (a.size(da[i]) != b.size(db[i]))
      throw Error(op, "contracted dims differ in size: dim " + std::to_string(da[i]) + " of a " +
                          detail::shape_str(a.shape()) + " has size " + std::to_string(a.size(da[i])) + ", dim " +
                          std::to_string(db[i]) + " of b " + detail::shape_str(b.shape()) + " has size " +
                          std::to_string(b.size(db[i])));
    k *= a.size(da[i]);
  }
  // a as (free dims of a, contracted) times b as (contracted, free dims of b): one matrix product
  const auto free_dims = [](const Tensor& t, const std::vector<std::int64_t>& contracted) {
    std::vector<std::int64_t> f;
    for (std::int64_t i = 0; i < t.dim(); ++i)
      if (std::find(contracted.begin(), contracted.end(), i) == contracted.end()) f.push_back(i);
    return f;
  };
  const auto fa = free_dims(a, da), fb = free_dims(b, db);
  Shape perm_a(fa.begin(), fa.end()), perm_b(db.begin(), db.end()), out;
  perm_a.insert(perm_a.end(), da.begin(), da.end());
  perm_b.insert(perm_b.end(), fb.begin(), fb.end());
  std::int64_t m = 1, n = 1;
  for (auto i : fa) m *= a.size(i), out.push_back(a.size(i));
  for (auto i : fb) n *= b.size(i), out.push_back(b.size(i));
  const Dtype dt = promote_types(a.dtype(), b.dtype());
  return detail::composite(op, {a, b}, [&] {
    return mm(a.to(dt).permute(perm_a).reshape({m, k}), b.to(dt).permute(perm_b).reshape({k, n})).reshape(out);
  });
}

Tensor tensordot(const Tensor& a, const Tensor& b, std::int64_t dims) {
  if (dims < 0 || dims > a.dim() || dims > b.dim())
    throw Error("tensordot", "dims must be in [0, min(a.dim(), b.dim())], got " + std::to_string(dims) +
                                 " for shapes " + detail::shape_str(a.shape()) + " and " + detail::shape_str(b.shape()));
  Shape dims_a, dims_b;
  for (std::int64_t i = 0; i < dims; ++i) dims_a.push_back(a.dim() - dims + i), dims_b.push_back(i);
  return tensordot(a, b, dims_a, dims_b);
}

namespace {
/// x (..., n) -> (..., n, N) with column j = x^j, as a running product (exact for integers, no pow at 0).
Tensor vander_increasing(const char* op, const Tensor& x, std::optional<std::int64_t> N) {
  const std::int64_t n = x.dim() == 0 ? 1 : x.size(-1);
  const std::int64_t cols = N.value_or(n);
  if (cols < 0) throw Error(op, "N must be non-negative, got " + std::to_string(cols));
  if (x.dtype() == Dtype::Bool) throw Error(op, "expected a numeric tensor, got bool");
  return detail::composite(op, {x}, [&] {
    Shape rep = x.shape();
    rep.push_back(std::max<std::int64_t>(cols - 1, 0));
    const Tensor ones = ones_like(x).unsqueeze(-1);
    if (cols == 0) return ones.narrow(-1, 0, 0).contiguous();
    return cat({ones, x.unsqueeze(-1).expand(rep)}, -1).cumprod(-1);
  });
}
}  // namespace

Tensor vander(const Tensor& x, std::optional<std::int64_t> N, bool increasing) {
  if (x.dim() != 1) throw Error("vander", "expected a 1-d tensor, got shape " + detail::shape_str(x.shape()));
  const Tensor v = vander_increasing("vander", x, N);
  return increasing ? v : flip(v, {-1});
}

Tensor linalg::vander(const Tensor& x, std::optional<std::int64_t> N) {
  if (x.dim() == 0) throw Error("linalg.vander", "expected a tensor of at least 1 dim, got a 0-d tensor");
  return vander_increasing("linalg.vander", x, N);
}

}  // namespace phasor
