#include "hit/balance/dynamic_balance.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <iterator>

#include "balance/repartition.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::balance {

using fpm::check_partitioner;
using fpm::Distribution;
using fpm::imbalance;
using fpm::median;
using fpm::Model;
using fpm::ModelKind;
using fpm::normal_range_quantile;
using fpm::partition_even;
using fpm::Point;
using fpm::spread;
using namespace detail;

BalanceContext::BalanceContext(std::int64_t units, int devices, std::string algo, ModelKind kind)
    : n(units), algorithm(std::move(algo)), models(empty_models(devices, kind)) {
  if (n < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic load balancing: n = {} is negative (must be >= 0)", n));
  }
  check_partitioner(algorithm);
  dist = partition_even(models, n);
  recent.resize(models.size());
}

namespace {

// The standard error of the median of k times whose range is `range`: the deviation estimated
// from the range (Tippett's d2 of a normal sample), over √k, times the median's efficiency (1.2533
// against the mean; 1 for two times, whose median is their mean). A spread between devices'
// medians within it cannot be told from chance; a longer window narrows it (beyond 25 times d2
// stays at 25's, which overstates the error a little).
double median_error(double range, std::size_t k) {
  static constexpr double d2[] = {0,     0,     1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847,
                                  2.970, 3.078, 3.173, 3.258, 3.336, 3.407, 3.472, 3.532, 3.588,
                                  3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931};
  constexpr std::size_t largest = std::size(d2) - 1;
  if (k < 2) return 0;
  const double sigma = range / d2[std::min(k, largest)];
  return (k == 2 ? 1.0 : 1.2533) * sigma / std::sqrt(static_cast<double>(k));
}

// A measured time this far (relative) from the model's prediction, or 4 eps when that is more,
// means the device changed.
constexpr double changed_device = 0.5;

// How often balanced devices may spread beyond the threshold by chance (normal_range_quantile).
constexpr double spread_confidence = 0.9;

// The model with every time multiplied by `factor`.
Model scaled(const Model& model, double factor) {
  std::vector<Point> points = model.points();
  for (Point& p : points) {
    p.t *= factor;
    p.ci *= factor;
  }
  return Model(std::move(points), model.kind(), model.capacity());
}

// Adds this step's times (seconds[i] for device i's share in `current`) to the windows and the
// models; sets ctx.measured and returns the slowest median. `settling`: a device ignored its time.
double record_times(BalanceContext& ctx, std::span<const double> seconds, const Sizes& current,
                    bool& settling) {
  ctx.measured.assign(ctx.models.size(), Point{0, 0, 0, 0});
  double now = 0;
  ctx.settling.resize(ctx.models.size(), ctx.settle);
  settling = false;
  for (std::size_t i = 0; i < ctx.models.size(); ++i) {
    if (current[i] <= 0) continue;
    if (ctx.settling[i] > 0) {
      // The first iterations at a new share (staging the new tile, caches): not its speed.
      --ctx.settling[i];
      settling = true;
      continue;
    }
    if (!(seconds[i] > 0) || !std::isfinite(seconds[i])) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("balance_iterate: device {} reported {} s for {} units (must be "
                              "> 0)",
                              i, seconds[i], current[i]));
    }
    auto& r = ctx.recent[i];
    if (i < ctx.stored.size() && ctx.stored[i]) {
      ctx.stored[i] = false;
      if (ctx.models[i].usable()) {
        const double predicted = ctx.models[i].time(static_cast<double>(current[i]));
        if (predicted > 0 && std::isfinite(predicted)) {
          ctx.models[i] = scaled(ctx.models[i], seconds[i] / predicted);
        }
      }
    }
    // A device whose time at its share is far from what its model predicts has changed (another
    // job arrived, it throttles): its older points and times describe a device that is gone.
    if (ctx.models[i].usable()) {
      const double predicted = ctx.models[i].time(static_cast<double>(current[i]));
      if (predicted > 0 &&
          std::abs(seconds[i] / predicted - 1) > std::max(changed_device, 4 * ctx.eps)) {
        ctx.models[i] = Model(ctx.models[i].kind(), ctx.models[i].capacity());
        r.clear();
        ++ctx.resets;
      }
    }
    r.push_back(seconds[i]);
    if (static_cast<int>(r.size()) > ctx.window) r.erase(r.begin());
    const Point p{current[i], median(r), static_cast<int>(r.size()), 0};
    add_measurement(ctx.models[i], p, ctx.eps);
    ctx.measured[i] = p;
    now = std::max(now, p.t);
  }
  return now;
}

