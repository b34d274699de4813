// Layouts by name: exact results of each plug-in, the Layout object, the registry, the run-time
// override and the errors a user can cause.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "layout_checks.hpp"

namespace {

using hit_test::axis_parts;
using hit_test::error_of;
using hit_test::expect_valid_layout;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

hit::Shape S(const char* text) {
  return hit::Shape::parse(text);
}

std::vector<hit::index_t> sizes_1d(const hit::Layout& l) {
  std::vector<hit::index_t> out;
  for (int p = 0; p < l.procs(); ++p) out.push_back(l.elements(p));
  return out;
}

std::vector<hit::DeviceBinding> devices(std::initializer_list<std::pair<const char*, int>> list) {
  std::vector<hit::DeviceBinding> out;
  for (const auto& [kind, index] : list) {
    hit::DeviceBinding d;
    d.kind = hit::device_kind(kind);
    d.index = index;
    out.push_back(d);
  }
  return out;
}

// ---- blocks -----------------------------------------------------------------------------------

TEST(BlocksLayout, TenOverThreeIsFourThreeThree) {
  const hit::Layout l = hit::layout("blocks", hit::topology("array", 3), S("[0:10]"));
  EXPECT_EQ(l.block(0), S("[0:4]"));
  EXPECT_EQ(l.block(1), S("[4:7]"));
  EXPECT_EQ(l.block(2), S("[7:10]"));
  EXPECT_EQ(l.max_extents(), S("[0:4]"));
  EXPECT_EQ(l.min_extents(), S("[0:3]"));
  EXPECT_EQ(l.spec(), "blocks");
  EXPECT_EQ(l.owner(hit::Index{6}), 1);
  EXPECT_EQ(l.owner(hit::Index{10}), -1);
  EXPECT_EQ(l.owner(hit::Index{-1}), -1);
}

TEST(BlocksLayout, KeepsStridesAndNegativeBegins) {
  const hit::Layout l =
      hit::layout("blocks", hit::topology("array", 2), S("[-7:8:3]"));  // -7,-4,-1,2,5
  EXPECT_EQ(l.block(0), S("[-7:0:3]"));                                 // -7, -4, -1
  EXPECT_EQ(l.block(1), S("[2:8:3]"));                                  // 2, 5
  EXPECT_EQ(l.block(0)[0].stride(), 3);
  EXPECT_EQ(l.owner(hit::Index{-4}), 0);
  EXPECT_EQ(l.owner(hit::Index{-5}), -1);
}

TEST(BlocksLayout, MoreProcessesThanElementsLeavesTrailingOnesInactive) {
  const hit::Layout l = hit::layout("blocks", hit::topology("array", 5), S("[0:2]"));
  EXPECT_THAT(sizes_1d(l), ElementsAre(1, 1, 0, 0, 0));
  EXPECT_EQ(l.active_count(), 2);
  EXPECT_FALSE(l.active(2));
  EXPECT_EQ(l.block(4), hit::Shape());
  EXPECT_EQ(l.active_extent(0), 2);
  // Neighbours wrap among the active ones (Hitmap's "actives").
  EXPECT_EQ(l.neighbor(1, 0, 1, true), 0);
  EXPECT_EQ(l.neighbor(0, 0, -1, true), 1);
  EXPECT_EQ(l.neighbor(1, 0, 1, false), std::nullopt);
  EXPECT_EQ(l.neighbor(3, 0, 1, true), std::nullopt);
}

TEST(BlocksLayout, TwoDimensionsOnAMesh) {
  const hit::Layout l = hit::layout("blocks", hit::topology("mesh2d", 6), S("[0:7][0:5]"));  // 3x2
  EXPECT_EQ(l.block(0), S("[0:3][0:3]"));
  EXPECT_EQ(l.block(1), S("[0:3][3:5]"));
  EXPECT_EQ(l.block(2), S("[3:5][0:3]"));
  EXPECT_EQ(l.block(5), S("[5:7][3:5]"));
  EXPECT_EQ(l.max_extents(), S("[0:3][0:3]"));
  EXPECT_EQ(l.min_extents(), S("[0:2][0:2]"));
  EXPECT_EQ(l.neighbor(0, 1, 1, false), 1);
  EXPECT_EQ(l.neighbor(0, 0, -1, true), 4);
  EXPECT_EQ(l.neighbor(5, 1, 1, false), std::nullopt);
}

TEST(BlocksLayout, ExtraShapeAxesAreWholeAndFewerAreAnError) {
  const hit::Layout l = hit::layout("blocks", hit::topology("array", 2), S("[0:4][0:3][-1:1]"));
  EXPECT_EQ(l.block(0), S("[0:2][0:3][-1:1]"));
  EXPECT_EQ(l.block(1), S("[2:4][0:3][-1:1]"));
  const std::string msg =
      error_of([] { (void)hit::layout("blocks", hit::topology("square", 4), S("[0:10]")); });
  EXPECT_THAT(msg, HasSubstr("[0:10] has 1 axis"));
  EXPECT_THAT(msg, HasSubstr("has 2"));
}

TEST(BlocksLayout, InactiveTopologyProcessesGetNothing) {
  const hit::Layout l = hit::layout("blocks", hit::topology("mesh:dims=2x2", 6), S("[0:4][0:4]"));
  EXPECT_THAT(sizes_1d(l), ElementsAre(4, 4, 4, 4, 0, 0));
  expect_valid_layout(l, "mesh 2x2 of 6");
}

// ---- dimBlocks, cyclic, blockCyclic -----------------------------------------------------------

TEST(DimBlocksLayout, SplitsOneAxisOverAllProcessesInRankOrder) {
  const hit::Layout l =
      hit::layout("dimBlocks:dim=1", hit::topology("square", 4), S("[0:3][0:10]"));
  EXPECT_THAT(l.topology().dims(), ElementsAre(4));
  EXPECT_EQ(l.block(0), S("[0:3][0:3]"));
  EXPECT_EQ(l.block(1), S("[0:3][3:6]"));
  EXPECT_EQ(l.block(3), S("[0:3][8:10]"));
  EXPECT_EQ(l.neighbor(3, 0, 1, true), 0);
  EXPECT_EQ(hit::layout("dimBlocks", hit::topology("array", 2), S("[0:4][0:4]")).block(1),
            S("[2:4][0:4]"));
  EXPECT_THAT(error_of([] {
                (void)hit::layout("dimBlocks:dim=2", hit::topology("array", 2), S("[0:4][0:4]"));
              }),
              HasSubstr("dim=2 is not an axis of the shape (0 to 1)"));
  EXPECT_THAT(
      error_of([] { (void)hit::layout("dimBlocks:dim=x", hit::topology("array", 2), S("[0:4]")); }),
      HasSubstr("dim='x' is not an integer"));
}

TEST(DimBlocksLayout, WeightsSplitInProportionAndZeroGetsNothing) {
  // 1 : 3 : 0 : 4 of 64 columns: 8, 24, nothing, 32, exactly.
  const hit::Layout l =
      hit::layout("dimBlocks:dim=1,w=1,3,0,4", hit::topology("array", 4), S("[0:5][0:64]"));
  EXPECT_EQ(l.block(0), S("[0:5][0:8]"));
  EXPECT_EQ(l.block(1), S("[0:5][8:32]"));
  EXPECT_FALSE(l.active(2));
  EXPECT_EQ(l.block(3), S("[0:5][32:64]"));
  // Not exact: each part within one element of its share, all elements given.
  const hit::Layout odd =
      hit::layout("dimBlocks:w=1,1,1", hit::topology("array", 3), S("[0:10][0:2]"));
  EXPECT_EQ(odd.elements(0) + odd.elements(1) + odd.elements(2), 20);
  EXPECT_EQ(hit::layout(l.spec(), hit::topology("array", 4), S("[0:5][0:64]")), l);
  const auto bad = [](const char* spec) {
    return error_of([&] { (void)hit::layout(spec, hit::topology("array", 2), S("[0:4][0:4]")); });
  };
  EXPECT_THAT(bad("dimBlocks:w=1"), HasSubstr("w has 1 weights, expected 2"));
  EXPECT_THAT(bad("dimBlocks:w=1,-1"), HasSubstr("weight -1 (position 1 of w)"));
  EXPECT_THAT(bad("dimBlocks:w=0,0"), HasSubstr("every weight of w is 0"));
  EXPECT_THAT(bad("dimBlocks:w=1,inf"), HasSubstr("is not a comma-separated list of numbers"));
}

TEST(CyclicLayout, ProcessPGetsPPlusMultiplesOfP) {
  const hit::Layout l = hit::layout("cyclic", hit::topology("array", 3), S("[0:10]"));
  EXPECT_EQ(l.block(0), S("[0:10:3]"));
  EXPECT_EQ(l.block(1), S("[1:10:3]"));
  EXPECT_EQ(l.block(2), S("[2:10:3]"));
  EXPECT_EQ(l.owner(hit::Index{7}), 1);
  const hit::Layout two = hit::layout("cyclic", hit::topology("mesh:dims=2x2", 4), S("[0:4][0:6]"));
  EXPECT_EQ(two.block(3), S("[1:4:2][1:6:2]"));
}

TEST(BlockCyclicLayout, SeveralBlocksPerProcess) {
  const hit::Layout l = hit::layout("blockCyclic:b=2", hit::topology("array", 2), S("[0:10]"));
  EXPECT_THAT(l.blocks(0), ElementsAre(S("[0:2]"), S("[4:6]"), S("[8:10]")));
  EXPECT_THAT(l.blocks(1), ElementsAre(S("[2:4]"), S("[6:8]")));
  EXPECT_THAT(error_of([&] { l.block(0); }), HasSubstr("has 3 blocks"));
  const hit::Layout two =
      hit::layout("blockCyclic:b=2,1", hit::topology("mesh:dims=2x2", 4), S("[0:4][0:3]"));
  EXPECT_THAT(two.blocks(1), ElementsAre(S("[0:2][1:2]")));
  EXPECT_THAT(two.blocks(0), ElementsAre(S("[0:2][0:1]"), S("[0:2][2:3]")));
  expect_valid_layout(two, "blockCyclic 2x2");
  EXPECT_THAT(
      error_of([] { (void)hit::layout("blockCyclic", hit::topology("array", 2), S("[0:4]")); }),
      HasSubstr("needs the block size b"));
  EXPECT_THAT(
      error_of([] { (void)hit::layout("blockCyclic:b=0", hit::topology("array", 2), S("[0:4]")); }),
      HasSubstr("block size 0 is not positive"));
  EXPECT_THAT(error_of([] {
                (void)hit::layout("blockCyclic:b=1,2,3", hit::topology("mesh2d", 4),
                                  S("[0:4][0:4]"));
              }),
              HasSubstr("b has 3 values"));
  EXPECT_EQ(
      hit::layout("blockCyclic:b=1000000000000", hit::topology("array", 3), S("[0:5]")).blocks(0),
      std::vector<hit::Shape>{S("[0:5]")});
}

// ---- weighted and blocksLB --------------------------------------------------------------------

TEST(WeightedLayout, SplitsInProportion) {
  EXPECT_THAT(sizes_1d(hit::layout("weighted:w=1,2,1", hit::topology("array", 3), S("[0:8]"))),
              ElementsAre(2, 4, 2));
  // Equal remainders go to the lower index, like blocks.
  EXPECT_THAT(sizes_1d(hit::layout("weighted:w=1,1,1", hit::topology("array", 3), S("[0:10]"))),
              ElementsAre(4, 3, 3));
  // Columns split by weights on axis 1, rows as blocks.
  const hit::Layout l =
      hit::layout("weighted:w=3,1,axis=1", hit::topology("mesh:dims=2x2", 4), S("[0:5][0:8]"));
  EXPECT_EQ(l.block(0), S("[0:3][0:6]"));
  EXPECT_EQ(l.block(3), S("[3:5][6:8]"));
  EXPECT_EQ(l.spec(), "weighted:w=3,1,axis=1");
}

TEST(WeightedLayout, PerProcessWeightsUseTheSlowestOfEachSlice) {
  // 2x2 grid: row 0 = ranks 0,1; row 1 = ranks 2,3. Rank 3 is four times slower.
  const hit::Layout l =
      hit::layout("weighted:w=4,4,4,1", hit::topology("square", 4), S("[0:10][0:4]"));
  EXPECT_THAT(axis_parts(l, 0, 0), ElementsAre(8, 2));
  EXPECT_THAT(axis_parts(l, 1, 1), ElementsAre(2, 2));
}

TEST(WeightedLayout, BadWeightsNameTheValue) {
  const auto topo = hit::topology("square", 4);
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted", topo, S("[0:4][0:4]")); }),
              HasSubstr("needs the weights w"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted:w=1,0", topo, S("[0:4][0:4]")); }),
              HasSubstr("weight 0 (position 1 of w) is not positive"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted:w=-2,1", topo, S("[0:4][0:4]")); }),
              HasSubstr("weight -2"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted:w=1,2,3", topo, S("[0:4][0:4]")); }),
              HasSubstr("w has 3 weights, expected 2"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted:w=1,x", topo, S("[0:4][0:4]")); }),
              HasSubstr("w='1,x' is not a comma-separated list of numbers"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("weighted:w=1,1,axis=2", topo, S("[0:4][0:4]")); }),
              HasSubstr("axis=2 is not an axis of the topology (0 to 1)"));
}

TEST(BlocksLbLayout, SeedScenarioA3B1) {
  // Cannon on 2x2, ranks 0-2 on the fast GPU A (cuda:0), rank 3 on B (cuda:1): block-row 0 is all
  // fast, block-row 1 mixes A and B, so it counts as slow; row 0 gets the balance factor.
  const auto topo = hit::topology("square", 4);
  const auto devs = devices({{"cuda", 0}, {"cuda", 0}, {"cuda", 0}, {"cuda", 1}});
  const hit::Layout l =
      hit::layout("blocksLB:factor=0.75,fast=cuda:0", topo, S("[0:100][0:100]"), {.devices = devs});
  EXPECT_THAT(axis_parts(l, 0, 0), ElementsAre(75, 25));
  EXPECT_THAT(axis_parts(l, 1, 1), ElementsAre(50, 50));
  // Without fast=, both are accelerators: one class, so the split is even.
  EXPECT_THAT(
      axis_parts(hit::layout("blocksLB:factor=0.75", topo, S("[0:100][0:100]"), {.devices = devs}),
                 0, 0),
      ElementsAre(50, 50));
}

TEST(BlocksLbLayout, SeedScenarioA2C2UsesNotCpuAsFast) {
  const auto topo = hit::topology("square", 4);
  const auto devs = devices({{"cuda", 0}, {"cuda", 0}, {"cpu", 0}, {"cpu", 1}});
  const hit::Layout l =
      hit::layout("blocksLB:factor=0.8", topo, S("[0:10][0:6]"), {.devices = devs});
  EXPECT_THAT(axis_parts(l, 0, 0), ElementsAre(8, 2));
  // The fast class is wherever it sits: rows swap when the GPU ranks are the second row.
  const auto swapped = devices({{"cpu", 0}, {"cpu", 0}, {"emu", 0}, {"emu", 0}});
  EXPECT_THAT(
      axis_parts(hit::layout("blocksLB:factor=0.8", topo, S("[0:10][0:6]"), {.devices = swapped}),
                 0, 0),
      ElementsAre(2, 8));
}

TEST(BlocksLbLayout, FastByRankAndEvenWithoutTwoClasses) {
  const auto topo = hit::topology("array", 4);
  // Rank 1 fast: 0.7 of 100 to it, 0.3 shared by the other three (10 each).
  EXPECT_THAT(sizes_1d(hit::layout("blocksLB:factor=0.7,fast=1", topo, S("[0:100]"))),
              ElementsAre(10, 70, 10, 10));
  // No devices and no fast=: one class, as blocks.
  EXPECT_EQ(hit::layout("blocksLB:factor=0.9", topo, S("[0:10]")).blocks(0),
            hit::layout("blocks", topo, S("[0:10]")).blocks(0));
  EXPECT_THAT(sizes_1d(hit::layout("blocksLB:factor=0.9", topo, S("[0:10]"))),
              ElementsAre(3, 3, 2, 2));
}

TEST(BlocksLbLayout, SharesTheWeightedCodePath) {
  const auto topo = hit::topology("array", 4);
  const hit::Shape shape = S("[0:37][0:3]");
  const hit::Layout lb = hit::layout("blocksLB:factor=0.6,fast=0,3", topo, shape);
  const hit::Layout w = hit::layout("weighted:w=0.3,0.2,0.2,0.3", topo, shape);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(lb.blocks(p), w.blocks(p)) << p;
}

TEST(BlocksLbLayout, BadParametersNameTheValue) {
  const auto topo = hit::topology("array", 4);
  EXPECT_THAT(error_of([&] { (void)hit::layout("blocksLB:factor=1.5", topo, S("[0:8]")); }),
              HasSubstr("factor=1.5 is not a fraction strictly between 0 and 1"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("blocksLB:factor=0", topo, S("[0:8]")); }),
              HasSubstr("factor=0"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("blocksLB:fast=gpu", topo, S("[0:8]")); }),
              HasSubstr("fast item 'gpu' is not a rank or a device"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("blocksLB:fast=9", topo, S("[0:8]")); }),
              HasSubstr("fast item '9' is not a process (0 to 3)"));
  EXPECT_THAT(error_of([&] { (void)hit::layout("blocksLB:fast=cuda:x", topo, S("[0:8]")); }),
              HasSubstr("fast item 'cuda:x'"));
}

