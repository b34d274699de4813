#pragma once
// Dynamic data partitioning and dynamic load balancing with partial models (FuPerMod §4.4,
// Clarke et al. §1.8; docs/fpm.md). Neither needs models in advance: they measure at the
// current distribution, add the points to partial models, and repartition.
//
//  - partition_iterate: one step of dynamic partitioning — benchmark the kernel on every device
//    at the current distribution, stop when the measured times agree within eps, else add the
//    points and repartition.
//  - balance_iterate: one step of dynamic load balancing — the time of one iteration of the
//    application itself is the measurement; the distribution changes when that pays off.
//
// The MPI forms are collective over `comm`: device i is rank i, each rank measures its own device,
// points are exchanged, and the new distribution is computed on rank 0 and broadcast, so every
// rank holds the same context afterwards. The serial forms simulate several devices in one
// process (one kernel or one time per device).

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hit/fpm/benchmark.hpp"
#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit::fpm {

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
                   ModelKind kind = ModelKind::piecewise);

  std::int64_t n;
  std::string algorithm;        // the partitioner spec that repartitions (see partition())
  std::vector<Model> models;    // one partial model per device; set known capacities before use
  Distribution dist;            // the next distribution to measure (even at first); the result
  std::vector<Point> measured;  // the last measurement of every device (d = 0: not measured)
  // Of the last measurement: the spread compared with eps, and the imbalance (max/mean) reported.
  double spread = std::numeric_limits<double>::infinity();
  double imbalance = std::numeric_limits<double>::infinity();
  int iterations = 0;
  DynamicStatus status = DynamicStatus::running;
  // Of the distributions measured, the one whose makespan the current models predict smallest
  // (a noisy machine's smallest measured makespan is its luckiest measurement, not the best split).
  Distribution best;
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
DynamicStatus partition_step(PartitionContext& ctx, std::span<const Point> measured, double eps,
                             double noise = 0);

// Iterates until the status is no longer `running`, at most `max_iterations` steps.
DynamicStatus partition_dynamic(PartitionContext& ctx, MPI_Comm comm, const BenchmarkKernel& kernel,
                                const Precision& precision, double eps, int max_iterations,
                                MPI_Comm sync_comm);
DynamicStatus partition_dynamic(PartitionContext& ctx, std::span<const BenchmarkKernel> devices,
                                const Precision& precision, double eps, int max_iterations = 20);

// The context of dynamic load balancing of an iterative application.
struct BalanceContext {
  BalanceContext(std::int64_t n, int devices, std::string algorithm = "geometric",
                 ModelKind kind = ModelKind::piecewise);

  std::int64_t n;
  std::string algorithm;
  std::vector<Model> models;
  Distribution dist;  // the distribution the application should use (even at first)
  double eps = 0.05;  // measured spread ((max t − min t) / min t) tolerated without repartitioning
  int window = 3;     // a device's point is the median of its last `window` times at one share
  double migration_cost = 0;  // estimated seconds one redistribution costs
  // When > 0: seconds per unit that changes device, and a redistribution is weighed by the units
  // it would move (the shares in order, contiguous) instead of migration_cost.
  double migration_cost_per_unit = 0;
  // When set: the predicted seconds of moving from one distribution to another, which the gain
  // test uses instead of both (an application that knows what a move costs beyond the units that
  // cross, such as memory it must allocate, says so here).
  std::function<double(const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to)>
      move_cost;
  std::int64_t remaining_iterations = 1;  // iterations still to run, for the gain test
  std::vector<Point> measured;            // per device: (share, median time) of the last step
  std::vector<double> reported;           // per device: the time the last step reported
  double spread = std::numeric_limits<double>::infinity();     // compared with eps
  double imbalance = std::numeric_limits<double>::infinity();  // max/mean, for reports
  int iterations = 0;
  std::vector<std::vector<double>> recent;  // per device: the last times at its current share
  int resets = 0;  // models restarted because their device's time left their prediction
  // Of the last step: the largest relative range of a device's recent times ((max − min) / median
  // over the window); spreads and predicted gains within it are taken for noise.
  double noise = 0;
  // The 90 % point of the range of `range_devices` standard normals (normal_range_quantile): a
  // spread counts as imbalance beyond that many times `noise`. Computed when the count changes.
  int range_devices = 0;
  double range_critical = 0;
  // Times ignored at a device's first share and after every change of it (the first iteration
  // after a move stages the whole new tile); no decision while a device is settling.
  int settle = 0;
  std::vector<int> settling;
};

// One step after an iteration of the application: `seconds` is this rank's time for its share,
// measured before any blocking collective (one that ends the timed region makes every rank see
// the slowest one's time). Returns true when ctx.dist changed: redistribute before the next
// iteration. It changes when the measured spread exceeds both eps and the range that the noise of
// the recent times explains (the 90 % point of the range of as many normal medians; or a device
// left without work would shorten the step by more than that), the new distribution is predicted
// faster by more than the noise (by the models, or, when they see nothing better, by the speeds of
// this window alone), and the predicted gain,
// (T_now − T_new) × remaining_iterations, exceeds migration_cost (or migration_cost_per_unit
// times the units that would change device, when set; or move_cost, when set). A device whose time
// at its share is more than max(50 %, 4 eps) off its model's prediction has changed speed: its
// model restarts from the new point (`resets` counts them), so the partition follows a device that
// slows down mid-run. Units that change device between two distributions of contiguous shares in
// device order (what each device's new range holds outside its old one): what a redistribution
// moves.
std::int64_t units_moved(const std::vector<std::int64_t>& before,
                         const std::vector<std::int64_t>& after);

bool balance_iterate(BalanceContext& ctx, MPI_Comm comm, double seconds);
bool balance_iterate(BalanceContext& ctx, MPI_Comm comm,
                     std::chrono::steady_clock::time_point start);
// Serial simulation: the times of all devices at once.
bool balance_iterate(BalanceContext& ctx, std::span<const double> seconds);

}  // namespace hit::fpm
