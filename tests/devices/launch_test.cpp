// hit::launch on cpu and emulated devices: staging by intent (counted through the backend's
// counters), copy-back to the domain, strided and ghost tiles, residency, out-of-core chunks,
// emulated capacity, bandwidth and slowdown, missing implementations, built-in kernels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "devices/rebind.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/tile.hpp"
#include "hit/topology/physical_topology.hpp"

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

hit::Environment& env() {
  return hit::Environment::current();
}

hit::Device& bind(const std::string& spec) {
  return hit::rebind_device(env(), hit::parse_device_spec(spec, 1).front());
}

// Gives the rank its own device back when a test ends, whatever the test bound.
class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override { original_ = hit::PhysicalTopology::of(env()).mine().device; }
  void TearDown() override { hit::rebind_device(env(), original_); }

 private:
  hit::DeviceBinding original_;
};

// Values exact in double and float: small integers.
double f(hit::index_t i, hit::index_t j) {
  return static_cast<double>((i * 7 + j * 13) % 101 + (i * j) % 17);
}

template <class T>
hit::Tile<T> filled(const hit::Shape& shape, hit::index_t ghost = 0, double offset = 0) {
  hit::Tile<T> t(shape, hit::TileOptions{{}, ghost});
  t.with_ghosts().for_each(
      [&](const hit::Index& i, T& v) { v = static_cast<T>(f(i[0], i[1]) + offset); });
  return t;
}

template <class F>
void for_box(const hit::Box& b, F&& fn) {
  for (hit::index_t i = b.begin[0]; i < b.end[0]; i += b.step[0]) {
    for (hit::index_t j = b.begin[1]; j < b.end[1]; j += b.step[1]) fn(i, j);
  }
}

// out = in + 1 over the block.
hit::Kernel<hit::View<const double>, hit::View<double>> add_one() {
  hit::Kernel<hit::View<const double>, hit::View<double>> k("add_one");
  k.cpu([](const hit::KernelContext& ctx, hit::View<const double> in, hit::View<double> out) {
    for_box(ctx.block, [&](hit::index_t i, hit::index_t j) { out(i, j) = in(i, j) + 1; });
  });
  return k;
}

// c *= factor over the block.
hit::Kernel<hit::View<double>, double> scale() {
  hit::Kernel<hit::View<double>, double> k("scale");
  k.cpu([](const hit::KernelContext& ctx, hit::View<double> c, double factor) {
    for_box(ctx.block, [&](hit::index_t i, hit::index_t j) { c(i, j) *= factor; });
  });
  return k;
}

// Spins for `ms` milliseconds of wall time: a kernel whose real time does not depend on load.
hit::Kernel<hit::View<const double>, double> spin() {
  hit::Kernel<hit::View<const double>, double> k("spin");
  k.cpu([](const hit::KernelContext&, hit::View<const double>, double ms) {
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    while (std::chrono::steady_clock::now() < end) {
    }
  });
  return k;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_F(LaunchTest, StagingFollowsTheIntent) {
  hit::Device& dev = bind("emu:0");
  const hit::Shape shape = hit::Shape::parse("[0:40][0:30]");
  const auto a = filled<double>(shape);
  hit::Tile<double> b(shape);
  b.fill(-5);
  const auto p = hit::partition("threads:threads=3", shape);
  dev.reset_counters();
  const auto rec = hit::launch(add_one(), p, hit::in(a), hit::out(b));
  auto c = dev.counters();
  EXPECT_EQ(c.copies_in, 1u);   // a only: OUT tiles are not sent
  EXPECT_EQ(c.copies_out, 1u);  // b only: IN tiles do not come back
  EXPECT_EQ(c.bytes_in, 40u * 30 * sizeof(double));
  EXPECT_EQ(c.bytes_out, 40u * 30 * sizeof(double));
  EXPECT_EQ(c.allocations, 2u);
  EXPECT_EQ(c.frees, 2u);
  EXPECT_EQ(dev.used(), 0u);
  EXPECT_EQ(rec.copies_in, 1u);
  EXPECT_EQ(rec.bytes_out, 40u * 30 * sizeof(double));
  EXPECT_EQ(rec.kernel, "add_one");
  b.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1]) + 1); });

  // INOUT goes both ways; a value parameter rides along.
  dev.reset_counters();
  hit::launch(scale(), hit::partition("blocks", shape), hit::inout(b), 2.0);
  c = dev.counters();
  EXPECT_EQ(c.copies_in, 1u);
  EXPECT_EQ(c.copies_out, 1u);
  b.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 2 * (f(i[0], i[1]) + 1)); });
  // The input was not written back.
  a.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1])); });
}

TEST_F(LaunchTest, OnlyTheDomainComesBack) {
  bind("emu:0");
  const hit::Shape shape = hit::Shape::parse("[0:20][0:20]");
  const auto a = filled<double>(shape);
  hit::Tile<double> b(shape);
  b.fill(-1);
  const hit::Shape domain = hit::Shape::parse("[5:15][2:18:3]");
  hit::launch(add_one(), hit::partition("blocks", domain), hit::in(a), hit::out(b));
  b.for_each([&](const hit::Index& i, double v) {
    EXPECT_EQ(v, domain.contains(i) ? f(i[0], i[1]) + 1 : -1) << i;
  });
}

