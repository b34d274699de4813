// hit-fpm network: measure the run's communication cost model (Hockney's α + n/β per link class)
// and print it or write it as a network model file.
#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hit/balance/network_benchmark.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/fpm/network_model.hpp"
#include "hit/fpm/network_model_file.hpp"
#include "hit/program.hpp"
#include "subcommands.hpp"

namespace hit_fpm {

using hit::Error;
using hit::ErrorKind;
namespace balance = hit::balance;
namespace fpm = hit::fpm;

namespace {

nlohmann::json cost_json(const fpm::LinkCost& k) {
  return {{"latency_s", k.latency},
          {"bandwidth_Bps", k.bandwidth},
          {"latency_spread", k.latency_spread},
          {"bandwidth_spread", k.bandwidth_spread},
          {"pairs", k.pairs}};
}

nlohmann::json model_json(const fpm::NetworkModel& m, const NetworkCli& c) {
  nlohmann::json classes = nlohmann::json::object();
  for (const fpm::LinkClass k : fpm::link_classes) {
    if (m.has(k)) classes[std::string(fpm::to_string(k))] = cost_json(m.cost(k));
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const fpm::PairCost& p : m.pairs()) {
    pairs.push_back({{"rank_a", p.rank_a},
                     {"rank_b", p.rank_b},
                     {"class", std::string(fpm::to_string(p.link))},
                     {"latency_s", p.latency},
                     {"bandwidth_Bps", p.bandwidth}});
  }
  return {{"processes", m.node_of_rank().size()},
          {"node_of_rank", m.node_of_rank()},
          {"ranks_per_node", m.ranks_per_node()},
          {"classes", classes},
          {"pairs", pairs},
          {"info", m.info()},
          {"out", c.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.out)}};
}

std::string bytes_text(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

void print_table(const fpm::NetworkModel& m, const balance::NetworkOptions& o, bool quiet) {
  const auto [smallest, largest] = std::minmax_element(o.sizes.begin(), o.sizes.end());
  fmt::print(
      "network model of {} processes on {} nodes{}: sizes {} to {}, median of {} round trips\n",
      m.node_of_rank().size(), m.info().at("nodes"),
      m.info().count("emulated_nodes") != 0 ? " (emulated: HIT_NODES)" : "", bytes_text(*smallest),
      bytes_text(*largest), o.reps);
  fmt::print("{:<8} {:>12} {:>15} {:>15} {:>17} {:>6}\n", "class", "latency/us", "bandwidth/GB/s",
             "latency spread", "bandwidth spread", "pairs");
  for (const fpm::LinkClass k : fpm::link_classes) {
    if (!m.has(k)) {
      fmt::print("{:<8} (no pair of ranks {} in this run)\n", fpm::to_string(k),
                 k == fpm::LinkClass::network ? "on different nodes" : "on one node");
      continue;
    }
    const fpm::LinkCost& c = m.cost(k);
    fmt::print("{:<8} {:>12.3f} {:>15.3f} {:>14.1f}% {:>16.1f}% {:>6}\n", fpm::to_string(k),
               c.latency * 1e6, c.bandwidth * 1e-9, 100 * c.latency_spread,
               100 * c.bandwidth_spread, c.pairs);
  }
  if (quiet) return;
  fmt::print("pairs measured (one at a time):\n");
  for (const fpm::PairCost& p : m.pairs()) {
    fmt::print("  ranks {:>3} and {:<3} {:<8} {:>12.3f} us {:>11.3f} GB/s\n", p.rank_a, p.rank_b,
               fpm::to_string(p.link), p.latency * 1e6, p.bandwidth * 1e-9);
  }
}

}  // namespace

int run_network(hit::Environment& env, const NetworkCli& c) {
  if (env.size() < 2) {
    throw Error(ErrorKind::invalid_argument,
                "hit-fpm network needs at least 2 processes (a pair of ranks to measure): run it "
                "under mpiexec -n 2 or more");
  }
  if (c.nodes >= 0) env.config().set("nodes", std::to_string(c.nodes));
  balance::NetworkOptions o;
  if (!c.sizes.empty()) o.sizes = c.sizes;
  o.reps = c.reps;
  o.warmup = c.warmup;
  o.max_pairs = c.max_pairs;
  balance::check_network_options(o);  // the same on every rank
  // Before measuring: a file that cannot be written is found first, on every rank.
  hit::collectively(env.comm(), [&] {
    if (env.rank() == 0 && !c.out.empty()) {
      hit::check_output_path(c.out, "network model file (--out)");
    }
  });
  const fpm::NetworkModel model = balance::measure_network(env, o);
  hit::collectively(env.comm(), [&] {
    if (env.rank() == 0 && !c.out.empty()) fpm::save_network_model(c.out, model);
  });
  if (env.rank() != 0) return hit::exit_ok;
  if (c.json) {
    fmt::print("{}\n", model_json(model, c).dump());
    return hit::exit_ok;
  }
  print_table(model, o, c.quiet);
  if (!c.out.empty()) fmt::print("wrote {}\n", c.out);
  return hit::exit_ok;
}

}  // namespace hit_fpm
