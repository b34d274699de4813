// `blockCyclic:b=B`: blocks of B consecutive positions dealt round-robin along every axis the
// topology distributes; a process holds several blocks.
#include <algorithm>
#include <cmath>
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class BlockCyclicLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "blockCyclic"; }
  std::string description() const override {
    return "blocks of b consecutive positions dealt round-robin over each topology axis "
           "(coordinate c of P gets blocks c, c+P, ...); several blocks per process";
  }
  std::vector<ParamInfo> params() const override {
    return {
        ParamInfo::integers("b", "block size: one value for every axis, or one per topology axis")
            .at_least(1)
            .named("block size")
            .required("the block size b (e.g. blockCyclic:b=4)")};
  }
  std::vector<Spec> candidates(const CandidateContext& /*c*/) const override {
    return {Spec(name()).with("b", 64), Spec(name()).with("b", 128), Spec(name()).with("b", 256)};
  }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    const Topology& topo = request.topology;
    const std::string spec = request.spec.str();
    const std::vector<std::int64_t> sizes = request.spec.get_ints("b");  // given, each >= 1
    if (sizes.size() != 1 && sizes.size() != static_cast<std::size_t>(topo.axes())) {
      throw Error(ErrorKind::plugin, "layout '" + spec + "': b has " +
                                         std::to_string(sizes.size()) +
                                         " values; give 1 or one per topology axis (" +
                                         std::to_string(topo.axes()) + ")");
    }
    // Counted before the pieces are made: b=1 over 2e8 elements would not fit in memory.
    double blocks = 1;
    for (int k = 0; k < topo.axes(); ++k) {
      const index_t b = sizes.size() == 1 ? sizes[0] : sizes[static_cast<std::size_t>(k)];
      const double extent = static_cast<double>(std::max<index_t>(request.shape[k].size(), 1));
      blocks *= std::ceil(extent / static_cast<double>(b));
    }
    require_block_count(request, blocks);
    std::vector<AxisPieces> pieces;
    for (int k = 0; k < topo.axes(); ++k) {
      const index_t b = sizes.size() == 1 ? sizes[0] : sizes[static_cast<std::size_t>(k)];
      const Sig& sig = request.shape[k];
      const index_t parts = topo.dim(k);
      // A block longer than the axis is the whole axis (and keeps the arithmetic below in range).
      const index_t step = std::min(b, std::max<index_t>(sig.size(), 1));
      AxisPieces axis(static_cast<std::size_t>(parts));
      for (index_t c = 0; c < parts; ++c) {
        for (index_t first = c * step; first < sig.size(); first += parts * step) {
          axis[static_cast<std::size_t>(c)].push_back(
              sig.select_tile(first, std::min(first + step, sig.size())));
        }
      }
      pieces.push_back(std::move(axis));
    }
    return product_layout(request, pieces);
  }
};

}  // namespace

void register_block_cyclic_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<BlockCyclicLayout>());
}

}  // namespace hit::detail