TEST_F(LaunchTest, SameResultsOnCpuAndEmuWithStridedAndGhostTiles) {
  // A strided view (every other column) as input, a ghost-celled tile as output.
  const hit::Shape big = hit::Shape::parse("[0:30][0:60]");
  const auto whole = filled<double>(big);
  const hit::Tile<double> strided = whole.select(hit::Shape::parse("[0:30][0:60:2]"));
  for (const std::string device : {"cpu:0", "emu:1", "emu:2(bw=10GB/s)"}) {
    bind(device);
    hit::Tile<double> out(hit::Shape::parse("[0:30][0:60:2]"), hit::TileOptions{{}, 1});
    out.with_ghosts().fill(-3);
    hit::launch(add_one(), hit::partition("blocks", strided.shape()), hit::in(strided),
                hit::out(out));
    out.for_each(
        [&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1]) + 1) << device << i; });
    // The ghost cells are outside the domain: untouched.
    EXPECT_EQ(out.at(hit::Index{-1, 0}), -3) << device;
    EXPECT_EQ(out.at(hit::Index{30, 58}), -3) << device;
    // An output that is itself a strided view of a bigger tile.
    hit::Tile<double> target(big);
    target.fill(7);
    hit::Tile<double> every_other = target.select(hit::Shape::parse("[0:30][1:60:2]"));
    const hit::Tile<double> src = whole.select(hit::Shape::parse("[0:30][1:60:2]"));
    hit::launch(add_one(), hit::partition("single", src.shape()), hit::in(src),
                hit::out(every_other));
    target.for_each([&](const hit::Index& i, double v) {
      EXPECT_EQ(v, i[1] % 2 == 1 ? f(i[0], i[1]) + 1 : 7) << device << i;
    });
  }
}

TEST_F(LaunchTest, ResidentTilesSkipUnchangedTransfers) {
  hit::Device& dev = bind("emu:0(mem=1MiB)");
  const hit::Shape shape = hit::Shape::parse("[0:16][0:16]");
  const auto a = filled<double>(shape);
  hit::Tile<double> c(shape);
  c.fill(0);
  const auto p = hit::partition("single", shape);
  // acc: c += a, to count reads of a and writes of c.
  hit::Kernel<hit::View<const double>, hit::View<double>> acc("acc");
  acc.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> y) {
    for_box(ctx.block, [&](hit::index_t i, hit::index_t j) { y(i, j) += x(i, j); });
  });
  dev.reset_counters();
  {
    hit::Resident<double> ra(a);
    hit::Resident<double> rc(c);
    EXPECT_EQ(dev.used(), 2u * 16 * 16 * sizeof(double));
    for (int it = 0; it < 3; ++it) hit::launch(acc, p, hit::in(ra), hit::inout(rc));
    auto n = dev.counters();
    EXPECT_EQ(n.copies_in, 2u);   // a and c once each
    EXPECT_EQ(n.copies_out, 0u);  // c stays on the device
    EXPECT_FALSE(rc.host_current());
    EXPECT_EQ(c.at(hit::Index{3, 4}), 0);  // not yet back
    rc.sync_to_host();
    EXPECT_EQ(dev.counters().copies_out, 1u);
    c.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 3 * f(i[0], i[1])); });
    rc.sync_to_host();  // nothing to do
    EXPECT_EQ(dev.counters().copies_out, 1u);
    // Changing a on the host: one more send of a, none of c.
    ra.host().fill(1);
    ra.modified_on_host();
    hit::launch(acc, p, hit::in(ra), hit::inout(rc));
    n = dev.counters();
    EXPECT_EQ(n.copies_in, 3u);
    rc.sync_to_host();
    c.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 3 * f(i[0], i[1]) + 1); });
    // A resident tile mixes with staged ones.
    hit::Tile<double> d(shape);
    hit::launch(add_one(), p, hit::in(rc), hit::out(d));
    d.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 3 * f(i[0], i[1]) + 2); });
  }
  EXPECT_EQ(dev.used(), 0u);  // freed with the last handle
  EXPECT_EQ(dev.counters().frees, dev.counters().allocations);
}

// A program that rewrites the host tile after launches left newer data on the device (a new
// repetition re-initialising its grid) must keep its own data: neither sync_to_host() nor the
// next launch may bring the stale device results back over it.
TEST_F(LaunchTest, HostWritesSupersedeDeviceResults) {
  hit::Device& dev = bind("emu:0(mem=1MiB)");
  const hit::Shape shape = hit::Shape::parse("[0:8][0:8]");
  hit::Tile<double> a(shape);
  hit::Tile<double> c(shape);
  hit::Tile<double> d(shape);
  a.fill(1);
  const auto p = hit::partition("single", shape);
  hit::Resident<double> ra(a);
  hit::Resident<double> rc(c);
  hit::Resident<double> rd(d);
  hit::launch(add_one(), p, hit::in(ra), hit::out(rc));  // the device holds 2s
  EXPECT_FALSE(rc.host_current());
  c.fill(10);
  rc.modified_on_host();
  EXPECT_TRUE(rc.host_current());
  EXPECT_FALSE(rc.device_current());
  dev.reset_counters();
  rc.sync_to_host();
  EXPECT_EQ(dev.counters().copies_out, 0u);
  c.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 10) << i; });
  // The next launch reads the host's data, not the device's old results.
  hit::launch(add_one(), p, hit::in(rc), hit::out(rd));
  rd.sync_to_host();
  d.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 11) << i; });
}

