// Tests of hit-packages' clusterCL workloads (examples/packages/clustercl.hpp, Raca and Mehofer's
// clusterCL suite): known values of the pricing and Coulomb kernels, hand-computed statistics,
// the Gram–Schmidt loop run through the row functions, and every cpu body run over a few blocks of
// rows equal to the serial reference (clustercl_reference.hpp) in double and in float. A package's
// part of an array is copied into storage of its own (as a device holds it) and viewed with its
// array indices, so a body that reads outside its rows or mistakes positions for indices fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../examples/packages/clustercl.hpp"
#include "../../examples/packages/clustercl_reference.hpp"

namespace {

namespace ref = hit::packages::reference;
using hit::index_t;
using hit::View;
using hit::packages::RowSpan;
using ref::Matrix;
using ref::matrix_view;
using ref::row_block;
using ref::rows_view;
using ref::vector_view;

std::size_t idx(index_t i, index_t j, index_t cols) {
  return static_cast<std::size_t>(i * cols + j);
}

// Values in [lo, hi) that float holds exactly, so the float runs and the double reference start
// from the same numbers.
std::vector<double> random_values(std::size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<double>(static_cast<float>(u(gen)));
  return v;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// Blocks of rows of unequal sizes covering 0 .. n-1, as packages of one kernel.
std::vector<std::pair<index_t, index_t>> blocks(index_t n) {
  std::vector<std::pair<index_t, index_t>> out;
  const index_t sizes[] = {2, 1, 3};
  index_t b = 0;
  for (std::size_t k = 0; b < n; ++k) {
    const index_t e = std::min(n, b + sizes[k % 3]);
    out.emplace_back(b, e);
    b = e;
  }
  return out;
}

// A package's rows lo .. hi-1 of an array of `cols` columns (cols = 0: a vector), in storage of
// their own.
template <class T>
struct Part {
  std::vector<T> data;
  View<T> view;
  index_t lo = 0, hi = 0, cols = 0;

  Part(index_t first, index_t end, index_t columns)
      : data(static_cast<std::size_t>((end - first) * std::max<index_t>(columns, 1)),
             std::numeric_limits<T>::quiet_NaN()),
        lo(first),
        hi(end),
        cols(columns) {
    view = cols == 0 ? vector_view(data.data(), hi - lo, lo)
                     : rows_view(data.data(), lo, hi - lo, cols);
  }
  // Rows lo .. hi-1 of `full`.
  Part(const std::vector<double>& full, index_t first, index_t end, index_t columns)
      : Part(first, end, columns) {
    const std::size_t w = static_cast<std::size_t>(std::max<index_t>(cols, 1));
    for (std::size_t e = 0; e < data.size(); ++e) {
      data[e] = static_cast<T>(full[static_cast<std::size_t>(lo) * w + e]);
    }
  }
  // Copies the rows back into `full`, as the package's result.
  void store(std::vector<double>& full) const {
    const std::size_t w = static_cast<std::size_t>(std::max<index_t>(cols, 1));
    for (std::size_t e = 0; e < data.size(); ++e) {
      full[static_cast<std::size_t>(lo) * w + e] = static_cast<double>(data[e]);
    }
  }
};

template <class T>
double tolerance() {
  return std::is_same_v<T, double> ? 1e-11 : 2e-5;
}

// |got - want| within tol times the larger of 1 and want's largest magnitude, element by element.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t e = 0; e < got.size(); ++e) {
    EXPECT_NEAR(got[e], want[e], tol * scale) << what << " element " << e;
  }
}

// ---- known values ---------------------------------------------------------------------------

TEST(ClusterClBsm, KnownPrices) {
  const hit::packages::OptionPrices p = hit::packages::black_scholes(100, 100, 1, 0.05, 0.2);
  EXPECT_NEAR(p.call, 10.4506, 5e-5);
  EXPECT_NEAR(p.put, 5.5735, 5e-5);
  const ref::Prices q = ref::bsm({100}, {100}, {1}, 0.05, 0.2);
  EXPECT_NEAR(q.call[0], 10.4506, 5e-5);
  EXPECT_NEAR(q.put[0], 5.5735, 5e-5);
}

