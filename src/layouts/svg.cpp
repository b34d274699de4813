#include "hit/layouts/layout_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "layouts/rank_colour.hpp"

namespace hit {

namespace {

// Most part boundaries one axis draws exactly; past that the axis is sampled.
constexpr std::size_t max_cuts = 240;
constexpr int max_legend = 40;

std::string colour(int rank) {
  return detail::rank_colour(rank);
}

// Positions (0..n) where some block starts or ends along `axis`; sampled evenly when too many.
std::vector<index_t> cuts_of(const Layout& layout, int axis, bool& sampled) {
  const Sig& g = layout.shape()[axis];
  const index_t n = g.size();
  std::set<index_t> cuts = {0, n};
  bool too_many = false;
  for (int p = 0; p < layout.procs() && !too_many; ++p) {
    for (const Shape& b : layout.blocks(p)) {
      const Sig& s = b[axis];
      const index_t first = g.to_tile(s.begin());
      const index_t step = s.size() > 1 ? s.stride() / g.stride() : 1;
      if (step == 1) {
        cuts.insert(first);
        cuts.insert(first + s.size());
      } else {
        for (index_t j = 0; j < s.size() && cuts.size() <= max_cuts; ++j) {
          cuts.insert(first + j * step);
          cuts.insert(first + j * step + 1);
        }
      }
      if (cuts.size() > max_cuts) {
        too_many = true;
        break;
      }
    }
  }
  if (!too_many) return {cuts.begin(), cuts.end()};
  sampled = true;
  const index_t width = (n + static_cast<index_t>(max_cuts) - 1) / static_cast<index_t>(max_cuts);
  std::vector<index_t> even;
  for (index_t x = 0; x < n; x += width) even.push_back(x);
  even.push_back(n);
  return even;
}

// Where everything goes: the cuts drawn along each axis, the cell size, the grid and the legend.
struct Canvas {
  int row_axis = -1;  // -1: a 1-D shape, drawn as one row
  int col_axis = 0;
  index_t rows = 1;
  index_t cols = 0;
  std::vector<index_t> row_cuts;
  std::vector<index_t> col_cuts;
  bool sampled = false;
  double cw = 0, ch = 0;  // cell width and height
  double grid_w = 0, grid_h = 0;
  double ox = 78, oy = 106;  // the grid's top left corner
  double legend_x = 0;
  double width = 0, height = 0;
};

Canvas plan(const Layout& layout) {
  const Shape& shape = layout.shape();
  Canvas c;
  const int rank = shape.rank();
  c.row_axis = rank >= 2 ? 0 : -1;
  c.col_axis = rank >= 2 ? 1 : 0;
  c.rows = c.row_axis >= 0 ? shape.extent(c.row_axis) : 1;
  c.cols = shape.extent(c.col_axis);
  c.row_cuts =
      c.row_axis >= 0 ? cuts_of(layout, c.row_axis, c.sampled) : std::vector<index_t>{0, 1};
  c.col_cuts = cuts_of(layout, c.col_axis, c.sampled);

  // Cells as square as the space allows, never thinner than a readable strip.
  const double area_w = 720, area_h = 560;
  const double square = std::min(
      {48.0, area_w / std::max<index_t>(c.cols, 1), area_h / std::max<index_t>(c.rows, 1)});
  c.cw = std::max(square, std::min(48.0, 240.0 / std::max<index_t>(c.cols, 1)));
  c.ch = std::max(square, std::min(48.0, 160.0 / std::max<index_t>(c.rows, 1)));
  c.grid_w = c.cw * static_cast<double>(c.cols);
  c.grid_h = c.ch * static_cast<double>(c.rows);
  c.legend_x = c.ox + std::max(c.grid_w, 120.0) + 36;
  const int legend_rows =
      std::min(layout.procs(), max_legend) + (layout.procs() > max_legend ? 1 : 0);
  c.width = c.legend_x + 340;
  c.height = std::max(c.oy + c.grid_h + 56, c.oy + 24 + 20.0 * legend_rows + 20);
  return c;
}

// The document's opening, the background, the title and the lines under it.
void draw_title(std::string& out, const Layout& layout, const Canvas& c, const std::string& note) {
  const Shape& shape = layout.shape();
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Helvetica, Arial, "
      "sans-serif\">\n",
      c.width, c.height);
  out += fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", c.width,
                     c.height);
  out += fmt::format("<text x=\"16\" y=\"28\" font-size=\"17\" font-weight=\"bold\">{}</text>\n",
                     xml_escape(fmt::format("layout {} of {}", layout.spec(), shape.str())));
  std::string sub = fmt::format("on {}", layout.topology().str());
  for (int k = 2; k < shape.rank(); ++k) {
    sub += fmt::format("; slice axis {} = {}", k, shape[k].begin());
  }
  if (c.sampled) sub += "; too many parts to draw each: sampled";
  out += fmt::format("<text x=\"16\" y=\"48\" font-size=\"13\" fill=\"#444\">{}</text>\n",
                     xml_escape(sub));
  if (!note.empty()) {
    out += fmt::format("<text x=\"16\" y=\"66\" font-size=\"12\" fill=\"#666\">{}</text>\n",
                       xml_escape(note));
  }
}

