// hit-test-procs: 1 2 3 4
// Out of core by sharing a device (docs/devices.md §8; Torres et al. §4): a Jacobi sweep whose data
// (100 MiB) does not fit one emulated device of 64 MiB fails with one process, with a device
// out-of-memory error, and completes correctly with the work split over more processes bound to
// that one device, which take turns through the inter-process device lock (their critical sections
// never overlap).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "devices/rebind.hpp"
#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/devices/builtin_kernels.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/tile.hpp"
#include "hit/topology/physical_topology.hpp"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr hit::index_t rows = 1600, cols = 4096;  // 50 MiB of doubles per array
constexpr std::uint64_t capacity = 64ull << 20;

hit::Environment& env() {
  return hit::Environment::current();
}

double f(hit::index_t i, hit::index_t j) {
  return static_cast<double>((i * 7 + j * 13) % 101 + (i * j) % 17);
}

// Every rank on emu:0 with 64 MiB, before anything binds the ranks.
class DeviceLock : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env().config().set("devices", "emu:0(mem=64MiB)*" + std::to_string(env().size()));
    hit::PhysicalTopology::of(env());
  }

  // This rank's rows (as the blocks layout splits them) and the interior it computes.
  static hit::Shape my_rows() {
    const int p = env().size(), r = env().rank();
    const hit::index_t base = rows / p, extra = rows % p;
    const hit::index_t begin = r * base + std::min<hit::index_t>(r, extra);
    const hit::index_t end = begin + base + (r < extra ? 1 : 0);
    return hit::Shape{hit::Sig(begin, end), hit::Sig(0, cols)};
  }
  static hit::Shape my_domain() {
    return my_rows().intersect(hit::Shape{hit::Sig(1, rows - 1), hit::Sig(1, cols - 1)});
  }
  static hit::Tile<double> input() {
    hit::Tile<double> in(my_rows(), hit::TileOptions{{}, 1});
    in.with_ghosts().for_each([](const hit::Index& i, double& v) { v = f(i[0], i[1]); });
    return in;
  }
};

}  // namespace

TEST_F(DeviceLock, SharedDeviceRunsWhatDoesNotFitOneProcess) {
  const auto& topo = hit::PhysicalTopology::of(env());
  ASSERT_EQ(topo.mine().device.str(), "emu:0(mem=64MiB)");
  ASSERT_EQ(topo.mine().sharing, env().size());
  hit::Device& dev = hit::device(env());
  ASSERT_EQ(dev.capacity(), capacity);

  const auto in = input();
  hit::Tile<double> out(my_rows());
  out.fill(-1);
  const auto k = hit::jacobi5<double>();
  const auto part = hit::partition("single", my_domain(), {.access = k.access()});
  constexpr int launches = 3;
  std::vector<double> sections;  // start, end of every critical section of this rank
  bool failed = false;
  try {
    hit::collectively(env().comm(), [&] {
      for (int it = 0; it < launches; ++it) {
        const auto rec = hit::launch(k, part, hit::in(in), hit::out(out));
        sections.push_back(rec.lock_acquired);
        sections.push_back(rec.lock_released);
        EXPECT_LE(rec.problem_bytes, capacity);
      }
    });
  } catch (const hit::Error& e) {
    failed = true;
    // The whole problem on one process needs more than the device has.
    EXPECT_EQ(env().size(), 1) << e.what();
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("emu:0(mem=64MiB) [emulated] is out of memory"),
                                HasSubstr("more processes"), HasSubstr("outOfCore")));
  }
  EXPECT_EQ(dev.used(), 0u);
  if (env().size() == 1) {
    EXPECT_TRUE(failed) << "100 MiB fitted a 64 MiB device";
    return;
  }
  ASSERT_FALSE(failed);

  // Correct values on the domain, untouched elsewhere.
  const hit::Shape domain = my_domain();
  out.for_each([&](const hit::Index& i, double v) {
    const double want =
        domain.contains(i)
            ? 0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) + f(i[0], i[1] - 1) + f(i[0], i[1] + 1))
            : -1;
    ASSERT_EQ(v, want) << i;
  });

  // Critical sections of all ranks, on the machine's monotonic clock: they never overlap.
  std::vector<double> all(sections.size() * static_cast<std::size_t>(env().size()));
  MPI_Allgather(sections.data(), static_cast<int>(sections.size()), MPI_DOUBLE, all.data(),
                static_cast<int>(sections.size()), MPI_DOUBLE, env().comm());
  std::vector<std::pair<double, double>> spans;
  for (std::size_t s = 0; s + 1 < all.size(); s += 2) spans.emplace_back(all[s], all[s + 1]);
  std::sort(spans.begin(), spans.end());
  ASSERT_EQ(spans.size(), static_cast<std::size_t>(launches * env().size()));
  for (std::size_t s = 1; s < spans.size(); ++s) {
    EXPECT_GE(spans[s].first, spans[s - 1].second)
        << "critical sections " << s - 1 << " and " << s << " overlap";
  }
  // Device memory never went past the capacity, and one rank's part was on it at some point.
  const auto peak = topo.device_share().peak_bytes().load();
  EXPECT_LE(peak, capacity);
  EXPECT_GE(peak, static_cast<std::uint64_t>(domain.size()) * 8);
}

TEST_F(DeviceLock, TooSmallADeviceFailsOnEveryRank) {
  // 16 MiB holds no rank's part at up to 4 processes: every rank reports the same error.
  const auto original = hit::PhysicalTopology::of(env()).mine().device;
  hit::DeviceBinding small = original;
  small.params["mem"] = "16MiB";
  hit::rebind_device(env(), small);
  const auto in = input();
  hit::Tile<double> out(my_rows());
  const auto k = hit::jacobi5<double>();
  try {
    hit::collectively(env().comm(), [&] {
      hit::launch(k, hit::partition("single", my_domain(), {.access = k.access()}), hit::in(in),
                  hit::out(out));
    });
    ADD_FAILURE() << "no error";
  } catch (const hit::Error& e) {
    EXPECT_EQ(e.kind(), hit::ErrorKind::out_of_memory);
    EXPECT_THAT(e.what(), HasSubstr("emu:0(mem=16MiB) [emulated] is out of memory"));
  }
  // Out of core, the same device runs it.
  hit::collectively(env().comm(), [&] {
    hit::launch(k, hit::partition("outOfCore", my_domain(), {.access = k.access()}), hit::in(in),
                hit::out(out));
  });
  const hit::Shape domain = my_domain();
  domain.for_each([&](const hit::Index& i) {
    ASSERT_EQ(out.at(i), 0.25 * (f(i[0] - 1, i[1]) + f(i[0] + 1, i[1]) + f(i[0], i[1] - 1) +
                                 f(i[0], i[1] + 1)));
  });
  hit::rebind_device(env(), original);
}