TEST_F(LaunchTest, ResidentOnCpuIsTheTileItself) {
  hit::Device& dev = bind("cpu:0");
  const hit::Shape shape = hit::Shape::parse("[0:8][0:8]");
  hit::Tile<double> c = filled<double>(shape);
  hit::Resident<double> rc(c);
  dev.reset_counters();
  hit::launch(scale(), hit::partition("single", shape), hit::inout(rc), 3.0);
  EXPECT_EQ(dev.counters().copies_in + dev.counters().copies_out, 0u);
  EXPECT_EQ(c.at(hit::Index{2, 3}), 3 * f(2, 3));
  EXPECT_TRUE(rc.host_current());
}

TEST_F(LaunchTest, MissingImplementationNamesKernelDeviceAndWhatExists) {
  bind("cpu:0");
  hit::Kernel<hit::View<double>> gpu_only("gpu_only");
  gpu_only.cuda([](const hit::KernelContext&, hit::View<double>) {});
  hit::Tile<double> t(hit::Shape::parse("[0:4][0:4]"));
  try {
    hit::launch(gpu_only, hit::partition("single", t.shape()), hit::inout(t));
    ADD_FAILURE() << "launched without a cpu body";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::device);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("kernel 'gpu_only'"), HasSubstr("device cpu:0"),
                                HasSubstr("it has: cuda")));
  }
  // emu runs the cpu body; a kernel with none at all says so.
  bind("emu:0");
  hit::Kernel<hit::View<double>> nothing("nothing");
  try {
    hit::launch(nothing, hit::partition("single", t.shape()), hit::inout(t));
    ADD_FAILURE() << "launched without a body";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("kernel 'nothing'"), HasSubstr("emu:0 [emulated]"),
                                HasSubstr("it has: none")));
  }
  EXPECT_THAT(add_one().implementations(), ::testing::ElementsAre("cpu", "emu (the cpu body)"));
}

TEST_F(LaunchTest, PartitionForAnotherDeviceKindIsAnError) {
  bind("emu:0");
  hit::PartitionDevice gpu;
  gpu.kind = hit::DeviceKind::cuda;
  const hit::Shape shape = hit::Shape::parse("[0:4][0:4]");
  const auto p = hit::partition("blocks", shape, {.device = gpu});
  hit::Tile<double> t(shape);
  try {
    hit::launch(scale(), p, hit::inout(t), 1.0);
    ADD_FAILURE();
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("made for a cuda device"), HasSubstr("emu:0")));
  }
}

TEST_F(LaunchTest, EmulatedCapacityIsADeviceOutOfMemoryError) {
  hit::Device& dev = bind("emu:0(mem=1MiB)");
  EXPECT_EQ(dev.capacity(), 1u << 20);
  const hit::Shape shape = hit::Shape::parse("[0:256][0:384]");  // 768 KiB of doubles each
  const auto a = filled<double>(shape);
  hit::Tile<double> b(shape);
  try {
    hit::launch(add_one(), hit::partition("single", shape), hit::in(a), hit::out(b));
    ADD_FAILURE() << "1.5 MiB fitted in 1 MiB";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    // What one launch needs against what the device holds, and what would help.
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("device emu:0(mem=1MiB) [emulated] is out of memory"),
                      HasSubstr("launch of 'add_one' on rank 0 needs 1.50 MiB"),
                      HasSubstr("1.50 MiB staged"), HasSubstr("more than the device's 1.00 MiB"),
                      HasSubstr("more processes"), HasSubstr("outOfCore")));
  }
  EXPECT_EQ(dev.used(), 0u);  // what was allocated before the failure is freed
  // The same launch out of core fits.
  hit::launch(add_one(), hit::partition("outOfCore", shape), hit::in(a), hit::out(b));
  b.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1]) + 1); });
  EXPECT_THROW(dev.allocate(2u << 20), hit::Error);
}

TEST_F(LaunchTest, OutOfCoreJacobiMatchesAndUsesChunks) {
  // 512 x 256 doubles = 1 MiB per array; the device holds 1 MiB.
  const hit::Shape grid = hit::Shape::parse("[0:512][0:256]");
  const hit::Shape interior = hit::Shape::parse("[1:511][1:255]");
  const auto in = filled<double>(grid);
  hit::Tile<double> expected(grid);
  expected.fill(-1);
  interior.for_each([&](const hit::Index& i) {
    expected.at(i) =
        0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) + f(i[0], i[1] - 1) + f(i[0], i[1] + 1));
  });
  const auto k = hit::jacobi5<double>();
  for (const std::string spec :
       {"outOfCore", "outOfCore:buffers=1", "outOfCore:inner=single", "outOfCore:rows=7"}) {
    hit::Device& dev = bind("emu:0(mem=1MiB)");
    hit::Tile<double> out(grid);
    out.fill(-1);
    const auto p = hit::partition(spec, interior, {.access = k.access()});
    const auto rec = hit::launch(k, p, hit::in(in), hit::out(out));
    EXPECT_GT(rec.chunks, 2u) << spec;
    EXPECT_LE(rec.problem_bytes, 1u << 20) << spec;
    out.for_each([&](const hit::Index& i, double v) { ASSERT_EQ(v, expected.at(i)) << spec << i; });
    EXPECT_EQ(dev.used(), 0u);
    // Each chunk reads one row above and below it: more bytes in than the array.
    EXPECT_GT(rec.bytes_in, 512u * 256 * 8) << spec;
    EXPECT_EQ(rec.bytes_out, 510u * 254 * 8) << spec;
  }
  // Without chunks it does not fit.
  bind("emu:0(mem=1MiB)");
  hit::Tile<double> out(grid);
  EXPECT_THROW(hit::launch(k, hit::partition("single", interior), hit::in(in), hit::out(out)),
               hit::Error);
}

