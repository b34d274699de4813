#include "hit/fpm/dynamic.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::fpm {
namespace {

using Sizes = std::vector<std::int64_t>;
using Repartition = std::function<Distribution(const std::vector<Model>&)>;

std::vector<Model> empty_models(int devices, ModelKind kind) {
  if (devices < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic partitioning: {} devices (at least one is needed)", devices));
  }
  return std::vector<Model>(static_cast<std::size_t>(devices), Model(kind));
}

// How much faster the lower end of a gap between two measured points must be than the upper end
// for the straight line between them to count as a guess across a cliff.
constexpr double cliff_speed_ratio = 2.0;

// Gap exploration (dynamic partitioning only). Between two measured points the partial model is a
// straight line; when the device's speed drops sharply from one point to the next (a memory
// cliff somewhere in between, as in Clarke et al.'s Fig. 1.4), that line predicts the device
// slower than it is everywhere below the cliff, so the partitioner gives it too little, the next
// measurement lands a little higher, and the share creeps towards the balance by a small fraction
// of the gap per step (tens of steps), or stays at the lower point for good when the line's
// balance rounds down to it. Here a device whose proposed share falls inside such a gap, or on
// its lower point, is instead given the share it would finish by the proposed makespan at the speed
// of the gap's lower point, but at most the middle of the gap: either that share balances, or the
// measurement there narrows the gap by half or more, so a cliff is located in log2(gap) steps. The
// other devices share the rest as the partitioner decides. Returns `proposal` when nothing applies.
Distribution explore_gaps(const std::string& algorithm, std::int64_t n,
                          const std::vector<Model>& models, const Distribution& proposal) {
  const double makespan = proposal.makespan;
  if (!(makespan > 0) || !std::isfinite(makespan)) return proposal;
  Sizes d = proposal.sizes();
  std::vector<bool> fixed(models.size(), false);
  std::int64_t fixed_sum = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& pts = models[i].points();
    const std::int64_t share = d[i];
    const auto above = std::upper_bound(pts.begin(), pts.end(), share,
                                        [](std::int64_t x, const Point& q) { return x < q.d; });
    if (share <= 0 || above == pts.begin() || above == pts.end()) continue;
    const Point& a = *std::prev(above);
    const Point& b = *above;
    const double speed_a = static_cast<double>(a.d) / a.t;
    const double speed_b = static_cast<double>(b.d) / b.t;
    if (!(speed_a > cliff_speed_ratio * speed_b)) continue;
    const auto optimistic = static_cast<std::int64_t>(std::floor(makespan * speed_a));
    const std::int64_t middle = a.d + (b.d - a.d) / 2;
    std::int64_t probe = std::max(share, std::min(optimistic, middle));
    probe = std::min({probe, b.d - 1, models[i].capacity()});
    if (probe <= share) continue;
    d[i] = probe;
    fixed[i] = true;
    fixed_sum += probe;
  }
  if (fixed_sum == 0 || fixed_sum > n) return proposal;
  std::vector<std::size_t> free;
  std::vector<Model> sub;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (!fixed[i]) {
      free.push_back(i);
      sub.push_back(models[i]);
    }
  }
  if (sub.empty()) return fixed_sum == n ? evaluate(models, d, algorithm) : proposal;
  try {
    const Distribution rest = partition(algorithm, sub, n - fixed_sum);
    for (std::size_t k = 0; k < free.size(); ++k) d[free[k]] = rest.parts[k].d;
  } catch (const Error&) {
    return proposal;  // the others cannot hold the rest: keep what the partitioner said
  }
  return evaluate(models, d, algorithm);
}

