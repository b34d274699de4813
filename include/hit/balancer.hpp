#pragma once
// Dynamic load balancing of an iterative application over whole rows (Clarke, Ilic, Lastovetsky,
// Rychkov's balancing of iterative routines with partial FPMs; docs/fpm.md, "Balancing a running
// application"): after every `every` iterations the per-rank compute times update partial models;
// when the measured times spread more than eps and the predicted gain over the remaining
// iterations outweighs the measured cost of moving the data, the rows are repartitioned, and the
// live tiles, ghost cells included, move to the new layout.
//
//   hit::RowBalancer balancer(env, layout, {.mode = hit::BalanceMode::fpm}, iterations);
//   ...
//   if (balancer.after_iteration(it, seconds)) {   // collective
//     balancer.move(u, 1);  balancer.move(v, 1);    // the tiles now follow balancer.layout()
//     halo_u = hit::halo(balancer.layout(), u);     // patterns of the new layout
//   }

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/timer.hpp"
#include "hit/fpm/dynamic.hpp"
#include "hit/layout.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"

namespace hit {

enum class BalanceMode {
  off,  // the layout never changes
  cpm,  // constant models (the newest point): shares in proportion to the measured speeds
  fpm,  // partial piecewise models, geometric partitioner
};
std::string_view to_string(BalanceMode mode) noexcept;
// "off", "cpm", "fpm"; Error(invalid_argument) listing them otherwise.
BalanceMode parse_balance_mode(std::string_view name);

struct BalanceOptions {
  BalanceMode mode = BalanceMode::off;
  // Iterations per balancing step; the step takes their median time. One iteration's time on a
  // shared machine varies by tens of percent; the median of five is steady enough to act on.
  int every = 5;
  double eps = 0.05;           // spread ((max − min) / min of the times) tolerated
  int window = 3;              // a rank's point: the median of its last `window` times at one share
  std::string algorithm = {};  // partitioner; empty: geometric (fpm) or proportional (cpm)
};

// One redistribution.
struct Rebalance {
  std::int64_t iteration = 0;      // after which iteration (0-based) it moved
  double imbalance_before = 0;     // max/mean of the times that decided it
  double imbalance_after = 0;      // of the next balancing step's times (0: none came)
  std::vector<std::int64_t> rows;  // rows per rank afterwards
  std::uint64_t bytes_moved = 0;   // received from other ranks, summed over the ranks
  double seconds = 0;              // the slowest rank's time for the move
};

class RowBalancer {
 public:
  // `initial`: every process holds at most one block, of whole rows (axis 0 split, the other axes
  // whole), blocks in rank order; Error(invalid_argument) otherwise, and for every < 1, eps <= 0
  // or window < 1. `iterations`: how many the application runs (for the gain test).
  RowBalancer(Environment& env, Layout initial, BalanceOptions options, std::int64_t iterations);

  const Layout& layout() const noexcept { return layout_; }
  const BalanceOptions& options() const noexcept { return options_; }

  // After iteration `iteration` (0-based): this rank's compute seconds for it, measured before any
  // blocking collective. Collective on every `every`-th iteration (a no-op between). Returns true
  // when layout() changed: move() the live tiles and rebuild the communication patterns.
  bool after_iteration(std::int64_t iteration, double seconds);

  // Moves a tile of the previous layout to the current one: a new tile with `ghost` cells, its
  // block and ghost cells filled from their owners (the device copy of a Resident is brought to
  // the host first; the new one is staged by its next launch). Collective; call it for every live
  // tile after after_iteration returned true, in the same order on every rank.
  template <class T>
  void move(Resident<T>& tile, index_t ghost);
  template <class T>
  void move(Tile<T>& tile, index_t ghost);

  // One balancing step: after which iteration, the slowest rank's time per iteration and the
  // imbalance (max/mean) of the times measured.
  struct Step {
    std::int64_t iteration = 0;
    double seconds = 0;
    double imbalance = 0;
  };
  const std::vector<Step>& trace() const noexcept { return trace_; }
  const std::vector<Rebalance>& rebalances() const noexcept { return rebalances_; }
  // Starts the report afresh (rebalances, trace, steps, seconds), keeping the models and the
  // layout: an application that repeats its run (warm-up, timed repetitions) reports the last.
  void restart_report();
  // Rows per rank now.
  std::vector<std::int64_t> rows() const;
  // The layout of these rows for another array whose axis 0 has as many (the rows of a vector
  // that goes with the matrix, say): `dimBlocks:dim=0,w=<rows>` over the run's processes.
  Layout rows_layout(const Shape& shape) const;
  // The times of the last balancing step: max/mean (1: balanced; 0 before the first step).
  double imbalance() const noexcept { return imbalance_; }
  // Wall time this rank spent deciding and moving.
  double seconds() const noexcept { return seconds_; }
  // Balancing steps taken.
  int steps() const noexcept { return steps_; }

 private:
  template <class T>
  Tile<T> moved(Tile<T>& old, index_t ghost);
  void account_move(double seconds, std::uint64_t bytes);

  Environment* env_;
  Layout layout_;
  Layout previous_;
  BalanceOptions options_;
  std::int64_t iterations_;
  fpm::BalanceContext ctx_;
  std::vector<Rebalance> rebalances_;
  std::vector<Step> trace_;
  std::vector<double> pending_;  // compute seconds of the iterations since the last step
  double imbalance_ = 0;
  double seconds_ = 0;
  int steps_ = 0;
  bool awaiting_after_ = false;  // the next step's imbalance goes to the last Rebalance
};

// ---- implementation ---------------------------------------------------------------------------

namespace detail {
// The regions every process needs after a move: its new block with `ghost` cells on each side of
// axis 0 and 1, within the array (the null Shape for an inactive process).
std::vector<Shape> balanced_regions(const Layout& layout, index_t ghost);
// Elements of `region` outside `own` (what a process receives from others).
std::uint64_t foreign_elements(const Shape& region, const Shape& own);
}  // namespace detail

template <class T>
Tile<T> RowBalancer::moved(Tile<T>& old, index_t ghost) {
  const Timer timer;
  Tile<T> next;
  // A rank that cannot hold its new block fails the move on every rank, not in the exchange.
  collectively(env_->comm(), [&] { next = Tile<T>::of(layout_, {.ghost = ghost}); });
  const std::vector<Shape> wanted = detail::balanced_regions(layout_, ghost);
  fetch_regions(*env_, previous_, old, wanted, next).run();
  const Shape& mine = wanted[static_cast<std::size_t>(env_->rank())];
  const std::uint64_t foreign =
      mine.is_null()
          ? 0
          : detail::foreign_elements(
                mine, previous_.active(env_->rank()) ? previous_.block(env_->rank()) : Shape());
  account_move(timer.seconds(), foreign * sizeof(T));
  return next;
}

template <class T>
void RowBalancer::move(Tile<T>& tile, index_t ghost) {
  tile = moved(tile, ghost);
}

template <class T>
void RowBalancer::move(Resident<T>& tile, index_t ghost) {
  tile.sync_to_host();
  Tile<T> host = tile.host();
  tile = Resident<T>(moved(host, ghost), *env_);
}

}  // namespace hit