TEST(ClusterClBsm, PutCallParity) {
  const std::vector<double> s = random_values(50, 1, 20, 200);
  const std::vector<double> k = random_values(50, 2, 20, 200);
  const std::vector<double> t = random_values(50, 3, 0.01, 3);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto p = hit::packages::black_scholes(s[i], k[i], t[i], 0.04, 0.3);
    EXPECT_NEAR(p.call - p.put, s[i] - k[i] * std::exp(-0.04 * t[i]), 1e-9) << i;
    EXPECT_GE(p.call, 0);
    EXPECT_GE(p.put, 0);
  }
}

TEST(ClusterClBsm, ExpiryAndNoVolatilityAreIntrinsic) {
  auto p = hit::packages::black_scholes(110, 100, 0, 0.05, 0.2);
  EXPECT_EQ(p.call, 10);
  EXPECT_EQ(p.put, 0);
  p = hit::packages::black_scholes(90, 100, 0, 0.05, 0.2);
  EXPECT_EQ(p.call, 0);
  EXPECT_EQ(p.put, 10);
  p = hit::packages::black_scholes(100, 100, 1, 0.05, 0);
  EXPECT_NEAR(p.call, 100 - 100 * std::exp(-0.05), 1e-12);
  EXPECT_EQ(p.put, 0);
  EXPECT_EQ(hit::packages::binomial_call(110, 100, 0, 0.05, 0.2, 10, nullptr), 10);
}

TEST(ClusterClBop, ConvergesToBlackScholes) {
  const double cases[][3] = {{100, 100, 1}, {100, 90, 0.5}, {100, 120, 2}, {50, 40, 0.25}};
  std::vector<double> scratch(2001);
  for (const auto& c : cases) {
    const double bs = hit::packages::black_scholes(c[0], c[1], c[2], 0.05, 0.2).call;
    const double tree =
        hit::packages::binomial_call(c[0], c[1], c[2], 0.05, 0.2, 2000, scratch.data());
    EXPECT_NEAR(tree, bs, 0.01) << c[0] << " " << c[1] << " " << c[2];
    // The tree is not Black–Scholes itself: 2 steps are far off.
    EXPECT_GT(
        std::abs(hit::packages::binomial_call(c[0], c[1], c[2], 0.05, 0.2, 2, scratch.data()) - bs),
        1e-3);
  }
  // Two steps by hand: only the up-up leaf pays, S·u² − K, reached with probability p².
  const double u = std::exp(0.2 * std::sqrt(0.5));
  const double p = (std::exp(0.05 * 0.5) - 1 / u) / (u - 1 / u);
  EXPECT_NEAR(hit::packages::binomial_call(100, 100, 1, 0.05, 0.2, 2, scratch.data()),
              std::exp(-0.05) * p * p * (100 * u * u - 100), 1e-12);
}

TEST(ClusterClDcs, OneAtomAtKnownDistance) {
  // One atom of charge 2 at the origin; grid points at (i, j, 4): (3, 0, 4) is 5 away.
  std::vector<double> atoms = {0, 0, 0, 2};
  std::vector<double> grid(16, -1);
  hit::packages::dcs_out_rows(row_block(0, 4), matrix_view(atoms.data(), 1, 4),
                              matrix_view(grid.data(), 4, 4), 1.0, 4.0);
  EXPECT_DOUBLE_EQ(grid[idx(0, 0, 4)], 0.5);
  EXPECT_DOUBLE_EQ(grid[idx(3, 0, 4)], 0.4);
  EXPECT_DOUBLE_EQ(grid[idx(0, 3, 4)], 0.4);
  EXPECT_DOUBLE_EQ(grid[idx(3, 3, 4)], 2 / std::sqrt(34.0));
  // An atom on grid point (1, 2) leaves that point out of its own sum.
  atoms = {0, 0, 0, 2, 1, 2, 4, 7};
  std::vector<double> in(16, 0.0);
  hit::packages::dcs_in_rows(row_block(0, 2), matrix_view(atoms.data(), 2, 4),
                             matrix_view(in.data(), 4, 4), 1.0, 4.0);
  EXPECT_DOUBLE_EQ(in[idx(1, 2, 4)], 2 / std::sqrt(21.0));
  EXPECT_DOUBLE_EQ(in[idx(1, 1, 4)], 2 / std::sqrt(18.0) + 7.0);
  EXPECT_DOUBLE_EQ(in[idx(0, 0, 4)], 0.5 + 7 / std::sqrt(5.0));
}

