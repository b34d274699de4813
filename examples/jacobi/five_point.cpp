#include "five_point.hpp"

#include "five_point_cuda.hpp"

namespace hit::jacobi {
namespace {

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
  for (index_t r = 0; r < rows; ++r) {
    const index_t i = b.begin[0] + r * b.step[0];
    const T* __restrict up = &in.at(i - 1, j0);
    const T* __restrict mid = &in.at(i, j0);
    const T* __restrict down = &in.at(i + 1, j0);
    T* __restrict dst = &out.at(i, j0);
    if (si == 1 && so == 1) {
      for (index_t j = 0; j < cols; ++j) {
        dst[j] = T(0.25) * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
      }
    } else {
      for (index_t j = 0; j < cols; ++j) {
        dst[j * so] = T(0.25) * (up[j * si] + down[j * si] + mid[j * si - sn] + mid[j * si + sn]);
      }
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
