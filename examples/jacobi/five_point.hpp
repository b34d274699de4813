#pragma once
// The kernel of hit-jacobi, written in the example to show how a kernel is made: one sweep of
// the 5-point stencil, out(i,j) = 0.25 * (in(i-1,j) + in(i+1,j) + in(i,j-1) + in(i,j+1)) for
// every index (i,j) of the block it is given. `in` must hold the block and its four neighbours
// (through ghost cells). A Kernel has a name and one body per device kind: the cpu body (also
// what an emulated device runs) is plain C++ (five_point.cpp); the cuda body launches a CUDA
// kernel on the launch's stream (five_point_cuda.cu, built when the CUDA backend is).

#include "hit/kernel.hpp"

namespace hit::jacobi {

template <class T>
Kernel<View<const T>, View<T>> five_point();

}  // namespace hit::jacobi
