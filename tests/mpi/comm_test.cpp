// hit-test-procs: 1 2 3 4
// Communication derived from layouts: every Comm on uneven sizes and with inactive ranks, every
// received element checked against the global index it must hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "hit/comm.hpp"
#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "hit/tile.hpp"
#include "hit/topology.hpp"

namespace {

using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Tile;
using ::testing::HasSubstr;

// A value that identifies a global index of a 2-D (or 1-D) array.
double value_at(const Index& i) {
  double v = 1.0 + static_cast<double>(i[0]) * 1000.0;
  if (i.rank() > 1) v += static_cast<double>(i[1]);
  return v;
}

int rank() {
  return hit::Environment::current().rank();
}

using hit_test::error_of;
int procs() {
  return hit::Environment::current().size();
}

std::vector<Tile<double>> tiles_for(const hit::Layout& layout, int r,
                                    hit::TileOptions options = {}) {
  std::vector<Tile<double>> out;
  if (r >= layout.procs()) return out;
  for (const Shape& b : layout.blocks(r)) out.emplace_back(b, options);
  return out;
}

void fill_from_index(std::vector<Tile<double>>& tiles) {
  for (auto& t : tiles) t.for_each([](const Index& i, double& v) { v = value_at(i); });
}

TEST(Shift, OneDimensionalUnevenWithInactiveRanks) {
  for (index_t n : {index_t{1}, index_t{2}, index_t{7}, index_t{10}}) {
    const auto topo = hit::topology("array");
    const auto lay = hit::layout("blocks", topo, Shape::extents({n}));
    hit::TileOptions padded;
    padded.max_shape = lay.max_extents();
    const Shape mine = lay.block(rank());
    Tile<double> tile =
        (mine.is_null() || mine.empty()) ? Tile<double>() : Tile<double>(mine, padded);
    if (!tile.is_null()) tile.for_each([](const Index& i, double& v) { v = value_at(i); });
    for (int offset : {1, -1, 2}) {
      if (!tile.is_null()) {
        tile.padded().fill(0.0);
        tile.for_each([](const Index& i, double& v) { v = value_at(i); });
      }
      hit::shift(lay, tile, 0, offset).run();
      if (tile.is_null()) continue;
      // I now hold the block of the active process `offset` places back (cyclically).
      const int actives = lay.active_extent(0);
      const int source = ((rank() - offset) % actives + actives) % actives;
      const Shape theirs = lay.block(source);
      const std::vector<double> got = tile.padded().to_vector();
      for (index_t p = 0; p < static_cast<index_t>(got.size()); ++p) {
        const double want = p < theirs.size() ? value_at(Index{theirs[0].begin() + p}) : 0.0;
        EXPECT_EQ(got[static_cast<std::size_t>(p)], want)
            << "n=" << n << " offset=" << offset << " position " << p;
      }
    }
  }
}

TEST(Shift, TwoDimensionalPaddedBlocksTravelWhole) {
  const auto topo = hit::topology("mesh2d");
  const Shape shape = Shape::extents({7, 5});
  const auto lay = hit::layout("blocks", topo, shape);
  hit::TileOptions padded;
  padded.max_shape = lay.max_extents();
  const Shape mine = lay.block(rank());
  Tile<double> tile =
      (mine.is_null() || mine.empty()) ? Tile<double>() : Tile<double>(mine, padded);
  if (!tile.is_null()) tile.for_each([](const Index& i, double& v) { v = value_at(i); });
  hit::Comm c = hit::shift(lay, tile, 1, 1);
  c.start();
  c.wait();
  if (tile.is_null()) return;
  const auto source = lay.neighbor(rank(), 1, -1, true);
  if (!source) {
    ADD_FAILURE() << "no source";
    return;
  }
  const Shape theirs = lay.block(*source);
  // The source's block occupies the leading positions of my padded buffer, row-major by its
  // extents.
  const Tile<double> buffer = tile.padded();
  for (index_t r = 0; r < theirs.extent(0); ++r) {
    for (index_t q = 0; q < theirs.extent(1); ++q) {
      EXPECT_EQ(buffer.data()[r * buffer.step(0) + q],
                value_at(Index{theirs[0].begin() + r, theirs[1].begin() + q}));
    }
  }
  if (*source != rank()) {
    EXPECT_GT(c.bytes_sent(), 0u);
  }
}

void check_halo(bool corners, bool periodic, const Shape& shape) {
  const auto topo = hit::topology("mesh2d");
  const auto lay = hit::layout("blocks", topo, shape);
  hit::TileOptions ghosts;
  ghosts.ghost = 1;
  const Shape mine = lay.block(rank());
  Tile<double> tile =
      (mine.is_null() || mine.empty()) ? Tile<double>() : Tile<double>(mine, ghosts);
  if (!tile.is_null()) {
    tile.with_ghosts().fill(-1.0);
    tile.for_each([](const Index& i, double& v) { v = value_at(i); });
  }
  hit::halo(lay, tile, {.width = 1, .corners = corners, .periodic = periodic}).run();
  if (tile.is_null()) return;
  const index_t rows = shape.extent(0);
  const index_t cols = shape.extent(1);
  Tile<double> g = tile.with_ghosts();
  g.for_each([&](const Index& i, double& v) {
    const bool in_row = i[0] >= mine[0].begin() && i[0] < mine[0].end();
    const bool in_col = i[1] >= mine[1].begin() && i[1] < mine[1].end();
    if (in_row && in_col) return;  // interior: untouched
    const bool is_corner = !in_row && !in_col;
    // Which neighbour would provide it, along each axis.
    index_t gi = i[0];
    index_t gj = i[1];
    bool exists = true;
    if (periodic) {
      // Wrap only across the ends of the active grid (the topology's edges).
      gi = (gi + rows) % rows;
      gj = (gj + cols) % cols;
    } else {
      exists = gi >= 0 && gi < rows && gj >= 0 && gj < cols;
    }
    const bool along_distributed = true;
    (void)along_distributed;
    double want = -1.0;
    if (exists && (!is_corner || corners)) want = value_at(Index{gi, gj});
    // A neighbour along an axis exists only if another process holds data there; on an axis with
    // one active process and no wrap the ghost stays untouched.
    if (!periodic) {
      if (!in_row && !lay.neighbor(rank(), 0, i[0] < mine[0].begin() ? -1 : 1, false)) want = -1.0;
      if (!in_col && !lay.neighbor(rank(), 1, i[1] < mine[1].begin() ? -1 : 1, false)) want = -1.0;
    }
    EXPECT_EQ(v, want) << "ghost " << i << " of block " << mine << " corners=" << corners
                       << " periodic=" << periodic;
  });
}

TEST(Halo, FacesOnly) {
  check_halo(false, false, Shape::extents({9, 7}));
}
TEST(Halo, WithCorners) {
  check_halo(true, false, Shape::extents({9, 7}));
}
TEST(Halo, PeriodicWithCorners) {
  check_halo(true, true, Shape::extents({8, 6}));
}

TEST(Halo, NeedsGhostBorders) {
  const auto topo = hit::topology("mesh2d");
  const auto lay = hit::layout("blocks", topo, Shape::extents({8, 8}));
  Tile<double> tile(lay.block(rank()));
  try {
    (void)hit::halo(lay, tile, {.width = 1});
    FAIL() << "expected an error";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("ghost borders of at least 1"));
  }
}

