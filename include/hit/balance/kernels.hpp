#pragma once
// Built-in benchmark kernels for model building (hit-fpm build, the dynamic loops, hit-bench-fpm):
// gemm_launch_kernel, jacobi_launch_kernel, spmv_launch_kernel, stencil_launch_kernel and
// launch_kernel run the library's kernels (or a program's) through hit::launch on the device the
// rank is bound to, so an emulated device applies its slowdown, bandwidth and capacity, and a
// GPU's point includes its transfers. Each run is timed by its launch records (the launch without
// waiting for the device lock). They measure the Kernel objects the programs launch: no second
// body of any kernel lives here.

#include <cstdint>
#include <string>
#include <string_view>

#include "hit/balance/benchmark.hpp"
#include "hit/kernel.hpp"
#include "hit/view.hpp"

namespace hit {
class Environment;
}

namespace hit::balance {

// ---- through hit::launch ---------------------------------------------------------------------

// The block update of the column-based matrix product (FuPerMod §4.1) as
// hit::gemm_accumulate<double> launches: one unit is the update of one b×b block of C by a b×b
// block of the pivot column and one of the pivot row; d units are a nearly square m×c arrangement
// of blocks (m = floor(sqrt(d)), c = d / m) and a partial block row for the remainder (a second
// launch). 2·b³ flops per unit. `partition`: the partition spec of the launches (default `single`:
// one BLAS call). The kernel keeps a reference to `env`, which must outlive it.
// Error(invalid_argument) for a block size outside 1..4096.
BenchmarkKernel gemm_launch_kernel(Environment& env, int block, std::string partition = "single");

// One panel step of the column-based (SUMMA-style) matrix product at a fixed height, as
// hierarchical partitioning measures a node's devices (docs/fpm.md, "Hierarchical partitioning"):
// one unit is `unit_columns` columns of a `rows`-tall part of C, and d units are one
// hit::gemm_accumulate<double> launch C(rows × d·u) += A(rows × b) · B(b × d·u), u = unit_columns;
// 2·rows·b·u flops per unit. C is a hit::Resident, as the application's result is: the first run
// (the warm-up) stages it, the timed runs stage only the panels. Error(invalid_argument) for a
// block size outside 1..4096, or rows or unit_columns outside 1..2^24.
BenchmarkKernel gemm_panel_launch_kernel(Environment& env, int block, std::int64_t rows,
                                         std::int64_t unit_columns,
                                         std::string partition = "single");

// One 5-point Jacobi sweep as a hit::jacobi5<double> launch: one unit is one row of N cells,
// out(i,j) = (in(i±1,j) + in(i,j±1)) / 4 over d rows, `in` staged with its halo (d+2 rows of N+2)
// and `out` (d rows of N) copied back. 4·N flops per unit. `partition` default: `threads` (the
// rows split over the device's cores). With `resident`, `in` and `out` are hit::Residents, as in
// hit-jacobi: the first run (the warm-up) stages them and the timed runs only compute, which is
// the time hit-jacobi's balancer measures (--balance-models). Error(invalid_argument) for N outside
// 1..2^24.
BenchmarkKernel jacobi_launch_kernel(Environment& env, std::int64_t columns,
                                     std::string partition = "threads", bool resident = false);

// A program's own 2-D stencil kernel of radius 1, measured as jacobi_launch_kernel measures
// hit::jacobi5 (which is this with jacobi5<double>() and 4 flops per cell): one unit is one row
// of `columns` cells; d units are one launch of `kernel` with `in` = [0:d+2][0:N+2] (the rows with
// their ring of neighbours, filled with a smooth field) and `out` = [1:d+1][1:N+1], the partition
// made for `out` with the kernel's access patterns. `flops_per_cell` sets the complexity; `name`
// (default: the kernel's name and N) names the model. Registered under a name
// (register_benchmark_kernel, hit/balance/kernel_registry.hpp), it is what
// `hit-fpm build --kernel NAME` measures. Error(invalid_argument) for N outside 1..2^24 or flops
// per cell not positive.
using StencilKernel = Kernel<View<const double>, View<double>>;
struct StencilBenchmark {
  std::string name{};           // empty: "<kernel>(N=<columns>)"
  std::int64_t columns = 4096;  // N
  double flops_per_cell = 4;
  std::string partition = "threads";
  bool resident = false;  // in and out stay on the device between runs
};
BenchmarkKernel stencil_launch_kernel(Environment& env, StencilKernel kernel,
                                      StencilBenchmark options = {});

// One row of a sparse matrix product, as hit-cg's CG computes it: one unit is one row of the CSR
// product y = A·x of the 7-point Laplacian of a 64×64×∞ grid (the row structure of
// poisson3d:n=64: 6 on the diagonal, −1 for the neighbours inside the grid; for d <= 258048 the
// rows are exactly the first d rows of poisson3d:n=64), run as one hit::spmv launch over rows
// [0, d). The matrix (row_ptr, cols, values) and the vectors (x over the d + 4096 columns the rows
// reference, y over the rows) are hit::Residents, as in hit-cg: the first run (the warm-up) stages
// them, the timed runs only compute. Flops: 2 per nonzero (a multiply and an add), 2·nnz(d) in
// all: 14 for a row inside the grid, fewer on the grid's faces (13.875 per row over a plane above
// the first, 8 for row 0). `partition` default: `single` (hit-cg's default). Rows beyond
// 2^31 − 1 − 4096 (32-bit local column indices) are refused with Error(out_of_memory) by setup.
BenchmarkKernel spmv_launch_kernel(Environment& env, std::string partition = "single");

struct LaunchKernelOptions {
  int block = 64;               // gemm: b
  std::int64_t columns = 4096;  // jacobi: N
  std::string partition{};      // empty: the kernel's default
  bool resident = false;        // jacobi: the grid stays on the device between runs
};
// The kernel registered under `name` in env (hit/balance/kernel_registry.hpp: "gemm", "jacobi",
// "spmv" and any a program or plug-in added), made with `options`; Error(invalid_argument)
// listing the registered names otherwise. Defined in kernel_registry.cpp.
BenchmarkKernel launch_kernel(Environment& env, std::string_view name,
                              const LaunchKernelOptions& options = {});

}  // namespace hit::balance