TEST_F(LaunchTest, OutOfCoreGemmKeepsBWhole) {
  const hit::Shape sa = hit::Shape::parse("[0:300][0:40]"), sb = hit::Shape::parse("[0:40][0:50]"),
                   sc = hit::Shape::parse("[0:300][0:50]");
  const auto a = filled<double>(sa), b = filled<double>(sb);
  auto c = filled<double>(sc, 0, 1);
  hit::Tile<double> expected = c.clone();
  sc.for_each([&](const hit::Index& i) {
    double s = 0;
    for (hit::index_t k = 0; k < 40; ++k) s += f(i[0], k) * f(k, i[1]);
    expected.at(i) += s;
  });
  hit::Device& dev = bind("emu:0(mem=64KiB)");
  const auto gemm = hit::gemm_accumulate<double>();
  const auto p = hit::partition("outOfCore:fill=1", sc, {.access = gemm.access()});
  dev.reset_counters();
  const auto rec = hit::launch(gemm, p, hit::in(a), hit::in(b), hit::inout(c));
  EXPECT_GT(rec.chunks, 3u);
  // B went once; A and C in every chunk, C back in every chunk.
  EXPECT_EQ(rec.bytes_in, (300u * 40 + 40 * 50 + 300 * 50) * 8);
  EXPECT_EQ(rec.copies_out, rec.chunks);
  EXPECT_EQ(rec.copies_in, 1 + 2 * rec.chunks);
  c.for_each([&](const hit::Index& i, double v) { ASSERT_EQ(v, expected.at(i)) << i; });
}

TEST_F(LaunchTest, DoubleBufferingOverlapsCopiesWithCompute) {
  // Each chunk: 10 ms of kernel and 10 ms of copies in (bw) — overlapped with 2 buffers.
  const hit::Shape shape = hit::Shape::parse("[0:8][0:12500]");  // 100 KB per row of doubles
  const auto a = filled<double>(shape);
  hit::Kernel<hit::View<const double>> wait("wait10ms");
  wait.cpu([](const hit::KernelContext&, hit::View<const double>) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  std::vector<double> one, two;
  for (int rep = 0; rep < 3; ++rep) {
    for (int buffers : {1, 2}) {
      bind("emu:0(bw=10MB/s)");
      const auto p =
          hit::partition("outOfCore:rows=1,inner=single,buffers=" + std::to_string(buffers), shape);
      const auto rec = hit::launch(wait, p, hit::in(a));
      EXPECT_EQ(rec.chunks, 8u);
      (buffers == 1 ? one : two).push_back(rec.seconds);
    }
  }
  // Serial: 8 x (10 + 10) ms; overlapped: about 10 + 8 x 10 ms.
  EXPECT_GT(median(one), 0.155);
  EXPECT_LT(median(two), 0.85 * median(one)) << median(two) << " vs " << median(one);
}

TEST_F(LaunchTest, EmulatedBandwidthSetsCopyTime) {
  bind("emu:0(bw=100MB/s)");
  const hit::Shape shape = hit::Shape::parse("[0:100][0:5000]");  // 4 MB of doubles
  const auto a = filled<double>(shape);
  hit::Kernel<hit::View<const double>> noop("noop");
  noop.cpu([](const hit::KernelContext&, hit::View<const double>) {});
  const auto rec = hit::launch(noop, hit::partition("single", shape), hit::in(a));
  EXPECT_GE(rec.seconds, 0.04);  // 4 MB at 100 MB/s
  EXPECT_LT(rec.seconds, 1.0);
  EXPECT_EQ(rec.bytes_in, 4000000u);
}

TEST_F(LaunchTest, EmulatedSlowdownMultipliesTheMeasuredTime) {
  // A kernel of about 50 ms (it sleeps, so a loaded machine stretches it little), medians of
  // interleaved runs on cpu and on emu with slowdown=3.
  const hit::Shape shape = hit::Shape::parse("[0:4][0:4]");
  const auto a = filled<double>(shape);
  hit::Kernel<hit::View<const double>, double> nap("nap");
  nap.cpu([](const hit::KernelContext&, hit::View<const double>, double ms) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  });
  std::vector<double> host, emulated, own;
  for (int rep = 0; rep < 5; ++rep) {
    bind("cpu:0");
    host.push_back(
        hit::launch(nap, hit::partition("single", shape), hit::in(a), 50.0).kernel_seconds);
    bind("emu:0(slowdown=3)");
    const auto rec = hit::launch(nap, hit::partition("single", shape), hit::in(a), 50.0);
    emulated.push_back(rec.kernel_seconds);
    own.push_back(rec.kernel_seconds / rec.host_kernel_seconds);
  }
  EXPECT_GE(median(host), 0.05);
  EXPECT_NEAR(median(emulated) / median(host), 3.0, 0.3)
      << median(emulated) << " / " << median(host);
  EXPECT_NEAR(median(own), 3.0, 0.3);
}