// The array index at each part boundary along one axis (when they fit).
void draw_ticks(std::string& out, const Canvas& c, const std::vector<index_t>& cuts, const Sig& sig,
                bool horizontal, double cell) {
  if (cuts.size() > 17) return;
  double last = -1e9;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double at = static_cast<double>(cuts[i]) * cell;
    if (at - last < 30) continue;
    last = at;
    const index_t index = sig.to_array(cuts[i]);
    if (horizontal) {
      out +=
          fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#666\">{}</text>\n",
                      c.ox + at + 1, c.oy - 6, index);
    } else {
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#666\" "
          "text-anchor=\"end\">{}</text>\n",
          c.ox - 6, c.oy + at + 11, index);
    }
  }
}

// Axis names and the array index at each part boundary.
void draw_axes(std::string& out, const Layout& layout, const Canvas& c) {
  const Shape& shape = layout.shape();
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" fill=\"#444\">axis {} &#8594;</text>\n",
      c.ox, c.oy - 22, c.col_axis);
  if (c.row_axis >= 0) {
    out += fmt::format(
        "<text x=\"{0:.1f}\" y=\"{1:.1f}\" font-size=\"12\" fill=\"#444\" "
        "transform=\"rotate(-90 {0:.1f} {1:.1f})\" text-anchor=\"end\">axis 0 &#8594;</text>\n",
        c.ox - 46, c.oy);
  }
  draw_ticks(out, c, c.col_cuts, shape[c.col_axis], true, c.cw);
  if (c.row_axis >= 0) draw_ticks(out, c, c.row_cuts, shape[c.row_axis], false, c.ch);
}

