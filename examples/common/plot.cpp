// examples/common/plot.cpp - rasterises line plots (axes, ticks, 5x7 bitmap text, legend) and writes
// them as PNG: signature, IHDR, one IDAT holding a zlib stream of stored deflate blocks, IEND.
#include "plot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace plot {
namespace {

// 5x7 glyphs, one byte per row (bit 4 = leftmost column). Lower case draws as upper case.
struct Glyph {
  char c;
  std::uint8_t rows[7];
};
constexpr Glyph kFont[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}}, {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}}, {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}}, {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}}, {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}}, {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}}, {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}}, {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}}, {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
    {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}}, {'/', {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}},
    {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}}, {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F}},
    {'^', {0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00}}, {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
};

const Glyph* glyph(char c) {
  c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& g : kFont)
    if (g.c == c) return &g;
  return nullptr;  // spaces and unknown characters draw nothing
}

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<std::size_t>(w) * h * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }
  const std::vector<std::uint8_t>& pixels() const { return px_; }

  void set(int x, int y, Color c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    std::uint8_t* p = &px_[(static_cast<std::size_t>(y) * w_ + x) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  void rect(int x0, int y0, int x1, int y1, Color c) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) set(x, y, c);
  }
  // A 2-pixel-wide segment by stepping along its longer extent; `dash` leaves gaps of 6 px, with the
  // pattern continuing from `*phase` (pixels already drawn along a polyline) when given.
  void line(double x0, double y0, double x1, double y1, Color c, bool dash = false, int* phase = nullptr) {
    const double len = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
    const int n = std::max(1, static_cast<int>(std::ceil(len)));
    const int start = phase ? *phase : 0;
    if (phase) *phase += n;
    for (int i = 0; i <= n; ++i) {
      if (dash && ((start + i) / 6) % 2 == 1) continue;
      const double t = static_cast<double>(i) / n;
      const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0)));
      const int y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      rect(x, y, x + 1, y + 1, c);
    }
  }
  // Text with its top-left corner at (x, y), `scale` pixels per font pixel, 6 font pixels per character.
  void text(int x, int y, const std::string& s, Color c, int scale = 1) {
    for (char ch : s) {
      if (const Glyph* g = glyph(ch))
        for (int r = 0; r < 7; ++r)
          for (int col = 0; col < 5; ++col)
            if (g->rows[r] & (0x10 >> col)) rect(x + col * scale, y + r * scale, x + col * scale + scale - 1, y + r * scale + scale - 1, c);
      x += 6 * scale;
    }
  }
  static int text_width(const std::string& s, int scale = 1) { return static_cast<int>(s.size()) * 6 * scale; }
  // Vertical text, bottom to top, for the y label.
  void vtext(int x, int y, const std::string& s, Color c) {
    for (char ch : s) {
      if (const Glyph* g = glyph(ch))
        for (int r = 0; r < 7; ++r)
          for (int col = 0; col < 5; ++col)
            if (g->rows[r] & (0x10 >> col)) set(x + r, y - col, c);
      y -= 6;
    }
  }

 private:
  int w_, h_;
  std::vector<std::uint8_t> px_;
};

constexpr Color kBlack{0, 0, 0}, kGrey{225, 225, 225};

