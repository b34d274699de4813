// Tests of the shape algebra (Sig, Index, Shape). Most checks compare against a brute-force model:
// a Sig is the explicit set of its indices, enumerated by a plain loop, so every algebraic result
// is checked element by element over ranges of begins, ends and strides.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hit/shape.hpp"

namespace {

using hit::Error;
using hit::ErrorKind;
using hit::Index;
using hit::index_t;
using hit::Shape;
using hit::Sig;
using ::testing::HasSubstr;

using Set = std::set<index_t>;

Set elements(const Sig& s) {
  Set out;
  for (index_t i = s.begin(); i < s.end(); i += s.stride()) out.insert(i);
  return out;
}

// Every Sig with begin in [lo, hi], end in [begin, begin + max_len] and stride in [1, max_stride].
std::vector<Sig> all_sigs(index_t lo, index_t hi, index_t max_len, index_t max_stride) {
  std::vector<Sig> out;
  for (index_t b = lo; b <= hi; ++b) {
    for (index_t e = b; e <= b + max_len; ++e) {
      for (index_t s = 1; s <= max_stride; ++s) out.emplace_back(b, e, s);
    }
  }
  return out;
}

// Expects `fn` to throw hit::Error of `kind` whose message contains every one of `parts`.
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

// A random Shape of `rank` axes with small begins (negative too), extents and strides.
Shape random_shape(std::mt19937& rng, int rank, index_t max_extent = 5, index_t max_stride = 3) {
  std::uniform_int_distribution<index_t> begin(-4, 4), extent(0, max_extent), stride(1, max_stride);
  Shape s = Shape::of_rank(rank);
  for (int k = 0; k < rank; ++k) {
    const index_t b = begin(rng), n = extent(rng), st = stride(rng);
    s = s.with_sig(k, Sig(b, b + n * st, st));
  }
  return s;
}

std::vector<Index> indices_of(const Shape& s) {
  std::vector<Index> out;
  s.for_each([&](const Index& i) { out.push_back(i); });
  return out;
}

// ---- Sig --------------------------------------------------------------------------------------

TEST(Sig, DefaultIsEmpty) {
  const Sig s;
  EXPECT_EQ(s.size(), 0);
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.contains(0));
  EXPECT_EQ(s, Sig(7, 7, 3));
}

TEST(Sig, SizeContainsLastMatchEnumeration) {
  for (const Sig& s : all_sigs(-6, 6, 12, 5)) {
    const Set e = elements(s);
    ASSERT_EQ(s.size(), static_cast<index_t>(e.size())) << s;
    EXPECT_EQ(s.empty(), e.empty()) << s;
    if (!e.empty()) {
      EXPECT_EQ(s.last(), *e.rbegin()) << s;
    }
    for (index_t i = -20; i <= 20; ++i) EXPECT_EQ(s.contains(i), e.count(i) == 1) << s << " " << i;
  }
}

TEST(Sig, ExactValues) {
  EXPECT_EQ(Sig(0, 10).size(), 10);
  EXPECT_EQ(Sig(0, 10, 2).size(), 5);
  EXPECT_EQ(Sig(0, 9, 2).size(), 5);
  EXPECT_EQ(Sig(0, 11, 2).size(), 6);
  EXPECT_EQ(Sig(-5, -1, 3).size(), 2);  // -5, -2
  EXPECT_EQ(Sig(-5, -1, 3).last(), -2);
  EXPECT_EQ(Sig(3, 4, 100).size(), 1);
  EXPECT_EQ(Sig(3, 4, 100).last(), 3);
}

TEST(Sig, TileArrayRoundTrip) {
  for (const Sig& s : all_sigs(-4, 4, 10, 4)) {
    index_t pos = 0;
    for (index_t i : elements(s)) {
      EXPECT_EQ(s.to_tile(i), pos) << s;
      EXPECT_EQ(s.to_array(pos), i) << s;
      ++pos;
    }
  }
  // Positions outside the set map linearly (ghost cells sit at positions -1, size, ...).
  EXPECT_EQ(Sig(4, 10, 3).to_array(-1), 1);
  EXPECT_EQ(Sig(4, 10, 3).to_tile(1), -1);
  EXPECT_EQ(Sig(4, 10, 3).to_array(2), 10);
}

