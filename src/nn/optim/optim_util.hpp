// src/nn/optim/optim_util.hpp - helpers shared by the optimizers, schedulers and clipping:
// real-component views of parameters (complex = pairs of reals), a parallel loop, message formatting.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/device.hpp"
#include "phasor/state_dict.hpp"

namespace phasor::optim::detail {

/// A double as messages show it ("0.001", "-1", "1e-09").
inline std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// "a; b; c".
inline std::string join(const std::vector<std::string>& parts, const char* sep = "; ") {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

/// Calls f(R{}) with R the real element type of `dt` (float for float32/complex64, double otherwise).
template <class F>
void visit_real(Dtype dt, F&& f) {
  if (dt == Dtype::Float32 || dt == Dtype::Complex64)
    f(float{});
  else
    f(double{});
}

/// Number of real components (2 per complex element).
inline std::int64_t real_numel(const Tensor& t) { return t.numel() * (t.is_complex() ? 2 : 1); }

/// The contiguous tensor's data as an array of real components.
template <class R>
R* real_ptr(const Tensor& t) {
  return static_cast<R*>(t.data_ptr());
}

/// Runs f(begin, end) over [0, n), split across OpenMP threads when n is large.
template <class F>
void parallel_for(std::int64_t n, F&& f) {
  constexpr std::int64_t grain = 32768;
  const int threads =
      n >= 2 * grain ? static_cast<int>(std::min<std::int64_t>(get_num_threads(), n / grain)) : 1;
  if (threads <= 1) {
    f(std::int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t chunk = (n + nt - 1) / nt;
    const std::int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) f(b, e);
  }
}

/// In-place contiguous access to a parameter: `work` is the parameter itself when it is contiguous,
/// else a contiguous copy that commit() writes back. commit() also marks the in-place write.
struct Writable {
  Tensor param, work;
  explicit Writable(const Tensor& p) : param(p), work(p.contiguous()) {}
  void commit() {
    if (work.is_same(param))
      phasor::detail::bump_version(param);
    else
      param.copy_(work);
  }
};

/// A state tensor (momentum buffer, moment) made to match its parameter, which may have moved or changed
/// dtype since the state was made (Module::to keeps the parameter's identity): its device and dtype, and a
/// contiguous layout, as the fused updates read it as a flat array. A different shape is an error.
inline void match_param(Tensor& state, const Tensor& p, const std::string& op, const char* key) {
  if (state.shape() != p.shape())
    throw Error(op, std::string("state '") + key + "' of shape " + phasor::detail::shape_str(state.shape()) +
                        " does not match its parameter of shape " + phasor::detail::shape_str(p.shape()));
  if (state.device() != p.device()) state = state.to(p.device());
  if (state.dtype() != p.dtype()) state = state.to(p.dtype());
  if (!state.is_contiguous()) state = state.contiguous();
}

/// The parameter's gradient as a contiguous tensor of the parameter's dtype (checked shape).
inline Tensor grad_of(const Tensor& p, const std::string& op) {
  Tensor g = p.grad();
  if (g.shape() != p.shape())
    throw Error(op, "gradient of shape " + phasor::detail::shape_str(g.shape()) + " does not match parameter of shape " +
                        phasor::detail::shape_str(p.shape()));
  if (g.device() != p.device())
    throw Error(op, "gradient on " + g.device().str() + " but its parameter on " + p.device().str());
  if (g.dtype() != p.dtype()) g = g.to(p.dtype());
  return g.contiguous();
}

/// Stores a float64 0-d tensor.
inline void put_scalar(StateDict& out, const std::string& key, double v) { out[key] = scalar_tensor(v, float64); }

/// Reads a real one-element tensor at `key`; records a problem and returns false when missing or malformed.
inline bool get_scalar(const StateDict& in, const std::string& key, double& v, std::vector<std::string>& problems) {
  auto it = in.find(key);
  if (it == in.end()) {
    problems.push_back("missing key '" + key + "'");
    return false;
  }
  const Tensor& t = it->second;
  if (!t.defined() || t.dim() != 0 || t.is_complex()) {
    problems.push_back("key '" + key + "' should be a real 0-d tensor, got " +
                       (t.defined() ? std::string(dtype_name(t.dtype())) + " of shape " +
                                          phasor::detail::shape_str(t.shape())
                                    : std::string("an undefined tensor")));
    return false;
  }
  v = t.item<double>();
  return true;
}

/// get_scalar for an integer hyperparameter (rejects non-integral values).
inline bool get_int(const StateDict& in, const std::string& key, std::int64_t& v, std::vector<std::string>& problems) {
  double d = 0;
  if (!get_scalar(in, key, d, problems)) return false;
  if (d != static_cast<double>(static_cast<std::int64_t>(d))) {
    problems.push_back("key '" + key + "' should hold an integer, got " + fmt(d));
    return false;
  }
  v = static_cast<std::int64_t>(d);
  return true;
}

/// Reads a real 1-d tensor of `n` values at `key` (n < 0: any length).
inline bool get_vector(const StateDict& in, const std::string& key, std::int64_t n, std::vector<double>& v,
                       std::vector<std::string>& problems) {
  auto it = in.find(key);
  if (it == in.end()) {
    problems.push_back("missing key '" + key + "'");
    return false;
  }
  const Tensor& t = it->second;
  if (!t.defined() || t.dim() != 1 || t.is_complex() || (n >= 0 && t.numel() != n)) {
    problems.push_back("key '" + key + "' should be a real 1-d tensor" + (n >= 0 ? " of " + std::to_string(n) + " values" : "") +
                       ", got " + (t.defined() ? phasor::detail::shape_str(t.shape()) : std::string("undefined")));
    return false;
  }
  v = to_vector<double>(t);
  return true;
}

}  // namespace phasor::optim::detail