TEST(Bcast, AlongEachAxisFromEachRoot) {
  const auto topo = hit::topology("mesh2d");
  const auto lay = hit::layout("blocks", topo, Shape::extents({6, 6}));
  hit::TileOptions padded;
  padded.max_shape = lay.max_extents();
  for (int axis = 0; axis < 2; ++axis) {
    for (int root = 0; root < lay.active_extent(axis); ++root) {
      Tile<double> tile(lay.block(rank()), padded);
      tile.padded().fill(100.0 + rank());
      hit::bcast(lay, tile, axis, root).run();
      Index c = topo.coords(rank());
      c[axis] = root;
      const double want = 100.0 + topo.proc_at(c);
      for (double x : tile.padded().to_vector())
        EXPECT_EQ(x, want) << "axis " << axis << " root " << root;
    }
  }
}

std::vector<std::string> layouts_for(int p, int rank_of_shape) {
  std::string w = "weighted:w=";
  for (int i = 0; i < p; ++i) w += (i ? "," : "") + std::to_string(i + 1);
  std::vector<std::string> out = {"blocks", "cyclic", "blockCyclic:b=2", w, "blocksLB:factor=0.7"};
  out.push_back("dimBlocks:dim=" + std::to_string(rank_of_shape - 1));
  return out;
}

