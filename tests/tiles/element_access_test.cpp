// Element access, one meaning per spelling on Tile and View: a(i, j) takes array (global) indices,
// a.local(p, q) tile positions (0..extent-1), a.at(i, j) array indices always checked (Tile only),
// v.around(block) a view's positions counted from a block.
// Checked on shapes with an offset and a stride, where the two coordinates differ.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "hit/device.hpp"
#include "hit/tile.hpp"
#include "hit/view.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Tile;
using hit::View;

// Rows 3, 7, 11, 15, 19 and columns 5, 7, 9: an offset and a stride on both axes.
const char* const strided = "[3:20:4][5:11:2]";

TEST(ElementAccess, TileArrayIndicesAndPositionsNameTheSameElement) {
  const Shape s = Shape::parse(strided);
  Tile<double> t(s, {.ghost = 1});
  for (index_t p = 0; p < s.extent(0); ++p) {
    for (index_t q = 0; q < s.extent(1); ++q) {
      const index_t i = 3 + 4 * p, j = 5 + 2 * q;
      EXPECT_EQ(&t(i, j), &t.local(p, q)) << p << "," << q;
      EXPECT_EQ(&t.at(i, j), &t.local(Index{p, q}));
      EXPECT_EQ(&t(Index{i, j}), &t.at(Index{i, j}));
    }
  }
  // Ghost cells: position -1 is one stride before the first index, position extent one after
  // the last.
  EXPECT_EQ(&t.local(-1, -1), &t(-1, 3));
  EXPECT_EQ(&t.local(5, 3), &t(23, 11));
  // Through a view with an offset of its own, positions count from the view's first index.
  const Tile<double> v = t.select(Shape::parse("[7:20:8][7:10:2]"));
  EXPECT_EQ(&v.local(0, 0), &t(7, 7));
  EXPECT_EQ(&v.local(1, 1), &t(15, 9));
  EXPECT_EQ(&v(15, 9), &v.local(1, 1));
}

TEST(ElementAccess, TileAtThrowsOutsideTheAddressableIndices) {
  Tile<double> t(Shape::parse(strided), {.ghost = 1});
  t.at(7, 9) = 2.5;
  EXPECT_EQ(t(7, 9), 2.5);
  EXPECT_EQ(std::as_const(t).at(7, 9), 2.5);
  EXPECT_NO_THROW(t.at(-1, 3));  // a ghost cell
  EXPECT_THROW(t.at(27, 5), Error);
  EXPECT_THROW(t.at(4, 5), Error);  // between two rows of the stride
  EXPECT_THROW(t.at(3), Error);     // rank 1 on a 2-D tile
  try {
    t.at(3, 13);
    ADD_FAILURE() << "expected a hit::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("(3,13)"));
  }
}

TEST(ElementAccess, ViewArrayIndicesAndPositionsNameTheSameElement) {
  const Shape s = Shape::parse(strided);
  std::vector<double> memory(static_cast<std::size_t>(s.size() + 3 * s.extent(0)));
  const View<double> v = hit::make_view(memory.data(), s, s.extent(1) + 3);  // padded rows
  for (index_t p = 0; p < s.extent(0); ++p) {
    for (index_t q = 0; q < s.extent(1); ++q) {
      const index_t i = 3 + 4 * p, j = 5 + 2 * q;
      EXPECT_EQ(&v(i, j), &v.local(p, q)) << p << "," << q;
      EXPECT_EQ(&v.local(p, q), memory.data() + p * (s.extent(1) + 3) + q);
      EXPECT_EQ(v.position(0, i), p);
      EXPECT_EQ(v.position(1, j), q);
      EXPECT_TRUE(v.contains(i, j));
    }
  }
  EXPECT_FALSE(v.contains(4, 5));
  EXPECT_FALSE(v.contains(23, 5));
  EXPECT_FALSE(v.contains(3, 3));
  // Ranks 1 and 3.
  std::vector<int> line(4), box(2 * 3 * 4);
  const View<int> l = hit::make_view(line.data(), Shape::parse("[10:18:2]"));
  EXPECT_EQ(&l(14), &l.local(2));
  EXPECT_EQ(&l.local(2), line.data() + 2);
  const View<int> b = hit::make_view(box.data(), Shape::parse("[1:3][0:3][4:8]"));
  EXPECT_EQ(&b(2, 1, 7), &b.local(1, 1, 3));
  EXPECT_EQ(&b.local(1, 1, 3), box.data() + 12 + 4 + 3);
}

