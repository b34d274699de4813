// The prediction of CG on a sparse layout and the halo traffic it needs (docs/advisor.md).
#include <fmt/format.h>

#include <mpi.h>
#include <algorithm>
#include <array>
#include <climits>

#include "costs.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"

namespace hit::advisor {

std::vector<std::vector<PeerTraffic>> sparse_halo_traffic(const SparseLayout& layout,
                                                          const CsrPattern& mine, MPI_Comm comm) {
  // (receiver, owner, column) for every column a process's rows read from another process; the
  // same triple may come from several ranks holding rows of one process.
  std::vector<std::array<std::int64_t, 3>> needs;
  hit::collectively(comm, [&] {
    for (index_t r = 0; r < mine.rows(); ++r) {
      const int p = layout.owner(mine.names[static_cast<std::size_t>(r)]);
      for (index_t c : mine.columns(r)) {
        const int q = layout.owner(c);
        if (p < 0 || q < 0) {
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("the matrix's entry ({}, {}) is outside the layout's {} rows",
                                  mine.names[static_cast<std::size_t>(r)], c, layout.rows()));
        }
        if (q != p) needs.push_back({p, q, c});
      }
    }
    std::sort(needs.begin(), needs.end());
    needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
    if (needs.size() * 3 > static_cast<std::size_t>(INT_MAX)) {
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} cut entries on one process: too many to gather", needs.size()));
    }
  });
  const int count = static_cast<int>(needs.size() * 3);
  const std::vector<int> counts = allgather(count, comm);
  std::vector<int> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (std::int64_t{offsets[r]} + counts[r] > INT_MAX) {
      throw Error(ErrorKind::invalid_argument, "the cut entries are too many to gather");
    }
    offsets[r + 1] = offsets[r] + counts[r];
  }
  std::vector<std::array<std::int64_t, 3>> all(static_cast<std::size_t>(offsets.back() / 3));
  check_mpi(MPI_Allgatherv(needs.data(), count, MPI_INT64_T, all.data(), counts.data(),
                           offsets.data(), MPI_INT64_T, comm),
            "MPI_Allgatherv of the cut entries");
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());

  std::vector<std::vector<PeerTraffic>> out(static_cast<std::size_t>(layout.procs()));
  for (std::size_t i = 0; i < all.size();) {
    const auto p = static_cast<int>(all[i][0]);
    const auto q = static_cast<int>(all[i][1]);
    std::size_t j = i;
    while (j < all.size() && all[j][0] == p && all[j][1] == q) ++j;
    const auto values = static_cast<index_t>(j - i);
    out[std::size_t(p)].push_back({.peer = q, .sent = 0, .received = values});
    i = j;
  }
  // What p receives from q, q sends to p.
  std::vector<std::vector<PeerTraffic>> sends(out.size());
  for (std::size_t p = 0; p < out.size(); ++p) {
    for (const PeerTraffic& t : out[p]) {
      sends[std::size_t(t.peer)].push_back(
          {.peer = static_cast<int>(p), .sent = t.received, .received = 0});
    }
  }
  for (std::size_t p = 0; p < out.size(); ++p) {
    for (const PeerTraffic& s : sends[p]) {
      auto it = std::lower_bound(out[p].begin(), out[p].end(), s.peer,
                                 [](const PeerTraffic& t, int peer) { return t.peer < peer; });
      if (it != out[p].end() && it->peer == s.peer) {
        it->sent = s.sent;
      } else {
        out[p].insert(it, s);
      }
    }
  }
  return out;
}

Prediction predict_cg(const SparseLayout& layout, std::span<const std::vector<PeerTraffic>> halo,
                      const Machine& machine, const RunShape& run) {
  const int procs = layout.procs();
  if (layout.stats().size() != static_cast<std::size_t>(procs) ||
      halo.size() != static_cast<std::size_t>(procs)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("cg: the layout '{}' must be measured, with the halo of each of its "
                            "{} processes",
                            layout.spec(), procs));
  }
  if (run.iterations < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("cg: {} iterations: the count must be >= 0", run.iterations));
  }
  const double eb = double(run.element_bytes);
  Prediction out;
  out.procs.resize(static_cast<std::size_t>(procs));
  detail::StepMax iteration;
  int active = 0;
  int far = 0;  // a process on another node than process 0, for the reductions' link
  for (int p = 0; p < procs; ++p) {
    if (machine.node_of(p) != machine.node_of(0)) far = p;
    const SparsePartStats& s = layout.stats()[std::size_t(p)];
    if (s.rows == 0) continue;
    ++active;
    // The product (2 flops a nonzero) and CG's vector work: two dot products and three updates
    // of a row's values each iteration.
    const double flops = 2 * double(s.nonzeros) + 10 * double(s.rows);
    const double bytes = double(s.nonzeros) * (eb + 8) + double(s.rows) * 4 * eb;
    // Four launches an iteration: the product's rows that need no halo, the others once it has
    // arrived, and the two vector updates (each with its dot product).
    const double launch = 4 * machine.launch_seconds(p);
    const auto problem = static_cast<std::uint64_t>(bytes);
    const double kernel = machine.own_seconds(p, Kernel::spmv, flops, problem);
    double comm = 0, moved = 0;
    for (const PeerTraffic& t : halo[std::size_t(p)]) {
      if (t.received > 0) comm += machine.message_seconds(t.peer, p, 1, double(t.received) * eb);
      moved += double(t.sent + t.received) * eb;
    }
    comm += machine.staging_seconds(p, moved);
    out.procs[std::size_t(p)].bytes =
        static_cast<std::uint64_t>(bytes + double(s.rows + 1) * 8 + double(s.ghosts) * eb);
    iteration.parts.push_back({.proc = p,
                               .kernel = kernel,
                               .launch = launch,
                               .comm = comm,
                               .flops = flops,
                               .problem_bytes = problem});
  }
  iteration.close(machine, out.procs, double(run.iterations));
  // Two reductions an iteration (the step length and the residual), binomial trees.
  const double reductions = 2 * 2 * detail::tree_rounds(active) *
                            machine.message_seconds(0, far == 0 ? (procs > 1 ? 1 : 0) : far, 1, 8);
  out.compute_s = iteration.compute * run.iterations;
  out.comm_s = (iteration.comm + reductions) * run.iterations;
  out.predicted_s = (std::max(iteration.compute, iteration.comm) + reductions) * run.iterations;
  detail::finish(out, machine);
  return out;
}

}  // namespace hit::advisor
