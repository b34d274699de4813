#include "hit/fpm/partition.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "hit/core/error.hpp"
#include "hit/core/log.hpp"

namespace hit::fpm {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
using Sizes = std::vector<std::int64_t>;

// The devices and how much each may take: limit_i = min(n, capacity_i) for a usable device, 0 for
// one that cannot take work.
struct Problem {
  std::int64_t n = 0;
  Sizes limit;
  int usable = 0;
};

Problem make_problem(std::span<const Model> models, std::int64_t n, std::string_view algorithm,
                     bool need_points) {
  if (n < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition ({}): n = {} is negative; the number of units to "
                            "distribute must be >= 0",
                            algorithm, n));
  }
  if (models.empty()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition ({}): no devices; at least one model is needed", algorithm));
  }
  Problem pb;
  pb.n = n;
  pb.limit.resize(models.size());
  std::int64_t total = 0;
  std::string caps;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Model& m = models[i];
    if (need_points && m.empty() && m.capacity() > 0) {
      throw Error(ErrorKind::model,
                  fmt::format("partition ({}): the model of device {} has no points (measure it, "
                              "or give it capacity 0)",
                              algorithm, i));
    }
    const bool usable = m.capacity() > 0 && (!need_points || !m.empty());
    pb.limit[i] = usable ? std::min(n, m.capacity()) : 0;
    if (pb.limit[i] > 0) ++pb.usable;
    // Saturating: once the devices hold n units, more capacity changes nothing.
    if (__builtin_add_overflow(std::min(n, total), pb.limit[i], &total)) total = n;
    caps += (i ? ", " : "") +
            (m.capacity() == unlimited ? std::string("unlimited") : std::to_string(m.capacity()));
  }
  if (total < n) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition ({}): the total capacity of the {} devices is {} units, "
                            "below n = {} (capacities: {})",
                            algorithm, models.size(), total, n, caps));
  }
  // A device that can take nothing (`# capacity: 0`) is given nothing: said, not hidden.
  if (log::enabled(log::Level::info)) {
    std::vector<std::size_t> none;
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (models[i].capacity() == 0) none.push_back(i);
    }
    if (!none.empty()) {
      log::info(fmt::format("partition ({}): device{} {} {} capacity 0 and {} given no units",
                            algorithm, none.size() > 1 ? "s" : "", fmt::join(none, ", "),
                            none.size() > 1 ? "have" : "has", none.size() > 1 ? "are" : "is"));
    }
  }
  return pb;
}

// D_i(T): the most units (up to `limit`) whose envelope time is <= T, by inversion then a ±1
// fix-up for rounding.
std::int64_t units_by(const Model& m, double level, std::int64_t limit) {
  if (limit <= 0 || !(level >= 0)) return 0;
  const double x = m.inverse(level);
  std::int64_t d = 0;
  if (x >= static_cast<double>(limit)) {
    d = limit;
  } else if (x > 0) {
    d = static_cast<std::int64_t>(std::floor(x));
  }
  while (d < limit && m.envelope_time(static_cast<double>(d + 1)) <= level) ++d;
  while (d > 0 && m.envelope_time(static_cast<double>(d)) > level) --d;
  return d;
}

double units_by_continuous(const Model& m, double level, std::int64_t limit) {
  if (limit <= 0) return 0;
  return std::min(static_cast<double>(limit), m.inverse(level));
}

double total_units(std::span<const Model> models, const Problem& pb, double level) {
  double g = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    g += units_by_continuous(models[i], level, pb.limit[i]);
  }
  return g;
}

std::int64_t total_integer_units(std::span<const Model> models, const Problem& pb, double level) {
  std::int64_t g = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    g = std::min(g, pb.n) + units_by(models[i], level, pb.limit[i]);
  }
  return g;
}

