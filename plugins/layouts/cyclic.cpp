// `cyclic`: along every axis the topology distributes, coordinate c of P gets the indices at
// positions c, c+P, c+2P, ... (one strided block per process).
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class CyclicLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "cyclic"; }
  std::string description() const override {
    return "coordinate c of P along each topology axis gets positions c, c+P, c+2P, ... of the "
           "matching shape axis (one strided block per process)";
  }
  std::vector<ParamInfo> params() const override { return {}; }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    std::vector<AxisPieces> pieces;
    for (int k = 0; k < request.topology.axes(); ++k) {
      const Sig& sig = request.shape[k];
      const int parts = request.topology.dim(k);
      AxisPieces axis(static_cast<std::size_t>(parts));
      for (int c = 0; c < parts && c < sig.size(); ++c) {
        axis[static_cast<std::size_t>(c)].push_back(sig.select_tile(c, sig.size(), parts));
      }
      pieces.push_back(std::move(axis));
    }
    return product_layout(request, pieces);
  }
};

}  // namespace

void register_cyclic_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<CyclicLayout>());
}

}  // namespace hit::detail
