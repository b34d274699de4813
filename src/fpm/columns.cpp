#include "hit/fpm/columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "hit/core/error.hpp"

namespace hit::fpm {
namespace {

double checked_total(std::span<const double> areas) {
  double total = 0;
  for (std::size_t i = 0; i < areas.size(); ++i) {
    if (!std::isfinite(areas[i]) || areas[i] < 0) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("area {} (position {}) is not a finite number >= 0", areas[i], i));
    }
    total += areas[i];
  }
  return total;
}

}  // namespace

ColumnArrangement arrange_columns(std::span<const double> areas) {
  const double total = checked_total(areas);
  ColumnArrangement out;
  std::vector<int> order;
  for (std::size_t i = 0; i < areas.size(); ++i) {
    if (areas[i] > 0) order.push_back(static_cast<int>(i));
  }
  if (order.empty() || !(total > 0)) return out;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return areas[static_cast<std::size_t>(a)] < areas[static_cast<std::size_t>(b)];
  });
  const std::size_t q = order.size();
  std::vector<double> prefix(q + 1, 0.0);  // shares of the sorted areas, summed
  for (std::size_t j = 0; j < q; ++j) {
    prefix[j + 1] = prefix[j] + areas[static_cast<std::size_t>(order[j])] / total;
  }
  // best[j]: the cheapest arrangement of the j smallest areas; from[j]: where its last column
  // starts. A column of the areas i..j-1 costs 1 (its width) + (j - i) · its share (heights).
  std::vector<double> best(q + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(q + 1, 0);
  best[0] = 0;
  // The cost of a column, (j - i) · (prefix[j] - prefix[i]), is a product of two increasing
  // interval functions, so it satisfies the quadrangle inequality: the best start of the last
  // column never moves left as j grows (Yao's decision monotonicity), and the search for
  // from[j] starts at from[j - 1]. Exact, and O(q · column length) instead of O(q²): 65 536
  // equal areas take milliseconds instead of seconds.
  for (std::size_t j = 1; j <= q; ++j) {
    for (std::size_t i = from[j - 1]; i < j; ++i) {
      const double cost = best[i] + 1.0 + static_cast<double>(j - i) * (prefix[j] - prefix[i]);
      if (cost < best[j]) {
        best[j] = cost;
        from[j] = i;
      }
    }
  }
  for (std::size_t j = q; j > 0; j = from[j]) {
    out.columns.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(from[j]),
                             order.begin() + static_cast<std::ptrdiff_t>(j));
  }
  std::reverse(out.columns.begin(), out.columns.end());
  out.cost = best[q];
  return out;
}

double column_cost(std::span<const double> areas, const std::vector<std::vector<int>>& columns) {
  const double total = checked_total(areas);
  if (!(total > 0)) return 0;
  double cost = 0;
  for (const auto& column : columns) {
    if (column.empty()) continue;
    double share = 0;
    for (const int i : column) share += areas[static_cast<std::size_t>(i)] / total;
    cost += 1.0 + static_cast<double>(column.size()) * share;
  }
  return cost;
}

double half_perimeter_bound(std::span<const double> areas) {
  const double total = checked_total(areas);
  if (!(total > 0)) return 0;
  double bound = 0;
  for (const double a : areas) bound += 2.0 * std::sqrt(a / total);
  return bound;
}

}  // namespace hit::fpm
