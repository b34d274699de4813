// The CUDA body of the built-in jacobi5 kernel. The views are re-based on the launch's domain on
// the host (View::around), so a thread finds its point and its four neighbours with multiply-adds
// only: no index conversion (a 64-bit division each) per point. Threads along x take consecutive
// columns of a row (coalesced when rows are contiguous, the common case, which gets a kernel of
// its own); rows go along y, by grid stride, since CUDA caps a grid's y extent at 65535.

#include <cuda_runtime.h>

#include "hit/devices/cuda_grid.hpp"

#include "devices/cuda/builtin_cuda.hpp"

namespace hit::detail {
namespace {

// One launch's addresses: the domain's first point in `in` and `out`, the steps between the
// domain's points (a row, a column), and between a point of `in` and its neighbours.
template <class T>
struct Sweep {
  const T* in;
  T* out;
  index_t in_row, in_col;
  index_t out_row, out_col;
  index_t up, left;  // neighbours in `in`: one index of the array away
  index_t rows, cols;
};

// `unit`: columns next to each other in both views and in the stencil (in_col, out_col and left
// all 1), known to the compiler.
template <class T, bool unit>
__global__ void jacobi5_kernel(Sweep<T> s) {
  const index_t c = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= s.cols) return;
  const index_t in_col = unit ? 1 : s.in_col;
  const index_t out_col = unit ? 1 : s.out_col;
  const index_t left = unit ? 1 : s.left;
  const T* __restrict__ in = s.in + c * in_col;
  T* __restrict__ out = s.out + c * out_col;
  const index_t step = static_cast<index_t>(gridDim.y) * blockDim.y;
  for (index_t r = static_cast<index_t>(blockIdx.y) * blockDim.y + threadIdx.y; r < s.rows;
       r += step) {
    const T* p = in + r * s.in_row;
    out[r * s.out_row] = T(0.25) * (p[-s.up] + p[s.up] + p[-left] + p[left]);
  }
}

template <class T>
void launch_jacobi5(const KernelContext& ctx, View<const T> in, View<T> out) {
  if (ctx.domain.size() == 0) return;
  const View<const T> a = in.around(ctx.domain);
  const View<T> b = out.around(ctx.domain);
  const Sweep<T> s{
      a.data,      b.data,       a.stride[0],  a.stride[1],          b.stride[0],
      b.stride[1], in.stride[0], in.stride[1], ctx.domain.extent(0), ctx.domain.extent(1)};
  const CudaGrid g = cuda_grid(ctx);
  const auto stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  if (s.in_col == 1 && s.out_col == 1 && s.left == 1) {
    jacobi5_kernel<T, true><<<g.grid, g.block, 0, stream>>>(s);
  } else {
    jacobi5_kernel<T, false><<<g.grid, g.block, 0, stream>>>(s);
  }
}

}  // namespace

void jacobi5_cuda(const KernelContext& ctx, View<const double> in, View<double> out) {
  launch_jacobi5(ctx, in, out);
}
void jacobi5_cuda(const KernelContext& ctx, View<const float> in, View<float> out) {
  launch_jacobi5(ctx, in, out);
}

}  // namespace hit::detail
