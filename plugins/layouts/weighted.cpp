// `weighted:w=...,axis=a`: shape axis a split over topology axis a in proportion to explicit
// weights; the other distributed axes split as `blocks`.
#include <algorithm>
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class WeightedLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "weighted"; }
  std::string description() const override {
    return "shape axis `axis` split over topology axis `axis` in proportion to the weights w "
           "(rounded to within one element of the exact share); other axes as blocks";
  }
  std::vector<ParamInfo> params() const override {
    return {ParamInfo::reals("w",
                             "weights: one per coordinate of topology axis `axis`, or one per "
                             "process (a coordinate then weighs the smallest weight of its "
                             "processes)")
                .above(0)
                .named("weight")
                .required("the weights w (e.g. w=1,2,1)"),
            ParamInfo::integer("axis", "the shape and topology axis to split", "0").at_least(0)};
  }
  // The machine's speeds (one weight per coordinate when they are equal).
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    return {Spec(name()).with("w", c.weights())};
  }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    const Topology& topo = request.topology;
    const std::string spec = request.spec.str();
    const int axis = index_param(request, "axis", 0, topo.axes(), "an axis of the topology");
    const std::vector<double> w = request.spec.get_doubles("w");  // given, each > 0
    const auto coords = static_cast<std::size_t>(topo.dim(axis));
    std::vector<double> per_coord;
    if (w.size() == coords) {
      per_coord = w;
    } else if (w.size() == static_cast<std::size_t>(topo.grid_size()) ||
               w.size() == static_cast<std::size_t>(topo.procs())) {
      // The processes of one slice share its part evenly along the other axes, so the slowest of
      // them (the smallest weight) sets the pace of the whole slice.
      per_coord.assign(coords, 0.0);
      for (int p = 0; p < topo.grid_size(); ++p) {
        auto& x = per_coord[static_cast<std::size_t>(topo.coords(p)[axis])];
        x = x == 0.0 ? w[static_cast<std::size_t>(p)] : std::min(x, w[static_cast<std::size_t>(p)]);
      }
    } else {
      std::string counts = std::to_string(coords);
      counts += " (one per coordinate of topology axis " + std::to_string(axis) + ") or " +
                std::to_string(topo.grid_size());
      if (topo.procs() != topo.grid_size()) counts += " or " + std::to_string(topo.procs());
      throw Error(ErrorKind::plugin, "layout '" + spec + "': w has " + std::to_string(w.size()) +
                                         " weights, expected " + counts + " (one per process)");
    }
    return layout_from_weights(request, axis, per_coord);
  }
};

}  // namespace

void register_weighted_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<WeightedLayout>());
}

}  // namespace hit::detail
