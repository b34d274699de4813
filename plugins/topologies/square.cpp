// `square`: an S x S grid; the process count must be a perfect square (Cannon's algorithm).
#include <memory>
#include <string>

#include "builtin.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

int floor_sqrt(int n) {
  int s = 0;
  while (static_cast<long long>(s + 1) * (s + 1) <= n) ++s;
  return s;
}

class SquareTopology final : public TopologyPlugin {
 public:
  std::string name() const override { return "square"; }
  std::string description() const override {
    return "an S x S grid; P must be a perfect square (P = S*S)";
  }
  std::vector<ParamInfo> params() const override { return {}; }
  Topology make(int procs, const Spec& /*spec*/) const override {
    const int s = floor_sqrt(procs);
    if (s * s != procs) {
      throw Error(ErrorKind::topology,
                  "topology 'square' needs a square number of processes, got " +
                      std::to_string(procs) + " (nearest squares: " + std::to_string(s * s) +
                      " and " + std::to_string((s + 1) * (s + 1)) + ")");
    }
    return Topology(name(), {s, s}, procs);
  }
};

}  // namespace

void register_square_topology(TopologyRegistry& registry) {
  registry.add(std::make_shared<SquareTopology>());
}

}  // namespace hit::detail