TEST(Sig, IntersectMatchesBruteForce) {
  const auto sigs = all_sigs(-5, 5, 11, 4);
  for (const Sig& a : sigs) {
    const Set ea = elements(a);
    for (const Sig& b : sigs) {
      Set expected;
      for (index_t x : elements(b)) {
        if (ea.count(x)) expected.insert(x);
      }
      const Sig r = a.intersect(b);
      ASSERT_EQ(elements(r), expected) << a << " ^ " << b << " = " << r;
    }
  }
}

TEST(Sig, IntersectLargeCoprimeStridesAndOffsets) {
  // Chinese-remainder cases with strides and offsets a short range would not reach.
  const std::vector<index_t> strides = {1, 2, 3, 4, 6, 7, 9, 10, 12, 15};
  for (index_t s1 : strides) {
    for (index_t s2 : strides) {
      for (index_t b1 = -13; b1 <= 13; b1 += 5) {
        for (index_t b2 = -11; b2 <= 11; b2 += 3) {
          const Sig a(b1, 200, s1), b(b2, 170, s2);
          Set expected;
          for (index_t x = std::max(b1, b2); x < 170; ++x) {
            if ((x - b1) % s1 == 0 && (x - b2) % s2 == 0) expected.insert(x);
          }
          const Sig r = a.intersect(b);
          ASSERT_EQ(elements(r), expected) << a << " ^ " << b << " = " << r;
          if (expected.size() > 1) {
            EXPECT_EQ(r.stride(), std::lcm(s1, s2));
          }
          EXPECT_EQ(a.intersect(b), b.intersect(a));
        }
      }
    }
  }
}

TEST(Sig, IntersectExactValues) {
  EXPECT_EQ(Sig(0, 20, 2).intersect(Sig(0, 20, 3)), Sig(0, 20, 6));
  EXPECT_EQ(Sig(1, 20, 2).intersect(Sig(0, 20, 3)), Sig(3, 20, 6));
  EXPECT_TRUE(Sig(0, 20, 2).intersect(Sig(1, 20, 4)).empty());  // even vs odd
  EXPECT_TRUE(Sig(0, 5).intersect(Sig(5, 10)).empty());         // touching half-open ranges
  EXPECT_EQ(Sig(-10, 10).intersect(Sig(-3, 3)), Sig(-3, 3));
}

// The smallest strided set containing both, computed independently: begin = min, last = max,
// stride = gcd of the distances of all elements to the begin.
TEST(Sig, BoundingIsTheSmallestStridedSuperset) {
  const auto sigs = all_sigs(-4, 4, 9, 4);
  for (const Sig& a : sigs) {
    for (const Sig& b : sigs) {
      Set u = elements(a);
      const Set eb = elements(b);
      u.insert(eb.begin(), eb.end());
      const Sig r = a.bounding(b);
      const Set er = elements(r);
      if (u.empty()) {
        EXPECT_TRUE(r.empty()) << a << " | " << b;
        continue;
      }
      index_t g = 0;
      for (index_t x : u) g = std::gcd(g, x - *u.begin());
      const Sig expected(*u.begin(), *u.rbegin() + 1, g == 0 ? 1 : g);
      ASSERT_EQ(r, expected) << a << " | " << b << " = " << r;
      EXPECT_TRUE(r.includes(a) && r.includes(b)) << a << " | " << b;
      EXPECT_TRUE(std::includes(er.begin(), er.end(), u.begin(), u.end()));
    }
  }
}

TEST(Sig, ExpandAndShrink) {
  for (const Sig& s : all_sigs(-3, 3, 8, 3)) {
    for (index_t before = -4; before <= 3; ++before) {
      for (index_t after = -4; after <= 3; ++after) {
        // Positions -before .. size+after-1 of s, mapped to array indices.
        Set expected;
        for (index_t p = -before; p < s.size() + after; ++p) expected.insert(s.to_array(p));
        const Sig r = s.expand(before, after);
        ASSERT_EQ(elements(r), expected) << s << " expand " << before << "," << after;
        if (!expected.empty()) {
          EXPECT_EQ(r.stride(), s.stride());
        }
      }
    }
  }
  EXPECT_EQ(Sig(0, 10, 2).expand(1, 1), Sig(-2, 11, 2));
  EXPECT_EQ(Sig(0, 10).expand(-2, -3), Sig(2, 7));
  EXPECT_TRUE(Sig(0, 3).expand(-2, -2).empty());
}

TEST(Sig, Displace) {
  for (const Sig& s : all_sigs(-3, 3, 8, 3)) {
    for (index_t d = -7; d <= 7; d += 7) {
      Set expected;
      for (index_t x : elements(s)) expected.insert(x + d);
      EXPECT_EQ(elements(s.displace(d)), expected);
    }
  }
}

