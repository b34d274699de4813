// The column-based arrangement against an exhaustive search over every set partition of the
// rectangles into columns (each column's cost is 1 + |C|·S whatever the order inside it), for up
// to 8 rectangles: random areas, ties, one dominant area, tiny areas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/fpm/columns.hpp"
#include "hit/fpm/hierarchical.hpp"

namespace hit::fpm {
namespace {

// The cheapest column arrangement of `areas` by trying every set partition (Bell(8) = 4140).
double exhaustive_cost(const std::vector<double>& areas) {
  std::vector<int> items;
  for (std::size_t i = 0; i < areas.size(); ++i) {
    if (areas[i] > 0) items.push_back(static_cast<int>(i));
  }
  std::vector<std::vector<int>> columns;
  double best = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t)> place = [&](std::size_t next) {
    if (next == items.size()) {
      best = std::min(best, column_cost(areas, columns));
      return;
    }
    // By index: the recursion appends columns, which may move the vector's elements.
    for (std::size_t k = 0; k < columns.size(); ++k) {
      columns[k].push_back(items[next]);
      place(next + 1);
      columns[k].pop_back();
    }
    columns.push_back({items[next]});
    place(next + 1);
    columns.pop_back();
  };
  place(0);
  return items.empty() ? 0 : best;
}

// Every positive area in exactly one column, no zero area anywhere.
void expect_each_once(const std::vector<double>& areas, const ColumnArrangement& a) {
  std::vector<int> seen(areas.size(), 0);
  for (const auto& column : a.columns) {
    EXPECT_FALSE(column.empty());
    for (const int i : column) ++seen[static_cast<std::size_t>(i)];
  }
  for (std::size_t i = 0; i < areas.size(); ++i) EXPECT_EQ(seen[i], areas[i] > 0 ? 1 : 0) << i;
}

void expect_optimal(const std::vector<double>& areas) {
  const ColumnArrangement a = arrange_columns(areas);
  expect_each_once(areas, a);
  EXPECT_NEAR(a.cost, column_cost(areas, a.columns), 1e-12);
  EXPECT_NEAR(a.cost, exhaustive_cost(areas), 1e-12);
  EXPECT_GE(a.cost, half_perimeter_bound(areas) - 1e-12);
}

TEST(Columns, OptimalOverEverySetPartitionForRandomAreas) {
  std::mt19937 random(20261123);
  std::uniform_real_distribution<double> area(0.01, 1.0);
  for (int q = 1; q <= 8; ++q) {
    for (int trial = 0; trial < 12; ++trial) {
      std::vector<double> areas(static_cast<std::size_t>(q));
      for (double& a : areas) a = area(random);
      expect_optimal(areas);
    }
  }
}

// The dynamic programme over contiguous runs of the sorted areas, every start of the last column
// tried: what arrange_columns computed before it searched from the previous best start only.
double quadratic_cost(std::vector<double> areas) {
  std::sort(areas.begin(), areas.end());
  double total = 0;
  for (double a : areas) total += a;
  std::vector<double> prefix(areas.size() + 1, 0.0), best(areas.size() + 1, 1e300);
  for (std::size_t j = 0; j < areas.size(); ++j) prefix[j + 1] = prefix[j] + areas[j] / total;
  best[0] = 0;
  for (std::size_t j = 1; j <= areas.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      best[j] = std::min(best[j], best[i] + 1.0 + double(j - i) * (prefix[j] - prefix[i]));
    }
  }
  return best.back();
}

TEST(Columns, MonotoneSearchEqualsTheFullSearchForManyAreas) {
  std::mt19937 random(20261127);
  for (const double spread : {1.0, 14.0, 1000.0}) {
    std::uniform_real_distribution<double> area(1.0, spread + 1e-9);
    for (const std::size_t q : {50u, 300u, 700u}) {
      std::vector<double> areas(q);
      for (double& a : areas) a = area(random);
      const ColumnArrangement a = arrange_columns(areas);
      expect_each_once(areas, a);
      EXPECT_NEAR(a.cost, quadratic_cost(areas), 1e-9) << q << " areas, spread " << spread;
    }
  }
}

TEST(Columns, OptimalWithTiesADominantAreaAndTinyAreas) {
  expect_optimal(std::vector<double>(8, 1.0));
  expect_optimal({1, 1, 2, 2, 3, 3, 1, 2});
  expect_optimal({100, 1, 1, 1, 1, 1, 1});
  expect_optimal({1e-6, 2e-6, 1, 1e-6, 3, 1e-5});
  expect_optimal({0.5, 0.5, 0.5, 1e-9});
}

// Hand-checked values: one rectangle is the square (cost 2); 8 equal areas in columns of 3, 3, 2
// cost 3 + 3·3/8 + 3·3/8 + 2·2/8 = 5.75, below the 2×4 grid's 6; a dominant area gets a column
// of its own.
TEST(Columns, KnownArrangements) {
  const ColumnArrangement one = arrange_columns(std::vector<double>{7.0});
  ASSERT_EQ(one.columns.size(), 1U);
  EXPECT_DOUBLE_EQ(one.cost, 2.0);
  const ColumnArrangement eight = arrange_columns(std::vector<double>(8, 1.0));
  EXPECT_NEAR(eight.cost, 5.75, 1e-12);
  std::vector<std::size_t> sizes;
  for (const auto& c : eight.columns) sizes.push_back(c.size());
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 3, 3}));
  const ColumnArrangement dominant = arrange_columns(std::vector<double>{1, 1, 1, 20});
  EXPECT_EQ(dominant.columns.back(), std::vector<int>{3});
}

TEST(Columns, ZeroAreasGetNoRectangleAndBadAreasAreRefused) {
  const ColumnArrangement a = arrange_columns(std::vector<double>{0, 2, 0, 2});
  expect_each_once({0, 2, 0, 2}, a);
  EXPECT_TRUE(arrange_columns(std::vector<double>{0, 0}).columns.empty());
  EXPECT_THROW(arrange_columns(std::vector<double>{1, -1}), Error);
  EXPECT_THROW(arrange_columns(std::vector<double>{1, std::nan("")}), Error);
}

// The layout spec of a hierarchical partition, built as a value: a node asked for no area weighs
// one block, weights keep six significant digits (printed exactly so), and the text reads back as
// the same nested specs.
TEST(HierarchicalSpec, NodesAndWeightsAsValues) {
  const Spec s = hierarchical_layout_spec({3, 0, 1234567}, 8, {1.0 / 3, 2.0 / 3, 1, 2e-7});
  EXPECT_EQ(s.str(),
            "hierarchical:nodes=(columns2d:w=3,1,1234570,b=8),devices=(dimBlocks:dim=1),"
            "w=0.333333,0.666667,1,2e-07");
  const Spec back = Spec::parse(s.str());
  EXPECT_EQ(back.get_spec("nodes", "x").get_doubles("w"), (std::vector<double>{3, 1, 1234570}));
  EXPECT_EQ(back.get_spec("devices", "x").get_int("dim", 0), 1);
  EXPECT_EQ(back.get_doubles("w"), (std::vector<double>{0.333333, 0.666667, 1, 2e-7}));
  EXPECT_FALSE(hierarchical_layout_spec({2, 2}, 4, {}).has("w"));
}

}  // namespace
}  // namespace hit::fpm
