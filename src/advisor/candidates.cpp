#include "hit/advisor/candidates.hpp"
#include "hit/advisor/program_advice.hpp"

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

// What the plug-ins derive their candidates from, for processes laid on `topo`.
CandidateContext candidate_context(const Machine& machine, const Topology& topo, Kernel kernel,
                                   const CandidateOptions& options) {
  CandidateContext c;
  c.topology = topo;
  c.speeds = relative_speeds(machine, kernel, 1e9, options.share_bytes);
  c.model_files = options.model_files;
  c.ranks_per_node = machine.ranks_per_node();
  const auto& d = machine.devices();
  c.hosts = std::any_of(d.begin(), d.end(),
                        [](const DeviceBinding& b) { return b.kind == DeviceKind::cpu; });
  c.accelerators = std::any_of(d.begin(), d.end(),
                               [](const DeviceBinding& b) { return b.kind != DeviceKind::cpu; });
  return c;
}

// The processes' compute and communication added up: what a run costs the machine's cores and
// links, where the makespan counts only the slowest process of each step.
double total_cost(const Prediction& p) {
  double sum = 0;
  for (const ProcessCost& c : p.procs) sum += c.compute_s + c.comm_s;
  return sum;
}

}  // namespace

void rank(Advice& advice) {
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

std::string blocks_signature(const Layout& l) {
  std::string s;
  for (int p = 0; p < l.procs(); ++p) {
    s += '|';
    for (const Shape& b : l.blocks(p)) s += b.str();
  }
  return s;
}

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

namespace {

// Every layout plug-in's candidates on each of `topologies`: layouts outer, topologies inner,
// `blocks` first. A tie keeps this order (the simplest layout first), and a spec that gives the
// same blocks as an earlier one is named after it.
std::vector<CandidateSpec> layout_candidates(
    Environment& env, const Machine& machine, Kernel kernel,
    const std::vector<std::pair<std::string, Topology>>& topologies,
    const CandidateOptions& options) {
  const LayoutRegistry& registry = env.extension<LayoutRegistry>();
  std::vector<const LayoutPlugin*> plugins{&registry.get(Spec("blocks"))};
  for (const LayoutPlugin* plugin : registry.all()) {
    if (plugin->name() != "blocks") plugins.push_back(plugin);
  }
  std::vector<CandidateSpec> out;
  for (const LayoutPlugin* plugin : plugins) {
    for (const auto& [topo_name, topo] : topologies) {
      const CandidateContext context = candidate_context(machine, topo, kernel, options);
      for (const Spec& spec : plugin->candidates(context)) out.push_back({spec.str(), topo_name});
    }
  }
  return out;
}

}  // namespace

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
  return layout_candidates(env, machine, kernel_of(app), topologies, options);
}

std::vector<CandidateSpec> program_candidates(Environment& env, const Machine& machine,
                                              Kernel kernel, const Topology& topo,
                                              const CandidateOptions& options) {
  return layout_candidates(env, machine, kernel, {{topo.name(), topo}}, options);
}

std::vector<CandidateSpec> sparse_candidates(Environment& env, const Machine& machine,
                                             const CandidateOptions& options) {
  const CandidateContext context =
      candidate_context(machine, topology("array", machine.procs()), Kernel::spmv, options);
  std::vector<CandidateSpec> out;
  for (const auto* plugin : env.extension<SparseLayoutRegistry>().all()) {
    for (const Spec& spec : plugin->candidates(context)) out.push_back({spec.str(), "array"});
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
  rank(advice);
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
  rank(advice);
  return advice;
}

}  // namespace hit::advisor