// ---- building blocks --------------------------------------------------------------------------

TEST(PartsFromWeights, RoundsByLargestRemainder) {
  using V = std::vector<double>;
  EXPECT_THAT(hit::parts_from_weights(V{1, 1, 1}, 10), ElementsAre(4, 3, 3));
  EXPECT_THAT(hit::parts_from_weights(V{1, 1, 1}, 11), ElementsAre(4, 4, 3));
  EXPECT_THAT(hit::parts_from_weights(V{3, 1}, 10), ElementsAre(8, 2));  // 7.5 / 2.5: tie -> lower
  EXPECT_THAT(hit::parts_from_weights(V{0, 1}, 5), ElementsAre(0, 5));
  EXPECT_THAT(hit::parts_from_weights(V{2, 5}, 0), ElementsAre(0, 0));
  EXPECT_THAT(hit::parts_from_weights(V{1, 2, 3, 4}, 1), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(error_of([] {
                (void)hit::parts_from_weights(V{1, -1}, 5);
              }),
              HasSubstr("weight 1 is -1"));
  EXPECT_THAT(error_of([] { (void)hit::parts_from_weights(V{0, 0}, 5); }), HasSubstr("all zero"));
  EXPECT_THAT(error_of([] { (void)hit::parts_from_weights(V{}, 5); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { (void)hit::parts_from_weights(V{1}, -1); }), HasSubstr("-1 elements"));
}

TEST(PartsFromWeights, PropertyWithinOneAndExactSum) {
  std::uint64_t state = 88172645463325252ull;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t m = 1 + next() % 12;
    std::vector<double> w(m);
    double sum = 0;
    for (auto& x : w) {
      x = static_cast<double>(next() % 1000) / 7.0;
      sum += x;
    }
    if (sum == 0) continue;
    const auto n = static_cast<hit::index_t>(next() % 100000);
    const auto parts = hit::parts_from_weights(w, n);
    hit::index_t total = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double exact = static_cast<double>(n) * w[i] / sum;
      EXPECT_LT(std::abs(static_cast<double>(parts[i]) - exact), 1.0);
      EXPECT_GE(parts[i], 0);
      total += parts[i];
    }
    EXPECT_EQ(total, n);
  }
}