TEST(Sig, SelectTileMatchesPositions) {
  for (const Sig& s : all_sigs(-3, 3, 9, 3)) {
    const Set set = elements(s);
    const std::vector<index_t> e(set.begin(), set.end());
    const auto n = static_cast<index_t>(e.size());
    for (index_t first = 0; first <= n; ++first) {
      for (index_t last = first; last <= n; ++last) {
        for (index_t step = 1; step <= 3; ++step) {
          Set expected;
          for (index_t p = first; p < last; p += step) expected.insert(e[static_cast<size_t>(p)]);
          const Sig r = s.select_tile(first, last, step);
          ASSERT_EQ(elements(r), expected) << s << " [" << first << ":" << last << ":" << step;
          EXPECT_TRUE(s.includes(r));
        }
      }
    }
  }
}

TEST(Sig, IncludesIsSubsetRelation) {
  const auto sigs = all_sigs(-3, 3, 8, 3);
  for (const Sig& a : sigs) {
    const Set ea = elements(a);
    for (const Sig& b : sigs) {
      const Set eb = elements(b);
      const bool subset = std::includes(ea.begin(), ea.end(), eb.begin(), eb.end());
      ASSERT_EQ(a.includes(b), subset) << a << " includes " << b;
    }
  }
}

TEST(Sig, EqualityIsSetEquality) {
  const auto sigs = all_sigs(-3, 3, 7, 3);
  for (const Sig& a : sigs) {
    for (const Sig& b : sigs) {
      ASSERT_EQ(a == b, elements(a) == elements(b)) << a << " == " << b;
      ASSERT_EQ(a != b, elements(a) != elements(b)) << a << " != " << b;
    }
  }
  EXPECT_EQ(Sig(0, 10, 2), Sig(0, 9, 2));
  EXPECT_EQ(Sig(3, 4, 1), Sig(3, 5, 7));  // one element: the stride does not matter
  EXPECT_EQ(Sig(3, 3), Sig(-8, -8, 4));   // all empty sets are equal
  EXPECT_NE(Sig(0, 4, 2), Sig(0, 4, 3));
}

TEST(Sig, Str) {
  EXPECT_EQ(Sig(0, 10).str(), "[0:10]");
  EXPECT_EQ(Sig(-3, 10, 2).str(), "[-3:10:2]");
}

TEST(Sig, BadInput) {
  expect_error([] { Sig(0, 10, 0); }, ErrorKind::invalid_argument, {"stride", "got 0"});
  expect_error([] { Sig(0, 10, -2); }, ErrorKind::invalid_argument, {"stride", "got -2"});
  expect_error([] { Sig(5, 4); }, ErrorKind::invalid_argument, {"end 4", "begin 5"});
  expect_error([] { Sig(0, 10).select_tile(0, 5, 0); }, ErrorKind::invalid_argument, {"got 0"});
  expect_error([] { Sig(0, 10, 2).select_tile(2, 6); }, ErrorKind::shape, {"[2:6]", "[0:5]"});
  expect_error([] { Sig(0, 10).select_tile(-1, 3); }, ErrorKind::shape, {"[-1:3]"});
  expect_error([] { Sig(0, 10).select_tile(3, 2); }, ErrorKind::shape, {"[3:2]"});
}

// ---- Index ------------------------------------------------------------------------------------

TEST(Index, Basics) {
  const Index i{3, -1, 7};
  EXPECT_EQ(i.rank(), 3);
  EXPECT_EQ(i[0], 3);
  EXPECT_EQ(i[1], -1);
  EXPECT_EQ(i[2], 7);
  EXPECT_EQ(i.str(), "(3,-1,7)");
  EXPECT_EQ(i, (Index{3, -1, 7}));
  EXPECT_NE(i, (Index{3, -1, 8}));
  EXPECT_NE(i, (Index{3, -1}));
  const Index z = Index::zeros(8);
  EXPECT_EQ(z.rank(), 8);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(z[k], 0);
  EXPECT_EQ(Index().rank(), 0);
  EXPECT_EQ(Index().str(), "()");
}

TEST(Index, BadInput) {
  expect_error([] { Index{1, 2, 3, 4, 5, 6, 7, 8, 9}; }, ErrorKind::invalid_argument,
               {"at most 8", "got 9"});
  expect_error([] { Index::zeros(9); }, ErrorKind::invalid_argument, {"got 9"});
  expect_error([] { Index::zeros(-1); }, ErrorKind::invalid_argument, {"got -1"});
}

