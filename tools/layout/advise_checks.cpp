#include "advise_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/core/host_memory_budget.hpp"
#include "hit/core/units.hpp"

namespace hit::tools {

using advisor::App;
using json = nlohmann::ordered_json;

namespace {

// A result file is input like any other: every field the fit reads is checked, the error naming
// the file and the field, before anything is fitted to it.
void require_time(const std::string& file, const std::string& field, const json& value,
                  bool positive) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) ||
      (positive ? !(value.get<double>() > 0) : value.get<double>() < 0)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--calibrate {}: {} is {}, not a time in seconds ({})", file, field,
                            value.dump(), positive ? "above 0" : "0 or more"));
  }
}

}  // namespace

void validate_result(const json& r, const std::string& file) {
  const auto field = [&](const char* name) -> const json& {
    if (!r.is_object() || !r.contains(name)) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--calibrate {}: no field '{}' (a program's --json result has it)",
                              file, name));
    }
    return r.at(name);
  };
  const json& devices = field("devices");
  const json& per_rank = field("per_rank");
  if (!devices.is_array() || devices.empty() ||
      !std::all_of(devices.begin(), devices.end(), [](const json& d) { return d.is_string(); })) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--calibrate {}: devices is {}, not a list of device names", file,
                            excerpt(devices.dump(), 80)));
  }
  if (!per_rank.is_array()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--calibrate {}: per_rank is not a list", file));
  }
  if (r.contains("ranks")) {
    const json& ranks = r.at("ranks");
    if (!ranks.is_number_integer() || ranks.get<long long>() < 1) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--calibrate {}: ranks is {}, not a process count", file,
                              excerpt(ranks.dump(), 80)));
    }
    if (ranks.get<long long>() != static_cast<long long>(devices.size())) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("--calibrate {}: ranks is {} but devices lists {}", file,
                              ranks.get<long long>(), devices.size()));
    }
  }
  if (per_rank.size() != devices.size()) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("--calibrate {}: per_rank has {} entries but devices lists {}", file,
                            per_rank.size(), devices.size()));
  }
  require_time(file, "time_s", field("time_s"), true);
  for (std::size_t q = 0; q < per_rank.size(); ++q) {
    for (const char* name : {"compute_s", "comm_s"}) {
      const std::string where = fmt::format("per_rank[{}].{}", q, name);
      if (!per_rank[q].is_object() || !per_rank[q].contains(name)) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("--calibrate {}: no field {}", file, where));
      }
      require_time(file, where, per_rank[q].at(name), false);
    }
  }
  for (const char* name : {"iterations", "iters", "n", "m", "k", "panel"}) {
    if (!r.contains(name)) continue;
    const json& v = r.at(name);
    const long long least = std::string_view(name) == "iterations" ? 0 : 1;
    if (!v.is_number_integer() || v.get<long long>() < least ||
        v.get<long long>() > std::numeric_limits<int>::max()) {
      throw Error(ErrorKind::invalid_argument, fmt::format("--calibrate {}: {} is {}, not a count",
                                                           file, name, excerpt(v.dump(), 80)));
    }
  }
}

// The programs the advice's command runs take sizes, not shapes: a shape they cannot run would
// get a command for another problem. What each runs: hit-cannon and hit-summa C = [0:n][0:k],
// hit-jacobi and hit-cholesky [0:n][0:n] (hit-jacobi's n counts the boundary, at least 3).
void require_runnable_shape(App app, const Shape& s, const std::string& text) {
  const std::string program = "hit-" + std::string(to_string(app));
  const auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::shape,
                fmt::format("--advise --app {}: --shape {}: {}", to_string(app), text, why));
  };
  if (s.rank() != 2) refuse(fmt::format("{} runs 2-D arrays, this one is {}-D", program, s.rank()));
  for (int axis = 0; axis < 2; ++axis) {
    if (s[axis].begin() != 0 || s[axis].stride() != 1) {
      refuse(fmt::format("{} runs arrays from 0 with unit steps, [0:n]; axis {} is {}", program,
                         axis, s.sig(axis).str()));
    }
  }
  const bool square = app == App::jacobi || app == App::cholesky;
  if (square && s.extent(0) != s.extent(1)) {
    refuse(fmt::format("{} runs square arrays, [0:n][0:n] (its --n); this one is {} x {}", program,
                       s.extent(0), s.extent(1)));
  }
  const index_t least = app == App::jacobi ? 3 : 1;
  if (s.extent(0) < least || s.extent(1) < least) {
    refuse(fmt::format("{} needs at least {} rows and columns", program, least));
  }
}

