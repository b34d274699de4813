// The sparse kernels (hit/sparse/sparse_kernels.hpp) on cpu and emulated devices, against naive
// loops written here: SpMV over row ranges with several partitions and thread counts, Heat against
// brute force, the vector operations of CG, a small CG solve, argument errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "devices/rebind.hpp"
#include "error_text.hpp"
#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/topology/device_binding.hpp"
#include "hit/topology/physical_topology.hpp"
#include "sparse_kernels_support.hpp"

using ::testing::HasSubstr;
using namespace sparse_test;

namespace {

hit::Environment& env() {
  return hit::Environment::current();
}

// Gives the rank its own device back when a test ends, whatever the test bound.
template <class T>
class SparseKernels : public ::testing::Test {
 protected:
  void SetUp() override { original_ = hit::PhysicalTopology::of(env()).mine().device; }
  void TearDown() override { hit::rebind_device(env(), original_); }
  void bind(const std::string& spec) {
    hit::rebind_device(env(), hit::parse_device_spec(spec, 1).front());
  }

 private:
  hit::DeviceBinding original_;
};

using Types = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SparseKernels, Types);

const std::vector<std::string> partitions = {"threads:threads=1", "threads:threads=3",
                                             "threads:threads=4", "single", "blocks"};

}  // namespace

TYPED_TEST(SparseKernels, SpmvMatchesTheNaiveLoopOverAnyRowRange) {
  using T = TypeParam;
  std::mt19937 rng(5);
  for (const index_t rows : {1, 2, 7, 100, 1001}) {
    const Csr a = random_csr(rows, rows + rows / 3 + 1, 12, 0.2, static_cast<unsigned>(rows));
    const auto x = random_vector<T>(a.vertices, 11);
    const auto y0 = random_vector<T>(rows, 12);
    const auto rp = tile_of<index_t>(a.row_ptr);
    const auto cols = tile_of<local_index_t>(a.cols);
    const auto vals = tile_of<T>(a.values);
    const auto xt = tile_of<T>(x);
    for (const auto& spec : partitions) {
      const auto part = hit::partition(spec, range(0, rows));
      // The whole range, a random range, and the whole range in two calls (interior, boundary).
      const index_t f = static_cast<index_t>(rng() % static_cast<unsigned>(rows + 1));
      const index_t l = f + static_cast<index_t>(rng() % static_cast<unsigned>(rows - f + 1));
      for (const auto& [first, last] :
           std::vector<std::pair<index_t, index_t>>{{0, rows}, {f, l}}) {
        auto y = tile_of<T>(y0);
        hit::spmv(part, rp, cols, vals, xt, y, first, last);
        // In column order on every thread count: the naive loop's result bit for bit.
        EXPECT_EQ(values_of(y), naive_spmv(a, x, y0, first, last))
            << spec << " rows " << rows << " [" << first << ", " << last << ")";
      }
      auto y = tile_of<T>(y0);
      hit::spmv(part, rp, cols, vals, xt, y, f, rows);
      hit::spmv(part, rp, cols, vals, xt, y, 0, f);
      EXPECT_EQ(values_of(y), naive_spmv(a, x, y0, 0, rows)) << spec << " split at " << f;
    }
  }
}

TYPED_TEST(SparseKernels, AnEmptyRangeLaunchesNothingAndEmptyRowsGiveZero) {
  using T = TypeParam;
  // Rows 0..5 without a nonzero at all: no cols or values to read.
  Csr a;
  a.rows = a.vertices = 6;
  a.row_ptr.assign(7, 0);
  const auto part = hit::partition("threads:threads=3", range(0, 6));
  auto y = tile_of<T>(std::vector<T>(6, T(-7)));
  const auto x = tile_of<T>(std::vector<T>(6, T(1)));
  const auto rp = tile_of<index_t>(a.row_ptr);
  const auto cols = tile_of<local_index_t>(a.cols);
  const auto vals = tile_of<T>(a.values);
  auto& log = hit::launch_log(env());
  const std::string name = std::is_same_v<T, double> ? "spmv<double>" : "spmv<float>";
  const auto before = log.totals(name).launches;
  hit::spmv(part, rp, cols, vals, x, y, 4, 4);
  EXPECT_EQ(log.totals(name).launches, before);
  EXPECT_EQ(values_of(y), std::vector<T>(6, T(-7)));
  hit::spmv(part, rp, cols, vals, x, y, 1, 5);
  EXPECT_EQ(log.totals(name).launches, before + 1);
  EXPECT_EQ(values_of(y), (std::vector<T>{-7, 0, 0, 0, 0, -7}));
}

