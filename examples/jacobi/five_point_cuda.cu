// The cuda body of hit-jacobi's kernel: one CUDA thread per index of the launch's domain, over
// the partition's grid of thread blocks (grid-stride along y, whose extent CUDA caps at 65535).

#include <cuda_runtime.h>

#include "hit/cuda_grid.hpp"

#include "five_point_cuda.hpp"

namespace hit::jacobi {
namespace {

template <class T>
__global__ void sweep(View<const T> in, View<T> out, Box domain) {
  for_each_grid_index(domain, [&](index_t gi, index_t gj) {
    // The neighbours by positions in `in`: one conversion per index, none per access.
    const index_t i = in.position(0, gi), j = in.position(1, gj);
    out(gi, gj) = T(0.25) * (in.local(i - 1, j) + in.local(i + 1, j) + in.local(i, j - 1) +
                             in.local(i, j + 1));
  });
}

template <class T>
void launch_sweep(const KernelContext& ctx, View<const T> in, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const CudaGrid g = cuda_grid(ctx);
  sweep<T><<<g.grid, g.block, 0, static_cast<cudaStream_t>(ctx.cuda_stream)>>>(in, out, ctx.domain);
}

}  // namespace

void five_point_cuda(const KernelContext& ctx, View<const double> in, View<double> out) {
  launch_sweep(ctx, in, out);
}
void five_point_cuda(const KernelContext& ctx, View<const float> in, View<float> out) {
  launch_sweep(ctx, in, out);
}

}  // namespace hit::jacobi
