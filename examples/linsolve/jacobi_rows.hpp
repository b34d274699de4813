#pragma once
// The kernel of hit-linsolve: one Jacobi update of the rows a process holds,
//   x_new(i) = (b(i) − Σ_{j≠i} A(i,j)·x(j)) / A(i,i),
// with b stored as column n of A. `a`: the process's rows of [A | b]; `x`: the whole vector;
// `x_new`: the process's rows. The sums run over j in ascending order, as the serial reference
// of --check does, so results agree bit for bit.

#include "hit/kernel.hpp"

namespace hit::linsolve {

template <class T>
Kernel<View<const T>, View<const T>, View<T>> jacobi_rows();

}  // namespace hit::linsolve
