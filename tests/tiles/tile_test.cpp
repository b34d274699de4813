// Tests of hit::Tile<T>: owning tiles, views (of views, strided), padding, ghosts, copies.
// Addresses are checked independently of the implementation: a view's element must be the very
// object the owner holds at the same array index, and an owner's memory is checked to be exactly
// the row-major box of the allocated extents.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "hit/tile.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Sig;
using hit::Tile;
using hit::TileOptions;
using ::testing::HasSubstr;

template <class F>
void expect_error(F&& fn, ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a hit::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

// A value that identifies its index: distinct for every index of the small shapes used here.
double value_of(const Index& i) {
  double v = 0;
  for (int k = 0; k < i.rank(); ++k) v = v * 1000 + static_cast<double>(i[k] + 100);
  return v;
}

std::vector<Index> indices_of(const Shape& s) {
  std::vector<Index> out;
  s.for_each([&](const Index& i) { out.push_back(i); });
  return out;
}

// Row-major offsets of every index of `allocated` in a dense box: what the owner's memory must be.
index_t dense_offset(const Shape& allocated, const Index& i) {
  index_t off = 0;
  for (int k = 0; k < allocated.rank(); ++k) {
    off = off * allocated.extent(k) + allocated[k].to_tile(i[k]);
  }
  return off;
}

// ---- owning tiles -----------------------------------------------------------------------------

TEST(Tile, NullTile) {
  Tile<double> t;
  EXPECT_TRUE(t.is_null());
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.is_view());
  EXPECT_EQ(t.size(), 0);
  EXPECT_EQ(t.data(), nullptr);
  EXPECT_EQ(t.allocated_bytes(), 0);
  EXPECT_TRUE(t.to_vector().empty());
  t.fill(1.0);  // nothing to fill
  EXPECT_TRUE(t.select(Shape()).is_null());
  EXPECT_TRUE(t.clone().is_null());
  EXPECT_TRUE(Tile<double>(Shape()).is_null());
  Tile<double> u;
  u.copy_from(t);
  EXPECT_TRUE(t.contiguous());
}

TEST(Tile, OwningTileIsZeroedRowMajorAndAligned) {
  const Shape s = Shape::parse("[2:5][10:14]");
  Tile<double> t(s);
  EXPECT_FALSE(t.is_null());
  EXPECT_FALSE(t.is_view());
  EXPECT_EQ(t.shape(), s);
  EXPECT_EQ(t.ghost_shape(), s);
  EXPECT_EQ(t.padded_shape(), s);
  EXPECT_EQ(t.size(), 12);
  EXPECT_EQ(t.allocated_bytes(), 12 * 8);
  EXPECT_EQ(t.step(0), 4);
  EXPECT_EQ(t.step(1), 1);
  EXPECT_TRUE(t.contiguous());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
  for (double v : t.to_vector()) EXPECT_EQ(v, 0.0);
  for (const Index& i : indices_of(s)) t(i) = value_of(i);
  EXPECT_EQ(t.data(), &t(2, 10));
  for (const Index& i : indices_of(s)) {
    EXPECT_EQ(&t(i), t.data() + dense_offset(s, i)) << i;
    EXPECT_EQ(&t(i[0], i[1]), &t(i));
    EXPECT_EQ(&t.at(i), &t(i));
    EXPECT_EQ(&t.local(s.to_tile(i)), &t(i));
  }
  std::vector<double> expected;
  for (const Index& i : indices_of(s)) expected.push_back(value_of(i));
  EXPECT_EQ(t.to_vector(), expected);
  const Tile<double>& c = t;
  EXPECT_EQ(c(3, 11), value_of(Index{3, 11}));
  EXPECT_EQ(c.at(Index{4, 13}), value_of(Index{4, 13}));
}

