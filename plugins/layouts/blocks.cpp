// `blocks`: shape axis k split over topology axis k into contiguous parts as Hitmap does (the first
// N mod P parts get one element more; trailing parts are empty when N < P).
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class BlocksLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "blocks"; }
  std::string description() const override {
    return "shape axis k split over topology axis k into contiguous parts differing by at most "
           "one element (N=10 over 3 -> 4,3,3); shape axes past the topology's are not split";
  }
  std::vector<ParamInfo> params() const override { return {}; }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    std::vector<AxisPieces> pieces;
    for (int k = 0; k < request.topology.axes(); ++k) {
      pieces.push_back(block_pieces(request.shape[k], request.topology.dim(k)));
    }
    return product_layout(request, pieces);
  }
};

}  // namespace

void register_blocks_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<BlocksLayout>());
}

}  // namespace hit::detail
