#pragma once
// The four tile kernels of hit-qr, as hit::Kernels (an emulated device runs the cpu body): the
// tile QR of Buttari, Langou, Kurzak and Dongarra, as Song, Tomov and Dongarra run it on their
// heterogeneous runtime. With Q built from the Householder reflectors of each tile,
//   geqrt(A_kk, T_kk):             A_kk = Q_kk R_kk; R_kk over A_kk's upper triangle, the
//                                  reflectors below it, their block factors in T_kk;
//   tsqrt(R_kk, A_ik, T_ik):       [R_kk; A_ik] = Q_ik [R; 0]; R over R_kk, the reflectors in
//                                  A_ik (the triangle on top is the identity, not stored);
//   larfb(V_kk, T_kk, C, trans):   C := Q_kkᵀ C (trans) or Q_kk C, C a tile of row k;
//   ssrfb(V_ik, T_ik, C_k, C_i, trans):
//                                  [C_k; C_i] := Q_ikᵀ [C_k; C_i] (trans) or Q_ik [C_k; C_i].
// Every tile is row-major with unit column steps. LAPACK is column-major: a row-major tile is
// the column-major storage of its transpose, and the QR of A is the LQ of Aᵀ (Aᵀ = L·Q gives
// A = Qᵀ·Lᵀ, R = Lᵀ in the same memory), so the bodies call LAPACK's tile LQ routines (gelqt,
// tplqt, gemlqt, tpmlqt) on the tiles in place, with no copy.
//
// A T tile holds the block factors of one tile's reflectors: `inner_block(n)` columns of
// reflectors per block, as LAPACK's tile routines keep them (column c of the factors is row c of
// the T tile: n rows of inner_block(n) elements).

#include "hit/kernel.hpp"

namespace hit::qr {

// The reflectors per block of a tile of `n` columns (LAPACK's inner blocking, MB / NB).
constexpr index_t inner_block(index_t n) {
  return n < 32 ? (n < 1 ? 1 : n) : 32;
}

// Which way larfb and ssrfb apply the tile's Q: Qᵀ factorises and forms Qᵀb; Q forms Q.
enum class Apply : unsigned char { q_transposed, q };

template <class T>
Kernel<View<T>, View<T>> geqrt();
template <class T>
Kernel<View<T>, View<T>, View<T>> tsqrt();
template <class T>
Kernel<View<const T>, View<const T>, View<T>, Apply> larfb();
template <class T>
Kernel<View<const T>, View<const T>, View<T>, View<T>, Apply> ssrfb();

// The flops of each (an m-row tile below a diagonal tile of order n, c columns updated): what
// the runtime weighs the critical path by.
double geqrt_flops(double n);
double tsqrt_flops(double m, double n);
double larfb_flops(double n, double c);
double ssrfb_flops(double m, double n, double c);

}  // namespace hit::qr