TEST(ClusterClConv, ZeroOutsideTheImage) {
  const index_t n = 4, m = 5;
  std::vector<double> image(static_cast<std::size_t>(n * m), 1.0);
  std::vector<double> w(9, 1.0);
  std::vector<double> out(image.size(), -1.0);
  hit::packages::conv_rows(row_block(0, n), matrix_view(image.data(), n, m),
                           matrix_view(w.data(), 3, 3), matrix_view(out.data(), n, m), n, m);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < m; ++j) {
      const int rows_in = 3 - (i == 0) - (i == n - 1);
      const int cols_in = 3 - (j == 0) - (j == m - 1);
      EXPECT_EQ(out[idx(i, j, m)], rows_in * cols_in) << i << " " << j;
    }
  }
  // The filter is applied as written, not flipped: W(0, 1) weighs the pixel above.
  std::vector<double> above(9, 0.0);
  above[1] = 1;
  for (std::size_t e = 0; e < image.size(); ++e) image[e] = static_cast<double>(e);
  hit::packages::conv_rows(row_block(0, n), matrix_view(image.data(), n, m),
                           matrix_view(above.data(), 3, 3), matrix_view(out.data(), n, m), n, m);
  EXPECT_EQ(out[idx(0, 2, m)], 0);
  EXPECT_EQ(out[idx(2, 3, m)], image[idx(1, 3, m)]);
}

// X with columns of known statistics: c0 = 1 2 3, c1 = 2 1 0 (c0 reversed), c2 constant,
// c3 = 1 1 4 (mean 2, variance 3, covariance 1.5 with c0).
TEST(ClusterClCov, HandComputed) {
  std::vector<double> x = {1, 2, 5, 1, 2, 1, 5, 1, 3, 0, 5, 4};
  std::vector<double> mean(4, -1), cov(16, -1);
  const auto xv = matrix_view(x.data(), 3, 4);
  hit::packages::mean_rows(row_block(0, 4), xv, vector_view(mean.data(), 4));
  hit::packages::cov_rows(row_block(0, 4), xv, vector_view(mean.data(), 4),
                          matrix_view(cov.data(), 4, 4));
  EXPECT_EQ(mean, (std::vector<double>{2, 1, 5, 2}));
  const std::vector<double> want = {1,   -1,   0, 1.5,   //
                                    -1,  1,    0, -1.5,  //
                                    0,   0,    0, 0,     //
                                    1.5, -1.5, 0, 3};
  expect_close(cov, want, 1e-15, "cov");
  expect_close(ref::covariance(x, 3, 4), want, 1e-15, "reference cov");
}

TEST(ClusterClCor, HandComputedAndZeroVariance) {
  std::vector<double> x = {1, 2, 5, 1, 2, 1, 5, 1, 3, 0, 5, 4};
  std::vector<double> mean(4, -1), sd(4, -1), cor(16, -1);
  const auto xv = matrix_view(x.data(), 3, 4);
  hit::packages::mean_sd_rows(row_block(0, 4), xv, vector_view(mean.data(), 4),
                              vector_view(sd.data(), 4));
  hit::packages::cor_rows(row_block(0, 4), xv, vector_view(mean.data(), 4),
                          vector_view(sd.data(), 4), matrix_view(cor.data(), 4, 4));
  EXPECT_EQ(sd[2], 0.0);
  EXPECT_NEAR(sd[0], 1, 1e-15);
  EXPECT_NEAR(sd[3], std::sqrt(3.0), 1e-15);
  const double r03 = 1.5 / std::sqrt(3.0);
  const std::vector<double> want = {1,   -1,   0, r03,   //
                                    -1,  1,    0, -r03,  //
                                    0,   0,    1, 0,     //
                                    r03, -r03, 0, 1};
  expect_close(cor, want, 1e-15, "cor");
  expect_close(ref::correlation(x, 3, 4), want, 1e-15, "reference cor");
}

