// Benchmark kernels run through hit::launch: what they launch and stage, that their time is the
// launch's, that their device bytes are what a launch really stages (so the capacity derived from a
// device's memory is exact), and units_that_fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "devices/rebind.hpp"
#include "hit/balance/benchmark.hpp"
#include "hit/balance/kernels.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/device_params.hpp"
#include "hit/kernel.hpp"
#include "hit/physical_topology.hpp"

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
  for (const std::string name : {"gemm", "jacobi"}) {
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
    try {
      benchmark(k, cap + 1, quick());
      ADD_FAILURE() << name << ": " << cap + 1 << " units fit a device that should not hold them";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
      EXPECT_THAT(e.what(), HasSubstr("is out of memory"));
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
    EXPECT_THAT(e.what(), HasSubstr("kernel 'fft' (built-in kernels: gemm, jacobi)"));
  }
  EXPECT_THROW(gemm_launch_kernel(env(), 0), Error);
  EXPECT_THROW(jacobi_launch_kernel(env(), 0), Error);
  try {
    gemm_launch_kernel(env(), 8, "sideways");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sideways"));
  }
}

}  // namespace
}  // namespace hit::balance