// ---- Shape: construction, size, contains ------------------------------------------------------

TEST(Shape, NullShape) {
  const Shape n;
  EXPECT_TRUE(n.is_null());
  EXPECT_EQ(n.rank(), 0);
  EXPECT_EQ(n.size(), 0);
  EXPECT_TRUE(n.empty());
  EXPECT_EQ(n.str(), "[]");
  EXPECT_FALSE(n.contains(Index()));
  EXPECT_TRUE(indices_of(n).empty());
  EXPECT_EQ(n, Shape());
  EXPECT_NE(n, Shape::extents({0}));  // null (no domain) is not an empty domain of rank 1
}

TEST(Shape, ConstructionAndExtents) {
  const Shape s{Sig(0, 10), Sig(-4, 4, 3), Sig(5, 6)};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_FALSE(s.is_null());
  EXPECT_EQ(s.extent(0), 10);
  EXPECT_EQ(s.extent(1), 3);  // -4, -1, 2
  EXPECT_EQ(s.extent(2), 1);
  EXPECT_EQ(s.size(), 30);
  EXPECT_EQ(s.first(), (Index{0, -4, 5}));
  EXPECT_EQ(Shape::extents({3, 4}), (Shape{Sig(0, 3), Sig(0, 4)}));
  EXPECT_EQ(Shape::of_rank(4).rank(), 4);
  EXPECT_TRUE(Shape::of_rank(4).empty());
  EXPECT_EQ(s.sig(1), Sig(-4, 4, 3));
  EXPECT_EQ(s.with_sig(2, Sig(0, 2)).size(), 60);
  EXPECT_EQ(s.with_sig(2, Sig(0, 2))[0], Sig(0, 10));  // other axes unchanged
}

TEST(Shape, OneElement) {
  const Shape s = Shape::parse("[4:5][-2:-1]");
  EXPECT_EQ(s.size(), 1);
  EXPECT_TRUE(s.contains(Index{4, -2}));
  EXPECT_FALSE(s.contains(Index{4, -1}));
  EXPECT_EQ(indices_of(s), std::vector<Index>{(Index{4, -2})});
  EXPECT_EQ(s.expand(1).size(), 9);
  EXPECT_EQ(s.intersect(Shape::parse("[0:10][-5:5]")), s);
}

TEST(Shape, ContainsMatchesPerAxisMembership) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape s = random_shape(rng, rank);
    std::uniform_int_distribution<index_t> coord(-6, 18);
    for (int q = 0; q < 30; ++q) {
      Index i = Index::zeros(rank);
      bool in = true;
      for (int k = 0; k < rank; ++k) {
        i[k] = coord(rng);
        in = in && elements(s[k]).count(i[k]) == 1;
      }
      EXPECT_EQ(s.contains(i), in) << s << " " << i;
    }
    EXPECT_FALSE(s.contains(Index::zeros(rank + 1)));  // another rank never matches
  }
}

TEST(Shape, ForEachIsRowMajor) {
  const Shape s = Shape::parse("[-1:3:2][4:10:3][0:2]");
  std::vector<Index> expected;
  for (index_t i : {-1, 1}) {
    for (index_t j : {4, 7}) {
      for (index_t k : {0, 1}) expected.push_back(Index{i, j, k});
    }
  }
  EXPECT_EQ(indices_of(s), expected);
  EXPECT_TRUE(indices_of(Shape::parse("[0:3][2:2]")).empty());
}

TEST(Shape, ForEachVisitsEveryIndexOnceInOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    const Shape s = random_shape(rng, 1 + trial % 4);
    const auto v = indices_of(s);
    ASSERT_EQ(static_cast<index_t>(v.size()), s.size()) << s;
    for (std::size_t n = 0; n < v.size(); ++n) {
      EXPECT_TRUE(s.contains(v[n]));
      // Row-major order = lexicographic order of the positions, which is the visit number.
      const Index t = s.to_tile(v[n]);
      index_t linear = 0;
      for (int k = 0; k < s.rank(); ++k) linear = linear * s.extent(k) + t[k];
      EXPECT_EQ(linear, static_cast<index_t>(n)) << s << " " << v[n];
      EXPECT_EQ(s.to_array(t), v[n]);
    }
  }
}

