#pragma once
// The cuda body of hit-jacobi's kernel (five_point_cuda.cu). Only hit/view.hpp here: nvcc
// compiles the .cu, and the kernel's data are Views and a Box.

#include "hit/view.hpp"

namespace hit::jacobi {

void five_point_cuda(const KernelContext& ctx, View<const double> in, View<double> out);
void five_point_cuda(const KernelContext& ctx, View<const float> in, View<float> out);

}  // namespace hit::jacobi
