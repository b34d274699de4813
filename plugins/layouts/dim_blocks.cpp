// `dimBlocks:dim=k[,w=...]`: only shape axis k is split, into contiguous blocks over all the
// processes of the topology taken in rank order (its 1-D view), evenly or in proportion to one
// weight per process; the other axes are whole.
#include <memory>

#include "builtin.hpp"

namespace hit::detail {
namespace {

class DimBlocksLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "dimBlocks"; }
  std::string description() const override {
    return "only shape axis `dim` split into contiguous parts over all processes in rank order "
           "(the topology seen as 1-D: neighbours are along its axis 0), evenly or in proportion "
           "to the weights w";
  }
  std::vector<ParamInfo> params() const override {
    return {ParamInfo::integer("dim", "the shape axis to split", "0").at_least(0),
            process_weights_param("weights, one per process (not all 0): parts in proportion to "
                                  "them, within one element of the exact share (default: even "
                                  "parts)",
                                  true)};
  }
  // Its default (the binding's speeds), and the machine's speeds when they differ.
  std::vector<Spec> candidates(const CandidateContext& c) const override {
    if (c.even_speeds()) return {Spec(name())};
    return {Spec(name()), Spec(name()).with("w", c.weights())};
  }
  Layout make(const LayoutRequest& request) const override {
    const int dim = index_param(request, "dim", 0, request.shape.rank(), "an axis of the shape");
    const Topology& topo = request.topology;
    const Topology line("array", {topo.grid_size()}, topo.procs());
    AxisPieces pieces;
    if (request.spec.has("w")) {
      const std::vector<double> w =
          process_weights(request, static_cast<std::size_t>(topo.grid_size()));
      pieces = sized_pieces(request.shape[dim], parts_from_weights(w, request.shape[dim].size()));
    } else {
      pieces = block_pieces(request.shape[dim], topo.grid_size());
    }
    std::vector<std::vector<Shape>> blocks(static_cast<std::size_t>(topo.procs()));
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      for (const Sig& s : pieces[p]) blocks[p].push_back(request.shape.with_sig(dim, s));
    }
    return Layout(line, request.shape, request.spec, std::move(blocks));
  }
};

}  // namespace

void register_dim_blocks_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<DimBlocksLayout>());
}

}  // namespace hit::detail
