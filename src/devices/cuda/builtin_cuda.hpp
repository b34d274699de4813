#pragma once
// CUDA bodies of the built-in kernels (defined in this folder, compiled only with CUDA). Plain
// C++17, so nvcc can compile the sources that include it.

#include "hit/view.hpp"

namespace hit::detail {

void gemm_accumulate_cuda(const KernelContext& ctx, View<const double> a, View<const double> b,
                          View<double> c);
void gemm_accumulate_cuda(const KernelContext& ctx, View<const float> a, View<const float> b,
                          View<float> c);
void jacobi5_cuda(const KernelContext& ctx, View<const double> in, View<double> out);
void jacobi5_cuda(const KernelContext& ctx, View<const float> in, View<float> out);

}  // namespace hit::detail
