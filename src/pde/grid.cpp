// src/pde/grid.cpp - pde::Grid and the pseudo-spectral operators (Note [pde grid conventions]).
// Every operator is rfftn -> multiply by a constant symbol tensor -> irfftn, written with public
// ops, so it is differentiable (twice and more) through fft's own gradients.
#include <cmath>
#include <complex>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "autodiff/node.hpp"
#include "core/device_constants.hpp"
#include "core/tensor_impl.hpp"
#include "cuda/backend.hpp"
#include "pde/grid_detail.hpp"
#include "phasor/creation.hpp"
#include "phasor/fft.hpp"
#include "phasor/ops.hpp"
#include "phasor/pde/grid.hpp"

namespace phasor::pde {

namespace {

using ::phasor::detail::shape_str;
constexpr double kTwoPi = 6.283185307179586476925286766559;

std::string list_str(const std::vector<double>& v) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  if (v.size() == 1) os << ",";
  os << ")";
  return os.str();
}

void check_real_dtype(Dtype dtype, const char* op) {
  if (!is_floating(dtype))
    throw Error(op, std::string("dtype must be float32 or float64, got ") + dtype_name(dtype));
}

/// Which grid tensor a device_symbol is: a name (a string literal) and, for per-axis tensors, the axis and a
/// derivative's order.
struct Symbol {
  std::string_view name;
  std::int64_t axis = -1;
  int order = 0;
  Symbol(const char* n, std::int64_t a = -1, int o = 0) : name(n), axis(a), order(o) {}  // NOLINT: implicit
};

/// A grid tensor `kind` (make() builds it on the host, in any dtype) as `dtype` on `device`: on the host CPU
/// built every time; on another device built and moved once per (grid, kind, dtype, device) and shared (Note
/// [device constants]), so an operator applied to a GPU field costs no host-to-device copy after the first
/// call. Operators in this file only read the shared tensors; the Grid methods hand out copies (place).
Tensor device_symbol(const Grid& g, Symbol kind, Dtype dtype, Device device, const std::function<Tensor()>& make) {
  const auto key =
      std::make_tuple(kind.name, kind.axis, kind.order, dtype, g.sizes(), ::phasor::detail::key_bits(g.lengths()));
  return ::phasor::detail::device_constant(device, "pde symbol", key, [&] { return make().to(dtype); });
}

/// device_symbol as the caller's own tensor, for the Grid methods: off the host CPU a copy made on the
/// device (no host-to-device copy or host wait after the first call, so a CUDA graph can capture it). A
/// device that does not exist throws phasor::Error naming `op` and the device.
Tensor place(const Grid& g, Symbol kind, Dtype dtype, Device device, const char* op,
             const std::function<Tensor()>& make) {
  ::phasor::cuda::detail::check_device(device, op);
  const Tensor t = device_symbol(g, kind, dtype, device, make);
  return device == Device::cpu() ? t : t.clone();
}

/// The rfftn/irfftn dims of a d-dimensional grid: (-d, ..., -1).
std::vector<std::int64_t> grid_dims(const Grid& g) {
  std::vector<std::int64_t> dims;
  for (std::int64_t i = -g.ndim(); i < 0; ++i) dims.push_back(i);
  return dims;
}

/// Shape with d dims, `len` along `axis` and 1 elsewhere.
Shape axis_shape(std::int64_t d, std::int64_t axis, std::int64_t len) {
  Shape s(static_cast<std::size_t>(d), 1);
  s[static_cast<std::size_t>(axis)] = len;
  return s;
}

/// Angular wavenumbers 2 pi m / L along `axis` of the half spectrum, in double.
std::vector<double> wavenumber_values(const Grid& g, std::int64_t axis) {
  const std::int64_t n = g.sizes()[axis];
  const bool halved = axis == g.ndim() - 1;
  const std::int64_t len = halved ? n / 2 + 1 : n;
  const double scale = kTwoPi / g.lengths()[axis];
  std::vector<double> k(static_cast<std::size_t>(len));
  for (std::int64_t j = 0; j < len; ++j) k[j] = scale * static_cast<double>(detail::frequency(j, n, halved));
  return k;
}

/// (i k)^order along `axis` (Nyquist zeroed for odd orders), shaped to broadcast over the half
/// spectrum, as complex128 on the host.
Tensor make_derivative_symbol(const Grid& g, std::int64_t axis, int order) {
  const std::int64_t n = g.sizes()[axis];
  const bool halved = axis == g.ndim() - 1;
  const std::vector<double> k = wavenumber_values(g, axis);
  std::vector<std::complex<double>> m(k.size());
  for (std::size_t j = 0; j < k.size(); ++j) {
    const std::int64_t f = detail::frequency(static_cast<std::int64_t>(j), n, halved);
    if (order % 2 == 1 && detail::is_nyquist(f, n)) {
      m[j] = 0.0;
      continue;
    }
    double p = 1.0;
    for (int o = 0; o < order; ++o) p *= k[j];
    switch (order % 4) {
      case 0: m[j] = {p, 0.0}; break;
      case 1: m[j] = {0.0, p}; break;
      case 2: m[j] = {-p, 0.0}; break;
      default: m[j] = {0.0, -p}; break;
    }
  }
  return from_vector(m, axis_shape(g.ndim(), axis, static_cast<std::int64_t>(k.size())));
}

/// make_derivative_symbol through device_symbol's cache.
Tensor derivative_symbol(const Grid& g, std::int64_t axis, int order, Dtype dtype, Device device) {
  ::phasor::cuda::detail::check_device(device, "pde::derivative");
  return device_symbol(g, {"derivative", axis, order}, dtype, device,
                       [&] { return make_derivative_symbol(g, axis, order); });
}

/// Angular wavenumbers along `axis`, float64 on the host, shaped to broadcast over the half spectrum.
Tensor wavenumber_tensor(const Grid& g, std::int64_t axis) {
  const std::vector<double> k = wavenumber_values(g, axis);
  return from_vector(k, axis_shape(g.ndim(), axis, static_cast<std::int64_t>(k.size())));
}

/// -|k|^2 over the half spectrum as `dtype` on `device`, a tensor of its own: the per-axis k^2 (device
/// constants, small) summed by broadcasting where the result lives, so nothing of the spectrum's size is
/// built on the host or cached. 0 - s is +0 at k = 0.
Tensor laplacian_on(const Grid& g, Dtype dtype, Device device) {
  Tensor s;
  for (std::int64_t a = 0; a < g.ndim(); ++a) {
    const Tensor k = device_symbol(g, {"wavenumbers", a}, float64, device,
                                   [&] { return wavenumber_tensor(g, a); });
    s = s.defined() ? s + k * k : k * k;
  }
  return (0.0 - s).expand(g.spectral_sizes()).clone().to(dtype);
}

/// The 2/3-rule mask over the half spectrum (1: kept) as `dtype` on `device`, a tensor of its own: the
/// product of per-axis masks (device constants, small) made where the result lives.
Tensor dealias_on(const Grid& g, Dtype dtype, Device device) {
  const std::int64_t d = g.ndim();
  Tensor mask;
  for (std::int64_t a = 0; a < d; ++a) {
    const Tensor t = device_symbol(g, {"dealias", a}, float64, device, [&] {
      const std::int64_t n = g.sizes()[a];
      const bool halved = a == d - 1;
      const std::int64_t len = halved ? n / 2 + 1 : n;
      std::vector<double> keep(static_cast<std::size_t>(len));
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t m = detail::frequency(j, n, halved);
        keep[j] = 3 * (m < 0 ? -m : m) < n ? 1.0 : 0.0;
      }
      return from_vector(keep, axis_shape(d, a, len));
    });
    mask = mask.defined() ? mask * t : t;
  }
  return mask.to(dtype).expand(g.spectral_sizes()).clone();
}

