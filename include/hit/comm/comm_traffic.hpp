#pragma once
// What the communication plans of one process would hold, computed from layouts alone: no MPI,
// no tiles, for any process of a layout of any size. hit-layout's dry run (--comm) and the plans
// benchmark (bench/plans) simulate up to 65 536 processes in one this way; the builders of
// hit/comm.hpp find their peers with the same code, so the figures are the real plans'.
//
// Each process's figures cost O(peers · log P) for grid layouts: peers are found by topology
// arithmetic (Layout::neighbor) or Layout::procs_meeting, never by scanning every block.

#include <vector>

#include "hit/comm/comm_options.hpp"
#include "hit/layout.hpp"
#include "hit/shape.hpp"

namespace hit {

// One peer of a process's plan: the elements it sends to `peer` and receives from it per run.
struct PeerTraffic {
  int peer = -1;
  index_t sent = 0;
  index_t received = 0;
  friend bool operator==(const PeerTraffic&, const PeerTraffic&) = default;
};

// The messages of redistribute(from, ..., to, ...) on process `rank`, peers ascending (itself
// among them when its blocks move between its own tiles). Error(shape) for layouts of
// different global shapes, as the builder.
[[nodiscard]] std::vector<PeerTraffic> redistribute_traffic(const Layout& from, const Layout& to,
                                                            int rank);

// The messages of halo(layout, tile, options) on process `rank`, peers ascending (none for an
// inactive process; the options' label plays no part). The errors of the builder where it
// refuses the layout: a strided block, a neighbour's block not aligned with this one, a block
// narrower than the width, a width below 1.
[[nodiscard]] std::vector<PeerTraffic> halo_traffic(const Layout& layout, int rank,
                                                    const HaloOptions& options = {});

// Which sides of a process's traffic face_traffic computes.
enum class FaceSides {
  both,
  // Only what the process receives (`sent` left 0): one search per face of its own blocks. What
  // a process sends is what the others receive from it, so summing these over every process
  // gives every process's sends (hit-layout does) at the least cost.
  received,
};

// hit-layout's estimate of a halo for any layout, multi-block and strided ones included: along
// every shape axis, `rank` receives from another process the elements of that process's blocks
// within `width` positions (of the shape's axis, clamped to it) outside one of its own blocks,
// spanning that block on the other axes (faces, no corners, no wrap-around), and sends what the
// others' faces take of its blocks. Where halo() serves the layout and splits shape axis k over
// topology axis k (blocks, weighted, fpm, blocksLB, dimBlocks:dim=0 ...), equal to halo_traffic
// with corners and periodic false. `width` >= 0 (0: nothing).
[[nodiscard]] std::vector<PeerTraffic> face_traffic(const Layout& layout, int rank,
                                                    index_t width = 1,
                                                    FaceSides sides = FaceSides::both);

// Elements sent to every peer together, times `element_bytes` (checked arithmetic).
index_t bytes_sent(const std::vector<PeerTraffic>& traffic, index_t element_bytes);

}  // namespace hit
