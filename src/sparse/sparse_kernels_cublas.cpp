// The cuda bodies of the sparse kernels: the CSR kernels of sparse_kernels_cuda.cu for the
// products, cuBLAS for dot and axpy (on the launch's stream, through ctx.cublas).

#ifdef HIT_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>

#include "sparse/sparse_kernels_bodies.hpp"
#include "sparse/sparse_kernels_cuda.hpp"

namespace hit::detail {
namespace {

void check_launch(int status, const char* op) {
  if (status != 0) {
    throw Error(ErrorKind::device,
                fmt::format("the CUDA kernel of {} failed to launch: {}", op,
                            cudaGetErrorString(static_cast<cudaError_t>(status))));
  }
}

void check_cublas(cublasStatus_t status, const char* op) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ErrorKind::device,
                fmt::format("cuBLAS failed in {} with status {}", op, static_cast<int>(status)));
  }
}

// Threads per row: the power of two at most the mean row length (at least 1, at most a warp), so
// few lanes idle on short rows and long rows are still shared out.
int lanes_for(const CsrIndexView& row_ptr, const CsrColumnView& cols) {
  const index_t rows = std::max<index_t>(1, row_ptr.extent[0] - 1);
  const index_t mean = cols.extent[0] / rows;
  int lanes = 1;
  while (lanes < 32 && lanes * 2 <= mean) lanes *= 2;
  return lanes;
}

cublasHandle_t cublas(const KernelContext& ctx) {
  auto handle = static_cast<cublasHandle_t>(ctx.cublas);
  // Scalars (alpha, the dot product) are host values: the dot call returns when its result is
  // in host memory.
  check_cublas(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  return handle;
}

cublasStatus_t blas_dot(cublasHandle_t h, index_t n, const double* x, const double* y,
                        double* out) {
  return cublasDdot_64(h, n, x, 1, y, 1, out);
}
cublasStatus_t blas_dot(cublasHandle_t h, index_t n, const float* x, const float* y, float* out) {
  return cublasSdot_64(h, n, x, 1, y, 1, out);
}
cublasStatus_t blas_axpy(cublasHandle_t h, index_t n, double a, const double* x, double* y) {
  return cublasDaxpy_64(h, n, &a, x, 1, y, 1);
}
cublasStatus_t blas_axpy(cublasHandle_t h, index_t n, float a, const float* x, float* y) {
  return cublasSaxpy_64(h, n, &a, x, 1, y, 1);
}

}  // namespace

template <class T>
void spmv_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
               View<const T> values, View<const T> x, View<T> y, index_t first, index_t last) {
  const RowRange rows = rows_in_domain(ctx, first, last);
  check_launch(
      launch_csr_spmv(ctx.cuda_stream, flat(row_ptr, "spmv", "row_ptr"), flat(cols, "spmv", "cols"),
                      flat(values, "spmv", "values"), flat(x, "spmv", "x"), flat(y, "spmv", "y"),
                      rows.begin, rows.end, lanes_for(row_ptr, cols)),
      "spmv");
}

// The CSR kernel, then cuBLAS's dot over the same rows on the same stream.
template <class T>
void spmv_dot_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
                   View<const T> values, View<const T> x, View<T> y, index_t first, index_t last,
                   T* partials) {
  const RowRange rows = rows_in_domain(ctx, first, last);
  const T* xs = flat(x, "spmv_dot", "x");
  T* ys = flat(y, "spmv_dot", "y");
  check_launch(launch_csr_spmv(ctx.cuda_stream, flat(row_ptr, "spmv_dot", "row_ptr"),
                               flat(cols, "spmv_dot", "cols"), flat(values, "spmv_dot", "values"),
                               xs, ys, rows.begin, rows.end, lanes_for(row_ptr, cols)),
               "spmv_dot");
  check_cublas(
      blas_dot(cublas(ctx), rows.end - rows.begin, xs + rows.begin, ys + rows.begin, &partials[0]),
      "spmv_dot");
}

