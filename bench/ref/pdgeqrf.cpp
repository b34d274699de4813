// ref-pdgeqrf: ScaLAPACK's PDGEQRF (Debian's MPICH build, the same MPI and BLAS as hitmap++), the
// reference hit-qr is measured against. A is m×n in ScaLAPACK's 2-D block-cyclic layout with
// nb×nb blocks on a rows×cols BLACS grid, with the values hit-qr generates for the same indices;
// the timed call is one PDGEQRF, from a fresh copy of A each repetition (its workspace queried
// and allocated once, before). Prints one JSON line (median of --reps after --warmup untimed
// calls).
//   mpiexec.mpich -n 4 ref-pdgeqrf --m 16384 --n 4096 [--nb 256] [--rows 2 --cols 2] [--reps 3]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "../../examples/common/app.hpp"
#include "scalapack_grid.hpp"

extern "C" {
void pdgeqrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca,
              double* tau, double* work, const int* lwork, int* info);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const ref::GridArgs args = ref::parse_grid_args(argc, argv, size);
  if (!ref::usable(args, rank, size, "ref-pdgeqrf", true)) {
    MPI_Finalize();
    return 2;
  }
  int info = 0;
  {
    // The grid is left (Cblacs_gridexit) before MPI_Finalize.
    const ref::BlockCyclicMatrix a_layout(args);
    std::vector<double> a0(a_layout.elements()), a(a_layout.elements());
    a_layout.for_each([&](int gi, int gj, std::size_t at) {
      a0[at] =
          hit::app::hashed_value(static_cast<std::uint64_t>(args.seed),
                                 static_cast<std::uint64_t>(gi), static_cast<std::uint64_t>(gj));
    });
    const int one = 1;
    std::vector<double> tau(static_cast<std::size_t>(std::max(1, a_layout.local_cols())));
    int lwork = -1;
    double query = 0;
    a = a0;
    pdgeqrf_(&args.m, &args.n, a.data(), &one, &one, a_layout.desc(), tau.data(), &query, &lwork,
             &info);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<double> work(static_cast<std::size_t>(lwork));
    std::vector<double> times;
    for (int r = 0; r < args.warmup + args.reps; ++r) {
      a = a0;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      pdgeqrf_(&args.m, &args.n, a.data(), &one, &one, a_layout.desc(), tau.data(), work.data(),
               &lwork, &info);
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= args.warmup) times.push_back(t);
    }
    // The sum of |R|'s upper triangle, to compare with hit-qr's --r-out if wanted (R's rows may
    // differ in sign between two Householder QRs).
    double local_sum = 0;
    a_layout.for_each([&](int gi, int gj, std::size_t at) {
      if (gi <= gj) local_sum += std::abs(a[at]);
    });
    double sum = 0;
    MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double t = hit::app::median(times);
      const double m = args.m, n = args.n;
      const double flops = 2 * m * n * n - 2 * n * n * n / 3;
      std::printf(
          "{\"app\":\"pdgeqrf\",\"m\":%d,\"n\":%d,\"nb\":%d,\"grid\":[%d,%d],\"time_s\":%.6f,"
          "\"gflops\":%.3f,\"info\":%d,\"checksum\":%.10g}\n",
          args.m, args.n, args.nb, a_layout.grid_rows(), a_layout.grid_cols(), t, flops / t * 1e-9,
          info, sum);
    }
  }
  MPI_Finalize();
  return info == 0 ? 0 : 1;
}
