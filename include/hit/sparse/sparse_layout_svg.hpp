#pragma once
// A picture of a sparse layout on a 2-D mesh (hit-layout --svg, hit-cg and hit-heat --svg): every
// vertex drawn at its grid position, coloured by its owner, so a layout by row number of a
// permuted grid shows as noise and a graph partition as compact regions.

#include <span>
#include <string>
#include <utility>

#include "hit/shape.hpp"
#include "hit/sparse/sparse_layout.hpp"

namespace hit {

// `positions[v]`: the (x, y) grid point of vertex v, for every vertex of the layout (as
// hit::grid_positions gives for a generated 2-D grid). A grid wider than 256 points is drawn by
// sampling: each cell shows the owner of one vertex of its block. The legend gives every
// process's rows and ghosts when the layout was measured. Error(invalid_argument) when the
// positions are not one per row of the layout.
[[nodiscard]] std::string sparse_layout_svg(const SparseLayout& layout,
                                            std::span<const std::pair<index_t, index_t>> positions,
                                            const std::string& title);

}  // namespace hit
