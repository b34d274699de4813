// Virtual topologies: the plug-ins by name, coordinates and neighbours, as properties over many
// process counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "error_text.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/topology.hpp"

namespace {

using hit_test::error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

long long product(const std::vector<int>& dims) {
  long long p = 1;
  for (int d : dims) p *= d;
  return p;
}

TEST(VirtualTopology, ArrayIsOneLineOfAllProcesses) {
  for (int p = 1; p <= 12; ++p) {
    const hit::Topology t = hit::topology("array", p);
    EXPECT_EQ(t.name(), "array");
    EXPECT_THAT(t.dims(), ElementsAre(p));
    EXPECT_EQ(t.procs(), p);
    EXPECT_EQ(t.grid_size(), p);
    for (int r = 0; r < p; ++r) EXPECT_EQ(t.coords(r), hit::Index{r});
  }
}

TEST(VirtualTopology, Mesh2dIsTheMostSquareFactorisation) {
  for (int p = 1; p <= 64; ++p) {
    const hit::Topology t = hit::topology("mesh2d", p);
    ASSERT_EQ(t.axes(), 2);
    EXPECT_EQ(product(t.dims()), p);
    EXPECT_GE(t.dims()[0], t.dims()[1]) << p;
    // Independently: the second extent is the largest divisor not above sqrt(p).
    int best = 1;
    for (int d = 1; d * d <= p; ++d) {
      if (p % d == 0) best = d;
    }
    EXPECT_EQ(t.dims()[1], best) << p;
    EXPECT_EQ(t.grid_size(), p);
  }
  EXPECT_THAT(hit::topology("mesh2d", 6).dims(), ElementsAre(3, 2));
  EXPECT_THAT(hit::topology("mesh2d", 7).dims(), ElementsAre(7, 1));
  EXPECT_THAT(hit::topology("mesh2d", 12).dims(), ElementsAre(4, 3));
}

TEST(VirtualTopology, SquareAcceptsOnlySquares) {
  for (int s = 1; s <= 6; ++s) {
    const hit::Topology t = hit::topology("square", s * s);
    EXPECT_THAT(t.dims(), ElementsAre(s, s));
  }
  for (int p : {2, 3, 5, 8, 10, 15, 17}) {
    int s = 1;
    while ((s + 1) * (s + 1) <= p) ++s;
    const std::string msg = error_of([&] { (void)hit::topology("square", p); });
    EXPECT_THAT(msg, HasSubstr("got " + std::to_string(p)));
    EXPECT_THAT(msg,
                HasSubstr(std::to_string(s * s) + " and " + std::to_string((s + 1) * (s + 1))));
  }
  try {
    (void)hit::topology("square", 3);
    FAIL();
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::topology);
  }
}

TEST(VirtualTopology, MeshTakesExplicitDimsAndLeavesTheRestInactive) {
  const hit::Topology t = hit::topology("mesh:dims=2x3", 8);
  EXPECT_THAT(t.dims(), ElementsAre(2, 3));
  EXPECT_EQ(t.grid_size(), 6);
  EXPECT_EQ(t.procs(), 8);
  EXPECT_TRUE(t.active(5));
  EXPECT_FALSE(t.active(6));
  EXPECT_FALSE(t.active(7));
  EXPECT_EQ(t.coords(6).rank(), 0);
  EXPECT_EQ(t.neighbor(7, 0, 1, true), std::nullopt);
  EXPECT_THAT(hit::topology("mesh:dims=2x2x2", 8).dims(), ElementsAre(2, 2, 2));
  EXPECT_THAT(hit::topology("mesh:dims=5", 5).dims(), ElementsAre(5));
  EXPECT_THAT(t.str(), HasSubstr("2 inactive"));
}

TEST(VirtualTopology, MeshErrorsNameTheValue) {
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:dims=3x3", 4); }),
              HasSubstr("needs 9 processes, only 4 exist"));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:dims=2y3", 6); }), HasSubstr("dims='2y3'"));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:dims=0x2", 6); }), HasSubstr("extent 0"));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:dims=2x", 6); }), HasSubstr("dims='2x'"));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh", 6); }),
              HasSubstr("needs the parameter dims"));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:rows=2", 6); }),
              HasSubstr("has no parameter 'rows' (allowed: dims)"));
  EXPECT_THAT(error_of([] { (void)hit::topology("array:dims=2", 2); }), HasSubstr("allowed: none"));
}

TEST(VirtualTopology, UnknownNamesListTheRegisteredOnes) {
  const std::string msg = error_of([] { (void)hit::topology("torus", 4); });
  EXPECT_THAT(msg, HasSubstr("'torus'"));
  for (const char* name : {"array", "mesh", "mesh2d", "square"}) EXPECT_THAT(msg, HasSubstr(name));
  EXPECT_THAT(error_of([] { (void)hit::topology("mesh:", 4); }), HasSubstr("malformed"));
  EXPECT_THAT(error_of([] { (void)hit::topology("array", 0); }), HasSubstr("at least 1"));
}

TEST(VirtualTopology, DefaultProcessCountIsTheRunSize) {
  const hit::Topology t = hit::topology("array");
  EXPECT_EQ(t.procs(), hit::Environment::current().size());
}

