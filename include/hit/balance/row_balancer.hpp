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
#include <utility>
#include <vector>

#include "hit/balance/dynamic_balance.hpp"
#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/timer.hpp"
#include "hit/fpm/model.hpp"
#include "hit/layout.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"

namespace hit {

enum class BalanceMode {
  off,  // the layout never changes
  cpm,  // constant models (the newest point): shares in proportion to the measured speeds
  fpm,  // partial piecewise models, geometric partitioner
};
[[nodiscard]] std::string_view to_string(BalanceMode mode) noexcept;
// "off", "cpm", "fpm"; Error(invalid_argument) listing them otherwise.
BalanceMode parse_balance_mode(std::string_view name);

// The default of BalanceOptions::window_steps.
inline constexpr int default_window_steps = 20;

struct BalanceOptions {
  BalanceMode mode = BalanceMode::off;
  // Iterations per balancing step; the step takes their median time, since one iteration's time
  // on a shared machine is too noisy to act on (docs/fpm.md, "Balancing a running application").
  int every = 5;
  double eps = 0.05;  // spread ((max − min) / min of the times) tolerated
  // A rank's point: the median of its last `window_steps` balancing steps at one share (so over
  // window_steps × every iterations; BalanceContext::window counts what it is given, here steps).
  // Long, so that a balanced distribution stays balanced on a noisy machine; the price is a slow
  // view of a drifting device (docs/fpm.md, "Balancing a running application").
  int window_steps = default_window_steps;
  std::string algorithm = {};  // partitioner; empty: geometric (fpm) or proportional (cpm)
  // Rows to spare on each side of a moved block, as a fraction of its rows: its memory (host and
  // device) is allocated that much larger, and a later move that keeps the block within it
  // happens in place: only the rows that cross travel, the rows that stay are not copied.
  // 0: blocks only shrink in place.
  double reserve = 0.125;
  // Stored performance models, one per process, whose unit is one row (hit-fpm build --kernel
  // jacobi, say): the balancer starts from their partition instead of the initial layout, and its
  // partial models from their points, so the first iterations already run balanced and nothing
  // moves unless the run disagrees with them. A device's first measured step rescales its stored
  // points to the run's level (the model gives the shape of its speed, the run the level). Empty:
  // the first balancing step comes after three iterations (the first stages the tiles; the other
  // two are timed) and moves the rows to the speeds measured there, and the regular steps follow.
  std::vector<fpm::Model> models = {};
};

// One redistribution.
struct Rebalance {
  std::int64_t iteration = 0;      // after which iteration (0-based) it moved
  double imbalance_before = 0;     // max/mean of the times that decided it
  double imbalance_after = 0;      // of the next balancing step's times (0: none came)
  std::vector<std::int64_t> rows;  // rows per rank afterwards
  std::uint64_t bytes_moved = 0;   // received from other ranks, summed over the ranks
  double seconds = 0;              // the slowest rank's time for the move
  // Tiles placed (one per live tile on each rank holding rows afterwards), and of those the ones
  // whose block stayed in its memory, the device copy of a Resident included (summed over ranks).
  std::uint64_t tiles_moved = 0;
  std::uint64_t tiles_in_place = 0;
};

namespace detail {
// Rows counted from the array's first, [begin, end).
using RowSpan = std::pair<std::int64_t, std::int64_t>;
}  // namespace detail

class RowBalancer {
 public:
  // `initial`: every process holds at most one block, of whole rows (axis 0 split, the other axes
  // whole), blocks in rank order; Error(invalid_argument) otherwise, and for every < 1, eps <= 0,
  // window_steps < 1 or models for another number of processes. `iterations`: how many the
  // application runs (for the gain test). With options.models, layout() is their partition of
  // the rows, not `initial`: allocate the tiles from layout().
  RowBalancer(Environment& env, Layout initial, BalanceOptions options, std::int64_t iterations);

  const Layout& layout() const noexcept { return layout_; }
  const BalanceOptions& options() const noexcept { return options_; }

  // After iteration `iteration` (0-based): this rank's compute seconds for it, measured before any
  // blocking collective. Collective after every `every` iterations (counted from the first, or
  // without stored models from the probe step after iteration 2; a no-op between; an iteration
  // number that does not grow starts the count again). Returns true when layout()
  // changed: move() the live tiles and rebuild the communication patterns.
  [[nodiscard]] bool after_iteration(std::int64_t iteration, double seconds);

