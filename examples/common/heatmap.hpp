// examples/common/heatmap.hpp - writes 2-D fields side by side as a colour-mapped PNG image, for the
// 2-D examples. Header-only, no dependencies: the PNG holds stored (uncompressed) deflate blocks.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace heatmap {

/// One image panel: an nx x ny field (row-major, x = first index drawn downwards, y to the right)
/// mapped linearly from [lo, hi] to the colour map (values outside are clamped).
struct Field {
  std::vector<double> values;  ///< nx * ny values, row-major
  std::int64_t nx = 0, ny = 0;  ///< field size
  double lo = 0, hi = 1;       ///< value range of the colour map
  bool diverging = false;      ///< blue-white-red instead of the sequential dark-blue-to-yellow map
};

namespace detail {

inline std::uint32_t crc32(const std::uint8_t* p, std::size_t n, std::uint32_t c = 0xffffffffu) {
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c;
}

inline void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

inline void chunk(std::vector<std::uint8_t>& out, const char* type, const std::vector<std::uint8_t>& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  std::vector<std::uint8_t> body(type, type + 4);
  body.insert(body.end(), data.begin(), data.end());
  out.insert(out.end(), body.begin(), body.end());
  put32(out, crc32(body.data(), body.size()) ^ 0xffffffffu);
}

/// Piecewise-linear colour map over t in [0, 1].
inline std::array<std::uint8_t, 3> colour(double t, bool diverging) {
  static const double seq[5][3] = {{20, 20, 90}, {40, 90, 180}, {40, 170, 150}, {170, 210, 60}, {250, 240, 60}};
  static const double div[5][3] = {{30, 60, 170}, {120, 160, 230}, {250, 250, 250}, {235, 140, 110}, {180, 30, 40}};
  const auto& map = diverging ? div : seq;
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  std::array<std::uint8_t, 3> c{};
  for (int k = 0; k < 3; ++k) c[k] = static_cast<std::uint8_t>(std::lround(map[i][k] * (1 - f) + map[i + 1][k] * f));
  return c;
}

}  // namespace detail

/// Draws the fields left to right, each cell a `scale` x `scale` block, `gap` white pixels between
/// panels, and writes an RGB PNG to `path`. Returns false when the file cannot be written.
inline bool save_png(const std::string& path, const std::vector<Field>& fields, int scale = 8, int gap = 8) {
  std::int64_t width = 0, height = 0;
  for (const auto& f : fields) {
    width += f.ny * scale + (width > 0 ? gap : 0);
    height = std::max<std::int64_t>(height, f.nx * scale);
  }
  if (width <= 0 || height <= 0) return false;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width * height * 3), 255);
  std::int64_t x0 = 0;
  for (const auto& f : fields) {
    const double span = f.hi > f.lo ? f.hi - f.lo : 1.0;
    for (std::int64_t i = 0; i < f.nx; ++i)
      for (std::int64_t j = 0; j < f.ny; ++j) {
        const auto c = detail::colour((f.values[static_cast<std::size_t>(i * f.ny + j)] - f.lo) / span, f.diverging);
        for (std::int64_t a = 0; a < scale; ++a)
          for (std::int64_t b = 0; b < scale; ++b) {
            const std::size_t p = static_cast<std::size_t>(((i * scale + a) * width + x0 + j * scale + b) * 3);
            rgb[p] = c[0], rgb[p + 1] = c[1], rgb[p + 2] = c[2];
          }
      }
    x0 += f.ny * scale + gap;
  }
  // zlib stream of stored blocks over the filtered rows (filter byte 0 before each row)
  std::vector<std::uint8_t> raw;
  for (std::int64_t r = 0; r < height; ++r) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + r * width * 3, rgb.begin() + (r + 1) * width * 3);
  }
  std::vector<std::uint8_t> z{0x78, 0x01};
  std::uint32_t s1 = 1, s2 = 0;
  for (std::uint8_t b : raw) s1 = (s1 + b) % 65521u, s2 = (s2 + s1) % 65521u;
  for (std::size_t off = 0; off < raw.size() || off == 0; off += 65535) {
    const std::size_t n = std::min<std::size_t>(65535, raw.size() - off);
    z.push_back(off + n >= raw.size() ? 1 : 0);
    z.push_back(static_cast<std::uint8_t>(n)), z.push_back(static_cast<std::uint8_t>(n >> 8));
    z.push_back(static_cast<std::uint8_t>(~n)), z.push_back(static_cast<std::uint8_t>((~n) >> 8));
    z.insert(z.end(), raw.begin() + static_cast<std::ptrdiff_t>(off), raw.begin() + static_cast<std::ptrdiff_t>(off + n));
    if (off + n >= raw.size()) break;
  }
  detail::put32(z, (s2 << 16) | s1);
  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  detail::put32(ihdr, static_cast<std::uint32_t>(width));
  detail::put32(ihdr, static_cast<std::uint32_t>(height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter method, no interlace
  detail::chunk(png, "IHDR", ihdr);
  detail::chunk(png, "IDAT", z);
  detail::chunk(png, "IEND", {});
  std::FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) return false;
  const bool ok = std::fwrite(png.data(), 1, png.size(), fp) == png.size();
  return std::fclose(fp) == 0 && ok;
}

/// The field `values` (nx * ny) with the range [lo, hi].
inline Field field(std::vector<double> values, std::int64_t nx, std::int64_t ny, double lo, double hi,
                   bool diverging = false) {
  return Field{std::move(values), nx, ny, lo, hi, diverging};
}

}  // namespace heatmap
