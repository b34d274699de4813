// hit-test-procs: 1 2 3 4
// The plans built under MPI move what hit/comm/comm_traffic.hpp computes from the layouts alone:
// Comm::bytes_sent() and bytes_received() of real halos and redistributions equal the figures of
// halo_traffic, face_traffic (hit-layout --comm halo) and redistribute_traffic on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hit/comm.hpp"
#include "hit/comm/comm_traffic.hpp"
#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "hit/tile.hpp"
#include "hit/topology.hpp"

namespace {

using hit::index_t;
using hit::Shape;
using hit::Tile;

int rank() {
  return hit::Environment::current().rank();
}
int procs() {
  return hit::Environment::current().size();
}

std::size_t received(const std::vector<hit::PeerTraffic>& traffic) {
  std::size_t n = 0;
  for (const auto& t : traffic) n += static_cast<std::size_t>(t.received) * sizeof(double);
  return n;
}

// Grid layouts halo() serves, over the run's processes: uneven blocks, a process without data.
std::vector<hit::Layout> grids() {
  const Shape shape = Shape::extents({13, 11});
  std::vector<hit::Layout> out = {hit::layout("blocks", hit::topology("mesh2d"), shape),
                                  hit::layout("blocks", hit::topology("array"), shape),
                                  hit::layout("dimBlocks", hit::topology("mesh2d"), shape)};
  if (procs() == 4) {
    out.push_back(hit::layout("dimBlocks:w=1,0,2,1", hit::topology("array"), shape));
    out.push_back(hit::layout("weighted:w=3,1", hit::topology("mesh2d"), shape));
  }
  return out;
}

TEST(PlanTraffic, HaloSendsWhatTheDryRunPredicts) {
  for (const hit::Layout& lay : grids()) {
    for (const index_t width : {1, 2}) {
      for (const bool corners : {false, true}) {
        for (const bool periodic : {false, true}) {
          SCOPED_TRACE(lay.spec() + " on " + lay.topology().str() + " width " +
                       std::to_string(width) + (corners ? " corners" : "") +
                       (periodic ? " periodic" : ""));
          Tile<double> tile = Tile<double>::of(lay, {.ghost = width});
          const hit::Comm halo =
              hit::halo(lay, tile, {.width = width, .corners = corners, .periodic = periodic});
          const auto traffic = hit::halo_traffic(
              lay, rank(), {.width = width, .corners = corners, .periodic = periodic});
          EXPECT_EQ(halo.bytes_sent(), static_cast<std::size_t>(hit::bytes_sent(traffic, 8)));
          EXPECT_EQ(halo.bytes_received(), received(traffic));
          if (!corners && !periodic) {
            // hit-layout --comm halo:width=W, computed geometrically for any layout.
            EXPECT_EQ(halo.bytes_sent(), static_cast<std::size_t>(hit::bytes_sent(
                                             hit::face_traffic(lay, rank(), width), 8)));
          }
        }
      }
    }
  }
}

TEST(PlanTraffic, RedistributeMovesWhatItsTrafficSays) {
  const Shape shape = Shape::extents({9, 7});
  const std::vector<std::string> specs = {"blocks", "cyclic", "blockCyclic:b=2", "dimBlocks:dim=1",
                                          "columns2d"};
  for (const std::string& a : specs) {
    for (const std::string& b : specs) {
      SCOPED_TRACE(a + " -> " + b);
      const hit::Layout from = hit::layout(a, hit::topology("mesh2d"), shape);
      const hit::Layout to = hit::layout(b, hit::topology("array"), shape);
      std::vector<Tile<double>> ta;
      std::vector<Tile<double>> tb;
      for (const Shape& s : from.blocks(rank())) ta.emplace_back(s);
      for (const Shape& s : to.blocks(rank())) tb.emplace_back(s);
      const hit::Comm c = hit::redistribute(from, ta, to, tb);
      const auto traffic = hit::redistribute_traffic(from, to, rank());
      EXPECT_EQ(c.bytes_sent(), static_cast<std::size_t>(hit::bytes_sent(traffic, 8)));
      EXPECT_EQ(c.bytes_received(), received(traffic));
    }
  }
}

}  // namespace