// The parts: one rectangle per run of equal owners along a row band, rank labels on those large
// enough (drawn after every rectangle, so none hides one), the frame and the size caption.
void draw_parts(std::string& out, const Layout& layout, const Canvas& c) {
  const Shape& shape = layout.shape();
  std::string labels;
  if (shape.empty()) {
    out +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\">the shape is empty</text>\n",
                    c.ox, c.oy + 20);
  } else {
    Index at = shape.first();
    const bool lines = c.cw >= 4 && c.ch >= 4;
    for (std::size_t i = 0; i + 1 < c.row_cuts.size(); ++i) {
      if (c.row_axis >= 0) at[c.row_axis] = shape[c.row_axis].to_array(c.row_cuts[i]);
      std::size_t j = 0;
      while (j + 1 < c.col_cuts.size()) {
        at[c.col_axis] = shape[c.col_axis].to_array(c.col_cuts[j]);
        const int owner = layout.owner(at);
        std::size_t k = j + 1;
        while (k + 1 < c.col_cuts.size()) {
          at[c.col_axis] = shape[c.col_axis].to_array(c.col_cuts[k]);
          if (layout.owner(at) != owner) break;
          ++k;
        }
        const double x = c.ox + static_cast<double>(c.col_cuts[j]) * c.cw;
        const double y = c.oy + static_cast<double>(c.row_cuts[i]) * c.ch;
        const double w = static_cast<double>(c.col_cuts[k] - c.col_cuts[j]) * c.cw;
        const double h = static_cast<double>(c.row_cuts[i + 1] - c.row_cuts[i]) * c.ch;
        out += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"{}/>\n",
            x, y, w, h, colour(owner), lines ? " stroke=\"#ffffff\" stroke-width=\"1\"" : "");
        const std::string text = std::to_string(owner);
        const double size = std::min(15.0, h * 0.6);
        if (size >= 8 && w >= size * 0.65 * static_cast<double>(text.size()) + 4) {
          labels += fmt::format(
              "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:.0f}\" text-anchor=\"middle\" "
              "dominant-baseline=\"central\" fill=\"#111\" stroke=\"#fff\" stroke-width=\"3\" "
              "paint-order=\"stroke\">{}</text>\n",
              x + w / 2, y + h / 2, size, text);
        }
        j = k;
      }
    }
  }
  out += labels;
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#333\" stroke-width=\"1\"/>\n",
      c.ox, c.oy, c.grid_w, c.grid_h);
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#666\">{} x {} positions</text>\n",
      c.ox, c.oy + c.grid_h + 18, c.rows, c.cols);
}

// Legend: every rank (the first ones when there are many).
void draw_legend(std::string& out, const Layout& layout, const Canvas& c,
                 const std::vector<DeviceBinding>& devices) {
  const Topology& topo = layout.topology();
  const double legend_x = c.legend_x;
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\" font-weight=\"bold\">rank (coords){}: "
      "elements</text>\n",
      legend_x, c.oy - 6, devices.empty() ? "" : " device");
  for (int p = 0; p < std::min(layout.procs(), max_legend); ++p) {
    const double y = c.oy + 20.0 * p;
    const Index coord = topo.coords(p);
    std::string coords = coord.rank() > 0 ? coord.str() : "(outside the grid)";
    if (static_cast<std::size_t>(p) < devices.size()) {
      coords += " " + devices[static_cast<std::size_t>(p)].str();
    }
    if (layout.active(p)) {
      out +=
          fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n",
                      legend_x, y, colour(p));
      std::string text = fmt::format("{} {}: {}", p, coords, layout.elements(p));
      if (layout.blocks(p).size() > 1)
        text += fmt::format(" in {} blocks", layout.blocks(p).size());
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">{}</text>\n",
                         legend_x + 20, y + 11.5, xml_escape(text));
    } else {
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"14\" fill=\"#ffffff\" "
          "stroke=\"#999\" stroke-dasharray=\"3,2\"/>\n",
          legend_x, y);
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" fill=\"#888\">{} {}: inactive</text>\n",
          legend_x + 20, y + 11.5, p, xml_escape(coords));
    }
  }
  if (layout.procs() > max_legend) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" fill=\"#666\">... and {} more "
        "ranks</text>\n",
        legend_x, c.oy + 20.0 * max_legend + 11.5, layout.procs() - max_legend);
  }
}

}  // namespace

std::string layout_svg(const Layout& layout, const std::string& note,
                       const std::vector<DeviceBinding>& given) {
  const std::vector<DeviceBinding>& devices = given.empty() ? layout.devices() : given;
  const Canvas canvas = plan(layout);
  std::string out;
  draw_title(out, layout, canvas, note);
  draw_axes(out, layout, canvas);
  draw_parts(out, layout, canvas);
  draw_legend(out, layout, canvas, devices);
  out += "</svg>\n";
  return out;
}

}  // namespace hit
