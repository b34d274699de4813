#include "hit/fpm/distribution.hpp"

#include <algorithm>
#include <limits>

namespace hit::fpm {
namespace {

template <class Items>
double spread_of(const Items& items) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  int count = 0;
  for (const auto& item : items) {
    if (item.d <= 0) continue;
    lo = std::min(lo, item.t);
    hi = std::max(hi, item.t);
    ++count;
  }
  if (count < 2) return 0;
  return (hi - lo) / lo;
}

template <class Items>
double imbalance_of(const Items& items) {
  double hi = 0;
  double sum = 0;
  int count = 0;
  for (const auto& item : items) {
    if (item.d <= 0) continue;
    hi = std::max(hi, item.t);
    sum += item.t;
    ++count;
  }
  if (count == 0 || sum <= 0) return 1;
  return hi / (sum / count);
}

}  // namespace

std::vector<std::int64_t> Distribution::sizes() const {
  std::vector<std::int64_t> out;
  out.reserve(parts.size());
  for (const Part& p : parts) out.push_back(p.d);
  return out;
}

double spread(std::span<const Point> measured) {
  return spread_of(measured);
}
double spread(std::span<const Part> parts) {
  return spread_of(parts);
}
double imbalance(std::span<const Point> measured) {
  return imbalance_of(measured);
}
double imbalance(std::span<const Part> parts) {
  return imbalance_of(parts);
}

}  // namespace hit::fpm