std::string fmt(double v) {
  char buf[32];
  if (v != 0 && (std::abs(v) < 1e-3 || std::abs(v) >= 1e4)) std::snprintf(buf, sizeof buf, "%.0e", v);
  else std::snprintf(buf, sizeof buf, "%g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) t.push_back(v);
  return t;
}

void draw_panel(Canvas& cv, int ox, int w, int h, const Panel& p) {
  const int left = ox + 62, right = ox + w - 14, top = 34, bottom = h - 42;
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  auto ty = [&](double y) { return p.log_y ? std::log10(std::max(y, 1e-300)) : y; };
  for (const auto& s : p.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(ty(s.y[i]))) continue;
      xmin = std::min(xmin, s.x[i]), xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, ty(s.y[i])), ymax = std::max(ymax, ty(s.y[i]));
    }
  if (xmin > xmax) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (xmax - xmin < 1e-12) xmax = xmin + 1;
  if (ymax - ymin < 1e-12) ymax = ymin + 1;
  if (p.log_y) ymin = std::floor(ymin), ymax = std::ceil(ymax);
  else {
    const double pad = 0.06 * (ymax - ymin);
    ymin -= pad, ymax += pad;
  }
  auto X = [&](double x) { return left + (x - xmin) / (xmax - xmin) * (right - left); };
  auto Y = [&](double y) { return bottom - (y - ymin) / (ymax - ymin) * (bottom - top); };

  // Grid and tick labels.
  std::vector<double> yt;
  if (p.log_y)
    for (double e = ymin; e <= ymax + 1e-9; e += 1) yt.push_back(e);
  else yt = ticks(ymin, ymax);
  for (double v : yt) {
    const int y = static_cast<int>(std::lround(Y(v)));
    cv.rect(left, y, right, y, kGrey);
    const std::string lab = p.log_y ? "1E" + std::to_string(static_cast<int>(v)) : fmt(v);
    cv.text(left - 6 - Canvas::text_width(lab), y - 3, lab, kBlack);
  }
  for (double v : ticks(xmin, xmax)) {
    const int x = static_cast<int>(std::lround(X(v)));
    cv.rect(x, top, x, bottom, kGrey);
    const std::string lab = fmt(v);
    cv.text(x - Canvas::text_width(lab) / 2, bottom + 6, lab, kBlack);
  }
  // Frame, labels, title.
  cv.rect(left, top, right, top, kBlack), cv.rect(left, bottom, right, bottom, kBlack);
  cv.rect(left, top, left, bottom, kBlack), cv.rect(right, top, right, bottom, kBlack);
  cv.text((left + right - Canvas::text_width(p.title, 2)) / 2, 8, p.title, kBlack, 2);
  cv.text((left + right - Canvas::text_width(p.xlabel)) / 2, h - 16, p.xlabel, kBlack);
  cv.vtext(ox + 6, (top + bottom + Canvas::text_width(p.ylabel)) / 2, p.ylabel, kBlack);

  // Curves, then the legend (top right, inside the frame).
  for (const auto& s : p.series) {
    int phase = 0;
    for (std::size_t i = 1; i < s.x.size() && i < s.y.size(); ++i)
      if (std::isfinite(ty(s.y[i - 1])) && std::isfinite(ty(s.y[i])))
        cv.line(X(s.x[i - 1]), Y(ty(s.y[i - 1])), X(s.x[i]), Y(ty(s.y[i])), s.color, s.dashed, &phase);
  }
  int ly = top + 8;
  for (const auto& s : p.series) {
    if (s.label.empty()) continue;
    const int lx = right - 30 - Canvas::text_width(s.label);
    cv.line(lx, ly + 3, lx + 18, ly + 3, s.color, s.dashed);
    cv.text(lx + 24, ly, s.label, kBlack);
    ly += 12;
  }
}

// ---- PNG ------------------------------------------------------------------------------------------
std::uint32_t crc32(const std::uint8_t* p, std::size_t n, std::uint32_t crc = 0) {
  static std::uint32_t table[256];
  static bool ready = false;
  if (!ready) {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = true;
  }
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

void chunk(std::vector<std::uint8_t>& out, const char* type, const std::vector<std::uint8_t>& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  std::vector<std::uint8_t> body(type, type + 4);
  body.insert(body.end(), data.begin(), data.end());
  out.insert(out.end(), body.begin(), body.end());
  put32(out, crc32(body.data(), body.size()));
}

std::vector<std::uint8_t> encode_png(const Canvas& cv) {
  const int w = cv.width(), h = cv.height();
  std::vector<std::uint8_t> raw;  // filter byte 0, then the row's RGB bytes
  raw.reserve(static_cast<std::size_t>(h) * (w * 3 + 1));
  for (int y = 0; y < h; ++y) {
    raw.push_back(0);
    const auto* row = &cv.pixels()[static_cast<std::size_t>(y) * w * 3];
    raw.insert(raw.end(), row, row + w * 3);
  }
  std::vector<std::uint8_t> z = {0x78, 0x01};  // zlib header: deflate, 32K window, no dictionary
  for (std::size_t pos = 0; pos < raw.size() || pos == 0;) {
    const std::size_t n = std::min<std::size_t>(65535, raw.size() - pos);
    z.push_back(pos + n == raw.size() ? 1 : 0);  // BFINAL on the last block, BTYPE 00 (stored)
    z.push_back(n & 0xFF), z.push_back(n >> 8);
    z.push_back(~n & 0xFF), z.push_back((~n >> 8) & 0xFF);
    z.insert(z.end(), raw.begin() + pos, raw.begin() + pos + n);
    pos += n;
    if (n == 0) break;
  }
  std::uint32_t a = 1, b = 0;  // Adler-32 of the uncompressed data
  for (std::uint8_t c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  put32(z, (b << 16) | a);

  std::vector<std::uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<std::uint8_t> ihdr;
  put32(ihdr, w), put32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, adaptive filtering, no interlace
  chunk(out, "IHDR", ihdr);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", {});
  return out;
}

}  // namespace

bool save_png(const std::string& path, const std::vector<Panel>& panels, int width, int height) {
  Canvas cv(width * static_cast<int>(std::max<std::size_t>(1, panels.size())), height);
  for (std::size_t i = 0; i < panels.size(); ++i) draw_panel(cv, static_cast<int>(i) * width, width, height, panels[i]);
  const auto bytes = encode_png(cv);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace plot
