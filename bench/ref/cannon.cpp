// ref-cannon: a plain, hand-written MPI + CBLAS Cannon, the reference hit-cannon is measured
// against. No hitmap++: MPI_Cart_create, MPI_Sendrecv into a second buffer (swapped in, no copy
// of the block) and cblas_dgemm, as a careful programmer writes it by hand; shifts that move
// nothing (one process per grid line) are skipped. n must be a multiple of the grid side.
//   mpiexec.mpich -n 4 ref-cannon --n 2048 [--reps 3] [--warmup 1] [--check] [--seed 1]
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "../../examples/common/app.hpp"

namespace {

struct Args {
  long n = 1024;
  int reps = 3;
  int warmup = 1;
  bool check = false;
  unsigned long long seed = 1;
  bool seed_ok = true;  // false: --seed is not a whole number from 0 to 2^64 - 1
  std::string seed_text;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--n")
      a.n = std::atol(next());
    else if (k == "--reps")
      a.reps = std::atoi(next());
    else if (k == "--warmup")
      a.warmup = std::atoi(next());
    else if (k == "--seed") {
      // Checked whole (strtoul took "-1" as 2^64 - 1 and clamped values too large, silently).
      const std::string text = next();
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), a.seed);
      a.seed_text = text;
      a.seed_ok = !text.empty() && ec == std::errc() && end == text.data() + text.size();
    } else if (k == "--check")
      a.check = true;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Args args = parse(argc, argv);
  int size = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(size))));
  if (!args.seed_ok) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::fprintf(stderr, "ref-cannon: error: --seed '%s' is not a whole number from 0 to %llu\n",
                   args.seed_text.substr(0, 40).c_str(),
                   std::numeric_limits<unsigned long long>::max());
    }
    MPI_Finalize();
    return 2;
  }
  if (q * q != size || args.n % q != 0 || args.n < 1 || args.reps < 1) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr, "ref-cannon: needs a square process count and n %% sqrt(P) == 0\n");
    MPI_Finalize();
    return 2;
  }
  int dims[2] = {q, q};
  int periods[2] = {1, 1};
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
  MPI_Comm_rank(grid, &rank);
  int coords[2];
  MPI_Cart_coords(grid, rank, 2, coords);
  const long b = args.n / q;
  const std::size_t elems = static_cast<std::size_t>(b * b);
  std::vector<double> a0(elems), b0(elems), A(elems), B(elems), C(elems);
  for (long i = 0; i < b; ++i) {
    for (long j = 0; j < b; ++j) {
      const auto gi = static_cast<std::uint64_t>(coords[0] * b + i);
      const auto gj = static_cast<std::uint64_t>(coords[1] * b + j);
      a0[static_cast<std::size_t>(i * b + j)] = hit::app::hashed_value(args.seed, gi, gj);
      b0[static_cast<std::size_t>(i * b + j)] = hit::app::hashed_value(args.seed + 1, gi, gj);
    }
  }
  const int count = static_cast<int>(elems);
  // Two buffers per operand: a shift receives into the spare one and the pointers swap, so no
  // block is copied before it is sent (what MPI_Sendrecv_replace does internally).
  std::vector<double> A2(elems), B2(elems);
  double* a_cur = A.data();
  double* a_spare = A2.data();
  double* b_cur = B.data();
  double* b_spare = B2.data();
  const auto shift = [&](double*& cur, double*& spare, int to, int from, int tag) {
    if (to == rank && from == rank) return;  // a shift by a whole turn moves nothing
    MPI_Sendrecv(cur, count, MPI_DOUBLE, to, tag, spare, count, MPI_DOUBLE, from, tag, grid,
                 MPI_STATUS_IGNORE);
    std::swap(cur, spare);
  };
  std::vector<double> times;
  double compute = 0;
  double comm = 0;
  for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
    a_cur = A.data();
    a_spare = A2.data();
    b_cur = B.data();
    b_spare = B2.data();
    A = a0;
    B = b0;
    std::fill(C.begin(), C.end(), 0.0);
    double t_comp = 0;
    double t_comm = 0;
    MPI_Barrier(grid);
    const double start = MPI_Wtime();
    double t = MPI_Wtime();
    int src = 0;
    int dst = 0;
    // Initial alignment: row i of A moves i places left, column j of B moves j places up.
    MPI_Cart_shift(grid, 1, -coords[0], &src, &dst);
    shift(a_cur, a_spare, dst, src, 1);
    MPI_Cart_shift(grid, 0, -coords[1], &src, &dst);
    shift(b_cur, b_spare, dst, src, 2);
    t_comm += MPI_Wtime() - t;
    int left = 0, right = 0, up = 0, down = 0;
    MPI_Cart_shift(grid, 1, -1, &right, &left);
    MPI_Cart_shift(grid, 0, -1, &down, &up);
    for (int s = 0; s < q; ++s) {
      t = MPI_Wtime();
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(b),
                  static_cast<int>(b), static_cast<int>(b), 1.0, a_cur, static_cast<int>(b), b_cur,
                  static_cast<int>(b), 1.0, C.data(), static_cast<int>(b));
      t_comp += MPI_Wtime() - t;
      if (s + 1 < q) {
        t = MPI_Wtime();
        shift(a_cur, a_spare, left, right, 3);
        shift(b_cur, b_spare, up, down, 4);
        t_comm += MPI_Wtime() - t;
      }
    }
    MPI_Barrier(grid);
    double elapsed = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, grid);
    if (rep >= args.warmup) {
      times.push_back(elapsed);
      compute += t_comp / args.reps;
      comm += t_comm / args.reps;
    }
  }

  // Own correctness check: gather C on rank 0 and compare with one serial dgemm.
  bool passed = true;
  double max_rel = 0;
  if (args.check) {
    std::vector<double> all(rank == 0 ? static_cast<std::size_t>(args.n * args.n) : 0);
    std::vector<double> blocks(rank == 0 ? all.size() : 0);
    MPI_Gather(C.data(), count, MPI_DOUBLE, blocks.data(), count, MPI_DOUBLE, 0, grid);
    if (rank == 0) {
      const auto n = static_cast<std::size_t>(args.n);
      std::vector<double> fa(n * n), fb(n * n), ref(n * n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          fa[i * n + j] = hit::app::hashed_value(args.seed, i, j);
          fb[i * n + j] = hit::app::hashed_value(args.seed + 1, i, j);
        }
      }
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.0, fa.data(), static_cast<int>(n),
                  fb.data(), static_cast<int>(n), 0.0, ref.data(), static_cast<int>(n));
      double scale = 0;
      double diff = 0;
      for (int p = 0; p < size; ++p) {
        int pc[2];
        MPI_Cart_coords(grid, p, 2, pc);
        for (long i = 0; i < b; ++i) {
          for (long j = 0; j < b; ++j) {
            const double got =
                blocks[static_cast<std::size_t>(p) * elems + static_cast<std::size_t>(i * b + j)];
            const double want =
                ref[static_cast<std::size_t>((pc[0] * b + i) * args.n + pc[1] * b + j)];
            scale = std::max(scale, std::abs(want));
            diff = std::max(diff, std::abs(got - want));
          }
        }
      }
      max_rel = diff / std::max(scale, 1e-300);
      passed = max_rel <= 1e-10;
    }
    MPI_Bcast(&max_rel, 1, MPI_DOUBLE, 0, grid);
    passed = max_rel <= 1e-10;
  }

  double max_compute = compute;
  MPI_Reduce(&compute, &max_compute, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
  if (rank == 0) {
    std::sort(times.begin(), times.end());
    const double med = times.size() % 2
                           ? times[times.size() / 2]
                           : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
    const double flops = 2.0 * std::pow(static_cast<double>(args.n), 3.0);
    std::printf(
        "{\"app\":\"ref-cannon\",\"n\":%ld,\"ranks\":%d,\"reps\":%d,\"time_s\":%.6f,"
        "\"time_min_s\":%.6f,\"time_max_s\":%.6f,\"gflops\":%.3f,\"compute_s\":%.6f,"
        "\"comm_s\":%.6f,\"check\":{\"ran\":%s,\"passed\":%s,\"max_rel_error\":%.3e}}\n",
        args.n, size, args.reps, med, times.front(), times.back(), flops / med * 1e-9, max_compute,
        comm, args.check ? "true" : "false", passed ? "true" : "false", max_rel);
  }
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return passed ? 0 : 1;
}