TEST_F(LaunchTest, CpuClockScalesTheKernelThreadsCpuTime) {
  // clock=cpu: the slowdown scales the CPU time of the thread that ran the body, so a busy kernel
  // takes 3x its CPU time whatever else shares the core; a sleeping one uses no CPU and ends when
  // the host body ends (the device never finishes before it).
  const hit::Shape shape = hit::Shape::parse("[0:4][0:4]");
  const auto a = filled<double>(shape);
  hit::Kernel<hit::View<const double>, double> nap("nap");
  nap.cpu([](const hit::KernelContext&, hit::View<const double>, double ms) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  });
  bind("emu:0(slowdown=3,clock=cpu)");
  std::vector<double> busy, sleeping;
  for (int rep = 0; rep < 5; ++rep) {
    const auto rec = hit::launch(spin(), hit::partition("single", shape), hit::in(a), 30.0);
    EXPECT_GT(rec.host_kernel_seconds, 0.0);
    EXPECT_LE(rec.host_kernel_seconds, rec.kernel_seconds);
    busy.push_back(rec.kernel_seconds / rec.host_kernel_seconds);
    sleeping.push_back(
        hit::launch(nap, hit::partition("single", shape), hit::in(a), 30.0).kernel_seconds);
  }
  EXPECT_NEAR(median(busy), 3.0, 0.3);
  EXPECT_GE(median(sleeping), 0.03);
  EXPECT_LT(median(sleeping), 0.06);
}

TEST_F(LaunchTest, SlowdownProfileModelsAMemoryCliff) {
  // Factor 1 below 1 MiB staged, 4 from there: a small and a large problem on one device. The
  // emulated time over the real body's time (a sleep can only overshoot, on a loaded machine).
  bind("emu:0(slowdown=1;4@1MiB)");
  const auto k = spin();
  const hit::Shape small = hit::Shape::parse("[0:4][0:4]"),
                   large = hit::Shape::parse("[0:256][0:512]");
  const auto a = filled<double>(small), b = filled<double>(large);
  std::vector<double> below, above;
  for (int rep = 0; rep < 5; ++rep) {
    const auto s = hit::launch(k, hit::partition("single", small), hit::in(a), 20.0);
    const auto l = hit::launch(k, hit::partition("single", large), hit::in(b), 20.0);
    EXPECT_EQ(s.problem_bytes, 4u * 64);   // rows padded to 64 bytes
    EXPECT_EQ(l.problem_bytes, 1u << 20);  // at the step
    EXPECT_GE(s.host_kernel_seconds, 0.02);
    below.push_back(s.kernel_seconds / s.host_kernel_seconds);
    above.push_back(l.kernel_seconds / l.host_kernel_seconds);
  }
  EXPECT_NEAR(median(below), 1.0, 0.1);
  EXPECT_NEAR(median(above), 4.0, 0.4);
}

TEST_F(LaunchTest, SpeedChangeSlowsTheDeviceFromALaunchCountOn) {
  // 2x from the third execution, back to the profile's 1 from the fifth: the ratio of emulated to
  // real time per launch follows (a sleep can only overshoot, on a loaded machine).
  bind("emu:0(slowdown=1,change=2@2;1@4)");
  const hit::Shape shape = hit::Shape::parse("[0:4][0:4]");
  const auto a = filled<double>(shape);
  const auto k = spin();
  std::vector<double> ratio;
  for (int i = 0; i < 6; ++i) {
    const auto rec = hit::launch(k, hit::partition("single", shape), hit::in(a), 20.0);
    ratio.push_back(rec.kernel_seconds / rec.host_kernel_seconds);
  }
  for (const int i : {0, 1, 4, 5}) EXPECT_NEAR(ratio[static_cast<std::size_t>(i)], 1.0, 0.15) << i;
  for (const int i : {2, 3}) EXPECT_NEAR(ratio[static_cast<std::size_t>(i)], 2.0, 0.3) << i;
}

TEST_F(LaunchTest, BuiltInGemmMatchesTheDefinition) {
  std::mt19937 rng(5);
  for (const std::string device : {"cpu:0", "emu:0"}) {
    for (int trial = 0; trial < 6; ++trial) {
      bind(device);
      const hit::index_t n = 1 + static_cast<hit::index_t>(rng() % 40),
                         m = 1 + static_cast<hit::index_t>(rng() % 40),
                         q = 1 + static_cast<hit::index_t>(rng() % 40);
      // Global indices of A's columns and B's rows differ (as after Cannon's shifts): positions
      // count.
      const hit::Shape sa(hit::Shape{hit::Sig(10, 10 + n), hit::Sig(100, 100 + m)});
      const hit::Shape sb(hit::Shape{hit::Sig(0, m), hit::Sig(5, 5 + q)});
      const hit::Shape sc(hit::Shape{hit::Sig(10, 10 + n), hit::Sig(5, 5 + q)});
      const auto a = filled<double>(sa), b = filled<double>(sb);
      auto c = filled<double>(sc, 0, 2);
      const auto af = filled<float>(sa), bf = filled<float>(sb);
      auto cf = filled<float>(sc, 0, 2);
      hit::Tile<double> expected(sc);
      sc.for_each([&](const hit::Index& i) {
        double s = f(i[0], i[1]) + 2;
        for (hit::index_t k = 0; k < m; ++k) s += f(i[0], 100 + k) * f(k, i[1]);
        expected.at(i) = s;
      });
      const std::string spec = std::vector<std::string>{"single", "threads", "blocks"}[trial % 3];
      const auto g = hit::gemm_accumulate<double>();
      hit::launch(g, hit::partition(spec, sc, {.access = g.access()}), hit::in(a), hit::in(b),
                  hit::inout(c));
      const auto gf = hit::gemm_accumulate<float>();
      hit::launch(gf, hit::partition(spec, sc, {.access = gf.access()}), hit::in(af), hit::in(bf),
                  hit::inout(cf));
      c.for_each(
          [&](const hit::Index& i, double v) { ASSERT_EQ(v, expected.at(i)) << device << i; });
      cf.for_each([&](const hit::Index& i, float v) {
        ASSERT_NEAR(v, expected.at(i), 1e-5 * expected.at(i)) << device << i;
      });
    }
  }
}

