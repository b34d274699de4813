// The CUDA body of the built-in gemm_accumulate kernel: one cuBLAS gemm over the domain.

#ifdef HIT_HAVE_CUDA

#include <cublas_v2.h>
#include <fmt/format.h>

#include "devices/cuda/builtin_cuda.hpp"
#include "hit/core/error.hpp"

namespace hit::detail {
namespace {

template <class T>
void gemm(const KernelContext& ctx, View<const T> a, View<const T> b, View<T> c) {
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) {
    throw Error(ErrorKind::shape, "gemm_accumulate needs 2-D tiles");
  }
  // The rows and columns of C inside the domain, as positions of C (and of A's rows, B's columns).
  const index_t r0 = (ctx.domain.begin[0] - c.origin[0]) / c.step[0];
  const index_t c0 = (ctx.domain.begin[1] - c.origin[1]) / c.step[1];
  const index_t rows = ctx.domain.extent(0), cols = ctx.domain.extent(1), k = a.cols();
  if (b.rows() != k || a.rows() < r0 + rows || b.cols() < c0 + cols) {
    throw Error(
        ErrorKind::shape,
        fmt::format("gemm_accumulate: A is {}x{}, B is {}x{}, C rows {}..{} and columns {}..{} "
                    "(A's columns must equal B's rows, A must have C's rows, B C's columns)",
                    a.rows(), a.cols(), b.rows(), b.cols(), r0, r0 + rows, c0, c0 + cols));
  }
  if (rows == 0 || cols == 0 || k == 0) return;
  auto handle = static_cast<cublasHandle_t>(ctx.cublas);
  const T one = 1;
  cublasStatus_t status;
  // Row-major C = A B is column-major C^T = B^T A^T.
  if constexpr (std::is_same_v<T, double>) {
    status = cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(cols),
                         static_cast<int>(rows), static_cast<int>(k), &one, &b.local(0, c0),
                         static_cast<int>(b.pitch()), &a.local(r0, 0), static_cast<int>(a.pitch()),
                         &one, &c.local(r0, c0), static_cast<int>(c.pitch()));
  } else {
    status = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(cols),
                         static_cast<int>(rows), static_cast<int>(k), &one, &b.local(0, c0),
                         static_cast<int>(b.pitch()), &a.local(r0, 0), static_cast<int>(a.pitch()),
                         &one, &c.local(r0, c0), static_cast<int>(c.pitch()));
  }
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ErrorKind::device,
                fmt::format("cuBLAS gemm failed with status {}", static_cast<int>(status)));
  }
}

}  // namespace

void gemm_accumulate_cuda(const KernelContext& ctx, View<const double> a, View<const double> b,
                          View<double> c) {
  gemm(ctx, a, b, c);
}
void gemm_accumulate_cuda(const KernelContext& ctx, View<const float> a, View<const float> b,
                          View<float> c) {
  gemm(ctx, a, b, c);
}

}  // namespace hit::detail

#endif  // HIT_HAVE_CUDA
