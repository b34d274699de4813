#pragma once
// Helpers of the FPM tests: model builders and an independent brute-force oracle.

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "hit/fpm/model.hpp"

namespace hit::fpm::test {

// A piecewise model through (d, f(d)) for the given sizes.
inline Model sampled(const std::function<double(double)>& f, const std::vector<std::int64_t>& ds,
                     std::int64_t capacity = unlimited, ModelKind kind = ModelKind::piecewise) {
  std::vector<Point> pts;
  for (std::int64_t d : ds) pts.push_back(Point{d, f(static_cast<double>(d)), 1, 0});
  return Model(pts, kind, capacity);
}

// The optimal integer makespan by enumerating every distribution (small n and p only); uses the
// raw model times, so it is also the optimum of non-monotone models.
inline double brute_force_makespan(const std::vector<Model>& models, std::int64_t n) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::int64_t> d(models.size(), 0);
  std::function<void(std::size_t, std::int64_t, double)> go = [&](std::size_t i, std::int64_t left,
                                                                  double worst) {
    if (worst >= best) return;
    if (i + 1 == models.size()) {
      if (left > models[i].capacity()) return;
      const double t = left == 0 ? 0 : models[i].time(static_cast<double>(left));
      best = std::min(best, std::max(worst, t));
      return;
    }
    for (std::int64_t k = 0; k <= left && k <= models[i].capacity(); ++k) {
      const double t = k == 0 ? 0 : models[i].time(static_cast<double>(k));
      go(i + 1, left - k, std::max(worst, t));
    }
  };
  go(0, n, 0);
  return best;
}

// A random piecewise model whose times increase: 1–6 points in [1, 200], sometimes a start-up
// cost (a large first time) and sometimes a capacity.
inline Model random_monotone(std::mt19937& rng, ModelKind kind = ModelKind::piecewise) {
  std::uniform_int_distribution<int> count(1, 6);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int m = count(rng);
  std::vector<Point> pts;
  std::int64_t d = 0;
  double t = 0;
  const double speed = std::exp(unit(rng) * 6);  // 1 to 400 units/s
  for (int k = 0; k < m; ++k) {
    d += 1 + static_cast<std::int64_t>(unit(rng) * 60);
    const double step = (unit(rng) < 0.2 && k == 0) ? 50.0 : 1.0;  // start-up overhead
    t += (0.05 + unit(rng) * 2) * step * static_cast<double>(d - (pts.empty() ? 0 : pts.back().d)) /
         speed;
    pts.push_back(Point{d, t, 1, 0});
  }
  std::int64_t cap = unlimited;
  if (unit(rng) < 0.25) cap = std::max<std::int64_t>(d, static_cast<std::int64_t>(unit(rng) * 300));
  if (unit(rng) < 0.05) cap = 0;
  if (cap == 0) pts.clear();
  return pts.empty() ? Model(kind, 0) : Model(pts, kind, cap);
}

// A random piecewise model whose times may go down (cache effects, alignment).
inline Model random_bumpy(std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Point> pts;
  std::int64_t d = 0;
  double t = 0;
  const int m = 2 + static_cast<int>(unit(rng) * 5);
  for (int k = 0; k < m; ++k) {
    d += 1 + static_cast<std::int64_t>(unit(rng) * 20);
    t = std::max(0.01, t + (unit(rng) - 0.3) * 2);
    pts.push_back(Point{d, t, 1, 0});
  }
  return Model(pts);
}

inline std::int64_t total_capacity(const std::vector<Model>& models, std::int64_t n) {
  std::int64_t total = 0;
  for (const Model& m : models) {
    if (m.capacity() > 0 && !m.empty()) total += std::min(n, m.capacity());
  }
  return total;
}

}  // namespace hit::fpm::test