TYPED_TEST(SparseKernels, SpmvDotIsTheProductAndItsDotWithX) {
  using T = TypeParam;
  for (const index_t rows : {1, 9, 1001}) {
    const Csr a = random_csr(rows, rows + 5, 10, 0.1, static_cast<unsigned>(rows) + 40);
    const auto x = random_vector<T>(a.vertices, 41);
    const auto y0 = random_vector<T>(rows, 42);
    for (const auto& spec : partitions) {
      const auto part = hit::partition(spec, range(0, rows));
      const index_t mid = rows / 2;
      auto y = tile_of<T>(y0);
      // Two calls, as CG makes them around the halo: interior rows, then the rest.
      const T d = hit::spmv_dot(part, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols),
                                tile_of<T>(a.values), tile_of<T>(x), y, 0, mid) +
                  hit::spmv_dot(part, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols),
                                tile_of<T>(a.values), tile_of<T>(x), y, mid, rows);
      const std::vector<T> want = naive_spmv(a, x, y0, 0, rows);
      EXPECT_EQ(values_of(y), want) << spec;
      double dot = 0;
      double scale = 0;
      for (index_t r = 0; r < rows; ++r) {
        dot += static_cast<double>(x[static_cast<std::size_t>(r)]) *
               static_cast<double>(want[static_cast<std::size_t>(r)]);
        scale += std::abs(static_cast<double>(x[static_cast<std::size_t>(r)]) *
                          static_cast<double>(want[static_cast<std::size_t>(r)]));
      }
      const double tol = (sizeof(T) == 8 ? 1e-14 : 1e-5) * std::max(1.0, scale);
      EXPECT_NEAR(static_cast<double>(d), dot, tol) << spec << " rows " << rows;
    }
  }
  // An empty range does nothing and gives 0.
  const auto part = hit::partition("threads", range(0, 3));
  auto y = tile_of<T>(std::vector<T>{7, 7, 7});
  EXPECT_EQ(hit::spmv_dot(part, tile_of<index_t>(std::vector<index_t>{0, 1, 2, 3}),
                          tile_of<local_index_t>(std::vector<local_index_t>{0, 1, 2}),
                          tile_of<T>(std::vector<T>{1, 1, 1}), tile_of<T>(std::vector<T>{1, 2, 3}),
                          y, 1, 1),
            T(0));
  EXPECT_EQ(values_of(y), (std::vector<T>{7, 7, 7}));
}

TYPED_TEST(SparseKernels, HeatIsTheMeanOfTheNeighbours) {
  using T = TypeParam;
  // 0 - 1 - 2 a path, 3 isolated (keeps its value), 4 a ghost neighbour of 2.
  Csr g;
  g.rows = 4;
  g.vertices = 5;
  g.row_ptr = {0, 1, 3, 5, 5};
  g.cols = {1, 0, 2, 1, 4};
  g.values.assign(5, 1.0);
  const auto part = hit::partition("threads:threads=2", range(0, 4));
  const auto old = tile_of<T>(std::vector<double>{1, 2, 4, 8, 16});
  auto next = tile_of<T>(std::vector<double>(4, -1));
  hit::heat_step(part, tile_of<index_t>(g.row_ptr), tile_of<local_index_t>(g.cols), old, next, 0,
                 4);
  EXPECT_EQ(values_of(next), (std::vector<T>{2, 2.5, 9, 8}));
}

TYPED_TEST(SparseKernels, HeatMatchesBruteForceOnRandomGraphs) {
  using T = TypeParam;
  for (const index_t rows : {3, 64, 777}) {
    const Csr g = random_csr(rows, rows + 17, 9, 0.15, static_cast<unsigned>(rows) + 3);
    const auto old = random_vector<T>(g.vertices, 4);
    const auto next0 = random_vector<T>(rows, 5);
    for (const auto& spec : partitions) {
      const auto part = hit::partition(spec, range(0, rows));
      auto next = tile_of<T>(next0);
      const index_t mid = rows / 3;
      hit::heat_step(part, tile_of<index_t>(g.row_ptr), tile_of<local_index_t>(g.cols),
                     tile_of<T>(old), next, mid, rows);
      EXPECT_EQ(values_of(next), naive_heat(g, old, next0, mid, rows)) << spec;
    }
  }
}