// Partitions among the devices that have models; a device that has none yet (it never had work)
// gets a probe share of one unit, taken from the largest share, so that it gets measured. With
// `explore`, shares inside a gap across a cliff are probed (explore_gaps).
Distribution repartition_local(const std::string& algorithm, std::int64_t n,
                               const std::vector<Model>& models, bool explore = false) {
  std::vector<std::size_t> known, unknown;
  for (std::size_t i = 0; i < models.size(); ++i) {
    (models[i].empty() && models[i].capacity() > 0 ? unknown : known).push_back(i);
  }
  if (unknown.empty()) {
    Distribution proposal = partition(algorithm, models, n);
    return explore ? explore_gaps(algorithm, n, models, proposal) : proposal;
  }
  const bool any_usable =
      std::any_of(known.begin(), known.end(), [&](std::size_t i) { return models[i].usable(); });
  if (!any_usable) {
    Distribution d = partition_even(models, n);
    d.algorithm = algorithm;
    return d;
  }
  std::vector<Model> sub;
  sub.reserve(known.size());
  for (std::size_t i : known) sub.push_back(models[i]);
  const Distribution part = partition(algorithm, sub, n);
  Sizes d(models.size(), 0);
  for (std::size_t k = 0; k < known.size(); ++k) d[known[k]] = part.parts[k].d;
  for (std::size_t i : unknown) {
    const auto donor = std::max_element(d.begin(), d.end());  // first largest: the lower index
    if (*donor < 2) break;
    --*donor;
    d[i] = 1;
  }
  return evaluate(models, d, algorithm);
}

// Rank 0 partitions and broadcasts the result, so every rank holds the very same distribution.
Distribution repartition_mpi(MPI_Comm comm, const std::string& algorithm, std::int64_t n,
                             const std::vector<Model>& models, bool explore) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Distribution out;
  collectively(comm, [&] {
    if (rank == 0) out = repartition_local(algorithm, n, models, explore);
  });
  const std::size_t p = models.size();
  Sizes d(p);
  std::vector<double> t(p + 1);
  if (rank == 0) {
    for (std::size_t i = 0; i < p; ++i) {
      d[i] = out.parts[i].d;
      t[i] = out.parts[i].t;
    }
    t[p] = out.makespan;
  }
  check_mpi(MPI_Bcast(d.data(), static_cast<int>(p), MPI_INT64_T, 0, comm), "fpm: MPI_Bcast");
  check_mpi(MPI_Bcast(t.data(), static_cast<int>(p + 1), MPI_DOUBLE, 0, comm), "fpm: MPI_Bcast");
  if (rank != 0) {
    out.n = n;
    out.algorithm = algorithm;
    out.parts.resize(p);
    for (std::size_t i = 0; i < p; ++i) out.parts[i] = Part{d[i], t[i]};
    out.makespan = t[p];
  }
  return out;
}

struct Observation {
  Point point;
  bool measured = false;       // a point was measured (d > 0 and no failure)
  bool out_of_memory = false;  // the device could not hold d units
};

void ensure_started(PartitionContext& ctx) {
  if (!ctx.dist.parts.empty()) return;
  ctx.dist = partition_even(ctx.models, ctx.n);
  ctx.dist.algorithm = "even";
}

// Two nearby points whose speeds differ by more than this are not noise around one speed but the
// two sides of a cliff, and stay apart.
constexpr double max_merge_speed_ratio = 1.25;

