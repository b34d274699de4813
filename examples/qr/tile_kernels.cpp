#include "tile_kernels.hpp"

#include <cblas.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/dense_tile.hpp"
#include "hit/core/error.hpp"

// LAPACK's tile LQ routines, from OpenBLAS (which ships LAPACK; no LAPACKE header needed), with
// the lengths of their character arguments as gfortran passes them.
extern "C" {
void dgelqt_(const blasint* m, const blasint* n, const blasint* mb, double* a, const blasint* lda,
             double* t, const blasint* ldt, double* work, blasint* info);
void sgelqt_(const blasint* m, const blasint* n, const blasint* mb, float* a, const blasint* lda,
             float* t, const blasint* ldt, float* work, blasint* info);
void dtplqt_(const blasint* m, const blasint* n, const blasint* l, const blasint* mb, double* a,
             const blasint* lda, double* b, const blasint* ldb, double* t, const blasint* ldt,
             double* work, blasint* info);
void stplqt_(const blasint* m, const blasint* n, const blasint* l, const blasint* mb, float* a,
             const blasint* lda, float* b, const blasint* ldb, float* t, const blasint* ldt,
             float* work, blasint* info);
void dgemlqt_(const char* side, const char* trans, const blasint* m, const blasint* n,
              const blasint* k, const blasint* mb, const double* v, const blasint* ldv,
              const double* t, const blasint* ldt, double* c, const blasint* ldc, double* work,
              blasint* info, std::size_t side_len, std::size_t trans_len);
void sgemlqt_(const char* side, const char* trans, const blasint* m, const blasint* n,
              const blasint* k, const blasint* mb, const float* v, const blasint* ldv,
              const float* t, const blasint* ldt, float* c, const blasint* ldc, float* work,
              blasint* info, std::size_t side_len, std::size_t trans_len);
void dtpmlqt_(const char* side, const char* trans, const blasint* m, const blasint* n,
              const blasint* k, const blasint* l, const blasint* mb, const double* v,
              const blasint* ldv, const double* t, const blasint* ldt, double* a,
              const blasint* lda, double* b, const blasint* ldb, double* work, blasint* info,
              std::size_t side_len, std::size_t trans_len);
void stpmlqt_(const char* side, const char* trans, const blasint* m, const blasint* n,
              const blasint* k, const blasint* l, const blasint* mb, const float* v,
              const blasint* ldv, const float* t, const blasint* ldt, float* a, const blasint* lda,
              float* b, const blasint* ldb, float* work, blasint* info, std::size_t side_len,
              std::size_t trans_len);
}

