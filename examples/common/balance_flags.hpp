#pragma once
// The --balance flags of the programs that re-partition rows while they run (hit-jacobi,
// hit-linsolve): read into BalanceFlags, then applied to the options by apply_balance_flags.
// hit-cg, whose balancer is its own, shares the stored models' files (load_balance_models).

#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <vector>

#include "../../tools/common/cli.hpp"
#include "hit/balance/row_balancer.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/model_file.hpp"

namespace hit::app {

// What the flags say beyond BalanceOptions' numbers.
struct BalanceFlags {
  std::string mode = "off";
  std::string models;  // --balance-models: files, or one name with {rank}
};

inline CLI::Option* add_balance_flags(CLI::App& cli, BalanceOptions& balance, BalanceFlags& flags,
                                      const std::string& extra_help = "") {
  auto* option = cli.add_option("--balance", flags.mode,
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
  cli.add_option("--balance-models", flags.models,
                 "stored performance models whose unit is one row (hit-fpm build): one file per "
                 "process, comma-separated, or one name with {rank}; the rows start from their "
                 "partition instead of one timed iteration");
  return option;
}

// The model files of --balance-models for `procs` processes: the list, or the name with {rank}
// replaced by each rank. Error(invalid_argument) when a list has another length.
inline std::vector<std::string> balance_model_files(const std::string& text, int procs) {
  std::vector<std::string> files;
  if (text.find("{rank}") != std::string::npos) {
    for (int r = 0; r < procs; ++r)
      files.push_back(cli::replace_all(text, "{rank}", std::to_string(r)));
    return files;
  }
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    files.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (files.size() != static_cast<std::size_t>(procs)) {
    throw Error(ErrorKind::invalid_argument, "--balance-models: " + std::to_string(files.size()) +
                                                 " files for " + std::to_string(procs) +
                                                 " processes (give one per process, or one name "
                                                 "with {rank})");
  }
  return files;
}

// The models of --balance-models `text` (none when empty), loaded on every rank, each rank's
// failure agreed by all. `balancing`: whether --balance is on (the models need it).
inline std::vector<fpm::Model> load_balance_models(Environment& env, const std::string& text,
                                                   bool balancing) {
  std::vector<fpm::Model> models;
  if (text.empty()) return models;
  if (!balancing) {
    throw Error(ErrorKind::invalid_argument, "--balance-models needs --balance cpm or fpm");
  }
  collectively(env.comm(), [&] {
    for (const std::string& f : balance_model_files(text, env.size())) {
      models.push_back(fpm::load_model(f));
    }
  });
  return models;
}

// Sets the mode and loads the models.
inline void apply_balance_flags(Environment& env, const BalanceFlags& flags,
                                BalanceOptions& balance) {
  balance.mode = parse_balance_mode(flags.mode);
  balance.models = load_balance_models(env, flags.models, balance.mode != BalanceMode::off);
}

}  // namespace hit::app