// R1, exact greedy completion (Rounding::greedy): everything at or below the common level
// T_lo, then the cheapest next units one by one, ties to the lower index. Optimal for the
// envelope models whenever T_lo is at or below the optimal makespan.
Sizes complete(std::span<const Model> models, const Problem& pb, double level) {
  const std::size_t p = models.size();
  Sizes d(p);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < p; ++i) {
    d[i] = units_by(models[i], level, pb.limit[i]);
    sum += d[i];
  }
  using Entry = std::pair<double, std::size_t>;
  if (sum > pb.n) {
    // Only reachable through rounding of the level: hand back the most expensive units (ties:
    // the higher index gives back first, so lower indices keep theirs).
    auto later = [](const Entry& a, const Entry& b) {
      return a.first < b.first || (a.first == b.first && a.second < b.second);
    };
    std::priority_queue<Entry, std::vector<Entry>, decltype(later)> heap(later);
    for (std::size_t i = 0; i < p; ++i) {
      if (d[i] > 0) heap.emplace(models[i].envelope_time(static_cast<double>(d[i])), i);
    }
    while (sum > pb.n) {
      const auto [t, i] = heap.top();
      heap.pop();
      --d[i];
      --sum;
      if (d[i] > 0) heap.emplace(models[i].envelope_time(static_cast<double>(d[i])), i);
    }
    return d;
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (std::size_t i = 0; i < p; ++i) {
    if (d[i] < pb.limit[i]) heap.emplace(models[i].envelope_time(static_cast<double>(d[i] + 1)), i);
  }
  while (sum < pb.n) {
    if (heap.empty()) {
      throw Error(ErrorKind::internal, "partition: greedy completion ran out of capacity");
    }
    const auto [t, i] = heap.top();
    heap.pop();
    ++d[i];
    ++sum;
    if (d[i] < pb.limit[i]) heap.emplace(models[i].envelope_time(static_cast<double>(d[i] + 1)), i);
  }
  return d;
}

// The largest envelope time any device can be asked for: G(T_hi) = Σ limit_i >= n.
double level_upper_bound(std::span<const Model> models, const Problem& pb) {
  double hi = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (pb.limit[i] > 0) {
      hi = std::max(hi, models[i].envelope_time(static_cast<double>(pb.limit[i])));
    }
  }
  return hi;
}

// Safeguarded Illinois (false position) on G(T) − n over [0, T_hi]; returns a level T_lo with
// G(T_lo) <= n, within `tolerance` (relative) of the balanced level.
double level_numerical(std::span<const Model> models, const Problem& pb, double tolerance,
                       int max_iterations) {
  double lo = 0, hi = level_upper_bound(models, pb);
  double g_lo = -static_cast<double>(pb.n);
  double g_hi = total_units(models, pb, hi) - static_cast<double>(pb.n);
  if (g_hi <= 0) return hi;
  int side = 0;
  for (int it = 0; it < max_iterations; ++it) {
    if (hi - lo <= tolerance * hi) break;
    // Every third step bisects (geometrically once lo > 0), so a stubborn end cannot stall us.
    double level = (it % 3 == 2) ? (lo > 0 ? std::sqrt(lo * hi) : 0.5 * hi)
                                 : hi - g_hi * (hi - lo) / (g_hi - g_lo);
    if (!(level > lo && level < hi)) level = 0.5 * (lo + hi);
    if (!(level > lo && level < hi)) break;  // no double between them
    const double g = total_units(models, pb, level) - static_cast<double>(pb.n);
    if (g <= 0) {
      lo = level;
      g_lo = g;
      if (side == -1) g_hi *= 0.5;
      side = -1;
      if (g == 0) break;
    } else {
      hi = level;
      g_hi = g;
      if (side == 1) g_lo *= 0.5;
      side = 1;
    }
  }
  return lo;
}

Distribution finish(std::span<const Model> models, const Sizes& d, std::int64_t n,
                    std::string algorithm) {
  Distribution out;
  out.n = n;
  out.algorithm = std::move(algorithm);
  out.parts.resize(models.size());
  out.makespan = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    Part& part = out.parts[i];
    part.d = d[i];
    if (d[i] == 0) {
      part.t = 0;
    } else if (models[i].empty()) {
      part.t = std::numeric_limits<double>::quiet_NaN();  // no model: nothing to predict from
    } else {
      part.t = models[i].time(static_cast<double>(d[i]));
    }
    if (part.t > out.makespan) out.makespan = part.t;
  }
  return out;
}