TEST(BlockRange, FirstRemainderPartsGetOneMore) {
  EXPECT_EQ(hit::block_range(10, 3, 0), std::make_pair(hit::index_t{0}, hit::index_t{4}));
  EXPECT_EQ(hit::block_range(10, 3, 1), std::make_pair(hit::index_t{4}, hit::index_t{7}));
  EXPECT_EQ(hit::block_range(10, 3, 2), std::make_pair(hit::index_t{7}, hit::index_t{10}));
  EXPECT_EQ(hit::block_range(2, 4, 3), std::make_pair(hit::index_t{2}, hit::index_t{2}));
  EXPECT_THAT(error_of([] { (void)hit::block_range(5, 0, 0); }), HasSubstr("0 parts"));
  EXPECT_THAT(error_of([] { (void)hit::block_range(5, 2, 2); }), HasSubstr("part 2"));
}

TEST(LayoutFromParts, SizesAlongOneAxisAndPredictedTimes) {
  const hit::LayoutRequest request{
      hit::topology("square", 4), S("[0:10][0:4]"), hit::Spec::parse("custom"), {}, {}};
  const hit::Layout l = hit::layout_from_parts(request, 0, {7, 3}, {2.0, 1.5});
  EXPECT_EQ(l.block(0), S("[0:7][0:2]"));
  EXPECT_EQ(l.block(3), S("[7:10][2:4]"));
  EXPECT_EQ(l.predicted_time(1), 2.0);  // per coordinate: rank 1 is in row 0
  EXPECT_EQ(l.predicted_time(2), 1.5);
  EXPECT_EQ(l.load(3), 1.5);
  const hit::Layout per_proc = hit::layout_from_parts(request, 1, {0, 4}, {0, 1, 0, 3});
  EXPECT_FALSE(per_proc.active(0));
  EXPECT_EQ(per_proc.block(1), S("[0:5][0:4]"));
  EXPECT_EQ(per_proc.load(3), 3.0);
  EXPECT_EQ(per_proc.active_extent(1), 1);
  EXPECT_EQ(hit::layout_from_parts(request, 0, {7, 3}).predicted_time(0), std::nullopt);
  EXPECT_THAT(error_of([&] {
                (void)hit::layout_from_parts(request, 0, {7, 2});
              }),
              HasSubstr("sum to 9"));
  EXPECT_THAT(error_of([&] { (void)hit::layout_from_parts(request, 0, {10}); }),
              HasSubstr("1 part sizes for the 2"));
  EXPECT_THAT(error_of([&] {
                (void)hit::layout_from_parts(request, 0, {11, -1});
              }),
              HasSubstr("negative"));
  EXPECT_THAT(error_of([&] {
                (void)hit::layout_from_parts(request, 2, {5, 5});
              }),
              HasSubstr("axis 2"));
  EXPECT_THAT(error_of([&] {
                (void)hit::layout_from_parts(request, 0, {5, 5}, {1, 2, 3});
              }),
              HasSubstr("3 predicted times"));
}