TEST(Shape, RankEight) {
  const Shape s = Shape::parse("[0:2][1:3][0:4:2][-1:1][0:1][0:2][5:7][0:3:2]");
  EXPECT_EQ(s.rank(), 8);
  EXPECT_EQ(s.size(), 2 * 2 * 2 * 2 * 1 * 2 * 2 * 2);
  EXPECT_EQ(static_cast<index_t>(indices_of(s).size()), s.size());
  const Index last{1, 2, 2, 0, 0, 1, 6, 2};
  EXPECT_TRUE(s.contains(last));
  EXPECT_EQ(indices_of(s).back(), last);
  EXPECT_EQ(s.expand(1).size(), 4 * 4 * 4 * 4 * 3 * 4 * 4 * 4);
  EXPECT_EQ(s.intersect(s), s);
  EXPECT_EQ(s.bounding(s), s);
  EXPECT_TRUE(s.expand(1).includes(s));
  EXPECT_EQ(Shape::parse(s.str()), s);
  EXPECT_EQ(s.displace(Index{1, 1, 1, 1, 1, 1, 1, 1}).first(), (Index{1, 2, 1, 0, 1, 1, 6, 1}));
}

// ---- Shape algebra ----------------------------------------------------------------------------

TEST(Shape, IntersectIsPerAxisIntersection) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape a = random_shape(rng, rank, 8), b = random_shape(rng, rank, 8);
    const Shape r = a.intersect(b);
    index_t count = 0;
    a.for_each([&](const Index& i) {
      if (b.contains(i)) {
        ++count;
        EXPECT_TRUE(r.contains(i)) << a << " ^ " << b << " " << i;
      }
    });
    EXPECT_EQ(r.size(), count) << a << " ^ " << b << " = " << r;
    EXPECT_EQ(r, b.intersect(a));
    EXPECT_TRUE(a.includes(r) && b.includes(r));
  }
  EXPECT_EQ(Shape::parse("[0:10][0:10]").intersect(Shape::parse("[5:15][-5:3]")),
            Shape::parse("[5:10][0:3]"));
  EXPECT_TRUE(Shape::parse("[0:10][0:10:2]").intersect(Shape::parse("[0:10][1:10:2]")).empty());
  EXPECT_TRUE(Shape().intersect(Shape::extents({3})).is_null());
  EXPECT_TRUE(Shape::extents({3}).intersect(Shape()).is_null());
}

// subtract: every index of `a` outside the hole's ranges lies in exactly one box, and nothing else
// does; the boxes are parts of `a`, at most two per axis.
TEST(Shape, SubtractCoversTheOutsideOnceAndNothingElse) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape a = random_shape(rng, rank, 8);
    const Shape hole = random_shape(rng, rank, 6);
    const std::vector<Shape> boxes = a.subtract(hole);
    EXPECT_LE(boxes.size(), static_cast<std::size_t>(2 * rank));
    const auto in_hole = [&](const Index& i) {
      if (hole.empty()) return false;
      for (int k = 0; k < rank; ++k) {
        if (i[k] < hole[k].begin() || i[k] > hole[k].last()) return false;
      }
      return true;
    };
    index_t outside = 0;
    a.for_each([&](const Index& i) {
      const auto hits =
          std::count_if(boxes.begin(), boxes.end(), [&](const Shape& b) { return b.contains(i); });
      if (in_hole(i)) {
        EXPECT_EQ(hits, 0) << a << " - " << hole << " at " << i;
      } else {
        ++outside;
        EXPECT_EQ(hits, 1) << a << " - " << hole << " at " << i;
      }
    });
    index_t total = 0;
    for (const Shape& b : boxes) {
      EXPECT_FALSE(b.empty());
      EXPECT_TRUE(a.includes(b)) << b << " is not in " << a;
      total += b.size();
    }
    EXPECT_EQ(total, outside) << a << " - " << hole;
  }
  // A block without its inner part: the two full rows, then the two side columns between them.
  EXPECT_EQ(Shape::parse("[0:4][0:5]").subtract(Shape::parse("[1:3][1:4]")),
            (std::vector<Shape>{Shape::parse("[0:1][0:5]"), Shape::parse("[3:4][0:5]"),
                                Shape::parse("[1:3][0:1]"), Shape::parse("[1:3][4:5]")}));
  EXPECT_TRUE(Shape::parse("[0:4][0:5]").subtract(Shape::parse("[0:4][0:5]")).empty());
  EXPECT_TRUE(Shape().subtract(Shape::extents({3})).empty());
  EXPECT_THROW((void)Shape::extents({3}).subtract(Shape::extents({3, 3})), Error);
}