// Adds a measured point to a partial model. A point within `within` × d of one the model holds is
// merged with it instead (d and t averaged): near the balance the loop measures shares a few units
// apart, and the straight line between two such points has a slope made of their noise (times
// that fall as d grows, which coarsening then flattens), so the partitioner's next step would
// follow the noise. Merged, the neighbourhood becomes one point, and slopes come from points far
// apart. The new measurement weighs at least as much as everything merged before it (weights are
// repetitions, the old ones capped at the new count): a shared machine's speed drifts over
// seconds, and an average over all past steps would describe a machine that no longer exists.
// Points on the two sides of a cliff are never merged.
void add_measurement(Model& model, const Point& point, double within) {
  const auto& pts = model.points();
  const Point* near = nullptr;
  const double speed = static_cast<double>(point.d) / point.t;
  for (const Point& q : pts) {
    const double gap = std::abs(static_cast<double>(q.d - point.d));
    const double ratio = speed * q.t / static_cast<double>(q.d);
    if (q.d != point.d && gap <= within * static_cast<double>(point.d) &&
        ratio < max_merge_speed_ratio && ratio > 1 / max_merge_speed_ratio &&
        (near == nullptr || gap < std::abs(static_cast<double>(near->d - point.d)))) {
      near = &q;
    }
  }
  if (near == nullptr) {
    model.add(point);
    return;
  }
  const double wb = std::max(point.reps, 1);
  const double wa = std::min<double>(std::max(near->reps, 1), wb);
  const double w = wa + wb;
  Point merged;
  merged.d =
      std::llround((wa * static_cast<double>(near->d) + wb * static_cast<double>(point.d)) / w);
  merged.t = (wa * near->t + wb * point.t) / w;
  merged.reps = near->reps + point.reps;
  merged.ci = std::sqrt(wa * wa * near->ci * near->ci + wb * wb * point.ci * point.ci) / w;
  const std::int64_t old_d = near->d;
  model.remove(old_d);
  model.add(merged);
}

// The step taken when the models see nothing better than the distribution just measured although
// its measured times disagree: shares proportional to the speeds measured in this step, d_i/t_i,
// with the makespan that constant models of those speeds predict. The models mix steps taken
// seconds apart, and on a shared machine whose speed drifts they can agree on a balance that the
// devices, measured together, do not show; the speeds of one step are measured under the same
// conditions. Returns an empty distribution when that is not possible (a device without a share or
// a measurement) or when the models predict the step far worse than what was measured (it would
// cross a cliff the models already know).
Distribution proportional_step(std::span<const Model> models, std::span<const Point> measured,
                               const Sizes& current, std::int64_t n, const std::string& algorithm,
                               double measured_makespan, double tolerance) {
  std::vector<Model> local;
  for (std::size_t i = 0; i < current.size(); ++i) {
    const Point& p = measured[i];
    if (current[i] <= 0 || p.d != current[i] || !(p.t > 0)) return {};
    local.emplace_back(std::vector<Point>{Point{p.d, p.t, 1, 0}}, ModelKind::constant,
                       models[i].capacity());
  }
  try {
    Distribution next = partition("proportional", local, n);
    const Distribution predicted = evaluate(models, next.sizes(), algorithm);
    if (!(predicted.makespan <= (1 + tolerance) * measured_makespan)) return {};
    return next;
  } catch (const Error&) {
    return {};
  }
}

// The half-width of the confidence interval of the measured spread, relative: the slowest and
// the fastest device's relative intervals combined. A measured spread inside it cannot be told
// from balance.
double difference_noise(const std::vector<Point>& measured) {
  const Point* slowest = nullptr;
  const Point* fastest = nullptr;
  for (const Point& p : measured) {
    if (p.d <= 0 || !(p.t > 0)) continue;
    if (slowest == nullptr || p.t > slowest->t) slowest = &p;
    if (fastest == nullptr || p.t < fastest->t) fastest = &p;
  }
  if (slowest == nullptr) return 0;
  return std::hypot(slowest->ci / slowest->t, fastest->ci / fastest->t);
}

// The distribution kept when the loop ends without converging: of those measured, the one whose
// makespan the models now predict smallest. Not the smallest measured makespan: near the balance
// the measured distributions differ by less than the noise, and the smallest of a few noisy
// makespans is the luckiest measurement, often of a worse distribution (a run ended on a split
// 4 % off the balance that way). The models hold every measurement, merged near the balance.
// Distributions the models no longer admit (a capacity found since) are skipped.
void choose_best(PartitionContext& ctx) {
  ctx.best = Distribution{};
  ctx.best_makespan = std::numeric_limits<double>::infinity();
  for (const Sizes& d : ctx.tried) {
    try {
      Distribution e = evaluate(ctx.models, d, ctx.algorithm);
      if (e.makespan < ctx.best_makespan) {
        ctx.best_makespan = e.makespan;
        ctx.best = std::move(e);
      }
    } catch (const Error&) {
    }
  }
}

