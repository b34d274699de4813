// The target shares of the sparse layout plug-ins, and the one place that names the built-in ones.
#include "sparse/layout_support.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "layouts/layout_choice.hpp"

namespace hit::detail {

void register_builtin_sparse_layouts(SparseLayoutRegistry& registry) {
  register_rows_sparse_layout(registry);
  register_metis_sparse_layout(registry);
}

std::vector<ParamInfo> sparse_target_params() {
  return {ParamInfo::reals("w",
                           "weights, one per process: the shares of the rows (or of what `by` or "
                           "`vw` counts); 0 leaves a process without rows")
              .at_least(0)
              .named("weight")
              .range_in_words("a non-negative number"),
          ParamInfo::text("models",
                          "performance model files (hit-fpm build), one per process, whose unit "
                          "is one row: the shares are the sizes an FPM partitioner gives them"),
          ParamInfo::text("algorithm", "the FPM partitioner of models= (docs/fpm.md)", "geometric"),
          ParamInfo::choice("kind", "model interpolation",
                            {"piecewise", "akima", "constant", "pwl", "cpm"}, "piecewise"),
          ParamInfo::choice("weights",
                            "without w= or models=: equal shares, or shares in proportion to the "
                            "speed of each process's device (an emulated device's 1/slowdown, "
                            "others 1)",
                            {"equal", "binding"}, "equal")};
}

Error sparse_layout_error(const SparseLayoutRequest& request, ErrorKind kind,
                          const std::string& why) {
  return Error(kind, "sparse layout '" + request.spec.str() + "': " + why);
}

namespace {

// The weights of models=: each process's share of `units` by the named partitioner.
std::vector<double> model_weights(const SparseLayoutRequest& request, index_t units,
                                  std::vector<fpm::Model>& models) {
  const auto procs = static_cast<std::size_t>(request.topology.procs());
  const std::vector<std::string> files = request.spec.get_strings("models");
  if (files.size() != procs) {
    throw sparse_layout_error(request, ErrorKind::plugin,
                              std::to_string(files.size()) + " model files for " +
                                  std::to_string(procs) + " processes (give one per process)");
  }
  std::exception_ptr failure;
  try {
    const fpm::ModelKind kind = fpm::parse_model_kind(request.spec.get_string("kind", "piecewise"));
    for (const std::string& f : files) models.push_back(fpm::load_model(f, kind));
  } catch (const Error& e) {
    failure = std::make_exception_ptr(sparse_layout_error(request, e.kind(), e.what()));
  }
  agree(request.comm, failure);  // a file only some processes can read fails on all
  std::vector<double> w(procs, 1.0);
  try {
    const std::string algorithm = request.spec.get_string("algorithm", "geometric");
    fpm::check_partitioner(algorithm);
    if (units == 0) return w;  // nothing to share: any shares will do
    const fpm::Distribution dist = fpm::partition(algorithm, models, units);
    for (std::size_t p = 0; p < procs; ++p) w[p] = static_cast<double>(dist.parts[p].d);
  } catch (const Error& e) {
    throw sparse_layout_error(request, e.kind(), e.what());
  }
  return w;
}

}  // namespace

SparseTargets sparse_targets(const SparseLayoutRequest& request, index_t units) {
  const Spec& spec = request.spec;
  const auto procs = static_cast<std::size_t>(request.topology.procs());
  const bool by_binding = spec.get_string("weights", "equal") == "binding";
  const int sources = (spec.has("w") ? 1 : 0) + (spec.has("models") ? 1 : 0) + (by_binding ? 1 : 0);
  if (sources > 1) {
    throw sparse_layout_error(request, ErrorKind::plugin,
                              "give one of w=, models= and weights=binding, not several");
  }
  SparseTargets out;
  out.weights.assign(procs, 1.0);
  if (spec.has("w")) {
    out.weights = spec.get_doubles("w");  // each >= 0 (checked by the declaration)
    if (out.weights.size() != procs) {
      throw sparse_layout_error(request, ErrorKind::plugin,
                                "w has " + std::to_string(out.weights.size()) +
                                    " weights, expected " + std::to_string(procs) +
                                    " (one per process)");
    }
  } else if (spec.has("models")) {
    out.weights = model_weights(request, units, out.models);
  } else if (by_binding) {
    for (std::size_t p = 0; p < procs && p < request.devices.size(); ++p) {
      out.weights[p] = binding_weight(request.devices[p]);
    }
  }
  for (std::size_t p = static_cast<std::size_t>(request.topology.grid_size()); p < procs; ++p) {
    out.weights[p] = 0;  // outside the topology's grid: inactive, as for dense layouts
  }
  if (std::none_of(out.weights.begin(), out.weights.end(), [](double x) { return x > 0; })) {
    throw sparse_layout_error(request, ErrorKind::plugin,
                              "every weight is 0: some process must get rows");
  }
  return out;
}

SymmetricGraph symmetric_graph(std::span<const index_t> names, std::span<const index_t> lengths,
                               std::span<const index_t> cols, index_t n,
                               const SparseLayoutRequest& request) {
  const auto nv = static_cast<std::size_t>(n);
  std::vector<bool> seen(nv, false);
  for (const index_t r : names) {
    if (seen[static_cast<std::size_t>(r)]) {
      throw sparse_layout_error(request, ErrorKind::invalid_argument,
                                "row " + std::to_string(r) + " is held by two processes");
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  // Each entry counted at both ends (repeats included), then placed, then each list sorted and
  // its repeats dropped while it is moved down to its final place.
  std::vector<index_t> first(nv + 1, 0);
  const auto each_edge = [&](auto&& fn) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      for (index_t e = 0; e < lengths[i]; ++e, ++k) {
        if (cols[k] != names[i]) fn(names[i], cols[k]);
      }
    }
  };
  each_edge([&](index_t r, index_t c) {
    ++first[static_cast<std::size_t>(r) + 1];
    ++first[static_cast<std::size_t>(c) + 1];
  });
  for (std::size_t v = 0; v < nv; ++v) first[v + 1] += first[v];
  std::vector<index_t> fill(first.begin(), first.end() - 1);
  SymmetricGraph g;
  g.adjncy.resize(static_cast<std::size_t>(first.back()));
  each_edge([&](index_t r, index_t c) {
    g.adjncy[static_cast<std::size_t>(fill[static_cast<std::size_t>(r)]++)] = c;
    g.adjncy[static_cast<std::size_t>(fill[static_cast<std::size_t>(c)]++)] = r;
  });
  g.xadj.assign(nv + 1, 0);
  index_t kept = 0;
  for (std::size_t v = 0; v < nv; ++v) {
    const auto b = g.adjncy.begin() + first[v];
    const auto e = g.adjncy.begin() + first[v + 1];
    std::sort(b, e);
    const auto end = std::unique(b, e);
    for (auto it = b; it != end; ++it) g.adjncy[static_cast<std::size_t>(kept++)] = *it;
    g.xadj[v + 1] = kept;
  }
  g.adjncy.resize(static_cast<std::size_t>(kept));
  return g;
}

std::vector<double> predicted_times(const SparseTargets& targets,
                                    const std::vector<std::int32_t>& owners) {
  if (targets.models.empty()) return {};
  std::vector<index_t> rows(targets.models.size(), 0);
  for (const std::int32_t p : owners) ++rows[static_cast<std::size_t>(p)];
  std::vector<double> t(rows.size(), 0.0);
  for (std::size_t p = 0; p < rows.size(); ++p) {
    if (rows[p] > 0) t[p] = targets.models[p].time(static_cast<double>(rows[p]));
  }
  return t;
}

}  // namespace hit::detail
