// The built-in partition plug-ins: the one place that names them (core never does).
#include "builtin.hpp"

namespace hit::detail {

void register_builtin_partitions(PartitionRegistry& registry) {
  register_single_partition(registry);
  register_threads_partition(registry);
  register_blocks_partition(registry);
  register_out_of_core_partition(registry);
}

}  // namespace hit::detail
