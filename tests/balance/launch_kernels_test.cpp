// Benchmark kernels run through hit::launch: what they launch and stage, that their time is the
// launch's, that their device bytes are what a launch really stages (so the capacity derived from a
// device's memory is exact), and units_that_fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "balance/spmv_unit.hpp"
#include "devices/rebind.hpp"
#include "hit/balance/benchmark.hpp"
#include "hit/balance/kernel_registry.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/topology/device_params.hpp"
#include "hit/topology/physical_topology.hpp"

namespace hit::balance {
using namespace hit::fpm;  // the models the tests build and compare
namespace {

using ::testing::HasSubstr;

Environment& env() {
  return Environment::current();
}

// Binds the rank to `spec` for one test and gives it its own device back afterwards.
class LaunchKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = PhysicalTopology::of(env()).mine().device;
    launch_log(env()).clear();
  }
  void TearDown() override { rebind_device(env(), original_); }
  static Device& bind(const std::string& spec) {
    return rebind_device(env(), parse_device_spec(spec, 1).front());
  }

 private:
  DeviceBinding original_;
};

Precision quick() {
  Precision p;
  p.min_reps = 2;
  p.max_reps = 2;
  p.warmup = 0;
  return p;
}

TEST(UnitsThatFit, InvertsDeviceBytes) {
  BenchmarkKernel k;
  EXPECT_EQ(units_that_fit(k, 1000), unlimited);  // no device_bytes: memory sets no limit
  for (std::uint64_t per : {1, 3, 100, 4096}) {
    for (std::uint64_t fixed : {0, 7, 5000}) {
      k.device_bytes = [per, fixed](std::int64_t d) {
        return fixed + per * static_cast<std::uint64_t>(d);
      };
      for (std::uint64_t bytes : {0, 1, 6, 7, 8, 107, 5099, 5100, 123456, 1000000007}) {
        const std::int64_t expected =
            bytes < fixed + per ? 0 : static_cast<std::int64_t>((bytes - fixed) / per);
        EXPECT_EQ(units_that_fit(k, bytes), expected)
            << "per " << per << " fixed " << fixed << " bytes " << bytes;
      }
    }
  }
  k.device_bytes = [](std::int64_t) { return std::uint64_t{0}; };
  EXPECT_EQ(units_that_fit(k, 0), std::int64_t{1} << 40);  // the search's upper end
}

TEST_F(LaunchKernels, GemmLaunchesTheBlockUpdateOnTheBoundDevice) {
  bind("emu:0");
  BenchmarkKernel k = gemm_launch_kernel(env(), 8);
  EXPECT_EQ(k.name, "gemm(b=8)");
  EXPECT_DOUBLE_EQ(k.complexity(7), 2.0 * 7 * 8 * 8 * 8);
  // d = 7: a 2×3 rectangle of blocks and a partial row of one block: two launches.
  k.setup(7);
  const double t = k.timed_run();
  const auto& recs = launch_log(env()).records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kernel, "gemm_accumulate<double>");
  EXPECT_THAT(recs[0].device, HasSubstr("emu:0"));
  EXPECT_EQ(recs[0].elements, 2 * 8 * 3 * 8);  // C of the rectangle
  EXPECT_EQ(recs[1].elements, 8 * 8);          // the partial row
  EXPECT_DOUBLE_EQ(t, recs[0].seconds + recs[1].seconds);
  // A, B and C go in, C comes back: the point includes the transfers.
  EXPECT_EQ(recs[0].copies_in, 3u);
  EXPECT_EQ(recs[0].copies_out, 1u);
  // Device bytes: what the largest (first) launch staged (emu rows are 64 bytes apart).
  EXPECT_EQ(k.device_bytes(7), recs[0].problem_bytes);
  k.teardown();
  for (std::int64_t d : {1, 4, 9, 10, 30}) {
    launch_log(env()).clear();
    k.setup(d);
    k.timed_run();
    EXPECT_EQ(k.device_bytes(d), launch_log(env()).records().front().problem_bytes) << d;
    const auto m = static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(d))));
    EXPECT_EQ(launch_log(env()).records().size(), d % m == 0 ? 1u : 2u) << d;
    k.teardown();
  }
}