namespace hit::qr {
namespace {

blasint blas(index_t v) {
  return static_cast<blasint>(v);
}

using app::require_dense;

// The T tile of a tile of n columns: n rows of inner_block(n) factors.
template <class V>
void require_factors(const V& t, index_t n, const char* kernel) {
  require_dense(t, kernel, "the T tile");
  if (t.rows() != n || t.cols() != inner_block(n)) {
    throw Error(ErrorKind::shape, std::string(kernel) + ": the T tile is " +
                                      std::to_string(t.rows()) + "x" + std::to_string(t.cols()) +
                                      ", not " + std::to_string(n) + "x" +
                                      std::to_string(inner_block(n)));
  }
}

void check_info(blasint info, const char* routine) {
  if (info != 0) {
    throw Error(ErrorKind::internal,
                std::string(routine) + ": argument " + std::to_string(-info) + " is invalid");
  }
}

// A worker's scratch for LAPACK (each body runs on one thread at a time per worker).
template <class T>
T* scratch(index_t elements) {
  thread_local std::vector<T> work;
  if (work.size() < static_cast<std::size_t>(elements))
    work.resize(static_cast<std::size_t>(elements));
  return work.data();
}

const char* trans_of(Apply how) {
  // Q of the QR is Qᵀ of the LQ of the transposed tile, and a product from the left is one from
  // the right on the transposes: Q_qrᵀ·C is (Cᵀ·Q_lqᵀ)ᵀ, so Qᵀ takes LAPACK's 'T' on the right.
  return how == Apply::q_transposed ? "T" : "N";
}

template <class T>
void geqrt_cpu(const KernelContext&, View<T> a, View<T> t) {
  require_dense(a, "geqrt", "the diagonal tile");
  if (a.rows() != a.cols()) throw Error(ErrorKind::shape, "geqrt: the diagonal tile is not square");
  const index_t n = a.cols();
  require_factors(t, n, "geqrt");
  if (n == 0) return;
  const blasint m = blas(n), mb = blas(inner_block(n)), lda = blas(a.pitch()),
                ldt = blas(t.pitch());
  T* work = scratch<T>(inner_block(n) * n);
  blasint info = 0;
  if constexpr (std::is_same_v<T, double>) {
    dgelqt_(&m, &m, &mb, a.data, &lda, t.data, &ldt, work, &info);
  } else {
    sgelqt_(&m, &m, &mb, a.data, &lda, t.data, &ldt, work, &info);
  }
  check_info(info, "gelqt");
}

template <class T>
void tsqrt_cpu(const KernelContext&, View<T> r, View<T> a, View<T> t) {
  require_dense(r, "tsqrt", "the diagonal tile");
  require_dense(a, "tsqrt", "the tile below it");
  const index_t n = r.cols();
  if (r.rows() != n || a.cols() != n) {
    throw Error(ErrorKind::shape,
                "tsqrt: the tiles' columns differ or the diagonal tile is not square");
  }
  require_factors(t, n, "tsqrt");
  if (n == 0 || a.rows() == 0) return;
  // [R; A]ᵀ = [Rᵀ Aᵀ]: Rᵀ lower triangular, Aᵀ full (l = 0).
  const blasint m = blas(n), cols = blas(a.rows()), l = 0, mb = blas(inner_block(n));
  const blasint ldr = blas(r.pitch()), lda = blas(a.pitch()), ldt = blas(t.pitch());
  T* work = scratch<T>(inner_block(n) * n);
  blasint info = 0;
  if constexpr (std::is_same_v<T, double>) {
    dtplqt_(&m, &cols, &l, &mb, r.data, &ldr, a.data, &lda, t.data, &ldt, work, &info);
  } else {
    stplqt_(&m, &cols, &l, &mb, r.data, &ldr, a.data, &lda, t.data, &ldt, work, &info);
  }
  check_info(info, "tplqt");
}

template <class T>
void larfb_cpu(const KernelContext&, View<const T> v, View<const T> t, View<T> c, Apply how) {
  require_dense(v, "larfb", "the diagonal tile");
  require_dense(c, "larfb", "the updated tile");
  const index_t n = v.cols();
  if (v.rows() != n || c.rows() != n) {
    throw Error(ErrorKind::shape, "larfb: the updated tile's rows are not the diagonal tile's");
  }
  require_factors(t, n, "larfb");
  if (n == 0 || c.cols() == 0) return;
  // Cᵀ (c.cols() x n, column-major) times the tile's Q from the right.
  const blasint m = blas(c.cols()), k = blas(n), mb = blas(inner_block(n));
  const blasint ldv = blas(v.pitch()), ldt = blas(t.pitch()), ldc = blas(c.pitch());
  T* work = scratch<T>(inner_block(n) * c.cols());
  blasint info = 0;
  if constexpr (std::is_same_v<T, double>) {
    dgemlqt_("R", trans_of(how), &m, &k, &k, &mb, v.data, &ldv, t.data, &ldt, c.data, &ldc, work,
             &info, 1, 1);
  } else {
    sgemlqt_("R", trans_of(how), &m, &k, &k, &mb, v.data, &ldv, t.data, &ldt, c.data, &ldc, work,
             &info, 1, 1);
  }
  check_info(info, "gemlqt");
}

template <class T>
void ssrfb_cpu(const KernelContext&, View<const T> v, View<const T> t, View<T> top, View<T> below,
               Apply how) {
  require_dense(v, "ssrfb", "the reflectors' tile");
  require_dense(top, "ssrfb", "the updated tile of the diagonal row");
  require_dense(below, "ssrfb", "the updated tile below it");
  const index_t n = v.cols();
  if (top.rows() != n || below.rows() != v.rows() || top.cols() != below.cols()) {
    throw Error(ErrorKind::shape, "ssrfb: the updated tiles do not match the reflectors' tiles");
  }
  require_factors(t, n, "ssrfb");
  if (n == 0 || top.cols() == 0 || v.rows() == 0) return;
  // [topᵀ belowᵀ] (top.cols() x (n + rows), column-major) times the pair's Q from the right.
  const blasint m = blas(top.cols()), cols = blas(v.rows()), k = blas(n), l = 0;
  const blasint mb = blas(inner_block(n)), ldv = blas(v.pitch()), ldt = blas(t.pitch());
  const blasint lda = blas(top.pitch()), ldb = blas(below.pitch());
  T* work = scratch<T>(inner_block(n) * top.cols());
  blasint info = 0;
  if constexpr (std::is_same_v<T, double>) {
    dtpmlqt_("R", trans_of(how), &m, &cols, &k, &l, &mb, v.data, &ldv, t.data, &ldt, top.data, &lda,
             below.data, &ldb, work, &info, 1, 1);
  } else {
    stpmlqt_("R", trans_of(how), &m, &cols, &k, &l, &mb, v.data, &ldv, t.data, &ldt, top.data, &lda,
             below.data, &ldb, work, &info, 1, 1);
  }
  check_info(info, "tpmlqt");
}

template <class T>
std::string named(const char* kernel) {
  return std::string(kernel) + (std::is_same_v<T, double> ? "<double>" : "<float>");
}

}  // namespace

double geqrt_flops(double n) {
  return 4.0 / 3.0 * n * n * n;
}
double tsqrt_flops(double m, double n) {
  return 2.0 * m * n * n;
}
double larfb_flops(double n, double c) {
  return 2.0 * n * n * c;
}
double ssrfb_flops(double m, double n, double c) {
  return 4.0 * m * n * c;
}

template <class T>
Kernel<View<T>, View<T>> geqrt() {
  Kernel<View<T>, View<T>> k(named<T>("geqrt"));
  k.cpu(&geqrt_cpu<T>);
  return k;
}
template <class T>
Kernel<View<T>, View<T>, View<T>> tsqrt() {
  Kernel<View<T>, View<T>, View<T>> k(named<T>("tsqrt"));
  k.cpu(&tsqrt_cpu<T>);
  return k;
}
template <class T>
Kernel<View<const T>, View<const T>, View<T>, Apply> larfb() {
  Kernel<View<const T>, View<const T>, View<T>, Apply> k(named<T>("larfb"));
  k.cpu(&larfb_cpu<T>);
  return k;
}
template <class T>
Kernel<View<const T>, View<const T>, View<T>, View<T>, Apply> ssrfb() {
  Kernel<View<const T>, View<const T>, View<T>, View<T>, Apply> k(named<T>("ssrfb"));
  k.cpu(&ssrfb_cpu<T>);
  return k;
}

template Kernel<View<double>, View<double>> geqrt<double>();
template Kernel<View<float>, View<float>> geqrt<float>();
template Kernel<View<double>, View<double>, View<double>> tsqrt<double>();
template Kernel<View<float>, View<float>, View<float>> tsqrt<float>();
template Kernel<View<const double>, View<const double>, View<double>, Apply> larfb<double>();
template Kernel<View<const float>, View<const float>, View<float>, Apply> larfb<float>();
template Kernel<View<const double>, View<const double>, View<double>, View<double>, Apply>
ssrfb<double>();
template Kernel<View<const float>, View<const float>, View<float>, View<float>, Apply>
ssrfb<float>();

}  // namespace hit::qr
