#include "hit/core/host_memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <limits>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/units.hpp"

namespace hit {

HostMemoryBudget host_memory_budget(MPI_Comm comm) {
  HostMemoryBudget b;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type of the node");
  MPI_Comm_size(node, &b.node_processes);
  MPI_Comm_free(&node);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) {
    b.node_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  if (Environment::exists()) {
    if (const auto text = Environment::current().config().get("host-memory")) {
      const std::uint64_t given = parse_bytes(*text);
      if (given == 0) {
        throw Error(ErrorKind::invalid_argument,
                    "host-memory (HIT_HOST_MEMORY) is 0: give the node's memory, e.g. 8GiB");
      }
      if (b.node_bytes == 0 || given < b.node_bytes) b.node_bytes = given;
    }
  }
  return b;
}

void require_host_memory(double bytes, const std::string& what, MPI_Comm comm) {
  const HostMemoryBudget mine = host_memory_budget(comm);
  // Every process decides alike: the largest need against the smallest budget, one MPI_MAX over
  // {need, -budget}. (A node whose memory is unknown budgets nothing against the others.)
  double figures[2] = {bytes, mine.node_bytes == 0 ? -std::numeric_limits<double>::max()
                                                    : -static_cast<double>(mine.per_process())};
  allreduce_in_place(figures, 2, MPI_DOUBLE, MPI_MAX, comm);
  const double need = figures[0];
  const double budget = -figures[1];
  if (need <= budget) return;
  throw Error::everywhere(
      ErrorKind::out_of_memory,
      fmt::format("{} need at least {} on a process, more than the {} of host memory a process "
                  "has (a node of {}, {} process{} of the run on it)",
                  what, human_bytes(need), human_bytes(budget),
                  human_bytes(static_cast<double>(mine.node_bytes)), mine.node_processes,
                  mine.node_processes == 1 ? "" : "es"));
}

}  // namespace hit
