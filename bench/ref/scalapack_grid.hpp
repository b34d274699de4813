#pragma once
// What the ScaLAPACK references (ref-pdgemm, ref-pdpotrf, ref-pdgeqrf) share: their command
// line, the BLACS process grid, and one m×n matrix (n×n unless --m) in ScaLAPACK's 2-D
// block-cyclic layout with nb×nb blocks (column-major local blocks and the array descriptor).
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
}

namespace ref {

struct GridArgs {
  int m = 0;  // rows; 0: n
  int n = 1024;
  int nb = 256;
  int rows = 0;
  int cols = 0;
  int reps = 3;
  int warmup = 1;
  int seed = 1;
  std::string seed_error;  // set when --seed is not a whole number from 0 (atoi took "-1" as is)
};

// --m --n --nb --rows --cols --reps --warmup --seed; rows×cols defaults to the most square grid.
inline GridArgs parse_grid_args(int argc, char** argv, int size) {
  GridArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const int v = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    int* field = k == "--m"        ? &a.m
                 : k == "--n"      ? &a.n
                 : k == "--nb"     ? &a.nb
                 : k == "--rows"   ? &a.rows
                 : k == "--cols"   ? &a.cols
                 : k == "--reps"   ? &a.reps
                 : k == "--warmup" ? &a.warmup
                 : k == "--seed"   ? &a.seed
                                   : nullptr;
    if (field != nullptr) {
      *field = v;
      ++i;
    }
    if (field == &a.seed) {
      const std::string text = i < argc ? argv[i] : "";
      int seed = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || seed < 0) {
        a.seed_error = "--seed '" + text.substr(0, 40) + "' is not a whole number from 0 to " +
                       std::to_string(std::numeric_limits<int>::max());
      }
    }
  }
  if (a.m <= 0) a.m = a.n;
  if (a.rows <= 0 || a.cols <= 0) {
    a.rows = static_cast<int>(std::sqrt(static_cast<double>(size)));
    while (size % a.rows != 0) --a.rows;
    a.cols = size / a.rows;
  }
  return a;
}

// Whether the command line can run on `size` processes: else rank 0 prints one line naming
// `program` and what is wrong, and the caller exits with status 2 on every rank. `tall`: m may
// exceed n (a QR); otherwise the matrix is square.
inline bool usable(const GridArgs& a, int rank, int size, const char* program, bool tall) {
  std::string problem = a.seed_error;
  if (problem.empty() && (a.rows * a.cols != size || a.n < 1 || a.nb < 1 || a.reps < 1 ||
                          (tall ? a.m < a.n : a.m != a.n))) {
    problem = tall ? "needs rows*cols == P, m >= n >= 1, nb >= 1"
                   : "needs rows*cols == P, n >= 1, nb >= 1";
  }
  if (problem.empty()) return true;
  if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", program, problem.c_str());
  return false;
}

// The BLACS grid of the run and this process's part of an m×n block-cyclic matrix.
class BlockCyclicMatrix {
 public:
  BlockCyclicMatrix(const GridArgs& a) : m_(a.m > 0 ? a.m : a.n), n_(a.n), nb_(a.nb) {
    Cblacs_get(-1, 0, &context_);
    Cblacs_gridinit(&context_, "Row", a.rows, a.cols);
    Cblacs_gridinfo(context_, &grid_rows_, &grid_cols_, &my_row_, &my_col_);
    const int zero = 0;
    local_rows_ = numroc_(&m_, &nb_, &my_row_, &zero, &grid_rows_);
    local_cols_ = numroc_(&n_, &nb_, &my_col_, &zero, &grid_cols_);
    lld_ = std::max(1, local_rows_);
    int info = 0;
    descinit_(desc_, &m_, &n_, &nb_, &nb_, &zero, &zero, &context_, &lld_, &info);
  }
  ~BlockCyclicMatrix() { Cblacs_gridexit(context_); }
  BlockCyclicMatrix(const BlockCyclicMatrix&) = delete;
  BlockCyclicMatrix& operator=(const BlockCyclicMatrix&) = delete;

  const int* desc() const noexcept { return desc_; }
  int grid_rows() const noexcept { return grid_rows_; }
  int grid_cols() const noexcept { return grid_cols_; }
  int local_cols() const noexcept { return local_cols_; }
  std::size_t elements() const noexcept {
    return static_cast<std::size_t>(lld_) * static_cast<std::size_t>(local_cols_);
  }
  // Calls fn(global row, global column, position in the local column-major array) for every
  // local element.
  template <class F>
  void for_each(F&& fn) const {
    for (int j = 0; j < local_cols_; ++j) {
      const int gj = (j / nb_ * grid_cols_ + my_col_) * nb_ + j % nb_;
      for (int i = 0; i < local_rows_; ++i) {
        const int gi = (i / nb_ * grid_rows_ + my_row_) * nb_ + i % nb_;
        fn(gi, gj,
           static_cast<std::size_t>(j) * static_cast<std::size_t>(lld_) +
               static_cast<std::size_t>(i));
      }
    }
  }

 private:
  int m_;
  int n_;
  int nb_;
  int context_ = 0;
  int grid_rows_ = 0, grid_cols_ = 0, my_row_ = 0, my_col_ = 0;
  int local_rows_ = 0, local_cols_ = 0, lld_ = 1;
  int desc_[9] = {};
};

}  // namespace ref
