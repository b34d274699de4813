#include "hit/advisor/candidates.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "hit/sparse/sparse_layout.hpp"
#include "hit/topology.hpp"

namespace hit::advisor {
namespace {

std::string weights_text(const std::vector<double>& w) {
  std::vector<std::string> parts;
  parts.reserve(w.size());
  for (double x : w) parts.push_back(fmt::format("{:.4g}", x));
  return fmt::format("{}", fmt::join(parts, ","));
}

bool all_equal(const std::vector<double>& w) {
  return std::all_of(w.begin(), w.end(), [&](double x) { return x == w.front(); });
}

// The specs the advisor tries for the dense layout plug-in `name` (docs/advisor.md).
std::vector<std::string> dense_layout_specs(const std::string& name, App app,
                                            const Machine& machine, const Topology& topo,
                                            const CandidateOptions& options) {
  const std::vector<double> speeds =
      relative_speeds(machine, kernel_of(app), 1e9, options.share_bytes);
  const bool even = all_equal(speeds);
  // Equal speeds: one weight per coordinate (the layout is then blocks, and says so).
  const std::string w = even ? weights_text(std::vector<double>(std::size_t(topo.dim(0)), 1.0))
                             : weights_text(speeds);
  // The plug-ins that weigh by the binding by default get weights only when models say more.
  std::string own = options.model_files.empty() ? std::string() : ",w=" + w;
  if (name == "weighted") return {"weighted:w=" + w};
  if (name == "dimBlocks")
    return even ? std::vector<std::string>{"dimBlocks"}
                : std::vector<std::string>{"dimBlocks", "dimBlocks:w=" + w};
  if (name == "columns2d") return {"columns2d" + (own.empty() ? "" : ":" + own.substr(1))};
  if (name == "hierarchical") {
    // A plan names its nodes: one node of every process when the machine has no others.
    return {fmt::format("hierarchical:ranks_per_node={}",
                        machine.ranks_per_node() > 0 ? machine.ranks_per_node() : machine.procs())};
  }
  if (name == "blocksLB") {
    std::vector<std::string> out;
    for (int f = 1; f <= 9; ++f) out.push_back(fmt::format("blocksLB:factor=0.{}", f));
    return out;
  }
  if (name == "blockCyclic") return {"blockCyclic:b=64", "blockCyclic:b=128", "blockCyclic:b=256"};
  if (name == "heteroBlockCyclic") {
    // Its nodes are the run's: a plan must name them as the run will have them.
    if (machine.ranks_per_node() > 0) {
      own += fmt::format(",ranks_per_node={}", machine.ranks_per_node());
    }
    std::vector<std::string> out{"heteroBlockCyclic:B=256,b=64" + own,
                                 "heteroBlockCyclic:B=512,b=128" + own};
    // With hosts and accelerators both, the host share is tuned by prediction: every multiple
    // of b (the balance formula's value is the first spec's).
    const auto& d = machine.devices();
    const bool hosts = std::any_of(
        d.begin(), d.end(), [](const DeviceBinding& b) { return b.kind == DeviceKind::cpu; });
    const bool accelerators = std::any_of(
        d.begin(), d.end(), [](const DeviceBinding& b) { return b.kind != DeviceKind::cpu; });
    if (hosts && accelerators) {
      for (int bh = 0; bh <= 256; bh += 64) {
        out.push_back(fmt::format("heteroBlockCyclic:B=256,b=64,bh={}{}", bh, own));
      }
    }
    return out;
  }
  if (name == "fpm" && !options.model_files.empty()) {
    return {"fpm:models=" + fmt::format("{}", fmt::join(options.model_files, ","))};
  }
  return {name};
}

// A text equal for equal block lists: two specs that give every process the same blocks are one
// candidate, whatever topology they were laid on (the applications' messages follow the blocks).
std::string blocks_signature(const Layout& l) {
  std::string s;
  for (int p = 0; p < l.procs(); ++p) {
    s += '|';
    for (const Shape& b : l.blocks(p)) s += b.str();
  }
  return s;
}

// The processes' compute and communication added up: what a run costs the machine's cores and
// links, where the makespan counts only the slowest process of each step.
double total_cost(const Prediction& p) {
  double sum = 0;
  for (const ProcessCost& c : p.procs) sum += c.compute_s + c.comm_s;
  return sum;
}

void rank_candidates(Advice& advice) {
  auto& list = advice.candidates;
  // Those that fit first, then by makespan; exact ties keep the enumeration's order (the simpler
  // layout, `blocks` first).
  std::stable_sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
    if (a.prediction.fits != b.prediction.fits) return a.prediction.fits;
    return a.prediction.predicted_s < b.prediction.predicted_s;
  });
  // Makespans within tie_tolerance of a run's first are a tie, which the smaller total cost
  // breaks: the model is not that exact, and what it leaves out (processes that share cores,
  // links and memory) grows with the work and messages of every process, not only the slowest.
  for (std::size_t first = 0; first < list.size();) {
    const Prediction& lead = list[first].prediction;
    std::size_t end = first + 1;
    while (end < list.size() && list[end].prediction.fits == lead.fits &&
           list[end].prediction.predicted_s <= lead.predicted_s * (1 + tie_tolerance)) {
      ++end;
    }
    std::stable_sort(list.begin() + static_cast<std::ptrdiff_t>(first),
                     list.begin() + static_cast<std::ptrdiff_t>(end),
                     [](const Candidate& a, const Candidate& b) {
                       const double x = total_cost(a.prediction), y = total_cost(b.prediction);
                       return x < y && y - x > 1e-9 * y;
                     });
    first = end;
  }
}

}  // namespace

