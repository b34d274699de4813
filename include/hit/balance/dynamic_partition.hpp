#pragma once
// Dynamic data partitioning with partial models (FuPerMod §4.4, Clarke et al. §1.8; docs/fpm.md,
// "Dynamic partitioning and load balancing"): no model is needed in advance. One step benchmarks
// the kernel on every device at the current distribution, stops when the measured times agree
// within eps, else adds the points to partial models and repartitions.
//
// The MPI forms are collective over `comm`: device i is rank i, each rank measures its own device,
// points are exchanged, and the new distribution is computed on rank 0 and broadcast, so every
// rank holds the same context afterwards. The serial forms simulate several devices in one
// process (one kernel per device).

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hit/balance/benchmark.hpp"
#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit::balance {

enum class DynamicStatus {
  running,        // not decided yet: measure the (new) distribution next
  converged,      // the measured times agree within eps: `dist` is balanced
  stalled,        // the models predict nothing better than the distribution just measured
  cycling,        // the partitioner returned to an earlier distribution: `dist` is `best`
  not_converged,  // the iteration limit was reached: `dist` is `best`
};
std::string_view to_string(DynamicStatus status) noexcept;

// The context of dynamic partitioning (fupermod_dynamic).
struct PartitionContext {
  PartitionContext(std::int64_t n, int devices, std::string algorithm = "geometric",
                   fpm::ModelKind kind = fpm::ModelKind::piecewise);

  std::int64_t n;
  std::string algorithm;           // the partitioner spec that repartitions (see partition())
  std::vector<fpm::Model> models;  // one partial model per device; set known capacities before use
  fpm::Distribution dist;          // the next distribution to measure (even at first); the result
  std::vector<fpm::Point> measured;  // the last measurement of every device (d = 0: not measured)
  // Of the last measurement: the spread compared with eps, and the imbalance (max/mean) reported.
  double spread = std::numeric_limits<double>::infinity();
  double imbalance = std::numeric_limits<double>::infinity();
  int iterations = 0;
  DynamicStatus status = DynamicStatus::running;
  // Of the distributions measured, the one whose makespan the current models predict smallest
  // (a noisy machine's smallest measured makespan is its luckiest measurement, not the best split).
  fpm::Distribution best;
  double best_makespan = std::numeric_limits<double>::infinity();
  std::vector<std::vector<std::int64_t>> tried;  // the distributions measured so far
  // A new point within this fraction of d from one a model holds is merged with it (averaged,
  // weighted by repetitions) rather than added: see docs/fpm.md, "Noise near the balance".
  double merge_within = 0.02;
};

// One step. Measurement failures: Error(out_of_memory) from a device's kernel lowers that device's
// capacity to halfway between the largest size it ran and the size that failed, and the step
// repartitions; any other failure is thrown on every rank. Converged: the measured spread
// ((max t − min t) / min t) is at most eps, or within its own confidence interval (the slowest and
// the fastest device's relative intervals combined), since a difference inside it cannot be told
// from balance; the interval counts only up to what `precision` asked for (√2·rel_ci), so
// measurements cut short by max_seconds do not end the loop early.
DynamicStatus partition_iterate(PartitionContext& ctx, MPI_Comm comm, const BenchmarkKernel& kernel,
                                const Precision& precision, double eps, MPI_Comm sync_comm);
DynamicStatus partition_iterate(PartitionContext& ctx, std::span<const BenchmarkKernel> devices,
                                const Precision& precision, double eps);

// One step from measurements made by the caller (a composite device such as a node whose time is
// that of its own balanced devices; docs/fpm.md, "Hierarchical partitioning"): measured[i] is
// device i's point for its share of ctx.dist (its d may differ from the share when the share was
// realised only approximately; t = 0: nothing measured). Every rank that calls it with the same
// context and points computes the same step, with no communication. `noise`: the relative
// precision the measurements were asked for (a spread within it counts as balance).
DynamicStatus partition_step(PartitionContext& ctx, std::span<const fpm::Point> measured,
                             double eps, double noise = 0);

// Iterates until the status is no longer `running`, at most `max_iterations` steps.
DynamicStatus partition_dynamic(PartitionContext& ctx, MPI_Comm comm, const BenchmarkKernel& kernel,
                                const Precision& precision, double eps, int max_iterations,
                                MPI_Comm sync_comm);
DynamicStatus partition_dynamic(PartitionContext& ctx, std::span<const BenchmarkKernel> devices,
                                const Precision& precision, double eps, int max_iterations = 20);

}  // namespace hit::balance
