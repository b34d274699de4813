// Tests of hit::detail::Region, the type-erased memory description the comm and device layers
// share. Every address is checked against the tile that owns the memory: the element a region
// (or a view made of it) names at an array index must be the very object Tile::at() returns.
#include <gtest/gtest.h>

#include <array>

#include "hit/detail/region.hpp"
#include "hit/tile.hpp"
#include "hit/view.hpp"

namespace {

using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Sig;
using hit::Tile;
using hit::detail::Region;

// The address a region gives array index `i`, from its steps alone.
const void* address(const Region& r, const Index& i) {
  index_t off = 0;
  for (int k = 0; k < r.rank(); ++k) {
    off += (i[k] - r.shape[k].begin()) / r.shape[k].stride() * r.steps[static_cast<std::size_t>(k)];
  }
  return r.byte_at(off);
}

void expect_addresses_of(const Region& r, const Tile<double>& owner) {
  ASSERT_EQ(r.element_size, sizeof(double));
  r.shape.for_each([&](const Index& i) {
    EXPECT_EQ(address(r, i), static_cast<const void*>(&owner.at(i))) << i.str();
  });
}

TEST(Region, OfATileNamesTheTilesElementsGhostsAndPaddingIncluded) {
  const Shape s{Sig(10, 16), Sig(3, 12, 3)};  // rows 10..15, columns 3, 6, 9
  Tile<double> t(s, {.max_shape = Shape::extents({7, 4}), .ghost = 1});
  const Region whole = hit::detail::region_of(t, t.allocated_shape());
  EXPECT_EQ(whole.shape, t.allocated_shape());
  expect_addresses_of(whole, t);
  const Region ghosts = hit::detail::region_of(t);
  EXPECT_EQ(ghosts.shape, t.ghost_shape());
  expect_addresses_of(ghosts, t);
}

TEST(Region, SelectMatchesTheTilesOwnSelection) {
  Tile<double> t(Shape{Sig(0, 12), Sig(0, 20, 2)}, {.ghost = 2});
  const Region r = hit::detail::region_of(t, t.shape());
  // Every other row, every third column, reaching into the ghost ring on both sides.
  for (const Shape& sub : {Shape{Sig(-2, 14, 2), Sig(-4, 24, 6)}, Shape{Sig(5, 6), Sig(2, 18, 4)},
                           Shape{Sig(3, 4), Sig(8, 10, 2)}}) {
    const Region picked = r.select(sub);
    const Region expected = hit::detail::region_of(t, sub);
    EXPECT_EQ(picked.data, expected.data) << sub.str();
    EXPECT_EQ(picked.shape, sub);
    expect_addresses_of(picked, t);
    // Selecting again from the selection reaches the same elements.
    if (sub.extent(1) < 2) continue;
    const Shape inner = sub.select_tile(Shape{Sig(0, 1), Sig(1, sub.extent(1))});
    EXPECT_EQ(picked.select(inner).data, r.select(inner).data) << inner.str();
    expect_addresses_of(picked.select(inner), t);
  }
}

TEST(Region, ContiguousOnlyWhenTheElementsAreOneDenseRun) {
  Tile<double> dense(Shape::extents({4, 5}));
  EXPECT_TRUE(hit::detail::region_of(dense, dense.shape()).contiguous());
  // Rows of a wider allocation: dense rows, but gaps between them.
  Tile<double> padded(Shape::extents({4, 5}), {.max_shape = Shape::extents({4, 8})});
  EXPECT_FALSE(hit::detail::region_of(padded, padded.shape()).contiguous());
  // One row of it is dense; a column is not.
  EXPECT_TRUE(hit::detail::region_of(padded, Shape{Sig(2, 3), Sig(0, 5)}).contiguous());
  EXPECT_FALSE(hit::detail::region_of(dense, Shape{Sig(0, 4), Sig(1, 2)}).contiguous());
  // A single column of a single row is one element.
  EXPECT_TRUE(hit::detail::region_of(dense, Shape{Sig(1, 2), Sig(3, 4)}).contiguous());
}

TEST(Region, ViewOfARegionAddressesTheSameElements) {
  Tile<double> t(Shape{Sig(4, 9), Sig(0, 12, 3)}, {.ghost = 1});
  const Region r = hit::detail::region_of(t);
  const hit::View<double> v = hit::detail::view_of<double>(r);
  ASSERT_EQ(v.rank, 2);
  EXPECT_EQ(v.extent[0], r.shape.extent(0));
  EXPECT_EQ(v.extent[1], r.shape.extent(1));
  r.shape.for_each([&](const Index& i) { EXPECT_EQ(&v(i[0], i[1]), &t.at(i)) << i.str(); });
  // Bytes: the same positions, counted in elements all the same.
  const auto bytes = hit::detail::view_of<unsigned char>(r);
  EXPECT_EQ(bytes.stride[0], v.stride[0]);
  EXPECT_EQ(bytes.origin[1], v.origin[1]);
}

TEST(Region, PlacedAtKeepsTheLayoutAtAnotherAddress) {
  std::array<double, 64> device{};
  Region layout;  // a staged region before its allocation: offsets only
  layout.element_size = sizeof(double);
  layout.shape = Shape{Sig(2, 6), Sig(0, 6)};
  layout.steps = {8, 1};  // rows padded to 8 elements
  EXPECT_EQ(layout.select(Shape{Sig(3, 4), Sig(2, 4)}).data, nullptr);
  const Region placed = layout.placed_at(device.data());
  EXPECT_EQ(placed.select(Shape{Sig(3, 4), Sig(2, 4)}).data, &device[8 + 2]);
  EXPECT_EQ(placed.offset_of(Shape{Sig(5, 6), Sig(5, 6)}), 3 * 8 + 5);
}

TEST(Region, DenseStepsAreRowMajorAndCountAnEmptyAxisAsOne) {
  EXPECT_EQ(hit::detail::dense_steps(Shape::extents({3, 4, 5})),
            (std::array<index_t, hit::max_rank>{20, 5, 1}));
  EXPECT_EQ(hit::detail::dense_steps(Shape{Sig(0, 10, 2), Sig(0, 0)}),
            (std::array<index_t, hit::max_rank>{1, 1}));
  EXPECT_EQ(Region{}.elements(), 0);
}

}  // namespace
