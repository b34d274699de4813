#pragma once
// One measurement of a kernel: how long `d` computation units took (FuPerMod §4.1, fupermod_point).

#include <cstdint>

namespace hit::fpm {

struct Point {
  std::int64_t d = 0;  // problem size in computation units (>= 1 in a model)
  double t = 0;        // seconds: the mean of the accepted repetitions (> 0 in a model)
  int reps = 1;        // repetitions the mean is taken over, after outlier rejection
  double ci = 0;       // half-width of the confidence interval of t, in seconds (0: unknown)

  friend bool operator==(const Point&, const Point&) = default;
};

}  // namespace hit::fpm
