// `fpm:models=a.csv,b.csv,...,axis=a,algorithm=geometric,kind=piecewise`: shape axis a split over
// topology axis a by a model-based partitioner (hit::fpm), from one performance model per
// coordinate of that axis; every process reports the time its models predict for its part.
// A model's unit is one index of shape axis a (a row for axis 0), with the other axes as the
// process will hold them.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "builtin.hpp"
#include "hit/core/error.hpp"
#include "hit/fpm/model_file.hpp"
#include "hit/fpm/partition.hpp"
#include "hit/layout.hpp"

namespace hit::detail {
namespace {

class FpmLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "fpm"; }
  std::string description() const override {
    return "shape axis `axis` split over topology axis `axis` by a partitioner of functional "
           "performance models (one model file per coordinate of that axis); reports every "
           "process's predicted time";
  }
  std::vector<ParamInfo> params() const override {
    return {ParamInfo::text("models",
                            "model files (hit-fpm build), one per coordinate of topology axis "
                            "`axis`; default: the \"model\" entry of every process's "
                            "DeviceBinding params (set in code: --devices has no such parameter)"),
            ParamInfo::integer("axis", "the shape and topology axis to split", "0").at_least(0),
            ParamInfo::text("algorithm",
                            "fpm partitioner spec: even, proportional, geometric, numerical, exact "
                            "or dp",
                            "geometric"),
            model_kind_param()};
  }

  // Needs models: without them, its name alone (refused, with the reason, by the advisor).
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    if (c.model_files.empty()) return {Spec(name())};
    return {Spec(name()).with("models", c.model_files)};
  }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    const Topology& topo = request.topology;
    const std::string spec = request.spec.str();
    const auto axis_value = request.spec.get_int("axis", 0);
    if (axis_value < 0 || axis_value >= topo.axes()) {
      throw Error(ErrorKind::plugin,
                  fmt::format("layout '{}': axis={} is not an axis of the topology (0 to {})", spec,
                              axis_value, topo.axes() - 1));
    }
    const int axis = static_cast<int>(axis_value);
    const auto coords = static_cast<std::size_t>(topo.dim(axis));
    const std::vector<std::string> files = model_files(request, axis, coords, spec);
    try {
      const fpm::ModelKind kind =
          fpm::parse_model_kind(request.spec.get_string("kind", "piecewise"));
      std::vector<fpm::Model> models;
      for (const std::string& f : files) models.push_back(fpm::load_model(f, kind));
      const fpm::Distribution dist = fpm::partition(
          request.spec.get_string("algorithm", "geometric"), models, request.shape.extent(axis));
      std::vector<index_t> parts;
      std::vector<double> predicted;
      for (const fpm::Part& p : dist.parts) {
        parts.push_back(p.d);
        predicted.push_back(p.t);
      }
      return layout_from_parts(request, axis, parts, predicted);
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("layout '{}': {}", spec, e.what()));
    }
  }

 private:
  static std::vector<std::string> model_files(const LayoutRequest& request, int axis,
                                              std::size_t coords, const std::string& spec) {
    const Topology& topo = request.topology;
    if (request.spec.has("models")) {
      std::vector<std::string> files = request.spec.get_strings("models");
      if (files.size() != coords) {
        throw Error(ErrorKind::plugin,
                    fmt::format("layout '{}': {} model files for the {} coordinates of topology "
                                "axis {} (give one per coordinate)",
                                spec, files.size(), coords, axis));
      }
      return files;
    }
    // From the devices: only when each coordinate of the axis is one process (a 1-D grid), since
    // the processes of a slice would otherwise have to share one model.
    const bool from_devices =
        !request.devices.empty() && static_cast<std::size_t>(topo.grid_size()) == coords;
    std::vector<std::string> files(coords);
    for (int p = 0; from_devices && p < topo.grid_size(); ++p) {
      const auto& params = request.devices[static_cast<std::size_t>(p)].params;
      auto it = params.find("model");
      if (it == params.end()) {
        files.clear();
        break;
      }
      files[static_cast<std::size_t>(topo.coords(p)[axis])] = it->second;
    }
    if (!from_devices || files.empty()) {
      throw Error(ErrorKind::plugin,
                  fmt::format("layout '{}' needs models=FILE,... (one model file per coordinate "
                              "of topology axis {}, e.g. from hit-fpm build), or, on a 1-D "
                              "topology, a \"model\" entry in the params of every process's "
                              "DeviceBinding, which only code can set",
                              spec, axis));
    }
    return files;
  }
};

}  // namespace

void register_fpm_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<FpmLayout>());
}

}  // namespace hit::detail
