#pragma once
// The inputs and the summary statistic the example programs and their hand-written references
// share (the references include this file too, so both compute on the very same matrices).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace hit::app {

// A value in [-1, 1) from (seed, global index): inputs are the same whatever the layout or the
// process count, so results can be compared across runs.
inline double hashed_value(std::uint64_t seed, std::uint64_t i, std::uint64_t j) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL ^ (i * 0xBF58476D1CE4E5B9ULL) ^
                    (j + 0x94D049BB133111EBULL) * 0x2545F4914F6CDD1DULL;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ULL;
  x ^= x >> 32;
  return static_cast<double>(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// max |got[k] - want[k]| / max |want[k]| over k (the plain difference where want is all zeros),
// infinite where either side holds a NaN or an infinity: std::max would pass a NaN over as no
// difference at all, and a check would call a run of NaNs equal to its reference.
inline double max_relative_difference(const std::vector<double>& got,
                                      const std::vector<double>& want) {
  double err = 0;
  double scale = 0;
  for (std::size_t k = 0; k < want.size() && k < got.size(); ++k) {
    if (!std::isfinite(got[k]) || !std::isfinite(want[k])) {
      return std::numeric_limits<double>::infinity();
    }
    err = std::max(err, std::abs(got[k] - want[k]));
    scale = std::max(scale, std::abs(want[k]));
  }
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  return scale > 0 ? err / scale : err;
}

}  // namespace hit::app