std::vector<Model> constant_models(std::span<const Model> models, std::span<const double> speed) {
  std::vector<Model> out;
  out.reserve(models.size());
  for (std::size_t i = 0; i < models.size(); ++i) {
    out.push_back(speed[i] > 0 && models[i].capacity() > 0
                      ? Model::constant_speed(speed[i], models[i].capacity())
                      : Model(ModelKind::constant, 0));
  }
  return out;
}

Sizes largest_remainder(std::span<const Model> models, const Problem& pb,
                        std::span<const double> speed) {
  const std::size_t p = models.size();
  std::vector<double> x(p, 0);
  std::vector<bool> active(p);
  for (std::size_t i = 0; i < p; ++i) active[i] = pb.limit[i] > 0 && speed[i] > 0;
  double rest = static_cast<double>(pb.n);
  // Capped water-filling: proportional shares; devices over capacity are filled, the rest share
  // what is left. At least one device is clamped per round, so at most p rounds.
  for (std::size_t round = 0; round <= p; ++round) {
    double total_speed = 0;
    for (std::size_t i = 0; i < p; ++i) total_speed += active[i] ? speed[i] : 0;
    if (total_speed <= 0) break;
    bool clamped = false;
    for (std::size_t i = 0; i < p; ++i) {
      if (!active[i]) continue;
      const double share = rest * speed[i] / total_speed;
      if (share > static_cast<double>(pb.limit[i])) {
        x[i] = static_cast<double>(pb.limit[i]);
        active[i] = false;
        clamped = true;
      }
    }
    if (!clamped) {
      for (std::size_t i = 0; i < p; ++i) {
        if (active[i]) x[i] = rest * speed[i] / total_speed;
      }
      break;
    }
    rest = static_cast<double>(pb.n);
    for (std::size_t i = 0; i < p; ++i) rest -= active[i] ? 0 : x[i];
  }
  Sizes d(p);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < p; ++i) {
    d[i] = std::min(pb.limit[i], static_cast<std::int64_t>(std::floor(x[i])));
    sum += d[i];
  }
  std::vector<std::size_t> order(p);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return x[a] - std::floor(x[a]) > x[b] - std::floor(x[b]);
  });
  // Normally one pass hands out the n − Σ floor leftover units; more passes only absorb rounding.
  while (sum < pb.n) {
    const std::int64_t before = sum;
    for (std::size_t i : order) {
      if (sum == pb.n) break;
      if (d[i] < pb.limit[i]) {
        ++d[i];
        ++sum;
      }
    }
    if (sum == before) throw Error(ErrorKind::internal, "partition: rounding ran out of capacity");
  }
  for (auto it = order.rbegin(); sum > pb.n && it != order.rend(); ++it) {
    if (d[*it] > 0) {
      --d[*it];
      --sum;
    }
  }
  return d;
}

std::string_view to_string(Bisection b) {
  switch (b) {
    case Bisection::log:
      return "log";
    case Bisection::angle:
      return "angle";
    case Bisection::linear:
      return "linear";
  }
  return "?";
}

}  // namespace

Distribution partition_even(std::span<const Model> models, std::int64_t n) {
  const Problem pb = make_problem(models, n, "even", false);
  if (n == 0) return finish(models, Sizes(models.size(), 0), 0, "even");
  // Equal speeds with the exact completion: the first n mod p devices get one unit more, and
  // capacities are respected.
  const std::vector<double> ones(models.size(), 1.0);
  const std::vector<Model> unit = constant_models(models, ones);
  const Sizes d = complete(unit, pb, level_numerical(unit, pb, 1e-15, 200));
  return finish(models, d, n, "even");
}

