// hit-fpm hierarchical: partition a matrix product over nodes and their devices by measuring them.
#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "hit/balance/hierarchical.hpp"
#include "hit/core/environment.hpp"
#include "hit/fpm/hierarchical.hpp"
#include "hit/program.hpp"
#include "subcommands.hpp"

namespace hit_fpm {

using hit::Error;
using hit::ErrorKind;
namespace balance = hit::balance;
namespace fpm = hit::fpm;

namespace {

nlohmann::json step_json(const balance::HierarchicalStep& s) {
  return {{"iteration", s.iteration},
          {"target_areas", s.target_areas},
          {"areas", s.areas},
          {"node_seconds", s.node_seconds},
          {"spread", s.spread},
          {"columns", s.columns},
          {"device_seconds", s.device_seconds},
          {"device_iterations", s.device_iterations},
          {"device_status", s.device_status}};
}

}  // namespace

int run_hierarchical(hit::Environment& env, const HierarchicalCli& c) {
  if (!c.devices.empty()) env.config().set("devices", c.devices);
  if (c.nodes >= 0) env.config().set("nodes", std::to_string(c.nodes));
  balance::HierarchicalOptions o;
  o.n = c.n;
  o.block = c.block;
  o.panel = c.panel;
  o.method = fpm::parse_hierarchical_method(c.method);
  o.node_eps = c.eps;
  o.device_eps = c.device_eps;
  o.max_iterations = c.iterations;
  o.device_iterations = c.device_iterations;
  o.algorithm = c.algorithm;
  o.models_dir = c.models;
  o.block_columns = c.block_columns;
  o.precision.rel_ci = c.precision;
  o.precision.min_reps = c.min_reps;
  o.precision.max_reps = c.max_reps;
  o.precision.max_seconds = c.max_time;
  const balance::HierarchicalPartition r = balance::partition_hierarchical(env, o);
  if (env.rank() != 0) return hit::exit_ok;
  if (c.json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.steps) steps.push_back(step_json(s));
    const nlohmann::json j = {{"method", std::string(fpm::to_string(r.method))},
                              {"n", c.n},
                              {"block", c.block},
                              {"spec", r.spec.str()},
                              {"status", std::string(balance::to_string(r.status))},
                              {"areas", r.areas},
                              {"weights", r.weights},
                              {"node_of_rank", r.node_of_rank},
                              {"seconds", r.seconds},
                              {"models_loaded", r.models_loaded},
                              {"steps", steps}};
    fmt::print("{}\n", j.dump());
    return hit::exit_ok;
  }
  fmt::print(
      "{} partitioning of a {}x{} product (b = {}) over {} nodes: {} after {} step{} "
      "({:.2f} s{})\n",
      fpm::to_string(r.method), c.n, c.n, c.block,
      r.node_of_rank.empty() ? 0
                             : *std::max_element(r.node_of_rank.begin(), r.node_of_rank.end()) + 1,
      balance::to_string(r.status), r.steps.size(), r.steps.size() == 1 ? "" : "s", r.seconds,
      r.models_loaded ? ", models loaded" : "");
  for (const auto& s : r.steps) {
    std::string nodes;
    for (std::size_t i = 0; i < s.areas.size(); ++i) {
      nodes += fmt::format("{}node {}: {} blocks in {:.4f} s", i ? "; " : "", i, s.areas[i],
                           s.node_seconds[i]);
    }
    fmt::print("  step {}: {} (spread {:.3f})\n", s.iteration, nodes, s.spread);
  }
  fmt::print("layout: {}\n", r.spec.str());
  return hit::exit_ok;
}

}  // namespace hit_fpm
