// `outOfCore`: the local domain cut into chunks of rows that fit the device, staged one after the
// other with two buffers per chunked array so the copies of the next chunk overlap the compute of
// this one (Clarke et al. §1.6, version 3). The blocks of each chunk are those of the `inner`
// plug-in.
#include <fmt/format.h>

#include "builtin.hpp"
#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"

namespace hit::detail {
namespace {

class OutOfCorePartition final : public PartitionPlugin {
 public:
  std::string name() const override { return "outOfCore"; }
  std::string description() const override {
    return "chunks of rows that fit device memory, double-buffered so transfers overlap compute";
  }
  std::vector<ParamInfo> params() const override {
    return {
        ParamInfo::choice("inner", "partition of each chunk", {"single", "threads", "blocks"},
                          "blocks on cuda, threads elsewhere"),
        ParamInfo::integer("rows", "rows per chunk (instead of fitting the device)").at_least(1),
        ParamInfo::text("mem", "device bytes to plan for, e.g. 256MiB", "the device capacity"),
        ParamInfo::real("fill", "fraction of that memory the chunks may use", "0.9")
            .above(0)
            .at_most(1),
        ParamInfo::integer("buffers", "device buffers per chunked array", "2").between(1, 2)};
  }

  Partition make(const PartitionRequest& r) const override {
    const Spec& spec = r.spec;
    const auto fail = [&](const std::string& why) {
      return Error(ErrorKind::plugin, fmt::format("partition '{}': {}", spec.str(), why));
    };
    const std::string inner =
        spec.get_string("inner", r.device.kind == DeviceKind::cuda ? "blocks" : "threads");
    PartitionRequest inner_request = r;
    inner_request.spec = Spec(inner);
    Partition p;
    if (inner == "single") {
      p = single_partition(inner_request, spec.str());
    } else if (inner == "threads") {
      p = threads_partition(inner_request, spec.str(), r.device.cores);
    } else {  // blocks: the only other choice the declaration allows
      p = blocks_partition(inner_request, spec.str());
    }
    const auto buffers = spec.get_int("buffers", 2);  // 1 or 2
    if (spec.has("rows")) {
      const auto rows = spec.get_int("rows", 0);  // >= 1
      std::vector<Shape> chunks;
      const index_t n = r.domain.extent(0);
      for (index_t first = 0; first < n; first += rows) {
        chunks.push_back(
            r.domain.with_sig(0, r.domain[0].select_tile(first, std::min(n, first + rows))));
      }
      if (chunks.empty()) chunks.push_back(r.domain);
      p.set_chunks(std::move(chunks), static_cast<int>(buffers));
      return p;
    }
    std::uint64_t memory = r.device.capacity;
    if (auto text = spec.get("mem")) {
      try {
        memory = parse_bytes(*text);
      } catch (const Error& e) {
        throw fail(fmt::format("mem={}: {}", *text, e.what()));
      }
    }
    const double fill = spec.get_double("fill", 0.9);  // in (0, 1]
    const auto budget = static_cast<std::uint64_t>(static_cast<double>(memory) * fill);
    if (budget == 0) throw fail("the device memory to plan for is zero");
    p.set_chunk_budget(budget, static_cast<int>(buffers));
    if (r.footprint.bytes_per_row > 0) p = p.with_footprint(r.footprint);
    return p;
  }
};

}  // namespace

void register_out_of_core_partition(PartitionRegistry& registry) {
  registry.add(std::make_shared<OutOfCorePartition>());
}

}  // namespace hit::detail