DynamicStatus advance(PartitionContext& ctx, const std::vector<Observation>& obs, double eps,
                      double asked_precision, const Repartition& repartition) {
  if (!(eps >= 0)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic partitioning: eps = {} (must be >= 0)", eps));
  }
  if (!(ctx.merge_within >= 0 && ctx.merge_within < 1)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic partitioning: merge_within = {} (must be in [0, 1))",
                            ctx.merge_within));
  }
  ++ctx.iterations;
  const Sizes current = ctx.dist.sizes();
  bool complete = true;
  double makespan = 0;
  double threshold = eps;
  ctx.measured.assign(obs.size(), Point{0, 0, 0, 0});
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const Observation& o = obs[i];
    if (o.out_of_memory) {
      // The capacity lies between the largest size that ran and the one that failed: bisect, so
      // a device far over its memory needs log2 steps, not one step per unit.
      const auto& pts = ctx.models[i].points();
      const std::int64_t ran = pts.empty() ? 0 : std::min(pts.back().d, current[i] - 1);
      ctx.models[i].set_capacity(ran + (current[i] - ran) / 2);
      complete = false;
    } else if (o.measured) {
      ctx.measured[i] = o.point;
      makespan = std::max(makespan, o.point.t);
    } else if (current[i] > 0) {
      complete = false;  // a peer's failure stopped this device's measurement
    }
  }
  ctx.spread = spread(ctx.measured);
  ctx.imbalance = imbalance(ctx.measured);
  // The points join the models even when this is the last step: the models then describe the
  // final distribution too (and can be saved and reused).
  for (std::size_t i = 0; i < obs.size(); ++i) {
    if (obs[i].measured) add_measurement(ctx.models[i], obs[i].point, ctx.merge_within);
  }
  if (complete) {
    // Noise up to what the measurements were asked for excuses a spread above eps; a machine
    // noisier than that (a measurement cut short by max_seconds) excuses no more: the loop goes
    // on, and the merged points near the balance grow more precise with every step.
    const double noise = std::min(difference_noise(ctx.measured), std::sqrt(2.0) * asked_precision);
    threshold = std::max(eps, noise);
    if (ctx.spread <= threshold) return ctx.status = DynamicStatus::converged;
  }
  ctx.tried.push_back(current);
  choose_best(ctx);
  Distribution next = repartition(ctx.models);
  if (next.sizes() == current && complete) {
    // Every rank holds the same measurements, so every rank computes the same step.
    const Distribution step = proportional_step(ctx.models, ctx.measured, current, ctx.n,
                                                ctx.algorithm, makespan, threshold);
    if (!step.parts.empty() && step.sizes() != current) {
      next = evaluate(ctx.models, step.sizes(), ctx.algorithm);
    }
  }
  const Sizes proposed = next.sizes();
  if (proposed == current) return ctx.status = DynamicStatus::stalled;
  if (ctx.iterations > 2 &&
      std::find(ctx.tried.begin(), ctx.tried.end(), proposed) != ctx.tried.end()) {
    if (!ctx.best.parts.empty()) ctx.dist = ctx.best;
    return ctx.status = DynamicStatus::cycling;
  }
  ctx.dist = std::move(next);
  return ctx.status = DynamicStatus::running;
}

bool is_out_of_memory(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::out_of_memory;
  } catch (...) {
    return false;
  }
}

void check_devices(std::size_t models, std::size_t devices, std::string_view what) {
  if (models != devices) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("{}: the context has {} devices but {} were given", what, models, devices));
  }
}

}  // namespace

