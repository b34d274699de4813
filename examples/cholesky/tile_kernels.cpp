#include "tile_kernels.hpp"

#include <cblas.h>

#include <string>
#include <type_traits>

#ifdef HIT_EXAMPLE_CUDA
#include "tile_kernels_cuda.hpp"
#endif

#include "tile_checks.hpp"

// LAPACK's Cholesky factorisation, from OpenBLAS (which ships LAPACK; no LAPACKE header needed).
extern "C" {
void dpotrf_(const char* uplo, const blasint* n, double* a, const blasint* lda, blasint* info);
void spotrf_(const char* uplo, const blasint* n, float* a, const blasint* lda, blasint* info);
}

namespace hit::cholesky {
namespace {

blasint blas(index_t v) {
  return static_cast<blasint>(v);
}

template <class T>
void potrf_cpu(const KernelContext&, View<T> a, index_t column) {
  require_square(a);
  const blasint n = blas(a.rows());
  const blasint lda = blas(a.pitch());
  blasint info = 0;
  // A row-major lower triangle is the column-major upper one: LAPACK's U with A = Uᵀ·U is our L.
  if constexpr (std::is_same_v<T, double>) {
    dpotrf_("U", &n, a.data, &lda, &info);
  } else {
    spotrf_("U", &n, a.data, &lda, &info);
  }
  check_potrf_info(a, info, column);
}

template <class T>
void trsm_cpu(const KernelContext&, View<const T> l, View<T> a) {
  require_dense(l, "trsm", "the diagonal tile");
  require_dense(a, "trsm", "the panel tile");
  if (a.rows() == 0 || a.cols() == 0) return;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, blas(a.rows()),
                blas(a.cols()), 1.0, l.data, blas(l.pitch()), a.data, blas(a.pitch()));
  } else {
    cblas_strsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, blas(a.rows()),
                blas(a.cols()), 1.0f, l.data, blas(l.pitch()), a.data, blas(a.pitch()));
  }
}

template <class T>
void syrk_cpu(const KernelContext&, View<const T> l, View<T> a) {
  require_dense(l, "syrk", "the panel tile");
  require_dense(a, "syrk", "the diagonal tile");
  if (a.rows() == 0 || l.cols() == 0) return;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, blas(a.rows()), blas(l.cols()), -1.0,
                l.data, blas(l.pitch()), 1.0, a.data, blas(a.pitch()));
  } else {
    cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, blas(a.rows()), blas(l.cols()), -1.0f,
                l.data, blas(l.pitch()), 1.0f, a.data, blas(a.pitch()));
  }
}

template <class T>
void gemm_cpu(const KernelContext&, View<const T> li, View<const T> lj, View<T> a) {
  require_dense(li, "gemm", "the panel tile of the row");
  require_dense(lj, "gemm", "the panel tile of the column");
  require_dense(a, "gemm", "the updated tile");
  if (a.rows() == 0 || a.cols() == 0 || li.cols() == 0) return;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas(a.rows()), blas(a.cols()),
                blas(li.cols()), -1.0, li.data, blas(li.pitch()), lj.data, blas(lj.pitch()), 1.0,
                a.data, blas(a.pitch()));
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas(a.rows()), blas(a.cols()),
                blas(li.cols()), -1.0f, li.data, blas(li.pitch()), lj.data, blas(lj.pitch()), 1.0f,
                a.data, blas(a.pitch()));
  }
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, double> ? "double" : "float";
}

}  // namespace

template <class T>
Kernel<View<T>, index_t> potrf() {
  Kernel<View<T>, index_t> k(std::string("potrf<") + type_name<T>() + ">");
  k.cpu(&potrf_cpu<T>);
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([](const KernelContext& ctx, View<T> a, index_t column) { potrf_cuda(ctx, a, column); });
#endif
  return k;
}
template <class T>
Kernel<View<const T>, View<T>> trsm() {
  Kernel<View<const T>, View<T>> k(std::string("trsm<") + type_name<T>() + ">");
  k.cpu(&trsm_cpu<T>);
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> l, View<T> a) { trsm_cuda(ctx, l, a); });
#endif
  return k;
}
template <class T>
Kernel<View<const T>, View<T>> syrk() {
  Kernel<View<const T>, View<T>> k(std::string("syrk<") + type_name<T>() + ">");
  k.cpu(&syrk_cpu<T>);
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> l, View<T> a) { syrk_cuda(ctx, l, a); });
#endif
  return k;
}
template <class T>
Kernel<View<const T>, View<const T>, View<T>> gemm() {
  Kernel<View<const T>, View<const T>, View<T>> k(std::string("gemm_nt<") + type_name<T>() + ">");
  k.cpu(&gemm_cpu<T>);
#ifdef HIT_EXAMPLE_CUDA
  k.cuda([](const KernelContext& ctx, View<const T> li, View<const T> lj, View<T> a) {
    gemm_cuda(ctx, li, lj, a);
  });
#endif
  return k;
}

template Kernel<View<double>, index_t> potrf<double>();
template Kernel<View<float>, index_t> potrf<float>();
template Kernel<View<const double>, View<double>> trsm<double>();
template Kernel<View<const float>, View<float>> trsm<float>();
template Kernel<View<const double>, View<double>> syrk<double>();
template Kernel<View<const float>, View<float>> syrk<float>();
template Kernel<View<const double>, View<const double>, View<double>> gemm<double>();
template Kernel<View<const float>, View<const float>, View<float>> gemm<float>();

}  // namespace hit::cholesky