/// Promotes an integer/bool field to the default float dtype; rejects complex fields.
Tensor real_field(const Tensor& u, const char* op) {
  if (u.is_complex())
    throw Error(op, std::string("expects a real field, got ") + dtype_name(u.dtype()) + " of shape " +
                        shape_str(u.shape()));
  return u.is_floating_point() ? u : u.to(default_dtype());
}

}  // namespace

// ---- Grid --------------------------------------------------------------------------------------

Grid::Grid(std::vector<std::int64_t> sizes, std::vector<double> lengths)
    : sizes_(std::move(sizes)), lengths_(std::move(lengths)) {
  const char* op = "pde::Grid";
  if (sizes_.empty() || sizes_.size() > 3)
    throw Error(op, "a grid has 1, 2 or 3 dims, got " + std::to_string(sizes_.size()) + " sizes " + shape_str(sizes_));
  if (lengths_.size() != sizes_.size())
    throw Error(op, "got " + std::to_string(sizes_.size()) + " sizes " + shape_str(sizes_) + " but " +
                        std::to_string(lengths_.size()) + " lengths " + list_str(lengths_));
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    if (sizes_[i] < 1)
      throw Error(op, "size " + std::to_string(sizes_[i]) + " along axis " + std::to_string(i) +
                          " is not positive (sizes " + shape_str(sizes_) + ")");
    if (!(std::isfinite(lengths_[i]) && lengths_[i] > 0.0)) {
      std::ostringstream os;
      os << "length " << lengths_[i] << " along axis " << i << " is not a finite positive number (lengths "
         << list_str(lengths_) << ")";
      throw Error(op, os.str());
    }
  }
}