// Every process of this run makes every candidate's dry run, and each keeps, per planned process,
// the blocks of the layouts being priced (A, B and C for the products) and, for every candidate,
// its cost and the signature that finds duplicates. A floor of that, against the host.
// `candidates` 0: not enumerated yet (a floor of one, checked before the devices of every
// planned process are even parsed).
void require_room_for_dry_runs(App app, std::size_t candidates, int nprocs, MPI_Comm comm) {
  const double layouts = (app == App::cannon || app == App::summa) ? 3 : 1;
  const double per_process = layouts * double(sizeof(Shape) + sizeof(std::vector<Shape>)) +
                             double(std::max<std::size_t>(candidates, 1)) *
                                 double(sizeof(advisor::ProcessCost) + 2 * sizeof(Sig));
  require_host_memory(per_process * nprocs,
                      fmt::format("--advise for {} processes: its dry runs ({})", nprocs,
                                  candidates == 0 ? std::string("one candidate at least")
                                                  : fmt::format("{} candidates", candidates)),
                      comm);
}

// A network model must price every link class the planned processes have: one missing would
// rank first the layouts that happen not to use it (all the work on one process, say), an answer
// made by the gap in the model rather than by the machine.
void require_link_classes(const fpm::NetworkModel& network, const std::string& file,
                          const advisor::Machine& machine, int ranks_per_node) {
  std::vector<int> per_node(std::size_t(std::max(1, machine.nodes())), 0);
  for (int p = 0; p < machine.procs(); ++p) ++per_node.at(std::size_t(machine.node_of(p)));
  const bool shared = std::any_of(per_node.begin(), per_node.end(), [](int n) { return n > 1; });
  const auto missing = [&](fpm::LinkClass c, const std::string& why) {
    if (network.has(c)) return;
    throw Error(ErrorKind::model,
                fmt::format("--network {}: the model has no '{}' link class, and {}: measure it "
                            "with hit-fpm network{}",
                            file, fpm::to_string(c), why,
                            c == fpm::LinkClass::network ? " --nodes K" : ""));
  };
  if (machine.nodes() > 1) {
    missing(fpm::LinkClass::network,
            fmt::format(
                "the {} processes lie on {} nodes{}", machine.procs(), machine.nodes(),
                ranks_per_node > 0 ? fmt::format(" (--nodes {})", ranks_per_node) : std::string()));
  }
  if (shared) {
    missing(fpm::LinkClass::node, "processes of the plan share a node");
  }
}

// An empty ranking answers nothing: say why every candidate was refused (distinct reasons, the
// duplicates of a candidate aside).
void require_candidates(const advisor::Advice& advice, App app) {
  if (!advice.candidates.empty()) return;
  std::vector<std::string> reasons;
  for (const auto& j : advice.rejected) {
    if (std::find(reasons.begin(), reasons.end(), j.reason) == reasons.end()) {
      reasons.push_back(j.reason);
    }
  }
  std::string why = reasons.empty() ? std::string("no layout applies") : reasons.front();
  if (reasons.size() > 1) why += fmt::format(" (and {} other reasons)", reasons.size() - 1);
  throw Error(ErrorKind::invalid_argument,
              fmt::format("--advise --app {}: no layout could be priced, {} refused: {}",
                          to_string(app), advice.rejected.size(), why));
}

}  // namespace hit::tools
