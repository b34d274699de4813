// hit::layout() by name: the registry of layout plug-ins, the run-time override of a labelled
// layout (--layout-<label>, HIT_LAYOUT_<LABEL>), the run's devices and nodes given to the plug-in,
// and the checks of what it returns.
#include <string>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"
#include "hit/physical_topology.hpp"

namespace hit {

// ---- registry and the by-name entry point -----------------------------------------------------

LayoutRegistry::LayoutRegistry(Environment& /*env*/) : Registry<LayoutPlugin>("layout") {
  detail::register_builtin_layouts(*this);
}

Layout layout(std::string_view spec_text, const Topology& topo, const Shape& shape,
              const LayoutOptions& options) {
  Environment& env = Environment::current();
  const std::string_view label = options.label;
  std::vector<DeviceBinding> devices = options.devices;
  std::string chosen(spec_text);
  std::string origin;
  if (!label.empty()) {
    const std::string key = "layout-" + std::string(label);
    if (auto value = env.config().get(key)) {
      chosen = *value;
      origin = "layout of '" + std::string(label) + "' set to '" + chosen + "' by --" + key +
               " or " + Config::env_name(key);
    }
  }
  try {
    const Spec spec = Spec::parse(chosen);
    const LayoutPlugin& plugin = env.extension<LayoutRegistry>().get(spec);
    if (topo.procs() < 1) {
      throw Error(ErrorKind::topology, "layout '" + spec.str() + "' needs a topology, got none");
    }
    if (shape.is_null()) {
      throw Error(ErrorKind::shape,
                  "layout '" + spec.str() + "' needs a shape, got the null shape");
    }
    if (!devices.empty() && devices.size() != static_cast<std::size_t>(topo.procs())) {
      throw Error(ErrorKind::device, "layout '" + spec.str() + "': the devices bind " +
                                         std::to_string(devices.size()) +
                                         " processes, the topology has " +
                                         std::to_string(topo.procs()));
    }
    std::vector<int> nodes;
    if (devices.empty() && topo.procs() <= env.size()) {
      // The run's own binding and nodes: a plug-in that balances by device then needs nothing
      // from the program. (Devices given, or a topology larger than the run, make a plan for
      // another run: its nodes are unknown.)
      const PhysicalTopology& physical = PhysicalTopology::of(env);
      devices = physical.bindings();
      devices.resize(static_cast<std::size_t>(topo.procs()));
      for (int p = 0; p < topo.procs(); ++p) {
        nodes.push_back(physical.ranks()[static_cast<std::size_t>(p)].node);
      }
    }
    LayoutRequest request{topo, shape, spec, std::move(devices), std::move(nodes)};
    require_block_count(request, static_cast<double>(topo.procs()));
    Layout result = plugin.make(request);
    result.self_ = env.rank();
    result.devices_ = request.devices;
    if (!(result.shape() == shape) || result.procs() != topo.procs()) {
      throw Error(ErrorKind::plugin, "layout plug-in '" + spec.name() + "' returned a layout of " +
                                         result.shape().str() + " over " +
                                         std::to_string(result.procs()) + " processes for " +
                                         shape.str() + " over " + std::to_string(topo.procs()));
    }
    return result;
  } catch (const Error& e) {
    if (origin.empty()) throw;
    throw Error(e.kind(), origin + ": " + e.what());
  }
}

}  // namespace hit
