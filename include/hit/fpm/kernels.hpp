#pragma once
// Built-in benchmark kernels for model building (hit-fpm build) on the host CPU.

#include <cstdint>

#include "hit/fpm/benchmark.hpp"

namespace hit::fpm {

// The block update of the column-based matrix product (seed 001 §4.1, seed 000 §1.4): one unit is
// the update of one b×b block of C by a b×b block of the pivot column and one of the pivot row.
// d units are a nearly square m×n' arrangement of blocks (m = floor(sqrt(d)), plus a partial row
// for the remainder), updated by OpenBLAS cblas_dgemm; 2·b³ flops per unit.
BenchmarkKernel gemm_block_kernel(int block);

// One Jacobi sweep over rows of an N-column system: a unit is one row,
// x_new[i] = (b[i] − Σ_{j≠i} A[i][j]·x[j]) / A[i][i]; 2·N flops per unit.
BenchmarkKernel jacobi_row_kernel(std::int64_t columns);

}  // namespace hit::fpm