TEST(KernelReads, APatternListOfTheWrongLengthIsAnError) {
  // Two tiles and a value: two or three patterns; one or four name no parameter's reach rightly.
  hit::Kernel<hit::View<const double>, hit::View<double>, double> k("axpy");
  const auto p = hit::AccessPattern::parse("0,0");
  EXPECT_NO_THROW(k.reads({p, p}));
  EXPECT_NO_THROW(k.reads({p, p, hit::AccessPattern()}));
  try {
    k.reads({p});
    ADD_FAILURE() << "one pattern for two tiles";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::invalid_argument);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("kernel 'axpy'"), HasSubstr("got 1 access patterns"),
                                HasSubstr("3 parameters")));
  }
  EXPECT_THROW(k.reads({p, p, p, p}), hit::Error);
  // A value before the last tile counts: its pattern is needed to reach the tile's.
  hit::Kernel<double, hit::View<double>> v("scaled");
  EXPECT_THROW(v.reads({p}), hit::Error);
  EXPECT_NO_THROW(v.reads({hit::AccessPattern(), p}));
}

TEST_F(LaunchTest, BuiltInKernelsCheckTheirTiles) {
  bind("cpu:0");
  const hit::Shape grid = hit::Shape::parse("[0:10][0:10]");
  const auto in = filled<double>(grid);
  hit::Tile<double> out(grid);
  // The whole grid has no neighbours for its border: a shape error naming the tiles.
  try {
    hit::launch(hit::jacobi5<double>(), hit::partition("single", grid), hit::in(in), hit::out(out));
    ADD_FAILURE();
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::shape);
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("jacobi5"), HasSubstr("neighbours"), HasSubstr("[0:10][0:10]")));
  }
  // With ghost cells the whole grid works.
  const auto ghosted = filled<double>(grid, 1);
  hit::launch(hit::jacobi5<double>(), hit::partition("threads", grid), hit::in(ghosted),
              hit::out(out));
  out.for_each([&](const hit::Index& i, double v) {
    EXPECT_EQ(
        v, 0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) + f(i[0], i[1] - 1) + f(i[0], i[1] + 1)));
  });
  hit::Tile<double> wrong(hit::Shape::parse("[0:3][0:3]"));
  EXPECT_THROW(hit::launch(hit::gemm_accumulate<double>(), hit::partition("single", grid),
                           hit::in(in), hit::in(wrong), hit::inout(out)),
               hit::Error);
}

TEST_F(LaunchTest, EveryLaunchIsRecorded) {
  bind("emu:0");
  auto& log = hit::launch_log(env());
  log.clear();
  const hit::Shape shape = hit::Shape::parse("[0:10][0:10]");
  auto c = filled<double>(shape);
  for (int i = 0; i < 3; ++i)
    hit::launch(scale(), hit::partition("single", shape), hit::inout(c), 1.0);
  ASSERT_EQ(log.records().size(), 3u);
  const auto& r = log.last();
  EXPECT_EQ(r.kernel, "scale");
  EXPECT_EQ(r.device, "emu:0 [emulated]");
  EXPECT_EQ(r.partition, "single");
  EXPECT_EQ(r.elements, 100);
  EXPECT_EQ(r.bytes_in, 800u);
  EXPECT_GE(r.lock_released, r.lock_acquired);
  EXPECT_GE(r.seconds, r.kernel_seconds);
  const auto t = log.totals("scale");
  EXPECT_EQ(t.launches, 3u);
  EXPECT_EQ(t.bytes_out, 2400u);
}