TYPED_TEST(SparseKernels, VectorOperationsOverTheDomainOnly) {
  using T = TypeParam;
  const index_t n = 1003, size = n + 40;  // the vectors reach past the domain (ghosts)
  for (const auto& spec : partitions) {
    for (const auto& [b, e] : std::vector<std::pair<index_t, index_t>>{{0, n}, {5, n - 7}}) {
      const auto part = hit::partition(spec, range(b, e));
      const auto xv = random_vector<T>(size, 1), yv = random_vector<T>(size, 2);
      const auto pv = random_vector<T>(size, 3), qv = random_vector<T>(size, 4);
      const T a = T(0.375), beta = T(-1.25);
      const double d = hit::dot(part, tile_of<T>(xv), tile_of<T>(yv));
      EXPECT_NEAR(d, dot_of(xv, yv, b, e), tolerance<T>() * abs_dot_of(xv, yv, b, e)) << spec;
      auto y = tile_of<T>(yv);
      hit::axpy(part, a, tile_of<T>(xv), y);
      auto z = tile_of<T>(yv);
      hit::xpay(part, tile_of<T>(xv), beta, z);
      auto x = tile_of<T>(xv), r = tile_of<T>(yv);
      const double rr = hit::cg_update(part, a, tile_of<T>(pv), tile_of<T>(qv), x, r);
      std::vector<T> want_y = yv, want_z = yv, want_x = xv, want_r = yv;
      for (index_t i = b; i < e; ++i) {
        const auto k = static_cast<std::size_t>(i);
        want_y[k] = yv[k] + a * xv[k];
        want_z[k] = xv[k] + beta * yv[k];
        want_x[k] = xv[k] + a * pv[k];
        want_r[k] = yv[k] - a * qv[k];
      }
      EXPECT_EQ(values_of(y), want_y) << spec;
      EXPECT_EQ(values_of(z), want_z) << spec;
      EXPECT_EQ(values_of(x), want_x) << spec;
      EXPECT_EQ(values_of(r), want_r) << spec;
      EXPECT_NEAR(rr, dot_of(want_r, want_r, b, e),
                  tolerance<T>() * abs_dot_of(want_r, want_r, b, e))
          << spec;
    }
  }
}

TYPED_TEST(SparseKernels, ConjugateGradientsSolveTheLaplacianOnCpuAndEmu) {
  using T = TypeParam;
  const Csr a = poisson3d(8);
  const double tol = std::is_same_v<T, double> ? 1e-10 : 1e-5;
  for (const std::string device : {"cpu:0", "emu:0"}) {
    this->bind(device);
    std::vector<T> from_tiles, from_residents;
    const int it = solve<T, hit::Tile>(a, from_tiles, tol);
    hit::device(env()).reset_counters();
    const int it_resident = solve<T, hit::Resident>(a, from_residents, tol);
    EXPECT_GT(it, 12) << device;
    // With Residents the matrix, 1, b, x, r, p and q go to the emulated device once each (9
    // copies), none per iteration; on cpu nothing is copied at all.
    EXPECT_LE(hit::device(env()).counters().copies_in, device == "cpu:0" ? 0u : 12u) << device;
    EXPECT_EQ(it, it_resident) << device;
    EXPECT_EQ(from_tiles, from_residents) << device;
    // The solution of A x = A·1 is 1 (the residual was checked by the iteration in T).
    const double close = std::is_same_v<T, double> ? 1e-8 : 2e-3;
    for (const T v : from_tiles) ASSERT_NEAR(v, 1.0, close);
  }
}

