#pragma once
// The four tile kernels of hit-cholesky, as hit::Kernels (one body per device kind; an emulated
// device runs the cpu body): with L the lower Cholesky factor built tile by tile,
//   potrf(A_kk):          A_kk = L_kk · L_kkᵀ, L_kk over A_kk's lower triangle;
//   trsm(L_kk, A_ik):     A_ik := A_ik · L_kk⁻ᵀ           (the panel below the diagonal tile);
//   syrk(L_ik, A_ii):     A_ii := A_ii − L_ik · L_ikᵀ     (lower triangle of a diagonal tile);
//   gemm(L_ik, L_jk, A_ij): A_ij := A_ij − L_ik · L_jkᵀ   (a tile below the diagonal).
// Every tile is row-major with unit column steps (the tiles of a layout of contiguous blocks).
// Each body works on the whole tile it gets, in one LAPACK or BLAS call: launch them with a
// `single` partition over the written tile.

#include "hit/kernel.hpp"

namespace hit::cholesky {

// `column` is the tile column, named by the error a matrix that is not positive definite raises.
template <class T>
Kernel<View<T>, index_t> potrf();
template <class T>
Kernel<View<const T>, View<T>> trsm();
template <class T>
Kernel<View<const T>, View<T>> syrk();
template <class T>
Kernel<View<const T>, View<const T>, View<T>> gemm();

}  // namespace hit::cholesky