TEST(Tile, CopyIsAHandleCloneIsDeep) {
  Tile<int> a(Shape::parse("[0:3][0:3]"), {.ghost = 1});
  a(-1, -1) = 7;
  Tile<int> b = a;  // same memory
  b(1, 1) = 5;
  EXPECT_EQ(a(1, 1), 5);
  EXPECT_EQ(b.data(), a.data());
  Tile<int> c = a.clone();
  EXPECT_FALSE(c.is_view());
  EXPECT_NE(c.data(), a.data());
  EXPECT_EQ(c.shape(), a.shape());
  EXPECT_EQ(c.ghost(), 1);
  EXPECT_EQ(c.allocated_bytes(), a.allocated_bytes());
  EXPECT_EQ(c(1, 1), 5);
  EXPECT_EQ(c(-1, -1), 7);  // ghost cells are copied too
  c(1, 1) = 9;
  EXPECT_EQ(a(1, 1), 5);
}

TEST(Tile, ViewKeepsOwnerAlive) {
  Tile<double> view;
  {
    Tile<double> owner(Shape::extents({4, 4}));
    owner.fill(3.5);
    view = owner.select(Shape::parse("[1:3][1:3]"));
  }
  for (double v : view.to_vector()) EXPECT_EQ(v, 3.5);
  view.fill(1.0);
  EXPECT_EQ(view(2, 2), 1.0);
}

TEST(Tile, WithinViewsABlockWithItsGhostsInPlace) {
  // Storage for rows 0..9 with one ghost cell: blocks of it keep their elements' addresses.
  const Tile<double> storage(Shape{Sig(0, 10), Sig(0, 4)}, TileOptions{{}, 1});
  const Shape block{Sig(3, 6), Sig(0, 4)};
  Tile<double> t = storage.within(block, 1);
  EXPECT_EQ(t.shape(), block);
  EXPECT_EQ(t.ghost(), 1);
  EXPECT_EQ(t.allocated_shape(), block.expand(1));
  for (const Index& i : indices_of(block.expand(1))) {
    EXPECT_EQ(&t(i[0], i[1]), &storage(i[0], i[1])) << i.str();
  }
  // A larger block of the same storage sees the same elements where the two overlap.
  Tile<double> grown = storage.within(Shape{Sig(1, 9), Sig(0, 4)}, 1);
  EXPECT_EQ(&grown(4, 2), &t(4, 2));
  // Outside the storage's reach, or on other strides: an error naming the selection.
  expect_error(
      [&] {
        (void)storage.within(Shape{Sig(0, 10), Sig(0, 4)}, 2);
      },
      ErrorKind::shape, {"[-2:12]"});
  expect_error(
      [&] {
        (void)storage.within(Shape{Sig(0, 10, 2), Sig(0, 4)}, 1);
      },
      ErrorKind::shape, {});
  expect_error([&] { (void)Tile<double>().within(block, 0); }, ErrorKind::shape, {});
}

TEST(Tile, StridedOwner) {
  // A cyclic layout's block: every third row, columns 1..3.
  const Shape s = Shape::parse("[1:12:3][1:4]");
  Tile<double> t(s);
  EXPECT_EQ(t.size(), 12);
  EXPECT_EQ(t.step(0), 3);  // memory is compact by position
  EXPECT_EQ(t.step(1), 1);
  EXPECT_TRUE(t.contiguous());
  EXPECT_EQ(t.allocated_bytes(), 12 * 8);
  for (const Index& i : indices_of(s)) t(i) = value_of(i);
  for (const Index& i : indices_of(s)) EXPECT_EQ(&t(i), t.data() + dense_offset(s, i));
  EXPECT_EQ(t(7, 2), value_of(Index{7, 2}));
  EXPECT_EQ(t.local(Index{2, 1}), value_of(Index{7, 2}));
}