TEST(VirtualTopology, CoordinatesAreRowMajorAndRoundTrip) {
  const hit::Topology t("grid", {2, 3, 4}, 24);
  EXPECT_EQ(t.coords(0), (hit::Index{0, 0, 0}));
  EXPECT_EQ(t.coords(1), (hit::Index{0, 0, 1}));
  EXPECT_EQ(t.coords(4), (hit::Index{0, 1, 0}));
  EXPECT_EQ(t.coords(12), (hit::Index{1, 0, 0}));
  EXPECT_EQ(t.coords(23), (hit::Index{1, 2, 3}));
  for (int p = 0; p < 24; ++p) EXPECT_EQ(t.proc_at(t.coords(p)), p);
  EXPECT_THAT(error_of([&] { t.proc_at(hit::Index{2, 0, 0}); }), HasSubstr("outside"));
  EXPECT_THAT(error_of([&] { t.proc_at(hit::Index{0, 0}); }), HasSubstr("have 2 axes"));
  EXPECT_THAT(error_of([&] { t.coords(24); }), HasSubstr("process 24"));
  EXPECT_THAT(error_of([&] { t.neighbor(0, 3, 1, true); }), HasSubstr("axis 3"));
}

TEST(VirtualTopology, NeighboursWithAndWithoutWrap) {
  for (const std::vector<int>& dims : {std::vector<int>{5}, std::vector<int>{3, 4},
                                       std::vector<int>{2, 3, 2}, std::vector<int>{1, 4}}) {
    const int n = static_cast<int>(product(dims));
    const hit::Topology t("grid", dims, n + 1);  // one inactive process past the grid
    for (int p = 0; p < n; ++p) {
      const hit::Index c = t.coords(p);
      for (int axis = 0; axis < t.axes(); ++axis) {
        const int d = dims[static_cast<std::size_t>(axis)];
        for (int offset = -2 * d; offset <= 2 * d; ++offset) {
          hit::Index expect = c;
          expect[axis] = ((c[axis] + offset) % d + d) % d;
          EXPECT_EQ(t.neighbor(p, axis, offset, true), t.proc_at(expect));
          const auto plain = t.neighbor(p, axis, offset, false);
          if (c[axis] + offset < 0 || c[axis] + offset >= d) {
            EXPECT_EQ(plain, std::nullopt);
          } else {
            EXPECT_EQ(plain, t.proc_at(expect));
          }
        }
      }
    }
    EXPECT_EQ(t.neighbor(n, 0, 1, true), std::nullopt);
  }
}

TEST(VirtualTopology, ConstructorChecksItsArguments) {
  EXPECT_THAT(error_of([] { hit::Topology("x", {2, 2}, 3); }), HasSubstr("needs more processes"));
  EXPECT_THAT(error_of([] { hit::Topology("x", {}, 3); }), HasSubstr("1 to 8 axes"));
  EXPECT_THAT(error_of([] { hit::Topology("x", {2, 0}, 3); }), HasSubstr("got 0"));
  EXPECT_THAT(error_of([] { hit::Topology("x", {1}, 0); }), HasSubstr("at least 1"));
  EXPECT_EQ(hit::Topology("x", {2, 2}, 4), hit::Topology("x", {2, 2}, 4));
  EXPECT_FALSE(hit::Topology("x", {2, 2}, 4) == hit::Topology("x", {2, 2}, 5));
  EXPECT_FALSE(hit::Topology("x", {4}, 4) == hit::Topology("y", {4}, 4));
}

TEST(BalancedDims, IsTheMostSquareNonIncreasingFactorisation) {
  EXPECT_THAT(hit::balanced_dims(12, 3), ElementsAre(3, 2, 2));
  EXPECT_THAT(hit::balanced_dims(16, 3), ElementsAre(4, 2, 2));
  EXPECT_THAT(hit::balanced_dims(1, 2), ElementsAre(1, 1));
  EXPECT_THAT(hit::balanced_dims(7, 2), ElementsAre(7, 1));
  EXPECT_THAT(hit::balanced_dims(2147483647, 2), ElementsAre(2147483647, 1));  // a large prime
  EXPECT_THAT(hit::balanced_dims(720720, 8).size(), 8u);
  for (int n = 1; n <= 96; ++n) {
    for (int axes = 1; axes <= 3; ++axes) {
      const auto dims = hit::balanced_dims(n, axes);
      ASSERT_EQ(dims.size(), static_cast<std::size_t>(axes));
      EXPECT_EQ(product(dims), n);
      EXPECT_TRUE(std::is_sorted(dims.rbegin(), dims.rend())) << n;
      // Brute force: no factorisation has a smaller largest factor.
      int best_max = n;
      for (int a = 1; a <= n; ++a) {
        for (int b = 1; b <= n; ++b) {
          if (axes == 1 && b > 1) break;
          const int c_needed = axes == 3 ? (n % (a * b) == 0 ? n / (a * b) : 0) : 1;
          if (axes == 1 && a == n) best_max = std::min(best_max, n);
          if (axes == 2 && a * b == n) best_max = std::min(best_max, std::max(a, b));
          if (axes == 3 && c_needed > 0) best_max = std::min(best_max, std::max({a, b, c_needed}));
        }
      }
      EXPECT_EQ(dims.front(), best_max) << n << " over " << axes;
    }
  }
}

}  // namespace
