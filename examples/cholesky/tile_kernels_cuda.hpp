#pragma once
// The cuda bodies of hit-cholesky's tile kernels (tile_kernels_cuda.cu): cuSOLVER's potrf and
// cuBLAS's trsm, syrk and gemm on the tiles in device memory, on the launch's stream. Only
// hit/view.hpp here: nvcc compiles the .cu.

#include "hit/view.hpp"

namespace hit::cholesky {

void potrf_cuda(const KernelContext& ctx, View<double> a, index_t column);
void potrf_cuda(const KernelContext& ctx, View<float> a, index_t column);
void trsm_cuda(const KernelContext& ctx, View<const double> l, View<double> a);
void trsm_cuda(const KernelContext& ctx, View<const float> l, View<float> a);
void syrk_cuda(const KernelContext& ctx, View<const double> l, View<double> a);
void syrk_cuda(const KernelContext& ctx, View<const float> l, View<float> a);
void gemm_cuda(const KernelContext& ctx, View<const double> li, View<const double> lj,
               View<double> a);
void gemm_cuda(const KernelContext& ctx, View<const float> li, View<const float> lj, View<float> a);

}  // namespace hit::cholesky
