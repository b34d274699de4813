// `single`: the whole local domain as one block (the Hitmap paper's CPU-core partition). The kernel
// body is called once and may use every core of the device itself (BLAS). On cuda: the default
// geometry of `blocks`.
#include "builtin.hpp"

namespace hit::detail {

Partition single_partition(const PartitionRequest& r, const std::string& spec) {
  if (r.device.kind == DeviceKind::cuda) return default_cuda_partition(r, spec);
  std::vector<index_t> block;
  for (int k = 0; k < r.domain.rank(); ++k)
    block.push_back(std::max<index_t>(1, r.domain.extent(k)));
  Partition p(spec, r.device.kind, r.domain, block);
  p.set_threads(1);
  p.set_padding(default_row_alignment(r.device.kind), false);
  return p;
}

namespace {

class SinglePartition final : public PartitionPlugin {
 public:
  std::string name() const override { return "single"; }
  std::string description() const override {
    return "one block: the kernel body runs once over the whole local domain (cpu, emu); the "
           "default blocks geometry on cuda";
  }
  std::vector<ParamInfo> params() const override { return {}; }
  Partition make(const PartitionRequest& r) const override {
    return single_partition(r, r.spec.str());
  }
};

}  // namespace

void register_single_partition(PartitionRegistry& registry) {
  registry.add(std::make_shared<SinglePartition>());
}

}  // namespace hit::detail
