// `reverseBlocks`: the blocks of the built-in `blocks` layout dealt in reverse order along each
// topology axis (coordinate c gets part P-1-c), or along the one axis given by `axis`.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/layout.hpp"

namespace {

class ReverseBlocks final : public hit::LayoutPlugin {
 public:
  std::string name() const override { return "reverseBlocks"; }
  std::string description() const override {
    return "blocks dealt in reverse order: coordinate c of P gets part P-1-c";
  }
  std::vector<hit::ParamInfo> params() const override {
    // Typed: the registry refuses a value that is not an integer >= 0 before make() runs.
    return {hit::ParamInfo::integer("axis", "reverse only this topology axis", "all").at_least(0)};
  }
  // Its candidates for the advisor: every axis reversed, and on a grid each axis alone.
  std::vector<hit::Spec> candidates(const hit::CandidateContext& context) const override {
    std::vector<hit::Spec> out{hit::Spec(name())};
    if (context.topology.axes() > 1) {
      for (int k = 0; k < context.topology.axes(); ++k)
        out.push_back(hit::Spec(name()).with("axis", k));
    }
    return out;
  }
  hit::Layout make(const hit::LayoutRequest& request) const override {
    hit::require_layout_axes(request);
    const hit::Topology& topo = request.topology;
    const auto only = request.spec.get_int("axis", -1);
    if (only >= topo.axes()) {  // the upper end depends on the topology: checked here
      throw hit::Error(hit::ErrorKind::plugin, "layout '" + request.spec.str() +
                                                   "': axis=" + std::to_string(only) +
                                                   " is not an axis of the topology (0 to " +
                                                   std::to_string(topo.axes() - 1) + ")");
    }
    std::vector<hit::AxisPieces> pieces;
    for (int k = 0; k < topo.axes(); ++k) {
      hit::AxisPieces axis = hit::block_pieces(request.shape[k], topo.dim(k));
      if (only < 0 || only == k) std::reverse(axis.begin(), axis.end());
      pieces.push_back(std::move(axis));
    }
    return hit::product_layout(request, pieces);
  }
};

}  // namespace

// The entry point hit::Environment looks for in every shared object on HIT_PLUGIN_PATH.
extern "C" void hit_plugin_register(hit::Environment& env) {
  env.extension<hit::LayoutRegistry>().add(std::make_shared<ReverseBlocks>());
}
