// ref-pdgemm: ScaLAPACK's PDGEMM (Debian's MPICH build, the same MPI and BLAS as hitmap++), the
// reference hit-summa is measured against. A, B and C are n×n in ScaLAPACK's 2-D block-cyclic
// layout with nb×nb blocks on a rows×cols BLACS grid; the timed call is one PDGEMM. Prints one JSON
// line (median of --reps after --warmup untimed calls).
//   mpiexec.mpich -n 4 ref-pdgemm --n 4096 [--nb 256] [--rows 2 --cols 2] [--reps 3] [--warmup 1]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../examples/common/app.hpp"

extern "C" {
void Cblacs_pinfo(int* rank, int* procs);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
}

namespace {

struct Args {
  int n = 1024;
  int nb = 256;
  int rows = 0;
  int cols = 0;
  int reps = 3;
  int warmup = 1;
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
    if (rank == 0) std::fprintf(stderr, "ref-pdgemm: needs rows*cols == P, n >= 1, nb >= 1\n");
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
  // Column-major local blocks; the values are those hit-summa generates for the same indices.
  const auto elements = static_cast<std::size_t>(lld) * static_cast<std::size_t>(local_cols);
  std::vector<double> a(elements), b(elements), c(elements, 0.0);
  for (int j = 0; j < local_cols; ++j) {
    const int gj = (j / args.nb * grid_cols + my_col) * args.nb + j % args.nb;
    for (int i = 0; i < local_rows; ++i) {
      const int gi = (i / args.nb * grid_rows + my_row) * args.nb + i % args.nb;
      const std::size_t at = static_cast<std::size_t>(j) * lld + i;
      a[at] =
          hit::app::hashed_value(1, static_cast<std::uint64_t>(gi), static_cast<std::uint64_t>(gj));
      b[at] =
          hit::app::hashed_value(2, static_cast<std::uint64_t>(gi), static_cast<std::uint64_t>(gj));
    }
  }
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  std::vector<double> times;
  for (int r = 0; r < args.warmup + args.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    pdgemm_("N", "N", &args.n, &args.n, &args.n, &alpha, a.data(), &one, &one, desc, b.data(), &one,
            &one, desc, &beta, c.data(), &one, &one, desc);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= args.warmup) times.push_back(t);
  }
  double local_sum = 0;
  for (int j = 0; j < local_cols; ++j) {
    for (int i = 0; i < local_rows; ++i) local_sum += c[static_cast<std::size_t>(j) * lld + i];
  }
  double sum = 0;
  MPI_Reduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double t = hit::app::median(times);
    const double flops = 2.0 * args.n * static_cast<double>(args.n) * args.n;
    std::printf(
        "{\"app\":\"pdgemm\",\"n\":%d,\"nb\":%d,\"grid\":[%d,%d],\"time_s\":%.6f,"
        "\"gflops\":%.3f,\"checksum\":%.10g}\n",
        args.n, args.nb, grid_rows, grid_cols, t, flops / t * 1e-9, sum);
  }
  Cblacs_gridexit(context);
  MPI_Finalize();
  return 0;
}
