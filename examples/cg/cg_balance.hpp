#pragma once
// --balance of hit-cg: the rows move between processes as their measured speeds ask. Every
// --balance-every iterations each process reports the median of its compute times to the dynamic
// balancer of partial performance models (hit::balance::balance_iterate, the same decision
// hit-jacobi's rows take); when it finds a better distribution worth its cost, the sparse layout
// is made again with those shares as target weights (`rows:w=…` or `metis:w=…`), the matrix rows
// and the vectors x, r, p move to their new owners, and the halo is rebuilt.

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "../common/sparse_setup.hpp"
#include "cg.hpp"
#include "cg_ops.hpp"
#include "hit/balance/dynamic_balance.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::cg {

// The partitioner and model kind of --balance cpm (shares in proportion to the newest speeds)
// and fpm (partial piecewise models).
inline std::string algorithm(const Options& o) {
  return o.balance == "cpm" ? "proportional" : "geometric";
}
inline fpm::ModelKind model_kind(const Options& o) {
  return o.balance == "cpm" ? fpm::ModelKind::constant : fpm::ModelKind::piecewise;
}

// `current` (a `rows` or `metis` spec) with the target weights `w` set to `shares`.
inline Spec spec_with_shares(Spec current, const std::vector<std::int64_t>& shares) {
  for (const char* key : {"w", "models", "weights"}) current.erase(key);
  std::vector<std::int64_t> w(shares.size());
  std::transform(shares.begin(), shares.end(), w.begin(),
                 [](std::int64_t d) { return std::max<std::int64_t>(d, 0); });
  return current.with("w", w);
}

// The layout hit-cg starts from: --layout (or HIT_LAYOUT_MATRIX, else `rows`), with the rows
// shared as the stored models partition them when --balance-models gives any. Balancing needs a
// layout that takes target weights.
inline Setting starting_spec(const Options& o, index_t n, std::span<const fpm::Model> stored) {
  if (o.balance == "off") return o.layout;
  const std::string& spec = o.layout.value;
  const Spec given = Spec::parse(spec);  // the command line's text
  if (given.name() != "rows" && given.name() != "metis") {
    throw Error(ErrorKind::invalid_argument,
                "--balance re-partitions with the `rows` or `metis` layout; '" + spec +
                    "' cannot take the measured shares");
  }
  if (stored.empty()) return o.layout;
  balance::BalanceContext ctx(n, static_cast<int>(stored.size()), algorithm(o), model_kind(o));
  balance::start_from_stored(ctx, stored);
  return spec_with_shares(given, ctx.dist.sizes()).str();
}

template <class T>
class CgBalancer {
 public:
  // `stored`: the models of --balance-models (none, or one per process); sys is laid out by
  // starting_spec with them.
  // `tol`: the relative residual CG stops at.
  CgBalancer(Environment& env, const Options& o, index_t n, double tol,
             const app::SparseSystem<T>& sys, std::span<const fpm::Model> stored)
      : env_(env),
        every_(o.balance_every),
        max_iters_(o.max_iters),
        tol_(tol),
        ctx_(n, env.size(), algorithm(o), model_kind(o)) {
    if (!stored.empty()) balance::start_from_stored(ctx_, stored);
    // Without stored models the rows start even, whatever the speeds: the first step comes after
    // probe_iterations (their median leaves out the first, which may page the data in), not
    // after a whole --balance-every.
    next_step_ = (stored.empty() ? std::min(probe_iterations, every_) : every_) - 1;
    ctx_.dist.parts.clear();
    for (int p = 0; p < env.size(); ++p) {
      ctx_.dist.parts.push_back(fpm::Part{sys.layout.row_count(p), 0});
    }
    ctx_.dist.algorithm = "initial";
    // A move costs a new layout, numbering and halo (the set-up, timed) plus the rows that
    // cross, at a memory-copy rate: what the gain of a better distribution must exceed. After a
    // move, its own measured time replaces the set-up's (a move also exchanges the vectors and
    // reloads the device: 0.4 s against a 0.3 s set-up on poisson3d:n=64, and the estimate from
    // the set-up let two more corrections through that never paid back).
    // The slowest rank's: every rank must weigh a move the same, or one would move alone and
    // wait for the others in the redistribution (a rank-local time hung one run in a few
    // hundred under load).
    move_estimate_ = slowest(sys.setup_s);
    const double row_bytes = static_cast<double>(sys.shape().nonzeros()) /
                             std::max<double>(1.0, static_cast<double>(sys.shape().rows())) *
                             static_cast<double>(sizeof(T) + sizeof(index_t));
    ctx_.move_cost = [this, row_bytes](const std::vector<std::int64_t>& from,
                                       const std::vector<std::int64_t>& to) {
      return move_estimate_ + static_cast<double>(balance::units_moved(from, to)) * row_bytes / 1e9;
    };
  }
  // ctx_.move_cost refers to this object.
  CgBalancer(const CgBalancer&) = delete;
  CgBalancer& operator=(const CgBalancer&) = delete;

