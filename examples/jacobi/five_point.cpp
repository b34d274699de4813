#include "five_point.hpp"

#include "five_point_cuda.hpp"

namespace hit::jacobi {
namespace {

// out = 0.25 (up + down + left + right) along one row, all unit stride.
template <class T>
void row(T* __restrict dst, const T* __restrict up, const T* __restrict mid,
         const T* __restrict down, index_t cols) {
  for (index_t j = 0; j < cols; ++j) dst[j] = T(0.25) * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}

// Two neighbouring rows in one pass (unroll and jam): each row of `in` loaded serves both, and
// the core keeps twice as many memory streams in flight. On a grid far beyond the cache this
// made a sweep 1.1-1.5x faster than one row at a time (docs/benchmarks.md).
template <class T>
void row_pair(T* __restrict dst0, T* __restrict dst1, const T* __restrict up,
              const T* __restrict mid0, const T* __restrict mid1, const T* __restrict down,
              index_t cols) {
  for (index_t j = 0; j < cols; ++j) {
    dst0[j] = T(0.25) * (up[j] + mid1[j] + mid0[j - 1] + mid0[j + 1]);
    dst1[j] = T(0.25) * (mid0[j] + down[j] + mid1[j - 1] + mid1[j + 1]);
  }
}

// One thread block of the partition: rows of the block, each a contiguous run when the views
// have unit steps (the common case: a dense block), so the inner loop vectorises. The order of
// the additions is that of the serial reference of --check, so results agree bit for bit.
template <class T>
void five_point_cpu(const KernelContext& ctx, View<const T> in, View<T> out) {
  const Box& b = ctx.block;
  const index_t rows = b.extent(0);
  const index_t cols = b.extent(1);
  if (rows == 0 || cols == 0) return;
  const index_t j0 = b.begin[1];
  const index_t si = in.stride[1] * b.step[1];
  const index_t so = out.stride[1] * b.step[1];
  const index_t sn = in.stride[1];
  index_t r = 0;
  if (si == 1 && so == 1) {
    if (b.step[0] == 1) {
      for (; r + 1 < rows; r += 2) {
        const index_t i = b.begin[0] + r;
        row_pair(&out(i, j0), &out(i + 1, j0), &in(i - 1, j0), &in(i, j0), &in(i + 1, j0),
                 &in(i + 2, j0), cols);
      }
    }
    for (; r < rows; ++r) {
      const index_t i = b.begin[0] + r * b.step[0];
      row(&out(i, j0), &in(i - 1, j0), &in(i, j0), &in(i + 1, j0), cols);
    }
    return;
  }
  for (; r < rows; ++r) {
    const index_t i = b.begin[0] + r * b.step[0];
    const T* up = &in(i - 1, j0);
    const T* mid = &in(i, j0);
    const T* down = &in(i + 1, j0);
    T* dst = &out(i, j0);
    for (index_t j = 0; j < cols; ++j) {
      dst[j * so] = T(0.25) * (up[j * si] + down[j * si] + mid[j * si - sn] + mid[j * si + sn]);
    }
  }
}

}  // namespace

template <class T>
Kernel<View<const T>, View<T>> five_point() {
  Kernel<View<const T>, View<T>> k(std::is_same_v<T, double> ? "five_point<double>"
                                                             : "five_point<float>");
  k.cpu(&five_point_cpu<T>);
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> in, View<T> out) {
    five_point_cuda(ctx, in, out);
  });
#endif
  // `in` is read one element around every index; `out` only at the index.
  k.reads({AccessPattern::stencil(2, 1), AccessPattern::parse("0,0")});
  return k;
}

template Kernel<View<const double>, View<double>> five_point<double>();
template Kernel<View<const float>, View<float>> five_point<float>();

}  // namespace hit::jacobi
