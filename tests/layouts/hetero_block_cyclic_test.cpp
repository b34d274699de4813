// `heteroBlockCyclic` (Song, Tomov and Dongarra's two-level block-cyclic distribution with hybrid
// tile sizes): every element's owner against a reference written here from the rule in
// docs/layouts.md, the host share of each top-level tile, the balance formula's rounding on
// hand-computed cases, nodes, edge shapes and every error a user can cause.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "layout_checks.hpp"

namespace {

using hit::index_t;
using hit_test::error_of;
using hit_test::expect_valid_layout;
using ::testing::HasSubstr;

std::vector<hit::DeviceBinding> devices(const std::string& text, int procs) {
  return hit::parse_device_spec(text, procs);
}

// The layout over `procs` processes (an array topology) bound to `devs` (one node unless the
// spec gives ranks_per_node: the devices are given, so the run's nodes are not used).
hit::Layout make(const std::string& spec, const std::string& devs, int procs,
                 const hit::Shape& shape) {
  return hit::layout(
      spec, hit::topology("array", procs), shape,
      {.devices = devs.empty() ? std::vector<hit::DeviceBinding>{} : devices(devs, procs)});
}

// The layout made by the plug-in from a request that names the node of every process, as
// hit::layout() does for a run from its physical topology (or HIT_NODES).
hit::Layout make_on_nodes(const std::string& spec, const std::string& devs,
                          const std::vector<int>& nodes, const hit::Shape& shape) {
  const auto procs = static_cast<int>(nodes.size());
  const hit::Spec parsed = hit::Spec::parse(spec);
  const hit::LayoutRequest request{hit::topology("array", procs), shape, parsed,
                                   devices(devs, procs), nodes};
  return hit::Environment::current().extension<hit::LayoutRegistry>().get(parsed).make(request);
}

// One node as the reference sees it: its host and accelerator processes and its host columns.
struct RefNode {
  std::vector<int> hosts;
  std::vector<int> accels;
  index_t bh = 0;
};

// The owner of every element of an rows×cols matrix by the rule of docs/layouts.md, computed
// element by element (not tile by tile, as the plug-in does). `nodes` in node order, laid
// row-major on a grid_rows×grid_cols grid.
std::vector<std::vector<int>> reference_owners(index_t rows, index_t cols, index_t B, index_t b,
                                               const std::vector<RefNode>& nodes, index_t grid_rows,
                                               index_t grid_cols) {
  const index_t tile_rows = (rows + B - 1) / B;
  const index_t tile_cols = (cols + B - 1) / B;
  const auto node_at = [&](index_t I, index_t J) {
    return static_cast<std::size_t>((I % grid_rows) * grid_cols + J % grid_cols);
  };
  const auto host_width = [&](index_t J, const RefNode& n) {
    const index_t width = std::min(B, cols - J * B);
    if (n.accels.empty()) return width;
    return std::min(n.bh, width - width % b);
  };
  // How many thin tiles each node has dealt before tile (I, J), in row-major order of the tiles.
  std::vector<std::vector<index_t>> before(
      static_cast<std::size_t>(tile_rows),
      std::vector<index_t>(static_cast<std::size_t>(tile_cols)));
  std::vector<index_t> dealt(nodes.size(), 0);
  for (index_t I = 0; I < tile_rows; ++I) {
    for (index_t J = 0; J < tile_cols; ++J) {
      const std::size_t n = node_at(I, J);
      before[static_cast<std::size_t>(I)][static_cast<std::size_t>(J)] = dealt[n];
      dealt[n] += (host_width(J, nodes[n]) + b - 1) / b;
    }
  }
  std::vector<std::vector<int>> owner(static_cast<std::size_t>(rows),
                                      std::vector<int>(static_cast<std::size_t>(cols), -1));
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < cols; ++j) {
      const index_t I = i / B, J = j / B, x = j % B;
      const RefNode& n = nodes[node_at(I, J)];
      int who = 0;
      if (x < host_width(J, n)) {
        const index_t counter =
            before[static_cast<std::size_t>(I)][static_cast<std::size_t>(J)] + x / b;
        who = n.hosts[static_cast<std::size_t>(counter % static_cast<index_t>(n.hosts.size()))];
      } else {
        const index_t k = J / grid_cols;  // the node's k-th tile column
        who = n.accels[static_cast<std::size_t>(k % static_cast<index_t>(n.accels.size()))];
      }
      owner[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = who;
    }
  }
  return owner;
}

