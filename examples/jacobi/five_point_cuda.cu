// The cuda body of hit-jacobi's kernel: one CUDA thread per index of the launch's domain, over
// the partition's grid of thread blocks (grid-stride along y, whose extent CUDA caps at 65535).

#include <cuda_runtime.h>

#include "five_point_cuda.hpp"

namespace hit::jacobi {
namespace {

template <class T>
__global__ void sweep(View<const T> in, View<T> out, Box domain) {
  const index_t rows = domain.extent(0);
  const index_t cols = domain.extent(1);
  const index_t j = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const index_t gj = domain.begin[1] + j * domain.step[1];
  for (index_t i = static_cast<index_t>(blockIdx.y) * blockDim.y + threadIdx.y; i < rows;
       i += static_cast<index_t>(gridDim.y) * blockDim.y) {
    const index_t gi = domain.begin[0] + i * domain.step[0];
    out.at(gi, gj) =
        T(0.25) * (in.at(gi - 1, gj) + in.at(gi + 1, gj) + in.at(gi, gj - 1) + in.at(gi, gj + 1));
  }
}

template <class T>
void launch_sweep(const KernelContext& ctx, View<const T> in, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const dim3 block(static_cast<unsigned>(ctx.threads_per_block[0]),
                   static_cast<unsigned>(ctx.threads_per_block[1]), 1);
  const auto gy = ctx.grid[1] < 65535 ? ctx.grid[1] : 65535;
  const dim3 grid(static_cast<unsigned>(ctx.grid[0]), static_cast<unsigned>(gy), 1);
  sweep<T><<<grid, block, 0, static_cast<cudaStream_t>(ctx.cuda_stream)>>>(in, out, ctx.domain);
}

}  // namespace

void five_point_cuda(const KernelContext& ctx, View<const double> in, View<double> out) {
  launch_sweep(ctx, in, out);
}
void five_point_cuda(const KernelContext& ctx, View<const float> in, View<float> out) {
  launch_sweep(ctx, in, out);
}

}  // namespace hit::jacobi
