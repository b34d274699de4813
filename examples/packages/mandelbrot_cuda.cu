// The cuda body of hit-packages' Mandelbrot kernel: one CUDA thread per pixel of the launch's
// domain, over the partition's grid of thread blocks (grid-stride along y, capped at 65535).

#include <cuda_runtime.h>

#include "mandelbrot.hpp"

namespace hit::packages {
namespace {

template <class T>
__global__ void escape(Frame frame, View<T> out, Box domain) {
  const index_t rows = domain.extent(0);
  const index_t cols = domain.extent(1);
  const index_t j = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const index_t gj = domain.begin[1] + j * domain.step[1];
  for (index_t i = static_cast<index_t>(blockIdx.y) * blockDim.y + threadIdx.y; i < rows;
       i += static_cast<index_t>(gridDim.y) * blockDim.y) {
    const index_t gi = domain.begin[0] + i * domain.step[0];
    out.at(gi, gj) = static_cast<T>(escape_count(frame, gi, gj));
  }
}

template <class T>
void launch_escape(const KernelContext& ctx, const Frame& frame, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const dim3 block(static_cast<unsigned>(ctx.threads_per_block[0]),
                   static_cast<unsigned>(ctx.threads_per_block[1]), 1);
  const auto gy = ctx.grid[1] < 65535 ? ctx.grid[1] : 65535;
  const dim3 grid(static_cast<unsigned>(ctx.grid[0]), static_cast<unsigned>(gy), 1);
  escape<T><<<grid, block, 0, static_cast<cudaStream_t>(ctx.cuda_stream)>>>(frame, out, ctx.domain);
}

}  // namespace

void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<double> out) {
  launch_escape(ctx, frame, out);
}
void mandelbrot_cuda(const KernelContext& ctx, const Frame& frame, View<float> out) {
  launch_escape(ctx, frame, out);
}

}  // namespace hit::packages
