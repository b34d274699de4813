// `mesh:dims=AxB[xC...]`: a grid of explicit extents; processes past A*B*... are inactive.
#include <charconv>
#include <memory>
#include <string>

#include "builtin.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

std::vector<int> parse_dims(const Spec& spec, const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorKind::plugin, "topology '" + spec.str() + "': dims='" + text + "' " + why +
                                        " (expected 1 to 8 positive extents joined by 'x', e.g. "
                                        "dims=4x2)");
  };
  std::vector<int> dims;
  std::size_t start = 0;
  while (true) {
    const auto x = text.find('x', start);
    const std::string item = text.substr(start, x == std::string::npos ? x : x - start);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      throw bad("has '" + item + "', which is not an integer");
    }
    if (value < 1) throw bad("has extent " + item + ", extents must be at least 1");
    dims.push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (dims.size() > static_cast<std::size_t>(max_rank)) throw bad("has more than 8 axes");
  return dims;
}

class MeshTopology final : public TopologyPlugin {
 public:
  std::string name() const override { return "mesh"; }
  std::string description() const override {
    return "a grid of the given extents; processes past their product are inactive";
  }
  std::vector<ParamInfo> params() const override {
    return {ParamInfo::text("dims", "extents per axis joined by 'x', e.g. 4x2 or 2x2x2")
                .required("the parameter dims (e.g. mesh:dims=4x2)")};
  }
  Topology make(int procs, const Spec& spec) const override {
    const std::vector<int> dims = parse_dims(spec, *spec.get("dims"));  // required: given
    long long product = 1;
    bool overflow = false;
    for (int d : dims) overflow = overflow || __builtin_mul_overflow(product, d, &product);
    if (overflow || product > procs) {
      throw Error(ErrorKind::topology,
                  "topology '" + spec.str() + "' needs " +
                      (overflow ? std::string("more") : std::to_string(product)) +
                      " processes, only " + std::to_string(procs) + " exist");
    }
    return Topology(name(), dims, procs);
  }
};

}  // namespace

void register_mesh_topology(TopologyRegistry& registry) {
  registry.add(std::make_shared<MeshTopology>());
}

}  // namespace hit::detail
