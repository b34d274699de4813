// `blocksLB:factor=F[,axis=a][,fast=...]`: Hitmap's load-balancing blocks (Torres et al.). Shape
// axis a is split over topology axis a unevenly between two device classes: the coordinates whose
// processes are all bound to fast devices share the fraction F of the axis evenly, the others share
// 1-F evenly. The other distributed axes are split as `blocks`.
//
// Which processes are fast: those listed in `fast=` (rank numbers, device kinds such as `cuda`,
// or devices such as `cuda:0`), else those bound to a device whose kind is not `cpu`. When every
// coordinate falls in one class the split is even (the balance factor needs two classes).
#include <charconv>
#include <memory>
#include <string>

#include "builtin.hpp"

namespace hit::detail {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Whether each process is bound to the fast class.
std::vector<bool> fast_processes(const LayoutRequest& request) {
  const int procs = request.topology.procs();
  std::vector<DeviceBinding> devices = request.devices;
  devices.resize(static_cast<std::size_t>(procs));  // unknown devices: default-bound (cpu)
  std::vector<bool> fast(static_cast<std::size_t>(procs), false);
  const auto list = request.spec.get("fast");
  if (!list) {
    for (int p = 0; p < procs; ++p) {
      fast[static_cast<std::size_t>(p)] =
          devices[static_cast<std::size_t>(p)].kind != DeviceKind::cpu;
    }
    return fast;
  }
  for (const std::string& item : split_commas(*list)) {
    const auto bad = [&](const std::string& why) {
      return Error(ErrorKind::plugin, "layout '" + request.spec.str() + "': fast item '" + item +
                                          "' " + why +
                                          " (expected rank numbers, device kinds cpu, cuda, emu, "
                                          "or devices such as cuda:0)");
    };
    int rank = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), rank);
    if (!item.empty() && ec == std::errc() && ptr == item.data() + item.size()) {
      if (rank < 0 || rank >= procs) {
        throw bad("is not a process (0 to " + std::to_string(procs - 1) + ")");
      }
      fast[static_cast<std::size_t>(rank)] = true;
      continue;
    }
    const auto colon = item.find(':');
    const std::optional<DeviceKind> kind = parse_device_kind(item.substr(0, colon));
    if (!kind) throw bad("is not a rank or a device");
    std::optional<int> index;
    if (colon != std::string::npos) {
      const std::string digits = item.substr(colon + 1);
      int value = 0;
      const auto [p2, e2] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (digits.empty() || e2 != std::errc() || p2 != digits.data() + digits.size() || value < 0) {
        throw bad("has a device index that is not a non-negative integer");
      }
      index = value;
    }
    for (int p = 0; p < procs; ++p) {
      const DeviceBinding& d = devices[static_cast<std::size_t>(p)];
      if (d.kind == *kind && (!index || d.index == *index))
        fast[static_cast<std::size_t>(p)] = true;
    }
  }
  return fast;
}

class BlocksLbLayout final : public LayoutPlugin {
 public:
  std::string name() const override { return "blocksLB"; }
  std::string description() const override {
    return "Hitmap's balance-factor blocks: the coordinates of topology axis `axis` whose "
           "processes are all fast share `factor` of shape axis `axis`, the others 1-factor "
           "(each class evenly); other axes as blocks";
  }
  std::vector<ParamInfo> params() const override {
    return {ParamInfo::real("factor", "fraction of the split axis given to the fast class", "0.5")
                .above(0)
                .below(1)
                .range_in_words("a fraction strictly between 0 and 1"),
            ParamInfo::integer("axis", "the shape and topology axis to split", "0").at_least(0),
            ParamInfo::text("fast",
                            "the fast processes: rank numbers, device kinds (cuda) or devices "
                            "(cuda:0); default: processes bound to a device that is not cpu")};
  }
  std::vector<Spec> candidates(const CandidateContext& /*c*/) const override {
    std::vector<Spec> out;
    for (int f = 1; f <= 9; ++f) out.push_back(Spec(name()).with("factor", f / 10.0));
    return out;
  }
  Layout make(const LayoutRequest& request) const override {
    require_layout_axes(request);
    const Topology& topo = request.topology;
    const int axis = index_param(request, "axis", 0, topo.axes(), "an axis of the topology");
    const double factor = request.spec.get_double("factor", 0.5);
    const std::vector<bool> fast = fast_processes(request);
    // A coordinate is fast when every process of its slice is: they share its part, so the
    // slowest of them sets its pace.
    const auto coords = static_cast<std::size_t>(topo.dim(axis));
    std::vector<bool> fast_coord(coords, true);
    for (int p = 0; p < topo.grid_size(); ++p) {
      const auto c = static_cast<std::size_t>(topo.coords(p)[axis]);
      fast_coord[c] = fast_coord[c] && fast[static_cast<std::size_t>(p)];
    }
    std::size_t n_fast = 0;
    for (bool f : fast_coord) n_fast += f ? 1 : 0;
    const std::size_t n_slow = coords - n_fast;
    std::vector<double> weights(coords, 1.0);
    if (n_fast > 0 && n_slow > 0) {
      for (std::size_t c = 0; c < coords; ++c) {
        weights[c] = fast_coord[c] ? factor / static_cast<double>(n_fast)
                                   : (1 - factor) / static_cast<double>(n_slow);
      }
    }
    return layout_from_weights(request, axis, weights);
  }
};

}  // namespace

void register_blocks_lb_layout(LayoutRegistry& registry) {
  registry.add(std::make_shared<BlocksLbLayout>());
}

}  // namespace hit::detail
