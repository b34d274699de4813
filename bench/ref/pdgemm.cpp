// ref-pdgemm: ScaLAPACK's PDGEMM (Debian's MPICH build, the same MPI and BLAS as hitmap++), the
// reference hit-summa is measured against. A, B and C are n×n in ScaLAPACK's 2-D block-cyclic
// layout with nb×nb blocks on a rows×cols BLACS grid; the timed call is one PDGEMM. Prints one JSON
// line (median of --reps after --warmup untimed calls).
//   mpiexec.mpich -n 4 ref-pdgemm --n 4096 [--nb 256] [--rows 2 --cols 2] [--reps 3] [--warmup 1]
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "../../examples/common/app.hpp"
#include "scalapack_grid.hpp"

extern "C" {
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const ref::GridArgs args = ref::parse_grid_args(argc, argv, size);
  if (!ref::usable(args, rank, size, "ref-pdgemm", false)) {
    MPI_Finalize();
    return 2;
  }
  {
    // The grid is left (Cblacs_gridexit) before MPI_Finalize.
    const ref::BlockCyclicMatrix m(args);
    // The values hit-summa generates for the same indices.
    std::vector<double> a(m.elements()), b(m.elements()), c(m.elements(), 0.0);
    m.for_each([&](int gi, int gj, std::size_t at) {
      a[at] =
          hit::app::hashed_value(1, static_cast<std::uint64_t>(gi), static_cast<std::uint64_t>(gj));
      b[at] =
          hit::app::hashed_value(2, static_cast<std::uint64_t>(gi), static_cast<std::uint64_t>(gj));
    });
    const int one = 1;
    const double alpha = 1.0, beta = 0.0;
    std::vector<double> times;
    for (int r = 0; r < args.warmup + args.reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      pdgemm_("N", "N", &args.n, &args.n, &args.n, &alpha, a.data(), &one, &one, m.desc(), b.data(),
              &one, &one, m.desc(), &beta, c.data(), &one, &one, m.desc());
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= args.warmup) times.push_back(t);
    }
    double local_sum = 0;
    for (const double x : c) local_sum += x;
    double sum = 0;
    MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double t = hit::app::median(times);
      const double flops = 2.0 * args.n * static_cast<double>(args.n) * args.n;
      std::printf(
          "{\"app\":\"pdgemm\",\"n\":%d,\"nb\":%d,\"grid\":[%d,%d],\"time_s\":%.6f,"
          "\"gflops\":%.3f,\"checksum\":%.10g}\n",
          args.n, args.nb, m.grid_rows(), m.grid_cols(), t, flops / t * 1e-9, sum);
    }
  }
  MPI_Finalize();
  return 0;
}