TEST_F(LaunchKernels, JacobiStagesTheRowsWithTheirHalo) {
  bind("emu:0");
  BenchmarkKernel k = jacobi_launch_kernel(env(), 30);
  EXPECT_EQ(k.name, "jacobi5(N=30)");
  EXPECT_DOUBLE_EQ(k.complexity(10), 4.0 * 10 * 30);
  for (std::int64_t d : {1, 2, 17, 100}) {
    launch_log(env()).clear();
    k.setup(d);
    const double t = k.timed_run();
    const LaunchRecord& r = launch_log(env()).last();
    EXPECT_EQ(r.kernel, "jacobi5<double>");
    EXPECT_EQ(r.elements, d * 30);
    EXPECT_DOUBLE_EQ(t, r.seconds);
    EXPECT_EQ(r.bytes_in, static_cast<std::uint64_t>((d + 2) * 32 * 8));  // in, with its halo
    EXPECT_EQ(r.bytes_out, static_cast<std::uint64_t>(d * 30 * 8));       // out, not sent
    // Rows of 32 and 30 doubles are padded to 64 bytes on emu: 256 and 256 bytes.
    EXPECT_EQ(k.device_bytes(d), static_cast<std::uint64_t>((d + 2) * 256 + d * 256));
    EXPECT_EQ(k.device_bytes(d), r.problem_bytes);
    k.teardown();
  }
}

// The spmv kernel's rows are those of hit-cg's poisson3d:n=64 (the first d rows, for d up to
// 64³ − 64²), and its closed-form count of nonzeros (hence of flops) is the arrays'.
TEST(SpmvUnit, RowsAreThoseOfPoisson3d) {
  const GeneratorSpec spec = GeneratorSpec::parse("poisson3d:n=64");
  for (std::int64_t d : {1, 2, 63, 64, 65, 127, 4095, 4096, 4097, 8191, 12345, 258048}) {
    const detail::SpmvRows a = detail::spmv_rows(d);
    const CsrRows<double> ref = generate_rows<double>(spec, 0, d);
    ASSERT_EQ(detail::spmv_nonzeros(d), ref.nonzeros()) << d;
    ASSERT_EQ(a.cols.size(), ref.nonzeros()) << d;
    for (index_t r = 0; r <= d; ++r) {
      ASSERT_EQ(a.row_ptr(r), ref.row_ptr[static_cast<std::size_t>(r)]) << d << " row " << r;
    }
    for (index_t k = 0; k < ref.nonzeros(); ++k) {
      ASSERT_EQ(a.cols(k), ref.cols[static_cast<std::size_t>(k)]) << d << " nonzero " << k;
      ASSERT_EQ(a.values(k), ref.values[static_cast<std::size_t>(k)]) << d << " nonzero " << k;
    }
  }
  // Beyond the last plane of poisson3d:n=64 the grid goes on (every row has its z+1 neighbour):
  // spmv_rows checks its own count.
  for (std::int64_t d : {258049, 262144, 262145, 300001}) {
    EXPECT_EQ(detail::spmv_rows(d).cols.size(), detail::spmv_nonzeros(d)) << d;
  }
  // 14 flops for an inner row: a plane above the first has 7·64² − 4·64 nonzeros.
  EXPECT_DOUBLE_EQ(detail::spmv_flops(3 * 4096) - detail::spmv_flops(2 * 4096),
                   2.0 * (7 * 4096 - 4 * 64));
  EXPECT_DOUBLE_EQ(detail::spmv_flops(1), 8.0);  // row 0: the diagonal and 3 neighbours
}

TEST_F(LaunchKernels, SpmvLaunchesOneProductOfResidentArrays) {
  bind("emu:0");
  BenchmarkKernel k = spmv_launch_kernel(env());
  EXPECT_EQ(k.name, "spmv(poisson3d,plane=64x64)");
  EXPECT_DOUBLE_EQ(k.complexity(5000), detail::spmv_flops(5000));
  for (std::int64_t d : {1, 100, 4097, 20000}) {
    launch_log(env()).clear();
    k.setup(d);
    const double first = k.timed_run();  // the warm-up: stages the matrix and the vectors
    const double t = k.timed_run();
    const auto& recs = launch_log(env()).records();
    ASSERT_EQ(recs.size(), 2u) << d;
    EXPECT_EQ(recs[0].kernel, "spmv<double>");
    EXPECT_THAT(recs[0].device, HasSubstr("emu:0"));
    EXPECT_EQ(recs[0].elements, d);
    EXPECT_DOUBLE_EQ(first, recs[0].seconds);
    EXPECT_DOUBLE_EQ(t, recs[1].seconds);
    EXPECT_GT(t, 0);
    EXPECT_EQ(recs[0].copies_in, 5u) << d;  // row_ptr, cols, values, x, y
    EXPECT_EQ(recs[1].copies_in, 0u) << d;  // resident: nothing staged again
    EXPECT_EQ(recs[1].copies_out, 0u) << d;
    EXPECT_EQ(k.device_bytes(d), recs[0].problem_bytes) << d;
    k.teardown();
  }
}