void check_redistribute(const Shape& shape, const std::string& topo_spec) {
  const auto topo = hit::topology(topo_spec);
  for (const std::string& from_spec : layouts_for(procs(), shape.rank())) {
    for (const std::string& to_spec : layouts_for(procs(), shape.rank())) {
      const auto from = hit::layout(from_spec, topo, shape);
      const auto to = hit::layout(to_spec, topo, shape);
      auto a = tiles_for(from, rank());
      auto b = tiles_for(to, rank());
      fill_from_index(a);
      for (auto& t : b) t.fill(-7.0);
      hit::redistribute(from, a, to, b).run();
      for (auto& t : b) {
        t.for_each([&](const Index& i, double& v) {
          EXPECT_EQ(v, value_at(i)) << from_spec << " -> " << to_spec << " at " << i;
        });
      }
    }
  }
}

TEST(Redistribute, EveryPairOfLayouts1D) {
  check_redistribute(Shape::extents({23}), "array");
}
TEST(Redistribute, EveryPairOfLayouts2D) {
  check_redistribute(Shape::extents({9, 7}), "mesh2d");
}
TEST(Redistribute, FewerElementsThanProcesses) {
  check_redistribute(Shape::extents({2}), "array");
}

TEST(Redistribute, DifferentGlobalShapesIsAnError) {
  const auto topo = hit::topology("array");
  const auto a = hit::layout("blocks", topo, Shape::extents({10}));
  const auto b = hit::layout("blocks", topo, Shape::extents({11}));
  auto ta = tiles_for(a, rank());
  auto tb = tiles_for(b, rank());
  try {
    (void)hit::redistribute(a, ta, b, tb);
    FAIL() << "expected an error";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("different global shapes"));
    EXPECT_THAT(e.what(), HasSubstr("[0:10]"));
  }
}

TEST(Redistribute, WrongTileOnOneRankFailsOnEveryRank) {
  const auto topo = hit::topology("array");
  const auto lay = hit::layout("blocks", topo, Shape::extents({12}));
  auto a = tiles_for(lay, rank());
  auto b = tiles_for(lay, rank());
  if (rank() == procs() - 1) b[0] = Tile<double>(Shape::extents({1}));
  EXPECT_THROW((void)hit::redistribute(lay, a, lay, b), hit::Error);
}

