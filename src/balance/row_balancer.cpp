#include "hit/balance/row_balancer.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/core/event_trace.hpp"
#include "hit/core/spec.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/topology.hpp"

namespace hit {
namespace {

using Sizes = std::vector<std::int64_t>;

// Iterations before the first step without stored models: one that stages the tiles and two
// timed, whose mean is the first measure of the speeds (one alone, on a shared machine, was off
// by up to 2x for the fast device).
constexpr std::int64_t probe_iterations = 3;

// Rows per process of a layout that gives each process at most one block of whole rows, in rank
// order; Error(invalid_argument) naming what is wrong otherwise.
Sizes rows_of(const Layout& l) {
  const Shape& shape = l.shape();
  const auto fail = [&](const std::string& why) {
    return Error(ErrorKind::invalid_argument,
                 fmt::format("balancing rows: layout '{}' {}; give a layout of whole rows in rank "
                             "order (e.g. blocks on an array topology)",
                             l.spec(), why));
  };
  if (shape.rank() < 1) throw fail("is of a shape without axes");
  Sizes rows;
  index_t next = shape[0].begin();
  for (int p = 0; p < l.topology().procs(); ++p) {
    const auto& blocks = l.blocks(p);
    if (blocks.size() > 1) throw fail(fmt::format("gives rank {} {} blocks", p, blocks.size()));
    if (blocks.empty() || blocks.front().size() == 0) {
      rows.push_back(0);
      continue;
    }
    const Shape& b = blocks.front();
    for (int k = 1; k < shape.rank(); ++k) {
      if (b[k] != shape[k]) throw fail(fmt::format("splits axis {} (rank {}: {})", k, p, b.str()));
    }
    if (b[0].stride() != shape[0].stride() || b[0].begin() != next) {
      throw fail(
          fmt::format("does not give rank {} the rows after rank {}'s ({})", p, p - 1, b.str()));
    }
    rows.push_back(b[0].size());
    next = b[0].end();
  }
  if (next != shape[0].end()) throw fail("leaves rows to no process");
  return rows;
}

void check(const BalanceOptions& o) {
  const auto bad = [](const std::string& why) {
    return Error(ErrorKind::invalid_argument, "balancing: " + why);
  };
  if (o.every < 1)
    throw bad(fmt::format("every = {} (balance every 1 or more iterations)", o.every));
  if (!(o.eps > 0)) throw bad(fmt::format("eps = {} (must be > 0)", o.eps));
  if (o.window_steps < 1) throw bad(fmt::format("window = {} (must be >= 1)", o.window_steps));
  if (!(o.reserve >= 0) || !std::isfinite(o.reserve)) {
    throw bad(fmt::format("reserve = {} (must be a finite fraction >= 0)", o.reserve));
  }
}

}  // namespace

std::string_view to_string(BalanceMode mode) noexcept {
  switch (mode) {
    case BalanceMode::off:
      return "off";
    case BalanceMode::cpm:
      return "cpm";
    case BalanceMode::fpm:
      return "fpm";
  }
  return "?";
}

BalanceMode parse_balance_mode(std::string_view name) {
  for (const auto m : {BalanceMode::off, BalanceMode::cpm, BalanceMode::fpm}) {
    if (name == to_string(m)) return m;
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("unknown balance mode '{}' (modes: off, cpm, fpm)", name));
}

namespace detail {

std::vector<Shape> balanced_regions(const Layout& layout, index_t ghost) {
  std::vector<Shape> out;
  const Shape& whole = layout.shape();
  for (int p = 0; p < layout.topology().procs(); ++p) {
    if (!layout.active(p)) {
      out.emplace_back();
      continue;
    }
    Shape s = layout.block(p);
    for (int k = 0; k < std::min(s.rank(), 2); ++k) {
      s = s.with_sig(k, s[k].expand(ghost, ghost));
    }
    out.push_back(s.intersect(whole));
  }
  return out;
}

std::vector<std::vector<Shape>> incoming_parts(const Layout& before, const Layout& after,
                                               index_t ghost) {
  const std::vector<Shape> regions = balanced_regions(after, ghost);
  std::vector<std::vector<Shape>> out(regions.size());
  for (std::size_t p = 0; p < regions.size(); ++p) {
    const Shape& region = regions[p];
    if (region.is_null() || region.empty()) continue;
    const int rank = static_cast<int>(p);
    const Shape kept = before.active(rank) ? region.intersect(before.block(rank)) : Shape();
    if (kept.is_null() || kept.empty()) {
      out[p].push_back(region);
    } else {
      out[p] = region.subtract(kept);
    }
  }
  return out;
}

index_t spare_rows(double reserve, index_t rows) {
  return static_cast<index_t>(std::ceil(reserve * static_cast<double>(rows)));
}

Shape reserve_rows(const Shape& block, const Shape& array, double reserve) {
  const Sig& rows = block[0];
  const index_t spare = spare_rows(reserve, rows.size());
  const index_t begin = std::max(array[0].begin(), rows.begin() - spare);
  const index_t end = std::min(array[0].end(), rows.end() + spare);
  return block.with_sig(0, Sig(begin, end, rows.stride()));
}

std::int64_t allocated_rows(std::vector<RowSpan>& reach, const std::vector<std::int64_t>& to,
                            double reserve) {
  std::int64_t n = 0;
  for (const std::int64_t d : to) n += d;
  reach.resize(to.size());
  std::int64_t allocated = 0, begin = 0;
  for (std::size_t p = 0; p < to.size(); ++p) {
    const std::int64_t end = begin + to[p];
    RowSpan& r = reach[p];
    if (to[p] == 0) {
      r = {0, 0};
    } else if (r.first >= r.second || begin < r.first || end > r.second) {
      const std::int64_t spare = spare_rows(reserve, to[p]);
      r = {std::max<std::int64_t>(0, begin - spare), std::min(n, end + spare)};
      allocated += r.second - r.first;
    }
    begin = end;
  }
  return allocated;
}

}  // namespace detail

RowBalancer::RowBalancer(Environment& env, Layout initial, BalanceOptions options,
                         std::int64_t iterations)
    : env_(&env),
      layout_(initial),
      previous_(std::move(initial)),
      options_(std::move(options)),
      iterations_(iterations),
      ctx_(layout_.shape().rank() > 0 ? layout_.shape()[0].size() : 0, layout_.topology().procs(),
           !options_.algorithm.empty()         ? options_.algorithm
           : options_.mode == BalanceMode::cpm ? "proportional"
                                               : "geometric",
           options_.mode == BalanceMode::cpm ? fpm::ModelKind::constant
                                             : fpm::ModelKind::piecewise) {
  check(options_);
  if (layout_.topology().procs() != env.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("balancing: layout '{}' is for {} processes, the run has {}",
                            layout_.spec(), layout_.topology().procs(), env.size()));
  }
  Sizes rows = rows_of(layout_);
  if (!options_.models.empty()) {
    balance::start_from_stored(ctx_, options_.models);
    rows = ctx_.dist.sizes();
  }
  ctx_.dist.parts.clear();
  for (const std::int64_t r : rows) ctx_.dist.parts.push_back(fpm::Part{r, 0});
  ctx_.dist.algorithm = "initial";
  if (!options_.models.empty()) {
    layout_ = rows_layout(layout_.shape());
    previous_ = layout_;
  }
  // With steps of fewer than three iterations the first one's time is not taken anyway (settle).
  probe_pending_ = options_.models.empty() && options_.every > probe_iterations;
  next_step_ = (probe_pending_ ? probe_iterations : options_.every) - 1;
  initial_rows_ = rows;
  // The gain test charges a move for the memory it allocates: what the blocks reach now. Every
  // rank computes it here for all of them, a rank without rows included: the test must come out
  // the same on every rank, or one moves its rows while the others wait at the halo.
  allocated_rows_ = detail::allocated_rows(reach_, rows, options_.reserve);
  ctx_.eps = options_.eps;
  ctx_.window = options_.window_steps;
  // The first iteration on a share stages its tile: not the device's speed. A step of three or
  // more iterations takes their median, which leaves it out; a shorter one is skipped.
  ctx_.settle = options_.every >= 3 ? 0 : 1;
}

