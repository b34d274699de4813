#include "hit/advisor/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "hit/core/error.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::advisor {

Calibration fit_calibration(std::span<const RunSample> runs) {
  if (runs.empty()) throw Error(ErrorKind::invalid_argument, "calibration needs a measured run");
  std::map<std::string, std::vector<double>> by_key;
  std::vector<double> all;
  for (const RunSample& r : runs) {
    const std::size_t n = r.device_keys.size();
    if (r.predicted_compute.size() != n || r.measured_compute.size() != n) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("a calibration run has {} devices but {} predicted and {} measured "
                              "compute times",
                              n, r.predicted_compute.size(), r.measured_compute.size()));
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (r.predicted_compute[p] <= 0 || r.measured_compute[p] <= 0) continue;
      const double ratio = r.measured_compute[p] / r.predicted_compute[p];
      by_key[r.device_keys[p]].push_back(ratio);
      all.push_back(ratio);
    }
  }
  Calibration c;
  c.runs = static_cast<int>(runs.size());
  for (auto& [key, ratios] : by_key) c.compute[key] = fpm::median(ratios);
  if (!all.empty()) c.compute_other = fpm::median(all);
  return c;
}

double fit_message_overhead(double predicted_s, double messages, double measured_s) {
  if (!(messages > 0) || !(measured_s > predicted_s)) return 0.0;
  return (measured_s - predicted_s) / messages;
}

}  // namespace hit::advisor
