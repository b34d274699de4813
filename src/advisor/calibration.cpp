#include "hit/advisor/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "hit/core/error.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::advisor {

namespace {

// One process of one run: its predicted kernels and launches and its measured compute.
struct Point {
  double kernels = 0;
  double launches = 0;
  double measured = 0;
};

// The kernels' factor alone: the median of measured / predicted, the predicted launches taken
// out of the measured (at most nine tenths of it: a launch overhead assumed too large must not
// leave nothing to scale).
double ratio_factor(const std::vector<Point>& points) {
  std::vector<double> ratios;
  ratios.reserve(points.size());
  for (const Point& p : points) {
    ratios.push_back(std::max(p.measured - p.launches, 0.1 * p.measured) / p.kernels);
  }
  return fpm::median(ratios);
}

// f and g of measured ≈ f · kernels + g · launches, least squares of the relative residuals,
// where the points tell them apart: the launches' time relative to the kernels' differs at least
// twofold between them (one share cannot: any split of its time between the two terms fits), and
// reaches a fifth somewhere. Below that, the run-to-run noise of the measured compute (10-20 %
// on a shared host) would move g by more than itself, and differences the model leaves out (the
// cores' contention at other shares) would be taken for launches.
std::optional<std::pair<double, double>> joint_factors(const std::vector<Point>& points) {
  constexpr double identifiable = 0.2;
  double lo = INFINITY, hi = 0;
  for (const Point& p : points) {
    const double share = p.launches / p.kernels;
    lo = std::min(lo, share);
    hi = std::max(hi, share);
  }
  if (!(lo > 0) || hi < 2 * lo || hi < identifiable) return std::nullopt;
  // Normal equations of Σ ((f k + g l) / m − 1)².
  double kk = 0, kl = 0, ll = 0, k1 = 0, l1 = 0;
  for (const Point& p : points) {
    const double k = p.kernels / p.measured, l = p.launches / p.measured;
    kk += k * k;
    kl += k * l;
    ll += l * l;
    k1 += k;
    l1 += l;
  }
  const double det = kk * ll - kl * kl;
  if (!(det > 1e-12 * kk * ll)) return std::nullopt;
  const double f = (k1 * ll - l1 * kl) / det;
  const double g = (l1 * kk - k1 * kl) / det;
  if (!(f > 0) || !(g > 0)) return std::nullopt;
  return std::pair{f, g};
}

}  // namespace

Calibration fit_calibration(std::span<const RunSample> runs) {
  if (runs.empty()) throw Error(ErrorKind::invalid_argument, "calibration needs a measured run");
  std::map<std::string, std::vector<Point>> by_key;
  std::vector<Point> all;
  for (const RunSample& r : runs) {
    const std::size_t n = r.device_keys.size();
    if (r.predicted_compute.size() != n || r.measured_compute.size() != n ||
        (!r.predicted_launch.empty() && r.predicted_launch.size() != n)) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("a calibration run has {} devices but {} predicted compute, {} "
                              "launch and {} measured compute times",
                              n, r.predicted_compute.size(), r.predicted_launch.size(),
                              r.measured_compute.size()));
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (r.predicted_compute[p] <= 0 || r.measured_compute[p] <= 0) continue;
      const Point point{.kernels = r.predicted_compute[p],
                        .launches = r.predicted_launch.empty() ? 0.0 : r.predicted_launch[p],
                        .measured = r.measured_compute[p]};
      by_key[r.device_keys[p]].push_back(point);
      all.push_back(point);
    }
  }
  Calibration c;
  c.runs = static_cast<int>(runs.size());
  for (const auto& [key, points] : by_key) {
    if (const auto fg = joint_factors(points)) {
      c.compute[key] = fg->first;
      c.launch[key] = fg->second;
    } else {
      c.compute[key] = ratio_factor(points);
    }
  }
  if (!all.empty()) c.compute_other = ratio_factor(all);
  return c;
}

Calibration refined(const Calibration& applied, const Calibration& correction) {
  if (applied.runs == 0) return correction;
  Calibration c = correction;
  c.compute_other = applied.compute_other * correction.compute_other;
  for (auto& [key, factor] : c.compute) {
    const auto it = applied.compute.find(key);
    factor *= it == applied.compute.end() ? applied.compute_other : it->second;
  }
  for (const auto& [key, factor] : applied.launch) {
    const auto it = correction.launch.find(key);
    c.launch[key] = factor * (it == correction.launch.end() ? 1.0 : it->second);
  }
  return c;
}

bool settled(const Calibration& correction, double tolerance) {
  const auto near_one = [&](double f) { return std::abs(f - 1) <= tolerance; };
  if (!near_one(correction.compute_other)) return false;
  for (const auto& [key, f] : correction.compute) {
    if (!near_one(f)) return false;
  }
  for (const auto& [key, f] : correction.launch) {
    if (!near_one(f)) return false;
  }
  return true;
}

double fit_message_overhead(const MessageSample& run) {
  double measured_compute = 0, predicted_compute = 0;
  for (const ProcessMessages& p : run.procs) {
    measured_compute = std::max(measured_compute, p.measured_compute);
    predicted_compute = std::max(predicted_compute, p.predicted_compute);
  }
  const double compute_excess = std::max(measured_compute - predicted_compute, 0.0);
  const double residual = run.measured_s - run.predicted_s - compute_excess;
  if (!(run.messages > 0) || !(residual > 0)) return 0.0;
  double overhead = residual / run.messages;
  for (const ProcessMessages& p : run.procs) {
    if (p.messages > 0) {
      overhead = std::min(overhead, std::max(p.measured_comm - p.predicted_comm, 0.0) / p.messages);
    }
  }
  return overhead;
}

}  // namespace hit::advisor
