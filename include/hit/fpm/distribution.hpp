#pragma once
// The result of a partitioner (FuPerMod §4.3, fupermod_dist): units per device with the predicted
// time of each, summing exactly to n.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hit/fpm/point.hpp"

namespace hit::fpm {

struct Part {
  std::int64_t d = 0;  // units given to the device
  double t = 0;        // predicted seconds for them (0 when d = 0)

  friend bool operator==(const Part&, const Part&) = default;
};

struct Distribution {
  std::int64_t n = 0;     // total units; the parts' d sum to it exactly
  std::string algorithm;  // the partitioner spec that produced it
  std::vector<Part> parts;
  double makespan = 0;  // the largest predicted time

  std::vector<std::int64_t> sizes() const;
};

// The spread of the times, (max t − min t) / min t over the entries with d > 0 (0 when fewer than
// two have work): the measured balance that dynamic partitioning and balancing compare with eps
// (Clarke et al. use it as the stopping rule of their iterative partitioners).
double spread(std::span<const Point> measured);
double spread(std::span<const Part> parts);
// The imbalance, as every hitmap++ report means it: the largest time over the mean time of the
// entries with d > 0 (1 is perfect balance; 1 when none has work).
double imbalance(std::span<const Point> measured);
double imbalance(std::span<const Part> parts);

}  // namespace hit::fpm