void RowBalancer::restart_report() {
  initial_rows_ = rows();
  rebalances_.clear();
  trace_.clear();
  steps_ = 0;
  seconds_ = 0;
  awaiting_after_ = false;
}

Layout RowBalancer::rows_layout(const Shape& shape) const {
  return hit::layout(Spec("dimBlocks").with("dim", 0).with("w", rows()),
                     topology("array", env_->size()), shape);
}

std::vector<std::int64_t> RowBalancer::rows() const {
  return ctx_.dist.sizes();
}

bool RowBalancer::after_iteration(std::int64_t iteration, double seconds) {
  if (options_.mode == BalanceMode::off) return false;
  if (iteration <= last_iteration_) {
    // The application started its iterations over (a repetition): so do the steps.
    next_step_ = iteration + options_.every - 1;
    pending_.clear();
  }
  last_iteration_ = iteration;
  pending_.push_back(seconds);
  if (iteration < next_step_) return false;
  next_step_ = iteration + options_.every;
  // The first step without models: the first iteration staged the tiles, and the next ones' times
  // are the first measure of the speeds (a move now costs a few iterations at the even split less
  // than waiting for a full step would).
  if (probe_pending_ && pending_.size() >= 2) pending_.erase(pending_.begin());
  probe_pending_ = false;
  // The ranks wait here for the slowest one's iteration, as they would at the next halo: that is
  // imbalance, not the balancer's cost, which is timed from when all have arrived.
  barrier(env_->comm());
  const Timer timer;
  // The median of the step's iterations: one iteration that stages a new tile, or that a busy
  // core slowed down, does not decide.
  std::sort(pending_.begin(), pending_.end());
  const std::size_t k = pending_.size();
  const double typical = k % 2 == 1 ? pending_[k / 2] : (pending_[k / 2 - 1] + pending_[k / 2]) / 2;
  pending_.clear();
  const Sizes before = ctx_.dist.sizes();
  // A rank without rows reports nothing (its share is 0); balance_iterate skips it.
  const double mine =
      before[static_cast<std::size_t>(env_->rank())] > 0 ? std::max(typical, 1e-12) : 0.0;
  ctx_.remaining_iterations = std::max<std::int64_t>(0, iterations_ - iteration - 1);
  const bool changed = balance::balance_iterate(ctx_, env_->comm(), mine);
  ++steps_;
  // A step in which a rank was settling on a new share (its time not taken) says nothing of the
  // balance: only complete ones are reported.
  const auto working = std::count_if(before.begin(), before.end(), [](auto d) { return d > 0; });
  const auto measured = std::count_if(ctx_.measured.begin(), ctx_.measured.end(),
                                      [](const fpm::Point& p) { return p.d > 0; });
  if (measured < working) {
    seconds_ += timer.seconds();
    return changed;
  }
  imbalance_ = ctx_.imbalance;
  double slowest = 0;
  for (const fpm::Point& p : ctx_.measured) slowest = std::max(slowest, p.t);
  trace_.push_back(Step{iteration, slowest, imbalance_, ctx_.reported});
  if (awaiting_after_) {
    rebalances_.back().imbalance_after = imbalance_;
    awaiting_after_ = false;
  }
  if (changed) {
    // The storages no tile moved into at the last rebalance belong to tiles the application
    // dropped: their memory goes.
    std::erase_if(storages_, [&](const Storage& s) { return s.generation != generation_; });
    ++generation_;
    previous_ = layout_;
    const Sizes rows = ctx_.dist.sizes();
    layout_ = rows_layout(layout_.shape());
    allocated_rows_ = detail::allocated_rows(reach_, rows, options_.reserve);
    Rebalance r;
    r.iteration = iteration;
    r.imbalance_before = imbalance_;
    r.rows = rows;
    rebalances_.push_back(std::move(r));
    awaiting_after_ = true;
  }
  seconds_ += timer.seconds();
  return changed;
}