  int rebalances() const noexcept { return rebalances_; }
  // Seconds spent moving rows (layout, redistribution, numbering, halo, reloading the device).
  double move_seconds() const noexcept { return move_s_; }

  // After iteration k (0-based) that took `seconds` of compute on this process and left the
  // relative residual `residual`. Returns true when the rows moved (sys and ops then describe the
  // new distribution).
  bool after_iteration(long k, double seconds, double residual, app::SparseSystem<T>& sys,
                       CgOps<T>& ops) {
    pending_.push_back(seconds);
    if (k < next_step_) return false;
    next_step_ = k + every_;
    std::sort(pending_.begin(), pending_.end());
    const double typical = pending_[pending_.size() / 2];
    pending_.clear();
    const bool holds = sys.shape().rows() > 0;
    ctx_.remaining_iterations = remaining_iterations(k, residual);
    if (!balance::balance_iterate(ctx_, env_.comm(), holds ? std::max(typical, 1e-12) : 0.0)) {
      return false;
    }
    move(sys, ops);
    // The layout meets the shares within its tolerance, not exactly (METIS): the rows each
    // process holds now are what its next times measure.
    for (int p = 0; p < env_.size(); ++p) {
      ctx_.dist.parts[static_cast<std::size_t>(p)].d = sys.layout.row_count(p);
    }
    ++rebalances_;
    return true;
  }

  // The iterations CG is likely to run after iteration k, for the gain test: its residual falls
  // about geometrically (from 1: x0 = 0), so at the mean rate so far it reaches tol after
  // log(tol / residual) / log(rate) more, bounded by --max-iters. A move must pay for itself
  // within them. (Guessing "as many again as so far" held the first move back until the gain of
  // a few iterations exceeded a set-up's cost: a quarter of a 100-iteration run on the even
  // split.)
  std::int64_t remaining_iterations(long k, double residual) const {
    const auto left = static_cast<std::int64_t>(std::max(0L, max_iters_ - k - 1));
    if (!(residual > tol_) || !(residual < 1) || !(tol_ > 0))
      return std::min<std::int64_t>(left, 1);
    const double rate = std::pow(residual, 1.0 / static_cast<double>(k + 1));
    const double more = std::ceil(std::log(tol_ / residual) / std::log(rate));
    if (!std::isfinite(more)) return left;
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min(more, 1e15)), 1, left);
  }

 private:
  void move(app::SparseSystem<T>& sys, CgOps<T>& ops) {
    const Timer timer;
    CsrRows<T> held;
    static_cast<CsrPattern&>(held) = sys.shape().pattern();
    held.values.assign(sys.matrix.values().begin(), sys.matrix.values().end());
    const std::vector<index_t> old_names(sys.row_names().begin(), sys.row_names().end());
    // x, r and p travel together: one exchange instead of three (each orders, checks and
    // exchanges every name again).
    const std::vector<T> x = ops.x_host(), r = ops.r_host(), p = ops.p_host();
    std::vector<std::array<T, 3>> vectors(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) vectors[i] = {x[i], r[i], p[i]};
    sys.layout = sparse_layout(spec_with_shares(sys.layout.spec_value(), ctx_.dist.sizes()),
                               topology("array"), held);
    app::rebuild(env_, sys, redistribute<T>(held, sys.layout.owners(), env_.comm()));
    const std::vector<std::array<T, 3>> moved = redistribute_values<std::array<T, 3>>(
        old_names, vectors, sys.layout.owners(), sys.row_names(), env_.comm());
    std::vector<T> new_x(moved.size()), new_r(moved.size()), new_p(moved.size());
    for (std::size_t i = 0; i < moved.size(); ++i) {
      new_x[i] = moved[i][0];
      new_r[i] = moved[i][1];
      new_p[i] = moved[i][2];
    }
    ops.reload(sys, new_x, new_r, new_p);
    sys.setup_s = timer.seconds();
    move_s_ += sys.setup_s;
    move_estimate_ = slowest(sys.setup_s);
  }

  // The largest of every rank's `seconds`. Collective.
  double slowest(double seconds) const {
    seconds = allreduce(seconds, ReduceOp::max);
    return seconds;
  }

  static constexpr int probe_iterations = 3;

  Environment& env_;
  int every_;
  long max_iters_;
  double tol_;
  long next_step_ = 0;  // the iteration after which the next balancing step comes
  double move_s_ = 0;
  double move_estimate_ = 0;  // seconds a move costs beyond the rows that cross
  balance::BalanceContext ctx_;
  std::vector<double> pending_;
  int rebalances_ = 0;
};

}  // namespace hit::cg
