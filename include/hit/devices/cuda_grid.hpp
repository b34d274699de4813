#pragma once
// The CUDA launch geometry a partition gives a body (KernelContext::grid and threads_per_block),
// for sources nvcc compiles. CUDA caps a grid's y extent at 65535: kernels launched with this
// geometry walk the domain's rows with a grid stride along y.

#include "hit/view.hpp"

// nvcc makes dim3 known in every source it compiles (it includes the CUDA runtime itself).
#if defined(__CUDACC__)
namespace hit {

struct CudaGrid {
  dim3 grid;
  dim3 block;
};

inline CudaGrid cuda_grid(const KernelContext& ctx) {
  const auto gy = ctx.grid[1] < 65535 ? ctx.grid[1] : 65535;
  return {dim3(static_cast<unsigned>(ctx.grid[0]), static_cast<unsigned>(gy), 1),
          dim3(static_cast<unsigned>(ctx.threads_per_block[0]),
               static_cast<unsigned>(ctx.threads_per_block[1]), 1)};
}

// Calls f(i, j) for every index (array coordinates) of a 2-D `domain`, one thread per column and
// rows by grid stride, in a kernel launched with cuda_grid().
template <class F>
__device__ void for_each_grid_index(const Box& domain, F&& f) {
  const index_t rows = domain.extent(0);
  const index_t cols = domain.extent(1);
  const index_t j = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const index_t gj = domain.begin[1] + j * domain.step[1];
  for (index_t i = static_cast<index_t>(blockIdx.y) * blockDim.y + threadIdx.y; i < rows;
       i += static_cast<index_t>(gridDim.y) * blockDim.y) {
    f(domain.begin[0] + i * domain.step[0], gj);
  }
}

}  // namespace hit
#endif
