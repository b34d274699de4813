#pragma once
// The built-in partition plug-ins, one per file of this folder, and the geometry they share.

#include <string>

#include "hit/partition.hpp"

namespace hit::detail {

void register_single_partition(PartitionRegistry& registry);
void register_threads_partition(PartitionRegistry& registry);
void register_blocks_partition(PartitionRegistry& registry);
void register_out_of_core_partition(PartitionRegistry& registry);

// The thread-block shape `blocks` uses on cuda: `threads` threads per block, along the last axis
// (x) as far as the rows are wide (1x512 for wide rows, as in Hitmap), stacked over rows when rows
// are narrow; a 32-wide tile of rows when the access pattern reaches across rows (a stencil), so
// neighbours are reused within the block.
std::vector<index_t> cuda_block_shape(const Shape& domain, const AccessPattern& access, int threads,
                                      int warp);

// The default geometry of each kind, as the plug-ins make it (used by outOfCore for its chunks and
// by single/threads on cuda).
Partition default_cuda_partition(const PartitionRequest& request, const std::string& spec);
Partition single_partition(const PartitionRequest& request, const std::string& spec);
Partition threads_partition(const PartitionRequest& request, const std::string& spec, int threads);
Partition blocks_partition(const PartitionRequest& request, const std::string& spec);

}  // namespace hit::detail
