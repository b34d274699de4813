#pragma once
// Internal: who a process exchanges data with in the plans of hit/comm.hpp, from the layouts
// alone (no MPI). The builders (src/comm/), hit/comm/comm_traffic.hpp and hence
// hit-layout's dry run and bench/plans all call these, so the benchmark measures the real code.
// Not part of the API.

#include <vector>

#include "hit/layout.hpp"
#include "hit/shape.hpp"

namespace hit::detail {

// The blocks of `rank` in `layout`; none for a rank past the layout's processes (a run larger
// than the layout).
inline const std::vector<Shape>& blocks_or_none(const Layout& layout, int rank) {
  static const std::vector<Shape> none;
  return rank < layout.procs() ? layout.blocks(rank) : none;
}

// The blocks of every process of one side of a transfer: a layout's, or regions listed per
// process (overlapping ones too).
struct BlocksOf {
  const Layout* layout = nullptr;
  const std::vector<std::vector<Shape>>* lists = nullptr;
  const std::vector<Shape>& operator()(int rank) const {
    static const std::vector<Shape> none;
    if (layout != nullptr) return blocks_or_none(*layout, rank);
    if (lists != nullptr && rank < static_cast<int>(lists->size())) {
      return (*lists)[static_cast<std::size_t>(rank)];
    }
    return none;
  }
  // Appends the processes with a block meeting `region` (ascending for a layout; the lists, one
  // region per process as fetch_regions has them, are scanned).
  void meeting(const Shape& region, std::vector<int>& out) const;
};

// The peers of a redistribution-like plan on one process: the processes whose `to` blocks meet
// `my_from`, and those whose `from` blocks meet `my_to` (itself included when its blocks move
// between its own tiles), ascending, once each. Found with Layout::procs_meeting: O(peers·log P)
// for grid layouts, never a scan of every process's blocks.
std::vector<int> intersection_peers(const std::vector<Shape>& my_from,
                                    const std::vector<Shape>& my_to, const BlocksOf& from,
                                    const BlocksOf& to);

// One face of a halo on one process: along topology (and shape) axis `axis`, towards `dir`
// (-1, +1), the region `send` of its block goes to `peer`, whose data fills the ghost region
// `recv`. Array indices.
struct HaloFace {
  int axis = 0;
  int dir = 0;
  int peer = -1;
  Shape send;
  Shape recv;
};

// The faces halo(layout, tile, width, corners, periodic) builds on `rank` (none when inactive),
// axis by axis, -1 before +1: each neighbour along topology axis k (Layout::neighbor, O(log P))
// gets a slab `width` deep of the block; with `corners` the slab spans the ghost range of the axes
// exchanged before it. Error(shape), on this rank only, when a neighbour's block is not aligned
// with this one or either is narrower than `width` along the axis.
std::vector<HaloFace> halo_faces(const Layout& layout, int rank, index_t width, bool corners,
                                 bool periodic);

// Error(shape) unless the block of `rank` is contiguous (stride 1) on every axis, as a halo
// needs; Error(invalid_argument) for a width below 1.
void require_halo_block(const Layout& layout, int rank, const Shape& block);
void require_halo_width(index_t width);

}  // namespace hit::detail