Grid::Grid(std::vector<std::int64_t> sizes, double length)
    : Grid(sizes, std::vector<double>(sizes.size(), length)) {}

std::int64_t Grid::wrap_axis(std::int64_t axis, const char* op) const {
  const std::int64_t d = ndim();
  if (axis < -d || axis >= d)
    throw Error(op, "axis " + std::to_string(axis) + " out of range for a " + std::to_string(d) + "-D grid (valid: " +
                        std::to_string(-d) + " .. " + std::to_string(d - 1) + ")");
  return axis < 0 ? axis + d : axis;
}

std::int64_t Grid::size(std::int64_t axis) const { return sizes_[wrap_axis(axis, "pde::Grid::size")]; }
double Grid::length(std::int64_t axis) const { return lengths_[wrap_axis(axis, "pde::Grid::length")]; }

std::int64_t Grid::numel() const {
  std::int64_t n = 1;
  for (auto s : sizes_) n *= s;
  return n;
}

double Grid::volume() const {
  double v = 1.0;
  for (auto l : lengths_) v *= l;
  return v;
}

double Grid::spacing(std::int64_t axis) const {
  const std::int64_t a = wrap_axis(axis, "pde::Grid::spacing");
  return lengths_[a] / static_cast<double>(sizes_[a]);
}

std::vector<std::int64_t> Grid::spectral_sizes() const {
  std::vector<std::int64_t> s = sizes_;
  s.back() = s.back() / 2 + 1;
  return s;
}

Tensor Grid::coordinates(std::int64_t axis, Dtype dtype, Device device) const {
  const char* op = "pde::Grid::coordinates";
  const std::int64_t a = wrap_axis(axis, op);
  check_real_dtype(dtype, op);
  return place(*this, {"coordinates", a}, dtype, device, op, [&] {
    const std::int64_t n = sizes_[a];
    std::vector<double> x(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) x[j] = static_cast<double>(j) * lengths_[a] / static_cast<double>(n);
    return from_vector(x, axis_shape(ndim(), a, n));
  });
}