TEST(ProductLayout, ChecksThePiecesOfEachAxis) {
  const hit::LayoutRequest request{
      hit::topology("array", 2), S("[0:10][0:3]"), hit::Spec::parse("custom"), {}, {}};
  using P = std::vector<hit::AxisPieces>;
  const auto sig = [](hit::index_t b, hit::index_t e, hit::index_t s = 1) {
    return hit::Sig(b, e, s);
  };
  EXPECT_THAT(error_of([&] {
                (void)hit::product_layout(request, P{{{sig(0, 6)}, {sig(5, 10)}}});
              }),
              HasSubstr("hold 11 indices"));
  EXPECT_THAT(error_of([&] {
                (void)hit::product_layout(request, P{{{sig(0, 6)}, {sig(5, 9)}}});
              }),
              HasSubstr("pieces [0:6] and [5:9] of axis 0 overlap"));
  EXPECT_THAT(error_of([&] {
                (void)hit::product_layout(request, P{{{sig(0, 10, 2)}, {sig(0, 10, 2)}}});
              }),
              HasSubstr("overlap"));
  EXPECT_THAT(error_of([&] {
                (void)hit::product_layout(request, P{{{sig(0, 5)}, {sig(5, 11)}}});
              }),
              HasSubstr("not inside [0:10]"));
  EXPECT_THAT(error_of([&] { (void)hit::product_layout(request, P{{{sig(0, 10)}}}); }),
              HasSubstr("pieces for 1 coordinates"));
  EXPECT_THAT(error_of([&] { (void)hit::product_layout(request, P{}); }),
              HasSubstr("pieces for 0 axes"));
  // Pieces in any order, several per coordinate: owner() finds them by binary search.
  const hit::Layout l = hit::product_layout(request, P{{{sig(6, 10), sig(0, 2)}, {sig(2, 6)}}});
  EXPECT_THAT(l.blocks(0), ElementsAre(S("[6:10][0:3]"), S("[0:2][0:3]")));
  for (hit::index_t i = 0; i < 10; ++i)
    EXPECT_EQ(l.owner(hit::Index{i, 1}), (i >= 2 && i < 6) ? 1 : 0);
  expect_valid_layout(l, "custom product");
}

