// src/pde/grid_detail.hpp - integer frequencies of a pde::Grid's half spectrum (shared by grid.cpp
// and grf.cpp).
#pragma once
#include <cstdint>

namespace phasor::pde::detail {

/// Integer frequency m of index j along an axis of n points: fftfreq order [0, 1, ..., -(n/2), ..., -1]
/// on a full axis, rfftfreq order [0, 1, ..., n/2] on the halved (last) axis.
inline std::int64_t frequency(std::int64_t j, std::int64_t n, bool halved) {
  if (halved) return j;
  return j <= (n - 1) / 2 ? j : j - n;
}

/// True if the integer frequency m is the Nyquist frequency (|m| = n/2 on an even axis).
inline bool is_nyquist(std::int64_t m, std::int64_t n) { return n % 2 == 0 && (m == n / 2 || m == -n / 2); }

}  // namespace phasor::pde::detail
