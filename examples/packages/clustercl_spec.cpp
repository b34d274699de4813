// What each clusterCL workload takes and gives (clustercl_apps.hpp): its arrays by name, role and
// shape for the sizes given, its scalar parameters with their defaults, and --describe.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "clustercl.hpp"
#include "clustercl_apps.hpp"
#include "hit/core/error.hpp"

namespace hit::packages {

namespace {

struct ParamDefault {
  std::string name;
  double value;
  bool integer;
};

// The parameters each workload takes, with their defaults.
std::vector<ParamDefault> params_of(const std::string& w) {
  if (w == "gsmv") return {{"alpha", 1.5, false}, {"beta", 1.2, false}};
  if (w == "bsm") return {{"r", 0.02, false}, {"sigma", 0.3, false}};
  if (w == "bop") return {{"r", 0.02, false}, {"sigma", 0.3, false}, {"steps", 256, true}};
  if (w == "dcs") return {{"atoms", 256, true}, {"h", 0.1, false}, {"z0", 1.5, false}};
  return {};
}

double parse_param(const std::string& workload, const ParamDefault& p, const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) ||
      (p.integer && (v != std::floor(v) || v < 1 || v > 1e9))) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--param {}={}: {} takes {} for {}", p.name, text, workload,
                            p.integer ? "a whole number >= 1" : "a finite number", p.name));
  }
  return v;
}

std::map<std::string, double> resolve_params(const Options& o) {
  const std::vector<ParamDefault> known = params_of(o.workload);
  std::map<std::string, double> values;
  for (const ParamDefault& p : known) values[p.name] = p.value;
  for (const auto& [name, text] : o.params) {
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const ParamDefault& p) { return p.name == name; });
    if (it == known.end()) {
      std::string names;
      for (const ParamDefault& p : known) names += (names.empty() ? "" : ", ") + p.name;
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--param {}: workload {} takes {}", name, o.workload,
                              names.empty() ? "no parameters" : names));
    }
    values[name] = parse_param(o.workload, *it, text);
  }
  return values;
}

WorkloadArray rows(std::string name, std::initializer_list<index_t> extents, bool output = false) {
  return {std::move(name), output, Shape::extents(extents), true};
}
WorkloadArray whole(std::string name, std::initializer_list<index_t> extents, bool output = false) {
  return {std::move(name), output, Shape::extents(extents), false};
}

// The arrays and the flop count of workload `w` for n (rows) and m (the second extent).
void add_arrays(WorkloadSpec& s, const Options& o, index_t n, index_t m) {
  const std::string& w = o.workload;
  const double dn = static_cast<double>(n);
  const double dm = static_cast<double>(m);
  if (w == "syrk") {
    s.arrays = {whole("a", {n, m}), rows("c", {n, n}, true)};
    s.flops = dn * (dn + 1) * dm;
  } else if (w == "gsmv") {
    s.arrays = {rows("a", {n, n}), rows("b", {n, n}), whole("x", {n}), rows("y", {n}, true)};
    s.flops = 4 * dn * dn;
  } else if (w == "bicg") {
    s.arrays = {rows("a", {n, m}), whole("p", {m}), rows("r", {n}), rows("q", {n}, true),
                whole("s", {m}, true)};
    s.flops = 4 * dn * dm;
  } else if (w == "bsm" || w == "bop") {
    s.arrays = {rows("s", {n}), rows("k", {n}), rows("t", {n}), rows("call", {n}, true)};
    if (w == "bsm") s.arrays.push_back(rows("put", {n}, true));
    const double steps = w == "bop" ? s.params.at("steps") : 0;
    s.flops = w == "bsm" ? 60 * dn : dn * (steps + 1) * (steps + 2) / 2 * 3;
  } else if (w == "dcs") {
    const auto atoms = static_cast<index_t>(s.params.at("atoms"));
    const bool in = o.strategy == "in";
    s.arrays = {WorkloadArray{"atoms", false, Shape::extents({atoms, 4}), in},
                WorkloadArray{"grid", true, Shape::extents({n, m}), !in}};
    s.flops = 9 * dn * dm * static_cast<double>(atoms);
  } else if (w == "conv") {
    s.arrays = {rows("in", {n, m}), whole("w", {3, 3}), rows("out", {n, m}, true)};
    s.flops = 18 * dn * dm;
  } else if (w == "cov" || w == "cor") {
    s.arrays = {whole("x", {n, m}), rows(w, {m, m}, true)};
    s.flops = 3 * dn * dm * dm;
  } else if (w == "gsp") {
    s.arrays = {rows("a", {n, m}), rows("q", {n, m}, true), whole("r", {m, m}, true)};
    s.flops = 4 * dn * dm * dm;
  }
}

}  // namespace

const std::vector<std::string>& clustercl_workloads() {
  static const std::vector<std::string> names = {"dcs", "cor", "cov",  "bop",  "syrk",
                                                 "gsp", "bsm", "conv", "bicg", "gsmv"};
  return names;
}

std::map<std::string, std::string> named_values(const std::string& flag,
                                                const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} {}: expected NAME=VALUE", flag, item));
    }
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} {}: '{}' is given twice", flag, item, item.substr(0, eq)));
    }
  }
  return out;
}

bool is_clustercl(const std::string& workload) {
  const auto& all = clustercl_workloads();
  return std::find(all.begin(), all.end(), workload) != all.end();
}

WorkloadSpec workload_spec(const Options& o) {
  WorkloadSpec s;
  s.name = o.workload;
  s.params = resolve_params(o);
  if (o.strategy != "out" && o.workload != "dcs") {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--strategy {}: only dcs has a choice of strategy", o.strategy));
  }
  const index_t n = o.n;
  const index_t m = o.m > 0 ? o.m : n;
  if (o.workload == "gsp" && m > n) {
    throw Error(
        ErrorKind::invalid_argument,
        fmt::format("gsp: A is {} x {}; Gram-Schmidt needs m <= n (--m {} > --n {})", n, m, m, n));
  }
  if (o.workload == "bop" && s.params.at("steps") > bop_max_steps) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--param steps={}: bop takes at most {} steps", s.params.at("steps"),
                            bop_max_steps));
  }
  add_arrays(s, o, n, m);
  return s;
}

std::string describe_workload(const WorkloadSpec& spec, const std::string& type) {
  nlohmann::json arrays = nlohmann::json::array();
  for (const WorkloadArray& a : spec.arrays) {
    std::vector<index_t> shape;
    for (int k = 0; k < a.shape.rank(); ++k) shape.push_back(a.shape.extent(k));
    arrays.push_back({{"name", a.name},
                      {"role", a.output ? "out" : "in"},
                      {"shape", shape},
                      {"type", type},
                      {"distribution", a.by_rows ? "rows" : "whole"}});
  }
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : spec.params) params[name] = value;
  return nlohmann::json{{"workload", spec.name}, {"arrays", arrays}, {"params", params}}.dump();
}

}  // namespace hit::packages