// ---- the Layout object ------------------------------------------------------------------------

TEST(LayoutObject, ConstructorRejectsBrokenResults) {
  const hit::Topology topo = hit::topology("array", 2);
  const hit::Shape shape = S("[0:10]");
  using Blocks = std::vector<std::vector<hit::Shape>>;
  EXPECT_THAT(error_of([&] {
                hit::Layout(topo, shape, "x", Blocks{{S("[0:6]")}, {S("[5:10]")}});
              }),
              HasSubstr("hold 11 elements, the shape has 10"));
  EXPECT_THAT(error_of([&] {
                hit::Layout(topo, shape, "x", Blocks{{S("[0:6]")}, {S("[5:9]")}});
              }),
              HasSubstr("overlaps"));
  EXPECT_THAT(error_of([&] {
                hit::Layout(topo, shape, "x", Blocks{{S("[0:5]")}, {S("[5:11]")}});
              }),
              HasSubstr("not inside"));
  EXPECT_THAT(error_of([&] { hit::Layout(topo, shape, "x", Blocks{{S("[0:10]")}}); }),
              HasSubstr("1 processes, not 2"));
  EXPECT_THAT(error_of([&] {
                hit::Layout(topo, shape, "x", Blocks{{S("[0:10]")}, {}}, {1.0});
              }),
              HasSubstr("predicted times for 1"));
  EXPECT_THAT(
      error_of([&] {
        hit::Layout(hit::Topology("x", {1}, 2), shape, "x", Blocks{{S("[0:5]")}, {S("[5:10]")}});
      }),
      HasSubstr("outside the topology grid"));
  // Empty blocks are dropped; a valid custom layout keeps its order.
  const hit::Layout ok(topo, shape, "x", Blocks{{S("[5:10]"), S("[3:3]")}, {S("[0:5]")}});
  EXPECT_THAT(ok.blocks(0), ElementsAre(S("[5:10]")));
  EXPECT_EQ(ok.owner(hit::Index{0}), 1);
  EXPECT_EQ(ok.bounding(0), S("[5:10]"));
}

