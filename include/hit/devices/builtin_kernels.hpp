#pragma once
// The library's own kernels: the ones its programs launch and its benchmark kernels measure
// (hit/balance/kernels.hpp), so a model is of the code that runs.

#include "hit/kernel.hpp"
#include "hit/view.hpp"

namespace hit {

// C += A * B on row-major tiles, by positions: for the rows r and columns c of C inside the
// domain, C[r][c] += sum_k A[r][k] * B[k][c], with k over A's columns (== B's rows). cpu: CBLAS
// (OpenBLAS) gemm per block; cuda: cuBLAS. For double and float.
template <class T>
[[nodiscard]] Kernel<View<const T>, View<const T>, View<T>> gemm_accumulate();

// One 5-point Jacobi sweep: out(i,j) = 0.25 * (in(i-1,j) + in(i+1,j) + in(i,j-1) + in(i,j+1)) for
// every (i,j) of the domain (array indices; `in` must hold the domain and its 4 neighbours, e.g.
// through its ghost cells). cpu: rows of a block, two at a time where they are unit-stride; cuda:
// one thread per index. Both add up, down, left, right in that order. double and float.
template <class T>
[[nodiscard]] Kernel<View<const T>, View<T>> jacobi5();

}  // namespace hit
