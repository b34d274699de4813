#include "hit/sparse/sparse_layout_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "layouts/rank_colour.hpp"

namespace hit {

namespace {

constexpr index_t max_cells = 256;  // per axis; larger grids are sampled
constexpr double picture = 512;     // pixels of the grid's longer side
constexpr int max_legend = 40;

}  // namespace

std::string sparse_layout_svg(const SparseLayout& layout,
                              std::span<const std::pair<index_t, index_t>> positions,
                              const std::string& title) {
  require(static_cast<index_t>(positions.size()) == layout.rows(), ErrorKind::invalid_argument,
          fmt::format("a sparse layout picture needs one grid position per row: {} for {} rows",
                      positions.size(), layout.rows()));
  index_t width = 0, height = 0;
  for (const auto& [x, y] : positions) {
    width = std::max(width, x + 1);
    height = std::max(height, y + 1);
  }
  // Cells of `step` x `step` grid points; each shows the owner of the point it was last given.
  const index_t step = std::max<index_t>(1, (std::max(width, height) + max_cells - 1) / max_cells);
  const index_t cw = (width + step - 1) / step, ch = (height + step - 1) / step;
  std::vector<int> cell(static_cast<std::size_t>(cw * ch), -1);
  for (std::size_t v = 0; v < positions.size(); ++v) {
    const auto [x, y] = positions[v];
    cell[static_cast<std::size_t>((y / step) * cw + x / step)] =
        layout.owner(static_cast<index_t>(v));
  }
  const double size = picture / static_cast<double>(std::max<index_t>({cw, ch, 1}));
  const double top = 40, left = 10;
  const double legend_x = left + size * static_cast<double>(cw) + 20;
  const int shown = std::min(layout.procs(), max_legend);
  const double h = std::max(top + size * static_cast<double>(ch), top + 18.0 * (shown + 2)) + 20;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n",
      legend_x + 260, h, left, xml_escape(title));
  for (index_t j = 0; j < ch; ++j) {
    for (index_t i = 0; i < cw; ++i) {
      const int owner = cell[static_cast<std::size_t>(j * cw + i)];
      if (owner < 0) continue;
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
          "fill=\"{}\"/>\n",
          left + size * static_cast<double>(i), top + size * static_cast<double>(j), size + 0.01,
          size + 0.01, detail::rank_colour(owner));
    }
  }
  const auto& stats = layout.stats();
  for (int p = 0; p < shown; ++p) {
    const double y = top + 18.0 * p;
    std::string text = fmt::format("rank {}: {} rows", p, layout.row_count(p));
    if (static_cast<std::size_t>(p) < stats.size()) {
      text += fmt::format(", {} ghosts", stats[static_cast<std::size_t>(p)].ghosts);
    }
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        legend_x, y, detail::rank_colour(p), legend_x + 18, y + 10, text);
  }
  const double y = top + 18.0 * (shown + 1);
  svg += fmt::format("<text x=\"{}\" y=\"{}\">{}edge cut {}{}</text>\n", legend_x, y + 10,
                     layout.procs() > shown ? "… " : "", layout.edge_cut(),
                     step > 1 ? fmt::format(", 1 cell = {}x{} points", step, step) : "");
  svg += "</svg>\n";
  return svg;
}

}  // namespace hit