void RowBalancer::account_move(double seconds, std::uint64_t bytes, bool holds, bool in_place) {
  const double now = EventTrace::now();
  event_trace(*env_).span("host", "balance", "rows moved", now - seconds, now,
                          {{"bytes", static_cast<double>(bytes)}});
  seconds_ += seconds;
  double slowest = seconds;
  // Bytes received, tiles placed, tiles placed in place: summed over the ranks.
  unsigned long long counts[3] = {static_cast<unsigned long long>(bytes), holds ? 1ULL : 0ULL,
                                  holds && in_place ? 1ULL : 0ULL};
  allreduce_in_place(&slowest, 1, MPI_DOUBLE, MPI_MAX, env_->comm());
  allreduce_in_place(counts, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, env_->comm());
  if (rebalances_.empty()) return;
  Rebalance& r = rebalances_.back();
  r.seconds += slowest;
  r.bytes_moved += counts[0];
  r.tiles_moved += counts[1];
  r.tiles_in_place += counts[2];
  // The next gain test weighs a candidate by what it would move and allocate, at the rates of
  // the moves so far: a move in place costs what crosses, so small corrections pass, and a large
  // one is charged for the memory it needs, not for every row at the rate of a move that
  // allocated (which overstates a large move and kept a slowed device's share from following).
  const auto units = static_cast<double>(balance::units_moved(rows_of(previous_), r.rows));
  // Every rank must take the same branch, or the ranks' next gain tests price moves differently
  // and one moves while another waits at its halo: the tile counts are summed above, and
  // allocated_rows_ is computed by every rank from the agreed rows and every block's reach (never
  // from its own tile).
  if (r.tiles_moved == r.tiles_in_place || allocated_rows_ == 0) {
    if (units > 0) cross_rate_ = r.seconds / units;
  } else {
    alloc_rate_ =
        std::max(0.0, r.seconds - cross_rate_ * units) / static_cast<double>(allocated_rows_);
  }
  ctx_.move_cost = [reach = reach_, reserve = options_.reserve, cross = cross_rate_,
                    alloc = alloc_rate_](const Sizes& from, const Sizes& to) {
    std::vector<detail::RowSpan> after = reach;
    const auto rows = static_cast<double>(detail::allocated_rows(after, to, reserve));
    return cross * static_cast<double>(balance::units_moved(from, to)) + alloc * rows;
  };
}

}  // namespace hit