// Array index -> memory for every stride 1..16 (odd, even, powers of two), negative begins and
// ghosts: position (i - begin) / stride times the step, counted from data().
TEST(Tile, AddressingForEveryStride) {
  for (index_t stride = 1; stride <= 16; ++stride) {
    for (index_t begin : {-37, -1, 0, 5}) {
      for (index_t ghost : {0, 1, 3}) {
        const Shape s{Sig(-3, 9), Sig(begin, begin + 6 * stride, stride)};
        Tile<float> t(s, {.max_shape = Shape::extents({1, 8}), .ghost = ghost});
        t.allocated_shape().for_each([&](const Index& i) {
          const index_t p0 = i[0] + 3, p1 = (i[1] - begin) / stride;
          ASSERT_EQ(&t(i), t.data() + p0 * t.step(0) + p1 * t.step(1)) << s << " " << i;
          ASSERT_EQ(&t(i[0], i[1]), &t(i));
        });
        EXPECT_EQ(t.step(0), 8 + 2 * ghost);
      }
    }
  }
}

// ---- views ------------------------------------------------------------------------------------

TEST(Tile, ViewsWriteThroughToTheOwner) {
  Tile<double> a(Shape::extents({6, 8}));
  Tile<double> v = a.select(Shape::parse("[1:4][2:7]"));
  EXPECT_TRUE(v.is_view());
  EXPECT_EQ(v.shape(), Shape::parse("[1:4][2:7]"));
  EXPECT_EQ(v.data(), &a(1, 2));
  EXPECT_EQ(v.step(0), 8);
  EXPECT_EQ(v.step(1), 1);
  EXPECT_FALSE(v.contiguous());
  EXPECT_EQ(v.allocated_bytes(), a.allocated_bytes());
  v.fill(2.0);
  Tile<double> w = v.select(Shape::parse("[2:4][3:5]"));  // view of a view
  w(3, 4) = 9.0;
  for (const Index& i : indices_of(a.shape())) {
    const bool in_v = v.shape().contains(i);
    const double expected = i == Index{3, 4} ? 9.0 : (in_v ? 2.0 : 0.0);
    EXPECT_EQ(a(i), expected) << i;
  }
  EXPECT_EQ(&w(3, 4), &a(3, 4));
  // Full rows of an unpadded owner are one run; a single row is one run.
  EXPECT_TRUE(a.select(Shape::parse("[2:5][0:8]")).contiguous());
  EXPECT_TRUE(a.select(Shape::parse("[2:3][1:5]")).contiguous());
  EXPECT_FALSE(a.select(Shape::parse("[2:5][0:1]")).contiguous());
}

TEST(Tile, StridedViewsOfEveryOtherElement) {
  Tile<double> a(Shape::extents({16, 16}));
  for (const Index& i : indices_of(a.shape())) a(i) = value_of(i);
  Tile<double> v1 = a.select(Shape::parse("[0:16:2][0:16:3]"));
  EXPECT_EQ(v1.step(0), 32);
  EXPECT_EQ(v1.step(1), 3);
  EXPECT_EQ(v1.size(), 8 * 6);
  Tile<double> v2 = v1.select(Shape::parse("[4:16:4][3:16:6]"));
  EXPECT_EQ(v2.step(0), 64);
  EXPECT_EQ(v2.step(1), 6);
  EXPECT_EQ(v2(8, 9), value_of(Index{8, 9}));
  v2(8, 9) = -1;
  EXPECT_EQ(a(8, 9), -1);
  // Tile coordinates of a strided view count its own positions.
  EXPECT_EQ(&v1.local(Index{1, 2}), &a(2, 6));
  EXPECT_EQ(&v1.select_tile(Shape::parse("[1:3][2:4]")).local(Index{1, 1}), &a(4, 9));
  // A view of every other element must not be accepted off its lattice.
  expect_error([&] { v1.select(Shape::parse("[1:5:2][0:1]")); }, ErrorKind::shape,
               {"[1:5:2][0:1]", "[0:16:2][0:16:3]"});
}

