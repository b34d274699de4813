#include "hit/advisor/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "hit/core/error.hpp"

namespace hit::advisor {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Calibration fit_calibration(std::span<const RunSample> runs) {
  if (runs.empty()) throw Error(ErrorKind::invalid_argument, "calibration needs a measured run");
  std::map<std::string, std::vector<double>> by_key;
  std::vector<double> all, comm;
  for (const RunSample& r : runs) {
    const std::size_t n = r.device_keys.size();
    if (r.predicted_compute.size() != n || r.measured_compute.size() != n ||
        r.predicted_comm.size() != n || r.measured_comm.size() != n) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("a calibration run has {} devices but {} and {} compute times and "
                              "{} and {} communication times",
                              n, r.predicted_compute.size(), r.measured_compute.size(),
                              r.predicted_comm.size(), r.measured_comm.size()));
    }
    std::size_t busiest = n;
    for (std::size_t p = 0; p < n; ++p) {
      if (r.predicted_comm[p] > 0 && r.measured_comm[p] > 0 &&
          (busiest == n || r.measured_compute[p] > r.measured_compute[busiest])) {
        busiest = p;
      }
      if (r.predicted_compute[p] <= 0 || r.measured_compute[p] <= 0) continue;
      const double ratio = r.measured_compute[p] / r.predicted_compute[p];
      by_key[r.device_keys[p]].push_back(ratio);
      all.push_back(ratio);
    }
    if (busiest < n) comm.push_back(r.measured_comm[busiest] / r.predicted_comm[busiest]);
  }
  Calibration c;
  c.runs = static_cast<int>(runs.size());
  for (auto& [key, ratios] : by_key) c.compute[key] = median(ratios);
  if (!all.empty()) c.compute_other = median(all);
  if (!comm.empty()) c.comm = median(comm);
  return c;
}

}  // namespace hit::advisor