Distribution partition_proportional(std::span<const Model> models, std::int64_t n,
                                    Rounding rounding) {
  const std::string name =
      rounding == Rounding::greedy ? "proportional" : "proportional:rounding=largest_remainder";
  const Problem pb = make_problem(models, n, "proportional", true);
  if (n == 0) return finish(models, Sizes(models.size(), 0), 0, name);
  const double probe = std::max(1.0, static_cast<double>(n) / std::max(1, pb.usable));
  std::vector<double> speed(models.size(), 0);
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (pb.limit[i] > 0) {
      speed[i] = models[i].speed(std::min(probe, static_cast<double>(models[i].capacity())));
    }
  }
  if (rounding == Rounding::largest_remainder) {
    return finish(models, largest_remainder(models, pb, speed), n, name);
  }
  const std::vector<Model> cpm = constant_models(models, speed);
  return finish(models, complete(cpm, pb, level_numerical(cpm, pb, 1e-15, 200)), n, name);
}

Distribution partition_geometric(std::span<const Model> models, std::int64_t n, Bisection bisection,
                                 int max_iterations) {
  const std::string name = bisection == Bisection::log
                               ? "geometric"
                               : fmt::format("geometric:bisection={}", to_string(bisection));
  const Problem pb = make_problem(models, n, "geometric", true);
  if (n == 0) return finish(models, Sizes(models.size(), 0), 0, name);
  std::vector<Model> coarse;
  coarse.reserve(models.size());
  for (const Model& m : models) coarse.push_back(m.coarsened());

  // Initial lines (Clarke et al. §1.3): U through the fastest and L through the slowest speed at
  // the even share x̄ = n/p; in time terms T_U = min t_i(x̄) <= T* <= T_L = max t_i(x̄).
  const double xbar = static_cast<double>(n) / pb.usable;
  double upper = inf, lower = 0;
  for (std::size_t i = 0; i < coarse.size(); ++i) {
    if (pb.limit[i] == 0) continue;
    const double t = coarse[i].envelope_time(xbar);
    upper = std::min(upper, t);
    lower = std::max(lower, t);
  }
  if (std::isinf(lower)) lower = level_upper_bound(coarse, pb);
  if (std::isinf(upper)) upper = 0;
  // Guards for shapes the bracket proof does not cover (flat stretches).
  if (total_units(coarse, pb, upper) > static_cast<double>(n)) upper = 0;
  if (total_units(coarse, pb, lower) < static_cast<double>(n))
    lower = level_upper_bound(coarse, pb);

  const auto p = static_cast<std::int64_t>(models.size());
  for (int it = 0; it < max_iterations; ++it) {
    const std::int64_t below = total_integer_units(coarse, pb, upper);
    const std::int64_t above = total_integer_units(coarse, pb, lower);
    if (above == below) break;  // no integer abscissa between U and L
    if (n - below <= p) break;  // close enough for the exact completion
    double mid = 0;
    switch (bisection) {
      case Bisection::log:
        mid = upper > 0 ? std::sqrt(upper * lower) : 0.5 * lower;
        break;
      case Bisection::linear:
        mid = 0.5 * (upper + lower);
        break;
      case Bisection::angle: {
        // Lines through the origin of the speed graph have slope 1/T; halve their angle.
        const double a_u = upper > 0 ? std::atan(1 / upper) : std::acos(0.0);
        const double a_l = std::atan(1 / lower);
        mid = 1 / std::tan(0.5 * (a_u + a_l));
        break;
      }
    }
    if (!(mid > upper && mid < lower)) break;
    (total_units(coarse, pb, mid) <= static_cast<double>(n) ? upper : lower) = mid;
  }
  return finish(models, complete(coarse, pb, upper), n, name);
}

Distribution partition_numerical(std::span<const Model> models, std::int64_t n, double tolerance,
                                 int max_iterations) {
  const Problem pb = make_problem(models, n, "numerical", true);
  if (n == 0) return finish(models, Sizes(models.size(), 0), 0, "numerical");
  return finish(models,
                complete(models, pb, level_numerical(models, pb, tolerance, max_iterations)), n,
                "numerical");
}