// A constant column whose mean is not exact in binary (0.1 three times sums to 0.30000000000000004)
// still has no variance.
TEST(ClusterClCor, ConstantColumnWithRoundingNoise) {
  std::vector<double> x = {0.1, 1, 0.1, 2, 0.1, 4};
  std::vector<double> mean(2), sd(2), cor(4, -1);
  const auto xv = matrix_view(x.data(), 3, 2);
  hit::packages::mean_sd_rows(row_block(0, 2), xv, vector_view(mean.data(), 2),
                              vector_view(sd.data(), 2));
  hit::packages::cor_rows(row_block(0, 2), xv, vector_view(mean.data(), 2),
                          vector_view(sd.data(), 2), matrix_view(cor.data(), 2, 2));
  EXPECT_EQ(sd[0], 0.0);
  EXPECT_GT(sd[1], 1);
  EXPECT_EQ(cor, (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(ref::correlation(x, 3, 2), (std::vector<double>{1, 0, 0, 1}));
}

template <class T>
void check_gram_schmidt(index_t m, index_t n, index_t block_rows, double tol) {
  const Matrix a = random_values(static_cast<std::size_t>(m * n), 11);
  const ref::QR qr = ref::gsp_by_rows<T>(a, m, n, block_rows);
  // QᵀQ = I.
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j) {
      double dot = 0;
      for (index_t r = 0; r < m; ++r) dot += qr.q[idx(r, i, n)] * qr.q[idx(r, j, n)];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, tol) << i << " " << j;
    }
  }
  // A = QR, R upper triangular with a positive diagonal.
  for (index_t r = 0; r < m; ++r) {
    for (index_t j = 0; j < n; ++j) {
      double sum = 0;
      for (index_t k = 0; k <= j; ++k) sum += qr.q[idx(r, k, n)] * qr.r[idx(k, j, n)];
      EXPECT_NEAR(sum, a[idx(r, j, n)], tol) << r << " " << j;
    }
  }
  for (index_t i = 0; i < n; ++i) {
    EXPECT_GT(qr.r[idx(i, i, n)], 0);
    for (index_t j = 0; j < i; ++j) EXPECT_EQ(qr.r[idx(i, j, n)], 0);
  }
  const ref::QR plain = ref::mgs(a, m, n);
  expect_close(qr.q, plain.q, tol, "Q against plain MGS");
  expect_close(qr.r, plain.r, tol, "R against plain MGS");
}

TEST(ClusterClGsp, RowFunctionsFactorise) {
  check_gram_schmidt<double>(13, 6, 4, 1e-12);
  check_gram_schmidt<double>(6, 6, 1, 1e-11);
  check_gram_schmidt<float>(13, 6, 5, 2e-5);
}

// ---- every cpu body against the reference, by blocks of rows
// -------------------------------------

template <class T>
class ClusterClRows : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(ClusterClRows, Precisions);

TYPED_TEST(ClusterClRows, Syrk) {
  using T = TypeParam;
  const index_t n = 8, m = 5;
  const Matrix a = random_values(static_cast<std::size_t>(n * m), 21);
  std::vector<T> at = as<T>(a);
  Matrix c(static_cast<std::size_t>(n * n));
  for (const auto& [b, e] : blocks(n)) {
    Part<T> out(b, e, n);
    hit::packages::syrk_rows(row_block(b, e), matrix_view(at.data(), n, m), out.view);
    out.store(c);
  }
  expect_close(c, ref::syrk(a, n, m), tolerance<T>(), "syrk");
}

TYPED_TEST(ClusterClRows, Gsmv) {
  using T = TypeParam;
  const index_t n = 9;
  const Matrix a = random_values(static_cast<std::size_t>(n * n), 31);
  const Matrix bm = random_values(static_cast<std::size_t>(n * n), 32);
  const std::vector<double> x = random_values(static_cast<std::size_t>(n), 33);
  std::vector<T> xt = as<T>(x);
  std::vector<double> y(static_cast<std::size_t>(n));
  for (const auto& [b, e] : blocks(n)) {
    Part<T> pa(a, b, e, n), pb(bm, b, e, n), py(b, e, 0);
    hit::packages::gsmv_rows(row_block(b, e), pa.view, pb.view, vector_view(xt.data(), n), py.view,
                             T(1.5), T(-0.75));
    py.store(y);
  }
  expect_close(y, ref::gsmv(a, bm, x, n, 1.5, -0.75), tolerance<T>(), "gsmv");
}

