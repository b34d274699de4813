// The partitioner registry (docs/fpm.md, "Choosing a partitioner"): the built-in partitioners of
// partition.cpp under their spec names and parameters, and partition() by spec.
#include <fmt/format.h>

#include <memory>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/partition.hpp"

namespace hit::fpm {

Distribution Partitioner::operator()(std::span<const Model> models, std::int64_t n,
                                     const Spec& spec) const {
  return fn_(models, n, spec);
}

namespace {

Bisection parse_bisection(const Spec& spec) {
  const std::string v = spec.get_string("bisection", "log");
  if (v == "log") return Bisection::log;
  if (v == "angle") return Bisection::angle;
  if (v == "linear") return Bisection::linear;
  throw Error(ErrorKind::plugin, fmt::format("partitioner '{}': bisection = '{}' (allowed: log, "
                                             "angle, linear)",
                                             spec.str(), v));
}

Rounding parse_rounding(const Spec& spec) {
  const std::string v = spec.get_string("rounding", "greedy");
  if (v == "greedy") return Rounding::greedy;
  if (v == "largest_remainder") return Rounding::largest_remainder;
  throw Error(ErrorKind::plugin, fmt::format("partitioner '{}': rounding = '{}' (allowed: greedy, "
                                             "largest_remainder)",
                                             spec.str(), v));
}

int parse_iterations(const Spec& spec, int fallback) {
  const std::int64_t v = spec.get_int("max_iterations", fallback);
  if (v < 1 || v > 100000) {
    throw Error(ErrorKind::plugin, fmt::format("partitioner '{}': max_iterations = {} (allowed: 1 "
                                               "to 100000)",
                                               spec.str(), v));
  }
  return static_cast<int>(v);
}

std::vector<std::shared_ptr<const Partitioner>> make_builtins() {
  std::vector<std::shared_ptr<const Partitioner>> out;
  auto add = [&](std::string name, std::string description, std::vector<ParamInfo> params,
                 Partitioner::Function fn) {
    out.push_back(std::make_shared<const Partitioner>(std::move(name), std::move(description),
                                                      std::move(params), std::move(fn)));
  };
  add("even", "equal shares (the first n mod p devices get one more), within capacities", {},
      [](std::span<const Model> m, std::int64_t n, const Spec&) { return partition_even(m, n); });
  add("proportional", "shares proportional to constant speeds (CPM), within capacities",
      {{"rounding", "greedy (optimal integers) or largest_remainder (classic)", "greedy"}},
      [](std::span<const Model> m, std::int64_t n, const Spec& s) {
        return partition_proportional(m, n, parse_rounding(s));
      });
  add("geometric",
      "bisection of lines through the origin of the speed graphs (coarsened piecewise models)",
      {{"bisection", "log, angle or linear", "log"},
       {"max_iterations", "bisection steps at most", "100"}},
      [](std::span<const Model> m, std::int64_t n, const Spec& s) {
        auto d = partition_geometric(m, n, parse_bisection(s), parse_iterations(s, 100));
        return d;
      });
  add("numerical", "root finding on the common finishing time (any model, e.g. akima)",
      {{"tolerance", "relative tolerance on the finishing time", "1e-12"},
       {"max_iterations", "root-finding steps at most", "200"}},
      [](std::span<const Model> m, std::int64_t n, const Spec& s) {
        const double tol = s.get_double("tolerance", 1e-12);
        if (!(tol > 0 && tol < 1)) {
          throw Error(ErrorKind::plugin,
                      fmt::format("partitioner '{}': tolerance = {} (allowed: 0 < tolerance < 1)",
                                  s.str(), tol));
        }
        return partition_numerical(m, n, tol, parse_iterations(s, 200));
      });
  add("exact", "exact integer optimum of the (enveloped) models; the reference solver", {},
      [](std::span<const Model> m, std::int64_t n, const Spec&) { return partition_exact(m, n); });
  add("dp", "dynamic programming on the raw models, exact even when times decrease (small n)", {},
      [](std::span<const Model> m, std::int64_t n, const Spec&) { return partition_dp(m, n); });
  return out;
}

}  // namespace

PartitionerRegistry::PartitionerRegistry() : Registry<Partitioner>("fpm partitioner") {
  for (auto& p : make_builtins()) add(std::move(p));
}

std::vector<std::string> builtin_partitioners() {
  std::vector<std::string> out;
  for (const auto& p : make_builtins()) out.push_back(p->name());
  return out;
}

Distribution partition(const std::string& algorithm, std::span<const Model> models,
                       std::int64_t n) {
  const Spec spec = Spec::parse(algorithm);
  Distribution out;
  if (Environment::exists()) {
    const auto& registry = Environment::current().extension<PartitionerRegistry>();
    out = registry.get(spec)(models, n, spec);
  } else {
    const PartitionerRegistry registry;
    out = registry.get(spec)(models, n, spec);
  }
  out.algorithm = spec.str();
  return out;
}

void check_partitioner(const std::string& algorithm) {
  const std::vector<Model> one{Model::constant_speed(1.0)};
  try {
    (void)partition(algorithm, one, 1);
  } catch (const Error& e) {
    // Names, keys and values are Error(plugin) or a spec that does not parse; anything else is
    // about the trial problem, not the name.
    if (e.kind() == ErrorKind::plugin || e.kind() == ErrorKind::parse) throw;
  }
}

}  // namespace hit::fpm
