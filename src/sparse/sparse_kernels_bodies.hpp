#pragma once
// What the sources of the sparse kernels share (not installed): the pointer through which a body
// reaches a 1-D view by array index, and the cuda bodies (sparse_kernels_cublas.cpp), which
// sparse_kernels.cpp puts into the kernels.

#include <fmt/format.h>

#include "hit/core/error.hpp"
#include "hit/sparse/sparse_kernels.hpp"

namespace hit::detail {

// The address of array index 0 of a 1-D view of unit step and stride, so that element i is
// flat(v)[i] whatever ghost cells or chunk the view starts at. The arguments were checked by the
// functions of sparse_kernels.hpp; a kernel launched directly with other views is told here.
template <class T>
T* flat(const View<T>& v, const char* kernel, const char* name) {
  if (v.rank != 1 || v.step[0] != 1 || v.stride[0] != 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("kernel '{}': argument {} is a {}-D view of step {} and stride {}; "
                            "the sparse kernels take 1-D arrays of unit stride",
                            kernel, name, v.rank, v.rank > 0 ? v.step[0] : 0,
                            v.rank > 0 ? v.stride[0] : 0));
  }
  return v.data - v.origin[0];
}

// The rows [first, last) ∩ domain as a pair, empty when they do not meet.
struct RowRange {
  index_t begin = 0;
  index_t end = 0;
};
inline RowRange rows_in_domain(const KernelContext& ctx, index_t first, index_t last) {
  const index_t b = std::max(first, ctx.domain.begin[0]);
  const index_t e = std::min(last, ctx.domain.end[0]);
  return b < e ? RowRange{b, e} : RowRange{b, b};
}

#ifdef HIT_HAVE_CUDA
template <class T>
void spmv_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
               View<const T> values, View<const T> x, View<T> y, index_t first, index_t last);
template <class T>
void spmv_dot_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
                   View<const T> values, View<const T> x, View<T> y, index_t first, index_t last,
                   T* partials);
template <class T>
void heat_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
               View<const T> old, View<T> next, index_t first, index_t last);
template <class T>
void dot_cuda(const KernelContext& ctx, View<const T> x, View<const T> y, T* partials);
template <class T>
void axpy_cuda(const KernelContext& ctx, View<const T> x, View<T> y, T a);
template <class T>
void xpay_cuda(const KernelContext& ctx, View<const T> x, View<T> y, T b);
template <class T>
void cg_update_cuda(const KernelContext& ctx, View<const T> p, View<const T> q, View<T> x,
                    View<T> r, T a, T* partials);
#endif

}  // namespace hit::detail
