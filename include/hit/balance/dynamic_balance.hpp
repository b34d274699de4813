#pragma once
// Dynamic load balancing of an iterative application with partial models (Clarke, Ilic,
// Lastovetsky, Rychkov's balancing of iterative routines; docs/fpm.md, "Dynamic partitioning and
// load balancing"): the time of one iteration of the application itself is the measurement, and
// the distribution changes when that pays off.
//
// The MPI form is collective over `comm`: device i is rank i; every rank gathers every time and
// takes the same decision. The serial form simulates several devices in one process (one time per
// device).

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "hit/fpm/distribution.hpp"
#include "hit/fpm/model.hpp"

namespace hit::balance {

// The default of BalanceContext::window, in reported times: the fewest whose median ignores one
// outlier.
inline constexpr int default_time_window = 3;

// The context of dynamic load balancing of an iterative application.
struct BalanceContext {
  BalanceContext(std::int64_t n, int devices, std::string algorithm = "geometric",
                 fpm::ModelKind kind = fpm::ModelKind::piecewise);

  std::int64_t n;
  std::string algorithm;
  std::vector<fpm::Model> models;
  fpm::Distribution dist;  // the distribution the application should use (even at first)
  double eps = 0.05;  // measured spread ((max t − min t) / min t) tolerated without repartitioning
  // A device's point is the median of its last `window` times at one share: each call of
  // balance_iterate gives one time, so an application that reports every iteration reacts within
  // a few (RowBalancer reports balancing steps instead and has its own window_steps).
  int window = default_time_window;
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
  std::vector<fpm::Point> measured;       // per device: (share, median time) of the last step
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
  // Per device: its model's points were stored before the run (BalanceOptions::models) and no
  // time of this run has been seen yet. The first one rescales them: a stored model gives the
  // shape of the device's speed, the run its level (built while other ranks benchmarked, a model
  // of the fast device was 1.5x slow; left as it was, its points kept the partitioner from giving
  // that device its share).
  std::vector<bool> stored;
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
// slows down mid-run.
[[nodiscard]] bool balance_iterate(BalanceContext& ctx, MPI_Comm comm, double seconds);
[[nodiscard]] bool balance_iterate(BalanceContext& ctx, MPI_Comm comm,
                                   std::chrono::steady_clock::time_point start);
// Serial simulation: the times of all devices at once.
[[nodiscard]] bool balance_iterate(BalanceContext& ctx, std::span<const double> seconds);

// Starts ctx from stored performance models, one per device, whose unit is ctx's (hit-fpm
// build): the partial models take their points (keeping ctx's model kind), each device's first
// measured time will rescale them (BalanceContext::stored), and ctx.dist becomes their partition
// of ctx.n, which the application should start from. Error(invalid_argument) when the count
// differs from ctx's devices.
void start_from_stored(BalanceContext& ctx, std::span<const fpm::Model> stored);

// Units that change device between two distributions of contiguous shares in device order (what
// each device's new range holds outside its old one): what a redistribution moves.
[[nodiscard]] std::int64_t units_moved(const std::vector<std::int64_t>& before,
                                       const std::vector<std::int64_t>& after);

}  // namespace hit::balance