TEST(LayoutObject, ValueSemanticsAndText) {
  const auto topo = hit::topology("array", 3);
  const hit::Layout a = hit::layout("blocks", topo, S("[0:10]"));
  const hit::Layout b = hit::layout("blocks", topo, S("[0:10]"));
  const hit::Layout c = hit::layout("cyclic", topo, S("[0:10]"));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_THAT(a.str(), HasSubstr("1 (1): [4:7]"));
  EXPECT_THAT(error_of([&] { a.blocks(3); }), HasSubstr("process 3"));
  EXPECT_THAT(error_of([&] { a.neighbor(0, 1, 1, true); }), HasSubstr("axis 1"));
  const hit::Layout copy = a;
  EXPECT_EQ(copy.block(2), S("[7:10]"));
}

// ---- registry, specs and the run-time override -------------------------------------------------

TEST(LayoutRegistry, ListsEveryBuiltinAndValidatesKeys) {
  auto& registry = hit::Environment::current().extension<hit::LayoutRegistry>();
  for (const char* name :
       {"blocks", "dimBlocks", "cyclic", "blockCyclic", "weighted", "blocksLB"}) {
    EXPECT_TRUE(registry.contains(name)) << name;
  }
  const std::string unknown =
      error_of([] { (void)hit::layout("stripes", hit::topology("array", 2), S("[0:4]")); });
  EXPECT_THAT(unknown, HasSubstr("unknown layout plug-in 'stripes'"));
  for (const char* name :
       {"blockCyclic", "blocks,", "blocksLB", "cyclic", "dimBlocks", "weighted"}) {
    EXPECT_THAT(unknown, HasSubstr(name));
  }
  EXPECT_THAT(
      error_of([] { (void)hit::layout("blocks:size=2", hit::topology("array", 2), S("[0:4]")); }),
      HasSubstr("has no parameter 'size' (allowed: none)"));
  EXPECT_THAT(error_of([] {
                (void)hit::layout("weighted:weights=2", hit::topology("array", 2), S("[0:4]"));
              }),
              HasSubstr("allowed: w, axis"));
  EXPECT_THAT(error_of([] { (void)hit::layout("blocks:", hit::topology("array", 2), S("[0:4]")); }),
              HasSubstr("malformed"));
  EXPECT_THAT(error_of([] {
                (void)hit::layout("blocks", hit::topology("array", 2), S("[0:4]"),
                                  {.devices = devices({{"cpu", 0}})});
              }),
              HasSubstr("the devices bind 1 processes, the topology has 2"));
}

