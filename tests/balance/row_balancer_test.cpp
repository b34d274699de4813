// The row balancer's account of its moves' memory, serially.
#include <gtest/gtest.h>

#include "hit/balance/row_balancer.hpp"

namespace hit {
namespace {

TEST(RowBalancerMemory, AMoveAllocatesOnlyWhereABlockLeavesItsMemory) {
  std::vector<detail::RowSpan> reach;  // before the first move: the application's own tiles
  // 100 rows; every block goes to new memory with 10 % of its rows to spare, within the array.
  EXPECT_EQ(detail::allocated_rows(reach, {40, 60}, 0.1), 44 + 66);
  EXPECT_EQ(reach, (std::vector<detail::RowSpan>{{0, 44}, {34, 100}}));
  // Both blocks stay within their memory.
  EXPECT_EQ(detail::allocated_rows(reach, {42, 58}, 0.1), 0);
  // Rank 1 grows past its memory's first row: only it allocates, 7 rows to spare.
  EXPECT_EQ(detail::allocated_rows(reach, {30, 70}, 0.1), 77);
  EXPECT_EQ(reach[0], (detail::RowSpan{0, 44}));
  EXPECT_EQ(reach[1], (detail::RowSpan{23, 100}));
  // Rank 0 left without rows gives its memory up; coming back, it allocates again.
  EXPECT_EQ(detail::allocated_rows(reach, {0, 100}, 0.1), 100);
  EXPECT_EQ(reach[0], (detail::RowSpan{0, 0}));
  EXPECT_EQ(detail::allocated_rows(reach, {10, 90}, 0.1), 11);
  // No reserve: a block that grows by one row needs new memory.
  std::vector<detail::RowSpan> tight;
  EXPECT_EQ(detail::allocated_rows(tight, {50, 50}, 0), 100);
  EXPECT_EQ(detail::allocated_rows(tight, {49, 51}, 0), 51);
}

}  // namespace
}  // namespace hit