// A 2-D block as a launch hands it to a body: rows r0, r0 + rstep, ... < r1, columns likewise.
hit::Box box(index_t r0, index_t r1, index_t rstep, index_t c0, index_t c1, index_t cstep) {
  hit::Box b;
  b.rank = 2;
  b.begin[0] = r0, b.end[0] = r1, b.step[0] = rstep;
  b.begin[1] = c0, b.end[1] = c1, b.step[1] = cstep;
  return b;
}

TEST(ElementAccess, ViewAroundABlockCountsPositionsFromTheBlock) {
  const Shape s = Shape::parse(strided);
  std::vector<double> memory(static_cast<std::size_t>(s.size() + 3 * s.extent(0)));
  const View<double> v = hit::make_view(memory.data(), s, s.extent(1) + 3);
  const View<double> a = v.around(box(7, 16, 4, 7, 10, 2));
  for (index_t r = 0; r < 3; ++r) {
    for (index_t c = 0; c < 2; ++c) {
      EXPECT_EQ(&a.local(r, c), &v(7 + 4 * r, 7 + 2 * c)) << r << "," << c;
    }
  }
  // Neighbours on both sides, up to the view's own ends; array indices still name the same
  // elements (the one before the block too).
  EXPECT_EQ(&a.local(-1, -1), &v(3, 5));
  EXPECT_EQ(&a.local(3, 1), &v(19, 9));
  EXPECT_EQ(&a(3, 5), &v(3, 5));
  EXPECT_EQ(a.position(0, 3), -1);
  EXPECT_TRUE(a.contains(19, 5));
  EXPECT_FALSE(a.contains(23, 5));
  EXPECT_EQ(a.extent[0], 4);  // rows 7, 11, 15, 19: to the view's last row
  EXPECT_EQ(a.below[0], 1);   // row 3
  // A block twice as sparse as the view along its rows: positions advance by the block's step.
  const View<double> sparse = v.around(box(3, 20, 8, 7, 12, 2));
  EXPECT_EQ(&sparse.local(1, 0), &v(11, 7));
  EXPECT_EQ(&sparse.local(2, 1), &v(19, 9));
  EXPECT_EQ(&sparse.local(0, -1), &v(3, 5));
  EXPECT_EQ(sparse.extent[0], 3);
  // Re-basing a re-based view is re-basing the original.
  EXPECT_EQ(&a.around(box(11, 16, 4, 9, 10, 2)).local(-1, -1), &v(7, 7));
  // An empty block: an empty view.
  EXPECT_EQ(v.around(box(7, 7, 4, 7, 10, 2)).size(), 0);
}

TEST(ElementAccess, ViewDebugBuildsCheckTheHotPath) {
#ifdef NDEBUG
  GTEST_SKIP() << "View access is checked with assert() only in debug builds (NDEBUG unset)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<double> memory(15);
  const View<double> v = hit::make_view(memory.data(), Shape::parse(strided));
  EXPECT_NO_FATAL_FAILURE(v.local(4, 2));
  EXPECT_DEATH(v.local(5, 0), "");   // past the extent
  EXPECT_DEATH(v.local(0, -1), "");  // a View has no ghost cells
  EXPECT_DEATH(v.local(1), "");      // rank 1 on a 2-D view
  EXPECT_DEATH(v(4, 5), "");         // between two rows of the stride
  EXPECT_DEATH(v(23, 5), "");        // past the last row
  EXPECT_DEATH(v.position(1, 12), "");
  // Around a block: positions before the view's first row are not the view's.
  const View<double> a = v.around(box(7, 16, 4, 5, 10, 2));
  EXPECT_NO_FATAL_FAILURE(a.local(-1, 0));
  EXPECT_DEATH(a.local(-2, 0), "");
  EXPECT_DEATH(a.local(0, -1), "");
  EXPECT_DEATH(a.local(4, 0), "");
  EXPECT_DEATH(v.around(box(9, 16, 4, 5, 10, 2)), "");  // row 9 is not one of the view's
#endif
}

}  // namespace