// The noise of the times: the largest relative standard error of a device's median over its
// recent times at one share (median_error). A spread or a predicted gain within it cannot be
// told from chance, and on a shared machine chasing it moves data for nothing (an eps below the
// noise never converges).
// Right after a move that restarted every window nothing tells the noise: the last estimate
// stands (a machine does not get quieter because the shares changed).
void estimate_noise(BalanceContext& ctx, const Sizes& current) {
  double noise = -1;
  for (std::size_t i = 0; i < current.size(); ++i) {
    const auto& r = ctx.recent[i];
    if (current[i] <= 0 || r.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
    noise = std::max(noise, median_error(*hi - *lo, r.size()) / median(r));
  }
  if (noise >= 0) ctx.noise = noise;
}

// The spread beyond which the devices at work count as imbalanced. The spread is the range of the
// working devices' medians: even balanced devices spread by a few of their standard errors (three
// by 1.7 on average). Only a spread beyond the range that chance exceeds one step in ten tells an
// imbalance; below it a move chases the noise and restarts the windows that were narrowing it.
double imbalance_threshold(BalanceContext& ctx, const Sizes& current) {
  const auto working =
      static_cast<int>(std::count_if(current.begin(), current.end(), [](auto d) { return d > 0; }));
  if (working >= 2 && working != ctx.range_devices) {
    ctx.range_devices = working;
    ctx.range_critical = normal_range_quantile(spread_confidence, working);
  }
  return std::max(ctx.eps, working >= 2 ? ctx.range_critical * ctx.noise : 0.0);
}

// The predicted seconds of moving from `current` to `next`.
double move_cost(const BalanceContext& ctx, const Sizes& current, const Sizes& next) {
  if (ctx.move_cost) return ctx.move_cost(current, next);
  if (ctx.migration_cost_per_unit > 0) {
    return ctx.migration_cost_per_unit * static_cast<double>(units_moved(current, next));
  }
  return ctx.migration_cost;
}

// What a move from `current` to `next` does to the windows of the devices whose share changes.
void follow_move(BalanceContext& ctx, const Sizes& current, const Distribution& next) {
  for (std::size_t i = 0; i < current.size(); ++i) {
    const std::int64_t d = next.parts[i].d;
    if (d == current[i]) continue;
    const double ratio =
        current[i] > 0 ? static_cast<double>(d) / static_cast<double>(current[i]) : 0;
    if (ratio > 0 && std::abs(ratio - 1) <= ctx.eps) {
      // A correction within eps: the recent times, scaled to the new share, still measure the
      // device, and its window keeps them. Restarting it would leave each step one noisy median,
      // and the next step would chase that noise with another small move.
      for (double& t : ctx.recent[i]) t *= ratio;
    } else {
      // A point measured in one step only, right after the last move (pages touched for the first
      // time, a burst of the machine's noise), is not kept once the share leaves it: such points,
      // far from where the device works, would steer the partitioner long after.
      if (ctx.recent[i].size() < 2 && ctx.models[i].points().size() > 1) {
        ctx.models[i].remove(current[i]);
      }
      ctx.recent[i].clear();
      ctx.settling[i] = ctx.settle;
    }
  }
}

bool advance_balance(BalanceContext& ctx, std::span<const double> seconds,
                     const Repartition& repartition) {
  if (ctx.window < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("balance_iterate: window = {} (must be >= 1)", ctx.window));
  }
  ++ctx.iterations;
  ctx.reported.assign(seconds.begin(), seconds.end());
  ctx.recent.resize(ctx.models.size());
  const Sizes current = ctx.dist.sizes();
  bool settling = false;
  const double now = record_times(ctx, seconds, current, settling);
  ctx.spread = spread(ctx.measured);
  ctx.imbalance = imbalance(ctx.measured);
  if (settling) return false;
  estimate_noise(ctx, current);
  const double threshold = imbalance_threshold(ctx, current);
  // Balanced among the devices at work: unless an idle one (no share, a model) would now shorten
  // the step by more than that, as when the others slowed down since it was left out.
  const bool idle =
      std::any_of(current.begin(), current.end(), [](std::int64_t d) { return d == 0; });
  if (ctx.spread <= threshold && !idle) return false;
  Distribution next = repartition(ctx.models);
  const double margin = idle ? threshold : ctx.noise;
  const auto promising = [&](const Distribution& d) {
    return !d.parts.empty() && d.sizes() != current && d.makespan < (1 - margin) * now;
  };
  if (!promising(next) && !idle) {
    // The devices, measured together, spread beyond chance, yet the models, whose points come
    // from steps taken under other loads of the machine, see nothing better: the speeds of this
    // window decide, as partition_iterate does (docs/fpm.md, "Dynamic partitioning and load
    // balancing", says what happened without this).
    Distribution step =
        proportional_step(ctx.models, ctx.measured, current, ctx.n, ctx.algorithm, now, threshold);
    if (promising(step)) next = std::move(step);
  }
  if (!promising(next)) return false;
  const double gain = (now - next.makespan) * static_cast<double>(ctx.remaining_iterations);
  if (!(gain > move_cost(ctx, current, next.sizes()))) return false;
  follow_move(ctx, current, next);
  ctx.dist = std::move(next);
  return true;
}

}  // namespace