// Random chains of selections: every element of the last view is the owner's object at that index.
TEST(Tile, NestedRandomViewsAddressTheOwnersElements) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + trial % 3;
    Shape s = Shape::of_rank(rank);
    std::uniform_int_distribution<index_t> ext(3, 9), beg(-5, 5), str(1, 3), g(0, 2);
    for (int k = 0; k < rank; ++k) {
      const index_t b = beg(rng), st = str(rng);
      s = s.with_sig(k, Sig(b, b + ext(rng) * st, st));
    }
    Shape max = Shape::of_rank(rank);
    for (int k = 0; k < rank; ++k) max = max.with_sig(k, Sig(0, ext(rng)));
    Tile<double> owner(s, {.max_shape = max, .ghost = g(rng)});
    const Shape all = owner.allocated_shape();
    for (const Index& i : indices_of(all)) owner(i) = value_of(i);
    Tile<double> v = trial % 2 ? owner.with_ghosts() : owner.padded();
    for (int level = 0; level < 3 && !v.empty(); ++level) {
      Shape pos = Shape::of_rank(rank);
      for (int k = 0; k < rank; ++k) {
        const index_t e = v.shape().extent(k);
        std::uniform_int_distribution<index_t> first(0, e - 1);
        const index_t f = first(rng);
        std::uniform_int_distribution<index_t> last(f + 1, e), step(1, 2);
        pos = pos.with_sig(k, Sig(f, last(rng), step(rng)));
      }
      v = v.select_tile(pos);
      ASSERT_TRUE(owner.allocated_shape().includes(v.shape()));
    }
    std::vector<double> expected;
    for (const Index& i : indices_of(v.shape())) {
      ASSERT_EQ(&v(i), &owner(i)) << "trial " << trial << " " << v.shape() << " " << i;
      expected.push_back(value_of(i));
    }
    EXPECT_EQ(v.to_vector(), expected);
    index_t p = 0;
    v.for_each([&](const Index& i, double& x) {
      EXPECT_EQ(&x, &owner(i));
      EXPECT_EQ(&v.local(v.shape().to_tile(i)), &x);
      ++p;
    });
    EXPECT_EQ(p, v.size());
  }
}

// ---- padding and ghosts -----------------------------------------------------------------------

TEST(Tile, PaddingAndGhostsGeometry) {
  const Shape s = Shape::parse("[0:3][10:15]");
  Tile<float> t(s, {.max_shape = Shape::parse("[0:4][0:6]"), .ghost = 1});
  EXPECT_EQ(t.ghost(), 1);
  EXPECT_EQ(t.shape(), s);
  EXPECT_EQ(t.padded_shape(), Shape::parse("[0:4][10:16]"));
  EXPECT_EQ(t.ghost_shape(), Shape::parse("[-1:4][9:16]"));
  EXPECT_EQ(t.allocated_shape(), Shape::parse("[-1:5][9:17]"));
  EXPECT_EQ(t.allocated_bytes(), 6 * 8 * static_cast<index_t>(sizeof(float)));
  EXPECT_EQ(t.step(0), 8);
  EXPECT_EQ(t.step(1), 1);
  EXPECT_FALSE(t.contiguous());
  // The memory is exactly the allocated box, row-major, aligned at the first ghost cell.
  const float* base = &t(-1, 9);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(base) % 64, 0u);
  const Shape all = t.allocated_shape();
  for (const Index& i : indices_of(all)) {
    EXPECT_EQ(&t(i), base + dense_offset(all, i)) << i;
    EXPECT_EQ(t(i), 0.0f);
  }
  EXPECT_EQ(t.data(), base + 8 + 1);
  EXPECT_EQ(&t.local(Index{-1, -1}), &t(-1, 9));
  EXPECT_EQ(&t.local(Index{4, 6}), &t(4, 16));

  Tile<float> g = t.with_ghosts();
  EXPECT_TRUE(g.is_view());
  EXPECT_EQ(g.shape(), t.ghost_shape());
  EXPECT_EQ(g.ghost(), 0);
  EXPECT_EQ(g.data(), base);
  Tile<float> p = t.padded();
  EXPECT_TRUE(p.is_view());
  EXPECT_EQ(p.shape(), t.padded_shape());
  EXPECT_EQ(p.ghost(), 1);
  EXPECT_EQ(p.data(), t.data());
  EXPECT_EQ(p.with_ghosts().shape(), all);
  EXPECT_EQ(p.allocated_shape(), all);
  // Ghost rows with padded columns lie in neither ghost_shape() nor padded_shape() alone.
  EXPECT_EQ(t.select(Shape::parse("[-1:0][10:17]")).data(), &t(-1, 10));
}

