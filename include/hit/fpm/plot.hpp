#pragma once
// Pictures of speed functions (Clarke et al., Fig. 1.1–1.2): each device's speed x / t(x) over
// problem size, its measured points, and — for a distribution — the line through the origin whose
// intersections with the speed graphs are the parts.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit::fpm {

struct PlotOptions {
  std::string title = "Speed functions";
  std::vector<std::string> labels;  // one per model (default "device i")
  int width = 800;
  int height = 500;
};

// An SVG document. With a distribution, the line s = x / makespan and a marker at (d_i, s_i(d_i))
// for every device with work.
std::string speed_plot_svg(std::span<const Model> models, const std::optional<Distribution>& dist,
                           const PlotOptions& options = {});

}  // namespace hit::fpm
