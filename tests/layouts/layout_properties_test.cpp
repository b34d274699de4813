// Every built-in layout over many shapes (1-3 axes, strided, negative begins, fewer elements than
// processes), topologies and process counts: the properties of layout_checks.hpp, plus the split
// rule each layout promises, computed independently.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "hit/layout.hpp"
#include "hit/topology/device_binding.hpp"
#include "layout_checks.hpp"

namespace {

using hit_test::axis_parts;
using hit_test::error_of;
using hit_test::expect_valid_layout;

const std::vector<std::string>& shapes() {
  static const std::vector<std::string> list = {
      "[0:10]",     "[0:1]",          "[-5:7]",      "[3:30:4]",        "[-9:9:3]",
      "[0:7][0:5]", "[-3:4][2:20:3]", "[0:2][0:13]", "[0:4][0:3][0:5]", "[-2:3:2][0:4][1:3]",
      "[0:0][0:4]",
  };
  return list;
}

std::vector<hit::Topology> topologies_for(const hit::Shape& shape, int procs) {
  std::vector<hit::Topology> out;
  out.push_back(hit::topology("array", procs));
  if (shape.rank() >= 2) out.push_back(hit::topology("mesh2d", procs));
  if (shape.rank() >= 3 && procs >= 2) out.push_back(hit::topology("mesh:dims=2x1x1", procs));
  if (shape.rank() >= 2 && procs >= 3) out.push_back(hit::topology("mesh:dims=1x3", procs));
  return out;
}

std::string name_of(const hit::Shape& s, const hit::Topology& t, const std::string& spec) {
  return spec + " of " + s.str() + " on " + t.str();
}

TEST(LayoutProperties, EveryBuiltinLayoutOverManyCases) {
  int cases = 0;
  for (const std::string& text : shapes()) {
    const hit::Shape shape = hit::Shape::parse(text);
    for (int procs = 1; procs <= 10; ++procs) {
      for (const hit::Topology& topo : topologies_for(shape, procs)) {
        std::vector<std::string> specs = {"blocks",
                                          "cyclic",
                                          "blockCyclic:b=1",
                                          "blockCyclic:b=2",
                                          "blockCyclic:b=3",
                                          "dimBlocks",
                                          "blocksLB:factor=0.8,fast=0",
                                          "blocksLB:factor=0.3"};
        if (shape.rank() >= 2) specs.push_back("dimBlocks:dim=1");
        std::string w;
        for (int c = 0; c < topo.dims()[0]; ++c)
          w += (c ? "," : "") + std::to_string(1 + (c * 7) % 4);
        specs.push_back("weighted:w=" + w);
        for (const std::string& spec : specs) {
          const hit::Layout l = hit::layout(spec, topo, shape);
          expect_valid_layout(l, name_of(shape, topo, spec));
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

// `blocks`: along every distributed axis the first N mod P coordinates get one more element, in
// order, and the blocks start where the previous one ended; undistributed axes are whole.
TEST(LayoutProperties, BlocksSplitsEveryAxisAsHitmap) {
  for (const std::string& text : shapes()) {
    const hit::Shape shape = hit::Shape::parse(text);
    for (int procs = 1; procs <= 9; ++procs) {
      for (const hit::Topology& topo : topologies_for(shape, procs)) {
        const hit::Layout l = hit::layout("blocks", topo, shape);
        SCOPED_TRACE(name_of(shape, topo, "blocks"));
        for (int p = 0; p < topo.grid_size(); ++p) {
          const hit::Index c = topo.coords(p);
          bool has_data = true;
          for (int k = 0; k < topo.axes(); ++k) {
            has_data = has_data && c[k] < shape.extent(k);
          }
          ASSERT_EQ(l.active(p), has_data && !shape.empty());
          if (!l.active(p)) continue;
          const hit::Shape b = l.block(p);
          for (int k = 0; k < shape.rank(); ++k) {
            if (k >= topo.axes()) {
              EXPECT_EQ(b[k], shape[k]);
              continue;
            }
            const hit::index_t n = shape.extent(k);
            const hit::index_t parts = topo.dims()[static_cast<std::size_t>(k)];
            const hit::index_t size = n / parts + (c[k] < n % parts ? 1 : 0);
            hit::index_t start = 0;
            for (hit::index_t j = 0; j < c[k]; ++j) start += n / parts + (j < n % parts ? 1 : 0);
            EXPECT_EQ(b.extent(k), size);
            EXPECT_EQ(b[k].begin(), shape[k].begin() + start * shape[k].stride());
            EXPECT_EQ(b[k].stride(), shape[k].stride());
          }
        }
        // Parts differ by at most one per axis (among the coordinates that get any).
        for (int k = 0; k < topo.axes() && !shape.empty(); ++k) {
          const auto parts = axis_parts(l, k, k);
          hit::index_t lo = shape.extent(k), hi = 0;
          for (std::size_t c = 0; c < parts.size() && c < static_cast<std::size_t>(shape.extent(k));
               ++c) {
            lo = std::min(lo, parts[c]);
            hi = std::max(hi, parts[c]);
          }
          EXPECT_LE(hi - lo, 1);
        }
      }
    }
  }
}

TEST(LayoutProperties, CyclicGivesStridedSigs) {
  for (const char* text : {"[0:10]", "[-5:7]", "[3:30:4]", "[0:3]"}) {
    const hit::Shape shape = hit::Shape::parse(text);
    for (int procs = 1; procs <= 9; ++procs) {
      const hit::Layout l = hit::layout("cyclic", hit::topology("array", procs), shape);
      for (int p = 0; p < procs; ++p) {
        const hit::Sig& s = shape[0];
        if (p >= s.size()) {
          EXPECT_FALSE(l.active(p));
          continue;
        }
        const hit::Shape b = l.block(p);
        std::vector<hit::index_t> got, expect;
        b.for_each([&](const hit::Index& i) { got.push_back(i[0]); });
        for (hit::index_t j = p; j < s.size(); j += procs)
          expect.push_back(s.begin() + j * s.stride());
        EXPECT_EQ(got, expect) << text << " procs " << procs << " proc " << p;
      }
    }
  }
}

TEST(LayoutProperties, BlockCyclicDealsBlocksRoundRobin) {
  for (int b = 1; b <= 4; ++b) {
    for (int procs = 1; procs <= 5; ++procs) {
      const hit::Shape shape = hit::Shape::parse("[-3:20:2]");  // 12 indices
      const hit::Layout l =
          hit::layout("blockCyclic:b=" + std::to_string(b), hit::topology("array", procs), shape);
      for (hit::index_t pos = 0; pos < shape.extent(0); ++pos) {
        const hit::index_t index = shape[0].to_array(pos);
        EXPECT_EQ(l.owner(hit::Index{index}), (pos / b) % procs) << "b=" << b << " procs " << procs;
      }
      for (int p = 0; p < procs; ++p) {
        for (const hit::Shape& block : l.blocks(p)) EXPECT_LE(block.extent(0), b);
      }
    }
  }
}

// Too many blocks to describe are refused from the count, before any is made (b=1 over 2e8
// elements would take about 40 GB); many blocks below the limit are fine.
TEST(LayoutProperties, BlockCountIsBoundedBeforeBlocksAreMade) {
  try {
    (void)hit::layout("blockCyclic:b=1", hit::topology("array", 4),
                      hit::Shape::extents({200'000'000}));
    FAIL() << "expected an Error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), testing::HasSubstr("makes 200000000 blocks"));
  }
  EXPECT_THROW(
      (void)hit::layout("blocks", hit::topology("array", 5'000'000), hit::Shape::extents({10})),
      hit::Error);
  const hit::Layout many =
      hit::layout("blockCyclic:b=2", hit::topology("array", 2), hit::Shape::extents({200'000}));
  EXPECT_EQ(many.blocks(0).size() + many.blocks(1).size(), 100'000U);
}

TEST(LayoutProperties, WeightedPartsAreWithinOneOfTheirExactShare) {
  std::mt19937 gen(12345);
  std::uniform_real_distribution<double> weight(0.05, 10.0);
  std::uniform_int_distribution<int> size(0, 200);
  for (int trial = 0; trial < 300; ++trial) {
    const int procs = 1 + trial % 9;
    const hit::index_t n = size(gen);
    std::vector<double> w(static_cast<std::size_t>(procs));
    std::string text;
    for (auto& x : w) {
      x = std::round(weight(gen) * 100) / 100;  // exactly representable in the spec text
      text += (text.empty() ? "" : ",") + fmt::format("{}", x);
    }
    const hit::Shape shape = hit::Shape::extents({n, 3});
    const hit::Layout l = hit::layout("weighted:w=" + text, hit::topology("array", procs), shape);
    expect_valid_layout(l, "weighted:w=" + text);
    double sum = 0;
    for (double x : w) sum += x;
    hit::index_t total = 0;
    for (int p = 0; p < procs; ++p) {
      const double exact = static_cast<double>(n) * w[static_cast<std::size_t>(p)] / sum;
      const auto part = l.active(p) ? l.block(p).extent(0) : 0;
      EXPECT_LT(std::abs(static_cast<double>(part) - exact), 1.0)
          << text << " n=" << n << " p=" << p;
      total += part;
    }
    EXPECT_EQ(total, n);
  }
}

TEST(LayoutProperties, BlocksLbPartsAreWithinOneOfTheirExactShare) {
  for (int procs = 3; procs <= 9; ++procs) {
    for (double factor : {0.1, 0.5, 0.75, 0.975}) {
      for (hit::index_t n : {0, 1, 7, 100, 1001}) {
        const std::string spec = fmt::format("blocksLB:factor={},fast=0,2", factor);
        const hit::Layout l =
            hit::layout(spec, hit::topology("array", procs), hit::Shape::extents({n}));
        expect_valid_layout(l, spec);
        const int n_fast = 2;
        const int n_slow = procs - n_fast;
        for (int p = 0; p < procs; ++p) {
          const bool fast = p == 0 || p == 2;
          const double exact =
              static_cast<double>(n) * (fast ? factor / n_fast : (1 - factor) / n_slow);
          EXPECT_LT(std::abs(static_cast<double>(l.elements(p)) - exact), 1.0)
              << spec << " n=" << n << " p=" << p;
        }
      }
    }
  }
}

}  // namespace

// `columns2d`: one rectangle per process covering the shape exactly once (checked by
// expect_valid_layout), rectangles in full-height columns, and every width and height within one
// block of the exact share of its weights (weights within a factor 4 of each other, so the
// "at least one block" rule never moves a part).
TEST(LayoutProperties, Columns2dRectanglesFollowTheirWeights) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> weight(1.0, 4.0);
  int cases = 0;
  for (const auto& [n, m] : std::vector<std::pair<int, int>>{{40, 40}, {37, 53}, {64, 29}}) {
    for (const int b : {1, 3}) {
      for (int procs = 1; procs <= 8; ++procs) {
        std::vector<double> w(static_cast<std::size_t>(procs));
        std::string text;
        for (double& x : w) {
          x = std::round(weight(random) * 100) / 100;
          text += (text.empty() ? "" : ",") + fmt::format("{}", x);
        }
        const std::string spec = "columns2d:b=" + std::to_string(b) + ",w=" + text;
        const hit::Shape shape = hit::Shape::extents({n, m});
        const hit::Layout l = hit::layout(
            spec, procs % 2 == 0 ? hit::topology("mesh2d", procs) : hit::topology("array", procs),
            shape);
        const std::string context = spec + " of " + shape.str();
        expect_valid_layout(l, context);
        double total = 0;
        for (const double x : w) total += x;
        const double grid_rows = std::ceil(static_cast<double>(n) / b);
        const double grid_cols = std::ceil(static_cast<double>(m) / b);
        // Processes sharing a block column form one column of the arrangement.
        std::map<hit::index_t, std::vector<int>> columns;
        for (int p = 0; p < procs; ++p) {
          ASSERT_EQ(l.blocks(p).size(), 1U) << context;
          columns[l.block(p)[1].begin()].push_back(p);
        }
        for (const auto& [first, members] : columns) {
          double share = 0;
          hit::index_t height = 0;
          for (const int p : members) {
            share += w[static_cast<std::size_t>(p)];
            EXPECT_EQ(l.block(p)[1], l.block(members.front())[1]) << context;
            height += l.block(p).extent(0);
          }
          EXPECT_EQ(height, n) << context << ": a column is the full height";
          const double width_blocks =
              std::ceil(static_cast<double>(l.block(members.front()).extent(1)) / b);
          EXPECT_LT(std::abs(width_blocks - grid_cols * share / total), 1.0 + 1e-9) << context;
          for (const int p : members) {
            const double height_blocks = std::ceil(static_cast<double>(l.block(p).extent(0)) / b);
            EXPECT_LT(std::abs(height_blocks - grid_rows * w[static_cast<std::size_t>(p)] / share),
                      1.0 + 1e-9)
                << context << " process " << p;
          }
        }
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 48);
}

// Bad parameters name the value: wrong count, zero, negative and NaN weights, b <= 0, more
// rectangles than blocks, a 1-D shape.
TEST(LayoutProperties, Columns2dRefusesBadParameters) {
  const hit::Shape shape = hit::Shape::extents({10, 10});
  const hit::Topology four = hit::topology("array", 4);
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d:w=1,2,3", four, shape); }),
              testing::HasSubstr("w has 3 weights, expected 4"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d:w=1,0,1,1", four, shape); }),
              testing::HasSubstr("weight 0 (position 1 of w) is not a positive number"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d:w=1,-2,1,1", four, shape); }),
              testing::HasSubstr("weight -2 (position 1 of w)"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d:w=1,nan,1,1", four, shape); }),
              testing::HasSubstr("w='1,nan,1,1' is not a comma-separated list of numbers"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d:b=0", four, shape); }),
              testing::HasSubstr("block size b=0 is not positive"));
  // Five equal areas make columns of 2 and 3 rectangles: 3 do not fit 2 block rows.
  EXPECT_THAT(
      error_of([&] { (void)hit::layout("columns2d:b=5", hit::topology("array", 5), shape); }),
      testing::HasSubstr("a column of 3 rectangles over 2 block rows"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("columns2d", four, hit::Shape::extents({10})); }),
              testing::HasSubstr("needs a shape of at least 2 axes"));
}

// `hierarchical`: the processes of each node together hold one rectangle (their blocks fill it
// exactly), node rectangles in proportion to the sums of their devices' weights, and the spec,
// nested specs included, parses back to the same layout.
TEST(LayoutProperties, HierarchicalNodesHoldTheirPartTogether) {
  const hit::Shape shape = hit::Shape::extents({60, 48});
  // Two nodes of two processes: node 0 (two emulated devices 4x slower) weighs 1/4 + 1/4, node 1
  // (two cpus) 1 + 1.
  std::vector<hit::DeviceBinding> devices(4);
  devices[0] = hit::parse_device_spec("emu(slowdown=4)", 1).front();
  devices[1] = devices[0];
  const std::string spec =
      "hierarchical:nodes=(columns2d),devices=(columns2d:w=1,3),ranks_per_node=2";
  const hit::Layout l = hit::layout(spec, hit::topology("array", 4), shape, {.devices = devices});
  expect_valid_layout(l, spec);
  for (int node = 0; node < 2; ++node) {
    const hit::Shape a = l.block(2 * node), b = l.block(2 * node + 1);
    hit::Shape box = a;
    for (int k = 0; k < 2; ++k) {
      box = box.with_sig(
          k, hit::Sig(std::min(a[k].begin(), b[k].begin()), std::max(a[k].end(), b[k].end())));
    }
    EXPECT_EQ(box.size(), a.size() + b.size()) << "node " << node << " holds one rectangle";
    // Inside the node, w=1,3: the second process gets three times the first's area (within a
    // row or column of rounding).
    EXPECT_NEAR(static_cast<double>(b.size()) / static_cast<double>(a.size()), 3.0, 0.35);
  }
  const double node0 = static_cast<double>(l.elements(0) + l.elements(1));
  const double node1 = static_cast<double>(l.elements(2) + l.elements(3));
  EXPECT_NEAR(node1 / node0, 4.0, 0.3);
  EXPECT_EQ(hit::layout(l.spec(), hit::topology("array", 4), shape, {.devices = devices}), l);
}

// `w=` of hierarchical: a node weighs the sum of its processes' weights, and a device layout that
// takes weights gets its node's share of them (the form hierarchical partitioning writes).
TEST(LayoutProperties, HierarchicalWeightsReachNodesAndDevices) {
  const hit::Shape shape = hit::Shape::extents({64, 64});
  const std::string spec =
      "hierarchical:nodes=(columns2d:b=8),devices=(dimBlocks:dim=1),w=1,3,2,2,ranks_per_node=2";
  const hit::Layout l = hit::layout(spec, hit::topology("array", 4), shape);
  expect_valid_layout(l, spec);
  // Nodes weigh 4 and 4: equal halves; inside node 0, columns 1 : 3 of its full width.
  EXPECT_EQ(l.elements(0) + l.elements(1), l.elements(2) + l.elements(3));
  EXPECT_EQ(l.block(0)[0], l.block(1)[0]) << "column slices share the node's rows";
  EXPECT_EQ(3 * l.block(0)[1].size(), l.block(1)[1].size());
  EXPECT_EQ(l.block(2)[1].size(), l.block(3)[1].size());
  // The node spec's own weights win over the sums; a zero weight leaves a process without work.
  const hit::Layout own = hit::layout(
      "hierarchical:nodes=(columns2d:w=3,1,b=8),devices=(dimBlocks:dim=1),w=1,0,1,1,"
      "ranks_per_node=2",
      hit::topology("array", 4), shape);
  EXPECT_EQ(own.elements(0), 3 * (own.elements(2) + own.elements(3)));
  EXPECT_FALSE(own.active(1));
  EXPECT_EQ(hit::layout(own.spec(), hit::topology("array", 4), shape), own);
  EXPECT_THAT(error_of([&] {
                (void)hit::layout("hierarchical:w=1,2,ranks_per_node=2", hit::topology("array", 4),
                                  shape);
              }),
              testing::HasSubstr("w has 2 weights, expected 4"));
}

TEST(LayoutProperties, HierarchicalRefusesWhatItCannotDo) {
  const hit::Shape shape = hit::Shape::extents({10, 10});
  const hit::Topology four = hit::topology("array", 4);
  EXPECT_THAT(error_of([&] { (void)hit::layout("hierarchical:ranks_per_node=0", four, shape); }),
              testing::HasSubstr("ranks_per_node=0 is not between 1 and the 4 processes"));
  EXPECT_THAT(error_of([&] {
                (void)hit::layout("hierarchical:nodes=(columns2d:w=1,ranks_per_node=2", four,
                                  shape);
              }),
              testing::HasSubstr("unbalanced parentheses"));
  EXPECT_THAT(error_of([&] {
                (void)hit::layout("hierarchical:nodes=(blockCyclic:b=1),ranks_per_node=2", four,
                                  shape);
              }),
              testing::HasSubstr("gives node 0"));
  // A plan for more processes than the run: the nodes must be given.
  EXPECT_THAT(
      error_of([&] { (void)hit::layout("hierarchical", hit::topology("array", 64), shape); }),
      testing::HasSubstr("give ranks_per_node=K"));
}