TEST(Tile, PaddingOnlyWhereMaxShapeIsLarger) {
  Tile<double> t(Shape::parse("[5:9][0:10:2]"), {.max_shape = Shape::extents({3, 7})});
  EXPECT_EQ(t.padded_shape(), Shape::parse("[5:9][0:13:2]"));
  EXPECT_EQ(t.padded_shape().extent(1), 7);
  EXPECT_EQ(t.allocated_bytes(), 4 * 7 * 8);
  EXPECT_EQ(t.step(0), 7);
  Tile<double> same(Shape::parse("[5:9]"), {.max_shape = Shape::parse("[0:4]")});
  EXPECT_EQ(same.padded_shape(), same.shape());
  EXPECT_EQ(same.allocated_bytes(), 32);
}

TEST(Tile, StridedShapeWithGhosts) {
  Tile<std::int64_t> t(Shape::parse("[0:10:2]"), {.ghost = 2});
  EXPECT_EQ(t.ghost_shape(), Shape::parse("[-4:13:2]"));
  EXPECT_EQ(t.allocated_bytes(), 9 * 8);
  t(-4) = 1;
  t(-2) = 2;
  t(10) = 3;
  t(12) = 4;
  EXPECT_EQ(&t(-2) + 1, t.data());
  EXPECT_EQ(&t(12) - 6, t.data());
  const auto g = t.with_ghosts().to_vector();
  EXPECT_EQ(g, (std::vector<std::int64_t>{1, 2, 0, 0, 0, 0, 0, 3, 4}));
  EXPECT_FALSE(t.addressable(Index{14}));
  EXPECT_FALSE(t.addressable(Index{1}));
  EXPECT_TRUE(t.addressable(Index{-4}));
}

TEST(Tile, EmptyShapeWithGhosts) {
  Tile<double> t(Shape::parse("[0:0][0:3]"), {.ghost = 1});
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.is_null());
  EXPECT_TRUE(t.to_vector().empty());
  EXPECT_EQ(t.allocated_bytes(), 2 * 5 * 8);
  EXPECT_EQ(t.with_ghosts().size(), 10);
  t.with_ghosts().fill(4.0);
  EXPECT_EQ(t(-1, -1), 4.0);
  EXPECT_EQ(t(0, 3), 4.0);
  Tile<double> none(Shape::parse("[0:0]"));
  EXPECT_EQ(none.allocated_bytes(), 0);
  EXPECT_TRUE(none.to_vector().empty());
}

TEST(Tile, RankEightEveryAllocatedIndexHasItsOwnElement) {
  const Shape s = Shape::parse("[0:2][1:3][0:2][0:1][0:2][-2:0][0:2][0:4:2]");
  Tile<std::int32_t> t(s, {.ghost = 1});
  const Shape all = t.allocated_shape();
  EXPECT_EQ(all.size(), 4 * 4 * 4 * 3 * 4 * 4 * 4 * 4);
  EXPECT_EQ(t.allocated_bytes(), all.size() * 4);
  const std::int32_t* base = &t(all.first());
  for (const Index& i : indices_of(all)) ASSERT_EQ(&t(i), base + dense_offset(all, i)) << i;
  std::int32_t n = 0;
  t.for_each([&](const Index&, std::int32_t& x) { x = ++n; });
  EXPECT_EQ(n, s.size());
  EXPECT_EQ(t(Index{1, 2, 1, 0, 1, -1, 1, 2}), n);
}

// ---- whole-tile operations --------------------------------------------------------------------

