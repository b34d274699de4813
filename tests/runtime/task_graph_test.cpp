// Dependency inference of the sequential task flow: every hazard kind, readers that run side by
// side, a chain, a diamond, a tile listed twice, the critical path, bad input.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/runtime/task_graph.hpp"

namespace {

using hit::runtime::Access;
using hit::runtime::TaskGraph;
using hit::runtime::TaskId;
using Ids = std::vector<TaskId>;

constexpr Access R = Access::read;
constexpr Access W = Access::write;
constexpr Access RW = Access::read_write;

TEST(TaskGraph, ReadAfterWriteWaitsForTheWriter) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}});
  const TaskId r = g.add({{0, R}});
  EXPECT_EQ(g.predecessors(r), Ids{w});
  EXPECT_EQ(g.successors(w), Ids{r});
}

TEST(TaskGraph, ReadersOfOneTileDoNotWaitForEachOther) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}});
  const TaskId r1 = g.add({{0, R}});
  const TaskId r2 = g.add({{0, R}});
  EXPECT_EQ(g.predecessors(r1), Ids{w});
  EXPECT_EQ(g.predecessors(r2), Ids{w});
  EXPECT_EQ(g.successors(w), (Ids{r1, r2}));
}

TEST(TaskGraph, WriteAfterReadWaitsForEveryReaderSinceTheLastWrite) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}});
  const TaskId r1 = g.add({{0, R}});
  const TaskId r2 = g.add({{0, R}});
  const TaskId w2 = g.add({{0, W}});
  // The readers already wait for the first writer: the second waits for them, not again for it.
  EXPECT_EQ(g.predecessors(w2), (Ids{r1, r2}));
  const TaskId r3 = g.add({{0, R}});
  EXPECT_EQ(g.predecessors(r3), Ids{w2});
  (void)w;
}

TEST(TaskGraph, WriteAfterWriteWithoutReadersWaitsForTheWriter) {
  TaskGraph g;
  const TaskId w1 = g.add({{3, W}});
  const TaskId w2 = g.add({{3, W}});
  EXPECT_EQ(g.predecessors(w2), Ids{w1});
}

TEST(TaskGraph, TheFirstUseOfATileWaitsForNothing) {
  TaskGraph g;
  EXPECT_TRUE(g.predecessors(g.add({{0, R}})).empty());
  EXPECT_TRUE(g.predecessors(g.add({{1, W}})).empty());
  EXPECT_TRUE(g.predecessors(g.add({{2, RW}})).empty());
}

TEST(TaskGraph, AReadWriteIsBothHazards) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}});
  const TaskId r = g.add({{0, R}});
  const TaskId rw = g.add({{0, RW}});
  EXPECT_EQ(g.predecessors(rw), Ids{r});  // after the reader (WAR), which came after w
  const TaskId r2 = g.add({{0, R}});
  EXPECT_EQ(g.predecessors(r2), Ids{rw});  // RAW on the read-write
  (void)w;
}

TEST(TaskGraph, AChainOfUpdates) {
  TaskGraph g;
  std::vector<TaskId> t;
  for (int i = 0; i < 5; ++i) t.push_back(g.add({{7, RW}}, 2.0));
  for (int i = 1; i < 5; ++i) EXPECT_EQ(g.predecessors(t[i]), Ids{t[i - 1]});
  EXPECT_DOUBLE_EQ(g.critical_path(), 10.0);
  const std::vector<double> level = g.bottom_levels();
  EXPECT_DOUBLE_EQ(level[0], 10.0);
  EXPECT_DOUBLE_EQ(level[4], 2.0);
}

TEST(TaskGraph, ADiamond) {
  // a writes 0; b and c read 0 and write 1 and 2; d reads 1 and 2.
  TaskGraph g;
  const TaskId a = g.add({{0, W}}, 1);
  const TaskId b = g.add({{0, R}, {1, W}}, 5);
  const TaskId c = g.add({{0, R}, {2, W}}, 2);
  const TaskId d = g.add({{1, R}, {2, R}}, 1);
  EXPECT_EQ(g.predecessors(b), Ids{a});
  EXPECT_EQ(g.predecessors(c), Ids{a});
  EXPECT_EQ(g.predecessors(d), (Ids{b, c}));
  EXPECT_EQ(g.successors(a), (Ids{b, c}));
  const std::vector<double> level = g.bottom_levels();
  EXPECT_DOUBLE_EQ(level[static_cast<std::size_t>(a)], 7.0);  // a, b, d
  EXPECT_DOUBLE_EQ(level[static_cast<std::size_t>(c)], 3.0);
  EXPECT_DOUBLE_EQ(g.critical_path(), 7.0);
}

TEST(TaskGraph, ATileListedTwiceCountsOnceWithBothUses) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}});
  const TaskId r = g.add({{0, R}});
  const TaskId t = g.add({{0, R}, {1, R}, {0, W}});
  ASSERT_EQ(g.accesses(t).size(), 2U);
  EXPECT_EQ(g.accesses(t)[0].mode, RW);
  EXPECT_EQ(g.predecessors(t), Ids{r});  // one edge, though two hazards lead to it
  (void)w;
}

TEST(TaskGraph, EdgesAreNotRepeatedAcrossTiles) {
  TaskGraph g;
  const TaskId w = g.add({{0, W}, {1, W}, {2, W}});
  const TaskId r = g.add({{0, R}, {1, R}, {2, RW}});
  EXPECT_EQ(g.predecessors(r), Ids{w});
  EXPECT_EQ(g.successors(w), Ids{r});
}

TEST(TaskGraph, BadInputIsAnError) {
  TaskGraph g;
  EXPECT_THROW(g.add({{-1, R}}), hit::Error);
  EXPECT_THROW(g.add({{0, R}}, -1.0), hit::Error);
  EXPECT_THROW(g.add({{0, R}}, std::numeric_limits<double>::infinity()), hit::Error);
  EXPECT_EQ(g.size(), 0U);
  EXPECT_THROW(g.predecessors(0), hit::Error);
  EXPECT_DOUBLE_EQ(g.critical_path(), 0.0);
}

}  // namespace
