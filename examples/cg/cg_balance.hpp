#pragma once
// --balance of hit-cg: the rows move between processes as their measured speeds ask. Every
// --balance-every iterations each process reports the median of its compute times to the dynamic
// balancer of partial performance models (hit::balance::balance_iterate, the same decision
// hit-jacobi's rows take); when it finds a better distribution worth its cost, the sparse layout
// is made again with those shares as target weights (`rows:w=…` or `metis:w=…`), the matrix rows
// and the vectors x, r, p move to their new owners, and the halo is rebuilt.

#include <algorithm>
#include <string>
#include <vector>

#include "../common/sparse_setup.hpp"
#include "cg.hpp"
#include "cg_ops.hpp"
#include "hit/balance/dynamic_balance.hpp"
#include "hit/hit.hpp"

namespace hit::cg {

template <class T>
class CgBalancer {
 public:
  CgBalancer(Environment& env, const Options& o, index_t n, const app::SparseSystem<T>& sys)
      : env_(env),
        every_(o.balance_every),
        max_iters_(o.max_iters),
        ctx_(n, env.size(), o.balance == "cpm" ? "proportional" : "geometric",
             o.balance == "cpm" ? fpm::ModelKind::constant : fpm::ModelKind::piecewise) {
    const Spec spec = Spec::parse(sys.layout.spec());
    if (spec.name() != "rows" && spec.name() != "metis") {
      throw Error(ErrorKind::invalid_argument,
                  "--balance re-partitions with the `rows` or `metis` layout; '" +
                      sys.layout.spec() + "' cannot take the measured shares");
    }
    ctx_.dist.parts.clear();
    for (int p = 0; p < env.size(); ++p) {
      ctx_.dist.parts.push_back(fpm::Part{sys.layout.row_count(p), 0});
    }
    ctx_.dist.algorithm = "initial";
    // A move costs a new layout, numbering and halo (the set-up, timed) plus the rows that
    // cross, at a memory-copy rate: what the gain of a better distribution must exceed.
    // The slowest rank's: every rank must weigh a move the same, or one would move alone and
    // wait for the others in the redistribution (a rank-local time hung one run in a few
    // hundred under load).
    double setup = sys.setup_s;
    allreduce_in_place(&setup, 1, MPI_DOUBLE, MPI_MAX, env.comm());
    const double row_bytes = static_cast<double>(sys.shape().nonzeros()) /
                             std::max<double>(1.0, static_cast<double>(sys.shape().rows())) *
                             static_cast<double>(sizeof(T) + sizeof(index_t));
    ctx_.move_cost = [setup, row_bytes](const std::vector<std::int64_t>& from,
                                        const std::vector<std::int64_t>& to) {
      return setup + static_cast<double>(balance::units_moved(from, to)) * row_bytes / 1e9;
    };
  }

  int rebalances() const noexcept { return rebalances_; }

  // After iteration k (0-based) that took `seconds` of compute on this process. Returns true
  // when the rows moved (sys and ops then describe the new distribution).
  bool after_iteration(long k, double seconds, app::SparseSystem<T>& sys, CgOps<T>& ops) {
    pending_.push_back(seconds);
    if ((k + 1) % every_ != 0) return false;
    std::sort(pending_.begin(), pending_.end());
    const double typical = pending_[pending_.size() / 2];
    pending_.clear();
    const bool holds = sys.shape().rows() > 0;
    // CG's remaining iterations are unknown: as many again as so far is the guess (bounded by
    // --max-iters), so a move must pay for itself within the run's likely length.
    ctx_.remaining_iterations = std::min<std::int64_t>(k + 1, max_iters_ - k - 1);
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

 private:
  std::string spec_with_shares(const std::string& current) const {
    const Spec old = Spec::parse(current);
    Spec next(old.name());
    for (const auto& [key, value] : old.params()) {
      if (key != "w" && key != "models" && key != "weights") next.set(key, value);
    }
    std::string w;
    for (const std::int64_t d : ctx_.dist.sizes()) {
      w += (w.empty() ? "" : ",") + std::to_string(std::max<std::int64_t>(d, 0));
    }
    next.set("w", w);
    return next.str();
  }

  void move(app::SparseSystem<T>& sys, CgOps<T>& ops) {
    const Timer timer;
    CsrRows<T> held;
    static_cast<CsrPattern&>(held) = sys.shape().pattern();
    held.values.assign(sys.matrix.values().begin(), sys.matrix.values().end());
    const std::vector<index_t> old_names(sys.row_names().begin(), sys.row_names().end());
    const std::vector<T> x = ops.x_host(), r = ops.r_host(), p = ops.p_host();
    sys.layout = sparse_layout(spec_with_shares(sys.layout.spec()), topology("array"), held);
    app::rebuild(env_, sys, redistribute<T>(held, sys.layout.owners(), env_.comm()));
    const auto to_new = [&](const std::vector<T>& v) {
      return redistribute_values<T>(old_names, v, sys.layout.owners(), sys.row_names(),
                                    env_.comm());
    };
    ops.reload(sys, to_new(x), to_new(r), to_new(p));
    sys.setup_s = timer.seconds();
  }

  Environment& env_;
  int every_;
  long max_iters_;
  balance::BalanceContext ctx_;
  std::vector<double> pending_;
  int rebalances_ = 0;
};

}  // namespace hit::cg