TEST(LayoutOverride, CommandLineAndEnvironmentReplaceTheSpecInCode) {
  auto& env = hit::Environment::current();
  const auto topo = hit::topology("array", 3);
  const auto made = [&](const hit::Setting& spec) { return hit::layout(spec, topo, S("[0:10]")); };
  // No override: the code's choice, and nothing to report.
  const hit::Layout plain = made(hit::layout_setting(env, "unsetlabel", "blocks"));
  EXPECT_EQ(plain.spec(), "blocks");
  EXPECT_EQ(plain.requested(), "blocks");
  EXPECT_EQ(plain.set_by(), "");
  ::setenv("HIT_LAYOUT_MATRIX_A", "cyclic", 1);
  const hit::Layout by_variable = made(hit::layout_setting(env, "matrix-a", "blocks"));
  EXPECT_EQ(by_variable.spec(), "cyclic");
  EXPECT_EQ(by_variable.requested(), "blocks");  // what the code asked for, beside what ran
  EXPECT_EQ(by_variable.set_by(), "HIT_LAYOUT_MATRIX_A");
  // Only a spec resolved as a setting is replaced: the plain text runs as written.
  EXPECT_EQ(made("blocks").spec(), "blocks");
  env.config().set("layout-matrix-a", "weighted:w=1,2,1");  // the command line wins
  const hit::Setting flag = hit::layout_setting(env, "matrix-a", "blocks");
  EXPECT_EQ(flag.value, "weighted:w=1,2,1");
  EXPECT_EQ(flag.code, "blocks");
  EXPECT_EQ(flag.source, "--layout-matrix-a");
  EXPECT_EQ(made(flag).spec(), "weighted:w=1,2,1");
  env.config().set("layout-matrix-a", "nonsense");
  const std::string msg = error_of([&] { (void)made(hit::layout_setting(env, "matrix-a", "x")); });
  // The error names where the spec came from: the option that set it, else the variable.
  EXPECT_THAT(msg, HasSubstr("layout of 'matrix-a' set to 'nonsense' by --layout-matrix-a: "));
  EXPECT_THAT(msg, Not(HasSubstr("HIT_LAYOUT_MATRIX_A")));
  EXPECT_THAT(msg, HasSubstr("registered: "));
  ::setenv("HIT_LAYOUT_MATRIX_B", "nonsense", 1);
  EXPECT_THAT(error_of([&] { (void)made(hit::layout_setting(env, "matrix-b", "blocks")); }),
              HasSubstr("set to 'nonsense' by HIT_LAYOUT_MATRIX_B: "));
  // A bad spec the code wrote itself is not said to be set by anything.
  EXPECT_THAT(error_of([&] { (void)made("nonsense"); }), Not(HasSubstr("set to")));
  ::unsetenv("HIT_LAYOUT_MATRIX_B");
  ::unsetenv("HIT_LAYOUT_MATRIX_A");
  env.config().set("layout-matrix-a", "blocks");
}

}  // namespace
