#pragma once
// The `balance` part of a result (docs/results.md) and its summary line, for the programs that
// balance rows while they run (hit-jacobi, hit-linsolve).

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hit/balance/row_balancer.hpp"
#include "hit/comm.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"

namespace hit::app {

// What the balancer did, for the report (collective: the time is the slowest rank's).
inline nlohmann::json balance_report(const RowBalancer& b, std::vector<std::string>& lines) {
  const double seconds = allreduce(b.seconds(), ReduceOp::max);
  nlohmann::json moves = nlohmann::json::array();
  std::uint64_t bytes = 0;
  std::string at;
  for (const Rebalance& r : b.rebalances()) {
    moves.push_back({{"iteration", r.iteration},
                     {"imbalance_before", r.imbalance_before},
                     {"imbalance_after", r.imbalance_after},
                     {"rows", r.rows},
                     {"bytes_moved", r.bytes_moved},
                     {"tiles_moved", r.tiles_moved},
                     {"tiles_in_place", r.tiles_in_place},
                     {"seconds", r.seconds}});
    bytes += r.bytes_moved;
    at += (at.empty() ? "" : ", ") + std::to_string(r.iteration);
  }
  nlohmann::json trace = nlohmann::json::array();
  for (const RowBalancer::Step& s : b.trace()) {
    trace.push_back({{"iteration", s.iteration},
                     {"seconds", s.seconds},
                     {"imbalance", s.imbalance},
                     {"times", s.times}});
  }
  const BalanceOptions& o = b.options();
  char line[256];
  std::snprintf(line, sizeof line,
                "balance: %s every %d, %zu rebalance%s%s%s%s, imbalance now %.3f, %.3g MB moved, "
                "%.3f s balancing",
                std::string(to_string(o.mode)).c_str(), o.every, b.rebalances().size(),
                b.rebalances().size() == 1 ? "" : "s", at.empty() ? "" : " (after iterations ",
                at.c_str(), at.empty() ? "" : ")", b.imbalance(), static_cast<double>(bytes) * 1e-6,
                seconds);
  lines.emplace_back(line);
  return {{"mode", std::string(to_string(o.mode))},
          {"every", o.every},
          {"eps", o.eps},
          {"reserve", o.reserve},
          {"steps", b.steps()},
          {"rebalances", moves},
          {"initial_rows", b.initial_rows()},
          {"models", !o.models.empty()},
          {"rows", b.rows()},
          {"imbalance", b.imbalance()},
          {"trace", trace},
          {"bytes_moved", bytes},
          {"seconds", seconds}};
}

}  // namespace hit::app
