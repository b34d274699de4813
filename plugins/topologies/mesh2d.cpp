// `mesh2d`: the most-square 2-D grid of all the processes.
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class Mesh2dTopology final : public TopologyPlugin {
 public:
  std::string name() const override { return "mesh2d"; }
  std::string description() const override {
    return "the most-square 2-D grid R x C = P with R >= C (6 -> 3x2, 7 -> 7x1)";
  }
  std::vector<ParamInfo> params() const override { return {}; }
  Topology make(int procs, const Spec& /*spec*/) const override {
    return Topology(name(), balanced_dims(procs, 2), procs);
  }
};

}  // namespace

void register_mesh2d_topology(TopologyRegistry& registry) {
  registry.add(std::make_shared<Mesh2dTopology>());
}

}  // namespace hit::detail