std::string_view to_string(DynamicStatus status) noexcept {
  switch (status) {
    case DynamicStatus::running:
      return "running";
    case DynamicStatus::converged:
      return "converged";
    case DynamicStatus::stalled:
      return "stalled";
    case DynamicStatus::cycling:
      return "cycling";
    case DynamicStatus::not_converged:
      return "not_converged";
  }
  return "?";
}

PartitionContext::PartitionContext(std::int64_t units, int devices, std::string algo,
                                   ModelKind kind)
    : n(units), algorithm(std::move(algo)), models(empty_models(devices, kind)) {
  if (n < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("dynamic partitioning: n = {} is negative (must be >= 0)", n));
  }
  check_partitioner(algorithm);
}

DynamicStatus partition_iterate(PartitionContext& ctx, MPI_Comm comm, const BenchmarkKernel& kernel,
                                const Precision& precision, double eps, MPI_Comm sync_comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  check_devices(ctx.models.size(), static_cast<std::size_t>(size), "partition_iterate");
  if (ctx.status != DynamicStatus::running) return ctx.status;
  collectively(comm, [&] { ensure_started(ctx); });

  const std::int64_t d = ctx.dist.parts[static_cast<std::size_t>(rank)].d;
  const Measurement m = measure(kernel, d, precision, sync_comm);
  const bool oom = m.failure && is_out_of_memory(m.failure);
  agree(comm, oom ? nullptr : m.failure);

  const bool measured = m.measured();
  const double mine[6] = {
      static_cast<double>(d), m.point.t,           static_cast<double>(m.point.reps), m.point.ci,
      oom ? 1.0 : 0.0,        measured ? 1.0 : 0.0};
  std::vector<double> all(6 * static_cast<std::size_t>(size));
  allgather(mine, 6, MPI_DOUBLE, all.data(), comm);
  std::vector<Observation> obs(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const double* row = &all[6 * i];
    obs[i].point =
        Point{static_cast<std::int64_t>(row[0]), row[1], static_cast<int>(row[2]), row[3]};
    obs[i].out_of_memory = row[4] != 0;
    obs[i].measured = row[5] != 0;
  }
  return advance(ctx, obs, eps, precision.rel_ci, [&](const std::vector<Model>& models) {
    return repartition_mpi(comm, ctx.algorithm, ctx.n, models, true);
  });
}

DynamicStatus partition_iterate(PartitionContext& ctx, std::span<const BenchmarkKernel> devices,
                                const Precision& precision, double eps) {
  check_devices(ctx.models.size(), devices.size(), "partition_iterate");
  if (ctx.status != DynamicStatus::running) return ctx.status;
  ensure_started(ctx);
  std::vector<Observation> obs(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::int64_t d = ctx.dist.parts[i].d;
    const Measurement m = measure(devices[i], d, precision, MPI_COMM_NULL);
    if (m.failure) {
      if (!is_out_of_memory(m.failure)) std::rethrow_exception(m.failure);
      obs[i].out_of_memory = true;
    } else {
      obs[i].measured = m.measured();
    }
    obs[i].point = m.point;
  }
  return advance(ctx, obs, eps, precision.rel_ci, [&](const std::vector<Model>& models) {
    return repartition_local(ctx.algorithm, ctx.n, models, true);
  });
}

DynamicStatus partition_step(PartitionContext& ctx, std::span<const Point> measured, double eps,
                             double noise) {
  check_devices(ctx.models.size(), measured.size(), "partition_step");
  if (ctx.status != DynamicStatus::running) return ctx.status;
  ensure_started(ctx);
  std::vector<Observation> obs(measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    obs[i].point = measured[i];
    obs[i].measured = measured[i].d > 0 && measured[i].t > 0;
  }
  return advance(ctx, obs, eps, noise, [&](const std::vector<Model>& models) {
    return repartition_local(ctx.algorithm, ctx.n, models, true);
  });
}

