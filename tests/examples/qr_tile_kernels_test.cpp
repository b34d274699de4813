// Tests of hit-qr's tile kernels (examples/qr/tile_kernels.hpp) against a dense Householder QR of
// the same tiles (LAPACK's geqrf on a column-major copy): the R they leave equals geqrf's up to
// the sign of each row, the Q they apply is orthogonal, applying Qᵀ to the original tiles gives
// [R; 0], and applying Q to [R; 0] gives the original tiles back. Tiles are row-major with a
// pitch wider than their columns, as a layout's blocks hand them out.
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../../examples/qr/tile_kernels.hpp"
#include "hit/device.hpp"

extern "C" {
void dgeqrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, double* tau,
             double* work, const blasint* lwork, blasint* info);
}

namespace {

using hit::index_t;
using hit::KernelContext;
using hit::View;
using hit::qr::Apply;

// A row-major matrix with `pitch` elements per row (the columns beyond `cols` hold garbage that
// no kernel may touch).
template <class T>
struct Matrix {
  index_t rows = 0, cols = 0, pitch = 0;
  std::vector<T> data;
  Matrix(index_t r, index_t c, index_t extra = 3)
      : rows(r), cols(c), pitch(c + extra), data(static_cast<std::size_t>(r * (c + extra)), T(7)) {}
  T& operator()(index_t i, index_t j) { return data[static_cast<std::size_t>(i * pitch + j)]; }
  T operator()(index_t i, index_t j) const { return data[static_cast<std::size_t>(i * pitch + j)]; }
  View<T> view() { return hit::make_view(data.data(), hit::Shape::extents({rows, cols}), pitch); }
  View<const T> cview() const {
    return hit::make_view(static_cast<const T*>(data.data()), hit::Shape::extents({rows, cols}),
                          pitch);
  }
};

template <class T>
Matrix<T> random_matrix(index_t r, index_t c, unsigned seed) {
  Matrix<T> m(r, c);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (index_t i = 0; i < r; ++i) {
    for (index_t j = 0; j < c; ++j) m(i, j) = static_cast<T>(u(gen));
  }
  return m;
}

template <class T>
Matrix<T> factors(index_t n) {
  return Matrix<T>(n, hit::qr::inner_block(n), 0);
}

// The R of a dense Householder QR of `a` (rows x cols, rows >= cols), by LAPACK's geqrf.
template <class T>
std::vector<double> reference_r(const Matrix<T>& a) {
  const auto m = static_cast<blasint>(a.rows), n = static_cast<blasint>(a.cols);
  std::vector<double> col(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  for (blasint j = 0; j < n; ++j) {
    for (blasint i = 0; i < m; ++i) col[static_cast<std::size_t>(j * m + i)] = double(a(i, j));
  }
  std::vector<double> tau(static_cast<std::size_t>(n));
  blasint lwork = -1, info = 0;
  double query = 0;
  dgeqrf_(&m, &n, col.data(), &m, tau.data(), &query, &lwork, &info);
  lwork = static_cast<blasint>(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqrf_(&m, &n, col.data(), &m, tau.data(), work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  std::vector<double> r(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
  for (blasint i = 0; i < n; ++i) {
    for (blasint j = i; j < n; ++j) {
      r[static_cast<std::size_t>(i * n + j)] = col[static_cast<std::size_t>(j * m + i)];
    }
  }
  return r;
}

template <class T>
double tolerance(index_t n) {
  return 50.0 * static_cast<double>(n) * std::numeric_limits<T>::epsilon();
}

// The upper triangle of `got` equals `ref` (n x n, row-major) up to the sign of each row.
template <class T>
void expect_r_matches(const Matrix<T>& got, const std::vector<double>& ref) {
  const index_t n = got.cols;
  for (index_t i = 0; i < n; ++i) {
    const double sign =
        (double(got(i, i)) < 0) == (ref[static_cast<std::size_t>(i * n + i)] < 0) ? 1.0 : -1.0;
    for (index_t j = i; j < n; ++j) {
      EXPECT_NEAR(double(got(i, j)), sign * ref[static_cast<std::size_t>(i * n + j)],
                  tolerance<T>(n) * 4)
          << "R(" << i << ", " << j << ")";
    }
  }
}

template <class T>
void expect_near(const Matrix<T>& got, const Matrix<T>& want, double tol, const char* what) {
  for (index_t i = 0; i < want.rows; ++i) {
    for (index_t j = 0; j < want.cols; ++j) {
      ASSERT_NEAR(double(got(i, j)), double(want(i, j)), tol)
          << what << " (" << i << ", " << j << ")";
    }
  }
}

// The upper triangle of `a`, zeros below it.
template <class T>
Matrix<T> upper(const Matrix<T>& a) {
  Matrix<T> r(a.rows, a.cols);
  for (index_t i = 0; i < a.rows; ++i) {
    for (index_t j = 0; j < a.cols; ++j) r(i, j) = j >= i ? a(i, j) : T(0);
  }
  return r;
}

template <class T>
Matrix<T> zeros(index_t r, index_t c) {
  Matrix<T> z(r, c);
  for (index_t i = 0; i < r; ++i) {
    for (index_t j = 0; j < c; ++j) z(i, j) = T(0);
  }
  return z;
}

template <class T>
class QrTileKernels : public ::testing::Test {};
using Types = ::testing::Types<double, float>;
TYPED_TEST_SUITE(QrTileKernels, Types);

TYPED_TEST(QrTileKernels, GeqrtIsTheHouseholderQrOfTheTile) {
  using T = TypeParam;
  const KernelContext ctx;
  for (const index_t n : {1, 5, 32, 45, 70}) {
    const Matrix<T> original = random_matrix<T>(n, n, 11 + static_cast<unsigned>(n));
    Matrix<T> a = original;
    Matrix<T> t = factors<T>(n);
    (*hit::qr::geqrt<T>().body(hit::DeviceKind::cpu))(ctx, a.view(), t.view());
    expect_r_matches(a, reference_r(original));
    // Qᵀ·A = R: applied to the original tile, the reflectors leave R and zeros below.
    Matrix<T> c = original;
    (*hit::qr::larfb<T>().body(hit::DeviceKind::cpu))(ctx, a.cview(), t.cview(), c.view(),
                                                      Apply::q_transposed);
    expect_near(c, upper(a), tolerance<T>(n) * 4, "Q^T A");
    // Q·R = A, and Q·I is orthogonal.
    Matrix<T> back = upper(a);
    (*hit::qr::larfb<T>().body(hit::DeviceKind::cpu))(ctx, a.cview(), t.cview(), back.view(),
                                                      Apply::q);
    expect_near(back, original, tolerance<T>(n) * 4, "Q R");
    Matrix<T> q = zeros<T>(n, n);
    for (index_t i = 0; i < n; ++i) q(i, i) = T(1);
    (*hit::qr::larfb<T>().body(hit::DeviceKind::cpu))(ctx, a.cview(), t.cview(), q.view(),
                                                      Apply::q);
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) {
        double dot = 0;
        for (index_t r = 0; r < n; ++r) dot += double(q(r, i)) * double(q(r, j));
        ASSERT_NEAR(dot, i == j ? 1.0 : 0.0, tolerance<T>(n))
            << "(Q^T Q)(" << i << ", " << j << ")";
      }
    }
  }
}

TYPED_TEST(QrTileKernels, LarfbLeavesWhatLiesBesideTheTileAlone) {
  using T = TypeParam;
  const KernelContext ctx;
  const index_t n = 40;
  Matrix<T> a = random_matrix<T>(n, n, 3);
  Matrix<T> t = factors<T>(n);
  (*hit::qr::geqrt<T>().body(hit::DeviceKind::cpu))(ctx, a.view(), t.view());
  Matrix<T> c = random_matrix<T>(n, 17, 4);
  (*hit::qr::larfb<T>().body(hit::DeviceKind::cpu))(ctx, a.cview(), t.cview(), c.view(),
                                                    Apply::q_transposed);
  // The pitch's padding holds 7 everywhere it was, in every tile a kernel wrote.
  for (const Matrix<T>* m : {&a, &c}) {
    for (index_t i = 0; i < m->rows; ++i) {
      for (index_t j = m->cols; j < m->pitch; ++j) ASSERT_EQ((*m)(i, j), T(7));
    }
  }
}

TYPED_TEST(QrTileKernels, TsqrtIsTheHouseholderQrOfTheStackedTiles) {
  using T = TypeParam;
  const KernelContext ctx;
  for (const auto& [m, n] : {std::pair<index_t, index_t>{1, 1}, {9, 6}, {3, 40}, {77, 33}}) {
    // The diagonal tile as geqrt leaves it: R above, reflectors below (tsqrt reads R alone).
    Matrix<T> top = random_matrix<T>(n, n, 5 + static_cast<unsigned>(m));
    Matrix<T> t0 = factors<T>(n);
    (*hit::qr::geqrt<T>().body(hit::DeviceKind::cpu))(ctx, top.view(), t0.view());
    const Matrix<T> r0 = upper(top);
    const Matrix<T> below0 = random_matrix<T>(m, n, 6 + static_cast<unsigned>(n));
    Matrix<T> stacked(m + n, n);
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) stacked(i, j) = r0(i, j);
    }
    for (index_t i = 0; i < m; ++i) {
      for (index_t j = 0; j < n; ++j) stacked(n + i, j) = below0(i, j);
    }
    Matrix<T> below = below0;
    Matrix<T> t = factors<T>(n);
    const Matrix<T> reflectors_of_top = top;
    (*hit::qr::tsqrt<T>().body(hit::DeviceKind::cpu))(ctx, top.view(), below.view(), t.view());
    expect_r_matches(top, reference_r(stacked));
    // The diagonal tile's reflectors (below its diagonal) are untouched.
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < i; ++j) ASSERT_EQ(top(i, j), reflectors_of_top(i, j));
    }
    // Qᵀ [R0; B0] = [R; 0], and Q [R; 0] = [R0; B0].
    Matrix<T> c_top = r0;
    Matrix<T> c_below = below0;
    const auto ssrfb = *hit::qr::ssrfb<T>().body(hit::DeviceKind::cpu);
    ssrfb(ctx, below.cview(), t.cview(), c_top.view(), c_below.view(), Apply::q_transposed);
    expect_near(c_top, upper(top), tolerance<T>(m + n) * 4, "Q^T [R0; B0], top");
    expect_near(c_below, zeros<T>(m, n), tolerance<T>(m + n) * 4, "Q^T [R0; B0], below");
    Matrix<T> r_top = upper(top);
    Matrix<T> r_below = zeros<T>(m, n);
    ssrfb(ctx, below.cview(), t.cview(), r_top.view(), r_below.view(), Apply::q);
    expect_near(r_top, r0, tolerance<T>(m + n) * 4, "Q [R; 0], top");
    expect_near(r_below, below0, tolerance<T>(m + n) * 4, "Q [R; 0], below");
  }
}

TYPED_TEST(QrTileKernels, ShapesThatDoNotMatchAreRefused) {
  using T = TypeParam;
  const KernelContext ctx;
  Matrix<T> a = random_matrix<T>(6, 5, 1);
  Matrix<T> t = factors<T>(5);
  EXPECT_THROW((*hit::qr::geqrt<T>().body(hit::DeviceKind::cpu))(ctx, a.view(), t.view()),
               hit::Error);
  Matrix<T> square = random_matrix<T>(5, 5, 2);
  Matrix<T> narrow(5, 3, 0);
  EXPECT_THROW((*hit::qr::geqrt<T>().body(hit::DeviceKind::cpu))(ctx, square.view(), narrow.view()),
               hit::Error);
  Matrix<T> c = random_matrix<T>(4, 5, 3);
  EXPECT_THROW((*hit::qr::larfb<T>().body(hit::DeviceKind::cpu))(ctx, square.cview(), t.cview(),
                                                                 c.view(), Apply::q),
               hit::Error);
}

}  // namespace