// fetch_regions: every process asks for a region of an array laid out in unequal rectangles
// (columns2d) or grid blocks, the regions overlapping each other (as SUMMA's panels do) and one
// process asking for nothing; every received element is checked, and nothing outside the region
// is written. Reused: a second run gets the same data again.
TEST(FetchRegions, OverlappingRegionsFromIrregularRectangles) {
  const Shape shape = Shape::extents({23, 17});
  for (const std::string spec : {"columns2d:w=1,2.5,0.7,4", "columns2d", "blocks"}) {
    if (spec == "columns2d:w=1,2.5,0.7,4" && procs() != 4) continue;
    const hit::Layout layout = hit::layout(spec, hit::topology("mesh2d"), shape);
    Tile<double> mine = Tile<double>::of(layout);
    mine.for_each([](const Index& i, double& v) { v = value_at(i); });
    std::vector<Shape> wanted(static_cast<std::size_t>(procs()));
    for (int r = 0; r < procs(); ++r) {
      if (r == 1) continue;  // asks for nothing
      // Rows r..r+12 of a band of columns, overlapping the neighbours' bands.
      wanted[static_cast<std::size_t>(r)] =
          Shape{hit::Sig(r, r + 12), hit::Sig(2 * r, std::min<index_t>(2 * r + 9, 17))};
    }
    const Shape& want = wanted[static_cast<std::size_t>(rank())];
    // A buffer larger than the region, relabelled to start where the region starts.
    Tile<double> into;
    if (!want.is_null()) {
      into = Tile<double>(Shape::extents({14, 11}))
                 .relabel(Shape{hit::Sig(want[0].begin() - 1, want[0].begin() + 13),
                                hit::Sig(want[1].begin() - 1, want[1].begin() + 10)});
    }
    hit::Comm fetch = hit::fetch_regions(layout, mine, wanted, into);
    for (int run = 0; run < 2; ++run) {
      if (!into.is_null()) into.fill(-1.0);
      fetch.run();
      if (into.is_null()) continue;
      into.for_each([&](const Index& i, const double& v) {
        const bool inside = want.contains(i);
        EXPECT_EQ(v, inside ? value_at(i) : -1.0)
            << spec << " rank " << rank() << " run " << run << " at " << i.str();
      });
    }
  }
}

TEST(FetchRegions, RegionOutsideTheArrayOrTheBufferFailsOnEveryRank) {
  const Shape shape = Shape::extents({8, 8});
  const hit::Layout layout = hit::layout("blocks", hit::topology("mesh2d"), shape);
  Tile<double> mine = Tile<double>::of(layout);
  std::vector<Shape> wanted(static_cast<std::size_t>(procs()));
  wanted.back() = Shape::extents({9, 2});
  Tile<double> into(Shape::extents({9, 2}));
  EXPECT_THAT(error_of([&] { (void)hit::fetch_regions(layout, mine, wanted, into); }),
              HasSubstr("wants [0:9][0:2], outside the array [0:8][0:8]"));
  wanted.back() = Shape::extents({4, 4});
  Tile<double> small(Shape::extents({2, 2}));
  EXPECT_THAT(error_of([&] { (void)hit::fetch_regions(layout, mine, wanted, small); }),
              HasSubstr("wants [0:4][0:4] into a tile of shape"));
}

// fetch, the global view of fetch_regions: each process names only the region it wants; the plan
// moves what fetch_regions with everyone's list moves, and the data arrives (from one block per
// process, and from several: blockCyclic).
TEST(Fetch, EachProcessNamesItsOwnRegion) {
  const Shape shape = Shape::extents({23, 17});
  for (const std::string spec : {"blocks", "blockCyclic:b=3"}) {
    const hit::Layout layout = hit::layout(spec, hit::topology("array"), shape);
    std::vector<Tile<double>> mine;
    for (const Shape& b : layout.local().blocks) mine.emplace_back(b);
    for (Tile<double>& t : mine) t.for_each([](const Index& i, double& v) { v = value_at(i); });
    const auto region = [](int r) {
      return r == 1 ? Shape()
                    : Shape{hit::Sig(r, r + 12), hit::Sig(2 * r, std::min<index_t>(2 * r + 9, 17))};
    };
    std::vector<Shape> wanted;
    for (int r = 0; r < procs(); ++r) wanted.push_back(region(r));
    const Shape want = region(rank());
    Tile<double> into = want.is_null() ? Tile<double>() : Tile<double>(want);
    hit::Comm global = hit::fetch(layout, mine, want, into, {.label = "mine"});
    const hit::Comm listed = hit::fetch_regions(layout, mine, wanted, into);
    EXPECT_EQ(global.name(), "mine");
    EXPECT_EQ(global.bytes_sent(), listed.bytes_sent()) << spec;
    EXPECT_EQ(global.bytes_received(), listed.bytes_received()) << spec;
    global.run();
    if (into.is_null()) continue;
    into.for_each([&](const Index& i, const double& v) {
      EXPECT_EQ(v, value_at(i)) << spec << " rank " << rank() << " at " << i.str();
    });
  }
}