template <class T>
void heat_cuda(const KernelContext& ctx, CsrIndexView row_ptr, CsrColumnView cols,
               View<const T> old, View<T> next, index_t first, index_t last) {
  const RowRange rows = rows_in_domain(ctx, first, last);
  check_launch(launch_csr_heat(ctx.cuda_stream, flat(row_ptr, "heat_step", "row_ptr"),
                               flat(cols, "heat_step", "cols"), flat(old, "heat_step", "old"),
                               flat(next, "heat_step", "next"), rows.begin, rows.end,
                               lanes_for(row_ptr, cols)),
               "heat_step");
}

template <class T>
void dot_cuda(const KernelContext& ctx, View<const T> x, View<const T> y, T* partials) {
  const index_t b = ctx.domain.begin[0], n = ctx.domain.extent(0);
  check_cublas(
      blas_dot(cublas(ctx), n, flat(x, "dot", "x") + b, flat(y, "dot", "y") + b, &partials[0]),
      "dot");
}

template <class T>
void axpy_cuda(const KernelContext& ctx, View<const T> x, View<T> y, T a) {
  const index_t b = ctx.domain.begin[0], n = ctx.domain.extent(0);
  check_cublas(blas_axpy(cublas(ctx), n, a, flat(x, "axpy", "x") + b, flat(y, "axpy", "y") + b),
               "axpy");
}

template <class T>
void xpay_cuda(const KernelContext& ctx, View<const T> x, View<T> y, T b) {
  check_launch(launch_xpay(ctx.cuda_stream, flat(x, "xpay", "x"), b, flat(y, "xpay", "y"),
                           ctx.domain.begin[0], ctx.domain.end[0]),
               "xpay");
}

template <class T>
void cg_update_cuda(const KernelContext& ctx, View<const T> p, View<const T> q, View<T> x,
                    View<T> r, T a, T* partials) {
  const index_t b = ctx.domain.begin[0], n = ctx.domain.extent(0);
  T* rs = flat(r, "cg_update", "r");
  check_launch(launch_cg_update(ctx.cuda_stream, a, flat(p, "cg_update", "p"),
                                flat(q, "cg_update", "q"), flat(x, "cg_update", "x"), rs, b, b + n),
               "cg_update");
  check_cublas(blas_dot(cublas(ctx), n, rs + b, rs + b, &partials[0]), "cg_update");
}

template void spmv_cuda<double>(const KernelContext&, CsrIndexView, CsrColumnView,
                                View<const double>, View<const double>, View<double>, index_t,
                                index_t);
template void spmv_cuda<float>(const KernelContext&, CsrIndexView, CsrColumnView, View<const float>,
                               View<const float>, View<float>, index_t, index_t);
template void spmv_dot_cuda<double>(const KernelContext&, CsrIndexView, CsrColumnView,
                                    View<const double>, View<const double>, View<double>, index_t,
                                    index_t, double*);
template void spmv_dot_cuda<float>(const KernelContext&, CsrIndexView, CsrColumnView,
                                   View<const float>, View<const float>, View<float>, index_t,
                                   index_t, float*);
template void heat_cuda<double>(const KernelContext&, CsrIndexView, CsrColumnView,
                                View<const double>, View<double>, index_t, index_t);
template void heat_cuda<float>(const KernelContext&, CsrIndexView, CsrColumnView, View<const float>,
                               View<float>, index_t, index_t);
template void dot_cuda<double>(const KernelContext&, View<const double>, View<const double>,
                               double*);
template void dot_cuda<float>(const KernelContext&, View<const float>, View<const float>, float*);
template void axpy_cuda<double>(const KernelContext&, View<const double>, View<double>, double);
template void axpy_cuda<float>(const KernelContext&, View<const float>, View<float>, float);
template void xpay_cuda<double>(const KernelContext&, View<const double>, View<double>, double);
template void xpay_cuda<float>(const KernelContext&, View<const float>, View<float>, float);
template void cg_update_cuda<double>(const KernelContext&, View<const double>, View<const double>,
                                     View<double>, View<double>, double, double*);
template void cg_update_cuda<float>(const KernelContext&, View<const float>, View<const float>,
                                    View<float>, View<float>, float, float*);

}  // namespace hit::detail

#endif  // HIT_HAVE_CUDA
