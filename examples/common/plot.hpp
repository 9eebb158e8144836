// examples/common/plot.hpp - a tiny line-plot renderer that writes PNG files, for the examples.
// No dependencies: the PNG is written with stored (uncompressed) deflate blocks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace plot {

/// An RGB colour.
struct Color {
  std::uint8_t r, g, b;
};

/// One curve of a panel: x and y values (same length), a colour and a legend label.
struct Series {
  std::vector<double> x, y;
  Color color;
  std::string label;
  bool dashed = false;  ///< drawn with gaps
};

/// One plot area: title, axis labels, curves; log_y plots log10(y) (y must be positive).
struct Panel {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  bool log_y = false;
};

/// Renders the panels side by side (each width x height pixels) and writes an RGB PNG to `path`.
/// Returns false (and writes nothing) when the file cannot be written.
bool save_png(const std::string& path, const std::vector<Panel>& panels, int width = 520, int height = 380);

}  // namespace plot