TEST(Tile, CopyFromBetweenDifferentlyStridedTiles) {
  Tile<double> src(Shape::extents({8, 8}));
  for (const Index& i : indices_of(src.shape())) src(i) = value_of(i);
  Tile<double> from = src.select(Shape::parse("[0:8:2][1:8:3]"));  // 4 x 3
  Tile<double> dst(Shape::parse("[100:104][5:11:2]"), {.ghost = 2});
  dst.copy_from(from);
  for (index_t p = 0; p < 4; ++p) {
    for (index_t q = 0; q < 3; ++q) {
      EXPECT_EQ(dst(100 + p, 5 + 2 * q), value_of(Index{2 * p, 1 + 3 * q})) << p << "," << q;
    }
  }
  EXPECT_EQ(dst(98, 1), 0.0);  // ghost cells untouched
  // Back into a strided view of a zeroed tile: exactly those elements change.
  Tile<double> back(Shape::extents({8, 8}));
  back.select(Shape::parse("[0:8:2][1:8:3]")).copy_from(dst);
  for (const Index& i : indices_of(back.shape())) {
    const bool on = i[0] % 2 == 0 && i[1] % 3 == 1;
    EXPECT_EQ(back(i), on ? value_of(i) : 0.0) << i;
  }
  // Copying a tile onto itself changes nothing.
  back.copy_from(back);
  EXPECT_EQ(back(2, 4), value_of(Index{2, 4}));
}

TEST(Tile, FillOnlyTouchesTheView) {
  Tile<int> a(Shape::extents({5, 5}), {.ghost = 1});
  a.select(Shape::parse("[1:5:2][0:5:4]")).fill(7);
  for (const Index& i : indices_of(a.allocated_shape())) {
    const bool on = (i[0] == 1 || i[0] == 3) && (i[1] == 0 || i[1] == 4);
    EXPECT_EQ(a(i), on ? 7 : 0) << i;
  }
  a.fill(1);
  EXPECT_EQ(a(-1, -1), 0);  // fill covers shape() only
  EXPECT_EQ(a(4, 4), 1);
}

TEST(Tile, ForEachIsRowMajorInArrayCoordinates) {
  Tile<double> t(Shape::parse("[-2:3:2][7:10]"), {.ghost = 1});
  std::vector<Index> seen;
  t.for_each([&](const Index& i, double& x) {
    seen.push_back(i);
    x = value_of(i);
  });
  EXPECT_EQ(seen, indices_of(t.shape()));
  const Tile<double>& c = t;
  double sum = 0;
  c.for_each([&](const Index& i, const double& x) {
    EXPECT_EQ(x, value_of(i));
    sum += x;
  });
  double expected = 0;
  for (const Index& i : indices_of(t.shape())) expected += value_of(i);
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(t(-4, 6), 0.0);  // a ghost cell
}

template <class T>
class TileTyped : public ::testing::Test {};
using ElementTypes =
    ::testing::Types<double, float, std::int32_t, std::int64_t, std::uint8_t, std::complex<double>>;
TYPED_TEST_SUITE(TileTyped, ElementTypes);

TYPED_TEST(TileTyped, RoundTripThroughAView) {
  using T = TypeParam;
  Tile<T> a(Shape::extents({4, 5}), {.ghost = 1});
  EXPECT_EQ(a.allocated_bytes(), 6 * 7 * static_cast<index_t>(sizeof(T)));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&a(-1, -1)) % 64, 0u);
  a.for_each([](const Index& i, T& x) { x = static_cast<T>(i[0] * 5 + i[1]); });
  Tile<T> v = a.select(Shape::parse("[1:4:2][0:5:2]"));
  std::vector<T> expected;
  for (index_t i : {1, 3}) {
    for (index_t j : {0, 2, 4}) expected.push_back(static_cast<T>(i * 5 + j));
  }
  EXPECT_EQ(v.to_vector(), expected);
  Tile<T> c = v.clone();
  EXPECT_EQ(c.to_vector(), expected);
  EXPECT_TRUE(c.contiguous());
}

