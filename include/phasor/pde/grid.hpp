// phasor/pde/grid.hpp - periodic grids and pseudo-spectral operators (derivatives, Laplacian,
// its inverse, 2/3-rule dealiasing), all differentiable (built from phasor::fft and public ops).
//
// Note [pde grid conventions]
// A Grid is the periodic box [0, L_0) x ... x [0, L_{d-1}) (d = 1, 2, 3) sampled at the points
// x_j = j L_i / n_i, j = 0 .. n_i-1, along each axis i. A field on the grid is a real tensor whose
// LAST d dims are (n_0, ..., n_{d-1}); any leading dims are batch/channel dims and are carried along.
// Its spectrum is the rfftn over those d dims (fft::Norm::backward: forward unscaled, inverse 1/N),
// the "half spectrum" of shape (..., n_0, ..., n_{d-2}, n_{d-1}/2 + 1). Along a non-last axis the
// integer frequencies m are fft::fftfreq's order [0, 1, ..., -(n/2), ..., -1] (times n); along the
// last axis they are rfftfreq's [0, 1, ..., n/2]. The angular wavenumber is k = 2 pi m / L.
//
// Nyquist modes: on an even axis the frequency m = n/2 (stored as -n/2 on a non-last axis) is its
// own partner, and the exact derivative of its real cosine wave cos(pi n x / L) vanishes at the grid
// points, so odd-order derivatives along that axis zero it (as numpy's spectral-derivative recipes
// and jax-cfd do); even orders keep it, multiplied by (i k)^order, which is real. The operators
// stay exact for trigonometric polynomials without a Nyquist component. Consequences: on an even
// grid divergence(gradient(u)) and laplacian(u) differ exactly by the Nyquist content of u (they
// agree on odd grids and on band-limited fields), and derivative(derivative(u)) differs from
// derivative(u, order 2) likewise.
//
// Devices: the symbol tensors (wavenumbers, laplacian_symbol, dealias_mask, coordinates, mesh) are
// computed in double and created on the `device` asked for (default the CPU); off the host each call
// returns a tensor of its own, built on that device from per-axis values moved there once, so no call
// after the first copies from the host (a CUDA graph can capture it). The operators below work on a
// field of any device (CPU or CUDA) and build their symbols on the field's device, so the same code runs
// on a GPU by moving the field there.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "phasor/device.hpp"
#include "phasor/dtype.hpp"
#include "phasor/tensor.hpp"

namespace phasor::pde {

/// A periodic box [0,L_0) x ... x [0,L_{d-1}) (d = 1, 2, 3) sampled at n_0 x ... x n_{d-1} points
/// (Note [pde grid conventions]). A field on it is a tensor whose LAST d dims are (n_0, ..., n_{d-1}).
class Grid {
 public:
  /// The box with the given sizes (1 to 3 entries, each >= 1) and lengths (same count, each finite > 0).
  Grid(std::vector<std::int64_t> sizes, std::vector<double> lengths);
  /// The box with the given sizes and the same length along every axis (default the unit box).
  explicit Grid(std::vector<std::int64_t> sizes, double length = 1.0);

  /// Number of spatial dims d.
  std::int64_t ndim() const { return static_cast<std::int64_t>(sizes_.size()); }
  /// Points per axis (n_0, ..., n_{d-1}).
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  /// Box lengths per axis (L_0, ..., L_{d-1}).
  const std::vector<double>& lengths() const { return lengths_; }
  /// Points along `axis` (negative counts from the end); throws on a bad axis.
  std::int64_t size(std::int64_t axis) const;
  /// Length along `axis`; throws on a bad axis.
  double length(std::int64_t axis) const;
  /// Total number of points n_0 * ... * n_{d-1}.
  std::int64_t numel() const;
  /// Volume of the box L_0 * ... * L_{d-1}.
  double volume() const;
  /// Grid spacing L/n along `axis`.
  double spacing(std::int64_t axis) const;
  /// Shape of the rfftn half spectrum: (n_0, ..., n_{d-2}, n_{d-1}/2 + 1).
  std::vector<std::int64_t> spectral_sizes() const;
  /// Normalizes `axis` (-d .. d-1) to 0 .. d-1; throws phasor::Error naming `op` otherwise.
  std::int64_t wrap_axis(std::int64_t axis, const char* op = "pde::Grid") const;