TEST(Shape, BoundingContainsBoth) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape a = random_shape(rng, rank), b = random_shape(rng, rank);
    const Shape r = a.bounding(b);
    EXPECT_TRUE(r.includes(a)) << a << " | " << b << " = " << r;
    EXPECT_TRUE(r.includes(b)) << a << " | " << b << " = " << r;
    if (!a.empty() && !b.empty()) {
      for (int k = 0; k < rank; ++k) EXPECT_EQ(r[k], a[k].bounding(b[k]));
    }
    if (a.empty()) {
      EXPECT_EQ(r, b);
    }
    if (b.empty()) {
      EXPECT_EQ(r, a);
    }
  }
  EXPECT_EQ(Shape::parse("[0:2][0:2]").bounding(Shape::parse("[5:6][4:8:2]")),
            Shape::parse("[0:6][0:7:1]"));
  EXPECT_EQ(Shape::parse("[0:5:4]").bounding(Shape::parse("[8:9]")), Shape::parse("[0:9:4]"));
  EXPECT_EQ(Shape().bounding(Shape::extents({3})), Shape::extents({3}));
  EXPECT_EQ(Shape::extents({3}).bounding(Shape()), Shape::extents({3}));
}

TEST(Shape, ExpandAndShrink) {
  const Shape s = Shape::parse("[0:10][5:20:5]");
  EXPECT_EQ(s.expand(1), Shape::parse("[-1:11][0:21:5]"));
  EXPECT_EQ(s.expand(-1), Shape::parse("[1:9][10:11]"));
  EXPECT_EQ(s.expand(1, 2, 0), Shape::parse("[0:10][-5:20:5]"));
  EXPECT_EQ(s.expand(0, 0, 3), Shape::parse("[0:13][5:20:5]"));
  EXPECT_TRUE(s.expand(-2).empty());
  std::mt19937 rng(9);
  for (int trial = 0; trial < 100; ++trial) {
    const Shape a = random_shape(rng, 2, 6);
    if (a.empty()) continue;
    for (index_t w = 0; w <= 2; ++w) {
      const Shape e = a.expand(w);
      EXPECT_TRUE(e.includes(a));
      index_t expected = 1;
      for (int k = 0; k < 2; ++k) expected *= a.extent(k) + 2 * w;
      EXPECT_EQ(e.size(), expected);
      EXPECT_EQ(e.expand(-w), a);
    }
  }
}

TEST(Shape, Displace) {
  const Shape s = Shape::parse("[0:10][5:20:5]");
  EXPECT_EQ(s.displace(Index{-3, 2}), Shape::parse("[-3:7][7:22:5]"));
  EXPECT_EQ(s.displace(Index{-3, 2}).size(), s.size());
  EXPECT_TRUE(s.displace(Index{0, 1}).intersect(s).empty());
}

TEST(Shape, SelectTile) {
  const Shape s = Shape::parse("[10:20][0:20:2]");
  EXPECT_EQ(s.select_tile(Shape::parse("[0:2][1:4]")), Shape::parse("[10:12][2:8:2]"));
  EXPECT_EQ(s.select_tile(Shape::parse("[0:10:3][0:10:5]")), Shape::parse("[10:20:3][0:20:10]"));
  std::mt19937 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const Shape a = random_shape(rng, 2, 6);
    Shape pos = Shape::of_rank(2);
    for (int k = 0; k < 2; ++k) {
      std::uniform_int_distribution<index_t> f(0, a.extent(k));
      const index_t first = f(rng);
      std::uniform_int_distribution<index_t> l(first, a.extent(k)), st(1, 3);
      pos = pos.with_sig(k, Sig(first, l(rng), st(rng)));
    }
    const Shape r = a.select_tile(pos);
    EXPECT_TRUE(a.includes(r));
    std::vector<Index> expected;
    pos.for_each([&](const Index& p) { expected.push_back(a.to_array(p)); });
    EXPECT_EQ(indices_of(r), expected) << a << " select " << pos;
  }
}

TEST(Shape, SelectArray) {
  const Shape s = Shape::parse("[0:10][0:20:2]");
  EXPECT_EQ(s.select_array(Shape::parse("[2:4][4:10:4]")), Shape::parse("[2:4][4:10:4]"));
  expect_error([&] { s.select_array(Shape::parse("[2:4][3:10:4]")); }, ErrorKind::shape,
               {"[2:4][3:10:4]", "[0:10][0:20:2]"});
  expect_error([&] { s.select_array(Shape::parse("[8:11][0:2]")); }, ErrorKind::shape,
               {"[8:11][0:2]"});
}

