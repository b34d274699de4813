#pragma once
// The --balance flags of the programs that re-partition rows while they run (hit-jacobi,
// hit-linsolve); the mode is read into `mode` and applied by apply_balance_mode after parsing.

#include <CLI/CLI.hpp>
#include <limits>
#include <string>

#include "../../tools/common/cli.hpp"
#include "hit/balance/row_balancer.hpp"

namespace hit::app {

inline CLI::Option* add_balance_flags(CLI::App& cli, BalanceOptions& balance, std::string& mode,
                                      const std::string& extra_help = "") {
  auto* option = cli.add_option("--balance", mode,
                                "re-partition the rows while iterating: off, cpm (shares in "
                                "proportion to the measured speeds) or fpm (partial functional "
                                "models); needs a layout of whole rows" +
                                    extra_help)
                     ->capture_default_str()
                     ->check(CLI::IsMember({"off", "cpm", "fpm"}));
  cli.add_option("--balance-every", balance.every, "iterations per balancing step")
      ->capture_default_str()
      ->check(hit::cli::count(1, std::numeric_limits<int>::max()));
  cli.add_option("--balance-eps", balance.eps,
                 "spread of the per-rank compute times tolerated ((max - min) / min)")
      ->capture_default_str()
      ->check(hit::cli::real_above(0));
  cli.add_option("--balance-window", balance.window_steps,
                 "balancing steps whose median time is a rank's measure at one share (longer: "
                 "steadier on a noisy machine, slower to see a change)")
      ->capture_default_str()
      ->check(hit::cli::count(1, 1000));
  cli.add_option("--balance-reserve", balance.reserve,
                 "rows to spare on each side of a moved block, as a fraction of its rows: later "
                 "moves within them happen in place (0: blocks only shrink in place)")
      ->capture_default_str()
      ->check(hit::cli::real_at_least(0));
  return option;
}

}  // namespace hit::app
