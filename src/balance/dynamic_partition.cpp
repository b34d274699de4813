#include "hit/balance/dynamic_partition.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "balance/repartition.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/fpm/statistics.hpp"

namespace hit::balance {

using fpm::check_partitioner;
using fpm::Distribution;
using fpm::evaluate;
using fpm::imbalance;
using fpm::Model;
using fpm::ModelKind;
using fpm::Part;
using fpm::partition_even;
using fpm::Point;
using fpm::spread;
using namespace detail;

namespace {

// Rank 0 partitions and broadcasts the result, so every rank holds the very same distribution.
Distribution repartition_mpi(MPI_Comm comm, const std::string& algorithm, std::int64_t n,
                             const std::vector<Model>& models, bool explore) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Distribution out;
  collectively(comm, [&] {
    if (rank == 0) out = repartition_local(algorithm, n, models, explore);
  });
  std::vector<Part> parts = out.parts;
  double makespan = out.makespan;
  broadcast(parts, 0, comm);
  broadcast(makespan, 0, comm);
  if (rank != 0) {
    out.n = n;
    out.algorithm = algorithm;
    out.parts = std::move(parts);
    out.makespan = makespan;
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
// makespans is the luckiest measurement, often of a worse distribution (docs/fpm.md, "Dynamic
// partitioning and load balancing"). The models hold every measurement, merged near the balance.
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

  const std::vector<Observation> obs = allgather(
      Observation{Point{d, m.point.t, m.point.reps, m.point.ci}, m.measured(), oom}, comm);
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

}  // namespace hit::balance
