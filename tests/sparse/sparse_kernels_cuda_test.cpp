// The cuda bodies of the sparse kernels against the naive loops (sums in another order: compared
// within rounding). Every test skips with a message on a machine without a GPU (or a build
// without CUDA): they run on the GPU machine.
#include <gtest/gtest.h>

#include <vector>

#include "../support/cuda_device_test.hpp"
#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/topology/physical_topology.hpp"
#include "sparse_kernels_support.hpp"

using namespace sparse_test;

namespace {

template <class T>
class SparseKernelsCuda : public CudaDeviceTest {};

using Types = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SparseKernelsCuda, Types);

// |got - want| within tol * (1 + |want|) element by element.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 16 * tolerance<T>() * (1 + std::abs(want[i])))
        << what << " element " << i;
  }
}

}  // namespace

TYPED_TEST(SparseKernelsCuda, SpmvAndHeatMatchTheNaiveLoopsForShortAndLongRows) {
  using T = TypeParam;
  // Mean row lengths about 1, 6 and 100: 1, 4 and 32 lanes per row.
  for (const int max_row : {2, 12, 200}) {
    const index_t rows = 3001;
    const Csr a = random_csr(rows, rows + 500, max_row, 0.1, static_cast<unsigned>(max_row));
    const auto x = random_vector<T>(a.vertices, 1);
    const auto y0 = random_vector<T>(rows, 2);
    const auto part = hit::partition("threads", range(0, rows));
    const std::string what = "max_row " + std::to_string(max_row);
    for (const auto& [first, last] :
         std::vector<std::pair<index_t, index_t>>{{0, rows}, {17, 2900}}) {
      auto y = tile_of<T>(y0);
      hit::spmv(part, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols),
                tile_of<T>(a.values), tile_of<T>(x), y, first, last);
      expect_close(values_of(y), naive_spmv(a, x, y0, first, last), what + " spmv");
      auto next = tile_of<T>(y0);
      hit::heat_step(part, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols),
                     tile_of<T>(x), next, first, last);
      expect_close(values_of(next), naive_heat(a, x, y0, first, last), what + " heat");
    }
    // Residents: the interior and the boundary rows in two launches, the result left on the GPU.
    hit::Resident<T> yr(tile_of<T>(y0));
    const hit::Resident<index_t> rp(tile_of<index_t>(a.row_ptr));
    const hit::Resident<local_index_t> cols(tile_of<local_index_t>(a.cols));
    const hit::Resident<T> vals(tile_of<T>(a.values)), xr(tile_of<T>(x));
    hit::spmv(part, rp, cols, vals, xr, yr, 0, 1000);
    hit::spmv(part, rp, cols, vals, xr, yr, 1000, rows);
    EXPECT_FALSE(yr.host_current());
    yr.sync_to_host();
    expect_close(values_of(yr.host()), naive_spmv(a, x, y0, 0, rows), what + " resident");
  }
}

TYPED_TEST(SparseKernelsCuda, VectorOperationsOverTheDomainOnly) {
  using T = TypeParam;
  const index_t size = 100040;
  const index_t b = 5, e = 100000 - 7;
  const auto part = hit::partition("threads", range(b, e));
  const auto xv = random_vector<T>(size, 1), yv = random_vector<T>(size, 2);
  const auto pv = random_vector<T>(size, 3), qv = random_vector<T>(size, 4);
  const T a = T(0.375), beta = T(-1.25);
  EXPECT_NEAR(hit::dot(part, tile_of<T>(xv), tile_of<T>(yv)), dot_of(xv, yv, b, e),
              10 * tolerance<T>() * abs_dot_of(xv, yv, b, e));
  auto y = tile_of<T>(yv), z = tile_of<T>(yv), x = tile_of<T>(xv), r = tile_of<T>(yv);
  hit::axpy(part, a, tile_of<T>(xv), y);
  hit::xpay(part, tile_of<T>(xv), beta, z);
  const double rr = hit::cg_update(part, a, tile_of<T>(pv), tile_of<T>(qv), x, r);
  std::vector<T> want_y = yv, want_z = yv, want_x = xv, want_r = yv;
  for (index_t i = b; i < e; ++i) {
    const auto k = static_cast<std::size_t>(i);
    want_y[k] = yv[k] + a * xv[k];
    want_z[k] = xv[k] + beta * yv[k];
    want_x[k] = xv[k] + a * pv[k];
    want_r[k] = yv[k] - a * qv[k];
  }
  expect_close(values_of(y), want_y, "axpy");
  expect_close(values_of(z), want_z, "xpay");
  expect_close(values_of(x), want_x, "cg_update x");
  expect_close(values_of(r), want_r, "cg_update r");
  EXPECT_NEAR(rr, dot_of(want_r, want_r, b, e),
              10 * tolerance<T>() * abs_dot_of(want_r, want_r, b, e));
}

TYPED_TEST(SparseKernelsCuda, ConjugateGradientsWithResidentsCopyTheMatrixOnce) {
  using T = TypeParam;
  const Csr a = poisson3d(16);
  const double tol = std::is_same_v<T, double> ? 1e-10 : 1e-5;
  std::vector<T> from_tiles, from_residents;
  const int it = solve<T, hit::Tile>(a, from_tiles, tol);
  this->dev().reset_counters();
  const int it_resident = solve<T, hit::Resident>(a, from_residents, tol);
  EXPECT_GT(it_resident, 20);
  EXPECT_NEAR(it, it_resident, 2);
  // The matrix (3 arrays), 1, b, x, r, p and q go over once each (9 copies): nothing per
  // iteration (a little slack for the copies' split, none for one per iteration).
  EXPECT_LE(this->dev().counters().copies_in, 12u);
  const double close = std::is_same_v<T, double> ? 1e-8 : 2e-3;
  for (const T v : from_residents) ASSERT_NEAR(v, 1.0, close);
}