TEST(Shape, IncludesIsSubsetRelation) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 400; ++trial) {
    const Shape a = random_shape(rng, 2, 4, 2), b = random_shape(rng, 2, 4, 2);
    bool subset = true;
    b.for_each([&](const Index& i) { subset = subset && a.contains(i); });
    EXPECT_EQ(a.includes(b), subset) << a << " includes " << b;
  }
  EXPECT_TRUE(Shape::extents({3}).includes(Shape()));
  EXPECT_TRUE(Shape::extents({3}).includes(Shape::parse("[7:7]")));
  EXPECT_FALSE(Shape::extents({3}).includes(Shape::extents({1, 1})));
}

TEST(Shape, EqualityIsSetEquality) {
  EXPECT_EQ(Shape::parse("[0:10:2][1:2]"), Shape::parse("[0:9:2][1:2:5]"));
  EXPECT_EQ(Shape::parse("[0:0][0:5]"), Shape::parse("[0:7][3:3]"));  // both empty
  EXPECT_NE(Shape::parse("[0:0]"), Shape::parse("[0:0][0:0]"));       // ranks differ
  std::mt19937 rng(19);
  for (int trial = 0; trial < 400; ++trial) {
    const Shape a = random_shape(rng, 2, 3, 2), b = random_shape(rng, 2, 3, 2);
    std::vector<Index> ia = indices_of(a), ib = indices_of(b);
    const auto less = [](const Index& x, const Index& y) {
      for (int k = 0; k < x.rank(); ++k) {
        if (x[k] != y[k]) return x[k] < y[k];
      }
      return false;
    };
    std::sort(ia.begin(), ia.end(), less);
    std::sort(ib.begin(), ib.end(), less);
    EXPECT_EQ(a == b, ia == ib) << a << " == " << b;
  }
}

TEST(Shape, TileArrayCoordinates) {
  const Shape s = Shape::parse("[-4:8:3][10:12]");
  EXPECT_EQ(s.to_tile(Index{-1, 11}), (Index{1, 1}));
  EXPECT_EQ(s.to_array(Index{3, 0}), (Index{5, 10}));
  EXPECT_EQ(s.to_array(Index{-1, -1}), (Index{-7, 9}));  // ghost positions
}

TEST(Shape, ParseStrRoundTrip) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    const Shape s = random_shape(rng, 1 + trial % 8);
    const Shape p = Shape::parse(s.str());
    EXPECT_EQ(p, s);
    EXPECT_EQ(p.str(), s.str());
    for (int k = 0; k < s.rank(); ++k) EXPECT_EQ(p[k].stride(), s[k].stride());
  }
  EXPECT_EQ(Shape::parse("[5]"), Shape::parse("[0:5]"));
  EXPECT_EQ(Shape::parse("  [ -3 : 4 : 2 ] [1:2] "), Shape::parse("[-3:4:2][1:2]"));
  EXPECT_EQ(Shape::parse("[0:10:1]").str(), "[0:10]");
}

// ---- bad input --------------------------------------------------------------------------------

TEST(Shape, ParseErrors) {
  for (const char* text : {"", "   ", "[", "[]", "[1:", "[1;2]", "[a:3]", "0:10", "[0:10]x",
                           "[1:2:3:4]", "[0:10]]", "[99999999999999999999]"}) {
    expect_error([&] { Shape::parse(text); }, ErrorKind::parse,
                 {std::string("'").append(text).append("'"), "[begin:end:stride]"});
  }
  expect_error([] { Shape::parse("[0:10][0:10:0]"); }, ErrorKind::parse,
               {"[0:10][0:10:0]", "axis 1", "got 0"});
  expect_error([] { Shape::parse("[0:10:-1]"); }, ErrorKind::parse, {"got -1"});
  expect_error([] { Shape::parse("[10:3]"); }, ErrorKind::parse, {"end 3", "begin 10"});
  expect_error([] { Shape::parse("[1][1][1][1][1][1][1][1][1]"); }, ErrorKind::parse,
               {"[1][1][1][1][1][1][1][1][1]", "more than 8"});
}