std::vector<Tensor> Grid::mesh(Dtype dtype, Device device) const {
  const char* op = "pde::Grid::mesh";
  check_real_dtype(dtype, op);
  std::vector<Tensor> out;
  ::phasor::cuda::detail::check_device(device, op);
  for (std::int64_t a = 0; a < ndim(); ++a)
    out.push_back(coordinates(a, dtype, device).expand(sizes_).contiguous());  // full size: built on the device
  return out;
}

Tensor Grid::wavenumbers(std::int64_t axis, Dtype dtype, Device device) const {
  const char* op = "pde::Grid::wavenumbers";
  const std::int64_t a = wrap_axis(axis, op);
  check_real_dtype(dtype, op);
  return place(*this, {"wavenumbers", a}, dtype, device, op,
               [&] { return wavenumber_tensor(*this, a); });
}

Tensor Grid::laplacian_symbol(Dtype dtype, Device device) const {
  const char* op = "pde::Grid::laplacian_symbol";
  check_real_dtype(dtype, op);
  ::phasor::cuda::detail::check_device(device, op);
  return laplacian_on(*this, dtype, device);
}

Tensor Grid::dealias_mask(Dtype dtype, Device device) const {
  const char* op = "pde::Grid::dealias_mask";
  check_real_dtype(dtype, op);
  ::phasor::cuda::detail::check_device(device, op);
  return dealias_on(*this, dtype, device);
}

void Grid::check_field(const char* op, const Tensor& u) const {
  const std::int64_t d = ndim();
  if (!u.defined()) throw Error(op, "undefined field on " + str());
  bool ok = u.dim() >= d;
  for (std::int64_t i = 0; ok && i < d; ++i) ok = u.size(u.dim() - d + i) == sizes_[i];
  if (!ok)
    throw Error(op, "field of shape " + shape_str(u.shape()) + " does not fit the grid: its last " + std::to_string(d) +
                        " dims must be the grid sizes " + shape_str(sizes_) + " (" + str() + ")");
}

void Grid::check_spectrum(const char* op, const Tensor& u_hat) const {
  const std::int64_t d = ndim();
  const Shape ss = spectral_sizes();
  if (!u_hat.defined()) throw Error(op, "undefined spectrum on " + str());
  bool ok = u_hat.dim() >= d;
  for (std::int64_t i = 0; ok && i < d; ++i) ok = u_hat.size(u_hat.dim() - d + i) == ss[i];
  if (!ok)
    throw Error(op, "spectrum of shape " + shape_str(u_hat.shape()) + " does not fit the grid: its last " +
                        std::to_string(d) + " dims must be the half-spectrum sizes " + shape_str(ss) + " (" + str() +
                        ")");
}

std::string Grid::str() const { return "Grid(sizes=" + shape_str(sizes_) + ", lengths=" + list_str(lengths_) + ")"; }

// ---- spectral operators ---------------------------------------------------------------------------

Tensor to_spectral(const Grid& g, const Tensor& u) {
  const char* op = "pde::to_spectral";
  g.check_field(op, u);
  Tensor x = real_field(u, op);
  return ::phasor::detail::composite(op, {x}, [&] { return fft::rfftn(x, std::nullopt, grid_dims(g)); });
}

Tensor from_spectral(const Grid& g, const Tensor& u_hat) {
  const char* op = "pde::from_spectral";
  g.check_spectrum(op, u_hat);
  if (!is_floating_or_complex(u_hat.dtype()))
    throw Error(op, std::string("expects a complex spectrum, got ") + dtype_name(u_hat.dtype()));
  return ::phasor::detail::composite(op, {u_hat},
                                     [&] { return fft::irfftn(u_hat, g.sizes(), grid_dims(g)); });
}

