// The cuda body of hit-packages' Mandelbrot kernel: one CUDA thread per pixel of the launch's
// domain, over the partition's grid of thread blocks (grid-stride along y, capped at 65535).

#include <cuda_runtime.h>

#include "hit/devices/cuda_grid.hpp"

#include "mandelbrot.hpp"

namespace hit::packages {
namespace {

template <class T>
__global__ void escape(Frame frame, View<T> out, Box domain) {
  for_each_grid_index(domain, [&](index_t gi, index_t gj) {
    out(gi, gj) = static_cast<T>(escape_count(frame, gi, gj));
  });
}

template <class T>
void launch_escape(const KernelContext& ctx, const Frame& frame, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const CudaGrid g = cuda_grid(ctx);
  escape<T>
      <<<g.grid, g.block, 0, static_cast<cudaStream_t>(ctx.cuda_stream)>>>(frame, out, ctx.domain);
}

}  // namespace

void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<double> out) {
  launch_escape(ctx, frame, out);
}
void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<float> out) {
  launch_escape(ctx, frame, out);
}

}  // namespace hit::packages