TEST(Shape, RankErrors) {
  expect_error([] { Shape::of_rank(0); }, ErrorKind::invalid_argument, {"got 0"});
  expect_error([] { Shape::of_rank(9); }, ErrorKind::invalid_argument, {"got 9"});
  expect_error(
      [] {
        Shape::extents({1, 1, 1, 1, 1, 1, 1, 1, 1});
      },
      ErrorKind::invalid_argument, {"got 9"});
  expect_error([] { Shape::extents({3, -1}); }, ErrorKind::invalid_argument, {"end -1"});
  expect_error(
      [] {
        Shape{Sig(0, 1), Sig(0, 1), Sig(0, 1), Sig(0, 1), Sig(0, 1),
              Sig(0, 1), Sig(0, 1), Sig(0, 1), Sig(0, 1)};
      },
      ErrorKind::invalid_argument, {"got 9"});
  expect_error([] { Shape::extents({3}).sig(1); }, ErrorKind::invalid_argument,
               {"axis 1", "rank 1"});
  expect_error([] { Shape::extents({3}).sig(-1); }, ErrorKind::invalid_argument, {"axis -1"});
  expect_error([] { Shape::extents({3}).expand(2, 1, 1); }, ErrorKind::invalid_argument,
               {"axis 2"});
}

TEST(Shape, RankMismatch) {
  const Shape a = Shape::parse("[0:4][0:4]"), b = Shape::parse("[0:4]");
  expect_error([&] { a.intersect(b); }, ErrorKind::shape,
               {"[0:4][0:4] (rank 2)", "[0:4] (rank 1)"});
  expect_error([&] { a.bounding(b); }, ErrorKind::shape, {"rank 2", "rank 1"});
  // An empty operand does not hide a rank mismatch.
  expect_error([&] { a.bounding(Shape::parse("[0:0]")); }, ErrorKind::shape, {"[0:0]"});
  expect_error([&] { Shape::parse("[0:0][1:1]").bounding(b); }, ErrorKind::shape, {"[0:4]"});
  expect_error([&] { a.select_tile(b); }, ErrorKind::shape, {"rank 1"});
  expect_error([&] { a.select_array(b); }, ErrorKind::shape, {"rank 1"});
  expect_error([&] { a.displace(Index{1}); }, ErrorKind::shape, {"(1)", "rank 1", "rank 2"});
  expect_error([&] { a.to_tile(Index{1}); }, ErrorKind::shape, {"(1)", "[0:4][0:4]"});
  expect_error([&] { a.to_array(Index{1, 2, 3}); }, ErrorKind::shape, {"(1,2,3)", "rank 3"});
  expect_error([&] { a.select_tile(Shape::parse("[0:5][0:1]")); }, ErrorKind::shape,
               {"[0:5][0:1]", "axis 0"});
}

}  // namespace

// Sizes never wrap: spans and products that do not fit a 64-bit count are errors, and the counts
// that do fit are exact up to the largest one.
TEST(CheckedSizes, SigCountsUpToTheLargestSpan) {
  constexpr hit::index_t max = std::numeric_limits<hit::index_t>::max();
  EXPECT_EQ(Sig(0, max, 2).size(), max / 2 + 1);  // (end - begin + stride - 1) would wrap here
  EXPECT_EQ(Sig(0, max).size(), max);
  EXPECT_EQ(Sig(-5, max - 5, 3).size(), max / 3 + 1);
  EXPECT_THROW(Sig(-2, max), hit::Error);  // a span of max + 2 indices
  EXPECT_THROW(Sig(max - 3, max - 1).displace(5), hit::Error);
  EXPECT_THROW(Sig(max - 3, max - 1).expand(0, 5), hit::Error);
  EXPECT_THROW(Sig(std::numeric_limits<hit::index_t>::min() + 2, 0).expand(5, 0), hit::Error);
  EXPECT_EQ(Sig(10, 20).expand(2, 3), Sig(8, 23));
}

TEST(CheckedSizes, ShapesOfMoreThanACountAreErrors) {
  try {
    (void)Shape::extents({4000000000, 4000000000, 4000000000});
    FAIL() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("[0:4000000000][0:4000000000][0:4000000000] has more than"));
  }
  EXPECT_THROW(Shape::parse("[0:4000000000][0:4000000000][0:4000000000]"), hit::Error);
  const Shape big = Shape::extents({3037000499, 3037000499});  // just under 2^63
  EXPECT_EQ(big.size(), hit::index_t{3037000499} * 3037000499);
  EXPECT_THROW((void)big.expand(1), hit::Error);
  EXPECT_THROW((void)Shape::extents({2, 2}).with_sig(1, Sig(0, 5000000000000000000)), hit::Error);
  // An empty axis makes the product 0, whatever the others.
  EXPECT_EQ(Shape::extents({0, 4000000000, 4000000000, 4000000000}).size(), 0);
}