  /// Coordinates x_j = j L/n along `axis` (float32/float64) on `device`, shaped to broadcast over a
  /// field: d dims, n along `axis` and 1 elsewhere.
  Tensor coordinates(std::int64_t axis, Dtype dtype = float64, Device device = Device::cpu()) const;
  /// The d coordinate arrays on `device`, each of the full grid shape (n_0, ..., n_{d-1}) ("ij" indexing).
  std::vector<Tensor> mesh(Dtype dtype = float64, Device device = Device::cpu()) const;
  /// Angular wavenumbers k = 2 pi m / L along `axis` (fftfreq order; rfftfreq on the last axis) on `device`,
  /// shaped to broadcast over the half spectrum: d dims, spectral_sizes()[axis] along `axis`, 1 elsewhere.
  Tensor wavenumbers(std::int64_t axis, Dtype dtype = float64, Device device = Device::cpu()) const;
  /// The Laplacian's symbol -|k|^2 = -(k_0^2 + ... + k_{d-1}^2) on `device`, shaped spectral_sizes().
  Tensor laplacian_symbol(Dtype dtype = float64, Device device = Device::cpu()) const;
  /// Orszag's 2/3-rule mask over the half spectrum (shape spectral_sizes()) on `device`: 1 where the integer
  /// frequency satisfies 3|m_i| < n_i on every axis i, else 0 (so every Nyquist mode is dropped).
  Tensor dealias_mask(Dtype dtype = float64, Device device = Device::cpu()) const;
  /// Throws phasor::Error naming `op`, the grid sizes and u's shape unless u's last d dims are the grid sizes.
  void check_field(const char* op, const Tensor& u) const;
  /// Throws phasor::Error naming `op` unless u_hat's last d dims are spectral_sizes().
  void check_spectrum(const char* op, const Tensor& u_hat) const;

  /// "Grid(sizes=[..], lengths=[..])".
  std::string str() const;
  /// Same sizes and lengths.
  bool operator==(const Grid& o) const { return sizes_ == o.sizes_ && lengths_ == o.lengths_; }
  /// Different sizes or lengths.
  bool operator!=(const Grid& o) const { return !(*this == o); }

 private:
  std::vector<std::int64_t> sizes_;
  std::vector<double> lengths_;
};

/// Half spectrum of a real field: rfftn over the grid's d dims (fft::Norm::backward, unscaled).
Tensor to_spectral(const Grid& g, const Tensor& u);
/// Real field from a half spectrum: irfftn back to the grid sizes (scaled 1/N).
Tensor from_spectral(const Grid& g, const Tensor& u_hat);
/// Spectral derivative of order `order` (>= 0) along `axis`: multiplies the spectrum by (i k)^order
/// (Nyquist zeroed for odd orders on even axes, Note [pde grid conventions]).
Tensor derivative(const Grid& g, const Tensor& u, std::int64_t axis, int order = 1);
/// Spectral gradient: (..., n...) -> (..., d, n...), entry i the first derivative along axis i.
Tensor gradient(const Grid& g, const Tensor& u);
/// Spectral divergence: v (..., d, n...) -> (..., n...), the sum of d/dx_i v_i.
Tensor divergence(const Grid& g, const Tensor& v);
/// Spectral Laplacian: multiplies the spectrum by -|k|^2 (Nyquist modes kept).
Tensor laplacian(const Grid& g, const Tensor& u);
/// The zero-mean solution u of laplacian(u) = f - mean(f) (spectrum divided by -|k|^2, k = 0 set to 0).
Tensor inverse_laplacian(const Grid& g, const Tensor& f);
/// Applies the 2/3-rule mask (Grid::dealias_mask) to a half spectrum (..., spectral_sizes()).
Tensor dealias(const Grid& g, const Tensor& u_hat);

}  // namespace phasor::pde
