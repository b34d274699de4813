// The built-in kernels: cpu bodies here, CUDA bodies in src/devices/cuda/.

#include <cblas.h>
#include <fmt/format.h>

#include "hit/core/error.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"

#ifdef HIT_HAVE_CUDA
#include "devices/cuda/builtin_cuda.hpp"
#endif

namespace hit {
namespace {

// ---- gemm_accumulate ---------------------------------------------------------------------------

template <class T>
void gemm_cpu(const KernelContext& ctx, View<const T> a, View<const T> b, View<T> c) {
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) {
    throw Error(ErrorKind::shape,
                fmt::format("gemm_accumulate needs 2-D tiles, got ranks {}, {}, {}", a.rank, b.rank,
                            c.rank));
  }
  // The block's rows and columns as positions of C; A's rows and B's columns at the same positions.
  const index_t r0 = (ctx.block.begin[0] - c.origin[0]) / c.step[0];
  const index_t c0 = (ctx.block.begin[1] - c.origin[1]) / c.step[1];
  const index_t rows = ctx.block.extent(0), cols = ctx.block.extent(1), k = a.cols();
  if (b.rows() != k || a.rows() < r0 + rows || b.cols() < c0 + cols || r0 < 0 || c0 < 0 ||
      c.rows() < r0 + rows || c.cols() < c0 + cols) {
    throw Error(
        ErrorKind::shape,
        fmt::format("gemm_accumulate: A is {}x{}, B is {}x{}, C is {}x{}, block rows {}..{} "
                    "columns {}..{} (A's columns must equal B's rows; A needs C's rows, B "
                    "C's columns)",
                    a.rows(), a.cols(), b.rows(), b.cols(), c.rows(), c.cols(), r0, r0 + rows, c0,
                    c0 + cols));
  }
  if (rows == 0 || cols == 0 || k == 0) return;
  const bool dense = a.stride[1] == 1 && b.stride[1] == 1 && c.stride[1] == 1;
  if (dense) {
    if constexpr (std::is_same_v<T, double>) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(rows),
                  static_cast<blasint>(cols), static_cast<blasint>(k), 1.0, &a.local(r0, 0),
                  static_cast<blasint>(a.pitch()), &b.local(0, c0), static_cast<blasint>(b.pitch()),
                  1.0, &c.local(r0, c0), static_cast<blasint>(c.pitch()));
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(rows),
                  static_cast<blasint>(cols), static_cast<blasint>(k), 1.0f, &a.local(r0, 0),
                  static_cast<blasint>(a.pitch()), &b.local(0, c0), static_cast<blasint>(b.pitch()),
                  1.0f, &c.local(r0, c0), static_cast<blasint>(c.pitch()));
    }
    return;
  }
  // Strided rows (e.g. a cyclic layout's tile used in place): plain loops.
  for (index_t i = 0; i < rows; ++i) {
    for (index_t kk = 0; kk < k; ++kk) {
      const T aik = a.local(r0 + i, kk);
      for (index_t j = 0; j < cols; ++j) c.local(r0 + i, c0 + j) += aik * b.local(kk, c0 + j);
    }
  }
}

// ---- jacobi5 -----------------------------------------------------------------------------------

template <class T>
bool holds(const View<T>& v, index_t gi, index_t gj) {
  return v.contains(gi, gj);
}

// `in` holds the 4 neighbours of every index of `region`, `out` the region itself.
template <class T>
void check_jacobi5(const Box& b, const View<const T>& in, const View<T>& out) {
  if (in.rank != 2 || out.rank != 2) {
    throw Error(ErrorKind::shape,
                fmt::format("jacobi5 needs 2-D tiles, got ranks {} and {}", in.rank, out.rank));
  }
  const index_t rows = b.extent(0), cols = b.extent(1);
  if (rows == 0 || cols == 0) return;
  const index_t i0 = b.begin[0], j0 = b.begin[1];
  const index_t i1 = i0 + (rows - 1) * b.step[0], j1 = j0 + (cols - 1) * b.step[1];
  if (in.step[0] != 1 || in.step[1] != 1 || !holds(in, i0 - 1, j0) || !holds(in, i1 + 1, j1) ||
      !holds(in, i0, j0 - 1) || !holds(in, i1, j1 + 1) || !holds(out, i0, j0) ||
      !holds(out, i1, j1)) {
    throw Error(ErrorKind::shape,
                fmt::format("jacobi5: {} needs its 4 neighbours in 'in' ({}) and itself in 'out' "
                            "({}); give 'in' ghost cells or make the domain its interior",
                            to_shape(b).str(), view_shape(in).str(), view_shape(out).str()));
  }
}

