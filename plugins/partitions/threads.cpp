// `threads`: one block of consecutive rows (axis 0) per host thread, sized as Hitmap's blocks
// layout (the first rows mod threads blocks get one row more). On cuda: the default geometry of
// `blocks`.
#include "builtin.hpp"

namespace hit::detail {

Partition threads_partition(const PartitionRequest& r, const std::string& spec, int threads) {
  if (r.device.kind == DeviceKind::cuda) return default_cuda_partition(r, spec);
  const index_t rows = r.domain.extent(0);
  const index_t t = std::max<index_t>(1, std::min<index_t>(threads, std::max<index_t>(rows, 1)));
  std::vector<index_t> block{std::max<index_t>(1, (rows + t - 1) / t)};
  for (int k = 1; k < r.domain.rank(); ++k)
    block.push_back(std::max<index_t>(1, r.domain.extent(k)));
  Partition p(spec, r.device.kind, r.domain, block);
  p.set_threads(
      static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(t, p.block_count()))));
  p.set_padding(default_row_alignment(r.device.kind), false);
  return p;
}

namespace {

class ThreadsPartition final : public PartitionPlugin {
 public:
  std::string name() const override { return "threads"; }
  std::string description() const override {
    return "one block of rows per host thread (cpu, emu); the default blocks geometry on cuda";
  }
  std::vector<ParamInfo> params() const override {
    return {
        ParamInfo::integer("threads", "host threads (blocks of rows)", "the cores of the device")
            .between(1, 4096)};
  }
  Partition make(const PartitionRequest& r) const override {
    const auto threads = r.spec.get_int("threads", r.device.cores);
    return threads_partition(r, r.spec.str(), static_cast<int>(threads));
  }
};

}  // namespace

void register_threads_partition(PartitionRegistry& registry) {
  registry.add(std::make_shared<ThreadsPartition>());
}

}  // namespace hit::detail
