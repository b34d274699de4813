// The CUDA body of the built-in jacobi5 kernel: one thread per index of the domain, over the
// partition's grid (grid-stride along y, whose extent CUDA limits to 65535 blocks).

#include <cuda_runtime.h>

#include "hit/devices/cuda_grid.hpp"

#include "devices/cuda/builtin_cuda.hpp"

namespace hit::detail {
namespace {

template <class T>
__global__ void jacobi5_kernel(View<const T> in, View<T> out, Box domain) {
  for_each_grid_index(domain, [&](index_t gi, index_t gj) {
    // The neighbours by positions in `in`: one conversion per index, none per access.
    const index_t i = in.position(0, gi), j = in.position(1, gj);
    out(gi, gj) = T(0.25) * (in.local(i - 1, j) + in.local(i + 1, j) + in.local(i, j - 1) +
                             in.local(i, j + 1));
  });
}

template <class T>
void launch_jacobi5(const KernelContext& ctx, View<const T> in, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const CudaGrid g = cuda_grid(ctx);
  jacobi5_kernel<T>
      <<<g.grid, g.block, 0, static_cast<cudaStream_t>(ctx.cuda_stream)>>>(in, out, ctx.domain);
}

}  // namespace

void jacobi5_cuda(const KernelContext& ctx, View<const double> in, View<double> out) {
  launch_jacobi5(ctx, in, out);
}
void jacobi5_cuda(const KernelContext& ctx, View<const float> in, View<float> out) {
  launch_jacobi5(ctx, in, out);
}

}  // namespace hit::detail