TYPED_TEST(ClusterClRows, Bicg) {
  using T = TypeParam;
  const index_t rows = 10, cols = 7;
  const Matrix a = random_values(static_cast<std::size_t>(rows * cols), 41);
  const std::vector<double> p = random_values(static_cast<std::size_t>(cols), 42);
  const std::vector<double> r = random_values(static_cast<std::size_t>(rows), 43);
  std::vector<T> pt = as<T>(p);
  std::vector<double> q(static_cast<std::size_t>(rows)), s(static_cast<std::size_t>(cols), 0.0);
  for (const auto& [b, e] : blocks(rows)) {
    Part<T> pa(a, b, e, cols), pr(r, b, e, 0), pq(b, e, 0);
    std::vector<T> sp(static_cast<std::size_t>(cols), T(0));  // reduced: zero per package
    hit::packages::bicg_rows(row_block(b, e), pa.view, vector_view(pt.data(), cols), pr.view,
                             pq.view, vector_view(sp.data(), cols));
    pq.store(q);
    // The cuda body's sums by column and chunk of rows give the package's s too.
    const RowSpan package = hit::packages::rows_of(row_block(b, e));
    for (index_t j = 0; j < cols; ++j) {
      double chunked = 0;
      for (index_t t0 = 0; t0 < package.count; t0 += 2) {
        chunked += hit::packages::bicg_s_part(pa.view, pr.view, j, package.part(t0, 2));
      }
      EXPECT_NEAR(chunked, sp[static_cast<std::size_t>(j)], tolerance<T>() * 10) << j;
      s[static_cast<std::size_t>(j)] += static_cast<double>(sp[static_cast<std::size_t>(j)]);
    }
  }
  const ref::Bicg want = ref::bicg(a, p, r, rows, cols);
  expect_close(q, want.q, tolerance<T>(), "bicg q");
  expect_close(s, want.s, tolerance<T>(), "bicg s");
}

// Options with the strikes around the spots, one at expiry.
struct Book {
  std::vector<double> s, k, t;
};
Book book(std::size_t n) {
  Book b{random_values(n, 51, 60, 140), random_values(n, 52, 60, 140),
         random_values(n, 53, 0.1, 2)};
  b.t[3] = 0;
  return b;
}

TYPED_TEST(ClusterClRows, Bsm) {
  using T = TypeParam;
  const index_t n = 11;
  const Book o = book(static_cast<std::size_t>(n));
  std::vector<double> call(static_cast<std::size_t>(n)), put(static_cast<std::size_t>(n));
  for (const auto& [b, e] : blocks(n)) {
    Part<T> ps(o.s, b, e, 0), pk(o.k, b, e, 0), pt(o.t, b, e, 0), pc(b, e, 0), pp(b, e, 0);
    hit::packages::bsm_rows(row_block(b, e), ps.view, pk.view, pt.view, pc.view, pp.view, T(0.03),
                            T(0.25));
    pc.store(call);
    pp.store(put);
  }
  // r and σ as T holds them: 0.03 and 0.25 differ in float.
  const ref::Prices want = ref::bsm(o.s, o.k, o.t, static_cast<double>(T(0.03)), 0.25);
  expect_close(call, want.call, tolerance<T>(), "bsm call");
  expect_close(put, want.put, tolerance<T>(), "bsm put");
  EXPECT_NEAR(call[3], std::max(o.s[3] - o.k[3], 0.0), 1e-5);
}

TYPED_TEST(ClusterClRows, Bop) {
  using T = TypeParam;
  const index_t n = 8;
  const int steps = 64;
  const Book o = book(static_cast<std::size_t>(n));
  std::vector<double> call(static_cast<std::size_t>(n));
  for (const auto& [b, e] : blocks(n)) {
    Part<T> ps(o.s, b, e, 0), pk(o.k, b, e, 0), pt(o.t, b, e, 0), pc(b, e, 0);
    hit::packages::bop_rows(row_block(b, e), ps.view, pk.view, pt.view, pc.view, T(0.03), T(0.25),
                            steps);
    pc.store(call);
  }
  expect_close(call, ref::bop(o.s, o.k, o.t, static_cast<double>(T(0.03)), 0.25, steps),
               tolerance<T>(), "bop");
}