TEST_F(LaunchTest, ThreeAxesAndErrorsInsideAKernel) {
  hit::Device& dev = bind("emu:0");
  // A 3-D tile staged whole (its rows merge into one 2-D copy) and a sub-box of it.
  const hit::Shape cube = hit::Shape::parse("[0:5][0:6][0:7]");
  hit::Tile<double> t(cube);
  t.for_each([](const hit::Index& i, double& v) {
    v = static_cast<double>(i[0] * 100 + i[1] * 10 + i[2]);
  });
  hit::Kernel<hit::View<double>> bump("bump");
  bump.cpu([](const hit::KernelContext& ctx, hit::View<double> x) {
    const hit::Box& b = ctx.block;
    for (auto i = b.begin[0]; i < b.end[0]; i += b.step[0])
      for (auto j = b.begin[1]; j < b.end[1]; j += b.step[1])
        for (auto k = b.begin[2]; k < b.end[2]; k += b.step[2]) x(i, j, k) += 1000;
  });
  dev.reset_counters();
  hit::launch(bump, hit::partition("threads", cube), hit::inout(t));
  EXPECT_EQ(dev.counters().copies_in, 1u);
  const hit::Shape part = hit::Shape::parse("[1:4][2:5][0:7:3]");
  hit::Tile<double> view = t.select(part);
  hit::launch(bump, hit::partition("blocks", part), hit::inout(view));
  t.for_each([&](const hit::Index& i, double v) {
    EXPECT_EQ(v, i[0] * 100 + i[1] * 10 + i[2] + 1000 + (part.contains(i) ? 1000 : 0)) << i;
  });
  // An error thrown by a body on the device's thread reaches the caller; nothing stays allocated
  // and the device works afterwards.
  hit::Kernel<hit::View<double>> broken("broken");
  broken.cpu([](const hit::KernelContext&, hit::View<double>) {
    throw hit::Error(hit::ErrorKind::invalid_argument, "broken on purpose");
  });
  try {
    hit::launch(broken, hit::partition("single", cube), hit::inout(t));
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken on purpose"));
  }
  EXPECT_EQ(dev.used(), 0u);
  hit::launch(bump, hit::partition("single", cube), hit::inout(t));
  EXPECT_EQ(t.at(hit::Index{0, 0, 0}), 2000);
}

namespace {

// fail=K: executions 0..K-1 run, the K-th and every later one throw Error(device_failed), and
// nothing of a failed launch comes back.
TEST_F(LaunchTest, InjectedFailureStopsTheDeviceForGood) {
  bind("emu:0(fail=2)");
  const hit::Shape s = hit::Shape::extents({4, 5});
  const auto in = filled<double>(s);
  hit::Tile<double> out(s);
  const auto part = hit::partition("single", s);
  for (int i = 0; i < 2; ++i) {
    out.fill(0);
    hit::launch(add_one(), part, hit::in(in), hit::out(out));
    EXPECT_EQ(out(1, 2), in(1, 2) + 1);
  }
  for (int i = 2; i < 4; ++i) {
    out.fill(-5);
    try {
      hit::launch(add_one(), part, hit::in(in), hit::out(out));
      ADD_FAILURE() << "execution " << i << " ran on a failed device";
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::device_failed);
      EXPECT_THAT(e.what(),
                  AllOf(HasSubstr("failed at kernel execution 2"), HasSubstr("injected: fail=2")));
    }
    EXPECT_EQ(out(1, 2), -5);
  }
}

// resident_prefetch sends the host side on the given stream and marks the device copy current:
// the next launch reads it without sending it again.
TEST_F(LaunchTest, PrefetchedResidentIsNotSentAgain) {
  hit::Device& dev = bind("emu:0(bw=1GB/s)");
  const hit::Shape s = hit::Shape::extents({6, 8});
  hit::Resident<double> r(filled<double>(s));
  hit::detail::resident_prefetch(*hit::detail::resident_state(r), 1);
  EXPECT_TRUE(r.device_current());
  dev.synchronize(1);
  const auto before = dev.counters();
  EXPECT_EQ(before.bytes_in, 6u * 8u * sizeof(double));
  hit::Tile<double> out(s);
  hit::launch(add_one(), hit::partition("single", s), hit::in(r), hit::out(out));
  EXPECT_EQ(dev.counters().bytes_in, before.bytes_in);  // nothing sent by the launch
  EXPECT_EQ(out(3, 4), r.host()(3, 4) + 1);
  // Prefetching a current copy does nothing.
  hit::detail::resident_prefetch(*hit::detail::resident_state(r), 1);
  EXPECT_EQ(dev.counters().bytes_in, before.bytes_in);
}

}  // namespace

// A host wait is a synchronize() that finds work issued since the last wait: a second
// synchronize in a row, or one of a stream nothing was issued on, costs nothing and counts nothing.
TEST_F(LaunchTest, HostWaitsCountWorkIssuedSinceTheLastWait) {
  hit::Device& dev = bind("emu:0");
  dev.reset_counters();
  dev.synchronize();
  EXPECT_EQ(dev.counters().host_waits, 0u);
  std::vector<double> host(64, 1.0);
  void* d = dev.allocate(host.size() * sizeof(double));
  dev.copy_in(d, 0, host.data(), 0, host.size() * sizeof(double), 1, 1);
  dev.synchronize(0);  // the copy went to stream 1
  EXPECT_EQ(dev.counters().host_waits, 0u);
  dev.synchronize(1);
  dev.synchronize(1);
  EXPECT_EQ(dev.counters().host_waits, 1u);
  dev.fill_zero(d, 8, 0);
  dev.copy_out(host.data(), 0, d, 0, host.size() * sizeof(double), 1, 1);
  dev.synchronize();  // both streams: one wait
  EXPECT_EQ(dev.counters().host_waits, 2u);
  EXPECT_GE(dev.counters().host_wait_seconds, 0.0);
  dev.deallocate(d, host.size() * sizeof(double));

  // A cpu device runs its work when issued: the host never waits for it.
  hit::Device& cpu = bind("cpu:0");
  cpu.reset_counters();
  const hit::Shape s = hit::Shape::extents({8, 8});
  const auto in = filled<double>(s);
  hit::Tile<double> out(s);
  hit::launch(add_one(), hit::partition("single", s), hit::in(in), hit::out(out));
  cpu.synchronize();
  EXPECT_EQ(cpu.counters().host_waits, 0u);
  EXPECT_EQ(cpu.counters().executions, 1u);
}