Tensor derivative(const Grid& g, const Tensor& u, std::int64_t axis, int order) {
  const char* op = "pde::derivative";
  const std::int64_t a = g.wrap_axis(axis, op);
  if (order < 0) throw Error(op, "order must be >= 0, got " + std::to_string(order));
  g.check_field(op, u);
  Tensor x = real_field(u, op);
  return ::phasor::detail::composite(op, {x}, [&] {
    if (order == 0) return x.clone();
    Tensor xh = to_spectral(g, x);
    return from_spectral(g, xh * derivative_symbol(g, a, order, xh.dtype(), xh.device()));
  });
}

Tensor gradient(const Grid& g, const Tensor& u) {
  const char* op = "pde::gradient";
  g.check_field(op, u);
  Tensor x = real_field(u, op);
  return ::phasor::detail::composite(op, {x}, [&] {
    Tensor xh = to_spectral(g, x);
    std::vector<Tensor> parts;
    for (std::int64_t a = 0; a < g.ndim(); ++a)
      parts.push_back(xh * derivative_symbol(g, a, 1, xh.dtype(), xh.device()));
    return from_spectral(g, stack(parts, -(g.ndim() + 1)));
  });
}

Tensor divergence(const Grid& g, const Tensor& v) {
  const char* op = "pde::divergence";
  const std::int64_t d = g.ndim();
  g.check_field(op, v);
  if (v.dim() < d + 1 || v.size(-(d + 1)) != d)
    throw Error(op, "vector field of shape " + shape_str(v.shape()) + " must be (..., " + std::to_string(d) +
                        ", n...) on the " + std::to_string(d) + "-D " + g.str());
  Tensor x = real_field(v, op);
  return ::phasor::detail::composite(op, {x}, [&] {
    Tensor xh = to_spectral(g, x);
    const Shape ss = g.spectral_sizes();
    std::vector<Tensor> sym;
    for (std::int64_t a = 0; a < d; ++a) sym.push_back(derivative_symbol(g, a, 1, xh.dtype(), xh.device()).expand(ss));
    return from_spectral(g, sum(xh * stack(sym, 0), {-(d + 1)}));
  });
}

Tensor laplacian(const Grid& g, const Tensor& u) {
  const char* op = "pde::laplacian";
  g.check_field(op, u);
  Tensor x = real_field(u, op);
  return ::phasor::detail::composite(op, {x}, [&] {
    Tensor xh = to_spectral(g, x);
    const Dtype rd = to_real(xh.dtype());
    const Tensor sym =
        device_symbol(g, "laplacian", rd, xh.device(), [&] { return laplacian_on(g, float64, Device::cpu()); });
    return from_spectral(g, xh * sym);
  });
}

Tensor inverse_laplacian(const Grid& g, const Tensor& f) {
  const char* op = "pde::inverse_laplacian";
  g.check_field(op, f);
  Tensor x = real_field(f, op);
  return ::phasor::detail::composite(op, {x}, [&] {
    Tensor xh = to_spectral(g, x);
    const Tensor sym = device_symbol(g, "inverse_laplacian", to_real(xh.dtype()), xh.device(), [&] {
      const Tensor lap = laplacian_on(g, float64, Device::cpu());
      return where(lap == 0.0, 0.0, 1.0 / lap);
    });
    return from_spectral(g, xh * sym);
  });
}

Tensor dealias(const Grid& g, const Tensor& u_hat) {
  const char* op = "pde::dealias";
  g.check_spectrum(op, u_hat);
  if (!is_floating_or_complex(u_hat.dtype()))
    throw Error(op, std::string("expects a floating or complex spectrum, got ") + dtype_name(u_hat.dtype()));
  return ::phasor::detail::composite(op, {u_hat},
                                     [&] {
                                       const Dtype rd = to_real(u_hat.dtype());
                                       return u_hat * device_symbol(g, "dealias", rd, u_hat.device(), [&] {
                                                return dealias_on(g, float64, Device::cpu());
                                              });
                                     });
}

}  // namespace phasor::pde