TYPED_TEST(ClusterClRows, Dcs) {
  using T = TypeParam;
  const index_t atoms_n = 9, nx = 7, ny = 5;
  const double h = 0.5, z0 = 0.25;
  Matrix atoms = random_values(static_cast<std::size_t>(atoms_n * 4), 61, 0, 3);
  // Atom 4 on grid point (2, 3): that point leaves it out.
  atoms[idx(4, 0, 4)] = 2 * h;
  atoms[idx(4, 1, 4)] = 3 * h;
  atoms[idx(4, 2, 4)] = z0;
  const Matrix want = ref::dcs(atoms, atoms_n, nx, ny, h, z0);
  std::vector<T> at = as<T>(atoms);

  Matrix out(static_cast<std::size_t>(nx * ny));
  for (const auto& [b, e] : blocks(nx)) {
    Part<T> pg(b, e, ny);
    hit::packages::dcs_out_rows(row_block(b, e), matrix_view(at.data(), atoms_n, 4), pg.view, T(h),
                                T(z0));
    pg.store(out);
  }
  expect_close(out, want, tolerance<T>(), "dcs_out");

  Matrix in(static_cast<std::size_t>(nx * ny), 0.0);
  for (const auto& [b, e] : blocks(atoms_n)) {
    Part<T> pa(atoms, b, e, 4);
    std::vector<T> grid(static_cast<std::size_t>(nx * ny), T(0));  // reduced: zero per package
    hit::packages::dcs_in_rows(row_block(b, e), pa.view, matrix_view(grid.data(), nx, ny), T(h),
                               T(z0));
    // The cuda body's way: each grid point from the package's atoms.
    for (index_t i = 0; i < nx; ++i) {
      for (index_t j = 0; j < ny; ++j) {
        const T point = hit::packages::dcs_point(pa.view, hit::packages::rows_of(row_block(b, e)),
                                                 T(i * h), T(j * h), T(z0));
        EXPECT_NEAR(point, grid[idx(i, j, ny)], tolerance<T>() * 10);
        in[idx(i, j, ny)] += static_cast<double>(grid[idx(i, j, ny)]);
      }
    }
  }
  expect_close(in, want, tolerance<T>(), "dcs_in");
}

TYPED_TEST(ClusterClRows, Conv) {
  using T = TypeParam;
  const index_t n = 9, m = 6;
  const Matrix image = random_values(static_cast<std::size_t>(n * m), 71);
  const Matrix w = random_values(9, 72);
  std::vector<T> wt = as<T>(w);
  Matrix out(static_cast<std::size_t>(n * m));
  for (const auto& [b, e] : blocks(n)) {
    // The package's rows and the halo rows the image has beside them.
    Part<T> pin(image, std::max<index_t>(b - 1, 0), std::min(e + 1, n), m), pout(b, e, m);
    hit::packages::conv_rows(row_block(b, e), pin.view, matrix_view(wt.data(), 3, 3), pout.view, n,
                             m);
    pout.store(out);
  }
  expect_close(out, ref::conv(image, n, m, w), tolerance<T>(), "conv");
}

TYPED_TEST(ClusterClRows, Cov) {
  using T = TypeParam;
  const index_t n = 10, m = 6;
  const Matrix x = random_values(static_cast<std::size_t>(n * m), 81, -2, 3);
  std::vector<T> xt = as<T>(x);
  const auto xv = matrix_view(xt.data(), n, m);
  std::vector<double> mean(static_cast<std::size_t>(m));
  for (const auto& [b, e] : blocks(m)) {
    Part<T> pm(b, e, 0);
    hit::packages::mean_rows(row_block(b, e), xv, pm.view);
    pm.store(mean);
  }
  expect_close(mean, ref::column_means(x, n, m), tolerance<T>(), "mean");
  std::vector<T> mt = as<T>(mean);
  Matrix cov(static_cast<std::size_t>(m * m));
  for (const auto& [b, e] : blocks(m)) {
    Part<T> pc(b, e, m);
    hit::packages::cov_rows(row_block(b, e), xv, vector_view(mt.data(), m), pc.view);
    pc.store(cov);
  }
  expect_close(cov, ref::covariance(x, n, m), tolerance<T>(), "cov");
}

