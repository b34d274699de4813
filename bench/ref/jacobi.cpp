// ref-jacobi: a plain, hand-written MPI 2-D Jacobi, the reference hit-jacobi is measured against.
// No hitmap++: MPI_Dims_create + MPI_Cart_create, rows exchanged with MPI_Sendrecv, columns with a
// vector datatype. Same problem as hit-jacobi (N×N, fixed boundary: top edge 1, other edges i/N).
//   mpiexec.mpich -n 4 ref-jacobi --n 2048 --iters 100 [--reps 3] [--warmup 1] [--check]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double initial_value(long i, long j, long n) {
  if (i == 0) return 1.0;
  if (i == n - 1 || j == 0 || j == n - 1) return static_cast<double>(i) / static_cast<double>(n);
  return 0.0;
}

// Rows [r0, r0+rows) and columns [c0, c0+cols) of an n×n grid, stored with one ghost cell per side.
struct Block {
  long r0, rows, c0, cols;
  long ld() const { return cols + 2; }
};

void init(std::vector<double>& u, const Block& b, long n) {
  for (long i = 0; i < b.rows; ++i) {
    for (long j = 0; j < b.cols; ++j) {
      u[static_cast<std::size_t>((i + 1) * b.ld() + j + 1)] = initial_value(b.r0 + i, b.c0 + j, n);
    }
  }
}

void sweep(const std::vector<double>& in, std::vector<double>& out, const Block& b, long n) {
  // Boundary rows and columns are copied; the interior loop has no branch, so it vectorises.
  const long ld = b.ld();
  const long jlo = std::max(b.c0, 1L) - b.c0;
  const long jhi = std::min(b.c0 + b.cols, n - 1) - b.c0;
  for (long i = 0; i < b.rows; ++i) {
    const long gi = b.r0 + i;
    // The two grids never overlap: __restrict lets the compiler vectorise without a run-time
    // aliasing check.
    const double* __restrict c = in.data() + (i + 1) * ld + 1;
    double* __restrict o = out.data() + (i + 1) * ld + 1;
    if (gi == 0 || gi == n - 1) {
      std::memcpy(o, c, static_cast<std::size_t>(b.cols) * sizeof(double));
      continue;
    }
    for (long j = 0; j < jlo; ++j) o[j] = c[j];
    for (long j = jlo; j < jhi; ++j) o[j] = 0.25 * (c[j - ld] + c[j + ld] + c[j - 1] + c[j + 1]);
    for (long j = std::max(jhi, 0L); j < b.cols; ++j) o[j] = c[j];
  }
}

