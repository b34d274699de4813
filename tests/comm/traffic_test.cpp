// The plans of one process computed from layouts alone (hit/comm/comm_traffic.hpp), and the peer
// finding under them (Layout::procs_meeting), against brute force: every block of every process
// tested, as the builders and hit-layout did before they searched. Uneven blocks, inactive
// processes, strided and multi-block layouts, grids of different shapes and sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../layouts/layout_checks.hpp"
#include "hit/comm/comm_traffic.hpp"
#include "hit/layout.hpp"
#include "hit/topology.hpp"
#include "hit/topology/device_binding.hpp"

namespace {

using hit::index_t;
using hit::Layout;
using hit::PeerTraffic;
using hit::Shape;

// A layout for a plan of another run (no devices of this one: every process weighs the same).
Layout make(const std::string& spec, const std::string& topo, int procs, const std::string& shape) {
  return hit::layout(spec, hit::topology(topo, procs), Shape::parse(shape),
                     {.devices = std::vector<hit::DeviceBinding>(static_cast<std::size_t>(procs))});
}

// Layouts of [0:13][0:11] (and of a strided shape) over up to 9 processes: grids of several
// shapes with uneven blocks, processes outside the grid or without data, and layouts that are
// not grids (rows, columns of rectangles, nodes then devices, strided and multi-block ones).
std::vector<Layout> layouts_2d() {
  const std::string s = "[0:13][0:11]";
  return {
      make("blocks", "mesh2d", 6, s),
      make("blocks", "mesh:dims=3x2", 7, s),  // rank 6 outside the grid
      make("blocks", "mesh:dims=2x3", 6, s),
      make("blocks", "mesh:dims=1x4", 4, s),
      make("blocks", "array", 5, s),
      make("blocks", "mesh2d", 9, "[0:2][0:11]"),  // more process rows than array rows
      make("weighted:w=3,1,2", "mesh:dims=3x2", 6, s),
      make("blocksLB:factor=0.3", "mesh2d", 4, s),
      make("dimBlocks:dim=0", "mesh2d", 4, s),
      make("dimBlocks:dim=1", "array", 3, s),
      make("dimBlocks:dim=0,w=1,0,2,1", "array", 4, s),  // a process without work
      make("columns2d:w=1,2,3,4,5", "array", 5, s),
      make("hierarchical:nodes=(columns2d),devices=(columns2d:w=1,2),ranks_per_node=2", "array", 4,
           s),
      make("blockCyclic:b=2", "mesh2d", 4, s),
      make("cyclic", "mesh2d", 4, s),
  };
}

std::vector<PeerTraffic> redistribute_by_scan(const Layout& from, const Layout& to, int rank) {
  static const std::vector<Shape> none;
  const auto blocks = [&](const Layout& l, int p) -> const std::vector<Shape>& {
    return p < l.procs() ? l.blocks(p) : none;
  };
  std::vector<PeerTraffic> out;
  for (int peer = 0; peer < std::max(from.procs(), to.procs()); ++peer) {
    PeerTraffic t{peer, 0, 0};
    for (const Shape& a : blocks(from, rank)) {
      for (const Shape& b : blocks(to, peer)) t.sent += a.intersect(b).size();
    }
    for (const Shape& a : blocks(from, peer)) {
      for (const Shape& b : blocks(to, rank)) t.received += a.intersect(b).size();
    }
    if (t.sent > 0 || t.received > 0) out.push_back(t);
  }
  return out;
}

// hit-layout's halo estimate as it was computed before: for every block q of every process, its
// faces along every split axis, matched against every block of every other process.
std::vector<PeerTraffic> faces_by_scan(const Layout& l, int rank, index_t width) {
  const Shape& shape = l.shape();
  std::vector<PeerTraffic> out;
  const auto add = [&](int peer, index_t sent, index_t received) {
    if (sent == 0 && received == 0) return;
    for (auto& t : out) {
      if (t.peer == peer) {
        t.sent += sent;
        t.received += received;
        return;
      }
    }
    out.push_back({peer, sent, received});
  };
  for (int a = 0; a < shape.rank(); ++a) {
    const index_t n = shape.extent(a);
    for (int q = 0; q < l.procs(); ++q) {
      for (const Shape& bq : l.blocks(q)) {
        const index_t first = shape[a].to_tile(bq[a].begin());
        const index_t last = shape[a].to_tile(bq[a].last());
        const std::pair<index_t, index_t> faces[] = {{std::max<index_t>(0, first - width), first},
                                                     {last + 1, std::min(n, last + 1 + width)}};
        for (const auto& [lo, hi] : faces) {
          if (hi <= lo) continue;
          const Shape face = bq.with_sig(a, shape[a].select_tile(lo, hi));
          for (int p = 0; p < l.procs(); ++p) {
            if (p == q || (p != rank && q != rank)) continue;
            index_t n_met = 0;
            for (const Shape& bp : l.blocks(p)) n_met += bp.intersect(face).size();
            if (p == rank) add(q, n_met, 0);
            if (q == rank) add(p, 0, n_met);
          }
        }
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const PeerTraffic& x, const PeerTraffic& y) { return x.peer < y.peer; });
  return out;
}

std::string name(const Layout& l) {
  return l.spec() + " of " + l.shape().str() + " on " + l.topology().str();
}

TEST(ProcsMeeting, NonGridLayoutsAgreeWithAScan) {
  for (const Layout& l : layouts_2d()) {
    SCOPED_TRACE(name(l));
    hit_test::expect_procs_meeting_by_scan(l);
  }
  // Regions of another rank are an error, not a wrong answer.
  const Layout l = make("blocks", "mesh2d", 4, "[0:8][0:8]");
  EXPECT_THROW((void)l.procs_meeting(Shape::parse("[0:8]")), hit::Error);
  EXPECT_TRUE(l.procs_meeting(Shape::parse("[20:30][0:8]")).empty());
  EXPECT_TRUE(l.procs_meeting(Shape::parse("[3:3][0:8]")).empty());
}

TEST(ProcsMeeting, ManyProcessesFindOnlyTheNeighbours) {
  // 4096 processes: a block grown by one meets its own process and its 8 neighbours (fewer at
  // the edges), on the grid and through the box tree of dimBlocks alike.
  const Layout grid = make("blocks", "mesh2d", 4096, "[0:1000][0:1000]");
  const Layout rows = make("dimBlocks:dim=0", "mesh2d", 4096, "[0:8192][0:10]");
  for (const int p : {0, 63, 64 * 31 + 17, 4095}) {
    EXPECT_EQ(grid.procs_meeting(grid.block(p).expand(1)),
              hit_test::procs_meeting_by_scan(grid, grid.block(p).expand(1)));
    EXPECT_EQ(rows.procs_meeting(rows.block(p).expand(1)),
              hit_test::procs_meeting_by_scan(rows, rows.block(p).expand(1)));
  }
  EXPECT_EQ(grid.procs_meeting(grid.block(64 * 31 + 17).expand(1)).size(), 9U);
  EXPECT_EQ(rows.procs_meeting(rows.block(100).expand(1)).size(), 3U);
  EXPECT_EQ(rows.owner(hit::Index{8191, 9}), 4095);
  EXPECT_EQ(rows.owner(hit::Index{2, 0}), 1);
}

TEST(RedistributeTraffic, EveryPairOfLayoutsAgreesWithAScan) {
  const std::vector<Layout> list = layouts_2d();
  int pairs = 0;
  for (const Layout& from : list) {
    for (const Layout& to : list) {
      if (!(from.shape() == to.shape())) continue;
      SCOPED_TRACE(name(from) + " -> " + name(to));
      for (int r = 0; r < std::max(from.procs(), to.procs()) + 1; ++r) {
        EXPECT_EQ(hit::redistribute_traffic(from, to, r), redistribute_by_scan(from, to, r))
            << "rank " << r;
      }
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 14 * 14 + 1);  // every pair of the same shape
  // Strided shapes, and grids of different sizes.
  const Layout a = make("blocks", "mesh2d", 6, "[-5:20:3][1:30:2]");
  const Layout b = make("cyclic", "mesh:dims=2x2", 4, "[-5:20:3][1:30:2]");
  const Layout c = make("blockCyclic:b=3", "array", 3, "[-5:20:3][1:30:2]");
  for (const auto& [x, y] : {std::pair{&a, &b}, {&b, &c}, {&c, &a}, {&a, &c}}) {
    for (int r = 0; r < 7; ++r) {
      EXPECT_EQ(hit::redistribute_traffic(*x, *y, r), redistribute_by_scan(*x, *y, r))
          << name(*x) << " -> " << name(*y) << " rank " << r;
    }
  }
  EXPECT_THROW((void)hit::redistribute_traffic(a, make("blocks", "mesh2d", 6, "[0:10][0:10]"), 0),
               hit::Error);
}

TEST(FaceTraffic, EveryLayoutAgreesWithTheScanOfHitLayout) {
  std::vector<Layout> list = layouts_2d();
  list.push_back(make("cyclic", "array", 3, "[-3:40:3]"));
  list.push_back(make("blocks", "array", 5, "[0:10]"));
  list.push_back(make("blocks", "mesh:dims=2x2", 4, "[0:4][0:3][0:5]"));
  list.push_back(make("blockCyclic:b=2", "array", 2, "[0:10]"));
  for (const Layout& l : list) {
    for (const index_t width : {1, 2, 3}) {
      SCOPED_TRACE(name(l) + " width " + std::to_string(width));
      // What each rank sends, summed from what the others receive (as hit-layout sums it).
      std::vector<index_t> sent(static_cast<std::size_t>(l.procs()), 0);
      std::vector<index_t> sent_by_receivers(sent.size(), 0);
      for (int r = 0; r < l.procs(); ++r) {
        const std::vector<PeerTraffic> both = hit::face_traffic(l, r, width);
        EXPECT_EQ(both, faces_by_scan(l, r, width)) << "rank " << r;
        std::vector<PeerTraffic> received_only;
        for (const PeerTraffic& t : both) {
          sent[static_cast<std::size_t>(r)] += t.sent;
          if (t.received > 0) received_only.push_back({t.peer, 0, t.received});
        }
        const auto received = hit::face_traffic(l, r, width, hit::FaceSides::received);
        EXPECT_EQ(received, received_only) << "rank " << r;
        for (const PeerTraffic& t : received) {
          sent_by_receivers[static_cast<std::size_t>(t.peer)] += t.received;
        }
      }
      EXPECT_EQ(sent_by_receivers, sent);
    }
  }
  EXPECT_TRUE(hit::face_traffic(list.front(), 0, 0).empty());
  EXPECT_THROW((void)hit::face_traffic(list.front(), 0, -1), hit::Error);
}

// Where halo() serves a layout and splits shape axis k over topology axis k, its faces (found
// by topology arithmetic) are the dry run's (found geometrically).
TEST(HaloTraffic, GridLayoutsEqualTheDryRunFaces) {
  const std::vector<Layout> grids = {
      make("blocks", "mesh2d", 6, "[0:13][0:11]"),
      make("blocks", "mesh:dims=3x2", 7, "[0:13][0:11]"),
      make("blocks", "mesh2d", 9, "[0:2][0:11]"),
      make("weighted:w=3,1,2", "mesh:dims=3x2", 6, "[0:13][0:11]"),
      make("blocksLB:factor=0.3", "mesh2d", 4, "[0:13][0:11]"),
      make("dimBlocks:dim=0,w=1,0,2,1", "array", 4, "[0:13][0:11]"),
      make("blocks", "mesh:dims=2x2", 4, "[0:4][0:3][0:5]"),
      make("blocks", "array", 5, "[0:10]"),
      make("blocks", "mesh2d", 4096, "[0:1000][0:1000]"),
  };
  for (const Layout& l : grids) {
    for (const index_t width : {1, 2}) {
      // halo() refuses a block narrower than the width.
      bool fits = true;
      for (int k = 0; k < l.topology().axes(); ++k)
        fits = fits && l.min_extents().extent(k) >= width;
      if (!fits) continue;
      SCOPED_TRACE(name(l) + " width " + std::to_string(width));
      for (int r = 0; r<l.procs(); r += l.procs()> 100 ? 61 : 1) {
        EXPECT_EQ(hit::halo_traffic(l, r, {.width = width}), hit::face_traffic(l, r, width))
            << "rank " << r;
      }
    }
  }
}

TEST(HaloTraffic, CornersAndWrapAndRefusals) {
  const Layout l = make("blocks", "mesh2d", 4, "[0:8][0:6]");  // 2x2 blocks of 4x3
  // Rank 0 with corners: along axis 0 a row of 3 to rank 2; along axis 1 a column of its 4 rows
  // and both ghost rows (filled by then) to rank 1.
  const std::vector<PeerTraffic> corners = hit::halo_traffic(l, 0, {.width = 1, .corners = true});
  EXPECT_EQ(corners, (std::vector<PeerTraffic>{{1, 6, 6}, {2, 3, 3}}));
  // Periodic on a 2x2 grid: both sides of each axis go to the same neighbour.
  const std::vector<PeerTraffic> wrapped = hit::halo_traffic(l, 3, {.width = 1, .periodic = true});
  EXPECT_EQ(wrapped, (std::vector<PeerTraffic>{{1, 6, 6}, {2, 8, 8}}));
  EXPECT_EQ(hit::bytes_sent(wrapped, 8), 112);
  // As the builder: a strided block, a block narrower than the width, a width below 1.
  EXPECT_THROW((void)hit::halo_traffic(make("cyclic", "array", 2, "[0:10]"), 0), hit::Error);
  EXPECT_THROW((void)hit::halo_traffic(l, 0, {.width = 4}), hit::Error);
  EXPECT_THROW((void)hit::halo_traffic(l, 0, {.width = 0}), hit::Error);
  EXPECT_TRUE(hit::halo_traffic(make("blocks", "array", 5, "[0:2]"), 3).empty());  // inactive
}

// Layouts that split a shape axis over another topology axis (or over none): topology
// arithmetic would miss neighbours and leave faces stale, so the halo refuses them, on at least
// one rank, naming the axis. Layouts that match stay served, wrap-around and a single process
// along an axis included.
TEST(HaloTraffic, RefusesLayoutsWhoseNeighboursTheTopologyDoesNotFind) {
  const std::vector<std::pair<std::string, std::string>> unmatched = {
      {"columns2d", "array"}, {"columns2d", "mesh2d"}, {"dimBlocks:dim=1", "array"}};
  for (const auto& [spec, topo] : unmatched) {
    const Layout l = make(spec, topo, 4, "[0:64][0:64]");
    int refused = 0;
    for (int r = 0; r < 4; ++r) {
      try {
        (void)hit::halo_traffic(l, r);
      } catch (const hit::Error& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find("along shape axis"), std::string::npos) << e.what();
      }
    }
    EXPECT_GT(refused, 0) << spec << " on " << topo;
  }
  const Layout line = make("blocks", "mesh:dims=1x4", 4, "[0:8][0:8]");
  for (int r = 0; r < 4; ++r) {
    EXPECT_NO_THROW((void)hit::halo_traffic(line, r, {.width = 1, .periodic = true}));
  }
  EXPECT_NO_THROW((void)hit::halo_traffic(
      make("hierarchical:ranks_per_node=2", "array", 4, "[0:64][0:64]"), 1));
}

}  // namespace