TYPED_TEST(ClusterClRows, Cor) {
  using T = TypeParam;
  const index_t n = 10, m = 6;
  Matrix x = random_values(static_cast<std::size_t>(n * m), 91, -2, 3);
  for (index_t k = 0; k < n; ++k) x[idx(k, 4, m)] = 0.1f;  // no variance
  std::vector<T> xt = as<T>(x);
  const auto xv = matrix_view(xt.data(), n, m);
  std::vector<double> mean(static_cast<std::size_t>(m)), sd(static_cast<std::size_t>(m));
  for (const auto& [b, e] : blocks(m)) {
    Part<T> pm(b, e, 0), ps(b, e, 0);
    hit::packages::mean_sd_rows(row_block(b, e), xv, pm.view, ps.view);
    pm.store(mean);
    ps.store(sd);
  }
  expect_close(mean, ref::column_means(x, n, m), tolerance<T>(), "mean");
  expect_close(sd, ref::column_sds(x, n, m), tolerance<T>(), "sd");
  EXPECT_EQ(sd[4], 0.0);
  std::vector<T> mt = as<T>(mean), st = as<T>(sd);
  Matrix cor(static_cast<std::size_t>(m * m));
  for (const auto& [b, e] : blocks(m)) {
    Part<T> pc(b, e, m);
    hit::packages::cor_rows(row_block(b, e), xv, vector_view(mt.data(), m),
                            vector_view(st.data(), m), pc.view);
    pc.store(cor);
  }
  expect_close(cor, ref::correlation(x, n, m), tolerance<T>(), "cor");
  for (index_t j = 0; j < m; ++j) {
    EXPECT_EQ(cor[idx(4, j, m)], j == 4 ? 1.0 : 0.0);
    EXPECT_EQ(cor[idx(j, 4, m)], j == 4 ? 1.0 : 0.0);
  }
}

// One column step of Gram–Schmidt by packages: dots reduced over the packages (and by the cuda
// body's chunks), then the update, against the plain MGS's first step.
TYPED_TEST(ClusterClRows, GspStep) {
  using T = TypeParam;
  const index_t m = 11, n = 5;
  const Matrix a = random_values(static_cast<std::size_t>(m * n), 101);
  for (index_t k = 0; k < 2; ++k) {
    std::vector<double> d(static_cast<std::size_t>(n), -7.0);
    for (index_t j = k; j < n; ++j) d[static_cast<std::size_t>(j)] = 0;
    for (const auto& [b, e] : blocks(m)) {
      Part<T> pa(a, b, e, n);
      std::vector<T> dp(static_cast<std::size_t>(n), T(-7));
      for (index_t j = k; j < n; ++j) dp[static_cast<std::size_t>(j)] = 0;
      hit::packages::gsp_dots_rows(row_block(b, e), pa.view, vector_view(dp.data(), n), k);
      const RowSpan package = hit::packages::rows_of(row_block(b, e));
      for (index_t j = 0; j < k; ++j) EXPECT_EQ(dp[static_cast<std::size_t>(j)], T(-7));
      for (index_t j = k; j < n; ++j) {
        double chunked = 0;
        for (index_t t0 = 0; t0 < package.count; t0 += 2) {
          chunked += hit::packages::gsp_dots_part(pa.view, k, j, package.part(t0, 2));
        }
        EXPECT_NEAR(chunked, dp[static_cast<std::size_t>(j)], tolerance<T>() * 10);
        d[static_cast<std::size_t>(j)] += static_cast<double>(dp[static_cast<std::size_t>(j)]);
      }
    }
    for (index_t j = k; j < n; ++j) {
      double want = 0;
      for (index_t r = 0; r < m; ++r) want += a[idx(r, k, n)] * a[idx(r, j, n)];
      EXPECT_NEAR(d[static_cast<std::size_t>(j)], want, tolerance<T>() * 10) << j;
    }
  }

  // The update of column 0 with R's first row from the plain MGS.
  const ref::QR plain = ref::mgs(a, m, n);
  std::vector<T> rk(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j)
    rk[static_cast<std::size_t>(j)] = static_cast<T>(plain.r[idx(0, j, n)]);
  Matrix a2(static_cast<std::size_t>(m * n));
  for (const auto& [b, e] : blocks(m)) {
    Part<T> pa(a, b, e, n), p2(b, e, n);
    hit::packages::gsp_update_rows(row_block(b, e), pa.view, vector_view(rk.data(), n), p2.view, 0);
    for (index_t r = b; r < e; ++r) {
      for (index_t j = 0; j < n; ++j) {
        EXPECT_NEAR(hit::packages::gsp_update_element(pa.view, vector_view(rk.data(), n), 0, r, j),
                    p2.view(r, j), tolerance<T>());
      }
    }
    p2.store(a2);
  }
  for (index_t r = 0; r < m; ++r) {
    const double q0 = a[idx(r, 0, n)] / plain.r[0];
    EXPECT_NEAR(a2[idx(r, 0, n)], plain.q[idx(r, 0, n)], tolerance<T>());
    for (index_t j = 1; j < n; ++j) {
      EXPECT_NEAR(a2[idx(r, j, n)], a[idx(r, j, n)] - q0 * plain.r[idx(0, j, n)], tolerance<T>());
    }
  }
}

}  // namespace