// The product the kernel launches is A·x of poisson3d:n=64's rows: hit::spmv over its arrays on
// an emulated device gives the product of the generated rows.
TEST_F(LaunchKernels, SpmvArraysGiveThePoisson3dProduct) {
  bind("emu:0(slowdown=2)");
  const std::int64_t d = 9000;
  const detail::SpmvRows a = detail::spmv_rows(d);
  const index_t vertices = d + 4096;
  Tile<double> x(Shape{Sig(0, vertices)});
  Tile<double> y(Shape{Sig(0, d)});
  for (index_t i = 0; i < vertices; ++i) x(i) = 1.0 / static_cast<double>(1 + i % 89);
  for (index_t i = 0; i < d; ++i) y(i) = 0;
  hit::spmv(hit::partition("single", Shape{Sig(0, d)}), a.row_ptr, a.cols, a.values, x, y, 0, d);
  const CsrRows<double> ref = generate_rows<double>(GeneratorSpec::parse("poisson3d:n=64"), 0, d);
  for (index_t r = 0; r < d; ++r) {
    double sum = 0;
    for (index_t k = ref.row_ptr[static_cast<std::size_t>(r)];
         k < ref.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
      sum += ref.values[static_cast<std::size_t>(k)] * x(ref.cols[static_cast<std::size_t>(k)]);
    }
    ASSERT_DOUBLE_EQ(y(r), sum) << r;
  }
}

TEST_F(LaunchKernels, TheSlowdownOfAnEmulatedDeviceIsInTheSpmvPoint) {
  bind("emu:0(slowdown=4)");
  BenchmarkKernel k = spmv_launch_kernel(env());
  const Point p = benchmark(k, 20000, quick());
  EXPECT_EQ(p.reps, 2);
  EXPECT_GT(p.t, 0);
  for (const LaunchRecord& r : launch_log(env()).records()) {
    EXPECT_GE(r.kernel_seconds, 4 * r.host_kernel_seconds * 0.999);
  }
}

TEST_F(LaunchKernels, TheSlowdownOfAnEmulatedDeviceIsInThePoint) {
  bind("emu:0(slowdown=6)");
  BenchmarkKernel k = jacobi_launch_kernel(env(), 256);
  const Point p = benchmark(k, 200, quick());
  EXPECT_EQ(p.reps, 2);
  const auto& recs = launch_log(env()).records();
  ASSERT_EQ(recs.size(), 2u);
  for (const LaunchRecord& r : recs) {
    // The emulated device waits until 6 times the real kernel's time has passed.
    EXPECT_GE(r.kernel_seconds, 6 * r.host_kernel_seconds * 0.999);
    EXPECT_GE(r.seconds, r.kernel_seconds);
  }
  EXPECT_NEAR(p.t, 0.5 * (recs[0].seconds + recs[1].seconds), 1e-12);
}

TEST_F(LaunchKernels, CapacityFromDeviceMemoryIsExact) {
  Device& dev = bind("emu:0(mem=1MiB)");
  for (const std::string name : {"gemm", "jacobi", "spmv"}) {
    LaunchKernelOptions o;
    o.block = 16;
    o.columns = 500;
    BenchmarkKernel k = launch_kernel(env(), name, o);
    const std::int64_t cap = units_that_fit(k, dev.capacity());
    ASSERT_GT(cap, 1) << name;
    ASSERT_LT(cap, unlimited) << name;
    EXPECT_LE(k.device_bytes(cap), dev.capacity()) << name;
    EXPECT_GT(k.device_bytes(cap + 1), dev.capacity()) << name;
    EXPECT_GT(benchmark(k, cap, quick()).t, 0) << name;
    // spmv's arrays are hit::Residents, which a full device keeps on the host (spilled) instead
    // of failing: one unit more still runs (the build never measures it).
    if (name != "spmv") {
      try {
        benchmark(k, cap + 1, quick());
        ADD_FAILURE() << name << ": " << cap + 1 << " units fit a device that should not hold them";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
        EXPECT_THAT(e.what(), HasSubstr("is out of memory"));
      }
    }
    EXPECT_EQ(dev.used(), 0u) << name << ": device memory left behind";
  }
}

TEST_F(LaunchKernels, OnTheHostNothingIsStaged) {
  bind("cpu:0");
  BenchmarkKernel k = gemm_launch_kernel(env(), 16);
  k.setup(4);
  k.timed_run();
  const LaunchRecord& r = launch_log(env()).last();
  EXPECT_EQ(r.bytes_in, 0u);
  EXPECT_EQ(r.bytes_out, 0u);
  k.teardown();
  // A cpu device has no memory limit: no capacity.
  EXPECT_EQ(hit::device(env()).capacity(), std::numeric_limits<std::uint64_t>::max());
}