long part_begin(long n, int parts, int p) {
  const long base = n / parts;
  const long extra = n % parts;
  return p * base + std::min<long>(p, extra);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long n = 1024;
  int iters = 100;
  int reps = 3;
  int warmup = 1;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : "0"; };
    if (k == "--n")
      n = std::atol(next());
    else if (k == "--iters")
      iters = std::atoi(next());
    else if (k == "--reps")
      reps = std::atoi(next());
    else if (k == "--warmup")
      warmup = std::atoi(next());
    else if (k == "--check")
      check = true;
  }
  int size = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  int periods[2] = {0, 0};
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Comm_rank(grid, &rank);
  int coords[2];
  MPI_Cart_coords(grid, rank, 2, coords);
  Block b{part_begin(n, dims[0], coords[0]), 0, part_begin(n, dims[1], coords[1]), 0};
  b.rows = part_begin(n, dims[0], coords[0] + 1) - b.r0;
  b.cols = part_begin(n, dims[1], coords[1] + 1) - b.c0;
  const long ld = b.ld();
  std::vector<double> u(static_cast<std::size_t>((b.rows + 2) * ld), 0.0);
  std::vector<double> v(u.size(), 0.0);
  int up, down, left, right;
  MPI_Cart_shift(grid, 0, 1, &up, &down);
  MPI_Cart_shift(grid, 1, 1, &left, &right);
  MPI_Datatype column;
  MPI_Type_vector(static_cast<int>(b.rows), 1, static_cast<int>(ld), MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  const int row_count = static_cast<int>(b.cols);

  auto exchange = [&](std::vector<double>& x) {
    double* d = x.data();
    MPI_Sendrecv(d + ld + 1, row_count, MPI_DOUBLE, up, 0, d + (b.rows + 1) * ld + 1, row_count,
                 MPI_DOUBLE, down, 0, grid, MPI_STATUS_IGNORE);
    MPI_Sendrecv(d + b.rows * ld + 1, row_count, MPI_DOUBLE, down, 1, d + 1, row_count, MPI_DOUBLE,
                 up, 1, grid, MPI_STATUS_IGNORE);
    MPI_Sendrecv(d + ld + 1, 1, column, left, 2, d + ld + b.cols + 1, 1, column, right, 2, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(d + ld + b.cols, 1, column, right, 3, d + ld, 1, column, left, 3, grid,
                 MPI_STATUS_IGNORE);
  };

  std::vector<double> times;
  double compute = 0;
  double comm = 0;
  for (int rep = 0; rep < warmup + reps; ++rep) {
    init(u, b, n);
    init(v, b, n);
    double t_comp = 0;
    double t_comm = 0;
    MPI_Barrier(grid);
    const double start = MPI_Wtime();
    for (int it = 0; it < iters; ++it) {
      std::vector<double>& cur = it % 2 == 0 ? u : v;
      std::vector<double>& nxt = it % 2 == 0 ? v : u;
      double t = MPI_Wtime();
      exchange(cur);
      t_comm += MPI_Wtime() - t;
      t = MPI_Wtime();
      sweep(cur, nxt, b, n);
      t_comp += MPI_Wtime() - t;
    }
    MPI_Barrier(grid);
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, grid);
    if (rep >= warmup) {
      times.push_back(elapsed);
      compute += t_comp / reps;
      comm += t_comm / reps;
    }
  }
  const std::vector<double>& result = iters % 2 == 0 ? u : v;

  // Own check: every rank compares its block with a serial run of the whole grid, bit for bit.
  bool passed = true;
  if (check) {
    Block whole{0, n, 0, n};
    std::vector<double> a(static_cast<std::size_t>((n + 2) * (n + 2)), 0.0);
    std::vector<double> c(a.size(), 0.0);
    init(a, whole, n);
    init(c, whole, n);
    for (int it = 0; it < iters; ++it) sweep(it % 2 == 0 ? a : c, it % 2 == 0 ? c : a, whole, n);
    const std::vector<double>& ref = iters % 2 == 0 ? a : c;
    int bad = 0;
    for (long i = 0; i < b.rows; ++i) {
      for (long j = 0; j < b.cols; ++j) {
        const double got = result[static_cast<std::size_t>((i + 1) * ld + j + 1)];
        const double want = ref[static_cast<std::size_t>((b.r0 + i + 1) * (n + 2) + b.c0 + j + 1)];
        if (std::memcmp(&got, &want, sizeof(double)) != 0) ++bad;
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, grid);
    passed = bad == 0;
  }
  if (rank == 0) {
    std::sort(times.begin(), times.end());
    const double med = times.size() % 2
                           ? times[times.size() / 2]
                           : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
    const double cells = static_cast<double>(n - 2) * static_cast<double>(n - 2) * iters;
    std::printf(
        "{\"app\":\"ref-jacobi\",\"n\":%ld,\"iters\":%d,\"ranks\":%d,\"reps\":%d,"
        "\"time_s\":%.6f,\"time_min_s\":%.6f,\"time_max_s\":%.6f,\"mcells_per_s\":%.3f,"
        "\"compute_s\":%.6f,\"comm_s\":%.6f,\"check\":{\"ran\":%s,\"passed\":%s}}\n",
        n, iters, size, reps, med, times.front(), times.back(), cells / med * 1e-6, compute, comm,
        check ? "true" : "false", passed ? "true" : "false");
  }
  MPI_Type_free(&column);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return passed ? 0 : 1;
}
