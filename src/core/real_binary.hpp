// src/core/real_binary.hpp - the one way a real binary function becomes an op (real_binary): the compute dtype
// (complex refused; ints and bools in the default float dtype unless the op is integral), int64 divisors checked,
// the CPU's element loop or vector rows, or the CUDA kernel of the op's name, and the op's gradient. Used by
// core/binary_math.cpp and core/special.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "autodiff/node.hpp"
#include "core/device_check.hpp"
#include "core/elementwise.hpp"
#include "core/pointwise.hpp"
#include "core/promotion.hpp"
#include "phasor/ops.hpp"

namespace phasor::detail {

/// The dtype a real binary op computes in: the inputs' promoted type, complex refused; `integral` ops keep
/// int64 (and refuse bool), the others compute ints and bools in the default float dtype (as atan2).
inline Dtype real_compute_type(const char* op, TensorList in, bool integral) {
  Dtype dt = result_type(in);
  if (phasor::is_complex(dt))
    throw Error(op, std::string("not supported for complex tensors (got ") + dtype_name(in[0].dtype()) + " and " +
                        dtype_name(in[1].dtype()) + ")");
  if (integral && dt == Dtype::Bool) throw Error(op, "not implemented for two bool tensors");
  if (!integral && category(dt) < 2) dt = default_dtype();
  return dt;
}

/// Throws when an int64 division's divisor `b` holds a zero (Note [integer division]).
inline void check_integer_divisor(const char* op, const Tensor& b, Dtype dt) {
  if (dt != Dtype::Int64) return;
  check_device_value(
      op, any(b == 0), [] { return std::pair<Tensor, Tensor>{}; },
      [b_shape = b.shape()](double, double) {
        return "integer division by zero (a divisor of shape " + shape_str(b_shape) + " holds 0)";
      });
}

/// A vectorized float32 row of a real binary op: y[i] = f(a[i], b[i]) for i < n, f's values.
using RowsF32 = void (*)(const float* a, const float* b, float* y, std::int64_t n);

/// A broadcasting real binary op named `op` computing f, with gradient `bwd` (apply_op's). Two float32 operands
/// on one CPU device take `rows` instead, when given (Note [vector fmod], Note [vector logaddexp]). `param` goes
/// to the op's CUDA kernel (binary_kernel's).
template <class F, class Bwd>
Tensor real_binary(const char* op, const Tensor& a, const Tensor& b, bool integral, unsigned save, F f, Bwd bwd,
                   RowsF32 rows = nullptr, double param = 1) {
  return apply_op(
      op, {a, b}, save,
      [op, integral, f, rows, param](TensorList in) {
        const Dtype dt = real_compute_type(op, in, integral);
        if (integral) check_integer_divisor(op, in[1], dt);
        if (!rows || dt != Dtype::Float32 || in[0].dtype() != dt || in[1].dtype() != dt || !in[0].device().is_cpu() ||
            in[0].device() != in[1].device())
          return binary_kernel(in[0], in[1], dt, op, f, param);
        return map_rows_pair<float>(in[0], in[1], op, [rows](const auto& x, float* y, std::int64_t n) {
          rows(x[0], x[1], y, n);
        });
      },
      bwd);
}

/// The error of a backward that needs the gradient of `op` in `what`, which torch does not define either (zeta's
/// x, the incomplete gamma functions' a, the orthogonal polynomials' n).
[[noreturn]] inline void no_gradient(const char* op, const char* what) {
  throw Error(op, std::string("the gradient with respect to ") + what + " is not implemented (as in torch); " +
                      "detach it or do not ask for it");
}

}  // namespace phasor::detail