namespace {

template <class Step>
DynamicStatus drive(PartitionContext& ctx, int max_iterations, Step&& step) {
  while (ctx.status == DynamicStatus::running && ctx.iterations < max_iterations) step();
  if (ctx.status == DynamicStatus::running) {
    ctx.status = DynamicStatus::not_converged;
    if (!ctx.best.parts.empty()) ctx.dist = ctx.best;
  }
  return ctx.status;
}

}  // namespace

DynamicStatus partition_dynamic(PartitionContext& ctx, MPI_Comm comm, const BenchmarkKernel& kernel,
                                const Precision& precision, double eps, int max_iterations,
                                MPI_Comm sync_comm) {
  return drive(ctx, max_iterations,
               [&] { partition_iterate(ctx, comm, kernel, precision, eps, sync_comm); });
}

DynamicStatus partition_dynamic(PartitionContext& ctx, std::span<const BenchmarkKernel> devices,
                                const Precision& precision, double eps, int max_iterations) {
  return drive(ctx, max_iterations, [&] { partition_iterate(ctx, devices, precision, eps); });
}

// ---- dynamic load balancing ----------------------------------------------------------------

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
  ctx.measured.assign(ctx.models.size(), Point{0, 0, 0, 0});
  double now = 0;
  ctx.settling.resize(ctx.models.size(), ctx.settle);
  bool settling = false;
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
  ctx.spread = spread(ctx.measured);
  ctx.imbalance = imbalance(ctx.measured);
  if (settling) return false;
  // The noise of the times: the largest relative standard error of a device's median over its
  // recent times at one share (median_error). A spread or a predicted gain within it cannot be
  // told from chance, and on a shared machine chasing it moves data for nothing (an eps below the
  // noise never converges).
  // Right after a move that restarted every window nothing tells the noise: the last estimate
  // stands (a machine does not get quieter because the shares changed).
  double noise = -1;
  for (std::size_t i = 0; i < current.size(); ++i) {
    const auto& r = ctx.recent[i];
    if (current[i] <= 0 || r.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
    noise = std::max(noise, median_error(*hi - *lo, r.size()) / median(r));
  }
  if (noise >= 0) ctx.noise = noise;
  // The spread is the range of the working devices' medians: even balanced devices spread by a
  // few of their standard errors (three by 1.7 on average). Only a spread beyond the range that
  // chance exceeds one step in ten tells an imbalance; below it a move chases the noise and
  // restarts the windows that were narrowing it.
  const auto working =
      static_cast<int>(std::count_if(current.begin(), current.end(), [](auto d) { return d > 0; }));
  if (working >= 2 && working != ctx.range_devices) {
    ctx.range_devices = working;
    ctx.range_critical = normal_range_quantile(spread_confidence, working);
  }
  const double threshold = std::max(ctx.eps, working >= 2 ? ctx.range_critical * ctx.noise : 0.0);
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
    // window decide (as partition_iterate does). Left to the models, a run kept 17 % between two
    // devices for its last 75 iterations.
    Distribution step =
        proportional_step(ctx.models, ctx.measured, current, ctx.n, ctx.algorithm, now, threshold);
    if (promising(step)) next = std::move(step);
  }
  if (!promising(next)) return false;
  const double gain = (now - next.makespan) * static_cast<double>(ctx.remaining_iterations);
  const double cost =
      ctx.move_cost ? ctx.move_cost(current, next.sizes())
      : ctx.migration_cost_per_unit > 0
          ? ctx.migration_cost_per_unit * static_cast<double>(units_moved(current, next.sizes()))
          : ctx.migration_cost;
  if (!(gain > cost)) return false;
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
  ctx.dist = std::move(next);
  return true;
}

}  // namespace

bool balance_iterate(BalanceContext& ctx, MPI_Comm comm, double seconds) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  check_devices(ctx.models.size(), static_cast<std::size_t>(size), "balance_iterate");
  std::vector<double> all(static_cast<std::size_t>(size));
  allgather(&seconds, 1, MPI_DOUBLE, all.data(), comm);
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

}  // namespace hit::fpm
