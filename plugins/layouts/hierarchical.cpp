// `hierarchical:nodes=(SPEC),devices=(SPEC)[,w=...][,ranks_per_node=K]`: a layout of the shape
// over the nodes (real shared-memory nodes, or HIT_NODES' emulated ones), then, inside each node's
// part, a layout of that part over the node's processes. A process weighs its `w`, else its
// device's binding weight; a node weighs the sum of its processes' weights.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "builtin.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

class HierarchicalLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "hierarchical"; }
  std::string description() const override {
    return "a layout of the shape over the nodes (`nodes`, weights the sums of their devices'), "
           "then one of each node's part over its processes (`devices`); specs given as values "
           "are written in parentheses";
  }
  std::vector<ParamInfo> params() const override {
    return {
        ParamInfo::text("nodes",
                        "layout spec of the shape over the nodes, one block each; a layout that "
                        "takes weights w gets the nodes' sums of device weights unless it has its "
                        "own",
                        "columns2d"),
        ParamInfo::text("devices",
                        "layout spec of a node's part over the node's processes (their devices "
                        "known to it)",
                        "columns2d"),
        process_weights_param(
            "weights, one per process (not all 0): a node weighs the sum of its processes', and a "
            "device layout that takes weights w gets its processes' unless it has its own "
            "(default: the device binding: an emulated device weighs 1/slowdown, others 1)",
            true),
        ParamInfo::integer("ranks_per_node",
                           "processes per node (1 to the processes), in rank order (default: the "
                           "nodes of the run; needed when the layout plans for another run, e.g. "
                           "hit-layout --procs)")};
  }

  // A plan names its nodes: one node of every process when the machine has no others.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    return {Spec(name()).with("ranks_per_node",
                              c.ranks_per_node > 0 ? c.ranks_per_node : c.topology.procs())};
  }
  Layout make(const LayoutRequest& request) const override {
    const std::string spec = request.spec.str();
    const auto fail = [&](const std::string& why) {
      return Error(ErrorKind::plugin, fmt::format("layout '{}': {}", spec, why));
    };
    const Topology& topo = request.topology;
    const int q = topo.grid_size();
    const std::vector<int> node_of = nodes_of(request, q, fail);
    // The nodes in the order of their first process, and the processes of each.
    std::vector<std::vector<int>> members;
    std::map<int, std::size_t> index;
    for (int p = 0; p < q; ++p) {
      auto [it, fresh] = index.emplace(node_of[static_cast<std::size_t>(p)], members.size());
      if (fresh) members.emplace_back();
      members[it->second].push_back(p);
    }
    const auto r = static_cast<int>(members.size());
    const bool given = request.spec.has("w");
    std::vector<double> weight(static_cast<std::size_t>(q), 1.0);
    if (given) {
      weight = process_weights(request, static_cast<std::size_t>(q));
    } else {
      for (std::size_t p = 0; p < weight.size() && p < request.devices.size(); ++p) {
        weight[p] = binding_weight(request.devices[p]);
      }
    }
    std::vector<double> node_weights(members.size(), 0.0);
    for (std::size_t i = 0; i < members.size(); ++i) {
      for (const int p : members[i]) node_weights[i] += weight[static_cast<std::size_t>(p)];
    }

    Environment& env = Environment::current();
    LayoutRegistry& registry = env.extension<LayoutRegistry>();
    Spec node_spec = request.spec.get_spec("nodes", "columns2d");
    // find, not get: the plug-ins are asked what they take; their specs may still lack the
    // weights this layout gives them, and are checked whole when their layouts are made.
    const LayoutPlugin& node_plugin = registry.find(node_spec.name());
    const auto takes = [](const LayoutPlugin& plugin, const std::string& key) {
      const auto params = plugin.params();
      return std::any_of(params.begin(), params.end(),
                         [&](const ParamInfo& p) { return p.key == key; });
    };
    if (takes(node_plugin, "w") && !node_spec.has("w") && !node_spec.has("models")) {
      node_spec.set("w", std::span<const double>(node_weights));
    }
    // The node level sees one placeholder device per node (its weight is in w), so hit::layout
    // does not take the run's devices for it.
    const Layout node_layout = layout(node_spec, topology("array", r), request.shape,
                                      {.devices = std::vector<DeviceBinding>(members.size())});

    const Spec device_spec = request.spec.get_spec("devices", "columns2d");
    const bool pass_weights = given && takes(registry.find(device_spec.name()), "w") &&
                              !device_spec.has("w") && !device_spec.has("models");
    std::vector<std::vector<Shape>> blocks(static_cast<std::size_t>(topo.procs()));
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& part = node_layout.blocks(static_cast<int>(i));
      if (part.empty()) continue;  // a node without work: its processes are inactive
      if (part.size() > 1) {
        throw fail(fmt::format("the node layout '{}' gives node {} {} blocks (it must give one)",
                               node_layout.spec(), i, part.size()));
      }
      std::vector<DeviceBinding> devices;
      for (const int p : members[i]) {
        devices.push_back(static_cast<std::size_t>(p) < request.devices.size()
                              ? request.devices[static_cast<std::size_t>(p)]
                              : DeviceBinding{});
      }
      Spec inside_spec = device_spec;
      if (pass_weights) {
        std::vector<double> w;
        for (const int p : members[i]) w.push_back(weight[static_cast<std::size_t>(p)]);
        inside_spec.set("w", std::span<const double>(w));
      }
      const Layout inside =
          layout(inside_spec, topology("array", static_cast<int>(members[i].size())), part.front(),
                 {.devices = devices});
      for (std::size_t j = 0; j < members[i].size(); ++j) {
        blocks[static_cast<std::size_t>(members[i][j])] = inside.blocks(static_cast<int>(j));
      }
    }
    return Layout(topo, request.shape, request.spec, std::move(blocks));
  }

 private:
  template <class Fail>
  static std::vector<int> nodes_of(const LayoutRequest& request, int q, const Fail& fail) {
    std::optional<std::vector<int>> nodes = process_nodes(request, q);
    if (!nodes) {
      throw fail(
          "the nodes of the processes are unknown (a plan for another run: more processes "
          "than this one, or devices given): give ranks_per_node=K");
    }
    return *nodes;
  }
};

}  // namespace

void register_hierarchical_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<HierarchicalLayout>());
}

}  // namespace hit::detail
