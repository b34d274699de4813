#pragma once
// A picture of a layout (hit-layout --svg, the examples' --svg), the 2-D domain (or the first two
// axes) coloured by owner.

#include <string>
#include <vector>

#include "hit/layout.hpp"
#include "hit/topology/device_binding.hpp"

namespace hit {

// The SVG document: the domain in position (tile) coordinates, one colour per rank, rank labels on
// the parts large enough to hold one, index labels at the part boundaries, and a legend with every
// rank's coordinates and element count. A 1-D shape is drawn as one row; for 3 or more axes the
// slice at the first index of the axes past the second is drawn. `note` goes under the title;
// `devices` (empty: the layout's own devices(), else one per process) are named in the legend.
[[nodiscard]] std::string layout_svg(const Layout& layout, const std::string& note,
                                     const std::vector<DeviceBinding>& devices = {});

}  // namespace hit
