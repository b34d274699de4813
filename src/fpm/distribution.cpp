#include "hit/fpm/distribution.hpp"

#include <algorithm>
#include <limits>

namespace hit::fpm {
namespace {

template <class Items>
double spread(const Items& items) {
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

}  // namespace

std::vector<std::int64_t> Distribution::sizes() const {
  std::vector<std::int64_t> out;
  out.reserve(parts.size());
  for (const Part& p : parts) out.push_back(p.d);
  return out;
}

double imbalance(std::span<const Point> measured) {
  return spread(measured);
}
double imbalance(std::span<const Part> parts) {
  return spread(parts);
}

}  // namespace hit::fpm
