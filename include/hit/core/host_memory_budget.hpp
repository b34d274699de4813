#pragma once
// What a process may allocate on its host: the node's physical memory shared by the processes of
// the run on that node. Readers, generators and dry runs compare what they are about to allocate
// with it first, so a problem too large for the machine is refused with its figures instead of
// ending in std::bad_alloc (or the kernel's out-of-memory killer) half-way through.

#include <mpi.h>

#include <cstdint>
#include <string>

namespace hit {

struct HostMemoryBudget {
  std::uint64_t node_bytes = 0;  // physical memory of the node, or the host-memory setting
  int node_processes = 1;        // processes of the communicator on that node

  [[nodiscard]] std::uint64_t per_process() const noexcept {
    return node_bytes / static_cast<std::uint64_t>(node_processes < 1 ? 1 : node_processes);
  }
};

// This process's node (collective over `comm`: the node is the shared-memory group of MPI). The
// setting `host-memory` (HIT_HOST_MEMORY, a byte count such as 8GiB) stands for the node's memory
// when it is smaller: a run sharing its node with others keeps to its part, and tests get the
// same answer on any machine.
[[nodiscard]] HostMemoryBudget host_memory_budget(MPI_Comm comm);

// Collective over `comm`: Error(out_of_memory) on every process when the largest of the
// processes' `bytes` exceeds the smallest per-process budget, the message saying `what` needs how
// much and what there is: "<what> need at least 7.28 TiB on a process, more than the 23.4 GiB of
// host memory a process has (a node of 23.4 GiB, 1 process on it)". `bytes` is a double so that an
// estimate past 2^64 stays an estimate.
void require_host_memory(double bytes, const std::string& what, MPI_Comm comm);

}  // namespace hit
