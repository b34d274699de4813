// ref-pdpotrf: ScaLAPACK's PDPOTRF (Debian's MPICH build, the same MPI and BLAS as hitmap++), the
// reference hit-cholesky is measured against. A is n×n in ScaLAPACK's 2-D block-cyclic layout
// with nb×nb blocks on a rows×cols BLACS grid, with the values hit-cholesky generates for the same
// indices (symmetric, n added on the diagonal); the timed call is one PDPOTRF of the lower
// triangle, from a fresh copy of A each repetition. Prints one JSON line (median of --reps after
// --warmup untimed calls).
//   mpiexec.mpich -n 4 ref-pdpotrf --n 4096 [--nb 256] [--rows 2 --cols 2] [--reps 3] [--warmup 1]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "../../examples/common/app.hpp"
#include "scalapack_grid.hpp"

extern "C" {
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja,
              const int* desca, int* info);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const ref::GridArgs args = ref::parse_grid_args(argc, argv, size);
  if (!ref::usable(args, rank, size, "ref-pdpotrf", false)) {
    MPI_Finalize();
    return 2;
  }
  int info = 0;
  {
    // The grid is left (Cblacs_gridexit) before MPI_Finalize.
    const ref::BlockCyclicMatrix m(args);
    // The symmetric matrix hit-cholesky generates for the same indices.
    std::vector<double> a0(m.elements()), a(m.elements());
    m.for_each([&](int gi, int gj, std::size_t at) {
      const auto lo = static_cast<std::uint64_t>(std::min(gi, gj));
      const auto hi = static_cast<std::uint64_t>(std::max(gi, gj));
      a0[at] = hit::app::hashed_value(static_cast<std::uint64_t>(args.seed), lo, hi) +
               (gi == gj ? args.n : 0.0);
    });
    const int one = 1;
    std::vector<double> times;
    for (int r = 0; r < args.warmup + args.reps; ++r) {
      a = a0;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      pdpotrf_("L", &args.n, a.data(), &one, &one, m.desc(), &info);
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= args.warmup) times.push_back(t);
    }
    // The sum of L's lower triangle, to compare with hit-cholesky's --c-out if wanted.
    double local_sum = 0;
    m.for_each([&](int gi, int gj, std::size_t at) {
      if (gi >= gj) local_sum += a[at];
    });
    double sum = 0;
    MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double t = hit::app::median(times);
      const double flops = static_cast<double>(args.n) * args.n * args.n / 3.0;
      std::printf(
          "{\"app\":\"pdpotrf\",\"n\":%d,\"nb\":%d,\"grid\":[%d,%d],\"time_s\":%.6f,"
          "\"gflops\":%.3f,\"info\":%d,\"checksum\":%.10g}\n",
          args.n, args.nb, m.grid_rows(), m.grid_cols(), t, flops / t * 1e-9, info, sum);
    }
  }
  MPI_Finalize();
  return info == 0 ? 0 : 1;
}