TEST_F(LaunchKernels, BadUse) {
  try {
    launch_kernel(env(), "fft");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    // Kernels other tests register are listed too.
    EXPECT_THAT(e.what(), HasSubstr("kernel 'fft' (registered kernels: gemm, jacobi, "));
    EXPECT_THAT(e.what(), HasSubstr("spmv"));
  }
  EXPECT_THROW(gemm_launch_kernel(env(), 0), Error);
  EXPECT_THROW(jacobi_launch_kernel(env(), 0), Error);
  try {
    spmv_launch_kernel(env(), "sideways");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sideways"));
  }
  // More rows than 32-bit local column indices can name: refused before anything is allocated.
  BenchmarkKernel k = spmv_launch_kernel(env());
  try {
    k.setup(detail::spmv_max_rows + 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    EXPECT_THAT(e.what(), HasSubstr("too large"));
  }
  try {
    gemm_launch_kernel(env(), 8, "sideways");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sideways"));
  }
}

// A program's own stencil kernel, registered under a name, is what launch_kernel (so hit-fpm
// build --kernel) measures: its launches are of that kernel, staged as jacobi's are, and the
// model's complexity is the flops the program gave. Its body counts the cells it computed.
std::atomic<std::int64_t> mean4_cells{0};

StencilKernel mean4() {
  StencilKernel k("mean4");
  k.cpu([](const KernelContext& ctx, View<const double> in, View<double> out) {
    const View<const double> src = in.around(ctx.block);
    const View<double> dst = out.around(ctx.block);
    for (index_t r = 0; r < ctx.block.extent(0); ++r) {
      for (index_t c = 0; c < ctx.block.extent(1); ++c) {
        dst.local(r, c) = 0.25 * (src.local(r - 1, c) + src.local(r + 1, c) + src.local(r, c - 1) +
                                  src.local(r, c + 1));
      }
    }
    mean4_cells += ctx.block.size();
  });
  k.reads({AccessPattern::stencil(2, 1), AccessPattern::parse("0,0")});
  return k;
}

TEST_F(LaunchKernels, AProgramsOwnKernelIsMeasuredByItsName) {
  bind("emu:0");
  register_benchmark_kernel(
      env(), "mean4", "the mean of four neighbours",
      [](Environment& e, const LaunchKernelOptions& o) {
        return stencil_launch_kernel(
            e, mean4(), {.columns = o.columns, .flops_per_cell = 3.5, .partition = "threads"});
      });
  BenchmarkKernel k = launch_kernel(env(), "mean4", {.columns = 30});
  EXPECT_EQ(k.name, "mean4(N=30)");
  EXPECT_DOUBLE_EQ(k.complexity(10), 3.5 * 10 * 30);
  for (std::int64_t d : {1, 17}) {
    launch_log(env()).clear();
    mean4_cells = 0;
    k.setup(d);
    const double t = k.timed_run();
    const LaunchRecord& r = launch_log(env()).last();
    EXPECT_EQ(r.kernel, "mean4");
    EXPECT_EQ(mean4_cells, d * 30);
    EXPECT_DOUBLE_EQ(t, r.seconds);
    EXPECT_EQ(r.bytes_in, static_cast<std::uint64_t>((d + 2) * 32 * 8));
    EXPECT_EQ(k.device_bytes(d), r.problem_bytes);
    k.teardown();
  }
  // jacobi is this adapter with the library's jacobi5: the same name and flops as before.
  const BenchmarkKernel jacobi = launch_kernel(env(), "jacobi", {.columns = 30, .resident = true});
  EXPECT_EQ(jacobi.name, "jacobi5(N=30,resident)");
  EXPECT_DOUBLE_EQ(jacobi.complexity(10), 4.0 * 10 * 30);
  // A name is registered once; a kernel needs a factory; bad sizes are refused.
  EXPECT_THROW(register_benchmark_kernel(env(), "mean4", "again",
                                         [](Environment& e, const LaunchKernelOptions&) {
                                           return jacobi_launch_kernel(e, 8);
                                         }),
               Error);
  EXPECT_THROW(register_benchmark_kernel(env(), "none", "no factory", nullptr), Error);
  EXPECT_THROW(stencil_launch_kernel(env(), mean4(), {.columns = 0}), Error);
  EXPECT_THROW(stencil_launch_kernel(env(), mean4(), {.flops_per_cell = 0}), Error);
}

}  // namespace
}  // namespace hit::balance