// ---- bad input --------------------------------------------------------------------------------

TEST(Tile, BadInput) {
  expect_error([] { Tile<double>(Shape::extents({3}), {.ghost = -1}); },
               ErrorKind::invalid_argument, {"ghost", "got -1"});
  expect_error(
      [] {
        Tile<double>(Shape::extents({3}), {.max_shape = Shape::extents({3, 3})});
      },
      ErrorKind::shape, {"[0:3][0:3]", "rank 2", "[0:3]", "rank 1"});
  Tile<double> t(Shape::parse("[0:4][0:4]"), {.ghost = 1});
  expect_error([&] { t.select(Shape::parse("[0:6][0:2]")); }, ErrorKind::shape,
               {"[0:6][0:2]", "[0:4][0:4]", "[-1:5][-1:5]"});
  expect_error([&] { t.select(Shape::parse("[0:2]")); }, ErrorKind::shape, {"[0:2]"});
  expect_error([&] { t.select(Shape()); }, ErrorKind::shape, {"cannot select []"});
  expect_error([&] { t.select_tile(Shape::parse("[0:5][0:1]")); }, ErrorKind::shape,
               {"[0:5][0:1]"});
  expect_error([&] { t.step(2); }, ErrorKind::invalid_argument, {"axis 2", "rank 2"});
  expect_error([&] { t.at(Index{5, 0}); }, ErrorKind::shape, {"(5,0)", "[0:4][0:4]"});
  expect_error([&] { t.at(Index{0}); }, ErrorKind::shape, {"(0)"});
  Tile<double> other(Shape::parse("[0:4][0:3]"));
  expect_error([&] { t.copy_from(other); }, ErrorKind::shape,
               {"[0:4][0:3] (extents 4x3)", "[0:4][0:4] (extents 4x4)"});
  expect_error([&] { t.copy_from(Tile<double>(Shape::extents({16}))); }, ErrorKind::shape,
               {"extents 16"});
  // More indices than a count holds is not a shape at all; a shape whose bytes do not fit is a
  // tile too large to allocate.
  expect_error(
      [] {
        (void)Shape::extents({1 << 30, 1 << 30, 1 << 30});
      },
      ErrorKind::invalid_argument, {"[0:1073741824][0:1073741824][0:1073741824]", "has more than"});
  expect_error(
      [] {
        Tile<double>(Shape::extents({index_t{1} << 31, index_t{1} << 31}));
      },
      ErrorKind::out_of_memory, {"[0:2147483648][0:2147483648]", "too large"});
  expect_error(
      [] {
        Tile<double>(Shape::extents({1 << 20, 1 << 20}), {.max_shape = {}, .ghost = 1 << 22});
      },
      ErrorKind::out_of_memory,
      {"cannot allocate", "bytes of host memory for a tile (", " TiB): the problem is too large"});
}

TEST(Tile, DebugBuildsCheckTheHotPath) {
#ifdef NDEBUG
  GTEST_SKIP() << "operator() and local() are bounds-checked only in debug builds (NDEBUG unset)";
#else
  Tile<double> t(Shape::parse("[0:4][0:4]"), {.ghost = 1});
  EXPECT_NO_THROW(t(-1, 4));
  expect_error([&] { t(5, 0); }, ErrorKind::shape, {"(5,0)", "[-1:5][-1:5]"});
  expect_error([&] { t(0); }, ErrorKind::shape, {"(0)"});
  expect_error([&] { t.local(Index{0, 6}); }, ErrorKind::shape, {"(0,6)"});
  // Tile positions reach the ghost cells, and no further.
  EXPECT_NO_THROW(t.local(-1, 4));
  expect_error([&] { t.local(-2, 0); }, ErrorKind::shape, {"(-2,0)", "tile position"});
  expect_error([&] { t.local(0); }, ErrorKind::shape, {"(0)"});
#endif
}

}  // namespace