bool balance_iterate(BalanceContext& ctx, MPI_Comm comm, double seconds) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  check_devices(ctx.models.size(), static_cast<std::size_t>(size), "balance_iterate");
  const std::vector<double> all = allgather(seconds, comm);
  // Every rank holds the same times and context, so every rank takes the same decisions (and
  // throws the same error for a bad time) and computes the same partition: no further message in a
  // step that runs after every iteration of the application.
  return advance_balance(ctx, all, [&](const std::vector<Model>& models) {
    return repartition_local(ctx.algorithm, ctx.n, models);
  });
}

bool balance_iterate(BalanceContext& ctx, MPI_Comm comm,
                     std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return balance_iterate(ctx, comm, seconds);
}

bool balance_iterate(BalanceContext& ctx, std::span<const double> seconds) {
  check_devices(ctx.models.size(), seconds.size(), "balance_iterate");
  return advance_balance(ctx, seconds, [&](const std::vector<Model>& models) {
    return repartition_local(ctx.algorithm, ctx.n, models);
  });
}

void start_from_stored(BalanceContext& ctx, std::span<const Model> stored) {
  if (stored.size() != ctx.models.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("balancing: {} stored models for {} processes (give one per process)",
                            stored.size(), ctx.models.size()));
  }
  // Their points are the partial models' first: the partition starts from everything known,
  // and a device the run finds far from its model restarts it (balance_iterate).
  for (std::size_t p = 0; p < ctx.models.size(); ++p) {
    ctx.models[p] = stored[p].with_kind(ctx.models[p].kind());
  }
  ctx.stored.assign(ctx.models.size(), true);
  ctx.dist = fpm::partition(ctx.algorithm, ctx.models, ctx.n);
}

std::int64_t units_moved(const std::vector<std::int64_t>& before,
                         const std::vector<std::int64_t>& after) {
  std::int64_t moved = 0, b0 = 0, a0 = 0;
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const std::int64_t b1 = b0 + before[i], a1 = a0 + after[i];
    const std::int64_t kept = std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
    moved += (a1 - a0) - kept;
    b0 = b1;
    a0 = a1;
  }
  return moved;
}

}  // namespace hit::balance