TYPED_TEST(SparseKernels, EmuRunsTheCpuBodiesOnItsCopiesAndResidentsStayThere) {
  using T = TypeParam;
  const Csr a = random_csr(500, 600, 10, 0.1, 77);
  const auto x = random_vector<T>(a.vertices, 8);
  const auto y0 = random_vector<T>(a.rows, 9);
  this->bind("emu:0");
  const auto part = hit::partition("threads:threads=2", range(0, a.rows));
  auto y = tile_of<T>(y0);
  hit::spmv(part, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols), tile_of<T>(a.values),
            tile_of<T>(x), y, 100, 400);
  EXPECT_EQ(values_of(y), naive_spmv(a, x, y0, 100, 400));
  hit::Resident<T> yr(tile_of<T>(y0));
  const hit::Resident<index_t> rp(tile_of<index_t>(a.row_ptr));
  const hit::Resident<local_index_t> cols(tile_of<local_index_t>(a.cols));
  const hit::Resident<T> vals(tile_of<T>(a.values));
  hit::spmv(part, rp, cols, vals, hit::Resident<T>(tile_of<T>(x)), yr, 0, 250);
  EXPECT_FALSE(yr.host_current());  // the result stays on the device until asked for
  hit::spmv(part, rp, cols, vals, hit::Resident<T>(tile_of<T>(x)), yr, 250, a.rows);
  yr.sync_to_host();
  EXPECT_EQ(values_of(yr.host()), naive_spmv(a, x, y0, 0, a.rows));
  // Out of core: y goes chunk by chunk, the matrix and x are staged whole.
  const auto chunks = hit::partition("outOfCore:rows=64", range(0, a.rows));
  auto yc = tile_of<T>(y0);
  hit::spmv(chunks, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols),
            tile_of<T>(a.values), tile_of<T>(x), yc, 30, 470);
  EXPECT_GT(hit::launch_log(env()).last().chunks, 1u);
  EXPECT_EQ(values_of(yc), naive_spmv(a, x, y0, 30, 470));
  auto next = tile_of<T>(y0);
  hit::heat_step(chunks, tile_of<index_t>(a.row_ptr), tile_of<local_index_t>(a.cols), tile_of<T>(x),
                 next, 0, a.rows);
  EXPECT_EQ(values_of(next), naive_heat(a, x, y0, 0, a.rows));
}

TYPED_TEST(SparseKernels, BadArgumentsAreClearErrors) {
  using T = TypeParam;
  using hit_test::error_of;
  const Csr a = random_csr(10, 10, 3, 0, 1);
  const auto rp = tile_of<index_t>(a.row_ptr);
  const auto cols = tile_of<local_index_t>(a.cols);
  const auto vals = tile_of<T>(a.values);
  const auto x = tile_of<T>(std::vector<T>(10, T(1)));
  auto y = tile_of<T>(std::vector<T>(10, T(0)));
  const auto part = hit::partition("threads", range(0, 10));
  EXPECT_THAT(error_of([&] { hit::spmv(part, rp, cols, vals, x, y, 5, 11); }),
              HasSubstr("spmv: rows [5, 11) are not a range inside the partition's domain"));
  EXPECT_THAT(error_of([&] { hit::spmv(part, rp, cols, vals, x, y, 6, 5); }),
              HasSubstr("rows [6, 5)"));
  hit::Tile<T> shifted(range(1, 11));
  EXPECT_THAT(error_of([&] { hit::spmv(part, rp, cols, vals, x, shifted, 0, 10); }),
              HasSubstr("spmv: y has shape [1:11]; the sparse kernels take 1-D tiles indexed "
                        "from 0 with unit stride"));
  hit::Tile<T> short_y(range(0, 5));
  EXPECT_THAT(error_of([&] { hit::spmv(part, rp, cols, vals, x, short_y, 0, 10); }),
              HasSubstr("spmv: y has 5 elements, needs at least 10"));
  EXPECT_THAT(error_of([&] { hit::spmv(part, rp, cols, vals, x, hit::Tile<T>(), 0, 10); }),
              HasSubstr("spmv: y is the null tile"));
  const auto square = hit::partition("threads", hit::Shape{hit::Sig(0, 10), hit::Sig(0, 10)});
  EXPECT_THAT(error_of([&] { hit::axpy(square, T(1), x, y); }),
              HasSubstr("axpy: the partition's domain [0:10][0:10] is not a 1-D range"));
  const auto chunks = hit::partition("outOfCore:rows=4", range(0, 10));
  EXPECT_THAT(error_of([&] { (void)hit::dot(chunks, x, x); }),
              HasSubstr("dot: partition 'outOfCore:rows=4' is out of core"));
  // An inactive process: an empty partition, null tiles, nothing done and no error.
  const auto none = hit::partition("threads", range(0, 0));
  hit::Tile<T> null;
  EXPECT_EQ(hit::dot(none, null, null), T(0));
  EXPECT_EQ(hit::cg_update(none, T(1), null, null, null, null), T(0));
  hit::spmv(none, hit::Tile<index_t>(), hit::Tile<local_index_t>(), null, null, null, 0, 0);
  hit::heat_step(none, hit::Tile<index_t>(), hit::Tile<local_index_t>(), null, null, 0, 0);
}