std::vector<double> relative_speeds(const Machine& machine, Kernel kernel, double flops,
                                    double share_bytes) {
  std::vector<double> speed(static_cast<std::size_t>(machine.procs()));
  const double share = flops / machine.procs();
  const auto bytes = static_cast<std::uint64_t>(std::max(0.0, share_bytes));
  for (int p = 0; p < machine.procs(); ++p) {
    const double t = machine.compute_seconds(p, kernel, share, bytes);
    speed[std::size_t(p)] = t > 0 ? 1.0 / t : 1.0;
  }
  const double top = *std::max_element(speed.begin(), speed.end());
  for (double& s : speed) s /= top;
  return speed;
}

std::vector<CandidateSpec> dense_candidates(Environment& env, App app, const Machine& machine,
                                            const CandidateOptions& options) {
  if (app == App::cg) {
    throw Error(ErrorKind::invalid_argument, "cg lays out a sparse matrix: use its candidates");
  }
  // The topologies that fit, each grid once (a grid with trailing axes of one process is the
  // line before them: mesh2d of 2 is 2x1).
  std::vector<std::pair<std::string, Topology>> topologies;
  std::set<std::vector<int>> grids;
  for (const auto* topo_plugin : env.extension<TopologyRegistry>().all()) {
    // hit-cannon always takes the square topology.
    if (app == App::cannon && topo_plugin->name() != "square") continue;
    Topology topo;
    try {
      topo = topology(topo_plugin->name(), machine.procs());
    } catch (const Error&) {
      continue;  // needs parameters, or does not fit this count
    }
    if (topo.axes() > 2) continue;
    std::vector<int> dims = topo.dims();
    while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
    if (grids.insert(dims).second) topologies.emplace_back(topo_plugin->name(), topo);
  }
  // Layouts outer, topologies inner, `blocks` first: a tie keeps this order (the simplest layout
  // first), and a spec that gives the same blocks as an earlier one is named after it.
  std::vector<std::string> names{"blocks"};
  for (const auto* plugin : env.extension<LayoutRegistry>().all()) {
    if (plugin->name() != "blocks") names.push_back(plugin->name());
  }
  std::vector<CandidateSpec> out;
  for (const std::string& name : names) {
    for (const auto& [topo_name, topo] : topologies) {
      for (const std::string& spec : dense_layout_specs(name, app, machine, topo, options)) {
        out.push_back({spec, topo_name});
      }
    }
  }
  return out;
}

std::vector<CandidateSpec> sparse_candidates(Environment& env, const Machine& machine,
                                             const CandidateOptions& options) {
  const std::vector<double> speeds =
      relative_speeds(machine, Kernel::spmv, 1e9, options.share_bytes);
  const std::string w = weights_text(speeds);
  const bool even = all_equal(speeds);
  std::vector<CandidateSpec> out;
  for (const auto* plugin : env.extension<SparseLayoutRegistry>().all()) {
    const std::string name = plugin->name();
    std::vector<std::string> specs{name};
    if (name == "rows") {
      specs.push_back("rows:by=nonzeros");
      if (!even) {
        specs.push_back("rows:by=nonzeros,w=" + w);
        // The speeds are taken at an even share, where a device's per-row time is not the one
        // at the share they give it (launches weigh more on a small share, a share that fits a
        // cache runs faster): the weights raised to powers around one let the prediction find
        // where the balance lies, as the blocksLB factors do for the dense layouts.
        for (double power : sparse_weight_powers) {
          std::vector<double> skewed = speeds;
          for (double& x : skewed) x = std::pow(x, power);
          specs.push_back("rows:by=nonzeros,w=" + weights_text(skewed));
        }
      }
    } else if (name == "metis" && !even) {
      specs.push_back("metis:w=" + w);
      if (!options.model_files.empty()) {
        specs.push_back("metis:models=" + fmt::format("{}", fmt::join(options.model_files, ",")));
      }
    }
    for (std::string& s : specs) out.push_back({std::move(s), "array"});
  }
  return out;
}

