// ref-pdpotrf: ScaLAPACK's PDPOTRF (Debian's MPICH build, the same MPI and BLAS as hitmap++), the
// reference hit-cholesky is measured against. A is n×n in ScaLAPACK's 2-D block-cyclic layout
// with nb×nb blocks on a rows×cols BLACS grid, with the values hit-cholesky generates for the same
// indices (symmetric, n added on the diagonal); the timed call is one PDPOTRF of the lower
// triangle, from a fresh copy of A each repetition. Prints one JSON line (median of --reps after
// --warmup untimed calls).
//   mpiexec.mpich -n 4 ref-pdpotrf --n 4096 [--nb 256] [--rows 2 --cols 2] [--reps 3] [--warmup 1]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../examples/common/app.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja,
              const int* desca, int* info);
}

namespace {

struct Args {
  int n = 1024;
  int nb = 256;
  int rows = 0;
  int cols = 0;
  int reps = 3;
  int warmup = 1;
  unsigned long seed = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> int { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (k == "--n")
      a.n = next();
    else if (k == "--nb")
      a.nb = next();
    else if (k == "--rows")
      a.rows = next();
    else if (k == "--cols")
      a.cols = next();
    else if (k == "--reps")
      a.reps = next();
    else if (k == "--warmup")
      a.warmup = next();
    else if (k == "--seed")
      a.seed = static_cast<unsigned long>(next());
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args args = parse(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (args.rows <= 0 || args.cols <= 0) {
    args.rows = static_cast<int>(std::sqrt(static_cast<double>(size)));
    while (size % args.rows != 0) --args.rows;
    args.cols = size / args.rows;
  }
  if (args.rows * args.cols != size || args.n < 1 || args.nb < 1 || args.reps < 1) {
    if (rank == 0) std::fprintf(stderr, "ref-pdpotrf: needs rows*cols == P, n >= 1, nb >= 1\n");
    MPI_Finalize();
    return 2;
  }
  int context = 0;
  Cblacs_get(-1, 0, &context);
  Cblacs_gridinit(&context, "Row", args.rows, args.cols);
  int grid_rows = 0, grid_cols = 0, my_row = 0, my_col = 0;
  Cblacs_gridinfo(context, &grid_rows, &grid_cols, &my_row, &my_col);
  const int zero = 0;
  const int local_rows = numroc_(&args.n, &args.nb, &my_row, &zero, &grid_rows);
  const int local_cols = numroc_(&args.n, &args.nb, &my_col, &zero, &grid_cols);
  const int lld = std::max(1, local_rows);
  int desc[9];
  int info = 0;
  descinit_(desc, &args.n, &args.n, &args.nb, &args.nb, &zero, &zero, &context, &lld, &info);
  // Column-major local blocks of the symmetric matrix hit-cholesky generates.
  const auto elements = static_cast<std::size_t>(lld) * static_cast<std::size_t>(local_cols);
  std::vector<double> a0(elements), a(elements);
  for (int j = 0; j < local_cols; ++j) {
    const int gj = (j / args.nb * grid_cols + my_col) * args.nb + j % args.nb;
    for (int i = 0; i < local_rows; ++i) {
      const int gi = (i / args.nb * grid_rows + my_row) * args.nb + i % args.nb;
      const auto lo = static_cast<std::uint64_t>(std::min(gi, gj));
      const auto hi = static_cast<std::uint64_t>(std::max(gi, gj));
      a0[static_cast<std::size_t>(j) * lld + i] =
          hit::app::hashed_value(args.seed, lo, hi) + (gi == gj ? args.n : 0.0);
    }
  }
  const int one = 1;
  std::vector<double> times;
  for (int r = 0; r < args.warmup + args.reps; ++r) {
    a = a0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    pdpotrf_("L", &args.n, a.data(), &one, &one, desc, &info);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= args.warmup) times.push_back(t);
  }
  // The sum of L's lower triangle, to compare with hit-cholesky's --c-out if wanted.
  double local_sum = 0;
  for (int j = 0; j < local_cols; ++j) {
    const int gj = (j / args.nb * grid_cols + my_col) * args.nb + j % args.nb;
    for (int i = 0; i < local_rows; ++i) {
      const int gi = (i / args.nb * grid_rows + my_row) * args.nb + i % args.nb;
      if (gi >= gj) local_sum += a[static_cast<std::size_t>(j) * lld + i];
    }
  }
  double sum = 0;
  MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double t = hit::app::median(times);
    const double flops = static_cast<double>(args.n) * args.n * args.n / 3.0;
    std::printf(
        "{\"app\":\"pdpotrf\",\"n\":%d,\"nb\":%d,\"grid\":[%d,%d],\"time_s\":%.6f,"
        "\"gflops\":%.3f,\"info\":%d,\"checksum\":%.10g}\n",
        args.n, args.nb, grid_rows, grid_cols, t, flops / t * 1e-9, info, sum);
  }
  Cblacs_gridexit(context);
  MPI_Finalize();
  return info == 0 ? 0 : 1;
}
