// hit::layout() by name: the registry of layout plug-ins, the run-time override of a labelled
// layout (--layout-<label>, HIT_LAYOUT_<LABEL>), the run's devices and nodes given to the plug-in,
// and the checks of what it returns.
#include <string>
#include <utility>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/program_trace.hpp"
#include "hit/layout.hpp"
#include "hit/topology/physical_topology.hpp"
#include "layouts/layout_choice.hpp"

namespace hit {

// ---- registry and the by-name entry point -----------------------------------------------------

LayoutRegistry::LayoutRegistry(Environment& /*env*/) : Registry<LayoutPlugin>("layout") {
  detail::register_builtin_layouts(*this);
}

namespace detail {

LayoutBinding layout_binding(Environment& env, const std::string& spec_text, int procs,
                             std::vector<DeviceBinding> given) {
  LayoutBinding out{std::move(given), {}};
  if (!out.devices.empty() && out.devices.size() != static_cast<std::size_t>(procs)) {
    throw Error(ErrorKind::device, "layout '" + spec_text + "': the devices bind " +
                                       std::to_string(out.devices.size()) +
                                       " processes, the topology has " + std::to_string(procs));
  }
  if (out.devices.empty() && procs <= env.size()) {
    // The run's own binding and nodes: a plug-in that balances by device then needs nothing
    // from the program. (Devices given, or a topology larger than the run, make a plan for
    // another run: its nodes are unknown.)
    const PhysicalTopology& physical = PhysicalTopology::of(env);
    out.devices = physical.bindings();
    out.devices.resize(static_cast<std::size_t>(procs));
    for (int p = 0; p < procs; ++p) {
      out.nodes.push_back(physical.ranks()[static_cast<std::size_t>(p)].node);
    }
  }
  return out;
}

}  // namespace detail

Setting layout_setting(const Environment& env, std::string_view label, std::string code) {
  std::string name = "layout of '" + std::string(label) + "'";
  // A dry run of the advisor lays every labelled array out by its candidate.
  if (ProgramTrace* trace = env.trace(); trace != nullptr) {
    trace->setting(std::string(label));
    if (trace->candidate()) {
      Setting s(*trace->candidate());
      s.code = std::move(code);
      s.source = ProgramTrace::source;
      s.name = std::move(name);
      return s;
    }
  }
  return env.config().resolve("layout-" + std::string(label), std::move(code), std::move(name));
}

Layout layout(const Spec& spec, const Topology& topo, const Shape& shape,
              const LayoutOptions& options) {
  Environment& env = Environment::current();
  const LayoutPlugin& plugin = env.extension<LayoutRegistry>().get(spec);
  if (topo.procs() < 1) {
    throw Error(ErrorKind::topology, "layout '" + spec.str() + "' needs a topology, got none");
  }
  if (shape.is_null()) {
    throw Error(ErrorKind::shape, "layout '" + spec.str() + "' needs a shape, got the null shape");
  }
  detail::LayoutBinding binding =
      detail::layout_binding(env, spec.str(), topo.procs(), options.devices);
  LayoutRequest request{topo, shape, spec, std::move(binding.devices), std::move(binding.nodes)};
  require_block_count(request, static_cast<double>(topo.procs()));
  Layout result = plugin.make(request);
  result.self_ = env.rank();
  result.devices_ = request.devices;
  // A plug-in may complete the spec it was given (heteroBlockCyclic names the host share it
  // chose) and give it as a value; one that gave text alone (an external plug-in) has it parsed.
  if (result.spec_value_.name().empty())
    result.spec_value_ = result.spec_ == spec.str() ? spec : Spec::parse(result.spec_);
  if (!(result.shape() == shape) || result.procs() != topo.procs()) {
    throw Error(ErrorKind::plugin, "layout plug-in '" + spec.name() + "' returned a layout of " +
                                       result.shape().str() + " over " +
                                       std::to_string(result.procs()) + " processes for " +
                                       shape.str() + " over " + std::to_string(topo.procs()));
  }
  return result;
}

Layout layout(const Setting& chosen, const Topology& topo, const Shape& shape,
              const LayoutOptions& options) {
  try {
    if (ProgramTrace* trace = Environment::current().trace()) {
      trace->array({chosen.name, shape.str(), topo.name(), topo.dims(), topo.procs()});
    }
    Layout result = layout(Spec::parse(chosen.value), topo, shape, options);
    if (chosen.overridden()) {
      result.requested_ = chosen.code;
      result.set_by_ = chosen.source;
    }
    return result;
  } catch (const Error& e) {
    if (!chosen.overridden()) throw;
    throw chosen.explain(e);
  }
}

}  // namespace hit