TEST(GatherScatter, RoundTripThroughRoot) {
  const auto topo = hit::topology("mesh2d");
  const Shape shape = Shape::extents({5, 9});
  for (const std::string spec : {"blocks", "cyclic", "blockCyclic:b=2"}) {
    const auto lay = hit::layout(spec, topo, shape);
    const int root = procs() - 1;
    auto parts = tiles_for(lay, rank());
    fill_from_index(parts);
    Tile<double> whole = rank() == root ? Tile<double>(shape) : Tile<double>();
    hit::gather(lay, parts, root, whole).run();
    if (rank() == root) {
      whole.for_each([&](const Index& i, double& v) { EXPECT_EQ(v, value_at(i)) << spec; });
      whole.for_each([](const Index& i, double& v) { v = -value_at(i); });
    }
    for (auto& t : parts) t.fill(0.0);
    hit::scatter(lay, parts, root, whole).run();
    for (auto& t : parts) {
      t.for_each([&](const Index& i, double& v) { EXPECT_EQ(v, -value_at(i)) << spec; });
    }
  }
}

TEST(Reduce, TilesAndScalars) {
  Tile<double> t(Shape::extents({3, 4}));
  t.for_each([](const Index& i, double& v) { v = value_at(i) + rank(); });
  hit::allreduce(t, hit::ReduceOp::sum);
  const double ranks_sum = procs() * (procs() - 1) / 2.0;
  t.for_each([&](const Index& i, double& v) { EXPECT_EQ(v, procs() * value_at(i) + ranks_sum); });
  EXPECT_EQ(hit::allreduce(rank(), hit::ReduceOp::max), procs() - 1);
  EXPECT_EQ(hit::allreduce(static_cast<long>(rank() + 1), hit::ReduceOp::prod) > 0, true);
  // A strided view reduces only its own elements.
  Tile<double> u(Shape::extents({4, 4}));
  u.fill(1.0);
  Tile<double> every_other = u.select(Shape::parse("[0:4:2][0:4]"));
  hit::allreduce(every_other, hit::ReduceOp::sum);
  EXPECT_EQ(u(0, 0), procs());
  EXPECT_EQ(u(1, 0), 1.0);
}

TEST(Reduce, ScalarsAndSpansThatDifferByRank) {
  const int p = procs();
  const int r = rank();
  // Sum of 1..p; the rank order decides min and max, and a negative value the sign handling.
  EXPECT_EQ(hit::allreduce(r + 1, hit::ReduceOp::sum), p * (p + 1) / 2);
  EXPECT_DOUBLE_EQ(hit::allreduce(-0.5 * r, hit::ReduceOp::min), -0.5 * (p - 1));
  EXPECT_EQ(hit::allreduce(std::int64_t{r} << 40, hit::ReduceOp::max), std::int64_t{p - 1} << 40);
  // Element-wise over a span: each element reduced on its own.
  float values[3] = {static_cast<float>(r), static_cast<float>(p - r), 1.0F};
  hit::allreduce(std::span<float>(values), hit::ReduceOp::max);
  EXPECT_EQ(values[0], static_cast<float>(p - 1));
  EXPECT_EQ(values[1], static_cast<float>(p));
  EXPECT_EQ(values[2], 1.0F);
}

TEST(Pattern, ReusedAcrossIterations) {
  const auto topo = hit::topology("array");
  const auto lay = hit::layout("blocks", topo, Shape::extents({4 * procs()}));
  hit::TileOptions padded;
  padded.max_shape = lay.max_extents();
  Tile<double> t(lay.block(rank()), padded);
  t.for_each([](const Index& i, double& v) { v = value_at(i); });
  hit::Pattern p;
  p.add(hit::shift(lay, t, 0, 1));
  for (int it = 0; it < procs(); ++it) p.run();
  // After P shifts of one place every block is home again.
  t.for_each([](const Index& i, double& v) { EXPECT_EQ(v, value_at(i)); });
}

}  // namespace
