// `array`: every process in one line (a 1-D topology).
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class ArrayTopology final : public TopologyPlugin {
 public:
  std::string name() const override { return "array"; }
  std::string description() const override { return "all P processes in one line: dims [P]"; }
  std::vector<ParamInfo> params() const override { return {}; }
  Topology make(int procs, const Spec& /*spec*/) const override {
    return Topology(name(), {procs}, procs);
  }
};

}  // namespace

void register_array_topology(TopologyRegistry& registry) {
  registry.add(std::make_shared<ArrayTopology>());
}

}  // namespace hit::detail