// Every element's owner() equals the reference's, and the layout passes the common checks
// (every element owned exactly once, owner() agreeing with the blocks, procs_meeting, ...).
void expect_matches_reference(const hit::Layout& l, index_t B, index_t b,
                              const std::vector<RefNode>& nodes, index_t grid_rows,
                              index_t grid_cols) {
  SCOPED_TRACE(l.spec());
  expect_valid_layout(l, l.spec());
  const index_t rows = l.shape().extent(0), cols = l.shape().extent(1);
  const auto want = reference_owners(rows, cols, B, b, nodes, grid_rows, grid_cols);
  int wrong = 0;
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < cols; ++j) {
      const int expected = want[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      if (l.owner(hit::Index{i, j}) != expected && wrong++ < 5) {
        ADD_FAILURE() << "element (" << i << ", " << j << "): owner " << l.owner(hit::Index{i, j})
                      << ", expected " << expected;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  // Each block is one level-2 tile within one top-level tile row: at most B high, inside one
  // top-level tile, and either at most b wide (thin) or an accelerator's (wide).
  for (int p = 0; p < l.procs(); ++p) {
    for (const hit::Shape& blk : l.blocks(p)) {
      EXPECT_EQ(blk[0].begin() / B, (blk[0].end() - 1) / B) << blk << " crosses a tile row";
      EXPECT_EQ(blk[1].begin() / B, (blk[1].end() - 1) / B) << blk << " crosses a tile column";
    }
  }
}

// The columns of top-level tile (I, J) held by host processes, read from owner() on the tile's
// first and last rows (which must agree).
index_t host_columns(const hit::Layout& l, index_t I, index_t J, index_t B,
                     const std::vector<int>& hosts) {
  const index_t rows = l.shape().extent(0), cols = l.shape().extent(1);
  index_t count = 0;
  for (index_t j = J * B; j < std::min(cols, (J + 1) * B); ++j) {
    const int top = l.owner(hit::Index{I * B, j});
    const int bottom = l.owner(hit::Index{std::min(rows, (I + 1) * B) - 1, j});
    EXPECT_EQ(top, bottom) << "column " << j << " of tile (" << I << ", " << J << ")";
    if (std::find(hosts.begin(), hosts.end(), top) != hosts.end()) {
      // The host columns are the tile's first ones.
      EXPECT_EQ(j, J * B + count) << "host column " << j << " after an accelerator's";
      ++count;
    }
  }
  return count;
}

// The balance formula, as docs/layouts.md states it, for the hand-computed cases below: nearest
// multiple of g, ties up, within [0, B] (multiples of g), then [g, B - g] when B >= 2g.
index_t rule_bh(double host, double accel, index_t B, index_t g) {
  const double exact = host / (host + accel) * static_cast<double>(B) / static_cast<double>(g);
  index_t m = static_cast<index_t>(exact);
  if (exact - static_cast<double>(m) >= 0.5 - 1e-12) ++m;
  m = std::min(m, B / g);
  if (B >= 2 * g) m = std::max<index_t>(1, std::min(m, B / g - 1));
  return m * g;
}

// ---- one node --------------------------------------------------------------------------------

// An accelerator 4 times as fast as a core, three cores (an emulated device is never faster than
// a core, so the speeds are given). Speeds 4 : 1+1+1, so the hosts' share is 3/7 of 256 = 109.7
// columns, 1.71 tiles of 64: bh = 128.
// The spec as a value: a layout made from a Spec and one made from its text are the same, and
// spec_value() holds what made it, the host share the plug-in chose included, so a program changes
// one parameter and lays the shape out again without formatting or parsing text.
TEST(HeteroBlockCyclic, SpecValueHoldsWhatMadeTheLayout) {
  const hit::Shape shape = hit::Shape::extents({1000, 1000});
  const hit::LayoutOptions on{.devices = devices("emu:0,cpu*3", 4)};
  const hit::Spec asked = hit::Spec("heteroBlockCyclic")
                              .with("B", 256)
                              .with("b", 64)
                              .with("w", std::vector<double>{4, 1, 1, 1});
  const hit::Layout l = hit::layout(asked, hit::topology("array", 4), shape, on);
  EXPECT_EQ(l, hit::layout(asked.str(), hit::topology("array", 4), shape, on));
  EXPECT_EQ(l.spec_value().str(), "heteroBlockCyclic:B=256,b=64,w=4,1,1,1,bh=128");
  EXPECT_EQ(l.spec_value().get_int("bh", 0), 128);
  const hit::Layout wider = hit::layout(l.spec_value().with("bh", 192), l.topology(), shape, on);
  EXPECT_EQ(wider.spec(), "heteroBlockCyclic:B=256,b=64,w=4,1,1,1,bh=192");
  EXPECT_EQ(wider.spec_value().get_int("bh", 0), 192);
  EXPECT_NE(wider, l);
  // What the plug-in was given unchanged is kept as given (no text in between).
  const hit::Spec blocks("blocks");
  EXPECT_EQ(hit::layout(blocks, hit::topology("array", 4), shape).spec_value().str(), "blocks");
}

TEST(HeteroBlockCyclic, OneNodeHostShareIsBhInEveryFullColumn) {
  const hit::Shape shape = hit::Shape::extents({1000, 1000});
  const std::string devs = "emu:0,cpu*3";
  const hit::Layout l = make("heteroBlockCyclic:B=256,b=64,w=4,1,1,1", devs, 4, shape);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=256,b=64,w=4,1,1,1,bh=128");
  EXPECT_EQ(rule_bh(3, 4, 256, 64), 128);
  for (index_t I = 0; I < 4; ++I) {
    for (index_t J = 0; J < 3; ++J) EXPECT_EQ(host_columns(l, I, J, 256, {1, 2, 3}), 128);
    // The last tile column is 232 wide: the host keeps min(128, 192) = 128.
    EXPECT_EQ(host_columns(l, I, 3, 256, {1, 2, 3}), 128);
  }
  // The accelerator holds every wide tile: (3·128 + 104) columns of every row; the 32 thin tiles
  // are dealt 0,1,2,0,... row by row: 11, 11 and 10 tiles (the last tile row is 232 high).
  EXPECT_EQ(l.elements(0), 488 * 1000);
  EXPECT_EQ(l.elements(1), (8 * 256 + 3 * 232) * 64);
  EXPECT_EQ(l.elements(2), (8 * 256 + 3 * 232) * 64);
  EXPECT_EQ(l.elements(3), (8 * 256 + 2 * 232) * 64);
  EXPECT_EQ(l.blocks(0).size(), 16u);  // one wide tile per top-level tile
  EXPECT_EQ(l.blocks(1).size(), 11u);
  // The recorded bh parses back to the same layout.
  EXPECT_EQ(make(l.spec(), devs, 4, shape), l);
}

TEST(HeteroBlockCyclic, MatchesTheReferenceOnOneNode) {
  // 2 accelerators, 3 hosts, bh given; 230 columns are 5 tile columns (the last 38 wide), so the
  // wide tiles go 3 to one accelerator, 2 to the other; 150 rows: the last tile row is 6 high.
  const std::string devs = "cpu,cuda:0,cpu,emu:0(slowdown=2),cpu";
  const hit::Layout l =
      make("heteroBlockCyclic:B=48,b=16,bh=32", devs, 5, hit::Shape::extents({150, 230}));
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=48,b=16,bh=32");
  expect_matches_reference(l, 48, 16, {{{0, 2, 4}, {1, 3}, 32}}, 1, 1);
  // The last tile column, 38 wide: the host keeps min(32, 32) = 32, the accelerator 6.
  EXPECT_EQ(host_columns(l, 0, 4, 48, {0, 2, 4}), 32);
  // Accelerator 1 (rank 1) has the wide tiles of columns 0, 2, 4; rank 3 those of 1 and 3.
  EXPECT_EQ(l.elements(1), 150 * (16 + 16 + 6));
  EXPECT_EQ(l.elements(3), 150 * (16 + 16));
}

TEST(HeteroBlockCyclic, ComputedBhMatchesTheReference) {
  // Speeds from the bindings: 1/slowdown 2 and 1/4 for the accelerators, 1 per core: hosts 2,
  // accelerators 0.75: 2/2.75 · 64 = 46.5 columns, 2.9 tiles of 16: bh = 48.
  const std::string devs = "emu:0(slowdown=2),cpu,emu:1(slowdown=4),cpu";
  const hit::Layout l =
      make("heteroBlockCyclic:B=64,b=16", devs, 4, hit::Shape::extents({130, 200}));
  EXPECT_EQ(rule_bh(2, 0.75, 64, 16), 48);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=64,b=16,bh=48");
  expect_matches_reference(l, 64, 16, {{{1, 3}, {0, 2}, 48}}, 1, 1);
  // A device 4x slower than each of three cores: 3/3.25 of 256 = 236.3 columns, 3.69 tiles of 64
  // -> 4 = B, lowered to B - g so that the device takes part: 192.
  EXPECT_EQ(rule_bh(3, 0.25, 256, 64), 192);
  EXPECT_EQ(make("heteroBlockCyclic:B=256,b=64", "emu:0(slowdown=4),cpu*3", 4,
                 hit::Shape::extents({300, 300}))
                .spec(),
            "heteroBlockCyclic:B=256,b=64,bh=192");
}

// Several processes bound to one device share its speed, and each is dealt tiles on its own.
TEST(HeteroBlockCyclic, ProcessesSharingADevice) {
  const hit::Shape shape = hit::Shape::extents({96, 480});
  // emu:0 (speed 1/2) shared by ranks 0 and 1; cpu:0 and cpu:1: hosts 2, accelerators 0.5:
  // 0.8 · 96 = 76.8 columns, 4.8 tiles of 16 -> 5, then at most B - g = 80: bh = 80.
  const std::string shared = "emu:0(slowdown=2)*2,cpu:0,cpu:1";
  const hit::Layout l = make("heteroBlockCyclic:B=96,b=16", shared, 4, shape);
  EXPECT_EQ(rule_bh(2, 0.5, 96, 16), 80);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=96,b=16,bh=80");
  expect_matches_reference(l, 96, 16, {{{2, 3}, {0, 1}, 80}}, 1, 1);
  // Five tile columns: ranks 0 and 1 hold the wide tiles of columns 0, 2, 4 and 1, 3.
  EXPECT_EQ(l.elements(0), 3 * 96 * 16);
  EXPECT_EQ(l.elements(1), 2 * 96 * 16);
  // Two devices of the same speed each: hosts 2, accelerators 1: 2/3 · 96 = 64.
  const hit::Layout own = make("heteroBlockCyclic:B=96,b=16",
                               "emu:0(slowdown=2),emu:1(slowdown=2),cpu:0,cpu:1", 4, shape);
  EXPECT_EQ(own.spec(), "heteroBlockCyclic:B=96,b=16,bh=64");
  // Four processes on one core: 1/4 each, so the hosts weigh 1 against cuda:0's 1: bh = 48.
  const hit::Layout cores = make("heteroBlockCyclic:B=96,b=16", "cuda:0,cpu:0*4", 5, shape);
  EXPECT_EQ(rule_bh(1, 1, 96, 16), 48);
  EXPECT_EQ(cores.spec(), "heteroBlockCyclic:B=96,b=16,bh=48");
  expect_matches_reference(cores, 96, 16, {{{1, 2, 3, 4}, {0}, 48}}, 1, 1);
}

// ---- the balance formula's rounding, hand-computed ----------------------------------------------

TEST(HeteroBlockCyclic, BalanceFormulaRounding) {
  const hit::Shape shape = hit::Shape::extents({256, 256});
  const std::string devs = "emu:0,cpu*3";
  const auto bh = [&](const std::string& params) {
    const hit::Layout l = make("heteroBlockCyclic:" + params, devs, 4, shape);
    const std::string spec = l.spec();
    const auto at = spec.find("bh=");
    return at == std::string::npos ? std::string("(none)") : spec.substr(at + 3);
  };
  // w=5,1,1,1: hosts 3 of 8: 96 columns, exactly 1.5 tiles of 64: the tie goes up, to 128.
  EXPECT_EQ(bh("B=256,b=64,w=5,1,1,1"), "128");
  EXPECT_EQ(rule_bh(3, 5, 256, 64), 128);
  // w=1,1,1,1: 192 columns, 3 tiles: 192.
  EXPECT_EQ(bh("B=256,b=64,w=1,1,1,1"), "192");
  // w=100,1,1,1: 7.5 columns round to 0 tiles, raised to g = 64 so the hosts take part.
  EXPECT_EQ(bh("B=256,b=64,w=100,1,1,1"), "64");
  EXPECT_EQ(rule_bh(3, 100, 256, 64), 64);
  // w=1,10,10,10: 247.7 columns round to 4 tiles = B, lowered to B - g = 192.
  EXPECT_EQ(bh("B=256,b=64,w=1,10,10,10"), "192");
  EXPECT_EQ(rule_bh(30, 1, 256, 64), 192);
  // g=128: 192 columns are 1.5 units of 128, up to 2, then at most B - g: 128.
  EXPECT_EQ(bh("B=256,b=64,g=128,w=1,1,1,1"), "128");
  EXPECT_EQ(rule_bh(3, 1, 256, 128), 128);
  // g=32 (b=32): 3/7 of 256 = 109.7 columns, 3.43 units: 96.
  EXPECT_EQ(bh("B=256,b=32,g=32,w=4,1,1,1"), "96");
  EXPECT_EQ(rule_bh(3, 4, 256, 32), 96);
  // B < 2g: no clamp to [g, B - g]: 3/13 of 100 = 23 columns, 0.38 of 60: 0 (hosts get nothing).
  EXPECT_EQ(bh("B=100,b=60,w=10,1,1,1"), "0");
  EXPECT_EQ(rule_bh(3, 10, 100, 60), 0);
  // ... and 75 columns are 1.25 units of 60: 60.
  EXPECT_EQ(bh("B=100,b=60,w=1,1,1,1"), "60");
  // B not a multiple of g: 75 columns are 2.5 units of 30, up to 3; at most B - g = 70, whose
  // largest multiple of 30 is 60.
  EXPECT_EQ(bh("B=100,b=30,w=1,1,1,1"), "60");
  EXPECT_EQ(rule_bh(3, 1, 100, 30), 60);
  // A given bh wins over the weights, and is not rewritten.
  EXPECT_EQ(bh("B=256,b=64,w=1,1,1,1,bh=64"), "64");
  EXPECT_EQ(make("heteroBlockCyclic:B=256,b=64,w=1,1,1,1,bh=64", devs, 4, shape).spec(),
            "heteroBlockCyclic:B=256,b=64,w=1,1,1,1,bh=64");
}

TEST(HeteroBlockCyclic, BhZeroAndBhB) {
  const hit::Shape shape = hit::Shape::extents({64, 192});
  // bh=0: the hosts hold nothing, each top-level tile is one wide tile.
  const hit::Layout none = make("heteroBlockCyclic:B=64,b=16,bh=0", "cuda,cpu*2", 3, shape);
  EXPECT_FALSE(none.active(1));
  EXPECT_FALSE(none.active(2));
  expect_matches_reference(none, 64, 16, {{{1, 2}, {0}, 0}}, 1, 1);
  // bh=B: the accelerators hold nothing.
  const hit::Layout all = make("heteroBlockCyclic:B=64,b=16,bh=64", "cuda,cpu*2", 3, shape);
  EXPECT_FALSE(all.active(0));
  expect_matches_reference(all, 64, 16, {{{1, 2}, {0}, 64}}, 1, 1);
}

// ---- one kind of process only ------------------------------------------------------------------

TEST(HeteroBlockCyclic, NoAcceleratorsAllHost) {
  // B=50 is not a multiple of b=16: an all-host tile is 16, 16, 16 and 2 wide.
  const hit::Shape shape = hit::Shape::extents({120, 130});
  const hit::Layout l = make("heteroBlockCyclic:B=50,b=16", "cpu*3", 3, shape);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=50,b=16") << "nothing was computed";
  expect_matches_reference(l, 50, 16, {{{0, 1, 2}, {}, 50}}, 1, 1);
  for (int p = 0; p < 3; ++p) {
    for (const hit::Shape& blk : l.blocks(p)) EXPECT_LE(blk.extent(1), 16) << blk;
  }
  // Devices unknown: every process is a host, as with cpu devices; bh= given is not used.
  const hit::Layout unknown = make("heteroBlockCyclic:B=50,b=16,bh=16", "", 3, shape);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(unknown.blocks(p), l.blocks(p));
}

TEST(HeteroBlockCyclic, NoHostProcessesAllAccelerators) {
  // Two accelerators, three tile columns: columns 0 and 2 to rank 0, column 1 to rank 1, each
  // tile whole; bh given is not used.
  const hit::Shape shape = hit::Shape::extents({100, 70});
  const hit::Layout l =
      make("heteroBlockCyclic:B=32,b=8,bh=16", "emu:0(slowdown=2),cuda:0", 2, shape);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=32,b=8,bh=16");
  expect_matches_reference(l, 32, 8, {{{}, {0, 1}, 0}}, 1, 1);
  EXPECT_EQ(l.elements(0), 100 * (32 + 6));
  EXPECT_EQ(l.elements(1), 100 * 32);
  EXPECT_EQ(l.blocks(0).size(), 8u);  // 4 tile rows x 2 tile columns
  EXPECT_EQ(make("heteroBlockCyclic:B=32,b=8", "emu*2", 2, shape).spec(),
            "heteroBlockCyclic:B=32,b=8");
}

// ---- shapes that are not multiples of B ---------------------------------------------------------

TEST(HeteroBlockCyclic, NarrowLastTile) {
  // 2·256 + 100 columns with bh=192: the last tile (100 wide) leaves the host
  // min(192, 64) = 64 columns (whole thin tiles only) and the accelerator 36.
  const hit::Shape shape = hit::Shape::extents({300, 612});
  const hit::Layout l = make("heteroBlockCyclic:B=256,b=64,bh=192", "cuda:0,cpu*3", 4, shape);
  for (index_t I = 0; I < 2; ++I) {
    EXPECT_EQ(host_columns(l, I, 0, 256, {1, 2, 3}), 192);
    EXPECT_EQ(host_columns(l, I, 2, 256, {1, 2, 3}), 64);
  }
  EXPECT_EQ(l.elements(0), 300 * (64 + 64 + 36));
  // A last tile narrower than b: all of it to the accelerator.
  const hit::Layout thin = make("heteroBlockCyclic:B=256,b=64,bh=192", "cuda:0,cpu*3", 4,
                                hit::Shape::extents({300, 300}));
  EXPECT_EQ(host_columns(thin, 0, 1, 256, {1, 2, 3}), 0);
  EXPECT_EQ(thin.elements(0), 300 * (64 + 44));
}

TEST(HeteroBlockCyclic, MatrixSmallerThanATile) {
  // n < B: one top-level tile 100 wide: the host keeps min(128, 64) = 64 columns.
  const std::string devs = "cuda:0,cpu*3";
  const hit::Layout l =
      make("heteroBlockCyclic:B=256,b=64,w=4,1,1,1", devs, 4, hit::Shape::extents({100, 100}));
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=256,b=64,w=4,1,1,1,bh=128");
  expect_matches_reference(l, 256, 64, {{{1, 2, 3}, {0}, 128}}, 1, 1);
  EXPECT_EQ(l.elements(0), 100 * 36);
  EXPECT_EQ(l.elements(1), 100 * 64);
  EXPECT_FALSE(l.active(2));
  // Narrower than b: the accelerator takes it all.
  const hit::Layout tiny =
      make("heteroBlockCyclic:B=256,b=64,w=4,1,1,1", devs, 4, hit::Shape::extents({40, 40}));
  EXPECT_EQ(tiny.elements(0), 1600);
  // Non-square, strided, with a third axis kept whole.
  const hit::Layout odd = make("heteroBlockCyclic:B=8,b=2,bh=4", "cpu,emu", 2,
                               hit::Shape::parse("[0:20:2][-5:14][0:3]"));
  expect_valid_layout(odd, odd.spec());
  EXPECT_EQ(odd.blocks(0).front(), hit::Shape::parse("[0:16:2][-5:-3][0:3]"));
  EXPECT_EQ(odd.blocks(1).front(), hit::Shape::parse("[0:16:2][-1:3][0:3]"));
  // An empty shape: nobody holds anything.
  const hit::Layout empty =
      make("heteroBlockCyclic:B=8,b=2", "cpu,emu", 2, hit::Shape::extents({0, 10}));
  EXPECT_EQ(empty.active_count(), 0);
}

// ---- nodes -------------------------------------------------------------------------------------

TEST(HeteroBlockCyclic, TwoNodesDealTileRowsBlockCyclically) {
  // Two nodes make a 2x1 grid (as MPI_Dims_create): tile row I on node I mod 2, every tile
  // column on both. Each node: an emulated device 2x slower than a core, and a core: hosts 1,
  // accelerators 0.5: 2/3 of 32 = 21.3 columns, 2.67 tiles of 8: bh = 24.
  const std::string devs = "emu:0(slowdown=2),cpu,emu:0(slowdown=2),cpu";
  const hit::Shape shape = hit::Shape::extents({100, 90});
  const hit::Layout l = make("heteroBlockCyclic:B=32,b=8,ranks_per_node=2", devs, 4, shape);
  EXPECT_EQ(rule_bh(1, 0.5, 32, 8), 24);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=32,b=8,ranks_per_node=2,bh=24");
  expect_matches_reference(l, 32, 8, {{{1}, {0}, 24}, {{3}, {2}, 24}}, 2, 1);
  // The nodes of a run (as the physical topology gives them), in the order of their first rank.
  const hit::Layout run = make_on_nodes("heteroBlockCyclic:B=32,b=8", devs, {7, 7, 3, 3}, shape);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(run.blocks(p), l.blocks(p));
  // emu:0 of node 0 and emu:0 of node 1 are two devices: nobody shares (bh stays 24).
  EXPECT_EQ(run.spec(), "heteroBlockCyclic:B=32,b=8,bh=24");
}

TEST(HeteroBlockCyclic, FourNodesOnATwoByTwoGrid) {
  // Nodes of two processes (node 2: two hosts; node 3: two accelerators); tile (I, J) on node
  // (I mod 2)·2 + J mod 2. bh=16 for the mixed nodes 0 and 1.
  const std::string devs = "cpu,cuda,emu,cpu,cpu,cpu,cuda:0,cuda:1";
  const hit::Shape shape = hit::Shape::extents({150, 170});
  const hit::Layout l = make("heteroBlockCyclic:B=32,b=8,bh=16,ranks_per_node=2", devs, 8, shape);
  expect_matches_reference(
      l, 32, 8, {{{0}, {1}, 16}, {{3}, {2}, 16}, {{4, 5}, {}, 32}, {{}, {6, 7}, 0}}, 2, 2);
  // Three nodes: 3x1.
  const hit::Layout three = make("heteroBlockCyclic:B=32,b=8,bh=8,ranks_per_node=2",
                                 "cpu,cuda,cpu,cuda,cpu,cuda", 6, shape);
  expect_matches_reference(three, 32, 8, {{{0}, {1}, 8}, {{2}, {3}, 8}, {{4}, {5}, 8}}, 3, 1);
}

TEST(HeteroBlockCyclic, NodesWithDifferentMixesRecordOneBhEach) {
  const hit::Shape shape = hit::Shape::extents({128, 256});
  // Node 0: a device 4x slower than its core: 1/1.25 of 64 = 51.2 columns, 3.2 tiles of 16 -> 3:
  // 48. Node 1: cuda and a core, 1 : 1: 32.
  const std::string devs = "emu:0(slowdown=4),cpu,cuda:0,cpu";
  const hit::Layout l = make("heteroBlockCyclic:B=64,b=16,ranks_per_node=2", devs, 4, shape);
  EXPECT_EQ(rule_bh(1, 0.25, 64, 16), 48);
  EXPECT_EQ(rule_bh(1, 1, 64, 16), 32);
  EXPECT_EQ(l.spec(), "heteroBlockCyclic:B=64,b=16,ranks_per_node=2,bh=48,32");
  expect_matches_reference(l, 64, 16, {{{1}, {0}, 48}, {{3}, {2}, 32}}, 2, 1);
  EXPECT_EQ(make(l.spec(), devs, 4, shape), l);
  // A node of cores only does not count: the mixed node's value alone.
  const hit::Layout one = make("heteroBlockCyclic:B=64,b=16,ranks_per_node=2",
                               "emu:0(slowdown=4),cpu,cpu,cpu", 4, shape);
  EXPECT_EQ(one.spec(), "heteroBlockCyclic:B=64,b=16,ranks_per_node=2,bh=48");
  // ... unless the mixed nodes differ: then its entry is B (ignored).
  const hit::Layout three = make("heteroBlockCyclic:B=64,b=16,ranks_per_node=2",
                                 "emu:0(slowdown=4),cpu,cpu,cpu,cuda:0,cpu", 6, shape);
  EXPECT_EQ(three.spec(), "heteroBlockCyclic:B=64,b=16,ranks_per_node=2,bh=48,64,32");
  EXPECT_EQ(make(three.spec(), "emu:0(slowdown=4),cpu,cpu,cpu,cuda:0,cpu", 6, shape), three);
}

// ---- errors ------------------------------------------------------------------------------------

TEST(HeteroBlockCyclic, RefusesBadInput) {
  const hit::Shape shape = hit::Shape::extents({64, 64});
  const std::string devs = "emu:0,cpu*3";
  const auto err = [&](const std::string& params) {
    return error_of([&] { (void)make("heteroBlockCyclic" + params, devs, 4, shape); });
  };
  EXPECT_THAT(err(""), HasSubstr("needs the top-level tile size B and the host tile width b"));
  EXPECT_THAT(err(":B=64"), HasSubstr("needs the top-level tile size B"));
  EXPECT_THAT(err(":B=0,b=1"), HasSubstr("B=0 is not positive"));
  EXPECT_THAT(err(":B=-4,b=1"), HasSubstr("B=-4 is not positive"));
  EXPECT_THAT(err(":B=64,b=0"), HasSubstr("b=0 is not between 1 and B=64"));
  EXPECT_THAT(err(":B=64,b=-8"), HasSubstr("b=-8 is not between 1 and B=64"));
  EXPECT_THAT(err(":B=64,b=128"), HasSubstr("b=128 is not between 1 and B=64"));
  EXPECT_THAT(err(":B=64,b=16,bh=70"),
              HasSubstr("layout 'heteroBlockCyclic:B=64,b=16,bh=70': bh=70 is not a multiple of "
                        "b=16 in [0, B=64]"));
  EXPECT_THAT(err(":B=64,b=16,bh=24"), HasSubstr("bh=24 is not a multiple of b=16 in [0, B=64]"));
  EXPECT_THAT(err(":B=64,b=16,bh=-16"), HasSubstr("bh=-16 is not a multiple of b=16"));
  EXPECT_THAT(err(":B=64,b=16,bh=16,16"),
              HasSubstr("bh has 2 values; give one, or one per node (1)"));
  EXPECT_THAT(err(":B=64,b=16,g=24"), HasSubstr("g=24 is not a multiple of b=16"));
  EXPECT_THAT(err(":B=64,b=16,g=128"), HasSubstr("g=128 is not between b=16 and B=64"));
  EXPECT_THAT(err(":B=64,b=16,g=0"), HasSubstr("g=0 is not between b=16 and B=64"));
  EXPECT_THAT(err(":B=64,b=16,w=1,2"), HasSubstr("w has 2 weights, expected 4 (one per process)"));
  EXPECT_THAT(err(":B=64,b=16,w=1,0,1,1"), HasSubstr("weight 0 (position 1 of w)"));
  EXPECT_THAT(err(":B=64,b=16,ranks_per_node=0"),
              HasSubstr("ranks_per_node=0 is not between 1 and the 4 processes"));
  EXPECT_THAT(err(":B=64,b=x"), HasSubstr("b='x'"));
  EXPECT_THAT(err(":B=64,b=16,size=2"), HasSubstr("has no parameter 'size'"));
  // Parameters are checked whatever the devices: also on a node of hosts only.
  EXPECT_THAT(error_of([&] { (void)make("heteroBlockCyclic:B=64,b=16,bh=8", "cpu*2", 2, shape); }),
              HasSubstr("bh=8 is not a multiple of b=16"));
  EXPECT_THAT(error_of([&] {
                (void)make("heteroBlockCyclic:B=4,b=2", "cpu", 1, hit::Shape::extents({10}));
              }),
              HasSubstr("needs a shape of at least 2 axes, got [0:10]"));
  // Every kind is plug-in (the user's spec), except the 1-D shape's.
  try {
    (void)make("heteroBlockCyclic:B=64,b=0", devs, 4, shape);
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::plugin);
  }
}

TEST(HeteroBlockCyclic, ListedWithItsParameters) {
  const auto& registry = hit::Environment::current().extension<hit::LayoutRegistry>();
  ASSERT_TRUE(registry.contains("heteroBlockCyclic"));
  const auto& plugin = registry.find("heteroBlockCyclic");
  std::vector<std::string> keys;
  for (const hit::ParamInfo& p : plugin.params()) keys.push_back(p.key);
  EXPECT_THAT(keys, ::testing::ElementsAre("B", "b", "bh", "g", "w", "ranks_per_node"));
  EXPECT_THAT(plugin.description(), HasSubstr("Song, Tomov and Dongarra"));
}

}  // namespace