// Completion::queued on resident tiles: a launch that sends nothing returns with its kernel
// queued (its record says so, the host has not waited), the kernels run in order, and the host
// waits once more, when it asks for the result. The first launch sends the host's tiles, which the
// program may write again once it returned, so it waits for them. The queued body owns the
// kernel's body and its scalar arguments: here both are gone before the kernels run.
TEST_F(LaunchTest, QueuedLaunchesOnResidentTilesLeaveTheHostFree) {
  hit::Device& dev = bind("emu:0");
  const hit::Shape shape = hit::Shape::extents({16, 16});
  const auto a = filled<double>(shape);
  hit::Tile<double> c(shape);
  c.fill(0);
  const auto p = hit::partition("single", shape);
  hit::Kernel<hit::View<const double>, hit::View<double>> slow_acc("slow_acc");
  slow_acc.cpu([](const hit::KernelContext& ctx, hit::View<const double> x, hit::View<double> y) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    for_box(ctx.block, [&](hit::index_t i, hit::index_t j) { y(i, j) += x(i, j); });
  });
  hit::Resident<double> ra(a);
  hit::Resident<double> rc(c);
  dev.reset_counters();
  double queueing = 0;
  for (int it = 0; it < 3; ++it) {
    const auto rec = hit::launch(hit::Completion::queued, slow_acc, p, hit::in(ra), hit::inout(rc));
    EXPECT_EQ(rec.queued, it > 0) << it;
    EXPECT_EQ(dev.counters().host_waits, 1u) << it;
    if (it > 0) {
      EXPECT_EQ(rec.kernel_seconds, 0.0);
      queueing += rec.seconds;
    }
  }
  {
    double factor = 2.0;
    const auto rec = hit::launch(hit::Completion::queued, scale(), p, hit::inout(rc), factor);
    factor = -1.0;  // the kernel has its own copy
    EXPECT_TRUE(rec.queued);
  }
  // 80 ms of kernels queued in much less; nothing back yet.
  EXPECT_LT(queueing, 0.04) << queueing;
  EXPECT_EQ(c.at(hit::Index{3, 4}), 0);
  rc.sync_to_host();
  const auto n = dev.counters();
  EXPECT_EQ(n.host_waits, 2u);
  EXPECT_EQ(n.executions, 4u);
  EXPECT_EQ(n.copies_in, 2u);
  EXPECT_GE(n.execute_seconds, 0.12);
  c.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, 2 * 3 * f(i[0], i[1])) << i; });
}

// Where the host has something left to do, a queued launch completes as a plain one: a tile that
// is not resident comes back, a cpu device runs in host memory, an out-of-core launch brings its
// chunks back as it goes.
TEST_F(LaunchTest, AQueuedLaunchWaitsWhereTheHostHasWorkLeft) {
  const hit::Shape s = hit::Shape::extents({8, 8});
  const auto in = filled<double>(s);
  for (const std::string spec : {"emu:0", "cpu:0"}) {
    SCOPED_TRACE(spec);
    hit::Device& dev = bind(spec);
    hit::Tile<double> out(s);
    hit::Resident<double> rin(in);
    dev.reset_counters();
    const auto rec = hit::launch(hit::Completion::queued, add_one(), hit::partition("single", s),
                                 hit::in(rin), hit::out(out));
    EXPECT_FALSE(rec.queued);
    EXPECT_EQ(dev.counters().host_waits, spec == "emu:0" ? 1u : 0u);
    out.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1]) + 1); });
  }
  hit::Device& dev = bind("emu:0(mem=1MiB)");
  hit::Resident<double> rin(in);
  hit::Tile<double> out(s);
  hit::Resident<double> rout(out);
  const auto rec =
      hit::launch(hit::Completion::queued, add_one(),
                  hit::partition("outOfCore:rows=2,inner=single", s), hit::in(rin), hit::out(rout));
  EXPECT_FALSE(rec.queued);
  rout.sync_to_host();
  out.for_each([&](const hit::Index& i, double v) { EXPECT_EQ(v, f(i[0], i[1]) + 1); });
  EXPECT_EQ(dev.used(), 2u * 8 * 8 * sizeof(double));
}

// A kernel that fails after its launch returned is reported where the host next waits for the
// device, and the device can be waited for again afterwards.
TEST_F(LaunchTest, AQueuedKernelsFailureReachesTheNextWait) {
  hit::Device& dev = bind("emu:0");
  const hit::Shape s = hit::Shape::extents({4, 4});
  hit::Tile<double> t(s);
  t.fill(1);
  hit::Resident<double> r(t);
  hit::Kernel<hit::View<double>> broken("broken");
  broken.cpu([](const hit::KernelContext&, hit::View<double>) {
    throw hit::Error(hit::ErrorKind::invalid_argument, "broken on purpose");
  });
  hit::detail::resident_prefetch(*hit::detail::resident_state(r), 0);  // nothing left to send
  const auto rec =
      hit::launch(hit::Completion::queued, broken, hit::partition("single", s), hit::inout(r));
  EXPECT_TRUE(rec.queued);
  try {
    r.sync_to_host();
    ADD_FAILURE() << "the kernel's failure was not reported";
  } catch (const hit::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken on purpose"));
  }
  dev.synchronize();  // reported once
}
