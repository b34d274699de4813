#include <gtest/gtest.h>

#include "hit/shape.hpp"

TEST(ShapeSmoke, ParsePrint) {
  const auto s = hit::Shape::parse("[0:10][0:20:2]");
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.size(), 100);
  EXPECT_EQ(s.str(), "[0:10][0:20:2]");
}