// out = 0.25 (up + down + left + right) along one row, all unit stride.
template <class T>
void jacobi5_row(T* __restrict dst, const T* __restrict up, const T* __restrict mid,
                 const T* __restrict down, index_t cols) {
  for (index_t j = 0; j < cols; ++j) dst[j] = T(0.25) * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}

// Two neighbouring rows in one pass (unroll and jam): each row of `in` loaded serves both, and
// the core keeps twice as many memory streams in flight. On a grid far beyond the cache this
// made a sweep 1.1-1.5x faster than one row at a time (docs/benchmarks.md, Jacobi).
template <class T>
void jacobi5_row_pair(T* __restrict dst0, T* __restrict dst1, const T* __restrict up,
                      const T* __restrict mid0, const T* __restrict mid1, const T* __restrict down,
                      index_t cols) {
  for (index_t j = 0; j < cols; ++j) {
    dst0[j] = T(0.25) * (up[j] + mid1[j] + mid0[j - 1] + mid0[j + 1]);
    dst1[j] = T(0.25) * (mid0[j] + down[j] + mid1[j - 1] + mid1[j + 1]);
  }
}

// One thread block of the partition: rows of the block, each a contiguous run when the block
// and the views have unit steps (a dense block), so the inner loop vectorises. Every path adds
// up, down, left and right in that order, so results agree bit for bit with a serial sweep.
template <class T>
void jacobi5_cpu(const KernelContext& ctx, View<const T> in, View<T> out) {
  const Box& b = ctx.block;
  check_jacobi5(b, in, out);
  const index_t rows = b.extent(0), cols = b.extent(1);
  if (rows == 0 || cols == 0) return;
  const index_t j0 = b.begin[1];
  const index_t si = in.stride[1] * b.step[1], so = out.stride[1] * b.step[1], sn = in.stride[1];
  index_t r = 0;
  if (si == 1 && so == 1) {
    if (b.step[0] == 1) {
      for (; r + 1 < rows; r += 2) {
        const index_t i = b.begin[0] + r;
        jacobi5_row_pair(&out(i, j0), &out(i + 1, j0), &in(i - 1, j0), &in(i, j0), &in(i + 1, j0),
                         &in(i + 2, j0), cols);
      }
    }
    for (; r < rows; ++r) {
      const index_t i = b.begin[0] + r * b.step[0];
      jacobi5_row(&out(i, j0), &in(i - 1, j0), &in(i, j0), &in(i + 1, j0), cols);
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
Kernel<View<const T>, View<const T>, View<T>> gemm_accumulate() {
  Kernel<View<const T>, View<const T>, View<T>> k(
      std::is_same_v<T, double> ? "gemm_accumulate<double>" : "gemm_accumulate<float>");
  k.cpu(&gemm_cpu<T>);
#ifdef HIT_HAVE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> a, View<const T> b, View<T> c) {
    detail::gemm_accumulate_cuda(ctx, a, b, c);
  });
#endif
  // Row i of C reads row i of A and column j of B (Cannon's access patterns in the Hitmap paper).
  k.reads(
      {AccessPattern::parse("0,all"), AccessPattern::parse("all,0"), AccessPattern::parse("0,0")});
  // Each point of C: a multiply and an add per column of A's block.
  k.cost({.compute_bound = true, .flops = [](const Shape& c, const std::vector<Shape>& tiles) {
            return 2.0 * double(c.size()) * double(tiles.at(0).extent(1));
          }});
  return k;
}

template <class T>
Kernel<View<const T>, View<T>> jacobi5() {
  Kernel<View<const T>, View<T>> k(std::is_same_v<T, double> ? "jacobi5<double>"
                                                             : "jacobi5<float>");
  k.cpu(&jacobi5_cpu<T>);
#ifdef HIT_HAVE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> in, View<T> out) {
    check_jacobi5(ctx.domain, in, out);
    detail::jacobi5_cuda(ctx, in, out);
  });
#endif
  k.reads({AccessPattern::stencil(2, 1), AccessPattern::parse("0,0")});
  k.cost({.flops_per_point = 4});  // three additions and a product
  return k;
}

template Kernel<View<const double>, View<const double>, View<double>> gemm_accumulate<double>();
template Kernel<View<const float>, View<const float>, View<float>> gemm_accumulate<float>();
template Kernel<View<const double>, View<double>> jacobi5<double>();
template Kernel<View<const float>, View<float>> jacobi5<float>();

}  // namespace hit
