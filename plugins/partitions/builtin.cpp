// The built-in partition plug-ins: the one place that names them (core never does).
#include "builtin.hpp"

namespace hit::detail {

void register_builtin_partitions(PartitionRegistry& registry) {
  register_single_partition(registry);
  register_threads_partition(registry);
  register_blocks_partition(registry);
  register_out_of_core_partition(registry);
}

std::size_t default_row_alignment(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::cuda:
      return 128;
    case DeviceKind::emu:
      return 64;
    case DeviceKind::cpu:
      return 0;
  }
  return 0;
}

}  // namespace hit::detail
