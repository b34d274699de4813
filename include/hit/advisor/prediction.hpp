#pragma once
// The advisor's prediction of one run of an application on a layout (docs/advisor.md gives the
// formulas): per process, compute time from its device (Machine::compute_seconds) at the work the
// layout gives it, and communication time from the messages the application's plan would send
// (the traffic functions of the dry run) under the machine's network costs, combined by the
// application's structure. Pure computation over layouts: no MPI, nothing allocated per element.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hit/advisor/machine.hpp"
#include "hit/comm/comm_traffic.hpp"
#include "hit/layout.hpp"
#include "hit/sparse/sparse_layout.hpp"

namespace hit::advisor {

// What one process does in the predicted run.
struct ProcessCost {
  double flops = 0;         // its work
  double compute_s = 0;     // its compute, all steps, its launches' overhead included
  double launch_s = 0;      // the part of compute_s that is launch overhead
  double comm_s = 0;        // its messages, all steps
  std::uint64_t bytes = 0;  // memory it allocates for the application's arrays
};

struct Prediction {
  // The makespan, and the parts of it on the critical path: per step the slowest process's
  // compute and the slowest process's communication, summed over the steps. The makespan is
  // not their sum where the application overlaps them.
  double predicted_s = 0;
  double compute_s = 0;
  double comm_s = 0;
  double imbalance = 1;  // largest compute time over the mean of the active processes
  bool fits = true;      // every device holds what its processes allocate
  std::string fit_note;  // the first device that does not, with the figures
  std::uint64_t max_bytes = 0;
  std::vector<ProcessCost> procs;
};

// The parameters of a run besides its layouts.
struct RunShape {
  std::int64_t element_bytes = 8;
  int iterations = 100;      // jacobi and cg: iterations of the run
  std::int64_t panel = 256;  // summa: columns of A per step
  bool lookahead = true;     // summa and cholesky: panels travel while the previous updates run
};

// Cannon on a square topology: A (n×m), B (m×k) and C (n×k) laid by their layouts; the initial
// alignment, then √P steps, each a product overlapped with the shift of the next blocks.
Prediction predict_cannon(const Layout& a, const Layout& b, const Layout& c, const Machine& machine,
                          const RunShape& run);
// SUMMA: ⌈m / panel⌉ steps, each a broadcast of a panel of A along the topology's rows and of B
// along its columns (binomial trees), overlapped with the previous step's product.
Prediction predict_summa(const Layout& a, const Layout& b, const Layout& c, const Machine& machine,
                         const RunShape& run);
// Jacobi: per iteration, the halo exchange of one layer overlapped with the update.
Prediction predict_jacobi(const Layout& grid, const Machine& machine, const RunShape& run);
// Tiled right-looking Cholesky: the tiles are the layout's blocks cut where any block begins;
// per panel, the factorisation of the diagonal tile, the solves below it and the panel's
// travel, then the trailing update (overlapped with the next panel with lookahead).
Prediction predict_cholesky(const Layout& a, const Machine& machine, const RunShape& run);
// CG: per iteration the sparse product with its halo (overlapped with the interior rows), the
// vector updates and two reductions. `halo[p]`: the values process p receives from and sends
// to each peer per product (sparse_halo_traffic); the layout must be measured (stats()).
Prediction predict_cg(const SparseLayout& layout, std::span<const std::vector<PeerTraffic>> halo,
                      const Machine& machine, const RunShape& run);

// The values each process of `layout` receives per sparse product from each peer (the distinct
// columns of its rows another process owns) and sends to it, peers ascending. Collective over
// `comm`, whose processes hold the graph's rows in any distribution (as sparse_layout takes
// them); the same result on every process.
std::vector<std::vector<PeerTraffic>> sparse_halo_traffic(const SparseLayout& layout,
                                                          const CsrPattern& mine, MPI_Comm comm);

}  // namespace hit::advisor
