// src/linalg/products.cpp - cross, kron and cdist: compositions of broadcasting elementwise ops, views and
// norm, so they run on every device and their gradients come from those ops.
#include <algorithm>
#include <cmath>
#include <string>

#include "autodiff/node.hpp"
#include "core/tensor_impl.hpp"
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
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
  });
}

}  // namespace phasor