namespace {

// The prediction of a candidate whose layout of problem.shape is built already (`main`): a
// product reuses it for A and B when their shapes are the same.
Prediction predict_with(const DenseProblem& problem, const Machine& machine,
                        const CandidateSpec& spec, const Layout& main) {
  const Topology& topo = main.topology();
  const LayoutOptions with{.devices = machine.devices()};
  const Shape& s = problem.shape;
  if (problem.app == App::cannon || problem.app == App::summa) {
    if (s.rank() != 2) {
      throw Error(ErrorKind::shape,
                  fmt::format("{} multiplies matrices: the shape {} is not 2-D (C, n×k)",
                              to_string(problem.app), s.str()));
    }
    const index_t n = s.extent(0), k = s.extent(1);
    const index_t m = problem.inner > 0 ? problem.inner : n;
    const auto build = [&](const Shape& shape) {
      return shape == s ? main : layout(spec.layout, topo, shape, with);
    };
    const Layout a = build(Shape::extents({n, m}));
    const Layout b = build(Shape::extents({m, k}));
    return problem.app == App::cannon ? predict_cannon(a, b, main, machine, problem.run)
                                      : predict_summa(a, b, main, machine, problem.run);
  }
  if (problem.app == App::jacobi) return predict_jacobi(main, machine, problem.run);
  return predict_cholesky(main, machine, problem.run);
}

}  // namespace

Prediction predict_dense(const DenseProblem& problem, const Machine& machine,
                         const CandidateSpec& spec) {
  const Topology topo = topology(spec.topology, machine.procs());
  const Layout main = layout(spec.layout, topo, problem.shape, {.devices = machine.devices()});
  return predict_with(problem, machine, spec, main);
}

Advice advise_dense(const DenseProblem& problem, const Machine& machine,
                    const std::vector<CandidateSpec>& specs) {
  Advice advice;
  std::map<std::string, std::string> seen;  // blocks -> the spec that gave them first
  for (const CandidateSpec& spec : specs) {
    try {
      // The same blocks under another spec are one candidate: the first spec names it.
      const Topology topo = topology(spec.topology, machine.procs());
      const Layout l = layout(spec.layout, topo, problem.shape, {.devices = machine.devices()});
      const auto [first, fresh] = seen.try_emplace(blocks_signature(l), spec.layout);
      if (!fresh) {
        advice.rejected.push_back({spec, "the same blocks as " + first->second});
        continue;
      }
      advice.candidates.push_back({spec, predict_with(problem, machine, spec, l)});
    } catch (const Error& e) {
      advice.rejected.push_back({spec, e.what()});
    }
  }
  rank_candidates(advice);
  return advice;
}

Advice advise_sparse(const CsrPattern& mine, const Machine& machine, const RunShape& run,
                     const std::vector<CandidateSpec>& specs) {
  Advice advice;
  std::map<std::vector<std::int32_t>, std::string> seen;
  for (const CandidateSpec& spec : specs) {
    try {
      const Topology topo = topology(spec.topology, machine.procs());
      const SparseLayout l = sparse_layout(spec.layout, topo, mine, {.devices = machine.devices()});
      const std::vector<std::int32_t> owners(l.owners().begin(), l.owners().end());
      const auto [first, fresh] = seen.try_emplace(owners, spec.layout);
      if (!fresh) {
        advice.rejected.push_back({spec, "the same rows as " + first->second});
        continue;
      }
      const auto halo = sparse_halo_traffic(l, mine, Environment::current().comm());
      advice.candidates.push_back({spec, predict_cg(l, halo, machine, run)});
    } catch (const Error& e) {
      advice.rejected.push_back({spec, e.what()});
    }
  }
  rank_candidates(advice);
  return advice;
}

}  // namespace hit::advisor