  // This rank's block of layout() with `ghost` cells, zero-filled, in memory with
  // options().reserve rows to spare on each side (none with mode off), kept by the balancer as if
  // moved there: the first move that keeps the block within them happens in place. A tile allocated
  // by Tile::of(layout()) instead gets such memory at its first move. Null on a rank without rows.
  // Not collective.
  template <class T>
  Tile<T> tile(index_t ghost);
  // The same, as a Resident whose device copy is allocated for all of that memory.
  template <class T>
  Resident<T> resident(index_t ghost);

  // Moves a tile of the previous layout to the current one: a tile of the new block with `ghost`
  // cells, its block and ghost cells filled from their owners. The first move of a tile puts it
  // in memory with rows to spare (options().reserve); a later move whose block fits there
  // happens in place: the rows that stay keep their addresses, on the host and in a Resident's
  // device copy, and only the rows that cross are sent, received and copied to the device.
  // Otherwise the rows that stay are copied into new memory, and the next launch sends the
  // Resident's new block. Collective; call it for every live tile after after_iteration returned
  // true, in the same order on every rank. The balancer keeps the memory of the tiles it moved
  // until their next move (or its destruction).
  template <class T>
  void move(Resident<T>& tile, index_t ghost);
  template <class T>
  void move(Tile<T>& tile, index_t ghost);

  // One balancing step: after which iteration, the slowest rank's time per iteration and the
  // imbalance (max/mean) of the times measured (each rank's median over its window), and the
  // time each rank reported for this step alone (the median of its iterations; 0 without rows).
  struct Step {
    std::int64_t iteration = 0;
    double seconds = 0;
    double imbalance = 0;
    std::vector<double> times;
  };
  const std::vector<Step>& trace() const noexcept { return trace_; }
  const std::vector<Rebalance>& rebalances() const noexcept { return rebalances_; }
  // The seconds the gain test predicts for moving from `from` rows per rank to `to`, at the rates
  // of the moves so far (0 before the first): the same on every rank, as the test must be.
  double predicted_move_seconds(const std::vector<std::int64_t>& from,
                                const std::vector<std::int64_t>& to) const {
    return ctx_.move_cost ? ctx_.move_cost(from, to) : 0.0;
  }
  // Starts the report afresh (rebalances, trace, steps, seconds), keeping the models and the
  // layout: an application that repeats its run (warm-up, timed repetitions) reports the last.
  void restart_report();
  // Rows per rank now.
  std::vector<std::int64_t> rows() const;
  // Rows per rank when the report started (construction or restart_report()).
  const std::vector<std::int64_t>& initial_rows() const noexcept { return initial_rows_; }
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
  // The memory of a moved tile: a block with rows to spare on both sides (options().reserve),
  // so that the next moves of the block within it happen in place.
  struct Storage {
    std::shared_ptr<void> tile;  // the Tile<T> owning it
    Shape reach;                 // its allocated_shape()
    std::pair<const unsigned char*, const unsigned char*> range;
    int generation = 0;  // the last rebalance that moved a block into it
  };
  template <class T>
  struct Placement {
    Tile<T> tile;                      // the new block's tile (null: none on this rank)
    std::shared_ptr<Tile<T>> storage;  // set when it is new
    bool in_place = false;             // inside the old tile's storage
  };
  template <class T>
  Placement<T> place(const Tile<T>& old, index_t ghost);
  template <class T, class Tiles>
  void exchange(Tiles& old, Tiles& next, index_t ghost, bool in_place, const Timer& timer);
  // New memory for this rank's block of layout_ with `reserve` rows to spare, kept in storages_.
  template <class T>
  std::shared_ptr<Tile<T>> storage_for_block(index_t ghost, double reserve);
  // Copies the rows `stay` (staying_rows) of the old tile into a placement in new memory.
  template <class T>
  static void copy_staying(const Tile<T>& old, const Placement<T>& p, const Shape& stay);
  template <class T>
  Shape staying_rows(const Tile<T>& old, index_t ghost) const;
  template <class T>
  static std::pair<const unsigned char*, const unsigned char*> address_range(
      const Tile<T>& storage);
  // storages_'s entry holding `tile`'s memory, -1 for none.
  template <class T>
  std::ptrdiff_t storage_of(const Tile<T>& tile) const;
  // This rank's part of one tile's move: its time, the bytes it received, whether it holds a block
  // now and whether that block stayed in its memory.
  void account_move(double seconds, std::uint64_t bytes, bool holds, bool in_place);