Distribution partition_exact(std::span<const Model> models, std::int64_t n) {
  const Problem pb = make_problem(models, n, "exact", true);
  if (n == 0) return finish(models, Sizes(models.size(), 0), 0, "exact");
  // T* is the n-th smallest unit time over all devices: for each device,
  // the first of its unit times at which n units fit everywhere; the smallest of those.
  double best = inf;
  for (std::size_t j = 0; j < models.size(); ++j) {
    if (pb.limit[j] == 0) continue;
    auto fits = [&](std::int64_t d) {
      return total_integer_units(models, pb, models[j].envelope_time(static_cast<double>(d))) >= n;
    };
    if (!fits(pb.limit[j])) continue;
    std::int64_t lo = 1, hi = pb.limit[j];
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      fits(mid) ? hi = mid : lo = mid + 1;
    }
    best = std::min(best, models[j].envelope_time(static_cast<double>(lo)));
  }
  if (std::isinf(best)) throw Error(ErrorKind::internal, "partition (exact): no feasible level");
  // Canonical distribution: everything strictly below T*, then units costing exactly T* to the
  // lower indices first.
  const double below = std::nextafter(best, 0.0);
  Sizes d(models.size());
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    d[i] = units_by(models[i], below, pb.limit[i]);
    sum += d[i];
  }
  for (std::size_t i = 0; i < models.size() && sum < n; ++i) {
    const std::int64_t extra = std::min(n - sum, units_by(models[i], best, pb.limit[i]) - d[i]);
    d[i] += extra;
    sum += extra;
  }
  if (sum != n) throw Error(ErrorKind::internal, "partition (exact): canonical distribution short");
  return finish(models, d, n, "exact");
}

Distribution partition_dp(std::span<const Model> models, std::int64_t n) {
  const Problem pb = make_problem(models, n, "dp", true);
  const auto p = models.size();
  const double work =
      static_cast<double>(p) * static_cast<double>(n + 1) * static_cast<double>(n + 1);
  if (work > 2e8) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("partition (dp): p·n² = {:.3g} is too large for dynamic programming "
                            "(limit 2e8); use 'exact' for monotone models",
                            work));
  }
  if (n == 0) return finish(models, Sizes(p, 0), 0, "dp");
  const auto width = static_cast<std::size_t>(n) + 1;
  // best[s]: the smallest makespan of s units on the devices so far; choice[k][s]: device k's
  // share.
  std::vector<double> best(width, inf), next(width);
  std::vector<std::vector<std::int64_t>> choice(p, std::vector<std::int64_t>(width, 0));
  std::vector<double> t;
  for (std::size_t k = 0; k < p; ++k) {
    t.assign(static_cast<std::size_t>(pb.limit[k]) + 1, 0);
    for (std::int64_t d = 1; d <= pb.limit[k]; ++d) {
      t[static_cast<std::size_t>(d)] = models[k].time(static_cast<double>(d));
    }
    for (std::size_t s = 0; s < width; ++s) {
      if (k == 0) {
        next[s] = s < t.size() ? t[s] : inf;
        choice[k][s] = static_cast<std::int64_t>(s);
        continue;
      }
      double v = inf;
      std::int64_t arg = 0;
      const std::size_t top = std::min(s, t.size() - 1);
      for (std::size_t d = 0; d <= top; ++d) {  // the smallest d wins ties: lower indices get more
        const double c = std::max(best[s - d], t[d]);
        if (c < v) {
          v = c;
          arg = static_cast<std::int64_t>(d);
        }
      }
      next[s] = v;
      choice[k][s] = arg;
    }
    std::swap(best, next);
  }
  Sizes d(p);
  auto s = static_cast<std::size_t>(n);
  for (std::size_t k = p; k-- > 0;) {
    d[k] = choice[k][s];
    s -= static_cast<std::size_t>(d[k]);
  }
  return finish(models, d, n, "dp");
}

Distribution evaluate(std::span<const Model> models, std::span<const std::int64_t> d,
                      std::string algorithm) {
  if (d.size() != models.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("distribution of {} parts for {} devices", d.size(), models.size()));
  }
  std::int64_t n = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] < 0 || d[i] > models[i].capacity()) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("part {} has {} units; allowed 0 to the capacity {}", i, d[i],
                              models[i].capacity()));
    }
    n += d[i];
  }
  return finish(models, Sizes(d.begin(), d.end()), n, std::move(algorithm));
}

}  // namespace hit::fpm