  Environment* env_;
  Layout layout_;
  Layout previous_;
  BalanceOptions options_;
  std::int64_t iterations_;
  balance::BalanceContext ctx_;
  std::vector<Rebalance> rebalances_;
  std::vector<Step> trace_;
  std::vector<double> pending_;  // compute seconds of the iterations since the last step
  double imbalance_ = 0;
  double seconds_ = 0;
  int steps_ = 0;
  // Without stored models: the first step, after probe_iterations, is still to come.
  bool probe_pending_ = false;
  // The iteration after which the next step comes: `every` after the last one (the first of a
  // step's iterations after a move stages the new tiles; the median of the step leaves it out).
  std::int64_t next_step_ = 0;
  std::int64_t last_iteration_ = -1;
  std::vector<std::int64_t> initial_rows_;
  bool awaiting_after_ = false;  // the next step's imbalance goes to the last Rebalance
  std::vector<Storage> storages_;
  int generation_ = 0;  // rebalances so far
  // What a move costs, learnt from the moves so far: per row that changes rank (from the last
  // move in place) and per row of new memory (from the last move that allocated), and the rows
  // each rank's memory holds (the same on every rank; empty before its first move): a candidate
  // whose blocks fit their memory costs what crosses, one that outgrows it also what it allocates.
  std::vector<detail::RowSpan> reach_;
  std::int64_t allocated_rows_ = 0;  // rows the last rebalance put in new memory, all ranks
  double cross_rate_ = 0;
  double alloc_rate_ = 0;
};

// ---- implementation ---------------------------------------------------------------------------

namespace detail {
// The regions every process needs after a move: its new block with `ghost` cells on each side of
// axis 0 and 1, within the array (the null Shape for an inactive process).
std::vector<Shape> balanced_regions(const Layout& layout, index_t ghost);
// What each process receives in a move from `before` to `after`: its region of `after` (its block
// with `ghost` cells, within the array) less its block of `before`, as disjoint boxes.
std::vector<std::vector<Shape>> incoming_parts(const Layout& before, const Layout& after,
                                               index_t ghost);
// The rows to spare on each side of a block of `rows` rows: ceil(reserve × rows).
index_t spare_rows(double reserve, index_t rows);
// The block a moved tile is allocated for: `block` with `reserve` times its rows to spare on each
// side of axis 0, within the array's rows.
Shape reserve_rows(const Shape& block, const Shape& array, double reserve);
// The rows a move to the shares `to` (contiguous, in rank order) puts in new memory: a rank whose
// new rows leave what its memory holds (`reach`, empty before its first move) gets them with
// `reserve` of them to spare on each side, as RowBalancer::move allocates them. `reach` becomes
// what each rank's memory holds afterwards (empty for a rank without rows).
std::int64_t allocated_rows(std::vector<RowSpan>& reach, const std::vector<std::int64_t>& to,
                            double reserve);
}  // namespace detail

template <class T>
std::shared_ptr<Tile<T>> RowBalancer::storage_for_block(index_t ghost, double reserve) {
  const Shape block = layout_.block(env_->rank());
  auto storage = std::make_shared<Tile<T>>(detail::reserve_rows(block, layout_.shape(), reserve),
                                           TileOptions{{}, ghost});
  storages_.push_back(
      Storage{storage, storage->allocated_shape(), address_range(*storage), generation_});
  return storage;
}

template <class T>
Tile<T> RowBalancer::tile(index_t ghost) {
  if (!layout_.active(env_->rank())) return Tile<T>();
  return storage_for_block<T>(ghost, options_.mode == BalanceMode::off ? 0.0 : options_.reserve)
      ->within(layout_.block(env_->rank()), ghost);
}

template <class T>
Resident<T> RowBalancer::resident(index_t ghost) {
  Tile<T> block = tile<T>(ghost);
  if (block.is_null()) return Resident<T>();
  return Resident<T>::within(*std::static_pointer_cast<Tile<T>>(storages_.back().tile), block,
                             *env_);
}

template <class T>
RowBalancer::Placement<T> RowBalancer::place(const Tile<T>& old, index_t ghost) {
  Placement<T> out;
  const int me = env_->rank();
  const std::ptrdiff_t held = storage_of(old);
  // A rank that cannot hold its new block fails the move on every rank, not in the exchange.
  collectively(env_->comm(), [&] {
    if (!layout_.active(me)) return;
    const Shape block = layout_.block(me);
    if (held >= 0) {
      Storage& s = storages_[static_cast<std::size_t>(held)];
      if (s.reach.includes(block.expand(ghost))) {
        out.tile = std::static_pointer_cast<Tile<T>>(s.tile)->within(block, ghost);
        out.in_place = true;
        s.generation = generation_;
        return;
      }
    }
    out.storage = storage_for_block<T>(ghost, options_.reserve);
    out.tile = out.storage->within(block, ghost);
  });
  // The storage left behind (the block moved out of it, or the rank holds none now) is freed
  // with the old tile.
  if (!out.in_place && held >= 0) storages_.erase(storages_.begin() + held);
  return out;
}

template <class T, class Tiles>
void RowBalancer::exchange(Tiles& old, Tiles& next, index_t ghost, bool in_place,
                           const Timer& timer) {
  const bool next_tile_null = next.is_null();
  const std::vector<std::vector<Shape>> parts = detail::incoming_parts(previous_, layout_, ghost);
  std::size_t rounds = 0;
  for (const auto& p : parts) rounds = std::max(rounds, p.size());
  std::uint64_t foreign = 0;
  for (std::size_t k = 0; k < rounds; ++k) {
    std::vector<Shape> wanted;
    for (const auto& p : parts) wanted.push_back(k < p.size() ? p[k] : Shape());
    fetch_regions(previous_, old, wanted, next).run();
    const Shape& mine = wanted[static_cast<std::size_t>(env_->rank())];
    if (!mine.is_null()) foreign += static_cast<std::uint64_t>(mine.size());
  }
  account_move(timer.seconds(), foreign * sizeof(T), !next_tile_null, in_place);
}

template <class T>
void RowBalancer::move(Tile<T>& tile, index_t ghost) {
  const Timer timer;
  Placement<T> p = place(tile, ghost);
  copy_staying(tile, p, staying_rows(tile, ghost));
  exchange<T>(tile, p.tile, ghost, p.in_place, timer);
  tile = std::move(p.tile);
}

template <class T>
void RowBalancer::move(Resident<T>& tile, index_t ghost) {
  const Timer timer;
  Placement<T> p = place(tile.host(), ghost);
  Resident<T> next;
  bool kept = false;  // in place on the host and on the device
  if (p.in_place) {
    // The device copy holds the rows that stay where the new block wants them: it is taken over.
    next = Resident<T>::moved_within(tile, p.tile);
    kept = !next.is_null();
    if (!kept) {
      // It cannot be (the device had no room for the reserve): the host side, brought up to
      // date, holds them, and the next launch sends the block.
      tile.sync_to_host();
      next = Resident<T>(p.tile, *env_);
    }
  } else if (!p.tile.is_null()) {
    const Shape stay = staying_rows(tile.host(), ghost);
    if (!stay.is_null() && detail::resident_state(tile))
      detail::resident_fetch(*detail::resident_state(tile), stay);
    copy_staying(tile.host(), p, stay);
    next = Resident<T>::within(*p.storage, p.tile, *env_);
  }
  exchange<T>(tile, next, ghost, kept, timer);
  tile = std::move(next);
}

template <class T>
void RowBalancer::copy_staying(const Tile<T>& old, const Placement<T>& p, const Shape& stay) {
  if (p.in_place || p.tile.is_null() || stay.is_null()) return;
  p.tile.select(stay).copy_from(old.select(stay));
}

template <class T>
Shape RowBalancer::staying_rows(const Tile<T>& old, index_t ghost) const {
  const int me = env_->rank();
  if (old.is_null() || !previous_.active(me) || !layout_.active(me)) return Shape();
  const Shape region = detail::balanced_regions(layout_, ghost)[static_cast<std::size_t>(me)];
  const Shape stay = region.intersect(previous_.block(me));
  return stay.is_null() || stay.empty() ? Shape() : stay;
}

template <class T>
std::pair<const unsigned char*, const unsigned char*> RowBalancer::address_range(
    const Tile<T>& storage) {
  const Tile<T> all = storage.select(storage.allocated_shape());
  const auto* lo = reinterpret_cast<const unsigned char*>(all.data());
  return {lo, lo + static_cast<std::size_t>(all.size()) * sizeof(T)};
}

template <class T>
std::ptrdiff_t RowBalancer::storage_of(const Tile<T>& tile) const {
  if (tile.is_null()) return -1;
  const auto* p = reinterpret_cast<const unsigned char*>(tile.data());
  for (std::size_t k = 0; k < storages_.size(); ++k) {
    const auto& [lo, hi] = storages_[k].range;
    if (p >= lo && p < hi) return static_cast<std::ptrdiff_t>(k);
  }
  return -1;
}

}  // namespace hit
